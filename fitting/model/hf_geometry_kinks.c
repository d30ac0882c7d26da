/*
 * The corners of the MM3* form's energy that a minimum can sit on (hf_objective_internal.h): the
 * van der Waals switch S of an MM3* pair is continuous at its inner edge, r_s = 0.6 nm (r_s the
 * switch distance: MacroModel's true distance of the two atoms, the points y the model's term
 * gives, hf_model_mm3.c), but S' jumps there from 0 to -2 on / (off^2 - on^2), so dE/dr_s jumps by
 * j = eps S'(on+) B(r') (hessfit_mm3_vdw_switch_kink, B at the pair's reduced distance r'),
 * positive for every real pair: near the edge E = E_in + j (r_s - on)_+ + O((r_s - on)^2), a
 * convex corner. The minimum of a molecule may sit on it (rh-enamide structure 9 did with the
 * switch on r', its C22-C43 pair at 0.6 nm to 1e-8 nm: the Newton steps cross it back and forth and
 * the gradient never falls below 0.01 kJ/mol/nm), and there it is the minimum of E under the
 * constraint r_s = on with a multiplier in the corner's subgradient: g_in + lambda grad r_s = 0,
 * lambda in [0, j] (on the switched side, whose gradient already holds j grad r_s, lambda in
 * [-j, 0]). hf_objective_geometry.c keeps such corners as equality constraints of its Newton steps
 * and of its adjoint solve. r_s is linear in the true positions through y = x'_u + s (x'_a - x'_u)
 * and the reduction x' = f x + (1 - f) x_partner (a reduced hydrogen's y is its own x).
 *
 * The outer edge (0.8 nm) is a concave corner (the jump is -j there) and holds no minimum: the
 * steps cross it.
 */
#include "hf_model_internal.h"
#include "hf_objective_internal.h"

#include "hessfit_mm3.h"
#include "hessfit_units.h"

#include <math.h>
#include <stdlib.h>

#define HF_KINK_EDGE 0.6 /* nm: the plugin's HF_MM3_SWITCH_ON, MacroModel's 6 A */

struct hf_kink_pairs {
    int n_pairs;
    int *term;              /* the model term of each MM3* pair, by molecule */
    int *mol_start;         /* per molecule of [mol_lo, mol_hi] + 1: its pairs */
    int mol_lo;
    int *partner;           /* per System particle: the reduced particle's partner, -1 none */
    double *factor;         /* per System particle: its reduction factor (1 when not reduced) */
};

void hf_kink_pairs_free(hf_kink_pairs *kp)
{
    if (kp == NULL)
        return;
    free(kp->term);
    free(kp->mol_start);
    free(kp->partner);
    free(kp->factor);
    free(kp);
}

hessfit_status hf_kink_pairs_build(const hessfit_model *m, int mol_lo, int mol_hi, hf_kink_pairs **out)
{
    hf_kink_pairs *kp = calloc(1, sizeof *kp);
    *out = NULL;
    if (kp == NULL)
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "objective: geometry: no memory for the switch corners");
    kp->mol_lo = mol_lo;
    kp->mol_start = calloc((size_t)(mol_hi - mol_lo + 1), sizeof *kp->mol_start);
    kp->partner = malloc((size_t)m->n_particles * sizeof *kp->partner);
    kp->factor = malloc((size_t)m->n_particles * sizeof *kp->factor);
    int n = 0;
    for (int t = 0; t < m->n_terms; t++)
        n += m->terms[t].kind == HF_MODEL_TERM_MM3_PAIR && m->terms[t].mol >= mol_lo && m->terms[t].mol < mol_hi;
    kp->term = malloc((size_t)(n > 0 ? n : 1) * sizeof *kp->term);
    if (kp->mol_start == NULL || kp->partner == NULL || kp->factor == NULL || kp->term == NULL) {
        hf_kink_pairs_free(kp);
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "objective: geometry: no memory for %d MM3* pairs", n);
    }
    for (int i = 0; i < m->n_particles; i++) {
        kp->partner[i] = -1;
        kp->factor[i] = 1.0;
    }
    for (int r = 0; r < m->n_reduced; r++) {
        kp->partner[m->reduced[r].particle] = m->reduced[r].partner;
        kp->factor[m->reduced[r].particle] = m->reduced[r].factor;
    }
    /* terms are appended molecule by molecule, so one pass keeps them grouped */
    for (int mol = mol_lo; mol < mol_hi; mol++) {
        kp->mol_start[mol - mol_lo] = kp->n_pairs;
        for (int t = 0; t < m->n_terms; t++)
            if (m->terms[t].kind == HF_MODEL_TERM_MM3_PAIR && m->terms[t].mol == mol)
                kp->term[kp->n_pairs++] = t;
    }
    kp->mol_start[mol_hi - mol_lo] = kp->n_pairs;
    *out = kp;
    return HESSFIT_SUCCESS;
}

void hf_kink_pairs_range(const hf_kink_pairs *kp, int mol, int *begin, int *end)
{
    *begin = kp->mol_start[mol - kp->mol_lo];
    *end = kp->mol_start[mol - kp->mol_lo + 1];
}

/* x' of System particle i (positions x indexed by System particle - first_particle). */
static void reduced_position(const hf_kink_pairs *kp, const double *x, int first_particle, int i, double out[3])
{
    const double *xi = x + 3 * (size_t)(i - first_particle);
    const int p = kp->partner[i];
    if (p < 0) {
        for (int c = 0; c < 3; c++)
            out[c] = xi[c];
        return;
    }
    const double f = kp->factor[i], *xp = x + 3 * (size_t)(p - first_particle);
    for (int c = 0; c < 3; c++)
        out[c] = xp[c] + f * (xi[c] - xp[c]);
}

/* Adds w x'_i to the linear combination (atom, coef) of true positions, merging equal atoms. */
static void add_reduced(const hf_kink_pairs *kp, int i, double w, int mol_first, hf_kink *k)
{
    const int p = kp->partner[i], atoms[2] = {i, p};
    const double f = kp->factor[i], coefs[2] = {w * f, w * (1.0 - f)};
    for (int e = 0; e < (p >= 0 ? 2 : 1); e++) {
        int j = 0;
        while (j < k->n && k->atom[j] != atoms[e] - mol_first)
            j++;
        if (j == k->n) {
            k->atom[k->n] = atoms[e] - mol_first;
            k->coef[k->n++] = 0.0;
        }
        k->coef[j] += coefs[e];
    }
}

void hf_kink_measure(const hf_kink_pairs *kp, const hessfit_model *m, int pair, const double *x, int first_particle,
                     hf_kink *k)
{
    const hf_model_term *t = &m->terms[kp->term[pair]];
    const int mol_first = m->mol_first[t->mol];
    /* the switch points y_e = x'_u + s (x'_p - x'_u) of the ends p (particles 0, 1; anchors u 2, 3) */
    double xp[2][3], xu[2][3], y[2][3], r2 = 0.0, rp2 = 0.0;
    k->n = 0;
    for (int e = 0; e < 2; e++) {
        const double s = t->scale[e], sign = e == 0 ? 1.0 : -1.0;
        reduced_position(kp, x, first_particle, t->particles[e], xp[e]);
        reduced_position(kp, x, first_particle, t->particles[2 + e], xu[e]);
        for (int c = 0; c < 3; c++)
            y[e][c] = xu[e][c] + s * (xp[e][c] - xu[e][c]);
        /* dr_s/dx: +u through y_0, -u through y_1, each through the reduction */
        add_reduced(kp, t->particles[e], sign * s, mol_first, k);
        add_reduced(kp, t->particles[2 + e], sign * (1.0 - s), mol_first, k);
    }
    for (int c = 0; c < 3; c++) {
        k->u[c] = y[0][c] - y[1][c];
        r2 += k->u[c] * k->u[c];
        rp2 += (xp[0][c] - xp[1][c]) * (xp[0][c] - xp[1][c]);
    }
    k->pair = pair;
    k->r = sqrt(r2);
    for (int c = 0; c < 3; c++)
        k->u[c] /= k->r;
    k->c = k->r - HF_KINK_EDGE;
    k->right = k->r > HF_KINK_EDGE; /* the plugin switches for r_s > on */
    /* slots R (nm) and eps (kJ/mol), B at r' (A); the jump per A becomes per nm */
    k->jump = hessfit_mm3_vdw_switch_kink(m->table[t->slots[0]] * HESSFIT_NM_TO_ANGSTROM, m->table[t->slots[1]],
                                          sqrt(rp2) * HESSFIT_NM_TO_ANGSTROM) *
              HESSFIT_NM_TO_ANGSTROM;
}

double hf_kink_dot(const hf_kink *k, const double *v)
{
    double s = 0.0;
    for (int i = 0; i < k->n; i++)
        s += k->coef[i] * (k->u[0] * v[3 * k->atom[i]] + k->u[1] * v[3 * k->atom[i] + 1] + k->u[2] * v[3 * k->atom[i] + 2]);
    return s;
}

void hf_kink_row(const hf_kink *k, int dim, double *row)
{
    for (int i = 0; i < dim; i++)
        row[i] = 0.0;
    for (int i = 0; i < k->n; i++)
        for (int c = 0; c < 3; c++)
            row[3 * k->atom[i] + c] += k->coef[i] * k->u[c];
}

/* m += w d2r_s/dx2 = w sum_ij coef_i coef_j (I - u u^T) / r_s over the blocks (atom_i, atom_j). */
void hf_kink_add_curvature(const hf_kink *k, double w, int dim, double *m)
{
    double blk[9];
    for (int c = 0; c < 3; c++)
        for (int d = 0; d < 3; d++)
            blk[3 * c + d] = w * ((c == d ? 1.0 : 0.0) - k->u[c] * k->u[d]) / k->r;
    for (int i = 0; i < k->n; i++)
        for (int j = 0; j < k->n; j++)
            for (int c = 0; c < 3; c++)
                for (int d = 0; d < 3; d++)
                    m[(size_t)(3 * k->atom[i] + c) * dim + 3 * k->atom[j] + d] += k->coef[i] * k->coef[j] * blk[3 * c + d];
}

double hf_kink_violation(const hf_kink *k, double lambda)
{
    const double lo = k->right ? -k->jump : 0.0, hi = k->right ? 0.0 : k->jump;
    return lambda < lo ? lo - lambda : lambda > hi ? lambda - hi : 0.0;
}
