/*
 * Torsion terms against OpenMM's stock torsion forces (per platform; stock on Reference).
 *
 * Four atoms p1-p2-p3-p4 (bond lengths 0.153 / 0.1529 / 0.109 nm, bond angles 111 / 109.5 deg)
 * carry only torsion terms. Cases (each our hessfit_force vs a stock System):
 *   A. our OPLS torsions  vs  RBTorsionForce with the standard OPLS -> RB conversion
 *   B. our OPLS torsions  vs  PeriodicTorsionForce with k = V_m/2, periodicity m, phase 0 (m odd)
 *      or pi (m even)
 *   C. our RB torsions    vs  RBTorsionForce with arbitrary C0..C5 (C5 != 0)
 * Each case has two torsions on the same atoms: one with every coefficient set and one on the
 * reversed atom list (p4, p3, p2, p1) with some coefficient slots NoSlot (= zero).
 *
 * OPLS -> RB conversion, derived here (OpenMM's RB convention: E = sum C_n cos(psi)^n with
 * psi = phi - 180 deg, so c = cos psi = -cos phi):
 *   cos phi  = -c,  cos 2phi = 2c^2 - 1,  cos 3phi = -4c^3 + 3c,  cos 4phi = 8c^4 - 8c^2 + 1
 *   E = V1/2 (1 - c) + V2/2 (2 - 2c^2) + V3/2 (1 - 4c^3 + 3c) + V4/2 (8c^2 - 8c^4)
 *     = [V2 + (V1 + V3)/2] + [(-V1 + 3 V3)/2] c + [-V2 + 4 V4] c^2 + [-2 V3] c^3 + [-4 V4] c^4
 *   so C0 = V2 + (V1+V3)/2, C1 = (-V1 + 3 V3)/2, C2 = -V2 + 4 V4, C3 = -2 V3, C4 = -4 V4, C5 = 0.
 * The conversion itself is checked without our code: the stock RB System of case A and the stock
 * periodic System of case B must agree (energies and forces) at every point.
 *
 * Points: a scan of the dihedral from -180 to 180 deg in steps of 15 deg (built with exact
 * cos/sin at multiples of 90 deg, so 0 and +-180 are exactly planar), plus 12 random geometries
 * (random dihedral, bond angles in [70, 160] deg, random rotation).
 * Asserted at every point, for every case:
 *   - |E_ours - E_stock| <= 1e-10 * E_scale and max |F_ours - F_stock| <= 1e-10 * F_scale, where
 *     E_scale, F_scale are the largest stock |E|, max |F| over all points of that case (the forces
 *     vanish at 0 and 180 deg, so a pointwise scale would be meaningless there);
 *   - the analytic Hessian against central differences of the STOCK forces:
 *     max |H - H_fd| <= FD_TOL * H_scale (H_scale the largest max |H_fd| over the points).
 */
#include "stock_molecules.h"

/*
 * FD step and error budget: truncation h^2/6 |d^3F|. A torsion term of multiplicity up to 5 (RB
 * has cos^5) around a bond with lever arms r ~ 0.11-0.15 nm has |d^3F| / |H| ~ c m^2 / r^2 with
 * c of order 10, so the relative truncation error is ~ c m^2 / 6 (h/r)^2: ~4e-7 at h = 1e-5 nm
 * (r = 0.109 nm, m = 5, c = 10). Roundoff: |F| <= ~500 kJ/mol/nm, eps * 500 / h against
 * |H| ~ 1e3-1e4: ~1e-11 at h = 2e-6 nm. So h = 2e-6 nm, expected ~2e-8 (truncation).
 * Measured (Reference): the error scales as h^2 from h = 1e-5 (4.8e-7) to 5e-7 nm (1.2e-9),
 * 1.9e-8 at h = 2e-6 nm (at exactly 0 / 180 deg: 5e-10 - 2e-9). Asserted: FD_TOL = 2e-7.
 */
#ifndef FD_STEP
#define FD_STEP 2e-6
#endif
#define FD_TOL 2e-7
#define EF_TOL 1e-10
#define N_SCAN 25
#define N_RANDOM 12
#define N_POINTS (N_SCAN + N_RANDOM)
#define N_CASES 3

/* Four atoms with dihedral phi (deg): p2 at the origin, p3 on +x, p1 in the xy plane. */
static void torsion_geometry(double phi_deg, double theta1_deg, double theta2_deg, double *pos) {
    double c, s;
    double q = phi_deg / 90.0;
    if (q == floor(q)) { /* exact values at multiples of 90 deg: 0 and 180 exactly planar */
        int k = ((int) q % 4 + 4) % 4;
        c = k == 0 ? 1.0 : k == 2 ? -1.0 : 0.0;
        s = k == 1 ? 1.0 : k == 3 ? -1.0 : 0.0;
    } else {
        c = cos(phi_deg * SM_DEG);
        s = sin(phi_deg * SM_DEG);
    }
    double t1 = theta1_deg * SM_DEG, t2 = theta2_deg * SM_DEG, r1 = 0.153, r2 = 0.1529, r3 = 0.109;
    pos[0] = r1 * cos(t1); pos[1] = r1 * sin(t1); pos[2] = 0.0;         /* p1 */
    pos[3] = 0.0; pos[4] = 0.0; pos[5] = 0.0;                            /* p2 */
    pos[6] = r2; pos[7] = 0.0; pos[8] = 0.0;                             /* p3 */
    pos[9] = r2 - r3 * cos(t2); pos[10] = r3 * sin(t2) * c; pos[11] = r3 * sin(t2) * s; /* p4 */
}

int main(int argc, char **argv) {
    const char *platform = test_platform_name(argc, argv);
    printf("test_torsions on %s (stock on Reference)\n", platform);
    test_seed(0x7051105ULL);

    sm_mol m;
    sm_init(&m);
    m.n = 4;
    m.n_molecules = 1;
    m.mass[0] = m.mass[1] = m.mass[2] = 12.011;
    m.mass[3] = 1.008;
    const int fwd[4] = {0, 1, 2, 3}, rev[4] = {3, 2, 1, 0};

    /* OPLS torsions: all four V (one negative), and V1, V3 only (V2, V4 NoSlot) on the reversed atoms */
    const double va[4] = {3.1, -1.4, 2.6, 0.75}, vb[4] = {-2.2, 0.0, 1.3, 0.0};
    const int vb_used[4] = {1, 0, 1, 0};
    /* RB torsions: arbitrary C0..C5; the second one with C1, C4 NoSlot */
    const double ca[6] = {9.28, 12.16, -13.12, -3.06, 26.24, -31.5}, cb[6] = {1.5, 0.0, -2.25, 4.1, 0.0, 0.8};
    const int cb_used[6] = {1, 0, 1, 1, 0, 1};

    sm_pair cases[N_CASES];
    const char *names[N_CASES] = {"A: OPLS vs stock RB", "B: OPLS vs stock periodic", "C: RB vs stock RB"};
    for (int k = 0; k < N_CASES; k++) {
        sm_pair_create(&cases[k], &m);
        sm_add_hf_particles(&cases[k], &m, 0, 0);
    }
    /* ours: OPLS in A and B, RB in C */
    for (int k = 0; k < 2; k++) {
        int sa[4], sb[4];
        for (int i = 0; i < 4; i++) {
            sa[i] = sm_slot(&cases[k], va[i]);
            sb[i] = vb_used[i] ? sm_slot(&cases[k], vb[i]) : HESSFIT_NO_SLOT;
        }
        HF_OK(hessfit_force_add_opls_torsion(cases[k].hf, fwd[0], fwd[1], fwd[2], fwd[3], sa, NULL));
        HF_OK(hessfit_force_add_opls_torsion(cases[k].hf, rev[0], rev[1], rev[2], rev[3], sb, NULL));
    }
    {
        int sa[6], sb[6];
        for (int i = 0; i < 6; i++) {
            sa[i] = sm_slot(&cases[2], ca[i]);
            sb[i] = cb_used[i] ? sm_slot(&cases[2], cb[i]) : HESSFIT_NO_SLOT;
        }
        HF_OK(hessfit_force_add_rb_torsion(cases[2].hf, fwd[0], fwd[1], fwd[2], fwd[3], sa, NULL));
        HF_OK(hessfit_force_add_rb_torsion(cases[2].hf, rev[0], rev[1], rev[2], rev[3], sb, NULL));
    }
    /* stock A: RB converted from OPLS */
    {
        OpenMM_RBTorsionForce *f = OpenMM_RBTorsionForce_create();
        double c[6];
        opls_to_rb(va, c);
        OpenMM_RBTorsionForce_addTorsion(f, fwd[0], fwd[1], fwd[2], fwd[3], c[0], c[1], c[2], c[3], c[4], c[5]);
        opls_to_rb(vb, c);
        OpenMM_RBTorsionForce_addTorsion(f, rev[0], rev[1], rev[2], rev[3], c[0], c[1], c[2], c[3], c[4], c[5]);
        sm_add_stock(&cases[0], (OpenMM_Force *) f);
    }
    /* stock B: periodic, V_m/2 with phase 0 (odd m) or pi (even m) */
    {
        OpenMM_PeriodicTorsionForce *f = OpenMM_PeriodicTorsionForce_create();
        for (int i = 0; i < 4; i++) {
            double phase = (i + 1) % 2 ? 0.0 : SM_PI;
            OpenMM_PeriodicTorsionForce_addTorsion(f, fwd[0], fwd[1], fwd[2], fwd[3], i + 1, phase, 0.5 * va[i]);
            if (vb_used[i])
                OpenMM_PeriodicTorsionForce_addTorsion(f, rev[0], rev[1], rev[2], rev[3], i + 1, phase, 0.5 * vb[i]);
        }
        sm_add_stock(&cases[1], (OpenMM_Force *) f);
    }
    /* stock C: RB with the same arbitrary coefficients */
    {
        OpenMM_RBTorsionForce *f = OpenMM_RBTorsionForce_create();
        OpenMM_RBTorsionForce_addTorsion(f, fwd[0], fwd[1], fwd[2], fwd[3], ca[0], ca[1], ca[2], ca[3], ca[4], ca[5]);
        OpenMM_RBTorsionForce_addTorsion(f, rev[0], rev[1], rev[2], rev[3], cb[0], cb[1], cb[2], cb[3], cb[4], cb[5]);
        sm_add_stock(&cases[2], (OpenMM_Force *) f);
    }

    /* the points */
    static double points[N_POINTS][12];
    double point_phi[N_POINTS];
    for (int p = 0; p < N_SCAN; p++) {
        point_phi[p] = -180.0 + 15.0 * p;
        torsion_geometry(point_phi[p], 111.0, 109.5, points[p]);
    }
    for (int p = N_SCAN; p < N_POINTS; p++) {
        point_phi[p] = sm_uniform(-180.0, 180.0);
        torsion_geometry(point_phi[p], sm_uniform(70.0, 160.0), sm_uniform(70.0, 160.0), points[p]);
        const double axis[3] = {sm_uniform(-1, 1), sm_uniform(-1, 1), sm_uniform(-1, 1)};
        test_rotate(points[p], 4, axis, sm_uniform(0.0, 2.0 * SM_PI));
        const double shift[3] = {sm_uniform(-0.5, 0.5), sm_uniform(-0.5, 0.5), sm_uniform(-0.5, 0.5)};
        for (int i = 0; i < 12; i++)
            points[p][i] += shift[i % 3];
    }
    for (int p = 0; p < N_POINTS; p++) {
        double phi = sm_dihedral(points[p], 0, 1, 2, 3) / SM_DEG;
        double d = fabs(phi - point_phi[p]);
        CHECK(fmin(d, 360.0 - d) < 1e-9, "point %d: dihedral %.12g deg, built as %.12g", p, phi, point_phi[p]);
    }
    for (int k = 0; k < N_CASES; k++)
        sm_pair_open(&cases[k], platform, points[0], 0.001);

    /* the conversion, stock against stock: RB(A) == periodic(B) */
    {
        double fa[12], fb[12], worst = 0.0, escale = 0.0, fscale = 0.0, worst_f = 0.0;
        for (int p = 0; p < N_POINTS; p++) {
            test_set_positions(cases[0].stock_ctx, points[p], 4);
            test_set_positions(cases[1].stock_ctx, points[p], 4);
            double ea = test_energy_forces(cases[0].stock_ctx, -1, fa, 4);
            double eb = test_energy_forces(cases[1].stock_ctx, -1, fb, 4);
            worst = fmax(worst, fabs(ea - eb));
            worst_f = fmax(worst_f, test_max_abs_diff(fa, fb, 12));
            escale = fmax(escale, fabs(eb));
            fscale = fmax(fscale, test_max_abs(fb, 12));
        }
        printf("  OPLS->RB conversion, stock RB vs stock periodic: rel. error energy %.3g, forces %.3g\n",
               worst / escale, worst_f / fscale);
        CHECK(worst <= 1e-12 * escale, "stock RB (converted) and stock periodic disagree: %.3g (scale %.3g)", worst, escale);
        CHECK(worst_f <= 1e-12 * fscale, "stock RB (converted) and stock periodic forces disagree: %.3g", worst_f);
    }

    int failed = 0;
    for (int k = 0; k < N_CASES; k++) {
        sm_pair *s = &cases[k];
        /* scales over all points, from the stock side */
        double escale = 0.0, fscale = 0.0, hscale = 0.0, f[12];
        static double hfd[144];
        const int atoms[4] = {0, 1, 2, 3};
        for (int p = 0; p < N_POINTS; p++) {
            test_set_positions(s->stock_ctx, points[p], 4);
            escale = fmax(escale, fabs(test_energy_forces(s->stock_ctx, -1, f, 4)));
            fscale = fmax(fscale, test_max_abs(f, 12));
            sm_fd_hessian(s->stock_ctx, points[p], 4, atoms, 4, FD_STEP, hfd);
            hscale = fmax(hscale, test_max_abs(hfd, 144));
        }
        double worst_e = 0, worst_f = 0, worst_h = 0, worst_h_planar = 0;
        for (int p = 0; p < N_POINTS; p++) {
            sm_pair_set_positions(s, points[p]);
            double rel_e, rel_f, rel_h;
            sm_compare_energy_forces(s, escale, fscale, &rel_e, &rel_f);
            sm_compare_hessian(s, points[p], FD_STEP, hscale, &rel_h);
            if (rel_e > EF_TOL || rel_f > EF_TOL || rel_h > FD_TOL) {
                printf("  FAIL %s at phi = %g deg: rel. error energy %.3g, forces %.3g, Hessian %.3g\n", names[k],
                       point_phi[p], rel_e, rel_f, rel_h);
                failed++;
            }
            worst_e = fmax(worst_e, rel_e);
            worst_f = fmax(worst_f, rel_f);
            worst_h = fmax(worst_h, rel_h);
            if (p < N_SCAN && fmod(fabs(point_phi[p]), 180.0) == 0.0)
                worst_h_planar = fmax(worst_h_planar, rel_h);
        }
        printf("  %-27s max rel. error energy %.3g, forces %.3g; Hessian vs FD (h = %g nm) %.3g (at 0/180 deg: %.3g)\n",
               names[k], worst_e, worst_f, FD_STEP, worst_h, worst_h_planar);
    }
    CHECK(failed == 0, "%d point(s) out of tolerance (energy/forces %g, Hessian %g)", failed, EF_TOL, FD_TOL);
    for (int k = 0; k < N_CASES; k++)
        sm_pair_destroy(&cases[k]);
    printf("test_torsions: OK\n");
    return 0;
}
