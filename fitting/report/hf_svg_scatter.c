/* QM vs MM frequency scatter of a fit report as SVG 1.1 (hessfit_svg_frequency_scatter). */
#include "hf_report_internal.h"

#include <math.h>
#include <stdio.h>

#define SCATTER_LEFT 90.0
#define SCATTER_SIZE 480.0 /* square plot area: y = x at 45 degrees */
#define SCATTER_TOP 70.0
#define SCATTER_WIDTH (SCATTER_LEFT + SCATTER_SIZE + 30.0)
#define SCATTER_HEIGHT (SCATTER_TOP + SCATTER_SIZE + 70.0)
#define BEFORE_COLOUR "#d95f02" /* ColorBrewer Dark2, distinct for colour-blind readers too */
#define AFTER_COLOUR "#1b7e62"
#define MARK_RADIUS 4.5
#define DIAMOND_HALF 5.5

typedef struct scatter_range {
    double lo, hi;
    int n_modes;
    int n_before, n_after; /* drawable marks: QM and that MM frequency finite */
    int any_negative;
} scatter_range;

static void widen_range(scatter_range *s, double v)
{
    s->lo = fmin(s->lo, v);
    s->hi = fmax(s->hi, v);
    if (v < 0)
        s->any_negative = 1;
}

static scatter_range data_range(const hessfit_report *r)
{
    scatter_range s = {INFINITY, -INFINITY, 0, 0, 0, 0};
    for (int k = 0; k < r->n_molecules; k++) {
        for (int i = 0; i < r->molecules[k].n_modes; i++) {
            const hessfit_report_mode *md = &r->molecules[k].modes[i];
            int before = isfinite(md->qm_cm1) && isfinite(md->mm_before_cm1);
            int after = isfinite(md->qm_cm1) && isfinite(md->mm_after_cm1);
            s.n_modes++;
            if (before) {
                widen_range(&s, md->qm_cm1);
                widen_range(&s, md->mm_before_cm1);
                s.n_before++;
            }
            if (after) {
                widen_range(&s, md->qm_cm1);
                widen_range(&s, md->mm_after_cm1);
                s.n_after++;
            }
        }
    }
    return s;
}

/* "<name> mode 3 (QM mode 9): QM 1040.58 cm-1, MM 851.05 cm-1 before the fit" as a <title>. */
static void mark_title(hessfit_atomic_file *out, const hessfit_report_molecule *m, const hessfit_report_mode *md, double mm,
                       const char *when)
{
    hessfit_atomic_file_printf(out, "<title>");
    hf_put_xml(out, m->name != NULL ? m->name : "(unnamed)");
    hessfit_atomic_file_printf(out, " mode %d", md->index);
    if (md->qm_mode >= 0)
        hessfit_atomic_file_printf(out, " (QM mode %d)", md->qm_mode);
    hessfit_atomic_file_printf(out, ": QM %.2f%s cm\xE2\x81\xBB\xC2\xB9, MM %.2f%s cm\xE2\x81\xBB\xC2\xB9 %s the fit</title>",
                          md->qm_cm1, md->qm_cm1 < 0 ? "i" : "", mm, mm < 0 ? "i" : "", when);
}

static void write_marks(hessfit_atomic_file *out, const hessfit_report *r, const hf_svg_axis *x, const hf_svg_axis *y,
                        int after)
{
    hessfit_atomic_file_printf(out, "<g class=\"marks-%s\">\n", after ? "after" : "before");
    for (int k = 0; k < r->n_molecules; k++) {
        const hessfit_report_molecule *m = &r->molecules[k];
        for (int i = 0; i < m->n_modes; i++) {
            const hessfit_report_mode *md = &m->modes[i];
            double mm = after ? md->mm_after_cm1 : md->mm_before_cm1;
            double px, py;
            if (!isfinite(md->qm_cm1) || !isfinite(mm))
                continue;
            px = hf_svg_axis_pixel(x, md->qm_cm1);
            py = hf_svg_axis_pixel(y, mm);
            if (after)
                hessfit_atomic_file_printf(out,
                                      " <path class=\"after\" d=\"M%.2f %.2fL%.2f %.2fL%.2f %.2fL%.2f %.2fZ\" fill=\"" AFTER_COLOUR
                                      "\" fill-opacity=\"0.85\" stroke=\"white\" stroke-width=\"0.6\">",
                                      px, py - DIAMOND_HALF, px + DIAMOND_HALF, py, px, py + DIAMOND_HALF,
                                      px - DIAMOND_HALF, py);
            else
                hessfit_atomic_file_printf(out,
                                      " <circle class=\"before\" cx=\"%.2f\" cy=\"%.2f\" r=\"%.1f\" fill=\"none\" stroke=\"" BEFORE_COLOUR
                                      "\" stroke-width=\"1.5\">",
                                      px, py, MARK_RADIUS);
            mark_title(out, m, md, mm, after ? "after" : "before");
            hessfit_atomic_file_printf(out, "</%s>\n", after ? "path" : "circle");
        }
    }
    hessfit_atomic_file_printf(out, "</g>\n");
}

static void rmsd_text(char *buf, size_t size, const char *when, double rmsd, int n)
{
    if (isfinite(rmsd))
        snprintf(buf, size, "%s the fit: RMSD %.2f cm\xE2\x81\xBB\xC2\xB9 (%d weighted modes)", when, rmsd, n);
    else
        snprintf(buf, size, "%s the fit: no weighted mode to compare", when);
}

static void write_legend(hessfit_atomic_file *out, const hessfit_report *r)
{
    double x0 = SCATTER_LEFT + 10.0, y0 = SCATTER_TOP + 10.0;
    double rmsd_before, rmsd_after;
    int n_before = 0, n_after = 0;
    char before[128], after[128];
    hessfit_report_frequency_rmsd_all(r, 0, &rmsd_before, &n_before);
    hessfit_report_frequency_rmsd_all(r, 1, &rmsd_after, &n_after);
    rmsd_text(before, sizeof before, "before", rmsd_before, n_before);
    rmsd_text(after, sizeof after, "after", rmsd_after, n_after);
    hessfit_atomic_file_printf(out,
                          "<g class=\"legend\">\n"
                          " <rect x=\"%.2f\" y=\"%.2f\" width=\"300\" height=\"66\" fill=\"white\" fill-opacity=\"0.9\" "
                          "stroke=\"#999999\"/>\n"
                          " <circle class=\"legend-before\" cx=\"%.2f\" cy=\"%.2f\" r=\"%.1f\" fill=\"none\" stroke=\"" BEFORE_COLOUR
                          "\" stroke-width=\"1.5\"/>\n <text x=\"%.2f\" y=\"%.2f\" dy=\"0.35em\">%s</text>\n",
                          x0, y0, x0 + 14.0, y0 + 14.0, MARK_RADIUS, x0 + 28.0, y0 + 14.0, before);
    hessfit_atomic_file_printf(out,
                          " <path class=\"legend-after\" d=\"M%.2f %.2fL%.2f %.2fL%.2f %.2fL%.2f %.2fZ\" fill=\"" AFTER_COLOUR
                          "\"/>\n <text x=\"%.2f\" y=\"%.2f\" dy=\"0.35em\">%s</text>\n",
                          x0 + 14.0, y0 + 33.0 - DIAMOND_HALF, x0 + 14.0 + DIAMOND_HALF, y0 + 33.0, x0 + 14.0,
                          y0 + 33.0 + DIAMOND_HALF, x0 + 14.0 - DIAMOND_HALF, y0 + 33.0, x0 + 28.0, y0 + 33.0, after);
    hessfit_atomic_file_printf(out,
                          " <line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#555555\" stroke-dasharray=\"6 4\"/>\n"
                          " <text x=\"%.2f\" y=\"%.2f\" dy=\"0.35em\">y = x (MM = QM)</text>\n</g>\n",
                          x0 + 4.0, y0 + 52.0, x0 + 24.0, y0 + 52.0, x0 + 28.0, y0 + 52.0);
}

static hessfit_status scatter_writer(hessfit_atomic_file *out, void *context)
{
    const hessfit_report *r = context;
    scatter_range s;
    hf_svg_axis x, y;
    hessfit_status st = hessfit_report_validate(r);
    if (st != HESSFIT_SUCCESS)
        return st;
    s = data_range(r);
    hf_svg_axis_linear(&x, s.lo, s.hi, 6);
    y = x; /* one range on both axes */
    x.pix_lo = SCATTER_LEFT;
    x.pix_hi = SCATTER_LEFT + SCATTER_SIZE;
    y.pix_lo = SCATTER_TOP + SCATTER_SIZE;
    y.pix_hi = SCATTER_TOP;

    hf_svg_begin(out, SCATTER_WIDTH, SCATTER_HEIGHT, "MM vs QM vibrational frequencies");
    hessfit_atomic_file_printf(out, "<text class=\"plot-title\" x=\"%.2f\" y=\"28\" text-anchor=\"middle\" font-size=\"16\">"
                               "MM vs QM vibrational frequencies",
                          SCATTER_LEFT + 0.5 * SCATTER_SIZE);
    if (r->title != NULL) {
        hessfit_atomic_file_printf(out, ": ");
        hf_put_xml(out, r->title);
    }
    hessfit_atomic_file_printf(out,
                          "</text>\n<text class=\"plot-subtitle\" x=\"%.2f\" y=\"48\" text-anchor=\"middle\" "
                          "fill=\"#444444\">%d modes of %d molecule%s: %d drawn before the fit, %d after</text>\n",
                          SCATTER_LEFT + 0.5 * SCATTER_SIZE, s.n_modes, r->n_molecules, r->n_molecules == 1 ? "" : "s",
                          s.n_before, s.n_after);
    hf_svg_panel(out, &x, &y, "QM frequency (cm\xE2\x81\xBB\xC2\xB9)", "MM frequency (cm\xE2\x81\xBB\xC2\xB9)");
    if (s.any_negative) {
        double x0 = hf_svg_axis_pixel(&x, 0.0), y0 = hf_svg_axis_pixel(&y, 0.0);
        hessfit_atomic_file_printf(out,
                              "<g class=\"zero\" stroke=\"#888888\" stroke-dasharray=\"2 3\">\n"
                              " <line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>\n"
                              " <line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>\n</g>\n"
                              "<text class=\"note\" x=\"%.2f\" y=\"%.2f\" text-anchor=\"end\" fill=\"#444444\">"
                              "negative: imaginary frequency (i)</text>\n",
                              x0, y.pix_lo, x0, y.pix_hi, x.pix_lo, y0, x.pix_hi, y0, x.pix_hi - 6.0, y.pix_lo - 8.0);
    }
    hessfit_atomic_file_printf(out,
                          "<line class=\"identity\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#555555\" "
                          "stroke-dasharray=\"6 4\"/>\n",
                          x.pix_lo, y.pix_lo, x.pix_hi, y.pix_hi);
    if (s.n_before + s.n_after == 0)
        hessfit_atomic_file_printf(out, "<text class=\"note\" x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">no mode with a "
                                   "finite QM and MM frequency</text>\n",
                              SCATTER_LEFT + 0.5 * SCATTER_SIZE, SCATTER_TOP + 0.5 * SCATTER_SIZE);
    write_marks(out, r, &x, &y, 0);
    write_marks(out, r, &x, &y, 1);
    write_legend(out, r);
    hf_svg_end(out);
    return hessfit_atomic_file_status(out);
}

hessfit_status hessfit_svg_frequency_scatter(const char *path, const hessfit_report *report)
{
    hessfit_status st = hessfit_report_validate(report);
    if (st != HESSFIT_SUCCESS)
        return hf_report_not_written(st, path);
    return hessfit_atomic_write(path, scatter_writer, (void *)report);
}
