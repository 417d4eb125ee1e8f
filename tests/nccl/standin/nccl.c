/*
 * Stand-in for the NCCL calls of the NCCL backend; see standin.h. A
 * communicator is a split of MPI_COMM_WORLD ordered by NCCL rank (one per
 * unique id: all communicators are made at once, as with --split); every
 * collective runs at once through MPI.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "standin.h"

static char last_error[256];
static struct ncclComm *live_comms;
static int comm_serials;

int standin_overlaps(const void *a, size_t a_bytes, const void *b, size_t b_bytes)
{
    const char *x = a, *y = b;
    return x < y + b_bytes && y < x + a_bytes;
}

/* NCCL forbids calls on one communicator from two threads at once. */
static void comm_enter(ncclComm_t comm, const char *call)
{
    if (atomic_fetch_add(&comm->in_call, 1) != 0)
        standin_violation("%s on a communicator that another thread is calling", call);
}

/* A non-blocking communicator is used only once NCCL said it is ready: real
 * NCCL fails the call (ncclCommEnsureReady) while its own thread may still
 * be working on the communicator. */
int standin_comm_unready(ncclComm_t comm, const char *call)
{
    if (!comm->stuck && comm->in_progress == 0)
        return 0;
    standin_violation("%s on a non-blocking communicator that is not ready", call);
    return 1;
}

static int comm_unready(ncclComm_t comm, const char *call)
{
    return standin_comm_unready(comm, call);
}

/* A communicator that has reported an error keeps it: NCCL's
 * ncclCommEnsureReady fails every later collective and send or receive on
 * it with that error, until it is aborted or destroyed. */
static ncclResult_t comm_failed(ncclComm_t comm, const char *call)
{
    if (comm->in_progress != 0 || comm->async_result == ncclSuccess)
        return ncclSuccess;
    standin_trace("%s refused: the communicator is in error %d", call, (int)comm->async_result);
    return comm->async_result;
}

/* NCCL's non-blocking calls hand their work to a thread of NCCL's and
 * return ncclInProgress; ncclCommGetAsyncError says when it is done. Here
 * the work is already done (res is its result) and is seen done at the
 * second or third query, in turn, so that a caller that polls once only,
 * or never, is caught. */
ncclResult_t standin_comm_started(ncclComm_t comm, ncclResult_t res, const char *call)
{
    if (!comm->nonblocking)
        return res;
    comm->async_result = res;
    comm->in_progress = 2 + (comm->calls_started++ & 1);
    standin_trace("ncclInProgress from %s", call);
    return ncclInProgress;
}

static void comm_leave(ncclComm_t comm)
{
    atomic_fetch_sub(&comm->in_call, 1);
}

void standin_graph_refs(const standin_op *ops, size_t n, int delta)
{
    for (size_t i = 0; i < n; i++)
        if (ops[i].comm != NULL)
            atomic_fetch_add(&ops[i].comm->graph_refs, delta);
}

static void register_buffer(struct ncclComm *c, const void *ptr)
{
    for (int i = 0; i < c->nregistered; i++)
        if (c->registered[i] == ptr)
            return;
    if (ptr != NULL && c->nregistered < STANDIN_MAX_REGISTERED)
        c->registered[c->nregistered++] = ptr;
}

void standin_register(const standin_op *op)
{
    if (op->comm == NULL)
        return;
    register_buffer(op->comm, op->send);
    register_buffer(op->comm, op->recv);
    for (size_t i = 0; i < op->np2p; i++)
        register_buffer(op->comm, op->p2p[i].buf);
}

int standin_registered(const void *ptr, size_t bytes)
{
    for (struct ncclComm *c = live_comms; c != NULL; c = c->next_live)
        for (int i = 0; i < c->nregistered; i++)
            if (standin_overlaps(ptr, bytes, c->registered[i], 1))
                return 1;
    return 0;
}

ncclResult_t standin_fail(ncclResult_t res, const char *what)
{
    snprintf(last_error, sizeof last_error, "NCCL stand-in: %s", what);
    return res;
}

static ncclResult_t fail(ncclResult_t res, const char *what)
{
    return standin_fail(res, what);
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

/* A communicator over mpi, which it then owns (freed here on failure).
 * MPI_COMM_NULL makes one stuck in NCCL's bootstrap: a peer never joined. */
static ncclResult_t comm_new(MPI_Comm mpi, int nonblocking, ncclComm_t *out)
{
    struct ncclComm *c = calloc(1, sizeof *c);
    if (c == NULL) {
        if (mpi != MPI_COMM_NULL)
            MPI_Comm_free(&mpi);
        return fail(ncclSystemError, "out of memory");
    }
    c->mpi = mpi;
    c->stuck = mpi == MPI_COMM_NULL;
    c->nonblocking = nonblocking;
    if (!c->stuck) {
        MPI_Comm_rank(mpi, &c->rank);
        MPI_Comm_size(mpi, &c->nranks);
    }
    c->serial = comm_serials++;
    atomic_init(&c->graph_refs, 0);
    atomic_init(&c->in_call, 0);
    c->next_live = live_comms;
    live_comms = c;
    standin_count(STANDIN_COMM, 1);
    *out = c;
    if (nonblocking && !c->stuck)
        return standin_comm_started(c, ncclSuccess, "ncclCommInitRank");
    return nonblocking ? ncclInProgress : ncclSuccess;
}

/* Whether any rank of comm that gives the same key failed before joining
 * the bootstrap (and whether this one does), gathered over comm: the
 * stand-in's picture of a bootstrap that waits for a peer that never comes. */
static int peer_never_joins(MPI_Comm comm, int key, int failing, int *stuck)
{
    int size = 0, mine[2] = {key, failing};
    MPI_Comm_size(comm, &size);
    int *all = malloc((size_t)size * sizeof mine);
    if (all == NULL)
        return -1;
    MPI_Allgather(mine, 2, MPI_INT, all, 2, MPI_INT, comm);
    *stuck = 0;
    for (int r = 0; r < size; r++)
        if (all[2 * r] == key && all[2 * r + 1])
            *stuck = 1;
    free(all);
    return 0;
}

/* Blocking: like NCCL's bootstrap, every rank takes part, and a rank that
 * fails before it leaves the others waiting in it. Non-blocking
 * (ncclCommInitRankConfig with blocking = 0): returns ncclInProgress, and
 * ncclCommGetAsyncError says ncclInProgress for ever when a peer failed
 * before joining. */
static ncclResult_t init_rank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank,
                              int nonblocking)
{
    /* NCCL binds a communicator to the calling thread's current device. */
    standin_trace("ncclCommInitRank nranks=%d rank=%d blocking=%d physical=%d", nranks, rank,
                  !nonblocking, standin_current_physical());
    *comm = NULL;
    if (strcmp(id.internal, "nccl stand-in") != 0)
        return fail(ncclInvalidArgument, "the unique id was not made by ncclGetUniqueId");
    int creator = 0, failing = standin_fault("CB_STANDIN_FAIL_COMMINIT"), stuck = 0;
    memcpy(&creator, id.internal + STANDIN_ID_CREATOR, sizeof creator);
    if (failing && !nonblocking)
        return fail(ncclSystemError, "injected ncclCommInitRank failure before the bootstrap "
                                     "(CB_STANDIN_FAIL_COMMINIT)");
    if (nonblocking && peer_never_joins(MPI_COMM_WORLD, creator, failing, &stuck) != 0)
        return fail(ncclSystemError, "out of memory");
    MPI_Comm mpi = MPI_COMM_NULL;
    if (MPI_Comm_split(MPI_COMM_WORLD, failing || stuck ? MPI_UNDEFINED : creator, rank, &mpi) !=
        MPI_SUCCESS)
        return fail(ncclSystemError, "MPI_Comm_split failed");
    if (failing)
        return fail(ncclSystemError, "injected ncclCommInitRank failure before the bootstrap "
                                     "(CB_STANDIN_FAIL_COMMINIT)");
    int size = nranks;
    if (mpi != MPI_COMM_NULL)
        MPI_Comm_size(mpi, &size);
    if (size != nranks) {
        MPI_Comm_free(&mpi);
        return fail(ncclInvalidArgument, "nranks differs from the number of ranks initialising");
    }
    /* Ordered by NCCL rank, so the MPI rank is the NCCL rank. */
    return comm_new(mpi, nonblocking, comm);
}

ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank)
{
    return init_rank(comm, nranks, id, rank, 0);
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank,
                                    ncclConfig_t *config)
{
    return init_rank(comm, nranks, id, rank, config != NULL && config->blocking == 0);
}

/* A split's or shrink's new communicator over mpi (none: MPI_COMM_NULL),
 * blocking or not, made on the parent comm's job, written into *newcomm
 * when it is done. */
static ncclResult_t child_started(ncclComm_t comm, MPI_Comm mpi, ncclComm_t *newcomm,
                                  const char *call, int nonblocking)
{
    ncclComm_t child = NULL;
    if (mpi != MPI_COMM_NULL && comm_new(mpi, 0, &child) != ncclSuccess)
        return fail(ncclSystemError, "out of memory");
    if (child != NULL) {
        child->nonblocking = nonblocking;
        comm->split_child = child;
        comm->split_out = newcomm;
    }
    return standin_comm_started(comm, ncclSuccess, call);
}

/* The new communicator inherits comm's blocking mode, or takes config's
 * (NCCL 2.28: an explicit config is parsed afresh, and its blocking field
 * left unset means blocking); failures behave as in init_rank. Whether the
 * split call itself returns ncclInProgress follows the PARENT's mode, as
 * NCCL runs it as a job of the parent's group. Non-blocking, as NCCL 2.28's
 * (init.cc, ncclCommInitChildComm): the split is a job on the PARENT, which
 * is in progress until it is done; *newcomm stays NULL until then (NCCL's
 * thread writes it at the end), also for NCCL_SPLIT_NOCOLOR, and for ever
 * when a peer never joined. */
ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm,
                           ncclConfig_t *config)
{
    int child_nonblocking = config != NULL ? config->blocking == 0 : comm != NULL && comm->nonblocking;
    standin_trace("ncclCommSplit color=%d key=%d blocking=%d", color, key, !child_nonblocking);
    *newcomm = NULL;
    if (comm == NULL || comm_unready(comm, "ncclCommSplit"))
        return fail(ncclInvalidArgument, "NULL or unready communicator");
    /* CB_STANDIN_FAIL_SPLIT_AFTER=N spares this process's first N splits. */
    static int splits_seen;
    int failing = standin_fault("CB_STANDIN_FAIL_SPLIT") &&
                  splits_seen++ >= standin_env_long("CB_STANDIN_FAIL_SPLIT_AFTER", 0),
        stuck = 0;
    if (failing && !comm->nonblocking)
        return fail(ncclSystemError, "injected ncclCommSplit failure before the bootstrap "
                                     "(CB_STANDIN_FAIL_SPLIT)");
    comm_enter(comm, "ncclCommSplit");
    int rc = comm->nonblocking ? peer_never_joins(comm->mpi, color, failing, &stuck) : 0;
    /* Every rank of comm takes part, those without a colour too. */
    MPI_Comm mpi = MPI_COMM_NULL;
    int no_color = color == NCCL_SPLIT_NOCOLOR;
    if (rc == 0 && MPI_Comm_split(comm->mpi, no_color || failing || stuck ? MPI_UNDEFINED : color,
                                  key, &mpi) != MPI_SUCCESS)
        rc = -1;
    comm_leave(comm);
    if (rc != 0)
        return fail(ncclSystemError, "MPI_Comm_split failed");
    if (failing)
        return fail(ncclSystemError, "injected ncclCommSplit failure before the bootstrap "
                                     "(CB_STANDIN_FAIL_SPLIT)");
    if (!comm->nonblocking) {
        if (no_color)
            return ncclSuccess;
        ncclResult_t made = comm_new(mpi, 0, newcomm);
        if (made == ncclSuccess)
            (*newcomm)->nonblocking = child_nonblocking;   /* ready: the call blocked */
        return made;
    }
    if (stuck) {
        comm->in_progress = -1;
        standin_trace("ncclInProgress from ncclCommSplit (a peer never joins)");
        return ncclInProgress;
    }
    return child_started(comm, no_color ? MPI_COMM_NULL : mpi, newcomm, "ncclCommSplit",
                         child_nonblocking);
}

/* Unlink and free a communicator that no other call holds. */
static void comm_release(ncclComm_t comm)
{
    struct ncclComm **link = &live_comms;
    while (*link != NULL && *link != comm)
        link = &(*link)->next_live;
    if (*link == comm)
        *link = comm->next_live;
    if (comm->mpi != MPI_COMM_NULL)
        MPI_Comm_free(&comm->mpi);
    standin_count(STANDIN_COMM, -1);
}

static ncclResult_t comm_free(ncclComm_t comm, const char *how)
{
    if (comm == NULL)
        return fail(ncclInvalidArgument, "NULL communicator");
    standin_trace("%s", how);
    comm_enter(comm, how);
    /* A split the caller never saw done: its communicator goes too. */
    if (comm->split_child != NULL) {
        comm_release(comm->split_child);
        free(comm->split_child);
        comm->split_child = NULL;
    }
    /* As NCCL: never returns while a graph that captured it lives. */
    int refs = atomic_load(&comm->graph_refs);
    if (refs > 0) {
        standin_violation("%s waits until the %d CUDA graphs that captured this communicator "
                          "are destroyed", how, refs);
        const struct timespec nap = {0, 10 * 1000 * 1000};
        while (atomic_load(&comm->graph_refs) > 0)
            nanosleep(&nap, NULL);
    }
    /* Its work still waiting for the open group's end never runs. */
    size_t dropped = standin_group_drop(comm, NULL);
    if (dropped > 0)
        standin_trace("%s dropped %zu operations waiting for ncclGroupEnd", how, dropped);
    comm_release(comm);
    /* Another thread still inside a call (flagged above) keeps the memory. */
    if (atomic_fetch_sub(&comm->in_call, 1) == 1)
        free(comm);
    return ncclSuccess;
}

/* comm's ranks but those listed, renumbered in order, as NCCL 2.27's shrink
 * (init.cc): a listed rank must not call, the list is not empty, and it is
 * a job on the parent as a split is. Only the ranks kept take part. */
ncclResult_t ncclCommShrink(ncclComm_t comm, int *excludeRanksList, int excludeRanksCount,
                            ncclComm_t *newcomm, ncclConfig_t *config, int shrinkFlags)
{
    standin_trace("ncclCommShrink excluded=%d flags=%d", excludeRanksCount, shrinkFlags);
    if (newcomm == NULL || comm == NULL || comm_unready(comm, "ncclCommShrink"))
        return fail(ncclInvalidArgument, "NULL newcomm, or NULL or unready communicator");
    *newcomm = NULL;
    if (excludeRanksList == NULL || excludeRanksCount <= 0)
        return fail(ncclInvalidArgument, "ncclCommShrink: no rank to exclude");
    for (int i = 0; i < excludeRanksCount; i++)
        if (excludeRanksList[i] == comm->rank)
            return fail(ncclInvalidArgument, "ncclCommShrink called by an excluded rank");
    comm_enter(comm, "ncclCommShrink");
    MPI_Group all = MPI_GROUP_NULL, kept = MPI_GROUP_NULL;
    MPI_Comm mpi = MPI_COMM_NULL;
    int rc = MPI_Comm_group(comm->mpi, &all) != MPI_SUCCESS ||
             MPI_Group_excl(all, excludeRanksCount, excludeRanksList, &kept) != MPI_SUCCESS ||
             MPI_Comm_create_group(comm->mpi, kept, 0x5a1, &mpi) != MPI_SUCCESS;
    if (kept != MPI_GROUP_NULL)
        MPI_Group_free(&kept);
    if (all != MPI_GROUP_NULL)
        MPI_Group_free(&all);
    comm_leave(comm);
    if (rc != 0 || mpi == MPI_COMM_NULL)
        return fail(ncclSystemError, "MPI_Comm_create_group failed");
    /* As a split: config's blocking mode where given, else the parent's. */
    int child_nonblocking = config != NULL ? config->blocking == 0 : comm->nonblocking;
    if (!comm->nonblocking) {
        ncclResult_t made = comm_new(mpi, 0, newcomm);
        if (made == ncclSuccess)
            (*newcomm)->nonblocking = child_nonblocking;
        return made;
    }
    return child_started(comm, mpi, newcomm, "ncclCommShrink", child_nonblocking);
}

/* NCCL's destroy first checks that the communicator is ready, and fails
 * (leaving it alive) when not: only abort ends one in progress. */
ncclResult_t ncclCommDestroy(ncclComm_t comm)
{
    if (comm != NULL && comm_unready(comm, "ncclCommDestroy"))
        return fail(ncclInvalidArgument, "ncclCommDestroy of a communicator in progress");
    standin_end_registrations(comm, 1);
    return comm_free(comm, "ncclCommDestroy");
}

ncclResult_t ncclCommAbort(ncclComm_t comm)
{
    /* NCCL 2.28 (init.cc) queues the abort's clean-up as a job of the open
     * group, which then never runs: the thread must end its group first. */
    if (comm != NULL && standin_group_depth() > 0)
        standin_violation("ncclCommAbort while the calling thread has a group open (depth %d)",
                          standin_group_depth());
    standin_end_registrations(comm, 0);
    return comm_free(comm, "ncclCommAbort");
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *async_error)
{
    if (comm == NULL)
        return fail(ncclInvalidArgument, "NULL communicator");
    comm_enter(comm, "ncclCommGetAsyncError");
    comm_leave(comm);
    /* A call that returned ncclInProgress is seen done after one or two
     * queries (standin_comm_started), never when a peer never joined. */
    *async_error = ncclInProgress;
    if (comm->stuck || comm->in_progress < 0)
        return ncclSuccess;
    if (comm->in_progress > 1) {
        comm->in_progress--;
        return ncclSuccess;
    }
    if (comm->in_progress == 1) {
        comm->in_progress = 0;
        if (comm->split_child != NULL)
            *comm->split_out = comm->split_child;
        comm->split_child = NULL;
        standin_window_done(comm);
    }
    *async_error = comm->async_result;
    if (*async_error != ncclSuccess)
        return ncclSuccess;
    if (comm->ran > 0 && standin_fault("CB_STANDIN_FAIL_ASYNC")) {
        fail(ncclRemoteError, "injected asynchronous error (CB_STANDIN_FAIL_ASYNC)");
        *async_error = comm->async_result = ncclRemoteError;
    }
    return ncclSuccess;
}

/* What standin_run traces. */
static const char *const op_kind_names[] = {
    [STANDIN_OP_ALLREDUCE] = "allreduce", [STANDIN_OP_ALLGATHER] = "allgather",
    [STANDIN_OP_REDUCESCATTER] = "reducescatter", [STANDIN_OP_BROADCAST] = "broadcast",
    [STANDIN_OP_REDUCE] = "reduce", [STANDIN_OP_P2P] = "p2p", [STANDIN_OP_COPY] = "copy",
    [STANDIN_OP_COPY2D] = "copy2d",
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
    if (op->kind != STANDIN_OP_ALLREDUCE || mpi_type_of(op->type) == MPI_DATATYPE_NULL ||
        mpi_op_of(op->op) == MPI_OP_NULL) {
        const char *what = "";
        ncclResult_t res = standin_run_collective(op, &what);
        if (res != ncclSuccess)
            return fail(res, what);
        if (op->comm != NULL && op_elements(op) > 1)
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
    if (op_elements(op) > 1)
        op->comm->ran++;
    standin_stream_busy(s, (double)standin_env_long("CB_STANDIN_OP_US", 0) * 1e-6);
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
    ncclResult_t res = comm_failed(call->comm, name);
    if (res != ncclSuccess)
        return fail(res, "the communicator is in an error state");
    res = standin_check_args(call, &what);
    if (res != ncclSuccess)
        return fail(res, what);
    standin_devmem_check_op(call, name);
    return ncclSuccess;
}

/* Every collective: checked and traced when called, then handed to
 * standin_launch, which defers it to the outermost ncclGroupEnd when a
 * group is open. Arguments NCCL checks at the call fail here. */
static ncclResult_t launch(cudaStream_t stream, const standin_op *call, const char *name)
{
    if (call->comm == NULL || comm_unready(call->comm, name))
        return fail(ncclInvalidArgument, "NULL or unready communicator");
    ncclResult_t res = enqueue_check(call, name);
    if (res != ncclSuccess)
        return res;
    standin_trace("%s count=%zu inplace=%d capturing=%d align=%u", name, call->count,
                  call->send == call->recv, stream != NULL && stream->capturing,
                  standin_alignment(call->send, call->recv));
    comm_enter(call->comm, name);
    res = standin_launch(stream, call);
    comm_leave(call->comm);
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
    if (comm == NULL || comm_unready(comm, is_send ? "ncclSend" : "ncclRecv"))
        return fail(ncclInvalidArgument, "NULL or unready communicator");
    standin_trace("%s count=%zu peer=%d align=%u", is_send ? "ncclSend" : "ncclRecv", count,
                  peer, standin_alignment(buf, NULL));
    if (is_send && count > 1 && standin_fault("CB_STANDIN_FAIL_SEND")) {
        standin_trace("ncclSend failed (CB_STANDIN_FAIL_SEND)");
        return fail(ncclInvalidArgument, "injected ncclSend failure (CB_STANDIN_FAIL_SEND)");
    }
    /* A group of its own, or its communicator's batch of the open group. */
    standin_op call = {.comm = comm, .kind = STANDIN_OP_P2P, .np2p = 1};
    call.p2p[0] = (standin_p2p){is_send, (void *)buf, count, datatype, peer};
    ncclResult_t res = enqueue_check(&call, is_send ? "ncclSend" : "ncclRecv");
    if (res != ncclSuccess)
        return res;
    comm_enter(comm, is_send ? "ncclSend" : "ncclRecv");
    res = standin_launch(stream, &call);
    comm_leave(comm);
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
    if (comm == NULL || comm_unready(comm, "ncclRedOpCreatePreMulSum") || scalar == NULL ||
        standin_type_size(datatype) == 0)
        return fail(ncclInvalidArgument, "bad communicator, scalar or datatype");
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
    return fail(ncclInvalidUsage, "too many reduction operators");
}

ncclResult_t ncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm)
{
    if (comm == NULL || comm_unready(comm, "ncclRedOpDestroy"))
        return fail(ncclInvalidArgument, "NULL or unready communicator");
    int k = (int)op - (int)ncclNumOps - comm->serial * STANDIN_MAX_CUSTOM_OPS;
    if ((int)op >= (int)ncclNumOps && (k < 0 || k >= STANDIN_MAX_CUSTOM_OPS))
        standin_violation("ncclRedOpDestroy of an operator made for another communicator");
    if (k < 0 || k >= STANDIN_MAX_CUSTOM_OPS || !comm->custom[k].live)
        return fail(ncclInvalidArgument, "not a live reduction operator of this communicator");
    comm->custom[k].live = 0;
    standin_trace("ncclRedOpDestroy");
    return ncclSuccess;
}
