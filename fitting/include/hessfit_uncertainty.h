#ifndef HESSFIT_UNCERTAINTY_H_
#define HESSFIT_UNCERTAINTY_H_
/*
 * Parameter uncertainties of a least-squares fit (libhessfit_fitting, fitting/optimize/hf_uncertainty.c)
 * from what the fit has at its optimum: A = J^T J (n x n), the loss L = sum r^2 and the residual
 * count m (hessfit_optimize_best_normal_equations gives all three after an LM run):
 *
 *     hessfit_uncertainty u;
 *     hessfit_uncertainty_compute(n, m, loss, jtj, 10, &u);
 *     ... u.standard_error[i], u.correlation[i * n + j], u.pairs[k], u.singular_values[k] ...
 *     hessfit_uncertainty_free(&u);
 *
 * What it computes (docs/design.md, "Uncertainties"):
 *   - the column scaling D = diag(A) (1 for a zero column, a parameter with no effect) and the
 *     eigenpairs of the scaled matrix D^-1/2 A D^-1/2 = V M V^T (LAPACK dsyevd); the singular values
 *     of the column-scaled Jacobian J D^-1/2 are sqrt(M), and the eigenvectors of the smallest are
 *     the "sloppy" parameter combinations (in the scaled parameters D^1/2 x);
 *   - the null directions: eigenvalues <= n eps max(M); rank r = n - their count;
 *   - G = D^-1/2 (sum over the other eigenpairs of v v^T / mu) D^-1/2, a generalised inverse of A
 *     (A^-1 when A is regular); s^2 = L / (m - r) (= L / (m - n) at full rank); the covariance
 *     s^2 G and the standard errors sqrt(s^2 G_ii);
 *   - a parameter with a component above 1e-6 in a null direction cannot be determined: its
 *     standard error is +inf, its covariance row NaN (diagonal +inf), its correlations NaN;
 *   - m <= r: s^2 is undetermined (NaN, sigma2_determined 0) and so are the standard errors (NaN,
 *     +inf for the parameters in null directions); correlations and singular values do not need s^2;
 *   - the correlation G_ij / sqrt(G_ii G_jj) (NaN where a G_ii is 0) and its strongest pairs.
 */
#include "hessfit_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** One correlated pair of parameters, i < j. */
typedef struct hessfit_uncertainty_pair {
    int i, j;
    double correlation;
} hessfit_uncertainty_pair;

/** Everything hessfit_uncertainty_compute finds; the arrays are malloc'ed (hessfit_uncertainty_free). */
typedef struct hessfit_uncertainty {
    int n;                        /* parameters */
    long long m;                  /* residuals */
    double loss;                  /* L = sum r^2 at the optimum */
    int rank;                     /* of J^T J (n minus the null directions) */
    int sigma2_determined;        /* 1 when m > rank */
    double sigma2;                /* s^2 = L / (m - rank); NaN when undetermined */
    double *standard_error;       /* n: sqrt(s^2 G_ii); +inf in a null direction; NaN when s^2 is undetermined */
    double *covariance;           /* n x n, row-major: s^2 G (above) */
    double *correlation;          /* n x n, row-major: 1 on the diagonal of a determined parameter, NaN where undefined */
    double *scale;                /* n: the column scaling D_i (diag(J^T J), 1 for a zero column) */
    double *singular_values;      /* n, descending: of J D^-1/2 */
    double *directions;           /* n x n, row k: the unit eigenvector of singular value k in the scaled parameters
                                     D^1/2 x, its largest component positive */
    int *direction_order;         /* n x n, row k: the parameter indices by |directions[k][i]|, largest first
                                     (ties: lower index), the largest components of a sloppy direction */
    int n_null;                   /* null directions: the last n_null rows of directions */
    int n_pairs;                  /* min(max_pairs, defined correlations) */
    hessfit_uncertainty_pair *pairs; /* the strongest |correlation| first (ties: by i, then j) */
} hessfit_uncertainty;

/** Components above this (in a unit direction) put a parameter into a null direction. */
#define HESSFIT_UNCERTAINTY_NULL_COMPONENT 1e-6

/**
 * The uncertainties of n >= 1 parameters from jtj (n x n, row-major, symmetric to 1e-10 of
 * sqrt(A_ii A_jj), finite, diagonal >= 0), m >= 1 residuals and the loss (finite, >= 0), with the
 * max_pairs >= 0 strongest correlated pairs. An invalid input is an error naming the entry; a
 * LAPACK failure HESSFIT_ERROR_LAPACK. On failure *u is zeroed.
 */
hessfit_status hessfit_uncertainty_compute(int n, long long m, double loss, const double *jtj, int max_pairs,
                                           hessfit_uncertainty *u);
void hessfit_uncertainty_free(hessfit_uncertainty *u);

#ifdef __cplusplus
}
#endif
#endif
