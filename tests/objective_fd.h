#ifndef HESSFIT_TEST_OBJECTIVE_FD_H_
#define HESSFIT_TEST_OBJECTIVE_FD_H_
/* Central differences of a fit objective's loss in free-parameter space against its analytic
 * gradient, shared by the energy and geometry objective tests (linked into both). */
#include "hessfit_objective.h"

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
objective_fd_stats objective_fd_check(hf_objective *obj, const double *x0, int n, double step, int stride,
                                      const char *label);

#endif
