/*
 * What the engine hands the printers: one record per run, one per
 * measurement, one summary. Base units throughout (bytes, seconds);
 * printers convert for display.
 */
#ifndef CB_RESULT_H
#define CB_RESULT_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "backends/backend.h"
#include "collectives/collective.h"
#include "common/rank_time.h"

#define CB_HOSTLEN 64

/* One rank as gathered at start-up ("Using devices"). */
typedef struct cb_rank_info {
    int rank;
    int pid;
    char host[CB_HOSTLEN];
    cb_device_desc device;
} cb_rank_info;

struct cb_params;

typedef struct cb_run_info {
    const char *tool_version;
    const char *backend;
    char run_id[20];            /* 16 hex digits, unique per run */
    char start_utc[24];         /* ISO 8601, e.g. 2026-11-21T16:30:00Z */
    char mpi_library[CB_DEVICE_DESCLEN];
    /* The TCP rendezvous: 1 keyed, 0 not (anyone may derive its key); -1
     * none (MPI's launch, or alone). */
    int rendezvous_authenticated;
    char backend_versions[CB_BACKEND_VERSIONSLEN]; /* "" when the backend adds none */
    int nranks;
    int nnodes;
    int ranks_per_node;         /* the most ranks on any one node */
    const cb_rank_info *ranks;  /* nranks entries */
    /* What the user asked for (options/params.h), read in place: the
     * table's preamble, the JSON "parameters" block, the CSV's per-run
     * columns and where each output goes. Printers read it, never change it. */
    const struct cb_params *params;
    uint64_t max_bytes;         /* after lowering to fit in memory */
    const char *allocator;      /* the call the buffers came from; "" unknown */
    const char *registration;   /* "none", "ncclCommRegister" (-R 1), "window" (-R 2) */
    const char *repeat_compare; /* -B: "device" or "host"; NULL without -B */
    int restart_count;          /* torchrun's TORCHELASTIC_RESTART_COUNT; -1 when unset */
} cb_run_info;

typedef struct cb_result {
    const cb_collective *collective;
    cb_dtype dtype;
    cb_redop redop;
    int root;                  /* -1 for rootless collectives */
    uint64_t bytes;            /* the size column */
    size_t count;              /* the count column, elements */
    int in_place;
    int warmup_iters;
    int iters;
    double seconds;            /* per operation, combined across ranks */
    /* Per-iteration statistics of the slowest rank (the one with the largest
     * mean), the spread of the per-rank means, and every rank's times
     * (rank_times: nranks entries, valid during the printer call). */
    cb_rank_time slowest;
    cb_rank_spread spread;
    char slowest_host[CB_HOSTLEN];
    const cb_rank_time *rank_times;
    /* --samples-json: rank r's samples in the order taken, rank_times[r].samples
     * of them, at rank_samples + r * samples_room; NULL without. */
    const double *rank_samples;
    int samples_room;
    double algbw;              /* GB/s, 1e9 bytes per second */
    double busbw;              /* GB/s */
    int check_passes;          /* passes run; 0 when not checked */
    uint64_t wrong;            /* wrong elements summed over ranks and passes */
    /* First wrong element, when wrong > 0. */
    int bad_rank;
    char bad_host[CB_HOSTLEN];
    cb_mismatch first;
    struct cb_result_repeat {
        /* -B: the launches compared with the first launch's output on each rank
         * (0: not compared), those whose output differed summed over ranks, the
         * elements that differed in them, and the lowest rank with one and its
         * host (-1 and "" when none). */
        uint64_t repeat_checked;
        uint64_t unrepeatable;
        uint64_t unrepeatable_elements;
        int unrepeatable_rank;
        char unrepeatable_host[CB_HOSTLEN];
    } repeat;
    struct cb_result_split {
        /* --split: the group measured (numbered by lowest rank) and its ranks;
         * group -1 without --split. */
        int group;
        int group_ranks;
        /* --split: the host of the group's ranks (NCCL_HOSTID where set), ""
         * when they are on several hosts or without --split. */
        char group_host[CB_HOSTLEN];
    } split;
    /* --layout: the layout measured; in column layout the matrix whose
     * column slices the rank blocks are, rows x cols elements, else 0 x 0. */
    cb_block_layout layout;
    /* --nccl-impl: "native" or "p2p" for a collective with implementations
     * on a backend that chooses (NCCL), else NULL. */
    const char *impl;
    size_t rows;
    size_t cols;
    struct cb_result_scan {
        /* -o scan: the part this figure is of ("node", "pair", "rail", and
         * "node_again", "pair_again", "rail_again" for re-measures), NULL in
         * other results; the node's host (pair: the lower node's) and the
         * pair's other host ("" where none); the pair's round, else -1. */
        const char *scan_part;
        char host[CB_HOSTLEN];
        char peer_host[CB_HOSTLEN];
        int round;
    } scan;
    /* -N: the cycle (from 1) and when the measurement ended, ISO 8601 UTC. */
    int cycle;
    char timestamp_utc[24];
    /* alltoallv: its traffic matrix as --a2av-matrix reads it ("hot:4:1"),
     * "" in other results. */
    char traffic_matrix[48];
    /* -o comm_init: the way the communicator was made ("init", "split",
     * "shrink", "grow"), "" for every other result. */
    char comm_op[8];
    /* --expect: the bus bandwidth expected of this row (GB/s) and busbw over
     * it; both 0 where the row has no expectation. */
    double expected_busbw;
    double efficiency;
} cb_result;

/* One row of a table: a size's out-of-place result and its in-place one;
 * in_place NULL where none comes (barrier, the column layout, or the run
 * stopped between the two). The engine pairs them; printers only print. */
typedef struct cb_row {
    const cb_result *out_of_place;
    const cb_result *in_place;
} cb_row;

/* -o scan: one suspect the verdict named (nccl-collbench(1), HEALTH SCAN). */
typedef struct cb_scan_suspect {
    const char *kind;       /* "node", "link" or "rail" */
    const char *reason;     /* "node_figure", "pairs", "wrong", "link", "rail" */
    const char *host;       /* the node, a link's lower node; NULL for a rail */
    const char *peer_host;  /* a link's other node, else NULL */
    const char *gpu;        /* the node's slowest or wrong GPU's bus id, or NULL */
    int rail;               /* a rail's local index, else -1 */
    double figure, first, again, median, ratio;  /* GB/s; again NaN when not re-measured;
                                                  * median: the reference judged against */
    unsigned long long wrong;
    const char *confidence;  /* "low", "medium", "high" or "certain" (scan/verdict.h) */
    int reference_figures;   /* figures of its kind its first reference was the median of */
} cb_scan_suspect;

/* -o scan: the figures and the verdict, for formats that carry them whole. */
typedef struct cb_scan_report {
    int cycle;                     /* -N: the cycle it is of, from 1 */
    int nnodes;
    const char *const *hosts;      /* [nnodes] */
    uint64_t bytes;                /* per rank */
    double threshold;
    const double *node_bw;         /* [nnodes], NULL when scan_nodes did not run */
    const double *pair_bw;         /* [nnodes * nnodes], NaN on the diagonal; or NULL */
    int nrails;
    const double *rail_bw;         /* [nrails], or NULL */
    int nsuspects;
    const cb_scan_suspect *suspects;
} cb_scan_report;

/* The mean bus bandwidth of one collective's cells (out-of-place and
 * in-place halves alike, as nccl-tests averages), and its verdict under
 * NCCL_TESTS_MIN_BW. */
typedef struct cb_busbw_average {
    const cb_collective *collective;
    double sum;                /* GB/s, over cells */
    int cells;
    int min_bw_failed;         /* below 0.9 x NCCL_TESTS_MIN_BW */
} cb_busbw_average;

/* NCCL_TESTS_MIN_BW's rule, as nccl-tests applies it: an average below 0.9
 * times the floor (GB/s; NaN: no floor) fails. */
static inline int cb_busbw_below_floor(const cb_busbw_average *a, double min_bw)
{
    return a->cells > 0 && !isnan(min_bw) && a->sum / a->cells < 0.9 * min_bw;
}

#define CB_SUMMARY_AVERAGES 32

typedef struct cb_summary {
    uint64_t wrong;            /* over every result */
    int results;               /* measurements printed */
    double busbw_sum;          /* for the plain mean of busbw cells */
    int busbw_results;         /* its divisor: results that move data (not barrier) */
    /* Per collective that moved data, in the order first measured: the
     * table's average lines (none for barrier or a scan alone). */
    cb_busbw_average averages[CB_SUMMARY_AVERAGES];
    int naverages;
    double min_bw;             /* NCCL_TESTS_MIN_BW in GB/s; NaN when not set */
    /* The closing verdict's figures (nccl-collbench-output(5), "# Result:"). */
    int measurements;          /* results plus the health scan's measurements */
    double elapsed_s;          /* since the engine started */
    int first_wrong_rank;      /* of the first wrong element seen, -1 when none */
    char first_wrong_host[CB_HOSTLEN];
    int wrong_ranks_differ;    /* wrong elements seen on more than that rank */
    uint64_t unrepeatable;     /* -B: launches whose output did not repeat, over every result */
    int first_unrepeatable_rank;   /* the first rank with one, -1 when none */
    char first_unrepeatable_host[CB_HOSTLEN];
    /* The host whose ranks saw wrong or unrepeatable output in the most
     * cycles (nccl-collbench(1), -N), "" when none did. */
    char suspect_host[CB_HOSTLEN];
    int below_min_busbw;       /* figures below --min-busbw */
    int below_expectation;     /* rows below their expected bandwidth (--expect); 0 without */
    int scan_suspects;         /* suspects the health scan named, over every cycle */
    int unchecked;             /* rows --expect gates that have no expectation (status 6) */
    int unverified;            /* results whose output no check read (-c 0) */
    int link_faults;           /* --expect auto: links down or degraded (status 8) */
    const char *auto_host_backend; /* --backend auto chose this host-memory backend, else NULL */
    int unauthenticated;       /* a TCP rendezvous without NCCL_COLLBENCH_KEY */
    /* -M: the device memory taken by set-up, the buffers and the
     * collectives (bytes), each the most of any rank, where the backend
     * measured it (memory.c). */
    int64_t memory_usage[3];
    int memory_measured;
    int exit_status;           /* enum cb_exit the run ends with */
    char error[512];           /* the agreed failure, "" when none */
    const struct cb_hang_report *hang;   /* the watchdog's hang report, NULL when none */
} cb_summary;

/* The closing verdict (src/printers/closing.c): "PASS", "FAIL", or
 * "UNCHECKED" (status 5 or 6: nothing measured, or rows --expect could not
 * judge; or status 0 with -c 0, nothing verified), and why in reasons ("3 wrong elements on rank 5 host h2; 2 rows
 * below expectation"; "mpi backend, host memory" after auto chose it; ""
 * when there is nothing to say). */
const char *cb_verdict(const cb_summary *sum, char *reasons, size_t len);

#endif
