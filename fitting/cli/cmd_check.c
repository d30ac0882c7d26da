/*
 * `hessfit check INPUT.fit`: the analytic derivatives hessfit fits with, checked against finite
 * differences on the user's own training set (in the spirit of Tinker's testhess), at the start
 * values of the input:
 *
 *   1. every molecule's analytic Hessian against central differences of the analytic forces,
 *      H_ij ~ -(F_i(x + h e_j) - F_i(x - h e_j)) / 2h, h = CHECK_HESSIAN_STEP_NM, in the model's
 *      Context (the positions are put back exactly afterwards); reported as the largest absolute
 *      difference (Hartree/Bohr^2) and that difference relative to the largest |H_ij| of the
 *      molecule; it must not exceed CHECK_HESSIAN_TOLERANCE. A column that exceeds it is tried again
 *      with h/10 and h/100: MM3*'s van der Waals switch makes the forces only continuous at 6 and
 *      8 A (MacroModel's form), and a stencil that straddles such a distance is off by the force's
 *      jump / 2h (rh-enamide structure 2: a pair within 1e-5 nm of 8 A, 1e-3 relative at h);
 *   2. the gradient of the objective with respect to every free value against 4-point central
 *      differences of the loss, h_i = CHECK_GRADIENT_STEP max(|x_i|, 1), error
 *      |fd_i - g_i| / max(|g_i|, 1e-3 max_j |g_j|), which must not exceed CHECK_GRADIENT_TOLERANCE.
 *      The stencil's truncation error grows with the loss's higher derivatives, which are large
 *      near nearly degenerate MM modes (a frequency's k-th derivative scales as 1/gap^(k-1)), so a
 *      value whose difference exceeds a tenth of the tolerance is tried again with h/10 and h/100,
 *      and the closest agreement counts (an analytic gradient that is wrong disagrees at every
 *      step). The frequency objectives are differentiable only where the
 *      pairing of QM and MM modes does not change: a stencil whose points pair differently is not
 *      used, and a value whose pairing switches at all three steps is reported as such and not
 *      counted as a disagreement.
 *   3. the residual Jacobian J the LM optimiser fits with (hessfit_objective_jacobian): 2 J^T r against
 *      the analytic gradient (relative to max |dL/dx|, <= CHECK_JACOBIAN_GRADIENT_TOLERANCE: both are
 *      exact, so they agree to rounding), and CHECK_JACOBIAN_COLUMNS sampled columns against 4-point
 *      central differences of the residuals (the steps, retries and pairing rule of part 2), each
 *      column's max |fd - J| / max |J| <= CHECK_GRADIENT_TOLERANCE.
 * At an equilibrium start (a Seminario start puts r0 and theta0 at the structure's own lengths and
 * angles) dE/dq = 0 for those terms, so the part of the Hessian that goes with the second
 * derivatives of the internal coordinates, dE/dq d2q/dx2, is zero and goes unchecked; --perturb F
 * multiplies every free value by 1 + F first, so that it is checked too.
 * Exit 0 when both agree within their tolerances, 1 when they do not or on an error, 2 on a usage
 * error.
 *
 * Test only: the environment variable HESSFIT_TEST_CHECK_PERTURB=hessian adds 1e-3 max|H_ij| to
 * the first molecule's analytic H_11, =gradient adds 1e-3 max|dL/dx| to the first analytic
 * dL/dx, =jacobian adds 1e-3 max|J| to J_11, so that the tests (tests/fitting/cli/test_cli_fit.c) see check fail on a wrong derivative. It is not
 * for users and not in --help.
 */
#include "hessfit_units.h"
#include "hf_commands.h"
#include "hf_training_set.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK_HESSIAN_STEP_NM 1e-5
#define CHECK_HESSIAN_TOLERANCE 1e-5
#define CHECK_GRADIENT_STEP 1e-5
#define CHECK_GRADIENT_TOLERANCE 1e-5
#define CHECK_TEST_PERTURBATION 1e-3
/* Part 3 samples this many columns of J (evenly spread over the free values, the first and the last
 * included); a J larger than CHECK_JACOBIAN_MAX_ENTRIES is not held, and only 2 J^T r is checked
 * (from the normal equations). */
#define CHECK_JACOBIAN_COLUMNS 6
#define CHECK_JACOBIAN_MAX_ENTRIES 50000000LL
/* 2 J^T r must equal the gradient to rounding: relative to max |dL/dx|. */
#define CHECK_JACOBIAN_GRADIENT_TOLERANCE 1e-9

/* The test-only wrong derivative (see above): 1 when HESSFIT_TEST_CHECK_PERTURB is `what`. */
static int test_perturb(const char *what)
{
    const char *e = getenv("HESSFIT_TEST_CHECK_PERTURB");
    return e != NULL && strcmp(e, what) == 0;
}

/* v[0] += CHECK_TEST_PERTURBATION max_i |v_i|, when HESSFIT_TEST_CHECK_PERTURB is `what`. */
static void test_perturb_first(const char *what, double *v, size_t n)
{
    double max_v = 0.0;
    if (!test_perturb(what))
        return;
    for (size_t i = 0; i < n; i++)
        max_v = fmax(max_v, fabs(v[i]));
    v[0] += CHECK_TEST_PERTURBATION * max_v;
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: hessfit check INPUT.fit [--perturb F] [--help]\n"
            "\n"
            "Checks the analytic derivatives on INPUT's training set at its start values, like Tinker's testhess:\n"
            "  1. each molecule's analytic Hessian against central differences of the forces (step %g nm);\n"
            "     the largest difference relative to the largest Hessian element must be <= %g; a column that\n"
            "     differs more is tried again with 1/10 and 1/100 of the step (MM3*'s van der Waals switch makes\n"
            "     the forces only continuous at 6 and 8 A);\n"
            "  2. the objective's gradient over every free value against 4-point central differences of the\n"
            "     loss (step %g max(|x|, 1)); each relative difference must be <= %g. A value that differs by\n"
            "     more than a tenth of that is tried again with 1/10 and 1/100 of the step (the stencil's error\n"
            "     grows near nearly degenerate modes), and so is one whose pairing of QM and MM modes switches\n"
            "     within the stencil; values whose pairing switches at every step are listed (the loss is not\n"
            "     differentiable there) and not counted.\n"
            "  3. the residual Jacobian (the LM optimiser's): 2 J^T r against the gradient (to rounding, <= %g\n"
            "     relative to max |dL/dx|) and %d sampled columns against 4-point central differences of the\n"
            "     residuals (steps and retries as in 2; max |fd - J| / max |J| of a column <= %g).\n"
            "  --perturb F  check at the start values times 1 + F instead (every free value; one of 0 stays 0).\n"
            "     At an equilibrium start (a Seminario start puts r0 and theta0 at the structure's own lengths\n"
            "     and angles) the Hessian's part from the curvature of the internal coordinates, dE/dq d2q/dx2,\n"
            "     is zero and so goes unchecked; away from it, it is checked too. Example: --perturb 0.05.\n"
            "Exit status: 0 all agree, 1 a disagreement or an error, 2 usage error.\n",
            CHECK_HESSIAN_STEP_NM, CHECK_HESSIAN_TOLERANCE, CHECK_GRADIENT_STEP, CHECK_GRADIENT_TOLERANCE,
            CHECK_JACOBIAN_GRADIENT_TOLERANCE, CHECK_JACOBIAN_COLUMNS, CHECK_GRADIENT_TOLERANCE);
}

static int usage_error(const char *fmt, const char *arg)
{
    return hf_cli_usage_error("check", usage, fmt, arg);
}

/* Forces (kJ/mol/nm) of every particle at positions. */
static void forces_at(OpenMM_Context *ctx, const OpenMM_Vec3Array *positions, double *f, int n)
{
    OpenMM_Context_setPositions(ctx, positions);
    OpenMM_State *state = OpenMM_Context_getState(ctx, OpenMM_State_Forces, 0);
    const OpenMM_Vec3Array *forces = OpenMM_State_getForces(state);
    for (int i = 0; i < n; i++) {
        const OpenMM_Vec3 *v = OpenMM_Vec3Array_get(forces, i);
        f[3 * i] = v->x;
        f[3 * i + 1] = v->y;
        f[3 * i + 2] = v->z;
    }
    OpenMM_State_destroy(state);
}

/* Column j of a molecule's Hessian (Hartree/Bohr^2) by central differences of the forces with
 * step h (nm): the largest |fd - analytic| over its rows, that row in *row. */
static double column_error(OpenMM_Context *ctx, const OpenMM_Vec3Array *original, OpenMM_Vec3Array *moved,
                           const int *particles, int dim, int j, double h, const double *an, double *fp, double *fm,
                           int n_particles, int *row)
{
    const double to_au = HESSFIT_KJ_PER_MOL_PER_NM2_TO_HARTREE_PER_BOHR2;
    const int pj = particles[j / 3];
    OpenMM_Vec3 p = *OpenMM_Vec3Array_get(original, pj), q = p;
    double *c = j % 3 == 0 ? &q.x : j % 3 == 1 ? &q.y : &q.z, worst = 0.0;
    const double x0 = *c;
    *c = x0 + h;
    OpenMM_Vec3Array_set(moved, pj, q);
    forces_at(ctx, moved, fp, n_particles);
    *c = x0 - h;
    OpenMM_Vec3Array_set(moved, pj, q);
    forces_at(ctx, moved, fm, n_particles);
    OpenMM_Vec3Array_set(moved, pj, p);
    for (int i = 0; i < dim; i++) {
        const int pi = particles[i / 3];
        const double fd = -(fp[3 * pi + i % 3] - fm[3 * pi + i % 3]) / (2.0 * h) * to_au;
        const double err = fabs(fd - an[(size_t)i * (size_t)dim + (size_t)j]);
        if (err > worst) {
            worst = err;
            *row = i;
        }
    }
    return worst;
}

/* Part 1: returns 1 when every molecule agrees, 0 when one does not, -1 on an error. */
static int check_hessians(hf_training_set *set)
{
    hessfit_model *model = set->model;
    OpenMM_Context *ctx = hessfit_model_context(model);
    const int n_particles = hessfit_model_n_particles(model);
    const double h = CHECK_HESSIAN_STEP_NM;
    OpenMM_State *state = OpenMM_Context_getState(ctx, OpenMM_State_Positions, 0);
    const OpenMM_Vec3Array *original = OpenMM_State_getPositions(state);
    OpenMM_Vec3Array *moved = OpenMM_Vec3Array_create(n_particles);
    double *fp = malloc(3 * (size_t)n_particles * sizeof *fp), *fm = malloc(3 * (size_t)n_particles * sizeof *fm);
    int ok = 1;
    for (int i = 0; i < n_particles; i++)
        OpenMM_Vec3Array_set(moved, i, *OpenMM_Vec3Array_get(original, i));
    printf("1. Hessians: analytic vs central differences of the forces (step %g nm)\n", h);
    for (int m = 0; m < set->n_mols && ok >= 0; m++) {
        const int n = hessfit_model_n_atoms(model, m), dim = 3 * n;
        double *an = malloc((size_t)dim * (size_t)dim * sizeof *an);
        int *particles = malloc((size_t)n * sizeof *particles), count = 0;
        double max_h = 0.0, max_err = 0.0;
        int worst_i = 0, worst_j = 0, n_retried = 0;
        if (an == NULL || particles == NULL || fp == NULL || fm == NULL) {
            fprintf(stderr, "hessfit check: no memory\n");
            ok = -1;
        } else if (hessfit_model_hessian(model, m, an) != HESSFIT_SUCCESS) {
            fprintf(stderr, "hessfit check: %s: %s\n", set->labels[m], hessfit_last_error());
            ok = -1;
        } else if (hessfit_force_get_molecule_particles(hessfit_model_force(model), m, particles, n, &count) !=
                       HESSFIT_SUCCESS ||
                   count != n) {
            fprintf(stderr, "hessfit check: %s: %s\n", set->labels[m], hessfit_last_error());
            ok = -1;
        }
        if (ok >= 0 && m == 0)
            test_perturb_first("hessian", an, (size_t)dim * (size_t)dim);
        for (int i = 0; i < dim * dim && ok >= 0; i++)
            max_h = fmax(max_h, fabs(an[i]));
        for (int j = 0; j < dim && ok >= 0; j++) { /* column j: displace coordinate j */
            /* h, then h/10 and h/100 while the column disagrees: a force that is only continuous
             * (MM3*'s van der Waals switch at 6 and 8 A) spoils the differences whose stencil
             * straddles the kink, and a smaller stencil steps off it */
            double err = INFINITY;
            int row = 0;
            for (int k = 0; k < 3 && err > CHECK_HESSIAN_TOLERANCE * max_h; k++) {
                err = column_error(ctx, original, moved, particles, dim, j, h * pow(0.1, k), an, fp, fm, n_particles,
                                   &row);
                if (k == 1)
                    n_retried++;
            }
            if (err > max_err) {
                max_err = err;
                worst_i = row;
                worst_j = j;
            }
        }
        if (ok >= 0) {
            const double rel = max_h > 0.0 ? max_err / max_h : max_err;
            const int good = rel <= CHECK_HESSIAN_TOLERANCE;
            printf("   %-60.60s %3d atoms: max |H_fd - H| %.3e Hartree/Bohr^2 (row %d, column %d), relative to max|H| "
                   "%.3e: %.3e  %s",
                   set->labels[m], n, max_err, worst_i + 1, worst_j + 1, max_h, rel, good ? "ok" : "DISAGREE");
            if (n_retried > 0)
                printf(" (%d column%s retried with 1/10 or 1/100 of the step)", n_retried, n_retried > 1 ? "s" : "");
            printf("\n");
            if (!good)
                ok = 0;
        }
        free(an);
        free(particles);
    }
    OpenMM_Context_setPositions(ctx, original); /* exactly the positions the model had */
    OpenMM_Vec3Array_destroy(moved);
    OpenMM_State_destroy(state);
    free(fp);
    free(fm);
    if (ok > 0)
        printf("   all within %g\n", CHECK_HESSIAN_TOLERANCE);
    return ok;
}

/* Part 2: 1 agree, 0 disagree, -1 error. */
static int check_gradient(hf_training_set *set)
{
    const int n = set->n_fit, nt = hessfit_objective_n_frequency_targets(set->objective);
    double *g = malloc((size_t)n * sizeof *g), *x = malloc((size_t)n * sizeof *x), loss, l[4];
    double *fds = malloc((size_t)n * sizeof *fds);
    int *p0 = malloc((size_t)(nt + 1) * sizeof *p0), *p1 = malloc((size_t)(nt + 1) * sizeof *p1);
    static const double at[4] = {2.0, 1.0, -1.0, -2.0};
    double max_g = 0.0, max_rel = 0.0;
    int worst = -1, n_reduced = 0, n_switching = 0, ok = 1;
    char what[200];
    if (g == NULL || x == NULL || fds == NULL || p0 == NULL || p1 == NULL) {
        fprintf(stderr, "hessfit check: no memory\n");
        ok = -1;
        goto done;
    }
    printf(
        "2. objective gradient (%s, %d free values): analytic vs 4-point central differences (step %g max(|x|, 1))\n",
        set->settings.objective_name, n, CHECK_GRADIENT_STEP);
    if (hessfit_objective_evaluate(set->objective, set->x_start, &loss, g, NULL) != HESSFIT_SUCCESS ||
        hessfit_objective_pairing(set->objective, p0) != HESSFIT_SUCCESS)
        goto error;
    test_perturb_first("gradient", g, (size_t)n);
    for (int i = 0; i < n; i++)
        max_g = fmax(max_g, fabs(g[i]));
    const double floor_g = 1e-3 * max_g;
    printf("   loss %.10g, max |dL/dx| %.4e\n", loss, max_g);
    for (int i = 0; i < n; i++) {
        /* the step: h0, then h0/10 and h0/100 while the difference exceeds the tolerance (the
         * truncation error of the stencil grows with the loss's higher derivatives, which are large
         * near nearly degenerate MM modes) or the pairing switches within the stencil */
        double h = CHECK_GRADIENT_STEP * fmax(fabs(set->x_start[i]), 1.0), rel = INFINITY;
        int stable = 0, any_stable = 0;
        for (int attempt = 0; attempt < 3 && rel > 0.1 * CHECK_GRADIENT_TOLERANCE; attempt++, h *= 0.1) {
            stable = 1;
            for (int k = 0; k < 4 && stable; k++) {
                memcpy(x, set->x_start, (size_t)n * sizeof *x);
                x[i] += at[k] * h;
                if (hessfit_objective_evaluate(set->objective, x, &l[k], NULL, NULL) != HESSFIT_SUCCESS ||
                    hessfit_objective_pairing(set->objective, p1) != HESSFIT_SUCCESS)
                    goto error;
                stable = memcmp(p0, p1, (size_t)nt * sizeof *p0) == 0;
            }
            if (stable) {
                const double fd = (8.0 * (l[1] - l[2]) - (l[0] - l[3])) / (12.0 * h);
                const double r = fabs(fd - g[i]) / fmax(fabs(g[i]), floor_g > 0.0 ? floor_g : 1e-300);
                if (!any_stable || r < rel) {
                    rel = r;
                    fds[i] = fd;
                }
                any_stable = 1;
            }
            n_reduced += attempt == 1;
        }
        hf_training_set_describe_free(set, i, what, sizeof what);
        if (!any_stable) {
            n_switching++;
            printf("   %-40s the pairing switches within 1e-2 of the step: not differentiable here, skipped\n", what);
            continue;
        }
        if (rel > max_rel) {
            max_rel = rel;
            worst = i;
        }
        if (rel > CHECK_GRADIENT_TOLERANCE) {
            printf("   %-40s analytic %.10e  finite differences %.10e  relative difference %.3e  DISAGREE\n", what,
                   g[i], fds[i], rel);
            ok = 0;
        }
    }
    if (worst >= 0)
        hf_training_set_describe_free(set, worst, what, sizeof what);
    printf("   max relative difference %.3e (%s) over %d values%s", max_rel, worst >= 0 ? what : "-", n - n_switching,
           ok > 0 ? "" : "");
    if (n_reduced > 0)
        printf("; %d values retried with 1/10 (and 1/100) of the step", n_reduced);
    if (n_switching > 0)
        printf("; %d values skipped (pairing switches)", n_switching);
    printf("\n   %s (tolerance %g)\n", ok > 0 ? "all within tolerance" : "DISAGREEMENT", CHECK_GRADIENT_TOLERANCE);
    goto done;
error:
    fprintf(stderr, "hessfit check: %s\n", hessfit_last_error());
    ok = -1;
done:
    if (ok >= 0 && x != NULL) /* the model back at the start values */
        hessfit_objective_evaluate(set->objective, set->x_start, &loss, NULL, NULL);
    free(g);
    free(x);
    free(fds);
    free(p0);
    free(p1);
    return ok;
}


/* Residuals r(x) of the objective and whether its pairing is p0's (nt frequency targets). */
static hessfit_status residuals_at(hf_training_set *set, const double *x, double *r, const int *p0, int *p1, int nt,
                                   int *same_pairing)
{
    double loss;
    hessfit_status st = hessfit_objective_evaluate(set->objective, x, &loss, NULL, r);
    if (st == HESSFIT_SUCCESS)
        st = hessfit_objective_pairing(set->objective, p1);
    *same_pairing = st == HESSFIT_SUCCESS && memcmp(p0, p1, (size_t)nt * sizeof *p0) == 0;
    return st;
}

/* Part 3: the residual Jacobian J (hessfit_objective_jacobian), which the LM optimiser fits with:
 * 2 J^T r against the analytic gradient (both exact: they agree to rounding), and sampled columns
 * against 4-point central differences of the residuals, with the gradient check's steps, retries
 * and pairing rule; a column's error is max_i |fd_i - J_ij| / max_i |J_ij|. 1 agree, 0 disagree,
 * -1 error. */
static int check_jacobian(hf_training_set *set)
{
    const int n = set->n_fit, nt = hessfit_objective_n_frequency_targets(set->objective);
    const long long m = hessfit_objective_n_residuals(set->objective);
    const int hold = m * (long long)n <= CHECK_JACOBIAN_MAX_ENTRIES;
    const size_t mn = hold ? (size_t)m * (size_t)n : 1;
    double *J = malloc(mn * sizeof *J), *r = malloc((size_t)m * sizeof *r), *g = malloc((size_t)n * sizeof *g);
    double *jtr = malloc((size_t)n * sizeof *jtr), *jtj = hold ? NULL : malloc((size_t)n * (size_t)n * sizeof *jtj);
    double *x = malloc((size_t)n * sizeof *x), *rk[4] = {NULL, NULL, NULL, NULL}, loss, max_g = 0.0, max_jtr = 0.0;
    int *p0 = malloc((size_t)(nt + 1) * sizeof *p0), *p1 = malloc((size_t)(nt + 1) * sizeof *p1);
    static const double at[4] = {2.0, 1.0, -1.0, -2.0};
    double max_col = 0.0;
    int worst_col = -1, n_switching = 0, n_checked = 0, ok = 1;
    char what[200];
    for (int k = 0; k < 4; k++)
        rk[k] = malloc((size_t)m * sizeof *rk[k]);
    if (!J || !r || !g || !jtr || (!hold && !jtj) || !x || !p0 || !p1 || !rk[0] || !rk[1] || !rk[2] || !rk[3]) {
        fprintf(stderr, "hessfit check: no memory for the Jacobian (%lld residuals x %d values)\n", m, n);
        ok = -1;
        goto done;
    }
    printf("3. residual Jacobian (%lld residuals x %d values): 2 J^T r vs the gradient, and %d sampled columns vs "
           "4-point central differences of the residuals\n",
           m, n, n < CHECK_JACOBIAN_COLUMNS ? n : CHECK_JACOBIAN_COLUMNS);
    if (hessfit_objective_evaluate(set->objective, set->x_start, &loss, g, NULL) != HESSFIT_SUCCESS ||
        hessfit_objective_pairing(set->objective, p0) != HESSFIT_SUCCESS)
        goto error;
    if (hold) {
        if (hessfit_objective_jacobian(set->objective, set->x_start, NULL, r, J) != HESSFIT_SUCCESS)
            goto error;
        test_perturb_first("jacobian", J, mn);
        for (int j = 0; j < n; j++) {
            jtr[j] = 0.0;
            for (long long i = 0; i < m; i++)
                jtr[j] += J[(size_t)i * (size_t)n + (size_t)j] * r[i];
        }
    } else {
        printf("   J is too large to hold: 2 J^T r from the normal equations only, no column check\n");
        if (hessfit_objective_normal_equations(set->objective, set->x_start, &loss, jtj, jtr) != HESSFIT_SUCCESS)
            goto error;
    }
    for (int j = 0; j < n; j++)
        max_g = fmax(max_g, fabs(g[j]));
    for (int j = 0; j < n; j++)
        max_jtr = fmax(max_jtr, fabs(2.0 * jtr[j] - g[j]));
    const double rel_jtr = max_g > 0.0 ? max_jtr / max_g : max_jtr;
    if (rel_jtr > CHECK_JACOBIAN_GRADIENT_TOLERANCE)
        ok = 0;
    printf("   max |2 J^T r - dL/dx| / max |dL/dx|: %.3e  %s (tolerance %g)\n", rel_jtr, ok ? "ok" : "DISAGREE",
           CHECK_JACOBIAN_GRADIENT_TOLERANCE);
    const int n_cols = !hold ? 0 : n < CHECK_JACOBIAN_COLUMNS ? n : CHECK_JACOBIAN_COLUMNS;
    for (int c = 0; c < n_cols; c++) {
        const int j = n_cols > 1 ? (int)((long long)c * (n - 1) / (n_cols - 1)) : 0;
        double h = CHECK_GRADIENT_STEP * fmax(fabs(set->x_start[j]), 1.0), err = INFINITY, max_j = 0.0;
        int any_stable = 0;
        for (long long i = 0; i < m; i++)
            max_j = fmax(max_j, fabs(J[(size_t)i * (size_t)n + (size_t)j]));
        for (int attempt = 0; attempt < 3 && err > 0.1 * CHECK_GRADIENT_TOLERANCE; attempt++, h *= 0.1) {
            int stable = 1;
            for (int k = 0; k < 4 && stable; k++) {
                memcpy(x, set->x_start, (size_t)n * sizeof *x);
                x[j] += at[k] * h;
                if (residuals_at(set, x, rk[k], p0, p1, nt, &stable) != HESSFIT_SUCCESS)
                    goto error;
            }
            if (!stable)
                continue;
            double e = 0.0;
            for (long long i = 0; i < m; i++) {
                const double fd = (8.0 * (rk[1][i] - rk[2][i]) - (rk[0][i] - rk[3][i])) / (12.0 * h);
                e = fmax(e, fabs(fd - J[(size_t)i * (size_t)n + (size_t)j]));
            }
            e = max_j > 0.0 ? e / max_j : e;
            err = any_stable ? fmin(err, e) : e;
            any_stable = 1;
        }
        hf_training_set_describe_free(set, j, what, sizeof what);
        if (!any_stable) {
            n_switching++;
            printf("   column %-40s the pairing switches within 1e-2 of the step: skipped\n", what);
            continue;
        }
        n_checked++;
        if (err > max_col || worst_col < 0) {
            max_col = err;
            worst_col = j;
        }
        if (err > CHECK_GRADIENT_TOLERANCE) {
            printf("   column %-40s max |dr_fd - J| / max |J| %.3e  DISAGREE\n", what, err);
            ok = 0;
        }
    }
    if (n_cols > 0) {
        if (worst_col >= 0)
            hf_training_set_describe_free(set, worst_col, what, sizeof what);
        printf("   max relative column difference %.3e (%s) over %d columns", max_col, worst_col >= 0 ? what : "-",
               n_checked);
        if (n_switching > 0)
            printf("; %d columns skipped (pairing switches)", n_switching);
        printf("\n");
    }
    printf("   %s (tolerance %g)\n", ok > 0 ? "all within tolerance" : "DISAGREEMENT", CHECK_GRADIENT_TOLERANCE);
    goto done;
error:
    fprintf(stderr, "hessfit check: %s\n", hessfit_last_error());
    ok = -1;
done:
    if (ok >= 0) /* the model back at the start values */
        hessfit_objective_evaluate(set->objective, set->x_start, &loss, NULL, NULL);
    free(J);
    free(r);
    free(g);
    free(jtr);
    free(jtj);
    free(x);
    free(p0);
    free(p1);
    for (int k = 0; k < 4; k++)
        free(rk[k]);
    return ok;
}

int hf_cmd_check(int argc, char **argv)
{
    const char *input = NULL;
    hf_training_set set;
    double perturb = 0.0;
    static const struct option options[] = {{"perturb", required_argument, NULL, 'p'},
                                            {"help", no_argument, NULL, 'h'},
                                            {NULL, 0, NULL, 0}};
    for (int o; (o = hf_cli_getopt(argc, argv, options, "check", usage)) != -1;) {
        if (o == HF_CLI_HELP || o == HF_CLI_USAGE_ERROR)
            return o == HF_CLI_HELP ? 0 : 2;
        char *end = NULL;
        perturb = strtod(optarg, &end);
        if (end == optarg || *end != '\0' || !(fabs(perturb) < 1.0))
            return usage_error("--perturb takes a number F with |F| < 1, not '%s'", optarg);
    }
    if (hf_cli_input_operand(argc, argv, "check", usage, &input) != 0)
        return 2;
    hf_training_set_options topt = {NULL, NULL, "-out", 0};
    if (hf_training_set_load(input, &topt, &set) != HESSFIT_SUCCESS) {
        fprintf(stderr, "hessfit check: %s\n", hessfit_last_error());
        return 1;
    }
    printf("hessfit check %s: %d structures, %d free values\n", input, set.n_mols, set.n_fit);
    if (perturb != 0.0) { /* the model at the perturbed start values */
        double loss;
        for (int i = 0; i < set.n_fit; i++)
            set.x_start[i] *= 1.0 + perturb;
        if (hessfit_objective_evaluate(set.objective, set.x_start, &loss, NULL, NULL) != HESSFIT_SUCCESS) {
            fprintf(stderr, "hessfit check: --perturb %g: %s\n", perturb, hessfit_last_error());
            hf_training_set_free(&set);
            return 1;
        }
        printf("at the start values times 1 + %g (--perturb)\n", perturb);
    }
    const int hessians = check_hessians(&set);
    const int gradient = hessians >= 0 ? check_gradient(&set) : -1;
    const int jacobian = gradient >= 0 ? check_jacobian(&set) : -1;
    hf_training_set_free(&set);
    if (hessians < 0 || gradient < 0 || jacobian < 0)
        return 1;
    const int passed = hessians && gradient && jacobian;
    printf("%s\n", passed ? "check passed"
                          : "check FAILED: analytic and finite-difference derivatives disagree beyond the tolerance");
    return passed ? 0 : 1;
}
