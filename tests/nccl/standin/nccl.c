/*
 * Stand-in for the NCCL calls of the NCCL backend; see standin.h. A
 * communicator is the set of connections that the bootstrap through its
 * unique id made (bootstrap.c); its collectives run over them (transport.c).
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "async_jobs.h"

static char last_error[256];
static struct ncclComm *live_comms;
static int comm_serials;
/* Threads inside an NCCL call of the process, and the last call entered,
 * for ncclCommAbort's rule (inside_nccl). */
static atomic_int threads_inside;
static _Atomic(const char *) last_entered;

/* A thread enters or leaves a call that may block inside NCCL. */
static void inside_nccl(const char *call, int delta)
{
    if (delta > 0)
        atomic_store(&last_entered, call);
    atomic_fetch_add(&threads_inside, delta);
}

int standin_overlaps(const void *a, size_t a_bytes, const void *b, size_t b_bytes)
{
    const char *x = a, *y = b;
    return x < y + b_bytes && y < x + a_bytes;
}

/* NCCL forbids calls on one communicator from two threads at once. */
void standin_comm_enter(ncclComm_t comm, const char *call)
{
    inside_nccl(call, 1);
    if (atomic_fetch_add(&comm->in_call, 1) != 0)
        standin_violation("%s on a communicator that another thread is calling", call);
}

/* A non-blocking communicator is used only once NCCL said it is ready: real
 * NCCL fails the call (ncclCommEnsureReady) while its own thread may still
 * be working on the communicator. */
int standin_comm_unready(ncclComm_t comm, const char *call)
{
    /* NCCL's ncclCommEnsureReady lets it through (asyncResult is still
     * ncclSuccess) onto a communicator that was never initialised. */
    if (comm->pending) {
        standin_violation("%s on a communicator whose creation waits for the outermost "
                          "ncclGroupEnd (NCCL: not yet initialised)", call);
        return 1;
    }
    if (!comm->stuck && comm->in_progress == 0) {
        /* NCCL's ncclCommEnsureReady joins the launch thread (init.cc). */
        standin_thread_join(comm, call);
        return 0;
    }
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
ncclResult_t standin_comm_failed(ncclComm_t comm, const char *call)
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
    return standin_comm_marked_started(comm, res, call);
}

/* The same for any communicator: a non-blocking group marks its blocking
 * members in progress too (standin_group_launch_started). */
ncclResult_t standin_comm_marked_started(ncclComm_t comm, ncclResult_t res, const char *call)
{
    comm->async_result = res;
    comm->in_progress = 2 + (comm->calls_started++ & 1);
    standin_trace("ncclInProgress from %s", call);
    return ncclInProgress;
}

void standin_comm_leave(ncclComm_t comm)
{
    inside_nccl(NULL, -1);
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
    standin_lock();   /* NCCL's launch thread fails calls too (threads.c) */
    snprintf(last_error, sizeof last_error, "NCCL stand-in: %s", what);
    standin_unlock();
    return res;
}

static ncclResult_t fail(ncclResult_t res, const char *what)
{
    return standin_fail(res, what);
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

/* A communicator not yet over any connections, in share_with's resource
 * set (NULL: its own), or NULL when out of memory. */
ncclComm_t standin_comm_alloc(int nonblocking, ncclComm_t share_with)
{
    struct ncclComm *c = calloc(1, sizeof *c);
    if (c == NULL || standin_resources_join(c, share_with) != 0) {
        free(c);
        return NULL;
    }
    c->nonblocking = nonblocking;
    c->serial = comm_serials++;
    atomic_init(&c->graph_refs, 0);
    atomic_init(&c->in_call, 0);
    c->next_live = live_comms;
    live_comms = c;
    standin_count(STANDIN_COMM, 1);
    return c;
}

/* c now runs over net, which it owns; NULL: stuck in NCCL's bootstrap (a
 * peer never joined). */
void standin_comm_attach(ncclComm_t c, standin_net *net)
{
    c->net = net;
    c->stuck = net == NULL;
    if (!c->stuck) {
        c->rank = standin_net_rank(net);
        c->nranks = standin_net_size(net);
        standin_connect_created(c);
    }
}

/* A communicator over net, which it then owns (freed here on failure). */
ncclResult_t standin_comm_new(standin_net *net, int nonblocking, ncclComm_t share_with,
                             ncclComm_t *out)
{
    ncclComm_t c = standin_comm_alloc(nonblocking, share_with);
    if (c == NULL) {
        standin_net_free(net);
        return fail(ncclSystemError, "out of memory");
    }
    standin_comm_attach(c, net);
    *out = c;
    if (nonblocking && !c->stuck)
        return standin_comm_started(c, ncclSuccess, "ncclCommInitRank");
    return nonblocking ? ncclInProgress : ncclSuccess;
}

/* The blocking mode a new communicator gets: config's (asked: 1 blocking,
 * 0 not), then NCCL_COMM_BLOCKING's override as the reported version has
 * it: from 2.18 (init.cc, envConfigOverride, called by parseCommConfig and
 * copyCommConfig, so for creation and splits alike) 0 or 1 replaces it;
 * 2.14 to 2.17 (ncclCommInitRankConfig only) honour 1 alone. The value is
 * read as NCCL_PARAM does (misc/param.cc, ncclLoadParam): strtoll base 0 of
 * a non-empty value, so text without digits reads 0. */
int standin_env_blocking(int asked, int creation_with_config)
{
    const char *text = getenv("NCCL_COMM_BLOCKING");
    if (text == NULL || text[0] == '\0')
        return asked;
    errno = 0;
    long long value = strtoll(text, NULL, 0);
    if (errno != 0 || (value != 0 && value != 1))
        return asked;
    long version = standin_env_long("CB_STANDIN_NCCL_VERSION", NCCL_VERSION_CODE);
    if (version >= NCCL_VERSION(2, 17, 0))
        return (int)value;
    return creation_with_config && value == 1 ? 1 : asked;
}

/* Blocking: like NCCL's bootstrap, every rank takes part, and a rank that
 * fails before it leaves the others waiting in it. Non-blocking
 * (ncclCommInitRankConfig with blocking = 0): returns ncclInProgress, and
 * ncclCommGetAsyncError says ncclInProgress for ever when a peer failed
 * before joining. Inside a group NCCL writes *comm at once with a
 * communicator whose job waits for the outermost group end (init.cc,
 * ncclCommInitRankDev: "*newcomm = comm;" before ncclAsyncLaunch, 2.18.1 to
 * 2.30.7; its asyncResult still ncclSuccess, so the call returns that in
 * both modes); until then it is not initialised (comm->pending). */
static ncclResult_t init_rank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank,
                              int nonblocking, const ncclConfig_t *config)
{
    /* NCCL binds a communicator to the calling thread's current device. */
    standin_trace("ncclCommInitRank nranks=%d rank=%d blocking=%d config=%d physical=%d", nranks,
                  rank, !nonblocking, config != NULL, standin_current_physical());
    *comm = NULL;
    if (standin_group_job(!nonblocking, 0, "ncclCommInitRank") != ncclSuccess)
        return ncclInvalidArgument;
    int failing = standin_fault("CB_STANDIN_FAIL_COMMINIT"), stuck = 0;
    /* Blocking: the failing rank never reaches the root, and the others
     * wait for its answer. Non-blocking: it tells the root (bootstrap.c).
     * Inside a group it fails where NCCL's job would: at the group's end. */
    if (standin_group_depth() > 0)
        return standin_init_hold(comm, &id, nranks, rank, nonblocking, failing, config);
    if (failing && !nonblocking)
        return fail(ncclSystemError, STANDIN_INJECTED_INIT);
    /* The injected failure stays on the caller (the stand-in's own). */
    if (nonblocking && !failing)
        return standin_init_async(comm, &id, nranks, rank, config);
    standin_net *net = NULL;
    inside_nccl("ncclCommInitRank", 1);   /* blocking: waits for every peer */
    ncclResult_t res = standin_bootstrap_init(&id, nranks, rank, failing, &net, &stuck);
    inside_nccl(NULL, -1);
    if (res != ncclSuccess)
        return res;
    if (failing)
        return fail(ncclSystemError, STANDIN_INJECTED_INIT);
    res = standin_comm_new(net, nonblocking, NULL, comm);
    if (*comm != NULL)
        standin_share_config(*comm, config, NULL);
    return res;
}

/* NCCL 2.28 (init.cc): no group of its own, so the job runs inline (group.cc,
 * ncclAsyncLaunch at depth 0) and the call blocks; NCCL_COMM_BLOCKING=0
 * still makes the communicator non-blocking for every later call. */
ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank)
{
    ncclResult_t res = init_rank(comm, nranks, id, rank, 0, NULL);
    if (res == ncclSuccess && !standin_env_blocking(1, 0))
        (*comm)->nonblocking = 1;
    return res;
}

/* NCCL refuses a config field it cannot read (init.cc, parseCommConfig),
 * before NCCL_COMM_BLOCKING or NCCL_COMM_SPLIT_SHARE_RESOURCES is read: the
 * name of the bad field, or NULL. blocking other than 0, 1 or unset,
 * 2.17.1 to 2.30.7 (ncclCommInitRankConfig, 2.14.3); splitShare the same
 * from 2.18.1, when the field came with ncclCommSplit; shrinkShare the same
 * from 2.27.3, with ncclCommShrink ("Invalid config splitShare attribute
 * value", ncclInvalidArgument). envConfigOverride's later "set it to 0"
 * only ever sees the variable's value. */
static int zero_one_or_unset(int field)
{
    return field == NCCL_CONFIG_UNDEF_INT || field == 0 || field == 1;
}

static const char *bad_config(const ncclConfig_t *config)
{
    if (config == NULL)
        return NULL;
    long version = standin_nccl_version();
    if (!zero_one_or_unset(config->blocking))
        return "blocking";
    if (version >= NCCL_VERSION(2, 18, 0) && !zero_one_or_unset(config->splitShare))
        return "splitShare";
    if (version >= NCCL_VERSION(2, 27, 0) && !zero_one_or_unset(config->shrinkShare))
        return "shrinkShare";
    return NULL;
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank,
                                    ncclConfig_t *config)
{
    const char *bad = bad_config(config);
    if (bad != NULL) {
        *comm = NULL;
        standin_trace("ncclCommInitRankConfig refused: config %s", bad);
        return fail(ncclInvalidArgument, "Invalid config attribute value");
    }
    int asked = config == NULL || config->blocking != 0;
    ncclConfig_t defaults = NCCL_CONFIG_INITIALIZER;
    return init_rank(comm, nranks, id, rank, !standin_env_blocking(asked, 1),
                     config != NULL ? config : &defaults);
}

/* A call whose work NCCL hands to its thread but that returns ncclSuccess,
 * not ncclInProgress, because it ends with "NCCLCHECK(ncclGroupEndInternal());
 * return res;" and NCCLCHECK (include/checks.h) passes ncclInProgress
 * through: ncclCommSplit and ncclCommShrink on a non-blocking parent
 * (init.cc, 2.18.1 to 2.30.7), ncclCommWindowRegister from 2.28
 * (dev_runtime.cc). The communicator is in progress until polled done, as
 * after a call that returned ncclInProgress. */
ncclResult_t standin_comm_started_success(ncclComm_t comm, const char *call)
{
    comm->async_result = ncclSuccess;
    comm->in_progress = 2 + (comm->calls_started++ & 1);
    standin_trace("%s returned ncclSuccess, the communicator in progress", call);
    return ncclSuccess;
}

/* The call's checks, then its job (jobs.c, standin_split_start). On a
 * non-blocking parent it returns ncclSuccess while the parent is in
 * progress; *newcomm stays NULL until the parent is polled done, also for
 * NCCL_SPLIT_NOCOLOR, and for ever when a peer never joined. NCCL runs the
 * split as a job of the PARENT's group, so the parent's mode decides
 * whether the call blocks. */
ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm,
                           ncclConfig_t *config)
{
    standin_trace("ncclCommSplit color=%d key=%d blocking=%d", color, key,
                  standin_env_blocking(config != NULL ? config->blocking != 0
                                              : comm == NULL || !comm->nonblocking, 0));
    *newcomm = NULL;
    if (comm == NULL || comm_unready(comm, "ncclCommSplit"))
        return fail(ncclInvalidArgument, "NULL or unready communicator");
    if (bad_config(config) != NULL)
        return fail(ncclInvalidArgument, "Invalid config attribute value");
    if (standin_group_job(!comm->nonblocking, 0, "ncclCommSplit") != ncclSuccess)
        return ncclInvalidArgument;
    /* CB_STANDIN_FAIL_SPLIT_AFTER=N spares this process's first N splits. */
    static int splits_seen;
    int failing = standin_fault("CB_STANDIN_FAIL_SPLIT") &&
                  splits_seen++ >= standin_env_long("CB_STANDIN_FAIL_SPLIT_AFTER", 0);
    if (failing && !comm->nonblocking && standin_group_depth() == 0)   /* else at the end */
        return fail(ncclSystemError, STANDIN_INJECTED_SPLIT);
    return standin_split_start(comm, newcomm, config, color, key, NULL, 0, failing);
}

/* Unlink and free a communicator that no other call holds. */
static void comm_release(ncclComm_t comm)
{
    struct ncclComm **link = &live_comms;
    while (*link != NULL && *link != comm)
        link = &(*link)->next_live;
    if (*link == comm)
        *link = comm->next_live;
    standin_net_free(comm->net);
    comm->net = NULL;
    standin_connect_release(comm);
    standin_count(STANDIN_COMM, -1);
}

static ncclResult_t comm_free(ncclComm_t comm, const char *how)
{
    if (comm == NULL)
        return fail(ncclInvalidArgument, "NULL communicator");
    standin_trace("%s", how);
    /* NCCL's held job would run on freed memory at the group's end. */
    if (standin_group_holds(comm)) {
        standin_violation("%s of a communicator whose creation, split or shrink waits for the "
                          "outermost ncclGroupEnd", how);
        return fail(ncclInvalidUsage, "communicator held by the open group");
    }
    standin_comm_enter(comm, how);
    /* NCCL's ncclCommEnsureReady joins the launch thread (init.cc); the
     * stand-in's thread cannot be aborted, so this waits for its work. */
    standin_thread_join(comm, how);
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
    inside_nccl(NULL, -1);
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
    if (bad_config(config) != NULL)
        return fail(ncclInvalidArgument, "Invalid config attribute value");
    if (standin_group_job(!comm->nonblocking, 0, "ncclCommShrink") != ncclSuccess)
        return ncclInvalidArgument;
    for (int i = 0; i < excludeRanksCount; i++)
        if (excludeRanksList[i] == comm->rank)
            return fail(ncclInvalidArgument, "ncclCommShrink called by an excluded rank");
    /* The kept ranks split over the parent in rank order; the excluded
     * take no part (init.cc: the shrink is a split of the kept ranks). */
    unsigned char *kept = malloc((size_t)comm->nranks);
    if (kept == NULL)
        return fail(ncclSystemError, "out of memory");
    memset(kept, 1, (size_t)comm->nranks);
    for (int i = 0; i < excludeRanksCount; i++)
        if (excludeRanksList[i] >= 0 && excludeRanksList[i] < comm->nranks)
            kept[excludeRanksList[i]] = 0;
    return standin_split_start(comm, newcomm, config, 0, comm->rank, kept, shrinkFlags, 0);
}

/* NCCL's destroy first checks that the communicator is ready
 * (ncclCommEnsureReady, init.cc, 2.14.3 to 2.30.7), and fails when it is
 * in progress (ncclInvalidArgument) or in error (that error: "if ret is not
 * ncclInProgress, we just keep it"), leaving it alive: only ncclCommAbort
 * ends it. From 2.24 (not 2.27.0 to 2.27.5) the refusal returns between
 * ncclGroupStartInternal and its end: the calling thread stays in a group. */
static ncclResult_t destroy_refused(ncclComm_t comm)
{
    ncclResult_t res = ncclSuccess;
    if (comm_unready(comm, "ncclCommDestroy")) {
        res = fail(ncclInvalidArgument, "ncclCommDestroy of a communicator in progress");
    } else if (comm->async_result != ncclSuccess) {
        standin_violation("ncclCommDestroy of a communicator in error %d: NCCL returns the error "
                          "and keeps it (only ncclCommAbort ends it)", (int)comm->async_result);
        res = fail(comm->async_result, "ncclCommDestroy of a communicator in error");
    }
    long v = standin_nccl_version();
    if (res != ncclSuccess && v >= NCCL_VERSION(2, 24, 0) &&
        (v < NCCL_VERSION(2, 27, 0) || v >= NCCL_VERSION(2, 27, 6))) {
        standin_group_leave_open();
        standin_trace("ncclCommDestroy refused: the calling thread is left in a group");
    }
    return res;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm)
{
    if (comm == NULL)
        return ncclSuccess;
    ncclResult_t refused = destroy_refused(comm);
    if (refused != ncclSuccess)
        return refused;
    /* 2.22 on: a job of the group, which it makes blocking (group.cc). */
    if (standin_nccl_version() >= NCCL_VERSION(2, 22, 0))
        standin_group_job(1, 1, "ncclCommDestroy");
    standin_end_registrations(comm, 1);
    return comm_free(comm, "ncclCommDestroy");
}

/* The abort's reclaim, held for the outermost ncclGroupEnd. */
static ncclResult_t reclaim_held(standin_job *job, const char *what)
{
    ncclComm_t comm = job->comm;
    free(job);
    standin_trace("%s", what);
    standin_end_registrations(comm, 0);
    return comm_free(comm, "ncclCommAbort");
}

static ncclResult_t abort_held_run(standin_job *job)
{
    return reclaim_held(job, "ncclGroupEnd ran the held ncclCommAbort");
}

/* A failed group drops its jobs (group.cc, groupCleanup): NCCL never
 * reclaims the communicator; the stand-in frees its memory all the same. */
static void abort_held_drop(standin_job *job, ncclResult_t why)
{
    (void)why;
    reclaim_held(job, "ncclCommAbort dropped with its failed group: never reclaimed in NCCL");
}

/* Inside a group. Before 2.22 the reclaim is done at once (init.cc,
 * ncclCommAbort calls commReclaim, 2.18.1 to 2.21.5); from 2.22 it is an
 * async job (ncclAsyncLaunch(..., commReclaim, ...), 2.22.3; 2.28.9 the
 * same between ncclGroupStartInternal and ncclGroupEndInternal, which
 * inside the caller's group only nest), which group.cc's ncclAsyncLaunch
 * queues for the outermost ncclGroupEnd and whose comm->destroyFlag makes
 * the group blocking. Either way the communicator's operations in the open
 * group would then be launched on a reclaimed communicator (2.21.5: nothing
 * in init.cc unlinks it from ncclGroupCommHead; 2.22.3: groupLaunch runs
 * the async jobs before doLaunches): flagged, and dropped here. Returns 1
 * when the reclaim is held. */
static int abort_in_group(ncclComm_t comm)
{
    size_t waiting = standin_group_drop(comm, NULL);
    if (waiting > 0)
        standin_violation("ncclCommAbort of a communicator whose operations wait in the open "
                          "group: NCCL reclaims it before the group's end launches them "
                          "(%zu dropped)", waiting);
    if (standin_nccl_version() < NCCL_VERSION(2, 22, 0) || standin_group_holds(comm))
        return 0;   /* a held creation or split: comm_free flags it */
    standin_job *job = calloc(1, sizeof *job);
    if (job == NULL)
        return 0;
    *job = (standin_job){.comm = comm, .run = abort_held_run, .drop = abort_held_drop};
    standin_group_job(1, 1, "ncclCommAbort");
    standin_group_hold(job);
    standin_trace("ncclCommAbort held for the outermost ncclGroupEnd");
    return 1;
}

ncclResult_t ncclCommAbort(ncclComm_t comm)
{
    /* "NCCL requires applications to ... make sure no thread is calling
     * any NCCL operations while calling ncclCommAbort" (communicators.rst,
     * Fault Tolerance, 2.30.7): the abort frees what such a call is using.
     * A NULL communicator returns at once (init.cc ncclCommAbort 2.28.9). */
    if (comm != NULL && atomic_load(&threads_inside) > 0)
        standin_violation("ncclCommAbort while another thread is inside NCCL (%s)",
                          atomic_load(&last_entered));
    if (comm != NULL && standin_group_depth() > 0 && abort_in_group(comm))
        return ncclSuccess;
    standin_end_registrations(comm, 0);
    if (comm != NULL)
        standin_thread_abort(comm);
    return comm_free(comm, "ncclCommAbort");
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *async_error)
{
    if (comm == NULL)
        return fail(ncclInvalidArgument, "NULL communicator");
    standin_comm_enter(comm, "ncclCommGetAsyncError");
    standin_comm_leave(comm);
    /* A call that returned ncclInProgress is seen done after one or two
     * queries (standin_comm_started), never when a peer never joined. */
    *async_error = ncclInProgress;
    /* In progress until NCCL's thread has done its job or put the work on
     * its streams (threads.c): the last query of the count waits for it. */
    int running = standin_thread_running(comm);
    if (comm->stuck || comm->in_progress < 0 || (running && comm->in_progress == 1))
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
    /* 2.26 on, ncclCommGetAsyncError joins it once it says ncclSuccess
     * (init.cc, v2.26.2-1 to v2.28.9-1). */
    if (standin_nccl_version() >= NCCL_VERSION(2, 26, 0))
        standin_thread_join(comm, "ncclCommGetAsyncError");
    if (comm->ran > 0 && standin_fault("CB_STANDIN_FAIL_ASYNC")) {
        fail(ncclRemoteError, "injected asynchronous error (CB_STANDIN_FAIL_ASYNC)");
        *async_error = comm->async_result = ncclRemoteError;
    }
    return ncclSuccess;
}

long standin_env_long(const char *name, long fallback)
{
    const char *text = getenv(name);
    if (text == NULL || text[0] == '\0')
        return fallback;
    char *end = NULL;
    long value = strtol(text, &end, 10);
    return *end == '\0' ? value : fallback;
}
