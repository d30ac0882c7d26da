/*
 * The MM3* stretch and bend (HessianForce MM3Bond, MM3Angle) and pair (MM3Pair) against stock
 * OpenMM and by hand (per platform; the stock side always runs on OpenMM's Reference platform).
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
 *
 * The MM3* pair (HessianForce MM3Pair) the same way: every same-molecule pair beyond 1-3 of an
 * anti octane and an anti 1-propanol (pairs inside 0.6 nm, in the 0.6-0.8 nm switch and beyond)
 * against a CustomBondForce with MacroModel's expression in Angstrom and kJ/mol, the switch written
 * with step/select:
 *     eps S (184000 exp(-12 rA/RA) - 2.25 (RA/rA)^6) + 10 ONE_4PI_EPS0 qq / rA,
 *     S = 1 (rA < 6), (64 - rA^2) / (64 - 36) (6 <= rA < 8), 0 (rA >= 8)
 * (energy and forces to 1e-10 relative, the Hessian against FD of the stock forces); by hand at
 * 0.35 nm, at 0.7 nm (the switch value 15/28) and at 0.85 nm (Coulomb only, dE/dR = dE/deps = 0
 * exactly); set/get and both update paths.
 *
 * The 10-12 hydrogen bond (HessianForce HydrogenBond) the same way: every pair beyond 1-3 with a
 * hydrogen of a gauche octane and a gauche 1-butanol against a CustomBondForce with MacroModel's
 * expression 418.4 (C'/rA^12 - D'/rA^10) in Angstrom and the .fld's columns C', D'.
 */
#include "stock_molecules.h"
#include <string.h>
#include "term_cases.h"

#define FD_STEP 1e-5
#define FD_TOL 2e-7
#define EF_TOL 1e-10
#define CROSS_EF_TOL 1e-11

static const char *bond_expression = "k*d^2*(1 - 2.55*dA + 3.793125*dA^2); dA = 10*d; d = s*r - r0";
static const char *angle_expression =
    "k*d^2*(1 - 0.014*D + 5.6e-5*D^2 - 7.0e-7*D^3 + 2.2e-8*D^4); D = d*57.295779513082320876; d = theta - theta0";

/* A custom force's per-term parameters k and the reference value, in that order. */
static OpenMM_DoubleArray *two_parameters(double k, double ref) {
    OpenMM_DoubleArray *p = OpenMM_DoubleArray_create(0);
    OpenMM_DoubleArray_append(p, k);
    OpenMM_DoubleArray_append(p, ref);
    return p;
}

/* MacroModel's distance scale of a bond to a hydrogen (a reduced hydrogen), 1 otherwise */
static double bond_scale(const sm_mol *m, int a, int b) {
    return m->element[a] == 'H' || m->element[b] == 'H' ? MM3_REDUCED_H_SCALE : 1.0;
}

/* every bond, those to hydrogen with MacroModel's distance scale 1/0.923 (r0 then fits s r) */
static void add_mm3_bonds(sm_pair *s, const sm_mol *m) {
    OpenMM_CustomBondForce *f = OpenMM_CustomBondForce_create(bond_expression);
    OpenMM_CustomBondForce_addPerBondParameter(f, "k");
    OpenMM_CustomBondForce_addPerBondParameter(f, "r0");
    OpenMM_CustomBondForce_addPerBondParameter(f, "s");
    for (int b = 0; b < m->n_bonds; b++) {
        const double sc = bond_scale(m, m->bonds[b][0], m->bonds[b][1]);
        const double k = sm_uniform(1e5, 2e5), r0 = sc * m->bond_ref[b] * sm_uniform(0.9, 1.1);
        OpenMM_DoubleArray *p = two_parameters(k, r0);
        OpenMM_DoubleArray_append(p, sc);
        OpenMM_CustomBondForce_addBond(f, m->bonds[b][0], m->bonds[b][1], p);
        OpenMM_DoubleArray_destroy(p);
        int index;
        HF_OK(hessfit_force_add_mm3_bond(s->hf, m->bonds[b][0], m->bonds[b][1], sm_slot(s, k), sm_slot(s, r0), &index));
        if (sc != 1.0)
            HF_OK(hessfit_force_set_mm3_bond_distance_scale(s->hf, index, sc));
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

/* ---- the MM3* cross terms ------------------------------------------------------------------ */

/* A CustomCompoundBondForce of n particles with the given per-bond parameter names (NULL-ended). */
static OpenMM_CustomCompoundBondForce *compound_force(int n, const char *expression, const char *const *names) {
    OpenMM_CustomCompoundBondForce *f = OpenMM_CustomCompoundBondForce_create(n, expression);
    for (int i = 0; names[i] != NULL; i++)
        OpenMM_CustomCompoundBondForce_addPerBondParameter(f, names[i]);
    return f;
}

static void add_compound_bond(OpenMM_CustomCompoundBondForce *f, int n, const int *particles, int n_values,
                              const double *values) {
    OpenMM_IntArray *p = OpenMM_IntArray_create(n);
    OpenMM_DoubleArray *v = OpenMM_DoubleArray_create(0);
    for (int i = 0; i < n; i++)
        OpenMM_IntArray_set(p, i, particles[i]);
    for (int i = 0; i < n_values; i++)
        OpenMM_DoubleArray_append(v, values[i]);
    OpenMM_CustomCompoundBondForce_addBond(f, p, v);
    OpenMM_IntArray_destroy(p);
    OpenMM_DoubleArray_destroy(v);
}

/* every angle (i, j, k) as a stretch-bend, bonds to hydrogen with the distance scale 1/0.923 */
static void add_mm3_stretch_bends(sm_pair *s, const sm_mol *m) {
    static const char *names[] = {"k", "r0a", "r0b", "theta0", "sa", "sb", NULL};
    OpenMM_CustomCompoundBondForce *f = compound_force(
        3, "k*((sa*distance(p1,p2) - r0a) + (sb*distance(p3,p2) - r0b))*(angle(p1,p2,p3) - theta0)", names);
    for (int a = 0; a < m->n_angles; a++) {
        const int *t = m->angles[a];
        const double sa = bond_scale(m, t[0], t[1]), sb = bond_scale(m, t[2], t[1]);
        const double v[6] = {sm_uniform(-700.0, 700.0), sa * sm_distance(m->pos, t[0], t[1]) * sm_uniform(0.9, 1.1),
                             sb * sm_distance(m->pos, t[2], t[1]) * sm_uniform(0.9, 1.1),
                             m->angle_ref[a] + sm_uniform(-15.0, 15.0) * SM_DEG, sa, sb};
        add_compound_bond(f, 3, t, 6, v);
        HF_OK(hessfit_force_add_mm3_stretch_bend(s->hf, t[0], t[1], t[2], sm_slot(s, v[0]), sm_slot(s, v[1]),
                                                 sm_slot(s, v[2]), sm_slot(s, v[3]), sa, sb, NULL));
    }
    sm_add_stock(s, (OpenMM_Force *) f);
}

/* every two angles at one centre as a bend-bend: those sharing an outer atom x as (x,c,a | x,c,b) on
 * the stock side (4 particles) and alternately (x,c,a | x,c,b) and (a,c,x | b,c,x) on ours; those
 * sharing none with 5 particles */
static void add_mm3_bend_bends(sm_pair *s, const sm_mol *m, int *n_shared, int *n_distinct) {
    static const char *names[] = {"k", "t1", "t2", NULL};
    OpenMM_CustomCompoundBondForce *f5 = compound_force(5, "k*(angle(p1,p2,p3) - t1)*(angle(p4,p2,p5) - t2)", names);
    OpenMM_CustomCompoundBondForce *f4 = compound_force(4, "k*(angle(p1,p2,p3) - t1)*(angle(p1,p2,p4) - t2)", names);
    *n_shared = *n_distinct = 0;
    for (int a = 0; a < m->n_angles; a++)
        for (int b = a + 1; b < m->n_angles; b++) {
            const int *t = m->angles[a], *u = m->angles[b];
            if (t[1] != u[1])
                continue;
            const double v[3] = {sm_uniform(-60.0, 60.0), m->angle_ref[a] + sm_uniform(-10.0, 10.0) * SM_DEG,
                                 m->angle_ref[b] + sm_uniform(-10.0, 10.0) * SM_DEG};
            const int ks = sm_slot(s, v[0]), s1 = sm_slot(s, v[1]), s2 = sm_slot(s, v[2]);
            int x = -1; /* the shared outer atom */
            for (int i = 0; i < 3; i += 2)
                for (int j = 0; j < 3; j += 2)
                    if (t[i] == u[j])
                        x = t[i];
            if (x < 0) {
                const int p[5] = {t[0], t[1], t[2], u[0], u[2]};
                add_compound_bond(f5, 5, p, 3, v);
                HF_OK(hessfit_force_add_mm3_bend_bend(s->hf, t[0], t[1], t[2], u[0], u[2], ks, s1, s2, NULL));
                (*n_distinct)++;
                continue;
            }
            const int ta = t[0] == x ? t[2] : t[0], ub = u[0] == x ? u[2] : u[0], p[4] = {x, t[1], ta, ub};
            add_compound_bond(f4, 4, p, 3, v);
            if ((*n_shared)++ % 2 == 0)
                HF_OK(hessfit_force_add_mm3_bend_bend(s->hf, x, t[1], ta, x, ub, ks, s1, s2, NULL));
            else
                HF_OK(hessfit_force_add_mm3_bend_bend(s->hf, ta, t[1], x, ub, x, ks, s1, s2, NULL));
        }
    sm_add_stock(s, (OpenMM_Force *) f5);
    sm_add_stock(s, (OpenMM_Force *) f4);
}

/* every torsion (i, j, k, l) as a torsion-stretch of its central bond, with distance scales 0.95-1.1 */
static void add_mm3_torsion_stretches(sm_pair *s, const sm_mol *m) {
    static const char *names[] = {"k", "r0", "s", NULL};
    OpenMM_CustomCompoundBondForce *f =
        compound_force(4, "k*(s*distance(p2,p3) - r0)*(1 + cos(3*dihedral(p1,p2,p3,p4)))", names);
    for (int t = 0; t < m->n_torsions; t++) {
        const int *q = m->torsions[t];
        const double sc = sm_uniform(0.95, 1.1);
        const double v[3] = {sm_uniform(-40.0, 40.0), sc * sm_distance(m->pos, q[1], q[2]) * sm_uniform(0.9, 1.1), sc};
        add_compound_bond(f, 4, q, 3, v);
        HF_OK(hessfit_force_add_mm3_torsion_stretch(s->hf, q[0], q[1], q[2], q[3], sm_slot(s, v[0]), sm_slot(s, v[1]),
                                                    sc, NULL));
    }
    sm_add_stock(s, (OpenMM_Force *) f);
}

static void check_cross_against_stock(const char *platform) {
    sm_mol m;
    sm_butane_propanol(&m);
    sm_pair s;
    sm_pair_create(&s, &m);
    sm_add_hf_particles(&s, &m, 0, 1);
    int n_shared, n_distinct;
    add_mm3_stretch_bends(&s, &m);
    add_mm3_bend_bends(&s, &m, &n_shared, &n_distinct);
    add_mm3_torsion_stretches(&s, &m);
    sm_pair_open(&s, platform, m.pos, 0.001);
    printf("MM3* stretch-bends (%d, group 0), bend-bends (%d with 5 particles, group 1; %d sharing an outer atom, "
           "group 2), torsion-stretches (%d, group 3) against CustomCompoundBondForces:\n",
           m.n_angles, n_distinct, n_shared, m.n_torsions);
    CHECK(n_distinct >= 2 && n_shared >= 10, "too few bend-bends: %d distinct, %d shared", n_distinct, n_shared);
    sm_check_poses(&s, &m, 4, FD_STEP, FD_TOL, CROSS_EF_TOL);
    sm_pair_destroy(&s);
}

/* A System of n particles holding f and a Context on platform at pos (close_by_hand ends both). */
static OpenMM_Context *open_by_hand(hessfit_force *f, int n, const double *pos, const char *platform,
                                    OpenMM_System **system, OpenMM_Integrator **integrator) {
    *system = OpenMM_System_create();
    for (int i = 0; i < n; i++)
        OpenMM_System_addParticle(*system, 12.0);
    HF_OK(hessfit_force_add_to_system(f, *system, NULL));
    return test_create_context(*system, platform, pos, n, 0.001, integrator);
}

static void close_by_hand(hessfit_force *f, OpenMM_System *system, OpenMM_Context *context,
                          OpenMM_Integrator *integrator) {
    OpenMM_Context_destroy(context);
    OpenMM_Integrator_destroy(integrator);
    hessfit_force_destroy(f);
    OpenMM_System_destroy(system);
}

/* One slot's new value through the table alone (the table-only update path), then the energies of
 * the n_molecules molecules. */
static void set_slot_value(hessfit_force *f, OpenMM_Context *context, int slot, double value, double *energies,
                           int n_molecules) {
    double table[16];
    int n_slots;
    HF_OK(hessfit_force_get_num_parameters(f, &n_slots));
    CHECK(n_slots <= 16, "%d slots", n_slots);
    HF_OK(hessfit_force_get_parameters(f, table, n_slots));
    table[slot] = value;
    HF_OK(hessfit_force_set_parameters(f, table, n_slots));
    HF_OK(hessfit_force_update_parameters_in_context(f, context));
    HF_OK(hessfit_force_get_molecule_energies(f, context, energies, n_molecules));
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
    OpenMM_System *system;
    OpenMM_Integrator *integrator;
    OpenMM_Context *context = open_by_hand(f, 5, pos, platform, &system, &integrator);
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
    set_slot_value(f, context, 0, 2.0e5, energies, 2);
    CHECK_CLOSE(energies[0], 2 * 2.20495703125, 1e-12, 2.20495703125, "MM3* bond energy after a new k");
    printf("after set_mm3_bond / set_mm3_angle and a new k: bond %.12f, angle %.12f kJ/mol\n", energies[0], energies[1]);
    close_by_hand(f, system, context, integrator);
}

/* ---- the MM3* pair ------------------------------------------------------------------------- */

/* OpenMM's ONE_4PI_EPS0 (SimTKOpenMMRealType.h), kJ nm / (mol e^2) */
#define COULOMB (1.0 / (4.0 * SM_PI * (1e-6 * 8.8541878128e-12 / (1.602176634e-19 * 1.602176634e-19 * 6.02214076e23))))

/* MacroModel's MM3* pair in Angstrom (rA, RA) and kJ/mol, the switch by step/select; the Coulomb
 * constant (kJ A / (mol e^2)) is printed in by mm3_pair_expression. */
static const char *pair_expression_format =
    "eps*S*B + %.17g*qq/rA;"
    " B = select(step(2*rA - RA), 184000*exp(-12*rA/RA) - 2.25*(RA/rA)^6, (184000*exp(-6) - 144)/4096*(RA/rA)^12);"
    " S = select(step(rA - 8), 0, select(step(rA - 6), (64 - rA^2)/(64 - 36), 1)); rA = 10*r; RA = 10*R";

/*
 * Every same-molecule pair beyond 1-3 (1-4 unscaled, as MacroModel) as a CustomBondForce with the
 * Angstrom expression (the r^-12 wall below R/2 included, though no pair here comes that close) and as
 * an MM3* pair with the same R, eps and qq; counts the pairs inside
 * 0.6 nm, in the switch and beyond 0.8 nm at the built geometry into n_zone.
 */
static void add_mm3_pairs(sm_pair *s, const sm_mol *m, int n_zone[3]) {
    char expression[512];
    snprintf(expression, sizeof expression, pair_expression_format, 10.0 * COULOMB);
    OpenMM_CustomBondForce *f = OpenMM_CustomBondForce_create(expression);
    OpenMM_CustomBondForce_addPerBondParameter(f, "R");
    OpenMM_CustomBondForce_addPerBondParameter(f, "eps");
    OpenMM_CustomBondForce_addPerBondParameter(f, "qq");
    n_zone[0] = n_zone[1] = n_zone[2] = 0;
    for (int i = 0; i < m->n; i++)
        for (int j = i + 1; j < m->n; j++) {
            if (m->molecule[i] != m->molecule[j] || m->dist[i][j] < 3)
                continue;
            const double R = sm_uniform(0.32, 0.42), eps = sm_uniform(0.1, 0.5), qq = sm_uniform(-0.1, 0.1);
            OpenMM_DoubleArray *p = two_parameters(R, eps);
            OpenMM_DoubleArray_append(p, qq);
            OpenMM_CustomBondForce_addBond(f, i, j, p);
            OpenMM_DoubleArray_destroy(p);
            HF_OK(hessfit_force_add_mm3_pair(s->hf, i, j, sm_slot(s, R), sm_slot(s, eps), sm_slot(s, qq), NULL));
            const double r = sm_distance(m->pos, i, j);
            n_zone[r <= 0.6 ? 0 : r < 0.8 ? 1 : 2]++;
        }
    sm_add_stock(s, (OpenMM_Force *) f);
}

static void check_pairs_against_stock(const char *platform) {
    /* an anti octane (26 atoms, pairs out to ~1.1 nm) and an anti 1-propanol, 1.5 nm apart */
    sm_mol m;
    sm_init(&m);
    const double octane_dihedrals[5] = {180.0, 180.0, 180.0, 180.0, 180.0}, propanol_dihedral[1] = {178.0};
    sm_add_chain(&m, "CCCCCCCC", octane_dihedrals, 0.0);
    sm_add_chain(&m, "CCCO", propanol_dihedral, 1.5);
    CHECK(m.n == 38 && m.n_molecules == 2, "built %d atoms in %d molecules", m.n, m.n_molecules);
    sm_perturb(&m, 0.004);

    sm_pair s;
    sm_pair_create(&s, &m);
    sm_add_hf_particles(&s, &m, 0, 1);
    int n_zone[3];
    add_mm3_pairs(&s, &m, n_zone);
    sm_pair_open(&s, platform, m.pos, 0.001);
    printf("MM3* pairs against a CustomBondForce (step/select switch): %d inside 0.6 nm, %d in the switch, "
           "%d beyond 0.8 nm\n", n_zone[0], n_zone[1], n_zone[2]);
    CHECK(n_zone[0] >= 20 && n_zone[1] >= 10 && n_zone[2] >= 10, "too few pairs in a zone: %d %d %d", n_zone[0],
          n_zone[1], n_zone[2]);
    sm_check_poses(&s, &m, 4, FD_STEP, FD_TOL, EF_TOL);
    sm_pair_destroy(&s);
}

/* ---- the 10-12 hydrogen bond ---------------------------------------------------------------- */

/*
 * Every same-molecule pair beyond 1-3 with a hydrogen as a 10-12 hydrogen bond with random .fld
 * columns C', D' (C/100, D/100 of a code-7 line) as a CustomBondForce in MacroModel's units,
 * 418.4 (C'/rA^12 - D'/rA^10), and as HessianForce hydrogen bonds with C = 418.4 C' 1e-12,
 * D = 418.4 D' 1e-10 (kJ/mol nm^12, nm^10); the butanol's O-H...O-H-like pairs span 0.22-0.6 nm.
 */
static void check_hbonds_against_stock(const char *platform) {
    sm_mol m;
    sm_init(&m);
    const double octane_dihedrals[5] = {180.0, 60.0, 180.0, -60.0, 180.0}, butanol_dihedrals[2] = {60.0, 60.0};
    sm_add_chain(&m, "CCCCCCCC", octane_dihedrals, 0.0);
    sm_add_chain(&m, "CCCCO", butanol_dihedrals, 1.5);
    sm_perturb(&m, 0.004);
    sm_pair s;
    sm_pair_create(&s, &m);
    sm_add_hf_particles(&s, &m, 0, 1);
    OpenMM_CustomBondForce *f = OpenMM_CustomBondForce_create("418.4*(Cp/rA^12 - Dp/rA^10); rA = 10*r");
    OpenMM_CustomBondForce_addPerBondParameter(f, "Cp");
    OpenMM_CustomBondForce_addPerBondParameter(f, "Dp");
    int n = 0;
    double r_min = 1.0;
    for (int i = 0; i < m.n; i++)
        for (int j = i + 1; j < m.n; j++) {
            if (m.molecule[i] != m.molecule[j] || m.dist[i][j] < 3 || (m.element[i] != 'H' && m.element[j] != 'H'))
                continue;
            const double cp = sm_uniform(30.0, 90.0), dp = sm_uniform(10.0, 40.0);
            OpenMM_DoubleArray *p = two_parameters(cp, dp);
            OpenMM_CustomBondForce_addBond(f, i, j, p);
            OpenMM_DoubleArray_destroy(p);
            HF_OK(hessfit_force_add_hydrogen_bond(s.hf, i, j, sm_slot(&s, 418.4 * cp * 1e-12), sm_slot(&s, 418.4 * dp * 1e-10),
                                                  NULL));
            r_min = fmin(r_min, sm_distance(m.pos, i, j));
            n++;
        }
    sm_add_stock(&s, (OpenMM_Force *) f);
    sm_pair_open(&s, platform, m.pos, 0.001);
    printf("10-12 hydrogen bonds against a CustomBondForce: %d bonds, the closest at %.3f nm\n", n, r_min);
    CHECK(n >= 100 && r_min < 0.27, "%d hydrogen bonds, closest %.3f nm", n, r_min);
    sm_check_poses(&s, &m, 4, FD_STEP, FD_TOL, EF_TOL);
    sm_pair_destroy(&s);
}

/* The partner of hydrogen h (its one bond), -1 for another element. */
static int hydrogen_partner(const sm_mol *m, int h) {
    if (m->element[h] != 'H')
        return -1;
    for (int b = 0; b < m->n_bonds; b++)
        if (m->bonds[b][0] == h || m->bonds[b][1] == h)
            return m->bonds[b][0] == h ? m->bonds[b][1] : m->bonds[b][0];
    return -1;
}

/*
 * MacroModel's pair as it treats reduced hydrogens: every hydrogen reduced towards its partner
 * (f = 0.923) on our side (a reduced particle, then an MM3* switched pair with the partner as anchor
 * and scale 1/f, so the switch sees the true distance); on the stock side a CustomCompoundBondForce
 * of (i, j, u, v) computing the reduced positions x' = x_u + f (x_i - x_u) itself (f = 1 and any
 * other particle u for an atom that is not reduced) and the switch on distance(p1, p2).
 */
static void add_mm3_switched_pairs(sm_pair *s, const sm_mol *m, int n_zone[3], int *n_reduced_pairs) {
    char expression[1024];
    snprintf(expression, sizeof expression,
             "eps*S*(184000*exp(-12*rA/RA) - 2.25*(RA/rA)^6) + %.17g*qq/rA;"
             " S = select(step(rsA - 8), 0, select(step(rsA - 6), (64 - rsA^2)/(64 - 36), 1));"
             " rsA = 10*distance(p1, p2); rA = 10*sqrt(dx^2 + dy^2 + dz^2); RA = 10*R;"
             " dx = (x3 + fi*(x1 - x3)) - (x4 + fj*(x2 - x4)); dy = (y3 + fi*(y1 - y3)) - (y4 + fj*(y2 - y4));"
             " dz = (z3 + fi*(z1 - z3)) - (z4 + fj*(z2 - z4))",
             10.0 * COULOMB);
    static const char *names[] = {"R", "eps", "qq", "fi", "fj", NULL};
    OpenMM_CustomCompoundBondForce *f = compound_force(4, expression, names);
    const double fh = 0.923;
    for (int i = 0; i < m->n; i++)
        if (hydrogen_partner(m, i) >= 0)
            HF_OK(hessfit_force_add_reduced_particle(s->hf, i, hydrogen_partner(m, i), fh, NULL));
    n_zone[0] = n_zone[1] = n_zone[2] = 0;
    *n_reduced_pairs = 0;
    for (int i = 0; i < m->n; i++)
        for (int j = i + 1; j < m->n; j++) {
            if (m->molecule[i] != m->molecule[j] || m->dist[i][j] < 3)
                continue;
            const int pi = hydrogen_partner(m, i), pj = hydrogen_partner(m, j);
            const double fi = pi >= 0 ? fh : 1.0, fj = pj >= 0 ? fh : 1.0;
            const double v[5] = {sm_uniform(0.32, 0.42), sm_uniform(0.1, 0.5), sm_uniform(-0.1, 0.1), fi, fj};
            const int stock[4] = {i, j, pi >= 0 ? pi : j, pj >= 0 ? pj : i};
            add_compound_bond(f, 4, stock, 5, v);
            HF_OK(hessfit_force_add_mm3_switched_pair(s->hf, i, j, pi >= 0 ? pi : i, pj >= 0 ? pj : j, sm_slot(s, v[0]),
                                                      sm_slot(s, v[1]), sm_slot(s, v[2]), 1.0 / fi, 1.0 / fj, NULL));
            const double r = sm_distance(m->pos, i, j);
            n_zone[r <= 0.6 ? 0 : r < 0.8 ? 1 : 2]++;
            *n_reduced_pairs += pi >= 0 || pj >= 0;
        }
    sm_add_stock(s, (OpenMM_Force *) f);
}

static void check_switched_pairs_against_stock(const char *platform) {
    sm_mol m;
    sm_init(&m);
    const double octane_dihedrals[5] = {180.0, 180.0, 180.0, 180.0, 180.0}, propanol_dihedral[1] = {178.0};
    sm_add_chain(&m, "CCCCCCCC", octane_dihedrals, 0.0);
    sm_add_chain(&m, "CCCO", propanol_dihedral, 1.5);
    sm_perturb(&m, 0.004);
    sm_pair s;
    sm_pair_create(&s, &m);
    sm_add_hf_particles(&s, &m, 0, 1);
    int n_zone[3], n_reduced_pairs;
    add_mm3_switched_pairs(&s, &m, n_zone, &n_reduced_pairs);
    sm_pair_open(&s, platform, m.pos, 0.001);
    printf("MM3* switched pairs with reduced hydrogens (%d pairs with one) against a CustomCompoundBondForce: "
           "%d inside 0.6 nm, %d in the switch, %d beyond 0.8 nm (true distance)\n",
           n_reduced_pairs, n_zone[0], n_zone[1], n_zone[2]);
    CHECK(n_zone[0] >= 20 && n_zone[1] >= 10 && n_zone[2] >= 10 && n_reduced_pairs >= 100,
          "too few pairs: %d %d %d, %d reduced", n_zone[0], n_zone[1], n_zone[2], n_reduced_pairs);
    sm_check_poses(&s, &m, 4, FD_STEP, FD_TOL, EF_TOL);
    sm_pair_destroy(&s);
}

/* Energy, forces, Hessian and dE/dslot of one pair (particles 0, 1 at distance r along a skew
 * axis): an MM3* pair (switched = 0) or a switched pair on itself (anchors = the particles, s = 1). */
static void one_pair(const char *platform, int switched, double r, double *out) {
    hessfit_force *f;
    HF_OK(hessfit_force_create(&f));
    const int R = add_slot(f, 0.41), eps = add_slot(f, 0.3), qq = add_slot(f, -0.07);
    for (int i = 0; i < 2; i++)
        HF_OK(hessfit_force_add_particle(f, HESSFIT_NO_SLOT, HESSFIT_NO_SLOT, HESSFIT_NO_SLOT, NULL));
    if (switched)
        HF_OK(hessfit_force_add_mm3_switched_pair(f, 0, 1, 0, 1, R, eps, qq, 1.0, 1.0, NULL));
    else
        HF_OK(hessfit_force_add_mm3_pair(f, 0, 1, R, eps, qq, NULL));
    const double u[3] = {0.48, -0.6, 0.64}; /* unit */
    const double pos[6] = {0.1, 0.2, 0.3, 0.1 + r * u[0], 0.2 + r * u[1], 0.3 + r * u[2]};
    OpenMM_System *system;
    OpenMM_Integrator *integrator;
    OpenMM_Context *context = open_by_hand(f, 2, pos, platform, &system, &integrator);
    out[0] = test_energy_forces(context, -1, out + 1, 2);
    HF_OK(hessfit_force_get_hessian_blocks(f, context, out + 7, 36));
    HF_OK(hessfit_force_get_parameter_derivatives(f, context, out + 43, 3));
    close_by_hand(f, system, context, integrator);
}

/* A switched pair on itself is the MM3* pair: bit for bit (energy, forces, Hessian, dE/dslot) with
 * the distance inside 0.6 nm (on the r^-12 wall at 0.15 nm too) or beyond 0.8 nm (the same code path on Reference), to rounding in the
 * switch (the two-coordinate path; the GPU kernels take it at every distance). */
static void check_switched_equals_pair(const char *platform) {
    const double r[4] = {0.15, 0.45, 0.7, 0.9};
    const int exact = strcmp(platform, "Reference") == 0 || strcmp(platform, "CPU") == 0;
    for (int k = 0; k < 4; k++) {
        double a[46], b[46], worst = 0.0, scale = 0.0;
        one_pair(platform, 0, r[k], a);
        one_pair(platform, 1, r[k], b);
        for (int i = 0; i < 46; i++) {
            worst = fmax(worst, fabs(a[i] - b[i]));
            scale = fmax(scale, fabs(a[i]));
        }
        printf("switched pair on itself vs MM3* pair at %.2f nm: max |difference| %.3g (of max %.3g)\n", r[k], worst,
               scale);
        if (exact && k != 2)
            CHECK(worst == 0.0, "r = %.2f nm: switched pair differs from the MM3* pair by %.3g", r[k], worst);
        else
            CHECK(worst <= 1e-12 * scale, "r = %.2f nm: switched pair differs from the MM3* pair by %.3g", r[k], worst);
    }
}

/*
 * By hand, R = 0.4 nm (4 A), eps = 0.2 kJ/mol, C = ONE_4PI_EPS0 = 138.935457644382 kJ nm/(mol e^2):
 *  r = 0.35 nm, qq = -0.1 (S = 1): 184000 exp(-12 x 3.5 / 4) = 184000 exp(-10.5)
 *     = 184000 x 2.75364493497472e-5 = 5.06670668035348;  2.25 (4 / 3.5)^6 = 2.25 x 2.22818723491062
 *     = 5.01342127854890;  vdW = 0.2 x 0.0532854018045731 = 0.0106570803609146;
 *     Coulomb = -0.1 C / 0.35 = -39.6958450412520;  E = -39.6851879608911 kJ/mol.
 *  r = 0.7 nm, qq = 0: S = (0.64 - 0.49) / (0.64 - 0.36) = 15/28 = 0.535714285714286;
 *     184000 exp(-21) = 1.39519111873579e-4;  2.25 (4/7)^6 = 0.0783347074773266;
 *     E = 0.2 x 15/28 x (-0.0781951883654530) = -0.00837805589629854 kJ/mol.
 *  r = 0.85 nm, qq = -0.1: S = 0, E = -0.1 C / 0.85 = -16.3453479581626 kJ/mol, and dE/dR = dE/deps = 0.
 */
static void check_pairs_by_hand(const char *platform) {
    const double e_close = -39.6851879608911, vdw_close = 0.0106570803609146;
    const double switch_value = (0.64 - 0.49) / (0.64 - 0.36), bucking_far = 1.39519111873579e-4 - 0.0783347074773266;
    const double e_switch = 0.2 * switch_value * bucking_far, e_beyond = -0.1 * COULOMB / 0.85;
    /* three molecules of one pair each, along axes so that the distances are exact */
    const double pos[18] = {0, 0, 0, 0.35, 0, 0, 0, 1, 0, 0, 1, 0.7, 0, 2, 0, 0, 2, -0.85};
    hessfit_force *f;
    HF_OK(hessfit_force_create(&f));
    for (int i = 0; i < 6; i++)
        HF_OK(hessfit_force_add_particle(f, HESSFIT_NO_SLOT, HESSFIT_NO_SLOT, HESSFIT_NO_SLOT, NULL));
    for (int mol = 0; mol < 3; mol++) {
        const int atoms[2] = {2 * mol, 2 * mol + 1};
        HF_OK(hessfit_force_add_molecule(f, atoms, 2, NULL));
    }
    /* slots 0 R, 1 eps, 2 qq, 3 zero qq, 4 R and 5 eps of the pair beyond 0.8 nm */
    const double values[6] = {0.4, 0.2, -0.1, 0.0, 0.4, 0.2};
    for (int i = 0; i < 6; i++)
        add_slot(f, values[i]);
    HF_OK(hessfit_force_add_mm3_pair(f, 0, 1, 0, 1, 2, NULL));
    HF_OK(hessfit_force_add_mm3_pair(f, 2, 3, 0, 1, 3, NULL));
    HF_OK(hessfit_force_add_mm3_pair(f, 5, 4, 4, 5, 2, NULL));
    OpenMM_System *system;
    OpenMM_Integrator *integrator;
    OpenMM_Context *context = open_by_hand(f, 6, pos, platform, &system, &integrator);
    double energies[3], dedp[6];
    HF_OK(hessfit_force_get_molecule_energies(f, context, energies, 3));
    HF_OK(hessfit_force_get_parameter_derivatives(f, context, dedp, 6));
    printf("by hand: MM3* pair at 0.35 nm %.15g (hand %.15g), 0.7 nm %.15g (hand %.15g, S = %.15g), 0.85 nm %.15g "
           "(hand %.15g) kJ/mol\n", energies[0], e_close, energies[1], e_switch, switch_value, energies[2], e_beyond);
    CHECK(fabs(e_switch - -0.00837805589629854) < 1e-17, "the switched pair's hand value is %.17g", e_switch);
    CHECK(fabs(e_beyond - -16.3453479581626) < 1e-12, "the far pair's hand value is %.17g", e_beyond);
    /* the test's own Angstrom helper gives the same numbers */
    CHECK_CLOSE(mm3_pair_energy(0.35, 0.4, 0.2, -0.1), e_close, 1e-13, e_close, "mm3_pair_energy at 0.35 nm");
    CHECK_CLOSE(mm3_pair_energy(0.35, 0.4, 0.2, 0.0), vdw_close, 1e-13, vdw_close, "mm3_pair_energy's vdW at 0.35 nm");
    CHECK_CLOSE(mm3_pair_energy(0.7, 0.4, 0.2, 0.0), e_switch, 1e-12, e_switch, "mm3_pair_energy at 0.7 nm");
    CHECK_CLOSE(energies[0], e_close, 1e-13, e_close, "MM3* pair energy at 0.35 nm vs the hand value");
    CHECK_CLOSE(energies[0] + 0.1 * COULOMB / 0.35, vdw_close, 1e-10, vdw_close, "its vdW part");
    CHECK_CLOSE(energies[1], e_switch, 1e-12, e_switch, "MM3* pair energy at 0.7 nm vs the hand value");
    CHECK_CLOSE(energies[2], e_beyond, 1e-14, e_beyond, "MM3* pair energy at 0.85 nm (Coulomb only)");
    CHECK(dedp[4] == 0.0 && dedp[5] == 0.0, "beyond 0.8 nm dE/dR = %g and dE/deps = %g (expected exactly 0)", dedp[4],
          dedp[5]);

    /* the pair changed in place (the full update path): the switched pair onto the charge slot,
     * adding -0.1 C / 0.7 */
    HF_OK(hessfit_force_set_mm3_pair(f, 1, 3, 2, 0, 1, 2));
    int p1, p2, rs, es, qs, n_pairs;
    HF_OK(hessfit_force_get_mm3_pair(f, 1, &p1, &p2, &rs, &es, &qs));
    CHECK(p1 == 3 && p2 == 2 && rs == 0 && es == 1 && qs == 2, "MM3* pair 1 reads back as %d %d %d %d %d", p1, p2, rs,
          es, qs);
    HF_OK(hessfit_force_get_num_mm3_pairs(f, &n_pairs));
    CHECK(n_pairs == 3, "%d MM3* pairs", n_pairs);
    HF_FAILS(hessfit_force_get_mm3_pair(f, 3, NULL, NULL, NULL, NULL, NULL), HESSFIT_ERROR_INDEX);
    HF_FAILS(hessfit_force_set_mm3_pair(f, 0, 0, 1, 0, 1, 99), HESSFIT_ERROR_INDEX);
    HF_FAILS(hessfit_force_get_num_mm3_pairs(f, NULL), HESSFIT_ERROR_NULL_ARGUMENT);
    HF_OK(hessfit_force_update_parameters_in_context(f, context));
    HF_OK(hessfit_force_get_molecule_energies(f, context, energies, 3));
    const double e_switch_charged = e_switch - 0.1 * COULOMB / 0.7;
    CHECK_CLOSE(energies[1], e_switch_charged, 1e-13, e_switch_charged, "MM3* pair energy after set_mm3_pair");
    /* and the table alone (the table-only path): eps doubled doubles the vdW part */
    set_slot_value(f, context, 1, 0.4, energies, 3);
    CHECK_CLOSE(energies[0], e_close + vdw_close, 1e-13, e_close, "MM3* pair energy after a new eps");
    CHECK_CLOSE(energies[2], e_beyond, 1e-14, e_beyond, "MM3* pair beyond 0.8 nm after a new eps");
    printf("after set_mm3_pair and a new eps: %.15g, %.15g, %.15g kJ/mol\n", energies[0], energies[1], energies[2]);
    close_by_hand(f, system, context, integrator);
}

/*
 * The r^-12 wall below R/2 (hf_core.h; Tinker's MM3 rule), by hand: R = 0.41 nm, eps = 0.3 kJ/mol,
 * qq = -0.07 at r = 0.15 nm: M = (184000 exp(-6) - 2.25 2^6) / 2^12 = 0.0761939454361840698,
 * (R / r)^12 = 173904.640910844098, vdW = 0.3 M (R / r)^12 = 3975.14421619801174,
 * Coulomb = -0.07 C / 0.15 = -64.8365469007116166, E = 3910.30766929730012 kJ/mol (30-digit arithmetic).
 * At r = R/2 the wall and the exp-6 form meet (eps (184000 exp(-6) - 144) = 0.3 x 312.090400506610);
 * the force jumps there (a kink, as in Tinker: -12 B / r against the exp-6 slope).
 */
static void check_wall_by_hand(const char *platform) {
    double out[46], below[46], above[46];
    one_pair(platform, 0, 0.15, out);
    CHECK_CLOSE(out[0], 3910.30766929730012, 1e-12, 3910.30766929730012, "MM3* pair on the wall at 0.15 nm");
    CHECK_CLOSE(mm3_pair_energy(0.15, 0.41, 0.3, -0.07), 3910.30766929730012, 1e-12, 3910.30766929730012,
                "mm3_pair_energy on the wall at 0.15 nm");
    one_pair(platform, 0, 0.205 - 1e-10, below);
    one_pair(platform, 0, 0.205 + 1e-10, above);
    const double coulomb = -0.07 * COULOMB / 0.205, meet = 0.3 * 312.090400506610 + coulomb;
    printf("the wall: %.15g kJ/mol at 0.15 nm (hand 3910.30766929730); at R/2 -+ 1e-10 nm %.12g, %.12g (hand %.12g)\n",
           out[0], below[0], above[0], meet);
    CHECK_CLOSE(below[0], meet, 1e-7, meet, "the wall just below R/2");
    CHECK_CLOSE(above[0], meet, 1e-7, meet, "the exp-6 form just above R/2");
    /* the wall repels: the force on particle 1 points away from particle 0 (along +u) */
    CHECK(out[4] > 0.0 && below[4] > 0.0, "the wall's force on particle 1 is %g, %g along x (expected > 0)", out[4],
          below[4]);
}

int main(int argc, char **argv) {
    const char *platform = test_platform_name(argc, argv);
    printf("test_mm3_stock on %s (stock on Reference)\n", platform);
    test_seed(0x33AA33ULL);
    check_against_stock(platform);
    check_by_hand(platform);
    check_cross_against_stock(platform);
    check_pairs_against_stock(platform);
    check_pairs_by_hand(platform);
    check_switched_pairs_against_stock(platform);
    check_switched_equals_pair(platform);
    check_wall_by_hand(platform);
    check_hbonds_against_stock(platform);
    printf("test_mm3_stock: OK\n");
    return 0;
}
