/*
 * The harmonic model's export with its nonbonded terms (hessfit_ffxml_write with PDBs), run by stock
 * OpenMM. The training set of tests/data/fit/ethane-nonbonded.fit (two copies of ethane, GAFF
 * values for the mol2's types, the mol2's charges) with every value moved off its start (the
 * "fitted" values are what is exported), the charges scaled by 10 (so that Coulomb weighs like the
 * bonded terms) and the second copy displaced (a conformer: it must share the first's template).
 * Three fit models: nonbonded on with AMBER's 1-4 scales (1/1.2, 1/2) and Lorentz-Berthelot, on with
 * OPLS-AA's (1/2, 1/2) and geometric combining, and off. For each:
 *
 *  1. fitted.xml and fitted-1.pdb, fitted-2.pdb: one residue template for both conformers; a
 *     NonbondedForce (and the geometric combining Script) exactly when the model has nonbonded terms,
 *     "No nonbonded force" in the comment otherwise.
 *  2. tests/fitting/forcefield/check_ffxml_md.py (the repository's .venv/bin/python) loads them with
 *     openmm.app.ForceField + PDBFile, builds the System as a user does, and compares energy and
 *     forces with the fit model's HessianForce at the same positions (reference.txt, written here) to
 *     1e-10 relative on the Reference platform; checks the exceptions against the bond graph's 1-2,
 *     1-3 and 1-4 pairs; runs 10 ps of NVE of each structure against its derived bound.
 *  3. A conformer with other charges gets a template of its own (the comment says residueTemplates
 *     is then needed); errors: no charges with nonbonded terms, 1-4 scales outside [0, 1].
 * Exits 77 (skipped) when the venv's python or openmm is missing.
 */
#include "hessfit_ffxml.h"
#include "hessfit_units.h"
#include "hf_training_set.h"
#include "model_reference.h"
#include "test_util.h"

#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define N_STRUCTURES 2

typedef struct export_case {
    const char *name;
    int nonbonded;
    hessfit_combining_rule combining;
    double coulomb14, lj14;
} export_case;

int main(void)
{
    const char *python = test_venv_python();
    const char *script = test_source_path_dup("tests/fitting/forcefield/check_ffxml_md.py");
    const char *input = test_source_path_dup("tests/data/fit/ethane-nonbonded.fit");
    test_load_plugins();
    hf_training_set set;
    hf_training_set_options topt = {NULL, test_temp_path("unused-output"), "-out", 0};
    HF_CALL(hf_training_set_load(input, &topt, &set));
    CHECK(set.n_mols == N_STRUCTURES, "%d structures", set.n_mols);

    /* the "fitted" values: every k, r0, theta0, torsion k and phase, R* and eps moved by up to 3 % */
    for (int p = 0; p < set.ff.n_params; p++) {
        hessfit_ff_param *q = &set.ff.params[p];
        for (int v = 0; v < q->n_values; v++)
            if (!((q->kind == HESSFIT_PARAM_TORSION || q->kind == HESSFIT_PARAM_IMPROPER) && v % 3 == 2))
                q->values[v] = q->values[v] * (1.0 + 0.03 * sin(1.0 + 7 * p + v)) + (v % 3 == 1 ? 2.0 : 0.0) *
                               (q->kind == HESSFIT_PARAM_TORSION);
    }
    test_seed(4242);
    for (int m = 0; m < N_STRUCTURES; m++)
        for (int i = 0; i < set.mols[m].n_atoms; i++) {
            set.mols[m].partial_charges[i] *= 10.0;
            for (int c = 0; c < 3 && m == 1; c++)
                set.mols[m].coords[3 * i + c] += 0.08 * (test_random() - 0.5);
        }

    const export_case cases[] = {{"amber", 1, HESSFIT_COMBINE_LORENTZ_BERTHELOT, 1.0 / 1.2, 0.5},
                                 {"opls", 1, HESSFIT_COMBINE_GEOMETRIC, 0.5, 0.5},
                                 {"bonded", 0, HESSFIT_COMBINE_LORENTZ_BERTHELOT, 1.0, 1.0}};
    char dir[1024], xml[1100], pdb_names[N_STRUCTURES][1100], reference[1200], args[4096], qs[1200], qd[1200];
    const char *pdb[N_STRUCTURES];
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const export_case *e = &cases[c];
        snprintf(dir, sizeof dir, "%s", test_temp_path(e->name));
        CHECK(mkdir(dir, 0777) == 0, "cannot make %s", dir);
        snprintf(xml, sizeof xml, "%s/fitted.xml", dir);
        for (int m = 0; m < N_STRUCTURES; m++) {
            snprintf(pdb_names[m], sizeof pdb_names[m], "%s/fitted-%d.pdb", dir, m + 1);
            pdb[m] = pdb_names[m];
        }
        hessfit_model_options mo = hessfit_model_default_options();
        mo.nonbonded = e->nonbonded;
        mo.combining = e->combining;
        mo.coulomb14_scale = e->coulomb14;
        mo.lj14_scale = e->lj14;
        hessfit_model *model = NULL;
        HF_CALL(hessfit_model_create(&set.ff, set.mols, set.typed, set.n_mols, &mo, &model));
        const hessfit_ffxml_options xo = {e->nonbonded, e->combining == HESSFIT_COMBINE_GEOMETRIC, e->coulomb14, e->lj14,
                                          pdb};
        int n_templates = 0;
        HF_CALL(hessfit_ffxml_write(xml, &set.ff, set.mols, set.typed, set.n_mols, &xo, &n_templates));
        char *text = test_load_file(xml, NULL);
        printf("%s: %d residue template(s)\n", e->name, n_templates);
        CHECK(n_templates == 1 && strstr(text, "= molecules 1, 2;") != NULL, "%s: the conformers do not share a template",
              e->name);
        CHECK((strstr(text, "<NonbondedForce coulomb14scale=") != NULL) == e->nonbonded &&
                  (strstr(text, "No nonbonded force") != NULL) == !e->nonbonded &&
                  (strstr(text, "<Script>") != NULL) == (e->combining == HESSFIT_COMBINE_GEOMETRIC),
              "%s: nonbonded force, its comment or the Script wrong", e->name);
        free(text);
        snprintf(reference, sizeof reference, "%s/reference.txt", dir);
        test_write_model_reference(model, set.mols, set.n_mols, reference);
        hessfit_model_destroy(model);
        test_shell_quote(qs, sizeof qs, script);
        test_shell_quote(qd, sizeof qd, dir);
        snprintf(args, sizeof args, "%s %s 2>&1", qs, qd);
        test_run_result r = test_run_program(python, args);
        printf("%s", r.out);
        free(r.out);
        if (r.status == 77)
            return 77;
        CHECK(r.status == 0, "%s: check_ffxml_md.py failed (status %d)", e->name, r.status);
    }

    /* a conformer with other charges: a template of its own, and the comment says what createSystem needs */
    const hessfit_ffxml_options amber = {1, 0, 1.0 / 1.2, 0.5, pdb};
    int n_templates = 0;
    set.mols[1].partial_charges[0] += 0.01;
    HF_CALL(hessfit_ffxml_write(xml, &set.ff, set.mols, set.typed, set.n_mols, &amber, &n_templates));
    char *text = test_load_file(xml, NULL);
    CHECK(n_templates == 2 && strstr(text, "the same atoms and bonds but not the same parameters") != NULL &&
              strstr(text, "residueTemplates") != NULL,
          "other charges: %d templates", n_templates);
    free(text);
    /* errors, nothing written */
    test_temp_clear();
    double *charges = set.mols[1].partial_charges;
    set.mols[1].partial_charges = NULL;
    test_expect_error(hessfit_ffxml_write(xml, &set.ff, set.mols, set.typed, set.n_mols, &amber, NULL),
                      HESSFIT_ERROR_INVALID_ARGUMENT, "no partial charges", xml, "nonbonded without charges");
    set.mols[1].partial_charges = charges;
    const hessfit_ffxml_options bad_scale = {1, 0, 1.5, 0.5, pdb};
    test_expect_error(hessfit_ffxml_write(xml, &set.ff, set.mols, set.typed, set.n_mols, &bad_scale, NULL),
                      HESSFIT_ERROR_INVALID_ARGUMENT, "1-4 scales", xml, "a 1-4 scale above 1");
    struct stat sb;
    CHECK(stat(xml, &sb) != 0 && stat(pdb[0], &sb) != 0, "files written despite the error");

    hf_training_set_free(&set);
    return test_soft_finish("test_ffxml_md");
}
