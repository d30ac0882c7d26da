/* The fit's optimiser and its uncertainties for a loaded training set (hf_fit_optimizer.h). */
#include "hf_fit_optimizer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The loss and gradient of the free values x (canonical units), for the NLopt methods and grad-simp. */
static double fit_loss(int n, const double *x, double *grad, void *data, hessfit_status *status)
{
    double loss = 0.0;
    (void)n;
    *status = hessfit_objective_evaluate(data, x, &loss, grad, NULL);
    return loss;
}

/* LM's least-squares callback: L = sum r^2 and, when asked, J^T J and J^T r; the loss alone (no
 * Jacobian) when jtj is NULL. */
static double fit_lsq(int n, const double *x, double *jtj, double *jtr, void *data, hessfit_status *status)
{
    double loss = 0.0;
    (void)n;
    *status = jtj != NULL ? hessfit_objective_normal_equations(data, x, &loss, jtj, jtr)
                          : hessfit_objective_evaluate(data, x, &loss, NULL, NULL);
    return loss;
}

/* The two above over the MPI blocks (hf_shards.h: every rank evaluates its blocks). */
static double shards_loss(int n, const double *x, double *grad, void *data, hessfit_status *status)
{
    double loss = 0.0;
    (void)n;
    *status = hf_shards_evaluate(data, x, &loss, grad, NULL);
    return loss;
}

static double shards_lsq(int n, const double *x, double *jtj, double *jtr, void *data, hessfit_status *status)
{
    double loss = 0.0;
    (void)n;
    *status = jtj != NULL ? hf_shards_normal_equations(data, x, &loss, jtj, jtr)
                          : hf_shards_evaluate(data, x, &loss, NULL, NULL);
    return loss;
}

hessfit_status hf_fit_optimizer_create(hf_training_set *set, hf_shards *shards, hessfit_opt_algorithm algorithm,
                                       hessfit_optimize **opt)
{
    hessfit_status st;
    hessfit_optimize *o = NULL;
    *opt = NULL;
    if ((st = hessfit_optimize_create(algorithm, set->n_fit, &o)) != HESSFIT_SUCCESS)
        return st;
    const long long m = hessfit_objective_n_residuals(set->objective);
    if (hessfit_opt_algorithm_is_least_squares(algorithm))
        st = shards != NULL ? hessfit_optimize_set_least_squares(o, shards_lsq, m, shards)
                            : hessfit_optimize_set_least_squares(o, fit_lsq, m, set->objective);
    else
        st = shards != NULL ? hessfit_optimize_set_objective(o, shards_loss, shards)
                            : hessfit_optimize_set_objective(o, fit_loss, set->objective);
    if (st != HESSFIT_SUCCESS || (st = hessfit_optimize_set_bounds(o, set->lower, set->upper)) != HESSFIT_SUCCESS ||
        (st = hessfit_optimize_set_initial_step(o, set->step)) != HESSFIT_SUCCESS ||
        (st = hessfit_optimize_set_scale(o, set->step)) != HESSFIT_SUCCESS ||
        (st = hessfit_optimize_set_ftol_rel(o, set->settings.ftol)) != HESSFIT_SUCCESS ||
        (st = hessfit_optimize_set_maxeval(o, set->settings.max_evaluations)) != HESSFIT_SUCCESS ||
        (st = hessfit_optimize_set_maxtime(o, set->settings.max_time)) != HESSFIT_SUCCESS) {
        hessfit_optimize_destroy(o);
        return st;
    }
    *opt = o;
    return HESSFIT_SUCCESS;
}

hessfit_status hf_fit_uncertainty(hf_training_set *set, hf_shards *shards, const hessfit_optimize *opt, const double *x,
                                  int max_pairs, hessfit_uncertainty *u)
{
    const int n = set->n_fit;
    double *jtj = malloc((size_t)n * (size_t)n * sizeof *jtj), *jtr = malloc((size_t)n * sizeof *jtr);
    double *best = malloc((size_t)n * sizeof *best), loss = 0.0;
    long long m = hessfit_objective_n_residuals(set->objective);
    hessfit_status st;
    memset(u, 0, sizeof *u);
    if (jtj == NULL || jtr == NULL || best == NULL) {
        st = hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "no memory for the uncertainties of %d values", n);
        goto done;
    }
    /* the LM run's own normal equations when x is its best point: no extra evaluation */
    if (opt == NULL || !hessfit_opt_algorithm_is_least_squares(hessfit_optimize_algorithm(opt)) ||
        hessfit_optimize_best(opt, best, &loss) != HESSFIT_SUCCESS ||
        memcmp(best, x, (size_t)n * sizeof *x) != 0 ||
        hessfit_optimize_best_normal_equations(opt, jtj, jtr, &m) != HESSFIT_SUCCESS) {
        m = hessfit_objective_n_residuals(set->objective);
        st = shards != NULL ? hf_shards_normal_equations(shards, x, &loss, jtj, jtr)
                            : hessfit_objective_normal_equations(set->objective, x, &loss, jtj, jtr);
        if (st != HESSFIT_SUCCESS)
            goto done;
    }
    st = hessfit_uncertainty_compute(n, m, loss, jtj, max_pairs, u);
done:
    free(jtj);
    free(jtr);
    free(best);
    return st;
}

hessfit_status hf_fit_value_names_make(const hf_training_set *set, hf_fit_value_names *names)
{
    memset(names, 0, sizeof *names);
    names->n = set->n_fit;
    names->text = calloc((size_t)set->n_fit + 1, sizeof *names->text);
    names->names = calloc((size_t)set->n_fit + 1, sizeof *names->names);
    if (names->text == NULL || names->names == NULL) {
        hf_fit_value_names_free(names);
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "no memory for the names of %d free values", set->n_fit);
    }
    for (int i = 0; i < set->n_fit; i++) {
        char what[96], value[32];
        const char *unit = "";
        int p, v;
        hf_training_set_describe_free(set, i, what, sizeof what);
        if (hessfit_model_free_parameter(set->model, i, &p, &v, NULL, NULL) == HESSFIT_SUCCESS)
            hf_param_value_name(&set->ff.params[p], v, value, sizeof value, &unit);
        if (unit[0] != '\0')
            snprintf(names->text[i], sizeof names->text[i], "%s [%s]", what, unit);
        else
            snprintf(names->text[i], sizeof names->text[i], "%s", what);
        names->names[i] = names->text[i];
    }
    return HESSFIT_SUCCESS;
}

void hf_fit_value_names_free(hf_fit_value_names *names)
{
    free(names->text);
    free(names->names);
    memset(names, 0, sizeof *names);
}
