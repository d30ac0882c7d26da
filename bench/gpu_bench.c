/*
 * gpu_bench: the batched fit objective (objective + exact gradient for many molecules in one
 * kernel call) on the GPU platforms against the Reference platform, all rows in one run.
 * bench/gpu-bench builds it and runs the whole table; docs/benchmarks.md ("GPU benchmark").
 *
 *   ./build/bin/gpu_bench [options]          (--help lists them)
 *
 * The training set is a `hessfit fit` input (default examples/rh-enamide.fit: nine Rh-enamide
 * transition structures of 36-62 atoms, overlap-paired projected frequencies, 146 free bond and
 * angle values), loaded exactly as `hessfit fit` loads it (hf_training_set.h). A row is one fit
 * model -- one OpenMM Context -- of N molecules on one platform and precision:
 *   rh-enamide  molecule m is a replica of structure m mod 9 (its atoms, coordinates, typed terms,
 *               QM Hessian and objective options): N = 9 is the real set;
 *   smallest    N replicas of the input's smallest structure (rh-enamide: 36 atoms).
 * Replicas share their coordinates: molecules never interact (HessianForce), and every one of them
 * is assembled, diagonalised and differentiated in full.
 *
 * Timed through the public fit-model API only (hessfit_objective_evaluate), every evaluation pushing a
 * parameter vector that differs from the previous one (x_start scaled by 1 + 1e-6 s_i(k), k the
 * evaluation), as a fit does, so nothing can be reused between evaluations:
 *   objective + gradient   the input's objective with its exact gradient over every free value;
 *   loss only              the same objective without the gradient;
 *   Hessian only           a Hessian-element objective (no eigensolver) without the gradient.
 * The split of objective + gradient, from the medians:
 *   Hessian assembly = Hessian only (parameter push, assembly, element residuals, the loss);
 *   eigensolver      = loss only - Hessian only (mass weighting, projection, eigenpairs, pairing);
 *   gradient         = objective + gradient - loss only (eigenvectors, the adjoint G, the
 *                      contraction tr(G dH/dslot) over every slot, the chain rule).
 * Each timing: one untimed evaluation, then repeats until --min-repeats and --min-seconds, or
 * until --max-seconds once 3 repeats are in (slow Reference rows); the median is reported. Loss
 * only and objective + gradient are timed interleaved (one of each per round), so that a change of
 * the machine's load shifts both alike.
 *
 * Every row is checked, not only timed: its loss at the start values must be the sum of its
 * molecules' own losses (each structure alone on Reference; 1e-9 relative in double precision,
 * 1e-5 in mixed). A row that fails is marked MISMATCH (its times do not cover the whole objective)
 * and the exit status is 1. GPU rows are also compared with the Reference row of the same size
 * (loss and gradient, in the JSON).
 *
 * Before building a row it estimates the memory the row needs (MEMORY_* below, from the Hessian
 * dimensions) and fails that row with a message when the free host memory (/proc/meminfo) or the
 * free device memory (--device-memory-mib, from nvidia-smi) is smaller; the other rows still run
 * and the program exits with status 1.
 *
 * Output: the Markdown table on stdout (progress on stderr); --markdown, --csv and --json write
 * the table, one CSV line per row and every sample (rewritten after each row).
 */
#define _POSIX_C_SOURCE 200809L
#include "bench_util.h"
#include "hf_json_write.h" /* hf_put_json_string, hf_put_json_number */
#include "hf_training_set.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_LIST 8
#define MAX_ROWS 64
#define MAX_REPEATS 100000
#define FEW_REPEATS 3 /* the least a time-limited timing takes */
#define PERTURBATION 1e-6
#define LOSS_TOLERANCE_DOUBLE 1e-9

/* Memory estimate of a row, in doubles per entry of its Hessian blocks (sum over molecules of
 * d^2, d = 3 n), times MEMORY_MARGIN. Device (GPU rows, the Context's arrays): the Hessian blocks,
 * the adjoint G, the eigensolver's scratch (2 d^2, CommonHessianObjective), the QM mode vectors the
 * overlap pairing reads (up to d^2), the Hessian-element targets and weights (d^2), plus the
 * per-term Hessian values the kernels gather into the blocks (term_hessian_values). Host: the fit
 * layer's QM analysis and the targets' host copies (GPU rows), or every array (Reference rows).
 * Checked against peak RSS (docs/benchmarks.md): Reference 8.2 d^2 per added molecule; OpenCL on
 * PoCL, whose device memory is the host's, 9.3 d^2 for device and host together. */
#define MEMORY_DEVICE_PER_D2 6.0
#define MEMORY_HOST_GPU_PER_D2 4.0
#define MEMORY_HOST_REFERENCE_PER_D2 8.0
#define MEMORY_MARGIN 1.25
#define MEMORY_BASE_MIB 512.0

typedef bench_timing timing;

typedef enum { SET_REPLICAS = 0, SET_SMALLEST = 1 } set_kind;

typedef struct {
    set_kind kind;
    int n_mols;
    char platform[32], precision[16]; /* precision "" on Reference */
    /* results */
    int done, failed;
    char error[HESSFIT_ERROR_MESSAGE_SIZE];
    char device[160], precision_used[32];
    long long n_atoms, hessian_doubles, term_values, n_residuals, n_hessian_residuals;
    double model_s, objective_s, hessian_objective_s;
    double loss_start, grad_norm;
    int n_free;         /* the input's free values that the row's structures use */
    int *free_index;    /* n_free: their indices among the input's */
    double *x_start;    /* n_free start values */
    double *grad_start; /* n_free, at x_start, for the comparison with Reference */
    timing hessian_only, loss_only, with_gradient;
    double est_device_mib, est_host_mib, peak_rss_mib;
    /* against the Reference row of the same set and N (NAN: none) */
    double ref_seconds, speedup, loss_vs_ref, grad_vs_ref;
    /* the loss at the start against the sum of its molecules' own losses (check_loss) */
    double expected_loss, loss_error;
    int mismatch;
} row;

typedef struct {
    const char *input;
    const char *platforms[MAX_LIST], *precisions[MAX_LIST];
    int n_platforms, n_precisions;
    int sizes[MAX_LIST], n_sizes;
    int smallest_n, max_molecules, reference_max;
    int min_repeats;
    double min_seconds, max_seconds;
    double device_mib; /* free device memory; < 0: unknown; device_is_host: the host's */
    int device_is_host;
    const char *json, *csv, *markdown;
} options;

typedef struct {
    options opt;
    hf_training_set set;
    int smallest;               /* index of the smallest structure */
    char plugin_failures[4096]; /* OpenMM's plugin load failures, each after a newline */
    double *structure_loss;     /* per structure: its loss alone at the start (Reference) */
    row rows[MAX_ROWS];
    int n_rows;
    double load_start[3], load_end[3];
    char started_utc[32];
} bench;

/* A "key:  value kB" line of a /proc file, in MiB (NAN when absent). */
static double proc_kib_field(const char *path, const char *key)
{
    FILE *f = fopen(path, "r");
    char line[256];
    double v = NAN;
    const size_t len = strlen(key);
    if (f == NULL)
        return NAN;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, key, len) == 0 && line[len] == ':') {
            v = strtod(line + len + 1, NULL) / 1024.0;
            break;
        }
    fclose(f);
    return v;
}

/* Starts a new peak-RSS window (Linux: "5" to clear_refs resets VmHWM); 0 when it could not. */
static int reset_peak_rss(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (f == NULL)
        return 0;
    const int ok = fputs("5", f) >= 0;
    return fclose(f) == 0 && ok;
}

/* ---- options ------------------------------------------------------------------------------ */

static int usage(FILE *out, int rc)
{
    fprintf(out, "usage: gpu_bench [options]\n"
                 "  the fit objective (+ exact gradient) for N molecules in one call, per platform and precision,\n"
                 "  against Reference in the same run; the split Hessian assembly / eigensolver / gradient\n"
                 "  --input FILE.fit         training set (default examples/rh-enamide.fit)\n"
                 "  --platforms LIST         e.g. CUDA,Reference (default); OpenCL, CUDA, Reference\n"
                 "  --precisions LIST        GPU precisions (default double,mixed; also single)\n"
                 "  --sizes LIST             molecules per rh-enamide row (default 9,1000,10000)\n"
                 "  --smallest N             replicas of the smallest structure (default 10000; 0: no such row)\n"
                 "  --max-molecules N        every row at most N molecules (small runs, PoCL)\n"
                 "  --reference-max-molecules N   Reference rows only up to N molecules (default: all)\n"
                 "  --min-repeats N --min-seconds S --max-seconds S   timing budget (default 20, 1, 30)\n"
                 "  --device-memory-mib M|host    free device memory (nvidia-smi); host: the device is the CPU\n"
                 "  --markdown FILE --csv FILE --json FILE            write the results\n");
    return rc;
}

static int parse_list(char *s, const char **out, int *n)
{
    *n = 0;
    for (char *save = NULL, *tok = strtok_r(s, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
        if (*n == MAX_LIST || tok[0] == '\0')
            return 0;
        out[(*n)++] = tok;
    }
    return *n > 0;
}

static int parse_options(int argc, char **argv, options *o)
{
    static char platforms[] = "CUDA,Reference", precisions[] = "double,mixed";
    static const int sizes[] = {9, 1000, 10000};
    memset(o, 0, sizeof *o);
    o->input = HESSFIT_BENCH_SOURCE_DIR "/examples/rh-enamide.fit";
    parse_list(platforms, o->platforms, &o->n_platforms);
    parse_list(precisions, o->precisions, &o->n_precisions);
    o->n_sizes = 3;
    memcpy(o->sizes, sizes, sizeof sizes);
    o->smallest_n = 10000;
    o->max_molecules = o->reference_max = 1000000;
    o->min_repeats = 20;
    o->min_seconds = 1.0;
    o->max_seconds = 30.0;
    o->device_mib = -1.0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int ok = v != NULL;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout, 0);
            exit(0);
        } else if (strcmp(a, "--input") == 0) {
            o->input = v;
        } else if (strcmp(a, "--platforms") == 0) {
            ok = ok && parse_list(argv[i + 1], o->platforms, &o->n_platforms);
        } else if (strcmp(a, "--precisions") == 0) {
            ok = ok && parse_list(argv[i + 1], o->precisions, &o->n_precisions);
            for (int k = 0; ok && k < o->n_precisions; k++)
                ok = strcmp(o->precisions[k], "double") == 0 || strcmp(o->precisions[k], "mixed") == 0 ||
                     strcmp(o->precisions[k], "single") == 0;
        } else if (strcmp(a, "--sizes") == 0) {
            const char *items[MAX_LIST];
            ok = ok && parse_list(argv[i + 1], items, &o->n_sizes);
            for (int k = 0; ok && k < o->n_sizes; k++)
                ok = bench_parse_int(items[k], 1, 10000000, &o->sizes[k]);
        } else if (strcmp(a, "--smallest") == 0) {
            ok = ok && bench_parse_int(v, 0, 10000000, &o->smallest_n);
        } else if (strcmp(a, "--max-molecules") == 0) {
            ok = ok && bench_parse_int(v, 1, 10000000, &o->max_molecules);
        } else if (strcmp(a, "--reference-max-molecules") == 0) {
            ok = ok && bench_parse_int(v, 0, 10000000, &o->reference_max);
        } else if (strcmp(a, "--min-repeats") == 0) {
            ok = ok && bench_parse_int(v, 1, MAX_REPEATS, &o->min_repeats);
        } else if (strcmp(a, "--min-seconds") == 0) {
            ok = ok && bench_parse_double(v, 0.0, &o->min_seconds);
        } else if (strcmp(a, "--max-seconds") == 0) {
            ok = ok && bench_parse_double(v, 0.0, &o->max_seconds);
        } else if (strcmp(a, "--device-memory-mib") == 0) {
            if (ok && strcmp(v, "host") == 0)
                o->device_is_host = 1;
            else
                ok = ok && bench_parse_double(v, 0.0, &o->device_mib);
        } else if (strcmp(a, "--markdown") == 0) {
            o->markdown = v;
        } else if (strcmp(a, "--csv") == 0) {
            o->csv = v;
        } else if (strcmp(a, "--json") == 0) {
            o->json = v;
        } else {
            fprintf(stderr, "gpu_bench: unknown option '%s'\n", a);
            return 0;
        }
        if (!ok) {
            fprintf(stderr, "gpu_bench: %s needs a valid value\n", a);
            return 0;
        }
        i++;
    }
    return 1;
}

/* ---- plugins and platforms ---------------------------------------------------------------- */

/* OpenMM's own platform plugins first (CUDA, OpenCL): hessfit's GPU kernels register with the
 * platforms that exist when they load. A platform whose plugin fails (CUDA without a driver) is
 * absent; its failure is kept for the rows that ask for it. */
static hessfit_status load_plugins(bench *b)
{
    const char *dir = getenv("OPENMM_PLUGIN_DIR");
    if (dir == NULL || dir[0] == '\0')
        dir = HESSFIT_BENCH_OPENMM_PLUGIN_DIR;
    OpenMM_StringArray *loaded = OpenMM_Platform_loadPluginsFromDirectory(dir);
    OpenMM_StringArray *failures = OpenMM_Platform_getPluginLoadFailures();
    size_t used = 0;
    for (int i = 0; i < OpenMM_StringArray_getSize(failures) && used < sizeof b->plugin_failures; i++) {
        const char *f = OpenMM_StringArray_get(failures, i);
        used += (size_t)snprintf(b->plugin_failures + used, sizeof b->plugin_failures - used, "\n%s", f);
    }
    OpenMM_StringArray_destroy(loaded);
    OpenMM_StringArray_destroy(failures);
    return hf_cli_load_plugins();
}

/* Why OpenMM's plugin of platform name did not load: its library's entry among the failures. */
static const char *platform_failure(const bench *b, const char *name)
{
    static char why[512];
    char library[64];
    snprintf(library, sizeof library, "/libOpenMM%s.so:", name);
    const char *at = strstr(b->plugin_failures, library);
    if (at == NULL)
        return "OpenMM reported no failure loading its plugins";
    while (at > b->plugin_failures && at[-1] != '\n')
        at--;
    snprintf(why, sizeof why, "%.*s", (int)strcspn(at, "\n"), at);
    return why;
}

static int platform_available(const char *name)
{
    for (int i = 0; i < OpenMM_Platform_getNumPlatforms(); i++)
        if (strcmp(OpenMM_Platform_getName(OpenMM_Platform_getPlatform(i)), name) == 0)
            return 1;
    return 0;
}

/* ---- the rows ----------------------------------------------------------------------------- */

static int structure_of(const bench *b, const row *r, int m)
{
    return r->kind == SET_SMALLEST ? b->smallest : m % b->set.n_mols;
}

static const char *set_name(const row *r)
{
    return r->kind == SET_SMALLEST ? "smallest" : "rh-enamide";
}

static int is_reference(const row *r)
{
    return strcmp(r->platform, "Reference") == 0;
}

static const char *row_status(const row *r)
{
    if (!r->done)
        return "not run";
    return r->failed ? "failed" : r->mismatch ? "mismatch" : "ok";
}

static void add_row(bench *b, set_kind kind, int n, const char *platform, const char *precision)
{
    if (n > b->opt.max_molecules)
        n = b->opt.max_molecules;
    for (int i = 0; i < b->n_rows; i++) /* --max-molecules may make two rows one */
        if (b->rows[i].kind == kind && b->rows[i].n_mols == n && strcmp(b->rows[i].platform, platform) == 0 &&
            strcmp(b->rows[i].precision, precision) == 0)
            return;
    if (b->n_rows == MAX_ROWS)
        return;
    row *r = &b->rows[b->n_rows++];
    memset(r, 0, sizeof *r);
    r->kind = kind;
    r->n_mols = n;
    snprintf(r->platform, sizeof r->platform, "%s", platform);
    snprintf(r->precision, sizeof r->precision, "%s", precision);
    r->ref_seconds = r->speedup = r->loss_vs_ref = r->grad_vs_ref = r->expected_loss = r->loss_error = NAN;
    r->peak_rss_mib = NAN;
}

/* Per set and size: Reference first (the comparison), then every GPU platform and precision. */
static void plan_rows(bench *b)
{
    for (int s = 0; s <= b->opt.n_sizes; s++) {
        const set_kind kind = s < b->opt.n_sizes ? SET_REPLICAS : SET_SMALLEST;
        const int n = s < b->opt.n_sizes ? b->opt.sizes[s] : b->opt.smallest_n;
        if (n <= 0)
            continue;
        for (int p = 0; p < b->opt.n_platforms; p++)
            if (strcmp(b->opt.platforms[p], "Reference") == 0 && n <= b->opt.reference_max)
                add_row(b, kind, n, "Reference", "");
        for (int p = 0; p < b->opt.n_platforms; p++)
            if (strcmp(b->opt.platforms[p], "Reference") != 0)
                for (int q = 0; q < b->opt.n_precisions; q++)
                    add_row(b, kind, n, b->opt.platforms[p], b->opt.precisions[q]);
    }
}

/* Per-term Hessian values the GPU kernels keep before gathering them into the blocks
 * (CommonTermLists: one 3x3 block per atom pair a <= b of a term, one for a bond): 9 per bond,
 * 54 per angle, 90 per torsion or improper term -- one per Fourier triple with k != 0. */
static long long term_hessian_values(const hessfit_forcefield *ff, const hessfit_typed_molecule *t)
{
    long long v = 0;
    for (int k = 0; k < t->n_terms; k++) {
        const hessfit_typed_term *term = &t->terms[k];
        if (term->param < 0)
            continue;
        const hessfit_ff_param *p = &ff->params[term->param];
        int triples = 1;
        if (term->kind == HESSFIT_TERM_TORSION ||
            (term->kind == HESSFIT_TERM_IMPROPER && p->improper_form == HESSFIT_IMPROPER_FOURIER))
            for (int j = triples = 0; j + 2 < p->n_values; j += 3)
                triples += p->values[j] != 0.0;
        v += term->kind == HESSFIT_TERM_BOND ? 9 : term->kind == HESSFIT_TERM_ANGLE ? 54 : 90LL * triples;
    }
    return v;
}

/* The memory check: estimates in MiB, and an error when they do not fit. */
static hessfit_status check_memory(const bench *b, row *r)
{
    const double mib = 8.0 / (1024.0 * 1024.0), d2_mib = mib * (double)r->hessian_doubles;
    const int ref = is_reference(r);
    r->est_device_mib = ref ? 0.0 : MEMORY_MARGIN * (MEMORY_DEVICE_PER_D2 * d2_mib + mib * (double)r->term_values);
    r->est_host_mib =
        MEMORY_BASE_MIB + MEMORY_MARGIN * (ref ? MEMORY_HOST_REFERENCE_PER_D2 : MEMORY_HOST_GPU_PER_D2) * d2_mib;
    const double host_free = proc_kib_field("/proc/meminfo", "MemAvailable");
    const double host_need = r->est_host_mib + (b->opt.device_is_host ? r->est_device_mib : 0.0);
    if (isfinite(host_free) && host_need > host_free)
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY,
                        "%d molecules (sum of (3n)^2 = %lld Hessian entries, %.0f MiB per copy) need about %.0f MiB of "
                        "host memory%s; %.0f MiB are available: run fewer molecules (--max-molecules)",
                        r->n_mols, r->hessian_doubles, d2_mib, host_need,
                        b->opt.device_is_host && !ref ? " (the OpenCL device is the CPU: its arrays included)" : "",
                        host_free);
    if (!ref && !b->opt.device_is_host && b->opt.device_mib >= 0.0 && r->est_device_mib > b->opt.device_mib)
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY,
                        "%d molecules (sum of (3n)^2 = %lld Hessian entries, %.0f MiB per copy: blocks, adjoint, "
                        "eigensolver scratch, mode vectors, term Hessians, targets) need about %.0f MiB of device "
                        "memory; %.0f MiB are free: run fewer molecules (--max-molecules)",
                        r->n_mols, r->hessian_doubles, d2_mib, r->est_device_mib, b->opt.device_mib);
    if (!ref && !b->opt.device_is_host && b->opt.device_mib < 0.0)
        fprintf(stderr,
                "gpu_bench: free device memory unknown (--device-memory-mib): the estimate of %.0f MiB is not "
                "checked\n",
                r->est_device_mib);
    return HESSFIT_SUCCESS;
}

/* The parameter vector of evaluation k: x_start scaled by 1 + PERTURBATION s_i(k), |s| <= 1,
 * different from evaluation k - 1's in every entry. */
static void parameters(const double *x_start, int n, unsigned long long k, double *x)
{
    for (int i = 0; i < n; i++)
        x[i] = x_start[i] * (1.0 + PERTURBATION * sin(0.9 * (double)k + 1.7 * (double)i + 0.3));
}

typedef struct {
    hessfit_objective *objective;
    const double *x_start;
    double *x, *grad; /* grad NULL: the loss alone */
    int n_free;
    unsigned long long *evaluation;
    const options *opt;
} eval_loop;

static hessfit_status evaluate_next(const eval_loop *e, double *seconds)
{
    double loss;
    parameters(e->x_start, e->n_free, (*e->evaluation)++, e->x);
    const double t0 = bench_now_s();
    const hessfit_status st = hessfit_objective_evaluate(e->objective, e->x, &loss, e->grad, NULL);
    *seconds = bench_now_s() - t0;
    if (st == HESSFIT_SUCCESS && !isfinite(loss))
        return hessfit_error(HESSFIT_ERROR_NONFINITE, "the loss is %g", loss);
    return st;
}

/* Times k loops on the same objective (at most 2), interleaved -- one evaluation of each per round
 * -- so that a change of the machine's load touches all of them alike (the split subtracts their
 * medians). One untimed round first; then rounds until --min-repeats and --min-seconds, or until
 * --max-seconds once FEW_REPEATS rounds are in. */
static hessfit_status time_loops(const eval_loop *e, int k, timing *t[])
{
    const options *o = e[0].opt;
    int cap = 64, n = 0;
    double s, *samples[2] = {NULL, NULL};
    hessfit_status st = HESSFIT_SUCCESS;
    for (int j = 0; j < k; j++)
        if ((samples[j] = malloc((size_t)cap * sizeof *samples[j])) == NULL)
            st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "gpu_bench: no memory for timings");
    for (int j = 0; j < k && st == HESSFIT_SUCCESS; j++)
        st = evaluate_next(&e[j], &s); /* warm-up, not counted */
    const double start = bench_now_s();
    while (st == HESSFIT_SUCCESS && n < MAX_REPEATS) {
        const double elapsed = bench_now_s() - start;
        if ((n >= o->min_repeats && elapsed >= o->min_seconds) || (n >= FEW_REPEATS && elapsed >= o->max_seconds))
            break;
        if (n == cap) {
            cap *= 2;
            for (int j = 0; j < k && st == HESSFIT_SUCCESS; j++) {
                double *grown = realloc(samples[j], (size_t)cap * sizeof *grown);
                if (grown == NULL)
                    st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "gpu_bench: no memory for timings");
                else
                    samples[j] = grown;
            }
        }
        for (int j = 0; j < k && st == HESSFIT_SUCCESS; j++)
            if ((st = evaluate_next(&e[j], &s)) == HESSFIT_SUCCESS)
                samples[j][n] = s;
        n += st == HESSFIT_SUCCESS;
    }
    for (int j = 0; j < k; j++) {
        if (st == HESSFIT_SUCCESS)
            st = bench_timing_summarise(samples[j], n, t[j]);
        else
            free(samples[j]);
        samples[j] = NULL;
    }
    return st;
}

/* "DeviceName" and "Precision" as the Context's platform reports them (none on Reference). */
static void context_properties(hessfit_model *model, row *r)
{
    OpenMM_Context *context = hessfit_model_context(model);
    OpenMM_Platform *platform = OpenMM_Context_getPlatform(context);
    snprintf(r->device, sizeof r->device, "%s", is_reference(r) ? "host CPU, one thread" : "?");
    snprintf(r->precision_used, sizeof r->precision_used, "%s", is_reference(r) ? "double" : "?");
    if (is_reference(r))
        return;
    const char *names[2] = {"DeviceName", "Precision"};
    char *out[2] = {r->device, r->precision_used};
    const size_t size[2] = {sizeof r->device, sizeof r->precision_used};
    const OpenMM_StringArray *props = OpenMM_Platform_getPropertyNames(platform); /* the platform's */
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < OpenMM_StringArray_getSize(props); i++)
            if (strcmp(OpenMM_StringArray_get(props, i), names[k]) == 0)
                snprintf(out[k], size[k], "%s", OpenMM_Platform_getPropertyValue(platform, context, names[k]));
}

/* The input's free values whose parameter a term of the row's structures uses (a row of fewer
 * molecules than the input has structures, or of the smallest alone, may not use them all). */
static hessfit_status row_free_values(const bench *b, row *r)
{
    const hf_training_set *set = &b->set;
    const int distinct = r->kind == SET_SMALLEST ? 1 : (r->n_mols < set->n_mols ? r->n_mols : set->n_mols);
    r->free_index = malloc((size_t)set->n_free * sizeof *r->free_index);
    r->x_start = malloc((size_t)set->n_free * sizeof *r->x_start);
    r->grad_start = malloc((size_t)set->n_free * sizeof *r->grad_start);
    if (r->free_index == NULL || r->x_start == NULL || r->grad_start == NULL)
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "no memory for %d free values", set->n_free);
    for (int i = 0; i < set->n_free; i++) {
        int param, used = 0;
        hessfit_status st = hessfit_model_free_parameter(set->model, i, &param, NULL, NULL, NULL);
        if (st != HESSFIT_SUCCESS)
            return st;
        for (int m = 0; m < distinct && !used; m++) {
            const hessfit_typed_molecule *t = &set->typed[structure_of(b, r, m)];
            for (int k = 0; k < t->n_terms && !used; k++)
                used = t->terms[k].param == param;
        }
        if (used) {
            r->free_index[r->n_free] = i;
            r->x_start[r->n_free++] = set->x_start[i];
        }
    }
    return r->n_free > 0 ? HESSFIT_SUCCESS
                         : hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "the row's structures use none of the free values");
}

/* The input's model options (its functional form, MM3* or harmonic, and its nonbonded settings) on the
 * given platform and precision, the platform's default device. */
static hessfit_model_options row_model_options(const hf_training_set *set, const char *platform, const char *precision)
{
    hessfit_model_options options = set->model_options;
    const hessfit_model_options defaults = hessfit_model_default_options();
    options.platform = platform;
    options.precision = precision;
    options.device_index = defaults.device_index;
    return options;
}

/* Builds row r's model and objectives and times them. */
static hessfit_status run_row(bench *b, row *r)
{
    const hf_training_set *set = &b->set;
    const int n = r->n_mols;
    hessfit_status st = row_free_values(b, r);
    hessfit_model *model = NULL;
    hessfit_objective *objective = NULL;
    unsigned long long evaluation = 0;
    hessfit_molecule *mols = malloc((size_t)n * sizeof *mols);
    hessfit_typed_molecule *typed = malloc((size_t)n * sizeof *typed);
    hessfit_objective_options *freq = malloc((size_t)n * sizeof *freq), *hess = malloc((size_t)n * sizeof *hess);
    double *x = malloc((size_t)r->n_free * sizeof *x), *grad = malloc((size_t)r->n_free * sizeof *grad);
    if (st != HESSFIT_SUCCESS)
        goto done;
    if (mols == NULL || typed == NULL || freq == NULL || hess == NULL || x == NULL || grad == NULL) {
        st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "no memory for %d molecules", n);
        goto done;
    }
    hessfit_objective_options hessian_only = hessfit_objective_default_options();
    hessian_only.frequencies = HESSFIT_OBJ_FREQUENCIES_NONE;
    hessian_only.eigenmatrix = 0;
    hessian_only.hessian = 1;
    for (int m = 0; m < n; m++) { /* replicas: shallow copies of the set's structures */
        const int s = structure_of(b, r, m);
        mols[m] = set->mols[s];
        typed[m] = set->typed[s];
        freq[m] = set->mol_objective[s];
        hess[m] = hessian_only;
        r->n_atoms += set->mols[s].n_atoms;
        r->hessian_doubles += 9LL * set->mols[s].n_atoms * set->mols[s].n_atoms;
        r->term_values += term_hessian_values(&set->ff, &set->typed[s]);
    }
    if ((st = check_memory(b, r)) != HESSFIT_SUCCESS)
        goto done;
    if (!platform_available(r->platform)) {
        st = hessfit_error(HESSFIT_ERROR_UNSUPPORTED, "OpenMM has no %s platform on this machine (%s)", r->platform,
                      platform_failure(b, r->platform));
        goto done;
    }
    reset_peak_rss();
    hessfit_model_options mopt = row_model_options(set, r->platform, is_reference(r) ? NULL : r->precision);
    double t0 = bench_now_s();
    if ((st = hessfit_model_create(&set->ff, mols, typed, n, &mopt, &model)) != HESSFIT_SUCCESS)
        goto done;
    r->model_s = bench_now_s() - t0;
    for (int i = 0; i < r->n_free; i++) { /* the input's free values, in its order */
        int param, value;
        if ((st = hessfit_model_free_parameter(set->model, r->free_index[i], &param, &value, NULL, NULL)) != HESSFIT_SUCCESS ||
            (st = hessfit_model_add_free(model, param, value)) != HESSFIT_SUCCESS)
            goto done;
    }
    if ((st = hessfit_model_set_free(model, r->x_start)) != HESSFIT_SUCCESS)
        goto done;
    context_properties(model, r);
    if (!is_reference(r) && strcmp(r->precision_used, r->precision) != 0) {
        st = hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "asked for %s precision, the %s Context runs in '%s'", r->precision,
                      r->platform, r->precision_used);
        goto done;
    }
    fprintf(stderr, "%s x%d on %s %s (%s): %lld atoms, %lld Hessian entries, %lld term Hessian values, model %.2f s\n",
            set_name(r), n, r->platform, r->precision, r->device, r->n_atoms, r->hessian_doubles, r->term_values,
            r->model_s);

    eval_loop e = {NULL, r->x_start, x, NULL, r->n_free, &evaluation, &b->opt};
    /* Hessian only: assembly and element residuals, no eigensolver */
    t0 = bench_now_s();
    if ((st = hessfit_objective_create(model, mols, n, hess, &objective)) != HESSFIT_SUCCESS)
        goto done;
    r->hessian_objective_s = bench_now_s() - t0;
    r->n_hessian_residuals = hessfit_objective_n_residuals(objective);
    e.objective = objective;
    timing *hessian_timing[1] = {&r->hessian_only};
    if ((st = time_loops(&e, 1, hessian_timing)) != HESSFIT_SUCCESS)
        goto done;
    hessfit_objective_destroy(objective);
    objective = NULL;

    /* the input's objective: at the start (the comparison), loss only, with the gradient */
    t0 = bench_now_s();
    if ((st = hessfit_objective_create(model, mols, n, freq, &objective)) != HESSFIT_SUCCESS)
        goto done;
    r->objective_s = bench_now_s() - t0;
    r->n_residuals = hessfit_objective_n_residuals(objective);
    if ((st = hessfit_objective_evaluate(objective, r->x_start, &r->loss_start, r->grad_start, NULL)) != HESSFIT_SUCCESS)
        goto done;
    for (int i = 0; i < r->n_free; i++)
        r->grad_norm = fmax(r->grad_norm, fabs(r->grad_start[i]));
    e.objective = objective;
    eval_loop pair[2] = {e, e}; /* loss only, with the gradient: interleaved */
    pair[1].grad = grad;
    timing *pair_timing[2] = {&r->loss_only, &r->with_gradient};
    if ((st = time_loops(pair, 2, pair_timing)) != HESSFIT_SUCCESS)
        goto done;
    r->peak_rss_mib = proc_kib_field("/proc/self/status", "VmHWM");
    fprintf(stderr,
            "  objective + gradient %.4g ms, loss only %.4g ms, Hessian only %.4g ms (medians of %d, %d, %d); "
            "%.4g molecules/s; peak RSS %.0f MiB\n",
            1e3 * r->with_gradient.median, 1e3 * r->loss_only.median, 1e3 * r->hessian_only.median, r->with_gradient.n,
            r->loss_only.n, r->hessian_only.n, n / r->with_gradient.median, r->peak_rss_mib);
done:
    hessfit_objective_destroy(objective);
    hessfit_model_destroy(model);
    free(mols);
    free(typed);
    free(freq);
    free(hess);
    free(x);
    free(grad);
    return st;
}

/* Every structure's loss alone at the start values: a model and objective of that one structure
 * on Reference (the force field holds the start values). The loss is a sum over molecules, so a
 * row's loss at the start must be the sum of its molecules' losses: a row that skipped molecules,
 * or evaluated one twice, fails that check whatever its platform. */
static hessfit_status structure_losses(bench *b)
{
    const hf_training_set *set = &b->set;
    if ((b->structure_loss = calloc((size_t)set->n_mols, sizeof *b->structure_loss)) == NULL)
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "no memory");
    double sum = 0.0;
    for (int s = 0; s < set->n_mols; s++) {
        hessfit_model *model = NULL;
        hessfit_objective *objective = NULL;
        const hessfit_model_options options = row_model_options(set, "Reference", NULL);
        hessfit_status st = hessfit_model_create(&set->ff, &set->mols[s], &set->typed[s], 1, &options, &model);
        if (st == HESSFIT_SUCCESS)
            st = hessfit_objective_create(model, &set->mols[s], 1, &set->mol_objective[s], &objective);
        if (st == HESSFIT_SUCCESS)
            st = hessfit_objective_evaluate(objective, NULL, &b->structure_loss[s], NULL, NULL);
        hessfit_objective_destroy(objective);
        hessfit_model_destroy(model);
        if (st != HESSFIT_SUCCESS)
            return hessfit_error(st, "structure %d alone: %s", s + 1, hessfit_last_error());
        sum += b->structure_loss[s];
    }
    double all = 0.0; /* the same sum from the whole set's own objective */
    hessfit_status st = hessfit_objective_evaluate(set->objective, set->x_start, &all, NULL, NULL);
    if (st != HESSFIT_SUCCESS)
        return st;
    if (!(fabs(all - sum) <= LOSS_TOLERANCE_DOUBLE * fabs(all)))
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                        "the structures' own losses add up to %.17g, the training set's objective gives %.17g: the "
                        "loss check cannot be used with this input",
                        sum, all);
    return HESSFIT_SUCCESS;
}

/* Relative tolerance of the loss check per precision (double: summation order only; mixed and
 * single: the Hessian terms in float, measured 6e-7 relative for mixed on rh-enamide). */
static double loss_tolerance(const row *r)
{
    if (is_reference(r) || strcmp(r->precision, "double") == 0)
        return LOSS_TOLERANCE_DOUBLE;
    return strcmp(r->precision, "mixed") == 0 ? 1e-5 : 1e-3;
}

static void check_loss(const bench *b, row *r)
{
    r->expected_loss = 0.0;
    for (int m = 0; m < r->n_mols; m++)
        r->expected_loss += b->structure_loss[structure_of(b, r, m)];
    r->loss_error = fabs(r->loss_start - r->expected_loss) / fmax(fabs(r->expected_loss), 1e-300);
    r->mismatch = !(r->loss_error <= loss_tolerance(r));
    if (r->mismatch)
        fprintf(stderr,
                "gpu_bench: %s x%d on %s %s: MISMATCH: the loss at the start is %.17g, its %d molecules' own losses "
                "add up to %.17g (relative difference %.3g): not every molecule was evaluated\n",
                set_name(r), r->n_mols, r->platform, r->precision, r->loss_start, r->n_mols, r->expected_loss,
                r->loss_error);
}

/* Each GPU row against the Reference row of its set and size. */
static void compare_with_reference(bench *b, row *r)
{
    for (int i = 0; i < b->n_rows; i++) {
        const row *ref = &b->rows[i];
        if (!ref->done || ref->failed || !is_reference(ref) || ref->kind != r->kind || ref->n_mols != r->n_mols)
            continue;
        r->ref_seconds = ref->with_gradient.median;
        r->speedup = ref->with_gradient.median / r->with_gradient.median;
        r->loss_vs_ref = fabs(r->loss_start - ref->loss_start) / fmax(fabs(ref->loss_start), 1e-300);
        double d = 0.0;
        for (int k = 0; k < r->n_free && r->n_free == ref->n_free; k++)
            d = fmax(d, fabs(r->grad_start[k] - ref->grad_start[k]));
        r->grad_vs_ref = d / fmax(ref->grad_norm, 1e-300);
    }
}

/* ---- output ------------------------------------------------------------------------------- */

static const char SPLIT_METHOD[] =
    "medians through the public API (hessfit_objective_evaluate), a new parameter vector every evaluation: Hessian "
    "assembly = a Hessian-element objective (no eigensolver) without the gradient; eigensolver = the objective "
    "without the gradient minus that; gradient = the objective with its exact gradient minus without";

#define TARGET_SMALL_SECONDS 200e-6
#define TARGET_MOLECULES_PER_S 1e5

static const row *find_row(const bench *b, set_kind kind, int n, const char *platform, const char *precision)
{
    const row *best = NULL;
    for (int i = 0; i < b->n_rows; i++) {
        const row *r = &b->rows[i];
        if (r->done && !r->failed && r->kind == kind && (n <= 0 || r->n_mols == n) &&
            strcmp(r->platform, platform) == 0 && strcmp(r->precision, precision) == 0 &&
            (best == NULL || r->n_mols > best->n_mols))
            best = r;
    }
    return best;
}

static void put_targets(FILE *out, const bench *b)
{
    const row *small = find_row(b, SET_REPLICAS, b->set.n_mols, "CUDA", "double");
    const row *many = find_row(b, SET_SMALLEST, 0, "CUDA", "double");
    fprintf(out, "\nTargets (issue 5, on an H100, CUDA double precision):\n\n");
    if (small != NULL)
        fprintf(out, "- rh-enamide objective + gradient <= 200 us: %.1f us on %s: %s\n",
                1e6 * small->with_gradient.median, small->device,
                small->with_gradient.median <= TARGET_SMALL_SECONDS ? "met" : "NOT met");
    else
        fprintf(out, "- rh-enamide objective + gradient <= 200 us: not measured (no CUDA row in this run)\n");
    if (many != NULL)
        fprintf(out, "- >= 100,000 molecule evaluations/s, %d-atom molecules: %.0f/s (%d molecules) on %s: %s\n",
                b->set.mols[b->smallest].n_atoms, many->n_mols / many->with_gradient.median, many->n_mols, many->device,
                many->n_mols / many->with_gradient.median >= TARGET_MOLECULES_PER_S ? "met" : "NOT met");
    else
        fprintf(out,
                "- >= 100,000 molecule evaluations/s, %d-atom molecules: not measured (no CUDA row "
                "in this run)\n",
                b->set.mols[b->smallest].n_atoms);
}

static void put_markdown(FILE *out, const bench *b)
{
    char devices[512] = "";
    for (int i = 0; i < b->n_rows; i++) {
        const row *r = &b->rows[i];
        if (!r->done || r->failed || is_reference(r) || strstr(devices, r->device) != NULL)
            continue;
        const size_t len = strlen(devices);
        snprintf(devices + len, sizeof devices - len, "%s%s: %s", len ? "; " : "", r->platform, r->device);
    }
    fprintf(out,
            "hessfit gpu_bench, %s; %s (%d structures, %d free values); started %s UTC\n"
            "Devices: %s; Reference: one CPU thread. Times are medians in ms.\n"
            "Split: %s.\n\n",
            b->opt.input, b->set.settings.objective_name, b->set.n_mols, b->set.n_free, b->started_utc,
            devices[0] ? devices : "none (Reference only)", SPLIT_METHOD);
    fprintf(out, "| set | molecules | atoms | platform | precision | objective + gradient ms | molecules/s "
                 "| Hessian assembly ms | eigensolver ms | gradient ms | Reference ms | x Reference "
                 "| loss check | repeats |\n"
                 "|---|--:|--:|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
    for (int i = 0; i < b->n_rows; i++) {
        const row *r = &b->rows[i];
        char set[48];
        if (r->kind == SET_SMALLEST)
            snprintf(set, sizeof set, "%d-atom", b->set.mols[b->smallest].n_atoms);
        else
            snprintf(set, sizeof set, "rh-enamide");
        fprintf(out, "| %s | %d | %lld | %s | %s |", set, r->n_mols, r->n_atoms, r->platform,
                is_reference(r) ? "double" : r->precision);
        if (!r->done) {
            fprintf(out, " not run | | | | | | | | |\n");
            continue;
        }
        if (r->failed) {
            char why[sizeof r->error];
            snprintf(why, sizeof why, "%s", r->error);
            for (char *c = why; *c; c++)
                if (*c == '|' || *c == '\n')
                    *c = '/';
            fprintf(out, " FAILED: %s | | | | | | | | |\n", why);
            continue;
        }
        const double g = r->with_gradient.median, l = r->loss_only.median, h = r->hessian_only.median;
        fprintf(out, " %.4g | %.4g | %.4g | %.4g | %.4g |", 1e3 * g, r->n_mols / g, 1e3 * h, 1e3 * (l - h),
                1e3 * (g - l));
        if (is_reference(r))
            fprintf(out, " - | 1 |");
        else if (isfinite(r->speedup))
            fprintf(out, " %.4g | %.3g |", 1e3 * r->ref_seconds, r->speedup);
        else
            fprintf(out, " - | - |");
        fprintf(out, " %.1e%s |", r->loss_error, r->mismatch ? " MISMATCH" : "");
        fprintf(out, " %d / %d / %d |\n", r->with_gradient.n, r->loss_only.n, r->hessian_only.n);
    }
    fprintf(out, "\nrepeats: objective + gradient / loss only / Hessian only. loss check: relative difference between "
                 "the row's loss at the start values and the sum of its molecules' own losses (each structure alone "
                 "on Reference); tolerance 1e-9 in double precision, 1e-5 in mixed.\n");
    int mismatches = 0;
    for (int i = 0; i < b->n_rows; i++)
        mismatches += b->rows[i].done && !b->rows[i].failed && b->rows[i].mismatch;
    if (mismatches > 0)
        fprintf(out,
                "\nWARNING: %d row(s) marked MISMATCH computed another loss than the sum of their molecules' "
                "losses: they did not evaluate every molecule, so their times are not those of the whole "
                "objective.\n",
                mismatches);
    put_targets(out, b);
}

static void put_number(hessfit_atomic_file *out, double x)
{
    if (isfinite(x))
        hessfit_atomic_file_printf(out, "%.9g", x);
    else
        hessfit_atomic_file_printf(out, "%s", "");
}

static hessfit_status write_csv(hessfit_atomic_file *out, void *context)
{
    const bench *b = context;
    hessfit_atomic_file_printf(
        out, "set,molecules,atoms,platform,precision,device,status,grad_median_s,grad_min_s,grad_n,"
             "loss_median_s,loss_n,hessian_median_s,hessian_n,molecules_per_s,assembly_s,"
             "eigensolver_s,gradient_s,reference_grad_median_s,speedup_vs_reference,loss,expected_loss,loss_check,"
             "loss_rel_diff_vs_reference,grad_rel_diff_vs_reference,model_create_s,"
             "objective_create_s,peak_rss_mib,est_device_mib,est_host_mib,error\n");
    for (int i = 0; i < b->n_rows; i++) {
        const row *r = &b->rows[i];
        char device[sizeof r->device], error[sizeof r->error];
        snprintf(device, sizeof device, "%s", r->device);
        snprintf(error, sizeof error, "%s", r->failed ? r->error : "");
        for (char *c = device; *c; c++)
            if (*c == ',' || *c == '"')
                *c = ' ';
        for (char *c = error; *c; c++) /* one quoted field */
            if (*c == '"' || *c == '\n')
                *c = '\'';
        hessfit_atomic_file_printf(out, "%s,%d,%lld,%s,%s,%s,%s", set_name(r), r->n_mols, r->n_atoms, r->platform,
                              is_reference(r) ? "double" : r->precision, device, row_status(r));
        const int ok = r->done && !r->failed;
        const double g = r->with_gradient.median, l = r->loss_only.median, h = r->hessian_only.median;
        const double v[] = {ok ? g : NAN,
                            ok ? r->with_gradient.min : NAN,
                            ok ? r->with_gradient.n : NAN,
                            ok ? l : NAN,
                            ok ? r->loss_only.n : NAN,
                            ok ? h : NAN,
                            ok ? r->hessian_only.n : NAN,
                            ok ? r->n_mols / g : NAN,
                            ok ? h : NAN,
                            ok ? l - h : NAN,
                            ok ? g - l : NAN,
                            ok ? r->ref_seconds : NAN,
                            ok ? r->speedup : NAN,
                            ok ? r->loss_start : NAN,
                            ok ? r->expected_loss : NAN,
                            ok ? r->loss_error : NAN,
                            r->loss_vs_ref,
                            r->grad_vs_ref,
                            ok ? r->model_s : NAN,
                            ok ? r->objective_s : NAN,
                            r->peak_rss_mib,
                            r->est_device_mib,
                            r->est_host_mib};
        for (size_t k = 0; k < sizeof v / sizeof v[0]; k++) {
            hessfit_atomic_file_printf(out, ",");
            put_number(out, v[k]);
        }
        hessfit_atomic_file_printf(out, ",\"%s\"\n", error);
    }
    return hessfit_atomic_file_status(out);
}

static void json_timing(hessfit_atomic_file *out, const char *key, const timing *t)
{
    hessfit_atomic_file_printf(out, ",\n    \"%s\": {\"n\": %d", key, t->n);
    hf_put_json_number_member(out, "median_s", t->median);
    hf_put_json_number_member(out, "min_s", t->min);
    hf_put_json_number_member(out, "max_s", t->max);
    hessfit_atomic_file_printf(out, ", \"samples_s\": [");
    for (int i = 0; i < t->n; i++)
        hessfit_atomic_file_printf(out, "%s%.6g", i ? ", " : "", t->samples[i]);
    hessfit_atomic_file_printf(out, "]}");
}

typedef struct {
    const bench *b;
    int partial;
} json_context;

static hessfit_status write_json(hessfit_atomic_file *out, void *context)
{
    const json_context *jc = context;
    const bench *b = jc->b;
    char cpu[256];
    bench_cpu_model(cpu, sizeof cpu);
    time_t now = time(NULL);
    char stamp[32];
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    hessfit_atomic_file_printf(out, "{\n \"schema\": \"hessfit-gpu-bench/1\",\n \"partial\": %s,\n \"started_utc\": ",
                          jc->partial ? "true" : "false");
    hf_put_json_string(out, b->started_utc);
    hessfit_atomic_file_printf(out, ",\n \"written_utc\": \"%s\",\n \"input\": ", stamp);
    hf_put_json_string(out, b->opt.input);
    hessfit_atomic_file_printf(out, ",\n \"objective\": ");
    hf_put_json_string(out, b->set.settings.objective_name);
    hessfit_atomic_file_printf(out,
                          ", \"structures\": %d, \"free_values\": %d, \"smallest_structure_atoms\": %d,\n"
                          " \"machine\": {\"cpu\": ",
                          b->set.n_mols, b->set.n_free, b->set.mols[b->smallest].n_atoms);
    hf_put_json_string(out, cpu);
    hessfit_atomic_file_printf(out, ", \"nproc\": %ld, \"load_average_start\": [", sysconf(_SC_NPROCESSORS_ONLN));
    for (int k = 0; k < 3; k++) {
        hessfit_atomic_file_printf(out, k ? ", " : "");
        hf_put_json_number(out, b->load_start[k]);
    }
    hessfit_atomic_file_printf(out, "], \"load_average_end\": [");
    for (int k = 0; k < 3; k++) {
        hessfit_atomic_file_printf(out, k ? ", " : "");
        hf_put_json_number(out, b->load_end[k]);
    }
    hessfit_atomic_file_printf(out, "], \"openmm_plugin_failures\": ");
    hf_put_json_string(out, b->plugin_failures + (b->plugin_failures[0] == '\n'));
    hessfit_atomic_file_printf(out, "},\n \"settings\": {\"min_repeats\": %d", b->opt.min_repeats);
    hf_put_json_number_member(out, "min_seconds", b->opt.min_seconds);
    hf_put_json_number_member(out, "max_seconds", b->opt.max_seconds);
    hf_put_json_number_member(out, "device_memory_mib", b->opt.device_is_host ? NAN : b->opt.device_mib);
    hessfit_atomic_file_printf(out, ", \"device_is_host\": %s, \"parameter_perturbation\": %g},\n \"split_method\": ",
                          b->opt.device_is_host ? "true" : "false", PERTURBATION);
    hf_put_json_string(out, SPLIT_METHOD);
    hessfit_atomic_file_printf(out, ",\n \"rows\": [");
    for (int i = 0; i < b->n_rows; i++) {
        const row *r = &b->rows[i];
        hessfit_atomic_file_printf(out,
                              "%s\n  {\"set\": \"%s\", \"molecules\": %d, \"atoms\": %lld, \"hessian_entries\": %lld, "
                              "\"platform\": ",
                              i ? "," : "", set_name(r), r->n_mols, r->n_atoms, r->hessian_doubles);
        hf_put_json_string(out, r->platform);
        hessfit_atomic_file_printf(out, ", \"precision\": ");
        hf_put_json_string(out, is_reference(r) ? "double" : r->precision);
        hessfit_atomic_file_printf(out, ", \"device\": ");
        hf_put_json_string(out, r->device);
        hessfit_atomic_file_printf(out, ", \"precision_reported\": ");
        hf_put_json_string(out, r->precision_used);
        hessfit_atomic_file_printf(out, ", \"status\": \"%s\", \"error\": ", row_status(r));
        hf_put_json_string(out, r->failed ? r->error : NULL);
        hf_put_json_number_member(out, "est_device_mib", r->est_device_mib);
        hf_put_json_number_member(out, "est_host_mib", r->est_host_mib);
        hf_put_json_number_member(out, "peak_rss_mib", r->peak_rss_mib);
        if (r->done && !r->failed) {
            const double g = r->with_gradient.median, l = r->loss_only.median, h = r->hessian_only.median;
            hessfit_atomic_file_printf(out, ",\n    \"residuals\": %lld, \"hessian_residuals\": %lld", r->n_residuals,
                                  r->n_hessian_residuals);
            hf_put_json_number_member(out, "model_create_s", r->model_s);
            hf_put_json_number_member(out, "objective_create_s", r->objective_s);
            hf_put_json_number_member(out, "hessian_objective_create_s", r->hessian_objective_s);
            hf_put_json_number_member(out, "loss_at_start", r->loss_start);
            hf_put_json_number_member(out, "max_abs_gradient_at_start", r->grad_norm);
            hessfit_atomic_file_printf(out, ",\n    \"molecules_per_s\": ");
            hf_put_json_number(out, r->n_mols / g);
            hessfit_atomic_file_printf(out, ", \"split_s\": {\"hessian_assembly\": ");
            hf_put_json_number(out, h);
            hf_put_json_number_member(out, "eigensolver", l - h);
            hf_put_json_number_member(out, "gradient", g - l);
            hessfit_atomic_file_printf(out, "}");
            hf_put_json_number_member(out, "reference_grad_median_s", r->ref_seconds);
            hf_put_json_number_member(out, "speedup_vs_reference", r->speedup);
            hf_put_json_number_member(out, "expected_loss", r->expected_loss);
            hf_put_json_number_member(out, "loss_check_rel_diff", r->loss_error);
            hf_put_json_number_member(out, "loss_rel_diff_vs_reference", r->loss_vs_ref);
            hf_put_json_number_member(out, "grad_rel_diff_vs_reference", r->grad_vs_ref);
            json_timing(out, "objective_gradient", &r->with_gradient);
            json_timing(out, "loss_only", &r->loss_only);
            json_timing(out, "hessian_only", &r->hessian_only);
        }
        hessfit_atomic_file_printf(out, "}");
    }
    hessfit_atomic_file_printf(out, "\n ]\n}\n");
    return hessfit_atomic_file_status(out);
}

/* The Markdown table as text (malloc'ed; NULL without memory). */
static char *markdown_text(const bench *b, size_t *len)
{
    char *text = NULL;
    FILE *f = open_memstream(&text, len);
    if (f == NULL)
        return NULL;
    put_markdown(f, b);
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

/* Rewrites every output file asked for (partial: rows are still to come); print: the table to stdout. */
static int write_outputs(bench *b, int partial, int print)
{
    json_context jc = {b, partial};
    int rc = 0;
    size_t len = 0;
    char *table = markdown_text(b, &len);
    bench_read_loadavg(b->load_end);
    if (table == NULL) {
        fprintf(stderr, "gpu_bench: no memory for the table\n");
        return 1;
    }
    if (b->opt.json != NULL && hessfit_atomic_write(b->opt.json, write_json, &jc) != HESSFIT_SUCCESS)
        rc = 1, fprintf(stderr, "gpu_bench: %s\n", hessfit_last_error());
    if (b->opt.csv != NULL && hessfit_atomic_write(b->opt.csv, write_csv, b) != HESSFIT_SUCCESS)
        rc = 1, fprintf(stderr, "gpu_bench: %s\n", hessfit_last_error());
    if (b->opt.markdown != NULL && hessfit_atomic_write_buffer(b->opt.markdown, table, len) != HESSFIT_SUCCESS)
        rc = 1, fprintf(stderr, "gpu_bench: %s\n", hessfit_last_error());
    if (print)
        fputs(table, stdout);
    free(table);
    return rc;
}

int main(int argc, char **argv)
{
    static bench b;
    if (!parse_options(argc, argv, &b.opt))
        return usage(stderr, 2);
    bench_read_loadavg(b.load_start);
    time_t now = time(NULL);
    strftime(b.started_utc, sizeof b.started_utc, "%Y-%m-%d %H:%M", gmtime(&now));
    if (load_plugins(&b) != HESSFIT_SUCCESS) {
        fprintf(stderr, "gpu_bench: %s\n", hessfit_last_error());
        return 1;
    }
    hf_training_set_options topt = {NULL, NULL, "-out", 0};
    if (hf_training_set_load(b.opt.input, &topt, &b.set) != HESSFIT_SUCCESS) {
        fprintf(stderr, "gpu_bench: %s\n", hessfit_last_error());
        return 1;
    }
    b.smallest = 0;
    for (int m = 1; m < b.set.n_mols; m++)
        if (b.set.mols[m].n_atoms < b.set.mols[b.smallest].n_atoms)
            b.smallest = m;
    if (structure_losses(&b) != HESSFIT_SUCCESS) {
        fprintf(stderr, "gpu_bench: %s: %s\n", b.opt.input, hessfit_last_error());
        return 1;
    }
    plan_rows(&b);
    fprintf(stderr, "%s: %d structures (the smallest has %d atoms), %d free values, objective %s; %d rows\n",
            b.opt.input, b.set.n_mols, b.set.mols[b.smallest].n_atoms, b.set.n_free, b.set.settings.objective_name,
            b.n_rows);
    int failed = 0;
    for (int i = 0; i < b.n_rows; i++) {
        row *r = &b.rows[i];
        if (run_row(&b, r) != HESSFIT_SUCCESS) {
            r->failed = 1;
            snprintf(r->error, sizeof r->error, "%s", hessfit_last_error());
            fprintf(stderr, "gpu_bench: %s x%d on %s %s: %s\n", set_name(r), r->n_mols, r->platform, r->precision,
                    r->error);
            failed++;
        }
        r->done = 1;
        if (!r->failed) {
            check_loss(&b, r);
            failed += r->mismatch;
        }
        if (!r->failed && !is_reference(r))
            compare_with_reference(&b, r);
        if (i + 1 < b.n_rows)
            write_outputs(&b, 1, 0);
    }
    const int rc = write_outputs(&b, 0, 1);
    for (int i = 0; i < b.n_rows; i++) {
        free(b.rows[i].free_index);
        free(b.rows[i].x_start);
        free(b.rows[i].grad_start);
        free(b.rows[i].with_gradient.samples);
        free(b.rows[i].loss_only.samples);
        free(b.rows[i].hessian_only.samples);
    }
    free(b.structure_loss);
    hf_training_set_free(&b.set);
    return failed ? 1 : rc;
}
