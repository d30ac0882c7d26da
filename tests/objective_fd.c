/* Central differences of a fit objective's loss against its analytic gradient (objective_fd.h). */
#include "objective_fd.h"
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

objective_fd_stats objective_fd_check(hf_objective *obj, const double *x0, int n, double step, int stride,
                                      const char *label)
{
    static const double at[4] = {2.0, 1.0, -1.0, -2.0};
    double *g = calloc((size_t)n + 1, sizeof *g), *x = calloc((size_t)n + 1, sizeof *x), loss, l[4];
    objective_fd_stats s = {0.0, 0.0, 0.0, -1, 0};
    CHECK(g != NULL && x != NULL, "out of memory");
    HF_CALL(hf_objective_evaluate(obj, x0, &loss, g, NULL));
    for (int i = 0; i < n; i++)
        s.max_g = fmax(s.max_g, fabs(g[i]));
    s.floor = 1e-3 * s.max_g;
    CHECK(s.max_g > 0.0 && isfinite(s.max_g), "%s: gradient max %g", label, s.max_g);
    for (int i = 0; i < n; i += stride) {
        const double h = step * fmax(fabs(x0[i]), 1.0);
        for (int k = 0; k < 4; k++) {
            memcpy(x, x0, sizeof(double) * (size_t)n);
            x[i] = x0[i] + at[k] * h;
            HF_CALL(hf_objective_evaluate(obj, x, &l[k], NULL, NULL));
        }
        const double fd = (8.0 * (l[1] - l[2]) - (l[0] - l[3])) / (12.0 * h);
        const double rel = fabs(fd - g[i]) / fmax(fabs(g[i]), s.floor);
        if (rel > s.max_rel) {
            s.max_rel = rel;
            s.worst = i;
        }
        s.checked++;
    }
    HF_CALL(hf_objective_evaluate(obj, x0, &loss, NULL, NULL));
    printf("  %-44s loss %-14.10g max|dL/dx| %-9.4g FD vs analytic (%d of %d values): max rel. error %.3g (free %d)\n",
           label, loss, s.max_g, s.checked, n, s.max_rel, s.worst);
    free(g);
    free(x);
    return s;
}
