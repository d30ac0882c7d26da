/*
 * Hessian-space objectives for all molecules in one call (declared in hf_core.h; the spec's meaning
 * is HessianObjectiveSpec's, plugin/include/HessianObjective.h):
 *
 *   1. the Hessian blocks H_m (hf_hessian_blocks);
 *   2. per molecule with targets, A = M^-1/2 sym(H) M^-1/2 and
 *        eigenmatrix   E = V A V^T (two dgemm), r = w (t - E_ab) for a >= b;
 *        frequencies   A (or, projected, P A P + s (I - P) with s above every vibrational
 *                      eigenvalue, so that the 3n - r vibrations are the lowest eigenpairs and the
 *                      rigid-body directions sit at s, out of the way) diagonalised by
 *                      LAPACKE_dsyevd (all modes); nu = sign(l) F sqrt|l|; targets
 *                      paired by position (a selection made once) or by maximum overlap
 *                      (hf_assign_max_score on (q_k . v_j)^2, every evaluation);
 *        Hessian       r = w (t - (H_ij + H_ji)/2) for i >= j;
 *   3. with a gradient: the adjoint G_m = dL/dH_m,
 *        G_A = sum_j c_j v_j v_j^T (c_j = dL/dnu_j * F / (2 sqrt|l_j|), dl_j/dA = v_j v_j^T,
 *              unchanged by the projection since P v_j = v_j; two dsyrk)
 *            + V^T R V (R_ab = dL/dE_ab, symmetrised; dtrmm + dsyr2k),
 *        G_m = M^-1/2 G_A M^-1/2 + the Hessian-element adjoint dL/dH_ij,
 *      and ONE tr(G^T dH/dslot) contraction over all terms (hf_contract.c) gives dL/dslot.
 *      Since dH/dslot is symmetric and the contraction sums G_ij dH_ij over every entry, G is kept
 *      in lower-triangle form: G_ij (i > j) holds the symmetric G's G_ij + G_ji, the upper triangle
 *      is 0; only the lower triangles of G_A are ever computed (half the products).
 * No Hessian per parameter is ever formed.
 */
#include "hf_core.h"

#include <cblas.h>
#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* frequencies(): the overlaps were not finite (a status besides LAPACK's info values) */
#define ASSIGNMENT_FAILED (-100000)

typedef struct {
    int n_atoms, dim;
    const int *atoms;  /* the molecule's particles, Hessian-block order */
    long long offset;  /* its block */
    int active;        /* has targets */
    int *selected;     /* HF_PAIR_BY_POSITION: mode of each target (-1: unpaired), set once */
    int selection_done;
    int *paired;       /* the last pairing, one per target */
} mol_state;

struct hf_objective_state {
    int n_molecules, max_dim;
    mol_state *mols;
    int *int_store;            /* selected and paired of every molecule */
    int n_freq_total;
    double *blocks, *adjoint;  /* Hessian blocks and G, the model's block layout */
    double *a;                 /* dim^2: the mass-weighted Hessian (overwritten by the eigensolver) */
    double *ga;                /* dim^2: the adjoint in mass-weighted coordinates */
    double *z;                 /* dim^2: eigenvectors, one contiguous row each */
    double *tmp, *tmp2;        /* dim^2 each: scores, products */
    double *w, *coef, *inv_sqrt_mass, *basis; /* dim, dim, dim, 6 dim */
    double *work;              /* dsyevd */
    lapack_int lwork, liwork, *iwork;
    double *assign_work;       /* hf_assign_max_score */
    int *assign_iwork, *col_of_row;
};

static void *alloc_array(size_t n, size_t size)
{
    return calloc(n > 0 ? n : 1, size);
}

void hf_objective_state_destroy(hf_objective_state *st)
{
    if (st == NULL)
        return;
    free(st->mols);
    free(st->int_store);
    free(st->blocks);
    free(st->adjoint);
    free(st->a);
    free(st->ga);
    free(st->z);
    free(st->tmp);
    free(st->tmp2);
    free(st->w);
    free(st->coef);
    free(st->inv_sqrt_mass);
    free(st->basis);
    free(st->work);
    free(st->iwork);
    free(st->assign_work);
    free(st->assign_iwork);
    free(st->col_of_row);
    free(st);
}

static int molecule_active(const hf_objective_molecule *m)
{
    return m->pairing != HF_PAIR_NONE || m->n_eig > 0 || m->hess_target != NULL;
}

hf_objective_state *hf_objective_state_create(const hf_model *model, const hf_objective_spec *spec)
{
    hf_objective_state *st = calloc(1, sizeof *st);
    if (st == NULL)
        return NULL;
    st->n_molecules = model->n_molecules;
    st->mols = alloc_array((size_t)model->n_molecules, sizeof *st->mols);
    int n_freq = 0, max_dim = 1;
    for (int m = 0; m < model->n_molecules; m++) {
        const hf_objective_molecule *om = &spec->molecules[m];
        n_freq += om->pairing != HF_PAIR_NONE ? om->n_freq : 0;
        if (molecule_active(om) && 3 * (model->mol_offset[m + 1] - model->mol_offset[m]) > max_dim)
            max_dim = 3 * (model->mol_offset[m + 1] - model->mol_offset[m]);
    }
    st->n_freq_total = n_freq;
    st->max_dim = max_dim;
    st->int_store = alloc_array(2 * (size_t)n_freq, sizeof *st->int_store);
    if (st->mols == NULL || st->int_store == NULL)
        goto fail;
    n_freq = 0;
    for (int m = 0; m < model->n_molecules; m++) {
        const hf_objective_molecule *om = &spec->molecules[m];
        mol_state *ms = &st->mols[m];
        ms->n_atoms = model->mol_offset[m + 1] - model->mol_offset[m];
        ms->dim = 3 * ms->n_atoms;
        ms->atoms = model->mol_atoms + model->mol_offset[m];
        ms->offset = model->block_offset[m];
        ms->active = molecule_active(om);
        const int nf = om->pairing != HF_PAIR_NONE ? om->n_freq : 0;
        ms->selected = st->int_store + n_freq;
        ms->paired = st->int_store + st->n_freq_total + n_freq;
        for (int k = 0; k < nf; k++)
            ms->selected[k] = ms->paired[k] = -1;
        n_freq += nf;
    }
    const size_t total = (size_t)model->block_offset[model->n_molecules], d = (size_t)max_dim, d2 = d * d;
    st->blocks = alloc_array(total, sizeof(double));
    st->adjoint = alloc_array(total, sizeof(double));
    st->a = alloc_array(d2, sizeof(double));
    st->ga = alloc_array(d2, sizeof(double));
    st->z = alloc_array(d2, sizeof(double));
    st->tmp = alloc_array(d2, sizeof(double));
    st->tmp2 = alloc_array(d2, sizeof(double));
    st->w = alloc_array(d, sizeof(double));
    st->coef = alloc_array(d, sizeof(double));
    st->inv_sqrt_mass = alloc_array(d, sizeof(double));
    st->basis = alloc_array(6 * d, sizeof(double));
    st->assign_work = alloc_array(3 * d + 3, sizeof(double));
    st->assign_iwork = alloc_array(3 * (d + 1), sizeof(int));
    st->col_of_row = alloc_array(d, sizeof(int));
    if (!st->blocks || !st->adjoint || !st->a || !st->ga || !st->z || !st->tmp || !st->tmp2 || !st->w || !st->coef ||
        !st->inv_sqrt_mass || !st->basis || !st->assign_work || !st->assign_iwork || !st->col_of_row)
        goto fail;
    /* dsyevd workspace for the largest molecule, with vectors: 1 + 6n + 2n^2 doubles, 3 + 5n ints */
    st->lwork = (lapack_int)(1 + 6 * d + 2 * d2);
    st->liwork = (lapack_int)(3 + 5 * d);
    st->work = alloc_array((size_t)st->lwork, sizeof(double));
    st->iwork = alloc_array((size_t)st->liwork, sizeof(lapack_int));
    if (st->work == NULL || st->iwork == NULL)
        goto fail;
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

/* st->a = M^-1/2 (H + H^T)/2 M^-1/2 (row-major, dim x dim). */
static void mass_weight(hf_objective_state *st, const mol_state *ms, const double *h)
{
    const int dim = ms->dim;
    for (int i = 0; i < dim; i++)
        for (int j = 0; j < dim; j++)
            st->a[(size_t)i * dim + j] =
                0.5 * (h[(size_t)i * dim + j] + h[(size_t)j * dim + i]) * st->inv_sqrt_mass[i] * st->inv_sqrt_mass[j];
}

/*
 * In place: A <- P A P + s (I - P), P = I - B^T B (B: r orthonormal rows), s = 2 |A|_F + 1 above
 * every eigenvalue of P A P, written as A + B^T (Y + s I) B - B^T X - X^T B with X = B A, Y = X B^T.
 * The vibrations are then the lowest dim - r eigenpairs.
 */
static void project_rigid_body(hf_objective_state *st, int dim, int r)
{
    double *a = st->a, *x = st->tmp, *d = st->tmp2, y[36], s = 0.0;
    const double *b = st->basis;
    for (size_t i = 0; i < (size_t)dim * (size_t)dim; i++)
        s += a[i] * a[i];
    s = 2.0 * sqrt(s) + 1.0;
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, r, dim, dim, 1.0, b, dim, a, dim, 0.0, x, dim);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, r, r, dim, 1.0, x, dim, b, dim, 0.0, y, r);
    for (int p = 0; p < r; p++)
        y[p * r + p] += s;
    /* D = (Y + s I) B - X */
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, r, dim, r, 1.0, y, r, b, dim, 0.0, d, dim);
    for (size_t i = 0; i < (size_t)r * (size_t)dim; i++)
        d[i] -= x[i];
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, dim, dim, r, 1.0, b, dim, d, dim, 1.0, a, dim);
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, dim, dim, r, -1.0, x, dim, b, dim, 1.0, a, dim);
}

/* The frequency matrix of a molecule in st->a (mass-weighted, projected on request); returns the
 * number of modes in its mode list (dim, or dim - r with projection). */
static int frequency_matrix(hf_objective_state *st, const mol_state *ms, const hf_objective_molecule *om,
                            const double *h, const double *pos)
{
    mass_weight(st, ms, h);
    if (!om->project)
        return ms->dim;
    const int r = hf_rigid_body_basis(ms->n_atoms, ms->atoms, pos, om->masses, st->basis);
    project_rigid_body(st, ms->dim, r);
    return ms->dim - r;
}

/* All eigenvalues of st->a (dim x dim) in st->w, ascending, with the eigenvectors (when wanted) as
 * rows of st->z. LAPACKE_dsyevd: divide and conquer, mostly matrix products, is the fastest here
 * for the whole spectrum with vectors (several times faster than dsyevr's MRRR at n ~ 200, and
 * far faster than dsyevr for a partial range, which takes bisection and inverse iteration);
 * without vectors it is dsterf. Returns LAPACK's info. */
static int eigen_all(hf_objective_state *st, int dim, int vectors)
{
    const int info = (int)LAPACKE_dsyevd_work(LAPACK_COL_MAJOR, vectors ? 'V' : 'N', 'L', dim, st->a, dim, st->w,
                                               st->work, st->lwork, st->iwork, st->liwork);
    if (info == 0 && vectors) /* column j of the column-major result is eigenvector j */
        memcpy(st->z, st->a, (size_t)dim * (size_t)dim * sizeof(double));
    return info;
}

static double frequency_of(double eigenvalue, double factor)
{
    return eigenvalue < 0.0 ? -factor * sqrt(-eigenvalue) : factor * sqrt(eigenvalue);
}

/* The position-paired selection, made once: candidates are the modes above the threshold. */
static int select_by_position(hf_objective_state *st, mol_state *ms, const hf_objective_molecule *om, int n_modes,
                              double factor)
{
    const int info = eigen_all(st, ms->dim, 0);
    if (info != 0)
        return info;
    int count = 0;
    for (int j = 0; j < n_modes && count < om->n_freq; j++)
        if (frequency_of(st->w[j], factor) > om->freq_threshold)
            ms->selected[count++] = j;
    for (int k = count; k < om->n_freq; k++)
        ms->selected[k] = -1;
    ms->selection_done = 1;
    return 0;
}

/*
 * Frequencies of one molecule: residuals, loss, and (gradient) G_A += sum_j c_j v_j v_j^T.
 * st->a holds the frequency matrix with n_modes modes. Returns LAPACK's info, or ASSIGNMENT_FAILED
 * when the overlaps are not finite.
 */
static int frequencies(hf_objective_state *st, mol_state *ms, const hf_objective_molecule *om, int n_modes,
                       double factor, int gradient, double *loss, double *res)
{
    const int dim = ms->dim, nf = om->n_freq;
    int info;
    if (om->pairing == HF_PAIR_BY_POSITION) {
        for (int k = 0; k < nf; k++)
            ms->paired[k] = ms->selected[k];
        if ((info = eigen_all(st, dim, gradient)) != 0)
            return info;
    } else {
        if ((info = eigen_all(st, dim, 1)) != 0)
            return info;
        /* overlaps S = Q Z^T, scores S^2; an optimal assignment in the smaller orientation */
        double *score = st->tmp;
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, nf, n_modes, dim, 1.0, om->freq_vectors, dim, st->z, dim,
                    0.0, score, n_modes);
        for (size_t i = 0; i < (size_t)nf * (size_t)n_modes; i++)
            score[i] *= score[i];
        if (nf <= n_modes) {
            if (hf_assign_max_score(nf, n_modes, score, ms->paired, st->assign_work, st->assign_iwork) != 0)
                return ASSIGNMENT_FAILED;
        } else {
            double *scoret = st->tmp2;
            for (int k = 0; k < nf; k++)
                for (int j = 0; j < n_modes; j++)
                    scoret[(size_t)j * nf + k] = score[(size_t)k * n_modes + j];
            if (hf_assign_max_score(n_modes, nf, scoret, st->col_of_row, st->assign_work, st->assign_iwork) != 0)
                return ASSIGNMENT_FAILED;
            for (int k = 0; k < nf; k++)
                ms->paired[k] = -1;
            for (int j = 0; j < n_modes; j++)
                ms->paired[st->col_of_row[j]] = j;
        }
    }
    if (gradient)
        memset(st->coef, 0, (size_t)n_modes * sizeof *st->coef);
    int any = 0;
    for (int k = 0; k < nf; k++) {
        const int j = ms->paired[k];
        if (j < 0) {
            if (res)
                res[k] = 0.0;
            continue;
        }
        const double l = st->w[j], nu = frequency_of(l, factor), diff = om->freq_target[k] - nu;
        const double r = om->freq_weight[k] * diff;
        *loss += r * r;
        if (res)
            res[k] = r;
        if (gradient) {
            /* dL/dnu = -2 w^2 (t - nu); dnu/dl = F / (2 sqrt|l|) for either sign of l */
            const double dl_dnu = -2.0 * om->freq_weight[k] * om->freq_weight[k] * diff;
            if (dl_dnu != 0.0) {
                st->coef[j] += dl_dnu * factor / (2.0 * sqrt(fabs(l)));
                any = 1;
            }
        }
    }
    if (gradient && any) {
        /* lower triangle of G_A += sum_j c_j v_j v_j^T = P^T P - N^T N, rows sqrt|c_j| v_j (two dsyrk) */
        double *rows = st->tmp2;
        int n_pos = 0, n_neg = 0;
        for (int pass = 0; pass < 2; pass++)
            for (int j = 0; j < n_modes; j++) {
                const double c = st->coef[j];
                if (pass == 0 ? !(c > 0.0) : !(c < 0.0))
                    continue;
                const double scale = sqrt(fabs(c));
                double *dst = rows + (size_t)(n_pos + n_neg) * dim;
                for (int i = 0; i < dim; i++)
                    dst[i] = scale * st->z[(size_t)j * dim + i];
                if (pass == 0)
                    n_pos++;
                else
                    n_neg++;
            }
        if (n_pos > 0)
            cblas_dsyrk(CblasRowMajor, CblasLower, CblasTrans, dim, n_pos, 1.0, rows, dim, 1.0, st->ga, dim);
        if (n_neg > 0)
            cblas_dsyrk(CblasRowMajor, CblasLower, CblasTrans, dim, n_neg, -1.0, rows + (size_t)n_pos * dim, dim, 1.0,
                        st->ga, dim);
    }
    return 0;
}

/* Eigenmatrix of one molecule from st->a (unchanged): residuals, loss, and G_A += V^T R V. */
static void eigenmatrix(hf_objective_state *st, const mol_state *ms, const hf_objective_molecule *om, int gradient,
                        double *loss, double *res)
{
    const int dim = ms->dim, k = om->n_eig;
    const double *v = om->eig_vectors;
    double *y = st->tmp, *e = st->tmp2;
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, k, dim, dim, 1.0, v, dim, st->a, dim, 0.0, y, dim);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, k, k, dim, 1.0, y, dim, v, dim, 0.0, e, k);
    /* R = dL/dE on the lower triangle (E_ab, a >= b, is one element); Rs = L + L^T with L = R/2 on
     * the lower triangle. Y is no longer needed: L goes there. */
    double *l = st->tmp;
    size_t at = 0;
    for (int a = 0; a < k; a++)
        for (int b = 0; b <= a; b++) {
            const size_t ab = (size_t)a * k + b, ba = (size_t)b * k + a;
            const double value = 0.5 * (e[ab] + e[ba]), wt = om->eig_weight[ab], diff = om->eig_target[ab] - value;
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
        double *x = st->tmp2;
        memcpy(x, v, (size_t)k * (size_t)dim * sizeof(double));
        cblas_dtrmm(CblasRowMajor, CblasLeft, CblasLower, CblasTrans, CblasNonUnit, k, dim, 1.0, l, k, x, dim);
        cblas_dsyr2k(CblasRowMajor, CblasLower, CblasTrans, dim, k, 1.0, x, dim, v, dim, 1.0, st->ga, dim);
    }
}

/* Hessian elements of one molecule: residuals, loss, and their adjoint added to g (the block of G). */
static void hessian_elements(const mol_state *ms, const hf_objective_molecule *om, const double *h, double *g,
                             double *loss, double *res)
{
    const int dim = ms->dim;
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
            if (g != NULL) /* lower-triangle form of G (see compute) */
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

static int compute(const hf_model *model, const double *table, const double *pos, const hf_objective_spec *spec,
                   hf_objective_state *st, double *loss, double *dldslot, double *residuals, hf_objective_error *error);

/* OpenBLAS runs single-threaded for the duration of the call (restored after): at these sizes
 * (3n up to a few hundred) its threads cost more than they give, several times over on a busy
 * two-core machine. */
int hf_objective_compute(const hf_model *model, const double *table, const double *pos, const hf_objective_spec *spec,
                         hf_objective_state *st, double *loss, double *dldslot, double *residuals,
                         hf_objective_error *error)
{
    const int threads = openblas_get_num_threads();
    if (threads != 1)
        openblas_set_num_threads(1);
    const int status = compute(model, table, pos, spec, st, loss, dldslot, residuals, error);
    if (threads != 1)
        openblas_set_num_threads(threads);
    return status;
}

static int compute(const hf_model *model, const double *table, const double *pos, const hf_objective_spec *spec,
                   hf_objective_state *st, double *loss, double *dldslot, double *residuals, hf_objective_error *error)
{
    const int gradient = dldslot != NULL;
    int bad = 0;
    *loss = 0.0;
    if (hf_hessian_blocks(model, table, pos, st->blocks, &bad) != 0) {
        error->bad_term = bad;
        return HF_OBJECTIVE_GEOMETRY;
    }
    if (gradient)
        memset(st->adjoint, 0, (size_t)model->block_offset[model->n_molecules] * sizeof(double));
    long long res_at = 0;
    for (int m = 0; m < model->n_molecules; m++) {
        const hf_objective_molecule *om = &spec->molecules[m];
        mol_state *ms = &st->mols[m];
        if (!ms->active)
            continue;
        /* the model's arrays may have been rebuilt since the state was made (new terms) */
        ms->atoms = model->mol_atoms + model->mol_offset[m];
        ms->offset = model->block_offset[m];
        const int dim = ms->dim, nf = om->pairing != HF_PAIR_NONE ? om->n_freq : 0;
        const int k = om->n_eig;
        const double *h = st->blocks + ms->offset;
        double *g = gradient ? st->adjoint + ms->offset : NULL;
        double *res_freq = residuals ? residuals + res_at : NULL;
        double *res_eig = residuals ? residuals + res_at + nf : NULL;
        double *res_hess = residuals ? residuals + res_at + nf + (long long)k * (k + 1) / 2 : NULL;
        res_at += nf + (long long)k * (k + 1) / 2 + (om->hess_target ? (long long)dim * (dim + 1) / 2 : 0);
        if (!all_finite(h, (size_t)dim * (size_t)dim)) {
            error->molecule = m;
            error->info = 0;
            return HF_OBJECTIVE_NONFINITE;
        }
        if (nf > 0 || k > 0) {
            for (int i = 0; i < dim; i++)
                st->inv_sqrt_mass[i] = 1.0 / sqrt(om->masses[i / 3]);
            if (gradient)
                memset(st->ga, 0, (size_t)dim * (size_t)dim * sizeof(double));
            if (k > 0) { /* before the frequencies, which overwrite st->a */
                mass_weight(st, ms, h);
                eigenmatrix(st, ms, om, gradient, loss, res_eig);
            }
            if (nf > 0) {
                int n_modes = frequency_matrix(st, ms, om, h, pos), info = 0;
                if (om->pairing == HF_PAIR_BY_POSITION && !ms->selection_done) {
                    if ((info = select_by_position(st, ms, om, n_modes, spec->frequency_factor)) == 0)
                        n_modes = frequency_matrix(st, ms, om, h, pos); /* the eigensolver overwrote it */
                }
                if (info == 0)
                    info = frequencies(st, ms, om, n_modes, spec->frequency_factor, gradient, loss, res_freq);
                if (info != 0) {
                    error->molecule = m;
                    error->info = info == ASSIGNMENT_FAILED ? 0 : info;
                    return info == ASSIGNMENT_FAILED ? HF_OBJECTIVE_NONFINITE : HF_OBJECTIVE_EIGENSOLVER;
                }
            }
            if (gradient) /* G = M^-1/2 G_A M^-1/2 in lower-triangle form */
                for (int i = 0; i < dim; i++) {
                    const double si = st->inv_sqrt_mass[i];
                    for (int j = 0; j < i; j++)
                        g[(size_t)i * dim + j] = 2.0 * st->ga[(size_t)i * dim + j] * si * st->inv_sqrt_mass[j];
                    g[(size_t)i * dim + i] = st->ga[(size_t)i * dim + i] * si * si;
                }
        }
        if (om->hess_target != NULL)
            hessian_elements(ms, om, h, g, loss, res_hess);
    }
    if (gradient && hf_hessian_contraction_derivatives(model, table, pos, st->adjoint, dldslot, &bad) != 0) {
        error->bad_term = bad;
        return HF_OBJECTIVE_GEOMETRY;
    }
    return 0;
}
