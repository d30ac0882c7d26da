#ifndef HF_COMM_H_
#define HF_COMM_H_
/*
 * The fitting layer's view of MPI (docs/mpi.md): rank, size, host, and the few collectives the
 * sharded objective needs, with errors as hessfit_status (every MPI return code checked). Two
 * implementations with this interface: hf_comm_mpi.c (CMake option HESSFIT_WITH_MPI) and
 * hf_comm_serial.c (one process: rank 0 of 1, the collectives copy or do nothing).
 *
 * Rank 0 is the root: it runs the optimiser, prints and writes; the collectives below move data
 * from or to it. All ranks must call a collective in the same order.
 */
#include "hessfit_status.h"

#include <stddef.h>

/** MPI_Init when a launcher started this process (mpirun / mpiexec / srun: their environment
 * variables), else nothing: a plain run is one process that never starts MPI. A no-op without MPI
 * or when MPI is initialised already. An srun of several tasks that MPI does not connect is an
 * error. Call once, before any other. */
hessfit_status hf_comm_init(int *argc, char ***argv);
/** MPI_Finalize when hf_comm_init initialised it. */
void hf_comm_finalize(void);
/** This process's rank (0 without MPI) and the number of ranks (1 without MPI). */
int hf_comm_rank(void);
int hf_comm_size(void);
/** The rank's index among the ranks of its node: its rank in MPI_Comm_split_type(MPI_COMM_TYPE_SHARED),
 * taken once by hf_comm_init; without MPI running, the launcher's OMPI_COMM_WORLD_LOCAL_RANK,
 * SLURM_LOCALID, ... ; 0 when unknown. */
int hf_comm_local_rank(void);
/** The host name (MPI_Get_processor_name, else gethostname). */
const char *hf_comm_host(void);
/** 1 when built with MPI. */
int hf_comm_have_mpi(void);

/** bytes of buf from rank 0 to every rank. */
hessfit_status hf_comm_bcast(void *buf, size_t bytes);
/** Rank 0 receives every rank's n_send doubles, rank r's at recv + displs[r] (counts[r] of them);
 * counts, displs and recv are read on rank 0 only. */
hessfit_status hf_comm_gatherv(const double *send, int n_send, double *recv, const int *counts, const int *displs);

/** Rank 0 receives every rank's `bytes` bytes of send, rank r's at recv + r * bytes (recv is read on
 * rank 0 only). */
hessfit_status hf_comm_gather_bytes(const void *send, size_t bytes, void *recv);

/**
 * Every rank passes its status st (and the thread's message when it failed). Returns on every
 * rank HESSFIT_SUCCESS when all succeeded, else the failure of the lowest failing rank with its
 * message prefixed "rank R (host H): " (one rank: st and its message as they are). No rank hangs:
 * every rank takes part.
 */
hessfit_status hf_comm_agree(hessfit_status st);
/** hf_comm_agree, and in the same reduction a stop request: *stop (in: this rank's, 0 or 1) becomes
 * 1 on every rank when it was 1 on any rank (a signal caught by any rank stops the fit). */
hessfit_status hf_comm_agree_stop(hessfit_status st, int *stop);

/** MPI_Abort(code) of every rank (exit(code) without MPI); does not return. */
void hf_comm_abort(int code);

#endif
