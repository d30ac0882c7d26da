/*
 * The kernels of one objective evaluation, in launch order (CommonHessianObjective::evaluate).
 * Except for the first and the last, each runs one work-group per molecule of a list:
 * list[listOffset + GROUP_ID]. OpenMM caps the work-groups of a launch (getNumThreadBlocks), so
 * the host launches a long list in chunks, listOffset being the chunk's start.
 * Formulas: HessianObjective.h; the Reference twin: hf_objective.c.
 */

/* Positions (nm) of the atoms of projecting molecules, in the layout's atom order: posq holds atom
 * atomIndex[i] at i (OpenMM may reorder atoms); mixed precision adds posqCorrection. */
KERNEL void objectiveGatherPositions(int numAtoms, GLOBAL const real4* RESTRICT posq,
                                     GLOBAL const real4* RESTRICT posqCorrection, GLOBAL const int* RESTRICT atomIndex,
                                     GLOBAL const int* RESTRICT slotOfParticle, GLOBAL double* RESTRICT positions) {
    for (int i = (int) GLOBAL_ID; i < numAtoms; i += (int) (LOCAL_SIZE * NUM_GROUPS)) {
        const int slot = slotOfParticle[atomIndex[i]];
        if (slot < 0)
            continue;
        const real4 p = posq[i];
#ifdef USE_MIXED_PRECISION
        const real4 c = posqCorrection[i];
        positions[3 * slot] = (double) p.x + (double) c.x;
        positions[3 * slot + 1] = (double) p.y + (double) c.y;
        positions[3 * slot + 2] = (double) p.z + (double) c.z;
#else
        positions[3 * slot] = p.x;
        positions[3 * slot + 1] = p.y;
        positions[3 * slot + 2] = p.z;
#endif
    }
}

/* Every molecule with an objective: status (block finite?) and, with frequencies or an
 * eigenmatrix, A = M^-1/2 (H + H^T)/2 M^-1/2 into its scratch (exactly symmetric). */
KERNEL void objectiveMassWeight(GLOBAL const int* RESTRICT list, GLOBAL const int* RESTRICT molInt,
                                GLOBAL const mm_long* RESTRICT molLong, GLOBAL const double* RESTRICT blocks,
                                GLOBAL const double* RESTRICT invSqrtMass, GLOBAL hsreal* RESTRICT scratch,
                                GLOBAL int* RESTRICT status, int listOffset) {
    LOCAL hsreal red[OBJ_GROUP_SIZE];
    const int tid = (int) LOCAL_ID, m = list[listOffset + GROUP_ID];
    GLOBAL const int* mi = molInt + MOL_INT * m;
    GLOBAL const mm_long* ml = molLong + MOL_LONG * m;
    const int dim = mi[MI_DIM];
    GLOBAL const double* h = blocks + ml[ML_BLOCK];
    hsreal bad = 0;
    for (int e = tid; e < dim * dim; e += OBJ_GROUP_SIZE)
        bad += isfinite(h[e]) ? 0 : 1;
    bad = groupSumReal(bad, red);
    if (tid == 0)
        status[m] = bad > 0 ? STATUS_NONFINITE : 0;
    const int weighted = bad == 0 && (mi[MI_NFREQ] > 0 || mi[MI_NEIG] > 0);
    GLOBAL hsreal* a = scratch + ml[ML_SCRATCH] + SCR_A(dim);
    GLOBAL const double* s = invSqrtMass + 3 * mi[MI_FIRST_ATOM];
    for (int e = tid; weighted && e < dim * dim; e += OBJ_GROUP_SIZE) {
        const int i = e / dim, j = e - i * dim;
        a[e] = (hsreal) (0.5 * (h[e] + h[j * dim + i]) * (s[i] * s[j]));
    }
}

/*
 * Eigenmatrix (molecules with k > 0), from the unprojected A: E = V A V^T, residuals
 * w (t - (E_ab + E_ba)/2) for a >= b, and for the adjoint X = L^T V with L_ab = -w^2 (t - E_ab)
 * on the lower triangle (half of dL/dE_ab), so that G_A gets X^T V + V^T X.
 */
KERNEL void objectiveEigenmatrix(GLOBAL const int* RESTRICT list, GLOBAL const int* RESTRICT molInt,
                                 GLOBAL const mm_long* RESTRICT molLong, GLOBAL const double* RESTRICT eigVectors,
                                 GLOBAL const double* RESTRICT eigTargets, GLOBAL const double* RESTRICT eigWeights,
                                 GLOBAL hsreal* RESTRICT scratch, GLOBAL const int* RESTRICT status,
                                 GLOBAL double* RESTRICT residuals, int listOffset) {
    const int tid = (int) LOCAL_ID, m = list[listOffset + GROUP_ID];
    GLOBAL const int* mi = molInt + MOL_INT * m;
    GLOBAL const mm_long* ml = molLong + MOL_LONG * m;
    /* a failed molecule does nothing (no early return: the barriers must be reached by all) */
    const int dim = mi[MI_DIM], k = status[m] == 0 ? mi[MI_NEIG] : 0;
    GLOBAL const hsreal* a = scratch + ml[ML_SCRATCH] + SCR_A(dim);
    GLOBAL hsreal* y = scratch + ml[ML_SCRATCH] + SCR_FREQ_SIZE(dim);
    GLOBAL hsreal* l = y + k * dim;
    GLOBAL const double* v = eigVectors + ml[ML_EIG_VECTORS];
    GLOBAL const double* target = eigTargets + ml[ML_EIG_TARGETS];
    GLOBAL const double* weight = eigWeights + ml[ML_EIG_TARGETS];
    GLOBAL double* res = residuals + ml[ML_RESIDUAL] + mi[MI_NFREQ];
    for (int e = tid; e < k * dim; e += OBJ_GROUP_SIZE) { /* Y = V A */
        const int r = e / dim, j = e - r * dim;
        hsreal sum = 0;
        for (int i = 0; i < dim; i++)
            sum += (hsreal) v[r * dim + i] * a[i * dim + j];
        y[e] = sum;
    }
    SYNC_THREADS
    for (int e = tid; e < k * k; e += OBJ_GROUP_SIZE) {
        const int r = e / k, c = e - r * k;
        if (c > r) {
            l[e] = 0;
            continue;
        }
        hsreal erc = 0, ecr = 0;
        for (int j = 0; j < dim; j++) {
            erc += y[r * dim + j] * (hsreal) v[c * dim + j];
            ecr += y[c * dim + j] * (hsreal) v[r * dim + j];
        }
        const hsreal w = (hsreal) weight[e], diff = (hsreal) target[e] - (hsreal) 0.5 * (erc + ecr);
        res[r * (r + 1) / 2 + c] = w * diff;
        l[e] = -w * w * diff;
    }
    SYNC_THREADS
    for (int e = tid; e < k * dim; e += OBJ_GROUP_SIZE) { /* X = L^T V over Y */
        const int c = e / dim, j = e - c * dim;
        hsreal sum = 0;
        for (int r = c; r < k; r++)
            sum += l[r * k + c] * (hsreal) v[r * dim + j];
        y[e] = sum;
    }
}

/*
 * Frequency molecules: the frequency matrix A, projected on request (P A P + s (I - P), so the
 * vibrations are the lowest dim - r modes). Sets nModes[m].
 */
KERNEL void objectiveProjectModes(GLOBAL const int* RESTRICT list, GLOBAL const int* RESTRICT molInt,
                                  GLOBAL const mm_long* RESTRICT molLong, GLOBAL const double* RESTRICT masses,
                                  GLOBAL const double* RESTRICT positions, GLOBAL hsreal* RESTRICT scratch,
                                  GLOBAL const int* RESTRICT status, GLOBAL int* RESTRICT nModes, int listOffset) {
    LOCAL hsreal red[OBJ_GROUP_SIZE];
    const int m = list[listOffset + GROUP_ID];
    GLOBAL const int* mi = molInt + MOL_INT * m;
    /* a failed molecule does nothing (no early return: the barriers must be reached by all) */
    const int ok = status[m] == 0, dim = ok ? mi[MI_DIM] : 0;
    GLOBAL hsreal* scr = scratch + molLong[MOL_LONG * m + ML_SCRATCH];
    int r = 0;
    if (ok && mi[MI_PROJECT]) {
        GLOBAL hsreal* basis = scr + SCR_BASIS(dim);
        const int first = mi[MI_FIRST_ATOM];
        r = rigidBodyBasis(mi[MI_ATOMS], dim, masses + first, positions + 3 * first, basis, red);
        projectRigidBody(dim, r, scr + SCR_A(dim), basis, basis + 6 * dim, basis + 12 * dim, basis + 18 * dim, red);
    }
    if (LOCAL_ID == 0 && ok)
        nModes[m] = dim - r;
}

/*
 * Frequency molecules: the (projected) frequency matrix diagonalised by Jacobi, where the platform
 * has no library eigensolver (CommonBatchedEigensolver). vectorsWanted: the gradient is asked for
 * (overlap pairing always needs the vectors).
 */
KERNEL void objectiveJacobiModes(GLOBAL const int* RESTRICT list, GLOBAL const int* RESTRICT molInt,
                                 GLOBAL const mm_long* RESTRICT molLong, GLOBAL hsreal* RESTRICT scratch,
                                 GLOBAL int* RESTRICT intScratch, GLOBAL int* RESTRICT status, int vectorsWanted,
                                 int listOffset) {
    LOCAL hsreal red[OBJ_GROUP_SIZE];
    const int m = list[listOffset + GROUP_ID];
    GLOBAL const int* mi = molInt + MOL_INT * m;
    /* a failed molecule works on an empty matrix (no early return: the barriers must be reached by all) */
    const int ok = status[m] == 0, dim = ok ? mi[MI_DIM] : 0;
    GLOBAL hsreal* scr = scratch + molLong[MOL_LONG * m + ML_SCRATCH];
    GLOBAL int* iscr = intScratch + molLong[MOL_LONG * m + ML_INT_SCRATCH];
    const int vectors = vectorsWanted || mi[MI_PAIRING] == PAIR_BY_OVERLAP;
    const int converged = jacobiEigen(dim, vectors, scr + SCR_A(dim), scr + SCR_Z(dim), scr + SCR_W(dim), scr + SCR_ROT(dim),
                               iscr + ISCR_PAIRS(dim), iscr + ISCR_RANK(dim), red);
    if (LOCAL_ID == 0 && ok && !converged)
        status[m] = STATUS_NOT_CONVERGED;
}

/*
 * Frequency molecules: the pairing (by position: the modes above the threshold at the first
 * evaluation, kept in selected[]; by overlap: an optimal assignment on (q_k . v_j)^2, every
 * evaluation, in the smaller orientation as the Reference does), the residuals
 * w_k (t_k - nu_j) (0 when unpaired) and, with the gradient, c_j = dL/dnu_j F / (2 sqrt|l_j|).
 */
KERNEL void objectiveFrequencies(GLOBAL const int* RESTRICT list, GLOBAL const int* RESTRICT molInt,
                                 GLOBAL const mm_long* RESTRICT molLong, GLOBAL const double* RESTRICT freqTargets,
                                 GLOBAL const double* RESTRICT freqWeights, GLOBAL const double* RESTRICT freqThresholds,
                                 GLOBAL const double* RESTRICT freqVectors, GLOBAL hsreal* RESTRICT scratch,
                                 GLOBAL int* RESTRICT intScratch, GLOBAL int* RESTRICT status,
                                 GLOBAL const int* RESTRICT nModes, GLOBAL int* RESTRICT selectionDone,
                                 GLOBAL int* RESTRICT selected, GLOBAL int* RESTRICT paired,
                                 GLOBAL double* RESTRICT residuals, double factor, int gradient, int listOffset) {
    LOCAL int failed;
    const int tid = (int) LOCAL_ID, m = list[listOffset + GROUP_ID];
    GLOBAL const int* mi = molInt + MOL_INT * m;
    GLOBAL const mm_long* ml = molLong + MOL_LONG * m;
    /* a failed molecule does nothing (no early return: the barriers must be reached by all) */
    const int ok = status[m] == 0;
    const int dim = mi[MI_DIM], nf = ok ? mi[MI_NFREQ] : 0, first = mi[MI_FIRST_FREQ], modes = ok ? nModes[m] : 0;
    GLOBAL hsreal* scr = scratch + ml[ML_SCRATCH];
    GLOBAL const hsreal* vec = scr + SCR_A(dim);
    GLOBAL const hsreal* w = scr + SCR_W(dim);
    GLOBAL hsreal* coef = scr + SCR_COEF(dim);
    GLOBAL int* pair = paired + first;
    const hsreal f = (hsreal) factor;
    if (tid == 0)
        failed = 0;
    for (int j = tid; j < dim; j += OBJ_GROUP_SIZE)
        coef[j] = 0;
    if (mi[MI_PAIRING] == PAIR_BY_OVERLAP) {
        GLOBAL hsreal* score = scr + SCR_Z(dim);
        GLOBAL const double* q = freqVectors + ml[ML_FREQ_VECTORS];
        const int targetRows = nf <= modes;
        for (int e = tid; e < nf * modes; e += OBJ_GROUP_SIZE) {
            const int t = e / modes, j = e - t * modes;
            hsreal dot = 0;
            for (int i = 0; i < dim; i++)
                dot += (hsreal) q[t * dim + i] * vec[j * dim + i];
            score[targetRows ? t * modes + j : j * nf + t] = dot * dot;
        }
        SYNC_THREADS
        if (tid == 0) {
            GLOBAL hsreal* work = scr + SCR_ASSIGN(dim);
            GLOBAL int* iwork = intScratch + ml[ML_INT_SCRATCH] + ISCR_ASSIGN(dim);
            GLOBAL int* colOfRow = iwork + 3 * (dim + 1);
            const int rows = targetRows ? nf : modes, cols = targetRows ? modes : nf;
            failed = !assignMaxScore(rows, cols, score, colOfRow, work, work + dim + 1, work + 2 * (dim + 1), iwork,
                                     iwork + dim + 1, iwork + 2 * (dim + 1));
            if (failed)
                status[m] = STATUS_ASSIGNMENT;
            else if (targetRows)
                for (int t = 0; t < nf; t++)
                    pair[t] = colOfRow[t];
            else {
                for (int t = 0; t < nf; t++)
                    pair[t] = -1;
                for (int j = 0; j < modes; j++)
                    pair[colOfRow[j]] = j;
            }
        }
    }
    else if (tid == 0 && ok) {
        GLOBAL int* sel = selected + first;
        if (!selectionDone[m]) {
            int count = 0;
            for (int j = 0; j < modes && count < nf; j++)
                if (frequencyOf(w[j], f) > (hsreal) freqThresholds[m])
                    sel[count++] = j;
            for (int t = count; t < nf; t++)
                sel[t] = -1;
            selectionDone[m] = 1;
        }
        for (int t = 0; t < nf; t++)
            pair[t] = sel[t];
    }
    SYNC_THREADS
    GLOBAL double* res = residuals + ml[ML_RESIDUAL];
    for (int t = tid; !failed && t < nf; t += OBJ_GROUP_SIZE) {
        const int j = pair[t];
        if (j < 0) {
            res[t] = 0;
            continue;
        }
        const hsreal l = w[j], weight = (hsreal) freqWeights[first + t];
        const hsreal diff = (hsreal) freqTargets[first + t] - frequencyOf(l, f);
        res[t] = weight * diff;
        /* dnu/dl = F / (2 sqrt|l|) for either sign, |l| at least the eigenvalue of 1 cm^-1 (as hf_objective.c:
         * an eigenvalue of exactly 0 has an infinite dnu/dl) */
        const hsreal dLdnu = -2 * weight * weight * diff, lFloor = 1 / (f * f);
        if (gradient && dLdnu != 0)
            coef[j] = dLdnu * f / (2 * sqrt(fmax(fabs(l), lFloor)));
    }
}

/*
 * Hessian-element residuals w (t - (H_ij + H_ji)/2), i >= j, and, when writeAdjoint, G of every
 * listed molecule in lower-triangle form (entry i > j holds G_ij + G_ji, the upper triangle is 0:
 * the contraction sums G_ij dH_ij over all entries and dH is symmetric):
 *   G = M^-1/2 G_A M^-1/2, G_A = sum_j c_j v_j v_j^T + X^T V + V^T X, plus dL/dH_ij = -2 w^2 (t - H_ij).
 * A molecule without objective gets a zero block.
 */
KERNEL void objectiveAdjoint(GLOBAL const int* RESTRICT list, GLOBAL const int* RESTRICT molInt,
                             GLOBAL const mm_long* RESTRICT molLong, GLOBAL const double* RESTRICT blocks,
                             GLOBAL const double* RESTRICT invSqrtMass, GLOBAL const double* RESTRICT eigVectors,
                             GLOBAL const double* RESTRICT hessTargets, GLOBAL const double* RESTRICT hessWeights,
                             GLOBAL const hsreal* RESTRICT scratch, GLOBAL const int* RESTRICT status,
                             GLOBAL const int* RESTRICT nModes, GLOBAL double* RESTRICT residuals,
                             GLOBAL double* RESTRICT adjoint, int writeAdjoint, int listOffset) {
    const int tid = (int) LOCAL_ID, m = list[listOffset + GROUP_ID];
    GLOBAL const int* mi = molInt + MOL_INT * m;
    GLOBAL const mm_long* ml = molLong + MOL_LONG * m;
    const int dim = mi[MI_DIM], nf = mi[MI_NFREQ], k = mi[MI_NEIG], hess = mi[MI_HESSIAN];
    const int spectral = (nf > 0 || k > 0) && status[m] == 0 && writeAdjoint;
    const int modes = nf > 0 ? nModes[m] : 0;
    GLOBAL const double* h = blocks + ml[ML_BLOCK];
    GLOBAL double* g = adjoint + ml[ML_BLOCK];
    GLOBAL const hsreal* scr = scratch + ml[ML_SCRATCH];
    GLOBAL const hsreal* vec = scr + SCR_A(dim);
    GLOBAL const hsreal* coef = scr + SCR_COEF(dim);
    GLOBAL const hsreal* x = scr + SCR_FREQ_SIZE(dim);
    GLOBAL const double* v = eigVectors + ml[ML_EIG_VECTORS];
    GLOBAL const double* s = invSqrtMass + 3 * mi[MI_FIRST_ATOM];
    GLOBAL const double* target = hessTargets + ml[ML_HESS_TARGETS];
    GLOBAL const double* weight = hessWeights + ml[ML_HESS_TARGETS];
    GLOBAL double* res = residuals + ml[ML_RESIDUAL] + nf + k * (k + 1) / 2;
    for (int e = tid; e < dim * dim; e += OBJ_GROUP_SIZE) {
        const int i = e / dim, j = e - i * dim;
        if (j > i) {
            if (writeAdjoint)
                g[e] = 0;
            continue;
        }
        double value = 0;
        if (spectral) {
            hsreal ga = 0;
            for (int mode = 0; mode < modes; mode++)
                if (coef[mode] != 0)
                    ga += coef[mode] * vec[mode * dim + i] * vec[mode * dim + j];
            for (int r = 0; r < k; r++)
                ga += x[r * dim + i] * (hsreal) v[r * dim + j] + (hsreal) v[r * dim + i] * x[r * dim + j];
            value = (i == j ? 1.0 : 2.0) * (double) ga * (s[i] * s[j]);
        }
        if (hess) {
            const double wt = weight[e], diff = target[e] - 0.5 * (h[e] + h[j * dim + i]);
            res[i * (i + 1) / 2 + j] = wt * diff;
            value += -2 * wt * wt * diff;
        }
        if (writeAdjoint)
            g[e] = value;
    }
}

/* One work-group: loss = sum r^2 over all residuals, and the first molecule whose evaluation
 * failed: result = {loss, molecule (-1: none), its status}. */
KERNEL void objectiveLoss(GLOBAL const double* RESTRICT residuals, int numResiduals, GLOBAL const int* RESTRICT status,
                          int numMolecules, GLOBAL double* RESTRICT result) {
    LOCAL double red[OBJ_GROUP_SIZE];
    const int tid = (int) LOCAL_ID;
    double sum = 0;
    for (int i = tid; i < numResiduals; i += OBJ_GROUP_SIZE)
        sum += residuals[i] * residuals[i];
    sum = groupSumDouble(sum, red);
    if (tid == 0) {
        int bad = -1;
        for (int m = 0; m < numMolecules && bad < 0; m++)
            if (status[m] != 0)
                bad = m;
        result[0] = sum;
        result[1] = bad;
        result[2] = bad < 0 ? 0 : status[bad];
    }
}
