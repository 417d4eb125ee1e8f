/*
 * The stand-in's rule case for cudaGetLastError (kernels.c,
 * docs/design/nccl-contract.md, discrepancy 14, fixed): "the last error
 * that has been produced by any of the runtime calls ... in the host
 * thread", reset once read (cuda_runtime_api.h). Run by
 * tests/nccl/nccl_standin_rules.sh, on 2 ranks.
 */
#define _GNU_SOURCE   /* setenv */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "rules.h"

static void *fail_elsewhere(void *unused)
{
    (void)unused;
    cudaSetDevice(99);
    /* Read here, so that this thread's error is not counted at exit. */
    return (void *)(intptr_t)cudaGetLastError();
}

/* A runtime call's error, not only a kernel launch's, is kept through
 * later successful calls, returned once, then cleared; the latest of two
 * errors is the one kept; another thread's error is not this thread's;
 * cudaErrorNotReady is no error; NCCL's own runtime call that fails
 * inside ncclMemAlloc sets nothing (NCCL links cudart_static). */
int rules_case_last_error(void)
{
    int device = -1;
    cudaStream_t s;
    cudaGetLastError();
    EXPECT(cudaSetDevice(99) == cudaErrorInvalidDevice, "device 99 was set");
    EXPECT(cudaGetDevice(&device) == cudaSuccess && device == 0, "the device changed");
    EXPECT(cudaGetLastError() == cudaErrorInvalidDevice,
           "cudaSetDevice's error was not kept for cudaGetLastError");
    EXPECT(cudaGetLastError() == cudaSuccess, "the error was not reset once read");

    EXPECT(cudaStreamDestroy(NULL) == cudaErrorInvalidResourceHandle, "a NULL stream destroyed");
    void *huge = NULL;
    EXPECT(cudaMalloc(&huge, (size_t)1 << 62) == cudaErrorMemoryAllocation, "2^62 bytes given");
    EXPECT(cudaGetLastError() == cudaErrorMemoryAllocation && cudaGetLastError() == cudaSuccess,
           "not the latest error kept once");

    pthread_t other;
    void *theirs = NULL;
    EXPECT(pthread_create(&other, NULL, fail_elsewhere, NULL) == 0 &&
               pthread_join(other, &theirs) == 0,
           "thread");
    EXPECT((cudaError_t)(intptr_t)theirs == cudaErrorInvalidDevice,
           "the other thread's error was not its own");
    EXPECT(cudaGetLastError() == cudaSuccess, "another thread's error seen on this one");

    EXPECT(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess, "stream");
    EXPECT(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) == cudaSuccess, "capture");
    EXPECT(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) == cudaErrorIllegalState,
           "a capture begun twice");
    cudaGraph_t graph = NULL;
    EXPECT(cudaStreamEndCapture(s, &graph) == cudaSuccess && cudaGraphDestroy(graph) == cudaSuccess,
           "end capture");
    EXPECT(cudaGetLastError() == cudaErrorIllegalState, "capture.c's error not kept");
    EXPECT(cudaStreamDestroy(s) == cudaSuccess, "teardown");

    void *p = NULL;
    setenv("CB_STANDIN_NCCL_VERSION", "22809", 1);
    EXPECT(ncclMemAlloc(&p, (size_t)1 << 62) != ncclSuccess, "ncclMemAlloc of 2^62 bytes");
    EXPECT(cudaGetLastError() == cudaSuccess,
           "NCCL's failed cudaMalloc (its own runtime) set the program's error");
    return 0;
}
