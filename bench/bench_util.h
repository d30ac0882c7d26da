#ifndef HF_BENCH_UTIL_H_
#define HF_BENCH_UTIL_H_
/*
 * What the fit benchmarks (fit_bench, gpu_bench) share: the clock, medians of timed samples, the
 * machine's description (CPU model, load average) and strict command-line number parsing.
 */
#include <stddef.h>

#include "hessfit_status.h"

/* A timing: the median and range (seconds) of n samples, their sum, and the samples themselves
 * (malloc'ed, in the order they were taken). */
typedef struct {
    double median, min, max, total;
    int n;
    double *samples;
} bench_timing;

/* Seconds on the monotonic clock (differences only). */
double bench_now_s(void);

/* The median of n > 0 values, sorting v in place. */
double bench_median(double *v, int n);

/* The median, range and sum of n > 0 samples into t, which takes samples over (also on failure,
 * when it frees them). HESSFIT_ERROR_OUT_OF_MEMORY without memory for the sorted copy. */
hessfit_status bench_timing_summarise(double *samples, int n, bench_timing *t);

/* The 1, 5 and 15 minute load averages (/proc/loadavg); NAN where they cannot be read. */
void bench_read_loadavg(double load[3]);

/* The first "model name" of /proc/cpuinfo into buf ("" when there is none). */
void bench_cpu_model(char *buf, size_t size);

/* s as a whole number (the whole string) in [lo, hi] into *v: 1, else 0 and *v untouched. */
int bench_parse_int(const char *s, int lo, int hi, int *v);
/* s as a finite number (the whole string) >= lo into *v: 1, else 0. */
int bench_parse_double(const char *s, double lo, double *v);

#endif
