/*
 * The NCCL backend's communicators (see ops.c): creation agreed across
 * ranks, split, waiting that watches NCCL's asynchronous error state,
 * abort and teardown; and the error checks every file of the backend uses.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nccl_backend.h"
#include "host/sysinfo.h"
#include "safety/agreement.h"

#ifndef NCCL_SPLIT_NOCOLOR
#define NCCL_SPLIT_NOCOLOR (-1)   /* headers before 2.18: never passed to NCCL */
#endif

/* "cudaFoo(a, b)" and "dir/comm.c" as "cudaFoo" and "comm.c" in messages. */
static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

cudaError_t cb_nccl_cuda_read(cudaError_t err)
{
    if (err != cudaSuccess)
        cudaGetLastError();
    return err;
}

int cb_nccl_cuda_check(cb_backend *b, cudaError_t err, const char *call, const char *file,
                       int line)
{
    if (cb_nccl_cuda_read(err) == cudaSuccess)
        return 0;
    return cb_backend_fail(b, "%.*s failed (%s:%d): %s", (int)strcspn(call, "("), call,
                           base_name(file), line, cudaGetErrorString(err));
}

const char *cb_nccl_last_error(ncclComm_t comm)
{
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 13, 0)
    const char *text = cb_nccl_exports_last_error() ? ncclGetLastError(comm) : NULL;
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
    /* On a non-blocking communicator a call may hand its work to NCCL's
     * thread and still return ncclSuccess (ncclCommWindowRegister from 2.28,
     * dev_runtime.cc, writes *win later): polled done before anything reads
     * its outputs, which must outlive the poll. */
    if (res == ncclSuccess && comm != NULL && ((const nccl_backend *)b)->nonblocking)
        res = ncclInProgress;
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

/* A rank that failed prints its own error when the others are slow to
 * agree (they may be blocked in NCCL, waiting for it), so that the root
 * cause is never lost to a rank stuck elsewhere: after this long. */
#define CB_NCCL_TELL_AFTER_S 5.0
/* How long a rank that failed a blocking creation waits for its peers to
 * agree before it ends the job: enough for peers that failed too (they
 * agree within milliseconds), and no more, since peers that did not fail
 * never come (see cb_nccl_agree_telling). */
#define CB_NCCL_STRANDED_S 2.0

/* cb_backend_agree, but a rank that failed prints its error itself when the
 * others are slow to agree (they may never come). A blocking creation that
 * failed on this rank before it joined NCCL's bootstrap strands the others
 * in it: NCCL's bootstrap root accepts until every rank has sent its
 * address (src/bootstrap.cc, bootstrapRoot: "do { ncclSocketAccept ... }
 * while (c < nrecv)"), and each rank then waits in bootstrapInit for the
 * root's answer (ncclSocketAccept on its root listener), with no deadline.
 * Only the end of their processes ends that wait, so this rank ends the
 * job, under any -T, with its own failure as the reason. */
int cb_nccl_agree_telling(cb_ctl *comm, nccl_backend *nb, int failed, int stranded)
{
    int any = 0, done = 0, told = 0;
    cb_ctl_req *req = NULL;
    if (cb_ctl_iallreduce(comm, &failed, &any, 1, CB_CTL_INT, CB_CTL_MAX, &req) != 0)
        return cb_backend_agree(comm, &nb->base, 1);
    double since = cb_ctl_now();
    while (!done) {
        if (cb_ctl_test(comm, req, &done) != 0)
            return cb_backend_fail(&nb->base, "the control plane failed while the ranks agreed");
        if (!done && failed && stranded && cb_ctl_now() - since > CB_NCCL_STRANDED_S) {
            char host[CB_CTL_HOSTLEN];
            cb_sysinfo_host_label(host, sizeof host);
            fprintf(stderr, "nccl-collbench: rank %d (%s): %s; the other ranks wait for this one "
                    "in NCCL's bootstrap, which nothing but the job's end ends: ending the job "
                    "(status %d)\n", nb->base.rank, host, nb->base.error, CB_EXIT_RUNTIME);
            cb_ctl_abort(comm, CB_EXIT_RUNTIME);
        }
        if (!done && failed && !told && cb_ctl_now() - since > CB_NCCL_TELL_AFTER_S) {
            char host[CB_CTL_HOSTLEN];
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

/* Wait until *comm is ready: made by a creation whose call returned res, or,
 * parent not NULL, by a split or shrink of that non-blocking parent. Every
 * rank of mpi meanwhile learns whether any call failed at once, so that a
 * rank that failed before NCCL's bootstrap never leaves the others polling
 * for ever. A split or shrink is a job of the PARENT's group (NCCL 2.28,
 * init.cc, ncclCommInitChildComm); on a non-blocking parent it returns
 * ncclSuccess, not ncclInProgress (ncclCommSplit: "res = ncclSuccess; ...
 * NCCLCHECK(ncclGroupEndInternal()); return res;", and NCCLCHECK passes
 * ncclInProgress through), while the parent stays in progress and *comm
 * stays NULL until NCCL's thread writes it at the end of
 * ncclCommInitRankFunc. So the parent is polled whatever res says, then
 * the new communicator. Returns 1 when this rank failed (b->error says
 * why), else 0 (*comm is NULL when another failed). */
int cb_nccl_await_comm(nccl_backend *nb, cb_ctl *mpi, ncclComm_t *comm, ncclComm_t parent,
                       ncclResult_t res, const char *call)
{
    cb_backend *b = &nb->base;
    int failed_at_once = res != ncclSuccess && res != ncclInProgress, any = 0, done = 0;
    if (failed_at_once)
        cb_nccl_check(b, NULL, res, call, __FILE__, __LINE__);
    cb_ctl_req *req = NULL;
    if (cb_ctl_iallreduce(mpi, &failed_at_once, &any, 1, CB_CTL_INT, CB_CTL_MAX, &req) != 0) {
        done = 1;
        any = 1;
    }
    ncclComm_t watched = parent != NULL ? parent : *comm;
    ncclResult_t state = failed_at_once || watched == NULL ? ncclSuccess : ncclInProgress;
    while (!done || (!any && state == ncclInProgress)) {
        if (!done)
            if (cb_ctl_test(mpi, req, &done) != 0)
                done = any = 1;
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
     * with it. NCCL's thread may still write *comm until then: the caller's
     * *comm outlives this call (never a local of a returning function). */
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

/* The first NCCL whose NCCL_COMM_BLOCKING=0 overrides a config's blocking =
 * 1 (init.cc, parseCommConfig, 2.17.1; envConfigOverride from 2.18.1, for
 * splits too; 2.14 to 2.16 honour only 1, in ncclCommInitRankConfig). */
#define CB_NCCL_FIRST_ENV_NONBLOCKING NCCL_VERSION(2, 17, 0)

int cb_nccl_env_nonblocking(int library_version)
{
    /* As NCCL_PARAM reads it (misc/param.cc, ncclLoadParam, 2.28.9): a
     * non-empty value through strtoll base 0, kept unless it overflows;
     * "0", "0x0" and text without digits all give 0. */
    const char *text = getenv("NCCL_COMM_BLOCKING");
    if (library_version < CB_NCCL_FIRST_ENV_NONBLOCKING || text == NULL || text[0] == '\0')
        return 0;
    errno = 0;
    long long value = strtoll(text, NULL, 0);
    return errno == 0 && value == 0;
}

/* The first library with ncclCommSplit. */
#define CB_NCCL_FIRST_SPLIT NCCL_VERSION(2, 18, 0)

/* *out: parent's communicator split (colour and key as ncclCommSplit's),
 * blocking unless NCCL_COMM_BLOCKING=0 made the run non-blocking; then the
 * split is polled on the parent. out must outlive the wait, as NCCL's
 * thread writes it. Returns 1 when this rank failed, else 0 (*out NULL
 * when another did or the colour is none). */
static int split_comm(nccl_backend *nb, cb_ctl *mpi, ncclComm_t parent, int color, int key,
                      ncclComm_t *out)
{
    *out = NULL;
#if NCCL_VERSION_CODE >= CB_NCCL_FIRST_SPLIT
    ncclResult_t res = ncclCommSplit(parent, color, key, out, NULL);
    if (nb->nonblocking)
        return cb_nccl_await_comm(nb, mpi, out, parent, res, "ncclCommSplit");
    return cb_nccl_check(&nb->base, parent, res, "ncclCommSplit", __FILE__, __LINE__) != 0;
#else
    (void)mpi, (void)parent, (void)color, (void)key;
    return cb_backend_fail(&nb->base, "NCCL's header is older than 2.18: no ncclCommSplit") != 0;
#endif
}

/* One communicator per rank, blocking, as nccl-tests': every rank first
 * agrees over the control plane that it is ready (the unique id made and received), so
 * that none fails before NCCL's bootstrap and strands the others in it; a
 * rank lost inside NCCL's own set-up is then the watchdog's (-T) to end.
 * Its launches return once enqueued, with no thread of NCCL's in the timed
 * span. docs/design/communicators.md says why this design. */
int cb_nccl_create_comm(nccl_backend *nb)
{
    cb_backend *b = &nb->base;
    ncclUniqueId id;
    memset(&id, 0, sizeof id);
    int failed = b->rank == 0 && NCCL_CALL(b, NULL, ncclGetUniqueId(&id)) != 0;
    if (cb_backend_agree(b->comm, b, failed) != 0)
        return -1;
    cb_ctl_bcast(b->comm, &id, sizeof id, 0);
    nb->nonblocking = cb_nccl_env_nonblocking(nb->library_version);
    ncclComm_t comm = NULL;
    ncclResult_t res;
    const char *call = "ncclCommInitRank";
#if NCCL_VERSION_CODE >= CB_NCCL_FIRST_NONBLOCKING
    if (nb->library_version >= CB_NCCL_FIRST_NONBLOCKING && cb_nccl_exports_init_config()) {
        ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
        config.blocking = 1;
        call = "ncclCommInitRankConfig";
        res = ncclCommInitRankConfig(&comm, b->nranks, id, b->rank, &config);
    } else
#endif
        res = ncclCommInitRank(&comm, b->nranks, id, b->rank);
    /* Non-blocking by NCCL_COMM_BLOCKING=0: polled as the ranks agree. */
    failed = nb->nonblocking ? cb_nccl_await_comm(nb, b->comm, &comm, NULL, res, call)
                             : cb_nccl_check(b, NULL, res, call, __FILE__, __LINE__) != 0;
    nb->comm = failed ? NULL : comm;
    if (cb_nccl_agree_telling(b->comm, nb, failed, !nb->nonblocking) != 0 || nb->comm == NULL)
        return -1;
    /* How many communicators the run holds, and in which mode: what a
     * reader comparing with nccl-tests must know. From 2.23 NCCL's thread
     * launches every group of a non-blocking communicator; before, only one
     * that connects a send or receive (group.cc, ncclGroupEndInternal,
     * v2.22.3-1 against v2.23.4-1). */
    if (nb->nonblocking && nb->library_version >= NCCL_VERSION(2, 23, 0))
        cb_backend_add_notice(b, "communicators: 1 per rank (hier_allreduce, -o scan and --split "
                                 "split theirs from it), non-blocking: NCCL_COMM_BLOCKING=0 "
                                 "overrides the blocking config (init.cc, envConfigOverride), so "
                                 "every launch outside a group also pays NCCL's group thread, "
                                 "unlike nccl-tests' default");
    else if (nb->nonblocking)
        cb_backend_add_notice(b, "communicators: 1 per rank (hier_allreduce, -o scan and --split "
                                 "split theirs from it), non-blocking: NCCL_COMM_BLOCKING=0 "
                                 "overrides the blocking config (init.cc, envConfigOverride); "
                                 "before 2.23 its launches run on the calling thread, but a group "
                                 "that first connects a send or receive pays NCCL's group thread");
    else
        cb_backend_add_notice(b, "communicators: 1 per rank (hier_allreduce, -o scan and --split "
                                 "split theirs from it), blocking, as nccl-tests'");
    return 0;
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
    ncclComm_t comm = nb->comm;
    nb->comm = NULL;
    if (comm == NULL)
        return;
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 11, 0)
    /* An aborted communicator takes its operators with it. */
    for (int t = 0; t < CB_DTYPE_COUNT && !aborting; t++)
        if (nb->have_premulsum[t])
            ncclRedOpDestroy(nb->premulsum[t], comm);
#endif
    if (aborting)
        ncclCommAbort(comm);
    else
        ncclCommDestroy(comm);
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
    if (nb->comm != NULL && nb->mem.ndeferred == nb->mem.deferred_room) {
        int room = nb->mem.deferred_room ? 2 * nb->mem.deferred_room : 4;
        void **grown = realloc(nb->mem.deferred_frees, (size_t)room * sizeof *grown);
        if (grown != NULL) {
            nb->mem.deferred_frees = grown;
            nb->mem.deferred_room = room;
        }
    }
    if (nb->comm != NULL && nb->mem.ndeferred < nb->mem.deferred_room)
        nb->mem.deferred_frees[nb->mem.ndeferred++] = ptr;
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
    for (int i = 0; i < nb->mem.ndeferred; i++)
        cb_nccl_mem_free(nb, nb->mem.deferred_frees[i]);
    free(nb->mem.deferred_frees);
    cb_nccl_mem_free(nb, nb->scratch);
    cb_nccl_compare_release(nb);
    for (int i = 0; i < nb->timing.marks_room; i++)
        cudaEventDestroy(nb->timing.marks[i]);
    free(nb->timing.marks);
    if (nb->have_stop)
        cudaEventDestroy(nb->stop);
    if (nb->have_start)
        cudaEventDestroy(nb->start);
    if (nb->have_stream)
        cudaStreamDestroy(nb->stream);
    if (nb->parent != NULL && b->comm != NULL)
        cb_ctl_free(&b->comm);
    free(nb);
}

/* A communicator over some of b's ranks with ncclCommSplit, launching on
 * b's stream so that b's events time its operations and b's wait covers
 * them; a control-plane group of the same ranks beside it for agreement. */
int cb_nccl_split(cb_backend *b, int color, int key, cb_backend **out)
{
    nccl_backend *parent = (nccl_backend *)b;
    *out = NULL;
    int too_old = NCCL_VERSION_CODE < CB_NCCL_FIRST_SPLIT ||
                  parent->library_version < CB_NCCL_FIRST_SPLIT;
    int unexported = !too_old && !cb_nccl_exports_split();
    if (too_old || unexported) {
        char version[32];
        cb_nccl_version_text(parent->library_version, version, sizeof version);
        cb_backend_fail(b, "NCCL %s has no ncclCommSplit (%s)", version,
                        too_old ? "2.18 or later needed" : "the library loaded does not export it");
    }
    if (cb_backend_agree(b->comm, b, too_old || unexported) != 0)
        return -1;
    nccl_backend *nb = color >= 0 ? calloc(1, sizeof *nb) : NULL;
    if (color >= 0 && nb == NULL)
        cb_backend_fail(b, "out of memory for a sub-communicator's backend");
    if (cb_backend_agree(b->comm, b, color >= 0 && nb == NULL) != 0)
        return -1;
    cb_ctl *sub = NULL;
    cb_ctl_split(b->comm, color, key, &sub);
    ncclComm_t comm = NULL;
    int failed = 0;
    int split_color = color >= 0 ? color : NCCL_SPLIT_NOCOLOR;
    failed = split_comm(parent, b->comm, parent->comm, split_color, key, &comm);
    if (nb != NULL) {
        nb->base.ops = b->ops;
        nb->base.comm = sub;
        if (sub != NULL) {
            nb->base.rank = sub->rank;
            nb->base.nranks = sub->size;
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
        nb->mem.memalloc = parent->mem.memalloc;
        nb->compare = parent->compare;
        nb->nonblocking = parent->nonblocking;
        nb->base.repeat_on_device = parent->base.repeat_on_device;
    }
    if (cb_nccl_agree_telling(b->comm, parent, failed, 0) != 0 || (color >= 0 && comm == NULL)) {
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
    atomic_store(&root->threads.abort_requested, 1);
    if (!atomic_load(&root->threads.polling))
        return;   /* blocked elsewhere (MPI, a blocking NCCL call): nobody would answer */
    const struct timespec nap = {0, 10 * 1000 * 1000};
    for (double waited = 0;
         waited < CB_NCCL_ABORT_WAIT_S && !atomic_load(&root->threads.abort_done);
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
        if (atomic_load(&root->threads.abort_requested)) {
            abort_all(root);
            atomic_store(&root->threads.abort_done, 1);
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
        while (nb->config.progress != NULL && nb->timing.marks_seen < nb->timing.nmarks &&
               cudaEventQuery(nb->timing.marks[nb->timing.marks_seen]) == cudaSuccess) {
            nb->timing.marks_seen++;
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
    atomic_store(&root->threads.polling, 1);
    int rc = poll_loop(nb, root, event);
    atomic_store(&root->threads.polling, 0);
    return rc;
}

int cb_nccl_wait(cb_backend *b)
{
    return cb_nccl_poll_complete((nccl_backend *)b, NULL);
}
