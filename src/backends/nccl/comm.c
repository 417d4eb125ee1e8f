/*
 * The NCCL backend's communicators (see ops.c): creation agreed across
 * ranks, split, waiting that watches NCCL's asynchronous error state,
 * abort and teardown; and the error checks every file of the backend uses.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nccl_backend.h"
#include "host/sysinfo.h"

/* "cudaFoo(a, b)" and "dir/comm.c" as "cudaFoo" and "comm.c" in messages. */
static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

int cb_nccl_cuda_check(cb_backend *b, cudaError_t err, const char *call, const char *file,
                       int line)
{
    if (err == cudaSuccess)
        return 0;
    return cb_backend_fail(b, "%.*s failed (%s:%d): %s", (int)strcspn(call, "("), call,
                           base_name(file), line, cudaGetErrorString(err));
}

const char *cb_nccl_last_error(ncclComm_t comm)
{
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 13, 0)
    const char *text = ncclGetLastError(comm);
    return text != NULL ? text : "";
#else
    (void)comm;
    return "";
#endif
}

/* A call on a non-blocking communicator may return ncclInProgress: it is
 * done when ncclCommGetAsyncError says so; until then NCCL forbids other
 * calls on the communicator. */
static ncclResult_t finish_in_progress(ncclComm_t comm, ncclResult_t res)
{
    while (res == ncclInProgress && comm != NULL) {
        ncclResult_t state = ncclInProgress;
        ncclResult_t query = ncclCommGetAsyncError(comm, &state);
        res = query != ncclSuccess ? query : state;
        if (res == ncclInProgress)
            sched_yield();
    }
    return res;
}

int cb_nccl_check(cb_backend *b, ncclComm_t comm, ncclResult_t res, const char *call,
                  const char *file, int line)
{
    int later = res == ncclInProgress && comm != NULL;
    res = finish_in_progress(comm, res);
    if (res == ncclSuccess)
        return 0;
    /* Found by the poll: what the communicator reports, maybe not this
     * call's own failure (a remote error, say). */
    const nccl_backend *nb = (const nccl_backend *)b;
    const char *found = "";
    if (later)
        found = nb->parent != NULL && comm == nb->comm
                    ? "NCCL reported an asynchronous error in a split communicator: "
                    : "NCCL reported an asynchronous error: ";
    const char *detail = cb_nccl_last_error(comm);
    int has_detail = detail[0] != '\0';
    return cb_backend_fail(b, "%.*s failed (%s:%d): %s%s%s%s", (int)strcspn(call, "("), call,
                           base_name(file), line, found, ncclGetErrorString(res),
                           has_detail ? ": " : "", has_detail ? detail : "");
}

/* Non-blocking communicators (NCCL 2.14 on): their creation can be polled,
 * so that one rank's failure need not leave the others blocked in NCCL's
 * bootstrap. */

/* After how long a failed rank waiting for the others' agreement prints its
 * own error, so that the root cause is never lost to a rank stuck elsewhere. */
#define CB_NCCL_TELL_AFTER_S 5.0

/* cb_backend_agree, but a rank that failed prints its error itself when the
 * others are slow to agree (they may never come). */
int cb_nccl_agree_telling(MPI_Comm comm, nccl_backend *nb, int failed)
{
    int any = 0, done = 0, told = 0;
    MPI_Request req;
    MPI_Iallreduce(&failed, &any, 1, MPI_INT, MPI_MAX, comm, &req);
    double since = MPI_Wtime();
    while (!done) {
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        if (!done && failed && !told && MPI_Wtime() - since > CB_NCCL_TELL_AFTER_S) {
            char host[MPI_MAX_PROCESSOR_NAME];
            cb_sysinfo_host_label(host, sizeof host);
            fprintf(stderr, "nccl-collbench: rank %d (%s): %s (waiting for the other ranks)\n",
                    nb->base.rank, host, nb->base.error);
            fflush(stderr);
            told = 1;
        }
        if (!done)
            sched_yield();
    }
    return any ? cb_backend_agree(comm, &nb->base, failed) : 0;
}

/* Wait until *comm, made by a non-blocking ncclCommInitRankConfig or
 * ncclCommSplit whose call returned res, is ready, while every rank of mpi
 * learns whether any call failed at once: a rank that failed at once never
 * joins NCCL's bootstrap, and the others, polling instead of blocking in
 * it, then abort their half-made communicators. A split (parent not NULL)
 * is NCCL's job on the parent: the parent is what is in progress, and NCCL
 * writes *comm only when it is done (NCCL 2.28, init.cc), so the parent is
 * polled, then the new communicator. Returns 1 when this rank failed
 * (b->error says why), else 0 (*comm is NULL when another failed). */
int cb_nccl_await_comm(nccl_backend *nb, MPI_Comm mpi, ncclComm_t *comm, ncclComm_t parent,
                       ncclResult_t res, const char *call)
{
    cb_backend *b = &nb->base;
    int failed_at_once = res != ncclSuccess && res != ncclInProgress, any = 0, done = 0;
    if (failed_at_once)
        cb_nccl_check(b, NULL, res, call, __FILE__, __LINE__);
    MPI_Request req;
    MPI_Iallreduce(&failed_at_once, &any, 1, MPI_INT, MPI_MAX, mpi, &req);
    ncclComm_t watched = parent != NULL && res == ncclInProgress ? parent : *comm;
    ncclResult_t state = failed_at_once || watched == NULL ? ncclSuccess : ncclInProgress;
    while (!done || (!any && state == ncclInProgress)) {
        if (!done)
            MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        if (state == ncclInProgress && !(done && any)) {
            ncclResult_t query = ncclCommGetAsyncError(watched, &state);
            if (query != ncclSuccess)
                state = query;
            /* The split is done: now the new communicator, if any. */
            if (state == ncclSuccess && watched == parent && *comm != NULL) {
                watched = *comm;
                state = ncclInProgress;
            }
        }
        if (!done || (!any && state == ncclInProgress))
            sched_yield();
    }
    /* A split that never ended (a peer never came) or failed leaves the
     * parent unusable: only an abort ends it, and the run's communicators
     * with it. */
    int parent_lost = parent != NULL && watched == parent && !failed_at_once &&
                      state != ncclSuccess;
    if (parent_lost && state != ncclInProgress)
        cb_nccl_check(b, parent, state, call, __FILE__, __LINE__);
    if (parent_lost) {
        cb_nccl_abort_now(nb);
        return state != ncclInProgress;
    }
    if (failed_at_once) {
        if (*comm != NULL)
            ncclCommAbort(*comm);   /* whatever NCCL made before it failed */
        *comm = NULL;
        return 1;
    }
    if (state == ncclSuccess || state == ncclInProgress) {
        if (any && *comm != NULL) {
            ncclCommAbort(*comm);   /* another rank failed: this one is not needed */
            *comm = NULL;
        }
        return 0;
    }
    cb_nccl_check(b, *comm, state, call, __FILE__, __LINE__);
    if (*comm != NULL)
        ncclCommAbort(*comm);
    *comm = NULL;
    return 1;
}

/* The first library with ncclCommSplit, whose config can make a blocking
 * communicator out of a non-blocking one. */
#define CB_NCCL_FIRST_SPLIT NCCL_VERSION(2, 18, 0)

/* *out: a blocking communicator split from the non-blocking guard (colour
 * and key as ncclCommSplit's), the split polled on the guard as its
 * creation was. Returns 1 when this rank failed, else 0 (*out NULL when
 * another did or the colour is none). */
static int split_blocking(nccl_backend *nb, MPI_Comm mpi, ncclComm_t guard, int color, int key,
                          ncclComm_t *out)
{
    *out = NULL;
#if NCCL_VERSION_CODE >= CB_NCCL_FIRST_SPLIT
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 1;
    ncclResult_t res = ncclCommSplit(guard, color, key, out, &config);
    return cb_nccl_await_comm(nb, mpi, out, guard, res, "ncclCommSplit");
#else
    (void)mpi, (void)guard, (void)color, (void)key;
    return cb_backend_fail(&nb->base, "NCCL's header is older than 2.18: no ncclCommSplit") != 0;
#endif
}

int cb_nccl_create_comm(nccl_backend *nb)
{
    cb_backend *b = &nb->base;
    ncclUniqueId id;
    memset(&id, 0, sizeof id);
    int failed = b->rank == 0 && NCCL_CALL(b, NULL, ncclGetUniqueId(&id)) != 0;
    if (cb_backend_agree(b->comm, b, failed) != 0)
        return -1;
    MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, b->comm);
    ncclComm_t comm = NULL;
#if NCCL_VERSION_CODE >= CB_NCCL_FIRST_NONBLOCKING
    if (nb->library_version >= CB_NCCL_FIRST_NONBLOCKING) {
        ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
        config.blocking = 0;
        ncclResult_t res = ncclCommInitRankConfig(&comm, b->nranks, id, b->rank, &config);
        failed = cb_nccl_await_comm(nb, b->comm, &comm, NULL, res, "ncclCommInitRankConfig");
        if (cb_nccl_agree_telling(b->comm, nb, failed) != 0 || comm == NULL)
            return -1;
        if (NCCL_VERSION_CODE < CB_NCCL_FIRST_SPLIT || nb->library_version < CB_NCCL_FIRST_SPLIT) {
            nb->comm = comm;   /* measured on it: see HACKING.md */
            return 0;
        }
        nb->guard = comm;
        failed = split_blocking(nb, b->comm, comm, 0, b->rank, &nb->comm);
        return cb_nccl_agree_telling(b->comm, nb, failed) != 0 || nb->comm == NULL ? -1 : 0;
    }
#endif
    failed = NCCL_CALL(b, NULL, ncclCommInitRank(&comm, b->nranks, id, b->rank)) != 0;
    nb->comm = failed ? NULL : comm;
    return cb_backend_agree(b->comm, b, failed);
}

/* The backend that owns the stream and the watchdog's request: the one
 * without a parent. */
static nccl_backend *root_of(nccl_backend *nb)
{
    while (nb->parent != NULL)
        nb = nb->parent;
    return nb;
}

/* End nb's communicator once: abort (which does not wait for the other
 * ranks, which may be gone) or destroy. Its CUDA graphs must be gone first:
 * NCCL's abort and destroy wait until every graph that captured the
 * communicator is destroyed. */
static void end_comm(nccl_backend *nb, int aborting)
{
    ncclComm_t comm = nb->comm, guard = nb->guard;
    nb->comm = NULL;
    nb->guard = NULL;
    if (comm == NULL) {
        /* The guard alone: its split failed. NCCL's destroy blocks (it is
         * a job of a blocking group, non-blocking communicator or not). */
        if (guard != NULL)
            ncclCommAbort(guard);
        return;
    }
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 11, 0)
    /* An aborted communicator takes its operators with it. */
    for (int t = 0; t < CB_DTYPE_COUNT && !aborting; t++)
        if (nb->have_premulsum[t])
            ncclRedOpDestroy(nb->premulsum[t], comm);
#endif
    if (aborting) {
        ncclCommAbort(comm);
        if (guard != NULL)
            ncclCommAbort(guard);
    } else {
        ncclCommDestroy(comm);
        if (guard != NULL)
            ncclCommDestroy(guard);
    }
}

/* Abort root's communicator and those split from it, after destroying
 * every graph that may have captured them (hier_allreduce puts several
 * communicators in one graph). Main thread only. */
static void abort_all(nccl_backend *root)
{
    cb_nccl_graph_free(&root->base);
    for (nccl_backend *split = root->first_split; split != NULL; split = split->next_split)
        cb_nccl_graph_free(&split->base);
    for (nccl_backend *split = root->first_split; split != NULL; split = split->next_split)
        end_comm(split, 1);
    end_comm(root, 1);
}

void cb_nccl_abort_now(nccl_backend *nb)
{
    nccl_backend *root = root_of(nb);
    abort_all(root);
    root->outer_group = 0;
    nb->outer_group = 0;
}

void cb_nccl_fail_in_group(nccl_backend *nb, int inner)
{
    nccl_backend *root = root_of(nb);
    int depth = inner + (nb->outer_group || root->outer_group);
    /* Each returns the failed call's error: NCCL 2.28 (group.cc) cleans up
     * a group whose call failed instead of launching it. */
    for (int i = 0; i < depth; i++)
        ncclGroupEnd();
    cb_nccl_abort_now(nb);
}

/* The engine's free: at once when no communicator lives, else after it has
 * ended (cb_nccl_fini). */
void cb_nccl_free(cb_backend *b, void *ptr)
{
    nccl_backend *nb = (nccl_backend *)b;
    if (ptr == NULL || cb_nccl_registered_free(nb, ptr))   /* -R: released in fini */
        return;
    if (nb->comm != NULL && nb->ndeferred == nb->deferred_room) {
        int room = nb->deferred_room ? 2 * nb->deferred_room : 4;
        void **grown = realloc(nb->deferred_frees, (size_t)room * sizeof *grown);
        if (grown != NULL) {
            nb->deferred_frees = grown;
            nb->deferred_room = room;
        }
    }
    if (nb->comm != NULL && nb->ndeferred < nb->deferred_room)
        nb->deferred_frees[nb->ndeferred++] = ptr;
    else
        cb_nccl_mem_free(nb, ptr);   /* no room to defer: better freed early than leaked */
}

void cb_nccl_fini(cb_backend *b, int aborting)
{
    nccl_backend *nb = (nccl_backend *)b;
    if (nb->parent != NULL) {
        nccl_backend **link = &nb->parent->first_split;
        while (*link != NULL && *link != nb)
            link = &(*link)->next_split;
        if (*link == nb)
            *link = nb->next_split;
    }
    /* Graphs, then the communicator, then the memory it may still use. */
    cb_nccl_graph_free(b);
    cb_nccl_deregister_all(nb, aborting);
    end_comm(nb, aborting);
    cb_nccl_release_registered(nb);
    for (int i = 0; i < nb->ndeferred; i++)
        cb_nccl_mem_free(nb, nb->deferred_frees[i]);
    free(nb->deferred_frees);
    cb_nccl_mem_free(nb, nb->scratch);
    cb_nccl_compare_release(nb);
    for (int i = 0; i < nb->marks_room; i++)
        cudaEventDestroy(nb->marks[i]);
    free(nb->marks);
    if (nb->have_stop)
        cudaEventDestroy(nb->stop);
    if (nb->have_start)
        cudaEventDestroy(nb->start);
    if (nb->have_stream)
        cudaStreamDestroy(nb->stream);
    if (nb->parent != NULL && b->comm != MPI_COMM_NULL)
        MPI_Comm_free(&b->comm);
    free(nb);
}

/* A communicator over some of b's ranks with ncclCommSplit, launching on
 * b's stream so that b's events time its operations and b's wait covers
 * them; an MPI communicator of the same ranks beside it for agreement. */
int cb_nccl_split(cb_backend *b, int color, int key, cb_backend **out)
{
    nccl_backend *parent = (nccl_backend *)b;
    *out = NULL;
    int too_old = NCCL_VERSION_CODE < CB_NCCL_FIRST_SPLIT ||
                  parent->library_version < CB_NCCL_FIRST_SPLIT;
    if (too_old) {
        char version[32];
        cb_nccl_version_text(parent->library_version, version, sizeof version);
        cb_backend_fail(b, "NCCL %s has no ncclCommSplit (2.18 or later needed)", version);
    }
    if (cb_backend_agree(b->comm, b, too_old) != 0)
        return -1;
    nccl_backend *nb = color >= 0 ? calloc(1, sizeof *nb) : NULL;
    if (color >= 0 && nb == NULL)
        cb_backend_fail(b, "out of memory for a sub-communicator's backend");
    if (cb_backend_agree(b->comm, b, color >= 0 && nb == NULL) != 0)
        return -1;
    MPI_Comm sub = MPI_COMM_NULL;
    MPI_Comm_split(b->comm, color >= 0 ? color : MPI_UNDEFINED, key, &sub);
    ncclComm_t comm = NULL;
    int failed = 0;
#if NCCL_VERSION_CODE >= CB_NCCL_FIRST_SPLIT
    /* Blocking, from the parent's non-blocking guard and polled on it; a
     * split of a split (no guard) from its blocking communicator, whose
     * mode it inherits. */
    int split_color = color >= 0 ? color : NCCL_SPLIT_NOCOLOR;
    if (parent->guard != NULL) {
        failed = split_blocking(parent, b->comm, parent->guard, split_color, key, &comm);
    } else {
        ncclResult_t res = ncclCommSplit(parent->comm, split_color, key, &comm, NULL);
        failed = NCCL_CALL(b, parent->comm, res) != 0;
    }
#endif
    if (nb != NULL) {
        nb->base.ops = b->ops;
        nb->base.comm = sub;
        if (sub != MPI_COMM_NULL) {
            MPI_Comm_rank(sub, &nb->base.rank);
            MPI_Comm_size(sub, &nb->base.nranks);
        }
        nb->parent = parent;
        nb->comm = comm;
        nb->device = parent->device;
        nb->local_rank = parent->local_rank;
        nb->local_ranks = parent->local_ranks;
        nb->device_sharers = parent->device_sharers;
        nb->stream = parent->stream;
        nb->config = parent->config;
        nb->library_version = parent->library_version;
        nb->compute_capability = parent->compute_capability;
        nb->memalloc = parent->memalloc;
        nb->compare = parent->compare;
        nb->base.repeat_on_device = parent->base.repeat_on_device;
    }
    if (cb_nccl_agree_telling(b->comm, parent, failed) != 0 || (color >= 0 && comm == NULL)) {
        if (nb != NULL)
            cb_nccl_fini(&nb->base, 1);
        return -1;
    }
    if (nb != NULL) {
        nb->next_split = parent->first_split;
        parent->first_split = nb;
    }
    *out = nb != NULL ? &nb->base : NULL;
    return 0;
}

/* How long the watchdog's request waits for the main thread to abort. */
#define CB_NCCL_ABORT_WAIT_S 5.0

/* From the watchdog thread. NCCL forbids concurrent calls on one
 * communicator, and its abort waits for graphs that only the main thread
 * may destroy, so this thread calls neither NCCL nor CUDA: it asks, and
 * the main thread, if it is polling for completion (where a hang is
 * usually seen), frees the graphs and aborts. The wait for that is bounded:
 * a main thread blocked elsewhere never holds the watchdog's exit. */
void cb_nccl_abort(cb_backend *b)
{
    nccl_backend *root = root_of((nccl_backend *)b);
    atomic_store(&root->abort_requested, 1);
    if (!atomic_load(&root->polling))
        return;   /* blocked elsewhere (MPI, a blocking NCCL call): nobody would answer */
    const struct timespec nap = {0, 10 * 1000 * 1000};
    for (double waited = 0; waited < CB_NCCL_ABORT_WAIT_S && !atomic_load(&root->abort_done);
         waited += 0.01)
        nanosleep(&nap, NULL);
}

/* -1 with b->error set when owner's communicator reports an asynchronous
 * error; every communicator of the run is then aborted (graphs first),
 * since kernels of a failed communicator may never finish and freeing the
 * buffers would wait on them. */
static int async_failed(cb_backend *b, nccl_backend *root, nccl_backend *owner)
{
    ncclResult_t async = ncclSuccess;
    if (NCCL_CALL(b, owner->comm, ncclCommGetAsyncError(owner->comm, &async)) != 0)
        return -1;
    if (async == ncclSuccess || async == ncclInProgress)
        return 0;
    const char *detail = cb_nccl_last_error(owner->comm);
    int has_detail = detail[0] != '\0';
    cb_backend_fail(b, "NCCL reported an asynchronous error%s: %s%s%s",
                    owner->parent != NULL ? " in a split communicator" : "",
                    ncclGetErrorString(async), has_detail ? ": " : "", has_detail ? detail : "");
    abort_all(root);
    return -1;
}

/* Poll until the event (or, when it is NULL, the whole stream) has
 * completed, watching NCCL's asynchronous error state and the watchdog's
 * abort request meanwhile: a communicator that failed is reported instead
 * of waited on forever. Between passes the CPU is yielded, as NCCL's own
 * polling loop does, so that NCCL's proxy threads run on a rank bound to
 * one core. */
static int poll_loop(nccl_backend *nb, nccl_backend *root, cudaEvent_t event)
{
    cb_backend *b = &nb->base;
    for (;;) {
        if (atomic_load(&root->abort_requested)) {
            abort_all(root);
            atomic_store(&root->abort_done, 1);
            /* The watchdog ends the process with its own status and message
             * as soon as it sees abort_done: nothing more is to be said. */
            const struct timespec nap = {1, 0};
            for (;;)
                nanosleep(&nap, NULL);
        }
        /* This backend's communicator, then those split from it, whose
         * operations run on the same stream. */
        if (async_failed(b, root, nb) != 0)
            return -1;
        for (nccl_backend *split = nb->first_split; split != NULL; split = split->next_split)
            if (split->comm != NULL && async_failed(b, root, split) != 0)
                return -1;
        /* Iterations completing count as progress for the watchdog, so a
         * long queue of them is not taken for a hang. */
        while (nb->config.progress != NULL && nb->marks_seen < nb->nmarks &&
               cudaEventQuery(nb->marks[nb->marks_seen]) == cudaSuccess) {
            nb->marks_seen++;
            nb->config.progress(nb->config.progress_ctx);
        }
        cudaError_t done = event != NULL ? cudaEventQuery(event) : cudaStreamQuery(nb->stream);
        if (done == cudaSuccess)
            return 0;
        if (done != cudaErrorNotReady)
            return cb_nccl_cuda_check(b, done, event != NULL ? "cudaEventQuery" : "cudaStreamQuery",
                                      __FILE__, __LINE__);
        sched_yield();
    }
}

int cb_nccl_poll_complete(nccl_backend *nb, cudaEvent_t event)
{
    nccl_backend *root = root_of(nb);
    if (nb->comm == NULL)
        return cb_backend_fail(&nb->base,
                               "the NCCL communicator was aborted after an earlier error");
    atomic_store(&root->polling, 1);
    int rc = poll_loop(nb, root, event);
    atomic_store(&root->polling, 0);
    return rc;
}

int cb_nccl_wait(cb_backend *b)
{
    return cb_nccl_poll_complete((nccl_backend *)b, NULL);
}
