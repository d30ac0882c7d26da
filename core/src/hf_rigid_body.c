/*
 * The rigid-body (external) subspace of a molecule in mass-weighted Cartesian coordinates, what a
 * frequency objective projects out: translations t_k = sqrt(m_a) e_k and infinitesimal rotations
 * about the centre of mass r_k = sqrt(m_a) e_k x (x_a - x_com), orthonormalised by modified
 * Gram-Schmidt (two passes). A rotation whose remainder is below 1e-5 of the largest rotation
 * vanishes (the axis of a linear molecule; every rotation of one atom) and is dropped.
 */
#include "hf_core.h"

#include <math.h>
#include <string.h>

/* Atom a's position (atoms NULL: atom a is particle a). */
static inline const double *atom_position(const double *pos, const int *atoms, int a)
{
    return pos + 3 * (size_t)(atoms != NULL ? atoms[a] : a);
}

int hf_rigid_body_basis(int n_atoms, const int *atoms, const double *pos, const double *masses, double *basis)
{
    const size_t dim = 3 * (size_t)n_atoms;
    double com[3] = {0.0, 0.0, 0.0}, total = 0.0, largest_rotation = 0.0;
    memset(basis, 0, 6 * dim * sizeof *basis);
    for (int a = 0; a < n_atoms; a++) {
        const double *x = atom_position(pos, atoms, a);
        for (int k = 0; k < 3; k++)
            com[k] += masses[a] * x[k];
        total += masses[a];
    }
    for (int k = 0; k < 3; k++)
        com[k] /= total;
    for (int a = 0; a < n_atoms; a++) {
        const double *x = atom_position(pos, atoms, a), s = sqrt(masses[a]);
        const double r[3] = {x[0] - com[0], x[1] - com[1], x[2] - com[2]};
        const size_t i = 3 * (size_t)a;
        for (int k = 0; k < 3; k++)
            basis[k * dim + i + k] = s;
        /* e_x x r = (0, -r_z, r_y), e_y x r = (r_z, 0, -r_x), e_z x r = (-r_y, r_x, 0) */
        basis[3 * dim + i + 1] = -s * r[2];
        basis[3 * dim + i + 2] = s * r[1];
        basis[4 * dim + i + 0] = s * r[2];
        basis[4 * dim + i + 2] = -s * r[0];
        basis[5 * dim + i + 0] = -s * r[1];
        basis[5 * dim + i + 1] = s * r[0];
    }
    for (int c = 3; c < 6; c++) {
        double nrm = 0.0;
        for (size_t i = 0; i < dim; i++)
            nrm += basis[c * dim + i] * basis[c * dim + i];
        largest_rotation = fmax(largest_rotation, sqrt(nrm));
    }
    int kept = 0;
    for (int c = 0; c < 6; c++) {
        double *v = basis + (size_t)c * dim, nrm = 0.0;
        for (int pass = 0; pass < 2; pass++)
            for (int b = 0; b < kept; b++) {
                const double *u = basis + (size_t)b * dim;
                double dot = 0.0;
                for (size_t i = 0; i < dim; i++)
                    dot += u[i] * v[i];
                for (size_t i = 0; i < dim; i++)
                    v[i] -= dot * u[i];
            }
        for (size_t i = 0; i < dim; i++)
            nrm += v[i] * v[i];
        nrm = sqrt(nrm);
        if (c >= 3 && !(nrm > HF_RIGID_ROTATION_TOLERANCE * largest_rotation && nrm > 0.0))
            continue;
        double *dst = basis + (size_t)kept * dim;
        for (size_t i = 0; i < dim; i++)
            dst[i] = v[i] / nrm;
        kept++;
    }
    memset(basis + (size_t)kept * dim, 0, (size_t)(6 - kept) * dim * sizeof *basis);
    return kept;
}
