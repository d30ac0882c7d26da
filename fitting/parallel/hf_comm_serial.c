/* hf_comm.h for one process (a build without MPI): rank 0 of 1; the collectives copy or do nothing. */
#define _POSIX_C_SOURCE 200809L
#include "hf_comm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

hessfit_status hf_comm_init(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return HESSFIT_SUCCESS;
}

void hf_comm_finalize(void) {}

int hf_comm_rank(void)
{
    return 0;
}

int hf_comm_size(void)
{
    return 1;
}

int hf_comm_local_rank(void)
{
    return 0;
}

const char *hf_comm_host(void)
{
    static char host[256];
    if (host[0] == '\0' && gethostname(host, sizeof host - 1) != 0)
        snprintf(host, sizeof host, "unknown host");
    return host;
}

int hf_comm_have_mpi(void)
{
    return 0;
}

hessfit_status hf_comm_bcast(void *buf, size_t bytes)
{
    (void)buf;
    (void)bytes;
    return HESSFIT_SUCCESS;
}

hessfit_status hf_comm_gatherv(const double *send, int n_send, double *recv, const int *counts, const int *displs)
{
    (void)counts;
    if (n_send > 0 && recv + displs[0] != send)
        memmove(recv + displs[0], send, (size_t)n_send * sizeof *send);
    return HESSFIT_SUCCESS;
}

hessfit_status hf_comm_gather_bytes(const void *send, size_t bytes, void *recv)
{
    if (bytes > 0 && recv != send)
        memmove(recv, send, bytes);
    return HESSFIT_SUCCESS;
}

hessfit_status hf_comm_agree(hessfit_status st)
{
    return st; /* one rank: its own status and message */
}

hessfit_status hf_comm_agree_stop(hessfit_status st, int *stop)
{
    (void)stop; /* one rank: its own request */
    return st;
}

void hf_comm_abort(int code)
{
    fflush(stdout);
    fflush(stderr);
    exit(code);
}
