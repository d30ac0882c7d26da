/*
 * One thread per term (listed terms and the expanded plain nonbonded pairs, one list): each
 * kernel evaluates its terms with hessianTermMath.cc and writes per-term results to scratch
 * arrays, which the gather kernels (hessianGatherKernels.cc) sum in double over lists built by the
 * host, in a fixed order, without atomics. Every kernel flags an undefined geometry through
 * hfFlagUndefined and writes zeros for that term. The MM3* cross terms take their own path
 * (hessianCrossTerms.cc) in each kernel.
 *
 * Arguments shared by all three (the term list and the positions):
 *   termInfo[2t] = (kind, periodicity), termAtoms[HF_ATOMS t] = System particles, termSlots[6t] = slots,
 *   termScalars[HF_SCALARS t] = (scale, phase, scale_coulomb, scale_lj, r_scale[0], r_scale[1]),
 *   table = the parameter slots
 *   (double), combining = the force's rule, posq (+ posqCorrection in mixed precision) indexed
 *   through atomPos[particle] = its row in posq.
 */

/* Energy of every term and, if wantForces, its f' dq/dx (3 per atom, HF_FORCE_STRIDE per term). */
KERNEL void computeTermEnergyForces(int numTerms, int wantForces, GLOBAL const int* RESTRICT termInfo,
        GLOBAL const int* RESTRICT termAtoms, GLOBAL const int* RESTRICT termSlots,
        GLOBAL const double* RESTRICT termScalars, GLOBAL const double* RESTRICT table, int combining,
        GLOBAL const real* RESTRICT posq, GLOBAL const real* RESTRICT posqCorrection, GLOBAL const int* RESTRICT atomPos,
        GLOBAL real* RESTRICT termEnergy, GLOBAL real* RESTRICT termForce, GLOBAL int* RESTRICT errorFlag) {
    for (int t = GLOBAL_ID; t < numTerms; t += GLOBAL_SIZE) {
        int kind, slots[HF_SLOTS];
        real sv[HF_SLOTS], grad[HF_FORCE_STRIDE];
        const int n = hfTermSetup(t, termInfo, termSlots, table, &kind, slots, sv);
        real energy = 0;
        for (int i = 0; i < HF_FORCE_STRIDE; i++)
            grad[i] = 0;
        if (hfIsCrossKind(kind)) {
            real g[HF_CROSS_COORDS * HF_FORCE_STRIDE];
            HfCrossValue value;
            if (hfCrossEvaluate(t, kind, sv, slots, termAtoms, termScalars, posq, posqCorrection, atomPos, g, &value) != 0) {
                hfFlagUndefined(errorFlag, numTerms, t);
            } else {
                energy = value.e;
                for (int i = 0; i < 3 * n; i++)
                    for (int c = 0; c < hfCrossNumCoordinates(kind); c++)
                        grad[i] += value.f[c] * g[c * HF_FORCE_STRIDE + i];
            }
        } else if (!hfPlainPairIsEmpty(kind, slots, table)) {
            real gv[9], hv[1], q;
            HfTermValue value;
            if (hfEvaluateTerm(t, n, kind, sv, slots, termInfo, termAtoms, termScalars, combining, posq, posqCorrection,
                               atomPos, 0, &q, gv, hv, &value) != 0) {
                hfFlagUndefined(errorFlag, numTerms, t);
            } else {
                energy = value.e;
                for (int a = 0; a < n; a++) {
                    real ga[3];
                    hfAtomGradient(n, gv, a, ga);
                    for (int i = 0; i < 3; i++)
                        grad[3 * a + i] = value.de * ga[i];
                }
            }
        }
        termEnergy[t] = energy;
        if (wantForces)
            for (int i = 0; i < HF_FORCE_STRIDE; i++)
                termForce[HF_FORCE_STRIDE * t + i] = grad[i];
    }
}

/*
 * The term's Hessian f'' g g^T + f' d2q/dx2 as 3x3 blocks (a, b), a <= b over its atoms, in the
 * order (0,0), (0,1), .., (0,n-1), (1,1), .., 9 values each, at termHessOffset[t]. A term of two
 * atoms has the Hessian [[K, -K], [-K, K]]: only K = block (0, 0) is stored.
 */
KERNEL void computeTermHessians(int numTerms, GLOBAL const int* RESTRICT termInfo, GLOBAL const int* RESTRICT termAtoms,
        GLOBAL const int* RESTRICT termSlots, GLOBAL const double* RESTRICT termScalars,
        GLOBAL const double* RESTRICT table, int combining, GLOBAL const real* RESTRICT posq,
        GLOBAL const real* RESTRICT posqCorrection, GLOBAL const int* RESTRICT atomPos,
        GLOBAL const int* RESTRICT termHessOffset, GLOBAL real* RESTRICT termHessian, GLOBAL int* RESTRICT errorFlag) {
    for (int t = GLOBAL_ID; t < numTerms; t += GLOBAL_SIZE) {
        int kind, slots[HF_SLOTS];
        real sv[HF_SLOTS];
        const int n = hfTermSetup(t, termInfo, termSlots, table, &kind, slots, sv);
        const int numBlocks = n == 2 ? 1 : n * (n + 1) / 2;
        GLOBAL real* out = termHessian + termHessOffset[t];
        int defined = 0;
        real gv[9], hv[81], q;
        HfTermValue value;
        if (hfIsCrossKind(kind)) {
            real g[HF_CROSS_COORDS * HF_FORCE_STRIDE];
            HfCrossValue crossValue;
            if (hfCrossEvaluate(t, kind, sv, slots, termAtoms, termScalars, posq, posqCorrection, atomPos, g,
                                &crossValue) != 0) {
                hfFlagUndefined(errorFlag, numTerms, t);
                for (int i = 0; i < 9 * numBlocks; i++)
                    out[i] = 0;
            } else {
                hfCrossHessian(t, kind, n, g, &crossValue, termAtoms, termScalars, posq, posqCorrection, atomPos, out);
            }
            continue;
        }
        if (!hfPlainPairIsEmpty(kind, slots, table)) {
            if (hfEvaluateTerm(t, n, kind, sv, slots, termInfo, termAtoms, termScalars, combining, posq, posqCorrection,
                               atomPos, 1, &q, gv, hv, &value) != 0)
                hfFlagUndefined(errorFlag, numTerms, t);
            else
                defined = 1;
        }
        if (!defined) {
            for (int i = 0; i < 9 * numBlocks; i++)
                out[i] = 0;
            continue;
        }
        int block = 0;
        for (int a = 0; a < n; a++)
            for (int b = a; b < n && block < numBlocks; b++, block++) {
                real ga[3], gb[3], hq[9];
                hfAtomGradient(n, gv, a, ga);
                hfAtomGradient(n, gv, b, gb);
                hfAtomHessianBlock(n, hv, a, b, hq);
                for (int i = 0; i < 3; i++)
                    for (int j = 0; j < 3; j++)
                        out[9 * block + 3 * i + j] = value.d2e * ga[i] * gb[j] + value.de * hq[3 * i + j];
            }
    }
}

/* What computeTermSlotValues writes for slot s of a term (the gather sums them per slot); the
 * mode codes HF_MODE_* are defines from the host (CommonHessianProgram.h):
 *   HF_MODE_ENERGY_DERIVATIVES    dE/dslot_s
 *   HF_MODE_MOLECULE_WEIGHTS      w_m dE/dslot_s, w_m = molWeights[the term's molecule]
 *   HF_MODE_HESSIAN_CONTRACTION   tr(G^T dH/dslot_s) = (df''/dp_s) g^T G g + (df'/dp_s) <G, d2q/dx2>
 *   HF_MODE_GRADIENT_CONTRACTION  y . d(grad E)/dslot_s = (df'/dp_s) g . y */

/* d w, except that a zero weight gives exactly 0 even where d is infinite; an undefined d (NaN:
 * theta0 of an exactly linear bend, hfLinearBendLimit) stays NaN */
DEVICE double hfWeighted(real d, double w) {
    return w == 0.0 && !isnan(d) ? 0.0 : (double) d * w;
}

/*
 * Per term and slot, the mode's value (HF_SLOTS per term; 0 for unused slots). The Hessian
 * contraction reads G (double, the Hessian-block layout) through termLocal[4t] (3 x the atoms'
 * indices in their molecule), termMolecule, molBlockOffset and molDim; the gradient contraction
 * reads y (double, 3 per System particle).
 */
KERNEL void computeTermSlotValues(int numTerms, int mode, GLOBAL const int* RESTRICT termInfo,
        GLOBAL const int* RESTRICT termAtoms, GLOBAL const int* RESTRICT termSlots,
        GLOBAL const double* RESTRICT termScalars, GLOBAL const double* RESTRICT table, int combining,
        GLOBAL const real* RESTRICT posq, GLOBAL const real* RESTRICT posqCorrection, GLOBAL const int* RESTRICT atomPos,
        GLOBAL const int* RESTRICT termLocal, GLOBAL const int* RESTRICT termMolecule,
        GLOBAL const mm_long* RESTRICT molBlockOffset, GLOBAL const int* RESTRICT molDim,
        GLOBAL const double* RESTRICT adjoint, GLOBAL const double* RESTRICT yVector,
        GLOBAL const double* RESTRICT molWeights, GLOBAL real* RESTRICT slotValues, GLOBAL int* RESTRICT errorFlag) {
    for (int t = GLOBAL_ID; t < numTerms; t += GLOBAL_SIZE) {
        int kind, slots[HF_SLOTS];
        real sv[HF_SLOTS], gv[9], hv[81], q;
        double out[HF_SLOTS];
        const int n = hfTermSetup(t, termInfo, termSlots, table, &kind, slots, sv);
        for (int s = 0; s < HF_SLOTS; s++)
            out[s] = 0.0;
        if (hfIsCrossKind(kind)) {
            real g[HF_CROSS_COORDS * HF_FORCE_STRIDE];
            HfCrossValue crossValue;
            if (hfCrossEvaluate(t, kind, sv, slots, termAtoms, termScalars, posq, posqCorrection, atomPos, g,
                                &crossValue) != 0)
                hfFlagUndefined(errorFlag, numTerms, t);
            else
                hfCrossSlotValues(t, kind, mode, n, g, &crossValue, termAtoms, termScalars, posq, posqCorrection, atomPos, termLocal,
                                  termMolecule, molBlockOffset, molDim, adjoint, yVector, molWeights, out);
            for (int s = 0; s < HF_SLOTS; s++)
                slotValues[HF_SLOTS * t + s] = (real) out[s];
            continue;
        }
        HfTermValue value;
        if (hfEvaluateTerm(t, n, kind, sv, slots, termInfo, termAtoms, termScalars, combining, posq, posqCorrection,
                           atomPos, mode == HF_MODE_HESSIAN_CONTRACTION, &q, gv, hv, &value) != 0) {
            hfFlagUndefined(errorFlag, numTerms, t);
        } else {
            if (mode == HF_MODE_ENERGY_DERIVATIVES) {
                for (int s = 0; s < HF_SLOTS; s++)
                    out[s] = value.dp[s];
            } else if (mode == HF_MODE_MOLECULE_WEIGHTS) {
                const double w = molWeights[termMolecule[t]];
                for (int s = 0; s < HF_SLOTS; s++)
                    out[s] = hfWeighted(value.dp[s], w);
            } else if (mode == HF_MODE_HESSIAN_CONTRACTION) {
                const int m = termMolecule[t], dim = molDim[m];
                GLOBAL const double* block = adjoint + molBlockOffset[m];
                double gGg = 0.0, gh = 0.0;
                for (int a = 0; a < n; a++)
                    for (int b = 0; b < n; b++) {
                        real ga[3], gb[3], hq[9];
                        hfAtomGradient(n, gv, a, ga);
                        hfAtomGradient(n, gv, b, gb);
                        hfAtomHessianBlock(n, hv, a < b ? a : b, a < b ? b : a, hq);
                        GLOBAL const double* gab = block + (mm_long) termLocal[HF_ATOMS * t + a] * dim
                                                   + termLocal[HF_ATOMS * t + b];
                        for (int i = 0; i < 3; i++)
                            for (int j = 0; j < 3; j++) {
                                const double gij = gab[(mm_long) i * dim + j];
                                gGg += (double) ga[i] * gij * (double) gb[j];
                                gh += gij * (double) (a <= b ? hq[3 * i + j] : hq[3 * j + i]);
                            }
                    }
                for (int s = 0; s < HF_SLOTS; s++)
                    out[s] = hfWeighted(value.d2dp[s], gGg) + hfWeighted(value.ddp[s], gh);
            } else {
                double gy = 0.0;
                for (int a = 0; a < n; a++) {
                    real ga[3];
                    hfAtomGradient(n, gv, a, ga);
                    GLOBAL const double* ya = yVector + 3 * (mm_long) termAtoms[HF_ATOMS * t + a];
                    gy += (double) ga[0] * ya[0] + (double) ga[1] * ya[1] + (double) ga[2] * ya[2];
                }
                for (int s = 0; s < HF_SLOTS; s++)
                    out[s] = hfWeighted(value.ddp[s], gy);
            }
        }
        for (int s = 0; s < HF_SLOTS; s++)
            slotValues[HF_SLOTS * t + s] = (real) out[s];
    }
}

/*
 * The rows of a residual Jacobian for one molecule (CommonCalcHessianForceKernel::
 * computeHessianObjectiveJacobian): for its terms termList[0..numListed) (those with a wanted slot)
 * and the bilinear pairs r = 0..numPairs of vectors (rows of dim; pairs[2 (firstPair + r)] and
 * [.. + 1], negative: a zero row), values[(r numListed + i) HF_SLOTS + s] = u_r^T (dH_t/dslot_s) w_r
 * in double, t = termList[i], by hf_bilinear.c's forms: for a term of one coordinate
 *     u^T dH/dslot_s w = (df''/dp_s)(g . u)(g . w) + (df'/dp_s) w . (Hq u),
 * a cross term per coordinate (hfCrossApply). One work-item per term and run of HF_BILINEAR_RUN
 * consecutive pairs: the term is evaluated once for its run, and g . u and Hq u are kept while
 * consecutive pairs share u (an eigenmatrix's (a, b <= a) and the Hessian elements' (i, j <= i)).
 * numTerms: the whole list's, for the undefined-geometry flag.
 */
KERNEL void computeTermBilinearValues(int numListed, int numPairs, int firstPair, int numTerms,
        GLOBAL const int* RESTRICT termList, GLOBAL const int* RESTRICT pairs, GLOBAL const double* RESTRICT vectors,
        int dim, GLOBAL const int* RESTRICT termInfo,
        GLOBAL const int* RESTRICT termAtoms, GLOBAL const int* RESTRICT termSlots,
        GLOBAL const double* RESTRICT termScalars, GLOBAL const double* RESTRICT table, int combining,
        GLOBAL const real* RESTRICT posq, GLOBAL const real* RESTRICT posqCorrection, GLOBAL const int* RESTRICT atomPos,
        GLOBAL const int* RESTRICT termLocal, GLOBAL double* RESTRICT values, GLOBAL int* RESTRICT errorFlag) {
    const int runs = (numPairs + HF_BILINEAR_RUN - 1) / HF_BILINEAR_RUN;
    const mm_long work = (mm_long) numListed * runs;
    for (mm_long k = GLOBAL_ID; k < work; k += GLOBAL_SIZE) {
        const int i = (int) (k % numListed), r0 = (int) (k / numListed) * HF_BILINEAR_RUN;
        const int r1 = min(r0 + HF_BILINEAR_RUN, numPairs), t = termList[i];
        int kind, slots[HF_SLOTS];
        real sv[HF_SLOTS], gv[9], hv[81], q;
        real g[HF_CROSS_COORDS * HF_FORCE_STRIDE];
        HfCrossValue crossValue;
        HfTermValue value;
        const int n = hfTermSetup(t, termInfo, termSlots, table, &kind, slots, sv);
        const int cross = hfIsCrossKind(kind), nc = cross ? hfCrossNumCoordinates(kind) : 1;
        const int bad = cross ? hfCrossEvaluate(t, kind, sv, slots, termAtoms, termScalars, posq, posqCorrection, atomPos,
                                                g, &crossValue)
                              : hfEvaluateTerm(t, n, kind, sv, slots, termInfo, termAtoms, termScalars, combining, posq,
                                               posqCorrection, atomPos, 1, &q, gv, hv, &value);
        if (bad != 0)
            hfFlagUndefined(errorFlag, numTerms, t);
        /* a one-coordinate term's g and Hq over its 3n coordinates (in g's cross layout, c = 0), once */
        real hl[9 * HF_ATOMS * HF_ATOMS];
        const int n3 = 3 * n;
        for (int a = 0; !cross && bad == 0 && a < n; a++) {
            hfAtomGradient(n, gv, a, g + 3 * a);
            for (int b = a; b < n; b++) {
                real hq[9];
                hfAtomHessianBlock(n, hv, a, b, hq);
                for (int x = 0; x < 3; x++)
                    for (int y = 0; y < 3; y++)
                        hl[(3 * a + x) * n3 + 3 * b + y] = hl[(3 * b + y) * n3 + 3 * a + x] = hq[3 * x + y];
            }
        }
        double gu[HF_CROSS_COORDS], hu[HF_CROSS_COORDS * HF_FORCE_STRIDE];
        int heldU = -1; /* the vector gu and hu belong to */
        for (int r = r0; r < r1; r++) {
            const int pu = pairs[2 * (firstPair + r)], pw = pairs[2 * (firstPair + r) + 1];
            double out[HF_SLOTS];
            for (int s = 0; s < HF_SLOTS; s++)
                out[s] = 0.0;
            if (bad == 0 && pu >= 0 && pw >= 0) {
                GLOBAL const double* w = vectors + (mm_long) pw * dim;
                if (pu != heldU) {
                    GLOBAL const double* u = vectors + (mm_long) pu * dim;
                    if (cross)
                        hfCrossApply(t, kind, n, g, termAtoms, termScalars, posq, posqCorrection, atomPos, termLocal, u,
                                     gu, hu);
                    else {
                        double ul[3 * HF_ATOMS];
                        for (int a = 0; a < n; a++)
                            for (int x = 0; x < 3; x++)
                                ul[3 * a + x] = u[termLocal[HF_ATOMS * t + a] + x];
                        gu[0] = 0.0;
                        for (int p = 0; p < n3; p++) {
                            gu[0] += (double) g[p] * ul[p];
                            hu[p] = 0.0;
                            for (int c = 0; c < n3; c++)
                                hu[p] += (double) hl[p * n3 + c] * ul[c];
                        }
                    }
                    heldU = pu;
                }
                double gw[HF_CROSS_COORDS], whu[HF_CROSS_COORDS];
                for (int c = 0; c < nc; c++) {
                    gw[c] = whu[c] = 0.0;
                    for (int a = 0; a < n; a++)
                        for (int x = 0; x < 3; x++) {
                            const double wa = w[termLocal[HF_ATOMS * t + a] + x];
                            gw[c] += (double) g[c * HF_FORCE_STRIDE + 3 * a + x] * wa;
                            whu[c] += wa * hu[c * HF_FORCE_STRIDE + 3 * a + x];
                        }
                }
                if (cross)
                    for (int s = 0; s < HF_CROSS_SLOTS; s++) {
                        double sum = 0.0;
                        for (int c = 0; c < nc; c++) {
                            sum += (double) crossValue.dfdp[3 * s + c] * whu[c];
                            for (int d = 0; d < nc; d++)
                                sum += (double) crossValue.d2fdp[9 * s + 3 * c + d] * gu[c] * gw[d];
                        }
                        out[s] = sum;
                    }
                else
                    for (int s = 0; s < HF_SLOTS; s++)
                        out[s] = hfWeighted(value.d2dp[s], gu[0] * gw[0]) + hfWeighted(value.ddp[s], whu[0]);
            }
            GLOBAL double* dst = values + ((mm_long) r * numListed + i) * HF_SLOTS;
            for (int s = 0; s < HF_SLOTS; s++)
                dst[s] = out[s];
        }
    }
}
