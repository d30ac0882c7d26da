#ifndef HESSFIT_REPORT_H_
#define HESSFIT_REPORT_H_
/*
 * The report of a fit: per molecule, per mode, QM against MM before and after the fit; per
 * objective kind the loss and RMSD; the optimiser's run; the free parameters' changes. Written as
 * aligned text, as JSON, and as two SVG plots (QM vs MM frequency scatter, convergence curve).
 *
 * The report is plain data the caller fills in and owns: every pointer is borrowed and only read
 * (strings are UTF-8; NULL strings print as empty / JSON null). Conventions:
 *   - frequencies in cm^-1, an imaginary frequency as a negative number (hessfit_vib.h);
 *   - NaN for "not available" (an unpaired mode, an unknown overlap, a derivative-free step's
 *     gradient norm); the writers never print "nan" (text "n/a", JSON null, SVG: not drawn);
 *   - mode indices count from 0; -1 for "none / unknown".
 * Every output is written atomically (hessfit_atomic_file.h): on failure the old file is
 * untouched and the message names the path.
 */
#include "hessfit_atomic_file.h"
#include "hessfit_status.h"
#include "hessfit_uncertainty.h"

#ifdef __cplusplus
extern "C" {
#endif

/** One compared mode: a QM normal mode (a target) and the MM mode paired with it. */
typedef struct hessfit_report_mode {
    int index;                    /* row number within the molecule (0-based) */
    int qm_mode;                  /* the QM normal mode compared (index in the QM analysis), -1 unknown */
    int mm_mode_before;           /* the MM mode paired with it before / after the fit, -1 none */
    int mm_mode_after;
    double qm_cm1;                /* QM frequency */
    double mm_before_cm1;         /* MM frequency with the starting parameters (NaN: none) */
    double mm_after_cm1;          /* MM frequency with the fitted parameters (NaN: none) */
    double overlap_before;        /* |<v_mm, v_qm>|^2 of the pairing, in [0, 1]; NaN unknown */
    double overlap_after;
    double weight;                /* per cm^-1; 0: not fitted (e.g. a skipped reaction coordinate) */
    double residual_before;       /* this mode's contribution to the loss, (w (target - mm))^2 */
    double residual_after;
} hessfit_report_mode;

/** Whether the molecule's QM geometry is a stationary point of the MM model, at one point of the
 * fit: a model fitted to frequencies alone may put its minimum far from the QM structure. */
typedef struct hessfit_report_stationarity {
    double max_force;             /* largest atomic |F| of the MM model at the QM geometry, kcal/mol/A */
    int max_force_atom;           /* its atom, 1-based (0: none) */
    double bond_shift;            /* largest |r_min - r_QM| over the bond terms, r_min at the MM minimum
                                     reached from the QM geometry, Angstrom (NaN: not minimised) */
    int bond_atoms[2];            /* that bond, 1-based (0: none) */
    double angle_shift;           /* the same over the angle terms, degrees */
    int angle_atoms[3];           /* that angle, its vertex second */
} hessfit_report_stationarity;

typedef struct hessfit_report_molecule {
    const char *name;             /* e.g. "CH3F" */
    const char *source;           /* where its QM data came from (a file name) */
    int n_modes;
    const hessfit_report_mode *modes;
    /** Before and after the fit ([0], [1]); NULL: not computed (nothing written). */
    const hessfit_report_stationarity *stationarity;
} hessfit_report_molecule;

/** One objective kind of the fit, summed over all molecules. */
typedef struct hessfit_report_objective {
    const char *kind;             /* "frequencies (overlap pairing)", "eigenmatrix", "Hessian elements" */
    const char *unit;             /* the RMSD's unit: "cm^-1", "Hartree/Bohr^2/amu" */
    long n_weighted;              /* residuals with a non-zero weight */
    double loss_before, loss_after;     /* sum of (w r)^2 of this kind */
    double rmsd_before, rmsd_after;     /* sqrt(mean r^2) over the weighted residuals */
} hessfit_report_objective;

/** A free parameter: one value of one force-field line. */
typedef struct hessfit_report_parameter {
    int ff_line;                  /* 1-based line of the force-field file, 0 unknown */
    const char *kind;             /* "bond", "angle", "torsion", ... (hessfit_param_kind_name) */
    const char *types;            /* "C1-F1" */
    int value_index;              /* which value of the parameter (0-based) */
    const char *value_name;       /* "k", "r0", "theta0", "k_2"; NULL prints "value <index>" */
    double before, after;         /* canonical units */
    const char *unit;             /* "kcal/mol/A^2", "A", "deg", ... */
} hessfit_report_parameter;

/** One point of the optimiser's progress. */
typedef struct hessfit_report_iteration {
    long evaluation;              /* 1-based objective evaluation count */
    double loss;
    double gradient_norm;         /* NaN when the step computed no gradient */
} hessfit_report_iteration;

typedef struct hessfit_report_history {
    const char *title;            /* plot title, e.g. the optimiser's name; NULL: "Convergence" */
    int n_points;
    const hessfit_report_iteration *points;
} hessfit_report_history;

typedef struct hessfit_report {
    const char *title;            /* e.g. the input file; may be NULL */
    const char *optimizer;        /* "LD_LBFGS" */
    const char *status;           /* in words: "stopped: relative loss change below ftol_rel" */
    long evaluations;
    double wall_time_s;
    int n_molecules;
    const hessfit_report_molecule *molecules;
    int n_objectives;
    const hessfit_report_objective *objectives;
    int n_parameters;
    const hessfit_report_parameter *parameters;
    hessfit_report_history history;
    /* the parameter uncertainties at the fitted values (NULL: no such section), written by
     * hessfit_report_uncertainty_text / _json with HESSFIT_REPORT_SLOPPY_DIRECTIONS directions of
     * HESSFIT_REPORT_SLOPPY_COMPONENTS components; uncertainty_names[i] names parameter i (may be NULL) */
    const hessfit_uncertainty *uncertainty;
    const char *const *uncertainty_names;
} hessfit_report;

/** What the report lists of the uncertainties: the sloppiest directions and their largest components. */
#define HESSFIT_REPORT_SLOPPY_DIRECTIONS 3
#define HESSFIT_REPORT_SLOPPY_COMPONENTS 4

/** Structure checks every writer makes first: counts >= 0, arrays non-NULL where their count is
 * positive, mode indices >= -1. HESSFIT_ERROR_NULL_ARGUMENT / HESSFIT_ERROR_INVALID_ARGUMENT name the item
 * ("report molecule 2 (CH3F): modes is NULL for 9 modes"). Values are not checked: NaN/inf are
 * written as "not available". */
hessfit_status hessfit_report_validate(const hessfit_report *report);
hessfit_status hessfit_report_history_validate(const hessfit_report_history *history);

/** RMSD (cm^-1) of MM - QM over the molecule's modes with weight != 0 whose QM and MM (before,
 * after = 0, or after, = 1) frequencies are both finite; *n_used gets their count (NULL allowed).
 * No such mode: *rmsd = NaN, *n_used = 0. Molecule NULL -> HESSFIT_ERROR_NULL_ARGUMENT. */
hessfit_status hessfit_report_frequency_rmsd(const hessfit_report_molecule *molecule, int after, double *rmsd, int *n_used);
/** The same over every molecule of the report. */
hessfit_status hessfit_report_frequency_rmsd_all(const hessfit_report *report, int after, double *rmsd, int *n_used);

/** Aligned text for a reader: run summary, objectives, per molecule a table (mode, QM mode, QM, MM
 * before, MM after, their differences, weight, overlap, residual; an imaginary frequency shown as
 * "-461.72i"), convergence summary, parameter changes, and the uncertainties when the report has them. */
hessfit_status hessfit_report_write_text(const char *path, const hessfit_report *report);

/** JSON (UTF-8, strings escaped, every double as %.17g so it reads back bit for bit). A NaN or
 * infinite value is written as null and listed in "nonfinite" by its JSON path; an unknown
 * overlap or gradient norm is left out of its object. The uncertainties, when the report has them,
 * are the member "uncertainty" (hessfit_report_uncertainty_json's object). */
hessfit_status hessfit_report_write_json(const char *path, const hessfit_report *report);

/** The two writers above as hessfit_atomic_writer callbacks (context: const hessfit_report *), to compose
 * with other outputs or to write into an hessfit_atomic_file of one's own. */
hessfit_status hessfit_report_text_writer(hessfit_atomic_file *out, void *report);
hessfit_status hessfit_report_json_writer(hessfit_atomic_file *out, void *report);

/** The parameter uncertainties of a fit (hessfit_uncertainty.h) as a text section: a heading with m,
 * n, the rank and s^2 (or "s^2 undetermined"), a line per parameter with its standard error ("inf (in
 * a null direction)", "n/a" when s^2 is undetermined), the strongest correlations ("  -0.8429  a / b"),
 * and the n_sloppy directions of the smallest singular values, smallest first, each with its
 * n_components largest components in the scaled parameters ("(null)" marks a null
 * direction). names[i] names parameter i (NULL, or a NULL entry: "#i"). Written into out; its
 * first error is returned. */
hessfit_status hessfit_report_uncertainty_text(hessfit_atomic_file *out, const hessfit_uncertainty *u,
                                               const char *const *names, int n_sloppy, int n_components);
/** The same as one JSON object (the value of a member the caller writes, e.g. "uncertainty"):
 * {"n", "m", "rank", "loss", "sigma2_determined", "sigma2" (null when undetermined), "parameters":
 * [{"index", "name", "standard_error" (null: infinite or undetermined), "in_null_direction"}],
 * "correlations": [{"i", "j", "correlation"}], "singular_values": [...] (descending),
 * "sloppy_directions": [{"singular_value", "null", "components": [{"index", "name", "component"}]}]
 * (smallest first)}; numbers as %.17g, names null without names. */
hessfit_status hessfit_report_uncertainty_json(hessfit_atomic_file *out, const hessfit_uncertainty *u,
                                               const char *const *names, int n_sloppy, int n_components);

/** SVG 1.1 (no scripts) scatter of MM against QM frequency over all molecules: before the fit as
 * open circles (<circle class="before">), after as filled diamonds (<path class="after">), each
 * with a <title> naming molecule and mode; the y = x line; both axes on one range in cm^-1 with
 * ticks; imaginary frequencies at negative values with dashed zero lines; legend with the RMSDs. */
hessfit_status hessfit_svg_frequency_scatter(const char *path, const hessfit_report *report);

/** SVG 1.1 convergence curve: loss against evaluation (path class="loss") and the best loss so far
 * (class="best"); the loss axis is logarithmic when the positive losses span more than two decades
 * (and none is <= 0); the gradient norm, when any is finite, in a second panel below (class
 * "gradient-norm", logarithmic by the same rule). Non-finite points are left out (a gap, and a note
 * counting them); a series of at most 50 drawn points also gets a dot per point. */
hessfit_status hessfit_svg_convergence(const char *path, const hessfit_report_history *history);

#ifdef __cplusplus
}
#endif
#endif
