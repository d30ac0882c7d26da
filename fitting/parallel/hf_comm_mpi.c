/* hf_comm.h on MPI (CMake option HESSFIT_WITH_MPI): MPI_COMM_WORLD, every return code checked. */
#define _POSIX_C_SOURCE 200809L
#include "hf_comm.h"

#include <mpi.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int initialised_here; /* hf_comm_init called MPI_Init */
static int node_rank = -1;     /* the rank among its node's ranks (hf_comm_init), -1: not known */

/* Tasks of this Slurm job step (srun -n), 0 outside one. */
static int slurm_tasks(void)
{
    const char *v = getenv("SLURM_STEP_NUM_TASKS");
    return v != NULL ? atoi(v) : 0;
}
static char host[MPI_MAX_PROCESSOR_NAME + 1];

/* A failed MPI call as a status naming the call and MPI's text for its code. */
static hessfit_status mpi_failure(const char *call, int code)
{
    char text[MPI_MAX_ERROR_STRING + 1] = "";
    int len = 0;
    if (MPI_Error_string(code, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "error code %d", code);
    return hessfit_error(HESSFIT_ERROR_IO, "MPI: %s failed on rank %d (%s): %s", call, hf_comm_rank(), hf_comm_host(), text);
}

/* A launcher's variable (mpirun, mpiexec, srun with PMI/PMIx): this process is one of several. */
static int launched(void)
{
    static const char *const names[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "MPI_LOCALNRANKS"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (getenv(names[i]) != NULL)
            return 1;
    return slurm_tasks() > 1;
}

hessfit_status hf_comm_init(int *argc, char ***argv)
{
    int done = 0, rc;
    if ((rc = MPI_Initialized(&done)) != MPI_SUCCESS)
        return mpi_failure("MPI_Initialized", rc);
    if (!done && !launched()) /* a plain run: one process, MPI never started */
        return HESSFIT_SUCCESS;
    if (!done) {
        if ((rc = MPI_Init(argc, argv)) != MPI_SUCCESS)
            return mpi_failure("MPI_Init", rc);
        initialised_here = 1;
    }
    /* errors come back as codes (checked) instead of MPI's default abort without a message */
    if ((rc = MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)) != MPI_SUCCESS)
        return mpi_failure("MPI_Comm_set_errhandler", rc);
    MPI_Comm node; /* the ranks sharing this rank's memory: its node */
    if ((rc = MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, hf_comm_rank(), MPI_INFO_NULL, &node)) !=
        MPI_SUCCESS)
        return mpi_failure("MPI_Comm_split_type", rc);
    rc = MPI_Comm_rank(node, &node_rank);
    MPI_Comm_free(&node);
    if (rc != MPI_SUCCESS)
        return mpi_failure("MPI_Comm_rank", rc);
    if (slurm_tasks() > 1 && hf_comm_size() == 1) /* K copies that do not know one another */
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                             "MPI: Slurm started %d tasks but MPI sees one: run srun with the MPI plugin your MPI "
                             "was built for (srun --mpi=pmix, or pmi2), or use mpirun",
                             slurm_tasks());
    return HESSFIT_SUCCESS;
}

void hf_comm_finalize(void)
{
    int finalized = 0;
    if (initialised_here && MPI_Finalized(&finalized) == MPI_SUCCESS && !finalized)
        MPI_Finalize();
    initialised_here = 0;
}

static int is_initialised(void)
{
    int done = 0, finalized = 0;
    return MPI_Initialized(&done) == MPI_SUCCESS && done && MPI_Finalized(&finalized) == MPI_SUCCESS && !finalized;
}

int hf_comm_rank(void)
{
    int r = 0;
    if (is_initialised() && MPI_Comm_rank(MPI_COMM_WORLD, &r) != MPI_SUCCESS)
        r = 0;
    return r;
}

int hf_comm_size(void)
{
    int n = 1;
    if (is_initialised() && MPI_Comm_size(MPI_COMM_WORLD, &n) != MPI_SUCCESS)
        n = 1;
    return n;
}

int hf_comm_local_rank(void)
{
    if (node_rank >= 0)
        return node_rank;
    static const char *const names[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "MPI_LOCALRANKID",
                                        "MV2_COMM_WORLD_LOCAL_RANK"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *v = getenv(names[i]);
        if (v != NULL && v[0] != '\0')
            return atoi(v);
    }
    return 0;
}

const char *hf_comm_host(void)
{
    if (host[0] == '\0') {
        int len = 0;
        if (!is_initialised() || MPI_Get_processor_name(host, &len) != MPI_SUCCESS || len <= 0)
            if (gethostname(host, sizeof host - 1) != 0)
                snprintf(host, sizeof host, "unknown host");
    }
    return host;
}

int hf_comm_have_mpi(void)
{
    return 1;
}

hessfit_status hf_comm_bcast(void *buf, size_t bytes)
{
    int rc;
    if (hf_comm_size() == 1)
        return HESSFIT_SUCCESS;
    for (size_t at = 0; at < bytes;) { /* MPI counts are ints */
        const size_t chunk = bytes - at < (size_t)INT_MAX ? bytes - at : (size_t)INT_MAX;
        if ((rc = MPI_Bcast((char *)buf + at, (int)chunk, MPI_BYTE, 0, MPI_COMM_WORLD)) != MPI_SUCCESS)
            return mpi_failure("MPI_Bcast", rc);
        at += chunk;
    }
    return HESSFIT_SUCCESS;
}

hessfit_status hf_comm_gatherv(const double *send, int n_send, double *recv, const int *counts, const int *displs)
{
    if (hf_comm_size() == 1) { /* also without MPI_Init (a plain run) */
        if (n_send > 0 && recv + displs[0] != send)
            memmove(recv + displs[0], send, (size_t)n_send * sizeof *send);
        return HESSFIT_SUCCESS;
    }
    int rc = MPI_Gatherv(send, n_send, MPI_DOUBLE, recv, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return rc == MPI_SUCCESS ? HESSFIT_SUCCESS : mpi_failure("MPI_Gatherv", rc);
}

hessfit_status hf_comm_gather_bytes(const void *send, size_t bytes, void *recv)
{
    if (hf_comm_size() == 1) {
        if (bytes > 0 && recv != send)
            memmove(recv, send, bytes);
        return HESSFIT_SUCCESS;
    }
    if (bytes > (size_t)INT_MAX)
        return hessfit_error(HESSFIT_ERROR_OVERFLOW, "MPI: a gather of %zu bytes per rank", bytes);
    int rc = MPI_Gather(send, (int)bytes, MPI_BYTE, recv, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
    return rc == MPI_SUCCESS ? HESSFIT_SUCCESS : mpi_failure("MPI_Gather", rc);
}

hessfit_status hf_comm_agree(hessfit_status st)
{
    return hf_comm_agree_stop(st, NULL);
}

hessfit_status hf_comm_agree_stop(hessfit_status st, int *stop)
{
    const int size = hf_comm_size(), me = hf_comm_rank();
    /* the lowest failing rank (size when none) and whether none asks to stop, by one MPI_MIN; then
     * the failing rank's status and message from it */
    if (size == 1)
        return st; /* one rank: its own status, message and request */
    int mine[2] = {st != HESSFIT_SUCCESS ? me : size, stop != NULL && *stop ? 0 : 1}, all[2] = {size, 1}, rc;
    if ((rc = MPI_Allreduce(mine, all, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD)) != MPI_SUCCESS)
        return mpi_failure("MPI_Allreduce", rc);
    const int first = all[0];
    if (stop != NULL)
        *stop = all[1] == 0;
    if (first == size)
        return HESSFIT_SUCCESS;
    struct {
        int status;
        char text[HESSFIT_ERROR_MESSAGE_SIZE];
    } what;
    memset(&what, 0, sizeof what);
    if (me == first) {
        what.status = (int)st;
        snprintf(what.text, sizeof what.text, "rank %d (host %s): %s", me, hf_comm_host(), hessfit_last_error());
    }
    if ((rc = MPI_Bcast(&what, (int)sizeof what, MPI_BYTE, first, MPI_COMM_WORLD)) != MPI_SUCCESS)
        return mpi_failure("MPI_Bcast", rc);
    return hessfit_error((hessfit_status)what.status, "%s", what.text);
}

void hf_comm_abort(int code)
{
    fflush(stdout);
    fflush(stderr);
    if (is_initialised())
        MPI_Abort(MPI_COMM_WORLD, code);
    exit(code);
}
