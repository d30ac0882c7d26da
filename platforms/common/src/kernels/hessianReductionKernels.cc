/*
 * Reduced particles (MacroModel's reduced hydrogens): every term sees x' = M x, x'_h = x_p +
 * f (x_h - x_p) for each reduced particle h with partner p (core/src/hf_reduction.c has the math).
 * Launched only when the force has reduced particles (CommonReductionLists on the host):
 *   reducePositions        before the term kernels: the reduced rows of a private copy of posq
 *   addReducedForces       after the force gather into a private fixed-point buffer: F = M^T F'
 *   mapBlockColumns/Rows   after the Hessian gather: H = M^T H' M (transpose = 1), or on an
 *                          adjoint before the contraction: G' = M G M^T (transpose = 0)
 *   symmetrizeReducedBlocks  after the Hessian map: entries with a touched row or column take their
 *                          upper-triangle value (exactly symmetric blocks, as the core does)
 * The block kernels run one thread per System particle and component (a row or a column of its
 * molecule's block) and walk the molecule's reduced particles in order, so no two threads write
 * the same entry.
 */

/* x'_h in posqOut (and, in mixed precision, the rounding remainder in correctionOut). */
KERNEL void reducePositions(int numReduced, GLOBAL const int* RESTRICT reducedParticle,
        GLOBAL const int* RESTRICT reducedPartner, GLOBAL const double* RESTRICT reducedFactor,
        GLOBAL const int* RESTRICT atomPos, GLOBAL const real* RESTRICT posq, GLOBAL const real* RESTRICT posqCorrection,
        GLOBAL real* RESTRICT posqOut, GLOBAL real* RESTRICT correctionOut) {
    for (int r = GLOBAL_ID; r < numReduced; r += GLOBAL_SIZE) {
        mixed xh[3], xp[3];
        hfLoadPosition(posq, posqCorrection, atomPos, reducedParticle[r], xh);
        hfLoadPosition(posq, posqCorrection, atomPos, reducedPartner[r], xp);
        const mixed f = (mixed) reducedFactor[r];
        const int i = atomPos[reducedParticle[r]];
        for (int c = 0; c < 3; c++) {
            const mixed x = xp[c] + f * (xh[c] - xp[c]);
            posqOut[4 * i + c] = (real) x;
#ifdef HF_POSITION_CORRECTION
            correctionOut[4 * i + c] = (real) (x - (mixed) (real) x);
#endif
        }
    }
}

/* F_p = w_p F'_p + sum over the h reduced towards p of (1 - f_h) F'_h (w_p = f_p for a reduced
 * particle, else 1), F' read from the private fixed-point buffer, added to OpenMM's. */
KERNEL void addReducedForces(int numAtoms, GLOBAL const int* RESTRICT atomReduced,
        GLOBAL const int* RESTRICT partnerStart, GLOBAL const int* RESTRICT partnerEntries,
        GLOBAL const int* RESTRICT reducedParticle, GLOBAL const double* RESTRICT reducedFactor,
        GLOBAL const int* RESTRICT atomPos, int paddedNumAtoms, GLOBAL const mm_long* RESTRICT termForces,
        GLOBAL mm_ulong* RESTRICT forceBuffer) {
    const double scale = 1.0 / 4294967296.0;
    for (int p = GLOBAL_ID; p < numAtoms; p += GLOBAL_SIZE) {
        const int i = atomPos[p], r = atomReduced[p];
        const double w = r >= 0 ? reducedFactor[r] : 1.0;
        double f[3];
        for (int c = 0; c < 3; c++)
            f[c] = w * (double) termForces[i + c * paddedNumAtoms] * scale;
        for (int e = partnerStart[p]; e < partnerStart[p + 1]; e++) {
            const int h = partnerEntries[e], ih = atomPos[reducedParticle[h]];
            for (int c = 0; c < 3; c++)
                f[c] += (1.0 - reducedFactor[h]) * (double) termForces[ih + c * paddedNumAtoms] * scale;
        }
        for (int c = 0; c < 3; c++)
            ATOMIC_ADD(&forceBuffer[i + c * paddedNumAtoms], (mm_ulong) ((mm_long) (f[c] * 4294967296.0)));
    }
}

/* Row i of its molecule's block (thread = particle, component), every reduced particle in turn:
 * B M (column h <- f column h, column p += (1 - f) column h) or B M^T (column h <- f column h +
 * (1 - f) column p). */
KERNEL void mapBlockColumns(int numRows, int transpose, GLOBAL const int* RESTRICT atomMolecule,
        GLOBAL const int* RESTRICT atomLocalRow, GLOBAL const int* RESTRICT moleculeReducedStart,
        GLOBAL const int* RESTRICT localParticle, GLOBAL const int* RESTRICT localPartner,
        GLOBAL const double* RESTRICT reducedFactor, GLOBAL const mm_long* RESTRICT molBlockOffset,
        GLOBAL const int* RESTRICT molDim, GLOBAL double* RESTRICT blocks) {
    for (int row = GLOBAL_ID; row < numRows; row += GLOBAL_SIZE) {
        const int p = row / 3, m = atomMolecule[p];
        const mm_long dim = molDim[m];
        GLOBAL double* b = blocks + molBlockOffset[m] + (atomLocalRow[p] + row % 3) * dim;
        for (int r = moleculeReducedStart[m]; r < moleculeReducedStart[m + 1]; r++) {
            const double f = reducedFactor[r], g = 1.0 - f;
            const int h = localParticle[r], q = localPartner[r];
            for (int c = 0; c < 3; c++) {
                const double bh = b[h + c];
                if (transpose) {
                    b[q + c] += g * bh;
                    b[h + c] = f * bh;
                } else {
                    b[h + c] = f * bh + g * b[q + c];
                }
            }
        }
    }
}

/* Column j of its molecule's block, every reduced particle in turn: M^T B (row h <- f row h,
 * row p += (1 - f) row h) or M B (row h <- f row h + (1 - f) row p). */
KERNEL void mapBlockRows(int numColumns, int transpose, GLOBAL const int* RESTRICT atomMolecule,
        GLOBAL const int* RESTRICT atomLocalRow, GLOBAL const int* RESTRICT moleculeReducedStart,
        GLOBAL const int* RESTRICT localParticle, GLOBAL const int* RESTRICT localPartner,
        GLOBAL const double* RESTRICT reducedFactor, GLOBAL const mm_long* RESTRICT molBlockOffset,
        GLOBAL const int* RESTRICT molDim, GLOBAL double* RESTRICT blocks) {
    for (int column = GLOBAL_ID; column < numColumns; column += GLOBAL_SIZE) {
        const int p = column / 3, m = atomMolecule[p];
        const mm_long dim = molDim[m];
        GLOBAL double* b = blocks + molBlockOffset[m] + atomLocalRow[p] + column % 3;
        for (int r = moleculeReducedStart[m]; r < moleculeReducedStart[m + 1]; r++) {
            const double f = reducedFactor[r], g = 1.0 - f;
            const int h = localParticle[r], q = localPartner[r];
            for (int c = 0; c < 3; c++) {
                const double bh = b[(h + c) * dim];
                if (transpose) {
                    b[(q + c) * dim] += g * bh;
                    b[(h + c) * dim] = f * bh;
                } else {
                    b[(h + c) * dim] = f * bh + g * b[(q + c) * dim];
                }
            }
        }
    }
}

/* Row i: its entries below the diagonal (i, j < i) that have a touched row or column take the
 * upper-triangle value (j, i). Only lower entries are written and only upper ones read. */
KERNEL void symmetrizeReducedBlocks(int numRows, GLOBAL const int* RESTRICT atomMolecule,
        GLOBAL const int* RESTRICT atomLocalRow, GLOBAL const int* RESTRICT atomTouched,
        GLOBAL const int* RESTRICT moleculeReducedStart, GLOBAL const int* RESTRICT localParticle,
        GLOBAL const int* RESTRICT localPartner, GLOBAL const mm_long* RESTRICT molBlockOffset,
        GLOBAL const int* RESTRICT molDim, GLOBAL double* RESTRICT blocks) {
    for (int row = GLOBAL_ID; row < numRows; row += GLOBAL_SIZE) {
        const int p = row / 3, m = atomMolecule[p];
        if (moleculeReducedStart[m] == moleculeReducedStart[m + 1])
            continue;
        const mm_long dim = molDim[m], i = atomLocalRow[p] + row % 3;
        GLOBAL double* b = blocks + molBlockOffset[m];
        if (atomTouched[p]) {
            for (mm_long j = 0; j < i; j++)
                b[i * dim + j] = b[j * dim + i];
            continue;
        }
        for (int r = moleculeReducedStart[m]; r < moleculeReducedStart[m + 1]; r++)
            for (int k = 0; k < 6; k++) {
                const mm_long j = (k < 3 ? localParticle[r] : localPartner[r]) + k % 3;
                if (j < i)
                    b[i * dim + j] = b[j * dim + i];
            }
    }
}
