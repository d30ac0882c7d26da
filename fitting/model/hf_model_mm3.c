/*
 * The fit model's MM3* form: MacroModel's MM3* energy of each molecule (hessfit_mm3_build, every
 * interaction with its constants and their sources) as HessianForce terms.
 *
 * Slots. A constant read from a fitted parameter (HESSFIT_MM3_FROM_PARAM: constant =
 * values[v] * scale) becomes a slot factor * values[v], the factor taking the constant to the
 * term's OpenMM units (hf_model_slot_scaled: one (param, value) may feed several slots, e.g. a
 * shared substructure torsion). Constants of other sources (k_sb, k_bb, K_ts, vdW) are constant
 * slots. The pair charges are derived: q_a = formal + sum c / r0 over the atom's bond moments, with
 * r0 the stretch parameters' current values, and each pair's slot qq = pre q_a q_b
 * (hf_model_mm3_update_charges; the chain rule in hf_model_mm3_charge_gradient).
 *
 * Energies, MacroModel's (hessfit_mm3.h, F the .fld header factors, kJ/mol) against HessianForce's
 * (nm, rad):
 *   stretch        1/2 F_STR k dr_A^2 (...)         MM3 bond, k_slot = 1/2 F_STR k * 100, r0 nm, scale 1/f
 *   bend           1/2 F_BND k dt^2 (...)           MM3 angle, k_slot = 1/2 F_BND k, theta0 rad
 *   stretch-bend   F_SB k_sb (dr1_A + dr2_A) dt     k_slot = 10 F_SB k_sb (per nm rad)
 *   bend-bend      -0.02191418 F_BB k1 k2 D1 D2     k_slot = that constant (180/pi)^2 (per rad^2)
 *   torsion        F_TOR V_n (1 +- cos n phi)       periodic torsions, k = F_TOR V_n, phase 0 or pi
 *   torsion-str.   F_TS (-11.995/2) K dr_A (1 + cos 3 phi)   k_slot = 10 F_TS (-5.9975) K (per nm)
 *   out-of-plane   F_IMP k (1 - cos 2 phi)          periodic improper n = 2, phase pi, k = F_IMP k
 *   vdW + charge   F_VDW eps S B(R) + F_ELE qq / r_A     MM3 pair: R nm, eps kJ/mol,
 *                                                   qq_slot = F_ELE / (10 ONE_4PI_EPS0) q_a q_b
 * and the reduced hydrogens as reduced particles. The one known difference from MacroModel: the
 * plugin's pair switch S is on the reduced distance, MacroModel's on the true one (docs/mm3.md).
 */
#include "hf_model_internal.h"

#include "hessfit_mm3.h"
#include "hessfit_units.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* MM3's torsion-stretch constant (Tinker's strtorunit -5.9975 = -11.995 / 2). */
#define HF_MM3_TORSION_STRETCH_UNIT (-5.9975)
/* MM3's bend-bend constant per degree^2 (0.5 * 601.99392 (pi/180)^2 / 4.184 with F_BB = 4.184). */
#define HF_MM3_BEND_BEND_UNIT (-0.02191418)

/* The slot of one constant: factor * (its source's value), where factor takes MacroModel's unit
 * to the term's. */
static hessfit_status source_slot(hessfit_model *m, const hessfit_mm3_source *src, double constant, double factor,
                                  int *slot)
{
    if (src->origin == HESSFIT_MM3_FROM_PARAM) {
        m->param_uses[src->index]++;
        return hf_model_slot_scaled(m, src->index, src->value, factor * src->scale, slot);
    }
    return hf_model_constant_slot(m, factor * constant, slot);
}

static hessfit_status append(hessfit_model *m, hf_model_term_kind kind, int mol, int first, const int *atoms, int n_atoms,
                             const int *slots, int n_slots, int periodicity, double scale0, double scale1)
{
    hf_model_term t;
    memset(&t, 0, sizeof t);
    t.kind = kind;
    t.mol = mol;
    for (int k = 0; k < HF_MODEL_TERM_PARTICLES; k++)
        t.particles[k] = k < n_atoms ? first + atoms[k] : -1;
    for (int k = 0; k < HF_MODEL_TERM_SLOTS; k++)
        t.slots[k] = k < n_slots ? slots[k] : -1;
    t.periodicity = periodicity;
    t.scale[0] = scale0;
    t.scale[1] = scale1;
    return hf_model_append_term(m, &t);
}

static hessfit_status grow(void **p, int *cap, int need, size_t size, const char *what)
{
    if (need <= *cap)
        return HESSFIT_SUCCESS;
    int c = *cap > 0 ? *cap : 64;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, (size_t)c * size);
    if (q == NULL)
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "fit model: no memory for %d %s", c, what);
    *p = q;
    *cap = c;
    return HESSFIT_SUCCESS;
}

/* The torsion parameter's three triples must be MM3's {V1/2, 0, 1}, {V2/2, 180, 2}, {V3/2, 0, 3}. */
static hessfit_status check_mm3_triples(const hessfit_model *m, int p)
{
    const hessfit_ff_param *q = &m->params[p];
    static const double phase[3] = {0.0, 180.0, 0.0};
    for (int v = 0; v < 3; v++)
        if (q->n_values < 9 || q->values[3 * v + 1] != phase[v] || q->values[3 * v + 2] != v + 1) {
            char name[160];
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                                 "fit model: %s: not an MM3* torsion (V1 V2 V3 as the triples {V/2, 0, 1}, {V/2, 180, "
                                 "2}, {V/2, 0, 3})",
                                 hf_model_param_name(m, p, name, sizeof name));
        }
    return HESSFIT_SUCCESS;
}

static hessfit_status add_charges(hessfit_model *m, const hessfit_mm3_model *x, int first)
{
    hf_model_charges *c = &m->charges;
    hessfit_status st;
    for (int a = 0; a < x->n_atoms; a++)
        c->formal[first + a] = x->atoms[a].formal_charge;
    /* each stretch with a moment: + on atoms[0], - on atoms[1] (hessfit_mm3.h), q = mu / (4.803 r0) */
    for (int i = 0; i < x->n_stretches; i++) {
        const hessfit_mm3_stretch *s = &x->stretches[i];
        if (s->mu == 0.0)
            continue;
        if (s->src_r0.origin != HESSFIT_MM3_FROM_PARAM || s->src_r0.scale != 1.0)
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                                 "fit model: stretch %d-%d: its bond moment's r0 is not a force-field value",
                                 s->atoms[0] + 1, s->atoms[1] + 1);
        if ((st = grow((void **)&c->moments, &c->cap_moments, c->n_moments + 2, sizeof *c->moments, "bond moments")) !=
            HESSFIT_SUCCESS)
            return st;
        for (int e = 0; e < 2; e++) {
            hf_model_moment *mo = &c->moments[c->n_moments++];
            mo->atom = first + s->atoms[e];
            mo->param = s->src_r0.index;
            mo->c = (e == 0 ? 1.0 : -1.0) * s->mu / 4.803;
        }
    }
    return HESSFIT_SUCCESS;
}

hessfit_status hf_model_mm3_build_molecule(hessfit_model *m, const hessfit_forcefield *ff, const hessfit_molecule *mol,
                                           const hessfit_typed_molecule *typed, int mi, int first)
{
    hessfit_mm3_model x;
    hessfit_status st = hessfit_mm3_build(mol, typed, ff, &x);
    if (st != HESSFIT_SUCCESS)
        return hessfit_error(st, "fit model: molecule %d: %s", mi + 1, hessfit_last_error());
    const hessfit_mm3_factors *F = &x.factor;
    /* F_ELE qq / r_A = ONE_4PI_EPS0 (F_ELE / (10 ONE_4PI_EPS0)) qq / r_nm; one .fld, one factor */
    m->charges.pre = F->ele / (10.0 * HESSFIT_ONE_4PI_EPS0);
    const double deg = HESSFIT_DEG_TO_RAD;
    int s[HF_MODEL_TERM_SLOTS];

    for (int i = 0; i < x.n_reduced && st == HESSFIT_SUCCESS; i++) {
        if ((st = grow((void **)&m->reduced, &m->cap_reduced, m->n_reduced + 1, sizeof *m->reduced, "reduced particles")) !=
            HESSFIT_SUCCESS)
            break;
        m->reduced[m->n_reduced].particle = first + x.reduced[i].atom;
        m->reduced[m->n_reduced].partner = first + x.reduced[i].partner;
        m->reduced[m->n_reduced].factor = x.reduced[i].f;
        m->n_reduced++;
    }
    for (int i = 0; i < x.n_stretches && st == HESSFIT_SUCCESS; i++) {
        const hessfit_mm3_stretch *e = &x.stretches[i];
        if ((st = source_slot(m, &e->src_k, e->k, 0.5 * F->str * 100.0, &s[0])) == HESSFIT_SUCCESS &&
            (st = source_slot(m, &e->src_r0, e->r0, HESSFIT_ANGSTROM_TO_NM, &s[1])) == HESSFIT_SUCCESS)
            st = append(m, HF_MODEL_TERM_MM3_BOND, mi, first, e->atoms, 2, s, 2, 0, 1.0 / e->f, 1.0);
    }
    for (int i = 0; i < x.n_bends && st == HESSFIT_SUCCESS; i++) {
        const hessfit_mm3_bend *e = &x.bends[i];
        if ((st = source_slot(m, &e->src_k, e->k, 0.5 * F->bnd, &s[0])) == HESSFIT_SUCCESS &&
            (st = source_slot(m, &e->src_theta0, e->theta0, deg, &s[1])) == HESSFIT_SUCCESS)
            st = append(m, HF_MODEL_TERM_MM3_ANGLE, mi, first, e->atoms, 3, s, 2, 0, 1.0, 1.0);
    }
    for (int i = 0; i < x.n_stretch_bends && st == HESSFIT_SUCCESS; i++) {
        const hessfit_mm3_stretch_bend *e = &x.stretch_bends[i];
        if (e->k_sb == 0.0)
            continue; /* MacroModel's 0 (no S-B line, a non-carbon centre, an order-0 bond) */
        if ((st = source_slot(m, &e->src_k_sb, e->k_sb, 10.0 * F->sb, &s[0])) == HESSFIT_SUCCESS &&
            (st = source_slot(m, &e->src_r0[0], e->r0[0], HESSFIT_ANGSTROM_TO_NM, &s[1])) == HESSFIT_SUCCESS &&
            (st = source_slot(m, &e->src_r0[1], e->r0[1], HESSFIT_ANGSTROM_TO_NM, &s[2])) == HESSFIT_SUCCESS &&
            (st = source_slot(m, &e->src_theta0, e->theta0, deg, &s[3])) == HESSFIT_SUCCESS)
            st = append(m, HF_MODEL_TERM_MM3_STRETCH_BEND, mi, first, e->atoms, 3, s, 4, 0, 1.0 / e->f[0], 1.0 / e->f[1]);
    }
    for (int i = 0; i < x.n_bend_bends && st == HESSFIT_SUCCESS; i++) {
        const hessfit_mm3_bend_bend *e = &x.bend_bends[i];
        /* atoms: centre, ends of angle 1, ends of angle 2 -> p1, centre, p3, p4, p5 */
        const int atoms[5] = {e->atoms[1], e->atoms[0], e->atoms[2], e->atoms[3], e->atoms[4]};
        const double k = HF_MM3_BEND_BEND_UNIT * F->bb * e->k_bb[0] * e->k_bb[1] * HESSFIT_RAD_TO_DEG * HESSFIT_RAD_TO_DEG;
        if ((st = hf_model_constant_slot(m, k, &s[0])) == HESSFIT_SUCCESS &&
            (st = source_slot(m, &e->src_theta0[0], e->theta0[0], deg, &s[1])) == HESSFIT_SUCCESS &&
            (st = source_slot(m, &e->src_theta0[1], e->theta0[1], deg, &s[2])) == HESSFIT_SUCCESS)
            st = append(m, HF_MODEL_TERM_MM3_BEND_BEND, mi, first, atoms, 5, s, 3, 0, 1.0, 1.0);
    }
    for (int i = 0; i < x.n_torsions && st == HESSFIT_SUCCESS; i++) {
        const hessfit_mm3_torsion *e = &x.torsions[i];
        const int p = e->src_v[0].index;
        if ((st = check_mm3_triples(m, p)) != HESSFIT_SUCCESS)
            break;
        /* all three terms, also where V is 0: freeing a V then needs no new term */
        for (int n = 0; n < 3 && st == HESSFIT_SUCCESS; n++)
            if ((st = source_slot(m, &e->src_v[n], e->v[n], F->tor, &s[0])) == HESSFIT_SUCCESS &&
                (st = hf_model_slot_scaled(m, p, 3 * n + 1, deg, &s[1])) == HESSFIT_SUCCESS)
                st = append(m, HF_MODEL_TERM_TORSION, mi, first, e->atoms, 4, s, 2, n + 1, 1.0, 1.0);
    }
    for (int i = 0; i < x.n_torsion_stretches && st == HESSFIT_SUCCESS; i++) {
        const hessfit_mm3_torsion_stretch *e = &x.torsion_stretches[i];
        if (e->k_ts == 0.0)
            continue;
        if ((st = source_slot(m, &e->src_k_ts, e->k_ts, 10.0 * F->ts * HF_MM3_TORSION_STRETCH_UNIT, &s[0])) ==
                HESSFIT_SUCCESS &&
            (st = source_slot(m, &e->src_r0, e->r0, HESSFIT_ANGSTROM_TO_NM, &s[1])) == HESSFIT_SUCCESS)
            st = append(m, HF_MODEL_TERM_MM3_TORSION_STRETCH, mi, first, e->atoms, 4, s, 2, 0, 1.0 / e->f, 1.0);
    }
    for (int i = 0; i < x.n_out_of_plane && st == HESSFIT_SUCCESS; i++) {
        const hessfit_mm3_out_of_plane *e = &x.out_of_plane[i];
        /* k (1 - cos 2 phi) = k (1 + cos(2 phi - pi)) */
        if ((st = source_slot(m, &e->src_k, e->k, F->imp, &s[0])) == HESSFIT_SUCCESS &&
            (st = hf_model_constant_slot(m, HESSFIT_PI, &s[1])) == HESSFIT_SUCCESS)
            st = append(m, HF_MODEL_TERM_PERIODIC_IMPROPER, mi, first, e->atoms, 4, s, 2, 2, 1.0, 1.0);
    }
    if (st == HESSFIT_SUCCESS)
        st = add_charges(m, &x, first);
    for (int i = 0; i < x.n_pairs && st == HESSFIT_SUCCESS; i++) {
        const hessfit_mm3_pair *e = &x.pairs[i];
        hf_model_charges *c = &m->charges;
        if ((st = hf_model_constant_slot(m, e->r * HESSFIT_ANGSTROM_TO_NM, &s[0])) != HESSFIT_SUCCESS ||
            (st = hf_model_constant_slot(m, e->eps * F->vdw, &s[1])) != HESSFIT_SUCCESS ||
            (st = hf_model_derived_slot(m, c->pre * e->qq, &s[2])) != HESSFIT_SUCCESS ||
            (st = grow((void **)&c->pairs, &c->cap_pairs, c->n_pairs + 1, sizeof *c->pairs, "charge pairs")) !=
                HESSFIT_SUCCESS)
            break;
        c->pairs[c->n_pairs].slot = s[2];
        c->pairs[c->n_pairs].a = first + e->atoms[0];
        c->pairs[c->n_pairs].b = first + e->atoms[1];
        c->n_pairs++;
        st = append(m, HF_MODEL_TERM_MM3_PAIR, mi, first, e->atoms, 2, s, 3, 0, 1.0, 1.0);
    }
    hessfit_mm3_model_free(&x);
    return st;
}

void hf_model_mm3_update_charges(hessfit_model *m)
{
    hf_model_charges *c = &m->charges;
    if (c->charge == NULL)
        return;
    memcpy(c->charge, c->formal, (size_t)m->n_particles * sizeof *c->charge);
    for (int i = 0; i < c->n_moments; i++)
        c->charge[c->moments[i].atom] += c->moments[i].c / m->params[c->moments[i].param].values[1];
    for (int i = 0; i < c->n_pairs; i++)
        m->table[c->pairs[i].slot] = c->pre * c->charge[c->pairs[i].a] * c->charge[c->pairs[i].b];
}

/*
 * dL/dr0_p for the stretch parameters p behind the bond moments, through the pair charges:
 * dL/dq_a = sum over a's pairs dL/dqq pre q_b, and dq_a/dr0_p = -c / r0_p^2 per moment term; then
 * d_free[i] += dL/dr0_p for every free r0 (value 1) of such a p.
 */
hessfit_status hf_model_mm3_charge_gradient(const hessfit_model *m, const double *d_slot, double *d_free)
{
    const hf_model_charges *c = &m->charges;
    int any = 0;
    for (int i = 0; i < m->n_free && !any && c->n_moments > 0; i++)
        any = m->free_value[i] == 1 && m->params[m->free_param[i]].kind == HESSFIT_PARAM_BOND;
    if (!any)
        return HESSFIT_SUCCESS;
    double *dq = calloc((size_t)m->n_particles, sizeof *dq), *dr0 = calloc((size_t)m->n_params, sizeof *dr0);
    if (dq == NULL || dr0 == NULL) {
        free(dq);
        free(dr0);
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "fit model: no memory for the charges' chain rule");
    }
    for (int i = 0; i < c->n_pairs; i++) {
        const double g = d_slot[c->pairs[i].slot] * c->pre;
        dq[c->pairs[i].a] += g * c->charge[c->pairs[i].b];
        dq[c->pairs[i].b] += g * c->charge[c->pairs[i].a];
    }
    for (int i = 0; i < c->n_moments; i++) {
        const double r0 = m->params[c->moments[i].param].values[1];
        dr0[c->moments[i].param] -= dq[c->moments[i].atom] * c->moments[i].c / (r0 * r0);
    }
    for (int i = 0; i < m->n_free; i++)
        if (m->free_value[i] == 1 && m->params[m->free_param[i]].kind == HESSFIT_PARAM_BOND)
            d_free[i] += dr0[m->free_param[i]];
    free(dq);
    free(dr0);
    return HESSFIT_SUCCESS;
}

void hf_model_mm3_free(hessfit_model *m)
{
    free(m->charges.formal);
    free(m->charges.charge);
    free(m->charges.moments);
    free(m->charges.pairs);
    free(m->reduced);
    free(m->constant_hash);
}
