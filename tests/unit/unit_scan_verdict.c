/* The health scan's verdict on simulated clusters: +-10% noise names
 * nobody; one slow node, link or rail is named, and only it; a candidate
 * that recovers when measured again alone is not named; few nodes or
 * rails (one lucky pair among 3 nodes, 2 rails) and a machine whose load
 * changes between the scan and the re-measures name nobody healthy; a
 * link hidden by a node that read slow in the scan only is still named;
 * each suspect says how confident it is. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "scan/verdict.h"
#include "unit.h"

#define MAX_NODES 17
#define NRAILS 4

/* A simulated cluster: healthy figures, one optional fault, and a
 * generator for the +-10% noise of every measurement (its own state, no
 * globals). */
typedef struct cluster {
    int n;
    unsigned long long rng;
    int slow_node, slow_a, slow_b, slow_rail;   /* -1: none */
    double factor;                              /* what the fault leaves */
    double load;                                /* every re-measure's share of
                                                 * the scan's speed (1: same load) */
} cluster;

static double noise(cluster *c)
{
    c->rng = c->rng * 6364136223846793005ULL + 1442695040888963407ULL;
    double u = (double)(c->rng >> 11) / 9007199254740992.0;   /* [0, 1) */
    return 0.9 + 0.2 * u;
}

/* One measurement of part (a, b), as the engine would take it. A slow node
 * slows its own all-reduce, its pairs and every rail (each rail crosses it). */
static double measure(cluster *c, cb_scan_part part, int a, int b)
{
    double x = noise(c);
    switch (part) {
    case CB_SCAN_PART_NODE:
        return 200 * x * (a == c->slow_node ? c->factor : 1);
    case CB_SCAN_PART_PAIR:
        if (a == c->slow_node || b == c->slow_node ||
            (a == c->slow_a && b == c->slow_b) || (a == c->slow_b && b == c->slow_a))
            x *= c->factor;
        return 50 * x;
    case CB_SCAN_PART_RAIL:
        return 40 * x * (a == c->slow_rail || c->slow_node >= 0 ? c->factor : 1);
    }
    return NAN;
}

typedef struct scan_data {
    double node[MAX_NODES], pair[MAX_NODES * MAX_NODES], rail[NRAILS];
    unsigned long long wrong[MAX_NODES];
} scan_data;

static void scan(cluster *c, scan_data *d, cb_scan_input *in)
{
    int n = c->n;
    for (int a = 0; a < n; a++) {
        d->node[a] = measure(c, CB_SCAN_PART_NODE, a, -1);
        d->wrong[a] = 0;
        d->pair[a * n + a] = NAN;
        for (int b = a + 1; b < n; b++)
            d->pair[a * n + b] = d->pair[b * n + a] = measure(c, CB_SCAN_PART_PAIR, a, b);
    }
    for (int r = 0; r < NRAILS; r++)
        d->rail[r] = measure(c, CB_SCAN_PART_RAIL, r, -1);
    *in = (cb_scan_input){.nnodes = n, .node_busbw = d->node, .pair_bw = d->pair,
                          .nrails = NRAILS, .rail_busbw = d->rail, .wrong = d->wrong};
}

/* Re-measure candidates [from, to) alone, as the engine does. */
static void remeasure(unit_state *u, cluster *c, const cb_scan_input *in, cb_scan_verdict *v,
                      int from, int to)
{
    for (int i = from; i < to; i++) {
        cb_scan_remeasure what;
        cb_scan_finding *f = &v->items[i];
        int rc = cb_scan_remeasure_of(in, v, f, &what);
        CHECK(u, (rc == 0) == (f->needs_remeasure != 0));
        cb_scan_remeasure ctl;
        int has_ctl = rc == 0 && cb_scan_control_of(in, v, f, &ctl) == 0;
        for (int k = 0; rc == 0 && k < CB_SCAN_REMEASURES && !cb_scan_cleared_for_sure(v, f);
             k++) {
            double again = c->load * measure(c, what.part, what.a, what.b);
            double control = has_ctl ? c->load * measure(c, ctl.part, ctl.a, ctl.b) : NAN;
            cb_scan_recheck(f, again, control);
        }
    }
}

/* The engine's loop: candidates, each re-measured alone, then the links a
 * cleared node hid, settled. */
static int judge(unit_state *u, cluster *c, const cb_scan_input *in, cb_scan_verdict *v)
{
    if (cb_scan_candidates(in, v) != 0)
        return -1;
    int n = v->n;
    remeasure(u, c, in, v, 0, n);
    int more = n + cb_scan_unmasked_links(in, v);
    remeasure(u, c, in, v, n, more);
    cb_scan_settle(v);
    return 0;
}

static cluster healthy(int n, unsigned long long seed)
{
    return (cluster){.n = n, .rng = seed, .slow_node = -1, .slow_a = -1, .slow_b = -1,
                     .slow_rail = -1, .factor = 0.5, .load = 1};
}

/* Healthy clusters of many sizes and seeds: no candidate at all. */
static void check_healthy(unit_state *u)
{
    int sizes[] = {2, 3, 4, 5, 8, 16, 17}, named = 0;
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
        for (unsigned long long seed = 1; seed <= 300; seed++) {
            cluster c = healthy(sizes[s], seed);
            scan_data d;
            cb_scan_input in;
            cb_scan_verdict v;
            scan(&c, &d, &in);
            CHECK(u, cb_scan_candidates(&in, &v) == 0);
            named += v.n;
            cb_scan_verdict_free(&v);
        }
    CHECK(u, named == 0);
}

/* One slow node among n: named (by its own figure, and by its pairs when
 * there are 3 nodes or more), nobody else, with figure, median and ratio. */
static void check_slow_node(unit_state *u, int n, unsigned long long seed)
{
    cluster c = healthy(n, seed);
    c.slow_node = (int)(seed % (unsigned)n);
    scan_data d;
    cb_scan_input in;
    cb_scan_verdict v;
    scan(&c, &d, &in);
    CHECK(u, judge(u, &c, &in, &v) == 0);
    int by_figure = 0, by_pairs = 0, other = 0;
    for (int i = 0; i < v.n; i++) {
        const cb_scan_finding *f = &v.items[i];
        if (f->a == c.slow_node && f->reason == CB_SCAN_NODE_FIGURE)
            by_figure++;
        else if (f->a == c.slow_node && f->reason == CB_SCAN_NODE_PAIRS)
            by_pairs++;
        else
            other++;
        CHECK(u, f->ratio < 0.8 && fabs(f->ratio - f->figure / f->median) < 1e-12);
        CHECK(u, isfinite(f->again) && f->figure == f->again);
    }
    CHECK(u, by_figure == 1 && other == 0);
    CHECK(u, by_pairs == (n >= 3));
    cb_scan_verdict_free(&v);
}

/* One slow link a-b among n >= 3: that link, nobody else. */
static void check_slow_link(unit_state *u, int n, unsigned long long seed)
{
    cluster c = healthy(n, seed);
    c.slow_a = (int)(seed % (unsigned)n);
    c.slow_b = (c.slow_a + 1 + (int)(seed / 7 % (unsigned)(n - 1))) % n;
    scan_data d;
    cb_scan_input in;
    cb_scan_verdict v;
    scan(&c, &d, &in);
    CHECK(u, judge(u, &c, &in, &v) == 0);
    int lo = c.slow_a < c.slow_b ? c.slow_a : c.slow_b, hi = c.slow_a ^ c.slow_b ^ lo;
    CHECK(u, v.n == 1);
    CHECK(u, v.n >= 1 && v.items[0].reason == CB_SCAN_LINK && v.items[0].a == lo &&
                 v.items[0].b == hi && v.items[0].ratio < 0.8);
    cb_scan_verdict_free(&v);
}

/* One slow link a-b among n >= 4, and node a read slow to every partner
 * in the scan (a load spike on its ranks) but fine alone: a is slow in its
 * pairs at first, clears, and its link is still named, alone. */
static void check_link_under_spike(unit_state *u, int n, unsigned long long seed)
{
    cluster c = healthy(n, seed);
    c.slow_a = (int)(seed % (unsigned)n);
    c.slow_b = (c.slow_a + 1 + (int)(seed / 7 % (unsigned)(n - 1))) % n;
    c.factor = 0.01;
    scan_data d;
    cb_scan_input in;
    cb_scan_verdict v;
    scan(&c, &d, &in);
    for (int b = 0; b < n; b++)
        if (b != c.slow_a && b != c.slow_b)
            d.pair[c.slow_a * n + b] = d.pair[b * n + c.slow_a] *= 0.05;
    CHECK(u, cb_scan_candidates(&in, &v) == 0);
    int hid = 0;
    for (int i = 0; i < v.n; i++)
        hid += v.items[i].reason == CB_SCAN_NODE_PAIRS && v.items[i].a == c.slow_a;
    CHECK(u, hid == 1);   /* the spike did hide the link at first */
    cb_scan_verdict_free(&v);
    CHECK(u, judge(u, &c, &in, &v) == 0);
    int lo = c.slow_a < c.slow_b ? c.slow_a : c.slow_b, hi = c.slow_a ^ c.slow_b ^ lo;
    CHECK(u, v.n == 1 && v.items[0].reason == CB_SCAN_LINK && v.items[0].a == lo &&
                 v.items[0].b == hi && v.items[0].controlled && v.items[0].ratio < 0.1);
    cb_scan_verdict_free(&v);
}

/* Two slow links at one node among n >= 4: both links, not the node (it
 * is fine with the others). */
static void check_two_links(unit_state *u, int n, unsigned long long seed)
{
    cluster c = healthy(n, seed);
    scan_data d;
    cb_scan_input in;
    cb_scan_verdict v;
    scan(&c, &d, &in);
    /* The faults stay for the re-measures: pairs 0-1 and 0-2 at half. */
    c.slow_a = 0;
    c.slow_b = 1;
    d.pair[0 * n + 1] = d.pair[1 * n + 0] = measure(&c, CB_SCAN_PART_PAIR, 0, 1);
    d.pair[0 * n + 2] = d.pair[2 * n + 0] = 25 * noise(&c);
    CHECK(u, cb_scan_candidates(&in, &v) == 0);
    CHECK(u, v.n == 2 && v.items[0].reason == CB_SCAN_LINK && v.items[0].a == 0 &&
                 v.items[0].b == 1 && v.items[1].reason == CB_SCAN_LINK &&
                 v.items[1].a == 0 && v.items[1].b == 2);
    cb_scan_verdict_free(&v);
}

static void check_slow_rail(unit_state *u, int n, unsigned long long seed)
{
    cluster c = healthy(n, seed);
    c.slow_rail = (int)(seed % NRAILS);
    scan_data d;
    cb_scan_input in;
    cb_scan_verdict v;
    scan(&c, &d, &in);
    CHECK(u, judge(u, &c, &in, &v) == 0);
    CHECK(u, v.n == 1 && v.items[0].reason == CB_SCAN_RAIL && v.items[0].a == c.slow_rail);
    cb_scan_verdict_free(&v);
}

/* One noisy measurement in the scan (a transient: the hardware is fine):
 * a candidate, but measured again alone it recovers and is not named. */
static void check_recovers(unit_state *u, int n, unsigned long long seed)
{
    cluster c = healthy(n, seed);
    scan_data d;
    cb_scan_input in;
    cb_scan_verdict v;
    scan(&c, &d, &in);
    int a = (int)(seed % (unsigned)n), b = (a + 1) % n;
    d.node[a] *= 0.3;
    d.pair[a * n + b] *= 0.3;
    d.rail[seed % NRAILS] *= 0.3;
    CHECK(u, cb_scan_candidates(&in, &v) == 0);
    CHECK(u, v.n == (n >= 3 ? 3 : 2));   /* node, rail; link when judgeable */
    cb_scan_verdict_free(&v);
    CHECK(u, judge(u, &c, &in, &v) == 0);
    CHECK(u, v.n == 0);
    cb_scan_verdict_free(&v);
}

/* 3 nodes where one pair (0-1) was lucky in the scan (1.8 x): both its
 * nodes' scores rise and node 2 looks slow in its pairs, but measured
 * again beside that pair (its control), it is not; the same at every seed.
 * With 2 rails a rail is compared with the other, not with their mean. */
static void check_small_counts(unit_state *u)
{
    int named = 0;
    for (unsigned long long seed = 1; seed <= 200; seed++) {
        cluster c = healthy(3, seed);
        scan_data d;
        cb_scan_input in;
        cb_scan_verdict v;
        scan(&c, &d, &in);
        d.pair[0 * 3 + 1] = d.pair[1 * 3 + 0] = 90;
        d.pair[0 * 3 + 2] = d.pair[2 * 3 + 0] = d.pair[1 * 3 + 2] = d.pair[2 * 3 + 1] = 50;
        CHECK(u, judge(u, &c, &in, &v) == 0);
        named += v.n;
        cb_scan_verdict_free(&v);
    }
    CHECK(u, named == 0);

    /* The reference is exactly the median of the others: link 0-1 among
     * 4 nodes against the other five pairs. */
    double pairs4[16] = {NAN, 10, 50, 52, 10, NAN, 54, 56, 50, 54, NAN, 58, 52, 56, 58, NAN};
    cb_scan_input in4 = {.nnodes = 4, .pair_bw = pairs4};
    cb_scan_verdict v4;
    CHECK(u, cb_scan_candidates(&in4, &v4) == 0);
    CHECK(u, v4.n == 1 && v4.items[0].reason == CB_SCAN_LINK && v4.items[0].a == 0 &&
                 v4.items[0].b == 1 && v4.items[0].median == 54 && v4.items[0].reference_n == 5);
    cb_scan_verdict_free(&v4);

    double rails[2] = {40, 20};
    cb_scan_input in = {.nnodes = 0, .nrails = 2, .rail_busbw = rails};
    cb_scan_verdict v;
    CHECK(u, cb_scan_candidates(&in, &v) == 0);
    CHECK(u, v.n == 1 && v.items[0].reason == CB_SCAN_RAIL && v.items[0].a == 1 &&
                 v.items[0].median == 40 && v.items[0].ratio == 0.5 &&
                 v.items[0].reference_n == 1);
    cb_scan_remeasure ctl;
    CHECK(u, v.n == 1 && cb_scan_control_of(&in, &v, &v.items[0], &ctl) == 0 &&
                 ctl.part == CB_SCAN_PART_RAIL && ctl.a == 0);
    /* Still half the other rail measured beside it: named, with low
     * confidence (one figure to compare with). */
    cb_scan_recheck(&v.items[0], 10, 20);
    cb_scan_settle(&v);
    CHECK(u, v.n == 1 && v.items[0].ratio == 0.5 && v.items[0].controlled &&
                 cb_scan_confidence(&v, &v.items[0]) == CB_SCAN_CONFIDENCE_LOW);
    cb_scan_verdict_free(&v);
    /* Lucky in the scan, the other rail is as fast when measured beside it. */
    CHECK(u, cb_scan_candidates(&in, &v) == 0 && v.n == 1);
    cb_scan_recheck(&v.items[0], 30, 31);
    cb_scan_settle(&v);
    CHECK(u, v.n == 0);
    cb_scan_verdict_free(&v);
    /* A slow rail whose control a load spike slowed as much in one try:
     * judged against the control's best, it stays slow (the old per-try
     * ratio cleared it: 1/1). */
    CHECK(u, cb_scan_candidates(&in, &v) == 0 && v.n == 1);
    cb_scan_recheck(&v.items[0], 1, 40);
    cb_scan_recheck(&v.items[0], 1, 1);
    CHECK(u, !cb_scan_cleared(&v, &v.items[0]) && v.items[0].median == 40 &&
                 v.items[0].ratio == 1.0 / 40);
    cb_scan_recheck(&v.items[0], 1, 39);
    cb_scan_settle(&v);
    CHECK(u, v.n == 1 && v.items[0].again == 1);
    cb_scan_verdict_free(&v);
}

/* The machine slows between the scan and the re-measures (another job's
 * load: every re-measure at 0.6 x): a noisy candidate is judged against
 * its control measured under the same load, and nobody healthy is named;
 * a slow node still is. */
static void check_load_change(unit_state *u)
{
    int sizes[] = {3, 4, 8};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
        for (unsigned long long seed = 1; seed <= 40; seed++) {
            int n = sizes[s];
            cluster c = healthy(n, seed);
            c.load = 0.6;
            scan_data d;
            cb_scan_input in;
            cb_scan_verdict v;
            scan(&c, &d, &in);
            int a = (int)(seed % (unsigned)n);
            d.node[a] *= 0.5;                      /* a transient in the scan */
            d.rail[seed % NRAILS] *= 0.5;
            CHECK(u, judge(u, &c, &in, &v) == 0);
            CHECK(u, v.n == 0);
            cb_scan_verdict_free(&v);
            c = healthy(n, seed);
            c.load = 0.6;
            c.slow_node = a;
            scan(&c, &d, &in);
            CHECK(u, judge(u, &c, &in, &v) == 0);
            CHECK(u, v.n >= 1);
            for (int i = 0; i < v.n; i++)
                CHECK(u, v.items[i].a == a && v.items[i].reason != CB_SCAN_LINK &&
                             v.items[i].reason != CB_SCAN_RAIL);
            cb_scan_verdict_free(&v);
        }
}

/* Confidence: a slow node among 8 is high (controlled, many figures);
 * among 3, low (2 other figures); wrong elements, certain. */
static void check_confidence(unit_state *u)
{
    for (unsigned long long seed = 1; seed <= 20; seed++) {
        for (int n = 3; n <= 8; n += 5) {
            cluster c = healthy(n, seed);
            c.slow_node = (int)(seed % (unsigned)n);
            c.factor = 0.2;
            scan_data d;
            cb_scan_input in;
            cb_scan_verdict v;
            scan(&c, &d, &in);
            CHECK(u, judge(u, &c, &in, &v) == 0 && v.n >= 1);
            for (int i = 0; i < v.n; i++) {
                cb_scan_confidence_level want = n == 8 ? CB_SCAN_CONFIDENCE_HIGH
                                                       : CB_SCAN_CONFIDENCE_LOW;
                CHECK(u, cb_scan_confidence(&v, &v.items[i]) == want);
                CHECK(u, v.items[i].controlled);
            }
            cb_scan_verdict_free(&v);
        }
    }
    cb_scan_finding f = {.reason = CB_SCAN_NODE_WRONG, .wrong = 3};
    cb_scan_verdict v = {.threshold = 0.8};
    CHECK(u, cb_scan_confidence(&v, &f) == CB_SCAN_CONFIDENCE_CERTAIN);
    CHECK(u, strcmp(cb_scan_confidence_name(CB_SCAN_CONFIDENCE_CERTAIN), "certain") == 0 &&
                 strcmp(cb_scan_confidence_name(CB_SCAN_CONFIDENCE_LOW), "low") == 0);
}

int main(void)
{
    unit_state u = {0, 0};

    double x[] = {5, NAN, 1, 3, 100, 4};
    cb_scan_class k = cb_scan_class_of(x, 6);
    CHECK(&u, k.n == 5 && k.median == 4 && k.mad == 1);
    k = cb_scan_class_of(x, 0);
    CHECK(&u, k.n == 0 && isnan(k.median));

    check_healthy(&u);
    int sizes[] = {2, 3, 4, 5, 7, 8, 16, 17};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
        for (unsigned long long seed = 1; seed <= 40; seed++) {
            check_slow_node(&u, sizes[s], seed);
            check_slow_rail(&u, sizes[s], seed);
            check_recovers(&u, sizes[s], seed);
            if (sizes[s] >= 3)
                check_slow_link(&u, sizes[s], seed);
            if (sizes[s] >= 4) {
                check_two_links(&u, sizes[s], seed);
                check_link_under_spike(&u, sizes[s], seed);
            }
        }

    /* Wrong elements: named without re-measure, whatever the figures. */
    cluster c = healthy(4, 9);
    scan_data d;
    cb_scan_input in;
    cb_scan_verdict v;
    scan(&c, &d, &in);
    d.wrong[2] = 5;
    CHECK(&u, judge(&u, &c, &in, &v) == 0);
    CHECK(&u, v.n == 1 && v.items[0].reason == CB_SCAN_NODE_WRONG && v.items[0].a == 2 &&
                  v.items[0].wrong == 5 && !v.items[0].needs_remeasure);
    cb_scan_verdict_free(&v);

    /* Re-measure targets: the node alone; a link's pair; a node slow in its
     * pairs with its fastest partner that is fine. */
    c = healthy(4, 3);
    c.slow_node = 1;
    scan(&c, &d, &in);
    d.pair[1 * 4 + 3] = d.pair[3 * 4 + 1] = 30;   /* its fastest partner: 3 */
    CHECK(&u, cb_scan_candidates(&in, &v) == 0 && v.n == 2);
    cb_scan_remeasure what;
    CHECK(&u, cb_scan_remeasure_of(&in, &v, &v.items[0], &what) == 0 &&
                  what.part == CB_SCAN_PART_NODE && what.a == 1);
    CHECK(&u, v.items[1].reason == CB_SCAN_NODE_PAIRS &&
                  cb_scan_remeasure_of(&in, &v, &v.items[1], &what) == 0 &&
                  what.part == CB_SCAN_PART_PAIR && what.a == 1 && what.b == 3);
    cb_scan_recheck(&v.items[1], NAN, NAN);   /* the re-measure failed: first figure stands */
    CHECK(&u, v.items[1].figure == v.items[1].first && !cb_scan_cleared(&v, &v.items[1]));
    /* Several re-measures: the best one is judged; one at the median clears. */
    double m = v.items[1].median;
    cb_scan_recheck(&v.items[1], 0.2 * m, NAN);
    cb_scan_recheck(&v.items[1], 0.1 * m, NAN);
    CHECK(&u, v.items[1].again == 0.2 * m && v.items[1].figure == 0.2 * m &&
                  !cb_scan_cleared(&v, &v.items[1]) && !v.items[1].controlled);
    cb_scan_recheck(&v.items[1], NAN, NAN);
    cb_scan_recheck(&v.items[1], m, NAN);
    CHECK(&u, v.items[1].figure == m && cb_scan_cleared(&v, &v.items[1]));
    cb_scan_settle(&v);
    CHECK(&u, v.n == 1 && v.items[0].reason == CB_SCAN_NODE_FIGURE);
    cb_scan_verdict_free(&v);

    /* The threshold: a node at half speed is no suspect at 0.4, though a
     * candidate (below the screen, 0.8); at 0.1 (screen 0.3) it is none;
     * bad values. */
    CHECK(&u, cb_scan_screen(0.1) > 0.29 && cb_scan_screen(0.1) < 0.31 &&
                  cb_scan_screen(0.4) == CB_SCAN_THRESHOLD_DEFAULT &&
                  cb_scan_screen(0.9) == 0.9);
    c = healthy(8, 5);
    c.slow_node = 0;
    scan(&c, &d, &in);
    in.threshold = 0.4;
    CHECK(&u, cb_scan_candidates(&in, &v) == 0 && v.n >= 1 && v.items[0].a == 0);
    cb_scan_verdict_free(&v);
    CHECK(&u, judge(&u, &c, &in, &v) == 0 && v.n == 0);
    cb_scan_verdict_free(&v);
    in.threshold = 0.1;
    CHECK(&u, cb_scan_candidates(&in, &v) == 0 && v.n == 0);
    cb_scan_verdict_free(&v);
    /* Every part slowed alike in the scan, a host's fixed cost compressed
     * to 0.15 of the others (T 0.1): a candidate, named once measured alone. */
    c = healthy(4, 7);
    c.slow_node = 1;
    c.factor = 0.01;
    scan(&c, &d, &in);
    d.node[1] = 0.15 * d.node[0];
    in.threshold = 0.1;
    CHECK(&u, judge(&u, &c, &in, &v) == 0 && v.n == 2 && v.items[0].a == 1 &&
                  v.items[0].reason == CB_SCAN_NODE_FIGURE && v.items[0].ratio < 0.1 &&
                  v.items[1].reason == CB_SCAN_NODE_PAIRS);
    cb_scan_verdict_free(&v);
    in.threshold = 1.5;
    CHECK(&u, cb_scan_candidates(&in, &v) == -1 && v.n == 0 && v.items == NULL);
    in.threshold = -0.1;
    CHECK(&u, cb_scan_candidates(&in, &v) == -1);

    /* A control slowed by a load spike in the first try clears a slow
     * node against it, but not for sure (its first reference says slow):
     * the next try, with a control at full speed, keeps it a suspect. */
    c = healthy(4, 11);
    c.slow_node = 2;
    c.factor = 0.01;
    scan(&c, &d, &in);
    in.threshold = 0.3;
    CHECK(&u, cb_scan_candidates(&in, &v) == 0 && v.n >= 1);
    cb_scan_finding *slow = &v.items[v.n - 1];
    CHECK(&u, slow->reason == CB_SCAN_NODE_PAIRS && slow->a == 2);
    cb_scan_recheck(slow, 0.5, 1.0);   /* the control at 1/50 of its speed */
    CHECK(&u, cb_scan_cleared(&v, slow) && !cb_scan_cleared_for_sure(&v, slow));
    cb_scan_recheck(slow, 0.5, 50);
    CHECK(&u, !cb_scan_cleared(&v, slow) && !cb_scan_cleared_for_sure(&v, slow));
    cb_scan_recheck(slow, 50, 50);     /* fine alone after all: cleared for sure */
    CHECK(&u, cb_scan_cleared_for_sure(&v, slow));
    cb_scan_verdict_free(&v);

    /* A re-measure lasts CB_SCAN_REMEASURE_MIN_S at its scan figure's pace,
     * within [least, CB_SCAN_REMEASURE_MOST x least]; unknown: least. */
    CHECK(&u, cb_scan_remeasure_iters(1e6, 1.0, 12) == (int)ceil(CB_SCAN_REMEASURE_MIN_S / 1e-3));
    CHECK(&u, cb_scan_remeasure_iters(262144, 0.006, 12) == 12);
    CHECK(&u, cb_scan_remeasure_iters(1e6, 1e6, 12) == 12 * CB_SCAN_REMEASURE_MOST);
    CHECK(&u, cb_scan_remeasure_iters(1e6, NAN, 12) == 12 &&
                  cb_scan_remeasure_iters(1e6, 0, 0) == 1);
    c = healthy(4, 2);
    scan(&c, &d, &in);
    cb_scan_remeasure part = {CB_SCAN_PART_PAIR, 1, 3};
    CHECK(&u, cb_scan_figure_of(&in, &part) == d.pair[1 * 4 + 3]);
    part = (cb_scan_remeasure){CB_SCAN_PART_RAIL, 2, -1};
    CHECK(&u, cb_scan_figure_of(&in, &part) == d.rail[2]);
    part = (cb_scan_remeasure){CB_SCAN_PART_NODE, -1, -1};
    CHECK(&u, isnan(cb_scan_figure_of(&in, &part)));

    check_small_counts(&u);
    check_load_change(&u);
    check_confidence(&u);

    /* Parts not run: no nodes, no pairs, no rails, nothing to say. */
    in = (cb_scan_input){.nnodes = 4};
    CHECK(&u, cb_scan_candidates(&in, &v) == 0 && v.n == 0);
    cb_scan_verdict_free(&v);
    return unit_done(&u, "unit_scan_verdict");
}
