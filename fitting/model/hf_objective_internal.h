#ifndef HESSFIT_HF_OBJECTIVE_INTERNAL_H_
#define HESSFIT_HF_OBJECTIVE_INTERNAL_H_
/* The targets of one molecule as the objective builds them (not installed). */
#include "hessfit.h"
#include "hessfit_objective.h"

/* One molecule's targets in plugin units (kJ/mol/nm^2, amu, cm^-1), owning its arrays; the
 * weights include the unit factor that makes every residual q2mm's (Hartree/Bohr^2 based). */
typedef struct {
    int n_atoms;
    hessfit_frequency_pairing pairing;
    int project;
    double threshold;
    int n_freq;
    double *freq_target, *freq_weight, *freq_vectors; /* vectors: overlap pairing only */
    int n_eig;                                         /* 0 or 3 n_atoms */
    double *eig_vectors, *eig_target, *eig_weight;
    int hessian;
    double *hess_target, *hess_weight;
    int transition_state;                              /* the QM Hessian has a reaction coordinate */
} hf_objective_targets;

/* Targets of molecule mol (for messages) from its QM data: the Hessian (Hartree/Bohr^2) and the
 * coordinates (Angstrom), with the model's masses (amu). */
hessfit_status hf_objective_targets_build(const hessfit_molecule *qm, int mol, const double *masses,
                                     const hessfit_objective_options *opt, hf_objective_targets *t);
void hf_objective_targets_free(hf_objective_targets *t);

typedef struct hf_energy_part hf_energy_part;
typedef struct hf_geometry_part hf_geometry_part;

/* The objective (hf_objective.c; its Jacobian: hf_objective_jacobian.c). */
struct hessfit_objective {
    hessfit_model *model;
    long long n_residuals;
    int n_freq;
    int *freq_mol;               /* per frequency target: molecule, target (cm^-1) and weight */
    double *freq_target, *freq_weight;
    double *d_slot;              /* dL/dslot, grown with the model's slot table */
    int cap_slots;
    unsigned long long kernel_calls;
    int grad_free, grad_slots;    /* n_free and n_slots when the kernel was told the gradient's slots (-1: never) */
    long long n_kernel_residuals; /* the Hessian-space part's, first in the residuals */
    long long *mol_res;           /* n_mols + 1: molecule m's Hessian-space residuals at [mol_res[m], mol_res[m + 1]) */
    hf_energy_part *energies;     /* NULL: none */
    hf_geometry_part *geometry;   /* NULL: none */
};

/* ---- internal coordinates (hf_objective_coordinates.c) ---------------------------------------- */

/* Atoms of a geometry target of this kind: 2, 3 or 4 (0 for an unknown kind). */
int hf_geometry_kind_atoms(hessfit_geometry_kind kind);

/*
 * The internal coordinate of kind over the atoms x[0..n) (Angstrom): a distance (Angstrom), the
 * angle at x[1] (degrees, [0, 180]) or the IUPAC dihedral x[0]-x[1]-x[2]-x[3] (degrees,
 * (-180, 180]); with grad (3n, may be NULL) its gradient per Angstrom of each atom's x, y, z.
 * Returns 0, or -1 where it (or its gradient) is undefined: coincident atoms, an angle of 0 or 180
 * degrees, collinear dihedral atoms.
 */
int hf_geometry_value(hessfit_geometry_kind kind, const double *const x[4], double *value, double *grad);

/* a - b for torsions wrapped into (-180, 180] degrees; plain a - b otherwise. */
double hf_geometry_difference(hessfit_geometry_kind kind, double a, double b);

/* ---- relative conformer energies (hf_objective_energies.c) ----------------------------------- */

/* Checks the targets against the model (molecule range, each molecule once, groups of at least two,
 * finite energies, weights >= 0) and keeps them; every error names the target. */
hessfit_status hf_energy_part_create(const hessfit_model *model, const hessfit_energy_target *targets, int n, hf_energy_part **part);
void hf_energy_part_destroy(hf_energy_part *part);
int hf_energy_part_size(const hf_energy_part *part);
const hessfit_energy_target *hf_energy_part_target(const hf_energy_part *part, int i);
/* One evaluation at the model's current table and QM geometry: *loss, residuals (size entries, may
 * be NULL) and, when d_slot is not NULL, dL/dslot ADDED to d_slot (n_slots entries). */
hessfit_status hf_energy_part_evaluate(hf_energy_part *part, hessfit_model *model, double *loss, double *d_slot,
                                  double *residuals);
/* After hf_energy_part_evaluate at the same table: jac_t[k * size + i] = d r_i / d slot_s for the
 * n_used slots s = used[k] (slot-major, overwritten): -w_i (dE_i/dslot - dE_ref/dslot) in kcal/mol,
 * one kernel call per molecule with a target (its dE_m/dslot: hessfit_force_get_molecule_energy_derivatives
 * with a unit weight). */
hessfit_status hf_energy_part_jacobian(hf_energy_part *part, hessfit_model *model, const int *used, int n_used,
                                       double *jac_t);
/* QM and MM energies (kcal/mol) relative to each group's reference, of the last evaluation. */
void hf_energy_part_values(const hf_energy_part *part, double *qm, double *mm);

/* ---- corners of the MM3* pair switch that a minimum can sit on (hf_geometry_kinks.c) ----------- */

/* The MM3* pairs of the molecules [mol_lo, mol_hi) with the reduced-particle maps. */
typedef struct hf_kink_pairs hf_kink_pairs;
/* One pair at the switch's inner edge, measured at some positions: r_s - on and dr_s/dx (r_s the
 * pair's switch distance, |y_a - y_b| of its term's switch points: the true distance). */
typedef struct {
    int pair;        /* index into the hf_kink_pairs list */
    int n;           /* atoms r_s depends on (2 to 8: the ends, anchors and their partners; merged) */
    int atom[8];     /* molecule-local */
    double coef[8];  /* dr_s/dx_atom = coef u */
    double u[3], r;  /* unit vector y_a - y_b, r_s (nm) */
    double c;        /* r_s - on (nm) */
    double jump;     /* the jump of dE/dr_s there (kJ/mol/nm; > 0: a convex corner) */
    int right;       /* r_s > on: the plugin evaluates the switched side */
    double lambda;   /* the multiplier of r_s = on against the evaluated side's gradient */
} hf_kink;
hessfit_status hf_kink_pairs_build(const hessfit_model *m, int mol_lo, int mol_hi, hf_kink_pairs **out);
void hf_kink_pairs_free(hf_kink_pairs *kp);
/* The pairs [*begin, *end) of model molecule mol. */
void hf_kink_pairs_range(const hf_kink_pairs *kp, int mol, int *begin, int *end);
/* Pair `pair` at positions x (indexed by System particle - first_particle) into *k (not lambda). */
void hf_kink_measure(const hf_kink_pairs *kp, const hessfit_model *m, int pair, const double *x, int first_particle,
                     hf_kink *k);
/* dr_s/dx . v for a molecule-local vector v. */
double hf_kink_dot(const hf_kink *k, const double *v);
/* dr_s/dx as a dense row of the molecule's dim = 3 n coordinates. */
void hf_kink_row(const hf_kink *k, int dim, double *row);
/* m += w d2r_s/dx2 (dense dim x dim, row-major, both triangles). */
void hf_kink_add_curvature(const hf_kink *k, double w, int dim, double *m);
/* How far lambda lies outside the corner's subgradient range ([0, j], or [-j, 0] on the switched side). */
double hf_kink_violation(const hf_kink *k, double lambda);

/* ---- geometry of the MM-minimised structures (hf_objective_geometry.c) ------------------------- */

/* Checks the targets (molecule range, coordinates present, atoms in range and distinct, a defined
 * QM value, weights >= 0) and builds the second Context that holds the minimised structures. */
hessfit_status hf_geometry_part_create(hessfit_model *model, const hessfit_molecule *qm, int n_mols, const hessfit_geometry_target *targets,
                                  int n, hf_geometry_part **part);
void hf_geometry_part_destroy(hf_geometry_part *part);
int hf_geometry_part_size(const hf_geometry_part *part);
const hessfit_geometry_target *hf_geometry_part_target(const hf_geometry_part *part, int i);
/* Minimise, measure, and (d_slot not NULL) add dL/dslot by implicit differentiation. */
hessfit_status hf_geometry_part_evaluate(hf_geometry_part *part, hessfit_model *model, double *loss, double *d_slot,
                                    double *residuals);
/* After a successful hf_geometry_part_evaluate at the same table (the minima x* and their Hessians
 * in place): jac_t[k * size + i] = d r_i / d slot_s for the n_used slots s = used[k] (slot-major,
 * overwritten) by implicit differentiation, d r_i/dp = -lambda_i . d(grad E)/dp with
 * (P H P + s B^T B) lambda_i = P dr_i/dx. */
hessfit_status hf_geometry_part_jacobian(hf_geometry_part *part, hessfit_model *model, const int *used, int n_used,
                                         double *jac_t);
/* After a whole evaluation: its minima become where the next minimisations start when total_loss
 * is the lowest so far (and the part's evaluation succeeded). */
void hf_geometry_part_keep(hf_geometry_part *part, double total_loss);
void hf_geometry_part_values(const hf_geometry_part *part, double *qm, double *mm);
void hf_geometry_part_stats(const hf_geometry_part *part, hessfit_objective_geometry_stats *stats);

#endif
