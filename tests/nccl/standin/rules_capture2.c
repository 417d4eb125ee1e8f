/*
 * The stand-in's rule cases for what a capture records besides NCCL's
 * work (docs/design/nccl-contract.md, formerly discrepancies 12 and 16):
 * memsets, copies of every kind, event records and kernel launches on a
 * capturing stream are captured, not refused, and a launch of the graph
 * replays them in order (run by tests/nccl/nccl_standin_rules.sh, on 2
 * ranks, each on its own).
 */
#include "config.h"

#include <string.h>

#include "rules.h"

/* A capture records memsets, copies of every kind and an external event
 * record, runs none of them, and each graph launch replays them in order;
 * a plain event record inside a capture is the capture's own (no node),
 * and querying that event while the capture runs is refused and
 * invalidates it. */
int rules_case_capture_work(void)
{
    enum { N = 8 };
    cudaStream_t s;
    cudaEvent_t inner, outer;
    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    unsigned char *dev = rules_device_memory(N), *dev2 = rules_device_memory(2 * N);
    unsigned char host[N] = {0}, rows[2 * N], back[2 * N] = {0};
    float ms = 0;
    memset(rows, 5, sizeof rows);
    EXPECT(dev != NULL && dev2 != NULL &&
               cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess &&
               cudaEventCreate(&inner) == cudaSuccess && cudaEventCreate(&outer) == cudaSuccess &&
               cudaMemset(dev, 0, N) == cudaSuccess && cudaMemset(dev2, 0, 2 * N) == cudaSuccess,
           "set-up");
    EXPECT(cudaEventRecordWithFlags(outer, s, cudaEventRecordExternal) == cudaErrorInvalidValue,
           "an external event record outside a capture was accepted");
    EXPECT(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) == cudaSuccess, "capture");
    EXPECT(cudaMemsetAsync(dev, 7, N, s) == cudaSuccess, "a memset was not captured");
    EXPECT(cudaMemcpyAsync(host, dev, N, cudaMemcpyDeviceToHost, s) == cudaSuccess,
           "a device-to-host copy was not captured");
    EXPECT(cudaMemcpy2DAsync(dev2, 4, rows, 4, 4, 2, cudaMemcpyHostToDevice, s) == cudaSuccess,
           "a host-to-device 2-D copy was not captured");
    EXPECT(cudaMemcpyAsync(back, dev2, 2 * N, cudaMemcpyDeviceToHost, s) == cudaSuccess,
           "a second copy was not captured");
    EXPECT(cudaEventRecord(inner, s) == cudaSuccess, "an event record was refused");
    EXPECT(cudaEventRecordWithFlags(outer, s, cudaEventRecordExternal) == cudaSuccess,
           "an external event record was refused");
    EXPECT(host[0] == 0 && back[0] == 0, "captured work ran at the capture");
    EXPECT(cudaStreamEndCapture(s, &graph) == cudaSuccess && graph != NULL, "the capture's end");
    EXPECT(cudaGraphInstantiateWithFlags(&exec, graph, 0) == cudaSuccess, "instantiate");
    EXPECT(cudaEventElapsedTime(&ms, outer, outer) == cudaErrorInvalidResourceHandle,
           "the external event was recorded before the graph ran");
    for (int launch = 0; launch < 2; launch++) {
        memset(host, 0, sizeof host);
        EXPECT(cudaGraphLaunch(exec, s) == cudaSuccess && cudaStreamSynchronize(s) == cudaSuccess,
               "graph launch");
        EXPECT(host[0] == 7 && host[N - 1] == 7, "the memset did not run before the copy");
        EXPECT(back[0] == 5 && back[7] == 5 && back[8] == 0, "the 2-D copy did not run in order");
        EXPECT(cudaEventQuery(outer) == cudaSuccess &&
                   cudaEventElapsedTime(&ms, outer, outer) == cudaSuccess,
               "the graph did not record the external event");
    }
    /* The plain record made no node: its event is the capture's. */
    EXPECT(rules_trace_count("run event") == 2, "the external record was not replayed twice");
    EXPECT(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) == cudaSuccess &&
               cudaEventRecord(inner, s) == cudaSuccess,
           "a second capture");
    EXPECT(cudaEventQuery(inner) == cudaErrorStreamCaptureUnsupported,
           "an event recorded inside a running capture was queried");
    cudaGraph_t none = (cudaGraph_t)&none;
    EXPECT(cudaStreamEndCapture(s, &none) == cudaErrorStreamCaptureInvalidated && none == NULL,
           "querying the capture's event did not invalidate it");
    EXPECT(cudaGetLastError() == cudaErrorStreamCaptureInvalidated, "the last error");
    EXPECT(cudaEventRecord(inner, s) == cudaSuccess && cudaEventQuery(inner) == cudaSuccess,
           "an event recorded again outside the capture");
    EXPECT(cudaGraphExecDestroy(exec) == cudaSuccess && cudaGraphDestroy(graph) == cudaSuccess &&
               cudaEventDestroy(inner) == cudaSuccess && cudaEventDestroy(outer) == cudaSuccess &&
               cudaStreamDestroy(s) == cudaSuccess && cudaFree(dev) == cudaSuccess &&
               cudaFree(dev2) == cudaSuccess,
           "teardown");
    EXPECT(rules_trace_count("VIOLATION") == 0, "captured work was flagged");
    return 0;
}

#ifdef CB_HAVE_CUDA_LIBRARY
/* PTX declaring -B's compare kernel, which kernels.c models. */
const char rules_count_differing_ptx[] =
    ".version 7.0\n.target sm_70\n.address_size 64\n"
    ".visible .entry cb_count_differing(\n .param .u64 a,\n .param .u64 b,\n"
    " .param .u64 n,\n .param .u32 w,\n .param .u64 d\n)\n{\n ret;\n}\n";

int rules_kernel_buffers(unsigned char **a, unsigned char **b, unsigned long long **count)
{
    *a = rules_device_memory(8);
    *b = rules_device_memory(8);
    *count = rules_device_memory(sizeof **count);
    if (*a == NULL || *b == NULL || *count == NULL)
        return -1;
    cudaMemset(*a, 0, 8);
    cudaMemset(*b, 0, 8);
    cudaMemset(*b + 3, 1, 1);
    cudaMemset(*count, 0, sizeof **count);
    return 0;
}
#endif

/* A kernel launched on a capturing stream is captured with its arguments'
 * values as they were at the launch, and runs at each graph launch. */
int rules_case_capture_kernel(void)
{
#ifndef CB_HAVE_CUDA_LIBRARY
    printf("note: this CUDA runtime has no cudaLibraryLoadData: nothing to check\n");
    return 0;
#else
    const char *ptx = rules_count_differing_ptx;
    cudaLibrary_t lib;
    cudaKernel_t kernel;
    cudaStream_t s;
    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    unsigned char *a, *b;
    unsigned long long *count, n = 8;
    unsigned int width = 1;
    EXPECT(rules_kernel_buffers(&a, &b, &count) == 0 &&
               cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess &&
               cudaLibraryLoadData(&lib, ptx, NULL, NULL, 0, NULL, NULL, 0) == cudaSuccess &&
               cudaLibraryGetKernel(&kernel, lib, "cb_count_differing") == cudaSuccess,
           "set-up");
    void *args[] = {&a, &b, &n, &width, &count};
    dim3 one = {1, 1, 1}, threads = {256, 1, 1};
    EXPECT(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) == cudaSuccess, "capture");
    EXPECT(cudaLaunchKernel(kernel, one, threads, args, 0, s) == cudaSuccess,
           "a kernel launch was not captured");
    n = 2;   /* the node keeps the value given at the launch: 8 */
    EXPECT(*count == 0, "the captured kernel ran at the capture");
    EXPECT(cudaStreamEndCapture(s, &graph) == cudaSuccess && graph != NULL &&
               cudaGraphInstantiateWithFlags(&exec, graph, 0) == cudaSuccess,
           "the capture's end");
    for (unsigned long long launch = 1; launch <= 2; launch++)
        EXPECT(cudaGraphLaunch(exec, s) == cudaSuccess && cudaStreamSynchronize(s) == cudaSuccess &&
                   *count == launch,
               "the graph did not run the kernel over the 8 elements once per launch");
    EXPECT(rules_trace_count("VIOLATION") == 0, "a captured kernel was flagged");
    EXPECT(cudaGraphExecDestroy(exec) == cudaSuccess && cudaGraphDestroy(graph) == cudaSuccess &&
               cudaLibraryUnload(lib) == cudaSuccess && cudaStreamDestroy(s) == cudaSuccess,
           "teardown");
    cudaFree(a);
    cudaFree(b);
    cudaFree(count);
    return 0;
#endif
}
