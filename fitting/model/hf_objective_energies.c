/*
 * The relative-energy part of the objective (hessfit_objective.h): per group of conformers, QM
 * and MM energies relative to the structure of lowest QM energy, r_i = w_i (dE_qm,i - dE_mm,i).
 *
 * One evaluation: the MM energy of every molecule at the model's (QM) geometry in one kernel call
 * (hessfit_force_get_molecule_energies); with a gradient, dL/dE_m for every molecule,
 *     dL/dE_i = -2 r_i w_i,   dL/dE_ref(g) = +2 sum_{i in g} r_i w_i,
 * and one more kernel call for sum_m dL/dE_m dE_m/dslot (hessfit_force_get_molecule_energy_derivatives).
 * The kernel works in kJ/mol; this part in kcal/mol (hessfit_units.h).
 */
#include "hf_objective_internal.h"
#include "hf_model_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct hf_energy_part {
    int n;
    hessfit_energy_target *targets;
    int *reference;      /* per target: the target index of its group's reference */
    double *qm_relative; /* per target: kcal/mol */
    double *mm_relative; /* per target, last evaluation: kcal/mol */
    int n_mols;
    double *mm_kj;       /* per molecule */
    double *dl_de;       /* per molecule: dL/dE_m, per kJ/mol */
    double *d_slot;      /* the kernel's sum_m dL/dE_m dE_m/dslot */
    int cap_slots;
};

static int ascending(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Whether molecules a and b hold the same multiset of particle masses (x, y: work for their atoms). */
static int same_composition(const hessfit_model *model, int a, int b, double *x, double *y)
{
    const int na = hessfit_model_n_atoms(model, a), nb = hessfit_model_n_atoms(model, b);
    if (na != nb)
        return 0;
    memcpy(x, model->masses + model->mol_first[a], (size_t)na * sizeof *x);
    memcpy(y, model->masses + model->mol_first[b], (size_t)na * sizeof *y);
    qsort(x, (size_t)na, sizeof *x, ascending);
    qsort(y, (size_t)na, sizeof *y, ascending);
    return memcmp(x, y, (size_t)na * sizeof *x) == 0;
}

void hf_energy_part_destroy(hf_energy_part *p)
{
    if (p == NULL)
        return;
    free(p->targets);
    free(p->reference);
    free(p->qm_relative);
    free(p->mm_relative);
    free(p->mm_kj);
    free(p->dl_de);
    free(p->d_slot);
    free(p);
}

hessfit_status hf_energy_part_create(const hessfit_model *model, const hessfit_energy_target *t, int n, hf_energy_part **out)
{
    const int n_mols = hessfit_model_n_molecules(model);
    *out = NULL;
    if (n < 1 || t == NULL)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "objective: energies: %d targets", n);
    hf_energy_part *p = calloc(1, sizeof *p);
    int *seen = calloc((size_t)n_mols, sizeof *seen);
    double *ma = NULL, *mb = NULL;
    if (p == NULL || seen == NULL) {
        free(seen);
        free(p);
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "objective: energies: no memory");
    }
    p->n = n;
    p->n_mols = n_mols;
    p->targets = malloc((size_t)n * sizeof *p->targets);
    p->reference = malloc((size_t)n * sizeof *p->reference);
    p->qm_relative = malloc((size_t)n * sizeof *p->qm_relative);
    p->mm_relative = malloc((size_t)n * sizeof *p->mm_relative);
    p->mm_kj = malloc((size_t)n_mols * sizeof *p->mm_kj);
    p->dl_de = malloc((size_t)n_mols * sizeof *p->dl_de);
    hessfit_status st = HESSFIT_SUCCESS;
    if (!p->targets || !p->reference || !p->qm_relative || !p->mm_relative || !p->mm_kj || !p->dl_de) {
        st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "objective: energies: no memory for %d targets", n);
        goto done;
    }
    memcpy(p->targets, t, (size_t)n * sizeof *t);
    for (int i = 0; i < n && st == HESSFIT_SUCCESS; i++) {
        const hessfit_energy_target *e = &t[i];
        if (e->mol < 0 || e->mol >= n_mols)
            st = hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "objective: energy target %d: molecule %d outside 1..%d", i + 1,
                          e->mol + 1, n_mols);
        else if (seen[e->mol])
            st = hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "objective: energy target %d: molecule %d already has an energy "
                          "(target %d)", i + 1, e->mol + 1, seen[e->mol]);
        else if (e->group < 0)
            st = hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "objective: energy target %d: group %d (must be >= 0)", i + 1,
                          e->group);
        else if (!isfinite(e->qm_hartree))
            st = hessfit_error(HESSFIT_ERROR_NONFINITE, "objective: energy target %d (molecule %d): the QM energy is %g", i + 1,
                          e->mol + 1, e->qm_hartree);
        else if (!(isfinite(e->weight) && e->weight >= 0.0))
            st = hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "objective: energy target %d (molecule %d): weight %g (must be "
                          "finite and >= 0)", i + 1, e->mol + 1, e->weight);
        else
            seen[e->mol] = i + 1;
    }
    int max_atoms = 1;
    for (int i = 0; i < n && st == HESSFIT_SUCCESS; i++)
        if (hessfit_model_n_atoms(model, t[i].mol) > max_atoms)
            max_atoms = hessfit_model_n_atoms(model, t[i].mol);
    if (st == HESSFIT_SUCCESS && ((ma = malloc((size_t)max_atoms * sizeof *ma)) == NULL ||
                             (mb = malloc((size_t)max_atoms * sizeof *mb)) == NULL))
        st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "objective: energies: no memory");
    /* per group: the reference (lowest QM energy, the first of equals), at least two members, all of
     * one composition (relative energies compare isomers: the same multiset of particle masses) */
    for (int i = 0; i < n && st == HESSFIT_SUCCESS; i++) {
        int ref = i, members = 0;
        for (int j = 0; j < n; j++)
            if (t[j].group == t[i].group) {
                members++;
                if (t[j].qm_hartree < t[ref].qm_hartree || (t[j].qm_hartree == t[ref].qm_hartree && j < ref))
                    ref = j;
            }
        if (members < 2)
            st = hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "objective: energy target %d (molecule %d): group %d has no "
                          "other structure (relative energies need two conformers or more)", i + 1, t[i].mol + 1,
                          t[i].group);
        else if (st == HESSFIT_SUCCESS && !same_composition(model, t[i].mol, t[ref].mol, ma, mb))
            st = hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "objective: energy target %d: molecules %d and %d of group %d do "
                          "not have the same atoms (relative energies need isomers of one molecule)", i + 1,
                          t[i].mol + 1, t[ref].mol + 1, t[i].group);
        p->reference[i] = ref;
        p->qm_relative[i] = (t[i].qm_hartree - t[ref].qm_hartree) * HESSFIT_HARTREE_TO_KCAL_PER_MOL;
        p->mm_relative[i] = NAN;
    }
done:
    free(seen);
    free(ma);
    free(mb);
    if (st != HESSFIT_SUCCESS)
        hf_energy_part_destroy(p);
    else
        *out = p;
    return st;
}

int hf_energy_part_size(const hf_energy_part *p)
{
    return p != NULL ? p->n : 0;
}

const hessfit_energy_target *hf_energy_part_target(const hf_energy_part *p, int i)
{
    return p != NULL && i >= 0 && i < p->n ? &p->targets[i] : NULL;
}

hessfit_status hf_energy_part_evaluate(hf_energy_part *p, hessfit_model *model, double *loss, double *d_slot, double *residuals)
{
    hessfit_status hs;
    hessfit_status st;
    const int n_slots = hessfit_model_n_slots(model);
    if ((st = hf_model_evaluator_sync(model, &model->main)) != HESSFIT_SUCCESS)
        return st;
    hs = hessfit_force_get_molecule_energies(hessfit_model_force(model), hessfit_model_context(model), p->mm_kj, p->n_mols);
    if (hs != HESSFIT_SUCCESS)
        return hf_model_hessfit_error(hs, "hessfit_force_get_molecule_energies");
    double sum = 0.0;
    memset(p->dl_de, 0, (size_t)p->n_mols * sizeof *p->dl_de);
    for (int i = 0; i < p->n; i++) {
        const hessfit_energy_target *e = &p->targets[i];
        const int ref = p->targets[p->reference[i]].mol;
        p->mm_relative[i] = (p->mm_kj[e->mol] - p->mm_kj[ref]) * HESSFIT_KJ_TO_KCAL;
        const double r = e->weight * (p->qm_relative[i] - p->mm_relative[i]);
        sum += r * r;
        if (residuals != NULL)
            residuals[i] = r;
        if (e->mol != ref) { /* dr/dE_i = -w, dr/dE_ref = +w, per kcal/mol; the kernel's E in kJ/mol */
            p->dl_de[e->mol] -= 2.0 * r * e->weight * HESSFIT_KJ_TO_KCAL;
            p->dl_de[ref] += 2.0 * r * e->weight * HESSFIT_KJ_TO_KCAL;
        }
    }
    *loss = sum;
    if (d_slot == NULL || n_slots == 0)
        return HESSFIT_SUCCESS;
    if (n_slots > p->cap_slots) {
        double *grown = realloc(p->d_slot, (size_t)n_slots * sizeof *grown);
        if (grown == NULL)
            return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "objective: energies: no memory for %d slots", n_slots);
        p->d_slot = grown;
        p->cap_slots = n_slots;
    }
    hs = hessfit_force_get_molecule_energy_derivatives(hessfit_model_force(model), hessfit_model_context(model), p->dl_de,
                                                       p->n_mols, p->d_slot, n_slots);
    if (hs != HESSFIT_SUCCESS)
        return hf_model_hessfit_error(hs, "hessfit_force_get_molecule_energy_derivatives");
    for (int s = 0; s < n_slots; s++)
        d_slot[s] += p->d_slot[s];
    return HESSFIT_SUCCESS;
}

void hf_energy_part_values(const hf_energy_part *p, double *qm, double *mm)
{
    for (int i = 0; p != NULL && i < p->n; i++) {
        if (qm != NULL)
            qm[i] = p->qm_relative[i];
        if (mm != NULL)
            mm[i] = p->mm_relative[i];
    }
}

hessfit_status hf_energy_part_jacobian(hf_energy_part *p, hessfit_model *model, const int *used, int n_used,
                                       double *jac_t)
{
    const int n_slots = hessfit_model_n_slots(model);
    memset(jac_t, 0, (size_t)n_used * (size_t)p->n * sizeof *jac_t);
    if (n_slots == 0 || n_used == 0)
        return HESSFIT_SUCCESS;
    double *de = malloc((size_t)n_slots * sizeof *de);
    if (de == NULL)
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "objective: energies: no memory for %d slots", n_slots);
    hessfit_status st = HESSFIT_SUCCESS;
    /* per target molecule m: dE_m/dslot, added to the rows of m (-w) and of the targets whose reference m is (+w) */
    for (int t = 0; t < p->n && st == HESSFIT_SUCCESS; t++) {
        const int mol = p->targets[t].mol;
        memset(p->dl_de, 0, (size_t)p->n_mols * sizeof *p->dl_de);
        p->dl_de[mol] = 1.0;
        const hessfit_status hs = hessfit_force_get_molecule_energy_derivatives(
            hessfit_model_force(model), hessfit_model_context(model), p->dl_de, p->n_mols, de, n_slots);
        if (hs != HESSFIT_SUCCESS) {
            st = hf_model_hessfit_error(hs, "hessfit_force_get_molecule_energy_derivatives");
            break;
        }
        for (int i = 0; i < p->n; i++) {
            const int ref = p->reference[i];
            if (ref == i || (i != t && ref != t))
                continue;
            /* r_i = w (dE_qm - (E_i - E_ref) KJ_TO_KCAL): dr_i/dE_i = -w KJ_TO_KCAL, dr_i/dE_ref = +w KJ_TO_KCAL */
            const double c = (i == t ? -1.0 : 1.0) * p->targets[i].weight * HESSFIT_KJ_TO_KCAL;
            if (c == 0.0)
                continue;
            for (int k = 0; k < n_used; k++)
                jac_t[(size_t)k * p->n + i] += c * de[used[k]];
        }
    }
    free(de);
    return st;
}
