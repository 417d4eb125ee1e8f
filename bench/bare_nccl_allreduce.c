/* The bare loop the tool's NCCL timing is compared with: ncclAllReduce of
 * float sum on one stream, back to back between two CUDA events, time /
 * count, for each size from 8 B to 4 MiB by doubling, one GPU per MPI rank
 * (the rank's index on its node). Rank 0 prints "bytes,time_us" lines.
 * Needs a GPU: bench/run.sh runs it only when asked (BENCH_NCCL=1).
 * Usage: bare_nccl_allreduce ITERATIONS [WARMUP] [MIN_BYTES] [MAX_BYTES] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "backends/nccl_api.h"
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

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    bench_loop_args args;
    if (bench_loop_args_parse(argc, argv, "bare_nccl_allreduce ITERATIONS [WARMUP] [MIN_BYTES] [MAX_BYTES]", &args) != 0)
        MPI_Abort(MPI_COMM_WORLD, 2);
    int iters = (int)args.iters, warmup = (int)args.warmup;
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
    CHECK_NCCL(ncclCommInitRank(&comm, nranks, id, rank));
    cudaStream_t stream;
    cudaEvent_t start, stop;
    void *send, *recv;
    CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CHECK_CUDA(cudaEventCreate(&start));
    CHECK_CUDA(cudaEventCreate(&stop));
    CHECK_CUDA(cudaMalloc(&send, max_bytes));
    CHECK_CUDA(cudaMalloc(&recv, max_bytes));
    CHECK_CUDA(cudaMemset(send, 0, max_bytes));
    if (rank == 0)
        printf("bytes,time_us\n");
    /* One untimed pass over the sizes first, as in bare_allreduce.c. */
    for (size_t bytes = min_bytes; bytes <= max_bytes; bytes *= 2) {
        size_t count = bytes / sizeof(float);
        for (int i = 0; i < warmup; i++)
            CHECK_NCCL(ncclAllReduce(send, recv, count, ncclFloat, ncclSum, comm, stream));
    }
    CHECK_CUDA(cudaStreamSynchronize(stream));
    for (size_t bytes = min_bytes; bytes <= max_bytes; bytes *= 2) {
        size_t count = bytes / sizeof(float);
        for (int i = 0; i < warmup; i++)
            CHECK_NCCL(ncclAllReduce(send, recv, count, ncclFloat, ncclSum, comm, stream));
        CHECK_CUDA(cudaStreamSynchronize(stream));
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_CUDA(cudaEventRecord(start, stream));
        for (int i = 0; i < iters; i++)
            CHECK_NCCL(ncclAllReduce(send, recv, count, ncclFloat, ncclSum, comm, stream));
        CHECK_CUDA(cudaEventRecord(stop, stream));
        CHECK_CUDA(cudaEventSynchronize(stop));
        float ms = 0;
        CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
        if (rank == 0)
            printf("%zu,%.3f\n", bytes, 1e3 * (double)ms / iters);
    }
    CHECK_CUDA(cudaFree(send));
    CHECK_CUDA(cudaFree(recv));
    CHECK_CUDA(cudaEventDestroy(start));
    CHECK_CUDA(cudaEventDestroy(stop));
    CHECK_CUDA(cudaStreamDestroy(stream));
    ncclCommDestroy(comm);
    MPI_Finalize();
    return 0;
}
