/*
 * Stand-in for NCCL's collective, send and receive calls and its custom
 * reductions (see standin.h): each call is checked as NCCL's
 * ncclEnqueueCheck does, then run over the communicator's connections at
 * once or kept for its group's end. The communicators are nccl.c's.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "standin.h"

/* What standin_run traces. */
static const char *const op_kind_names[] = {
    [STANDIN_OP_ALLREDUCE] = "allreduce", [STANDIN_OP_ALLGATHER] = "allgather",
    [STANDIN_OP_REDUCESCATTER] = "reducescatter", [STANDIN_OP_BROADCAST] = "broadcast",
    [STANDIN_OP_REDUCE] = "reduce", [STANDIN_OP_P2P] = "p2p", [STANDIN_OP_COPY] = "copy",
    [STANDIN_OP_COPY2D] = "copy2d", [STANDIN_OP_MEMSET] = "memset", [STANDIN_OP_EVENT] = "event",
    [STANDIN_OP_KERNEL] = "kernel",
};

static const char *op_kind_name(enum standin_op_kind kind)
{
    size_t k = (size_t)kind, n = sizeof op_kind_names / sizeof op_kind_names[0];
    return k < n && op_kind_names[k] != NULL ? op_kind_names[k] : "operation";
}

/* The most elements any part of op moves. */
static size_t op_elements(const standin_op *op)
{
    size_t most = op->count;
    for (size_t i = 0; i < op->np2p; i++)
        if (op->p2p[i].count > most)
            most = op->p2p[i].count;
    return most;
}

ncclResult_t standin_run(cudaStream_t s, const standin_op *op, int replayed)
{
    standin_trace("run %s count=%zu inplace=%d replayed=%d", op_kind_name(op->kind), op->count,
                  op->send == op->recv, replayed);
    if (op->kind == STANDIN_OP_EVENT) {   /* an event record node: the stream's clock */
        standin_event_replayed(op->event, s);
        return ncclSuccess;
    }
    const char *what = "";
    ncclResult_t res = standin_run_collective(op, &what);
    if (res != ncclSuccess)
        return standin_fail(res, what);
    /* NCCL's work only (copies, memsets and kernels take no modelled time). */
    if (op->comm != NULL) {
        if (op_elements(op) > 1)
            op->comm->ran++;
        standin_stream_busy(s, (double)standin_env_long("CB_STANDIN_OP_US", 0) * 1e-6);
    }
    return ncclSuccess;
}

/* The alignment of the lower buffer, up to cudaMalloc's 256 bytes (0: none
 * given): in place, the other lies inside it. Tests see -u's offsets by it. */
static unsigned standin_alignment(const void *a, const void *b)
{
    uintptr_t low = (uintptr_t)a;
    if (low == 0 || (b != NULL && (uintptr_t)b < low))
        low = (uintptr_t)b;
    uintptr_t bits = low | 256u;
    return low == 0 ? 0u : (unsigned)(bits & (~bits + 1u));
}

/* What NCCL checks when a collective or a send or receive is called
 * (ncclEnqueueCheck): the communicator not in error, the arguments; and
 * here also the buffers inside their allocations. */
static ncclResult_t enqueue_check(const standin_op *call, const char *name)
{
    const char *what = "";
    ncclResult_t res = standin_comm_failed(call->comm, name);
    if (res != ncclSuccess)
        return standin_fail(res, "the communicator is in an error state");
    res = standin_check_args(call, &what);
    if (res != ncclSuccess)
        return standin_fail(res, what);
    standin_devmem_check_op(call, name);
    return ncclSuccess;
}

/* Every collective: checked and traced when called, then handed to
 * standin_launch, which defers it to the outermost ncclGroupEnd when a
 * group is open. Arguments NCCL checks at the call fail here. */
static ncclResult_t launch(cudaStream_t stream, const standin_op *call, const char *name)
{
    if (call->comm == NULL || standin_comm_unready(call->comm, name))
        return standin_fail(ncclInvalidArgument, "NULL or unready communicator");
    ncclResult_t res = enqueue_check(call, name);
    if (res != ncclSuccess)
        return res;
    standin_trace("%s count=%zu inplace=%d capturing=%d offset=%zu align=%u", name, call->count,
                  call->send == call->recv, stream != NULL && stream->capturing,
                  standin_devmem_offset(call->recv), standin_alignment(call->send, call->recv));
    standin_comm_enter(call->comm, name);
    res = standin_launch(stream, call);
    standin_comm_leave(call->comm);
    return res;
}

ncclResult_t standin_launch_named(cudaStream_t stream, const standin_op *call, const char *name)
{
    return standin_group_check(launch(stream, call, name));
}

ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count,
                           ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                           cudaStream_t stream)
{
    standin_op call = {.send = sendbuff, .recv = recvbuff, .count = count,
                          .type = datatype, .op = op, .comm = comm};
    return standin_group_check(launch(stream, &call, "ncclAllReduce"));
}

ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount,
                           ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream)
{
    standin_op call = {.send = sendbuff, .recv = recvbuff, .count = sendcount,
                          .type = datatype, .op = ncclSum, .comm = comm};
    call.kind = STANDIN_OP_ALLGATHER;
    return standin_group_check(launch(stream, &call, "ncclAllGather"));
}

ncclResult_t ncclReduceScatter(const void *sendbuff, void *recvbuff, size_t recvcount,
                               ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                               cudaStream_t stream)
{
    standin_op call = {.send = sendbuff, .recv = recvbuff, .count = recvcount,
                          .type = datatype, .op = op, .comm = comm};
    call.kind = STANDIN_OP_REDUCESCATTER;
    return standin_group_check(launch(stream, &call, "ncclReduceScatter"));
}

ncclResult_t ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count,
                           ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream)
{
    standin_op call = {.send = sendbuff, .recv = recvbuff, .count = count,
                          .type = datatype, .op = ncclSum, .comm = comm};
    call.kind = STANDIN_OP_BROADCAST;
    call.root = root;
    return standin_group_check(launch(stream, &call, "ncclBroadcast"));
}

ncclResult_t ncclReduce(const void *sendbuff, void *recvbuff, size_t count,
                        ncclDataType_t datatype, ncclRedOp_t op, int root, ncclComm_t comm,
                        cudaStream_t stream)
{
    standin_op call = {.send = sendbuff, .recv = recvbuff, .count = count,
                          .type = datatype, .op = op, .comm = comm};
    call.kind = STANDIN_OP_REDUCE;
    call.root = root;
    return standin_group_check(launch(stream, &call, "ncclReduce"));
}

static ncclResult_t p2p(int is_send, const void *buf, size_t count, ncclDataType_t datatype,
                        int peer, ncclComm_t comm, cudaStream_t stream)
{
    if (comm == NULL || standin_comm_unready(comm, is_send ? "ncclSend" : "ncclRecv"))
        return standin_fail(ncclInvalidArgument, "NULL or unready communicator");
    standin_trace("%s count=%zu peer=%d align=%u", is_send ? "ncclSend" : "ncclRecv", count,
                  peer, standin_alignment(buf, NULL));
    if (is_send && count > 1 && standin_fault("CB_STANDIN_FAIL_SEND")) {
        standin_trace("ncclSend failed (CB_STANDIN_FAIL_SEND)");
        return standin_fail(ncclInvalidArgument, "injected ncclSend failure (CB_STANDIN_FAIL_SEND)");
    }
    /* A group of its own, or its communicator's batch of the open group. */
    standin_op call = {.comm = comm, .kind = STANDIN_OP_P2P, .np2p = 1};
    call.p2p[0] = (standin_p2p){is_send, (void *)buf, count, datatype, peer};
    ncclResult_t res = enqueue_check(&call, is_send ? "ncclSend" : "ncclRecv");
    if (res != ncclSuccess)
        return res;
    standin_comm_enter(comm, is_send ? "ncclSend" : "ncclRecv");
    res = standin_launch(stream, &call);
    standin_comm_leave(comm);
    return res;
}

ncclResult_t ncclSend(const void *sendbuff, size_t count, ncclDataType_t datatype, int peer,
                      ncclComm_t comm, cudaStream_t stream)
{
    return standin_group_check(p2p(1, sendbuff, count, datatype, peer, comm, stream));
}

ncclResult_t ncclRecv(void *recvbuff, size_t count, ncclDataType_t datatype, int peer,
                      ncclComm_t comm, cudaStream_t stream)
{
    return standin_group_check(p2p(0, recvbuff, count, datatype, peer, comm, stream));
}

ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t *op, void *scalar, ncclDataType_t datatype,
                                      ncclScalarResidence_t residence, ncclComm_t comm)
{
    (void)residence;   /* host or "device" memory: both are host memory here */
    if (comm == NULL || standin_comm_unready(comm, "ncclRedOpCreatePreMulSum") || scalar == NULL ||
        standin_type_size(datatype) == 0)
        return standin_fail(ncclInvalidArgument, "bad communicator, scalar or datatype");
    for (int k = 0; k < STANDIN_MAX_CUSTOM_OPS; k++) {
        if (comm->custom[k].live)
            continue;
        comm->custom[k].live = 1;
        comm->custom[k].type = datatype;
        comm->custom[k].scalar = standin_load(datatype, scalar, 0);
        *op = (ncclRedOp_t)((int)ncclNumOps + comm->serial * STANDIN_MAX_CUSTOM_OPS + k);
        standin_trace("ncclRedOpCreatePreMulSum scalar=%g", comm->custom[k].scalar);
        return ncclSuccess;
    }
    return standin_fail(ncclInvalidUsage, "too many reduction operators");
}

/* NCCL checks no readiness here (enqueue.cc, ncclRedOpDestroy, 2.18.1 to
 * 2.30.7): flagged as a call NCCL's guide forbids (nccl_register.c), then
 * done as NCCL does. */
ncclResult_t ncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm)
{
    if (comm == NULL)
        return standin_fail(ncclInvalidArgument, "NULL communicator");
    (void)standin_comm_unready(comm, "ncclRedOpDestroy");
    int k = (int)op - (int)ncclNumOps - comm->serial * STANDIN_MAX_CUSTOM_OPS;
    if ((int)op >= (int)ncclNumOps && (k < 0 || k >= STANDIN_MAX_CUSTOM_OPS))
        standin_violation("ncclRedOpDestroy of an operator made for another communicator");
    if (k < 0 || k >= STANDIN_MAX_CUSTOM_OPS || !comm->custom[k].live)
        return standin_fail(ncclInvalidArgument, "not a live reduction operator of this communicator");
    comm->custom[k].live = 0;
    standin_trace("ncclRedOpDestroy");
    return ncclSuccess;
}
