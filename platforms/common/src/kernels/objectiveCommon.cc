/*
 * Shared definitions of the Hessian-space objective kernels (CommonHessianObjective.cpp). The
 * host defines HS_DOUBLE (double and mixed precision) or not (single), OBJ_GROUP_SIZE (the work-group
 * size of the per-molecule kernels, a power of two), JACOBI_TOLERANCE and JACOBI_MAX_SWEEPS, the
 * pairing codes PAIR_BY_POSITION and PAIR_BY_OVERLAP, the STATUS_* codes of a failed molecule,
 * HF_RIGID_ROTATION_TOLERANCE (the math core's, hf_core.h) and the layout of the per-molecule
 * records, uploaded once:
 *   molInt[MOL_INT * m + MI_*]   dimension 3n, atom count, first atom (of the layout's atom list),
 *                                frequency pairing (0: none), projection flag, frequency targets,
 *                                first frequency target, eigenmatrix vectors k, Hessian-element flag;
 *   molLong[MOL_LONG * m + ML_*] offsets (elements) of the block, the residuals, the frequency
 *                                vectors, the eigenmatrix vectors, targets and weights, the Hessian
 *                                targets and weights, and the molecule's real and integer scratch.
 * A molecule's scratch (hsreal) holds, in order: with frequencies, A (dim^2: the frequency matrix,
 * then the eigenvectors as sorted rows), Z (dim^2: Jacobi eigenvectors, then overlap scores),
 * W (dim: sorted eigenvalues), the rotations (3 dim), the rigid-body basis and two products
 * (3 x 6 dim, plus 36), the coefficients c_j (dim), the assignment's potentials (3 (dim + 1));
 * then, with an eigenmatrix, V A (k dim, then L^T V) and L (k^2). Its integer scratch holds
 * the sort ranks and rotation pairs (3 dim) and the assignment's arrays (4 (dim + 1)).
 */
#ifdef HS_DOUBLE
typedef double hsreal;
#define HS_HUGE 1e300
#else
typedef float hsreal;
#define HS_HUGE 1e30f
#endif

/* Offsets inside a frequency molecule's scratch. */
#define SCR_A(dim) 0
#define SCR_Z(dim) ((dim) * (dim))
#define SCR_W(dim) (2 * (dim) * (dim))
#define SCR_ROT(dim) (2 * (dim) * (dim) + (dim))
#define SCR_BASIS(dim) (2 * (dim) * (dim) + 4 * (dim))
#define SCR_COEF(dim) (2 * (dim) * (dim) + 22 * (dim) + 36)
#define SCR_ASSIGN(dim) (2 * (dim) * (dim) + 23 * (dim) + 36)
#define SCR_FREQ_SIZE(dim) (2 * (dim) * (dim) + 26 * (dim) + 39)
#define ISCR_RANK(dim) 0
#define ISCR_PAIRS(dim) (dim)
#define ISCR_ASSIGN(dim) (3 * (dim))

/* Sum of x over the work-group (every work-item gets it); buf holds OBJ_GROUP_SIZE values. A
 * fixed tree, so results are reproducible run to run. Every work-item must call it. */
#define DEFINE_GROUP_SUM(NAME, TYPE)                                    \
DEVICE TYPE NAME(TYPE x, LOCAL_ARG TYPE* buf) {                         \
    const int tid = (int) LOCAL_ID;                                     \
    buf[tid] = x;                                                       \
    SYNC_THREADS                                                        \
    for (int stride = OBJ_GROUP_SIZE / 2; stride > 0; stride >>= 1) { \
        if (tid < stride)                                               \
            buf[tid] += buf[tid + stride];                              \
        SYNC_THREADS                                                    \
    }                                                                   \
    const TYPE total = buf[0];                                          \
    SYNC_THREADS                                                        \
    return total;                                                       \
}
DEFINE_GROUP_SUM(groupSumReal, hsreal)
DEFINE_GROUP_SUM(groupSumDouble, double)

/* nu = sign(l) F sqrt|l| (cm^-1). */
DEVICE hsreal frequencyOf(hsreal eigenvalue, hsreal factor) {
    return eigenvalue < 0 ? -factor * sqrt(-eigenvalue) : factor * sqrt(eigenvalue);
}
