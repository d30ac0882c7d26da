#ifndef HESSFIT_OPTIMIZE_H_
#define HESSFIT_OPTIMIZE_H_
/*
 * The optimiser driver of a fit (libhessfit_fitting, fitting/optimize): NLopt's L-BFGS, Nelder-Mead and Subplex,
 * q2mm's grad-simp cycle and a bounded Levenberg-Marquardt method, over any objective L(x) of n parameters -- in a fit, the free values of
 * a model in canonical units (hessfit_model.h) and the loss of an objective (hessfit_objective.h):
 *
 *     static double fit_loss(int n, const double *x, double *grad, void *data, hessfit_status *status)
 *     {
 *         double loss = 0.0;
 *         (void)n;
 *         *status = hessfit_objective_evaluate(data, x, &loss, grad, NULL);
 *         return loss;
 *     }
 *
 * Use, in NLopt's style (opaque handle, setters, run, result codes with texts):
 *
 *     hessfit_optimize *opt;
 *     hessfit_optimize_create(HESSFIT_OPT_LBFGS, n, &opt);
 *     hessfit_optimize_set_objective(opt, fit_loss, objective);
 *     hessfit_optimize_set_bounds(opt, lo, hi);            (hessfit_optimize_q2mm_defaults gives q2mm's)
 *     hessfit_optimize_set_initial_step(opt, step);
 *     hessfit_optimize_set_scale(opt, step);               (work on x_i / step_i: below)
 *     hessfit_optimize_set_progress(opt, print_line, NULL);
 *     hessfit_optimize_set_checkpoint_file(opt, "fit.checkpoint", 60.0);
 *     hessfit_optimize_catch_sigint(1);
 *     st = hessfit_optimize_run(opt, x, &result);          (x: start in, best out)
 *
 * HESSFIT_OPT_LM (a bounded Levenberg-Marquardt method) and HESSFIT_OPT_TRF (Coleman-Li's trust-region
 * reflective method) take a least-squares objective instead:
 * hessfit_optimize_set_least_squares(opt, fit_lsq, m, objective), fit_lsq returning
 * hessfit_objective_normal_equations(data, x, &loss, jtj, jtr) (jtj, jtr NULL: the loss alone).
 *
 * The algorithms (L-BFGS, SLSQP, Nelder-Mead, Subplex, q2mm's grad-simp cycle, LM, TRF), the objective's
 * contract, stopping, progress, checkpoints and resume, scaling and the L-BFGS memory are described
 * in docs/design.md, section "Optimisers"; each setter below says what it sets.
 *
 * A handle is not thread-safe; one run at a time per handle. Errors: every function returns an
 * hessfit_status with hessfit_last_error() naming the parameter index, file:line or evaluation.
 */
#include "hessfit_forcefield.h"
#include "hessfit_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hessfit_optimize hessfit_optimize;

typedef enum hessfit_opt_algorithm {
    HESSFIT_OPT_LBFGS = 0,
    HESSFIT_OPT_NELDER_MEAD = 1,
    HESSFIT_OPT_SUBPLEX = 2,
    HESSFIT_OPT_GRAD_SIMP = 3,
    HESSFIT_OPT_SLSQP = 4,
    HESSFIT_OPT_LM = 5,          /* bounded Levenberg-Marquardt on a least-squares callback (hessfit's own) */
    HESSFIT_OPT_TRF = 6,         /* Coleman-Li's trust-region reflective method on the same callback (hessfit's own) */
    HESSFIT_NUM_OPT_ALGORITHMS
} hessfit_opt_algorithm;

/** "LD_LBFGS", "LN_NELDERMEAD", "LN_SBPLX", "GRAD_SIMP", "LD_SLSQP" (NLopt's names), "LM", "TRF" (the
 * checkpoint's tokens); "unknown" outside the enum. */
const char *hessfit_opt_algorithm_name(hessfit_opt_algorithm algorithm);
/** The algorithm of such a name (case-insensitive; "lbfgs", "neldermead", "sbplx", "grad-simp", "slsqp",
 * "levenberg-marquardt", "trust-region-reflective" also accepted); HESSFIT_ERROR_INVALID_ARGUMENT listing the names otherwise. */
hessfit_status hessfit_opt_algorithm_from_name(const char *name, hessfit_opt_algorithm *algorithm);

/** 1 for the algorithms that take a least-squares objective (HESSFIT_OPT_LM, HESSFIT_OPT_TRF), 0 otherwise. */
int hessfit_opt_algorithm_is_least_squares(hessfit_opt_algorithm algorithm);

/** The objective: L(x), grad[0..n) = dL/dx when grad != NULL; failure through *status (above). */
typedef double (*hessfit_opt_objective)(int n, const double *x, double *grad, void *data, hessfit_status *status);

/** A least-squares objective (HESSFIT_OPT_LM, HESSFIT_OPT_TRF): returns L(x) = sum_i r_i(x)^2 and, when jtj and jtr are
 * not NULL, the normal equations at x: jtj[0..n*n) = J^T J (row-major, both triangles), jtr[0..n) =
 * J^T r, J = dr/dx (so dL/dx = 2 J^T r); both NULL: the loss only. Failure through *status (as the
 * objective above). In a fit, a three-line adapter around hessfit_objective_normal_equations. */
typedef double (*hessfit_opt_lsq)(int n, const double *x, double *jtj, double *jtr, void *data, hessfit_status *status);

typedef enum hessfit_opt_outcome {
    HESSFIT_OPT_CONVERGED = 0,      /* NLopt's generic success (L-BFGS: gradient below its tolerance; SLSQP:
                                  its own optimality test) */
    HESSFIT_OPT_FTOL_REACHED,       /* relative loss change below ftol_rel */
    HESSFIT_OPT_XTOL_REACHED,       /* relative parameter change below xtol_rel */
    HESSFIT_OPT_MAXEVAL_REACHED,
    HESSFIT_OPT_MAXTIME_REACHED,
    HESSFIT_OPT_ROUNDOFF_LIMITED,   /* NLopt: roundoff limited progress */
    HESSFIT_OPT_STOPPED,            /* the stop flag or the progress callback */
    HESSFIT_OPT_CYCLE_CONVERGED,    /* grad-simp: a cycle improved the loss by less than min_improvement */
    HESSFIT_OPT_MAX_CYCLES,         /* grad-simp: max_cycles cycles done */
    HESSFIT_OPT_GTOL_REACHED,       /* LM: the projected gradient norm fell to gtol (a zero loss included) */
    HESSFIT_NUM_OPT_OUTCOMES
} hessfit_opt_outcome;

/** The outcome in words ("the relative change of the loss fell below ftol_rel", ...). */
const char *hessfit_opt_outcome_string(hessfit_opt_outcome outcome);
/** An nlopt_result in words, with its NLopt name: "NLOPT_ROUNDOFF_LIMITED: roundoff errors limited
 * progress (the point is usually still useful)"; codes NLopt does not define give "unknown NLopt
 * result". */
const char *hessfit_opt_nlopt_result_string(int nlopt_result);

typedef struct hessfit_opt_result {
    hessfit_opt_outcome outcome;
    double loss;               /* the best loss (at the x hessfit_optimize_run returned) */
    double initial_loss;       /* the loss at the start point of this run */
    long long evaluations;     /* in all, counting a resumed run's earlier ones */
    long long run_evaluations; /* made by this run */
    long long undefined_trials; /* LM, this run: trial points where the objective reported HESSFIT_ERROR_GEOMETRY
                                   (undefined there, e.g. a geometry target without an MM minimum): counted as
                                   evaluations and rejected as steps; any other error stops the run */
    double seconds;            /* wall time of this run */
    int cycles;                /* grad-simp cycles done in all; 0 for the other algorithms */
    int last_nlopt_result;     /* the last NLopt pass's nlopt_result (0 if none ran, LM) */
    double lm_lambda;          /* LM: the damping of the last step tried; TRF: the trust-region radius (0 for the others) */
} hessfit_opt_result;

/** ---- grad-simp ------------------------------------------------------------------------ */
typedef enum hessfit_opt_sensitivity {
    HESSFIT_OPT_SENSITIVITY_Q2MM = 0,     /* d2 / d1^2 by central differences, ascending (q2mm's simp_var) */
    HESSFIT_OPT_SENSITIVITY_GRADIENT = 1  /* |dL/dx_i| h_i from the analytic gradient, descending */
} hessfit_opt_sensitivity;

#define HESSFIT_OPT_MAX_SIMPLEX 64
typedef struct hessfit_opt_grad_simp_options {
    int n_simplex;             /* parameters in the simplex pass, 1..HESSFIT_OPT_MAX_SIMPLEX; default 3 */
    int max_cycles;            /* >= 1; default 10 */
    double min_improvement;    /* relative, in [0, 1); default 0.01 */
    hessfit_opt_sensitivity sensitivity; /* default HESSFIT_OPT_SENSITIVITY_Q2MM */
    long long full_maxeval;    /* evaluations of one full (L-BFGS) pass, >= 1; default 200 */
    long long simplex_maxeval; /* evaluations of one simplex pass, >= 1; default 200 */
} hessfit_opt_grad_simp_options;

/** q2mm's defaults above. */
hessfit_opt_grad_simp_options hessfit_opt_grad_simp_default_options(void);

/** What one grad-simp cycle did. */
typedef struct hessfit_opt_cycle {
    int cycle;                 /* 1-based, counting a resumed run's earlier cycles */
    double loss_before;        /* best loss when the cycle began */
    double loss_after_full;    /* ... after the full pass */
    double loss_after_simplex; /* ... after the simplex pass: the cycle's result */
    double improvement;        /* (loss_before - loss_after_simplex) / loss_before (0 if loss_before <= 0) */
    long long evaluations;     /* made in this cycle */
    int full_nlopt_result;     /* nlopt_result of each pass */
    int simplex_nlopt_result;
    int n_selected;
    int selected[HESSFIT_OPT_MAX_SIMPLEX]; /* the simplex pass's parameters, best-ranked first */
} hessfit_opt_cycle;

/** ---- progress --------------------------------------------------------------------------- */
typedef enum hessfit_opt_phase {
    HESSFIT_OPT_PHASE_MAIN = 0,        /* the single pass of L-BFGS, Nelder-Mead, Subplex */
    HESSFIT_OPT_PHASE_FULL = 1,        /* grad-simp: the L-BFGS pass */
    HESSFIT_OPT_PHASE_SENSITIVITY = 2, /* grad-simp: the central differences */
    HESSFIT_OPT_PHASE_SIMPLEX = 3      /* grad-simp: the Nelder-Mead pass */
} hessfit_opt_phase;

/** "run", "full pass", "sensitivity analysis", "simplex pass". */
const char *hessfit_opt_phase_name(hessfit_opt_phase phase);

typedef enum hessfit_opt_event { HESSFIT_OPT_EVENT_EVALUATION = 0, HESSFIT_OPT_EVENT_CYCLE = 1 } hessfit_opt_event;

typedef struct hessfit_opt_progress {
    hessfit_opt_event event;
    hessfit_opt_phase phase;
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
    const hessfit_opt_cycle *cycle_info;/* the cycle just done (HESSFIT_OPT_EVENT_CYCLE), else NULL */
    /* LM's trial step (HESSFIT_OPT_LM, HESSFIT_OPT_TRF, an evaluation event at a trial point; NaN, and lm_free 0,
       for the run's start, the other algorithms and the cycle events): what its damping and progress were */
    double lm_lambda;              /* the damping the step was solved with (relative to More's D); TRF: the
                                      trust-region radius (in Coleman-Li's scaled variables) */
    double lm_step_norm;           /* |p|, the step after the projection into the box, in y */
    double lm_predicted;           /* the Gauss-Newton model's gain pred = L - |r + J p|^2 */
    double lm_gain_ratio;          /* rho = (L at the accepted point - this loss) / pred: > 0 accepts */
    int lm_free;                   /* the variables the step moved freely (not held on a bound) */
} hessfit_opt_progress;

/** Return 0 to go on, nonzero to stop the run (outcome HESSFIT_OPT_STOPPED). */
typedef int (*hessfit_opt_progress_fn)(const hessfit_opt_progress *progress, void *data);

/* ---- the handle ------------------------------------------------------------------------- */
/** n >= 1 parameters. Defaults: no bounds, no steps (NLopt's own initial step for the simplex
 * methods; grad-simp needs steps), ftol_rel 1e-8, no other limit, grad-simp defaults. */
hessfit_status hessfit_optimize_create(hessfit_opt_algorithm algorithm, int n, hessfit_optimize **opt);
void hessfit_optimize_destroy(hessfit_optimize *opt);

hessfit_opt_algorithm hessfit_optimize_algorithm(const hessfit_optimize *opt);
int hessfit_optimize_dimension(const hessfit_optimize *opt);

hessfit_status hessfit_optimize_set_objective(hessfit_optimize *opt, hessfit_opt_objective f, void *data);
/** The least-squares objective of HESSFIT_OPT_LM and HESSFIT_OPT_TRF (the other algorithms take set_objective's) with its
 * residual count m >= 1 (kept for hessfit_optimize_best_normal_equations). */
hessfit_status hessfit_optimize_set_least_squares(hessfit_optimize *opt, hessfit_opt_lsq f, long long n_residuals,
                                                  void *data);
/** lo[i] <= hi[i], not NaN; infinities allowed; NULL: that side unbounded. */
hessfit_status hessfit_optimize_set_bounds(hessfit_optimize *opt, const double *lo, const double *hi);
/** Per-parameter steps, finite and > 0: the initial simplex (Nelder-Mead, Subplex, grad-simp's
 * simplex pass) and grad-simp's difference steps. NULL: unset. */
hessfit_status hessfit_optimize_set_initial_step(hessfit_optimize *opt, const double *step);
/** Per-parameter scales s_i, finite and > 0: the passes work on x_i / s_i (above). NULL: all 1. */
hessfit_status hessfit_optimize_set_scale(hessfit_optimize *opt, const double *scale);
/** L-BFGS correction pairs (>= 0; 0: NLopt's default), also grad-simp's full passes. */
hessfit_status hessfit_optimize_set_lbfgs_memory(hessfit_optimize *opt, int pairs);
/** >= 0; 0 turns the criterion off. */
hessfit_status hessfit_optimize_set_ftol_rel(hessfit_optimize *opt, double ftol_rel);
hessfit_status hessfit_optimize_set_xtol_rel(hessfit_optimize *opt, double xtol_rel);
/** LM: stop when the norm of dL/dy (the scaled variables) without the components pushing against an
 * active bound is <= gtol (>= 0; default 0: only an exactly zero one); TRF: when max_i |v_i dL/dy_i| <= gtol,
 * v_i the distance to the bound -dL/dy_i points toward (1 if none). The NLopt passes ignore it. */
hessfit_status hessfit_optimize_set_gtol(hessfit_optimize *opt, double gtol);
/** Evaluations in all (>= 0; 0: no limit). */
hessfit_status hessfit_optimize_set_maxeval(hessfit_optimize *opt, long long maxeval);
/** Seconds (>= 0; 0: no limit). */
hessfit_status hessfit_optimize_set_maxtime(hessfit_optimize *opt, double seconds);
hessfit_status hessfit_optimize_set_grad_simp(hessfit_optimize *opt, const hessfit_opt_grad_simp_options *options);
/** f may be NULL (no progress reports). */
hessfit_status hessfit_optimize_set_progress(hessfit_optimize *opt, hessfit_opt_progress_fn f, void *data);
/** path NULL: no checkpoints. interval_seconds >= 0 (0: after every improvement). */
hessfit_status hessfit_optimize_set_checkpoint_file(hessfit_optimize *opt, const char *path, double interval_seconds);

/** Minimise from x (n values, finite, within the bounds); on success x holds the best point and
 * *result (may be NULL) what happened. */
hessfit_status hessfit_optimize_run(hessfit_optimize *opt, double *x, hessfit_opt_result *result);

/** The best point of the last (or current) run and its loss; HESSFIT_ERROR_INVALID_ARGUMENT when no
 * evaluation has succeeded yet. Either output may be NULL. */
hessfit_status hessfit_optimize_best(const hessfit_optimize *opt, double *x, double *loss);
/** LM, TRF: J^T J (n*n, row-major) and J^T r (n) at the best point, exactly as the least-squares callback
 * returned them there, and the residual count m (for hessfit_uncertainty_compute, with no extra
 * evaluation). Any output may be NULL; HESSFIT_ERROR_INVALID_ARGUMENT when the best point was not
 * evaluated with its normal equations. */
hessfit_status hessfit_optimize_best_normal_equations(const hessfit_optimize *opt, double *jtj, double *jtr,
                                                      long long *n_residuals);

/** grad-simp records of the last run: cycles done in that run, cycle i of them (0-based). */
int hessfit_optimize_n_cycles(const hessfit_optimize *opt);
hessfit_status hessfit_optimize_cycle(const hessfit_optimize *opt, int i, hessfit_opt_cycle *cycle);
/** The last sensitivity analysis: ranking[0..n) the parameter indices, most sensitive first;
 * score[0..n) each parameter's measure (d2/d1^2 or |g| h, by parameter index). Either may be
 * NULL; HESSFIT_ERROR_INVALID_ARGUMENT before the first one. */
hessfit_status hessfit_optimize_sensitivity_ranking(const hessfit_optimize *opt, int *ranking, double *score);

/* ---- stopping ------------------------------------------------------------------------- */
/** Async-signal-safe: sets the process-wide stop flag (a volatile sig_atomic_t). */
void hessfit_optimize_request_stop(void);
void hessfit_optimize_clear_stop(void);
int hessfit_optimize_stop_requested(void);
/** enable 1: SIGINT sets the stop flag, and a second SIGINT kills the program as usual (the handler
 * restores the default action after the first); 0: the action that was there before. */
hessfit_status hessfit_optimize_catch_sigint(int enable);
/** The same for SIGTERM (what mpirun and Slurm send every rank to end a job): the first sets the
 * stop flag, a second kills. */
hessfit_status hessfit_optimize_catch_sigterm(int enable);

/** ---- checkpoints ---------------------------------------------------------------------- */
typedef struct hessfit_opt_checkpoint {
    hessfit_opt_algorithm algorithm;
    int n;
    double *x;             /* n values; malloc'ed by load and get, freed by hessfit_opt_checkpoint_free */
    double best_loss;
    long long evaluations;
    int cycle;             /* grad-simp cycles done; 0 for the other algorithms */
    double lm_lambda;      /* LM: the damping of the step that reached the best point, > 0 (line
                              "lm_lambda", written for LM and TRF only; TRF: the trust-region radius);
                              0: none (the other algorithms, or an LM file without it: the run starts
                              from the default damping) */
} hessfit_opt_checkpoint;

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
 * n <= HESSFIT_OPT_CHECKPOINT_MAX_N; x finite; best_loss finite. An LM (TRF) checkpoint has one more line,
 * "lm_lambda 0.0011111111111111111" (finite, > 0), before "end"; files without it still read. */
#define HESSFIT_OPT_CHECKPOINT_MAX_N (1 << 20)
hessfit_status hessfit_optimize_save_checkpoint(const char *path, const hessfit_opt_checkpoint *checkpoint);
/** Reads what save wrote (also gzip-compressed). A missing, repeated, unknown or malformed line, a
 * NaN, an x index out of order, a count beyond the limit or a file that ends before "end" is an
 * error naming path:line. On failure *checkpoint is zeroed. */
hessfit_status hessfit_optimize_load_checkpoint(const char *path, hessfit_opt_checkpoint *checkpoint);
void hessfit_opt_checkpoint_free(hessfit_opt_checkpoint *checkpoint);
/** The handle's best point as a checkpoint (x malloc'ed). */
hessfit_status hessfit_optimize_get_checkpoint(const hessfit_optimize *opt, hessfit_opt_checkpoint *checkpoint);
/** Makes the next hessfit_optimize_run continue from the checkpoint: its algorithm and n must be the
 * handle's; x (n values) receives the checkpoint's point, the run's start. */
hessfit_status hessfit_optimize_resume(hessfit_optimize *opt, const hessfit_opt_checkpoint *checkpoint, double *x);

/* ---- q2mm's bounds and steps -------------------------------------------------------------- */
/** What a force-field value is, for its defaults (canonical units, hessfit_forcefield.h). */
typedef enum hessfit_opt_value_kind {
    HESSFIT_OPT_BOND_K = 0,      /* kcal/mol/A^2 */
    HESSFIT_OPT_BOND_R0,         /* A */
    HESSFIT_OPT_ANGLE_K,         /* kcal/mol/rad^2 */
    HESSFIT_OPT_ANGLE_THETA0,    /* deg */
    HESSFIT_OPT_FOURIER_K,       /* torsion or Fourier improper k, kcal/mol, E = k (1 + cos(n phi - phase)) */
    HESSFIT_OPT_FOURIER_PHASE,   /* deg */
    HESSFIT_OPT_IMPROPER_K,      /* harmonic out-of-plane k, kcal/mol/rad^2 */
    HESSFIT_OPT_VDW_RSTAR,       /* A */
    HESSFIT_OPT_VDW_EPS,         /* kcal/mol */
    HESSFIT_OPT_STRETCH_BEND_K,  /* MM3* stretch-bend k_sb, mdyn/rad (hessfit_forcefield.h) */
    HESSFIT_OPT_BOND_MOMENT,     /* MM3* bond moment, D */
    HESSFIT_NUM_OPT_VALUE_KINDS
} hessfit_opt_value_kind;

/** "bond k", "bond r0", ... */
const char *hessfit_opt_value_kind_name(hessfit_opt_value_kind kind);
/** Which kind param->values[value] is; a periodicity, a charge or an index beyond n_values is
 * HESSFIT_ERROR_INVALID_ARGUMENT naming the parameter's line. */
hessfit_status hessfit_optimize_value_kind(const hessfit_ff_param *param, int value, hessfit_opt_value_kind *kind);
/**
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
hessfit_status hessfit_optimize_q2mm_defaults(hessfit_opt_value_kind kind, double *lo, double *hi, double *step);

#ifdef __cplusplus
}
#endif
#endif
