/*
 * MPI (issue 16, docs/mpi.md): the objective in fixed blocks spread over ranks gives the same bits
 * with any number of ranks, and a failing rank stops the run cleanly. Input:
 * tests/data/fit/mpi-rh-enamide.fit, the nine rh-enamide structures with conformer energies
 * (groups {2, 3}, {4, 5}, {6..9}: no block may split them) and `blocks = 4`, a few evaluations.
 *
 *  (a) loss, gradient and residuals of hf_shards_evaluate, and LM's normal equations (loss, J^T r,
 *      J^T J of hf_shards_normal_equations), at the start values and at values moved by 1 %: this
 *      program as one process (no mpirun), and under `mpirun -np K` for K = 1, 2, 3 (`worker` mode:
 *      rank 0 writes the arrays to a file): the files are byte-identical. The one-process values
 *      agree with the whole set's one-Context objective (hessfit_objective_evaluate and
 *      hessfit_objective_normal_equations: other sums, so to round-off: each array to 1e-12 of its
 *      largest; measured: loss 2e-16, gradient 3.7e-15, J^T r 9.4e-17, J^T J 1.6e-16, the residuals
 *      identical), and with `blocks = 1` the blocks' normal equations are the whole set's, bit for
 *      bit (the same call).
 *  (b) `hessfit fit` (LM, the default) as one process and under `mpirun -np 2` and `-np 3`:
 *      fitted.fld, fitted.xml, a fitted PDB, checkpoint.txt, targets.txt and report.json (with the
 *      uncertainties from LM's normal equations; its wall time aside) are byte-identical; the 2-rank checkpoint resumed
 *      (--resume) on 3 ranks and the one-process checkpoint resumed in one process, to 7
 *      evaluations, write the same bytes too; with `optimizer = lbfgs` (an NLopt method) one process
 *      and 2 ranks write the same bytes.
 *  (d) `platform = OpenCL`, `device = auto` (PoCL's one device: every rank takes device 0): the
 *      objective's loss, gradient and residuals from one process and from 2 ranks are byte-identical.
 *  (e) stop signals: SIGTERM to one rank stops a 2-rank fit cleanly (exit 0, outputs, checkpoint);
 *      after SIGINT to mpirun (which sends every rank SIGTERM, then SIGKILL) the job ends; both
 *      checkpoints resume.
 *  (c) HESSFIT_TEST_FAIL_RANK=1 (test builds: rank 1's first block fails at evaluation 4) under
 *      `timeout`: exit status 1 (not a hang), one message on stderr naming the rank, its host, the
 *      block's structures and the molecule, and the checkpoint holds the best point of the two
 *      evaluations before.
 * Three CTest entries: test_mpi_fit (a), test_mpi_fit_cli (b, e, c), test_mpi_fit_opencl (d). Skipped (77) in a build
 * without MPI (HESSFIT_WITH_MPI off).
 */
#define _POSIX_C_SOURCE 200809L
#include "test_util.h"

#include "hf_comm.h"
#include "hf_shards.h"
#include "hf_training_set.h"

#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef HESSFIT_TEST_MPIEXEC
int main(void)
{
    printf("test_mpi_fit: skipped (built without MPI: HESSFIT_WITH_MPI is off)\n");
    return TEST_SKIPPED;
}
#else

#define INPUT HESSFIT_SOURCE_DIR "/tests/data/fit/mpi-rh-enamide.fit"
#define MPIRUN HESSFIT_TEST_MPIEXEC " --oversubscribe --allow-run-as-root -np "
#define TIMEOUT_S "300"

/* Doubles of one pass of (a): loss, gradient, residuals; loss, J^T r, J^T J. */
static size_t pass_size(int n, long long n_res)
{
    return (size_t)(1 + n + n_res) + (size_t)(1 + n + n * n);
}

/* The free values of pass 0 (the start) and pass 1 (moved by 1 %). */
static void pass_values(const hf_training_set *set, int pass, double *x)
{
    for (int i = 0; i < set->n_free; i++)
        x[i] = set->x_start[i] * (pass == 0 ? 1.0 : 1.0 + 0.01 * ((i % 3) - 1));
}

/* (d) on rank 0 of the OpenCL worker: pass 0's loss, gradient and residuals alone into out, and every
 * rank's device: OpenCL device 0, the only one of PoCL, whatever the local rank. */
static void opencl_pass(hf_shards *shards, const hf_training_set *set, const char *out)
{
    const int n = set->n_free;
    const long long n_res = hessfit_objective_n_residuals(set->objective);
    const size_t size = (size_t)(1 + n + n_res);
    double *buf = malloc(size * sizeof *buf);
    CHECK(buf != NULL, "no memory");
    for (int r = 0; r < hf_comm_size(); r++) {
        printf("  %s\n", hf_shards_device(shards, r));
        CHECK(strstr(hf_shards_device(shards, r), "OpenCL device 0 '") != NULL, "rank %d: %s", r,
              hf_shards_device(shards, r));
    }
    HF_OK(hf_shards_evaluate(shards, set->x_start, &buf[0], buf + 1, buf + 1 + n));
    FILE *f = fopen(out, "wb");
    CHECK(f != NULL && fwrite(buf, sizeof *buf, size, f) == size && fclose(f) == 0, "cannot write %s", out);
    free(buf);
}

/* (a) on every rank: load, the blocks, two passes on rank 0 written to out (loss, gradient,
 * residuals; the normal equations). With input (d): that input, opencl_pass. */
static int worker(int argc, char **argv, const char *out, const char *input)
{
    hf_training_set set;
    hf_training_set_options topt = {NULL, NULL, "-out", 0};
    hf_shards *shards = NULL;
    CHECK(hf_comm_init(&argc, &argv) == HESSFIT_SUCCESS, "MPI_Init: %s", hessfit_last_error());
    const int rank = hf_comm_rank();
    HF_OK(hf_shards_load(input != NULL ? input : INPUT, &topt, &set));
    HF_OK(hf_shards_create(&set, &shards));
    if (rank != 0) {
        HF_OK(hf_shards_serve(shards));
    } else if (input != NULL) {
        opencl_pass(shards, &set, out);
        HF_OK(hf_shards_finish(shards, HESSFIT_SUCCESS));
    } else {
        const int n = set.n_free;
        const long long n_res = hessfit_objective_n_residuals(set.objective);
        const size_t size = 2 * pass_size(n, n_res);
        double *x = malloc((size_t)n * sizeof *x), *buf = malloc(size * sizeof *buf);
        CHECK(x != NULL && buf != NULL, "no memory");
        for (int pass = 0; pass < 2; pass++) {
            double *at = buf + pass * pass_size(n, n_res), *ne = at + 1 + n + n_res;
            pass_values(&set, pass, x);
            HF_OK(hf_shards_evaluate(shards, x, &at[0], at + 1, at + 1 + n));
            HF_OK(hf_shards_normal_equations(shards, x, &ne[0], ne + 1 + n, ne + 1));
        }
        HF_OK(hf_shards_finish(shards, HESSFIT_SUCCESS));
        FILE *f = fopen(out, "wb");
        CHECK(f != NULL && fwrite(buf, sizeof *buf, size, f) == size && fclose(f) == 0, "cannot write %s", out);
        free(x);
        free(buf);
    }
    hf_shards_destroy(shards);
    hf_training_set_free(&set);
    hf_comm_finalize();
    return 0;
}

/* The largest |a[i] - b[i]| / the largest |b[i]| of n values. */
static double max_relative_difference(const double *a, const double *b, long long n)
{
    double big = 0.0, worst = 0.0;
    for (long long i = 0; i < n; i++) {
        big = fmax(big, fabs(b[i]));
        worst = fmax(worst, fabs(a[i] - b[i]));
    }
    return big > 0.0 ? worst / big : worst;
}

/* (a) the one-process values against the whole set's objective; with blocks = 1 the blocks' normal
 * equations are the whole set's bits. */
static void check_against_whole_set(const char *file)
{
    hf_training_set set;
    hf_training_set_options topt = {NULL, NULL, "-out", 0};
    HF_OK(hf_shards_load(INPUT, &topt, &set)); /* one process: OpenBLAS as in the fit */
    const int n = set.n_free;
    const long long n_res = hessfit_objective_n_residuals(set.objective);
    size_t size = 0;
    double *got = (double *)test_load_file(file, &size);
    CHECK(size == 2 * pass_size(n, n_res) * sizeof(double), "%s: %zu bytes, expected %zu doubles", file, size,
          2 * pass_size(n, n_res));
    double *x = malloc((size_t)n * sizeof *x), *grad = malloc((size_t)n * sizeof *grad),
           *res = malloc((size_t)n_res * sizeof *res), *ne = malloc((size_t)(1 + n + n * n) * sizeof *ne),
           *one = malloc((size_t)(1 + n + n * n) * sizeof *one);
    CHECK(x != NULL && grad != NULL && res != NULL && ne != NULL && one != NULL, "no memory");
    hf_shards *whole = NULL;
    set.settings.blocks = 1;
    HF_OK(hf_shards_create(&set, &whole));
    for (int pass = 0; pass < 2; pass++) {
        const double *at = got + pass * pass_size(n, n_res), *got_ne = at + 1 + n + n_res;
        double loss;
        pass_values(&set, pass, x);
        HF_OK(hessfit_objective_evaluate(set.objective, x, &loss, grad, res));
        CHECK_CLOSE(at[0], loss, 1e-12, fabs(loss), "loss");
        const double dg = max_relative_difference(at + 1, grad, n), dr = max_relative_difference(at + 1 + n, res, n_res);
        long long n_same = 0;
        for (long long i = 0; i < n_res; i++)
            n_same += at[1 + n + i] == res[i];
        HF_OK(hessfit_objective_normal_equations(set.objective, x, &ne[0], ne + 1 + n, ne + 1));
        const double djtr = max_relative_difference(got_ne + 1, ne + 1, n),
                     djtj = max_relative_difference(got_ne + 1 + n, ne + 1 + n, (long long)n * n);
        printf("  pass %d: loss %.17g (whole set %.17g), gradient max |diff| / max |g| %.2g; residuals: %lld of %lld "
               "identical, max |diff| / max |r| %.2g; normal equations: loss %.17g (whole set %.17g), J^T r %.2g, "
               "J^T J %.2g\n",
               pass, at[0], loss, dg, n_same, n_res, dr, got_ne[0], ne[0], djtr, djtj);
        CHECK(dg <= 1e-12 && dr <= 1e-12, "pass %d: the gradient or the residuals differ from the whole set's", pass);
        CHECK_CLOSE(got_ne[0], ne[0], 1e-12, fabs(ne[0]), "normal equations' loss");
        CHECK(djtr <= 1e-12 && djtj <= 1e-12, "pass %d: the normal equations differ from the whole set's", pass);
        /* blocks = 1: the same call on the same objective */
        HF_OK(hf_shards_normal_equations(whole, x, &one[0], one + 1 + n, one + 1));
        CHECK(memcmp(one, ne, (size_t)(1 + n + n * n) * sizeof *ne) == 0,
              "pass %d: blocks = 1: the normal equations are not the whole set's bits", pass);
    }
    printf("  blocks = 1: the normal equations are the whole set's, bit for bit\n");
    hf_shards_destroy(whole);
    free(x);
    free(grad);
    free(res);
    free(ne);
    free(one);
    free(got);
    hf_training_set_free(&set);
}

/* Cuts the line holding "wall_time_s" (report.json's only clock reading) out of text. */
static void cut_wall_time(char *text, size_t *n)
{
    char *at = strstr(text, "\"wall_time_s\"");
    if (at == NULL)
        return;
    char *begin = at, *end = strchr(at, '\n');
    while (begin > text && begin[-1] != '\n')
        begin--;
    end = end != NULL ? end + 1 : text + *n;
    memmove(begin, end, (size_t)(text + *n - end) + 1);
    *n -= (size_t)(end - begin);
}

static void same_file(const char *a, const char *b)
{
    size_t na = 0, nb = 0;
    char *da = test_load_file(a, &na), *db = test_load_file(b, &nb);
    cut_wall_time(da, &na);
    cut_wall_time(db, &nb);
    CHECK(na == nb && memcmp(da, db, na) == 0, "%s and %s differ (%zu and %zu bytes)", a, b, na, nb);
    free(da);
    free(db);
}

/* Every output of (b) in directories a and b the same bytes (report.json without its wall time). */
static void same_outputs(const char *a, const char *b)
{
    static const char *const outputs[] = {"fitted.fld",  "fitted.xml", "fitted-5.pdb",
                                          "checkpoint.txt", "targets.txt", "report.json"};
    for (size_t f = 0; f < sizeof outputs / sizeof outputs[0]; f++) {
        char pa[4096], pb[4096];
        snprintf(pa, sizeof pa, "%s/%s", a, outputs[f]);
        snprintf(pb, sizeof pb, "%s/%s", b, outputs[f]);
        same_file(pa, pb);
    }
}

/* INPUT as test_temp_path(name), its paths absolute, its line `max-evaluations = 4` replaced by
 * `with`. */
static const char *input_variant(const char *name, const char *with)
{
    char *text = test_load_file(INPUT, NULL), out[16384];
    const char *rel = "../../../examples", *limit = "max-evaluations = 4";
    size_t at = 0;
    int replaced = 0;
    for (const char *p = text; *p != '\0' && at < sizeof out - 256;) {
        if (strncmp(p, rel, strlen(rel)) == 0) {
            at += (size_t)snprintf(out + at, sizeof out - at, "%s/examples", HESSFIT_SOURCE_DIR);
            p += strlen(rel);
        } else if (strncmp(p, limit, strlen(limit)) == 0) {
            at += (size_t)snprintf(out + at, sizeof out - at, "%s", with);
            p += strlen(limit);
            replaced = 1;
        } else
            out[at++] = *p++;
    }
    out[at] = '\0';
    free(text);
    CHECK(replaced, "no `%s` line in %s", limit, INPUT);
    return test_write_text(name, out);
}

/* (d) platform = OpenCL (PoCL's one device here): the objective's loss, gradient and residuals from one
 * process and from 2 ranks (each rank on device 0, its local rank modulo the one device) are
 * byte-identical. The input without its geometry targets: OpenMM's minimiser crashes inside PoCL. */
static int opencl(const char *self, const char *qself)
{
#ifndef HESSFIT_TEST_HAVE_OPENCL
    (void)self;
    (void)qself;
    printf("test_mpi_fit opencl: skipped (built without the OpenCL platform)\n");
    return TEST_SKIPPED;
#else
    char qin[4096], qout[4096], args[16384], cmd[20000];
    const char *in = input_variant("mpi-rh-enamide-opencl.fit", "max-evaluations = 4\nplatform = OpenCL\ndevice = auto");
    char *text = test_load_file(in, NULL), *g;
    CHECK(strstr(text, "\ngeometry = ") != NULL, "no geometry line in %s", in);
    while ((g = strstr(text, "\ngeometry = ")) != NULL) /* every geometry line */
        memmove(g + 1, strchr(g + 1, '\n') + 1, strlen(strchr(g + 1, '\n') + 1) + 1);
    in = test_write_text("mpi-rh-enamide-opencl.fit", text);
    free(text);
    test_shell_quote(qin, sizeof qin, in);
    const char *plain = test_temp_path("opencl-plain.bin");
    test_shell_quote(qout, sizeof qout, plain);
    snprintf(args, sizeof args, "worker %s %s", qout, qin);
    test_run_result r = test_run_program(self, args);
    test_expect_exit(&r, 0, NULL, "(d) OpenCL, one process");
    for (int k = 2; k <= 2; k++) {
        char name[32];
        snprintf(name, sizeof name, "opencl-np%d.bin", k);
        test_shell_quote(qout, sizeof qout, test_temp_path(name));
        snprintf(cmd, sizeof cmd, TIMEOUT_S " %s%d %s worker %s %s", MPIRUN, k, qself, qout, qin);
        r = test_run_program("timeout", cmd);
        test_expect_exit(&r, 0, NULL, "(d) OpenCL under mpirun");
        same_file(plain, test_temp_path(name));
        printf("(d) OpenCL, %d rank%s: loss, gradient and residuals byte-identical to one process (%.1f s)\n%s", k,
               k == 1 ? "" : "s", r.seconds, r.out);
    }
    printf("test_mpi_fit opencl: OK\n");
    return 0;
#endif
}

/* (e) Stop signals. Open MPI 4's mpirun answers SIGINT (Ctrl-C) or SIGTERM by sending every rank
 * SIGCONT, SIGTERM after odls_base_sigkill_timeout seconds (1 by default), SIGKILL after as many more,
 * and stops forwarding the ranks' output. Every rank catches the first SIGINT or SIGTERM, and the next
 * evaluation's agreement takes the request to rank 0, whose optimiser stops as after a one-process
 * Ctrl-C. Two runs of a 2-rank L-BFGS fit with a long budget, signalled after the first progress line:
 *   - SIGTERM to rank 1 alone: the fit stops cleanly (exit 0, the stop message, fitted.fld) and its
 *     checkpoint resumes in one process;
 *   - SIGINT to mpirun: the job ends (no hang) and its checkpoint resumes in one process. */
static void nap(void)
{
    const struct timespec t = {0, 200000000L};
    nanosleep(&t, NULL);
}

/* mpirun -np 2 hessfit fit in (a child, its output in log), once it printed its first progress line. */
static pid_t start_long_fit(const char *qhessfit, const char *qin, const char *dir, const char *log)
{
    char cmd[20000], qdir[4096], qlog[4096];
    test_shell_quote(qdir, sizeof qdir, dir);
    test_shell_quote(qlog, sizeof qlog, log);
    snprintf(cmd, sizeof cmd, "exec %s2 %s fit %s --output %s >%s 2>&1", MPIRUN, qhessfit, qin, qdir, qlog);
    pid_t pid = fork();
    CHECK(pid >= 0, "(e) fork failed");
    if (pid == 0) {
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    int status;
    for (const double t0 = test_now_s(); test_now_s() - t0 < 600.0; nap()) {
        char *text = access(log, R_OK) == 0 ? test_load_file(log, NULL) : NULL;
        const int started = text != NULL && strstr(text, "  eval ") != NULL;
        CHECK(started || waitpid(pid, &status, WNOHANG) == 0, "(e) mpirun ended before its first evaluation: %s",
              text != NULL ? text : "");
        free(text);
        if (started)
            return pid;
    }
    kill(pid, SIGKILL);
    CHECK(0, "(e) no progress line after 600 s");
    return pid;
}

/* The exit status of child pid within limit seconds (128 + signal when a signal ended it); a hang fails. */
static int end_status(pid_t pid, double limit)
{
    int status = 0, done = 0;
    for (const double t0 = test_now_s(); test_now_s() - t0 < limit && !done; nap())
        done = waitpid(pid, &status, WNOHANG) == pid;
    if (!done)
        kill(pid, SIGKILL);
    CHECK(done, "(e) mpirun did not end within %.0f s of the signal (a hang)", limit);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The rank-1 process among mpirun's children (its environment's OMPI_COMM_WORLD_RANK). */
static pid_t rank_one(pid_t mpirun)
{
    char cmd[64], line[64];
    snprintf(cmd, sizeof cmd, "pgrep -P %d", (int)mpirun);
    FILE *p = popen(cmd, "r");
    pid_t found = -1;
    while (p != NULL && found < 0 && fgets(line, sizeof line, p) != NULL) {
        char path[64], env[65536];
        snprintf(path, sizeof path, "/proc/%d/environ", atoi(line));
        FILE *f = fopen(path, "rb"); /* a /proc file: no size to seek to */
        const size_t n = f != NULL ? fread(env, 1, sizeof env - 1, f) : 0;
        if (f != NULL)
            fclose(f);
        env[n] = '\0';
        for (size_t at = 0; at < n; at += strlen(env + at) + 1)
            if (strcmp(env + at, "OMPI_COMM_WORLD_RANK=1") == 0)
                found = atoi(line);
    }
    if (p != NULL)
        pclose(p);
    CHECK(found > 0, "(e) no rank 1 among mpirun %d's children", (int)mpirun);
    return found;
}

/* The checkpoint in dir holds evaluations and resumes in one process. */
static void resumes(const char *hessfit, const char *qin, const char *dir, const char *what)
{
    char path[4096], qdir[4096], args[16384];
    snprintf(path, sizeof path, "%s/checkpoint.txt", dir);
    char *cp = test_load_file(path, NULL);
    const char *e = strstr(cp, "\nevaluations ");
    CHECK(e != NULL && atoi(e + 13) >= 1, "(e) %s: checkpoint: %.300s", what, cp);
    free(cp);
    test_shell_quote(qdir, sizeof qdir, dir);
    snprintf(args, sizeof args, "fit %s --output %s --resume --max-time 2", qin, qdir);
    test_run_result r = test_run_program(hessfit, args);
    test_expect_exit(&r, 0, NULL, "(e) --resume of the stopped 2-rank fit");
    test_expect_output(&r, "resuming from", "(e) resumed");
    free(r.out);
}

static void stop_signals(const char *hessfit, const char *qhessfit)
{
    char qin[4096], path[4096];
    const char *in = input_variant("mpi-rh-enamide-long.fit", "max-evaluations = 100000\noptimizer = lbfgs\nftol = 0");
    test_shell_quote(qin, sizeof qin, in);

    const char *dir = test_temp_path("fit-sigterm"), *log = test_temp_path("fit-sigterm.log");
    pid_t pid = start_long_fit(qhessfit, qin, dir, log);
    double t0 = test_now_s();
    CHECK(kill(rank_one(pid), SIGTERM) == 0, "(e) kill(rank 1, SIGTERM) failed");
    int code = end_status(pid, 300.0);
    char *text = test_load_file(log, NULL);
    CHECK(code == 0 && strstr(text, "stopped (Ctrl-C or SIGTERM)") != NULL,
          "(e) SIGTERM to rank 1: exit status %d, output: %s", code, text);
    snprintf(path, sizeof path, "%s/fitted.fld", dir);
    CHECK(access(path, R_OK) == 0, "(e) SIGTERM to rank 1: no fitted.fld");
    printf("(e) SIGTERM to rank 1: the fit stopped cleanly, exit 0 after %.1f s: %s", test_now_s() - t0,
           strstr(text, "  stopped (Ctrl-C or SIGTERM)"));
    free(text);
    resumes(hessfit, qin, dir, "SIGTERM to rank 1");

    dir = test_temp_path("fit-sigint");
    log = test_temp_path("fit-sigint.log");
    pid = start_long_fit(qhessfit, qin, dir, log);
    t0 = test_now_s();
    CHECK(kill(pid, SIGINT) == 0, "(e) kill(mpirun, SIGINT) failed");
    code = end_status(pid, 120.0);
    printf("(e) SIGINT to mpirun: the job ended after %.1f s, exit status %d\n", test_now_s() - t0, code);
    resumes(hessfit, qin, dir, "SIGINT to mpirun");
}

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "worker") == 0)
        return worker(argc, argv, argv[2], argc >= 4 ? argv[3] : NULL);
    /* "objective": (a); "fit": (b), (e) and (c); "opencl": (d); "signals": (e) */
    const char *part = argc >= 2 ? argv[1] : "objective";
    const int part_a = strcmp(part, "objective") == 0, part_bc = strcmp(part, "fit") == 0;
    const char *self = argv[0];
    const char *hessfit = test_program_path(argv[0], "hessfit");
    char qself[4096], qhessfit[4096], qout[4096], args[16384];
    test_shell_quote(qself, sizeof qself, self);
    test_shell_quote(qhessfit, sizeof qhessfit, hessfit);

    test_run_result r;
    if (strcmp(part, "opencl") == 0)
        return opencl(self, qself);
    if (strcmp(part, "signals") == 0) { /* (e) alone, by hand */
        stop_signals(hessfit, qhessfit);
        return 0;
    }
    if (!part_a)
        goto fit;
    /* (a) */
    const char *plain = test_temp_path("plain.bin");
    test_shell_quote(qout, sizeof qout, plain);
    r = test_run_program(self, (snprintf(args, sizeof args, "worker %s", qout), args));
    test_expect_exit(&r, 0, NULL, "(a) one process");
    check_against_whole_set(plain);
    for (int k = 1; k <= 3; k++) {
        char name[32];
        snprintf(name, sizeof name, "np%d.bin", k);
        test_shell_quote(qout, sizeof qout, test_temp_path(name));
        snprintf(args, sizeof args, "%s%d %s worker %s", MPIRUN, k, qself, qout);
        char cmd[20000];
        snprintf(cmd, sizeof cmd, TIMEOUT_S " %s", args);
        r = test_run_program("timeout", cmd);
        test_expect_exit(&r, 0, NULL, "(a) under mpirun");
        same_file(plain, test_temp_path(name));
        printf("(a) %d rank%s: loss, gradient, residuals and normal equations byte-identical to one process (%.1f s)\n", k,
               k == 1 ? "" : "s", r.seconds);
    }

fit:
    if (!part_bc) {
        printf("test_mpi_fit %s: OK\n", part);
        return 0;
    }
    /* (b) */
    const char *dir1 = test_temp_path("fit-plain");
    test_shell_quote(qout, sizeof qout, dir1);
    snprintf(args, sizeof args, "fit '%s' --output %s", INPUT, qout);
    r = test_run_program(hessfit, args);
    test_expect_exit(&r, 0, NULL, "(b) hessfit fit, one process");
    for (int k = 2; k <= 3; k++) {
        char name[32], cmd[20000];
        snprintf(name, sizeof name, "fit-np%d", k);
        const char *dir = test_temp_path(name);
        test_shell_quote(qout, sizeof qout, dir);
        snprintf(cmd, sizeof cmd, TIMEOUT_S " %s%d %s fit '%s' --output %s", MPIRUN, k, qhessfit, INPUT, qout);
        r = test_run_program("timeout", cmd);
        test_expect_exit(&r, 0, NULL, "(b) hessfit fit under mpirun");
        test_expect_output(&r, "blocks of structures on", "(b) the blocks line");
        test_expect_output(&r, "optimizer LM", "(b) LM");
        same_outputs(dir1, dir);
        printf("(b) hessfit fit (LM) on %d ranks: the fitted files, report and checkpoint are byte-identical (%.1f s)\n",
               k, r.seconds);
    }
    /* (b) --resume under another rank count: the 2-rank checkpoint continued on 3 ranks, the one-process
     * checkpoint in one process, both to 7 evaluations (the input with that limit, its paths absolute) */
    {
        char cmd[20000];
        const char *input7 = input_variant("mpi-rh-enamide-7.fit", "max-evaluations = 7"), *dir2 = test_temp_path("fit-np2");
        char q7[4096], qdir[4096];
        test_shell_quote(q7, sizeof q7, input7);
        test_shell_quote(qdir, sizeof qdir, dir1);
        snprintf(args, sizeof args, "fit %s --output %s --resume", q7, qdir);
        r = test_run_program(hessfit, args);
        test_expect_exit(&r, 0, NULL, "(b) --resume, one process");
        test_shell_quote(qdir, sizeof qdir, dir2);
        snprintf(cmd, sizeof cmd, TIMEOUT_S " %s3 %s fit %s --output %s --resume", MPIRUN, qhessfit, q7, qdir);
        r = test_run_program("timeout", cmd);
        test_expect_exit(&r, 0, NULL, "(b) --resume of the 2-rank checkpoint on 3 ranks");
        test_expect_output(&r, "resuming from", "(b) resumed");
        same_outputs(dir1, dir2);
        char path[4096];
        snprintf(path, sizeof path, "%s/checkpoint.txt", dir2);
        char *cp = test_load_file(path, NULL);
        const char *e = strstr(cp, "\nevaluations ");
        CHECK(e != NULL && atoi(e + 13) > 4, "(b) the resumed checkpoint did not go on: %.300s", cp);
        free(cp);
        printf("(b) a 2-rank checkpoint resumed on 3 ranks: the same bytes as one process resuming its own (%.1f s)\n",
               r.seconds);
    }

    /* (b) an NLopt method: L-BFGS over the blocks, one process and 2 ranks */
    {
        char cmd[20000], qin[4096], qa[4096], qb[4096];
        const char *in = input_variant("mpi-rh-enamide-lbfgs.fit", "max-evaluations = 4\noptimizer = lbfgs");
        const char *da = test_temp_path("lbfgs-plain"), *db = test_temp_path("lbfgs-np2");
        test_shell_quote(qin, sizeof qin, in);
        test_shell_quote(qa, sizeof qa, da);
        test_shell_quote(qb, sizeof qb, db);
        snprintf(args, sizeof args, "fit %s --output %s", qin, qa);
        r = test_run_program(hessfit, args);
        test_expect_exit(&r, 0, NULL, "(b) L-BFGS, one process");
        test_expect_output(&r, "optimizer LD_LBFGS", "(b) L-BFGS");
        snprintf(cmd, sizeof cmd, TIMEOUT_S " %s2 %s fit %s --output %s", MPIRUN, qhessfit, qin, qb);
        r = test_run_program("timeout", cmd);
        test_expect_exit(&r, 0, NULL, "(b) L-BFGS on 2 ranks");
        same_outputs(da, db);
        printf("(b) hessfit fit (L-BFGS) on 2 ranks: byte-identical to one process (%.1f s)\n", r.seconds);
    }

    stop_signals(hessfit, qhessfit);

    /* (c) */
    {
        char cmd[20000];
        const char *dir = test_temp_path("fit-fail");
        test_shell_quote(qout, sizeof qout, dir);
        /* evaluation 4: LM's evaluations 2 and 3 are trial points without an MM minimum for structure 1 (on
         * rank 0), which the agreement reports first and LM rejects */
        snprintf(cmd, sizeof cmd,
                 "HESSFIT_TEST_FAIL_RANK=1 HESSFIT_TEST_FAIL_EVALUATION=4 timeout " TIMEOUT_S " %s2 %s fit '%s' --output %s", MPIRUN,
                 qhessfit, INPUT, qout);
        r = test_run_program("env", cmd);
        CHECK(r.status != 0 && r.status != 124, "(c) exit status %d (124: a hang)", r.status);
        CHECK(strstr(r.err, "rank 1 (host ") != NULL && strstr(r.err, "structures ") != NULL &&
                  strstr(r.err, "molecule 1: injected failure") != NULL,
              "(c) the message does not name rank, host, structures and molecule: %.600s", r.err);
        CHECK(strstr(r.err, "best point so far is in") != NULL, "(c) no word of the best point: %.600s", r.err);
        char path[4096];
        snprintf(path, sizeof path, "%s/checkpoint.txt", dir);
        char *cp = test_load_file(path, NULL);
        CHECK(strstr(cp, "evaluations 4") != NULL && strstr(cp, "best_loss ") != NULL, "(c) checkpoint: %.300s", cp);
        free(cp);
        printf("(c) rank 1 failing: exit %d after %.1f s, message: %.300s\n", r.status, r.seconds, r.err);
    }
    printf("test_mpi_fit %s: OK\n", part);
    return 0;
}
#endif
