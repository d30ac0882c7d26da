/*
 * Assembly of the whole force: energy and forces, per-molecule Hessian blocks, and dE/dslot;
 * per-molecule energies E_m and the weighted sum sum_m w_m dE_m/dslot (adjoint of any loss of the E_m).
 *
 * Every contribution is one term E = f(q(x); p): the listed terms of the model, and the plain
 * nonbonded pairs (all local pairs a < b of each molecule not marked excluded), which are turned
 * on the fly into HF_TERM_PAIR_COMBINED terms with scales 1 and the particles' slots, so one
 * evaluation step (hf_evaluate_term) serves all. From it:
 *     forces -= f' dq/dx,   H += f'' (dq/dx)(dq/dx)^T + f' d2q/dx2,   dE/dslot += w_m df/dp_s,
 * with w_m = 1, or the caller's weight of the term's molecule m; E_m += f.
 */
#include "hf_core.h"
#include "hf_mm3_pair.h"
#include "hf_pair.h"
#include "hf_reduction.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

/* What the caller wants from each term (NULL: not wanted). */
typedef struct {
    double energy;
    double *forces;
    double *blocks;
    double *dedp;
    double *mol_energies;       /* per molecule: E_m */
    const double *mol_weights;  /* per molecule: w_m, the weight of its terms in dedp (NULL: all 1) */
} accumulator;

int hf_term_atom_entries(int kind)
{
    switch (kind) {
    case HF_TERM_BOND:
    case HF_TERM_MM3_BOND:
    case HF_TERM_MM3_PAIR:
    case HF_TERM_PAIR:
    case HF_TERM_PAIR_COMBINED:
    case HF_TERM_HBOND_10_12: return 2;
    case HF_TERM_ANGLE:
    case HF_TERM_MM3_ANGLE:
    case HF_TERM_MM3_STRETCH_BEND: return 3;
    case HF_TERM_PERIODIC:
    case HF_TERM_RB:
    case HF_TERM_HARMONIC_DIHEDRAL:
    case HF_TERM_MM3_TORSION_STRETCH:
    case HF_TERM_MM3_PAIR_SWITCHED: return 4;
    case HF_TERM_MM3_BEND_BEND: return 5;
    default: return 0;
    }
}

/*
 * An exactly linear bend (hf_geometry.c's linear_angle: q = pi, dq/dx = 0, M in place of d2q/dx2):
 * E = f(theta) with f'(pi) = 0 has grad E = 0 and H = f''(pi) M there, and d/dslot of them
 * (df''/dslot) M for a slot p that keeps f'(pi) = 0 (df'(pi)/dp = 0: k when theta0 = pi). The
 * composers form d2e g g^T + de Hq and (d2de_dp) g g^T + (dde_dp) Hq, so with g = 0 the
 * coefficients of M go where they use f' and df'/dp: de = f''(pi), dde_dp = d2de_dp (the slot
 * derivatives of f''); d2de_dp multiplies g g^T = 0 and becomes 0. A slot with df'(pi)/dp != 0
 * (theta0: -f''(pi)) moves the bend off f'(pi) = 0, where the energy has a cusp at the linear
 * geometry: the derivative of the forces and Hessian with respect to it is undefined there, so NaN,
 * which a composer that uses it carries into that slot's entry only (the fitting layer stops when
 * a free value's gradient is NaN). Returns 0, or -1 when the term is not a bend or f'(pi) != 0
 * (theta0 != pi: a cusp, not smooth).
 */
static int linear_bend_limit(const hf_term *t, hf_term_value *v)
{
    if ((t->kind != HF_TERM_ANGLE && t->kind != HF_TERM_MM3_ANGLE) || v->de != 0.0)
        return -1;
    v->de = v->d2e;
    for (int s = 0; s < HF_MAX_TERM_SLOTS; s++) {
        v->dde_dp[s] = v->dde_dp[s] == 0.0 ? v->d2de_dp[s] : NAN;
        v->d2de_dp[s] = 0.0;
    }
    return 0;
}

/*
 * The one shared step (also used by hf_contract.c): the term's coordinate q with its gradient
 * (3n, if want_grad) and Hessian (3n x 3n, if want_hess) in the cache, then its scalar f, f', f''
 * and parameter derivatives. Returns the number of atoms n, or -1 when the geometry is undefined
 * (or the kind unknown).
 */
int hf_evaluate_term(const hf_model *model, const hf_term *t, const double *table, const double *pos,
                     int want_grad, int want_hess, hf_coordinate_cache *c, hf_term_value *v)
{
    /* a switched MM3* pair outside its switch range: the pair on its atoms i, j with S constant */
    const int switched = t->kind == HF_TERM_MM3_PAIR_SWITCHED;
    const int n = switched ? 2 : hf_term_atom_entries(t->kind);
    if (n == 0 || (hf_is_cross_kind(t->kind) && !switched))
        return -1;
    int same = c->n == n && c->has_grad >= want_grad && c->has_hess >= want_hess;
    for (int k = 0; k < n && same; k++)
        same = c->atoms[k] == t->atoms[k];
    if (!same) {
        const double *x[4] = {NULL, NULL, NULL, NULL};
        for (int k = 0; k < n; k++)
            x[k] = pos + 3 * (ptrdiff_t)t->atoms[k];
        c->n = 0;
        const int rc = hf_coordinate(n, x, &c->q, want_grad ? c->grad : NULL, want_hess ? c->hess : NULL);
        if (rc != 0 && rc != HF_COORDINATE_LINEAR)
            return -1;
        c->linear = rc == HF_COORDINATE_LINEAR;
        c->n = n;
        for (int k = 0; k < n; k++)
            c->atoms[k] = t->atoms[k];
        c->has_grad = want_grad;
        c->has_hess = want_hess;
    }
    if (switched) {
        double sw[3];
        hf_mm3_switch(hf_mm3_switch_distance(t, pos), sw);
        sw[1] = sw[2] = 0.0; /* S' = S'' = 0 outside (on, off), where this path is taken */
        hf_mm3_pair_scalar(t, table, c->q, sw, v);
    } else {
        hf_term_scalar(model, t, table, c->q, v);
    }
    if (c->linear && linear_bend_limit(t, v) != 0)
        return -1;
    return n;
}

/*
 * Hessian accumulation: block += f'' g g^T + f' Hq for a term of n atoms, g = dq/dx (3n),
 * Hq = d2q/dx2 (3n x 3n), into the UPPER triangle of the molecule's block only (row <= column);
 * hf_hessian_blocks mirrors it once all terms are in. (Adding each entry at both mirror positions
 * instead makes every pair touch a column of the block: several times slower for 10^5 pairs.)
 * lrow[a] = 3 * (local index of atom a); dim = the block's leading dimension; k = the 3x3 block
 * (a, b) of the term's Hessian. n is a constant at each call site, so the loops unroll.
 */
static inline void add_upper_block(const double *restrict k, ptrdiff_t ra, ptrdiff_t rb, ptrdiff_t dim,
                                   double *restrict block)
{
    if (ra < rb) {
        double *dst = block + ra * dim + rb;
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                dst[i * dim + j] += k[3 * i + j];
    } else if (ra > rb) {
        double *dst = block + rb * dim + ra;
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                dst[i * dim + j] += k[3 * j + i];
    } else { /* a diagonal block: its upper triangle */
        double *dst = block + ra * dim + ra;
        for (int i = 0; i < 3; i++)
            for (int j = i; j < 3; j++)
                dst[i * dim + j] += k[3 * i + j];
    }
}

static inline void add_term_hessian(int n, const ptrdiff_t *restrict lrow, ptrdiff_t dim, double d2e, double de,
                                    double q, const double *restrict g, const double *restrict hq,
                                    double *restrict block)
{
    const int d = 3 * n;
    double k[9]; /* one 3x3 block (a, b) of the term's Hessian */
    if (n == 2) {
        /* A distance has the Hessian [[K, -K], [-K, K]] (hf_term_is_distance; hq is not formed),
         * so only K is computed. */
        const double inv_r = 1.0 / q;
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                k[3 * i + j] = d2e * g[i] * g[j] + de * hf_distance_hessian_entry(g, inv_r, i, j);
        add_upper_block(k, lrow[0], lrow[0], dim, block);
        add_upper_block(k, lrow[1], lrow[1], dim, block);
        for (int i = 0; i < 9; i++)
            k[i] = -k[i];
        add_upper_block(k, lrow[0], lrow[1], dim, block);
        return;
    }
    for (int a = 0; a < n; a++)
        for (int b = a; b < n; b++) {
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++)
                    k[3 * i + j] = d2e * g[3 * a + i] * g[3 * b + j] + de * hq[(3 * a + i) * d + 3 * b + j];
            add_upper_block(k, lrow[a], lrow[b], dim, block);
        }
}

/* Copy the upper triangle of a dim x dim row-major matrix to its lower triangle (tiled transpose). */
static void mirror_upper(double *h, ptrdiff_t dim)
{
    enum { TILE = 64 };
    for (ptrdiff_t i0 = 0; i0 < dim; i0 += TILE)
        for (ptrdiff_t j0 = i0; j0 < dim; j0 += TILE) {
            const ptrdiff_t i1 = i0 + TILE < dim ? i0 + TILE : dim, j1 = j0 + TILE < dim ? j0 + TILE : dim;
            for (ptrdiff_t i = i0; i < i1; i++)
                for (ptrdiff_t j = (j0 > i + 1 ? j0 : i + 1); j < j1; j++)
                    h[j * dim + i] = h[i * dim + j];
        }
}

/* The weight of molecule mol's terms in dedp (1 without per-molecule weights). */
static inline double molecule_weight(const accumulator *acc, int mol)
{
    return acc->mol_weights ? acc->mol_weights[mol] : 1.0;
}

/* dedp += w de/dslot over the term's n_slots slot entries, w its molecule's weight (a zero weight
 * adds exactly 0, even where a slot derivative is infinite: hf_terms.c). */
static inline void add_slot_derivatives(accumulator *acc, int mol, const hf_term *t, const double *de_dp, int n_slots)
{
    const double w = molecule_weight(acc, mol);
    if (acc->dedp == NULL || w == 0.0)
        return;
    for (int s = 0; s < n_slots; s++)
        if (t->slots[s] != HF_NO_SLOT)
            acc->dedp[t->slots[s]] += w * de_dp[s];
}

/* A cross term (hf_cross.c): its gradient and Hessian over its atom entries, added as for any term.
 * Entries a < b naming one particle (a bend-bend whose angles share an outer atom) add
 * X + X^T to that particle's diagonal block, X = the term's block (a, b). Returns 0 or -1. */
static int accumulate_cross_term(const hf_model *model, const hf_term *t, const double *table, const double *pos,
                                 accumulator *acc)
{
    hf_cross_eval ev;
    if (hf_evaluate_cross_term(t, table, pos, acc->blocks != NULL, &ev) != 0)
        return -1;
    const int mol = model->atom_mol[t->atoms[0]], ne = ev.n_entries, dim = 3 * ne;
    acc->energy += ev.v.e;
    if (acc->mol_energies)
        acc->mol_energies[mol] += ev.v.e;
    if (acc->forces || acc->blocks) {
        double grad[3 * HF_MAX_TERM_ATOMS], hess[9 * HF_MAX_TERM_ATOMS * HF_MAX_TERM_ATOMS];
        hf_cross_gradient_hessian(&ev, acc->forces ? grad : NULL, acc->blocks ? hess : NULL);
        if (acc->forces)
            for (int a = 0; a < ne; a++)
                for (int c = 0; c < 3; c++)
                    acc->forces[3 * (ptrdiff_t)t->atoms[a] + c] -= grad[3 * a + c];
        if (acc->blocks) {
            const ptrdiff_t bdim = 3 * (ptrdiff_t)(model->mol_offset[mol + 1] - model->mol_offset[mol]);
            double *block = acc->blocks + model->block_offset[mol];
            for (int a = 0; a < ne; a++)
                for (int b = a; b < ne; b++) {
                    const int same = a < b && t->atoms[a] == t->atoms[b];
                    double k[9];
                    for (int i = 0; i < 3; i++)
                        for (int j = 0; j < 3; j++)
                            k[3 * i + j] = hess[(3 * a + i) * dim + 3 * b + j] +
                                           (same ? hess[(3 * a + j) * dim + 3 * b + i] : 0.0);
                    add_upper_block(k, 3 * (ptrdiff_t)model->atom_local[t->atoms[a]],
                                    3 * (ptrdiff_t)model->atom_local[t->atoms[b]], bdim, block);
                }
        }
    }
    add_slot_derivatives(acc, mol, t, ev.v.de_dp, HF_MAX_CROSS_SLOTS);
    return 0;
}

/* A switched MM3* pair inside its switch range, in closed form (hf_switched_pair.c): the same
 * contributions as accumulate_cross_term over its distinct particles. Returns 0 or -1. */
static int accumulate_switched_pair(const hf_model *model, const hf_term *t, const double *table, const double *pos,
                                    accumulator *acc)
{
    hf_switched_pair sp;
    if (hf_switched_pair_evaluate(t, table, pos, &sp) != 0)
        return -1;
    const int mol = model->atom_mol[t->atoms[0]];
    acc->energy += sp.v.e;
    if (acc->mol_energies)
        acc->mol_energies[mol] += sp.v.e;
    if (acc->forces) {
        double grad[4][3];
        hf_switched_pair_gradient(&sp, grad);
        for (int p = 0; p < sp.n; p++)
            for (int c = 0; c < 3; c++)
                acc->forces[3 * (ptrdiff_t)sp.particle[p] + c] -= grad[p][c];
    }
    if (acc->blocks) {
        const ptrdiff_t bdim = 3 * (ptrdiff_t)(model->mol_offset[mol + 1] - model->mol_offset[mol]);
        double *block = acc->blocks + model->block_offset[mol];
        double k[4][4][9];
        hf_switched_pair_blocks(&sp, k);
        for (int p = 0; p < sp.n; p++)
            for (int q = p; q < sp.n; q++)
                add_upper_block(k[p][q], 3 * (ptrdiff_t)model->atom_local[sp.particle[p]],
                                3 * (ptrdiff_t)model->atom_local[sp.particle[q]], bdim, block);
    }
    add_slot_derivatives(acc, mol, t, sp.v.de_dp, HF_MAX_CROSS_SLOTS);
    return 0;
}

/* Evaluate one term and add what acc asks for. Returns 0 or -1 (undefined geometry). */
static int accumulate_term(const hf_model *model, const hf_term *t, const double *table, const double *pos,
                           accumulator *acc, hf_coordinate_cache *cache)
{
    if (hf_term_uses_cross_path(t, pos))
        return t->kind == HF_TERM_MM3_PAIR_SWITCHED ? accumulate_switched_pair(model, t, table, pos, acc)
                                                    : accumulate_cross_term(model, t, table, pos, acc);
    hf_term_value v;
    const int want_grad = acc->forces != NULL || acc->blocks != NULL;
    const int n = hf_evaluate_term(model, t, table, pos, want_grad, acc->blocks != NULL && !hf_term_is_distance(t),
                                   cache, &v);
    if (n < 0)
        return -1;
    const double *grad = cache->grad, *hess = cache->hess;
    acc->energy += v.e;
    /* all atoms of a term lie in one molecule (validated by the caller) */
    const int mol = model->atom_mol[t->atoms[0]];
    if (acc->mol_energies)
        acc->mol_energies[mol] += v.e;
    if (acc->forces) {
        double *restrict f = acc->forces;
        const double de = v.de;
        for (int k = 0; k < n; k++)
            for (int c = 0; c < 3; c++)
                f[3 * (ptrdiff_t)t->atoms[k] + c] -= de * grad[3 * k + c];
    }
    if (acc->blocks) {
        const ptrdiff_t dim = 3 * (ptrdiff_t)(model->mol_offset[mol + 1] - model->mol_offset[mol]);
        double *block = acc->blocks + model->block_offset[mol];
        ptrdiff_t lrow[4];
        for (int a = 0; a < n; a++)
            lrow[a] = 3 * (ptrdiff_t)model->atom_local[t->atoms[a]];
        switch (n) {
        case 2: add_term_hessian(2, lrow, dim, v.d2e, v.de, cache->q, grad, hess, block); break;
        case 3: add_term_hessian(3, lrow, dim, v.d2e, v.de, cache->q, grad, hess, block); break;
        default: add_term_hessian(4, lrow, dim, v.d2e, v.de, cache->q, grad, hess, block); break;
        }
    }
    add_slot_derivatives(acc, mol, t, v.de_dp, HF_MAX_TERM_SLOTS);
    return 0;
}

static inline double slot_or_zero(const double *table, int slot)
{
    return slot == HF_NO_SLOT ? 0.0 : table[slot];
}

/*
 * The plain nonbonded pairs when no parameter derivatives are wanted (energy, forces, Hessian):
 * the radial function only, and the closed-form pair Hessian H = [[K, -K], [-K, K]] with
 * K = f'' u u^T + (f'/r)(I - u u^T), u = (x_b - x_a)/r. Same values as the general term path,
 * several times cheaper (no 6x6 coordinate Hessian, no parameter derivatives).
 */
static int plain_pairs_fast(const hf_model *model, const double *table, const double *pos, accumulator *acc)
{
    const int *ps = model->particle_slots;
    for (int m = 0; m < model->n_molecules; m++) {
        const int *atoms = model->mol_atoms + model->mol_offset[m];
        const int nm = model->mol_offset[m + 1] - model->mol_offset[m];
        const unsigned char *excl = model->excluded ? model->excluded + model->excl_offset[m] : NULL;
        const ptrdiff_t dim = 3 * (ptrdiff_t)nm;
        double *block = acc->blocks ? acc->blocks + model->block_offset[m] : NULL;
        for (int a = 0; a < nm; a++) {
            const int pa = atoms[a];
            const double qa = slot_or_zero(table, ps[3 * pa]), sa = slot_or_zero(table, ps[3 * pa + 1]);
            const double ea = slot_or_zero(table, ps[3 * pa + 2]);
            const double *xa = pos + 3 * (ptrdiff_t)pa;
            for (int b = a + 1; b < nm; b++) {
                if (excl && excl[(ptrdiff_t)a * nm + b])
                    continue;
                const int pb = atoms[b];
                const double qb = slot_or_zero(table, ps[3 * pb]), sb = slot_or_zero(table, ps[3 * pb + 1]);
                const double eps = sqrt(ea * slot_or_zero(table, ps[3 * pb + 2]));
                if (qa * qb == 0.0 && eps == 0.0)
                    continue; /* no interaction at all */
                const double *xb = pos + 3 * (ptrdiff_t)pb;
                const double d[3] = {xb[0] - xa[0], xb[1] - xa[1], xb[2] - xa[2]};
                const double r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
                if (!(r2 > 0.0))
                    return -1;
                const double inv_r = 1.0 / sqrt(r2);
                const double u[3] = {d[0] * inv_r, d[1] * inv_r, d[2] * inv_r};
                double f[3];
                hf_pair_radial(inv_r, qa * qb, hf_combine_sigma(model->combining, sa, sb), eps, 1.0, 1.0, f);
                acc->energy += f[0];
                if (acc->mol_energies)
                    acc->mol_energies[m] += f[0];
                if (acc->forces) {
                    double *fa = acc->forces + 3 * (ptrdiff_t)pa, *fb = acc->forces + 3 * (ptrdiff_t)pb;
                    for (int c = 0; c < 3; c++) {
                        fa[c] += f[1] * u[c];
                        fb[c] -= f[1] * u[c];
                    }
                }
                if (block) {
                    const double radial = f[2] - f[1] * inv_r, tangential = f[1] * inv_r;
                    double k[9];
                    for (int i = 0; i < 3; i++)
                        for (int j = 0; j < 3; j++)
                            k[3 * i + j] = radial * u[i] * u[j] + (i == j ? tangential : 0.0);
                    add_upper_block(k, 3 * (ptrdiff_t)a, 3 * (ptrdiff_t)a, dim, block);
                    add_upper_block(k, 3 * (ptrdiff_t)b, 3 * (ptrdiff_t)b, dim, block);
                    for (int i = 0; i < 9; i++)
                        k[i] = -k[i];
                    add_upper_block(k, 3 * (ptrdiff_t)a, 3 * (ptrdiff_t)b, dim, block);
                }
            }
        }
    }
    return 0;
}

int hf_plain_pair_term(const hf_model *model, int pa, int pb, hf_term *pair)
{
    const int *ps = model->particle_slots;
    pair->kind = HF_TERM_PAIR_COMBINED;
    pair->atoms[0] = pa;
    pair->atoms[1] = pb;
    for (int k = 2; k < HF_MAX_TERM_ATOMS; k++)
        pair->atoms[k] = -1;
    pair->r_scale[0] = pair->r_scale[1] = 1.0;
    pair->periodicity = 0;
    pair->scale = 1.0;
    pair->phase = 0.0;
    pair->scale_coulomb = 1.0;
    pair->scale_lj = 1.0;
    /* q_i, q_j, sigma_i, sigma_j, eps_i, eps_j */
    int any = 0;
    for (int p = 0; p < 3; p++) {
        pair->slots[2 * p] = ps[3 * pa + p];
        pair->slots[2 * p + 1] = ps[3 * pb + p];
        any |= (ps[3 * pa + p] != HF_NO_SLOT) | (ps[3 * pb + p] != HF_NO_SLOT);
    }
    return any;
}

/* The plain nonbonded pairs through the general term path (needed for parameter derivatives). */
static int plain_pairs_general(const hf_model *model, const double *table, const double *pos, accumulator *acc)
{
    hf_coordinate_cache cache;
    cache.n = 0;
    hf_term pair;
    for (int m = 0; m < model->n_molecules; m++) {
        const int *atoms = model->mol_atoms + model->mol_offset[m];
        const int nm = model->mol_offset[m + 1] - model->mol_offset[m];
        const unsigned char *excl = model->excluded ? model->excluded + model->excl_offset[m] : NULL;
        for (int a = 0; a < nm; a++) {
            for (int b = a + 1; b < nm; b++) {
                if (excl && excl[(ptrdiff_t)a * nm + b])
                    continue;
                if (!hf_plain_pair_term(model, atoms[a], atoms[b], &pair))
                    continue; /* all parameters zero: no energy, no derivative */
                if (accumulate_term(model, &pair, table, pos, acc, &cache) != 0)
                    return -1;
            }
        }
    }
    return 0;
}

/* All listed terms, then the plain nonbonded pairs of every molecule. */
static int assemble(const hf_model *model, const double *table, const double *pos, accumulator *acc,
                    int *bad_term)
{
    hf_coordinate_cache cache;
    cache.n = 0;
    for (int i = 0; i < model->n_terms; i++)
        if (accumulate_term(model, &model->terms[i], table, pos, acc, &cache) != 0) {
            if (bad_term)
                *bad_term = i;
            return -1;
        }
    const int rc = acc->dedp ? plain_pairs_general(model, table, pos, acc) : plain_pairs_fast(model, table, pos, acc);
    if (rc != 0 && bad_term)
        *bad_term = HF_BAD_NONBONDED_PAIR;
    return rc;
}

int hf_energy_forces(const hf_model *model, const double *table, const double *pos,
                     double *energy, double *forces, int *bad_term)
{
    if (model->n_reduced > 0)
        return hf_reduced_energy_forces(model, table, pos, energy, forces, bad_term);
    accumulator acc = {0.0, forces, NULL, NULL, NULL, NULL};
    const int rc = assemble(model, table, pos, &acc, bad_term);
    if (energy)
        *energy = acc.energy;
    return rc;
}

int hf_hessian_blocks(const hf_model *model, const double *table, const double *pos,
                      double *blocks, int *bad_term)
{
    if (model->n_reduced > 0)
        return hf_reduced_hessian_blocks(model, table, pos, blocks, bad_term);
    memset(blocks, 0, (size_t)model->block_offset[model->n_molecules] * sizeof(double));
    accumulator acc = {0.0, NULL, blocks, NULL, NULL, NULL};
    if (assemble(model, table, pos, &acc, bad_term) != 0)
        return -1;
    for (int m = 0; m < model->n_molecules; m++)
        mirror_upper(blocks + model->block_offset[m], 3 * (ptrdiff_t)(model->mol_offset[m + 1] - model->mol_offset[m]));
    return 0;
}

int hf_parameter_derivatives(const hf_model *model, const double *table, const double *pos,
                             double *dedp, int *bad_term)
{
    if (model->n_reduced > 0)
        return hf_reduced_parameter_derivatives(model, table, pos, dedp, bad_term);
    memset(dedp, 0, (size_t)model->n_slots * sizeof(double));
    accumulator acc = {0.0, NULL, NULL, dedp, NULL, NULL};
    return assemble(model, table, pos, &acc, bad_term);
}

int hf_molecule_energies(const hf_model *model, const double *table, const double *pos,
                         double *energies, int *bad_term)
{
    if (model->n_reduced > 0)
        return hf_reduced_molecule_energies(model, table, pos, energies, bad_term);
    memset(energies, 0, (size_t)model->n_molecules * sizeof(double));
    accumulator acc = {0.0, NULL, NULL, NULL, energies, NULL};
    return assemble(model, table, pos, &acc, bad_term);
}

int hf_molecule_energy_derivatives(const hf_model *model, const double *table, const double *pos,
                                   const double *weights, double *out, int *bad_term)
{
    if (model->n_reduced > 0)
        return hf_reduced_molecule_energy_derivatives(model, table, pos, weights, out, bad_term);
    memset(out, 0, (size_t)model->n_slots * sizeof(double));
    accumulator acc = {0.0, NULL, NULL, out, NULL, weights};
    return assemble(model, table, pos, &acc, bad_term);
}
