/*
 * What the stand-in's rule cases share (rules.h): this rank, its trace,
 * communicators over every rank, device memory, polling.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rules.h"

int rules_rank(void)
{
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
}

int rules_trace_count(const char *text)
{
    char path[4096], line[1024];
    snprintf(path, sizeof path, "%s.%d", getenv("CB_STANDIN_TRACE"), rules_rank());
    FILE *f = fopen(path, "r");
    int n = 0;
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        n += strstr(line, text) != NULL;
    if (f != NULL)
        fclose(f);
    return n;
}

ncclUniqueId rules_world_id(void)
{
    ncclUniqueId id;
    if (rules_rank() == 0)
        ncclGetUniqueId(&id);
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    return id;
}

ncclResult_t rules_comm_world_config(ncclComm_t *comm, ncclConfig_t *config)
{
    ncclUniqueId id = rules_world_id();
    int nranks = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    return ncclCommInitRankConfig(comm, nranks, id, rules_rank(), config);
}

ncclResult_t rules_comm_world(ncclComm_t *comm, int blocking)
{
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = blocking;
    return rules_comm_world_config(comm, &config);
}

ncclComm_t rules_nonblocking_world(void)
{
    ncclComm_t comm = NULL;
    ncclResult_t state = ncclInProgress;
    if (rules_comm_world(&comm, 0) != ncclInProgress || rules_polls_until_done(comm, &state) < 1 ||
        state != ncclSuccess)
        return NULL;
    return comm;
}

void *rules_device_memory(size_t bytes)
{
    void *p = NULL;
    return cudaMalloc(&p, bytes) == cudaSuccess ? p : NULL;
}

int rules_polls_until_done(ncclComm_t comm, ncclResult_t *state)
{
    const struct timespec nap = {0, 1000 * 1000};
    for (int n = 0; n < 21000; n++) {
        if (ncclCommGetAsyncError(comm, state) != ncclSuccess || *state != ncclInProgress)
            return n;
        sched_yield();
        if (n >= 1000)
            nanosleep(&nap, NULL);
    }
    return -1;
}
