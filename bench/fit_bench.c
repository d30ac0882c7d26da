/*
 * fit_bench: the cost of hessfit's fit objectives and of one full fit, on the Reference platform,
 * for `hessfit fit` input files (loaded exactly as `hessfit fit` loads them, hf_training_set.h).
 *
 *   ./build/bin/fit_bench [--json FILE] [--min-repeats N] [--min-seconds S] [--threads LIST]
 *                         [--optimizer NAME] [--lbfgs-memory M] [--max-evaluations N] [--trace] [--no-fit] [--eigensolvers]
 *                         A.fit [B.fit ...]
 *
 * Per input file (one record; the system is the file's stem without a "-q2mm" suffix):
 *   - the input's objective at the start values: the loss alone, and the loss with the exact
 *     gradient over every fitted value (one objective kernel call each), each timed as the median
 *     of at least N repeats (default 30) taking at least S seconds (default 2), once per thread
 *     count of LIST (HESSFIT_NUM_THREADS, e.g. "1,2"; default: unset, OpenMP's count), and whether
 *     the loss and gradient are bit-identical over those counts;
 *   - one full fit as `hessfit fit` runs it (same optimiser unless --optimizer, values scaled by
 *     q2mm's steps, bounds, ftol and evaluation budget; no output files), with the last thread
 *     count: wall time, evaluations, final loss and frequency RMSD, outcome; with --trace a line per
 *     evaluation on stderr (LM: its trial step's damping, length, predicted gain and gain ratio);
 *   - the same timings for the other objectives among frequencies-q2mm, the eigenmatrix and the
 *     overlap frequency objective (hessfit_objective.h defaults) on the same model, made after the
 *     fit (a second objective replaces the first's targets in the Context).
 * --eigensolvers instead times LAPACK's symmetric eigensolvers with all eigenvectors (dsyevd, dsyevr,
 * dsyev; the objective kernel's job) and without (dsyevd), one thread, on every molecule's
 * mass-weighted Hessian at the start values, all molecules in turn per repeat, and exits.
 * The Markdown table goes to stdout, progress to stderr; --json writes the layout of
 * bench/q2mm_side.py (schema hessfit-bench-compare-q2mm/1, tool "hessfit"), which
 * `q2mm_side.py compare q2mm.json hessfit.json` prints beside q2mm's.
 */
#define _POSIX_C_SOURCE 200809L
#include "bench_util.h"
#include "hessfit_elements.h"
#include "hf_fit_optimizer.h"
#include "hf_training_set.h"

#include <cblas.h>
#include <lapacke.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_INPUTS 16
#define MAX_REPEATS 100000
#define MAX_SAMPLES_KEPT 2000
#define MAX_THREAD_COUNTS 8
#define N_EXTRA 3

typedef bench_timing timing; /* the JSON keeps at most MAX_SAMPLES_KEPT samples */

/* What to run. */
typedef struct {
    int min_repeats, do_fit;
    double min_seconds;
    int n_threads, threads[MAX_THREAD_COUNTS]; /* HESSFIT_NUM_THREADS values; 0: unset */
    int default_threads;                       /* the count with it unset (OpenMP's) */
    int override_optimizer;
    hessfit_opt_algorithm optimizer;
    int lbfgs_memory;                          /* 0: NLopt's default */
    int max_evaluations;                       /* the fit's evaluation budget instead of the input's; 0: the input's */
    int eigensolvers;                          /* time LAPACK's eigensolvers only */
    int trace;                                 /* a line per fit evaluation on stderr */
} bench_settings;

typedef struct {
    const char *name; /* "frequencies-q2mm", "eigenmatrix", ... */
    int measured;
    double score;
    long long n_residuals;
    timing loss[MAX_THREAD_COUNTS], grad[MAX_THREAD_COUNTS]; /* per thread count */
    int identical; /* loss and gradient bit-identical over the thread counts */
} objective_timing;

typedef struct {
    char system[128];
    char objective[32]; /* the input's objective (the set's name dies with the set) */
    const char *input;
    int n_mols, n_atoms, n_params, n_observations;
    double weight, start_score, start_rmsd, load_s;
    objective_timing main, extra[N_EXTRA];
    int fitted;
    double fit_wall, fit_initial, fit_final, fit_final_rmsd;
    long long fit_evaluations, fit_max_evaluations;
    int fit_capped;
    const char *fit_outcome, *fit_algorithm;
    double fit_ftol;
} record;

/* ---- timing ------------------------------------------------------------------------------- */

typedef struct {
    hessfit_objective *objective;
    const double *x;
    double *grad; /* NULL: the loss alone */
} eval_job;

static hessfit_status run_job(const eval_job *job, double *loss)
{
    return hessfit_objective_evaluate(job->objective, job->x, loss, job->grad, NULL);
}

/* Repeats job until at least min_repeats runs and min_seconds have passed; the median etc. */
static hessfit_status time_job(const eval_job *job, int min_repeats, double min_seconds, timing *t)
{
    int cap = 256;
    double *s = malloc((size_t)cap * sizeof *s), loss = 0.0;
    if (s == NULL)
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "fit_bench: no memory for timings");
    hessfit_status st = run_job(job, &loss); /* warm-up, not counted */
    const double t_start = bench_now_s();
    int n = 0;
    while (st == HESSFIT_SUCCESS && n < MAX_REPEATS && (n < min_repeats || bench_now_s() - t_start < min_seconds)) {
        if (n == cap) {
            double *grown = realloc(s, (size_t)(cap *= 2) * sizeof *s);
            if (grown == NULL) {
                free(s);
                return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "fit_bench: no memory for timings");
            }
            s = grown;
        }
        const double t0 = bench_now_s();
        st = run_job(job, &loss);
        s[n++] = bench_now_s() - t0;
    }
    if (st != HESSFIT_SUCCESS) {
        free(s);
        return st;
    }
    return bench_timing_summarise(s, n, t);
}

/* HESSFIT_NUM_THREADS = t, read by the objective kernel at every call; 0: as the environment had it. */
static const char *environment_threads;
static void set_threads(int t)
{
    char v[16];
    if (t <= 0) {
        if (environment_threads != NULL)
            setenv("HESSFIT_NUM_THREADS", environment_threads, 1);
        else
            unsetenv("HESSFIT_NUM_THREADS");
        return;
    }
    snprintf(v, sizeof v, "%d", t);
    setenv("HESSFIT_NUM_THREADS", v, 1);
}

static const char *threads_label(const bench_settings *b, int k, char *out, size_t size)
{
    if (b->threads[k] > 0)
        snprintf(out, size, "%d", b->threads[k]);
    else if (environment_threads != NULL)
        snprintf(out, size, "HESSFIT_NUM_THREADS=%s", environment_threads);
    else
        snprintf(out, size, "default (%d)", b->default_threads);
    return out;
}

/* Loss, then loss + gradient, of objective at x (grad: n_free scratch, n entries compared), at
 * every thread count. */
static hessfit_status time_objective(hessfit_objective *objective, const double *x, double *grad, int n,
                                const bench_settings *b, objective_timing *o)
{
    double *first = malloc((size_t)(n > 0 ? n : 1) * sizeof *first), first_loss = 0.0;
    hessfit_status st = first == NULL ? hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "fit_bench: no memory") : HESSFIT_SUCCESS;
    o->n_residuals = hessfit_objective_n_residuals(objective);
    o->identical = 1;
    for (int k = 0; k < b->n_threads && st == HESSFIT_SUCCESS; k++) {
        char label[32];
        double loss = 0.0;
        set_threads(b->threads[k]);
        if ((st = hessfit_objective_evaluate(objective, x, &loss, grad, NULL)) != HESSFIT_SUCCESS)
            break;
        if (k == 0) {
            first_loss = o->score = loss;
            memcpy(first, grad, (size_t)n * sizeof *first);
        } else {
            o->identical &= memcmp(&loss, &first_loss, sizeof loss) == 0 &&
                            memcmp(grad, first, (size_t)n * sizeof *first) == 0;
        }
        eval_job job = {objective, x, NULL};
        if ((st = time_job(&job, b->min_repeats, b->min_seconds, &o->loss[k])) != HESSFIT_SUCCESS)
            break;
        job.grad = grad;
        if ((st = time_job(&job, b->min_repeats, b->min_seconds, &o->grad[k])) != HESSFIT_SUCCESS)
            break;
        fprintf(stderr, "  %-18s loss %.6g, threads %s: %.3f ms alone, %.3f ms with the gradient (medians of %d and "
                        "%d)\n",
                o->name, o->score, threads_label(b, k, label, sizeof label), 1e3 * o->loss[k].median,
                1e3 * o->grad[k].median, o->loss[k].n, o->grad[k].n);
    }
    set_threads(b->threads[b->n_threads - 1]);
    free(first);
    if (st != HESSFIT_SUCCESS)
        return st;
    o->measured = 1;
    if (b->n_threads > 1)
        fprintf(stderr, "  %-18s loss and gradient %s over the thread counts\n", o->name,
                o->identical ? "bit-identical" : "DIFFER");
    return HESSFIT_SUCCESS;
}

/* ---- the fit, as `hessfit fit` runs it (fitting/cli/cmd_fit.c): values scaled by q2mm's steps --- */

typedef struct {
    double next; /* run time of the next 5 s progress line */
    int trace;   /* every evaluation */
} fit_progress;

/* A progress line on stderr every 5 s of a long fit; with --trace one per evaluation, with LM's step. */
static int on_progress(const hessfit_opt_progress *p, void *data)
{
    fit_progress *f = data;
    if (p->event != HESSFIT_OPT_EVENT_EVALUATION)
        return 0;
    if (f->trace) {
        fprintf(stderr, "  eval %lld: loss %.10g, best %.10g", p->evaluations, p->loss, p->best_loss);
        if (p->lm_free > 0)
            fprintf(stderr, "; LM step: lambda %.3g, |p| %.3g, free %d, predicted %.3g, gain ratio %.3g",
                    p->lm_lambda, p->lm_step_norm, p->lm_free, p->lm_predicted, p->lm_gain_ratio);
        fputc('\n', stderr);
    }
    if (p->seconds >= f->next) {
        fprintf(stderr, "  fit: %.0f s, %lld evaluations, best loss %.6g\n", p->seconds, p->evaluations, p->best_loss);
        f->next = p->seconds + 5.0;
    }
    return 0;
}

static hessfit_status run_fit(hf_training_set *set, const bench_settings *b, record *r)
{
    const int n = set->n_fit;
    double *x = malloc((size_t)n * sizeof *x);
    hessfit_optimize *opt = NULL;
    hessfit_opt_result res;
    hessfit_status st = HESSFIT_SUCCESS;
    fit_progress progress = {5.0, b->trace};
    if (x == NULL) {
        st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "fit_bench: no memory for the fit");
        goto done;
    }
    memcpy(x, set->x_start, (size_t)n * sizeof *x);
    const hessfit_opt_algorithm algorithm = b->override_optimizer ? b->optimizer : set->settings.algorithm;
    if (b->max_evaluations > 0)
        set->settings.max_evaluations = b->max_evaluations;
    if ((st = hf_fit_optimizer_create(set, NULL, algorithm, &opt)) != HESSFIT_SUCCESS ||
        (st = hessfit_optimize_set_lbfgs_memory(opt, b->lbfgs_memory)) != HESSFIT_SUCCESS ||
        (st = hessfit_optimize_set_progress(opt, on_progress, &progress)) != HESSFIT_SUCCESS)
        goto done;
    fprintf(stderr, "  fit: %s, ftol %g, at most %lld evaluations\n", hessfit_opt_algorithm_name(algorithm),
            set->settings.ftol, set->settings.max_evaluations);
    const double t0 = bench_now_s();
    if ((st = hessfit_optimize_run(opt, x, &res)) != HESSFIT_SUCCESS)
        goto done;
    r->fit_wall = bench_now_s() - t0;
    r->fitted = 1;
    r->fit_initial = res.initial_loss;
    r->fit_final = res.loss;
    r->fit_evaluations = res.evaluations;
    r->fit_max_evaluations = set->settings.max_evaluations;
    r->fit_outcome = hessfit_opt_outcome_string(res.outcome);
    r->fit_algorithm = hessfit_opt_algorithm_name(algorithm);
    r->fit_final_rmsd = r->n_observations > 0 && r->weight > 0.0 ? sqrt(r->fit_final / r->n_observations) / r->weight
                                                                 : NAN;
    r->fit_ftol = set->settings.ftol;
    r->fit_capped = res.outcome == HESSFIT_OPT_MAXEVAL_REACHED || res.outcome == HESSFIT_OPT_MAXTIME_REACHED ||
                    res.outcome == HESSFIT_OPT_STOPPED;
    fprintf(stderr, "  fit: %.3f s, %lld evaluations, loss %.6g -> %.8g, RMSD %.2f cm^-1 (%s)\n", r->fit_wall,
            r->fit_evaluations, r->fit_initial, r->fit_final, r->fit_final_rmsd, r->fit_outcome);
done:
    hessfit_optimize_destroy(opt);
    free(x);
    return st;
}

/* ---- LAPACK's eigensolvers on the training set's mass-weighted Hessians ---------------------- */

typedef struct {
    int n_mols;
    int *dim;
    double **a;  /* each molecule's mass-weighted Hessian (row-major = column-major: symmetric) */
    double *work, *w, *z; /* scratch for the largest */
    lapack_int *iwork, *isuppz;
} eigen_job;

static const char *const eigen_names[4] = {"dsyevd, vectors", "dsyevr, vectors", "dsyev, vectors", "dsyevd, values"};

/* One pass over every molecule with solver k; returns LAPACK's first non-zero info. */
static int eigen_pass(eigen_job *e, int k)
{
    for (int m = 0; m < e->n_mols; m++) {
        const int n = e->dim[m];
        lapack_int found, info = 0;
        memcpy(e->work, e->a[m], (size_t)n * (size_t)n * sizeof(double));
        switch (k) {
        case 0: info = LAPACKE_dsyevd(LAPACK_COL_MAJOR, 'V', 'L', n, e->work, n, e->w); break;
        case 1:
            info = LAPACKE_dsyevr(LAPACK_COL_MAJOR, 'V', 'A', 'L', n, e->work, n, 0.0, 0.0, 0, 0, 0.0, &found, e->w,
                                  e->z, n, e->isuppz);
            break;
        case 2: info = LAPACKE_dsyev(LAPACK_COL_MAJOR, 'V', 'L', n, e->work, n, e->w); break;
        default: info = LAPACKE_dsyevd(LAPACK_COL_MAJOR, 'N', 'L', n, e->work, n, e->w); break;
        }
        if (info != 0)
            return (int)info;
    }
    return 0;
}

static hessfit_status bench_eigensolvers(hf_training_set *set, const bench_settings *b)
{
    hessfit_status st;
    eigen_job e;
    memset(&e, 0, sizeof e);
    const long long size = hessfit_model_hessian_size(set->model);
    double *h = malloc((size_t)size * sizeof *h);
    e.n_mols = set->n_mols;
    e.dim = calloc((size_t)set->n_mols, sizeof *e.dim);
    e.a = calloc((size_t)set->n_mols, sizeof *e.a);
    if (h == NULL || e.dim == NULL || e.a == NULL) {
        st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "fit_bench: no memory");
        goto done;
    }
    if ((st = hessfit_model_set_free(set->model, set->x_start)) != HESSFIT_SUCCESS ||
        (st = hessfit_model_hessians_all(set->model, h)) != HESSFIT_SUCCESS)
        goto done;
    int max_dim = 0, min_dim = 1 << 30;
    double sum_cubes = 0.0;
    for (int m = 0; m < set->n_mols; m++) {
        const int n = 3 * set->mols[m].n_atoms;
        const double *hm = h + hessfit_model_molecule_offset(set->model, m);
        e.dim[m] = n;
        max_dim = n > max_dim ? n : max_dim;
        min_dim = n < min_dim ? n : min_dim;
        sum_cubes += (double)n * n * n;
        if ((e.a[m] = malloc((size_t)n * (size_t)n * sizeof(double))) == NULL) {
            st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "fit_bench: no memory");
            goto done;
        }
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                e.a[m][(size_t)i * n + j] =
                    0.5 * (hm[(size_t)i * n + j] + hm[(size_t)j * n + i]) /
                    sqrt(hessfit_element_monoisotopic_mass(set->mols[m].atomic_numbers[i / 3]) *
                         hessfit_element_monoisotopic_mass(set->mols[m].atomic_numbers[j / 3]));
    }
    e.work = malloc((size_t)max_dim * (size_t)max_dim * sizeof *e.work);
    e.z = malloc((size_t)max_dim * (size_t)max_dim * sizeof *e.z);
    e.w = malloc((size_t)max_dim * sizeof *e.w);
    e.isuppz = malloc(2 * (size_t)max_dim * sizeof *e.isuppz);
    if (e.work == NULL || e.z == NULL || e.w == NULL || e.isuppz == NULL) {
        st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "fit_bench: no memory");
        goto done;
    }
    openblas_set_num_threads(1);
    printf("LAPACK's eigensolvers, one thread, on the %d mass-weighted Hessians of %s at the start (3n = %d to %d; "
           "sum of (3n)^3 %.3g), all molecules per repeat; medians in ms\n\n"
           "| solver | all molecules ms | ratio to dsyevd |\n|---|--:|--:|\n",
           set->n_mols, set->config.path, min_dim, max_dim, sum_cubes);
    double first = 0.0;
    for (int k = 0; k < 4; k++) {
        timing t;
        memset(&t, 0, sizeof t);
        double *s = malloc((size_t)MAX_REPEATS * sizeof *s);
        int n = 0, info = 0;
        if (s == NULL) {
            st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "fit_bench: no memory");
            goto done;
        }
        info = eigen_pass(&e, k); /* warm-up */
        const double t0 = bench_now_s();
        while (info == 0 && n < MAX_REPEATS && (n < b->min_repeats || bench_now_s() - t0 < b->min_seconds)) {
            const double t1 = bench_now_s();
            info = eigen_pass(&e, k);
            s[n++] = bench_now_s() - t1;
        }
        if (info != 0) {
            free(s);
            st = hessfit_error(HESSFIT_ERROR_LAPACK, "fit_bench: %s failed (info %d)", eigen_names[k], info);
            goto done;
        }
        const double median = bench_median(s, n);
        free(s);
        if (k == 0)
            first = median;
        printf("| %s | %.3f | %.2f |\n", eigen_names[k], 1e3 * median, median / first);
        fprintf(stderr, "  %s: %.3f ms (median of %d)\n", eigen_names[k], 1e3 * median, n);
    }
done:
    for (int m = 0; e.a != NULL && m < set->n_mols; m++)
        free(e.a[m]);
    free(e.a);
    free(e.dim);
    free(e.work);
    free(e.z);
    free(e.w);
    free(e.isuppz);
    free(h);
    return st;
}

/* ---- one input ---------------------------------------------------------------------------- */

static void system_name(const char *input, char *out, size_t size)
{
    const char *base = strrchr(input, '/');
    base = base ? base + 1 : input;
    snprintf(out, size, "%s", base);
    size_t len = strlen(out);
    if (len > 4 && strcmp(out + len - 4, ".fit") == 0)
        out[len -= 4] = '\0';
    if (len > 5 && strcmp(out + len - 5, "-q2mm") == 0)
        out[len - 5] = '\0';
}

static hessfit_status bench_input(const char *input, const bench_settings *b, record *r)
{
    hf_training_set set;
    hf_training_set_options topt = {NULL, NULL, "-out", 0};
    double *grad = NULL;
    hessfit_objective *other = NULL;
    memset(&set, 0, sizeof set);
    r->input = input;
    system_name(input, r->system, sizeof r->system);
    fprintf(stderr, "%s (%s)\n", r->system, input);
    double t0 = bench_now_s();
    hessfit_status st = hf_training_set_load(input, &topt, &set);
    if (st != HESSFIT_SUCCESS)
        return st;
    r->load_s = bench_now_s() - t0;
    if (b->eigensolvers) {
        st = bench_eigensolvers(&set, b);
        hf_training_set_free(&set);
        return st;
    }
    r->n_mols = set.n_mols;
    for (int m = 0; m < set.n_mols; m++)
        r->n_atoms += set.mols[m].n_atoms;
    r->n_params = set.n_fit;
    r->weight = set.settings.objective.frequency_weight;
    for (int i = 0; i < hessfit_objective_n_frequency_targets(set.objective); i++) {
        double w = 0.0;
        if ((st = hessfit_objective_frequency_target(set.objective, i, NULL, NULL, &w)) != HESSFIT_SUCCESS)
            goto done;
        r->n_observations += w > 0.0;
    }
    if ((grad = malloc((size_t)set.n_free * sizeof *grad)) == NULL) {
        st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "fit_bench: no memory");
        goto done;
    }
    snprintf(r->objective, sizeof r->objective, "%s", set.settings.objective_name);
    r->main.name = r->objective;
    if ((st = time_objective(set.objective, set.x_start, grad, set.n_free, b, &r->main)) != HESSFIT_SUCCESS)
        goto done;
    r->start_score = r->main.score;
    r->start_rmsd = r->n_observations > 0 && r->weight > 0.0 ? sqrt(r->start_score / r->n_observations) / r->weight
                                                            : NAN;
    fprintf(stderr, "  %d structures, %d atoms, %d fitted values, %d weighted frequencies, start RMSD %.2f cm^-1\n",
            r->n_mols, r->n_atoms, r->n_params, r->n_observations, r->start_rmsd);
    if (b->do_fit && (st = run_fit(&set, b, r)) != HESSFIT_SUCCESS)
        goto done;

    /* the other objectives on the same model, at the start values */
    for (int k = 0; k < N_EXTRA; k++) {
        hessfit_objective_options o = hessfit_objective_default_options();
        if (k == 0) {
            o.frequencies = HESSFIT_OBJ_FREQUENCIES_NONE;
            o.eigenmatrix = 1;
            r->extra[k].name = "eigenmatrix";
        } else if (k == 1) {
            r->extra[k].name = "frequencies";
        } else {
            o.frequencies = HESSFIT_OBJ_FREQUENCIES_Q2MM;
            r->extra[k].name = "frequencies-q2mm";
        }
        if (strcmp(r->extra[k].name, r->main.name) == 0)
            continue;
        if ((st = hessfit_model_set_free(set.model, set.x_start)) != HESSFIT_SUCCESS)
            goto done;
        hessfit_objective_options *per_mol = malloc((size_t)set.n_mols * sizeof *per_mol);
        if (per_mol == NULL) {
            st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "fit_bench: no memory");
            goto done;
        }
        for (int m = 0; m < set.n_mols; m++)
            per_mol[m] = o;
        st = hessfit_objective_create(set.model, set.mols, set.n_mols, per_mol, &other);
        free(per_mol);
        if (st != HESSFIT_SUCCESS)
            goto done;
        st = time_objective(other, set.x_start, grad, set.n_free, b, &r->extra[k]);
        hessfit_objective_destroy(other);
        other = NULL;
        if (st != HESSFIT_SUCCESS)
            goto done;
    }
done:
    free(grad);
    hf_training_set_free(&set);
    return st;
}

/* ---- output ------------------------------------------------------------------------------- */

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s != NULL && *s; s++) {
        const unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static void json_number(FILE *f, double x)
{
    if (isfinite(x))
        fprintf(f, "%.17g", x);
    else
        fputs("null", f);
}

static void json_timing(FILE *f, const timing *t, const char *method, int evals_per_gradient)
{
    fputs("{\"median\": ", f);
    json_number(f, t->median);
    fputs(", \"min\": ", f);
    json_number(f, t->min);
    fputs(", \"max\": ", f);
    json_number(f, t->max);
    fprintf(f, ", \"n\": %d", t->n);
    if (method != NULL) {
        fputs(", \"method\": ", f);
        json_string(f, method);
        fprintf(f, ", \"evaluations_per_gradient\": %d", evals_per_gradient);
    }
    fputs(", \"samples\": [", f);
    const int kept = t->n < MAX_SAMPLES_KEPT ? t->n : MAX_SAMPLES_KEPT;
    for (int i = 0; i < kept; i++) {
        if (i)
            fputs(", ", f);
        fprintf(f, "%.6g", t->samples[i]);
    }
    fputs("]}", f);
}

/* The timings of the last thread count (the fit's), then every count's medians. */
static void json_objective_timings(FILE *f, const objective_timing *o, const bench_settings *b)
{
    const int last = b->n_threads - 1;
    fputs("\"eval_s\": ", f);
    json_timing(f, &o->loss[last], NULL, 0);
    fputs(", \"grad_s\": ", f);
    json_timing(f, &o->grad[last], "exact gradient: loss and gradient in one objective kernel call (adjoint)", 1);
    fputs(", \"by_threads\": [", f);
    for (int k = 0; k < b->n_threads; k++) {
        fprintf(f, "%s{\"threads\": %d, \"hessfit_num_threads\": ", k ? ", " : "",
                b->threads[k] > 0 ? b->threads[k] : b->default_threads);
        if (b->threads[k] > 0)
            fprintf(f, "%d", b->threads[k]);
        else if (environment_threads != NULL)
            json_string(f, environment_threads);
        else
            fputs("null", f);
        fputs(", \"eval_median_s\": ", f);
        json_number(f, o->loss[k].median);
        fputs(", \"grad_median_s\": ", f);
        json_number(f, o->grad[k].median);
        fputs("}", f);
    }
    fprintf(f, "], \"threads_bit_identical\": %s", o->identical ? "true" : "false");
}

static void json_objective(FILE *f, const objective_timing *o, const bench_settings *b)
{
    fputs("{\"objective\": ", f);
    json_string(f, o->name);
    fputs(", \"score\": ", f);
    json_number(f, o->score);
    fprintf(f, ", \"n_residuals\": %lld, ", o->n_residuals);
    json_objective_timings(f, o, b);
    fputs("}", f);
}

static int write_json(const char *path, const record *recs, int n, const double load_start[3], const double load_end[3],
                      const bench_settings *b)
{
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        fprintf(stderr, "fit_bench: cannot write %s\n", path);
        return 1;
    }
    char cpu[256];
    bench_cpu_model(cpu, sizeof cpu);
    time_t t = time(NULL);
    char stamp[64];
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S+00:00", gmtime(&t));
    fprintf(f, "{\n \"schema\": \"hessfit-bench-compare-q2mm/1\",\n \"tool\": \"hessfit\",\n \"partial\": false,\n");
    fprintf(f, " \"finished_utc\": \"%s\",\n", stamp);
    fprintf(f, " \"load_average_start\": [%.2f, %.2f, %.2f],\n \"load_average_end\": [%.2f, %.2f, %.2f],\n",
            load_start[0], load_start[1], load_start[2], load_end[0], load_end[1], load_end[2]);
    fprintf(f, " \"versions\": {\"hessfit\": \"%s\"},\n", HESSFIT_BENCH_VERSION);
    fprintf(f, " \"machine\": {\"nproc\": %ld, \"cpu\": ", sysconf(_SC_NPROCESSORS_ONLN));
    json_string(f, cpu);
    fprintf(f, ", \"openmp_threads\": %d, \"openmm_platform\": \"Reference\"},\n", b->default_threads);
    fprintf(f, " \"settings\": {\"min_repeats\": %d, \"min_seconds\": %g, \"thread_counts\": [", b->min_repeats,
            b->min_seconds);
    for (int k = 0; k < b->n_threads; k++)
        fprintf(f, "%s%d", k ? ", " : "", b->threads[k] > 0 ? b->threads[k] : b->default_threads);
    fprintf(f, "], \"optimizer\": ");
    json_string(f, b->override_optimizer ? hessfit_opt_algorithm_name(b->optimizer) : "each input's");
    fprintf(f, ", \"lbfgs_memory\": %d, \"objective\": \"each input's objective (hessfit_objective.h); fit as "
               "`hessfit fit` runs it\"},\n \"records\": [\n",
            b->lbfgs_memory);
    for (int i = 0; i < n; i++) {
        const record *r = &recs[i];
        fputs("  {\"system\": ", f);
        json_string(f, r->system);
        fputs(", \"tool\": \"hessfit\", \"backend\": \"hessfit-reference\", \"input\": ", f);
        json_string(f, r->input);
        fputs(", \"objective\": ", f);
        json_string(f, r->main.name);
        fprintf(f, ",\n   \"n_molecules\": %d, \"n_atoms\": %d, \"n_params\": %d, \"n_observations\": %d,", r->n_mols,
                r->n_atoms, r->n_params, r->n_observations);
        fputs(" \"start_score\": ", f);
        json_number(f, r->start_score);
        fputs(", \"start_rmsd_cm1\": ", f);
        json_number(f, r->start_rmsd);
        fputs(", \"load_s\": ", f);
        json_number(f, r->load_s);
        fputs(",\n   ", f);
        json_objective_timings(f, &r->main, b);
        fputs(",\n   \"fit\": ", f);
        if (r->fitted) {
            fprintf(f, "{\"capped\": %s, \"wall_s\": ", r->fit_capped ? "true" : "false");
            json_number(f, r->fit_wall);
            fprintf(f, ", \"evaluations\": %lld, \"initial_score\": ", r->fit_evaluations);
            json_number(f, r->fit_initial);
            fputs(", \"final_score\": ", f);
            json_number(f, r->fit_final);
            fputs(", \"final_rmsd_cm1\": ", f);
            json_number(f, r->fit_final_rmsd);
            fprintf(f, ", \"converged\": %s, \"message\": ", r->fit_capped ? "false" : "true");
            json_string(f, r->fit_outcome);
            fprintf(f, ", \"method\": \"%s (NLopt), values scaled by q2mm's steps, ftol_rel %g, max %lld "
                       "evaluations\", \"evaluations_per_s\": ",
                    r->fit_algorithm, r->fit_ftol, r->fit_max_evaluations);
            json_number(f, r->fit_wall > 0 ? (double)r->fit_evaluations / r->fit_wall : NAN);
            fputs("}", f);
        } else {
            fputs("null", f);
        }
        fputs(",\n   \"other_objectives\": [", f);
        int first = 1;
        for (int k = 0; k < N_EXTRA; k++) {
            if (!r->extra[k].measured)
                continue;
            fputs(first ? "\n    " : ",\n    ", f);
            json_objective(f, &r->extra[k], b);
            first = 0;
        }
        fprintf(f, "]}%s\n", i + 1 < n ? "," : "");
    }
    fputs(" ]\n}\n", f);
    if (fclose(f) != 0) {
        fprintf(stderr, "fit_bench: error writing %s\n", path);
        return 1;
    }
    fprintf(stderr, "wrote %s\n", path);
    return 0;
}

/* "a / b / ..." of a timing's medians over the thread counts, in ms. */
static void print_medians(const timing *t, const bench_settings *b)
{
    for (int k = 0; k < b->n_threads; k++)
        printf("%s%.3g", k ? " / " : " ", 1e3 * t[k].median);
    printf(" |");
}

static void print_table(const record *recs, int n, const bench_settings *b)
{
    char label[32];
    printf("hessfit, Reference platform; times are medians; the gradient is exact (one kernel call with the loss); "
           "threads (HESSFIT_NUM_THREADS):");
    for (int k = 0; k < b->n_threads; k++)
        printf("%s%s", k ? " / " : " ", threads_label(b, k, label, sizeof label));
    printf("; the fit with the last\n\n");
    printf("| system | objective | params | freqs | start score | start RMSD cm^-1 | loss ms | loss + gradient ms "
           "| threads identical | fit s | fit evals | final score | final RMSD cm^-1 | outcome |\n");
    printf("|---|---|--:|--:|--:|--:|--:|--:|---|--:|--:|--:|--:|---|\n");
    for (int i = 0; i < n; i++) {
        const record *r = &recs[i];
        printf("| %s | %s | %d | %d | %.6g | %.2f |", r->system, r->main.name, r->n_params, r->n_observations,
               r->start_score, r->start_rmsd);
        print_medians(r->main.loss, b);
        print_medians(r->main.grad, b);
        printf(" %s |", b->n_threads > 1 ? (r->main.identical ? "yes" : "NO") : "-");
        if (r->fitted)
            printf(" %.3g | %lld | %.6g | %.2f | %s (%s) |\n", r->fit_wall, r->fit_evaluations, r->fit_final,
                   r->fit_final_rmsd, r->fit_outcome, r->fit_algorithm);
        else
            printf(" - | - | - | - | - |\n");
        for (int k = 0; k < N_EXTRA; k++)
            if (r->extra[k].measured) {
                printf("| %s | %s | %d | - | %.6g | - |", r->system, r->extra[k].name, r->n_params, r->extra[k].score);
                print_medians(r->extra[k].loss, b);
                print_medians(r->extra[k].grad, b);
                printf(" %s | - | - | - | - | - |\n", b->n_threads > 1 ? (r->extra[k].identical ? "yes" : "NO") : "-");
            }
    }
}

static int usage(FILE *out, int rc)
{
    fprintf(out, "usage: fit_bench [--json FILE] [--min-repeats N] [--min-seconds S] [--threads LIST]\n"
                 "                 [--optimizer NAME] [--lbfgs-memory M] [--max-evaluations N] [--trace] [--no-fit]\n"
                 "                 [--eigensolvers] INPUT.fit ...\n"
                 "  times each input's objective (alone and with its gradient), one full fit, and the other\n"
                 "  objectives (frequencies-q2mm, eigenmatrix, overlap frequencies) on the same model (Reference\n"
                 "  platform)\n"
                 "  --threads LIST     HESSFIT_NUM_THREADS values to time, e.g. 1,2 (default: the environment's, else\n"
                 "                     OpenMP's count);\n"
                 "                     the fit runs with the last\n"
                 "  --optimizer NAME   the fit's optimiser instead of the input's (lbfgs, slsqp, ...)\n"
                 "  --lbfgs-memory M   L-BFGS correction pairs (default 0: NLopt's)\n"
                 "  --max-evaluations N  the fit's evaluation budget instead of the input's max-evaluations\n"
                 "  --trace            a line per fit evaluation on stderr (LM: the trial step's damping, length,\n"
                 "                     free variables, predicted gain and gain ratio; TRF: its radius for the damping)\n"
                 "  --eigensolvers     only time LAPACK's eigensolvers on the inputs' mass-weighted Hessians\n");
    return rc;
}

/* "1,2,4" into b->threads. Returns 0, or -1 when malformed. */
static int parse_threads(const char *list, bench_settings *b)
{
    b->n_threads = 0;
    for (const char *p = list; *p != '\0';) {
        char *end = NULL;
        const long v = strtol(p, &end, 10);
        if (end == p || v < 1 || v > 256 || b->n_threads == MAX_THREAD_COUNTS || (*end != ',' && *end != '\0'))
            return -1;
        b->threads[b->n_threads++] = (int)v;
        p = *end == ',' ? end + 1 : end;
    }
    return b->n_threads > 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    const char *json = NULL, *inputs[MAX_INPUTS];
    int n_inputs = 0;
    bench_settings b;
    memset(&b, 0, sizeof b);
    b.min_repeats = 30;
    b.min_seconds = 2.0;
    b.do_fit = 1;
    b.n_threads = 1; /* threads[0] = 0: unset */
    /* the count without --threads: HESSFIT_NUM_THREADS from the environment, else what OpenMP takes
     * (OMP_NUM_THREADS, else the cores) */
    environment_threads = getenv("HESSFIT_NUM_THREADS");
    const char *omp = getenv("OMP_NUM_THREADS");
    if (environment_threads != NULL && atoi(environment_threads) > 0)
        b.default_threads = atoi(environment_threads);
    else if (omp != NULL && atoi(omp) > 0)
        b.default_threads = atoi(omp);
    else
        b.default_threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
            return usage(stdout, 0);
        if (strcmp(argv[i], "--json") == 0 && i + 1 < argc) {
            json = argv[++i];
        } else if (strcmp(argv[i], "--min-repeats") == 0 && i + 1 < argc) {
            if (!bench_parse_int(argv[++i], 1, MAX_REPEATS, &b.min_repeats))
                return usage(stderr, 2);
        } else if (strcmp(argv[i], "--min-seconds") == 0 && i + 1 < argc) {
            if (!bench_parse_double(argv[++i], 0.0, &b.min_seconds))
                return usage(stderr, 2);
        } else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
            if (parse_threads(argv[++i], &b) != 0) {
                fprintf(stderr, "fit_bench: --threads takes whole numbers 1 to 256 separated by commas (at most %d), "
                                "not '%s'\n", MAX_THREAD_COUNTS, argv[i]);
                return 2;
            }
        } else if (strcmp(argv[i], "--optimizer") == 0 && i + 1 < argc) {
            if (hessfit_opt_algorithm_from_name(argv[++i], &b.optimizer) != HESSFIT_SUCCESS) {
                fprintf(stderr, "fit_bench: --optimizer: %s\n", hessfit_last_error());
                return 2;
            }
            b.override_optimizer = 1;
        } else if (strcmp(argv[i], "--lbfgs-memory") == 0 && i + 1 < argc) {
            if (!bench_parse_int(argv[++i], 0, 1000000, &b.lbfgs_memory))
                return usage(stderr, 2);
        } else if (strcmp(argv[i], "--max-evaluations") == 0 && i + 1 < argc) {
            if (!bench_parse_int(argv[++i], 1, 1000000000, &b.max_evaluations))
                return usage(stderr, 2);
        } else if (strcmp(argv[i], "--trace") == 0) {
            b.trace = 1;
        } else if (strcmp(argv[i], "--no-fit") == 0) {
            b.do_fit = 0;
        } else if (strcmp(argv[i], "--eigensolvers") == 0) {
            b.eigensolvers = 1;
        } else if (argv[i][0] == '-' || n_inputs == MAX_INPUTS) {
            return usage(stderr, 2);
        } else {
            inputs[n_inputs++] = argv[i];
        }
    }
    if (n_inputs == 0)
        return usage(stderr, 2);
    if (hf_cli_load_plugins() != HESSFIT_SUCCESS) {
        fprintf(stderr, "fit_bench: %s\n", hessfit_last_error());
        return 1;
    }
    double load_start[3], load_end[3];
    bench_read_loadavg(load_start);
    record *recs = calloc((size_t)n_inputs, sizeof *recs);
    int rc = recs == NULL;
    for (int i = 0; i < n_inputs && rc == 0; i++)
        if (bench_input(inputs[i], &b, &recs[i]) != HESSFIT_SUCCESS) {
            fprintf(stderr, "fit_bench: %s: %s\n", inputs[i], hessfit_last_error());
            rc = 1;
        }
    bench_read_loadavg(load_end);
    if (rc == 0 && b.eigensolvers) {
        printf("\nload average: %.2f at the start, %.2f at the end\n", load_start[0], load_end[0]);
    } else if (rc == 0) {
        print_table(recs, n_inputs, &b);
        printf("\nload average: %.2f at the start, %.2f at the end\n", load_start[0], load_end[0]);
        if (json != NULL)
            rc = write_json(json, recs, n_inputs, load_start, load_end, &b);
    }
    for (int i = 0; recs != NULL && i < n_inputs; i++)
        for (int k = 0; k < MAX_THREAD_COUNTS; k++) {
            free(recs[i].main.loss[k].samples);
            free(recs[i].main.grad[k].samples);
            for (int e = 0; e < N_EXTRA; e++) {
                free(recs[i].extra[e].loss[k].samples);
                free(recs[i].extra[e].grad[k].samples);
            }
        }
    free(recs);
    return rc;
}
