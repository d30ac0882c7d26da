/* Seminario force constants (original, as q2mm, and Allen et al.'s modified method) from a QM
 * Hessian; averaging per force-field parameter. Formulas: hessfit_seminario.h. */
#include "hessfit_seminario.h"
#include "hessfit_units.h"
#include "hf_vec3.h"

#include <ctype.h>
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Coincident atoms: closer than this (Angstrom) give no direction. */
#define MIN_DISTANCE_A 1e-6
/* The full-Hessian eigensolver of the TS replacement works on 3n x 3n with 32-bit LAPACK ints. */
#define MAX_TS_ATOMS 15000

struct hessfit_seminario {
    hessfit_seminario_options options;
    int n;
    double *coords;     /* 3n, Angstrom */
    double *hessian;    /* (3n)^2, Hartree/Bohr^2, after the TS treatment */
    int *nbr_start;     /* n + 1 offsets into nbr (modified method; NULL otherwise) */
    int *nbr;
    char name[128];     /* for messages */
};

/* The eigen-decomposition of K^AB = -H_AB: eigenvalues wr + i wi, eigenvectors as the columns of
 * v (row-major 3x3, dgeev's real storage of complex pairs: columns j, j+1 = re, im of the vector
 * of wr[j] + i wi[j], wi[j] > 0). */
typedef struct block_eigen {
    double wr[3], wi[3], v[9];
} block_eigen;

/* ---- options and units ---------------------------------------------------------------------- */

hessfit_seminario_options hessfit_seminario_default_options(void)
{
    hessfit_seminario_options o;
    memset(&o, 0, sizeof o);
    o.method = HESSFIT_SEMINARIO_ORIGINAL;
    o.ts = HESSFIT_SEMINARIO_TS_KEEP;
    o.ts_replacement = 1.0;
    o.scaling = HESSFIT_Q2MM_DFT_SCALING;
    o.q2mm_units = 0;
    o.policy = HESSFIT_SEMINARIO_AVERAGE_POSITIVE;
    return o;
}

hessfit_seminario_options hessfit_seminario_q2mm_options(void)
{
    hessfit_seminario_options o = hessfit_seminario_default_options();
    o.q2mm_units = 1;
    return o;
}

hessfit_status hessfit_seminario_check_options(const hessfit_seminario_options *o)
{
    if (o == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_seminario_check_options: options is NULL");
    if (o->method != HESSFIT_SEMINARIO_ORIGINAL && o->method != HESSFIT_SEMINARIO_MODIFIED)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "seminario options: method %d is not original (0) or modified (1)",
                        (int)o->method);
    if (o->ts != HESSFIT_SEMINARIO_TS_KEEP && o->ts != HESSFIT_SEMINARIO_TS_REPLACE && o->ts != HESSFIT_SEMINARIO_TS_BLOCK_ABS)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "seminario options: ts %d is not keep (0), replace (1) or abs (2)",
                        (int)o->ts);
    if (!isfinite(o->scaling) || !(o->scaling > 0.0))
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "seminario options: scaling %g is not finite and > 0", o->scaling);
    if (o->ts == HESSFIT_SEMINARIO_TS_REPLACE && (!isfinite(o->ts_replacement) || !(o->ts_replacement > 0.0)))
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "seminario options: ts_replacement %g is not finite and > 0",
                        o->ts_replacement);
    if (o->q2mm_units != 0 && o->q2mm_units != 1)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "seminario options: q2mm_units %d is not 0 or 1", o->q2mm_units);
    if (o->policy != HESSFIT_SEMINARIO_AVERAGE_ALL && o->policy != HESSFIT_SEMINARIO_AVERAGE_POSITIVE)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "seminario options: policy %d is not all (0) or positive (1)",
                        (int)o->policy);
    return HESSFIT_SUCCESS;
}

double hessfit_seminario_au_to_mdyn(hessfit_term_kind kind, int q2mm_units)
{
    if (kind == HESSFIT_TERM_BOND)
        return q2mm_units ? HESSFIT_Q2MM_HARTREE_PER_BOHR2_TO_MDYN_PER_A : HESSFIT_HARTREE_PER_BOHR2_TO_MDYN_PER_A;
    if (kind == HESSFIT_TERM_ANGLE)
        return q2mm_units ? HESSFIT_Q2MM_HARTREE_PER_RAD2_TO_MDYN_A_PER_RAD2 : HESSFIT_HARTREE_TO_MDYN_A;
    return NAN;
}

double hessfit_seminario_au_to_canonical(hessfit_term_kind kind, int q2mm_units)
{
    /* canonical k = spring constant / 2 (E = k (x - x0)^2); q2mm goes through mdyn with the MM3
     * factors, which contain that 1/2 */
    if (kind == HESSFIT_TERM_BOND)
        return q2mm_units ? HESSFIT_Q2MM_HARTREE_PER_BOHR2_TO_MDYN_PER_A * HESSFIT_Q2MM_MDYN_PER_A_TO_KCAL_PER_MOL_PER_A2
                          : 0.5 * HESSFIT_HARTREE_PER_BOHR2_TO_KCAL_PER_MOL_PER_A2;
    if (kind == HESSFIT_TERM_ANGLE)
        return q2mm_units ? HESSFIT_Q2MM_HARTREE_PER_RAD2_TO_MDYN_A_PER_RAD2 * HESSFIT_MM3_MDYN_A_PER_RAD2_TO_KCAL_PER_MOL_PER_RAD2
                          : 0.5 * HESSFIT_HARTREE_TO_KCAL_PER_MOL;
    return NAN;
}

/* ---- small vector helpers ------------------------------------------------------------------- */

/* a / |a| into u; returns |a|. */
static double unit3(const double *a, double *u)
{
    double r = hf_norm3(a);
    for (int k = 0; k < 3; k++)
        u[k] = a[k] / r;
    return r;
}

/* ---- creation ------------------------------------------------------------------------------- */

void hessfit_seminario_free(hessfit_seminario *s)
{
    if (s == NULL)
        return;
    free(s->coords);
    free(s->hessian);
    free(s->nbr_start);
    free(s->nbr);
    free(s);
}

int hessfit_seminario_n_atoms(const hessfit_seminario *s)
{
    return s != NULL ? s->n : 0;
}

const hessfit_seminario_options *hessfit_seminario_get_options(const hessfit_seminario *s)
{
    return s != NULL ? &s->options : NULL;
}

/* Limé & Norrby / q2mm invert_ts_curvature: H_sym = V diag(w) V^T; the most negative w becomes
 * replacement, the other negative ones 0; H = V diag(w') V^T. Unchanged without negative w. */
static hessfit_status replace_negative_curvature(hessfit_seminario *s)
{
    const size_t dim = 3 * (size_t)s->n;
    double *a = NULL, *w = NULL, *tmp = NULL;
    hessfit_status st = HESSFIT_SUCCESS;
    lapack_int info;
    size_t lowest = 0;
    int n_negative = 0;

    if (s->n > MAX_TS_ATOMS)
        return hessfit_error(HESSFIT_ERROR_OVERFLOW, "%s: TS replacement limited to %d atoms (%d given)", s->name,
                        MAX_TS_ATOMS, s->n);
    a = malloc(dim * dim * sizeof *a);
    w = malloc(dim * sizeof *w);
    tmp = malloc(dim * sizeof *tmp);
    if (a == NULL || w == NULL || tmp == NULL) {
        st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: TS replacement: no memory for a %zu x %zu matrix", s->name, dim,
                      dim);
        goto done;
    }
    for (size_t r = 0; r < dim; r++)
        for (size_t c = 0; c < dim; c++)
            a[r * dim + c] = 0.5 * (s->hessian[r * dim + c] + s->hessian[c * dim + r]);
    info = LAPACKE_dsyevd(LAPACK_ROW_MAJOR, 'V', 'U', (lapack_int)dim, a, (lapack_int)dim, w);
    if (info != 0) {
        st = hessfit_error(HESSFIT_ERROR_LAPACK, "%s: TS replacement: LAPACKE_dsyevd failed (info = %d, n = %zu)", s->name,
                      (int)info, dim);
        goto done;
    }
    for (size_t m = 0; m < dim; m++)
        if (w[m] < 0.0) {
            if (n_negative == 0 || w[m] < w[lowest])
                lowest = m;
            n_negative++;
        }
    if (n_negative == 0)
        goto done;
    for (size_t m = 0; m < dim; m++)
        if (w[m] < 0.0)
            w[m] = m == lowest ? s->options.ts_replacement : 0.0;
    /* H = sum_m w_m v_m v_m^T, v_m = column m of a */
    memset(s->hessian, 0, dim * dim * sizeof *s->hessian);
    for (size_t m = 0; m < dim; m++) {
        if (w[m] == 0.0)
            continue;
        for (size_t r = 0; r < dim; r++)
            tmp[r] = w[m] * a[r * dim + m];
        for (size_t r = 0; r < dim; r++) {
            double *row = s->hessian + r * dim;
            for (size_t c = 0; c < dim; c++)
                row[c] += tmp[r] * a[c * dim + m];
        }
    }
done:
    free(a);
    free(w);
    free(tmp);
    return st;
}

/* Neighbour lists (CSR) from the molecule's bond list. */
static hessfit_status build_neighbours(hessfit_seminario *s, const hessfit_molecule *mol)
{
    int *deg = NULL;
    hessfit_status st = HESSFIT_SUCCESS;
    if (mol->n_bonds < 0 || (mol->n_bonds > 0 && mol->bonds == NULL))
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: %d bonds but no bond list", s->name, mol->n_bonds);
    s->nbr_start = calloc((size_t)s->n + 1, sizeof *s->nbr_start);
    s->nbr = malloc(2 * (size_t)mol->n_bonds * sizeof *s->nbr + 1);
    deg = calloc((size_t)s->n, sizeof *deg);
    if (s->nbr_start == NULL || s->nbr == NULL || deg == NULL) {
        st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: no memory for the neighbour lists", s->name);
        goto done;
    }
    for (int b = 0; b < mol->n_bonds; b++) {
        int i = mol->bonds[2 * b], j = mol->bonds[2 * b + 1];
        if (i < 0 || i >= s->n || j < 0 || j >= s->n || i == j) {
            st = hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: bond %d joins atoms %d and %d (molecule has %d atoms)",
                          s->name, b + 1, i + 1, j + 1, s->n);
            goto done;
        }
        s->nbr_start[i + 1]++;
        s->nbr_start[j + 1]++;
    }
    for (int a = 0; a < s->n; a++)
        s->nbr_start[a + 1] += s->nbr_start[a];
    for (int b = 0; b < mol->n_bonds; b++) {
        int i = mol->bonds[2 * b], j = mol->bonds[2 * b + 1];
        s->nbr[s->nbr_start[i] + deg[i]++] = j;
        s->nbr[s->nbr_start[j] + deg[j]++] = i;
    }
done:
    free(deg);
    return st;
}

hessfit_status hessfit_seminario_create(const hessfit_molecule *mol, const hessfit_seminario_options *options, hessfit_seminario **out)
{
    hessfit_seminario *s;
    hessfit_status st;
    size_t dim;

    if (out == NULL || mol == NULL || options == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_seminario_create: %s is NULL",
                        out == NULL ? "out" : mol == NULL ? "mol" : "options");
    *out = NULL;
    st = hessfit_seminario_check_options(options);
    if (st != HESSFIT_SUCCESS)
        return st;
    s = calloc(1, sizeof *s);
    if (s == NULL)
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "hessfit_seminario_create: no memory");
    s->options = *options;
    snprintf(s->name, sizeof s->name, "%s",
             mol->name != NULL && mol->name[0] != '\0' ? mol->name
             : mol->source != NULL                    ? mol->source
                                                      : "molecule");
    if (mol->n_atoms <= 0 || mol->coords == NULL) {
        st = hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: no atoms or no coordinates (n_atoms = %d)", s->name,
                      mol->n_atoms);
        goto fail;
    }
    if (mol->hessian == NULL) {
        st = hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: no Hessian (Seminario needs the QM Hessian)", s->name);
        goto fail;
    }
    if ((size_t)mol->n_atoms > ((size_t)-1 / sizeof(double)) / 9 / (size_t)mol->n_atoms) {
        st = hessfit_error(HESSFIT_ERROR_OVERFLOW, "%s: %d atoms: Hessian size overflows", s->name, mol->n_atoms);
        goto fail;
    }
    s->n = mol->n_atoms;
    dim = 3 * (size_t)s->n;
    for (int a = 0; a < s->n; a++)
        for (int k = 0; k < 3; k++)
            if (!isfinite(mol->coords[3 * a + k])) {
                st = hessfit_error(HESSFIT_ERROR_NONFINITE, "%s: atom %d coordinate %c is %g", s->name, a + 1, "xyz"[k],
                              mol->coords[3 * a + k]);
                goto fail;
            }
    for (size_t e = 0; e < dim * dim; e++)
        if (!isfinite(mol->hessian[e])) {
            st = hessfit_error(HESSFIT_ERROR_NONFINITE, "%s: Hessian element (%zu, %zu) (0-based) is %g", s->name, e / dim,
                          e % dim, mol->hessian[e]);
            goto fail;
        }
    s->coords = malloc(dim * sizeof *s->coords);
    s->hessian = malloc(dim * dim * sizeof *s->hessian);
    if (s->coords == NULL || s->hessian == NULL) {
        st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: no memory for a %zu x %zu Hessian", s->name, dim, dim);
        goto fail;
    }
    memcpy(s->coords, mol->coords, dim * sizeof *s->coords);
    memcpy(s->hessian, mol->hessian, dim * dim * sizeof *s->hessian);
    if (options->method == HESSFIT_SEMINARIO_MODIFIED) {
        if (!mol->bonds_known) {
            st = hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                          "%s: the modified Seminario method needs the bonds (connectivity) of the molecule", s->name);
            goto fail;
        }
        st = build_neighbours(s, mol);
        if (st != HESSFIT_SUCCESS)
            goto fail;
    }
    if (options->ts == HESSFIT_SEMINARIO_TS_REPLACE) {
        st = replace_negative_curvature(s);
        if (st != HESSFIT_SUCCESS)
            goto fail;
    }
    *out = s;
    return HESSFIT_SUCCESS;
fail:
    hessfit_seminario_free(s);
    return st;
}

/* ---- projections ---------------------------------------------------------------------------- */

static hessfit_status block_decompose(const hessfit_seminario *s, int a, int b, block_eigen *e)
{
    const size_t dim = 3 * (size_t)s->n;
    double k[9];
    lapack_int info;
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            k[3 * r + c] = -s->hessian[(3 * (size_t)a + r) * dim + 3 * (size_t)b + c];
    info = LAPACKE_dgeev(LAPACK_ROW_MAJOR, 'N', 'V', 3, k, 3, e->wr, e->wi, NULL, 1, e->v, 3);
    if (info != 0)
        return hessfit_error(HESSFIT_ERROR_LAPACK, "%s: LAPACKE_dgeev failed on the Hessian block of atoms %d, %d (info = %d)",
                        s->name, a + 1, b + 1, (int)info);
    return HESSFIT_SUCCESS;
}

/* sum_i Re(l_i) |u . v_i| (|Re l_i| with the block-abs TS option). */
static double project(const block_eigen *e, const double *u, int abs_eigenvalues)
{
    double sum = 0.0;
    for (int j = 0; j < 3; j++) {
        double lr = abs_eigenvalues ? fabs(e->wr[j]) : e->wr[j];
        double re = u[0] * e->v[j] + u[1] * e->v[3 + j] + u[2] * e->v[6 + j];
        if (e->wi[j] != 0.0 && j + 1 < 3) {
            /* complex pair j, j+1: the vectors are (re +- i im); both have |u . v| = |re + i im| */
            double im = u[0] * e->v[j + 1] + u[1] * e->v[3 + j + 1] + u[2] * e->v[6 + j + 1];
            sum += 2.0 * lr * sqrt(re * re + im * im);
            j++;
        } else {
            sum += lr * fabs(re);
        }
    }
    return sum;
}

static hessfit_status check_atom(const hessfit_seminario *s, const char *what, int a)
{
    if (a < 0 || a >= s->n)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: %s: atom %d out of range 1..%d",
                        s->name, what, a + 1, s->n);
    return HESSFIT_SUCCESS;
}

static void set_units(const hessfit_seminario *s, hessfit_seminario_estimate *e)
{
    e->k = e->k_au * hessfit_seminario_au_to_canonical(e->kind, s->options.q2mm_units);
    e->k_mdyn = e->k_au * hessfit_seminario_au_to_mdyn(e->kind, s->options.q2mm_units);
}

hessfit_status hessfit_seminario_bond(const hessfit_seminario *s, int i, int j, hessfit_seminario_estimate *out)
{
    char what[64];
    double d[3], u[3], r;
    block_eigen eij, eji;
    hessfit_seminario_estimate e;
    hessfit_status st;
    const int abs_l = s != NULL && s->options.ts == HESSFIT_SEMINARIO_TS_BLOCK_ABS;

    if (s == NULL || out == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_seminario_bond: %s is NULL", s == NULL ? "estimator" : "out");
    snprintf(what, sizeof what, "bond %d-%d", i + 1, j + 1);
    if ((st = check_atom(s, what, i)) != HESSFIT_SUCCESS || (st = check_atom(s, what, j)) != HESSFIT_SUCCESS)
        return st;
    if (i == j)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: %s: an atom bonded to itself", s->name, what);
    for (int k = 0; k < 3; k++)
        d[k] = s->coords[3 * j + k] - s->coords[3 * i + k];
    r = hf_norm3(d);
    if (!(r >= MIN_DISTANCE_A))
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: %s: the atoms coincide (distance %g A)", s->name, what, r);
    unit3(d, u);
    if ((st = block_decompose(s, i, j, &eij)) != HESSFIT_SUCCESS || (st = block_decompose(s, j, i, &eji)) != HESSFIT_SUCCESS)
        return st;
    memset(&e, 0, sizeof e);
    e.kind = HESSFIT_TERM_BOND;
    e.atoms[0] = i;
    e.atoms[1] = j;
    e.atoms[2] = -1;
    e.projection[0] = project(&eij, u, abs_l);
    e.projection[1] = project(&eji, u, abs_l);
    e.factor[0] = e.factor[1] = 1.0;
    /* q2mm: scaling * (f_ij + f_ji) / 2 */
    e.k_au = s->options.scaling * (0.5 * (e.projection[0] + e.projection[1]));
    e.value = r;
    set_units(s, &e);
    *out = e;
    return HESSFIT_SUCCESS;
}

/* In-plane unit vector perpendicular to the unit vector ua (centre -> outer atom) in the plane
 * spanned with the unit vector uc: u_N = ua x uc / |ua x uc|, u_P = u_N x ua. Returns 0 when the
 * two are collinear (|ua x uc| < HESSFIT_SEMINARIO_LINEAR_SIN). */
static int in_plane_perpendicular(const double *ua, const double *uc, double *up)
{
    double n[3], nn[3], sin_theta;
    hf_cross3(ua, uc, n);
    sin_theta = hf_norm3(n);
    if (!(sin_theta >= HESSFIT_SEMINARIO_LINEAR_SIN))
        return 0;
    for (int k = 0; k < 3; k++)
        nn[k] = n[k] / sin_theta;
    hf_cross3(nn, ua, n);
    unit3(n, up);
    return 1;
}

/* Allen et al.'s factor for the outer atom a of an angle a-b-c with in-plane perpendicular up:
 * 1 + mean over the other neighbours x of b (x != a, c; not collinear with a-b) of
 * |up . u_PA(a-b-x)|^2. */
static double modified_factor(const hessfit_seminario *s, int a, int b, int c, const double *ua, const double *up)
{
    double sum = 0.0;
    int n = 0;
    for (int t = s->nbr_start[b]; t < s->nbr_start[b + 1]; t++) {
        int x = s->nbr[t];
        double d[3], ux[3], upx[3], r, p;
        int seen = 0;
        if (x == a || x == c)
            continue;
        for (int q = s->nbr_start[b]; q < t; q++) /* a bond listed twice counts once */
            if (s->nbr[q] == x)
                seen = 1;
        if (seen)
            continue;
        for (int k = 0; k < 3; k++)
            d[k] = s->coords[3 * x + k] - s->coords[3 * b + k];
        r = hf_norm3(d);
        if (!(r >= MIN_DISTANCE_A))
            continue;
        unit3(d, ux);
        if (!in_plane_perpendicular(ua, ux, upx))
            continue;
        p = hf_dot3(up, upx);
        sum += p * p;
        n++;
    }
    return n > 0 ? 1.0 + sum / n : 1.0;
}

/* One plane of an angle: the two projections, factors and the series spring constant (Hartree/
 * rad^2, unscaled). Returns 0 when the series combination is singular. */
static int angle_in_plane(const hessfit_seminario *s, int i, int j, int k, const double *ua, const double *uc,
                          const double *upa, const double *upc, double ra_bohr, double rc_bohr,
                          const block_eigen *ea, const block_eigen *ec, double proj[2], double fac[2], double *kth)
{
    const int abs_l = s->options.ts == HESSFIT_SEMINARIO_TS_BLOCK_ABS;
    double a, c;
    proj[0] = project(ea, upa, abs_l);
    proj[1] = project(ec, upc, abs_l);
    fac[0] = fac[1] = 1.0;
    if (s->options.method == HESSFIT_SEMINARIO_MODIFIED) {
        fac[0] = modified_factor(s, i, j, k, ua, upa);
        fac[1] = modified_factor(s, k, j, i, uc, upc);
    }
    /* two springs in series: 1/k = 1/(R_AB^2 k_A / f_A) + 1/(R_CB^2 k_C / f_C) */
    a = ra_bohr * ra_bohr * (proj[0] / fac[0]);
    c = rc_bohr * rc_bohr * (proj[1] / fac[1]);
    if (a == 0.0 || c == 0.0) {
        *kth = 0.0; /* a spring of zero stiffness in series */
        return 1;
    }
    if (1.0 / a + 1.0 / c == 0.0)
        return 0;
    *kth = 1.0 / (1.0 / a + 1.0 / c);
    return 1;
}

hessfit_status hessfit_seminario_angle(const hessfit_seminario *s, int i, int j, int k, hessfit_seminario_estimate *out)
{
    char what[64];
    double da[3], dc[3], ua[3], uc[3], n[3], ra, rc, sin_theta, cos_theta, ra_bohr, rc_bohr;
    double upa[3], upc[3], proj[2], fac[2], kth;
    block_eigen ea, ec;
    hessfit_seminario_estimate e;
    hessfit_status st;

    if (s == NULL || out == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_seminario_angle: %s is NULL", s == NULL ? "estimator" : "out");
    snprintf(what, sizeof what, "angle %d-%d-%d", i + 1, j + 1, k + 1);
    if ((st = check_atom(s, what, i)) != HESSFIT_SUCCESS || (st = check_atom(s, what, j)) != HESSFIT_SUCCESS ||
        (st = check_atom(s, what, k)) != HESSFIT_SUCCESS)
        return st;
    if (i == j || j == k || i == k)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: %s: an atom appears twice", s->name, what);
    for (int q = 0; q < 3; q++) {
        da[q] = s->coords[3 * i + q] - s->coords[3 * j + q];
        dc[q] = s->coords[3 * k + q] - s->coords[3 * j + q];
    }
    ra = hf_norm3(da);
    rc = hf_norm3(dc);
    if (!(ra >= MIN_DISTANCE_A) || !(rc >= MIN_DISTANCE_A))
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: %s: atoms %d and %d coincide (distance %g A)", s->name, what,
                        (ra >= MIN_DISTANCE_A ? k : i) + 1, j + 1, ra >= MIN_DISTANCE_A ? rc : ra);
    unit3(da, ua);
    unit3(dc, uc);
    hf_cross3(ua, uc, n);
    sin_theta = hf_norm3(n);
    cos_theta = hf_dot3(ua, uc);
    ra_bohr = ra / HESSFIT_BOHR_TO_ANGSTROM;
    rc_bohr = rc / HESSFIT_BOHR_TO_ANGSTROM;
    if ((st = block_decompose(s, i, j, &ea)) != HESSFIT_SUCCESS || (st = block_decompose(s, k, j, &ec)) != HESSFIT_SUCCESS)
        return st;

    memset(&e, 0, sizeof e);
    e.kind = HESSFIT_TERM_ANGLE;
    e.atoms[0] = i;
    e.atoms[1] = j;
    e.atoms[2] = k;
    e.value = atan2(sin_theta, cos_theta) * HESSFIT_RAD_TO_DEG;
    if (in_plane_perpendicular(ua, uc, upa)) {
        in_plane_perpendicular(uc, ua, upc);
        if (!angle_in_plane(s, i, j, k, ua, uc, upa, upc, ra_bohr, rc_bohr, &ea, &ec, proj, fac, &kth))
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: %s: singular series combination (projections %g, %g)",
                            s->name, what, proj[0], proj[1]);
        e.projection[0] = proj[0];
        e.projection[1] = proj[1];
        e.factor[0] = fac[0];
        e.factor[1] = fac[1];
    } else {
        /* linear: mean over planes about the axis (period pi in the plane's angle) */
        double e1[3], e2[3], t[3] = {0.0, 0.0, 0.0};
        int m = 0;
        for (int q = 1; q < 3; q++)
            if (fabs(ua[q]) < fabs(ua[m]))
                m = q;
        t[m] = 1.0;
        hf_cross3(ua, t, n);
        unit3(n, e1);
        hf_cross3(ua, e1, e2);
        kth = 0.0;
        for (int p = 0; p < HESSFIT_SEMINARIO_LINEAR_SAMPLES; p++) {
            double phi = HESSFIT_PI * p / HESSFIT_SEMINARIO_LINEAR_SAMPLES, kp;
            for (int q = 0; q < 3; q++)
                upa[q] = cos(phi) * e1[q] + sin(phi) * e2[q];
            if (!angle_in_plane(s, i, j, k, ua, uc, upa, upa, ra_bohr, rc_bohr, &ea, &ec, proj, fac, &kp))
                return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                                "%s: %s (linear): singular series combination in a plane (projections %g, %g)",
                                s->name, what, proj[0], proj[1]);
            kth += kp;
            e.projection[0] += proj[0];
            e.projection[1] += proj[1];
            e.factor[0] += fac[0];
            e.factor[1] += fac[1];
        }
        kth /= HESSFIT_SEMINARIO_LINEAR_SAMPLES;
        e.projection[0] /= HESSFIT_SEMINARIO_LINEAR_SAMPLES;
        e.projection[1] /= HESSFIT_SEMINARIO_LINEAR_SAMPLES;
        e.factor[0] /= HESSFIT_SEMINARIO_LINEAR_SAMPLES;
        e.factor[1] /= HESSFIT_SEMINARIO_LINEAR_SAMPLES;
        e.linear = 1;
    }
    e.k_au = s->options.scaling * kth;
    set_units(s, &e);
    *out = e;
    return HESSFIT_SUCCESS;
}

hessfit_status hessfit_seminario_term(const hessfit_seminario *s, hessfit_term_kind kind, const int *atoms, hessfit_seminario_estimate *out)
{
    if (atoms == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_seminario_term: atoms is NULL");
    if (kind == HESSFIT_TERM_BOND)
        return hessfit_seminario_bond(s, atoms[0], atoms[1], out);
    if (kind == HESSFIT_TERM_ANGLE)
        return hessfit_seminario_angle(s, atoms[0], atoms[1], atoms[2], out);
    return hessfit_error(HESSFIT_ERROR_UNSUPPORTED, "hessfit_seminario_term: Seminario estimates bonds and angles, not %s terms",
                    hessfit_term_kind_name(kind));
}

/* ---- averaging ------------------------------------------------------------------------------ */

/* Instances are grouped by sorting (group, input position) pairs. */
typedef struct group_key {
    int group, index;
} group_key;

static int by_group(const void *pa, const void *pb)
{
    const group_key *a = pa, *b = pb;
    if (a->group != b->group)
        return a->group < b->group ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

static int same_options(const hessfit_seminario_options *a, const hessfit_seminario_options *b)
{
    return a->method == b->method && a->ts == b->ts && a->ts_replacement == b->ts_replacement &&
           a->scaling == b->scaling && a->q2mm_units == b->q2mm_units && a->policy == b->policy;
}

hessfit_status hessfit_seminario_average(hessfit_seminario *const *estimators, int n_estimators,
                               const hessfit_seminario_instance *instances, int n_instances,
                               hessfit_seminario_estimate *estimates, hessfit_seminario_group **groups, int *n_groups)
{
    hessfit_seminario_estimate *est = estimates;
    hessfit_seminario_group *out = NULL;
    group_key *order = NULL;
    int n_out = 0;
    hessfit_status st = HESSFIT_SUCCESS;
    const hessfit_seminario_options *opt;

    if (groups == NULL || n_groups == NULL || estimators == NULL || (instances == NULL && n_instances > 0))
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_seminario_average: %s is NULL",
                        groups == NULL     ? "groups"
                        : n_groups == NULL ? "n_groups"
                        : estimators == NULL ? "estimators"
                                             : "instances");
    *groups = NULL;
    *n_groups = 0;
    if (n_estimators <= 0 || n_instances < 0)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "hessfit_seminario_average: %d estimators, %d instances", n_estimators,
                        n_instances);
    for (int m = 0; m < n_estimators; m++) {
        if (estimators[m] == NULL)
            return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_seminario_average: estimator %d is NULL", m);
        if (!same_options(&estimators[m]->options, &estimators[0]->options))
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                            "hessfit_seminario_average: estimator %d (%s) has other options than estimator 0 (%s)", m,
                            estimators[m]->name, estimators[0]->name);
    }
    opt = &estimators[0]->options;
    if (n_instances == 0)
        return HESSFIT_SUCCESS;
    if (est == NULL)
        est = malloc((size_t)n_instances * sizeof *est);
    order = malloc((size_t)n_instances * sizeof *order);
    out = calloc((size_t)n_instances, sizeof *out); /* at most one group per instance */
    if (est == NULL || order == NULL || out == NULL) {
        st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "hessfit_seminario_average: no memory for %d instances", n_instances);
        goto done;
    }
    for (int t = 0; t < n_instances; t++) {
        const hessfit_seminario_instance *in = &instances[t];
        if (in->molecule < 0 || in->molecule >= n_estimators) {
            st = hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "hessfit_seminario_average: instance %d: molecule %d out of range (%d)",
                          t, in->molecule, n_estimators);
            goto done;
        }
        if (in->group < 0) {
            st = hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "hessfit_seminario_average: instance %d: group %d is negative", t,
                          in->group);
            goto done;
        }
        if (isinf(in->value)) {
            st = hessfit_error(HESSFIT_ERROR_NONFINITE, "hessfit_seminario_average: instance %d: value is %g", t, in->value);
            goto done;
        }
        st = hessfit_seminario_term(estimators[in->molecule], in->kind, in->atoms, &est[t]);
        if (st != HESSFIT_SUCCESS)
            goto done;
        order[t].group = in->group;
        order[t].index = t;
    }
    qsort(order, (size_t)n_instances, sizeof *order, by_group);
    for (int a = 0; a < n_instances;) {
        int b = a;
        hessfit_seminario_group *g = &out[n_out++];
        double sum_k = 0.0, sum_v = 0.0;
        g->group = instances[order[a].index].group;
        g->kind = instances[order[a].index].kind;
        g->k_min = INFINITY;
        g->k_max = -INFINITY;
        for (; b < n_instances && instances[order[b].index].group == g->group; b++) {
            const hessfit_seminario_instance *in = &instances[order[b].index];
            const hessfit_seminario_estimate *e = &est[order[b].index];
            if (in->kind != g->kind) {
                st = hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "hessfit_seminario_average: group %d mixes %s and %s terms",
                              g->group, hessfit_term_kind_name(g->kind), hessfit_term_kind_name(in->kind));
                goto done;
            }
            g->n_instances++;
            sum_v += isnan(in->value) ? e->value : in->value;
            if (e->k_au <= 0.0)
                g->n_nonpositive++;
            if (opt->policy == HESSFIT_SEMINARIO_AVERAGE_ALL || e->k_au > 0.0) {
                sum_k += e->k_au;
                g->n_used++;
            }
            if (e->k < g->k_min)
                g->k_min = e->k;
            if (e->k > g->k_max)
                g->k_max = e->k;
        }
        g->value = sum_v / g->n_instances;
        g->k_au = g->n_used > 0 ? sum_k / g->n_used : NAN;
        g->k = g->k_au * hessfit_seminario_au_to_canonical(g->kind, opt->q2mm_units);
        g->k_mdyn = g->k_au * hessfit_seminario_au_to_mdyn(g->kind, opt->q2mm_units);
        a = b;
    }
done:
    if (est != estimates)
        free(est);
    free(order);
    if (st != HESSFIT_SUCCESS) {
        free(out);
        return st;
    }
    *groups = out;
    *n_groups = n_out;
    return HESSFIT_SUCCESS;
}

int hessfit_seminario_param_marked_opt(const hessfit_forcefield *ff, const hessfit_ff_param *p)
{
    const char *name;
    size_t n;
    if (ff == NULL || p == NULL || p->substructure < 0 || p->substructure >= ff->n_substructures ||
        ff->substructures == NULL)
        return 0;
    name = ff->substructures[p->substructure].name;
    n = strlen(name);
    while (n > 0 && isspace((unsigned char)name[n - 1]))
        n--;
    return n >= 3 && strncmp(name + n - 3, "OPT", 3) == 0 && (n == 3 || isspace((unsigned char)name[n - 4]));
}

/* The parameter read from that line of the file, or NULL. */
static hessfit_ff_param *param_at_line(hessfit_forcefield *ff, int line)
{
    for (int q = 0; q < ff->n_params; q++)
        if (ff->params[q].line == line)
            return &ff->params[q];
    return NULL;
}

hessfit_status hessfit_seminario_apply(hessfit_forcefield *ff, const hessfit_seminario_group *groups, int n_groups, unsigned flags,
                             int *n_changed, int *n_skipped)
{
    const char *path;
    int changed = 0, skipped = 0;
    if (ff == NULL || (groups == NULL && n_groups > 0))
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_seminario_apply: %s is NULL", ff == NULL ? "ff" : "groups");
    if (flags & ~HESSFIT_SEMINARIO_APPLY_OPT_ONLY)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "hessfit_seminario_apply: unknown flags 0x%x", flags);
    path = ff->path != NULL ? ff->path : "force field";
    /* check every group first: the force field changes only when all can be applied */
    for (int pass = 0; pass < 2; pass++) {
        for (int g = 0; g < n_groups; g++) {
            const hessfit_seminario_group *gr = &groups[g];
            hessfit_ff_param *p = gr->group > 0 ? param_at_line(ff, gr->group) : NULL;
            if (p == NULL || ((flags & HESSFIT_SEMINARIO_APPLY_OPT_ONLY) && !hessfit_seminario_param_marked_opt(ff, p))) {
                skipped += pass;
                continue;
            }
            if (pass == 0) {
                if ((int)p->kind != (int)gr->kind || p->n_values < 2)
                    return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                                    "%s:%d: a %s parameter, but the Seminario group of that line has %s terms", path,
                                    gr->group,
                                    p->kind < HESSFIT_PARAM_VDW ? hessfit_term_kind_name((hessfit_term_kind)p->kind) : "non-bonded",
                                    hessfit_term_kind_name(gr->kind));
                if (!isfinite(gr->value) || (gr->n_used > 0 && !isfinite(gr->k)))
                    return hessfit_error(HESSFIT_ERROR_NONFINITE, "%s:%d: Seminario group value %g, k %g is not finite", path,
                                    gr->group, gr->value, gr->k);
            } else {
                int was_changed = p->values[1] != gr->value;
                p->values[1] = gr->value;
                if (gr->n_used > 0) {
                    was_changed |= p->values[0] != gr->k;
                    p->values[0] = gr->k;
                }
                changed += was_changed;
            }
        }
    }
    if (n_changed != NULL)
        *n_changed = changed;
    if (n_skipped != NULL)
        *n_skipped = skipped;
    return HESSFIT_SUCCESS;
}
