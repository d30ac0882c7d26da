/* The fit report as JSON (hessfit_report_write_json): one object, numbers as %.17g (exact round trip),
 * NaN and infinities as null, each listed in "nonfinite" by its path. */
#include "hf_lines.h"
#include "hf_report_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JSON_PATH_SIZE 128

typedef struct json_writer {
    hessfit_atomic_file *out;
    char where[JSON_PATH_SIZE]; /* JSON path of the object being written: "molecules[1].modes[3]" */
    char *nonfinite;            /* "path\tvalue\n" entries */
    size_t nonfinite_len, nonfinite_cap;
    long n_nonfinite;
    hessfit_status st;               /* memory failure while collecting entries */
} json_writer;

static void note_nonfinite(json_writer *w, const char *key, double v)
{
    char entry[JSON_PATH_SIZE + 96];
    int n = snprintf(entry, sizeof entry, "%s%s%s\t%s\n", w->where, w->where[0] ? "." : "", key,
                     isnan(v) ? "NaN" : (v > 0 ? "Infinity" : "-Infinity"));
    size_t len = n < 0 ? 0 : strlen(entry);
    if (w->st != HESSFIT_SUCCESS)
        return;
    w->st = hf_grow((void **)&w->nonfinite, &w->nonfinite_cap, w->nonfinite_len + len + 1, 1, "JSON null notes");
    if (w->st != HESSFIT_SUCCESS)
        return;
    memcpy(w->nonfinite + w->nonfinite_len, entry, len + 1);
    w->nonfinite_len += len;
    w->n_nonfinite++;
}

/* ", "key": v" (sep ", " unless first), null for a non-finite v. */
static void num(json_writer *w, const char *sep, const char *key, double v)
{
    if (isfinite(v)) {
        hessfit_atomic_file_printf(w->out, "%s\"%s\": %.17g", sep, key, v);
    } else {
        hessfit_atomic_file_printf(w->out, "%s\"%s\": null", sep, key);
        note_nonfinite(w, key, v);
    }
}

/* An optional value: left out when NaN (not known); an infinity is still written (null, noted). */
static void optional_num(json_writer *w, const char *key, double v)
{
    if (!isnan(v))
        num(w, ", ", key, v);
}

static void index_value(json_writer *w, const char *key, int i)
{
    if (i >= 0)
        hessfit_atomic_file_printf(w->out, ", \"%s\": %d", key, i);
    else
        hessfit_atomic_file_printf(w->out, ", \"%s\": null", key);
}

static void str(json_writer *w, const char *indent, const char *key, const char *s)
{
    hessfit_atomic_file_printf(w->out, "%s\"%s\": ", indent, key);
    hf_put_json_string(w->out, s);
}

static void write_objectives(json_writer *w, const hessfit_report *r)
{
    hessfit_atomic_file_printf(w->out, "  \"objectives\": [");
    for (int k = 0; k < r->n_objectives; k++) {
        const hessfit_report_objective *o = &r->objectives[k];
        snprintf(w->where, sizeof w->where, "objectives[%d]", k);
        hessfit_atomic_file_printf(w->out, "%s\n    {", k > 0 ? "," : "");
        str(w, "", "kind", o->kind);
        str(w, ", ", "unit", o->unit);
        hessfit_atomic_file_printf(w->out, ", \"n_weighted\": %ld", o->n_weighted);
        num(w, ", ", "loss_before", o->loss_before);
        num(w, ", ", "loss_after", o->loss_after);
        num(w, ", ", "rmsd_before", o->rmsd_before);
        num(w, ", ", "rmsd_after", o->rmsd_after);
        hessfit_atomic_file_printf(w->out, "}");
    }
    hessfit_atomic_file_printf(w->out, "%s],\n", r->n_objectives > 0 ? "\n  " : "");
}

static void write_mode(json_writer *w, const hessfit_report_mode *md)
{
    hessfit_atomic_file_printf(w->out, "{\"index\": %d", md->index);
    index_value(w, "qm_mode", md->qm_mode);
    index_value(w, "mm_mode_before", md->mm_mode_before);
    index_value(w, "mm_mode_after", md->mm_mode_after);
    num(w, ", ", "qm_cm1", md->qm_cm1);
    num(w, ", ", "mm_before_cm1", md->mm_before_cm1);
    num(w, ", ", "mm_after_cm1", md->mm_after_cm1);
    optional_num(w, "overlap_before", md->overlap_before);
    optional_num(w, "overlap_after", md->overlap_after);
    num(w, ", ", "weight", md->weight);
    num(w, ", ", "residual_before", md->residual_before);
    num(w, ", ", "residual_after", md->residual_after);
    hessfit_atomic_file_printf(w->out, "}");
}

/* ",\n      "stationarity": {"before": {...}, "after": {...}}" */
static void write_stationarity(json_writer *w, const hessfit_report_stationarity *st, int k)
{
    hessfit_atomic_file_printf(w->out, ",\n      \"stationarity\": {");
    for (int after = 0; after <= 1; after++) {
        const hessfit_report_stationarity *s = &st[after];
        snprintf(w->where, sizeof w->where, "molecules[%d].stationarity.%s", k, after ? "after" : "before");
        hessfit_atomic_file_printf(w->out, "%s\"%s\": {", after ? ", " : "", after ? "after" : "before");
        num(w, "", "max_force_kcal_mol_A", s->max_force);
        hessfit_atomic_file_printf(w->out, ", \"max_force_atom\": %d", s->max_force_atom);
        num(w, ", ", "bond_shift_A", s->bond_shift);
        hessfit_atomic_file_printf(w->out, ", \"bond_atoms\": [%d, %d]", s->bond_atoms[0], s->bond_atoms[1]);
        num(w, ", ", "angle_shift_deg", s->angle_shift);
        hessfit_atomic_file_printf(w->out, ", \"angle_atoms\": [%d, %d, %d]}", s->angle_atoms[0], s->angle_atoms[1],
                                   s->angle_atoms[2]);
    }
    hessfit_atomic_file_printf(w->out, "}");
    snprintf(w->where, sizeof w->where, "molecules[%d]", k);
}

static void write_molecules(json_writer *w, const hessfit_report *r)
{
    hessfit_atomic_file_printf(w->out, "  \"molecules\": [");
    for (int k = 0; k < r->n_molecules; k++) {
        const hessfit_report_molecule *m = &r->molecules[k];
        double rmsd_before, rmsd_after;
        int n_before = 0, n_after = 0;
        hessfit_report_frequency_rmsd(m, 0, &rmsd_before, &n_before);
        hessfit_report_frequency_rmsd(m, 1, &rmsd_after, &n_after);
        snprintf(w->where, sizeof w->where, "molecules[%d]", k);
        hessfit_atomic_file_printf(w->out, "%s\n    {\n", k > 0 ? "," : "");
        str(w, "      ", "name", m->name);
        str(w, ",\n      ", "source", m->source);
        hessfit_atomic_file_printf(w->out, ",\n      \"n_modes\": %d,\n      \"n_weighted_before\": %d, ", m->n_modes, n_before);
        num(w, "", "rmsd_before_cm1", rmsd_before);
        hessfit_atomic_file_printf(w->out, ",\n      \"n_weighted_after\": %d, ", n_after);
        num(w, "", "rmsd_after_cm1", rmsd_after);
        if (m->stationarity != NULL)
            write_stationarity(w, m->stationarity, k);
        hessfit_atomic_file_printf(w->out, ",\n      \"modes\": [");
        for (int i = 0; i < m->n_modes; i++) {
            snprintf(w->where, sizeof w->where, "molecules[%d].modes[%d]", k, i);
            hessfit_atomic_file_printf(w->out, "%s\n        ", i > 0 ? "," : "");
            write_mode(w, &m->modes[i]);
        }
        hessfit_atomic_file_printf(w->out, "%s]\n    }", m->n_modes > 0 ? "\n      " : "");
    }
    hessfit_atomic_file_printf(w->out, "%s],\n", r->n_molecules > 0 ? "\n  " : "");
}

static void write_parameters(json_writer *w, const hessfit_report *r)
{
    hessfit_atomic_file_printf(w->out, "  \"parameters\": [");
    for (int p = 0; p < r->n_parameters; p++) {
        const hessfit_report_parameter *q = &r->parameters[p];
        snprintf(w->where, sizeof w->where, "parameters[%d]", p);
        hessfit_atomic_file_printf(w->out, "%s\n    {", p > 0 ? "," : "");
        if (q->ff_line > 0)
            hessfit_atomic_file_printf(w->out, "\"ff_line\": %d", q->ff_line);
        else
            hessfit_atomic_file_printf(w->out, "\"ff_line\": null");
        str(w, ", ", "kind", q->kind);
        str(w, ", ", "types", q->types);
        hessfit_atomic_file_printf(w->out, ", \"value_index\": %d", q->value_index);
        str(w, ", ", "value_name", q->value_name);
        num(w, ", ", "before", q->before);
        num(w, ", ", "after", q->after);
        num(w, ", ", "change", q->after - q->before);
        str(w, ", ", "unit", q->unit);
        hessfit_atomic_file_printf(w->out, "}");
    }
    hessfit_atomic_file_printf(w->out, "%s],\n", r->n_parameters > 0 ? "\n  " : "");
}

static void write_history(json_writer *w, const hessfit_report_history *h)
{
    hessfit_atomic_file_printf(w->out, "  \"history_title\": ");
    hf_put_json_string(w->out, h->title);
    hessfit_atomic_file_printf(w->out, ",\n  \"history\": [");
    for (int i = 0; i < h->n_points; i++) {
        snprintf(w->where, sizeof w->where, "history[%d]", i);
        hessfit_atomic_file_printf(w->out, "%s\n    {\"evaluation\": %ld", i > 0 ? "," : "", h->points[i].evaluation);
        num(w, ", ", "loss", h->points[i].loss);
        optional_num(w, "gradient_norm", h->points[i].gradient_norm);
        hessfit_atomic_file_printf(w->out, "}");
    }
    hessfit_atomic_file_printf(w->out, "%s],\n", h->n_points > 0 ? "\n  " : "");
}

/* The collected notes: [{"path": ..., "value": "NaN"}, ...]. */
static void write_nonfinite(json_writer *w)
{
    const char *s = w->nonfinite;
    long k = 0;
    hessfit_atomic_file_printf(w->out, "  \"nonfinite\": [");
    while (s != NULL && *s) {
        const char *tab = strchr(s, '\t'), *end = strchr(s, '\n');
        hessfit_atomic_file_printf(w->out, "%s\n    {\"path\": \"%.*s\", \"value\": \"%.*s\"}", k++ > 0 ? "," : "",
                              (int)(tab - s), s, (int)(end - tab - 1), tab + 1);
        s = end + 1;
    }
    hessfit_atomic_file_printf(w->out, "%s]\n", k > 0 ? "\n  " : "");
}

hessfit_status hessfit_report_json_writer(hessfit_atomic_file *out, void *context)
{
    const hessfit_report *r = context;
    json_writer w;
    hessfit_status st = hessfit_report_validate(r);
    if (st != HESSFIT_SUCCESS)
        return st;
    memset(&w, 0, sizeof w);
    w.out = out;
    hessfit_atomic_file_printf(out, "{\n  \"format\": \"hessfit fit report\",\n  \"version\": 1,\n");
    hessfit_atomic_file_printf(out, "  \"notes\": \"frequencies in cm^-1, negative = imaginary; mode indices from 0; "
                               "parameters in the force field's canonical units; null = not available (NaN) or "
                               "infinite, each such number listed in nonfinite; an unknown overlap or gradient norm "
                               "is left out\",\n");
    str(&w, "  ", "title", r->title);
    str(&w, ",\n  ", "optimizer", r->optimizer);
    str(&w, ",\n  ", "status", r->status);
    hessfit_atomic_file_printf(out, ",\n  \"evaluations\": %ld,\n", r->evaluations);
    num(&w, "  ", "wall_time_s", r->wall_time_s);
    hessfit_atomic_file_printf(out, ",\n");
    write_objectives(&w, r);
    write_molecules(&w, r);
    write_parameters(&w, r);
    write_history(&w, &r->history);
    if (r->uncertainty != NULL && w.st == HESSFIT_SUCCESS) {
        hessfit_atomic_file_printf(out, "  \"uncertainty\": ");
        w.st = hessfit_report_uncertainty_json(out, r->uncertainty, r->uncertainty_names,
                                               HESSFIT_REPORT_SLOPPY_DIRECTIONS, HESSFIT_REPORT_SLOPPY_COMPONENTS);
        hessfit_atomic_file_printf(out, ",\n");
    }
    w.where[0] = '\0';
    if (w.st == HESSFIT_SUCCESS)
        write_nonfinite(&w);
    hessfit_atomic_file_printf(out, "}\n");
    free(w.nonfinite);
    return w.st != HESSFIT_SUCCESS ? w.st : hessfit_atomic_file_status(out);
}

hessfit_status hessfit_report_write_json(const char *path, const hessfit_report *report)
{
    hessfit_status st = hessfit_report_validate(report);
    if (st != HESSFIT_SUCCESS)
        return hf_report_not_written(st, path);
    return hessfit_atomic_write(path, hessfit_report_json_writer, (void *)report);
}
