/*
 * The MM3* stretch and bend (HessianForce MM3Bond, MM3Angle) against stock OpenMM and by hand (per
 * platform; the stock side always runs on OpenMM's Reference platform).
 *
 * Stock: the gauche butane and anti 1-propanol of test_stock_crossval (two molecules, realistic
 * geometry plus a random perturbation) with every bond as a CustomBondForce and every angle as a
 * CustomAngleForce whose expressions are MacroModel's, written in Angstrom and degrees inside the
 * polynomial:
 *     k d^2 (1 - 2.55 dA + 3.793125 dA^2),                            d = r - r0, dA = 10 d
 *     k d^2 (1 - 0.014 D + 5.6e-5 D^2 - 7.0e-7 D^3 + 2.2e-8 D^4),     d = theta - theta0, D = d 180/pi
 * Our side: the same terms through hessfit_force_add_mm3_bond / _angle with the same k, r0, theta0
 * (r0 up to 10 % and theta0 up to 15 degrees off the geometry, so the anharmonic terms matter).
 * Asserted at four geometries (the perturbed one and three further random ones, rotated):
 *   - energy: |E_ours - E_stock| <= 1e-10 * sum_groups |E_stock,group|
 *   - forces: max |F_ours - F_stock| <= 1e-10 * max |F_stock|
 *   - every Hessian block against central differences of the stock forces (as test_stock_crossval).
 *
 * By hand: one bond and one angle of known geometry whose energies were worked out on paper from
 * the formulas in Angstrom and degrees (the numbers below), against the plugin's energy to 1e-12.
 */
#include "stock_molecules.h"
#include "term_cases.h"

#define FD_STEP 1e-5
#define FD_TOL 2e-7
#define EF_TOL 1e-10

static const char *bond_expression = "k*d^2*(1 - 2.55*dA + 3.793125*dA^2); dA = 10*d; d = r - r0";
static const char *angle_expression =
    "k*d^2*(1 - 0.014*D + 5.6e-5*D^2 - 7.0e-7*D^3 + 2.2e-8*D^4); D = d*57.295779513082320876; d = theta - theta0";

/* A custom force's per-term parameters k and the reference value, in that order. */
static OpenMM_DoubleArray *two_parameters(double k, double ref) {
    OpenMM_DoubleArray *p = OpenMM_DoubleArray_create(0);
    OpenMM_DoubleArray_append(p, k);
    OpenMM_DoubleArray_append(p, ref);
    return p;
}

static void add_mm3_bonds(sm_pair *s, const sm_mol *m) {
    OpenMM_CustomBondForce *f = OpenMM_CustomBondForce_create(bond_expression);
    OpenMM_CustomBondForce_addPerBondParameter(f, "k");
    OpenMM_CustomBondForce_addPerBondParameter(f, "r0");
    for (int b = 0; b < m->n_bonds; b++) {
        const double k = sm_uniform(1e5, 2e5), r0 = m->bond_ref[b] * sm_uniform(0.9, 1.1);
        OpenMM_DoubleArray *p = two_parameters(k, r0);
        OpenMM_CustomBondForce_addBond(f, m->bonds[b][0], m->bonds[b][1], p);
        OpenMM_DoubleArray_destroy(p);
        HF_OK(hessfit_force_add_mm3_bond(s->hf, m->bonds[b][0], m->bonds[b][1], sm_slot(s, k), sm_slot(s, r0), NULL));
    }
    sm_add_stock(s, (OpenMM_Force *) f);
}

static void add_mm3_angles(sm_pair *s, const sm_mol *m) {
    OpenMM_CustomAngleForce *f = OpenMM_CustomAngleForce_create(angle_expression);
    OpenMM_CustomAngleForce_addPerAngleParameter(f, "k");
    OpenMM_CustomAngleForce_addPerAngleParameter(f, "theta0");
    for (int a = 0; a < m->n_angles; a++) {
        const int *t = m->angles[a];
        const double k = sm_uniform(150.0, 350.0), th0 = m->angle_ref[a] + sm_uniform(-15.0, 15.0) * SM_DEG;
        OpenMM_DoubleArray *p = two_parameters(k, th0);
        OpenMM_CustomAngleForce_addAngle(f, t[0], t[1], t[2], p);
        OpenMM_DoubleArray_destroy(p);
        HF_OK(hessfit_force_add_mm3_angle(s->hf, t[0], t[1], t[2], sm_slot(s, k), sm_slot(s, th0), NULL));
    }
    sm_add_stock(s, (OpenMM_Force *) f);
}

static void check_against_stock(const char *platform) {
    sm_mol m;
    sm_butane_propanol(&m);

    sm_pair s;
    sm_pair_create(&s, &m);
    sm_add_hf_particles(&s, &m, 0, 1);
    add_mm3_bonds(&s, &m);
    add_mm3_angles(&s, &m);
    sm_pair_open(&s, platform, m.pos, 0.001);

    printf("MM3* bonds (group 0) and angles (group 1) against CustomBondForce + CustomAngleForce:\n");
    sm_check_poses(&s, &m, 4, FD_STEP, FD_TOL, EF_TOL);
    sm_pair_destroy(&s);
}

/*
 * By hand. Bond: r = 0.1650 nm, r0 = 0.1530 nm (dr = 0.12 A), k = 1.0e5 kJ/mol/nm^2:
 *     k dr^2 = 1e5 x 0.012^2 = 14.4;  1 - 2.55 x 0.12 + 3.793125 x 0.0144 = 1 - 0.306 + 0.054621
 *     = 0.748621;  E = 14.4 x 0.748621 = 10.7801424 kJ/mol.
 * Angle: theta = 120 deg, theta0 = 110 deg (D = 10, dt = pi/18 rad), k = 300 kJ/mol/rad^2:
 *     1 - 0.14 + 0.0056 - 0.0007 + 0.00022 = 0.86512;  k dt^2 = 300 pi^2 / 324;
 *     E = 300 pi^2 / 324 x 0.86512 = 0.80103703... x pi^2 = 7.9059186662 kJ/mol.
 */
static void check_by_hand(const char *platform) {
    const double bond_hand = 10.7801424;
    const double pi = SM_PI, angle_hand = 300.0 * pi * pi / 324.0 * 0.86512;
    /* a bond 0-1 of 0.165 nm along x; an angle 2-3-4 of 120 degrees, far away in a second molecule */
    const double th = 120.0 * SM_DEG;
    double pos[15] = {0, 0, 0, 0.165, 0, 0, 1 + 0.1, 1, 1, 1, 1, 1, 1 + 0.12 * cos(th), 1 + 0.12 * sin(th), 1};
    hessfit_force *f;
    HF_OK(hessfit_force_create(&f));
    for (int i = 0; i < 5; i++)
        HF_OK(hessfit_force_add_particle(f, HESSFIT_NO_SLOT, HESSFIT_NO_SLOT, HESSFIT_NO_SLOT, NULL));
    const int mol_a[2] = {0, 1}, mol_b[3] = {2, 3, 4};
    HF_OK(hessfit_force_add_molecule(f, mol_a, 2, NULL));
    HF_OK(hessfit_force_add_molecule(f, mol_b, 3, NULL));
    /* slots 0 k_bond, 1 r0, 2 k_angle, 3 theta0 */
    const double values[4] = {1.0e5, 0.153, 300.0, 110.0 * SM_DEG};
    for (int i = 0; i < 4; i++)
        add_slot(f, values[i]);
    HF_OK(hessfit_force_add_mm3_bond(f, 0, 1, 0, 1, NULL));
    HF_OK(hessfit_force_add_mm3_angle(f, 2, 3, 4, 2, 3, NULL));
    OpenMM_System *system = OpenMM_System_create();
    for (int i = 0; i < 5; i++)
        OpenMM_System_addParticle(system, 12.0);
    HF_OK(hessfit_force_add_to_system(f, system, NULL));
    OpenMM_Integrator *integrator;
    OpenMM_Context *context = test_create_context(system, platform, pos, 5, 0.001, &integrator);
    double energies[2];
    HF_OK(hessfit_force_get_molecule_energies(f, context, energies, 2));
    printf("by hand: bond %.12f (hand %.12f), angle %.12f (hand %.12f) kJ/mol\n", energies[0], bond_hand, energies[1],
           angle_hand);
    /* the test's own Angstrom/degree helpers give the same numbers */
    CHECK_CLOSE(mm3_bond_energy(1.0e5, 0.165, 0.153), bond_hand, 1e-13, bond_hand, "mm3_bond_energy by hand");
    CHECK_CLOSE(mm3_angle_energy(300.0, th, 110.0 * SM_DEG), angle_hand, 1e-13, angle_hand, "mm3_angle_energy by hand");
    CHECK_CLOSE(energies[0], bond_hand, 1e-12, bond_hand, "MM3* bond energy vs the hand value");
    CHECK_CLOSE(energies[1], angle_hand, 1e-12, angle_hand, "MM3* angle energy vs the hand value");
    CHECK(fabs(angle_hand - 7.9059186662) < 1e-10, "the angle's hand value is %.12f", angle_hand);

    /* the terms changed in place (the full update path): the bond onto a new r0 slot of 0.160 nm
     * (dr = 0.05 A: 1e5 x 0.005^2 x (1 - 0.1275 + 0.0094828125) = 2.20495703125), the angle's
     * atoms reversed (the same angle) */
    const int r0_new = add_slot(f, 0.160);
    HF_OK(hessfit_force_set_mm3_bond(f, 0, 0, 1, 0, r0_new));
    HF_OK(hessfit_force_set_mm3_angle(f, 0, 4, 3, 2, 2, 3));
    int p1, p2, p3, ks, r0s, n_bonds, n_angles;
    HF_OK(hessfit_force_get_mm3_bond(f, 0, &p1, &p2, &ks, &r0s));
    CHECK(p1 == 0 && p2 == 1 && ks == 0 && r0s == r0_new, "MM3* bond 0 reads back as %d %d %d %d", p1, p2, ks, r0s);
    HF_OK(hessfit_force_get_mm3_angle(f, 0, &p1, &p2, &p3, &ks, NULL));
    CHECK(p1 == 4 && p2 == 3 && p3 == 2 && ks == 2, "MM3* angle 0 reads back as %d %d %d %d", p1, p2, p3, ks);
    HF_OK(hessfit_force_get_num_mm3_bonds(f, &n_bonds));
    HF_OK(hessfit_force_get_num_mm3_angles(f, &n_angles));
    CHECK(n_bonds == 1 && n_angles == 1, "%d MM3* bonds, %d MM3* angles", n_bonds, n_angles);
    HF_FAILS(hessfit_force_get_mm3_bond(f, 1, NULL, NULL, NULL, NULL), HESSFIT_ERROR_INDEX);
    HF_FAILS(hessfit_force_set_mm3_angle(f, 0, 4, 3, 2, 2, 99), HESSFIT_ERROR_INDEX);
    HF_FAILS(hessfit_force_add_mm3_bond(f, 0, 0, 0, 1, NULL), HESSFIT_ERROR_INDEX);
    HF_OK(hessfit_force_update_parameters_in_context(f, context));
    HF_OK(hessfit_force_get_molecule_energies(f, context, energies, 2));
    CHECK_CLOSE(energies[0], 2.20495703125, 1e-12, 2.20495703125, "MM3* bond energy after set_mm3_bond");
    CHECK_CLOSE(energies[1], angle_hand, 1e-12, angle_hand, "MM3* angle energy after set_mm3_angle");
    /* and the table alone (the table-only path): k doubled doubles the energy */
    double table[5];
    HF_OK(hessfit_force_get_parameters(f, table, 5));
    table[0] = 2.0e5;
    HF_OK(hessfit_force_set_parameters(f, table, 5));
    HF_OK(hessfit_force_update_parameters_in_context(f, context));
    HF_OK(hessfit_force_get_molecule_energies(f, context, energies, 2));
    CHECK_CLOSE(energies[0], 2 * 2.20495703125, 1e-12, 2.20495703125, "MM3* bond energy after a new k");
    printf("after set_mm3_bond / set_mm3_angle and a new k: bond %.12f, angle %.12f kJ/mol\n", energies[0], energies[1]);
    OpenMM_Context_destroy(context);
    OpenMM_Integrator_destroy(integrator);
    hessfit_force_destroy(f);
    OpenMM_System_destroy(system);
}

int main(int argc, char **argv) {
    const char *platform = test_platform_name(argc, argv);
    printf("test_mm3_stock on %s (stock on Reference)\n", platform);
    test_seed(0x33AA33ULL);
    check_against_stock(platform);
    check_by_hand(platform);
    printf("test_mm3_stock: OK\n");
    return 0;
}
