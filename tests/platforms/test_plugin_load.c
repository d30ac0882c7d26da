/*
 * test_plugin_load: the plugin as a plain C program sees it.
 *
 *  1. OpenMM_Platform_loadPluginsFromDirectory(HESSFIT_PLUGIN_DIR), called directly (not through
 *     test_util's helper): the returned list names libHessFitPluginReference.so and OpenMM's list
 *     of load failures is empty.
 *  2. A two-atom System with a hessfit_force holding one harmonic bond, in a Reference Context
 *     created with OpenMM's own C API: the energy equals k (r - r0)^2 computed by hand (1e-14
 *     relative) and the forces equal -+2k (r - r0) u (1e-13 relative).
 *  3. OpenMM_VerletIntegrator_step moves the atoms as a harmonic oscillator of angular frequency
 *     omega = sqrt(2k/mu) (E = k x^2 is a spring of constant 2k): the positions after n steps
 *     (a) equal the exact leap-frog recurrence to rounding (1e-9 of the amplitude),
 *     (b) equal the analytic solution r0 + A cos(omega t) to leap-frog accuracy, with an error
 *         that falls 4x when dt is halved (second order), and the centre of mass stays put.
 */
#include "test_util.h"
#include <string.h>

static const char *basename_of(const char *path) {
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* Geometry of the run: a bond along u through a fixed centre of mass. */
#define M1 12.0     /* amu */
#define M2 16.0
#define K_BOND 1500.0  /* kJ/mol/nm^2, E = k (r - r0)^2 */
#define R0 0.12     /* nm */
#define AMP 0.01    /* nm, initial stretch */

static const double U[3] = {1.0 / 3.0, 2.0 / 3.0, 2.0 / 3.0};   /* unit bond direction */
static const double COM[3] = {0.5, 0.3, -0.2};                 /* centre of mass, nm */

/* Positions (3 x 2) of the two atoms for bond length r. */
static void positions_for(double r, double *pos) {
    const double M = M1 + M2;
    for (int c = 0; c < 3; c++) {
        pos[c] = COM[c] - (M2 / M) * r * U[c];
        pos[3 + c] = COM[c] + (M1 / M) * r * U[c];
    }
}

static void set_velocities(OpenMM_Context *context, double sdot) {
    const double M = M1 + M2;
    OpenMM_Vec3Array *v = OpenMM_Vec3Array_create(2);
    OpenMM_Vec3 v1 = {-(M2 / M) * sdot * U[0], -(M2 / M) * sdot * U[1], -(M2 / M) * sdot * U[2]};
    OpenMM_Vec3 v2 = {(M1 / M) * sdot * U[0], (M1 / M) * sdot * U[1], (M1 / M) * sdot * U[2]};
    OpenMM_Vec3Array_set(v, 0, v1);
    OpenMM_Vec3Array_set(v, 1, v2);
    OpenMM_Context_setVelocities(context, v);
    OpenMM_Vec3Array_destroy(v);
}

static void set_positions(OpenMM_Context *context, const double *pos) {
    OpenMM_Vec3Array *p = OpenMM_Vec3Array_create(2);
    for (int i = 0; i < 2; i++) {
        OpenMM_Vec3 v = {pos[3 * i], pos[3 * i + 1], pos[3 * i + 2]};
        OpenMM_Vec3Array_set(p, i, v);
    }
    OpenMM_Context_setPositions(context, p);
    OpenMM_Vec3Array_destroy(p);
}

static void get_positions(OpenMM_Context *context, double *pos) {
    OpenMM_State *state = OpenMM_Context_getState(context, OpenMM_State_Positions, 0);
    const OpenMM_Vec3Array *p = OpenMM_State_getPositions(state);
    CHECK(OpenMM_Vec3Array_getSize(p) == 2, "got %d positions", OpenMM_Vec3Array_getSize(p));
    for (int i = 0; i < 2; i++) {
        const OpenMM_Vec3 *v = OpenMM_Vec3Array_get(p, i);
        pos[3 * i] = v->x;
        pos[3 * i + 1] = v->y;
        pos[3 * i + 2] = v->z;
    }
    OpenMM_State_destroy(state);
}

/*
 * Run n leap-frog steps of size dt from s(0) = AMP, with the half-step velocity the analytic
 * solution s(t) = AMP cos(omega t) has at t = -dt/2 (OpenMM's VerletIntegrator is leap-frog: the
 * velocity it holds is v(t - dt/2)). Returns the max deviation from the analytic solution; sets
 * *max_discrete to the max deviation from the exact leap-frog recurrence and checks the centre of
 * mass and the bond direction.
 */
static double run_oscillator(OpenMM_Context *context, OpenMM_VerletIntegrator *verlet, double dt, int n,
                             int chunk, double omega, double *max_discrete) {
    double pos[6];
    OpenMM_Integrator_setStepSize((OpenMM_Integrator *) verlet, dt);
    positions_for(R0 + AMP, pos);
    set_positions(context, pos);
    const double w_half = AMP * omega * sin(0.5 * omega * dt); /* ds/dt at t = -dt/2 */
    set_velocities(context, w_half);

    /* the exact leap-frog recurrence of the relative coordinate s = r - r0 */
    double s = AMP, w = w_half, max_analytic = 0.0;
    *max_discrete = 0.0;
    for (int done = 0; done < n; done += chunk) {
        OpenMM_VerletIntegrator_step(verlet, chunk);
        for (int i = 0; i < chunk; i++) {
            w -= omega * omega * s * dt;
            s += w * dt;
        }
        get_positions(context, pos);
        double d[3], com[3], r = 0.0;
        for (int c = 0; c < 3; c++) {
            d[c] = pos[3 + c] - pos[c];
            r += d[c] * d[c];
            com[c] = (M1 * pos[c] + M2 * pos[3 + c]) / (M1 + M2);
        }
        r = sqrt(r);
        for (int c = 0; c < 3; c++) {
            CHECK_CLOSE(com[c], COM[c], 1e-12, 1.0, "centre of mass moved");
            CHECK_CLOSE(d[c] / r, U[c], 1e-12, 1.0, "bond direction rotated");
        }
        const double t = (done + chunk) * dt;
        const double s_md = r - R0;
        *max_discrete = fmax(*max_discrete, fabs(s_md - s));
        max_analytic = fmax(max_analytic, fabs(s_md - AMP * cos(omega * t)));
    }
    return max_analytic;
}

int main(void) {
    /* ---- 1. load the plugins ourselves --------------------------------------------------- */
    OpenMM_StringArray *loaded = OpenMM_Platform_loadPluginsFromDirectory(HESSFIT_PLUGIN_DIR);
    OpenMM_StringArray *failures = OpenMM_Platform_getPluginLoadFailures();
    const int nloaded = OpenMM_StringArray_getSize(loaded), nfail = OpenMM_StringArray_getSize(failures);
    int found_reference = 0;
    printf("loaded %d plugin(s) from %s\n", nloaded, HESSFIT_PLUGIN_DIR);
    for (int i = 0; i < nloaded; i++) {
        const char *name = OpenMM_StringArray_get(loaded, i);
        printf("  %s\n", name);
        if (strcmp(basename_of(name), "libHessFitPluginReference.so") == 0)
            found_reference = 1;
    }
    for (int i = 0; i < nfail; i++)
        fprintf(stderr, "  plugin load failure: %s\n", OpenMM_StringArray_get(failures, i));
    CHECK(found_reference, "libHessFitPluginReference.so is not among the %d loaded plugins", nloaded);
    CHECK(nfail == 0, "%d plugin load failure(s)", nfail);
    OpenMM_StringArray_destroy(loaded);
    OpenMM_StringArray_destroy(failures);

    /* ---- 2. a harmonic bond in a Reference Context made with OpenMM's C API -------------- */
    OpenMM_System *system = OpenMM_System_create();
    OpenMM_System_addParticle(system, M1);
    OpenMM_System_addParticle(system, M2);
    hessfit_force *force = NULL;
    int k_slot = -1, r0_slot = -1, index = -1;
    HF_OK(hessfit_force_create(&force));
    HF_OK(hessfit_force_add_parameter(force, K_BOND, &k_slot));
    HF_OK(hessfit_force_add_parameter(force, R0, &r0_slot));
    HF_OK(hessfit_force_add_particle(force, HESSFIT_NO_SLOT, HESSFIT_NO_SLOT, HESSFIT_NO_SLOT, NULL));
    HF_OK(hessfit_force_add_particle(force, HESSFIT_NO_SLOT, HESSFIT_NO_SLOT, HESSFIT_NO_SLOT, NULL));
    HF_OK(hessfit_force_add_bond(force, 0, 1, k_slot, r0_slot, &index));
    CHECK(index == 0, "first bond has index %d", index);
    HF_OK(hessfit_force_add_to_system(force, system, NULL));

    OpenMM_Platform *reference = OpenMM_Platform_getPlatformByName("Reference");
    CHECK(reference != NULL, "no Reference platform");
    OpenMM_VerletIntegrator *verlet = OpenMM_VerletIntegrator_create(0.001);
    OpenMM_Context *context = OpenMM_Context_create_2(system, (OpenMM_Integrator *) verlet, reference);
    CHECK(strcmp(OpenMM_Platform_getName(OpenMM_Context_getPlatform(context)), "Reference") == 0,
          "context runs on %s", OpenMM_Platform_getName(OpenMM_Context_getPlatform(context)));

    const double r_start = 0.1537;
    double pos[6];
    positions_for(r_start, pos);
    set_positions(context, pos);
    double r = 0.0;
    for (int c = 0; c < 3; c++)
        r += (pos[3 + c] - pos[c]) * (pos[3 + c] - pos[c]);
    r = sqrt(r);
    const double e_hand = K_BOND * (r - R0) * (r - R0);
    OpenMM_State *state = OpenMM_Context_getState(context, OpenMM_State_Energy | OpenMM_State_Forces, 0);
    const double e_md = OpenMM_State_getPotentialEnergy(state);
    printf("bond energy %.17g kJ/mol, by hand %.17g (rel. diff %.2e)\n", e_md, e_hand,
           fabs(e_md - e_hand) / e_hand);
    CHECK_CLOSE(e_md, e_hand, 1e-14, e_hand, "energy vs k (r - r0)^2");
    const OpenMM_Vec3Array *f = OpenMM_State_getForces(state);
    const double fmag = 2.0 * K_BOND * (r - R0);
    double max_fdiff = 0.0;
    for (int i = 0; i < 2; i++) {
        const OpenMM_Vec3 *v = OpenMM_Vec3Array_get(f, i);
        const double sign = i == 0 ? 1.0 : -1.0; /* stretched: atom 0 pulled along +u */
        const double fi[3] = {v->x, v->y, v->z};
        for (int c = 0; c < 3; c++) {
            CHECK_CLOSE(fi[c], sign * fmag * U[c], 1e-13, fmag, "force vs -+2k (r - r0) u");
            max_fdiff = fmax(max_fdiff, fabs(fi[c] - sign * fmag * U[c]) / fmag);
        }
    }
    OpenMM_State_destroy(state);
    /* the hessfit path gives the same energy */
    double e_hf = 0.0;
    HF_OK(hessfit_force_get_energy_forces(force, context, &e_hf, NULL));
    CHECK_CLOSE(e_hf, e_md, 1e-14, e_hand, "hessfit_force_get_energy_forces vs OpenMM State");

    /* ---- 3. dynamics: a harmonic oscillator --------------------------------------------- */
    const double mu = M1 * M2 / (M1 + M2), omega = sqrt(2.0 * K_BOND / mu);
    const double t_total = 0.2; /* ps: about 2/3 of a period (2 pi / omega = 0.30 ps) */
    double disc1 = 0.0, disc2 = 0.0;
    const double dt1 = 0.002, dt2 = 0.001;
    const int n1 = (int) (t_total / dt1 + 0.5), n2 = 2 * n1;
    const double err1 = run_oscillator(context, verlet, dt1, n1, 10, omega, &disc1);
    const double err2 = run_oscillator(context, verlet, dt2, n2, 20, omega, &disc2);
    /* Leap-frog: phase error omega^3 dt^2 t / 24, amplitude error O((omega dt)^2); bound both
     * with a factor 2 of headroom. */
    const double bound1 = 2.0 * AMP * (pow(omega, 3) * dt1 * dt1 * t_total / 24.0 + pow(omega * dt1, 2) / 4.0);
    printf("oscillator: omega %.4f /ps, %d steps of %.3f ps: |r - analytic| %.3e nm (bound %.3e), "
           "|r - leap-frog recurrence| %.3e nm\n", omega, n1, dt1, err1, bound1, disc1);
    printf("            %d steps of %.3f ps: |r - analytic| %.3e nm, |r - leap-frog recurrence| %.3e nm, "
           "error ratio %.3f (second order: 4)\n", n2, dt2, err2, disc2, err1 / err2);
    CHECK(disc1 <= 1e-9 * AMP && disc2 <= 1e-9 * AMP, "trajectory deviates from the leap-frog recurrence: %.3e, %.3e nm",
          disc1, disc2);
    CHECK(err1 <= bound1, "error vs the analytic solution %.3e nm exceeds the leap-frog bound %.3e nm", err1, bound1);
    CHECK(err1 / err2 > 3.5 && err1 / err2 < 4.5, "halving dt divided the error by %.3f, not ~4", err1 / err2);

    OpenMM_Context_destroy(context);
    OpenMM_VerletIntegrator_destroy(verlet);
    hessfit_force_destroy(force);
    OpenMM_System_destroy(system);
    printf("max relative force error %.2e\n", max_fdiff);
    printf("test_plugin_load: OK\n");
    return 0;
}
