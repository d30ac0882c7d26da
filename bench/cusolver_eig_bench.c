/*
 * cusolver_eig_bench: cuSOLVER's batched symmetric eigensolver (cusolverDnXsyevBatched, double,
 * eigenvalues and eigenvectors) on the rh-enamide Hessian dimensions, for the comparison issue 15
 * asks for with the plugin's one-work-group Jacobi eigensolver (gpu_bench's "eigensolver ms" column).
 *
 *   cusolver_eig_bench [--dims 108,114,...] [--replicas 1,111] [--repeats N] [--json FILE]
 *
 * A set is the listed dimensions (default: the nine rh-enamide structures, 3 x 36..62 atoms), each
 * repeated --replicas times (111 x 9 = 999, gpu_bench's "1000" row). cuSOLVER's batched call takes one
 * dimension per call, so a set is one call per distinct dimension, all on one stream; the time of a
 * set is from the first call's start to the last call's end (CUDA events), the input copied back in
 * before each set outside the timing. The matrices are random symmetric with a spread spectrum, made
 * on the host from a fixed seed. The first set is untimed; the median of --repeats sets is printed.
 * Sets of at most 64 matrices are also timed with cusolverDnXsyevd, one call per matrix on the same
 * stream (the alternative for a few molecules). The min/max/median printed are the batched call's.
 * Every eigenpair of the first matrix of each dimension is checked on the host (|A v - l v| relative
 * to |A|), and every info value must be 0. Every CUDA and cuSOLVER status is checked.
 */
#define _POSIX_C_SOURCE 200809L
#include <cuda_runtime_api.h>
#include <cusolverDn.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DIMS 64
#define MAX_REPLICA_COUNTS 8
#define MAX_REPEATS 1000
#define RESIDUAL_TOLERANCE 1e-10
#define LOOP_MAX_MATRICES 64 /* sets this small are also timed with one Xsyevd call per matrix */

#define CUDA_OK(call)                                                                                 \
    do {                                                                                              \
        cudaError_t e_ = (call);                                                                      \
        if (e_ != cudaSuccess) {                                                                      \
            fprintf(stderr, "cusolver_eig_bench: %s failed: %s\n", #call, cudaGetErrorString(e_));   \
            exit(1);                                                                                  \
        }                                                                                             \
    } while (0)
#define SOLVER_OK(call)                                                                               \
    do {                                                                                              \
        cusolverStatus_t s_ = (call);                                                                 \
        if (s_ != CUSOLVER_STATUS_SUCCESS) {                                                          \
            fprintf(stderr, "cusolver_eig_bench: %s failed: cusolver status %d\n", #call, (int) s_); \
            exit(1);                                                                                  \
        }                                                                                             \
    } while (0)

static int parse_list(const char *text, long *out, int max, const char *what) {
    int n = 0;
    const char *p = text;
    while (*p) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v <= 0 || n == max || (*end != ',' && *end != '\0')) {
            fprintf(stderr, "cusolver_eig_bench: %s: '%s' is not a list of up to %d positive integers\n", what,
                    text, max);
            exit(2);
        }
        out[n++] = v;
        p = *end == ',' ? end + 1 : end;
    }
    if (n == 0) {
        fprintf(stderr, "cusolver_eig_bench: %s is empty\n", what);
        exit(2);
    }
    return n;
}

static uint64_t rng = 0x243F6A8885A308D3ULL;
static double uniform(void) { /* xorshift64*, [-1, 1) */
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return (double) ((rng * 2685821657736338717ULL) >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

/* The median of samples[1..repeats] (samples[0] is the untimed first run); sorts them. */
static double median_of(double *samples, long repeats) {
    qsort(samples + 1, (size_t) repeats, sizeof(double), compare_doubles);
    return repeats % 2 ? samples[1 + repeats / 2] : 0.5 * (samples[repeats / 2] + samples[1 + repeats / 2]);
}

/* One dimension's batch: count matrices of n x n (column-major, lda n). */
typedef struct {
    long n, count;
    double *input, *work, *eigenvalues; /* device */
    int *info;                          /* device */
    void *device_buffer, *host_buffer;
    size_t device_bytes, host_bytes;
} Batch;

/* Every batch's work matrices set back to its inputs (the solvers overwrite them), on the stream. */
static void restore_inputs(const Batch *batches, int n, cudaStream_t stream) {
    for (int k = 0; k < n; k++)
        CUDA_OK(cudaMemcpyAsync(batches[k].work, batches[k].input,
                                (size_t) (batches[k].n * batches[k].n * batches[k].count) * sizeof(double),
                                cudaMemcpyDeviceToDevice, stream));
}

/* Records stop on the stream, waits for it and returns the ms since start. */
static double stop_timer(cudaEvent_t start, cudaEvent_t stop, cudaStream_t stream) {
    float ms = 0.0f;
    CUDA_OK(cudaEventRecord(stop, stream));
    CUDA_OK(cudaEventSynchronize(stop));
    CUDA_OK(cudaEventElapsedTime(&ms, start, stop));
    return ms;
}

int main(int argc, char **argv) {
    long dims[MAX_DIMS] = {108, 114, 114, 186, 186, 174, 174, 174, 174};
    int n_dims = 9;
    long replicas[MAX_REPLICA_COUNTS] = {1, 111};
    int n_replicas = 2;
    long repeats = 20;
    const char *json_path = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--dims") == 0 && i + 1 < argc)
            n_dims = parse_list(argv[++i], dims, MAX_DIMS, "--dims");
        else if (strcmp(argv[i], "--replicas") == 0 && i + 1 < argc)
            n_replicas = parse_list(argv[++i], replicas, MAX_REPLICA_COUNTS, "--replicas");
        else if (strcmp(argv[i], "--repeats") == 0 && i + 1 < argc) {
            long r[1];
            parse_list(argv[++i], r, 1, "--repeats");
            repeats = r[0] > MAX_REPEATS ? MAX_REPEATS : r[0];
        } else if (strcmp(argv[i], "--json") == 0 && i + 1 < argc)
            json_path = argv[++i];
        else {
            fprintf(stderr, "usage: cusolver_eig_bench [--dims N,N,...] [--replicas R,R,...] [--repeats N] "
                            "[--json FILE]\n");
            return strcmp(argv[i], "--help") == 0 ? 0 : 2;
        }
    }
    FILE *json = NULL;
    if (json_path && !(json = fopen(json_path, "w"))) {
        fprintf(stderr, "cusolver_eig_bench: cannot write %s\n", json_path);
        return 1;
    }
    /* Distinct dimensions and how often each occurs in one set of the listed structures. */
    long distinct[MAX_DIMS], multiplicity[MAX_DIMS];
    int n_distinct = 0;
    for (int i = 0; i < n_dims; i++) {
        int k = 0;
        while (k < n_distinct && distinct[k] != dims[i])
            k++;
        if (k == n_distinct) {
            distinct[n_distinct] = dims[i];
            multiplicity[n_distinct++] = 0;
        }
        multiplicity[k]++;
    }
    int version = 0;
    SOLVER_OK(cusolverGetVersion(&version));
    struct cudaDeviceProp prop;
    CUDA_OK(cudaGetDeviceProperties(&prop, 0));
    printf("cusolver_eig_bench: %s, cuSOLVER %d, %d distinct dimensions, %ld repeats\n", prop.name, version,
           n_distinct, repeats);
    cusolverDnHandle_t handle;
    cusolverDnParams_t params;
    cudaStream_t stream;
    SOLVER_OK(cusolverDnCreate(&handle));
    SOLVER_OK(cusolverDnCreateParams(&params));
    CUDA_OK(cudaStreamCreate(&stream));
    SOLVER_OK(cusolverDnSetStream(handle, stream));
    cudaEvent_t start, stop;
    CUDA_OK(cudaEventCreate(&start));
    CUDA_OK(cudaEventCreate(&stop));
    if (json)
        fprintf(json, "{\"device\": \"%s\", \"cusolver_version\": %d, \"rows\": [", prop.name, version);
    int failed = 0;
    for (int r = 0; r < n_replicas; r++) {
        Batch batches[MAX_DIMS];
        long total = 0;
        double worst_residual = 0.0;
        for (int k = 0; k < n_distinct; k++) {
            Batch *b = &batches[k];
            b->n = distinct[k];
            b->count = multiplicity[k] * replicas[r];
            total += b->count;
            size_t nn = (size_t) (b->n * b->n), bytes = nn * b->count * sizeof(double);
            double *host = malloc(bytes);
            if (!host) {
                fprintf(stderr, "cusolver_eig_bench: out of host memory\n");
                return 1;
            }
            /* A = Q diag(s) Q^T would cost n^3 per matrix on the host; a random symmetric matrix plus a
             * spread diagonal (eigenvalues over about four decades, as a mass-weighted Hessian's) will do. */
            for (long m = 0; m < b->count; m++) {
                double *a = host + nn * m;
                for (long j = 0; j < b->n; j++)
                    for (long i = 0; i <= j; i++)
                        a[i + j * b->n] = a[j + i * b->n] = 0.01 * uniform();
                for (long i = 0; i < b->n; i++)
                    a[i + i * b->n] += pow(10.0, 4.0 * i / b->n - 2.0);
            }
            CUDA_OK(cudaMalloc((void **) &b->input, bytes));
            CUDA_OK(cudaMalloc((void **) &b->work, bytes));
            CUDA_OK(cudaMalloc((void **) &b->eigenvalues, (size_t) (b->n * b->count) * sizeof(double)));
            CUDA_OK(cudaMalloc((void **) &b->info, (size_t) b->count * sizeof(int)));
            CUDA_OK(cudaMemcpy(b->input, host, bytes, cudaMemcpyHostToDevice));
            CUDA_OK(cudaMemcpy(b->work, host, bytes, cudaMemcpyHostToDevice));
            SOLVER_OK(cusolverDnXsyevBatched_bufferSize(handle, params, CUSOLVER_EIG_MODE_VECTOR,
                                                        CUBLAS_FILL_MODE_LOWER, b->n, CUDA_R_64F, b->work, b->n,
                                                        CUDA_R_64F, b->eigenvalues, CUDA_R_64F,
                                                        &b->device_bytes, &b->host_bytes, b->count));
            CUDA_OK(cudaMalloc(&b->device_buffer, b->device_bytes ? b->device_bytes : 1));
            b->host_buffer = malloc(b->host_bytes ? b->host_bytes : 1);
            if (!b->host_buffer) {
                fprintf(stderr, "cusolver_eig_bench: out of host memory\n");
                return 1;
            }
            /* Keep the first matrix for the residual check. */
            double *first = malloc(nn * sizeof(double));
            memcpy(first, host, nn * sizeof(double));
            free(host);
            host = first;
            /* One solve of this batch, then the check of its first matrix. */
            SOLVER_OK(cusolverDnXsyevBatched(handle, params, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER,
                                             b->n, CUDA_R_64F, b->work, b->n, CUDA_R_64F, b->eigenvalues,
                                             CUDA_R_64F, b->device_buffer, b->device_bytes, b->host_buffer,
                                             b->host_bytes, b->info, b->count));
            CUDA_OK(cudaStreamSynchronize(stream));
            int *info = malloc((size_t) b->count * sizeof(int));
            double *vectors = malloc(nn * sizeof(double)), *values = malloc((size_t) b->n * sizeof(double));
            CUDA_OK(cudaMemcpy(info, b->info, (size_t) b->count * sizeof(int), cudaMemcpyDeviceToHost));
            CUDA_OK(cudaMemcpy(vectors, b->work, nn * sizeof(double), cudaMemcpyDeviceToHost));
            CUDA_OK(cudaMemcpy(values, b->eigenvalues, (size_t) b->n * sizeof(double), cudaMemcpyDeviceToHost));
            for (long m = 0; m < b->count; m++)
                if (info[m] != 0) {
                    fprintf(stderr, "cusolver_eig_bench: n = %ld, matrix %ld: info %d\n", b->n, m, info[m]);
                    failed = 1;
                }
            double norm = 0.0, residual = 0.0;
            for (size_t i = 0; i < nn; i++)
                norm = fmax(norm, fabs(host[i]));
            for (long q = 0; q < b->n; q++)
                for (long i = 0; i < b->n; i++) {
                    double av = 0.0;
                    for (long j = 0; j < b->n; j++)
                        av += host[i + j * b->n] * vectors[j + q * b->n];
                    residual = fmax(residual, fabs(av - values[q] * vectors[i + q * b->n]) / norm);
                }
            worst_residual = fmax(worst_residual, residual);
            free(info);
            free(vectors);
            free(values);
            free(host);
        }
        if (worst_residual > RESIDUAL_TOLERANCE) {
            fprintf(stderr, "cusolver_eig_bench: eigenpair residual %.3g over %.0e\n", worst_residual,
                    RESIDUAL_TOLERANCE);
            failed = 1;
        }
        double samples[MAX_REPEATS + 1];
        for (long t = 0; t <= repeats; t++) {
            restore_inputs(batches, n_distinct, stream);
            CUDA_OK(cudaEventRecord(start, stream));
            for (int k = 0; k < n_distinct; k++) {
                Batch *b = &batches[k];
                SOLVER_OK(cusolverDnXsyevBatched(handle, params, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER,
                                                 b->n, CUDA_R_64F, b->work, b->n, CUDA_R_64F, b->eigenvalues,
                                                 CUDA_R_64F, b->device_buffer, b->device_bytes, b->host_buffer,
                                                 b->host_bytes, b->info, b->count));
            }
            samples[t] = stop_timer(start, stop, stream);
        }
        const double median = median_of(samples, repeats);
        /* A small set also with the one-matrix solver, one call per matrix on the same stream. */
        double loop_median = -1.0;
        if (total <= LOOP_MAX_MATRICES) {
            double loop_samples[MAX_REPEATS + 1];
            size_t most_device = 0, most_host = 0;
            for (int k = 0; k < n_distinct; k++) {
                size_t d = 0, h = 0;
                SOLVER_OK(cusolverDnXsyevd_bufferSize(handle, params, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER,
                                                      batches[k].n, CUDA_R_64F, batches[k].work, batches[k].n,
                                                      CUDA_R_64F, batches[k].eigenvalues, CUDA_R_64F, &d, &h));
                most_device = d > most_device ? d : most_device;
                most_host = h > most_host ? h : most_host;
            }
            void *device_buffer, *host_buffer = malloc(most_host ? most_host : 1);
            CUDA_OK(cudaMalloc(&device_buffer, most_device ? most_device : 1));
            for (long t = 0; t <= repeats; t++) {
                restore_inputs(batches, n_distinct, stream);
                CUDA_OK(cudaEventRecord(start, stream));
                for (int k = 0; k < n_distinct; k++)
                    for (long m = 0; m < batches[k].count; m++)
                        SOLVER_OK(cusolverDnXsyevd(handle, params, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER,
                                                   batches[k].n, CUDA_R_64F, batches[k].work + batches[k].n * batches[k].n * m,
                                                   batches[k].n, CUDA_R_64F, batches[k].eigenvalues + batches[k].n * m,
                                                   CUDA_R_64F, device_buffer, most_device, host_buffer, most_host,
                                                   batches[k].info + m));
                loop_samples[t] = stop_timer(start, stop, stream);
            }
            CUDA_OK(cudaFree(device_buffer));
            free(host_buffer);
            loop_median = median_of(loop_samples, repeats);
            printf("cusolver_eig_bench: %ld matrices: Xsyevd one matrix per call, median %.3f ms, %.2f us per matrix\n",
                   total, loop_median, 1000.0 * loop_median / total);
        }
        printf("cusolver_eig_bench: %ld matrices (%ld x the %d listed): XsyevBatched median %.3f ms "
               "(min %.3f, max %.3f), %.2f us per matrix, worst eigenpair residual %.2e\n",
               total, replicas[r], n_dims, median, samples[1], samples[repeats], 1000.0 * median / total,
               worst_residual);
        if (json)
            fprintf(json, "%s{\"matrices\": %ld, \"replicas\": %ld, \"median_ms\": %.6f, \"min_ms\": %.6f, "
                          "\"max_ms\": %.6f, \"worst_residual\": %.3e, \"syevd_loop_median_ms\": %.6f}",
                    r ? ", " : "", total, replicas[r], median, samples[1], samples[repeats], worst_residual, loop_median);
        for (int k = 0; k < n_distinct; k++) {
            CUDA_OK(cudaFree(batches[k].input));
            CUDA_OK(cudaFree(batches[k].work));
            CUDA_OK(cudaFree(batches[k].eigenvalues));
            CUDA_OK(cudaFree(batches[k].info));
            CUDA_OK(cudaFree(batches[k].device_buffer));
            free(batches[k].host_buffer);
        }
    }
    if (json) {
        fprintf(json, "]}\n");
        if (fclose(json) != 0) {
            fprintf(stderr, "cusolver_eig_bench: cannot write %s\n", json_path);
            failed = 1;
        }
    }
    CUDA_OK(cudaEventDestroy(start));
    CUDA_OK(cudaEventDestroy(stop));
    CUDA_OK(cudaStreamDestroy(stream));
    SOLVER_OK(cusolverDnDestroyParams(params));
    SOLVER_OK(cusolverDnDestroy(handle));
    return failed;
}
