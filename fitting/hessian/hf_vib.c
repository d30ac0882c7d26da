/* Harmonic vibrational analysis: mass-weighting, Eckart projection, LAPACKE_dsyevd. */
#include "hessfit_vib.h"
#include "hessfit_units.h"
#include "hf_core.h" /* hf_rigid_body_basis, the math core's (core/) */

#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static hessfit_status check_atoms(const char *fn, int n_atoms)
{
    if (n_atoms < 1 || n_atoms > HESSFIT_VIB_MAX_ATOMS)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: atom count %d outside 1..%d", fn, n_atoms, HESSFIT_VIB_MAX_ATOMS);
    return HESSFIT_SUCCESS;
}

static hessfit_status check_masses(const char *fn, const double *masses, int n_atoms)
{
    for (int a = 0; a < n_atoms; a++)
        if (!isfinite(masses[a]) || !(masses[a] > 0.0))
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: mass of atom %d is %g (must be finite and positive)",
                            fn, a, masses[a]);
    return HESSFIT_SUCCESS;
}

hessfit_status hessfit_vib_mass_weight(const double *hessian, const double *masses_amu, int n_atoms, double *out)
{
    const char *fn = "hessfit_vib_mass_weight";
    hessfit_status st;
    size_t dim;
    double *inv_sqrt_m;
    if (hessian == NULL || masses_amu == NULL || out == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "%s: %s is NULL", fn,
                        hessian == NULL ? "hessian" : masses_amu == NULL ? "masses" : "out");
    if ((st = check_atoms(fn, n_atoms)) != HESSFIT_SUCCESS || (st = check_masses(fn, masses_amu, n_atoms)) != HESSFIT_SUCCESS)
        return st;
    dim = 3 * (size_t)n_atoms;
    for (size_t i = 0; i < dim * dim; i++)
        if (!isfinite(hessian[i]))
            return hessfit_error(HESSFIT_ERROR_NONFINITE, "%s: hessian element (%zu, %zu) is %s", fn, i / dim, i % dim,
                            isnan(hessian[i]) ? "NaN" : "infinite");
    inv_sqrt_m = malloc(dim * sizeof *inv_sqrt_m);
    if (inv_sqrt_m == NULL)
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: no memory", fn);
    for (size_t i = 0; i < dim; i++)
        inv_sqrt_m[i] = 1.0 / sqrt(masses_amu[i / 3]);
    /* upper and lower triangle together, so that out may alias hessian */
    for (size_t i = 0; i < dim; i++) {
        for (size_t j = i; j < dim; j++) {
            double v = 0.5 * (hessian[i * dim + j] + hessian[j * dim + i]) * inv_sqrt_m[i] * inv_sqrt_m[j];
            out[i * dim + j] = v;
            out[j * dim + i] = v;
        }
    }
    free(inv_sqrt_m);
    return HESSFIT_SUCCESS;
}

hessfit_status hessfit_vib_external_basis(const double *masses_amu, const double *coords, int n_atoms, double *basis,
                                int *n_external)
{
    const char *fn = "hessfit_vib_external_basis";
    hessfit_status st;
    size_t dim;
    double *cand;
    int kept;

    if (masses_amu == NULL || coords == NULL || n_external == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "%s: %s is NULL", fn,
                        masses_amu == NULL ? "masses" : coords == NULL ? "coords" : "n_external");
    if ((st = check_atoms(fn, n_atoms)) != HESSFIT_SUCCESS || (st = check_masses(fn, masses_amu, n_atoms)) != HESSFIT_SUCCESS)
        return st;
    dim = 3 * (size_t)n_atoms;
    for (size_t i = 0; i < dim; i++)
        if (!isfinite(coords[i]))
            return hessfit_error(HESSFIT_ERROR_NONFINITE, "%s: coordinate %zu of atom %zu is not finite", fn, i % 3, i / 3);

    cand = malloc(6 * dim * sizeof *cand);
    if (cand == NULL)
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: no memory", fn);
    kept = hf_rigid_body_basis(n_atoms, NULL, coords, masses_amu, cand);
    if (basis != NULL)
        memcpy(basis, cand, (size_t)kept * dim * sizeof *cand);
    *n_external = kept;
    free(cand);
    return HESSFIT_SUCCESS;
}

hessfit_status hessfit_vib_project(double *h, const double *basis, int n_external, int n_atoms)
{
    const char *fn = "hessfit_vib_project";
    hessfit_status st;
    size_t dim;
    double *a, *e, c[36];
    int k = n_external;
    if (h == NULL || (basis == NULL && n_external > 0))
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "%s: %s is NULL", fn, h == NULL ? "hessian" : "basis");
    if ((st = check_atoms(fn, n_atoms)) != HESSFIT_SUCCESS)
        return st;
    if (n_external < 0 || n_external > 6)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: n_external %d outside 0..6", fn, n_external);
    if (k == 0)
        return HESSFIT_SUCCESS;
    dim = 3 * (size_t)n_atoms;
    a = malloc(2 * dim * (size_t)k * sizeof *a);
    if (a == NULL)
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: no memory", fn);
    e = a + dim * (size_t)k;
    /* A = H B^T (dim x k), C = B A (k x k), E = C B (k x dim) */
    for (size_t i = 0; i < dim; i++)
        for (int q = 0; q < k; q++) {
            double s = 0.0;
            for (size_t j = 0; j < dim; j++)
                s += h[i * dim + j] * basis[(size_t)q * dim + j];
            a[i * (size_t)k + q] = s;
        }
    for (int p = 0; p < k; p++)
        for (int q = 0; q < k; q++) {
            double s = 0.0;
            for (size_t i = 0; i < dim; i++)
                s += basis[(size_t)p * dim + i] * a[i * (size_t)k + q];
            c[p * k + q] = s;
        }
    for (int p = 0; p < k; p++)
        for (size_t j = 0; j < dim; j++) {
            double s = 0.0;
            for (int q = 0; q < k; q++)
                s += c[p * k + q] * basis[(size_t)q * dim + j];
            e[(size_t)p * dim + j] = s;
        }
    /* P H P = H - A B - B^T A^T + B^T E */
    for (size_t i = 0; i < dim; i++)
        for (size_t j = 0; j < dim; j++) {
            double s = h[i * dim + j];
            for (int p = 0; p < k; p++) {
                const double bpi = basis[(size_t)p * dim + i], bpj = basis[(size_t)p * dim + j];
                s += -a[i * (size_t)k + p] * bpj - bpi * a[j * (size_t)k + p] + bpi * e[(size_t)p * dim + j];
            }
            h[i * dim + j] = s;
        }
    /* exact symmetry for the eigensolver */
    for (size_t i = 0; i < dim; i++)
        for (size_t j = i + 1; j < dim; j++) {
            double v = 0.5 * (h[i * dim + j] + h[j * dim + i]);
            h[i * dim + j] = v;
            h[j * dim + i] = v;
        }
    free(a);
    return HESSFIT_SUCCESS;
}

hessfit_status hessfit_vib_analyse(const double *hessian, const double *masses_amu, const double *coords, int n_atoms,
                         double unit_factor, unsigned flags, double *frequencies_cm1, double *modes,
                         int *n_external)
{
    const char *fn = "hessfit_vib_analyse";
    hessfit_status st;
    size_t dim;
    double *hm = NULL, *w = NULL, *basis = NULL;
    int n_ext = 0;
    lapack_int info;

    if (hessian == NULL || masses_amu == NULL || frequencies_cm1 == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "%s: %s is NULL", fn,
                        hessian == NULL ? "hessian" : masses_amu == NULL ? "masses" : "frequencies");
    if ((flags & ~HESSFIT_VIB_PROJECT_EXTERNAL) != 0)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: unknown flags 0x%x", fn, flags & ~HESSFIT_VIB_PROJECT_EXTERNAL);
    if ((flags & HESSFIT_VIB_PROJECT_EXTERNAL) && coords == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "%s: coords is NULL but HESSFIT_VIB_PROJECT_EXTERNAL needs them", fn);
    if (!isfinite(unit_factor) || !(unit_factor > 0.0))
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: unit factor %g must be finite and positive", fn, unit_factor);
    if ((st = check_atoms(fn, n_atoms)) != HESSFIT_SUCCESS)
        return st;
    dim = 3 * (size_t)n_atoms;

    hm = modes != NULL ? modes : malloc(dim * dim * sizeof *hm);
    w = malloc(dim * sizeof *w);
    if (hm == NULL || w == NULL) {
        st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: no memory for a %zu x %zu Hessian", fn, dim, dim);
        goto done;
    }
    if ((st = hessfit_vib_mass_weight(hessian, masses_amu, n_atoms, hm)) != HESSFIT_SUCCESS)
        goto done;
    if (flags & HESSFIT_VIB_PROJECT_EXTERNAL) {
        basis = malloc(6 * dim * sizeof *basis);
        if (basis == NULL) {
            st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: no memory", fn);
            goto done;
        }
        if ((st = hessfit_vib_external_basis(masses_amu, coords, n_atoms, basis, &n_ext)) != HESSFIT_SUCCESS)
            goto done;
        if ((st = hessfit_vib_project(hm, basis, n_ext, n_atoms)) != HESSFIT_SUCCESS)
            goto done;
    }
    /* column-major call on the symmetric matrix: eigenvector j comes back as row j of hm */
    info = LAPACKE_dsyevd(LAPACK_COL_MAJOR, modes != NULL ? 'V' : 'N', 'U', (lapack_int)dim, hm,
                          (lapack_int)dim, w);
    if (info != 0) {
        if (info == LAPACK_WORK_MEMORY_ERROR || info == LAPACK_TRANSPOSE_MEMORY_ERROR)
            st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: LAPACKE_dsyevd could not allocate its work arrays (n = %zu)",
                          fn, dim);
        else if (info < 0)
            st = hessfit_error(HESSFIT_ERROR_LAPACK, "%s: LAPACKE_dsyevd: argument %d had an illegal value (n = %zu)", fn,
                          (int)-info, dim);
        else
            st = hessfit_error(HESSFIT_ERROR_LAPACK, "%s: LAPACKE_dsyevd did not converge (info = %d, n = %zu)", fn,
                          (int)info, dim);
        goto done;
    }
    for (size_t j = 0; j < dim; j++)
        frequencies_cm1[j] = hessfit_eigenvalue_to_cm1(w[j], unit_factor);
    if (n_external != NULL)
        *n_external = n_ext;

done:
    if (hm != modes)
        free(hm);
    free(w);
    free(basis);
    return st;
}

typedef struct {
    double value;
    int index;
} keyed;

static int by_magnitude_desc(const void *pa, const void *pb)
{
    const keyed *a = pa, *b = pb;
    double fa = fabs(a->value), fb = fabs(b->value);
    if (fa != fb)
        return fa > fb ? -1 : 1;
    return a->index - b->index;
}

static int by_value_asc(const void *pa, const void *pb)
{
    const keyed *a = pa, *b = pb;
    if (a->value != b->value)
        return a->value < b->value ? -1 : 1;
    return a->index - b->index;
}

hessfit_status hessfit_vib_select(const double *values, int n, int n_keep, double *out)
{
    keyed *k;
    if (values == NULL || out == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_vib_select: %s is NULL", values == NULL ? "values" : "out");
    if (n < 0 || n_keep < 0 || n_keep > n)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "hessfit_vib_select: cannot keep %d of %d values", n_keep, n);
    if (n_keep == 0)
        return HESSFIT_SUCCESS;
    k = malloc((size_t)n * sizeof *k);
    if (k == NULL)
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "hessfit_vib_select: no memory");
    for (int i = 0; i < n; i++) {
        k[i].value = values[i];
        k[i].index = i;
    }
    qsort(k, (size_t)n, sizeof *k, by_magnitude_desc);
    qsort(k, (size_t)n_keep, sizeof *k, by_value_asc);
    for (int i = 0; i < n_keep; i++)
        out[i] = k[i].value;
    free(k);
    return HESSFIT_SUCCESS;
}
