#ifndef HESSFIT_H_
#define HESSFIT_H_
/**
 * @file hessfit.h
 * hessfit C API: the HessianForce OpenMM plugin for C programs.
 *
 * It works beside OpenMM's own C API (OpenMMCWrapper.h): build the System, Integrator and
 * Context with OpenMM_* calls, add a hessfit_force to the System with hessfit_force_add_to_system,
 * then read energy, forces, analytic Hessian blocks and parameter derivatives from the Context.
 *
 * Units are OpenMM's: nm, rad, kJ/mol, elementary charges; Hessians in kJ/mol/nm^2. The energy
 * forms and the meaning of every slot are documented in HessianForce.h.
 *
 * Errors: every function that can fail returns a hessfit_status; on failure,
 * hessfit_last_error() gives a message naming the offending item (thread-local, valid until the
 * next failing call on the same thread). No C++ exception ever crosses this interface.
 *
 * Handles: hessfit_force is opaque. hessfit_force_create and its variants
 * (hessfit_force_create_from_system, hessfit_force_create_from_openmm) make one;
 * hessfit_force_destroy frees it. A handle from hessfit_force_create(_from_system) owns its force
 * until hessfit_force_add_to_system, after which the System owns the force: the handle stays
 * usable while the System lives and hessfit_force_destroy then frees only the handle.
 *
 * Version: hessfit_version() and hessfit_version_numbers() give the library's version at run
 * time; hessfit_version.h (included here) the version of the headers at compile time.
 */
#include "OpenMMCWrapper.h"
#include "hessfit_status.h"
#include "hessfit_version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* hessfit_status, hessfit_status_string() and hessfit_last_error(): hessfit_status.h, shared with
 * the fitting layer. */

/**
 * Get the version of the hessfit library in use (which may differ from the HESSFIT_VERSION_STRING
 * of the headers a program was compiled with).
 *
 * @return "MAJOR.MINOR.PATCH", a static string
 */
const char *hessfit_version(void);
/**
 * Get the version of the hessfit library in use as numbers.
 *
 * @param[out] major  the major version (may be NULL)
 * @param[out] minor  the minor version (may be NULL)
 * @param[out] patch  the patch version (may be NULL)
 */
void hessfit_version_numbers(int *major, int *minor, int *patch);

/** How per-particle sigmas combine for a pair (epsilons always combine geometrically). */
typedef enum {
    HESSFIT_COMBINE_GEOMETRIC = 0,          /**< sigma_ij = sqrt(sigma_i sigma_j) (OPLS-AA) */
    HESSFIT_COMBINE_LORENTZ_BERTHELOT = 1   /**< sigma_ij = (sigma_i + sigma_j) / 2 (AMBER) */
} hessfit_combining_rule;

/** Slot index meaning "no parameter: the value is zero" (optional slots only). */
#define HESSFIT_NO_SLOT (-1)

/** A HessianForce (opaque handle; see the top of this file for ownership). */
typedef struct hessfit_force hessfit_force;

/* ---- lifetime ---------------------------------------------------------------------------- */
/**
 * Create an empty force (no parameters, particles or terms; geometric combining rule, 1-4 scales
 * 0.5) and a handle that owns it.
 *
 * @param[out] force  the new handle (NULL on failure); free it with hessfit_force_destroy
 * @return HESSFIT_SUCCESS, HESSFIT_ERROR_NULL_ARGUMENT or HESSFIT_ERROR_OUT_OF_MEMORY
 */
hessfit_status hessfit_force_create(hessfit_force **force);
/**
 * Create a force equal to the System's stock forces (HarmonicBondForce, HarmonicAngleForce,
 * PeriodicTorsionForce, RBTorsionForce, NonbondedForce with NoCutoff incl. exceptions;
 * CMMotionRemover is ignored) and a handle that owns it.
 *
 * @param system      the System to convert (not changed)
 * @param[out] force  the new handle (NULL on failure); free it with hessfit_force_destroy
 * @return HESSFIT_SUCCESS; HESSFIT_ERROR_UNSUPPORTED naming every force or setting it cannot represent
 */
hessfit_status hessfit_force_create_from_system(const OpenMM_System *system, hessfit_force **force);
/**
 * Create a non-owning handle on a HessianForce that already lives in a System (e.g. one read back
 * by hessfit_system_deserialize). hessfit_force_destroy frees only the handle;
 * hessfit_force_add_to_system refuses it.
 *
 * @param openmm_force  a force of a System
 * @param[out] force    the new handle (NULL on failure)
 * @return HESSFIT_SUCCESS; HESSFIT_ERROR_VALUE if openmm_force is not a HessianForce
 */
hessfit_status hessfit_force_create_from_openmm(OpenMM_Force *openmm_force, hessfit_force **force);
/**
 * Free a handle, and its force if the handle still owns it.
 *
 * @param force  the handle (NULL is ignored)
 */
void hessfit_force_destroy(hessfit_force *force);
/**
 * Get the underlying OpenMM_Force, for OpenMM's C API (e.g. OpenMM_Force_setForceGroup).
 *
 * @param force  the handle
 * @return the force (NULL for a NULL handle); owned by the handle or its System
 */
OpenMM_Force *hessfit_force_as_openmm(hessfit_force *force);
/**
 * Add the force to a System, which takes ownership of it.
 *
 * @param force             an owning handle
 * @param system            the System
 * @param[out] force_index  the force's index in the System (may be NULL)
 * @return HESSFIT_SUCCESS; HESSFIT_ERROR_OWNERSHIP if the force already belongs to a System
 */
hessfit_status hessfit_force_add_to_system(hessfit_force *force, OpenMM_System *system, int *force_index);

/* ---- parameter table --------------------------------------------------------------------- */
/**
 * Append a slot to the parameter table.
 *
 * @param force      the handle
 * @param value      the slot's value, finite, in the unit of the terms that use it
 * @param[out] slot  the new slot's index (may be NULL)
 * @return HESSFIT_SUCCESS; HESSFIT_ERROR_VALUE for a non-finite value
 */
hessfit_status hessfit_force_add_parameter(hessfit_force *force, double value, int *slot);
/**
 * Get the number of slots in the parameter table.
 *
 * @param force   the handle
 * @param[out] n  the slot count
 * @return HESSFIT_SUCCESS or HESSFIT_ERROR_NULL_ARGUMENT
 */
hessfit_status hessfit_force_get_num_parameters(const hessfit_force *force, int *n);
/**
 * Replace the whole parameter table (push it into a Context with
 * hessfit_force_update_parameters_in_context).
 *
 * @param force   the handle
 * @param values  the new values, all finite
 * @param n       the number of values; must equal the number of slots
 * @return HESSFIT_SUCCESS; HESSFIT_ERROR_SIZE, HESSFIT_ERROR_VALUE naming the slot
 */
hessfit_status hessfit_force_set_parameters(hessfit_force *force, const double *values, int n);
/**
 * Copy out the whole parameter table.
 *
 * @param force        the handle
 * @param[out] values  the value of every slot
 * @param n            the length of values; must equal the number of slots
 * @return HESSFIT_SUCCESS or HESSFIT_ERROR_SIZE
 */
hessfit_status hessfit_force_get_parameters(const hessfit_force *force, double *values, int n);

/* ---- particles and molecules ------------------------------------------------------------- */
/**
 * Add a particle (the force must end up with as many particles as the System).
 *
 * @param force         the handle
 * @param charge_slot   the slot of its charge (e), or HESSFIT_NO_SLOT for zero
 * @param sigma_slot    the slot of its sigma (nm), or HESSFIT_NO_SLOT for zero
 * @param epsilon_slot  the slot of its epsilon (kJ/mol), or HESSFIT_NO_SLOT for zero
 * @param[out] index    the particle's index (may be NULL)
 * @return HESSFIT_SUCCESS; HESSFIT_ERROR_INDEX for a slot out of range
 */
hessfit_status hessfit_force_add_particle(hessfit_force *force, int charge_slot, int sigma_slot, int epsilon_slot, int *index);
/**
 * Declare a molecule. Without any, all particles form one molecule; with any, every particle must
 * belong to exactly one (checked by hessfit_force_validate and at Context creation).
 *
 * @param force       the handle
 * @param particles   its particles, in the order of its Hessian block
 * @param n           the number of particles (> 0)
 * @param[out] index  the molecule's index (may be NULL)
 * @return HESSFIT_SUCCESS; HESSFIT_ERROR_SIZE for an empty list, HESSFIT_ERROR_INDEX for a negative index
 */
hessfit_status hessfit_force_add_molecule(hessfit_force *force, const int *particles, int n, int *index);
/**
 * Get the number of particles.
 *
 * @param force   the handle
 * @param[out] n  the particle count
 * @return HESSFIT_SUCCESS or HESSFIT_ERROR_NULL_ARGUMENT
 */
hessfit_status hessfit_force_get_num_particles(const hessfit_force *force, int *n);
/**
 * Get the number of molecules (1 for the implicit all-particle molecule when none was declared).
 *
 * @param force   the handle
 * @param[out] n  the molecule count
 * @return HESSFIT_SUCCESS or HESSFIT_ERROR_NULL_ARGUMENT
 */
hessfit_status hessfit_force_get_num_molecules(const hessfit_force *force, int *n);
/**
 * Get the particles of a molecule. particles may be NULL with capacity 0 to query the count.
 *
 * @param force           the handle
 * @param molecule        the molecule's index
 * @param[out] particles  its particles in Hessian-block order
 * @param capacity        the length of particles
 * @param[out] n          the particle count (set even when capacity is too small)
 * @return HESSFIT_SUCCESS; HESSFIT_ERROR_SIZE when capacity is smaller than the count,
 *         HESSFIT_ERROR_INDEX for a bad molecule index
 */
hessfit_status hessfit_force_get_molecule_particles(const hessfit_force *force, int molecule, int *particles, int capacity, int *n);

/* ---- terms (index outputs may be NULL; errors: HESSFIT_ERROR_INDEX for a particle or slot out
 * of range or a particle used twice, HESSFIT_ERROR_VALUE for a periodicity < 1) ------------- */
/**
 * Add a harmonic bond, E = k (r - r0)^2.
 *
 * @param force       the handle
 * @param p1          the first particle
 * @param p2          the second particle
 * @param k_slot      the slot of k (kJ/mol/nm^2)
 * @param r0_slot     the slot of r0 (nm)
 * @param[out] index  the bond's index (may be NULL)
 * @return HESSFIT_SUCCESS or an error (see above)
 */
hessfit_status hessfit_force_add_bond(hessfit_force *force, int p1, int p2, int k_slot, int r0_slot, int *index);
/**
 * Add a Urey-Bradley 1-3 spring, E = k (r13 - r0)^2.
 *
 * @param force       the handle
 * @param p1          the first particle
 * @param p3          the third particle
 * @param k_slot      the slot of k (kJ/mol/nm^2)
 * @param r0_slot     the slot of r0 (nm)
 * @param[out] index  the term's index (may be NULL)
 * @return HESSFIT_SUCCESS or an error (see above)
 */
hessfit_status hessfit_force_add_urey_bradley(hessfit_force *force, int p1, int p3, int k_slot, int r0_slot, int *index);
/**
 * Add a harmonic angle, E = k (theta - theta0)^2, theta the p1-p2-p3 angle.
 *
 * @param force        the handle
 * @param p1           the first particle
 * @param p2           the central particle
 * @param p3           the third particle
 * @param k_slot       the slot of k (kJ/mol/rad^2)
 * @param theta0_slot  the slot of theta0 (rad)
 * @param[out] index   the angle's index (may be NULL)
 * @return HESSFIT_SUCCESS or an error (see above)
 */
hessfit_status hessfit_force_add_angle(hessfit_force *force, int p1, int p2, int p3, int k_slot, int theta0_slot, int *index);
/**
 * Add an MM3* anharmonic bond (MacroModel's MM3* stretch), E = k dr^2 (1 - 2.55 dr + 3.793125 dr^2)
 * with dr = r - r0 in Angstrom in the polynomial (E = k d^2 (1 - 25.5 d + 379.3125 d^2), d in nm).
 *
 * @param force       the handle
 * @param p1          the first particle
 * @param p2          the second particle
 * @param k_slot      the slot of k (kJ/mol/nm^2)
 * @param r0_slot     the slot of r0 (nm)
 * @param[out] index  the MM3* bond's index (may be NULL)
 * @return HESSFIT_SUCCESS or an error (see above)
 */
hessfit_status hessfit_force_add_mm3_bond(hessfit_force *force, int p1, int p2, int k_slot, int r0_slot, int *index);
/**
 * Get the particles and slots of an MM3* bond (each output may be NULL).
 *
 * @param force         the handle
 * @param index         the MM3* bond's index
 * @param[out] p1       the first particle
 * @param[out] p2       the second particle
 * @param[out] k_slot   the slot of k
 * @param[out] r0_slot  the slot of r0
 * @return HESSFIT_SUCCESS; HESSFIT_ERROR_INDEX for a bad index
 */
hessfit_status hessfit_force_get_mm3_bond(const hessfit_force *force, int index, int *p1, int *p2, int *k_slot, int *r0_slot);
/**
 * Set the particles and slots of an MM3* bond (push them into a Context with
 * hessfit_force_update_parameters_in_context).
 *
 * @param force    the handle
 * @param index    the MM3* bond's index
 * @param p1       the first particle
 * @param p2       the second particle
 * @param k_slot   the slot of k (kJ/mol/nm^2)
 * @param r0_slot  the slot of r0 (nm)
 * @return HESSFIT_SUCCESS; HESSFIT_ERROR_INDEX for a bad index or an error (see above)
 */
hessfit_status hessfit_force_set_mm3_bond(hessfit_force *force, int index, int p1, int p2, int k_slot, int r0_slot);
/**
 * Get the number of MM3* bonds.
 *
 * @param force   the handle
 * @param[out] n  the count
 * @return HESSFIT_SUCCESS or HESSFIT_ERROR_NULL_ARGUMENT
 */
hessfit_status hessfit_force_get_num_mm3_bonds(const hessfit_force *force, int *n);
/**
 * Add an MM3* anharmonic angle (MacroModel's MM3* bend), theta the p1-p2-p3 angle,
 * E = k dt^2 (1 - 0.014 D + 5.6e-5 D^2 - 7.0e-7 D^3 + 2.2e-8 D^4), dt = theta - theta0 in rad and
 * D the same difference in degrees.
 *
 * @param force        the handle
 * @param p1           the first particle
 * @param p2           the central particle
 * @param p3           the third particle
 * @param k_slot       the slot of k (kJ/mol/rad^2)
 * @param theta0_slot  the slot of theta0 (rad)
 * @param[out] index   the MM3* angle's index (may be NULL)
 * @return HESSFIT_SUCCESS or an error (see above)
 */
hessfit_status hessfit_force_add_mm3_angle(hessfit_force *force, int p1, int p2, int p3, int k_slot, int theta0_slot, int *index);
/**
 * Get the particles and slots of an MM3* angle (each output may be NULL).
 *
 * @param force             the handle
 * @param index             the MM3* angle's index
 * @param[out] p1           the first particle
 * @param[out] p2           the central particle
 * @param[out] p3           the third particle
 * @param[out] k_slot       the slot of k
 * @param[out] theta0_slot  the slot of theta0
 * @return HESSFIT_SUCCESS; HESSFIT_ERROR_INDEX for a bad index
 */
hessfit_status hessfit_force_get_mm3_angle(const hessfit_force *force, int index, int *p1, int *p2, int *p3, int *k_slot, int *theta0_slot);
/**
 * Set the particles and slots of an MM3* angle (push them into a Context with
 * hessfit_force_update_parameters_in_context).
 *
 * @param force        the handle
 * @param index        the MM3* angle's index
 * @param p1           the first particle
 * @param p2           the central particle
 * @param p3           the third particle
 * @param k_slot       the slot of k (kJ/mol/rad^2)
 * @param theta0_slot  the slot of theta0 (rad)
 * @return HESSFIT_SUCCESS; HESSFIT_ERROR_INDEX for a bad index or an error (see above)
 */
hessfit_status hessfit_force_set_mm3_angle(hessfit_force *force, int index, int p1, int p2, int p3, int k_slot, int theta0_slot);
/**
 * Get the number of MM3* angles.
 *
 * @param force   the handle
 * @param[out] n  the count
 * @return HESSFIT_SUCCESS or HESSFIT_ERROR_NULL_ARGUMENT
 */
hessfit_status hessfit_force_get_num_mm3_angles(const hessfit_force *force, int *n);
/**
 * Set the distance scale s of an MM3* bond (its dr is s r - r0; 1 when added; MacroModel's 1/f for
 * a bond to a reduced hydrogen). Setting the bond with hessfit_force_set_mm3_bond resets it to 1.
 *
 * @param force           the handle
 * @param index           the MM3* bond's index
 * @param distance_scale  s (finite, > 0)
 * @return HESSFIT_SUCCESS; HESSFIT_ERROR_INDEX for a bad index, HESSFIT_ERROR_VALUE for a bad scale
 */
hessfit_status hessfit_force_set_mm3_bond_distance_scale(hessfit_force *force, int index, double distance_scale);
/**
 * Get the distance scale s of an MM3* bond.
 *
 * @param force                the handle
 * @param index                the MM3* bond's index
 * @param[out] distance_scale  s
 * @return HESSFIT_SUCCESS; HESSFIT_ERROR_INDEX for a bad index, HESSFIT_ERROR_NULL_ARGUMENT
 */
hessfit_status hessfit_force_get_mm3_bond_distance_scale(const hessfit_force *force, int index, double *distance_scale);
/**
 * Add an MM3* stretch-bend (MacroModel's), E = k (dra + drb) dtheta with dra = sa r_12 - r0a,
 * drb = sb r_32 - r0b, dtheta = theta - theta0, theta the p1-p2-p3 angle.
 *
 * @param force        the handle
 * @param p1           the first particle
 * @param p2           the central particle
 * @param p3           the third particle
 * @param k_slot       the slot of k (kJ/mol/nm/rad)
 * @param r0a_slot     the slot of r0a, the p1-p2 bond's reference length (nm)
 * @param r0b_slot     the slot of r0b, the p3-p2 bond's reference length (nm)
 * @param theta0_slot  the slot of theta0 (rad)
 * @param scale_a      sa, the p1-p2 bond's distance scale (finite, > 0; 1 for none)
 * @param scale_b      sb, the p3-p2 bond's distance scale (finite, > 0; 1 for none)
 * @param[out] index   the stretch-bend's index (may be NULL)
 * @return HESSFIT_SUCCESS or an error (see above)
 */
hessfit_status hessfit_force_add_mm3_stretch_bend(hessfit_force *force, int p1, int p2, int p3, int k_slot, int r0a_slot,
                                                  int r0b_slot, int theta0_slot, double scale_a, double scale_b, int *index);
/**
 * Get the particles, slots and distance scales of an MM3* stretch-bend (each output may be NULL).
 *
 * @param force             the handle
 * @param index             the stretch-bend's index
 * @param[out] p1           the first particle
 * @param[out] p2           the central particle
 * @param[out] p3           the third particle
 * @param[out] k_slot       the slot of k
 * @param[out] r0a_slot     the slot of r0a
 * @param[out] r0b_slot     the slot of r0b
 * @param[out] theta0_slot  the slot of theta0
 * @param[out] scale_a      sa
 * @param[out] scale_b      sb
 * @return HESSFIT_SUCCESS; HESSFIT_ERROR_INDEX for a bad index
 */
hessfit_status hessfit_force_get_mm3_stretch_bend(const hessfit_force *force, int index, int *p1, int *p2, int *p3,
                                                  int *k_slot, int *r0a_slot, int *r0b_slot, int *theta0_slot,
                                                  double *scale_a, double *scale_b);
/**
 * Set the particles, slots and distance scales of an MM3* stretch-bend.
 *
 * @param force        the handle
 * @param index        the stretch-bend's index
 * @param p1           the first particle
 * @param p2           the central particle
 * @param p3           the third particle
 * @param k_slot       the slot of k (kJ/mol/nm/rad)
 * @param r0a_slot     the slot of r0a (nm)
 * @param r0b_slot     the slot of r0b (nm)
 * @param theta0_slot  the slot of theta0 (rad)
 * @param scale_a      sa (finite, > 0)
 * @param scale_b      sb (finite, > 0)
 * @return HESSFIT_SUCCESS; HESSFIT_ERROR_INDEX for a bad index or an error (see above)
 */
hessfit_status hessfit_force_set_mm3_stretch_bend(hessfit_force *force, int index, int p1, int p2, int p3, int k_slot,
                                                  int r0a_slot, int r0b_slot, int theta0_slot, double scale_a,
                                                  double scale_b);
/**
 * Get the number of MM3* stretch-bends.
 *
 * @param force   the handle
 * @param[out] n  the count
 * @return HESSFIT_SUCCESS or HESSFIT_ERROR_NULL_ARGUMENT
 */
hessfit_status hessfit_force_get_num_mm3_stretch_bends(const hessfit_force *force, int *n);
/**
 * Add an MM3* bend-bend (MacroModel's), E = k (theta1 - theta01) (theta2 - theta02), theta1 the
 * p1-centre-p3 angle, theta2 the p4-centre-p5 angle; p4 or p5 may be p1 or p3 (once).
 *
 * @param force         the handle
 * @param p1            the first outer particle of angle 1
 * @param centre        the central particle of both angles
 * @param p3            the second outer particle of angle 1
 * @param p4            the first outer particle of angle 2
 * @param p5            the second outer particle of angle 2
 * @param k_slot        the slot of k (kJ/mol/rad^2)
 * @param theta01_slot  the slot of theta01 (rad)
 * @param theta02_slot  the slot of theta02 (rad)
 * @param[out] index    the bend-bend's index (may be NULL)
 * @return HESSFIT_SUCCESS or an error (see above)
 */
hessfit_status hessfit_force_add_mm3_bend_bend(hessfit_force *force, int p1, int centre, int p3, int p4, int p5, int k_slot,
                                               int theta01_slot, int theta02_slot, int *index);
/**
 * Get the particles and slots of an MM3* bend-bend (each output may be NULL).
 *
 * @param force              the handle
 * @param index              the bend-bend's index
 * @param[out] p1            the first outer particle of angle 1
 * @param[out] centre        the central particle
 * @param[out] p3            the second outer particle of angle 1
 * @param[out] p4            the first outer particle of angle 2
 * @param[out] p5            the second outer particle of angle 2
 * @param[out] k_slot        the slot of k
 * @param[out] theta01_slot  the slot of theta01
 * @param[out] theta02_slot  the slot of theta02
 * @return HESSFIT_SUCCESS; HESSFIT_ERROR_INDEX for a bad index
 */
hessfit_status hessfit_force_get_mm3_bend_bend(const hessfit_force *force, int index, int *p1, int *centre, int *p3,
                                               int *p4, int *p5, int *k_slot, int *theta01_slot, int *theta02_slot);
/**
 * Set the particles and slots of an MM3* bend-bend.
 *
 * @param force         the handle
 * @param index         the bend-bend's index
 * @param p1            the first outer particle of angle 1
 * @param centre        the central particle
 * @param p3            the second outer particle of angle 1
 * @param p4            the first outer particle of angle 2
 * @param p5            the second outer particle of angle 2
 * @param k_slot        the slot of k (kJ/mol/rad^2)
 * @param theta01_slot  the slot of theta01 (rad)
 * @param theta02_slot  the slot of theta02 (rad)
 * @return HESSFIT_SUCCESS; HESSFIT_ERROR_INDEX for a bad index or an error (see above)
 */
hessfit_status hessfit_force_set_mm3_bend_bend(hessfit_force *force, int index, int p1, int centre, int p3, int p4, int p5,
                                               int k_slot, int theta01_slot, int theta02_slot);
/**
 * Get the number of MM3* bend-bends.
 *
 * @param force   the handle
 * @param[out] n  the count
 * @return HESSFIT_SUCCESS or HESSFIT_ERROR_NULL_ARGUMENT
 */
hessfit_status hessfit_force_get_num_mm3_bend_bends(const hessfit_force *force, int *n);
/**
 * Add an MM3* torsion-stretch (MacroModel's), E = k (s r_23 - r0) (1 + cos 3 phi), phi the
 * p1-p2-p3-p4 dihedral.
 *
 * @param force           the handle
 * @param p1              the first particle
 * @param p2              the second particle
 * @param p3              the third particle
 * @param p4              the fourth particle
 * @param k_slot          the slot of k (kJ/mol/nm)
 * @param r0_slot         the slot of r0 (nm)
 * @param distance_scale  s, the p2-p3 bond's distance scale (finite, > 0; 1 for none)
 * @param[out] index      the torsion-stretch's index (may be NULL)
 * @return HESSFIT_SUCCESS or an error (see above)
 */
hessfit_status hessfit_force_add_mm3_torsion_stretch(hessfit_force *force, int p1, int p2, int p3, int p4, int k_slot,
                                                     int r0_slot, double distance_scale, int *index);
/**
 * Get the particles, slots and distance scale of an MM3* torsion-stretch (each output may be NULL).
 *
 * @param force                the handle
 * @param index                the torsion-stretch's index
 * @param[out] p1              the first particle
 * @param[out] p2              the second particle
 * @param[out] p3              the third particle
 * @param[out] p4              the fourth particle
 * @param[out] k_slot          the slot of k
 * @param[out] r0_slot         the slot of r0
 * @param[out] distance_scale  s
 * @return HESSFIT_SUCCESS; HESSFIT_ERROR_INDEX for a bad index
 */
hessfit_status hessfit_force_get_mm3_torsion_stretch(const hessfit_force *force, int index, int *p1, int *p2, int *p3,
                                                     int *p4, int *k_slot, int *r0_slot, double *distance_scale);
/**
 * Set the particles, slots and distance scale of an MM3* torsion-stretch.
 *
 * @param force           the handle
 * @param index           the torsion-stretch's index
 * @param p1              the first particle
 * @param p2              the second particle
 * @param p3              the third particle
 * @param p4              the fourth particle
 * @param k_slot          the slot of k (kJ/mol/nm)
 * @param r0_slot         the slot of r0 (nm)
 * @param distance_scale  s (finite, > 0)
 * @return HESSFIT_SUCCESS; HESSFIT_ERROR_INDEX for a bad index or an error (see above)
 */
hessfit_status hessfit_force_set_mm3_torsion_stretch(hessfit_force *force, int index, int p1, int p2, int p3, int p4,
                                                     int k_slot, int r0_slot, double distance_scale);
/**
 * Get the number of MM3* torsion-stretches.
 *
 * @param force   the handle
 * @param[out] n  the count
 * @return HESSFIT_SUCCESS or HESSFIT_ERROR_NULL_ARGUMENT
 */
hessfit_status hessfit_force_get_num_mm3_torsion_stretches(const hessfit_force *force, int *n);
/**
 * Add a periodic torsion, E = k (1 + cos(n phi - phase)).
 *
 * @param force        the handle
 * @param p1           the first particle
 * @param p2           the second particle
 * @param p3           the third particle
 * @param p4           the fourth particle
 * @param periodicity  n, >= 1
 * @param k_slot       the slot of k (kJ/mol)
 * @param phase_slot   the slot of the phase (rad)
 * @param[out] index   the torsion's index (may be NULL)
 * @return HESSFIT_SUCCESS or an error (see above)
 */
hessfit_status hessfit_force_add_periodic_torsion(hessfit_force *force, int p1, int p2, int p3, int p4, int periodicity, int k_slot, int phase_slot, int *index);
/**
 * Add an OPLS-AA torsion, E = sum_{m=1..4} V_m/2 (1 + (-1)^(m+1) cos(m phi)).
 *
 * @param force       the handle
 * @param p1          the first particle
 * @param p2          the second particle
 * @param p3          the third particle
 * @param p4          the fourth particle
 * @param v_slots     the slots of V1..V4 (kJ/mol), each may be HESSFIT_NO_SLOT
 * @param[out] index  the torsion's index (may be NULL)
 * @return HESSFIT_SUCCESS or an error (see above)
 */
hessfit_status hessfit_force_add_opls_torsion(hessfit_force *force, int p1, int p2, int p3, int p4, const int v_slots[4], int *index);
/**
 * Add a Ryckaert-Bellemans torsion, E = sum_{m=0..5} C_m cos(phi - pi)^m.
 *
 * @param force       the handle
 * @param p1          the first particle
 * @param p2          the second particle
 * @param p3          the third particle
 * @param p4          the fourth particle
 * @param c_slots     the slots of C0..C5 (kJ/mol), each may be HESSFIT_NO_SLOT
 * @param[out] index  the torsion's index (may be NULL)
 * @return HESSFIT_SUCCESS or an error (see above)
 */
hessfit_status hessfit_force_add_rb_torsion(hessfit_force *force, int p1, int p2, int p3, int p4, const int c_slots[6], int *index);
/**
 * Add a periodic improper, E = k (1 + cos(n phi - phase)) on the dihedral p1-p2-p3-p4.
 *
 * @param force        the handle
 * @param p1           the first particle
 * @param p2           the second particle
 * @param p3           the third particle
 * @param p4           the fourth particle
 * @param periodicity  n, >= 1
 * @param k_slot       the slot of k (kJ/mol)
 * @param phase_slot   the slot of the phase (rad)
 * @param[out] index   the improper's index (may be NULL)
 * @return HESSFIT_SUCCESS or an error (see above)
 */
hessfit_status hessfit_force_add_periodic_improper(hessfit_force *force, int p1, int p2, int p3, int p4, int periodicity, int k_slot, int phase_slot, int *index);
/**
 * Add a harmonic improper, E = k (phi - phi0)^2 with phi - phi0 wrapped to [-pi, pi].
 *
 * @param force       the handle
 * @param p1          the first particle
 * @param p2          the second particle
 * @param p3          the third particle
 * @param p4          the fourth particle
 * @param k_slot      the slot of k (kJ/mol/rad^2)
 * @param phi0_slot   the slot of phi0 (rad)
 * @param[out] index  the improper's index (may be NULL)
 * @return HESSFIT_SUCCESS or an error (see above)
 */
hessfit_status hessfit_force_add_harmonic_improper(hessfit_force *force, int p1, int p2, int p3, int p4, int k_slot, int phi0_slot, int *index);
/**
 * Exclude a pair from the nonbonded sum.
 *
 * @param force       the handle
 * @param p1          the first particle
 * @param p2          the second particle
 * @param[out] index  the exclusion's index (may be NULL)
 * @return HESSFIT_SUCCESS or an error (see above)
 */
hessfit_status hessfit_force_add_exclusion(hessfit_force *force, int p1, int p2, int *index);
/**
 * Add a 1-4 pair: excluded from the plain sum, interacting with the combined parameters scaled by
 * the 1-4 scales.
 *
 * @param force       the handle
 * @param p1          the first particle
 * @param p2          the second particle
 * @param[out] index  the pair's index (may be NULL)
 * @return HESSFIT_SUCCESS or an error (see above)
 */
hessfit_status hessfit_force_add_pair14(hessfit_force *force, int p1, int p2, int *index);
/**
 * Add an explicit pair: excluded from the plain sum, interacting with its own parameters.
 *
 * @param force             the handle
 * @param p1                the first particle
 * @param p2                the second particle
 * @param charge_prod_slot  the slot of the charge product (e^2), or HESSFIT_NO_SLOT
 * @param sigma_slot        the slot of sigma (nm), or HESSFIT_NO_SLOT
 * @param epsilon_slot      the slot of epsilon (kJ/mol), or HESSFIT_NO_SLOT
 * @param[out] index        the pair's index (may be NULL)
 * @return HESSFIT_SUCCESS or an error (see above)
 */
hessfit_status hessfit_force_add_explicit_pair(hessfit_force *force, int p1, int p2, int charge_prod_slot, int sigma_slot, int epsilon_slot, int *index);
/**
 * Add an MM3* pair (MacroModel's MM3* van der Waals and charge pair; like an explicit pair,
 * excluded from the plain sum), E = eps S(r) (184000 exp(-12 r / R) - 2.25 (R / r)^6) + C qq / r
 * with the 6-8 Angstrom switch S(r) = 1 (r <= 0.6 nm), (0.8^2 - r^2) / (0.8^2 - 0.6^2)
 * (0.6 < r < 0.8 nm), 0 (r >= 0.8 nm); S is C1, not C2.
 *
 * @param force             the handle
 * @param p1                the first particle
 * @param p2                the second particle
 * @param radius_slot       the slot of R (nm, R*_i + R*_j; must be > 0)
 * @param epsilon_slot      the slot of eps (kJ/mol, sqrt(eps_i eps_j))
 * @param charge_prod_slot  the slot of the charge product qq (e^2)
 * @param[out] index        the MM3* pair's index (may be NULL)
 * @return HESSFIT_SUCCESS or an error (see above)
 */
hessfit_status hessfit_force_add_mm3_pair(hessfit_force *force, int p1, int p2, int radius_slot, int epsilon_slot, int charge_prod_slot, int *index);
/**
 * Get the particles and slots of an MM3* pair (each output may be NULL).
 *
 * @param force                  the handle
 * @param index                  the MM3* pair's index
 * @param[out] p1                the first particle
 * @param[out] p2                the second particle
 * @param[out] radius_slot       the slot of R
 * @param[out] epsilon_slot      the slot of eps
 * @param[out] charge_prod_slot  the slot of the charge product
 * @return HESSFIT_SUCCESS; HESSFIT_ERROR_INDEX for a bad index
 */
hessfit_status hessfit_force_get_mm3_pair(const hessfit_force *force, int index, int *p1, int *p2, int *radius_slot, int *epsilon_slot, int *charge_prod_slot);
/**
 * Set the particles and slots of an MM3* pair (push them into a Context with
 * hessfit_force_update_parameters_in_context).
 *
 * @param force             the handle
 * @param index             the MM3* pair's index
 * @param p1                the first particle
 * @param p2                the second particle
 * @param radius_slot       the slot of R (nm; must be > 0)
 * @param epsilon_slot      the slot of eps (kJ/mol)
 * @param charge_prod_slot  the slot of the charge product qq (e^2)
 * @return HESSFIT_SUCCESS; HESSFIT_ERROR_INDEX for a bad index or an error (see above)
 */
hessfit_status hessfit_force_set_mm3_pair(hessfit_force *force, int index, int p1, int p2, int radius_slot, int epsilon_slot, int charge_prod_slot);
/**
 * Get the number of MM3* pairs.
 *
 * @param force   the handle
 * @param[out] n  the count
 * @return HESSFIT_SUCCESS or HESSFIT_ERROR_NULL_ARGUMENT
 */
hessfit_status hessfit_force_get_num_mm3_pairs(const hessfit_force *force, int *n);
/**
 * Add an MM3* pair whose switch is taken on another distance (HessianForce::addMM3SwitchedPair):
 * E = eps S(r_s) (184000 exp(-12 r / R) - 2.25 (R / r)^6) + C qq / r, r the p1-p2 distance,
 * r_s = |y1 - y2|, y_k = x_anchor_k + s_k (x_p_k - x_anchor_k). A particle that is not reduced:
 * anchor = itself; a reduced particle (factor f, partner p): anchor = p, s = 1/f (its true
 * position: MacroModel's switch distance).
 *
 * @param force             the handle
 * @param p1                the first particle
 * @param p2                the second particle
 * @param anchor1           the anchor of the first switch point
 * @param anchor2           the anchor of the second switch point
 * @param radius_slot       the slot of R (nm; must be > 0)
 * @param epsilon_slot      the slot of eps (kJ/mol)
 * @param charge_prod_slot  the slot of the charge product qq (e^2)
 * @param switch_scale1     s_1 (finite, > 0)
 * @param switch_scale2     s_2 (finite, > 0)
 * @param[out] index        the pair's index (may be NULL)
 * @return HESSFIT_SUCCESS or an error (see above)
 */
hessfit_status hessfit_force_add_mm3_switched_pair(hessfit_force *force, int p1, int p2, int anchor1, int anchor2,
                                                   int radius_slot, int epsilon_slot, int charge_prod_slot,
                                                   double switch_scale1, double switch_scale2, int *index);
/**
 * Get the particles, slots and switch scales of an MM3* switched pair (each output may be NULL).
 *
 * @param force                  the handle
 * @param index                  the pair's index
 * @param[out] p1                the first particle
 * @param[out] p2                the second particle
 * @param[out] anchor1           the anchor of the first switch point
 * @param[out] anchor2           the anchor of the second switch point
 * @param[out] radius_slot       the slot of R
 * @param[out] epsilon_slot      the slot of eps
 * @param[out] charge_prod_slot  the slot of the charge product
 * @param[out] switch_scale1     s_1
 * @param[out] switch_scale2     s_2
 * @return HESSFIT_SUCCESS; HESSFIT_ERROR_INDEX for a bad index
 */
hessfit_status hessfit_force_get_mm3_switched_pair(const hessfit_force *force, int index, int *p1, int *p2,
                                                   int *anchor1, int *anchor2, int *radius_slot, int *epsilon_slot,
                                                   int *charge_prod_slot, double *switch_scale1,
                                                   double *switch_scale2);
/**
 * Set the particles, slots and switch scales of an MM3* switched pair (push them into a Context
 * with hessfit_force_update_parameters_in_context).
 *
 * @param force             the handle
 * @param index             the pair's index
 * @param p1                the first particle
 * @param p2                the second particle
 * @param anchor1           the anchor of the first switch point
 * @param anchor2           the anchor of the second switch point
 * @param radius_slot       the slot of R (nm; must be > 0)
 * @param epsilon_slot      the slot of eps (kJ/mol)
 * @param charge_prod_slot  the slot of the charge product qq (e^2)
 * @param switch_scale1     s_1 (finite, > 0)
 * @param switch_scale2     s_2 (finite, > 0)
 * @return HESSFIT_SUCCESS; HESSFIT_ERROR_INDEX for a bad index or an error (see above)
 */
hessfit_status hessfit_force_set_mm3_switched_pair(hessfit_force *force, int index, int p1, int p2, int anchor1,
                                                   int anchor2, int radius_slot, int epsilon_slot,
                                                   int charge_prod_slot, double switch_scale1, double switch_scale2);
/**
 * Get the number of MM3* switched pairs.
 *
 * @param force   the handle
 * @param[out] n  the count
 * @return HESSFIT_SUCCESS or HESSFIT_ERROR_NULL_ARGUMENT
 */
hessfit_status hessfit_force_get_num_mm3_switched_pairs(const hessfit_force *force, int *n);
/**
 * Add a 10-12 hydrogen bond (HessianForce::addHydrogenBond), r the p1-p2 distance:
 * E = C / r^12 - D / r^10, added to whatever else acts on the pair; no cutoff.
 *
 * @param force       the handle
 * @param p1          the first particle (the hydrogen)
 * @param p2          the second particle (the acceptor)
 * @param c_slot      the slot of C (kJ/mol nm^12)
 * @param d_slot      the slot of D (kJ/mol nm^10)
 * @param[out] index  the hydrogen bond's index (may be NULL)
 * @return HESSFIT_SUCCESS or an error (see above)
 */
hessfit_status hessfit_force_add_hydrogen_bond(hessfit_force *force, int p1, int p2, int c_slot, int d_slot, int *index);
/**
 * Get the particles and slots of a 10-12 hydrogen bond (each output may be NULL).
 *
 * @param force        the handle
 * @param index        the hydrogen bond's index
 * @param[out] p1      the first particle
 * @param[out] p2      the second particle
 * @param[out] c_slot  the slot of C
 * @param[out] d_slot  the slot of D
 * @return HESSFIT_SUCCESS; HESSFIT_ERROR_INDEX for a bad index
 */
hessfit_status hessfit_force_get_hydrogen_bond(const hessfit_force *force, int index, int *p1, int *p2, int *c_slot,
                                               int *d_slot);
/**
 * Set the particles and slots of a 10-12 hydrogen bond (push them into a Context with
 * hessfit_force_update_parameters_in_context).
 *
 * @param force   the handle
 * @param index   the hydrogen bond's index
 * @param p1      the first particle
 * @param p2      the second particle
 * @param c_slot  the slot of C (kJ/mol nm^12)
 * @param d_slot  the slot of D (kJ/mol nm^10)
 * @return HESSFIT_SUCCESS; HESSFIT_ERROR_INDEX for a bad index or an error (see above)
 */
hessfit_status hessfit_force_set_hydrogen_bond(hessfit_force *force, int index, int p1, int p2, int c_slot, int d_slot);
/**
 * Get the number of 10-12 hydrogen bonds.
 *
 * @param force   the handle
 * @param[out] n  the count
 * @return HESSFIT_SUCCESS or HESSFIT_ERROR_NULL_ARGUMENT
 */
hessfit_status hessfit_force_get_num_hydrogen_bonds(const hessfit_force *force, int *n);
/**
 * Exclude the 1-2 and 1-3 pairs of a bond graph and add its 1-4 pairs.
 *
 * @param force    the handle
 * @param bonds    2 * n_bonds particle indices, one pair per bond
 * @param n_bonds  the number of bonds
 * @return HESSFIT_SUCCESS; HESSFIT_ERROR_INDEX for a bad bond
 */
hessfit_status hessfit_force_create_exclusions_from_bonds(hessfit_force *force, const int *bonds, int n_bonds);
/**
 * Reduce a particle towards a partner (MacroModel's MM3* reduced hydrogens): every term of the
 * force (listed terms and plain nonbonded pairs) is evaluated at positions where
 * x'_particle = x_partner + factor (x_particle - x_partner), every other particle unchanged.
 * Forces, Hessian blocks and the contractions follow exactly through that linear map (see
 * HessianForce::addReducedParticle). Range, molecule, "reduced at most once" and "partner not
 * reduced" are checked when a Context is created (hessfit_force_validate).
 *
 * @param force       the handle
 * @param particle    the particle that moves (>= 0)
 * @param partner     the particle it moves towards (>= 0, not particle)
 * @param factor      the fraction of the partner-particle vector kept: finite and > 0 (MM3*: 0.923)
 * @param[out] index  the reduced particle's index (may be NULL)
 * @return HESSFIT_SUCCESS; HESSFIT_ERROR_INDEX for a bad particle, HESSFIT_ERROR_VALUE for a bad factor
 */
hessfit_status hessfit_force_add_reduced_particle(hessfit_force *force, int particle, int partner, double factor, int *index);
/**
 * Get a reduced particle (each output may be NULL).
 *
 * @param force          the handle
 * @param index          the reduced particle's index
 * @param[out] particle  the particle that moves
 * @param[out] partner   the particle it moves towards
 * @param[out] factor    the fraction kept
 * @return HESSFIT_SUCCESS; HESSFIT_ERROR_INDEX for a bad index
 */
hessfit_status hessfit_force_get_reduced_particle(const hessfit_force *force, int index, int *particle, int *partner, double *factor);
/**
 * Set a reduced particle (push it into a Context with hessfit_force_update_parameters_in_context).
 *
 * @param force     the handle
 * @param index     the reduced particle's index
 * @param particle  the particle that moves
 * @param partner   the particle it moves towards
 * @param factor    the fraction kept, finite and > 0
 * @return HESSFIT_SUCCESS; HESSFIT_ERROR_INDEX or HESSFIT_ERROR_VALUE as for the add
 */
hessfit_status hessfit_force_set_reduced_particle(hessfit_force *force, int index, int particle, int partner, double factor);
/**
 * Get the number of reduced particles.
 *
 * @param force   the handle
 * @param[out] n  the count
 * @return HESSFIT_SUCCESS or HESSFIT_ERROR_NULL_ARGUMENT
 */
hessfit_status hessfit_force_get_num_reduced_particles(const hessfit_force *force, int *n);
/**
 * Set how per-particle sigmas combine.
 *
 * @param force  the handle
 * @param rule   a hessfit_combining_rule
 * @return HESSFIT_SUCCESS; HESSFIT_ERROR_VALUE for an unknown rule
 */
hessfit_status hessfit_force_set_combining_rule(hessfit_force *force, hessfit_combining_rule rule);
/**
 * Set the factors that scale the Coulomb and Lennard-Jones energies of 1-4 pairs.
 *
 * @param force            the handle
 * @param coulomb14_scale  the Coulomb factor, finite (OPLS-AA: 0.5)
 * @param lj14_scale       the Lennard-Jones factor, finite (OPLS-AA: 0.5)
 * @return HESSFIT_SUCCESS; HESSFIT_ERROR_VALUE for a non-finite factor
 */
hessfit_status hessfit_force_set_14_scales(hessfit_force *force, double coulomb14_scale, double lj14_scale);

/* ---- checking, Context creation, serialization -------------------------------------------- */
/**
 * Check the force against a System as Context creation would (particle count, indices, molecule
 * membership, terms spanning two molecules, pairs defined twice).
 *
 * @param force   the handle
 * @param system  the System the force is meant for
 * @return HESSFIT_SUCCESS or the first problem's status (the message names it)
 */
hessfit_status hessfit_force_validate(const hessfit_force *force, const OpenMM_System *system);
/**
 * OpenMM_Context_create_2 with errors reported as a status instead of a C++ exception (which
 * OpenMM's C API cannot report).
 *
 * @param system         the System
 * @param integrator     the Integrator (owned by the caller, must outlive the Context)
 * @param platform_name  the platform ("Reference", "OpenCL", "CUDA"), or NULL for OpenMM's choice
 * @param precision      "single", "mixed" or "double", or NULL; ignored by platforms without a
 *                       Precision property
 * @param[out] context   the new Context (NULL on failure); free it with OpenMM_Context_destroy
 * @return HESSFIT_SUCCESS, or the status of the HessianForce error, or HESSFIT_ERROR_OPENMM
 */
hessfit_status hessfit_context_create(const OpenMM_System *system, OpenMM_Integrator *integrator,
                                      const char *platform_name, const char *precision, OpenMM_Context **context);
/**
 * hessfit_context_create on one device of a GPU platform: its DeviceIndex property (CUDA, OpenCL;
 * for OpenCL the index among the devices of its OpenCL platform).
 *
 * @param system         the System
 * @param integrator     the Integrator (owned by the caller, must outlive the Context)
 * @param platform_name  the platform ("Reference", "CPU", "OpenCL", "CUDA"), or NULL for OpenMM's choice
 * @param precision      "single", "mixed" or "double", or NULL (as hessfit_context_create)
 * @param device_index   the device (>= 0), or -1 for the platform's choice
 * @param[out] context   the new Context (NULL on failure); free it with OpenMM_Context_destroy
 * @return HESSFIT_SUCCESS; HESSFIT_ERROR_INVALID_ARGUMENT for a device_index below -1, or >= 0 on a
 *         platform without a DeviceIndex property (or with a NULL platform_name); otherwise as
 *         hessfit_context_create (a device the platform does not have is HESSFIT_ERROR_OPENMM)
 */
hessfit_status hessfit_context_create_on_device(const OpenMM_System *system, OpenMM_Integrator *integrator,
                                                const char *platform_name, const char *precision, int device_index,
                                                OpenMM_Context **context);
/**
 * OpenMM's LocalEnergyMinimizer::minimize (L-BFGS on the Context's positions, which it updates)
 * with errors as a status instead of a C++ exception.
 *
 * @param context         the Context
 * @param tolerance       the root-mean-square force (kJ/mol/nm, > 0) at which it stops
 * @param max_iterations  >= 0 (0: until converged)
 * @return HESSFIT_SUCCESS; HESSFIT_ERROR_VALUE for a bad argument, HESSFIT_ERROR_GEOMETRY when a
 *         HessianForce meets an undefined geometry on the way, HESSFIT_ERROR_OPENMM otherwise
 */
hessfit_status hessfit_context_minimize(OpenMM_Context *context, double tolerance, int max_iterations);
/**
 * OpenMM_XmlSerializer_deserializeSystem with errors reported as a status instead of a C++
 * exception: a HessianForce written by a newer hessfit, in a serialization version this build
 * cannot read, gives HESSFIT_ERROR_UNSUPPORTED naming the version.
 *
 * @param xml          the XML of a System (OpenMM_XmlSerializer_serializeSystem)
 * @param[out] system  the new System (NULL on failure); free it with OpenMM_System_destroy
 * @return HESSFIT_SUCCESS; HESSFIT_ERROR_UNSUPPORTED, another HessianForce status for a force the
 *         XML describes wrongly, HESSFIT_ERROR_OPENMM for malformed XML
 */
hessfit_status hessfit_system_deserialize(const char *xml, OpenMM_System **system);

/* ---- reading a Context (errors: HESSFIT_ERROR_NOT_IN_CONTEXT when the force is not part of the
 * Context's System, HESSFIT_ERROR_GEOMETRY for an undefined coordinate) ------------------- */
/**
 * Push the parameter table (and terms) into the Context without re-initialising it.
 *
 * @param force    the handle
 * @param context  a Context whose System holds the force
 * @return HESSFIT_SUCCESS; HESSFIT_ERROR_TOPOLOGY if the molecules changed
 */
hessfit_status hessfit_force_update_parameters_in_context(hessfit_force *force, OpenMM_Context *context);
/**
 * Get the energy and forces of the force's group in the Context (the force is alone in its group
 * unless the caller put others there).
 *
 * @param force        the handle
 * @param context      a Context whose System holds the force
 * @param[out] energy  kJ/mol
 * @param[out] forces  3 * n_particles doubles (kJ/mol/nm), or NULL
 * @return HESSFIT_SUCCESS or an error (see above)
 */
hessfit_status hessfit_force_get_energy_forces(hessfit_force *force, OpenMM_Context *context, double *energy, double *forces);
/**
 * Get the total length of the concatenated Hessian blocks.
 *
 * @param force       the handle
 * @param[out] size   the sum over molecules of (3 n_m)^2
 * @return HESSFIT_SUCCESS or HESSFIT_ERROR_NULL_ARGUMENT
 */
hessfit_status hessfit_force_get_hessian_size(const hessfit_force *force, long long *size);
/**
 * Get where a molecule's block starts in the concatenated Hessian blocks.
 *
 * @param force        the handle
 * @param molecule     the molecule's index (the molecule count gives the total size)
 * @param[out] offset  the offset, in doubles
 * @return HESSFIT_SUCCESS; HESSFIT_ERROR_INDEX for a bad molecule index
 */
hessfit_status hessfit_force_get_hessian_block_offset(const hessfit_force *force, int molecule, long long *offset);
/**
 * Compute the analytic Hessian blocks at the Context's positions.
 *
 * @param force        the handle
 * @param context      a Context whose System holds the force
 * @param[out] blocks  kJ/mol/nm^2, one row-major (3 n_m) x (3 n_m) block per molecule
 * @param size         the length of blocks; must equal the Hessian size
 * @return HESSFIT_SUCCESS, HESSFIT_ERROR_SIZE or an error (see above)
 */
hessfit_status hessfit_force_get_hessian_blocks(hessfit_force *force, OpenMM_Context *context, double *blocks, long long size);
/**
 * Compute dE/dslot for every slot at the Context's positions.
 *
 * @param force             the handle
 * @param context           a Context whose System holds the force
 * @param[out] derivatives  kJ/mol per slot unit
 * @param n                 the length of derivatives; must equal the number of slots
 * @return HESSFIT_SUCCESS, HESSFIT_ERROR_SIZE or an error (see above)
 */
hessfit_status hessfit_force_get_parameter_derivatives(hessfit_force *force, OpenMM_Context *context, double *derivatives, int n);

/* ---- adjoint contractions (parameter gradients of Hessian-space objectives) ----------------- */
/**
 * Compute derivatives[s] = tr(G^T dH/dslot_s) = sum over molecules m and block entries ij of
 * G_m,ij dH_m,ij/dslot_s, for every slot s, without forming any dH/dslot. For an objective L(H),
 * G = dL/dH: e.g. sum_k c_k w_k w_k^T for sum_k c_k lambda_k with eigenvectors w_k.
 *
 * @param force             the handle
 * @param context           a Context whose System holds the force
 * @param adjoint           G in the layout of hessfit_force_get_hessian_blocks; only its
 *                          symmetric part matters
 * @param size              the length of adjoint; must equal the Hessian size
 * @param[out] derivatives  kJ/mol/nm^2 times G's units, per slot unit
 * @param n                 the length of derivatives; must equal the number of slots
 * @return HESSFIT_SUCCESS; HESSFIT_ERROR_SIZE for a wrong size, HESSFIT_ERROR_VALUE for a NaN or
 *         infinite entry of G (the message names it), HESSFIT_ERROR_GEOMETRY
 */
hessfit_status hessfit_force_get_hessian_contraction_derivatives(hessfit_force *force, OpenMM_Context *context,
                                                                 const double *adjoint, long long size,
                                                                 double *derivatives, int n);
/**
 * Compute derivatives[s] = y . d(grad E)/dslot_s = -y . dF/dslot_s for every slot s (implicit
 * differentiation of an optimised geometry).
 *
 * @param force             the handle
 * @param context           a Context whose System holds the force
 * @param y                 3 * n_particles finite doubles (x, y, z per particle in System order)
 * @param n_y               the length of y; must be 3 * n_particles
 * @param[out] derivatives  kJ/mol/nm times y's units, per slot unit
 * @param n                 the length of derivatives; must equal the number of slots
 * @return HESSFIT_SUCCESS or an error as hessfit_force_get_hessian_contraction_derivatives
 */
hessfit_status hessfit_force_get_gradient_contraction_derivatives(hessfit_force *force, OpenMM_Context *context,
                                                                  const double *y, int n_y,
                                                                  double *derivatives, int n);

/* ---- per-molecule energies ---------------------------------------------------------------- */
/**
 * Compute the energy of each molecule alone (its terms and nonbonded pairs; they sum to the
 * force's energy).
 *
 * @param force          the handle
 * @param context        a Context whose System holds the force
 * @param[out] energies  kJ/mol, one per molecule
 * @param n              the length of energies; must equal the number of molecules
 * @return HESSFIT_SUCCESS, HESSFIT_ERROR_SIZE or an error (see above)
 */
hessfit_status hessfit_force_get_molecule_energies(hessfit_force *force, OpenMM_Context *context, double *energies, int n);
/**
 * Compute derivatives[s] = sum_m weights[m] dE_m/dslot_s for every slot s: the parameter gradient
 * of any loss L of the molecule energies given weights[m] = dL/dE_m.
 *
 * @param force             the handle
 * @param context           a Context whose System holds the force
 * @param weights           one finite weight per molecule
 * @param n_weights         the length of weights; must equal the number of molecules
 * @param[out] derivatives  kJ/mol times the weights' units, per slot unit
 * @param n                 the length of derivatives; must equal the number of slots
 * @return HESSFIT_SUCCESS; HESSFIT_ERROR_SIZE, HESSFIT_ERROR_VALUE naming the molecule, or an
 *         error (see above)
 */
hessfit_status hessfit_force_get_molecule_energy_derivatives(hessfit_force *force, OpenMM_Context *context,
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
 * description (projection, pairing, residual order, gradients) is in HessianObjective.h.
 */
/** How frequency targets find their MM modes. */
typedef enum {
    HESSFIT_NO_FREQUENCIES = 0,    /**< no frequency targets */
    HESSFIT_PAIR_BY_POSITION = 1,  /**< candidates above frequency_threshold at the first evaluation */
    HESSFIT_PAIR_BY_OVERLAP = 2    /**< maximum total overlap with frequency_vectors, every evaluation */
} hessfit_frequency_pairing;

/** The objectives of one molecule. Every array comes with its number of entries (an array may be
 *  NULL only with 0 entries); sizes are checked against the molecule (n particles, dim = 3n). */
typedef struct {
    const double *masses;             int n_masses;               /**< n, amu, Hessian-block order */
    int frequency_pairing;            /**< a hessfit_frequency_pairing (int: any value is checked) */
    int project_external;             /**< frequencies: project translations and rotations out */
    const double *frequency_targets;  int n_frequency_targets;    /**< cm^-1 */
    const double *frequency_weights;  int n_frequency_weights;    /**< one per target, >= 0 */
    double frequency_threshold;       /**< position pairing: candidates above it, cm^-1 */
    const double *frequency_vectors;  long long n_frequency_vectors; /**< overlap pairing: targets x dim */
    const double *eigen_vectors;      long long n_eigen_vectors;  /**< k x dim, orthonormal rows */
    const double *eigen_targets;      long long n_eigen_targets;  /**< k x k (lower triangle read) */
    const double *eigen_weights;      long long n_eigen_weights;  /**< k x k */
    const double *hessian_targets;    long long n_hessian_targets; /**< dim x dim (lower triangle read) or 0 */
    const double *hessian_weights;    long long n_hessian_weights; /**< as hessian_targets */
} hessfit_molecule_objective;

/**
 * Reset a molecule's objectives: every field zero, frequency_threshold = 50 cm^-1 (q2mm's).
 *
 * @param[out] molecule  the struct to reset (NULL is ignored)
 */
void hessfit_molecule_objective_init(hessfit_molecule_objective *molecule);
/**
 * Set the Context's objective, replacing an earlier one.
 *
 * @param force             the handle
 * @param context           a Context whose System holds the force
 * @param molecules         one entry per molecule of the force
 * @param n_molecules       the length of molecules; must equal the force's molecule count
 * @param frequency_factor  cm^-1 per sqrt(kJ/mol/nm^2/amu) (the fitting layer's
 *                          hessfit_frequency_factor_kj_mol_nm2_amu()); needed when any molecule has
 *                          frequencies
 * @return HESSFIT_SUCCESS; HESSFIT_ERROR_SIZE / HESSFIT_ERROR_VALUE naming the molecule, field and
 *         entry (wrong sizes, NaN, negative weights, masses <= 0, vectors not orthonormal)
 */
hessfit_status hessfit_force_set_hessian_objective(hessfit_force *force, OpenMM_Context *context,
                                                   const hessfit_molecule_objective *molecules, int n_molecules,
                                                   double frequency_factor);
/**
 * Evaluate the Context's objective.
 *
 * @param force           the handle
 * @param context         a Context whose System holds the force
 * @param[out] loss       the loss, sum r_i^2
 * @param[out] dLdslot    dL/dslot (loss units per slot unit), or NULL with n = 0 for no gradient
 * @param n               the length of dLdslot: the number of slots, or 0
 * @param[out] residuals  the r_i, or NULL with n_res = 0
 * @param n_res           the length of residuals: hessfit_force_get_hessian_objective_size's
 *                        count, or 0
 * @return HESSFIT_SUCCESS; HESSFIT_ERROR_VALUE without an objective or when an eigensolver fails,
 *         HESSFIT_ERROR_SIZE, HESSFIT_ERROR_GEOMETRY
 */
hessfit_status hessfit_force_compute_hessian_objective(hessfit_force *force, OpenMM_Context *context, double *loss,
                                                       double *dLdslot, int n, double *residuals, long long n_res);
/**
 * Say which slots' dL/dslot hessfit_force_compute_hessian_objective must give exactly from now on
 * (e.g. those a fit's free values move); the other entries are then 0 (the Reference platform
 * skips the terms none of whose slots is listed). Slots added later count as
 * listed; kept when the objective is set again.
 *
 * @param force    the handle
 * @param context  a Context whose System holds the force
 * @param slots    distinct slots in range, or NULL with n = 0 for every slot (the default)
 * @param n        the length of slots
 * @return HESSFIT_SUCCESS; HESSFIT_ERROR_SIZE (a slot out of range), HESSFIT_ERROR_VALUE (a slot
 *         listed twice), naming the entry
 */
hessfit_status hessfit_force_set_hessian_objective_gradient_slots(hessfit_force *force, OpenMM_Context *context,
                                                                  const int *slots, int n);
/**
 * Get the sizes of the Context's objective (0 and 0 when none is set).
 *
 * @param force                     the handle
 * @param context                   a Context whose System holds the force
 * @param[out] n_residuals          the residual count (may be NULL)
 * @param[out] n_frequency_targets  the total frequency targets (may be NULL)
 * @return HESSFIT_SUCCESS or an error (see above)
 */
hessfit_status hessfit_force_get_hessian_objective_size(hessfit_force *force, OpenMM_Context *context,
                                                        long long *n_residuals, int *n_frequency_targets);
/**
 * Get which MM mode each frequency target was compared with in the last evaluation.
 *
 * @param force       the handle
 * @param context     a Context whose System holds the force
 * @param[out] modes  for every frequency target (molecules concatenated), the mode index in
 *                    ascending eigenvalue order of the molecule's mode list, -1 if none
 * @param n           the length of modes; must equal the total frequency targets
 * @return HESSFIT_SUCCESS, HESSFIT_ERROR_SIZE or an error (see above)
 */
hessfit_status hessfit_force_get_hessian_objective_pairing(hessfit_force *force, OpenMM_Context *context, int *modes,
                                                           int n);
/**
 * One molecule's residuals and their exact Jacobian with respect to every slot
 * (HessianForce::computeHessianObjectiveJacobian): frequency targets keep the last evaluation's
 * pairing, so evaluate first at the same parameters.
 *
 * @param force           the handle
 * @param context         a Context whose System holds the force
 * @param molecule        the molecule (0-based)
 * @param slots           the slots wanted (distinct, in range), or NULL with n_slots = 0 for all
 * @param n_slots         the length of slots
 * @param[out] residuals  its n_res residuals (its slice of the evaluation's)
 * @param n_res           the molecule's residual count (its frequency targets, eigenmatrix and
 *                        Hessian lower triangles)
 * @param[out] jacobian   slot-major: jacobian[k * n_res + i] = d r_i / d slot_{slots[k]} (all: k = s)
 * @param n_jac           the length of jacobian: n_res times n_slots (all: the number of slots)
 * @return HESSFIT_SUCCESS, HESSFIT_ERROR_SIZE (a wrong count or molecule), or an error as
 *         hessfit_force_compute_hessian_objective's
 */
hessfit_status hessfit_force_compute_hessian_objective_jacobian(hessfit_force *force, OpenMM_Context *context, int molecule,
                                                                const int *slots, int n_slots, double *residuals,
                                                                long long n_res, double *jacobian, long long n_jac);
/**
 * Several molecules' residuals and their exact Jacobian in one kernel call, the molecules in threads
 * (HessianForce::computeHessianObjectiveJacobian with a list; HESSFIT_NUM_THREADS; on the GPU
 * platforms the bilinear forms u^T dH/dslot w on the device): bit for bit the one-molecule calls'
 * results, concatenated in list order, whatever the thread count. Frequency
 * targets keep the last evaluation's pairing, so evaluate first at the same parameters.
 *
 * @param force           the handle
 * @param context         a Context whose System holds the force
 * @param molecules       the molecules (0-based, distinct, at least one), in any order
 * @param n_molecules     the length of molecules
 * @param slots           the slots wanted (distinct, in range), or NULL with n_slots = 0 for all
 * @param n_slots         the length of slots
 * @param[out] residuals  the listed molecules' residuals, concatenated in list order
 * @param n_res           the sum of the listed molecules' residual counts
 * @param[out] jacobian   the listed molecules' blocks in list order: molecule m's (n_m residuals)
 *                        is slot-major, block[k * n_m + i] = d r_i / d slot_{slots[k]} (all: k = s),
 *                        and starts at n_slots (all: the number of slots) times the residuals of
 *                        the molecules listed before it
 * @param n_jac           the length of jacobian: n_res times n_slots (all: the number of slots)
 * @return HESSFIT_SUCCESS, HESSFIT_ERROR_SIZE (a wrong count, an empty list, a molecule out of
 *         range), HESSFIT_ERROR_VALUE (a molecule listed twice), or an error as
 *         hessfit_force_compute_hessian_objective's (the failing molecule at the lowest list position)
 */
hessfit_status hessfit_force_compute_hessian_objective_jacobians(hessfit_force *force, OpenMM_Context *context,
                                                                 const int *molecules, int n_molecules, const int *slots,
                                                                 int n_slots, double *residuals, long long n_res,
                                                                 double *jacobian, long long n_jac);

#ifdef __cplusplus
}
#endif
#endif
