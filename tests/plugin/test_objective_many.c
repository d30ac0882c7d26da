/*
 * test_objective_many (per platform): the Hessian objective over many molecules, more than a GPU
 * platform launches work-groups for at once (OpenMM caps a launch; PoCL at 12 groups here), so
 * every per-molecule kernel must loop over its molecules.
 *
 * 50 bent triatomics (two bonds and an angle on four shared slots), each at its own random
 * geometry, with position-paired frequencies (unprojected) and Hessian elements:
 *  (a) a first evaluation with frequency targets 0 gives every molecule's MM frequencies
 *      (r = -w nu); with targets nu + 10 cm^-1 every frequency residual is exactly 10 w (to
 *      rounding): a molecule that was skipped keeps residual 0 and fails;
 *  (b) the loss is the sum of the squared residuals;
 *  (c) on a platform other than Reference, loss, dL/dslot and residuals equal the Reference
 *      platform's to 1e-10 relative (double precision).
 */
#include "hessfit_fitting.h"
#include "test_util.h"
#include "triatomics.h"
#include <string.h>

#define NMOL 50
#define NP (3 * NMOL)
#define DIM 9
#define NSLOT TRIATOMIC_SLOTS
#define NFREQ 3 /* the three highest of the nine unprojected modes (above 50 cm^-1) */

/* Every molecule: NFREQ position-paired frequency targets, and Hessian-element targets 0 with
 * weight 1e-3 (kJ/mol/nm^2)^-1. */
static void set_objective(triatomic_set *s, const double *freq_targets)
{
    static double weights[NFREQ] = {1.0, 0.5, 0.25}, hess_targets[DIM * DIM], hess_weights[DIM * DIM];
    for (int i = 0; i < DIM * DIM; i++)
        hess_weights[i] = 1e-3;
    hessfit_molecule_objective mol[NMOL];
    for (int m = 0; m < NMOL; m++)
        triatomic_objective(&mol[m], freq_targets + NFREQ * m, weights, NFREQ, hess_targets, hess_weights);
    HF_OK(hessfit_force_set_hessian_objective(s->force, s->context, mol, NMOL, hessfit_frequency_factor_kj_mol_nm2_amu()));
}

#define NRES_MOL (NFREQ + DIM * (DIM + 1) / 2)
#define NRES (NMOL * NRES_MOL)

/* (a), (b) on one platform: fills the loss, gradient and residuals at targets nu + 10. */
static void evaluate(const char *platform, const double *pos, double *loss, double *grad, double *res)
{
    static const double weights[NFREQ] = {1.0, 0.5, 0.25};
    triatomic_set s;
    triatomic_set_create(&s, NMOL, platform, pos);
    double targets[NMOL * NFREQ] = {0};
    long long n_res = 0;
    set_objective(&s, targets);
    HF_OK(hessfit_force_get_hessian_objective_size(s.force, s.context, &n_res, NULL));
    CHECK(n_res == NRES, "%lld residuals, expected %d", n_res, NRES);
    HF_OK(hessfit_force_compute_hessian_objective(s.force, s.context, loss, NULL, 0, res, NRES));
    for (int m = 0; m < NMOL; m++)
        for (int k = 0; k < NFREQ; k++) {
            const double nu = -res[m * NRES_MOL + k] / weights[k];
            CHECK(nu > 50.0, "%s: molecule %d, target %d: MM frequency %g cm^-1 (not evaluated?)", platform, m, k, nu);
            targets[m * NFREQ + k] = nu + 10.0;
        }
    set_objective(&s, targets);
    HF_OK(hessfit_force_compute_hessian_objective(s.force, s.context, loss, grad, NSLOT, res, NRES));
    double sum = 0.0, worst = 0.0;
    for (int i = 0; i < NRES; i++)
        sum += res[i] * res[i];
    for (int m = 0; m < NMOL; m++)
        for (int k = 0; k < NFREQ; k++)
            worst = fmax(worst, fabs(res[m * NRES_MOL + k] - 10.0 * weights[k]));
    CHECK(worst <= 1e-8, "%s: a frequency residual misses 10 w by %.3g", platform, worst);
    CHECK(fabs(*loss - sum) <= 1e-12 * sum, "%s: loss %.17g, sum of squared residuals %.17g", platform, *loss, sum);
    printf("%-10s %d molecules: loss %.12g, frequency residuals within %.2e of 10 w\n", platform, NMOL, *loss, worst);
    triatomic_set_destroy(&s);
}

static double max_rel(const double *a, const double *b, size_t n)
{
    return test_max_abs_diff(a, b, n) / fmax(test_max_abs(b, n), 1e-300);
}

int main(int argc, char **argv)
{
    const char *platform = test_platform_name(argc, argv);
    test_load_plugins();
    test_seed(20261121ULL);
    double pos[3 * NP];
    triatomic_positions(pos, NMOL);
    double loss, grad[NSLOT], res[NRES];
    evaluate(platform, pos, &loss, grad, res);
    if (strcmp(platform, "Reference") != 0) {
        double ref_loss, ref_grad[NSLOT], ref_res[NRES];
        evaluate("Reference", pos, &ref_loss, ref_grad, ref_res);
        const double el = fabs(loss - ref_loss) / ref_loss, eg = max_rel(grad, ref_grad, NSLOT),
                     er = max_rel(res, ref_res, NRES);
        CHECK(el <= 1e-10 && eg <= 1e-10 && er <= 1e-10, "%s vs Reference: loss %.2e, gradient %.2e, residuals %.2e",
              platform, el, eg, er);
        printf("%s vs Reference: loss %.2e, gradient %.2e, residuals %.2e (relative)\n", platform, el, eg, er);
    }
    printf("test_objective_many: all checks passed\n");
    return 0;
}
