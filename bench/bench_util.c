/* Shared by the fit benchmarks (bench_util.h). */
#define _POSIX_C_SOURCE 200809L
#include "bench_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double bench_now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

hessfit_status bench_timing_summarise(double *samples, int n, bench_timing *t)
{
    double *sorted = malloc((size_t)(n > 0 ? n : 1) * sizeof *sorted);
    if (sorted == NULL) {
        free(samples);
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "no memory for timings");
    }
    memcpy(sorted, samples, (size_t)n * sizeof *sorted);
    t->n = n;
    t->median = bench_median(sorted, n);
    t->min = sorted[0];
    t->max = sorted[n - 1];
    t->total = 0.0;
    for (int i = 0; i < n; i++)
        t->total += samples[i];
    t->samples = samples;
    free(sorted);
    return HESSFIT_SUCCESS;
}

void bench_read_loadavg(double load[3])
{
    FILE *f = fopen("/proc/loadavg", "r");
    load[0] = load[1] = load[2] = NAN;
    if (f != NULL) {
        if (fscanf(f, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3)
            load[0] = load[1] = load[2] = NAN;
        fclose(f);
    }
}

void bench_cpu_model(char *buf, size_t size)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    buf[0] = '\0';
    if (f == NULL)
        return;
    char line[512];
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "model name", 10) == 0 && strchr(line, ':')) {
            snprintf(buf, size, "%s", strchr(line, ':') + 2);
            buf[strcspn(buf, "\n")] = '\0';
            break;
        }
    fclose(f);
}

int bench_parse_int(const char *s, int lo, int hi, int *v)
{
    char *end = NULL;
    const long x = strtol(s, &end, 10);
    if (end == s || *end != '\0' || x < lo || x > hi)
        return 0;
    *v = (int)x;
    return 1;
}

int bench_parse_double(const char *s, double lo, double *v)
{
    char *end = NULL;
    *v = strtod(s, &end);
    return end != s && *end == '\0' && isfinite(*v) && *v >= lo;
}
