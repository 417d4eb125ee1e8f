/*
 * The hang report: when the watchdog (-T) fires on any rank, rank 0 asks
 * every rank over the side channel (safety/sidechannel.h) where it is, and
 * merges the answers into one report that names the ranks and hosts that
 * are behind or silent and what the rest were waiting in. This file is the
 * merge, without sockets, so that a unit test can feed it answers.
 */
#ifndef CB_HANGREPORT_H
#define CB_HANGREPORT_H

#include <stdint.h>
#include <stdio.h>

#define CB_HANG_HOSTLEN 64
#define CB_HANG_DOINGLEN 384
#define CB_HANG_OPLEN 48
#define CB_HANG_LINELEN 640
#define CB_HANG_MAXLINES 12

/* One rank's position as it answers: a plain record sent as bytes between
 * ranks of the same program. */
typedef struct cb_hang_state {
    int32_t rank;
    int32_t pid;
    int32_t fired;             /* its own watchdog had fired */
    int32_t reserved;
    char host[CB_HANG_HOSTLEN];
    char doing[CB_HANG_DOINGLEN]; /* the step, as the watchdog's message says it */
    char op[CB_HANG_OPLEN];    /* the collective of the last measurement begun, "" before */
    uint64_t bytes;            /* and its size */
    int64_t iteration;         /* last unit launched in the loop running, -1 none */
    int64_t units;             /* units in that loop, 0 outside one */
    uint64_t launches;         /* launches made since start-up */
    uint64_t step;             /* steps begun since start-up (the engine's doing and loops) */
    double idle_s;             /* seconds since its last progress */
} cb_hang_state;

/* How a rank answered rank 0's question. */
typedef enum cb_hang_answer {
    CB_HANG_ANSWERED,
    CB_HANG_SILENT,     /* connected, said nothing before the deadline */
    CB_HANG_LEFT,       /* its side channel had closed: it had ended */
    CB_HANG_UNREACHED   /* never joined the side channel at start-up */
} cb_hang_answer;

typedef struct cb_hang_rank {
    cb_hang_state state;   /* rank and host always; the rest when answered */
    cb_hang_answer answer;
    int behind;            /* answered, and short of the furthest rank */
} cb_hang_rank;

typedef struct cb_hang_report {
    int nranks;
    int trigger;           /* the rank whose watchdog fired first */
    double limit_s;        /* -T */
    double wait_s;         /* how long rank 0 waited for answers */
    int answered, silent, left, behind;
    int furthest;          /* a rank at the furthest position, -1 when none answered */
    cb_hang_rank *ranks;   /* nranks, by rank */
    int nlines;
    char lines[CB_HANG_MAXLINES][CB_HANG_LINELEN];   /* "# Hang: ..." */
} cb_hang_report;

/* Where a state is, as words: "allreduce ..., warmup, 3 of 20 launched". */
void cb_hang_where(const cb_hang_state *s, char *buf, size_t len);

/* From rep->ranks (answers filled): the counts, who is behind, the
 * furthest rank and the lines. */
void cb_hang_merge(cb_hang_report *rep);

/* The lines, one per line of f. */
void cb_hang_print(const cb_hang_report *rep, FILE *f);

/* The name of an answer for the JSON document ("answered", "silent"...). */
const char *cb_hang_answer_name(cb_hang_answer a);

#endif
