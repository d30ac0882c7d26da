/*
 * The targets of one molecule for the objective kernel, from its QM Hessian (hessfit_objective.h
 * says what each kind compares and with which weights). The QM Hessian goes through the same
 * vibrational analysis as everything else (hessfit_vib.h, LAPACKE): unprojected for the q2mm
 * frequencies and the eigenmatrix, projected for the overlap pairing. Unit conversions come from
 * hessfit_units.h: targets in kJ/mol/nm^2 (per amu), weights divided by the same factor, so that
 * every residual is q2mm's, in Hartree/Bohr^2 (per amu).
 */
#include "hf_objective_internal.h"
#include "hessfit_units.h"
#include "hessfit_vib.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void hf_objective_targets_free(hf_objective_targets *t)
{
    if (t == NULL)
        return;
    free(t->freq_target);
    free(t->freq_weight);
    free(t->freq_vectors);
    free(t->eig_vectors);
    free(t->eig_target);
    free(t->eig_weight);
    free(t->hess_target);
    free(t->hess_weight);
    memset(t, 0, sizeof *t);
}

static int ascending(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The QM spectrum in both forms the kinds need. */
typedef struct {
    int dim, n_external;
    double *unprojected;   /* dim frequencies, ascending */
    double *modes;         /* unprojected mass-weighted modes, rows (eigenmatrix only) */
    double *projected;     /* dim frequencies of P A P, ascending */
    double *proj_modes;    /* its modes, rows */
    unsigned char *external; /* per projected mode: 1 for a rigid-body direction */
    int reaction;          /* projected mode of the reaction coordinate, -1 for a minimum */
} qm_spectrum;

static void spectrum_free(qm_spectrum *s)
{
    free(s->unprojected);
    free(s->modes);
    free(s->projected);
    free(s->proj_modes);
    free(s->external);
}

static hessfit_status analyse(const hessfit_molecule *qm, int mol, const double *masses, int need_modes, qm_spectrum *s)
{
    const int n = qm->n_atoms, dim = 3 * n;
    const double f_au = hessfit_frequency_factor_hartree_bohr2_amu();
    const size_t d = (size_t)dim, d2 = d * d;
    hessfit_status st;
    double *basis = malloc(6 * d * sizeof *basis);
    memset(s, 0, sizeof *s);
    s->dim = dim;
    s->reaction = -1;
    s->unprojected = malloc(d * sizeof(double));
    s->projected = malloc(d * sizeof(double));
    s->proj_modes = malloc(d2 * sizeof(double));
    s->external = calloc(d, 1);
    s->modes = need_modes ? malloc(d2 * sizeof(double)) : NULL;
    if (basis == NULL || !s->unprojected || !s->projected || !s->proj_modes || !s->external || (need_modes && !s->modes)) {
        st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "objective: molecule %d: no memory for its vibrational analysis", mol + 1);
        goto done;
    }
    if ((st = hessfit_vib_analyse(qm->hessian, masses, NULL, n, f_au, 0, s->unprojected, s->modes, NULL)) != HESSFIT_SUCCESS ||
        (st = hessfit_vib_analyse(qm->hessian, masses, qm->coords, n, f_au, HESSFIT_VIB_PROJECT_EXTERNAL, s->projected,
                             s->proj_modes, &s->n_external)) != HESSFIT_SUCCESS ||
        (st = hessfit_vib_external_basis(masses, qm->coords, n, basis, &s->n_external)) != HESSFIT_SUCCESS) {
        st = hessfit_error(st, "objective: molecule %d: QM vibrational analysis: %s", mol + 1, hessfit_last_error());
        goto done;
    }
    /* the rigid-body modes of the projected analysis: those lying in the span of the basis */
    int n_ext = 0;
    for (int j = 0; j < dim; j++) {
        double weight = 0.0;
        for (int r = 0; r < s->n_external; r++) {
            double dot = 0.0;
            for (int i = 0; i < dim; i++)
                dot += basis[(size_t)r * d + i] * s->proj_modes[(size_t)j * d + i];
            weight += dot * dot;
        }
        s->external[j] = weight > 0.5;
        n_ext += s->external[j];
    }
    if (n_ext != s->n_external) {
        st = hessfit_error(HESSFIT_ERROR_LAPACK, "objective: molecule %d: %d projected QM modes lie in the %d-dimensional "
                                       "rigid-body space (a vibration of zero frequency?)",
                      mol + 1, n_ext, s->n_external);
        goto done;
    }
    for (int j = 0; j < dim; j++)
        if (!s->external[j]) {
            if (s->projected[j] < 0.0)
                s->reaction = j; /* ascending: the first vibration is the most negative */
            break;
        }
    st = HESSFIT_SUCCESS;
done:
    free(basis);
    if (st != HESSFIT_SUCCESS)
        spectrum_free(s);
    return st;
}

/* q2mm's frequencies: the unprojected QM frequencies above the threshold, ascending. */
static hessfit_status q2mm_frequencies(const qm_spectrum *s, int mol, const hessfit_objective_options *o,
                                  hf_objective_targets *t)
{
    const double f_au = hessfit_frequency_factor_hartree_bohr2_amu();
    double *all = malloc((size_t)s->dim * sizeof *all);
    if (all == NULL)
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "objective: molecule %d: no memory", mol + 1);
    memcpy(all, s->unprojected, (size_t)s->dim * sizeof *all);
    if (s->reaction >= 0 && o->ts == HESSFIT_OBJ_TS_REPLACE) /* the unprojected spectrum's most negative */
        all[0] = hessfit_eigenvalue_to_cm1(o->ts_replace_eigenvalue, f_au);
    qsort(all, (size_t)s->dim, sizeof *all, ascending);
    int n = 0;
    for (int j = 0; j < s->dim; j++)
        if (all[j] > o->frequency_threshold)
            all[n++] = all[j];
    if (n == 0) {
        free(all);
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "objective: molecule %d: no QM frequency above the threshold %g cm^-1",
                        mol + 1, o->frequency_threshold);
    }
    t->pairing = HESSFIT_PAIR_BY_POSITION;
    t->project = 0;
    t->threshold = o->frequency_threshold;
    t->n_freq = n;
    t->freq_target = all;
    t->freq_weight = malloc((size_t)n * sizeof(double));
    if (t->freq_weight == NULL)
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "objective: molecule %d: no memory", mol + 1);
    for (int k = 0; k < n; k++)
        t->freq_weight[k] = o->frequency_weight;
    return HESSFIT_SUCCESS;
}

/* Every projected QM vibration with its mode, for the overlap pairing. */
static hessfit_status overlap_frequencies(const qm_spectrum *s, int mol, const hessfit_objective_options *o,
                                     hf_objective_targets *t)
{
    const size_t d = (size_t)s->dim;
    const int n = s->dim - s->n_external;
    t->pairing = HESSFIT_PAIR_BY_OVERLAP;
    t->project = 1;
    t->threshold = 0.0;
    t->n_freq = n;
    t->freq_target = malloc((size_t)n * sizeof(double));
    t->freq_weight = malloc((size_t)n * sizeof(double));
    t->freq_vectors = malloc((size_t)n * d * sizeof(double));
    if (!t->freq_target || !t->freq_weight || !t->freq_vectors)
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "objective: molecule %d: no memory", mol + 1);
    int k = 0;
    for (int j = 0; j < s->dim; j++) {
        if (s->external[j])
            continue;
        t->freq_target[k] = s->projected[j];
        t->freq_weight[k] = o->frequency_weight;
        if (j == s->reaction) {
            if (o->ts == HESSFIT_OBJ_TS_SKIP)
                t->freq_weight[k] = 0.0;
            else if (o->ts == HESSFIT_OBJ_TS_REPLACE)
                t->freq_target[k] = hessfit_eigenvalue_to_cm1(o->ts_replace_eigenvalue, hessfit_frequency_factor_hartree_bohr2_amu());
        }
        memcpy(t->freq_vectors + (size_t)k * d, s->proj_modes + (size_t)j * d, d * sizeof(double));
        k++;
    }
    return HESSFIT_SUCCESS;
}

/* q2mm's eigenmatrix data: the unprojected QM modes, diagonal = the QM eigenvalues. */
static hessfit_status eigenmatrix(const qm_spectrum *s, int mol, const hessfit_objective_options *o, hf_objective_targets *t)
{
    const int dim = s->dim;
    const size_t d = (size_t)dim, d2 = d * d;
    const double f_au = hessfit_frequency_factor_hartree_bohr2_amu(), to_kj = HESSFIT_HARTREE_PER_BOHR2_TO_KJ_PER_MOL_PER_NM2;
    unsigned char *excluded = calloc(d, 1);
    double *lambda = malloc(d * sizeof *lambda);
    t->n_eig = dim;
    t->eig_vectors = malloc(d2 * sizeof(double));
    t->eig_target = calloc(d2, sizeof(double));
    t->eig_weight = calloc(d2, sizeof(double));
    if (!excluded || !lambda || !t->eig_vectors || !t->eig_target || !t->eig_weight) {
        free(excluded);
        free(lambda);
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "objective: molecule %d: no memory", mol + 1);
    }
    memcpy(t->eig_vectors, s->modes, d2 * sizeof(double));
    for (int a = 0; a < dim; a++)
        lambda[a] = hessfit_cm1_to_eigenvalue(s->unprojected[a], f_au); /* Hartree/Bohr^2/amu */
    /* the reaction coordinate is the first (most negative) unprojected mode */
    const int reaction = s->reaction >= 0 ? 0 : -1;
    if (reaction == 0) {
        if (o->ts == HESSFIT_OBJ_TS_SKIP)
            excluded[0] = 1;
        else if (o->ts == HESSFIT_OBJ_TS_REPLACE)
            lambda[0] = o->ts_replace_eigenvalue;
    }
    /* the rigid-body modes: the n_external of smallest |eigenvalue| besides the reaction coordinate */
    for (int r = 0; r < s->n_external; r++) {
        int best = -1;
        for (int a = 0; a < dim; a++)
            if (a != reaction && !excluded[a] && (best < 0 || fabs(lambda[a]) < fabs(lambda[best])))
                best = a;
        if (best >= 0)
            excluded[best] = 1;
    }
    for (int a = 0; a < dim; a++) {
        t->eig_target[(size_t)a * d + a] = lambda[a] * to_kj;
        const double w = excluded[a] ? o->eig_i : lambda[a] < o->eig_threshold ? o->eig_d_low : o->eig_d_high;
        t->eig_weight[(size_t)a * d + a] = w / to_kj;
        for (int b = 0; b < a; b++)
            t->eig_weight[(size_t)a * d + b] =
                (o->eigenmatrix_diagonal_only || excluded[a] || excluded[b]) ? 0.0 : o->eig_o / to_kj;
    }
    free(excluded);
    free(lambda);
    return HESSFIT_SUCCESS;
}

/* The QM Hessian's elements, q2mm's weights. */
static hessfit_status hessian_elements(const hessfit_molecule *qm, int mol, const hessfit_objective_options *o,
                                  hf_objective_targets *t)
{
    const size_t d = 3 * (size_t)qm->n_atoms, d2 = d * d;
    const double to_kj = HESSFIT_HARTREE_PER_BOHR2_TO_KJ_PER_MOL_PER_NM2;
    t->hessian = 1;
    t->hess_target = malloc(d2 * sizeof(double));
    t->hess_weight = malloc(d2 * sizeof(double));
    if (!t->hess_target || !t->hess_weight)
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "objective: molecule %d: no memory", mol + 1);
    for (size_t i = 0; i < d; i++)
        for (size_t j = 0; j < d; j++) {
            t->hess_target[i * d + j] = qm->hessian[i * d + j] * to_kj;
            t->hess_weight[i * d + j] = (i == j ? o->hessian_diagonal_weight : o->hessian_offdiagonal_weight) / to_kj;
        }
    return HESSFIT_SUCCESS;
}

hessfit_status hf_objective_targets_build(const hessfit_molecule *qm, int mol, const double *masses,
                                     const hessfit_objective_options *o, hf_objective_targets *t)
{
    qm_spectrum s;
    hessfit_status st;
    memset(t, 0, sizeof *t);
    t->n_atoms = qm->n_atoms;
    t->pairing = HESSFIT_NO_FREQUENCIES;
    if (o->frequencies == HESSFIT_OBJ_FREQUENCIES_NONE && !o->eigenmatrix) {
        return o->hessian ? hessian_elements(qm, mol, o, t) : HESSFIT_SUCCESS;
    }
    if ((st = analyse(qm, mol, masses, o->eigenmatrix, &s)) != HESSFIT_SUCCESS)
        return st;
    t->transition_state = s.reaction >= 0;
    if (o->frequencies == HESSFIT_OBJ_FREQUENCIES_Q2MM)
        st = q2mm_frequencies(&s, mol, o, t);
    else if (o->frequencies == HESSFIT_OBJ_FREQUENCIES_OVERLAP)
        st = overlap_frequencies(&s, mol, o, t);
    if (st == HESSFIT_SUCCESS && o->eigenmatrix)
        st = eigenmatrix(&s, mol, o, t);
    if (st == HESSFIT_SUCCESS && o->hessian)
        st = hessian_elements(qm, mol, o, t);
    spectrum_free(&s);
    if (st != HESSFIT_SUCCESS)
        hf_objective_targets_free(t);
    return st;
}
