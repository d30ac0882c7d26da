#ifndef HF_SHARDS_H_
#define HF_SHARDS_H_
/*
 * The objective of a training set evaluated in fixed blocks of molecules, the blocks spread over
 * MPI ranks (hf_comm.h; docs/mpi.md), with results that do not depend on the number of ranks.
 *
 * Blocks. The input's `blocks = B` cuts the molecules into B contiguous ranges of about equal cost
 * (n_atoms^3 per molecule: the eigensolvers'), never inside a conformer group's span (an energy
 * group stays in one block; fewer blocks when the groups leave too few places to cut). The cut
 * depends on the input alone. Each block is a fit model and objective of its own (its own
 * Context), whose free values are the global free values its terms use (mapped onto the global
 * list; a free value no molecule of the block uses has a partial derivative of 0 there), built from
 * the same force field, start values and options as the whole set's; B = 1 is the whole set's own
 * model and objective, today's one-Context evaluation.
 *
 * Ranks. Rank 0 reads the input files and sends their bytes to the others (hf_shards_load); it
 * runs the optimiser; hf_shards_evaluate sends the free values to every rank, each
 * rank evaluates its blocks (assigned by cost, largest first to the least loaded rank), rank 0
 * gathers every block's partial results -- loss, gradient over the block's free values, residuals,
 * or for LM the normal equations J^T r and J^T J over the block's free values -- and sums them in
 * block order: a block's partials are the same whichever rank computes it, so the sums, and the fit, are
 * bit for bit the same with any number of ranks, one process included. The other ranks wait in
 * hf_shards_serve until rank 0 calls hf_shards_finish.
 *
 * Errors. Every evaluation ends in hf_comm_agree: a block that fails on any rank fails the
 * evaluation on rank 0 with one message naming the rank, its host, the block's structures and the
 * molecule, and no rank hangs.
 */
#include "hf_training_set.h"

typedef struct hf_shards hf_shards;

/**
 * hf_training_set_load on every rank, collectively. Rank 0 reads every input file once and loads
 * the set (with its model and objective); then it broadcasts the files' bytes (hf_file_table.h) and
 * the other ranks load the same set from them without the whole set's model and objective
 * (options->no_model is set there: a rank builds only its blocks' models, hf_shards_create), and
 * take rank 0's free values (set->free_param, free_value, n_fit, n_free, x_start). A failure on any rank fails every rank, with its message (hf_comm_agree); the set
 * is then freed.
 */
hessfit_status hf_shards_load(const char *input, const hf_training_set_options *options, hf_training_set *set);

/** The blocks of set (settings.blocks), assigned to the hf_comm_size() ranks, and this rank's
 * blocks' models and objectives at the start values. Collective: every rank calls it with the same
 * set (rank 0's has its objective; the others' may have none), and it fails on every rank when it
 * fails on one. */
hessfit_status hf_shards_create(const hf_training_set *set, hf_shards **shards);
void hf_shards_destroy(hf_shards *shards);

/** Rank 0: one evaluation at x (the set's n_free values): loss, grad (n_free, may be NULL),
 * residuals (hessfit_objective_n_residuals of the whole set, may be NULL) -- the whole set's,
 * summed in block order. */
hessfit_status hf_shards_evaluate(hf_shards *shards, const double *x, double *loss, double *grad, double *residuals);
/** Rank 0: the normal equations at x, as hessfit_objective_normal_equations gives them for the whole
 * set: loss, jtj (n_free x n_free, row-major, both triangles) = J^T J, jtr (n_free) = J^T r; each
 * block's (hessfit_objective_normal_equations of its objective) mapped onto the set's free values and
 * summed in block order. With one block, exactly the whole set's call. */
hessfit_status hf_shards_normal_equations(hf_shards *shards, const double *x, double *loss, double *jtj, double *jtr);
/** The other ranks: evaluate their blocks whenever rank 0 asks, until hf_shards_finish; returns
 * the status rank 0 finished with (HESSFIT_SUCCESS, or a failure whose message rank 0 printed). */
hessfit_status hf_shards_serve(hf_shards *shards);
/** Rank 0: every rank's peak resident memory so far (VmHWM), MiB, into mib[rank] (hf_comm_size()
 * values; NaN where /proc is not there). The other ranks answer in hf_shards_serve. */
hessfit_status hf_shards_peak_memory(hf_shards *shards, double *mib);
/** Rank 0: ends hf_shards_serve on every other rank, passing st (0: the fit succeeded). */
hessfit_status hf_shards_finish(hf_shards *shards, hessfit_status st);

/** Rank 0: the device of rank r's Contexts, as "rank R (host H): OpenCL device 0 'its name'"
 * (Reference, CPU: the platform's name alone; "no blocks" for a rank without blocks); "" elsewhere. */
const char *hf_shards_device(const hf_shards *shards, int r);

/** What the blocks are and did (rank 0: the whole run's evaluations). */
typedef struct hf_shards_stats {
    int n_blocks, n_ranks;
    unsigned long long evaluations;
    double seconds_compute; /* this rank's own blocks */
    double seconds_slowest; /* rank 0: the slowest rank's blocks, summed over the evaluations */
    double seconds_total;   /* rank 0: whole evaluations (broadcast, blocks, gather, agree, sums); the
                               communication's share is (total - slowest) / total */
    double max_block_cost_share; /* the largest rank's share of the total cost (1/n_ranks: balanced) */
    long long packet_doubles;    /* doubles gathered per evaluation with a gradient (rank 0) */
    long long packet_doubles_normal; /* ... with the normal equations (LM; rank 0) */
} hf_shards_stats;
void hf_shards_get_stats(const hf_shards *shards, hf_shards_stats *stats);

#endif
