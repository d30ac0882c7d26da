/*
 * The fit model's MM3* form: MacroModel's MM3* energy of each molecule (hessfit_mm3_build, every
 * interaction with its constants and their sources) as HessianForce terms.
 *
 * Slots. A constant read from a fitted parameter (HESSFIT_MM3_FROM_PARAM: constant =
 * values[v] * scale) becomes a slot factor * values[v], the factor taking the constant to the
 * term's OpenMM units (hf_model_slot_scaled: one (param, value) may feed several slots, e.g. a
 * shared substructure torsion, or the r0 of a stretch in its stretch-bends). Constants of other
 * sources (k_bb, K_ts, special pairs) are constant slots. The pair constants are derived
 * (hf_model_mm3_update_derived; the chain rule in hf_model_mm3_derived_gradient): q_a = formal +
 * sum +-mu / (4.803 r0) over the atom's bond moments, with mu and r0 the stretch parameters'
 * current values, and each pair's qq = qq_factor q_a q_b; R = R*_a + R*_b and eps = sqrt(eps_a eps_b)
 * from the atoms' vdW parameters. So bond moments and vdW values can be free, with no slot of
 * their own.
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
 *   hydrogen bond  F_HBD (C' / r_A^12 - D' / r_A^10)  hydrogen bond: C = F_HBD C' 1e-12, D = F_HBD D' 1e-10
 * and the reduced hydrogens as reduced particles. A pair with a reduced hydrogen is an MM3*
 * switched pair whose switch points are the hydrogens' true positions (anchor the partner, scale
 * 1/f): S on the true distance, MacroModel's (docs/mm3.md); the other pairs are MM3* pairs.
 */
#include "hf_model_internal.h"

#include "hessfit_mm3.h"
#include "hessfit_units.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static hessfit_status add_charges(hessfit_model *m, const hessfit_forcefield *ff, const hessfit_mm3_model *x, int mi,
                                  int first)
{
    hf_model_mm3_derived *c = &m->mm3;
    hessfit_status st;
    for (int a = 0; a < x->n_atoms; a++) {
        const hessfit_mm3_source *r = &x->atoms[a].src_r_star, *e = &x->atoms[a].src_eps;
        c->formal[first + a] = x->atoms[a].formal_charge;
        /* the vdW line's parameter: its R* and eps are the fit's values (the RH atom's is the Z0 line's) */
        const int param = r->origin == HESSFIT_MM3_FROM_ROW ? ff->fld_rows[r->index].param : -1;
        if (param < 0 || e->origin != HESSFIT_MM3_FROM_ROW || ff->fld_rows[e->index].param != param ||
            m->params[param].kind != HESSFIT_PARAM_VDW || m->params[param].n_values < 2 ||
            m->params[param].values[0] != x->atoms[a].r_star || m->params[param].values[1] != x->atoms[a].eps)
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                                 "fit model: atom %d: its van der Waals line (%s:%d) is not a vdW parameter with R* %g "
                                 "and eps %g",
                                 a + 1, ff->path != NULL ? ff->path : "", r->line, x->atoms[a].r_star, x->atoms[a].eps);
        c->vdw_param[first + a] = param;
        m->param_uses[param]++;
    }
    /* each oriented stretch (zero moments too): + on its plus atom, - on the other (hessfit_mm3.h),
     * q = mu / (4.803 r0); an unoriented one (a zero moment) is listed, so freeing its moment fails */
    for (int i = 0; i < x->n_stretches; i++) {
        const hessfit_mm3_stretch *s = &x->stretches[i];
        const int p = s->src_r0.index;
        if (s->src_r0.origin != HESSFIT_MM3_FROM_PARAM || s->src_r0.scale != 1.0 || s->src_mu.origin != HESSFIT_MM3_FROM_PARAM ||
            s->src_mu.index != p || s->src_mu.value != 2 || s->src_mu.scale != 1.0)
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                                 "fit model: stretch %d-%d: its bond moment and r0 are not values 3 and 2 of its "
                                 "force-field line",
                                 s->atoms[0] + 1, s->atoms[1] + 1);
        if (s->plus < 0) {
            if ((st = grow((void **)&c->unoriented, &c->cap_unoriented, c->n_unoriented + 1, sizeof *c->unoriented,
                           "stretches")) != HESSFIT_SUCCESS)
                return st;
            hf_model_unoriented *u = &c->unoriented[c->n_unoriented++];
            u->param = p;
            u->mol = mi;
            u->atoms[0] = first + s->atoms[0];
            u->atoms[1] = first + s->atoms[1];
            continue;
        }
        if ((st = grow((void **)&c->moments, &c->cap_moments, c->n_moments + 2, sizeof *c->moments, "bond moments")) !=
            HESSFIT_SUCCESS)
            return st;
        for (int e = 0; e < 2; e++) {
            hf_model_moment *mo = &c->moments[c->n_moments++];
            mo->atom = first + s->atoms[e];
            mo->param = p;
            mo->sign = s->atoms[e] == s->plus ? 1.0 : -1.0;
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
    m->mm3.qq_factor = F->ele / (10.0 * HESSFIT_ONE_4PI_EPS0);
    m->mm3.vdw_factor = F->vdw;
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
        if (e->src_k_sb.origin != HESSFIT_MM3_FROM_PARAM)
            continue; /* MacroModel's 0 without a line (a non-carbon centre, an order-0 bond) */
        /* a line's k_sb of 0 (H1*C0*H1) keeps its term, so that it can be freed */
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
        const double k = HESSFIT_MM3_BEND_BEND_UNIT * F->bb * e->k_bb[0] * e->k_bb[1] * HESSFIT_RAD_TO_DEG * HESSFIT_RAD_TO_DEG;
        if ((st = hf_model_constant_slot(m, k, &s[0])) == HESSFIT_SUCCESS &&
            (st = source_slot(m, &e->src_theta0[0], e->theta0[0], deg, &s[1])) == HESSFIT_SUCCESS &&
            (st = source_slot(m, &e->src_theta0[1], e->theta0[1], deg, &s[2])) == HESSFIT_SUCCESS)
            st = append(m, HF_MODEL_TERM_MM3_BEND_BEND, mi, first, atoms, 5, s, 3, 0, 1.0, 1.0);
    }
    for (int i = 0; i < x.n_torsions && st == HESSFIT_SUCCESS; i++) {
        const hessfit_mm3_torsion *e = &x.torsions[i];
        const int p = e->src_v[0].index;
        if (e->src_v[0].origin != HESSFIT_MM3_FROM_PARAM) {
            st = hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "fit model: molecule %d: torsion %d-%d-%d-%d has no .fld line",
                               mi + 1, e->atoms[0] + 1, e->atoms[1] + 1, e->atoms[2] + 1, e->atoms[3] + 1);
            break;
        }
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
        if ((st = source_slot(m, &e->src_k_ts, e->k_ts, 10.0 * F->ts * HESSFIT_MM3_TORSION_STRETCH_UNIT, &s[0])) ==
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
        st = add_charges(m, ff, &x, mi, first);
    /* per atom: the anchor and scale of its switch point (a reduced hydrogen: its partner, 1/f) */
    int *anchor = st == HESSFIT_SUCCESS ? malloc((size_t)(mol->n_atoms > 0 ? mol->n_atoms : 1) * sizeof *anchor) : NULL;
    double *switch_scale = anchor ? malloc((size_t)(mol->n_atoms > 0 ? mol->n_atoms : 1) * sizeof *switch_scale) : NULL;
    if (st == HESSFIT_SUCCESS && switch_scale == NULL)
        st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "fit model: out of memory for the pairs' switch points");
    for (int a = 0; a < mol->n_atoms && st == HESSFIT_SUCCESS; a++) {
        anchor[a] = a;
        switch_scale[a] = 1.0;
    }
    for (int i = 0; i < x.n_reduced && st == HESSFIT_SUCCESS; i++) {
        anchor[x.reduced[i].atom] = x.reduced[i].partner;
        switch_scale[x.reduced[i].atom] = 1.0 / x.reduced[i].f;
    }
    for (int i = 0; i < x.n_pairs && st == HESSFIT_SUCCESS; i++) {
        const hessfit_mm3_pair *e = &x.pairs[i];
        hf_model_mm3_derived *c = &m->mm3;
        hf_model_mm3_pair *q;
        const int special = e->src_r.origin != HESSFIT_MM3_DERIVED;
        if ((st = grow((void **)&c->pairs, &c->cap_pairs, c->n_pairs + 1, sizeof *c->pairs, "pairs")) != HESSFIT_SUCCESS)
            break;
        q = &c->pairs[c->n_pairs];
        q->a = first + e->atoms[0];
        q->b = first + e->atoms[1];
        q->r_slot = q->eps_slot = -1;
        /* R and eps: constants for a special pair (its own line), else derived from the atoms' vdW values */
        if (special) {
            if ((st = hf_model_constant_slot(m, e->r * HESSFIT_ANGSTROM_TO_NM, &s[0])) != HESSFIT_SUCCESS ||
                (st = hf_model_constant_slot(m, e->eps * F->vdw, &s[1])) != HESSFIT_SUCCESS)
                break;
        } else if ((st = hf_model_derived_slot(m, e->r * HESSFIT_ANGSTROM_TO_NM, &s[0])) != HESSFIT_SUCCESS ||
                   (st = hf_model_derived_slot(m, e->eps * F->vdw, &s[1])) != HESSFIT_SUCCESS) {
            break;
        } else {
            q->r_slot = s[0];
            q->eps_slot = s[1];
        }
        if ((st = hf_model_derived_slot(m, c->qq_factor * e->qq, &s[2])) != HESSFIT_SUCCESS)
            break;
        q->qq_slot = s[2];
        c->n_pairs++;
        const int a = e->atoms[0], b = e->atoms[1], atoms[4] = {a, b, anchor[a], anchor[b]};
        st = append(m, HF_MODEL_TERM_MM3_PAIR, mi, first, atoms, 4, s, 3, 0, switch_scale[a], switch_scale[b]);
    }
    /* F_HBD (C' / r_A^12 - D' / r_A^10) = C / r_nm^12 - D / r_nm^10 with C = F_HBD C' 1e-12, D = F_HBD D' 1e-10 */
    for (int i = 0; i < x.n_hbonds && st == HESSFIT_SUCCESS; i++) {
        const hessfit_mm3_hbond *e = &x.hbonds[i];
        if (!e->listed)
            continue;
        if ((st = source_slot(m, &e->src_c, e->c, F->hbd * 1e-12, &s[0])) == HESSFIT_SUCCESS &&
            (st = source_slot(m, &e->src_d, e->d, F->hbd * 1e-10, &s[1])) == HESSFIT_SUCCESS)
            st = append(m, HF_MODEL_TERM_HBOND, mi, first, e->atoms, 2, s, 2, 0, 1.0, 1.0);
    }
    free(anchor);
    free(switch_scale);
    hessfit_mm3_model_free(&x);
    return st;
}

void hf_model_mm3_update_derived(hessfit_model *m)
{
    hf_model_mm3_derived *c = &m->mm3;
    if (c->charge == NULL)
        return;
    memcpy(c->charge, c->formal, (size_t)m->n_particles * sizeof *c->charge);
    for (int i = 0; i < c->n_moments; i++) {
        const double *v = m->params[c->moments[i].param].values;
        c->charge[c->moments[i].atom] += c->moments[i].sign * v[2] / HESSFIT_MM3_DEBYE_PER_E_A / v[1];
    }
    for (int i = 0; i < c->n_pairs; i++) {
        const hf_model_mm3_pair *q = &c->pairs[i];
        m->table[q->qq_slot] = c->qq_factor * c->charge[q->a] * c->charge[q->b];
        if (q->r_slot < 0)
            continue;
        const double *va = m->params[c->vdw_param[q->a]].values, *vb = m->params[c->vdw_param[q->b]].values;
        m->table[q->r_slot] = HESSFIT_ANGSTROM_TO_NM * (va[0] + vb[0]);
        m->table[q->eps_slot] = c->vdw_factor * sqrt(va[1] * vb[1]);
    }
}

/* d sqrt(x y) / dx = y / (2 sqrt(x y)); 0 where y is 0, infinite where only x is (hf_terms.c's rule) */
static double dsqrt_product(double x, double y)
{
    const double r = sqrt(x * y);
    return r > 0.0 ? y / (2.0 * r) : (x == 0.0 && y != 0.0 ? INFINITY : 0.0);
}

hessfit_status hf_model_mm3_derived_value(const hessfit_model *m, int p, int v, int *derived)
{
    const hf_model_mm3_derived *c = &m->mm3;
    const hessfit_ff_param *q = &m->params[p];
    *derived = 0;
    if (m->opt.form != HESSFIT_MODEL_FORM_MM3 || c->charge == NULL)
        return HESSFIT_SUCCESS;
    if (q->kind == HESSFIT_PARAM_VDW && v < 2) {
        *derived = 1;
        return HESSFIT_SUCCESS;
    }
    if (q->kind != HESSFIT_PARAM_BOND || v != 2)
        return HESSFIT_SUCCESS;
    for (int i = 0; i < c->n_unoriented; i++)
        if (c->unoriented[i].param == p) {
            const hf_model_unoriented *u = &c->unoriented[i];
            const int first = m->mol_first[u->mol];
            char name[160];
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                                 "fit model: free parameter %s: its bond moment cannot be free: the line does not say "
                                 "which atom of bond %d-%d (molecule %d) is its first column, so MacroModel would not "
                                 "charge that bond (a moment is + on the atom of the line's first column)",
                                 hf_model_param_name(m, p, name, sizeof name), u->atoms[0] - first + 1,
                                 u->atoms[1] - first + 1, u->mol + 1);
        }
    *derived = 1;
    return HESSFIT_SUCCESS;
}

/*
 * The derived slots' chain rule: through the charges, dL/dq_a = sum over a's pairs dL/dqq qq_factor
 * q_b, and per moment term (q_a += sign mu_p / (4.803 r0_p)) dq_a/dmu_p = sign / (4.803 r0_p) and
 * dq_a/dr0_p = -sign mu_p / (4.803 r0_p^2); through the vdW constants, dR/dR*_a = 0.1 and
 * deps/deps_a = vdw_factor eps_b / (2 sqrt(eps_a eps_b)). Then d_free[i] += that for the free
 * values (stretch r0 and mu, vdW R*, vdW eps) they belong to. dq is per particle, dp per parameter
 * (d/d(value 0), d/d(value 1); a stretch's r0 at 2 p, mu at 2 p + 1).
 */

/* Whether any free value is one the derived slots follow. */
static int any_derived_free(const hessfit_model *m)
{
    int any = 0;
    for (int i = 0; i < m->n_free && !any && m->mm3.charge != NULL; i++) {
        const hessfit_param_kind k = m->params[m->free_param[i]].kind;
        any = k == HESSFIT_PARAM_VDW || (k == HESSFIT_PARAM_BOND && m->free_value[i] >= 1 && m->mm3.n_moments > 0);
    }
    return any;
}

void hf_model_mm3_mark_gradient_slots(const hessfit_model *m, unsigned char *wanted)
{
    if (!any_derived_free(m))
        return;
    int vdw = 0, charges = 0; /* R, eps follow the vdW values; the charges the bond moments and r0 */
    for (int i = 0; i < m->n_free; i++) {
        const hessfit_param_kind k = m->params[m->free_param[i]].kind;
        vdw |= k == HESSFIT_PARAM_VDW;
        charges |= k == HESSFIT_PARAM_BOND && m->free_value[i] >= 1;
    }
    for (int i = 0; i < m->mm3.n_pairs; i++) {
        const hf_model_mm3_pair *q = &m->mm3.pairs[i];
        if (charges && q->qq_slot >= 0)
            wanted[q->qq_slot] = 1;
        if (vdw && q->r_slot >= 0)
            wanted[q->r_slot] = wanted[q->eps_slot] = 1;
    }
}

/* Pair q's part, given dL/dqq, dL/dR, dL/deps of its slots. */
static void pair_chain(const hessfit_model *m, const hf_model_mm3_pair *q, double d_qq, double d_r, double d_eps,
                       double *dq, double *dp)
{
    const hf_model_mm3_derived *c = &m->mm3;
    const double g = d_qq * c->qq_factor;
    dq[q->a] += g * c->charge[q->b];
    dq[q->b] += g * c->charge[q->a];
    if (q->r_slot < 0)
        return;
    const int pa = c->vdw_param[q->a], pb = c->vdw_param[q->b];
    const double ea = m->params[pa].values[1], eb = m->params[pb].values[1];
    const double gr = d_r * HESSFIT_ANGSTROM_TO_NM, ge = d_eps * c->vdw_factor;
    dp[2 * (size_t)pa] += gr;
    dp[2 * (size_t)pb] += gr;
    if (ge != 0.0) { /* a zero weight adds exactly 0, even where the root's derivative is infinite */
        dp[2 * (size_t)pa + 1] += ge * dsqrt_product(ea, eb);
        dp[2 * (size_t)pb + 1] += ge * dsqrt_product(eb, ea);
    }
}

/* Moment term mo's part (the stretch's r0 and mu) from dq at its atom. */
static void moment_chain(const hessfit_model *m, const hf_model_moment *mo, const double *dq, double *dp)
{
    const double *v = m->params[mo->param].values, c_mu = mo->sign / HESSFIT_MM3_DEBYE_PER_E_A;
    dp[2 * (size_t)mo->param] -= dq[mo->atom] * (c_mu * v[2]) / (v[1] * v[1]);
    dp[2 * (size_t)mo->param + 1] += dq[mo->atom] * c_mu / v[1];
}

/* d_free[i] += dp of the free values the derived slots follow. */
static void free_chain(const hessfit_model *m, const double *dp, double *d_free)
{
    for (int i = 0; i < m->n_free; i++) {
        const int p = m->free_param[i], v = m->free_value[i];
        if (m->params[p].kind == HESSFIT_PARAM_VDW && v < 2)
            d_free[i] += dp[2 * (size_t)p + (size_t)v];
        else if (m->params[p].kind == HESSFIT_PARAM_BOND && (v == 1 || v == 2))
            d_free[i] += dp[2 * (size_t)p + (size_t)(v - 1)];
    }
}

hessfit_status hf_model_mm3_derived_gradient(const hessfit_model *m, const double *d_slot, double *d_free)
{
    const hf_model_mm3_derived *c = &m->mm3;
    if (!any_derived_free(m))
        return HESSFIT_SUCCESS;
    double *dq = calloc((size_t)m->n_particles, sizeof *dq);
    double *dp = calloc(2 * (size_t)m->n_params, sizeof *dp);
    if (dq == NULL || dp == NULL) {
        free(dq);
        free(dp);
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "fit model: no memory for the derived slots' chain rule");
    }
    for (int i = 0; i < c->n_pairs; i++) {
        const hf_model_mm3_pair *q = &c->pairs[i];
        pair_chain(m, q, d_slot[q->qq_slot], q->r_slot < 0 ? 0.0 : d_slot[q->r_slot],
                   q->r_slot < 0 ? 0.0 : d_slot[q->eps_slot], dq, dp);
    }
    for (int i = 0; i < c->n_moments; i++)
        moment_chain(m, &c->moments[i], dq, dp);
    free_chain(m, dp, d_free);
    free(dq);
    free(dp);
    return HESSFIT_SUCCESS;
}

hessfit_status hf_model_mm3_chain_init(const hessfit_model *m, hf_model_mm3_chain *ch)
{
    const hf_model_mm3_derived *c = &m->mm3;
    memset(ch, 0, sizeof *ch);
    ch->any = any_derived_free(m);
    if (!ch->any)
        return HESSFIT_SUCCESS;
    const int ns = m->n_slots, np = m->n_particles;
    ch->slot_begin = calloc((size_t)ns + 1, sizeof *ch->slot_begin);
    ch->slot_pairs = malloc((3 * (size_t)c->n_pairs + 1) * sizeof *ch->slot_pairs);
    ch->atom_begin = calloc((size_t)np + 1, sizeof *ch->atom_begin);
    ch->atom_moments = malloc(((size_t)c->n_moments + 1) * sizeof *ch->atom_moments);
    ch->dq = calloc((size_t)np + 1, sizeof *ch->dq);
    ch->dp = calloc(2 * (size_t)m->n_params + 1, sizeof *ch->dp);
    ch->touched = malloc(((size_t)np + 1) * sizeof *ch->touched);
    ch->seen = calloc((size_t)np + 1, 1);
    if (!ch->slot_begin || !ch->slot_pairs || !ch->atom_begin || !ch->atom_moments || !ch->dq || !ch->dp ||
        !ch->touched || !ch->seen) {
        hf_model_mm3_chain_free(ch);
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "fit model: no memory for the derived slots' chain rule");
    }
    /* counting sorts: per slot, the pairs whose qq, R or eps it is (a pair listed once per slot) */
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < c->n_pairs; i++) {
            const hf_model_mm3_pair *q = &c->pairs[i];
            const int s3[3] = {q->qq_slot, q->r_slot, q->eps_slot};
            for (int k = 0; k < 3; k++) {
                if (s3[k] < 0 || (k > 0 && s3[k] == s3[0]) || (k == 2 && s3[2] == s3[1]))
                    continue;
                if (pass == 0)
                    ch->slot_begin[s3[k] + 1]++;
                else
                    ch->slot_pairs[ch->slot_begin[s3[k]]++] = i;
            }
        }
        if (pass == 0)
            for (int s = 0; s < ns; s++)
                ch->slot_begin[s + 1] += ch->slot_begin[s];
        else /* the fill moved each begin to the next slot's: shift back */
            for (int s = ns; s > 0; s--)
                ch->slot_begin[s] = ch->slot_begin[s - 1];
    }
    ch->slot_begin[0] = 0;
    for (int pass = 0; pass < 2; pass++) { /* per particle, its moment terms in their order */
        for (int i = 0; i < c->n_moments; i++) {
            const int a = c->moments[i].atom;
            if (pass == 0)
                ch->atom_begin[a + 1]++;
            else
                ch->atom_moments[ch->atom_begin[a]++] = i;
        }
        if (pass == 0)
            for (int a = 0; a < np; a++)
                ch->atom_begin[a + 1] += ch->atom_begin[a];
        else
            for (int a = np; a > 0; a--)
                ch->atom_begin[a] = ch->atom_begin[a - 1];
    }
    ch->atom_begin[0] = 0;
    return HESSFIT_SUCCESS;
}

/* The unit d_slot = e_s through the pairs of s alone; dq, dp (zero before) are zero again after. */
void hf_model_mm3_chain_row(const hessfit_model *m, hf_model_mm3_chain *ch, int s, double *d_free)
{
    const hf_model_mm3_derived *c = &m->mm3;
    if (!ch->any || ch->slot_begin[s] == ch->slot_begin[s + 1])
        return;
    int n_touched = 0;
    for (int k = ch->slot_begin[s]; k < ch->slot_begin[s + 1]; k++) {
        const hf_model_mm3_pair *q = &c->pairs[ch->slot_pairs[k]];
        pair_chain(m, q, q->qq_slot == s ? 1.0 : 0.0, q->r_slot == s ? 1.0 : 0.0, q->eps_slot == s ? 1.0 : 0.0, ch->dq,
                   ch->dp);
        const int ab[2] = {q->a, q->b};
        for (int e = 0; e < 2; e++)
            if (!ch->seen[ab[e]]) {
                ch->seen[ab[e]] = 1;
                ch->touched[n_touched++] = ab[e];
            }
    }
    for (int t = 0; t < n_touched; t++)
        for (int k = ch->atom_begin[ch->touched[t]]; k < ch->atom_begin[ch->touched[t] + 1]; k++)
            moment_chain(m, &c->moments[ch->atom_moments[k]], ch->dq, ch->dp);
    free_chain(m, ch->dp, d_free);
    for (int t = 0; t < n_touched; t++) { /* back to zero: the touched particles, their moments' and vdW parameters */
        const int a = ch->touched[t];
        for (int k = ch->atom_begin[a]; k < ch->atom_begin[a + 1]; k++) {
            const int p = c->moments[ch->atom_moments[k]].param;
            ch->dp[2 * (size_t)p] = ch->dp[2 * (size_t)p + 1] = 0.0;
        }
        if (c->vdw_param[a] >= 0)
            ch->dp[2 * (size_t)c->vdw_param[a]] = ch->dp[2 * (size_t)c->vdw_param[a] + 1] = 0.0;
        ch->dq[a] = 0.0;
        ch->seen[a] = 0;
    }
}

void hf_model_mm3_chain_free(hf_model_mm3_chain *ch)
{
    free(ch->slot_begin);
    free(ch->slot_pairs);
    free(ch->atom_begin);
    free(ch->atom_moments);
    free(ch->dq);
    free(ch->dp);
    free(ch->touched);
    free(ch->seen);
    memset(ch, 0, sizeof *ch);
}

void hf_model_mm3_free(hessfit_model *m)
{
    free(m->mm3.formal);
    free(m->mm3.charge);
    free(m->mm3.vdw_param);
    free(m->mm3.moments);
    free(m->mm3.unoriented);
    free(m->mm3.pairs);
    free(m->reduced);
    free(m->constant_hash);
}
