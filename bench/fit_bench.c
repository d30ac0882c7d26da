/*
 * fit_bench: the cost of hessfit's fit objectives and of one full fit, on the Reference platform,
 * for `hessfit fit` input files (loaded exactly as `hessfit fit` loads them, hf_training_set.h).
 *
 *   ./build/bin/fit_bench [--json FILE] [--min-repeats N] [--min-seconds S] [--no-fit] A.fit [B.fit ...]
 *
 * Per input file (one record; the system is the file's stem without a "-q2mm" suffix):
 *   - the input's objective at the start values: the loss alone, and the loss with the exact
 *     gradient over every fitted value (one objective kernel call each), each timed as the median
 *     of at least N repeats (default 30) taking at least S seconds (default 2);
 *   - one full fit as `hessfit fit` runs it (same optimiser, scaled values, bounds, ftol and
 *     evaluation budget; no output files): wall time, evaluations, final loss, outcome;
 *   - the same two timings for the eigenmatrix objective and the overlap frequency objective
 *     (hessfit_objective.h defaults) on the same model, made after the fit (a second objective
 *     replaces the first's targets in the Context).
 * The Markdown table goes to stdout, progress to stderr; --json writes the layout of
 * bench/q2mm_side.py (schema hessfit-bench-compare-q2mm/1, tool "hessfit"), which
 * `q2mm_side.py compare q2mm.json hessfit.json` prints beside q2mm's.
 */
#define _POSIX_C_SOURCE 200809L
#include "hf_training_set.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_INPUTS 16
#define MAX_REPEATS 100000
#define MAX_SAMPLES_KEPT 2000

typedef struct {
    double median, min, max;
    int n;
    double *samples; /* n (at most MAX_SAMPLES_KEPT kept) */
} timing;

typedef struct {
    const char *name; /* "frequencies-q2mm", "eigenmatrix", ... */
    int measured;
    double score;
    long long n_residuals;
    timing loss, grad;
} objective_timing;

typedef struct {
    char system[128];
    char objective[32]; /* the input's objective (the set's name dies with the set) */
    const char *input;
    int n_mols, n_atoms, n_params, n_observations;
    double weight, start_score, start_rmsd, load_s;
    objective_timing main, extra[2];
    int fitted;
    double fit_wall, fit_initial, fit_final;
    long long fit_evaluations, fit_max_evaluations;
    int fit_capped;
    const char *fit_outcome, *fit_algorithm;
    double fit_ftol;
} record;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* ---- timing ------------------------------------------------------------------------------- */

typedef struct {
    hf_objective *objective;
    const double *x;
    double *grad; /* NULL: the loss alone */
} eval_job;

static hf_status run_job(const eval_job *job, double *loss)
{
    return hf_objective_evaluate(job->objective, job->x, loss, job->grad, NULL);
}

/* Repeats job until at least min_repeats runs and min_seconds have passed; the median etc. */
static hf_status time_job(const eval_job *job, int min_repeats, double min_seconds, timing *t)
{
    int cap = 256;
    double *s = malloc((size_t)cap * sizeof *s), loss = 0.0;
    if (s == NULL)
        return hf_error(HF_ERROR_OUT_OF_MEMORY, "fit_bench: no memory for timings");
    hf_status st = run_job(job, &loss); /* warm-up, not counted */
    const double t_start = now_s();
    int n = 0;
    while (st == HF_SUCCESS && n < MAX_REPEATS && (n < min_repeats || now_s() - t_start < min_seconds)) {
        if (n == cap) {
            double *grown = realloc(s, (size_t)(cap *= 2) * sizeof *s);
            if (grown == NULL) {
                free(s);
                return hf_error(HF_ERROR_OUT_OF_MEMORY, "fit_bench: no memory for timings");
            }
            s = grown;
        }
        const double t0 = now_s();
        st = run_job(job, &loss);
        s[n++] = now_s() - t0;
    }
    if (st != HF_SUCCESS) {
        free(s);
        return st;
    }
    double *sorted = malloc((size_t)n * sizeof *sorted);
    if (sorted == NULL) {
        free(s);
        return hf_error(HF_ERROR_OUT_OF_MEMORY, "fit_bench: no memory for timings");
    }
    memcpy(sorted, s, (size_t)n * sizeof *s);
    qsort(sorted, (size_t)n, sizeof *sorted, cmp_double);
    t->n = n;
    t->min = sorted[0];
    t->max = sorted[n - 1];
    t->median = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
    free(sorted);
    t->samples = s;
    return HF_SUCCESS;
}

/* Loss, then loss + gradient, of objective at x (grad: n_free scratch). */
static hf_status time_objective(hf_objective *objective, const double *x, double *grad, int min_repeats,
                                double min_seconds, objective_timing *o)
{
    hf_status st = hf_objective_evaluate(objective, x, &o->score, NULL, NULL);
    if (st != HF_SUCCESS)
        return st;
    o->n_residuals = hf_objective_n_residuals(objective);
    eval_job job = {objective, x, NULL};
    if ((st = time_job(&job, min_repeats, min_seconds, &o->loss)) != HF_SUCCESS)
        return st;
    job.grad = grad;
    if ((st = time_job(&job, min_repeats, min_seconds, &o->grad)) != HF_SUCCESS)
        return st;
    o->measured = 1;
    fprintf(stderr, "  %-18s loss %.6g: %.3f ms alone, %.3f ms with the gradient (medians of %d and %d)\n",
            o->name, o->score, 1e3 * o->loss.median, 1e3 * o->grad.median, o->loss.n, o->grad.n);
    return HF_SUCCESS;
}

/* ---- the fit, as `hessfit fit` runs it (fitting/cli/cmd_fit.c): y_i = x_i / step_i --------- */

typedef struct {
    hf_objective *objective;
    int n;
    const double *scale;
    double *x, *grad;
} scaled_problem;

static double fit_loss(int n, const double *y, double *grad, void *data, hf_status *status)
{
    scaled_problem *p = data;
    double loss = 0.0;
    for (int i = 0; i < n; i++)
        p->x[i] = y[i] * p->scale[i];
    *status = hf_objective_evaluate(p->objective, p->x, &loss, grad != NULL ? p->grad : NULL, NULL);
    if (grad != NULL)
        for (int i = 0; i < n; i++)
            grad[i] = p->grad[i] * p->scale[i]; /* dL/dy_i = s_i dL/dx_i */
    return loss;
}

/* A progress line on stderr every 5 s of a long fit. */
static int on_progress(const hf_opt_progress *p, void *data)
{
    double *next = data;
    if (p->event == HF_OPT_EVENT_EVALUATION && p->seconds >= *next) {
        fprintf(stderr, "  fit: %.0f s, %lld evaluations, best loss %.6g\n", p->seconds, p->evaluations, p->best_loss);
        *next = p->seconds + 5.0;
    }
    return 0;
}

static hf_status run_fit(hf_training_set *set, record *r)
{
    const int n = set->n_fit;
    double *y = malloc((size_t)n * sizeof *y), *ones = malloc((size_t)n * sizeof *ones);
    double *lo = NULL, *hi = NULL;
    scaled_problem p = {set->objective, n, set->step, malloc((size_t)n * sizeof(double)),
                        malloc((size_t)set->n_free * sizeof(double))};
    hf_optimize *opt = NULL;
    hf_opt_result res;
    hf_status st = HF_SUCCESS;
    double next_progress = 5.0;
    if (set->lower != NULL) {
        lo = malloc((size_t)n * sizeof *lo);
        hi = malloc((size_t)n * sizeof *hi);
    }
    if (y == NULL || ones == NULL || p.x == NULL || p.grad == NULL || (set->lower != NULL && (lo == NULL || hi == NULL))) {
        st = hf_error(HF_ERROR_OUT_OF_MEMORY, "fit_bench: no memory for the fit");
        goto done;
    }
    for (int i = 0; i < n; i++) {
        y[i] = set->x_start[i] / set->step[i];
        ones[i] = 1.0;
        if (lo != NULL) {
            lo[i] = set->lower[i] / set->step[i];
            hi[i] = set->upper[i] / set->step[i];
        }
    }
    /* the free values beyond the fit's (none in these inputs) stay at their start values */
    if (set->n_free != n && (st = hf_model_set_free(set->model, set->x_start)) != HF_SUCCESS)
        goto done;
    if ((st = hf_optimize_create(set->settings.algorithm, n, &opt)) != HF_SUCCESS ||
        (st = hf_optimize_set_objective(opt, fit_loss, &p)) != HF_SUCCESS ||
        (st = hf_optimize_set_bounds(opt, lo, hi)) != HF_SUCCESS ||
        (st = hf_optimize_set_initial_step(opt, ones)) != HF_SUCCESS ||
        (st = hf_optimize_set_ftol_rel(opt, set->settings.ftol)) != HF_SUCCESS ||
        (st = hf_optimize_set_maxeval(opt, set->settings.max_evaluations)) != HF_SUCCESS ||
        (st = hf_optimize_set_maxtime(opt, set->settings.max_time)) != HF_SUCCESS ||
        (st = hf_optimize_set_progress(opt, on_progress, &next_progress)) != HF_SUCCESS)
        goto done;
    fprintf(stderr, "  fit: %s, ftol %g, at most %lld evaluations\n", hf_opt_algorithm_name(set->settings.algorithm),
            set->settings.ftol, set->settings.max_evaluations);
    const double t0 = now_s();
    if ((st = hf_optimize_run(opt, y, &res)) != HF_SUCCESS)
        goto done;
    r->fit_wall = now_s() - t0;
    r->fitted = 1;
    r->fit_initial = res.initial_loss;
    r->fit_final = res.loss;
    r->fit_evaluations = res.evaluations;
    r->fit_max_evaluations = set->settings.max_evaluations;
    r->fit_outcome = hf_opt_outcome_string(res.outcome);
    r->fit_algorithm = hf_opt_algorithm_name(set->settings.algorithm);
    r->fit_ftol = set->settings.ftol;
    r->fit_capped = res.outcome == HF_OPT_MAXEVAL_REACHED || res.outcome == HF_OPT_MAXTIME_REACHED ||
                    res.outcome == HF_OPT_STOPPED;
    fprintf(stderr, "  fit: %.3f s, %lld evaluations, loss %.6g -> %.6g (%s)\n", r->fit_wall, r->fit_evaluations,
            r->fit_initial, r->fit_final, r->fit_outcome);
done:
    hf_optimize_destroy(opt);
    free(y);
    free(ones);
    free(lo);
    free(hi);
    free(p.x);
    free(p.grad);
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

static hf_status bench_input(const char *input, int min_repeats, double min_seconds, int do_fit, record *r)
{
    hf_training_set set;
    hf_training_set_options topt = {NULL, NULL, "-out"};
    double *grad = NULL;
    hf_objective *other = NULL;
    memset(&set, 0, sizeof set);
    r->input = input;
    system_name(input, r->system, sizeof r->system);
    fprintf(stderr, "%s (%s)\n", r->system, input);
    double t0 = now_s();
    hf_status st = hf_training_set_load(input, &topt, &set);
    if (st != HF_SUCCESS)
        return st;
    r->load_s = now_s() - t0;
    r->n_mols = set.n_mols;
    for (int m = 0; m < set.n_mols; m++)
        r->n_atoms += set.mols[m].n_atoms;
    r->n_params = set.n_fit;
    r->weight = set.settings.objective.frequency_weight;
    for (int i = 0; i < hf_objective_n_frequency_targets(set.objective); i++) {
        double w = 0.0;
        if ((st = hf_objective_frequency_target(set.objective, i, NULL, NULL, &w)) != HF_SUCCESS)
            goto done;
        r->n_observations += w > 0.0;
    }
    if ((grad = malloc((size_t)set.n_free * sizeof *grad)) == NULL) {
        st = hf_error(HF_ERROR_OUT_OF_MEMORY, "fit_bench: no memory");
        goto done;
    }
    snprintf(r->objective, sizeof r->objective, "%s", set.settings.objective_name);
    r->main.name = r->objective;
    if ((st = time_objective(set.objective, set.x_start, grad, min_repeats, min_seconds, &r->main)) != HF_SUCCESS)
        goto done;
    r->start_score = r->main.score;
    r->start_rmsd = r->n_observations > 0 && r->weight > 0.0 ? sqrt(r->start_score / r->n_observations) / r->weight
                                                            : NAN;
    fprintf(stderr, "  %d structures, %d atoms, %d fitted values, %d weighted frequencies, start RMSD %.2f cm^-1\n",
            r->n_mols, r->n_atoms, r->n_params, r->n_observations, r->start_rmsd);
    if (do_fit && (st = run_fit(&set, r)) != HF_SUCCESS)
        goto done;

    /* the other objectives on the same model, at the start values */
    for (int k = 0; k < 2; k++) {
        hf_objective_options o = hf_objective_default_options();
        if (k == 0) {
            o.frequencies = HF_OBJ_FREQUENCIES_NONE;
            o.eigenmatrix = 1;
            r->extra[k].name = "eigenmatrix";
        } else {
            r->extra[k].name = "frequencies";
        }
        if (strcmp(r->extra[k].name, r->main.name) == 0)
            continue;
        if ((st = hf_model_set_free(set.model, set.x_start)) != HF_SUCCESS)
            goto done;
        hf_objective_options *per_mol = malloc((size_t)set.n_mols * sizeof *per_mol);
        if (per_mol == NULL) {
            st = hf_error(HF_ERROR_OUT_OF_MEMORY, "fit_bench: no memory");
            goto done;
        }
        for (int m = 0; m < set.n_mols; m++)
            per_mol[m] = o;
        st = hf_objective_create(set.model, set.mols, set.n_mols, per_mol, &other);
        free(per_mol);
        if (st != HF_SUCCESS)
            goto done;
        st = time_objective(other, set.x_start, grad, min_repeats, min_seconds, &r->extra[k]);
        hf_objective_destroy(other);
        other = NULL;
        if (st != HF_SUCCESS)
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

static void json_objective(FILE *f, const objective_timing *o)
{
    fputs("{\"objective\": ", f);
    json_string(f, o->name);
    fputs(", \"score\": ", f);
    json_number(f, o->score);
    fprintf(f, ", \"n_residuals\": %lld, \"eval_s\": ", o->n_residuals);
    json_timing(f, &o->loss, NULL, 0);
    fputs(", \"grad_s\": ", f);
    json_timing(f, &o->grad, "exact gradient: loss and gradient in one objective kernel call (adjoint)", 1);
    fputs("}", f);
}

static int write_json(const char *path, const record *recs, int n, const double load_start[3], const double load_end[3],
                      int min_repeats, double min_seconds)
{
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        fprintf(stderr, "fit_bench: cannot write %s\n", path);
        return 1;
    }
    char cpu[256] = "";
    FILE *ci = fopen("/proc/cpuinfo", "r");
    if (ci != NULL) {
        char line[512];
        while (fgets(line, sizeof line, ci))
            if (strncmp(line, "model name", 10) == 0 && strchr(line, ':')) {
                snprintf(cpu, sizeof cpu, "%s", strchr(line, ':') + 2);
                cpu[strcspn(cpu, "\n")] = '\0';
                break;
            }
        fclose(ci);
    }
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
    fprintf(f, ", \"openmm_platform\": \"Reference\"},\n");
    fprintf(f, " \"settings\": {\"min_repeats\": %d, \"min_seconds\": %g, \"objective\": \"each input's objective "
               "(hessfit_objective.h); fit as `hessfit fit` runs it\"},\n \"records\": [\n",
            min_repeats, min_seconds);
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
        fputs(",\n   \"eval_s\": ", f);
        json_timing(f, &r->main.loss, NULL, 0);
        fputs(",\n   \"grad_s\": ", f);
        json_timing(f, &r->main.grad, "exact gradient: loss and gradient in one objective kernel call (adjoint)", 1);
        fputs(",\n   \"fit\": ", f);
        if (r->fitted) {
            fprintf(f, "{\"capped\": %s, \"wall_s\": ", r->fit_capped ? "true" : "false");
            json_number(f, r->fit_wall);
            fprintf(f, ", \"evaluations\": %lld, \"initial_score\": ", r->fit_evaluations);
            json_number(f, r->fit_initial);
            fputs(", \"final_score\": ", f);
            json_number(f, r->fit_final);
            fprintf(f, ", \"converged\": %s, \"message\": ", r->fit_capped ? "false" : "true");
            json_string(f, r->fit_outcome);
            fprintf(f, ", \"method\": \"%s (NLopt), scaled values, ftol_rel %g, max %lld evaluations\", "
                       "\"evaluations_per_s\": ",
                    r->fit_algorithm, r->fit_ftol, r->fit_max_evaluations);
            json_number(f, r->fit_wall > 0 ? (double)r->fit_evaluations / r->fit_wall : NAN);
            fputs("}", f);
        } else {
            fputs("null", f);
        }
        fputs(",\n   \"other_objectives\": [", f);
        int first = 1;
        for (int k = 0; k < 2; k++) {
            if (!r->extra[k].measured)
                continue;
            fputs(first ? "\n    " : ",\n    ", f);
            json_objective(f, &r->extra[k]);
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

static void print_table(const record *recs, int n)
{
    printf("hessfit, Reference platform; times are medians; the gradient is exact (one kernel call with the loss)\n\n");
    printf("| system | objective | params | freqs | start score | start RMSD cm^-1 | loss ms | loss + gradient ms "
           "| fit s | fit evals | final score | outcome |\n");
    printf("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|\n");
    for (int i = 0; i < n; i++) {
        const record *r = &recs[i];
        printf("| %s | %s | %d | %d | %.6g | %.2f | %.3g | %.3g |", r->system, r->main.name, r->n_params,
               r->n_observations, r->start_score, r->start_rmsd, 1e3 * r->main.loss.median, 1e3 * r->main.grad.median);
        if (r->fitted)
            printf(" %.3g | %lld | %.6g | %s |\n", r->fit_wall, r->fit_evaluations, r->fit_final, r->fit_outcome);
        else
            printf(" - | - | - | - |\n");
        for (int k = 0; k < 2; k++)
            if (r->extra[k].measured)
                printf("| %s | %s | %d | - | %.6g | - | %.3g | %.3g | - | - | - | - |\n", r->system, r->extra[k].name,
                       r->n_params, r->extra[k].score, 1e3 * r->extra[k].loss.median, 1e3 * r->extra[k].grad.median);
    }
}

static int usage(FILE *out, int rc)
{
    fprintf(out, "usage: fit_bench [--json FILE] [--min-repeats N] [--min-seconds S] [--no-fit] INPUT.fit ...\n"
                 "  times each input's objective (alone and with its gradient), one full fit, and the eigenmatrix\n"
                 "  and overlap frequency objectives on the same model (Reference platform)\n");
    return rc;
}

int main(int argc, char **argv)
{
    const char *json = NULL, *inputs[MAX_INPUTS];
    int n_inputs = 0, min_repeats = 30, do_fit = 1;
    double min_seconds = 2.0;
    for (int i = 1; i < argc; i++) {
        char *end = NULL;
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
            return usage(stdout, 0);
        if (strcmp(argv[i], "--json") == 0 && i + 1 < argc) {
            json = argv[++i];
        } else if (strcmp(argv[i], "--min-repeats") == 0 && i + 1 < argc) {
            long v = strtol(argv[++i], &end, 10);
            if (*end != '\0' || v < 1 || v > MAX_REPEATS)
                return usage(stderr, 2);
            min_repeats = (int)v;
        } else if (strcmp(argv[i], "--min-seconds") == 0 && i + 1 < argc) {
            min_seconds = strtod(argv[++i], &end);
            if (*end != '\0' || !isfinite(min_seconds) || min_seconds < 0.0)
                return usage(stderr, 2);
        } else if (strcmp(argv[i], "--no-fit") == 0) {
            do_fit = 0;
        } else if (argv[i][0] == '-' || n_inputs == MAX_INPUTS) {
            return usage(stderr, 2);
        } else {
            inputs[n_inputs++] = argv[i];
        }
    }
    if (n_inputs == 0)
        return usage(stderr, 2);
    if (hf_cli_load_plugins() != HF_SUCCESS) {
        fprintf(stderr, "fit_bench: %s\n", hf_last_error());
        return 1;
    }
    double load_start[3] = {0}, load_end[3] = {0};
    FILE *la = fopen("/proc/loadavg", "r");
    if (la != NULL) {
        if (fscanf(la, "%lf %lf %lf", &load_start[0], &load_start[1], &load_start[2]) != 3)
            load_start[0] = load_start[1] = load_start[2] = NAN;
        fclose(la);
    }
    record *recs = calloc((size_t)n_inputs, sizeof *recs);
    int rc = recs == NULL;
    for (int i = 0; i < n_inputs && rc == 0; i++)
        if (bench_input(inputs[i], min_repeats, min_seconds, do_fit, &recs[i]) != HF_SUCCESS) {
            fprintf(stderr, "fit_bench: %s: %s\n", inputs[i], hf_last_error());
            rc = 1;
        }
    if ((la = fopen("/proc/loadavg", "r")) != NULL) {
        if (fscanf(la, "%lf %lf %lf", &load_end[0], &load_end[1], &load_end[2]) != 3)
            load_end[0] = load_end[1] = load_end[2] = NAN;
        fclose(la);
    }
    if (rc == 0) {
        print_table(recs, n_inputs);
        if (json != NULL)
            rc = write_json(json, recs, n_inputs, load_start, load_end, min_repeats, min_seconds);
    }
    for (int i = 0; recs != NULL && i < n_inputs; i++) {
        free(recs[i].main.loss.samples);
        free(recs[i].main.grad.samples);
        for (int k = 0; k < 2; k++) {
            free(recs[i].extra[k].loss.samples);
            free(recs[i].extra[k].grad.samples);
        }
    }
    free(recs);
    return rc;
}
