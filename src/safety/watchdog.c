#include "safety/watchdog.h"

#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "safety/agreement.h"
#include "safety/signals.h"

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Who this rank is, for a message: "rank 2 (host)", or before MPI_Init
 * without a rank from the launcher, "pid 1234 (host)". */
static void whoami(cb_watchdog *w, char *buf, size_t len)
{
    pthread_mutex_lock(&w->lock);
    int rank = w->rank;
    pthread_mutex_unlock(&w->lock);
    if (rank >= 0)
        snprintf(buf, len, "rank %d (%s)", rank, w->host);
    else
        snprintf(buf, len, "pid %d (%s)", (int)getpid(), w->host);
}

/* How long the watchdog waits for the abort hook before it exits anyway:
 * the -T limit, kept between these bounds. */
#define CB_WATCHDOG_ABORT_MIN_S 1.0
#define CB_WATCHDOG_ABORT_MAX_S 10.0
/* How long a rank whose watchdog fired waits for rank 0's report beyond
 * rank 0's wait for answers: its writing of the outputs (a bounded wait
 * for them, then the writing itself). */
#define CB_WATCHDOG_REPORT_SLACK_S 8.0
/* How long rank 0 looks again before it calls a rank whose link closed
 * dead (lost_peer). */
#define LOST_GRACE_MS 250

/* What the thread running the abort hook shares with the watchdog. It is
 * detached and may outlive the wait (the process then ends under it), so
 * this lives in the watchdog, which lasts until the process exits. */
static void *run_abort_hook(void *arg)
{
    cb_watchdog *w = arg;
    w->firing_hook(w->firing_ctx);
    atomic_store(&w->abort_returned, 1);
    return NULL;
}

/* How long the watchdog waits for the abort hook before it exits anyway. */
static double abort_limit(const cb_watchdog *w)
{
    return w->limit < CB_WATCHDOG_ABORT_MIN_S   ? CB_WATCHDOG_ABORT_MIN_S
           : w->limit > CB_WATCHDOG_ABORT_MAX_S ? CB_WATCHDOG_ABORT_MAX_S
                                                : w->limit;
}

/* Call the hook in a thread of its own and wait for it a bounded time: an
 * abort that blocks (NCCL's waits for graphs and for its own threads) must
 * never keep this rank from exiting. */
static void abort_bounded(cb_watchdog *w)
{
    pthread_t helper;
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0)
        return;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int started = pthread_create(&helper, &attr, run_abort_hook, w) == 0;
    pthread_attr_destroy(&attr);
    if (!started)
        return;
    double limit = abort_limit(w);
    double until = now_seconds() + limit;
    const struct timespec nap = {0, 10 * 1000 * 1000};
    while (!atomic_load(&w->abort_returned) && now_seconds() < until)
        nanosleep(&nap, NULL);
    if (!atomic_load(&w->abort_returned)) {
        char who[96];
        whoami(w, who, sizeof who);
        fprintf(stderr, "nccl-collbench: %s: the abort did not return within %.0f s; "
                        "exiting without it\n", who, limit);
        fflush(stderr);
    }
}

/* This rank's state, for rank 0's question (on the watching thread). */
static void snapshot(void *ctx, cb_hang_state *out)
{
    cb_watchdog *w = ctx;
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&w->lock);
    memcpy(out->doing, w->doing, sizeof out->doing);
    memcpy(out->op, w->op, sizeof out->op);
    out->bytes = w->bytes;
    pthread_mutex_unlock(&w->lock);
    out->rank = w->rank;
    out->pid = (int32_t)getpid();
    out->fired = w->fired;
    snprintf(out->host, sizeof out->host, "%s", w->host);
    out->iteration = atomic_load(&w->iteration);
    out->units = atomic_load(&w->units);
    out->launches = atomic_load(&w->launches);
    out->step = atomic_load(&w->steps);
    out->idle_s = now_seconds() - w->since;
}

/* The hook and status as they stand now, for the way out. */
static int take_exit(cb_watchdog *w)
{
    atomic_store(&w->ending, 1);
    pthread_mutex_lock(&w->lock);
    w->firing_hook = w->abort_hook;
    w->firing_ctx = w->abort_ctx;
    int exit_code = w->exit_code;
    pthread_mutex_unlock(&w->lock);
    return exit_code;
}

static void leave(cb_watchdog *w, int exit_code)
{
    if (w->firing_hook != NULL)
        abort_bounded(w);
    _exit(exit_code);
}

/* How long rank 0 waits for the ranks' answers: healthy ranks answer within
 * a tenth of a second, so this only bounds the silent ones' cost. */
static double answer_wait(const cb_watchdog *w)
{
    return w->limit < 2.0 ? 2.0 : w->limit > 5.0 ? 5.0 : w->limit;
}


/* This rank's own message, where no hang report speaks for it. */
static void own_message(cb_watchdog *w)
{
    char doing[sizeof w->doing];
    pthread_mutex_lock(&w->lock);
    memcpy(doing, w->doing, sizeof doing);
    pthread_mutex_unlock(&w->lock);
    long units = atomic_load(&w->units), at = atomic_load(&w->iteration);
    char where[96] = "";
    if (units > 0 && at + 1 >= units)
        snprintf(where, sizeof where, ", all %ld launched, waiting for them to complete", units);
    else if (units > 0)
        snprintf(where, sizeof where, ", %ld of %ld launched", at + 1, units);
    char who[96];
    whoami(w, who, sizeof who);
    fprintf(stderr, "nccl-collbench: %s: timeout: no progress for %.0f s (-T) in %s%s; aborting\n",
            who, w->limit, doing, where);
    fflush(stderr);
}

/* Rank 0: ask every rank, print the merged report, hand it to the
 * outputs, tell every rank to exit, and exit. */
static void report_and_exit(cb_watchdog *w, int trigger)
{
    cb_hang_state own;
    snapshot(w, &own);
    int exit_code = take_exit(w);
    pthread_mutex_lock(&w->lock);
    void (*hook)(void *, const cb_hang_report *) = w->report_hook;
    void *ctx = w->report_ctx;
    pthread_mutex_unlock(&w->lock);
    cb_hang_report rep;
    if (cb_sidechannel_gather(w->side, &own, trigger, w->limit, answer_wait(w), &rep) == 0) {
        cb_hang_print(&rep, stderr);
        if (hook != NULL)
            hook(ctx, &rep);
    } else {
        own_message(w);
    }
    cb_sidechannel_release(w->side, exit_code, abort_limit(w) + 1.0, &rep);
    free(rep.ranks);
    leave(w, exit_code);
}

/* Not rank 0: this rank's limit passed. Tell rank 0 and wait for its word
 * (answering its question meanwhile); without it, speak for this rank. */
static void fired_not_root(cb_watchdog *w)
{
    int exit_code = take_exit(w);
    if (cb_sidechannel_fired(w->side) == 0) {
        /* Rank 0 asks, waits answer_wait, writes the outputs (a bounded
         * wait for them, then the writing), then says exit. */
        double until = now_seconds() + answer_wait(w) + CB_WATCHDOG_REPORT_SLACK_S;
        while (cb_sidechannel_linked(w->side) && now_seconds() < until) {
            int code = 0;
            if (cb_sidechannel_serve(w->side, 100, -1, snapshot, w, &code) == CB_SIDE_EXIT)
                leave(w, code);
        }
    }
    own_message(w);
    fprintf(stderr, "# Hang: rank 0 (%s), which makes the hang report, sent none: it is behind, "
            "silent or ended itself\n", w->side->host0);
    fflush(stderr);
    leave(w, exit_code);
}

/* Rank 0 let go after a stop longer than a firing rank waits for the
 * report (SIGSTOP, then the launcher's SIGCONT): the ranks that fired have
 * spoken for themselves, and a report now would find them gone. */
static void thawed_exit(cb_watchdog *w, double frozen)
{
    int exit_code = take_exit(w);
    fprintf(stderr, "nccl-collbench: rank %d (%s): this rank did not run for %.0f s (stopped?); "
            "the ranks that timed out meanwhile reported alone\n", w->rank, w->host, frozen);
    fflush(stderr);
    leave(w, exit_code);
}

/* The process of rank peer ended mid-run (its side channel link closed at
 * its end): see cb_watchdog_set_lost. Returns when the run is over, where
 * a link closing is a rank's ordinary exit. */
static void lost_peer(cb_watchdog *w, int peer)
{
    pthread_mutex_lock(&w->lock);
    void (*hook)(void *, const char *) = w->lost_hook;
    void *ctx = w->lost_ctx;
    pthread_mutex_unlock(&w->lock);
    /* A stop a signal began (rank 0's hook saw it first) ends every rank
     * on its own: a link closing then is a rank leaving, not a death. */
    if (hook == NULL || w->signal_seen)
        return;
    /* Ranks that agreed to stop leave at their own pace, and rank 0 takes
     * back the hook only once its own thread is past that agreement: look
     * again after a moment (well inside a launcher's SIGTERM-to-SIGKILL
     * second) before calling a rank that left dead. */
    poll(&(struct pollfd){w->wake[0], POLLIN, 0}, 1, LOST_GRACE_MS);
    pthread_mutex_lock(&w->lock);
    hook = w->lost_hook;
    ctx = w->lost_ctx;
    pthread_mutex_unlock(&w->lock);
    if (hook == NULL || w->signal_seen || atomic_load(&w->stop))
        return;
    atomic_store(&w->ending, 1);   /* a control plane failing meanwhile waits for this */
    char why[CB_HANG_HOSTLEN + 160];
    snprintf(why, sizeof why, "rank %d (%s) ended during the run: its side channel closed "
             "(killed, as by SIGKILL or the OOM killer, or crashed)", peer,
             cb_sidechannel_host(w->side, peer));
    hook(ctx, why);
    char who[96];
    whoami(w, who, sizeof who);
    fprintf(stderr, "nccl-collbench: %s: %s; this rank ends (status %d)\n", who, why,
            CB_EXIT_RUNTIME);
    fflush(stderr);
    if (w->rank == 0)   /* the others end now too, with the same status */
        cb_sidechannel_release(w->side, CB_EXIT_RUNTIME, 1.0, NULL);
    _exit(CB_EXIT_RUNTIME);
}

/* Rank 0: the first SIGINT or SIGTERM, handed to the signal hook once. */
static void watch_signals(cb_watchdog *w)
{
    int sig = cb_signals_pending();
    if (w->signal_seen || sig == 0)
        return;
    pthread_mutex_lock(&w->lock);
    void (*hook)(void *, int) = w->signal_hook;
    void *ctx = w->signal_ctx;
    pthread_mutex_unlock(&w->lock);
    if (hook == NULL)
        return;   /* not set yet: a later turn calls it */
    /* A launcher's SIGTERM after a rank died (mpirun's, then its SIGKILL a
     * second later) comes after the kernel closed the dead rank's link:
     * that death is the reason, and is reported as such. */
    int peer = 0;
    int event = w->side != NULL && w->side->on
                    ? cb_sidechannel_serve(w->side, 0, -1, snapshot, w, &peer)
                    : CB_SIDE_NONE;
    if (event == CB_SIDE_LOST)
        lost_peer(w, peer);
    /* A peer's watchdog that fired while this rank was stopped (a launcher
     * sends SIGCONT before its SIGTERM) is stale: the signal is the reason,
     * as the main loop's thawed check would say. */
    w->signal_seen = 1;
    hook(ctx, sig);
}

static void *watch(void *arg)
{
    cb_watchdog *w = arg;
    unsigned long seen = atomic_load(&w->progress);
    w->since = now_seconds();
    double turn = w->since, frozen = 0, thawed_until = 0;
    while (!atomic_load(&w->stop)) {
        int event = CB_SIDE_NONE, peer = 0;
        /* 100 ms turns; cb_watchdog_stop's byte on the wake pipe ends one
         * at once, so that stopping costs no launch a turn's rest. */
        if (w->side != NULL && w->side->on)
            event = cb_sidechannel_serve(w->side, 100, w->wake[0], snapshot, w, &peer);
        else
            poll(&(struct pollfd){w->wake[0], POLLIN, 0}, 1, 100);
        if (event == CB_SIDE_EXIT) {   /* rank 0's report ends this rank too */
            take_exit(w);
            leave(w, peer);
        }
        /* Did this thread not run for longer than a firing rank waits for
         * the report? Then this rank was stopped, and makes none. */
        double gap = now_seconds() - turn;
        turn = now_seconds();
        if (gap > answer_wait(w) + CB_WATCHDOG_REPORT_SLACK_S) {
            frozen = gap;   /* what comes in the next -T s is stale */
            thawed_until = turn + w->limit + 1.0;
        }
        if (turn > thawed_until)
            frozen = 0;
        if (event == CB_SIDE_FIRED && frozen > 0)
            thawed_exit(w, frozen);
        if (event == CB_SIDE_FIRED)
            report_and_exit(w, peer);
        if (event == CB_SIDE_LOST)
            lost_peer(w, peer);
        watch_signals(w);
        unsigned long now_progress = atomic_load(&w->progress);
        double now = now_seconds();
        if (now_progress != seen) {
            seen = now_progress;
            w->since = now;
            continue;
        }
        if (w->limit <= 0 || now - w->since < w->limit)
            continue;
        w->fired = 1;
        if (w->side != NULL && w->side->on && w->rank == 0 && frozen > 0)
            thawed_exit(w, frozen);
        if (w->side != NULL && w->side->on && w->rank == 0)
            report_and_exit(w, 0);
        if (w->side != NULL && w->side->on)
            fired_not_root(w);
        int exit_code = take_exit(w);
        own_message(w);
        leave(w, exit_code);
    }
    return NULL;
}

int cb_watchdog_ending(void *w)
{
    return atomic_load(&((cb_watchdog *)w)->ending);
}

int cb_watchdog_start(cb_watchdog *w, double limit, int rank, const char *host,
                      cb_sidechannel *side, int always)
{
    memset(w, 0, sizeof *w);
    w->limit = limit;
    w->rank = rank;
    w->exit_code = CB_EXIT_TIMEOUT;
    snprintf(w->host, sizeof w->host, "%s", host);
    snprintf(w->doing, sizeof w->doing, "starting");
    atomic_init(&w->progress, 0);
    atomic_init(&w->stop, 0);
    atomic_init(&w->ending, 0);
    atomic_init(&w->iteration, -1);
    atomic_init(&w->units, 0);
    atomic_init(&w->launches, 0);
    atomic_init(&w->steps, 0);
    w->side = side;
    atomic_init(&w->abort_returned, 0);
    if (limit <= 0 && !always)
        return 0;
    if (pthread_mutex_init(&w->lock, NULL) != 0)
        return -1;
    if (pipe(w->wake) != 0) {
        pthread_mutex_destroy(&w->lock);
        return -1;
    }
    for (int i = 0; i < 2; i++)
        fcntl(w->wake[i], F_SETFD, FD_CLOEXEC);
    if (pthread_create(&w->thread, NULL, watch, w) != 0) {
        close(w->wake[0]);
        close(w->wake[1]);
        pthread_mutex_destroy(&w->lock);
        return -1;
    }
    w->running = 1;
    return 0;
}

void cb_watchdog_doing(cb_watchdog *w, const char *fmt, ...)
{
    if (!w->running)
        return;
    pthread_mutex_lock(&w->lock);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->doing, sizeof w->doing, fmt, ap);
    va_end(ap);
    pthread_mutex_unlock(&w->lock);
    atomic_store_explicit(&w->units, 0, memory_order_relaxed);
    unsigned long n = atomic_load_explicit(&w->steps, memory_order_relaxed);
    atomic_store_explicit(&w->steps, n + 1, memory_order_relaxed);
    cb_watchdog_tick(w);
}

void cb_watchdog_subject(cb_watchdog *w, const char *op, uint64_t bytes)
{
    if (!w->running)
        return;
    pthread_mutex_lock(&w->lock);
    snprintf(w->op, sizeof w->op, "%s", op);
    w->bytes = bytes;
    pthread_mutex_unlock(&w->lock);
}

void cb_watchdog_set_report(cb_watchdog *w, void (*hook)(void *ctx, const cb_hang_report *rep),
                            void *ctx)
{
    if (w->running)
        pthread_mutex_lock(&w->lock);
    w->report_hook = hook;
    w->report_ctx = ctx;
    if (w->running)
        pthread_mutex_unlock(&w->lock);
}

void cb_watchdog_set_abort(cb_watchdog *w, void (*hook)(void *ctx), void *ctx)
{
    if (w->running)
        pthread_mutex_lock(&w->lock);
    w->abort_hook = hook;
    w->abort_ctx = ctx;
    if (w->running)
        pthread_mutex_unlock(&w->lock);
}

void cb_watchdog_set_rank(cb_watchdog *w, int rank)
{
    if (w->running)
        pthread_mutex_lock(&w->lock);
    w->rank = rank;
    if (w->running)
        pthread_mutex_unlock(&w->lock);
}

void cb_watchdog_set_signal(cb_watchdog *w, void (*hook)(void *ctx, int sig), void *ctx)
{
    if (w->running)
        pthread_mutex_lock(&w->lock);
    w->signal_hook = hook;
    w->signal_ctx = ctx;
    if (w->running)
        pthread_mutex_unlock(&w->lock);
}

void cb_watchdog_set_exit(cb_watchdog *w, int code)
{
    if (w->running)
        pthread_mutex_lock(&w->lock);
    w->exit_code = code;
    if (w->running)
        pthread_mutex_unlock(&w->lock);
}

void cb_watchdog_set_lost(cb_watchdog *w, void (*hook)(void *ctx, const char *why), void *ctx)
{
    if (w->running)
        pthread_mutex_lock(&w->lock);
    w->lost_hook = hook;
    w->lost_ctx = ctx;
    if (w->running)
        pthread_mutex_unlock(&w->lock);
}

void cb_watchdog_stop(cb_watchdog *w)
{
    if (!w->running)
        return;
    atomic_store(&w->stop, 1);
    ssize_t wrote = write(w->wake[1], "", 1);
    (void)wrote;   /* without it the thread ends at its turn's end */
    pthread_join(w->thread, NULL);
    close(w->wake[0]);
    close(w->wake[1]);
    pthread_mutex_destroy(&w->lock);
    w->running = 0;
}
