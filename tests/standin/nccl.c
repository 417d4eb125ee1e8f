/*
 * Stand-in for the NCCL calls of the NCCL backend; see standin.h. A
 * communicator is a split of MPI_COMM_WORLD ordered by NCCL rank (one per
 * unique id: all communicators are made at once, as with --split); every
 * collective runs at once through MPI.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "standin.h"

static char last_error[256];
static int group_depth;

static ncclResult_t fail(ncclResult_t res, const char *what)
{
    snprintf(last_error, sizeof last_error, "NCCL stand-in: %s", what);
    return res;
}

static MPI_Datatype mpi_type_of(ncclDataType_t type)
{
    switch (type) {
    case ncclInt8: return MPI_INT8_T;
    case ncclUint8: return MPI_UINT8_T;
    case ncclInt32: return MPI_INT32_T;
    case ncclUint32: return MPI_UINT32_T;
    case ncclInt64: return MPI_INT64_T;
    case ncclUint64: return MPI_UINT64_T;
    case ncclFloat32: return MPI_FLOAT;
    case ncclFloat64: return MPI_DOUBLE;
    default: return MPI_DATATYPE_NULL;   /* half, bfloat16, fp8: not modelled */
    }
}

static MPI_Op mpi_op_of(ncclRedOp_t op)
{
    switch (op) {
    case ncclSum: return MPI_SUM;
    case ncclProd: return MPI_PROD;
    case ncclMin: return MPI_MIN;
    case ncclMax: return MPI_MAX;
    default: return MPI_OP_NULL;         /* avg and custom operations: not modelled */
    }
}

const char *ncclGetErrorString(ncclResult_t result)
{
    switch (result) {
    case ncclSuccess: return "no error";
    case ncclUnhandledCudaError: return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case ncclSystemError: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case ncclInternalError: return "internal error - please report this issue to the NCCL developers";
    case ncclInvalidArgument: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case ncclInvalidUsage: return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    case ncclRemoteError: return "remote process exited or there was a network error";
    case ncclInProgress: return "NCCL operation in progress";
    default: return "unknown result code";
    }
}

const char *ncclGetLastError(ncclComm_t comm)
{
    (void)comm;
    return last_error;
}

ncclResult_t ncclGetVersion(int *version)
{
    *version = (int)standin_env_long("CB_STANDIN_NCCL_VERSION", NCCL_VERSION_CODE);
    return ncclSuccess;
}

/* Where in the unique id the world rank of its creator is kept. */
#define STANDIN_ID_CREATOR 64

ncclResult_t ncclGetUniqueId(ncclUniqueId *id)
{
    memset(id, 0, sizeof *id);
    snprintf(id->internal, sizeof id->internal, "nccl stand-in");
    /* Which ranks initialise together: those given the id of this rank
     * (--split makes several communicators at once). */
    int world_rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    memcpy(id->internal + STANDIN_ID_CREATOR, &world_rank, sizeof world_rank);
    return ncclSuccess;
}

/* A communicator over mpi, which it then owns (freed here on failure). */
static ncclResult_t comm_new(MPI_Comm mpi, ncclComm_t *out)
{
    struct ncclComm *c = calloc(1, sizeof *c);
    if (c == NULL) {
        MPI_Comm_free(&mpi);
        return fail(ncclSystemError, "out of memory");
    }
    c->mpi = mpi;
    MPI_Comm_rank(mpi, &c->rank);
    MPI_Comm_size(mpi, &c->nranks);
    standin_count(STANDIN_COMM, 1);
    *out = c;
    return ncclSuccess;
}

ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank)
{
    /* NCCL binds a communicator to the calling thread's current device. */
    standin_trace("ncclCommInitRank nranks=%d rank=%d physical=%d", nranks, rank,
                  standin_current_physical());
    if (strcmp(id.internal, "nccl stand-in") != 0)
        return fail(ncclInvalidArgument, "the unique id was not made by ncclGetUniqueId");
    /* Like NCCL's bootstrap, every rank takes part before any can fail. */
    MPI_Comm mpi;
    int creator = 0;
    memcpy(&creator, id.internal + STANDIN_ID_CREATOR, sizeof creator);
    if (MPI_Comm_split(MPI_COMM_WORLD, creator, rank, &mpi) != MPI_SUCCESS)
        return fail(ncclSystemError, "MPI_Comm_split failed");
    int size = 0;
    MPI_Comm_size(mpi, &size);
    if (size != nranks) {
        MPI_Comm_free(&mpi);
        return fail(ncclInvalidArgument, "nranks differs from the number of ranks initialising");
    }
    if (standin_fault("CB_STANDIN_FAIL_COMMINIT")) {
        MPI_Comm_free(&mpi);
        return fail(ncclSystemError, "injected ncclCommInitRank failure (CB_STANDIN_FAIL_COMMINIT)");
    }
    /* Ordered by NCCL rank, so the MPI rank is the NCCL rank. */
    return comm_new(mpi, comm);
}

ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm,
                           ncclConfig_t *config)
{
    (void)config;
    standin_trace("ncclCommSplit color=%d key=%d", color, key);
    *newcomm = NULL;
    if (comm == NULL)
        return fail(ncclInvalidArgument, "NULL communicator");
    /* Every rank of comm takes part, those without a colour too. */
    MPI_Comm mpi = MPI_COMM_NULL;
    if (MPI_Comm_split(comm->mpi, color == NCCL_SPLIT_NOCOLOR ? MPI_UNDEFINED : color, key,
                       &mpi) != MPI_SUCCESS)
        return fail(ncclSystemError, "MPI_Comm_split failed");
    if (standin_fault("CB_STANDIN_FAIL_SPLIT")) {
        if (mpi != MPI_COMM_NULL)
            MPI_Comm_free(&mpi);
        return fail(ncclSystemError, "injected ncclCommSplit failure (CB_STANDIN_FAIL_SPLIT)");
    }
    if (mpi == MPI_COMM_NULL)
        return ncclSuccess;
    return comm_new(mpi, newcomm);
}

static ncclResult_t comm_free(ncclComm_t comm, const char *how)
{
    if (comm == NULL)
        return fail(ncclInvalidArgument, "NULL communicator");
    standin_trace("%s", how);
    MPI_Comm_free(&comm->mpi);
    free(comm);
    standin_count(STANDIN_COMM, -1);
    return ncclSuccess;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm)
{
    return comm_free(comm, "ncclCommDestroy");
}

ncclResult_t ncclCommAbort(ncclComm_t comm)
{
    return comm_free(comm, "ncclCommAbort");
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *async_error)
{
    if (comm == NULL)
        return fail(ncclInvalidArgument, "NULL communicator");
    *async_error = ncclSuccess;
    if (comm->ran > 0 && standin_fault("CB_STANDIN_FAIL_ASYNC")) {
        fail(ncclRemoteError, "injected asynchronous error (CB_STANDIN_FAIL_ASYNC)");
        *async_error = ncclRemoteError;
    }
    return ncclSuccess;
}

ncclResult_t ncclGroupStart(void)
{
    standin_trace("ncclGroupStart");
    group_depth++;
    return ncclSuccess;
}

ncclResult_t ncclGroupEnd(void)
{
    standin_trace("ncclGroupEnd");
    if (group_depth == 0)
        return fail(ncclInvalidUsage, "ncclGroupEnd without ncclGroupStart");
    group_depth--;
    /* The outermost end runs the group's sends and receives together. */
    if (group_depth == 0 && standin_p2p_flush() != ncclSuccess)
        return fail(ncclSystemError, "the group's sends and receives failed");
    return ncclSuccess;
}

/* Operations inside a group run at once too: every rank issues the same
 * sequence, so running them in order through MPI gives the same results. */
static const char *const op_kind_names[] = {
    [STANDIN_OP_ALLREDUCE] = "allreduce", [STANDIN_OP_ALLGATHER] = "allgather",
    [STANDIN_OP_REDUCESCATTER] = "reducescatter", [STANDIN_OP_BROADCAST] = "broadcast",
    [STANDIN_OP_REDUCE] = "reduce", [STANDIN_OP_P2P] = "p2p", [STANDIN_OP_COPY] = "copy",
    [STANDIN_OP_COPY2D] = "copy2d",
};

ncclResult_t standin_run(cudaStream_t s, const standin_op *op, int replayed)
{
    standin_trace("run %s count=%zu inplace=%d replayed=%d", op_kind_names[op->kind], op->count,
                  op->send == op->recv, replayed);
    if (op->kind != STANDIN_OP_ALLREDUCE || mpi_type_of(op->type) == MPI_DATATYPE_NULL ||
        mpi_op_of(op->op) == MPI_OP_NULL) {
        const char *what = "";
        ncclResult_t res = standin_run_collective(op, &what);
        if (res != ncclSuccess)
            return fail(res, what);
        if (op->comm != NULL)
            op->comm->ran++;
        if (op->kind != STANDIN_OP_COPY && op->kind != STANDIN_OP_COPY2D)
            standin_stream_busy(s, (double)standin_env_long("CB_STANDIN_OP_US", 0) * 1e-6);
        return ncclSuccess;
    }
    MPI_Datatype type = mpi_type_of(op->type);
    MPI_Op mop = mpi_op_of(op->op);
    if (type == MPI_DATATYPE_NULL || mop == MPI_OP_NULL)
        return fail(ncclInvalidArgument, "datatype or reduction not modelled by the stand-in");
    if (op->count > INT_MAX)
        return fail(ncclInvalidArgument, "more than INT_MAX elements");
    const void *send = op->send == op->recv ? MPI_IN_PLACE : op->send;
    if (MPI_Allreduce(send, op->recv, (int)op->count, type, mop, op->comm->mpi) != MPI_SUCCESS)
        return fail(ncclSystemError, "MPI_Allreduce failed");
    op->comm->ran++;
    standin_stream_busy(s, (double)standin_env_long("CB_STANDIN_OP_US", 0) * 1e-6);
    return ncclSuccess;
}

ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count,
                           ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                           cudaStream_t stream)
{
    if (comm == NULL)
        return fail(ncclInvalidArgument, "NULL communicator");
    standin_trace("ncclAllReduce count=%zu inplace=%d capturing=%d", count, sendbuff == recvbuff,
                  stream != NULL && stream->capturing);
    standin_op call = {.send = sendbuff, .recv = recvbuff, .count = count,
                          .type = datatype, .op = op, .comm = comm};
    return standin_launch(stream, &call);
}

/* The other collectives: launched (or recorded) like the all-reduce. */
static ncclResult_t launch(cudaStream_t stream, const standin_op *call, const char *name)
{
    if (call->comm == NULL)
        return fail(ncclInvalidArgument, "NULL communicator");
    if (standin_type_size(call->type) == 0)
        return fail(ncclInvalidArgument, "datatype not modelled by the stand-in");
    standin_trace("%s count=%zu inplace=%d capturing=%d", name, call->count,
                  call->send == call->recv, stream != NULL && stream->capturing);
    return standin_launch(stream, call);
}

ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount,
                           ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream)
{
    standin_op call = {.send = sendbuff, .recv = recvbuff, .count = sendcount,
                          .type = datatype, .op = ncclSum, .comm = comm};
    call.kind = STANDIN_OP_ALLGATHER;
    return launch(stream, &call, "ncclAllGather");
}

ncclResult_t ncclReduceScatter(const void *sendbuff, void *recvbuff, size_t recvcount,
                               ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                               cudaStream_t stream)
{
    standin_op call = {.send = sendbuff, .recv = recvbuff, .count = recvcount,
                          .type = datatype, .op = op, .comm = comm};
    call.kind = STANDIN_OP_REDUCESCATTER;
    return launch(stream, &call, "ncclReduceScatter");
}

ncclResult_t ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count,
                           ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream)
{
    standin_op call = {.send = sendbuff, .recv = recvbuff, .count = count,
                          .type = datatype, .op = ncclSum, .comm = comm};
    call.kind = STANDIN_OP_BROADCAST;
    call.root = root;
    return launch(stream, &call, "ncclBroadcast");
}

ncclResult_t ncclReduce(const void *sendbuff, void *recvbuff, size_t count,
                        ncclDataType_t datatype, ncclRedOp_t op, int root, ncclComm_t comm,
                        cudaStream_t stream)
{
    standin_op call = {.send = sendbuff, .recv = recvbuff, .count = count,
                          .type = datatype, .op = op, .comm = comm};
    call.kind = STANDIN_OP_REDUCE;
    call.root = root;
    return launch(stream, &call, "ncclReduce");
}

static ncclResult_t p2p(int is_send, const void *buf, size_t count, ncclDataType_t datatype,
                        int peer, ncclComm_t comm, cudaStream_t stream)
{
    if (comm == NULL)
        return fail(ncclInvalidArgument, "NULL communicator");
    if (standin_type_size(datatype) == 0)
        return fail(ncclInvalidArgument, "datatype not modelled by the stand-in");
    standin_trace("%s count=%zu peer=%d", is_send ? "ncclSend" : "ncclRecv", count, peer);
    standin_p2p entry = {is_send, (void *)buf, count, datatype, peer};
    ncclResult_t res = standin_p2p_add(&entry, comm, stream, group_depth > 0);
    return res == ncclSuccess ? res : fail(res, "send or receive refused (bad peer, or a group "
                                                "too large or mixing streams)");
}

ncclResult_t ncclSend(const void *sendbuff, size_t count, ncclDataType_t datatype, int peer,
                      ncclComm_t comm, cudaStream_t stream)
{
    return p2p(1, sendbuff, count, datatype, peer, comm, stream);
}

ncclResult_t ncclRecv(void *recvbuff, size_t count, ncclDataType_t datatype, int peer,
                      ncclComm_t comm, cudaStream_t stream)
{
    return p2p(0, recvbuff, count, datatype, peer, comm, stream);
}

ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t *op, void *scalar, ncclDataType_t datatype,
                                      ncclScalarResidence_t residence, ncclComm_t comm)
{
    (void)residence;   /* host or "device" memory: both are host memory here */
    if (comm == NULL || scalar == NULL || standin_type_size(datatype) == 0)
        return fail(ncclInvalidArgument, "bad communicator, scalar or datatype");
    for (int k = 0; k < STANDIN_MAX_CUSTOM_OPS; k++) {
        if (comm->custom[k].live)
            continue;
        comm->custom[k].live = 1;
        comm->custom[k].type = datatype;
        comm->custom[k].scalar = standin_load(datatype, scalar, 0);
        *op = (ncclRedOp_t)((int)ncclNumOps + k);
        standin_trace("ncclRedOpCreatePreMulSum scalar=%g", comm->custom[k].scalar);
        return ncclSuccess;
    }
    return fail(ncclInvalidUsage, "too many reduction operators");
}

ncclResult_t ncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm)
{
    int k = (int)op - (int)ncclNumOps;
    if (comm == NULL || k < 0 || k >= STANDIN_MAX_CUSTOM_OPS || !comm->custom[k].live)
        return fail(ncclInvalidArgument, "not a live reduction operator of this communicator");
    comm->custom[k].live = 0;
    standin_trace("ncclRedOpDestroy");
    return ncclSuccess;
}
