/*
 * HESSFIT_OPT_TRF: the trust-region reflective method of Coleman and Li ("An interior trust region
 * approach for nonlinear minimization subject to bounds", SIAM J. Optim. 6, 1996; Branch, Coleman
 * and Li, SIAM J. Sci. Comput. 21, 1999) for L(y) = sum_i r_i^2 in a box, on the normal equations
 * A = J^T J, g = dL/dy = 2 J^T r of the least-squares callback (y the scaled variables, as LM's).
 * The rules are scipy's (scipy/optimize/_lsq/trf.py: trf_bounds, select_step; _lsq/common.py:
 * CL_scaling_vector, solve_lsq_trust_region, update_tr_radius, step_size_to_bound,
 * make_strictly_feasible, check_termination), in scipy's units: cost F = L/2, gradient G = J^T r.
 *
 * One iteration at the accepted point y, strictly inside the box (fixed values, lo = hi, are left out):
 *   - Coleman-Li scaling: v_i = the distance to the bound that -G_i points toward (1 where that bound
 *     is infinite), dv_i = -1 / +1 / 0 for an upper / lower / no such bound; d_i = sqrt(v_i). In the
 *     hat variables p = d p_h the model is F + G_h^T p_h + p_h^T B p_h / 2 with G_h = d G and
 *     B = D A D + diag(G dv) (the second term Coleman-Li's C; >= 0 by construction), so a value near
 *     the bound it moves toward takes a step shrunk by sqrt(v_i) instead of being clipped onto it;
 *   - the trust-region step |p_h| <= Delta by More's method on the eigenpairs B = V diag(s^2) V^T
 *     (scipy takes the SVD of J augmented by diag(G dv)^1/2: the same s and V; suf = V^T G_h):
 *     p_h = -V diag(1 / (s^2 + alpha)) V^T G_h, alpha = 0 (Gauss-Newton) when that is inside, else
 *     alpha from |p_h| = Delta (10 safeguarded Newton iterations, |phi| < 0.01 Delta);
 *   - select_step: the step itself if y + p lies in the box; otherwise the best by the model of
 *     (a) p cut at the first bound it crosses, times theta = max(0.995, 1 - |v G|_inf), (b) the
 *     reflection there (the crossing components flipped), minimised along its line up to the trust
 *     region or theta of the way to the next bound, and (c) the scaled steepest descent -G_h, cut the
 *     same way; y + step is then moved strictly inside (nextafter) where it landed on a bound;
 *   - rho = actual / predicted reduction; rho < 1/4: Delta = |step_h| / 4; rho > 3/4 with
 *     |step_h| > 0.95 Delta: Delta doubles; alpha *= Delta_old / Delta_new; a step is accepted when
 *     the loss falls. A trial point where the objective is undefined: Delta = |step_h| / 4.
 * Delta starts at |y0 / sqrt(v)| (1 if that is 0), scipy's rule; a resumed run starts at the
 * checkpoint's radius (kept in lm_lambda).
 *
 * Stopping (scipy's tests): |v G|_inf <= gtol (G in L units here, dL/dy) or a zero loss: GTOL_REACHED;
 * actual reduction < ftol_rel L with rho > 1/4: FTOL_REACHED; |step| < xtol_rel (xtol_rel + |y|):
 * XTOL_REACHED; a step that does not move y or a radius below 1e-300: ROUNDOFF_LIMITED; maxeval,
 * maxtime, the stop flag and the progress callback through hf_opt_evaluate_lsq. As LM, every trial
 * point is evaluated with its normal equations.
 */
#include "hf_optimize_internal.h"

#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TRF_RADIUS_MIN 1e-300

typedef struct trf_work {
    double *y, *yt;         /* the accepted and the trial point (n) */
    double *a, *at;         /* J^T J (y units, n x n) at y and at yt */
    double *g, *gt;         /* dL/dy at y and at yt */
    int *idx;               /* the values that are not fixed, m of them */
    int *hits;              /* select_step: the values whose bound the step meets first */
    int m;
    /* over the m free values, at the accepted point */
    double *x, *lo, *hi;    /* y, its bounds */
    double *v, *d;          /* Coleman-Li's v and d = sqrt(v) */
    double *diag_h, *g_h;   /* G dv, d G (G = J^T r = g / 2) */
    double *b;              /* B = D A D + diag(G dv), m x m */
    double *vec, *s2, *suf; /* eigenvectors (columns) and eigenvalues of B; V^T G_h */
    double *p_h, *r_h, *ag_h, *tmp, *step_h, *step; /* select_step's candidates */
    double *vectors, *matrices;
} trf_work;

static void trf_work_free(trf_work *w)
{
    free(w->vectors);
    free(w->matrices);
    free(w->idx);
    free(w->hits);
}

static hessfit_status trf_work_alloc(trf_work *w, int n)
{
    const size_t un = (size_t)n;
    double **vec[] = {&w->y, &w->yt, &w->g, &w->gt, &w->x, &w->lo, &w->hi, &w->v, &w->d, &w->diag_h, &w->g_h,
                      &w->s2, &w->suf, &w->p_h, &w->r_h, &w->ag_h, &w->tmp, &w->step_h, &w->step};
    double **mat[] = {&w->a, &w->at, &w->b, &w->vec};
    const size_t nv = sizeof vec / sizeof vec[0], nm = sizeof mat / sizeof mat[0];
    memset(w, 0, sizeof *w);
    w->vectors = malloc(nv * un * sizeof *w->vectors);
    w->matrices = malloc(nm * un * un * sizeof *w->matrices);
    w->idx = malloc(un * sizeof *w->idx);
    w->hits = malloc(un * sizeof *w->hits);
    if (w->vectors == NULL || w->matrices == NULL || w->idx == NULL || w->hits == NULL) {
        trf_work_free(w);
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "TRF: no memory for the normal equations of %d parameters", n);
    }
    for (size_t k = 0; k < nv; k++)
        *vec[k] = w->vectors + k * un;
    for (size_t k = 0; k < nm; k++)
        *mat[k] = w->matrices + k * un * un;
    return HESSFIT_SUCCESS;
}

static double dot(const double *a, const double *b, int m)
{
    double s = 0.0;
    for (int i = 0; i < m; i++)
        s += a[i] * b[i];
    return s;
}

/* s^T B t over the free values. */
static double b_form(const trf_work *w, const double *s, const double *t)
{
    const int m = w->m;
    double q = 0.0;
    for (int i = 0; i < m; i++)
        q += s[i] * dot(w->b + (size_t)i * (size_t)m, t, m);
    return q;
}

/* The model's change q(s) = G_h^T s + s^T B s / 2 (scipy's evaluate_quadratic). */
static double model(const trf_work *w, const double *s)
{
    return dot(w->g_h, s, w->m) + 0.5 * b_form(w, s, s);
}

/* min over t in [lo, hi] of a t^2 + b t + c: *value and the t (scipy's minimize_quadratic_1d). */
static double minimize_1d(double a, double b, double c, double lo, double hi, double *value)
{
    double t[3] = {lo, hi, 0.0}, best_t = lo, best = INFINITY;
    int k = 2;
    if (a != 0.0) {
        const double e = -0.5 * b / a;
        if (lo < e && e < hi)
            t[k++] = e;
    }
    for (int i = 0; i < k; i++) {
        const double y = t[i] * (a * t[i] + b) + c;
        if (y < best)
            best = y, best_t = t[i];
    }
    *value = best;
    return best_t;
}

/* The largest t >= 0 with x + t s in the box, s = d s_h; hits[i] = 1 where x_i + t s_i meets its bound
 * (NULL: not wanted) (scipy's step_size_to_bound). */
static double to_bound(const trf_work *w, const double *x, const double *s_h, int *hits)
{
    double t_min = INFINITY;
    for (int i = 0; i < w->m; i++) {
        const double s = w->d[i] * s_h[i];
        if (s != 0.0) {
            const double t = fmax((w->lo[i] - x[i]) / s, (w->hi[i] - x[i]) / s);
            if (t < t_min)
                t_min = t;
        }
    }
    if (hits != NULL)
        for (int i = 0; i < w->m; i++) {
            const double s = w->d[i] * s_h[i];
            hits[i] = s != 0.0 && fmax((w->lo[i] - x[i]) / s, (w->hi[i] - x[i]) / s) == t_min ? 1 : 0;
        }
    return t_min;
}

/* The scaling, B and its eigenpairs at the accepted point; returns |v G|_inf (scipy's g_norm). */
static hessfit_status factor(hessfit_optimize *opt, trf_work *w, double *g_norm)
{
    const int n = opt->n, m = w->m;
    lapack_int info;
    *g_norm = 0.0;
    for (int k = 0; k < m; k++) { /* CL_scaling_vector */
        const int i = w->idx[k];
        const double gk = 0.5 * w->g[i];
        double v = 1.0, dv = 0.0;
        w->x[k] = w->y[i];
        if (gk < 0.0 && isfinite(w->hi[k]))
            v = w->hi[k] - w->x[k], dv = -1.0;
        else if (gk > 0.0 && isfinite(w->lo[k]))
            v = w->x[k] - w->lo[k], dv = 1.0;
        if (fabs(v * gk) > *g_norm)
            *g_norm = fabs(v * gk);
        w->v[k] = v;
        w->d[k] = sqrt(v);
        w->diag_h[k] = gk * dv;
        w->g_h[k] = w->d[k] * gk;
    }
    for (int k = 0; k < m; k++)
        for (int l = 0; l < m; l++) {
            const double bkl = w->d[k] * w->a[(size_t)w->idx[k] * (size_t)n + (size_t)w->idx[l]] * w->d[l] +
                               (k == l ? w->diag_h[k] : 0.0);
            w->b[(size_t)k * (size_t)m + (size_t)l] = w->vec[(size_t)k * (size_t)m + (size_t)l] = bkl;
        }
    info = LAPACKE_dsyevd(LAPACK_ROW_MAJOR, 'V', 'L', m, w->vec, m, w->s2);
    if (info != 0)
        return hessfit_error(HESSFIT_ERROR_LAPACK,
                             "TRF: the eigenpairs of the scaled normal matrix (%d free parameters, after %lld evaluations) "
                             "failed: LAPACKE_dsyevd returned %d (%s)",
                             m, opt->evaluations, (int)info, info < 0 ? "an invalid argument" : "no convergence");
    for (int j = 0; j < m; j++) {
        w->suf[j] = 0.0;
        if (w->s2[j] < 0.0) /* roundoff */
            w->s2[j] = 0.0;
    }
    for (int k = 0; k < m; k++)
        for (int j = 0; j < m; j++)
            w->suf[j] += w->vec[(size_t)k * (size_t)m + (size_t)j] * w->g_h[k];
    return HESSFIT_SUCCESS;
}

/* |p(alpha)| - Delta and its derivative, p(alpha) = -V diag(1 / (s^2 + alpha)) suf. */
static double phi(const trf_work *w, double alpha, double delta, double *phi_prime)
{
    double p2 = 0.0, d3 = 0.0;
    for (int j = 0; j < w->m; j++) {
        const double den = w->s2[j] + alpha, q = w->suf[j] / den;
        p2 += q * q;
        d3 += q * q / den;
    }
    *phi_prime = -d3 / sqrt(p2);
    return sqrt(p2) - delta;
}

/* p_h(alpha) into w->p_h. */
static void hat_step(trf_work *w, double alpha)
{
    const int m = w->m;
    for (int k = 0; k < m; k++) {
        double s = 0.0;
        for (int j = 0; j < m; j++)
            s -= w->vec[(size_t)k * (size_t)m + (size_t)j] * w->suf[j] / (w->s2[j] + alpha);
        w->p_h[k] = s;
    }
}

/* scipy's solve_lsq_trust_region on the eigenpairs: the step into w->p_h, the new alpha returned.
 * Full rank: s_min^2 > m_res eps s_max^2 (scipy's s_min > m_res eps s_max, squared for J^T J's
 * accuracy, which is eps s_max^2 in the eigenvalues). */
static double solve_trust_region(trf_work *w, long long n_residuals, double delta, double alpha)
{
    const int m = w->m;
    double s2_max = 0.0, s2_min = INFINITY, alpha_lower = 0.0, alpha_upper, pp;
    for (int j = 0; j < m; j++) {
        s2_max = fmax(s2_max, w->s2[j]);
        s2_min = fmin(s2_min, w->s2[j]);
    }
    const int full_rank = n_residuals >= m && s2_min > (double)n_residuals * DBL_EPSILON * s2_max;
    if (full_rank) {
        hat_step(w, 0.0);
        if (sqrt(dot(w->p_h, w->p_h, m)) <= delta)
            return 0.0;
        const double f0 = phi(w, 0.0, delta, &pp);
        alpha_lower = -f0 / pp;
    }
    alpha_upper = sqrt(dot(w->suf, w->suf, m)) / delta;
    if (!full_rank && alpha == 0.0)
        alpha = fmax(1e-3 * alpha_upper, sqrt(alpha_lower * alpha_upper));
    for (int it = 0; it < 10; it++) {
        if (alpha < alpha_lower || alpha > alpha_upper || !(alpha > 0.0))
            alpha = fmax(1e-3 * alpha_upper, sqrt(alpha_lower * alpha_upper));
        const double f = phi(w, alpha, delta, &pp);
        if (f < 0.0)
            alpha_upper = alpha;
        const double ratio = f / pp;
        alpha_lower = fmax(alpha_lower, alpha - ratio);
        alpha -= (f + delta) * ratio / delta;
        if (fabs(f) < 0.01 * delta)
            break;
    }
    hat_step(w, alpha);
    const double scale = delta / sqrt(dot(w->p_h, w->p_h, m)); /* |p_h| = Delta exactly (scipy) */
    for (int k = 0; k < m; k++)
        w->p_h[k] *= scale;
    return alpha;
}

/* scipy's select_step: w->step_h and w->step (y units, over the free values) from w->p_h; returns
 * the predicted reduction of F = L/2. */
static double select_step(trf_work *w, double delta, double theta)
{
    const int m = w->m;
    double p_stride, r_stride, r_lo, r_hi, r_value = INFINITY, p_value, ag_value, t_tr, t_bd, ag_stride;
    int inside = 1;
    for (int k = 0; k < m; k++) {
        const double xk = w->x[k] + w->d[k] * w->p_h[k];
        if (!(xk >= w->lo[k] && xk <= w->hi[k]))
            inside = 0;
    }
    if (inside) {
        for (int k = 0; k < m; k++)
            w->step_h[k] = w->p_h[k];
        p_value = model(w, w->p_h);
        goto done;
    }
    p_stride = to_bound(w, w->x, w->p_h, w->hits);
    for (int k = 0; k < m; k++) { /* r_h: p_h reflected at the bound; p cut there; tmp: the point on it */
        w->r_h[k] = w->hits[k] ? -w->p_h[k] : w->p_h[k];
        w->p_h[k] *= p_stride;
        w->tmp[k] = w->x[k] + w->d[k] * w->p_h[k];
    }
    { /* to_tr: the positive root of |p_h + t r_h| = Delta (scipy's intersect_trust_region) */
        const double a = dot(w->r_h, w->r_h, m), b = dot(w->p_h, w->r_h, m);
        const double c = fmin(dot(w->p_h, w->p_h, m) - delta * delta, 0.0);
        const double q = -(b + copysign(sqrt(b * b - a * c), b));
        t_tr = q != 0.0 ? fmax(q / a, c / q) : 0.0;
    }
    t_bd = to_bound(w, w->tmp, w->r_h, NULL);
    r_stride = fmin(t_bd, t_tr);
    if (r_stride > 0.0) {
        r_lo = (1.0 - theta) * p_stride / r_stride;
        r_hi = r_stride == t_bd ? theta * t_bd : t_tr;
    } else {
        r_lo = 0.0, r_hi = -1.0;
    }
    if (r_lo <= r_hi) { /* the model along p_h + t r_h */
        const double a = 0.5 * b_form(w, w->r_h, w->r_h);
        const double b = dot(w->g_h, w->r_h, m) + b_form(w, w->p_h, w->r_h);
        const double t = minimize_1d(a, b, model(w, w->p_h), r_lo, r_hi, &r_value);
        for (int k = 0; k < m; k++)
            w->r_h[k] = w->p_h[k] + t * w->r_h[k];
    }
    for (int k = 0; k < m; k++)
        w->p_h[k] *= theta;
    p_value = model(w, w->p_h);
    for (int k = 0; k < m; k++) /* the scaled steepest descent */
        w->ag_h[k] = -w->g_h[k];
    t_tr = delta / sqrt(dot(w->ag_h, w->ag_h, m));
    t_bd = to_bound(w, w->x, w->ag_h, NULL);
    ag_stride = t_bd < t_tr ? theta * t_bd : t_tr;
    {
        const double t = minimize_1d(0.5 * b_form(w, w->ag_h, w->ag_h), dot(w->g_h, w->ag_h, m), 0.0, 0.0, ag_stride,
                                     &ag_value);
        for (int k = 0; k < m; k++)
            w->ag_h[k] *= t;
    }
    {
        const double *best = w->ag_h;
        double best_value = ag_value;
        if (p_value < r_value && p_value < ag_value)
            best = w->p_h, best_value = p_value;
        else if (r_value < p_value && r_value < ag_value)
            best = w->r_h, best_value = r_value;
        for (int k = 0; k < m; k++)
            w->step_h[k] = best[k];
        p_value = best_value;
    }
done:
    for (int k = 0; k < m; k++)
        w->step[k] = w->d[k] * w->step_h[k];
    return -p_value;
}

/* The trial point yt = y + step, moved strictly inside where it reached a bound (scipy's
 * make_strictly_feasible with rstep 0); step becomes yt - y as rounded. Returns 1 when yt differs from y. */
static int trial_point(const hessfit_optimize *opt, trf_work *w)
{
    int moved = 0;
    memcpy(w->yt, w->y, (size_t)opt->n * sizeof *w->yt);
    for (int k = 0; k < w->m; k++) {
        double t = w->x[k] + w->step[k];
        if (t <= w->lo[k])
            t = nextafter(w->lo[k], w->hi[k]);
        else if (t >= w->hi[k])
            t = nextafter(w->hi[k], w->lo[k]);
        if (t != w->x[k])
            moved = 1;
        w->yt[w->idx[k]] = t;
        w->step[k] = t - w->x[k];
    }
    return moved;
}

static void accept_trial(trf_work *w)
{
    double *t;
    t = w->y, w->y = w->yt, w->yt = t;
    t = w->a, w->a = w->at, w->at = t;
    t = w->g, w->g = w->gt, w->gt = t;
}

hessfit_status hf_opt_run_trf(hessfit_optimize *opt, const double *y0, hessfit_opt_outcome *outcome)
{
    const int n = opt->n;
    trf_work w;
    double loss, delta, alpha = 0.0;
    int done = 0;
    hessfit_status st = trf_work_alloc(&w, n);
    if (st != HESSFIT_SUCCESS)
        return st;
    w.m = 0;
    for (int i = 0; i < n; i++)
        if (opt->lo[i] < opt->hi[i]) {
            w.lo[w.m] = opt->lo[i];
            w.hi[w.m] = opt->hi[i];
            w.idx[w.m++] = i;
        }
    /* the start strictly inside the box (scipy's make_strictly_feasible, rstep 1e-10) */
    memcpy(w.y, y0, (size_t)n * sizeof *w.y);
    for (int k = 0; k < w.m; k++) {
        const int i = w.idx[k];
        const double lo = w.lo[k], hi = w.hi[k];
        if (w.y[i] <= lo + 1e-10 * fmax(1.0, fabs(lo)))
            w.y[i] = lo + 1e-10 * fmax(1.0, fabs(lo));
        else if (w.y[i] >= hi - 1e-10 * fmax(1.0, fabs(hi)))
            w.y[i] = hi - 1e-10 * fmax(1.0, fabs(hi));
        if (w.y[i] < lo || w.y[i] > hi)
            w.y[i] = 0.5 * (lo + hi);
    }
    if (w.m == 0) {
        if (hf_opt_evaluate_lsq(opt, w.y, w.a, w.g, &loss) != HF_OPT_EVAL_REFUSED)
            hf_opt_request_stop_reason(opt, HESSFIT_OPT_GTOL_REACHED);
        done = 1;
    } else if (hf_opt_evaluate_lsq(opt, w.y, w.a, w.g, &loss) == HF_OPT_EVAL_REFUSED || opt->stop) {
        done = 1;
    }
    delta = opt->lm_lambda; /* a resumed run's radius */
    while (!done) {
        double g_norm;
        if ((st = factor(opt, &w, &g_norm)) != HESSFIT_SUCCESS)
            break;
        if (!(delta > 0.0)) { /* scipy's start: |y0 / sqrt(v)| */
            delta = 0.0;
            for (int k = 0; k < w.m; k++)
                delta += w.x[k] * w.x[k] / w.v[k];
            delta = delta > 0.0 ? sqrt(delta) : 1.0;
        }
        if (loss == 0.0 || 2.0 * g_norm <= opt->gtol) {
            done = hf_opt_request_stop_reason(opt, HESSFIT_OPT_GTOL_REACHED);
            break;
        }
        const double theta = fmax(0.995, 1.0 - g_norm);
        for (;;) { /* steps from y until the loss falls */
            double trial_loss, pred, actual, rho, step_h_norm, new_delta;
            alpha = solve_trust_region(&w, opt->n_residuals, delta, alpha);
            pred = 2.0 * select_step(&w, delta, theta); /* in L units */
            step_h_norm = sqrt(dot(w.step_h, w.step_h, w.m));
            if (!trial_point(opt, &w) || !(delta > TRF_RADIUS_MIN)) {
                done = hf_opt_request_stop_reason(opt, HESSFIT_OPT_ROUNDOFF_LIMITED);
                break;
            }
            opt->lm_lambda = delta;
            const hf_opt_eval_result trial = hf_opt_evaluate_trial(opt, loss, sqrt(dot(w.step, w.step, w.m)), pred, w.m,
                                                                   w.yt, w.at, w.gt, &trial_loss);
            if (trial == HF_OPT_EVAL_REFUSED) {
                done = 1;
                break;
            }
            if (trial == HF_OPT_EVAL_UNDEFINED) {
                delta = 0.25 * step_h_norm;
                continue;
            }
            actual = loss - trial_loss;
            rho = pred > 0.0 ? actual / pred : (pred == 0.0 && actual == 0.0 ? 1.0 : 0.0);
            new_delta = delta; /* update_tr_radius */
            if (rho < 0.25)
                new_delta = 0.25 * step_h_norm;
            else if (rho > 0.75 && step_h_norm > 0.95 * delta)
                new_delta = 2.0 * delta;
            if (actual < opt->ftol_rel * loss && rho > 0.25) /* check_termination */
                done = hf_opt_request_stop_reason(opt, HESSFIT_OPT_FTOL_REACHED);
            else if (sqrt(dot(w.step, w.step, w.m)) < opt->xtol_rel * (opt->xtol_rel + sqrt(dot(w.y, w.y, n))))
                done = hf_opt_request_stop_reason(opt, HESSFIT_OPT_XTOL_REACHED);
            if (opt->stop)
                done = 1;
            if (!done && new_delta > 0.0)
                alpha *= delta / new_delta;
            delta = new_delta;
            if (actual > 0.0) {
                accept_trial(&w);
                loss = trial_loss;
                break;
            }
            if (done)
                break;
        }
    }
    opt->lm_lambda = delta;
    trf_work_free(&w);
    if (st != HESSFIT_SUCCESS)
        return st;
    if (opt->failure != HESSFIT_SUCCESS)
        return opt->failure;
    *outcome = opt->stop_reason;
    return HESSFIT_SUCCESS;
}
