/* The bare loop the tool's MPI timing is compared with: MPI_Allreduce of
 * float sum, back to back between two MPI_Wtime calls, time / count, for
 * each size from 8 B to 4 MiB by doubling (after warm-up iterations and a
 * barrier, as the tool does). Rank 0 prints "bytes,time_us" lines.
 * Usage: bare_allreduce ITERATIONS [WARMUP] [MIN_BYTES] [MAX_BYTES] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_args.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    bench_loop_args args;
    if (bench_loop_args_parse(argc, argv, "bare_allreduce ITERATIONS [WARMUP] [MIN_BYTES] [MAX_BYTES]", &args) != 0)
        MPI_Abort(MPI_COMM_WORLD, 2);
    int iters = (int)args.iters, warmup = (int)args.warmup;
    size_t min_bytes = (size_t)args.min_bytes, max_bytes = (size_t)args.max_bytes;
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    float *send = malloc(max_bytes), *recv = malloc(max_bytes);
    if (send == NULL || recv == NULL)
        MPI_Abort(MPI_COMM_WORLD, 1);
    memset(send, 0, max_bytes);
    memset(recv, 0, max_bytes);
    if (rank == 0)
        printf("bytes,time_us\n");
    /* One untimed pass over the sizes first: the library's first calls set
     * up connections and buffers, which the tool has done before its first
     * timed size (in its own set-up); without it the first size is slower
     * here than in the tool for reasons that are not the tool's. */
    for (size_t bytes = min_bytes; bytes <= max_bytes; bytes *= 2) {
        int count = (int)(bytes / sizeof(float));
        for (int i = 0; i < warmup; i++)
            MPI_Allreduce(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    }
    for (size_t bytes = min_bytes; bytes <= max_bytes; bytes *= 2) {
        int count = (int)(bytes / sizeof(float));
        for (int i = 0; i < warmup; i++)
            MPI_Allreduce(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++)
            MPI_Allreduce(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        double t1 = MPI_Wtime();
        if (rank == 0)
            printf("%zu,%.3f\n", bytes, 1e6 * (t1 - t0) / iters);
    }
    free(send);
    free(recv);
    MPI_Finalize();
    return 0;
}
