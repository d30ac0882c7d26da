/* Parameter uncertainties of a least-squares fit (hessfit_uncertainty.h): standard errors,
 * correlations and their strongest pairs, the singular values of the column-scaled Jacobian with
 * the sloppy and null directions, from J^T J, the loss and the residual count at the optimum. */
#include "hessfit_uncertainty.h"

#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void hessfit_uncertainty_free(hessfit_uncertainty *u)
{
    if (u == NULL)
        return;
    free(u->standard_error); /* the block of every array but pairs and direction_order */
    free(u->pairs);
    free(u->direction_order);
    memset(u, 0, sizeof *u);
}

static hessfit_status check_input(int n, long long m, double loss, const double *a, int max_pairs)
{
    const size_t un = (size_t)n;
    if (a == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_uncertainty_compute: jtj is NULL");
    if (n < 1 || m < 1 || max_pairs < 0)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                             "hessfit_uncertainty_compute: %d parameters, %lld residuals, %d pairs (need n >= 1, m >= 1, "
                             "pairs >= 0)", n, m, max_pairs);
    if (!isfinite(loss) || loss < 0.0)
        return hessfit_error(HESSFIT_ERROR_VALUE, "hessfit_uncertainty_compute: the loss is %g (finite, >= 0)", loss);
    for (size_t i = 0; i < un; i++)
        for (size_t j = 0; j < un; j++)
            if (!isfinite(a[i * un + j]))
                return hessfit_error(HESSFIT_ERROR_NONFINITE, "hessfit_uncertainty_compute: J^T J entry (%zu, %zu) is %g",
                                     i, j, a[i * un + j]);
    for (size_t i = 0; i < un; i++) {
        if (a[i * un + i] < 0.0)
            return hessfit_error(HESSFIT_ERROR_VALUE,
                                 "hessfit_uncertainty_compute: J^T J diagonal entry (%zu, %zu) is %g (a sum of squares "
                                 "is >= 0)", i, i, a[i * un + i]);
        for (size_t j = 0; j < i; j++) {
            const double d = fabs(a[i * un + j] - a[j * un + i]);
            if (d > 1e-10 * sqrt(a[i * un + i] * a[j * un + j]) && d > 0.0)
                return hessfit_error(HESSFIT_ERROR_VALUE,
                                     "hessfit_uncertainty_compute: J^T J is not symmetric: (%zu, %zu) = %.17g, (%zu, %zu) "
                                     "= %.17g", i, j, a[i * un + j], j, i, a[j * un + i]);
        }
    }
    return HESSFIT_SUCCESS;
}

/* One component of a direction, for sorting. */
typedef struct {
    double magnitude;
    int index;
} component_rank;

/* By magnitude descending, then index. */
static int component_order(const void *pa, const void *pb)
{
    const component_rank *a = pa, *b = pb;
    if (a->magnitude != b->magnitude)
        return a->magnitude > b->magnitude ? -1 : 1;
    return (a->index > b->index) - (a->index < b->index);
}

/* u->direction_order: each direction's parameter indices by |component|, largest first. */
static hessfit_status order_components(hessfit_uncertainty *u)
{
    const size_t un = (size_t)u->n;
    component_rank *tmp = malloc(un * sizeof *tmp);
    u->direction_order = malloc(un * un * sizeof *u->direction_order);
    if (tmp == NULL || u->direction_order == NULL) {
        free(tmp);
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "hessfit_uncertainty_compute: no memory for %d directions",
                             u->n);
    }
    for (size_t k = 0; k < un; k++) {
        for (size_t i = 0; i < un; i++) {
            tmp[i].magnitude = fabs(u->directions[k * un + i]);
            tmp[i].index = (int)i;
        }
        qsort(tmp, un, sizeof *tmp, component_order);
        for (size_t i = 0; i < un; i++)
            u->direction_order[k * un + i] = tmp[i].index;
    }
    free(tmp);
    return HESSFIT_SUCCESS;
}

/* Pairs by |correlation| descending, then i, then j. */
static int pair_order(const void *pa, const void *pb)
{
    const hessfit_uncertainty_pair *a = pa, *b = pb;
    const double x = fabs(a->correlation), y = fabs(b->correlation);
    if (x != y)
        return x > y ? -1 : 1;
    if (a->i != b->i)
        return a->i < b->i ? -1 : 1;
    return (a->j > b->j) - (a->j < b->j);
}

/* The strongest max_pairs correlations into u->pairs. */
static hessfit_status strongest_pairs(hessfit_uncertainty *u, int max_pairs)
{
    const size_t un = (size_t)u->n;
    size_t count = 0;
    hessfit_uncertainty_pair *all = malloc((un * (un - 1) / 2 + 1) * sizeof *all);
    if (all == NULL)
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "hessfit_uncertainty_compute: no memory for %zu pairs",
                             un * (un - 1) / 2);
    for (size_t i = 0; i < un; i++)
        for (size_t j = i + 1; j < un; j++)
            if (!isnan(u->correlation[i * un + j])) {
                all[count].i = (int)i;
                all[count].j = (int)j;
                all[count].correlation = u->correlation[i * un + j];
                count++;
            }
    qsort(all, count, sizeof *all, pair_order);
    u->n_pairs = count < (size_t)max_pairs ? (int)count : max_pairs;
    u->pairs = all;
    return HESSFIT_SUCCESS;
}

hessfit_status hessfit_uncertainty_compute(int n, long long m, double loss, const double *a, int max_pairs,
                                           hessfit_uncertainty *u)
{
    size_t un;
    double *s, *mu, *g, mu_max, tol;
    int *undetermined;
    lapack_int info;
    hessfit_status st;
    if (u == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_uncertainty_compute: the output is NULL");
    memset(u, 0, sizeof *u);
    st = check_input(n, m, loss, a, max_pairs);
    if (st != HESSFIT_SUCCESS)
        return st;
    un = (size_t)n;
    /* one block: standard_error, scale, singular_values, mu (n each); covariance, correlation,
     * directions, s, g (n*n each); undetermined flags after it */
    u->standard_error = malloc((4 * un + 5 * un * un) * sizeof(double) + un * sizeof(int));
    if (u->standard_error == NULL)
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "hessfit_uncertainty_compute: no memory for %d parameters", n);
    u->scale = u->standard_error + un;
    u->singular_values = u->scale + un;
    mu = u->singular_values + un;
    u->covariance = mu + un;
    u->correlation = u->covariance + un * un;
    u->directions = u->correlation + un * un;
    s = u->directions + un * un;
    g = s + un * un;
    undetermined = (int *)(g + un * un);
    u->n = n;
    u->m = m;
    u->loss = loss;

    /* S = D^-1/2 A D^-1/2 (lower triangle), its eigenpairs ascending: columns of s */
    for (size_t i = 0; i < un; i++)
        u->scale[i] = a[i * un + i] > 0.0 ? a[i * un + i] : 1.0;
    for (size_t i = 0; i < un; i++)
        for (size_t j = 0; j <= i; j++)
            s[i * un + j] = a[i * un + j] / sqrt(u->scale[i] * u->scale[j]);
    info = LAPACKE_dsyevd(LAPACK_ROW_MAJOR, 'V', 'L', n, s, n, mu);
    if (info != 0) {
        hessfit_status e = hessfit_error(HESSFIT_ERROR_LAPACK,
                                         "hessfit_uncertainty_compute: the eigenpairs of the scaled J^T J (%d parameters) "
                                         "failed: LAPACKE_dsyevd returned %d (%s)", n, (int)info,
                                         info < 0 ? "an invalid argument" : "no convergence");
        hessfit_uncertainty_free(u);
        return e;
    }
    mu_max = mu[un - 1] > 0.0 ? mu[un - 1] : 0.0;
    tol = (double)n * DBL_EPSILON * mu_max;

    /* singular values descending, their directions as rows, the largest component positive */
    memset(undetermined, 0, un * sizeof *undetermined);
    for (size_t k = 0; k < un; k++) {
        const size_t col = un - 1 - k;
        size_t big = 0;
        double sign;
        u->singular_values[k] = sqrt(mu[col] > 0.0 ? mu[col] : 0.0);
        for (size_t i = 1; i < un; i++)
            if (fabs(s[i * un + col]) > fabs(s[big * un + col]))
                big = i;
        sign = s[big * un + col] < 0.0 ? -1.0 : 1.0;
        for (size_t i = 0; i < un; i++)
            u->directions[k * un + i] = sign * s[i * un + col];
        if (mu[col] <= tol) {
            u->n_null++;
            for (size_t i = 0; i < un; i++)
                if (fabs(s[i * un + col]) > HESSFIT_UNCERTAINTY_NULL_COMPONENT)
                    undetermined[i] = 1;
        }
    }
    u->rank = n - u->n_null;
    u->sigma2_determined = m > u->rank;
    u->sigma2 = u->sigma2_determined ? loss / (double)(m - u->rank) : NAN;

    /* G = D^-1/2 (sum over mu > tol of v v^T / mu) D^-1/2 */
    for (size_t i = 0; i < un; i++)
        for (size_t j = 0; j < un; j++) {
            double sum = 0.0;
            for (size_t c = 0; c < un; c++)
                if (mu[c] > tol)
                    sum += s[i * un + c] * s[j * un + c] / mu[c];
            g[i * un + j] = sum / sqrt(u->scale[i] * u->scale[j]);
        }
    for (size_t i = 0; i < un; i++) {
        u->standard_error[i] = undetermined[i] ? INFINITY : sqrt(u->sigma2 * g[i * un + i]);
        for (size_t j = 0; j < un; j++) {
            const int known = !undetermined[i] && !undetermined[j];
            u->covariance[i * un + j] = known ? u->sigma2 * g[i * un + j] : i == j ? INFINITY : NAN;
            u->correlation[i * un + j] = known && g[i * un + i] > 0.0 && g[j * un + j] > 0.0
                                             ? (i == j ? 1.0 : g[i * un + j] / sqrt(g[i * un + i] * g[j * un + j]))
                                             : NAN;
        }
    }
    st = strongest_pairs(u, max_pairs);
    if (st == HESSFIT_SUCCESS)
        st = order_components(u);
    if (st != HESSFIT_SUCCESS)
        hessfit_uncertainty_free(u);
    return st;
}
