/*
 * The fit model: a typed training set as one HessianForce in one OpenMM Context
 * (hessfit_model.h). This file checks the input and turns molecules, typed terms and force-field
 * parameters into particles, slots and terms; hf_model_evaluator.c builds the OpenMM objects.
 */
#define _POSIX_C_SOURCE 200809L
#include "hf_model_internal.h"

#include "hessfit_units.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Far beyond any training set, small enough that every count and offset below stays exact. */
#define HF_MODEL_MAX_PARTICLES 10000000
#define HF_MODEL_MAX_MOLECULE_ATOMS 50000

hessfit_model_options hessfit_model_default_options(void)
{
    hessfit_model_options o;
    o.form = HESSFIT_MODEL_FORM_HARMONIC;
    o.platform = "Reference";
    o.precision = NULL;
    o.device_index = -1;
    o.masses = HESSFIT_MASS_MONOISOTOPIC;
    o.nonbonded = 0;
    o.combining = HESSFIT_COMBINE_LORENTZ_BERTHELOT;
    o.coulomb14_scale = 1.0;
    o.lj14_scale = 1.0;
    return o;
}

hessfit_model_options hessfit_model_get_options(const hessfit_model *model)
{
    return model != NULL ? model->opt : hessfit_model_default_options();
}

hessfit_status hf_model_hessfit_error(hessfit_status st, const char *what)
{
    return hessfit_error(st, "fit model: %s: %s: %s", what, hessfit_status_string(st), hessfit_last_error());
}

const char *hf_model_param_name(const hessfit_model *m, int p, char *buf, size_t cap)
{
    const hessfit_ff_param *q = &m->params[p];
    int n = snprintf(buf, cap, "%s:%d (%s", m->ff_path, q->line, hessfit_param_kind_name(q->kind));
    for (int k = 0; k < q->n_types && k < 4 && n >= 0 && (size_t)n < cap; k++)
        n += snprintf(buf + n, cap - (size_t)n, " %s", q->types[k]);
    if (n >= 0 && (size_t)n < cap)
        snprintf(buf + n, cap - (size_t)n, "%s)", q->substructure >= 0 ? ", substructure" : "");
    return buf;
}

int hf_model_value_factor(const hessfit_ff_param *p, int v, double *factor)
{
    if (v < 0 || v >= p->n_values)
        return 0;
    switch (p->kind) {
    case HESSFIT_PARAM_BOND: /* v 2: an .fld's bond moment (D), which only the MM3* form's charges use */
        *factor = v == 0 ? HESSFIT_KCAL_PER_MOL_PER_A2_TO_KJ_PER_MOL_PER_NM2 : v == 1 ? HESSFIT_ANGSTROM_TO_NM : 1.0;
        return v < 3;
    case HESSFIT_PARAM_ANGLE:
        *factor = v == 0 ? HESSFIT_KCAL_PER_MOL_PER_RAD2_TO_KJ_PER_MOL_PER_RAD2 : HESSFIT_DEG_TO_RAD;
        return v < 2;
    case HESSFIT_PARAM_IMPROPER:
        if (p->improper_form == HESSFIT_IMPROPER_HARMONIC) {
            *factor = HESSFIT_KCAL_PER_MOL_PER_RAD2_TO_KJ_PER_MOL_PER_RAD2;
            return v == 0;
        }
        /* Fourier triples, as torsions */
        /* fall through */
    case HESSFIT_PARAM_TORSION:
        if (v % 3 == 2)
            return 0; /* periodicity */
        *factor = v % 3 == 0 ? HESSFIT_KCAL_TO_KJ : HESSFIT_DEG_TO_RAD;
        return 1;
    case HESSFIT_PARAM_VDW:
        *factor = v == 0 ? HESSFIT_RSTAR_A_TO_LJ_SIGMA_NM : HESSFIT_KCAL_TO_KJ;
        return v < 2;
    case HESSFIT_PARAM_STRETCH_BEND: /* k_sb, mdyn/rad: only the MM3* form has the term, with its F_SB */
        *factor = 1.0;
        return v == 0;
    default:
        return 0;
    }
}

static hessfit_status add_slot(hessfit_model *m, int param, int value, double factor, double slot_value, int *slot)
{
    if (m->n_slots == m->cap_slots) {
        int cap = m->cap_slots > 0 ? 2 * m->cap_slots : 64;
        hf_model_slot *s = realloc(m->slots, (size_t)cap * sizeof *s);
        if (s == NULL)
            return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "fit model: no memory for %d slots", cap);
        m->slots = s;
        double *t = realloc(m->table, (size_t)cap * sizeof *t);
        if (t == NULL)
            return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "fit model: no memory for %d slots", cap);
        m->table = t;
        m->cap_slots = cap;
    }
    m->slots[m->n_slots].param = param;
    m->slots[m->n_slots].value = value;
    m->slots[m->n_slots].factor = factor;
    m->slots[m->n_slots].next = -1;
    m->table[m->n_slots] = slot_value;
    *slot = m->n_slots++;
    return HESSFIT_SUCCESS;
}

hessfit_status hf_model_slot_scaled(hessfit_model *m, int p, int v, double factor, int *slot)
{
    int *where = &m->slot_of[(size_t)p * HESSFIT_FF_MAX_VALUES + (size_t)v], last = -1;
    for (int s = *where; s >= 0; s = m->slots[s].next) {
        if (m->slots[s].factor == factor) {
            *slot = s;
            return HESSFIT_SUCCESS;
        }
        last = s;
    }
    hessfit_status st = add_slot(m, p, v, factor, factor * m->params[p].values[v], slot);
    if (st != HESSFIT_SUCCESS)
        return st;
    if (last < 0)
        *where = *slot;
    else
        m->slots[last].next = *slot;
    return HESSFIT_SUCCESS;
}

static size_t constant_hash_of(double value, size_t cap)
{
    unsigned long long bits;
    memcpy(&bits, &value, sizeof bits);
    bits ^= bits >> 33;
    bits *= 0xff51afd7ed558ccdULL;
    bits ^= bits >> 33;
    return (size_t)(bits & (cap - 1));
}

hessfit_status hf_model_constant_slot(hessfit_model *m, double value, int *slot)
{
    if (2 * (m->n_constants + 1) > m->constant_hash_cap) { /* keep the load below 1/2 */
        size_t cap = m->constant_hash_cap > 0 ? 2 * m->constant_hash_cap : 1024;
        int *h = calloc(cap, sizeof *h);
        if (h == NULL)
            return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "fit model: no memory for %zu constant slots", cap / 2);
        for (size_t i = 0; i < m->constant_hash_cap; i++)
            if (m->constant_hash[i] > 0) {
                size_t j = constant_hash_of(m->table[m->constant_hash[i] - 1], cap);
                while (h[j] != 0)
                    j = (j + 1) & (cap - 1);
                h[j] = m->constant_hash[i];
            }
        free(m->constant_hash);
        m->constant_hash = h;
        m->constant_hash_cap = cap;
    }
    size_t j = constant_hash_of(value, m->constant_hash_cap);
    for (; m->constant_hash[j] != 0; j = (j + 1) & (m->constant_hash_cap - 1))
        if (m->table[m->constant_hash[j] - 1] == value) {
            *slot = m->constant_hash[j] - 1;
            return HESSFIT_SUCCESS;
        }
    hessfit_status st = add_slot(m, -1, 0, 1.0, value, slot);
    if (st == HESSFIT_SUCCESS) {
        m->constant_hash[j] = *slot + 1;
        m->n_constants++;
    }
    return st;
}

hessfit_status hf_model_derived_slot(hessfit_model *m, double value, int *slot)
{
    return add_slot(m, -1, 0, 1.0, value, slot);
}

hessfit_status hf_model_slot_for(hessfit_model *m, int p, int v, int *slot)
{
    int *where = &m->slot_of[(size_t)p * HESSFIT_FF_MAX_VALUES + (size_t)v];
    double factor;
    if (*where >= 0) {
        *slot = *where;
        return HESSFIT_SUCCESS;
    }
    if (!hf_model_value_factor(&m->params[p], v, &factor)) {
        char name[160];
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "fit model: %s: value %d is not a slot value",
                        hf_model_param_name(m, p, name, sizeof name), v + 1);
    }
    hessfit_status st = add_slot(m, p, v, factor, factor * m->params[p].values[v], where);
    *slot = *where;
    return st;
}

hessfit_status hf_model_append_term(hessfit_model *m, const hf_model_term *t)
{
    if (m->n_terms == m->cap_terms) {
        int cap = m->cap_terms > 0 ? 2 * m->cap_terms : 256;
        hf_model_term *n = realloc(m->terms, (size_t)cap * sizeof *n);
        if (n == NULL)
            return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "fit model: no memory for %d terms", cap);
        m->terms = n;
        m->cap_terms = cap;
    }
    m->terms[m->n_terms++] = *t;
    return HESSFIT_SUCCESS;
}

/* ---- checking the input --------------------------------------------------------------------- */

static const char *mol_label(const hessfit_molecule *mol)
{
    if (mol->name != NULL && mol->name[0] != '\0')
        return mol->name;
    return mol->source != NULL ? mol->source : "";
}

/* "bond 1-2" with 1-based atoms, for messages. */
static const char *term_text(const hessfit_typed_term *t, char *buf, size_t cap)
{
    int n_atoms = hessfit_term_kind_atoms(t->kind);
    int n = snprintf(buf, cap, "%s ", hessfit_term_kind_name(t->kind));
    for (int k = 0; k < n_atoms && k < 4 && n >= 0 && (size_t)n < cap; k++)
        n += snprintf(buf + n, cap - (size_t)n, k > 0 ? "-%d" : "%d", t->atoms[k] + 1);
    return buf;
}

static hessfit_status check_options(const hessfit_model_options *o)
{
    if (o->form != HESSFIT_MODEL_FORM_HARMONIC && o->form != HESSFIT_MODEL_FORM_MM3)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "fit model: options: form %d", (int)o->form);
    if (o->form == HESSFIT_MODEL_FORM_MM3 && o->nonbonded)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                             "fit model: options: the MM3* form has its own van der Waals and charge pairs (nonbonded "
                             "must be 0)");
    if (o->platform == NULL || o->platform[0] == '\0')
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "fit model: options: no platform name");
    if (o->masses != HESSFIT_MASS_MONOISOTOPIC && o->masses != HESSFIT_MASS_AVERAGE)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "fit model: options: mass kind %d", (int)o->masses);
    if (o->nonbonded != 0 && o->nonbonded != 1)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "fit model: options: nonbonded must be 0 or 1, not %d", o->nonbonded);
    if (o->combining != HESSFIT_COMBINE_GEOMETRIC && o->combining != HESSFIT_COMBINE_LORENTZ_BERTHELOT)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "fit model: options: combining rule %d", (int)o->combining);
    if (!isfinite(o->coulomb14_scale) || !isfinite(o->lj14_scale) || o->coulomb14_scale < 0.0 || o->lj14_scale < 0.0)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "fit model: options: 1-4 scales %g and %g (finite, >= 0)",
                        o->coulomb14_scale, o->lj14_scale);
    return HESSFIT_SUCCESS;
}

static hessfit_status check_molecule(const hessfit_molecule *mol, int m, int nonbonded)
{
    if (mol->n_atoms <= 0 || mol->n_atoms > HF_MODEL_MAX_MOLECULE_ATOMS)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "fit model: molecule %d ('%s'): %d atoms (1 to %d)", m + 1,
                        mol_label(mol), mol->n_atoms, HF_MODEL_MAX_MOLECULE_ATOMS);
    if (mol->coords == NULL)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "fit model: molecule %d ('%s') has no coordinates", m + 1,
                        mol_label(mol));
    if (mol->atomic_numbers == NULL)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "fit model: molecule %d ('%s') has no atomic numbers", m + 1,
                        mol_label(mol));
    for (int i = 0; i < 3 * mol->n_atoms; i++)
        if (!isfinite(mol->coords[i]))
            return hessfit_error(HESSFIT_ERROR_NONFINITE, "fit model: molecule %d ('%s'): atom %d coordinate %c is %g", m + 1,
                            mol_label(mol), i / 3 + 1, "xyz"[i % 3], mol->coords[i]);
    if (nonbonded) {
        if (mol->atom_types == NULL)
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                            "fit model: molecule %d ('%s') has no atom types (needed for nonbonded terms)", m + 1,
                            mol_label(mol));
        if (mol->partial_charges == NULL)
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                            "fit model: molecule %d ('%s') has no partial charges (needed for nonbonded terms)", m + 1,
                            mol_label(mol));
        for (int i = 0; i < mol->n_atoms; i++) {
            if (mol->atom_types[i] == NULL)
                return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "fit model: molecule %d ('%s'): atom %d has no type", m + 1,
                                mol_label(mol), i + 1);
            if (!isfinite(mol->partial_charges[i]))
                return hessfit_error(HESSFIT_ERROR_NONFINITE, "fit model: molecule %d ('%s'): atom %d charge is %g", m + 1,
                                mol_label(mol), i + 1, mol->partial_charges[i]);
        }
    }
    return HESSFIT_SUCCESS;
}

/* A typed term: known kind, atoms in range and distinct, a parameter of its kind with values the
 * model can use (or none, for HESSFIT_MATCH_NO_TERM). */
static hessfit_status check_term(const hessfit_model *md, const hessfit_molecule *mol, int m, int i, const hessfit_typed_term *t)
{
    char what[64], name[160];
    if ((unsigned)t->kind >= HESSFIT_NUM_TERM_KINDS)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "fit model: molecule %d ('%s'): term %d has kind %d", m + 1,
                        mol_label(mol), i + 1, (int)t->kind);
    int n_atoms = hessfit_term_kind_atoms(t->kind);
    for (int k = 0; k < n_atoms; k++) {
        if (t->atoms[k] < 0 || t->atoms[k] >= mol->n_atoms)
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "fit model: molecule %d ('%s'): term %d (%s): atom %d outside 1..%d",
                            m + 1, mol_label(mol), i + 1, term_text(t, what, sizeof what), t->atoms[k] + 1,
                            mol->n_atoms);
        for (int j = 0; j < k; j++)
            if (t->atoms[j] == t->atoms[k])
                return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "fit model: molecule %d ('%s'): term %d (%s) repeats atom %d",
                                m + 1, mol_label(mol), i + 1, term_text(t, what, sizeof what), t->atoms[k] + 1);
    }
    if (t->param == -1 && t->rule == HESSFIT_MATCH_NO_TERM)
        return HESSFIT_SUCCESS;
    if (t->param < 0 || t->param >= md->n_params)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                        "fit model: molecule %d ('%s'): term %d (%s, rule %s): parameter index %d outside [0, %d) of %s",
                        m + 1, mol_label(mol), i + 1, term_text(t, what, sizeof what), hessfit_match_rule_name(t->rule),
                        t->param, md->n_params, md->ff_path);
    const hessfit_ff_param *p = &md->params[t->param];
    hf_model_param_name(md, t->param, name, sizeof name);
    if ((int)p->kind != (int)t->kind)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "fit model: molecule %d ('%s'): term %d (%s) has the %s parameter %s",
                        m + 1, mol_label(mol), i + 1, term_text(t, what, sizeof what), hessfit_param_kind_name(p->kind),
                        name);
    for (int v = 0; v < p->n_values && v < HESSFIT_FF_MAX_VALUES; v++)
        if (!isfinite(p->values[v]))
            return hessfit_error(HESSFIT_ERROR_NONFINITE, "fit model: %s: value %d is %g", name, v + 1, p->values[v]);
    int fourier = t->kind == HESSFIT_TERM_TORSION ||
                  (t->kind == HESSFIT_TERM_IMPROPER && p->improper_form == HESSFIT_IMPROPER_FOURIER);
    if (t->kind == HESSFIT_TERM_BOND || t->kind == HESSFIT_TERM_ANGLE) {
        /* an .fld's bond also holds its moment, {k, r0, mu} */
        if (p->n_values != 2 && !(t->kind == HESSFIT_TERM_BOND && p->n_values == 3))
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "fit model: %s holds %d values, not {k, x0}", name, p->n_values);
    } else if (!fourier) {
        if (p->improper_form != HESSFIT_IMPROPER_HARMONIC || p->n_values != 1)
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "fit model: %s: harmonic improper with %d values, not {k}", name,
                            p->n_values);
    } else {
        if (p->n_values < 3 || p->n_values % 3 != 0 || p->n_values > HESSFIT_FF_MAX_VALUES)
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "fit model: %s holds %d values, not Fourier triples", name,
                            p->n_values);
        for (int v = 2; v < p->n_values; v += 3)
            if (p->values[v] != floor(p->values[v]) || p->values[v] < 1.0 || p->values[v] > 1000.0)
                return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "fit model: %s: periodicity %g is not an integer in 1..1000",
                                name, p->values[v]);
    }
    return HESSFIT_SUCCESS;
}

/* ---- building the terms ------------------------------------------------------------------------ */

static int cmp_pair(const void *a, const void *b)
{
    const int *x = a, *y = b;
    return x[0] != y[0] ? (x[0] > y[0]) - (x[0] < y[0]) : (x[1] > y[1]) - (x[1] < y[1]);
}

static int bonded(const int *pairs, int n, int a, int b)
{
    int key[2] = {a < b ? a : b, a < b ? b : a};
    if (n == 0)
        return 0;
    return bsearch(key, pairs, (size_t)n, 2 * sizeof(int), cmp_pair) != NULL;
}

/* The improper's dihedral: its centre first, then the other three in the term's order; a term
 * with its centre last is kept as is (the same dihedral read backwards), and so is every term typed
 * against an OpenMM ForceField XML (as_is: OpenMM's order, the centre third; hessfit_typing.h). */
static hessfit_status improper_order(const hessfit_typed_term *t, const int *pairs, int n_pairs, int as_is, int out[4],
                                     const char *mname, int m, int i)
{
    int centre = -1;
    for (int c = 0; c < 4 && centre < 0; c++) {
        int ok = 1;
        for (int j = 0; j < 4; j++)
            if (j != c && !bonded(pairs, n_pairs, t->atoms[c], t->atoms[j]))
                ok = 0;
        if (ok)
            centre = c;
    }
    if (centre < 0) {
        char what[64];
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                        "fit model: molecule %d ('%s'): term %d (%s): no atom is bonded to the other three by the "
                        "molecule's bond terms",
                        m + 1, mname, i + 1, term_text(t, what, sizeof what));
    }
    if (as_is || centre == 0 || centre == 3) {
        memcpy(out, t->atoms, 4 * sizeof(int));
        return HESSFIT_SUCCESS;
    }
    out[0] = t->atoms[centre];
    for (int j = 0, k = 1; j < 4; j++)
        if (j != centre)
            out[k++] = t->atoms[j];
    return HESSFIT_SUCCESS;
}

static hessfit_status add_fourier_terms(hessfit_model *md, int m, const int particles[4], int param, int improper)
{
    hf_model_fourier_use *u = &md->fourier_uses[md->n_fourier_uses++];
    const hessfit_ff_param *p = &md->params[param];
    u->mol = m;
    memcpy(u->particles, particles, sizeof u->particles);
    u->param = param;
    u->improper = improper;
    for (int v = 0; v < p->n_values; v += 3) {
        hf_model_term t;
        hessfit_status st;
        if (p->values[v] == 0.0)
            continue; /* a zero triple gets its terms when it is freed */
        memset(&t, 0, sizeof t);
        t.kind = improper ? HF_MODEL_TERM_PERIODIC_IMPROPER : HF_MODEL_TERM_TORSION;
        t.mol = m;
        memcpy(t.particles, particles, 4 * sizeof *particles);
        t.particles[4] = -1;
        t.periodicity = (int)p->values[v + 2];
        if ((st = hf_model_slot_for(md, param, v, &t.slots[0])) != HESSFIT_SUCCESS ||
            (st = hf_model_slot_for(md, param, v + 1, &t.slots[1])) != HESSFIT_SUCCESS ||
            (st = hf_model_append_term(md, &t)) != HESSFIT_SUCCESS)
            return st;
    }
    return HESSFIT_SUCCESS;
}

/* The terms of molecule m (System particles from `first`), its bonds for the exclusions. */
static hessfit_status build_molecule_terms(hessfit_model *md, const hessfit_molecule *mol, const hessfit_typed_molecule *typed, int m,
                                      int first)
{
    hessfit_status st = HESSFIT_SUCCESS;
    int n_pairs = 0, *pairs = NULL;
    for (int i = 0; i < typed->n_terms; i++)
        n_pairs += typed->terms[i].kind == HESSFIT_TERM_BOND;
    if (n_pairs > 0 && (pairs = malloc(2 * sizeof(int) * (size_t)n_pairs)) == NULL)
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "fit model: no memory for %d bonds", n_pairs);
    n_pairs = 0;
    for (int i = 0; i < typed->n_terms; i++) {
        const hessfit_typed_term *t = &typed->terms[i];
        if (t->kind != HESSFIT_TERM_BOND)
            continue;
        pairs[2 * n_pairs] = t->atoms[0] < t->atoms[1] ? t->atoms[0] : t->atoms[1];
        pairs[2 * n_pairs + 1] = t->atoms[0] < t->atoms[1] ? t->atoms[1] : t->atoms[0];
        n_pairs++;
    }
    if (n_pairs > 0)
        qsort(pairs, (size_t)n_pairs, 2 * sizeof(int), cmp_pair);
    for (int i = 0; i < n_pairs; i++) { /* each bond once, for the exclusions */
        if (i > 0 && pairs[2 * i] == pairs[2 * i - 2] && pairs[2 * i + 1] == pairs[2 * i - 1])
            continue;
        md->bonds[2 * md->n_bonds] = first + pairs[2 * i];
        md->bonds[2 * md->n_bonds + 1] = first + pairs[2 * i + 1];
        md->n_bonds++;
    }

    for (int i = 0; i < typed->n_terms && st == HESSFIT_SUCCESS; i++) {
        const hessfit_typed_term *tt = &typed->terms[i];
        const hessfit_ff_param *p;
        hf_model_term t;
        int atoms[4] = {-1, -1, -1, -1};
        if (tt->param < 0)
            continue; /* HESSFIT_MATCH_NO_TERM */
        p = &md->params[tt->param];
        md->param_uses[tt->param]++;
        memset(&t, 0, sizeof t);
        t.mol = m;
        t.particles[2] = t.particles[3] = t.particles[4] = -1;
        switch (tt->kind) {
        case HESSFIT_TERM_BOND:
        case HESSFIT_TERM_ANGLE:
            t.kind = tt->kind == HESSFIT_TERM_BOND ? HF_MODEL_TERM_BOND : HF_MODEL_TERM_ANGLE;
            for (int k = 0; k < hessfit_term_kind_atoms(tt->kind); k++)
                t.particles[k] = first + tt->atoms[k];
            if ((st = hf_model_slot_for(md, tt->param, 0, &t.slots[0])) == HESSFIT_SUCCESS &&
                (st = hf_model_slot_for(md, tt->param, 1, &t.slots[1])) == HESSFIT_SUCCESS)
                st = hf_model_append_term(md, &t);
            break;
        case HESSFIT_TERM_TORSION:
            for (int k = 0; k < 4; k++)
                atoms[k] = first + tt->atoms[k];
            st = add_fourier_terms(md, m, atoms, tt->param, 0);
            break;
        default: /* improper */
            st = improper_order(tt, pairs, n_pairs, md->ff_format == HESSFIT_FF_FFXML, atoms, mol_label(mol), m, i);
            if (st != HESSFIT_SUCCESS)
                break;
            for (int k = 0; k < 4; k++)
                atoms[k] += first;
            if (p->improper_form == HESSFIT_IMPROPER_FOURIER) {
                st = add_fourier_terms(md, m, atoms, tt->param, 1);
                break;
            }
            t.kind = HF_MODEL_TERM_HARMONIC_IMPROPER;
            memcpy(t.particles, atoms, sizeof atoms);
            t.particles[4] = -1;
            if (md->zero_slot < 0 && (st = add_slot(md, -1, 0, 1.0, 0.0, &md->zero_slot)) != HESSFIT_SUCCESS)
                break;
            t.slots[1] = md->zero_slot;
            if ((st = hf_model_slot_for(md, tt->param, 0, &t.slots[0])) == HESSFIT_SUCCESS)
                st = hf_model_append_term(md, &t);
            break;
        }
    }
    free(pairs);
    return st;
}

static hessfit_status build_nonbonded(hessfit_model *md, const hessfit_forcefield *ff, const hessfit_molecule *mol, int m, int first)
{
    for (int a = 0; a < mol->n_atoms; a++) {
        int p = -1, *s = &md->particle_slots[3 * (size_t)(first + a)];
        hessfit_status st = hessfit_forcefield_vdw_param(ff, mol->atom_types[a], &p);
        if (st != HESSFIT_SUCCESS) {
            return hessfit_error(st, "fit model: %s (molecule %d ('%s'), atom %d)", hessfit_last_error(), m + 1,
                                 mol_label(mol), a + 1);
        }
        if (md->params[p].n_values < 2) {
            char name[160];
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "fit model: %s holds %d values, not {R*, eps}",
                            hf_model_param_name(md, p, name, sizeof name), md->params[p].n_values);
        }
        md->param_uses[p]++;
        if ((st = add_slot(md, -1, 0, 1.0, mol->partial_charges[a], &s[0])) != HESSFIT_SUCCESS ||
            (st = hf_model_slot_for(md, p, 0, &s[1])) != HESSFIT_SUCCESS || (st = hf_model_slot_for(md, p, 1, &s[2])) != HESSFIT_SUCCESS)
            return st;
    }
    return HESSFIT_SUCCESS;
}

/* ---- create / destroy ------------------------------------------------------------------------- */

static char *dup_or_null(const char *s)
{
    return s != NULL ? strdup(s) : NULL;
}

static hessfit_status create_arrays(hessfit_model *md, const hessfit_forcefield *ff, const hessfit_molecule *mols,
                               const hessfit_typed_molecule *typed, int n_mols)
{
    size_t n_values = (size_t)(md->n_params > 0 ? md->n_params : 1) * HESSFIT_FF_MAX_VALUES;
    long long n_particles = 0, n_bond_terms = 0, n_fourier = 0, hsize = 0;
    md->params = malloc((size_t)(md->n_params > 0 ? md->n_params : 1) * sizeof *md->params);
    md->param_uses = calloc((size_t)(md->n_params > 0 ? md->n_params : 1), sizeof *md->param_uses);
    md->slot_of = malloc(n_values * sizeof *md->slot_of);
    md->free_mark = calloc(n_values, 1);
    md->mol_first = malloc((size_t)(n_mols + 1) * sizeof *md->mol_first);
    md->block_offset = malloc((size_t)(n_mols + 1) * sizeof *md->block_offset);
    md->side = calloc((size_t)n_mols, sizeof *md->side);
    if (md->params == NULL || md->param_uses == NULL || md->slot_of == NULL || md->free_mark == NULL ||
        md->mol_first == NULL || md->block_offset == NULL || md->side == NULL)
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "fit model: no memory for %d parameters and %d molecules", md->n_params,
                        n_mols);
    if (md->n_params > 0)
        memcpy(md->params, ff->params, (size_t)md->n_params * sizeof *md->params);
    for (size_t i = 0; i < n_values; i++)
        md->slot_of[i] = -1;
    for (int m = 0; m < n_mols; m++) {
        md->mol_first[m] = (int)n_particles;
        md->block_offset[m] = hsize;
        n_particles += mols[m].n_atoms;
        hsize += 9LL * mols[m].n_atoms * mols[m].n_atoms;
        if (n_particles > HF_MODEL_MAX_PARTICLES)
            return hessfit_error(HESSFIT_ERROR_OVERFLOW, "fit model: more than %d atoms in all", HF_MODEL_MAX_PARTICLES);
        for (int i = 0; i < typed[m].n_terms; i++) {
            n_bond_terms += typed[m].terms[i].kind == HESSFIT_TERM_BOND;
            n_fourier += typed[m].terms[i].kind == HESSFIT_TERM_TORSION || typed[m].terms[i].kind == HESSFIT_TERM_IMPROPER;
        }
    }
    md->mol_first[n_mols] = (int)n_particles;
    md->block_offset[n_mols] = hsize;
    md->n_particles = (int)n_particles;
    md->masses = malloc((size_t)n_particles * sizeof *md->masses);
    md->positions_nm = malloc(3 * (size_t)n_particles * sizeof *md->positions_nm);
    md->particle_slots = malloc(3 * (size_t)n_particles * sizeof *md->particle_slots);
    md->bonds = malloc(2 * (size_t)(n_bond_terms > 0 ? n_bond_terms : 1) * sizeof *md->bonds);
    md->fourier_uses = malloc((size_t)(n_fourier > 0 ? n_fourier : 1) * sizeof *md->fourier_uses);
    md->blocks_kj = malloc((size_t)hsize * sizeof *md->blocks_kj);
    if (md->masses == NULL || md->positions_nm == NULL || md->particle_slots == NULL || md->bonds == NULL ||
        md->fourier_uses == NULL || md->blocks_kj == NULL)
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "fit model: no memory for %lld atoms (Hessian blocks: %lld doubles)",
                        n_particles, hsize);
    for (long long i = 0; i < 3 * n_particles; i++)
        md->particle_slots[i] = HESSFIT_NO_SLOT;
    return HESSFIT_SUCCESS;
}

hessfit_status hessfit_model_create(const hessfit_forcefield *ff, const hessfit_molecule *mols, const hessfit_typed_molecule *typed,
                          int n_mols, const hessfit_model_options *opt, hessfit_model **model)
{
    hessfit_model_options o = opt != NULL ? *opt : hessfit_model_default_options();
    hessfit_model *md;
    hessfit_status st;
    if (model == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "fit model: model is NULL");
    *model = NULL;
    if (ff == NULL || mols == NULL || typed == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "fit model: %s is NULL", ff == NULL ? "ff" : mols == NULL ? "mols" : "typed");
    if (n_mols <= 0 || n_mols > HF_MODEL_MAX_PARTICLES)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "fit model: %d molecules", n_mols);
    if (ff->n_params < 0 || (ff->n_params > 0 && ff->params == NULL) || ff->n_equivalences < 0 ||
        (ff->n_equivalences > 0 && ff->equivalences == NULL))
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "fit model: force field %s: %d parameters, %d equivalences",
                        ff->path != NULL ? ff->path : "(unnamed)", ff->n_params, ff->n_equivalences);
    if ((st = check_options(&o)) != HESSFIT_SUCCESS)
        return st;
    if (o.form == HESSFIT_MODEL_FORM_MM3 && ff->format != HESSFIT_FF_MM3_FLD)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "fit model: the MM3* form needs an MM3* .fld, not %s",
                             ff->path != NULL ? ff->path : "(unnamed)");
    for (int m = 0; m < n_mols; m++) {
        if ((st = check_molecule(&mols[m], m, o.nonbonded)) != HESSFIT_SUCCESS)
            return st;
        if (typed[m].n_terms < 0 || (typed[m].n_terms > 0 && typed[m].terms == NULL))
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "fit model: molecule %d ('%s'): %d typed terms%s", m + 1,
                            mol_label(&mols[m]), typed[m].n_terms, typed[m].n_terms > 0 ? " but no term array" : "");
    }

    if ((md = calloc(1, sizeof *md)) == NULL)
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "fit model: no memory");
    md->opt = o;
    md->platform = strdup(o.platform);
    md->precision = dup_or_null(o.precision);
    md->ff_path = strdup(ff->path != NULL ? ff->path : "(force field)");
    md->ff_format = ff->format;
    md->opt.platform = md->platform;
    md->opt.precision = md->precision;
    md->n_params = ff->n_params;
    md->n_mols = n_mols;
    md->zero_slot = -1;
    md->version = 1;
    if (md->platform == NULL || md->ff_path == NULL || (o.precision != NULL && md->precision == NULL)) {
        st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "fit model: no memory");
        goto fail;
    }
    if ((st = create_arrays(md, ff, mols, typed, n_mols)) != HESSFIT_SUCCESS)
        goto fail;
    if (o.form == HESSFIT_MODEL_FORM_MM3) {
        hf_model_mm3_derived *c = &md->mm3;
        c->formal = calloc((size_t)md->n_particles, sizeof *c->formal);
        c->charge = calloc((size_t)md->n_particles, sizeof *c->charge);
        c->vdw_param = malloc((size_t)md->n_particles * sizeof *c->vdw_param);
        if (c->formal == NULL || c->charge == NULL || c->vdw_param == NULL) {
            st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "fit model: no memory for %d charges", md->n_particles);
            goto fail;
        }
    }

    for (int m = 0; m < n_mols; m++) {
        const hessfit_molecule *mol = &mols[m];
        int first = md->mol_first[m];
        for (int i = 0; i < typed[m].n_terms; i++)
            if ((st = check_term(md, mol, m, i, &typed[m].terms[i])) != HESSFIT_SUCCESS)
                goto fail;
        if ((st = hessfit_element_masses(mol->atomic_numbers, mol->n_atoms, o.masses, &md->masses[first])) != HESSFIT_SUCCESS) {
            st = hessfit_error(st, "fit model: molecule %d ('%s'): %s", m + 1, mol_label(mol), hessfit_last_error());
            goto fail;
        }
        for (int i = 0; i < 3 * mol->n_atoms; i++)
            md->positions_nm[3 * (size_t)first + (size_t)i] = mol->coords[i] * HESSFIT_ANGSTROM_TO_NM;
        st = o.form == HESSFIT_MODEL_FORM_MM3 ? hf_model_mm3_build_molecule(md, ff, mol, &typed[m], m, first)
                                               : build_molecule_terms(md, mol, &typed[m], m, first);
        if (st != HESSFIT_SUCCESS)
            goto fail;
        if (o.nonbonded && (st = build_nonbonded(md, ff, mol, m, first)) != HESSFIT_SUCCESS)
            goto fail;
    }
    hf_model_mm3_update_derived(md);
    if ((st = hf_model_evaluator_build(md, 0, n_mols, &md->main)) != HESSFIT_SUCCESS)
        goto fail;
    *model = md;
    return HESSFIT_SUCCESS;
fail:
    hessfit_model_destroy(md);
    return st;
}

void hessfit_model_destroy(hessfit_model *model)
{
    if (model == NULL)
        return;
    hf_model_evaluator_free(&model->main);
    if (model->side != NULL)
        for (int m = 0; m < model->n_mols; m++)
            hf_model_evaluator_free(&model->side[m]);
    free(model->side);
    free(model->platform);
    free(model->precision);
    free(model->ff_path);
    free(model->params);
    free(model->param_uses);
    free(model->slot_of);
    free(model->free_mark);
    free(model->slots);
    free(model->table);
    free(model->terms);
    free(model->fourier_uses);
    free(model->mol_first);
    free(model->block_offset);
    free(model->masses);
    free(model->positions_nm);
    free(model->particle_slots);
    free(model->bonds);
    free(model->free_param);
    free(model->free_value);
    free(model->blocks_kj);
    hf_model_mm3_free(model);
    free(model);
}

/* ---- layout and handles ----------------------------------------------------------------------- */

int hessfit_model_n_molecules(const hessfit_model *model)
{
    return model != NULL ? model->n_mols : 0;
}

int hessfit_model_n_atoms(const hessfit_model *model, int mol)
{
    if (model == NULL || mol < 0 || mol >= model->n_mols)
        return -1;
    return model->mol_first[mol + 1] - model->mol_first[mol];
}

int hessfit_model_n_particles(const hessfit_model *model)
{
    return model != NULL ? model->n_particles : 0;
}

int hessfit_model_n_terms(const hessfit_model *model)
{
    return model != NULL ? model->n_terms : 0;
}

long long hessfit_model_hessian_size(const hessfit_model *model)
{
    return model != NULL ? model->block_offset[model->n_mols] : 0;
}

long long hessfit_model_molecule_offset(const hessfit_model *model, int mol)
{
    if (model == NULL || mol < 0 || mol >= model->n_mols)
        return -1;
    return model->block_offset[mol];
}

int hessfit_model_n_slots(const hessfit_model *model)
{
    return model != NULL ? model->n_slots : 0;
}

hessfit_status hessfit_model_get_slots(const hessfit_model *model, double *slots, int n)
{
    if (model == NULL || slots == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "fit model: %s is NULL", model == NULL ? "model" : "slots");
    if (n != model->n_slots)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "fit model: %d slots asked for, the model has %d", n, model->n_slots);
    if (n > 0)
        memcpy(slots, model->table, (size_t)n * sizeof *slots);
    return HESSFIT_SUCCESS;
}

hessfit_force *hessfit_model_force(hessfit_model *model)
{
    return model != NULL ? model->main.force : NULL;
}

OpenMM_Context *hessfit_model_context(hessfit_model *model)
{
    return model != NULL ? model->main.context : NULL;
}

OpenMM_System *hessfit_model_system(hessfit_model *model)
{
    return model != NULL ? model->main.system : NULL;
}
