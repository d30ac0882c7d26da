#ifndef HESSFIT_H_
#define HESSFIT_H_
/*
 * hessfit C API: the HessianForce OpenMM plugin for C programs.
 *
 * It works beside OpenMM's own C API (OpenMMCWrapper.h): build the System, Integrator and
 * Context with OpenMM_* calls, add a HessFit_Force to the System with hessfit_force_add_to_system,
 * then read energy, forces, analytic Hessian blocks and parameter derivatives from the Context.
 *
 * Units are OpenMM's: nm, rad, kJ/mol, elementary charges; Hessians in kJ/mol/nm^2. The energy
 * forms and the meaning of every slot are documented in plugin/include/HessianForce.h.
 *
 * Errors: every function returns a HessFit_Status; on failure, hessfit_last_error() gives a
 * message naming the offending item (thread-local, valid until the next failing call on the same
 * thread). No C++ exception ever crosses this interface.
 *
 * Ownership: hessfit_force_create returns a handle that owns its force. After
 * hessfit_force_add_to_system the System owns the force; the handle stays usable while the
 * System lives and hessfit_force_destroy then frees only the handle.
 */
#include "OpenMMCWrapper.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    HESSFIT_SUCCESS = 0,
    HESSFIT_ERROR_NULL_ARGUMENT,     /* a required pointer was NULL */
    HESSFIT_ERROR_INDEX,             /* a particle, slot, term or molecule index out of range */
    HESSFIT_ERROR_VALUE,             /* NaN or infinite parameter, bad periodicity or scale */
    HESSFIT_ERROR_SIZE,              /* an array size does not match what is required */
    HESSFIT_ERROR_TOPOLOGY,          /* a term spans two molecules, a particle in no or two molecules */
    HESSFIT_ERROR_GEOMETRY,          /* a coordinate is undefined (coincident or collinear atoms) */
    HESSFIT_ERROR_NOT_IN_CONTEXT,    /* the force is not part of the given Context */
    HESSFIT_ERROR_UNSUPPORTED,       /* converter: a stock force or setting it cannot represent */
    HESSFIT_ERROR_OWNERSHIP,         /* the force already belongs to a System */
    HESSFIT_ERROR_OPENMM,            /* any other error reported by OpenMM */
    HESSFIT_ERROR_OUT_OF_MEMORY,
    HESSFIT_NUM_STATUS
} HessFit_Status;

/* A fixed text for a status code ("success", "index out of range", ...). */
const char *hessfit_status_string(HessFit_Status status);
/* The detailed message of the last failure on this thread ("" if none). */
const char *hessfit_last_error(void);

typedef enum { HESSFIT_COMBINE_GEOMETRIC = 0, HESSFIT_COMBINE_LORENTZ_BERTHELOT = 1 } HessFit_CombiningRule;

#define HESSFIT_NO_SLOT (-1)

typedef struct HessFit_Force HessFit_Force;

/* ---- lifetime ---------------------------------------------------------------------------- */
HessFit_Status hessfit_force_create(HessFit_Force **force);
/* Builds a force equal to the System's stock forces (HarmonicBondForce, HarmonicAngleForce,
 * PeriodicTorsionForce, RBTorsionForce, NonbondedForce with NoCutoff incl. exceptions;
 * CMMotionRemover is ignored). Anything else fails with HESSFIT_ERROR_UNSUPPORTED naming it. */
HessFit_Status hessfit_force_create_from_system(const OpenMM_System *system, HessFit_Force **force);
void hessfit_force_destroy(HessFit_Force *force);
/* A non-owning handle on a HessianForce that already lives in a System (e.g. one read back by
 * OpenMM_XmlSerializer_deserializeSystem); HESSFIT_ERROR_VALUE if openmm_force is not one.
 * hessfit_force_destroy frees only the handle; hessfit_force_add_to_system refuses it. */
HessFit_Status hessfit_force_from_openmm(OpenMM_Force *openmm_force, HessFit_Force **force);
/* The underlying OpenMM_Force, for OpenMM's C API (e.g. OpenMM_Force_setForceGroup). */
OpenMM_Force *hessfit_force_as_openmm(HessFit_Force *force);
/* Adds the force to a System, which takes ownership; *force_index may be NULL. */
HessFit_Status hessfit_force_add_to_system(HessFit_Force *force, OpenMM_System *system, int *force_index);

/* ---- parameter table --------------------------------------------------------------------- */
HessFit_Status hessfit_force_add_parameter(HessFit_Force *force, double value, int *slot);
HessFit_Status hessfit_force_get_num_parameters(const HessFit_Force *force, int *n);
/* n must equal the number of slots. */
HessFit_Status hessfit_force_set_parameters(HessFit_Force *force, const double *values, int n);
HessFit_Status hessfit_force_get_parameters(const HessFit_Force *force, double *values, int n);

/* ---- particles and molecules ------------------------------------------------------------- */
HessFit_Status hessfit_force_add_particle(HessFit_Force *force, int charge_slot, int sigma_slot, int epsilon_slot, int *index);
HessFit_Status hessfit_force_add_molecule(HessFit_Force *force, const int *particles, int n, int *index);
HessFit_Status hessfit_force_get_num_particles(const HessFit_Force *force, int *n);
HessFit_Status hessfit_force_get_num_molecules(const HessFit_Force *force, int *n);
/* Writes the molecule's particles (Hessian-block order) into particles[capacity]; *n = count. */
HessFit_Status hessfit_force_get_molecule_particles(const HessFit_Force *force, int molecule, int *particles, int capacity, int *n);

/* ---- terms (index outputs may be NULL) ---------------------------------------------------- */
HessFit_Status hessfit_force_add_bond(HessFit_Force *force, int p1, int p2, int k_slot, int r0_slot, int *index);
HessFit_Status hessfit_force_add_urey_bradley(HessFit_Force *force, int p1, int p3, int k_slot, int r0_slot, int *index);
HessFit_Status hessfit_force_add_angle(HessFit_Force *force, int p1, int p2, int p3, int k_slot, int theta0_slot, int *index);
HessFit_Status hessfit_force_add_periodic_torsion(HessFit_Force *force, int p1, int p2, int p3, int p4, int periodicity, int k_slot, int phase_slot, int *index);
HessFit_Status hessfit_force_add_opls_torsion(HessFit_Force *force, int p1, int p2, int p3, int p4, const int v_slots[4], int *index);
HessFit_Status hessfit_force_add_rb_torsion(HessFit_Force *force, int p1, int p2, int p3, int p4, const int c_slots[6], int *index);
HessFit_Status hessfit_force_add_periodic_improper(HessFit_Force *force, int p1, int p2, int p3, int p4, int periodicity, int k_slot, int phase_slot, int *index);
HessFit_Status hessfit_force_add_harmonic_improper(HessFit_Force *force, int p1, int p2, int p3, int p4, int k_slot, int phi0_slot, int *index);
HessFit_Status hessfit_force_add_exclusion(HessFit_Force *force, int p1, int p2, int *index);
HessFit_Status hessfit_force_add_pair14(HessFit_Force *force, int p1, int p2, int *index);
HessFit_Status hessfit_force_add_explicit_pair(HessFit_Force *force, int p1, int p2, int charge_prod_slot, int sigma_slot, int epsilon_slot, int *index);
/* bonds: 2 * n_bonds particle indices. Excludes 1-2 and 1-3 pairs, adds 1-4 pairs. */
HessFit_Status hessfit_force_create_exclusions_from_bonds(HessFit_Force *force, const int *bonds, int n_bonds);
HessFit_Status hessfit_force_set_combining_rule(HessFit_Force *force, HessFit_CombiningRule rule);
HessFit_Status hessfit_force_set_14_scales(HessFit_Force *force, double coulomb14_scale, double lj14_scale);

/* ---- checking and Context creation -------------------------------------------------------- */
/* Checks the force against a System as Context creation would (particle count, indices, molecule
 * membership, terms spanning two molecules, pairs defined twice) and reports the first problem. */
HessFit_Status hessfit_force_validate(const HessFit_Force *force, const OpenMM_System *system);
/* OpenMM_Context_create_2 with errors reported as a status instead of a C++ exception (which
 * OpenMM's C API cannot report): platform_name may be NULL for OpenMM's choice; precision
 * ("single", "mixed", "double") may be NULL and is ignored by platforms without that property. */
HessFit_Status hessfit_context_create(const OpenMM_System *system, OpenMM_Integrator *integrator,
                                      const char *platform_name, const char *precision, OpenMM_Context **context);
/* OpenMM's LocalEnergyMinimizer::minimize (L-BFGS on the Context's positions, which it updates)
 * with errors as a status instead of a C++ exception: tolerance is the root-mean-square force
 * (kJ/mol/nm, > 0) at which it stops, max_iterations >= 0 (0: until converged).
 * HESSFIT_ERROR_VALUE for a bad argument, HESSFIT_ERROR_GEOMETRY when a HessianForce meets an
 * undefined geometry on the way, HESSFIT_ERROR_OPENMM for any other failure. */
HessFit_Status hessfit_context_minimize(OpenMM_Context *context, double tolerance, int max_iterations);

/* ---- reading a Context -------------------------------------------------------------------- */
/* Pushes the parameter table (and terms) into the Context without re-initialising it. */
HessFit_Status hessfit_force_update_parameters_in_context(HessFit_Force *force, OpenMM_Context *context);
/* Energy (kJ/mol) and, if forces != NULL, forces (3 * n_particles doubles, kJ/mol/nm) of the
 * force's group in the Context (the force is alone in its group unless the caller put others there). */
HessFit_Status hessfit_force_get_energy_forces(HessFit_Force *force, OpenMM_Context *context, double *energy, double *forces);
/* Total length of the concatenated Hessian blocks, sum over molecules of (3 n_m)^2. */
HessFit_Status hessfit_force_get_hessian_size(const HessFit_Force *force, long long *size);
HessFit_Status hessfit_force_get_hessian_block_offset(const HessFit_Force *force, int molecule, long long *offset);
/* Analytic Hessian blocks (kJ/mol/nm^2, row-major per molecule); size must equal the Hessian size. */
HessFit_Status hessfit_force_get_hessian_blocks(HessFit_Force *force, OpenMM_Context *context, double *blocks, long long size);
/* dE/dslot for every slot; n must equal the number of slots. */
HessFit_Status hessfit_force_get_parameter_derivatives(HessFit_Force *force, OpenMM_Context *context, double *derivatives, int n);

/* ---- adjoint contractions (parameter gradients of Hessian-space objectives) ----------------- */
/* derivatives[s] = tr(G^T dH/dslot_s) = sum over molecules m and block entries ij of
 * G_m,ij dH_m,ij/dslot_s, for every slot s, without forming any dH/dslot. adjoint holds G in the
 * layout of hessfit_force_get_hessian_blocks (size must equal the Hessian size); only its
 * symmetric part matters. For an objective L(H), G = dL/dH: e.g. sum_k c_k w_k w_k^T for
 * sum_k c_k lambda_k with eigenvectors w_k. derivatives: kJ/mol/nm^2 times G's units, per slot
 * unit; n must equal the number of slots. HESSFIT_ERROR_SIZE for a wrong size,
 * HESSFIT_ERROR_VALUE for a NaN or infinite entry of G (the message names it),
 * HESSFIT_ERROR_GEOMETRY where hessfit_force_get_hessian_blocks fails. */
HessFit_Status hessfit_force_get_hessian_contraction_derivatives(HessFit_Force *force, OpenMM_Context *context,
                                                                 const double *adjoint, long long size,
                                                                 double *derivatives, int n);
/* derivatives[s] = y . d(grad E)/dslot_s = -y . dF/dslot_s for every slot s (implicit
 * differentiation of an optimised geometry). y: 3 * n_particles doubles (x, y, z per particle in
 * System order), finite; n_y must be 3 * n_particles. derivatives: kJ/mol/nm times y's units,
 * per slot unit; n must equal the number of slots. Errors as above. */
HessFit_Status hessfit_force_get_gradient_contraction_derivatives(HessFit_Force *force, OpenMM_Context *context,
                                                                  const double *y, int n_y,
                                                                  double *derivatives, int n);

/* ---- per-molecule energies ---------------------------------------------------------------- */
/* energies[m] = the energy (kJ/mol) of molecule m alone (its terms and nonbonded pairs; they sum to
 * the force's energy); n must equal the number of molecules. HESSFIT_ERROR_GEOMETRY as
 * hessfit_force_get_hessian_blocks. */
HessFit_Status hessfit_force_get_molecule_energies(HessFit_Force *force, OpenMM_Context *context, double *energies, int n);
/* derivatives[s] = sum_m weights[m] dE_m/dslot_s for every slot s: the parameter gradient of any
 * loss L of the molecule energies given weights[m] = dL/dE_m. weights: n_weights = the number of
 * molecules, finite (HESSFIT_ERROR_VALUE names the molecule); derivatives: kJ/mol times the
 * weights' units, per slot unit, n = the number of slots. */
HessFit_Status hessfit_force_get_molecule_energy_derivatives(HessFit_Force *force, OpenMM_Context *context,
                                                             const double *weights, int n_weights,
                                                             double *derivatives, int n);

/* ---- Hessian-space objectives (HessianObjective.h) ------------------------------------------ */
/*
 * A Context can hold one objective: per molecule, frequency targets (paired with MM modes by
 * position, selected once at the first evaluation, or by maximum eigenvector overlap at every
 * evaluation), eigenmatrix elements V A V^T (A the mass-weighted Hessian, V fixed orthonormal
 * vectors), and Hessian elements, each with weights; loss = sum_i r_i^2, r_i = w_i (target_i -
 * value_i). One call gives the loss, dL/dslot for every slot (adjoint route, one kernel call for
 * all molecules) and the residuals. Units: kJ/mol/nm^2, amu, kJ/mol/nm^2/amu, cm^-1. The full
 * description (projection, pairing, residual order, gradients) is in plugin/include/HessianObjective.h.
 */
typedef enum {
    HESSFIT_NO_FREQUENCIES = 0,
    HESSFIT_PAIR_BY_POSITION = 1,  /* candidates above frequency_threshold at the first evaluation */
    HESSFIT_PAIR_BY_OVERLAP = 2    /* maximum total overlap with frequency_vectors, every evaluation */
} HessFit_FrequencyPairing;

/* The objectives of one molecule. Every array comes with its number of entries (an array may be
 * NULL only with 0 entries); sizes are checked against the molecule (n particles, dim = 3n). */
typedef struct {
    const double *masses;             int n_masses;               /* n, amu, Hessian-block order */
    int frequency_pairing;            /* a HessFit_FrequencyPairing (int: any value is checked) */
    int project_external;             /* frequencies: project translations and rotations out */
    const double *frequency_targets;  int n_frequency_targets;    /* cm^-1 */
    const double *frequency_weights;  int n_frequency_weights;    /* one per target, >= 0 */
    double frequency_threshold;       /* position pairing: candidates above it, cm^-1 */
    const double *frequency_vectors;  long long n_frequency_vectors; /* overlap pairing: targets x dim */
    const double *eigen_vectors;      long long n_eigen_vectors;  /* k x dim, orthonormal rows */
    const double *eigen_targets;      long long n_eigen_targets;  /* k x k (lower triangle read) */
    const double *eigen_weights;      long long n_eigen_weights;  /* k x k */
    const double *hessian_targets;    long long n_hessian_targets; /* dim x dim (lower triangle read) or 0 */
    const double *hessian_weights;    long long n_hessian_weights;
} HessFit_MoleculeObjective;

/* Zero every field, frequency_threshold = 50 cm^-1 (q2mm's). */
void hessfit_molecule_objective_init(HessFit_MoleculeObjective *molecule);
/* Sets the Context's objective: n_molecules must equal the force's molecule count;
 * frequency_factor (cm^-1 per sqrt(kJ/mol/nm^2/amu), the fitting layer's
 * hf_frequency_factor_kj_mol_nm2_amu()) is needed when any molecule has frequencies.
 * HESSFIT_ERROR_SIZE / HESSFIT_ERROR_VALUE name the molecule, field and entry (wrong sizes, NaN,
 * negative weights, masses <= 0, vectors not orthonormal). */
HessFit_Status hessfit_force_set_hessian_objective(HessFit_Force *force, OpenMM_Context *context,
                                                   const HessFit_MoleculeObjective *molecules, int n_molecules,
                                                   double frequency_factor);
/* The loss; dLdslot (n = the number of slots; NULL with n = 0: no gradient), loss units per slot
 * unit; residuals (n_res = hessfit_force_get_hessian_objective_size's count; NULL with 0: none).
 * HESSFIT_ERROR_VALUE without an objective or when an eigensolver fails, HESSFIT_ERROR_GEOMETRY as
 * hessfit_force_get_hessian_blocks. */
HessFit_Status hessfit_force_compute_hessian_objective(HessFit_Force *force, OpenMM_Context *context, double *loss,
                                                       double *dLdslot, int n, double *residuals, long long n_res);
/* Residual count and total frequency targets of the Context's objective (0 and 0 when none);
 * either output may be NULL. */
HessFit_Status hessfit_force_get_hessian_objective_size(HessFit_Force *force, OpenMM_Context *context,
                                                        long long *n_residuals, int *n_frequency_targets);
/* For every frequency target (molecules concatenated), the MM mode index (ascending eigenvalue order
 * of the molecule's mode list) it was compared with in the last evaluation, -1 if none;
 * n = the total frequency targets. */
HessFit_Status hessfit_force_get_hessian_objective_pairing(HessFit_Force *force, OpenMM_Context *context, int *modes,
                                                           int n);

#ifdef __cplusplus
}
#endif
#endif
