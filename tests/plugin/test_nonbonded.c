/*
 * OPLS-style nonbonded terms against OpenMM's NonbondedForce (per platform; stock on Reference).
 *
 * Molecules: butane (gauche, 14 atoms), cyclopentane (15 atoms, a ring: pairs 1-3 along one way
 * round and 1-4 along the other must stay excluded) and 1-propanol (12 atoms), each in its own
 * pair of Systems, realistic geometry plus a random perturbation.
 *
 * Ours: a hessfit_force with per-atom charge / sigma / epsilon slots, geometric combining
 * (sigma_ij = sqrt(sigma_i sigma_j), eps_ij = sqrt(eps_i eps_j)), exclusions and 1-4 pairs from
 * hessfit_force_create_exclusions_from_bonds, 1-4 scales 0.5 / 0.5 (butane: the documented
 * default, not set; the others: set explicitly). Only nonbonded terms, so the Hessian check is
 * not dominated by stiff bonded terms.
 * Stock: a NonbondedForce (NoCutoff, no dispersion correction) in which EVERY pair is an
 * exception carrying the geometric sigma, scaled geometric epsilon and scaled charge product:
 * scale 0 for 1-2 and 1-3 pairs, 0.5 for 1-4 pairs, 1 otherwise (pair relations from the test's
 * own breadth-first search over the bonds, not from the code under test).
 *
 * Asserted:
 *   - the numbers of exclusions and 1-4 pairs that hessfit_force_create_exclusions_from_bonds
 *     made, against counts by hand: butane 37 / 27, cyclopentane 45 / 40, propanol 30 / 21;
 *   - at four geometries per molecule: energy and forces within 1e-10 relative (energy scale:
 *     the sum of |Coulomb| + |LJ| over the interacting pairs, since the total can cancel to near
 *     zero; force scale max |F_stock|);
 *   - the analytic Hessian against central differences of the STOCK forces, FD_TOL relative to
 *     max |H_fd|, and symmetric.
 */
#include "stock_molecules.h"

/*
 * FD step and error budget. Truncation h^2/6 |d^3F|: the steepest term is the LJ repulsion of the
 * closest non-excluded pairs (1-4 H...H at ~0.25 nm): E ~ r^-12, so |d^3F| / |d F| ~ 14*15 / r^2
 * ~ 3e3 nm^-2 and the truncation error relative to that pair's Hessian is ~ h^2/6 * 3e3 = 5e2 h^2,
 * i.e. 5e-8 at h = 1e-5 nm; against the block's largest entry it is at most that. Roundoff:
 * |F| <= ~1e3 kJ/mol/nm, eps * 1e3 / 1e-5 ~ 2e-8 kJ/mol/nm^2 against max |H| ~ 1e3-1e4: ~1e-11.
 * Expected ~5e-8 at most. Measured (Reference): scales as h^2, 8.4e-8 at h = 1e-5 nm, 7.5e-9 at
 * 3e-6, 8.3e-10 at 1e-6. Asserted at 5e-7.
 */
#ifndef FD_STEP
#define FD_STEP 1e-5
#endif
#define FD_TOL 5e-7
#define EF_TOL 1e-10

/* The number of exclusions and of 1-4 pairs that create_exclusions_from_bonds makes: on a probe
 * force (never put in a Context), the index returned by the next add_* is the count so far (the
 * C API has no count getters). probe_pair is a pair that is neither excluded nor 1-4. */
static void count_from_bonds(const sm_mol *m, const int *bonds, int *n_excl, int *n_14) {
    hessfit_force *probe;
    HF_OK(hessfit_force_create(&probe));
    for (int i = 0; i < m->n; i++)
        HF_OK(hessfit_force_add_particle(probe, HESSFIT_NO_SLOT, HESSFIT_NO_SLOT, HESSFIT_NO_SLOT, NULL));
    HF_OK(hessfit_force_create_exclusions_from_bonds(probe, bonds, m->n_bonds));
    int a = -1, b = -1;
    for (int i = 0; i < m->n && a < 0; i++)
        for (int j = i + 1; j < m->n; j++)
            if (m->dist[i][j] == SM_FAR) {
                a = i;
                b = j;
                break;
            }
    CHECK(a >= 0, "no 1-5 pair");
    HF_OK(hessfit_force_add_exclusion(probe, a, b, n_excl));
    HF_OK(hessfit_force_add_pair14(probe, a, b, n_14));
    hessfit_force_destroy(probe);
}

static void run_molecule(const char *name, int which, const char *platform, int expect_excl, int expect_14,
                         double *worst) {
    sm_mol m;
    sm_init(&m);
    if (which == 0) {
        const double dih[1] = {62.0};
        sm_add_chain(&m, "CCCC", dih, 0.0);
    } else if (which == 1) {
        sm_add_ring(&m, 5, 0.0);
    } else {
        const double dih[1] = {-70.0};
        sm_add_chain(&m, "CCCO", dih, 0.0);
    }
    sm_perturb(&m, 0.004);
    int bonds[2 * SM_MAX_BONDS];
    for (int b = 0; b < m.n_bonds; b++) {
        bonds[2 * b] = m.bonds[b][0];
        bonds[2 * b + 1] = m.bonds[b][1];
    }

    /* the test's own classification of every pair */
    int my_excl = 0, my_14 = 0;
    for (int i = 0; i < m.n; i++)
        for (int j = i + 1; j < m.n; j++) {
            my_excl += m.dist[i][j] <= 2;
            my_14 += m.dist[i][j] == 3;
        }
    CHECK(my_excl == expect_excl && my_14 == expect_14, "%s: test topology gives %d excluded / %d 1-4, by hand %d / %d",
          name, my_excl, my_14, expect_excl, expect_14);
    int n_excl, n_14;
    count_from_bonds(&m, bonds, &n_excl, &n_14);
    printf("  %s: %d atoms, %d bonds: create_exclusions_from_bonds made %d exclusions, %d 1-4 pairs (by hand %d, %d)\n",
           name, m.n, m.n_bonds, n_excl, n_14, expect_excl, expect_14);
    CHECK(n_excl == expect_excl, "%s: %d exclusions, expected %d", name, n_excl, expect_excl);
    CHECK(n_14 == expect_14, "%s: %d 1-4 pairs, expected %d", name, n_14, expect_14);

    sm_pair s;
    sm_pair_create(&s, &m);
    sm_add_hf_particles(&s, &m, 1, 0);
    HF_OK(hessfit_force_set_combining_rule(s.hf, HESSFIT_COMBINE_GEOMETRIC));
    if (which != 0)
        HF_OK(hessfit_force_set_14_scales(s.hf, 0.5, 0.5));
    HF_OK(hessfit_force_create_exclusions_from_bonds(s.hf, bonds, m.n_bonds));

    OpenMM_NonbondedForce *nb = OpenMM_NonbondedForce_create();
    OpenMM_NonbondedForce_setNonbondedMethod(nb, OpenMM_NonbondedForce_NoCutoff);
    OpenMM_NonbondedForce_setUseDispersionCorrection(nb, OpenMM_False);
    for (int i = 0; i < m.n; i++) /* LB-combined particle LJ would differ: exceptions must override it */
        OpenMM_NonbondedForce_addParticle(nb, m.charge[i], m.sigma[i], m.epsilon[i]);
    for (int i = 0; i < m.n; i++)
        for (int j = i + 1; j < m.n; j++) {
            int d = m.dist[i][j];
            double scale = d <= 2 ? 0.0 : d == 3 ? 0.5 : 1.0;
            OpenMM_NonbondedForce_addException(nb, i, j, scale * m.charge[i] * m.charge[j], sqrt(m.sigma[i] * m.sigma[j]),
                                               scale * sqrt(m.epsilon[i] * m.epsilon[j]), OpenMM_False);
        }
    CHECK(OpenMM_NonbondedForce_getNumExceptions(nb) == m.n * (m.n - 1) / 2, "exceptions");
    sm_add_stock(&s, (OpenMM_Force *) nb);
    sm_pair_open(&s, platform, m.pos, 0.001);

    double pos[3 * SM_MAX_ATOMS];
    for (int geom = 0; geom < 4; geom++) {
        sm_test_pose(&m, geom, 0.008, pos);
        sm_pair_set_positions(&s, pos);
        double rel_e, rel_f, rel_h;
        /* energy scale: the sum of |pair energies| (the total may be near zero by cancellation) */
        double abs_sum = 0.0;
        for (int i = 0; i < m.n; i++)
            for (int j = i + 1; j < m.n; j++) {
                int d = m.dist[i][j];
                double scale = d <= 2 ? 0.0 : d == 3 ? 0.5 : 1.0, r = sm_distance(pos, i, j);
                double sr6 = pow(sqrt(m.sigma[i] * m.sigma[j]) / r, 6);
                abs_sum += scale * (fabs(138.935456 * m.charge[i] * m.charge[j] / r) +
                                    fabs(4.0 * sqrt(m.epsilon[i] * m.epsilon[j]) * (sr6 * sr6 - sr6)));
            }
        sm_compare_energy_forces(&s, abs_sum, 0.0, &rel_e, &rel_f);
        sm_compare_hessian(&s, pos, FD_STEP, 0.0, &rel_h);
        printf("    geometry %d: E = %.12g kJ/mol, rel. error energy %.3g, forces %.3g, Hessian vs FD %.3g\n", geom,
               test_energy_forces(s.stock_ctx, -1, NULL, s.n), rel_e, rel_f, rel_h);
        CHECK(rel_e <= EF_TOL, "%s geometry %d: energy relative error %.3g", name, geom, rel_e);
        CHECK(rel_f <= EF_TOL, "%s geometry %d: force relative error %.3g", name, geom, rel_f);
        CHECK(rel_h <= FD_TOL, "%s geometry %d: Hessian relative error vs FD %.3g (h = %g nm)", name, geom, rel_h, FD_STEP);
        worst[0] = fmax(worst[0], rel_e);
        worst[1] = fmax(worst[1], rel_f);
        worst[2] = fmax(worst[2], rel_h);
    }
    sm_pair_destroy(&s);
}

int main(int argc, char **argv) {
    const char *platform = test_platform_name(argc, argv);
    printf("test_nonbonded on %s (stock on Reference)\n", platform);
    test_seed(0xB0DEB0DEULL);
    double worst[3] = {0, 0, 0};
    /*
     * Counts by hand (no rings: 1-3 pairs = sum over atoms of C(degree, 2); 1-4 pairs = sum over
     * bonds j-k of (deg j - 1)(deg k - 1)):
     *   butane C4H10: 13 bonds + 4 * C(4,2) = 24 -> 37 excluded; 1-4: 3 C-C bonds * 3 * 3 = 27.
     *   cyclopentane C5H10: 15 bonds + 5 * 6 = 30 (all distinct in a 5-ring) -> 45 excluded;
     *     1-4 paths: 5 C-C bonds * 9 = 45, minus the 5 C...C ones that are 1-3 the other way
     *     round -> 40 (20 H...C, 20 H...H).
     *   1-propanol C3H7OH: 11 bonds + 3 * 6 + C(2,2) = 19 -> 30 excluded; 1-4: 9 + 9 + 3 * 1 = 21.
     */
    run_molecule("butane", 0, platform, 37, 27, worst);
    run_molecule("cyclopentane", 1, platform, 45, 40, worst);
    run_molecule("1-propanol", 2, platform, 30, 21, worst);
    printf("max relative errors: energy %.3g, forces %.3g (tol %g); Hessian vs central FD (h = %g nm) %.3g (tol %g)\n",
           worst[0], worst[1], EF_TOL, FD_STEP, worst[2], FD_TOL);
    printf("test_nonbonded: OK\n");
    return 0;
}
