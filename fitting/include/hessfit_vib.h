#ifndef HESSFIT_VIB_H_
#define HESSFIT_VIB_H_
/*
 * Harmonic vibrational analysis of a Cartesian Hessian: mass-weighting, optional projection of
 * translations and rotations, diagonalisation (LAPACKE_dsyevd), frequencies in cm^-1.
 *
 * One routine serves every unit system: the caller passes the frequency factor of its Hessian
 * and mass units (hessfit_units.h), e.g.
 *     hessfit_frequency_factor_hartree_bohr2_amu()   QM Hessian, Hartree/Bohr^2, masses in amu
 *     hessfit_frequency_factor_kj_mol_nm2_amu()      OpenMM / hessfit Hessian, kJ/mol/nm^2, amu
 * Frequencies are sign(l) * factor * sqrt(|l|) for the eigenvalues l of H_ij / sqrt(m_i m_j);
 * negative values stand for imaginary frequencies.
 *
 * Layout: coordinates and Hessians are ordered atom, then x, y, z (index 3 a + k); a Hessian is
 * a dense row-major (3n) x (3n) array. Input Hessians are symmetrised as (H + H^T) / 2.
 */
#include "hessfit_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Project translations and rotations out of the mass-weighted Hessian (P H P). */
#define HESSFIT_VIB_PROJECT_EXTERNAL 1u

/* Largest atom count (3n must fit LAPACK's 32-bit (3n)^2 work arrays). */
#define HESSFIT_VIB_MAX_ATOMS 15000

/**
 * Vibrational analysis.
 *   hessian          (3n)^2 Cartesian Hessian (unchanged)
 *   masses_amu       n masses (> 0, in the mass unit of unit_factor; amu for the factors above)
 *   coords           3n coordinates, any length unit; used only with HESSFIT_VIB_PROJECT_EXTERNAL
 *                    (may be NULL otherwise)
 *   unit_factor      the frequency factor (> 0) of the Hessian and mass units
 *   flags            0 or HESSFIT_VIB_PROJECT_EXTERNAL
 *   frequencies_cm1  out: 3n frequencies in ascending order of the eigenvalues
 *   modes            out, may be NULL: (3n)^2, row j = normalised mass-weighted eigenvector j
 *   n_external       out, may be NULL: the number of external coordinates projected out (6;
 *                    5 for a linear molecule; 3 for one atom), 0 without projection
 * With projection the n_external modes come out with eigenvalues at round-off level (about
 * 1e-12 of the largest); they stay in the list, in eigenvalue order. Use hessfit_vib_select() to keep
 * the 3n - 6 (3n - 5) vibrations.
 */
hessfit_status hessfit_vib_analyse(const double *hessian, const double *masses_amu, const double *coords, int n_atoms,
                         double unit_factor, unsigned flags, double *frequencies_cm1, double *modes,
                         int *n_external);

/** out = H_ij / sqrt(m_i m_j), symmetrised; out may equal hessian. Rejects NaN/Inf (naming the
 * element) and masses that are not finite and positive (naming the atom). */
hessfit_status hessfit_vib_mass_weight(const double *hessian, const double *masses_amu, int n_atoms, double *out);

/**
 * Orthonormal basis (rows of basis[6 * 3n], may be NULL to count only) of the translations and
 * infinitesimal rotations about the centre of mass, in mass-weighted coordinates:
 * t_k = sqrt(m_a) e_k, r_k = sqrt(m_a) (e_k x (x_a - x_com)). Rotations that vanish (the axis of
 * a linear molecule, all rotations of one atom) are dropped: *n_external is 6, 5 or 3.
 */
hessfit_status hessfit_vib_external_basis(const double *masses_amu, const double *coords, int n_atoms, double *basis,
                                int *n_external);

/** In place: H <- P H P with P = 1 - B^T B, B the n_external orthonormal rows of basis (3n wide). */
hessfit_status hessfit_vib_project(double *mass_weighted_hessian, const double *basis, int n_external, int n_atoms);

/** The n_keep values of largest magnitude, written to out in ascending order (out may not alias
 * values). For a Hessian without projection, n_keep = 3n - n_external keeps the vibrations
 * (including imaginary ones larger in magnitude than the spurious near-zero modes). */
hessfit_status hessfit_vib_select(const double *values, int n, int n_keep, double *out);

#ifdef __cplusplus
}
#endif
#endif
