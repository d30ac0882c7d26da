/* The SVG plot frame shared by the report's plots: axes with "nice" ticks (1, 2, 5 x 10^k, or whole
 * decades on a log10 axis), grid, tick labels, axis titles. Plain SVG 1.1 with presentation
 * attributes, no scripts, no external resources. */
#include "hf_report_internal.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define SVG_FONT "Helvetica, Arial, sans-serif"
#define SVG_GRID_COLOUR "#e3e3e3"
#define SVG_TICK_LENGTH 5.0
#define SVG_MAX_TICKS 100 /* a safety net: the axes ask for 5 to 8 */

/* The "nice" number (1, 2 or 5 times a power of 10) nearest above-ish raw > 0 (Heckbert 1990). */
static double nice_step(double raw)
{
    double e = floor(log10(raw));
    double f = raw / pow(10.0, e);
    double nf = f < 1.5 ? 1.0 : f < 3.0 ? 2.0 : f < 7.0 ? 5.0 : 10.0;
    return nf * pow(10.0, e);
}

void hf_svg_axis_linear(hf_svg_axis *axis, double lo, double hi, int target_ticks)
{
    double span;
    if (!isfinite(lo) || !isfinite(hi)) {
        lo = 0.0;
        hi = 1.0;
    }
    if (lo > hi) {
        double t = lo;
        lo = hi;
        hi = t;
    }
    lo = fmax(lo, -1e300); /* keeps hi - lo and the ticks finite */
    hi = fmin(hi, 1e300);
    span = hi - lo;
    if (span <= 1e-12 * fmax(fabs(lo), fabs(hi)) || span < DBL_MIN * 1e10) {
        double pad = fabs(lo) > 0 ? 0.1 * fabs(lo) : 1.0;
        lo -= pad;
        hi += pad;
        span = hi - lo;
    }
    axis->log10 = 0;
    axis->step = nice_step(span / (target_ticks > 1 ? target_ticks : 1));
    axis->lo = floor(lo / axis->step) * axis->step;
    axis->hi = ceil(hi / axis->step) * axis->step;
}

void hf_svg_axis_log(hf_svg_axis *axis, double lo, double hi)
{
    double dlo = floor(log10(fmin(lo, hi))), dhi = ceil(log10(fmax(lo, hi)));
    if (dhi <= dlo)
        dhi = dlo + 1.0;
    axis->log10 = 1;
    axis->step = ceil((dhi - dlo) / 8.0); /* at most about 8 labelled decades */
    if (axis->step < 1.0)
        axis->step = 1.0;
    axis->lo = floor(dlo / axis->step) * axis->step; /* both ends on a labelled decade */
    axis->hi = ceil(dhi / axis->step) * axis->step;
}

int hf_svg_wants_log(const double *values, size_t n)
{
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(values[i]))
            continue;
        if (values[i] <= 0.0)
            return 0;
        lo = fmin(lo, values[i]);
        hi = fmax(hi, values[i]);
    }
    return isfinite(lo) && hi / lo > 100.0;
}

double hf_svg_axis_pixel(const hf_svg_axis *axis, double v)
{
    double pos = axis->log10 ? log10(v) : v;
    return axis->pix_lo + (pos - axis->lo) / (axis->hi - axis->lo) * (axis->pix_hi - axis->pix_lo);
}

int hf_svg_axis_tick(const hf_svg_axis *axis, int k, double *value)
{
    double pos = axis->lo + k * axis->step;
    if (k < 0 || k > SVG_MAX_TICKS || !(pos <= axis->hi + 1e-9 * axis->step))
        return 0;
    if (fabs(pos) < 1e-9 * axis->step)
        pos = 0.0; /* no "-0" or 1e-17 from rounding */
    *value = axis->log10 ? pow(10.0, pos) : pos;
    return 1;
}

void hf_svg_tick_label(const hf_svg_axis *axis, double value, char *buf, size_t size)
{
    if (axis->log10) {
        int e = (int)lround(log10(value));
        if (e >= 0 && e <= 3)
            snprintf(buf, size, "%d", (int)lround(pow(10.0, e)));
        else
            snprintf(buf, size, "1e%d", e);
        return;
    }
    if (axis->step < 1e-3 || fmax(fabs(axis->lo), fabs(axis->hi)) >= 1e7) {
        snprintf(buf, size, "%.3g", value);
    } else {
        int decimals = axis->step >= 1.0 ? 0 : (int)ceil(-log10(axis->step) - 1e-9);
        snprintf(buf, size, "%.*f", decimals, value);
    }
}

hessfit_status hf_svg_begin(hessfit_atomic_file *out, double width, double height, const char *title)
{
    hessfit_atomic_file_printf(out,
                          "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
                          "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%.0f\" height=\"%.0f\" "
                          "viewBox=\"0 0 %.0f %.0f\" font-family=\"" SVG_FONT "\" font-size=\"12\">\n<title>",
                          width, height, width, height);
    hf_put_xml(out, title);
    hessfit_atomic_file_printf(out, "</title>\n<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"white\"/>\n",
                          width, height);
    return hessfit_atomic_file_status(out);
}

hessfit_status hf_svg_end(hessfit_atomic_file *out)
{
    return hessfit_atomic_file_printf(out, "</svg>\n");
}

hessfit_status hf_svg_panel(hessfit_atomic_file *out, const hf_svg_axis *x, const hf_svg_axis *y, const char *x_title,
                       const char *y_title)
{
    double left = x->pix_lo, right = x->pix_hi, bottom = y->pix_lo, top = y->pix_hi;
    double value;
    char label[64];
    hessfit_atomic_file_printf(out, "<g class=\"axes\" stroke-width=\"1\">\n");
    for (int k = 0; hf_svg_axis_tick(x, k, &value); k++) {
        double px = hf_svg_axis_pixel(x, value);
        hf_svg_tick_label(x, value, label, sizeof label);
        hessfit_atomic_file_printf(out,
                              " <line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"" SVG_GRID_COLOUR "\"/>\n"
                              " <line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"black\"/>\n"
                              " <text class=\"tick-label\" x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">%s</text>\n",
                              px, top, px, bottom, px, bottom, px, bottom + SVG_TICK_LENGTH, px,
                              bottom + SVG_TICK_LENGTH + 14.0, label);
    }
    for (int k = 0; hf_svg_axis_tick(y, k, &value); k++) {
        double py = hf_svg_axis_pixel(y, value);
        hf_svg_tick_label(y, value, label, sizeof label);
        hessfit_atomic_file_printf(out,
                              " <line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"" SVG_GRID_COLOUR "\"/>\n"
                              " <line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"black\"/>\n"
                              " <text class=\"tick-label\" x=\"%.2f\" y=\"%.2f\" dy=\"0.35em\" text-anchor=\"end\">%s</text>\n",
                              left, py, right, py, left - SVG_TICK_LENGTH, py, left, py, left - SVG_TICK_LENGTH - 3.0, py,
                              label);
    }
    hessfit_atomic_file_printf(out,
                          " <rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"none\" stroke=\"black\"/>\n"
                          " <text class=\"axis-label\" x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\" font-size=\"14\">",
                          left, top, right - left, bottom - top, 0.5 * (left + right), bottom + 42.0);
    hf_put_xml(out, x_title);
    hessfit_atomic_file_printf(out,
                          "</text>\n <text class=\"axis-label\" x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\" "
                          "font-size=\"14\" transform=\"rotate(-90 %.2f %.2f)\">",
                          left - 62.0, 0.5 * (top + bottom), left - 62.0, 0.5 * (top + bottom));
    hf_put_xml(out, y_title);
    hessfit_atomic_file_printf(out, "</text>\n</g>\n");
    return hessfit_atomic_file_status(out);
}
