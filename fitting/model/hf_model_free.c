/*
 * Free parameters of the fit model: which force-field values a fit changes, the vector x of
 * their canonical values, its push into the slot table, its write-back into the force field,
 * and the chain rule d/dx_i = factor_i d/dslot_i (hessfit_model.h).
 */
#include "hf_model_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int is_fourier(const hessfit_ff_param *p)
{
    return p->kind == HESSFIT_PARAM_TORSION || (p->kind == HESSFIT_PARAM_IMPROPER && p->improper_form == HESSFIT_IMPROPER_FOURIER);
}

/* Gives a Fourier triple whose k is 0 its slots and terms, and pushes them into the Context. */
static hessfit_status activate_triple(hessfit_model *m, int p, int triple)
{
    int k_slot, phase_slot;
    const hessfit_ff_param *q = &m->params[p];
    hessfit_status st;
    if ((st = hf_model_slot_for(m, p, 3 * triple, &k_slot)) != HESSFIT_SUCCESS ||
        (st = hf_model_slot_for(m, p, 3 * triple + 1, &phase_slot)) != HESSFIT_SUCCESS)
        return st;
    for (int u = 0; u < m->n_fourier_uses; u++) {
        const hf_model_fourier_use *use = &m->fourier_uses[u];
        hf_model_term t;
        if (use->param != p)
            continue;
        memset(&t, 0, sizeof t);
        t.kind = use->improper ? HF_MODEL_TERM_PERIODIC_IMPROPER : HF_MODEL_TERM_TORSION;
        t.mol = use->mol;
        memcpy(t.particles, use->particles, sizeof use->particles);
        t.particles[4] = -1;
        t.slots[0] = k_slot;
        t.slots[1] = phase_slot;
        t.periodicity = (int)q->values[3 * triple + 2];
        if ((st = hf_model_append_term(m, &t)) != HESSFIT_SUCCESS)
            return st;
    }
    m->version++;
    m->blocks_valid = 0;
    return hf_model_evaluator_sync(m, &m->main);
}

int hessfit_model_parameter_used(const hessfit_model *m, int param)
{
    return m != NULL && param >= 0 && param < m->n_params && m->param_uses[param] > 0;
}

hessfit_status hessfit_model_add_free(hessfit_model *m, int param, int value)
{
    char name[160];
    double factor;
    hessfit_status st;
    if (m == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "fit model: model is NULL");
    if (param < 0 || param >= m->n_params)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "fit model: free parameter: index %d outside [0, %d) of %s", param,
                        m->n_params, m->ff_path);
    const hessfit_ff_param *p = &m->params[param];
    hf_model_param_name(m, param, name, sizeof name);
    if (value < 0 || value >= p->n_values)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "fit model: free parameter %s: value index %d outside [0, %d)", name,
                        value, p->n_values);
    if (!hf_model_value_factor(p, value, &factor))
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                        "fit model: free parameter %s: value index %d is the periodicity of Fourier term %d (an integer, "
                        "not a continuous parameter)",
                        name, value, value / 3 + 1);
    if (m->opt.form == HESSFIT_MODEL_FORM_MM3 && is_fourier(p) && value % 3 != 0)
        return hessfit_error(HESSFIT_ERROR_UNSUPPORTED,
                             "fit model: free parameter %s: value index %d cannot be free in the MM3* form (MM3* torsion "
                             "phases are fixed: 0, 180, 0 degrees)",
                             name, value);
    if (m->param_uses[param] == 0)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "fit model: free parameter %s is used by no term of the model%s", name,
                        p->kind == HESSFIT_PARAM_VDW && !m->opt.nonbonded ? " (nonbonded terms are off)" : "");
    size_t at = (size_t)param * HESSFIT_FF_MAX_VALUES + (size_t)value;
    if (m->free_mark[at])
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "fit model: free parameter %s: value index %d is already free", name,
                        value);
    if (m->n_free == m->cap_free) {
        int cap = m->cap_free > 0 ? 2 * m->cap_free : 64;
        int *fp = realloc(m->free_param, (size_t)cap * sizeof *fp);
        if (fp == NULL)
            return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "fit model: no memory for %d free parameters", cap);
        m->free_param = fp;
        int *fv = realloc(m->free_value, (size_t)cap * sizeof *fv);
        if (fv == NULL)
            return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "fit model: no memory for %d free parameters", cap);
        m->free_value = fv;
        m->cap_free = cap;
    }
    int derived = 0; /* the MM3* form's vdW values and bond moments feed derived slots only */
    if ((st = hf_model_mm3_derived_value(m, param, value, &derived)) != HESSFIT_SUCCESS)
        return st;
    if (is_fourier(p) && m->slot_of[at] < 0 && (st = activate_triple(m, param, value / 3)) != HESSFIT_SUCCESS)
        return st;
    if (m->slot_of[at] < 0 && !derived)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "fit model: free parameter %s: value index %d has no slot%s", name,
                             value,
                             p->kind == HESSFIT_PARAM_BOND && value == 2
                                 ? " (a bond moment is free only in the MM3* form, whose charges it makes)"
                                 : "");
    m->free_param[m->n_free] = param;
    m->free_value[m->n_free] = value;
    m->n_free++;
    m->free_mark[at] = 1;
    return HESSFIT_SUCCESS;
}

hessfit_status hessfit_model_add_free_kind(hessfit_model *m, hessfit_param_kind kind, unsigned what, int *n_added)
{
    int added = 0;
    if (n_added != NULL)
        *n_added = 0;
    if (m == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "fit model: model is NULL");
    if (what == 0 ||
        (what & ~(HESSFIT_MODEL_FREE_K | HESSFIT_MODEL_FREE_X0 | HESSFIT_MODEL_FREE_PHASE | HESSFIT_MODEL_FREE_MU)) != 0)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                             "fit model: free kind: selection 0x%x (HESSFIT_MODEL_FREE_K, _X0, _PHASE, _MU)", what);
    if (kind != HESSFIT_PARAM_BOND && kind != HESSFIT_PARAM_ANGLE && kind != HESSFIT_PARAM_TORSION && kind != HESSFIT_PARAM_IMPROPER &&
        kind != HESSFIT_PARAM_VDW && kind != HESSFIT_PARAM_STRETCH_BEND)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "fit model: free kind: %s parameters cannot be freed (charges come "
                        "from the molecules)", hessfit_param_kind_name(kind));
    const int mm3 = m->opt.form == HESSFIT_MODEL_FORM_MM3;
    for (int p = 0; p < m->n_params; p++) {
        const hessfit_ff_param *q = &m->params[p];
        int values[HESSFIT_FF_MAX_VALUES], n = 0;
        if (q->kind != kind || m->param_uses[p] == 0)
            continue;
        if (is_fourier(q)) {
            for (int v = 0; v + 1 < q->n_values; v += 3) {
                if (m->slot_of[(size_t)p * HESSFIT_FF_MAX_VALUES + (size_t)v] < 0 ||
                    (m->opt.form == HESSFIT_MODEL_FORM_MM3 && q->values[v] == 0.0))
                    continue; /* a zero triple (the MM3* form has its terms, but frees it only by name) */
                if (what & HESSFIT_MODEL_FREE_K)
                    values[n++] = v;
                if (what & HESSFIT_MODEL_FREE_PHASE)
                    values[n++] = v + 1;
            }
        } else if (kind == HESSFIT_PARAM_VDW) {
            if (what & HESSFIT_MODEL_FREE_X0)
                values[n++] = 0;
            if (what & HESSFIT_MODEL_FREE_K)
                values[n++] = 1;
        } else if (kind == HESSFIT_PARAM_STRETCH_BEND) {
            if ((what & HESSFIT_MODEL_FREE_K) && !(mm3 && q->values[0] == 0.0)) /* a zero k_sb only by name */
                values[n++] = 0;
        } else {
            if (what & HESSFIT_MODEL_FREE_K)
                values[n++] = 0;
            if ((what & HESSFIT_MODEL_FREE_X0) && q->n_values > 1)
                values[n++] = 1;
            /* bond moments: the MM3* form's, not 0 (a zero moment only by name) */
            if ((what & HESSFIT_MODEL_FREE_MU) && kind == HESSFIT_PARAM_BOND && mm3 && q->n_values > 2 && q->values[2] != 0.0)
                values[n++] = 2;
        }
        for (int i = 0; i < n; i++) {
            hessfit_status st;
            if (m->free_mark[(size_t)p * HESSFIT_FF_MAX_VALUES + (size_t)values[i]])
                continue;
            if ((st = hessfit_model_add_free(m, p, values[i])) != HESSFIT_SUCCESS)
                return st;
            added++;
            if (n_added != NULL)
                *n_added = added;
        }
    }
    return HESSFIT_SUCCESS;
}

int hessfit_model_param_uses(const hessfit_model *m, int param)
{
    return m != NULL && param >= 0 && param < m->n_params ? m->param_uses[param] : 0;
}

int hessfit_model_n_free(const hessfit_model *m)
{
    return m != NULL ? m->n_free : 0;
}

hessfit_status hessfit_model_free_parameter(const hessfit_model *m, int i, int *param, int *value, int *slot, double *factor)
{
    if (m == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "fit model: model is NULL");
    if (i < 0 || i >= m->n_free)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "fit model: free index %d outside [0, %d)", i, m->n_free);
    int s = m->slot_of[(size_t)m->free_param[i] * HESSFIT_FF_MAX_VALUES + (size_t)m->free_value[i]];
    if (param != NULL)
        *param = m->free_param[i];
    if (value != NULL)
        *value = m->free_value[i];
    if (slot != NULL)
        *slot = s;
    if (factor != NULL)
        *factor = s >= 0 ? m->slots[s].factor : 0.0;
    return HESSFIT_SUCCESS;
}

hessfit_status hessfit_model_get_free(const hessfit_model *m, double *x)
{
    if (m == NULL || (x == NULL && m->n_free > 0))
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "fit model: %s is NULL", m == NULL ? "model" : "x");
    for (int i = 0; i < m->n_free; i++)
        x[i] = m->params[m->free_param[i]].values[m->free_value[i]];
    return HESSFIT_SUCCESS;
}

/* Values and table from x, without any check: every slot of each free value (hf_model_slot's
 * chain), then the derived slots (the MM3* form's charges). */
static void store_free(hessfit_model *m, const double *x)
{
    for (int i = 0; i < m->n_free; i++) {
        int p = m->free_param[i], v = m->free_value[i];
        m->params[p].values[v] = x[i];
        for (int s = m->slot_of[(size_t)p * HESSFIT_FF_MAX_VALUES + (size_t)v]; s >= 0; s = m->slots[s].next)
            m->table[s] = m->slots[s].factor * x[i];
    }
    hf_model_mm3_update_derived(m);
    m->version++;
    m->blocks_valid = 0;
}

hessfit_status hessfit_model_set_free(hessfit_model *m, const double *x)
{
    double *old;
    hessfit_status st;
    if (m == NULL || (x == NULL && m->n_free > 0))
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "fit model: %s is NULL", m == NULL ? "model" : "x");
    for (int i = 0; i < m->n_free; i++)
        if (!isfinite(x[i])) {
            char name[160];
            return hessfit_error(HESSFIT_ERROR_NONFINITE, "fit model: x[%d] = %g (value index %d of %s)", i, x[i],
                            m->free_value[i], hf_model_param_name(m, m->free_param[i], name, sizeof name));
        }
    if ((old = malloc((size_t)(m->n_free > 0 ? m->n_free : 1) * sizeof *old)) == NULL)
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "fit model: no memory for %d free values", m->n_free);
    hessfit_model_get_free(m, old);
    store_free(m, x);
    if ((st = hf_model_evaluator_sync(m, &m->main)) != HESSFIT_SUCCESS)
        store_free(m, old); /* the model keeps its values; the next sync pushes them */
    free(old);
    return st;
}

hessfit_status hessfit_model_write_back(const hessfit_model *m, hessfit_forcefield *ff)
{
    if (m == NULL || ff == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "fit model: %s is NULL", m == NULL ? "model" : "ff");
    if (ff->n_params != m->n_params || (ff->n_params > 0 && ff->params == NULL))
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "fit model: write-back into %s: %d parameters, the model's %s has %d",
                        ff->path != NULL ? ff->path : "(unnamed)", ff->n_params, m->ff_path, m->n_params);
    for (int i = 0; i < m->n_free; i++) { /* check all, then write: nothing changes on error */
        const hessfit_ff_param *a = &m->params[m->free_param[i]], *b = &ff->params[m->free_param[i]];
        if (a->kind != b->kind || a->line != b->line || a->n_values != b->n_values) {
            char name[160];
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                            "fit model: write-back: parameter %d of %s is %s line %d with %d values, the model's is %s",
                            m->free_param[i], ff->path != NULL ? ff->path : "(unnamed)", hessfit_param_kind_name(b->kind),
                            b->line, b->n_values, hf_model_param_name(m, m->free_param[i], name, sizeof name));
        }
    }
    for (int i = 0; i < m->n_free; i++)
        ff->params[m->free_param[i]].values[m->free_value[i]] = m->params[m->free_param[i]].values[m->free_value[i]];
    return HESSFIT_SUCCESS;
}

hessfit_status hf_model_undefined_derivative(const hessfit_model *m, int i, const char *where)
{
    char name[256];
    const int p = m->free_param[i], v = m->free_value[i];
    hf_model_param_name(m, p, name, sizeof name);
    if (m->params[p].kind == HESSFIT_PARAM_ANGLE && v == 1)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                             "%s: theta0 of angle %s (free value %d) cannot be a free value at an exactly linear geometry: "
                             "a structure has that angle at 180 degrees, where the forces and Hessian have no derivative "
                             "in theta0 (the energy has a cusp for theta0 != 180); fix theta0 there",
                             where, name, i + 1);
    return hessfit_error(HESSFIT_ERROR_NONFINITE, "%s: the derivative with respect to free value %d (%s, value %d) is "
                         "undefined (NaN) at this geometry", where, i + 1, name, v + 1);
}

hessfit_status hessfit_model_slot_gradient_to_free(const hessfit_model *m, const double *d_slot, double *d_free)
{
    if (m == NULL || (m->n_free > 0 && (d_slot == NULL || d_free == NULL)))
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "fit model: %s is NULL",
                        m == NULL ? "model" : d_slot == NULL ? "d_slot" : "d_free");
    for (int i = 0; i < m->n_free; i++) {
        d_free[i] = 0.0;
        for (int s = m->slot_of[(size_t)m->free_param[i] * HESSFIT_FF_MAX_VALUES + (size_t)m->free_value[i]]; s >= 0;
             s = m->slots[s].next)
            d_free[i] += m->slots[s].factor * d_slot[s];
        if (isnan(d_free[i]))
            return hf_model_undefined_derivative(m, i, "fit model: gradient");
    }
    return hf_model_mm3_derived_gradient(m, d_slot, d_free);
}

hessfit_status hf_model_slot_chain_init(const hessfit_model *m, hf_model_slot_chain *ch)
{
    const size_t n = (size_t)m->n_params * HESSFIT_FF_MAX_VALUES;
    ch->free_of = malloc((n > 0 ? n : 1) * sizeof *ch->free_of);
    if (ch->free_of == NULL) {
        memset(&ch->mm3, 0, sizeof ch->mm3);
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "fit model: no memory for the slot chain");
    }
    for (size_t k = 0; k < n; k++)
        ch->free_of[k] = -1;
    for (int i = 0; i < m->n_free; i++)
        ch->free_of[(size_t)m->free_param[i] * HESSFIT_FF_MAX_VALUES + (size_t)m->free_value[i]] = i;
    const hessfit_status st = hf_model_mm3_chain_init(m, &ch->mm3);
    if (st != HESSFIT_SUCCESS) {
        free(ch->free_of);
        ch->free_of = NULL;
    }
    return st;
}

/* A slot of (param, value) enters d_free of that value with its factor (the list of
 * hessfit_model_slot_gradient_to_free), then the derived slots' part. */
void hf_model_slot_chain_row(const hessfit_model *m, hf_model_slot_chain *ch, int s, double *d_free)
{
    memset(d_free, 0, (size_t)m->n_free * sizeof *d_free);
    const hf_model_slot *sl = &m->slots[s];
    if (sl->param >= 0) {
        const int i = ch->free_of[(size_t)sl->param * HESSFIT_FF_MAX_VALUES + (size_t)sl->value];
        if (i >= 0)
            d_free[i] += sl->factor;
    }
    hf_model_mm3_chain_row(m, &ch->mm3, s, d_free);
}

hessfit_status hf_model_gradient_slots(const hessfit_model *m, int **slots, int *n)
{
    const size_t ns = (size_t)m->n_slots;
    unsigned char *wanted = calloc(ns > 0 ? ns : 1, 1);
    *slots = malloc((ns > 0 ? ns : 1) * sizeof **slots);
    *n = 0;
    if (wanted == NULL || *slots == NULL) {
        free(wanted);
        free(*slots);
        *slots = NULL;
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "fit model: no memory for the gradient's slots");
    }
    for (int i = 0; i < m->n_free; i++)
        for (int s = m->slot_of[(size_t)m->free_param[i] * HESSFIT_FF_MAX_VALUES + (size_t)m->free_value[i]]; s >= 0;
             s = m->slots[s].next)
            wanted[s] = 1;
    hf_model_mm3_mark_gradient_slots(m, wanted);
    for (size_t s = 0; s < ns; s++)
        if (wanted[s])
            (*slots)[(*n)++] = (int)s;
    free(wanted);
    return HESSFIT_SUCCESS;
}

void hf_model_slot_chain_free(hf_model_slot_chain *ch)
{
    free(ch->free_of);
    ch->free_of = NULL;
    hf_model_mm3_chain_free(&ch->mm3);
}
