/*
 * The OpenMM side of the fit model: a System, one HessianForce and a Context for a range of
 * molecules (all of them for the model's main Context, one for a per-molecule energy), and the
 * push of the slot table into it. Every hessfit C API status is checked; OpenMM's own C API
 * cannot report errors, so the Context comes from hessfit_context_create and every size handed
 * to OpenMM is right by construction.
 */
#include "hf_model_internal.h"

#include <stdlib.h>

#define HESSFIT_CALL(call, what)                                                                                       \
    do {                                                                                                               \
        hessfit_status hs_ = (call);                                                                                   \
        if (hs_ != HESSFIT_SUCCESS)                                                                                    \
            return hf_model_hessfit_error(hs_, what);                                                                  \
    } while (0)

void hf_model_evaluator_free(hf_model_evaluator *ev)
{
    if (ev->context != NULL)
        OpenMM_Context_destroy(ev->context);
    if (ev->integrator != NULL)
        OpenMM_Integrator_destroy(ev->integrator);
    if (ev->force != NULL)
        hessfit_force_destroy(ev->force); /* the handle; the System owns an added force */
    if (ev->system != NULL)
        OpenMM_System_destroy(ev->system);
    ev->context = NULL;
    ev->integrator = NULL;
    ev->force = NULL;
    ev->system = NULL;
}

hessfit_status hf_model_evaluator_add_term(const hessfit_model *m, hf_model_evaluator *ev, const hf_model_term *t)
{
    int p[HF_MODEL_TERM_PARTICLES], shift = m->mol_first[ev->mol_begin];
    const int *s = t->slots;
    for (int k = 0; k < HF_MODEL_TERM_PARTICLES; k++)
        p[k] = t->particles[k] >= 0 ? t->particles[k] - shift : -1;
    switch (t->kind) {
    case HF_MODEL_TERM_BOND:
        HESSFIT_CALL(hessfit_force_add_bond(ev->force, p[0], p[1], t->slots[0], t->slots[1], NULL), "add_bond");
        break;
    case HF_MODEL_TERM_ANGLE:
        HESSFIT_CALL(hessfit_force_add_angle(ev->force, p[0], p[1], p[2], t->slots[0], t->slots[1], NULL), "add_angle");
        break;
    case HF_MODEL_TERM_TORSION:
        HESSFIT_CALL(hessfit_force_add_periodic_torsion(ev->force, p[0], p[1], p[2], p[3], t->periodicity, t->slots[0],
                                                        t->slots[1], NULL),
                     "add_periodic_torsion");
        break;
    case HF_MODEL_TERM_PERIODIC_IMPROPER:
        HESSFIT_CALL(hessfit_force_add_periodic_improper(ev->force, p[0], p[1], p[2], p[3], t->periodicity, t->slots[0],
                                                         t->slots[1], NULL),
                     "add_periodic_improper");
        break;
    case HF_MODEL_TERM_HARMONIC_IMPROPER:
        HESSFIT_CALL(hessfit_force_add_harmonic_improper(ev->force, p[0], p[1], p[2], p[3], t->slots[0], t->slots[1], NULL),
                     "add_harmonic_improper");
        break;
    case HF_MODEL_TERM_MM3_BOND: {
        int index;
        HESSFIT_CALL(hessfit_force_add_mm3_bond(ev->force, p[0], p[1], s[0], s[1], &index), "add_mm3_bond");
        if (t->scale[0] != 1.0)
            HESSFIT_CALL(hessfit_force_set_mm3_bond_distance_scale(ev->force, index, t->scale[0]),
                         "set_mm3_bond_distance_scale");
        break;
    }
    case HF_MODEL_TERM_MM3_ANGLE:
        HESSFIT_CALL(hessfit_force_add_mm3_angle(ev->force, p[0], p[1], p[2], s[0], s[1], NULL), "add_mm3_angle");
        break;
    case HF_MODEL_TERM_MM3_STRETCH_BEND:
        HESSFIT_CALL(hessfit_force_add_mm3_stretch_bend(ev->force, p[0], p[1], p[2], s[0], s[1], s[2], s[3], t->scale[0],
                                                        t->scale[1], NULL),
                     "add_mm3_stretch_bend");
        break;
    case HF_MODEL_TERM_MM3_BEND_BEND:
        HESSFIT_CALL(hessfit_force_add_mm3_bend_bend(ev->force, p[0], p[1], p[2], p[3], p[4], s[0], s[1], s[2], NULL),
                     "add_mm3_bend_bend");
        break;
    case HF_MODEL_TERM_MM3_TORSION_STRETCH:
        HESSFIT_CALL(hessfit_force_add_mm3_torsion_stretch(ev->force, p[0], p[1], p[2], p[3], s[0], s[1], t->scale[0], NULL),
                     "add_mm3_torsion_stretch");
        break;
    case HF_MODEL_TERM_MM3_PAIR:
        if (p[2] == p[0] && p[3] == p[1])
            HESSFIT_CALL(hessfit_force_add_mm3_pair(ev->force, p[0], p[1], s[0], s[1], s[2], NULL), "add_mm3_pair");
        else
            HESSFIT_CALL(hessfit_force_add_mm3_switched_pair(ev->force, p[0], p[1], p[2], p[3], s[0], s[1], s[2],
                                                             t->scale[0], t->scale[1], NULL),
                         "add_mm3_switched_pair");
        break;
    case HF_MODEL_TERM_HBOND:
        HESSFIT_CALL(hessfit_force_add_hydrogen_bond(ev->force, p[0], p[1], s[0], s[1], NULL), "add_hydrogen_bond");
        break;
    default:
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "fit model: internal term kind %d", (int)t->kind);
    }
    return HESSFIT_SUCCESS;
}

/* Particles, molecules, slots, terms and nonbonded settings of molecules [ev->mol_begin, ev->mol_end). */
static hessfit_status fill_force(const hessfit_model *m, hf_model_evaluator *ev)
{
    int first = m->mol_first[ev->mol_begin], last = m->mol_first[ev->mol_end];
    int *list = malloc((size_t)(last - first) * sizeof *list);
    hessfit_status st = HESSFIT_SUCCESS;
    hessfit_status hs = HESSFIT_SUCCESS;
    if (list == NULL)
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "fit model: no memory for %d particles", last - first);
    for (int s = 0; s < m->n_slots && hs == HESSFIT_SUCCESS; s++)
        hs = hessfit_force_add_parameter(ev->force, m->table[s], NULL);
    for (int i = first; i < last && hs == HESSFIT_SUCCESS; i++)
        hs = hessfit_force_add_particle(ev->force, m->particle_slots[3 * i], m->particle_slots[3 * i + 1],
                                        m->particle_slots[3 * i + 2], NULL);
    for (int mol = ev->mol_begin; mol < ev->mol_end && hs == HESSFIT_SUCCESS; mol++) {
        int n = 0;
        for (int i = m->mol_first[mol]; i < m->mol_first[mol + 1]; i++)
            list[n++] = i - first;
        hs = hessfit_force_add_molecule(ev->force, list, n, NULL);
    }
    if (hs != HESSFIT_SUCCESS) {
        free(list);
        return hf_model_hessfit_error(hs, "building the HessianForce");
    }
    for (int i = 0; i < m->n_reduced && hs == HESSFIT_SUCCESS; i++)
        if (m->reduced[i].particle >= first && m->reduced[i].particle < last)
            hs = hessfit_force_add_reduced_particle(ev->force, m->reduced[i].particle - first,
                                                    m->reduced[i].partner - first, m->reduced[i].factor, NULL);
    if (hs != HESSFIT_SUCCESS) {
        free(list);
        return hf_model_hessfit_error(hs, "add_reduced_particle");
    }
    for (int i = 0; i < m->n_terms && st == HESSFIT_SUCCESS; i++)
        if (m->terms[i].mol >= ev->mol_begin && m->terms[i].mol < ev->mol_end)
            st = hf_model_evaluator_add_term(m, ev, &m->terms[i]);
    ev->n_terms = m->n_terms;
    if (st == HESSFIT_SUCCESS && m->opt.nonbonded) {
        int n = 0;
        free(list);
        list = malloc(2 * sizeof(int) * (size_t)(m->n_bonds > 0 ? m->n_bonds : 1));
        if (list == NULL)
            return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "fit model: no memory for %d bonds", m->n_bonds);
        for (int b = 0; b < m->n_bonds; b++)
            if (m->bonds[2 * b] >= first && m->bonds[2 * b] < last) {
                list[2 * n] = m->bonds[2 * b] - first;
                list[2 * n + 1] = m->bonds[2 * b + 1] - first;
                n++;
            }
        if ((hs = hessfit_force_create_exclusions_from_bonds(ev->force, list, n)) != HESSFIT_SUCCESS ||
            (hs = hessfit_force_set_combining_rule(ev->force, m->opt.combining)) != HESSFIT_SUCCESS ||
            (hs = hessfit_force_set_14_scales(ev->force, m->opt.coulomb14_scale, m->opt.lj14_scale)) != HESSFIT_SUCCESS)
            st = hf_model_hessfit_error(hs, "nonbonded settings");
    }
    free(list);
    return st;
}

void hf_model_context_set_positions(OpenMM_Context *context, int n, const double *pos_nm)
{
    OpenMM_Vec3Array *x = OpenMM_Vec3Array_create(n);
    for (int i = 0; i < n; i++) {
        const OpenMM_Vec3 v = {pos_nm[3 * i], pos_nm[3 * i + 1], pos_nm[3 * i + 2]};
        OpenMM_Vec3Array_set(x, i, v);
    }
    OpenMM_Context_setPositions(context, x);
    OpenMM_Vec3Array_destroy(x);
}

hessfit_status hf_model_context_get_positions(OpenMM_Context *context, int n, double *pos_nm)
{
    OpenMM_State *state = OpenMM_Context_getState(context, OpenMM_State_Positions, 0);
    const OpenMM_Vec3Array *x = OpenMM_State_getPositions(state);
    if (OpenMM_Vec3Array_getSize(x) != n) {
        const int held = OpenMM_Vec3Array_getSize(x);
        OpenMM_State_destroy(state);
        return hessfit_error(HESSFIT_ERROR_SIZE, "fit model: the Context holds %d positions, expected %d", held, n);
    }
    for (int i = 0; i < n; i++) {
        const OpenMM_Vec3 *v = OpenMM_Vec3Array_get(x, i);
        pos_nm[3 * i] = v->x;
        pos_nm[3 * i + 1] = v->y;
        pos_nm[3 * i + 2] = v->z;
    }
    OpenMM_State_destroy(state);
    return HESSFIT_SUCCESS;
}

hessfit_status hf_model_evaluator_build(hessfit_model *m, int mol_begin, int mol_end, hf_model_evaluator *ev)
{
    int first = m->mol_first[mol_begin], last = m->mol_first[mol_end];
    hessfit_status hs;
    hessfit_status st;
    ev->mol_begin = mol_begin;
    ev->mol_end = mol_end;
    ev->system = OpenMM_System_create();
    for (int i = first; i < last; i++)
        OpenMM_System_addParticle(ev->system, m->masses[i]);
    if ((hs = hessfit_force_create(&ev->force)) != HESSFIT_SUCCESS) {
        st = hf_model_hessfit_error(hs, "hessfit_force_create");
        goto fail;
    }
    if ((st = fill_force(m, ev)) != HESSFIT_SUCCESS)
        goto fail;
    if ((hs = hessfit_force_add_to_system(ev->force, ev->system, NULL)) != HESSFIT_SUCCESS) {
        st = hf_model_hessfit_error(hs, "hessfit_force_add_to_system");
        goto fail;
    }
    ev->integrator = (OpenMM_Integrator *)OpenMM_VerletIntegrator_create(0.001);
    if ((hs = hessfit_context_create_on_device(ev->system, ev->integrator, m->platform, m->precision,
                                               m->opt.device_index, &ev->context)) != HESSFIT_SUCCESS) {
        st = hf_model_hessfit_error(hs, "hessfit_context_create_on_device");
        ev->context = NULL;
        goto fail;
    }
    hf_model_context_set_positions(ev->context, last - first, m->positions_nm + 3 * (size_t)first);
    ev->version = m->version;
    return HESSFIT_SUCCESS;
fail:
    hf_model_evaluator_free(ev);
    return st;
}

hessfit_status hf_model_evaluator_sync(hessfit_model *m, hf_model_evaluator *ev)
{
    int n_slots = 0;
    if (ev->version == m->version)
        return HESSFIT_SUCCESS;
    /* slots and terms added since the evaluator was built (a freed zero triple) */
    HESSFIT_CALL(hessfit_force_get_num_parameters(ev->force, &n_slots), "get_num_parameters");
    for (int s = n_slots; s < m->n_slots; s++)
        HESSFIT_CALL(hessfit_force_add_parameter(ev->force, m->table[s], NULL), "add_parameter");
    for (; ev->n_terms < m->n_terms; ev->n_terms++) {
        const hf_model_term *t = &m->terms[ev->n_terms];
        if (t->mol >= ev->mol_begin && t->mol < ev->mol_end) {
            hessfit_status st = hf_model_evaluator_add_term(m, ev, t);
            if (st != HESSFIT_SUCCESS)
                return st;
        }
    }
    if (m->n_slots > 0)
        HESSFIT_CALL(hessfit_force_set_parameters(ev->force, m->table, m->n_slots), "set_parameters");
    HESSFIT_CALL(hessfit_force_update_parameters_in_context(ev->force, ev->context), "update_parameters_in_context");
    ev->version = m->version;
    return HESSFIT_SUCCESS;
}
