/*
 * Hessian-space objectives for all molecules in one call (declared in hf_core.h; the spec's meaning
 * is HessianObjectiveSpec's, plugin/include/HessianObjective.h). Per molecule m, as one task:
 *
 *   1. its Hessian block H_m (hf_hessian_blocks on the molecule's view of the model, below);
 *   2. with targets, A = M^-1/2 sym(H) M^-1/2 and
 *        eigenmatrix   E = V A V^T = X V^T + V X^T, X = V T, T = tril(A, -1) + diag(A)/2 (one dtrmm and
 *                      one dsyr2k, half the products of two dgemm; E comes out exactly symmetric),
 *                      r = w (t - E_ab) for a >= b;
 *        frequencies   A (or, projected, P A P + s (I - P) with s above every vibrational
 *                      eigenvalue, so that the 3n - r vibrations are the lowest eigenpairs and the
 *                      rigid-body directions sit at s, out of the way) diagonalised by
 *                      LAPACKE_dsyevd (all modes); nu = sign(l) F sqrt|l|; targets
 *                      paired by position (a selection made once) or by maximum overlap
 *                      (hf_assign_max_score on (q_k . v_j)^2, every evaluation);
 *        Hessian       r = w (t - (H_ij + H_ji)/2) for i >= j;
 *   3. with a gradient: the adjoint G_m = dL/dH_m,
 *        G_A = sum_j c_j v_j v_j^T (c_j = dL/dnu_j * F / (2 sqrt|l_j|), dl_j/dA = v_j v_j^T,
 *              unchanged by the projection since P v_j = v_j; two dsyrk). dnu/dl is infinite at
 *              l = 0 (force constants at their bound 0 can make a paired eigenvalue exactly 0):
 *              below the eigenvalue of 1 cm^-1, |l| is taken as that one, a finite pull away;
 *            + V^T R V (R_ab = dL/dE_ab, symmetrised; dtrmm + dsyr2k),
 *        G_m = M^-1/2 G_A M^-1/2 + the Hessian-element adjoint dL/dH_ij,
 *      and the tr(G_m^T dH/dslot) contraction over the molecule's terms (hf_contract.c) into the
 *      molecule's own slot vector. Since dH/dslot is symmetric and the contraction sums G_ij dH_ij
 *      over every entry, G is kept in lower-triangle form: G_ij (i > j) holds the symmetric G's
 *      G_ij + G_ji, the upper triangle is 0; only the lower triangles of G_A are ever computed.
 * No Hessian per parameter is ever formed.
 *
 * Threads. The molecules are independent, so the tasks run in an OpenMP loop (largest first,
 * dynamic schedule), each thread with its own workspace; OpenBLAS runs single-threaded meanwhile.
 * The results do not depend on the number of threads, bit for bit: every task writes only its
 * molecule's block, residuals, pairing and slot vector, and computes them with the same operations
 * on identically aligned buffers whichever thread runs it; then L = sum_i r_i^2 is summed in
 * residual order (as a single pass over the molecules sums it, so that a caller summing the
 * residuals gets the same bits) and dL/dslot over the molecules' vectors in molecule order. The
 * thread count is HESSFIT_NUM_THREADS when set (a whole number >= 1), else OpenMP's
 * (OMP_NUM_THREADS, else the cores), read at every call. The residual Jacobian of a list of
 * molecules (hf_objective_jacobian) runs its molecules the same way: the shared preparation (the
 * term grouping, the list's offsets, the wanted slots' rows, the workspaces) first, then one task
 * per listed molecule writing only its block, residual range, selection, pairing and output ranges.
 *
 * The view of one molecule: an hf_model whose only molecule is m (its offsets, exclusion matrix and
 * a block at offset 0), whose terms are m's listed terms in the model's order (copied, grouped by
 * molecule at every call, as the model may have been rebuilt), and whose atom_mol maps every
 * particle to 0 (the core only looks it up for the view's own terms), with m's reduced particles. hf_hessian_blocks and
 * hf_hessian_contraction_derivatives on it do exactly what they do for m's part of the whole
 * model, in the same order: the block is bit-identical to the whole-model one.
 */
#include "hf_core.h"
#include "hf_reduction.h"

#include <cblas.h>
#include <float.h>
#include <lapacke.h>
#include <limits.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* frequencies(): the overlaps were not finite (a status besides LAPACK's info values) */
#define ASSIGNMENT_FAILED (-100000)
/* workspace buffers are aligned alike, so that no BLAS kernel takes a different path on one */
#define WORKSPACE_ALIGNMENT 64
/* at most this many threads (and workspaces) */
#define MAX_THREADS 256

typedef struct {
    int n_atoms, dim;
    int active;        /* has targets */
    long long res_offset; /* its first residual */
    int *selected;     /* HF_PAIR_BY_POSITION: mode of each target (-1: unpaired), set once */
    int selection_done;
    int *paired;       /* the last pairing, one per target */
} mol_state;

/* One thread's scratch, sized for the largest molecule with targets. */
typedef struct {
    double *a;                 /* dim^2: the mass-weighted Hessian (overwritten by the eigensolver) */
    double *ga;                /* dim^2: the adjoint in mass-weighted coordinates */
    double *z;                 /* dim^2: eigenvectors, one contiguous row each */
    double *tmp, *tmp2;        /* dim^2 each: scores, products */
    double *w, *coef, *inv_sqrt_mass, *basis; /* dim, dim, dim, 6 dim */
    double *work;              /* dsyevd */
    lapack_int *iwork;
    double *assign_work;       /* hf_assign_max_score */
    int *assign_iwork, *col_of_row;
} workspace;

struct hf_objective_state {
    int n_molecules, max_dim;
    long long n_res;           /* residuals of all molecules */
    mol_state *mols;
    int *int_store;            /* selected and paired of every molecule */
    int n_freq_total;
    double *blocks, *adjoint;  /* Hessian blocks and G, the model's block layout */
    lapack_int lwork, liwork;
    int n_workspaces;
    workspace ws[MAX_THREADS];
    int *order;                /* molecules, costliest first */
    /* per call: the status of each molecule's task; every residual (the caller's array, or this) */
    int *mol_status, *mol_bad, *mol_info;
    double *res;
    /* the molecule views: the model's terms grouped by molecule, their indices, each molecule's slot
     * vector (n_molecules x n_slots), and an atom_mol of zeros */
    hf_term *terms;
    int *term_index, *term_begin, *zeros;
    int cap_terms;
    double *mol_dldslot;
    int cap_slots;
};

static void *alloc_array(size_t n, size_t size)
{
    return calloc(n > 0 ? n : 1, size);
}

static void *alloc_aligned(size_t n, size_t size)
{
    size_t bytes = (n > 0 ? n : 1) * size;
    bytes = (bytes + WORKSPACE_ALIGNMENT - 1) / WORKSPACE_ALIGNMENT * WORKSPACE_ALIGNMENT;
    void *p = aligned_alloc(WORKSPACE_ALIGNMENT, bytes);
    if (p != NULL)
        memset(p, 0, bytes);
    return p;
}

static void workspace_free(workspace *w)
{
    free(w->a);
    free(w->ga);
    free(w->z);
    free(w->tmp);
    free(w->tmp2);
    free(w->w);
    free(w->coef);
    free(w->inv_sqrt_mass);
    free(w->basis);
    free(w->work);
    free(w->iwork);
    free(w->assign_work);
    free(w->assign_iwork);
    free(w->col_of_row);
    memset(w, 0, sizeof *w);
}

/* Returns 0, or -1 when out of memory (w is then freed). */
static int workspace_alloc(workspace *w, const hf_objective_state *st)
{
    const size_t d = (size_t)st->max_dim, d2 = d * d;
    w->a = alloc_aligned(d2, sizeof(double));
    w->ga = alloc_aligned(d2, sizeof(double));
    w->z = alloc_aligned(d2, sizeof(double));
    w->tmp = alloc_aligned(d2, sizeof(double));
    w->tmp2 = alloc_aligned(d2, sizeof(double));
    w->w = alloc_aligned(d, sizeof(double));
    w->coef = alloc_aligned(d, sizeof(double));
    w->inv_sqrt_mass = alloc_aligned(d, sizeof(double));
    w->basis = alloc_aligned(6 * d, sizeof(double));
    w->work = alloc_aligned((size_t)st->lwork, sizeof(double));
    w->iwork = alloc_aligned((size_t)st->liwork, sizeof(lapack_int));
    w->assign_work = alloc_aligned(3 * d + 3, sizeof(double));
    w->assign_iwork = alloc_aligned(3 * (d + 1), sizeof(int));
    w->col_of_row = alloc_aligned(d, sizeof(int));
    if (!w->a || !w->ga || !w->z || !w->tmp || !w->tmp2 || !w->w || !w->coef || !w->inv_sqrt_mass || !w->basis ||
        !w->work || !w->iwork || !w->assign_work || !w->assign_iwork || !w->col_of_row) {
        workspace_free(w);
        return -1;
    }
    return 0;
}

void hf_objective_state_destroy(hf_objective_state *st)
{
    if (st == NULL)
        return;
    free(st->mols);
    free(st->int_store);
    free(st->blocks);
    free(st->adjoint);
    for (int t = 0; t < st->n_workspaces; t++)
        workspace_free(&st->ws[t]);
    free(st->order);
    free(st->mol_status);
    free(st->mol_bad);
    free(st->mol_info);
    free(st->res);
    free(st->terms);
    free(st->term_index);
    free(st->term_begin);
    free(st->zeros);
    free(st->mol_dldslot);
    free(st);
}

static int molecule_active(const hf_objective_molecule *m)
{
    return m->pairing != HF_PAIR_NONE || m->n_eig > 0 || m->hess_target != NULL;
}

/* Grows the per-call arrays to the model's terms and slots. Returns 0, or -1 when out of memory. */
static int reserve(hf_objective_state *st, const hf_model *model)
{
    if (model->n_terms > st->cap_terms) {
        hf_term *terms = realloc(st->terms, (size_t)model->n_terms * sizeof *terms);
        if (terms == NULL)
            return -1;
        st->terms = terms;
        int *index = realloc(st->term_index, (size_t)model->n_terms * sizeof *index);
        if (index == NULL)
            return -1;
        st->term_index = index;
        st->cap_terms = model->n_terms;
    }
    if (model->n_slots > st->cap_slots && st->n_molecules > 0) {
        double *d = realloc(st->mol_dldslot, (size_t)st->n_molecules * (size_t)model->n_slots * sizeof *d);
        if (d == NULL)
            return -1;
        st->mol_dldslot = d;
        st->cap_slots = model->n_slots;
    }
    return 0;
}

hf_objective_state *hf_objective_state_create(const hf_model *model, const hf_objective_spec *spec)
{
    hf_objective_state *st = calloc(1, sizeof *st);
    if (st == NULL)
        return NULL;
    const int nm = model->n_molecules;
    st->n_molecules = nm;
    st->mols = alloc_array((size_t)nm, sizeof *st->mols);
    int n_freq = 0, max_dim = 1;
    for (int m = 0; m < nm; m++) {
        const hf_objective_molecule *om = &spec->molecules[m];
        n_freq += om->pairing != HF_PAIR_NONE ? om->n_freq : 0;
        if (molecule_active(om) && 3 * (model->mol_offset[m + 1] - model->mol_offset[m]) > max_dim)
            max_dim = 3 * (model->mol_offset[m + 1] - model->mol_offset[m]);
    }
    st->n_freq_total = n_freq;
    st->max_dim = max_dim;
    st->int_store = alloc_array(2 * (size_t)n_freq, sizeof *st->int_store);
    st->order = alloc_array((size_t)nm, sizeof *st->order);
    st->mol_status = alloc_array((size_t)nm, sizeof *st->mol_status);
    st->mol_bad = alloc_array((size_t)nm, sizeof *st->mol_bad);
    st->mol_info = alloc_array((size_t)nm, sizeof *st->mol_info);
    st->term_begin = alloc_array((size_t)nm + 1, sizeof *st->term_begin);
    st->zeros = alloc_array((size_t)model->n_particles, sizeof *st->zeros);
    if (!st->mols || !st->int_store || !st->order || !st->mol_status || !st->mol_bad || !st->mol_info ||
        !st->term_begin || !st->zeros)
        goto fail;
    n_freq = 0;
    long long res_at = 0;
    for (int m = 0; m < nm; m++) {
        const hf_objective_molecule *om = &spec->molecules[m];
        mol_state *ms = &st->mols[m];
        ms->n_atoms = model->mol_offset[m + 1] - model->mol_offset[m];
        ms->dim = 3 * ms->n_atoms;
        ms->active = molecule_active(om);
        const int nf = om->pairing != HF_PAIR_NONE ? om->n_freq : 0;
        const long long k = om->n_eig;
        ms->res_offset = res_at;
        res_at += nf + k * (k + 1) / 2 + (om->hess_target ? (long long)ms->dim * (ms->dim + 1) / 2 : 0);
        ms->selected = st->int_store + n_freq;
        ms->paired = st->int_store + st->n_freq_total + n_freq;
        for (int j = 0; j < nf; j++)
            ms->selected[j] = ms->paired[j] = -1;
        n_freq += nf;
    }
    st->n_res = res_at;
    st->res = alloc_array((size_t)res_at, sizeof *st->res);
    if (st->res == NULL)
        goto fail;
    /* costliest first (n^3 with targets, n^2 without: only the Hessian block), ties by index */
    for (int m = 0; m < nm; m++) {
        int at = m;
        const double cost = (double)st->mols[m].dim * st->mols[m].dim * (st->mols[m].active ? st->mols[m].dim : 1);
        while (at > 0) {
            const mol_state *p = &st->mols[st->order[at - 1]];
            if ((double)p->dim * p->dim * (p->active ? p->dim : 1) >= cost)
                break;
            st->order[at] = st->order[at - 1];
            at--;
        }
        st->order[at] = m;
    }
    const size_t total = (size_t)model->block_offset[nm], d = (size_t)max_dim, d2 = d * d;
    st->blocks = alloc_array(total, sizeof(double));
    st->adjoint = alloc_array(total, sizeof(double));
    if (!st->blocks || !st->adjoint || reserve(st, model) != 0)
        goto fail;
    /* dsyevd workspace for the largest molecule, with vectors: 1 + 6n + 2n^2 doubles, 3 + 5n ints */
    st->lwork = (lapack_int)(1 + 6 * d + 2 * d2);
    st->liwork = (lapack_int)(3 + 5 * d);
    if (workspace_alloc(&st->ws[0], st) != 0)
        goto fail;
    st->n_workspaces = 1;
    return st;
fail:
    hf_objective_state_destroy(st);
    return NULL;
}

void hf_objective_state_pairing(const hf_objective_state *st, int *modes, int n)
{
    for (int k = 0; k < n && k < st->n_freq_total; k++)
        modes[k] = st->int_store[st->n_freq_total + k];
}

/* ---- pieces of one molecule ------------------------------------------------------------------ */

/* ws->a = M^-1/2 (H + H^T)/2 M^-1/2 (row-major, dim x dim). H comes from hf_hessian_blocks, which
 * mirrors one triangle into the other: it is exactly symmetric, (H_ij + H_ji)/2 = H_ij bit for bit,
 * and a row-wise pass suffices (a column walk for H_ji costs a cache line per element). */
static void mass_weight(workspace *ws, int dim, const double *h)
{
    const double *s = ws->inv_sqrt_mass;
    for (int i = 0; i < dim; i++) {
        const double *hi = h + (size_t)i * dim;
        double *ai = ws->a + (size_t)i * dim;
        for (int j = 0; j < dim; j++)
            ai[j] = hi[j] * s[i] * s[j];
    }
}

/*
 * In place: A <- P A P + s (I - P), P = I - B^T B (B: r orthonormal rows), s = 2 |A|_F + 1 above
 * every eigenvalue of P A P. With X = B A and Y = X B^T (r x r):
 *     P A P + s (I - P) = A + B^T (Y + s I) B - B^T X - X^T B = A + B^T D + D^T B,
 *     D = (Y/2 + (s/2) I) B - X,
 * one rank-2r update (dsyr2k). Only the triangle the eigensolver reads (row-major upper) is
 * updated; the vibrations are then the lowest dim - r eigenpairs.
 */
static void project_rigid_body(workspace *ws, int dim, int r)
{
    double *a = ws->a, *x = ws->tmp, *d = ws->tmp2, y[36], s = 0.0;
    const double *b = ws->basis;
    for (size_t i = 0; i < (size_t)dim * (size_t)dim; i++)
        s += a[i] * a[i];
    s = 2.0 * sqrt(s) + 1.0;
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, r, dim, dim, 1.0, b, dim, a, dim, 0.0, x, dim);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, r, r, dim, 0.5, x, dim, b, dim, 0.0, y, r);
    for (int p = 0; p < r; p++)
        y[p * r + p] += 0.5 * s;
    memcpy(d, x, (size_t)r * (size_t)dim * sizeof *d);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, r, dim, r, 1.0, y, r, b, dim, -1.0, d, dim);
    cblas_dsyr2k(CblasRowMajor, CblasUpper, CblasTrans, dim, r, 1.0, b, dim, d, dim, 1.0, a, dim);
}

/* The frequency matrix of a molecule in ws->a (mass-weighted, projected on request); returns the
 * number of modes in its mode list (dim, or dim - r with projection). */
static int frequency_matrix(workspace *ws, const hf_model *model, int m, const hf_objective_molecule *om,
                            const double *h, const double *pos)
{
    const int n_atoms = model->mol_offset[m + 1] - model->mol_offset[m], dim = 3 * n_atoms;
    mass_weight(ws, dim, h);
    if (!om->project)
        return dim;
    const int r = hf_rigid_body_basis(n_atoms, model->mol_atoms + model->mol_offset[m], pos, om->masses, ws->basis);
    project_rigid_body(ws, dim, r);
    return dim - r;
}

/* All eigenvalues of ws->a (dim x dim, its row-major upper triangle) in ws->w, ascending, with the
 * eigenvectors (when wanted) as rows of ws->z. LAPACKE_dsyevd: divide and conquer, mostly matrix
 * products, is the fastest here for the whole spectrum with vectors (measured at 3n = 108-186:
 * 1.3x faster than dsyevr's MRRR, 2x faster than dsyev's QR; far faster than dsyevr for a partial
 * range, which takes bisection and inverse iteration); without vectors it is dsterf. The
 * eigenvectors are left in place and the buffers swapped, ws->a is garbage afterwards. Returns
 * LAPACK's info. */
static int eigen_all(hf_objective_state *st, workspace *ws, int dim, int vectors)
{
    const int info = (int)LAPACKE_dsyevd_work(LAPACK_COL_MAJOR, vectors ? 'V' : 'N', 'L', dim, ws->a, dim, ws->w,
                                               ws->work, st->lwork, ws->iwork, st->liwork);
    if (info == 0 && vectors) { /* column j of the column-major result is eigenvector j */
        double *t = ws->z;
        ws->z = ws->a;
        ws->a = t;
    }
    return info;
}

static double frequency_of(double eigenvalue, double factor)
{
    return eigenvalue < 0.0 ? -factor * sqrt(-eigenvalue) : factor * sqrt(eigenvalue);
}

/* The position-paired selection, made once: candidates are the modes above the threshold. */
static int select_by_position(hf_objective_state *st, workspace *ws, mol_state *ms, const hf_objective_molecule *om,
                              int n_modes, double factor)
{
    const int info = eigen_all(st, ws, ms->dim, 0);
    if (info != 0)
        return info;
    int count = 0;
    for (int j = 0; j < n_modes && count < om->n_freq; j++)
        if (frequency_of(ws->w[j], factor) > om->freq_threshold)
            ms->selected[count++] = j;
    for (int k = count; k < om->n_freq; k++)
        ms->selected[k] = -1;
    ms->selection_done = 1;
    return 0;
}

/*
 * Frequencies of one molecule: residuals, loss, and (gradient) G_A += sum_j c_j v_j v_j^T.
 * ws->a holds the frequency matrix with n_modes modes. Returns LAPACK's info, or ASSIGNMENT_FAILED
 * when the overlaps are not finite.
 */
static int frequencies(hf_objective_state *st, workspace *ws, mol_state *ms, const hf_objective_molecule *om,
                       int n_modes, double factor, int gradient, double *loss, double *res)
{
    const int dim = ms->dim, nf = om->n_freq;
    int info;
    if (om->pairing == HF_PAIR_BY_POSITION) {
        for (int k = 0; k < nf; k++)
            ms->paired[k] = ms->selected[k];
        if ((info = eigen_all(st, ws, dim, gradient)) != 0)
            return info;
    } else {
        if ((info = eigen_all(st, ws, dim, 1)) != 0)
            return info;
        /* overlaps S = Q Z^T, scores S^2; an optimal assignment in the smaller orientation */
        double *score = ws->tmp;
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, nf, n_modes, dim, 1.0, om->freq_vectors, dim, ws->z, dim,
                    0.0, score, n_modes);
        for (size_t i = 0; i < (size_t)nf * (size_t)n_modes; i++)
            score[i] *= score[i];
        if (nf <= n_modes) {
            if (hf_assign_max_score(nf, n_modes, score, ms->paired, ws->assign_work, ws->assign_iwork) != 0)
                return ASSIGNMENT_FAILED;
        } else {
            double *scoret = ws->tmp2;
            for (int k = 0; k < nf; k++)
                for (int j = 0; j < n_modes; j++)
                    scoret[(size_t)j * nf + k] = score[(size_t)k * n_modes + j];
            if (hf_assign_max_score(n_modes, nf, scoret, ws->col_of_row, ws->assign_work, ws->assign_iwork) != 0)
                return ASSIGNMENT_FAILED;
            for (int k = 0; k < nf; k++)
                ms->paired[k] = -1;
            for (int j = 0; j < n_modes; j++)
                ms->paired[ws->col_of_row[j]] = j;
        }
    }
    if (gradient)
        memset(ws->coef, 0, (size_t)n_modes * sizeof *ws->coef);
    const double l_floor = 1.0 / (factor * factor); /* nu = F sqrt(l) = 1 cm^-1 */
    int any = 0;
    for (int k = 0; k < nf; k++) {
        const int j = ms->paired[k];
        if (j < 0) {
            if (res)
                res[k] = 0.0;
            continue;
        }
        const double l = ws->w[j], nu = frequency_of(l, factor), diff = om->freq_target[k] - nu;
        const double r = om->freq_weight[k] * diff;
        *loss += r * r;
        if (res)
            res[k] = r;
        if (gradient) {
            /* dL/dnu = -2 w^2 (t - nu); dnu/dl = F / (2 sqrt|l|) for either sign of l, |l| at least
             * the eigenvalue of 1 cm^-1 (see the top) */
            const double dl_dnu = -2.0 * om->freq_weight[k] * om->freq_weight[k] * diff;
            if (dl_dnu != 0.0) {
                ws->coef[j] += dl_dnu * factor / (2.0 * sqrt(fmax(fabs(l), l_floor)));
                any = 1;
            }
        }
    }
    if (gradient && any) {
        /* lower triangle of G_A += sum_j c_j v_j v_j^T = P^T P - N^T N, rows sqrt|c_j| v_j (two dsyrk) */
        double *rows = ws->tmp2;
        int n_pos = 0, n_neg = 0;
        for (int pass = 0; pass < 2; pass++)
            for (int j = 0; j < n_modes; j++) {
                const double c = ws->coef[j];
                if (pass == 0 ? !(c > 0.0) : !(c < 0.0))
                    continue;
                const double scale = sqrt(fabs(c));
                double *dst = rows + (size_t)(n_pos + n_neg) * dim;
                for (int i = 0; i < dim; i++)
                    dst[i] = scale * ws->z[(size_t)j * dim + i];
                if (pass == 0)
                    n_pos++;
                else
                    n_neg++;
            }
        if (n_pos > 0)
            cblas_dsyrk(CblasRowMajor, CblasLower, CblasTrans, dim, n_pos, 1.0, rows, dim, 1.0, ws->ga, dim);
        if (n_neg > 0)
            cblas_dsyrk(CblasRowMajor, CblasLower, CblasTrans, dim, n_neg, -1.0, rows + (size_t)n_pos * dim, dim, 1.0,
                        ws->ga, dim);
    }
    return 0;
}

/* Eigenmatrix of one molecule from ws->a (its diagonal is halved): residuals, loss, and
 * G_A += V^T R V. */
static void eigenmatrix(workspace *ws, int dim, const hf_objective_molecule *om, int gradient, double *loss,
                        double *res)
{
    const int k = om->n_eig;
    const double *v = om->eig_vectors;
    double *x = ws->tmp2, *e = ws->tmp;
    /* E = X V^T + V X^T, X = V T with T = tril(A, -1) + diag(A)/2 (T + T^T = A): its lower triangle */
    for (int i = 0; i < dim; i++)
        ws->a[(size_t)i * dim + i] *= 0.5;
    memcpy(x, v, (size_t)k * (size_t)dim * sizeof(double));
    cblas_dtrmm(CblasRowMajor, CblasRight, CblasLower, CblasNoTrans, CblasNonUnit, k, dim, 1.0, ws->a, dim, x, dim);
    cblas_dsyr2k(CblasRowMajor, CblasLower, CblasNoTrans, k, dim, 1.0, x, dim, v, dim, 0.0, e, k);
    /* R = dL/dE on the lower triangle (E_ab, a >= b, is one element); Rs = L + L^T with L = R/2 on
     * the lower triangle. X is no longer needed: L goes there. */
    double *l = ws->tmp2;
    size_t at = 0;
    for (int a = 0; a < k; a++)
        for (int b = 0; b <= a; b++) {
            const size_t ab = (size_t)a * k + b;
            const double wt = om->eig_weight[ab], diff = om->eig_target[ab] - e[ab];
            const double r = wt * diff;
            *loss += r * r;
            if (res)
                res[at] = r;
            at++;
            if (gradient)
                l[ab] = -wt * wt * diff; /* half of dL/dE_ab = -2 w^2 (t - E_ab) */
        }
    if (gradient) {
        /* lower triangle of G_A += V^T (L + L^T) V = X^T V + V^T X, X = L^T V (dtrmm, then dsyr2k) */
        double *y = ws->tmp;
        memcpy(y, v, (size_t)k * (size_t)dim * sizeof(double));
        cblas_dtrmm(CblasRowMajor, CblasLeft, CblasLower, CblasTrans, CblasNonUnit, k, dim, 1.0, l, k, y, dim);
        cblas_dsyr2k(CblasRowMajor, CblasLower, CblasTrans, dim, k, 1.0, y, dim, v, dim, 1.0, ws->ga, dim);
    }
}

/* Hessian elements of one molecule: residuals, loss, and their adjoint added to g (the block of G). */
static void hessian_elements(int dim, const hf_objective_molecule *om, const double *h, double *g, double *loss,
                             double *res)
{
    size_t at = 0;
    for (int i = 0; i < dim; i++)
        for (int j = 0; j <= i; j++) {
            const size_t ij = (size_t)i * dim + j, ji = (size_t)j * dim + i;
            const double wt = om->hess_weight[ij], diff = om->hess_target[ij] - 0.5 * (h[ij] + h[ji]);
            const double r = wt * diff;
            *loss += r * r;
            if (res)
                res[at] = r;
            at++;
            if (g != NULL) /* lower-triangle form of G (see the top) */
                g[ij] += -2.0 * wt * wt * diff;
        }
}

static int all_finite(const double *v, size_t n)
{
    int ok = 1;
    for (size_t i = 0; i < n; i++)
        ok &= fabs(v[i]) <= DBL_MAX;
    return ok;
}

/*
 * The targets of molecule m given its Hessian block h: loss (added), residuals, and with a gradient
 * its adjoint block g (zeroed here first). Returns 0, HF_OBJECTIVE_NONFINITE or
 * HF_OBJECTIVE_EIGENSOLVER (LAPACK's info in *info).
 */
static int molecule_targets(const hf_model *model, const double *pos, const hf_objective_spec *spec,
                            hf_objective_state *st, workspace *ws, int m, const double *h, double *g, double *loss,
                            double *residuals, int *info_out)
{
    const hf_objective_molecule *om = &spec->molecules[m];
    mol_state *ms = &st->mols[m];
    const int dim = ms->dim, nf = om->pairing != HF_PAIR_NONE ? om->n_freq : 0, k = om->n_eig;
    const size_t d2 = (size_t)dim * (size_t)dim;
    double *res_freq = residuals ? residuals + ms->res_offset : NULL;
    double *res_eig = residuals ? residuals + ms->res_offset + nf : NULL;
    double *res_hess = residuals ? residuals + ms->res_offset + nf + (long long)k * (k + 1) / 2 : NULL;
    *info_out = 0;
    if (g != NULL)
        memset(g, 0, d2 * sizeof *g);
    if (!all_finite(h, d2))
        return HF_OBJECTIVE_NONFINITE;
    if (nf > 0 || k > 0) {
        for (int i = 0; i < dim; i++)
            ws->inv_sqrt_mass[i] = 1.0 / sqrt(om->masses[i / 3]);
        if (g != NULL)
            memset(ws->ga, 0, d2 * sizeof(double));
        if (k > 0) { /* before the frequencies, which overwrite ws->a */
            mass_weight(ws, dim, h);
            eigenmatrix(ws, dim, om, g != NULL, loss, res_eig);
        }
        if (nf > 0) {
            int n_modes = frequency_matrix(ws, model, m, om, h, pos), info = 0;
            if (om->pairing == HF_PAIR_BY_POSITION && !ms->selection_done) {
                if ((info = select_by_position(st, ws, ms, om, n_modes, spec->frequency_factor)) == 0)
                    n_modes = frequency_matrix(ws, model, m, om, h, pos); /* the eigensolver overwrote it */
            }
            if (info == 0)
                info = frequencies(st, ws, ms, om, n_modes, spec->frequency_factor, g != NULL, loss, res_freq);
            if (info != 0) {
                *info_out = info == ASSIGNMENT_FAILED ? 0 : info;
                return info == ASSIGNMENT_FAILED ? HF_OBJECTIVE_NONFINITE : HF_OBJECTIVE_EIGENSOLVER;
            }
        }
        if (g != NULL) /* G = M^-1/2 G_A M^-1/2 in lower-triangle form */
            for (int i = 0; i < dim; i++) {
                const double si = ws->inv_sqrt_mass[i];
                for (int j = 0; j < i; j++)
                    g[(size_t)i * dim + j] = 2.0 * ws->ga[(size_t)i * dim + j] * si * ws->inv_sqrt_mass[j];
                g[(size_t)i * dim + i] = ws->ga[(size_t)i * dim + i] * si * si;
            }
    }
    if (om->hess_target != NULL)
        hessian_elements(dim, om, h, g, loss, res_hess);
    return 0;
}

/* ---- the molecule views ---------------------------------------------------------------------- */

/* st->terms: the model's terms grouped by molecule (stable), st->term_index their model indices,
 * molecule m's at [term_begin[m], term_begin[m + 1]). */
static void group_terms(hf_objective_state *st, const hf_model *model)
{
    int *begin = st->term_begin;
    memset(begin, 0, (size_t)(st->n_molecules + 1) * sizeof *begin);
    for (int i = 0; i < model->n_terms; i++)
        begin[model->atom_mol[model->terms[i].atoms[0]] + 1]++;
    for (int m = 0; m < st->n_molecules; m++)
        begin[m + 1] += begin[m];
    for (int i = 0; i < model->n_terms; i++) {
        const int at = begin[model->atom_mol[model->terms[i].atoms[0]]]++;
        st->terms[at] = model->terms[i];
        st->term_index[at] = i;
    }
    for (int m = st->n_molecules; m > 0; m--) /* back to the starts */
        begin[m] = begin[m - 1];
    begin[0] = 0;
}

typedef struct {
    hf_model model;
    int mol_offset[2];
    long long block_offset[2];
    int reduced_offset[2];
} molecule_view;

static void make_view(const hf_objective_state *st, const hf_model *model, int m, molecule_view *v)
{
    v->model = *model;
    v->model.n_molecules = 1;
    v->mol_offset[0] = model->mol_offset[m];
    v->mol_offset[1] = model->mol_offset[m + 1];
    v->model.mol_offset = v->mol_offset;
    v->model.atom_mol = st->zeros;
    v->model.excl_offset = model->excl_offset + m;
    v->block_offset[0] = 0;
    v->block_offset[1] = (long long)st->mols[m].dim * st->mols[m].dim;
    v->model.block_offset = v->block_offset;
    v->model.terms = st->terms + st->term_begin[m];
    v->model.n_terms = st->term_begin[m + 1] - st->term_begin[m];
    if (model->n_reduced > 0) { /* m's reduced particles (hf_reduction.c) */
        v->reduced_offset[0] = 0;
        v->reduced_offset[1] = model->reduced_offset[m + 1] - model->reduced_offset[m];
        v->model.n_reduced = v->reduced_offset[1];
        v->model.reduced = model->reduced + model->reduced_offset[m];
        v->model.reduced_offset = v->reduced_offset;
    }
}

/* The bad-term index of a view as the model's. */
static int model_term(const hf_objective_state *st, int m, int bad)
{
    return bad >= 0 ? st->term_index[st->term_begin[m] + bad] : bad;
}

/* ---- one evaluation -------------------------------------------------------------------------- */

/* The task of molecule m: its Hessian block, residuals and (gradient) slot vector. Sets
 * st->mol_status[m] (0 or an HF_OBJECTIVE_ code), mol_bad and mol_info. */
static void molecule_task(const hf_model *model, const double *table, const double *pos,
                          const hf_objective_spec *spec, hf_objective_state *st, workspace *ws, int m, int gradient,
                          double *residuals)
{
    molecule_view v;
    make_view(st, model, m, &v);
    double *h = st->blocks + model->block_offset[m];
    double *g = gradient ? st->adjoint + model->block_offset[m] : NULL;
    int bad = 0;
    double loss = 0.0; /* the caller sums the residuals */
    st->mol_info[m] = 0;
    if (hf_hessian_blocks(&v.model, table, pos, h, &bad) != 0) {
        st->mol_status[m] = HF_OBJECTIVE_GEOMETRY;
        st->mol_bad[m] = model_term(st, m, bad);
        return;
    }
    if (st->mols[m].active) {
        st->mol_status[m] = molecule_targets(model, pos, spec, st, ws, m, h, g, &loss, residuals, &st->mol_info[m]);
        if (st->mol_status[m] != 0)
            return;
    } else if (g != NULL) {
        memset(g, 0, (size_t)st->mols[m].dim * (size_t)st->mols[m].dim * sizeof *g);
    }
    if (gradient &&
        hf_hessian_contraction_derivatives_of(&v.model, table, pos, g, spec->gradient_slots, spec->n_gradient_slots,
                                              st->mol_dldslot + (size_t)m * model->n_slots, &bad) != 0) {
        st->mol_status[m] = HF_OBJECTIVE_GEOMETRY;
        st->mol_bad[m] = model_term(st, m, bad);
        return;
    }
    st->mol_status[m] = 0;
}

/* HESSFIT_NUM_THREADS when it is a whole number >= 1 (a warning once otherwise), else OpenMP's. */
static int requested_threads(void)
{
    static atomic_int warned = 0;
    const char *e = getenv("HESSFIT_NUM_THREADS");
    if (e != NULL && *e != '\0') {
        char *end = NULL;
        const long v = strtol(e, &end, 10);
        if (*end == '\0' && v >= 1)
            return v < MAX_THREADS ? (int)v : MAX_THREADS;
        if (atomic_exchange(&warned, 1) == 0)
            fprintf(stderr, "hessfit: HESSFIT_NUM_THREADS='%.40s' is not a whole number >= 1; ignored\n", e);
    }
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

static int compute(const hf_model *model, const double *table, const double *pos, const hf_objective_spec *spec,
                   hf_objective_state *st, double *loss, double *dldslot, double *residuals, hf_objective_error *error);

/* The threads for n_tasks independent tasks (at most the requested ones), with a workspace each,
 * made when first needed (fewer threads if memory runs out). */
static int thread_workspaces(hf_objective_state *st, int n_tasks)
{
    int n_threads = requested_threads();
    if (n_threads > n_tasks)
        n_threads = n_tasks > 0 ? n_tasks : 1;
    while (st->n_workspaces < n_threads && workspace_alloc(&st->ws[st->n_workspaces], st) == 0)
        st->n_workspaces++;
    return n_threads < st->n_workspaces ? n_threads : st->n_workspaces;
}

/* OpenBLAS runs single-threaded for the duration of a call (restored after: blas_restore): at these
 * sizes (3n up to a few hundred) its threads cost more than they give, several times over on a busy
 * two-core machine, and the molecules run in threads of their own. Returns the thread count before. */
static int blas_single_threaded(void)
{
    const int threads = openblas_get_num_threads();
    if (threads != 1)
        openblas_set_num_threads(1);
    return threads;
}

/* Restores what blas_single_threaded returned. */
static void blas_restore(int threads)
{
    if (threads != 1)
        openblas_set_num_threads(threads);
}

/* The threads for a list of count independent tasks: the requested ones, at most count. */
static int list_threads(int count)
{
    const int n_threads = requested_threads();
    return n_threads > count ? (count > 0 ? count : 1) : n_threads;
}

/* hf_symmetric_eigen_list and its _float form: REAL matrices, LAPACKE's SYEVD. */
#define DEFINE_SYMMETRIC_EIGEN_LIST(NAME, REAL, SYEVD)                                                          \
    void NAME(int count, const int *dims, REAL *const *matrices, REAL *const *values, int vectors, int *info)   \
    {                                                                                                         \
        const int blas = blas_single_threaded(), n_threads = list_threads(count);                             \
        _Pragma("omp parallel for schedule(dynamic, 1) num_threads(n_threads) if (n_threads > 1)")             \
        for (int k = 0; k < count; k++)                                                                       \
            info[k] = (int)SYEVD(LAPACK_COL_MAJOR, vectors ? 'V' : 'N', 'L', dims[k], matrices[k], dims[k],    \
                                 values[k]);                                                                  \
        blas_restore(blas);                                                                                   \
    }
DEFINE_SYMMETRIC_EIGEN_LIST(hf_symmetric_eigen_list, double, LAPACKE_dsyevd)
DEFINE_SYMMETRIC_EIGEN_LIST(hf_symmetric_eigen_list_float, float, LAPACKE_ssyevd)

int hf_objective_compute(const hf_model *model, const double *table, const double *pos, const hf_objective_spec *spec,
                         hf_objective_state *st, double *loss, double *dldslot, double *residuals,
                         hf_objective_error *error)
{
    const int blas = blas_single_threaded();
    const int status = compute(model, table, pos, spec, st, loss, dldslot, residuals, error);
    blas_restore(blas);
    return status;
}

/* The whole model in one pass (hf_hessian_blocks, then the molecules in order, then one
 * contraction): only when the per-call arrays cannot grow to a rebuilt model (out of memory). The
 * loss and dL/dslot then differ from the usual route's in the last bits (the order of the sums). */
static int compute_whole(const hf_model *model, const double *table, const double *pos,
                         const hf_objective_spec *spec, hf_objective_state *st, double *loss, double *dldslot,
                         double *residuals, hf_objective_error *error)
{
    int bad = 0;
    if (hf_hessian_blocks(model, table, pos, st->blocks, &bad) != 0) {
        error->bad_term = bad;
        return HF_OBJECTIVE_GEOMETRY;
    }
    for (int m = 0; m < st->n_molecules; m++) {
        double *g = dldslot != NULL ? st->adjoint + model->block_offset[m] : NULL;
        int status = 0;
        if (st->mols[m].active)
            status = molecule_targets(model, pos, spec, st, &st->ws[0], m, st->blocks + model->block_offset[m], g,
                                      loss, residuals, &error->info);
        else if (g != NULL)
            memset(g, 0, (size_t)st->mols[m].dim * (size_t)st->mols[m].dim * sizeof *g);
        if (status != 0) {
            error->molecule = m;
            return status;
        }
    }
    if (dldslot != NULL && hf_hessian_contraction_derivatives_of(model, table, pos, st->adjoint, spec->gradient_slots,
                                                                 spec->n_gradient_slots, dldslot, &bad) != 0) {
        error->bad_term = bad;
        return HF_OBJECTIVE_GEOMETRY;
    }
    return 0;
}

static int compute(const hf_model *model, const double *table, const double *pos, const hf_objective_spec *spec,
                   hf_objective_state *st, double *loss, double *dldslot, double *residuals, hf_objective_error *error)
{
    const int gradient = dldslot != NULL, nm = st->n_molecules;
    double *res = residuals != NULL ? residuals : st->res;
    *loss = 0.0;
    if (reserve(st, model) != 0)
        return compute_whole(model, table, pos, spec, st, loss, dldslot, residuals, error);
    group_terms(st, model);
    const int n_threads = thread_workspaces(st, nm);

#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(n_threads) if (n_threads > 1)
#endif
    for (int k = 0; k < nm; k++) {
#ifdef _OPENMP
        workspace *ws = &st->ws[omp_get_thread_num()];
#else
        workspace *ws = &st->ws[0];
#endif
        molecule_task(model, table, pos, spec, st, ws, st->order[k], gradient, res);
    }

    /* the first failure as one pass over all molecules would meet it: an undefined geometry (the
     * lowest listed term, else a nonbonded pair) before the first molecule whose targets failed */
    int bad = INT_MAX, geometry = 0;
    for (int m = 0; m < nm; m++)
        if (st->mol_status[m] == HF_OBJECTIVE_GEOMETRY) {
            geometry = 1;
            if (st->mol_bad[m] >= 0 && st->mol_bad[m] < bad)
                bad = st->mol_bad[m];
        }
    if (geometry) {
        error->bad_term = bad == INT_MAX ? HF_BAD_NONBONDED_PAIR : bad;
        return HF_OBJECTIVE_GEOMETRY;
    }
    for (int m = 0; m < nm; m++)
        if (st->mol_status[m] != 0) {
            error->molecule = m;
            error->info = st->mol_info[m];
            return st->mol_status[m];
        }
    /* L = sum_i r_i^2 in residual order, as one pass over the molecules sums it */
    for (long long i = 0; i < st->n_res; i++)
        *loss += res[i] * res[i];
    if (gradient) {
        memset(dldslot, 0, (size_t)model->n_slots * sizeof *dldslot);
        for (int m = 0; m < nm; m++) {
            const double *d = st->mol_dldslot + (size_t)m * model->n_slots;
            for (int s = 0; s < model->n_slots; s++)
                dldslot[s] += d[s];
        }
    }
    return 0;
}

/* ---- the residual Jacobian of listed molecules ---------------------------------------------- */

long long hf_objective_state_molecule_residuals(const hf_objective_state *st, int m, long long *first)
{
    const long long begin = st->mols[m].res_offset;
    const long long end = m + 1 < st->n_molecules ? st->mols[m + 1].res_offset : st->n_res;
    if (first != NULL)
        *first = begin;
    return end - begin;
}

/* The bilinear pairs of molecule m's residuals (see hf_core.h): the vectors u (rows of dim), the
 * pair of each residual and the factor that turns u^T dH/dp w into d r / dp. ws holds the
 * frequency matrix's eigenpairs (n_modes modes) and the inverse square-root masses. own_pairing:
 * the pairing was given, so the frequency residuals are recomputed with it. */
static int jacobian_pairs(const hf_objective_molecule *om, const workspace *ws, int dim, int n_modes, double factor,
                          const int *pairing, int own_pairing, double *u, int *pairs, double *coef, double *res)
{
    const int nf = om->pairing != HF_PAIR_NONE ? om->n_freq : 0, k = om->n_eig;
    const double *s = ws->inv_sqrt_mass, l_floor = 1.0 / (factor * factor);
    int nv = 0;
    long long r = 0;
    for (int t = 0; t < nf; t++, r++) {
        const int j = pairing[t];
        pairs[2 * r] = pairs[2 * r + 1] = -1;
        coef[r] = 0.0;
        if (j < 0 || j >= n_modes) {
            if (own_pairing)
                res[r] = 0.0;
            continue;
        }
        const double l = ws->w[j], wt = om->freq_weight[t];
        for (int i = 0; i < dim; i++)
            u[(size_t)nv * dim + i] = ws->z[(size_t)j * dim + i] * s[i];
        pairs[2 * r] = pairs[2 * r + 1] = nv++;
        /* d nu / d l = F / (2 sqrt|l|), |l| at least the eigenvalue of 1 cm^-1 (as the gradient) */
        coef[r] = -wt * factor / (2.0 * sqrt(fmax(fabs(l), l_floor)));
        if (own_pairing) /* the residual at the given pairing (else the evaluation's value stands) */
            res[r] = wt * (om->freq_target[t] - frequency_of(l, factor));
    }
    const int eig0 = nv;
    for (int a = 0; a < k; a++, nv++)
        for (int i = 0; i < dim; i++)
            u[(size_t)nv * dim + i] = om->eig_vectors[(size_t)a * dim + i] * s[i];
    for (int a = 0; a < k; a++)
        for (int b = 0; b <= a; b++, r++) {
            pairs[2 * r] = eig0 + a;
            pairs[2 * r + 1] = eig0 + b;
            coef[r] = -om->eig_weight[(size_t)a * k + b];
        }
    if (om->hess_target != NULL) {
        const int unit0 = nv;
        memset(u + (size_t)nv * dim, 0, (size_t)dim * dim * sizeof *u);
        for (int i = 0; i < dim; i++, nv++)
            u[(size_t)nv * dim + i] = 1.0;
        for (int i = 0; i < dim; i++)
            for (int j = 0; j <= i; j++, r++) {
                pairs[2 * r] = unit0 + i;
                pairs[2 * r + 1] = unit0 + j;
                coef[r] = -om->hess_weight[(size_t)i * dim + j];
            }
    }
    return nv;
}

/* The ingredients of molecule m's rows (see hf_core.h): its residuals (residuals, n of them) and in
 * *jp its vectors, pairs and factors (allocated here; map: reduced particles' entries mapped, M u, as a
 * device wants them). paired: m's own pairing or NULL. Touches only m's pieces of st (block, residual
 * range, selection and pairing) and its own scratch, so that the molecules of a list run in threads.
 * Returns 0 or an HF_OBJECTIVE_ code (in *error). */
static int jacobian_prepare(const hf_model *model, const double *table, const double *pos, const hf_objective_spec *spec,
                            hf_objective_state *st, workspace *ws, int m, const int *paired, int map,
                            double *residuals, hf_jacobian_pairs *jp, hf_objective_error *error)
{
    mol_state *ms = &st->mols[m];
    const hf_objective_molecule *om = &spec->molecules[m];
    long long first = 0;
    const long long n = hf_objective_state_molecule_residuals(st, m, &first);
    memset(jp, 0, sizeof *jp);
    jp->dim = ms->dim;
    jp->n_pairs = n;
    molecule_view v;
    make_view(st, model, m, &v);
    double *h = st->blocks + model->block_offset[m];
    int bad = 0, info = 0;
    if (hf_hessian_blocks(&v.model, table, pos, h, &bad) != 0) {
        error->bad_term = model_term(st, m, bad);
        return HF_OBJECTIVE_GEOMETRY;
    }
    if (!ms->active || n == 0) /* no rows to form (n_vectors 0: zero rows) */
        return 0;
    const int nf = om->pairing != HF_PAIR_NONE ? om->n_freq : 0, dim = ms->dim;
    if (paired != NULL && om->pairing == HF_PAIR_BY_POSITION) {
        memcpy(ms->selected, paired, (size_t)nf * sizeof *paired);
        ms->selection_done = 1;
    }
    /* the residuals as an evaluation has them (and the pairing, the inverse square-root masses) */
    double loss = 0.0;
    int status = molecule_targets(model, pos, spec, st, ws, m, h, NULL, &loss, st->res, &info);
    if (status != 0) {
        error->molecule = m;
        error->info = info;
        return status;
    }
    memcpy(residuals, st->res + first, (size_t)n * sizeof *residuals);
    int n_modes = 0;
    if (nf > 0) { /* the frequency matrix's eigenpairs, with vectors */
        n_modes = frequency_matrix(ws, model, m, om, h, pos);
        if ((info = eigen_all(st, ws, dim, 1)) != 0) {
            error->molecule = m;
            error->info = info;
            return HF_OBJECTIVE_EIGENSOLVER;
        }
    }
    const size_t n_vec_max = (size_t)nf + (size_t)om->n_eig + (om->hess_target != NULL ? (size_t)dim : 0);
    jp->vectors = malloc((n_vec_max > 0 ? n_vec_max : 1) * (size_t)dim * sizeof *jp->vectors);
    jp->pairs = malloc(2 * (size_t)n * sizeof *jp->pairs);
    jp->coef = malloc((size_t)n * sizeof *jp->coef);
    if (jp->vectors == NULL || jp->pairs == NULL || jp->coef == NULL)
        return HF_OBJECTIVE_MEMORY;
    jp->n_vectors = jacobian_pairs(om, ws, dim, n_modes, spec->frequency_factor, paired ? paired : ms->paired,
                                   paired != NULL, jp->vectors, jp->pairs, jp->coef, residuals);
    if (map && model->n_reduced > 0)
        hf_reduced_map_molecule_vectors(model, m, jp->n_vectors, jp->vectors);
    return 0;
}

void hf_jacobian_pairs_free(hf_jacobian_pairs *pairs, int n)
{
    for (int p = 0; pairs != NULL && p < n; p++) {
        free(pairs[p].vectors);
        free(pairs[p].pairs);
        free(pairs[p].coef);
        memset(&pairs[p], 0, sizeof pairs[p]);
    }
}

/* Molecule m's residuals (n of them) and slot-major rows jac_t (n_rows x n) with workspace ws (see
 * hf_core.h): jacobian_prepare, then one hf_bilinear_hessian_derivatives pass. slot_row: each
 * slot's row (-1: not wanted), NULL: all. Returns 0 or an HF_OBJECTIVE_ code (in *error). */
static int jacobian_task(const hf_model *model, const double *table, const double *pos, const hf_objective_spec *spec,
                         hf_objective_state *st, workspace *ws, int m, const int *paired, const int *slot_row,
                         size_t n_rows, double *residuals, double *jac_t, hf_objective_error *error)
{
    hf_jacobian_pairs jp;
    int status = jacobian_prepare(model, table, pos, spec, st, ws, m, paired, 0, residuals, &jp, error);
    const long long n = jp.n_pairs;
    if (status == 0 && jp.n_vectors == 0) /* no rows to form (hf_bilinear_hessian_derivatives zeroes the others) */
        memset(jac_t, 0, n_rows * (size_t)n * sizeof *jac_t);
    else if (status == 0) {
        molecule_view v;
        make_view(st, model, m, &v);
        int bad = 0;
        if (hf_bilinear_hessian_derivatives(&v.model, table, pos, 0, jp.n_vectors, jp.vectors, (int)n, jp.pairs,
                                            slot_row, (int)n_rows, jac_t, &bad) != 0) {
            error->bad_term = model_term(st, m, bad);
            status = bad == HF_BAD_OUT_OF_MEMORY ? HF_OBJECTIVE_MEMORY : HF_OBJECTIVE_GEOMETRY;
        }
        for (size_t s = 0; status == 0 && s < n_rows; s++) { /* d r / dp = coef u^T dH/dp w; weight 0: exactly 0 */
            double *row = jac_t + s * (size_t)n;
            for (long long r = 0; r < n; r++)
                row[r] = jp.coef[r] == 0.0 ? 0.0 : jp.coef[r] * row[r];
        }
    }
    hf_jacobian_pairs_free(&jp, 1);
    return status;
}

/* The shared preparation of a list call: the listed molecules' positions (pos_of[m], -1: not
 * listed), their residual offsets (res_at, n_list + 1) and the wanted slots' rows (slot_row, with
 * slots only). Returns 0, or HF_OBJECTIVE_LIST (error->molecule: the list position). */
static int jacobian_list(const hf_objective_state *st, const hf_model *model, const int *molecules, int n_list,
                         const int *slots, int n_wanted, int *pos_of, long long *res_at, int *slot_row,
                         hf_objective_error *error)
{
    for (int m = 0; m < st->n_molecules; m++)
        pos_of[m] = -1;
    res_at[0] = 0;
    for (int p = 0; p < n_list; p++) {
        const int m = molecules[p];
        if (m < 0 || m >= st->n_molecules || pos_of[m] >= 0) {
            error->molecule = p;
            return HF_OBJECTIVE_LIST;
        }
        pos_of[m] = p;
        res_at[p + 1] = res_at[p] + hf_objective_state_molecule_residuals(st, m, NULL);
    }
    for (int s = 0; slots != NULL && s < model->n_slots; s++)
        slot_row[s] = -1;
    for (int k = 0; slots != NULL && k < n_wanted; k++)
        slot_row[slots[k]] = k;
    return 0;
}

/* hf_objective_jacobian (jp NULL) or hf_objective_jacobian_pairs (jp: one per list position). */
static int jacobian(const hf_model *model, const double *table, const double *pos, const hf_objective_spec *spec,
                    hf_objective_state *st, const int *molecules, int n_list, const int *paired, const int *slots,
                    int n_wanted, double *residuals, double *jac_t, hf_jacobian_pairs *jp, hf_objective_error *error)
{
    const size_t n_rows = slots != NULL ? (size_t)n_wanted : (size_t)model->n_slots;
    const int nm = st->n_molecules;
    if (reserve(st, model) != 0)
        return HF_OBJECTIVE_MEMORY;
    group_terms(st, model);
    int *pos_of = alloc_array((size_t)nm, sizeof *pos_of), *status = alloc_array((size_t)n_list, sizeof *status);
    long long *res_at = alloc_array((size_t)n_list + 1, sizeof *res_at);
    hf_objective_error *errors = alloc_array((size_t)n_list, sizeof *errors);
    int *slot_row = slots != NULL ? alloc_array((size_t)model->n_slots, sizeof *slot_row) : NULL;
    int result = HF_OBJECTIVE_MEMORY;
    if (pos_of == NULL || status == NULL || res_at == NULL || errors == NULL || (slots != NULL && slot_row == NULL))
        goto done;
    if ((result = jacobian_list(st, model, molecules, n_list, slots, n_wanted, pos_of, res_at, slot_row, error)) != 0)
        goto done;
    const int n_threads = thread_workspaces(st, n_list);
    /* the listed molecules, costliest first; each writes only its own output ranges */
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(n_threads) if (n_threads > 1)
#endif
    for (int k = 0; k < nm; k++) {
        const int m = st->order[k], p = pos_of[m];
        if (p < 0)
            continue;
#ifdef _OPENMP
        workspace *ws = &st->ws[omp_get_thread_num()];
#else
        workspace *ws = &st->ws[0];
#endif
        const int *own = paired != NULL ? paired + (st->mols[m].paired - (st->int_store + st->n_freq_total)) : NULL;
        errors[p] = *error;
        if (jp != NULL)
            status[p] = jacobian_prepare(model, table, pos, spec, st, ws, m, own, 1, residuals + res_at[p], &jp[p],
                                         &errors[p]);
        else
            status[p] = jacobian_task(model, table, pos, spec, st, ws, m, own, slot_row, n_rows, residuals + res_at[p],
                                      jac_t + n_rows * (size_t)res_at[p], &errors[p]);
    }
    for (int p = 0; p < n_list && result == 0; p++) /* the first failure in list order */
        if ((result = status[p]) != 0)
            *error = errors[p];
done:
    free(pos_of);
    free(status);
    free(res_at);
    free(errors);
    free(slot_row);
    return result;
}

int hf_objective_jacobian(const hf_model *model, const double *table, const double *pos, const hf_objective_spec *spec,
                          hf_objective_state *st, const int *molecules, int n_molecules, const int *paired,
                          const int *slots, int n_wanted, double *residuals, double *jac_t, hf_objective_error *error)
{
    const int blas = blas_single_threaded();
    const int status = jacobian(model, table, pos, spec, st, molecules, n_molecules, paired, slots, n_wanted, residuals,
                                jac_t, NULL, error);
    blas_restore(blas);
    return status;
}

int hf_objective_jacobian_pairs(const hf_model *model, const double *table, const double *pos,
                                const hf_objective_spec *spec, hf_objective_state *st, const int *molecules,
                                int n_molecules, const int *paired, double *residuals, hf_jacobian_pairs *pairs,
                                hf_objective_error *error)
{
    for (int p = 0; p < n_molecules; p++)
        memset(&pairs[p], 0, sizeof pairs[p]);
    const int blas = blas_single_threaded();
    const int status = jacobian(model, table, pos, spec, st, molecules, n_molecules, paired, NULL, 0, residuals, NULL,
                                pairs, error);
    blas_restore(blas);
    if (status != 0)
        hf_jacobian_pairs_free(pairs, n_molecules);
    return status;
}
