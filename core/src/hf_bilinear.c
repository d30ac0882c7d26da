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
 *
 * Distances (bonds, pairs, and both distances of a switched MM3* pair) take a closed form, O(1) per
 * vector and pair: with n the unit vector along the distance r and d_v = v_a - v_b the vector's
 * difference over its two points, g . v = n . d_v and u^T Hq w = (d_u . d_w - (n . d_u)(n . d_w)) / r
 * (Hq = [[A, -A], [-A, A]], A = (I - n n^T) / r). A switched pair's switch distance is between the
 * points y_k = x_u + s_k (x_a - x_u), so its d_v is of the vectors mapped the same way.
 */
#include "hf_core.h"
#include "hf_reduction.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* d w, except that a zero weight gives exactly 0 even where a slot derivative d is infinite; an
 * undefined d (NaN: theta0 of an exactly linear bend, hf_evaluate_term) stays NaN. */
static inline double weighted(double d, double w) { return w == 0.0 && !isnan(d) ? 0.0 : d * w; }

typedef struct {
    int dim, n_vectors, n_pairs;
    const double *vectors;    /* n_vectors x dim */
    const int *pairs;         /* 2 per pair */
    const int *slot_row;      /* per slot: its row of out, -1: not wanted; NULL: row = slot */
    double *out;              /* rows x n_pairs */
    /* per term scratch: each vector's entries on the term's coordinates, g . v, Hq v, nonzero flag
     * (cross terms: per coordinate) */
    double *vloc, *gv, *hv;
    unsigned char *nz;
    double *dv; /* per vector, per distance coordinate (up to 2): its d_v (3) */
} bilinear;

#define LOC_STRIDE (3 * HF_MAX_TERM_ATOMS)

/* The row of out that slot s goes to (-1: not wanted). */
static inline int row_of(const bilinear *b, int s) { return b->slot_row != NULL ? b->slot_row[s] : s; }

/* Whether any of the term's slots is wanted (else the term is skipped unevaluated). */
static int term_wanted(const bilinear *b, const hf_term *t, int n_slots)
{
    for (int s = 0; s < n_slots; s++)
        if (t->slots[s] != HF_NO_SLOT && row_of(b, t->slots[s]) >= 0)
            return 1;
    return 0;
}

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

/* An ordinary term's wanted slots: their rows of out with df''/dp and df'/dp; returns their count. */
static int wanted_slots(const bilinear *b, const hf_term *t, const hf_term_value *val, int *slot, double *d2,
                        double *d1)
{
    int ns = 0;
    for (int s = 0; s < HF_MAX_TERM_SLOTS; s++)
        if (t->slots[s] != HF_NO_SLOT && row_of(b, t->slots[s]) >= 0) {
            slot[ns] = row_of(b, t->slots[s]);
            d2[ns] = val->d2de_dp[s];
            d1[ns++] = val->dde_dp[s];
        }
    return ns;
}

/* Distance coordinate c of every vector: d_v = sum_k wa_k v_{ra_k} - sum_k wb_k v_{rb_k}
 * over its two points (each a weighted sum of two atom entries, weights 1, 0 for a plain atom),
 * g . v = n . d_v into gv[v * HF_MAX_CROSS_COORDS + c]; nz[v] |= d_v != 0. */
static void distance_differences(bilinear *b, int c, const double n[3], const ptrdiff_t ra[2], const double wa[2],
                                 const ptrdiff_t rb[2], const double wb[2])
{
    for (int v = 0; v < b->n_vectors; v++) {
        const double *x = b->vectors + (size_t)v * b->dim;
        double *d = b->dv + (size_t)v * 6 + 3 * c, gx = 0.0;
        int any = 0;
        for (int i = 0; i < 3; i++) {
            d[i] = (wa[0] * x[ra[0] + i] + wa[1] * x[ra[1] + i]) - (wb[0] * x[rb[0] + i] + wb[1] * x[rb[1] + i]);
            gx += n[i] * d[i];
            any |= d[i] != 0.0;
        }
        b->gv[(size_t)v * HF_MAX_CROSS_COORDS + c] = gx;
        b->nz[v] |= (unsigned char)any;
    }
}

/* u^T Hq w of distance coordinate c of length r: (d_u . d_w - (n . d_u)(n . d_w)) / r. */
static inline double distance_hq(const bilinear *b, int c, int u, int w, double inv_r)
{
    const double *du = b->dv + (size_t)u * 6 + 3 * c, *dw = b->dv + (size_t)w * 6 + 3 * c;
    const double gu = b->gv[(size_t)u * HF_MAX_CROSS_COORDS + c], gw = b->gv[(size_t)w * HF_MAX_CROSS_COORDS + c];
    return (du[0] * dw[0] + du[1] * dw[1] + du[2] * dw[2] - gu * gw) * inv_r;
}

/* One term of one distance (2 atoms), the closed form. */
static void bilinear_distance_term(const hf_model *model, const hf_term *t, const hf_term_value *val,
                                   const hf_coordinate_cache *cache, bilinear *b)
{
    const ptrdiff_t ra[2] = {3 * (ptrdiff_t)model->atom_local[t->atoms[0]], 0};
    const ptrdiff_t rb[2] = {3 * (ptrdiff_t)model->atom_local[t->atoms[1]], 0};
    const double one[2] = {1.0, 0.0}, inv_r = 1.0 / cache->q;
    memset(b->nz, 0, (size_t)b->n_vectors);
    distance_differences(b, 0, cache->grad, ra, one, rb, one);
    int slot[HF_MAX_TERM_SLOTS];
    double d2[HF_MAX_TERM_SLOTS], d1[HF_MAX_TERM_SLOTS];
    const int ns = wanted_slots(b, t, val, slot, d2, d1);
    for (int r = 0; r < b->n_pairs; r++) {
        const int u = b->pairs[2 * r], w = b->pairs[2 * r + 1];
        if (u < 0 || w < 0 || !b->nz[u] || !b->nz[w])
            continue;
        const double q = distance_hq(b, 0, u, w, inv_r);
        const double p = b->gv[(size_t)u * HF_MAX_CROSS_COORDS] * b->gv[(size_t)w * HF_MAX_CROSS_COORDS];
        for (int k = 0; k < ns; k++)
            b->out[(size_t)slot[k] * b->n_pairs + r] += weighted(d2[k], p) + weighted(d1[k], q);
    }
}

/* One ordinary term of n atoms. */
static int bilinear_term(const hf_model *model, const hf_term *t, const double *table, const double *pos,
                         bilinear *b, hf_coordinate_cache *cache)
{
    hf_term_value val;
    if (!term_wanted(b, t, HF_MAX_TERM_SLOTS))
        return 0;
    const int n = hf_evaluate_term(model, t, table, pos, 1, !hf_term_is_distance(t), cache, &val);
    if (n < 0)
        return -1;
    if (n == 2) {
        bilinear_distance_term(model, t, &val, cache, b);
        return 0;
    }
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
    int slot[HF_MAX_TERM_SLOTS];
    double d2[HF_MAX_TERM_SLOTS], d1[HF_MAX_TERM_SLOTS];
    const int ns = wanted_slots(b, t, &val, slot, d2, d1);
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

/* A switched MM3* pair i j u v: r_ij and the switch distance |y_0 - y_1|, both closed-form. */
static void bilinear_switched_pair(const hf_model *model, const hf_term *t, const double *pos, const hf_cross_eval *ev,
                                   bilinear *b)
{
    ptrdiff_t row[4];
    double y[2][3], n1[3];
    for (int a = 0; a < 4; a++)
        row[a] = 3 * (ptrdiff_t)model->atom_local[t->atoms[a]];
    for (int k = 0; k < 2; k++) { /* y_k = x_u + s_k (x_a - x_u), as hf_cross.c */
        const double *xa = pos + 3 * (ptrdiff_t)t->atoms[k], *xu = pos + 3 * (ptrdiff_t)t->atoms[2 + k];
        for (int c = 0; c < 3; c++)
            y[k][c] = xu[c] + t->r_scale[k] * (xa[c] - xu[c]);
    }
    const double inv_r[2] = {1.0 / ev->q[0], 1.0 / ev->q[1]};
    for (int c = 0; c < 3; c++)
        n1[c] = (y[0][c] - y[1][c]) * inv_r[1];
    const double one[2] = {1.0, 0.0};
    const ptrdiff_t ri[2] = {row[0], 0}, rj[2] = {row[1], 0}, ru[2] = {row[0], row[2]}, rv[2] = {row[1], row[3]};
    const double wu[2] = {t->r_scale[0], 1.0 - t->r_scale[0]}, wv[2] = {t->r_scale[1], 1.0 - t->r_scale[1]};
    memset(b->nz, 0, (size_t)b->n_vectors);
    distance_differences(b, 0, ev->grad[0], ri, one, rj, one); /* g_0 = (n_ij, -n_ij) */
    distance_differences(b, 1, n1, ru, wu, rv, wv);
    /* per wanted slot: its row and coefficients (df_c/dp, df_c0/dp, df_c1/dp per c); all finite: plain
     * products (a zero weight gives 0 all the same), else the weighted rule */
    int row_k[HF_MAX_CROSS_SLOTS], ns = 0, finite = 1;
    double coef[HF_MAX_CROSS_SLOTS][6];
    for (int s = 0; s < HF_MAX_CROSS_SLOTS; s++)
        if (t->slots[s] != HF_NO_SLOT && row_of(b, t->slots[s]) >= 0) {
            row_k[ns] = row_of(b, t->slots[s]);
            for (int c = 0; c < 2; c++) {
                coef[ns][3 * c] = ev->v.df_dp[s][c];
                coef[ns][3 * c + 1] = ev->v.df2_dp[s][c][0];
                coef[ns][3 * c + 2] = ev->v.df2_dp[s][c][1];
            }
            for (int i = 0; i < 6; i++)
                finite &= isfinite(coef[ns][i]);
            ns++;
        }
    for (int r = 0; r < b->n_pairs; r++) {
        const int u = b->pairs[2 * r], w = b->pairs[2 * r + 1];
        if (u < 0 || w < 0 || !b->nz[u] || !b->nz[w])
            continue;
        const double *gu = b->gv + (size_t)u * HF_MAX_CROSS_COORDS, *gw = b->gv + (size_t)w * HF_MAX_CROSS_COORDS;
        /* per c: u^T Hq_c w, (g_c . u)(g_0 . w), (g_c . u)(g_1 . w) */
        const double x[6] = {distance_hq(b, 0, u, w, inv_r[0]), gu[0] * gw[0], gu[0] * gw[1],
                             distance_hq(b, 1, u, w, inv_r[1]), gu[1] * gw[0], gu[1] * gw[1]};
        for (int k = 0; k < ns; k++) {
            double sum = 0.0;
            if (finite)
                for (int i = 0; i < 6; i++)
                    sum += coef[k][i] * x[i];
            else
                for (int i = 0; i < 6; i++)
                    sum += weighted(coef[k][i], x[i]);
            b->out[(size_t)row_k[k] * b->n_pairs + r] += sum;
        }
    }
}

/* One cross term: its atom entries' coordinates, per coordinate c g_c . v and Hq_c v. */
static int bilinear_cross_term(const hf_model *model, const hf_term *t, const double *table, const double *pos,
                               bilinear *b)
{
    hf_cross_eval ev;
    if (!term_wanted(b, t, HF_MAX_CROSS_SLOTS))
        return 0;
    const int switched = t->kind == HF_TERM_MM3_PAIR_SWITCHED; /* closed-form: no Hq */
    if (hf_evaluate_cross_term(t, table, pos, !switched, &ev) != 0)
        return -1;
    if (switched) {
        bilinear_switched_pair(model, t, pos, &ev, b);
        return 0;
    }
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
            if (t->slots[s] != HF_NO_SLOT && row_of(b, t->slots[s]) >= 0) {
                double sum = 0.0;
                for (int c = 0; c < nc; c++) {
                    sum += weighted(ev.v.df_dp[s][c], q[c]);
                    for (int e = 0; e < nc; e++)
                        sum += weighted(ev.v.df2_dp[s][c][e], gu[c] * gw[e]);
                }
                b->out[(size_t)row_of(b, t->slots[s]) * b->n_pairs + r] += sum;
            }
    }
    return 0;
}

int hf_bilinear_hessian_derivatives(const hf_model *model, const double *table, const double *pos, int m,
                                    int n_vectors, const double *vectors, int n_pairs, const int *pairs,
                                    const int *slot_row, int n_rows, double *out, int *bad_term)
{
    if (model->n_reduced > 0)
        return hf_reduced_bilinear_hessian_derivatives(model, table, pos, m, n_vectors, vectors, n_pairs, pairs,
                                                       slot_row, n_rows, out, bad_term);
    memset(out, 0, (size_t)(slot_row != NULL ? n_rows : model->n_slots) * (size_t)n_pairs * sizeof(double));
    bilinear b;
    b.dim = 3 * (model->mol_offset[m + 1] - model->mol_offset[m]);
    b.n_vectors = n_vectors;
    b.n_pairs = n_pairs;
    b.slot_row = slot_row;
    b.vectors = vectors;
    b.pairs = pairs;
    b.out = out;
    const size_t nv = n_vectors > 0 ? (size_t)n_vectors : 1;
    b.vloc = malloc(nv * LOC_STRIDE * sizeof(double));
    b.hv = malloc(nv * 3 * 12 * sizeof(double));
    b.gv = malloc(nv * HF_MAX_CROSS_COORDS * sizeof(double));
    b.nz = malloc(nv);
    b.dv = malloc(nv * 6 * sizeof(double));
    int rc = 0;
    if (!b.vloc || !b.hv || !b.gv || !b.nz || !b.dv) {
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
    free(b.dv);
    return rc;
}
