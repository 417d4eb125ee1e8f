#include "engine/stats.h"

#include <math.h>
#include <stdlib.h>

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
