/*
 * Rule cases of the stand-in (tests/nccl/nccl_standin_rules.sh) for the
 * parts of NCCL's contract that depend on the version it reports
 * (docs/design/nccl-contract.md): a stand-in that stops following
 * CB_STANDIN_NCCL_VERSION there fails here.
 */
#define _GNU_SOURCE   /* setenv */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "rules.h"

/* A send to the peer and a receive from it, in one group. */
static ncclResult_t exchange(float *buf, size_t n, ncclComm_t comm, cudaStream_t s)
{
    int peer = 1 - rules_rank();
    if (ncclGroupStart() != ncclSuccess || ncclSend(buf, n, ncclFloat32, peer, comm, s) !=
                                               ncclSuccess ||
        ncclRecv(buf + n, n, ncclFloat32, peer, comm, s) != ncclSuccess)
        return ncclInternalError;
    return ncclGroupEnd();
}

/* A stream, and a blocking and a non-blocking communicator of every rank,
 * for the cases that mix them in one group; 0, or -1. */
static int mixed_world(cudaStream_t *s, ncclComm_t *blocking, ncclComm_t *nonblocking)
{
    if (cudaStreamCreateWithFlags(s, cudaStreamNonBlocking) != cudaSuccess ||
        rules_comm_world(blocking, 1) != ncclSuccess)
        return -1;
    *nonblocking = rules_nonblocking_world();
    return *nonblocking != NULL ? 0 : -1;
}

/* Launches on a non-blocking communicator: NCCL 2.22 runs them on the
 * calling thread and returns ncclSuccess, except a group that connects a
 * send or receive to a new peer (ncclInProgress); 2.23 hands every one to
 * its thread (group.cc, ncclGroupEndInternal). Creation is an async job,
 * in progress at both. */
int rules_case_launch_thread(void)
{
    enum { N = 4 };
    cudaStream_t s;
    ncclResult_t state = ncclSuccess;
    float *buf = rules_device_memory(2 * N * sizeof *buf);
    EXPECT(buf != NULL && cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess,
           "set-up");
    setenv("CB_STANDIN_NCCL_VERSION", "22203", 1);
    ncclComm_t old = rules_nonblocking_world();
    EXPECT(old != NULL, "2.22: non-blocking creation not in progress, or not done");
    EXPECT(ncclAllReduce(buf, buf, N, ncclFloat32, ncclSum, old, s) == ncclSuccess &&
               rules_polls_until_done(old, &state) == 0 && state == ncclSuccess,
           "2.22: a collective outside a group was not launched on the calling thread");
    EXPECT(ncclGroupStart() == ncclSuccess &&
               ncclBroadcast(buf, buf, N, ncclFloat32, 0, old, s) == ncclSuccess &&
               ncclGroupEnd() == ncclSuccess && rules_polls_until_done(old, &state) == 0,
           "2.22: a group of a collective was not launched on the calling thread");
    EXPECT(exchange(buf, N, old, s) == ncclInProgress && rules_polls_until_done(old, &state) >= 1 &&
               state == ncclSuccess,
           "2.22: a group connecting a send and a receive did not return ncclInProgress");
    EXPECT(exchange(buf, N, old, s) == ncclSuccess && rules_polls_until_done(old, &state) == 0,
           "2.22: a group of connected sends and receives did not return ncclSuccess");
    EXPECT(rules_trace_count("launched on the calling thread (NCCL before 2.23)") == 3,
           "2.22: the launches on the calling thread not traced");
    setenv("CB_STANDIN_NCCL_VERSION", "22304", 1);
    ncclComm_t now = rules_nonblocking_world();
    EXPECT(now != NULL, "2.23: non-blocking creation");
    for (int round = 0; round < 2; round++) {
        EXPECT(ncclAllReduce(buf, buf, N, ncclFloat32, ncclSum, now, s) == ncclInProgress &&
                   rules_polls_until_done(now, &state) >= 1 && state == ncclSuccess,
               "2.23: a collective outside a group did not return ncclInProgress");
        EXPECT(exchange(buf, N, now, s) == ncclInProgress &&
                   rules_polls_until_done(now, &state) >= 1 && state == ncclSuccess,
               "2.23: a group of sends and receives did not return ncclInProgress");
    }
    unsetenv("CB_STANDIN_NCCL_VERSION");
    EXPECT(ncclCommDestroy(old) == ncclSuccess && ncclCommDestroy(now) == ncclSuccess,
           "teardown");
    cudaStreamDestroy(s);
    cudaFree(buf);
    return 0;
}

/* Rank 1's communicator reports an injected remote error; its destroy
 * returns that error and keeps it (ncclCommEnsureReady, init.cc), leaving
 * the thread in a group when leaves_group; abort ends it. */
static int destroy_in_error(int leaves_group, int refusals_before)
{
    enum { N = 4 };
    ncclComm_t comm;
    cudaStream_t s;
    ncclResult_t async = ncclSuccess;
    float *buf = rules_device_memory(N * sizeof *buf);
    EXPECT(buf != NULL && rules_comm_world(&comm, 1) == ncclSuccess &&
               cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess &&
               ncclAllReduce(buf, buf, N, ncclFloat32, ncclSum, comm, s) == ncclSuccess &&
               cudaStreamSynchronize(s) == cudaSuccess,
           "set-up");
    setenv("CB_STANDIN_FAIL_ASYNC", "1", 1);
    EXPECT(ncclCommGetAsyncError(comm, &async) == ncclSuccess, "query");
    unsetenv("CB_STANDIN_FAIL_ASYNC");
    if (rules_rank() == 0) {
        EXPECT(async == ncclSuccess && ncclCommDestroy(comm) == ncclSuccess, "a healthy destroy");
    } else {
        EXPECT(async == ncclRemoteError && ncclCommDestroy(comm) == ncclRemoteError,
               "ncclCommDestroy of a communicator in error did not return its error");
        EXPECT(rules_trace_count("VIOLATION ncclCommDestroy of a communicator in error") ==
                   refusals_before + 1,
               "the destroy of a communicator in error not flagged");
        EXPECT(standin_group_depth() == leaves_group,
               "the refused destroy did not leave the thread in a group as this version");
        if (leaves_group)
            EXPECT(ncclGroupEnd() == ncclSuccess, "the left group's end");
        EXPECT(ncclCommGetAsyncError(comm, &async) == ncclSuccess && async == ncclRemoteError,
               "the refused communicator is gone");
        EXPECT(ncclCommAbort(comm) == ncclSuccess, "abort");
    }
    cudaStreamDestroy(s);
    cudaFree(buf);
    return 0;
}

/* From 2.24 (not 2.27.0 to 2.27.5) the thread is left in a group. */
int rules_destroy_leaves_group(void)
{
    long v = standin_nccl_version();
    return v >= NCCL_VERSION(2, 24, 0) && (v < NCCL_VERSION(2, 27, 0) || v >= NCCL_VERSION(2, 27, 6));
}

/* At 2.28.9 the refusal leaves the thread in a group; at 2.23.4 and 2.27.3
 * it does not. */
int rules_case_destroy_error(void)
{
    setenv("CB_STANDIN_NCCL_VERSION", "22809", 1);
    if (destroy_in_error(1, 0) != 0)
        return 1;
    setenv("CB_STANDIN_NCCL_VERSION", "22304", 1);
    int rc = destroy_in_error(0, 1);
    setenv("CB_STANDIN_NCCL_VERSION", "22703", 1);
    if (rc == 0)
        rc = destroy_in_error(0, 2);
    unsetenv("CB_STANDIN_NCCL_VERSION");
    return rc;
}

/* The device's free bytes now. */
static size_t free_now(void)
{
    size_t free_bytes = 0, total = 0;
    cudaMemGetInfo(&free_bytes, &total);
    return free_bytes;
}

/* CB_STANDIN_CONNECT_BYTES: a communicator's connections cost the device
 * at creation before 2.22, at its first collective from 2.22 (not at its
 * sends and receives), once, until it ends. */
int rules_case_connect_memory(void)
{
    enum { N = 4 };
    const size_t cost = (size_t)1 << 20;
    cudaStream_t s;
    ncclComm_t comm;
    float *buf = rules_device_memory(2 * N * sizeof *buf);
    EXPECT(buf != NULL && cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess,
           "set-up");
    size_t before = free_now();
    setenv("CB_STANDIN_CONNECT_BYTES", "1048576", 1);
    setenv("CB_STANDIN_NCCL_VERSION", "22105", 1);
    EXPECT(rules_comm_world(&comm, 1) == ncclSuccess && free_now() == before - cost,
           "2.21: creation did not take the connections' memory");
    EXPECT(ncclAllReduce(buf, buf, N, ncclFloat32, ncclSum, comm, s) == ncclSuccess &&
               free_now() == before - cost,
           "2.21: a collective took more");
    EXPECT(ncclCommDestroy(comm) == ncclSuccess && free_now() == before,
           "2.21: destroy did not give the memory back");
    setenv("CB_STANDIN_NCCL_VERSION", "22203", 1);
    EXPECT(rules_comm_world(&comm, 1) == ncclSuccess && free_now() == before,
           "2.22: creation took the connections' memory");
    EXPECT(exchange(buf, N, comm, s) == ncclSuccess && free_now() == before,
           "2.22: sends and receives took the collectives' connections");
    EXPECT(ncclAllReduce(buf, buf, 1, ncclFloat32, ncclSum, comm, s) == ncclSuccess &&
               free_now() == before - cost,
           "2.22: the first collective did not take the connections' memory");
    EXPECT(ncclBroadcast(buf, buf, N, ncclFloat32, 0, comm, s) == ncclSuccess &&
               free_now() == before - cost,
           "2.22: a later collective took more");
    EXPECT(ncclCommAbort(comm) == ncclSuccess && free_now() == before,
           "2.22: abort did not give the memory back");
    unsetenv("CB_STANDIN_NCCL_VERSION");
    unsetenv("CB_STANDIN_CONNECT_BYTES");
    cudaStreamDestroy(s);
    cudaFree(buf);
    return 0;
}

/* Async jobs (creation, split, shrink) of a blocking and a non-blocking
 * communicator in one group are refused (group.cc, ncclAsyncLaunch,
 * 2.14.3 to 2.30.7), the group's mode being that of the last communicator
 * that joined it; the group's end then returns the error. Jobs of the
 * group's own mode are accepted. */
int rules_case_group_modes(void)
{
    enum { N = 4 };
    cudaStream_t s;
    ncclComm_t blocking = NULL, child = NULL, nonblocking = NULL;
    ncclResult_t state = ncclSuccess;
    float *buf = rules_device_memory(N * sizeof *buf);
    EXPECT(buf != NULL && mixed_world(&s, &blocking, &nonblocking) == 0, "set-up");
    EXPECT(ncclGroupStart() == ncclSuccess &&
               ncclAllReduce(buf, buf, N, ncclFloat32, ncclSum, nonblocking, s) == ncclSuccess &&
               ncclCommSplit(blocking, 0, rules_rank(), &child, NULL) == ncclInvalidArgument &&
               child == NULL,
           "a blocking parent's split in a non-blocking group was accepted");
    EXPECT(ncclGroupEnd() == ncclInvalidArgument &&
               rules_polls_until_done(nonblocking, &state) == 0 && state == ncclSuccess,
           "the group's end did not return the refused split's error");
    EXPECT(rules_trace_count("ncclCommSplit refused: blocking and non-blocking communicators "
                             "in one group") == 1,
           "the refusal not traced");
    EXPECT(ncclGroupStart() == ncclSuccess &&
               ncclAllReduce(buf, buf, N, ncclFloat32, ncclSum, blocking, s) == ncclSuccess &&
               ncclCommSplit(blocking, 0, rules_rank(), &child, NULL) == ncclSuccess &&
               ncclGroupEnd() == ncclSuccess && child != NULL,
           "a blocking parent's split in a blocking group was refused");
    EXPECT(ncclCommDestroy(child) == ncclSuccess && ncclCommDestroy(blocking) == ncclSuccess &&
               ncclCommDestroy(nonblocking) == ncclSuccess,
           "teardown");
    cudaStreamDestroy(s);
    cudaFree(buf);
    return 0;
}

/* config.blocking other than 0, 1 and unset is refused (init.cc,
 * parseCommConfig, before NCCL_COMM_BLOCKING is read), for creation and
 * for a split given the config. */
int rules_case_config_blocking(void)
{
    ncclComm_t comm = NULL, child = NULL;
    setenv("NCCL_COMM_BLOCKING", "1", 1);
    EXPECT(rules_comm_world(&comm, 2) == ncclInvalidArgument && comm == NULL,
           "config.blocking = 2 was accepted");
    unsetenv("NCCL_COMM_BLOCKING");
    EXPECT(rules_comm_world(&comm, NCCL_CONFIG_UNDEF_INT) == ncclSuccess && comm != NULL,
           "config.blocking unset was refused");
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = -1;
    EXPECT(ncclCommSplit(comm, 0, rules_rank(), &child, &config) == ncclInvalidArgument &&
               child == NULL,
           "a split's config.blocking = -1 was accepted");
    EXPECT(ncclCommDestroy(comm) == ncclSuccess, "teardown");
    return 0;
}

/* A group of collectives on a blocking and a non-blocking communicator is
 * accepted, and the last to join decides for all (group.h,
 * ncclGroupCommJoin; group.cc, ncclGroupEndInternal): blocking last, the
 * group runs on the calling thread and leaves the non-blocking member
 * ready; non-blocking last, ncclGroupEnd returns ncclInProgress and the
 * blocking member too is in progress until polled done. At 2.22 a group
 * with nothing to connect runs on the calling thread either way. */
int rules_case_group_mixed(void)
{
    enum { N = 4 };
    cudaStream_t s;
    ncclComm_t blocking = NULL, nonblocking = NULL;
    ncclResult_t state = ncclSuccess;
    float *buf = rules_device_memory(N * sizeof *buf);
    EXPECT(buf != NULL && mixed_world(&s, &blocking, &nonblocking) == 0, "set-up");
    for (int version = 0; version < 2; version++) {
        if (version == 1)
            setenv("CB_STANDIN_NCCL_VERSION", "22203", 1);
        EXPECT(ncclGroupStart() == ncclSuccess &&
                   ncclAllReduce(buf, buf, N, ncclFloat32, ncclSum, nonblocking, s) ==
                       ncclSuccess &&
                   ncclAllReduce(buf, buf, N, ncclFloat32, ncclSum, blocking, s) == ncclSuccess &&
                   ncclGroupEnd() == ncclSuccess,
               "a group joined last by a blocking communicator did not return ncclSuccess");
        EXPECT(rules_polls_until_done(nonblocking, &state) == 0 && state == ncclSuccess,
               "the non-blocking member of a blocking group was left in progress");
        ncclResult_t end = ncclInternalError;
        EXPECT(ncclGroupStart() == ncclSuccess &&
                   ncclAllReduce(buf, buf, N, ncclFloat32, ncclSum, blocking, s) == ncclSuccess &&
                   ncclAllReduce(buf, buf, N, ncclFloat32, ncclSum, nonblocking, s) ==
                       ncclSuccess &&
                   (end = ncclGroupEnd()) == (version == 0 ? ncclInProgress : ncclSuccess),
               "a group joined last by a non-blocking communicator: wrong return");
        int polls = rules_polls_until_done(blocking, &state);
        EXPECT(version == 0 ? polls >= 1 && state == ncclSuccess : polls == 0,
               "2.28: the blocking member of a non-blocking group was not in progress, "
               "or at 2.22 it was");
        EXPECT(rules_polls_until_done(nonblocking, &state) >= 0 && state == ncclSuccess,
               "the non-blocking member");
    }
    unsetenv("CB_STANDIN_NCCL_VERSION");
    EXPECT(rules_trace_count("a blocking communicator in a non-blocking group, in progress") == 1 &&
               rules_trace_count("a non-blocking communicator in a blocking group, launched") == 2,
           "the mixed groups not traced");
    EXPECT(ncclCommDestroy(blocking) == ncclSuccess && ncclCommDestroy(nonblocking) == ncclSuccess,
           "teardown");
    cudaStreamDestroy(s);
    cudaFree(buf);
    return 0;
}

/* A collective that waits for the peer, on a thread of its own. */
typedef struct inside_job {
    ncclComm_t comm;
    cudaStream_t stream;
    float *buf;
    ncclResult_t res;
} inside_job;

static void *allreduce_thread(void *arg)
{
    inside_job *job = arg;
    job->res = ncclAllReduce(job->buf, job->buf, 4, ncclFloat32, ncclSum, job->comm, job->stream);
    return NULL;
}

/* NCCL requires that no thread be calling NCCL while another aborts
 * (communicators.rst, Fault Tolerance, 2.30.7), on any communicator. Rank
 * 1 aborts one communicator while a thread of its own waits inside a
 * collective on another, which rank 0 joins only afterwards: flagged on
 * rank 1; rank 0's abort, with no thread inside, is not. */
int rules_case_abort_inside(void)
{
    inside_job job = {.buf = rules_device_memory(4 * sizeof(float)), .res = ncclInternalError};
    ncclComm_t other = NULL;
    EXPECT(job.buf != NULL && cudaStreamCreateWithFlags(&job.stream, cudaStreamNonBlocking) ==
                                  cudaSuccess &&
               rules_comm_world(&job.comm, 1) == ncclSuccess &&
               rules_comm_world(&other, 1) == ncclSuccess,
           "set-up");
    const char *flagged = "VIOLATION ncclCommAbort while another thread is inside NCCL "
                          "(ncclAllReduce)";
    if (rules_rank() == 1) {
        pthread_t t;
        EXPECT(pthread_create(&t, NULL, allreduce_thread, &job) == 0, "thread");
        const struct timespec nap = {0, 5 * 1000 * 1000};
        for (int i = 0; i < 4000 && rules_trace_count("ncclAllReduce") == 0; i++)
            nanosleep(&nap, NULL);   /* a deadline, not a timed assertion */
        nanosleep(&nap, NULL);
        ncclCommAbort(other);
        MPI_Barrier(MPI_COMM_WORLD);   /* now rank 0 joins the collective */
        pthread_join(t, NULL);
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
        job.res = ncclAllReduce(job.buf, job.buf, 4, ncclFloat32, ncclSum, job.comm, job.stream);
        ncclCommAbort(other);
    }
    EXPECT(job.res == ncclSuccess, "the collective");
    EXPECT(rules_trace_count(flagged) == (rules_rank() == 1),
           "an abort while another thread was inside NCCL not flagged, or one flagged wrongly");
    EXPECT(ncclCommDestroy(job.comm) == ncclSuccess, "teardown");
    cudaStreamDestroy(job.stream);
    cudaFree(job.buf);
    return 0;
}

/* A shrink leaves the parent's count of splits as it was (init.cc,
 * ncclCommInitChildComm 2.28.9: splitCount grows for splits only), so a
 * split after a shrink that some ranks never called still forms: rank 0
 * shrinks rank 1 away, then both split. A stand-in that counted the shrink
 * leaves the split waiting for ever (the test's time limit ends it). */
int rules_case_shrink_split(void)
{
    ncclComm_t comm = NULL, shrunk = NULL, child = NULL;
    EXPECT(rules_comm_world(&comm, 1) == ncclSuccess, "set-up");
    if (rules_rank() == 0) {
        int excluded = 1;
        EXPECT(ncclCommShrink(comm, &excluded, 1, &shrunk, NULL, NCCL_SHRINK_DEFAULT) ==
                       ncclSuccess &&
                   shrunk != NULL,
               "the shrink");
        EXPECT(ncclCommDestroy(shrunk) == ncclSuccess, "the shrunk communicator's teardown");
    }
    EXPECT(ncclCommSplit(comm, 0, rules_rank(), &child, NULL) == ncclSuccess && child != NULL,
           "the split after a shrink");
    EXPECT(ncclCommDestroy(child) == ncclSuccess && ncclCommDestroy(comm) == ncclSuccess,
           "teardown");
    return 0;
}
