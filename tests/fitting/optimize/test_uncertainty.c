/* Parameter uncertainties (fitting/include/hessfit_uncertainty.h) against closed forms: the straight
 * line y = a + b t (covariance s^2 (X^T X)^-1, its correlation, the singular values and right singular
 * vectors of the column-scaled X by LAPACK's SVD); rank-deficient designs (two identical columns:
 * the null direction (1, -1)/sqrt 2, infinite standard errors there, the determined parameter as in
 * the reduced model); m <= rank (s^2 undetermined); the strongest pairs and direction components;
 * invalid inputs. */
#include "hessfit_uncertainty.h"
#include "test_util.h"

#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define M 10

/* J^T J of the m x n design X (row-major). */
static void normal_matrix(const double *x, int m, int n, double *a)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < m; k++)
                s += x[k * n + i] * x[k * n + j];
            a[i * n + j] = s;
        }
}

/* The straight-line data: t_k = 0.5 k, y_k = 1 + 2 t_k + 0.1 sin(3 k + 1); the least-squares a, b
 * and the loss in closed form. */
static void line_data(double *t, double *loss, double *sums)
{
    double st = 0.0, stt = 0.0, sy = 0.0, sty = 0.0, y[M], a, b, det;
    for (int k = 0; k < M; k++) {
        t[k] = 0.5 * k;
        y[k] = 1.0 + 2.0 * t[k] + 0.1 * sin(3.0 * k + 1.0);
        st += t[k], stt += t[k] * t[k], sy += y[k], sty += t[k] * y[k];
    }
    det = M * stt - st * st;
    b = (M * sty - st * sy) / det;
    a = (sy - b * st) / M;
    *loss = 0.0;
    for (int k = 0; k < M; k++)
        *loss += (y[k] - a - b * t[k]) * (y[k] - a - b * t[k]);
    sums[0] = st, sums[1] = stt, sums[2] = det;
}

static void test_line(void)
{
    double t[M], x[M * 2], xs[M * 2], a[4], loss, sums[3], sv[2], vt[4], superb[1];
    hessfit_uncertainty u;
    line_data(t, &loss, sums);
    for (int k = 0; k < M; k++)
        x[2 * k] = 1.0, x[2 * k + 1] = t[k];
    normal_matrix(x, M, 2, a);
    HF_CALL(hessfit_uncertainty_compute(2, M, loss, a, 5, &u));
    {
        const double s2 = loss / (M - 2), st = sums[0], stt = sums[1], det = sums[2];
        const double var_a = s2 * stt / det, var_b = s2 * M / det, cov = -s2 * st / det;
        const double rho = -st / sqrt(M * stt);
        double err = 0.0;
        CHECK(u.rank == 2 && u.n_null == 0 && u.sigma2_determined, "line: rank %d", u.rank);
        CHECK_CLOSE(u.sigma2, s2, 1e-15, s2, "s^2");
        CHECK_CLOSE(u.standard_error[0], sqrt(var_a), 1e-13, sqrt(var_a), "se(a)");
        CHECK_CLOSE(u.standard_error[1], sqrt(var_b), 1e-13, sqrt(var_b), "se(b)");
        CHECK_CLOSE(u.covariance[1], cov, 1e-13, fabs(cov), "cov(a, b)");
        CHECK_CLOSE(u.covariance[2], cov, 1e-13, fabs(cov), "cov(b, a)");
        CHECK_CLOSE(u.correlation[1], rho, 1e-13, 1.0, "rho(a, b)");
        CHECK(u.correlation[0] == 1.0 && u.correlation[3] == 1.0, "diagonal correlation");
        CHECK(u.n_pairs == 1 && u.pairs[0].i == 0 && u.pairs[0].j == 1 && u.pairs[0].correlation == u.correlation[1],
              "line: pairs");
        err = fmax(fabs(u.standard_error[0] / sqrt(var_a) - 1.0), fabs(u.standard_error[1] / sqrt(var_b) - 1.0));
        printf("  y = a + b t, 10 points: standard errors %.6g, %.6g (closed form: relative error %.2g), "
               "correlation %.6f (closed form %.6f)\n",
               u.standard_error[0], u.standard_error[1], err, u.correlation[1], rho);
    }
    /* singular values and right singular vectors of the column-scaled X */
    for (int k = 0; k < M; k++)
        for (int j = 0; j < 2; j++)
            xs[k * 2 + j] = x[k * 2 + j] / sqrt(a[j * 2 + j]);
    CHECK(LAPACKE_dgesvd(LAPACK_ROW_MAJOR, 'N', 'A', M, 2, xs, 2, sv, NULL, 1, vt, 2, superb) == 0, "dgesvd");
    for (int k = 0; k < 2; k++) {
        const double dot = vt[k * 2] * u.directions[k * 2] + vt[k * 2 + 1] * u.directions[k * 2 + 1];
        CHECK_CLOSE(u.singular_values[k], sv[k], 1e-13, sv[0], "singular value");
        CHECK(fabs(fabs(dot) - 1.0) <= 1e-13, "direction %d: |v . v_svd| = %.17g", k, fabs(dot));
    }
    printf("  singular values of X D^-1/2: %.15g, %.15g (dgesvd: %.15g, %.15g), directions agree to 1e-13\n",
           u.singular_values[0], u.singular_values[1], sv[0], sv[1]);
    hessfit_uncertainty_free(&u);
}

static void test_rank_deficient(void)
{
    double t[M], x[M * 3], a[9], a2[4], loss, sums[3];
    hessfit_uncertainty u, full;
    const double r = sqrt(0.5);
    line_data(t, &loss, sums);
    /* y = a + b t + b' t: the columns of b and b' identical */
    for (int k = 0; k < M; k++)
        x[3 * k] = 1.0, x[3 * k + 1] = t[k], x[3 * k + 2] = t[k];
    normal_matrix(x, M, 3, a);
    HF_CALL(hessfit_uncertainty_compute(3, M, loss, a, 5, &u));
    for (int k = 0; k < M; k++)
        x[2 * k] = 1.0, x[2 * k + 1] = t[k];
    normal_matrix(x, M, 2, a2);
    HF_CALL(hessfit_uncertainty_compute(2, M, loss, a2, 5, &full));
    CHECK(u.rank == 2 && u.n_null == 1 && u.sigma2_determined, "rank %d, null %d", u.rank, u.n_null);
    CHECK(fabs(u.directions[6]) <= 1e-12 && fabs(fabs(u.directions[7]) - r) <= 1e-12 &&
              fabs(u.directions[7] + u.directions[8]) <= 1e-12,
          "null direction (%.17g, %.17g, %.17g)", u.directions[6], u.directions[7], u.directions[8]);
    CHECK(isinf(u.standard_error[1]) && isinf(u.standard_error[2]) && isfinite(u.standard_error[0]),
          "standard errors %g %g %g", u.standard_error[0], u.standard_error[1], u.standard_error[2]);
    CHECK_CLOSE(u.sigma2, full.sigma2, 1e-15, full.sigma2, "s^2 = L / (m - rank)");
    CHECK_CLOSE(u.standard_error[0], full.standard_error[0], 1e-12, full.standard_error[0], "se(a) as in the reduced model");
    CHECK(isnan(u.correlation[1]) && isnan(u.correlation[5]) && u.n_pairs == 0, "correlations of undetermined parameters");
    CHECK(u.singular_values[2] <= 1e-7 * u.singular_values[0], "the null singular value %g", u.singular_values[2]);
    CHECK(u.direction_order[6] + u.direction_order[7] == 3 && u.direction_order[6] * u.direction_order[7] == 2 &&
              u.direction_order[8] == 0,
          "the null direction's components by size: %d %d %d", u.direction_order[6], u.direction_order[7],
          u.direction_order[8]);
    printf("  y = a + b t + b' t (identical columns): rank 2, null direction (%.2g, %.15g, %.15g), se(a) %.15g "
           "(reduced model %.15g), se(b) = se(b') = inf\n",
           u.directions[6], u.directions[7], u.directions[8], u.standard_error[0], full.standard_error[0]);
    hessfit_uncertainty_free(&u);
    hessfit_uncertainty_free(&full);

    /* two identical columns alone: (1, -1)/sqrt 2 */
    for (int k = 0; k < M; k++)
        x[2 * k] = t[k], x[2 * k + 1] = t[k];
    normal_matrix(x, M, 2, a2);
    HF_CALL(hessfit_uncertainty_compute(2, M, loss, a2, 5, &u));
    CHECK(u.rank == 1 && u.n_null == 1 && fabs(fabs(u.directions[2]) - r) <= 1e-15 &&
              fabs(u.directions[2] + u.directions[3]) <= 1e-15,
          "identical columns: rank %d, null direction (%.17g, %.17g)", u.rank, u.directions[2], u.directions[3]);
    CHECK(isinf(u.standard_error[0]) && isinf(u.standard_error[1]), "identical columns: standard errors");
    CHECK(fabs(u.singular_values[0] - sqrt(2.0)) <= 1e-15, "identical columns: singular value %.17g (sqrt 2)",
          u.singular_values[0]);
    printf("  two identical columns: null direction (%.15g, %.15g), singular values %.15g (sqrt 2), %.2g\n",
           u.directions[2], u.directions[3], u.singular_values[0], u.singular_values[1]);
    hessfit_uncertainty_free(&u);

    /* a zero column: a parameter with no effect, the null direction e_1 */
    for (int k = 0; k < M; k++)
        x[2 * k] = 1.0, x[2 * k + 1] = 0.0;
    normal_matrix(x, M, 2, a2);
    HF_CALL(hessfit_uncertainty_compute(2, M, loss, a2, 5, &u));
    CHECK(u.rank == 1 && u.directions[3] == 1.0 && isinf(u.standard_error[1]) && isfinite(u.standard_error[0]),
          "zero column");
    hessfit_uncertainty_free(&u);
}

static void test_undetermined_and_pairs(void)
{
    double x[12 * 4], a[16];
    hessfit_uncertainty u;
    /* m = n = 2, regular: s^2 undetermined, correlation still defined */
    {
        const double a2[4] = {2.0, 1.0, 1.0, 3.0};
        HF_CALL(hessfit_uncertainty_compute(2, 2, 0.5, a2, 5, &u));
        CHECK(!u.sigma2_determined && isnan(u.sigma2) && isnan(u.standard_error[0]) && isnan(u.standard_error[1]),
              "m = n: s^2 %g", u.sigma2);
        CHECK_CLOSE(u.correlation[1], -1.0 / sqrt(6.0), 1e-15, 1.0, "m = n: correlation");
        printf("  m = n = 2: s^2 undetermined (NaN), correlation %.15g (-1/sqrt 6)\n", u.correlation[1]);
        hessfit_uncertainty_free(&u);
    }
    /* four parameters: the pairs sorted by |rho|, at most max_pairs */
    test_seed(7);
    for (int k = 0; k < 12; k++)
        for (int j = 0; j < 4; j++)
            x[k * 4 + j] = test_uniform(-1.0, 1.0) + (j == 3 ? 0.9 * x[k * 4] : 0.0);
    normal_matrix(x, 12, 4, a);
    HF_CALL(hessfit_uncertainty_compute(4, 12, 1.0, a, 4, &u));
    CHECK(u.n_pairs == 4, "pairs %d", u.n_pairs);
    for (int p = 0; p < u.n_pairs; p++) {
        const hessfit_uncertainty_pair *q = &u.pairs[p];
        CHECK(q->i < q->j && q->correlation == u.correlation[q->i * 4 + q->j], "pair %d", p);
        if (p > 0)
            CHECK(fabs(q->correlation) <= fabs(u.pairs[p - 1].correlation), "pairs not sorted");
    }
    CHECK(u.pairs[0].i == 0 && u.pairs[0].j == 3, "the strongest pair (%d, %d)", u.pairs[0].i, u.pairs[0].j);
    for (int k = 0; k < 4; k++) /* each direction's components by size */
        for (int i = 1; i < 4; i++)
            CHECK(fabs(u.directions[k * 4 + u.direction_order[k * 4 + i]]) <=
                      fabs(u.directions[k * 4 + u.direction_order[k * 4 + i - 1]]),
                  "direction %d: components out of order", k);
    printf("  4 parameters: strongest pair (0, 3) rho %.4f, then %.4f, %.4f, %.4f\n", u.pairs[0].correlation,
           u.pairs[1].correlation, u.pairs[2].correlation, u.pairs[3].correlation);
    hessfit_uncertainty_free(&u);
}

static void test_invalid(void)
{
    hessfit_uncertainty u;
    double a[4] = {2.0, 1.0, 1.0, 3.0};
    HF_FAILS(hessfit_uncertainty_compute(0, 2, 0.5, a, 5, &u), HESSFIT_ERROR_INVALID_ARGUMENT);
    HF_FAILS(hessfit_uncertainty_compute(2, 2, -0.5, a, 5, &u), HESSFIT_ERROR_VALUE);
    HF_FAILS(hessfit_uncertainty_compute(2, 2, 0.5, NULL, 5, &u), HESSFIT_ERROR_NULL_ARGUMENT);
    a[1] = NAN;
    HF_FAILS(hessfit_uncertainty_compute(2, 2, 0.5, a, 5, &u), HESSFIT_ERROR_NONFINITE);
    a[1] = 1.5;
    HF_FAILS(hessfit_uncertainty_compute(2, 2, 0.5, a, 5, &u), HESSFIT_ERROR_VALUE);
    a[1] = 1.0, a[3] = -3.0;
    HF_FAILS(hessfit_uncertainty_compute(2, 2, 0.5, a, 5, &u), HESSFIT_ERROR_VALUE);
    CHECK(u.standard_error == NULL && u.n == 0, "output not zeroed");
}

int main(void)
{
    printf("uncertainties:\n");
    test_line();
    test_rank_deficient();
    test_undetermined_and_pairs();
    test_invalid();
    printf("test_uncertainty: OK\n");
    return 0;
}
