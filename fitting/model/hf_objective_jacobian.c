/*
 * The residual Jacobian of the objective (hessfit_objective.h): J[i][j] = d r_i / d x_j over the free
 * values x in their canonical units, exact, and the normal equations J^T J, J^T r that a
 * Levenberg-Marquardt step solves.
 *
 * One call: hessfit_objective_evaluate (the residuals of every part and the frequency pairing),
 * then the parts' rows in slot space, slot-major (the used slots x rows: each term's update streams over
 * the rows), a block at a time:
 *   Hessian-space  one kernel call per block of consecutive molecules with targets
 *                  (hessfit_force_compute_hessian_objective_jacobians: the molecules in threads, each
 *                  molecule's bilinear forms u^T dH/dslot w in one pass over its terms; a block's
 *                  slot-space rows within JACOBIAN_BLOCK_BYTES), each molecule's rows chained and
 *                  sunk in molecule order as below;
 *   energies       hf_energy_part_jacobian;   geometry   hf_geometry_part_jacobian;
 * and the chain to the free values, J_free = J_slot C with C[s][j] = d slot_s / d x_j. The chain is
 * linear in the slot gradient (hessfit_model_slot_gradient_to_free, the MM3* derived slots
 * included), so C's row s is that map applied to the unit vector e_s (hf_model_slot_chain_row, in
 * O(the slot's uses)); C is sparse (a slot follows
 * one free value, a derived one a few), kept as lists per slot; the kernel computes the rows of the
 * slots with any entry alone (a fit of bonded values skips every nonbonded pair). Each block's J^T (free-major) is
 * then copied into J, or accumulated into J^T J (dsyrk) and J^T r, one molecule at a time (the sums
 * in the same order whatever the blocks), so that the normal equations never hold more than one
 * block of slot-space rows and one molecule's free-space block (~10^4 eigenmatrix rows of a 50-atom
 * molecule).
 */
#include "hf_objective_internal.h"
#include "hf_model_internal.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The Hessian-space rows of consecutive molecules are computed in one kernel call (the molecules in
 * threads) while their slot-space block stays within this; a molecule above it is a block alone. */
#define JACOBIAN_BLOCK_BYTES (64.0 * 1024 * 1024)

/* C = d slot / d x as sparse rows: slot s's entries at [begin[s], begin[s + 1]) of free / coef; the
 * slots with any entry (the only ones whose rows the kernel needs to compute) in used[0..n_used). */
typedef struct {
    int n_slots, n_free, n_used;
    int *begin, *free, *used;
    double *coef;
} slot_chain;

static void slot_chain_free(slot_chain *c)
{
    free(c->begin);
    free(c->free);
    free(c->used);
    free(c->coef);
}

static hessfit_status slot_chain_build(const hessfit_model *model, slot_chain *c)
{
    hessfit_status st = HESSFIT_SUCCESS;
    memset(c, 0, sizeof *c);
    c->n_slots = hessfit_model_n_slots(model);
    c->n_free = hessfit_model_n_free(model);
    const size_t ns = (size_t)c->n_slots, nf = (size_t)c->n_free;
    double *row = malloc((nf > 0 ? nf : 1) * sizeof *row);
    hf_model_slot_chain rows;
    if ((st = hf_model_slot_chain_init(model, &rows)) != HESSFIT_SUCCESS) {
        free(row);
        return st;
    }
    size_t cap = ns + nf + 16, nnz = 0;
    c->begin = malloc((ns + 1) * sizeof *c->begin);
    c->used = malloc((ns > 0 ? ns : 1) * sizeof *c->used);
    c->free = malloc(cap * sizeof *c->free);
    c->coef = malloc(cap * sizeof *c->coef);
    if (!row || !c->begin || !c->used || !c->free || !c->coef) {
        st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "objective: Jacobian: no memory for the slot chain");
        goto done;
    }
    for (size_t s = 0; s < ns && st == HESSFIT_SUCCESS; s++) {
        c->begin[s] = (int)nnz;
        hf_model_slot_chain_row(model, &rows, (int)s, row);
        for (size_t j = 0; j < nf && st == HESSFIT_SUCCESS; j++) {
            if (row[j] == 0.0)
                continue;
            if (nnz == cap) {
                cap *= 2;
                int *f = realloc(c->free, cap * sizeof *f);
                double *v = realloc(c->coef, cap * sizeof *v);
                if (f != NULL)
                    c->free = f;
                if (v != NULL)
                    c->coef = v;
                if (f == NULL || v == NULL) {
                    st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "objective: Jacobian: no memory for the slot chain");
                    break;
                }
            }
            c->free[nnz] = (int)j;
            c->coef[nnz++] = row[j];
        }
    }
    if (st == HESSFIT_SUCCESS)
        c->begin[ns] = (int)nnz;
    for (size_t s = 0; s < ns && st == HESSFIT_SUCCESS; s++)
        if (c->begin[s + 1] > c->begin[s])
            c->used[c->n_used++] = (int)s;
done:
    hf_model_slot_chain_free(&rows);
    free(row);
    if (st != HESSFIT_SUCCESS)
        slot_chain_free(c);
    return st;
}

/* jf (n_free x n, free-major, overwritten) = C^T js for js slot-major over the used slots, in their
 * order. */
static void chain_block(const slot_chain *c, const double *js, long long n, double *jf)
{
    memset(jf, 0, (size_t)c->n_free * (size_t)n * sizeof *jf);
    for (int k = 0; k < c->n_used; k++) {
        const int s = c->used[k];
        for (int e = c->begin[s]; e < c->begin[s + 1]; e++)
            cblas_daxpy((int)n, c->coef[e], js + (size_t)k * n, 1, jf + (size_t)c->free[e] * n, 1);
    }
}

/* HESSFIT_SUCCESS, or the error naming the first free value whose row of jf (n_free x n) has a NaN
 * (an undefined derivative: theta0 of an angle at an exactly linear geometry). */
static hessfit_status check_block(const hessfit_model *model, const double *jf, int n_free, long long n)
{
    for (int j = 0; j < n_free; j++)
        for (long long i = 0; i < n; i++)
            if (isnan(jf[(size_t)j * n + i]))
                return hf_model_undefined_derivative(model, j, "objective: Jacobian");
    return HESSFIT_SUCCESS;
}

/* Where the blocks go: a dense J, or the normal equations. */
typedef struct {
    int n_free;
    double *jacobian;          /* n_residuals x n_free, or NULL */
    double *jtj, *jtr;         /* n_free^2 (lower triangle accumulated), n_free; or NULL */
} jacobian_sink;

/* The block of rows [first, first + n) with residuals r and free-major jf (n_free x n). */
static void sink_block(const jacobian_sink *k, long long first, long long n, const double *r, const double *jf)
{
    if (n == 0 || k->n_free == 0)
        return;
    if (k->jacobian != NULL)
        for (long long i = 0; i < n; i++)
            for (int j = 0; j < k->n_free; j++)
                k->jacobian[(size_t)(first + i) * k->n_free + j] = jf[(size_t)j * n + i];
    if (k->jtj != NULL) {
        cblas_dsyrk(CblasRowMajor, CblasLower, CblasNoTrans, k->n_free, (int)n, 1.0, jf, (int)n, 1.0, k->jtj, k->n_free);
        cblas_dgemv(CblasRowMajor, CblasNoTrans, k->n_free, (int)n, 1.0, jf, (int)n, r, 1, 1.0, k->jtr, 1);
    }
}

/* Grows *buf to n doubles. */
static hessfit_status reserve(double **buf, size_t *cap, size_t n)
{
    if (n <= *cap)
        return HESSFIT_SUCCESS;
    double *p = realloc(*buf, n * sizeof *p);
    if (p == NULL)
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "objective: Jacobian: no memory for %zu doubles", n);
    *buf = p;
    *cap = n;
    return HESSFIT_SUCCESS;
}

/* Rows first .. first + n - 1 of the objective, slot-major in js: chained to the free values (into
 * *jf, grown as needed), checked for undefined derivatives, then into the sink. */
static hessfit_status chain_into_sink(const hessfit_model *model, const slot_chain *chain, const double *js,
                                      long long first, long long n, const double *res, const jacobian_sink *sink,
                                      double **jf, size_t *cap_jf)
{
    hessfit_status st = reserve(jf, cap_jf, (size_t)chain->n_free * (size_t)n);
    if (st != HESSFIT_SUCCESS)
        return st;
    chain_block(chain, js, n, *jf);
    if ((st = check_block(model, *jf, chain->n_free, n)) != HESSFIT_SUCCESS)
        return st;
    sink_block(sink, first, n, res + first, *jf);
    return HESSFIT_SUCCESS;
}

/* Evaluate (residuals into res, every part's), then every block of rows into the sink. */
static hessfit_status jacobian_blocks(hessfit_objective *obj, const double *x_free, double *loss, double *res,
                                      const jacobian_sink *sink)
{
    hessfit_status st;
    if ((st = hessfit_objective_evaluate(obj, x_free, loss, NULL, res)) != HESSFIT_SUCCESS)
        return st;
    slot_chain chain;
    if ((st = slot_chain_build(obj->model, &chain)) != HESSFIT_SUCCESS)
        return st;
    const size_t n_used = (size_t)chain.n_used;
    double *js = NULL, *jf = NULL, *r = NULL;
    size_t cap_js = 0, cap_jf = 0, cap_r = 0;
    hessfit_force *force = hessfit_model_force(obj->model);
    OpenMM_Context *context = hessfit_model_context(obj->model);
    const int n_mols = hessfit_model_n_molecules(obj->model);
    int *list = malloc((size_t)(n_mols > 0 ? n_mols : 1) * sizeof *list);
    if (list == NULL)
        st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "objective: Jacobian: no memory for %d molecules", n_mols);
    for (int next = 0; next < n_mols && st == HESSFIT_SUCCESS;) {
        /* a block: the next molecules with residuals while their slot-space rows fit the budget */
        int n_list = 0;
        long long rows = 0;
        for (; next < n_mols; next++) {
            const long long n = obj->mol_res[next + 1] - obj->mol_res[next];
            if (n == 0)
                continue;
            if (n_list > 0 && (double)n_used * (double)(rows + n) * sizeof(double) > JACOBIAN_BLOCK_BYTES)
                break;
            list[n_list++] = next;
            rows += n;
        }
        if (n_list == 0)
            break;
        if ((st = reserve(&js, &cap_js, n_used * (size_t)rows)) != HESSFIT_SUCCESS ||
            (st = reserve(&r, &cap_r, (size_t)rows)) != HESSFIT_SUCCESS)
            break;
        /* only the slots a free value moves: the kernel skips the terms of the others */
        const hessfit_status hs = chain.n_used == 0 ? HESSFIT_SUCCESS
                                                    : hessfit_force_compute_hessian_objective_jacobians(
                                                          force, context, list, n_list, chain.used, chain.n_used, r,
                                                          rows, js, (long long)chain.n_used * rows);
        if (hs != HESSFIT_SUCCESS) {
            st = hessfit_error(hs, "objective: Jacobian: hessfit_force_compute_hessian_objective_jacobians: %s: %s",
                               hessfit_status_string(hs), hessfit_last_error());
            break;
        }
        /* the molecules' blocks in list order: molecule m's n rows at n_used times the rows before it */
        const double *block = js;
        for (int p = 0; p < n_list && st == HESSFIT_SUCCESS; p++) {
            const long long first = obj->mol_res[list[p]], n = obj->mol_res[list[p] + 1] - first;
            st = chain_into_sink(obj->model, &chain, block, first, n, res, sink, &jf, &cap_jf);
            block += n_used * (size_t)n;
        }
    }
    free(list);
    for (int part = 0; part < 2 && st == HESSFIT_SUCCESS; part++) {
        long long first = 0, n = 0;
        hessfit_objective_part_range(obj, part == 0 ? HESSFIT_OBJ_PART_ENERGIES : HESSFIT_OBJ_PART_GEOMETRY, &first, &n);
        if (n == 0)
            continue;
        if ((st = reserve(&js, &cap_js, n_used * (size_t)n)) != HESSFIT_SUCCESS)
            break;
        st = part == 0 ? hf_energy_part_jacobian(obj->energies, obj->model, chain.used, chain.n_used, js)
                       : hf_geometry_part_jacobian(obj->geometry, obj->model, chain.used, chain.n_used, js);
        if (st == HESSFIT_SUCCESS)
            st = chain_into_sink(obj->model, &chain, js, first, n, res, sink, &jf, &cap_jf);
    }
    free(js);
    free(jf);
    free(r);
    slot_chain_free(&chain);
    return st;
}

hessfit_status hessfit_objective_jacobian(hessfit_objective *obj, const double *x_free, double *loss, double *residuals,
                                          double *jacobian)
{
    if (obj == NULL || residuals == NULL || jacobian == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_objective_jacobian: %s is NULL",
                             obj == NULL ? "objective" : residuals == NULL ? "residuals" : "jacobian");
    double l = 0.0;
    const jacobian_sink sink = {hessfit_model_n_free(obj->model), jacobian, NULL, NULL};
    memset(jacobian, 0, (size_t)obj->n_residuals * (size_t)sink.n_free * sizeof *jacobian);
    const hessfit_status st = jacobian_blocks(obj, x_free, &l, residuals, &sink);
    if (loss != NULL)
        *loss = l;
    return st;
}

hessfit_status hessfit_objective_normal_equations(hessfit_objective *obj, const double *x_free, double *loss, double *jtj,
                                                  double *jtr)
{
    if (obj == NULL || loss == NULL || jtj == NULL || jtr == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_objective_normal_equations: %s is NULL",
                             obj == NULL ? "objective" : loss == NULL ? "loss" : jtj == NULL ? "jtj" : "jtr");
    const int n_free = hessfit_model_n_free(obj->model);
    double *res = malloc((size_t)(obj->n_residuals > 0 ? obj->n_residuals : 1) * sizeof *res);
    if (res == NULL)
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "hessfit_objective_normal_equations: no memory for %lld residuals",
                             obj->n_residuals);
    memset(jtj, 0, (size_t)n_free * (size_t)n_free * sizeof *jtj);
    memset(jtr, 0, (size_t)n_free * sizeof *jtr);
    const jacobian_sink sink = {n_free, NULL, jtj, jtr};
    const hessfit_status st = jacobian_blocks(obj, x_free, loss, res, &sink);
    free(res);
    for (int i = 0; i < n_free; i++) /* dsyrk filled the lower triangle */
        for (int j = i + 1; j < n_free; j++)
            jtj[(size_t)i * n_free + j] = jtj[(size_t)j * n_free + i];
    return st;
}
