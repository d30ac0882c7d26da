/* Bent triatomics in one force and Context (triatomics.h). */
#include "triatomics.h"
#include "test_util.h"

const double triatomic_masses[3] = {15.994915, 1.007825, 1.007825};

void triatomic_positions(double *pos, int n_mol)
{
    for (int m = 0; m < n_mol; m++) {
        double *x = pos + 9 * m;
        const double r1 = test_uniform(0.092, 0.100), r2 = test_uniform(0.092, 0.100);
        const double theta = test_uniform(1.75, 1.95);
        const double off[3] = {0.5 * m, test_uniform(-0.1, 0.1), test_uniform(-0.1, 0.1)};
        const double p[9] = {0, 0, 0, r1, 0, 0, r2 * cos(theta), r2 * sin(theta), 0};
        for (int i = 0; i < 9; i++)
            x[i] = p[i] + off[i % 3];
        test_rotate(x, 3, (double[3]){test_uniform(-1, 1), test_uniform(-1, 1), 1.0}, test_uniform(0, 3));
    }
}

void triatomic_objective(hessfit_molecule_objective *o, const double *freq_targets, const double *freq_weights, int n_freq,
                         const double *hess_targets, const double *hess_weights)
{
    hessfit_molecule_objective_init(o);
    o->masses = triatomic_masses;
    o->n_masses = 3;
    if (freq_targets != NULL) {
        o->frequency_pairing = HESSFIT_PAIR_BY_POSITION;
        o->frequency_targets = freq_targets;
        o->n_frequency_targets = n_freq;
        o->frequency_weights = freq_weights;
        o->n_frequency_weights = n_freq;
    }
    if (hess_targets != NULL) {
        o->hessian_targets = hess_targets;
        o->n_hessian_targets = 81;
        o->hessian_weights = hess_weights;
        o->n_hessian_weights = 81;
    }
}

void triatomic_set_create(triatomic_set *s, int n_mol, const char *platform, const double *pos)
{
    s->system = OpenMM_System_create();
    HF_OK(hessfit_force_create(&s->force));
    const double table[TRIATOMIC_SLOTS] = {2.0e5, 0.0957, 350.0, 1.824};
    for (int k = 0; k < TRIATOMIC_SLOTS; k++)
        HF_OK(hessfit_force_add_parameter(s->force, table[k], NULL));
    for (int m = 0; m < n_mol; m++) {
        int atoms[3];
        for (int a = 0; a < 3; a++) {
            OpenMM_System_addParticle(s->system, triatomic_masses[a]);
            HF_OK(hessfit_force_add_particle(s->force, HESSFIT_NO_SLOT, HESSFIT_NO_SLOT, HESSFIT_NO_SLOT, &atoms[a]));
        }
        HF_OK(hessfit_force_add_bond(s->force, atoms[0], atoms[1], 0, 1, NULL));
        HF_OK(hessfit_force_add_bond(s->force, atoms[0], atoms[2], 0, 1, NULL));
        HF_OK(hessfit_force_add_angle(s->force, atoms[1], atoms[0], atoms[2], 2, 3, NULL));
        HF_OK(hessfit_force_add_molecule(s->force, atoms, 3, NULL));
    }
    HF_OK(hessfit_force_add_to_system(s->force, s->system, NULL));
    s->context = test_create_context(s->system, platform, pos, 3 * n_mol, 0.001, &s->integrator);
}

void triatomic_set_destroy(triatomic_set *s)
{
    OpenMM_Context_destroy(s->context);
    OpenMM_Integrator_destroy(s->integrator);
    hessfit_force_destroy(s->force);
    OpenMM_System_destroy(s->system);
}
