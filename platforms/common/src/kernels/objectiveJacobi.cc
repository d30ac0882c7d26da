/*
 * Symmetric eigendecomposition by the parallel cyclic Jacobi method, one work-group per molecule,
 * the matrix in global scratch (it does not fit local memory for large molecules).
 *
 * A sweep visits every pair (p, q) once in N - 1 steps of the round-robin (tournament) ordering:
 * N = dim rounded up to even (an odd dim gets a dummy index that never rotates); in step r
 * index N - 1 meets r and (r + i) mod (N - 1) meets (r - i) mod (N - 1) for i = 1 .. N/2 - 1, so
 * the N/2 pairs of a step are disjoint and their rotations J_P commute. Each step computes
 * the rotations from the current matrix (Rutishauser's stable form: theta = (a_qq - a_pp) / (2 a_pq),
 * t = sign(theta) / (|theta| + sqrt(theta^2 + 1)), c = 1 / sqrt(1 + t^2), s = t c), then applies
 * all of them at once, A <- J^T A J: every 2 x 2 block (rows of pair P, columns of pair Q) is
 * updated independently as J_P^T A_PQ J_Q, with P <= Q and the transpose written to A_QP (so A
 * stays exactly symmetric); a diagonal block becomes diag(a_pp - t a_pq, a_qq + t a_pq). The
 * eigenvectors accumulate as rows of Z <- J^T Z. Converged when the off-diagonal norm is at most
 * JACOBI_TOLERANCE times the Frobenius norm (checked before each sweep; JACOBI_MAX_SWEEPS sweeps at
 * most). Finally the eigenvalues are sorted ascending (ties by index) into w and the eigenvector
 * rows into A, in the same order.
 */

/* The two indices of pair `pair` in step `step` of a sweep over n (even) indices, p < q. */
DEVICE void roundRobinPair(int n, int step, int pair, int* p, int* q) {
    int a, b;
    if (pair == 0) {
        a = step;
        b = n - 1;
    }
    else {
        a = (step + pair) % (n - 1);
        b = (step - pair + n - 1) % (n - 1);
    }
    *p = a < b ? a : b;
    *q = a < b ? b : a;
}

/* The rotation that zeroes a_pq: c, s and t = tan(angle). */
DEVICE void jacobiRotation(hsreal app, hsreal aqq, hsreal apq, hsreal* c, hsreal* s, hsreal* t) {
    if (apq == 0) {
        *c = 1;
        *s = 0;
        *t = 0;
        return;
    }
    const hsreal theta = (aqq - app) / (2 * apq);
    const hsreal big = (hsreal) 1e15f;
    hsreal tn = fabs(theta) > big ? (hsreal) 0.5 / fabs(theta) : 1 / (fabs(theta) + sqrt(theta * theta + 1));
    if (theta < 0)
        tn = -tn;
    *t = tn;
    *c = 1 / sqrt(tn * tn + 1);
    *s = tn * *c;
}

/*
 * Diagonalises the symmetric dim x dim matrix a in place. Needs rot (3 dim reals), pairs and rank
 * (3 dim ints) of scratch, z (dim^2) for the vectors when vectors != 0. On return: w the eigenvalues
 * ascending; with vectors, the unit eigenvectors as rows of a in that order. Returns 0 when it
 * did not converge.
 */
DEVICE int jacobiEigen(int dim, int vectors, GLOBAL hsreal* RESTRICT a, GLOBAL hsreal* RESTRICT z,
                       GLOBAL hsreal* RESTRICT w, GLOBAL hsreal* RESTRICT rot, GLOBAL int* RESTRICT pairs,
                       GLOBAL int* RESTRICT rank, LOCAL_ARG hsreal* red) {
    const int tid = (int) LOCAL_ID;
    const int n = dim + (dim & 1), npairs = n / 2;
    GLOBAL hsreal* rc = rot;
    GLOBAL hsreal* rs = rot + npairs;
    GLOBAL hsreal* rt = rot + 2 * npairs;
    if (vectors)
        for (int e = tid; e < dim * dim; e += OBJ_GROUP_SIZE)
            z[e] = (e / dim == e % dim) ? 1 : 0;
    hsreal sum = 0;
    for (int e = tid; e < dim * dim; e += OBJ_GROUP_SIZE)
        sum += a[e] * a[e];
    const hsreal norm2 = groupSumReal(sum, red);
    int converged = 0;
    for (int sweep = 0; sweep <= JACOBI_MAX_SWEEPS && !converged; sweep++) {
        hsreal off = 0;
        for (int e = tid; e < dim * dim; e += OBJ_GROUP_SIZE)
            if (e / dim != e % dim)
                off += a[e] * a[e];
        off = groupSumReal(off, red);
        converged = off <= JACOBI_TOLERANCE * JACOBI_TOLERANCE * norm2;
        const int steps = converged || sweep == JACOBI_MAX_SWEEPS ? 0 : n - 1;
        for (int step = 0; step < steps; step++) {
            for (int pr = tid; pr < npairs; pr += OBJ_GROUP_SIZE) {
                int p, q;
                roundRobinPair(n, step, pr, &p, &q);
                hsreal c = 1, s = 0, t = 0;
                if (q < dim)
                    jacobiRotation(a[p * dim + p], a[q * dim + q], a[p * dim + q], &c, &s, &t);
                rc[pr] = c;
                rs[pr] = s;
                rt[pr] = t;
                pairs[2 * pr] = p;
                pairs[2 * pr + 1] = q;
            }
            SYNC_THREADS
            for (int e = tid; e < npairs * npairs; e += OBJ_GROUP_SIZE) {
                const int bp = e / npairs, bq = e - bp * npairs;
                if (bp > bq)
                    continue;
                const int p = pairs[2 * bp], q = pairs[2 * bp + 1];
                if (bp == bq) {
                    const hsreal t = rt[bp];
                    if (t != 0) {
                        const hsreal apq = a[p * dim + q];
                        a[p * dim + p] -= t * apq;
                        a[q * dim + q] += t * apq;
                        a[p * dim + q] = 0;
                        a[q * dim + p] = 0;
                    }
                    continue;
                }
                const int r = pairs[2 * bq], s = pairs[2 * bq + 1];
                const hsreal cp = rc[bp], sp = rs[bp], cq = rc[bq], sq = rs[bq];
                /* an index >= dim is the dummy: its row and column are zero and never written */
                const int qv = q < dim, sv = s < dim;
                const hsreal xpr = a[p * dim + r], xqr = qv ? a[q * dim + r] : 0;
                const hsreal xps = sv ? a[p * dim + s] : 0, xqs = qv && sv ? a[q * dim + s] : 0;
                const hsreal ypr = cp * xpr - sp * xqr, yqr = sp * xpr + cp * xqr;
                const hsreal yps = cp * xps - sp * xqs, yqs = sp * xps + cp * xqs;
                const hsreal zpr = cq * ypr - sq * yps, zps = sq * ypr + cq * yps;
                const hsreal zqr = cq * yqr - sq * yqs, zqs = sq * yqr + cq * yqs;
                a[p * dim + r] = zpr;
                a[r * dim + p] = zpr;
                if (sv) {
                    a[p * dim + s] = zps;
                    a[s * dim + p] = zps;
                }
                if (qv) {
                    a[q * dim + r] = zqr;
                    a[r * dim + q] = zqr;
                }
                if (qv && sv) {
                    a[q * dim + s] = zqs;
                    a[s * dim + q] = zqs;
                }
            }
            if (vectors)
                for (int e = tid; e < npairs * dim; e += OBJ_GROUP_SIZE) {
                    const int pr = e / dim, col = e - pr * dim;
                    const int p = pairs[2 * pr], q = pairs[2 * pr + 1];
                    if (q >= dim)
                        continue;
                    const hsreal c = rc[pr], s = rs[pr], zp = z[p * dim + col], zq = z[q * dim + col];
                    z[p * dim + col] = c * zp - s * zq;
                    z[q * dim + col] = s * zp + c * zq;
                }
            SYNC_THREADS
        }
    }
    /* sort: rank_i = #{j : d_j < d_i or (d_j == d_i and j < i)} */
    for (int i = tid; i < dim; i += OBJ_GROUP_SIZE)
        rot[i] = a[i * dim + i];
    SYNC_THREADS
    for (int i = tid; i < dim; i += OBJ_GROUP_SIZE) {
        const hsreal d = rot[i];
        int k = 0;
        for (int j = 0; j < dim; j++)
            k += rot[j] < d || (rot[j] == d && j < i);
        rank[i] = k;
        w[k] = d;
    }
    SYNC_THREADS
    for (int e = tid; vectors && e < dim * dim; e += OBJ_GROUP_SIZE) {
        const int i = e / dim, col = e - i * dim;
        a[rank[i] * dim + col] = z[e];
    }
    SYNC_THREADS
    return converged;
}
