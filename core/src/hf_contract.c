/*
 * Adjoint contractions of the parameter derivatives of the Hessian and of the energy gradient
 * (declared in hf_core.h): for every slot s in one pass over the terms,
 *     tr(G^T dH/dp_s)        (the gradient of any Hessian-space objective, given its adjoint G)
 *     y . d(grad E)/dp_s     (the mixed derivative that implicit differentiation of a geometry needs)
 * without forming dH/dp_s or the Hessian.
 *
 * Every term is E = f(q(x); p) with g = dq/dx, Hq = d2q/dx2 (hf_evaluate_term gives them with f',
 * f'' and their slot derivatives). From dH/dp = (df''/dp) g g^T + (df'/dp) Hq and
 * d(grad E)/dp = (df'/dp) g, with G restricted to the term's 3n coordinates:
 *     tr(G^T dH/dp_s) = (df''/dp_s) g^T G g + (df'/dp_s) <G, Hq>,   <A, B> = sum_ij A_ij B_ij,
 *     y . d(grad E)/dp_s = (df'/dp_s) (g . y).
 * So each term costs two scalars of O((3n)^2) and one update per slot it uses.
 */
#include "hf_core.h"
#include "hf_mm3_pair.h"
#include "hf_reduction.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Atoms per side of a tile of the plain-pair loop. */
#define PAIR_TILE 32

/* What the caller wants (NULL: not wanted). */
typedef struct {
    const double *adjoint; /* G, in the Hessian-block layout */
    double *dhdp;          /* out: tr(G^T dH/dp_s) */
    const double *y;       /* 3 n_particles */
    double *dgdp;          /* out: y . d(grad E)/dp_s */
    const unsigned char *wanted; /* per slot: wanted (NULL: all; a slot >= n_wanted is wanted) */
    int n_wanted;
    const unsigned char *mol_idle; /* per molecule: y is 0 on all its atoms and there is no adjoint, so
                                      its terms contribute exactly 0 (weighted); NULL: none idle */
} contraction;

/* Whether slot (not HF_NO_SLOT) is wanted. */
static inline int slot_wanted(const contraction *c, int slot)
{
    return c->wanted == NULL || slot >= c->n_wanted || c->wanted[slot];
}

/* Whether any of the term's slots is wanted (else it is skipped). */
static inline int term_wanted(const contraction *c, const hf_term *t)
{
    if (c->wanted == NULL)
        return 1;
    for (int s = 0; s < HF_MAX_TERM_SLOTS; s++)
        if (t->slots[s] != HF_NO_SLOT && slot_wanted(c, t->slots[s]))
            return 1;
    return 0;
}

/* d w, except that a zero weight gives exactly 0 even where a slot derivative d is infinite; an
 * undefined d (NaN: theta0 of an exactly linear bend, hf_evaluate_term) stays NaN. */
static inline double weighted(double d, double w) { return w == 0.0 && !isnan(d) ? 0.0 : d * w; }

/*
 * gGg = g^T G g and gh = <G, Hq> over a term of n atoms; G's 3x3 block (a, b) starts at
 * block + lrow[a] dim + lrow[b] (lrow[a] = 3 * local index of atom a, dim = the block's leading
 * dimension). Every entry of G is read (not only one triangle), so a non-symmetric G contracts
 * exactly as sum_ij G_ij dH_ij.
 */
static inline void contract_adjoint(int n, const ptrdiff_t *restrict lrow, ptrdiff_t dim, const double *restrict block,
                                    double q, const double *restrict g, const double *restrict hq, double *gGg,
                                    double *gh)
{
    const int d = 3 * n;
    double s1 = 0.0, s2 = 0.0;
    if (n == 2) {
        /* A distance has g = (g0, -g0) and Hq = [[K, -K], [-K, K]] (hf_term_is_distance; hq is not
         * formed), hence with D = G_00 + G_11 - G_01 - G_10 (3x3 blocks of G):
         * g^T G g = g0^T D g0 and <G, Hq> = <D, K>. */
        const double inv_r = 1.0 / q;
        const double *b00 = block + lrow[0] * dim + lrow[0], *b11 = block + lrow[1] * dim + lrow[1];
        const double *b01 = block + lrow[0] * dim + lrow[1], *b10 = block + lrow[1] * dim + lrow[0];
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) {
                const ptrdiff_t o = i * dim + j;
                const double dij = (b00[o] + b11[o]) - (b01[o] + b10[o]);
                s1 += g[i] * dij * g[j];
                s2 += dij * hf_distance_hessian_entry(g, inv_r, i, j);
            }
    } else {
        for (int a = 0; a < n; a++)
            for (int b = 0; b < n; b++) {
                const double *gab = block + lrow[a] * dim + lrow[b];
                for (int i = 0; i < 3; i++)
                    for (int j = 0; j < 3; j++) {
                        const double v = gab[i * dim + j];
                        s1 += g[3 * a + i] * v * g[3 * b + j];
                        s2 += v * hq[(3 * a + i) * d + 3 * b + j];
                    }
            }
    }
    *gGg = s1;
    *gh = s2;
}

/*
 * A cross term (hf_cross.c): with gGg_cd = g_c^T G g_d, gh_c = <G, Hq_c> and gy_c = g_c . y over the
 * term's atom entries (G read at the entries' particles, so an entry listed twice is counted as the
 * chain rule counts it),
 *     tr(G^T dH/dp_s) = sum_cd (df_cd/dp_s) gGg_cd + sum_c (df_c/dp_s) gh_c,
 *     y . d(grad E)/dp_s = sum_c (df_c/dp_s) gy_c.
 * Returns 0 or -1 (undefined geometry).
 */
static int contract_cross_term(const hf_model *model, const hf_term *t, const double *table, const double *pos,
                               const contraction *c)
{
    hf_cross_eval ev;
    if (hf_evaluate_cross_term(t, table, pos, c->adjoint != NULL, &ev) != 0)
        return -1;
    const int nc = ev.n_coords;
    if (c->adjoint) {
        const int mol = model->atom_mol[t->atoms[0]];
        const ptrdiff_t dim = 3 * (ptrdiff_t)(model->mol_offset[mol + 1] - model->mol_offset[mol]);
        const double *block = c->adjoint + model->block_offset[mol];
        ptrdiff_t lrow[HF_MAX_TERM_ATOMS];
        for (int a = 0; a < ev.n_entries; a++)
            lrow[a] = 3 * (ptrdiff_t)model->atom_local[t->atoms[a]];
        double gGg[HF_MAX_CROSS_COORDS][HF_MAX_CROSS_COORDS], gh[HF_MAX_CROSS_COORDS];
        for (int p = 0; p < nc; p++) {
            const int np = 3 * ev.n[p];
            gh[p] = 0.0;
            for (int q = 0; q < nc; q++)
                gGg[p][q] = 0.0;
            for (int a = 0; a < ev.n[p]; a++)
                for (int q = 0; q < nc; q++)
                    for (int b = 0; b < ev.n[q]; b++) {
                        const double *gab = block + lrow[ev.entries[p][a]] * dim + lrow[ev.entries[q][b]];
                        for (int i = 0; i < 3; i++)
                            for (int j = 0; j < 3; j++) {
                                const double v = gab[i * dim + j];
                                gGg[p][q] += ev.grad[p][3 * a + i] * v * ev.grad[q][3 * b + j];
                                if (q == p)
                                    gh[p] += v * ev.hess[p][(3 * a + i) * np + 3 * b + j];
                            }
                    }
        }
        for (int s = 0; s < HF_MAX_CROSS_SLOTS; s++)
            if (t->slots[s] != HF_NO_SLOT) {
                double sum = 0.0;
                for (int p = 0; p < nc; p++) {
                    sum += ev.v.df_dp[s][p] * gh[p];
                    for (int q = 0; q < nc; q++)
                        sum += ev.v.df2_dp[s][p][q] * gGg[p][q];
                }
                c->dhdp[t->slots[s]] += sum;
            }
    }
    if (c->y) {
        double gy[HF_MAX_CROSS_COORDS];
        for (int p = 0; p < nc; p++) {
            gy[p] = 0.0;
            for (int a = 0; a < ev.n[p]; a++) {
                const double *ya = c->y + 3 * (ptrdiff_t)t->atoms[ev.entries[p][a]];
                gy[p] += ev.grad[p][3 * a] * ya[0] + ev.grad[p][3 * a + 1] * ya[1] + ev.grad[p][3 * a + 2] * ya[2];
            }
        }
        for (int s = 0; s < HF_MAX_CROSS_SLOTS; s++)
            if (t->slots[s] != HF_NO_SLOT) {
                double sum = 0.0;
                for (int p = 0; p < nc; p++)
                    sum += ev.v.df_dp[s][p] * gy[p];
                c->dgdp[t->slots[s]] += sum;
            }
    }
    return 0;
}

/* A switched MM3* pair inside its switch range, in closed form (hf_switched_pair.c): the same sums
 * as contract_cross_term over its distinct particles. Returns 0 or -1 (undefined geometry). */
static int contract_switched_pair(const hf_model *model, const hf_term *t, const double *table, const double *pos,
                                  const contraction *c)
{
    hf_switched_pair sp;
    if (hf_switched_pair_evaluate(t, table, pos, &sp) != 0)
        return -1;
    if (c->adjoint) {
        const int mol = model->atom_mol[t->atoms[0]];
        const ptrdiff_t dim = 3 * (ptrdiff_t)(model->mol_offset[mol + 1] - model->mol_offset[mol]);
        ptrdiff_t lrow[4];
        for (int p = 0; p < sp.n; p++)
            lrow[p] = 3 * (ptrdiff_t)model->atom_local[sp.particle[p]];
        double x[5];
        hf_switched_pair_adjoint(&sp, c->adjoint + model->block_offset[mol], lrow, dim, x);
        for (int s = 0; s < HF_MAX_CROSS_SLOTS; s++)
            if (t->slots[s] != HF_NO_SLOT)
                c->dhdp[t->slots[s]] += sp.v.df2_dp[s][0][0] * x[0] + sp.v.df_dp[s][0] * x[1] +
                                        sp.v.df2_dp[s][1][1] * x[2] + sp.v.df_dp[s][1] * x[3] +
                                        sp.v.df2_dp[s][0][1] * x[4];
    }
    if (c->y) {
        double gr = 0.0, gs = 0.0; /* g_r . y, g_s . y */
        for (int p = 0; p < sp.n; p++) {
            const double *yp = c->y + 3 * (ptrdiff_t)sp.particle[p];
            gr += sp.a[p] * (sp.n_r[0] * yp[0] + sp.n_r[1] * yp[1] + sp.n_r[2] * yp[2]);
            gs += sp.b[p] * (sp.n_s[0] * yp[0] + sp.n_s[1] * yp[1] + sp.n_s[2] * yp[2]);
        }
        for (int s = 0; s < HF_MAX_CROSS_SLOTS; s++)
            if (t->slots[s] != HF_NO_SLOT)
                c->dgdp[t->slots[s]] += sp.v.df_dp[s][0] * gr + sp.v.df_dp[s][1] * gs;
    }
    return 0;
}

/* One term's contributions. Returns 0 or -1 (undefined geometry). */
static int contract_term(const hf_model *model, const hf_term *t, const double *table, const double *pos,
                         const contraction *c, hf_coordinate_cache *cache)
{
    if (!term_wanted(c, t) || (c->mol_idle != NULL && c->mol_idle[model->atom_mol[t->atoms[0]]]))
        return 0;
    if (hf_term_uses_cross_path(t, pos))
        return t->kind == HF_TERM_MM3_PAIR_SWITCHED ? contract_switched_pair(model, t, table, pos, c)
                                                    : contract_cross_term(model, t, table, pos, c);
    hf_term_value v;
    const int n = hf_evaluate_term(model, t, table, pos, 1, c->adjoint != NULL && !hf_term_is_distance(t), cache, &v);
    if (n < 0)
        return -1;
    const double *g = cache->grad;
    if (c->adjoint) {
        /* all atoms of a term lie in one molecule (validated by the caller) */
        const int mol = model->atom_mol[t->atoms[0]];
        const ptrdiff_t dim = 3 * (ptrdiff_t)(model->mol_offset[mol + 1] - model->mol_offset[mol]);
        const double *block = c->adjoint + model->block_offset[mol];
        ptrdiff_t lrow[4];
        for (int a = 0; a < n; a++)
            lrow[a] = 3 * (ptrdiff_t)model->atom_local[t->atoms[a]];
        double gGg, gh;
        switch (n) { /* constant n at each call: the loops unroll */
        case 2: contract_adjoint(2, lrow, dim, block, cache->q, g, cache->hess, &gGg, &gh); break;
        case 3: contract_adjoint(3, lrow, dim, block, cache->q, g, cache->hess, &gGg, &gh); break;
        default: contract_adjoint(4, lrow, dim, block, cache->q, g, cache->hess, &gGg, &gh); break;
        }
        /* only the wanted slots: an unwanted one may be undefined (NaN) at an exactly linear bend */
        for (int s = 0; s < HF_MAX_TERM_SLOTS; s++)
            if (t->slots[s] != HF_NO_SLOT && slot_wanted(c, t->slots[s]))
                c->dhdp[t->slots[s]] += weighted(v.d2de_dp[s], gGg) + weighted(v.dde_dp[s], gh);
    }
    if (c->y) {
        double gy = 0.0;
        for (int k = 0; k < n; k++) {
            const double *yk = c->y + 3 * (ptrdiff_t)t->atoms[k];
            gy += g[3 * k] * yk[0] + g[3 * k + 1] * yk[1] + g[3 * k + 2] * yk[2];
        }
        for (int s = 0; s < HF_MAX_TERM_SLOTS; s++)
            if (t->slots[s] != HF_NO_SLOT)
                c->dgdp[t->slots[s]] += weighted(v.dde_dp[s], gy);
    }
    return 0;
}

/* All listed terms, then the plain nonbonded pairs of every molecule (as hf_assemble.c's general
 * path: the same pairs, in the same order). */
static int contract(const hf_model *model, const double *table, const double *pos, const contraction *c,
                    int *bad_term)
{
    hf_coordinate_cache cache;
    cache.n = 0;
    for (int i = 0; i < model->n_terms; i++)
        if (contract_term(model, &model->terms[i], table, pos, c, &cache) != 0) {
            if (bad_term)
                *bad_term = i;
            return -1;
        }
    hf_term pair;
    cache.n = 0;
    for (int m = 0; m < model->n_molecules; m++) {
        const int *atoms = model->mol_atoms + model->mol_offset[m];
        const int nm = model->mol_offset[m + 1] - model->mol_offset[m];
        if (c->mol_idle != NULL && c->mol_idle[m])
            continue;
        const unsigned char *excl = model->excluded ? model->excluded + model->excl_offset[m] : NULL;
        /* pairs in tiles of PAIR_TILE x PAIR_TILE atoms, so that the blocks G_ab and G_ba they
         * read stay in cache (row by row, G_ba would be a column walk through the whole block) */
        for (int a0 = 0; a0 < nm; a0 += PAIR_TILE)
            for (int b0 = a0; b0 < nm; b0 += PAIR_TILE) {
                const int a1 = a0 + PAIR_TILE < nm ? a0 + PAIR_TILE : nm, b1 = b0 + PAIR_TILE < nm ? b0 + PAIR_TILE : nm;
                for (int a = a0; a < a1; a++)
                    for (int b = (b0 > a + 1 ? b0 : a + 1); b < b1; b++) {
                        if (excl && excl[(ptrdiff_t)a * nm + b])
                            continue;
                        if (!hf_plain_pair_term(model, atoms[a], atoms[b], &pair))
                            continue;
                        if (contract_term(model, &pair, table, pos, c, &cache) != 0) {
                            if (bad_term)
                                *bad_term = HF_BAD_NONBONDED_PAIR;
                            return -1;
                        }
                    }
            }
    }
    return 0;
}

int hf_hessian_contraction_derivatives(const hf_model *model, const double *table, const double *pos,
                                       const double *adjoint, double *out, int *bad_term)
{
    return hf_hessian_contraction_derivatives_of(model, table, pos, adjoint, NULL, 0, out, bad_term);
}

int hf_hessian_contraction_derivatives_of(const hf_model *model, const double *table, const double *pos,
                                          const double *adjoint, const unsigned char *wanted, int n_wanted,
                                          double *out, int *bad_term)
{
    if (model->n_reduced > 0)
        return hf_reduced_hessian_contraction_derivatives(model, table, pos, adjoint, wanted, n_wanted, out, bad_term);
    memset(out, 0, (size_t)model->n_slots * sizeof(double));
    const contraction c = {adjoint, out, NULL, NULL, wanted, n_wanted, NULL};
    return contract(model, table, pos, &c, bad_term);
}

int hf_gradient_contraction_derivatives(const hf_model *model, const double *table, const double *pos,
                                        const double *y, double *out, int *bad_term)
{
    if (model->n_reduced > 0)
        return hf_reduced_gradient_contraction_derivatives(model, table, pos, y, out, bad_term);
    memset(out, 0, (size_t)model->n_slots * sizeof(double));
    /* the molecules where y is 0 (a geometry Jacobian's y lives on one molecule): skipped */
    unsigned char *idle = malloc(model->n_molecules > 0 ? (size_t)model->n_molecules : 1);
    if (idle != NULL)
        for (int m = 0; m < model->n_molecules; m++) {
            idle[m] = 1;
            for (int k = model->mol_offset[m]; k < model->mol_offset[m + 1] && idle[m]; k++) {
                const double *ya = y + 3 * (ptrdiff_t)model->mol_atoms[k];
                idle[m] = ya[0] == 0.0 && ya[1] == 0.0 && ya[2] == 0.0;
            }
        }
    const contraction c = {NULL, NULL, y, out, NULL, 0, idle};
    const int rc = contract(model, table, pos, &c, bad_term);
    free(idle);
    return rc;
}
