/*
 * Assembly of the whole force: energy and forces, per-molecule Hessian blocks, and dE/dslot.
 *
 * Every contribution is one term E = f(q(x); p): the listed terms of the model, and the plain
 * nonbonded pairs (all local pairs a < b of each molecule not marked excluded), which are turned
 * on the fly into HF_TERM_PAIR_COMBINED terms with scales 1 and the particles' slots, so one
 * evaluation step (evaluate_term) serves all. From it:
 *     forces -= f' dq/dx,   H += f'' (dq/dx)(dq/dx)^T + f' d2q/dx2,   dE/dslot += df/dp_s.
 */
#include "hf_core.h"

#include <stddef.h>
#include <string.h>

/* What the caller wants from each term (NULL: not wanted). */
typedef struct {
    double energy;
    double *forces;
    double *blocks;
    double *dedp;
} accumulator;

static int term_atom_count(int kind)
{
    switch (kind) {
    case HF_TERM_BOND:
    case HF_TERM_PAIR:
    case HF_TERM_PAIR_COMBINED: return 2;
    case HF_TERM_ANGLE: return 3;
    case HF_TERM_PERIODIC:
    case HF_TERM_RB:
    case HF_TERM_HARMONIC_DIHEDRAL: return 4;
    default: return 0;
    }
}

/*
 * The one shared step: the term's coordinate q with its gradient (3n, if grad != NULL) and
 * Hessian (3n x 3n, if hess != NULL), then its scalar f, f', f'' and parameter derivatives.
 * Returns the number of atoms n, or -1 when the geometry is undefined (or the kind unknown).
 */
static int evaluate_term(const hf_model *model, const hf_term *t, const double *table, const double *pos,
                         double *grad, double *hess, hf_term_value *v)
{
    const int n = term_atom_count(t->kind);
    if (n == 0)
        return -1;
    const double *x[4] = {NULL, NULL, NULL, NULL};
    for (int k = 0; k < n; k++)
        x[k] = pos + 3 * (ptrdiff_t)t->atoms[k];
    double q;
    if (hf_coordinate(n, x, &q, grad, hess) != 0)
        return -1;
    hf_term_scalar(model, t, table, q, v);
    return n;
}

/* Evaluate one term and add what acc asks for. Returns 0 or -1 (undefined geometry). */
static int accumulate_term(const hf_model *model, const hf_term *t, const double *table, const double *pos,
                           accumulator *acc)
{
    double grad[12], hess[144];
    hf_term_value v;
    const int want_grad = acc->forces != NULL || acc->blocks != NULL;
    const int n = evaluate_term(model, t, table, pos, want_grad ? grad : NULL, acc->blocks ? hess : NULL, &v);
    if (n < 0)
        return -1;
    acc->energy += v.e;
    if (acc->forces)
        for (int k = 0; k < n; k++)
            for (int c = 0; c < 3; c++)
                acc->forces[3 * (ptrdiff_t)t->atoms[k] + c] -= v.de * grad[3 * k + c];
    if (acc->blocks) {
        /* all atoms of a term lie in one molecule (validated by the caller) */
        const int mol = model->atom_mol[t->atoms[0]];
        const ptrdiff_t dim = 3 * (ptrdiff_t)(model->mol_offset[mol + 1] - model->mol_offset[mol]);
        double *block = acc->blocks + model->block_offset[mol];
        const int d = 3 * n;
        for (int a = 0; a < n; a++) {
            const ptrdiff_t ra = 3 * (ptrdiff_t)model->atom_local[t->atoms[a]];
            for (int b = 0; b < n; b++) {
                const ptrdiff_t cb = 3 * (ptrdiff_t)model->atom_local[t->atoms[b]];
                for (int i = 0; i < 3; i++) {
                    const double gi = v.d2e * grad[3 * a + i];
                    const double *hrow = hess + (3 * a + i) * d + 3 * b;
                    double *dst = block + (ra + i) * dim + cb;
                    for (int j = 0; j < 3; j++)
                        dst[j] += gi * grad[3 * b + j] + v.de * hrow[j];
                }
            }
        }
    }
    if (acc->dedp)
        for (int s = 0; s < HF_MAX_TERM_SLOTS; s++)
            if (t->slots[s] != HF_NO_SLOT)
                acc->dedp[t->slots[s]] += v.de_dp[s];
    return 0;
}

/* All listed terms, then the plain nonbonded pairs of every molecule. */
static int assemble(const hf_model *model, const double *table, const double *pos, accumulator *acc,
                    int *bad_term)
{
    for (int i = 0; i < model->n_terms; i++)
        if (accumulate_term(model, &model->terms[i], table, pos, acc) != 0) {
            if (bad_term)
                *bad_term = i;
            return -1;
        }
    hf_term pair;
    memset(&pair, 0, sizeof(pair));
    pair.kind = HF_TERM_PAIR_COMBINED;
    pair.atoms[2] = pair.atoms[3] = -1;
    pair.scale = 1.0;
    pair.scale_coulomb = 1.0;
    pair.scale_lj = 1.0;
    const int *ps = model->particle_slots;
    for (int m = 0; m < model->n_molecules; m++) {
        const int *atoms = model->mol_atoms + model->mol_offset[m];
        const int nm = model->mol_offset[m + 1] - model->mol_offset[m];
        const unsigned char *excl = model->excluded ? model->excluded + model->excl_offset[m] : NULL;
        for (int a = 0; a < nm; a++) {
            const int pa = atoms[a];
            for (int b = a + 1; b < nm; b++) {
                if (excl && excl[(ptrdiff_t)a * nm + b])
                    continue;
                const int pb = atoms[b];
                pair.atoms[0] = pa;
                pair.atoms[1] = pb;
                /* q_i, q_j, sigma_i, sigma_j, eps_i, eps_j */
                int any = 0;
                for (int p = 0; p < 3; p++) {
                    pair.slots[2 * p] = ps[3 * pa + p];
                    pair.slots[2 * p + 1] = ps[3 * pb + p];
                    any |= (ps[3 * pa + p] != HF_NO_SLOT) | (ps[3 * pb + p] != HF_NO_SLOT);
                }
                if (!any)
                    continue; /* all parameters zero: no energy, no derivative */
                if (accumulate_term(model, &pair, table, pos, acc) != 0) {
                    if (bad_term)
                        *bad_term = HF_BAD_NONBONDED_PAIR;
                    return -1;
                }
            }
        }
    }
    return 0;
}

int hf_energy_forces(const hf_model *model, const double *table, const double *pos,
                     double *energy, double *forces, int *bad_term)
{
    accumulator acc = {0.0, forces, NULL, NULL};
    const int rc = assemble(model, table, pos, &acc, bad_term);
    if (energy)
        *energy = acc.energy;
    return rc;
}

int hf_hessian_blocks(const hf_model *model, const double *table, const double *pos,
                      double *blocks, int *bad_term)
{
    memset(blocks, 0, (size_t)model->block_offset[model->n_molecules] * sizeof(double));
    accumulator acc = {0.0, NULL, blocks, NULL};
    return assemble(model, table, pos, &acc, bad_term);
}

int hf_parameter_derivatives(const hf_model *model, const double *table, const double *pos,
                             double *dedp, int *bad_term)
{
    memset(dedp, 0, (size_t)model->n_slots * sizeof(double));
    accumulator acc = {0.0, NULL, NULL, dedp};
    return assemble(model, table, pos, &acc, bad_term);
}
