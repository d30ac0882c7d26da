/*
 * jacobian_bench: the cost of the objective's residual Jacobian and normal equations
 * (hessfit_objective_jacobian, hessfit_objective_normal_equations) beside the loss with its exact
 * gradient (hessfit_objective_evaluate), on the Reference platform, for `hessfit fit` input files
 * loaded as the CLI loads them, at their start values.
 *
 *   ./build/bin/jacobian_bench [--repeats N] A.fit [B.fit ...]
 *
 * Per input: residuals, free values, and the medians of N runs (default 5) of each call, with the
 * ratios to the gradient's, for the input's objective and for the eigenmatrix objective (every
 * structure, hessfit_objective.h's defaults) on the same model. The dense Jacobian is skipped
 * (n/a) when it would exceed 2 GiB.
 */
#define _POSIX_C_SOURCE 200809L
#include "bench_util.h"
#include "hf_training_set.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_REPEATS 1000
#define DENSE_LIMIT_BYTES (2.0 * 1024 * 1024 * 1024)

typedef enum { CALL_GRADIENT, CALL_JACOBIAN, CALL_NORMAL } call_kind;

/* The median of repeats runs of one call (seconds); NAN on failure (the error printed). */
static double time_call(hessfit_objective *obj, const double *x, int n_free, long long n_res, call_kind kind, int repeats)
{
    double samples[MAX_REPEATS], loss;
    double *grad = malloc((size_t)n_free * sizeof *grad), *res = malloc((size_t)n_res * sizeof *res);
    double *jac = kind == CALL_JACOBIAN ? malloc((size_t)n_res * (size_t)n_free * sizeof *jac) : NULL;
    double *jtj = kind == CALL_NORMAL ? malloc((size_t)n_free * (size_t)n_free * sizeof *jtj) : NULL;
    double median = NAN;
    if (!grad || !res || (kind == CALL_JACOBIAN && !jac) || (kind == CALL_NORMAL && !jtj)) {
        fprintf(stderr, "jacobian_bench: no memory\n");
        goto done;
    }
    for (int r = 0; r < repeats; r++) {
        const double t0 = bench_now_s();
        hessfit_status st = kind == CALL_GRADIENT   ? hessfit_objective_evaluate(obj, x, &loss, grad, res)
                            : kind == CALL_JACOBIAN ? hessfit_objective_jacobian(obj, x, &loss, res, jac)
                                                    : hessfit_objective_normal_equations(obj, x, &loss, jtj, grad);
        samples[r] = bench_now_s() - t0;
        if (st != HESSFIT_SUCCESS) {
            fprintf(stderr, "jacobian_bench: %s\n", hessfit_last_error());
            goto done;
        }
    }
    median = bench_median(samples, repeats);
done:
    free(grad);
    free(res);
    free(jac);
    free(jtj);
    return median;
}

int main(int argc, char **argv)
{
    int repeats = 5, first = 1;
    if (argc > 2 && strcmp(argv[1], "--repeats") == 0) {
        if (!bench_parse_int(argv[2], 1, MAX_REPEATS, &repeats)) {
            fprintf(stderr, "jacobian_bench: --repeats %s: a whole number 1..%d\n", argv[2], MAX_REPEATS);
            return 2;
        }
        first = 3;
    }
    if (first >= argc) {
        fprintf(stderr, "usage: jacobian_bench [--repeats N] A.fit [B.fit ...]\n");
        return 2;
    }
    printf("| input | objective | residuals | free values | loss + gradient (ms) | Jacobian (ms) | ratio | "
           "normal equations (ms) | ratio |\n|---|---|---|---|---|---|---|---|---|\n");
    for (int a = first; a < argc; a++) {
        hf_training_set set;
        hf_training_set_options topt = {NULL, NULL, "-out", 0};
        memset(&set, 0, sizeof set);
        if (hf_training_set_load(argv[a], &topt, &set) != HESSFIT_SUCCESS) {
            fprintf(stderr, "jacobian_bench: %s: %s\n", argv[a], hessfit_last_error());
            return 1;
        }
        for (int k = 0; k < 2; k++) {
            hessfit_objective *obj = set.objective;
            if (k == 1) { /* the eigenmatrix of every structure on the same model */
                hessfit_objective_options *o = malloc((size_t)set.n_mols * sizeof *o);
                if (o == NULL || hessfit_model_set_free(set.model, set.x_start) != HESSFIT_SUCCESS)
                    return 1;
                for (int m = 0; m < set.n_mols; m++) {
                    o[m] = hessfit_objective_default_options();
                    o[m].frequencies = HESSFIT_OBJ_FREQUENCIES_NONE;
                    o[m].eigenmatrix = 1;
                }
                const hessfit_status st = hessfit_objective_create(set.model, set.mols, set.n_mols, o, &obj);
                free(o);
                if (st != HESSFIT_SUCCESS) {
                    fprintf(stderr, "jacobian_bench: %s: eigenmatrix: %s\n", argv[a], hessfit_last_error());
                    return 1;
                }
            }
            const long long n_res = hessfit_objective_n_residuals(obj);
            const int n_free = set.n_free;
            const double g = time_call(obj, set.x_start, n_free, n_res, CALL_GRADIENT, repeats);
            const double j = (double)n_res * n_free * sizeof(double) <= DENSE_LIMIT_BYTES
                                 ? time_call(obj, set.x_start, n_free, n_res, CALL_JACOBIAN, repeats)
                                 : NAN;
            const double ne = time_call(obj, set.x_start, n_free, n_res, CALL_NORMAL, repeats);
            printf("| %s | %s | %lld | %d | %.2f | %.2f | %.1f | %.2f | %.1f |\n", argv[a],
                   k == 0 ? set.settings.objective_name : "eigenmatrix", n_res, n_free, 1e3 * g, 1e3 * j, j / g, 1e3 * ne,
                   ne / g);
            fflush(stdout);
            if (k == 1)
                hessfit_objective_destroy(obj);
        }
        hf_training_set_free(&set);
    }
    return 0;
}
