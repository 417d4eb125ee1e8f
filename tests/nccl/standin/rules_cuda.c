/*
 * The stand-in's rule cases for stream capture by mode (capture.c), the
 * config fields NCCL refuses, when NCCL connects, and what ncclMemAlloc
 * costs (docs/design/nccl-contract.md, discrepancies 1, 11, 13 and 19; run
 * by tests/nccl/nccl_standin_rules.sh, on 2 ranks).
 */
#define _GNU_SOURCE   /* setenv */
#include <pthread.h>
#include <stdlib.h>

#include "rules.h"

static const size_t mib = (size_t)1 << 20;

static size_t free_now(void)
{
    size_t free_bytes = 0, total = 0;
    cudaMemGetInfo(&free_bytes, &total);
    return free_bytes;
}

/* Querying or synchronising a capturing stream is refused and invalidates
 * the capture, in every mode: the stream refuses further work and the
 * capture's end returns cudaErrorStreamCaptureInvalidated and no graph
 * (capture.c). */
int rules_case_capture_query(void)
{
    static const enum cudaStreamCaptureMode modes[] = {
        cudaStreamCaptureModeThreadLocal, cudaStreamCaptureModeGlobal,
        cudaStreamCaptureModeRelaxed};
    cudaStream_t s;
    ncclComm_t comm = NULL;
    float *buf = rules_device_memory(4 * sizeof *buf);
    EXPECT(buf != NULL && cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess &&
               rules_comm_world(&comm, 1) == ncclSuccess,
           "set-up");
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
        cudaGraph_t graph = (cudaGraph_t)&graph;
        EXPECT(cudaStreamBeginCapture(s, modes[m]) == cudaSuccess, "capture");
        EXPECT(cudaStreamQuery(s) == cudaErrorStreamCaptureUnsupported,
               "cudaStreamQuery of the capturing stream was not refused");
        EXPECT(cudaStreamSynchronize(s) == cudaErrorStreamCaptureInvalidated,
               "the invalidated capture's stream did not say so");
        EXPECT(ncclAllReduce(buf, buf, 4, ncclFloat32, ncclSum, comm, s) != ncclSuccess,
               "a collective was captured into an invalidated capture");
        EXPECT(cudaMemcpyAsync(buf, buf + 2, 2 * sizeof *buf, cudaMemcpyDeviceToDevice, s) ==
                   cudaErrorStreamCaptureInvalidated,
               "a copy was captured into an invalidated capture");
        EXPECT(cudaStreamEndCapture(s, &graph) == cudaErrorStreamCaptureInvalidated &&
                   graph == NULL,
               "the capture survived a query of its stream");
    }
    EXPECT(rules_trace_count("cudaStreamQuery on a capturing stream: the capture is "
                             "invalidated") == 3,
           "the invalidation was not traced");
    EXPECT(cudaStreamQuery(s) == cudaSuccess, "the stream is not usable after the capture");
    EXPECT(ncclCommDestroy(comm) == ncclSuccess && cudaStreamDestroy(s) == cudaSuccess &&
               cudaFree(buf) == cudaSuccess,
           "teardown");
    return 0;
}

typedef struct other_thread {
    cudaStream_t stream;
    cudaError_t malloc_result;
    cudaError_t end_result;
} other_thread;

static void *malloc_elsewhere(void *arg)
{
    other_thread *t = arg;
    void *p = NULL;
    t->malloc_result = cudaMalloc(&p, 16);
    if (t->malloc_result == cudaSuccess)
        cudaFree(p);
    return NULL;
}

static void *end_elsewhere(void *arg)
{
    other_thread *t = arg;
    cudaGraph_t graph = NULL;
    t->end_result = cudaStreamEndCapture(t->stream, &graph);
    if (t->end_result == cudaSuccess && graph != NULL)
        cudaGraphDestroy(graph);   /* a relaxed capture ends here, whole */
    return NULL;
}

/* Run fn on a thread of its own, to its end. */
static int on_other_thread(void *(*fn)(void *), other_thread *t)
{
    pthread_t id;
    return pthread_create(&id, NULL, fn, t) == 0 && pthread_join(id, NULL) == 0;
}

/* cudaMalloc by the capture's mode (cudaThreadExchangeStreamCaptureMode):
 * thread-local prohibits it on the capturing thread only, global on every
 * thread, relaxed on none; a prohibited one invalidates the capture. A
 * capture not begun relaxed ends on its own thread. The backend captures
 * thread-local (src/backends/nccl/graph.c). */
int rules_case_capture_modes(void)
{
    cudaStream_t s;
    cudaGraph_t graph = NULL;
    other_thread t = {0};
    void *p = NULL;
    EXPECT(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess, "set-up");
    t.stream = s;
    EXPECT(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) == cudaSuccess &&
               on_other_thread(malloc_elsewhere, &t) && t.malloc_result == cudaSuccess,
           "thread-local: another thread's cudaMalloc was refused");
    EXPECT(on_other_thread(end_elsewhere, &t) &&
               t.end_result == cudaErrorStreamCaptureWrongThread,
           "thread-local: the capture ended on another thread");
    EXPECT(cudaStreamEndCapture(s, &graph) == cudaSuccess && graph != NULL &&
               cudaGraphDestroy(graph) == cudaSuccess,
           "thread-local: another thread's cudaMalloc invalidated the capture");
    EXPECT(rules_trace_count("VIOLATION cudaMalloc while a stream captures") == 0,
           "thread-local: another thread's cudaMalloc was flagged");

    EXPECT(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) == cudaSuccess &&
               on_other_thread(malloc_elsewhere, &t) &&
               t.malloc_result == cudaErrorStreamCaptureUnsupported,
           "global: another thread's cudaMalloc was allowed");
    EXPECT(cudaStreamEndCapture(s, &graph) == cudaErrorStreamCaptureInvalidated && graph == NULL,
           "global: another thread's cudaMalloc left the capture valid");
    EXPECT(rules_trace_count("VIOLATION cudaMalloc while a stream captures") == 1,
           "global: the prohibited cudaMalloc was not flagged");

    EXPECT(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed) == cudaSuccess &&
               cudaMalloc(&p, 16) == cudaSuccess && cudaFree(p) == cudaSuccess,
           "relaxed: the capturing thread's cudaMalloc was refused");
    EXPECT(on_other_thread(end_elsewhere, &t) && t.end_result == cudaSuccess,
           "relaxed: the capture could not end on another thread");
    EXPECT(rules_trace_count("VIOLATION cudaMalloc while a stream captures") == 1,
           "relaxed: the cudaMalloc was flagged");
    EXPECT(cudaStreamDestroy(s) == cudaSuccess, "teardown");
    return 0;
}

static ncclResult_t world_config(ncclComm_t *comm, int split_share, int shrink_share)
{
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.splitShare = split_share;
    config.shrinkShare = shrink_share;
    return rules_comm_world_config(comm, &config);
}

/* splitShare other than 0, 1 or unset is refused from 2.18, shrinkShare
 * from 2.27, at creation and at a split (init.cc, parseCommConfig); the
 * versions without the field ignore it. */
int rules_case_config_share(void)
{
    ncclComm_t comm = NULL, child = NULL;
    EXPECT(world_config(&comm, 2, NCCL_CONFIG_UNDEF_INT) == ncclInvalidArgument && comm == NULL,
           "2.28: splitShare = 2 was accepted at creation");
    EXPECT(world_config(&comm, NCCL_CONFIG_UNDEF_INT, -3) == ncclInvalidArgument && comm == NULL,
           "2.28: shrinkShare = -3 was accepted at creation");
    EXPECT(world_config(&comm, 1, 0) == ncclSuccess && comm != NULL, "2.28: valid values refused");
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.splitShare = 7;
    EXPECT(ncclCommSplit(comm, 0, rules_rank(), &child, &config) == ncclInvalidArgument &&
               child == NULL,
           "2.28: a split's splitShare = 7 was accepted");
    EXPECT(ncclCommDestroy(comm) == ncclSuccess, "teardown at 2.28");
    setenv("CB_STANDIN_NCCL_VERSION", "22603", 1);
    EXPECT(world_config(&comm, 0, 5) == ncclSuccess && comm != NULL,
           "2.26: shrinkShare, not yet read, was refused");
    EXPECT(ncclCommDestroy(comm) == ncclSuccess, "teardown at 2.26");
    setenv("CB_STANDIN_NCCL_VERSION", "21705", 1);
    EXPECT(world_config(&comm, 5, 5) == ncclSuccess && comm != NULL,
           "2.17: splitShare, not yet read, was refused");
    EXPECT(ncclCommDestroy(comm) == ncclSuccess, "teardown at 2.17");
    return 0;
}

int rules_connect_costs(const char *version, const char *variable, const char *value,
                        size_t *at_creation, size_t *at_first_use)
{
    ncclComm_t comm = NULL;
    cudaStream_t s;
    float *buf = rules_device_memory(4 * sizeof *buf);
    setenv("CB_STANDIN_NCCL_VERSION", version, 1);
    if (variable != NULL)
        setenv(variable, value, 1);
    size_t before = free_now();
    if (buf == NULL || cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess ||
        rules_comm_world(&comm, 1) != ncclSuccess)
        return -1;
    size_t created = free_now();
    int rc = ncclAllReduce(buf, buf, 4, ncclFloat32, ncclSum, comm, s) == ncclSuccess &&
                     cudaStreamSynchronize(s) == cudaSuccess
                 ? 0
                 : -1;
    *at_creation = before - created;
    *at_first_use = created - free_now();
    ncclCommDestroy(comm);
    cudaStreamDestroy(s);
    if (free_now() != before)   /* not all given back */
        rc = -1;
    cudaFree(buf);
    if (variable != NULL)
        unsetenv(variable);
    return rc;
}

/* From 2.22 NCCL connects at first use only when runtimeConn, i.e. with
 * NCCL_RUNTIME_CONNECT (default 1) and cuMem (NCCL_CUMEM_ENABLE); else at
 * creation, as before 2.22 (init.cc, initTransportsRank, 2.22.3 to 2.30.7). */
int rules_case_runtime_connect(void)
{
    size_t created = 0, used = 0;
    setenv("CB_STANDIN_CONNECT_BYTES", "1048576", 1);
    EXPECT(rules_connect_costs("22809", NULL, NULL, &created, &used) == 0 && created == 0 &&
               used == mib,
           "2.28: not connected at first use by default");
    EXPECT(rules_connect_costs("22809", "NCCL_RUNTIME_CONNECT", "0", &created, &used) == 0 &&
               created == mib && used == 0,
           "2.28: NCCL_RUNTIME_CONNECT=0 did not connect at creation");
    EXPECT(rules_connect_costs("22203", "NCCL_CUMEM_ENABLE", "0", &created, &used) == 0 &&
               created == mib && used == 0,
           "2.22: NCCL_CUMEM_ENABLE=0 did not connect at creation");
    EXPECT(rules_connect_costs("22105", "NCCL_RUNTIME_CONNECT", "1", &created, &used) == 0 &&
               created == mib && used == 0,
           "2.21: NCCL_RUNTIME_CONNECT=1 connected at first use");
    EXPECT(rules_trace_count("NCCL connections 1048576 bytes at creation (no runtime "
                             "connection)") == 2,
           "the connections at creation were not traced");
    return 0;
}

/* What one ncclMemAlloc of bytes takes from the device at version. */
static size_t memalloc_cost(const char *version, size_t bytes)
{
    void *p = NULL;
    setenv("CB_STANDIN_NCCL_VERSION", version, 1);
    size_t before = free_now();
    if (ncclMemAlloc(&p, bytes) != ncclSuccess)
        return 0;
    size_t cost = before - free_now();
    ncclMemFree(p);
    return cost;
}

/* ncclMemAlloc's memory is rounded to the allocation granularity (2.26
 * on), the multicast one on a device with multicast support (2.19 to
 * 2.25), none without cuMem (NCCL_CUMEM_ENABLE=0, 2.24 on) or without
 * multicast before 2.24 (nccl_register.c, memalloc_granularity). */
int rules_case_memalloc_granularity(void)
{
    EXPECT(memalloc_cost("22809", 1000) == 2 * mib, "2.28: not rounded to 2 MiB");
    EXPECT(memalloc_cost("22809", 2 * mib + 1) == 4 * mib, "2.28: 2 MiB + 1 not rounded up");
    EXPECT(memalloc_cost("22809", 4 * mib) == 4 * mib, "2.28: 4 MiB rounded");
    EXPECT(memalloc_cost("22203", 1000) == 1000, "2.22 without multicast: rounded");
    setenv("CB_STANDIN_MULTICAST_GRANULARITY", "8388608", 1);
    EXPECT(memalloc_cost("22203", 1000) == 8 * mib, "2.22 with multicast: not to 8 MiB");
    EXPECT(memalloc_cost("22501", 1000) == 8 * mib, "2.25 with multicast: not to 8 MiB");
    EXPECT(memalloc_cost("22603", 1000) == 2 * mib, "2.26 with multicast: not to 2 MiB");
    setenv("NCCL_CUMEM_ENABLE", "0", 1);
    EXPECT(memalloc_cost("22809", 1000) == 1000, "2.28, NCCL_CUMEM_ENABLE=0: rounded");
    EXPECT(memalloc_cost("22203", 1000) == 8 * mib,
           "2.22, NCCL_CUMEM_ENABLE=0: multicast rounding lost (not read before 2.24)");
    unsetenv("NCCL_CUMEM_ENABLE");
    setenv("CB_STANDIN_MEM_GRANULARITY", "65536", 1);
    EXPECT(memalloc_cost("22809", 1000) == 65536, "CB_STANDIN_MEM_GRANULARITY not followed");
    return 0;
}
