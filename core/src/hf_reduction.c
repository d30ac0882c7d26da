/*
 * Reduced particles: MacroModel evaluates every term of MM3* at "reduced" positions, a hydrogen h
 * moved towards its partner p, x'_h = x_p + f (x_h - x_p), all other particles unchanged. That is a
 * constant linear map x' = M x whose only non-identity rows are, per reduced particle,
 *     M[h, h] = f I3,   M[h, p] = (1 - f) I3,
 * so the exact chain rule on E(x) = E'(M x) is
 *     forces F = M^T F',   Hessian H = M^T H' M,
 *     dE/dp, E_m: those of E' at x' (unchanged),
 *     tr(G^T dH/dp) = tr((M G M^T)^T dH'/dp),   y . d(grad E)/dp = (M y) . d(grad' E)/dp,
 * where ' marks the model without the map at x'. The entry points of hf_core.h hand over here when
 * model->n_reduced > 0; each map touches only the two 3-row (3-column) blocks of h and p. A partner
 * is never reduced itself and a particle is reduced at most once, so the maps of different reduced
 * particles commute and each may be applied in place in any order.
 */
#include "hf_reduction.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* The model the terms see: the same, without the map. */
static hf_model without_map(const hf_model *model)
{
    hf_model plain = *model;
    plain.n_reduced = 0;
    plain.reduced = NULL;
    plain.reduced_offset = NULL;
    return plain;
}

static int out_of_memory(int *bad_term)
{
    if (bad_term)
        *bad_term = HF_BAD_OUT_OF_MEMORY;
    return -1;
}

/* x' = M x: a copy of pos (3 n_particles) with every reduced particle moved. NULL: out of memory. */
static double *reduced_positions(const hf_model *model, const double *pos)
{
    const size_t n = 3 * (size_t)model->n_particles;
    double *x = malloc((n > 0 ? n : 1) * sizeof *x);
    if (x == NULL)
        return NULL;
    memcpy(x, pos, n * sizeof *x);
    for (int r = 0; r < model->n_reduced; r++) {
        const hf_reduced_particle *rp = &model->reduced[r];
        double *xh = x + 3 * (ptrdiff_t)rp->particle;
        const double *xp = pos + 3 * (ptrdiff_t)rp->partner;
        for (int c = 0; c < 3; c++)
            xh[c] = xp[c] + rp->factor * (xh[c] - xp[c]);
    }
    return x;
}

/* v <- M v for a vector of 3 entries per particle (v_h = f v_h + (1 - f) v_p). */
static void map_vector(const hf_model *model, double *v)
{
    for (int r = 0; r < model->n_reduced; r++) {
        const hf_reduced_particle *rp = &model->reduced[r];
        double *vh = v + 3 * (ptrdiff_t)rp->particle;
        const double *vp = v + 3 * (ptrdiff_t)rp->partner;
        for (int c = 0; c < 3; c++)
            vh[c] = rp->factor * vh[c] + (1.0 - rp->factor) * vp[c];
    }
}

/*
 * One molecule's dim x dim block B, in place: B <- M^T B M (transpose = 1: the Hessian) or
 * B <- M B M^T (transpose = 0: the adjoint). With h, p the first rows of the two particles:
 *   B M:    column h <- f column h,  column p += (1 - f) column h (old)
 *   M^T B:  the same on rows
 *   M B:    row h <- f row h + (1 - f) row p
 *   B M^T:  the same on columns.
 */
static void map_block(const hf_model *model, int m, double *block, int transpose)
{
    const ptrdiff_t dim = 3 * (ptrdiff_t)(model->mol_offset[m + 1] - model->mol_offset[m]);
    const int r0 = model->reduced_offset[m], r1 = model->reduced_offset[m + 1];
    for (ptrdiff_t i = 0; i < dim; i++) { /* columns, row by row (as the GPU kernels) */
        double *row = block + i * dim;
        for (int r = r0; r < r1; r++) {
            const double f = model->reduced[r].factor, g = 1.0 - f;
            const ptrdiff_t h = 3 * (ptrdiff_t)model->atom_local[model->reduced[r].particle];
            const ptrdiff_t p = 3 * (ptrdiff_t)model->atom_local[model->reduced[r].partner];
            for (int c = 0; c < 3; c++) {
                const double bh = row[h + c];
                if (transpose) {
                    row[p + c] += g * bh;
                    row[h + c] = f * bh;
                } else {
                    row[h + c] = f * bh + g * row[p + c];
                }
            }
        }
    }
    for (int r = r0; r < r1; r++) { /* rows */
        const double f = model->reduced[r].factor, g = 1.0 - f;
        const ptrdiff_t h = 3 * (ptrdiff_t)model->atom_local[model->reduced[r].particle];
        const ptrdiff_t p = 3 * (ptrdiff_t)model->atom_local[model->reduced[r].partner];
        for (int c = 0; c < 3; c++) {
            double *rh = block + (h + c) * dim, *rp = block + (p + c) * dim;
            for (ptrdiff_t j = 0; j < dim; j++) {
                const double bh = rh[j];
                if (transpose) {
                    rp[j] += g * bh;
                    rh[j] = f * bh;
                } else {
                    rh[j] = f * bh + g * rp[j];
                }
            }
        }
    }
    /* The two passes round an entry (i, j) and its mirror (j, i) differently where i or j is a
     * touched row: every such entry takes its upper-triangle value, so that the block stays
     * exactly symmetric as every Hessian block is (the GPU kernels use the same rule). */
    if (!transpose)
        return;
    for (int r = model->reduced_offset[m]; r < model->reduced_offset[m + 1]; r++) {
        const hf_reduced_particle *rp = &model->reduced[r];
        const ptrdiff_t rows[2] = {3 * (ptrdiff_t)model->atom_local[rp->particle],
                                   3 * (ptrdiff_t)model->atom_local[rp->partner]};
        for (int k = 0; k < 2; k++)
            for (ptrdiff_t i = rows[k]; i < rows[k] + 3; i++) {
                for (ptrdiff_t j = 0; j < i; j++)
                    block[i * dim + j] = block[j * dim + i];
                for (ptrdiff_t j = i + 1; j < dim; j++)
                    block[j * dim + i] = block[i * dim + j];
            }
    }
}

int hf_reduced_energy_forces(const hf_model *model, const double *table, const double *pos, double *energy,
                             double *forces, int *bad_term)
{
    const hf_model plain = without_map(model);
    double *x = reduced_positions(model, pos);
    /* the reduced particles' forces as given: F' is accumulated on zeros there, then mapped */
    double *given = forces ? malloc(3 * (size_t)model->n_reduced * sizeof *given) : NULL;
    if (x == NULL || (forces && given == NULL)) {
        free(x);
        free(given);
        return out_of_memory(bad_term);
    }
    for (int r = 0; forces && r < model->n_reduced; r++) {
        double *fh = forces + 3 * (ptrdiff_t)model->reduced[r].particle;
        for (int c = 0; c < 3; c++) {
            given[3 * r + c] = fh[c];
            fh[c] = 0.0;
        }
    }
    const int rc = hf_energy_forces(&plain, table, x, energy, forces, bad_term);
    /* F = M^T F': F_h = f F'_h, F_p += (1 - f) F'_h */
    for (int r = 0; forces && r < model->n_reduced; r++) {
        const hf_reduced_particle *rp = &model->reduced[r];
        double *fh = forces + 3 * (ptrdiff_t)rp->particle, *fp = forces + 3 * (ptrdiff_t)rp->partner;
        for (int c = 0; c < 3; c++) {
            const double fr = fh[c];
            fp[c] += (1.0 - rp->factor) * fr;
            fh[c] = given[3 * r + c] + rp->factor * fr;
        }
    }
    free(x);
    free(given);
    return rc;
}

int hf_reduced_hessian_blocks(const hf_model *model, const double *table, const double *pos, double *blocks,
                              int *bad_term)
{
    const hf_model plain = without_map(model);
    double *x = reduced_positions(model, pos);
    if (x == NULL)
        return out_of_memory(bad_term);
    const int rc = hf_hessian_blocks(&plain, table, x, blocks, bad_term);
    free(x);
    if (rc == 0)
        for (int m = 0; m < model->n_molecules; m++)
            map_block(model, m, blocks + model->block_offset[m], 1);
    return rc;
}

/* The entry points whose results need no map: only the positions move. */
#define HF_AT_REDUCED_POSITIONS(call)                    \
    do {                                                 \
        const hf_model plain = without_map(model);       \
        double *x = reduced_positions(model, pos);       \
        if (x == NULL)                                   \
            return out_of_memory(bad_term);              \
        const int rc = (call);                           \
        free(x);                                         \
        return rc;                                       \
    } while (0)

int hf_reduced_parameter_derivatives(const hf_model *model, const double *table, const double *pos, double *dedp,
                                     int *bad_term)
{
    HF_AT_REDUCED_POSITIONS(hf_parameter_derivatives(&plain, table, x, dedp, bad_term));
}

int hf_reduced_molecule_energies(const hf_model *model, const double *table, const double *pos, double *energies,
                                 int *bad_term)
{
    HF_AT_REDUCED_POSITIONS(hf_molecule_energies(&plain, table, x, energies, bad_term));
}

int hf_reduced_molecule_energy_derivatives(const hf_model *model, const double *table, const double *pos,
                                           const double *weights, double *out, int *bad_term)
{
    HF_AT_REDUCED_POSITIONS(hf_molecule_energy_derivatives(&plain, table, x, weights, out, bad_term));
}

/* The contractions at x' with an adjoint or a vector already mapped. */
static int hessian_contraction_at_reduced(const hf_model *model, const double *table, const double *pos,
                                          const double *adjoint, const unsigned char *wanted, int n_wanted,
                                          double *out, int *bad_term)
{
    HF_AT_REDUCED_POSITIONS(
        hf_hessian_contraction_derivatives_of(&plain, table, x, adjoint, wanted, n_wanted, out, bad_term));
}

static int gradient_contraction_at_reduced(const hf_model *model, const double *table, const double *pos,
                                           const double *y, double *out, int *bad_term)
{
    HF_AT_REDUCED_POSITIONS(hf_gradient_contraction_derivatives(&plain, table, x, y, out, bad_term));
}

int hf_reduced_hessian_contraction_derivatives(const hf_model *model, const double *table, const double *pos,
                                               const double *adjoint, const unsigned char *wanted, int n_wanted,
                                               double *out, int *bad_term)
{
    const size_t size = (size_t)model->block_offset[model->n_molecules];
    double *g = malloc((size > 0 ? size : 1) * sizeof *g);
    if (g == NULL)
        return out_of_memory(bad_term);
    memcpy(g, adjoint, size * sizeof *g);
    for (int m = 0; m < model->n_molecules; m++) /* G' = M G M^T */
        if (model->reduced_offset[m + 1] > model->reduced_offset[m])
            map_block(model, m, g + model->block_offset[m], 0);
    const int rc = hessian_contraction_at_reduced(model, table, pos, g, wanted, n_wanted, out, bad_term);
    free(g);
    return rc;
}

int hf_reduced_gradient_contraction_derivatives(const hf_model *model, const double *table, const double *pos,
                                                const double *y, double *out, int *bad_term)
{
    const size_t n = 3 * (size_t)model->n_particles;
    double *my = malloc((n > 0 ? n : 1) * sizeof *my);
    if (my == NULL)
        return out_of_memory(bad_term);
    memcpy(my, y, n * sizeof *my);
    map_vector(model, my); /* M y */
    const int rc = gradient_contraction_at_reduced(model, table, pos, my, out, bad_term);
    free(my);
    return rc;
}

static int bilinear_at_reduced(const hf_model *model, const double *table, const double *pos, int m, int n_vectors,
                               const double *vectors, int n_pairs, const int *pairs, const int *slot_row, int n_rows,
                               double *out, int *bad_term)
{
    HF_AT_REDUCED_POSITIONS(hf_bilinear_hessian_derivatives(&plain, table, x, m, n_vectors, vectors, n_pairs, pairs,
                                                            slot_row, n_rows, out, bad_term));
}

void hf_reduced_map_molecule_vectors(const hf_model *model, int m, int n_vectors, double *vectors)
{
    const size_t dim = 3 * (size_t)(model->mol_offset[m + 1] - model->mol_offset[m]);
    for (int v = 0; v < n_vectors; v++) {
        double *row = vectors + (size_t)v * dim;
        for (int r = model->reduced_offset[m]; r < model->reduced_offset[m + 1]; r++) {
            const hf_reduced_particle *rp = &model->reduced[r];
            double *vh = row + 3 * (ptrdiff_t)model->atom_local[rp->particle];
            const double *vp = row + 3 * (ptrdiff_t)model->atom_local[rp->partner];
            for (int c = 0; c < 3; c++)
                vh[c] = rp->factor * vh[c] + (1.0 - rp->factor) * vp[c];
        }
    }
}

/* u^T dH/dp w = (M u)^T dH'/dp (M w): every vector of molecule m mapped (its local rows). */
int hf_reduced_bilinear_hessian_derivatives(const hf_model *model, const double *table, const double *pos, int m,
                                            int n_vectors, const double *vectors, int n_pairs, const int *pairs,
                                            const int *slot_row, int n_rows, double *out, int *bad_term)
{
    const size_t dim = 3 * (size_t)(model->mol_offset[m + 1] - model->mol_offset[m]);
    const size_t size = dim * (size_t)(n_vectors > 0 ? n_vectors : 0);
    double *mv = malloc((size > 0 ? size : 1) * sizeof *mv);
    if (mv == NULL)
        return out_of_memory(bad_term);
    memcpy(mv, vectors, size * sizeof *mv);
    hf_reduced_map_molecule_vectors(model, m, n_vectors, mv);
    const int rc = bilinear_at_reduced(model, table, pos, m, n_vectors, mv, n_pairs, pairs, slot_row, n_rows, out,
                                       bad_term);
    free(mv);
    return rc;
}
