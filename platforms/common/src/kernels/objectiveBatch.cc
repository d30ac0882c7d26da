/*
 * The copies of a library eigensolver's batch (CommonBatchedEigensolver.h): count frequency
 * matrices of one dimension, molecule molecules[b] with its scratch at scratch[offsets[b]], packed into
 * one contiguous column-major batch (A is symmetric, so the row-major A is its own column-major
 * copy) and back. Grid-stride loops over every element.
 */

/* A of every matrix of the batch -> batch[b dim^2 ...]. */
KERNEL void objectiveBatchGather(GLOBAL const mm_long* RESTRICT offsets, int count, int dim,
                                 GLOBAL const hsreal* RESTRICT scratch, GLOBAL hsreal* RESTRICT batch) {
    const mm_long size = (mm_long) dim * dim, total = size * count;
    for (mm_long e = GLOBAL_ID; e < total; e += (LOCAL_SIZE * NUM_GROUPS)) {
        const mm_long b = e / size;
        batch[e] = scratch[offsets[b] + SCR_A(dim) + (e - b * size)];
    }
}

/*
 * The library's results back: with vectors, the eigenvectors (columns of the column-major batch,
 * so rows in the row-major A) into A; always the eigenvalues into W (SCR_W). A failed solve
 * (info != 0) marks its molecule STATUS_NOT_CONVERGED unless the molecule has failed already.
 */
KERNEL void objectiveBatchScatter(GLOBAL const mm_long* RESTRICT offsets, GLOBAL const int* RESTRICT molecules,
                                  int count, int dim, GLOBAL const hsreal* RESTRICT batch,
                                  GLOBAL const hsreal* RESTRICT values, GLOBAL const int* RESTRICT info,
                                  GLOBAL hsreal* RESTRICT scratch, GLOBAL int* RESTRICT status, int vectors) {
    const mm_long size = (mm_long) dim * dim, total = size * count;
    for (mm_long e = GLOBAL_ID; vectors && e < total; e += (LOCAL_SIZE * NUM_GROUPS)) {
        const mm_long b = e / size;
        scratch[offsets[b] + SCR_A(dim) + (e - b * size)] = batch[e];
    }
    for (mm_long e = GLOBAL_ID; e < (mm_long) dim * count; e += (LOCAL_SIZE * NUM_GROUPS)) {
        const mm_long b = e / dim;
        scratch[offsets[b] + SCR_W(dim) + (e - b * dim)] = values[e];
    }
    for (mm_long b = GLOBAL_ID; b < count; b += (LOCAL_SIZE * NUM_GROUPS))
        if (info[b] != 0 && status[molecules[b]] == 0)
            status[molecules[b]] = STATUS_NOT_CONVERGED;
}
