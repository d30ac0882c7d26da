/*
 * Bilinear forms of the parameter derivatives of one molecule's Hessian block (declared in
 * hf_core.h): for pairs (u_r, w_r) of vectors over the molecule's 3n coordinates,
 *     out[s][r] = u_r^T (dH_m/dp_s) w_r      for every slot s,
 * in one pass over the molecule's terms. They are the rows of the residual Jacobian of every
 * Hessian-space objective (eigenvalues: u = w = M^-1/2 v; eigenmatrix elements: u = M^-1/2 v_a,
 * w = M^-1/2 v_b; Hessian elements: unit vectors).
 *
 * Per term E = f(q(x); p) with g = dq/dx and Hq = d2q/dx2 over its 3k coordinates,
 *     dH/dp_s = (df''/dp_s) g g^T + (df'/dp_s) Hq,
 * so u^T dH/dp_s w = (df''/dp_s) (g . u)(g . w) + (df'/dp_s) u^T Hq w: per term and vector its
 * g . v and Hq v once (O(k^2)), then per pair two scalars (O(k)) and one update per slot the term
 * uses. A cross term (hf_cross.c) has sum_cd (df_cd/dp_s) (g_c . u)(g_d . w) + sum_c (df_c/dp_s)
 * u^T Hq_c w over its coordinates c. No dH/dp is ever formed.
 */
#include "hf_core.h"
#include "hf_reduction.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* d w, except that a zero weight gives exactly 0 even where a slot derivative d is infinite. */
static inline double weighted(double d, double w) { return w == 0.0 ? 0.0 : d * w; }

typedef struct {
    int dim, n_vectors, n_pairs, n_slots;
    const double *vectors;    /* n_vectors x dim */
    const int *pairs;         /* 2 per pair */
    double *out;              /* n_slots x n_pairs */
    /* per term scratch: each vector's entries on the term's coordinates, g . v, Hq v, nonzero flag
     * (cross terms: per coordinate) */
    double *vloc, *gv, *hv;
    unsigned char *nz;
} bilinear;

#define LOC_STRIDE (3 * HF_MAX_TERM_ATOMS)

/* Gathers every vector's entries at the term's atom entries (k of them, local rows lrow) and flags
 * the vectors that are not zero there. */
static void gather(bilinear *b, int k, const ptrdiff_t *lrow)
{
    for (int v = 0; v < b->n_vectors; v++) {
        const double *src = b->vectors + (size_t)v * b->dim;
        double *dst = b->vloc + (size_t)v * LOC_STRIDE;
        int any = 0;
        for (int a = 0; a < k; a++)
            for (int i = 0; i < 3; i++) {
                dst[3 * a + i] = src[lrow[a] + i];
                any |= dst[3 * a + i] != 0.0;
            }
        b->nz[v] = (unsigned char)any;
    }
}

/* One ordinary term of n atoms. */
static int bilinear_term(const hf_model *model, const hf_term *t, const double *table, const double *pos,
                         bilinear *b, hf_coordinate_cache *cache)
{
    hf_term_value val;
    const int n = hf_evaluate_term(model, t, table, pos, 1, 1, cache, &val);
    if (n < 0)
        return -1;
    const int d = 3 * n;
    ptrdiff_t lrow[4];
    for (int a = 0; a < n; a++)
        lrow[a] = 3 * (ptrdiff_t)model->atom_local[t->atoms[a]];
    gather(b, n, lrow);
    const double *g = cache->grad, *hq = cache->hess;
    for (int v = 0; v < b->n_vectors; v++) {
        if (!b->nz[v])
            continue;
        const double *x = b->vloc + (size_t)v * LOC_STRIDE;
        double *hx = b->hv + (size_t)v * LOC_STRIDE, gx = 0.0;
        for (int i = 0; i < d; i++) {
            double s = 0.0;
            for (int j = 0; j < d; j++)
                s += hq[i * d + j] * x[j];
            hx[i] = s;
            gx += g[i] * x[i];
        }
        b->gv[v] = gx;
    }
    int slot[HF_MAX_TERM_SLOTS], ns = 0;
    double d2[HF_MAX_TERM_SLOTS], d1[HF_MAX_TERM_SLOTS];
    for (int s = 0; s < HF_MAX_TERM_SLOTS; s++)
        if (t->slots[s] != HF_NO_SLOT) {
            slot[ns] = t->slots[s];
            d2[ns] = val.d2de_dp[s];
            d1[ns++] = val.dde_dp[s];
        }
    for (int r = 0; r < b->n_pairs; r++) {
        const int u = b->pairs[2 * r], w = b->pairs[2 * r + 1];
        if (u < 0 || w < 0 || !b->nz[u] || !b->nz[w])
            continue;
        const double *hu = b->hv + (size_t)u * LOC_STRIDE, *xw = b->vloc + (size_t)w * LOC_STRIDE;
        double q = 0.0;
        for (int i = 0; i < d; i++)
            q += hu[i] * xw[i];
        const double p = b->gv[u] * b->gv[w];
        for (int k = 0; k < ns; k++)
            b->out[(size_t)slot[k] * b->n_pairs + r] += weighted(d2[k], p) + weighted(d1[k], q);
    }
    return 0;
}

/* One cross term: its atom entries' coordinates, per coordinate c g_c . v and Hq_c v. */
static int bilinear_cross_term(const hf_model *model, const hf_term *t, const double *table, const double *pos,
                               bilinear *b)
{
    hf_cross_eval ev;
    if (hf_evaluate_cross_term(t, table, pos, 1, &ev) != 0)
        return -1;
    const int nc = ev.n_coords, ne = ev.n_entries;
    ptrdiff_t lrow[HF_MAX_TERM_ATOMS];
    for (int a = 0; a < ne; a++)
        lrow[a] = 3 * (ptrdiff_t)model->atom_local[t->atoms[a]];
    gather(b, ne, lrow);
    /* hv: per vector, per coordinate c, Hq_c v restricted to c's entries (12 each); gv: 3 per vector */
    for (int v = 0; v < b->n_vectors; v++) {
        if (!b->nz[v])
            continue;
        const double *x = b->vloc + (size_t)v * LOC_STRIDE;
        for (int c = 0; c < nc; c++) {
            const int dc = 3 * ev.n[c];
            double xc[12], gx = 0.0;
            for (int a = 0; a < ev.n[c]; a++)
                for (int i = 0; i < 3; i++)
                    xc[3 * a + i] = x[3 * ev.entries[c][a] + i];
            double *hx = b->hv + (size_t)v * (3 * 12) + 12 * c;
            for (int i = 0; i < dc; i++) {
                double s = 0.0;
                for (int j = 0; j < dc; j++)
                    s += ev.hess[c][i * dc + j] * xc[j];
                hx[i] = s;
                gx += ev.grad[c][i] * xc[i];
            }
            b->gv[(size_t)v * HF_MAX_CROSS_COORDS + c] = gx;
        }
    }
    for (int r = 0; r < b->n_pairs; r++) {
        const int u = b->pairs[2 * r], w = b->pairs[2 * r + 1];
        if (u < 0 || w < 0 || !b->nz[u] || !b->nz[w])
            continue;
        const double *xw = b->vloc + (size_t)w * LOC_STRIDE;
        const double *gu = b->gv + (size_t)u * HF_MAX_CROSS_COORDS, *gw = b->gv + (size_t)w * HF_MAX_CROSS_COORDS;
        double q[HF_MAX_CROSS_COORDS];
        for (int c = 0; c < nc; c++) {
            const double *hu = b->hv + (size_t)u * (3 * 12) + 12 * c;
            q[c] = 0.0;
            for (int a = 0; a < ev.n[c]; a++)
                for (int i = 0; i < 3; i++)
                    q[c] += hu[3 * a + i] * xw[3 * ev.entries[c][a] + i];
        }
        for (int s = 0; s < HF_MAX_CROSS_SLOTS; s++)
            if (t->slots[s] != HF_NO_SLOT) {
                double sum = 0.0;
                for (int c = 0; c < nc; c++) {
                    sum += weighted(ev.v.df_dp[s][c], q[c]);
                    for (int e = 0; e < nc; e++)
                        sum += weighted(ev.v.df2_dp[s][c][e], gu[c] * gw[e]);
                }
                b->out[(size_t)t->slots[s] * b->n_pairs + r] += sum;
            }
    }
    return 0;
}

int hf_bilinear_hessian_derivatives(const hf_model *model, const double *table, const double *pos, int m,
                                    int n_vectors, const double *vectors, int n_pairs, const int *pairs, double *out,
                                    int *bad_term)
{
    if (model->n_reduced > 0)
        return hf_reduced_bilinear_hessian_derivatives(model, table, pos, m, n_vectors, vectors, n_pairs, pairs, out,
                                                       bad_term);
    memset(out, 0, (size_t)model->n_slots * (size_t)n_pairs * sizeof(double));
    bilinear b;
    b.dim = 3 * (model->mol_offset[m + 1] - model->mol_offset[m]);
    b.n_vectors = n_vectors;
    b.n_pairs = n_pairs;
    b.n_slots = model->n_slots;
    b.vectors = vectors;
    b.pairs = pairs;
    b.out = out;
    const size_t nv = n_vectors > 0 ? (size_t)n_vectors : 1;
    b.vloc = malloc(nv * LOC_STRIDE * sizeof(double));
    b.hv = malloc(nv * 3 * 12 * sizeof(double));
    b.gv = malloc(nv * HF_MAX_CROSS_COORDS * sizeof(double));
    b.nz = malloc(nv);
    int rc = 0;
    if (!b.vloc || !b.hv || !b.gv || !b.nz) {
        if (bad_term)
            *bad_term = HF_BAD_OUT_OF_MEMORY;
        rc = -1;
        goto done;
    }
    hf_coordinate_cache cache;
    cache.n = 0;
    for (int i = 0; i < model->n_terms && rc == 0; i++) {
        const hf_term *t = &model->terms[i];
        if (model->atom_mol[t->atoms[0]] != m)
            continue;
        if ((hf_is_cross_kind(t->kind) ? bilinear_cross_term(model, t, table, pos, &b)
                                       : bilinear_term(model, t, table, pos, &b, &cache)) != 0) {
            if (bad_term)
                *bad_term = i;
            rc = -1;
        }
    }
    /* the plain nonbonded pairs of the molecule, as hf_contract.c visits them */
    const int *atoms = model->mol_atoms + model->mol_offset[m];
    const int na = model->mol_offset[m + 1] - model->mol_offset[m];
    const unsigned char *excl = model->excluded ? model->excluded + model->excl_offset[m] : NULL;
    hf_term pair;
    cache.n = 0;
    for (int a = 0; a < na && rc == 0; a++)
        for (int c = a + 1; c < na && rc == 0; c++) {
            if (excl && excl[(ptrdiff_t)a * na + c])
                continue;
            if (!hf_plain_pair_term(model, atoms[a], atoms[c], &pair))
                continue;
            if (bilinear_term(model, &pair, table, pos, &b, &cache) != 0) {
                if (bad_term)
                    *bad_term = HF_BAD_NONBONDED_PAIR;
                rc = -1;
            }
        }
done:
    free(b.vloc);
    free(b.hv);
    free(b.gv);
    free(b.nz);
    return rc;
}
