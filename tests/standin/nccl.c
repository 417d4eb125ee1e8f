/*
 * Stand-in for the NCCL calls of the NCCL backend; see standin.h. A
 * communicator is a split of MPI_COMM_WORLD ordered by NCCL rank; every
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
    *version = NCCL_VERSION_CODE;
    return ncclSuccess;
}

ncclResult_t ncclGetUniqueId(ncclUniqueId *id)
{
    memset(id, 0, sizeof *id);
    snprintf(id->internal, sizeof id->internal, "nccl stand-in");
    return ncclSuccess;
}

ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank)
{
    standin_trace("ncclCommInitRank nranks=%d rank=%d", nranks, rank);
    if (strcmp(id.internal, "nccl stand-in") != 0)
        return fail(ncclInvalidArgument, "the unique id was not made by ncclGetUniqueId");
    /* Like NCCL's bootstrap, every rank takes part before any can fail. */
    MPI_Comm mpi;
    if (MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &mpi) != MPI_SUCCESS)
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
    struct ncclComm *c = calloc(1, sizeof *c);
    if (c == NULL) {
        MPI_Comm_free(&mpi);
        return fail(ncclSystemError, "out of memory");
    }
    c->mpi = mpi;
    c->rank = rank;
    c->nranks = nranks;
    standin_count(STANDIN_COMM, 1);
    *comm = c;
    return ncclSuccess;
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
    return ncclSuccess;
}

/* Operations inside a group run at once too: every rank issues the same
 * sequence, so running them in order through MPI gives the same results. */
ncclResult_t standin_run(cudaStream_t s, const standin_op *op, int replayed)
{
    standin_trace("run allreduce count=%zu inplace=%d replayed=%d", op->count,
                  op->send == op->recv, replayed);
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
    standin_op call = {sendbuff, recvbuff, count, datatype, op, comm};
    return standin_launch(stream, &call);
}
