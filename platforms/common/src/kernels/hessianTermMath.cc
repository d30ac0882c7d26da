/*
 * The per-term math of HessianForce in OpenMM's common kernel dialect (one source for OpenCL and
 * CUDA): the internal coordinate q of a term with dq/dx and d2q/dx2, and f(q), f'(q), f''(q) with
 * their derivatives with respect to the term's parameter slots. The same formulas, in the same
 * order, as the math core's hf_geometry.c and hf_terms.c (core/src; see there for the derivations),
 * evaluated in `real` (float in single and mixed precision, double in double precision).
 *
 * Defines from the host (CommonHessianProgram.cpp, hessianProgramDefines; the host's values are the
 * only definitions): from the math core's hf_core.h the term kinds HF_TERM_BOND .. HF_TERM_HBOND_10_12,
 * HF_NO_SLOT (the parameter is zero), HF_COMBINE_LORENTZ_BERTHELOT, HF_MIN_SINE (below it an angle
 * or dihedral is undefined, except an exactly linear angle: HF_GEOMETRY_LINEAR), HF_PI, HF_TWO_PI,
 * HF_ONE_4PI_EPS0 (Coulomb constant) and the MM3* stretch and bend coefficients HF_MM3_BOND_CUBIC
 * .. HF_MM3_ANGLE_SEXTIC (per nm, per rad), the MM3* vdW constants HF_MM3_BUCKINGHAM_A/B/C, its short-range
 * wall HF_MM3_BUCKINGHAM_WALL/WALL_M and switch HF_MM3_SWITCH_ON/OFF (nm), all doubles with every digit;
 * HF_TERM_PLAIN_PAIR, the device kind of a plain nonbonded pair (an
 * HF_TERM_PAIR_COMBINED term with scales 1 that is skipped when it has no energy, as the Reference
 * platform's fast pair path skips it, except where parameter derivatives are computed); the
 * per-term layout of the arrays built by the host (CommonTermLists): HF_ATOMS atom entries, HF_SLOTS
 * slots, (kind, periodicity), HF_SCALARS doubles (scale, phase, scale_coulomb, scale_lj and the
 * distance scales r_scale[0], r_scale[1]), HF_ATOMS local rows (3 x the atom's index in its
 * molecule), the term's HF_FORCE_STRIDE force values f' dq/dx and its HF_SLOTS per-slot values;
 * the cross-term kinds HF_TERM_MM3_STRETCH_BEND .. _PAIR_SWITCHED with HF_CROSS_COORDS and
 * HF_CROSS_SLOTS (hf_core.h's HF_MAX_CROSS_COORDS / _SLOTS); HF_POSITION_CORRECTION (mixed precision: positions are
 * posq + posqCorrection, in double).
 */
#ifdef __OPENCL_VERSION__
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define HF_ATOMIC_MAX(p, v) atomic_max(p, v)
#define HF_INFINITY ((real) INFINITY)
#define HF_NAN ((real) NAN)
#else
#define HF_ATOMIC_MAX(p, v) atomicMax(p, v)
#define HF_INFINITY ((real) __longlong_as_double(0x7ff0000000000000LL))
#define HF_NAN ((real) __longlong_as_double(0x7ff8000000000000LL))
#endif
/* hfCoordinate's return for an exactly linear angle (hf_core.h's HF_COORDINATE_LINEAR) */
#define HF_GEOMETRY_LINEAR 2

/* The term's atom entries (hf_core.h's hf_term_atom_entries; a bend-bend's 5 may name one particle twice). */
DEVICE int hfTermAtomCount(int kind) {
    if (kind == HF_TERM_ANGLE || kind == HF_TERM_MM3_ANGLE || kind == HF_TERM_MM3_STRETCH_BEND)
        return 3;
    if (kind == HF_TERM_PERIODIC || kind == HF_TERM_RB || kind == HF_TERM_HARMONIC_DIHEDRAL ||
        kind == HF_TERM_MM3_TORSION_STRETCH || kind == HF_TERM_MM3_PAIR_SWITCHED)
        return 4;
    if (kind == HF_TERM_MM3_BEND_BEND)
        return 5;
    return 2;
}

/* The kinds with their own evaluation path (hessianCrossTerms.cc; the switched MM3* pair takes it
 * at every distance here, its switch S evaluated as it is). */
DEVICE int hfIsCrossKind(int kind) {
    return kind == HF_TERM_MM3_STRETCH_BEND || kind == HF_TERM_MM3_BEND_BEND || kind == HF_TERM_MM3_TORSION_STRETCH ||
           kind == HF_TERM_MM3_PAIR_SWITCHED;
}

/* The coordinate is a function of n - 1 difference vectors v_k = x[plus_k] - x[minus_k]:
 * distance (x0 - x1), angle (x0 - x1, x2 - x1), dihedral (F = x0 - x1, G = x1 - x2, H = x3 - x2). */
DEVICE int hfPlusAtom(int n, int k) {
    return (n == 4 && k == 1) ? 1 : (n == 4 && k == 2) ? 3 : (k == 0 ? 0 : 2);
}

DEVICE int hfMinusAtom(int n, int k) {
    return (n == 4 && k >= 1) ? 2 : 1;
}

/* The incidence C_ka = dv_k/dx_a (+1, -1 or 0). */
DEVICE real hfIncidence(int n, int k, int a) {
    return (a == hfPlusAtom(n, k) ? (real) 1 : (real) 0) - (a == hfMinusAtom(n, k) ? (real) 1 : (real) 0);
}

/* The position of System particle p (x, y, z) at its place in posq. */
DEVICE void hfLoadPosition(GLOBAL const real* RESTRICT posq, GLOBAL const real* RESTRICT posqCorrection,
                           GLOBAL const int* RESTRICT atomPos, int p, mixed* x) {
    const int i = atomPos[p];
    for (int c = 0; c < 3; c++) {
#ifdef HF_POSITION_CORRECTION
        x[c] = (mixed) posq[4 * i + c] + (mixed) posqCorrection[4 * i + c];
#else
        x[c] = (mixed) posq[4 * i + c];
#endif
    }
}

/* The difference vectors of the coordinate of n particles (3 (n - 1) reals), each formed in
 * `mixed` before rounding. */
DEVICE void hfVectors(int n, const int* particles, GLOBAL const real* RESTRICT posq,
                      GLOBAL const real* RESTRICT posqCorrection, GLOBAL const int* RESTRICT atomPos, real* v) {
    mixed x[4][3];
    for (int a = 0; a < n; a++)
        hfLoadPosition(posq, posqCorrection, atomPos, particles[a], x[a]);
    for (int k = 0; k < n - 1; k++) {
        const int p = hfPlusAtom(n, k), m = hfMinusAtom(n, k);
        for (int c = 0; c < 3; c++)
            v[3 * k + c] = (real) (x[p][c] - x[m][c]);
    }
}

/* The difference vectors of term t's coordinate (a term of one coordinate, n <= 4 atoms). */
DEVICE void hfTermVectors(int n, int t, GLOBAL const int* RESTRICT termAtoms, GLOBAL const real* RESTRICT posq,
                          GLOBAL const real* RESTRICT posqCorrection, GLOBAL const int* RESTRICT atomPos, real* v) {
    int particles[4];
    for (int a = 0; a < n; a++)
        particles[a] = termAtoms[HF_ATOMS * t + a];
    hfVectors(n, particles, posq, posqCorrection, atomPos, v);
}

DEVICE real hfDot3(const real* a, const real* b) {
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

DEVICE void hfCross3(const real* a, const real* b, real* c) {
    c[0] = a[1] * b[2] - a[2] * b[1];
    c[1] = a[2] * b[0] - a[0] * b[2];
    c[2] = a[0] * b[1] - a[1] * b[0];
}

/* m = [v]x (row-major), [v]x w = v x w */
DEVICE void hfSkew3(const real* v, real* m) {
    m[0] = 0;     m[1] = -v[2]; m[2] = v[1];
    m[3] = v[2];  m[4] = 0;     m[5] = -v[0];
    m[6] = -v[1]; m[7] = v[0];  m[8] = 0;
}

DEVICE void hfMatmul3(const real* a, const real* b, real* c) {
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            c[3 * i + j] = a[3 * i] * b[j] + a[3 * i + 1] * b[3 + j] + a[3 * i + 2] * b[6 + j];
}

/* hv block (k, l) of a (3 nv)^2 row-major matrix = s * m; hfMirrorBlock: block (l, k) = its transpose. */
DEVICE void hfPutBlock(real* hv, int ld, int k, int l, real s, const real* m) {
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            hv[(3 * k + i) * ld + 3 * l + j] = s * m[3 * i + j];
}

DEVICE void hfMirrorBlock(real* hv, int ld, int k, int l) {
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            hv[(3 * l + j) * ld + 3 * k + i] = hv[(3 * k + i) * ld + 3 * l + j];
}

/*
 * q, its gradient gv (3 nv) and, if wantHess, its Hessian hv ((3 nv)^2) with respect to the
 * difference vectors v (nv = n - 1). Returns 0, 1 when the coordinate is undefined (coincident
 * atoms, an angle of 0, collinear dihedral atoms), exactly where hf_coordinate fails, or
 * HF_GEOMETRY_LINEAR for an exactly linear angle: q = pi, gv = 0 and hv = M, the Hessian of
 * cos theta there (hf_geometry.c's linear_angle).
 */
DEVICE int hfCoordinate(int n, const real* v, int wantHess, real* q, real* gv, real* hv) {
    if (n == 2) {
        const real r = sqrt(hfDot3(v, v));
        if (!(r > 0))
            return 1;
        *q = r;
        const real invR = 1 / r;
        for (int i = 0; i < 3; i++)
            gv[i] = v[i] * invR;
        if (wantHess)
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++)
                    hv[3 * i + j] = ((i == j ? (real) 1 : (real) 0) - gv[i] * gv[j]) * invR;
        return 0;
    }
    if (n == 3) {
        const real* a = v;
        const real* b = v + 3;
        real u[3], w[3], cr[3], nrm[3], ea[3], eb[3];
        const real la = sqrt(hfDot3(a, a)), lb = sqrt(hfDot3(b, b));
        if (!(la > 0) || !(lb > 0))
            return 1;
        for (int i = 0; i < 3; i++) {
            u[i] = a[i] / la;
            w[i] = b[i] / lb;
        }
        hfCross3(u, w, cr);
        const real s = sqrt(hfDot3(cr, cr)), c = hfDot3(u, w);
        if (!(s > (real) HF_MIN_SINE) && !(c < 0))
            return 1;
        if (!(s > (real) HF_MIN_SINE)) {
            /* exactly linear: M_aa = P/|a|^2, M_bb = P/|b|^2, M_ab = P/(|a||b|), P = I - e e^T, e the axis */
            real e[3];
            for (int i = 0; i < 3; i++)
                e[i] = (u[i] - w[i]) * (real) 0.5;
            const real le = sqrt(hfDot3(e, e));
            for (int i = 0; i < 3; i++) {
                e[i] /= le;
                gv[i] = gv[3 + i] = 0;
            }
            *q = (real) HF_PI;
            if (wantHess) {
                const real iaa = 1 / (la * la), ibb = 1 / (lb * lb), iab = 1 / (la * lb);
                for (int i = 0; i < 3; i++)
                    for (int j = 0; j < 3; j++) {
                        const real p = (i == j ? (real) 1 : (real) 0) - e[i] * e[j];
                        hv[i * 6 + j] = p * iaa;
                        hv[(3 + i) * 6 + 3 + j] = p * ibb;
                        hv[i * 6 + 3 + j] = p * iab;
                        hv[(3 + i) * 6 + j] = p * iab;
                    }
            }
            return HF_GEOMETRY_LINEAR;
        }
        *q = atan2(s, c);
        for (int i = 0; i < 3; i++)
            nrm[i] = cr[i] / s;
        hfCross3(nrm, u, ea);
        hfCross3(w, nrm, eb);
        for (int i = 0; i < 3; i++) {
            gv[i] = -ea[i] / la;
            gv[3 + i] = -eb[i] / lb;
        }
        if (wantHess) {
            const real cs = c / s, iaa = 1 / (la * la), ibb = 1 / (lb * lb), iab = -1 / (s * la * lb);
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++) {
                    const real nn = nrm[i] * nrm[j];
                    hv[i * 6 + j] = (cs * nn + ea[i] * u[j] + u[i] * ea[j]) * iaa;
                    hv[(3 + i) * 6 + 3 + j] = (cs * nn + eb[i] * w[j] + w[i] * eb[j]) * ibb;
                    hv[i * 6 + 3 + j] = nn * iab;
                    hv[(3 + i) * 6 + j] = nn * iab;
                }
        }
        return 0;
    }
    /* dihedral (Blondel & Karplus): phi = atan2(-g F.B, A.B), A = F x G, B = H x G, g = |G| */
    const real* F = v;
    const real* G = v + 3;
    const real* H = v + 6;
    real A[3], B[3], al[3], be[3];
    hfCross3(F, G, A);
    hfCross3(H, G, B);
    const real F2 = hfDot3(F, F), G2 = hfDot3(G, G), H2 = hfDot3(H, H);
    const real A2 = hfDot3(A, A), B2 = hfDot3(B, B);
    const real tol2 = (real) HF_MIN_SINE * (real) HF_MIN_SINE;
    if (!(G2 > 0) || !(A2 > tol2 * F2 * G2) || !(B2 > tol2 * H2 * G2))
        return 1;
    const real g = sqrt(G2);
    *q = atan2(-g * hfDot3(F, B), hfDot3(A, B));
    const real iA2 = 1 / A2, iB2 = 1 / B2;
    for (int i = 0; i < 3; i++) {
        al[i] = A[i] * iA2;
        be[i] = B[i] * iB2;
    }
    const real fg = hfDot3(F, G), hg = hfDot3(H, G), ig = 1 / g;
    for (int i = 0; i < 3; i++) {
        gv[i] = -g * al[i];
        gv[3 + i] = fg * ig * al[i] - hg * ig * be[i];
        gv[6 + i] = g * be[i];
    }
    if (wantHess) {
        real MA[9], MB[9], sG[9], sF[9], sH[9], MAG[9], MAF[9], MBG[9], MBH[9], blk[9];
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) {
                const real id = (i == j) ? (real) 1 : (real) 0;
                MA[3 * i + j] = (id - 2 * A[i] * A[j] * iA2) * iA2;
                MB[3 * i + j] = (id - 2 * B[i] * B[j] * iB2) * iB2;
            }
        hfSkew3(G, sG);
        hfSkew3(F, sF);
        hfSkew3(H, sH);
        hfMatmul3(MA, sG, MAG);
        hfMatmul3(MA, sF, MAF);
        hfMatmul3(MB, sG, MBG);
        hfMatmul3(MB, sH, MBH);
        const real ig3 = ig * ig * ig;
        hfPutBlock(hv, 9, 0, 0, g, MAG);
        hfPutBlock(hv, 9, 2, 2, -g, MBG);
        for (int k = 0; k < 9; k++)
            blk[k] = 0;
        hfPutBlock(hv, 9, 0, 2, 1, blk);
        hfPutBlock(hv, 9, 2, 0, 1, blk);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                blk[3 * i + j] = -al[i] * G[j] * ig - g * MAF[3 * i + j];
        hfPutBlock(hv, 9, 0, 1, 1, blk);
        hfMirrorBlock(hv, 9, 0, 1);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                blk[3 * i + j] = be[i] * G[j] * ig + g * MBH[3 * i + j];
        hfPutBlock(hv, 9, 2, 1, 1, blk);
        hfMirrorBlock(hv, 9, 2, 1);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                blk[3 * i + j] = al[i] * (F[j] * ig - fg * G[j] * ig3) + fg * ig * MAF[3 * i + j]
                               - be[i] * (H[j] * ig - hg * G[j] * ig3) - hg * ig * MBH[3 * i + j];
        hfPutBlock(hv, 9, 1, 1, 1, blk);
    }
    return 0;
}

/* dq/dx of atom a (3 values): sum_k C_ka gv_k. */
DEVICE void hfAtomGradient(int n, const real* gv, int a, real* ga) {
    for (int i = 0; i < 3; i++)
        ga[i] = 0;
    for (int k = 0; k < n - 1; k++) {
        const real c = hfIncidence(n, k, a);
        if (c != 0)
            for (int i = 0; i < 3; i++)
                ga[i] += c * gv[3 * k + i];
    }
}

/* The 3x3 block (a, b) of d2q/dx2 (a <= b): sum_kl C_ka C_lb hv_kl; a diagonal block is made
 * exactly symmetric from its upper triangle (as hf_geometry.c's map_to_atoms). */
DEVICE void hfAtomHessianBlock(int n, const real* hv, int a, int b, real* blk) {
    const int ld = 3 * (n - 1);
    for (int i = 0; i < 9; i++)
        blk[i] = 0;
    for (int k = 0; k < n - 1; k++) {
        const real ca = hfIncidence(n, k, a);
        if (ca == 0)
            continue;
        for (int l = 0; l < n - 1; l++) {
            const real s = ca * hfIncidence(n, l, b);
            if (s == 0)
                continue;
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++)
                    blk[3 * i + j] += s * hv[(3 * k + i) * ld + 3 * l + j];
        }
    }
    if (a == b) {
        blk[3] = blk[1];
        blk[6] = blk[2];
        blk[7] = blk[5];
    }
}

/* ---- the scalar part: f, f', f'' and their slot derivatives (hf_terms.c) ------------------- */

typedef struct {
    real e, de, d2e;
    real dp[HF_SLOTS], ddp[HF_SLOTS], d2dp[HF_SLOTS];
} HfTermValue;

DEVICE void hfClearValue(HfTermValue* out) {
    out->e = out->de = out->d2e = 0;
    for (int s = 0; s < HF_SLOTS; s++)
        out->dp[s] = out->ddp[s] = out->d2dp[s] = 0;
}

/* E = k d^2 (slots k, q0; d = q - q0) */
DEVICE void hfHarmonic(real k, real d, HfTermValue* out) {
    out->e = k * d * d;
    out->de = 2 * k * d;
    out->d2e = 2 * k;
    out->dp[0] = d * d;
    out->ddp[0] = 2 * d;
    out->d2dp[0] = 2;
    out->dp[1] = -2 * k * d;
    out->ddp[1] = -2 * k;
    out->d2dp[1] = 0;
}

/* E = k g(d), g = d^2 (1 + c3 d + c4 d^2 + c5 d^3 + c6 d^4): the MM3* stretch and bend (slots k,
 * q0; d = q - q0; hf_terms.c's anharmonic) */
DEVICE void hfAnharmonic(real k, real d, real c3, real c4, real c5, real c6, HfTermValue* out) {
    real b[7];
    b[0] = 0;
    b[1] = 0;
    b[2] = 1;
    b[3] = c3;
    b[4] = c4;
    b[5] = c5;
    b[6] = c6;
    real g = 0, g1 = 0, g2 = 0, g3 = 0;
    for (int m = 6; m >= 0; m--) {
        g3 = g3 * d + g2;
        g2 = g2 * d + g1;
        g1 = g1 * d + g;
        g = g * d + b[m];
    }
    g2 *= 2;
    g3 *= 6;
    out->e = k * g;
    out->de = k * g1;
    out->d2e = k * g2;
    out->dp[0] = g;
    out->ddp[0] = g1;
    out->d2dp[0] = g2;
    out->dp[1] = -k * g1;
    out->ddp[1] = -k * g2;
    out->d2dp[1] = -k * g3;
}

/* sw = (S, S', S'') of the MM3* 6-8 Angstrom switch at r (hf_mm3_pair.h's hf_mm3_switch) */
DEVICE void hfMM3Switch(real r, real* sw) {
    sw[0] = 1;
    sw[1] = sw[2] = 0;
    if (r >= (real) HF_MM3_SWITCH_OFF) {
        sw[0] = 0;
    } else if (r > (real) HF_MM3_SWITCH_ON) {
        const real on = (real) HF_MM3_SWITCH_ON, off = (real) HF_MM3_SWITCH_OFF, inv_w = 1 / (off * off - on * on);
        sw[0] = (off * off - r * r) * inv_w;
        sw[1] = -2 * r * inv_w;
        sw[2] = -2 * inv_w;
    }
}

/* The Buckingham B = A exp(-b r / R) - c (R / r)^6, M (R / r)^12 below R / WALL: bb = (B, B', B'') in r,
 * bR = their R-derivatives (hf_mm3_pair.h's hf_mm3_buckingham) */
DEVICE void hfMM3Buckingham(real r, real R, real* bb, real* bR) {
    const real A = (real) HF_MM3_BUCKINGHAM_A, b = (real) HF_MM3_BUCKINGHAM_B, c = (real) HF_MM3_BUCKINGHAM_C;
    const real inv_r = 1 / r, inv_R = 1 / R;
    const real x = R * inv_r, x2 = x * x, x6 = x2 * x2 * x2;
    if (x > (real) HF_MM3_BUCKINGHAM_WALL) { /* the r^-12 wall below R / WALL (hf_core.h) */
        const real w = (real) HF_MM3_BUCKINGHAM_WALL_M * x6 * x6;
        bb[0] = w;
        bb[1] = -12 * w * inv_r;
        bb[2] = 156 * w * inv_r * inv_r;
        bR[0] = 12 * w * inv_R;
        bR[1] = -144 * w * inv_R * inv_r;
        bR[2] = 1872 * w * inv_R * inv_r * inv_r;
        return;
    }
    const real u = exp(-b * r * inv_R);
    bb[0] = A * u - c * x6;
    bb[1] = -A * b * inv_R * u + 6 * c * x6 * inv_r;
    bb[2] = A * b * b * inv_R * inv_R * u - 42 * c * x6 * inv_r * inv_r;
    bR[0] = A * b * r * inv_R * inv_R * u - 6 * c * x6 * inv_R;
    bR[1] = A * b * u * (R - b * r) * inv_R * inv_R * inv_R + 36 * c * x6 * inv_R * inv_r;
    bR[2] = A * b * b * u * (b * r - 2 * R) * inv_R * inv_R * inv_R * inv_R - 252 * c * x6 * inv_R * inv_r * inv_r;
}

/* E = eps S(r) (A exp(-b r / R) - c (R / r)^6) + C qq / r: MacroModel's MM3* pair (slots R, eps,
 * qq; the 6-8 Angstrom switch S; hf_terms.c's hf_mm3_pair_scalar) */
DEVICE void hfMM3Pair(real r, real R, real eps, real qq, HfTermValue* out) {
    const real inv_r = 1 / r, cc = (real) HF_ONE_4PI_EPS0;
    real coul[3], vdw[3], dR[3], dEps[3], sw[3];
    coul[0] = cc * inv_r;
    coul[1] = -cc * inv_r * inv_r;
    coul[2] = 2 * cc * inv_r * inv_r * inv_r;
    for (int i = 0; i < 3; i++)
        vdw[i] = dR[i] = dEps[i] = 0;
    hfMM3Switch(r, sw);
    if (sw[0] != 0) {
        real bb[3], bR[3];
        hfMM3Buckingham(r, R, bb, bR);
        dEps[0] = sw[0] * bb[0];
        dEps[1] = sw[1] * bb[0] + sw[0] * bb[1];
        dEps[2] = sw[2] * bb[0] + 2 * sw[1] * bb[1] + sw[0] * bb[2];
        dR[0] = eps * sw[0] * bR[0];
        dR[1] = eps * (sw[1] * bR[0] + sw[0] * bR[1]);
        dR[2] = eps * (sw[2] * bR[0] + 2 * sw[1] * bR[1] + sw[0] * bR[2]);
        for (int i = 0; i < 3; i++)
            vdw[i] = eps * dEps[i];
    }
    out->e = vdw[0] + qq * coul[0];
    out->de = vdw[1] + qq * coul[1];
    out->d2e = vdw[2] + qq * coul[2];
    for (int i = 0; i < 3; i++) {
        out->dp[i] = i == 0 ? dR[0] : i == 1 ? dEps[0] : coul[0];
        out->ddp[i] = i == 0 ? dR[1] : i == 1 ? dEps[1] : coul[1];
        out->d2dp[i] = i == 0 ? dR[2] : i == 1 ? dEps[2] : coul[2];
    }
}

/* E = scale k (1 + cos(n q - phase)) */
DEVICE void hfPeriodic(real k, real phase, real n, real sc, real q, HfTermValue* out) {
    const real arg = n * q - phase, cs = cos(arg), sn = sin(arg);
    out->e = sc * k * (1 + cs);
    out->de = -sc * k * n * sn;
    out->d2e = -sc * k * n * n * cs;
    out->dp[0] = sc * (1 + cs);
    out->ddp[0] = -sc * n * sn;
    out->d2dp[0] = -sc * n * n * cs;
    out->dp[1] = sc * k * sn;
    out->ddp[1] = sc * k * n * cs;
    out->d2dp[1] = -sc * k * n * n * sn;
}

/* E = sum_m C_m y^m, y = cos(q - pi) = -cos q */
DEVICE void hfRyckaertBellemans(const real* c, real q, HfTermValue* out) {
    const real cq = cos(q), sq = sin(q), y = -cq;
    real pw[6];
    pw[0] = 1;
    for (int m = 1; m < 6; m++)
        pw[m] = pw[m - 1] * y;
    real e = 0, p1 = 0, p2 = 0;
    for (int m = 0; m < 6; m++) {
        const real d1 = (m >= 1) ? m * pw[m - 1] : (real) 0;
        const real d2 = (m >= 2) ? m * (m - 1) * pw[m - 2] : (real) 0;
        e += c[m] * pw[m];
        p1 += c[m] * d1;
        p2 += c[m] * d2;
        out->dp[m] = pw[m];
        out->ddp[m] = d1 * sq;
        out->d2dp[m] = d2 * sq * sq + d1 * cq;
    }
    out->e = e;
    out->de = p1 * sq;
    out->d2e = p2 * sq * sq + p1 * cq;
}

/* Lennard-Jones + Coulomb at r with the partial derivatives of (f, f', f'') with respect to the
 * charge product, sigma and epsilon (hf_pair.h, hf_terms.c's lj_coulomb). */
DEVICE void hfLJCoulomb(real r, real qq, real sigma, real eps, real scCoul, real scLJ, real* f, real* dqq,
                        real* dsig, real* deps) {
    const real invR = 1 / r, invR2 = invR * invR, invR3 = invR2 * invR;
    const real sr = sigma * invR;
    const real sig2 = sr * sr, sig6 = sig2 * sig2 * sig2, sr5 = sig2 * sig2 * sr;
    const real e4 = 4 * eps * scLJ;
    const real cc = (real) HF_ONE_4PI_EPS0 * scCoul;
    real u[3];
    u[0] = (sig6 - 1) * sig6;
    u[1] = -(12 * sig6 - 6) * sig6 * invR;
    u[2] = (156 * sig6 - 42) * sig6 * invR * invR;
    const real ccq = cc * qq;
    f[0] = e4 * u[0] + ccq * invR;
    f[1] = e4 * u[1] - ccq * invR * invR;
    f[2] = e4 * u[2] + 2 * ccq * invR * invR * invR;
    dqq[0] = cc * invR;
    dqq[1] = -cc * invR2;
    dqq[2] = 2 * cc * invR3;
    dsig[0] = e4 * sr5 * (12 * sig6 - 6) * invR;
    dsig[1] = e4 * sr5 * (36 - 144 * sig6) * invR2;
    dsig[2] = e4 * sr5 * (1872 * sig6 - 252) * invR3;
    for (int i = 0; i < 3; i++)
        deps[i] = 4 * scLJ * u[i];
}

/* d sqrt(x y)/dx given root = sqrt(x y) and halfInvRoot = 1/(2 root): +inf where x = 0 and y != 0. */
DEVICE real hfDsqrtProd(real x, real y, real root, real halfInvRoot) {
    if (root > 0)
        return y * halfInvRoot;
    return (x == 0 && y != 0) ? HF_INFINITY : (real) 0;
}

/* outer * inner, with 0 * inf taken as 0 */
DEVICE real hfChain(real outer, real inner) {
    return outer == 0 ? (real) 0 : outer * inner;
}

/* The 10-12 hydrogen bond E = C r^-12 - D r^-10 (slots C, D; hf_terms.c's hbond_10_12). */
DEVICE void hfHBond1012(real c, real d, real r, HfTermValue* out) {
    const real invR = 1 / r, invR2 = invR * invR, invR10 = invR2 * invR2 * invR2 * invR2 * invR2;
    const real invR12 = invR10 * invR2;
    out->dp[0] = invR12;
    out->ddp[0] = -12 * invR12 * invR;
    out->d2dp[0] = 156 * invR12 * invR2;
    out->dp[1] = -invR10;
    out->ddp[1] = 10 * invR10 * invR;
    out->d2dp[1] = -110 * invR10 * invR2;
    out->e = c * out->dp[0] + d * out->dp[1];
    out->de = c * out->ddp[0] + d * out->ddp[1];
    out->d2e = c * out->d2dp[0] + d * out->d2dp[1];
}

/*
 * f, f', f'' and slot derivatives of one term at coordinate q. sv: the 6 slot values (0 for
 * HF_NO_SLOT); phase, scale, scales, rScale (the MM3* bond's distance scale): the term's
 * constants. Entries of unused slots are 0.
 */
DEVICE void hfTermScalar(int kind, int periodicity, const real* sv, int phaseSlot, real phase, real scale, real scCoul,
                         real scLJ, real rScale, int combining, real q, HfTermValue* out) {
    hfClearValue(out);
    if (kind == HF_TERM_BOND || kind == HF_TERM_ANGLE) {
        hfHarmonic(sv[0], q - sv[1], out);
    } else if (kind == HF_TERM_MM3_BOND) {
        /* f(r) = g(s r): f' = s g', f'' = s^2 g'' (hf_terms.c's scale_coordinate) */
        hfAnharmonic(sv[0], rScale * q - sv[1], (real) HF_MM3_BOND_CUBIC, (real) HF_MM3_BOND_QUARTIC, 0, 0, out);
        out->de *= rScale;
        out->d2e *= rScale * rScale;
        for (int p = 0; p < 2; p++) {
            out->ddp[p] *= rScale;
            out->d2dp[p] *= rScale * rScale;
        }
    } else if (kind == HF_TERM_MM3_ANGLE) {
        hfAnharmonic(sv[0], q - sv[1], (real) HF_MM3_ANGLE_CUBIC, (real) HF_MM3_ANGLE_QUARTIC,
                     (real) HF_MM3_ANGLE_QUINTIC, (real) HF_MM3_ANGLE_SEXTIC, out);
    } else if (kind == HF_TERM_PERIODIC) {
        hfPeriodic(sv[0], phaseSlot == HF_NO_SLOT ? phase : sv[1], (real) periodicity, scale, q, out);
    } else if (kind == HF_TERM_RB) {
        hfRyckaertBellemans(sv, q, out);
    } else if (kind == HF_TERM_HARMONIC_DIHEDRAL) {
        hfHarmonic(sv[0], remainder(q - sv[1], (real) HF_TWO_PI), out);
    } else if (kind == HF_TERM_PAIR) {
        real f[3], dq[3], ds[3], de[3];
        hfLJCoulomb(q, sv[0], sv[1], sv[2], 1, 1, f, dq, ds, de);
        out->e = f[0];
        out->de = f[1];
        out->d2e = f[2];
        for (int i = 0; i < 3; i++) {
            out->dp[i] = i == 0 ? dq[0] : i == 1 ? ds[0] : de[0];
            out->ddp[i] = i == 0 ? dq[1] : i == 1 ? ds[1] : de[1];
            out->d2dp[i] = i == 0 ? dq[2] : i == 1 ? ds[2] : de[2];
        }
    } else if (kind == HF_TERM_MM3_PAIR) {
        hfMM3Pair(q, sv[0], sv[1], sv[2], out);
    } else if (kind == HF_TERM_HBOND_10_12) {
        hfHBond1012(sv[0], sv[1], q, out);
    } else {
        /* combined pair: slots q_i, q_j, sigma_i, sigma_j, eps_i, eps_j */
        const real qi = sv[0], qj = sv[1], si = sv[2], sj = sv[3], ei = sv[4], ej = sv[5];
        const int geometric = combining != HF_COMBINE_LORENTZ_BERTHELOT;
        const real sigma = geometric ? sqrt(si * sj) : (real) 0.5 * (si + sj);
        const real eps = sqrt(ei * ej);
        const real hs = geometric && sigma > 0 ? (real) 0.5 / sigma : (real) 0;
        const real he = eps > 0 ? (real) 0.5 / eps : (real) 0;
        real inner[HF_SLOTS];
        inner[0] = qj;
        inner[1] = qi;
        inner[2] = geometric ? hfDsqrtProd(si, sj, sigma, hs) : (real) 0.5;
        inner[3] = geometric ? hfDsqrtProd(sj, si, sigma, hs) : (real) 0.5;
        inner[4] = hfDsqrtProd(ei, ej, eps, he);
        inner[5] = hfDsqrtProd(ej, ei, eps, he);
        real f[3], dq[3], ds[3], de[3];
        hfLJCoulomb(q, qi * qj, sigma, eps, scCoul, scLJ, f, dq, ds, de);
        out->e = f[0];
        out->de = f[1];
        out->d2e = f[2];
        for (int s = 0; s < HF_SLOTS; s++) {
            const real* outer = s < 2 ? dq : s < 4 ? ds : de;
            out->dp[s] = hfChain(outer[0], inner[s]);
            out->ddp[s] = hfChain(outer[1], inner[s]);
            out->d2dp[s] = hfChain(outer[2], inner[s]);
        }
    }
}

/* Everything a kernel needs of term t: its kind, atom count, slots and slot values, and f, f',
 * f'' with their slot derivatives at q. Returns the atom count. */
DEVICE int hfTermSetup(int t, GLOBAL const int* RESTRICT termInfo, GLOBAL const int* RESTRICT termSlots,
                       GLOBAL const double* RESTRICT table, int* kind, int* slots, real* sv) {
    *kind = termInfo[2 * t];
    for (int s = 0; s < HF_SLOTS; s++) {
        slots[s] = termSlots[HF_SLOTS * t + s];
        sv[s] = slots[s] == HF_NO_SLOT ? (real) 0 : (real) table[slots[s]];
    }
    return hfTermAtomCount(*kind);
}

/* A plain nonbonded pair without charge product and epsilon has no energy: the Reference
 * platform's energy, force and Hessian paths skip it (also its geometry), its derivative paths do
 * not. Decided from the double table, as there. */
DEVICE int hfPlainPairIsEmpty(int kind, const int* slots, GLOBAL const double* RESTRICT table) {
    if (kind != HF_TERM_PLAIN_PAIR)
        return 0;
    double p[HF_SLOTS];
    for (int s = 0; s < HF_SLOTS; s++)
        p[s] = slots[s] == HF_NO_SLOT ? 0.0 : table[slots[s]];
    return p[0] * p[1] == 0.0 && sqrt(p[4] * p[5]) == 0.0;
}

/* f, f', f'' and slot derivatives of term t at q (its constants read from termInfo, termScalars). */
DEVICE void hfEvaluateScalar(int t, int kind, const real* sv, const int* slots, GLOBAL const int* RESTRICT termInfo,
                             GLOBAL const double* RESTRICT termScalars, int combining, real q, HfTermValue* value) {
    hfTermScalar(kind, termInfo[2 * t + 1], sv, slots[1], (real) termScalars[HF_SCALARS * t + 1],
                 (real) termScalars[HF_SCALARS * t], (real) termScalars[HF_SCALARS * t + 2],
                 (real) termScalars[HF_SCALARS * t + 3], (real) termScalars[HF_SCALARS * t + 4], combining, q, value);
}

/*
 * An exactly linear bend (hfCoordinate's HF_GEOMETRY_LINEAR: gv = 0, hv = M): where f'(pi) = 0 the
 * coefficients of M go where the kernels use f' and df'/dslot: de = f''(pi), ddp = d2dp, d2dp = 0,
 * and NaN for a slot with df'(pi)/dslot != 0 (theta0: undefined there). hf_assemble.c's
 * linear_bend_limit has the derivation. Returns 0, or 1 when the term is not a bend or f'(pi) != 0
 * (a cusp: undefined).
 */
DEVICE int hfLinearBendLimit(int kind, HfTermValue* value) {
    if ((kind != HF_TERM_ANGLE && kind != HF_TERM_MM3_ANGLE) || value->de != 0)
        return 1;
    value->de = value->d2e;
    for (int s = 0; s < HF_SLOTS; s++) {
        value->ddp[s] = value->ddp[s] == 0 ? value->d2dp[s] : HF_NAN;
        value->d2dp[s] = 0;
    }
    return 0;
}

/* A term of one coordinate (n atoms): its q, gv, hv (if wantHess; hfCoordinate) and value, with
 * an exactly linear bend's limit (hfLinearBendLimit). Returns 0, or 1 when undefined. */
DEVICE int hfEvaluateTerm(int t, int n, int kind, const real* sv, const int* slots, GLOBAL const int* RESTRICT termInfo,
                          GLOBAL const int* RESTRICT termAtoms, GLOBAL const double* RESTRICT termScalars, int combining,
                          GLOBAL const real* RESTRICT posq, GLOBAL const real* RESTRICT posqCorrection,
                          GLOBAL const int* RESTRICT atomPos, int wantHess, real* q, real* gv, real* hv,
                          HfTermValue* value) {
    real v[9];
    hfTermVectors(n, t, termAtoms, posq, posqCorrection, atomPos, v);
    const int geometry = hfCoordinate(n, v, wantHess, q, gv, hv);
    if (geometry != 0 && geometry != HF_GEOMETRY_LINEAR)
        return 1;
    hfEvaluateScalar(t, kind, sv, slots, termInfo, termScalars, combining, *q, value);
    return geometry == HF_GEOMETRY_LINEAR ? hfLinearBendLimit(kind, value) : 0;
}

/* Record an undefined geometry: the flag keeps numTerms - t of the lowest such term (0: none). */
DEVICE void hfFlagUndefined(GLOBAL int* errorFlag, int numTerms, int t) {
    HF_ATOMIC_MAX(errorFlag, numTerms - t);
}
