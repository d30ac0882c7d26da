#ifndef HESSFIT_OBJECTIVE_H_
#define HESSFIT_OBJECTIVE_H_
/*
 * Hessian-space objectives of a fit model (libhessfit_model): the QM data of every molecule --
 * its Hessian in Hartree/Bohr^2 -- turned into targets for the plugin's objective kernel
 * (HessianForce::setHessianObjective, plugin/include/HessianObjective.h), so that one evaluation
 * is: push the free values (hessfit_model_set_free), ONE kernel call that gives the loss, dL/dslot for
 * every slot and the residuals of all molecules, and the chain to the free values
 * (hessfit_model_slot_gradient_to_free).
 *
 * Loss = sum_i r_i^2, r_i = w_i (target_i - value_i). Per molecule, any combination of:
 *
 *   Frequencies (cm^-1, weight per cm^-1; default weight 0.001 = q2mm's):
 *     HESSFIT_OBJ_FREQUENCIES_Q2MM     q2mm's benchmark objective: MM Hessian mass-weighted, NOT
 *                                 projected; the QM frequencies above the threshold (default
 *                                 50 cm^-1, from the unprojected QM Hessian) in ascending order,
 *                                 paired by position with the MM frequencies above the threshold
 *                                 computed once, with the parameters the model has when
 *                                 hessfit_objective_create runs (the MM mode indices are kept); when
 *                                 the counts differ the lower count is paired.
 *     HESSFIT_OBJ_FREQUENCIES_OVERLAP  (default) translations and rotations projected out of both
 *                                 Hessians (P H P, P from the masses and the molecule's
 *                                 geometry); every QM vibration is a target, paired at every
 *                                 evaluation with the MM mode of maximum eigenvector overlap
 *                                 |<v_mm, v_qm>|^2 by an optimal assignment (the Hungarian
 *                                 method: the pairing maximises the summed overlap over all
 *                                 targets, each MM mode used once), so a target follows its mode
 *                                 when equilibrium values drift and frequencies reorder.
 *   Eigenmatrix (q2mm's "eig" data): the QM mass-weighted normal modes V (unprojected, all 3n),
 *     elements E = V A V^T of the mass-weighted MM Hessian A, the lower triangle (a >= b) against
 *     the QM eigenmatrix (its eigenvalues on the diagonal, 0 elsewhere), in Hartree/Bohr^2/amu.
 *     q2mm's default weights: diagonal 0.1 (eig_d_low below 0.1173 Hartree/Bohr^2/amu, eig_d_high
 *     above: both 0.1), off-diagonal 0.05 (eig_o); weight 0 (eig_i) on the rigid-body modes (the
 *     6, or 5 for a linear molecule, of smallest |eigenvalue| besides a reaction coordinate) and on
 *     every off-diagonal element touching one; with HESSFIT_OBJ_TS_SKIP also on the reaction coordinate.
 *   Hessian elements: the lower triangle of the MM Hessian against the QM Hessian, in
 *     Hartree/Bohr^2; weights 0.1 on the diagonal, 0.05 off it (q2mm's with_hessian_from_matrix).
 *
 * Transition states: a molecule is one when its projected QM Hessian has a negative vibrational
 * eigenvalue; the most negative is the reaction coordinate. ts chooses how it is fitted:
 *   HESSFIT_OBJ_TS_SKIP     (default) weight 0 on it: q2mm's eigenmatrix default (eig_i = 0 with
 *                      skip_first); in the q2mm frequency mode the negative frequency lies below
 *                      the threshold anyway. In the overlap mode it still takes part in the
 *                      assignment, so no other target is paired with the MM reaction mode.
 *   HESSFIT_OBJ_TS_KEEP     compare the negative eigenvalue (imaginary frequency, negative cm^-1) as is
 *                      (Lime and Norrby's method D; in the q2mm frequency mode it stays below the
 *                      threshold, as q2mm has it);
 *   HESSFIT_OBJ_TS_REPLACE  replace the target by ts_replace_eigenvalue, default 1.0 Hartree/Bohr^2/amu
 *                      (method C, q2mm's replace_neg_eigenvalue; 5140 cm^-1 as a frequency),
 *                      weighted like any other diagonal element / frequency.
 * The reaction coordinate is the QM mode of the most negative eigenvalue of each analysis used
 * (unprojected for the q2mm frequencies and the eigenmatrix, projected for the overlap mode).
 * Hessian elements have no transition-state handling.
 *
 * Degenerate modes: an eigenvalue derivative exists for a simple eigenvalue only; the loss is
 * differentiable across a degenerate pair of MM modes only when their paired targets are equal.
 *
 * Checks at creation (every error names the molecule): the QM molecule of every molecule with an
 * objective must have a Hessian, the model's atom count, elements whose (monoisotopic or average)
 * mass is the model particle's, and coordinates within 1e-3 Angstrom of the model's positions
 * (the MM Hessians are taken at the model's geometry, which must be the QM one). A failure of the
 * hessfit C API keeps its status, with the call named before its message. The objective
 * belongs to the model's Context: create one objective per model at a time (a second replaces the
 * first one's targets in the Context).
 */
#include "hessfit_model.h"
#include "hessfit_molecule.h"
#include "hessfit_status.h"
#include "hessfit_typing.h"
#include "hessfit_units.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hessfit_objective hessfit_objective;

typedef enum {
    HESSFIT_OBJ_FREQUENCIES_NONE = 0,
    HESSFIT_OBJ_FREQUENCIES_Q2MM = 1,
    HESSFIT_OBJ_FREQUENCIES_OVERLAP = 2
} hessfit_objective_frequencies;

typedef enum { HESSFIT_OBJ_TS_SKIP = 0, HESSFIT_OBJ_TS_KEEP = 1, HESSFIT_OBJ_TS_REPLACE = 2 } hessfit_objective_ts;

typedef struct hessfit_objective_options {
    hessfit_objective_frequencies frequencies; /* default HESSFIT_OBJ_FREQUENCIES_OVERLAP */
    double frequency_weight;              /* per cm^-1; default 0.001 */
    double frequency_threshold;           /* HESSFIT_OBJ_FREQUENCIES_Q2MM, cm^-1; default 50 */
    int eigenmatrix;                      /* 1: eigenmatrix elements; default 0 */
    int eigenmatrix_diagonal_only;        /* 1: off-diagonal weights 0; default 0 */
    double eig_i, eig_d_low, eig_d_high, eig_o; /* q2mm's 0, 0.1, 0.1, 0.05 (per Hartree/Bohr^2/amu) */
    double eig_threshold;                 /* low/high boundary, Hartree/Bohr^2/amu; default 0.1173 */
    int hessian;                          /* 1: Hessian elements; default 0 */
    double hessian_diagonal_weight;       /* per Hartree/Bohr^2; default 0.1 */
    double hessian_offdiagonal_weight;    /* default 0.05 */
    hessfit_objective_ts ts;                   /* default HESSFIT_OBJ_TS_SKIP */
    double ts_replace_eigenvalue;         /* Hartree/Bohr^2/amu; default 1.0 */
} hessfit_objective_options;

/** The defaults above. */
hessfit_objective_options hessfit_objective_default_options(void);

/**
 * Builds the targets of every molecule from qm[m] (the QM data of the model's molecule m, same
 * atoms in the same order) with options opt[m] (opt may be NULL: defaults for all), sets them in
 * the model's Context and evaluates once (the q2mm mode's MM selection). A molecule whose options
 * have no objective (frequencies NONE, no eigenmatrix, no Hessian) needs no QM data.
 */
hessfit_status hessfit_objective_create(hessfit_model *model, const hessfit_molecule *qm, int n_mols, const hessfit_objective_options *opt,
                              hessfit_objective **objective);
void hessfit_objective_destroy(hessfit_objective *objective);

/**
 * One evaluation: hessfit_model_set_free(x_free) (x_free NULL: the model's current values), one kernel
 * call, the chain rule. loss required; grad_free (hessfit_model_n_free entries, d loss / d x in the
 * canonical units) may be NULL for the loss alone (no contraction); residuals
 * (hessfit_objective_n_residuals entries, the kernel's layout) may be NULL. The free values stay at
 * x_free afterwards.
 */
hessfit_status hessfit_objective_evaluate(hessfit_objective *objective, const double *x_free, double *loss, double *grad_free,
                                double *residuals);

/*
 * ---- the residual Jacobian and the normal equations ------------------------------------------
 *
 * Exact d r_i / d x_j for every part, in the residual layout of hessfit_objective_evaluate
 * (hessfit_objective_part_range), x the free values in the canonical units (as the gradient):
 * frequencies -w F/(2 sqrt|l|) u^T dH/dp u (u = M^-1/2 v of the mode the evaluation paired, through
 * the rigid-body projection where the mode uses it: P v = v), eigenmatrix elements -w u_a^T dH/dp u_b,
 * Hessian elements -w dH_ij/dp (one kernel pass per molecule: bilinear forms of dH/dslot), relative
 * energies -w (dE_i/dp - dE_ref/dp), geometry by implicit differentiation at the minima
 * (hf_objective_geometry.c); then the chain from slots to free values (MM3* derived slots included).
 * Weight-0 residuals have rows of 0. Each call evaluates first (one hessfit_objective_evaluate
 * without gradient) at x_free, so the pairing, the minima and the residuals are that evaluation's;
 * the free values stay at x_free.
 */
/** Residuals (as evaluate's) and J, row-major n_residuals x n_free, J[i*n_free+j] = d r_i/d x_j; loss may be NULL. 2 J^T r equals evaluate's gradient to rounding. */
hessfit_status hessfit_objective_jacobian(hessfit_objective *objective, const double *x_free, double *loss, double *residuals, double *jacobian);
/** The normal equations without storing J: jtj (n_free x n_free, row-major, both triangles), jtr (n_free) = J^T r; loss required. Use this for big sets (the eigenmatrix of many molecules has ~10^5 residuals): accumulate per molecule. */
hessfit_status hessfit_objective_normal_equations(hessfit_objective *objective, const double *x_free, double *loss, double *jtj, double *jtr);

long long hessfit_objective_n_residuals(const hessfit_objective *objective);
int hessfit_objective_n_frequency_targets(const hessfit_objective *objective);
/** Target frequency (cm^-1), weight, and molecule of frequency target i (outputs may be NULL). */
hessfit_status hessfit_objective_frequency_target(const hessfit_objective *objective, int i, int *mol, double *target_cm1,
                                        double *weight);
/** The MM mode each frequency target was paired with in the last evaluation (-1: none). */
hessfit_status hessfit_objective_pairing(hessfit_objective *objective, int *modes);
/** Objective kernel calls made so far (one per hessfit_objective_evaluate, one at creation; none while
 * no molecule has a Hessian-space target). */
unsigned long long hessfit_objective_n_kernel_calls(const hessfit_objective *objective);

/*
 * ---- energies and geometry -------------------------------------------------------------------
 *
 * Two more parts of the same loss, added to an objective after hessfit_objective_create (each at most
 * once); hessfit_objective_evaluate then returns the sum of all parts, its gradient, and the residuals
 * of all parts one after the other: the Hessian-space ones (the kernel's layout), the energies',
 * the geometry's (hessfit_objective_part_range).
 *
 * Relative conformer energies (q2mm's "e" data). Conformers of one molecule share a group; per
 * group the reference is the structure of lowest QM energy (q2mm's zero: the QM minimum, and the
 * MM energy of that same structure), and every structure i of the group has
 *     r_i = w_i ((E_qm,i - E_qm,ref) - (E_mm,i - E_mm,ref))        kcal/mol
 * (the reference's r is 0). MM energies are single points at the model's geometry, which is the QM
 * one (q2mm's default): one kernel call for all molecules (HessianForce::getMoleculeEnergies), and
 * the gradient by the adjoint route in one more (getMoleculeEnergyDerivatives with dL/dE_m).
 * q2mm's weight is 20 per kJ/mol (its energies are in kJ/mol), HESSFIT_OBJ_ENERGY_WEIGHT per kcal/mol
 * here, so that the residuals are q2mm's.
 *
 * Geometry of the MM-minimised structures (q2mm's "b", "a", "t" data): every molecule with a target
 * is minimised in a second Context of the model's molecules (the first keeps the QM geometry for
 * the Hessians and energies), warm-started from its previous minimum: OpenMM's
 * LocalEnergyMinimizer, then Newton steps with the analytic Hessian blocks (rigid-body directions
 * projected out, Levenberg-damped and energy-checked where needed) to a largest gradient component
 * of HESSFIT_OBJ_GEOMETRY_GRADIENT_TOL kJ/mol/nm, so that the minimum x*(p) satisfies grad E = 0 to
 * round-off. Targets are bond lengths (Angstrom), angles and IUPAC torsions (degrees) at x*,
 *     r = w (target - value)   (torsions: the difference wrapped into (-180, 180]),
 * targets the QM values, q2mm's weights HESSFIT_OBJ_BOND_WEIGHT per Angstrom, HESSFIT_OBJ_ANGLE_WEIGHT and
 * HESSFIT_OBJ_TORSION_WEIGHT per degree. The gradient is exact by implicit differentiation, not by
 * re-minimising: grad E(x*(p), p) = 0 gives H (dx* / dp) = -d(grad E)/dp, hence
 *     dL/dp = -lambda . d(grad E)/dp,   H lambda = dL/dx   (H the molecule's Hessian at x*),
 * solved per molecule in the complement of the rigid-body motions (where H is singular and to
 * which dL/dx and d(grad E)/dp are orthogonal, the loss and energy being invariant) as
 * (P H P + s (1 - P)) lambda = dL/dx by Cholesky (LAPACKE_dpotrf: it also proves x* a minimum),
 * then ONE HessianForce::getGradientContractionDerivatives call for all molecules.
 */
#define HESSFIT_OBJ_ENERGY_WEIGHT (20.0 * HESSFIT_KCAL_TO_KJ) /* per kcal/mol: q2mm's 20 per kJ/mol */
#define HESSFIT_OBJ_BOND_WEIGHT 100.0                    /* per Angstrom (q2mm's "b") */
#define HESSFIT_OBJ_ANGLE_WEIGHT 2.0                     /* per degree (q2mm's "a") */
#define HESSFIT_OBJ_TORSION_WEIGHT 1.0                   /* per degree (q2mm's "t") */
#define HESSFIT_OBJ_GEOMETRY_GRADIENT_TOL 1e-10          /* kJ/mol/nm, the Newton steps' goal */

typedef struct hessfit_energy_target {
    int mol;           /* the model's molecule (0-based); each molecule at most once */
    int group;         /* >= 0: the conformers of one molecule share it; at least two per group */
    double qm_hartree; /* the QM energy at the molecule's geometry, Hartree */
    double weight;     /* per kcal/mol, >= 0 */
} hessfit_energy_target;

typedef enum { HESSFIT_GEOMETRY_BOND = 0, HESSFIT_GEOMETRY_ANGLE = 1, HESSFIT_GEOMETRY_TORSION = 2 } hessfit_geometry_kind;

typedef struct hessfit_geometry_target {
    int mol;               /* the model's molecule (0-based) */
    hessfit_geometry_kind kind;
    int atoms[4];          /* the molecule's atoms (0-based): 2, 3 (the angle's vertex second) or 4 */
    double weight;         /* per Angstrom (bond) or per degree (angle, torsion), >= 0 */
} hessfit_geometry_target;

/* Which internal coordinates hessfit_objective_geometry_targets_of_terms takes, or-ed. */
#define HESSFIT_OBJ_GEOMETRY_BONDS 1u
#define HESSFIT_OBJ_GEOMETRY_ANGLES 2u
#define HESSFIT_OBJ_GEOMETRY_TORSIONS 4u
/* Angles this close to 180 degrees (and torsions over such an angle) at the QM geometry are left
 * out by hessfit_objective_geometry_targets_of_terms: their gradients are undefined at linearity. */
#define HESSFIT_OBJ_GEOMETRY_LINEAR_DEG 5.0

/** Appends to *targets (realloc'ed; *n counts them) one target per bond, angle and torsion term of
 * typed (the kinds asked for; terms without a parameter count too: they are internal coordinates
 * all the same) of model molecule mol, qm its QM structure (coordinates required), with weights
 * weight[0..2] for bonds, angles, torsions (q2mm's: HESSFIT_OBJ_BOND_WEIGHT ...). */
hessfit_status hessfit_objective_geometry_targets_of_terms(const hessfit_typed_molecule *typed, const hessfit_molecule *qm, int mol,
                                                 unsigned kinds, const double weight[3], hessfit_geometry_target **targets,
                                                 int *n);

/** Adds the relative-energy part (n >= 1 targets). Errors name the target. */
hessfit_status hessfit_objective_set_energies(hessfit_objective *objective, const hessfit_energy_target *targets, int n);
/** Adds the geometry part (n >= 1 targets); the QM values come from qm[mol].coords (qm: n_mols =
 * the model's molecules, the same atoms). A target on a molecule without coordinates, atoms out of
 * range or repeated, or a QM value that is undefined (collinear atoms) is an error naming it. */
hessfit_status hessfit_objective_set_geometry(hessfit_objective *objective, const hessfit_molecule *qm, int n_mols,
                                    const hessfit_geometry_target *targets, int n);

typedef enum { HESSFIT_OBJ_PART_HESSIAN = 0, HESSFIT_OBJ_PART_ENERGIES = 1, HESSFIT_OBJ_PART_GEOMETRY = 2 } hessfit_objective_part;
/** Where a part's residuals lie in hessfit_objective_evaluate's residuals (count 0: no such part). */
hessfit_status hessfit_objective_part_range(const hessfit_objective *objective, hessfit_objective_part part, long long *first,
                                  long long *count);
int hessfit_objective_n_energy_targets(const hessfit_objective *objective);
int hessfit_objective_n_geometry_targets(const hessfit_objective *objective);
/** Target i as given (outputs may be NULL). */
hessfit_status hessfit_objective_energy_target(const hessfit_objective *objective, int i, hessfit_energy_target *target);
hessfit_status hessfit_objective_geometry_target(const hessfit_objective *objective, int i, hessfit_geometry_target *target);
/** The last evaluation's values, one per target (either array may be NULL): energies relative to
 * the group's reference in kcal/mol (QM, MM); geometry in Angstrom / degrees (QM target, MM at
 * the minimum). Before the first evaluation the MM values are NaN. */
hessfit_status hessfit_objective_energy_values(const hessfit_objective *objective, double *qm, double *mm);
hessfit_status hessfit_objective_geometry_values(const hessfit_objective *objective, double *qm, double *mm);

/** What the geometry part did (zeros without one). */
typedef struct hessfit_objective_geometry_stats {
    int n_molecules;                 /* minimised at every evaluation */
    unsigned long long evaluations;  /* geometry evaluations so far */
    unsigned long long newton_steps; /* all molecules, all evaluations */
    int last_newton_steps;           /* the last evaluation's (all molecules) */
    double max_gradient;             /* largest |dE/dx| component at the last minima, kJ/mol/nm (at a
                                        minimum on MM3* pair-switch corners: less the corners' part) */
    double seconds_minimizer;        /* cumulative: OpenMM's LocalEnergyMinimizer */
    double seconds_newton;           /* cumulative: the Newton steps (Hessians, solves) */
    double seconds_gradient;         /* cumulative: the adjoint solves and the contraction */
    int corners;                     /* MM3* pair-switch corners (0.6 nm) the last minima sit on, all molecules */
} hessfit_objective_geometry_stats;
hessfit_status hessfit_objective_geometry_stats_get(const hessfit_objective *objective, hessfit_objective_geometry_stats *stats);

#ifdef __cplusplus
}
#endif
#endif
