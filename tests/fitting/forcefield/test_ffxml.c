/*
 * hessfit_ffxml_write checked by OpenMM itself: two hand-typed ethane molecules (coordinates and bonds of
 * tests/data/ethane/GS.mol2) with a hand-built force field in which almost every term has its own
 * parameter (so a permuted assignment would show), including a Fourier and a harmonic improper, a
 * torsion with a non-symmetric phase, a zero Fourier term, a shared parameter and a term without
 * parameters. tests/fitting/forcefield/check_ffxml.py (run with the repository's .venv/bin/python) loads the XML with
 * openmm.app.ForceField, builds the System and prints every parameter and the energy of every
 * force; this test compares them with the converted values (1e-12 relative) and with energies it
 * computes itself from hessfit's formulas (E = k (x - x0)^2, k (1 + cos(n phi - phase)),
 * k wrap(phi - phi0)^2). Then the writer's refusals: each bad input fails with a message and leaves
 * no file. Exits 77 (skipped) when the venv's python or openmm is missing.
 */
#define _POSIX_C_SOURCE 200809L

#include "hessfit_elements.h"
#include "hessfit_ffxml.h"
#include "hessfit_units.h"
#include "test_util.h"

#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define N_ATOMS 8
#define N_MOLS 2
#define MAX_TERMS 64

/* tests/data/ethane/GS.mol2: H1 C2 H3 C4 H5 H6 H7 H8 (Angstrom), bonds 1-2 2-3 2-5 2-4 6-4 7-4 4-8. */
static const int ETHANE_Z[N_ATOMS] = {1, 6, 1, 6, 1, 1, 1, 1};
static const double ETHANE_XYZ[3 * N_ATOMS] = {
    0.0179, 0.0310, -0.0055, -0.0001, -0.0002, 1.0901, 1.0388, 0.0310, 1.4383, -0.7216, -1.2499, 1.6003,
    -0.4926, 0.9151, 1.4383, -0.2291, -2.1652, 1.2520, -1.7605, -1.2810, 1.2520, -0.7396, -1.2810, 2.6958};
static const int ETHANE_BONDS[7][2] = {{0, 1}, {1, 2}, {1, 4}, {1, 3}, {3, 5}, {3, 6}, {3, 7}};
static const char *HARMONIC_ENERGY = "k*d^2; d=min(a, 2*pi-a); a=abs(theta-theta0); pi=3.141592653589793";

static hessfit_forcefield ff;
static size_t ff_cap;

static int add_param(hessfit_param_kind kind, int n_values, const double *values, hessfit_improper_form form)
{
    hessfit_ff_param *p;
    if ((size_t)ff.n_params == ff_cap) {
        ff_cap = ff_cap ? 2 * ff_cap : 16;
        ff.params = realloc(ff.params, ff_cap * sizeof *ff.params);
        CHECK(ff.params != NULL, "no memory");
    }
    p = &ff.params[ff.n_params];
    memset(p, 0, sizeof *p);
    p->kind = kind;
    p->n_values = n_values;
    memcpy(p->values, values, (size_t)n_values * sizeof(double));
    p->improper_form = form;
    p->substructure = -1;
    return ff.n_params++;
}

static void add_term(hessfit_typed_molecule *t, hessfit_term_kind kind, int a, int b, int c, int d, int param)
{
    hessfit_typed_term *x = &t->terms[t->n_terms++];
    CHECK(t->n_terms <= MAX_TERMS, "too many terms");
    memset(x, 0, sizeof *x);
    x->kind = kind;
    x->atoms[0] = a;
    x->atoms[1] = b;
    x->atoms[2] = c;
    x->atoms[3] = d;
    x->param = param;
    x->rule = param < 0 ? HESSFIT_MATCH_NO_TERM : HESSFIT_MATCH_TYPES;
    snprintf(x->detail, sizeof x->detail, param < 0 ? "test: no parameter" : "test parameter %d", param);
}

/* Ethane terms with parameters scaled by s (each molecule its own). */
static void build_terms(hessfit_typed_molecule *t, double s)
{
    static const int centres[2] = {1, 3};
    static const int neigh[2][4] = {{0, 2, 3, 4}, {1, 5, 6, 7}};
    int idx = 0, shared = -1;
    t->terms = calloc(MAX_TERMS, sizeof *t->terms);
    CHECK(t->terms != NULL, "no memory");
    t->n_terms = 0;
    for (int b = 0; b < 7; b++) {
        double v[2] = {(300.0 + 17.0 * b) * s, (b == 3 ? 1.53 : 1.09) + 0.003 * b};
        add_term(t, HESSFIT_TERM_BOND, ETHANE_BONDS[b][0], ETHANE_BONDS[b][1], -1, -1,
                 add_param(HESSFIT_PARAM_BOND, 2, v, HESSFIT_IMPROPER_HARMONIC));
    }
    for (int c = 0; c < 2; c++)
        for (int x = 0; x < 4; x++)
            for (int y = x + 1; y < 4; y++, idx++) {
                double v[2] = {(40.0 + 3.0 * idx) * s, 107.0 + 0.5 * idx};
                int param = (c == 0 && x == 0 && y == 1) ? -1 : add_param(HESSFIT_PARAM_ANGLE, 2, v, HESSFIT_IMPROPER_HARMONIC);
                add_term(t, HESSFIT_TERM_ANGLE, neigh[c][x], centres[c], neigh[c][y], -1, param);
            }
    idx = 0;
    for (int i = 0; i < 3; i++)
        for (int l = 5; l < 8; l++, idx++) {
            static const int first[3] = {0, 2, 4};
            double v[12] = {idx == 2 ? 0.0 : 0.05 + 0.01 * idx, 0.0, 1.0, 0.2 + 0.02 * idx, 180.0, 2.0,
                            0.3 * s, 0.0, 3.0, 0.07 * s, 30.0, 1.0};
            int param;
            if (idx == 8)
                param = shared; /* shares the parameter of the torsion before */
            else
                param = add_param(HESSFIT_PARAM_TORSION, idx == 4 ? 12 : 9, v, HESSFIT_IMPROPER_HARMONIC);
            shared = param;
            add_term(t, HESSFIT_TERM_TORSION, first[i], 1, 3, l, param);
        }
    {
        double h[1] = {5.5 * s}, f[6] = {1.1 * s, 180.0, 2.0, 0.3, 45.0, 1.0};
        /* centre last (hessfit's topology order) and centre first */
        add_term(t, HESSFIT_TERM_IMPROPER, 0, 2, 4, 1, add_param(HESSFIT_PARAM_IMPROPER, 1, h, HESSFIT_IMPROPER_HARMONIC));
        add_term(t, HESSFIT_TERM_IMPROPER, 3, 5, 6, 7, add_param(HESSFIT_PARAM_IMPROPER, 6, f, HESSFIT_IMPROPER_FOURIER));
    }
}

/* ---- geometry (IUPAC dihedral, the convention of OpenMM and HessianForce) ------------------------- */

static void cross(const double *a, const double *b, double *c)
{
    c[0] = a[1] * b[2] - a[2] * b[1];
    c[1] = a[2] * b[0] - a[0] * b[2];
    c[2] = a[0] * b[1] - a[1] * b[0];
}

static double dihedral(const double *x, int i, int j, int k, int l)
{
    double b1[3], b2[3], b3[3], n1[3], n2[3], m[3], nb2 = 0, y = 0, xx = 0;
    for (int c = 0; c < 3; c++) {
        b1[c] = x[3 * j + c] - x[3 * i + c];
        b2[c] = x[3 * k + c] - x[3 * j + c];
        b3[c] = x[3 * l + c] - x[3 * k + c];
        nb2 += b2[c] * b2[c];
    }
    cross(b1, b2, n1);
    cross(b2, b3, n2);
    cross(n1, n2, m);
    for (int c = 0; c < 3; c++) {
        y += m[c] * b2[c];
        xx += n1[c] * n2[c];
    }
    return atan2(y / sqrt(nb2), xx);
}

/* ---- running the checker -------------------------------------------------------------------------- */

/* Output of the checker (stderr merged into it) in a malloc'ed string; *status its exit status. */
static char *run_checker(const char *python, const char *script, const char *xml, const char *positions, int *status)
{
    char args[3200], qs[1024], qx[1024], qpos[1024];
    test_run_result r;
    test_shell_quote(qs, sizeof qs, script);
    test_shell_quote(qx, sizeof qx, xml);
    test_shell_quote(qpos, sizeof qpos, positions);
    snprintf(args, sizeof args, "%s %s %s 2>&1", qs, qx, qpos);
    r = test_run_program(python, args);
    *status = r.status;
    return r.out;
}

typedef struct omm_line {
    char kind[24];
    int a[4];
    int n;
    double v[3];
    int used;
} omm_line;

static int n_lines;
static omm_line lines[512];
static double omm_energy[4]; /* bond, angle, torsion, custom */
static int omm_energy_seen[4];
static char omm_expression[256];
static double max_rel;

static void parse_output(char *text)
{
    char *save = NULL;
    for (char *l = strtok_r(text, "\n", &save); l != NULL; l = strtok_r(NULL, "\n", &save)) {
        omm_line x;
        char name[64];
        double e;
        memset(&x, 0, sizeof x);
        if (sscanf(l, "energy %63s %lf", name, &e) == 2) {
            int k = strcmp(name, "HarmonicBondForce") == 0      ? 0
                    : strcmp(name, "HarmonicAngleForce") == 0   ? 1
                    : strcmp(name, "PeriodicTorsionForce") == 0 ? 2
                    : strcmp(name, "CustomTorsionForce") == 0   ? 3
                                                                : -1;
            CHECK(k >= 0, "unexpected force '%s'", name);
            omm_energy[k] = e;
            omm_energy_seen[k] = 1;
            continue;
        }
        if (strncmp(l, "custom_torsion_energy ", 22) == 0) {
            snprintf(omm_expression, sizeof omm_expression, "%s", l + 22);
            continue;
        }
        CHECK(strncmp(l, "force ", 6) != 0, "OpenMM made a force hessfit did not ask for: %s", l);
        if (sscanf(l, "mass %d %lf", &x.a[0], &x.v[0]) == 2)
            strcpy(x.kind, "mass");
        else if (sscanf(l, "bond %d %d %lf %lf", &x.a[0], &x.a[1], &x.v[0], &x.v[1]) == 4)
            strcpy(x.kind, "bond");
        else if (sscanf(l, "angle %d %d %d %lf %lf", &x.a[0], &x.a[1], &x.a[2], &x.v[0], &x.v[1]) == 5)
            strcpy(x.kind, "angle");
        else if (sscanf(l, "torsion %d %d %d %d %d %lf %lf", &x.a[0], &x.a[1], &x.a[2], &x.a[3], &x.n, &x.v[0],
                        &x.v[1]) == 7)
            strcpy(x.kind, "torsion");
        else if (sscanf(l, "custom_torsion %d %d %d %d %lf %lf", &x.a[0], &x.a[1], &x.a[2], &x.a[3], &x.v[0],
                        &x.v[1]) == 6)
            strcpy(x.kind, "custom");
        else
            continue;
        CHECK(n_lines < 512, "too many lines");
        lines[n_lines++] = x;
    }
}

static void close_rel(double got, double want, const char *what)
{
    double rel = fabs(got - want) / (fabs(want) > 1e-300 ? fabs(want) : 1.0);
    CHECK(rel <= 1e-12, "%s: OpenMM %.17g, expected %.17g (rel %.3g)", what, got, want, rel);
    if (rel > max_rel)
        max_rel = rel;
}

/* The unused parsed line of that kind with those atoms (in either direction when reversible), and
 * for torsions that periodicity and phase. */
static omm_line *find(const char *kind, const int *a, int n_atoms, int reversible, int n, double phase)
{
    for (int i = 0; i < n_lines; i++) {
        omm_line *x = &lines[i];
        int fwd = 1, rev = reversible;
        if (x->used || strcmp(x->kind, kind) != 0)
            continue;
        for (int k = 0; k < n_atoms; k++) {
            fwd &= x->a[k] == a[k];
            rev &= x->a[k] == a[n_atoms - 1 - k];
        }
        if (!(fwd || rev))
            continue;
        if (strcmp(kind, "torsion") == 0 && (x->n != n || fabs(x->v[0] - phase) > 1e-9))
            continue;
        x->used = 1;
        return x;
    }
    return NULL;
}

int main(void)
{
    hessfit_molecule mols[N_MOLS];
    hessfit_typed_molecule typed[N_MOLS];
    char *types[N_ATOMS];
    double coords[N_MOLS][3 * N_ATOMS];
    double want_energy[4] = {0, 0, 0, 0}, scale_energy[4] = {0, 0, 0, 0};
    const char *xml, *pos_path, *bad;
    const char *python = test_venv_python();
    const char *script = test_source_path_dup("tests/fitting/forcefield/check_ffxml.py");
    int n_want[4] = {0, 0, 0, 0}, status;
    char *output;
    FILE *f;

    xml = test_temp_path("ethane.xml");
    pos_path = test_temp_path("positions.txt");

    /* Two ethanes with the same name (the second becomes "ethane_1"), the second displaced a little. */
    test_seed(12345);
    for (int i = 0; i < N_ATOMS; i++)
        types[i] = ETHANE_Z[i] == 6 ? "C3" : "H1";
    memset(&ff, 0, sizeof ff);
    for (int m = 0; m < N_MOLS; m++) {
        memset(&mols[m], 0, sizeof mols[m]);
        mols[m].name = "ethane";
        mols[m].n_atoms = N_ATOMS;
        mols[m].atomic_numbers = (int *)ETHANE_Z;
        for (int c = 0; c < 3 * N_ATOMS; c++)
            coords[m][c] = ETHANE_XYZ[c] + (m == 0 ? 0.0 : 0.1 * (test_random() - 0.5));
        mols[m].coords = coords[m];
        mols[m].atom_types = types;
        build_terms(&typed[m], 1.0 + 0.5 * m);
    }
    HF_CALL(hessfit_ffxml_write(xml, &ff, mols, typed, N_MOLS, NULL, NULL));
    {
        char *text = test_load_file(xml, NULL);
        CHECK(strstr(text, "<Residue name=\"ethane\">") && strstr(text, "<Residue name=\"ethane_1\">"),
              "residues not named ethane and ethane_1");
        CHECK(strstr(text, "type1=\"ethane_1-0\"") != NULL, "no per-atom types for the second molecule");
        {
            int comments = 0;
            for (char *s = text; (s = strstr(s, "no term (the user chose none)")) != NULL; s++)
                comments++;
            CHECK(comments == N_MOLS, "%d 'no term' comments, expected %d", comments, N_MOLS);
        }
        free(text);
    }
    f = fopen(pos_path, "w");
    CHECK(f != NULL, "cannot write %s", pos_path);
    for (int m = 0; m < N_MOLS; m++)
        for (int i = 0; i < N_ATOMS; i++)
            fprintf(f, "%.17g %.17g %.17g\n", coords[m][3 * i] * HESSFIT_ANGSTROM_TO_NM,
                    coords[m][3 * i + 1] * HESSFIT_ANGSTROM_TO_NM, coords[m][3 * i + 2] * HESSFIT_ANGSTROM_TO_NM);
    fclose(f);

    output = run_checker(python, script, xml, pos_path, &status);
    if (status == 77) {
        printf("SKIP: %s", output);
        free(output);
        return 77;
    }
    CHECK(status == 0, "check_ffxml.py failed (status %d):\n%s", status, output);
    parse_output(output);

    /* Masses and every term, against the converted hessfit values. */
    for (int m = 0, offset = 0; m < N_MOLS; m++, offset += N_ATOMS) {
        const double *x = coords[m];
        for (int i = 0; i < N_ATOMS; i++) {
            int a[1] = {offset + i};
            omm_line *l = find("mass", a, 1, 0, 0, 0);
            CHECK(l != NULL, "no mass for particle %d", offset + i);
            close_rel(l->v[0], hessfit_element_average_mass(ETHANE_Z[i]), "mass");
        }
        for (int t = 0; t < typed[m].n_terms; t++) {
            const hessfit_typed_term *term = &typed[m].terms[t];
            const hessfit_ff_param *p = term->param >= 0 ? &ff.params[term->param] : NULL;
            int a[4];
            for (int k = 0; k < 4; k++)
                a[k] = term->atoms[k] + offset;
            if (p == NULL) {
                CHECK(find("angle", a, 3, 1, 0, 0) == NULL, "OpenMM has the angle without parameters");
                continue;
            }
            switch (term->kind) {
            case HESSFIT_TERM_BOND: {
                omm_line *l = find("bond", a, 2, 1, 0, 0);
                double d = test_distance(x, term->atoms[0], term->atoms[1]) - p->values[1];
                CHECK(l != NULL, "no OpenMM bond %d-%d", a[0], a[1]);
                close_rel(l->v[0], p->values[1] * HESSFIT_ANGSTROM_TO_NM, "bond length");
                close_rel(l->v[1], 2.0 * p->values[0] * HESSFIT_KCAL_PER_MOL_PER_A2_TO_KJ_PER_MOL_PER_NM2, "bond k");
                want_energy[0] += HESSFIT_KCAL_TO_KJ * p->values[0] * d * d;
                scale_energy[0] += fabs(HESSFIT_KCAL_TO_KJ * p->values[0] * d * d);
                n_want[0]++;
                break;
            }
            case HESSFIT_TERM_ANGLE: {
                omm_line *l = find("angle", a, 3, 1, 0, 0);
                double d = test_angle(x, term->atoms[0], term->atoms[1], term->atoms[2]) - p->values[1] * HESSFIT_DEG_TO_RAD;
                CHECK(l != NULL, "no OpenMM angle %d-%d-%d", a[0], a[1], a[2]);
                close_rel(l->v[0], p->values[1] * HESSFIT_DEG_TO_RAD, "angle theta0");
                close_rel(l->v[1], 2.0 * p->values[0] * HESSFIT_KCAL_PER_MOL_PER_RAD2_TO_KJ_PER_MOL_PER_RAD2, "angle k");
                want_energy[1] += HESSFIT_KCAL_TO_KJ * p->values[0] * d * d;
                scale_energy[1] += fabs(HESSFIT_KCAL_TO_KJ * p->values[0] * d * d);
                n_want[1]++;
                break;
            }
            case HESSFIT_TERM_TORSION:
            case HESSFIT_TERM_IMPROPER: {
                double phi = dihedral(x, term->atoms[0], term->atoms[1], term->atoms[2], term->atoms[3]);
                int improper = term->kind == HESSFIT_TERM_IMPROPER, centre_last = improper && term->atoms[3] == 1;
                int b[4];
                for (int k = 0; k < 4; k++) /* the order hessfit_ffxml_write documents for impropers */
                    b[k] = centre_last ? a[3 - k] : a[k];
                if (improper && p->improper_form == HESSFIT_IMPROPER_HARMONIC) {
                    omm_line *l = find("custom", b, 4, 0, 0, 0);
                    double e = HESSFIT_KCAL_TO_KJ * p->values[0] * phi * phi; /* phi0 = 0, |phi| < pi */
                    CHECK(l != NULL, "no OpenMM custom torsion %d-%d-%d-%d", b[0], b[1], b[2], b[3]);
                    close_rel(l->v[0], p->values[0] * HESSFIT_KCAL_PER_MOL_PER_RAD2_TO_KJ_PER_MOL_PER_RAD2, "improper k");
                    CHECK(l->v[1] == 0.0, "improper theta0 %g", l->v[1]);
                    want_energy[3] += e;
                    scale_energy[3] += fabs(e);
                    n_want[3]++;
                } else {
                    for (int k = 0; k < p->n_values / 3; k++) {
                        double kk = p->values[3 * k], phase = p->values[3 * k + 1] * HESSFIT_DEG_TO_RAD;
                        int n = (int)p->values[3 * k + 2];
                        double e = HESSFIT_KCAL_TO_KJ * kk * (1.0 + cos(n * phi - phase));
                        omm_line *l;
                        want_energy[2] += e;
                        scale_energy[2] += fabs(e);
                        if (kk == 0.0)
                            continue; /* OpenMM adds no term with k = 0 */
                        l = find("torsion", b, 4, !improper, n, phase);
                        CHECK(l != NULL, "no OpenMM torsion %d-%d-%d-%d n=%d", b[0], b[1], b[2], b[3], n);
                        close_rel(l->v[1], kk * HESSFIT_KCAL_TO_KJ, "torsion k");
                        n_want[2]++;
                    }
                }
                if (improper) { /* the order written is the same dihedral as the term's */
                    double phi_written = dihedral(x, b[0] - offset, b[1] - offset, b[2] - offset, b[3] - offset);
                    CHECK(fabs(phi_written - phi) <= 1e-12, "improper order changes the dihedral: %.17g vs %.17g",
                          phi_written, phi);
                }
                break;
            }
            default:
                break;
            }
        }
    }
    for (int i = 0; i < n_lines; i++)
        CHECK(lines[i].used, "OpenMM has an extra %s on %d-%d-%d-%d", lines[i].kind, lines[i].a[0], lines[i].a[1],
              lines[i].a[2], lines[i].a[3]);
    CHECK(strcmp(omm_expression, HARMONIC_ENERGY) == 0, "custom torsion energy '%s'", omm_expression);
    printf("OpenMM System: %d bonds, %d angles, %d periodic torsion terms, %d harmonic impropers, 16 masses; "
           "max relative parameter error %.3g\n",
           n_want[0], n_want[1], n_want[2], n_want[3], max_rel);
    CHECK(n_want[0] == 14 && n_want[1] == 22 && n_want[2] == 2 * (9 * 3 - 1 + 1 + 2) && n_want[3] == 2,
          "unexpected term counts");
    {
        static const char *names[4] = {"bond", "angle", "torsion", "harmonic improper"};
        for (int k = 0; k < 4; k++) {
            double rel;
            CHECK(omm_energy_seen[k], "no %s energy", names[k]);
            rel = fabs(omm_energy[k] - want_energy[k]) / scale_energy[k];
            printf("  %s energy: OpenMM %.12f kJ/mol, hessfit formula %.12f (rel %.2g)\n", names[k], omm_energy[k],
                   want_energy[k], rel);
            CHECK(rel <= 1e-11, "%s energy differs: %.17g vs %.17g", names[k], omm_energy[k], want_energy[k]);
        }
    }
    free(output);

    /* Refusals: status, message, and no file written. */
    bad = test_temp_path("bad.xml");
    {
        struct {
            const char *what;
            int term, field, value;
            hessfit_status status;
        } cases[] = {
            {"parameter index out of range", 0, 0, 100000, HESSFIT_ERROR_INVALID_ARGUMENT},
            {"a bond parameter on an angle", 8, 0, 0, HESSFIT_ERROR_INVALID_ARGUMENT},
            {"an atom index out of range", 0, 1, 8, HESSFIT_ERROR_INVALID_ARGUMENT},
            {"an angle off the bonds", 8, 2, 5, HESSFIT_ERROR_INVALID_ARGUMENT},
            {"an improper with the centre second", -1, 0, 0, HESSFIT_ERROR_UNSUPPORTED},
            {"two terms on the same atoms", -2, 0, 0, HESSFIT_ERROR_INVALID_ARGUMENT},
            {"a NaN parameter value", -3, 0, 0, HESSFIT_ERROR_NONFINITE},
        };
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            hessfit_typed_term saved[MAX_TERMS];
            hessfit_ff_param saved_param = ff.params[0];
            int n_saved = typed[0].n_terms;
            hessfit_status st;
            memcpy(saved, typed[0].terms, sizeof saved);
            if (cases[c].term >= 0 && cases[c].field == 0)
                typed[0].terms[cases[c].term].param = cases[c].value;
            else if (cases[c].term >= 0)
                typed[0].terms[cases[c].term].atoms[cases[c].field] = cases[c].value;
            else if (cases[c].term == -1) { /* harmonic improper 0 2 4 1 -> 0 1 2 4 */
                hessfit_typed_term *t = &typed[0].terms[typed[0].n_terms - 2];
                t->atoms[1] = 1;
                t->atoms[2] = 2;
                t->atoms[3] = 4;
            } else if (cases[c].term == -2) /* the last torsion again, reversed */
                add_term(&typed[0], HESSFIT_TERM_TORSION, 7, 3, 1, 4, typed[0].terms[typed[0].n_terms - 3].param);
            else
                ff.params[0].values[1] = NAN;
            st = hessfit_ffxml_write(bad, &ff, mols, typed, N_MOLS, NULL, NULL);
            printf("  %s: %s\n", cases[c].what, hessfit_last_error());
            CHECK(st == cases[c].status, "%s: status %s (%s)", cases[c].what, hessfit_status_string(st), hessfit_last_error());
            CHECK(strstr(hessfit_last_error(), bad) != NULL, "%s: the message does not name the file", cases[c].what);
            CHECK(access(bad, F_OK) != 0, "%s: a file was left behind", cases[c].what);
            memcpy(typed[0].terms, saved, sizeof saved);
            typed[0].n_terms = n_saved;
            ff.params[0] = saved_param;
        }
        /* An unwritable place: an I/O error and nothing written. */
        bad = test_temp_path("no/such/dir/x.xml");
        CHECK(hessfit_ffxml_write(bad, &ff, mols, typed, N_MOLS, NULL, NULL) == HESSFIT_ERROR_IO, "writing into a missing directory");
        printf("  missing directory: %s\n", hessfit_last_error());
    }
    /* Nothing but the two files of the test is left in the directory (no temporary files). */
    {
        static const char *const names[2] = {"ethane.xml", "positions.txt"};
        int n = test_temp_check_only(names, 2);
        CHECK(n == 2, "%d files in the test directory", n);
    }
    for (int m = 0; m < N_MOLS; m++)
        free(typed[m].terms);
    free(ff.params);
    free((void *)python);
    free((void *)script);
    printf("test_ffxml: OK\n");
    return 0;
}
