/*
 * NCCL's async jobs in the stand-in (see standin.h): a creation, split or
 * shrink is a job (init.cc's ncclCommInitRankAsyncJob) that runs at once
 * outside a group and waits for the outermost ncclGroupEnd inside one
 * (group.cc, ncclAsyncLaunch: "if (ncclGroupDepth == 0) { ret = func(job);
 * ... } else { ... ncclIntruQueueEnqueue(&ncclAsyncJobs, job); }", 2.18.1 to
 * 2.30.7); the calls wrap it in a group of their own, so that a
 * non-blocking one runs on NCCL's thread (standin_init_async, split_async,
 * async_jobs.h); and whether a child shares its parent's resources (G9).
 */
#include <stdlib.h>
#include <string.h>

#include "async_jobs.h"

/* A config's splitShare or shrinkShare as NCCL keeps it: unset reads 0
 * (parseCommConfig's NCCL_CONFIG_DEFAULT), NCCL_COMM_SPLIT_SHARE_RESOURCES
 * or NCCL_COMM_SHRINK_SHARE_RESOURCES, when set, replaces it, and a value
 * other than 0 or 1 becomes 0 (init.cc, envConfigOverride, 2.28.9; 2.18.1
 * for splitShare): only the variable's can be, as parseCommConfig refuses
 * such a config (nccl.c, bad_config). Read at each creation here;
 * NCCL_PARAM reads the variable once per process. */
static int share_setting(int field, const char *variable)
{
    int value = field == NCCL_CONFIG_UNDEF_INT ? 0 : field;
    const char *text = getenv(variable);
    if (text != NULL && text[0] != '\0')
        value = (int)strtol(text, NULL, 0);
    return value == 1;
}

/* c's own splitShare and shrinkShare, from config (NULL: from parent's,
 * copyCommConfig; neither: NCCL_CONFIG_INITIALIZER's). */
void standin_share_config(ncclComm_t c, const ncclConfig_t *config, ncclComm_t parent)
{
    int split = config != NULL ? config->splitShare
                : parent != NULL ? parent->split_share : NCCL_CONFIG_UNDEF_INT;
    int shrink = config != NULL ? config->shrinkShare
                 : parent != NULL ? parent->shrink_share : NCCL_CONFIG_UNDEF_INT;
    c->split_share = share_setting(split, "NCCL_COMM_SPLIT_SHARE_RESOURCES");
    c->shrink_share = share_setting(shrink, "NCCL_COMM_SHRINK_SHARE_RESOURCES");
}

/* NCCL's async job for a creation, split or shrink (init.cc's
 * ncclCommInitRankAsyncJob), run at once outside a group and held for the
 * outermost ncclGroupEnd inside one (standin_job). */
typedef struct comm_job {
    standin_job base;     /* base.comm: the new communicator, or the parent */
    ncclUniqueId id;      /* creation: copied, as NCCL copies the ids */
    int nranks, rank;
    ncclComm_t *newcomm;  /* split, shrink: written once done */
    unsigned char *kept;  /* shrink: the parent's ranks kept; NULL: a split */
    int color, key, child_nonblocking, share, failing;
    ncclConfig_t config;  /* split, shrink: the child's, when given */
    int has_config;
    const char *call;
    standin_net *net;     /* on an async job's thread: what it made */
    int stuck;
} comm_job;

/* The creation's bootstrap, done by the job: *comm over its connections.
 * Held, the outermost ncclGroupEnd runs it and a non-blocking group
 * returns ncclInProgress with the communicator in progress (group.cc,
 * ncclGroupEndInternal sets it on every job's comm, 2.18.1 to 2.30.7). */
static ncclResult_t init_run(standin_job *base)
{
    comm_job *job = (comm_job *)base;
    ncclComm_t c = base->comm;
    standin_net *net = NULL;
    int stuck = 0, failing = job->failing;
    /* A blocking rank that fails never comes to the bootstrap (nccl.c). */
    ncclResult_t res = failing && !c->nonblocking
                           ? ncclSuccess
                           : standin_bootstrap_init(&job->id, job->nranks, job->rank, failing,
                                                    &net, &stuck);
    free(job);
    c->pending = 0;
    if (res == ncclSuccess && failing)
        res = standin_fail(ncclSystemError, STANDIN_INJECTED_INIT);
    if (res != ncclSuccess) {
        standin_net_free(net);
        c->async_result = res;
        return c->nonblocking ? standin_comm_marked_started(c, res, "ncclGroupEnd") : res;
    }
    standin_comm_attach(c, net);
    standin_trace("ncclGroupEnd ran the held ncclCommInitRank");
    if (c->nonblocking && !c->stuck)
        return standin_comm_marked_started(c, ncclSuccess, "ncclGroupEnd");
    return c->nonblocking ? ncclInProgress : ncclSuccess;
}

/* A job a failed group never runs (group.cc, groupCleanup): a
 * non-blocking job's communicator keeps the group's error; a creation's
 * stays never initialised. */
static void job_drop(standin_job *base, ncclResult_t why)
{
    comm_job *job = (comm_job *)base;
    if (base->comm->nonblocking)
        base->comm->async_result = why;
    standin_trace("%s dropped: its group failed", job->call);
    free(job->kept);
    free(job);
}

ncclResult_t standin_init_hold(ncclComm_t *comm, const ncclUniqueId *id, int nranks, int rank,
                               int nonblocking, int failing, const ncclConfig_t *config)
{
    comm_job *job = calloc(1, sizeof *job);
    ncclComm_t c = job != NULL ? standin_comm_alloc(nonblocking, NULL) : NULL;
    if (c == NULL) {
        free(job);
        return standin_fail(ncclSystemError, "out of memory");
    }
    standin_share_config(c, config, NULL);
    c->pending = 1;
    *job = (comm_job){.base = {.comm = c, .run = init_run, .drop = job_drop},
                      .id = *id, .nranks = nranks, .rank = rank, .failing = failing,
                      .call = "ncclCommInitRank"};
    standin_group_hold(&job->base);
    standin_trace("ncclCommInitRank held for the outermost ncclGroupEnd");
    *comm = c;
    return ncclSuccess;
}

/* The split's or shrink's work, done by its job on the parent (init.cc,
 * ncclCommInitChildComm queues ncclCommInitRankFunc with the parent as the
 * job's comm, 2.28.9): every rank of the parent takes part, those without
 * a colour too (commGetSplitInfo, then bootstrapSplit), a shrink's excluded
 * ranks excepted. A failing rank of a blocking parent never comes (the
 * others wait in the gather); of a non-blocking one, it tells the others,
 * whose communicator of its colour never forms. The child joins the
 * parent's resources when job->share (G9). Outside a group a non-blocking
 * parent's call returns ncclSuccess with the parent in progress; held, the
 * outermost ncclGroupEnd returns ncclInProgress (group.cc,
 * ncclGroupEndInternal). *newcomm is written when the parent is seen done,
 * as NCCL's thread writes it at the end of ncclCommInitRankFunc. */
/* The child over net (NULL: this rank is in no child), in the job's mode
 * and sharing its parent's resources as the job says. */
static ncclResult_t make_child(comm_job *job, ncclComm_t parent, standin_net *net,
                               ncclComm_t *child)
{
    if (net == NULL)
        return ncclSuccess;
    ncclResult_t res = standin_comm_new(net, 0, job->share ? parent : NULL, child);
    if (*child != NULL) {
        (*child)->nonblocking = job->child_nonblocking;
        standin_share_config(*child, job->has_config ? &job->config : NULL, parent);
    }
    return res;
}

static ncclResult_t split_run(comm_job *job, int held)
{
    ncclComm_t comm = job->base.comm, child = NULL;
    standin_net *net = NULL;
    int stuck = 0;
    ncclResult_t res = ncclSuccess;
    if (!job->failing || comm->nonblocking) {   /* a failing blocking rank never comes */
        standin_comm_enter(comm, job->call);
        res = standin_bootstrap_split(comm->net, job->kept, job->color, job->key, job->failing,
                                      &net, &stuck);
        standin_comm_leave(comm);
    }
    if (res == ncclSuccess && job->failing)
        res = standin_fail(ncclSystemError, STANDIN_INJECTED_SPLIT);
    if (res == ncclSuccess)
        res = make_child(job, comm, net, &child);
    ncclComm_t *newcomm = job->newcomm;
    const char *call = held ? "ncclGroupEnd" : job->call;
    free(job->kept);
    free(job);
    /* A non-blocking group's failed job leaves its error on the parent. */
    if (res != ncclSuccess && held && comm->nonblocking)
        return standin_comm_marked_started(comm, res, call);
    if (res != ncclSuccess || !comm->nonblocking) {
        if (res == ncclSuccess)
            *newcomm = child;   /* ready: the call, or the group's end, blocked */
        return res;
    }
    if (stuck) {
        comm->in_progress = -1;
        standin_trace("%s returned %s, the communicator in progress for ever (a peer never "
                      "joins)", call, held ? "ncclInProgress" : "ncclSuccess");
        return held ? ncclInProgress : ncclSuccess;
    }
    comm->split_child = child;
    comm->split_out = newcomm;
    return held ? standin_comm_marked_started(comm, ncclSuccess, call)
                : standin_comm_started_success(comm, call);
}

static ncclResult_t split_held_run(standin_job *base)
{
    comm_job *job = (comm_job *)base;
    standin_trace("ncclGroupEnd runs the held %s", job->call);
    return split_run(job, 1);
}

/* A non-blocking parent's split or shrink outside a group on an async
 * job's thread: NCCL's call opens a group of its own around
 * ncclAsyncLaunch of ncclCommInitRankFunc on the parent, and its
 * ncclGroupEndInternal, the group being non-blocking, runs it on the
 * group thread (init.cc ncclCommSplit 2.18.1, 2.22.3;
 * ncclCommInitChildComm 2.28.9). The thread only all-gathers over the
 * parent's connections and connects the child's; the child is made on
 * the caller (split_finish). An abort fails the parent's connections
 * (threads.c). */
static ncclResult_t split_work(void *arg)
{
    comm_job *job = arg;
    return standin_bootstrap_split(job->base.comm->net, job->kept, job->color, job->key, 0,
                                   &job->net, &job->stuck);
}

static void split_finish(ncclComm_t comm, void *arg, ncclResult_t res)
{
    comm_job *job = arg;
    ncclComm_t child = NULL;
    if (res == ncclSuccess)
        res = make_child(job, comm, job->net, &child);
    if (res != ncclSuccess) {
        comm->async_result = res;
    } else if (job->stuck) {
        comm->in_progress = -1;
        standin_trace("%s's job done: in progress for ever (a peer never joins)", job->call);
    } else {
        comm->split_child = child;
        comm->split_out = job->newcomm;
    }
    free(job->kept);
    free(job);
}

static ncclResult_t split_async(comm_job *job)
{
    ncclComm_t comm = job->base.comm;
    standin_thread_job *thread = standin_async_job_new(split_work, split_finish, NULL, job);
    if (thread == NULL) {
        free(job->kept);
        free(job);
        return standin_fail(ncclSystemError, "out of memory");
    }
    const char *call = job->call;
    standin_thread_link(comm, thread);
    ncclResult_t res = standin_comm_started_success(comm, call);
    standin_thread_start(thread, call);
    return res;
}

/* Run job now, outside a group (on a thread when the parent is
 * non-blocking, the injected failure excepted), or hold it for the
 * outermost group end; *newcomm stays NULL until it is done ("*newcomm
 * should be NCCL_COMM_NULL until comm split fully complete",
 * ncclCommInitChildComm). */
static ncclResult_t split_start(comm_job *job)
{
    if (standin_group_depth() == 0 && job->base.comm->nonblocking && !job->failing)
        return split_async(job);
    if (standin_group_depth() == 0)
        return split_run(job, 0);
    job->base.run = split_held_run;
    job->base.drop = job_drop;
    standin_group_hold(&job->base);
    standin_trace("%s held for the outermost ncclGroupEnd", job->call);
    return ncclSuccess;
}

/* A split or shrink job on parent comm, the child's mode and sharing read
 * as NCCL reads them: the child inherits comm's blocking mode
 * (copyCommConfig) or takes config's (parseCommConfig: unset means
 * blocking), NCCL_COMM_BLOCKING overriding either (env_blocking); it
 * shares comm's resources when COMM's config says so (G9:
 * ncclCommInitChildComm sets "comm->shareResources = ... (isShrink ? (!(flags
 * & NCCL_SHRINK_ABORT) && comm->config.shrinkShare) :
 * comm->config.splitShare)", 2.28.9; ncclCommSplit 2.18.1 tests
 * comm->config.splitShare), whatever config says. */
static comm_job *job_new(ncclComm_t comm, ncclComm_t *newcomm, ncclConfig_t *config, int shrink,
                         int flags)
{
    comm_job *job = calloc(1, sizeof *job);
    if (job == NULL)
        return NULL;
    job->base.comm = comm;
    job->newcomm = newcomm;
    job->child_nonblocking =
        !standin_env_blocking(config != NULL ? config->blocking != 0 : !comm->nonblocking, 0);
    job->share = shrink ? comm->shrink_share && !(flags & NCCL_SHRINK_ABORT) : comm->split_share;
    job->has_config = config != NULL;
    if (config != NULL)
        job->config = *config;
    job->call = shrink ? "ncclCommShrink" : "ncclCommSplit";
    return job;
}

ncclResult_t standin_split_start(ncclComm_t comm, ncclComm_t *newcomm, ncclConfig_t *config,
                                 int color, int key, unsigned char *kept, int shrink_flags,
                                 int failing)
{
    comm_job *job = job_new(comm, newcomm, config, kept != NULL, shrink_flags);
    if (job == NULL) {
        free(kept);
        return standin_fail(ncclSystemError, "out of memory");
    }
    job->color = color;
    job->key = key;
    job->kept = kept;
    job->failing = failing;
    return split_start(job);
}

/* A non-blocking creation outside a group. NCCL's ncclCommInitRankConfig
 * opens a group of its own around ncclCommInitRankDev, whose
 * ncclAsyncLaunch queues the job (ncclCommInitRankFunc: bootstrap,
 * transports), and ncclGroupEndInternal, the group being non-blocking,
 * sets the communicator's async error to ncclInProgress, links it to the
 * group job and runs groupLaunch on a pthread (init.cc, group.cc; 2.18.1,
 * 2.22.3, 2.28.9); asyncJobLaunch then runs the job on a thread of its own
 * (2.18.1, 2.22.3) or, when it is alone, on that one (2.28.9): one thread
 * here. It is joined where the launch thread is (threads.c). */
typedef struct create_job {
    ncclUniqueId id;
    int nranks, rank;
    standin_net *net;   /* NULL: a peer never joins (standin_comm_attach) */
    standin_cancel cancel;
} create_job;

static ncclResult_t create_work(void *arg)
{
    create_job *job = arg;
    int stuck = 0;
    return standin_bootstrap_cancellable(&job->id, job->nranks, job->rank, 0, &job->net, &stuck,
                                         &job->cancel);
}

/* On the caller: the communicator over the job's connections, stuck when a
 * peer never joined, or in the job's error. */
static void create_finish(ncclComm_t c, void *arg, ncclResult_t res)
{
    create_job *job = arg;
    if (res == ncclSuccess)
        standin_comm_attach(c, job->net);
    else
        standin_net_free(job->net);
    if (res == ncclSuccess && c->stuck) {
        c->in_progress = -1;
        standin_trace("ncclCommInitRank's job done: in progress for ever (a peer never joins)");
    }
    free(job);
}

static void create_cancel(void *arg)
{
    standin_cancel_fire(&((create_job *)arg)->cancel);
}

ncclResult_t standin_init_async(ncclComm_t *comm, const ncclUniqueId *id, int nranks, int rank,
                                const ncclConfig_t *config)
{
    create_job *job = calloc(1, sizeof *job);
    standin_thread_job *thread =
        job != NULL ? standin_async_job_new(create_work, create_finish, create_cancel, job)
                    : NULL;
    ncclComm_t c = thread != NULL ? standin_comm_alloc(1, NULL) : NULL;
    if (c == NULL) {
        free(job);
        standin_thread_discard(thread);
        return standin_fail(ncclSystemError, "out of memory");
    }
    *job = (create_job){.id = *id, .nranks = nranks, .rank = rank};
    standin_cancel_init(&job->cancel);
    standin_share_config(c, config, NULL);
    standin_thread_link(c, thread);
    *comm = c;
    ncclResult_t res = standin_comm_marked_started(c, ncclSuccess, "ncclCommInitRank");
    standin_thread_start(thread, "ncclCommInitRank");
    return res;
}
