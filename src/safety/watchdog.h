/*
 * The watchdog: a thread per rank that ends the run when the engine makes no
 * progress for a set time (-T), so a hung collective costs minutes, not a
 * node-night. The engine says what it is doing (cb_watchdog_doing) and bumps
 * a counter at every launch (cb_watchdog_tick); the thread reads both and, on
 * expiry, prints what this rank was doing, calls the abort hook (the backend
 * aborts its communicator) in a thread of its own, waits for it at most the
 * -T limit (1 to 10 s), and ends the process with CB_EXIT_TIMEOUT (or the
 * status set with cb_watchdog_set_exit), which makes the launcher end the
 * other ranks.
 *
 * With a side channel (safety/sidechannel.h), the thread also serves it:
 * where any rank's watchdog fires, rank 0's asks every rank where it is,
 * prints one merged hang report (safety/hangreport.h), hands it to the
 * report hook (the outputs), and tells every rank to exit; a rank prints
 * its own message only when rank 0 makes no report.
 *
 * main starts one before MPI_Init (-T read from the command line first),
 * so that a rank stopped or lost during start-up (MPI_Init, the command
 * line's agreement, the side channel's set-up) ends the run too; the
 * engine stops it once its own watchdog runs.
 *
 * On rank 0 the thread also watches for SIGINT and SIGTERM (safety/
 * signals.h), with or without -T, and calls the signal hook once: the
 * engine's finishes the output files at once, with no MPI call and no
 * peer, whatever the main thread is blocked in.
 */
#ifndef CB_WATCHDOG_H
#define CB_WATCHDOG_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "safety/hangreport.h"
#include "safety/sidechannel.h"

typedef struct cb_watchdog {
    pthread_t thread;
    int running;
    double limit;                  /* seconds without progress */
    atomic_ulong progress;         /* bumped by the engine */
    atomic_int stop;
    atomic_long iteration;         /* last unit launched in a loop, -1 outside */
    atomic_long units;             /* units in the loop, 0 outside */
    atomic_ulong launches;         /* units launched since start, for the hang report */
    atomic_ulong steps;            /* steps (doing, loops) begun since start */
    pthread_mutex_t lock;          /* guards doing and the abort hook */
    int wake[2];                   /* a pipe: cb_watchdog_stop wakes the thread */
    char doing[CB_HANG_DOINGLEN];
    char op[CB_HANG_OPLEN];        /* the measurement's collective and size */
    uint64_t bytes;
    double since;                  /* the watching thread's: when progress was last seen */
    int fired;                     /* the watching thread's: this rank's limit passed */
    cb_sidechannel *side;          /* NULL: no hang report */
    void (*report_hook)(void *ctx, const cb_hang_report *rep); /* rank 0, may be NULL */
    void *report_ctx;
    int rank;                      /* -1 while unknown (before MPI_Init) */
    char host[64];
    void (*signal_hook)(void *ctx, int sig); /* rank 0, may be NULL */
    void *signal_ctx;
    int signal_seen;               /* the watching thread's: the hook was called */
    void (*abort_hook)(void *ctx); /* may be NULL */
    void (*firing_hook)(void *ctx); /* the hook as read on expiry, and its ctx */
    void *firing_ctx;
    atomic_int abort_returned;     /* the hook, run in a thread of its own, returned */
    void *abort_ctx;
    int exit_code;                 /* the status on expiry: CB_EXIT_TIMEOUT unless set */
    atomic_int ending;             /* the watching thread is ending the rank */
    void (*lost_hook)(void *ctx, const char *why); /* set while a peer's end is a loss */
    void *lost_ctx;
} cb_watchdog;

/* Start watching; limit <= 0 never ends the run, and starts no thread
 * unless always is set (the signal hook needs the thread). side (may be
 * NULL) is the hang report's side channel, opened, which the thread then
 * serves. rank is -1 where not yet known. Returns 0, or -1 when the thread
 * cannot be made. */
int cb_watchdog_start(cb_watchdog *w, double limit, int rank, const char *host,
                      cb_sidechannel *side, int always);

/* 1 once the watching thread has begun to end the rank (its limit passed,
 * or rank 0's report said exit): what it then breaks is not a failure of
 * its own (cb_ctl_guard's ending, with w as ctx). */
int cb_watchdog_ending(void *w);

/* The rank, once known (after MPI_Init), for the messages. */
void cb_watchdog_set_rank(cb_watchdog *w, int rank);

/* What runs on the watchdog thread, once, within a turn (0.1 s) of the
 * first SIGINT or SIGTERM (hook NULL: nothing). */
void cb_watchdog_set_signal(cb_watchdog *w, void (*hook)(void *ctx, int sig), void *ctx);

/* What the engine is doing now, for the message; also counts as progress. */
void cb_watchdog_doing(cb_watchdog *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* One unit of progress (a launch, a completed wait). */
static inline void cb_watchdog_tick(cb_watchdog *w)
{
    /* One writer, the rank's own thread: a plain load and store, no locked
     * read-modify-write in the timed span; the watchdog only reads. */
    unsigned long now = atomic_load_explicit(&w->progress, memory_order_relaxed);
    atomic_store_explicit(&w->progress, now + 1, memory_order_relaxed);
}

/* A loop of units (iterations, graph launches) begins: the message will say
 * how far it got. */
static inline void cb_watchdog_loop(cb_watchdog *w, long units)
{
    unsigned long n = atomic_load_explicit(&w->steps, memory_order_relaxed);
    atomic_store_explicit(&w->steps, n + 1, memory_order_relaxed);
    atomic_store_explicit(&w->iteration, -1, memory_order_relaxed);
    atomic_store_explicit(&w->units, units, memory_order_relaxed);
    cb_watchdog_tick(w);
}

/* Unit i of the loop was launched: a few relaxed stores, cheap enough for
 * the timed span. */
static inline void cb_watchdog_at(cb_watchdog *w, long i)
{
    unsigned long n = atomic_load_explicit(&w->launches, memory_order_relaxed);
    atomic_store_explicit(&w->launches, n + 1, memory_order_relaxed);
    atomic_store_explicit(&w->iteration, i, memory_order_relaxed);
    cb_watchdog_tick(w);
}

/* The measurement now begun (op, its size in bytes), for the hang report. */
void cb_watchdog_subject(cb_watchdog *w, const char *op, uint64_t bytes);

/* Rank 0: what receives the merged hang report before the process ends
 * (the engine's outputs). Runs on the watchdog thread. */
void cb_watchdog_set_report(cb_watchdog *w, void (*hook)(void *ctx, const cb_hang_report *rep),
                            void *ctx);

/* The hook that aborts the backend's communicator on expiry. */
void cb_watchdog_set_abort(cb_watchdog *w, void (*hook)(void *ctx), void *ctx);

/* The status the process ends with on expiry (CB_EXIT_TIMEOUT until set). */
void cb_watchdog_set_exit(cb_watchdog *w, int code);

/* While hook is set (NULL: from then on not), a side channel link that
 * closes at its far end is a peer that ended mid-run (SIGKILL, the OOM
 * killer, a crash): this rank calls hook with why (rank 0 finishes its
 * outputs), says so naming the rank and host, rank 0 tells the others to
 * end, and it exits with status 1, before a launcher's SIGTERM or SIGKILL
 * can cost rank 0 its files. Unset before the last agreement: a rank that
 * passed it closes its link as it leaves. */
void cb_watchdog_set_lost(cb_watchdog *w, void (*hook)(void *ctx, const char *why), void *ctx);

void cb_watchdog_stop(cb_watchdog *w);

#endif
