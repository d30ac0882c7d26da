/*
 * MPI (issue 16, docs/mpi.md): the objective in fixed blocks spread over ranks gives the same bits
 * with any number of ranks, and a failing rank stops the run cleanly. Input:
 * tests/data/fit/mpi-rh-enamide.fit, the nine rh-enamide structures with conformer energies
 * (groups {2, 3}, {4, 5}, {6..9}: no block may split them) and `blocks = 4`, a few evaluations.
 *
 *  (a) loss, gradient and residuals of hf_shards_evaluate at the start values and at values moved
 *      by 1 %: this program as one process (no mpirun), and under `mpirun -np K` for K = 1, 2, 3
 *      (`worker` mode: rank 0 writes the three arrays to a file): the files are byte-identical. The
 *      one-process values agree with the whole set's one-Context objective (hessfit_objective_evaluate:
 *      other sums, so to round-off: loss, gradient and residuals to 1e-12 of their largest; measured
 *      3.5e-15, 9e-15, and 92 % of the residuals identical).
 *  (b) `hessfit fit` as one process and under `mpirun -np 2` and `-np 3`: fitted.fld, fitted.xml, a
 *      fitted PDB, checkpoint.txt and targets.txt are byte-identical; the 2-rank checkpoint resumed
 *      (--resume) on 3 ranks and the one-process checkpoint resumed in one process, to 7
 *      evaluations, write the same bytes too.
 *  (c) HESSFIT_TEST_FAIL_RANK=1 (test builds: rank 1's first block fails at evaluation 3) under
 *      `timeout`: exit status 1 (not a hang), one message on stderr naming the rank, its host, the
 *      block's structures and the molecule, and the checkpoint holds the best point of the two
 *      evaluations before.
 * Two CTest entries: test_mpi_fit (a), test_mpi_fit_cli (b, c). Skipped (77) in a build
 * without MPI (HESSFIT_WITH_MPI off).
 */
#define _POSIX_C_SOURCE 200809L
#include "test_util.h"

#include "hf_comm.h"
#include "hf_shards.h"
#include "hf_training_set.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

/* (a) on every rank: load, the blocks, two evaluations on rank 0 written to out (loss, gradient,
 * residuals of each). */
static int worker(int argc, char **argv, const char *out)
{
    hf_training_set set;
    hf_training_set_options topt = {NULL, NULL, "-out", 0};
    hf_shards *shards = NULL;
    CHECK(hf_comm_init(&argc, &argv) == HESSFIT_SUCCESS, "MPI_Init: %s", hessfit_last_error());
    const int rank = hf_comm_rank();
    HF_OK(hf_shards_load(INPUT, &topt, &set));
    HF_OK(hf_shards_create(&set, &shards));
    if (rank != 0) {
        HF_OK(hf_shards_serve(shards));
    } else {
        const int n = set.n_free;
        const long long n_res = hessfit_objective_n_residuals(set.objective);
        double *x = malloc((size_t)n * sizeof *x), *buf = malloc((size_t)(2 * (1 + n + n_res)) * sizeof *buf);
        CHECK(x != NULL && buf != NULL, "no memory");
        for (int pass = 0; pass < 2; pass++) {
            double *at = buf + pass * (1 + n + n_res);
            for (int i = 0; i < n; i++)
                x[i] = set.x_start[i] * (pass == 0 ? 1.0 : 1.0 + 0.01 * ((i % 3) - 1));
            HF_OK(hf_shards_evaluate(shards, x, &at[0], at + 1, at + 1 + n));
        }
        HF_OK(hf_shards_finish(shards, HESSFIT_SUCCESS));
        FILE *f = fopen(out, "wb");
        CHECK(f != NULL && fwrite(buf, sizeof *buf, (size_t)(2 * (1 + n + n_res)), f) == (size_t)(2 * (1 + n + n_res)) &&
                  fclose(f) == 0,
              "cannot write %s", out);
        free(x);
        free(buf);
    }
    hf_shards_destroy(shards);
    hf_training_set_free(&set);
    hf_comm_finalize();
    return 0;
}

/* (a) the one-process values against the whole set's objective. */
static void check_against_whole_set(const char *file)
{
    hf_training_set set;
    hf_training_set_options topt = {NULL, NULL, "-out", 0};
    HF_OK(hf_shards_load(INPUT, &topt, &set)); /* one process: OpenBLAS as in the fit */
    const int n = set.n_free;
    const long long n_res = hessfit_objective_n_residuals(set.objective);
    size_t size = 0;
    double *got = (double *)test_load_file(file, &size);
    CHECK(size == (size_t)(2 * (1 + n + n_res)) * sizeof(double), "%s: %zu bytes, expected %lld doubles", file, size,
          2 * (1 + n + n_res));
    double *x = malloc((size_t)n * sizeof *x), *grad = malloc((size_t)n * sizeof *grad),
           *res = malloc((size_t)n_res * sizeof *res);
    CHECK(x != NULL && grad != NULL && res != NULL, "no memory");
    for (int pass = 0; pass < 2; pass++) {
        const double *at = got + pass * (1 + n + n_res);
        double loss, gmax = 0.0, worst = 0.0;
        for (int i = 0; i < n; i++)
            x[i] = set.x_start[i] * (pass == 0 ? 1.0 : 1.0 + 0.01 * ((i % 3) - 1));
        HF_OK(hessfit_objective_evaluate(set.objective, x, &loss, grad, res));
        CHECK_CLOSE(at[0], loss, 1e-12, fabs(loss), "loss");
        for (int i = 0; i < n; i++)
            gmax = fmax(gmax, fabs(grad[i]));
        for (int i = 0; i < n; i++) {
            CHECK_CLOSE(at[1 + i], grad[i], 1e-12, gmax, "gradient");
            worst = fmax(worst, fabs(at[1 + i] - grad[i]) / gmax);
        }
        long long n_same = 0, where = -1;
        double rmax = 0.0, rworst = 0.0;
        for (long long i = 0; i < n_res; i++)
            rmax = fmax(rmax, fabs(res[i]));
        for (long long i = 0; i < n_res; i++) {
            n_same += at[1 + n + i] == res[i];
            if (fabs(at[1 + n + i] - res[i]) > rworst) {
                rworst = fabs(at[1 + n + i] - res[i]);
                where = i;
            }
        }
        printf("  pass %d: loss %.17g (whole set %.17g), gradient max |diff| / max |g| %.2g; residuals: %lld of %lld "
               "identical, max |diff| / max |r| %.2g (residual %lld)\n",
               pass, at[0], loss, worst, n_same, n_res, rworst / rmax, where);
        CHECK(rworst <= 1e-12 * rmax, "pass %d: the residuals differ from the whole set's", pass);
    }
    free(x);
    free(grad);
    free(res);
    free(got);
    hf_training_set_free(&set);
}

static void same_file(const char *a, const char *b)
{
    size_t na = 0, nb = 0;
    char *da = test_load_file(a, &na), *db = test_load_file(b, &nb);
    CHECK(na == nb && memcmp(da, db, na) == 0, "%s and %s differ (%zu and %zu bytes)", a, b, na, nb);
    free(da);
    free(db);
}

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "worker") == 0)
        return worker(argc, argv, argv[2]);
    const char *part = argc >= 2 ? argv[1] : "objective"; /* "objective": (a); "fit": (b) and (c) */
    const int part_a = strcmp(part, "objective") == 0, part_bc = strcmp(part, "fit") == 0;
    const char *self = argv[0];
    const char *hessfit = test_program_path(argv[0], "hessfit");
    char qself[4096], qhessfit[4096], qout[4096], args[16384];
    test_shell_quote(qself, sizeof qself, self);
    test_shell_quote(qhessfit, sizeof qhessfit, hessfit);

    test_run_result r;
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
        printf("(a) %d rank%s: loss, gradient and residuals byte-identical to one process (%.1f s)\n", k, k == 1 ? "" : "s",
               r.seconds);
    }

fit:
    if (!part_bc) {
        printf("test_mpi_fit %s: OK\n", part);
        return 0;
    }
    /* (b) */
    static const char *const outputs[] = {"fitted.fld", "fitted.xml", "fitted-5.pdb", "checkpoint.txt", "targets.txt"};
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
        for (size_t f = 0; f < sizeof outputs / sizeof outputs[0]; f++) {
            char a[4096], b[4096];
            snprintf(a, sizeof a, "%s/%s", dir1, outputs[f]);
            snprintf(b, sizeof b, "%s/%s", dir, outputs[f]);
            same_file(a, b);
        }
        printf("(b) hessfit fit on %d ranks: the fitted files and the checkpoint are byte-identical (%.1f s)\n", k,
               r.seconds);
    }
    /* (b) --resume under another rank count: the 2-rank checkpoint continued on 3 ranks, the one-process
     * checkpoint in one process, both to 7 evaluations (the input with that limit, its paths absolute) */
    {
        char *text = test_load_file(INPUT, NULL), longer[16384], cmd[20000];
        const char *rel = "../../../examples", *limit = "max-evaluations = 4";
        size_t at = 0;
        for (const char *p = text; *p != '\0' && at < sizeof longer - 256;) {
            if (strncmp(p, rel, strlen(rel)) == 0) {
                at += (size_t)snprintf(longer + at, sizeof longer - at, "%s/examples", HESSFIT_SOURCE_DIR);
                p += strlen(rel);
            } else if (strncmp(p, limit, strlen(limit)) == 0) {
                at += (size_t)snprintf(longer + at, sizeof longer - at, "max-evaluations = 7");
                p += strlen(limit);
            } else
                longer[at++] = *p++;
        }
        longer[at] = '\0';
        free(text);
        CHECK(strstr(longer, "max-evaluations = 7") != NULL, "no evaluation limit in %s", INPUT);
        const char *input7 = test_write_text("mpi-rh-enamide-7.fit", longer), *dir2 = test_temp_path("fit-np2");
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
        for (size_t f = 0; f < sizeof outputs / sizeof outputs[0]; f++) {
            char a[4096], b[4096];
            snprintf(a, sizeof a, "%s/%s", dir1, outputs[f]);
            snprintf(b, sizeof b, "%s/%s", dir2, outputs[f]);
            same_file(a, b);
        }
        char path[4096];
        snprintf(path, sizeof path, "%s/checkpoint.txt", dir2);
        char *cp = test_load_file(path, NULL);
        const char *e = strstr(cp, "\nevaluations ");
        CHECK(e != NULL && atoi(e + 13) > 4, "(b) the resumed checkpoint did not go on: %.300s", cp);
        free(cp);
        printf("(b) a 2-rank checkpoint resumed on 3 ranks: the same bytes as one process resuming its own (%.1f s)\n",
               r.seconds);
    }

    /* (c) */
    {
        char cmd[20000];
        const char *dir = test_temp_path("fit-fail");
        test_shell_quote(qout, sizeof qout, dir);
        snprintf(cmd, sizeof cmd, "HESSFIT_TEST_FAIL_RANK=1 timeout " TIMEOUT_S " %s2 %s fit '%s' --output %s", MPIRUN,
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
        CHECK(strstr(cp, "evaluations 3") != NULL && strstr(cp, "best_loss ") != NULL, "(c) checkpoint: %.300s", cp);
        free(cp);
        printf("(c) rank 1 failing: exit %d after %.1f s, message: %.300s\n", r.status, r.seconds, r.err);
    }
    printf("test_mpi_fit %s: OK\n", part);
    return 0;
}
#endif
