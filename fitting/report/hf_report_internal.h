#ifndef HF_REPORT_INTERNAL_H_
#define HF_REPORT_INTERNAL_H_
/*
 * Internal to fitting/report: the report writers (hf_report*.c, hf_svg*.c): string escaping for text, JSON and
 * XML, and the plot frame the two SVG plots share (axes with "nice" ticks, linear or log10).
 */
#include <stddef.h>
#include <stdint.h>

#include "hessfit_atomic_file.h"
#include "hessfit_report.h"
#include "hf_json_write.h"

/* status with the thread's message prefixed: "<prefix>: <message>" (hf_report.c). */
hessfit_status hf_report_error_prefix(hessfit_status status, const char *prefix);
/* hf_report_error_prefix(status, "<path>: not written") for a report that failed validation. */
hessfit_status hf_report_not_written(hessfit_status status, const char *path);

/* ---- strings (hf_report_escape.c) ---- */

/* Length in bytes of the valid UTF-8 sequence at s (1 to 4) with its code point in *cp, or 0 for
 * an invalid one (a stray continuation byte, an overlong form, a surrogate, beyond U+10FFFF, a
 * truncated sequence). s must be non-empty. */
size_t hf_utf8_decode(const char *s, uint32_t *cp);
/* Characters (code points; an invalid byte counts as one) in s, for column padding. */
size_t hf_utf8_width(const char *s);

/* s as plain text: control characters as ' ', invalid UTF-8 bytes as '?'. NULL writes nothing. */
hessfit_status hf_put_text(hessfit_atomic_file *out, const char *s);
/* s left-aligned in a field of width characters (no truncation). */
hessfit_status hf_put_text_padded(hessfit_atomic_file *out, const char *s, size_t width);
/* s as XML 1.0 character data or attribute value (& < > " ' escaped; characters XML forbids --
 * control characters other than tab, newline, return; U+FFFE, U+FFFF -- and invalid UTF-8 bytes
 * as U+FFFD). NULL writes nothing. */
hessfit_status hf_put_xml(hessfit_atomic_file *out, const char *s);

/* ---- SVG plot frame (hf_svg_plot.c) ---- */

typedef struct hf_svg_axis {
    double lo, hi;        /* data range shown (log: log10 of it) */
    int log10;            /* 1: positions are log10(value) */
    double pix_lo, pix_hi;/* pixel positions of lo and hi (y axes: pix_lo > pix_hi) */
    double step;          /* tick step in data units (log: decades per tick) */
} hf_svg_axis;

/* A linear axis over [lo, hi] (any order, equal ends widened) with about target_ticks "nice"
 * ticks (1, 2 or 5 times a power of 10), its ends rounded out to whole steps. */
void hf_svg_axis_linear(hf_svg_axis *axis, double lo, double hi, int target_ticks);
/* A log10 axis over [lo, hi] (both > 0): one tick every step decades (at most about 8 labels), the
 * ends rounded out to ticks. */
void hf_svg_axis_log(hf_svg_axis *axis, double lo, double hi);
/* 1 when the values (finite ones; n of them) are all > 0 and max/min > 100: plot on log10. */
int hf_svg_wants_log(const double *values, size_t n);
/* The pixel of value v on the axis (log axes take v > 0). */
double hf_svg_axis_pixel(const hf_svg_axis *axis, double v);
/* The k-th tick value (k = 0, 1, ... while <= hi); *value gets the data value. 0 past the end. */
int hf_svg_axis_tick(const hf_svg_axis *axis, int k, double *value);
/* A tick label: linear ticks with the decimals the step needs ("1040", "0.25", "1e-06" for tiny
 * or huge steps), log ticks as "1e-3" / "1" / "100". */
void hf_svg_tick_label(const hf_svg_axis *axis, double value, char *buf, size_t size);

/* Document start (XML declaration, <svg> with width/height/viewBox, a <title>, white background,
 * default styles) and end. */
hessfit_status hf_svg_begin(hessfit_atomic_file *out, double width, double height, const char *title);
hessfit_status hf_svg_end(hessfit_atomic_file *out);

/* A plot panel: frame rectangle, grid lines and ticks with labels on both axes, axis titles
 * (UTF-8, escaped). x runs along x->pix_lo..pix_hi, y along y->pix_lo (bottom)..pix_hi (top). */
hessfit_status hf_svg_panel(hessfit_atomic_file *out, const hf_svg_axis *x, const hf_svg_axis *y, const char *x_title,
                       const char *y_title);

#endif
