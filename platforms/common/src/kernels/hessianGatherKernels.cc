/*
 * Deterministic sums of the per-term scratch arrays (hessianTermKernels.cc) over lists the host
 * built once per term list (compressed rows: start[i] .. start[i+1] in entries). Every sum runs in
 * double, in the list's order or in a fixed tree, so results do not depend on thread scheduling.
 * HF_REDUCE_BLOCK (a power of two) is the work-group size of reduceSegments and addTotalEnergy.
 */

/* Forces: atom p gets -sum of the f' dq/dx entries (3 values at each listed offset of termForce),
 * added once per component to OpenMM's fixed-point force buffer (2^32 units per kJ/mol/nm). */
KERNEL void gatherForces(int numAtoms, GLOBAL const int* RESTRICT atomStart, GLOBAL const int* RESTRICT atomEntries,
        GLOBAL const real* RESTRICT termForce, GLOBAL const int* RESTRICT atomPos, int paddedNumAtoms,
        GLOBAL mm_ulong* RESTRICT forceBuffer) {
    for (int p = GLOBAL_ID; p < numAtoms; p += GLOBAL_SIZE) {
        double f[3] = {0.0, 0.0, 0.0};
        for (int e = atomStart[p]; e < atomStart[p + 1]; e++) {
            const int offset = atomEntries[e];
            for (int c = 0; c < 3; c++)
                f[c] -= (double) termForce[offset + c];
        }
        const int i = atomPos[p];
        for (int c = 0; c < 3; c++)
            ATOMIC_ADD(&forceBuffer[i + c * paddedNumAtoms], (mm_ulong) ((mm_long) (f[c] * 4294967296.0)));
    }
}

/*
 * Hessian blocks: pair p = (molecule, A, B), A <= B local atoms, pairInfo[3p]; its entries are
 * (offset of a 3x3 term block in termHessian, flags: 1 = transposed, 2 = negated). The sum S goes
 * to block (A, B) and S^T to (B, A) of the molecule's Hessian; a diagonal block (A = A) is written
 * from the upper triangle of S, so every block comes out exactly symmetric.
 */
KERNEL void gatherHessianBlocks(int numPairs, GLOBAL const int* RESTRICT pairInfo, GLOBAL const int* RESTRICT pairStart,
        GLOBAL const int* RESTRICT pairEntries, GLOBAL const real* RESTRICT termHessian,
        GLOBAL const mm_long* RESTRICT molBlockOffset, GLOBAL const int* RESTRICT molDim, GLOBAL double* RESTRICT blocks) {
    for (int p = GLOBAL_ID; p < numPairs; p += GLOBAL_SIZE) {
        double s[9];
        for (int k = 0; k < 9; k++)
            s[k] = 0.0;
        for (int e = pairStart[p]; e < pairStart[p + 1]; e++) {
            GLOBAL const real* k = termHessian + pairEntries[2 * e];
            const int flags = pairEntries[2 * e + 1];
            const double sign = (flags & 2) ? -1.0 : 1.0;
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++)
                    s[3 * i + j] += sign * (double) k[(flags & 1) ? 3 * j + i : 3 * i + j];
        }
        const int m = pairInfo[3 * p], a = pairInfo[3 * p + 1], b = pairInfo[3 * p + 2];
        const mm_long dim = molDim[m];
        GLOBAL double* h = blocks + molBlockOffset[m];
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) {
                if (a == b && j < i)
                    continue;
                const double value = s[3 * i + j];
                h[(3 * (mm_long) a + i) * dim + 3 * b + j] = value;
                h[(3 * (mm_long) b + j) * dim + 3 * a + i] = value;
            }
    }
}

/* out[i] = sum over entries of values[entries[e]], one work-group per segment (slots, molecules):
 * each thread a strided partial sum, then a fixed tree in local memory. */
KERNEL void reduceSegments(int numSegments, GLOBAL const int* RESTRICT start, GLOBAL const int* RESTRICT entries,
        GLOBAL const real* RESTRICT values, GLOBAL double* RESTRICT out) {
    LOCAL double partial[HF_REDUCE_BLOCK];
    for (int segment = GROUP_ID; segment < numSegments; segment += NUM_GROUPS) {
        double sum = 0.0;
        for (int e = start[segment] + LOCAL_ID; e < start[segment + 1]; e += HF_REDUCE_BLOCK)
            sum += (double) values[entries[e]];
        partial[LOCAL_ID] = sum;
        SYNC_THREADS;
        for (int step = HF_REDUCE_BLOCK / 2; step > 0; step /= 2) {
            if (LOCAL_ID < step)
                partial[LOCAL_ID] += partial[LOCAL_ID + step];
            SYNC_THREADS;
        }
        if (LOCAL_ID == 0)
            out[segment] = partial[0];
        SYNC_THREADS;
    }
}

/* The total energy, sum of the molecule energies (one work-group), added to OpenMM's energy buffer. */
KERNEL void addTotalEnergy(int numMolecules, GLOBAL const double* RESTRICT moleculeEnergy,
        GLOBAL mixed* RESTRICT energyBuffer) {
    LOCAL double partial[HF_REDUCE_BLOCK];
    double sum = 0.0;
    for (int m = LOCAL_ID; m < numMolecules; m += HF_REDUCE_BLOCK)
        sum += moleculeEnergy[m];
    partial[LOCAL_ID] = sum;
    SYNC_THREADS;
    for (int step = HF_REDUCE_BLOCK / 2; step > 0; step /= 2) {
        if (LOCAL_ID < step)
            partial[LOCAL_ID] += partial[LOCAL_ID + step];
        SYNC_THREADS;
    }
    if (LOCAL_ID == 0)
        energyBuffer[0] += (mixed) partial[0];
}

/* One molecule's Jacobian rows, slot-major: out[k numPairs + r] = the sum over segment k's entries e
 * (start[k] .. start[k + 1], in order) of values[r stride + e] (computeTermBilinearValues' values). */
KERNEL void reduceBilinearRows(int numSegments, int numPairs, GLOBAL const int* RESTRICT start,
                               GLOBAL const int* RESTRICT entries, int stride, GLOBAL const double* RESTRICT values,
                               GLOBAL double* RESTRICT out) {
    const mm_long work = (mm_long) numSegments * numPairs;
    for (mm_long k = GLOBAL_ID; k < work; k += GLOBAL_SIZE) {
        const int seg = (int) (k / numPairs), r = (int) (k % numPairs);
        double sum = 0.0;
        for (int e = start[seg]; e < start[seg + 1]; e++)
            sum += values[(mm_long) r * stride + entries[e]];
        out[k] = sum;
    }
}
