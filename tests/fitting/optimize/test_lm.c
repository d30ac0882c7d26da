/* The bounded Levenberg-Marquardt optimiser (HESSFIT_OPT_LM, fitting/optimize/hf_optimize_lm.c) on
 * least-squares problems with known answers: Rosenbrock as residuals, MINPACK's Freudenstein-Roth
 * (its local minimum) and Powell singular (a Jacobian singular at the solution), an exponential
 * decay fit to exact data (the generating parameters) and to noisy data (against L-BFGS); active
 * bounds at the solution (the bound met exactly, the projected gradient zero), with and without
 * scaling; maxeval, the stop request, a failing and a NaN-returning callback; checkpoints with the
 * LM damping, resumed to the same minimum, an older checkpoint without it, and the damping's
 * errors; the normal equations at the best point; the trial steps in the progress reports (damping,
 * length, free count, predicted gain, gain ratio). The trust-region reflective method (HESSFIT_OPT_TRF,
 * hf_optimize_trf.c) on the same problems: against scipy's least_squares(method='trf'), whose rules it
 * follows, evaluation by evaluation; active bounds, a fixed value, a start on a bound, undefined trial
 * points, its step reports, and a checkpoint with its trust-region radius, resumed. */
#include "hessfit_optimize.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_N 4
#define MAX_M 40

typedef enum { P_ROSENBROCK, P_FREUDENSTEIN_ROTH, P_POWELL_SINGULAR, P_DECAY } problem_kind;

typedef struct {
    problem_kind kind;
    int n, m;
    double t[MAX_M], y[MAX_M]; /* decay: y_k = a exp(-b t_k) + c + noise */
    long long calls, jac_calls;
    long long fail_at, nan_at;  /* this call reports an error / returns a NaN J^T J entry */
    long long undefined_from, undefined_to; /* these calls report HESSFIT_ERROR_GEOMETRY (undefined there) */
    double last_x[MAX_N];
} problem;

static problem P;

/* r (m) and J (m x n, row-major) at x. */
static void residuals(const double *x, double *r, double *J)
{
    memset(J, 0, sizeof(double) * (size_t)P.m * (size_t)P.n);
    switch (P.kind) {
    case P_ROSENBROCK: /* r = (10 (x2 - x1^2), 1 - x1) */
        r[0] = 10.0 * (x[1] - x[0] * x[0]);
        r[1] = 1.0 - x[0];
        J[0] = -20.0 * x[0], J[1] = 10.0;
        J[2] = -1.0, J[3] = 0.0;
        break;
    case P_FREUDENSTEIN_ROTH: /* More, Garbow, Hillstrom 1981, problem 2 */
        r[0] = -13.0 + x[0] + ((5.0 - x[1]) * x[1] - 2.0) * x[1];
        r[1] = -29.0 + x[0] + ((x[1] + 1.0) * x[1] - 14.0) * x[1];
        J[0] = 1.0, J[1] = 10.0 * x[1] - 3.0 * x[1] * x[1] - 2.0;
        J[2] = 1.0, J[3] = 3.0 * x[1] * x[1] + 2.0 * x[1] - 14.0;
        break;
    case P_POWELL_SINGULAR: /* problem 13 */
        r[0] = x[0] + 10.0 * x[1];
        r[1] = sqrt(5.0) * (x[2] - x[3]);
        r[2] = (x[1] - 2.0 * x[2]) * (x[1] - 2.0 * x[2]);
        r[3] = sqrt(10.0) * (x[0] - x[3]) * (x[0] - x[3]);
        J[0] = 1.0, J[1] = 10.0;
        J[6] = sqrt(5.0), J[7] = -sqrt(5.0);
        J[9] = 2.0 * (x[1] - 2.0 * x[2]), J[10] = -4.0 * (x[1] - 2.0 * x[2]);
        J[12] = 2.0 * sqrt(10.0) * (x[0] - x[3]), J[15] = -2.0 * sqrt(10.0) * (x[0] - x[3]);
        break;
    case P_DECAY: /* r_k = a exp(-b t_k) + c - y_k */
        for (int k = 0; k < P.m; k++) {
            const double e = exp(-x[1] * P.t[k]);
            r[k] = x[0] * e + x[2] - P.y[k];
            J[k * 3 + 0] = e;
            J[k * 3 + 1] = -x[0] * P.t[k] * e;
            J[k * 3 + 2] = 1.0;
        }
        break;
    }
}

static double lsq(int n, const double *x, double *jtj, double *jtr, void *data, hessfit_status *status)
{
    double r[MAX_M], J[MAX_M * MAX_N], loss = 0.0;
    (void)data;
    CHECK(n == P.n, "called with n = %d", n);
    CHECK((jtj == NULL) == (jtr == NULL), "jtj and jtr not both given or both NULL");
    P.calls++;
    memcpy(P.last_x, x, (size_t)n * sizeof *x);
    if (P.calls >= P.undefined_from && P.calls <= P.undefined_to && P.undefined_from > 0) {
        *status = hessfit_error(HESSFIT_ERROR_GEOMETRY, "no MM minimum there (test)");
        return 0.0;
    }
    if (P.calls == P.fail_at) {
        *status = hessfit_error(HESSFIT_ERROR_OPENMM, "the residual kernel failed (test failure)");
        return 0.0;
    }
    residuals(x, r, J);
    for (int k = 0; k < P.m; k++)
        loss += r[k] * r[k];
    if (jtj != NULL) {
        P.jac_calls++;
        for (int i = 0; i < n; i++) {
            jtr[i] = 0.0;
            for (int k = 0; k < P.m; k++)
                jtr[i] += J[k * n + i] * r[k];
            for (int j = 0; j < n; j++) {
                double s = 0.0;
                for (int k = 0; k < P.m; k++)
                    s += J[k * n + i] * J[k * n + j];
                jtj[i * n + j] = s;
            }
        }
        if (P.calls == P.nan_at)
            jtj[1] = NAN;
    }
    return loss;
}

/* The plain objective of the same problem, for L-BFGS. */
static double plain(int n, const double *x, double *grad, void *data, hessfit_status *status)
{
    double jtj[MAX_N * MAX_N], jtr[MAX_N], loss = lsq(n, x, jtj, jtr, data, status);
    if (grad != NULL)
        for (int i = 0; i < n; i++)
            grad[i] = 2.0 * jtr[i];
    return loss;
}

static void problem_reset(problem_kind kind, double noise)
{
    memset(&P, 0, sizeof P);
    P.kind = kind;
    switch (kind) {
    case P_ROSENBROCK:
    case P_FREUDENSTEIN_ROTH: P.n = 2, P.m = 2; break;
    case P_POWELL_SINGULAR: P.n = 4, P.m = 4; break;
    case P_DECAY:
        P.n = 3, P.m = 30;
        for (int k = 0; k < P.m; k++) { /* a = 2.5, b = 1.3, c = 0.4; a fixed pseudo-noise */
            P.t[k] = 0.1 * k;
            P.y[k] = 2.5 * exp(-1.3 * P.t[k]) + 0.4 + noise * sin(7.0 * k + 1.0);
        }
        break;
    }
}

/* dL/dx at x. */
static void gradient(const double *x, double *g)
{
    double jtj[MAX_N * MAX_N], jtr[MAX_N];
    hessfit_status st = HESSFIT_SUCCESS;
    long long calls = P.calls;
    lsq(P.n, x, jtj, jtr, NULL, &st);
    P.calls = calls;
    for (int i = 0; i < P.n; i++)
        g[i] = 2.0 * jtr[i];
}

static hessfit_optimize *make_optimizer(hessfit_opt_algorithm algorithm)
{
    hessfit_optimize *opt;
    HF_CALL(hessfit_optimize_create(algorithm, P.n, &opt));
    HF_CALL(hessfit_optimize_set_least_squares(opt, lsq, P.m, NULL));
    return opt;
}

static hessfit_optimize *make_lm(void)
{
    return make_optimizer(HESSFIT_OPT_LM);
}

static hessfit_opt_result run(hessfit_optimize *opt, double *x)
{
    hessfit_opt_result res;
    HF_CALL(hessfit_optimize_run(opt, x, &res));
    CHECK(res.evaluations == P.calls && P.calls == P.jac_calls, "%lld evaluations, %lld calls, %lld with J^T J",
          res.evaluations, P.calls, P.jac_calls);
    return res;
}

/* ---- known minima ------------------------------------------------------------------------------- */

static void test_known_minima(void)
{
    double x[MAX_N], g[MAX_N];
    hessfit_opt_result res;
    hessfit_optimize *opt;

    problem_reset(P_ROSENBROCK, 0.0);
    opt = make_lm();
    x[0] = -1.2, x[1] = 1.0;
    res = run(opt, x);
    CHECK(fabs(x[0] - 1.0) <= 1e-12 && fabs(x[1] - 1.0) <= 1e-12, "Rosenbrock: (%.17g, %.17g)", x[0], x[1]);
    printf("  Rosenbrock from (-1.2, 1): %lld evaluations, max |x - 1| %.2g, loss %.3g (%s)\n", res.evaluations,
           fmax(fabs(x[0] - 1.0), fabs(x[1] - 1.0)), res.loss, hessfit_opt_outcome_string(res.outcome));
    hessfit_optimize_destroy(opt);

    /* Freudenstein-Roth from (0.5, -2): the local minimum L = 48.9842536792400212 at (11.4127789869020939,
     * -0.8968052532744765) (mpmath, 30 digits); ftol off: it runs until L no longer resolves a step. */
    problem_reset(P_FREUDENSTEIN_ROTH, 0.0);
    opt = make_lm();
    HF_CALL(hessfit_optimize_set_ftol_rel(opt, 0.0));
    HF_CALL(hessfit_optimize_set_gtol(opt, 1e-9));
    x[0] = 0.5, x[1] = -2.0;
    res = run(opt, x);
    gradient(x, g);
    CHECK(fabs(res.loss - 48.9842536792400212) <= 1e-14 * 48.98, "Freudenstein-Roth: loss %.17g", res.loss);
    CHECK(fabs(x[0] - 11.4127789869020939) <= 1e-7 && fabs(x[1] + 0.8968052532744765) <= 1e-8, "Freudenstein-Roth: (%.12g, %.12g)",
          x[0], x[1]);
    printf("  Freudenstein-Roth from (0.5, -2): %lld evaluations, loss %.15g (MGH: 48.9842536792400), x off by %.2g, "
           "|grad| %.2g (%s)\n",
           res.evaluations, res.loss, fmax(fabs(x[0] - 11.4127789869020939), fabs(x[1] + 0.8968052532744765)), hypot(g[0], g[1]), hessfit_opt_outcome_string(res.outcome));
    hessfit_optimize_destroy(opt);

    /* Powell singular from (3, -1, 0, 1): the minimum 0 at the origin, J singular there. */
    problem_reset(P_POWELL_SINGULAR, 0.0);
    opt = make_lm();
    HF_CALL(hessfit_optimize_set_ftol_rel(opt, 0.0));
    HF_CALL(hessfit_optimize_set_maxeval(opt, 150));
    x[0] = 3.0, x[1] = -1.0, x[2] = 0.0, x[3] = 1.0;
    res = run(opt, x);
    CHECK(res.loss <= 1e-40 && test_max_abs(x, 4) <= 1e-9, "Powell singular: loss %g, max |x| %g", res.loss,
          test_max_abs(x, 4));
    printf("  Powell singular from (3, -1, 0, 1): %lld evaluations, loss %.3g, max |x| %.2g (%s)\n", res.evaluations,
           res.loss, test_max_abs(x, 4), hessfit_opt_outcome_string(res.outcome));
    hessfit_optimize_destroy(opt);

    /* Exponential decay, exact data: the generating parameters. */
    problem_reset(P_DECAY, 0.0);
    opt = make_lm();
    x[0] = 1.0, x[1] = 0.5, x[2] = 0.0;
    res = run(opt, x);
    CHECK(fabs(x[0] - 2.5) <= 1e-10 && fabs(x[1] - 1.3) <= 1e-10 && fabs(x[2] - 0.4) <= 1e-10,
          "decay: (%.17g, %.17g, %.17g)", x[0], x[1], x[2]);
    printf("  decay a exp(-b t) + c, 30 exact points, from (1, 0.5, 0): %lld evaluations, (a, b, c) off by %.2g, %.2g, "
           "%.2g (%s)\n",
           res.evaluations, fabs(x[0] - 2.5), fabs(x[1] - 1.3), fabs(x[2] - 0.4), hessfit_opt_outcome_string(res.outcome));
    hessfit_optimize_destroy(opt);

    /* Noisy data: LM against L-BFGS run to its end. */
    {
        double xl[3] = {1.0, 0.5, 0.0};
        hessfit_opt_result rl;
        problem_reset(P_DECAY, 0.05);
        opt = make_lm();
        HF_CALL(hessfit_optimize_set_ftol_rel(opt, 1e-14));
        x[0] = 1.0, x[1] = 0.5, x[2] = 0.0;
        res = run(opt, x);
        gradient(x, g);
        hessfit_optimize_destroy(opt);
        P.calls = P.jac_calls = 0;
        HF_CALL(hessfit_optimize_create(HESSFIT_OPT_LBFGS, 3, &opt));
        HF_CALL(hessfit_optimize_set_objective(opt, plain, NULL));
        HF_CALL(hessfit_optimize_set_ftol_rel(opt, 1e-15));
        HF_CALL(hessfit_optimize_run(opt, xl, &rl));
        hessfit_optimize_destroy(opt);
        CHECK(res.loss <= rl.loss * (1.0 + 1e-12), "noisy decay: LM %.17g, L-BFGS %.17g", res.loss, rl.loss);
        CHECK(test_max_abs(g, 3) <= 1e-9, "noisy decay: |grad| %g", test_max_abs(g, 3));
        CHECK(fabs(x[0] - xl[0]) + fabs(x[1] - xl[1]) + fabs(x[2] - xl[2]) <= 1e-5, "noisy decay: LM and L-BFGS apart");
        printf("  decay, noisy data: LM %lld evaluations, loss %.15g, max |grad| %.2g; L-BFGS %lld evaluations, loss "
               "%.15g\n",
               res.evaluations, res.loss, test_max_abs(g, 3), rl.evaluations, rl.loss);
    }
}

/* ---- bounds ----------------------------------------------------------------------------------------- */

/* Rosenbrock with x1 <= 0.5: the minimum (0.5, 0.25) on the bound; and the decay with b <= 1.0 (its
 * free minimum 1.3 outside), scaled. */
static void test_active_bounds(void)
{
    double x[MAX_N], g[MAX_N], lo[MAX_N], hi[MAX_N];
    hessfit_opt_result res;
    hessfit_optimize *opt;

    problem_reset(P_ROSENBROCK, 0.0);
    opt = make_lm();
    lo[0] = -2.0, lo[1] = -2.0, hi[0] = 0.5, hi[1] = 2.0;
    HF_CALL(hessfit_optimize_set_bounds(opt, lo, hi));
    HF_CALL(hessfit_optimize_set_ftol_rel(opt, 0.0)); /* to the end: L = 0.25 + 100 (x2 - 0.25)^2 no longer
                                                        resolves |x2 - 0.25| below about 1e-9 */
    x[0] = -1.2, x[1] = 1.0;
    res = run(opt, x);
    gradient(x, g);
    CHECK(x[0] == 0.5, "bounded Rosenbrock: x1 = %.17g, not exactly the bound 0.5", x[0]);
    CHECK(fabs(x[1] - 0.25) <= 1e-9 && fabs(g[1]) <= 1e-7 && g[0] < 0.0, "bounded Rosenbrock: x2 %.17g, grad (%g, %g)",
          x[1], g[0], g[1]);
    printf("  Rosenbrock, x1 <= 0.5: %lld evaluations, x1 = 0.5 exactly, |x2 - 0.25| %.2g, projected gradient %.2g "
           "(dL/dx1 = %.3g against the bound; %s)\n",
           res.evaluations, fabs(x[1] - 0.25), fabs(g[1]), g[0], hessfit_opt_outcome_string(res.outcome));
    hessfit_optimize_destroy(opt);

    for (int scaled = 0; scaled < 2; scaled++) {
        const double scale[3] = {0.1, 3.0, 0.7};
        problem_reset(P_DECAY, 0.0);
        opt = make_lm();
        lo[0] = 0.0, lo[1] = 0.1, lo[2] = -1.0, hi[0] = 10.0, hi[1] = 1.0, hi[2] = 1.0;
        HF_CALL(hessfit_optimize_set_bounds(opt, lo, hi));
        HF_CALL(hessfit_optimize_set_ftol_rel(opt, 1e-15));
        if (scaled)
            HF_CALL(hessfit_optimize_set_scale(opt, scale));
        x[0] = 1.0, x[1] = 0.5, x[2] = 0.0;
        res = run(opt, x);
        gradient(x, g);
        CHECK(x[1] == 1.0, "bounded decay%s: b = %.17g, not exactly the bound 1", scaled ? " (scaled)" : "", x[1]);
        CHECK(hypot(g[0], g[2]) <= 1e-7 && g[1] < 0.0, "bounded decay: gradient (%g, %g, %g)", g[0], g[1], g[2]);
        printf("  decay, b <= 1 (free minimum 1.3)%s: %lld evaluations, b = 1 exactly, loss %.10g, projected "
               "gradient %.2g (%s)\n",
               scaled ? ", scaled by (0.1, 3, 0.7)" : "", res.evaluations, res.loss, hypot(g[0], g[2]),
               hessfit_opt_outcome_string(res.outcome));
        hessfit_optimize_destroy(opt);
    }
}

/* ---- limits, stop, failures ------------------------------------------------------------------------- */

static int stop_at_5(const hessfit_opt_progress *p, void *data)
{
    (void)data;
    CHECK(p->phase == HESSFIT_OPT_PHASE_MAIN && isfinite(p->gradient_norm), "LM progress: phase %d, gradient norm %g",
          (int)p->phase, p->gradient_norm);
    if (p->evaluations == 5)
        hessfit_optimize_request_stop();
    return 0;
}

static void test_limits_and_failures(void)
{
    double x[MAX_N];
    hessfit_opt_result res;
    hessfit_optimize *opt;
    hessfit_status st;

    problem_reset(P_POWELL_SINGULAR, 0.0);
    opt = make_lm();
    HF_CALL(hessfit_optimize_set_maxeval(opt, 7));
    x[0] = 3.0, x[1] = -1.0, x[2] = 0.0, x[3] = 1.0;
    res = run(opt, x);
    CHECK(res.outcome == HESSFIT_OPT_MAXEVAL_REACHED && res.evaluations == 7, "maxeval 7: %lld evaluations, %s",
          res.evaluations, hessfit_opt_outcome_string(res.outcome));
    hessfit_optimize_destroy(opt);

    problem_reset(P_POWELL_SINGULAR, 0.0);
    opt = make_lm();
    HF_CALL(hessfit_optimize_set_progress(opt, stop_at_5, NULL));
    x[0] = 3.0, x[1] = -1.0, x[2] = 0.0, x[3] = 1.0;
    res = run(opt, x);
    hessfit_optimize_clear_stop();
    CHECK(res.outcome == HESSFIT_OPT_STOPPED && res.evaluations == 5, "stop at 5: %lld evaluations, %s",
          res.evaluations, hessfit_opt_outcome_string(res.outcome));
    printf("  maxeval 7: 7 evaluations; the stop flag set at evaluation 5: 5 evaluations\n");
    hessfit_optimize_destroy(opt);

    problem_reset(P_ROSENBROCK, 0.0);
    P.fail_at = 4;
    opt = make_lm();
    x[0] = -1.2, x[1] = 1.0;
    st = hessfit_optimize_run(opt, x, &res);
    CHECK(st == HESSFIT_ERROR_OPENMM && strstr(hessfit_last_error(), "evaluation 4") != NULL &&
              strstr(hessfit_last_error(), "residual kernel failed") != NULL && P.calls == 4,
          "failing callback: %s (%lld calls)", hessfit_last_error(), P.calls);
    printf("  expected error: %s\n", hessfit_last_error());
    HF_CALL(hessfit_optimize_best(opt, x, NULL));
    hessfit_optimize_destroy(opt);

    /* trial points where the objective is undefined (HESSFIT_ERROR_GEOMETRY: a geometry target
     * without an MM minimum): rejected steps, the run goes on to the same minimum */
    problem_reset(P_ROSENBROCK, 0.0);
    P.undefined_from = 2, P.undefined_to = 4;
    opt = make_lm();
    x[0] = -1.2, x[1] = 1.0;
    HF_CALL(hessfit_optimize_run(opt, x, &res));
    CHECK(fabs(x[0] - 1.0) <= 1e-12 && fabs(x[1] - 1.0) <= 1e-12 && res.undefined_trials == 3 &&
              res.evaluations == P.calls && P.jac_calls == P.calls - 3,
          "undefined trial points 2-4: (%.17g, %.17g), %lld undefined, %lld evaluations, %lld calls", x[0], x[1],
          res.undefined_trials, res.evaluations, P.calls);
    printf("  trial points 2-4 undefined: the minimum in %lld evaluations, 3 of them rejected\n", res.evaluations);
    hessfit_optimize_destroy(opt);
    /* ... but not the start point */
    problem_reset(P_ROSENBROCK, 0.0);
    P.undefined_from = 1, P.undefined_to = 1;
    opt = make_lm();
    x[0] = -1.2, x[1] = 1.0;
    st = hessfit_optimize_run(opt, x, &res);
    CHECK(st == HESSFIT_ERROR_GEOMETRY && strstr(hessfit_last_error(), "evaluation 1") != NULL,
          "undefined start point: %s", hessfit_last_error());
    hessfit_optimize_destroy(opt);

    problem_reset(P_ROSENBROCK, 0.0);
    P.nan_at = 3;
    opt = make_lm();
    x[0] = -1.2, x[1] = 1.0;
    st = hessfit_optimize_run(opt, x, &res);
    CHECK(st == HESSFIT_ERROR_NONFINITE && strstr(hessfit_last_error(), "J^T J entry (0, 1)") != NULL,
          "NaN in J^T J: %s", hessfit_last_error());
    printf("  expected error: %s\n", hessfit_last_error());
    hessfit_optimize_destroy(opt);

    /* LM without a least-squares objective, and a bad residual count */
    HF_CALL(hessfit_optimize_create(HESSFIT_OPT_LM, 2, &opt));
    HF_FAILS(hessfit_optimize_run(opt, x, &res), HESSFIT_ERROR_INVALID_ARGUMENT);
    HF_FAILS(hessfit_optimize_set_least_squares(opt, lsq, 0, NULL), HESSFIT_ERROR_INVALID_ARGUMENT);
    HF_FAILS(hessfit_optimize_best_normal_equations(opt, NULL, NULL, NULL), HESSFIT_ERROR_INVALID_ARGUMENT);
    hessfit_optimize_destroy(opt);
    {
        hessfit_opt_algorithm a;
        HF_CALL(hessfit_opt_algorithm_from_name("levenberg-marquardt", &a));
        CHECK(a == HESSFIT_OPT_LM && strcmp(hessfit_opt_algorithm_name(a), "LM") == 0, "LM's names");
    }
}

/* ---- the normal equations at the best point --------------------------------------------------------- */

static void test_best_normal_equations(void)
{
    double x[MAX_N], jtj[MAX_N * MAX_N], jtr[MAX_N], want_jtj[MAX_N * MAX_N], want_jtr[MAX_N];
    long long m = 0;
    hessfit_status st = HESSFIT_SUCCESS;
    hessfit_optimize *opt;
    problem_reset(P_DECAY, 0.05);
    opt = make_lm();
    x[0] = 1.0, x[1] = 0.5, x[2] = 0.0;
    run(opt, x);
    HF_CALL(hessfit_optimize_best_normal_equations(opt, jtj, jtr, &m));
    lsq(3, x, want_jtj, want_jtr, NULL, &st);
    CHECK(m == 30 && memcmp(jtj, want_jtj, sizeof(double) * 9) == 0 && memcmp(jtr, want_jtr, sizeof(double) * 3) == 0,
          "the best point's normal equations differ from the callback's there");
    printf("  the best point's J^T J and J^T r: bit-identical to the callback's, m = %lld\n", m);
    hessfit_optimize_destroy(opt);
}

/* ---- checkpoints ------------------------------------------------------------------------------------ */

static void test_checkpoint_resume(void)
{
    double xa[MAX_N] = {1.0, 0.5, 0.0}, xb[MAX_N] = {1.0, 0.5, 0.0}, xr[MAX_N];
    const char *path = test_temp_path("lm.checkpoint");
    hessfit_opt_result ra, rb, rr;
    hessfit_opt_checkpoint cp;
    hessfit_optimize *opt;
    char *text;
    size_t len;

    problem_reset(P_DECAY, 0.0);
    opt = make_lm();
    ra = run(opt, xa);
    hessfit_optimize_destroy(opt);

    problem_reset(P_DECAY, 0.0);
    opt = make_lm();
    HF_CALL(hessfit_optimize_set_maxeval(opt, 6));
    HF_CALL(hessfit_optimize_set_checkpoint_file(opt, path, 0.0));
    rb = run(opt, xb);
    CHECK(rb.outcome == HESSFIT_OPT_MAXEVAL_REACHED, "cut run: %s", hessfit_opt_outcome_string(rb.outcome));
    hessfit_optimize_destroy(opt);
    text = test_load_file(path, &len);
    CHECK(strstr(text, "algorithm LM\n") != NULL && strstr(text, "\nlm_lambda ") != NULL, "LM checkpoint:\n%s", text);
    HF_CALL(hessfit_optimize_load_checkpoint(path, &cp));
    CHECK(cp.algorithm == HESSFIT_OPT_LM && cp.evaluations == 6 && cp.lm_lambda > 0.0 && cp.best_loss == rb.loss,
          "checkpoint: %lld evaluations, lambda %g", cp.evaluations, cp.lm_lambda);

    problem_reset(P_DECAY, 0.0);
    opt = make_lm();
    HF_CALL(hessfit_optimize_resume(opt, &cp, xr));
    HF_CALL(hessfit_optimize_run(opt, xr, &rr));
    CHECK(rr.evaluations == 6 + rr.run_evaluations && rr.run_evaluations == P.calls, "resumed count %lld", rr.evaluations);
    CHECK(test_max_abs_diff(xr, xa, 3) <= 1e-12 && rr.loss <= 1e-24, "resumed: loss %.17g vs %.17g, x apart by %g",
          rr.loss, ra.loss, test_max_abs_diff(xr, xa, 3));
    printf("  decay (exact data) cut at 6 of %lld evaluations (lambda %.3g saved), resumed: %lld more, loss %.3g "
           "(uninterrupted %.3g), x apart by %.2g\n",
           ra.evaluations, cp.lm_lambda, rr.run_evaluations, rr.loss, ra.loss, test_max_abs_diff(xr, xa, 3));
    /* resumed again at its end: one evaluation, no improvement, and the best point's normal equations */
    {
        hessfit_opt_checkpoint end;
        hessfit_opt_result re;
        HF_CALL(hessfit_optimize_get_checkpoint(opt, &end));
        HF_CALL(hessfit_optimize_resume(opt, &end, xr));
        HF_CALL(hessfit_optimize_run(opt, xr, &re));
        CHECK(re.run_evaluations == 1 && re.outcome == HESSFIT_OPT_GTOL_REACHED, "resumed at the end: %lld evaluations, %s",
              re.run_evaluations, hessfit_opt_outcome_string(re.outcome));
        HF_CALL(hessfit_optimize_best_normal_equations(opt, NULL, NULL, NULL));
        hessfit_opt_checkpoint_free(&end);
    }
    hessfit_optimize_destroy(opt);
    hessfit_opt_checkpoint_free(&cp);

    /* A checkpoint without lm_lambda (as before LM had it) reads, with lambda 0: the default. */
    {
        char *old = malloc(len + 1), *at = strstr(text, "lm_lambda "), *eol = strchr(at, '\n');
        const char *old_path;
        memcpy(old, text, (size_t)(at - text));
        strcpy(old + (at - text), eol + 1);
        old_path = test_write_text("old.checkpoint", old);
        HF_CALL(hessfit_optimize_load_checkpoint(old_path, &cp));
        CHECK(cp.lm_lambda == 0.0 && cp.algorithm == HESSFIT_OPT_LM, "old checkpoint: lambda %g", cp.lm_lambda);
        problem_reset(P_DECAY, 0.0);
        opt = make_lm();
        HF_CALL(hessfit_optimize_resume(opt, &cp, xr));
        HF_CALL(hessfit_optimize_run(opt, xr, &rr));
        CHECK(test_max_abs_diff(xr, xa, 3) <= 1e-12, "resumed without lambda: x apart by %g", test_max_abs_diff(xr, xa, 3));
        hessfit_optimize_destroy(opt);
        hessfit_opt_checkpoint_free(&cp);
        free(old);
    }
    /* lm_lambda errors: not > 0, not a number, in another algorithm's file. */
    {
        static const struct {
            const char *from, *to, *fragment;
            hessfit_status status;
        } bad[] = {{"lm_lambda ", "lm_lambda 0\n", "not > 0", HESSFIT_ERROR_PARSE},
                   {"lm_lambda ", "lm_lambda nan\n", "LM damping", HESSFIT_ERROR_NONFINITE},
                   {"algorithm LM", "algorithm LD_LBFGS\n", "in a checkpoint of LD_LBFGS", HESSFIT_ERROR_FORMAT}};
        for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) { /* the line starting with from, replaced */
            const int line = test_line_of(text, (size_t)(strstr(text, bad[k].from) - text));
            char *mut = test_replace_lines(text, line, line, bad[k].to);
            const char *p = test_write_text("bad.checkpoint", mut);
            hessfit_status st = hessfit_optimize_load_checkpoint(p, &cp);
            CHECK(st == bad[k].status && strstr(hessfit_last_error(), bad[k].fragment) != NULL &&
                      strstr(hessfit_last_error(), "bad.checkpoint:") != NULL,
                  "mutation %zu: %s: %s", k, hessfit_status_string(st), hessfit_last_error());
            printf("    expected error: %s\n", strstr(hessfit_last_error(), "bad.checkpoint"));
            free(mut);
        }
    }
    free(text);
}

/* ---- the trial steps in the progress reports ------------------------------------------------------ */

typedef struct {
    double accepted_loss, accepted_x[MAX_N];
    int reports, trials, accepted, bound_held;
} step_log;

/* Every report after the start is a trial step: its damping, length (the distance from the accepted point
 * to the point just evaluated), free count and predicted gain, and the gain ratio that decides it. */
static int check_step(const hessfit_opt_progress *p, void *data)
{
    step_log *s = data;
    s->reports++;
    if (p->evaluations == 1) {
        CHECK(p->lm_free == 0 && isnan(p->lm_lambda) && isnan(p->lm_step_norm) && isnan(p->lm_predicted) &&
                  isnan(p->lm_gain_ratio),
              "the start is reported as an LM step");
    } else {
        double d = 0.0;
        for (int i = 0; i < P.n; i++)
            d += (P.last_x[i] - s->accepted_x[i]) * (P.last_x[i] - s->accepted_x[i]);
        const double rho = (s->accepted_loss - p->loss) / p->lm_predicted;
        s->trials++;
        CHECK(p->lm_free >= 1 && p->lm_free <= P.n && p->lm_lambda > 0.0 && p->lm_predicted > 0.0,
              "evaluation %lld: free %d, lambda %g, predicted %g", p->evaluations, p->lm_free, p->lm_lambda,
              p->lm_predicted);
        CHECK(fabs(p->lm_step_norm - sqrt(d)) <= 1e-12 * sqrt(d) && sqrt(d) > 0.0,
              "evaluation %lld: step length %.17g, moved %.17g", p->evaluations, p->lm_step_norm, sqrt(d));
        CHECK(fabs(p->lm_gain_ratio - rho) <= 1e-12 * fabs(rho), "evaluation %lld: gain ratio %.17g, expected %.17g",
              p->evaluations, p->lm_gain_ratio, rho);
        CHECK((p->lm_gain_ratio > 0.0) == (p->new_best != 0), "evaluation %lld: gain ratio %g but new best %d",
              p->evaluations, p->lm_gain_ratio, p->new_best);
        s->accepted += p->new_best != 0;
        s->bound_held += p->lm_free < P.n;
    }
    if (p->new_best) {
        s->accepted_loss = p->loss;
        memcpy(s->accepted_x, P.last_x, sizeof s->accepted_x);
    }
    return 0;
}

/* Rosenbrock with x1 <= 0.5 (test_active_bounds): every trial step reported; LM: the bound held in some
 * (TRF stays strictly inside: every value free). */
static void test_step_reports(hessfit_opt_algorithm algorithm)
{
    double x[MAX_N], lo[MAX_N] = {-2.0, -2.0}, hi[MAX_N] = {0.5, 2.0};
    step_log log;
    hessfit_opt_result res;
    hessfit_optimize *opt;
    memset(&log, 0, sizeof log);
    problem_reset(P_ROSENBROCK, 0.0);
    opt = make_optimizer(algorithm);
    HF_CALL(hessfit_optimize_set_bounds(opt, lo, hi));
    HF_CALL(hessfit_optimize_set_progress(opt, check_step, &log));
    x[0] = -1.2, x[1] = 1.0;
    res = run(opt, x);
    CHECK(log.reports == res.evaluations && log.trials == res.evaluations - 1, "%d reports, %d trials, %lld evaluations",
          log.reports, log.trials, res.evaluations);
    CHECK(log.accepted > 0 && log.accepted < log.trials && (log.bound_held > 0) == (algorithm == HESSFIT_OPT_LM),
          "%d trials, %d accepted, %d with the bound held", log.trials, log.accepted, log.bound_held);
    printf("  bounded Rosenbrock (%s): %d trial steps reported (%d accepted, %d with x1 held on its bound), each with "
           "its damping, length, predicted gain and gain ratio\n",
           hessfit_opt_algorithm_name(algorithm), log.trials, log.accepted, log.bound_held);
    hessfit_optimize_destroy(opt);
}

/* ---- TRF ------------------------------------------------------------------------------------------ */

typedef struct {
    double loss[64];
    int n;
} loss_log;

static int log_loss(const hessfit_opt_progress *p, void *data)
{
    loss_log *l = data;
    if (l->n < 64)
        l->loss[l->n++] = p->loss;
    return 0;
}

/* scipy 1.17.1 least_squares(fun, x0, jac, bounds, method='trf', x_scale=1, ftol=1e-8, xtol=1e-15,
 * gtol=1e-15) on the same residuals: its evaluation count, end point and the losses (sum r^2, 10 digits)
 * of its evaluations. TRF follows scipy's rules, so each evaluation must match. */
static void test_trf_against_scipy(void)
{
    static const double inf = HUGE_VAL;
    static const struct {
        const char *name;
        problem_kind kind;
        double noise, x0[3], lo[3], hi[3];
        int nfev;
        double loss, x[3];
        int n_seq;
        double seq[12];
    } cases[] = {
        {"Rosenbrock, x1 <= 0.8", P_ROSENBROCK, 0.0, {-1.2, 1.0}, {-inf, -inf}, {0.8, inf}, 30, 0.040000000000000382,
         {0.799999999999999, 0.6399999999818646}, 12,
         {24.2, 4.665543122, 11.05776774, 4.10026233, 3.764647355, 2.476718218, 3.218960265, 2.100698727, 1.680627503,
          1.949272833, 1.352307169, 1.057812045}},
        {"decay, c <= 0.3", P_DECAY, 0.01, {1.0, 0.5, 0.0}, {0.0, 0.0, -1.0}, {10.0, 10.0, 0.3}, 11, 0.043212485385000325,
         {2.548736598099907, 1.1478012972414544, 0.29999999999999993}, 11,
         {15.24713792, 1.650696313, 0.3281130496, 0.1232324393, 0.05749566012, 0.04951223401, 0.04352879146,
          0.04321305117, 0.04321248742, 0.04321248539, 0.04321248539}},
        {"decay, c <= 1", P_DECAY, 0.01, {1.0, 0.5, 0.0}, {0.0, 0.0, -1.0}, {10.0, 10.0, 1.0}, 8, 0.0013490039251492108,
         {2.503699866960421, 1.3107957587165626, 0.4045936077245441}, 8,
         {15.24713792, 1.663639093, 0.235824114, 0.06378373919, 0.001518711139, 0.001349008382, 0.001349003925,
          0.001349003925}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        double x[MAX_N], worst = 0.0;
        loss_log log = {{0.0}, 0};
        hessfit_opt_result res;
        hessfit_optimize *opt;
        problem_reset(cases[c].kind, cases[c].noise);
        opt = make_optimizer(HESSFIT_OPT_TRF);
        HF_CALL(hessfit_optimize_set_bounds(opt, cases[c].lo, cases[c].hi));
        HF_CALL(hessfit_optimize_set_progress(opt, log_loss, &log));
        memcpy(x, cases[c].x0, sizeof x);
        res = run(opt, x);
        for (int k = 0; k < cases[c].n_seq; k++)
            worst = fmax(worst, fabs(log.loss[k] - cases[c].seq[k]) / cases[c].seq[k]);
        CHECK(res.evaluations == cases[c].nfev && res.outcome == HESSFIT_OPT_FTOL_REACHED,
              "%s: %lld evaluations (scipy %d), %s", cases[c].name, res.evaluations, cases[c].nfev,
              hessfit_opt_outcome_string(res.outcome));
        CHECK(worst <= 1e-9, "%s: the losses of the evaluations differ from scipy's by %.3g relative", cases[c].name, worst);
        CHECK(fabs(res.loss - cases[c].loss) <= 1e-13 * cases[c].loss && test_max_abs_diff(x, cases[c].x, P.n) <= 1e-12,
              "%s: loss %.17g (scipy %.17g), x off by %g", cases[c].name, res.loss, cases[c].loss,
              test_max_abs_diff(x, cases[c].x, P.n));
        printf("  %s: %lld evaluations as scipy's, each loss within %.2g of its, end point within %.2g\n", cases[c].name,
               res.evaluations, worst, test_max_abs_diff(x, cases[c].x, P.n));
        hessfit_optimize_destroy(opt);
    }
}

/* Active bounds (the iterates stay strictly inside: the bound met to ~1e-9), a fixed value, a start on a
 * bound, and trial points where the objective is undefined. */
static void test_trf_bounds(void)
{
    double x[MAX_N], g[MAX_N], lo[MAX_N] = {-2.0, -2.0}, hi[MAX_N] = {0.5, 2.0};
    hessfit_opt_result res;
    hessfit_optimize *opt;
    hessfit_opt_algorithm a;

    problem_reset(P_ROSENBROCK, 0.0);
    opt = make_optimizer(HESSFIT_OPT_TRF);
    HF_CALL(hessfit_optimize_set_bounds(opt, lo, hi));
    HF_CALL(hessfit_optimize_set_ftol_rel(opt, 1e-15));
    x[0] = -1.2, x[1] = 1.0;
    res = run(opt, x);
    gradient(x, g);
    CHECK(x[0] < 0.5 && 0.5 - x[0] <= 1e-9 && fabs(x[1] - 0.25) <= 1e-8 && g[0] < 0.0 && fabs(g[1]) <= 1e-6,
          "TRF, bounded Rosenbrock: (%.17g, %.17g), grad (%g, %g)", x[0], x[1], g[0], g[1]);
    printf("  Rosenbrock, x1 <= 0.5: %lld evaluations, 0.5 - x1 = %.2g, |x2 - 0.25| %.2g, dL/dx2 %.2g (%s)\n",
           res.evaluations, 0.5 - x[0], fabs(x[1] - 0.25), g[1], hessfit_opt_outcome_string(res.outcome));
    hessfit_optimize_destroy(opt);

    /* b fixed at 1.1 (lo = hi): a and c fitted, b untouched */
    problem_reset(P_DECAY, 0.0);
    opt = make_optimizer(HESSFIT_OPT_TRF);
    lo[0] = 0.0, lo[1] = 1.1, lo[2] = -1.0, hi[0] = 10.0, hi[1] = 1.1, hi[2] = 1.0;
    HF_CALL(hessfit_optimize_set_bounds(opt, lo, hi));
    HF_CALL(hessfit_optimize_set_ftol_rel(opt, 1e-15));
    x[0] = 1.0, x[1] = 1.1, x[2] = 0.0;
    res = run(opt, x);
    gradient(x, g);
    CHECK(x[1] == 1.1 && hypot(g[0], g[2]) <= 1e-7, "TRF, b fixed: b %.17g, gradient (%g, %g)", x[1], g[0], g[2]);
    printf("  decay with b fixed at 1.1: %lld evaluations, b untouched, |dL/d(a, c)| %.2g\n", res.evaluations,
           hypot(g[0], g[2]));
    hessfit_optimize_destroy(opt);

    /* a start exactly on the active bound c = 0.3 (moved inside by 1e-10): scipy's minimum of the run above */
    problem_reset(P_DECAY, 0.01);
    opt = make_optimizer(HESSFIT_OPT_TRF);
    lo[1] = 0.0, hi[1] = 10.0, hi[2] = 0.3;
    HF_CALL(hessfit_optimize_set_bounds(opt, lo, hi));
    x[0] = 1.0, x[1] = 0.5, x[2] = 0.3;
    res = run(opt, x);
    CHECK(fabs(res.loss - 0.043212485385000325) <= 1e-9 * 0.0432 && x[2] < 0.3 && 0.3 - x[2] <= 1e-9,
          "TRF from the bound: loss %.17g, c %.17g", res.loss, x[2]);
    printf("  decay from c = 0.3 on its bound: %lld evaluations, loss %.12g (from inside: 0.043212485385)\n",
           res.evaluations, res.loss);
    hessfit_optimize_destroy(opt);

    /* trial points 2-4 undefined: each a rejected step with a quarter of the radius */
    problem_reset(P_ROSENBROCK, 0.0);
    P.undefined_from = 2, P.undefined_to = 4;
    opt = make_optimizer(HESSFIT_OPT_TRF);
    x[0] = -1.2, x[1] = 1.0;
    HF_CALL(hessfit_optimize_run(opt, x, &res));
    CHECK(res.undefined_trials == 3 && fabs(x[0] - 1.0) <= 1e-8 && fabs(x[1] - 1.0) <= 1e-8,
          "TRF with undefined trials: %lld undefined, x (%.17g, %.17g)", res.undefined_trials, x[0], x[1]);
    printf("  Rosenbrock with trial points 2-4 undefined: %lld evaluations, 3 rejected as undefined, x = (1, 1) to %.2g\n",
           res.evaluations, fmax(fabs(x[0] - 1.0), fabs(x[1] - 1.0)));
    hessfit_optimize_destroy(opt);

    HF_CALL(hessfit_opt_algorithm_from_name("trust-region-reflective", &a));
    CHECK(a == HESSFIT_OPT_TRF && strcmp(hessfit_opt_algorithm_name(a), "TRF") == 0 && hessfit_opt_algorithm_is_least_squares(a) &&
              !hessfit_opt_algorithm_is_least_squares(HESSFIT_OPT_SLSQP),
          "TRF's names");
}

/* A decay fit cut at 5 evaluations, its checkpoint (with the trust-region radius) resumed to the same minimum. */
static void test_trf_checkpoint_resume(void)
{
    double xa[MAX_N] = {1.0, 0.5, 0.0}, xb[MAX_N] = {1.0, 0.5, 0.0}, xr[MAX_N];
    const double lo[MAX_N] = {0.0, 0.0, -1.0}, hi[MAX_N] = {10.0, 10.0, 0.3};
    const char *path = test_temp_path("trf.checkpoint");
    hessfit_opt_result ra, rb, rr;
    hessfit_opt_checkpoint cp;
    hessfit_optimize *opt;
    size_t len;
    char *text;

    problem_reset(P_DECAY, 0.01);
    opt = make_optimizer(HESSFIT_OPT_TRF);
    HF_CALL(hessfit_optimize_set_bounds(opt, lo, hi));
    ra = run(opt, xa);
    hessfit_optimize_destroy(opt);

    problem_reset(P_DECAY, 0.01);
    opt = make_optimizer(HESSFIT_OPT_TRF);
    HF_CALL(hessfit_optimize_set_bounds(opt, lo, hi));
    HF_CALL(hessfit_optimize_set_maxeval(opt, 5));
    HF_CALL(hessfit_optimize_set_checkpoint_file(opt, path, 0.0));
    rb = run(opt, xb);
    CHECK(rb.outcome == HESSFIT_OPT_MAXEVAL_REACHED, "TRF cut run: %s", hessfit_opt_outcome_string(rb.outcome));
    hessfit_optimize_destroy(opt);
    text = test_load_file(path, &len);
    CHECK(strstr(text, "algorithm TRF\n") != NULL && strstr(text, "\nlm_lambda ") != NULL, "TRF checkpoint:\n%s", text);
    free(text);
    HF_CALL(hessfit_optimize_load_checkpoint(path, &cp));
    CHECK(cp.algorithm == HESSFIT_OPT_TRF && cp.evaluations == 5 && cp.lm_lambda > 0.0 && cp.best_loss == rb.loss,
          "TRF checkpoint: %lld evaluations, radius %g", cp.evaluations, cp.lm_lambda);

    problem_reset(P_DECAY, 0.01);
    opt = make_optimizer(HESSFIT_OPT_TRF);
    HF_CALL(hessfit_optimize_set_bounds(opt, lo, hi));
    HF_CALL(hessfit_optimize_resume(opt, &cp, xr));
    HF_CALL(hessfit_optimize_run(opt, xr, &rr));
    CHECK(rr.evaluations == 5 + rr.run_evaluations && fabs(rr.loss - ra.loss) <= 1e-10 * ra.loss &&
              test_max_abs_diff(xr, xa, 3) <= 1e-6,
          "TRF resumed: loss %.17g vs %.17g, x apart by %g", rr.loss, ra.loss, test_max_abs_diff(xr, xa, 3));
    printf("  decay, c <= 0.3, cut at 5 of %lld evaluations (radius %.3g saved), resumed: %lld more, loss %.12g "
           "(uninterrupted %.12g), x apart by %.2g\n",
           ra.evaluations, cp.lm_lambda, rr.run_evaluations, rr.loss, ra.loss, test_max_abs_diff(xr, xa, 3));
    hessfit_optimize_destroy(opt);
    hessfit_opt_checkpoint_free(&cp);
}

int main(void)
{
    printf("LM on problems with known minima:\n");
    test_known_minima();
    printf("LM with active bounds:\n");
    test_active_bounds();
    test_step_reports(HESSFIT_OPT_LM);
    printf("LM limits and failures:\n");
    test_limits_and_failures();
    test_best_normal_equations();
    printf("LM checkpoints:\n");
    test_checkpoint_resume();
    printf("TRF against scipy, with active bounds and checkpoints:\n");
    test_trf_against_scipy();
    test_trf_bounds();
    test_step_reports(HESSFIT_OPT_TRF);
    test_trf_checkpoint_resume();
    printf("test_lm: OK\n");
    return 0;
}
