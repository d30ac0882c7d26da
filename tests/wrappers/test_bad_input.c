/*
 * test_bad_input: every error path of the C API returns the right status with a message naming
 * the offending item, never crashes, and leaves the force usable.
 *
 * Context creation cannot report errors to C: OpenMM's C API (OpenMM_Context_create*) lets the
 * C++ exception of a failed ForceImpl::initialize escape into C, which calls std::terminate (the
 * process aborts). So everything the force can check on its own is checked by the add / set
 * calls, and what needs the System (the particle count, terms spanning molecules, molecule
 * membership) is checked by hessfit_force_validate(force, system) before a Context is created,
 * or reported as a status by hessfit_context_create.
 */
#include "test_util.h"
#include <string.h>

/* the last error message must mention this text (chosen so that it cannot come from the
 * "hessfit_function_name: " prefix of the message) */
#define EXPECT_MSG(text)                                                                                 \
    CHECK(strstr(hessfit_last_error(), (text)) != NULL, "message \"%s\" does not mention \"%s\"",        \
          hessfit_last_error(), (text))

static const char *platform_name = "Reference";

static int num_params(const hessfit_force *f) {
    int n = -1;
    HF_OK(hessfit_force_get_num_parameters(f, &n));
    return n;
}
static int num_particles(const hessfit_force *f) {
    int n = -1;
    HF_OK(hessfit_force_get_num_particles(f, &n));
    return n;
}

static OpenMM_System *system_with(int n) {
    OpenMM_System *s = OpenMM_System_create();
    for (int i = 0; i < n; i++)
        OpenMM_System_addParticle(s, 12.0);
    return s;
}

/* ---- status strings ----------------------------------------------------------------------- */
static void test_status_strings(void) {
    printf("status strings\n");
    for (int s = 0; s < HESSFIT_NUM_STATUS; s++) {
        const char *text = hessfit_status_string((hessfit_status) s);
        CHECK(text != NULL && text[0] != '\0', "status %d has no text", s);
        for (int t = 0; t < s; t++)
            CHECK(strcmp(text, hessfit_status_string((hessfit_status) t)) != 0, "statuses %d and %d share the text %s",
                  s, t, text);
    }
    CHECK(hessfit_status_string(HESSFIT_NUM_STATUS) != NULL, "out-of-range status gives NULL");
    CHECK(hessfit_status_string((hessfit_status) -1) != NULL, "negative status gives NULL");
}

/* ---- NULL arguments --------------------------------------------------------------------------- */
static void test_null_arguments(void) {
    printf("NULL arguments\n");
    hessfit_force *f = NULL;
    int i = 0;
    long long ll = 0;
    double d = 0.0;
    HF_FAILS(hessfit_force_create(NULL), HESSFIT_ERROR_NULL_ARGUMENT);
    HF_FAILS(hessfit_force_create_from_system(NULL, &f), HESSFIT_ERROR_NULL_ARGUMENT);
    CHECK(f == NULL, "a failed create_from_system left a handle");
    HF_FAILS(hessfit_force_add_parameter(NULL, 1.0, &i), HESSFIT_ERROR_NULL_ARGUMENT);
    HF_FAILS(hessfit_force_get_num_parameters(NULL, &i), HESSFIT_ERROR_NULL_ARGUMENT);
    HF_FAILS(hessfit_force_add_particle(NULL, -1, -1, -1, &i), HESSFIT_ERROR_NULL_ARGUMENT);
    HF_FAILS(hessfit_force_add_bond(NULL, 0, 1, 0, 0, NULL), HESSFIT_ERROR_NULL_ARGUMENT);
    HF_FAILS(hessfit_force_get_hessian_size(NULL, &ll), HESSFIT_ERROR_NULL_ARGUMENT);
    HF_FAILS(hessfit_force_add_to_system(NULL, NULL, NULL), HESSFIT_ERROR_NULL_ARGUMENT);
    hessfit_force_destroy(NULL); /* a no-op, like free(NULL) */
    CHECK(hessfit_force_as_openmm(NULL) == NULL, "hessfit_force_as_openmm(NULL) is not NULL");

    HF_OK(hessfit_force_create(&f));
    HF_OK(hessfit_force_add_parameter(f, 1.0, NULL));
    HF_FAILS(hessfit_force_get_num_parameters(f, NULL), HESSFIT_ERROR_NULL_ARGUMENT);
    HF_FAILS(hessfit_force_get_num_particles(f, NULL), HESSFIT_ERROR_NULL_ARGUMENT);
    HF_FAILS(hessfit_force_get_num_molecules(f, NULL), HESSFIT_ERROR_NULL_ARGUMENT);
    HF_FAILS(hessfit_force_set_parameters(f, NULL, 1), HESSFIT_ERROR_NULL_ARGUMENT);
    EXPECT_MSG("'values'");
    HF_FAILS(hessfit_force_get_parameters(f, NULL, 1), HESSFIT_ERROR_NULL_ARGUMENT);
    HF_FAILS(hessfit_force_add_molecule(f, NULL, 2, NULL), HESSFIT_ERROR_NULL_ARGUMENT);
    HF_FAILS(hessfit_force_add_opls_torsion(f, 0, 1, 2, 3, NULL, NULL), HESSFIT_ERROR_NULL_ARGUMENT);
    EXPECT_MSG("'v_slots'");
    HF_FAILS(hessfit_force_add_rb_torsion(f, 0, 1, 2, 3, NULL, NULL), HESSFIT_ERROR_NULL_ARGUMENT);
    EXPECT_MSG("'c_slots'");
    HF_FAILS(hessfit_force_create_exclusions_from_bonds(f, NULL, 2), HESSFIT_ERROR_NULL_ARGUMENT);
    HF_FAILS(hessfit_force_get_hessian_block_offset(f, 0, NULL), HESSFIT_ERROR_NULL_ARGUMENT);
    HF_FAILS(hessfit_force_get_hessian_size(f, NULL), HESSFIT_ERROR_NULL_ARGUMENT);
    HF_FAILS(hessfit_force_update_parameters_in_context(f, NULL), HESSFIT_ERROR_NULL_ARGUMENT);
    EXPECT_MSG("'context'");
    HF_FAILS(hessfit_force_get_energy_forces(f, NULL, &d, NULL), HESSFIT_ERROR_NULL_ARGUMENT);
    HF_FAILS(hessfit_force_get_hessian_blocks(f, NULL, &d, 1), HESSFIT_ERROR_NULL_ARGUMENT);
    HF_FAILS(hessfit_force_get_parameter_derivatives(f, NULL, &d, 1), HESSFIT_ERROR_NULL_ARGUMENT);
    HF_FAILS(hessfit_force_add_to_system(f, NULL, NULL), HESSFIT_ERROR_NULL_ARGUMENT);
    EXPECT_MSG("'system'");
    hessfit_force_destroy(f);
}

/* ---- parameter table ------------------------------------------------------------------------ */
static void test_parameters(void) {
    printf("parameter table\n");
    hessfit_force *f = NULL;
    HF_OK(hessfit_force_create(&f));
    int s = -1;
    HF_OK(hessfit_force_add_parameter(f, 1.5, &s));
    CHECK(s == 0, "first slot is %d", s);
    HF_OK(hessfit_force_add_parameter(f, -2.5, &s));
    CHECK(s == 1, "second slot is %d", s);

    HF_FAILS(hessfit_force_add_parameter(f, NAN, &s), HESSFIT_ERROR_VALUE);
    EXPECT_MSG("slot 2");
    HF_FAILS(hessfit_force_add_parameter(f, INFINITY, &s), HESSFIT_ERROR_VALUE);
    HF_FAILS(hessfit_force_add_parameter(f, -INFINITY, &s), HESSFIT_ERROR_VALUE);
    CHECK(num_params(f) == 2, "failed add_parameter calls changed the table size to %d", num_params(f));

    double good[2] = {3.0, 4.0}, bad[2] = {3.0, NAN}, got[3] = {0, 0, 0};
    HF_FAILS(hessfit_force_set_parameters(f, bad, 2), HESSFIT_ERROR_VALUE);
    EXPECT_MSG("slot 1");
    bad[1] = INFINITY;
    HF_FAILS(hessfit_force_set_parameters(f, bad, 2), HESSFIT_ERROR_VALUE);
    HF_OK(hessfit_force_get_parameters(f, got, 2));
    CHECK(got[0] == 1.5 && got[1] == -2.5, "a failed set_parameters changed the table to %g, %g", got[0], got[1]);
    HF_FAILS(hessfit_force_set_parameters(f, good, 1), HESSFIT_ERROR_SIZE);
    HF_FAILS(hessfit_force_set_parameters(f, good, 3), HESSFIT_ERROR_SIZE);
    HF_FAILS(hessfit_force_set_parameters(f, good, -1), HESSFIT_ERROR_SIZE);
    HF_FAILS(hessfit_force_get_parameters(f, got, 3), HESSFIT_ERROR_SIZE);
    HF_FAILS(hessfit_force_get_parameters(f, got, 1), HESSFIT_ERROR_SIZE);
    HF_OK(hessfit_force_set_parameters(f, good, 2));
    HF_OK(hessfit_force_get_parameters(f, got, 2));
    CHECK(got[0] == 3.0 && got[1] == 4.0, "set_parameters stored %g, %g", got[0], got[1]);

    HF_FAILS(hessfit_force_set_14_scales(f, NAN, 0.5), HESSFIT_ERROR_VALUE);
    HF_FAILS(hessfit_force_set_14_scales(f, 0.5, INFINITY), HESSFIT_ERROR_VALUE);
    HF_FAILS(hessfit_force_set_combining_rule(f, (hessfit_combining_rule) 7), HESSFIT_ERROR_VALUE);
    HF_OK(hessfit_force_set_14_scales(f, 0.8333, 0.5));
    HF_OK(hessfit_force_set_combining_rule(f, HESSFIT_COMBINE_LORENTZ_BERTHELOT));
    hessfit_force_destroy(f);
}

/* ---- particles, molecules and terms at add time ------------------------------------------------ */
static void test_add_time_errors(void) {
    printf("particles, molecules and terms\n");
    hessfit_force *f = NULL;
    HF_OK(hessfit_force_create(&f));
    int k = -1, r0 = -1, idx = -1;
    HF_OK(hessfit_force_add_parameter(f, 1000.0, &k));
    HF_OK(hessfit_force_add_parameter(f, 0.1, &r0));
    for (int i = 0; i < 4; i++)
        HF_OK(hessfit_force_add_particle(f, k, HESSFIT_NO_SLOT, r0, &idx));
    CHECK(idx == 3, "fourth particle has index %d", idx);

    /* particles: slots must exist (or be NoSlot) */
    HF_FAILS(hessfit_force_add_particle(f, 2, -1, -1, NULL), HESSFIT_ERROR_INDEX);
    EXPECT_MSG("slot 2");
    HF_FAILS(hessfit_force_add_particle(f, -1, -2, -1, NULL), HESSFIT_ERROR_INDEX);
    HF_FAILS(hessfit_force_add_particle(f, -1, -1, 99, NULL), HESSFIT_ERROR_INDEX);
    CHECK(num_particles(f) == 4, "failed add_particle calls changed the particle count to %d", num_particles(f));

    /* terms: negative particles, a particle used twice, slots not in the table, NoSlot where a
     * parameter is required, periodicity < 1 */
    HF_FAILS(hessfit_force_add_bond(f, -1, 1, k, r0, NULL), HESSFIT_ERROR_INDEX);
    EXPECT_MSG("bond 0 uses particle -1");
    HF_FAILS(hessfit_force_add_bond(f, 1, 1, k, r0, NULL), HESSFIT_ERROR_INDEX);
    EXPECT_MSG("twice");
    HF_FAILS(hessfit_force_add_bond(f, 0, 1, 2, r0, NULL), HESSFIT_ERROR_INDEX);
    EXPECT_MSG("slot 2");
    HF_FAILS(hessfit_force_add_bond(f, 0, 1, HESSFIT_NO_SLOT, r0, NULL), HESSFIT_ERROR_INDEX);
    HF_FAILS(hessfit_force_add_urey_bradley(f, 0, -3, k, r0, NULL), HESSFIT_ERROR_INDEX);
    HF_FAILS(hessfit_force_add_urey_bradley(f, 0, 2, k, 5, NULL), HESSFIT_ERROR_INDEX);
    HF_FAILS(hessfit_force_add_angle(f, 0, 1, -2, k, r0, NULL), HESSFIT_ERROR_INDEX);
    HF_FAILS(hessfit_force_add_angle(f, 0, 1, 0, k, r0, NULL), HESSFIT_ERROR_INDEX);
    HF_FAILS(hessfit_force_add_angle(f, 0, 1, 2, k, HESSFIT_NO_SLOT, NULL), HESSFIT_ERROR_INDEX);
    HF_FAILS(hessfit_force_add_periodic_torsion(f, 0, 1, 2, 3, 0, k, r0, NULL), HESSFIT_ERROR_VALUE);
    EXPECT_MSG("periodicity");
    HF_FAILS(hessfit_force_add_periodic_torsion(f, 0, 1, 2, 3, -2, k, r0, NULL), HESSFIT_ERROR_VALUE);
    HF_FAILS(hessfit_force_add_periodic_torsion(f, 0, 1, 2, -1, 1, k, r0, NULL), HESSFIT_ERROR_INDEX);
    HF_FAILS(hessfit_force_add_periodic_torsion(f, 0, 1, 2, 3, 1, k, 7, NULL), HESSFIT_ERROR_INDEX);
    HF_FAILS(hessfit_force_add_periodic_improper(f, 0, 1, 2, 3, 0, k, r0, NULL), HESSFIT_ERROR_VALUE);
    EXPECT_MSG("periodic improper");
    HF_FAILS(hessfit_force_add_periodic_improper(f, 0, 1, 1, 3, 2, k, r0, NULL), HESSFIT_ERROR_INDEX);
    HF_FAILS(hessfit_force_add_harmonic_improper(f, 0, 1, 2, 3, k, 9, NULL), HESSFIT_ERROR_INDEX);
    HF_FAILS(hessfit_force_add_harmonic_improper(f, 0, 1, 2, -4, k, r0, NULL), HESSFIT_ERROR_INDEX);
    const int v_bad[4] = {k, 5, HESSFIT_NO_SLOT, r0}, v_neg[4] = {k, -2, k, k}, v_ok[4] = {HESSFIT_NO_SLOT, k, HESSFIT_NO_SLOT, r0};
    HF_FAILS(hessfit_force_add_opls_torsion(f, 0, 1, 2, 3, v_bad, NULL), HESSFIT_ERROR_INDEX);
    EXPECT_MSG("OPLS");
    HF_FAILS(hessfit_force_add_opls_torsion(f, 0, 1, 2, 3, v_neg, NULL), HESSFIT_ERROR_INDEX);
    HF_FAILS(hessfit_force_add_opls_torsion(f, 0, 1, 3, 3, v_ok, NULL), HESSFIT_ERROR_INDEX);
    const int c_bad[6] = {k, k, k, k, k, 6}, c_ok[6] = {k, HESSFIT_NO_SLOT, r0, HESSFIT_NO_SLOT, k, HESSFIT_NO_SLOT};
    HF_FAILS(hessfit_force_add_rb_torsion(f, 0, 1, 2, 3, c_bad, NULL), HESSFIT_ERROR_INDEX);
    EXPECT_MSG("RB");
    HF_FAILS(hessfit_force_add_rb_torsion(f, -1, 1, 2, 3, c_ok, NULL), HESSFIT_ERROR_INDEX);
    HF_FAILS(hessfit_force_add_exclusion(f, 0, -1, NULL), HESSFIT_ERROR_INDEX);
    HF_FAILS(hessfit_force_add_exclusion(f, 2, 2, NULL), HESSFIT_ERROR_INDEX);
    HF_FAILS(hessfit_force_add_pair14(f, -5, 1, NULL), HESSFIT_ERROR_INDEX);
    HF_FAILS(hessfit_force_add_explicit_pair(f, 0, 3, 8, HESSFIT_NO_SLOT, HESSFIT_NO_SLOT, NULL), HESSFIT_ERROR_INDEX);
    EXPECT_MSG("explicit pair");
    HF_FAILS(hessfit_force_add_explicit_pair(f, 0, 3, k, -2, HESSFIT_NO_SLOT, NULL), HESSFIT_ERROR_INDEX);
    HF_FAILS(hessfit_force_add_mm3_pair(f, 0, 3, r0, k, 8, NULL), HESSFIT_ERROR_INDEX);
    EXPECT_MSG("MM3* pair");
    HF_FAILS(hessfit_force_add_mm3_pair(f, 0, 3, r0, k, HESSFIT_NO_SLOT, NULL), HESSFIT_ERROR_INDEX); /* every slot needed */
    HF_FAILS(hessfit_force_add_mm3_pair(f, 1, 1, r0, k, k, NULL), HESSFIT_ERROR_INDEX);
    HF_FAILS(hessfit_force_add_hydrogen_bond(f, 0, 3, k, 8, NULL), HESSFIT_ERROR_INDEX);
    EXPECT_MSG("hydrogen bond");
    HF_FAILS(hessfit_force_add_hydrogen_bond(f, 0, 3, HESSFIT_NO_SLOT, k, NULL), HESSFIT_ERROR_INDEX); /* both slots */
    HF_FAILS(hessfit_force_add_hydrogen_bond(f, 2, 2, k, k, NULL), HESSFIT_ERROR_INDEX);
    HF_FAILS(hessfit_force_get_hydrogen_bond(f, 0, NULL, NULL, NULL, NULL), HESSFIT_ERROR_INDEX);
    /* a switched pair: its two particles distinct (anchors may repeat them), every slot, scales > 0 */
    HF_FAILS(hessfit_force_add_mm3_switched_pair(f, 1, 1, 0, 2, r0, k, k, 1.0, 1.0, NULL), HESSFIT_ERROR_INDEX);
    EXPECT_MSG("MM3* switched pair");
    HF_FAILS(hessfit_force_add_mm3_switched_pair(f, 0, 3, 0, -1, r0, k, k, 1.0, 1.0, NULL), HESSFIT_ERROR_INDEX);
    HF_FAILS(hessfit_force_add_mm3_switched_pair(f, 0, 3, 1, 3, r0, HESSFIT_NO_SLOT, k, 1.0, 1.0, NULL),
             HESSFIT_ERROR_INDEX);
    HF_FAILS(hessfit_force_add_mm3_switched_pair(f, 0, 3, 1, 3, r0, k, k, 0.0, 1.0, NULL), HESSFIT_ERROR_VALUE);
    EXPECT_MSG("distance scale");
    HF_FAILS(hessfit_force_add_mm3_switched_pair(f, 0, 3, 1, 3, r0, k, k, 1.0, INFINITY, NULL), HESSFIT_ERROR_VALUE);
    HF_FAILS(hessfit_force_get_mm3_switched_pair(f, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
             HESSFIT_ERROR_INDEX);
    HF_FAILS(hessfit_force_set_mm3_switched_pair(f, 0, 0, 3, 0, 3, r0, k, k, 1.0, 1.0), HESSFIT_ERROR_INDEX);
    HF_FAILS(hessfit_force_get_num_mm3_switched_pairs(f, NULL), HESSFIT_ERROR_NULL_ARGUMENT);
    HF_FAILS(hessfit_force_add_mm3_stretch_bend(f, 0, 1, 2, k, r0, r0, 5, 1.0, 1.0, NULL), HESSFIT_ERROR_INDEX);
    EXPECT_MSG("MM3* stretch-bend");
    HF_FAILS(hessfit_force_add_mm3_stretch_bend(f, 0, 1, 2, k, r0, HESSFIT_NO_SLOT, k, 1.0, 1.0, NULL), HESSFIT_ERROR_INDEX);
    HF_FAILS(hessfit_force_add_mm3_stretch_bend(f, 0, 1, 0, k, r0, r0, k, 1.0, 1.0, NULL), HESSFIT_ERROR_INDEX);
    HF_FAILS(hessfit_force_add_mm3_stretch_bend(f, 0, 1, 2, k, r0, r0, k, 0.0, 1.0, NULL), HESSFIT_ERROR_VALUE);
    EXPECT_MSG("distance scale");
    HF_FAILS(hessfit_force_add_mm3_stretch_bend(f, 0, 1, 2, k, r0, r0, k, 1.0, NAN, NULL), HESSFIT_ERROR_VALUE);
    /* a bend-bend's angles share the centre and at most one outer particle */
    HF_FAILS(hessfit_force_add_mm3_bend_bend(f, 0, 1, 2, 0, 2, k, r0, r0, NULL), HESSFIT_ERROR_INDEX);
    EXPECT_MSG("MM3* bend-bend");
    EXPECT_MSG("at most one outer particle");
    HF_FAILS(hessfit_force_add_mm3_bend_bend(f, 0, 1, 2, 2, 0, k, r0, r0, NULL), HESSFIT_ERROR_INDEX);
    HF_FAILS(hessfit_force_add_mm3_bend_bend(f, 0, 1, 2, 1, 3, k, r0, r0, NULL), HESSFIT_ERROR_INDEX); /* centre as outer */
    HF_FAILS(hessfit_force_add_mm3_bend_bend(f, 0, 1, 2, 3, 3, k, r0, r0, NULL), HESSFIT_ERROR_INDEX);
    HF_FAILS(hessfit_force_add_mm3_bend_bend(f, 0, 1, 2, 3, -1, k, r0, r0, NULL), HESSFIT_ERROR_INDEX);
    HF_FAILS(hessfit_force_add_mm3_bend_bend(f, 0, 1, 2, 3, 0, k, r0, 7, NULL), HESSFIT_ERROR_INDEX);
    HF_FAILS(hessfit_force_add_mm3_torsion_stretch(f, 0, 1, 2, 3, k, 9, 1.0, NULL), HESSFIT_ERROR_INDEX);
    EXPECT_MSG("MM3* torsion-stretch");
    HF_FAILS(hessfit_force_add_mm3_torsion_stretch(f, 0, 1, 2, 2, k, r0, 1.0, NULL), HESSFIT_ERROR_INDEX);
    HF_FAILS(hessfit_force_add_mm3_torsion_stretch(f, 0, 1, 2, 3, k, r0, -1.0, NULL), HESSFIT_ERROR_VALUE);
    HF_FAILS(hessfit_force_set_mm3_bond_distance_scale(f, 0, 1.0), HESSFIT_ERROR_INDEX); /* no MM3* bond yet */
    HF_FAILS(hessfit_force_get_mm3_bend_bend(f, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL), HESSFIT_ERROR_INDEX);
    const int bonds_bad[4] = {0, 1, 2, 2}, bonds_neg[2] = {0, -1};
    HF_FAILS(hessfit_force_create_exclusions_from_bonds(f, bonds_bad, 2), HESSFIT_ERROR_INDEX);
    HF_FAILS(hessfit_force_create_exclusions_from_bonds(f, bonds_neg, 1), HESSFIT_ERROR_INDEX);
    HF_FAILS(hessfit_force_create_exclusions_from_bonds(f, bonds_bad, -1), HESSFIT_ERROR_SIZE);
    /* reduced particles: negative or equal particles, a factor not finite or not > 0, bad indices */
    HF_FAILS(hessfit_force_add_reduced_particle(f, -1, 0, 0.923, NULL), HESSFIT_ERROR_INDEX);
    EXPECT_MSG("reduced particle 0");
    HF_FAILS(hessfit_force_add_reduced_particle(f, 1, -2, 0.923, NULL), HESSFIT_ERROR_INDEX);
    HF_FAILS(hessfit_force_add_reduced_particle(f, 2, 2, 0.923, NULL), HESSFIT_ERROR_INDEX);
    EXPECT_MSG("towards itself");
    const double bad_factors[4] = {0.0, -0.5, NAN, INFINITY};
    for (int b = 0; b < 4; b++) {
        HF_FAILS(hessfit_force_add_reduced_particle(f, 2, 0, bad_factors[b], NULL), HESSFIT_ERROR_VALUE);
        EXPECT_MSG("factor");
    }
    int n_reduced = -1, rp = -1, rq = -1;
    double rf = 0.0;
    HF_OK(hessfit_force_get_num_reduced_particles(f, &n_reduced));
    CHECK(n_reduced == 0, "failed reduced-particle adds left %d", n_reduced);
    HF_OK(hessfit_force_add_reduced_particle(f, 2, 0, 0.923, &idx));
    CHECK(idx == 0, "first reduced particle has index %d", idx);
    HF_FAILS(hessfit_force_get_reduced_particle(f, 1, &rp, &rq, &rf), HESSFIT_ERROR_INDEX);
    EXPECT_MSG("reduced particle 1 is out of range");
    HF_FAILS(hessfit_force_set_reduced_particle(f, -1, 2, 0, 0.9), HESSFIT_ERROR_INDEX);
    HF_FAILS(hessfit_force_set_reduced_particle(f, 0, 2, 0, NAN), HESSFIT_ERROR_VALUE);
    HF_FAILS(hessfit_force_get_num_reduced_particles(f, NULL), HESSFIT_ERROR_NULL_ARGUMENT);
    HF_OK(hessfit_force_set_reduced_particle(f, 0, 3, 1, 0.9));
    HF_OK(hessfit_force_get_reduced_particle(f, 0, &rp, &rq, &rf));
    CHECK(rp == 3 && rq == 1 && rf == 0.9, "reduced particle 0 reads back as %d, %d, %g", rp, rq, rf);
    HF_OK(hessfit_force_get_reduced_particle(f, 0, NULL, NULL, NULL));

    /* optional slots and NULL index outputs are fine */
    HF_OK(hessfit_force_add_opls_torsion(f, 0, 1, 2, 3, v_ok, &idx));
    CHECK(idx == 0, "first OPLS torsion has index %d (failed adds must not append)", idx);
    HF_OK(hessfit_force_add_rb_torsion(f, 0, 1, 2, 3, c_ok, NULL));
    HF_OK(hessfit_force_add_bond(f, 0, 1, k, r0, &idx));
    CHECK(idx == 0, "first bond has index %d (failed adds must not append)", idx);

    /* the MM3* cross terms and distance scales read back as set */
    double sc = 0.0, sc2 = 0.0;
    int q[5], ks, s1, s2, s3, n_terms = 0;
    HF_OK(hessfit_force_add_mm3_bond(f, 0, 1, k, r0, &idx));
    HF_FAILS(hessfit_force_set_mm3_bond_distance_scale(f, idx, INFINITY), HESSFIT_ERROR_VALUE);
    HF_FAILS(hessfit_force_get_mm3_bond_distance_scale(f, idx, NULL), HESSFIT_ERROR_NULL_ARGUMENT);
    HF_OK(hessfit_force_get_mm3_bond_distance_scale(f, idx, &sc));
    CHECK(sc == 1.0, "a new MM3* bond's distance scale is %g", sc);
    HF_OK(hessfit_force_set_mm3_bond_distance_scale(f, idx, 1.0 / 0.923));
    HF_OK(hessfit_force_get_mm3_bond_distance_scale(f, idx, &sc));
    CHECK(sc == 1.0 / 0.923, "MM3* bond distance scale reads back as %.17g", sc);
    HF_OK(hessfit_force_add_mm3_bend_bend(f, 2, 1, 0, 3, 2, k, r0, k, &idx)); /* p5 = p1: 4 particles */
    HF_OK(hessfit_force_get_mm3_bend_bend(f, idx, &q[0], &q[1], &q[2], &q[3], &q[4], &ks, &s1, &s2));
    CHECK(q[0] == 2 && q[1] == 1 && q[2] == 0 && q[3] == 3 && q[4] == 2 && ks == k && s1 == r0 && s2 == k,
          "MM3* bend-bend reads back as %d %d %d %d %d / %d %d %d", q[0], q[1], q[2], q[3], q[4], ks, s1, s2);
    HF_OK(hessfit_force_set_mm3_bend_bend(f, idx, 0, 1, 2, 3, 0, k, r0, r0));
    HF_OK(hessfit_force_get_num_mm3_bend_bends(f, &n_terms));
    CHECK(n_terms == 1, "%d MM3* bend-bends", n_terms);
    HF_OK(hessfit_force_add_mm3_stretch_bend(f, 0, 1, 2, k, r0, r0, k, 1.0, 1.1, &idx));
    HF_FAILS(hessfit_force_set_mm3_stretch_bend(f, idx, 0, 1, 2, k, r0, r0, k, -1.1, 1.0), HESSFIT_ERROR_VALUE);
    HF_OK(hessfit_force_set_mm3_stretch_bend(f, idx, 2, 1, 0, r0, k, r0, k, 1.0 / 0.923, 1.0));
    HF_OK(hessfit_force_get_mm3_stretch_bend(f, idx, &q[0], &q[1], &q[2], &ks, &s1, &s2, &s3, &sc, &sc2));
    CHECK(q[0] == 2 && q[1] == 1 && q[2] == 0 && ks == r0 && s1 == k && s2 == r0 && s3 == k && sc == 1.0 / 0.923 &&
              sc2 == 1.0, "MM3* stretch-bend reads back as %d %d %d / %d %d %d %d / %g %g", q[0], q[1], q[2], ks, s1, s2,
          s3, sc, sc2);
    HF_OK(hessfit_force_get_num_mm3_stretch_bends(f, &n_terms));
    CHECK(n_terms == 1, "%d MM3* stretch-bends", n_terms);
    HF_OK(hessfit_force_add_mm3_torsion_stretch(f, 0, 1, 2, 3, k, r0, 0.95, &idx));
    HF_OK(hessfit_force_get_mm3_torsion_stretch(f, idx, &q[0], &q[1], &q[2], &q[3], &ks, &s1, &sc));
    CHECK(q[0] == 0 && q[3] == 3 && ks == k && s1 == r0 && sc == 0.95, "MM3* torsion-stretch reads back wrong");
    HF_FAILS(hessfit_force_set_mm3_torsion_stretch(f, idx + 1, 0, 1, 2, 3, k, r0, 1.0), HESSFIT_ERROR_INDEX);
    HF_OK(hessfit_force_get_num_mm3_torsion_stretches(f, &n_terms));
    CHECK(n_terms == 1, "%d MM3* torsion-stretches", n_terms);
    HF_FAILS(hessfit_force_get_num_mm3_torsion_stretches(f, NULL), HESSFIT_ERROR_NULL_ARGUMENT);

    /* molecules */
    const int mol_neg[2] = {0, -1}, mol_ok[2] = {0, 1};
    HF_FAILS(hessfit_force_add_molecule(f, mol_ok, 0, NULL), HESSFIT_ERROR_SIZE);
    HF_FAILS(hessfit_force_add_molecule(f, mol_ok, -1, NULL), HESSFIT_ERROR_SIZE);
    HF_FAILS(hessfit_force_add_molecule(f, mol_neg, 2, NULL), HESSFIT_ERROR_INDEX);
    int nmol = -1, list[4], cnt = -1;
    HF_OK(hessfit_force_get_num_molecules(f, &nmol));
    CHECK(nmol == 1, "the implicit molecule count is %d (failed add_molecule calls must not add)", nmol);
    HF_FAILS(hessfit_force_get_molecule_particles(f, 1, list, 4, &cnt), HESSFIT_ERROR_INDEX);
    HF_FAILS(hessfit_force_get_molecule_particles(f, -1, list, 4, &cnt), HESSFIT_ERROR_INDEX);
    HF_FAILS(hessfit_force_get_molecule_particles(f, 0, list, 3, &cnt), HESSFIT_ERROR_SIZE);
    HF_FAILS(hessfit_force_get_molecule_particles(f, 0, list, 4, NULL), HESSFIT_ERROR_NULL_ARGUMENT);
    HF_OK(hessfit_force_get_molecule_particles(f, 0, list, 4, &cnt));
    CHECK(cnt == 4 && list[0] == 0 && list[3] == 3, "implicit molecule: %d particles", cnt);
    long long off = -1;
    HF_FAILS(hessfit_force_get_hessian_block_offset(f, -1, &off), HESSFIT_ERROR_INDEX);
    HF_FAILS(hessfit_force_get_hessian_block_offset(f, 2, &off), HESSFIT_ERROR_INDEX);
    HF_OK(hessfit_force_get_hessian_block_offset(f, 0, &off));
    CHECK(off == 0, "offset of molecule 0 is %lld", off);
    hessfit_force_destroy(f);
}

/* ---- ownership and Contexts ------------------------------------------------------------------ */

/* a 3-particle force: bond 0-1, bond 1-2, angle 0-1-2 (no nonbonded parameters) */
static hessfit_force *small_force(void) {
    hessfit_force *f = NULL;
    int k, r0, ka, th0;
    HF_OK(hessfit_force_create(&f));
    HF_OK(hessfit_force_add_parameter(f, 2.0e5, &k));
    HF_OK(hessfit_force_add_parameter(f, 0.1, &r0));
    HF_OK(hessfit_force_add_parameter(f, 300.0, &ka));
    HF_OK(hessfit_force_add_parameter(f, 1.9, &th0));
    for (int i = 0; i < 3; i++)
        HF_OK(hessfit_force_add_particle(f, HESSFIT_NO_SLOT, HESSFIT_NO_SLOT, HESSFIT_NO_SLOT, NULL));
    HF_OK(hessfit_force_add_bond(f, 0, 1, k, r0, NULL));
    HF_OK(hessfit_force_add_bond(f, 1, 2, k, r0, NULL));
    HF_OK(hessfit_force_add_angle(f, 0, 1, 2, ka, th0, NULL));
    return f;
}

static const double small_pos[9] = {0.1, 0.0, 0.0, 0.0, 0.0, 0.0, -0.03, 0.1, 0.0};

static void test_ownership_and_contexts(void) {
    printf("ownership and contexts\n");
    hessfit_force *f = small_force(), *g = small_force(), *loose = small_force();
    OpenMM_System *s1 = system_with(3), *s2 = system_with(3), *s3 = system_with(3);
    int index = -1;
    HF_OK(hessfit_force_add_to_system(f, s1, &index));
    CHECK(index == 0, "force index %d", index);
    HF_FAILS(hessfit_force_add_to_system(f, s1, NULL), HESSFIT_ERROR_OWNERSHIP);
    HF_FAILS(hessfit_force_add_to_system(f, s2, NULL), HESSFIT_ERROR_OWNERSHIP);
    CHECK(OpenMM_System_getNumForces(s1) == 1 && OpenMM_System_getNumForces(s2) == 0,
          "a refused add_to_system changed the Systems (%d, %d forces)", OpenMM_System_getNumForces(s1),
          OpenMM_System_getNumForces(s2));
    HF_OK(hessfit_force_add_to_system(g, s2, NULL));

    OpenMM_Integrator *i1 = NULL, *i2 = NULL, *i3 = NULL;
    OpenMM_Context *c1 = test_create_context(s1, platform_name, small_pos, 3, 0.001, &i1);
    OpenMM_Context *c2 = test_create_context(s2, platform_name, small_pos, 3, 0.001, &i2);
    OpenMM_Context *c3 = test_create_context(s3, platform_name, small_pos, 3, 0.001, &i3); /* no HessFit force */

    long long size = 0;
    HF_OK(hessfit_force_get_hessian_size(f, &size));
    CHECK(size == 81, "Hessian size %lld", size);
    double blocks[81], wrong[82], deriv[4], energy = 0.0, forces[9];
    HF_OK(hessfit_force_get_hessian_blocks(f, c1, blocks, 81));

    /* a Context that does not hold the force */
    HF_FAILS(hessfit_force_get_hessian_blocks(f, c2, blocks, 81), HESSFIT_ERROR_NOT_IN_CONTEXT);
    HF_FAILS(hessfit_force_get_hessian_blocks(f, c3, blocks, 81), HESSFIT_ERROR_NOT_IN_CONTEXT);
    HF_FAILS(hessfit_force_get_parameter_derivatives(f, c2, deriv, 4), HESSFIT_ERROR_NOT_IN_CONTEXT);
    HF_FAILS(hessfit_force_get_energy_forces(f, c2, &energy, forces), HESSFIT_ERROR_NOT_IN_CONTEXT);
    HF_FAILS(hessfit_force_update_parameters_in_context(f, c3), HESSFIT_ERROR_NOT_IN_CONTEXT);
    HF_FAILS(hessfit_force_get_hessian_blocks(loose, c1, blocks, 81), HESSFIT_ERROR_NOT_IN_CONTEXT);
    HF_FAILS(hessfit_force_get_energy_forces(loose, c1, &energy, NULL), HESSFIT_ERROR_NOT_IN_CONTEXT);

    /* wrong sizes and NULL outputs */
    HF_FAILS(hessfit_force_get_hessian_blocks(f, c1, wrong, 82), HESSFIT_ERROR_SIZE);
    EXPECT_MSG("81");
    HF_FAILS(hessfit_force_get_hessian_blocks(f, c1, wrong, 80), HESSFIT_ERROR_SIZE);
    HF_FAILS(hessfit_force_get_hessian_blocks(f, c1, wrong, -1), HESSFIT_ERROR_SIZE);
    HF_FAILS(hessfit_force_get_hessian_blocks(f, c1, NULL, 81), HESSFIT_ERROR_NULL_ARGUMENT);
    HF_FAILS(hessfit_force_get_parameter_derivatives(f, c1, deriv, 3), HESSFIT_ERROR_SIZE);
    HF_FAILS(hessfit_force_get_parameter_derivatives(f, c1, deriv, 5), HESSFIT_ERROR_SIZE);
    HF_FAILS(hessfit_force_get_parameter_derivatives(f, c1, NULL, 4), HESSFIT_ERROR_NULL_ARGUMENT);
    HF_FAILS(hessfit_force_get_energy_forces(f, c1, NULL, forces), HESSFIT_ERROR_NULL_ARGUMENT);
    HF_OK(hessfit_force_get_parameter_derivatives(f, c1, deriv, 4));
    HF_OK(hessfit_force_get_energy_forces(f, c1, &energy, forces));
    CHECK(energy > 0.0, "energy %g", energy);

    /* a bad table push leaves the Context as it was */
    double table[4], bad[4];
    HF_OK(hessfit_force_get_parameters(f, table, 4));
    memcpy(bad, table, sizeof bad);
    bad[2] = NAN;
    HF_FAILS(hessfit_force_set_parameters(f, bad, 4), HESSFIT_ERROR_VALUE);
    HF_OK(hessfit_force_update_parameters_in_context(f, c1));
    double e2 = 0.0;
    HF_OK(hessfit_force_get_energy_forces(f, c1, &e2, NULL));
    CHECK(e2 == energy, "energy changed from %.17g to %.17g after a refused table", energy, e2);

    /* a new term after the Context exists is pushed by update (same particles and molecules) */
    HF_OK(hessfit_force_add_urey_bradley(f, 0, 2, 0, 1, NULL));
    HF_OK(hessfit_force_update_parameters_in_context(f, c1));
    HF_OK(hessfit_force_get_energy_forces(f, c1, &e2, NULL));
    CHECK(e2 > energy, "a Urey-Bradley term added after Context creation did not change the energy (%g, %g)", energy, e2);

    /* layout changes after Context creation are refused by update, not crashed on */
    HF_OK(hessfit_force_add_particle(g, HESSFIT_NO_SLOT, HESSFIT_NO_SLOT, HESSFIT_NO_SLOT, NULL));
    HF_FAILS(hessfit_force_update_parameters_in_context(g, c2), HESSFIT_ERROR_SIZE);
    EXPECT_MSG("particles");
    HF_OK(hessfit_force_get_energy_forces(g, c2, &e2, NULL)); /* the Context still works */
    CHECK(e2 == energy, "energy of the untouched context %.17g vs %.17g", e2, energy);

    /* molecules declared after Context creation */
    const int all[3] = {0, 1, 2};
    HF_OK(hessfit_force_add_molecule(f, all, 3, NULL));
    HF_FAILS(hessfit_force_update_parameters_in_context(f, c1), HESSFIT_ERROR_TOPOLOGY);
    EXPECT_MSG("molecule");

    OpenMM_Context_destroy(c1);
    OpenMM_Context_destroy(c2);
    OpenMM_Context_destroy(c3);
    OpenMM_Integrator_destroy(i1);
    OpenMM_Integrator_destroy(i2);
    OpenMM_Integrator_destroy(i3);
    hessfit_force_destroy(f);
    hessfit_force_destroy(g);
    hessfit_force_destroy(loose);
    OpenMM_System_destroy(s1);
    OpenMM_System_destroy(s2);
    OpenMM_System_destroy(s3);
}

/* ---- undefined geometry ---------------------------------------------------------------------- */

/* Each of the three reading calls fails with GEOMETRY and a message naming the term. */
static void expect_geometry_error(hessfit_force *f, OpenMM_Context *c, int n, const double *pos, const char *term) {
    double e = 0.0, forces[3 * 8], blocks[24 * 24], deriv[16];
    long long size = 0;
    int np = 0;
    HF_OK(hessfit_force_get_hessian_size(f, &size));
    HF_OK(hessfit_force_get_num_parameters(f, &np));
    CHECK(size <= 24 * 24 && np <= 16 && n <= 8, "test arrays too small");
    test_set_positions(c, pos, n);
    HF_FAILS(hessfit_force_get_energy_forces(f, c, &e, forces), HESSFIT_ERROR_GEOMETRY);
    EXPECT_MSG(term);
    HF_FAILS(hessfit_force_get_energy_forces(f, c, &e, NULL), HESSFIT_ERROR_GEOMETRY);
    EXPECT_MSG(term);
    HF_FAILS(hessfit_force_get_hessian_blocks(f, c, blocks, size), HESSFIT_ERROR_GEOMETRY);
    EXPECT_MSG(term);
    HF_FAILS(hessfit_force_get_parameter_derivatives(f, c, deriv, np), HESSFIT_ERROR_GEOMETRY);
    EXPECT_MSG(term);
}

static void test_geometry_errors(void) {
    printf("undefined geometry\n");
    /* 5 particles: bond 0-1, angle 0-1-2, periodic torsion 0-1-2-3; particle 4 charged like 3
     * (a plain nonbonded pair 3-4; all other pairs excluded) */
    hessfit_force *f = NULL;
    int k, r0, ka, th0, kt, ph, q;
    HF_OK(hessfit_force_create(&f));
    HF_OK(hessfit_force_add_parameter(f, 2.0e5, &k));
    HF_OK(hessfit_force_add_parameter(f, 0.1, &r0));
    HF_OK(hessfit_force_add_parameter(f, 300.0, &ka));
    HF_OK(hessfit_force_add_parameter(f, 1.9, &th0));
    HF_OK(hessfit_force_add_parameter(f, 3.0, &kt));
    HF_OK(hessfit_force_add_parameter(f, 0.2, &ph));
    HF_OK(hessfit_force_add_parameter(f, 0.3, &q));
    for (int i = 0; i < 5; i++)
        HF_OK(hessfit_force_add_particle(f, i >= 3 ? q : HESSFIT_NO_SLOT, HESSFIT_NO_SLOT, HESSFIT_NO_SLOT, NULL));
    HF_OK(hessfit_force_add_bond(f, 0, 1, k, r0, NULL));
    HF_OK(hessfit_force_add_angle(f, 0, 1, 2, ka, th0, NULL));
    HF_OK(hessfit_force_add_periodic_torsion(f, 0, 1, 2, 3, 2, kt, ph, NULL));
    for (int i = 0; i < 5; i++)
        for (int j = i + 1; j < 5; j++)
            if (!(i == 3 && j == 4))
                HF_OK(hessfit_force_add_exclusion(f, i, j, NULL));
    OpenMM_System *s = system_with(5);
    HF_OK(hessfit_force_add_to_system(f, s, NULL));
    const double good[15] = {0.1, 0, 0, 0, 0, 0, -0.03, 0.1, 0, -0.13, 0.12, 0.08, 0.3, 0.3, 0.3};
    OpenMM_Integrator *integ = NULL;
    OpenMM_Context *c = test_create_context(s, platform_name, good, 5, 0.001, &integ);
    double e0 = 0.0, e1 = 0.0, pos[15];
    HF_OK(hessfit_force_get_energy_forces(f, c, &e0, NULL));

    memcpy(pos, good, sizeof pos); /* atoms 0 and 1 coincide */
    pos[0] = pos[3];
    pos[1] = pos[4];
    pos[2] = pos[5];
    expect_geometry_error(f, c, 5, pos, "bond 0");

    memcpy(pos, good, sizeof pos); /* angle 0-1-2 exactly 180 degrees: 0, 1, 2 on the x axis */
    pos[6] = -0.12;
    pos[7] = 0.0;
    pos[8] = 0.0;
    expect_geometry_error(f, c, 5, pos, "angle 0");

    memcpy(pos, good, sizeof pos); /* 1, 2, 3 collinear: the torsion's dihedral is undefined */
    pos[9] = 2.0 * pos[6];
    pos[10] = 2.0 * pos[7];
    pos[11] = 2.0 * pos[8];
    expect_geometry_error(f, c, 5, pos, "periodic torsion 0");

    memcpy(pos, good, sizeof pos); /* the charged particles 3 and 4 coincide */
    pos[12] = pos[9];
    pos[13] = pos[10];
    pos[14] = pos[11];
    expect_geometry_error(f, c, 5, pos, "nonbonded");

    memcpy(pos, good, sizeof pos); /* a NaN coordinate */
    pos[1] = NAN;
    test_set_positions(c, pos, 5);
    HF_FAILS(hessfit_force_get_energy_forces(f, c, &e1, NULL), HESSFIT_ERROR_GEOMETRY);

    /* the Context recovers with a good geometry */
    test_set_positions(c, good, 5);
    HF_OK(hessfit_force_get_energy_forces(f, c, &e1, NULL));
    CHECK(e1 == e0, "energy after recovery %.17g, before %.17g", e1, e0);
    double blocks[225];
    HF_OK(hessfit_force_get_hessian_blocks(f, c, blocks, 225));

    OpenMM_Context_destroy(c);
    OpenMM_Integrator_destroy(integ);
    hessfit_force_destroy(f);
    OpenMM_System_destroy(s);
}

/* ---- errors that need the System: hessfit_force_validate ------------------------------------- */

/* n_force particles, n_system System particles; molecules/terms added by the caller */
static hessfit_force *bare_force(int n_force) {
    hessfit_force *f = NULL;
    HF_OK(hessfit_force_create(&f));
    HF_OK(hessfit_force_add_parameter(f, 1000.0, NULL));
    HF_OK(hessfit_force_add_parameter(f, 0.1, NULL));
    for (int i = 0; i < n_force; i++)
        HF_OK(hessfit_force_add_particle(f, HESSFIT_NO_SLOT, HESSFIT_NO_SLOT, HESSFIT_NO_SLOT, NULL));
    return f;
}

static void test_validate(void) {
    printf("validation against the System (hessfit_force_validate)\n");
    OpenMM_System *s4 = system_with(4);
    hessfit_force *f;
    const int m01[2] = {0, 1}, m23[2] = {2, 3}, m12[2] = {1, 2}, m3[1] = {3}, m0[1] = {0}, m09[2] = {0, 9};

    f = bare_force(4); /* valid: one implicit molecule */
    HF_OK(hessfit_force_add_bond(f, 0, 3, 0, 1, NULL));
    HF_OK(hessfit_force_validate(f, s4));
    HF_FAILS(hessfit_force_validate(NULL, s4), HESSFIT_ERROR_NULL_ARGUMENT);
    HF_FAILS(hessfit_force_validate(f, NULL), HESSFIT_ERROR_NULL_ARGUMENT);
    hessfit_force_destroy(f);

    f = bare_force(4); /* valid: two molecules */
    HF_OK(hessfit_force_add_molecule(f, m01, 2, NULL));
    HF_OK(hessfit_force_add_molecule(f, m23, 2, NULL));
    HF_OK(hessfit_force_add_bond(f, 2, 3, 0, 1, NULL));
    HF_OK(hessfit_force_validate(f, s4));
    hessfit_force_destroy(f);

    f = bare_force(4); /* a term uses a particle beyond the System's (and the force's) count */
    HF_OK(hessfit_force_add_bond(f, 0, 5, 0, 1, NULL));
    HF_FAILS(hessfit_force_validate(f, s4), HESSFIT_ERROR_INDEX);
    EXPECT_MSG("bond 0");
    hessfit_force_destroy(f);

    f = bare_force(4);
    HF_OK(hessfit_force_add_pair14(f, 4, 1, NULL));
    HF_FAILS(hessfit_force_validate(f, s4), HESSFIT_ERROR_INDEX);
    EXPECT_MSG("1-4 pair 0");
    hessfit_force_destroy(f);

    f = bare_force(3); /* the force has fewer particles than the System */
    HF_FAILS(hessfit_force_validate(f, s4), HESSFIT_ERROR_SIZE);
    EXPECT_MSG("System");
    hessfit_force_destroy(f);

    f = bare_force(4); /* a molecule lists a particle that does not exist */
    HF_OK(hessfit_force_add_molecule(f, m09, 2, NULL));
    HF_OK(hessfit_force_add_molecule(f, m12, 2, NULL));
    HF_FAILS(hessfit_force_validate(f, s4), HESSFIT_ERROR_INDEX);
    EXPECT_MSG("particle 9");
    hessfit_force_destroy(f);

    for (int term = 0; term < 4; term++) { /* a term spans two molecules: an angle, an MM3* pair, a bend-bend, a
                                            * switched pair whose anchor lies in the other molecule */
        static const char *names[4] = {"angle 0", "MM3* pair 0", "MM3* bend-bend 0", "MM3* switched pair 0"};
        f = bare_force(4);
        HF_OK(hessfit_force_add_molecule(f, m01, 2, NULL));
        HF_OK(hessfit_force_add_molecule(f, m23, 2, NULL));
        if (term == 0)
            HF_OK(hessfit_force_add_angle(f, 0, 1, 2, 0, 1, NULL));
        else if (term == 1)
            HF_OK(hessfit_force_add_mm3_pair(f, 1, 2, 1, 0, 0, NULL));
        else if (term == 2)
            HF_OK(hessfit_force_add_mm3_bend_bend(f, 0, 1, 2, 0, 3, 0, 1, 1, NULL)); /* 2, 3 in molecule 1 */
        else
            HF_OK(hessfit_force_add_mm3_switched_pair(f, 0, 1, 0, 2, 1, 0, 0, 1.0, 1.0, NULL));
        HF_FAILS(hessfit_force_validate(f, s4), HESSFIT_ERROR_TOPOLOGY);
        EXPECT_MSG(names[term]);
        hessfit_force_destroy(f);
    }

    f = bare_force(4); /* a particle in two molecules */
    HF_OK(hessfit_force_add_molecule(f, m01, 2, NULL));
    HF_OK(hessfit_force_add_molecule(f, m12, 2, NULL));
    HF_OK(hessfit_force_add_molecule(f, m3, 1, NULL));
    HF_FAILS(hessfit_force_validate(f, s4), HESSFIT_ERROR_TOPOLOGY);
    EXPECT_MSG("particle 1");
    hessfit_force_destroy(f);

    f = bare_force(4); /* a particle in no molecule */
    HF_OK(hessfit_force_add_molecule(f, m0, 1, NULL));
    HF_OK(hessfit_force_add_molecule(f, m12, 2, NULL));
    HF_FAILS(hessfit_force_validate(f, s4), HESSFIT_ERROR_TOPOLOGY);
    EXPECT_MSG("particle 3");
    hessfit_force_destroy(f);

    for (int twice = 0; twice < 3; twice++) { /* one pair defined twice: excluded and 1-4; explicit and MM3*;
                                               * MM3* and switched */
        f = bare_force(4);
        if (twice == 0) {
            HF_OK(hessfit_force_add_exclusion(f, 0, 3, NULL));
            HF_OK(hessfit_force_add_pair14(f, 3, 0, NULL));
        } else if (twice == 1) {
            HF_OK(hessfit_force_add_explicit_pair(f, 0, 3, 0, 1, 0, NULL));
            HF_OK(hessfit_force_add_mm3_pair(f, 3, 0, 1, 0, 0, NULL));
        } else {
            HF_OK(hessfit_force_add_mm3_pair(f, 3, 0, 1, 0, 0, NULL));
            HF_OK(hessfit_force_add_mm3_switched_pair(f, 0, 3, 1, 2, 1, 0, 0, 1.0, 1.0, NULL));
        }
        HF_FAILS(hessfit_force_validate(f, s4), HESSFIT_ERROR_TOPOLOGY);
        EXPECT_MSG("(0, 3)");
        EXPECT_MSG(twice == 0 ? "1-4 pair 0" : twice == 1 ? "MM3* pair 0" : "MM3* switched pair 0");
        hessfit_force_destroy(f);
    }

    OpenMM_System_destroy(s4);
}

/* hessfit_context_create reports what OpenMM's C API would abort on, and works when all is well. */
static void test_context_create(void) {
    printf("context creation (hessfit_context_create)\n");
    test_load_plugins();
    const int m01[2] = {0, 1}, m23[2] = {2, 3};
    for (int valid = 0; valid <= 1; valid++) {
        OpenMM_System *s4 = system_with(4);
        hessfit_force *f = bare_force(4);
        HF_OK(hessfit_force_add_molecule(f, m01, 2, NULL));
        HF_OK(hessfit_force_add_molecule(f, m23, 2, NULL));
        HF_OK(hessfit_force_add_bond(f, valid ? 2 : 1, 3, 0, 1, NULL)); /* 1-3 spans the molecules */
        HF_OK(hessfit_force_add_to_system(f, s4, NULL));
        OpenMM_Integrator *verlet = (OpenMM_Integrator *) OpenMM_VerletIntegrator_create(0.001);
        OpenMM_Context *context = (OpenMM_Context *) 1;
        if (valid) {
            HF_OK(hessfit_context_create(s4, verlet, platform_name, "double", &context));
            CHECK(context != NULL, "no context");
            OpenMM_Context_destroy(context);
        } else {
            HF_FAILS(hessfit_context_create(s4, verlet, platform_name, "double", &context), HESSFIT_ERROR_TOPOLOGY);
            EXPECT_MSG("bond 0");
            CHECK(context == NULL, "a failed hessfit_context_create left its output set");
            HF_FAILS(hessfit_context_create(s4, verlet, "NoSuchPlatform", NULL, &context), HESSFIT_ERROR_OPENMM);
        }
        OpenMM_Integrator_destroy(verlet);
        hessfit_force_destroy(f);
        OpenMM_System_destroy(s4);
    }
}

/* ---- the converter ---------------------------------------------------------------------------- */
static void test_converter(void) {
    printf("converter\n");
    OpenMM_System *s = system_with(2);
    OpenMM_CustomBondForce *custom = OpenMM_CustomBondForce_create("k*r^2");
    OpenMM_System_addForce(s, (OpenMM_Force *) custom);
    hessfit_force *f = (hessfit_force *) 1; /* must be reset to NULL on failure */
    HF_FAILS(hessfit_force_create_from_system(s, &f), HESSFIT_ERROR_UNSUPPORTED);
    EXPECT_MSG("CustomBondForce");
    CHECK(f == NULL, "a failed create_from_system did not set the handle to NULL");
    OpenMM_System_destroy(s);

    s = system_with(2);
    OpenMM_NonbondedForce *nb = OpenMM_NonbondedForce_create();
    OpenMM_NonbondedForce_addParticle(nb, 0.1, 0.3, 0.5);
    OpenMM_NonbondedForce_addParticle(nb, -0.1, 0.3, 0.5);
    OpenMM_NonbondedForce_setNonbondedMethod(nb, OpenMM_NonbondedForce_CutoffNonPeriodic);
    OpenMM_System_addForce(s, (OpenMM_Force *) nb);
    HF_FAILS(hessfit_force_create_from_system(s, &f), HESSFIT_ERROR_UNSUPPORTED);
    OpenMM_System_destroy(s);
}

int main(int argc, char **argv) {
    platform_name = test_platform_name(argc, argv);
    test_status_strings();
    test_null_arguments();
    test_parameters();
    test_add_time_errors();
    test_ownership_and_contexts();
    test_geometry_errors();
    test_validate();
    test_context_create();
    test_converter();
    printf("test_bad_input: OK\n");
    return 0;
}
