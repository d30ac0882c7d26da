/*
 * test_objective_geometry: bond lengths, angles and torsions of the MM-minimised structures
 * against the QM ones (fitting/include/hessfit_objective.h), with the gradient by implicit
 * differentiation of the minimum.
 *
 *   - CH3F at a generic point (q2mm's Seminario start moved off, one H moved): every bond and angle
 *     of the structure; the minimum's largest gradient component <= 1e-9 kJ/mol/nm; the measured MM
 *     values are those of a minimisation from scratch in a fresh model (1e-7); the analytic
 *     gradient against central differences of the re-minimised loss (<= 1e-6 relative); sum r^2 =
 *     loss; q2mm's weights.
 *   - rh-enamide (mm3.fld typed through the .mmo, bond and angle k, r0, theta0 free): every bond,
 *     angle and torsion of structures 1 and 2, the same checks; the per-evaluation cost printed
 *     (LocalEnergyMinimizer, Newton steps, gradient).
 *   - A fit (L-BFGS, hessfit_optimize.h) with r0 / theta0 free lowers the CH3F geometry loss by
 *     orders of magnitude; the fitted r0 approach the QM bond lengths.
 *   - The model's own Context keeps the QM geometry (its Hessian objective gives the same loss
 *     before and after geometry evaluations).
 *   - Bad input: a target on a molecule without coordinates, atoms out of range or repeated,
 *     collinear atoms, a molecule out of range, a second geometry part: errors naming the target.
 *   - rh-enamide without nonbonded terms: its nitrile bend (theta0 = 180) minimises to an exactly
 *     linear angle, which HessianForce evaluates in its smooth limit: the minimum is found and the
 *     gradient (angle k free) matches central differences; with theta0 free the gradient is an
 *     error naming theta0 of that angle (undefined there), the loss alone is not.
 *   - `hessfit fit` with `geometry = 1` on CH3F (q2mm frequencies + geometry) writes targets.txt /
 *     targets.json; `hessfit check` fails before any work on a structure or atom that does not
 *     exist and on geometry-weight without geometry.
 */
#define _POSIX_C_SOURCE 200809L
#include "hessfit_fitting.h"
#include "hessfit_model.h"
#include "hessfit_objective.h"
#include "hessfit_optimize.h"
#include "objective_fd.h"
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double q2mm_weights[3] = {HESSFIT_OBJ_BOND_WEIGHT, HESSFIT_OBJ_ANGLE_WEIGHT, HESSFIT_OBJ_TORSION_WEIGHT};

/* sum r^2 = loss over the geometry part's residuals, and every target's residual from its values. */
static void check_residuals(hessfit_objective *obj, const char *label)
{
    const long long n = hessfit_objective_n_residuals(obj);
    const int nt = hessfit_objective_n_geometry_targets(obj);
    long long first, count;
    HF_CALL(hessfit_objective_part_range(obj, HESSFIT_OBJ_PART_GEOMETRY, &first, &count));
    CHECK(count == nt && first + count == n, "%s: geometry residuals %lld..%lld of %lld", label, first, count, n);
    double *r = calloc((size_t)n, sizeof *r), *qm = calloc((size_t)nt, sizeof *qm), *mm = calloc((size_t)nt, sizeof *mm);
    double loss, sum = 0.0;
    CHECK(r && qm && mm, "out of memory");
    HF_CALL(hessfit_objective_evaluate(obj, NULL, &loss, NULL, r));
    HF_CALL(hessfit_objective_geometry_values(obj, qm, mm));
    for (long long i = 0; i < n; i++)
        sum += r[i] * r[i];
    CHECK_CLOSE(sum, loss, 1e-12, loss, "sum of squared residuals vs loss");
    for (int i = 0; i < nt; i++) {
        hessfit_geometry_target t;
        HF_CALL(hessfit_objective_geometry_target(obj, i, &t));
        double d = qm[i] - mm[i];
        if (t.kind == HESSFIT_GEOMETRY_TORSION)
            d = remainder(d, 360.0);
        CHECK(fabs(r[first + i] - t.weight * d) <= 1e-9 * fmax(1.0, fabs(r[first + i])),
              "%s: target %d residual %g vs w (qm - mm) %g", label, i, r[first + i], t.weight * d);
        CHECK(t.weight == q2mm_weights[t.kind], "%s: target %d weight %g", label, i, t.weight);
    }
    free(r);
    free(qm);
    free(mm);
}

/* ---- CH3F ------------------------------------------------------------------------------------------ */

typedef test_ch3f_set ch3f_set;

/* CH3F at structure mol with the bond and angle values `what` free, moved off the start (k +10 %,
 * r0 +0.03 A, theta0 -2 deg). */
static hessfit_model *ch3f_model(ch3f_set *s, const hessfit_molecule *mol, unsigned what, double *x)
{
    hessfit_model *model;
    HF_CALL(hessfit_model_create(&s->ff.ff, mol, &s->typed, 1, NULL, &model));
    HF_CALL(hessfit_model_add_free_kind(model, HESSFIT_PARAM_BOND, what, NULL));
    HF_CALL(hessfit_model_add_free_kind(model, HESSFIT_PARAM_ANGLE, what, NULL));
    HF_CALL(hessfit_model_get_free(model, x));
    for (int i = 0; i < hessfit_model_n_free(model); i++) {
        int p, v;
        HF_CALL(hessfit_model_free_parameter(model, i, &p, &v, NULL, NULL));
        x[i] += v == 0 ? 0.1 * x[i] : s->ff.params[p].kind == HESSFIT_PARAM_BOND ? 0.03 : -2.0;
    }
    return model;
}

static hessfit_objective *geometry_objective(hessfit_model *model, const hessfit_molecule *qm, const hessfit_typed_molecule *typed,
                                        int n_mols, const int *mols, int n_sel)
{
    hessfit_objective_options none = hessfit_objective_default_options();
    none.frequencies = HESSFIT_OBJ_FREQUENCIES_NONE;
    hessfit_objective_options *opt = malloc((size_t)n_mols * sizeof *opt);
    hessfit_geometry_target *t = NULL;
    hessfit_objective *obj;
    int n = 0;
    CHECK(opt != NULL, "out of memory");
    for (int m = 0; m < n_mols; m++)
        opt[m] = none;
    HF_CALL(hessfit_objective_create(model, qm, n_mols, opt, &obj));
    for (int k = 0; k < n_sel; k++)
        HF_CALL(hessfit_objective_geometry_targets_of_terms(&typed[mols[k]], &qm[mols[k]], mols[k],
                                                       HESSFIT_OBJ_GEOMETRY_BONDS | HESSFIT_OBJ_GEOMETRY_ANGLES |
                                                           HESSFIT_OBJ_GEOMETRY_TORSIONS,
                                                       q2mm_weights, &t, &n));
    HF_CALL(hessfit_objective_set_geometry(obj, qm, n_mols, t, n));
    CHECK(hessfit_objective_n_kernel_calls(obj) == 0, "no Hessian-space target, yet %llu kernel calls",
          hessfit_objective_n_kernel_calls(obj));
    free(t);
    free(opt);
    return obj;
}

static void test_ch3f(ch3f_set *s)
{
    double x[8];
    hessfit_model *model = ch3f_model(s, &s->moved, HESSFIT_MODEL_FREE_K | HESSFIT_MODEL_FREE_X0, x);
    const int n = hessfit_model_n_free(model), only[1] = {0};
    CHECK(n == 8, "%d free values", n);
    hessfit_objective *obj = geometry_objective(model, &s->moved, &s->typed, 1, only, 1);
    CHECK(hessfit_objective_n_geometry_targets(obj) == 10, "CH3F: %d targets (4 bonds, 6 angles)",
          hessfit_objective_n_geometry_targets(obj));
    double loss, mm[10], mm_fresh[10];
    HF_CALL(hessfit_objective_evaluate(obj, x, &loss, NULL, NULL));
    hessfit_objective_geometry_stats st;
    HF_CALL(hessfit_objective_geometry_stats_get(obj, &st));
    CHECK(st.n_molecules == 1 && st.max_gradient <= 1e-9, "CH3F minimum: largest gradient component %.3g kJ/mol/nm",
          st.max_gradient);
    HF_CALL(hessfit_objective_geometry_values(obj, NULL, mm));

    /* the same minimum from scratch: a fresh model at these values */
    double x2[8];
    hessfit_model *fresh = ch3f_model(s, &s->moved, HESSFIT_MODEL_FREE_K | HESSFIT_MODEL_FREE_X0, x2);
    hessfit_objective *obj2 = geometry_objective(fresh, &s->moved, &s->typed, 1, only, 1);
    double loss2;
    HF_CALL(hessfit_objective_evaluate(obj2, x, &loss2, NULL, NULL));
    HF_CALL(hessfit_objective_geometry_values(obj2, NULL, mm_fresh));
    double worst = 0.0;
    for (int i = 0; i < 10; i++)
        worst = fmax(worst, fabs(mm[i] - mm_fresh[i]));
    CHECK(worst <= 1e-7, "CH3F: the warm-started minimum differs from a fresh one by %.3g", worst);
    hessfit_objective_destroy(obj2);
    hessfit_model_destroy(fresh);

    const objective_fd_stats fd = objective_fd_check(obj, x, n, 1e-4, 1, "CH3F bonds + angles");
    CHECK(fd.max_rel <= 1e-6, "CH3F geometry gradient error %.3g (free %d)", fd.max_rel, fd.worst);
    check_residuals(obj, "CH3F");
    printf("  CH3F: loss %.6g at the moved start, minimum's largest gradient component %.2g kJ/mol/nm, "
           "fresh vs warm-started minimum %.2g\n",
           loss, st.max_gradient, worst);
    hessfit_objective_destroy(obj);
    hessfit_model_destroy(model);
}

/* L-BFGS on r0 and theta0 (k fixed) against the C3v QM structure, which they can reproduce exactly:
 * the geometry loss falls by orders of magnitude. */
/* L-BFGS on r0 and theta0 (k fixed) against the C3v QM structure, which they can reproduce exactly:
 * the geometry loss falls by orders of magnitude. */
static void test_ch3f_fit(ch3f_set *s)
{
    double x[8];
    hessfit_model *model = ch3f_model(s, &s->mol, HESSFIT_MODEL_FREE_X0, x);
    const int n = hessfit_model_n_free(model), only[1] = {0};
    CHECK(n == 4, "%d free values", n);
    hessfit_objective *obj = geometry_objective(model, &s->mol, &s->typed, 1, only, 1);
    double before, after;
    const hessfit_opt_result result = objective_fit_lbfgs(obj, model, &s->ff.ff, x, 200, 1e-14, &before);
    HF_CALL(hessfit_objective_evaluate(obj, x, &after, NULL, NULL));
    printf("  CH3F fit of r0 and theta0 to the QM geometry: loss %.6g -> %.3g in %lld evaluations\n", before, after,
           result.evaluations);
    CHECK(after <= 1e-6 * before, "the fit lowered the geometry loss only from %g to %g", before, after);
    hessfit_objective_destroy(obj);
    hessfit_model_destroy(model);
}

/* ---- rh-enamide ------------------------------------------------------------------------------------ */

static const char *const rh_jaguar[TEST_RH_MOLECULES] = {
    "1ZDMPfromJCTCSI_loner1", "2DMPEConformation1fromJCTCSI_isomer1", "3DMPEConformation2fromJCTCSI_isomer2",
    "4RR-Me-DuPHOSpro-RfromJCTCSI_isomer3", "5RR-Me-DuPHOSpro-SfromJCTCSI_isomer4",
    "6RR-Me-BPEpro-RConformation1fromJCTCSI_isomer5", "7RR-Me-BPEpro-RConformation2fromJCTCSI_isomer6",
    "8RR-Me-BPEpro-SConformation1fromJCTCSI_isomer7", "9RR-Me-BPEpro-SConformation2fromJCTCSI_isomer8"};

static void test_rh(void)
{
    hessfit_forcefield ff;
    hessfit_molecule_list mmo;
    hessfit_typed_molecule typed[TEST_RH_MOLECULES];
    test_type_rh_enamide(&ff, &mmo, typed);
    for (int m = 0; m < TEST_RH_MOLECULES; m++) { /* the QM geometry (the .mmo's agrees to 1e-3 A) */
        char rel[256];
        hessfit_molecule q;
        snprintf(rel, sizeof rel, "examples/data/rh-enamide/jaguar/%s.01.in.gz", rh_jaguar[m]);
        HF_CALL(hessfit_jaguar_in_read(test_source_path(rel), &q));
        CHECK(q.n_atoms == mmo.items[m].n_atoms, "%s", rel);
        memcpy(mmo.items[m].coords, q.coords, 3 * sizeof(double) * (size_t)q.n_atoms);
        hessfit_molecule_free(&q);
    }
    hessfit_model *model;
    hessfit_model_options mo = hessfit_model_default_options();
    mo.nonbonded = 1;
    HF_CALL(hessfit_model_create(&ff, mmo.items, typed, TEST_RH_MOLECULES, &mo, &model));
    HF_CALL(hessfit_model_add_free_kind(model, HESSFIT_PARAM_BOND, HESSFIT_MODEL_FREE_K | HESSFIT_MODEL_FREE_X0, NULL));
    HF_CALL(hessfit_model_add_free_kind(model, HESSFIT_PARAM_ANGLE, HESSFIT_MODEL_FREE_K | HESSFIT_MODEL_FREE_X0, NULL));
    const int n = hessfit_model_n_free(model), sel[2] = {0, 1};
    double *x = calloc((size_t)n, sizeof *x), loss;
    CHECK(x != NULL, "out of memory");
    HF_CALL(hessfit_model_get_free(model, x));
    hessfit_objective *obj = geometry_objective(model, mmo.items, typed, TEST_RH_MOLECULES, sel, 2);
    const int nt = hessfit_objective_n_geometry_targets(obj);
    int count[3] = {0, 0, 0};
    for (int i = 0; i < nt; i++) {
        hessfit_geometry_target t;
        HF_CALL(hessfit_objective_geometry_target(obj, i, &t));
        count[t.kind]++;
    }
    printf("  rh-enamide structures 1 and 2: %d bonds, %d angles, %d torsions\n", count[0], count[1], count[2]);
    CHECK(count[0] > 70 && count[1] > 100 && count[2] > 100, "too few targets");

    /* without nonbonded terms the nitrile bend (mm3.fld line 414, theta0 = 180) ends exactly linear:
     * evaluated in its smooth limit there (HessianForce's linear bend), the minimum is found and the
     * gradient (angle k free) matches central differences; theta0 free there is an error naming it */
    {
        hessfit_model *bonded;
        HF_CALL(hessfit_model_create(&ff, mmo.items, typed, TEST_RH_MOLECULES, NULL, &bonded));
        HF_CALL(hessfit_model_add_free_kind(bonded, HESSFIT_PARAM_ANGLE, HESSFIT_MODEL_FREE_K, NULL));
        const int nb = hessfit_model_n_free(bonded);
        double *xb = calloc((size_t)nb, sizeof *xb), *gb = calloc((size_t)nb, sizeof *gb);
        CHECK(xb != NULL && gb != NULL, "out of memory");
        HF_CALL(hessfit_model_get_free(bonded, xb));
        hessfit_objective *lin = geometry_objective(bonded, mmo.items, typed, TEST_RH_MOLECULES, sel, 1);
        HF_CALL(hessfit_objective_evaluate(lin, xb, &loss, gb, NULL));
        hessfit_objective_geometry_stats sl;
        HF_CALL(hessfit_objective_geometry_stats_get(lin, &sl));
        CHECK(sl.max_gradient <= 1e-9, "bonded rh-enamide 1, linear nitrile: largest gradient component %.3g",
              sl.max_gradient);
        const objective_fd_stats fdl = objective_fd_check(lin, xb, nb, 1e-4, 1, "rh-enamide 1 bonded, linear nitrile, angle k");
        /* (step 1e-4: the loss, 1.4e4, has rounding ~1e-11; 1e-5 on a k of 0.065 gives FD noise ~2e-6) */
        CHECK(fdl.max_rel <= 1e-6, "bonded rh-enamide geometry gradient error %.3g (free %d)", fdl.max_rel, fdl.worst);
        printf("  rh-enamide 1 without nonbonded terms (its nitrile minimises to exactly 180 degrees): loss %.6g, "
               "largest gradient component %.2g kJ/mol/nm, %d Newton steps, gradient vs FD %.2g (%d angle k)\n",
               loss, sl.max_gradient, sl.last_newton_steps, fdl.max_rel, nb);
        hessfit_objective_destroy(lin);
        hessfit_model_destroy(bonded);
        free(xb);
        free(gb);

        HF_CALL(hessfit_model_create(&ff, mmo.items, typed, TEST_RH_MOLECULES, NULL, &bonded));
        HF_CALL(hessfit_model_add_free_kind(bonded, HESSFIT_PARAM_ANGLE, HESSFIT_MODEL_FREE_K | HESSFIT_MODEL_FREE_X0, NULL));
        const int nx = hessfit_model_n_free(bonded);
        xb = calloc((size_t)nx, sizeof *xb), gb = calloc((size_t)nx, sizeof *gb);
        CHECK(xb != NULL && gb != NULL, "out of memory");
        HF_CALL(hessfit_model_get_free(bonded, xb));
        lin = geometry_objective(bonded, mmo.items, typed, TEST_RH_MOLECULES, sel, 1);
        HF_CALL(hessfit_objective_evaluate(lin, xb, &loss, NULL, NULL)); /* the loss alone needs no theta0 derivative */
        test_expect_error(hessfit_objective_evaluate(lin, xb, &loss, gb, NULL), HESSFIT_ERROR_INVALID_ARGUMENT,
                          "cannot be a free value at an exactly linear geometry", "theta0 of angle",
                          "theta0 free at a linear minimum");
        CHECK(strstr(hessfit_last_error(), ":414 (") != NULL, "the message names the .fld line: %s", hessfit_last_error());
        hessfit_objective_destroy(lin);
        hessfit_model_destroy(bonded);
        free(xb);
        free(gb);
    }
    /* timing: cold start, then warm evaluations with and without the gradient */
    double *g = calloc((size_t)n, sizeof *g);
    CHECK(g != NULL, "out of memory");
    double t0 = test_now_s();
    HF_CALL(hessfit_objective_evaluate(obj, x, &loss, NULL, NULL));
    const double cold = test_now_s() - t0;
    hessfit_objective_geometry_stats st0, st1;
    HF_CALL(hessfit_objective_geometry_stats_get(obj, &st0));
    CHECK(st0.max_gradient <= 1e-9, "rh-enamide minima: largest gradient component %.3g", st0.max_gradient);
    const int reps = 5;
    t0 = test_now_s();
    for (int r = 0; r < reps; r++) {
        x[r % n] *= 1.0 + 1e-4; /* a new point each time, as in a fit */
        HF_CALL(hessfit_objective_evaluate(obj, x, &loss, g, NULL));
    }
    const double warm = (test_now_s() - t0) / reps;
    HF_CALL(hessfit_objective_geometry_stats_get(obj, &st1));
    printf("  rh-enamide geometry (2 structures, %d targets): cold start %.1f ms (LocalEnergyMinimizer %.1f ms); "
           "warm evaluation + gradient %.1f ms: minimiser %.2f, Newton %.2f (%.1f steps), gradient %.2f ms\n",
           nt, 1e3 * cold, 1e3 * st0.seconds_minimizer, 1e3 * warm,
           1e3 * (st1.seconds_minimizer - st0.seconds_minimizer) / reps,
           1e3 * (st1.seconds_newton - st0.seconds_newton) / reps, (double)(st1.newton_steps - st0.newton_steps) / reps,
           1e3 * (st1.seconds_gradient - st0.seconds_gradient) / reps);
    const objective_fd_stats fd = objective_fd_check(obj, x, n, 1e-5, 1, "rh-enamide 1+2 bonds, angles, torsions");
    CHECK(fd.max_rel <= 1e-6, "rh-enamide geometry gradient error %.3g (free %d)", fd.max_rel, fd.worst);
    check_residuals(obj, "rh-enamide");

    /* the model's Context keeps the QM geometry: the Hessian blocks there are unchanged by evaluations */
    const long long hs = hessfit_model_hessian_size(model);
    double *h0 = calloc((size_t)hs, sizeof *h0), *h1 = calloc((size_t)hs, sizeof *h1);
    CHECK(h0 && h1, "out of memory");
    HF_CALL(hessfit_model_hessians_all(model, h0));
    x[0] *= 1.001;
    HF_CALL(hessfit_objective_evaluate(obj, x, &loss, g, NULL));
    x[0] /= 1.001;
    HF_CALL(hessfit_objective_evaluate(obj, x, &loss, g, NULL));
    HF_CALL(hessfit_model_hessians_all(model, h1));
    CHECK(memcmp(h0, h1, (size_t)hs * sizeof *h0) == 0, "the model's Hessians changed: its positions moved");
    free(h0);
    free(h1);
    free(g);
    free(x);
    hessfit_objective_destroy(obj);
    hessfit_model_destroy(model);
    for (int m = 0; m < TEST_RH_MOLECULES; m++)
        hessfit_typed_molecule_free(&typed[m]);
    hessfit_molecule_list_free(&mmo);
    hessfit_forcefield_free(&ff);
}

/* ---- rh-enamide in the MM3* form: a minimum on a pair-switch corner ----------------------------- */

/*
 * Structure 2 in the MM3* form (hessfit fit's default for an .fld), its bonds, angles and torsions as
 * targets. Along the loss's steepest descent from the Seminario start its minimum comes to sit on
 * the van der Waals switch's corner (a pair whose TRUE distance is exactly 0.6 nm: H28...H34, both
 * reduced hydrogens, so the corner's coordinate is the distance of the switch points, not of the
 * reduced positions the pair acts on): found by stepping along -g until the geometry part holds a
 * corner; there the minimum's reduced gradient is at round-off and the analytic gradient agrees
 * with central differences of the re-minimised loss, which see the constrained minimum (the corner
 * holds for small parameter changes). (With the switch on the reduced distance, structure 9 sat on
 * a C-C pair's corner; structures 1 and 9 find H...H corners too, 9's within 1.1e-4 of the
 * differences, another corner close by.)
 */
static void test_rh_mm3_corner(void)
{
    hessfit_forcefield ff;
    hessfit_molecule_list mmo;
    hessfit_typed_molecule typed[TEST_RH_MOLECULES];
    test_type_rh_enamide(&ff, &mmo, typed);
    for (int m = 0; m < TEST_RH_MOLECULES; m++) {
        char rel[256];
        hessfit_molecule q;
        snprintf(rel, sizeof rel, "examples/data/rh-enamide/jaguar/%s.01.in.gz", rh_jaguar[m]);
        HF_CALL(hessfit_jaguar_in_read(test_source_path(rel), &q));
        memcpy(mmo.items[m].coords, q.coords, 3 * sizeof(double) * (size_t)q.n_atoms);
        hessfit_molecule_free(&q);
    }
    hessfit_model *model;
    hessfit_model_options mo = hessfit_model_default_options();
    mo.form = HESSFIT_MODEL_FORM_MM3;
    HF_CALL(hessfit_model_create(&ff, mmo.items, typed, TEST_RH_MOLECULES, &mo, &model));
    HF_CALL(hessfit_model_add_free_kind(model, HESSFIT_PARAM_BOND, HESSFIT_MODEL_FREE_K | HESSFIT_MODEL_FREE_X0, NULL));
    HF_CALL(hessfit_model_add_free_kind(model, HESSFIT_PARAM_ANGLE, HESSFIT_MODEL_FREE_K | HESSFIT_MODEL_FREE_X0, NULL));
    const int n = hessfit_model_n_free(model), sel[1] = {1};
    double *x0 = calloc((size_t)n, sizeof *x0), *x = calloc((size_t)n, sizeof *x), *g = calloc((size_t)n, sizeof *g);
    double loss, gn = 0.0;
    CHECK(x0 && x && g, "out of memory");
    HF_CALL(hessfit_model_get_free(model, x0));
    hessfit_objective *obj = geometry_objective(model, mmo.items, typed, TEST_RH_MOLECULES, sel, 1);
    HF_CALL(hessfit_objective_evaluate(obj, x0, &loss, g, NULL));
    for (int i = 0; i < n; i++)
        gn += g[i] * g[i];
    gn = sqrt(gn);
    hessfit_objective_geometry_stats st = {0};
    double t = 0.0;
    for (int k = 0; k < 40 && st.corners == 0; k++) {
        t = 2e-4 * (k + 1);
        for (int i = 0; i < n; i++)
            x[i] = x0[i] - t * g[i] / gn * fmax(fabs(x0[i]), 1.0);
        HF_CALL(hessfit_objective_evaluate(obj, x, &loss, NULL, NULL));
        HF_CALL(hessfit_objective_geometry_stats_get(obj, &st));
    }
    printf("  rh-enamide structure 2, MM3* form: %d switch corner(s) held at step %.4g along -g; reduced gradient %.3g "
           "kJ/mol/nm\n", st.corners, t, st.max_gradient);
    CHECK(st.corners > 0, "no minimum on a switch corner along -g");
    CHECK(st.max_gradient <= 1e-9, "minimum on a corner: reduced gradient %.3g", st.max_gradient);
    const objective_fd_stats fd = objective_fd_check(obj, x, n, 1e-6, 5, "rh-enamide 2 (MM3*, on a switch corner)");
    HF_CALL(hessfit_objective_geometry_stats_get(obj, &st));
    CHECK(st.corners > 0, "the corner was let go during the differences");
    CHECK(fd.max_rel <= 1e-5, "rh-enamide MM3* geometry gradient on a corner: error %.3g (free %d)", fd.max_rel, fd.worst);
    check_residuals(obj, "rh-enamide MM3*");
    free(x0);
    free(x);
    free(g);
    hessfit_objective_destroy(obj);
    hessfit_model_destroy(model);
    for (int m = 0; m < TEST_RH_MOLECULES; m++)
        hessfit_typed_molecule_free(&typed[m]);
    hessfit_molecule_list_free(&mmo);
    hessfit_forcefield_free(&ff);
}

/* ---- bad input ------------------------------------------------------------------------------------- */

static void test_bad_input(ch3f_set *s)
{
    double x[8];
    hessfit_model *model = ch3f_model(s, &s->mol, HESSFIT_MODEL_FREE_K, x);
    hessfit_objective_options none = hessfit_objective_default_options();
    none.frequencies = HESSFIT_OBJ_FREQUENCIES_NONE;
    hessfit_objective *obj;
    HF_CALL(hessfit_objective_create(model, &s->mol, 1, &none, &obj));
    hessfit_geometry_target t = {0, HESSFIT_GEOMETRY_BOND, {0, 1, -1, -1}, 100.0};
    hessfit_molecule bare = s->mol;
    bare.coords = NULL;
    bare.source = "bare.xyz";
    test_expect_error(hessfit_objective_set_geometry(obj, &bare, 1, &t, 1), HESSFIT_ERROR_INVALID_ARGUMENT,
                      "molecule 1 (bare.xyz) has no coordinates", NULL, "a target on a molecule without coordinates");
    hessfit_geometry_target *list = NULL;
    int n = 0;
    test_expect_error(hessfit_objective_geometry_targets_of_terms(&s->typed, &bare, 0, HESSFIT_OBJ_GEOMETRY_BONDS, q2mm_weights,
                                                             &list, &n),
                      HESSFIT_ERROR_INVALID_ARGUMENT, "has no coordinates", NULL, "default targets without coordinates");
    t.atoms[1] = 5;
    test_expect_error(hessfit_objective_set_geometry(obj, &s->mol, 1, &t, 1), HESSFIT_ERROR_INVALID_ARGUMENT, "atom 6 outside 1..5",
                      NULL, "an atom out of range");
    t.atoms[1] = 0;
    test_expect_error(hessfit_objective_set_geometry(obj, &s->mol, 1, &t, 1), HESSFIT_ERROR_INVALID_ARGUMENT, "repeats atom 1",
                      NULL, "a repeated atom");
    t.mol = 1;
    t.atoms[1] = 1;
    test_expect_error(hessfit_objective_set_geometry(obj, &s->mol, 1, &t, 1), HESSFIT_ERROR_INVALID_ARGUMENT,
                      "molecule 2 outside 1..1", NULL, "a molecule out of range");
    t.mol = 0;
    t.weight = -1.0;
    test_expect_error(hessfit_objective_set_geometry(obj, &s->mol, 1, &t, 1), HESSFIT_ERROR_INVALID_ARGUMENT, "weight -1", NULL,
                      "a negative weight");
    /* collinear: a torsion over three atoms on a line */
    hessfit_molecule line;
    HF_CALL(hessfit_molecule_copy(&s->mol, &line));
    for (int k = 0; k < 3; k++) {
        line.coords[3 * 1 + k] = line.coords[k] + 1.0 * (k == 0);
        line.coords[3 * 2 + k] = line.coords[k] + 2.0 * (k == 0);
    }
    hessfit_geometry_target tor = {0, HESSFIT_GEOMETRY_TORSION, {0, 1, 2, 3}, 1.0};
    test_expect_error(hessfit_objective_set_geometry(obj, &line, 1, &tor, 1), HESSFIT_ERROR_INVALID_ARGUMENT,
                      "undefined at the QM geometry", "torsion of molecule 1", "collinear torsion atoms");
    hessfit_molecule_free(&line);
    t.weight = 100.0;
    HF_CALL(hessfit_objective_set_geometry(obj, &s->mol, 1, &t, 1));
    test_expect_error(hessfit_objective_set_geometry(obj, &s->mol, 1, &t, 1), HESSFIT_ERROR_INVALID_ARGUMENT,
                      "has geometry targets already", NULL, "a second geometry part");
    free(list);
    hessfit_objective_destroy(obj);
    hessfit_model_destroy(model);
}

/* ---- the hessfit program ------------------------------------------------------------------------- */

static const char *hessfit;

/* The CH3F input (q2mm frequencies, r0 and theta0 free) followed by extra lines. */
static const char *ch3f_input(const char *name, const char *extra)
{
    static char text[8192];
    snprintf(text, sizeof text,
             "forcefield = %s\nstructures = %s\nhessian = %s\nfree = bond r0\nfree = angle theta0\n"
             "objective = frequencies-q2mm\n%s",
             test_source_path_dup("examples/data/sn2/ch3f-seminario-start.frcmod"),
             test_source_path_dup("examples/data/sn2/ch3f-optimized.xyz"),
             test_source_path_dup("examples/data/sn2/ch3f-hessian.npy"), extra);
    return test_write_text(name, text);
}

/* `hessfit check` on the input with extra lines fails with part in its message, which names the
 * input's line `line` (from 1) when line > 0. */
static void expect_check_error_at(const char *name, const char *extra, int line, const char *part)
{
    objective_expect_check_error(hessfit, ch3f_input(name, extra), name, line, part);
}

static void expect_check_error(const char *name, const char *extra, const char *part)
{
    expect_check_error_at(name, extra, 0, part);
}

static void test_program(void)
{
    char args[4096], file[4200];
    const char *out = test_temp_path("ch3f-geometry-out");
    snprintf(args, sizeof args, "fit '%s' --output '%s'", ch3f_input("ch3f-geometry.fit", "geometry = 1\n"), out);
    test_run_result r = test_run_program(hessfit, args);
    test_expect_exit(&r, 0, NULL, "hessfit fit with geometry");
    CHECK(strstr(r.out, "bond lengths (MM-minimised)") != NULL && strstr(r.out, "angles (MM-minimised)") != NULL,
          "no geometry objectives in the output: %s", r.out);
    free(r.out);
    snprintf(file, sizeof file, "%s/targets.json", out);
    char *json = test_load_file(file, NULL);
    CHECK(strstr(json, "\"kind\": \"angle\", \"atoms\": [2, 1, 3]") != NULL && strstr(json, "\"unit\": \"A\"") != NULL,
          "targets.json: %.400s", json);
    free(json);
    snprintf(file, sizeof file, "%s/report.json", out);
    json = test_load_file(file, NULL);
    CHECK(strstr(json, "\"bond lengths (MM-minimised)\"") != NULL, "report.json lacks the geometry objectives");
    free(json);
    expect_check_error("no-structure.fit", "geometry = 2\n", "there is no structure 2");
    expect_check_error("no-atom.fit", "geometry = 1 bond 1 9\n", "has no atom 9 (it has 5)");
    /* one past the last structure / atom (CH3F: 1 structure, 5 atoms), and 0, on line 7 (the first
     * line after ch3f_input's six) */
    expect_check_error_at("structure-n1.fit", "geometry = 2\n", 7, "geometry = '2': there is no structure 2 (the "
                          "training set has 1");
    expect_check_error_at("atom-n1.fit", "geometry = 1 bond 1 6\n", 7, "has no atom 6 (it has 5)");
    expect_check_error_at("atom-n1-torsion.fit", "geometry = 1 torsion 2 1 5 6\n", 7, "has no atom 6 (it has 5)");
    expect_check_error_at("structure-0.fit", "geometry = 0\n", 7, "geometry is 'all', 'N'");
    expect_check_error_at("atom-0.fit", "geometry = 1 angle 2 0 3\n", 7, "geometry = N angle takes 3 atom numbers");
    expect_check_error_at("atom-negative.fit", "geometry = 1 bond -1 2\n", 7, "geometry = N bond takes 2 atom numbers");
    expect_check_error("weight-alone.fit", "geometry-weight = bond 10\n", "geometry-weight without any geometry entry");
    expect_check_error("no-torsions.fit", "geometry = 1 torsions\n", "no such internal coordinate");
}

int main(int argc, char **argv)
{
    (void)argc;
    hessfit = test_program_path(argv[0], "hessfit");
    test_load_plugins();
    ch3f_set ch3f;
    memset(&ch3f, 0, sizeof ch3f);
    test_load_ch3f(&ch3f);
    test_ch3f(&ch3f);
    test_ch3f_fit(&ch3f);
    test_bad_input(&ch3f);
    test_free_ch3f(&ch3f);
    test_program();
    test_rh();
    test_rh_mm3_corner();
    printf("test_objective_geometry: all checks passed\n");
    return 0;
}
