/*
 * The stand-in without MPI (tests/nccl/nccl_standin_nompi.sh): this program
 * links no MPI, gets a unique id, forks NRANKS - 1 more processes (the
 * parent, which serves the bootstrap root, is rank 0; each child gets RANK
 * as torchrun would set it), and each rank makes
 * a communicator from the id, all-reduces and all-gathers, splits it in
 * two by parity and all-reduces there, then destroys both. Exits 0 when
 * every rank saw the right results, 1 otherwise, naming what was wrong.
 * Usage: standin-nompi NRANKS (2 to 8).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "standin.h"

static int check(int ok, int rank, const char *what)
{
    if (!ok)
        fprintf(stderr, "standin-nompi: rank %d: %s\n", rank, what);
    return ok ? 0 : 1;
}

static int run_rank(ncclUniqueId id, int nranks, int rank)
{
    ncclComm_t comm = NULL, half = NULL;
    int *buf = NULL, bad = 0;
    if (check(cudaMalloc((void **)&buf, (size_t)(nranks + 1) * sizeof *buf) == cudaSuccess, rank,
              "cudaMalloc failed") ||
        check(ncclCommInitRank(&comm, nranks, id, rank) == ncclSuccess, rank,
              "ncclCommInitRank failed"))
        return 1;
    buf[0] = rank + 1;
    bad |= check(ncclAllReduce(buf, buf, 1, ncclInt32, ncclSum, comm, NULL) == ncclSuccess &&
                     cudaStreamSynchronize(NULL) == cudaSuccess &&
                     buf[0] == nranks * (nranks + 1) / 2,
                 rank, "the all-reduce's sum is wrong");
    buf[nranks] = 10 * rank;
    bad |= check(ncclAllGather(buf + nranks, buf, 1, ncclInt32, comm, NULL) == ncclSuccess &&
                     cudaStreamSynchronize(NULL) == cudaSuccess,
                 rank, "the all-gather failed");
    for (int r = 0; r < nranks; r++)
        bad |= check(buf[r] == 10 * r, rank, "the all-gather put a wrong value");
    /* Keys reversed: the child's rank 0 is the parent's highest of the colour. */
    bad |= check(ncclCommSplit(comm, rank % 2, -rank, &half, NULL) == ncclSuccess && half != NULL,
                 rank, "ncclCommSplit failed");
    if (half != NULL) {
        int size = half->nranks, me = half->rank, expected = 0;   /* the stand-in's own */
        for (int r = rank % 2; r < nranks; r += 2)
            expected += r;
        buf[0] = rank;
        bad |= check(size == (nranks - rank % 2 + 1) / 2 && me == (size - 1) - rank / 2, rank,
                     "the split's size or rank is wrong");
        bad |= check(ncclAllReduce(buf, buf, 1, ncclInt32, ncclSum, half, NULL) == ncclSuccess &&
                         cudaStreamSynchronize(NULL) == cudaSuccess && buf[0] == expected,
                     rank, "the split's all-reduce is wrong");
        ncclCommDestroy(half);
    }
    ncclCommDestroy(comm);
    cudaFree(buf);
    return bad;
}

int main(int argc, char **argv)
{
    char *end = NULL;
    long nranks = argc == 2 ? strtol(argv[1], &end, 10) : 0;
    if (argc != 2 || *end != '\0' || nranks < 2 || nranks > 8) {
        fprintf(stderr, "usage: standin-nompi NRANKS (2 to 8), not '%s'\n",
                argc > 1 ? argv[1] : "");
        return 2;
    }
    ncclUniqueId id;
    if (ncclGetUniqueId(&id) != ncclSuccess) {
        fprintf(stderr, "standin-nompi: ncclGetUniqueId failed\n");
        return 1;
    }
    pid_t children[8];
    int forked = 0, bad = 0;
    for (int r = 1; r < nranks; r++) {
        pid_t pid = fork();
        if (pid == 0) {
            char text[16];
            snprintf(text, sizeof text, "%d", r);
            setenv("RANK", text, 1);   /* as torchrun gives it: the stand-in's faults read it */
            _exit(run_rank(id, (int)nranks, r));
        }
        if (pid < 0) {
            fprintf(stderr, "standin-nompi: fork failed\n");
            bad = 1;   /* rank 0 would wait for ever in the bootstrap */
            break;
        }
        children[forked++] = pid;
    }
    if (!bad)
        bad = run_rank(id, (int)nranks, 0);
    else
        for (int i = 0; i < forked; i++)
            kill(children[i], SIGTERM);   /* stuck in the bootstrap without rank 0 */
    for (int i = 0; i < forked; i++) {
        int status = 0;
        if (waitpid(children[i], &status, 0) != children[i] || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 0)
            bad = 1;
    }
    return bad;
}
