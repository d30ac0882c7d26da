/* The GPU platforms' host eigensolver (core/include/hf_core.h, hf_symmetric_eigen_list and its
 * _float form): random symmetric matrices of the rh-enamide Hessian dimensions (and a small one)
 * with a spread spectrum. Checked: A v = l v for every pair (relative to |A|), the eigenvalues
 * ascending, the eigenvectors orthonormal, eigenvalues only (vectors 0) equal to the ones with
 * vectors, and every result bit for bit the same with 1 and 3 threads. */
#include "hf_core.h"
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define COUNT 6
static const int DIMS[COUNT] = {108, 186, 3, 114, 174, 108};

/* A[i + j dim] = A[j + i dim], the diagonal spread over four decades (as a mass-weighted Hessian's). */
static void fill_symmetric(double *a, int dim)
{
    for (int j = 0; j < dim; j++)
        for (int i = 0; i <= j; i++)
            a[i + j * dim] = a[j + i * dim] = 0.01 * test_uniform(-1.0, 1.0);
    for (int i = 0; i < dim; i++)
        a[i + i * dim] += pow(10.0, 4.0 * i / dim - 2.0);
}

/* The largest |A v_k - l_k v_k| / max|A| over k, and the largest |v_j . v_k - delta_jk|. */
static void check_pairs(const double *a, const double *v, const double *w, int dim, double tolerance, const char *what)
{
    double norm = 0.0, residual = 0.0, orthogonality = 0.0;
    for (int e = 0; e < dim * dim; e++)
        norm = fmax(norm, fabs(a[e]));
    for (int k = 0; k < dim; k++) {
        if (k > 0)
            CHECK(w[k] >= w[k - 1], "%s: eigenvalues not ascending at %d", what, k);
        for (int i = 0; i < dim; i++) {
            double av = 0.0;
            for (int j = 0; j < dim; j++)
                av += a[i + j * dim] * v[j + k * dim];
            residual = fmax(residual, fabs(av - w[k] * v[i + k * dim]) / norm);
        }
        for (int j = 0; j <= k; j++) {
            double dot = 0.0;
            for (int i = 0; i < dim; i++)
                dot += v[i + j * dim] * v[i + k * dim];
            orthogonality = fmax(orthogonality, fabs(dot - (j == k ? 1.0 : 0.0)));
        }
    }
    printf("  %s, dim %d: residual %.2e, orthogonality %.2e\n", what, dim, residual, orthogonality);
    CHECK(residual <= tolerance && orthogonality <= 100.0 * tolerance, "%s, dim %d: residual %.3g, orthogonality %.3g",
          what, dim, residual, orthogonality);
}

/* Runs the double solver on copies of the inputs with the given thread count. */
static void solve(double *const *inputs, double **vectors, double **values, int with_vectors, const char *threads)
{
    setenv("HESSFIT_NUM_THREADS", threads, 1);
    int info[COUNT];
    for (int k = 0; k < COUNT; k++)
        memcpy(vectors[k], inputs[k], (size_t)DIMS[k] * DIMS[k] * sizeof(double));
    hf_symmetric_eigen_list(COUNT, DIMS, vectors, values, with_vectors, info);
    for (int k = 0; k < COUNT; k++)
        CHECK(info[k] == 0, "matrix %d: info %d", k, info[k]);
}

int main(void)
{
    test_seed(20261128);
    double *inputs[COUNT], *v1[COUNT], *w1[COUNT], *v3[COUNT], *w3[COUNT], *wn[COUNT];
    float *vf[COUNT], *wf[COUNT];
    for (int k = 0; k < COUNT; k++) {
        const size_t nn = (size_t)DIMS[k] * DIMS[k];
        inputs[k] = malloc(nn * sizeof(double));
        v1[k] = malloc(nn * sizeof(double));
        v3[k] = malloc(nn * sizeof(double));
        vf[k] = malloc(nn * sizeof(float));
        w1[k] = malloc((size_t)DIMS[k] * sizeof(double));
        w3[k] = malloc((size_t)DIMS[k] * sizeof(double));
        wn[k] = malloc((size_t)DIMS[k] * sizeof(double));
        wf[k] = malloc((size_t)DIMS[k] * sizeof(float));
        CHECK(inputs[k] && v1[k] && v3[k] && vf[k] && w1[k] && w3[k] && wn[k] && wf[k], "out of memory");
        fill_symmetric(inputs[k], DIMS[k]);
    }

    solve(inputs, v1, w1, 1, "1");
    for (int k = 0; k < COUNT; k++)
        check_pairs(inputs[k], v1[k], w1[k], DIMS[k], 1e-13, "double");
    solve(inputs, v3, w3, 1, "3");
    for (int k = 0; k < COUNT; k++) {
        CHECK(memcmp(v1[k], v3[k], (size_t)DIMS[k] * DIMS[k] * sizeof(double)) == 0, "matrix %d: vectors differ", k);
        CHECK(memcmp(w1[k], w3[k], (size_t)DIMS[k] * sizeof(double)) == 0, "matrix %d: values differ", k);
    }
    solve(inputs, v3, wn, 0, "3"); /* eigenvalues only: the same values to rounding */
    double worst = 0.0;
    for (int k = 0; k < COUNT; k++)
        for (int i = 0; i < DIMS[k]; i++)
            worst = fmax(worst, fabs(wn[k][i] - w1[k][i]) / fabs(w1[k][DIMS[k] - 1]));
    printf("  eigenvalues only vs with vectors: %.2e (relative to the largest)\n", worst);
    CHECK(worst <= 1e-13, "eigenvalues only differ by %.3g", worst);

    /* single precision: the float solver on the same matrices, against the double results */
    int info[COUNT];
    for (int k = 0; k < COUNT; k++)
        for (int e = 0; e < DIMS[k] * DIMS[k]; e++)
            vf[k][e] = (float)inputs[k][e];
    hf_symmetric_eigen_list_float(COUNT, DIMS, vf, wf, 1, info);
    worst = 0.0;
    for (int k = 0; k < COUNT; k++) {
        CHECK(info[k] == 0, "float matrix %d: info %d", k, info[k]);
        for (int i = 0; i < DIMS[k]; i++)
            worst = fmax(worst, fabs(wf[k][i] - w1[k][i]) / fabs(w1[k][DIMS[k] - 1]));
    }
    printf("  float vs double eigenvalues: %.2e (relative to the largest)\n", worst);
    CHECK(worst <= 1e-5, "float eigenvalues differ by %.3g", worst);

    for (int k = 0; k < COUNT; k++) {
        free(inputs[k]), free(v1[k]), free(v3[k]), free(vf[k]);
        free(w1[k]), free(w3[k]), free(wn[k]), free(wf[k]);
    }
    printf("test_symmetric_eigen: OK\n");
    return 0;
}
