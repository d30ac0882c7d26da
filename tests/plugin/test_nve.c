/*
 * Energy conservation in NVE with the hessfit_force (per platform) against the stock equivalent
 * (on OpenMM's Reference platform).
 *
 * Molecule: N-methylethylamine CH3-CH2-NH-CH3 (13 atoms), realistic geometry plus a random
 * perturbation, with every term kind of HessianForce:
 *   bonds, Urey-Bradley (on the H-C-H angles), angles, periodic torsions (several periodicities,
 *   non-zero phases), OPLS torsions, RB torsions, a periodic improper (on N), a harmonic improper
 *   (on the CH2 carbon), Lennard-Jones + Coulomb (geometric combining) with exclusions, 1-4 pairs
 *   (scales 0.5 / 0.5) and explicit pairs.
 * Stock equivalent: HarmonicBondForce (bonds; k_stock = 2 k), a second HarmonicBondForce
 * (Urey-Bradley), HarmonicAngleForce, PeriodicTorsionForce (periodic torsions), RBTorsionForce
 * (RB and OPLS converted to RB), PeriodicTorsionForce (the improper), CustomTorsionForce
 * k*min(d, 2pi-d)^2 with d = |theta - theta0| (the harmonic improper), NonbondedForce with every
 * pair an exception (geometric sigma / epsilon and scaled charge products).
 *
 * Asserted:
 *   - at the start, the two agree: energies and forces to 1e-10 relative (so the runs integrate
 *     the same potential);
 *   - VerletIntegrator, dt = 0.5 fs, N_STEPS steps from velocities set by
 *     OpenMM_Context_setVelocitiesToTemperature(300 K, fixed seed) in each Context; the total
 *     energy fluctuation  max_t |E(t) - E(0)| / <KE>  of ours is at most 1.5x the stock one plus
 *     an absolute floor of 2e-3, and below an absolute bound of 0.05;
 *   - the energy drift (difference of the means of the last and first tenth of the run, over <KE>)
 *     of ours is below 1e-2 (a wrong force shows up as a steady drift).
 */
#include "stock_molecules.h"

#define N_STEPS 8000
#define DT_PS 0.0005
#define TEMPERATURE 300.0
#define SEED 4242
#define RATIO_TOL 1.5
#define RATIO_FLOOR 2e-3
#define ABS_BOUND 0.05
#define DRIFT_BOUND 1e-2

/* Runs NVE and returns max |E(t) - E(0)| / <KE> in *fluct, the drift in *drift, <KE> in *kin. */
static void run_nve(OpenMM_Context *ctx, OpenMM_Integrator *integrator, double *fluct, double *drift, double *kin,
                    double *trace) {
    OpenMM_Context_setVelocitiesToTemperature(ctx, TEMPERATURE, SEED);
    double e0 = 0.0, max_dev = 0.0, ke_sum = 0.0, head = 0.0, tail = 0.0;
    int tenth = N_STEPS / 10;
    for (int step = 0; step <= N_STEPS; step++) {
        if (step > 0)
            OpenMM_VerletIntegrator_step((OpenMM_VerletIntegrator *) integrator, 1);
        OpenMM_State *state = OpenMM_Context_getState(ctx, OpenMM_State_Energy, 0);
        double ke = OpenMM_State_getKineticEnergy(state), e = ke + OpenMM_State_getPotentialEnergy(state);
        OpenMM_State_destroy(state);
        CHECK(isfinite(e), "energy is %g at step %d", e, step);
        if (step == 0)
            e0 = e;
        trace[step] = e;
        max_dev = fmax(max_dev, fabs(e - e0));
        ke_sum += ke;
        if (step < tenth)
            head += e;
        if (step > N_STEPS - tenth)
            tail += e;
    }
    *kin = ke_sum / (N_STEPS + 1);
    *fluct = max_dev / *kin;
    *drift = fabs(tail - head) / tenth / *kin;
}

int main(int argc, char **argv) {
    const char *platform = test_platform_name(argc, argv);
    printf("test_nve on %s (stock on Reference)\n", platform);
    test_seed(0x4E5645ULL);

    sm_mol m;
    sm_init(&m);
    const double dih[1] = {175.0};
    sm_add_chain(&m, "CCNC", dih, 0.0);
    CHECK(m.n == 13, "%d atoms", m.n);
    double ref_pos[3 * SM_MAX_ATOMS];
    memcpy(ref_pos, m.pos, sizeof(double) * 3 * m.n);
    sm_perturb(&m, 0.004);

    sm_pair s;
    sm_pair_create(&s, &m);
    sm_add_hf_particles(&s, &m, 1, 0);
    sm_add_bonds(&s, &m);
    sm_add_angles(&s, &m);

    /* Urey-Bradley on every H-C-H angle */
    {
        OpenMM_HarmonicBondForce *f = OpenMM_HarmonicBondForce_create();
        int count = 0;
        for (int a = 0; a < m.n_angles; a++) {
            const int *t = m.angles[a];
            if (m.element[t[0]] != 'H' || m.element[t[2]] != 'H')
                continue;
            double k = sm_uniform(5e3, 2e4), r0 = sm_distance(ref_pos, t[0], t[2]);
            OpenMM_HarmonicBondForce_addBond(f, t[0], t[2], r0, 2.0 * k);
            HF_OK(hessfit_force_add_urey_bradley(s.hf, t[0], t[2], sm_slot(&s, k), sm_slot(&s, r0), NULL));
            count++;
        }
        CHECK(count == 3 + 1 + 3, "%d H-C-H angles", count);
        sm_add_stock(&s, (OpenMM_Force *) f);
    }
    /* proper torsions: periodic, OPLS, RB in turn */
    {
        OpenMM_PeriodicTorsionForce *per = OpenMM_PeriodicTorsionForce_create();
        OpenMM_RBTorsionForce *rb = OpenMM_RBTorsionForce_create();
        int counts[3] = {0, 0, 0};
        for (int t = 0; t < m.n_torsions; t++) {
            const int *p = m.torsions[t];
            if (t % 3 == 0) {
                for (int n = 1; n <= 3; n++) {
                    double k = sm_uniform(0.3, 3.0), phase = sm_uniform(0.2, 2.0 * SM_PI - 0.2);
                    OpenMM_PeriodicTorsionForce_addTorsion(per, p[0], p[1], p[2], p[3], n, phase, k);
                    HF_OK(hessfit_force_add_periodic_torsion(s.hf, p[0], p[1], p[2], p[3], n, sm_slot(&s, k),
                                                             sm_slot(&s, phase), NULL));
                }
            } else if (t % 3 == 1) {
                double v[4], c[6];
                int slots[4];
                for (int i = 0; i < 4; i++) {
                    v[i] = sm_uniform(-3.0, 5.0);
                    slots[i] = sm_slot(&s, v[i]);
                }
                opls_to_rb(v, c);
                OpenMM_RBTorsionForce_addTorsion(rb, p[0], p[1], p[2], p[3], c[0], c[1], c[2], c[3], c[4], c[5]);
                HF_OK(hessfit_force_add_opls_torsion(s.hf, p[0], p[1], p[2], p[3], slots, NULL));
            } else {
                double c[6];
                int slots[6];
                for (int i = 0; i < 6; i++) {
                    c[i] = sm_uniform(-2.0, 2.0);
                    slots[i] = sm_slot(&s, c[i]);
                }
                OpenMM_RBTorsionForce_addTorsion(rb, p[0], p[1], p[2], p[3], c[0], c[1], c[2], c[3], c[4], c[5]);
                HF_OK(hessfit_force_add_rb_torsion(s.hf, p[0], p[1], p[2], p[3], slots, NULL));
            }
            counts[t % 3]++;
        }
        CHECK(counts[0] > 0 && counts[1] > 0 && counts[2] > 0, "torsion kinds %d %d %d", counts[0], counts[1], counts[2]);
        sm_add_stock(&s, (OpenMM_Force *) per);
        sm_add_stock(&s, (OpenMM_Force *) rb);
    }
    /* impropers: atoms 0 C, 1 CH2, 2 N, 3 C; hydrogens of C0: 4-6, of C1: 7-8, of N: 9, of C3: 10-12 */
    CHECK(m.element[2] == 'N' && m.element[9] == 'H' && m.dist[2][9] == 1 && m.dist[1][7] == 1, "atom layout");
    {
        /* periodic improper on N: (C1, C3, N, H), n = 2, phase pi */
        OpenMM_PeriodicTorsionForce *f = OpenMM_PeriodicTorsionForce_create();
        double k = 4.6, phase = SM_PI;
        OpenMM_PeriodicTorsionForce_addTorsion(f, 1, 3, 2, 9, 2, phase, k);
        HF_OK(hessfit_force_add_periodic_improper(s.hf, 1, 3, 2, 9, 2, sm_slot(&s, k), sm_slot(&s, phase), NULL));
        sm_add_stock(&s, (OpenMM_Force *) f);
    }
    {
        /* harmonic improper on the CH2 carbon: (C0, N, C1, H7), phi0 = reference value + 2 deg */
        OpenMM_CustomTorsionForce *f = OpenMM_CustomTorsionForce_create(
            "k*min(d, 2*pi-d)^2; d = abs(theta-theta0); pi = 3.14159265358979323846");
        OpenMM_CustomTorsionForce_addPerTorsionParameter(f, "k");
        OpenMM_CustomTorsionForce_addPerTorsionParameter(f, "theta0");
        double k = 35.0, phi0 = sm_dihedral(ref_pos, 0, 2, 1, 7) + 2.0 * SM_DEG;
        if (phi0 > SM_PI)
            phi0 -= 2.0 * SM_PI;
        OpenMM_DoubleArray *params = OpenMM_DoubleArray_create(0);
        OpenMM_DoubleArray_append(params, k);
        OpenMM_DoubleArray_append(params, phi0);
        OpenMM_CustomTorsionForce_addTorsion(f, 0, 2, 1, 7, params);
        OpenMM_DoubleArray_destroy(params);
        HF_OK(hessfit_force_add_harmonic_improper(s.hf, 0, 2, 1, 7, sm_slot(&s, k), sm_slot(&s, phi0), NULL));
        sm_add_stock(&s, (OpenMM_Force *) f);
        printf("  harmonic improper phi0 = %.4f rad, phi(start) = %.4f rad\n", phi0, sm_dihedral(m.pos, 0, 2, 1, 7));
    }
    /* nonbonded: geometric combining; 1-2, 1-3 excluded; 1-4 pairs alternately scaled 1-4 pairs and
     * explicit pairs with their own parameters */
    {
        HF_OK(hessfit_force_set_combining_rule(s.hf, HESSFIT_COMBINE_GEOMETRIC));
        HF_OK(hessfit_force_set_14_scales(s.hf, 0.5, 0.5));
        OpenMM_NonbondedForce *nb = OpenMM_NonbondedForce_create();
        OpenMM_NonbondedForce_setNonbondedMethod(nb, OpenMM_NonbondedForce_NoCutoff);
        OpenMM_NonbondedForce_setUseDispersionCorrection(nb, OpenMM_False);
        for (int i = 0; i < m.n; i++)
            OpenMM_NonbondedForce_addParticle(nb, m.charge[i], m.sigma[i], m.epsilon[i]);
        int n14 = 0, nexp = 0;
        for (int i = 0; i < m.n; i++)
            for (int j = i + 1; j < m.n; j++) {
                int d = m.dist[i][j];
                double qq = m.charge[i] * m.charge[j], sig = sqrt(m.sigma[i] * m.sigma[j]);
                double eps = sqrt(m.epsilon[i] * m.epsilon[j]);
                if (d <= 2) {
                    HF_OK(hessfit_force_add_exclusion(s.hf, i, j, NULL));
                    qq = eps = 0.0;
                } else if (d == 3 && (n14 + nexp) % 2 == 0) {
                    HF_OK(hessfit_force_add_pair14(s.hf, i, j, NULL));
                    qq *= 0.5;
                    eps *= 0.5;
                    n14++;
                } else if (d == 3) {
                    qq = sm_uniform(-0.2, 0.2);
                    sig = sm_uniform(0.2, 0.32);
                    eps = sm_uniform(0.05, 0.3);
                    HF_OK(hessfit_force_add_explicit_pair(s.hf, i, j, sm_slot(&s, qq), sm_slot(&s, sig), sm_slot(&s, eps), NULL));
                    nexp++;
                }
                OpenMM_NonbondedForce_addException(nb, i, j, qq, sig, eps, OpenMM_False);
            }
        CHECK(n14 > 0 && nexp > 0, "%d 1-4 pairs, %d explicit pairs", n14, nexp);
        sm_add_stock(&s, (OpenMM_Force *) nb);
    }
    sm_pair_open(&s, platform, m.pos, DT_PS);

    double rel_e, rel_f;
    sm_compare_energy_forces(&s, 0.0, 0.0, &rel_e, &rel_f);
    printf("  start: E = %.10g kJ/mol; ours vs stock: rel. error energy %.3g, forces %.3g\n",
           test_energy_forces(s.stock_ctx, -1, NULL, s.n), rel_e, rel_f);
    CHECK(rel_e <= 1e-10 && rel_f <= 1e-10, "the stock equivalent differs: energy %.3g, forces %.3g", rel_e, rel_f);

    static double trace_stock[N_STEPS + 1], trace_ours[N_STEPS + 1];
    double fl_s, dr_s, ke_s, fl_o, dr_o, ke_o;
    run_nve(s.stock_ctx, s.stock_int, &fl_s, &dr_s, &ke_s, trace_stock);
    run_nve(s.our_ctx, s.our_int, &fl_o, &dr_o, &ke_o, trace_ours);
    /* the runs start from the same state when the platforms give the same velocities */
    double early = 0.0;
    for (int step = 0; step <= 100; step++)
        early = fmax(early, fabs(trace_ours[step] - trace_stock[step]));
    printf("  stock: <KE> = %.4g kJ/mol, max|E(t)-E(0)|/<KE> = %.4g, drift/<KE> = %.3g\n", ke_s, fl_s, dr_s);
    printf("  ours:  <KE> = %.4g kJ/mol, max|E(t)-E(0)|/<KE> = %.4g, drift/<KE> = %.3g\n", ke_o, fl_o, dr_o);
    printf("  max |E_ours - E_stock| over the first 100 steps: %.3g kJ/mol\n", early);
    CHECK(fl_o <= RATIO_TOL * fl_s + RATIO_FLOOR, "energy fluctuation %.4g vs stock %.4g (allowed %.4g)", fl_o, fl_s,
          RATIO_TOL * fl_s + RATIO_FLOOR);
    CHECK(fl_o <= ABS_BOUND, "energy fluctuation %.4g > %g", fl_o, ABS_BOUND);
    CHECK(dr_o <= DRIFT_BOUND, "energy drift %.4g > %g", dr_o, DRIFT_BOUND);
    sm_pair_destroy(&s);
    printf("test_nve: OK\n");
    return 0;
}
