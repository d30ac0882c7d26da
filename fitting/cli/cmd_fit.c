/*
 * `hessfit fit INPUT.fit`: fit the free force-field parameters of a training set to its QM data.
 *
 * Everything is loaded and checked first (hf_training_set.h): a bad input file, a missing file, an
 * unknown parameter, an empty training set or a structure without a Hessian stops before any work,
 * and before the output directory is created. Then the optimiser runs (hessfit_optimize.h; by default
 * LM on the residual Jacobian, set up by hf_fit_optimizer_create) with a
 * progress line per iteration; Ctrl-C (SIGINT) or the time limit stops it cleanly, keeping the
 * best point so far, and a checkpoint in the output directory lets `--resume` continue. The
 * outputs, each written atomically (temporary file + rename), in the output directory:
 *   fitted.fld | fitted.frcmod   the force field in the input's format, only the fitted values changed
 *   fitted.frcmod (from a .fld)  the used parameters an AMBER frcmod can express; the others
 *                                (MM3 substructure parameters, harmonic out-of-plane terms, long type
 *                                labels) are listed in frcmod-omitted.txt and on stdout
 *   fitted.xml                   OpenMM ForceField XML of the training molecules: the harmonic model
 *                                (hessfit_ffxml.h), or with form = mm3 the MM3* model with Custom forces
 *                                and virtual sites (hessfit_mm3_ffxml.h)
 *   fitted-<k>.pdb               form = mm3: structure k for that XML (virtual sites included)
 *   report.txt, report.json      per molecule and per mode, QM against MM before and after the fit, and
 *                                the parameter uncertainties at the fitted values (hf_fit_optimizer.h)
 *   frequencies.svg              QM vs MM frequency scatter, before and after
 *   convergence.svg              loss (and gradient norm) against evaluations
 *   checkpoint.txt               the best point so far, for --resume
 *   targets.txt, targets.json    with energy or geometry targets: one row per target, before and after
 * Exit 0 when the fit ended (converged, a limit, or stopped) and its results were written; 1 on an
 * error; 2 on a usage error.
 */
#define _POSIX_C_SOURCE 200809L
#include "hessfit_atomic_file.h"
#include "hessfit_ffxml.h"
#include "hessfit_mm3_ffxml.h"
#include "hessfit_path.h"
#include "hessfit_report.h"
#include "hf_buf.h"
#include "hf_commands.h"
#include "hf_comm.h"
#include "hf_fit_optimizer.h"
#include "hf_fit_report.h"
#include "hf_shards.h"
#include "hf_training_set.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
    fprintf(out, "usage: hessfit fit INPUT.fit [--output DIR] [--resume] [--max-time SECONDS] [--help]\n"
                 "\n"
                 "Fits the free parameters of a force field to QM Hessians. INPUT.fit lists the force field, the\n"
                 "training structures and their Hessians, which parameters are free, the objective and the\n"
                 "optimiser (docs/fitting.md documents every key; examples/rh-enamide.fit and examples/ch3f.fit are\n"
                 "commented examples). Everything is read and checked before the fit starts.\n"
                 "\n"
                 "  --output DIR        where the results go (default: the input's `output`, else\n"
                 "                      <input stem>-out beside the input file)\n"
                 "  --resume            continue from DIR/checkpoint.txt (same input, same free parameters)\n"
                 "  --max-time SECONDS  stop after this wall time (replaces the input's max-time), keeping the best\n"
                 "                      point so far\n"
                 "\n"
                 "A progress line per iteration: evaluations, loss, gradient norm, evaluations per second.\n"
                 "Ctrl-C stops the fit cleanly and writes the best parameters so far (a second Ctrl-C kills it).\n"
                 "Outputs (atomic writes) in DIR: fitted.fld or fitted.frcmod (the input's format, only fitted\n"
                 "values changed), fitted.frcmod from a .fld (what an frcmod can express; the rest listed in\n"
                 "frcmod-omitted.txt; not for form = mm3), fitted.xml (OpenMM ForceField; for form = mm3 the MM3*\n"
                 "model, with fitted-<k>.pdb per structure), report.txt, report.json, frequencies.svg,\n"
                 "convergence.svg, checkpoint.txt.\n"
                 "Exit status: 0 fit ended and results written, 1 error, 2 usage error.\n");
}

static int usage_error(const char *fmt, const char *arg)
{
    return hf_cli_usage_error("fit", usage, fmt, arg);
}

/* Room for a file name of the output directory after its "/": the longest, "frcmod-omitted.txt",
 * and the terminating NUL. A path buffer is strlen(dir) + OUTPUT_NAME_SIZE bytes. */
#define OUTPUT_NAME_SIZE 20

static void join(char *out, size_t size, const char *dir, const char *name)
{
    if (snprintf(out, size, "%s/%s", dir, name) >= (int)size)
        abort(); /* a name longer than OUTPUT_NAME_SIZE - 1: a programming error */
}

/* ---- progress and history ------------------------------------------------------------------------ */

/* The convergence history keeps at most HISTORY_MAX points: when full, every other point is dropped
 * and the sampling interval doubles, so a long derivative-free run still gives a curve of the whole
 * run in a report of bounded size. */
#define HISTORY_MAX 4000
/* Derivative-free runs improve the best point thousands of times a second: at most 10 lines/s. */
#define PRINT_INTERVAL_S 0.1

typedef struct {
    hessfit_report_iteration points[HISTORY_MAX];
    int n;
    long long stride;      /* evaluations between kept points */
    double last_print;     /* run time of the last progress line */
    long long n_unprinted; /* improvements not printed since the last line */
} history;

static void record(history *h, const hessfit_opt_progress *p)
{
    if (h->stride > 1 && p->evaluations % h->stride != 0)
        return;
    if (h->n == HISTORY_MAX) {
        for (int k = 1; k < HISTORY_MAX / 2; k++)
            h->points[k] = h->points[2 * k];
        h->n = HISTORY_MAX / 2;
        h->stride *= 2;
        if (p->evaluations % h->stride != 0)
            return;
    }
    h->points[h->n].evaluation = (long)p->evaluations;
    h->points[h->n].loss = p->loss;
    h->points[h->n].gradient_norm = p->gradient_norm;
    h->n++;
}

static int on_progress(const hessfit_opt_progress *p, void *data)
{
    history *h = data;
    if (p->event == HESSFIT_OPT_EVENT_CYCLE) {
        const hessfit_opt_cycle *c = p->cycle_info;
        printf("  grad-simp cycle %d: loss %.10g -> %.10g (%.2f %% lower), %lld evaluations\n", c->cycle,
               c->loss_before, c->loss_after_simplex, 100.0 * c->improvement, c->evaluations);
        fflush(stdout);
        return 0;
    }
    record(h, p);
    if (!p->new_best)
        return 0;
    /* every L-BFGS iteration (an improving evaluation with a gradient); derivative-free improvements
     * at most every PRINT_INTERVAL_S */
    if (isnan(p->gradient_norm) && p->evaluations > 1 && p->seconds - h->last_print < PRINT_INTERVAL_S) {
        h->n_unprinted++;
        return 0;
    }
    char grad[32], skipped[48] = "";
    if (isnan(p->gradient_norm))
        snprintf(grad, sizeof grad, "n/a");
    else
        snprintf(grad, sizeof grad, "%.4e", p->gradient_norm);
    if (h->n_unprinted > 0)
        snprintf(skipped, sizeof skipped, "  (+%lld improvements)", h->n_unprinted);
    printf("  eval %7lld  loss %-18.10g |grad| %-11s %8.1f eval/s%s%s%s\n", p->evaluations, p->loss, grad,
           p->evaluations_per_second, p->phase != HESSFIT_OPT_PHASE_MAIN ? "  " : "",
           p->phase != HESSFIT_OPT_PHASE_MAIN ? hessfit_opt_phase_name(p->phase) : "", skipped);
    fflush(stdout);
    h->last_print = p->seconds;
    h->n_unprinted = 0;
    return 0;
}

/* The strongest correlated pairs the report lists. */
#define UNCERTAINTY_PAIRS 10

/* ---- outputs ------------------------------------------------------------------------------------- */

/* Whether an AMBER frcmod can hold p; why not, in words. */
static int frcmod_expressible(const hessfit_ff_param *p, char *why, size_t size)
{
    if (p->kind != HESSFIT_PARAM_BOND && p->kind != HESSFIT_PARAM_ANGLE && p->kind != HESSFIT_PARAM_TORSION &&
        p->kind != HESSFIT_PARAM_IMPROPER) {
        snprintf(why, size, "an frcmod has no %s parameters", hessfit_param_kind_name(p->kind));
        return 0;
    }
    if (p->substructure >= 0) {
        snprintf(why, size, "MM3* substructure parameter (its atoms are pattern positions, not types)");
        return 0;
    }
    if (p->kind == HESSFIT_PARAM_IMPROPER && p->improper_form != HESSFIT_IMPROPER_FOURIER) {
        snprintf(why, size, "harmonic out-of-plane term (AMBER impropers are Fourier terms)");
        return 0;
    }
    for (int t = 0; t < p->n_types; t++) {
        size_t n = strlen(p->types[t]);
        if (n == 0 || n > 2 || strpbrk(p->types[t], "- ") != NULL) {
            snprintf(why, size, "type '%s' is not a two-character AMBER type", p->types[t]);
            return 0;
        }
    }
    return 1;
}

/* The used parameters of a fitted .fld that an frcmod can express, and a list of the others. */
static void write_frcmod_part(const hf_training_set *set, const char *dir, int *n_written, int *n_omitted)
{
    char path[strlen(dir) + OUTPUT_NAME_SIZE], omitted_path[strlen(dir) + OUTPUT_NAME_SIZE], why[160], types[64];
    char title[strlen(set->ff.path) + 160];
    unsigned char *used = calloc((size_t)set->ff.n_params + 1, 1);
    hessfit_ff_param *params = calloc((size_t)set->ff.n_params + 1, sizeof *params);
    hf_buf list = {0}; /* the omitted parameters, a line each */
    int n_used = 0;
    *n_written = *n_omitted = 0;
    join(path, sizeof path, dir, "fitted.frcmod");
    join(omitted_path, sizeof omitted_path, dir, "frcmod-omitted.txt");
    if (used == NULL || params == NULL) {
        printf("  fitted.frcmod not written: no memory\n");
        goto done;
    }
    for (int m = 0; m < set->n_mols; m++)
        for (int t = 0; t < set->typed[m].n_terms; t++)
            if (set->typed[m].terms[t].param >= 0)
                used[set->typed[m].terms[t].param] = 1;
    for (int p = 0; p < set->ff.n_params; p++) {
        const hessfit_ff_param *q = &set->ff.params[p];
        if (!used[p])
            continue;
        n_used++;
        if (frcmod_expressible(q, why, sizeof why)) {
            params[*n_written] = *q;
            if (q->kind == HESSFIT_PARAM_BOND) /* the harmonic model's {k, r0}: an .fld's bond moment is not in it */
                params[*n_written].n_values = 2;
            (*n_written)++;
            continue;
        }
        hf_param_types_text(q, types, sizeof types);
        if (hf_buf_printf(&list, "line %d %s %s: %s\n", q->line, hessfit_param_kind_name(q->kind), types, why) !=
            HESSFIT_SUCCESS) {
            printf("  fitted.frcmod not written: %s\n", hessfit_last_error());
            goto done;
        }
        (*n_omitted)++;
    }
    snprintf(title, sizeof title,
             "%s fitted by hessfit: %d of the %d parameters the training set uses (the others: "
             "frcmod-omitted.txt)",
             set->ff.path, *n_written, n_used);
    hessfit_forcefield part;
    memset(&part, 0, sizeof part);
    part.format = HESSFIT_FF_FORMAT_NONE;
    part.path = title;
    part.n_params = *n_written;
    part.params = params;
    if (hessfit_frcmod_write(&part, path) != HESSFIT_SUCCESS)
        printf("  fitted.frcmod not written: %s\n", hessfit_last_error());
    if (hessfit_atomic_write_buffer(omitted_path, list.data != NULL ? list.data : "", list.len) != HESSFIT_SUCCESS)
        printf("  frcmod-omitted.txt not written: %s\n", hessfit_last_error());
    if (*n_omitted > 0) {
        printf("  fitted.frcmod holds %d of the %d used parameters; an frcmod cannot express these %d:\n", *n_written,
               n_used, *n_omitted);
        const char *end = list.data + list.len;
        for (const char *s = list.data; s != NULL && s < end;) {
            const char *nl = memchr(s, '\n', (size_t)(end - s));
            printf("    %.*s\n", (int)(nl != NULL ? nl - s : end - s), s);
            s = nl != NULL ? nl + 1 : NULL;
        }
    }
done:
    free(used);
    free(params);
    hf_buf_free(&list);
}

/* The fitted model for stock OpenMM: fitted.xml and fitted-<k>.pdb per structure, the MM3* model
 * (hessfit_mm3_ffxml.h) or the harmonic one with the model's nonbonded terms (hessfit_ffxml.h). A
 * failure is reported and the fit goes on. */
static void write_openmm(const hf_training_set *set, const char *dir)
{
    const size_t size = strlen(dir) + 32; /* "/fitted-<int>.pdb" */
    char xml[size], *names = malloc((size_t)set->n_mols * size);
    const char **pdb = malloc((size_t)set->n_mols * sizeof *pdb);
    const int mm3 = set->settings.form == HESSFIT_MODEL_FORM_MM3;
    int n_templates = 0;
    hessfit_status st;
    join(xml, size, dir, "fitted.xml");
    if (names == NULL || pdb == NULL) {
        printf("  fitted.xml and its PDBs (OpenMM) not written: no memory\n");
        goto done;
    }
    for (int m = 0; m < set->n_mols; m++) {
        snprintf(names + (size_t)m * size, size, "%s/fitted-%d.pdb", dir, m + 1);
        pdb[m] = names + (size_t)m * size;
    }
    if (mm3) {
        st = hessfit_mm3_ffxml_write(xml, pdb, &set->ff, set->mols, set->typed, set->n_mols, &n_templates);
    } else {
        const hessfit_model_options mo = hessfit_model_get_options(set->model);
        const hessfit_ffxml_options xo = {mo.nonbonded, mo.combining == HESSFIT_COMBINE_GEOMETRIC, mo.coulomb14_scale,
                                          mo.lj14_scale, pdb};
        st = hessfit_ffxml_write(xml, &set->ff, set->mols, set->typed, set->n_mols, &xo, &n_templates);
    }
    if (st != HESSFIT_SUCCESS)
        printf("  fitted.xml and its PDBs (OpenMM) not written: %s\n", hessfit_last_error());
    else
        printf("  wrote %s\n  wrote %s/fitted-1.pdb .. fitted-%d.pdb (OpenMM ForceField with %d residue template%s "
               "and a PDB per structure, %s)\n",
               xml, dir, set->n_mols, n_templates, n_templates == 1 ? "" : "s",
               mm3 ? "docs/mm3.md \"Export to OpenMM\"" : "docs/openmm.md");
done:
    free(names);
    free(pdb);
}

/* ---- the command --------------------------------------------------------------------------------- */

/* The fit on rank 0 (the only process without MPI); the other ranks serve the evaluations of
 * their blocks (hf_shards.h) and print nothing. */
static int fit(int argc, char **argv)
{
    const char *input = NULL, *output = NULL;
    int resume = 0, rc = 1;
    double max_time = -1.0;
    hf_training_set set;
    hf_training_set_options topt = {NULL, NULL, "-out", 0};
    hessfit_optimize *opt = NULL;
    hessfit_opt_checkpoint cp;
    hessfit_opt_result result;
    hf_fit_comparison cmp;
    hf_shards *shards = NULL;
    const int rank = hf_comm_rank();
    hessfit_uncertainty unc;
    hf_fit_value_names names;
    int have_unc = 0;
    history *hist = NULL;
    double *x = NULL;
    hessfit_status st;

    memset(&cp, 0, sizeof cp);
    memset(&cmp, 0, sizeof cmp);
    memset(&unc, 0, sizeof unc);
    memset(&names, 0, sizeof names);
    memset(&result, 0, sizeof result);
    static const struct option options[] = {{"output", required_argument, NULL, 'o'},
                                            {"max-time", required_argument, NULL, 't'},
                                            {"resume", no_argument, NULL, 'r'},
                                            {"help", no_argument, NULL, 'h'},
                                            {NULL, 0, NULL, 0}};
    for (int o; (o = hf_cli_getopt(argc, argv, options, "fit", usage)) != -1;) {
        if (o == HF_CLI_HELP || o == HF_CLI_USAGE_ERROR)
            return o == HF_CLI_HELP ? 0 : 2;
        if (o == 'r')
            resume = 1;
        else if (o == 'o')
            output = optarg;
        else {
            char *end;
            errno = 0;
            max_time = strtod(optarg, &end);
            if (errno != 0 || end == optarg || *end != '\0' || !isfinite(max_time) || max_time <= 0.0)
                return usage_error("--max-time needs a positive number of seconds, not '%s'", optarg);
        }
    }
    if (hf_cli_input_operand(argc, argv, "fit", usage, &input) != 0)
        return 2;

    topt.output_dir = output;
    if (hf_shards_load(input, &topt, &set) != HESSFIT_SUCCESS) { /* rank 0 reads, every rank loads */
        if (rank == 0)
            fprintf(stderr, "hessfit fit: %s\n", hessfit_last_error());
        return 1;
    }
    if (hf_shards_create(&set, &shards) != HESSFIT_SUCCESS) {
        if (rank == 0)
            fprintf(stderr, "hessfit fit: %s\n", hessfit_last_error());
        hf_training_set_free(&set);
        return 1;
    }
    if (rank != 0) {
        st = hf_shards_serve(shards);
        hf_shards_destroy(shards);
        hf_training_set_free(&set);
        return st == HESSFIT_SUCCESS ? 0 : 1;
    }
    if (max_time > 0.0)
        set.settings.max_time = max_time;
    const int n = set.n_fit;
    const char *dir = set.settings.output_dir;
    char checkpoint[strlen(dir) + OUTPUT_NAME_SIZE], path[strlen(dir) + OUTPUT_NAME_SIZE];
    join(checkpoint, sizeof checkpoint, dir, "checkpoint.txt");
    if (resume) {
        if (hessfit_optimize_load_checkpoint(checkpoint, &cp) != HESSFIT_SUCCESS) {
            fprintf(stderr, "hessfit fit: --resume: %s\n", hessfit_last_error());
            goto done;
        }
        if (cp.n != n || cp.algorithm != set.settings.algorithm) {
            fprintf(stderr,
                    "hessfit fit: --resume: %s is a checkpoint of %d values with %s, but %s frees %d values "
                    "for %s\n",
                    checkpoint, cp.n, hessfit_opt_algorithm_name(cp.algorithm), input, n,
                    hessfit_opt_algorithm_name(set.settings.algorithm));
            goto done;
        }
    }

    /* the optimiser */
    x = malloc((size_t)n * sizeof *x);
    if (x == NULL || (hist = calloc(1, sizeof *hist)) == NULL) {
        fprintf(stderr, "hessfit fit: no memory\n");
        goto done;
    }
    memcpy(x, set.x_start, (size_t)n * sizeof *x);
    hist->stride = 1;
    /* the objective over the blocks on every rank (hf_shards.h; LM: their normal equations) */
    if ((st = hf_fit_optimizer_create(&set, shards, set.settings.algorithm, &opt)) != HESSFIT_SUCCESS ||
        (st = hessfit_optimize_set_progress(opt, on_progress, hist)) != HESSFIT_SUCCESS ||
        (resume && (st = hessfit_optimize_resume(opt, &cp, x)) != HESSFIT_SUCCESS)) {
        fprintf(stderr, "hessfit fit: %s\n", hessfit_last_error());
        goto done;
    }
    if (hf_cli_make_directory(dir) != HESSFIT_SUCCESS ||
        hessfit_optimize_set_checkpoint_file(opt, checkpoint, 2.0) != HESSFIT_SUCCESS) {
        fprintf(stderr, "hessfit fit: %s\n", hessfit_last_error());
        goto done;
    }

    int n_atoms = 0, n_terms = 0;
    for (int m = 0; m < set.n_mols; m++) {
        n_atoms += set.mols[m].n_atoms;
        n_terms += set.typed[m].n_terms;
    }
    printf("hessfit fit %s\n  %d structures, %d atoms, %d typed terms; %d free values; objective %s; optimizer %s; "
           "bounds %s\n  force field %s%s; output %s\n",
           input, set.n_mols, n_atoms, n_terms, n, set.settings.objective_name,
           hessfit_opt_algorithm_name(set.settings.algorithm), set.settings.bounds ? "q2mm" : "none", set.ff.path,
           set.settings.start_seminario ? " (start: Seminario estimates)" : "", dir);
    if (resume)
        printf("  resuming from %s: %lld evaluations done, best loss %.10g\n", checkpoint, cp.evaluations,
               cp.best_loss);
    hf_shards_stats ss;
    hf_shards_get_stats(shards, &ss);
    if (ss.n_blocks > 1 || ss.n_ranks > 1)
        printf("  %d block%s of structures on %d rank%s (MPI: %s); the busiest rank has %.1f %% of the cost; %lld "
               "doubles gathered per evaluation\n",
               ss.n_blocks, ss.n_blocks == 1 ? "" : "s", ss.n_ranks, ss.n_ranks == 1 ? "" : "s",
               hf_comm_have_mpi() ? "yes" : "no", 100.0 * ss.max_block_cost_share,
               hessfit_opt_algorithm_is_least_squares(set.settings.algorithm) ? ss.packet_doubles_normal : ss.packet_doubles);
    if (strcmp(set.settings.platform, "Reference") != 0 || ss.n_ranks > 1) { /* where each rank evaluates */
        printf("  platform %s, precision %s, device %s:\n", set.settings.platform, set.settings.precision,
               hessfit_config_get(&set.config, "device", "auto"));
        for (int r = 0; r < ss.n_ranks; r++)
            printf("    %s\n", hf_shards_device(shards, r));
    }
    fflush(stdout);

    hessfit_optimize_clear_stop();
    /* Ctrl-C stops the fit cleanly; under MPI also SIGTERM, which mpirun (on Ctrl-C) and Slurm send
     * every rank: any rank's signal reaches this optimiser through the evaluations' agreement */
    const int mpi = hf_comm_size() > 1;
    hessfit_optimize_catch_sigint(1);
    if (mpi)
        hessfit_optimize_catch_sigterm(1);
    st = hessfit_optimize_run(opt, x, &result);
    hessfit_optimize_catch_sigint(0);
    hessfit_optimize_catch_sigterm(0);
    if (st != HESSFIT_SUCCESS) {
        char why[HESSFIT_ERROR_MESSAGE_SIZE];
        snprintf(why, sizeof why, "%s", hessfit_last_error());
        fprintf(stderr, "hessfit fit: the fit failed: %s\n", why);
        if (hessfit_optimize_best(opt, x, NULL) == HESSFIT_SUCCESS)
            fprintf(stderr, "hessfit fit: its best point so far is in %s\n", checkpoint);
        goto done;
    }
    const int interrupted = hessfit_optimize_stop_requested();
    printf("  %s: loss %.10g -> %.10g in %lld evaluations (%lld in this run, %.2f s, %.1f eval/s)\n",
           interrupted ? (mpi ? "stopped (Ctrl-C or SIGTERM)" : "stopped (Ctrl-C)") : "done", result.initial_loss, result.loss, result.evaluations,
           result.run_evaluations, result.seconds,
           result.seconds > 0 ? (double)result.run_evaluations / result.seconds : 0.0);
    printf("  outcome: %s\n", hessfit_opt_outcome_string(result.outcome));
    if (result.undefined_trials > 0)
        printf("  %lld trial point%s had no objective (a geometry target without an MM minimum there): rejected "
               "steps\n", result.undefined_trials, result.undefined_trials == 1 ? "" : "s");
    hf_shards_get_stats(shards, &ss);
    if ((ss.n_ranks > 1 || ss.n_blocks > 1) && ss.evaluations > 0)
        printf("  per evaluation: %.3f ms; blocks of the slowest rank %.3f ms, rank 0's %.3f ms; the rest "
               "(broadcast, gather, agreement, sums) %.3f ms = %.1f %%\n",
               1e3 * ss.seconds_total / (double)ss.evaluations, 1e3 * ss.seconds_slowest / (double)ss.evaluations,
               1e3 * ss.seconds_compute / (double)ss.evaluations,
               1e3 * (ss.seconds_total - ss.seconds_slowest) / (double)ss.evaluations,
               100.0 * (ss.seconds_total - ss.seconds_slowest) / ss.seconds_total);
    if (ss.n_ranks > 1 || ss.n_blocks > 1) { /* before the report, which runs on rank 0 alone */
        double *mib = malloc((size_t)ss.n_ranks * sizeof *mib);
        if (mib != NULL && hf_shards_peak_memory(shards, mib) == HESSFIT_SUCCESS) {
            printf("  peak memory (VmHWM) per rank:");
            for (int r = 0; r < ss.n_ranks; r++)
                printf(" %.0f MiB%s", mib[r], r + 1 < ss.n_ranks ? "," : "\n");
        }
        free(mib);
    }

    /* the outputs: before = the start values, after = the best point (x) */
    if ((st = hf_fit_compare(&set, set.x_start, x, n, &cmp)) != HESSFIT_SUCCESS) {
        fprintf(stderr, "hessfit fit: the report: %s\n", hessfit_last_error());
        goto done;
    }
    hf_fit_warn_stationarity(&set, &cmp, 1, stdout);
    /* the uncertainties at the fitted values (a failure is reported; the fit's results are still written) */
    if (hf_fit_value_names_make(&set, &names) != HESSFIT_SUCCESS ||
        hf_fit_uncertainty(&set, shards, opt, x, UNCERTAINTY_PAIRS, &unc) != HESSFIT_SUCCESS)
        printf("  the uncertainties: not computed: %s\n", hessfit_last_error());
    else
        have_unc = 1;
    if ((st = hessfit_model_set_free(set.model, x)) != HESSFIT_SUCCESS ||
        (st = hessfit_model_write_back(set.model, &set.ff)) != HESSFIT_SUCCESS) {
        fprintf(stderr, "hessfit fit: %s\n", hessfit_last_error());
        goto done;
    }
    const int is_fld = set.ff.format == HESSFIT_FF_MM3_FLD;
    if (set.ff.format == HESSFIT_FF_FFXML) {
        printf("  the fitted values of the OpenMM ForceField XML start are in fitted.xml (the training "
               "molecules' model)\n");
    } else {
        join(path, sizeof path, dir, is_fld ? "fitted.fld" : "fitted.frcmod");
        if (hessfit_forcefield_write(&set.ff, path) != HESSFIT_SUCCESS) {
            fprintf(stderr, "hessfit fit: the fitted force field: %s\n", hessfit_last_error());
            goto done;
        }
        printf("  wrote %s\n", path);
    }
    if (set.settings.form == HESSFIT_MODEL_FORM_MM3) {
        /* the harmonic frcmod would hold another model than the one fitted */
        printf("  fitted.frcmod not written: it holds the harmonic model, and this fit is of the MM3* form\n");
    } else if (is_fld) {
        int written, omitted;
        write_frcmod_part(&set, dir, &written, &omitted);
    }
    write_openmm(&set, dir);

    char status[512];
    snprintf(status, sizeof status, "%s%s",
             interrupted ? (mpi ? "stopped by Ctrl-C or SIGTERM: " : "stopped by Ctrl-C (SIGINT): ") : "",
             hessfit_opt_outcome_string(result.outcome));
    hessfit_report report;
    hf_fit_comparison_report(&cmp, &report);
    report.title = input;
    report.optimizer = hessfit_opt_algorithm_name(set.settings.algorithm);
    report.status = status;
    report.evaluations = (long)result.evaluations;
    report.wall_time_s = result.seconds;
    report.history.title = report.optimizer;
    report.history.n_points = hist->n;
    report.history.points = hist->points;
    report.uncertainty = have_unc ? &unc : NULL;
    report.uncertainty_names = names.names;
    join(path, sizeof path, dir, "convergence.svg");
    if (hf_fit_write_reports(dir, &report, &cmp) != HESSFIT_SUCCESS || hessfit_svg_convergence(path, &report.history) != HESSFIT_SUCCESS) {
        fprintf(stderr, "hessfit fit: %s\n", hessfit_last_error());
        goto done;
    }
    for (int k = 0; k < cmp.n_objectives; k++)
        printf("  %s: loss %.10g -> %.10g, RMSD %.6g -> %.6g %s\n", cmp.objectives[k].kind,
               cmp.objectives[k].loss_before, cmp.objectives[k].loss_after, cmp.objectives[k].rmsd_before,
               cmp.objectives[k].rmsd_after, cmp.objectives[k].unit);
    printf("  wrote %s/{report.txt,report.json,frequencies.svg,convergence.svg,checkpoint.txt%s}\n", dir,
           cmp.n_energies + cmp.n_geometry > 0 ? ",targets.txt,targets.json" : "");
    rc = 0;
done:
    hf_shards_finish(shards, rc == 0 ? HESSFIT_SUCCESS : HESSFIT_ERROR_INVALID_ARGUMENT);
    hf_shards_destroy(shards);
    hf_fit_comparison_free(&cmp);
    hessfit_uncertainty_free(&unc);
    hf_fit_value_names_free(&names);
    hessfit_opt_checkpoint_free(&cp);
    hessfit_optimize_destroy(opt);
    free(hist);
    free(x);
    hf_training_set_free(&set);
    return rc;
}

int hf_cmd_fit(int argc, char **argv)
{
    if (hf_comm_init(&argc, &argv) != HESSFIT_SUCCESS) {
        fprintf(stderr, "hessfit fit: %s\n", hessfit_last_error());
        return 1;
    }
    if (hf_comm_rank() != 0 && freopen("/dev/null", "w", stdout) == NULL) /* rank 0 prints */
        hf_comm_abort(1);
    const int rc = fit(argc, argv);
    hf_comm_finalize();
    return rc;
}
