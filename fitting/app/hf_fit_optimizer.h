#ifndef HF_FIT_OPTIMIZER_H_
#define HF_FIT_OPTIMIZER_H_
/*
 * The fit's optimiser for a loaded training set, as `hessfit fit` and fit_bench set it up
 * (hessfit_optimize.h): the objective as the algorithm takes it -- HESSFIT_OPT_LM the least-squares
 * callback around hessfit_objective_normal_equations (every hessfit objective is a sum of squares,
 * L = sum r^2), the others the loss and gradient of hessfit_objective_evaluate -- the free values
 * scaled by q2mm's steps (a bond k and its r0 differ by four orders of magnitude in size and in their
 * effect on the loss; in steps they are alike), which are also the simplex methods' initial steps
 * and grad-simp's differences, the bounds, ftol and the limits of the input. The objective is the
 * set's own (one Context), or the training set in MPI blocks (hf_shards.h: hf_shards_evaluate, and
 * for LM hf_shards_normal_equations) when a hf_shards is given.
 *
 * And the parameter uncertainties at the fit's final point (hessfit_uncertainty.h) with the names
 * the report gives the free values.
 */
#include "hessfit_optimize.h"
#include "hessfit_uncertainty.h"
#include "hf_shards.h"
#include "hf_training_set.h"

/* A handle for `algorithm` on set's objective (shards NULL) or on the blocks of shards (rank 0 of
 * hf_shards_create on this set), with set's bounds, steps, ftol, max-evaluations and max-time. */
hessfit_status hf_fit_optimizer_create(hf_training_set *set, hf_shards *shards, hessfit_opt_algorithm algorithm,
                                       hessfit_optimize **opt);

/* The uncertainties of the fit's n_fit values at x (the final point): from the normal equations
 * the LM run kept at its best point (hessfit_optimize_best_normal_equations) when opt ran LM and x is
 * that point, else from one normal-equations call at x, on the same objective as the optimiser's
 * (shards NULL: hessfit_objective_normal_equations, which leaves the model at x; else
 * hf_shards_normal_equations). max_pairs strongest correlations. */
hessfit_status hf_fit_uncertainty(hf_training_set *set, hf_shards *shards, const hessfit_optimize *opt, const double *x,
                                  int max_pairs, hessfit_uncertainty *u);

/* Storage of the free values' names for the report: "line 81 bond C3-H1 k [kcal/mol/A^2]" (the
 * unit of the report's values, the canonical one, which the standard errors share). */
typedef struct hf_fit_value_names {
    int n;
    char (*text)[128];
    const char **names; /* n pointers into text */
} hf_fit_value_names;

hessfit_status hf_fit_value_names_make(const hf_training_set *set, hf_fit_value_names *names);
void hf_fit_value_names_free(hf_fit_value_names *names);

#endif
