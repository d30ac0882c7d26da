/* The optimiser driver (hessfit_optimize.h): the handle and its setters, the evaluation routine
 * every pass goes through (counting, checks, best point, progress, checkpoints, stop flag), one
 * NLopt pass over a subset of the parameters, the single-pass run of L-BFGS / Nelder-Mead /
 * Subplex (LM: hf_optimize_lm.c), NLopt's result codes in words, and the stop flag with its SIGINT
 * handler. */
#define _POSIX_C_SOURCE 200809L

#include "hf_optimize_internal.h"

#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* ---- names and texts ------------------------------------------------------------------------- */

const char *hessfit_opt_algorithm_name(hessfit_opt_algorithm algorithm)
{
    switch (algorithm) {
    case HESSFIT_OPT_LBFGS: return "LD_LBFGS";
    case HESSFIT_OPT_NELDER_MEAD: return "LN_NELDERMEAD";
    case HESSFIT_OPT_SUBPLEX: return "LN_SBPLX";
    case HESSFIT_OPT_GRAD_SIMP: return "GRAD_SIMP";
    case HESSFIT_OPT_SLSQP: return "LD_SLSQP";
    case HESSFIT_OPT_LM: return "LM";
    case HESSFIT_OPT_TRF: return "TRF";
    case HESSFIT_NUM_OPT_ALGORITHMS: break;
    }
    return "unknown";
}

int hessfit_opt_algorithm_is_least_squares(hessfit_opt_algorithm algorithm)
{
    return algorithm == HESSFIT_OPT_LM || algorithm == HESSFIT_OPT_TRF;
}

hessfit_status hessfit_opt_algorithm_from_name(const char *name, hessfit_opt_algorithm *algorithm)
{
    static const struct {
        const char *name;
        hessfit_opt_algorithm algorithm;
    } names[] = {{"LD_LBFGS", HESSFIT_OPT_LBFGS},       {"lbfgs", HESSFIT_OPT_LBFGS},
                 {"LN_NELDERMEAD", HESSFIT_OPT_NELDER_MEAD}, {"neldermead", HESSFIT_OPT_NELDER_MEAD},
                 {"nelder-mead", HESSFIT_OPT_NELDER_MEAD},   {"LN_SBPLX", HESSFIT_OPT_SUBPLEX},
                 {"sbplx", HESSFIT_OPT_SUBPLEX},            {"subplex", HESSFIT_OPT_SUBPLEX},
                 {"GRAD_SIMP", HESSFIT_OPT_GRAD_SIMP},      {"grad-simp", HESSFIT_OPT_GRAD_SIMP},
                 {"LD_SLSQP", HESSFIT_OPT_SLSQP},           {"slsqp", HESSFIT_OPT_SLSQP},
                 {"LM", HESSFIT_OPT_LM},                     {"levenberg-marquardt", HESSFIT_OPT_LM},
                 {"TRF", HESSFIT_OPT_TRF},                   {"trust-region-reflective", HESSFIT_OPT_TRF}};
    if (name == NULL || algorithm == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_opt_algorithm_from_name: %s is NULL",
                        name == NULL ? "name" : "algorithm");
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcasecmp(name, names[i].name) == 0) {
            *algorithm = names[i].algorithm;
            return HESSFIT_SUCCESS;
        }
    return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                    "unknown optimiser '%.40s' (known: LD_LBFGS, LN_NELDERMEAD, LN_SBPLX, GRAD_SIMP, LD_SLSQP, LM, TRF)", name);
}

const char *hessfit_opt_outcome_string(hessfit_opt_outcome outcome)
{
    switch (outcome) {
    case HESSFIT_OPT_CONVERGED: return "converged (NLopt's success: for L-BFGS, the gradient is below its tolerance)";
    case HESSFIT_OPT_FTOL_REACHED: return "the relative change of the loss fell below ftol_rel";
    case HESSFIT_OPT_XTOL_REACHED: return "the relative change of the parameters fell below xtol_rel";
    case HESSFIT_OPT_MAXEVAL_REACHED: return "the evaluation limit was reached";
    case HESSFIT_OPT_MAXTIME_REACHED: return "the time limit was reached";
    case HESSFIT_OPT_ROUNDOFF_LIMITED: return "roundoff errors limited progress (the point is usually still useful)";
    case HESSFIT_OPT_STOPPED: return "stopped on request (stop flag, Ctrl-C or the progress callback)";
    case HESSFIT_OPT_CYCLE_CONVERGED: return "a grad-simp cycle improved the loss by less than the threshold";
    case HESSFIT_OPT_MAX_CYCLES: return "the grad-simp cycle limit was reached";
    case HESSFIT_OPT_GTOL_REACHED: return "the projected gradient norm fell to gtol (LM; TRF: the Coleman-Li scaled one)";
    case HESSFIT_NUM_OPT_OUTCOMES: break;
    }
    return "unknown outcome";
}

const char *hessfit_opt_nlopt_result_string(int nlopt_result)
{
    switch (nlopt_result) {
    case NLOPT_SUCCESS: return "NLOPT_SUCCESS: converged (generic success)";
    case NLOPT_STOPVAL_REACHED: return "NLOPT_STOPVAL_REACHED: the loss reached the stop value";
    case NLOPT_FTOL_REACHED: return "NLOPT_FTOL_REACHED: the relative change of the loss fell below ftol_rel";
    case NLOPT_XTOL_REACHED: return "NLOPT_XTOL_REACHED: the relative change of the parameters fell below xtol_rel";
    case NLOPT_MAXEVAL_REACHED: return "NLOPT_MAXEVAL_REACHED: the evaluation limit was reached";
    case NLOPT_MAXTIME_REACHED: return "NLOPT_MAXTIME_REACHED: the time limit was reached";
    case NLOPT_FAILURE:
        return "NLOPT_FAILURE: generic failure (for L-BFGS usually a line search that found no decrease: "
               "a gradient that does not match the loss, or a loss that is not smooth)";
    case NLOPT_INVALID_ARGS: return "NLOPT_INVALID_ARGS: invalid arguments (bounds, start point, steps or settings)";
    case NLOPT_OUT_OF_MEMORY: return "NLOPT_OUT_OF_MEMORY: NLopt ran out of memory";
    case NLOPT_ROUNDOFF_LIMITED:
        return "NLOPT_ROUNDOFF_LIMITED: roundoff errors limited progress (the point is usually still useful)";
    case NLOPT_FORCED_STOP: return "NLOPT_FORCED_STOP: stopped by nlopt_force_stop";
    default: break;
    }
    return "unknown NLopt result";
}

/* ---- the handle -------------------------------------------------------------------------------- */

hessfit_opt_grad_simp_options hessfit_opt_grad_simp_default_options(void)
{
    hessfit_opt_grad_simp_options o;
    o.n_simplex = 3;
    o.max_cycles = 10;
    o.min_improvement = 0.01;
    o.sensitivity = HESSFIT_OPT_SENSITIVITY_Q2MM;
    o.full_maxeval = 200;
    o.simplex_maxeval = 200;
    return o;
}

hessfit_status hessfit_optimize_create(hessfit_opt_algorithm algorithm, int n, hessfit_optimize **opt)
{
    hessfit_optimize *o;
    size_t un;
    if (opt == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_optimize_create: opt is NULL");
    *opt = NULL;
    if ((int)algorithm < 0 || algorithm >= HESSFIT_NUM_OPT_ALGORITHMS)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "hessfit_optimize_create: unknown algorithm %d", (int)algorithm);
    if (n < 1 || n > HESSFIT_OPT_CHECKPOINT_MAX_N)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "hessfit_optimize_create: %d parameters (1 to %d allowed)", n,
                        HESSFIT_OPT_CHECKPOINT_MAX_N);
    un = (size_t)n;
    o = calloc(1, sizeof *o);
    if (o == NULL)
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "hessfit_optimize_create: no memory for the handle");
    /* every n-vector of the handle in one block */
    double **vectors[] = {&o->user_lo, &o->user_hi, &o->user_step, &o->scale,     &o->lo,     &o->hi,
                          &o->step,    &o->best_x,  &o->best_user, &o->best_grad, &o->x_full, &o->g_full,
                          &o->x_user,  &o->g_user,  &o->start_y,   &o->start_user, &o->score};
    const size_t n_vectors = sizeof vectors / sizeof vectors[0];
    double *block = malloc(n_vectors * un * sizeof *block);
    o->ranking = malloc(un * sizeof *o->ranking);
    if (block == NULL || o->ranking == NULL) {
        free(block);
        hessfit_optimize_destroy(o);
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "hessfit_optimize_create: no memory for %d parameters", n);
    }
    for (size_t v = 0; v < n_vectors; v++)
        *vectors[v] = block + v * un;
    for (int i = 0; i < n; i++) {
        o->user_lo[i] = -HUGE_VAL;
        o->user_hi[i] = HUGE_VAL;
        o->user_step[i] = 0.0;
        o->scale[i] = 1.0;
    }
    o->algorithm = algorithm;
    o->n = n;
    o->ftol_rel = 1e-8;
    o->gs = hessfit_opt_grad_simp_default_options();
    *opt = o;
    return HESSFIT_SUCCESS;
}

void hessfit_optimize_destroy(hessfit_optimize *opt)
{
    if (opt == NULL)
        return;
    free(opt->user_lo); /* the block of every n-vector */
    free(opt->ranking);
    free(opt->cycles);
    free(opt->jtj_user); /* with best_jtj and best_jtr */
    free(opt->checkpoint_path);
    free(opt);
}

hessfit_opt_algorithm hessfit_optimize_algorithm(const hessfit_optimize *opt)
{
    return opt == NULL ? HESSFIT_NUM_OPT_ALGORITHMS : opt->algorithm;
}

int hessfit_optimize_dimension(const hessfit_optimize *opt)
{
    return opt == NULL ? 0 : opt->n;
}

#define HF_OPT_CHECK_HANDLE(opt, fn)                                                        \
    do {                                                                                    \
        if ((opt) == NULL)                                                                  \
            return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "%s: the optimiser handle is NULL", fn); \
    } while (0)

hessfit_status hessfit_optimize_set_objective(hessfit_optimize *opt, hessfit_opt_objective f, void *data)
{
    HF_OPT_CHECK_HANDLE(opt, "hessfit_optimize_set_objective");
    if (f == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_optimize_set_objective: the objective function is NULL");
    opt->f = f;
    opt->f_data = data;
    return HESSFIT_SUCCESS;
}

hessfit_status hessfit_optimize_set_least_squares(hessfit_optimize *opt, hessfit_opt_lsq f, long long n_residuals,
                                                  void *data)
{
    const size_t un = (size_t)(opt == NULL ? 0 : opt->n);
    HF_OPT_CHECK_HANDLE(opt, "hessfit_optimize_set_least_squares");
    if (f == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_optimize_set_least_squares: the objective function is NULL");
    if (n_residuals < 1)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "hessfit_optimize_set_least_squares: %lld residuals (>= 1)",
                             n_residuals);
    if (opt->jtj_user == NULL) { /* J^T J of the callback and of the best point, J^T r of the best point */
        opt->jtj_user = malloc((2 * un * un + un) * sizeof(double));
        if (opt->jtj_user == NULL)
            return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY,
                                 "hessfit_optimize_set_least_squares: no memory for J^T J of %d parameters", opt->n);
        opt->best_jtj = opt->jtj_user + un * un;
        opt->best_jtr = opt->best_jtj + un * un;
    }
    opt->lsq = f;
    opt->lsq_data = data;
    opt->n_residuals = n_residuals;
    return HESSFIT_SUCCESS;
}

hessfit_status hessfit_optimize_set_bounds(hessfit_optimize *opt, const double *lo, const double *hi)
{
    HF_OPT_CHECK_HANDLE(opt, "hessfit_optimize_set_bounds");
    for (int i = 0; i < opt->n; i++) {
        double l = lo == NULL ? -HUGE_VAL : lo[i], h = hi == NULL ? HUGE_VAL : hi[i];
        if (isnan(l) || isnan(h))
            return hessfit_error(HESSFIT_ERROR_NONFINITE, "hessfit_optimize_set_bounds: parameter %d has a NaN bound", i);
        if (l > h)
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                            "hessfit_optimize_set_bounds: parameter %d has lower bound %.17g above its upper bound %.17g",
                            i, l, h);
    }
    for (int i = 0; i < opt->n; i++) {
        opt->user_lo[i] = lo == NULL ? -HUGE_VAL : lo[i];
        opt->user_hi[i] = hi == NULL ? HUGE_VAL : hi[i];
    }
    return HESSFIT_SUCCESS;
}

hessfit_status hessfit_optimize_set_initial_step(hessfit_optimize *opt, const double *step)
{
    HF_OPT_CHECK_HANDLE(opt, "hessfit_optimize_set_initial_step");
    if (step == NULL) {
        opt->have_steps = 0;
        return HESSFIT_SUCCESS;
    }
    for (int i = 0; i < opt->n; i++)
        if (!isfinite(step[i]) || step[i] <= 0.0)
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                            "hessfit_optimize_set_initial_step: the step of parameter %d is %g (must be finite and > 0)", i,
                            step[i]);
    memcpy(opt->user_step, step, (size_t)opt->n * sizeof *step);
    opt->have_steps = 1;
    return HESSFIT_SUCCESS;
}

hessfit_status hessfit_optimize_set_scale(hessfit_optimize *opt, const double *scale)
{
    HF_OPT_CHECK_HANDLE(opt, "hessfit_optimize_set_scale");
    if (scale != NULL)
        for (int i = 0; i < opt->n; i++)
            if (!isfinite(scale[i]) || scale[i] <= 0.0)
                return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                                "hessfit_optimize_set_scale: the scale of parameter %d is %g (must be finite and > 0)", i,
                                scale[i]);
    for (int i = 0; i < opt->n; i++)
        opt->scale[i] = scale == NULL ? 1.0 : scale[i];
    return HESSFIT_SUCCESS;
}

hessfit_status hessfit_optimize_set_lbfgs_memory(hessfit_optimize *opt, int pairs)
{
    HF_OPT_CHECK_HANDLE(opt, "hessfit_optimize_set_lbfgs_memory");
    if (pairs < 0)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "hessfit_optimize_set_lbfgs_memory: %d correction pairs (>= 0; 0: "
                                                   "NLopt's default)", pairs);
    opt->lbfgs_memory = pairs;
    return HESSFIT_SUCCESS;
}

static hessfit_status set_nonnegative(double value, double *dst, const char *fn)
{
    if (!(value >= 0.0) || isinf(value))
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: %g is not a finite value >= 0", fn, value);
    *dst = value;
    return HESSFIT_SUCCESS;
}

hessfit_status hessfit_optimize_set_ftol_rel(hessfit_optimize *opt, double ftol_rel)
{
    HF_OPT_CHECK_HANDLE(opt, "hessfit_optimize_set_ftol_rel");
    return set_nonnegative(ftol_rel, &opt->ftol_rel, "hessfit_optimize_set_ftol_rel");
}

hessfit_status hessfit_optimize_set_xtol_rel(hessfit_optimize *opt, double xtol_rel)
{
    HF_OPT_CHECK_HANDLE(opt, "hessfit_optimize_set_xtol_rel");
    return set_nonnegative(xtol_rel, &opt->xtol_rel, "hessfit_optimize_set_xtol_rel");
}

hessfit_status hessfit_optimize_set_gtol(hessfit_optimize *opt, double gtol)
{
    HF_OPT_CHECK_HANDLE(opt, "hessfit_optimize_set_gtol");
    return set_nonnegative(gtol, &opt->gtol, "hessfit_optimize_set_gtol");
}

hessfit_status hessfit_optimize_set_maxtime(hessfit_optimize *opt, double seconds)
{
    HF_OPT_CHECK_HANDLE(opt, "hessfit_optimize_set_maxtime");
    return set_nonnegative(seconds, &opt->maxtime, "hessfit_optimize_set_maxtime");
}

hessfit_status hessfit_optimize_set_maxeval(hessfit_optimize *opt, long long maxeval)
{
    HF_OPT_CHECK_HANDLE(opt, "hessfit_optimize_set_maxeval");
    if (maxeval < 0)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "hessfit_optimize_set_maxeval: %lld is negative", maxeval);
    opt->maxeval = maxeval;
    return HESSFIT_SUCCESS;
}

hessfit_status hessfit_optimize_set_grad_simp(hessfit_optimize *opt, const hessfit_opt_grad_simp_options *o)
{
    HF_OPT_CHECK_HANDLE(opt, "hessfit_optimize_set_grad_simp");
    if (o == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_optimize_set_grad_simp: options is NULL");
    if (o->n_simplex < 1 || o->n_simplex > HESSFIT_OPT_MAX_SIMPLEX)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "grad-simp: n_simplex %d is not in [1, %d]", o->n_simplex,
                        HESSFIT_OPT_MAX_SIMPLEX);
    if (o->max_cycles < 1)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "grad-simp: max_cycles %d is not >= 1", o->max_cycles);
    if (!(o->min_improvement >= 0.0 && o->min_improvement < 1.0))
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "grad-simp: min_improvement %g is not in [0, 1)",
                        o->min_improvement);
    if (o->sensitivity != HESSFIT_OPT_SENSITIVITY_Q2MM && o->sensitivity != HESSFIT_OPT_SENSITIVITY_GRADIENT)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "grad-simp: unknown sensitivity measure %d", (int)o->sensitivity);
    if (o->full_maxeval < 1 || o->simplex_maxeval < 1)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "grad-simp: full_maxeval %lld and simplex_maxeval %lld must be >= 1",
                        o->full_maxeval, o->simplex_maxeval);
    opt->gs = *o;
    return HESSFIT_SUCCESS;
}

hessfit_status hessfit_optimize_set_progress(hessfit_optimize *opt, hessfit_opt_progress_fn f, void *data)
{
    HF_OPT_CHECK_HANDLE(opt, "hessfit_optimize_set_progress");
    opt->progress = f;
    opt->progress_data = data;
    return HESSFIT_SUCCESS;
}

hessfit_status hessfit_optimize_set_checkpoint_file(hessfit_optimize *opt, const char *path, double interval_seconds)
{
    char *copy = NULL;
    HF_OPT_CHECK_HANDLE(opt, "hessfit_optimize_set_checkpoint_file");
    if (!(interval_seconds >= 0.0) || isinf(interval_seconds))
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "hessfit_optimize_set_checkpoint_file: interval %g is not a finite value >= 0",
                        interval_seconds);
    if (path != NULL) {
        if (path[0] == '\0')
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "hessfit_optimize_set_checkpoint_file: empty path");
        copy = malloc(strlen(path) + 1);
        if (copy == NULL)
            return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "hessfit_optimize_set_checkpoint_file: no memory for the path");
        strcpy(copy, path);
    }
    free(opt->checkpoint_path);
    opt->checkpoint_path = copy;
    opt->checkpoint_interval = interval_seconds;
    return HESSFIT_SUCCESS;
}

hessfit_status hessfit_optimize_best(const hessfit_optimize *opt, double *x, double *loss)
{
    HF_OPT_CHECK_HANDLE(opt, "hessfit_optimize_best");
    if (!opt->have_best)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "hessfit_optimize_best: no evaluation has succeeded yet");
    if (x != NULL)
        memcpy(x, opt->best_user, (size_t)opt->n * sizeof *x);
    if (loss != NULL)
        *loss = opt->best_loss;
    return HESSFIT_SUCCESS;
}

hessfit_status hessfit_optimize_best_normal_equations(const hessfit_optimize *opt, double *jtj, double *jtr,
                                                      long long *n_residuals)
{
    HF_OPT_CHECK_HANDLE(opt, "hessfit_optimize_best_normal_equations");
    if (!opt->have_best || !opt->best_lsq_valid)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "hessfit_optimize_best_normal_equations: the best point %s",
                             opt->have_best ? "was not evaluated with its normal equations (an LM run evaluates them)"
                                            : "is not known yet (no evaluation has succeeded)");
    if (jtj != NULL)
        memcpy(jtj, opt->best_jtj, (size_t)opt->n * (size_t)opt->n * sizeof *jtj);
    if (jtr != NULL)
        memcpy(jtr, opt->best_jtr, (size_t)opt->n * sizeof *jtr);
    if (n_residuals != NULL)
        *n_residuals = opt->n_residuals;
    return HESSFIT_SUCCESS;
}

int hessfit_optimize_n_cycles(const hessfit_optimize *opt)
{
    return opt == NULL ? 0 : opt->n_cycles;
}

hessfit_status hessfit_optimize_cycle(const hessfit_optimize *opt, int i, hessfit_opt_cycle *cycle)
{
    HF_OPT_CHECK_HANDLE(opt, "hessfit_optimize_cycle");
    if (cycle == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_optimize_cycle: cycle is NULL");
    if (i < 0 || i >= opt->n_cycles)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "hessfit_optimize_cycle: cycle %d of %d", i, opt->n_cycles);
    *cycle = opt->cycles[i];
    return HESSFIT_SUCCESS;
}

hessfit_status hessfit_optimize_sensitivity_ranking(const hessfit_optimize *opt, int *ranking, double *score)
{
    HF_OPT_CHECK_HANDLE(opt, "hessfit_optimize_sensitivity_ranking");
    if (!opt->have_ranking)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "hessfit_optimize_sensitivity_ranking: no sensitivity analysis has run");
    if (ranking != NULL)
        memcpy(ranking, opt->ranking, (size_t)opt->n * sizeof *ranking);
    if (score != NULL)
        memcpy(score, opt->score, (size_t)opt->n * sizeof *score);
    return HESSFIT_SUCCESS;
}

/* ---- the stop flag ------------------------------------------------------------------------------ */

static volatile sig_atomic_t hf_opt_stop_flag = 0;

void hessfit_optimize_request_stop(void)
{
    hf_opt_stop_flag = 1;
}

void hessfit_optimize_clear_stop(void)
{
    hf_opt_stop_flag = 0;
}

int hessfit_optimize_stop_requested(void)
{
    return hf_opt_stop_flag != 0;
}

static void hf_opt_on_signal(int sig)
{
    (void)sig;
    hf_opt_stop_flag = 1; /* the only thing a handler may do here; SA_RESETHAND restores the default */
}

/* A caught signal: its action before, while the handler is installed. */
typedef struct {
    int sig, installed;
    struct sigaction previous;
    const char *caller;
} hf_opt_caught;

static hf_opt_caught hf_opt_sigint = {.sig = SIGINT, .caller = "hessfit_optimize_catch_sigint"};
static hf_opt_caught hf_opt_sigterm = {.sig = SIGTERM, .caller = "hessfit_optimize_catch_sigterm"};

static hessfit_status hf_opt_catch(hf_opt_caught *c, int enable)
{
    if (enable) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = hf_opt_on_signal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESETHAND; /* a second signal ends the program */
        if (sigaction(c->sig, &sa, c->installed ? NULL : &c->previous) != 0)
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: sigaction failed", c->caller);
        c->installed = 1;
    } else if (c->installed) {
        if (sigaction(c->sig, &c->previous, NULL) != 0)
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: sigaction failed", c->caller);
        c->installed = 0;
    }
    return HESSFIT_SUCCESS;
}

hessfit_status hessfit_optimize_catch_sigint(int enable)
{
    return hf_opt_catch(&hf_opt_sigint, enable);
}

hessfit_status hessfit_optimize_catch_sigterm(int enable)
{
    return hf_opt_catch(&hf_opt_sigterm, enable);
}

/* ---- one evaluation ----------------------------------------------------------------------------- */

const char *hessfit_opt_phase_name(hessfit_opt_phase phase)
{
    switch (phase) {
    case HESSFIT_OPT_PHASE_MAIN: return "run";
    case HESSFIT_OPT_PHASE_FULL: return "full pass";
    case HESSFIT_OPT_PHASE_SENSITIVITY: return "sensitivity analysis";
    case HESSFIT_OPT_PHASE_SIMPLEX: return "simplex pass";
    }
    return "pass";
}

double hf_opt_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int hf_opt_request_stop_reason(hessfit_optimize *opt, hessfit_opt_outcome reason)
{
    if (!opt->stop) {
        opt->stop = 1;
        opt->stop_reason = reason;
    }
    if (opt->current != NULL)
        nlopt_force_stop(opt->current);
    return 1;
}

/* Records an error of the run (the first one wins) and stops it. */
static void fail_run(hessfit_optimize *opt, hessfit_status status)
{
    if (opt->failure == HESSFIT_SUCCESS)
        opt->failure = status;
    opt->stop = 1;
    if (opt->current != NULL)
        nlopt_force_stop(opt->current);
}

double hf_opt_projected_gradient_norm(const hessfit_optimize *opt, const double *x, const double *g)
{
    double s = 0.0;
    for (int i = 0; i < opt->n; i++) {
        if ((x[i] <= opt->lo[i] && g[i] > 0.0) || (x[i] >= opt->hi[i] && g[i] < 0.0))
            continue;
        s += g[i] * g[i];
    }
    return sqrt(s);
}

/* x = s y, clamped into the caller's bounds (s y may round past one); the run's start exactly. */
static void to_user(const hessfit_optimize *opt, const double *y, double *x)
{
    if (memcmp(y, opt->start_y, (size_t)opt->n * sizeof *y) == 0) {
        memcpy(x, opt->start_user, (size_t)opt->n * sizeof *x);
        return;
    }
    for (int i = 0; i < opt->n; i++) {
        const double v = y[i] * opt->scale[i];
        x[i] = v < opt->user_lo[i] ? opt->user_lo[i] : v > opt->user_hi[i] ? opt->user_hi[i] : v;
        if (y[i] <= opt->lo[i]) /* a point on a bound of y is exactly on the caller's bound */
            x[i] = opt->user_lo[i];
        else if (y[i] >= opt->hi[i])
            x[i] = opt->user_hi[i];
    }
}

/* An entry of what the objective returned is not finite: the run's error naming it. */
static hf_opt_eval_result nonfinite_entry(hessfit_optimize *opt, const char *what, double value, double loss)
{
    fail_run(opt, hessfit_error(HESSFIT_ERROR_NONFINITE,
                                "objective returned %s = %g at evaluation %lld (loss %.17g) without reporting an error",
                                what, value, opt->evaluations, loss));
    return HF_OPT_EVAL_REFUSED;
}

/* The objective at y (x = s y): the loss, dL/dy when grad != NULL, and with jtj != NULL (grad then
 * too) the least-squares callback's normal equations in y; the checks and the bookkeeping. */
static hf_opt_eval_result evaluate(hessfit_optimize *opt, const double *x, double *grad, double *jtj, double *loss)
{
    const size_t un = (size_t)opt->n;
    hessfit_status st = HESSFIT_SUCCESS;
    hf_opt_eval_result ret = HF_OPT_EVAL_DONE;
    int improved = 0;
    double v, now;
    if (opt->stop)
        return HF_OPT_EVAL_REFUSED;
    if (opt->have_best) { /* a run always evaluates its start point */
        if (opt->maxeval > 0 && opt->evaluations >= opt->maxeval) {
            hf_opt_request_stop_reason(opt, HESSFIT_OPT_MAXEVAL_REACHED);
            return HF_OPT_EVAL_REFUSED;
        }
        if (opt->maxtime > 0.0 && hf_opt_now() - opt->t_start >= opt->maxtime) {
            hf_opt_request_stop_reason(opt, HESSFIT_OPT_MAXTIME_REACHED);
            return HF_OPT_EVAL_REFUSED;
        }
        if (hf_opt_stop_flag) {
            hf_opt_request_stop_reason(opt, HESSFIT_OPT_STOPPED);
            return HF_OPT_EVAL_REFUSED;
        }
    }
    to_user(opt, x, opt->x_user);
    if (jtj != NULL)
        v = opt->lsq(opt->n, opt->x_user, opt->jtj_user, opt->g_user, opt->lsq_data, &st);
    else
        v = opt->f(opt->n, opt->x_user, grad != NULL ? opt->g_user : NULL, opt->f_data, &st);
    opt->evaluations++;
    opt->run_evaluations++;
    if (st == HESSFIT_ERROR_GEOMETRY && jtj != NULL && opt->have_best) {
        /* LM's trial point: a step too long for the model (a geometry target's structure has no MM
         * minimum there); the method shortens it, so this is no failure of the run */
        opt->undefined_trials++;
        return HF_OPT_EVAL_UNDEFINED;
    }
    if (st != HESSFIT_SUCCESS) {
        char message[HESSFIT_ERROR_MESSAGE_SIZE], where[96] = "";
        snprintf(message, sizeof message, "%s", hessfit_last_error()[0] != '\0' ? hessfit_last_error() : hessfit_status_string(st));
        if (opt->cycle > 0)
            snprintf(where, sizeof where, " (grad-simp cycle %d, %s)", opt->cycle, hessfit_opt_phase_name(opt->phase));
        fail_run(opt, hessfit_error(st, "objective failed at evaluation %lld%s: %s", opt->evaluations, where, message));
        return HF_OPT_EVAL_REFUSED;
    }
    if (!isfinite(v)) {
        fail_run(opt, hessfit_error(HESSFIT_ERROR_NONFINITE,
                               "objective returned %g at evaluation %lld without reporting an error", v,
                               opt->evaluations));
        return HF_OPT_EVAL_REFUSED;
    }
    if (grad != NULL)
        for (int i = 0; i < opt->n; i++) {
            char what[64];
            if (!isfinite(opt->g_user[i])) {
                snprintf(what, sizeof what, jtj != NULL ? "J^T r entry %d" : "a gradient with entry %d", i);
                return nonfinite_entry(opt, what, opt->g_user[i], v);
            }
            /* dL/dy_i = s_i dL/dx_i; least squares: dL/dx = 2 J^T r */
            grad[i] = (jtj != NULL ? 2.0 : 1.0) * opt->g_user[i] * opt->scale[i];
        }
    if (jtj != NULL)
        for (size_t i = 0; i < un; i++)
            for (size_t j = 0; j < un; j++) {
                const double a = opt->jtj_user[i * un + j];
                char what[64];
                if (!isfinite(a)) {
                    snprintf(what, sizeof what, "J^T J entry (%zu, %zu)", i, j);
                    return nonfinite_entry(opt, what, a, v);
                }
                jtj[i * un + j] = a * opt->scale[i] * opt->scale[j]; /* J_y = J_x S */
            }
    if (!opt->have_initial) {
        opt->initial_loss = v;
        opt->have_initial = 1;
    }
    if (!opt->have_best || v < opt->best_loss) {
        memcpy(opt->best_x, x, (size_t)opt->n * sizeof *x);
        memcpy(opt->best_user, opt->x_user, (size_t)opt->n * sizeof *x);
        opt->best_loss = v;
        opt->have_best = 1;
        opt->best_grad_valid = grad != NULL;
        if (grad != NULL)
            memcpy(opt->best_grad, grad, (size_t)opt->n * sizeof *grad);
        opt->best_lsq_valid = jtj != NULL;
        if (jtj != NULL) {
            memcpy(opt->best_jtj, opt->jtj_user, un * un * sizeof *jtj);
            memcpy(opt->best_jtr, opt->g_user, un * sizeof *jtj);
        }
        opt->best_lm_lambda = opt->lm_lambda;
        improved = 1;
        opt->checkpoint_dirty = 1;
    } else if (grad != NULL && !opt->best_grad_valid && v == opt->best_loss &&
               memcmp(x, opt->best_x, (size_t)opt->n * sizeof *x) == 0) {
        memcpy(opt->best_grad, grad, (size_t)opt->n * sizeof *grad); /* the best point again, with its gradient */
        opt->best_grad_valid = 1;
        if (jtj != NULL && !opt->best_lsq_valid) { /* (a resumed LM run's start) */
            memcpy(opt->best_jtj, opt->jtj_user, un * un * sizeof *jtj);
            memcpy(opt->best_jtr, opt->g_user, un * sizeof *jtj);
            opt->best_lsq_valid = 1;
        }
    }
    *loss = v;
    now = hf_opt_now();
    if (opt->progress != NULL) {
        hessfit_opt_progress p;
        memset(&p, 0, sizeof p);
        p.event = HESSFIT_OPT_EVENT_EVALUATION;
        p.phase = opt->phase;
        p.cycle = opt->cycle;
        p.evaluations = opt->evaluations;
        p.loss = v;
        p.best_loss = opt->best_loss;
        p.new_best = improved;
        p.gradient_norm = grad != NULL ? hf_opt_projected_gradient_norm(opt, x, grad) : NAN;
        p.seconds = now - opt->t_start;
        p.evaluations_per_second = p.seconds > 0.0 ? (double)opt->run_evaluations / p.seconds : 0.0;
        p.lm_lambda = p.lm_step_norm = p.lm_predicted = p.lm_gain_ratio = NAN;
        if (opt->lm_trial.valid) {
            p.lm_lambda = opt->lm_lambda;
            p.lm_step_norm = opt->lm_trial.step_norm;
            p.lm_predicted = opt->lm_trial.predicted;
            p.lm_gain_ratio = (opt->lm_trial.from_loss - v) / opt->lm_trial.predicted;
            p.lm_free = opt->lm_trial.n_free;
        }
        if (opt->progress(&p, opt->progress_data) != 0) {
            hf_opt_request_stop_reason(opt, HESSFIT_OPT_STOPPED);
            ret = HF_OPT_EVAL_DONE_STOP;
        }
    }
    if (opt->checkpoint_path != NULL && opt->checkpoint_dirty &&
        now - opt->last_checkpoint_time >= opt->checkpoint_interval) {
        if (hf_opt_write_checkpoint(opt) != HESSFIT_SUCCESS)
            return HF_OPT_EVAL_DONE_STOP;
    }
    if (hf_opt_stop_flag) {
        hf_opt_request_stop_reason(opt, HESSFIT_OPT_STOPPED);
        ret = HF_OPT_EVAL_DONE_STOP;
    }
    return ret;
}

hf_opt_eval_result hf_opt_evaluate(hessfit_optimize *opt, const double *x, double *grad, double *loss)
{
    return evaluate(opt, x, grad, NULL, loss);
}

hf_opt_eval_result hf_opt_evaluate_lsq(hessfit_optimize *opt, const double *x, double *jtj, double *grad, double *loss)
{
    return evaluate(opt, x, grad, jtj, loss);
}

hf_opt_eval_result hf_opt_evaluate_trial(hessfit_optimize *opt, double from_loss, double step_norm, double predicted,
                                         int n_free, const double *x, double *jtj, double *grad, double *loss)
{
    opt->lm_trial.valid = 1;
    opt->lm_trial.from_loss = from_loss;
    opt->lm_trial.step_norm = step_norm;
    opt->lm_trial.predicted = predicted;
    opt->lm_trial.n_free = n_free;
    const hf_opt_eval_result result = evaluate(opt, x, grad, jtj, loss);
    opt->lm_trial.valid = 0;
    return result;
}

hessfit_status hf_opt_write_checkpoint(hessfit_optimize *opt)
{
    hessfit_opt_checkpoint cp;
    hessfit_status st;
    if (opt->checkpoint_path == NULL || !opt->have_best)
        return HESSFIT_SUCCESS;
    cp.algorithm = opt->algorithm;
    cp.n = opt->n;
    cp.x = opt->best_user;
    cp.best_loss = opt->best_loss;
    cp.evaluations = opt->evaluations;
    cp.cycle = opt->cycles_done;
    cp.lm_lambda = hessfit_opt_algorithm_is_least_squares(opt->algorithm) ? opt->best_lm_lambda : 0.0;
    st = hessfit_optimize_save_checkpoint(opt->checkpoint_path, &cp);
    if (st != HESSFIT_SUCCESS) {
        fail_run(opt, st);
        return st;
    }
    opt->checkpoint_dirty = 0;
    opt->last_checkpoint_time = hf_opt_now();
    return HESSFIT_SUCCESS;
}

void hf_opt_report_cycle(hessfit_optimize *opt, const hessfit_opt_cycle *cycle)
{
    hessfit_opt_progress p;
    if (opt->progress == NULL)
        return;
    memset(&p, 0, sizeof p);
    p.event = HESSFIT_OPT_EVENT_CYCLE;
    p.phase = opt->phase;
    p.cycle = cycle->cycle;
    p.evaluations = opt->evaluations;
    p.loss = cycle->loss_after_simplex;
    p.best_loss = opt->best_loss;
    p.gradient_norm = opt->best_grad_valid ? hf_opt_projected_gradient_norm(opt, opt->best_x, opt->best_grad) : NAN;
    p.seconds = hf_opt_now() - opt->t_start;
    p.evaluations_per_second = p.seconds > 0.0 ? (double)opt->run_evaluations / p.seconds : 0.0;
    p.cycle_info = cycle;
    p.lm_lambda = p.lm_step_norm = p.lm_predicted = p.lm_gain_ratio = NAN;
    if (opt->progress(&p, opt->progress_data) != 0)
        hf_opt_request_stop_reason(opt, HESSFIT_OPT_STOPPED);
}

/* ---- one NLopt pass ------------------------------------------------------------------------------ */

typedef struct {
    hessfit_optimize *opt;
    const int *idx; /* NULL: all parameters */
    int m;
} hf_opt_pass;

/* NLopt's objective: the subspace point into the full one, one evaluation, the gradient back. */
static double pass_objective(unsigned m, const double *xs, double *gs, void *data)
{
    hf_opt_pass *p = data;
    hessfit_optimize *opt = p->opt;
    double loss = 0.0;
    hf_opt_eval_result r;
    (void)m;
    if (p->idx == NULL)
        memcpy(opt->x_full, xs, (size_t)opt->n * sizeof *xs);
    else
        for (int k = 0; k < p->m; k++)
            opt->x_full[p->idx[k]] = xs[k];
    r = hf_opt_evaluate(opt, opt->x_full, gs != NULL ? opt->g_full : NULL, &loss);
    if (r == HF_OPT_EVAL_REFUSED) {
        /* NLopt stops at once after nlopt_force_stop; hand it something finite. */
        loss = opt->have_best ? opt->best_loss : HUGE_VAL;
        if (gs != NULL)
            memset(gs, 0, (size_t)p->m * sizeof *gs);
        if (opt->current != NULL)
            nlopt_force_stop(opt->current);
        return loss;
    }
    if (gs != NULL) {
        if (p->idx == NULL)
            memcpy(gs, opt->g_full, (size_t)opt->n * sizeof *gs);
        else
            for (int k = 0; k < p->m; k++)
                gs[k] = opt->g_full[p->idx[k]];
    }
    if (r == HF_OPT_EVAL_DONE_STOP && opt->current != NULL)
        nlopt_force_stop(opt->current);
    return loss;
}

hessfit_status hf_opt_nlopt_error(hessfit_optimize *opt, int result, const char *nlopt_message)
{
    char where[64] = "";
    char best[160] = "no evaluation succeeded";
    if (opt->cycle > 0)
        snprintf(where, sizeof where, " of grad-simp cycle %d", opt->cycle);
    if (opt->have_best)
        snprintf(best, sizeof best, "the best point so far (loss %.17g, %lld evaluations) is kept: hessfit_optimize_best",
                 opt->best_loss, opt->evaluations);
    return hessfit_error(HESSFIT_ERROR_NLOPT, "NLopt %s (%s%s) ended with %s%s%s; %s", hessfit_opt_algorithm_name(opt->algorithm),
                    hessfit_opt_phase_name(opt->phase), where, hessfit_opt_nlopt_result_string(result),
                    nlopt_message != NULL && nlopt_message[0] != '\0' ? "; NLopt says: " : "",
                    nlopt_message != NULL ? nlopt_message : "", best);
}

/* Sets one NLopt option; a failure becomes the run's error. */
static int nlopt_ok(hessfit_optimize *opt, nlopt_opt o, nlopt_result r, const char *what)
{
    if (r > 0)
        return 1;
    fail_run(opt, hessfit_error(HESSFIT_ERROR_NLOPT, "NLopt rejected %s: %s%s%s", what, hessfit_opt_nlopt_result_string(r),
                           nlopt_get_errmsg(o) != NULL ? ": " : "",
                           nlopt_get_errmsg(o) != NULL ? nlopt_get_errmsg(o) : ""));
    return 0;
}

int hf_opt_nlopt_pass(hessfit_optimize *opt, nlopt_algorithm alg, const int *idx, int m, const double *start,
                      long long pass_maxeval)
{
    hf_opt_pass pass;
    nlopt_opt o;
    double *buf, *lb, *ub, *xs, *dx;
    double minf = 0.0;
    long long cap = pass_maxeval;
    nlopt_result r;
    int ok;
    if (opt->stop)
        return NLOPT_FORCED_STOP;
    if (opt->maxeval > 0) {
        long long left = opt->maxeval - opt->evaluations;
        if (left <= 0 && opt->have_best) {
            hf_opt_request_stop_reason(opt, HESSFIT_OPT_MAXEVAL_REACHED);
            return NLOPT_FORCED_STOP;
        }
        if (left < 1)
            left = 1;
        if (cap == 0 || left < cap)
            cap = left;
    }
    if (cap > INT_MAX)
        cap = INT_MAX;
    buf = malloc(4 * (size_t)m * sizeof *buf);
    o = nlopt_create(alg, (unsigned)m);
    if (buf == NULL || o == NULL) {
        free(buf);
        if (o != NULL)
            nlopt_destroy(o);
        fail_run(opt, hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "no memory for an NLopt pass over %d parameters", m));
        return NLOPT_OUT_OF_MEMORY;
    }
    lb = buf;
    ub = buf + m;
    xs = buf + 2 * m;
    dx = buf + 3 * m;
    for (int k = 0; k < m; k++) {
        int i = idx == NULL ? k : idx[k];
        lb[k] = opt->lo[i];
        ub[k] = opt->hi[i];
        xs[k] = start[i];
        dx[k] = opt->step[i];
    }
    memcpy(opt->x_full, start, (size_t)opt->n * sizeof *start); /* the held values of a subspace pass */
    pass.opt = opt;
    pass.idx = idx;
    pass.m = m;
    ok = nlopt_ok(opt, o, nlopt_set_lower_bounds(o, lb), "the lower bounds") &&
         nlopt_ok(opt, o, nlopt_set_upper_bounds(o, ub), "the upper bounds") &&
         nlopt_ok(opt, o, nlopt_set_min_objective(o, pass_objective, &pass), "the objective") &&
         nlopt_ok(opt, o, nlopt_set_ftol_rel(o, opt->ftol_rel), "ftol_rel") &&
         nlopt_ok(opt, o, nlopt_set_xtol_rel(o, opt->xtol_rel), "xtol_rel") &&
         (cap <= 0 || nlopt_ok(opt, o, nlopt_set_maxeval(o, (int)cap), "maxeval"));
    if (ok && opt->maxtime > 0.0) {
        double left = opt->maxtime - (hf_opt_now() - opt->t_start);
        if (left <= 0.0 && opt->have_best) {
            hf_opt_request_stop_reason(opt, HESSFIT_OPT_MAXTIME_REACHED);
            nlopt_destroy(o);
            free(buf);
            return NLOPT_FORCED_STOP;
        }
        ok = nlopt_ok(opt, o, nlopt_set_maxtime(o, left > 0.0 ? left : 1e-9), "maxtime");
    }
    if (ok && alg == NLOPT_LD_LBFGS && opt->lbfgs_memory > 0)
        ok = nlopt_ok(opt, o, nlopt_set_vector_storage(o, (unsigned)opt->lbfgs_memory), "the L-BFGS memory");
    if (ok && (alg == NLOPT_LN_NELDERMEAD || alg == NLOPT_LN_SBPLX) && opt->have_steps)
        ok = nlopt_ok(opt, o, nlopt_set_initial_step(o, dx), "the initial steps");
    if (!ok) {
        nlopt_destroy(o);
        free(buf);
        return NLOPT_INVALID_ARGS;
    }
    opt->current = o;
    r = nlopt_optimize(o, xs, &minf);
    opt->current = NULL;
    if ((r == NLOPT_FAILURE || r == NLOPT_INVALID_ARGS || r == NLOPT_OUT_OF_MEMORY) && opt->failure == HESSFIT_SUCCESS) {
        /* Keep NLopt's own message; the caller decides whether it ends the run. */
        const char *msg = nlopt_get_errmsg(o);
        snprintf(opt->nlopt_message, sizeof opt->nlopt_message, "%s", msg != NULL ? msg : "");
    } else {
        opt->nlopt_message[0] = '\0';
    }
    nlopt_destroy(o);
    free(buf);
    return (int)r;
}

/* ---- the run ---------------------------------------------------------------------------------- */

/* The outcome of a single pass's NLopt result, or the run's error. */
static hessfit_status outcome_of(hessfit_optimize *opt, int r, hessfit_opt_outcome *outcome)
{
    if (opt->failure != HESSFIT_SUCCESS)
        return opt->failure;
    if (opt->stop) {
        *outcome = opt->stop_reason;
        return HESSFIT_SUCCESS;
    }
    switch (r) {
    case NLOPT_SUCCESS:
    case NLOPT_STOPVAL_REACHED: *outcome = HESSFIT_OPT_CONVERGED; return HESSFIT_SUCCESS;
    case NLOPT_FTOL_REACHED: *outcome = HESSFIT_OPT_FTOL_REACHED; return HESSFIT_SUCCESS;
    case NLOPT_XTOL_REACHED: *outcome = HESSFIT_OPT_XTOL_REACHED; return HESSFIT_SUCCESS;
    case NLOPT_MAXEVAL_REACHED: *outcome = HESSFIT_OPT_MAXEVAL_REACHED; return HESSFIT_SUCCESS;
    case NLOPT_MAXTIME_REACHED: *outcome = HESSFIT_OPT_MAXTIME_REACHED; return HESSFIT_SUCCESS;
    case NLOPT_ROUNDOFF_LIMITED: *outcome = HESSFIT_OPT_ROUNDOFF_LIMITED; return HESSFIT_SUCCESS;
    default: break;
    }
    return hf_opt_nlopt_error(opt, r, opt->nlopt_message);
}

static nlopt_algorithm nlopt_algorithm_of(hessfit_opt_algorithm a)
{
    switch (a) {
    case HESSFIT_OPT_NELDER_MEAD: return NLOPT_LN_NELDERMEAD;
    case HESSFIT_OPT_SUBPLEX: return NLOPT_LN_SBPLX;
    case HESSFIT_OPT_SLSQP: return NLOPT_LD_SLSQP;
    default: return NLOPT_LD_LBFGS;
    }
}

hessfit_status hessfit_optimize_run(hessfit_optimize *opt, double *x, hessfit_opt_result *result)
{
    hessfit_status st;
    hessfit_opt_outcome outcome = HESSFIT_OPT_CONVERGED;
    int last_nlopt = 0;
    HF_OPT_CHECK_HANDLE(opt, "hessfit_optimize_run");
    if (x == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_optimize_run: x is NULL");
    if (hessfit_opt_algorithm_is_least_squares(opt->algorithm) && opt->lsq == NULL)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                             "hessfit_optimize_run: LM and TRF need a least-squares objective (hessfit_optimize_set_least_squares)");
    if (!hessfit_opt_algorithm_is_least_squares(opt->algorithm) && opt->f == NULL)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "hessfit_optimize_run: no objective (hessfit_optimize_set_objective)");
    for (int i = 0; i < opt->n; i++) {
        if (!isfinite(x[i]))
            return hessfit_error(HESSFIT_ERROR_NONFINITE, "hessfit_optimize_run: start value of parameter %d is %g", i, x[i]);
        if (x[i] < opt->user_lo[i] || x[i] > opt->user_hi[i])
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                            "hessfit_optimize_run: start value of parameter %d, %.17g, lies outside its bounds [%.17g, %.17g]",
                            i, x[i], opt->user_lo[i], opt->user_hi[i]);
    }
    if (opt->algorithm == HESSFIT_OPT_GRAD_SIMP && !opt->have_steps)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                        "hessfit_optimize_run: grad-simp needs a step for every parameter (hessfit_optimize_set_initial_step; "
                        "hessfit_optimize_q2mm_defaults gives q2mm's)");

    /* The optimiser's variables y = x / s: bounds, steps and the start. */
    for (int i = 0; i < opt->n; i++) {
        opt->lo[i] = opt->user_lo[i] / opt->scale[i];
        opt->hi[i] = opt->user_hi[i] / opt->scale[i];
        opt->step[i] = opt->user_step[i] / opt->scale[i];
        opt->start_y[i] = x[i] / opt->scale[i];
        opt->start_y[i] = opt->start_y[i] < opt->lo[i] ? opt->lo[i] : opt->start_y[i] > opt->hi[i] ? opt->hi[i]
                                                                                                    : opt->start_y[i];
    }
    memcpy(opt->start_user, x, (size_t)opt->n * sizeof *x);

    /* A fresh run, or the continuation of a checkpoint. */
    opt->evaluations = opt->resume_pending ? opt->resume_evaluations : 0;
    opt->cycles_done = opt->resume_pending && opt->algorithm == HESSFIT_OPT_GRAD_SIMP ? opt->resume_cycle : 0;
    opt->have_best = opt->resume_pending;
    opt->best_grad_valid = 0;
    if (opt->resume_pending) {
        memcpy(opt->best_x, opt->start_y, (size_t)opt->n * sizeof *x);
        memcpy(opt->best_user, x, (size_t)opt->n * sizeof *x);
        opt->best_loss = opt->resume_loss;
    }
    opt->have_initial = opt->resume_pending;
    opt->initial_loss = opt->resume_pending ? opt->resume_loss : NAN;
    opt->best_lsq_valid = 0;
    opt->lm_lambda = opt->resume_pending ? opt->resume_lm_lambda : 0.0; /* LM: 0 takes its default */
    opt->lm_trial.valid = 0;
    opt->best_lm_lambda = opt->lm_lambda;
    opt->resume_pending = 0;
    opt->run_evaluations = 0;
    opt->undefined_trials = 0;
    opt->t_start = hf_opt_now();
    opt->last_checkpoint_time = opt->t_start;
    opt->checkpoint_dirty = 0;
    opt->current = NULL;
    opt->stop = 0;
    opt->stop_reason = HESSFIT_OPT_STOPPED;
    opt->failure = HESSFIT_SUCCESS;
    opt->n_cycles = 0;
    opt->have_ranking = 0;
    opt->cycle = 0;
    opt->nlopt_message[0] = '\0';

    if (opt->algorithm == HESSFIT_OPT_GRAD_SIMP) {
        st = hf_opt_run_grad_simp(opt, opt->start_y, &outcome, &last_nlopt);
    } else if (hessfit_opt_algorithm_is_least_squares(opt->algorithm)) {
        opt->phase = HESSFIT_OPT_PHASE_MAIN;
        st = opt->algorithm == HESSFIT_OPT_LM ? hf_opt_run_lm(opt, opt->start_y, &outcome)
                                              : hf_opt_run_trf(opt, opt->start_y, &outcome);
    } else {
        opt->phase = HESSFIT_OPT_PHASE_MAIN;
        last_nlopt = hf_opt_nlopt_pass(opt, nlopt_algorithm_of(opt->algorithm), NULL, opt->n, opt->start_y, 0);
        st = outcome_of(opt, last_nlopt, &outcome);
    }
    /* The last checkpoint: the best point whatever the ending (a failed write keeps the first error). */
    if (opt->checkpoint_path != NULL && opt->have_best) {
        if (st != HESSFIT_SUCCESS) {
            char message[HESSFIT_ERROR_MESSAGE_SIZE];
            snprintf(message, sizeof message, "%s", hessfit_last_error());
            if (hf_opt_write_checkpoint(opt) != HESSFIT_SUCCESS) { /* the run's error stays the one reported */
                char why[HESSFIT_ERROR_MESSAGE_SIZE];
                snprintf(why, sizeof why, "%s", hessfit_last_error());
                hessfit_error(st, "%s (and the checkpoint could not be written: %s)", message, why);
            } else {
                hessfit_error(st, "%s", message);
            }
        } else {
            st = hf_opt_write_checkpoint(opt);
        }
    }
    if (st != HESSFIT_SUCCESS)
        return st;
    if (!opt->have_best)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "hessfit_optimize_run: no evaluation was made");
    memcpy(x, opt->best_user, (size_t)opt->n * sizeof *x);
    if (result != NULL) {
        result->outcome = outcome;
        result->loss = opt->best_loss;
        result->initial_loss = opt->initial_loss;
        result->evaluations = opt->evaluations;
        result->run_evaluations = opt->run_evaluations;
        result->undefined_trials = opt->undefined_trials;
        result->seconds = hf_opt_now() - opt->t_start;
        result->cycles = opt->cycles_done;
        result->last_nlopt_result = last_nlopt;
        result->lm_lambda = hessfit_opt_algorithm_is_least_squares(opt->algorithm) ? opt->lm_lambda : 0.0;
    }
    return HESSFIT_SUCCESS;
}
