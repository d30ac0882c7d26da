/* The fit report as aligned text (hessfit_report_write_text). */
#include "hf_report_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct cell {
    char s[48];
} cell;

/* v with format (one double conversion), "n/a" for NaN and "inf" / "-inf" for infinities. */
static cell number(const char *format, double v)
{
    cell c;
    if (isnan(v))
        snprintf(c.s, sizeof c.s, "n/a");
    else if (isinf(v))
        snprintf(c.s, sizeof c.s, v > 0 ? "inf" : "-inf");
    else
        snprintf(c.s, sizeof c.s, format, v);
    if (c.s[0] == '-' && strspn(c.s + 1, "0.") == strlen(c.s + 1)) /* "-0.00" from rounding: "0.00" */
        memmove(c.s, c.s + 1, strlen(c.s));
    return c;
}

/* A parameter value with 6 decimals ("%+" for a change), in exponent form when that would hide it. */
static cell parameter_value(double v, int sign)
{
    double a = fabs(v);
    if (a >= 1e7 || (a > 0 && a < 1e-3))
        return number(sign ? "%+.6e" : "%.6e", v);
    return number(sign ? "%+.6f" : "%.6f", v);
}

/* A frequency with 2 decimals and one more column: 'i' for an imaginary one (negative), else ' '. */
static cell frequency(double v)
{
    cell c = number("%.2f", v);
    size_t n = strlen(c.s);
    c.s[n] = isfinite(v) && v < 0 ? 'i' : ' ';
    c.s[n + 1] = '\0';
    return c;
}

static cell index_cell(int i)
{
    cell c;
    if (i < 0)
        snprintf(c.s, sizeof c.s, "-");
    else
        snprintf(c.s, sizeof c.s, "%d", i);
    return c;
}

static void write_run(hessfit_atomic_file *out, const hessfit_report *r)
{
    hessfit_atomic_file_printf(out, "hessfit fit report");
    if (r->title != NULL) {
        hessfit_atomic_file_printf(out, ": ");
        hf_put_text(out, r->title);
    }
    hessfit_atomic_file_printf(out, "\n\n  optimiser    ");
    hf_put_text(out, r->optimizer != NULL ? r->optimizer : "n/a");
    hessfit_atomic_file_printf(out, "\n  status       ");
    hf_put_text(out, r->status != NULL ? r->status : "n/a");
    hessfit_atomic_file_printf(out, "\n  evaluations  %ld\n  wall time    %s s\n", r->evaluations,
                          number("%.3f", r->wall_time_s).s);
}

static void write_objectives(hessfit_atomic_file *out, const hessfit_report *r)
{
    size_t kind_width = strlen("kind");
    if (r->n_objectives == 0)
        return;
    for (int k = 0; k < r->n_objectives; k++) {
        size_t w = hf_utf8_width(r->objectives[k].kind);
        kind_width = w > kind_width ? w : kind_width;
    }
    hessfit_atomic_file_printf(out, "\nObjectives (loss = sum of (w r)^2; RMSD over the weighted residuals)\n  ");
    hf_put_text_padded(out, "kind", kind_width);
    hessfit_atomic_file_printf(out, "  %8s  %14s  %14s  %12s  %12s  unit\n", "weighted", "loss before", "loss after",
                          "RMSD before", "RMSD after");
    for (int k = 0; k < r->n_objectives; k++) {
        const hessfit_report_objective *o = &r->objectives[k];
        hessfit_atomic_file_printf(out, "  ");
        hf_put_text_padded(out, o->kind, kind_width);
        hessfit_atomic_file_printf(out, "  %8ld  %14s  %14s  %12s  %12s  ", o->n_weighted, number("%.8g", o->loss_before).s,
                              number("%.8g", o->loss_after).s, number("%.6g", o->rmsd_before).s,
                              number("%.6g", o->rmsd_after).s);
        hf_put_text(out, o->unit);
        hessfit_atomic_file_printf(out, "\n");
    }
}

static int has_imaginary(const hessfit_report_molecule *m)
{
    for (int i = 0; i < m->n_modes; i++) {
        const hessfit_report_mode *md = &m->modes[i];
        if (md->qm_cm1 < 0 || md->mm_before_cm1 < 0 || md->mm_after_cm1 < 0)
            return 1;
    }
    return 0;
}

static void write_molecule(hessfit_atomic_file *out, const hessfit_report_molecule *m, int k, int n_molecules)
{
    double rmsd_before, rmsd_after;
    int n_before = 0, n_after = 0;
    hessfit_atomic_file_printf(out, "\nMolecule %d of %d: ", k + 1, n_molecules);
    hf_put_text(out, m->name != NULL ? m->name : "(unnamed)");
    hessfit_atomic_file_printf(out, "\n  source: ");
    hf_put_text(out, m->source != NULL ? m->source : "n/a");
    hessfit_atomic_file_printf(out, "\n  frequencies in cm^-1, diff = MM - QM, mode numbers from 0, n/a = not available\n");
    if (has_imaginary(m))
        hessfit_atomic_file_printf(out, "  i: imaginary frequency, shown as a negative number\n");
    hessfit_atomic_file_printf(out, "  %5s  %7s  %11s  %11s  %11s  %11s  %11s  %9s  %8s  %12s\n", "mode", "QM mode", "QM ",
                          "MM before ", "MM after ", "diff before", "diff after", "weight", "overlap", "residual");
    for (int i = 0; i < m->n_modes; i++) {
        const hessfit_report_mode *md = &m->modes[i];
        hessfit_atomic_file_printf(out, "  %5d  %7s  %11s  %11s  %11s  %11s  %11s  %9s  %8s  %12s\n", md->index,
                              index_cell(md->qm_mode).s, frequency(md->qm_cm1).s, frequency(md->mm_before_cm1).s,
                              frequency(md->mm_after_cm1).s, number("%.2f", md->mm_before_cm1 - md->qm_cm1).s,
                              number("%.2f", md->mm_after_cm1 - md->qm_cm1).s, number("%.4g", md->weight).s,
                              number("%.4f", md->overlap_after).s, number("%.4e", md->residual_after).s);
    }
    hessfit_report_frequency_rmsd(m, 0, &rmsd_before, &n_before);
    hessfit_report_frequency_rmsd(m, 1, &rmsd_after, &n_after);
    hessfit_atomic_file_printf(out, "  RMSD over the weighted modes: %s cm^-1 before (%d modes), %s cm^-1 after (%d modes)\n",
                          number("%.3f", rmsd_before).s, n_before, number("%.3f", rmsd_after).s, n_after);
    if (m->stationarity == NULL)
        return;
    hessfit_atomic_file_printf(out, "  stationarity: the largest MM force at the QM geometry; how far the MM minimum "
                                    "reached from it moves bonds and angles\n");
    for (int after = 0; after <= 1; after++) {
        const hessfit_report_stationarity *s = &m->stationarity[after];
        hessfit_atomic_file_printf(out, "    %-6s  force %s kcal/mol/A (atom %d); bond %d-%d by %s A; angle %d-%d-%d by %s deg\n",
                                   after ? "after" : "before", number("%.3f", s->max_force).s, s->max_force_atom,
                                   s->bond_atoms[0], s->bond_atoms[1], number("%.4f", s->bond_shift).s, s->angle_atoms[0],
                                   s->angle_atoms[1], s->angle_atoms[2], number("%.2f", s->angle_shift).s);
    }
}

static void write_history(hessfit_atomic_file *out, const hessfit_report_history *h)
{
    int best = -1, first = -1, last = -1;
    if (h->n_points == 0)
        return;
    for (int i = 0; i < h->n_points; i++) {
        if (!isfinite(h->points[i].loss))
            continue;
        if (first < 0)
            first = i;
        last = i;
        if (best < 0 || h->points[i].loss < h->points[best].loss)
            best = i;
    }
    hessfit_atomic_file_printf(out, "\nConvergence (%d points", h->n_points);
    if (first < 0) {
        hessfit_atomic_file_printf(out, ", none with a finite loss)\n");
        return;
    }
    hessfit_atomic_file_printf(out, ")\n  first loss  %-16s at evaluation %ld\n", number("%.8g", h->points[first].loss).s,
                          h->points[first].evaluation);
    hessfit_atomic_file_printf(out, "  best loss   %-16s at evaluation %ld\n", number("%.8g", h->points[best].loss).s,
                          h->points[best].evaluation);
    hessfit_atomic_file_printf(out, "  last loss   %-16s at evaluation %ld, gradient norm %s\n",
                          number("%.8g", h->points[last].loss).s, h->points[last].evaluation,
                          number("%.4g", h->points[last].gradient_norm).s);
}

static void write_parameters(hessfit_atomic_file *out, const hessfit_report *r)
{
    size_t kind_width = strlen("kind"), types_width = strlen("types"), value_width = strlen("value");
    if (r->n_parameters == 0)
        return;
    for (int p = 0; p < r->n_parameters; p++) {
        const hessfit_report_parameter *q = &r->parameters[p];
        char value_name[32];
        size_t w;
        snprintf(value_name, sizeof value_name, "value %d", q->value_index);
        w = hf_utf8_width(q->kind);
        kind_width = w > kind_width ? w : kind_width;
        w = hf_utf8_width(q->types);
        types_width = w > types_width ? w : types_width;
        w = q->value_name != NULL ? hf_utf8_width(q->value_name) : strlen(value_name);
        value_width = w > value_width ? w : value_width;
    }
    hessfit_atomic_file_printf(out, "\nParameters (%d free; force-field units; line = line of the force-field file)\n",
                          r->n_parameters);
    hessfit_atomic_file_printf(out, "  %6s  ", "line");
    hf_put_text_padded(out, "kind", kind_width);
    hessfit_atomic_file_printf(out, "  ");
    hf_put_text_padded(out, "types", types_width);
    hessfit_atomic_file_printf(out, "  ");
    hf_put_text_padded(out, "value", value_width);
    hessfit_atomic_file_printf(out, "  %16s  %16s  %16s  unit\n", "before", "after", "change");
    for (int p = 0; p < r->n_parameters; p++) {
        const hessfit_report_parameter *q = &r->parameters[p];
        char value_name[32];
        snprintf(value_name, sizeof value_name, "value %d", q->value_index);
        hessfit_atomic_file_printf(out, "  %6s  ", q->ff_line > 0 ? index_cell(q->ff_line).s : "-");
        hf_put_text_padded(out, q->kind, kind_width);
        hessfit_atomic_file_printf(out, "  ");
        hf_put_text_padded(out, q->types, types_width);
        hessfit_atomic_file_printf(out, "  ");
        hf_put_text_padded(out, q->value_name != NULL ? q->value_name : value_name, value_width);
        hessfit_atomic_file_printf(out, "  %16s  %16s  %16s  ", parameter_value(q->before, 0).s,
                              parameter_value(q->after, 0).s, parameter_value(q->after - q->before, 1).s);
        hf_put_text(out, q->unit);
        hessfit_atomic_file_printf(out, "\n");
    }
}

hessfit_status hessfit_report_text_writer(hessfit_atomic_file *out, void *context)
{
    const hessfit_report *r = context;
    hessfit_status st = hessfit_report_validate(r);
    if (st != HESSFIT_SUCCESS)
        return st;
    write_run(out, r);
    write_objectives(out, r);
    for (int k = 0; k < r->n_molecules; k++)
        write_molecule(out, &r->molecules[k], k, r->n_molecules);
    write_history(out, &r->history);
    write_parameters(out, r);
    if (r->uncertainty != NULL &&
        (st = hessfit_report_uncertainty_text(out, r->uncertainty, r->uncertainty_names,
                                              HESSFIT_REPORT_SLOPPY_DIRECTIONS, HESSFIT_REPORT_SLOPPY_COMPONENTS)) !=
            HESSFIT_SUCCESS)
        return st;
    return hessfit_atomic_file_status(out); /* writes are sticky: the first failure, if any */
}

hessfit_status hessfit_report_write_text(const char *path, const hessfit_report *report)
{
    hessfit_status st = hessfit_report_validate(report);
    if (st != HESSFIT_SUCCESS)
        return hf_report_not_written(st, path);
    return hessfit_atomic_write(path, hessfit_report_text_writer, (void *)report);
}
