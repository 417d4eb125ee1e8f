/*
 * Misuses of the stand-in's registration calls, one per argument, for
 * tests/nccl/nccl_standin_register.sh (and a native collective, for an old
 * CB_STANDIN_NCCL_VERSION): each must leave a VIOLATION line in
 * the trace (CB_STANDIN_TRACE), as the stand-in's strictness promises.
 * Run on one rank. Exit status 0 once the misuse was made, 2 for a bad
 * argument; the test reads the trace.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "standin.h"

static ncclComm_t one_rank_comm(void)
{
    ncclUniqueId id;
    ncclComm_t comm = NULL;
    if (ncclGetUniqueId(&id) != ncclSuccess || ncclCommInitRank(&comm, 1, id, 0) != ncclSuccess)
        return NULL;
    return comm;
}

static int misuse(const char *what, ncclComm_t comm)
{
    void *buf = NULL, *handle = NULL;
    ncclWindow_t win = NULL;
    if (strcmp(what, "deregister-twice") == 0) {
        cudaMalloc(&buf, 4096);
        ncclCommRegister(comm, buf, 4096, &handle);
        ncclCommDeregister(comm, handle);
        ncclCommDeregister(comm, handle);
        cudaFree(buf);
    } else if (strcmp(what, "free-registered") == 0) {
        cudaMalloc(&buf, 4096);
        ncclCommRegister(comm, buf, 4096, &handle);
        cudaFree(buf);
        ncclCommDeregister(comm, handle);
    } else if (strcmp(what, "free-window") == 0) {
        ncclMemAlloc(&buf, 4096);
        ncclCommWindowRegister(comm, buf, 4096, &win, NCCL_WIN_COLL_SYMMETRIC);
        ncclMemFree(buf);
        ncclCommWindowDeregister(comm, win);
    } else if (strcmp(what, "window-on-cudamalloc") == 0) {
        cudaMalloc(&buf, 4096);
        ncclCommWindowRegister(comm, buf, 4096, &win, NCCL_WIN_COLL_SYMMETRIC);
        ncclCommWindowDeregister(comm, win);
        cudaFree(buf);
    } else if (strcmp(what, "window-deregister-twice") == 0) {
        ncclMemAlloc(&buf, 4096);
        ncclCommWindowRegister(comm, buf, 4096, &win, NCCL_WIN_COLL_SYMMETRIC);
        ncclCommWindowDeregister(comm, win);
        ncclCommWindowDeregister(comm, win);
        ncclMemFree(buf);
    } else if (strcmp(what, "cudafree-memalloc") == 0) {
        ncclMemAlloc(&buf, 4096);
        cudaFree(buf);
    } else if (strcmp(what, "destroy-registered") == 0) {
        cudaMalloc(&buf, 4096);
        ncclCommRegister(comm, buf, 4096, &handle);
        ncclCommDestroy(comm);
        cudaFree(buf);
        return 0;
    } else if (strcmp(what, "native") == 0) {
        /* Under CB_STANDIN_NCCL_VERSION below 2.28: a symbol the library lacks. */
        cudaMalloc(&buf, 64);
        ncclAlltoAll(buf, (char *)buf + 32, 1, ncclInt8, comm, NULL);
        cudaFree(buf);
    } else if (strcmp(what, "none") != 0) {
        return 2;
    }
    ncclCommDestroy(comm);
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    ncclComm_t comm = one_rank_comm();
    int rc = argc == 2 && comm != NULL ? misuse(argv[1], comm) : 2;
    if (rc == 2)
        fprintf(stderr, "usage: misuse_register deregister-twice|free-registered|free-window|"
                        "window-on-cudamalloc|window-deregister-twice|cudafree-memalloc|"
                        "destroy-registered|native|none\n");
    MPI_Finalize();
    return rc;
}
