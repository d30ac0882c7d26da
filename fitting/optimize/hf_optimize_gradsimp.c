/* q2mm's grad-simp cycle (hessfit_optimize.h): a full L-BFGS pass, a sensitivity ranking of every
 * parameter, a Nelder-Mead pass on the few most sensitive, repeated until a cycle improves the
 * loss by less than min_improvement or max_cycles cycles are done. */
#include "hf_optimize_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Stable merge sort of idx[0..n) by key[idx] (ascending, or descending when desc), ties by index. */
static int before(const double *key, int a, int b, int desc)
{
    if (key[a] != key[b])
        return desc ? key[a] > key[b] : key[a] < key[b];
    return a < b;
}

static void sort_indices(int *idx, int *tmp, int n, const double *key, int desc)
{
    for (int width = 1; width < n; width *= 2) {
        for (int lo = 0; lo < n; lo += 2 * width) {
            int mid = lo + width < n ? lo + width : n;
            int hi = lo + 2 * width < n ? lo + 2 * width : n;
            int i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                tmp[k++] = before(key, idx[j], idx[i], desc) ? idx[j++] : idx[i++];
            while (i < mid)
                tmp[k++] = idx[i++];
            while (j < hi)
                tmp[k++] = idx[j++];
        }
        memcpy(idx, tmp, (size_t)n * sizeof *idx);
    }
}

/*
 * The sensitivity of every parameter at the best point (opt->ranking, opt->score).
 * q2mm's measure: with h the step shrunk so that x +- h stays inside the bounds,
 *     d1 = (L(x + h e_i) - L(x - h e_i)) / 2,   d2 = L(x + h e_i) + L(x - h e_i) - 2 L(x),
 * score d2 / d1^2 (+inf when d1 = 0 or h = 0), ascending: the parabola through the three points
 * promises a decrease of d1^2 / (2 d2) along e_i. The gradient measure: |dL/dx_i| h_i (0 for a
 * component pushing against an active bound), descending.
 * Returns 0, or 1 when the run must stop (opt->stop / opt->failure say why).
 */
static int sensitivity(hessfit_optimize *opt, double *base, double *probe, int *tmp)
{
    const int n = opt->n;
    const double f0 = opt->best_loss;
    int desc = 0;
    memcpy(base, opt->best_x, (size_t)n * sizeof *base);
    if (opt->gs.sensitivity == HESSFIT_OPT_SENSITIVITY_GRADIENT) {
        const double *g = opt->best_grad;
        double loss;
        if (!opt->best_grad_valid) {
            hf_opt_eval_result r = hf_opt_evaluate(opt, base, opt->g_full, &loss);
            if (r == HF_OPT_EVAL_REFUSED)
                return 1;
            g = opt->g_full; /* at base (the best point may have moved if this was lower: same point) */
            if (r == HF_OPT_EVAL_DONE_STOP)
                return 1;
        }
        for (int i = 0; i < n; i++) {
            int blocked = (base[i] <= opt->lo[i] && g[i] > 0.0) || (base[i] >= opt->hi[i] && g[i] < 0.0);
            opt->score[i] = blocked ? 0.0 : fabs(g[i]) * opt->step[i];
        }
        desc = 1;
    } else {
        memcpy(probe, base, (size_t)n * sizeof *probe);
        for (int i = 0; i < n; i++) {
            double h = opt->step[i], up, down, fp, fm, d1, d2, denom;
            hf_opt_eval_result r;
            if (opt->hi[i] - base[i] < h)
                h = opt->hi[i] - base[i];
            if (base[i] - opt->lo[i] < h)
                h = base[i] - opt->lo[i];
            opt->score[i] = INFINITY;
            if (!(h > 0.0))
                continue; /* at a bound: q2mm skips it (its d1 stays 0) */
            up = base[i] + h;
            down = base[i] - h;
            probe[i] = up < opt->hi[i] ? up : opt->hi[i];
            r = hf_opt_evaluate(opt, probe, NULL, &fp);
            if (r != HF_OPT_EVAL_DONE)
                return 1;
            probe[i] = down > opt->lo[i] ? down : opt->lo[i];
            r = hf_opt_evaluate(opt, probe, NULL, &fm);
            if (r != HF_OPT_EVAL_DONE)
                return 1;
            probe[i] = base[i];
            d1 = 0.5 * (fp - fm);
            d2 = fp + fm - 2.0 * f0;
            denom = d1 * d1;
            opt->score[i] = denom > 0.0 ? d2 / denom : INFINITY;
        }
    }
    for (int i = 0; i < n; i++)
        opt->ranking[i] = i;
    sort_indices(opt->ranking, tmp, n, opt->score, desc);
    opt->have_ranking = 1;
    return 0;
}

static hessfit_status append_cycle(hessfit_optimize *opt, const hessfit_opt_cycle *c)
{
    if (opt->n_cycles == opt->cap_cycles) {
        int cap = opt->cap_cycles == 0 ? 16 : 2 * opt->cap_cycles;
        hessfit_opt_cycle *grown = realloc(opt->cycles, (size_t)cap * sizeof *grown);
        if (grown == NULL)
            return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "grad-simp: no memory for the record of cycle %d", c->cycle);
        opt->cycles = grown;
        opt->cap_cycles = cap;
    }
    opt->cycles[opt->n_cycles++] = *c;
    return HESSFIT_SUCCESS;
}

/* After a pass: the run's own limits, which NLopt reports as the end of the pass. */
static void check_run_limits(hessfit_optimize *opt, int r)
{
    if (r == NLOPT_MAXTIME_REACHED)
        hf_opt_request_stop_reason(opt, HESSFIT_OPT_MAXTIME_REACHED);
    else if (opt->maxeval > 0 && opt->evaluations >= opt->maxeval)
        hf_opt_request_stop_reason(opt, HESSFIT_OPT_MAXEVAL_REACHED);
}

/* A pass's NLopt result that ends the whole run: invalid arguments, no memory. NLOPT_FAILURE and
 * NLOPT_ROUNDOFF_LIMITED end only the pass (recorded in the cycle); the cycle goes on from the
 * best point. */
static int fatal_nlopt(int r)
{
    return r == NLOPT_INVALID_ARGS || r == NLOPT_OUT_OF_MEMORY;
}

hessfit_status hf_opt_run_grad_simp(hessfit_optimize *opt, const double *x, hessfit_opt_outcome *outcome, int *last_nlopt)
{
    const int n = opt->n;
    const int m = opt->gs.n_simplex < n ? opt->gs.n_simplex : n;
    double *base = malloc(2 * (size_t)n * sizeof *base);
    int *tmp = malloc((size_t)n * sizeof *tmp);
    hessfit_status st = HESSFIT_SUCCESS;
    int c;
    if (base == NULL || tmp == NULL) {
        free(base);
        free(tmp);
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "grad-simp: no memory for %d parameters", n);
    }
    *outcome = HESSFIT_OPT_MAX_CYCLES;
    for (c = opt->cycles_done + 1; c <= opt->gs.max_cycles; c++) {
        hessfit_opt_cycle rec;
        long long ev0 = opt->evaluations;
        int r;
        memset(&rec, 0, sizeof rec);
        rec.cycle = c;
        opt->cycle = c;
        rec.loss_before = opt->have_best ? opt->best_loss : NAN;

        /* 1. L-BFGS on all parameters, from the best point. */
        opt->phase = HESSFIT_OPT_PHASE_FULL;
        r = hf_opt_nlopt_pass(opt, NLOPT_LD_LBFGS, NULL, n, opt->have_best ? opt->best_x : x, opt->gs.full_maxeval);
        rec.full_nlopt_result = r;
        *last_nlopt = r;
        if (opt->failure != HESSFIT_SUCCESS)
            break;
        if (fatal_nlopt(r)) {
            st = hf_opt_nlopt_error(opt, r, opt->nlopt_message);
            break;
        }
        if (isnan(rec.loss_before))
            rec.loss_before = opt->initial_loss; /* a fresh run: its start point */
        rec.loss_after_full = opt->best_loss;
        check_run_limits(opt, r);
        if (opt->stop)
            break;

        /* 2. The sensitivity ranking at the best point. */
        opt->phase = HESSFIT_OPT_PHASE_SENSITIVITY;
        if (sensitivity(opt, base, base + n, tmp) != 0)
            break;

        /* 3. Nelder-Mead on the m first-ranked parameters. */
        rec.n_selected = m;
        memcpy(rec.selected, opt->ranking, (size_t)m * sizeof *rec.selected);
        opt->phase = HESSFIT_OPT_PHASE_SIMPLEX;
        r = hf_opt_nlopt_pass(opt, NLOPT_LN_NELDERMEAD, rec.selected, m, opt->best_x, opt->gs.simplex_maxeval);
        rec.simplex_nlopt_result = r;
        *last_nlopt = r;
        if (opt->failure != HESSFIT_SUCCESS)
            break;
        if (fatal_nlopt(r)) {
            st = hf_opt_nlopt_error(opt, r, opt->nlopt_message);
            break;
        }
        rec.loss_after_simplex = opt->best_loss;
        rec.improvement = rec.loss_before > 0.0 ? (rec.loss_before - rec.loss_after_simplex) / rec.loss_before : 0.0;
        rec.evaluations = opt->evaluations - ev0;
        check_run_limits(opt, r);
        if (opt->stop)
            break; /* cut short (request, evaluation or time limit): not a finished cycle */

        /* A finished cycle: recorded, checkpointed, reported. */
        opt->cycles_done = c;
        st = append_cycle(opt, &rec);
        if (st != HESSFIT_SUCCESS)
            break;
        if (opt->checkpoint_path != NULL && hf_opt_write_checkpoint(opt) != HESSFIT_SUCCESS)
            break;
        hf_opt_report_cycle(opt, &rec);
        if (rec.improvement < opt->gs.min_improvement) {
            *outcome = HESSFIT_OPT_CYCLE_CONVERGED;
            break;
        }
        if (opt->stop)
            break;
    }
    opt->cycle = 0;
    free(base);
    free(tmp);
    if (st != HESSFIT_SUCCESS)
        return st;
    if (opt->failure != HESSFIT_SUCCESS)
        return opt->failure;
    if (opt->stop && *outcome != HESSFIT_OPT_CYCLE_CONVERGED)
        *outcome = opt->stop_reason;
    return HESSFIT_SUCCESS;
}
