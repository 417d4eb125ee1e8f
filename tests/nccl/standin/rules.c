/*
 * The stand-in's own test (tests/nccl/nccl_standin_rules.sh): each case
 * breaks one rule of NCCL or CUDA that the stand-in must enforce as they do
 * (standin.h, "Strictness" and "Groups"), and checks that the stand-in
 * reacts as the real libraries would: it waits, fails, defers, or writes
 * its VIOLATION line. A stand-in grown lenient fails here, even while the
 * backend's own tests still pass. Run as: rules CASE, on 2 ranks, with
 * CB_STANDIN_GPUS=2 and CB_STANDIN_TRACE set; prints "ok: CASE" and exits 0,
 * or names the broken expectation and exits 1.
 */
#define _GNU_SOURCE   /* setenv */
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "rules.h"

/* Wait for a trace line, up to 20 s: a deadline, not a timed assertion. */
static int trace_wait(const char *text)
{
    const struct timespec nap = {0, 5 * 1000 * 1000};
    for (int i = 0; i < 4000 && rules_trace_count(text) == 0; i++)
        nanosleep(&nap, NULL);
    return rules_trace_count(text) > 0;
}

/* Abort on another thread while a graph holds the communicator. */
typedef struct abort_job {
    ncclComm_t comm;
    atomic_int graph_gone;     /* set just before the graph is destroyed */
    int gone_at_return;        /* graph_gone when the abort returned */
} abort_job;

static void *abort_thread(void *arg)
{
    abort_job *job = arg;
    ncclCommAbort(job->comm);
    job->gone_at_return = atomic_load(&job->graph_gone);
    return NULL;
}

/* Abort waits for live graphs; a second thread's call on the same
 * communicator meanwhile is flagged. */
static int case_graph_abort(void)
{
    abort_job job = {.gone_at_return = -1};
    atomic_init(&job.graph_gone, 0);
    cudaStream_t s;
    float *buf = rules_device_memory(4 * sizeof *buf);
    EXPECT(buf != NULL && rules_comm_world(&job.comm, 1) == ncclSuccess, "set-up");
    EXPECT(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess, "stream");
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    EXPECT(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) == cudaSuccess &&
           ncclAllReduce(buf, buf, 4, ncclFloat32, ncclSum, job.comm, s) == ncclSuccess &&
           cudaStreamEndCapture(s, &graph) == cudaSuccess &&
           cudaGraphInstantiateWithFlags(&exec, graph, 0) == cudaSuccess, "capture");
    pthread_t t;
    EXPECT(pthread_create(&t, NULL, abort_thread, &job) == 0, "thread");
    int waiting = trace_wait("VIOLATION ncclCommAbort waits until the 2 CUDA graphs");
    ncclResult_t state;
    ncclCommGetAsyncError(job.comm, &state);   /* while the abort runs: flagged */
    atomic_store(&job.graph_gone, 1);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    pthread_join(t, NULL);
    EXPECT(waiting, "ncclCommAbort did not say it waits for the live graph and its exec");
    EXPECT(job.gone_at_return == 1, "ncclCommAbort returned while a graph lived");
    EXPECT(rules_trace_count("VIOLATION ncclCommGetAsyncError on a communicator that another "
                       "thread is calling") == 1, "a call from a second thread not flagged");
    cudaStreamDestroy(s);
    cudaFree(buf);
    return 0;
}

static void *device_thread(void *arg)
{
    int *seen = arg;
    void *p = NULL;
    cudaGetDevice(&seen[0]);
    seen[1] = cudaMalloc(&p, 16) == cudaSuccess;
    cudaFree(p);
    return NULL;
}

/* The current device is per thread, 0 in a new one; the trace names it. */
static int case_device(void)
{
    int seen[2] = {-1, 0}, mine = -1;
    EXPECT(cudaSetDevice(1) == cudaSuccess, "cudaSetDevice 1");
    pthread_t t;
    EXPECT(pthread_create(&t, NULL, device_thread, seen) == 0, "thread");
    pthread_join(t, NULL);
    cudaGetDevice(&mine);
    void *p = rules_device_memory(32);
    cudaFree(p);
    EXPECT(mine == 1 && seen[0] == 0 && seen[1], "the device is not per thread");
    EXPECT(rules_trace_count("cudaMalloc 16 device=0 physical=0") == 1 &&
           rules_trace_count("cudaMalloc 32 device=1 physical=1") == 1,
           "the trace does not name each thread's device");
    return 0;
}

/* A rank failing before the bootstrap leaves the others' non-blocking
 * communicator (init, then split) never ready. */
static int case_bootstrap(void)
{
    int me = rules_rank();
    ncclResult_t state = ncclSuccess;
    setenv("CB_STANDIN_FAIL_COMMINIT", "1", 1);
    ncclComm_t comm = NULL, child = NULL;
    ncclResult_t res = rules_comm_world(&comm, 0);
    for (int i = 0; i < 1000 && me == 0; i++, sched_yield())
        ncclCommGetAsyncError(comm, &state);
    if (comm != NULL)
        ncclCommAbort(comm);
    EXPECT(me == 1 ? res != ncclSuccess && res != ncclInProgress : state == ncclInProgress,
           "init: the other rank's communicator became ready without its peer");
    unsetenv("CB_STANDIN_FAIL_COMMINIT");
    EXPECT(rules_comm_world(&comm, 0) == ncclInProgress, "non-blocking init");
    do
        ncclCommGetAsyncError(comm, &state);
    while (state == ncclInProgress);
    /* The split is a job on the parent, which stays in progress, and the
     * new communicator is never written. */
    setenv("CB_STANDIN_FAIL_SPLIT", "1", 1);
    res = ncclCommSplit(comm, 0, me, &child, NULL);
    for (int i = 0; i < 1000 && me == 0; i++, sched_yield())
        ncclCommGetAsyncError(comm, &state);
    ncclCommAbort(comm);
    EXPECT(me == 1 ? res != ncclSuccess && res != ncclInProgress
                   : state == ncclInProgress && child == NULL,
           "split: the other rank's communicator became ready without its peer");
    return 0;
}

/* Launches complete later; polling them without yielding is flagged. */
static int case_async(void)
{
    ncclComm_t comm;
    cudaStream_t s;
    float *buf = rules_device_memory(4 * sizeof *buf);
    EXPECT(buf != NULL && rules_comm_world(&comm, 1) == ncclSuccess &&
           cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess, "set-up");
    setenv("CB_STANDIN_OP_US", "300000", 1);
    const char *busy = "VIOLATION 100 polls of unfinished work without a sched_yield";
    EXPECT(ncclAllReduce(buf, buf, 4, ncclFloat32, ncclSum, comm, s) == ncclSuccess, "launch");
    EXPECT(cudaStreamQuery(s) == cudaErrorNotReady, "a launch completed at once");
    while (cudaStreamQuery(s) == cudaErrorNotReady)
        ;
    EXPECT(rules_trace_count(busy) == 1, "polling without a yield not flagged");
    EXPECT(ncclAllReduce(buf, buf, 4, ncclFloat32, ncclSum, comm, s) == ncclSuccess, "launch");
    while (cudaStreamQuery(s) == cudaErrorNotReady)
        sched_yield();
    EXPECT(rules_trace_count(busy) == 1, "polling with a yield flagged");
    unsetenv("CB_STANDIN_OP_US");
    ncclCommDestroy(comm);
    cudaStreamDestroy(s);
    cudaFree(buf);
    return 0;
}

/* Grouped work waits for the outermost ncclGroupEnd, collectives included;
 * a copy launched inside the group runs before it. */
static int case_group(void)
{
    enum { N = 4 };   /* elements per rank; 2 ranks */
    int me = rules_rank(), peer = 1 - me;
    ncclComm_t comm;
    cudaStream_t s;
    float *in = rules_device_memory(2 * N * sizeof *in), *out = rules_device_memory(6 * 2 * N * sizeof *out);
    float *later = rules_device_memory(N * sizeof *later);
    EXPECT(in != NULL && out != NULL && later != NULL && rules_comm_world(&comm, 1) == ncclSuccess &&
           cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess, "set-up");
    for (int i = 0; i < 2 * N; i++)
        in[i] = (float)(me + 1);
    for (int i = 0; i < N; i++)
        later[i] = (float)(10 * (me + 1));
    for (int i = 0; i < 6 * 2 * N; i++)
        out[i] = -1;
    float *o[6];
    for (int k = 0; k < 6; k++)
        o[k] = out + k * 2 * N;
    EXPECT(ncclGroupStart() == ncclSuccess, "group start");
    EXPECT(ncclAllReduce(in, o[0], N, ncclFloat32, ncclSum, comm, s) == ncclSuccess &&
           ncclBroadcast(in, o[1], N, ncclFloat32, 1, comm, s) == ncclSuccess &&
           ncclReduce(in, o[2], N, ncclFloat32, ncclSum, 0, comm, s) == ncclSuccess &&
           ncclAllGather(in, o[3], N, ncclFloat32, comm, s) == ncclSuccess &&
           ncclReduceScatter(in, o[4], N, ncclFloat32, ncclSum, comm, s) == ncclSuccess &&
           ncclGroupStart() == ncclSuccess &&
           ncclSend(in, N, ncclFloat32, peer, comm, s) == ncclSuccess &&
           ncclRecv(o[5], N, ncclFloat32, peer, comm, s) == ncclSuccess &&
           ncclGroupEnd() == ncclSuccess, "grouped calls");
    for (int i = 0; i < 6 * 2 * N; i++)
        EXPECT(out[i] == -1, "an operation ran before the outermost ncclGroupEnd");
    /* On the stream now, before the group's operations: they read it. */
    EXPECT(cudaMemcpyAsync(in, later, N * sizeof *in, cudaMemcpyDeviceToDevice, s) ==
           cudaSuccess, "copy");
    EXPECT(ncclGroupEnd() == ncclSuccess, "the outermost ncclGroupEnd");
    /* The copy replaced the first half of in: 10 on rank 0, 20 on rank 1. */
    const float sum = 30, kept_sum = 3;
    for (int i = 0; i < N; i++)
        EXPECT(o[0][i] == sum && o[1][i] == 20 && (me == 1 || o[2][i] == sum) &&
                   o[3][i] == 10 && o[3][N + i] == 20 && o[4][i] == (me == 0 ? sum : kept_sum) &&
                   o[5][i] == (float)(10 * (peer + 1)),
               "grouped results do not follow the copy launched inside the group");
    /* An operation that fails when the group runs: ncclGroupEnd says so
     * (the stand-in runs no count over INT_MAX, so none is read). */
    EXPECT(ncclGroupStart() == ncclSuccess &&
           ncclAllReduce(in, o[0], (size_t)INT_MAX + 1, ncclFloat32, ncclSum, comm, s) ==
               ncclSuccess, "a grouped call failed at once");
    EXPECT(ncclGroupEnd() == ncclInvalidArgument &&
           strstr(ncclGetLastError(comm), "INT_MAX") != NULL,
           "ncclGroupEnd did not return the failed operation's error");
    /* Freeing what a queued operation uses is flagged; an abort drops it. */
    EXPECT(ncclGroupStart() == ncclSuccess &&
           ncclAllReduce(later, o[0], N, ncclFloat32, ncclSum, comm, s) == ncclSuccess,
           "grouped call");
    cudaFree(later);
    EXPECT(rules_trace_count("VIOLATION cudaFree of memory that an operation of the open group "
                       "uses") == 1, "cudaFree of a grouped operation's buffer not flagged");
    ncclCommAbort(comm);
    EXPECT(ncclGroupEnd() == ncclSuccess, "an empty group");
    cudaStreamDestroy(s);
    cudaFree(in);
    cudaFree(out);
    return 0;
}

/* cudaFree waits for the device; cudaMalloc while capturing invalidates. */
static int case_memory(void)
{
    ncclComm_t comm;
    cudaStream_t s;
    float *buf = rules_device_memory(4 * sizeof *buf), *spare = rules_device_memory(16);
    EXPECT(buf != NULL && spare != NULL && rules_comm_world(&comm, 1) == ncclSuccess &&
           cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess, "set-up");
    setenv("CB_STANDIN_OP_US", "300000", 1);
    EXPECT(ncclAllReduce(buf, buf, 4, ncclFloat32, ncclSum, comm, s) == ncclSuccess, "launch");
    unsetenv("CB_STANDIN_OP_US");
    cudaFree(spare);
    EXPECT(cudaStreamQuery(s) == cudaSuccess, "cudaFree returned before the device's work ended");
    cudaGraph_t graph = NULL;
    void *p = NULL;
    EXPECT(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) == cudaSuccess,
           "capture");
    EXPECT(cudaMalloc(&p, 16) != cudaSuccess, "cudaMalloc succeeded while capturing");
    EXPECT(cudaStreamEndCapture(s, &graph) == cudaErrorStreamCaptureInvalidated,
           "the capture survived a cudaMalloc");
    EXPECT(rules_trace_count("VIOLATION cudaMalloc while a stream captures") == 1,
           "cudaMalloc while capturing not flagged");
    ncclCommDestroy(comm);
    cudaStreamDestroy(s);
    cudaFree(buf);
    return 0;
}

/* A buffer reaching past its device allocation is flagged at the call (on a
 * GPU, an illegal address), as is a copy past one; the operation is left in
 * an open group that ncclCommDestroy drops, so that it never runs on the
 * host memory behind the stand-in's device memory. */
static int case_bounds(void)
{
    ncclComm_t comm;
    cudaStream_t s;
    float *buf = rules_device_memory(4 * sizeof *buf), host[4] = {0};
    EXPECT(buf != NULL && rules_comm_world(&comm, 1) == ncclSuccess &&
           cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess, "set-up");
    EXPECT(ncclGroupStart() == ncclSuccess, "group start");
    EXPECT(ncclAllReduce(buf, buf, 4, ncclFloat32, ncclSum, comm, s) == ncclSuccess, "launch");
    EXPECT(rules_trace_count("not inside one device allocation") == 0, "a buffer inside flagged");
    EXPECT(ncclAllReduce(buf + 1, buf + 1, 4, ncclFloat32, ncclSum, comm, s) == ncclSuccess,
           "launch past the end");
    EXPECT(rules_trace_count("VIOLATION ncclAllReduce: 16 bytes at") == 2,
           "send and receive past their allocation not flagged");
    EXPECT(ncclCommDestroy(comm) == ncclSuccess && ncclGroupEnd() == ncclSuccess, "teardown");
    EXPECT(cudaMemcpyAsync(host, buf, sizeof host, cudaMemcpyDeviceToHost, s) == cudaSuccess,
           "copy");
    EXPECT(rules_trace_count("not inside one device allocation") == 2, "a copy inside flagged");
    cudaFree(buf);
    EXPECT(cudaMalloc((void **)&buf, 2 * sizeof *buf) == cudaSuccess, "cudaMalloc");
    standin_devmem_check(buf, 4 * sizeof *buf, "a copy's source");
    EXPECT(rules_trace_count("VIOLATION a copy's source: 16 bytes") == 1,
           "a range past a smaller allocation not flagged");
    cudaStreamDestroy(s);
    cudaFree(buf);
    return 0;
}

/* An error ncclCommGetAsyncError has reported stays: every later collective
 * and send or receive on that communicator fails with it (NCCL's
 * ncclCommEnsureReady), while another communicator works on; abort ends it. */
static int case_failed(void)
{
    ncclComm_t comm, other;
    cudaStream_t s;
    float *buf = rules_device_memory(4 * sizeof *buf);
    EXPECT(buf != NULL && rules_comm_world(&comm, 1) == ncclSuccess &&
           rules_comm_world(&other, 1) == ncclSuccess &&
           cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess, "set-up");
    EXPECT(ncclAllReduce(buf, buf, 4, ncclFloat32, ncclSum, comm, s) == ncclSuccess, "launch");
    EXPECT(cudaStreamSynchronize(s) == cudaSuccess, "synchronize");
    ncclResult_t async = ncclSuccess;
    setenv("CB_STANDIN_FAIL_ASYNC", "1", 1);   /* rank 1 sees a remote error */
    EXPECT(ncclCommGetAsyncError(comm, &async) == ncclSuccess, "query");
    unsetenv("CB_STANDIN_FAIL_ASYNC");
    ncclResult_t want = rules_rank() == 1 ? ncclRemoteError : ncclSuccess;
    EXPECT(async == want, "the injected error not reported");
    if (rules_rank() == 1) {
        EXPECT(ncclAllReduce(buf, buf, 4, ncclFloat32, ncclSum, comm, s) == ncclRemoteError,
               "a collective on a failed communicator not refused");
        EXPECT(ncclSend(buf, 4, ncclFloat32, 0, comm, s) == ncclRemoteError,
               "a send on a failed communicator not refused");
        EXPECT(ncclCommGetAsyncError(comm, &async) == ncclSuccess && async == ncclRemoteError,
               "the error did not stay");
    }
    EXPECT(ncclAllReduce(buf, buf, 4, ncclFloat32, ncclSum, other, s) == ncclSuccess,
           "another communicator refused");
    EXPECT(cudaStreamSynchronize(s) == cudaSuccess, "synchronize");
    EXPECT(ncclCommAbort(comm) == ncclSuccess && ncclCommDestroy(other) == ncclSuccess,
           "teardown");
    cudaStreamDestroy(s);
    cudaFree(buf);
    return 0;
}

/* A reduction operator belongs to the communicator that made it. */
static int case_redop(void)
{
    ncclComm_t a, b;
    cudaStream_t s;
    float *buf = rules_device_memory(4 * sizeof *buf), two = 2;
    ncclRedOp_t op;
    EXPECT(buf != NULL && rules_comm_world(&a, 1) == ncclSuccess && rules_comm_world(&b, 1) == ncclSuccess &&
           cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess &&
           ncclRedOpCreatePreMulSum(&op, &two, ncclFloat32, ncclScalarHostImmediate, a) ==
               ncclSuccess, "set-up");
    EXPECT(ncclAllReduce(buf, buf, 4, ncclFloat32, op, b, s) == ncclInvalidArgument,
           "an operator of another communicator was accepted");
    EXPECT(ncclRedOpDestroy(op, b) == ncclInvalidArgument, "destroyed through another one");
    EXPECT(rules_trace_count("VIOLATION a reduction operator used with another communicator") == 1 &&
           rules_trace_count("VIOLATION ncclRedOpDestroy of an operator made for another") == 1,
           "not flagged");
    EXPECT(ncclAllReduce(buf, buf, 4, ncclFloat32, op, a, s) == ncclSuccess &&
           ncclRedOpDestroy(op, a) == ncclSuccess, "its own communicator refused it");
    ncclCommDestroy(a);
    ncclCommDestroy(b);
    cudaStreamDestroy(s);
    cudaFree(buf);
    return 0;
}

/* On a non-blocking communicator the calls that NCCL 2.28 hands to its own
 * thread return ncclInProgress: a collective outside a group, the outermost
 * ncclGroupEnd, ncclCommSplit (the parent is in progress, the new
 * communicator is written once it is done); one or two queries say so; a
 * call that ignores it is flagged and refused; capture still works. */
static int case_inprogress(void)
{
    enum { N = 4 };
    int me = rules_rank(), peer = 1 - me, polls[2] = {0, 0};
    ncclComm_t comm = NULL, child = NULL;
    ncclResult_t state = ncclSuccess;
    cudaStream_t s;
    float *buf = rules_device_memory(2 * N * sizeof *buf);
    EXPECT(buf != NULL && cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess &&
           rules_comm_world(&comm, 0) == ncclInProgress, "set-up");
    EXPECT(rules_polls_until_done(comm, &state) >= 1 && state == ncclSuccess, "init");
    for (int i = 0; i < 2 * N; i++)
        buf[i] = (float)(me + 1);
    /* Outside a group, twice: seen done after one poll, then two, in turn,
     * at the least (more while NCCL's launch thread works, threads.c). */
    for (int round = 0; round < 2; round++) {
        EXPECT(ncclAllReduce(buf, buf, N, ncclFloat32, ncclSum, comm, s) == ncclInProgress,
               "a collective outside a group did not return ncclInProgress");
        polls[round] = rules_polls_until_done(comm, &state);
        EXPECT(state == ncclSuccess, "its completion");
    }
    EXPECT(polls[0] >= 1 && polls[1] >= 1 && polls[0] + polls[1] >= 3,
           "not one and two queries saying ncclInProgress");
    EXPECT(buf[0] == 6, "the all-reduces' result");   /* (1 + 2) * 2 */
    /* Ignored: the next call on the communicator is flagged and refused. */
    EXPECT(ncclAllReduce(buf, buf, N, ncclFloat32, ncclSum, comm, s) == ncclInProgress &&
           ncclAllReduce(buf, buf, N, ncclFloat32, ncclSum, comm, s) == ncclInvalidArgument,
           "a collective on a communicator in progress was accepted");
    EXPECT(rules_polls_until_done(comm, &state) >= 1 && state == ncclSuccess, "its completion");
    /* A group: its calls succeed, its end is in progress. */
    EXPECT(ncclGroupStart() == ncclSuccess &&
           ncclSend(buf, N, ncclFloat32, peer, comm, s) == ncclSuccess &&
           ncclRecv(buf + N, N, ncclFloat32, peer, comm, s) == ncclSuccess &&
           ncclGroupEnd() == ncclInProgress, "ncclGroupEnd did not return ncclInProgress");
    EXPECT(ncclGroupStart() == ncclSuccess &&
           ncclBroadcast(buf, buf, N, ncclFloat32, 0, comm, s) == ncclInvalidArgument &&
           ncclGroupEnd() == ncclInvalidArgument, "a grouped call after an ignored ncclGroupEnd");
    EXPECT(rules_polls_until_done(comm, &state) >= 1 && state == ncclSuccess, "the group's end");
    /* Split: ncclSuccess, as NCCL's ncclCommSplit returns (init.cc, 2.18.1
     * to 2.28.9), the parent in progress, the child written when it is done. */
    EXPECT(ncclCommSplit(comm, 0, me, &child, NULL) == ncclSuccess && child == NULL,
           "ncclCommSplit did not return ncclSuccess, or wrote the new one at once");
    EXPECT(ncclCommDestroy(comm) == ncclInvalidArgument, "destroyed while in progress");
    /* From 2.24 the refusal leaves this thread in a group (init.cc). */
    EXPECT(standin_group_depth() == rules_destroy_leaves_group() &&
               (standin_group_depth() == 0 || ncclGroupEnd() == ncclSuccess),
           "the refused ncclCommDestroy left the thread's groups wrong for this version");
    EXPECT(rules_polls_until_done(comm, &state) >= 1 && state == ncclSuccess && child != NULL,
           "the split's completion");
    /* Captured: the launch reaches the graph; polled before the capture ends. */
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    EXPECT(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) == cudaSuccess &&
           ncclAllReduce(buf, buf, N, ncclFloat32, ncclSum, child, s) == ncclInProgress &&
           rules_polls_until_done(child, &state) >= 1 && state == ncclSuccess &&
           cudaStreamEndCapture(s, &graph) == cudaSuccess &&
           cudaGraphInstantiateWithFlags(&exec, graph, 0) == cudaSuccess &&
           cudaGraphLaunch(exec, s) == cudaSuccess && cudaStreamSynchronize(s) == cudaSuccess,
           "capture");
    EXPECT(buf[0] == 24 && buf[N] == 12, "the results after the group and the graph");
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    EXPECT(rules_trace_count("VIOLATION ncclAllReduce on a non-blocking communicator that is not "
                       "ready") == 1 &&
           rules_trace_count("VIOLATION ncclBroadcast on a non-blocking communicator that is not "
                       "ready") == 1 &&
           rules_trace_count("VIOLATION ncclCommDestroy on a non-blocking communicator that is not "
                       "ready") == 1, "the calls that ignored ncclInProgress not flagged");
    /* A split whose config says blocking = 1: the split, a job of the
     * non-blocking parent, is in progress; the new communicator's own
     * collectives return when enqueued, with no ncclInProgress. */
    ncclComm_t blocking_child = NULL;
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 1;
    int launched_in_progress = rules_trace_count("ncclInProgress from a call outside a group");
    EXPECT(ncclCommSplit(comm, 0, me, &blocking_child, &config) == ncclSuccess &&
           blocking_child == NULL && rules_polls_until_done(comm, &state) >= 1 &&
           state == ncclSuccess && blocking_child != NULL, "a blocking split");
    EXPECT(ncclAllReduce(buf, buf, N, ncclFloat32, ncclSum, blocking_child, s) == ncclSuccess &&
           cudaStreamSynchronize(s) == cudaSuccess && buf[0] == 48 &&
           rules_trace_count("ncclInProgress from a call outside a group") == launched_in_progress,
           "a collective on the blocking split");
    EXPECT(ncclCommDestroy(blocking_child) == ncclSuccess && ncclCommDestroy(child) == ncclSuccess &&
           ncclCommDestroy(comm) == ncclSuccess, "teardown");
    cudaStreamDestroy(s);
    cudaFree(buf);
    return 0;
}

/* NCCL_COMM_BLOCKING overrides the config's blocking field (init.cc,
 * parseCommConfig): from 2.17 both ways (2.18 on for splits too); 2.14 to
 * 2.16 honour only 1. The stand-in must follow, or a backend that ignores
 * the variable passes here and stalls on a real cluster. */
static int case_env_blocking(void)
{
    ncclComm_t comm = NULL, child = NULL, other = NULL;
    ncclResult_t state = ncclInProgress;
    setenv("NCCL_COMM_BLOCKING", "0", 1);
    EXPECT(rules_comm_world(&comm, 1) == ncclInProgress && rules_polls_until_done(comm, &state) >= 1 &&
               state == ncclSuccess,
           "NCCL_COMM_BLOCKING=0 did not make a blocking config non-blocking");
    EXPECT(ncclCommSplit(comm, 0, rules_rank(), &child, NULL) == ncclSuccess && child == NULL &&
               rules_polls_until_done(comm, &state) >= 1 && child != NULL,
           "the split of the non-blocking communicator");
    EXPECT(ncclCommDestroy(child) == ncclSuccess && ncclCommDestroy(comm) == ncclSuccess,
           "teardown");
    setenv("NCCL_COMM_BLOCKING", "1", 1);
    EXPECT(rules_comm_world(&other, 0) == ncclSuccess && ncclCommDestroy(other) == ncclSuccess,
           "NCCL_COMM_BLOCKING=1 did not make a non-blocking config blocking");
    setenv("CB_STANDIN_NCCL_VERSION", "21605", 1);
    setenv("NCCL_COMM_BLOCKING", "0", 1);
    EXPECT(rules_comm_world(&other, 1) == ncclSuccess && ncclCommDestroy(other) == ncclSuccess,
           "2.16 took NCCL_COMM_BLOCKING=0");
    unsetenv("CB_STANDIN_NCCL_VERSION");
    unsetenv("NCCL_COMM_BLOCKING");
    return 0;
}

/* A call that fails inside a group makes the outermost ncclGroupEnd drop
 * the whole group unlaunched and return its error (NCCL 2.28's
 * ncclGroupErrCheck); ncclCommAbort while the thread's group is open
 * waits for the group's end (2.28: a job of the group; rules_abort.c has
 * it by version), after the end it is done at once. */
static int case_abort_group(void)
{
    enum { N = 4 };
    ncclComm_t comm = NULL, other = NULL;
    cudaStream_t s;
    float *buf = rules_device_memory(N * sizeof *buf);
    EXPECT(buf != NULL && cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess &&
           rules_comm_world(&comm, 1) == ncclSuccess && rules_comm_world(&other, 1) == ncclSuccess,
           "set-up");
    for (int i = 0; i < N; i++)
        buf[i] = 1;
    EXPECT(ncclGroupStart() == ncclSuccess && ncclGroupStart() == ncclSuccess &&
           ncclAllReduce(buf, buf, N, ncclFloat32, ncclSum, comm, s) == ncclSuccess &&
           ncclBroadcast(buf, buf, N, ncclFloat32, 99, comm, s) == ncclInvalidArgument &&
           ncclGroupEnd() == ncclSuccess && ncclGroupEnd() == ncclInvalidArgument,
           "the outermost end did not return the failed call's error");
    EXPECT(cudaStreamSynchronize(s) == cudaSuccess && buf[0] == 1 &&
           rules_trace_count("ncclGroupEnd dropped the group after a failed call") == 1,
           "the group of a failed call was launched");
    EXPECT(ncclAllReduce(buf, buf, N, ncclFloat32, ncclSum, comm, s) == ncclSuccess &&
           cudaStreamSynchronize(s) == cudaSuccess && buf[0] == 2,
           "the next group of one after a dropped group");
    EXPECT(ncclGroupStart() == ncclSuccess && ncclCommAbort(comm) == ncclSuccess, "a group");
    EXPECT(rules_trace_count("ncclCommAbort held for the outermost ncclGroupEnd") == 1,
           "an abort inside a group not held for its end");
    EXPECT(ncclGroupEnd() == ncclSuccess, "the group's end");
    ncclCommAbort(other);
    EXPECT(rules_trace_count("ncclCommAbort held") == 1 &&
               rules_trace_count("VIOLATION ncclCommAbort") == 0,
           "an abort outside any group held or flagged");
    cudaStreamDestroy(s);
    cudaFree(buf);
    return 0;
}

/* -B's compare kernel (kernels.c): PTX is refused as a driver refuses it
 * (a .version newer than the driver's, a .target newer than the GPU), a
 * name not in it is not found, a launch's configuration is checked, its
 * buffers must lie in device allocations, and a kernel of an unloaded
 * library cannot be launched; a good launch runs the model. */
static int case_kernel(void)
{
#ifndef CB_HAVE_CUDA_LIBRARY
    printf("note: this CUDA runtime has no cudaLibraryLoadData: nothing to check\n");
    return 0;
#else
    const char *ptx = rules_count_differing_ptx;
    cudaLibrary_t lib;
    cudaKernel_t kernel;
    cudaStream_t s;
    unsigned char *a, *b, host[8] = {0};
    unsigned long long *count, n = 8;
    unsigned int width = 1;
    EXPECT(rules_kernel_buffers(&a, &b, &count) == 0 &&
           cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess, "set-up");
    setenv("CB_STANDIN_PTX_MAX", "65", 1);
    EXPECT(cudaLibraryLoadData(&lib, ptx, NULL, NULL, 0, NULL, NULL, 0) ==
           cudaErrorUnsupportedPtxVersion, "PTX 7.0 loaded by a driver that reads 6.5");
    unsetenv("CB_STANDIN_PTX_MAX");
    setenv("CB_STANDIN_CC", "61", 1);
    EXPECT(cudaLibraryLoadData(&lib, ptx, NULL, NULL, 0, NULL, NULL, 0) == cudaErrorInvalidPtx,
           "sm_70 PTX loaded on a compute capability 6.1 GPU");
    unsetenv("CB_STANDIN_CC");
    EXPECT(cudaLibraryLoadData(&lib, ptx, NULL, NULL, 0, NULL, NULL, 0) == cudaSuccess, "load");
    EXPECT(cudaLibraryGetKernel(&kernel, lib, "cb_other") == cudaErrorSymbolNotFound,
           "a kernel the PTX lacks found");
    EXPECT(cudaLibraryGetKernel(&kernel, lib, "cb_count_differing") == cudaSuccess, "kernel");
    void *args[] = {&a, &b, &n, &width, &count};
    dim3 one = {1, 1, 1}, threads = {256, 1, 1}, too_many = {2048, 1, 1};
    EXPECT(cudaLaunchKernel(kernel, one, too_many, args, 0, s) == cudaErrorInvalidConfiguration,
           "a block of 2048 threads launched");
    EXPECT(cudaGetLastError() == cudaErrorInvalidConfiguration && cudaGetLastError() == cudaSuccess,
           "the launch error not kept once, then cleared");
    EXPECT(cudaLaunchKernel(kernel, one, threads, args, 0, s) == cudaSuccess && *count == 1,
           "the model did not count the one differing element");
    unsigned char *outside = host;
    void *host_args[] = {&a, &outside, &n, &width, &count};
    cudaLaunchKernel(kernel, one, threads, host_args, 0, s);
    EXPECT(rules_trace_count("VIOLATION cb_count_differing's second buffer: 8 bytes") == 1,
           "a host buffer given to the kernel not flagged");
    EXPECT(cudaLibraryUnload(lib) == cudaSuccess, "unload");
    EXPECT(cudaLaunchKernel(kernel, one, threads, args, 0, s) == cudaErrorInvalidDeviceFunction &&
           rules_trace_count("VIOLATION cudaLaunchKernel of a kernel that no loaded library") == 1,
           "a kernel of an unloaded library launched");
    cudaStreamDestroy(s);
    cudaFree(a);
    cudaFree(b);
    cudaFree(count);
    return 0;
#endif
}

int main(int argc, char **argv)
{
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    static const struct {
        const char *name;
        int (*run)(void);
    } cases[] = {
        {"graph-abort", case_graph_abort}, {"device", case_device},
        {"bootstrap", case_bootstrap},     {"async", case_async},
        {"group", case_group},             {"memory", case_memory},
        {"redop", case_redop},             {"inprogress", case_inprogress},
        {"bounds", case_bounds},           {"failed", case_failed},
        {"abort-in-group", case_abort_group}, {"kernel", case_kernel},
        {"env-blocking", case_env_blocking},
        {"launch-thread", rules_case_launch_thread}, {"launch-threads", rules_case_launch_threads},
        {"destroy-error", rules_case_destroy_error},
        {"connect-memory", rules_case_connect_memory},
        {"group-modes", rules_case_group_modes}, {"config-blocking", rules_case_config_blocking},
        {"register-null", rules_case_register_null}, {"group-mixed", rules_case_group_mixed},
        {"group-create", rules_case_group_create}, {"split-share", rules_case_split_share},
        {"split-share-env", rules_case_split_share_env},
        {"abort-inside", rules_case_abort_inside}, {"shrink-split", rules_case_shrink_split},
        {"capture-query", rules_case_capture_query},
        {"capture-modes", rules_case_capture_modes},
        {"config-share", rules_case_config_share},
        {"runtime-connect", rules_case_runtime_connect},
        {"memalloc-granularity", rules_case_memalloc_granularity},
        {"last-error", rules_case_last_error},
        {"unready-unchecked", rules_case_unready_unchecked},
        {"window-deregister", rules_case_window_deregister},
        {"nvls-memory", rules_case_nvls_memory}, {"nvls-split", rules_case_nvls_split},
        {"capture-work", rules_case_capture_work}, {"capture-kernel", rules_case_capture_kernel},
        {"abort-group-version", rules_case_abort_group_version},
        {"fail-at-group-end", rules_case_fail_at_group_end}, {"async-jobs", rules_case_async_jobs},
    };
    int rc = 2;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (argc == 2 && strcmp(argv[1], cases[i].name) == 0)
            rc = cases[i].run();
    if (rc == 2)
        fprintf(stderr, "usage: rules CASE (one of those tests/nccl/nccl_standin_rules.sh "
                        "runs)\n");
    else if (rc == 0)
        printf("ok: %s (rank %d)\n", argv[1], rules_rank());
    MPI_Finalize();
    return rc;
}
