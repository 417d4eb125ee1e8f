/*
 * Rule case of the stand-in (tests/nccl/nccl_standin_rules.sh) for NCCL's
 * launch thread (threads.c, docs/design/nccl-contract.md G1): which
 * launches start one, by version and mode, who joins it, that the launch
 * really runs beside the caller, and that an abort ends it. Threads are counted by the trace's
 * "launch-thread start N" and "launch-thread join N by CALL" lines.
 */
#define _GNU_SOURCE   /* setenv */
#include <stdlib.h>
#include <time.h>

#include "rules.h"

static int started(void)
{
    return rules_trace_count("launch-thread start ");
}

static int joined(void)
{
    return rules_trace_count("launch-thread join ");
}

/* A send to the peer and a receive from it, in one group. */
static ncclResult_t swap(float *buf, size_t n, ncclComm_t comm, cudaStream_t s)
{
    int peer = 1 - rules_rank();
    if (ncclGroupStart() != ncclSuccess ||
        ncclSend(buf, n, ncclFloat32, peer, comm, s) != ncclSuccess ||
        ncclRecv(buf + n, n, ncclFloat32, peer, comm, s) != ncclSuccess)
        return ncclInternalError;
    return ncclGroupEnd();
}

/* A broadcast alone in a group. */
static ncclResult_t grouped_broadcast(float *buf, size_t n, ncclComm_t comm, cudaStream_t s)
{
    if (ncclGroupStart() != ncclSuccess ||
        ncclBroadcast(buf, buf, n, ncclFloat32, 0, comm, s) != ncclSuccess)
        return ncclInternalError;
    return ncclGroupEnd();
}

/* Rank 1 waits for rank 0's word, at most 10 s (a deadline, so that a
 * stand-in that launches on the calling thread fails instead of hanging). */
static void wait_for_word(void)
{
    const struct timespec nap = {0, 5 * 1000 * 1000};
    int flag = 0, word = 0;
    for (int i = 0; i < 2000 && !flag; i++) {
        MPI_Iprobe(0, 7, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        if (!flag)
            nanosleep(&nap, NULL);
    }
    if (flag)
        MPI_Recv(&word, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

/* 2.23.4: rank 0's all-reduce returns while rank 1 has not called its own,
 * so the reduction cannot have run yet: the output still holds the input
 * and the communicator is in progress, as on a GPU before the kernel ran. */
static int runs_beside_caller(ncclComm_t comm, float *buf, cudaStream_t s)
{
    ncclResult_t state = ncclSuccess;
    buf[0] = (float)(rules_rank() + 1);
    if (rules_rank() == 1)
        wait_for_word();
    EXPECT(ncclAllReduce(buf, buf, 1, ncclFloat32, ncclSum, comm, s) == ncclInProgress,
           "2.23: the all-reduce did not return ncclInProgress");
    if (rules_rank() == 0) {
        EXPECT(ncclCommGetAsyncError(comm, &state) == ncclSuccess && state == ncclInProgress &&
                   buf[0] == 1.0f,
               "2.23: the all-reduce ran on the calling thread before the peer called it");
        int word = 1;
        MPI_Send(&word, 1, MPI_INT, 1, 7, MPI_COMM_WORLD);
    }
    /* The peer may take a while to see the word: poll for up to 10 s. */
    const struct timespec nap = {0, 1000 * 1000};
    for (int i = 0; i < 10000 && ncclCommGetAsyncError(comm, &state) == ncclSuccess &&
                    state == ncclInProgress;
         i++)
        nanosleep(&nap, NULL);
    EXPECT(state == ncclSuccess &&
               cudaStreamSynchronize(s) == cudaSuccess && buf[0] == 3.0f,
           "2.23: the all-reduce's thread did not finish it");
    return 0;
}

/* 2.23.4: rank 0 aborts while its thread waits for rank 1's all-reduce,
 * which never comes: NCCL's abort flag ends the thread (ncclGroupJobAbort,
 * group.cc), so the abort returns. Rank 1 then aborts its own. */
static int abort_ends_thread(float *buf, cudaStream_t s)
{
    ncclComm_t comm = rules_nonblocking_world();
    EXPECT(comm != NULL, "non-blocking creation");
    if (rules_rank() == 0) {
        EXPECT(ncclAllReduce(buf, buf, 1, ncclFloat32, ncclSum, comm, s) == ncclInProgress,
               "2.23: the all-reduce did not return ncclInProgress");
        EXPECT(ncclCommAbort(comm) == ncclSuccess && rules_trace_count("launch-thread abort ") == 1,
               "2.23: the abort did not end the waiting launch thread");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rules_rank() == 1)
        EXPECT(ncclCommAbort(comm) == ncclSuccess, "abort");
    return 0;
}

int rules_case_launch_threads(void)
{
    enum { N = 4 };
    cudaStream_t s;
    ncclComm_t blocking = NULL, now = NULL, old = NULL;
    ncclResult_t state = ncclSuccess;
    float *buf = rules_device_memory(2 * N * sizeof *buf);
    EXPECT(buf != NULL && cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess &&
               rules_comm_world(&blocking, 1) == ncclSuccess,
           "set-up");
    now = rules_nonblocking_world();
    old = rules_nonblocking_world();
    EXPECT(now != NULL && old != NULL, "non-blocking creation");
    int base = started();
    setenv("CB_STANDIN_NCCL_VERSION", "22304", 1);
    EXPECT(ncclAllReduce(buf, buf, N, ncclFloat32, ncclSum, blocking, s) == ncclSuccess &&
               swap(buf, N, blocking, s) == ncclSuccess &&
               grouped_broadcast(buf, N, blocking, s) == ncclSuccess && started() == base,
           "2.23: a launch on a blocking communicator started a thread");
    /* Each launch on a non-blocking one: one thread, not joined by the
     * queries (before 2.26), joined by the next call on the communicator. */
    for (int round = 0; round < 2; round++) {
        int before = started();
        EXPECT(ncclAllReduce(buf, buf, N, ncclFloat32, ncclSum, now, s) == ncclInProgress &&
                   started() == before + 1,
               "2.23: a collective outside a group started no thread");
        int joins = joined();
        EXPECT(rules_polls_until_done(now, &state) >= 1 && state == ncclSuccess &&
                   joined() == joins,
               "2.23: the thread was joined before the next call on the communicator");
        EXPECT(swap(buf, N, now, s) == ncclInProgress && started() == before + 2 &&
                   joined() == joins + 1 &&
                   rules_trace_count("by ncclSend") == round + 1,
               "2.23: a group of sends and receives started no thread, or did not join the last");
        EXPECT(rules_polls_until_done(now, &state) >= 1 &&
                   grouped_broadcast(buf, N, now, s) == ncclInProgress &&
                   started() == before + 3 && rules_polls_until_done(now, &state) >= 1,
               "2.23: a group of a collective started no thread");
    }
    EXPECT(runs_beside_caller(now, buf, s) == 0, "asynchrony");
    /* 2.26 on: ncclCommGetAsyncError joins it once it says done. */
    setenv("CB_STANDIN_NCCL_VERSION", "22809", 1);
    int joins = joined(), by_query = rules_trace_count("by ncclCommGetAsyncError");
    EXPECT(ncclAllReduce(buf, buf, N, ncclFloat32, ncclSum, now, s) == ncclInProgress &&
               rules_polls_until_done(now, &state) >= 1 && joined() == joins + 2 &&
               rules_trace_count("by ncclCommGetAsyncError") == by_query + 1,
           "2.28: ncclCommGetAsyncError did not join the thread it saw done");
    /* 2.22: only a group that connects a send or receive starts one. */
    setenv("CB_STANDIN_NCCL_VERSION", "22203", 1);
    int before = started();
    EXPECT(ncclAllReduce(buf, buf, N, ncclFloat32, ncclSum, old, s) == ncclSuccess &&
               grouped_broadcast(buf, N, old, s) == ncclSuccess && started() == before,
           "2.22: a launch that connects nothing started a thread");
    EXPECT(swap(buf, N, old, s) == ncclInProgress && started() == before + 1 &&
               rules_polls_until_done(old, &state) >= 1 && state == ncclSuccess,
           "2.22: a group connecting a send and a receive started no thread");
    EXPECT(swap(buf, N, old, s) == ncclSuccess && started() == before + 1,
           "2.22: a group of connected sends and receives started a thread");
    setenv("CB_STANDIN_NCCL_VERSION", "22304", 1);
    EXPECT(abort_ends_thread(buf, s) == 0, "abort");
    unsetenv("CB_STANDIN_NCCL_VERSION");
    EXPECT(ncclCommDestroy(old) == ncclSuccess && ncclCommDestroy(now) == ncclSuccess &&
               ncclCommDestroy(blocking) == ncclSuccess && joined() == started(),
           "teardown: a launch thread was never joined");
    cudaStreamDestroy(s);
    cudaFree(buf);
    return 0;
}
