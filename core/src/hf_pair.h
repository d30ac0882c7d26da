#ifndef HESSFIT_HF_PAIR_H_
#define HESSFIT_HF_PAIR_H_
/*
 * The radial function of a nonbonded pair, shared by the term layer (with parameter derivatives)
 * and the fast plain-pair loop of the assembly (without): f(r), f'(r), f''(r) of
 *     E = sc_lj 4 eps sig6 (sig6 - 1) + sc_coul ONE_4PI_EPS0 qq / r,   sig2 = (sigma/r)^2, sig6 = sig2^3
 * (LJ evaluated as OpenMM's Reference platform does), and the combining rules.
 */
#include "hf_core.h"

#include <math.h>

/* u[0..2]: (sig6 - 1) sig6 and its first two r-derivatives, per unit of 4 eps. */
static inline void hf_lj_shape(double sig6, double inv_r, double u[3])
{
    u[0] = (sig6 - 1.0) * sig6;
    u[1] = -(12.0 * sig6 - 6.0) * sig6 * inv_r;
    u[2] = (156.0 * sig6 - 42.0) * sig6 * inv_r * inv_r;
}

/* f, f', f'' at distance r (inv_r = 1/r). */
static inline void hf_pair_radial(double inv_r, double qq, double sigma, double eps, double sc_coul, double sc_lj,
                                  double f[3])
{
    const double sr = sigma * inv_r, sig2 = sr * sr, sig6 = sig2 * sig2 * sig2;
    double u[3];
    hf_lj_shape(sig6, inv_r, u);
    const double e4 = 4.0 * eps * sc_lj, ccq = HF_ONE_4PI_EPS0 * sc_coul * qq;
    f[0] = e4 * u[0] + ccq * inv_r;
    f[1] = e4 * u[1] - ccq * inv_r * inv_r;
    f[2] = e4 * u[2] + 2.0 * ccq * inv_r * inv_r * inv_r;
}

/* Combined sigma of two particles: sqrt(si sj) (geometric) or (si + sj)/2 (Lorentz-Berthelot). */
static inline double hf_combine_sigma(int combining, double si, double sj)
{
    return combining == HF_COMBINE_LORENTZ_BERTHELOT ? 0.5 * (si + sj) : sqrt(si * sj);
}

#endif
