/* The optimiser driver (fitting/include/hessfit_optimize.h) on functions with known minima:
 * L-BFGS, SLSQP, Nelder-Mead and Subplex on Rosenbrock and on a box-bounded quadratic whose minimum
 * lies outside the box; the scaling of the variables (the same run as scaling the objective by hand,
 * bit for bit; bounds kept in the caller's units; a scaled checkpoint resumed exactly) and the L-BFGS
 * memory; grad-simp's sensitivity measure against its closed form and the whole cycle on
 * a function where three of eight parameters matter; failures, NaNs, the stop flag (a real
 * SIGINT), the progress callback, evaluation and time limits; checkpoints (bit-identical round
 * trip, resumed runs, every truncation and mutation of a file an error naming path:line); q2mm's
 * default bounds and steps and the value kinds of a real MM3* force field. */
#define _POSIX_C_SOURCE 200809L

#include "hessfit_forcefield.h"
#include "hessfit_optimize.h"
#include "test_util.h"

#include <dirent.h>
#include <math.h>
#include <nlopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#define MAX_N 16
#define MAX_LOG 20000
/* The ripple on the parameters that matter in FN_FEW: height 0.02, period 2 pi 0.002; its slope
 * (up to 10) traps a gradient method in a local minimum every 0.0126 along those axes. */
#define FEW_RIPPLE 0.02
#define FEW_WIDTH 0.002

/* ---- test functions ---------------------------------------------------------------------- */

typedef enum { FN_ROSENBROCK, FN_QUADRATIC, FN_FEW } fn_kind;

typedef struct {
    fn_kind kind;
    int n;
    double a[MAX_N], c[MAX_N]; /* quadratic: sum a_i (x_i - c_i)^2; few: weights and centres */
    int matters[MAX_N];        /* few: 1 for the parameters in the |.| part */
    long long calls;
    long long fail_at;         /* this evaluation reports an error */
    long long nan_at;          /* this evaluation returns NaN without an error */
    long long nan_grad_at;     /* this evaluation returns a NaN gradient entry 1 */
    long long sigint_at;       /* this evaluation raises SIGINT */
    double sleep_s;
    int log_n;                 /* every evaluation: x and loss */
    double log_x[MAX_LOG][MAX_N];
    double log_f[MAX_LOG];
} test_fn;

static test_fn F; /* one at a time; large, so static */

static void fn_reset(fn_kind kind, int n)
{
    memset(&F, 0, sizeof F);
    F.kind = kind;
    F.n = n;
}

static double fn_value(const double *x, double *g)
{
    double f = 0.0;
    int n = F.n;
    if (g != NULL)
        memset(g, 0, (size_t)n * sizeof *g);
    switch (F.kind) {
    case FN_ROSENBROCK:
        for (int i = 0; i + 1 < n; i++) {
            double t1 = x[i + 1] - x[i] * x[i], t2 = 1.0 - x[i];
            f += 100.0 * t1 * t1 + t2 * t2;
            if (g != NULL) {
                g[i] += -400.0 * x[i] * t1 - 2.0 * t2;
                g[i + 1] += 200.0 * t1;
            }
        }
        break;
    case FN_QUADRATIC:
        for (int i = 0; i < n; i++) {
            double d = x[i] - F.c[i];
            f += F.a[i] * d * d;
            if (g != NULL)
                g[i] = 2.0 * F.a[i] * d;
        }
        break;
    case FN_FEW: /* 1 + sum_S [a_i (x_i - c_i)^2 + R (1 - cos(x_i / W))] + sum_rest a_i (x_i - c_i)^2 */
        f = 1.0;
        for (int i = 0; i < n; i++) {
            double d = x[i] - F.c[i];
            if (F.matters[i]) {
                f += F.a[i] * d * d + FEW_RIPPLE * (1.0 - cos(x[i] / FEW_WIDTH));
                if (g != NULL)
                    g[i] = 2.0 * F.a[i] * d + FEW_RIPPLE / FEW_WIDTH * sin(x[i] / FEW_WIDTH);
            } else {
                f += F.a[i] * d * d;
                if (g != NULL)
                    g[i] = 2.0 * F.a[i] * d;
            }
        }
        break;
    }
    return f;
}

static double objective(int n, const double *x, double *grad, void *data, hessfit_status *status)
{
    double f;
    (void)data;
    CHECK(n == F.n, "objective called with n = %d, not %d", n, F.n);
    F.calls++;
    if (F.sleep_s > 0.0) {
        struct timespec t = {0, (long)(F.sleep_s * 1e9)};
        nanosleep(&t, NULL);
    }
    if (F.calls == F.fail_at) {
        *status = hessfit_error(HESSFIT_ERROR_OPENMM, "molecule 3: the Hessian kernel failed (test failure)");
        return 0.0;
    }
    f = fn_value(x, grad);
    if (F.calls == F.nan_at)
        f = NAN;
    if (F.calls == F.nan_grad_at && grad != NULL)
        grad[1] = NAN;
    if (F.log_n < MAX_LOG) {
        memcpy(F.log_x[F.log_n], x, (size_t)n * sizeof *x);
        F.log_f[F.log_n] = f;
        F.log_n++;
    }
    if (F.calls == F.sigint_at)
        raise(SIGINT);
    return f;
}

/* The lowest logged loss (first of equals) and its index. */
static int log_argmin(void)
{
    int best = 0;
    for (int k = 1; k < F.log_n; k++)
        if (F.log_f[k] < F.log_f[best])
            best = k;
    return best;
}

static hessfit_optimize *make(hessfit_opt_algorithm alg, int n)
{
    hessfit_optimize *opt = NULL;
    HF_CALL(hessfit_optimize_create(alg, n, &opt));
    HF_CALL(hessfit_optimize_set_objective(opt, objective, NULL));
    return opt;
}

static void rosenbrock_start(double *x, int n)
{
    for (int i = 0; i < n; i++)
        x[i] = i % 2 == 0 ? -1.2 : 1.0;
}

static double max_abs_minus(const double *x, int n, double v)
{
    double m = 0.0;
    for (int i = 0; i < n; i++)
        m = fmax(m, fabs(x[i] - v));
    return m;
}

/* ---- progress ------------------------------------------------------------------------------ */

typedef struct {
    long long count, last_evaluations, improvements, cycles;
    double last_best, last_rate;
    int grad_norm_finite, grad_norm_nan, bad;
    long long stop_at_phase_count; /* stop on the k-th evaluation of stop_phase */
    hessfit_opt_phase stop_phase;
    long long phase_count;
    long long phase_first[4]; /* first evaluation number of each phase */
} progress_log;

static int on_progress(const hessfit_opt_progress *p, void *data)
{
    progress_log *log = data;
    if (p->event == HESSFIT_OPT_EVENT_CYCLE) {
        log->cycles++;
        if (p->cycle_info == NULL || p->cycle_info->cycle != p->cycle)
            log->bad++;
        return 0;
    }
    if (p->evaluations != log->last_evaluations + 1 && log->count > 0)
        log->bad++;
    if (log->count > 0 && p->best_loss > log->last_best)
        log->bad++;
    if (p->new_best && p->loss != p->best_loss)
        log->bad++;
    if (p->new_best)
        log->improvements++;
    if (isnan(p->gradient_norm))
        log->grad_norm_nan++;
    else
        log->grad_norm_finite++;
    if (log->phase_first[p->phase] == 0)
        log->phase_first[p->phase] = p->evaluations;
    log->count++;
    log->last_evaluations = p->evaluations;
    log->last_best = p->best_loss;
    log->last_rate = p->evaluations_per_second;
    if (log->stop_at_phase_count > 0 && p->phase == log->stop_phase &&
        ++log->phase_count == log->stop_at_phase_count)
        return 1;
    return 0;
}

/* ---- L-BFGS, Nelder-Mead, Subplex ---------------------------------------------------------- */

static void test_rosenbrock(hessfit_opt_algorithm alg, int n, double tol, long long maxeval)
{
    double x[MAX_N];
    hessfit_opt_result res;
    progress_log log;
    hessfit_optimize *opt = make(alg, n);
    fn_reset(FN_ROSENBROCK, n);
    rosenbrock_start(x, n);
    memset(&log, 0, sizeof log);
    HF_CALL(hessfit_optimize_set_ftol_rel(opt, 1e-15));
    HF_CALL(hessfit_optimize_set_maxeval(opt, maxeval));
    if (alg != HESSFIT_OPT_LBFGS && alg != HESSFIT_OPT_SLSQP) {
        double step[MAX_N];
        for (int i = 0; i < n; i++)
            step[i] = 0.1;
        HF_CALL(hessfit_optimize_set_initial_step(opt, step));
        HF_CALL(hessfit_optimize_set_xtol_rel(opt, 1e-12));
    }
    HF_CALL(hessfit_optimize_set_progress(opt, on_progress, &log));
    HF_CALL(hessfit_optimize_run(opt, x, &res));
    printf("  %-13s Rosenbrock n = %2d: %s after %lld evaluations (%lld new bests), loss %.3g (start %.4g), "
           "max|x - 1| %.3g\n",
           hessfit_opt_algorithm_name(alg), n, hessfit_opt_outcome_string(res.outcome), res.evaluations, log.improvements,
           res.loss, res.initial_loss, max_abs_minus(x, n, 1.0));
    if (tol == 0.0) {
        /* Subplex in 10 dimensions does not finish Rosenbrock's valley within the budget: only the
         * descent is checked. */
        CHECK(res.loss <= 1e-2 * res.initial_loss, "%s Rosenbrock n = %d: loss %g from %g", hessfit_opt_algorithm_name(alg),
              n, res.loss, res.initial_loss);
    } else if (tol > 0.0) {
        CHECK(max_abs_minus(x, n, 1.0) <= tol, "%s Rosenbrock n = %d: max|x - 1| = %g > %g", hessfit_opt_algorithm_name(alg),
              n, max_abs_minus(x, n, 1.0), tol);
    } else {
        /* A derivative-free method in 10 dimensions: a stationary point, the global minimum (0) or
         * the generalized Rosenbrock's local one near (-1, 1, ..., 1) (3.98662). */
        double g[MAX_N], gnorm = 0.0;
        fn_value(x, g);
        for (int i = 0; i < n; i++)
            gnorm += g[i] * g[i];
        gnorm = sqrt(gnorm);
        printf("    |grad L| at the end %.3g\n", gnorm);
        CHECK(gnorm <= -tol, "%s Rosenbrock n = %d: |grad| %g at the end", hessfit_opt_algorithm_name(alg), n, gnorm);
        CHECK(res.loss <= 1e-6 || fabs(res.loss - 3.98662) <= 1e-4, "%s Rosenbrock n = %d: loss %.8g",
              hessfit_opt_algorithm_name(alg), n, res.loss);
    }
    CHECK(res.outcome != HESSFIT_OPT_STOPPED && (res.outcome != HESSFIT_OPT_MAXEVAL_REACHED || tol == 0.0), "outcome %s",
          hessfit_opt_outcome_string(res.outcome));
    /* The returned point is the best evaluated one, bit for bit. */
    CHECK(res.evaluations == F.calls && res.evaluations == res.run_evaluations, "evaluations %lld vs %lld calls",
          res.evaluations, F.calls);
    CHECK(res.loss == F.log_f[log_argmin()], "loss %.17g is not the lowest evaluated %.17g", res.loss,
          F.log_f[log_argmin()]);
    CHECK(memcmp(x, F.log_x[log_argmin()], (size_t)n * sizeof *x) == 0, "x is not the best evaluated point");
    CHECK(res.initial_loss == F.log_f[0], "initial loss %.17g vs %.17g", res.initial_loss, F.log_f[0]);
    /* Progress: once per evaluation, consecutive counts, best never rising, gradient norms only
     * where a gradient was computed. */
    CHECK(log.count == res.evaluations && log.bad == 0, "progress: %lld reports for %lld evaluations, %d bad",
          log.count, res.evaluations, log.bad);
    if (alg == HESSFIT_OPT_LBFGS)
        CHECK(log.grad_norm_finite == log.count, "L-BFGS: %d of %lld gradient norms finite", log.grad_norm_finite,
              log.count);
    else if (alg == HESSFIT_OPT_SLSQP) /* its line search evaluates the loss alone */
        CHECK(log.grad_norm_finite > 0 && log.grad_norm_finite + log.grad_norm_nan == log.count,
              "SLSQP: %d of %lld gradient norms finite", log.grad_norm_finite, log.count);
    else
        CHECK(log.grad_norm_nan == log.count, "%s: %d of %lld gradient norms NaN", hessfit_opt_algorithm_name(alg),
              log.grad_norm_nan, log.count);
    CHECK(log.last_rate > 0.0, "evaluations per second %g", log.last_rate);
    hessfit_optimize_destroy(opt);
}

/* sum a_i (x_i - c_i)^2 in the box [-1, 1]^3 with c = (3, -2, 0.5): the minimum (1, -1, 0.5) has
 * two coordinates on the box. */
static void test_bounded_quadratic(hessfit_opt_algorithm alg)
{
    const int n = 3;
    double x[3] = {0.0, 0.0, 0.0}, lo[3] = {-1.0, -1.0, -1.0}, hi[3] = {1.0, 1.0, 1.0}, step[3] = {0.2, 0.2, 0.2};
    const double expect[3] = {1.0, -1.0, 0.5};
    const int gradient = alg == HESSFIT_OPT_LBFGS || alg == HESSFIT_OPT_SLSQP;
    double tol = gradient ? 1e-8 : 1e-5;
    hessfit_opt_result res;
    hessfit_optimize *opt = make(alg, n);
    fn_reset(FN_QUADRATIC, n);
    F.a[0] = 1.0, F.a[1] = 2.0, F.a[2] = 3.0;
    F.c[0] = 3.0, F.c[1] = -2.0, F.c[2] = 0.5;
    HF_CALL(hessfit_optimize_set_bounds(opt, lo, hi));
    HF_CALL(hessfit_optimize_set_initial_step(opt, step));
    HF_CALL(hessfit_optimize_set_ftol_rel(opt, 1e-14));
    HF_CALL(hessfit_optimize_set_xtol_rel(opt, 1e-12));
    HF_CALL(hessfit_optimize_run(opt, x, &res));
    printf("  %-13s bounded quadratic: x = (%.17g, %.17g, %.17g), loss %.17g (min 6), %lld evaluations, %s\n",
           hessfit_opt_algorithm_name(alg), x[0], x[1], x[2], res.loss, res.evaluations, hessfit_opt_outcome_string(res.outcome));
    for (int i = 0; i < n; i++)
        CHECK(fabs(x[i] - expect[i]) <= tol, "%s: x[%d] = %.17g, expected %g (tol %g)", hessfit_opt_algorithm_name(alg), i,
              x[i], expect[i], tol);
    CHECK(x[0] <= 1.0 && x[1] >= -1.0, "outside the box");
    CHECK_CLOSE(res.loss, 6.0, gradient ? 1e-12 : 1e-8, 6.0, "bounded quadratic loss");
    /* Every evaluation stayed in the box. */
    for (int k = 0; k < F.log_n; k++)
        for (int i = 0; i < n; i++)
            CHECK(F.log_x[k][i] >= lo[i] && F.log_x[k][i] <= hi[i], "evaluation %d: x[%d] = %g outside the box", k,
                  i, F.log_x[k][i]);
    hessfit_optimize_destroy(opt);
}

/* ---- scaling and the L-BFGS memory ----------------------------------------------------------- */

/* The objective of y = x / s by hand, what hessfit_optimize_set_scale does inside: x = s y, dL/dy = s dL/dx. */
static const double *hand_scale;
static double hand_scaled_objective(int n, const double *y, double *grad, void *data, hessfit_status *status)
{
    double x[MAX_N] = {0.0};
    CHECK(n <= MAX_N, "n = %d", n);
    for (int i = 0; i < n; i++)
        x[i] = y[i] * hand_scale[i];
    const double f = objective(n, x, grad, data, status);
    if (grad != NULL)
        for (int i = 0; i < n; i++)
            grad[i] *= hand_scale[i];
    return f;
}

/* A quadratic whose curvatures span 8 orders of magnitude (a = 1e4, 1, 1e-4) in a box that holds one
 * coordinate of the minimum on a bound. (a) L-BFGS with hessfit_optimize_set_scale(s) makes the same run,
 * bit for bit, as L-BFGS on the objective scaled by hand (s powers of two: x / s * s = x exactly);
 * (b) it converges, and in fewer evaluations than without scaling; (c) a scale whose y = lo / s rounds
 * below the bound: every evaluated x stays inside, the minimum on that bound is returned exactly;
 * (d) a scaled run cut at 15 evaluations and resumed from its checkpoint: the checkpoint holds the
 * caller's x, the resumed run evaluates exactly that point first and gets the checkpoint's loss. */
static void test_scaling(const char *dir)
{
    const int n = 3;
    const double s[3] = {1.0 / 128.0, 1.0, 128.0}, lo[3] = {-1.0, -1.0, -100.0}, hi[3] = {1.0, 1.0, 100.0};
    const double x0[3] = {0.9, 0.5, -60.0}, expect[3] = {0.3, -1.0, 50.0};
    double xa[3], y[3], ylo[3], yhi[3], xc[3];
    hessfit_opt_result ra, rb, rc;
    static double log_x[MAX_LOG][MAX_N], log_f[MAX_LOG];
    int log_n;

    /* (a) through the driver's scaling */
    fn_reset(FN_QUADRATIC, n);
    F.a[0] = 1e4, F.a[1] = 1.0, F.a[2] = 1e-4;
    F.c[0] = 0.3, F.c[1] = -2.0, F.c[2] = 50.0;
    memcpy(xa, x0, sizeof xa);
    hessfit_optimize *opt = make(HESSFIT_OPT_LBFGS, n);
    HF_CALL(hessfit_optimize_set_bounds(opt, lo, hi));
    HF_CALL(hessfit_optimize_set_scale(opt, s));
    HF_CALL(hessfit_optimize_set_ftol_rel(opt, 1e-15));
    HF_CALL(hessfit_optimize_run(opt, xa, &ra));
    hessfit_optimize_destroy(opt);
    log_n = F.log_n;
    memcpy(log_x, F.log_x, sizeof log_x);
    memcpy(log_f, F.log_f, sizeof log_f);
    /* ... and by hand */
    fn_reset(FN_QUADRATIC, n);
    F.a[0] = 1e4, F.a[1] = 1.0, F.a[2] = 1e-4;
    F.c[0] = 0.3, F.c[1] = -2.0, F.c[2] = 50.0;
    hand_scale = s;
    for (int i = 0; i < n; i++) {
        y[i] = x0[i] / s[i];
        ylo[i] = lo[i] / s[i];
        yhi[i] = hi[i] / s[i];
    }
    HF_CALL(hessfit_optimize_create(HESSFIT_OPT_LBFGS, n, &opt));
    HF_CALL(hessfit_optimize_set_objective(opt, hand_scaled_objective, NULL));
    HF_CALL(hessfit_optimize_set_bounds(opt, ylo, yhi));
    HF_CALL(hessfit_optimize_set_ftol_rel(opt, 1e-15));
    HF_CALL(hessfit_optimize_run(opt, y, &rb));
    hessfit_optimize_destroy(opt);
    CHECK(F.log_n == log_n && ra.evaluations == rb.evaluations, "scaled: %d evaluations, by hand %d", log_n, F.log_n);
    for (int k = 0; k < log_n; k++)
        CHECK(memcmp(log_x[k], F.log_x[k], sizeof log_x[k]) == 0 && log_f[k] == F.log_f[k],
              "evaluation %d: scaled and by-hand runs differ: (%.17g %.17g %.17g) %.17g vs (%.17g %.17g %.17g) "
              "%.17g",
              k, log_x[k][0], log_x[k][1], log_x[k][2], log_f[k], F.log_x[k][0], F.log_x[k][1], F.log_x[k][2],
              F.log_f[k]);
    for (int i = 0; i < n; i++)
        CHECK(xa[i] == y[i] * s[i], "the result in x: %.17g vs %.17g", xa[i], y[i] * s[i]);
    /* (b) */
    fn_reset(FN_QUADRATIC, n);
    F.a[0] = 1e4, F.a[1] = 1.0, F.a[2] = 1e-4;
    F.c[0] = 0.3, F.c[1] = -2.0, F.c[2] = 50.0;
    memcpy(xc, x0, sizeof xc);
    opt = make(HESSFIT_OPT_LBFGS, n);
    HF_CALL(hessfit_optimize_set_bounds(opt, lo, hi));
    HF_CALL(hessfit_optimize_set_ftol_rel(opt, 1e-15));
    HF_CALL(hessfit_optimize_run(opt, xc, &rc));
    hessfit_optimize_destroy(opt);
    printf("  L-BFGS, curvatures 1e4, 1, 1e-4: scaled by (1/128, 1, 128) %lld evaluations, x = (%.10g, %.10g, %.10g), "
           "the same run as scaling by hand (%d evaluations bit-identical); unscaled %lld evaluations, "
           "x = (%.10g, %.10g, %.10g)\n",
           ra.evaluations, xa[0], xa[1], xa[2], log_n, rc.evaluations, xc[0], xc[1], xc[2]);
    for (int i = 0; i < n; i++)
        CHECK(fabs(xa[i] - expect[i]) <= 1e-6 * fmax(1.0, fabs(expect[i])), "scaled: x[%d] = %.17g, expected %g", i,
              xa[i], expect[i]);
    CHECK(ra.evaluations < rc.evaluations, "scaling did not help: %lld vs %lld evaluations", ra.evaluations,
          rc.evaluations);

    /* (c) lo / s * s < lo for lo = 0.246, s = 3.872 */
    {
        const double clo = 0.246, chi = 5.0, cs = 3.872;
        double x = 2.0;
        CHECK(clo / cs * cs < clo, "the example no longer rounds below its bound");
        fn_reset(FN_QUADRATIC, 1);
        F.a[0] = 1.0;
        F.c[0] = -1.0;
        opt = make(HESSFIT_OPT_LBFGS, 1);
        HF_CALL(hessfit_optimize_set_bounds(opt, &clo, &chi));
        HF_CALL(hessfit_optimize_set_scale(opt, &cs));
        HF_CALL(hessfit_optimize_run(opt, &x, &ra));
        hessfit_optimize_destroy(opt);
        for (int k = 0; k < F.log_n; k++)
            CHECK(F.log_x[k][0] >= clo && F.log_x[k][0] <= chi, "evaluation %d at %.17g outside [%g, %g]", k,
                  F.log_x[k][0], clo, chi);
        CHECK(x == clo, "the minimum on the bound: %.17g, expected %.17g", x, clo);
        printf("  a bound that y = lo / s rounds past (lo %.17g, s %g, s (lo / s) = %.17g): %d evaluations inside "
               "[lo, hi], x = lo exactly\n",
               clo, cs, clo / cs * cs, F.log_n);
    }

    /* (d) a scaled checkpoint */
    {
        char path[512];
        hessfit_opt_checkpoint cp;
        double xr[3];
        snprintf(path, sizeof path, "%s/scaled.checkpoint", dir);
        fn_reset(FN_ROSENBROCK, n);
        rosenbrock_start(xr, n);
        const double rs[3] = {0.3, 3.0, 0.7};
        opt = make(HESSFIT_OPT_LBFGS, n);
        HF_CALL(hessfit_optimize_set_scale(opt, rs));
        HF_CALL(hessfit_optimize_set_maxeval(opt, 15));
        HF_CALL(hessfit_optimize_set_checkpoint_file(opt, path, 0.0));
        HF_CALL(hessfit_optimize_run(opt, xr, &ra));
        hessfit_optimize_destroy(opt);
        const int best = log_argmin();
        HF_CALL(hessfit_optimize_load_checkpoint(path, &cp));
        CHECK(memcmp(cp.x, F.log_x[best], (size_t)n * sizeof *cp.x) == 0 && cp.best_loss == F.log_f[best] &&
                  memcmp(xr, cp.x, (size_t)n * sizeof *xr) == 0,
              "the checkpoint does not hold the best evaluated x");
        fn_reset(FN_ROSENBROCK, n);
        opt = make(HESSFIT_OPT_LBFGS, n);
        HF_CALL(hessfit_optimize_set_scale(opt, rs));
        HF_CALL(hessfit_optimize_set_maxeval(opt, 30));
        HF_CALL(hessfit_optimize_resume(opt, &cp, xr));
        HF_CALL(hessfit_optimize_run(opt, xr, &rb));
        hessfit_optimize_destroy(opt);
        CHECK(F.log_n >= 1 && memcmp(F.log_x[0], cp.x, (size_t)n * sizeof *cp.x) == 0 && F.log_f[0] == cp.best_loss,
              "the resumed run did not start at exactly the checkpoint's x");
        CHECK(rb.evaluations == 30 && rb.loss <= cp.best_loss, "resumed: %lld evaluations, loss %g", rb.evaluations,
              rb.loss);
        printf("  scaled run cut at 15 evaluations (loss %.6g): the checkpoint holds the best x; resumed at exactly it "
               "(loss %.17g again), loss %.6g after 30\n",
               ra.loss, F.log_f[0], rb.loss);
        hessfit_opt_checkpoint_free(&cp);
        remove(path);
    }
}

/* The L-BFGS memory reaches NLopt: Rosenbrock in 10 dimensions with 1 and 30 correction pairs and
 * NLopt's default converges each time, in different numbers of evaluations. */
static void test_lbfgs_memory(void)
{
    const int n = 10, pairs[3] = {0, 1, 30};
    long long evaluations[3];
    for (int k = 0; k < 3; k++) {
        double x[MAX_N];
        hessfit_opt_result res;
        hessfit_optimize *opt = make(HESSFIT_OPT_LBFGS, n);
        fn_reset(FN_ROSENBROCK, n);
        rosenbrock_start(x, n);
        HF_CALL(hessfit_optimize_set_lbfgs_memory(opt, pairs[k]));
        HF_CALL(hessfit_optimize_set_ftol_rel(opt, 1e-15));
        HF_CALL(hessfit_optimize_set_maxeval(opt, 100000));
        HF_CALL(hessfit_optimize_run(opt, x, &res));
        hessfit_optimize_destroy(opt);
        evaluations[k] = res.evaluations;
        CHECK(max_abs_minus(x, n, 1.0) <= 1e-6, "memory %d: max|x - 1| %g", pairs[k], max_abs_minus(x, n, 1.0));
    }
    printf("  L-BFGS memory on Rosenbrock n = 10: NLopt's default %lld evaluations, 1 pair %lld, 30 pairs %lld\n",
           evaluations[0], evaluations[1], evaluations[2]);
    CHECK(evaluations[1] != evaluations[0], "the memory setting changed nothing");
}

/* ---- grad-simp -------------------------------------------------------------------------------- */

/* The sensitivity measure against its closed form: for a quadratic, central differences are exact,
 * so d1 = 2 a_i d_i h, d2 = 2 a_i h^2 and q2mm's score d2/d1^2 = 1 / (2 a_i d_i^2); the gradient
 * measure is |2 a_i d_i| h. One cycle whose full pass makes one evaluation (the start point). */
static void test_sensitivity_measure(hessfit_opt_sensitivity measure)
{
    const int n = 6;
    double x[6], step[6], score[6];
    int ranking[6];
    const int expect_q2mm[6] = {3, 0, 5, 1, 4, 2}; /* by a_i d_i^2 = gain, descending */
    const int expect_grad[6] = {3, 1, 0, 5, 4, 2}; /* by |2 a_i d_i| h_i, descending */
    hessfit_opt_grad_simp_options o = hessfit_opt_grad_simp_default_options();
    hessfit_opt_cycle cyc;
    hessfit_opt_result res;
    hessfit_optimize *opt = make(HESSFIT_OPT_GRAD_SIMP, n);
    double max_rel = 0.0;
    fn_reset(FN_QUADRATIC, n);
    /* a_i, d_i = x_i - c_i: gains a d^2 = 4, 1.25, 0.01, 9, 0.25, 2.25; |2 a d| h (h = 0.1, 0.2
     * on x_5) = 0.4, 0.5, 0.002, 1.8, 0.1, 0.3. */
    const double a[6] = {1.0, 5.0, 0.01, 9.0, 1.0, 0.25}, d[6] = {2.0, 0.5, 1.0, 1.0, -0.5, -3.0};
    for (int i = 0; i < n; i++) {
        F.a[i] = a[i];
        F.c[i] = 0.25 * i;
        x[i] = F.c[i] + d[i];
        step[i] = i == 5 ? 0.2 : 0.1;
    }
    o.full_maxeval = 1;
    o.max_cycles = 1;
    o.sensitivity = measure;
    HF_CALL(hessfit_optimize_set_grad_simp(opt, &o));
    HF_CALL(hessfit_optimize_set_initial_step(opt, step));
    HF_CALL(hessfit_optimize_run(opt, x, &res));
    HF_CALL(hessfit_optimize_sensitivity_ranking(opt, ranking, score));
    for (int i = 0; i < n; i++) {
        double expect = measure == HESSFIT_OPT_SENSITIVITY_Q2MM ? 1.0 / (2.0 * a[i] * d[i] * d[i])
                                                           : fabs(2.0 * a[i] * d[i]) * step[i];
        max_rel = fmax(max_rel, fabs(score[i] - expect) / expect);
        CHECK(ranking[i] == (measure == HESSFIT_OPT_SENSITIVITY_Q2MM ? expect_q2mm : expect_grad)[i],
              "ranking[%d] = %d", i, ranking[i]);
    }
    HF_CALL(hessfit_optimize_cycle(opt, 0, &cyc));
    printf("  grad-simp %s measure: ranking %d %d %d %d %d %d, max relative error of the scores %.2g; simplex on "
           "%d %d %d; %lld evaluations (1 + %d + simplex)\n",
           measure == HESSFIT_OPT_SENSITIVITY_Q2MM ? "q2mm" : "gradient", ranking[0], ranking[1], ranking[2], ranking[3],
           ranking[4], ranking[5], max_rel, cyc.selected[0], cyc.selected[1], cyc.selected[2], res.evaluations,
           measure == HESSFIT_OPT_SENSITIVITY_Q2MM ? 2 * n : 0);
    CHECK(max_rel <= 1e-9, "sensitivity scores off by %g", max_rel);
    CHECK(cyc.n_selected == 3 && cyc.selected[0] == ranking[0] && cyc.selected[1] == ranking[1] &&
              cyc.selected[2] == ranking[2],
          "the simplex pass must take the three first-ranked parameters");
    CHECK(res.outcome == HESSFIT_OPT_MAX_CYCLES && res.cycles == 1, "outcome %s, %d cycles",
          hessfit_opt_outcome_string(res.outcome), res.cycles);
    /* The simplex pass moved only the selected parameters (the held ones keep their start values). */
    for (int i = 0; i < n; i++) {
        int selected = i == cyc.selected[0] || i == cyc.selected[1] || i == cyc.selected[2];
        if (!selected)
            CHECK(x[i] == F.c[i] + d[i], "held parameter %d moved to %.17g", i, x[i]);
    }
    hessfit_optimize_destroy(opt);
}

/* Eight parameters, three of which matter (S = {1, 4, 6}, weights 3, 2, 1; the others 0.001): on
 * S a quadratic bowl under a fine ripple (FN_FEW), whose local minima trap L-BFGS within a few
 * hundredths of its start, while central differences with q2mm's step scale (0.1) see the bowl and
 * rank S first, and the simplex pass, stepping over the ripple, walks down it. */
static const int few_S[3] = {1, 4, 6};

static void few_setup(double *x, double *lo, double *hi, double *step)
{
    fn_reset(FN_FEW, 8);
    for (int i = 0; i < 8; i++) {
        F.c[i] = 0.37 * i - 1.1;
        F.a[i] = 0.001;
        x[i] = 0.0;
        lo[i] = -5.0;
        hi[i] = 5.0;
        step[i] = 0.1;
    }
    F.matters[1] = F.matters[4] = F.matters[6] = 1;
    F.a[1] = 3.0, F.a[4] = 2.0, F.a[6] = 1.0;
}

static double few_error_on_S(const double *x)
{
    double m = 0.0;
    for (int k = 0; k < 3; k++)
        m = fmax(m, fabs(x[few_S[k]] - F.c[few_S[k]]));
    return m;
}

static hessfit_optimize *few_optimizer(double *x, const hessfit_opt_grad_simp_options *o)
{
    double lo[8], hi[8], step[8];
    hessfit_optimize *opt = make(HESSFIT_OPT_GRAD_SIMP, 8);
    few_setup(x, lo, hi, step);
    HF_CALL(hessfit_optimize_set_bounds(opt, lo, hi));
    HF_CALL(hessfit_optimize_set_initial_step(opt, step));
    if (o != NULL)
        HF_CALL(hessfit_optimize_set_grad_simp(opt, o));
    return opt;
}

#define FEW_LOSS_TOL 0.015 /* measured 0.0104 */
#define FEW_X_TOL 0.06 /* measured 0.0514 */
#define FEW_TRAPPED 0.5 /* measured 0.667 */
static void test_grad_simp_cycle(hessfit_opt_result *out, double *x_out)
{
    double x[8];
    hessfit_opt_result res;
    progress_log log;
    hessfit_optimize *opt = few_optimizer(x, NULL);
    int first_cycle_is_S = 1;
    {
        /* L-BFGS alone on the same function. */
        double y[8], lo[8], hi[8], step[8];
        hessfit_opt_result r;
        hessfit_optimize *plain = make(HESSFIT_OPT_LBFGS, 8);
        few_setup(y, lo, hi, step);
        HF_CALL(hessfit_optimize_set_bounds(plain, lo, hi));
        HF_CALL(hessfit_optimize_run(plain, y, &r));
        printf("  L-BFGS alone on the rippled bowl (3 of 8 parameters matter): %s after %lld evaluations, loss "
               "%.6f (min 1), max |x - c| on S %.3g\n",
               hessfit_opt_outcome_string(r.outcome), r.evaluations, r.loss, few_error_on_S(y));
        CHECK(few_error_on_S(y) > FEW_TRAPPED, "L-BFGS alone reached the bottom (%g): the test function is too easy",
              few_error_on_S(y));
        hessfit_optimize_destroy(plain);
        few_setup(x, lo, hi, step);
    }
    memset(&log, 0, sizeof log);
    HF_CALL(hessfit_optimize_set_progress(opt, on_progress, &log));
    HF_CALL(hessfit_optimize_run(opt, x, &res));
    printf("  grad-simp (q2mm defaults: 3 parameters, 1 %%, 10 cycles) on the rippled bowl: %s after %d "
           "cycles, %lld evaluations, loss %.10f (min 1), max |x - c| on S %.3g\n",
           hessfit_opt_outcome_string(res.outcome), res.cycles, res.evaluations, res.loss, few_error_on_S(x));
    for (int k = 0; k < hessfit_optimize_n_cycles(opt); k++) {
        hessfit_opt_cycle c;
        HF_CALL(hessfit_optimize_cycle(opt, k, &c));
        printf("    cycle %d: loss %.8f -> %.8f (full pass, %s) -> %.8f (simplex on %d %d %d), improvement %.4f %%, "
               "%lld evaluations\n",
               c.cycle, c.loss_before, c.loss_after_full, hessfit_opt_nlopt_result_string(c.full_nlopt_result),
               c.loss_after_simplex, c.selected[0], c.selected[1], c.selected[2], 100.0 * c.improvement,
               c.evaluations);
        CHECK(c.loss_after_full <= c.loss_before && c.loss_after_simplex <= c.loss_after_full, "cycle %d rose",
              c.cycle);
        CHECK_CLOSE(c.improvement, (c.loss_before - c.loss_after_simplex) / c.loss_before, 1e-15, 1.0, "improvement");
        if (k + 1 < hessfit_optimize_n_cycles(opt))
            CHECK(c.improvement >= 0.01, "cycle %d improved %g < 1 %% but the run went on", c.cycle, c.improvement);
        else
            CHECK(c.improvement < 0.01, "the last cycle improved %g >= 1 %%", c.improvement);
        if (k == 0)
            for (int j = 0; j < 3; j++)
                if (c.selected[j] != few_S[0] && c.selected[j] != few_S[1] && c.selected[j] != few_S[2])
                    first_cycle_is_S = 0;
    }
    CHECK(res.outcome == HESSFIT_OPT_CYCLE_CONVERGED, "outcome %s", hessfit_opt_outcome_string(res.outcome));
    CHECK(res.cycles >= 2 && res.cycles < 10, "%d cycles", res.cycles);
    CHECK(first_cycle_is_S, "the first cycle's simplex must run on the three parameters that matter");
    CHECK(res.loss - 1.0 <= FEW_LOSS_TOL, "loss %.10f", res.loss);
    CHECK(few_error_on_S(x) <= FEW_X_TOL, "max |x - c| on S = %g", few_error_on_S(x));
    CHECK(log.cycles == res.cycles && log.bad == 0 && log.count == res.evaluations,
          "progress: %lld cycle events for %d cycles, %lld evaluation events for %lld, %d bad", log.cycles,
          res.cycles, log.count, res.evaluations, log.bad);
    CHECK(res.loss == F.log_f[log_argmin()] && memcmp(x, F.log_x[log_argmin()], sizeof x) == 0,
          "grad-simp must return the best evaluated point");
    *out = res;
    memcpy(x_out, x, sizeof x);
    hessfit_optimize_destroy(opt);
}

/* ---- failures ------------------------------------------------------------------------------------ */

static hessfit_optimize *failing_setup(hessfit_opt_algorithm alg, double *x)
{
    double step[2] = {0.1, 0.1};
    hessfit_optimize *opt = make(alg, 2);
    fn_reset(FN_ROSENBROCK, 2);
    rosenbrock_start(x, 2);
    HF_CALL(hessfit_optimize_set_initial_step(opt, step));
    HF_CALL(hessfit_optimize_set_ftol_rel(opt, 1e-15));
    return opt;
}

static void expect_failure_at(hessfit_opt_algorithm alg, long long k, const char *dir)
{
    double x[2], x0[2], best[2], best_loss;
    char path[512];
    hessfit_opt_checkpoint cp;
    hessfit_status st;
    hessfit_optimize *opt = failing_setup(alg, x);
    char expect[128];
    memcpy(x0, x, sizeof x);
    F.fail_at = k;
    snprintf(path, sizeof path, "%s/failed.checkpoint", dir);
    HF_CALL(hessfit_optimize_set_checkpoint_file(opt, path, 1e9));
    st = hessfit_optimize_run(opt, x, NULL);
    snprintf(expect, sizeof expect, alg == HESSFIT_OPT_GRAD_SIMP ? "objective failed at evaluation %lld (grad-simp cycle 1, "
             "sensitivity analysis): " : "objective failed at evaluation %lld: ", k);
    printf("  %-13s failing objective: %s\n", hessfit_opt_algorithm_name(alg), hessfit_last_error());
    CHECK(st == HESSFIT_ERROR_OPENMM, "status %s", hessfit_status_string(st));
    CHECK(strstr(hessfit_last_error(), expect) != NULL && strstr(hessfit_last_error(), "molecule 3: the Hessian kernel failed"),
          "message: %s", hessfit_last_error());
    CHECK(F.calls == k, "the objective was called %lld times after failing at %lld", F.calls, k);
    CHECK(x[0] == x0[0] && x[1] == x0[1], "x changed by a failed run");
    HF_CALL(hessfit_optimize_best(opt, best, &best_loss));
    CHECK(best_loss == F.log_f[log_argmin()] && memcmp(best, F.log_x[log_argmin()], sizeof best) == 0,
          "best so far after the failure");
    /* The final checkpoint holds that best point. */
    HF_CALL(hessfit_optimize_load_checkpoint(path, &cp));
    CHECK(cp.best_loss == best_loss && memcmp(cp.x, best, sizeof best) == 0 && cp.evaluations == k,
          "checkpoint after the failure: loss %.17g, %lld evaluations", cp.best_loss, cp.evaluations);
    hessfit_opt_checkpoint_free(&cp);
    remove(path);
    hessfit_optimize_destroy(opt);
}

static void test_failures(const char *dir)
{
    double x[2];
    hessfit_status st;
    hessfit_optimize *opt;
    progress_log log;
    hessfit_opt_grad_simp_options o = hessfit_opt_grad_simp_default_options();
    long long sens_first;

    expect_failure_at(HESSFIT_OPT_LBFGS, 7, dir);
    expect_failure_at(HESSFIT_OPT_NELDER_MEAD, 7, dir);
    expect_failure_at(HESSFIT_OPT_SUBPLEX, 12, dir);
    /* grad-simp, failing in its sensitivity analysis: find where that starts, then fail there + 2. */
    opt = failing_setup(HESSFIT_OPT_GRAD_SIMP, x);
    memset(&log, 0, sizeof log);
    o.max_cycles = 1;
    HF_CALL(hessfit_optimize_set_grad_simp(opt, &o));
    HF_CALL(hessfit_optimize_set_progress(opt, on_progress, &log));
    HF_CALL(hessfit_optimize_run(opt, x, NULL));
    sens_first = log.phase_first[HESSFIT_OPT_PHASE_SENSITIVITY];
    CHECK(sens_first > 1, "no sensitivity phase seen");
    hessfit_optimize_destroy(opt);
    expect_failure_at(HESSFIT_OPT_GRAD_SIMP, sens_first + 2, dir);

    /* NaN loss and NaN gradient without a reported error. */
    opt = failing_setup(HESSFIT_OPT_LBFGS, x);
    F.nan_at = 5;
    st = hessfit_optimize_run(opt, x, NULL);
    printf("  NaN loss: %s\n", hessfit_last_error());
    CHECK(st == HESSFIT_ERROR_NONFINITE && strstr(hessfit_last_error(), "returned nan at evaluation 5"), "%s: %s",
          hessfit_status_string(st), hessfit_last_error());
    hessfit_optimize_destroy(opt);
    opt = failing_setup(HESSFIT_OPT_LBFGS, x);
    F.nan_grad_at = 4;
    st = hessfit_optimize_run(opt, x, NULL);
    printf("  NaN gradient: %s\n", hessfit_last_error());
    CHECK(st == HESSFIT_ERROR_NONFINITE && strstr(hessfit_last_error(), "gradient with entry 1 = nan at evaluation 4"),
          "%s: %s", hessfit_status_string(st), hessfit_last_error());
    CHECK(F.calls == 4, "%lld calls after the NaN gradient", F.calls);
    hessfit_optimize_destroy(opt);
}

/* ---- stopping -------------------------------------------------------------------------------------- */

static void check_stopped_best(hessfit_optimize *opt, const double *x, const hessfit_opt_result *res, long long evaluations,
                               const char *what)
{
    int k = log_argmin();
    double best_loss;
    CHECK(res->outcome == HESSFIT_OPT_STOPPED, "%s: outcome %s", what, hessfit_opt_outcome_string(res->outcome));
    CHECK(res->evaluations == evaluations && F.calls == evaluations, "%s: %lld evaluations (%lld calls), expected %lld",
          what, res->evaluations, F.calls, evaluations);
    CHECK(res->loss == F.log_f[k] && memcmp(x, F.log_x[k], (size_t)F.n * sizeof *x) == 0,
          "%s: the result is not the best evaluated point", what);
    HF_CALL(hessfit_optimize_best(opt, NULL, &best_loss));
    CHECK(best_loss == res->loss, "%s: hessfit_optimize_best", what);
}

static void test_stopping(void)
{
    double x[MAX_N], step[MAX_N];
    hessfit_opt_result res;
    hessfit_optimize *opt;
    progress_log log;
    struct sigaction now;
    const hessfit_opt_algorithm algs[3] = {HESSFIT_OPT_LBFGS, HESSFIT_OPT_NELDER_MEAD, HESSFIT_OPT_GRAD_SIMP};

    /* A real SIGINT at evaluation 30, through hessfit_optimize_catch_sigint. */
    for (int a = 0; a < 3; a++) {
        opt = make(algs[a], 10);
        fn_reset(FN_ROSENBROCK, 10);
        rosenbrock_start(x, 10);
        for (int i = 0; i < 10; i++)
            step[i] = 0.1;
        HF_CALL(hessfit_optimize_set_initial_step(opt, step));
        HF_CALL(hessfit_optimize_set_ftol_rel(opt, 1e-15));
        F.sigint_at = 30;
        hessfit_optimize_clear_stop();
        HF_CALL(hessfit_optimize_catch_sigint(1));
        HF_CALL(hessfit_optimize_run(opt, x, &res));
        CHECK(hessfit_optimize_stop_requested(), "SIGINT did not set the stop flag");
        sigaction(SIGINT, NULL, &now);
        CHECK(now.sa_handler == SIG_DFL, "a second SIGINT must end the program (SA_RESETHAND)");
        HF_CALL(hessfit_optimize_catch_sigint(0));
        printf("  %-13s SIGINT at evaluation 30: %s, best loss %.6g of 30 evaluations\n", hessfit_opt_algorithm_name(algs[a]),
               hessfit_opt_outcome_string(res.outcome), res.loss);
        check_stopped_best(opt, x, &res, 30, hessfit_opt_algorithm_name(algs[a]));
        /* With the flag still set, the next run evaluates its start point only. */
        fn_reset(FN_ROSENBROCK, 10);
        rosenbrock_start(x, 10);
        HF_CALL(hessfit_optimize_run(opt, x, &res));
        check_stopped_best(opt, x, &res, 1, "flag already set");
        hessfit_optimize_clear_stop();
        hessfit_optimize_destroy(opt);
    }

    /* The progress callback stops grad-simp in its sensitivity analysis (3rd evaluation there). */
    opt = make(HESSFIT_OPT_GRAD_SIMP, 10);
    fn_reset(FN_ROSENBROCK, 10);
    rosenbrock_start(x, 10);
    HF_CALL(hessfit_optimize_set_initial_step(opt, step));
    memset(&log, 0, sizeof log);
    log.stop_phase = HESSFIT_OPT_PHASE_SENSITIVITY;
    log.stop_at_phase_count = 3;
    HF_CALL(hessfit_optimize_set_progress(opt, on_progress, &log));
    HF_CALL(hessfit_optimize_run(opt, x, &res));
    printf("  grad-simp stopped by the progress callback in the sensitivity analysis: %s at evaluation %lld, 0 "
           "cycles done\n",
           hessfit_opt_outcome_string(res.outcome), res.evaluations);
    check_stopped_best(opt, x, &res, log.phase_first[HESSFIT_OPT_PHASE_SENSITIVITY] + 2, "progress stop");
    CHECK(res.cycles == 0 && hessfit_optimize_n_cycles(opt) == 0, "a cut cycle is not a done cycle");
    hessfit_optimize_destroy(opt);
}

static void test_limits(void)
{
    double x[MAX_N], step[MAX_N];
    hessfit_opt_result res;
    const hessfit_opt_algorithm algs[4] = {HESSFIT_OPT_LBFGS, HESSFIT_OPT_NELDER_MEAD, HESSFIT_OPT_SUBPLEX, HESSFIT_OPT_GRAD_SIMP};
    for (int i = 0; i < MAX_N; i++)
        step[i] = 0.1;
    for (int a = 0; a < 4; a++) {
        hessfit_optimize *opt = make(algs[a], 10);
        /* maxeval: exactly that many evaluations, never one more. */
        fn_reset(FN_ROSENBROCK, 10);
        rosenbrock_start(x, 10);
        HF_CALL(hessfit_optimize_set_initial_step(opt, step));
        HF_CALL(hessfit_optimize_set_ftol_rel(opt, 0.0));
        HF_CALL(hessfit_optimize_set_maxeval(opt, 57));
        HF_CALL(hessfit_optimize_run(opt, x, &res));
        CHECK(res.outcome == HESSFIT_OPT_MAXEVAL_REACHED && res.evaluations == 57 && F.calls == 57,
              "%s maxeval 57: %s after %lld evaluations", hessfit_opt_algorithm_name(algs[a]),
              hessfit_opt_outcome_string(res.outcome), F.calls);
        CHECK(res.loss == F.log_f[log_argmin()], "maxeval: best");
        /* maxtime: 2 ms per evaluation, 0.1 s. */
        fn_reset(FN_ROSENBROCK, 10);
        rosenbrock_start(x, 10);
        F.sleep_s = 0.002;
        HF_CALL(hessfit_optimize_set_maxeval(opt, 0));
        HF_CALL(hessfit_optimize_set_maxtime(opt, 0.1));
        HF_CALL(hessfit_optimize_run(opt, x, &res));
        printf("  %-13s maxeval 57: 57 evaluations; maxtime 0.1 s at 2 ms per evaluation: %s after %.4f s, %lld "
               "evaluations\n",
               hessfit_opt_algorithm_name(algs[a]), hessfit_opt_outcome_string(res.outcome), res.seconds, res.evaluations);
        CHECK(res.outcome == HESSFIT_OPT_MAXTIME_REACHED, "%s: outcome %s", hessfit_opt_algorithm_name(algs[a]),
              hessfit_opt_outcome_string(res.outcome));
        CHECK(res.seconds >= 0.1 - 1e-3 && res.seconds < 0.1 + 0.06, "%s: %.4f s for maxtime 0.1",
              hessfit_opt_algorithm_name(algs[a]), res.seconds);
        CHECK(res.evaluations >= 10 && res.evaluations <= 51, "%s: %lld evaluations in 0.1 s at >= 2 ms each",
              hessfit_opt_algorithm_name(algs[a]), res.evaluations);
        hessfit_optimize_destroy(opt);
    }
}

/* ---- checkpoints ------------------------------------------------------------------------------------ */

static void write_text(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL, "cannot write %s", path);
    CHECK(fwrite(text, 1, len, f) == len, "short write %s", path);
    fclose(f);
}

static char *read_text(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;
    CHECK(f != NULL, "cannot read %s", path);
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc((size_t)n + 1);
    CHECK(buf != NULL && fread(buf, 1, (size_t)n, f) == (size_t)n, "read %s", path);
    buf[n] = '\0';
    fclose(f);
    *len = (size_t)n;
    return buf;
}

/* No temporary file of the atomic writer is left in dir. */
static void check_no_temporaries(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    CHECK(d != NULL, "opendir %s", dir);
    while ((e = readdir(d)) != NULL)
        CHECK(strstr(e->d_name, ".tmp.") == NULL, "temporary file %s left in %s", e->d_name, dir);
    closedir(d);
}

static void test_checkpoint_round_trip(const char *dir)
{
    double xs[9] = {0.1, 1.0 / 3.0, -0.0, 4.9406564584124654e-324, 1.7976931348623157e308, -2.2250738585072014e-308,
                    3.141592653589793, -1e-300, 123456789.123456789};
    hessfit_opt_checkpoint cp = {HESSFIT_OPT_GRAD_SIMP, 9, xs, 0.22144500000000001, 123456789012LL, 7, 0.0}, back;
    char path[512], gzpath[512];
    gzFile gz;
    size_t len;
    char *text;
    snprintf(path, sizeof path, "%s/round.checkpoint", dir);
    HF_CALL(hessfit_optimize_save_checkpoint(path, &cp));
    check_no_temporaries(dir);
    HF_CALL(hessfit_optimize_load_checkpoint(path, &back));
    CHECK(back.algorithm == cp.algorithm && back.n == 9 && back.evaluations == cp.evaluations && back.cycle == 7,
          "round trip: header");
    CHECK(memcmp(back.x, xs, sizeof xs) == 0, "round trip: x not bit-identical");
    CHECK(memcmp(&back.best_loss, &cp.best_loss, sizeof(double)) == 0, "round trip: best loss");
    CHECK(signbit(back.x[2]), "-0.0 lost its sign");
    hessfit_opt_checkpoint_free(&back);
    /* The same file gzip-compressed reads the same. */
    text = read_text(path, &len);
    snprintf(gzpath, sizeof gzpath, "%s/round.checkpoint.gz", dir);
    gz = gzopen(gzpath, "wb");
    CHECK(gz != NULL && gzwrite(gz, text, (unsigned)len) == (int)len && gzclose(gz) == Z_OK, "gzip %s", gzpath);
    HF_CALL(hessfit_optimize_load_checkpoint(gzpath, &back));
    CHECK(memcmp(back.x, xs, sizeof xs) == 0, "gzip round trip: x");
    hessfit_opt_checkpoint_free(&back);
    printf("  checkpoint round trip (9 values incl. -0, denormal, DBL_MAX; plain and gzip): bit-identical, %zu bytes\n",
           len);
    remove(gzpath);
    remove(path);
    free(text);
    /* Nothing non-finite is written. */
    xs[4] = NAN;
    CHECK(hessfit_optimize_save_checkpoint(path, &cp) == HESSFIT_ERROR_NONFINITE, "a NaN x was written");
    CHECK(access(path, F_OK) != 0, "a refused checkpoint left a file");
}

/* One mutation of a valid file: the load must fail with status and a message naming path:line. */
static void expect_bad(const char *dir, const char *name, const char *text, hessfit_status status, int line,
                       const char *fragment)
{
    char path[512], where[600];
    hessfit_opt_checkpoint cp;
    hessfit_status st;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    write_text(path, text, strlen(text));
    st = hessfit_optimize_load_checkpoint(path, &cp);
    snprintf(where, sizeof where, "%s:%d: ", path, line);
    CHECK(st == status, "%s: status %s, expected %s (%s)", name, hessfit_status_string(st), hessfit_status_string(status),
          hessfit_last_error());
    CHECK(strstr(hessfit_last_error(), where) != NULL && strstr(hessfit_last_error(), fragment) != NULL,
          "%s: message '%s' lacks '%s' or '%s'", name, hessfit_last_error(), where, fragment);
    CHECK(cp.x == NULL && cp.n == 0, "%s: output not zeroed", name);
    printf("    %-16s %s\n", name, hessfit_last_error() + strlen(dir) + 1);
    remove(path);
}

static void test_bad_checkpoints(const char *dir)
{
    double xs[3] = {1.5, -2.25, 3.0};
    hessfit_opt_checkpoint cp = {HESSFIT_OPT_LBFGS, 3, xs, 0.5, 40, 0, 0.0}, back;
    char path[512], cut_path[512];
    char *text, *mut;
    size_t len;
    int n_cut = 0;
    snprintf(path, sizeof path, "%s/good.checkpoint", dir);
    HF_CALL(hessfit_optimize_save_checkpoint(path, &cp));
    text = read_text(path, &len);
    /* Lines: 1-2 comment, 3 header, 4 algorithm, 5 n, 6 evaluations, 7 cycle, 8 best_loss, 9-11 x, 12 end. */
    CHECK(strstr(text, "\nx 0 1.5\nx 1 -2.25\nx 2 3\nend\n") != NULL, "unexpected layout:\n%s", text);
    /* Every truncation (prefix) fails with path:line, except the one that drops only the last "\n". */
    snprintf(cut_path, sizeof cut_path, "%s/cut.checkpoint", dir);
    for (size_t cut = 0; cut < len; cut++) {
        hessfit_status st;
        write_text(cut_path, text, cut);
        st = hessfit_optimize_load_checkpoint(cut_path, &back);
        if (cut == len - 1) {
            CHECK(st == HESSFIT_SUCCESS && memcmp(back.x, xs, sizeof xs) == 0, "without its last newline: %s",
                  hessfit_last_error());
            hessfit_opt_checkpoint_free(&back);
            continue;
        }
        CHECK(st != HESSFIT_SUCCESS, "truncated to %zu of %zu bytes: loaded", cut, len);
        CHECK(strncmp(hessfit_last_error(), cut_path, strlen(cut_path)) == 0 && hessfit_last_error()[strlen(cut_path)] == ':',
              "truncated to %zu bytes: message '%s' does not name the file:line", cut, hessfit_last_error());
        CHECK(back.x == NULL, "truncated: output not zeroed");
        n_cut++;
    }
    printf("  checkpoint: all %d truncations of the %zu-byte file are errors naming file:line, e.g.\n", n_cut, len);
    write_text(cut_path, text, len - 10);
    CHECK(hessfit_optimize_load_checkpoint(cut_path, &back) != HESSFIT_SUCCESS, "cut");
    printf("    %s\n", hessfit_last_error() + strlen(dir) + 1);
    remove(cut_path);

#define MUTATE(from, to)                                                                   \
    do {                                                                                   \
        char *at_ = strstr(text, from);                                                    \
        CHECK(at_ != NULL, "mutation source '%s' not found", from);                        \
        mut = malloc(len + strlen(to) + 1);                                                \
        memcpy(mut, text, (size_t)(at_ - text));                                           \
        strcpy(mut + (at_ - text), to);                                                    \
        strcat(mut, at_ + strlen(from));                                                   \
    } while (0)
#define BAD(name, from, to, status, line, fragment)                                        \
    do {                                                                                   \
        MUTATE(from, to);                                                                  \
        expect_bad(dir, name, mut, status, line, fragment);                                \
        free(mut);                                                                         \
    } while (0)
    printf("  checkpoint mutations:\n");
    BAD("nan_x", "x 1 -2.25", "x 1 nan", HESSFIT_ERROR_NONFINITE, 10, "x[1]");
    BAD("inf_loss", "best_loss 0.5", "best_loss -inf", HESSFIT_ERROR_NONFINITE, 8, "best loss");
    BAD("garbage_x", "x 2 3\n", "x 2 3.0e\n", HESSFIT_ERROR_PARSE, 11, "is not a number");
    BAD("x_order", "x 1 -2.25", "x 2 -2.25", HESSFIT_ERROR_FORMAT, 10, "x index 2 where 1 was expected");
    BAD("x_missing", "x 2 3\n", "", HESSFIT_ERROR_COUNT, 11, "after 2 of n = 3");
    BAD("x_extra", "end\n", "x 3 4\nend\n", HESSFIT_ERROR_COUNT, 12, "more than n = 3");
    BAD("n_zero", "\nn 3\n", "\nn 0\n", HESSFIT_ERROR_PARSE, 5, "parameter count");
    BAD("n_huge", "\nn 3\n", "\nn 99999999999\n", HESSFIT_ERROR_PARSE, 5, "parameter count");
    BAD("n_twice", "\nn 3\n", "\nn 3\nn 3\n", HESSFIT_ERROR_FORMAT, 6, "second time");
    BAD("no_cycle", "cycle 0\n", "", HESSFIT_ERROR_FORMAT, 11, "without the 'cycle' line");
    BAD("bad_algorithm", "LD_LBFGS", "LD_MMA", HESSFIT_ERROR_PARSE, 4, "unknown algorithm");
    BAD("unknown_key", "cycle 0\n", "cycle 0\nstep 3\n", HESSFIT_ERROR_PARSE, 8, "unknown line");
    BAD("after_end", "end\n", "end\nx 0 1\n", HESSFIT_ERROR_FORMAT, 13, "after 'end'");
    BAD("fields", "evaluations 40", "evaluations 40 41", HESSFIT_ERROR_PARSE, 6, "takes 1 field");
    BAD("negative_count", "evaluations 40", "evaluations -1", HESSFIT_ERROR_PARSE, 6, "evaluation count");
    BAD("header", "hessfit-checkpoint 1", "hessfit-checkpoint", HESSFIT_ERROR_FORMAT, 3, "not a hessfit checkpoint");
    BAD("version", "hessfit-checkpoint 1", "hessfit-checkpoint 2", HESSFIT_ERROR_UNSUPPORTED, 3, "version 2");
    BAD("x_before_n", "\nn 3\n", "\nx 0 1\nn 3\n", HESSFIT_ERROR_FORMAT, 5, "before the parameter count");
#undef BAD
#undef MUTATE
    remove(path);
    free(text);
}

/* L-BFGS stopped by maxeval with a checkpoint file, resumed from that file: the same minimum. */
static void test_resume_lbfgs(const char *dir)
{
    double xa[MAX_N], xb[MAX_N];
    const int n = 10;
    hessfit_opt_result ra, rb, rc;
    hessfit_opt_checkpoint cp;
    char path[512];
    hessfit_optimize *opt = make(HESSFIT_OPT_LBFGS, n);
    snprintf(path, sizeof path, "%s/lbfgs.checkpoint", dir);
    HF_CALL(hessfit_optimize_set_ftol_rel(opt, 1e-15));
    fn_reset(FN_ROSENBROCK, n);
    rosenbrock_start(xa, n);
    HF_CALL(hessfit_optimize_run(opt, xa, &ra));
    /* The same, cut at 40 evaluations (checkpoint after every improvement). */
    fn_reset(FN_ROSENBROCK, n);
    rosenbrock_start(xb, n);
    HF_CALL(hessfit_optimize_set_maxeval(opt, 40));
    HF_CALL(hessfit_optimize_set_checkpoint_file(opt, path, 0.0));
    HF_CALL(hessfit_optimize_run(opt, xb, &rb));
    CHECK(rb.outcome == HESSFIT_OPT_MAXEVAL_REACHED && rb.evaluations == 40, "cut run: %s, %lld",
          hessfit_opt_outcome_string(rb.outcome), rb.evaluations);
    check_no_temporaries(dir);
    hessfit_optimize_destroy(opt);
    /* A new optimiser continues from the file. */
    opt = make(HESSFIT_OPT_LBFGS, n);
    HF_CALL(hessfit_optimize_set_ftol_rel(opt, 1e-15));
    HF_CALL(hessfit_optimize_set_maxeval(opt, 100000));
    HF_CALL(hessfit_optimize_load_checkpoint(path, &cp));
    CHECK(cp.evaluations == 40 && cp.best_loss == rb.loss && memcmp(cp.x, xb, (size_t)n * sizeof *xb) == 0,
          "checkpoint of the cut run: %lld evaluations, loss %.17g vs %.17g", cp.evaluations, cp.best_loss, rb.loss);
    HF_CALL(hessfit_optimize_resume(opt, &cp, xb));
    hessfit_opt_checkpoint_free(&cp);
    F.calls = 0;
    HF_CALL(hessfit_optimize_run(opt, xb, &rc));
    printf("  L-BFGS Rosenbrock n = 10: uninterrupted %lld evaluations, loss %.3g; cut at 40 (loss %.4g) and "
           "resumed: %lld evaluations in all, loss %.3g, max|x_resumed - x_uninterrupted| %.3g\n",
           ra.evaluations, ra.loss, rb.loss, rc.evaluations, rc.loss, test_max_abs_diff(xa, xb, (size_t)n));
    CHECK(rc.evaluations == 40 + rc.run_evaluations && rc.run_evaluations == F.calls, "resumed counts");
    CHECK(rc.initial_loss == rb.loss, "the resumed run starts at the checkpoint's loss");
    CHECK(test_max_abs_diff(xa, xb, (size_t)n) <= 1e-6 && max_abs_minus(xb, n, 1.0) <= 1e-6,
          "resumed run ends at %g from the uninterrupted one", test_max_abs_diff(xa, xb, (size_t)n));
    /* Resuming with the evaluation budget already spent: no evaluation, the checkpoint's point. */
    HF_CALL(hessfit_optimize_get_checkpoint(opt, &cp));
    CHECK(cp.evaluations == rc.evaluations && cp.best_loss == rc.loss, "hessfit_optimize_get_checkpoint");
    HF_CALL(hessfit_optimize_set_maxeval(opt, cp.evaluations));
    HF_CALL(hessfit_optimize_resume(opt, &cp, xa));
    F.calls = 0;
    HF_CALL(hessfit_optimize_run(opt, xa, &rb));
    CHECK(F.calls == 0 && rb.outcome == HESSFIT_OPT_MAXEVAL_REACHED && rb.loss == cp.best_loss &&
              memcmp(xa, cp.x, (size_t)n * sizeof *xa) == 0,
          "spent budget: %lld calls, %s", F.calls, hessfit_opt_outcome_string(rb.outcome));
    hessfit_opt_checkpoint_free(&cp);
    remove(path);
    hessfit_optimize_destroy(opt);
}

/* grad-simp cut after its first cycle and resumed from the file: bit-identical to the uninterrupted
 * run (same x, loss, evaluations, cycles). */
static void test_resume_grad_simp(const char *dir, const hessfit_opt_result *full, const double *x_full)
{
    double x[8], y[8];
    hessfit_opt_result r1, r2;
    hessfit_opt_checkpoint cp;
    hessfit_opt_grad_simp_options o = hessfit_opt_grad_simp_default_options();
    char path[512];
    hessfit_optimize *opt;
    snprintf(path, sizeof path, "%s/gradsimp.checkpoint", dir);
    o.max_cycles = 1;
    opt = few_optimizer(x, &o);
    HF_CALL(hessfit_optimize_set_checkpoint_file(opt, path, 1e9)); /* only at cycle ends and the run's end */
    HF_CALL(hessfit_optimize_run(opt, x, &r1));
    CHECK(r1.outcome == HESSFIT_OPT_MAX_CYCLES && r1.cycles == 1, "first part: %s, %d cycles",
          hessfit_opt_outcome_string(r1.outcome), r1.cycles);
    hessfit_optimize_destroy(opt);
    opt = few_optimizer(y, NULL);
    HF_CALL(hessfit_optimize_load_checkpoint(path, &cp));
    CHECK(cp.cycle == 1 && cp.algorithm == HESSFIT_OPT_GRAD_SIMP && cp.evaluations == r1.evaluations, "checkpoint");
    HF_CALL(hessfit_optimize_resume(opt, &cp, y));
    hessfit_opt_checkpoint_free(&cp);
    HF_CALL(hessfit_optimize_run(opt, y, &r2));
    printf("  grad-simp cut after cycle 1 (%lld evaluations) and resumed: %d cycles, %lld evaluations, loss %.17g; "
           "uninterrupted: %d, %lld, %.17g; x bit-identical: %s\n",
           r1.evaluations, r2.cycles, r2.evaluations, r2.loss, full->cycles, full->evaluations, full->loss,
           memcmp(y, x_full, sizeof y) == 0 ? "yes" : "no");
    CHECK(memcmp(y, x_full, sizeof y) == 0 && r2.loss == full->loss, "resumed grad-simp differs");
    CHECK(r2.evaluations == full->evaluations && r2.cycles == full->cycles && r2.outcome == full->outcome,
          "resumed grad-simp: %lld evaluations, %d cycles vs %lld, %d", r2.evaluations, r2.cycles, full->evaluations,
          full->cycles);
    /* A checkpoint of another algorithm or size is refused. */
    {
        hessfit_optimize *other = make(HESSFIT_OPT_LBFGS, 8);
        double z[8];
        HF_CALL(hessfit_optimize_load_checkpoint(path, &cp));
        CHECK(hessfit_optimize_resume(other, &cp, z) == HESSFIT_ERROR_INVALID_ARGUMENT && strstr(hessfit_last_error(), "GRAD_SIMP"),
              "resume with another algorithm: %s", hessfit_last_error());
        hessfit_optimize_destroy(other);
        other = make(HESSFIT_OPT_GRAD_SIMP, 7);
        CHECK(hessfit_optimize_resume(other, &cp, z) == HESSFIT_ERROR_COUNT, "resume with another n");
        hessfit_optimize_destroy(other);
        hessfit_opt_checkpoint_free(&cp);
    }
    remove(path);
    hessfit_optimize_destroy(opt);
}

/* ---- arguments, texts, defaults -------------------------------------------------------------------------- */

static void test_arguments(void)
{
    hessfit_optimize *opt = NULL;
    double x[2] = {0.0, 2.0}, lo[2] = {-1.0, -1.0}, hi[2] = {1.0, 1.0}, step[2] = {0.1, 0.0};
    hessfit_opt_grad_simp_options o = hessfit_opt_grad_simp_default_options();
    hessfit_opt_algorithm alg;
    const char *seen[16];
    int n_seen = 0;
    CHECK(hessfit_optimize_create(HESSFIT_OPT_LBFGS, 0, &opt) == HESSFIT_ERROR_INVALID_ARGUMENT && opt == NULL, "n = 0");
    CHECK(hessfit_optimize_create((hessfit_opt_algorithm)9, 2, &opt) == HESSFIT_ERROR_INVALID_ARGUMENT, "algorithm 9");
    opt = make(HESSFIT_OPT_LBFGS, 2);
    fn_reset(FN_ROSENBROCK, 2);
    HF_CALL(hessfit_optimize_set_bounds(opt, lo, hi));
    CHECK(hessfit_optimize_run(opt, x, NULL) == HESSFIT_ERROR_INVALID_ARGUMENT && strstr(hessfit_last_error(), "parameter 1, 2,"),
          "start outside the box: %s", hessfit_last_error());
    CHECK(F.calls == 0, "evaluated a start outside the box");
    x[1] = NAN;
    CHECK(hessfit_optimize_run(opt, x, NULL) == HESSFIT_ERROR_NONFINITE, "NaN start");
    CHECK(hessfit_optimize_set_bounds(opt, hi, lo) == HESSFIT_ERROR_INVALID_ARGUMENT, "lo > hi");
    CHECK(hessfit_optimize_set_initial_step(opt, step) == HESSFIT_ERROR_INVALID_ARGUMENT && strstr(hessfit_last_error(), "parameter 1"),
          "zero step: %s", hessfit_last_error());
    CHECK(hessfit_optimize_set_ftol_rel(opt, -1.0) == HESSFIT_ERROR_INVALID_ARGUMENT, "negative ftol");
    CHECK(hessfit_optimize_set_maxtime(opt, NAN) == HESSFIT_ERROR_INVALID_ARGUMENT, "NaN maxtime");
    CHECK(hessfit_optimize_set_maxeval(opt, -5) == HESSFIT_ERROR_INVALID_ARGUMENT, "negative maxeval");
    {
        const double bad_scales[3][2] = {{1.0, 0.0}, {1.0, -2.0}, {1.0, INFINITY}};
        for (int k = 0; k < 3; k++)
            CHECK(hessfit_optimize_set_scale(opt, bad_scales[k]) == HESSFIT_ERROR_INVALID_ARGUMENT &&
                      strstr(hessfit_last_error(), "scale of parameter 1"),
                  "scale %g: %s", bad_scales[k][1], hessfit_last_error());
        const double nan_scale[2] = {NAN, 1.0};
        CHECK(hessfit_optimize_set_scale(opt, nan_scale) == HESSFIT_ERROR_INVALID_ARGUMENT &&
                  strstr(hessfit_last_error(), "scale of parameter 0"),
              "NaN scale: %s", hessfit_last_error());
        CHECK(hessfit_optimize_set_lbfgs_memory(opt, -1) == HESSFIT_ERROR_INVALID_ARGUMENT, "negative L-BFGS memory");
        HF_CALL(hessfit_optimize_set_scale(opt, NULL));
    }
    CHECK(hessfit_optimize_best(opt, NULL, NULL) == HESSFIT_ERROR_INVALID_ARGUMENT, "best before any evaluation");
    o.n_simplex = 0;
    CHECK(hessfit_optimize_set_grad_simp(opt, &o) == HESSFIT_ERROR_INVALID_ARGUMENT, "n_simplex 0");
    o = hessfit_opt_grad_simp_default_options();
    o.min_improvement = 1.0;
    CHECK(hessfit_optimize_set_grad_simp(opt, &o) == HESSFIT_ERROR_INVALID_ARGUMENT, "min_improvement 1");
    hessfit_optimize_destroy(opt);
    opt = make(HESSFIT_OPT_GRAD_SIMP, 2);
    x[1] = 0.5;
    CHECK(hessfit_optimize_run(opt, x, NULL) == HESSFIT_ERROR_INVALID_ARGUMENT && strstr(hessfit_last_error(), "step"),
          "grad-simp without steps: %s", hessfit_last_error());
    hessfit_optimize_destroy(opt);
    opt = NULL;
    CHECK(hessfit_optimize_create(HESSFIT_OPT_LBFGS, 2, &opt) == HESSFIT_SUCCESS && hessfit_optimize_run(opt, x, NULL) ==
              HESSFIT_ERROR_INVALID_ARGUMENT, "run without an objective");
    hessfit_optimize_destroy(opt);
    /* Names round trip; every NLopt result and outcome has its own text. */
    for (int a = 0; a < HESSFIT_NUM_OPT_ALGORITHMS; a++) {
        HF_CALL(hessfit_opt_algorithm_from_name(hessfit_opt_algorithm_name((hessfit_opt_algorithm)a), &alg));
        CHECK(alg == (hessfit_opt_algorithm)a, "algorithm name round trip %d", a);
    }
    CHECK(hessfit_opt_algorithm_from_name("bfgs", &alg) == HESSFIT_ERROR_INVALID_ARGUMENT, "unknown name");
    for (int r = NLOPT_FORCED_STOP; r <= NLOPT_MAXTIME_REACHED; r++) {
        if (r == 0)
            continue;
        seen[n_seen] = hessfit_opt_nlopt_result_string(r);
        CHECK(strncmp(seen[n_seen], nlopt_result_to_string((nlopt_result)r), strlen(nlopt_result_to_string((nlopt_result)r))) == 0 ||
                  strstr(seen[n_seen], nlopt_result_to_string((nlopt_result)r)) != NULL,
              "text of NLopt result %d (%s) lacks NLopt's name: %s", r, nlopt_result_to_string((nlopt_result)r),
              seen[n_seen]);
        for (int k = 0; k < n_seen; k++)
            CHECK(strcmp(seen[k], seen[n_seen]) != 0, "two NLopt results with one text");
        n_seen++;
    }
    CHECK(strcmp(hessfit_opt_nlopt_result_string(42), "unknown NLopt result") == 0, "result 42");
    for (int a = 0; a < HESSFIT_NUM_OPT_OUTCOMES; a++)
        for (int b = 0; b < a; b++)
            CHECK(strcmp(hessfit_opt_outcome_string((hessfit_opt_outcome)a), hessfit_opt_outcome_string((hessfit_opt_outcome)b)) != 0,
                  "outcomes %d and %d share a text", a, b);
    printf("  arguments: every bad setting refused with a message; %d NLopt results and %d outcomes in words\n", n_seen,
           (int)HESSFIT_NUM_OPT_OUTCOMES);
}

static void test_q2mm_defaults(void)
{
    const struct {
        hessfit_opt_value_kind kind;
        double lo, hi, step;
    } expect[] = {{HESSFIT_OPT_BOND_K, 0, 3600, 7.2},        {HESSFIT_OPT_BOND_R0, 0.5, 3.0, 0.02},
                  {HESSFIT_OPT_ANGLE_K, 0, 720, 7.2},         {HESSFIT_OPT_ANGLE_THETA0, 30, 180, 1.0},
                  {HESSFIT_OPT_FOURIER_K, -20, 20, 0.1},      {HESSFIT_OPT_FOURIER_PHASE, -360, 360, 1.0},
                  {HESSFIT_OPT_IMPROPER_K, 0, 720, 7.2},      {HESSFIT_OPT_VDW_RSTAR, 0.5, 5.0, 0.1},
                  {HESSFIT_OPT_VDW_EPS, 0.001, 2.0, 0.02},    {HESSFIT_OPT_STRETCH_BEND_K, -50 / 143.93262, 50 / 143.93262, 0.2 / 143.93262},
                  {HESSFIT_OPT_BOND_MOMENT, -HUGE_VAL, HUGE_VAL, 0.1}};
    hessfit_forcefield ff;
    int counted[HESSFIT_NUM_OPT_VALUE_KINDS] = {0}, outside[HESSFIT_NUM_OPT_VALUE_KINDS] = {0}, periodicities = 0;
    double lo, hi, step;
    for (size_t k = 0; k < sizeof expect / sizeof expect[0]; k++) {
        HF_CALL(hessfit_optimize_q2mm_defaults(expect[k].kind, &lo, &hi, &step));
        CHECK(lo == expect[k].lo && hi == expect[k].hi && step == expect[k].step, "%s: [%g, %g] %g",
              hessfit_opt_value_kind_name(expect[k].kind), lo, hi, step);
    }
    CHECK(hessfit_optimize_q2mm_defaults(HESSFIT_NUM_OPT_VALUE_KINDS, &lo, &hi, &step) == HESSFIT_ERROR_INVALID_ARGUMENT,
          "unknown kind");
    /* Every fitted value of the rh-enamide Seminario force field: its kind, and whether it lies in
     * q2mm's box. */
    memset(&ff, 0, sizeof ff);
    HF_CALL(hessfit_fld_read(test_source_path("examples/data/rh-enamide/ff/rh_hyd_enamide_seminario.fld"), &ff));
    for (int p = 0; p < ff.n_params; p++) {
        const hessfit_ff_param *par = &ff.params[p];
        for (int v = 0; v < par->n_values; v++) {
            hessfit_opt_value_kind kind;
            hessfit_status st = hessfit_optimize_value_kind(par, v, &kind);
            if (st != HESSFIT_SUCCESS) {
                CHECK((par->kind == HESSFIT_PARAM_TORSION && v % 3 == 2) || par->kind == HESSFIT_PARAM_CHARGE ||
                          (par->kind == HESSFIT_PARAM_IMPROPER && par->improper_form == HESSFIT_IMPROPER_FOURIER && v % 3 == 2),
                      "line %d value %d: %s", par->line, v, hessfit_last_error());
                CHECK(strstr(hessfit_last_error(), "line") != NULL, "message names no line: %s", hessfit_last_error());
                periodicities++;
                continue;
            }
            HF_CALL(hessfit_optimize_q2mm_defaults(kind, &lo, &hi, NULL));
            counted[kind]++;
            if (par->values[v] < lo || par->values[v] > hi) {
                outside[kind]++;
                printf("    outside q2mm's box: line %d (%s %s %s %s), %s %g not in [%g, %g]\n", par->line, par->types[0],
                       par->types[1], par->n_types > 2 ? par->types[2] : "", par->n_types > 3 ? par->types[3] : "",
                       hessfit_opt_value_kind_name(kind), par->values[v], lo, hi);
            }
        }
    }
    printf("  q2mm defaults; rh_hyd_enamide_seminario.fld values per kind (outside q2mm's box):");
    for (int k = 0; k < HESSFIT_NUM_OPT_VALUE_KINDS; k++)
        printf(" %s %d (%d)", hessfit_opt_value_kind_name((hessfit_opt_value_kind)k), counted[k], outside[k]);
    printf("; %d periodicities refused\n", periodicities);
    CHECK(counted[HESSFIT_OPT_BOND_K] > 0 && counted[HESSFIT_OPT_ANGLE_K] > 0 && counted[HESSFIT_OPT_FOURIER_K] > 0 &&
              counted[HESSFIT_OPT_VDW_RSTAR] > 0,
          "kinds missing from the force field");
    /* Golden: every value inside, except the two ring V2 = 60 torsions (k = 30, lines 1768, 1799). */
    for (int k = 0; k < HESSFIT_NUM_OPT_VALUE_KINDS; k++)
        CHECK(outside[k] == (k == HESSFIT_OPT_FOURIER_K ? 2 : 0), "%d %s values outside q2mm's box",
              outside[k], hessfit_opt_value_kind_name((hessfit_opt_value_kind)k));
    CHECK(counted[HESSFIT_OPT_BOND_K] == 186 && counted[HESSFIT_OPT_ANGLE_K] == 529 && counted[HESSFIT_OPT_FOURIER_K] == 2733 &&
              counted[HESSFIT_OPT_IMPROPER_K] == 4 && counted[HESSFIT_OPT_VDW_EPS] == 36 &&
              counted[HESSFIT_OPT_BOND_MOMENT] == 186 && counted[HESSFIT_OPT_STRETCH_BEND_K] == 6,
          "value counts of rh_hyd_enamide_seminario.fld");
    {
        /* A bond's value 0 is its k, value 1 its r0; a periodicity is refused naming the line. */
        hessfit_ff_param bond = {0}, tors = {0};
        hessfit_opt_value_kind kind;
        bond.kind = HESSFIT_PARAM_BOND;
        bond.n_values = 2;
        bond.line = 12;
        HF_CALL(hessfit_optimize_value_kind(&bond, 1, &kind));
        CHECK(kind == HESSFIT_OPT_BOND_R0, "bond value 1");
        CHECK(hessfit_optimize_value_kind(&bond, 2, &kind) == HESSFIT_ERROR_INVALID_ARGUMENT && strstr(hessfit_last_error(), "line 12"),
              "%s", hessfit_last_error());
        tors.kind = HESSFIT_PARAM_TORSION;
        tors.n_values = 9;
        tors.line = 40;
        HF_CALL(hessfit_optimize_value_kind(&tors, 4, &kind));
        CHECK(kind == HESSFIT_OPT_FOURIER_PHASE, "torsion value 4");
        CHECK(hessfit_optimize_value_kind(&tors, 5, &kind) == HESSFIT_ERROR_INVALID_ARGUMENT &&
                  strstr(hessfit_last_error(), "periodicity"),
              "%s", hessfit_last_error());
    }
    hessfit_forcefield_free(&ff);
}

int main(void)
{
    char dir[] = "/tmp/hessfit_test_optimize_XXXXXX";
    hessfit_opt_result gs_result;
    double gs_x[8];
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");

    printf("L-BFGS, SLSQP, Nelder-Mead, Subplex:\n");
    test_rosenbrock(HESSFIT_OPT_LBFGS, 2, 1e-7, 100000);
    test_rosenbrock(HESSFIT_OPT_LBFGS, 10, 1e-7, 100000);
    test_rosenbrock(HESSFIT_OPT_SLSQP, 2, 1e-6, 100000);
    test_rosenbrock(HESSFIT_OPT_SLSQP, 10, 1e-6, 100000);
    test_rosenbrock(HESSFIT_OPT_NELDER_MEAD, 2, 1e-6, 100000);
    test_rosenbrock(HESSFIT_OPT_NELDER_MEAD, 10, -1e-4, MAX_LOG);
    test_rosenbrock(HESSFIT_OPT_SUBPLEX, 2, 1e-6, 100000);
    test_rosenbrock(HESSFIT_OPT_SUBPLEX, 10, 0.0, MAX_LOG);
    test_bounded_quadratic(HESSFIT_OPT_LBFGS);
    test_bounded_quadratic(HESSFIT_OPT_SLSQP);
    test_bounded_quadratic(HESSFIT_OPT_NELDER_MEAD);
    test_bounded_quadratic(HESSFIT_OPT_SUBPLEX);

    printf("scaling, L-BFGS memory:\n");
    test_scaling(dir);
    test_lbfgs_memory();

    printf("grad-simp:\n");
    test_sensitivity_measure(HESSFIT_OPT_SENSITIVITY_Q2MM);
    test_sensitivity_measure(HESSFIT_OPT_SENSITIVITY_GRADIENT);
    test_grad_simp_cycle(&gs_result, gs_x);

    printf("failures, stopping, limits:\n");
    test_failures(dir);
    test_stopping();
    test_limits();

    printf("checkpoints:\n");
    test_checkpoint_round_trip(dir);
    test_bad_checkpoints(dir);
    test_resume_lbfgs(dir);
    test_resume_grad_simp(dir, &gs_result, gs_x);

    printf("arguments and defaults:\n");
    test_arguments();
    test_q2mm_defaults();

    check_no_temporaries(dir);
    CHECK(rmdir(dir) == 0, "%s not empty at the end", dir);
    printf("test_optimize: all checks passed\n");
    return 0;
}
