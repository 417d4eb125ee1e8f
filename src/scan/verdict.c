#include "verdict.h"

#include <math.h>
#include <stdlib.h>

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median of v[0..n-1] (n >= 1), sorting v. */
static double median_sorting(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, by_value);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

cb_scan_class cb_scan_class_of(const double *x, int n)
{
    cb_scan_class c = {NAN, NAN, 0};
    double *v = x != NULL && n > 0 ? malloc((size_t)n * sizeof *v) : NULL;
    if (v == NULL)
        return c;
    for (int i = 0; i < n; i++)
        if (isfinite(x[i]))
            v[c.n++] = x[i];
    if (c.n > 0) {
        c.median = median_sorting(v, c.n);
        for (int i = 0; i < c.n; i++)
            v[i] = fabs(v[i] - c.median);
        c.mad = median_sorting(v, c.n);
    }
    free(v);
    return c;
}

/* The figure of pair a-b: the lower finite one of its two matrix entries. */
static double pair_of(const cb_scan_input *in, int a, int b)
{
    int n = in->nnodes;
    double x = in->pair_bw[a * n + b], y = in->pair_bw[b * n + a];
    if (!isfinite(x))
        return y;
    return isfinite(y) && y < x ? y : x;
}

/* Median of node a's pairs (its score). */
static double pairs_median(const cb_scan_input *in, int a, double *scratch)
{
    int k = 0;
    for (int b = 0; b < in->nnodes; b++) {
        double x = b != a ? pair_of(in, a, b) : NAN;
        if (isfinite(x))
            scratch[k++] = x;
    }
    return k > 0 ? median_sorting(scratch, k) : NAN;
}

static int below(double figure, double median, double threshold)
{
    return isfinite(figure) && isfinite(median) && median > 0 && figure < threshold * median;
}

static void add(cb_scan_verdict *v, cb_scan_reason reason, int a, int b, double figure,
                double median)
{
    cb_scan_finding *f = &v->items[v->n++];
    *f = (cb_scan_finding){.reason = reason, .a = a, .b = b, .first = figure, .again = NAN,
                           .figure = figure, .median = median, .ratio = figure / median,
                           .needs_remeasure = 1};
}

static int is_slow_in_pairs(const cb_scan_verdict *v, int node)
{
    for (int i = 0; i < v->n; i++)
        if (v->items[i].reason == CB_SCAN_NODE_PAIRS && v->items[i].a == node)
            return 1;
    return 0;
}

/* Whether node a is slow in nearly all its pairs: at least 3 in 4 of its
 * measured pairs, and 2 or more, below threshold x reference (a node with
 * one or two bad links among many is no slow node: those are links). */
static int slow_in_most_pairs(const cb_scan_input *in, int a, double reference, double thr)
{
    int measured = 0, low = 0;
    for (int b = 0; b < in->nnodes; b++) {
        double x = b != a ? pair_of(in, a, b) : NAN;
        if (isfinite(x)) {
            measured++;
            low += below(x, reference, thr);
        }
    }
    return measured >= 2 && 4 * low >= 3 * measured;
}

/* Links: a pair below threshold x the median of the pairs between nodes
 * that are not slow in their pairs, when neither of its nodes is. With 2
 * nodes a pair has nothing to be compared with: no verdict on links. */
static void find_links(const cb_scan_input *in, cb_scan_verdict *v, double *all)
{
    int n = in->nnodes, k = 0;
    if (n < 3)
        return;
    for (int a = 0; a < n; a++)
        for (int b = a + 1; b < n; b++)
            if (!is_slow_in_pairs(v, a) && !is_slow_in_pairs(v, b))
                all[k++] = pair_of(in, a, b);
    cb_scan_class clean = cb_scan_class_of(all, k);
    for (int a = 0; a < n; a++)
        for (int b = a + 1; b < n; b++) {
            double x = pair_of(in, a, b);
            if (!is_slow_in_pairs(v, a) && !is_slow_in_pairs(v, b) &&
                below(x, clean.median, v->threshold))
                add(v, CB_SCAN_LINK, a, b, x, clean.median);
        }
}

int cb_scan_candidates(const cb_scan_input *in, cb_scan_verdict *v)
{
    *v = (cb_scan_verdict){0};
    double thr = in->threshold == 0 ? CB_SCAN_THRESHOLD_DEFAULT : in->threshold;
    if (!(thr > 0 && thr <= 1) || in->nnodes < 0 || in->nrails < 0)
        return -1;
    int n = in->nnodes, np = n * (n - 1) / 2;
    /* At most: three reasons per node, every pair, every rail. */
    size_t cap = 3 * (size_t)n + (size_t)np + (size_t)in->nrails + 1;
    v->threshold = thr;
    v->items = malloc(cap * sizeof *v->items);
    v->node_pair_score = malloc(((size_t)n + 1) * sizeof *v->node_pair_score);
    double *all = calloc((size_t)np + 1, sizeof *all);
    double *scratch = malloc(((size_t)n + 1) * sizeof *scratch);
    if (v->items == NULL || v->node_pair_score == NULL || all == NULL || scratch == NULL) {
        free(all);
        free(scratch);
        cb_scan_verdict_free(v);
        return -1;
    }
    v->nodes = cb_scan_class_of(in->node_busbw, n);
    v->rails = cb_scan_class_of(in->rail_busbw, in->nrails);
    for (int a = 0; a < n; a++)
        v->node_pair_score[a] = in->pair_bw != NULL ? pairs_median(in, a, scratch) : NAN;
    v->node_scores = cb_scan_class_of(v->node_pair_score, n);
    int k = 0;
    for (int a = 0; a < n && in->pair_bw != NULL; a++)
        for (int b = a + 1; b < n; b++)
            all[k++] = pair_of(in, a, b);
    v->pairs = cb_scan_class_of(all, k);

    for (int a = 0; a < n; a++) {
        if (in->node_busbw != NULL && below(in->node_busbw[a], v->nodes.median, thr))
            add(v, CB_SCAN_NODE_FIGURE, a, -1, in->node_busbw[a], v->nodes.median);
        if (in->pair_bw != NULL && slow_in_most_pairs(in, a, v->node_scores.median, thr))
            add(v, CB_SCAN_NODE_PAIRS, a, -1, v->node_pair_score[a], v->node_scores.median);
        if (in->wrong != NULL && in->wrong[a] > 0) {
            add(v, CB_SCAN_NODE_WRONG, a, -1, NAN, NAN);
            v->items[v->n - 1].wrong = in->wrong[a];
            v->items[v->n - 1].needs_remeasure = 0;
        }
    }
    if (in->pair_bw != NULL)
        find_links(in, v, all);
    for (int r = 0; r < in->nrails && in->rail_busbw != NULL; r++)
        if (below(in->rail_busbw[r], v->rails.median, thr))
            add(v, CB_SCAN_RAIL, r, -1, in->rail_busbw[r], v->rails.median);
    free(all);
    free(scratch);
    return 0;
}

int cb_scan_remeasure_of(const cb_scan_input *in, const cb_scan_verdict *v,
                         const cb_scan_finding *c, cb_scan_remeasure *what)
{
    *what = (cb_scan_remeasure){.part = CB_SCAN_PART_NODE, .a = c->a, .b = -1};
    switch (c->reason) {
    case CB_SCAN_NODE_FIGURE:
        return 0;
    case CB_SCAN_NODE_PAIRS: {
        /* Its fastest partner that is fine itself; failing that, any. */
        int best = -1, best_fine = -1;
        for (int b = 0; b < in->nnodes; b++) {
            double x = b != c->a ? pair_of(in, c->a, b) : NAN;
            if (!isfinite(x))
                continue;
            if (best < 0 || x > pair_of(in, c->a, best))
                best = b;
            if (!is_slow_in_pairs(v, b) && (best_fine < 0 || x > pair_of(in, c->a, best_fine)))
                best_fine = b;
        }
        int b = best_fine >= 0 ? best_fine : best;
        if (b < 0)
            return -1;
        what->part = CB_SCAN_PART_PAIR;
        what->a = c->a < b ? c->a : b;
        what->b = c->a < b ? b : c->a;
        return 0;
    }
    case CB_SCAN_LINK:
        what->part = CB_SCAN_PART_PAIR;
        what->b = c->b;
        return 0;
    case CB_SCAN_RAIL:
        what->part = CB_SCAN_PART_RAIL;
        return 0;
    case CB_SCAN_NODE_WRONG:
        break;
    }
    return -1;
}

void cb_scan_recheck(cb_scan_finding *c, double again)
{
    if (isfinite(again) && !(again <= c->again)) {
        c->again = again;
        c->figure = again;
        c->ratio = again / c->median;
    }
}

int cb_scan_cleared(const cb_scan_verdict *v, const cb_scan_finding *c)
{
    return c->reason != CB_SCAN_NODE_WRONG && !below(c->figure, c->median, v->threshold);
}

void cb_scan_settle(cb_scan_verdict *v)
{
    int kept = 0;
    for (int i = 0; i < v->n; i++)
        if (!cb_scan_cleared(v, &v->items[i]))
            v->items[kept++] = v->items[i];
    v->n = kept;
}

void cb_scan_verdict_free(cb_scan_verdict *v)
{
    free(v->items);
    free(v->node_pair_score);
    *v = (cb_scan_verdict){0};
}
