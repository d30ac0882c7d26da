#ifndef HF_FIT_REPORT_H_
#define HF_FIT_REPORT_H_
/*
 * QM against MM, per molecule and per mode, for a loaded training set at two points of its free
 * values ("before" and "after"), as the hessfit_report tables of hessfit_report.h; shared by `hessfit
 * fit` (start and fitted values) and `hessfit report` (the input's force field and another one).
 *
 * Rows of a molecule, by objective:
 *   frequencies (overlap)   every projected QM vibration (3n - 6, 3n - 5 if linear), each with the
 *                           MM vibration the objective paired it with (optimal eigenvector overlap)
 *                           and that overlap |<v_mm, v_qm>|^2 (mass-weighted unit vectors);
 *   frequencies-q2mm        the QM frequencies above the threshold (q2mm's targets), each with the
 *                           unprojected MM mode selected for it at the start, and their overlap;
 *   eigenmatrix, hessian    every projected QM vibration, with the MM "frequency along the QM
 *                           mode": sign(q) F sqrt|q|, q = v^T A v (A the mass-weighted MM Hessian,
 *                           v the QM mode), the diagonal of the eigenmatrix in cm^-1; weight 0 (the
 *                           objective is not per mode).
 * Frequencies and pairings come from the objective's own evaluation (hessfit_objective_pairing) and a
 * vibrational analysis of the model's Hessian blocks (hessfit_vib.h); each row's residual is its
 * term of the loss, (w (target - MM))^2, from the objective's residuals.
 *
 * A structure without Hessian-space targets (no Hessian, or objective = none) has no rows.
 *
 * Objectives: per kind the loss (sum of the squared residuals of that kind), the number of
 * weighted residuals and the RMSD: for frequencies sqrt(mean (MM - QM)^2) over the weighted,
 * paired targets (cm^-1, q2mm's RMSD); for the eigenmatrix and the Hessian elements the root mean
 * square of the weighted residuals (no unit of their own); for relative energies (kcal/mol; the
 * groups' references, always 0, left out), bond lengths (Angstrom), angles and torsions (degrees)
 * sqrt(mean (QM - MM)^2) over the weighted targets.
 *
 * Stationarity, per molecule at both points: the largest atomic MM force at the QM geometry, and
 * the largest change of a bond and of an angle term from the QM geometry to the MM minimum reached
 * from it (OpenMM's minimiser in the molecule's own Context, hessfit_model_minimize). A model
 * fitted to frequencies alone can move its minimum far from the QM structure (CH3F: 25 degrees).
 *
 * Energy and geometry targets: one row each (QM, MM before and after, weight, the residual's term
 * of the loss), written by hf_fit_write_targets as targets.txt and targets.json.
 */
#include "hessfit_report.h"
#include "hf_training_set.h"

#include <stdio.h>

/* One energy or geometry target at both points. */
typedef struct hf_fit_target_row {
    int structure;     /* 1-based */
    const char *label; /* the structure's ("structure 2 'name' (path)"); owned by the training set */
    const char *group; /* energies: the group's name (owned by the training set); geometry: NULL */
    int kind;          /* geometry: hessfit_geometry_kind; energies: -1 */
    int atoms[4];      /* geometry: 1-based atoms, unused 0 */
    double qm, mm_before, mm_after; /* kcal/mol relative to the group's reference; Angstrom; degrees */
    double weight;
    double residual_before, residual_after; /* the target's term of the loss, (w (qm - mm))^2 */
    int reference;     /* energies: the group's reference (QM minimum) */
} hf_fit_target_row;

typedef struct hf_fit_comparison {
    int n_molecules;
    hessfit_report_molecule *molecules;
    hessfit_report_mode *modes; /* all rows, molecule by molecule */
    int n_objectives;
    hessfit_report_objective objectives[7];
    int objective_kind[7]; /* what each objective row sums (hf_fit_report.c's kinds) */
    int n_energies, n_geometry;
    hf_fit_target_row *energies, *geometry;
    double loss_before, loss_after; /* the objective's loss at both points (NaN: no "after") */
    int n_parameters;
    hessfit_report_parameter *parameters;
    char (*parameter_text)[3][48]; /* storage of each parameter's kind, types, value name */
    hessfit_report_stationarity (*stationarity)[2]; /* per molecule, before and after */
} hf_fit_comparison;

/* The MM minimisation of the stationarity check stops at this root-mean-square force (kcal/mol/A). */
#define HF_FIT_MINIMIZE_TOLERANCE 0.01
/* hf_fit_warn_stationarity warns when the MM minimum moves a bond or an angle this far. */
#define HF_FIT_STATIONARITY_BOND_A 0.05
#define HF_FIT_STATIONARITY_ANGLE_DEG 5.0

/* One warning line on out per molecule whose MM minimum (at the "before" or, after = 1, the
 * "after" values of c) moves a bond or angle beyond the thresholds above, naming the `geometry`
 * entry that would keep the structure stationary in a fit. */
void hf_fit_warn_stationarity(const hf_training_set *set, const hf_fit_comparison *c, int after, FILE *out);

/*
 * Evaluate the objective at x_before and, when not NULL, at x_after (hessfit_model_n_free values each;
 * the model's free values are left at the last point evaluated) and fill *out. The first
 * n_parameters free values are listed as parameters (before, after). "After" columns are NaN
 * without x_after.
 */
hessfit_status hf_fit_compare(hf_training_set *set, const double *x_before, const double *x_after, int n_parameters,
                         hf_fit_comparison *out);
void hf_fit_comparison_free(hf_fit_comparison *c);

/* A report of the comparison: the caller sets title, optimizer, status, evaluations, time and
 * history; molecules, objectives and parameters point into c. */
void hf_fit_comparison_report(const hf_fit_comparison *c, hessfit_report *report);

/* dir/targets.txt (aligned text) and dir/targets.json with every energy and geometry target of c
 * (nothing is written, and nothing removed, when c has none), each file written atomically. */
hessfit_status hf_fit_write_targets(const char *dir, const hf_fit_comparison *c);

/* The report of a fit or comparison in dir: report.txt, report.json, frequencies.svg and the
 * targets files (hf_fit_write_targets), each written atomically; stops at the first failure. */
hessfit_status hf_fit_write_reports(const char *dir, const hessfit_report *report, const hf_fit_comparison *c);

#endif
