/*
 * The MM3* cross terms on the GPU (stretch-bend, bend-bend, torsion-stretch, switched pair): functions of two or
 * three coordinates q_c of one term, the same formulas in the same order as the math core's
 * hf_cross.c (see there):
 *     grad E = sum_c f_c g_c,   H = sum_cd f_cd g_c g_d^T + sum_c f_c Hq_c,
 *     dH/dp  = sum_cd (df_cd/dp) g_c g_d^T + sum_c (df_c/dp) Hq_c,
 * over the term's HF_ATOMS atom entries (a bend-bend's entries may name one particle twice; the
 * host's gather lists add the entries' contributions per particle). A coordinate's Hessian Hq_c is
 * formed one coordinate at a time, so a thread holds one coordinate Hessian, as for other terms.
 * Uses hessianTermMath.cc; HF_CROSS_COORDS and HF_CROSS_SLOTS come from the host.
 */

/* Coordinate c of a cross kind: its atom count, with the term's atom entries it uses in e. */
DEVICE int hfCrossCoordinateAtoms(int kind, int c, int* e) {
    if (kind == HF_TERM_MM3_STRETCH_BEND) { /* r_ij, r_kj, theta_ijk */
        e[0] = c == 1 ? 2 : 0;
        e[1] = 1;
        e[2] = 2;
        return c == 2 ? 3 : 2;
    }
    if (kind == HF_TERM_MM3_BEND_BEND) { /* theta_acb, theta_dce */
        e[0] = c == 0 ? 0 : 3;
        e[1] = 1;
        e[2] = c == 0 ? 2 : 4;
        return 3;
    }
    if (kind == HF_TERM_MM3_PAIR_SWITCHED) { /* r_ij, r_s over i j u v */
        for (int a = 0; a < 4; a++)
            e[a] = a;
        return c == 0 ? 2 : 4;
    }
    /* torsion-stretch: r_jk, phi_ijkl */
    for (int a = 0; a < 4; a++)
        e[a] = c == 0 ? a + 1 : a;
    return c == 0 ? 2 : 4;
}

DEVICE int hfCrossNumCoordinates(int kind) {
    return kind == HF_TERM_MM3_STRETCH_BEND ? 3 : 2;
}

/*
 * Coordinate c of cross term t: q, gv, and (wantHess) hv with respect to the difference vectors of
 * its geometry of *nGeom points, its atom entries in e, and per entry k the point pt[k] it moves and
 * its weight w[k] (dq/dx_e[k] = w[k] dq/dy_pt[k]). The points are the entries' particles (w = 1),
 * except for the switched MM3* pair's switch distance (hf_cross.c's switch_coordinate): the points
 * y_0 = x_u + s_0 (x_i - x_u), y_1 = x_v + s_1 (x_j - x_v), entries i j u v on points 0 1 0 1 with
 * weights s_0, s_1, 1 - s_0, 1 - s_1. Returns its entry count, or -1 when it is undefined.
 */
DEVICE int hfCrossCoordinate(int kind, int c, int t, GLOBAL const int* RESTRICT termAtoms,
                             GLOBAL const double* RESTRICT termScalars, GLOBAL const real* RESTRICT posq,
                             GLOBAL const real* RESTRICT posqCorrection, GLOBAL const int* RESTRICT atomPos, int wantHess,
                             real* q, real* gv, real* hv, int* e, int* nGeom, int* pt, real* w) {
    const int n = hfCrossCoordinateAtoms(kind, c, e);
    int particles[4];
    real v[9];
    for (int a = 0; a < n; a++) {
        particles[a] = termAtoms[HF_ATOMS * t + e[a]];
        pt[a] = a;
        w[a] = 1;
    }
    *nGeom = n;
    if (kind == HF_TERM_MM3_PAIR_SWITCHED && c == 1) {
        mixed x[4][3];
        for (int a = 0; a < 4; a++)
            hfLoadPosition(posq, posqCorrection, atomPos, particles[a], x[a]);
        const real s0 = (real) termScalars[HF_SCALARS * t + 4], s1 = (real) termScalars[HF_SCALARS * t + 5];
        for (int i = 0; i < 3; i++) /* v = y_0 - y_1 (a distance's x0 - x1) */
            v[i] = (real) ((x[2][i] + s0 * (x[0][i] - x[2][i])) - (x[3][i] + s1 * (x[1][i] - x[3][i])));
        *nGeom = 2;
        pt[2] = 0;
        pt[3] = 1;
        w[0] = s0;
        w[1] = s1;
        w[2] = 1 - s0;
        w[3] = 1 - s1;
    } else {
        hfVectors(n, particles, posq, posqCorrection, atomPos, v);
    }
    return hfCoordinate(*nGeom, v, wantHess, q, gv, hv) == 0 ? n : -1;
}

/* Every coordinate's q_c and g_c = dq_c/dx over the atom entries (g: HF_FORCE_STRIDE per
 * coordinate, 0 at entries the coordinate does not use). Returns 0, or 1 when one is undefined. */
DEVICE int hfCrossGradients(int kind, int t, GLOBAL const int* RESTRICT termAtoms,
                            GLOBAL const double* RESTRICT termScalars, GLOBAL const real* RESTRICT posq,
                            GLOBAL const real* RESTRICT posqCorrection, GLOBAL const int* RESTRICT atomPos, real* q,
                            real* g) {
    for (int i = 0; i < HF_CROSS_COORDS * HF_FORCE_STRIDE; i++)
        g[i] = 0;
    for (int c = 0; c < hfCrossNumCoordinates(kind); c++) {
        real gv[9], hv[1], w[4];
        int e[4], pt[4], nGeom;
        const int n = hfCrossCoordinate(kind, c, t, termAtoms, termScalars, posq, posqCorrection, atomPos, 0, &q[c], gv,
                                        hv, e, &nGeom, pt, w);
        if (n < 0)
            return 1;
        for (int a = 0; a < n; a++) {
            real ga[3];
            hfAtomGradient(nGeom, gv, pt[a], ga);
            for (int i = 0; i < 3; i++)
                g[c * HF_FORCE_STRIDE + 3 * e[a] + i] += w[a] * ga[i];
        }
    }
    return 0;
}

/* E, f_c, f_cd (f2[3c + d]) and their derivatives with respect to slots s < HF_CROSS_SLOTS
 * (dfdp[3s + c], d2fdp[9s + 3c + d]) */
typedef struct {
    real e, f[3], f2[9];
    real dp[HF_CROSS_SLOTS], dfdp[3 * HF_CROSS_SLOTS], d2fdp[9 * HF_CROSS_SLOTS];
} HfCrossValue;

/* m[3c + d] = m[3d + c] = v */
DEVICE void hfSetPair(real* m, int c, int d, real v) {
    m[3 * c + d] = v;
    m[3 * d + c] = v;
}

/* The scalar part (hf_cross.c's stretch_bend, bend_bend, torsion_stretch). sv: the slot values;
 * sa, sb: the distance scales; slots: the slot indices (HF_NO_SLOT: no derivative). */
DEVICE void hfCrossScalar(int kind, const real* sv, const int* slots, real sa, real sb, const real* q,
                          HfCrossValue* out) {
    out->e = 0;
    for (int i = 0; i < 3; i++)
        out->f[i] = 0;
    for (int i = 0; i < 9; i++)
        out->f2[i] = 0;
    for (int i = 0; i < HF_CROSS_SLOTS; i++)
        out->dp[i] = 0;
    for (int i = 0; i < 3 * HF_CROSS_SLOTS; i++)
        out->dfdp[i] = 0;
    for (int i = 0; i < 9 * HF_CROSS_SLOTS; i++)
        out->d2fdp[i] = 0;
    const real k = sv[0];
    if (kind == HF_TERM_MM3_PAIR_SWITCHED) { /* E = eps S(r_s) B(r) + qq C / r (hf_cross.c's mm3_pair_switched) */
        const real inv_r = 1 / q[0], cc = (real) HF_ONE_4PI_EPS0, eps = sv[1], qq = sv[2];
        real coul[3], sw[3], bb[3], bR[3];
        coul[0] = cc * inv_r;
        coul[1] = -cc * inv_r * inv_r;
        coul[2] = 2 * cc * inv_r * inv_r * inv_r;
        hfMM3Switch(q[1], sw);
        for (int i = 0; i < 3; i++)
            bb[i] = bR[i] = 0;
        if (sw[0] != 0)
            hfMM3Buckingham(q[0], sv[0], bb, bR);
        for (int m = 0; m < 2; m++) { /* m = 0: d/deps (slot 1) from B; m = 1: d/dR (slot 0) from eps dB/dR */
            const real* b = m == 0 ? bb : bR;
            const int s = m == 0 ? 1 : 0;
            const real fac = m == 0 ? (real) 1 : eps;
            out->dp[s] = fac * sw[0] * b[0];
            out->dfdp[3 * s] = fac * sw[0] * b[1];
            out->dfdp[3 * s + 1] = fac * sw[1] * b[0];
            out->d2fdp[9 * s] = fac * sw[0] * b[2];
            hfSetPair(out->d2fdp + 9 * s, 0, 1, fac * sw[1] * b[1]);
            out->d2fdp[9 * s + 4] = fac * sw[2] * b[0];
        }
        out->e = eps * out->dp[1] + qq * coul[0];
        out->f[0] = eps * out->dfdp[3] + qq * coul[1];
        out->f[1] = eps * out->dfdp[4];
        out->f2[0] = eps * out->d2fdp[9] + qq * coul[2];
        hfSetPair(out->f2, 0, 1, eps * out->d2fdp[10]);
        out->f2[4] = eps * out->d2fdp[13];
        out->dp[2] = coul[0];
        out->dfdp[6] = coul[1];
        out->d2fdp[18] = coul[2];
    } else if (kind == HF_TERM_MM3_STRETCH_BEND) { /* E = k S t, S = (sa r_ij - r0a) + (sb r_kj - r0b), t = theta - theta0 */
        const real S = (sa * q[0] - sv[1]) + (sb * q[1] - sv[2]), dt = q[2] - sv[3];
        out->e = k * S * dt;
        out->f[0] = k * sa * dt;
        out->f[1] = k * sb * dt;
        out->f[2] = k * S;
        hfSetPair(out->f2, 0, 2, k * sa);
        hfSetPair(out->f2, 1, 2, k * sb);
        out->dp[0] = S * dt;
        out->dfdp[0] = sa * dt;
        out->dfdp[1] = sb * dt;
        out->dfdp[2] = S;
        hfSetPair(out->d2fdp, 0, 2, sa);
        hfSetPair(out->d2fdp, 1, 2, sb);
        for (int s = 1; s <= 2; s++) {
            out->dp[s] = -k * dt;
            out->dfdp[3 * s + 2] = -k;
        }
        out->dp[3] = -k * S;
        out->dfdp[9] = -k * sa;
        out->dfdp[10] = -k * sb;
    } else if (kind == HF_TERM_MM3_BEND_BEND) { /* E = k d1 d2 */
        const real d1 = q[0] - sv[1], d2 = q[1] - sv[2];
        out->e = k * d1 * d2;
        out->f[0] = k * d2;
        out->f[1] = k * d1;
        hfSetPair(out->f2, 0, 1, k);
        out->dp[0] = d1 * d2;
        out->dfdp[0] = d2;
        out->dfdp[1] = d1;
        hfSetPair(out->d2fdp, 0, 1, 1);
        out->dp[1] = -k * d2;
        out->dfdp[3 + 1] = -k;
        out->dp[2] = -k * d1;
        out->dfdp[6 + 0] = -k;
    } else { /* torsion-stretch: E = k D P, D = s r_jk - r0, P = 1 + cos 3 phi */
        const real D = sa * q[0] - sv[1], c3 = cos(3 * q[1]), P = 1 + c3, P1 = -3 * sin(3 * q[1]), P2 = -9 * c3;
        out->e = k * D * P;
        out->f[0] = k * sa * P;
        out->f[1] = k * D * P1;
        hfSetPair(out->f2, 0, 1, k * sa * P1);
        out->f2[4] = k * D * P2;
        out->dp[0] = D * P;
        out->dfdp[0] = sa * P;
        out->dfdp[1] = D * P1;
        hfSetPair(out->d2fdp, 0, 1, sa * P1);
        out->d2fdp[4] = D * P2;
        out->dp[1] = -k * P;
        out->dfdp[3 + 1] = -k * P1;
        out->d2fdp[9 + 4] = -k * P2;
    }
    for (int s = 0; s < HF_CROSS_SLOTS; s++)
        if (slots[s] == HF_NO_SLOT) {
            out->dp[s] = 0;
            for (int i = 0; i < 3; i++)
                out->dfdp[3 * s + i] = 0;
            for (int i = 0; i < 9; i++)
                out->d2fdp[9 * s + i] = 0;
        }
}

/* Cross term t's coordinates' gradients g and scalar part; returns 0, or 1 (undefined geometry). */
DEVICE int hfCrossEvaluate(int t, int kind, const real* sv, const int* slots, GLOBAL const int* RESTRICT termAtoms,
                           GLOBAL const double* RESTRICT termScalars, GLOBAL const real* RESTRICT posq,
                           GLOBAL const real* RESTRICT posqCorrection, GLOBAL const int* RESTRICT atomPos, real* g,
                           HfCrossValue* value) {
    real q[3];
    if (hfCrossGradients(kind, t, termAtoms, termScalars, posq, posqCorrection, atomPos, q, g) != 0)
        return 1;
    hfCrossScalar(kind, sv, slots, (real) termScalars[HF_SCALARS * t + 4], (real) termScalars[HF_SCALARS * t + 5], q,
                  value);
    return 0;
}

/* The 3x3 block (k, l) of d2q/dx2 of a coordinate of n atoms from its hv (any k, l). */
DEVICE void hfCoordinateHessianBlock(int n, const real* hv, int k, int l, real* blk) {
    if (k <= l) {
        hfAtomHessianBlock(n, hv, k, l, blk);
    } else {
        real tr[9];
        hfAtomHessianBlock(n, hv, l, k, tr);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                blk[3 * i + j] = tr[3 * j + i];
    }
}

/* The term's Hessian blocks (a, b), a <= b over its n atom entries, in computeTermHessians' order. */
DEVICE void hfCrossHessian(int t, int kind, int n, const real* g, const HfCrossValue* value,
                           GLOBAL const int* RESTRICT termAtoms, GLOBAL const double* RESTRICT termScalars,
                           GLOBAL const real* RESTRICT posq,
                           GLOBAL const real* RESTRICT posqCorrection, GLOBAL const int* RESTRICT atomPos,
                           GLOBAL real* RESTRICT out) {
    const int nc = hfCrossNumCoordinates(kind);
    int block = 0;
    for (int a = 0; a < n; a++)
        for (int b = a; b < n; b++, block++) /* sum_cd f_cd g_c g_d^T */
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++) {
                    real sum = 0;
                    for (int c = 0; c < nc; c++)
                        for (int d = 0; d < nc; d++)
                            sum += value->f2[3 * c + d] * g[c * HF_FORCE_STRIDE + 3 * a + i] * g[d * HF_FORCE_STRIDE + 3 * b + j];
                    out[9 * block + 3 * i + j] = sum;
                }
    for (int c = 0; c < nc; c++) { /* + f_c Hq_c, one coordinate at a time */
        real q, gv[9], hv[81], w[4];
        int e[4], pt[4], nGeom;
        const int m = hfCrossCoordinate(kind, c, t, termAtoms, termScalars, posq, posqCorrection, atomPos, 1, &q, gv, hv,
                                        e, &nGeom, pt, w);
        for (int k = 0; k < m; k++)
            for (int l = 0; l < m; l++) {
                const int a = e[k], b = e[l];
                if (a > b)
                    continue; /* the block (b, a) is the transpose: added as (l, k) */
                real blk[9];
                hfCoordinateHessianBlock(nGeom, hv, pt[k], pt[l], blk);
                GLOBAL real* dst = out + 9 * (a * n - a * (a - 1) / 2 + (b - a));
                for (int i = 0; i < 9; i++)
                    dst[i] += value->f[c] * w[k] * w[l] * blk[i];
            }
    }
}

/* Per slot s < HF_CROSS_SLOTS, computeTermSlotValues' mode value of a cross term (the rest 0). */
DEVICE void hfCrossSlotValues(int t, int kind, int mode, int n, const real* g, const HfCrossValue* value,
                              GLOBAL const int* RESTRICT termAtoms, GLOBAL const double* RESTRICT termScalars,
                              GLOBAL const real* RESTRICT posq,
                              GLOBAL const real* RESTRICT posqCorrection, GLOBAL const int* RESTRICT atomPos,
                              GLOBAL const int* RESTRICT termLocal, GLOBAL const int* RESTRICT termMolecule,
                              GLOBAL const mm_long* RESTRICT molBlockOffset, GLOBAL const int* RESTRICT molDim,
                              GLOBAL const double* RESTRICT adjoint, GLOBAL const double* RESTRICT yVector,
                              GLOBAL const double* RESTRICT molWeights, double* out) {
    const int nc = hfCrossNumCoordinates(kind);
    if (mode == HF_MODE_ENERGY_DERIVATIVES || mode == HF_MODE_MOLECULE_WEIGHTS) {
        const double w = mode == HF_MODE_MOLECULE_WEIGHTS ? molWeights[termMolecule[t]] : 1.0;
        for (int s = 0; s < HF_CROSS_SLOTS; s++)
            out[s] = w == 0.0 ? 0.0 : (double) value->dp[s] * w;
    } else if (mode == HF_MODE_HESSIAN_CONTRACTION) {
        /* gGg_cd = g_c^T G g_d, gh_c = <G, Hq_c>, G read at the entries' particles */
        const int m = termMolecule[t], dim = molDim[m];
        GLOBAL const double* block = adjoint + molBlockOffset[m];
        double gGg[9], gh[3];
        for (int i = 0; i < 9; i++)
            gGg[i] = 0.0;
        for (int a = 0; a < n; a++)
            for (int b = 0; b < n; b++) {
                GLOBAL const double* gab = block + (mm_long) termLocal[HF_ATOMS * t + a] * dim + termLocal[HF_ATOMS * t + b];
                for (int i = 0; i < 3; i++)
                    for (int j = 0; j < 3; j++) {
                        const double gij = gab[(mm_long) i * dim + j];
                        for (int c = 0; c < nc; c++)
                            for (int d = 0; d < nc; d++)
                                gGg[3 * c + d] += (double) g[c * HF_FORCE_STRIDE + 3 * a + i] * gij *
                                                  (double) g[d * HF_FORCE_STRIDE + 3 * b + j];
                    }
            }
        for (int c = 0; c < nc; c++) {
            real q, gv[9], hv[81], w[4];
            int e[4], pt[4], nGeom;
            const int cm = hfCrossCoordinate(kind, c, t, termAtoms, termScalars, posq, posqCorrection, atomPos, 1, &q, gv,
                                             hv, e, &nGeom, pt, w);
            gh[c] = 0.0;
            for (int k = 0; k < cm; k++)
                for (int l = 0; l < cm; l++) {
                    real blk[9];
                    hfCoordinateHessianBlock(nGeom, hv, pt[k], pt[l], blk);
                    GLOBAL const double* gkl = block + (mm_long) termLocal[HF_ATOMS * t + e[k]] * dim +
                                               termLocal[HF_ATOMS * t + e[l]];
                    const double wkl = (double) (w[k] * w[l]);
                    for (int i = 0; i < 3; i++)
                        for (int j = 0; j < 3; j++)
                            gh[c] += gkl[(mm_long) i * dim + j] * wkl * (double) blk[3 * i + j];
                }
        }
        for (int s = 0; s < HF_CROSS_SLOTS; s++) {
            double sum = 0.0;
            for (int c = 0; c < nc; c++) {
                sum += (double) value->dfdp[3 * s + c] * gh[c];
                for (int d = 0; d < nc; d++)
                    sum += (double) value->d2fdp[9 * s + 3 * c + d] * gGg[3 * c + d];
            }
            out[s] = sum;
        }
    } else { /* y . d(grad E)/dp_s = sum_c (df_c/dp_s) g_c . y */
        double gy[3];
        for (int c = 0; c < nc; c++) {
            gy[c] = 0.0;
            for (int a = 0; a < n; a++) {
                GLOBAL const double* ya = yVector + 3 * (mm_long) termAtoms[HF_ATOMS * t + a];
                for (int i = 0; i < 3; i++)
                    gy[c] += (double) g[c * HF_FORCE_STRIDE + 3 * a + i] * ya[i];
            }
        }
        for (int s = 0; s < HF_CROSS_SLOTS; s++) {
            double sum = 0.0;
            for (int c = 0; c < nc; c++)
                sum += (double) value->dfdp[3 * s + c] * gy[c];
            out[s] = sum;
        }
    }
}

/* For the Jacobian's bilinear rows (computeTermBilinearValues) of cross term t (n atom entries, g from
 * hfCrossEvaluate): per coordinate c, gu[c] = g_c . u and hu[HF_FORCE_STRIDE c + 3 a + i] = (Hq_c u) at
 * entry a, coordinate i, with u read at the entries' rows of the molecule (termLocal). Then
 * u^T dH/dslot_s w = sum_c (df_c/dp_s) w . hu_c + sum_cd (df_cd/dp_s) gu[c] (g_d . w) (Hq_c symmetric). */
DEVICE void hfCrossApply(int t, int kind, int n, const real* g, GLOBAL const int* RESTRICT termAtoms,
                         GLOBAL const double* RESTRICT termScalars, GLOBAL const real* RESTRICT posq,
                         GLOBAL const real* RESTRICT posqCorrection, GLOBAL const int* RESTRICT atomPos,
                         GLOBAL const int* RESTRICT termLocal, GLOBAL const double* RESTRICT u, double* gu, double* hu) {
    const int nc = hfCrossNumCoordinates(kind);
    for (int c = 0; c < nc; c++) {
        gu[c] = 0.0;
        for (int a = 0; a < n; a++)
            for (int i = 0; i < 3; i++)
                gu[c] += (double) g[c * HF_FORCE_STRIDE + 3 * a + i] * u[termLocal[HF_ATOMS * t + a] + i];
        for (int p = 0; p < HF_FORCE_STRIDE; p++)
            hu[c * HF_FORCE_STRIDE + p] = 0.0;
        real q, gv[9], hv[81], pw[4];
        int e[4], pt[4], nGeom;
        const int cm = hfCrossCoordinate(kind, c, t, termAtoms, termScalars, posq, posqCorrection, atomPos, 1, &q, gv, hv,
                                         e, &nGeom, pt, pw);
        for (int k = 0; k < cm; k++)
            for (int l = 0; l < cm; l++) {
                real blk[9];
                hfCoordinateHessianBlock(nGeom, hv, pt[k], pt[l], blk);
                const double wkl = (double) (pw[k] * pw[l]);
                const int rl = termLocal[HF_ATOMS * t + e[l]];
                for (int i = 0; i < 3; i++)
                    for (int j = 0; j < 3; j++)
                        hu[c * HF_FORCE_STRIDE + 3 * e[k] + i] += wkl * (double) blk[3 * i + j] * u[rl + j];
            }
    }
}
