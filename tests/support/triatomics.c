/* Bent triatomics in one force and Context (triatomics.h). */
#include "triatomics.h"
#include "test_util.h"

const double triatomic_masses[3] = {15.994915, 1.007825, 1.007825};

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
