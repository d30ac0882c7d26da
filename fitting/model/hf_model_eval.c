/*
 * Evaluations of the fit model at the molecules' coordinates: Hessian blocks (one kernel call
 * for all molecules, kept until the table changes), energies and the energy's gradient in the
 * free parameters. Units out: Hartree/Bohr^2 and kcal/mol (hessfit_units.h).
 */
#include "hf_model_internal.h"

#include "hessfit_units.h"

#include <stdlib.h>
#include <string.h>

static hessfit_status compute_blocks(hessfit_model *m)
{
    hessfit_status st;
    hessfit_status hs;
    if ((st = hf_model_evaluator_sync(m, &m->main)) != HESSFIT_SUCCESS)
        return st;
    if (m->blocks_valid)
        return HESSFIT_SUCCESS;
    hs = hessfit_force_get_hessian_blocks(m->main.force, m->main.context, m->blocks_kj, m->block_offset[m->n_mols]);
    if (hs != HESSFIT_SUCCESS)
        return hf_model_hessfit_error(hs, "hessfit_force_get_hessian_blocks");
    m->blocks_valid = 1;
    return HESSFIT_SUCCESS;
}

static void to_hartree_bohr2(const double *kj, long long n, double *out)
{
    for (long long i = 0; i < n; i++)
        out[i] = kj[i] * HESSFIT_KJ_PER_MOL_PER_NM2_TO_HARTREE_PER_BOHR2;
}

hessfit_status hessfit_model_hessian(hessfit_model *m, int mol, double *hessian)
{
    hessfit_status st;
    if (m == NULL || hessian == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "fit model: %s is NULL", m == NULL ? "model" : "hessian");
    if (mol < 0 || mol >= m->n_mols)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "fit model: molecule index %d outside [0, %d)", mol, m->n_mols);
    if ((st = compute_blocks(m)) != HESSFIT_SUCCESS)
        return st;
    to_hartree_bohr2(m->blocks_kj + m->block_offset[mol], m->block_offset[mol + 1] - m->block_offset[mol], hessian);
    return HESSFIT_SUCCESS;
}

hessfit_status hessfit_model_hessians_all(hessfit_model *m, double *hessians)
{
    hessfit_status st;
    if (m == NULL || hessians == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "fit model: %s is NULL", m == NULL ? "model" : "hessians");
    if ((st = compute_blocks(m)) != HESSFIT_SUCCESS)
        return st;
    to_hartree_bohr2(m->blocks_kj, m->block_offset[m->n_mols], hessians);
    return HESSFIT_SUCCESS;
}

/* Molecule mol's own Context (built on first use), with the current table. */
static hessfit_status side_evaluator(hessfit_model *m, int mol, hf_model_evaluator **ev)
{
    hessfit_status st;
    if (mol < 0 || mol >= m->n_mols)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "fit model: molecule index %d outside [0, %d)", mol, m->n_mols);
    *ev = &m->side[mol];
    if ((*ev)->context == NULL && (st = hf_model_evaluator_build(m, mol, mol + 1, *ev)) != HESSFIT_SUCCESS)
        return st;
    return hf_model_evaluator_sync(m, *ev);
}

hessfit_status hessfit_model_energy(hessfit_model *m, int mol, double *energy)
{
    double e_kj = 0.0;
    hessfit_status st;
    hessfit_status hs;
    if (m == NULL || energy == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "fit model: %s is NULL", m == NULL ? "model" : "energy");
    hf_model_evaluator *ev = NULL;
    if ((st = side_evaluator(m, mol, &ev)) != HESSFIT_SUCCESS)
        return st;
    if ((hs = hessfit_force_get_energy_forces(ev->force, ev->context, &e_kj, NULL)) != HESSFIT_SUCCESS)
        return hf_model_hessfit_error(hs, "hessfit_force_get_energy_forces");
    *energy = e_kj * HESSFIT_KJ_TO_KCAL;
    return HESSFIT_SUCCESS;
}

hessfit_status hessfit_model_forces(hessfit_model *m, int mol, double *forces)
{
    hf_model_evaluator *ev = NULL;
    hessfit_status st;
    hessfit_status hs;
    double e_kj;
    if (m == NULL || forces == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "fit model: %s is NULL", m == NULL ? "model" : "forces");
    if ((st = side_evaluator(m, mol, &ev)) != HESSFIT_SUCCESS)
        return st;
    const int n3 = 3 * (m->mol_first[mol + 1] - m->mol_first[mol]);
    for (int i = 0; i < n3; i++)
        forces[i] = 0.0; /* hessfit_force_get_energy_forces adds */
    if ((hs = hessfit_force_get_energy_forces(ev->force, ev->context, &e_kj, forces)) != HESSFIT_SUCCESS)
        return hf_model_hessfit_error(hs, "hessfit_force_get_energy_forces");
    for (int i = 0; i < n3; i++)
        forces[i] *= HESSFIT_KJ_PER_MOL_PER_NM_TO_KCAL_PER_MOL_PER_A;
    return HESSFIT_SUCCESS;
}

hessfit_status hessfit_model_minimize(hessfit_model *m, int mol, double tolerance, double *coords)
{
    hf_model_evaluator *ev = NULL;
    hessfit_status st;
    if (m == NULL || coords == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "fit model: %s is NULL", m == NULL ? "model" : "coords");
    if (!(tolerance > 0.0 && tolerance <= 1e300))
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "fit model: minimisation tolerance %g kcal/mol/A (finite, > 0)",
                             tolerance);
    if ((st = side_evaluator(m, mol, &ev)) != HESSFIT_SUCCESS)
        return st;
    const int n = m->mol_first[mol + 1] - m->mol_first[mol];
    const double *qm_nm = m->positions_nm + 3 * (size_t)m->mol_first[mol];
    hessfit_status hs = hessfit_context_minimize(ev->context, tolerance / HESSFIT_KJ_PER_MOL_PER_NM_TO_KCAL_PER_MOL_PER_A, 0);
    if (hs == HESSFIT_SUCCESS && (st = hf_model_context_get_positions(ev->context, n, coords)) == HESSFIT_SUCCESS)
        for (int i = 0; i < 3 * n; i++)
            coords[i] *= HESSFIT_NM_TO_ANGSTROM;
    hf_model_context_set_positions(ev->context, n, qm_nm);
    if (st != HESSFIT_SUCCESS)
        return st;
    if (hs != HESSFIT_SUCCESS)
        return hessfit_error(hs, "fit model: minimising molecule %d: %s", mol + 1, hessfit_last_error());
    return HESSFIT_SUCCESS;
}

hessfit_status hessfit_model_total_energy(hessfit_model *m, double *energy)
{
    double e_kj = 0.0;
    hessfit_status st;
    hessfit_status hs;
    if (m == NULL || energy == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "fit model: %s is NULL", m == NULL ? "model" : "energy");
    if ((st = hf_model_evaluator_sync(m, &m->main)) != HESSFIT_SUCCESS)
        return st;
    if ((hs = hessfit_force_get_energy_forces(m->main.force, m->main.context, &e_kj, NULL)) != HESSFIT_SUCCESS)
        return hf_model_hessfit_error(hs, "hessfit_force_get_energy_forces");
    *energy = e_kj * HESSFIT_KJ_TO_KCAL;
    return HESSFIT_SUCCESS;
}

hessfit_status hessfit_model_energy_gradient(hessfit_model *m, double *d_free)
{
    double *d_slot;
    hessfit_status st;
    hessfit_status hs;
    if (m == NULL || (d_free == NULL && m->n_free > 0))
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "fit model: %s is NULL", m == NULL ? "model" : "d_free");
    if (m->n_free == 0)
        return HESSFIT_SUCCESS;
    if ((st = hf_model_evaluator_sync(m, &m->main)) != HESSFIT_SUCCESS)
        return st;
    if ((d_slot = malloc((size_t)m->n_slots * sizeof *d_slot)) == NULL)
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "fit model: no memory for %d slot derivatives", m->n_slots);
    hs = hessfit_force_get_parameter_derivatives(m->main.force, m->main.context, d_slot, m->n_slots);
    if (hs != HESSFIT_SUCCESS) {
        free(d_slot);
        return hf_model_hessfit_error(hs, "hessfit_force_get_parameter_derivatives");
    }
    st = hessfit_model_slot_gradient_to_free(m, d_slot, d_free); /* kJ/mol per canonical unit */
    for (int i = 0; i < m->n_free && st == HESSFIT_SUCCESS; i++)
        d_free[i] *= HESSFIT_KJ_TO_KCAL;
    free(d_slot);
    return st;
}
