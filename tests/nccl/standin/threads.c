/*
 * NCCL's launch thread in the stand-in (docs/design/nccl-contract.md, G1):
 * where NCCL hands a launch to a thread of its own, the stand-in starts a
 * real pthread that puts the launch's operations on their streams, so that
 * the thread's cost is paid and a caller who reads a stream or an output
 * before the communicator is seen done races the launch as on a GPU.
 *
 * NCCL's rule (group.cc, ncclGroupEndInternal): a non-blocking group
 * (ncclGroupBlocking == 0) at its outermost end creates one thread
 * (pthread_create of ncclAsyncJobMain with groupLaunchNonBlocking) and
 * returns ncclInProgress, every member's async error set to ncclInProgress
 * and linked to that job (comm->groupJob), from v2.23.4-1 always, through
 * v2.22.3-1 (and v2.19.3-1) only when the group holds preconnects or async
 * jobs. A call outside a group is such a group of one (enqueue.cc,
 * ncclEnqueueCheck opens and ends one). On the thread groupLaunch connects
 * (asyncJobLaunch), enqueues the kernels (doLaunches), then sets each
 * non-blocking member's async error to the result: the communicator leaves
 * ncclInProgress when the work is on its stream. The thread is joined
 * (ncclGroupJobComplete, pthread_join in ncclAsyncJobComplete) by the next
 * ncclCommEnsureReady of a linked communicator once it is done: its next
 * collective, send or receive (enqueue.cc, ncclEnqueueCheck), destroy or
 * abort (init.cc), v2.19.3-1 to v2.28.9-1; from v2.26.2-1 also by
 * ncclCommGetAsyncError itself once it says ncclSuccess (init.cc). A group
 * of several communicators has one thread, joined once (2.28.9: the job's
 * "joined" flag and groupRefCount). ncclCommAbort sets the abort flag
 * first, which the thread sees (ncclGroupJobAbort, group.cc).
 *
 * An async job (async_jobs.h) runs on such a thread too: a non-blocking
 * creation's bootstrap, or a non-blocking parent's split or shrink, outside
 * a group (jobs.c), traced "async-job", its result given to the
 * communicator on the caller's thread. Not modelled: the threads
 * groupLaunch starts and joins itself for each async job and preconnect
 * (asyncJobLaunch), and the jobs held in a group, which the stand-in still
 * runs on the calling thread.
 *
 * State shared with the calling thread (the streams' clocks and captures,
 * the trace, ncclGetLastError's text) is guarded by standin_lock; the
 * communicator itself is the thread's until it is seen done, as NCCL's
 * readiness check forbids the caller any use of it meanwhile.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "async_jobs.h"

struct standin_thread_job {
    pthread_t thread;
    int started;        /* a thread was created (0: ran on the caller) */
    int joined;
    int links;          /* communicators still linked to it */
    int serial;         /* its number in the process, for the trace */
    atomic_int done;
    ncclResult_t result;
    size_t nops;
    size_t room;
    standin_thread_op *ops;
    /* An async job's (NULL: a launch of ops): see async_jobs.h. */
    ncclResult_t (*work)(void *arg);
    void (*finish)(struct ncclComm *comm, void *arg, ncclResult_t res);
    void (*cancel)(void *arg);
    void *arg;
    int finished;       /* finish ran */
};

/* The trace's name for job. */
static const char *kind(const standin_thread_job *job)
{
    return job->work != NULL ? "async-job" : "launch-thread";
}

static pthread_mutex_t state_lock;
static pthread_once_t state_lock_once = PTHREAD_ONCE_INIT;
static atomic_int threads_started;

static void state_lock_init(void)
{
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&state_lock, &attr);
    pthread_mutexattr_destroy(&attr);
}

void standin_lock(void)
{
    pthread_once(&state_lock_once, state_lock_init);
    pthread_mutex_lock(&state_lock);
}

void standin_unlock(void)
{
    pthread_mutex_unlock(&state_lock);
}

int standin_launch_threaded(int nonblocking, int needs_connect)
{
    return nonblocking &&
           (standin_nccl_version() >= NCCL_VERSION(2, 23, 0) || needs_connect);
}

standin_thread_job *standin_thread_new(void)
{
    return calloc(1, sizeof(standin_thread_job));
}

standin_thread_job *standin_async_job_new(ncclResult_t (*work)(void *arg),
                                          void (*finish)(struct ncclComm *comm, void *arg,
                                                         ncclResult_t res),
                                          void (*cancel)(void *arg), void *arg)
{
    standin_thread_job *job = standin_thread_new();
    if (job != NULL)
        *job = (standin_thread_job){.work = work, .finish = finish, .cancel = cancel, .arg = arg};
    return job;
}

int standin_thread_add(standin_thread_job *job, cudaStream_t stream, const standin_op *op,
                       int traced_p2p)
{
    if (job->nops == job->room) {
        size_t room = job->room ? 2 * job->room : 1;
        standin_thread_op *grown = realloc(job->ops, room * sizeof *grown);
        if (grown == NULL)
            return -1;
        job->ops = grown;
        job->room = room;
    }
    job->ops[job->nops].stream = stream;
    job->ops[job->nops].op = *op;
    job->ops[job->nops].traced_p2p = traced_p2p;
    job->nops++;
    return 0;
}

/* The launch's work, in order; the first failure drops the rest, as NCCL
 * abandons a group whose launch failed. */
static ncclResult_t run_ops(standin_thread_job *job)
{
    ncclResult_t res = ncclSuccess;
    for (size_t i = 0; i < job->nops && res == ncclSuccess; i++) {
        const standin_thread_op *q = &job->ops[i];
        if (q->traced_p2p)
            standin_trace("p2p group sends+receives=%zu capturing=%d", q->op.np2p,
                          standin_stream_capturing(q->stream));
        res = standin_stream_submit(q->stream, &q->op);
    }
    return res;
}

static void *thread_main(void *arg)
{
    standin_thread_job *job = arg;
    job->result = job->work != NULL ? job->work(job->arg) : run_ops(job);
    atomic_store(&job->done, 1);
    return NULL;
}

void standin_thread_discard(standin_thread_job *job)
{
    if (job != NULL)
        free(job->ops);
    free(job);
}

void standin_thread_link(struct ncclComm *comm, standin_thread_job *job)
{
    if (comm->launch_job != NULL)   /* never left linked by NCCL's own calls */
        standin_thread_join(comm, "a later launch");
    comm->launch_job = job;
    job->links++;
}

ncclResult_t standin_thread_start(standin_thread_job *job, const char *call)
{
    job->serial = atomic_fetch_add(&threads_started, 1) + 1;
    if (job->work != NULL)
        standin_trace("%s start %d by %s", kind(job), job->serial, call);
    else
        standin_trace("%s start %d by %s ops=%zu", kind(job), job->serial, call, job->nops);
    if (pthread_create(&job->thread, NULL, thread_main, job) != 0) {
        /* NCCL fails the group (PTHREADCHECKGOTO); the stand-in keeps going. */
        standin_violation("the stand-in could not create its %s thread", kind(job));
        thread_main(job);
        return ncclSuccess;
    }
    job->started = 1;
    standin_count(STANDIN_THREAD, 1);
    return ncclSuccess;
}

/* A done job's result reaches comm: an async job's through its finish,
 * once, on the caller's thread (the job's thread never writes comm). */
static void take_result(struct ncclComm *comm, standin_thread_job *job)
{
    if (job->finish != NULL && !job->finished) {
        job->finished = 1;
        job->finish(comm, job->arg, job->result);
    }
    if (job->result != ncclSuccess && comm->async_result == ncclSuccess)
        comm->async_result = job->result;
}

int standin_thread_running(struct ncclComm *comm)
{
    standin_thread_job *job = comm->launch_job;
    if (job == NULL || !atomic_load(&job->done))
        return job != NULL;
    /* Done: the members leave ncclInProgress with the launch's result. */
    take_result(comm, job);
    return 0;
}

void standin_thread_join(struct ncclComm *comm, const char *by)
{
    standin_thread_job *job = comm->launch_job;
    if (job == NULL)
        return;
    comm->launch_job = NULL;
    if (!job->joined) {
        job->joined = 1;
        if (job->started) {
            pthread_join(job->thread, NULL);
            standin_count(STANDIN_THREAD, -1);
        }
        standin_trace("%s join %d by %s", kind(job), job->serial, by);
    }
    take_result(comm, job);
    if (--job->links == 0)
        standin_thread_discard(job);
}

/* NCCL's abort sets the communicator's abort flag, which its thread sees
 * and leaves with an error (ncclGroupJobAbort, group.cc; the bootstrap's
 * sockets check comm->abortFlag, bootstrap.cc 2.28.9); here its
 * connections fail, so that a collective, or a creation, waiting for a
 * peer returns. */
void standin_thread_abort(struct ncclComm *comm)
{
    standin_thread_job *job = comm->launch_job;
    if (job == NULL || atomic_load(&job->done))
        return;
    standin_trace("%s abort %d", kind(job), job->serial);
    if (job->cancel != NULL)
        job->cancel(job->arg);
    else
        standin_net_shutdown(comm->net);
}

void standin_cancel_init(standin_cancel *cancel)
{
    atomic_init(&cancel->fired, 0);
    cancel->fds[0] = cancel->fds[1] = -1;
}

int standin_cancel_watch(standin_cancel *cancel, int slot, int fd)
{
    if (cancel == NULL)
        return 0;
    standin_lock();
    cancel->fds[slot] = fd;
    int fired = atomic_load(&cancel->fired);
    standin_unlock();
    return fired;
}

void standin_cancel_fire(standin_cancel *cancel)
{
    standin_lock();
    atomic_store(&cancel->fired, 1);
    for (int i = 0; i < 2; i++)
        if (cancel->fds[i] >= 0)
            shutdown(cancel->fds[i], SHUT_RDWR);
    standin_unlock();
}
