/*
 * The scalar part of every term: f(q), f'(q), f''(q) and their derivatives with respect to the
 * term's parameter slots (see hf_core.h for the energy of each kind). A slot HF_NO_SLOT stands for
 * the value 0 and gets derivative entries 0.
 */
#include "hf_core.h"
#include "hf_mm3_pair.h"
#include "hf_pair.h"

#include <math.h>

static inline double slot_value(const hf_term *t, const double *table, int s)
{
    return t->slots[s] == HF_NO_SLOT ? 0.0 : table[t->slots[s]];
}

/* Zero the derivative entries of the slots that are HF_NO_SLOT or beyond the kind's n_used slots
 * (explicit stores: cheaper than a memset of the whole result for the ~10^5 pair terms). */
static void clear_unused(const hf_term *t, int n_used, hf_term_value *out)
{
    for (int s = 0; s < HF_MAX_TERM_SLOTS; s++)
        if (s >= n_used || t->slots[s] == HF_NO_SLOT) {
            out->de_dp[s] = 0.0;
            out->dde_dp[s] = 0.0;
            out->d2de_dp[s] = 0.0;
        }
}

/* E = k (q - q0)^2: bonds, Urey-Bradley, angles (slots k, q0). */
static void harmonic(double k, double d, hf_term_value *out)
{
    out->e = k * d * d;
    out->de = 2.0 * k * d;
    out->d2e = 2.0 * k;
    out->de_dp[0] = d * d;
    out->dde_dp[0] = 2.0 * d;
    out->d2de_dp[0] = 2.0;
    out->de_dp[1] = -2.0 * k * d;
    out->dde_dp[1] = -2.0 * k;
    out->d2de_dp[1] = 0.0;
}

/*
 * E = k g(d), g(d) = d^2 (1 + c[0] d + c[1] d^2 + c[2] d^3 + c[3] d^4), d = q - q0: the MM3*
 * stretch and bend (slots k, q0). With g', g'', g''' its derivatives in d and d/dq0 = -d/dd:
 *     f = k g, f' = k g', f'' = k g'';  d/dk: g, g', g'';  d/dq0: -k g', -k g'', -k g'''.
 */
static void anharmonic(double k, double d, const double c[4], hf_term_value *out)
{
    const double b[7] = {0.0, 0.0, 1.0, c[0], c[1], c[2], c[3]}; /* g = sum_m b_m d^m */
    double g = 0.0, g1 = 0.0, g2 = 0.0, g3 = 0.0;
    for (int m = 6; m >= 0; m--) { /* Horner for g, g', g''/2 and g'''/6 */
        g3 = g3 * d + g2;
        g2 = g2 * d + g1;
        g1 = g1 * d + g;
        g = g * d + b[m];
    }
    g2 *= 2.0;
    g3 *= 6.0;
    out->e = k * g;
    out->de = k * g1;
    out->d2e = k * g2;
    out->de_dp[0] = g;
    out->dde_dp[0] = g1;
    out->d2de_dp[0] = g2;
    out->de_dp[1] = -k * g1;
    out->dde_dp[1] = -k * g2;
    out->d2de_dp[1] = -k * g3;
}

/* f(q) = g(s q) (a distance scale s: r_eff = s r): f' = s g', f'' = s^2 g'' (the same for the slot
 * derivatives of f' and f''), given g's values in out. */
static void scale_coordinate(double s, hf_term_value *out)
{
    out->de *= s;
    out->d2e *= s * s;
    for (int p = 0; p < 2; p++) {
        out->dde_dp[p] *= s;
        out->d2de_dp[p] *= s * s;
    }
}

static const double mm3_bond_coefficients[4] = {HF_MM3_BOND_CUBIC, HF_MM3_BOND_QUARTIC, 0.0, 0.0};
static const double mm3_angle_coefficients[4] = {HF_MM3_ANGLE_CUBIC, HF_MM3_ANGLE_QUARTIC, HF_MM3_ANGLE_QUINTIC,
                                                 HF_MM3_ANGLE_SEXTIC};

/* E = scale k (1 + cos(n q - phase)) */
static void periodic(const hf_term *t, const double *table, double q, hf_term_value *out)
{
    const double k = slot_value(t, table, 0);
    const double phase = (t->slots[1] == HF_NO_SLOT) ? t->phase : table[t->slots[1]];
    const double n = (double)t->periodicity, sc = t->scale;
    const double arg = n * q - phase, cs = cos(arg), sn = sin(arg);
    out->e = sc * k * (1.0 + cs);
    out->de = -sc * k * n * sn;
    out->d2e = -sc * k * n * n * cs;
    out->de_dp[0] = sc * (1.0 + cs);
    out->dde_dp[0] = -sc * n * sn;
    out->d2de_dp[0] = -sc * n * n * cs;
    /* d/dphase: d(arg)/dphase = -1 */
    out->de_dp[1] = sc * k * sn;
    out->dde_dp[1] = sc * k * n * cs;
    out->d2de_dp[1] = -sc * k * n * n * sn;
}

/* E = sum_m C_m y^m with y = cos(q - pi) = -cos q: dy/dq = sin q, d2y/dq2 = cos q, so
 * f' = P'(y) sin q, f'' = P''(y) sin^2 q + P'(y) cos q. */
static void ryckaert_bellemans(const hf_term *t, const double *table, double q, hf_term_value *out)
{
    const double cq = cos(q), sq = sin(q), y = -cq;
    double pw[6]; /* y^m */
    pw[0] = 1.0;
    for (int m = 1; m < 6; m++)
        pw[m] = pw[m - 1] * y;
    double e = 0.0, p1 = 0.0, p2 = 0.0; /* P(y), P'(y), P''(y) */
    for (int m = 0; m < 6; m++) {
        const double d1 = (m >= 1) ? m * pw[m - 1] : 0.0;           /* d(y^m)/dy */
        const double d2 = (m >= 2) ? m * (m - 1) * pw[m - 2] : 0.0; /* d2(y^m)/dy2 */
        const double cm = slot_value(t, table, m);
        e += cm * pw[m];
        p1 += cm * d1;
        p2 += cm * d2;
        out->de_dp[m] = pw[m];
        out->dde_dp[m] = d1 * sq;
        out->d2de_dp[m] = d2 * sq * sq + d1 * cq;
    }
    out->e = e;
    out->de = p1 * sq;
    out->d2e = p2 * sq * sq + p1 * cq;
}

/* E = k wrap(q - phi0)^2, wrap to [-pi, pi] (remainder() is exact). d wrap/d phi0 = -1. */
static void harmonic_dihedral(double k, double q, double phi0, hf_term_value *out)
{
    harmonic(k, remainder(q - phi0, HF_TWO_PI), out);
}

/*
 * Lennard-Jones + Coulomb of one pair at distance r, with the partial derivatives of f, f', f''
 * with respect to the charge product qq, sigma and epsilon (each array: f, f', f'').
 * LJ as OpenMM's Reference platform evaluates it: sig2 = (sigma/r)^2, sig6 = sig2^3,
 * E = 4 eps sig6 (sig6 - 1). With s = sigma/r:
 *     f'  = -4 eps sig6 (12 sig6 - 6) / r,        f'' = 4 eps sig6 (156 sig6 - 42) / r^2,
 *     dE/dsigma   = 4 eps s^5 (12 sig6 - 6) / r,
 *     df'/dsigma  = 4 eps s^5 (36 - 144 sig6) / r^2,
 *     df''/dsigma = 4 eps s^5 (1872 sig6 - 252) / r^3   (no division by sigma).
 */
static inline void lj_coulomb(double r, double qq, double sigma, double eps, double sc_coul, double sc_lj,
                              double f[3], double d_qq[3], double d_sig[3], double d_eps[3])
{
    const double inv_r = 1.0 / r, inv_r2 = inv_r * inv_r, inv_r3 = inv_r2 * inv_r;
    const double sr = sigma * inv_r;
    const double sig2 = sr * sr, sig6 = sig2 * sig2 * sig2, sr5 = sig2 * sig2 * sr;
    const double e4 = 4.0 * eps * sc_lj;
    const double cc = HF_ONE_4PI_EPS0 * sc_coul;
    double u[3]; /* per unit of 4 eps */
    hf_lj_shape(sig6, inv_r, u);
    hf_pair_radial(inv_r, qq, sigma, eps, sc_coul, sc_lj, f);
    d_qq[0] = cc * inv_r;
    d_qq[1] = -cc * inv_r2;
    d_qq[2] = 2.0 * cc * inv_r3;
    d_sig[0] = e4 * sr5 * (12.0 * sig6 - 6.0) * inv_r;
    d_sig[1] = e4 * sr5 * (36.0 - 144.0 * sig6) * inv_r2;
    d_sig[2] = e4 * sr5 * (1872.0 * sig6 - 252.0) * inv_r3;
    for (int i = 0; i < 3; i++)
        d_eps[i] = 4.0 * sc_lj * u[i];
}

/*
 * d sqrt(x y) / dx = y / (2 sqrt(x y)), given half_inv_root = 1 / (2 sqrt(x y)) (0 when the root is
 * 0). At sqrt(x y) == 0: 0 when y == 0 (sqrt(x y) is then identically 0 along x), and +INFINITY
 * when x == 0 but y != 0 (the one-sided derivative of sqrt(x y) for x -> 0+ diverges).
 */
static inline double dsqrt_prod(double x, double y, double root, double half_inv_root)
{
    if (root > 0.0)
        return y * half_inv_root;
    return (x == 0.0 && y != 0.0) ? INFINITY : 0.0;
}

/* outer * inner with 0 * (+-inf) taken as 0: when dE/dsigma or dE/deps vanishes (e.g. sigma = 0,
 * where E does not depend on the combined parameter at all), an infinite combining-rule
 * derivative must not turn it into NaN. */
static inline double chain(double outer, double inner) { return outer == 0.0 ? 0.0 : outer * inner; }

static void pair(const hf_term *t, const double *table, double r, hf_term_value *out)
{
    double f[3], dq[3], ds[3], de[3];
    lj_coulomb(r, slot_value(t, table, 0), slot_value(t, table, 1), slot_value(t, table, 2), 1.0, 1.0,
               f, dq, ds, de);
    out->e = f[0];
    out->de = f[1];
    out->d2e = f[2];
    const double *d[3] = {dq, ds, de};
    for (int s = 0; s < 3; s++) {
        out->de_dp[s] = d[s][0];
        out->dde_dp[s] = d[s][1];
        out->d2de_dp[s] = d[s][2];
    }
}

/*
 * MacroModel's MM3* pair (slots R, eps, qq): E = eps S B + C qq / r with the Buckingham B and the
 * switch S (hf_mm3_pair.h), so f^(m) = eps (S B)^(m) + qq C (1/r)^(m), m = 0, 1, 2, and the same
 * with B's R-derivatives for d/dR. With S = 0 the vdW part and its R/eps derivatives are exactly 0
 * (B is not evaluated); R must be > 0 otherwise.
 */
void hf_mm3_pair_scalar(const hf_term *t, const double *table, double r, const double sw[3], hf_term_value *out)
{
    const double R = slot_value(t, table, 0), eps = slot_value(t, table, 1), qq = slot_value(t, table, 2);
    const double inv_r = 1.0 / r, cc = HF_ONE_4PI_EPS0;
    const double coul[3] = {cc * inv_r, -cc * inv_r * inv_r, 2.0 * cc * inv_r * inv_r * inv_r};
    double vdw[3] = {0.0, 0.0, 0.0}, d_r[3] = {0.0, 0.0, 0.0}, d_eps[3] = {0.0, 0.0, 0.0};
    if (sw[0] != 0.0) {
        double bb[3], bR[3];
        hf_mm3_buckingham(r, R, bb, bR);
        /* (S B)^(m), m = 0, 1, 2, and the same with B's R-derivatives */
        d_eps[0] = sw[0] * bb[0];
        d_eps[1] = sw[1] * bb[0] + sw[0] * bb[1];
        d_eps[2] = sw[2] * bb[0] + 2.0 * sw[1] * bb[1] + sw[0] * bb[2];
        d_r[0] = eps * sw[0] * bR[0];
        d_r[1] = eps * (sw[1] * bR[0] + sw[0] * bR[1]);
        d_r[2] = eps * (sw[2] * bR[0] + 2.0 * sw[1] * bR[1] + sw[0] * bR[2]);
        for (int i = 0; i < 3; i++)
            vdw[i] = eps * d_eps[i];
    }
    out->q = r;
    out->e = vdw[0] + qq * coul[0];
    out->de = vdw[1] + qq * coul[1];
    out->d2e = vdw[2] + qq * coul[2];
    const double *d[3] = {d_r, d_eps, coul};
    for (int s = 0; s < 3; s++) {
        out->de_dp[s] = d[s][0];
        out->dde_dp[s] = d[s][1];
        out->d2de_dp[s] = d[s][2];
    }
    clear_unused(t, 3, out);
}

/*
 * The 10-12 hydrogen bond (slots C, D): E = C r^-12 - D r^-10, linear in C and D, so
 *     f' = -12 C r^-13 + 10 D r^-11,  f'' = 156 C r^-14 - 110 D r^-12,
 *     d/dC: r^-12, -12 r^-13, 156 r^-14;  d/dD: -r^-10, 10 r^-11, -110 r^-12.
 */
static void hbond_10_12(double c, double d, double r, hf_term_value *out)
{
    const double inv_r = 1.0 / r, inv_r2 = inv_r * inv_r, inv_r10 = inv_r2 * inv_r2 * inv_r2 * inv_r2 * inv_r2;
    const double inv_r12 = inv_r10 * inv_r2;
    out->de_dp[0] = inv_r12;
    out->dde_dp[0] = -12.0 * inv_r12 * inv_r;
    out->d2de_dp[0] = 156.0 * inv_r12 * inv_r2;
    out->de_dp[1] = -inv_r10;
    out->dde_dp[1] = 10.0 * inv_r10 * inv_r;
    out->d2de_dp[1] = -110.0 * inv_r10 * inv_r2;
    out->e = c * out->de_dp[0] + d * out->de_dp[1];
    out->de = c * out->dde_dp[0] + d * out->dde_dp[1];
    out->d2e = c * out->d2de_dp[0] + d * out->d2de_dp[1];
}

/* Slots q_i, q_j, sigma_i, sigma_j, eps_i, eps_j; qq = q_i q_j, eps = sqrt(eps_i eps_j),
 * sigma = sqrt(sigma_i sigma_j) (geometric) or (sigma_i + sigma_j)/2 (Lorentz-Berthelot). */
static void pair_combined(const hf_model *model, const hf_term *t, const double *table, double r,
                          hf_term_value *out)
{
    const double qi = slot_value(t, table, 0), qj = slot_value(t, table, 1);
    const double si = slot_value(t, table, 2), sj = slot_value(t, table, 3);
    const double ei = slot_value(t, table, 4), ej = slot_value(t, table, 5);
    const int geometric = model->combining != HF_COMBINE_LORENTZ_BERTHELOT;
    const double sigma = hf_combine_sigma(model->combining, si, sj);
    const double eps = sqrt(ei * ej);
    /* d(combined)/d(slot s) for s = 0..5 */
    const double hs = geometric && sigma > 0.0 ? 0.5 / sigma : 0.0, he = eps > 0.0 ? 0.5 / eps : 0.0;
    const double dsi = geometric ? dsqrt_prod(si, sj, sigma, hs) : 0.5;
    const double dsj = geometric ? dsqrt_prod(sj, si, sigma, hs) : 0.5;
    const double inner[HF_MAX_TERM_SLOTS] = {qj, qi, dsi, dsj, dsqrt_prod(ei, ej, eps, he), dsqrt_prod(ej, ei, eps, he)};
    double f[3], dq[3], ds[3], de[3];
    lj_coulomb(r, qi * qj, sigma, eps, t->scale_coulomb, t->scale_lj, f, dq, ds, de);
    out->e = f[0];
    out->de = f[1];
    out->d2e = f[2];
    const double *outer[HF_MAX_TERM_SLOTS] = {dq, dq, ds, ds, de, de};
    if (isfinite(inner[2]) && isfinite(inner[3]) && isfinite(inner[4]) && isfinite(inner[5])) {
        for (int s = 0; s < HF_MAX_TERM_SLOTS; s++) { /* the usual case, branch-free */
            out->de_dp[s] = outer[s][0] * inner[s];
            out->dde_dp[s] = outer[s][1] * inner[s];
            out->d2de_dp[s] = outer[s][2] * inner[s];
        }
    } else {
        for (int s = 0; s < HF_MAX_TERM_SLOTS; s++) {
            out->de_dp[s] = chain(outer[s][0], inner[s]);
            out->dde_dp[s] = chain(outer[s][1], inner[s]);
            out->d2de_dp[s] = chain(outer[s][2], inner[s]);
        }
    }
}

void hf_term_scalar(const hf_model *model, const hf_term *term, const double *table, double q,
                    hf_term_value *out)
{
    int n_used = 0; /* slots the kind defines; the remaining entries are zeroed below */
    out->q = q;
    out->e = out->de = out->d2e = 0.0;
    switch (term->kind) {
    case HF_TERM_BOND:
    case HF_TERM_ANGLE:
        harmonic(slot_value(term, table, 0), q - slot_value(term, table, 1), out);
        n_used = 2;
        break;
    case HF_TERM_MM3_BOND:
        anharmonic(slot_value(term, table, 0), term->r_scale[0] * q - slot_value(term, table, 1), mm3_bond_coefficients,
                   out);
        scale_coordinate(term->r_scale[0], out);
        n_used = 2;
        break;
    case HF_TERM_MM3_ANGLE:
        anharmonic(slot_value(term, table, 0), q - slot_value(term, table, 1), mm3_angle_coefficients, out);
        n_used = 2;
        break;
    case HF_TERM_PERIODIC:
        periodic(term, table, q, out);
        n_used = 2;
        break;
    case HF_TERM_RB:
        ryckaert_bellemans(term, table, q, out);
        n_used = 6;
        break;
    case HF_TERM_HARMONIC_DIHEDRAL:
        harmonic_dihedral(slot_value(term, table, 0), q, slot_value(term, table, 1), out);
        n_used = 2;
        break;
    case HF_TERM_PAIR:
        pair(term, table, q, out);
        n_used = 3;
        break;
    case HF_TERM_PAIR_COMBINED:
        pair_combined(model, term, table, q, out);
        n_used = 6;
        break;
    case HF_TERM_HBOND_10_12:
        hbond_10_12(slot_value(term, table, 0), slot_value(term, table, 1), q, out);
        n_used = 2;
        break;
    case HF_TERM_MM3_PAIR: {
        double sw[3];
        hf_mm3_switch(q, sw);
        hf_mm3_pair_scalar(term, table, q, sw, out);
        return;
    }
    default:
        break; /* unknown kind: contributes nothing */
    }
    clear_unused(term, n_used, out);
}
