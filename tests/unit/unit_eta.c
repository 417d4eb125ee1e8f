/* The progress line's time left (src/engine/eta.c): no estimate from the
 * first size alone, none that counts the start-up, estimates near the
 * truth once the sizes measured tell, and later sweeps from the last. */
#include <math.h>
#include <stdio.h>

#include "engine/eta.h"
#include "unit.h"

#define NSIZES 25   /* 8 B to 128 MiB, doubling */

/* A size's time: latency, then bandwidth (a run of about 2.8 s). */
static double model(uint64_t bytes)
{
    return 0.004 + (double)bytes / 2e8;
}

static void sizes(uint64_t *b)
{
    for (int s = 0; s < NSIZES; s++)
        b[s] = (uint64_t)8 << s;
}

static double truth_left(const uint64_t *b, int done, int sweeps_after)
{
    double rest = 0, sweep = 0;
    for (int s = 0; s < NSIZES; s++) {
        sweep += model(b[s]);
        if (s >= done)
            rest += model(b[s]);
    }
    return rest + sweeps_after * sweep;
}

static void test_first_sweep(unit_state *u)
{
    uint64_t b[NSIZES];
    sizes(b);
    cb_eta t;
    CHECK(u, cb_eta_init(&t, b, NSIZES) == 0);
    CHECK(u, cb_eta_left(&t, 0) == -1);      /* nothing measured */
    /* The start-up (communicators, buffers) took 100 s before the sweep. */
    double now = 100;
    cb_eta_sweep_begins(&t, now);
    int shown = 0;
    for (int s = 0; s < NSIZES; s++) {
        now += model(b[s]);
        cb_eta_size_done(&t, s + 1, now);
        double left = cb_eta_left(&t, 0), truth = truth_left(b, s + 1, 0);
        if (s == 0)
            CHECK(u, left == -1);   /* one size says nothing of the larger ones */
        if (left < 0)
            continue;
        shown++;
        /* Never the start-up, never a wild guess: within 2x of the truth. */
        int near = left <= 2 * truth + 1e-9 && left >= truth / 2 - 1e-9;
        CHECK(u, near);
        if (!near)
            fprintf(stderr, "after size %d: %.3f s left, truly %.3f s\n", s + 1, left, truth);
    }
    CHECK(u, shown >= NSIZES / 3);   /* it does tell, well before the end */
    CHECK(u, cb_eta_left(&t, 0) == 0);  /* the sweep is complete */
    cb_eta_free(&t);
}

static void test_later_sweeps(unit_state *u)
{
    uint64_t b[NSIZES];
    sizes(b);
    cb_eta t;
    CHECK(u, cb_eta_init(&t, b, NSIZES) == 0);
    double now = 0;
    cb_eta_sweep_begins(&t, now);
    for (int s = 0; s < NSIZES; s++)
        cb_eta_size_done(&t, s + 1, now += model(b[s]));
    /* Two more sweeps after this one: the first size of the second sweep
     * is enough, from the first sweep's sizes. */
    cb_eta_sweep_begins(&t, now += 0.5);
    cb_eta_size_done(&t, 1, now += model(b[0]));
    double left = cb_eta_left(&t, 2), truth = truth_left(b, 1, 2);
    CHECK(u, fabs(left - truth) < 1e-6 * truth);
    for (int s = 1; s < NSIZES; s++)
        cb_eta_size_done(&t, s + 1, now += model(b[s]));
    CHECK(u, t.complete == 2);
    /* A sweep that runs twice as slow so far is expected to go on so. */
    cb_eta_sweep_begins(&t, now += 0.5);
    cb_eta_size_done(&t, 1, now += 2 * model(b[0]));
    cb_eta_size_done(&t, 2, now += 2 * model(b[1]));
    left = cb_eta_left(&t, 0);
    CHECK(u, fabs(left - 2 * truth_left(b, 2, 0)) < 1e-6 * left);
    cb_eta_free(&t);
}

static void test_skipped_and_short(unit_state *u)
{
    uint64_t b[NSIZES];
    sizes(b);
    cb_eta t;
    CHECK(u, cb_eta_init(&t, b, NSIZES) == 0);
    /* The first three sizes skipped (too small for the type): they took
     * no time, and the sweep's time is that of the sizes measured. */
    double now = 10;
    cb_eta_sweep_begins(&t, now);
    for (int s = 3; s < NSIZES; s++)
        cb_eta_size_done(&t, s + 1, now += model(b[s]));
    cb_eta_sweep_begins(&t, now);
    double sweep = 0;
    for (int s = 3; s < NSIZES; s++)
        sweep += model(b[s]);
    CHECK(u, fabs(cb_eta_left(&t, 1) - 2 * sweep) < 1e-6 * sweep);
    /* A sweep whose last sizes were skipped is complete when the next begins. */
    cb_eta_size_done(&t, 4, now += model(b[3]));
    cb_eta_sweep_begins(&t, now);
    CHECK(u, t.complete == 2);
    cb_eta_free(&t);
    CHECK(u, cb_eta_left(&t, 0) == -1);
}

int main(void)
{
    unit_state u = {0, 0};
    test_first_sweep(&u);
    test_later_sweeps(&u);
    test_skipped_and_short(&u);
    return unit_done(&u, "unit_eta");
}
