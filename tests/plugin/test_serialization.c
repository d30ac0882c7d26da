/*
 * XML round trip of a System holding a HessianForce that uses every term kind, two explicitly
 * declared molecules (one in a permuted Hessian order), a non-default combining rule, non-default
 * 1-4 scales, a force group and a name.
 *
 * Asserts:
 *  - the XML names the "HessianForce" proxy type and the force's name;
 *  - the deserialized force has the same group, name, parameter table (bitwise), particle count,
 *    molecules (same particles in the same order) and Hessian size;
 *  - serializing the deserialized System gives exactly the same XML (nothing is lost or changed);
 *  - on Reference, energy, forces, Hessian blocks and parameter derivatives of both Systems agree
 *    to 1e-14 relative (they are in fact expected to be bitwise identical; the test prints whether
 *    they are);
 *  - the C API refuses to wrap a non-HessianForce (VALUE) and to add a System-owned force to a
 *    System again (OWNERSHIP);
 *  - every stored XML of a known serialization version (tests/data/serialization/
 *    hessianforce-v<N>.xml, written by the hessfit of that version from this test's force as that
 *    version knew it: version 1 without the MM3* bonds and angles that version 2 added, version 2
 *    without the MM3* pair that version 3 added, version 3 without the reduced particles that
 *    version 4 added, version 4 without the MM3* cross terms and bond distance scale that version 5
 *    added, version 5 with an MM3* pair where version 6 has an MM3* switched pair, version 6 without
 *    the hydrogen bonds that version 7 added, each appended
 *    last with its own slots) reads
 *    back, through hessfit_system_deserialize, as the same force with the same numbers as above;
 *  - a newer version (the current number + 1) and version 0 are refused with
 *    HESSFIT_ERROR_UNSUPPORTED naming the version, and malformed XML with HESSFIT_ERROR_OPENMM,
 *    never a crash.
 */
#include "test_util.h"
#include <string.h>

#define N_ATOMS 10
#define FORCE_GROUP 3
#define FORCE_NAME "hessfit round trip"
/* The HessianForce serialization versions this build reads: 1 .. CURRENT_XML_VERSION. */
#define CURRENT_XML_VERSION 7

static int slot(hessfit_force *f, double value) {
    int s;
    HF_OK(hessfit_force_add_parameter(f, value, &s));
    return s;
}

/* Molecule A: atoms 0-6, bonds 0-1 1-2 2-3 1-4 2-5 3-6. Molecule B: atoms 7-9 (water-like). */
static const int bonds_a[6][2] = {{0, 1}, {1, 2}, {2, 3}, {1, 4}, {2, 5}, {3, 6}};

/* The test's force as serialization version `version` knows it (2: with the MM3* bonds and
 * angles; 3: with the MM3* pair; 4: with reduced particles; 5: with an MM3* bond distance scale and
 * the MM3* cross terms; 6: the MM3* pair 4-6 as an MM3* switched pair on the true distance). */
static hessfit_force *build_force(int version) {
    hessfit_force *f;
    HF_OK(hessfit_force_create(&f));
    /* particles: charge, sigma, epsilon (epsilon never zero so that dE/deps is finite) */
    static const double q[N_ATOMS] = {-0.18, 0.06, -0.12, 0.31, 0.06, 0.0, -0.13, -0.834, 0.417, 0.417};
    static const double sig[N_ATOMS] = {0.35, 0.25, 0.35, 0.33, 0.25, 0.25, 0.31, 0.315, 0.04, 0.04};
    static const double eps[N_ATOMS] = {0.276, 0.126, 0.276, 0.29, 0.126, 0.126, 0.25, 0.636, 0.19, 0.19};
    for (int i = 0; i < N_ATOMS; i++) {
        int qs = (i == 5) ? HESSFIT_NO_SLOT : slot(f, q[i]); /* one NoSlot charge */
        int index;
        HF_OK(hessfit_force_add_particle(f, qs, slot(f, sig[i]), slot(f, eps[i]), &index));
        CHECK(index == i, "particle index %d, expected %d", index, i);
    }
    /* two explicit molecules; B in a permuted Hessian order */
    const int mol_a[7] = {0, 1, 2, 3, 4, 5, 6}, mol_b[3] = {9, 7, 8};
    HF_OK(hessfit_force_add_molecule(f, mol_a, 7, NULL));
    HF_OK(hessfit_force_add_molecule(f, mol_b, 3, NULL));

    static const double r0[6] = {0.1526, 0.1529, 0.1510, 0.1090, 0.1095, 0.1410};
    for (int b = 0; b < 6; b++)
        HF_OK(hessfit_force_add_bond(f, bonds_a[b][0], bonds_a[b][1], slot(f, 1.2e5 + 1e4 * b), slot(f, r0[b]), NULL));
    HF_OK(hessfit_force_add_urey_bradley(f, 0, 2, slot(f, 8.0e3), slot(f, 0.252), NULL));
    HF_OK(hessfit_force_add_angle(f, 0, 1, 2, slot(f, 260.0), slot(f, 1.911), NULL));
    HF_OK(hessfit_force_add_angle(f, 1, 2, 3, slot(f, 250.0), slot(f, 1.940), NULL));
    HF_OK(hessfit_force_add_angle(f, 4, 1, 2, slot(f, 160.0), slot(f, 1.880), NULL));
    HF_OK(hessfit_force_add_periodic_torsion(f, 0, 1, 2, 3, 3, slot(f, 1.3), slot(f, 0.1), NULL));
    const int v[4] = {slot(f, 2.9), slot(f, -1.2), HESSFIT_NO_SLOT, slot(f, 0.4)};
    HF_OK(hessfit_force_add_opls_torsion(f, 4, 1, 2, 5, v, NULL));
    const int c[6] = {slot(f, 9.28), slot(f, 12.16), slot(f, -13.12), HESSFIT_NO_SLOT, slot(f, 26.24), slot(f, -31.5)};
    HF_OK(hessfit_force_add_rb_torsion(f, 0, 1, 2, 5, c, NULL));
    HF_OK(hessfit_force_add_periodic_improper(f, 1, 0, 2, 4, 2, slot(f, 4.6), slot(f, 3.14159265358979323846), NULL));
    HF_OK(hessfit_force_add_harmonic_improper(f, 2, 1, 3, 5, slot(f, 40.0), slot(f, 0.55), NULL));
    /* molecule A: exclusions and 1-4 pairs from its bonds, plus one explicit pair (0-6, a 1-5
     * pair that would otherwise be plain); 4-6 stays a plain pair (an MM3* pair from version 3) */
    int flat[12];
    for (int b = 0; b < 6; b++) {
        flat[2 * b] = bonds_a[b][0];
        flat[2 * b + 1] = bonds_a[b][1];
    }
    HF_OK(hessfit_force_create_exclusions_from_bonds(f, flat, 6));
    HF_OK(hessfit_force_add_explicit_pair(f, 0, 6, slot(f, -0.02), slot(f, 0.31), slot(f, 0.2), NULL));
    /* molecule B: its terms and pairs added one by one */
    HF_OK(hessfit_force_add_bond(f, 7, 8, slot(f, 2.3e5), slot(f, 0.09572), NULL));
    HF_OK(hessfit_force_add_bond(f, 7, 9, slot(f, 2.3e5), slot(f, 0.09572), NULL));
    HF_OK(hessfit_force_add_angle(f, 8, 7, 9, slot(f, 320.0), slot(f, 1.824), NULL));
    HF_OK(hessfit_force_add_exclusion(f, 7, 8, NULL));
    HF_OK(hessfit_force_add_exclusion(f, 7, 9, NULL));
    HF_OK(hessfit_force_add_pair14(f, 8, 9, NULL));
    if (version >= 2) { /* the MM3* stretch and bend, after everything of version 1; slots k, then r0 / theta0 */
        static const double mm3[4][2] = {{2.1e5, 0.1100}, {2.0e5, 0.0960}, {280.0, 1.900}, {300.0, 1.830}};
        int s[4][2];
        for (int t = 0; t < 4; t++)
            for (int j = 0; j < 2; j++)
                s[t][j] = slot(f, mm3[t][j]);
        HF_OK(hessfit_force_add_mm3_bond(f, 1, 4, s[0][0], s[0][1], NULL));
        HF_OK(hessfit_force_add_mm3_bond(f, 7, 8, s[1][0], s[1][1], NULL));
        HF_OK(hessfit_force_add_mm3_angle(f, 1, 2, 5, s[2][0], s[2][1], NULL));
        HF_OK(hessfit_force_add_mm3_angle(f, 8, 7, 9, s[3][0], s[3][1], NULL));
    }
    if (version >= 3) { /* the MM3* pair, after everything of version 2; slots R, eps, qq in that order; from
                           * version 6 a switched pair on 4's true position (4 is reduced towards 1) */
        const int radius = slot(f, 0.362), epsilon = slot(f, 0.24), charge_prod = slot(f, -0.0078);
        if (version >= 6)
            HF_OK(hessfit_force_add_mm3_switched_pair(f, 4, 6, 1, 6, radius, epsilon, charge_prod, 1.0 / 0.923, 1.0,
                                                      NULL));
        else
            HF_OK(hessfit_force_add_mm3_pair(f, 4, 6, radius, epsilon, charge_prod, NULL));
    }
    if (version >= 4) { /* reduced particles: two hydrogens of A towards their carbons, one of B */
        HF_OK(hessfit_force_add_reduced_particle(f, 4, 1, 0.923, NULL));
        HF_OK(hessfit_force_add_reduced_particle(f, 5, 2, 0.923, NULL));
        HF_OK(hessfit_force_add_reduced_particle(f, 9, 7, 0.915, NULL));
    }
    if (version >= 5) { /* the MM3* bond's distance scale and the cross terms, after everything of version 4 */
        HF_OK(hessfit_force_set_mm3_bond_distance_scale(f, 0, 1.0 / 0.923));
        const int k_sb = slot(f, 520.0), r0a = slot(f, 0.1530), r0b = slot(f, 0.1528), th0 = slot(f, 1.92);
        HF_OK(hessfit_force_add_mm3_stretch_bend(f, 0, 1, 2, k_sb, r0a, r0b, th0, 1.0, 1.02, NULL));
        HF_OK(hessfit_force_add_mm3_stretch_bend(f, 8, 7, 9, k_sb, r0a, r0b, th0, 1.0 / 0.923, 1.0 / 0.923, NULL));
        const int k_bb = slot(f, -25.0), t01 = slot(f, 1.90), t02 = slot(f, 1.93);
        HF_OK(hessfit_force_add_mm3_bend_bend(f, 0, 1, 2, 4, 2, k_bb, t01, t02, NULL));
        HF_OK(hessfit_force_add_mm3_bend_bend(f, 1, 2, 3, 5, 1, k_bb, t02, t01, NULL));
        const int k_ts = slot(f, 21.0), r0_ts = slot(f, 0.1529);
        HF_OK(hessfit_force_add_mm3_torsion_stretch(f, 0, 1, 2, 3, k_ts, r0_ts, 0.99, NULL));
        HF_OK(hessfit_force_add_mm3_torsion_stretch(f, 4, 1, 2, 5, k_ts, r0_ts, 1.0, NULL));
    }
    if (version >= 7) { /* two 10-12 hydrogen bonds, after everything of version 6 */
        const int c = slot(f, 418.4 * 42.5e-12), d = slot(f, 418.4 * 10.0e-10);
        HF_OK(hessfit_force_add_hydrogen_bond(f, 0, 3, c, d, NULL));
        HF_OK(hessfit_force_add_hydrogen_bond(f, 9, 8, c, d, NULL));
    }

    HF_OK(hessfit_force_set_combining_rule(f, HESSFIT_COMBINE_LORENTZ_BERTHELOT));
    HF_OK(hessfit_force_set_14_scales(f, 0.8333, 0.6));
    OpenMM_Force_setForceGroup(hessfit_force_as_openmm(f), FORCE_GROUP);
    OpenMM_Force_setName(hessfit_force_as_openmm(f), FORCE_NAME);
    return f;
}

typedef struct {
    double energy;
    double forces[3 * N_ATOMS];
    double *hessian;
    double *dedp;
} Results;

static void evaluate(hessfit_force *f, OpenMM_System *system, const double *pos, long long hsize, int nparams,
                     Results *out) {
    OpenMM_Integrator *integrator;
    OpenMM_Context *context = test_create_context(system, "Reference", pos, N_ATOMS, 0.001, &integrator);
    HF_OK(hessfit_force_get_energy_forces(f, context, &out->energy, out->forces));
    out->hessian = malloc((size_t) hsize * sizeof(double));
    out->dedp = malloc((size_t) nparams * sizeof(double));
    CHECK(out->hessian && out->dedp, "out of memory");
    HF_OK(hessfit_force_get_hessian_blocks(f, context, out->hessian, hsize));
    HF_OK(hessfit_force_get_parameter_derivatives(f, context, out->dedp, nparams));
    OpenMM_Context_destroy(context);
    OpenMM_Integrator_destroy(integrator);
}

/* max |a - b| <= 1e-14 max |a| (and report whether bitwise identical). */
static void compare(const char *what, const double *a, const double *b, size_t n) {
    double diff = test_max_abs_diff(a, b, n), scale = test_max_abs(a, n);
    int bitwise = memcmp(a, b, n * sizeof(double)) == 0;
    printf("  %-22s max |diff| %.3g (scale %.3g)%s\n", what, diff, scale, bitwise ? ", bitwise identical" : "");
    CHECK(diff <= 1e-14 * (scale > 0 ? scale : 1.0), "%s differs after the round trip: %.3g (scale %.3g)", what, diff,
          scale);
}

/* g (in System copy) is the same force as f (in system): group, name, structure, parameter
 * table (bitwise), and energy, forces, Hessian blocks and parameter derivatives at pos. */
static void check_same_force(hessfit_force *f, OpenMM_System *system, hessfit_force *g, OpenMM_System *copy,
                             const double *pos) {
    OpenMM_Force *copied = hessfit_force_as_openmm(g);
    CHECK(OpenMM_Force_getForceGroup(copied) == FORCE_GROUP, "force group %d", OpenMM_Force_getForceGroup(copied));
    CHECK(strcmp(OpenMM_Force_getName(copied), FORCE_NAME) == 0, "force name '%s'", OpenMM_Force_getName(copied));
    int np_f, np_g, nm_f, nm_g, n_f, n_g;
    HF_OK(hessfit_force_get_num_parameters(f, &np_f));
    HF_OK(hessfit_force_get_num_parameters(g, &np_g));
    CHECK(np_f == np_g, "parameter count %d vs %d", np_f, np_g);
    HF_OK(hessfit_force_get_num_particles(f, &n_f));
    HF_OK(hessfit_force_get_num_particles(g, &n_g));
    CHECK(n_f == N_ATOMS && n_g == N_ATOMS, "particle count %d vs %d", n_f, n_g);
    HF_OK(hessfit_force_get_num_molecules(f, &nm_f));
    HF_OK(hessfit_force_get_num_molecules(g, &nm_g));
    CHECK(nm_f == 2 && nm_g == 2, "molecule count %d vs %d", nm_f, nm_g);
    for (int m = 0; m < 2; m++) {
        int pf[N_ATOMS], pg[N_ATOMS], cf, cg;
        HF_OK(hessfit_force_get_molecule_particles(f, m, pf, N_ATOMS, &cf));
        HF_OK(hessfit_force_get_molecule_particles(g, m, pg, N_ATOMS, &cg));
        CHECK(cf == cg && memcmp(pf, pg, (size_t) cf * sizeof(int)) == 0, "molecule %d changed", m);
    }
    double *table_f = malloc((size_t) np_f * sizeof(double)), *table_g = malloc((size_t) np_f * sizeof(double));
    CHECK(table_f && table_g, "out of memory");
    HF_OK(hessfit_force_get_parameters(f, table_f, np_f));
    HF_OK(hessfit_force_get_parameters(g, table_g, np_g));
    CHECK(memcmp(table_f, table_g, (size_t) np_f * sizeof(double)) == 0, "the parameter table is not bitwise identical");
    long long hs_f, hs_g;
    HF_OK(hessfit_force_get_hessian_size(f, &hs_f));
    HF_OK(hessfit_force_get_hessian_size(g, &hs_g));
    CHECK(hs_f == hs_g && hs_f == 21 * 21 + 9 * 9, "Hessian size %lld vs %lld", hs_f, hs_g);

    Results a, b;
    evaluate(f, system, pos, hs_f, np_f, &a);
    evaluate(g, copy, pos, hs_g, np_g, &b);
    printf("energy %.17g vs %.17g\n", a.energy, b.energy);
    CHECK(a.energy != 0.0 && test_max_abs(a.hessian, (size_t) hs_f) > 0.0, "the test force does nothing");
    compare("energy", &a.energy, &b.energy, 1);
    compare("forces", a.forces, b.forces, 3 * N_ATOMS);
    compare("Hessian blocks", a.hessian, b.hessian, (size_t) hs_f);
    compare("parameter derivatives", a.dedp, b.dedp, (size_t) np_f);
    for (int i = 0; i < np_f; i++)
        CHECK(isfinite(a.dedp[i]), "dE/dslot %d is %g", i, a.dedp[i]);
    free(a.hessian); free(a.dedp); free(b.hessian); free(b.dedp);
    free(table_f); free(table_g);
}

/* Where the HessianForce node's tag starts in xml, and its version attribute (-1 if none). */
static size_t force_node(const char *xml, int *version) {
    const char *type = strstr(xml, "type=\"HessianForce\"");
    CHECK(type != NULL, "the XML has no HessianForce node");
    size_t node = (size_t) (type - xml);
    while (node > 0 && xml[node] != '<')
        node--;
    const char *attribute = strstr(xml + node, " version=\"");
    *version = -1;
    if (attribute != NULL && attribute < strchr(xml + node, '>'))
        *version = atoi(attribute + strlen(" version=\""));
    return node;
}

/* The XML with the HessianForce's version attribute replaced by `version`. */
static char *with_version(const char *xml, int version) {
    int current;
    size_t node = force_node(xml, &current);
    CHECK(current == CURRENT_XML_VERSION, "the HessianForce node is version %d", current);
    char old[32], replacement[32];
    snprintf(old, sizeof old, " version=\"%d\"", current);
    snprintf(replacement, sizeof replacement, " version=\"%d\"", version);
    return test_replace_first(xml, node, old, replacement, NULL);
}

/* hessfit_system_deserialize refuses xml with `want`, the message containing `part` (if not NULL),
 * and leaves no System. */
static void expect_refused(const char *xml, hessfit_status want, const char *part, const char *what) {
    OpenMM_System *read = (OpenMM_System *) 1;
    HF_FAILS(hessfit_system_deserialize(xml, &read), want);
    CHECK(read == NULL, "%s: a failed deserialization left its output set", what);
    CHECK(part == NULL || strstr(hessfit_last_error(), part) != NULL, "%s: the message '%s' does not say '%s'", what,
          hessfit_last_error(), part);
}

/* A System holding the test's force of that version (owned by the System, *f its handle). */
static OpenMM_System *build_system(int version, hessfit_force **f, int *force_index) {
    OpenMM_System *system = OpenMM_System_create();
    for (int i = 0; i < N_ATOMS; i++)
        OpenMM_System_addParticle(system, i < 7 ? 12.0 : 16.0);
    *f = build_force(version);
    HF_OK(hessfit_force_add_to_system(*f, system, force_index));
    return system;
}

int main(void) {
    test_load_plugins();
    /* positions (nm): molecule A near a staggered geometry, B a water 1 nm away */
    double pos[3 * N_ATOMS] = {0.000, 0.000, 0.000,  0.152, 0.000, 0.000,  0.203, 0.144, 0.000,
                               0.355, 0.150, 0.041,  0.188, -0.058, 0.091, 0.161, 0.200, -0.088,
                               0.398, 0.283, 0.065,  1.000, 1.000, 1.000,  1.0957, 1.000, 1.000,
                               0.976, 1.0927, 1.000};
    test_seed(7);
    for (int i = 0; i < 3 * N_ATOMS; i++)
        pos[i] += 0.004 * (test_random() - 0.5);

    hessfit_force *f;
    int force_index;
    OpenMM_System *system = build_system(CURRENT_XML_VERSION, &f, &force_index);
    /* the System owns the force now: adding it again is an ownership error */
    HF_FAILS(hessfit_force_add_to_system(f, system, NULL), HESSFIT_ERROR_OWNERSHIP);

    char *xml = OpenMM_XmlSerializer_serializeSystem(system);
    CHECK(xml != NULL, "serialization returned NULL");
    CHECK(strstr(xml, "\"HessianForce\"") != NULL, "the XML does not name the HessianForce type");
    CHECK(strstr(xml, FORCE_NAME) != NULL, "the XML does not hold the force name");
    printf("XML: %zu characters\n", strlen(xml));

    OpenMM_System *copy;
    HF_OK(hessfit_system_deserialize(xml, &copy));
    CHECK(OpenMM_System_getNumForces(copy) == OpenMM_System_getNumForces(system), "force count changed");
    OpenMM_Force *copied = OpenMM_System_getForce(copy, force_index);
    hessfit_force *g;
    HF_OK(hessfit_force_create_from_openmm(copied, &g));
    HF_FAILS(hessfit_force_add_to_system(g, copy, NULL), HESSFIT_ERROR_OWNERSHIP);

    /* a second round trip writes exactly the same XML */
    char *xml2 = OpenMM_XmlSerializer_serializeSystem(copy);
    CHECK(strcmp(xml, xml2) == 0, "the XML of the deserialized System differs from the original XML");
    check_same_force(f, system, g, copy, pos);

    /* a non-HessianForce cannot be wrapped */
    OpenMM_CMMotionRemover *cmm = OpenMM_CMMotionRemover_create(1);
    hessfit_force *bad = (hessfit_force *) 1;
    HF_FAILS(hessfit_force_create_from_openmm((OpenMM_Force *) cmm, &bad), HESSFIT_ERROR_VALUE);
    CHECK(bad == NULL, "a failed hessfit_force_create_from_openmm left its output set");
    OpenMM_CMMotionRemover_destroy(cmm);

    /* every stored version reads back as this force */
    for (int version = 1; version <= CURRENT_XML_VERSION; version++) {
        char relative[64];
        snprintf(relative, sizeof relative, "tests/data/serialization/hessianforce-v%d.xml", version);
        char *stored = test_load_file(test_source_path(relative), NULL);
        int stored_version;
        force_node(stored, &stored_version);
        CHECK(stored_version == version, "%s holds version %d", relative, stored_version);
        OpenMM_System *old;
        HF_OK(hessfit_system_deserialize(stored, &old));
        hessfit_force *h, *written;
        HF_OK(hessfit_force_create_from_openmm(OpenMM_System_getForce(old, force_index), &h));
        int mm3_bonds = -1, mm3_angles = -1, mm3_pairs = -1, switched = -1, reduced = -1, cross[3] = {-1, -1, -1};
        double bond_scale = 0.0;
        HF_OK(hessfit_force_get_num_reduced_particles(h, &reduced));
        CHECK(reduced == (version >= 4 ? 3 : 0), "%s: %d reduced particles", relative, reduced);
        HF_OK(hessfit_force_get_num_mm3_bonds(h, &mm3_bonds));
        HF_OK(hessfit_force_get_num_mm3_angles(h, &mm3_angles));
        HF_OK(hessfit_force_get_num_mm3_pairs(h, &mm3_pairs));
        HF_OK(hessfit_force_get_num_mm3_switched_pairs(h, &switched));
        HF_OK(hessfit_force_get_num_mm3_stretch_bends(h, &cross[0]));
        HF_OK(hessfit_force_get_num_mm3_bend_bends(h, &cross[1]));
        HF_OK(hessfit_force_get_num_mm3_torsion_stretches(h, &cross[2]));
        CHECK(mm3_bonds == (version >= 2 ? 2 : 0) && mm3_angles == (version >= 2 ? 2 : 0) &&
                  mm3_pairs == (version >= 3 && version < 6 ? 1 : 0) && switched == (version >= 6 ? 1 : 0),
              "%s: %d MM3* bonds, %d MM3* angles, %d MM3* pairs and %d switched pairs", relative, mm3_bonds,
              mm3_angles, mm3_pairs, switched);
        if (version >= 6) {
            int p[4], sl[3];
            double sc[2];
            HF_OK(hessfit_force_get_mm3_switched_pair(h, 0, &p[0], &p[1], &p[2], &p[3], &sl[0], &sl[1], &sl[2], &sc[0],
                                                      &sc[1]));
            CHECK(p[0] == 4 && p[1] == 6 && p[2] == 1 && p[3] == 6 && sc[0] == 1.0 / 0.923 && sc[1] == 1.0,
                  "%s: switched pair (%d %d | %d %d) scales %.17g %.17g", relative, p[0], p[1], p[2], p[3], sc[0], sc[1]);
        }
        int hbonds = -1;
        HF_OK(hessfit_force_get_num_hydrogen_bonds(h, &hbonds));
        CHECK(hbonds == (version >= 7 ? 2 : 0), "%s: %d hydrogen bonds", relative, hbonds);
        for (int kind = 0; kind < 3; kind++)
            CHECK(cross[kind] == (version >= 5 ? 2 : 0), "%s: %d MM3* cross terms of kind %d", relative, cross[kind], kind);
        if (version >= 2) { /* a file older than version 5 gives its MM3* bonds the distance scale 1 */
            HF_OK(hessfit_force_get_mm3_bond_distance_scale(h, 0, &bond_scale));
            CHECK(bond_scale == (version >= 5 ? 1.0 / 0.923 : 1.0), "%s: MM3* bond 0 has distance scale %.17g",
                  relative, bond_scale);
        }
        OpenMM_System *original = build_system(version, &written, &force_index);
        printf("stored version %d (%s):\n", version, relative);
        check_same_force(written, original, h, old, pos);
        hessfit_force_destroy(h);
        hessfit_force_destroy(written);
        OpenMM_System_destroy(original);
        OpenMM_System_destroy(old);
        free(stored);
    }

    /* versions this build does not know, and XML that is not a System */
    char *newer = with_version(xml, CURRENT_XML_VERSION + 1), *zero = with_version(xml, 0);
    char newer_text[64];
    snprintf(newer_text, sizeof newer_text, "version %d (written by a newer hessfit", CURRENT_XML_VERSION + 1);
    expect_refused(newer, HESSFIT_ERROR_UNSUPPORTED, newer_text, "a newer version");
    expect_refused(zero, HESSFIT_ERROR_UNSUPPORTED, "version 0 (", "version 0");
    expect_refused("<System", HESSFIT_ERROR_OPENMM, NULL, "truncated XML");
    expect_refused("", HESSFIT_ERROR_OPENMM, NULL, "empty XML");
    OpenMM_System *unused;
    HF_FAILS(hessfit_system_deserialize(NULL, &unused), HESSFIT_ERROR_NULL_ARGUMENT);
    HF_FAILS(hessfit_system_deserialize(xml, NULL), HESSFIT_ERROR_NULL_ARGUMENT);
    free(newer);
    free(zero);

    free(xml); free(xml2);
    hessfit_force_destroy(f);
    hessfit_force_destroy(g);
    OpenMM_System_destroy(system);
    OpenMM_System_destroy(copy);
    printf("test_serialization passed\n");
    return 0;
}
