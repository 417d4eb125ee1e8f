/*
 * The stand-in's ncclAlltoAll, ncclGather and ncclScatter (NCCL 2.28). Each
 * becomes one launch of sends and receives between the ranks (run through
 * MPI as a group of them is), traced under its own name so that a test can
 * tell it from a group of ncclSend and ncclRecv. They follow the version the
 * stand-in reports (CB_STANDIN_NCCL_VERSION): below 2.28 a real libnccl has
 * no such symbols, so a call there is a VIOLATION and fails, as a program
 * that called a missing symbol would.
 */
#include <stdlib.h>

#include "standin.h"

#define STANDIN_FIRST_NATIVE NCCL_VERSION(2, 28, 0)

/* 0 when the reported library has name; else 1, after a VIOLATION. */
static int absent(const char *name)
{
    long version = standin_env_long("CB_STANDIN_NCCL_VERSION", NCCL_VERSION_CODE);
    if (version >= STANDIN_FIRST_NATIVE)
        return 0;
    standin_violation("%s called, but the library reports version %ld, which has no %s "
                      "(NCCL 2.28 added it): the program must check ncclGetVersion",
                      name, version, name);
    return 1;
}

static void add(standin_op *op, int is_send, const void *buf, size_t count, int peer)
{
    op->p2p[op->np2p++] = (standin_p2p){is_send, (void *)buf, count, op->type, peer};
}

static int bad_call(ncclComm_t comm, ncclDataType_t type, int root)
{
    return comm == NULL || standin_type_size(type) == 0 ||
           (root != -1 && (root < 0 || root >= comm->nranks)) ||
           2 * (size_t)comm->nranks > STANDIN_MAX_P2P;
}

ncclResult_t ncclAlltoAll(const void *sendbuff, void *recvbuff, size_t count,
                          ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream)
{
    if (absent("ncclAlltoAll"))
        return ncclInvalidUsage;
    if (bad_call(comm, datatype, -1))
        return ncclInvalidArgument;
    size_t n = (size_t)comm->nranks, block = count * standin_type_size(datatype);
    const char *s = sendbuff;
    char *r = recvbuff;
    /* nccl.h defines no in-place all-to-all: the sends would read blocks
     * that the receives overwrite. */
    if (count > 0 && s < r + n * block && r < s + n * block)
        standin_violation("ncclAlltoAll with overlapping send and receive buffers (NCCL "
                          "defines no in-place all-to-all)");
    standin_op *op = calloc(1, sizeof *op);
    if (op == NULL)
        return ncclSystemError;
    *op = (standin_op){.send = sendbuff, .recv = recvbuff, .count = count, .type = datatype,
                       .comm = comm, .kind = STANDIN_OP_P2P, .native = 1};
    for (size_t peer = 0; peer < n; peer++) {
        add(op, 1, s + peer * block, count, (int)peer);
        add(op, 0, r + peer * block, count, (int)peer);
    }
    ncclResult_t res = standin_launch_named(stream, op, "ncclAlltoAll");
    free(op);
    return res;
}

/* In place (sendbuff == recvbuff + root * count at the root) the root's
 * block is already where it belongs. */
ncclResult_t ncclGather(const void *sendbuff, void *recvbuff, size_t count,
                        ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream)
{
    if (absent("ncclGather"))
        return ncclInvalidUsage;
    if (bad_call(comm, datatype, root))
        return ncclInvalidArgument;
    size_t n = (size_t)comm->nranks, block = count * standin_type_size(datatype);
    standin_op *op = calloc(1, sizeof *op);
    if (op == NULL)
        return ncclSystemError;
    *op = (standin_op){.send = sendbuff, .recv = recvbuff, .count = count, .type = datatype,
                       .comm = comm, .kind = STANDIN_OP_P2P, .native = 1, .root = root};
    if (comm->rank != root) {
        add(op, 1, sendbuff, count, root);
    } else {
        char *r = recvbuff;
        for (size_t peer = 0; peer < n; peer++) {
            if ((int)peer == root && r + peer * block == (const char *)sendbuff)
                continue;
            if ((int)peer == root)
                add(op, 1, sendbuff, count, root);
            add(op, 0, r + peer * block, count, (int)peer);
        }
    }
    ncclResult_t res = standin_launch_named(stream, op, "ncclGather");
    free(op);
    return res;
}

/* In place (recvbuff == sendbuff + root * count at the root) the root keeps
 * its block where it is. */
ncclResult_t ncclScatter(const void *sendbuff, void *recvbuff, size_t count,
                         ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream)
{
    if (absent("ncclScatter"))
        return ncclInvalidUsage;
    if (bad_call(comm, datatype, root))
        return ncclInvalidArgument;
    size_t n = (size_t)comm->nranks, block = count * standin_type_size(datatype);
    standin_op *op = calloc(1, sizeof *op);
    if (op == NULL)
        return ncclSystemError;
    *op = (standin_op){.send = sendbuff, .recv = recvbuff, .count = count, .type = datatype,
                       .comm = comm, .kind = STANDIN_OP_P2P, .native = 1, .root = root};
    if (comm->rank != root) {
        add(op, 0, recvbuff, count, root);
    } else {
        const char *s = sendbuff;
        for (size_t peer = 0; peer < n; peer++) {
            if ((int)peer == root && s + peer * block == (const char *)recvbuff)
                continue;
            add(op, 1, s + peer * block, count, (int)peer);
            if ((int)peer == root)
                add(op, 0, recvbuff, count, root);
        }
    }
    ncclResult_t res = standin_launch_named(stream, op, "ncclScatter");
    free(op);
    return res;
}
