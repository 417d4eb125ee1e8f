/*
 * The per-rank times of one measurement and their spread across ranks: the
 * types the result record (result.h) carries. The engine fills them
 * (common/stats.h); printers read them. Plain data, no functions, so that
 * result.h needs nothing above it.
 */
#ifndef CB_RANK_TIME_H
#define CB_RANK_TIME_H

/* How per-rank times become the one time reported (-a). */
typedef enum cb_average {
    CB_AVERAGE_RANK0 = 0,
    CB_AVERAGE_MEAN = 1,
    CB_AVERAGE_MIN = 2,
    CB_AVERAGE_MAX = 3
} cb_average;

/* --clock: what times a span of launches. */
enum { CB_CLOCK_HOST = 0, CB_CLOCK_DEVICE = 1 };

/* How a measurement is timed and its times summarised (cb_params.timing;
 * read by the engine's timing.c and plan, common/stats.c's users and the
 * printers). */
typedef struct cb_timing_params {
    cb_average average;
    int blocking;          /* -z: 0 none, 1 wait and barrier, 2 wait, 3 the operation alone */
    int clock;             /* --clock: CB_CLOCK_HOST (nccl-tests') or CB_CLOCK_DEVICE */
    int rotate;            /* --rotate: each launch on its own slice of the buffers */
    int agg;               /* operations per timed iteration, in one group (-m) */
    int graph_launches;    /* 0: no graph; else launches of the captured iterations (-G) */
    int report_cputime;    /* report the time to launch, not to complete (-C) */
    int budget_ms;         /* --budget: timed iterations per measurement from a time budget; 0 off */
    int stable_pct;        /* --stable: with --budget, stop when the last round medians are
                            * within this many percent; 0: never early */
    int stable_given;      /* --stable was on the command line */
    int per_iter;          /* -I 1: i_min i_max i_p99 i_cv% columns, per-iteration JSON */
    int per_iter_skip;     /* -K: leading samples left out of -I's statistics */
} cb_timing_params;

/* One rank's times for one measurement, in seconds per operation. */
typedef struct cb_rank_time {
    double mean;     /* the timed span divided by the operations in it */
    double min;      /* over the per-iteration samples; NaN without samples */
    double median;
    double p99;      /* NaN below CB_STATS_P99_SAMPLES samples (common/stats.h) */
    double max;
    int samples;
} cb_rank_time;

/* Across ranks: min, mean, median and max of the per-rank means, and the
 * rank with the largest mean (the lowest such rank on ties). A rank whose
 * mean is NaN took no part and is left out; all NaN: NaN figures, slowest 0. */
typedef struct cb_rank_spread {
    double min;
    double mean;
    double max;
    int slowest;
    double median;
} cb_rank_spread;

#endif
