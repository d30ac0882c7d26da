#ifndef HESSFIT_OPTIMIZE_H_
#define HESSFIT_OPTIMIZE_H_
/*
 * The optimiser driver of a fit (libhessfit_fitting, fitting/optimize): NLopt's L-BFGS, Nelder-Mead and Subplex, and
 * q2mm's grad-simp cycle, over any objective L(x) of n parameters -- in a fit, the free values of
 * a model in canonical units (hessfit_model.h) and the loss of an objective (hessfit_objective.h):
 *
 *     static double fit_loss(int n, const double *x, double *grad, void *data, hf_status *status)
 *     {
 *         double loss = 0.0;
 *         (void)n;
 *         *status = hf_objective_evaluate(data, x, &loss, grad, NULL);
 *         return loss;
 *     }
 *
 * Use, in NLopt's style (opaque handle, setters, run, result codes with texts):
 *
 *     hf_optimize *opt;
 *     hf_optimize_create(HF_OPT_LBFGS, n, &opt);
 *     hf_optimize_set_objective(opt, fit_loss, objective);
 *     hf_optimize_set_bounds(opt, lo, hi);            (hf_optimize_q2mm_defaults gives q2mm's)
 *     hf_optimize_set_initial_step(opt, step);
 *     hf_optimize_set_scale(opt, step);               (work on x_i / step_i: below)
 *     hf_optimize_set_progress(opt, print_line, NULL);
 *     hf_optimize_set_checkpoint_file(opt, "fit.checkpoint", 60.0);
 *     hf_optimize_catch_sigint(1);
 *     st = hf_optimize_run(opt, x, &result);          (x: start in, best out)
 *
 * The algorithms (L-BFGS, SLSQP, Nelder-Mead, Subplex, q2mm's grad-simp cycle), the objective's
 * contract, stopping, progress, checkpoints and resume, scaling and the L-BFGS memory are described
 * in docs/design.md, section "Optimisers"; each setter below says what it sets.
 *
 * A handle is not thread-safe; one run at a time per handle. Errors: every function returns an
 * hf_status with hf_last_error() naming the parameter index, file:line or evaluation.
 */
#include "hessfit_forcefield.h"
#include "hessfit_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hf_optimize hf_optimize;

typedef enum hf_opt_algorithm {
    HF_OPT_LBFGS = 0,
    HF_OPT_NELDER_MEAD = 1,
    HF_OPT_SUBPLEX = 2,
    HF_OPT_GRAD_SIMP = 3,
    HF_OPT_SLSQP = 4,
    HF_NUM_OPT_ALGORITHMS
} hf_opt_algorithm;

/* "LD_LBFGS", "LN_NELDERMEAD", "LN_SBPLX", "GRAD_SIMP", "LD_SLSQP" (NLopt's names; the checkpoint's
 * tokens); "unknown" outside the enum. */
const char *hf_opt_algorithm_name(hf_opt_algorithm algorithm);
/* The algorithm of such a name (case-insensitive; "lbfgs", "neldermead", "sbplx", "grad-simp", "slsqp"
 * also accepted); HF_ERROR_INVALID_ARGUMENT listing the names otherwise. */
hf_status hf_opt_algorithm_from_name(const char *name, hf_opt_algorithm *algorithm);

/* The objective: L(x), grad[0..n) = dL/dx when grad != NULL; failure through *status (above). */
typedef double (*hf_opt_objective)(int n, const double *x, double *grad, void *data, hf_status *status);

typedef enum hf_opt_outcome {
    HF_OPT_CONVERGED = 0,      /* NLopt's generic success (L-BFGS: gradient below its tolerance; SLSQP:
                                  its own optimality test) */
    HF_OPT_FTOL_REACHED,       /* relative loss change below ftol_rel */
    HF_OPT_XTOL_REACHED,       /* relative parameter change below xtol_rel */
    HF_OPT_MAXEVAL_REACHED,
    HF_OPT_MAXTIME_REACHED,
    HF_OPT_ROUNDOFF_LIMITED,   /* NLopt: roundoff limited progress */
    HF_OPT_STOPPED,            /* the stop flag or the progress callback */
    HF_OPT_CYCLE_CONVERGED,    /* grad-simp: a cycle improved the loss by less than min_improvement */
    HF_OPT_MAX_CYCLES,         /* grad-simp: max_cycles cycles done */
    HF_NUM_OPT_OUTCOMES
} hf_opt_outcome;

/* The outcome in words ("the relative change of the loss fell below ftol_rel", ...). */
const char *hf_opt_outcome_string(hf_opt_outcome outcome);
/* An nlopt_result in words, with its NLopt name: "NLOPT_ROUNDOFF_LIMITED: roundoff errors limited
 * progress (the point is usually still useful)"; codes NLopt does not define give "unknown NLopt
 * result". */
const char *hf_opt_nlopt_result_string(int nlopt_result);

typedef struct hf_opt_result {
    hf_opt_outcome outcome;
    double loss;               /* the best loss (at the x hf_optimize_run returned) */
    double initial_loss;       /* the loss at the start point of this run */
    long long evaluations;     /* in all, counting a resumed run's earlier ones */
    long long run_evaluations; /* made by this run */
    double seconds;            /* wall time of this run */
    int cycles;                /* grad-simp cycles done in all; 0 for the other algorithms */
    int last_nlopt_result;     /* the last NLopt pass's nlopt_result (0 if none ran) */
} hf_opt_result;

/* ---- grad-simp ------------------------------------------------------------------------ */
typedef enum hf_opt_sensitivity {
    HF_OPT_SENSITIVITY_Q2MM = 0,     /* d2 / d1^2 by central differences, ascending (q2mm's simp_var) */
    HF_OPT_SENSITIVITY_GRADIENT = 1  /* |dL/dx_i| h_i from the analytic gradient, descending */
} hf_opt_sensitivity;

#define HF_OPT_MAX_SIMPLEX 64
typedef struct hf_opt_grad_simp_options {
    int n_simplex;             /* parameters in the simplex pass, 1..HF_OPT_MAX_SIMPLEX; default 3 */
    int max_cycles;            /* >= 1; default 10 */
    double min_improvement;    /* relative, in [0, 1); default 0.01 */
    hf_opt_sensitivity sensitivity; /* default HF_OPT_SENSITIVITY_Q2MM */
    long long full_maxeval;    /* evaluations of one full (L-BFGS) pass, >= 1; default 200 */
    long long simplex_maxeval; /* evaluations of one simplex pass, >= 1; default 200 */
} hf_opt_grad_simp_options;

/* q2mm's defaults above. */
hf_opt_grad_simp_options hf_opt_grad_simp_default_options(void);

/* What one grad-simp cycle did. */
typedef struct hf_opt_cycle {
    int cycle;                 /* 1-based, counting a resumed run's earlier cycles */
    double loss_before;        /* best loss when the cycle began */
    double loss_after_full;    /* ... after the full pass */
    double loss_after_simplex; /* ... after the simplex pass: the cycle's result */
    double improvement;        /* (loss_before - loss_after_simplex) / loss_before (0 if loss_before <= 0) */
    long long evaluations;     /* made in this cycle */
    int full_nlopt_result;     /* nlopt_result of each pass */
    int simplex_nlopt_result;
    int n_selected;
    int selected[HF_OPT_MAX_SIMPLEX]; /* the simplex pass's parameters, best-ranked first */
} hf_opt_cycle;

/* ---- progress --------------------------------------------------------------------------- */
typedef enum hf_opt_phase {
    HF_OPT_PHASE_MAIN = 0,        /* the single pass of L-BFGS, Nelder-Mead, Subplex */
    HF_OPT_PHASE_FULL = 1,        /* grad-simp: the L-BFGS pass */
    HF_OPT_PHASE_SENSITIVITY = 2, /* grad-simp: the central differences */
    HF_OPT_PHASE_SIMPLEX = 3      /* grad-simp: the Nelder-Mead pass */
} hf_opt_phase;

/* "run", "full pass", "sensitivity analysis", "simplex pass". */
const char *hf_opt_phase_name(hf_opt_phase phase);

typedef enum hf_opt_event { HF_OPT_EVENT_EVALUATION = 0, HF_OPT_EVENT_CYCLE = 1 } hf_opt_event;

typedef struct hf_opt_progress {
    hf_opt_event event;
    hf_opt_phase phase;
    int cycle;                     /* grad-simp cycle (1-based); 0 for the other algorithms */
    long long evaluations;         /* in all, this one included */
    double loss;                   /* this evaluation's (a cycle event: the cycle's result) */
    double best_loss;
    int new_best;                  /* 1 when this evaluation lowered the best loss */
    double gradient_norm;          /* norm of dL/dy (the scaled variables, above) without the
                                      components that push against an active bound (the bound-
                                      constrained optimality measure); NaN when this evaluation
                                      computed no gradient */
    double evaluations_per_second; /* this run's evaluations / this run's wall time */
    double seconds;                /* wall time of this run so far */
    const hf_opt_cycle *cycle_info;/* the cycle just done (HF_OPT_EVENT_CYCLE), else NULL */
} hf_opt_progress;

/* Return 0 to go on, nonzero to stop the run (outcome HF_OPT_STOPPED). */
typedef int (*hf_opt_progress_fn)(const hf_opt_progress *progress, void *data);

/* ---- the handle ------------------------------------------------------------------------- */
/* n >= 1 parameters. Defaults: no bounds, no steps (NLopt's own initial step for the simplex
 * methods; grad-simp needs steps), ftol_rel 1e-8, no other limit, grad-simp defaults. */
hf_status hf_optimize_create(hf_opt_algorithm algorithm, int n, hf_optimize **opt);
void hf_optimize_destroy(hf_optimize *opt);

hf_opt_algorithm hf_optimize_algorithm(const hf_optimize *opt);
int hf_optimize_dimension(const hf_optimize *opt);

hf_status hf_optimize_set_objective(hf_optimize *opt, hf_opt_objective f, void *data);
/* lo[i] <= hi[i], not NaN; infinities allowed; NULL: that side unbounded. */
hf_status hf_optimize_set_bounds(hf_optimize *opt, const double *lo, const double *hi);
/* Per-parameter steps, finite and > 0: the initial simplex (Nelder-Mead, Subplex, grad-simp's
 * simplex pass) and grad-simp's difference steps. NULL: unset. */
hf_status hf_optimize_set_initial_step(hf_optimize *opt, const double *step);
/* Per-parameter scales s_i, finite and > 0: the passes work on x_i / s_i (above). NULL: all 1. */
hf_status hf_optimize_set_scale(hf_optimize *opt, const double *scale);
/* L-BFGS correction pairs (>= 0; 0: NLopt's default), also grad-simp's full passes. */
hf_status hf_optimize_set_lbfgs_memory(hf_optimize *opt, int pairs);
/* >= 0; 0 turns the criterion off. */
hf_status hf_optimize_set_ftol_rel(hf_optimize *opt, double ftol_rel);
hf_status hf_optimize_set_xtol_rel(hf_optimize *opt, double xtol_rel);
/* Evaluations in all (>= 0; 0: no limit). */
hf_status hf_optimize_set_maxeval(hf_optimize *opt, long long maxeval);
/* Seconds (>= 0; 0: no limit). */
hf_status hf_optimize_set_maxtime(hf_optimize *opt, double seconds);
hf_status hf_optimize_set_grad_simp(hf_optimize *opt, const hf_opt_grad_simp_options *options);
/* f may be NULL (no progress reports). */
hf_status hf_optimize_set_progress(hf_optimize *opt, hf_opt_progress_fn f, void *data);
/* path NULL: no checkpoints. interval_seconds >= 0 (0: after every improvement). */
hf_status hf_optimize_set_checkpoint_file(hf_optimize *opt, const char *path, double interval_seconds);

/* Minimise from x (n values, finite, within the bounds); on success x holds the best point and
 * *result (may be NULL) what happened. */
hf_status hf_optimize_run(hf_optimize *opt, double *x, hf_opt_result *result);

/* The best point of the last (or current) run and its loss; HF_ERROR_INVALID_ARGUMENT when no
 * evaluation has succeeded yet. Either output may be NULL. */
hf_status hf_optimize_best(const hf_optimize *opt, double *x, double *loss);

/* grad-simp records of the last run: cycles done in that run, cycle i of them (0-based). */
int hf_optimize_n_cycles(const hf_optimize *opt);
hf_status hf_optimize_cycle(const hf_optimize *opt, int i, hf_opt_cycle *cycle);
/* The last sensitivity analysis: ranking[0..n) the parameter indices, most sensitive first;
 * score[0..n) each parameter's measure (d2/d1^2 or |g| h, by parameter index). Either may be
 * NULL; HF_ERROR_INVALID_ARGUMENT before the first one. */
hf_status hf_optimize_sensitivity_ranking(const hf_optimize *opt, int *ranking, double *score);

/* ---- stopping ------------------------------------------------------------------------- */
/* Async-signal-safe: sets the process-wide stop flag (a volatile sig_atomic_t). */
void hf_optimize_request_stop(void);
void hf_optimize_clear_stop(void);
int hf_optimize_stop_requested(void);
/* enable 1: SIGINT sets the stop flag, and a second SIGINT kills the program as usual (the handler
 * restores the default action after the first); 0: the action that was there before. */
hf_status hf_optimize_catch_sigint(int enable);

/* ---- checkpoints ---------------------------------------------------------------------- */
typedef struct hf_opt_checkpoint {
    hf_opt_algorithm algorithm;
    int n;
    double *x;             /* n values; malloc'ed by load and get, freed by hf_opt_checkpoint_free */
    double best_loss;
    long long evaluations;
    int cycle;             /* grad-simp cycles done; 0 for the other algorithms */
} hf_opt_checkpoint;

/* Plain text, every double as %.17g (read back bit-identical), written atomically:
 *     # hessfit optimizer checkpoint (written by hessfit) ...
 *     hessfit-checkpoint 1
 *     algorithm LD_LBFGS
 *     n 2
 *     evaluations 57
 *     cycle 0
 *     best_loss 3.3121437628745412e-17
 *     x 0 0.99999999427478364
 *     x 1 0.99999998833657181
 *     end
 * n <= HF_OPT_CHECKPOINT_MAX_N; x finite; best_loss finite. */
#define HF_OPT_CHECKPOINT_MAX_N (1 << 20)
hf_status hf_optimize_save_checkpoint(const char *path, const hf_opt_checkpoint *checkpoint);
/* Reads what save wrote (also gzip-compressed). A missing, repeated, unknown or malformed line, a
 * NaN, an x index out of order, a count beyond the limit or a file that ends before "end" is an
 * error naming path:line. On failure *checkpoint is zeroed. */
hf_status hf_optimize_load_checkpoint(const char *path, hf_opt_checkpoint *checkpoint);
void hf_opt_checkpoint_free(hf_opt_checkpoint *checkpoint);
/* The handle's best point as a checkpoint (x malloc'ed). */
hf_status hf_optimize_get_checkpoint(const hf_optimize *opt, hf_opt_checkpoint *checkpoint);
/* Makes the next hf_optimize_run continue from the checkpoint: its algorithm and n must be the
 * handle's; x (n values) receives the checkpoint's point, the run's start. */
hf_status hf_optimize_resume(hf_optimize *opt, const hf_opt_checkpoint *checkpoint, double *x);

/* ---- q2mm's bounds and steps -------------------------------------------------------------- */
/* What a force-field value is, for its defaults (canonical units, hessfit_forcefield.h). */
typedef enum hf_opt_value_kind {
    HF_OPT_BOND_K = 0,      /* kcal/mol/A^2 */
    HF_OPT_BOND_R0,         /* A */
    HF_OPT_ANGLE_K,         /* kcal/mol/rad^2 */
    HF_OPT_ANGLE_THETA0,    /* deg */
    HF_OPT_FOURIER_K,       /* torsion or Fourier improper k, kcal/mol, E = k (1 + cos(n phi - phase)) */
    HF_OPT_FOURIER_PHASE,   /* deg */
    HF_OPT_IMPROPER_K,      /* harmonic out-of-plane k, kcal/mol/rad^2 */
    HF_OPT_VDW_RSTAR,       /* A */
    HF_OPT_VDW_EPS,         /* kcal/mol */
    HF_NUM_OPT_VALUE_KINDS
} hf_opt_value_kind;

/* "bond k", "bond r0", ... */
const char *hf_opt_value_kind_name(hf_opt_value_kind kind);
/* Which kind param->values[value] is; a periodicity, a charge or an index beyond n_values is
 * HF_ERROR_INVALID_ARGUMENT naming the parameter's line. */
hf_status hf_optimize_value_kind(const hf_ff_param *param, int value, hf_opt_value_kind *kind);
/*
 * q2mm's box and step for a kind (q2mm/models/parameters.py, _KIND_METADATA, canonical units
 * kcal/mol, A, deg with E = k (x - x0)^2, the same as hessfit's):
 *   bond k        [0, 3600]     step 7.2    (50 mdyn/A and 0.1 mdyn/A in MM3 units)
 *   bond r0       [0.5, 3.0]    step 0.02
 *   angle k       [0, 720]      step 7.2    (10 and 0.1 mdyn A/rad^2)
 *   angle theta0  [30, 180]     step 1.0
 *   Fourier k     [-20, 20]     step 0.1    (q2mm's torsion_k, also its improper torsions)
 *   vdW R*        [0.5, 5.0]    step 0.1
 *   vdW eps       [0.001, 2.0]  step 0.02
 * and two q2mm does not define:
 *   harmonic improper k  [0, 720] step 7.2: the angle k's (the same units; q2mm has no harmonic
 *                        out-of-plane kind)
 *   Fourier phase        [-360, 360] step 1.0: hessfit's (q2mm never fits phases); wide enough
 *                        that the 0 and 180 of every file lie inside.
 * Any output may be NULL.
 */
hf_status hf_optimize_q2mm_defaults(hf_opt_value_kind kind, double *lo, double *hi, double *step);

#ifdef __cplusplus
}
#endif
#endif
