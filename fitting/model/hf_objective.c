/*
 * The objective of a fit model (hessfit_objective.h): checks the QM data against the model,
 * builds every molecule's targets (hf_objective_targets.c), hands them to the plugin's objective
 * kernel once, and evaluates: set the free values, ONE kernel call (loss, dL/dslot of all
 * molecules, residuals), the energy and geometry parts when there are any
 * (hf_objective_energies.c, hf_objective_geometry.c: each adds its loss and dL/dslot), chain to
 * the free values.
 */
#include "hf_model_internal.h"
#include "hf_objective_internal.h"
#include "hessfit_elements.h"
#include "hessfit_units.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Largest distance (Angstrom) between a QM coordinate and the model's position of that atom. */
#define HF_OBJECTIVE_GEOMETRY_TOLERANCE_A 1e-3


static hessfit_status hessfit_failure(hessfit_status st, const char *what)
{
    return hessfit_error(st, "objective: %s: %s: %s", what, hessfit_status_string(st), hessfit_last_error());
}

hessfit_objective_options hessfit_objective_default_options(void)
{
    hessfit_objective_options o;
    memset(&o, 0, sizeof o);
    o.frequencies = HESSFIT_OBJ_FREQUENCIES_OVERLAP;
    o.frequency_weight = 0.001;
    o.frequency_threshold = 50.0;
    o.eigenmatrix = 0;
    o.eigenmatrix_diagonal_only = 0;
    o.eig_i = 0.0;
    o.eig_d_low = 0.1;
    o.eig_d_high = 0.1;
    o.eig_o = 0.05;
    o.eig_threshold = 0.1173;
    o.hessian = 0;
    o.hessian_diagonal_weight = 0.1;
    o.hessian_offdiagonal_weight = 0.05;
    o.ts = HESSFIT_OBJ_TS_SKIP;
    o.ts_replace_eigenvalue = 1.0;
    return o;
}

static int has_objective(const hessfit_objective_options *o)
{
    return o->frequencies != HESSFIT_OBJ_FREQUENCIES_NONE || o->eigenmatrix || o->hessian;
}

static hessfit_status check_options(const hessfit_objective_options *o, int mol)
{
    const struct {
        const char *name;
        double value;
    } weights[] = {{"frequency_weight", o->frequency_weight}, {"eig_i", o->eig_i}, {"eig_d_low", o->eig_d_low},
                   {"eig_d_high", o->eig_d_high}, {"eig_o", o->eig_o},
                   {"hessian_diagonal_weight", o->hessian_diagonal_weight},
                   {"hessian_offdiagonal_weight", o->hessian_offdiagonal_weight}};
    if (o->frequencies != HESSFIT_OBJ_FREQUENCIES_NONE && o->frequencies != HESSFIT_OBJ_FREQUENCIES_Q2MM &&
        o->frequencies != HESSFIT_OBJ_FREQUENCIES_OVERLAP)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "objective: molecule %d: unknown frequency mode %d", mol + 1,
                        (int)o->frequencies);
    if (o->ts != HESSFIT_OBJ_TS_SKIP && o->ts != HESSFIT_OBJ_TS_KEEP && o->ts != HESSFIT_OBJ_TS_REPLACE)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "objective: molecule %d: unknown transition-state mode %d", mol + 1,
                        (int)o->ts);
    for (size_t i = 0; i < sizeof weights / sizeof weights[0]; i++)
        if (!(isfinite(weights[i].value) && weights[i].value >= 0.0))
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "objective: molecule %d: %s is %g (must be finite and >= 0)",
                            mol + 1, weights[i].name, weights[i].value);
    if (!isfinite(o->frequency_threshold) || !isfinite(o->eig_threshold))
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "objective: molecule %d: a threshold is not finite", mol + 1);
    if (!(isfinite(o->ts_replace_eigenvalue) && o->ts_replace_eigenvalue > 0.0))
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                        "objective: molecule %d: ts_replace_eigenvalue is %g (must be finite and > 0)", mol + 1,
                        o->ts_replace_eigenvalue);
    return HESSFIT_SUCCESS;
}

/*
 * Masses (amu) of molecule mol's particles in Hessian-block order, checked against the QM molecule:
 * same atom count, each element's monoisotopic or average mass equal to the particle's, and each QM
 * coordinate within the tolerance of the Context's position.
 */
static hessfit_status molecule_masses(hessfit_model *model, const OpenMM_Vec3Array *positions, const hessfit_molecule *qm, int mol,
                                 double *masses)
{
    const int n = hessfit_model_n_atoms(model, mol);
    int count = 0;
    hessfit_status hst;
    if (qm->n_atoms != n)
        return hessfit_error(HESSFIT_ERROR_COUNT, "objective: molecule %d: the QM data %s has %d atoms, the model's molecule has %d",
                        mol + 1, qm->source ? qm->source : "", qm->n_atoms, n);
    if (qm->hessian == NULL)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "objective: molecule %d: the QM data %s has no Hessian", mol + 1,
                        qm->source ? qm->source : "");
    if (qm->atomic_numbers == NULL || qm->coords == NULL)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "objective: molecule %d: the QM data has no %s", mol + 1,
                        qm->atomic_numbers == NULL ? "elements" : "coordinates");
    int *particles = malloc((size_t)n * sizeof *particles);
    if (particles == NULL)
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "objective: molecule %d: no memory", mol + 1);
    hst = hessfit_force_get_molecule_particles(hessfit_model_force(model), mol, particles, n, &count);
    if (hst != HESSFIT_SUCCESS || count != n) {
        free(particles);
        return hst != HESSFIT_SUCCESS ? hessfit_failure(hst, "hessfit_force_get_molecule_particles")
                                      : hessfit_error(HESSFIT_ERROR_COUNT, "objective: molecule %d: %d particles, expected %d",
                                                 mol + 1, count, n);
    }
    const OpenMM_System *system = hessfit_model_system(model);
    for (int a = 0; a < n; a++) {
        const double mass = OpenMM_System_getParticleMass(system, particles[a]);
        const int z = qm->atomic_numbers[a];
        const OpenMM_Vec3 p = *OpenMM_Vec3Array_get(positions, particles[a]);
        const double x[3] = {p.x * HESSFIT_NM_TO_ANGSTROM, p.y * HESSFIT_NM_TO_ANGSTROM, p.z * HESSFIT_NM_TO_ANGSTROM};
        double dist2 = 0.0;
        for (int k = 0; k < 3; k++) {
            const double d = x[k] - qm->coords[3 * a + k];
            dist2 += d * d;
        }
        if (mass != hessfit_element_monoisotopic_mass(z) && mass != hessfit_element_average_mass(z)) {
            free(particles);
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                            "objective: molecule %d, atom %d: the QM data has element %s but the model's particle "
                            "has mass %.6f amu",
                            mol + 1, a + 1, hessfit_element_symbol(z), mass);
        }
        if (!(sqrt(dist2) <= HF_OBJECTIVE_GEOMETRY_TOLERANCE_A)) {
            free(particles);
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                            "objective: molecule %d, atom %d: the QM coordinates are %.3g Angstrom from the model's "
                            "position (tolerance %g): the MM Hessian must be taken at the QM geometry",
                            mol + 1, a + 1, sqrt(dist2), HF_OBJECTIVE_GEOMETRY_TOLERANCE_A);
        }
        masses[a] = mass;
    }
    free(particles);
    return HESSFIT_SUCCESS;
}

static void to_kernel(const hf_objective_targets *t, const double *masses, hessfit_molecule_objective *k)
{
    const long long dim = 3LL * t->n_atoms;
    hessfit_molecule_objective_init(k);
    k->masses = masses;
    k->n_masses = t->n_atoms;
    k->frequency_pairing = t->pairing;
    k->project_external = t->project;
    k->frequency_threshold = t->threshold;
    k->frequency_targets = t->freq_target;
    k->n_frequency_targets = t->n_freq;
    k->frequency_weights = t->freq_weight;
    k->n_frequency_weights = t->n_freq;
    k->frequency_vectors = t->freq_vectors;
    k->n_frequency_vectors = t->freq_vectors ? (long long)t->n_freq * dim : 0;
    k->eigen_vectors = t->eig_vectors;
    k->n_eigen_vectors = (long long)t->n_eig * dim;
    k->eigen_targets = t->eig_target;
    k->n_eigen_targets = (long long)t->n_eig * t->n_eig;
    k->eigen_weights = t->eig_weight;
    k->n_eigen_weights = (long long)t->n_eig * t->n_eig;
    k->hessian_targets = t->hess_target;
    k->n_hessian_targets = t->hessian ? dim * dim : 0;
    k->hessian_weights = t->hess_weight;
    k->n_hessian_weights = t->hessian ? dim * dim : 0;
}

void hessfit_objective_destroy(hessfit_objective *obj)
{
    if (obj == NULL)
        return;
    free(obj->freq_mol);
    free(obj->freq_target);
    free(obj->freq_weight);
    free(obj->d_slot);
    free(obj->mol_res);
    hf_energy_part_destroy(obj->energies);
    hf_geometry_part_destroy(obj->geometry);
    free(obj);
}

hessfit_status hessfit_objective_create(hessfit_model *model, const hessfit_molecule *qm, int n_mols, const hessfit_objective_options *opt,
                              hessfit_objective **objective)
{
    hessfit_status st = HESSFIT_SUCCESS;
    hessfit_status hst;
    if (objective == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_objective_create: objective is NULL");
    *objective = NULL;
    if (model == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_objective_create: model is NULL");
    if (n_mols != hessfit_model_n_molecules(model))
        return hessfit_error(HESSFIT_ERROR_COUNT, "hessfit_objective_create: %d QM molecules for a model of %d molecules", n_mols,
                        hessfit_model_n_molecules(model));
    const hessfit_objective_options defaults = hessfit_objective_default_options();
    int any = 0;
    for (int m = 0; m < n_mols; m++) {
        const hessfit_objective_options *o = opt ? &opt[m] : &defaults;
        if ((st = check_options(o, m)) != HESSFIT_SUCCESS)
            return st;
        any |= has_objective(o);
    }
    if (any && qm == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_objective_create: qm is NULL");

    hessfit_objective *obj = calloc(1, sizeof *obj);
    if (obj != NULL)
        obj->grad_free = obj->grad_slots = -1;
    hf_objective_targets *targets = calloc((size_t)n_mols, sizeof *targets);
    hessfit_molecule_objective *kernel = calloc((size_t)n_mols, sizeof *kernel);
    double **masses = calloc((size_t)n_mols, sizeof *masses);
    OpenMM_State *state = NULL;
    if (obj == NULL || targets == NULL || kernel == NULL || masses == NULL) {
        st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "hessfit_objective_create: no memory");
        goto done;
    }
    obj->model = model;
    obj->mol_res = calloc((size_t)n_mols + 1, sizeof *obj->mol_res);
    if (obj->mol_res == NULL) {
        st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "hessfit_objective_create: no memory");
        goto done;
    }
    state = OpenMM_Context_getState(hessfit_model_context(model), OpenMM_State_Positions, 0);
    const OpenMM_Vec3Array *positions = OpenMM_State_getPositions(state);
    for (int m = 0; m < n_mols && st == HESSFIT_SUCCESS; m++) {
        const hessfit_objective_options *o = opt ? &opt[m] : &defaults;
        hessfit_molecule_objective_init(&kernel[m]);
        if (!has_objective(o))
            continue;
        masses[m] = malloc((size_t)hessfit_model_n_atoms(model, m) * sizeof(double));
        if (masses[m] == NULL)
            st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "hessfit_objective_create: no memory");
        if (st == HESSFIT_SUCCESS)
            st = molecule_masses(model, positions, &qm[m], m, masses[m]);
        if (st == HESSFIT_SUCCESS)
            st = hf_objective_targets_build(&qm[m], m, masses[m], o, &targets[m]);
        if (st == HESSFIT_SUCCESS) {
            to_kernel(&targets[m], masses[m], &kernel[m]);
            obj->n_freq += targets[m].n_freq;
        }
    }
    for (int m = 0; m < n_mols; m++) { /* the kernel's layout: frequencies, eigenmatrix and Hessian lower triangles */
        const long long dim = 3LL * targets[m].n_atoms, k = targets[m].n_eig;
        obj->mol_res[m + 1] = obj->mol_res[m] + targets[m].n_freq + k * (k + 1) / 2 +
                              (targets[m].hessian ? dim * (dim + 1) / 2 : 0);
    }
    if (st != HESSFIT_SUCCESS)
        goto done;

    /* what each frequency target is, for reports */
    obj->freq_mol = malloc((size_t)(obj->n_freq > 0 ? obj->n_freq : 1) * sizeof(int));
    obj->freq_target = malloc((size_t)(obj->n_freq > 0 ? obj->n_freq : 1) * sizeof(double));
    obj->freq_weight = malloc((size_t)(obj->n_freq > 0 ? obj->n_freq : 1) * sizeof(double));
    if (!obj->freq_mol || !obj->freq_target || !obj->freq_weight) {
        st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "hessfit_objective_create: no memory");
        goto done;
    }
    for (int m = 0, at = 0; m < n_mols; m++)
        for (int k = 0; k < targets[m].n_freq; k++, at++) {
            obj->freq_mol[at] = m;
            obj->freq_target[at] = targets[m].freq_target[k];
            obj->freq_weight[at] = targets[m].freq_weight[k];
        }

    if ((hst = hessfit_force_set_hessian_objective(hessfit_model_force(model), hessfit_model_context(model), kernel, n_mols,
                                                   hessfit_frequency_factor_kj_mol_nm2_amu())) != HESSFIT_SUCCESS) {
        st = hessfit_failure(hst, "hessfit_force_set_hessian_objective");
        goto done;
    }
    int n_freq_kernel = 0;
    if ((hst = hessfit_force_get_hessian_objective_size(hessfit_model_force(model), hessfit_model_context(model),
                                                        &obj->n_residuals, &n_freq_kernel)) != HESSFIT_SUCCESS) {
        st = hessfit_failure(hst, "hessfit_force_get_hessian_objective_size");
        goto done;
    }
    if (n_freq_kernel != obj->n_freq || obj->n_residuals != obj->mol_res[n_mols]) {
        st = hessfit_error(HESSFIT_ERROR_SIZE, "objective: the kernel holds %d frequency targets and %lld residuals, "
                      "expected %d and %lld", n_freq_kernel, obj->n_residuals, obj->n_freq, obj->mol_res[n_mols]);
        goto done;
    }
    obj->n_kernel_residuals = obj->n_residuals;
    /* one evaluation at the starting parameters: the q2mm mode selects its MM modes now */
    double loss;
    st = hessfit_objective_evaluate(obj, NULL, &loss, NULL, NULL);

done:
    if (state != NULL)
        OpenMM_State_destroy(state);
    for (int m = 0; targets != NULL && m < n_mols; m++)
        hf_objective_targets_free(&targets[m]);
    for (int m = 0; masses != NULL && m < n_mols; m++)
        free(masses[m]);
    free(masses);
    free(targets);
    free(kernel);
    if (st != HESSFIT_SUCCESS)
        hessfit_objective_destroy(obj);
    else
        *objective = obj;
    return st;
}

/* Tells the kernel which slots' dL/dslot the free values need (it skips the terms of the others:
 * a fit of bonded values skips every nonbonded pair), again whenever values were freed since. */
static hessfit_status gradient_slots(hessfit_objective *obj, int n_slots)
{
    const int n_free = hessfit_model_n_free(obj->model);
    if (n_free == obj->grad_free && n_slots == obj->grad_slots)
        return HESSFIT_SUCCESS;
    int *slots = NULL, n = 0;
    hessfit_status st = hf_model_gradient_slots(obj->model, &slots, &n);
    if (st != HESSFIT_SUCCESS)
        return st;
    const hessfit_status hst = hessfit_force_set_hessian_objective_gradient_slots(
        hessfit_model_force(obj->model), hessfit_model_context(obj->model), slots, n);
    free(slots);
    if (hst != HESSFIT_SUCCESS)
        return hessfit_failure(hst, "hessfit_force_set_hessian_objective_gradient_slots");
    obj->grad_free = n_free;
    obj->grad_slots = n_slots;
    return HESSFIT_SUCCESS;
}

hessfit_status hessfit_objective_evaluate(hessfit_objective *obj, const double *x_free, double *loss, double *grad_free,
                                double *residuals)
{
    hessfit_status st;
    hessfit_status hst;
    if (obj == NULL || loss == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_objective_evaluate: %s is NULL", obj == NULL ? "objective" : "loss");
    if (residuals != NULL && obj->n_residuals == 0)
        residuals = NULL;
    if (x_free != NULL && (st = hessfit_model_set_free(obj->model, x_free)) != HESSFIT_SUCCESS)
        return st;
    const int n_slots = hessfit_model_n_slots(obj->model);
    if (grad_free != NULL && n_slots > obj->cap_slots) { /* freeing a zero triple adds slots */
        double *grown = realloc(obj->d_slot, (size_t)n_slots * sizeof *grown);
        if (grown == NULL)
            return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "hessfit_objective_evaluate: no memory");
        obj->d_slot = grown;
        obj->cap_slots = n_slots;
    }
    double *d_slot = grad_free != NULL ? obj->d_slot : NULL;
    *loss = 0.0;
    if (d_slot != NULL)
        memset(d_slot, 0, (size_t)n_slots * sizeof *d_slot);
    if (obj->n_kernel_residuals > 0) { /* no Hessian-space target: no kernel call */
        if (d_slot != NULL && (st = gradient_slots(obj, n_slots)) != HESSFIT_SUCCESS)
            return st;
        obj->kernel_calls++;
        hst = hessfit_force_compute_hessian_objective(hessfit_model_force(obj->model), hessfit_model_context(obj->model), loss,
                                                      d_slot, d_slot != NULL ? n_slots : 0, residuals,
                                                      residuals != NULL ? obj->n_kernel_residuals : 0);
        if (hst != HESSFIT_SUCCESS)
            return hessfit_failure(hst, "hessfit_force_compute_hessian_objective");
    }
    double part = 0.0;
    long long at = obj->n_kernel_residuals;
    if (obj->energies != NULL) {
        if ((st = hf_energy_part_evaluate(obj->energies, obj->model, &part, d_slot,
                                          residuals != NULL ? residuals + at : NULL)) != HESSFIT_SUCCESS)
            return st;
        *loss += part;
        at += hf_energy_part_size(obj->energies);
    }
    if (obj->geometry != NULL) {
        if ((st = hf_geometry_part_evaluate(obj->geometry, obj->model, &part, d_slot,
                                            residuals != NULL ? residuals + at : NULL)) != HESSFIT_SUCCESS)
            return st;
        *loss += part;
        hf_geometry_part_keep(obj->geometry, *loss);
    }
    if (grad_free != NULL)
        return hessfit_model_slot_gradient_to_free(obj->model, obj->d_slot, grad_free);
    return HESSFIT_SUCCESS;
}

long long hessfit_objective_n_residuals(const hessfit_objective *obj)
{
    return obj != NULL ? obj->n_residuals : 0;
}

int hessfit_objective_n_frequency_targets(const hessfit_objective *obj)
{
    return obj != NULL ? obj->n_freq : 0;
}

hessfit_status hessfit_objective_frequency_target(const hessfit_objective *obj, int i, int *mol, double *target_cm1, double *weight)
{
    if (obj == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_objective_frequency_target: objective is NULL");
    if (i < 0 || i >= obj->n_freq)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "hessfit_objective_frequency_target: target %d outside 0..%d", i,
                        obj->n_freq - 1);
    if (mol != NULL)
        *mol = obj->freq_mol[i];
    if (target_cm1 != NULL)
        *target_cm1 = obj->freq_target[i];
    if (weight != NULL)
        *weight = obj->freq_weight[i];
    return HESSFIT_SUCCESS;
}

hessfit_status hessfit_objective_pairing(hessfit_objective *obj, int *modes)
{
    if (obj == NULL || (modes == NULL && obj->n_freq > 0))
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_objective_pairing: %s is NULL", obj == NULL ? "objective" : "modes");
    if (obj->n_freq == 0)
        return HESSFIT_SUCCESS;
    hessfit_status hst = hessfit_force_get_hessian_objective_pairing(hessfit_model_force(obj->model),
                                                                     hessfit_model_context(obj->model), modes, obj->n_freq);
    return hst == HESSFIT_SUCCESS ? HESSFIT_SUCCESS : hessfit_failure(hst, "hessfit_force_get_hessian_objective_pairing");
}

unsigned long long hessfit_objective_n_kernel_calls(const hessfit_objective *obj)
{
    return obj != NULL ? obj->kernel_calls : 0;
}

/* ---- energies and geometry ---------------------------------------------------------------------- */

hessfit_status hessfit_objective_set_energies(hessfit_objective *obj, const hessfit_energy_target *targets, int n)
{
    hessfit_status st;
    if (obj == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_objective_set_energies: objective is NULL");
    if (obj->energies != NULL)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "hessfit_objective_set_energies: the objective has energies already");
    if ((st = hf_energy_part_create(obj->model, targets, n, &obj->energies)) != HESSFIT_SUCCESS)
        return st;
    obj->n_residuals += n;
    return HESSFIT_SUCCESS;
}

hessfit_status hessfit_objective_set_geometry(hessfit_objective *obj, const hessfit_molecule *qm, int n_mols, const hessfit_geometry_target *targets,
                                    int n)
{
    hessfit_status st;
    if (obj == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_objective_set_geometry: objective is NULL");
    if (obj->geometry != NULL)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "hessfit_objective_set_geometry: the objective has geometry targets already");
    if (n_mols != hessfit_model_n_molecules(obj->model))
        return hessfit_error(HESSFIT_ERROR_COUNT, "hessfit_objective_set_geometry: %d QM molecules for a model of %d molecules", n_mols,
                        hessfit_model_n_molecules(obj->model));
    if ((st = hf_geometry_part_create(obj->model, qm, n_mols, targets, n, &obj->geometry)) != HESSFIT_SUCCESS)
        return st;
    obj->n_residuals += n;
    return HESSFIT_SUCCESS;
}

hessfit_status hessfit_objective_part_range(const hessfit_objective *obj, hessfit_objective_part part, long long *first, long long *count)
{
    if (obj == NULL || first == NULL || count == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_objective_part_range: a NULL argument");
    const long long n_e = hf_energy_part_size(obj->energies), n_g = hf_geometry_part_size(obj->geometry);
    switch (part) {
    case HESSFIT_OBJ_PART_HESSIAN: *first = 0; *count = obj->n_kernel_residuals; break;
    case HESSFIT_OBJ_PART_ENERGIES: *first = obj->n_kernel_residuals; *count = n_e; break;
    case HESSFIT_OBJ_PART_GEOMETRY: *first = obj->n_kernel_residuals + n_e; *count = n_g; break;
    default: return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "hessfit_objective_part_range: unknown part %d", (int)part);
    }
    return HESSFIT_SUCCESS;
}

int hessfit_objective_n_energy_targets(const hessfit_objective *obj)
{
    return obj != NULL ? hf_energy_part_size(obj->energies) : 0;
}

int hessfit_objective_n_geometry_targets(const hessfit_objective *obj)
{
    return obj != NULL ? hf_geometry_part_size(obj->geometry) : 0;
}

hessfit_status hessfit_objective_energy_target(const hessfit_objective *obj, int i, hessfit_energy_target *target)
{
    const hessfit_energy_target *t = obj != NULL ? hf_energy_part_target(obj->energies, i) : NULL;
    if (t == NULL)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "hessfit_objective_energy_target: target %d outside 0..%d", i,
                        hessfit_objective_n_energy_targets(obj) - 1);
    if (target != NULL)
        *target = *t;
    return HESSFIT_SUCCESS;
}

hessfit_status hessfit_objective_geometry_target(const hessfit_objective *obj, int i, hessfit_geometry_target *target)
{
    const hessfit_geometry_target *t = obj != NULL ? hf_geometry_part_target(obj->geometry, i) : NULL;
    if (t == NULL)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "hessfit_objective_geometry_target: target %d outside 0..%d", i,
                        hessfit_objective_n_geometry_targets(obj) - 1);
    if (target != NULL)
        *target = *t;
    return HESSFIT_SUCCESS;
}

hessfit_status hessfit_objective_energy_values(const hessfit_objective *obj, double *qm, double *mm)
{
    if (obj == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_objective_energy_values: objective is NULL");
    hf_energy_part_values(obj->energies, qm, mm);
    return HESSFIT_SUCCESS;
}

hessfit_status hessfit_objective_geometry_values(const hessfit_objective *obj, double *qm, double *mm)
{
    if (obj == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_objective_geometry_values: objective is NULL");
    hf_geometry_part_values(obj->geometry, qm, mm);
    return HESSFIT_SUCCESS;
}

hessfit_status hessfit_objective_geometry_stats_get(const hessfit_objective *obj, hessfit_objective_geometry_stats *stats)
{
    if (obj == NULL || stats == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_objective_geometry_stats_get: a NULL argument");
    hf_geometry_part_stats(obj->geometry, stats);
    return HESSFIT_SUCCESS;
}
