/*
 * test_plugin_load_order: hessfit's kernels register with the platforms that exist when its
 * plugins load, so a program that loads hessfit's plugin directory BEFORE OpenMM's own (which
 * registers the CPU, OpenCL and CUDA platforms) has no HessianForce kernel on the CPU platform.
 *
 *  1. hessfit's plugins first, then OpenMM's: a Reference Context works (Reference is built into
 *     libOpenMM); a CPU Context fails with HESSFIT_ERROR_OPENMM, and the message keeps OpenMM's
 *     words and says what to do: load OpenMM's plugins first, then hessfit's directory.
 *  2. hessfit's plugin directory loaded again (now after OpenMM's): the CPU Context works and its
 *     energy and forces equal the Reference Context's bit for bit (the CPU platform runs the
 *     Reference kernels), and equal k (r - r0)^2 by hand.
 * Runs as its own process: the load order cannot be undone within one.
 */
#include "test_util.h"

#include <string.h>

static const char *env_or(const char *name, const char *compiled) {
    const char *value = getenv(name);
    return value != NULL && value[0] != '\0' ? value : compiled;
}

static void load_directory(const char *dir) {
    OpenMM_StringArray *names = OpenMM_Platform_loadPluginsFromDirectory(dir);
    OpenMM_StringArray_destroy(names);
}

/* A bond of two atoms, E = k (r - r0)^2, in a fresh System. */
#define K_BOND 1200.0
#define R0 0.11
static const double POS[6] = {0.0, 0.0, 0.0, 0.03, 0.1, -0.04};

static OpenMM_System *bond_system(void) {
    OpenMM_System *system = OpenMM_System_create();
    OpenMM_System_addParticle(system, 12.0);
    OpenMM_System_addParticle(system, 16.0);
    hessfit_force *force;
    int k, r0, index;
    HF_OK(hessfit_force_create(&force));
    for (int i = 0; i < 2; i++)
        HF_OK(hessfit_force_add_particle(force, HESSFIT_NO_SLOT, HESSFIT_NO_SLOT, HESSFIT_NO_SLOT, &index));
    HF_OK(hessfit_force_add_parameter(force, K_BOND, &k));
    HF_OK(hessfit_force_add_parameter(force, R0, &r0));
    HF_OK(hessfit_force_add_bond(force, 0, 1, k, r0, &index));
    HF_OK(hessfit_force_add_to_system(force, system, &index));
    hessfit_force_destroy(force);
    return system;
}

/* Energy and forces on the named platform; returns the status of the Context's creation. */
static hessfit_status evaluate(const char *platform, double *energy, double forces[6]) {
    OpenMM_System *system = bond_system();
    OpenMM_VerletIntegrator *verlet = OpenMM_VerletIntegrator_create(0.001);
    OpenMM_Context *context = NULL;
    hessfit_status st = hessfit_context_create(system, (OpenMM_Integrator *) verlet, platform, NULL, &context);
    if (st == HESSFIT_SUCCESS) {
        test_set_positions(context, POS, 2);
        OpenMM_State *state = OpenMM_Context_getState(context, OpenMM_State_Energy | OpenMM_State_Forces, 0);
        *energy = OpenMM_State_getPotentialEnergy(state);
        const OpenMM_Vec3Array *f = OpenMM_State_getForces(state);
        for (int i = 0; i < 2; i++) {
            const OpenMM_Vec3 *v = OpenMM_Vec3Array_get(f, i);
            forces[3 * i] = v->x;
            forces[3 * i + 1] = v->y;
            forces[3 * i + 2] = v->z;
        }
        OpenMM_State_destroy(state);
        OpenMM_Context_destroy(context);
    }
    OpenMM_VerletIntegrator_destroy(verlet);
    OpenMM_System_destroy(system);
    return st;
}

int main(void) {
    const char *hessfit_dir = env_or("HESSFIT_PLUGIN_DIR", HESSFIT_PLUGIN_DIR);
    const char *openmm_dir = env_or("HESSFIT_OPENMM_PLUGIN_DIR", HESSFIT_OPENMM_PLUGIN_DIR);
    load_directory(hessfit_dir);
    load_directory(openmm_dir);
    CHECK(OpenMM_Platform_getPlatformByName("CPU") != NULL, "OpenMM's CPU platform did not load from %s", openmm_dir);

    double e_ref, f_ref[6], e_cpu, f_cpu[6];
    HF_OK(evaluate("Reference", &e_ref, f_ref));
    double r2 = 0.0;
    for (int c = 0; c < 3; c++)
        r2 += (POS[3 + c] - POS[c]) * (POS[3 + c] - POS[c]);
    const double dr = sqrt(r2) - R0;
    CHECK_CLOSE(e_ref, K_BOND * dr * dr, 1e-14, K_BOND * dr * dr, "Reference energy");

    /* 1. the CPU platform has no HessianForce kernel yet */
    hessfit_status st = evaluate("CPU", &e_cpu, f_cpu);
    const char *message = hessfit_last_error();
    printf("CPU Context with hessfit's plugins loaded first: %s\n  %s\n", hessfit_status_string(st), message);
    CHECK(st == HESSFIT_ERROR_OPENMM, "expected HESSFIT_ERROR_OPENMM, got %s", hessfit_status_string(st));
    CHECK(strstr(message, "required kernels") != NULL, "OpenMM's own words are missing: %s", message);
    CHECK(strstr(message, "load OpenMM's plugins first") != NULL, "no load-order hint: %s", message);
    CHECK(strstr(message, "hessfit's plugin directory") != NULL, "the hint does not name hessfit's directory: %s",
          message);

    /* 2. loading hessfit's plugins after OpenMM's registers the CPU kernels */
    load_directory(hessfit_dir);
    HF_OK(evaluate("CPU", &e_cpu, f_cpu));
    CHECK(e_cpu == e_ref, "CPU energy %.17g differs from Reference %.17g", e_cpu, e_ref);
    for (int i = 0; i < 6; i++)
        CHECK(f_cpu[i] == f_ref[i], "CPU force %d: %.17g, Reference %.17g", i, f_cpu[i], f_ref[i]);
    printf("CPU after reloading hessfit's plugins: E = %.15g kJ/mol, equal to Reference\n", e_cpu);
    printf("test_plugin_load_order: all checks passed\n");
    return 0;
}
