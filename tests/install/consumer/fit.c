/*
 * A program built against an installed hessfit's static fitting libraries (hessfit::model and
 * hessfit::fitting from find_package(hessfit)): it links their public dependencies (LAPACKE,
 * OpenBLAS, NLopt, zlib, OpenMM) through the imported targets alone.
 *
 * Asserts:
 *   - hessfit_vib_analyse (LAPACKE) on the 2x3 Hessian of a harmonic bond at its minimum gives one
 *     stretch at F sqrt(2k / mu) cm^-1 (mu the reduced mass, F = hessfit_frequency_factor_kj_mol_nm2_amu())
 *     and five zero modes, to 1e-9 relative (zeros: round-off, below 1e-3 cm^-1);
 *   - NLopt's L-BFGS through hessfit_optimize finds the minimum (1, -2) of (x - 1)^2 + 10 (y + 2)^2 to 1e-6.
 */
#include "hessfit_optimize.h"
#include "hessfit_units.h"
#include "hessfit_vib.h"
#include <math.h>
#include <stdio.h>

static int failures = 0;

static void expect(const char *what, double got, double want, double tolerance) {
    int ok = fabs(got - want) <= tolerance;
    printf("%-10s %.12g (expected %.12g)%s\n", what, got, want, ok ? "" : "  FAILED");
    failures += !ok;
}

static double quadratic(int n, const double *x, double *grad, void *data, hessfit_status *status) {
    (void) n;
    (void) data;
    *status = HESSFIT_SUCCESS;
    if (grad) {
        grad[0] = 2.0 * (x[0] - 1.0);
        grad[1] = 20.0 * (x[1] + 2.0);
    }
    return (x[0] - 1.0) * (x[0] - 1.0) + 10.0 * (x[1] + 2.0) * (x[1] + 2.0);
}

int main(void) {
    /* E = k (r - r0)^2 along x at r = r0: the only non-zero block is the x-x stretch, 2k. */
    const double k = 1000.0, masses[2] = {12.0, 16.0};
    double hessian[36] = {0.0}, frequencies[6];
    hessian[0] = hessian[3 * 6 + 3] = 2.0 * k;
    hessian[3] = hessian[3 * 6] = -2.0 * k;
    hessfit_status st = hessfit_vib_analyse(hessian, masses, NULL, 2, hessfit_frequency_factor_kj_mol_nm2_amu(), 0, frequencies, NULL,
                                  NULL);
    if (st != HESSFIT_SUCCESS) {
        fprintf(stderr, "hessfit_vib_analyse: %s\n", hessfit_status_string(st));
        return 1;
    }
    double mu = masses[0] * masses[1] / (masses[0] + masses[1]);
    double stretch = hessfit_frequency_factor_kj_mol_nm2_amu() * sqrt(2.0 * k / mu);
    expect("stretch", frequencies[5], stretch, 1e-9 * stretch);
    for (int i = 0; i < 5; i++)
        expect("zero mode", frequencies[i], 0.0, 1e-3);

    hessfit_optimize *opt;
    double x[2] = {0.0, 0.0}, lo[2] = {-10.0, -10.0}, hi[2] = {10.0, 10.0};
    hessfit_opt_result result;
    st = hessfit_optimize_create(HESSFIT_OPT_LBFGS, 2, &opt);
    if (st == HESSFIT_SUCCESS)
        st = hessfit_optimize_set_objective(opt, quadratic, NULL);
    if (st == HESSFIT_SUCCESS)
        st = hessfit_optimize_set_bounds(opt, lo, hi);
    if (st == HESSFIT_SUCCESS)
        st = hessfit_optimize_run(opt, x, &result);
    if (st != HESSFIT_SUCCESS) {
        fprintf(stderr, "hessfit_optimize: %s\n", hessfit_status_string(st));
        return 1;
    }
    hessfit_optimize_destroy(opt);
    expect("x", x[0], 1.0, 1e-6);
    expect("y", x[1], -2.0, 1e-6);
    printf("%s\n", failures ? "fit consumer FAILED" : "fit consumer passed");
    return failures ? 1 : 0;
}
