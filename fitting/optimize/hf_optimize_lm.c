/*
 * HESSFIT_OPT_LM: a bounded Levenberg-Marquardt method of hessfit's own, for L(y) = sum_i r_i^2 with
 * the normal equations A = J^T J, g = J^T r from the least-squares callback (y the scaled variables;
 * hf_opt_evaluate_lsq turns x units into y units). MINPACK's lmder has no bounds, hence this.
 *
 * One iteration at the accepted point y (Madsen, Nielsen and Tingleff, "Methods for non-linear least
 * squares problems", 2004, sections 3.2 and 3.4; More 1978 for the scaling):
 *   - the active set: y_i on a bound with dL/dy_i pushing outward (and y_i fixed, lo_i = hi_i); those
 *     are held, the others F are free. A variable on a bound whose gradient points inward is free, so
 *     it leaves the bound by itself (the active set is re-formed at every accepted point);
 *   - the step on F: (A_FF + lambda D_FF) delta = -g_F, D = diag(A) kept monotone over the run
 *     (D_i = max over the run of A_ii; 1 while that is 0), solved through the eigenpairs of the
 *     scaled matrix D^-1/2 A_FF D^-1/2 = V W V^T: delta = -D^-1/2 V (W + lambda)^-1 V^T D^-1/2 g_F,
 *     so a rejected step costs O(n^2) and a singular A (W_j = 0, roundoff W_j < 0 read as 0) needs
 *     no special case;
 *   - the projected step p = P(y + delta) - y (P: clip into the box); the model's gain
 *     pred = L - |r + J p|^2 = -(2 g^T p + p^T A p). Clipping can make pred <= 0 (only when a
 *     free variable is pushed out of the box by its coupling); then lambda grows without an
 *     evaluation: for large lambda delta tends to -D^-1 g / lambda, whose projection gains;
 *   - the gain ratio rho = (L(y) - L(y + p)) / pred: rho > 0 accepts (so the accepted point is always
 *     the best one) and lambda *= max(1/3, 1 - (2 rho - 1)^3); otherwise lambda *= nu, nu *= 2
 *     (Nielsen's update, nu = 2 after every acceptance).
 * Why this and not Coleman-Li's affine scaling: the active set with projection keeps every bound
 * exactly (a point on a bound is exactly on it, and an active variable has no gradient in the
 * stopping test), needs no interior start, and stays one dense symmetric solve per point.
 *
 * Stopping: the projected gradient norm (hf_opt_projected_gradient_norm) <= gtol, a zero loss or no
 * free variable: GTOL_REACHED; MINPACK's ftol test (|actual| and predicted relative reduction of L
 * both <= ftol_rel, rho <= 2): FTOL_REACHED; |p| <= xtol_rel |y|: XTOL_REACHED; a step that does not
 * move y, or lambda beyond 1e32: ROUNDOFF_LIMITED; maxeval, maxtime, the stop flag and the progress
 * callback through hf_opt_evaluate_lsq. Every trial point is evaluated with its normal equations
 * (one evaluation per call, whatever it computes): an accepted step (the usual case) then needs no
 * second call.
 */
#include "hf_optimize_internal.h"

#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LM_LAMBDA_START 1e-3 /* Marquardt's, relative to D = diag(A) */
#define LM_LAMBDA_MIN 1e-300 /* > 0: a singular A stays solvable (a step too long for the model is
                                 rejected); no larger floor, or the damping would keep a nearly
                                 singular direction (Powell singular) from converging */
#define LM_LAMBDA_MAX 1e32   /* beyond it the steps are below the resolution of y */

typedef struct lm_work {
    double *y, *yt;   /* the accepted and the trial point */
    double *a, *at;   /* J^T J (y units, n x n row-major) at y and at yt */
    double *g, *gt;   /* dL/dy = 2 J^T r at y and at yt */
    double *d;        /* More's scaling, monotone */
    double *v, *w;    /* eigenvectors (columns, m x m row-major) and eigenvalues of D^-1/2 A_FF D^-1/2 */
    double *c;        /* V^T D^-1/2 g_F */
    double *p;        /* the projected step */
    int *free_idx;    /* F, m entries */
    int m;
    double *vectors, *matrices; /* the blocks the pointers above point into (accept_trial swaps them) */
} lm_work;

static void lm_work_free(lm_work *w)
{
    free(w->vectors);
    free(w->matrices);
    free(w->free_idx);
}

static hessfit_status lm_work_alloc(lm_work *w, int n)
{
    const size_t un = (size_t)n;
    memset(w, 0, sizeof *w);
    w->y = w->vectors = malloc(8 * un * sizeof *w->y);
    w->a = w->matrices = malloc(3 * un * un * sizeof *w->a);
    w->free_idx = malloc(un * sizeof *w->free_idx);
    if (w->y == NULL || w->a == NULL || w->free_idx == NULL) {
        lm_work_free(w);
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "LM: no memory for the normal equations of %d parameters", n);
    }
    w->yt = w->y + un;
    w->g = w->y + 2 * un;
    w->gt = w->y + 3 * un;
    w->d = w->y + 4 * un;
    w->w = w->y + 5 * un;
    w->c = w->y + 6 * un;
    w->p = w->y + 7 * un;
    w->at = w->a + un * un;
    w->v = w->a + 2 * un * un;
    return HESSFIT_SUCCESS;
}

/* D_i = max(D_i, A_ii); a column of J that is zero so far keeps D_i = 1 (MINPACK's choice). */
static void update_scaling(lm_work *w, int n, int first)
{
    for (int i = 0; i < n; i++) {
        const double aii = w->a[(size_t)i * (size_t)n + (size_t)i];
        if (first)
            w->d[i] = aii > 0.0 ? aii : 1.0;
        else if (aii > w->d[i])
            w->d[i] = aii;
    }
}

/* The free set at the accepted point and the eigenpairs of its scaled normal matrix. */
static hessfit_status factor_free(hessfit_optimize *opt, lm_work *w)
{
    const int n = opt->n;
    int m = 0;
    lapack_int info;
    for (int i = 0; i < n; i++) {
        const int held = opt->lo[i] == opt->hi[i] || (w->y[i] <= opt->lo[i] && w->g[i] > 0.0) ||
                         (w->y[i] >= opt->hi[i] && w->g[i] < 0.0);
        if (!held)
            w->free_idx[m++] = i;
    }
    w->m = m;
    if (m == 0)
        return HESSFIT_SUCCESS;
    for (int k = 0; k < m; k++) {
        const int i = w->free_idx[k];
        for (int l = 0; l <= k; l++) {
            const int j = w->free_idx[l];
            w->v[(size_t)k * (size_t)m + (size_t)l] = w->a[(size_t)i * (size_t)n + (size_t)j] / sqrt(w->d[i] * w->d[j]);
        }
    }
    info = LAPACKE_dsyevd(LAPACK_ROW_MAJOR, 'V', 'L', m, w->v, m, w->w);
    if (info != 0)
        return hessfit_error(HESSFIT_ERROR_LAPACK,
                             "LM: the eigenpairs of the scaled normal matrix (%d free parameters, after %lld evaluations) "
                             "failed: LAPACKE_dsyevd returned %d (%s)",
                             m, opt->evaluations, (int)info,
                             info < 0 ? "an invalid argument" : "no convergence");
    for (int j = 0; j < m; j++)
        w->c[j] = 0.0;
    for (int k = 0; k < m; k++) { /* c = V^T D^-1/2 (g_F / 2), g/2 = J^T r */
        const int i = w->free_idx[k];
        const double gk = 0.5 * w->g[i] / sqrt(w->d[i]);
        for (int j = 0; j < m; j++)
            w->c[j] += w->v[(size_t)k * (size_t)m + (size_t)j] * gk;
    }
    return HESSFIT_SUCCESS;
}

/* The projected step for lambda into w->yt and w->p; returns the model's gain pred (NaN when the
 * step is not finite) and sets *moved when y + p differs from y. */
static double projected_step(const hessfit_optimize *opt, lm_work *w, double lambda, int *moved)
{
    const int n = opt->n, m = w->m;
    double pred = 0.0;
    *moved = 0;
    memcpy(w->yt, w->y, (size_t)n * sizeof *w->yt);
    memset(w->p, 0, (size_t)n * sizeof *w->p);
    for (int k = 0; k < m; k++) {
        const int i = w->free_idx[k];
        double delta = 0.0, t;
        for (int j = 0; j < m; j++) {
            const double wj = w->w[j] > 0.0 ? w->w[j] : 0.0;
            delta -= w->v[(size_t)k * (size_t)m + (size_t)j] * w->c[j] / (wj + lambda);
        }
        delta /= sqrt(w->d[i]);
        if (!isfinite(delta))
            return NAN;
        t = w->y[i] + delta;
        t = t < opt->lo[i] ? opt->lo[i] : t > opt->hi[i] ? opt->hi[i] : t;
        w->yt[i] = t;
        w->p[i] = t - w->y[i];
        if (t != w->y[i])
            *moved = 1;
    }
    /* pred = -(g^T p + p^T A p), g = dL/dy = 2 J^T r; p is zero off F */
    for (int k = 0; k < m; k++) {
        const int i = w->free_idx[k];
        double ap = 0.0;
        for (int l = 0; l < m; l++) {
            const int j = w->free_idx[l];
            ap += w->a[(size_t)i * (size_t)n + (size_t)j] * w->p[j];
        }
        pred -= w->p[i] * (w->g[i] + ap);
    }
    return pred;
}

static double norm2(const double *x, int n)
{
    double s = 0.0;
    for (int i = 0; i < n; i++)
        s += x[i] * x[i];
    return sqrt(s);
}

/* Swaps the trial point's state into the accepted one. */
static void accept_trial(lm_work *w)
{
    double *t;
    t = w->y, w->y = w->yt, w->yt = t;
    t = w->a, w->a = w->at, w->at = t;
    t = w->g, w->g = w->gt, w->gt = t;
}

/* A rejected step: lambda *= nu, nu *= 2; returns 1 (the run stops, roundoff limited) beyond LM_LAMBDA_MAX. */
static int raise_damping(hessfit_optimize *opt, double *nu)
{
    opt->lm_lambda *= *nu;
    *nu *= 2.0;
    return opt->lm_lambda > LM_LAMBDA_MAX ? hf_opt_request_stop_reason(opt, HESSFIT_OPT_ROUNDOFF_LIMITED) : 0;
}

hessfit_status hf_opt_run_lm(hessfit_optimize *opt, const double *y0, hessfit_opt_outcome *outcome)
{
    const int n = opt->n;
    lm_work w;
    double loss, nu = 2.0;
    int done = 0;
    hessfit_status st = lm_work_alloc(&w, n);
    if (st != HESSFIT_SUCCESS)
        return st;
    if (!(opt->lm_lambda > 0.0))
        opt->lm_lambda = LM_LAMBDA_START;
    memcpy(w.y, y0, (size_t)n * sizeof *w.y);
    if (hf_opt_evaluate_lsq(opt, w.y, w.a, w.g, &loss) == HF_OPT_EVAL_REFUSED || opt->stop)
        done = 1;
    else
        update_scaling(&w, n, 1);
    while (!done) {
        if (loss == 0.0 || hf_opt_projected_gradient_norm(opt, w.y, w.g) <= opt->gtol) {
            done = hf_opt_request_stop_reason(opt, HESSFIT_OPT_GTOL_REACHED);
            break;
        }
        st = factor_free(opt, &w);
        if (st != HESSFIT_SUCCESS)
            break;
        if (w.m == 0) { /* every variable held by its bound: a stationary point of the box */
            done = hf_opt_request_stop_reason(opt, HESSFIT_OPT_GTOL_REACHED);
            break;
        }
        for (;;) { /* steps from y until one is accepted */
            double trial_loss, pred, actual, rho;
            int moved;
            pred = projected_step(opt, &w, opt->lm_lambda, &moved);
            if (isfinite(pred) && !moved) {
                done = hf_opt_request_stop_reason(opt, HESSFIT_OPT_ROUNDOFF_LIMITED);
                break;
            }
            if (!(pred > 0.0)) { /* clipped into a step the model does not like: shorter, unevaluated */
                if ((done = raise_damping(opt, &nu)) != 0)
                    break;
                continue;
            }
            const hf_opt_eval_result trial =
                hf_opt_evaluate_trial(opt, loss, norm2(w.p, n), pred, w.m, w.yt, w.at, w.gt, &trial_loss);
            if (trial == HF_OPT_EVAL_REFUSED) {
                done = 1;
                break;
            }
            if (trial == HF_OPT_EVAL_UNDEFINED) { /* no objective there: a rejected step */
                if ((done = raise_damping(opt, &nu)) != 0)
                    break;
                continue;
            }
            actual = loss - trial_loss;
            rho = actual / pred;
            if (fabs(actual) <= opt->ftol_rel * loss && pred <= opt->ftol_rel * loss && rho <= 2.0)
                done = hf_opt_request_stop_reason(opt, HESSFIT_OPT_FTOL_REACHED);
            else if (norm2(w.p, n) <= opt->xtol_rel * norm2(w.y, n))
                done = hf_opt_request_stop_reason(opt, HESSFIT_OPT_XTOL_REACHED);
            if (opt->stop) /* one of the above, or the evaluation's own stop (flag, callback, limit) */
                done = 1;
            if (rho > 0.0) {
                const double t = 2.0 * rho - 1.0;
                accept_trial(&w);
                loss = trial_loss;
                update_scaling(&w, n, 0);
                opt->lm_lambda *= 1.0 - t * t * t > 1.0 / 3.0 ? 1.0 - t * t * t : 1.0 / 3.0;
                if (opt->lm_lambda < LM_LAMBDA_MIN)
                    opt->lm_lambda = LM_LAMBDA_MIN;
                nu = 2.0;
                break;
            }
            if (done || (done = raise_damping(opt, &nu)) != 0)
                break;
        }
    }
    lm_work_free(&w);
    if (st != HESSFIT_SUCCESS)
        return st;
    if (opt->failure != HESSFIT_SUCCESS)
        return opt->failure;
    *outcome = opt->stop_reason;
    return HESSFIT_SUCCESS;
}
