#ifndef HESSFIT_OBJECTIVE_H_
#define HESSFIT_OBJECTIVE_H_
/*
 * Hessian-space objectives of a fit model (libhessfit_model): the QM data of every molecule --
 * its Hessian in Hartree/Bohr^2 -- turned into targets for the plugin's objective kernel
 * (HessianForce::setHessianObjective, plugin/include/HessianObjective.h), so that one evaluation
 * is: push the free values (hf_model_set_free), ONE kernel call that gives the loss, dL/dslot for
 * every slot and the residuals of all molecules, and the chain to the free values
 * (hf_model_slot_gradient_to_free).
 *
 * Loss = sum_i r_i^2, r_i = w_i (target_i - value_i). Per molecule, any combination of:
 *
 *   Frequencies (cm^-1, weight per cm^-1; default weight 0.001 = q2mm's):
 *     HF_OBJ_FREQUENCIES_Q2MM     q2mm's benchmark objective: MM Hessian mass-weighted, NOT
 *                                 projected; the QM frequencies above the threshold (default
 *                                 50 cm^-1, from the unprojected QM Hessian) in ascending order,
 *                                 paired by position with the MM frequencies above the threshold
 *                                 computed once, with the parameters the model has when
 *                                 hf_objective_create runs (the MM mode indices are kept); when
 *                                 the counts differ the lower count is paired.
 *     HF_OBJ_FREQUENCIES_OVERLAP  (default) translations and rotations projected out of both
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
 *     every off-diagonal element touching one; with HF_OBJ_TS_SKIP also on the reaction coordinate.
 *   Hessian elements: the lower triangle of the MM Hessian against the QM Hessian, in
 *     Hartree/Bohr^2; weights 0.1 on the diagonal, 0.05 off it (q2mm's with_hessian_from_matrix).
 *
 * Transition states: a molecule is one when its projected QM Hessian has a negative vibrational
 * eigenvalue; the most negative is the reaction coordinate. ts chooses how it is fitted:
 *   HF_OBJ_TS_SKIP     (default) weight 0 on it: q2mm's eigenmatrix default (eig_i = 0 with
 *                      skip_first); in the q2mm frequency mode the negative frequency lies below
 *                      the threshold anyway. In the overlap mode it still takes part in the
 *                      assignment, so no other target is paired with the MM reaction mode.
 *   HF_OBJ_TS_KEEP     compare the negative eigenvalue (imaginary frequency, negative cm^-1) as is
 *                      (Lime and Norrby's method D; in the q2mm frequency mode it stays below the
 *                      threshold, as q2mm has it);
 *   HF_OBJ_TS_REPLACE  replace the target by ts_replace_eigenvalue, default 1.0 Hartree/Bohr^2/amu
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
 * (the MM Hessians are taken at the model's geometry, which must be the QM one). hessfit C API
 * failures become HF_ERROR_HESSFIT with hessfit_last_error() in the message. The objective
 * belongs to the model's Context: create one objective per model at a time (a second replaces the
 * first one's targets in the Context).
 */
#include "hessfit_model.h"
#include "hessfit_molecule.h"
#include "hessfit_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hf_objective hf_objective;

typedef enum {
    HF_OBJ_FREQUENCIES_NONE = 0,
    HF_OBJ_FREQUENCIES_Q2MM = 1,
    HF_OBJ_FREQUENCIES_OVERLAP = 2
} hf_objective_frequencies;

typedef enum { HF_OBJ_TS_SKIP = 0, HF_OBJ_TS_KEEP = 1, HF_OBJ_TS_REPLACE = 2 } hf_objective_ts;

typedef struct hf_objective_options {
    hf_objective_frequencies frequencies; /* default HF_OBJ_FREQUENCIES_OVERLAP */
    double frequency_weight;              /* per cm^-1; default 0.001 */
    double frequency_threshold;           /* HF_OBJ_FREQUENCIES_Q2MM, cm^-1; default 50 */
    int eigenmatrix;                      /* 1: eigenmatrix elements; default 0 */
    int eigenmatrix_diagonal_only;        /* 1: off-diagonal weights 0; default 0 */
    double eig_i, eig_d_low, eig_d_high, eig_o; /* q2mm's 0, 0.1, 0.1, 0.05 (per Hartree/Bohr^2/amu) */
    double eig_threshold;                 /* low/high boundary, Hartree/Bohr^2/amu; default 0.1173 */
    int hessian;                          /* 1: Hessian elements; default 0 */
    double hessian_diagonal_weight;       /* per Hartree/Bohr^2; default 0.1 */
    double hessian_offdiagonal_weight;    /* default 0.05 */
    hf_objective_ts ts;                   /* default HF_OBJ_TS_SKIP */
    double ts_replace_eigenvalue;         /* Hartree/Bohr^2/amu; default 1.0 */
} hf_objective_options;

/* The defaults above. */
hf_objective_options hf_objective_default_options(void);

/*
 * Builds the targets of every molecule from qm[m] (the QM data of the model's molecule m, same
 * atoms in the same order) with options opt[m] (opt may be NULL: defaults for all), sets them in
 * the model's Context and evaluates once (the q2mm mode's MM selection). A molecule whose options
 * have no objective (frequencies NONE, no eigenmatrix, no Hessian) needs no QM data.
 */
hf_status hf_objective_create(hf_model *model, const hf_molecule *qm, int n_mols, const hf_objective_options *opt,
                              hf_objective **objective);
void hf_objective_destroy(hf_objective *objective);

/*
 * One evaluation: hf_model_set_free(x_free) (x_free NULL: the model's current values), one kernel
 * call, the chain rule. loss required; grad_free (hf_model_n_free entries, d loss / d x in the
 * canonical units) may be NULL for the loss alone (no contraction); residuals
 * (hf_objective_n_residuals entries, the kernel's layout) may be NULL. The free values stay at
 * x_free afterwards.
 */
hf_status hf_objective_evaluate(hf_objective *objective, const double *x_free, double *loss, double *grad_free,
                                double *residuals);

long long hf_objective_n_residuals(const hf_objective *objective);
int hf_objective_n_frequency_targets(const hf_objective *objective);
/* Target frequency (cm^-1), weight, and molecule of frequency target i (outputs may be NULL). */
hf_status hf_objective_frequency_target(const hf_objective *objective, int i, int *mol, double *target_cm1,
                                        double *weight);
/* The MM mode each frequency target was paired with in the last evaluation (-1: none). */
hf_status hf_objective_pairing(hf_objective *objective, int *modes);
/* Objective kernel calls made so far (one per hf_objective_evaluate, one at creation). */
unsigned long long hf_objective_n_kernel_calls(const hf_objective *objective);

#ifdef __cplusplus
}
#endif
#endif
