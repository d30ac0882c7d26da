/*
 * hessfit_force_create_from_system: a HessianForce built from stock OpenMM forces must have the
 * stock System's energy, forces and Hessian; unsupported forces and settings must be refused.
 *
 * The stock System (7 atoms, one molecule: bonds 0-1 1-2 2-3 1-4 2-5 3-6) holds every supported
 * force: HarmonicBondForce, HarmonicAngleForce, PeriodicTorsionForce, RBTorsionForce,
 * NonbondedForce (NoCutoff; exceptions from createExceptionsFromBonds with 1-4 scales 0.8333 /
 * 0.5, so zeroed 1-2/1-3 exceptions and scaled 1-4 ones, including a 1-4 exception with zero
 * epsilon but a charge product and one with zero charge product but an epsilon, plus an explicit
 * exception on the 1-5 pair 0-6) and a CMMotionRemover. Each stock force is in its own group, so
 * the sum of |E_group| gives a scale for the energy check free of cancellation.
 *
 * Asserts (Reference platform):
 *  - the converted force has 7 particles, 1 (implicit) molecule and one slot per parameter;
 *  - energy: |E_converted - E_stock| <= 1e-10 * sum_g |E_g|;
 *  - forces: max |F_converted - F_stock| <= 1e-10 * max |F_stock|;
 *  - Hessian: the analytic Hessian of the converted force agrees with central differences of the
 *    STOCK forces, H_ij = -(F_j(x + h e_i) - F_j(x - h e_i)) / 2h with h = 1e-4 nm, to
 *    1e-5 * max |H| (the O(h^2) truncation error is expected around 1e-6 relative);
 *  - unsupported: a CustomBondForce, a NonbondedForce with PME, a HarmonicBondForce using periodic
 *    boundary conditions and a virtual site each fail with HESSFIT_ERROR_UNSUPPORTED naming the
 *    force class (or the virtual site); a System with several problems lists all of them; NULL
 *    arguments fail with HESSFIT_ERROR_NULL_ARGUMENT; failures leave the output handle NULL.
 */
#include "test_util.h"
#include <string.h>

#define N 7
#define FD_STEP 1e-4       /* nm */
#define HESSIAN_TOL 1e-5   /* relative to max |H| */
#define ENERGY_TOL 1e-10   /* relative */

static const int bonds[6][2] = {{0, 1}, {1, 2}, {2, 3}, {1, 4}, {2, 5}, {3, 6}};

static OpenMM_System *stock_system(void) {
    OpenMM_System *system = OpenMM_System_create();
    for (int i = 0; i < N; i++)
        OpenMM_System_addParticle(system, i == 4 || i == 5 ? 1.008 : 12.011);

    OpenMM_HarmonicBondForce *hb = OpenMM_HarmonicBondForce_create();
    static const double r0[6] = {0.1526, 0.1529, 0.1510, 0.1090, 0.1095, 0.1410};
    for (int b = 0; b < 6; b++)
        OpenMM_HarmonicBondForce_addBond(hb, bonds[b][0], bonds[b][1], r0[b], 2.5e5 + 1e4 * b);
    OpenMM_Force_setForceGroup((OpenMM_Force *) hb, 1);
    OpenMM_System_addForce(system, (OpenMM_Force *) hb);

    OpenMM_HarmonicAngleForce *ha = OpenMM_HarmonicAngleForce_create();
    OpenMM_HarmonicAngleForce_addAngle(ha, 0, 1, 2, 1.911, 520.0);
    OpenMM_HarmonicAngleForce_addAngle(ha, 1, 2, 3, 1.940, 500.0);
    OpenMM_HarmonicAngleForce_addAngle(ha, 4, 1, 2, 1.880, 320.0);
    OpenMM_HarmonicAngleForce_addAngle(ha, 0, 1, 4, 1.900, 300.0);
    OpenMM_HarmonicAngleForce_addAngle(ha, 1, 2, 5, 1.890, 310.0);
    OpenMM_HarmonicAngleForce_addAngle(ha, 3, 2, 5, 1.920, 305.0);
    OpenMM_HarmonicAngleForce_addAngle(ha, 2, 3, 6, 1.950, 480.0);
    OpenMM_Force_setForceGroup((OpenMM_Force *) ha, 2);
    OpenMM_System_addForce(system, (OpenMM_Force *) ha);

    OpenMM_PeriodicTorsionForce *pt = OpenMM_PeriodicTorsionForce_create();
    OpenMM_PeriodicTorsionForce_addTorsion(pt, 0, 1, 2, 3, 3, 0.0, 1.2);
    OpenMM_PeriodicTorsionForce_addTorsion(pt, 4, 1, 2, 5, 2, 3.14159265358979323846, 0.8);
    OpenMM_PeriodicTorsionForce_addTorsion(pt, 1, 2, 3, 6, 1, 0.3, 2.0);
    OpenMM_Force_setForceGroup((OpenMM_Force *) pt, 3);
    OpenMM_System_addForce(system, (OpenMM_Force *) pt);

    OpenMM_RBTorsionForce *rb = OpenMM_RBTorsionForce_create();
    OpenMM_RBTorsionForce_addTorsion(rb, 0, 1, 2, 5, 9.28, 12.16, -13.12, -3.06, 26.24, -31.5);
    OpenMM_Force_setForceGroup((OpenMM_Force *) rb, 4);
    OpenMM_System_addForce(system, (OpenMM_Force *) rb);

    OpenMM_NonbondedForce *nb = OpenMM_NonbondedForce_create();
    OpenMM_NonbondedForce_setNonbondedMethod(nb, OpenMM_NonbondedForce_NoCutoff);
    /* atom 4: epsilon 0 (its 1-4 exceptions keep a charge product, epsilon 0);
     * atom 5: charge 0 (its 1-4 exceptions have chargeProd 0 but epsilon != 0) */
    static const double q[N] = {-0.18, 0.06, -0.12, 0.31, 0.09, 0.0, -0.16};
    static const double sig[N] = {0.339967, 0.264953, 0.339967, 0.325, 0.1, 0.247135, 0.306647};
    static const double eps[N] = {0.4577296, 0.0656888, 0.4577296, 0.71128, 0.0, 0.0656888, 0.8803136};
    for (int i = 0; i < N; i++)
        OpenMM_NonbondedForce_addParticle(nb, q[i], sig[i], eps[i]);
    OpenMM_BondArray *bond_array = OpenMM_BondArray_create(0);
    for (int b = 0; b < 6; b++)
        OpenMM_BondArray_append(bond_array, bonds[b][0], bonds[b][1]);
    OpenMM_NonbondedForce_createExceptionsFromBonds(nb, bond_array, 0.8333, 0.5);
    OpenMM_BondArray_destroy(bond_array);
    OpenMM_NonbondedForce_addException(nb, 0, 6, 0.015, 0.3, 0.25, OpenMM_False);
    OpenMM_Force_setForceGroup((OpenMM_Force *) nb, 5);
    OpenMM_System_addForce(system, (OpenMM_Force *) nb);

    OpenMM_System_addForce(system, (OpenMM_Force *) OpenMM_CMMotionRemover_create(1));
    return system;
}

/* Expected slot count: 3 per particle, 2 per bond/angle/periodic torsion, 6 per RB torsion, 3 per
 * exception that becomes an explicit pair (chargeProd != 0 or epsilon != 0). */
static int expected_slots(const OpenMM_System *system) {
    const OpenMM_NonbondedForce *nb = (const OpenMM_NonbondedForce *) OpenMM_System_getForce((OpenMM_System *) system, 4);
    int explicit_pairs = 0;
    for (int x = 0; x < OpenMM_NonbondedForce_getNumExceptions(nb); x++) {
        int p1, p2;
        double qq, s, e;
        OpenMM_NonbondedForce_getExceptionParameters(nb, x, &p1, &p2, &qq, &s, &e);
        if (qq != 0.0 || e != 0.0)
            explicit_pairs++;
    }
    printf("stock exceptions: %d, of which %d become explicit pairs\n", OpenMM_NonbondedForce_getNumExceptions(nb),
           explicit_pairs);
    CHECK(explicit_pairs >= 5 && explicit_pairs < OpenMM_NonbondedForce_getNumExceptions(nb),
          "the test System should have both zeroed and non-zero exceptions");
    return 3 * N + 2 * 6 + 2 * 7 + 2 * 3 + 6 * 1 + 3 * explicit_pairs;
}

/* Expects hessfit_force_create_from_system to fail with UNSUPPORTED mentioning every string. */
static void expect_unsupported(OpenMM_System *system, const char *const *mentions, int n_mentions) {
    hessfit_force *f = (hessfit_force *) 1;
    HF_FAILS(hessfit_force_create_from_system(system, &f), HESSFIT_ERROR_UNSUPPORTED);
    CHECK(f == NULL, "a failed conversion left its output set");
    for (int i = 0; i < n_mentions; i++)
        CHECK(strstr(hessfit_last_error(), mentions[i]) != NULL, "the message does not mention '%s': %s", mentions[i],
              hessfit_last_error());
}

static OpenMM_System *three_particles(void) {
    OpenMM_System *system = OpenMM_System_create();
    for (int i = 0; i < 3; i++)
        OpenMM_System_addParticle(system, 12.0);
    OpenMM_HarmonicBondForce *hb = OpenMM_HarmonicBondForce_create();
    OpenMM_HarmonicBondForce_addBond(hb, 0, 1, 0.15, 1e5);
    OpenMM_System_addForce(system, (OpenMM_Force *) hb);
    return system;
}

static void test_unsupported(void) {
    printf("unsupported forces and settings:\n");
    /* a CustomBondForce */
    OpenMM_System *s1 = three_particles();
    OpenMM_CustomBondForce *custom = OpenMM_CustomBondForce_create("0.5*r^2");
    OpenMM_DoubleArray *no_parameters = OpenMM_DoubleArray_create(0);
    OpenMM_CustomBondForce_addBond(custom, 1, 2, no_parameters);
    OpenMM_DoubleArray_destroy(no_parameters);
    OpenMM_System_addForce(s1, (OpenMM_Force *) custom);
    const char *m1[] = {"force 1 (CustomBondForce)"};
    expect_unsupported(s1, m1, 1);

    /* a NonbondedForce with PME */
    OpenMM_System *s2 = three_particles();
    OpenMM_NonbondedForce *pme = OpenMM_NonbondedForce_create();
    OpenMM_NonbondedForce_setNonbondedMethod(pme, OpenMM_NonbondedForce_PME);
    for (int i = 0; i < 3; i++)
        OpenMM_NonbondedForce_addParticle(pme, 0.1, 0.3, 0.5);
    OpenMM_System_addForce(s2, (OpenMM_Force *) pme);
    const char *m2[] = {"force 1 (NonbondedForce)", "PME"};
    expect_unsupported(s2, m2, 2);

    /* a periodic HarmonicBondForce */
    OpenMM_System *s3 = three_particles();
    OpenMM_HarmonicBondForce_setUsesPeriodicBoundaryConditions(
        (OpenMM_HarmonicBondForce *) OpenMM_System_getForce(s3, 0), OpenMM_True);
    const char *m3[] = {"force 0 (HarmonicBondForce)", "periodic"};
    expect_unsupported(s3, m3, 2);

    /* a virtual site */
    OpenMM_System *s4 = three_particles();
    OpenMM_System_setVirtualSite(s4, 2, (OpenMM_VirtualSite *) OpenMM_TwoParticleAverageSite_create(0, 1, 0.5, 0.5));
    const char *m4[] = {"virtual site"};
    expect_unsupported(s4, m4, 1);

    /* all problems of one System are reported together */
    OpenMM_System *s5 = three_particles();
    OpenMM_HarmonicBondForce_setUsesPeriodicBoundaryConditions(
        (OpenMM_HarmonicBondForce *) OpenMM_System_getForce(s5, 0), OpenMM_True);
    OpenMM_CustomBondForce *custom5 = OpenMM_CustomBondForce_create("0.5*r^2");
    OpenMM_System_addForce(s5, (OpenMM_Force *) custom5);
    OpenMM_NonbondedForce *pme5 = OpenMM_NonbondedForce_create();
    OpenMM_NonbondedForce_setNonbondedMethod(pme5, OpenMM_NonbondedForce_PME);
    for (int i = 0; i < 3; i++)
        OpenMM_NonbondedForce_addParticle(pme5, 0.1, 0.3, 0.5);
    OpenMM_System_addForce(s5, (OpenMM_Force *) pme5);
    const char *m5[] = {"force 0 (HarmonicBondForce)", "force 1 (CustomBondForce)", "force 2 (NonbondedForce)", "PME"};
    expect_unsupported(s5, m5, 4);

    /* NULL arguments */
    hessfit_force *f = (hessfit_force *) 1;
    HF_FAILS(hessfit_force_create_from_system(NULL, &f), HESSFIT_ERROR_NULL_ARGUMENT);
    CHECK(f == NULL, "a failed conversion left its output set");
    CHECK(strstr(hessfit_last_error(), "system") != NULL, "the message does not name 'system'");
    HF_FAILS(hessfit_force_create_from_system(s1, NULL), HESSFIT_ERROR_NULL_ARGUMENT);

    OpenMM_System_destroy(s1);
    OpenMM_System_destroy(s2);
    OpenMM_System_destroy(s3);
    OpenMM_System_destroy(s4);
    OpenMM_System_destroy(s5);
}

int main(void) {
    test_load_plugins();
    /* a staggered, slightly distorted geometry (nm) */
    double pos[3 * N] = {0.000, 0.000, 0.000,  0.152, 0.000, 0.000,  0.203, 0.144, 0.000,
                         0.355, 0.150, 0.041,  0.188, -0.058, 0.091, 0.161, 0.200, -0.088,
                         0.398, 0.283, 0.065};
    test_seed(11);
    for (int i = 0; i < 3 * N; i++)
        pos[i] += 0.006 * (test_random() - 0.5);

    OpenMM_System *stock = stock_system();
    hessfit_force *f;
    HF_OK(hessfit_force_create_from_system(stock, &f));
    int np, nparticles, nmol;
    HF_OK(hessfit_force_get_num_parameters(f, &np));
    HF_OK(hessfit_force_get_num_particles(f, &nparticles));
    HF_OK(hessfit_force_get_num_molecules(f, &nmol));
    CHECK(nparticles == N && nmol == 1, "%d particles, %d molecules", nparticles, nmol);
    int expected = expected_slots(stock);
    CHECK(np == expected, "%d parameter slots, expected %d", np, expected);

    OpenMM_System *converted = OpenMM_System_create();
    for (int i = 0; i < N; i++)
        OpenMM_System_addParticle(converted, OpenMM_System_getParticleMass(stock, i));
    HF_OK(hessfit_force_add_to_system(f, converted, NULL));

    OpenMM_Integrator *int_stock, *int_conv;
    OpenMM_Context *ctx_stock = test_create_context(stock, "Reference", pos, N, 0.001, &int_stock);
    OpenMM_Context *ctx_conv = test_create_context(converted, "Reference", pos, N, 0.001, &int_conv);

    /* energy and forces */
    double f_stock[3 * N], f_conv[3 * N], e_scale = 0.0;
    for (int g = 1; g <= 5; g++) {
        double eg = test_energy_forces(ctx_stock, 1 << g, NULL, N);
        printf("stock group %d energy %.10g\n", g, eg);
        e_scale += fabs(eg);
    }
    double e_stock = test_energy_forces(ctx_stock, -1, f_stock, N);
    double e_conv;
    HF_OK(hessfit_force_get_energy_forces(f, ctx_conv, &e_conv, f_conv));
    double f_diff = test_max_abs_diff(f_conv, f_stock, 3 * N), f_scale = test_max_abs(f_stock, 3 * N);
    printf("energy: stock %.17g converted %.17g, |diff| %.3g = %.3g relative to sum |E_g| = %.6g\n", e_stock, e_conv,
           fabs(e_conv - e_stock), fabs(e_conv - e_stock) / e_scale, e_scale);
    printf("forces: max |diff| %.3g = %.3g relative to max |F| = %.6g\n", f_diff, f_diff / f_scale, f_scale);
    CHECK_CLOSE(e_conv, e_stock, ENERGY_TOL, e_scale, "energy");
    CHECK(f_diff <= ENERGY_TOL * f_scale, "forces differ by %.3g (scale %.3g)", f_diff, f_scale);

    /* Hessian: analytic (converted) vs central differences of the stock forces */
    long long hsize;
    HF_OK(hessfit_force_get_hessian_size(f, &hsize));
    CHECK(hsize == 9 * N * N, "Hessian size %lld", hsize);
    double h_an[9 * N * N], h_fd[9 * N * N], fp[3 * N], fm[3 * N], x[3 * N];
    HF_OK(hessfit_force_get_hessian_blocks(f, ctx_conv, h_an, hsize));
    int order[N], count;
    HF_OK(hessfit_force_get_molecule_particles(f, 0, order, N, &count));
    CHECK(count == N, "molecule 0 has %d particles", count);
    for (int i = 0; i < N; i++)
        CHECK(order[i] == i, "implicit molecule order: position %d holds particle %d", i, order[i]);
    for (int i = 0; i < 3 * N; i++) {
        memcpy(x, pos, sizeof x);
        x[i] = pos[i] + FD_STEP;
        test_set_positions(ctx_stock, x, N);
        test_energy_forces(ctx_stock, -1, fp, N);
        x[i] = pos[i] - FD_STEP;
        test_set_positions(ctx_stock, x, N);
        test_energy_forces(ctx_stock, -1, fm, N);
        for (int j = 0; j < 3 * N; j++)
            h_fd[i * 3 * N + j] = -(fp[j] - fm[j]) / (2.0 * FD_STEP);
    }
    double h_diff = test_max_abs_diff(h_an, h_fd, 9 * N * N), h_scale = test_max_abs(h_an, 9 * N * N);
    int worst = 0;
    for (int k = 0; k < 9 * N * N; k++)
        if (fabs(h_an[k] - h_fd[k]) > fabs(h_an[worst] - h_fd[worst]))
            worst = k;
    printf("Hessian vs central differences of the stock forces (h = %g nm): max |diff| %.3g = %.3g relative to "
           "max |H| = %.6g (worst entry %d, %d: %.10g vs %.10g)\n", FD_STEP, h_diff, h_diff / h_scale, h_scale,
           worst / (3 * N), worst % (3 * N), h_an[worst], h_fd[worst]);
    CHECK(h_diff <= HESSIAN_TOL * h_scale, "Hessian differs from finite differences by %.3g (scale %.3g)", h_diff,
          h_scale);

    OpenMM_Context_destroy(ctx_stock);
    OpenMM_Context_destroy(ctx_conv);
    OpenMM_Integrator_destroy(int_stock);
    OpenMM_Integrator_destroy(int_conv);
    hessfit_force_destroy(f);
    OpenMM_System_destroy(stock);
    OpenMM_System_destroy(converted);

    test_unsupported();
    printf("test_converter passed\n");
    return 0;
}
