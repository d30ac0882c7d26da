/* Parameter uncertainties (hessfit_uncertainty.h) as a section of the text report and as one JSON
 * object (hessfit_report_uncertainty_text / _json), for the fit report to include. */
#include "hf_report_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The name of parameter i: names[i], or "#i" without names (buf holds it). */
static const char *param_name(const char *const *names, int i, char *buf, size_t size)
{
    if (names != NULL && names[i] != NULL)
        return names[i];
    snprintf(buf, size, "#%d", i);
    return buf;
}

static hessfit_status check_uncertainty(const hessfit_uncertainty *u, int n_sloppy, int n_components, const char *fn)
{
    if (u == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "%s: the uncertainties are NULL", fn);
    if (u->n < 1 || u->standard_error == NULL || u->singular_values == NULL || u->directions == NULL ||
        u->direction_order == NULL ||
        (u->n_pairs > 0 && u->pairs == NULL) || u->n_pairs < 0)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: the uncertainties of %d parameters are incomplete", fn,
                             u->n);
    if (n_sloppy < 0 || n_components < 1)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: %d sloppy directions with %d components (>= 0, >= 1)",
                             fn, n_sloppy, n_components);
    return HESSFIT_SUCCESS;
}

/* The first sloppy direction listed: the n_sloppy smallest singular values. */
static int first_sloppy(const hessfit_uncertainty *u, int n_sloppy)
{
    return n_sloppy < u->n ? u->n - n_sloppy : 0;
}

hessfit_status hessfit_report_uncertainty_text(hessfit_atomic_file *out, const hessfit_uncertainty *u,
                                               const char *const *names, int n_sloppy, int n_components)
{
    char a[32], b[32];
    size_t width = strlen("parameter");
    hessfit_status st = check_uncertainty(u, n_sloppy, n_components, "hessfit_report_uncertainty_text");
    if (st != HESSFIT_SUCCESS)
        return st;
    for (int i = 0; i < u->n; i++) {
        size_t w = hf_utf8_width(param_name(names, i, a, sizeof a));
        width = w > width ? w : width;
    }
    hessfit_atomic_file_printf(out, "\nUncertainties (%lld residuals, %d parameters, rank %d; ", u->m, u->n, u->rank);
    if (u->sigma2_determined)
        hessfit_atomic_file_printf(out, "s^2 = L / (m - rank) = %.6g)\n  ", u->sigma2);
    else
        hessfit_atomic_file_printf(out, "s^2 undetermined: m <= rank)\n  ");
    hf_put_text_padded(out, "parameter", width);
    hessfit_atomic_file_printf(out, "  standard error\n");
    for (int i = 0; i < u->n; i++) {
        const double se = u->standard_error[i];
        hessfit_atomic_file_printf(out, "  ");
        hf_put_text_padded(out, param_name(names, i, a, sizeof a), width);
        if (isinf(se))
            hessfit_atomic_file_printf(out, "  inf (in a null direction)\n");
        else if (isnan(se))
            hessfit_atomic_file_printf(out, "  n/a\n");
        else
            hessfit_atomic_file_printf(out, "  %.6g\n", se);
    }
    if (u->n_pairs > 0)
        hessfit_atomic_file_printf(out, "  strongest correlations\n");
    for (int k = 0; k < u->n_pairs; k++) {
        const hessfit_uncertainty_pair *p = &u->pairs[k];
        hessfit_atomic_file_printf(out, "    %+.4f  ", p->correlation);
        hf_put_text(out, param_name(names, p->i, a, sizeof a));
        hessfit_atomic_file_printf(out, " / ");
        hf_put_text(out, param_name(names, p->j, b, sizeof b));
        hessfit_atomic_file_printf(out, "\n");
    }
    if (n_sloppy > 0)
        hessfit_atomic_file_printf(out, "  sloppiest directions (singular value of the column-scaled Jacobian: largest "
                                        "components in the scaled parameters)\n");
    for (int k = u->n - 1; k >= first_sloppy(u, n_sloppy); k--) {
        const int *idx = u->direction_order + (size_t)k * (size_t)u->n;
        const double *v = u->directions + (size_t)k * (size_t)u->n;
        const int c = n_components < u->n ? n_components : u->n;
        hessfit_atomic_file_printf(out, "    %.4g%s:", u->singular_values[k], k >= u->n - u->n_null ? " (null)" : "");
        for (int j = 0; j < c; j++) {
            hessfit_atomic_file_printf(out, " %+.3f ", v[idx[j]]);
            hf_put_text(out, param_name(names, idx[j], a, sizeof a));
        }
        hessfit_atomic_file_printf(out, "\n");
    }
    return hessfit_atomic_file_status(out);
}

static void json_name(hessfit_atomic_file *out, const char *const *names, int i)
{
    hessfit_atomic_file_printf(out, ", \"name\": ");
    hf_put_json_string(out, names != NULL ? names[i] : NULL);
}

hessfit_status hessfit_report_uncertainty_json(hessfit_atomic_file *out, const hessfit_uncertainty *u,
                                               const char *const *names, int n_sloppy, int n_components)
{
    hessfit_status st = check_uncertainty(u, n_sloppy, n_components, "hessfit_report_uncertainty_json");
    if (st != HESSFIT_SUCCESS)
        return st;
    hessfit_atomic_file_printf(out, "{\"n\": %d, \"m\": %lld, \"rank\": %d", u->n, u->m, u->rank);
    hf_put_json_number_member(out, "loss", u->loss);
    hessfit_atomic_file_printf(out, ", \"sigma2_determined\": %s", u->sigma2_determined ? "true" : "false");
    hf_put_json_number_member(out, "sigma2", u->sigma2);
    hessfit_atomic_file_printf(out, ",\n  \"parameters\": [");
    for (int i = 0; i < u->n; i++) {
        hessfit_atomic_file_printf(out, "%s\n    {\"index\": %d", i > 0 ? "," : "", i);
        json_name(out, names, i);
        hf_put_json_number_member(out, "standard_error", u->standard_error[i]); /* null: inf or undetermined */
        hessfit_atomic_file_printf(out, ", \"in_null_direction\": %s}", isinf(u->standard_error[i]) ? "true" : "false");
    }
    hessfit_atomic_file_printf(out, "],\n  \"correlations\": [");
    for (int k = 0; k < u->n_pairs; k++) {
        const hessfit_uncertainty_pair *p = &u->pairs[k];
        hessfit_atomic_file_printf(out, "%s\n    {\"i\": %d, \"j\": %d", k > 0 ? "," : "", p->i, p->j);
        hf_put_json_number_member(out, "correlation", p->correlation);
        hessfit_atomic_file_printf(out, "}");
    }
    hessfit_atomic_file_printf(out, "],\n  \"singular_values\": [");
    for (int k = 0; k < u->n; k++) {
        hessfit_atomic_file_printf(out, "%s", k > 0 ? ", " : "");
        hf_put_json_number(out, u->singular_values[k]);
    }
    hessfit_atomic_file_printf(out, "],\n  \"sloppy_directions\": [");
    for (int k = u->n - 1; k >= first_sloppy(u, n_sloppy); k--) {
        const int *idx = u->direction_order + (size_t)k * (size_t)u->n;
        const double *v = u->directions + (size_t)k * (size_t)u->n;
        const int c = n_components < u->n ? n_components : u->n;
        hessfit_atomic_file_printf(out, "%s\n    {\"singular_value\": ", k < u->n - 1 ? "," : "");
        hf_put_json_number(out, u->singular_values[k]);
        hessfit_atomic_file_printf(out, ", \"null\": %s, \"components\": [", k >= u->n - u->n_null ? "true" : "false");
        for (int j = 0; j < c; j++) {
            hessfit_atomic_file_printf(out, "%s{\"index\": %d", j > 0 ? ", " : "", idx[j]);
            json_name(out, names, idx[j]);
            hf_put_json_number_member(out, "component", v[idx[j]]);
            hessfit_atomic_file_printf(out, "}");
        }
        hessfit_atomic_file_printf(out, "]}");
    }
    hessfit_atomic_file_printf(out, "]}");
    return hessfit_atomic_file_status(out);
}
