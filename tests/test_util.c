#include "test_util.h"
#include <math.h>
#include <string.h>

const char *test_platform_name(int argc, char **argv) {
    return argc > 1 ? argv[1] : "Reference";
}

void test_load_plugins(void) {
    static int loaded = 0;
    if (loaded)
        return;
    loaded = 1;
    OpenMM_StringArray *names = OpenMM_Platform_loadPluginsFromDirectory(HESSFIT_PLUGIN_DIR);
    OpenMM_StringArray *failures = OpenMM_Platform_getPluginLoadFailures();
    int nfail = OpenMM_StringArray_getSize(failures);
    for (int i = 0; i < nfail; i++)
        fprintf(stderr, "plugin load failure: %s\n", OpenMM_StringArray_get(failures, i));
    CHECK(nfail == 0, "%d plugin(s) failed to load from %s", nfail, HESSFIT_PLUGIN_DIR);
    CHECK(OpenMM_StringArray_getSize(names) >= 1, "no plugin found in %s", HESSFIT_PLUGIN_DIR);
    OpenMM_StringArray_destroy(names);
    OpenMM_StringArray_destroy(failures);
}

const char *test_source_path(const char *relative) {
    static char buffers[8][4096];
    static int next = 0;
    char *buf = buffers[next++ % 8];
    snprintf(buf, sizeof buffers[0], "%s/%s", HESSFIT_SOURCE_DIR, relative);
    return buf;
}

char *test_source_path_dup(const char *relative) {
    const char *p = test_source_path(relative);
    char *c = malloc(strlen(p) + 1);
    CHECK(c != NULL, "out of memory");
    strcpy(c, p);
    return c;
}

void test_set_positions(OpenMM_Context *context, const double *pos_nm, int n) {
    OpenMM_Vec3Array *positions = OpenMM_Vec3Array_create(n);
    for (int i = 0; i < n; i++) {
        OpenMM_Vec3 v = {pos_nm[3 * i], pos_nm[3 * i + 1], pos_nm[3 * i + 2]};
        OpenMM_Vec3Array_set(positions, i, v);
    }
    OpenMM_Context_setPositions(context, positions);
    OpenMM_Vec3Array_destroy(positions);
}

OpenMM_Context *test_create_context(OpenMM_System *system, const char *platform_name, const double *pos_nm, int n,
                                    double dt_ps, OpenMM_Integrator **integrator) {
    test_load_plugins();
    OpenMM_Platform *platform = OpenMM_Platform_getPlatformByName(platform_name);
    CHECK(platform != NULL, "no platform %s", platform_name);
    OpenMM_VerletIntegrator *verlet = OpenMM_VerletIntegrator_create(dt_ps);
    if (strcmp(platform_name, "Reference") != 0 && strcmp(platform_name, "CPU") != 0)
        OpenMM_Platform_setPropertyDefaultValue(platform, "Precision", "double");
    OpenMM_Context *context = OpenMM_Context_create_2(system, (OpenMM_Integrator *) verlet, platform);
    test_set_positions(context, pos_nm, n);
    *integrator = (OpenMM_Integrator *) verlet;
    return context;
}

double test_energy_forces(OpenMM_Context *context, int groups_mask, double *forces, int n) {
    int types = OpenMM_State_Energy | (forces ? OpenMM_State_Forces : 0);
    OpenMM_State *state = OpenMM_Context_getState_2(context, types, 0, groups_mask);
    double energy = OpenMM_State_getPotentialEnergy(state);
    if (forces) {
        const OpenMM_Vec3Array *f = OpenMM_State_getForces(state);
        CHECK(OpenMM_Vec3Array_getSize(f) == n, "force array has %d entries, expected %d",
              OpenMM_Vec3Array_getSize(f), n);
        for (int i = 0; i < n; i++) {
            const OpenMM_Vec3 *v = OpenMM_Vec3Array_get(f, i);
            forces[3 * i] = v->x;
            forces[3 * i + 1] = v->y;
            forces[3 * i + 2] = v->z;
        }
    }
    OpenMM_State_destroy(state);
    return energy;
}

double test_max_abs_diff(const double *a, const double *b, size_t n) {
    double m = 0.0;
    for (size_t i = 0; i < n; i++)
        m = fmax(m, fabs(a[i] - b[i]));
    return m;
}

double test_max_abs(const double *a, size_t n) {
    double m = 0.0;
    for (size_t i = 0; i < n; i++)
        m = fmax(m, fabs(a[i]));
    return m;
}

static unsigned long long rng_state = 0x9E3779B97F4A7C15ULL;

void test_seed(unsigned long long seed) {
    rng_state = seed ? seed : 0x9E3779B97F4A7C15ULL;
}

double test_random(void) {
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (double) ((rng_state * 2685821657736338717ULL) >> 11) * (1.0 / 9007199254740992.0);
}

void test_rotate(double *pos, int n, const double axis[3], double angle) {
    double len = sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
    double u[3] = {axis[0] / len, axis[1] / len, axis[2] / len};
    double c = cos(angle), s = sin(angle), t = 1.0 - c;
    double r[3][3] = {
        {t * u[0] * u[0] + c, t * u[0] * u[1] - s * u[2], t * u[0] * u[2] + s * u[1]},
        {t * u[0] * u[1] + s * u[2], t * u[1] * u[1] + c, t * u[1] * u[2] - s * u[0]},
        {t * u[0] * u[2] - s * u[1], t * u[1] * u[2] + s * u[0], t * u[2] * u[2] + c}};
    for (int i = 0; i < n; i++) {
        double x[3] = {pos[3 * i], pos[3 * i + 1], pos[3 * i + 2]};
        for (int a = 0; a < 3; a++)
            pos[3 * i + a] = r[a][0] * x[0] + r[a][1] * x[1] + r[a][2] * x[2];
    }
}
