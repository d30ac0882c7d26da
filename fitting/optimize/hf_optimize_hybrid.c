/*
 * HESSFIT_OPT_SLSQP_TRF: NLopt's SLSQP on the loss and its gradient (set_objective's callback) for the
 * warm-up's W evaluations, then TRF (hf_optimize_trf.c, set_least_squares' callback) from the best
 * point so far. Measured on bench/rh-enamide-q2mm.fit (docs/benchmarks.md, "SLSQP then TRF"): TRF
 * from the start stays in a basin near 13, SLSQP's early steps leave it and TRF then converges
 * faster than SLSQP's dense quasi-Newton update.
 *
 * One run: one evaluation counter, maxeval / maxtime / the stop flag over both phases (the SLSQP
 * pass is capped at what is left of W; SLSQP stopping by its own tests before W also switches). The
 * switch is one HESSFIT_OPT_EVENT_SWITCH progress report. The checkpoint's "cycle" is the phase
 * (1: warm-up, 2: TRF): a resume in phase 1 restarts SLSQP from the checkpoint's point for the
 * warm-up evaluations left (W minus the checkpoint's count; none left: TRF at once), a resume in
 * phase 2 continues TRF from it with the checkpoint's radius.
 */
#include "hf_optimize_internal.h"

#include <math.h>
#include <string.h>

long long hf_opt_warmup_evaluations(const hessfit_optimize *opt)
{
    if (opt->warmup >= 0)
        return opt->warmup;
    return (long long)ceil(HF_OPT_WARMUP_PER_VALUE * opt->n); /* the default rule */
}

/* Reports the switch to TRF to the progress callback. */
static void report_switch(hessfit_optimize *opt)
{
    hessfit_opt_progress p;
    if (opt->progress == NULL)
        return;
    memset(&p, 0, sizeof p);
    p.event = HESSFIT_OPT_EVENT_SWITCH;
    p.phase = HESSFIT_OPT_PHASE_TRF;
    p.evaluations = opt->evaluations;
    p.loss = p.best_loss = opt->best_loss;
    p.gradient_norm = opt->best_grad_valid ? hf_opt_projected_gradient_norm(opt, opt->best_x, opt->best_grad) : NAN;
    p.seconds = hf_opt_now() - opt->t_start;
    p.evaluations_per_second = p.seconds > 0.0 ? (double)opt->run_evaluations / p.seconds : 0.0;
    p.lm_lambda = p.lm_step_norm = p.lm_predicted = p.lm_gain_ratio = NAN;
    if (opt->progress(&p, opt->progress_data) != 0)
        hf_opt_request_stop_reason(opt, HESSFIT_OPT_STOPPED);
}

hessfit_status hf_opt_run_slsqp_trf(hessfit_optimize *opt, const double *y, int resume_phase, hessfit_opt_outcome *outcome,
                                    int *last_nlopt)
{
    const long long warmup = hf_opt_warmup_evaluations(opt);
    if (resume_phase != 2 && opt->evaluations < warmup) {
        int r;
        opt->cycles_done = 1;
        opt->phase = HESSFIT_OPT_PHASE_WARMUP;
        r = hf_opt_nlopt_pass(opt, NLOPT_LD_SLSQP, NULL, opt->n, y, warmup - opt->evaluations);
        *last_nlopt = r;
        if (opt->failure != HESSFIT_SUCCESS)
            return opt->failure;
        if (r == NLOPT_INVALID_ARGS || r == NLOPT_OUT_OF_MEMORY)
            return hf_opt_nlopt_error(opt, r, opt->nlopt_message);
        if (opt->stop || (opt->maxeval > 0 && opt->evaluations >= opt->maxeval) ||
            (opt->maxtime > 0.0 && hf_opt_now() - opt->t_start >= opt->maxtime)) {
            if (!opt->stop) /* the run's budget ended the pass, not W */
                hf_opt_request_stop_reason(opt, opt->maxeval > 0 && opt->evaluations >= opt->maxeval
                                                        ? HESSFIT_OPT_MAXEVAL_REACHED
                                                        : HESSFIT_OPT_MAXTIME_REACHED);
            *outcome = opt->stop_reason;
            return HESSFIT_SUCCESS;
        }
        y = opt->best_x; /* TRF from the warm-up's best point */
    }
    opt->cycles_done = 2;
    opt->phase = HESSFIT_OPT_PHASE_TRF;
    opt->checkpoint_dirty = 1; /* the next checkpoint records the phase */
    if (resume_phase != 2)
        report_switch(opt);
    if (opt->stop) {
        *outcome = opt->stop_reason;
        return HESSFIT_SUCCESS;
    }
    return hf_opt_run_trf(opt, y, outcome);
}
