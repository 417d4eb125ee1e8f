/*
 * The side channel of the hang report: TCP connections from every rank to
 * rank 0, made at start-up, that never pass through the communicator being
 * measured. Only the watchdog thread uses them, and every wait on them has
 * a deadline, so a stopped, dead or cut-off peer costs at most that
 * deadline.
 *
 * Rank 0 listens only on the address the job uses (the loopback when every
 * rank shares its network namespace), serves the connections of the set-up
 * all at once, each with its own deadline, and closes its port when every
 * rank has joined. Every message carries an HMAC-SHA256 under a key that
 * only the job's ranks know: a 256-bit secret from getrandom, given to the
 * ranks over MPI and never sent over TCP, and per link nonces; sequence
 * numbers refuse replays. docs/design/side-channel.md has the design.
 *
 * The protocol, fixed-size messages: a rank says hello (its rank, pid and
 * nonce) and rank 0 welcomes it (its nonce); a rank whose watchdog fires
 * tells rank 0; rank 0 asks every rank where it is, each answers with its
 * state, and rank 0 tells every rank to exit.
 */
#ifndef CB_SIDECHANNEL_H
#define CB_SIDECHANNEL_H

#include "control/control.h"
#include <stddef.h>
#include <stdint.h>

#include "safety/hangreport.h"

struct cb_side_link;

typedef struct cb_sidechannel {
    int rank;
    int nranks;
    int on;                       /* this rank's links are up */
    struct cb_side_link *links;   /* rank 0: one per rank (its own unused); others: to rank 0 */
    int nlinks;
    char host0[CB_HANG_HOSTLEN];  /* rank 0's host */
} cb_sidechannel;

/*
 * Collective over comm: rank 0 listens, every other rank connects to it;
 * host is this rank's, which rank 0 learns over MPI for every rank (the
 * report names each rank's host, joined or not). Returns 0 when every
 * rank joined; otherwise -1, with why set on rank 0 (which ranks could not
 * join), and the channel still on for those that did (the report names
 * the others as never reached).
 */
int cb_sidechannel_open(cb_sidechannel *sc, cb_ctl *comm, const char *host, char *why,
                        size_t why_len);
void cb_sidechannel_close(cb_sidechannel *sc);

/* Not rank 0: whether the link to rank 0 is still up. */
int cb_sidechannel_linked(const cb_sidechannel *sc);

/* This rank's state, from the watchdog, when rank 0 asks. */
typedef void (*cb_side_snapshot)(void *ctx, cb_hang_state *out);

enum cb_side_event {
    CB_SIDE_NONE,
    CB_SIDE_FIRED,   /* rank 0: the watchdog of rank *arg fired */
    CB_SIDE_EXIT,    /* the others: rank 0 says exit with status *arg */
    CB_SIDE_LOST     /* the link to rank *arg closed at its end: that process ended */
};

/* The host of rank r as rank 0 learnt it at start-up (rank 0), or rank
 * 0's (the others, for r = 0); "" when unknown. */
const char *cb_sidechannel_host(const cb_sidechannel *sc, int r);

/* Wait up to wait_ms for messages and handle them: a question is answered
 * with snap's state. A readable wake_fd (-1: none) ends the wait at once,
 * handling nothing. Returns an enum cb_side_event. */
int cb_sidechannel_serve(cb_sidechannel *sc, int wait_ms, int wake_fd, cb_side_snapshot snap,
                         void *ctx, int *arg);

/* Not rank 0: tell rank 0 this rank's watchdog fired. 0, or -1 when the
 * link is down. */
int cb_sidechannel_fired(cb_sidechannel *sc);

/*
 * Rank 0: ask every rank where it is and wait at most wait_s for the
 * answers; rep gets every rank (rep->ranks allocated, free it) with own as
 * rank 0's, then cb_hang_merge. Returns 0, or -1 when out of memory.
 */
int cb_sidechannel_gather(cb_sidechannel *sc, const cb_hang_state *own, int trigger,
                          double limit_s, double wait_s, cb_hang_report *rep);

/* Rank 0: tell every rank to exit with code, and wait at most wait_s for
 * the ranks that answered in rep (every rank when rep is NULL) to go, so
 * that each ends with code itself before the launcher ends it. */
void cb_sidechannel_release(cb_sidechannel *sc, int code, double wait_s,
                            const cb_hang_report *rep);

#endif
