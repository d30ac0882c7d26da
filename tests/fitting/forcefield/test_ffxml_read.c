/*
 * OpenMM ForceField XML as an input force field (hessfit_ffxml_read), against OpenMM's own reading:
 *
 *  1. GAFF 2.11 of the `openmmforcefields` package (found by the venv's python at test time; the
 *     test is skipped, 77, without it): counts, the 1-4 scales, values converted to canonical units.
 *  2. tests/data/ethane/GS-gaff.mol2 (ethane typed by hand with GAFF's c3/hc, charges -0.3/+0.1)
 *     with its B3LYP Hessian, nonbonded terms on: the fit model built from the XML (its typing:
 *     the specific hc-c3-c3-hc torsion before X-c3-c3-X, as OpenMM prefers it) against
 *     ForceField(gaff-2.11.xml + a residue template of the mol2's types and charges).createSystem
 *     (tests/fitting/forcefield/check_ffxml_read.py): energy and forces to 1e-10 relative.
 *  3. A fit from it (`hessfit fit` with the XML as its force field) writes fitted.xml and the PDB;
 *     and the write-back: values moved off GAFF, hessfit_ffxml_write, and check_ffxml_md.py loads the
 *     export and reproduces the fit model's energy and forces (1e-10), with 10 ps of NVE.
 *  4. Errors naming file:line and the element: an unsupported force (LennardJonesForce, as OPLS-AA
 *     XML uses), a missing attribute, an unknown type, a non-numeric value, unbalanced tags.
 */
#include "hessfit_elements.h"
#include "hessfit_ffxml.h"
#include "hessfit_units.h"
#include "hf_training_set.h"
#include "model_reference.h"
#include "test_util.h"

#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int run_python(const char *python, const char *script, const char *a, const char *b)
{
    char args[4096], qs[1200], qa[1200], qb[1200];
    test_shell_quote(qs, sizeof qs, script);
    test_shell_quote(qa, sizeof qa, a);
    test_shell_quote(qb, sizeof qb, b);
    snprintf(args, sizeof args, "%s %s %s 2>&1", qs, qa, qb);
    test_run_result r = test_run_program(python, args);
    printf("%s", r.out);
    free(r.out);
    return r.status;
}

static void write_molecule_txt(const hessfit_molecule *mol, const char *path)
{
    FILE *f = fopen(path, "w");
    CHECK(f != NULL, "cannot write %s", path);
    for (int i = 0; i < mol->n_atoms; i++)
        fprintf(f, "atom A%d %s %s %.17g\n", i, hessfit_element_symbol(mol->atomic_numbers[i]), mol->atom_types[i],
                mol->partial_charges[i]);
    for (int k = 0; k < mol->n_bonds; k++)
        fprintf(f, "bond %d %d\n", mol->bonds[2 * k], mol->bonds[2 * k + 1]);
    CHECK(fclose(f) == 0, "cannot write %s", path);
}

/* Impropers in OpenMM's order: acetic acid (the specific c-c3-o-oh improper, "amber" ordering without
 * wildcards) and acetate (c-*-o-o, with a wildcard), not planar at the carboxyl carbon, typed from the
 * XML and built into a fit model (nonbonded on, the XML's 1-4 scales), against OpenMM's createSystem
 * on the same XML; then the model's export, loaded by OpenMM (check_ffxml_md.py). */
static void test_impropers(const char *python, const char *script, const char *md_script, const char *gaff)
{
    hessfit_forcefield ff;
    hessfit_molecule_list list;
    HF_CALL(hessfit_forcefield_read(gaff, &ff));
    HF_CALL(hessfit_mol2_read(test_source_path("tests/data/ffxml/acetic-gaff.mol2"), &list));
    CHECK(list.n == 2, "%d molecules in acetic-gaff.mol2", list.n);
    for (int m = 0; m < list.n; m++) {
        hessfit_molecule *mol = &list.items[m];
        hessfit_topology topo;
        hessfit_typed_molecule typed;
        hessfit_topology_options to = hessfit_topology_default_options();
        HF_CALL(hessfit_topology_build(mol, &to, &topo));
        HF_CALL(hessfit_assign_parameters(mol, &topo, &ff, NULL, &typed));
        int n_impropers = 0;
        for (int i = 0; i < typed.n_terms; i++)
            if (typed.terms[i].kind == HESSFIT_TERM_IMPROPER && typed.terms[i].param >= 0) {
                const hessfit_typed_term *t = &typed.terms[i];
                printf("  %s: improper %d-%d-%d-%d (OpenMM's order, centre third), parameter line %d (%s %s %s %s)\n",
                       mol->name, t->atoms[0], t->atoms[1], t->atoms[2], t->atoms[3], ff.params[t->param].line,
                       ff.params[t->param].types[0], ff.params[t->param].types[1], ff.params[t->param].types[2],
                       ff.params[t->param].types[3]);
                n_impropers++;
            }
        CHECK(n_impropers == 1, "%s: %d impropers", mol->name, n_impropers);
        hessfit_model_options mo = hessfit_model_default_options();
        mo.nonbonded = 1;
        mo.coulomb14_scale = ff.coulomb14_scale;
        mo.lj14_scale = ff.lj14_scale;
        hessfit_model *model = NULL;
        HF_CALL(hessfit_model_create(&ff, mol, &typed, 1, &mo, &model));
        char dir[1024], path[1200], xml[1200], pdb_name[1200], qs[1200], qd[1200], args[4096];
        snprintf(dir, sizeof dir, "%s-%d", test_temp_path("improper"), m);
        CHECK(mkdir(dir, 0777) == 0, "mkdir %s", dir);
        snprintf(path, sizeof path, "%s/molecule.txt", dir);
        write_molecule_txt(mol, path);
        snprintf(path, sizeof path, "%s/reference.txt", dir);
        test_write_model_reference(model, mol, 1, path);
        CHECK(run_python(python, script, gaff, dir) == 0, "%s: hessfit's impropers differ from OpenMM's", mol->name);
        snprintf(xml, sizeof xml, "%s/fitted.xml", dir);
        snprintf(pdb_name, sizeof pdb_name, "%s/fitted-1.pdb", dir);
        const char *pdb[1] = {pdb_name};
        const hessfit_ffxml_options xo = {1, 0, ff.coulomb14_scale, ff.lj14_scale, pdb};
        HF_CALL(hessfit_ffxml_write(xml, &ff, mol, &typed, 1, &xo, NULL));
        test_shell_quote(qs, sizeof qs, md_script);
        test_shell_quote(qd, sizeof qd, dir);
        snprintf(args, sizeof args, "%s %s 2>&1", qs, qd);
        test_run_result r = test_run_program(python, args);
        printf("%s", r.out);
        free(r.out);
        CHECK(r.status == 0, "%s: check_ffxml_md.py on the export (status %d)", mol->name, r.status);
        hessfit_model_destroy(model);
        hessfit_typed_molecule_free(&typed);
        hessfit_topology_free(&topo);
    }
    hessfit_molecule_list_free(&list);
    hessfit_forcefield_free(&ff);
}

static const hessfit_ff_param *find(const hessfit_forcefield *ff, hessfit_param_kind kind, const char *t0, const char *t1)
{
    for (int p = 0; p < ff->n_params; p++)
        if (ff->params[p].kind == kind && strcmp(ff->params[p].types[0], t0) == 0 &&
            (t1 == NULL || strcmp(ff->params[p].types[1], t1) == 0))
            return &ff->params[p];
    return NULL;
}

static void close_rel(double got, double want, const char *what)
{
    CHECK(fabs(got - want) <= 1e-14 * fabs(want), "%s: %.17g, expected %.17g", what, got, want);
}

/* An OPLS-AA file as LigParGen writes one (types "opls_...", a NonbondedForce with 0.5/0.5 and no
 * word on combining): read, and marked geometric for the fit's `combining` default. */
static void test_opls(void)
{
    hessfit_forcefield ff;
    const char *path = test_write_text(
        "opls.xml", "<ForceField>\n <AtomTypes>\n  <Type name=\"opls_800\" class=\"C800\" element=\"C\" mass=\"12.011\"/>\n"
                    "  <Type name=\"opls_801\" class=\"H801\" element=\"H\" mass=\"1.008\"/>\n </AtomTypes>\n"
                    " <HarmonicBondForce>\n  <Bond class1=\"C800\" class2=\"H801\" length=\"0.109\" k=\"284512.0\"/>\n"
                    " </HarmonicBondForce>\n <NonbondedForce coulomb14scale=\"0.5\" lj14scale=\"0.5\">\n"
                    "  <Atom type=\"opls_800\" charge=\"-0.18\" sigma=\"0.35\" epsilon=\"0.276144\"/>\n"
                    "  <Atom type=\"opls_801\" charge=\"0.06\" sigma=\"0.25\" epsilon=\"0.12552\"/>\n"
                    " </NonbondedForce>\n</ForceField>\n");
    HF_CALL(hessfit_forcefield_read(path, &ff));
    CHECK(ff.n_params == 3 && ff.geometric_combining && ff.coulomb14_scale == 0.5 &&
              strcmp(ff.params[1].types[0], "C800") == 0,
          "OPLS-AA XML: %d parameters, geometric %d", ff.n_params, ff.geometric_combining);
    hessfit_forcefield_free(&ff);
}

static void test_errors(void)
{
    static const struct {
        const char *what, *xml, *part;
        hessfit_status status;
        int line;
    } cases[] = {
        {"LennardJonesForce (OPLS-AA)", "<ForceField>\n <AtomTypes/>\n <LennardJonesForce lj14scale=\"0.5\"/>\n</ForceField>\n",
         "<LennardJonesForce>: not supported", HESSFIT_ERROR_UNSUPPORTED, 3},
        {"a Script", "<ForceField>\n <Script>x = 1</Script>\n</ForceField>\n", "<Script>: not supported",
         HESSFIT_ERROR_UNSUPPORTED, 2},
        {"a bond without k", "<ForceField>\n <HarmonicBondForce>\n  <Bond class1=\"a\" class2=\"b\" length=\"0.1\"/>\n"
         " </HarmonicBondForce>\n</ForceField>\n", "<Bond>: no k attribute", HESSFIT_ERROR_INVALID_ARGUMENT, 3},
        {"an unknown type", "<ForceField>\n <HarmonicBondForce>\n  <Bond type1=\"x\" type2=\"y\" length=\"0.1\" k=\"1\"/>\n"
         " </HarmonicBondForce>\n</ForceField>\n", "type1=\"x\" is not a type", HESSFIT_ERROR_INVALID_ARGUMENT, 3},
        {"a non-numeric length", "<ForceField>\n <HarmonicBondForce>\n  <Bond class1=\"a\" class2=\"b\" length=\"0.1nm\" "
         "k=\"1\"/>\n </HarmonicBondForce>\n</ForceField>\n", "length=\"0.1nm\" is not a finite number", HESSFIT_ERROR_PARSE, 3},
        {"unbalanced tags", "<ForceField>\n <HarmonicBondForce>\n</ForceField>\n", "does not close <HarmonicBondForce>",
         HESSFIT_ERROR_PARSE, 3},
        {"charmm ordering", "<ForceField>\n <PeriodicTorsionForce ordering=\"charmm\"/>\n</ForceField>\n",
         "ordering other than", HESSFIT_ERROR_UNSUPPORTED, 2},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        hessfit_forcefield ff;
        const char *path = test_write_text("bad.xml", cases[c].xml);
        char where[1200];
        snprintf(where, sizeof where, "%s:%d:", path, cases[c].line);
        test_expect_error(hessfit_forcefield_read(path, &ff), cases[c].status, where, cases[c].part, cases[c].what);
    }
}

int main(int argc, char **argv)
{
    (void)argc;
    const char *script = test_source_path_dup("tests/fitting/forcefield/check_ffxml_read.py");
    const char *md_script = test_source_path_dup("tests/fitting/forcefield/check_ffxml_md.py");
    test_errors();
    test_opls();
    const char *python = test_venv_python(); /* the rest checks the exports in stock OpenMM */
    char qs[1200], args[4096];
    test_shell_quote(qs, sizeof qs, script);
    snprintf(args, sizeof args, "%s --gaff", qs);
    test_run_result g = test_run_program(python, args);
    if (g.status != 0) {
        printf("SKIP: no GAFF 2.11 XML (pip install openmmforcefields into the venv): %s%s\n", g.out, g.err);
        free(g.out);
        return 77;
    }
    char gaff[1024];
    snprintf(gaff, sizeof gaff, "%.*s", (int)strcspn(g.out, "\n"), g.out);
    free(g.out);

    /* 1. the file */
    hessfit_forcefield ff;
    HF_CALL(hessfit_forcefield_read(gaff, &ff));
    int count[HESSFIT_NUM_PARAM_KINDS] = {0};
    for (int p = 0; p < ff.n_params; p++)
        count[ff.params[p].kind]++;
    printf("%s: %d bonds, %d angles, %d propers, %d impropers, %d vdw; 1-4 scales %.17g %.17g\n", gaff,
           count[HESSFIT_PARAM_BOND], count[HESSFIT_PARAM_ANGLE], count[HESSFIT_PARAM_TORSION], count[HESSFIT_PARAM_IMPROPER],
           count[HESSFIT_PARAM_VDW], ff.coulomb14_scale, ff.lj14_scale);
    CHECK(ff.format == HESSFIT_FF_FFXML && ff.has_14_scales && fabs(ff.coulomb14_scale - 1.0 / 1.2) < 1e-15 &&
              ff.lj14_scale == 0.5,
          "format or 1-4 scales");
    CHECK(count[HESSFIT_PARAM_BOND] > 500 && count[HESSFIT_PARAM_ANGLE] > 3000 && count[HESSFIT_PARAM_TORSION] > 900 &&
              count[HESSFIT_PARAM_IMPROPER] > 10 && count[HESSFIT_PARAM_VDW] > 50,
          "too few parameters");
    const hessfit_ff_param *b = find(&ff, HESSFIT_PARAM_BOND, "c3", "f"), *v = find(&ff, HESSFIT_PARAM_VDW, "hc", NULL),
                           *t = find(&ff, HESSFIT_PARAM_TORSION, "*", "c3");
    CHECK(b != NULL && v != NULL && t != NULL, "c3-f bond, hc vdw or X-c3-* torsion missing");
    close_rel(b->values[0], 0.5 * 295055.67999999993 * HESSFIT_KJ_PER_MOL_PER_NM2_TO_KCAL_PER_MOL_PER_A2, "c3-f k");
    close_rel(b->values[1], 1.35, "c3-f r0");
    close_rel(v->values[0], 0.2600176998764394 / HESSFIT_RSTAR_A_TO_LJ_SIGMA_NM, "hc R*");
    close_rel(v->values[1], 0.0870272 * HESSFIT_KJ_TO_KCAL, "hc eps");
    CHECK(t->n_values % 3 == 0 && t->values[2] >= 1.0, "torsion triples");
    hessfit_forcefield_free(&ff);

    /* 2. the fit model from the XML against OpenMM's createSystem on the same XML */
    char text[4096], dir[1024], path[1200];
    snprintf(text, sizeof text,
             "forcefield = %s\nstructures = %s\nhessian = %s\nnonbonded = on\nfree = bond k\nfree = bond r0\n"
             "free = angle k\nfree = angle theta0\nfree = vdw r\nfree = vdw eps\nobjective = frequencies\n"
             "geometry = 1 bonds angles\nmax-evaluations = 40\n",
             gaff, test_source_path("tests/data/ethane/GS-gaff.mol2"), test_source_path("tests/data/ethane/GS.fchk"));
    const char *input = test_write_text("ethane-gaff.fit", text);
    test_load_plugins();
    hf_training_set set;
    hf_training_set_options topt = {NULL, test_temp_path("fit"), "-out", 0};
    HF_CALL(hf_training_set_load(input, &topt, &set));
    snprintf(dir, sizeof dir, "%s", test_temp_path("start"));
    CHECK(mkdir(dir, 0777) == 0, "mkdir %s", dir);
    snprintf(path, sizeof path, "%s/molecule.txt", dir);
    write_molecule_txt(&set.mols[0], path);
    snprintf(path, sizeof path, "%s/reference.txt", dir);
    test_write_model_reference(set.model, set.mols, set.n_mols, path);
    CHECK(run_python(python, script, gaff, dir) == 0, "check_ffxml_read.py: hessfit's GAFF differs from OpenMM's");

    test_impropers(python, script, md_script, gaff);

    /* 3. write-back: values off GAFF, the export reproduces the model */
    double *x = malloc((size_t)set.n_free * sizeof *x);
    CHECK(x != NULL, "no memory");
    for (int i = 0; i < set.n_free; i++)
        x[i] = set.x_start[i] * (1.0 + 0.02 * sin(1.0 + i));
    HF_CALL(hessfit_model_set_free(set.model, x));
    HF_CALL(hessfit_model_write_back(set.model, &set.ff));
    snprintf(dir, sizeof dir, "%s", test_temp_path("fitted"));
    CHECK(mkdir(dir, 0777) == 0, "mkdir %s", dir);
    char xml[1200], pdb_name[1200];
    snprintf(xml, sizeof xml, "%s/fitted.xml", dir);
    snprintf(pdb_name, sizeof pdb_name, "%s/fitted-1.pdb", dir);
    const char *pdb[1] = {pdb_name};
    const hessfit_model_options mo = hessfit_model_get_options(set.model);
    const hessfit_ffxml_options xo = {1, 0, mo.coulomb14_scale, mo.lj14_scale, pdb};
    CHECK(mo.nonbonded && mo.coulomb14_scale == set.ff.coulomb14_scale && mo.lj14_scale == 0.5,
          "the model's 1-4 scales are not the XML's");
    HF_CALL(hessfit_ffxml_write(xml, &set.ff, set.mols, set.typed, set.n_mols, &xo, NULL));
    snprintf(path, sizeof path, "%s/reference.txt", dir);
    test_write_model_reference(set.model, set.mols, set.n_mols, path);
    test_shell_quote(qs, sizeof qs, md_script);
    char qd[1200];
    test_shell_quote(qd, sizeof qd, dir);
    snprintf(args, sizeof args, "%s %s 2>&1", qs, qd);
    test_run_result r = test_run_program(python, args);
    printf("%s", r.out);
    free(r.out);
    CHECK(r.status == 0, "check_ffxml_md.py on the export of the XML start (status %d)", r.status);
    free(x);
    hf_training_set_free(&set);

    /* the fit itself, as a user runs it */
    char qi[1200], qo[1200];
    test_shell_quote(qi, sizeof qi, input);
    test_shell_quote(qo, sizeof qo, test_temp_path("cli-fit"));
    snprintf(args, sizeof args, "fit %s --output %s", qi, qo);
    r = test_run_program(test_program_path(argv[0], "hessfit"), args);
    test_expect_exit(&r, 0, NULL, "hessfit fit from the GAFF XML");
    CHECK(strstr(r.out, "fitted.xml\n") != NULL && strstr(r.out, "fitted-1.pdb .. fitted-1.pdb") != NULL &&
              strstr(r.out, "the fitted values of the OpenMM ForceField XML start are in fitted.xml") != NULL,
          "the fit's wrote lines: %s", r.out);
    free(r.out);
    return test_soft_finish("test_ffxml_read");
}
