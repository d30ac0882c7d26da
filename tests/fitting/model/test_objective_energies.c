/*
 * test_objective_energies: relative conformer energies of a fit model (fitting/model/
 * hessfit_objective.h) on the rh-enamide structures with their Jaguar energies.
 *
 * Groups (isomers of one molecule): {2, 3} (DMPE, two conformations), {4, 5} (Me-DuPHOS pro-R /
 * pro-S), {6, 7, 8, 9} (Me-BPE pro-R / pro-S, two conformations each); structure 1 has no partner.
 * Energies: the last SCF energy of each Jaguar .out (B3LYP/LACVP**), whose geometry is the .in's.
 *
 *   - QM relative energies (kcal/mol) against the .out energies by hand; each group's reference
 *     is its lowest QM energy (q2mm's zero) with residual 0;
 *   - MM relative energies against hessfit_model_energy (one single-molecule Context per structure: an
 *     independent route), 1e-10;
 *   - sum r^2 = loss; the residuals follow the Hessian-space part's (overlap frequencies here);
 *   - the gradient against central differences (<= 1e-6 relative): bonded model with every bond and
 *     angle k, r0, theta0 and torsion k free (mm3.fld); nonbonded model (LJ + charges) with the
 *     vdw R* and eps free too;
 *   - a fit (L-BFGS in q2mm's boxes) lowers the energy loss;
 *   - per-evaluation cost printed (energies alone, with gradient);
 *   - bad input: a group of one, a molecule twice, different atoms in one group, a non-finite QM
 *     energy, a negative weight, a molecule out of range, a second energy part.
 *   - `hessfit` with energy entries: `hessfit fit` on rh-enamide (energies and frequencies) lowers
 *     the energy loss and writes targets.txt / targets.json; `hessfit check` fails before any work
 *     (nothing on stdout) on a file without an energy, a structure without its own energy, an
 *     unknown group in energy-weight, a group of one, a structure that does not exist, an energy
 *     file of another structure.
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

#define RH TEST_RH_MOLECULES
static const char *const rh_jaguar[RH] = {
    "1ZDMPfromJCTCSI_loner1", "2DMPEConformation1fromJCTCSI_isomer1", "3DMPEConformation2fromJCTCSI_isomer2",
    "4RR-Me-DuPHOSpro-RfromJCTCSI_isomer3", "5RR-Me-DuPHOSpro-SfromJCTCSI_isomer4",
    "6RR-Me-BPEpro-RConformation1fromJCTCSI_isomer5", "7RR-Me-BPEpro-RConformation2fromJCTCSI_isomer6",
    "8RR-Me-BPEpro-SConformation1fromJCTCSI_isomer7", "9RR-Me-BPEpro-SConformation2fromJCTCSI_isomer8"};
/* structures 2..9 (0-based 1..8) and their groups */
#define N_E 8
static const int e_mol[N_E] = {1, 2, 3, 4, 5, 6, 7, 8};
static const int e_group[N_E] = {0, 0, 1, 1, 2, 2, 2, 2};

typedef struct {
    hessfit_forcefield ff;
    hessfit_molecule_list mmo; /* at the QM geometry, with Hessians, as the model's molecules */
    hessfit_typed_molecule typed[RH];
    double energy[RH];    /* Hartree */
} rh_set;

static void load_rh(rh_set *s)
{
    test_type_rh_enamide(&s->ff, &s->mmo, s->typed);
    for (int m = 0; m < RH; m++) {
        char rel[256];
        hessfit_molecule in, out;
        snprintf(rel, sizeof rel, "examples/data/rh-enamide/jaguar/%s.01.in.gz", rh_jaguar[m]);
        HF_CALL(hessfit_jaguar_in_read(test_source_path(rel), &in));
        snprintf(rel, sizeof rel, "examples/data/rh-enamide/jaguar/%s.out.gz", rh_jaguar[m]);
        HF_CALL(hessfit_jaguar_out_read(test_source_path(rel), &out));
        CHECK(out.has_energy && isfinite(out.energy) && out.energy < -1000.0, "%s: energy %g", rel, out.energy);
        CHECK(in.n_atoms == out.n_atoms && in.n_atoms == s->mmo.items[m].n_atoms, "%s: atoms", rel);
        double worst = 0.0;
        for (int i = 0; i < 3 * in.n_atoms; i++)
            worst = fmax(worst, fabs(in.coords[i] - out.coords[i]));
        CHECK(worst <= 1e-4, "%s: the .out geometry is %g A from the .in's", rel, worst);
        s->energy[m] = out.energy;
        hessfit_molecule *mol = &s->mmo.items[m];
        memcpy(mol->coords, in.coords, 3 * sizeof(double) * (size_t)in.n_atoms);
        free(mol->hessian);
        mol->hessian = in.hessian;
        in.hessian = NULL;
        hessfit_molecule_free(&in);
        hessfit_molecule_free(&out);
    }
}

static void free_rh(rh_set *s)
{
    for (int m = 0; m < RH; m++)
        hessfit_typed_molecule_free(&s->typed[m]);
    hessfit_molecule_list_free(&s->mmo);
    hessfit_forcefield_free(&s->ff);
}

static void targets(const rh_set *s, hessfit_energy_target *t)
{
    for (int i = 0; i < N_E; i++) {
        t[i].mol = e_mol[i];
        t[i].group = e_group[i];
        t[i].qm_hartree = s->energy[e_mol[i]];
        t[i].weight = HESSFIT_OBJ_ENERGY_WEIGHT;
    }
}

static hessfit_model *rh_model(rh_set *s, int nonbonded)
{
    hessfit_model *model;
    hessfit_model_options mo = hessfit_model_default_options();
    mo.nonbonded = nonbonded;
    HF_CALL(hessfit_model_create(&s->ff, s->mmo.items, s->typed, RH, &mo, &model));
    HF_CALL(hessfit_model_add_free_kind(model, HESSFIT_PARAM_BOND, HESSFIT_MODEL_FREE_K | HESSFIT_MODEL_FREE_X0, NULL));
    HF_CALL(hessfit_model_add_free_kind(model, HESSFIT_PARAM_ANGLE, HESSFIT_MODEL_FREE_K | HESSFIT_MODEL_FREE_X0, NULL));
    HF_CALL(hessfit_model_add_free_kind(model, HESSFIT_PARAM_TORSION, HESSFIT_MODEL_FREE_K, NULL));
    if (nonbonded)
        HF_CALL(hessfit_model_add_free_kind(model, HESSFIT_PARAM_VDW, HESSFIT_MODEL_FREE_K | HESSFIT_MODEL_FREE_X0, NULL));
    return model;
}

/* Objective: overlap frequencies of structures 1 and 2 (so that the energies' residuals follow
 * the kernel's), the energies of structures 2..9. */
static hessfit_objective *energy_objective(rh_set *s, hessfit_model *model, int with_frequencies)
{
    hessfit_objective_options opt[RH];
    hessfit_energy_target t[N_E];
    hessfit_objective *obj;
    for (int m = 0; m < RH; m++) {
        opt[m] = hessfit_objective_default_options();
        if (!with_frequencies || m > 1)
            opt[m].frequencies = HESSFIT_OBJ_FREQUENCIES_NONE;
    }
    HF_CALL(hessfit_objective_create(model, s->mmo.items, RH, opt, &obj));
    targets(s, t);
    HF_CALL(hessfit_objective_set_energies(obj, t, N_E));
    return obj;
}

static void test_values(rh_set *s)
{
    hessfit_model *model = rh_model(s, 0);
    hessfit_objective *obj = energy_objective(s, model, 1);
    const long long n_res = hessfit_objective_n_residuals(obj);
    long long first, count, kfirst, kcount;
    HF_CALL(hessfit_objective_part_range(obj, HESSFIT_OBJ_PART_ENERGIES, &first, &count));
    HF_CALL(hessfit_objective_part_range(obj, HESSFIT_OBJ_PART_HESSIAN, &kfirst, &kcount));
    CHECK(kfirst == 0 && kcount == (3 * 36 - 6) + (3 * 38 - 6) && first == kcount && count == N_E &&
              n_res == kcount + N_E,
          "residual layout: kernel %lld, energies %lld+%lld of %lld", kcount, first, count, n_res);
    double *r = calloc((size_t)n_res, sizeof *r), loss, sum = 0.0, qm[N_E], mm[N_E];
    CHECK(r != NULL, "out of memory");
    HF_CALL(hessfit_objective_evaluate(obj, NULL, &loss, NULL, r));
    for (long long i = 0; i < n_res; i++)
        sum += r[i] * r[i];
    CHECK_CLOSE(sum, loss, 1e-12, loss, "sum of squared residuals vs loss");
    HF_CALL(hessfit_objective_energy_values(obj, qm, mm));
    /* the references: the lowest QM energy of each group */
    int ref[3] = {-1, -1, -1};
    for (int i = 0; i < N_E; i++)
        if (ref[e_group[i]] < 0 || s->energy[e_mol[i]] < s->energy[e_mol[ref[e_group[i]]]])
            ref[e_group[i]] = i;
    double mm_kcal[RH];
    for (int m = 1; m < RH; m++)
        HF_CALL(hessfit_model_energy(model, m, &mm_kcal[m]));
    printf("  structure  group  QM E (Hartree)      QM dE (kcal/mol)  MM dE (kcal/mol)  residual\n");
    for (int i = 0; i < N_E; i++) {
        const int g = e_group[i], m = e_mol[i], rm = e_mol[ref[g]];
        const double qm_expected = (s->energy[m] - s->energy[rm]) * HESSFIT_HARTREE_TO_KCAL_PER_MOL;
        const double mm_expected = mm_kcal[m] - mm_kcal[rm];
        printf("  %9d  %5d  %.8f  %16.4f  %16.4f  %8.4f%s\n", m + 1, g, s->energy[m], qm[i], mm[i], r[first + i],
               i == ref[g] ? "  (reference)" : "");
        CHECK(fabs(qm[i] - qm_expected) <= 1e-9, "structure %d: QM dE %.12g vs %.12g", m + 1, qm[i], qm_expected);
        CHECK(fabs(mm[i] - mm_expected) <= 1e-10 * fmax(1.0, fabs(mm_kcal[m])), "structure %d: MM dE %.12g vs %.12g "
              "from single-molecule Contexts", m + 1, mm[i], mm_expected);
        CHECK(fabs(r[first + i] - HESSFIT_OBJ_ENERGY_WEIGHT * (qm_expected - mm_expected)) <= 1e-8 * fmax(1.0, fabs(r[first + i])),
              "structure %d: residual %g", m + 1, r[first + i]);
        CHECK(i != ref[g] || (qm[i] == 0.0 && mm[i] == 0.0 && r[first + i] == 0.0), "the reference of group %d", g);
        CHECK(i == ref[g] || qm[i] > 0.0, "structure %d: QM dE %g is not above its reference's", m + 1, qm[i]);
    }
    CHECK(hessfit_objective_n_kernel_calls(obj) == 2, "%llu kernel calls", hessfit_objective_n_kernel_calls(obj));
    free(r);
    hessfit_objective_destroy(obj);
    hessfit_model_destroy(model);
}

static void test_gradients(rh_set *s)
{
    for (int nonbonded = 0; nonbonded <= 1; nonbonded++) {
        hessfit_model *model = rh_model(s, nonbonded);
        hessfit_objective *obj = energy_objective(s, model, 0);
        const int n = hessfit_model_n_free(model);
        double *x = calloc((size_t)n, sizeof *x), *g = calloc((size_t)n, sizeof *g), loss;
        CHECK(x && g, "out of memory");
        HF_CALL(hessfit_model_get_free(model, x));
        char label[96];
        snprintf(label, sizeof label, "rh-enamide energies, %s", nonbonded ? "nonbonded, vdw free" : "bonded");
        const objective_fd_stats fd = objective_fd_check(obj, x, n, 1e-4, 1, label);
        CHECK(fd.max_rel <= 1e-6, "%s: gradient error %.3g (free %d)", label, fd.max_rel, fd.worst);
        /* cost per evaluation */
        const int reps = 50;
        double t0 = test_now_s();
        for (int k = 0; k < reps; k++)
            HF_CALL(hessfit_objective_evaluate(obj, x, &loss, NULL, NULL));
        const double alone = (test_now_s() - t0) / reps;
        t0 = test_now_s();
        for (int k = 0; k < reps; k++)
            HF_CALL(hessfit_objective_evaluate(obj, x, &loss, g, NULL));
        const double with_grad = (test_now_s() - t0) / reps;
        printf("    %d free values; per evaluation: loss %.3f ms, loss + gradient %.3f ms\n", n, 1e3 * alone,
               1e3 * with_grad);
        free(x);
        free(g);
        hessfit_objective_destroy(obj);
        hessfit_model_destroy(model);
    }
}

static void test_fit(rh_set *s)
{
    hessfit_model *model = rh_model(s, 0);
    hessfit_objective *obj = energy_objective(s, model, 0);
    const int n = hessfit_model_n_free(model);
    double *x = calloc((size_t)n, sizeof *x), before, after;
    CHECK(x != NULL, "out of memory");
    HF_CALL(hessfit_model_get_free(model, x));
    const hessfit_opt_result result = objective_fit_lbfgs(obj, model, &s->ff, x, 100, 0.0, &before);
    HF_CALL(hessfit_objective_evaluate(obj, x, &after, NULL, NULL));
    double rms_before = sqrt(before / (N_E - 3)) / HESSFIT_OBJ_ENERGY_WEIGHT, rms_after = sqrt(after / (N_E - 3)) /
                                                                                       HESSFIT_OBJ_ENERGY_WEIGHT;
    printf("  fit of %d values to the relative energies: loss %.6g -> %.6g in %lld evaluations (RMS dE error %.3f -> "
           "%.4f kcal/mol)\n",
           n, before, after, result.evaluations, rms_before, rms_after);
    CHECK(after <= 1e-3 * before, "the fit lowered the energy loss only from %g to %g", before, after);
    free(x);
    hessfit_objective_destroy(obj);
    hessfit_model_destroy(model);
}

static void test_bad_input(rh_set *s)
{
    hessfit_model *model = rh_model(s, 0);
    hessfit_objective_options none[RH];
    for (int m = 0; m < RH; m++) {
        none[m] = hessfit_objective_default_options();
        none[m].frequencies = HESSFIT_OBJ_FREQUENCIES_NONE;
    }
    hessfit_objective *obj;
    HF_CALL(hessfit_objective_create(model, s->mmo.items, RH, none, &obj));
    hessfit_energy_target t[N_E], bad[N_E];
    targets(s, t);
    memcpy(bad, t, sizeof t);
    bad[0].group = 7; /* structure 2 alone in group 7 */
    test_expect_error(hessfit_objective_set_energies(obj, bad, N_E), HESSFIT_ERROR_INVALID_ARGUMENT,
                      "group 7 has no other structure", "molecule 2", "a group of one");
    memcpy(bad, t, sizeof t);
    bad[1].mol = 1;
    test_expect_error(hessfit_objective_set_energies(obj, bad, N_E), HESSFIT_ERROR_INVALID_ARGUMENT,
                      "molecule 2 already has an energy (target 1)", NULL, "a molecule twice");
    memcpy(bad, t, sizeof t);
    bad[2].group = 0; /* structure 4 (62 atoms) with structures 2 and 3 (38 atoms) */
    test_expect_error(hessfit_objective_set_energies(obj, bad, N_E), HESSFIT_ERROR_INVALID_ARGUMENT, "do not have the same atoms",
                      "group 0", "different molecules in one group");
    memcpy(bad, t, sizeof t);
    bad[3].qm_hartree = NAN;
    test_expect_error(hessfit_objective_set_energies(obj, bad, N_E), HESSFIT_ERROR_NONFINITE, "the QM energy is nan",
                      "molecule 5", "a missing (NaN) energy");
    memcpy(bad, t, sizeof t);
    bad[4].weight = -1.0;
    test_expect_error(hessfit_objective_set_energies(obj, bad, N_E), HESSFIT_ERROR_INVALID_ARGUMENT, "weight -1", NULL,
                      "a negative weight");
    memcpy(bad, t, sizeof t);
    bad[5].mol = RH;
    test_expect_error(hessfit_objective_set_energies(obj, bad, N_E), HESSFIT_ERROR_INVALID_ARGUMENT, "molecule 10 outside 1..9",
                      NULL, "a molecule out of range");
    HF_CALL(hessfit_objective_set_energies(obj, t, N_E));
    test_expect_error(hessfit_objective_set_energies(obj, t, N_E), HESSFIT_ERROR_INVALID_ARGUMENT, "has energies already", NULL,
                      "a second energy part");
    hessfit_objective_destroy(obj);
    hessfit_model_destroy(model);
}

/* ---- the hessfit program ------------------------------------------------------------------------- */

static const char *hessfit;

/* The rh-enamide input up to its objective: force field, structures, Hessians, no-term lines, free. */
static void rh_input(char *text, size_t size)
{
    int n = snprintf(text, size, "forcefield = %s\nstructures = %s\n",
                     test_source_path("examples/data/rh-enamide/ff/rh_hyd_enamide_seminario.fld"),
                     test_source_path("examples/data/rh-enamide/rh_enamide_training_set.mmo.gz"));
    for (int m = 0; m < RH; m++) {
        char rel[256];
        snprintf(rel, sizeof rel, "examples/data/rh-enamide/jaguar/%s.01.in.gz", rh_jaguar[m]);
        n += snprintf(text + n, size - (size_t)n, "hessian = %s\n", test_source_path(rel));
    }
    snprintf(text + n, size - (size_t)n,
             "no-term = torsion * RH * *\nno-term = torsion RH * * *\nno-term = torsion * * C1 N1\n"
             "no-term = torsion N2 C2 C2 H1\nno-term = torsion C1 C2 C2 H1\nno-term = torsion C3 P3 C2 H1\n"
             "no-term = torsion C3 P3 C2 C2\nfree = bond k\nfree = bond r0\nfree = angle k\nfree = angle theta0\n");
}

/* "energy = GROUP N FILE" for structure m (0-based) with its Jaguar .out (or suffix). */
static int energy_line(char *text, size_t size, const char *group, int m, const char *suffix)
{
    char rel[256];
    snprintf(rel, sizeof rel, "examples/data/rh-enamide/jaguar/%s%s", rh_jaguar[m], suffix);
    return snprintf(text, size, "energy = %s %d %s\n", group, m + 1, test_source_path(rel));
}

/* `hessfit check` on the input with extra lines fails with part in its message, which names the
 * input's line `line` (from 1) when line > 0. */
static void expect_check_error_at(const char *name, const char *extra, int line, const char *part)
{
    static char text[16384];
    rh_input(text, sizeof text);
    strncat(text, extra, sizeof text - strlen(text) - 1);
    objective_expect_check_error(hessfit, test_write_text(name, text), name, line, part);
}

static void expect_check_error(const char *name, const char *extra, const char *part)
{
    expect_check_error_at(name, extra, 0, part);
}

static void test_program(void)
{
    static char text[16384], extra[8192];
    int n = 0;
    for (int i = 0; i < N_E; i++)
        n += energy_line(extra + n, sizeof extra - (size_t)n, e_group[i] == 0 ? "dmpe" : e_group[i] == 1 ? "duphos" : "bpe",
                         e_mol[i], ".out.gz");
    rh_input(text, sizeof text);
    strncat(text, extra, sizeof text - strlen(text) - 1);
    strncat(text, "objective = frequencies\nmax-evaluations = 40\n", sizeof text - strlen(text) - 1);
    const char *path = test_write_text("rh-energies.fit", text);
    char args[4096];
    const char *out = test_temp_path("rh-energies-out");
    snprintf(args, sizeof args, "fit '%s' --output '%s'", path, out);
    test_run_result r = test_run_program(hessfit, args);
    test_expect_exit(&r, 0, NULL, "hessfit fit with energies");
    const char *line = strstr(r.out, "relative energies");
    CHECK(line != NULL, "no energy objective in the output: %s", r.out);
    double before, after;
    const char *loss = strstr(line, "loss ");
    CHECK(loss != NULL && sscanf(loss, "loss %lf -> %lf", &before, &after) == 2, "no losses: %.200s", line);
    printf("  hessfit fit (frequencies + energies, 40 evaluations): energy loss %.6g -> %.6g (%.2f s)\n", before, after,
           r.seconds);
    CHECK(after < 1e-2 * before, "the fit lowered the energy loss only from %g to %g", before, after);
    free(r.out);
    char file[4200];
    snprintf(file, sizeof file, "%s/targets.json", out);
    char *json = test_load_file(file, NULL);
    CHECK(strstr(json, "\"energies\": [") != NULL && strstr(json, "\"group\": \"bpe\"") != NULL &&
              strstr(json, "\"reference\": true") != NULL,
          "targets.json: %.300s", json);
    free(json);
    snprintf(file, sizeof file, "%s/targets.txt", out);
    char *txt = test_load_file(file, NULL);
    CHECK(strstr(txt, "(reference)") != NULL && strstr(txt, "duphos") != NULL, "targets.txt: %.300s", txt);
    free(txt);

    /* bad input: errors before any work */
    energy_line(extra, sizeof extra, "g", 1, ".01.in.gz");
    expect_check_error("no-energy.fit", extra, "holds no QM energy");
    expect_check_error("no-own-energy.fit", "energy = g 2\n", "has no QM energy of its own");
    n = energy_line(extra, sizeof extra, "dmpe", 1, ".out.gz");
    n += energy_line(extra + n, sizeof extra - (size_t)n, "dmpe", 2, ".out.gz");
    snprintf(extra + n, sizeof extra - (size_t)n, "energy-weight = bpe 10\n");
    expect_check_error("unknown-group.fit", extra, "energy-weight: unknown group 'bpe'");
    n = energy_line(extra, sizeof extra, "dmpe", 1, ".out.gz");
    energy_line(extra + n, sizeof extra - (size_t)n, "bpe", 5, ".out.gz");
    expect_check_error("group-of-one.fit", extra, "group 'dmpe' has only structure 2");
    n = energy_line(extra, sizeof extra, "g", 1, ".out.gz");
    energy_line(extra + n, sizeof extra - (size_t)n, "g", 1, ".out.gz");
    extra[n + strlen("energy = g ")] = '3'; /* structure 3 with structure 2's file (both 38 atoms) */
    expect_check_error("other-structure.fit", extra, "not the geometry of that structure");
    expect_check_error("no-structure.fit", "energy = g 12\n", "there is no structure 12");
    /* one past the last structure (9) and 0, on line 23 (the first after rh_input's 22) */
    expect_check_error_at("structure-n1.fit", "energy = g 10\n", 23, "energy = 'g 10': there is no structure 10 (the "
                          "training set has 9");
    expect_check_error_at("structure-0.fit", "energy = g 0\n", 23, "energy is 'GROUP STRUCTURE [FILE]'");
}

int main(int argc, char **argv)
{
    (void)argc;
    hessfit = test_program_path(argv[0], "hessfit");
    test_load_plugins();
    rh_set s;
    memset(&s, 0, sizeof s);
    load_rh(&s);
    test_values(&s);
    test_gradients(&s);
    test_fit(&s);
    test_bad_input(&s);
    free_rh(&s);
    test_program();
    printf("test_objective_energies: all checks passed\n");
    return 0;
}
