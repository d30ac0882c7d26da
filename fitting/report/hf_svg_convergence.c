/* Convergence curve of a fit as SVG 1.1 (hessfit_svg_convergence): loss and best loss so far against
 * the evaluation count, the gradient norm in a second panel. */
#include "hf_report_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define CONV_WIDTH 720.0
#define CONV_LEFT 100.0
#define CONV_RIGHT 690.0
#define CONV_TOP 70.0
#define CONV_PANEL_HEIGHT 240.0
#define CONV_PANEL_GAP 80.0 /* tick labels and axis title of the upper panel */
#define CONV_MARGIN_BOTTOM 60.0
#define CONV_MAX_MARKED_POINTS 50 /* short runs get a dot per evaluation */
#define LOSS_COLOUR "#1f5fa8"
#define BEST_COLOUR "#333333"
#define GRADIENT_COLOUR "#7b3294"

typedef struct series {
    const char *cls;
    const char *colour;
    const char *dash; /* NULL: solid */
    const double *values;
} series;

static int drawable(const hf_svg_axis *axis, double v)
{
    return isfinite(v) && (!axis->log10 || v > 0.0);
}

/* A value axis over the finite values (log10 when they span more than two decades, all > 0). */
static void value_axis(hf_svg_axis *axis, const double *v, int n, double bottom, double top)
{
    double lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < n; i++) {
        if (isfinite(v[i])) {
            lo = fmin(lo, v[i]);
            hi = fmax(hi, v[i]);
        }
    }
    if (!isfinite(lo))
        hf_svg_axis_linear(axis, 0.0, 1.0, 5);
    else if (hf_svg_wants_log(v, (size_t)n))
        hf_svg_axis_log(axis, lo, hi);
    else
        hf_svg_axis_linear(axis, lo, hi, 5);
    axis->pix_lo = bottom;
    axis->pix_hi = top;
}

static int count_drawable(const hf_svg_axis *axis, const double *v, int n)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        k += drawable(axis, v[i]);
    return k;
}

/* One polyline through the drawable points, a gap (new "M") across the others. */
static void write_series(hessfit_atomic_file *out, const series *s, const hf_svg_axis *x, const hf_svg_axis *y,
                         const hessfit_report_history *h)
{
    int pen_down = 0, n_drawn = count_drawable(y, s->values, h->n_points);
    if (n_drawn == 0)
        return;
    hessfit_atomic_file_printf(out, "<path class=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.6\"", s->cls, s->colour);
    if (s->dash != NULL)
        hessfit_atomic_file_printf(out, " stroke-dasharray=\"%s\"", s->dash);
    hessfit_atomic_file_printf(out, " d=\"");
    for (int i = 0; i < h->n_points; i++) {
        if (!drawable(y, s->values[i])) {
            pen_down = 0;
            continue;
        }
        hessfit_atomic_file_printf(out, "%s%.2f %.2f", pen_down ? "L" : "M", hf_svg_axis_pixel(x, (double)h->points[i].evaluation),
                              hf_svg_axis_pixel(y, s->values[i]));
        pen_down = 1;
    }
    hessfit_atomic_file_printf(out, "\"/>\n");
    if (n_drawn <= CONV_MAX_MARKED_POINTS) {
        hessfit_atomic_file_printf(out, "<g class=\"%s-points\" fill=\"%s\">\n", s->cls, s->colour);
        for (int i = 0; i < h->n_points; i++)
            if (drawable(y, s->values[i]))
                hessfit_atomic_file_printf(out, " <circle cx=\"%.2f\" cy=\"%.2f\" r=\"2.5\"/>\n",
                                      hf_svg_axis_pixel(x, (double)h->points[i].evaluation),
                                      hf_svg_axis_pixel(y, s->values[i]));
        hessfit_atomic_file_printf(out, "</g>\n");
    }
}

/* Legend entries (a line sample and its text) from the top-right corner of a panel. */
static void write_legend(hessfit_atomic_file *out, const series *s, const char *const *labels, int n, double right, double top)
{
    double x0 = right - 170.0, y0 = top + 10.0;
    hessfit_atomic_file_printf(out,
                          "<g class=\"legend\">\n <rect x=\"%.2f\" y=\"%.2f\" width=\"160\" height=\"%.2f\" fill=\"white\" "
                          "fill-opacity=\"0.9\" stroke=\"#999999\"/>\n",
                          x0, y0, 8.0 + 18.0 * n);
    for (int k = 0; k < n; k++) {
        double yk = y0 + 13.0 + 18.0 * k;
        hessfit_atomic_file_printf(out, " <line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\" stroke-width=\"1.6\"",
                              x0 + 8.0, yk, x0 + 36.0, yk, s[k].colour);
        if (s[k].dash != NULL)
            hessfit_atomic_file_printf(out, " stroke-dasharray=\"%s\"", s[k].dash);
        hessfit_atomic_file_printf(out, "/>\n <text x=\"%.2f\" y=\"%.2f\" dy=\"0.35em\">%s</text>\n", x0 + 44.0, yk, labels[k]);
    }
    hessfit_atomic_file_printf(out, "</g>\n");
}

static void write_left_out(hessfit_atomic_file *out, const hf_svg_axis *x, const hf_svg_axis *y, int n_left_out, int n,
                           const char *what)
{
    if (n_left_out > 0)
        hessfit_atomic_file_printf(out,
                              "<text class=\"note\" x=\"%.2f\" y=\"%.2f\" fill=\"#444444\">%d of %d %s not drawn "
                              "(not finite%s)</text>\n",
                              x->pix_lo + 8.0, y->pix_lo - 8.0, n_left_out, n, what, y->log10 ? " or not positive" : "");
}

typedef struct convergence_data {
    const hessfit_report_history *h;
    double *loss, *best, *gradient; /* n_points each */
    int any_gradient;
} convergence_data;

static hessfit_status convergence_writer(hessfit_atomic_file *out, void *context)
{
    const convergence_data *d = context;
    const hessfit_report_history *h = d->h;
    double lo = INFINITY, hi = -INFINITY, height;
    hf_svg_axis x, y_loss, y_gradient;
    char y_title[64];
    const char *loss_labels[2] = {"loss", "best so far"};
    const char *gradient_labels[1] = {"gradient norm"};
    series loss_series[2] = {{"loss", LOSS_COLOUR, NULL, d->loss}, {"best", BEST_COLOUR, "5 3", d->best}};
    series gradient_series = {"gradient-norm", GRADIENT_COLOUR, NULL, d->gradient};
    double panel2_top = CONV_TOP + CONV_PANEL_HEIGHT + CONV_PANEL_GAP;

    for (int i = 0; i < h->n_points; i++) {
        lo = fmin(lo, (double)h->points[i].evaluation);
        hi = fmax(hi, (double)h->points[i].evaluation);
    }
    if (h->n_points == 0) {
        lo = 0.0;
        hi = 1.0;
    }
    hf_svg_axis_linear(&x, lo, hi, 6);
    if (x.step < 1.0) { /* evaluations are whole numbers */
        x.step = 1.0;
        x.lo = floor(x.lo);
        x.hi = ceil(x.hi);
    }
    x.pix_lo = CONV_LEFT;
    x.pix_hi = CONV_RIGHT;
    value_axis(&y_loss, d->loss, h->n_points, CONV_TOP + CONV_PANEL_HEIGHT, CONV_TOP);
    height = (d->any_gradient ? panel2_top + CONV_PANEL_HEIGHT : CONV_TOP + CONV_PANEL_HEIGHT) + CONV_MARGIN_BOTTOM;

    hf_svg_begin(out, CONV_WIDTH, height, h->title != NULL ? h->title : "Convergence");
    hessfit_atomic_file_printf(out, "<text class=\"plot-title\" x=\"%.2f\" y=\"30\" text-anchor=\"middle\" font-size=\"16\">",
                          0.5 * (CONV_LEFT + CONV_RIGHT));
    hf_put_xml(out, h->title != NULL ? h->title : "Convergence");
    hessfit_atomic_file_printf(out, "</text>\n<text class=\"plot-subtitle\" x=\"%.2f\" y=\"50\" text-anchor=\"middle\" "
                               "fill=\"#444444\">%d evaluations recorded</text>\n",
                          0.5 * (CONV_LEFT + CONV_RIGHT), h->n_points);
    snprintf(y_title, sizeof y_title, "loss%s", y_loss.log10 ? " (log scale)" : "");
    hf_svg_panel(out, &x, &y_loss, "evaluation", y_title);
    if (h->n_points == 0 || count_drawable(&y_loss, d->loss, h->n_points) == 0)
        hessfit_atomic_file_printf(out, "<text class=\"note\" x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">no finite loss "
                                   "to plot</text>\n",
                              0.5 * (CONV_LEFT + CONV_RIGHT), CONV_TOP + 0.5 * CONV_PANEL_HEIGHT);
    write_series(out, &loss_series[1], &x, &y_loss, h);
    write_series(out, &loss_series[0], &x, &y_loss, h);
    write_left_out(out, &x, &y_loss, h->n_points - count_drawable(&y_loss, d->loss, h->n_points), h->n_points,
                   "losses");
    write_legend(out, loss_series, loss_labels, 2, CONV_RIGHT, CONV_TOP);

    if (d->any_gradient) {
        value_axis(&y_gradient, d->gradient, h->n_points, panel2_top + CONV_PANEL_HEIGHT, panel2_top);
        snprintf(y_title, sizeof y_title, "gradient norm%s", y_gradient.log10 ? " (log scale)" : "");
        hf_svg_panel(out, &x, &y_gradient, "evaluation", y_title);
        write_series(out, &gradient_series, &x, &y_gradient, h);
        write_left_out(out, &x, &y_gradient, h->n_points - count_drawable(&y_gradient, d->gradient, h->n_points),
                       h->n_points, "evaluations' gradient norms");
        write_legend(out, &gradient_series, gradient_labels, 1, CONV_RIGHT, panel2_top);
    }
    hf_svg_end(out);
    return hessfit_atomic_file_status(out);
}

hessfit_status hessfit_svg_convergence(const char *path, const hessfit_report_history *history)
{
    convergence_data d = {history, NULL, NULL, NULL, 0};
    size_t n;
    hessfit_status st = hessfit_report_history_validate(history);
    if (st != HESSFIT_SUCCESS)
        return hf_report_not_written(st, path);
    n = (size_t)history->n_points;
    d.loss = malloc((n > 0 ? n : 1) * sizeof *d.loss);
    d.best = malloc((n > 0 ? n : 1) * sizeof *d.best);
    d.gradient = malloc((n > 0 ? n : 1) * sizeof *d.gradient);
    if (d.loss == NULL || d.best == NULL || d.gradient == NULL) {
        st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: no memory for %zu convergence points", path != NULL ? path : "",
                      n);
    } else {
        double best = NAN;
        for (size_t i = 0; i < n; i++) {
            double v = history->points[i].loss;
            d.loss[i] = v;
            if (isfinite(v) && !(best <= v)) /* the running minimum over the finite losses */
                best = v;
            d.best[i] = best;
            d.gradient[i] = history->points[i].gradient_norm;
            d.any_gradient |= isfinite(d.gradient[i]);
        }
        st = hessfit_atomic_write(path, convergence_writer, &d);
    }
    free(d.loss);
    free(d.best);
    free(d.gradient);
    return st;
}
