/*
 * Internal coordinates with analytic gradients and Cartesian Hessians: a distance, an angle at
 * the middle atom, and an IUPAC dihedral.
 *
 * Each coordinate is written as a function of a few difference vectors v_k = x[plus_k] - x[minus_k].
 * Its gradient gv and Hessian hv with respect to those vectors are computed first, then
 * map_to_atoms() carries them to the atoms through the +-1 incidence dv_k/dx_a = (d(a,plus_k) -
 * d(a,minus_k)) I. Every atom row of the result sums to zero (translation invariance) by
 * construction.
 */
#include "hf_core.h"

#include <math.h>

/* Asks GCC to unroll the short loops of map_to_atoms fully (their bounds are constants once it is
 * inlined); this halves the cost of the ~10^5 pair Hessians of a large molecule at -O2. */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 8
#define HF_UNROLL _Pragma("GCC unroll 4")
#else
#define HF_UNROLL
#endif

/* ---- small 3-vector helpers --------------------------------------------------------------- */
static inline double dot3(const double *a, const double *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static inline void cross3(const double *a, const double *b, double *c)
{
    c[0] = a[1] * b[2] - a[2] * b[1];
    c[1] = a[2] * b[0] - a[0] * b[2];
    c[2] = a[0] * b[1] - a[1] * b[0];
}

static inline void sub3(const double *a, const double *b, double *c)
{
    c[0] = a[0] - b[0];
    c[1] = a[1] - b[1];
    c[2] = a[2] - b[2];
}

/* [v]x, the matrix with [v]x w = v x w (row-major 3x3). */
static inline void skew3(const double *v, double *m)
{
    m[0] = 0.0;   m[1] = -v[2]; m[2] = v[1];
    m[3] = v[2];  m[4] = 0.0;   m[5] = -v[0];
    m[6] = -v[1]; m[7] = v[0];  m[8] = 0.0;
}

/* c = a b (3x3 row-major). */
static inline void matmul3(const double *a, const double *b, double *c)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            c[3 * i + j] = a[3 * i] * b[j] + a[3 * i + 1] * b[3 + j] + a[3 * i + 2] * b[6 + j];
}

/* Block (k, l) of a (3 n_vec)^2 row-major matrix hv: hv[(3k+i) ld + 3l + j] = s * m[3i+j]. */
static inline void put_block(double *hv, int ld, int k, int l, double s, const double *m)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            hv[(3 * k + i) * ld + 3 * l + j] = s * m[3 * i + j];
}

/* Block (l, k) = transpose of block (k, l). */
static inline void mirror_block(double *hv, int ld, int k, int l)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            hv[(3 * l + j) * ld + 3 * k + i] = hv[(3 * k + i) * ld + 3 * l + j];
}

/*
 * The generic chain rule: derivatives with respect to n_vec difference vectors
 * v_k = x[plus_k] - x[minus_k] (gv: 3 n_vec, hv: (3 n_vec)^2, symmetric) become derivatives with
 * respect to the n_atoms atoms, since dv_k/dx_a = C_ka I with the incidence matrix C (n_vec x
 * n_atoms, row-major) C_ka = +1 (a = plus_k), -1 (a = minus_k), 0 otherwise:
 *     grad_a = sum_k C_ka gv_k,   hess_ab = sum_kl C_ka C_lb hv_kl   (3x3 blocks).
 * grad or hess may be NULL. Every entry is written (no zero fill needed). Only the blocks b >= a
 * are summed; (b, a) is written as the exact transpose of (a, b) and each diagonal block from its
 * upper triangle, so hess is exactly symmetric.
 */
static inline void map_to_atoms(int n_vec, int n_atoms, const double *C, const double *gv,
                                const double *hv, double *grad, double *hess)
{
    const int dim = 3 * n_atoms, vdim = 3 * n_vec;
    if (grad) {
        HF_UNROLL
        for (int a = 0; a < n_atoms; a++) {
            double v[3] = {0.0, 0.0, 0.0};
            HF_UNROLL
            for (int k = 0; k < n_vec; k++) {
                const double c = C[k * n_atoms + a];
                if (c == 0.0)
                    continue;
                HF_UNROLL
                for (int i = 0; i < 3; i++)
                    v[i] += c * gv[3 * k + i];
            }
            HF_UNROLL
            for (int i = 0; i < 3; i++)
                grad[3 * a + i] = v[i];
        }
    }
    if (hess) {
        HF_UNROLL
        for (int a = 0; a < n_atoms; a++) {
            HF_UNROLL
            for (int b = a; b < n_atoms; b++) {
                double blk[9] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
                HF_UNROLL
                for (int k = 0; k < n_vec; k++) {
                    const double ca = C[k * n_atoms + a];
                    if (ca == 0.0)
                        continue;
                    HF_UNROLL
                    for (int l = 0; l < n_vec; l++) {
                        const double s = ca * C[l * n_atoms + b];
                        if (s == 0.0)
                            continue;
                        const double *src = hv + 3 * k * vdim + 3 * l;
                        HF_UNROLL
                        for (int i = 0; i < 3; i++) {
                            HF_UNROLL
                            for (int j = 0; j < 3; j++)
                                blk[3 * i + j] += s * src[i * vdim + j];
                        }
                    }
                }
                if (a == b) {
                    blk[3] = blk[1];
                    blk[6] = blk[2];
                    blk[7] = blk[5];
                }
                HF_UNROLL
                for (int i = 0; i < 3; i++) {
                    HF_UNROLL
                    for (int j = 0; j < 3; j++) {
                        hess[(3 * a + i) * dim + 3 * b + j] = blk[3 * i + j];
                        hess[(3 * b + j) * dim + 3 * a + i] = blk[3 * i + j];
                    }
                }
            }
        }
    }
}

/* ---- distance r = |d|, d = x0 - x1 ------------------------------------------------------ */
static int distance(const double *const x[4], double *q, double *grad, double *hess)
{
    static const double C[1 * 2] = {1.0, -1.0}; /* d = x0 - x1 */
    double d[3], gv[3], hv[9];
    sub3(x[0], x[1], d);
    const double r = sqrt(dot3(d, d));
    if (!(r > 0.0) || !isfinite(r))
        return -1;
    *q = r;
    /* dr/dd = u,  d2r/dd2 = (I - u u^T) / r */
    const double inv_r = 1.0 / r;
    for (int i = 0; i < 3; i++)
        gv[i] = d[i] * inv_r;
    if (hess)
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                hv[3 * i + j] = ((i == j ? 1.0 : 0.0) - gv[i] * gv[j]) * inv_r;
    map_to_atoms(1, 2, C, gv, hess ? hv : NULL, grad, hess);
    return 0;
}

/*
 * ---- the exactly linear angle (s = |u x v| <= HF_MIN_SINE, c < 0) ---------------------------
 * theta is not differentiable there, but a bend E = f(theta) with f'(pi) = 0 is smooth in
 * Cartesians (C^inf for a harmonic f, C^2 for MM3's sextic, whose odd powers give |t|^3 terms,
 * t = pi - theta). Through c = cos theta, E = g(c) with g'(c) = -f'(theta)/sin theta -> f''(pi)
 * as theta -> pi, so grad E = g'(c) grad c and H = g'(c) hess c + g''(c) grad c grad c^T become,
 * with grad c = (v - c u)/|a|, (u - c v)/|b| = 0 there:
 *     grad E = 0,   H = f''(pi) M,   M = hess c = [[P/|a|^2, P/(|a||b|)], [P/(|a||b|), P/|b|^2]]
 * over (a, b), P = I - u u^T the projector perpendicular to the axis (d2c/dada = [-(v u^T + u v^T)
 * + 3c u u^T - c I]/|a|^2 and d2c/dadb = [I - v v^T - u u^T + c u v^T]/(|a||b|) at v = -u, c = -1).
 * Check: moving both end atoms by delta perpendicular to the axis bends by t = delta (1/|a| + 1/|b|)
 * and (delta e)^T M (delta e) summed over the blocks is t^2, so E = f''/2 t^2.
 * So the coordinate reports q = pi, dq/dx = 0 and, in place of d2q/dx2, M: the composers' form
 * f'' g g^T + f' Hq gives the limit once f' is replaced by f''(pi) (hf_evaluate_term does that).
 */
static int linear_angle(const double *a, const double *b, double la, double lb, double *q, double *grad, double *hess)
{
    static const double C[2 * 3] = {1.0, -1.0, 0.0, 0.0, -1.0, 1.0};
    double u[3], gv[6], hv[36];
    for (int i = 0; i < 3; i++)
        u[i] = (a[i] / la - b[i] / lb) * 0.5; /* the axis, from both arms (v = -u up to rounding) */
    const double lu = sqrt(dot3(u, u));
    for (int i = 0; i < 3; i++) {
        u[i] /= lu;
        gv[i] = gv[3 + i] = 0.0;
    }
    *q = HF_PI;
    if (hess) {
        const double iaa = 1.0 / (la * la), ibb = 1.0 / (lb * lb), iab = 1.0 / (la * lb);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) {
                const double p = (i == j ? 1.0 : 0.0) - u[i] * u[j];
                hv[i * 6 + j] = p * iaa;
                hv[(3 + i) * 6 + 3 + j] = p * ibb;
                hv[i * 6 + 3 + j] = p * iab;
                hv[(3 + i) * 6 + j] = p * iab;
            }
    }
    map_to_atoms(2, 3, C, gv, hess ? hv : NULL, grad, hess);
    return HF_COORDINATE_LINEAR;
}

/*
 * ---- angle theta at x1 between a = x0 - x1 and b = x2 - x1 --------------------------------
 * With u = a/|a|, v = b/|b|, c = u.v, n = (u x v)/s, s = |u x v|, theta = atan2(s, c) and the
 * in-plane unit vectors e_a = n x u (perpendicular to a, towards b), e_b = v x n:
 *     dtheta/da = -e_a/|a|,   dtheta/db = -e_b/|b|,
 *     d2theta/dada = [(c/s) n n^T + e_a u^T + u e_a^T] / |a|^2,
 *     d2theta/dbdb = [(c/s) n n^T + e_b v^T + v e_b^T] / |b|^2,
 *     d2theta/dadb = -n n^T / (s |a| |b|).
 * These are exactly theta'(c) d2c + theta''(c) dc dc^T with theta' = -1/s, theta'' = -c/s^3 and
 * dc/da = (v - c u)/|a|, d2c/dada = [-(v u^T + u v^T) + 3c u u^T - c I]/|a|^2,
 * d2c/dadb = [I - v v^T - u u^T + c u v^T]/(|a||b|), rewritten in the frame (u, e_a, n): the
 * 1/s^3 and the cancellations between the two terms are gone, and s, n, e_a, e_b come from the
 * cross product, so angles near 0 and 180 degrees keep full relative accuracy.
 */
static int angle(const double *const x[4], double *q, double *grad, double *hess)
{
    static const double C[2 * 3] = {1.0, -1.0, 0.0,   /* a = x0 - x1 */
                                    0.0, -1.0, 1.0};  /* b = x2 - x1 */
    double a[3], b[3], u[3], v[3], w[3], n[3], ea[3], eb[3], gv[6], hv[36];
    sub3(x[0], x[1], a);
    sub3(x[2], x[1], b);
    const double la = sqrt(dot3(a, a)), lb = sqrt(dot3(b, b));
    if (!(la > 0.0) || !(lb > 0.0) || !isfinite(la) || !isfinite(lb))
        return -1;
    for (int i = 0; i < 3; i++) {
        u[i] = a[i] / la;
        v[i] = b[i] / lb;
    }
    cross3(u, v, w);
    const double s = sqrt(dot3(w, w)), c = dot3(u, v);
    if (!(s > HF_MIN_SINE)) /* linear, or folded (theta = 0: undefined) */
        return c < 0.0 ? linear_angle(a, b, la, lb, q, grad, hess) : -1;
    *q = atan2(s, c);
    for (int i = 0; i < 3; i++)
        n[i] = w[i] / s;
    cross3(n, u, ea);
    cross3(v, n, eb);
    for (int i = 0; i < 3; i++) {
        gv[i] = -ea[i] / la;
        gv[3 + i] = -eb[i] / lb;
    }
    if (hess) {
        const double cs = c / s, iaa = 1.0 / (la * la), ibb = 1.0 / (lb * lb), iab = -1.0 / (s * la * lb);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) {
                const double nn = n[i] * n[j];
                hv[i * 6 + j] = (cs * nn + ea[i] * u[j] + u[i] * ea[j]) * iaa;
                hv[(3 + i) * 6 + 3 + j] = (cs * nn + eb[i] * v[j] + v[i] * eb[j]) * ibb;
                hv[i * 6 + 3 + j] = nn * iab;
                hv[(3 + i) * 6 + j] = nn * iab;
            }
    }
    map_to_atoms(2, 3, C, gv, hess ? hv : NULL, grad, hess);
    return 0;
}

/*
 * ---- dihedral x0-x1-x2-x3 (Blondel & Karplus, J. Comput. Chem. 17, 1132 (1996)) ------------
 * F = x0 - x1, G = x1 - x2, H = x3 - x2, A = F x G, B = H x G, g = |G|:
 *     cos phi = A.B / (|A||B|),  sin phi = (B x A).G / (|A||B| g) = -g F.B / (|A||B|),
 * so phi = atan2(-g F.B, A.B). This is the IUPAC sign (that of OpenMM's PeriodicTorsionForce):
 * for x0 = (1,0,0), x1 = 0, x2 = (0,0,1), x3 = (cos t, sin t, 1) it gives phi = +t; OpenMM 8.6.1's
 * Reference platform gives +60 deg there for t = 60 deg. Gradient, with alpha = A/A^2 and
 * beta = B/B^2:
 *     dphi/dF = -g alpha,   dphi/dH = g beta,   dphi/dG = (F.G/g) alpha - (H.G/g) beta,
 * and its derivative with d(alpha)/dA = M_A = (I - 2 A^ A^T)/A^2, dA/dF = -[G]x, dA/dG = [F]x,
 * dB/dH = -[G]x, dB/dG = [H]x, dg/dG = G/g:
 *     FF = g M_A [G]x                  FG = -alpha (G/g)^T - g M_A [F]x         FH = 0
 *     HH = -g M_B [G]x                 HG = beta (G/g)^T + g M_B [H]x
 *     GG = alpha (F/g - (F.G) G/g^3)^T + (F.G/g) M_A [F]x
 *        - beta (H/g - (H.G) G/g^3)^T - (H.G/g) M_B [H]x
 * No 1/sin(phi) appears, so planar torsions (phi = 0, 180 deg) are regular.
 */
static int dihedral(const double *const x[4], double *q, double *grad, double *hess)
{
    static const double C[3 * 4] = {1.0, -1.0, 0.0, 0.0,   /* F = x0 - x1 */
                                    0.0, 1.0, -1.0, 0.0,   /* G = x1 - x2 */
                                    0.0, 0.0, -1.0, 1.0};  /* H = x3 - x2 */
    double F[3], G[3], H[3], A[3], B[3], al[3], be[3], gv[9], hv[81];
    sub3(x[0], x[1], F);
    sub3(x[1], x[2], G);
    sub3(x[3], x[2], H);
    cross3(F, G, A);
    cross3(H, G, B);
    const double F2 = dot3(F, F), G2 = dot3(G, G), H2 = dot3(H, H);
    const double A2 = dot3(A, A), B2 = dot3(B, B);
    const double tol2 = HF_MIN_SINE * HF_MIN_SINE;
    if (!(G2 > 0.0) || !(A2 > tol2 * F2 * G2) || !(B2 > tol2 * H2 * G2) || !isfinite(A2 + B2))
        return -1; /* x0,x1,x2 or x1,x2,x3 collinear */
    const double g = sqrt(G2);
    *q = atan2(-g * dot3(F, B), dot3(A, B));
    const double iA2 = 1.0 / A2, iB2 = 1.0 / B2;
    for (int i = 0; i < 3; i++) {
        al[i] = A[i] * iA2;
        be[i] = B[i] * iB2;
    }
    const double fg = dot3(F, G), hg = dot3(H, G), ig = 1.0 / g;
    for (int i = 0; i < 3; i++) {
        gv[i] = -g * al[i];
        gv[3 + i] = fg * ig * al[i] - hg * ig * be[i];
        gv[6 + i] = g * be[i];
    }
    if (hess) {
        double MA[9], MB[9], sG[9], sF[9], sH[9], MAG[9], MAF[9], MBG[9], MBH[9], blk[9];
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) {
                const double id = (i == j) ? 1.0 : 0.0;
                MA[3 * i + j] = (id - 2.0 * A[i] * A[j] * iA2) * iA2;
                MB[3 * i + j] = (id - 2.0 * B[i] * B[j] * iB2) * iB2;
            }
        skew3(G, sG);
        skew3(F, sF);
        skew3(H, sH);
        matmul3(MA, sG, MAG);
        matmul3(MA, sF, MAF);
        matmul3(MB, sG, MBG);
        matmul3(MB, sH, MBH);
        const double ig3 = ig * ig * ig;
        /* vector order: 0 = F, 1 = G, 2 = H */
        put_block(hv, 9, 0, 0, g, MAG);
        put_block(hv, 9, 2, 2, -g, MBG);
        for (int k = 0; k < 9; k++)
            blk[k] = 0.0;
        put_block(hv, 9, 0, 2, 1.0, blk);
        put_block(hv, 9, 2, 0, 1.0, blk);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                blk[3 * i + j] = -al[i] * G[j] * ig - g * MAF[3 * i + j];
        put_block(hv, 9, 0, 1, 1.0, blk);
        mirror_block(hv, 9, 0, 1);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                blk[3 * i + j] = be[i] * G[j] * ig + g * MBH[3 * i + j];
        put_block(hv, 9, 2, 1, 1.0, blk);
        mirror_block(hv, 9, 2, 1);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                blk[3 * i + j] = al[i] * (F[j] * ig - fg * G[j] * ig3) + fg * ig * MAF[3 * i + j]
                               - be[i] * (H[j] * ig - hg * G[j] * ig3) - hg * ig * MBH[3 * i + j];
        put_block(hv, 9, 1, 1, 1.0, blk);
    }
    map_to_atoms(3, 4, C, gv, hess ? hv : NULL, grad, hess);
    return 0;
}

/* The gradient output may also be NULL (only q is then computed, plus hess if asked).
 * HF_COORDINATE_LINEAR: an exactly linear angle (linear_angle above). */
int hf_coordinate(int n_atoms, const double *const x[4], double *q, double *grad, double *hess)
{
    switch (n_atoms) {
    case 2: return distance(x, q, grad, hess);
    case 3: return angle(x, q, grad, hess);
    case 4: return dihedral(x, q, grad, hess);
    default: return -1;
    }
}
