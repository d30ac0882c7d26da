/*
 * The fit model's MM3* form (HESSFIT_MODEL_FORM_MM3) on the nine rh-enamide structures at their
 * Jaguar geometries, with mm3.fld (the .fld MacroModel used for the .mmo):
 *
 *  1. Energy per structure: the model (one HessianForce with MM3* terms and reduced particles, on
 *     the Reference platform) against the plain reference evaluator of the same MM3* model
 *     (hessfit_mm3_evaluate, tests/fitting/mm3/test_mm3_mmo.c checks it against every energy
 *     MacroModel printed). The same energy: the pairs with a reduced hydrogen are MM3* switched pairs
 *     whose switch sees the true distance, as MacroModel's (and the evaluator's), so model =
 *     evaluator to 1e-13 relative with nothing added. The model's total is also compared with
 *     MacroModel's printed total: within 0.12 kJ/mol (test_mm3_mmo's largest deviation, the C6-H18
 *     stretch).
 *     A constructed case with hydrogen bonds (test_hbond_case): the same comparison, and the
 *     hydrogen bonds' energy alone to 1e-12 relative.
 *  2. d(total energy)/dx for every free value of every kind the MM3* form fits (bond k and r0,
 *     the latter also through the bond-moment charges; bond moments mu, through every charge of
 *     both atoms of each pair; angle k and theta0; stretch-bend k; torsion V; out-of-plane k; vdW
 *     R* and eps through every pair's R and eps) against central differences of the model's
 *     energy; zero values freed by name too (a stretch-bend k of 0, a zero bond moment, each V1-V3
 *     of a torsion line with a zero V).
 *  3. The Hessian-element and frequency objectives' gradients against central differences, for
 *     every 7th free value and every stretch-bend k and bond moment.
 *  4. The same model on OpenCL (double precision): energies to 1e-12, the frequency objective's
 *     loss to 1e-9 and gradient to 1e-8 of Reference's (skipped without OpenCL).
 *  5. Errors: torsion phases are not free in this form; the form needs an .fld and no `nonbonded`; a
 *     bond moment on a line that fits its bond both ways (MacroModel would not charge the bond): an
 *     error naming the line when it is not 0, and freeing it an error naming the bond.
 */
#include "hessfit_mm3.h"
#include "hessfit_model.h"
#include "hessfit_objective.h"
#include "hessfit_units.h"
#include "test_util.h"

#include <string.h>

/* MacroModel's printed totals (kJ/mol), structure by structure (the .mmo's energy breakdown). */
static const double PRINTED_TOTAL[TEST_RH_MOLECULES] = {403.9263, 374.1862, 365.1741, 600.3800, 580.8061,
                                                        555.8428, 573.2705, 536.2500, 542.6508};

typedef struct {
    hessfit_forcefield ff;
    hessfit_molecule_list mmo;
    hessfit_typed_molecule typed[TEST_RH_MOLECULES];
} rh_set;

/* The .mmo structures at the Jaguar geometries, with the Jaguar Hessians. */
static void load(rh_set *s)
{
    test_type_rh_enamide(&s->ff, &s->mmo, s->typed);
    for (int m = 0; m < TEST_RH_MOLECULES; m++) {
        char path[512];
        hessfit_molecule jag;
        snprintf(path, sizeof path, "examples/data/rh-enamide/jaguar/%s.01.in.gz", test_rh_jaguar[m]);
        HF_CALL(hessfit_jaguar_in_read(test_source_path(path), &jag));
        CHECK(jag.n_atoms == s->mmo.items[m].n_atoms && jag.hessian != NULL, "structure %d: Jaguar file", m + 1);
        memcpy(s->mmo.items[m].coords, jag.coords, 3 * (size_t)jag.n_atoms * sizeof *jag.coords);
        free(s->mmo.items[m].hessian);
        s->mmo.items[m].hessian = jag.hessian;
        jag.hessian = NULL;
        hessfit_molecule_free(&jag);
    }
}

static hessfit_model *create(rh_set *s)
{
    hessfit_model_options o = hessfit_model_default_options();
    hessfit_model *model;
    o.form = HESSFIT_MODEL_FORM_MM3;
    HF_CALL(hessfit_model_create(&s->ff, s->mmo.items, s->typed, TEST_RH_MOLECULES, &o, &model));
    return model;
}

static void test_energies(rh_set *s, hessfit_model *model)
{
    double worst_plugin = 0.0, worst_printed = 0.0;
    for (int m = 0; m < TEST_RH_MOLECULES; m++) {
        hessfit_mm3_model x;
        double e_kcal;
        HF_CALL(hessfit_mm3_build(&s->mmo.items[m], &s->typed[m], &s->ff, &x));
        const double reference = hessfit_mm3_evaluate(&x, s->mmo.items[m].coords, NULL, NULL);
        HF_CALL(hessfit_model_energy(model, m, &e_kcal));
        const double e = e_kcal * HESSFIT_KCAL_TO_KJ;
        const double rel = fabs(e - reference) / fabs(reference);
        printf("  structure %d: model %.9f kJ/mol, evaluator %.9f (rel. diff %.2g), printed %.4f (diff %+.4f)\n", m + 1, e,
               reference, rel, PRINTED_TOTAL[m], e - PRINTED_TOTAL[m]);
        worst_plugin = fmax(worst_plugin, rel);
        worst_printed = fmax(worst_printed, fabs(e - PRINTED_TOTAL[m]));
        CHECK(rel <= 1e-13, "structure %d: model %.15g vs evaluator %.15g", m + 1, e, reference);
        CHECK(fabs(e - PRINTED_TOTAL[m]) <= 0.12, "structure %d: model %.4f vs MacroModel's %.4f", m + 1, e,
              PRINTED_TOTAL[m]);
        hessfit_mm3_model_free(&x);
    }
    printf("  energies: model vs evaluator %.2g relative; vs MacroModel %.4f kJ/mol at most\n", worst_plugin,
           worst_printed);
}

/*
 * The constructed case with hydrogen bonds (test_rh_hbond_case; none of the nine structures has
 * one, as MacroModel's printed 0). Per structure the model's energy with it against the evaluator's
 * (1e-13 relative) and the model's energy change against the evaluator's hydrogen-bond total
 * (1e-12 relative); at least one structure has a bond.
 */
static void test_hbond_case(rh_set *s, hessfit_model *plain)
{
    hessfit_fld_row saved, *line = test_rh_hbond_case(&s->ff, &saved);
    hessfit_model *model = create(s);
    double worst_total = 0.0, worst_hbond = 0.0;
    int n_bonds = 0;
    for (int m = 0; m < TEST_RH_MOLECULES; m++) {
        hessfit_mm3_model x;
        double totals[HESSFIT_MM3_NUM_KINDS], e_kcal, e_plain_kcal;
        HF_CALL(hessfit_mm3_build(&s->mmo.items[m], &s->typed[m], &s->ff, &x));
        const double reference = hessfit_mm3_evaluate(&x, s->mmo.items[m].coords, totals, NULL);
        HF_CALL(hessfit_model_energy(model, m, &e_kcal));
        HF_CALL(hessfit_model_energy(plain, m, &e_plain_kcal));
        const double e = e_kcal * HESSFIT_KCAL_TO_KJ, de = (e_kcal - e_plain_kcal) * HESSFIT_KCAL_TO_KJ;
        const double rel_total = fabs(e - reference) / fabs(reference);
        const double rel_hbond = x.n_hbonds_listed ? fabs(de - totals[HESSFIT_MM3_HBOND]) / fabs(totals[HESSFIT_MM3_HBOND]) : fabs(de);
        printf("  structure %d: %d hydrogen bonds of %d candidates, %.9f kJ/mol (model's change %.9f, rel. diff %.2g); "
               "total rel. diff %.2g\n",
               m + 1, x.n_hbonds_listed, x.n_hbond_candidates, totals[HESSFIT_MM3_HBOND], de, rel_hbond, rel_total);
        CHECK(rel_total <= 1e-13 && rel_hbond <= 1e-12, "structure %d: hydrogen bonds %.15g vs %.15g, total %.15g vs %.15g",
              m + 1, de, totals[HESSFIT_MM3_HBOND], e, reference);
        worst_total = fmax(worst_total, rel_total);
        worst_hbond = fmax(worst_hbond, rel_hbond);
        n_bonds += x.n_hbonds_listed;
        hessfit_mm3_model_free(&x);
    }
    CHECK(n_bonds >= 3, "the constructed case has %d hydrogen bonds", n_bonds);
    printf("  hydrogen-bond case (H1...O2): %d bonds; model vs evaluator %.2g (hydrogen-bond energy), %.2g (total)\n",
           n_bonds, worst_hbond, worst_total);
    hessfit_model_destroy(model);
    *line = saved;
}

/* Central differences of f at x along every free value i listed; f(model) -> value. */
static double fd_check(hessfit_model *model, const double *x, const double *grad, const int *which, int n_which,
                       double (*f)(hessfit_model *, void *), void *ctx, double step, double floor, const char *what)
{
    const int n = hessfit_model_n_free(model);
    double *y = malloc((size_t)n * sizeof *y), worst = 0.0;
    CHECK(y != NULL, "no memory");
    for (int w = 0; w < n_which; w++) {
        const int i = which[w];
        const double h = step * fmax(fabs(x[i]), 1.0);
        memcpy(y, x, (size_t)n * sizeof *y);
        y[i] = x[i] + h;
        HF_CALL(hessfit_model_set_free(model, y));
        const double fp = f(model, ctx);
        y[i] = x[i] - h;
        HF_CALL(hessfit_model_set_free(model, y));
        const double fm = f(model, ctx);
        const double fd = (fp - fm) / (2.0 * h);
        const double err = fabs(grad[i] - fd) / fmax(fabs(fd), floor); /* floor: for values that barely matter */
        if (err > worst)
            worst = err;
        if (err > 1e-5) {
            int p, v;
            HF_CALL(hessfit_model_free_parameter(model, i, &p, &v, NULL, NULL));
            SOFT_CHECK(0, "%s: free value %d (parameter %d value %d): analytic %.10g, FD %.10g", what, i, p, v, grad[i], fd);
        }
    }
    HF_CALL(hessfit_model_set_free(model, x));
    free(y);
    return worst;
}

static double total_energy(hessfit_model *model, void *ctx)
{
    double e;
    (void)ctx;
    HF_CALL(hessfit_model_total_energy(model, &e));
    return e;
}

static double objective_loss(hessfit_model *model, void *ctx)
{
    double loss;
    (void)model;
    HF_CALL(hessfit_objective_evaluate((hessfit_objective *)ctx, NULL, &loss, NULL, NULL));
    return loss;
}

/* Zero values the kinds leave fixed, freed by name: the stretch-bend k of line 436 (H1*C0*H1, 0),
 * the first used zero bond moment whose line orients all its bonds, and every zero V of the first
 * used torsion line with V's of 0 and not 0 (so that V1, V2 and V3 are all free there). */
static int free_zero_values(rh_set *s, hessfit_model *model)
{
    const int n0 = hessfit_model_n_free(model), sb = hessfit_forcefield_param_at_line(&s->ff, 436);
    int moment = 0, torsion = 0;
    CHECK(sb >= 0 && s->ff.params[sb].kind == HESSFIT_PARAM_STRETCH_BEND && s->ff.params[sb].values[0] == 0.0, "line 436");
    HF_CALL(hessfit_model_add_free(model, sb, 0));
    for (int p = 0; p < s->ff.n_params && !moment; p++) {
        const hessfit_ff_param *q = &s->ff.params[p];
        if (q->kind == HESSFIT_PARAM_BOND && q->values[2] == 0.0 && hessfit_model_param_uses(model, p) > 0 &&
            strcmp(q->types[0], q->types[1]) != 0 && hessfit_model_add_free(model, p, 2) == HESSFIT_SUCCESS)
            moment = q->line;
    }
    for (int p = 0; p < s->ff.n_params && !torsion; p++) {
        const hessfit_ff_param *q = &s->ff.params[p];
        const int zeros = (q->values[0] == 0.0) + (q->values[3] == 0.0) + (q->values[6] == 0.0);
        if (q->kind != HESSFIT_PARAM_TORSION || hessfit_model_param_uses(model, p) == 0 || zeros == 0 || zeros == 3)
            continue;
        for (int t = 0; t < 3; t++)
            if (q->values[3 * t] == 0.0)
                HF_CALL(hessfit_model_add_free(model, p, 3 * t));
        torsion = q->line;
    }
    CHECK(moment > 0 && torsion > 0, "no zero bond moment (%d) or torsion V (%d) to free", moment, torsion);
    printf("  zero values freed by name: stretch-bend k of line 436, bond moment of line %d, the zero V's of torsion "
           "line %d (%d values)\n",
           moment, torsion, hessfit_model_n_free(model) - n0);
    return hessfit_model_n_free(model) - n0;
}

/* Free value i is one of the values this form fits beyond bond, angle, torsion, out-of-plane and vdW
 * constants: a stretch-bend k or a bond moment. */
static int is_new_kind(const rh_set *s, hessfit_model *model, int i)
{
    int p, v;
    HF_CALL(hessfit_model_free_parameter(model, i, &p, &v, NULL, NULL));
    return s->ff.params[p].kind == HESSFIT_PARAM_STRETCH_BEND || (s->ff.params[p].kind == HESSFIT_PARAM_BOND && v == 2);
}

static void test_gradients(rh_set *s, hessfit_model *model)
{
    int n_added;
    HF_CALL(hessfit_model_add_free_kind(model, HESSFIT_PARAM_BOND, HESSFIT_MODEL_FREE_K | HESSFIT_MODEL_FREE_X0, &n_added));
    HF_CALL(hessfit_model_add_free_kind(model, HESSFIT_PARAM_ANGLE, HESSFIT_MODEL_FREE_K | HESSFIT_MODEL_FREE_X0, &n_added));
    HF_CALL(hessfit_model_add_free_kind(model, HESSFIT_PARAM_TORSION, HESSFIT_MODEL_FREE_K, &n_added));
    HF_CALL(hessfit_model_add_free_kind(model, HESSFIT_PARAM_IMPROPER, HESSFIT_MODEL_FREE_K, &n_added));
    HF_CALL(hessfit_model_add_free_kind(model, HESSFIT_PARAM_VDW, HESSFIT_MODEL_FREE_K | HESSFIT_MODEL_FREE_X0, &n_added));
    HF_CALL(hessfit_model_add_free_kind(model, HESSFIT_PARAM_BOND, HESSFIT_MODEL_FREE_MU, &n_added));
    CHECK(n_added > 0, "free kind bond mu: %d", n_added);
    HF_CALL(hessfit_model_add_free_kind(model, HESSFIT_PARAM_STRETCH_BEND, HESSFIT_MODEL_FREE_K, &n_added));
    CHECK(n_added > 0, "free kind stretch-bend k: %d", n_added);
    const int n_by_kind = hessfit_model_n_free(model), n_zero = free_zero_values(s, model);
    const int n = hessfit_model_n_free(model);
    double *x = malloc((size_t)n * sizeof *x), *g = malloc((size_t)n * sizeof *g);
    int *old = malloc((size_t)n * sizeof *old), *added = malloc((size_t)n * sizeof *added), n_old = 0, n_new = 0,
        kinds[HESSFIT_NUM_PARAM_KINDS] = {0}, n_mu = 0;
    CHECK(x && g && old && added, "no memory");
    HF_CALL(hessfit_model_get_free(model, x));
    for (int i = 0; i < n; i++) {
        int p, v;
        HF_CALL(hessfit_model_free_parameter(model, i, &p, &v, NULL, NULL));
        kinds[s->ff.params[p].kind]++;
        n_mu += s->ff.params[p].kind == HESSFIT_PARAM_BOND && v == 2;
        if (is_new_kind(s, model, i) || i >= n_by_kind)
            added[n_new++] = i;
        else
            old[n_old++] = i;
    }
    printf("  free values: %d (bond %d of them %d moments, angle %d, stretch-bend %d, torsion %d, out-of-plane %d, vdW "
           "%d; %d zero values freed by name)\n",
           n, kinds[HESSFIT_PARAM_BOND], n_mu, kinds[HESSFIT_PARAM_ANGLE], kinds[HESSFIT_PARAM_STRETCH_BEND],
           kinds[HESSFIT_PARAM_TORSION], kinds[HESSFIT_PARAM_IMPROPER], kinds[HESSFIT_PARAM_VDW], n_zero);
    CHECK(kinds[HESSFIT_PARAM_BOND] > 0 && kinds[HESSFIT_PARAM_ANGLE] > 0 && kinds[HESSFIT_PARAM_TORSION] > 0 &&
              kinds[HESSFIT_PARAM_IMPROPER] > 0 && kinds[HESSFIT_PARAM_VDW] > 0 &&
              kinds[HESSFIT_PARAM_STRETCH_BEND] > 0 && n_mu > 0,
          "every kind has free values");
    HF_CALL(hessfit_model_energy_gradient(model, g));
    const double worst_e = fd_check(model, x, g, old, n_old, total_energy, NULL, 1e-5, 1e-2, "energy gradient");
    /* The energy is linear in k_sb and V and quadratic in the moments (q linear in mu, qq bilinear),
     * so central differences are exact but for rounding: a step of 1e-3 (with 1e-5 the sum of 18000
     * terms' rounding, ~1e-10 kcal/mol, is 1e-5 of the smallest of these derivatives) */
    const double worst_new = fd_check(model, x, g, added, n_new, total_energy, NULL, 1e-3, 1e-2, "energy gradient");
    printf("  d(total energy)/dx vs central differences, worst relative error: %.2g over %d values; %.2g over the %d "
           "stretch-bend k, bond moments and zero values freed by name\n",
           worst_e, n_old, worst_new, n_new);
    CHECK(worst_e <= 1e-5 && worst_new <= 1e-5, "energy gradient: %.3g, %.3g", worst_e, worst_new);

    /* The Hessian-element objective (smooth) and the frequency objective, every 7th free value and
     * all the new ones. The frequencies' pairing follows the modes, so the loss has kinks where two
     * MM modes swap their targets: its central differences take a smaller step (1e-6 relative; with
     * 1e-5 two of them straddle a swap) and a floor of 0.1 for the gradients that are nearly 0. */
    int which[64], n_which = 0;
    for (int i = 0; i < n_old && n_which < 64; i += 7)
        which[n_which++] = old[i];
    for (int kind = 0; kind < 2; kind++) {
        hessfit_objective_options per[TEST_RH_MOLECULES];
        hessfit_objective *obj;
        double loss;
        for (int m = 0; m < TEST_RH_MOLECULES; m++) {
            per[m] = hessfit_objective_default_options();
            if (kind == 0) {
                per[m].frequencies = HESSFIT_OBJ_FREQUENCIES_NONE;
                per[m].hessian = 1;
            }
        }
        HF_CALL(hessfit_objective_create(model, s->mmo.items, TEST_RH_MOLECULES, per, &obj));
        HF_CALL(hessfit_objective_evaluate(obj, x, &loss, g, NULL));
        const char *what = kind ? "frequency objective" : "Hessian-element objective";
        const double step = kind ? 1e-6 : 1e-5, floor = kind ? 0.1 : 1e-3;
        const double worst_o = fd_check(model, x, g, which, n_which, objective_loss, obj, step, floor, what);
        const double worst_on = fd_check(model, x, g, added, n_new, objective_loss, obj, step, floor, what);
        printf("  %s %.6g; its gradient vs central differences, worst relative error: %.2g over %d values, %.2g over "
               "the %d new ones\n",
               what, loss, worst_o, n_which, worst_on, n_new);
        CHECK(worst_o <= 1e-5 && worst_on <= 1e-5, "objective gradient: %.3g, %.3g", worst_o, worst_on);
        hessfit_objective_destroy(obj);
    }
    free(x);
    free(g);
    free(old);
    free(added);
}

static void test_bad_input(rh_set *s, hessfit_model *model)
{
    for (int i = 0; i < hessfit_model_n_free(model); i++) {
        int p, v;
        HF_CALL(hessfit_model_free_parameter(model, i, &p, &v, NULL, NULL));
        if (s->ff.params[p].kind == HESSFIT_PARAM_TORSION) {
            test_expect_error(hessfit_model_add_free(model, p, v + 1), HESSFIT_ERROR_UNSUPPORTED, "phases are fixed", NULL,
                              "free torsion phase in the MM3* form");
            break;
        }
    }
    hessfit_model_options o = hessfit_model_default_options();
    hessfit_model *other;
    o.form = HESSFIT_MODEL_FORM_MM3;
    o.nonbonded = 1;
    test_expect_error(hessfit_model_create(&s->ff, s->mmo.items, s->typed, TEST_RH_MOLECULES, &o, &other),
                      HESSFIT_ERROR_INVALID_ARGUMENT, "own van der Waals", NULL, "MM3* form with nonbonded");
    o.nonbonded = 0;
    s->ff.format = HESSFIT_FF_FRCMOD;
    test_expect_error(hessfit_model_create(&s->ff, s->mmo.items, s->typed, TEST_RH_MOLECULES, &o, &other),
                      HESSFIT_ERROR_INVALID_ARGUMENT, "needs an MM3* .fld", NULL, "MM3* form of a frcmod");
    s->ff.format = HESSFIT_FF_MM3_FLD;

    /* A bond moment on a line whose two types are the same: the line cannot say which atom is +, so
     * MacroModel would not charge the bond. A moment of 0 there builds (no charges), freeing it is
     * an error naming the bond; a non-zero one is an error naming the line. */
    int same = -1;
    for (int p = 0; p < s->ff.n_params && same < 0; p++) {
        const hessfit_ff_param *q = &s->ff.params[p];
        if (q->kind == HESSFIT_PARAM_BOND && q->substructure < 0 && q->values[2] == 0.0 &&
            strcmp(q->types[0], q->types[1]) == 0 && hessfit_model_param_uses(model, p) > 0)
            same = p;
    }
    CHECK(same >= 0, "no used stretch line with two equal types");
    char line[32];
    snprintf(line, sizeof line, ":%d (bond", s->ff.params[same].line);
    test_expect_error(hessfit_model_add_free(model, same, 2), HESSFIT_ERROR_INVALID_ARGUMENT, line,
                      "MacroModel would not charge that bond", "free a bond moment on a line of two equal types");
    s->ff.params[same].values[2] = 0.5;
    snprintf(line, sizeof line, ":%d: bond moment 0.5", s->ff.params[same].line);
    test_expect_error(hessfit_model_create(&s->ff, s->mmo.items, s->typed, TEST_RH_MOLECULES, &o, &other),
                      HESSFIT_ERROR_INVALID_ARGUMENT, line, "direction is undetermined",
                      "a bond moment on a line of two equal types");
    s->ff.params[same].values[2] = 0.0;
    /* the harmonic form has no charges from bond moments */
    o.form = HESSFIT_MODEL_FORM_HARMONIC;
    HF_CALL(hessfit_model_create(&s->ff, s->mmo.items, s->typed, TEST_RH_MOLECULES, &o, &other));
    test_expect_error(hessfit_model_add_free(other, same, 2),
                      HESSFIT_ERROR_INVALID_ARGUMENT, "free only in the MM3* form", NULL, "a bond moment in the harmonic form");
    hessfit_model_destroy(other);
}

/* The same model on OpenCL (double precision, PoCL here): energies, and the frequency objective's
 * loss and gradient, against Reference's. Skipped where OpenMM has no OpenCL platform. */
static void test_opencl(rh_set *s, hessfit_model *reference)
{
    if (OpenMM_Platform_getPlatformByName("OpenCL") == NULL) {
        printf("  OpenCL: no such platform here, skipped\n");
        return;
    }
    hessfit_model_options o = hessfit_model_default_options();
    hessfit_model *gpu;
    o.form = HESSFIT_MODEL_FORM_MM3;
    o.platform = "OpenCL";
    o.precision = "double";
    HF_CALL(hessfit_model_create(&s->ff, s->mmo.items, s->typed, TEST_RH_MOLECULES, &o, &gpu));
    double worst_e = 0.0;
    for (int m = 0; m < TEST_RH_MOLECULES; m++) {
        double a, b;
        HF_CALL(hessfit_model_energy(reference, m, &a));
        HF_CALL(hessfit_model_energy(gpu, m, &b));
        worst_e = fmax(worst_e, fabs(a - b) / fabs(a));
    }
    const int n = hessfit_model_n_free(reference);
    double *x = malloc((size_t)n * sizeof *x), *ga = malloc((size_t)n * sizeof *ga), *gb = malloc((size_t)n * sizeof *gb);
    CHECK(x && ga && gb, "no memory");
    HF_CALL(hessfit_model_get_free(reference, x));
    for (int i = 0; i < n; i++) { /* the same free values, in the same order */
        int p, v;
        HF_CALL(hessfit_model_free_parameter(reference, i, &p, &v, NULL, NULL));
        HF_CALL(hessfit_model_add_free(gpu, p, v));
    }
    hessfit_objective *oa, *ob;
    double la, lb, gscale = 0.0, gerr = 0.0;
    HF_CALL(hessfit_objective_create(reference, s->mmo.items, TEST_RH_MOLECULES, NULL, &oa));
    HF_CALL(hessfit_objective_evaluate(oa, x, &la, ga, NULL));
    hessfit_objective_destroy(oa);
    HF_CALL(hessfit_objective_create(gpu, s->mmo.items, TEST_RH_MOLECULES, NULL, &ob));
    HF_CALL(hessfit_objective_evaluate(ob, x, &lb, gb, NULL));
    hessfit_objective_destroy(ob);
    for (int i = 0; i < n; i++) {
        gscale = fmax(gscale, fabs(ga[i]));
        gerr = fmax(gerr, fabs(ga[i] - gb[i]));
    }
    printf("  OpenCL (double) vs Reference: energies %.2g relative, frequency loss %.17g vs %.17g, gradient %.2g of "
           "its largest component\n",
           worst_e, lb, la, gerr / gscale);
    CHECK(worst_e <= 1e-12, "OpenCL energies differ by %.3g", worst_e);
    CHECK(fabs(la - lb) <= 1e-9 * la, "OpenCL loss %.17g vs %.17g", lb, la);
    CHECK(gerr <= 1e-8 * gscale, "OpenCL gradient differs by %.3g of %.3g", gerr, gscale);
    free(x);
    free(ga);
    free(gb);
    hessfit_model_destroy(gpu);
}

int main(void)
{
    rh_set s;
    test_load_plugins();
    load(&s);
    hessfit_model *model = create(&s);
    printf("MM3* form: %d terms, %d slots\n", hessfit_model_n_terms(model), hessfit_model_n_slots(model));
    test_energies(&s, model);
    test_hbond_case(&s, model);
    test_gradients(&s, model);
    test_opencl(&s, model);
    test_bad_input(&s, model);
    hessfit_model_destroy(model);
    for (int m = 0; m < TEST_RH_MOLECULES; m++)
        hessfit_typed_molecule_free(&s.typed[m]);
    hessfit_molecule_list_free(&s.mmo);
    hessfit_forcefield_free(&s.ff);
    return test_soft_finish("test_model_mm3");
}
