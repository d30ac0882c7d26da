/*
 * The rigid-body projection of a frequency matrix, one work-group per molecule (the math core's
 * hf_rigid_body.c and project_rigid_body in hf_objective.c):
 *   basis  translations sqrt(m_a) e_k and rotations sqrt(m_a) e_k x (x_a - x_com), orthonormalised
 *          by modified Gram-Schmidt (two passes); a rotation whose remainder is below
 *          HF_RIGID_ROTATION_TOLERANCE (hf_core.h's, a define from the host) of the largest
 *          rotation (the axis of a linear molecule) is dropped;
 *   A <- P A P + s (I - P), P = I - B^T B, s = 2 |A|_F + 1 (above every vibrational eigenvalue),
 *          written A + B^T (Y + s I) B - B^T X - X^T B with X = B A, Y = X B^T.
 */
/* The basis rows (6 x dim, the kept ones first) of a molecule of n atoms with masses (amu) and
 * positions (nm, xyz per atom); returns the number kept. red: the group-sum buffer. */
DEVICE int rigidBodyBasis(int n, int dim, GLOBAL const double* RESTRICT masses, GLOBAL const double* RESTRICT pos,
                          GLOBAL hsreal* RESTRICT basis, LOCAL_ARG hsreal* red) {
    const int tid = (int) LOCAL_ID;
    hsreal part[4] = {0, 0, 0, 0};
    for (int a = tid; a < n; a += OBJ_GROUP_SIZE) {
        const hsreal m = (hsreal) masses[a];
        for (int k = 0; k < 3; k++)
            part[k] += m * (hsreal) pos[3 * a + k];
        part[3] += m;
    }
    const hsreal total = groupSumReal(part[3], red);
    hsreal com[3];
    for (int k = 0; k < 3; k++)
        com[k] = groupSumReal(part[k], red) / total;
    for (int a = tid; a < n; a += OBJ_GROUP_SIZE) {
        const hsreal s = sqrt((hsreal) masses[a]);
        const hsreal r[3] = {(hsreal) pos[3 * a] - com[0], (hsreal) pos[3 * a + 1] - com[1], (hsreal) pos[3 * a + 2] - com[2]};
        for (int c = 0; c < 6; c++)
            for (int k = 0; k < 3; k++)
                basis[c * dim + 3 * a + k] = c == k ? s : 0;
        /* e_x x r = (0, -r_z, r_y), e_y x r = (r_z, 0, -r_x), e_z x r = (-r_y, r_x, 0) */
        basis[3 * dim + 3 * a + 1] = -s * r[2];
        basis[3 * dim + 3 * a + 2] = s * r[1];
        basis[4 * dim + 3 * a + 0] = s * r[2];
        basis[4 * dim + 3 * a + 2] = -s * r[0];
        basis[5 * dim + 3 * a + 0] = -s * r[1];
        basis[5 * dim + 3 * a + 1] = s * r[0];
    }
    SYNC_THREADS
    hsreal largest = 0;
    for (int c = 3; c < 6; c++) {
        hsreal sum = 0;
        for (int i = tid; i < dim; i += OBJ_GROUP_SIZE)
            sum += basis[c * dim + i] * basis[c * dim + i];
        const hsreal norm = sqrt(groupSumReal(sum, red));
        largest = norm > largest ? norm : largest;
    }
    int kept = 0;
    for (int c = 0; c < 6; c++) {
        GLOBAL hsreal* v = basis + c * dim;
        for (int pass = 0; pass < 2; pass++)
            for (int b = 0; b < kept; b++) {
                GLOBAL const hsreal* u = basis + b * dim;
                hsreal sum = 0;
                for (int i = tid; i < dim; i += OBJ_GROUP_SIZE)
                    sum += u[i] * v[i];
                const hsreal dot = groupSumReal(sum, red);
                for (int i = tid; i < dim; i += OBJ_GROUP_SIZE)
                    v[i] -= dot * u[i];
                SYNC_THREADS
            }
        hsreal sum = 0;
        for (int i = tid; i < dim; i += OBJ_GROUP_SIZE)
            sum += v[i] * v[i];
        const hsreal norm = sqrt(groupSumReal(sum, red));
        const int keep = c < 3 || (norm > (hsreal) HF_RIGID_ROTATION_TOLERANCE * largest && norm > 0);
        GLOBAL hsreal* dst = basis + kept * dim;
        for (int i = tid; keep && i < dim; i += OBJ_GROUP_SIZE)
            dst[i] = v[i] / norm;
        SYNC_THREADS
        kept += keep;
    }
    return kept;
}

/* In place: A (dim x dim, symmetric) <- P A P + s (I - P) for the r basis rows; x and d hold r x dim
 * each, y r x r. Leaves A exactly symmetric. */
DEVICE void projectRigidBody(int dim, int r, GLOBAL hsreal* RESTRICT a, GLOBAL const hsreal* RESTRICT basis,
                             GLOBAL hsreal* RESTRICT x, GLOBAL hsreal* RESTRICT d, GLOBAL hsreal* RESTRICT y,
                             LOCAL_ARG hsreal* red) {
    const int tid = (int) LOCAL_ID;
    hsreal sum = 0;
    for (int e = tid; e < dim * dim; e += OBJ_GROUP_SIZE)
        sum += a[e] * a[e];
    const hsreal shift = 2 * sqrt(groupSumReal(sum, red)) + 1;
    for (int e = tid; e < r * dim; e += OBJ_GROUP_SIZE) { /* X = B A */
        const int p = e / dim, j = e - p * dim;
        hsreal v = 0;
        for (int i = 0; i < dim; i++)
            v += basis[p * dim + i] * a[i * dim + j];
        x[e] = v;
    }
    SYNC_THREADS
    for (int e = tid; e < r * r; e += OBJ_GROUP_SIZE) { /* Y = X B^T + s I */
        const int p = e / r, q = e - p * r;
        hsreal v = 0;
        for (int j = 0; j < dim; j++)
            v += x[p * dim + j] * basis[q * dim + j];
        y[e] = v + (p == q ? shift : 0);
    }
    SYNC_THREADS
    for (int e = tid; e < r * dim; e += OBJ_GROUP_SIZE) { /* D = (Y + s I) B - X */
        const int p = e / dim, j = e - p * dim;
        hsreal v = 0;
        for (int q = 0; q < r; q++)
            v += y[p * r + q] * basis[q * dim + j];
        d[e] = v - x[e];
    }
    SYNC_THREADS
    for (int e = tid; e < dim * dim; e += OBJ_GROUP_SIZE) { /* A += B^T D - X^T B, upper triangle mirrored */
        const int i = e / dim, j = e - i * dim;
        if (j < i)
            continue;
        hsreal v = 0, w = 0;
        for (int p = 0; p < r; p++) {
            v += basis[p * dim + i] * d[p * dim + j] - x[p * dim + i] * basis[p * dim + j];
            w += basis[p * dim + j] * d[p * dim + i] - x[p * dim + j] * basis[p * dim + i];
        }
        const hsreal value = a[e] + (hsreal) 0.5 * (v + w);
        a[e] = value;
        a[j * dim + i] = value;
    }
    SYNC_THREADS
}
