#ifndef HESSFIT_TEST_OBJECTIVE_FD_H_
#define HESSFIT_TEST_OBJECTIVE_FD_H_
/* Central differences of a fit objective's loss in free-parameter space against its analytic
 * gradient, and a bounded L-BFGS fit of it, shared by the energy and geometry objective tests
 * (linked into both). */
#include "hessfit_forcefield.h"
#include "hessfit_model.h"
#include "hessfit_objective.h"
#include "hessfit_optimize.h"

typedef struct objective_fd_stats {
    double max_rel; /* max over the checked i of |fd_i - g_i| / max(|g_i|, floor) */
    double floor;   /* 1e-3 max_i |g_i| */
    double max_g;   /* max_i |g_i| */
    int worst;      /* the i of max_rel */
    int checked;    /* components checked */
} objective_fd_stats;

/*
 * The 4-point stencil (8 (L(x+h) - L(x-h)) - (L(x+2h) - L(x-2h))) / 12h, error O(h^4), with
 * h_i = step max(|x0_i|, 1), for every stride-th free value (stride >= 1) against the analytic
 * gradient at x0; prints one line with label. The free values are at x0 afterwards.
 */
objective_fd_stats objective_fd_check(hessfit_objective *obj, const double *x0, int n, double step, int stride,
                                      const char *label);

/*
 * L-BFGS on obj over the model's free values from x (first moved into q2mm's box of each value, as
 * hessfit fit bounds them; ff is the model's force field; *start_loss: the loss there) for at most
 * maxeval evaluations, with ftol_rel as the stopping tolerance when > 0 (else the optimiser's
 * default); x gets the result.
 */
hessfit_opt_result objective_fit_lbfgs(hessfit_objective *obj, hessfit_model *model, const hessfit_forcefield *ff, double *x, int maxeval,
                                  double ftol_rel, double *start_loss);

/*
 * `hessfit check INPUT` (the program at hessfit) fails: exit 1 with part in its message, which
 * names input's line `line` (from 1) when line > 0, and nothing printed on stdout before. name
 * labels the case.
 */
void objective_expect_check_error(const char *hessfit, const char *input, const char *name, int line,
                                  const char *part);

#endif
