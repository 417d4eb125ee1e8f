/*
 * The sweep engine's internal header, shared by the files of src/engine/
 * (HACKING.md, "The engine", and docs/design/engine.md draw them). Each
 * part's state is a sub-struct of struct engine owned by one file, which
 * alone sets and frees it; the others read it. The engine knows collectives
 * only through the collective table, communication libraries only through
 * a backend's ops table, and output formats only through printers. The
 * control plane (control/control.h: MPI or TCP) carries what every backend
 * shares: exchanging metadata, agreeing on failures and combining times.
 */
#ifndef CB_ENGINE_INT_H
#define CB_ENGINE_INT_H

#include "engine/engine.h"

#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "common/parse.h"
#include "engine/eta.h"
#include "engine/feature.h"
#include "common/stats.h"
#include "plan.h"
#include "printers/printer.h"
#include "result.h"
#include "safety/agreement.h"
#include "safety/signals.h"
#include "host/sysinfo.h"
#include "safety/sidechannel.h"
#include "safety/watchdog.h"

/* Room for the feature table's lines. */
#define ENG_MAX_FEATURES 8

/* Share of the memory a backend reports that buffers may take. */
#define CB_MEMORY_SHARE 0.8

/* Where the run is, for the progress line's share done: the collective of
 * -o, its layout or implementation pass, and the type, reduction and root
 * combination of the pass, each of how many. */
typedef struct run_position {
    int coll, ncolls, pass, npasses, combo, ncombos;
} run_position;

/* groups.c's: the ranks measured together, comm itself or with --split
 * this rank's group, numbered by its lowest rank. Set by
 * cb_eng_groups_init and cb_eng_split_groups, freed by cb_eng_groups_free;
 * the other files only read it. */
typedef struct cb_eng_groups {
    cb_ctl *gcomm;
    int grank;
    int gsize;
    int group;
    int ngroups;
    int min_gsize;          /* the smallest group's size */
    int *gmembers;          /* group rank 0: the comm rank of each group member */
    int *leaders;           /* comm rank of each group's rank 0 */
    char *group_hosts;      /* rank 0, --split: each group's host (CB_HOSTLEN each), "" when
                             * its ranks are on several */
} cb_eng_groups;

/* memory.c's: the backend buffers, set by cb_eng_plan_sizes and
 * cb_eng_allocate_buffers, freed by cb_eng_free_buffers; the other files
 * read them and write only into the buffers. */
typedef struct cb_eng_mem {
    void *send;          /* backend buffers, buffer_bytes each */
    void *recv;
    void *staging;       /* host copy when the backend's buffers are not host accessible */
    void *work;          /* --layout col: the column copies' work buffer */
    size_t buffer_bytes;
    /* -M on a device backend, rank 0: the device memory free before and
     * after the buffers were allocated (0 where not read). */
    size_t free_before_buffers, free_after_buffers;
} cb_eng_mem;

/* timing.c's: the per-iteration timing of the measurement in progress,
 * set by cb_eng_timing_alloc (with the buffers) and the timing code, freed
 * by cb_eng_timing_free. sweep.c reads the plan and the samples into the
 * result and sets launch_singly through the features' measure_begin;
 * outputs.c copies samples into pending_samples. */
typedef struct cb_eng_timing {
    /* The plan of the measurement in progress; its marks are read back
     * after each timed span. */
    int sampling;            /* the backend has timer marks */
    cb_iter_plan plan;
    int spans_run;           /* timed spans run (fewer after an early stop by --stable) */
    /* A feature asked for the measurement in progress to launch one at a
     * time, each waited for and each timed one its own span (-B). */
    int launch_singly;
    /* What one measurement leaves for the next: this rank's time per
     * operation at the last size, and that size's count (to tell a new
     * sweep), for the next plan's estimate. */
    double prev_op_time;
    size_t prev_count;
    double *samples;         /* room for cb_iter_plan_room marks */
    cb_rank_time *rank_times; /* rank 0 only: every rank's times */
    /* --samples-json with --json: this rank's samples in the order taken,
     * and on group rank 0 every rank's (samples_room each); on rank 0 also
     * a copy for the pending out-of-place results. NULL without. */
    int samples_room;
    double *raw_samples;
    double *rank_samples;
    double *pending_samples;
} cb_eng_timing;

/* sweep.c's: what is being measured now, set by the sweep's loops as they
 * go (-o comm_init's sweep, which measures its own way, clears
 * at_largest; timing.c records rotate_last). The others read it. */
typedef struct cb_eng_now {
    run_position at;       /* where the run is, for the progress line */
    void *coll_state;      /* what the running collective's prepare made */
    cb_block_layout layout; /* the layout being measured */
    const char *impl;      /* --nccl-impl: the implementation measured, NULL where none applies */
    int at_largest;        /* the size being measured is the sweep's largest */
    /* Under nccl-tests' names sendrecv runs once per -o reduction, as
     * theirs, its rows labelled (row_labelled) with it (row_redop). */
    int row_labelled;
    cb_redop row_redop;
    char measuring[192];   /* the measurement in progress, for the watchdog */
    /* --rotate, as nccl-tests' startColl: operation k of a loop (warmup,
     * timed span, recording) runs on the buffers' slice k % rotate_steps,
     * rotate_unit bytes apart; rotate_last is where the last one ran. */
    size_t rotate_unit;
    size_t rotate_steps;
    size_t rotate_last;
} cb_eng_now;

/* outputs.c's: the printers on rank 0 and what they are given, set up by
 * cb_eng_outputs_init and cb_eng_open_printers, freed by
 * cb_eng_outputs_free. The pending rows are allocated by
 * cb_eng_pending_alloc once the groups are known. scan_driver.c calls the
 * printers under lock; lifecycle.c reads progress. */
typedef struct cb_eng_out {
    cb_printer **printers;   /* rank 0 only: the outputs opened */
    int nprinters;
    /* Rank 0: the out-of-place result of each group waiting for its in-place
     * half (npending of them), and a copy of every rank's times for it. */
    cb_result *pending;
    int npending;
    cb_rank_time *pending_times;
    int progress;          /* rank 0: 0 off, 1 one updated line on a terminal, 2 lines */
    cb_eta eta;            /* the progress line's time left (eta.h) */
    /* Rank 0: held around the printers' calls, so that the watchdog thread
     * finishes the outputs with a hang report only between them. */
    pthread_mutex_t lock;
    /* Rank 0, under lock: the summary as the rows given so far make
     * it, published by the main thread after each row, for the signal
     * hook (which must not read sum while the main thread writes it); when
     * it was published (CLOCK_MONOTONIC); and why closing a file the hook
     * finished failed, for the main thread's status. */
    cb_summary files_sum;
    double files_sum_at;
    char files_error[CB_MSGLEN];
} cb_eng_out;

/* lifecycle.c's: the watchdog and the hang report's side channel, started
 * and stopped by cb_engine_run. The others tell the watchdog what they
 * are doing through it. */
typedef struct cb_eng_safety {
    cb_watchdog watch;
    cb_ctl_guard guard;    /* on comm while watch runs: its end is not a lost plane's */
    cb_sidechannel side;   /* the hang report's, with -T */
    char side_notice[CB_MSGLEN];   /* why it reaches fewer ranks, for after the preamble */
} cb_eng_safety;

typedef struct engine {
    /* The core's own: the run's parameters, the control plane and this
     * rank's place in it, the status, the backend, the sizes, and what
     * the verdict and the printers' run description are made of. */
    const cb_params *p;
    cb_ctl *comm;
    int rank;
    int nranks;
    char host[CB_HOSTLEN]; /* as every output names it: cb_sysinfo_host_label */
    cb_status st;

    const cb_backend_ops *ops;
    cb_backend *b;

    uint64_t sizes[CB_MAX_SIZES];
    int nsizes;

    char backend_notice[CB_MSGLEN];   /* why auto chose its backend, for after the preamble */
    char impl_notice[256];   /* what --nccl-impl resolved to, for after the preamble */
    char size_notice[256];   /* why the largest size was lowered, for after the preamble */
    char restart_notice[CB_MSGLEN];   /* torchrun's attempt, earlier files kept (rank 0) */

    cb_rank_info *ranks;                     /* rank 0 only */
    cb_run_info run;
    cb_summary sum;
    double start_time;     /* cb_ctl_now at the engine's start, for the verdict and progress */
    int slow;              /* a figure fell below a threshold (exit 8); rank 0 decides
                            * --min-busbw, agreed at the end */
    int cycle;             /* -N: the cycle running, from 1 */

    /* The feature table (feature.h) and each feature's state, NULL where
     * it is off. */
    const cb_eng_feature *const *features;
    int nfeatures;
    void *feature_state[ENG_MAX_FEATURES];

    /* The parts' state, each set and freed by the file that owns it (the
     * types above say what each holds; docs/design/engine.md, "State"). */
    cb_eng_safety safety;   /* lifecycle.c's */
    cb_eng_groups groups;   /* groups.c's */
    cb_eng_mem mem;         /* memory.c's */
    cb_eng_timing timing;   /* timing.c's */
    cb_eng_now now;         /* sweep.c's */
    cb_eng_out out;         /* outputs.c's */
} engine;


/* agreement.c */
int cb_eng_agree(engine *e);

/* outputs.c */
/* Whether the progress line shows, and the outputs' lock. */
void cb_eng_outputs_init(engine *e);
void cb_eng_outputs_free(engine *e);
/* Rank 0, once the groups are known: room for the rows that wait for their
 * in-place half; a failure sets e->st. */
void cb_eng_pending_alloc(engine *e);
/* A line for the reader, in the table (rank 0). */
void cb_eng_note(engine *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cb_eng_open_printers(engine *e);
/* A sweep of every size begins: the time left counts from here. */
void cb_eng_progress_sweep_begins(engine *e);
/* After size done (from 1) of the sweep of coll, dtype, redop. */
void cb_eng_report_progress(engine *e, const cb_collective *coll, cb_dtype dtype, cb_redop redop,
                     int done);
void cb_eng_printers_begin(engine *e);
void cb_eng_printers_table_begin(engine *e, const cb_collective *coll, cb_block_layout layout);
void cb_eng_printers_note(engine *e, const char *text);
void cb_eng_end_printers(engine *e);
/* Rank 0's report hook: the outputs finished with the hang report. */
void cb_eng_end_printers_on_hang(void *ctx, const cb_hang_report *rep);
/* Rank 0, as the control plane is lost (a peer ended: cb_ctl_guard's
 * lost): every output ended with the results finished, status 1 and why;
 * nothing on other ranks. */
void cb_eng_end_printers_on_lost(void *ctx, const char *why);
/* Rank 0's signal hook (watchdog thread): the output files (not stdout or
 * stderr) finished at once with the rows given so far, status 130 or 143. */
void cb_eng_end_files_on_signal(void *ctx, int sig);
void cb_eng_emit_results(engine *e, const cb_result *res, int n, int last_half);
/* The cycle and the time now, into a result. */
void cb_eng_stamp_result(engine *e, cb_result *res);
/* Rank 0: --min-busbw's check of one figure, with a note when it fails. */
void cb_eng_gate_busbw(engine *e, const char *what, double busbw);
/* The status the run ends with, from what this rank knows: a failure, then
 * wrong results (7), figures below a threshold (8), rows --expect could not
 * judge (6), nothing measured (5). */
int cb_eng_final_status(const engine *e);
void cb_eng_flush_pending(engine *e);
/* Rank 0: tell the printers a cycle ran whole; a write that failed sets
 * the status. */
void cb_eng_printers_cycle_end(engine *e);

/* backend.c */
void cb_eng_select_backend(engine *e);
void cb_eng_start_backend(engine *e);
void cb_eng_check_impls(engine *e);
int cb_eng_backend_step(engine *e, int rc);

/* groups.c */
/* Before the split: one group, comm itself. */
void cb_eng_groups_init(engine *e, cb_ctl *comm);
void cb_eng_groups_free(engine *e);
/* Before the split: one group, comm itself. */
void cb_eng_groups_init(engine *e, cb_ctl *comm);
void cb_eng_groups_free(engine *e);
int cb_eng_spec_color(engine *e, const cb_split_spec *spec, const char *option, cb_ctl *comm);
void cb_eng_split_groups(engine *e);
void cb_eng_note_groups(engine *e, cb_ctl *comm, const char *what, const char *after,
                 int color);
void cb_eng_describe_groups(engine *e);
int cb_eng_emit_split(engine *e, const cb_collective *coll, cb_result *res, int slowest_rank,
               int last_half);

/* memory.c */
void cb_eng_plan_sizes(engine *e);
void cb_eng_note_footprint(engine *e);
/* -M, after the run: nccl-tests' line of the device memory that NCCL's
 * set-up, the buffers and the collectives took, each the most of any rank
 * (a collective: every rank calls it). */
void cb_eng_note_memory_usage(engine *e);
void cb_eng_allocate_buffers(engine *e);
void cb_eng_free_buffers(engine *e);
/* bytes of host memory src into the backend's buffer dst, or of src into
 * host memory dst: a copy the backend makes where its buffers are not host
 * accessible, else memcpy (none where both are one). The backend's code. */
int cb_eng_copy_in(engine *e, void *dst, const void *src, size_t bytes);
int cb_eng_copy_out(engine *e, void *dst, const void *src, size_t bytes);

/* timing.c */
/* With the buffers: the plan until a measurement has an estimate, and the
 * room for the samples; a failure sets e->st. */
void cb_eng_timing_alloc(engine *e);
void cb_eng_timing_free(engine *e);
/* Whether this rank keeps its samples in the order taken (and rank 0
 * every rank's). */
int cb_eng_keeps_raw_samples(const cb_params *p);
/* Whether launches of call are grouped (-m above 1, where the backend has
 * groups). */
int cb_eng_launches_grouped(engine *e, const cb_collective *coll, const cb_call *call);
cb_iter_request cb_eng_iter_request(const cb_params *p);
int cb_eng_time_collective(engine *e, const cb_collective *coll, const cb_call *call,
                    cb_rank_time *t);
double cb_eng_combine_time(engine *e, double mine);
/* Every rank's times to the group's rank 0, which puts their spread, the
 * slowest rank's time and (on rank 0) its host in res. Returns the slowest
 * rank (of e->comm) on the group's rank 0, 0 elsewhere. */
int cb_eng_gather_rank_times(engine *e, const cb_rank_time *mine, cb_result *res);

/* verify.c */
/* The values of check pass `pass` of one placement; pass -1: those the
 * timed iterations read (--check-timed). Seeded by everything that varies
 * between checks of one run (cycle, collective, implementation, layout,
 * type, reduction, root, size, placement, pass). 0, or -1 when none can be
 * checked. */
int cb_eng_check_pattern(engine *e, const cb_collective *coll, const cb_call *call, int size_index,
                  int in_place, int pass, cb_pattern *pat);
/* Before a check launch: call's receive buffer poisoned (cb_pattern_poison),
 * then this rank's input of pat into its send buffer (in place, over it). */
int cb_eng_fill_input(engine *e, const cb_collective *coll, const cb_call *call,
                      const cb_pattern *pat);
void cb_eng_verify(engine *e, const cb_collective *coll, const cb_call *call, int size_index,
                cb_result *res, const cb_call *timed);

/* cycles.c: the collectives and the features' own measurements, -N times. */
void cb_eng_run_cycles(engine *e);
/* sweep.c */
int cb_eng_sweep(engine *e, const cb_collective *coll, cb_dtype dtype, cb_redop redop, int root);
int cb_eng_run_collectives(engine *e);
/* After cb_eng_plan_sizes: a usage error when no size gives any collective and type
 * selected a row at this rank count. */
void cb_eng_check_sizes_fit(engine *e);

#endif
