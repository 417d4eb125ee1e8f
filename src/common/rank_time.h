/*
 * The per-rank times of one measurement and their spread across ranks: the
 * types the result record (result.h) carries. The engine fills them
 * (common/stats.h); printers read them. Plain data, no functions, so that
 * result.h needs nothing above it.
 */
#ifndef CB_RANK_TIME_H
#define CB_RANK_TIME_H

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
