/*
 * test_jacobian: the objective's residual Jacobian and normal equations
 * (hessfit_objective_jacobian, hessfit_objective_normal_equations; fitting/model/hf_objective_jacobian.c).
 *
 *   - J against central differences (4-point stencil) of the residuals in free-value space, for
 *     every objective kind: q2mm frequencies, overlap frequencies, eigenmatrix, Hessian elements
 *     on CH3F at a generic point (one H moved, parameters off the start), and geometry; on two
 *     rh-enamide structures (the two DMPE conformers, mm3.fld, Lennard-Jones + Coulomb, bond, angle,
 *     torsion and vdW values free) all parts at once: overlap frequencies + eigenmatrix + Hessian
 *     elements on one, q2mm frequencies + eigenmatrix (TS replaced) on the other, relative
 *     energies and geometry targets (bonds, angles, torsions: the per-coordinate route; CH3F's
 *     take the per-target adjoints); and the MM3* form (derived slots) on the same pair.
 *   - 2 J^T r = evaluate's gradient (to ~1e-12 of its largest component); the residuals equal
 *     evaluate's; normal_equations = J^T J and J^T r of the dense J.
 * Argument: a platform name (default Reference), so that the GPU platforms' route is checked too;
 * there without geometry targets (OpenMM's LocalEnergyMinimizer, which the geometry part runs,
 * crashes inside PoCL's getScale kernel here), and rh-enamide's J against Reference's row by row; on
 * a GPU platform that is with its bilinear forms on the device (the default), and once more (LJ +
 * Coulomb) with HESSFIT_GPU_JACOBIAN=host, whose bad values are refused at model creation, naming it.
 * Tolerances: the frequencies' step is 1e-5 relative; the relative energies' central differences
 * lose digits to the cancellation of two molecule energies (~1e3 kJ/mol each), measured ~1e-6.
 */
#define _POSIX_C_SOURCE 200809L
#include "hessfit_fitting.h"
#include "hessfit_model.h"
#include "hessfit_objective.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *platform = NULL; /* NULL: the model's default (Reference) */

static double *alloc_doubles(size_t n)
{
    double *p = calloc(n > 0 ? n : 1, sizeof(double));
    CHECK(p != NULL, "out of memory");
    return p;
}

/* The free values the check perturbs: every stride-th. */
typedef struct {
    double fd;      /* max over checked columns j, rows i of |fd_ij - J_ij| / max_i |J_ij| (col scale floor 1e-6 of max |J|) */
    double fd_part[3]; /* the same per part (Hessian-space, energies, geometry) */
    double gradient;/* max |2 J^T r - g| / max |g| */
    double normal;  /* max |jtj - J^T J| / max |J^T J|, same for jtr */
    double residual;/* max |r_jac - r_eval| / max |r_eval| */
} jac_stats;

/*
 * All checks at x0 (n free values). step: relative FD step. Prints one line, returns the numbers.
 */
static jac_stats check_jacobian(hessfit_objective *obj, hessfit_model *model, const double *x0, double step, int stride,
                                const char *label)
{
    const int n = hessfit_model_n_free(model);
    const long long nr = hessfit_objective_n_residuals(obj);
    double *j = alloc_doubles((size_t)nr * n), *r = alloc_doubles((size_t)nr), *re = alloc_doubles((size_t)nr);
    double *g = alloc_doubles((size_t)n), *x = alloc_doubles((size_t)n), *jtj = alloc_doubles((size_t)n * n);
    double *jtr = alloc_doubles((size_t)n), *rp[4], loss, loss_e, loss_n;
    for (int k = 0; k < 4; k++)
        rp[k] = alloc_doubles((size_t)nr);
    jac_stats st = {0, {0, 0, 0}, 0, 0, 0};
    long long part_first[3], part_n[3];
    for (int p = 0; p < 3; p++)
        HF_CALL(hessfit_objective_part_range(obj, (hessfit_objective_part)p, &part_first[p], &part_n[p]));

    HF_CALL(hessfit_objective_evaluate(obj, x0, &loss_e, g, re));
    HF_CALL(hessfit_objective_jacobian(obj, x0, &loss, r, j));
    double rmax = 0.0; /* evaluate with a gradient may take another eigensolver path: rounding */
    for (long long i = 0; i < nr; i++)
        rmax = fmax(rmax, fabs(re[i]));
    for (long long i = 0; i < nr; i++)
        st.residual = fmax(st.residual, fabs(r[i] - re[i]) / fmax(rmax, 1e-300));
    CHECK(fabs(loss - loss_e) <= 1e-12 * fmax(loss_e, 1e-300), "%s: loss %.17g vs evaluate's %.17g", label, loss, loss_e);

    /* 2 J^T r against the gradient */
    double gmax = 0.0, jmax = 0.0;
    for (int c = 0; c < n; c++)
        gmax = fmax(gmax, fabs(g[c]));
    for (int c = 0; c < n; c++) {
        double s = 0.0;
        for (long long i = 0; i < nr; i++)
            s += j[(size_t)i * n + c] * r[i];
        st.gradient = fmax(st.gradient, fabs(2.0 * s - g[c]) / fmax(gmax, 1e-300));
    }
    for (size_t i = 0; i < (size_t)nr * n; i++)
        jmax = fmax(jmax, fabs(j[i]));

    /* normal equations */
    HF_CALL(hessfit_objective_normal_equations(obj, x0, &loss_n, jtj, jtr));
    CHECK(loss_n == loss, "%s: normal equations' loss %.17g vs %.17g", label, loss_n, loss);
    double nmax = 0.0, nerr = 0.0, tmax = 0.0, terr = 0.0;
    for (int a = 0; a < n; a++) {
        double t = 0.0;
        for (long long i = 0; i < nr; i++)
            t += j[(size_t)i * n + a] * r[i];
        tmax = fmax(tmax, fabs(t));
        terr = fmax(terr, fabs(t - jtr[a]));
        for (int b = 0; b < n; b++) {
            double s = 0.0;
            for (long long i = 0; i < nr; i++)
                s += j[(size_t)i * n + a] * j[(size_t)i * n + b];
            nmax = fmax(nmax, fabs(s));
            nerr = fmax(nerr, fabs(s - jtj[(size_t)a * n + b]));
            CHECK(jtj[(size_t)a * n + b] == jtj[(size_t)b * n + a], "%s: jtj not symmetric at %d, %d", label, a, b);
        }
    }
    st.normal = fmax(nerr / fmax(nmax, 1e-300), terr / fmax(tmax, 1e-300));

    /* central differences of the residuals, column by column */
    static const double stencil[4] = {-2.0, -1.0, 1.0, 2.0};
    for (int c = 0; c < n; c += stride) {
        const double h = step * fmax(fabs(x0[c]), 1.0);
        for (int k = 0; k < 4; k++) {
            memcpy(x, x0, (size_t)n * sizeof *x);
            x[c] += stencil[k] * h;
            double l;
            HF_CALL(hessfit_objective_evaluate(obj, x, &l, NULL, rp[k]));
        }
        double cmax = 0.0;
        for (long long i = 0; i < nr; i++)
            cmax = fmax(cmax, fabs(j[(size_t)i * n + c]));
        for (int p = 0; p < 3; p++) {
            double cerr = 0.0;
            for (long long i = part_first[p]; i < part_first[p] + part_n[p]; i++) {
                const double fd = (8.0 * (rp[2][i] - rp[1][i]) - (rp[3][i] - rp[0][i])) / (12.0 * h);
                cerr = fmax(cerr, fabs(fd - j[(size_t)i * n + c]));
            }
            st.fd_part[p] = fmax(st.fd_part[p], cerr / fmax(cmax, 1e-6 * jmax));
            st.fd = fmax(st.fd, st.fd_part[p]);
        }
    }
    HF_CALL(hessfit_objective_evaluate(obj, x0, &loss_e, NULL, NULL)); /* back at x0 */
    printf("  %-40s %5lld residuals x %3d free: FD %.2g (Hessian-space %.2g, energies %.2g, geometry %.2g), "
           "2 J^T r vs gradient %.2g, normal equations %.2g, residuals %.2g\n",
           label, nr, n, st.fd, st.fd_part[0], st.fd_part[1], st.fd_part[2], st.gradient, st.normal, st.residual);
    for (int k = 0; k < 4; k++)
        free(rp[k]);
    free(j);
    free(r);
    free(re);
    free(g);
    free(x);
    free(jtj);
    free(jtr);
    return st;
}

static void expect(jac_stats st, double fd_tol, const char *label)
{
    CHECK(st.fd <= fd_tol, "%s: J vs central differences %.3g (tolerance %.3g)", label, st.fd, fd_tol);
    CHECK(st.gradient <= 1e-11, "%s: 2 J^T r vs the gradient %.3g", label, st.gradient);
    CHECK(st.normal <= 1e-12, "%s: normal equations vs the dense J %.3g", label, st.normal);
    CHECK(st.residual <= 1e-12, "%s: residuals differ from evaluate's by %.3g", label, st.residual);
}

static hessfit_model_options model_options(void)
{
    hessfit_model_options o = hessfit_model_default_options();
    if (platform != NULL) {
        o.platform = platform;
        o.precision = "double";
    }
    return o;
}

/* ---- CH3F ----------------------------------------------------------------------------------------- */

static void test_ch3f(test_ch3f_set *s)
{
    static const char *const names[5] = {"CH3F q2mm frequencies", "CH3F overlap frequencies", "CH3F eigenmatrix",
                                         "CH3F Hessian elements", "CH3F all Hessian kinds + geometry"};
    const hessfit_molecule *moved = &s->moved;
    for (int kind = 0; kind < 5; kind++) {
        hessfit_model *model;
        hessfit_objective *obj;
        hessfit_objective_options o = hessfit_objective_default_options();
        o.frequencies = kind == 0 ? HESSFIT_OBJ_FREQUENCIES_Q2MM
                        : kind == 1 || kind == 4 ? HESSFIT_OBJ_FREQUENCIES_OVERLAP
                                                 : HESSFIT_OBJ_FREQUENCIES_NONE;
        o.eigenmatrix = kind == 2 || kind == 4;
        o.hessian = kind == 3 || kind == 4;
        hessfit_model_options mo = model_options();
        HF_CALL(hessfit_model_create(&s->ff.ff, moved, &s->typed, 1, &mo, &model));
        HF_CALL(hessfit_model_add_free_kind(model, HESSFIT_PARAM_BOND, HESSFIT_MODEL_FREE_K | HESSFIT_MODEL_FREE_X0, NULL));
        HF_CALL(hessfit_model_add_free_kind(model, HESSFIT_PARAM_ANGLE, HESSFIT_MODEL_FREE_K | HESSFIT_MODEL_FREE_X0, NULL));
        const int n = hessfit_model_n_free(model);
        HF_CALL(hessfit_objective_create(model, moved, 1, &o, &obj));
        if (kind == 4 && platform == NULL) {
            static const double w[3] = {HESSFIT_OBJ_BOND_WEIGHT, HESSFIT_OBJ_ANGLE_WEIGHT, HESSFIT_OBJ_TORSION_WEIGHT};
            hessfit_geometry_target *t = NULL;
            int nt = 0;
            HF_CALL(hessfit_objective_geometry_targets_of_terms(&s->typed, moved, 0,
                                                                HESSFIT_OBJ_GEOMETRY_BONDS | HESSFIT_OBJ_GEOMETRY_ANGLES, w,
                                                                &t, &nt));
            HF_CALL(hessfit_objective_set_geometry(obj, moved, 1, t, nt));
            free(t);
        }
        double x[8];
        CHECK(n == 8, "%d free", n);
        HF_CALL(hessfit_model_get_free(model, x));
        for (int i = 0; i < n; i++) { /* k up 10 %, r0 +0.02 A, theta0 -1.5 deg (as test_objective) */
            int p, v;
            HF_CALL(hessfit_model_free_parameter(model, i, &p, &v, NULL, NULL));
            x[i] += v == 0 ? 0.1 * x[i] : s->ff.params[p].kind == HESSFIT_PARAM_BOND ? 0.02 : -1.5;
        }
        expect(check_jacobian(obj, model, x, 1e-4, 1, names[kind]), 1e-7, names[kind]);
        hessfit_objective_destroy(obj);
        hessfit_model_destroy(model);
    }
}

/* ---- two rh-enamide structures --------------------------------------------------------------------- */

#define RH TEST_RH_MOLECULES
#define PAIR 2
static const int pair_of[PAIR] = {1, 2}; /* the two DMPE conformers: isomers, for relative energies */

typedef struct {
    hessfit_forcefield ff;
    hessfit_molecule_list mmo; /* at the QM geometry, with Hessians */
    hessfit_typed_molecule typed[RH];
    hessfit_molecule mols[PAIR];
    hessfit_typed_molecule typed_pair[PAIR];
    double energy[PAIR];
} rh_set;

static void load_rh(rh_set *s)
{
    test_type_rh_enamide(&s->ff, &s->mmo, s->typed);
    for (int k = 0; k < PAIR; k++) {
        const int m = pair_of[k];
        char rel[256];
        hessfit_molecule in, out;
        snprintf(rel, sizeof rel, "examples/data/rh-enamide/jaguar/%s.01.in.gz", test_rh_jaguar[m]);
        HF_CALL(hessfit_jaguar_in_read(test_source_path(rel), &in));
        snprintf(rel, sizeof rel, "examples/data/rh-enamide/jaguar/%s.out.gz", test_rh_jaguar[m]);
        HF_CALL(hessfit_jaguar_out_read(test_source_path(rel), &out));
        CHECK(out.has_energy && in.n_atoms == s->mmo.items[m].n_atoms, "%s", rel);
        s->energy[k] = out.energy;
        hessfit_molecule *mol = &s->mmo.items[m];
        memcpy(mol->coords, in.coords, 3 * sizeof(double) * (size_t)in.n_atoms);
        free(mol->hessian);
        mol->hessian = in.hessian;
        in.hessian = NULL;
        hessfit_molecule_free(&in);
        hessfit_molecule_free(&out);
        s->mols[k] = *mol; /* shallow: the list owns the arrays */
        s->typed_pair[k] = s->typed[m];
    }
}

static void free_rh(rh_set *s)
{
    for (int m = 0; m < RH; m++)
        hessfit_typed_molecule_free(&s->typed[m]);
    hessfit_molecule_list_free(&s->mmo);
    hessfit_forcefield_free(&s->ff);
}

static hessfit_objective *rh_objective(rh_set *s, hessfit_model *model)
{
    hessfit_objective_options opt[PAIR];
    opt[0] = opt[1] = hessfit_objective_default_options();
    opt[0].eigenmatrix = 1;
    opt[0].hessian = 1;
    opt[1].frequencies = HESSFIT_OBJ_FREQUENCIES_Q2MM;
    opt[1].ts = HESSFIT_OBJ_TS_REPLACE;
    opt[1].eigenmatrix = 1;
    hessfit_objective *obj;
    HF_CALL(hessfit_objective_create(model, s->mols, PAIR, opt, &obj));
    hessfit_energy_target e[PAIR];
    for (int k = 0; k < PAIR; k++) {
        e[k].mol = k;
        e[k].group = 0;
        e[k].qm_hartree = s->energy[k];
        e[k].weight = HESSFIT_OBJ_ENERGY_WEIGHT;
    }
    HF_CALL(hessfit_objective_set_energies(obj, e, PAIR));
    if (platform != NULL)
        return obj;
    static const double w[3] = {HESSFIT_OBJ_BOND_WEIGHT, HESSFIT_OBJ_ANGLE_WEIGHT, HESSFIT_OBJ_TORSION_WEIGHT};
    hessfit_geometry_target *t = NULL;
    int nt = 0;
    /* bonds, angles and torsions: more targets than coordinates, so the geometry part takes its
     * per-coordinate route here (CH3F's 10 bonds and angles of 15 coordinates take the adjoints) */
    HF_CALL(hessfit_objective_geometry_targets_of_terms(&s->typed_pair[0], &s->mols[0], 0,
                                                        HESSFIT_OBJ_GEOMETRY_BONDS | HESSFIT_OBJ_GEOMETRY_ANGLES |
                                                            HESSFIT_OBJ_GEOMETRY_TORSIONS,
                                                        w, &t, &nt));
    CHECK(nt > 3 * s->mols[0].n_atoms, "%d geometry targets for %d coordinates", nt, 3 * s->mols[0].n_atoms);
    HF_CALL(hessfit_objective_set_geometry(obj, s->mols, PAIR, t, nt));
    free(t);
    return obj;
}

/* J of the same training set and free values (x) on a model created with opt: jac (nr x n_free). */
static void jacobian_like(rh_set *s, const hessfit_model_options *opt, hessfit_model *like, const double *x, long long nr,
                          double *jac)
{
    hessfit_model *model;
    HF_CALL(hessfit_model_create(&s->ff, s->mols, s->typed_pair, PAIR, opt, &model));
    const int n = hessfit_model_n_free(like);
    for (int i = 0; i < n; i++) {
        int p, v;
        HF_CALL(hessfit_model_free_parameter(like, i, &p, &v, NULL, NULL));
        HF_CALL(hessfit_model_add_free(model, p, v));
    }
    hessfit_objective *obj = rh_objective(s, model);
    CHECK(hessfit_objective_n_residuals(obj) == nr, "residual counts differ");
    double *r = alloc_doubles((size_t)nr);
    HF_CALL(hessfit_objective_jacobian(obj, x, NULL, r, jac));
    free(r);
    hessfit_objective_destroy(obj);
    hessfit_model_destroy(model);
}

/* ja against jb (row-major, nr residuals x n free values): the largest difference of max |J|, and of
 * each residual's row relative to that row's largest entry (rows below 1e-12 of max |J| against
 * max |J|); at most 1e-10 and 1e-9. */
static void compare_rows(const double *ja, const double *jb, long long nr, int n, const char *label, const char *what)
{
    double jmax = 0.0, diff = 0.0, row_worst = 0.0;
    for (size_t i = 0; i < (size_t)nr * n; i++)
        jmax = fmax(jmax, fabs(jb[i]));
    for (long long i = 0; i < nr; i++) {
        double rmax = 0.0, rdiff = 0.0;
        for (int j = 0; j < n; j++) {
            rmax = fmax(rmax, fabs(jb[(size_t)i * n + j]));
            rdiff = fmax(rdiff, fabs(ja[(size_t)i * n + j] - jb[(size_t)i * n + j]));
        }
        diff = fmax(diff, rdiff);
        row_worst = fmax(row_worst, rdiff / fmax(rmax, 1e-12 * jmax));
    }
    printf("  %s: %s on %s: %.2g of max |J|, %.2g of its row's max at worst\n", label, what, platform, diff / jmax,
           row_worst);
    CHECK(diff <= 1e-10 * jmax, "%s: %s on %s: %.3g of max |J|", label, what, platform, diff / jmax);
    CHECK(row_worst <= 1e-9, "%s: %s on %s: a row differs by %.3g of its largest entry", label, what, platform, row_worst);
}

static void test_rh(rh_set *s, int mm3)
{
    hessfit_model_options mo = model_options();
    hessfit_model *model;
    if (mm3)
        mo.form = HESSFIT_MODEL_FORM_MM3;
    else
        mo.nonbonded = 1;
    HF_CALL(hessfit_model_create(&s->ff, s->mols, s->typed_pair, PAIR, &mo, &model));
    HF_CALL(hessfit_model_add_free_kind(model, HESSFIT_PARAM_BOND, HESSFIT_MODEL_FREE_K | HESSFIT_MODEL_FREE_X0, NULL));
    HF_CALL(hessfit_model_add_free_kind(model, HESSFIT_PARAM_ANGLE, HESSFIT_MODEL_FREE_K | HESSFIT_MODEL_FREE_X0, NULL));
    HF_CALL(hessfit_model_add_free_kind(model, HESSFIT_PARAM_TORSION, HESSFIT_MODEL_FREE_K, NULL));
    HF_CALL(hessfit_model_add_free_kind(model, HESSFIT_PARAM_VDW, HESSFIT_MODEL_FREE_K | HESSFIT_MODEL_FREE_X0, NULL));
    hessfit_objective *obj = rh_objective(s, model);
    const int n = hessfit_model_n_free(model);
    double *x = alloc_doubles((size_t)n);
    HF_CALL(hessfit_model_get_free(model, x));
    const char *label = mm3 ? "rh-enamide x2, MM3* form, all parts" : "rh-enamide x2, LJ + Coulomb, all parts";
    /* every 7th column: the geometry part re-minimises at each stencil point */
    expect(check_jacobian(obj, model, x, 1e-5, 7, label), 3e-6, label);
    if (platform != NULL) { /* the same Jacobian on Reference, and on this platform by the host route */
        hessfit_model_options ro = mo;
        ro.platform = "Reference";
        ro.precision = NULL;
        const long long nr = hessfit_objective_n_residuals(obj);
        double *ja = alloc_doubles((size_t)nr * n), *jb = alloc_doubles((size_t)nr * n), *r = alloc_doubles((size_t)nr);
        HF_CALL(hessfit_objective_jacobian(obj, x, NULL, r, ja));
        jacobian_like(s, &ro, model, x, nr, jb);
        compare_rows(ja, jb, nr, n, label, "J vs Reference");
        if (!mm3 && strcmp(platform, "CPU") != 0) { /* a GPU platform (CPU runs the Reference kernels):
                                                     HESSFIT_GPU_JACOBIAN = host, and a bad value refused */
            CHECK(setenv("HESSFIT_GPU_JACOBIAN", "host", 1) == 0, "setenv");
            jacobian_like(s, &mo, model, x, nr, ja);
            compare_rows(ja, jb, nr, n, label, "J on the host route vs Reference");
            CHECK(setenv("HESSFIT_GPU_JACOBIAN", "gpu", 1) == 0, "setenv");
            hessfit_model *bad = NULL;
            test_expect_error(hessfit_model_create(&s->ff, s->mols, s->typed_pair, PAIR, &mo, &bad),
                              HESSFIT_ERROR_UNSUPPORTED, "HESSFIT_GPU_JACOBIAN = 'gpu'", "use device (the default) or host",
                              "a bad HESSFIT_GPU_JACOBIAN");
            CHECK(unsetenv("HESSFIT_GPU_JACOBIAN") == 0, "unsetenv");
        }
        free(ja);
        free(jb);
        free(r);
    }
    free(x);
    hessfit_objective_destroy(obj);
    hessfit_model_destroy(model);
}

int main(int argc, char **argv)
{
    const char *name = test_platform_name(argc, argv);
    test_load_plugins();
    if (strcmp(name, "Reference") != 0) {
        test_require_platform(name);
        platform = name;
    }
    printf("test_jacobian on %s\n", platform ? platform : "Reference");
    test_ch3f_set ch3f;
    test_load_ch3f(&ch3f);
    test_ch3f(&ch3f);
    test_free_ch3f(&ch3f);
    rh_set rh;
    load_rh(&rh);
    test_rh(&rh, 0);
    test_rh(&rh, 1);
    free_rh(&rh);
    printf("test_jacobian: OK\n");
    return 0;
}
