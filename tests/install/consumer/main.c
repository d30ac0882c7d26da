/*
 * A program built against an installed hessfit, the way a user builds one: with find_package(hessfit)
 * (CMakeLists.txt here) or with `cc main.c $(pkg-config --cflags --libs hessfit)`. It uses the C
 * API only.
 *
 * One harmonic bond, E = k (r - r0)^2 with k = 1000 kJ/mol/nm^2, r0 = 0.1 nm, stretched to
 * r = 0.12 nm along x, on the Reference platform. Asserts (1e-9 relative):
 *   E = k (r - r0)^2 = 0.4 kJ/mol
 *   H(x1, x1) = 2k = 2000 and H(y1, y1) = 2k (r - r0) / r = 333.33... kJ/mol/nm^2
 *   dE/dk = (r - r0)^2 = 4e-4, dE/dr0 = -2k (r - r0) = -40
 *   hessfit_version() equals the headers' HESSFIT_VERSION_STRING and hessfit_version_numbers().
 * Usage: consumer <hessfit plugin directory>
 */
#include "hessfit.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

static void expect(const char *what, double got, double want) {
    int ok = fabs(got - want) <= 1e-9 * fabs(want);
    printf("%-10s %.15g (expected %.15g)%s\n", what, got, want, ok ? "" : "  FAILED");
    failures += !ok;
}

static void require(hessfit_status status, const char *call) {
    if (status != HESSFIT_SUCCESS) {
        fprintf(stderr, "%s: %s (%s)\n", call, hessfit_status_string(status), hessfit_last_error());
        exit(1);
    }
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s <hessfit plugin directory>\n", argv[0]);
        return 2;
    }
    int major = -1, minor = -1, patch = -1;
    hessfit_version_numbers(&major, &minor, &patch);
    char numbers[64];
    snprintf(numbers, sizeof numbers, "%d.%d.%d", major, minor, patch);
    printf("hessfit %s (headers %s)\n", hessfit_version(), HESSFIT_VERSION_STRING);
    if (strcmp(hessfit_version(), HESSFIT_VERSION_STRING) != 0 || strcmp(numbers, hessfit_version()) != 0) {
        fprintf(stderr, "version mismatch: library %s, numbers %s, headers %s\n", hessfit_version(), numbers,
                HESSFIT_VERSION_STRING);
        return 1;
    }

    OpenMM_StringArray *loaded = OpenMM_Platform_loadPluginsFromDirectory(argv[1]);
    OpenMM_StringArray_destroy(loaded);

    const double k = 1000.0, r0 = 0.1, r = 0.12;
    OpenMM_System *system = OpenMM_System_create();
    OpenMM_System_addParticle(system, 12.0);
    OpenMM_System_addParticle(system, 16.0);
    hessfit_force *force;
    int k_slot, r0_slot;
    require(hessfit_force_create(&force), "hessfit_force_create");
    require(hessfit_force_add_parameter(force, k, &k_slot), "hessfit_force_add_parameter");
    require(hessfit_force_add_parameter(force, r0, &r0_slot), "hessfit_force_add_parameter");
    for (int i = 0; i < 2; i++)
        require(hessfit_force_add_particle(force, HESSFIT_NO_SLOT, HESSFIT_NO_SLOT, HESSFIT_NO_SLOT, NULL),
                "hessfit_force_add_particle");
    require(hessfit_force_add_bond(force, 0, 1, k_slot, r0_slot, NULL), "hessfit_force_add_bond");
    require(hessfit_force_add_to_system(force, system, NULL), "hessfit_force_add_to_system");

    OpenMM_VerletIntegrator *integrator = OpenMM_VerletIntegrator_create(0.001);
    OpenMM_Context *context;
    require(hessfit_context_create(system, (OpenMM_Integrator *) integrator, "Reference", NULL, &context),
            "hessfit_context_create");
    OpenMM_Vec3Array *positions = OpenMM_Vec3Array_create(2);
    OpenMM_Vec3 p0 = {0.0, 0.0, 0.0}, p1 = {r, 0.0, 0.0};
    OpenMM_Vec3Array_set(positions, 0, p0);
    OpenMM_Vec3Array_set(positions, 1, p1);
    OpenMM_Context_setPositions(context, positions);

    double energy, hessian[36], dedp[2];
    require(hessfit_force_get_energy_forces(force, context, &energy, NULL), "hessfit_force_get_energy_forces");
    require(hessfit_force_get_hessian_blocks(force, context, hessian, 36), "hessfit_force_get_hessian_blocks");
    require(hessfit_force_get_parameter_derivatives(force, context, dedp, 2), "hessfit_force_get_parameter_derivatives");
    expect("E", energy, k * (r - r0) * (r - r0));
    expect("H(x1,x1)", hessian[0], 2.0 * k);
    expect("H(y1,y1)", hessian[6 + 1], 2.0 * k * (r - r0) / r);
    expect("dE/dk", dedp[k_slot], (r - r0) * (r - r0));
    expect("dE/dr0", dedp[r0_slot], -2.0 * k * (r - r0));

    OpenMM_Vec3Array_destroy(positions);
    OpenMM_Context_destroy(context);
    OpenMM_VerletIntegrator_destroy(integrator);
    hessfit_force_destroy(force);
    OpenMM_System_destroy(system);
    printf("%s\n", failures ? "consumer FAILED" : "consumer passed");
    return failures ? 1 : 0;
}
