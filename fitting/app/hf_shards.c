/*
 * The training set's objective in fixed blocks of molecules spread over MPI ranks (hf_shards.h):
 * the cut, the assignment, the blocks' own models and objectives, and the evaluation protocol
 * (rank 0 broadcasts the free values, every rank evaluates its blocks, rank 0 gathers the blocks'
 * partial results and sums them in block order).
 */
#define _POSIX_C_SOURCE 200809L
#include "hf_shards.h"

#include "hf_comm.h"
#include "hf_file_table.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The command rank 0 broadcasts before each evaluation (the first double of the message). */
enum { CMD_EVALUATE = 1, CMD_FINISH = 2, CMD_PEAK_MEMORY = 3 };
/* The message: command, derivatives wanted (below), residuals wanted, rank 0's status (CMD_FINISH), then x. */
#define HEADER 4
/* The derivatives of an evaluation: none (the loss alone), the gradient, or the normal equations
 * J^T r and J^T J (hessfit_objective_normal_equations; LM). */
enum { WANT_LOSS = 0, WANT_GRADIENT = 1, WANT_NORMAL = 2 };

typedef struct {
    int begin, end;  /* molecules [begin, end) */
    double cost;     /* sum of n_atoms^3 */
    int rank;        /* which rank evaluates it */
    int n_free;      /* its free values ... */
    int *free_global; /* ... as indices of the set's free values */
    long long n_hessian;  /* its Hessian-space residuals */
    int n_energy, *energy_global;     /* its energy targets, as indices of the set's */
    int n_geometry, *geometry_global; /* its geometry targets */
    hessfit_model *model; /* the owner's; the set's own when shared */
    hessfit_objective *objective;
    int shared;      /* model and objective are the set's (one block of the whole set) */
} block;

struct hf_shards {
    const hf_training_set *set;
    int rank, size;
    int n_blocks;
    block *blocks;
    int n_free;
    long long n_residuals;          /* the whole set's */
    double *message;                /* HEADER + n_free */
    double *send, *recv;            /* this rank's packets; rank 0: everyone's */
    int *counts, *displs;           /* rank 0: doubles per rank */
    double *x_block;                /* a block's free values */
    char *devices;                  /* rank 0: every rank's device, DEVICE_TEXT bytes each */
    hf_shards_stats stats;
};

/* Bytes of a rank's device description (hf_shards_device). */
#define DEVICE_TEXT 192

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static hessfit_status no_memory(void)
{
    return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "MPI blocks: no memory");
}

/* Rank 0's free values to every rank: counts, the (parameter, value) list and the start values; the
 * other ranks (loaded without a model) take them, and the start values into their force field as
 * rank 0's has them (a Seminario start changes them). */
static hessfit_status share_free_values(hf_training_set *set, int rank)
{
    hessfit_status st;
    int counts[2] = {set->n_fit, set->n_free};
    if ((st = hf_comm_bcast(counts, sizeof counts)) != HESSFIT_SUCCESS)
        return st;
    const size_t n = (size_t)counts[1];
    if (rank != 0) {
        set->n_fit = counts[0];
        set->n_free = counts[1];
        set->free_param = malloc((n + 1) * sizeof *set->free_param);
        set->free_value = malloc((n + 1) * sizeof *set->free_value);
        set->x_start = malloc((n + 1) * sizeof *set->x_start);
    }
    if (set->free_param == NULL || set->free_value == NULL || set->x_start == NULL) { /* the others wait in a broadcast */
        fprintf(stderr, "hessfit: rank %d (host %s): no memory for %zu free values\n", rank, hf_comm_host(), n);
        hf_comm_abort(1);
    }
    if ((st = hf_comm_bcast(set->free_param, n * sizeof(int))) != HESSFIT_SUCCESS ||
        (st = hf_comm_bcast(set->free_value, n * sizeof(int))) != HESSFIT_SUCCESS ||
        (st = hf_comm_bcast(set->x_start, n * sizeof(double))) != HESSFIT_SUCCESS)
        return st;
    for (size_t i = 0; rank != 0 && i < n; i++) {
        if (set->free_param[i] < 0 || set->free_param[i] >= set->ff.n_params || set->free_value[i] < 0 ||
            set->free_value[i] >= set->ff.params[set->free_param[i]].n_values)
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "MPI: rank %d's force field lacks rank 0's free value %zu",
                                 rank, i + 1);
        set->ff.params[set->free_param[i]].values[set->free_value[i]] = set->x_start[i];
    }
    return HESSFIT_SUCCESS;
}

hessfit_status hf_shards_load(const char *input, const hf_training_set_options *options, hf_training_set *set)
{
    const int rank = hf_comm_rank();
    hf_training_set_options opt = *options;
    hessfit_status st = HESSFIT_SUCCESS, loaded = HESSFIT_ERROR_INVALID_ARGUMENT;
    unsigned char *packed = NULL;
    size_t size = 0;
    memset(set, 0, sizeof *set);
    if (hf_comm_size() == 1)
        return hf_training_set_load(input, &opt, set);
    opt.no_model = rank != 0;
    if (rank == 0) { /* reads each file once, keeping its bytes */
        hf_files_set_mode(HF_FILES_RECORD);
        st = loaded = hf_training_set_load(input, &opt, set);
        hf_files_set_mode(HF_FILES_DISK);
        if (st == HESSFIT_SUCCESS)
            st = hf_files_pack(&packed, &size);
    }
    if ((st = hf_comm_agree(st)) == HESSFIT_SUCCESS) {
        uint64_t n = size;
        if ((st = hf_comm_bcast(&n, sizeof n)) == HESSFIT_SUCCESS && rank != 0 && (packed = malloc(n > 0 ? n : 1)) == NULL)
            st = no_memory();
        if (st == HESSFIT_SUCCESS)
            st = hf_comm_bcast(packed, n);
        if (st == HESSFIT_SUCCESS && rank != 0 && (st = hf_files_unpack(packed, n)) == HESSFIT_SUCCESS) {
            hf_files_set_mode(HF_FILES_MEMORY); /* the same bytes; a file rank 0 did not read is an error */
            st = loaded = hf_training_set_load(input, &opt, set);
            hf_files_set_mode(HF_FILES_DISK);
        }
        if ((st = hf_comm_agree(st)) == HESSFIT_SUCCESS)
            st = hf_comm_agree(share_free_values(set, rank));
    }
    hf_files_clear();
    free(packed);
    if (st != HESSFIT_SUCCESS && loaded == HESSFIT_SUCCESS)
        hf_training_set_free(set);
    return st;
}

/* ---- the cut and the assignment (the same on every rank: a function of the input) ---------------- */

/* Cuts the molecules into at most n_wanted ranges of about equal cost; a cut before molecule m is
 * allowed unless an energy group has molecules on both sides. */
static hessfit_status cut_blocks(hf_shards *sh, int n_wanted)
{
    const hf_training_set *set = sh->set;
    const int n = set->n_mols;
    double *prefix = malloc((size_t)(n + 1) * sizeof *prefix);
    int *crossing = calloc((size_t)n + 1, sizeof *crossing); /* groups spanning the cut before m */
    int *cuts = malloc((size_t)(n + 1) * sizeof *cuts);
    hessfit_status st = HESSFIT_SUCCESS;
    if (prefix == NULL || crossing == NULL || cuts == NULL) {
        st = no_memory();
        goto done;
    }
    prefix[0] = 0.0;
    for (int m = 0; m < n; m++) {
        const double a = set->mols[m].n_atoms;
        prefix[m + 1] = prefix[m] + a * a * a;
    }
    for (int g = 0; g < set->n_groups; g++) {
        int lo = n, hi = -1;
        for (int e = 0; e < set->n_energies; e++)
            if (set->energies[e].group == g) {
                lo = set->energies[e].mol < lo ? set->energies[e].mol : lo;
                hi = set->energies[e].mol > hi ? set->energies[e].mol : hi;
            }
        for (int m = lo + 1; m <= hi; m++)
            crossing[m]++;
    }
    int n_cuts = 0;
    cuts[n_cuts++] = 0;
    for (int k = 1; k < n_wanted; k++) {
        const double target = prefix[n] * (double)k / (double)n_wanted;
        int best = -1;
        for (int m = cuts[n_cuts - 1] + 1; m < n; m++)
            if (crossing[m] == 0 && (best < 0 || fabs(prefix[m] - target) < fabs(prefix[best] - target)))
                best = m;
        if (best > 0) /* the search starts after the last cut: the ranges are never empty */
            cuts[n_cuts++] = best;
    }
    cuts[n_cuts] = n;
    sh->n_blocks = n_cuts;
    sh->blocks = calloc((size_t)n_cuts, sizeof *sh->blocks);
    if (sh->blocks == NULL) {
        st = no_memory();
        goto done;
    }
    for (int b = 0; b < n_cuts; b++) {
        sh->blocks[b].begin = cuts[b];
        sh->blocks[b].end = cuts[b + 1];
        sh->blocks[b].cost = prefix[cuts[b + 1]] - prefix[cuts[b]];
    }
done:
    free(prefix);
    free(crossing);
    free(cuts);
    return st;
}

/* Largest cost first, each to the least loaded rank (ties: the lower block, the lower rank). */
static hessfit_status assign_ranks(hf_shards *sh)
{
    int *order = malloc((size_t)sh->n_blocks * sizeof *order);
    double *load = calloc((size_t)sh->size, sizeof *load);
    if (order == NULL || load == NULL) {
        free(order);
        free(load);
        return no_memory();
    }
    for (int b = 0; b < sh->n_blocks; b++)
        order[b] = b;
    for (int i = 1; i < sh->n_blocks; i++) /* insertion sort: stable, by cost descending */
        for (int j = i; j > 0 && sh->blocks[order[j]].cost > sh->blocks[order[j - 1]].cost; j--) {
            const int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    double total = 0.0, most = 0.0;
    for (int i = 0; i < sh->n_blocks; i++) {
        int r = 0;
        for (int q = 1; q < sh->size; q++)
            if (load[q] < load[r])
                r = q;
        sh->blocks[order[i]].rank = r;
        load[r] += sh->blocks[order[i]].cost;
        total += sh->blocks[order[i]].cost;
    }
    for (int r = 0; r < sh->size; r++)
        most = load[r] > most ? load[r] : most;
    sh->stats.max_block_cost_share = total > 0.0 ? most / total : 1.0;
    free(order);
    free(load);
    return HESSFIT_SUCCESS;
}

/* The set's energy and geometry targets of block b, as indices of the set's lists. */
static hessfit_status block_targets(const hf_training_set *set, block *b)
{
    b->energy_global = malloc((size_t)(set->n_energies + 1) * sizeof(int));
    b->geometry_global = malloc((size_t)(set->n_geometry + 1) * sizeof(int));
    if (b->energy_global == NULL || b->geometry_global == NULL)
        return no_memory();
    for (int e = 0; e < set->n_energies; e++)
        if (set->energies[e].mol >= b->begin && set->energies[e].mol < b->end)
            b->energy_global[b->n_energy++] = e;
    for (int g = 0; g < set->n_geometry; g++)
        if (set->geometry[g].mol >= b->begin && set->geometry[g].mol < b->end)
            b->geometry_global[b->n_geometry++] = g;
    return HESSFIT_SUCCESS;
}

/* ---- a block's own model and objective ---------------------------------------------------------- */

/* The message of a failure in block b: which structures, and how its molecule numbers map. */
static hessfit_status block_failure(const hf_shards *sh, int b, hessfit_status st)
{
    const block *k = &sh->blocks[b];
    return hessfit_error(st, "block %d of %d, structures %d-%d (its molecule m is structure m + %d; first: %s): %s", b + 1,
                         sh->n_blocks, k->begin + 1, k->end, k->begin, sh->set->labels[k->begin], hessfit_last_error());
}

/* The model and objective of block b at the set's start values, evaluated once when it has energy
 * or geometry targets (as the set's own objective is). */
static hessfit_status build_block(hf_shards *sh, int b)
{
    const hf_training_set *set = sh->set;
    block *k = &sh->blocks[b];
    const int n = k->end - k->begin;
    hessfit_energy_target *energies = NULL;
    hessfit_geometry_target *geometry = NULL;
    hessfit_status st;
    if (n == set->n_mols && set->objective != NULL) { /* the whole set: its own model and objective */
        k->model = set->model;
        k->objective = set->objective;
        k->shared = 1;
        k->n_free = set->n_free;
        for (int i = 0; i < set->n_free; i++)
            k->free_global[i] = i;
        return HESSFIT_SUCCESS;
    }
    if ((st = hessfit_model_create(&set->ff, set->mols + k->begin, set->typed + k->begin, n, &set->model_options,
                                   &k->model)) != HESSFIT_SUCCESS)
        return st;
    for (int i = 0; i < set->n_free; i++) { /* the set's free values in its order (hf_shards_load) */
        const int p = set->free_param[i], v = set->free_value[i];
        if (!hessfit_model_parameter_used(k->model, p))
            continue;
        if ((st = hessfit_model_add_free(k->model, p, v)) != HESSFIT_SUCCESS)
            return st;
        sh->x_block[k->n_free] = set->x_start[i];
        k->free_global[k->n_free++] = i;
    }
    if ((st = hessfit_model_set_free(k->model, sh->x_block)) != HESSFIT_SUCCESS ||
        (st = hessfit_objective_create(k->model, set->mols + k->begin, n, set->mol_objective + k->begin, &k->objective)) !=
            HESSFIT_SUCCESS)
        return st;
    energies = malloc((size_t)(k->n_energy + 1) * sizeof *energies);
    geometry = malloc((size_t)(k->n_geometry + 1) * sizeof *geometry);
    if (energies == NULL || geometry == NULL) {
        st = no_memory();
        goto done;
    }
    for (int e = 0; e < k->n_energy; e++) {
        energies[e] = set->energies[k->energy_global[e]];
        energies[e].mol -= k->begin;
    }
    for (int g = 0; g < k->n_geometry; g++) {
        geometry[g] = set->geometry[k->geometry_global[g]];
        geometry[g].mol -= k->begin;
    }
    if (k->n_energy > 0 && (st = hessfit_objective_set_energies(k->objective, energies, k->n_energy)) != HESSFIT_SUCCESS)
        goto done;
    if (k->n_geometry > 0 &&
        (st = hessfit_objective_set_geometry(k->objective, set->mols + k->begin, n, geometry, k->n_geometry)) !=
            HESSFIT_SUCCESS)
        goto done;
    if (k->n_energy + k->n_geometry > 0) {
        double loss;
        st = hessfit_objective_evaluate(k->objective, NULL, &loss, NULL, NULL);
    }
done:
    free(energies);
    free(geometry);
    return st;
}

void hf_shards_destroy(hf_shards *sh)
{
    if (sh == NULL)
        return;
    for (int b = 0; b < sh->n_blocks; b++) {
        block *k = &sh->blocks[b];
        if (!k->shared) {
            hessfit_objective_destroy(k->objective);
            hessfit_model_destroy(k->model);
        }
        free(k->free_global);
        free(k->energy_global);
        free(k->geometry_global);
    }
    free(sh->blocks);
    free(sh->message);
    free(sh->send);
    free(sh->recv);
    free(sh->counts);
    free(sh->displs);
    free(sh->x_block);
    free(sh->devices);
    free(sh);
}

/* Doubles of block b's packet: loss; the gradient (its free values), or J^T r and J^T J (n_free +
 * n_free^2, row-major); residuals (all its parts). */
static long long packet_size(const block *k, int want, int res)
{
    const long long n = k->n_free;
    return 1 + (want == WANT_GRADIENT ? n : want == WANT_NORMAL ? n + n * n : 0) +
           (res ? k->n_hessian + k->n_energy + k->n_geometry : 0);
}

/* The largest packet of block b: with gradient and residuals, or with the normal equations. */
static long long packet_capacity(const block *k)
{
    const long long a = packet_size(k, WANT_GRADIENT, 1), b = packet_size(k, WANT_NORMAL, 0);
    return a > b ? a : b;
}

/* Rank 0 learns the other ranks' blocks: free-value maps and Hessian-space residual counts. */
static hessfit_status exchange_layout(hf_shards *sh)
{
    hessfit_status st = HESSFIT_SUCCESS;
    long long mine = 0, all = 0;
    for (int b = 0; b < sh->n_blocks; b++) {
        all += 2 + sh->n_free;
        if (sh->blocks[b].rank == sh->rank)
            mine += 2 + sh->n_free;
    }
    if (all > 0x7fffffff)
        return hessfit_error(HESSFIT_ERROR_OVERFLOW, "MPI blocks: %lld doubles of layout", all);
    double *send = malloc((size_t)(mine + 1) * sizeof *send), *recv = malloc((size_t)(all + 1) * sizeof *recv);
    int *counts = calloc((size_t)sh->size, sizeof *counts), *displs = calloc((size_t)sh->size, sizeof *displs);
    if (send == NULL || recv == NULL || counts == NULL || displs == NULL) {
        st = no_memory();
        goto done;
    }
    /* per block owned, in block order: n_free, n_hessian, the map (padded to the set's n_free) */
    double *at = send;
    for (int b = 0; b < sh->n_blocks; b++) {
        const block *k = &sh->blocks[b];
        counts[k->rank] += 2 + sh->n_free;
        if (k->rank != sh->rank)
            continue;
        at[0] = k->n_free;
        at[1] = (double)k->n_hessian;
        for (int j = 0; j < sh->n_free; j++)
            at[2 + j] = j < k->n_free ? k->free_global[j] : -1;
        at += 2 + sh->n_free;
    }
    for (int r = 1; r < sh->size; r++)
        displs[r] = displs[r - 1] + counts[r - 1];
    if ((st = hf_comm_gatherv(send, (int)mine, recv, counts, displs)) != HESSFIT_SUCCESS)
        goto done;
    if (sh->rank == 0) {
        int *next = calloc((size_t)sh->size, sizeof *next);
        if (next == NULL) {
            st = no_memory();
            goto done;
        }
        for (int b = 0; b < sh->n_blocks; b++) {
            block *k = &sh->blocks[b];
            const double *p = recv + displs[k->rank] + next[k->rank];
            next[k->rank] += 2 + sh->n_free;
            k->n_free = (int)p[0];
            k->n_hessian = (long long)p[1];
            for (int j = 0; j < k->n_free; j++)
                k->free_global[j] = (int)p[2 + j];
        }
        free(next);
    }
done:
    free(send);
    free(recv);
    free(counts);
    free(displs);
    return st;
}

/* OpenMM's value of a platform property of the Context, "" when the platform has no such property. */
static const char *property(OpenMM_Context *context, const char *name)
{
    const OpenMM_Platform *platform = OpenMM_Context_getPlatform(context);
    const OpenMM_StringArray *names = OpenMM_Platform_getPropertyNames(platform);
    for (int i = 0; i < OpenMM_StringArray_getSize(names); i++)
        if (strcmp(OpenMM_StringArray_get(names, i), name) == 0)
            return OpenMM_Platform_getPropertyValue(platform, context, name);
    return "";
}

/* Rank 0 learns every rank's device: "rank R (host H): OpenCL device 0 'name'", from the Context of
 * the rank's first block (its platform's DeviceIndex and DeviceName properties). */
static hessfit_status exchange_devices(hf_shards *sh)
{
    char mine[DEVICE_TEXT];
    int n = snprintf(mine, sizeof mine, "rank %d (host %.100s): ", sh->rank, hf_comm_host());
    const block *k = NULL;
    for (int b = 0; b < sh->n_blocks && k == NULL; b++)
        if (sh->blocks[b].rank == sh->rank)
            k = &sh->blocks[b];
    OpenMM_Context *context = k != NULL ? hessfit_model_context(k->model) : NULL;
    if (context == NULL)
        snprintf(mine + n, sizeof mine - (size_t)n, "no blocks");
    else {
        const char *platform = OpenMM_Platform_getName(OpenMM_Context_getPlatform(context));
        const char *index = property(context, "DeviceIndex");
        if (index[0] == '\0') /* Reference, CPU */
            snprintf(mine + n, sizeof mine - (size_t)n, "%s", platform);
        else
            snprintf(mine + n, sizeof mine - (size_t)n, "%s device %s '%s'", platform, index, property(context, "DeviceName"));
    }
    return hf_comm_gather_bytes(mine, DEVICE_TEXT, sh->devices);
}

const char *hf_shards_device(const hf_shards *sh, int rank)
{
    return sh->rank == 0 && rank >= 0 && rank < sh->size ? sh->devices + (size_t)rank * DEVICE_TEXT : "";
}

hessfit_status hf_shards_create(const hf_training_set *set, hf_shards **out)
{
    hessfit_status st;
    *out = NULL;
    hf_shards *sh = calloc(1, sizeof *sh);
    if (sh == NULL)
        return hf_comm_agree(no_memory());
    sh->set = set;
    sh->rank = hf_comm_rank();
    sh->size = hf_comm_size();
    sh->n_free = set->n_free;
    if ((st = cut_blocks(sh, set->settings.blocks < set->n_mols ? set->settings.blocks : set->n_mols)) == HESSFIT_SUCCESS)
        st = assign_ranks(sh);
    sh->message = malloc((size_t)(HEADER + sh->n_free) * sizeof *sh->message);
    sh->x_block = malloc((size_t)(sh->n_free + 1) * sizeof *sh->x_block);
    sh->counts = calloc((size_t)sh->size, sizeof *sh->counts);
    sh->displs = calloc((size_t)sh->size, sizeof *sh->displs);
    sh->devices = malloc((size_t)(sh->rank == 0 ? sh->size : 1) * DEVICE_TEXT); /* rank 0: everyone's */
    if (st == HESSFIT_SUCCESS && (!sh->message || !sh->x_block || !sh->counts || !sh->displs || !sh->devices))
        st = no_memory();
    long long my_packets = 0, all_packets = 0;
    for (int b = 0; b < sh->n_blocks && st == HESSFIT_SUCCESS; b++) {
        block *k = &sh->blocks[b];
        if ((k->free_global = malloc((size_t)(sh->n_free + 1) * sizeof *k->free_global)) == NULL)
            st = no_memory();
        else
            st = block_targets(set, k);
        if (st == HESSFIT_SUCCESS && k->rank == sh->rank) {
            if ((st = build_block(sh, b)) != HESSFIT_SUCCESS)
                st = block_failure(sh, b, st);
            long long first, count;
            if (st == HESSFIT_SUCCESS &&
                (st = hessfit_objective_part_range(k->objective, HESSFIT_OBJ_PART_HESSIAN, &first, &count)) == HESSFIT_SUCCESS)
                k->n_hessian = count;
        }
    }
    if ((st = hf_comm_agree(st)) == HESSFIT_SUCCESS && (st = exchange_layout(sh)) == HESSFIT_SUCCESS &&
        (st = exchange_devices(sh)) == HESSFIT_SUCCESS) {
        sh->n_residuals = (long long)set->n_energies + set->n_geometry;
        for (int b = 0; b < sh->n_blocks; b++) {
            sh->n_residuals += sh->blocks[b].n_hessian;
            all_packets += packet_capacity(&sh->blocks[b]);
            if (sh->blocks[b].rank == sh->rank)
                my_packets += packet_capacity(&sh->blocks[b]);
        }
        if (all_packets + sh->size > 0x7fffffff)
            st = hessfit_error(HESSFIT_ERROR_OVERFLOW, "MPI blocks: %lld doubles per evaluation", all_packets);
        else if ((sh->send = malloc((size_t)(my_packets + 1) * sizeof *sh->send)) == NULL ||
                 (sh->rank == 0 && (sh->recv = malloc((size_t)(all_packets + sh->size) * sizeof *sh->recv)) == NULL))
            st = no_memory();
    }
    if ((st = hf_comm_agree(st)) != HESSFIT_SUCCESS) {
        hf_shards_destroy(sh);
        return st;
    }
    sh->stats.n_blocks = sh->n_blocks;
    sh->stats.n_ranks = sh->size;
    sh->stats.packet_doubles = sh->stats.packet_doubles_normal = sh->size; /* each rank's seconds */
    for (int b = 0; b < sh->n_blocks; b++) {
        sh->stats.packet_doubles += packet_size(&sh->blocks[b], WANT_GRADIENT, 0);
        sh->stats.packet_doubles_normal += packet_size(&sh->blocks[b], WANT_NORMAL, 0);
    }
    *out = sh;
    return HESSFIT_SUCCESS;
}

/* ---- one evaluation ---------------------------------------------------------------------------- */

#ifdef HESSFIT_TEST_HOOKS
/* Test builds only: HESSFIT_TEST_FAIL_RANK=r makes rank r's first block fail at its evaluation
 * HESSFIT_TEST_FAIL_EVALUATION (default 3), as a bad molecule would. */
static hessfit_status injected_failure(const hf_shards *sh, int b)
{
    const char *rank = getenv("HESSFIT_TEST_FAIL_RANK"), *when = getenv("HESSFIT_TEST_FAIL_EVALUATION");
    if (rank == NULL || atoi(rank) != sh->rank || sh->stats.evaluations + 1 != (unsigned long long)(when ? atoi(when) : 3))
        return HESSFIT_SUCCESS;
    (void)b;
    return hessfit_error(HESSFIT_ERROR_VALUE, "molecule 1: injected failure (HESSFIT_TEST_FAIL_RANK=%s)", rank);
}
#endif

/* This rank's blocks at x into sh->send, in block order (packet_size's layout); the first failure
 * (named) is returned. */
static hessfit_status evaluate_mine(hf_shards *sh, const double *x, int want, int res)
{
    double *at = sh->send;
    for (int b = 0; b < sh->n_blocks; b++) {
        block *k = &sh->blocks[b];
        if (k->rank != sh->rank)
            continue;
        for (int j = 0; j < k->n_free; j++)
            sh->x_block[j] = x[k->free_global[j]];
        hessfit_status st = HESSFIT_SUCCESS;
#ifdef HESSFIT_TEST_HOOKS
        st = injected_failure(sh, b);
#endif
        if (st == HESSFIT_SUCCESS && want == WANT_NORMAL)
            st = hessfit_objective_normal_equations(k->objective, sh->x_block, &at[0], at + 1 + k->n_free, at + 1);
        else if (st == HESSFIT_SUCCESS)
            st = hessfit_objective_evaluate(k->objective, sh->x_block, &at[0], want == WANT_GRADIENT ? at + 1 : NULL,
                                            res ? at + 1 + (want == WANT_GRADIENT ? k->n_free : 0) : NULL);
        if (st != HESSFIT_SUCCESS)
            return block_failure(sh, b, st);
        at += packet_size(k, want, res);
    }
    return HESSFIT_SUCCESS;
}

/* Every rank: the message is in sh->message; evaluate, gather (each rank's packets in block order,
 * then the seconds its blocks took), agree. */
static hessfit_status evaluate_collective(hf_shards *sh, int want, int res)
{
    const double t0 = now();
    hessfit_status local = evaluate_mine(sh, sh->message + HEADER, want, res);
    long long mine = 0;
    for (int r = 0; r < sh->size; r++)
        sh->counts[r] = 1;
    for (int b = 0; b < sh->n_blocks; b++) {
        const long long s = packet_size(&sh->blocks[b], want, res);
        sh->counts[sh->blocks[b].rank] += (int)s;
        if (sh->blocks[b].rank == sh->rank)
            mine += s;
    }
    for (int r = 1; r < sh->size; r++)
        sh->displs[r] = sh->displs[r - 1] + sh->counts[r - 1];
    sh->send[mine] = now() - t0;
    sh->stats.seconds_compute += sh->send[mine];
    hessfit_status st = hf_comm_gatherv(sh->send, (int)mine + 1, sh->recv, sh->counts, sh->displs);
    if (st != HESSFIT_SUCCESS)
        local = st; /* an MPI failure: still agree, so that no rank waits */
    /* a stop signal (Ctrl-C, mpirun's or Slurm's SIGTERM) caught by any rank stops the optimiser on rank 0 */
    int stop = hessfit_optimize_stop_requested();
    st = hf_comm_agree_stop(local, &stop);
    if (stop)
        hessfit_optimize_request_stop();
    return st;
}

/* Rank 0: one evaluation at x with the derivatives `want` (WANT_GRADIENT: into d; WANT_NORMAL: J^T r
 * into d, J^T J into jtj) and residuals when not NULL, summed in block order. */
static hessfit_status evaluate(hf_shards *sh, const double *x, int want, double *loss, double *d, double *jtj,
                               double *residuals)
{
    hessfit_status st;
    const double t0 = now();
    const int n = sh->n_free, want_res = residuals != NULL && sh->n_residuals > 0;
    sh->message[0] = CMD_EVALUATE;
    sh->message[1] = want;
    sh->message[2] = want_res;
    sh->message[3] = 0;
    memcpy(sh->message + HEADER, x, (size_t)n * sizeof *x);
    if ((st = hf_comm_bcast(sh->message, (size_t)(HEADER + n) * sizeof *sh->message)) != HESSFIT_SUCCESS ||
        (st = evaluate_collective(sh, want, want_res)) != HESSFIT_SUCCESS) {
        sh->stats.evaluations++; /* a failed one (an undefined trial point): all of it counts as blocks */
        sh->stats.seconds_total += now() - t0;
        sh->stats.seconds_slowest += now() - t0;
        return st;
    }
    /* the sums in block order: each block's partials are the same on any rank */
    const hf_training_set *set = sh->set;
    const long long energy_base = sh->n_residuals - set->n_energies - set->n_geometry;
    const long long geometry_base = energy_base + set->n_energies;
    long long hessian_at = 0;
    int *next = calloc((size_t)sh->size, sizeof *next);
    if (next == NULL)
        return no_memory();
    *loss = 0.0;
    if (want != WANT_LOSS)
        memset(d, 0, (size_t)n * sizeof *d);
    if (want == WANT_NORMAL)
        memset(jtj, 0, (size_t)n * (size_t)n * sizeof *jtj);
    for (int b = 0; b < sh->n_blocks; b++) {
        const block *k = &sh->blocks[b];
        const int *g = k->free_global;
        const double *p = sh->recv + sh->displs[k->rank] + next[k->rank];
        next[k->rank] += (int)packet_size(k, want, want_res);
        *loss += p[0];
        p++;
        if (want != WANT_LOSS) {
            for (int j = 0; j < k->n_free; j++)
                d[g[j]] += p[j];
            p += k->n_free;
        }
        if (want == WANT_NORMAL) { /* the block's J^T J onto the global free values */
            for (int i = 0; i < k->n_free; i++)
                for (int j = 0; j < k->n_free; j++)
                    jtj[(size_t)g[i] * (size_t)n + (size_t)g[j]] += p[(size_t)i * (size_t)k->n_free + (size_t)j];
            p += (size_t)k->n_free * (size_t)k->n_free;
        }
        if (want_res) {
            memcpy(residuals + hessian_at, p, (size_t)k->n_hessian * sizeof *p);
            hessian_at += k->n_hessian;
            p += k->n_hessian;
            for (int e = 0; e < k->n_energy; e++)
                residuals[energy_base + k->energy_global[e]] = *p++;
            for (int q = 0; q < k->n_geometry; q++)
                residuals[geometry_base + k->geometry_global[q]] = *p++;
        }
    }
    free(next);
    double slowest = 0.0;
    for (int r = 0; r < sh->size; r++)
        slowest = fmax(slowest, sh->recv[sh->displs[r] + sh->counts[r] - 1]);
    sh->stats.evaluations++;
    sh->stats.seconds_slowest += slowest;
    sh->stats.seconds_total += now() - t0;
    return HESSFIT_SUCCESS;
}

hessfit_status hf_shards_evaluate(hf_shards *sh, const double *x, double *loss, double *grad, double *residuals)
{
    return evaluate(sh, x, grad != NULL ? WANT_GRADIENT : WANT_LOSS, loss, grad, NULL, residuals);
}

hessfit_status hf_shards_normal_equations(hf_shards *sh, const double *x, double *loss, double *jtj, double *jtr)
{
    return evaluate(sh, x, WANT_NORMAL, loss, jtr, jtj, NULL);
}

/* This process's peak resident memory (VmHWM of /proc/self/status), MiB; NaN when unknown. */
static double peak_memory_mib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    double kib = NAN;
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, "VmHWM:", 6) == 0)
            kib = strtod(line + 6, NULL);
    if (f != NULL)
        fclose(f);
    return kib / 1024.0;
}

/* Every rank: its peak memory to rank 0, at recv[rank]. */
static hessfit_status gather_peak_memory(hf_shards *sh, double *recv)
{
    const double mine = peak_memory_mib();
    for (int r = 0; r < sh->size; r++) {
        sh->counts[r] = 1;
        sh->displs[r] = r;
    }
    return hf_comm_gatherv(&mine, 1, recv, sh->counts, sh->displs);
}

hessfit_status hf_shards_peak_memory(hf_shards *sh, double *mib)
{
    hessfit_status st;
    memset(sh->message, 0, (size_t)(HEADER + sh->n_free) * sizeof *sh->message);
    sh->message[0] = CMD_PEAK_MEMORY;
    if ((st = hf_comm_bcast(sh->message, (size_t)(HEADER + sh->n_free) * sizeof *sh->message)) != HESSFIT_SUCCESS)
        return st;
    return gather_peak_memory(sh, mib);
}

hessfit_status hf_shards_serve(hf_shards *sh)
{
    hessfit_status st;
    /* Ctrl-C, or mpirun's or Slurm's SIGTERM, sets the stop flag, which the next evaluation's
     * agreement takes to rank 0: its optimiser stops, writes the checkpoint and then ends these ranks */
    hessfit_optimize_clear_stop();
    hessfit_optimize_catch_sigint(1); /* sigaction cannot fail with these arguments */
    hessfit_optimize_catch_sigterm(1);
    for (;;) {
        if ((st = hf_comm_bcast(sh->message, (size_t)(HEADER + sh->n_free) * sizeof *sh->message)) != HESSFIT_SUCCESS)
            return st;
        if (sh->message[0] == CMD_FINISH)
            return (hessfit_status)(int)sh->message[3];
        if (sh->message[0] == CMD_PEAK_MEMORY) {
            if ((st = gather_peak_memory(sh, NULL)) != HESSFIT_SUCCESS)
                return st;
            continue;
        }
        evaluate_collective(sh, (int)sh->message[1], sh->message[2] != 0.0);
        sh->stats.evaluations++;
    }
}

hessfit_status hf_shards_finish(hf_shards *sh, hessfit_status status)
{
    if (sh == NULL)
        return HESSFIT_SUCCESS;
    memset(sh->message, 0, (size_t)(HEADER + sh->n_free) * sizeof *sh->message);
    sh->message[0] = CMD_FINISH;
    sh->message[3] = (double)status;
    return hf_comm_bcast(sh->message, (size_t)(HEADER + sh->n_free) * sizeof *sh->message);
}

void hf_shards_get_stats(const hf_shards *sh, hf_shards_stats *stats)
{
    *stats = sh->stats;
}
