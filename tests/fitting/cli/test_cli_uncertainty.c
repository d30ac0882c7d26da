/*
 * The fit report's parameter uncertainties end to end: `hessfit fit` on CH3F with the default
 * optimiser (an input without an `optimizer` line: LM), then, in this process, the same training set
 * loaded as the CLI loads it, the residual Jacobian J at the report's fitted values
 * (hessfit_objective_jacobian) and hessfit_uncertainty_compute on J^T J. The report's numbers
 * (report.json, read by the tests' JSON reader, so it also parses) must be those: residual count,
 * rank, s^2, every standard error, the strongest correlations, the singular values, and the names
 * with the report's units. The report's come from the LM run's own normal equations at its best
 * point (accumulated per molecule), the test's from J: they agree to rounding, amplified by the
 * conditioning of J^T J (the free values are the bond and angle force constants, 4 of them for 9
 * frequencies, so it is modest). report.txt has the section too.
 */
#define _POSIX_C_SOURCE 200809L
#include "test_util.h"

#include "golden_json.h"
#include "hessfit_uncertainty.h"
#include "hf_training_set.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double rel_diff(double a, double b)
{
    return fabs(a - b) / fmax(fmax(fabs(a), fabs(b)), 1e-300);
}

int main(int argc, char **argv)
{
    (void)argc;
    const char *hessfit = test_program_path(argv[0], "hessfit");
    char text[4096], args[4096], out[1024], path[1200];
    snprintf(text, sizeof text,
             "forcefield = %s\nstructures = %s\nhessian = %s\nfree = bond k\nfree = angle k\n"
             "objective = frequencies-q2mm\nftol = 1e-12\nmax-evaluations = 200\n",
             test_source_path_dup("examples/data/sn2/ch3f-seminario-start.frcmod"),
             test_source_path_dup("examples/data/sn2/ch3f-optimized.xyz"),
             test_source_path_dup("examples/data/sn2/ch3f-hessian.npy"));
    const char *input = test_write_text("ch3f-lm.fit", text);
    snprintf(out, sizeof out, "%s", test_temp_path("ch3f-lm-out"));
    snprintf(args, sizeof args, "fit '%s' --output '%s'", input, out);
    test_run_result r = test_run_program(hessfit, args);
    test_expect_exit(&r, 0, NULL, "ch3f fit (default optimizer)");
    CHECK(strstr(r.out, "optimizer LM;") != NULL, "the default optimizer is not LM: %s", r.out);
    free(r.out);

    snprintf(path, sizeof path, "%s/report.json", out);
    gj_value *rep = gj_read_file(path);
    CHECK(strcmp(gj_string(rep, "optimizer"), "LM") == 0, "optimizer %s", gj_string(rep, "optimizer"));
    const gj_value *params = gj_array(rep, "parameters"), *unc = gj_object(rep, "uncertainty");
    const int n = (int)params->n;
    CHECK(n == 4, "%d free values", n);
    double x[4];
    for (int i = 0; i < n; i++)
        x[i] = gj_number(&params->items[i], "after");

    /* the same training set in this process, J at the fitted values */
    hf_training_set set;
    hf_training_set_options topt = {NULL, NULL, "-out", 0};
    HF_CALL(hf_cli_load_plugins());
    HF_CALL(hf_training_set_load(input, &topt, &set));
    CHECK(set.n_fit == n && set.settings.algorithm == HESSFIT_OPT_LM, "n_fit %d, algorithm %d", set.n_fit,
          (int)set.settings.algorithm);
    const long long m = hessfit_objective_n_residuals(set.objective);
    double *J = malloc((size_t)m * (size_t)n * sizeof *J), *res = malloc((size_t)m * sizeof *res), jtj[16], loss;
    CHECK(J != NULL && res != NULL, "no memory");
    HF_CALL(hessfit_objective_jacobian(set.objective, x, &loss, res, J));
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++) {
            double s = 0.0;
            for (long long i = 0; i < m; i++)
                s += J[(size_t)i * (size_t)n + (size_t)a] * J[(size_t)i * (size_t)n + (size_t)b];
            jtj[a * n + b] = s;
        }
    hessfit_uncertainty u;
    HF_CALL(hessfit_uncertainty_compute(n, m, loss, jtj, 10, &u));

    /* the report's numbers against the direct computation */
    const double tol = 1e-10;
    CHECK(gj_number(unc, "n") == n && gj_number(unc, "m") == (double)m && gj_number(unc, "rank") == u.rank,
          "n %g m %g rank %g vs %d %lld %d", gj_number(unc, "n"), gj_number(unc, "m"), gj_number(unc, "rank"), n, m,
          u.rank);
    CHECK(u.sigma2_determined && gj_get(unc, "sigma2_determined")->number == 1.0, "s^2 undetermined");
    double worst = rel_diff(gj_number(unc, "loss"), loss);
    CHECK(worst <= 1e-12, "loss %.17g vs %.17g", gj_number(unc, "loss"), loss);
    worst = fmax(worst, rel_diff(gj_number(unc, "sigma2"), u.sigma2));
    const gj_value *up = gj_array(unc, "parameters");
    CHECK((int)up->n == n, "%zu uncertainty parameters", up->n);
    for (int i = 0; i < n; i++) {
        char want[160];
        hf_training_set_describe_free(&set, i, want, sizeof want);
        const char *name = gj_string(&up->items[i], "name");
        CHECK(strncmp(name, want, strlen(want)) == 0 && strstr(name, "[kcal/mol/") != NULL, "name '%s' vs '%s'", name,
              want);
        CHECK(isfinite(u.standard_error[i]), "standard error %d not finite", i);
        worst = fmax(worst, rel_diff(gj_number(&up->items[i], "standard_error"), u.standard_error[i]));
    }
    const gj_value *sv = gj_array(unc, "singular_values");
    CHECK((int)sv->n == n, "%zu singular values", sv->n);
    for (int k = 0; k < n; k++)
        worst = fmax(worst, fabs(sv->items[k].number - u.singular_values[k]) / u.singular_values[0]);
    const gj_value *pairs = gj_array(unc, "correlations");
    CHECK((int)pairs->n == u.n_pairs && u.n_pairs == n * (n - 1) / 2, "%zu pairs vs %d", pairs->n, u.n_pairs);
    double worst_corr = 0.0;
    for (int k = 0; k < u.n_pairs; k++) {
        const gj_value *p = &pairs->items[k];
        CHECK(gj_number(p, "i") == u.pairs[k].i && gj_number(p, "j") == u.pairs[k].j, "pair %d: (%g, %g) vs (%d, %d)", k,
              gj_number(p, "i"), gj_number(p, "j"), u.pairs[k].i, u.pairs[k].j);
        worst_corr = fmax(worst_corr, fabs(gj_number(p, "correlation") - u.pairs[k].correlation));
    }
    printf("CH3F, 4 force constants, LM: loss %.10g, m %lld, rank %d, s^2 %.6g; standard errors %.4g .. %.4g\n", loss, m,
           u.rank, u.sigma2, u.standard_error[0], u.standard_error[n - 1]);
    printf("  report vs hessfit_uncertainty_compute on J^T J: max relative difference %.2e (s^2, standard errors, "
           "singular values), correlations %.2e\n",
           worst, worst_corr);
    CHECK(worst <= tol && worst_corr <= tol, "report vs direct: %.3g, correlations %.3g", worst, worst_corr);
    gj_free(rep);

    /* the text report has the section, with the same standard error */
    snprintf(path, sizeof path, "%s/report.txt", out);
    char *txt = test_load_file(path, NULL);
    CHECK(strstr(txt, "\nUncertainties (9 residuals, 4 parameters, rank 4; s^2") != NULL, "no uncertainty section");
    CHECK(strstr(txt, "strongest correlations") != NULL && strstr(txt, "sloppiest directions") != NULL,
          "incomplete uncertainty section");
    free(txt);
    hessfit_uncertainty_free(&u);
    free(J);
    free(res);
    hf_training_set_free(&set);
    printf("test_cli_uncertainty: all checks passed\n");
    return 0;
}
