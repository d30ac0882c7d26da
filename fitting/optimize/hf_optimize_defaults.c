/* q2mm's default bounds and steps per kind of force-field value (hessfit_optimize.h), and which kind
 * a value of a parameter is. */
#include "hessfit_optimize.h"
#include "hessfit_units.h"

#include <math.h>
#include <stddef.h>

typedef struct {
    const char *name;
    double lo, hi, step;
} value_kind_defaults;

/* Canonical units (kcal/mol, A, deg; E = k (x - x0)^2). Bond, angle, Fourier k, vdW, stretch-bend
 * k: q2mm's _KIND_METADATA (q2mm/models/parameters.py). Harmonic improper k: the angle k's (q2mm has
 * no such kind). Phase: hessfit's (q2mm never fits phases). Bond moment: the MacroModel-era q2mm's
 * (q2mm/constants.py STEPS 'q' 0.1 D, datatypes.py allowed_range unbounded). */
static const value_kind_defaults kind_defaults[HESSFIT_NUM_OPT_VALUE_KINDS] = {
    [HESSFIT_OPT_BOND_K] = {"bond k", 0.0, 3600.0, 7.2},
    [HESSFIT_OPT_BOND_R0] = {"bond r0", 0.5, 3.0, 0.02},
    [HESSFIT_OPT_ANGLE_K] = {"angle k", 0.0, 720.0, 7.2},
    [HESSFIT_OPT_ANGLE_THETA0] = {"angle theta0", 30.0, 180.0, 1.0},
    [HESSFIT_OPT_FOURIER_K] = {"Fourier k", -20.0, 20.0, 0.1},
    [HESSFIT_OPT_FOURIER_PHASE] = {"Fourier phase", -360.0, 360.0, 1.0},
    [HESSFIT_OPT_IMPROPER_K] = {"improper k", 0.0, 720.0, 7.2},
    [HESSFIT_OPT_VDW_RSTAR] = {"vdW R*", 0.5, 5.0, 0.1},
    [HESSFIT_OPT_VDW_EPS] = {"vdW eps", 0.001, 2.0, 0.02},
    /* q2mm's (-50, 50) and 0.2 kcal/mol/A/rad, in mdyn/rad */
    [HESSFIT_OPT_STRETCH_BEND_K] = {"stretch-bend k", -50.0 / HESSFIT_MM3_MDYN_PER_RAD_TO_KCAL_PER_MOL_PER_A_PER_RAD,
                                    50.0 / HESSFIT_MM3_MDYN_PER_RAD_TO_KCAL_PER_MOL_PER_A_PER_RAD,
                                    0.2 / HESSFIT_MM3_MDYN_PER_RAD_TO_KCAL_PER_MOL_PER_A_PER_RAD},
    [HESSFIT_OPT_BOND_MOMENT] = {"bond moment", -HUGE_VAL, HUGE_VAL, 0.1},
};

const char *hessfit_opt_value_kind_name(hessfit_opt_value_kind kind)
{
    if ((int)kind < 0 || kind >= HESSFIT_NUM_OPT_VALUE_KINDS)
        return "unknown";
    return kind_defaults[kind].name;
}

hessfit_status hessfit_optimize_q2mm_defaults(hessfit_opt_value_kind kind, double *lo, double *hi, double *step)
{
    if ((int)kind < 0 || kind >= HESSFIT_NUM_OPT_VALUE_KINDS)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "hessfit_optimize_q2mm_defaults: unknown value kind %d", (int)kind);
    if (lo != NULL)
        *lo = kind_defaults[kind].lo;
    if (hi != NULL)
        *hi = kind_defaults[kind].hi;
    if (step != NULL)
        *step = kind_defaults[kind].step;
    return HESSFIT_SUCCESS;
}

/* A Fourier triple's value: k, phase, or the periodicity (not fitted). */
static hessfit_status fourier_value(const hessfit_ff_param *p, int value, hessfit_opt_value_kind *kind)
{
    switch (value % 3) {
    case 0: *kind = HESSFIT_OPT_FOURIER_K; return HESSFIT_SUCCESS;
    case 1: *kind = HESSFIT_OPT_FOURIER_PHASE; return HESSFIT_SUCCESS;
    default: break;
    }
    return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s parameter of line %d: value %d is a periodicity, never fitted",
                    hessfit_param_kind_name(p->kind), p->line, value);
}

hessfit_status hessfit_optimize_value_kind(const hessfit_ff_param *p, int value, hessfit_opt_value_kind *kind)
{
    if (p == NULL || kind == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_optimize_value_kind: %s is NULL", p == NULL ? "param" : "kind");
    if (value < 0 || value >= p->n_values)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s parameter of line %d has %d values; there is no value %d",
                        hessfit_param_kind_name(p->kind), p->line, p->n_values, value);
    switch (p->kind) {
    case HESSFIT_PARAM_BOND: /* an .fld's value 2: the bond moment */
        *kind = value == 0 ? HESSFIT_OPT_BOND_K : value == 1 ? HESSFIT_OPT_BOND_R0 : HESSFIT_OPT_BOND_MOMENT;
        return HESSFIT_SUCCESS;
    case HESSFIT_PARAM_STRETCH_BEND:
        *kind = HESSFIT_OPT_STRETCH_BEND_K;
        return HESSFIT_SUCCESS;
    case HESSFIT_PARAM_ANGLE:
        if (value <= 1) {
            *kind = value == 0 ? HESSFIT_OPT_ANGLE_K : HESSFIT_OPT_ANGLE_THETA0;
            return HESSFIT_SUCCESS;
        }
        break;
    case HESSFIT_PARAM_TORSION: return fourier_value(p, value, kind);
    case HESSFIT_PARAM_IMPROPER:
        if (p->improper_form == HESSFIT_IMPROPER_FOURIER)
            return fourier_value(p, value, kind);
        if (value == 0) {
            *kind = HESSFIT_OPT_IMPROPER_K;
            return HESSFIT_SUCCESS;
        }
        break;
    case HESSFIT_PARAM_VDW:
        if (value <= 1) {
            *kind = value == 0 ? HESSFIT_OPT_VDW_RSTAR : HESSFIT_OPT_VDW_EPS;
            return HESSFIT_SUCCESS;
        }
        break;
    default: break;
    }
    return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s parameter of line %d: value %d has no optimiser defaults (not fitted)",
                    hessfit_param_kind_name(p->kind), p->line, value);
}
