/* The bare loop the tool's NCCL timing is compared with, set up as
 * nccl-tests sets up: a blocking communicator and buffers from ncclMemAlloc
 * (cudaMalloc before NCCL 2.19). ncclAllReduce of float sum on one stream,
 * back to back between two CUDA events, time / count, for each size from
 * 8 B to 4 MiB by doubling, one GPU per MPI rank (the rank's index on its
 * node). Rank 0 prints "bytes,time_us" lines. BENCH_AGG=M groups M
 * all-reduces per iteration (the tool's -m M); BENCH_GRAPH=G captures the
 * iterations in a CUDA graph, launched once untimed and G times timed (the
 * tool's -G G). Needs a GPU: bench/run.sh runs it only when asked
 * (BENCH_NCCL=1); bench/calls.sh runs it on the CPU stand-in.
 * Usage: bare_nccl_allreduce ITERATIONS [WARMUP] [MIN_BYTES] [MAX_BYTES] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "backends/nccl/api.h"
#include "bench_args.h"

#define CHECK_CUDA(call)                                                               \
    do {                                                                               \
        cudaError_t e_ = (call);                                                       \
        if (e_ != cudaSuccess) {                                                       \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,              \
                    cudaGetErrorString(e_));                                           \
            MPI_Abort(MPI_COMM_WORLD, 1);                                              \
        }                                                                              \
    } while (0)
#define CHECK_NCCL(call)                                                               \
    do {                                                                               \
        ncclResult_t r_ = (call);                                                      \
        if (r_ != ncclSuccess) {                                                       \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,              \
                    ncclGetErrorString(r_));                                           \
            MPI_Abort(MPI_COMM_WORLD, 1);                                              \
        }                                                                              \
    } while (0)

/* A small count from the environment, or dflt; -1 when malformed. */
static long env_count(const char *name, long dflt, long max)
{
    const char *text = getenv(name);
    if (text == NULL || text[0] == '\0')
        return dflt;
    char *end;
    long v = strtol(text, &end, 10);
    return *end == '\0' && v >= 0 && v <= max ? v : -1;
}

/* One iteration: agg all-reduces, grouped when more than one. */
static void iteration(const void *send, void *recv, size_t count, int agg, ncclComm_t comm,
                      cudaStream_t stream)
{
    if (agg > 1)
        CHECK_NCCL(ncclGroupStart());
    for (int k = 0; k < agg; k++)
        CHECK_NCCL(ncclAllReduce(send, recv, count, ncclFloat, ncclSum, comm, stream));
    if (agg > 1)
        CHECK_NCCL(ncclGroupEnd());
}

static void *device_alloc(size_t bytes)
{
    void *p = NULL;
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 19, 0)
    CHECK_NCCL(ncclMemAlloc(&p, bytes));
#else
    CHECK_CUDA(cudaMalloc(&p, bytes));
#endif
    return p;
}

static void device_free(void *p)
{
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 19, 0)
    CHECK_NCCL(ncclMemFree(p));
#else
    CHECK_CUDA(cudaFree(p));
#endif
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    bench_loop_args args;
    if (bench_loop_args_parse(argc, argv, "bare_nccl_allreduce ITERATIONS [WARMUP] [MIN_BYTES] [MAX_BYTES]", &args) != 0)
        MPI_Abort(MPI_COMM_WORLD, 2);
    int iters = (int)args.iters, warmup = (int)args.warmup;
    long agg = env_count("BENCH_AGG", 1, 1024), graph = env_count("BENCH_GRAPH", 0, 1 << 20);
    if (agg < 1 || graph < 0) {
        fprintf(stderr, "bare_nccl_allreduce: BENCH_AGG must be 1 to 1024, BENCH_GRAPH 0 to %d\n",
                1 << 20);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    size_t min_bytes = (size_t)args.min_bytes, max_bytes = (size_t)args.max_bytes;
    int rank, nranks, local;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local);
    MPI_Comm_free(&node);
    int devices = 0;
    CHECK_CUDA(cudaGetDeviceCount(&devices));
    CHECK_CUDA(cudaSetDevice(local % (devices > 0 ? devices : 1)));

    ncclUniqueId id;
    if (rank == 0)
        CHECK_NCCL(ncclGetUniqueId(&id));
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    ncclComm_t comm;
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 14, 0)
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 1;   /* launches return when enqueued, as nccl-tests' */
    CHECK_NCCL(ncclCommInitRankConfig(&comm, nranks, id, rank, &config));
#else
    CHECK_NCCL(ncclCommInitRank(&comm, nranks, id, rank));
#endif
    cudaStream_t stream;
    cudaEvent_t start, stop;
    void *send, *recv;
    CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CHECK_CUDA(cudaEventCreate(&start));
    CHECK_CUDA(cudaEventCreate(&stop));
    send = device_alloc(max_bytes);
    recv = device_alloc(max_bytes);
    CHECK_CUDA(cudaMemset(send, 0, max_bytes));
    if (rank == 0)
        printf("bytes,time_us\n");
    /* One untimed pass over the sizes first, as in bare_allreduce.c. */
    for (size_t bytes = min_bytes; bytes <= max_bytes; bytes *= 2) {
        size_t count = bytes / sizeof(float);
        for (int i = 0; i < warmup; i++)
            iteration(send, recv, count, (int)agg, comm, stream);
    }
    CHECK_CUDA(cudaStreamSynchronize(stream));
    for (size_t bytes = min_bytes; bytes <= max_bytes; bytes *= 2) {
        size_t count = bytes / sizeof(float);
        for (int i = 0; i < warmup; i++)
            iteration(send, recv, count, (int)agg, comm, stream);
        CHECK_CUDA(cudaStreamSynchronize(stream));
        cudaGraph_t g = NULL;
        cudaGraphExec_t exec = NULL;
        if (graph > 0) {
            CHECK_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
            for (int i = 0; i < iters; i++)
                iteration(send, recv, count, (int)agg, comm, stream);
            CHECK_CUDA(cudaStreamEndCapture(stream, &g));
            CHECK_CUDA(cudaGraphInstantiateWithFlags(&exec, g, 0));
            CHECK_CUDA(cudaGraphLaunch(exec, stream));   /* its set-up, untimed */
            CHECK_CUDA(cudaStreamSynchronize(stream));
        }
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_CUDA(cudaEventRecord(start, stream));
        for (long i = 0; i < (graph > 0 ? graph : iters); i++) {
            if (graph > 0)
                CHECK_CUDA(cudaGraphLaunch(exec, stream));
            else
                iteration(send, recv, count, (int)agg, comm, stream);
        }
        CHECK_CUDA(cudaEventRecord(stop, stream));
        CHECK_CUDA(cudaEventSynchronize(stop));
        float ms = 0;
        CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
        if (graph > 0) {
            CHECK_CUDA(cudaGraphExecDestroy(exec));
            CHECK_CUDA(cudaGraphDestroy(g));
        }
        double ops = (double)iters * (double)agg * (double)(graph > 0 ? graph : 1);
        if (rank == 0)
            printf("%zu,%.3f\n", bytes, 1e3 * (double)ms / ops);
    }
    device_free(send);
    device_free(recv);
    CHECK_CUDA(cudaEventDestroy(start));
    CHECK_CUDA(cudaEventDestroy(stop));
    CHECK_CUDA(cudaStreamDestroy(stream));
    ncclCommDestroy(comm);
    MPI_Finalize();
    return 0;
}
