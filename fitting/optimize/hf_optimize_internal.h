#ifndef HF_MODEL_OPTIMIZE_INTERNAL_H_
#define HF_MODEL_OPTIMIZE_INTERNAL_H_
/* Internal to the optimiser driver (hf_optimize*.c): the handle, the one evaluation routine
 * every pass goes through, and one NLopt pass over a subset of the parameters. */
#include "hessfit_optimize.h"

#include <nlopt.h>

/*
 * Scaling: the caller's values x (bounds, steps, start, best point, checkpoints, the objective's
 * arguments) are x_i = s_i y_i; every pass works on y. The fields marked "y" hold the optimiser's
 * variables during a run (hessfit_optimize_run derives lo, hi, step from the caller's user_* at its
 * start); with every s_i = 1 (the default) y is x, bit for bit.
 */
struct hessfit_optimize {
    hessfit_opt_algorithm algorithm;
    int n;
    double *user_lo, *user_hi; /* x; -inf / +inf when unset */
    double *user_step;         /* x; valid when have_steps */
    double *scale;             /* s_i > 0; 1 when unset */
    double *lo, *hi, *step;    /* y: user_lo / s etc., set by hessfit_optimize_run */
    int have_steps;
    int lbfgs_memory;          /* L-BFGS correction pairs; 0: NLopt's default */
    hessfit_opt_objective f;
    void *f_data;
    hessfit_opt_lsq lsq;       /* LM's least-squares objective */
    void *lsq_data;
    long long n_residuals;
    double *jtj_user;          /* x: n*n, the callback's J^T J (allocated with lsq) */
    double *best_jtj, *best_jtr; /* x: J^T J, J^T r at best_user when best_lsq_valid */
    int best_lsq_valid;
    double ftol_rel, xtol_rel, gtol, maxtime;
    long long maxeval;
    hessfit_opt_grad_simp_options gs;
    hessfit_opt_progress_fn progress;
    void *progress_data;
    char *checkpoint_path;
    double checkpoint_interval;

    /* set by hessfit_optimize_resume, consumed by the next run */
    int resume_pending;
    long long resume_evaluations;
    int resume_cycle;
    double resume_loss;
    double resume_lm_lambda;   /* 0: none */

    /* the state of a run */
    double *best_x;            /* y */
    double *best_user;         /* x: the point the objective was given at best_x */
    double *best_grad;         /* y: dL/dy at best_x when best_grad_valid */
    int have_best, best_grad_valid;
    double best_loss;
    int have_initial;
    double initial_loss;       /* the first loss of the run (a resumed run: the checkpoint's) */
    double *x_full, *g_full;   /* y scratch: the full vector of a subspace evaluation */
    double *x_user, *g_user;   /* x scratch: the objective's point and gradient */
    double *start_y, *start_user; /* the run's start, evaluated at exactly the caller's x */
    long long evaluations;     /* in all */
    long long run_evaluations; /* this run */
    long long undefined_trials; /* this run: LM trial points where the objective was undefined */
    double t_start;
    double last_checkpoint_time;
    int checkpoint_dirty;      /* the best changed since the last write */
    nlopt_opt current;         /* the NLopt pass running now */
    int stop;                  /* the run must stop: why in stop_reason, or failure */
    hessfit_opt_outcome stop_reason;
    char nlopt_message[256];   /* nlopt_get_errmsg of the last pass that failed */
    hessfit_status failure;         /* an error (objective, checkpoint): the run's return value */
    hessfit_opt_phase phase;
    int cycle;                 /* grad-simp: the current cycle (1-based) */
    int cycles_done;           /* grad-simp: in all, counting a resumed run's */
    double lm_lambda;          /* LM: the damping of the step being evaluated */
    double best_lm_lambda;     /* LM: the damping of the step that reached the best point (checkpointed) */
    struct {                   /* LM: the trial step being evaluated, for its progress report */
        int valid;             /* the evaluation under way is a trial step */
        double from_loss;      /* the loss at the accepted point the step starts from */
        double step_norm, predicted;
        int n_free;
    } lm_trial;

    /* grad-simp records of the last run */
    hessfit_opt_cycle *cycles;
    int n_cycles, cap_cycles;
    int *ranking;
    double *score;
    int have_ranking;
};

/* The result of hf_opt_evaluate. */
typedef enum {
    HF_OPT_EVAL_DONE = 0,      /* evaluated; go on */
    HF_OPT_EVAL_DONE_STOP = 1, /* evaluated, and the run must stop now */
    HF_OPT_EVAL_REFUSED = 2,   /* not evaluated: the run must stop (budget, time, flag, failure) */
    HF_OPT_EVAL_UNDEFINED = 3  /* LM only: the objective is undefined at this trial point (HESSFIT_ERROR_GEOMETRY:
                                  e.g. no MM minimum for a geometry target); counted, the step is rejected */
} hf_opt_eval_result;

/* Monotonic wall time in seconds. */
double hf_opt_now(void);
/* One evaluation at the full point y (the optimiser's variables; grad: n entries of dL/dy or NULL):
 * calls the objective at x = s y (clamped into the caller's bounds; the run's start at exactly the
 * caller's values), counts it, checks the loss and gradient, keeps the best, reports progress,
 * writes a due checkpoint, polls the stop flag. */
hf_opt_eval_result hf_opt_evaluate(hessfit_optimize *opt, const double *x, double *grad, double *loss);
/* The same through the least-squares callback with its normal equations: jtj (n*n) gets J^T J in y,
 * s_i s_j (J^T J)_ij, and grad dL/dy = 2 s_i (J^T r)_i. */
hf_opt_eval_result hf_opt_evaluate_lsq(hessfit_optimize *opt, const double *x, double *jtj, double *grad, double *loss);
/* hf_opt_evaluate_lsq at a trial step of LM or TRF from the accepted point's loss from_loss, whose
 * length, predicted reduction and number of moving values go into the evaluation's progress report. */
hf_opt_eval_result hf_opt_evaluate_trial(hessfit_optimize *opt, double from_loss, double step_norm, double predicted,
                                         int n_free, const double *x, double *jtj, double *grad, double *loss);
/* sqrt(sum g_i^2) over the components of g (dL/dy at y) that do not push against an active bound. */
double hf_opt_projected_gradient_norm(const hessfit_optimize *opt, const double *y, const double *g);
/* Marks the run as stopping for reason (the first reason wins) and stops the NLopt pass. Returns 1
 * (an iteration loop's "done"). */
int hf_opt_request_stop_reason(hessfit_optimize *opt, hessfit_opt_outcome reason);
/* One NLopt pass with algorithm alg over the parameters idx[0..m) (NULL: all n, m = n), the
 * others held at start[]; starts at start (a full point). Returns the nlopt_result; the best
 * point is tracked by hf_opt_evaluate. pass_maxeval caps this pass (0: only the run's budget). */
int hf_opt_nlopt_pass(hessfit_optimize *opt, nlopt_algorithm alg, const int *idx, int m, const double *start,
                      long long pass_maxeval);
/* An NLopt failure code (FAILURE, INVALID_ARGS, OUT_OF_MEMORY) as an HESSFIT_ERROR_NLOPT message naming
 * the pass, with NLopt's own message and the best point kept. */
hessfit_status hf_opt_nlopt_error(hessfit_optimize *opt, int result, const char *nlopt_message);
/* Writes the checkpoint now (no-op without a path); sets opt->failure on an error. */
hessfit_status hf_opt_write_checkpoint(hessfit_optimize *opt);
/* Reports a grad-simp cycle to the progress callback. */
void hf_opt_report_cycle(hessfit_optimize *opt, const hessfit_opt_cycle *cycle);
/* The grad-simp cycle loop (hf_optimize_gradsimp.c); x is the start point. */
hessfit_status hf_opt_run_grad_simp(hessfit_optimize *opt, const double *x, hessfit_opt_outcome *outcome, int *last_nlopt);
/* The bounded Levenberg-Marquardt run (hf_optimize_lm.c); y is the start point. */
hessfit_status hf_opt_run_lm(hessfit_optimize *opt, const double *y, hessfit_opt_outcome *outcome);
/* The trust-region reflective run (hf_optimize_trf.c); y is the start point. */
hessfit_status hf_opt_run_trf(hessfit_optimize *opt, const double *y, hessfit_opt_outcome *outcome);

#endif
