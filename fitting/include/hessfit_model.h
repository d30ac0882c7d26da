#ifndef HESSFIT_MODEL_H_
#define HESSFIT_MODEL_H_
/*
 * The fit model (libhessfit_model): a typed training set -- molecules, their typed terms and a
 * force field -- as ONE OpenMM System and Context holding one HessianForce, with the force
 * field's parameters as a vector of free values in canonical units.
 *
 *   hessfit_model_create      every atom of every molecule in one System (one molecule group
 *                             each), one HessianForce term per typed term, one parameter slot per
 *                             (force-field parameter, value) that some term uses, shared by all
 *                             terms that use it; the Context is created once, positions = each
 *                             molecule's coordinates.
 *   hessfit_model_add_free    declares ff->params[param].values[value] free; x is the vector of
 *                             free values in the force field's canonical units (kcal/mol,
 *                             Angstrom, degrees, E = k (x - x0)^2; hessfit_forcefield.h).
 *   hessfit_model_set_free    pushes x into the slot table (one updateParametersInContext, the
 *                             table-only fast path); evaluations then read that table.
 *   hessfit_model_write_back  stores x into the force field (hessfit_fld_write /
 *                             hessfit_frcmod_write then rewrite exactly the fitted values).
 *
 * Slots. Every slot is factor * one canonical value (hessfit_units.h):
 *   bond      k   kcal/mol/A^2   -> kJ/mol/nm^2    HESSFIT_KCAL_PER_MOL_PER_A2_TO_KJ_PER_MOL_PER_NM2 (418.4)
 *             r0  A              -> nm             HESSFIT_ANGSTROM_TO_NM
 *   angle     k   kcal/mol/rad^2 -> kJ/mol/rad^2   HESSFIT_KCAL_PER_MOL_PER_RAD2_TO_KJ_PER_MOL_PER_RAD2
 *             theta0 deg         -> rad            HESSFIT_DEG_TO_RAD
 *   torsion, Fourier improper: per triple (k, phase, n)
 *             k   kcal/mol       -> kJ/mol         HESSFIT_KCAL_TO_KJ
 *             phase deg          -> rad            HESSFIT_DEG_TO_RAD
 *             n   the term's periodicity (an integer, never a slot, never free)
 *   harmonic improper  k kcal/mol/rad^2 -> kJ/mol/rad^2 (phi0 is a constant 0 slot)
 *   vdw       R*  A              -> LJ sigma nm    HESSFIT_RSTAR_A_TO_LJ_SIGMA_NM (2 R* / 2^(1/6))
 *             eps kcal/mol       -> kJ/mol         HESSFIT_KCAL_TO_KJ
 * so d/dx_i = factor_i d/dslot_i exactly (hessfit_model_slot_gradient_to_free). Charges are the
 * molecules' partial charges, one constant slot per atom (not force-field parameters).
 *
 * Terms (HessianForce energy forms, hessfit's "no 1/2" convention on both sides):
 *   bond -> harmonic bond; angle -> harmonic angle; torsion -> one periodic torsion per Fourier
 *   triple whose k is not 0 or is free; improper with HESSFIT_IMPROPER_HARMONIC -> harmonic improper
 *   k phi^2 (phi0 = 0), with HESSFIT_IMPROPER_FOURIER -> periodic impropers (triples as torsions);
 *   HESSFIT_MATCH_NO_TERM terms are left out. An improper is the dihedral of its central atom (the one
 *   bonded to the other three) and the other three in the term's order: (c, a, b, d) as is,
 *   (a, b, d, c) as is (the same dihedral as (c, d, b, a)), a centre listed second or third moved
 *   to the front -- the dihedral hessfit_ffxml_write writes; with an OpenMM ForceField XML every
 *   improper as is, in the order the typing gave it (OpenMM's, the centre third). Freeing the k or phase of a triple whose
 *   k is 0 adds its terms then (one full updateParametersInContext).
 *
 * Nonbonded (option, off by default): per atom Lennard-Jones from the force field's vdw
 * parameter of its atom type (the exact type, the last such main-table line; else the one
 * equivalent type, .fld atom-type equivalences, that has one), charges from the molecule's
 * partial_charges, exclusions of 1-2 and 1-3 pairs from the bond terms and 1-4 pairs scaled by
 * the options. Lorentz-Berthelot combining (default) puts a pair's LJ minimum at R*_i + R*_j,
 * MM3's and AMBER's rule; geometric combining does not.
 *
 * MM3* form (HESSFIT_MODEL_FORM_MM3, an .fld only): instead of the harmonic terms, MacroModel's
 * whole MM3* energy of each molecule as hessfit_mm3_build finds it (anharmonic stretch and bend,
 * stretch-bend, bend-bend, torsion-stretch, 1-3-fold torsions, cosine out-of-plane, Buckingham van
 * der Waals and bond-moment charges on the reduced-hydrogen geometry; docs/mm3.md). Its slots are
 * MacroModel's constants in OpenMM units; a fitted value (bond k, r0; angle k, theta0; torsion V;
 * out-of-plane k; vdW R* and eps) moves every term that uses it (stretch-bend and torsion-stretch r0,
 * bend-bend theta0, through r0 the bond-moment charges, through R* and eps every pair of its atoms
 * except special pairs, with their chain rule). Torsion phases cannot be free in it
 * (HESSFIT_ERROR_UNSUPPORTED); `nonbonded` must be 0 (the form has its own pairs). A free value
 * that feeds only derived slots (vdW) has no slot of its own: hessfit_model_free_parameter gives
 * slot -1 and factor 0 for it. The harmonic form leaves all that out of an MM3* force field:
 * docs/fitting.md, "The model".
 *
 * Hessians come back in Hartree/Bohr^2 (hessfit_units.h), one dense row-major (3 n_m) x (3 n_m)
 * block per molecule, atoms in the molecule's order then x, y, z, concatenated in molecule order
 * (hessfit_model_molecule_offset). Energies in kcal/mol.
 *
 * Errors: every function returns an hessfit_status; hessfit_last_error() names the molecule, term,
 * parameter (file:line) or free index; a failure of the hessfit C API keeps its status, with
 * the call named before its message. A failed call leaves the free values, the force
 * field and the caller's data as they were (hessfit_model_set_free restores the previous values when
 * the push fails; a failed hessfit_model_add_free of a zero triple may leave its k = 0 terms added).
 * The plugin kernels must be loaded (OpenMM_Platform_loadPluginsFromDirectory) before
 * hessfit_model_create. A model is not thread-safe.
 */
#include "hessfit.h"
#include "hessfit_elements.h"
#include "hessfit_forcefield.h"
#include "hessfit_molecule.h"
#include "hessfit_status.h"
#include "hessfit_typing.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hessfit_model hessfit_model;

/** Which energy the model evaluates. */
typedef enum hessfit_model_form {
    HESSFIT_MODEL_FORM_HARMONIC = 0, /**< the harmonic model above, for any force field (q2mm's) */
    HESSFIT_MODEL_FORM_MM3 = 1       /**< an MM3* .fld as MacroModel evaluates it: every term of hessfit_mm3.h */
} hessfit_model_form;

typedef struct hessfit_model_options {
    hessfit_model_form form;          /* default HESSFIT_MODEL_FORM_HARMONIC */
    const char *platform;             /* OpenMM platform name; default "Reference" */
    const char *precision;            /* "single", "mixed", "double" or NULL (platform default) */
    int device_index;                 /* the GPU platform's DeviceIndex; default -1 (the platform's choice) */
    hessfit_mass_kind masses;              /* System masses; default HESSFIT_MASS_MONOISOTOPIC */
    int nonbonded;                    /* 1: Lennard-Jones + Coulomb; default 0 (bonded terms only) */
    hessfit_combining_rule combining;  /* default HESSFIT_COMBINE_LORENTZ_BERTHELOT */
    double coulomb14_scale;           /* 1-4 pair scales, >= 0; default 1.0 and 1.0 (MM3: */
    double lj14_scale;                /*   unscaled; AMBER 1/1.2 and 0.5; OPLS 0.5 and 0.5) */
} hessfit_model_options;

/** The defaults above. */
hessfit_model_options hessfit_model_default_options(void);
/** The options the model was created with (the defaults for a NULL model); platform and precision
 * point into the model. */
hessfit_model_options hessfit_model_get_options(const hessfit_model *model);

/** Builds the model of n_mols molecules (mols[m] typed as typed[m] against ff); opt may be NULL
 * (defaults). Copies what it needs: ff, mols and typed may be freed afterwards. */
hessfit_status hessfit_model_create(const hessfit_forcefield *ff, const hessfit_molecule *mols, const hessfit_typed_molecule *typed,
                          int n_mols, const hessfit_model_options *opt, hessfit_model **model);
void hessfit_model_destroy(hessfit_model *model);

/** ---- layout ------------------------------------------------------------------------------ */
int hessfit_model_n_molecules(const hessfit_model *model);
/** Atoms of molecule mol (-1 when mol is out of range). */
int hessfit_model_n_atoms(const hessfit_model *model, int mol);
/** Particles of the System (all atoms of all molecules; molecule m's atoms are consecutive). */
int hessfit_model_n_particles(const hessfit_model *model);
/** HessianForce terms now in the force (grows when a zero triple is freed). */
int hessfit_model_n_terms(const hessfit_model *model);
/** Sum over molecules of (3 n_m)^2: the length of hessfit_model_hessians_all's output. */
long long hessfit_model_hessian_size(const hessfit_model *model);
/** Where molecule mol's block starts in hessfit_model_hessians_all's output (-1 when out of range). */
long long hessfit_model_molecule_offset(const hessfit_model *model, int mol);

/** ---- slots ------------------------------------------------------------------------------- */
int hessfit_model_n_slots(const hessfit_model *model);
/** The slot table as the model last pushed it (HessianForce units), n = hessfit_model_n_slots. */
hessfit_status hessfit_model_get_slots(const hessfit_model *model, double *slots, int n);

/* ---- free parameters --------------------------------------------------------------------- */
/** Frees ff->params[param].values[value]. The parameter must be used by some term (a vdw
 * parameter by some atom when nonbonded terms are on); value must be a k, equilibrium, phase,
 * R*, eps or (MM3* form) a bond moment, never a periodicity; freeing it twice is an error. A bond
 * moment on a stretch line that does not orient one of its bonds (hessfit_mm3_stretch.plus -1)
 * is an error naming the bond. */
hessfit_status hessfit_model_add_free(hessfit_model *model, int param, int value);
/** Terms (vdW parameters in the MM3* form or with nonbonded terms: atoms) that use parameter
 * param; 0 for an index out of range. */
int hessfit_model_param_uses(const hessfit_model *model, int param);

/* Which values hessfit_model_add_free_kind frees, or-ed: */
#define HESSFIT_MODEL_FREE_K 1u     /* bond/angle/harmonic improper k; Fourier k; vdw eps; stretch-bend k */
#define HESSFIT_MODEL_FREE_X0 2u    /* bond r0, angle theta0; vdw R* */
#define HESSFIT_MODEL_FREE_PHASE 4u /* Fourier phases */
#define HESSFIT_MODEL_FREE_MU 8u    /* bond moments (MM3* form: the charges follow) */
/** Frees those values of every used parameter of one kind (in the MM3* form, Fourier triples,
 * stretch-bend k and bond moments only where they are not 0; free a zero one with
 * hessfit_model_add_free). Values already free are skipped; *n_added (may be NULL) counts the new
 * ones. */
hessfit_status hessfit_model_add_free_kind(hessfit_model *model, hessfit_param_kind kind, unsigned what, int *n_added);

/** 1 when some term of the model (a vdw parameter: some atom) uses parameter param, so that
 * hessfit_model_add_free may free its values; 0 otherwise (also out of range). */
int hessfit_model_parameter_used(const hessfit_model *model, int param);

int hessfit_model_n_free(const hessfit_model *model);
/** What free value i is: its parameter and value index, its slot, and factor = dslot/dx_i
 * (each output may be NULL). */
hessfit_status hessfit_model_free_parameter(const hessfit_model *model, int i, int *param, int *value, int *slot, double *factor);
/** x[i] = the current canonical value of free value i. */
hessfit_status hessfit_model_get_free(const hessfit_model *model, double *x);
/** Sets every free value (finite, else HESSFIT_ERROR_NONFINITE naming it and nothing changes) and
 * pushes the table into the Context. */
hessfit_status hessfit_model_set_free(hessfit_model *model, const double *x);
/** ff->params[param].values[value] = x for every free value. ff must be the force field the
 * model was created from, or a copy with the same parameter lines (checked). */
hessfit_status hessfit_model_write_back(const hessfit_model *model, hessfit_forcefield *ff);
/** d_free[i] = factor_i * d_slot[slot_i]: d_slot per HessianForce slot unit (n_slots entries),
 * d_free per canonical unit (n_free entries). */
hessfit_status hessfit_model_slot_gradient_to_free(const hessfit_model *model, const double *d_slot, double *d_free);

/* ---- evaluations at the molecules' coordinates ------------------------------------------- */
/** Molecule mol's Hessian, Hartree/Bohr^2, (3 n) x (3 n) row-major. */
hessfit_status hessfit_model_hessian(hessfit_model *model, int mol, double *hessian);
/** Every block (one kernel call), Hartree/Bohr^2, hessfit_model_hessian_size doubles. */
hessfit_status hessfit_model_hessians_all(hessfit_model *model, double *hessians);
/** Molecule mol's energy, kcal/mol. The HessianForce reports the sum over molecules only, so the
 * first call for a molecule builds a small Context holding just that molecule (same platform,
 * same slot table); later calls push the table to it when it changed. */
hessfit_status hessfit_model_energy(hessfit_model *model, int mol, double *energy);
/** Sum over all molecules, kcal/mol, from the model's Context (one evaluation). */
hessfit_status hessfit_model_total_energy(hessfit_model *model, double *energy);
/** d(total energy)/dx_i, kcal/mol per canonical unit, from the analytic dE/dslot. */
hessfit_status hessfit_model_energy_gradient(hessfit_model *model, double *d_free);

/** Molecule mol's forces at its coordinates, kcal/mol/A, 3 n (atom order, x y z), from its own
 * Context (as hessfit_model_energy). */
hessfit_status hessfit_model_forces(hessfit_model *model, int mol, double *forces);
/** Molecule mol minimised from its coordinates with OpenMM's LocalEnergyMinimizer in its own
 * Context (as hessfit_model_energy), to a root-mean-square force of tolerance kcal/mol/A (> 0);
 * coords (3 n, Angstrom) gets the minimum. The molecule's own Context is back at its coordinates
 * afterwards, also on failure (HESSFIT_ERROR_GEOMETRY when the minimiser meets an undefined
 * coordinate, naming the molecule). */
hessfit_status hessfit_model_minimize(hessfit_model *model, int mol, double tolerance, double *coords);

/* ---- the underlying objects (owned by the model) ----------------------------------------- */
/** For kernel calls the model does not wrap (adjoint gradients): read them freely; a slot table
 * set through them is replaced by the next hessfit_model_set_free. */
hessfit_force *hessfit_model_force(hessfit_model *model);
OpenMM_Context *hessfit_model_context(hessfit_model *model);
OpenMM_System *hessfit_model_system(hessfit_model *model);

#ifdef __cplusplus
}
#endif
#endif
