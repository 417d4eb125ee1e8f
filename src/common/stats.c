#include "common/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void cb_stats_from_samples(double *samples, int n, cb_rank_time *t)
{
    t->samples = n;
    if (n <= 0) {
        t->min = t->median = t->p99 = t->max = NAN;
        return;
    }
    qsort(samples, (size_t)n, sizeof *samples, by_value);
    t->min = samples[0];
    t->max = samples[n - 1];
    t->median = n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
    /* Nearest rank: ceil(0.99 n), counted from 1. */
    int rank = (99 * n + 99) / 100;
    t->p99 = n >= CB_STATS_P99_SAMPLES ? samples[rank - 1] : NAN;
}

void cb_stats_spread(const cb_rank_time *ranks, int nranks, cb_rank_spread *out)
{
    out->min = out->max = out->mean = out->median = NAN;
    out->slowest = 0;
    double sum = 0;
    int n = 0;
    double *means = malloc((size_t)(nranks > 0 ? nranks : 1) * sizeof *means);
    for (int r = 0; r < nranks; r++) {
        double m = ranks[r].mean;
        if (isnan(m))
            continue;   /* a rank that took no part */
        if (means != NULL)
            means[n] = m;
        sum += m;
        if (n == 0 || m < out->min)
            out->min = m;
        if (n == 0 || m > out->max) {
            out->max = m;
            out->slowest = r;
        }
        n++;
    }
    if (n > 0)
        out->mean = sum / n;
    if (n > 0 && means != NULL) {
        qsort(means, (size_t)n, sizeof *means, by_value);
        out->median = n % 2 ? means[n / 2] : (means[n / 2 - 1] + means[n / 2]) / 2;
    }
    free(means);
}

int cb_stats_stable(const double *values, int n, int k, double pct)
{
    if (k < 1 || n < k || !(pct > 0))
        return 0;
    double last[16];
    if (k > (int)(sizeof last / sizeof last[0]))
        return 0;
    for (int i = 0; i < k; i++) {
        last[i] = values[n - k + i];
        if (!isfinite(last[i]) || last[i] <= 0)
            return 0;
    }
    qsort(last, (size_t)k, sizeof *last, by_value);
    double median = k % 2 ? last[k / 2] : (last[k / 2 - 1] + last[k / 2]) / 2;
    return last[k - 1] - last[0] <= pct / 100 * median;
}

int cb_stats_iteration_max(const double *samples, int room, const cb_rank_time *ranks,
                           int nranks, double *times)
{
    int n = room;
    for (int r = 0; r < nranks; r++)
        if (ranks[r].samples < n)
            n = ranks[r].samples;
    if (nranks <= 0 || n < 0)
        return 0;
    for (int i = 0; i < n; i++) {
        double most = samples[i];
        for (int r = 1; r < nranks; r++)
            if (samples[(size_t)r * (size_t)room + (size_t)i] > most)
                most = samples[(size_t)r * (size_t)room + (size_t)i];
        times[i] = most;
    }
    return n;
}

/* Nearest rank p of n sorted samples, from 0. */
static int nearest_rank(int n, int p)
{
    int index = (n * p + 99) / 100 - 1;
    return index < n - 1 ? (index < 0 ? 0 : index) : n - 1;
}

int cb_stats_per_iter(const double *times, int n, int skip, cb_iter_stats *out)
{
    int m = n - (skip > 0 ? skip : 0);
    if (m <= 0)
        return -1;
    double *sorted = malloc((size_t)m * sizeof *sorted);
    if (sorted == NULL)
        return -1;
    memcpy(sorted, times + (n - m), (size_t)m * sizeof *sorted);
    qsort(sorted, (size_t)m, sizeof *sorted, by_value);
    double sum = 0, squares = 0;
    for (int i = 0; i < m; i++)
        sum += sorted[i];
    double avg = sum / m;
    for (int i = 0; i < m; i++)
        squares += (sorted[i] - avg) * (sorted[i] - avg);
    *out = (cb_iter_stats){
        .min = sorted[0],
        .max = sorted[m - 1],
        .avg = avg,
        .p50 = sorted[m / 2],
        .p95 = sorted[nearest_rank(m, 95)],
        .p99 = sorted[nearest_rank(m, 99)],
        .stdev = sqrt(squares / m),
        .samples = m,
    };
    out->cv_pct = avg > 0 ? out->stdev / avg * 100 : 0;
    free(sorted);
    return 0;
}
