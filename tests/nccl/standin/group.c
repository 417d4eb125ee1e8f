/*
 * NCCL's groups in the stand-in (see standin.h): between ncclGroupStart and
 * the outermost ncclGroupEnd every NCCL operation is only recorded; all of
 * them reach their streams at that end, after whatever the caller launched
 * on the streams meanwhile (copies run at once), as NCCL enqueues its
 * kernels only when the group ends. A call outside any group is a group of
 * one. The state is per thread, as NCCL's.
 */
#include <stdlib.h>
#include <string.h>

#include "standin.h"

/* One operation waiting for the group's end. */
typedef struct queued_op {
    cudaStream_t stream;
    standin_op op;
} queued_op;

/* A growable list of queued operations. */
typedef struct op_list {
    queued_op *items;
    size_t n;
    size_t room;
} op_list;

static _Thread_local int group_depth;
/* A call of the open group failed: NCCL 2.28 (ncclGroupErrCheck, group.cc)
 * keeps the first error, and the outermost ncclGroupEnd cleans the group up
 * without launching any of it and returns that error. */
static _Thread_local ncclResult_t group_error;
/* The group's collectives in call order, and its sends and receives, one
 * batch per communicator: at the end the collectives run first, then each
 * batch as one operation, as NCCL plans a group. */
static _Thread_local op_list collectives;
static _Thread_local op_list p2p_batches;
/* NCCL's ncclGroupBlocking (group.cc): -1 until a communicator joins the
 * open group or an async job is queued in it, then that one's mode. */
static _Thread_local int group_blocking = -1;
/* NCCL's ncclAsyncJobs: creations, splits and shrinks called inside the
 * open group, in call order, for its outermost end (standin_job). */
static _Thread_local standin_job *held_jobs;

static queued_op *append(op_list *list)
{
    if (list->n == list->room) {
        size_t room = list->room ? 2 * list->room : 1;   /* often one p2p batch */
        queued_op *grown = realloc(list->items, room * sizeof *grown);
        if (grown == NULL)
            return NULL;
        list->items = grown;
        list->room = room;
    }
    return &list->items[list->n++];
}

static void list_clear(op_list *list)
{
    free(list->items);
    memset(list, 0, sizeof *list);
}

/* The send or receive p (an op of one entry) joins its communicator's
 * batch; one stream per communicator and group, here. */
static ncclResult_t add_p2p(cudaStream_t stream, const standin_op *p)
{
    queued_op *batch = NULL;
    for (size_t i = 0; i < p2p_batches.n && batch == NULL; i++)
        if (p2p_batches.items[i].op.comm == p->comm)
            batch = &p2p_batches.items[i];
    if (batch != NULL && batch->stream != stream)
        return standin_fail(ncclInvalidUsage, "a group's sends and receives on one "
                                              "communicator use two streams");
    if (batch != NULL && batch->op.np2p + p->np2p > STANDIN_MAX_P2P)
        return standin_fail(ncclInvalidUsage, "more sends and receives in one group than "
                                              "the stand-in holds (STANDIN_MAX_P2P)");
    if (batch == NULL) {
        batch = append(&p2p_batches);
        if (batch == NULL)
            return standin_fail(ncclSystemError, "out of memory");
        memset(batch, 0, sizeof *batch);
        batch->stream = stream;
        batch->op.kind = STANDIN_OP_P2P;
        batch->op.comm = p->comm;
    }
    for (size_t k = 0; k < p->np2p; k++)
        batch->op.p2p[batch->op.np2p++] = p->p2p[k];
    return ncclSuccess;
}

/* The communicator of the group's i-th operation, collectives first. */
static ncclComm_t queued_comm(size_t i)
{
    return i < collectives.n ? collectives.items[i].op.comm
                             : p2p_batches.items[i - collectives.n].op.comm;
}

/* NCCL 2.23 on (group.cc, ncclGroupEndInternal): a non-blocking group is
 * launched by a thread of NCCL's; ncclGroupEnd returns ncclInProgress and
 * every communicator of the group is in progress until
 * ncclCommGetAsyncError says it is done, with the group's result. Before
 * 2.23 only a group that connects a send or receive (connect.c). The group's
 * mode, that of the last communicator to join, decides for all of its
 * members (standin_group_launch_started). */
static ncclResult_t group_started(ncclResult_t res, int needs_connect, int group_nonblocking)
{
    ncclResult_t out = res;
    for (size_t i = 0, n = collectives.n + p2p_batches.n; i < n; i++) {
        ncclComm_t comm = queued_comm(i);
        size_t first = 0;
        while (queued_comm(first) != comm)
            first++;
        if (first == i) {   /* each communicator once */
            ncclResult_t mine = standin_group_launch_started(comm, group_nonblocking, res,
                                                             needs_connect);
            if (mine == ncclInProgress)
                out = mine;
        }
    }
    return out;
}

/* The group handed to NCCL's launch thread (threads.c): its operations in
 * launch order, every member in progress and linked to the thread. */
static ncclResult_t run_on_thread(int group_nonblocking, int needs_connect)
{
    standin_thread_job *job = standin_thread_new();
    int failed = job == NULL;
    for (size_t i = 0; i < collectives.n && !failed; i++)
        failed = standin_thread_add(job, collectives.items[i].stream, &collectives.items[i].op, 0);
    for (size_t i = 0; i < p2p_batches.n && !failed; i++)
        failed = standin_thread_add(job, p2p_batches.items[i].stream, &p2p_batches.items[i].op, 1);
    if (failed) {
        standin_thread_discard(job);
        return standin_fail(ncclSystemError, "out of memory");
    }
    ncclResult_t res = group_started(ncclSuccess, needs_connect, group_nonblocking);
    for (size_t i = 0, n = collectives.n + p2p_batches.n; i < n; i++) {
        ncclComm_t comm = queued_comm(i);
        if (comm->launch_job != job)
            standin_thread_link(comm, job);
    }
    standin_thread_start(job, "ncclGroupEnd");
    return res;
}

/* Launch everything queued on its stream (recorded when the stream is
 * capturing by then) and forget it, on NCCL's thread where NCCL starts
 * one. The first failure is returned; the rest of the group is dropped,
 * as NCCL abandons a group whose launch failed. */
static ncclResult_t run_queued(int group_nonblocking, int needs_connect)
{
    ncclResult_t res = ncclSuccess;
    for (size_t i = 0; i < p2p_batches.n; i++)
        needs_connect |= standin_p2p_connect(&p2p_batches.items[i].op);
    for (size_t i = 0; i < collectives.n; i++)
        standin_connect_used(&collectives.items[i].op);
    if (collectives.n + p2p_batches.n > 0 &&
        standin_launch_threaded(group_nonblocking, needs_connect)) {
        res = run_on_thread(group_nonblocking, needs_connect);
        list_clear(&collectives);
        list_clear(&p2p_batches);
        return res;
    }
    for (size_t i = 0; i < collectives.n && res == ncclSuccess; i++)
        res = standin_stream_submit(collectives.items[i].stream, &collectives.items[i].op);
    for (size_t i = 0; i < p2p_batches.n && res == ncclSuccess; i++) {
        const queued_op *b = &p2p_batches.items[i];
        standin_trace("p2p group sends+receives=%zu capturing=%d", b->op.np2p,
                      standin_stream_capturing(b->stream));
        res = standin_stream_submit(b->stream, &b->op);
    }
    res = group_started(res, needs_connect, group_nonblocking);
    list_clear(&collectives);
    list_clear(&p2p_batches);
    return res;
}

/* A call outside a group on NCCL's launch thread: a group of one. */
static ncclResult_t launch_alone_on_thread(cudaStream_t stream, const standin_op *op,
                                           int needs_connect)
{
    standin_thread_job *job = standin_thread_new();
    if (job == NULL || standin_thread_add(job, stream, op, 0) != 0) {
        standin_thread_discard(job);
        return standin_fail(ncclSystemError, "out of memory");
    }
    ncclResult_t res = standin_launch_started(op->comm, ncclSuccess, "a call outside a group",
                                              needs_connect);
    standin_thread_link(op->comm, job);
    standin_thread_start(job, "a call outside a group");
    return res;
}

ncclResult_t standin_launch(cudaStream_t stream, const standin_op *op)
{
    /* A group of one: straight to the stream, without the queue's copy. */
    if (group_depth == 0) {
        if (op->kind == STANDIN_OP_P2P && !op->native)
            standin_trace("p2p group sends+receives=%zu capturing=%d", op->np2p,
                          standin_stream_capturing(stream));
        /* NCCL groups it implicitly: ncclInProgress when non-blocking and
         * NCCL's thread launches it (by version, connect.c). */
        int needs_connect = standin_p2p_connect(op);
        standin_connect_used(op);
        if (standin_launch_threaded(op->comm->nonblocking, needs_connect))
            return launch_alone_on_thread(stream, op, needs_connect);
        return standin_launch_started(op->comm, standin_stream_submit(stream, op),
                                      "a call outside a group", needs_connect);
    }
    ncclResult_t res = ncclSuccess;
    /* A communicator's first operation of the group joins it, and its mode
     * becomes the group's (include/group.h, ncclGroupCommJoin), unchecked. */
    int joined = 0;
    for (size_t i = 0, n = collectives.n + p2p_batches.n; i < n && !joined; i++)
        joined = queued_comm(i) == op->comm;
    if (!joined)
        group_blocking = !op->comm->nonblocking;
    if (op->kind == STANDIN_OP_P2P) {
        res = add_p2p(stream, op);
    } else {
        queued_op *q = append(&collectives);
        if (q == NULL)
            return standin_fail(ncclSystemError, "out of memory");
        q->stream = stream;
        q->op = *op;
    }
    return res;
}

void standin_group_hold(standin_job *job)
{
    standin_job **end = &held_jobs;
    while (*end != NULL)
        end = &(*end)->next;
    job->next = NULL;
    *end = job;
}

int standin_group_holds(const struct ncclComm *comm)
{
    for (const standin_job *job = held_jobs; job != NULL; job = job->next)
        if (job->comm == comm)
            return 1;
    return 0;
}

/* The held jobs, in order, as NCCL's groupLaunch runs its async jobs
 * before it launches the group's collectives (group.cc, asyncJobLaunch,
 * 2.18.1 to 2.30.7); after a failure (or with failed, the group's error)
 * the rest are dropped, as groupCleanup does. *any: there were some. */
static ncclResult_t run_held(ncclResult_t failed, int *any)
{
    ncclResult_t res = failed, out = ncclSuccess;
    *any = held_jobs != NULL;
    while (held_jobs != NULL) {
        standin_job *job = held_jobs;
        held_jobs = job->next;
        if (res != ncclSuccess) {
            job->drop(job, res);
            continue;
        }
        res = job->run(job);
        if (res == ncclInProgress)
            out = res, res = ncclSuccess;
    }
    return res != ncclSuccess ? res : out;
}

ncclResult_t standin_group_job(int blocking, int destroying, const char *call)
{
    if (group_depth == 0)
        return ncclSuccess;
    blocking = destroying || blocking;
    if (!destroying && group_blocking != -1 && group_blocking != blocking) {
        standin_trace("%s refused: blocking and non-blocking communicators in one group", call);
        return standin_group_check(standin_fail(ncclInvalidArgument,
                                                "Blocking and nonblocking communicators are not "
                                                "allowed in the same group"));
    }
    group_blocking = blocking;
    return ncclSuccess;
}

void standin_group_leave_open(void)
{
    group_depth++;
}

int standin_group_depth(void)
{
    return group_depth;
}

ncclResult_t standin_group_check(ncclResult_t res)
{
    if (res != ncclSuccess && group_depth > 0 && group_error == ncclSuccess)
        group_error = res;
    return res;
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
        return standin_fail(ncclInvalidUsage, "ncclGroupEnd without ncclGroupStart");
    if (--group_depth > 0)
        return ncclSuccess;
    int group_nonblocking = group_blocking == 0, any_jobs = 0;
    group_blocking = -1;
    if (group_error != ncclSuccess) {
        ncclResult_t res = group_error;
        group_error = ncclSuccess;
        run_held(res, &any_jobs);
        standin_trace("ncclGroupEnd dropped the group after a failed call (%zu operations)",
                      collectives.n + p2p_batches.n);
        list_clear(&collectives);
        list_clear(&p2p_batches);
        return res;
    }
    ncclResult_t jobs = run_held(ncclSuccess, &any_jobs);
    if (jobs != ncclSuccess && jobs != ncclInProgress) {
        list_clear(&collectives);
        list_clear(&p2p_batches);
        return jobs;
    }
    /* A failed operation has named itself through standin_fail. With async
     * jobs a non-blocking group goes to NCCL's thread in every version. */
    ncclResult_t res = run_queued(group_nonblocking, any_jobs);
    return res == ncclSuccess ? jobs : res;
}

/* Whether [lo, lo + bytes) meets what op reads or writes. */
static int op_touches(const standin_op *op, const char *lo, size_t bytes)
{
    if (op->kind == STANDIN_OP_P2P) {
        for (size_t k = 0; k < op->np2p; k++)
            if (standin_overlaps(lo, bytes, op->p2p[k].buf,
                                 op->p2p[k].count * standin_type_size(op->p2p[k].type)))
                return 1;
        return 0;
    }
    size_t in, out;
    standin_op_bytes(op, &in, &out);
    return standin_overlaps(lo, bytes, op->send, in) || standin_overlaps(lo, bytes, op->recv, out);
}

int standin_group_uses(const void *ptr, size_t bytes)
{
    for (size_t i = 0; i < collectives.n; i++)
        if (op_touches(&collectives.items[i].op, ptr, bytes))
            return 1;
    for (size_t i = 0; i < p2p_batches.n; i++)
        if (op_touches(&p2p_batches.items[i].op, ptr, bytes))
            return 1;
    return 0;
}

/* Drop the entries of list on comm or on stream (NULL: none). */
static size_t drop_from(op_list *list, ncclComm_t comm, cudaStream_t stream)
{
    size_t kept = 0, n = list->n;
    for (size_t i = 0; i < n; i++) {
        const queued_op *q = &list->items[i];
        if ((comm == NULL || q->op.comm != comm) && (stream == NULL || q->stream != stream))
            list->items[kept++] = *q;
    }
    list->n = kept;
    if (kept == 0)
        list_clear(list);
    return n - kept;
}

size_t standin_group_drop(ncclComm_t comm, cudaStream_t stream)
{
    return drop_from(&collectives, comm, stream) + drop_from(&p2p_batches, comm, stream);
}
