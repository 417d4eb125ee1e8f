/* Per-iteration statistics: median, nearest-rank p99, spread across ranks. */
#include <math.h>

#include "common/stats.h"
#include "unit.h"

int main(void)
{
    unit_state u = {0, 0};
    cb_rank_time t = {0};

    double odd[] = {5, 1, 3};
    cb_stats_from_samples(odd, 3, &t);
    /* Too few samples for a p99: none, not the maximum under its name. */
    CHECK(&u, t.min == 1 && t.median == 3 && t.max == 5 && isnan(t.p99) && t.samples == 3);

    double even[] = {4, 1, 3, 2};
    cb_stats_from_samples(even, 4, &t);
    CHECK(&u, t.median == 2.5 && t.min == 1 && t.max == 4);

    /* 200 samples 1..200: p99 is the 198th smallest. */
    double many[200];
    for (int i = 0; i < 200; i++)
        many[i] = 200 - i;
    cb_stats_from_samples(many, 200, &t);
    CHECK(&u, t.p99 == 198 && t.median == 100.5 && t.min == 1 && t.max == 200);

    /* 100 samples: p99 is the 99th; one outlier does not move the median. */
    double hundred[100];
    for (int i = 0; i < 100; i++)
        hundred[i] = i == 50 ? 1000 : 10;
    cb_stats_from_samples(hundred, 100, &t);
    CHECK(&u, t.p99 == 10 && t.max == 1000 && t.median == 10);

    double one[] = {7};
    cb_stats_from_samples(one, 1, &t);
    CHECK(&u, t.min == 7 && t.median == 7 && isnan(t.p99) && t.max == 7);

    /* 99 samples are one short of a p99. */
    double short_of[99];
    for (int i = 0; i < 99; i++)
        short_of[i] = i;
    cb_stats_from_samples(short_of, 99, &t);
    CHECK(&u, isnan(t.p99) && t.max == 98 && t.samples == 99);

    cb_stats_from_samples(NULL, 0, &t);
    CHECK(&u, isnan(t.min) && isnan(t.median) && isnan(t.p99) && isnan(t.max) && t.samples == 0);

    cb_rank_time ranks[4] = {{.mean = 2}, {.mean = 5}, {.mean = 1}, {.mean = 5}};
    cb_rank_spread s;
    cb_stats_spread(ranks, 4, &s);
    CHECK(&u, s.min == 1 && s.max == 5 && s.mean == 13.0 / 4 && s.slowest == 1);
    CHECK(&u, s.median == 3.5);   /* of 1, 2, 5, 5 */
    cb_stats_spread(ranks, 1, &s);
    CHECK(&u, s.min == 2 && s.max == 2 && s.mean == 2 && s.slowest == 0 && s.median == 2);
    cb_stats_spread(ranks, 3, &s);
    CHECK(&u, s.median == 2);
    /* A rank that took no part (comm_init's shrink) is left out. */
    cb_rank_time some[3] = {{.mean = NAN}, {.mean = 4}, {.mean = 1}};
    cb_stats_spread(some, 3, &s);
    CHECK(&u, s.min == 1 && s.max == 4 && s.mean == 2.5 && s.median == 2.5 && s.slowest == 1);
    some[1].mean = some[2].mean = NAN;
    cb_stats_spread(some, 3, &s);
    CHECK(&u, isnan(s.min) && isnan(s.max) && isnan(s.mean) && isnan(s.median) && s.slowest == 0);
    /* --stable's rule: the last k values within pct% of their median. */
    double rounds[] = {50, 10.0, 10.1, 9.95};
    CHECK(&u, cb_stats_stable(rounds, 4, 3, 2));      /* 0.15 <= 0.2 */
    CHECK(&u, !cb_stats_stable(rounds, 4, 3, 1));     /* 0.15 > 0.1 */
    CHECK(&u, !cb_stats_stable(rounds, 4, 4, 300));   /* 40.05 > 3 x 10.05 */
    CHECK(&u, cb_stats_stable(rounds, 4, 4, 400));    /* 40.05 <= 4 x 10.05 */
    CHECK(&u, !cb_stats_stable(rounds, 2, 3, 1000));  /* fewer than k rounds */
    CHECK(&u, !cb_stats_stable(rounds, 4, 3, 0));     /* 0: never */
    double flat[] = {3, 3, 3};
    CHECK(&u, cb_stats_stable(flat, 3, 3, 1));
    double bad[] = {1, NAN, 1};
    CHECK(&u, !cb_stats_stable(bad, 3, 3, 1000));

    /* -I 1: each iteration's slowest of two ranks (room 4, rank 1 with
     * only 3 samples: 3 iterations), then their statistics as nccl-tests
     * reports them. */
    double per_rank[] = {1, 5, 2, 9, /* rank 1 */ 3, 4, 2, 0};
    cb_rank_time counts[2] = {{.samples = 4}, {.samples = 3}};
    double iter_max[4] = {0};
    CHECK(&u, cb_stats_iteration_max(per_rank, 4, counts, 2, iter_max) == 3);
    CHECK(&u, iter_max[0] == 3 && iter_max[1] == 5 && iter_max[2] == 2);
    /* 10 samples 1..10 shuffled: p50 the 6th smallest (index n/2), p95 and
     * p99 the largest (index min(n-1, ceil(n p/100)-1) = 9), stdev over
     * the population. */
    double ten[] = {7, 3, 10, 1, 9, 2, 8, 4, 6, 5};
    cb_iter_stats st;
    CHECK(&u, cb_stats_per_iter(ten, 10, 0, &st) == 0);
    CHECK(&u, st.min == 1 && st.max == 10 && st.avg == 5.5 && st.p50 == 6);
    CHECK(&u, st.p95 == 10 && st.p99 == 10 && st.samples == 10);
    CHECK(&u, fabs(st.stdev - sqrt(8.25)) < 1e-12 && fabs(st.cv_pct - sqrt(8.25) / 5.5 * 100) < 1e-9);
    CHECK(&u, ten[0] == 7);   /* the samples are left in their order */
    /* -K 4 leaves 9, 2, 8, 4, 6, 5 out of order: min 2, p50 index 3 -> 6. */
    CHECK(&u, cb_stats_per_iter(ten, 10, 4, &st) == 0);
    CHECK(&u, st.min == 2 && st.max == 9 && st.samples == 6 && st.p50 == 6);
    /* 200 samples: p95 at index 189, p99 at 197. */
    double two_hundred[200];
    for (int i = 0; i < 200; i++)
        two_hundred[i] = i + 1;
    CHECK(&u, cb_stats_per_iter(two_hundred, 200, 0, &st) == 0);
    CHECK(&u, st.p95 == 190 && st.p99 == 198 && st.p50 == 101);
    /* Nothing left after the skip. */
    CHECK(&u, cb_stats_per_iter(ten, 10, 10, &st) == -1);
    return unit_done(&u, "unit_stats");
}
