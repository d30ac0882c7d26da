/*
 * line_bench: the objective of a `hessfit fit` input along one random line, part by part, with how many
 * frequency pairings differ from the line's start (Reference platform). It shows where the loss is
 * piecewise smooth (a re-pairing of modes is a jump) before an optimiser meets it:
 *
 *   ./build/bin/line_bench [--seed N] INPUT.fit [start | CHECKPOINT]
 *
 * The line starts at the input's start values, or at a checkpoint's best point (`hessfit fit`'s
 * DIR/checkpoint.txt: the free values in their canonical units), and goes along a random unit direction
 * d in the scaled variables y (q2mm's steps, as the optimisers see them): x(t) = x0 + t d_i step_i,
 * clipped into the input's bounds. Each point t is evaluated after the start point again, so that every
 * evaluation warm-starts a geometry minimisation from the same minima (the start's). One line per point
 * on stdout: t, the loss, the Hessian-space, energy and geometry parts, and the pairings changed.
 */
#define _POSIX_C_SOURCE 200809L
#include "hessfit_optimize.h"
#include "hf_training_set.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double line_points[] = {1e-4, 1e-3, 1e-2, 0.05, 0.1, 0.3, -1e-3, -0.05};
#define N_POINTS (sizeof line_points / sizeof *line_points)

static double part_loss(hessfit_objective *o, const double *res, hessfit_objective_part part)
{
    long long first = 0, n = 0;
    double s = 0.0;
    if (hessfit_objective_part_range(o, part, &first, &n) != HESSFIT_SUCCESS)
        return 0.0;
    for (long long i = 0; i < n; i++)
        s += res[first + i] * res[first + i];
    return s;
}

/* Evaluates x; prints its line (pairings compared with pair0 unless it is the start, which fills it). */
static hessfit_status evaluate_point(hf_training_set *set, const double *x, double t, double *res, int *pair, int *pair0,
                                     int is_start)
{
    const int nft = hessfit_objective_n_frequency_targets(set->objective);
    double loss = 0.0;
    hessfit_status st = hessfit_objective_evaluate(set->objective, x, &loss, NULL, res);
    if (st == HESSFIT_SUCCESS && nft > 0)
        st = hessfit_objective_pairing(set->objective, pair);
    if (st != HESSFIT_SUCCESS) {
        printf("t %-8g error: %s\n", t, hessfit_last_error());
        return st;
    }
    int changed = 0;
    for (int i = 0; i < nft; i++) {
        if (is_start)
            pair0[i] = pair[i];
        changed += pair[i] != pair0[i];
    }
    printf("t %-8g loss %.10g  hessian-space %.10g  energies %.10g  geometry %.10g  pairings changed %d of %d\n", t, loss,
           part_loss(set->objective, res, HESSFIT_OBJ_PART_HESSIAN), part_loss(set->objective, res, HESSFIT_OBJ_PART_ENERGIES),
           part_loss(set->objective, res, HESSFIT_OBJ_PART_GEOMETRY), changed, nft);
    fflush(stdout);
    return HESSFIT_SUCCESS;
}

int main(int argc, char **argv)
{
    unsigned seed = 1;
    int a = 1;
    if (a + 1 < argc && strcmp(argv[a], "--seed") == 0) {
        seed = (unsigned)strtoul(argv[a + 1], NULL, 10);
        a += 2;
    }
    if (argc - a < 1 || argc - a > 2) {
        fprintf(stderr, "usage: line_bench [--seed N] INPUT.fit [start | CHECKPOINT]\n");
        return 2;
    }
    const char *input = argv[a], *from = argc - a == 2 ? argv[a + 1] : "start";
    hf_training_set set;
    hf_training_set_options topt = {NULL, NULL, "-out", 0};
    hessfit_opt_checkpoint cp;
    memset(&cp, 0, sizeof cp);
    if (hf_cli_load_plugins() != HESSFIT_SUCCESS || hf_training_set_load(input, &topt, &set) != HESSFIT_SUCCESS) {
        fprintf(stderr, "line_bench: %s\n", hessfit_last_error());
        return 1;
    }
    const int n = set.n_fit, from_start = strcmp(from, "start") == 0;
    if (!from_start && hessfit_optimize_load_checkpoint(from, &cp) != HESSFIT_SUCCESS) {
        fprintf(stderr, "line_bench: %s\n", hessfit_last_error());
        hf_training_set_free(&set);
        return 1;
    }
    if (!from_start && cp.n != n) {
        fprintf(stderr, "line_bench: %s holds %d values, %s frees %d\n", from, cp.n, input, n);
        hessfit_opt_checkpoint_free(&cp);
        hf_training_set_free(&set);
        return 1;
    }
    const long long nr = hessfit_objective_n_residuals(set.objective);
    const int nft = hessfit_objective_n_frequency_targets(set.objective);
    double *x0 = malloc((size_t)n * sizeof *x0), *x = malloc((size_t)n * sizeof *x), *d = malloc((size_t)n * sizeof *d);
    double *res = malloc((size_t)(nr > 0 ? nr : 1) * sizeof *res);
    int *pair = malloc((size_t)(nft > 0 ? nft : 1) * sizeof *pair), *pair0 = malloc((size_t)(nft > 0 ? nft : 1) * sizeof *pair0);
    int rc = 0;
    if (!x0 || !x || !d || !res || !pair || !pair0) {
        fprintf(stderr, "line_bench: no memory\n");
        rc = 1;
        goto done;
    }
    srand(seed);
    double norm = 0.0;
    for (int i = 0; i < n; i++) {
        x0[i] = from_start ? set.x_start[i] : cp.x[i];
        d[i] = rand() / (double)RAND_MAX - 0.5;
        norm += d[i] * d[i];
    }
    norm = sqrt(norm);
    printf("line_bench %s from %s, seed %u: %d free values, %lld residuals, %d frequency targets\n", input, from, seed, n, nr,
           nft);
    for (size_t k = 0; k < N_POINTS && rc == 0; k++) {
        if (evaluate_point(&set, x0, 0.0, res, pair, pair0, 1) != HESSFIT_SUCCESS) {
            rc = 1;
            break;
        }
        for (int i = 0; i < n; i++) {
            x[i] = x0[i] + line_points[k] * d[i] / norm * set.step[i];
            if (set.lower != NULL && x[i] < set.lower[i])
                x[i] = set.lower[i];
            if (set.upper != NULL && x[i] > set.upper[i])
                x[i] = set.upper[i];
        }
        evaluate_point(&set, x, line_points[k], res, pair, pair0, 0); /* an error is a line of its own */
    }
done:
    free(x0);
    free(x);
    free(d);
    free(res);
    free(pair);
    free(pair0);
    hessfit_opt_checkpoint_free(&cp);
    hf_training_set_free(&set);
    return rc;
}
