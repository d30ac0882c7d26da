#ifndef HESSFIT_TEST_UTIL_H_
#define HESSFIT_TEST_UTIL_H_
/* Shared helpers for the CTest programs: checks that stay on in release builds, plugin loading,
 * contexts on a named platform, finite-difference and geometry helpers, a private temporary
 * directory with file and text-mutation helpers, the checks of an expected failure, a runner for
 * the built programs, and the training-set fixtures several tests share. */
#include "hessfit.h"
#include "hessfit_forcefield.h"
#include "hessfit_molecule.h"
#include "hessfit_status.h"
#include "hessfit_typing.h"
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

/* A check that records the failure (test_soft_failures) and goes on, so one run reports every bad
 * case; end the test with test_soft_finish. */
extern int test_soft_failures;
#define SOFT_CHECK(cond, ...)                                                         \
    do {                                                                              \
        if (!(cond)) {                                                                \
            fprintf(stderr, "%s:%d: FAILED: ", __FILE__, __LINE__);                   \
            fprintf(stderr, __VA_ARGS__);                                             \
            fprintf(stderr, "\n");                                                    \
            test_soft_failures++;                                                     \
        }                                                                             \
    } while (0)
/* The exit status after SOFT_CHECKs: "<name>: OK" and 0, or the failure count and 1. */
int test_soft_finish(const char *name);

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
        hessfit_status st_ = (call);                                                          \
        CHECK(st_ == HESSFIT_SUCCESS, "%s -> %s: %s", #call, hessfit_status_string(st_),      \
              hessfit_last_error());                                                          \
    } while (0)

/* A hessfit call that must fail with the given status and a non-empty message. */
#define HF_FAILS(call, status)                                                                \
    do {                                                                                      \
        hessfit_status st_ = (call);                                                          \
        CHECK(st_ == (status), "%s -> %s (expected %s): %s", #call, hessfit_status_string(st_), \
              hessfit_status_string(status), hessfit_last_error());                           \
        CHECK(hessfit_last_error()[0] != '\0', "%s gave no message", #call);                  \
        printf("  expected error: %s\n", hessfit_last_error());                               \
    } while (0)

/* A fitting-layer call (hessfit_status) that must succeed. */
#define HF_CALL(call)                                                                          \
    do {                                                                                       \
        hessfit_status hst_ = (call);                                                               \
        CHECK(hst_ == HESSFIT_SUCCESS, "%s -> %s: %s", #call, hessfit_status_string(hst_), hessfit_last_error()); \
    } while (0)

/* The exit status CTest counts as "skipped" (SKIP_RETURN_CODE in tests/CMakeLists.txt). */
#define TEST_SKIPPED 77
/* argv[1] if given, else "Reference"; any other platform must be usable (test_require_platform). */
const char *test_platform_name(int argc, char **argv);
/* The named platform must exist; CUDA without a driver or a device exits TEST_SKIPPED. */
void test_require_platform(const char *name);
/* Load OpenMM's own platform plugins (tolerating failures), then the hessfit plugins from the
 * build tree's plugin directory (once; failures are fatal). */
void test_load_plugins(void);
/* A path under the source tree, e.g. test_source_path("examples/data/ch3f/ch3f.xyz"). */
const char *test_source_path(const char *relative);
/* The same in a malloc'ed string the caller frees (test_source_path's buffers are reused). */
char *test_source_path_dup(const char *relative);
/* The repository's .venv/bin/python (malloc'ed), for the tests that check exports in stock OpenMM;
 * when it is missing, prints why and exits TEST_SKIPPED. */
char *test_venv_python(void);

/* A Context on the named platform (double precision where the platform has the property)
 * with a VerletIntegrator(dt_ps) and positions pos_nm (3 n). */
OpenMM_Context *test_create_context(OpenMM_System *system, const char *platform, const double *pos_nm,
                                    int n, double dt_ps, OpenMM_Integrator **integrator);
/* The same with the Precision property ("single", "mixed", "double"; NULL: the platform's default),
 * created through hessfit_context_create (a failure is a failed check, not an abort). */
OpenMM_Context *test_create_context_precision(OpenMM_System *system, const char *platform, const char *precision,
                                              const double *pos_nm, int n, double dt_ps, OpenMM_Integrator **integrator);
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

/* |x_i - x_j| and the angle i-j-k (rad, j the vertex) of 3n coordinates. */
double test_distance(const double *x, int i, int j);
double test_angle(const double *x, int i, int j, int k);

/* ---- geometries for the term tests (nm, rad) ---- */
#define TEST_MAX_CHAIN 64
/* IUPAC dihedral i-j-k-l: atan2(|b2| b1.(b2 x b3), (b1 x b2).(b2 x b3)), b1 = xj - xi, ... */
double test_dihedral(const double *x, int i, int j, int k, int l);
/* a wrapped into [-pi, pi]. */
double test_wrap_pi(double a);
/* Uniform in [lo, hi) from test_random(). */
double test_uniform(double lo, double hi);
/* Z-matrix placement (NeRF): atom i at distance r from c, angle i-c-b = theta, dihedral a-b-c-i =
 * phi (IUPAC); c < 0: the origin; b < 0: along +x from c; a < 0: a reference point 1 nm along +y
 * from b. Planar cases (theta or phi 0 or +-pi) come out exactly planar. */
void test_place(double *pos, int i, int c, int b, int a, double r, double theta, double phi);
/* Chain 0-1-2-...: r[i] bond (i-1, i), th[i] angle (i-2, i-1, i), ph[i] dihedral (i-3 .. i). */
void test_chain(double *pos, int n, const double *r, const double *th, const double *ph);
/* A random chain of n <= TEST_MAX_CHAIN atoms: bonds in [rlo, rhi], angles 75-150 deg. */
void test_random_chain(double *pos, int n, double rlo, double rhi);
/* Star around atom 0: bonds r[1..3]; angle 2-0-1 = th2, angle 3-0-2 = th3, dihedral 1-2-0-3 = phi. */
void test_star(double *pos, const double *r, double th2, double th3, double phi);
/* A random rigid motion (rotation about a random axis, translation up to 0.5 nm). */
void test_random_pose(double *pos, int n);
/* The smallest distance between two of n particles. */
double test_min_pair_distance(const double *pos, int n);

/* The largest sum_k score[k][perm[k]] over all permutations perm of n columns (score row-major
 * n x n; brute force by Heap's algorithm, n <= 9). */
double test_best_assignment(const double *score, int n);

/* Seconds on the monotonic clock (differences are wall times). */
double test_now_s(void);

/* ---- the test's own temporary directory ------------------------------------------------------ */

/* "$TMPDIR/hessfit_<program>_XXXXXX" (TMPDIR unset: /tmp), made with mkdtemp on first use and
 * removed with everything in it when the program exits, also after a failed CHECK. With
 * HESSFIT_TEST_KEEP set in the environment it is kept and its path printed. */
const char *test_temp_dir(void);
/* test_temp_dir()/name; the string stays valid until the program exits. */
const char *test_temp_path(const char *name);
/* Remove everything inside the directory (it stays). */
void test_temp_clear(void);
/* Every entry of the directory is one of names[0..n) (no file left behind); returns the number
 * of entries. */
int test_temp_check_only(const char *const *names, int n);
/* The same with the names test_temp_path has handed out. */
int test_temp_check_known(void);

/* Write n bytes (plain, or gzip-compressed with zlib) to test_temp_path(name), replacing any file
 * there; returns that path. */
const char *test_write_file(const char *name, const void *data, size_t n);
const char *test_write_gz(const char *name, const void *data, size_t n);
/* test_write_file(name, text, strlen(text)). */
const char *test_write_text(const char *name, const char *text);

/* The whole file as it is on disk (test_load_file) or decompressed when it is gzip
 * (test_load_gunzip; zlib reads a plain file as it is): malloc'ed, NUL-terminated after *size
 * bytes (size may be NULL). A file that cannot be read fails the test. */
char *test_load_file(const char *path, size_t *size);
char *test_load_gunzip(const char *path, size_t *size);

/* ---- mutations of a text (each result malloc'ed; what must be there is CHECKed) --------------- */

/* text with its bytes [from, to) replaced by repl. */
char *test_splice(const char *text, size_t from, size_t to, const char *repl);
/* text with the first occurrence of old at or after byte start replaced by repl; *line (if not
 * NULL) is the 1-based line of that occurrence. */
char *test_replace_first(const char *text, size_t start, const char *old, const char *repl, int *line);
/* text with its lines first..last (1-based, inclusive) replaced by lines, taken as it is (end it
 * with "\n"): "" deletes them, last = first - 1 inserts before line first. */
char *test_replace_lines(const char *text, int first, int last, const char *lines);
/* Byte offset of the start of 1-based line `line` (one past the last line: the end of the text). */
size_t test_line_offset(const char *text, int line);
/* 1-based line holding byte offset off. */
int test_line_of(const char *text, size_t off);

#define TEST_LINE_EXACT 1 /* the whole line is s, not only a part of it */
#define TEST_LINE_LAST 2  /* the last such line, not the first */
/* The 1-based number of the first (TEST_LINE_LAST: last) line at or after line `from` that
 * contains s (TEST_LINE_EXACT: that is s); there must be one. */
int test_find_line(const char *text, int from, const char *s, int flags);

/* ---- expected failures ------------------------------------------------------------------------ */

#define TEST_ANY_LINE (-1)
/* A call that must fail: got != HESSFIT_SUCCESS and, unless want is HESSFIT_SUCCESS (any failure), got ==
 * want; the message (hessfit_last_error) holds part1 and part2 where they are not NULL. The message
 * is printed after what (test_set_quiet(1) stops that). */
void test_expect_error(hessfit_status got, hessfit_status want, const char *part1, const char *part2, const char *what);
/* The same for a call on a file: the message also names path, followed by ":line:" when line > 0
 * or by ':' and a line number when line is TEST_ANY_LINE. */
void test_expect_file_error(hessfit_status got, hessfit_status want, const char *path, int line, const char *part1,
                            const char *part2, const char *what);
/* read(path) on an output filled with garbage must fail as test_expect_file_error says and leave
 * the output zeroed. */
void test_expect_read_failure(hessfit_status (*read)(const char *path, hessfit_molecule *mol), const char *path, hessfit_status want,
                              int line, const char *part1, const char *part2, const char *what);
void test_expect_list_failure(hessfit_status (*read)(const char *path, hessfit_molecule_list *list), const char *path,
                              hessfit_status want, int line, const char *part1, const char *part2, const char *what);
/* Whether the expected-failure checks print their message (default: they do). */
void test_set_quiet(int quiet);

/* ---- running a built program ------------------------------------------------------------------ */

typedef struct test_run_result {
    int status;      /* exit code */
    char *out;       /* stdout, NUL-terminated, malloc'ed (the caller frees it) */
    size_t out_len;
    char err[16384]; /* stderr, NUL-terminated (its first 16383 bytes) */
    double seconds;  /* wall time */
} test_run_result;

/* The program `name` beside the test executable argv0 (or in ../bin from there); there must be one. */
const char *test_program_path(const char *argv0, const char *name);
/* Run "'program' args" with /bin/sh (args already shell-quoted; they may redirect), capturing
 * stdout, stderr and the exit code; the program must exit normally. */
test_run_result test_run_program(const char *program, const char *args);
/* The run exited with status and, when err_part is not NULL, its stderr holds err_part; prints
 * what, the status and the first line of stderr. */
void test_expect_exit(const test_run_result *r, int status, const char *err_part, const char *what);
/* Its stdout holds text. */
void test_expect_output(const test_run_result *r, const char *text, const char *what);
/* s in single quotes for /bin/sh (a quote inside as '\''), in out of size bytes (must fit). */
void test_shell_quote(char *out, size_t size, const char *s);

/* ---- HessianForce test molecules ---------------------------------------------------------------- */

/* The star molecule of the multi-molecule force tests, on global atoms g[0..4]: centre g[0] bonded
 * to g[1], g[2], g[3], and g[4] on g[3] (bond slots kb, r0), angles 1-0-2, 2-0-3 and 0-3-4 (slots
 * ka, th0). Its four bonds as atom pairs go to bonds[8] (for the exclusions the caller creates
 * after its own extra terms). */
void test_add_star_bonds_angles(hessfit_force *f, const int *g, int kb, int r0, int ka, int th0, int bonds[8]);

/* ---- training-set fixtures -------------------------------------------------------------------- */

/* q2mm's CH3F Seminario start (examples/data/sn2/ch3f-seminario-start.txt: "bond A B k r0" and
 * "angle A B C k theta0" lines in q2mm's canonical units, which are hessfit's, and the MM
 * frequencies q2mm computed there) as a small force field typed by element symbol. ff.params
 * points into params and ff.path is the caller's path: do not copy the struct or free ff. */
typedef struct test_ch3f_start {
    hessfit_forcefield ff;
    hessfit_ff_param params[4];
    double reference[9]; /* q2mm's MM frequencies (cm^-1) */
    int n_reference;
} test_ch3f_start;
void test_read_ch3f_start(const char *path, test_ch3f_start *out);

/* q2mm's CH3F example (examples/data/sn2): the QM structure and Hessian with element symbols as
 * atom types, typed (10 terms) with the Seminario start read from ff_path, and a generic copy with
 * one H moved by (+0.04, 0, -0.03) A (C3v broken, so its E modes are not degenerate). The struct
 * must not be copied (ff.ff points into it); test_free_ch3f frees it. */
typedef struct test_ch3f_set {
    test_ch3f_start ff;
    char *ff_path;
    hessfit_molecule mol;
    hessfit_molecule moved;
    hessfit_topology topo;
    hessfit_typed_molecule typed;
} test_ch3f_set;
void test_load_ch3f(test_ch3f_set *s);
void test_free_ch3f(test_ch3f_set *s);

/* The nine rh-enamide structures of the .mmo typed with mm3.fld, the torsions MacroModel left out
 * (q2mm's rh-enamide example) given as "no term": ff, mmo and typed[0..8] are the caller's to free. */
#define TEST_RH_MOLECULES 9
void test_type_rh_enamide(hessfit_forcefield *ff, hessfit_molecule_list *mmo, hessfit_typed_molecule typed[TEST_RH_MOLECULES]);
/* The base names of the same structures' Jaguar files, in the .mmo's order:
 * examples/data/rh-enamide/jaguar/<name>.01.in.gz (Hessian, geometry) and <name>.out.gz (energy). */
extern const char *const test_rh_jaguar[TEST_RH_MOLECULES];
/* The constructed hydrogen-bond case of the MM3* tests (the nine structures have none): mm3.fld's
 * first 2-atom hydrogen-bond line (H1 O3, descriptor SX00, C/100 90, D/100 40; CHECKed) read as H1
 * O2 without the descriptor, so the reduced C-H and Rh-H hydrogens 1-5 or farther from the amide O2
 * within 4 A bond to it. Returns that row of ff, changed; *saved is the original, to put back. */
hessfit_fld_row *test_rh_hbond_case(hessfit_forcefield *ff, hessfit_fld_row *saved);

#endif
