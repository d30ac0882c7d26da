/* Central differences of a fit objective's loss against its analytic gradient, and a fit of it
 * (objective_fd.h). */
#include "objective_fd.h"
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

objective_fd_stats objective_fd_check(hessfit_objective *obj, const double *x0, int n, double step, int stride,
                                      const char *label)
{
    static const double at[4] = {2.0, 1.0, -1.0, -2.0};
    double *g = calloc((size_t)n + 1, sizeof *g), *x = calloc((size_t)n + 1, sizeof *x), loss, l[4];
    objective_fd_stats s = {0.0, 0.0, 0.0, -1, 0};
    CHECK(g != NULL && x != NULL, "out of memory");
    HF_CALL(hessfit_objective_evaluate(obj, x0, &loss, g, NULL));
    for (int i = 0; i < n; i++)
        s.max_g = fmax(s.max_g, fabs(g[i]));
    s.floor = 1e-3 * s.max_g;
    CHECK(s.max_g > 0.0 && isfinite(s.max_g), "%s: gradient max %g", label, s.max_g);
    for (int i = 0; i < n; i += stride) {
        const double h = step * fmax(fabs(x0[i]), 1.0);
        for (int k = 0; k < 4; k++) {
            memcpy(x, x0, sizeof(double) * (size_t)n);
            x[i] = x0[i] + at[k] * h;
            HF_CALL(hessfit_objective_evaluate(obj, x, &l[k], NULL, NULL));
        }
        const double fd = (8.0 * (l[1] - l[2]) - (l[0] - l[3])) / (12.0 * h);
        const double rel = fabs(fd - g[i]) / fmax(fabs(g[i]), s.floor);
        if (rel > s.max_rel) {
            s.max_rel = rel;
            s.worst = i;
        }
        s.checked++;
    }
    HF_CALL(hessfit_objective_evaluate(obj, x0, &loss, NULL, NULL));
    printf("  %-44s loss %-14.10g max|dL/dx| %-9.4g FD vs analytic (%d of %d values): max rel. error %.3g (free %d)\n",
           label, loss, s.max_g, s.checked, n, s.max_rel, s.worst);
    free(g);
    free(x);
    return s;
}

/* The optimiser's objective: the fit objective's loss and gradient at x. */
static double objective_loss(int n, const double *x, double *grad, void *obj, hessfit_status *status)
{
    (void)n;
    double loss = 0.0;
    *status = hessfit_objective_evaluate(obj, x, &loss, grad, NULL);
    return loss;
}

hessfit_opt_result objective_fit_lbfgs(hessfit_objective *obj, hessfit_model *model, const hessfit_forcefield *ff, double *x, int maxeval,
                                  double ftol_rel, double *start_loss)
{
    const int n = hessfit_model_n_free(model);
    double *lo = calloc((size_t)n + 1, sizeof *lo), *hi = calloc((size_t)n + 1, sizeof *hi), step;
    CHECK(lo != NULL && hi != NULL, "out of memory");
    for (int i = 0; i < n; i++) {
        int p, v;
        hessfit_opt_value_kind kind;
        HF_CALL(hessfit_model_free_parameter(model, i, &p, &v, NULL, NULL));
        HF_CALL(hessfit_optimize_value_kind(&ff->params[p], v, &kind));
        HF_CALL(hessfit_optimize_q2mm_defaults(kind, &lo[i], &hi[i], &step));
        x[i] = fmin(fmax(x[i], lo[i]), hi[i]);
    }
    HF_CALL(hessfit_objective_evaluate(obj, x, start_loss, NULL, NULL));
    hessfit_optimize *opt;
    hessfit_opt_result result;
    HF_CALL(hessfit_optimize_create(HESSFIT_OPT_LBFGS, n, &opt));
    HF_CALL(hessfit_optimize_set_objective(opt, objective_loss, obj));
    HF_CALL(hessfit_optimize_set_bounds(opt, lo, hi));
    HF_CALL(hessfit_optimize_set_maxeval(opt, maxeval));
    if (ftol_rel > 0.0)
        HF_CALL(hessfit_optimize_set_ftol_rel(opt, ftol_rel));
    HF_CALL(hessfit_optimize_run(opt, x, &result));
    hessfit_optimize_destroy(opt);
    free(lo);
    free(hi);
    return result;
}

void objective_expect_check_error(const char *hessfit, const char *input, const char *name, int line,
                                  const char *part)
{
    char args[4096], at[4200];
    snprintf(args, sizeof args, "check '%s'", input);
    test_run_result r = test_run_program(hessfit, args);
    test_expect_exit(&r, 1, part, name);
    snprintf(at, sizeof at, "%s:%d: ", input, line);
    CHECK(line <= 0 || strstr(r.err, at) != NULL, "%s: the message does not name %s: %s", name, at, r.err);
    CHECK(r.out_len == 0, "%s: printed before failing: %s", name, r.out);
    free(r.out);
}
