/*
 * test_objective_precision (per GPU platform, argv[1]): the device Hessian-space objective
 * (platforms/common, CommonHessianObjective) in the platform's three precision modes against the
 * Reference platform, on the rh-enamide training set (nine structures, mm3.fld through the .mmo,
 * QM Hessians from the Jaguar inputs) with overlap-paired, projected frequencies -- the default
 * objective of the fit model -- and every bond and angle k and r0/theta0 free:
 *
 *   double precision: loss, gradient (all free values), residuals and pairing against Reference,
 *                     relative to 1e-10 (of the largest Reference entry for vectors);
 *   mixed, single:    the largest frequency error against the platform's double precision over
 *                     all real modes above 50 cm^-1 (each MM mode's frequency recovered from the
 *                     residual of the target paired with it, nu = t - r / w, so a swap of two
 *                     nearly degenerate modes between precisions does not count as an error),
 *                     asserted below measured bounds (the issue asks mixed <= 0.1 cm^-1).
 *
 * Prints the time per evaluation (objective + gradient, one kernel call) of every run. The
 * Reference platform has no precision modes: run with it, the test is skipped (77), as it is on a
 * CUDA build without a device.
 */
#define _POSIX_C_SOURCE 200809L
#include "hessfit_model.h"
#include "hessfit_objective.h"
#include "test_util.h"

#include <glob.h>
#include <string.h>

#define RH_MOLS TEST_RH_MOLECULES
#define DOUBLE_TOL 1e-10
#define MIN_FREQUENCY 50.0     /* cm^-1: the modes compared */
#define MIXED_BOUND_CM1 0.01   /* measured 0.0011 cm^-1 on PoCL; the issue asks <= 0.1 */
#define SINGLE_BOUND_CM1 2.0   /* measured 0.53 cm^-1 on PoCL (float eigensolver, lowest modes) */
#define REPEATS 2

typedef struct {
    hessfit_forcefield ff;
    hessfit_molecule_list mmo;
    hessfit_typed_molecule typed[RH_MOLS];
    hessfit_molecule qm[RH_MOLS];
} training_set;

typedef struct {
    double loss, seconds;
    double *grad, *residuals, *freq; /* freq: per frequency target's molecule, by MM mode (NAN: none) */
    int *pairing, n_free, n_freq;
    long long n_res;
} run_result;

static double *alloc_doubles(long long n) {
    double *p = calloc((size_t) (n > 0 ? n : 1), sizeof(double));
    CHECK(p != NULL, "out of memory");
    return p;
}

/* The QM data: the Jaguar inputs sorted by name are the .mmo's structures in order (checked by atom count). */
static void load_training_set(training_set *t) {
    test_type_rh_enamide(&t->ff, &t->mmo, t->typed);
    glob_t g;
    CHECK(glob(test_source_path("examples/data/rh-enamide/jaguar/*.01.in.gz"), 0, NULL, &g) == 0 && g.gl_pathc == RH_MOLS,
          "expected %d Jaguar inputs", RH_MOLS);
    for (int m = 0; m < RH_MOLS; m++) {
        HF_CALL(hessfit_jaguar_in_read(g.gl_pathv[m], &t->qm[m]));
        CHECK(t->qm[m].hessian != NULL && t->qm[m].n_atoms == t->mmo.items[m].n_atoms, "%s: %d atoms, the .mmo has %d",
              g.gl_pathv[m], t->qm[m].n_atoms, t->mmo.items[m].n_atoms);
    }
    globfree(&g);
}

static void free_training_set(training_set *t) {
    for (int m = 0; m < RH_MOLS; m++) {
        hessfit_typed_molecule_free(&t->typed[m]);
        hessfit_molecule_free(&t->qm[m]);
    }
    hessfit_molecule_list_free(&t->mmo);
    hessfit_forcefield_free(&t->ff);
}

/* Max 3n over the molecules: the stride of run_result.freq. */
static int max_dim(const training_set *t) {
    int d = 0;
    for (int m = 0; m < RH_MOLS; m++)
        d = d > 3 * t->mmo.items[m].n_atoms ? d : 3 * t->mmo.items[m].n_atoms;
    return d;
}

/* The overlap-paired frequency objective on one platform and precision (NULL: the platform's
 * default), evaluated REPEATS times at the model's start with the gradient and the residuals. */
static void run(const training_set *t, const char *platform, const char *precision, run_result *r) {
    hessfit_model_options opt = hessfit_model_default_options();
    opt.platform = platform;
    opt.precision = precision;
    hessfit_model *model;
    HF_CALL(hessfit_model_create(&t->ff, t->mmo.items, t->typed, RH_MOLS, &opt, &model));
    HF_CALL(hessfit_model_add_free_kind(model, HESSFIT_PARAM_BOND, HESSFIT_MODEL_FREE_K | HESSFIT_MODEL_FREE_X0, NULL));
    HF_CALL(hessfit_model_add_free_kind(model, HESSFIT_PARAM_ANGLE, HESSFIT_MODEL_FREE_K | HESSFIT_MODEL_FREE_X0, NULL));
    hessfit_objective_options o = hessfit_objective_default_options();
    o.frequencies = HESSFIT_OBJ_FREQUENCIES_OVERLAP;
    hessfit_objective_options opts[RH_MOLS];
    for (int m = 0; m < RH_MOLS; m++)
        opts[m] = o;
    hessfit_objective *obj;
    HF_CALL(hessfit_objective_create(model, t->qm, RH_MOLS, opts, &obj)); /* compiles the kernels, one evaluation */
    r->n_free = hessfit_model_n_free(model);
    r->n_res = hessfit_objective_n_residuals(obj);
    r->n_freq = hessfit_objective_n_frequency_targets(obj);
    CHECK(r->n_res == r->n_freq && r->n_freq > 0, "%lld residuals, %d frequency targets", r->n_res, r->n_freq);
    r->grad = alloc_doubles(r->n_free);
    r->residuals = alloc_doubles(r->n_res);
    r->pairing = calloc((size_t) r->n_freq, sizeof(int));
    CHECK(r->pairing != NULL, "out of memory");
    double *x = alloc_doubles(r->n_free);
    HF_CALL(hessfit_model_get_free(model, x));
    const double start = test_now_s();
    for (int k = 0; k < REPEATS; k++)
        HF_CALL(hessfit_objective_evaluate(obj, x, &r->loss, r->grad, r->residuals));
    r->seconds = (test_now_s() - start) / REPEATS;
    HF_CALL(hessfit_objective_pairing(obj, r->pairing));
    /* every MM mode's frequency, from the residual of the target paired with it */
    const int stride = max_dim(t);
    r->freq = alloc_doubles((long long) RH_MOLS * stride);
    for (long long i = 0; i < (long long) RH_MOLS * stride; i++)
        r->freq[i] = NAN;
    for (int k = 0; k < r->n_freq; k++) {
        int mol;
        double target, weight;
        HF_CALL(hessfit_objective_frequency_target(obj, k, &mol, &target, &weight));
        CHECK(mol >= 0 && mol < RH_MOLS && r->pairing[k] < stride, "target %d: molecule %d, mode %d", k, mol,
              r->pairing[k]);
        if (r->pairing[k] >= 0 && weight > 0.0)
            r->freq[(long long) mol * stride + r->pairing[k]] = target - r->residuals[k] / weight;
    }
    free(x);
    hessfit_objective_destroy(obj);
    hessfit_model_destroy(model);
}

static void free_run(run_result *r) {
    free(r->grad);
    free(r->residuals);
    free(r->freq);
    free(r->pairing);
}

/* max |a - b| / max |b| */
static double rel_diff(const double *a, const double *b, long long n) {
    return test_max_abs_diff(a, b, (size_t) n) / fmax(test_max_abs(b, (size_t) n), 1e-300);
}

/* The largest |nu_a - nu_ref| (cm^-1) over the modes both runs know with nu_ref > MIN_FREQUENCY;
 * *count: how many modes. */
static double frequency_error(const training_set *t, const run_result *a, const run_result *ref, int *count,
                              double *at_frequency) {
    const long long n = (long long) RH_MOLS * max_dim(t);
    double worst = 0.0;
    *count = 0;
    *at_frequency = 0.0;
    for (long long i = 0; i < n; i++)
        if (ref->freq[i] > MIN_FREQUENCY && !isnan(a->freq[i])) {
            const double e = fabs(a->freq[i] - ref->freq[i]);
            (*count)++;
            if (e > worst) {
                worst = e;
                *at_frequency = ref->freq[i];
            }
        }
    return worst;
}

int main(int argc, char **argv) {
    const char *platform = test_platform_name(argc, argv);
    if (strcmp(platform, "Reference") == 0) {
        printf("the Reference platform has no precision modes: skipped\n");
        return TEST_SKIPPED;
    }
    training_set t;
    load_training_set(&t);
    run_result ref, runs[3];
    static const char *const precisions[3] = {"double", "mixed", "single"};
    run(&t, "Reference", NULL, &ref);
    printf("rh-enamide, 9 molecules, overlap-paired frequencies: %d targets, %d free values\n", ref.n_freq, ref.n_free);
    printf("  Reference          loss %.12g, %.3f s per evaluation (objective + gradient)\n", ref.loss, ref.seconds);
    for (int p = 0; p < 3; p++) {
        run(&t, platform, precisions[p], &runs[p]);
        CHECK(runs[p].n_res == ref.n_res && runs[p].n_free == ref.n_free, "%s: sizes differ", precisions[p]);
        printf("  %s %-6s     loss %.12g, %.3f s per evaluation (objective + gradient)\n", platform, precisions[p],
               runs[p].loss, runs[p].seconds);
    }

    /* double precision against Reference */
    const run_result *d = &runs[0];
    const double loss_err = fabs(d->loss - ref.loss) / ref.loss, grad_err = rel_diff(d->grad, ref.grad, ref.n_free);
    const double res_err = rel_diff(d->residuals, ref.residuals, ref.n_res);
    int same = 0;
    for (int k = 0; k < ref.n_freq; k++)
        same += d->pairing[k] == ref.pairing[k];
    printf("  double vs Reference: loss %.3g, gradient %.3g, residuals %.3g (relative); %d of %d targets paired alike\n",
           loss_err, grad_err, res_err, same, ref.n_freq);
    CHECK(loss_err <= DOUBLE_TOL, "double precision loss differs by %.3g", loss_err);
    CHECK(grad_err <= DOUBLE_TOL, "double precision gradient differs by %.3g", grad_err);
    CHECK(res_err <= DOUBLE_TOL, "double precision residuals differ by %.3g", res_err);
    CHECK(same == ref.n_freq, "double precision pairs %d of %d targets as Reference does", same, ref.n_freq);
    int n_ref_modes;
    double at;
    CHECK(frequency_error(&t, d, &ref, &n_ref_modes, &at) <= 1e-8, "double precision frequencies differ from Reference");

    /* mixed and single against double */
    static const double bound[3] = {0.0, MIXED_BOUND_CM1, SINGLE_BOUND_CM1};
    for (int p = 1; p < 3; p++) {
        int count;
        const double err = frequency_error(&t, &runs[p], d, &count, &at);
        printf("  %-6s vs double: largest frequency error %.4g cm^-1 (at %.1f cm^-1) over %d real modes above %.0f "
               "cm^-1; loss %.3g relative\n",
               precisions[p], err, at, count, MIN_FREQUENCY, fabs(runs[p].loss - d->loss) / d->loss);
        CHECK(count == n_ref_modes && count > 1000, "%s: %d modes compared, double has %d", precisions[p], count,
              n_ref_modes);
        CHECK(err <= bound[p], "%s precision: frequency error %.4g cm^-1 > %g", precisions[p], err, bound[p]);
    }

    free_run(&ref);
    for (int p = 0; p < 3; p++)
        free_run(&runs[p]);
    free_training_set(&t);
    printf("test_objective_precision: all checks passed\n");
    return 0;
}
