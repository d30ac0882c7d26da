/* The fit report's data checks and frequency statistics (hessfit_report.h). */
#include "hessfit_report.h"

#include "hf_report_internal.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>

hessfit_status hf_report_error_prefix(hessfit_status status, const char *prefix)
{
    return hessfit_error(status, "%s: %s", prefix, hessfit_last_error());
}

static const char *name_or(const char *s, const char *fallback)
{
    return s != NULL ? s : fallback;
}

hessfit_status hessfit_report_history_validate(const hessfit_report_history *history)
{
    if (history == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "report history is NULL");
    if (history->n_points < 0)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "report history: %d points", history->n_points);
    if (history->n_points > 0 && history->points == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "report history: points is NULL for %d points", history->n_points);
    return HESSFIT_SUCCESS;
}

/* k: the molecule's position in its report (0-based), or -1 for a molecule on its own. */
static hessfit_status validate_molecule(const hessfit_report_molecule *m, int k)
{
    char what[128];
    if (k >= 0)
        snprintf(what, sizeof what, "report molecule %d (%.80s)", k + 1, name_or(m->name, "unnamed"));
    else
        snprintf(what, sizeof what, "report molecule %.80s", name_or(m->name, "(unnamed)"));
    if (m->n_modes < 0)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: %d modes", what, m->n_modes);
    if (m->n_modes > 0 && m->modes == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "%s: modes is NULL for %d modes", what, m->n_modes);
    for (int i = 0; i < m->n_modes; i++) {
        const hessfit_report_mode *md = &m->modes[i];
        if (md->index < 0 || md->qm_mode < -1 || md->mm_mode_before < -1 || md->mm_mode_after < -1)
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                            "%s, mode row %d: index %d, QM mode %d, MM modes %d / %d (indices are >= 0, or -1 for "
                            "none)",
                            what, i, md->index, md->qm_mode, md->mm_mode_before, md->mm_mode_after);
    }
    return HESSFIT_SUCCESS;
}

hessfit_status hessfit_report_validate(const hessfit_report *r)
{
    hessfit_status st;
    if (r == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "report is NULL");
    if (r->n_molecules < 0 || r->n_objectives < 0 || r->n_parameters < 0)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "report: negative count (%d molecules, %d objectives, %d parameters)",
                        r->n_molecules, r->n_objectives, r->n_parameters);
    if (r->n_molecules > 0 && r->molecules == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "report: molecules is NULL for %d molecules", r->n_molecules);
    if (r->n_objectives > 0 && r->objectives == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "report: objectives is NULL for %d objectives", r->n_objectives);
    if (r->n_parameters > 0 && r->parameters == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "report: parameters is NULL for %d parameters", r->n_parameters);
    for (int k = 0; k < r->n_molecules; k++)
        if ((st = validate_molecule(&r->molecules[k], k)) != HESSFIT_SUCCESS)
            return st;
    for (int p = 0; p < r->n_parameters; p++)
        if (r->parameters[p].value_index < 0 || r->parameters[p].ff_line < 0)
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "report parameter %d (%.40s %.60s): line %d, value index %d",
                            p + 1, name_or(r->parameters[p].kind, ""), name_or(r->parameters[p].types, ""),
                            r->parameters[p].ff_line, r->parameters[p].value_index);
    return hessfit_report_history_validate(&r->history);
}

/* Sum of (mm - qm)^2 and count over the weighted modes with both frequencies finite. */
static void accumulate(const hessfit_report_molecule *m, int after, double *sum, int *n)
{
    for (int i = 0; i < m->n_modes; i++) {
        const hessfit_report_mode *md = &m->modes[i];
        double mm = after ? md->mm_after_cm1 : md->mm_before_cm1;
        if (md->weight != 0.0 && isfinite(md->qm_cm1) && isfinite(mm)) {
            *sum += (mm - md->qm_cm1) * (mm - md->qm_cm1);
            (*n)++;
        }
    }
}

hessfit_status hessfit_report_frequency_rmsd(const hessfit_report_molecule *m, int after, double *rmsd, int *n_used)
{
    double sum = 0.0;
    int n = 0;
    hessfit_status st;
    if (m == NULL || rmsd == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "frequency RMSD: %s is NULL", m == NULL ? "molecule" : "rmsd");
    if ((st = validate_molecule(m, -1)) != HESSFIT_SUCCESS)
        return st;
    accumulate(m, after, &sum, &n);
    *rmsd = n > 0 ? sqrt(sum / n) : NAN;
    if (n_used != NULL)
        *n_used = n;
    return HESSFIT_SUCCESS;
}

hessfit_status hessfit_report_frequency_rmsd_all(const hessfit_report *r, int after, double *rmsd, int *n_used)
{
    double sum = 0.0;
    int n = 0;
    hessfit_status st;
    if (r == NULL || rmsd == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "frequency RMSD: %s is NULL", r == NULL ? "report" : "rmsd");
    if ((st = hessfit_report_validate(r)) != HESSFIT_SUCCESS)
        return st;
    for (int k = 0; k < r->n_molecules; k++)
        accumulate(&r->molecules[k], after, &sum, &n);
    *rmsd = n > 0 ? sqrt(sum / n) : NAN;
    if (n_used != NULL)
        *n_used = n;
    return HESSFIT_SUCCESS;
}

hessfit_status hf_report_not_written(hessfit_status status, const char *path)
{
    char prefix[512];
    snprintf(prefix, sizeof prefix, "%s: not written", path != NULL ? path : "(NULL path)");
    return hf_report_error_prefix(status, prefix);
}
