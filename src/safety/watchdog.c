#include "safety/watchdog.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "safety/agreement.h"

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* How long the watchdog waits for the abort hook before it exits anyway:
 * the -T limit, kept between these bounds. */
#define CB_WATCHDOG_ABORT_MIN_S 1.0
#define CB_WATCHDOG_ABORT_MAX_S 10.0

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
    double limit = w->limit < CB_WATCHDOG_ABORT_MIN_S   ? CB_WATCHDOG_ABORT_MIN_S
                   : w->limit > CB_WATCHDOG_ABORT_MAX_S ? CB_WATCHDOG_ABORT_MAX_S
                                                        : w->limit;
    double until = now_seconds() + limit;
    const struct timespec nap = {0, 10 * 1000 * 1000};
    while (!atomic_load(&w->abort_returned) && now_seconds() < until)
        nanosleep(&nap, NULL);
    if (!atomic_load(&w->abort_returned)) {
        fprintf(stderr, "nccl-collbench: rank %d (%s): the abort did not return within %.0f s; "
                        "exiting without it\n", w->rank, w->host, limit);
        fflush(stderr);
    }
}

static void *watch(void *arg)
{
    cb_watchdog *w = arg;
    unsigned long seen = atomic_load(&w->progress);
    double since = now_seconds();
    const struct timespec nap = {0, 100 * 1000 * 1000};
    while (!atomic_load(&w->stop)) {
        nanosleep(&nap, NULL);
        unsigned long now_progress = atomic_load(&w->progress);
        double now = now_seconds();
        if (now_progress != seen) {
            seen = now_progress;
            since = now;
            continue;
        }
        if (now - since < w->limit)
            continue;
        char doing[sizeof w->doing];
        pthread_mutex_lock(&w->lock);
        memcpy(doing, w->doing, sizeof doing);
        w->firing_hook = w->abort_hook;
        w->firing_ctx = w->abort_ctx;
        int exit_code = w->exit_code;
        pthread_mutex_unlock(&w->lock);
        long units = atomic_load(&w->units), at = atomic_load(&w->iteration);
        char where[96] = "";
        if (units > 0 && at + 1 >= units)
            snprintf(where, sizeof where, ", all %ld launched, waiting for them to complete", units);
        else if (units > 0)
            snprintf(where, sizeof where, ", %ld of %ld launched", at + 1, units);
        fprintf(stderr,
                "nccl-collbench: rank %d (%s): timeout: no progress for %.0f s (-T) in %s%s; "
                "aborting\n",
                w->rank, w->host, w->limit, doing, where);
        fflush(stderr);
        if (w->firing_hook != NULL)
            abort_bounded(w);
        _exit(exit_code);
    }
    return NULL;
}

int cb_watchdog_start(cb_watchdog *w, double limit, int rank, const char *host)
{
    memset(w, 0, sizeof *w);
    w->limit = limit;
    w->rank = rank;
    w->exit_code = CB_EXIT_TIMEOUT;
    snprintf(w->host, sizeof w->host, "%s", host);
    snprintf(w->doing, sizeof w->doing, "starting");
    atomic_init(&w->progress, 0);
    atomic_init(&w->stop, 0);
    atomic_init(&w->iteration, -1);
    atomic_init(&w->units, 0);
    atomic_init(&w->abort_returned, 0);
    if (limit <= 0)
        return 0;
    if (pthread_mutex_init(&w->lock, NULL) != 0)
        return -1;
    if (pthread_create(&w->thread, NULL, watch, w) != 0) {
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
    cb_watchdog_tick(w);
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

void cb_watchdog_set_exit(cb_watchdog *w, int code)
{
    if (w->running)
        pthread_mutex_lock(&w->lock);
    w->exit_code = code;
    if (w->running)
        pthread_mutex_unlock(&w->lock);
}

void cb_watchdog_stop(cb_watchdog *w)
{
    if (!w->running)
        return;
    atomic_store(&w->stop, 1);
    pthread_join(w->thread, NULL);
    pthread_mutex_destroy(&w->lock);
    w->running = 0;
}
