/* Exit statuses and cross-rank agreement on failure. */
#ifndef CB_AGREEMENT_H
#define CB_AGREEMENT_H

#include "control/control.h"
#include <stddef.h>

/* Exit statuses, documented in nccl-collbench(1). */
enum cb_exit {
    CB_EXIT_OK = 0,      /* every measurement ran and every check passed */
    CB_EXIT_RUNTIME = 1, /* a backend, MPI, memory or file error */
    CB_EXIT_USAGE = 2,   /* bad command line */
    CB_EXIT_TIMEOUT = 3, /* the watchdog (-T) saw no progress and ended the run */
    CB_EXIT_GPU_UNUSABLE = 4, /* --backend auto: an NVIDIA GPU on the bus that no backend can use */
    CB_EXIT_NOTHING = 5, /* nothing was measured (-o scan on one host) */
    CB_EXIT_UNCHECKED = 6, /* --expect formed no expectation for a row it gates */
    CB_EXIT_WRONG = 7,   /* a verified element was wrong, or (-B) an output did not repeat */
    CB_EXIT_SLOW = 8,    /* below a performance threshold: --min-busbw, --expect, scan suspects */
    CB_EXIT_SIGINT = 130, /* stopped by SIGINT after the measurement in progress */
    CB_EXIT_SIGTERM = 143 /* stopped by SIGTERM after the measurement in progress */
};

/* Every exit status with its meaning, for --help: the one list besides
 * the man page. Ends with a NULL meaning. */
typedef struct cb_exit_meaning {
    int code;
    const char *meaning;
} cb_exit_meaning;
extern const cb_exit_meaning cb_exit_meanings[];

#define CB_MSGLEN 512

/* The line after a usage error's message (status 2). */
#define CB_USAGE_HINT "Try 'nccl-collbench --help' for more information."

/* A failure seen by one rank, with the message that explains it. */
typedef struct cb_status {
    int code;              /* enum cb_exit; CB_EXIT_OK when nothing failed */
    int agreed;            /* every rank knows of the failure; it was reported */
    char msg[CB_MSGLEN];   /* one line, no trailing newline */
} cb_status;

void cb_status_clear(cb_status *st);

/* Record a failure (the first one wins); returns code. printf-style. */
int cb_status_set(cb_status *st, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * Collective over comm: every rank learns whether any rank failed. When one
 * did, rank 0 of comm prints the lowest failing rank's message prefixed by
 * that rank and its host, and every rank's *st is set to that rank's code.
 * A failure is reported once: later calls return its code without a word.
 * Returns the agreed code (CB_EXIT_OK when no rank failed).
 */
int cb_status_agree(cb_ctl *comm, cb_status *st);

/* The lowest rank of comm that failed, as every rank learns it. */
typedef struct cb_failure {
    int rank;
    int code;
    char msg[CB_MSGLEN];
    char host[CB_CTL_HOSTLEN];
} cb_failure;

/* Collective over comm: when any rank passes failed, every rank gets the
 * lowest such rank's code, message and host in *out and 1 is returned;
 * otherwise 0. The mechanism under cb_status_agree and cb_backend_agree. */
int cb_first_failure(cb_ctl *comm, int failed, int code, const char *msg, cb_failure *out);

#endif
