#ifndef HESSFIT_TEST_UTIL_H_
#define HESSFIT_TEST_UTIL_H_
/* Shared helpers for the CTest programs: checks that stay on in release builds, plugin loading,
 * contexts on a named platform, and finite-difference helpers. */
#include "hessfit.h"
#include "hessfit_status.h"
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

/* A check that is never compiled out: prints file:line and the formatted reason, exits 1. */
#define CHECK(cond, ...)                                                              \
    do {                                                                              \
        if (!(cond)) {                                                                \
            fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond);  \
            fprintf(stderr, __VA_ARGS__);                                             \
            fprintf(stderr, "\n");                                                    \
            exit(1);                                                                  \
        }                                                                             \
    } while (0)

/* |a - b| <= tol * max(|scale|, tiny): a relative check against a stated scale. */
#define CHECK_CLOSE(a, b, tol, scale, what)                                                   \
    do {                                                                                      \
        double ca_ = (a), cb_ = (b), cs_ = fabs(scale) > 1e-300 ? fabs(scale) : 1e-300;       \
        CHECK(fabs(ca_ - cb_) <= (tol) * cs_, "%s: %.17g vs %.17g (diff %.3g, scale %.3g)",  \
              (what), ca_, cb_, fabs(ca_ - cb_), cs_);                                        \
    } while (0)

/* A hessfit call that must succeed. */
#define HF_OK(call)                                                                           \
    do {                                                                                      \
        HessFit_Status st_ = (call);                                                          \
        CHECK(st_ == HESSFIT_SUCCESS, "%s -> %s: %s", #call, hessfit_status_string(st_),      \
              hessfit_last_error());                                                          \
    } while (0)

/* A hessfit call that must fail with the given status and a non-empty message. */
#define HF_FAILS(call, status)                                                                \
    do {                                                                                      \
        HessFit_Status st_ = (call);                                                          \
        CHECK(st_ == (status), "%s -> %s (expected %s): %s", #call, hessfit_status_string(st_), \
              hessfit_status_string(status), hessfit_last_error());                           \
        CHECK(hessfit_last_error()[0] != '\0', "%s gave no message", #call);                  \
        printf("  expected error: %s\n", hessfit_last_error());                               \
    } while (0)

/* A fitting-layer call (hf_status) that must succeed. */
#define HF_CALL(call)                                                                          \
    do {                                                                                       \
        hf_status hst_ = (call);                                                               \
        CHECK(hst_ == HF_SUCCESS, "%s -> %s: %s", #call, hf_status_string(hst_), hf_last_error()); \
    } while (0)

/* argv[1] if given, else "Reference". */
const char *test_platform_name(int argc, char **argv);
/* Load the hessfit plugins from the build tree's plugin directory (once; failures are fatal). */
void test_load_plugins(void);
/* A path under the source tree, e.g. test_source_path("examples/data/ch3f/ch3f.xyz"). */
const char *test_source_path(const char *relative);
/* The same in a malloc'ed string the caller frees (test_source_path's buffers are reused). */
char *test_source_path_dup(const char *relative);

/* A Context on the named platform (double precision where the platform has the property)
 * with a VerletIntegrator(dt_ps) and positions pos_nm (3 n). */
OpenMM_Context *test_create_context(OpenMM_System *system, const char *platform, const double *pos_nm,
                                    int n, double dt_ps, OpenMM_Integrator **integrator);
void test_set_positions(OpenMM_Context *context, const double *pos_nm, int n);
/* Potential energy (kJ/mol) and, if forces != NULL, forces (3 n) of the force groups in the mask. */
double test_energy_forces(OpenMM_Context *context, int groups_mask, double *forces, int n);

/* max_i |a_i - b_i| and max_i |b_i|. */
double test_max_abs_diff(const double *a, const double *b, size_t n);
double test_max_abs(const double *a, size_t n);

/* Deterministic random numbers in [0, 1) (xorshift64*), reproducible across platforms. */
double test_random(void);
void test_seed(unsigned long long seed);

/* Rotate 3n coordinates in place by the rotation about axis (unnormalised) through angle rad,
 * about the origin. */
void test_rotate(double *pos, int n, const double axis[3], double angle);

#endif
