/*
 * The MM3* export to stock OpenMM (hessfit_mm3_ffxml_write) on the rh-enamide training set
 * (examples/rh-enamide.fit), with every free value moved off its start (so the fitted values are
 * what is exported):
 *
 *  1. fitted.xml and fitted-<k>.pdb for the nine structures: six residue templates (conformers 2-3,
 *     6-7 and 8-9 share one), the virtual sites and the special C3-H1 pairs' tables in the file.
 *  2. tests/fitting/mm3/check_mm3_ffxml.py (the repository's .venv/bin/python) loads them with
 *     openmm.app.ForceField and PDBFile and compares energy and forces on the Reference platform with
 *     the fit model's HessianForce at the same positions (reference.txt, written here) to 1e-10
 *     relative, then runs 10 ps of NVE of structure 1 against a smooth-switch baseline.
 *  3. A constructed case with hydrogen bonds (check_hbond_case): the same comparison, without NVE,
 *     all nine structures (candidates beyond the 4 A cutoff in the templates, 0 at these geometries).
 *  4. Errors: two structures with the same atoms and bonds but different MM3* terms cannot share a
 *     template (nothing is written); NULL arguments.
 * Exits 77 (skipped) when the venv's python or openmm is missing.
 */
#include "hessfit_mm3.h"
#include "hessfit_mm3_ffxml.h"
#include "hessfit_units.h"
#include "hf_training_set.h"
#include "model_reference.h"
#include "test_util.h"

#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define N_STRUCTURES 9

static int count(const char *text, const char *s)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, s)) != NULL; p++)
        n++;
    return n;
}

/* The entries of the Script's "hydrogen-bond" lists (one "(" line each, up to the list's "]"). */
static int count_hbond_entries(const char *text)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, "\"hydrogen-bond\": [\n")) != NULL;) {
        p = strchr(p, '\n') + 1;
        for (; strncmp(p, "        (", 9) == 0; p = strchr(p, '\n') + 1)
            n++;
    }
    return n;
}

/* The temporary directory's fitted.xml and fitted-<k>.pdb (dir 1024, xml 1100, names 1100 each). */
static void output_paths(char *dir, char *xml, char pdb_names[][1100], const char **pdb)
{
    snprintf(dir, 1024, "%s", test_temp_dir());
    snprintf(xml, 1100, "%s/fitted.xml", dir);
    for (int m = 0; m < N_STRUCTURES; m++) {
        snprintf(pdb_names[m], 1100, "%s/fitted-%d.pdb", dir, m + 1);
        pdb[m] = pdb_names[m];
    }
}

/*
 * The constructed case with hydrogen bonds (test_rh_hbond_case; the nine structures have none), all
 * nine structures: conformers share a template, which lists every 1-5-or-farther candidate with the
 * cutoff in its expression, so stock OpenMM drops the candidates beyond 4 A as the fit model does.
 * The export against a fit model of the same .fld (check_mm3_ffxml.py --no-nve: energy and forces to
 * 1e-10 relative); the Script holds each template's candidates once.
 */
static void check_hbond_case(hf_training_set *set, const char *python, const char *script)
{
    static const int first_of_template[N_STRUCTURES] = {1, 1, 0, 1, 1, 1, 0, 1, 0}; /* 1, 2-3, 4, 5, 6-7, 8-9 */
    hessfit_fld_row saved, *line = test_rh_hbond_case(&set->ff, &saved);
    int n_candidates = 0, n_listed = 0, n_beyond = 0;
    for (int m = 0; m < N_STRUCTURES; m++) {
        hessfit_mm3_model x;
        HF_CALL(hessfit_mm3_build(&set->mols[m], &set->typed[m], &set->ff, &x));
        n_candidates += first_of_template[m] ? x.n_hbonds : 0;
        n_listed += x.n_hbonds_listed;
        n_beyond += x.n_hbonds - x.n_hbonds_listed;
        hessfit_mm3_model_free(&x);
    }
    hessfit_model_options o = hessfit_model_default_options();
    o.form = HESSFIT_MODEL_FORM_MM3;
    hessfit_model *model;
    HF_CALL(hessfit_model_create(&set->ff, set->mols, set->typed, N_STRUCTURES, &o, &model));

    test_temp_clear();
    char dir[1024], xml[1100], pdb_names[N_STRUCTURES][1100], reference[1200], args[4096], qs[1200], qd[1200];
    const char *pdb[N_STRUCTURES];
    output_paths(dir, xml, pdb_names, pdb);
    HF_CALL(hessfit_mm3_ffxml_write(xml, pdb, &set->ff, set->mols, set->typed, N_STRUCTURES, NULL));
    char *text = test_load_file(xml, NULL);
    const int n_entries = count_hbond_entries(text);
    printf("hydrogen-bond case (H1 O3 line read as H1 O2): %d listed in the nine structures, %d candidates beyond "
           "4 A; %d candidates in the templates, %d Script entries\n", n_listed, n_beyond, n_candidates, n_entries);
    CHECK(n_listed >= 3 && n_beyond > 0 && n_entries == n_candidates, "%d listed, %d beyond, %d candidates, %d entries",
          n_listed, n_beyond, n_candidates, n_entries);
    free(text);
    snprintf(reference, sizeof reference, "%s/reference.txt", dir);
    test_write_model_reference(model, set->mols, N_STRUCTURES, reference);
    test_shell_quote(qs, sizeof qs, script);
    test_shell_quote(qd, sizeof qd, dir);
    snprintf(args, sizeof args, "%s %s --no-nve 2>&1", qs, qd);
    test_run_result r = test_run_program(python, args);
    printf("%s", r.out);
    CHECK(r.status == 0, "check_mm3_ffxml.py on the hydrogen-bond case failed (status %d)", r.status);
    free(r.out);
    hessfit_model_destroy(model);
    *line = saved;
}

int main(void)
{
    const char *python = test_venv_python();
    const char *script = test_source_path_dup("tests/fitting/mm3/check_mm3_ffxml.py");
    const char *input = test_source_path_dup("examples/rh-enamide.fit");
    test_load_plugins();
    hf_training_set set;
    hf_training_set_options topt = {NULL, test_temp_path("unused-output"), "-out", 0};
    HF_CALL(hf_training_set_load(input, &topt, &set));
    CHECK(set.n_mols == N_STRUCTURES && set.settings.form == HESSFIT_MODEL_FORM_MM3, "%d structures, form %d",
          set.n_mols, (int)set.settings.form);

    /* the "fitted" values: every free value moved by up to 2 % */
    double *x = malloc((size_t)set.n_free * sizeof *x);
    CHECK(x != NULL, "no memory");
    for (int i = 0; i < set.n_free; i++)
        x[i] = set.x_start[i] * (1.0 + 0.02 * sin(1.0 + i));
    HF_CALL(hessfit_model_set_free(set.model, x));
    HF_CALL(hessfit_model_write_back(set.model, &set.ff));

    char dir[1024], xml[1100], pdb_names[N_STRUCTURES][1100];
    const char *pdb[N_STRUCTURES];
    output_paths(dir, xml, pdb_names, pdb);
    int n_templates = 0;
    HF_CALL(hessfit_mm3_ffxml_write(xml, pdb, &set.ff, set.mols, set.typed, set.n_mols, &n_templates));
    char *text = test_load_file(xml, NULL);
    printf("fitted.xml: %d residue templates, %d virtual sites, %d stretches, %d bends, %d torsion entries\n",
           n_templates, count(text, "<VirtualSite "), count(text, "  <Bond type1="), count(text, "  <Angle type1="),
           count(text, "  <Proper type1="));
    CHECK(n_templates == 6 && count(text, "<Residue name=") == 6, "%d templates (expected 6: 1, 2-3, 4, 5, 6-7, 8-9)",
          n_templates);
    CHECK(strstr(text, "M2 = structures 2, 3;") && strstr(text, "M5 = structures 6, 7;") &&
              strstr(text, "M6 = structures 8, 9;"),
          "the conformers do not share their templates");
    CHECK(strstr(text, "<Function name=\"special\"") != NULL && strstr(text, "0.35600000000000004") != NULL,
          "no special C3-H1 pair table (R 3.56 A)");
    free(text);
    char *pdb1 = test_load_file(pdb[0], NULL);
    CHECK(count(pdb1, "HETATM") == set.mols[0].n_atoms + count(pdb1, "          EP\n") &&
              count(pdb1, "          EP\n") > 0 && strstr(pdb1, "CONECT") != NULL,
          "fitted-1.pdb: atoms, sites (EP) or CONECT records missing");
    free(pdb1);

    /* HessianForce at the same positions, and OpenMM's view of the files */
    char reference[1200], args[4096], qs[1200], qd[1200];
    snprintf(reference, sizeof reference, "%s/reference.txt", dir);
    test_write_model_reference(set.model, set.mols, set.n_mols, reference);
    test_shell_quote(qs, sizeof qs, script);
    test_shell_quote(qd, sizeof qd, dir);
    snprintf(args, sizeof args, "%s %s 2>&1", qs, qd);
    test_run_result r = test_run_program(python, args);
    printf("%s", r.out);
    if (r.status == 77) {
        free(r.out);
        return 77;
    }
    CHECK(r.status == 0, "check_mm3_ffxml.py failed (status %d)", r.status);
    free(r.out);
    check_hbond_case(&set, python, script);

    /* one template cannot hold two different models: structure 7 with one stretch of another parameter */
    test_temp_clear();
    hessfit_typed_term *t = NULL;
    for (int k = 0; k < set.typed[6].n_terms && t == NULL; k++)
        if (set.typed[6].terms[k].kind == HESSFIT_TERM_BOND && set.typed[6].terms[k].param >= 0)
            t = &set.typed[6].terms[k];
    CHECK(t != NULL, "no bond term in structure 7");
    const int saved = t->param;
    for (int p = 0; p < set.ff.n_params && t->param == saved; p++)
        if (p != saved && set.ff.params[p].kind == HESSFIT_PARAM_BOND && set.ff.params[p].substructure < 0)
            t->param = p;
    test_expect_error(hessfit_mm3_ffxml_write(xml, pdb, &set.ff, set.mols, set.typed, set.n_mols, NULL),
                      HESSFIT_ERROR_UNSUPPORTED, "structures 6 and 7 have the same atoms and bonds", NULL,
                      "a shared template with two models");
    struct stat sb;
    CHECK(stat(xml, &sb) != 0 && stat(pdb[0], &sb) != 0, "files written despite the error");
    t->param = saved;
    test_expect_error(hessfit_mm3_ffxml_write(NULL, pdb, &set.ff, set.mols, set.typed, set.n_mols, NULL),
                      HESSFIT_ERROR_NULL_ARGUMENT, "xml_path", NULL, "NULL path");
    test_expect_error(hessfit_mm3_ffxml_write(xml, pdb, &set.ff, set.mols, set.typed, 0, NULL),
                      HESSFIT_ERROR_INVALID_ARGUMENT, "0 structures", NULL, "no structures");

    free(x);
    hf_training_set_free(&set);
    return test_soft_finish("test_mm3_ffxml");
}
