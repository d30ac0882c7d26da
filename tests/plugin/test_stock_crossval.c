/*
 * Cross-validation against OpenMM's stock forces (per platform; the stock side always runs on
 * OpenMM's Reference platform).
 *
 * One System holds two molecules, a gauche butane (14 atoms) and an anti 1-propanol (12 atoms),
 * built with realistic geometry plus a random perturbation. The stock side has
 * HarmonicBondForce, HarmonicAngleForce, PeriodicTorsionForce (periodicities 1..4, non-zero
 * phases) and a NonbondedForce (NoCutoff, Lorentz-Berthelot, charges; exceptions from OpenMM's
 * createExceptionsFromBonds zero the 1-2 and 1-3 pairs and scale the 1-4 pairs; every
 * cross-molecule pair gets a zero exception). Our side is one
 * hessfit_force built directly through the C API with the same energy: bond/angle k = k_stock / 2,
 * Lorentz-Berthelot combining, exclusions for 1-2/1-3, and for the 1-4 pairs:
 *   - butane: 1-4 pairs with coulomb14Scale = 1/1.2, lj14Scale = 0.5 (AMBER values),
 *   - propanol: explicit pairs with arbitrary charge products, sigmas and epsilons (the stock side
 *     has the same numbers in its exceptions).
 * The two molecules are declared with hessfit_force_add_molecule, propanol with its atoms in
 * reversed order, so the Hessian block layout and ordering are checked too.
 *
 * Asserted, at four geometries (the perturbed one and three further random ones, rotated):
 *   - energy: |E_ours - E_stock| <= 1e-10 * sum_groups |E_stock,group|
 *   - forces: max |F_ours - F_stock| <= 1e-10 * max |F_stock|
 *   - every Hessian block against central differences of the STOCK forces,
 *       max |H_analytic - H_fd| <= FD_TOL * max |H_fd|  (per block), and block symmetry.
 */
#include "stock_molecules.h"

/*
 * Finite-difference step and its error budget. H_fd = -(F(x+h) - F(x-h)) / (2h) has
 *   truncation error  h^2/6 |d^3F/dx^3|  and  roundoff error  ~ eps |F_terms| / h.
 * The stiffest terms are the bonds (k_stock <= 4e5 kJ/mol/nm^2, r ~ 0.1 nm; |H| up to ~1e6 with
 * the angle terms). For a bond |d^3F| ~ c k_stock / r^2 with c a number of order 10 (from the
 * curvature of r(x)), so the truncation error relative to |H| ~ k_stock is c/6 (h/r)^2: with
 * h = 1e-5 nm and r = 0.095 nm (O-H), about 2e-9 c, i.e. a few 1e-8. Roundoff: the largest single
 * force contributions are ~1e4 kJ/mol/nm, eps * 1e4 / 1e-5 ~ 2e-7 kJ/mol/nm^2, ~1e-12 relative.
 * Measured (Reference): the error scales exactly as h^2 from h = 1e-4 nm (4.9e-6) down to
 * h = 1e-6 nm (3.8e-10), i.e. ~500 h^2 (c ~ 30), ~5e-8 at h = 1e-5. Asserted: 2e-7.
 */
#ifndef FD_STEP
#define FD_STEP 1e-5
#endif
#define FD_TOL 2e-7
#define EF_TOL 1e-10

int main(int argc, char **argv) {
    const char *platform = test_platform_name(argc, argv);
    printf("test_stock_crossval on %s (stock on Reference)\n", platform);
    test_seed(0x5eedC0FFEEULL);

    sm_mol m;
    sm_butane_propanol(&m);

    sm_pair s;
    sm_pair_create(&s, &m);
    sm_add_hf_particles(&s, &m, 1, 1);
    sm_add_bonds(&s, &m);
    sm_add_angles(&s, &m);
    sm_add_periodic_torsions(&s, &m);

    /* nonbonded */
    const double c14 = 1.0 / 1.2, lj14 = 0.5;
    OpenMM_NonbondedForce *nb = sm_stock_nonbonded(&m);
    HF_OK(hessfit_force_set_combining_rule(s.hf, HESSFIT_COMBINE_LORENTZ_BERTHELOT));
    HF_OK(hessfit_force_set_14_scales(s.hf, c14, lj14));
    /* stock exceptions from OpenMM's own createExceptionsFromBonds (1-2/1-3 zeroed, 1-4 scaled by
     * c14 / lj14 with LB sigma), then the propanol 1-4 exceptions replaced by arbitrary values */
    OpenMM_BondArray *bond_array = OpenMM_BondArray_create(0);
    for (int b = 0; b < m.n_bonds; b++)
        OpenMM_BondArray_append(bond_array, m.bonds[b][0], m.bonds[b][1]);
    OpenMM_NonbondedForce_createExceptionsFromBonds(nb, bond_array, c14, lj14);
    OpenMM_BondArray_destroy(bond_array);
    int n_excl = 0, n_14 = 0, n_explicit = 0;
    for (int i = 0; i < m.n; i++)
        for (int j = i + 1; j < m.n; j++) {
            int d = m.dist[i][j];
            if (d == 1 || d == 2) {
                HF_OK(hessfit_force_add_exclusion(s.hf, i, j, NULL));
                n_excl++;
            } else if (d == 3 && m.molecule[i] == 0) {
                HF_OK(hessfit_force_add_pair14(s.hf, i, j, NULL));
                n_14++;
            } else if (d == 3) {
                double qq = sm_uniform(-0.3, 0.3), sig = sm_uniform(0.2, 0.35), eps = sm_uniform(0.05, 0.5);
                OpenMM_NonbondedForce_addException(nb, i, j, qq, sig, eps, OpenMM_True);
                HF_OK(hessfit_force_add_explicit_pair(s.hf, i, j, sm_slot(&s, qq), sm_slot(&s, sig), sm_slot(&s, eps), NULL));
                n_explicit++;
            }
        }
    /* OpenMM's exceptions and the test's own topology agree on which pairs are special */
    CHECK(OpenMM_NonbondedForce_getNumExceptions(nb) == 14 * 12 + n_excl + n_14 + n_explicit,
          "stock has %d exceptions, expected %d", OpenMM_NonbondedForce_getNumExceptions(nb),
          14 * 12 + n_excl + n_14 + n_explicit);
    /* counted by hand: butane 13 bonds + 24 1-3 pairs excluded, 27 1-4 pairs (3 C-C bonds x 3 x 3);
     * propanol 11 bonds + 19 1-3 pairs excluded, 21 1-4 pairs (9 + 9 + 3) */
    CHECK(n_excl == 37 + 30, "%d excluded pairs, expected 67", n_excl);
    CHECK(n_14 == 27, "butane has %d 1-4 pairs, expected 27", n_14);
    CHECK(n_explicit == 21, "propanol has %d 1-4 pairs, expected 21", n_explicit);
    printf("  %d exclusions, %d 1-4 pairs (butane), %d explicit pairs (propanol)\n", n_excl, n_14, n_explicit);
    sm_add_stock(&s, (OpenMM_Force *) nb);

    sm_pair_open(&s, platform, m.pos, 0.001);
    int nmol;
    HF_OK(hessfit_force_get_num_molecules(s.hf, &nmol));
    CHECK(nmol == 2, "%d molecules", nmol);
    int order[SM_MAX_ATOMS], na;
    HF_OK(hessfit_force_get_molecule_particles(s.hf, 1, order, SM_MAX_ATOMS, &na));
    CHECK(na == 12 && order[0] == 25 && order[11] == 14, "propanol block order %d..%d (%d atoms)", order[0], order[na - 1], na);

    sm_check_poses(&s, &m, 4, FD_STEP, FD_TOL, EF_TOL);
    sm_pair_destroy(&s);
    printf("test_stock_crossval: OK\n");
    return 0;
}
