/*
 * test_jacobian_list (per platform): the residual Jacobian of a list of molecules in one call
 * (hessfit_force_compute_hessian_objective_jacobians, the molecules in threads) against the
 * one-molecule calls (hessfit_force_compute_hessian_objective_jacobian).
 *
 * 9 bent triatomics with different objectives, so that the blocks differ in length: by m % 3,
 * position-paired frequencies and Hessian elements (48 residuals), frequencies only (3), Hessian
 * elements only (45), and molecule 2 without targets (0). After one evaluation (the pairing):
 *  (a) the list call's residuals and Jacobian equal the one-molecule calls' concatenated in list
 *      order, bit for bit (memcmp), for all molecules in order and for a subset in another order,
 *      with every slot and with a slot list, at HESSFIT_NUM_THREADS=1 and 2 (the one-molecule
 *      references made at 1; the core reads the variable at every call);
 *  (b) an empty list, a molecule out of range or listed twice, a bad slot and wrong output sizes
 *      fail with the status and a message naming the item.
 */
#define _POSIX_C_SOURCE 200809L
#include "hessfit_fitting.h"
#include "test_util.h"
#include "triatomics.h"
#include <stdlib.h>
#include <string.h>

#define NMOL 9
#define NP (3 * NMOL)
#define DIM 9
#define NSLOT TRIATOMIC_SLOTS
#define NFREQ 3
#define NHESS (DIM * (DIM + 1) / 2)
#define MAX_RES (NMOL * (NFREQ + NHESS))

static int has_freq(int m) { return m % 3 != 2; }
static int has_hess(int m) { return m % 3 != 1 && m != 2; }
static long long n_res_of(int m) { return (has_freq(m) ? NFREQ : 0) + (has_hess(m) ? NHESS : 0); }

/* The set with its objective (above), evaluated once (the pairing). */
static void setup_create(triatomic_set *s, const char *platform, const double *pos)
{
    triatomic_set_create(s, NMOL, platform, pos);
    static const double freq_targets[NFREQ] = {1500.0, 3600.0, 3800.0}, freq_weights[NFREQ] = {1.0, 0.5, 0.25};
    static double hess_targets[DIM * DIM], hess_weights[DIM * DIM];
    for (int i = 0; i < DIM * DIM; i++)
        hess_weights[i] = 1e-3;
    hessfit_molecule_objective mol[NMOL];
    for (int m = 0; m < NMOL; m++)
        triatomic_objective(&mol[m], has_freq(m) ? freq_targets : NULL, freq_weights, NFREQ,
                            has_hess(m) ? hess_targets : NULL, hess_weights);
    HF_OK(hessfit_force_set_hessian_objective(s->force, s->context, mol, NMOL, hessfit_frequency_factor_kj_mol_nm2_amu()));
    long long n_res = 0;
    HF_OK(hessfit_force_get_hessian_objective_size(s->force, s->context, &n_res, NULL));
    long long expected = 0;
    for (int m = 0; m < NMOL; m++)
        expected += n_res_of(m);
    CHECK(n_res == expected, "%lld residuals, expected %lld", n_res, expected);
    double loss, res[MAX_RES];
    HF_OK(hessfit_force_compute_hessian_objective(s->force, s->context, &loss, NULL, 0, res, n_res));
}

/* The one-molecule calls' results: per molecule its residuals and Jacobian, all slots and the list. */
typedef struct {
    double res[NMOL][NFREQ + NHESS];
    double jac[2][NMOL][NSLOT * (NFREQ + NHESS)];
} references;

static const int slot_list[2] = {3, 0};

static void one_molecule_calls(triatomic_set *s, references *ref)
{
    for (int m = 0; m < NMOL; m++)
        for (int with_list = 0; with_list < 2; with_list++) {
            const int n_slots = with_list ? 2 : NSLOT;
            HF_OK(hessfit_force_compute_hessian_objective_jacobian(s->force, s->context, m, with_list ? slot_list : NULL,
                                                                   with_list ? 2 : 0, ref->res[m], n_res_of(m),
                                                                   ref->jac[with_list][m], n_slots * n_res_of(m)));
        }
}

/* (a) for one list: the list call against the references, memcmp. */
static void check_list(triatomic_set *s, const references *ref, const int *list, int n_list, const char *what)
{
    for (int with_list = 0; with_list < 2; with_list++) {
        const int n_slots = with_list ? 2 : NSLOT;
        long long n_res = 0;
        for (int p = 0; p < n_list; p++)
            n_res += n_res_of(list[p]);
        double res[MAX_RES], jac[NSLOT * MAX_RES], want_res[MAX_RES], want_jac[NSLOT * MAX_RES];
        long long at = 0;
        for (int p = 0; p < n_list; p++) {
            const long long n = n_res_of(list[p]);
            memcpy(want_res + at, ref->res[list[p]], (size_t)n * sizeof(double));
            memcpy(want_jac + at * n_slots, ref->jac[with_list][list[p]], (size_t)(n * n_slots) * sizeof(double));
            at += n;
        }
        memset(res, 0xff, sizeof res); /* NaN: an entry left unwritten shows */
        memset(jac, 0xff, sizeof jac);
        HF_OK(hessfit_force_compute_hessian_objective_jacobians(s->force, s->context, list, n_list,
                                                                with_list ? slot_list : NULL, with_list ? 2 : 0, res,
                                                                n_res, jac, n_slots * n_res));
        CHECK(memcmp(res, want_res, (size_t)n_res * sizeof(double)) == 0, "%s (%s): residuals differ from the "
              "one-molecule calls'", what, with_list ? "slot list" : "all slots");
        CHECK(memcmp(jac, want_jac, (size_t)(n_res * n_slots) * sizeof(double)) == 0, "%s (%s): the Jacobian differs "
              "from the one-molecule calls'", what, with_list ? "slot list" : "all slots");
        printf("  %s, %s: %lld residuals, %lld Jacobian entries bitwise equal\n", what,
               with_list ? "slot list" : "all slots", n_res, n_res * n_slots);
    }
}

/* (b) */
static void check_errors(triatomic_set *s)
{
    double res[MAX_RES], jac[NSLOT * MAX_RES];
    const int out_of_range[2] = {0, NMOL}, negative[1] = {-1}, twice[3] = {1, 4, 1}, two[2] = {0, 1};
    const int bad_slots[2] = {0, NSLOT + 3};
    const long long n01 = n_res_of(0) + n_res_of(1);
    test_expect_error(hessfit_force_compute_hessian_objective_jacobians(s->force, s->context, two, 0, NULL, 0, res, 0,
                                                                        jac, 0),
                      HESSFIT_ERROR_SIZE, "molecule list is empty", NULL, "an empty list");
    test_expect_error(hessfit_force_compute_hessian_objective_jacobians(s->force, s->context, out_of_range, 2, NULL, 0,
                                                                        res, n01, jac, NSLOT * n01),
                      HESSFIT_ERROR_SIZE, "molecule 9 (entry 1)", "outside 0..8", "a molecule out of range");
    test_expect_error(hessfit_force_compute_hessian_objective_jacobians(s->force, s->context, negative, 1, NULL, 0, res,
                                                                        n_res_of(0), jac, NSLOT * n_res_of(0)),
                      HESSFIT_ERROR_SIZE, "molecule -1 (entry 0)", NULL, "a negative molecule");
    test_expect_error(hessfit_force_compute_hessian_objective_jacobians(s->force, s->context, twice, 3, NULL, 0, res,
                                                                        n01 + n_res_of(4), jac, NSLOT * (n01 + n_res_of(4))),
                      HESSFIT_ERROR_VALUE, "molecule 1 is listed twice", "(entry 2)", "a molecule listed twice");
    test_expect_error(hessfit_force_compute_hessian_objective_jacobians(s->force, s->context, two, 2, bad_slots, 2, res,
                                                                        n01, jac, 2 * n01),
                      HESSFIT_ERROR_SIZE, "slot 7 (entry 1)", NULL, "a slot out of range");
    test_expect_error(hessfit_force_compute_hessian_objective_jacobians(s->force, s->context, two, 2, NULL, 0, res,
                                                                        n01 - 1, jac, NSLOT * n01),
                      HESSFIT_ERROR_SIZE, "'residuals'", "expected 51", "a short residual array");
    test_expect_error(hessfit_force_compute_hessian_objective_jacobians(s->force, s->context, two, 2, NULL, 0, res, n01,
                                                                        jac, NSLOT * n01 + 1),
                      HESSFIT_ERROR_SIZE, "'jacobian'", "expected 204", "a long Jacobian array");
    test_expect_error(hessfit_force_compute_hessian_objective_jacobians(s->force, s->context, NULL, 2, NULL, 0, res, n01,
                                                                        jac, NSLOT * n01),
                      HESSFIT_ERROR_NULL_ARGUMENT, "'molecules'", NULL, "a NULL list");
}

int main(int argc, char **argv)
{
    const char *platform = test_platform_name(argc, argv);
    test_load_plugins();
    test_seed(20261128ULL);
    double pos[3 * NP];
    triatomic_positions(pos, NMOL);
    triatomic_set s;
    setup_create(&s, platform, pos);
    static references ref;
    CHECK(setenv("HESSFIT_NUM_THREADS", "1", 1) == 0, "setenv");
    one_molecule_calls(&s, &ref);
    const int all[NMOL] = {0, 1, 2, 3, 4, 5, 6, 7, 8}, subset[5] = {7, 4, 2, 0, 5};
    for (int threads = 1; threads <= 2; threads++) {
        CHECK(setenv("HESSFIT_NUM_THREADS", threads == 1 ? "1" : "2", 1) == 0, "setenv");
        printf("%s, HESSFIT_NUM_THREADS=%d:\n", platform, threads);
        check_list(&s, &ref, all, NMOL, "all molecules in order");
        check_list(&s, &ref, subset, 5, "molecules 7, 4, 2, 0, 5");
        check_list(&s, &ref, subset + 3, 1, "molecule 0 alone");
    }
    check_errors(&s);
    triatomic_set_destroy(&s);
    printf("test_jacobian_list: all checks passed\n");
    return 0;
}
