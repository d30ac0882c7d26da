/*
 * test_objective: Hessian-space objectives of a fit model (fitting/include/hessfit_objective.h)
 * through the plugin's objective kernel.
 *
 *   - CH3F at q2mm's Seminario start in the q2mm-compatible frequency mode: q2mm's golden score and
 *     RMSD (tests/data/goldens/ch3f-benchmark-results, "seminario" section).
 *   - Gradients of every kind -- q2mm frequencies, overlap-paired frequencies, eigenmatrix, Hessian
 *     elements, and for the rh-enamide transition states the reaction coordinate kept and replaced
 *     -- against central differences of the loss in free-parameter space, on CH3F (a generic point:
 *     perturbed parameters and geometry) and on the nine rh-enamide structures together (mm3.fld
 *     typed through the .mmo, every used bond and angle k and r0/theta0 free).
 *   - sum r_i^2 = loss; the residual count; one kernel call per evaluation; pairing follows modes.
 *   - Timing (printed): rh-enamide objective alone and objective + gradient per evaluation.
 *   - Bad input: clear errors before any work.
 */
#define _POSIX_C_SOURCE 200809L
#include "hessfit_fitting.h"
#include "hessfit_forcefield.h"
#include "hessfit_model.h"
#include "hessfit_molecule.h"
#include "hessfit_objective.h"
#include "hessfit_typing.h"
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double *alloc_doubles(size_t n)
{
    double *p = calloc(n > 0 ? n : 1, sizeof(double));
    CHECK(p != NULL, "out of memory");
    return p;
}

static int compare_doubles(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, compare_doubles);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* A number after "key": in the section that starts at "section" of a JSON text. */
static double json_number(const char *text, const char *section, const char *key)
{
    const char *s = strstr(text, section);
    CHECK(s != NULL, "golden: no %s", section);
    const char *k = strstr(s, key);
    CHECK(k != NULL, "golden: no %s in %s", key, section);
    k = strchr(k + strlen(key), ':');
    CHECK(k != NULL, "golden: %s has no value", key);
    char *end;
    double v = strtod(k + 1, &end);
    CHECK(end != k + 1, "golden: %s is not a number", key);
    return v;
}

/* ---- finite differences in free-parameter space --------------------------------------------------- */

typedef struct {
    double max_rel;   /* max_i |fd_i - g_i| / max(|g_i|, floor) */
    double floor;     /* 1e-3 max_i |g_i| */
    double max_g;
    int worst;
    int n_reduced;    /* components whose step was reduced because the pairing changed */
} fd_stats;

/*
 * Central differences of the loss in free-parameter space against the analytic gradient at x0:
 * points = 2 (error O(h^2)) or 4 (O(h^4)), h_i = step max(|x_i|, 1). The loss is smooth only where
 * the frequency pairing does not change: when any stencil point pairs a target differently from
 * x0 (the overlap assignment switches at near-ties), the step is divided by 10 (at most twice) and
 * the component is counted in n_reduced; a component that still switches fails the check. The
 * free values are back at x0 afterwards.
 */
static fd_stats check_gradient(hessfit_objective *obj, const double *x0, int n, double step, int points, const char *label)
{
    const int nt = hessfit_objective_n_frequency_targets(obj);
    int *p0 = calloc((size_t)nt + 1, sizeof(int)), *p1 = calloc((size_t)nt + 1, sizeof(int));
    double *g = alloc_doubles((size_t)n), *x = alloc_doubles((size_t)n), loss, l[4];
    static const double at4[4] = {2.0, 1.0, -1.0, -2.0}, at2[2] = {1.0, -1.0};
    const double *at = points == 4 ? at4 : at2;
    fd_stats s = {0.0, 0.0, 0.0, -1, 0};
    CHECK(p0 != NULL && p1 != NULL, "out of memory");
    HF_CALL(hessfit_objective_evaluate(obj, x0, &loss, g, NULL));
    HF_CALL(hessfit_objective_pairing(obj, p0));
    for (int i = 0; i < n; i++)
        s.max_g = fmax(s.max_g, fabs(g[i]));
    s.floor = 1e-3 * s.max_g;
    CHECK(s.max_g > 0.0 && isfinite(s.max_g), "%s: gradient max %g", label, s.max_g);
    for (int i = 0; i < n; i++) {
        double h = step * fmax(fabs(x0[i]), 1.0), fd = 0.0;
        int stable = 0;
        for (int attempt = 0; attempt < 3 && !stable; attempt++, h *= 0.1) {
            stable = 1;
            for (int k = 0; k < points && stable; k++) {
                memcpy(x, x0, sizeof(double) * (size_t)n);
                x[i] = x0[i] + at[k] * h;
                HF_CALL(hessfit_objective_evaluate(obj, x, &l[k], NULL, NULL));
                HF_CALL(hessfit_objective_pairing(obj, p1));
                stable = memcmp(p0, p1, sizeof(int) * (size_t)nt) == 0;
            }
            if (stable)
                fd = points == 4 ? (8.0 * (l[1] - l[2]) - (l[0] - l[3])) / (12.0 * h) : (l[0] - l[1]) / (2.0 * h);
            else
                s.n_reduced += attempt == 0;
        }
        CHECK(stable, "%s: free %d: the pairing changes within 1e-2 of the step: not a generic point", label, i);
        const double rel = fabs(fd - g[i]) / fmax(fabs(g[i]), s.floor);
        if (rel > s.max_rel) {
            s.max_rel = rel;
            s.worst = i;
        }
    }
    HF_CALL(hessfit_objective_evaluate(obj, x0, &loss, NULL, NULL));
    printf("  %-40s loss %-14.10g max|dL/dx| %-9.4g FD vs analytic: max rel. error %.3g (free %d)", label, loss,
           s.max_g, s.max_rel, s.worst);
    if (s.n_reduced > 0)
        printf(", %d steps reduced (pairing switch)", s.n_reduced);
    printf("\n");
    free(p0);
    free(p1);
    free(g);
    free(x);
    return s;
}

/* sum r^2 = loss, for the residuals of one evaluation. */
static void check_residuals(hessfit_objective *obj, const double *x, long long expected, const char *label)
{
    const long long n = hessfit_objective_n_residuals(obj);
    CHECK(n == expected, "%s: %lld residuals, expected %lld", label, n, expected);
    double *r = alloc_doubles((size_t)n), loss, sum = 0.0;
    HF_CALL(hessfit_objective_evaluate(obj, x, &loss, NULL, r));
    for (long long i = 0; i < n; i++)
        sum += r[i] * r[i];
    CHECK_CLOSE(sum, loss, 1e-12, loss, "sum of squared residuals vs loss");
    free(r);
}

/* ---- CH3F -------------------------------------------------------------------------------------------- */

typedef test_ch3f_set ch3f_set;

static hessfit_objective_options options_of(int kind)
{
    hessfit_objective_options o = hessfit_objective_default_options();
    o.frequencies = HESSFIT_OBJ_FREQUENCIES_NONE;
    if (kind == 0)
        o.frequencies = HESSFIT_OBJ_FREQUENCIES_Q2MM;
    else if (kind == 1)
        o.frequencies = HESSFIT_OBJ_FREQUENCIES_OVERLAP;
    else if (kind == 2)
        o.eigenmatrix = 1;
    else
        o.hessian = 1;
    return o;
}

static const char *const kind_names[4] = {"q2mm frequencies", "overlap frequencies", "eigenmatrix", "Hessian elements"};

static void test_ch3f_golden(ch3f_set *s)
{
    size_t golden_size;
    char *golden = test_load_file(
        test_source_path("tests/data/goldens/ch3f-benchmark-results/ch3f_jax_harmonic_gpu_lbfgsb.json"), &golden_size);
    CHECK(golden_size > 0, "empty golden file");
    const double golden_score = json_number(golden, "\"seminario\"", "\"score\"");
    const double golden_rmsd = json_number(golden, "\"seminario\"", "\"rmsd\"");
    free(golden);

    hessfit_model *model;
    hessfit_objective *obj;
    hessfit_objective_options o = options_of(0);
    HF_CALL(hessfit_model_create(&s->ff.ff, &s->mol, &s->typed, 1, NULL, &model));
    HF_CALL(hessfit_objective_create(model, &s->mol, 1, &o, &obj));
    CHECK(hessfit_objective_n_frequency_targets(obj) == 9 && hessfit_objective_n_residuals(obj) == 9,
          "CH3F q2mm mode: %d targets, %lld residuals", hessfit_objective_n_frequency_targets(obj),
          hessfit_objective_n_residuals(obj));
    double loss, r[9], sum2 = 0.0;
    int modes[9];
    HF_CALL(hessfit_objective_evaluate(obj, NULL, &loss, NULL, r));
    HF_CALL(hessfit_objective_pairing(obj, modes));
    for (int k = 0; k < 9; k++) {
        double t, w;
        HF_CALL(hessfit_objective_frequency_target(obj, k, NULL, &t, &w));
        CHECK(w == 0.001 && t > 50.0, "target %d: %g cm^-1 weight %g", k, t, w);
        CHECK(modes[k] == 6 + k, "target %d paired with MM mode %d, expected %d (the 9 above 50 cm^-1 of 15)", k,
              modes[k], 6 + k);
        sum2 += (r[k] / w) * (r[k] / w);
    }
    const double rmsd = sqrt(sum2 / 9.0);
    printf("  CH3F q2mm mode at q2mm's Seminario start: score %.10f (golden %.10f, diff %.2g), RMSD %.5f cm^-1 "
           "(golden %.5f, diff %.2g)\n",
           loss, golden_score, loss - golden_score, rmsd, golden_rmsd, rmsd - golden_rmsd);
    char ours[32], theirs[32];
    snprintf(ours, sizeof ours, "%.6f", loss);
    snprintf(theirs, sizeof theirs, "%.6f", golden_score);
    CHECK(strcmp(ours, theirs) == 0 && strcmp(ours, "0.221445") == 0, "score %s vs q2mm %s", ours, theirs);
    snprintf(ours, sizeof ours, "%.2f", rmsd);
    snprintf(theirs, sizeof theirs, "%.2f", golden_rmsd);
    CHECK(strcmp(ours, theirs) == 0 && strcmp(ours, "156.86") == 0, "RMSD %s vs q2mm %s", ours, theirs);
    CHECK(fabs(loss - golden_score) <= 1e-5 * golden_score, "score %.10g vs golden %.10g", loss, golden_score);
    CHECK(hessfit_objective_n_kernel_calls(obj) == 2, "%llu kernel calls after create + one evaluation",
          hessfit_objective_n_kernel_calls(obj));
    hessfit_objective_destroy(obj);
    hessfit_model_destroy(model);
}

/* CH3F at a generic point: a copy of the molecule with one H moved (C3v broken, so the E modes are
 * not degenerate) as both the model's and the "QM" geometry, parameters moved off the start. */
static void test_ch3f_gradients(ch3f_set *s)
{
    const hessfit_molecule *moved = &s->moved;
    for (int kind = 0; kind < 4; kind++) {
        hessfit_model *model;
        hessfit_objective *obj;
        hessfit_objective_options o = options_of(kind);
        HF_CALL(hessfit_model_create(&s->ff.ff, moved, &s->typed, 1, NULL, &model));
        HF_CALL(hessfit_model_add_free_kind(model, HESSFIT_PARAM_BOND, HESSFIT_MODEL_FREE_K | HESSFIT_MODEL_FREE_X0, NULL));
        HF_CALL(hessfit_model_add_free_kind(model, HESSFIT_PARAM_ANGLE, HESSFIT_MODEL_FREE_K | HESSFIT_MODEL_FREE_X0, NULL));
        const int n = hessfit_model_n_free(model);
        CHECK(n == 8, "%d free", n);
        HF_CALL(hessfit_objective_create(model, moved, 1, &o, &obj));
        double x[8];
        HF_CALL(hessfit_model_get_free(model, x));
        for (int i = 0; i < n; i++) { /* k up 10 %, r0 +0.02 A, theta0 -1.5 deg */
            int p, v;
            HF_CALL(hessfit_model_free_parameter(model, i, &p, &v, NULL, NULL));
            x[i] += v == 0 ? 0.1 * x[i] : s->ff.params[p].kind == HESSFIT_PARAM_BOND ? 0.02 : -1.5;
        }
        char label[96];
        snprintf(label, sizeof label, "CH3F %s", kind_names[kind]);
        fd_stats st = check_gradient(obj, x, n, 1e-4, 4, label);
        CHECK(st.max_rel <= 1e-6, "%s: gradient error %.3g (free %d)", label, st.max_rel, st.worst);
        const long long expected[4] = {9, 9, 15 * 16 / 2, 15 * 16 / 2};
        check_residuals(obj, x, expected[kind], label);
        hessfit_objective_destroy(obj);
        hessfit_model_destroy(model);
    }
}

/* ---- rh-enamide -------------------------------------------------------------------------------------- */



#define RH_MOLS TEST_RH_MOLECULES
static const char *const rh_jaguar[RH_MOLS] = {
    "1ZDMPfromJCTCSI_loner1", "2DMPEConformation1fromJCTCSI_isomer1", "3DMPEConformation2fromJCTCSI_isomer2",
    "4RR-Me-DuPHOSpro-RfromJCTCSI_isomer3", "5RR-Me-DuPHOSpro-SfromJCTCSI_isomer4",
    "6RR-Me-BPEpro-RConformation1fromJCTCSI_isomer5", "7RR-Me-BPEpro-RConformation2fromJCTCSI_isomer6",
    "8RR-Me-BPEpro-SConformation1fromJCTCSI_isomer7", "9RR-Me-BPEpro-SConformation2fromJCTCSI_isomer8"};

typedef struct {
    hessfit_forcefield ff;
    hessfit_molecule_list mmo;
    hessfit_typed_molecule typed[RH_MOLS];
    hessfit_molecule qm[RH_MOLS];
} rh_set;

static void load_rh(rh_set *s)
{
    test_type_rh_enamide(&s->ff, &s->mmo, s->typed);
    for (int m = 0; m < RH_MOLS; m++) {
        char rel[256];
        snprintf(rel, sizeof rel, "examples/data/rh-enamide/jaguar/%s.01.in.gz", rh_jaguar[m]);
        HF_CALL(hessfit_jaguar_in_read(test_source_path(rel), &s->qm[m]));
        CHECK(s->qm[m].hessian != NULL && s->qm[m].n_atoms == s->mmo.items[m].n_atoms, "%s", rel);
    }
}

static void free_rh(rh_set *s)
{
    for (int m = 0; m < RH_MOLS; m++) {
        hessfit_typed_molecule_free(&s->typed[m]);
        hessfit_molecule_free(&s->qm[m]);
    }
    hessfit_molecule_list_free(&s->mmo);
    hessfit_forcefield_free(&s->ff);
}

static hessfit_model *rh_model(rh_set *s)
{
    hessfit_model *model;
    HF_CALL(hessfit_model_create(&s->ff, s->mmo.items, s->typed, RH_MOLS, NULL, &model));
    HF_CALL(hessfit_model_add_free_kind(model, HESSFIT_PARAM_BOND, HESSFIT_MODEL_FREE_K | HESSFIT_MODEL_FREE_X0, NULL));
    HF_CALL(hessfit_model_add_free_kind(model, HESSFIT_PARAM_ANGLE, HESSFIT_MODEL_FREE_K | HESSFIT_MODEL_FREE_X0, NULL));
    CHECK(hessfit_model_n_free(model) == 146, "%d free values", hessfit_model_n_free(model));
    return model;
}

/* Residuals the kernel must report for molecule sizes n_atoms[] and one kind. */
static long long rh_expected_residuals(hessfit_objective *obj, int kind)
{
    static const int rh_atoms[RH_MOLS] = {36, 38, 38, 62, 62, 58, 58, 58, 58};
    long long count = 0;
    for (int m = 0; m < RH_MOLS; m++) {
        const long long d = 3LL * rh_atoms[m];
        count += kind == 1 ? d - 6 : kind >= 2 ? d * (d + 1) / 2 : 0;
    }
    return kind == 0 ? hessfit_objective_n_frequency_targets(obj) : count;
}

/*
 * Every kind and the transition-state variants on the nine structures together, at the mm3.fld
 * values (a generic point). The eigenmatrix and the Hessian elements are polynomials of degree 4
 * in each harmonic value (H is linear in k and in r0/theta0, the loss quadratic in H), so their
 * 4-point stencil has no truncation error and takes a large step (1e-2 relative: less round-off);
 * frequencies take 1e-5.
 */
static void test_rh(rh_set *s)
{
    typedef struct {
        int kind;
        hessfit_objective_ts ts;
        const char *label;
    } rh_case;
    static const rh_case cases[] = {
        {0, HESSFIT_OBJ_TS_SKIP, "q2mm frequencies"},           {1, HESSFIT_OBJ_TS_SKIP, "overlap frequencies"},
        {2, HESSFIT_OBJ_TS_SKIP, "eigenmatrix"},                {3, HESSFIT_OBJ_TS_SKIP, "Hessian elements"},
        {0, HESSFIT_OBJ_TS_REPLACE, "q2mm frequencies, TS replace"},
        {1, HESSFIT_OBJ_TS_KEEP, "overlap frequencies, TS keep"}, {1, HESSFIT_OBJ_TS_REPLACE, "overlap frequencies, TS replace"},
        {2, HESSFIT_OBJ_TS_KEEP, "eigenmatrix, TS keep"},       {2, HESSFIT_OBJ_TS_REPLACE, "eigenmatrix, TS replace"}};
    const int n_cases = (int)(sizeof cases / sizeof cases[0]);
    hessfit_model *model = rh_model(s);
    const int n = hessfit_model_n_free(model);
    double *x0 = alloc_doubles((size_t)n), loss[9];
    int n_targets[9];
    HF_CALL(hessfit_model_get_free(model, x0));
    const double rc_replaced = hessfit_eigenvalue_to_cm1(1.0, hessfit_frequency_factor_hartree_bohr2_amu());
    for (int c = 0; c < n_cases; c++) {
        hessfit_objective_options opt[RH_MOLS];
        hessfit_objective *obj;
        for (int m = 0; m < RH_MOLS; m++) {
            opt[m] = options_of(cases[c].kind);
            opt[m].ts = cases[c].ts;
        }
        HF_CALL(hessfit_model_set_free(model, x0));
        HF_CALL(hessfit_objective_create(model, s->qm, RH_MOLS, opt, &obj));
        n_targets[c] = hessfit_objective_n_frequency_targets(obj);
        char label[96];
        snprintf(label, sizeof label, "rh-enamide %s", cases[c].label);
        const fd_stats st = check_gradient(obj, x0, n, cases[c].kind >= 2 ? 1e-2 : 1e-5, 4, label);
        CHECK(st.max_rel <= 1e-6, "%s: gradient error %.3g (free %d)", label, st.max_rel, st.worst);
        check_residuals(obj, x0, rh_expected_residuals(obj, cases[c].kind), label);
        HF_CALL(hessfit_objective_evaluate(obj, x0, &loss[c], NULL, NULL));
        if (cases[c].kind <= 1) { /* the reaction coordinate's target in each molecule */
            int *modes = calloc((size_t)n_targets[c], sizeof(int)), rc_seen = 0, rc_paired = 0;
            CHECK(modes != NULL, "out of memory");
            HF_CALL(hessfit_objective_pairing(obj, modes));
            for (int k = 0; k < n_targets[c]; k++) {
                double t, w;
                HF_CALL(hessfit_objective_frequency_target(obj, k, NULL, &t, &w));
                if (cases[c].ts == HESSFIT_OBJ_TS_REPLACE && t == rc_replaced) {
                    rc_seen++;
                    rc_paired += modes[k] >= 0;
                }
                if (cases[c].kind == 1 && t < 0.0) { /* imaginary QM targets: the reaction coordinates */
                    rc_seen++;
                    CHECK((cases[c].ts == HESSFIT_OBJ_TS_SKIP) == (w == 0.0), "%s: imaginary target weight %g", label, w);
                }
            }
            if (cases[c].ts == HESSFIT_OBJ_TS_REPLACE || cases[c].kind == 1)
                CHECK(rc_seen == (cases[c].ts == HESSFIT_OBJ_TS_REPLACE || cases[c].kind == 1 ? RH_MOLS : 0),
                      "%s: %d reaction-coordinate targets, expected one per molecule", label, rc_seen);
            if (cases[c].kind == 0 && cases[c].ts == HESSFIT_OBJ_TS_REPLACE) {
                /* q2mm's position pairing from the bottom: fewer MM modes above 50 cm^-1 than QM ones
                 * at this start, so the highest target -- the replaced one -- stays unpaired */
                printf("    q2mm mode, TS replace: %d targets (%d without), replaced targets %.4f cm^-1 paired in %d "
                       "of 9 molecules\n",
                       n_targets[c], n_targets[0], rc_replaced, rc_paired);
                CHECK(n_targets[c] == n_targets[0] + RH_MOLS, "%d vs %d targets", n_targets[c], n_targets[0]);
            }
            free(modes);
        }
        CHECK(hessfit_objective_n_kernel_calls(obj) >= 2, "kernel calls");
        hessfit_objective_destroy(obj);
    }
    CHECK(loss[5] != loss[1] && loss[6] != loss[1] && loss[7] != loss[2] && loss[8] != loss[2],
          "transition-state variants must change the loss");
    free(x0);
    hessfit_model_destroy(model);
}

/* Per-evaluation wall time (median of repeats) on the nine rh-enamide structures: the Hessian
 * blocks alone (one kernel call, for scale), and per kind the objective alone and the objective
 * plus its gradient over all 146 free values (each with the push of x). Printed, not asserted. */
static void time_rh(rh_set *s)
{
    enum { REPEATS = 15 };
    hessfit_model *model = rh_model(s);
    const int n = hessfit_model_n_free(model);
    double *x = alloc_doubles((size_t)n), *g = alloc_doubles((size_t)n), t[REPEATS], loss;
    HF_CALL(hessfit_model_get_free(model, x));
    const long long size = hessfit_model_hessian_size(model);
    double *blocks = alloc_doubles((size_t)size);
    for (int r = 0; r < REPEATS; r++) {
        const double t0 = test_now_s();
        HF_OK(hessfit_force_get_hessian_blocks(hessfit_model_force(model), hessfit_model_context(model), blocks, size));
        t[r] = test_now_s() - t0;
    }
    printf("  timing (median of %d): Hessian blocks of all 9 molecules %.2f ms\n", REPEATS, 1e3 * median(t, REPEATS));
    for (int kind = 0; kind < 3; kind++) {
        hessfit_objective_options opt[RH_MOLS];
        hessfit_objective *obj;
        for (int m = 0; m < RH_MOLS; m++)
            opt[m] = options_of(kind);
        HF_CALL(hessfit_objective_create(model, s->qm, RH_MOLS, opt, &obj));
        double alone, both;
        for (int r = 0; r < REPEATS; r++) {
            const double t0 = test_now_s();
            HF_CALL(hessfit_objective_evaluate(obj, x, &loss, NULL, NULL));
            t[r] = test_now_s() - t0;
        }
        alone = median(t, REPEATS);
        for (int r = 0; r < REPEATS; r++) {
            const double t0 = test_now_s();
            HF_CALL(hessfit_objective_evaluate(obj, x, &loss, g, NULL));
            t[r] = test_now_s() - t0;
        }
        both = median(t, REPEATS);
        printf("  timing %-22s objective alone %7.2f ms, objective + gradient %7.2f ms (ratio %.2f)\n",
               kind_names[kind], 1e3 * alone, 1e3 * both, both / alone);
        CHECK(hessfit_objective_n_kernel_calls(obj) == 1 + 2 * REPEATS, "%llu kernel calls for %d evaluations",
              hessfit_objective_n_kernel_calls(obj), 2 * REPEATS);
        hessfit_objective_destroy(obj);
    }
    free(blocks);
    free(x);
    free(g);
    hessfit_model_destroy(model);
}

/* Projected vibrational modes in ascending order (the kernel's mode list with projection): rows of
 * vib (3n - 6 of 3n), from a Hessian in Hartree/Bohr^2 at the molecule's geometry. Returns the count. */
static int vibrations(const hessfit_molecule *mol, const double *hessian, const double *masses, double *vib)
{
    const int n = mol->n_atoms, dim = 3 * n;
    double *freq = alloc_doubles((size_t)dim), *modes = alloc_doubles((size_t)dim * dim), *basis = alloc_doubles(6 * (size_t)dim);
    int n_ext, count = 0;
    HF_CALL(hessfit_vib_analyse(hessian, masses, mol->coords, n, hessfit_frequency_factor_hartree_bohr2_amu(),
                           HESSFIT_VIB_PROJECT_EXTERNAL, freq, modes, &n_ext));
    HF_CALL(hessfit_vib_external_basis(masses, mol->coords, n, basis, &n_ext));
    for (int j = 0; j < dim; j++) {
        double weight = 0.0;
        for (int r = 0; r < n_ext; r++) {
            double dot = 0.0;
            for (int i = 0; i < dim; i++)
                dot += basis[r * dim + i] * modes[j * dim + i];
            weight += dot * dot;
        }
        if (weight < 0.5)
            memcpy(vib + (size_t)count++ * dim, modes + (size_t)j * dim, sizeof(double) * (size_t)dim);
    }
    CHECK(count == dim - n_ext, "%d vibrations of %d", count, dim);
    free(freq);
    free(modes);
    free(basis);
    return count;
}

/*
 * The overlap pairing follows the modes: at q2mm's start the MM modes come in the QM order, so
 * target k pairs with MM vibration k; with the C-F force constant tripled the C-F stretch moves
 * above the E rocking pair, and its target (QM vibration 0) follows it. At both points the
 * kernel's assignment reaches the largest total overlap of all 9! pairings (brute force here, on
 * an independent analysis of the model's Hessian).
 */
static void test_ch3f_pairing(ch3f_set *s)
{
    hessfit_model *model;
    hessfit_objective *obj;
    hessfit_objective_options o = options_of(1);
    double masses[5], qm_vib[9 * 15], mm_vib[9 * 15], h[225], score[81], loss;
    HF_CALL(hessfit_element_masses(s->mol.atomic_numbers, 5, HESSFIT_MASS_MONOISOTOPIC, masses));
    CHECK(vibrations(&s->mol, s->mol.hessian, masses, qm_vib) == 9, "CH3F QM vibrations");
    HF_CALL(hessfit_model_create(&s->ff.ff, &s->mol, &s->typed, 1, NULL, &model));
    HF_CALL(hessfit_model_add_free_kind(model, HESSFIT_PARAM_BOND, HESSFIT_MODEL_FREE_K, NULL));
    HF_CALL(hessfit_objective_create(model, &s->mol, 1, &o, &obj));
    CHECK(hessfit_objective_n_frequency_targets(obj) == 9, "%d targets", hessfit_objective_n_frequency_targets(obj));
    double x[2];
    int cf = -1;
    HF_CALL(hessfit_model_get_free(model, x));
    for (int i = 0; i < 2; i++) {
        int p;
        HF_CALL(hessfit_model_free_parameter(model, i, &p, NULL, NULL, NULL));
        if (!strcmp(s->ff.params[p].types[0], "F") || !strcmp(s->ff.params[p].types[1], "F"))
            cf = i;
    }
    CHECK(cf >= 0, "no C-F bond value");
    for (int pass = 0; pass < 2; pass++) {
        int modes[9];
        if (pass == 1)
            x[cf] *= 3.0;
        HF_CALL(hessfit_objective_evaluate(obj, x, &loss, NULL, NULL));
        HF_CALL(hessfit_objective_pairing(obj, modes));
        HF_CALL(hessfit_model_hessian(model, 0, h));
        CHECK(vibrations(&s->mol, h, masses, mm_vib) == 9, "CH3F MM vibrations");
        for (int k = 0; k < 9; k++)
            for (int j = 0; j < 9; j++) {
                double dot = 0.0;
                for (int i = 0; i < 15; i++)
                    dot += qm_vib[k * 15 + i] * mm_vib[j * 15 + i];
                score[k * 9 + j] = dot * dot;
            }
        double kernel = 0.0;
        int best_cf = 0;
        for (int k = 0; k < 9; k++) {
            CHECK(modes[k] >= 0 && modes[k] < 9, "target %d paired with %d", k, modes[k]);
            kernel += score[k * 9 + modes[k]];
        }
        for (int j = 1; j < 9; j++)
            if (score[j] > score[best_cf])
                best_cf = j;
        const double best = test_best_assignment(score, 9);
        printf("  CH3F overlap pairing (%s): targets -> MM modes", pass == 0 ? "q2mm's start" : "C-F k x 3");
        for (int k = 0; k < 9; k++)
            printf(" %d", modes[k]);
        printf("; total overlap %.12f, best of 9! %.12f; C-F target overlap %.4f with mode %d\n", kernel, best,
               score[modes[0]], modes[0]);
        CHECK(fabs(kernel - best) <= 1e-9, "assignment total %.15g, brute force %.15g", kernel, best);
        CHECK(modes[0] == best_cf && score[modes[0]] > 0.5, "C-F target paired with %d, largest overlap with %d",
              modes[0], best_cf);
        if (pass == 0) { /* the A1 modes (0, 3, 6) in place, the E pairs within their pair */
            for (int k = 0; k < 9; k++)
                CHECK(k % 3 == 0 ? modes[k] == k : (modes[k] - 1) / 3 == (k - 1) / 3 && modes[k] % 3 != 0,
                      "start: target %d paired with %d", k, modes[k]);
        } else {
            CHECK(modes[0] >= 2, "C-F k x 3: the C-F target stays with mode %d (the stretch must have moved up)",
                  modes[0]);
        }
    }
    hessfit_objective_destroy(obj);
    hessfit_model_destroy(model);
}

/* Input the objective must refuse (before any kernel work), with a message naming the problem. */
static void test_bad_input(ch3f_set *s, rh_set *rh)
{
    hessfit_model *model;
    hessfit_objective *obj = (hessfit_objective *)&obj;
    hessfit_objective_options o = hessfit_objective_default_options();
    hessfit_molecule bad;
    HF_CALL(hessfit_model_create(&s->ff.ff, &s->mol, &s->typed, 1, NULL, &model));
    test_expect_error(hessfit_objective_create(model, &s->mol, 2, NULL, &obj), HESSFIT_ERROR_COUNT, "2 QM molecules", NULL,
                      "molecule count");
    CHECK(obj == NULL, "a failed create leaves NULL");
    test_expect_error(hessfit_objective_create(model, NULL, 1, NULL, &obj), HESSFIT_ERROR_NULL_ARGUMENT, "qm is NULL", NULL,
                      "no QM data");
    test_expect_error(hessfit_objective_create(NULL, &s->mol, 1, NULL, &obj), HESSFIT_ERROR_NULL_ARGUMENT, "model is NULL", NULL,
                      "no model");
    HF_CALL(hessfit_molecule_copy(&s->mol, &bad));
    free(bad.hessian);
    bad.hessian = NULL;
    test_expect_error(hessfit_objective_create(model, &bad, 1, NULL, &obj), HESSFIT_ERROR_INVALID_ARGUMENT, "molecule 1",
                      "has no Hessian", "QM data without a Hessian");
    hessfit_molecule_free(&bad);
    test_expect_error(hessfit_objective_create(model, &rh->qm[0], 1, NULL, &obj), HESSFIT_ERROR_COUNT, "36 atoms",
                      "molecule has 5", "wrong atom count");
    HF_CALL(hessfit_molecule_copy(&s->mol, &bad));
    bad.coords[3 * 2 + 1] += 0.01;
    test_expect_error(hessfit_objective_create(model, &bad, 1, NULL, &obj), HESSFIT_ERROR_INVALID_ARGUMENT, "atom 3",
                      "0.01 Angstrom from the model", "QM geometry off the model's");
    bad.coords[3 * 2 + 1] -= 0.01;
    for (int a = 0; a < 5; a++)
        if (bad.atomic_numbers[a] == 1) {
            bad.atomic_numbers[a] = 17;
            break;
        }
    test_expect_error(hessfit_objective_create(model, &bad, 1, NULL, &obj), HESSFIT_ERROR_INVALID_ARGUMENT, "element Cl", "mass",
                      "wrong element");
    hessfit_molecule_free(&bad);
    o.frequency_weight = -1.0;
    test_expect_error(hessfit_objective_create(model, &s->mol, 1, &o, &obj), HESSFIT_ERROR_INVALID_ARGUMENT,
                      "frequency_weight is -1", NULL, "negative weight");
    o = hessfit_objective_default_options();
    o.eig_o = NAN;
    test_expect_error(hessfit_objective_create(model, &s->mol, 1, &o, &obj), HESSFIT_ERROR_INVALID_ARGUMENT, "eig_o is nan", NULL,
                      "NaN weight");
    o = hessfit_objective_default_options();
    o.frequencies = (hessfit_objective_frequencies)7;
    test_expect_error(hessfit_objective_create(model, &s->mol, 1, &o, &obj), HESSFIT_ERROR_INVALID_ARGUMENT,
                      "unknown frequency mode 7", NULL, "unknown frequency mode");
    o = hessfit_objective_default_options();
    o.ts = (hessfit_objective_ts)9;
    test_expect_error(hessfit_objective_create(model, &s->mol, 1, &o, &obj), HESSFIT_ERROR_INVALID_ARGUMENT,
                      "unknown transition-state mode 9", NULL, "unknown TS mode");
    o = hessfit_objective_default_options();
    o.ts_replace_eigenvalue = 0.0;
    test_expect_error(hessfit_objective_create(model, &s->mol, 1, &o, &obj), HESSFIT_ERROR_INVALID_ARGUMENT,
                      "ts_replace_eigenvalue is 0", NULL, "zero replacement eigenvalue");
    o = hessfit_objective_default_options();
    o.frequencies = HESSFIT_OBJ_FREQUENCIES_Q2MM;
    o.frequency_threshold = 1e5;
    test_expect_error(hessfit_objective_create(model, &s->mol, 1, &o, &obj), HESSFIT_ERROR_INVALID_ARGUMENT,
                      "no QM frequency above the threshold", NULL, "threshold above every frequency");
    o = hessfit_objective_default_options();
    o.frequency_threshold = NAN;
    test_expect_error(hessfit_objective_create(model, &s->mol, 1, &o, &obj), HESSFIT_ERROR_INVALID_ARGUMENT,
                      "threshold is not finite", NULL, "NaN threshold");
    CHECK(obj == NULL, "a failed create leaves NULL");

    /* a working objective, then bad calls on it */
    double loss, r;
    HF_CALL(hessfit_objective_create(model, &s->mol, 1, NULL, &obj));
    test_expect_error(hessfit_objective_evaluate(obj, NULL, NULL, NULL, NULL), HESSFIT_ERROR_NULL_ARGUMENT, "loss is NULL", NULL,
                      "NULL loss");
    HF_CALL(hessfit_model_add_free_kind(model, HESSFIT_PARAM_BOND, HESSFIT_MODEL_FREE_K, NULL));
    double xs[2];
    HF_CALL(hessfit_model_get_free(model, xs));
    xs[1] = NAN;
    test_expect_error(hessfit_objective_evaluate(obj, xs, &loss, NULL, NULL), HESSFIT_ERROR_NONFINITE, NULL, NULL,
                      "NaN free value");
    test_expect_error(hessfit_objective_frequency_target(obj, 9, NULL, &r, NULL), HESSFIT_ERROR_INVALID_ARGUMENT, "target 9",
                      NULL, "target index out of range");
    test_expect_error(hessfit_objective_pairing(obj, NULL), HESSFIT_ERROR_NULL_ARGUMENT, "modes is NULL", NULL,
                      "NULL pairing output");
    hessfit_objective_destroy(obj);
    hessfit_objective_destroy(NULL);
    CHECK(hessfit_objective_n_residuals(NULL) == 0 && hessfit_objective_n_kernel_calls(NULL) == 0, "NULL queries");
    hessfit_model_destroy(model);
}

int main(void)
{
    test_load_plugins();
    ch3f_set ch3f;
    printf("CH3F\n");
    test_load_ch3f(&ch3f);
    test_ch3f_golden(&ch3f);
    test_ch3f_gradients(&ch3f);
    test_ch3f_pairing(&ch3f);
    rh_set rh;
    printf("rh-enamide\n");
    load_rh(&rh);
    time_rh(&rh);
    test_rh(&rh);
    printf("bad input\n");
    test_bad_input(&ch3f, &rh);
    free_rh(&rh);
    test_free_ch3f(&ch3f);
    printf("test_objective: all checks passed\n");
    return 0;
}
