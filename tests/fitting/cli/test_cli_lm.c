/*
 * `hessfit fit` with its default optimiser, LM (an input without an `optimizer` line), on CH3F's
 * eight values and q2mm's frequency objective (examples/ch3f.fit without its `optimizer = lbfgs`):
 *   - the run names LM, and reaches the neighbourhood of the objective's minima near 4e-9 within 20
 *     evaluations (0.2214 -> 4.09e-9 in 5 here; L-BFGS needs 56 for 4.0013e-9, another of them);
 *   - max-evaluations 3 stops it there with its checkpoint (an LM checkpoint: lm_lambda), and
 *     --resume continues from that point and count: the first evaluation of the resumed run is the
 *     checkpoint's point (its loss bit for bit), and it goes on lower;
 *   - `optimizer = lbfgs` still means L-BFGS.
 */
#define _POSIX_C_SOURCE 200809L
#include "test_util.h"

#include "golden_json.h"

#include <stdlib.h>
#include <string.h>

static const char *hessfit;

static const char *write_input(const char *name, const char *extra)
{
    char text[4096];
    snprintf(text, sizeof text,
             "forcefield = %s\nstructures = %s\nhessian = %s\nfree = bond k\nfree = bond r0\nfree = angle k\n"
             "free = angle theta0\nobjective = frequencies-q2mm\nftol = 1e-12\n%s",
             test_source_path_dup("examples/data/sn2/ch3f-seminario-start.frcmod"),
             test_source_path_dup("examples/data/sn2/ch3f-optimized.xyz"),
             test_source_path_dup("examples/data/sn2/ch3f-hessian.npy"), extra);
    return test_write_text(name, text);
}

/* Runs hessfit fit INPUT --output DIR [more] and returns report.json (exit 0 required). */
static gj_value *fit(const char *input, const char *dir, const char *more, char **out)
{
    char args[4096], path[1200];
    snprintf(args, sizeof args, "fit '%s' --output '%s' %s", input, dir, more);
    test_run_result r = test_run_program(hessfit, args);
    test_expect_exit(&r, 0, NULL, args);
    *out = r.out;
    snprintf(path, sizeof path, "%s/report.json", dir);
    return gj_read_file(path);
}

static double loss_after(const gj_value *rep)
{
    return gj_number(&gj_array(rep, "objectives")->items[0], "loss_after");
}

int main(int argc, char **argv)
{
    (void)argc;
    hessfit = test_program_path(argv[0], "hessfit");
    char *out, path[1200];

    /* the default: LM, 20 evaluations */
    const char *input = write_input("ch3f-default.fit", "max-evaluations = 20\n");
    gj_value *rep = fit(input, test_temp_path("ch3f-default"), "", &out);
    CHECK(strstr(out, "optimizer LM;") != NULL && strcmp(gj_string(rep, "optimizer"), "LM") == 0, "not LM: %s", out);
    const double l20 = loss_after(rep);
    printf("CH3F, default optimizer (LM): 0.2214454151 -> %.10g in %.0f evaluations\n", l20,
           gj_number(rep, "evaluations"));
    CHECK(gj_number(rep, "evaluations") <= 20 && l20 < 4.1e-9, "LM: %.10g after %.0f evaluations", l20,
          gj_number(rep, "evaluations"));
    gj_free(rep);
    free(out);

    /* cut at 3 evaluations, then --resume */
    const char *dir = test_temp_path("ch3f-lm-resume");
    input = write_input("ch3f-cut.fit", "max-evaluations = 3\n");
    rep = fit(input, dir, "", &out);
    gj_free(rep);
    free(out);
    snprintf(path, sizeof path, "%s/checkpoint.txt", dir);
    char *cp = test_load_file(path, NULL);
    CHECK(strstr(cp, "\nalgorithm LM\n") != NULL && strstr(cp, "\nlm_lambda ") != NULL && strstr(cp, "\nevaluations 3\n"),
          "checkpoint: %s", cp);
    const double cp_loss = strtod(strstr(cp, "\nbest_loss ") + strlen("\nbest_loss "), NULL);
    free(cp);
    input = write_input("ch3f-cut.fit", "max-evaluations = 20\n");
    rep = fit(input, dir, "--resume", &out);
    CHECK(strstr(out, "resuming from") != NULL, "%.500s", out);
    const gj_value *history = gj_array(rep, "history");
    const double first_eval = gj_number(&history->items[0], "evaluation"), first_loss = gj_number(&history->items[0], "loss");
    const double resumed = loss_after(rep);
    printf("  cut at 3 evaluations: %.17g; --resume: first evaluation %.0f at %.17g, %.0f in all, loss %.10g\n", cp_loss,
           first_eval, first_loss, gj_number(rep, "evaluations"), resumed);
    CHECK(first_eval == 4 && first_loss == cp_loss, "the resumed run did not start at the checkpoint");
    CHECK(gj_number(rep, "evaluations") > 3 && gj_number(rep, "evaluations") <= 20 && resumed < cp_loss,
          "the resumed run made no progress");
    gj_free(rep);
    free(out);

    /* an explicit optimizer line keeps its meaning */
    input = write_input("ch3f-lbfgs.fit", "optimizer = lbfgs\nmax-evaluations = 5\n");
    rep = fit(input, test_temp_path("ch3f-lbfgs"), "", &out);
    CHECK(strstr(out, "optimizer LD_LBFGS;") != NULL && strcmp(gj_string(rep, "optimizer"), "LD_LBFGS") == 0,
          "optimizer = lbfgs: %s", out);
    gj_free(rep);
    free(out);
    printf("test_cli_lm: all checks passed\n");
    return 0;
}
