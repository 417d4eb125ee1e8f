/* Statistics of per-iteration times: pure functions, unit-tested. */
#ifndef CB_STATS_H
#define CB_STATS_H

#include <stddef.h>

#include "common/rank_time.h"

/* A percentile p is reported only when the samples above it number at least
 * one: n >= 100 / (100 - p), so p99 needs 100 samples. */
#define CB_STATS_P99_SAMPLES 100

/*
 * Sort samples in place and fill the sample statistics of *t (mean is left
 * alone). The median of an even count is the mean of the middle two; p99 is
 * the nearest-rank 99th percentile (the smallest sample with at least 99% of
 * the samples at or below it), given only from CB_STATS_P99_SAMPLES samples
 * on (below, NaN: the "p99" of a few samples is just their maximum). With
 * n == 0 the statistics are NaN.
 */
void cb_stats_from_samples(double *samples, int n, cb_rank_time *t);

/* Across ranks: the spread of the per-rank means (cb_rank_spread,
 * common/rank_time.h). */
void cb_stats_spread(const cb_rank_time *ranks, int nranks, cb_rank_spread *out);

/*
 * The stopping rule of --stable: whether the last k of n values (round
 * medians) lie within pct percent of their median, that is
 * (max - min) <= pct / 100 * median over the last k. 0 when n < k, k < 1,
 * pct <= 0, or a value is not a positive finite number.
 */
int cb_stats_stable(const double *values, int n, int k, double pct);

/* nccl-tests' per-iteration figures (-I 1): of each iteration's slowest
 * rank, over the samples left after -K's skip. */
typedef struct cb_iter_stats {
    double min, max, avg, p50, p95, p99, stdev, cv_pct;
    int samples;     /* summarised, after the skip */
} cb_iter_stats;

/* Each iteration's largest sample over nranks ranks: rank r's samples are
 * ranks[r].samples doubles at samples + r * room. Writes the iterations
 * every rank has (the least count, at most room) into times; returns that
 * count. */
int cb_stats_iteration_max(const double *samples, int room, const cb_rank_time *ranks,
                           int nranks, double *times);

/*
 * The statistics of times[skip..n) into *out, as nccl-tests reports them:
 * p50 is the element at half the count of the sorted samples, p95 and p99
 * the nearest rank (index min(n - 1, ceil(n p / 100) - 1)), stdev over the
 * whole population, cv_pct = stdev / avg x 100 (0 when avg is 0). Returns
 * 0, or -1 when no sample is left or memory runs out (out untouched).
 */
int cb_stats_per_iter(const double *times, int n, int skip, cb_iter_stats *out);

#endif
