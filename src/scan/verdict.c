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

/* The median of sorted[0..k) less the values drop[0..m) (sorted, each one
 * of sorted's): one pass, so that leaving a node's pairs or a link out of
 * the reference costs no sort per part on a large cluster. */
static double median_dropping(const double *sorted, int k, const double *drop, int m)
{
    int left = k - m, want_lo = (left - 1) / 2, want_hi = left / 2, at = 0, j = 0;
    double lo = NAN, hi = NAN;
    if (m == 1 && left > 0) {
        /* One value out (a link): where it sits, by bisection; the
         * remaining i-th is sorted[i] before it, sorted[i + 1] after. */
        int p = 0, q = k;
        while (p < q) {
            int mid = p + (q - p) / 2;
            if (sorted[mid] < drop[0])
                p = mid + 1;
            else
                q = mid;
        }
        return (sorted[want_lo < p ? want_lo : want_lo + 1] +
                sorted[want_hi < p ? want_hi : want_hi + 1]) / 2;
    }
    for (int i = 0; left > 0 && i < k && at <= want_hi; i++) {
        if (j < m && sorted[i] == drop[j]) {
            j++;
            continue;
        }
        if (at == want_lo)
            lo = sorted[i];
        if (at == want_hi)
            hi = sorted[i];
        at++;
    }
    return (lo + hi) / 2;
}

/* Median of the finite x[i], i != skip, and how many there were. */
static double median_except(const double *x, int n, int skip, int *count, double *scratch)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        if (i != skip && isfinite(x[i]))
            scratch[k++] = x[i];
    *count = k;
    return k > 0 ? median_sorting(scratch, k) : NAN;
}

static int below(double figure, double median, double threshold)
{
    return isfinite(figure) && isfinite(median) && median > 0 && figure < threshold * median;
}

static void add(cb_scan_verdict *v, cb_scan_reason reason, int a, int b, double figure,
                double median, int reference_n)
{
    cb_scan_finding *f = &v->items[v->n++];
    *f = (cb_scan_finding){.reason = reason, .a = a, .b = b, .first = figure, .again = NAN,
                           .best_control = NAN,
                           .figure = figure, .median = median, .first_median = median,
                           .ratio = figure / median, .reference_n = reference_n,
                           .needs_remeasure = 1};
}

static int has_finding(const cb_scan_verdict *v, cb_scan_reason reason, int a, int b)
{
    for (int i = 0; i < v->n; i++)
        if (v->items[i].reason == reason && v->items[i].a == a && (b < 0 || v->items[i].b == b))
            return 1;
    return 0;
}

static int is_slow_in_pairs(const cb_scan_verdict *v, int node)
{
    return has_finding(v, CB_SCAN_NODE_PAIRS, node, -1);
}

/* The pairs of two nodes other than a (and other than the slow in their
 * pairs when clean), all[k] for pair (ends[2k], ends[2k+1]), skipping pair
 * (skip_a, skip_b); returns k. */
static int other_pairs(const cb_scan_input *in, const cb_scan_verdict *v, int a, int clean,
                       int skip_a, int skip_b, double *all, int *ends)
{
    int k = 0;
    for (int p = 0; p < in->nnodes; p++)
        for (int q = p + 1; q < in->nnodes; q++) {
            double x = pair_of(in, p, q);
            if (p == a || q == a || (p == skip_a && q == skip_b) || !isfinite(x) ||
                (clean && (is_slow_in_pairs(v, p) || is_slow_in_pairs(v, q))))
                continue;
            if (ends != NULL) {
                ends[2 * k] = p;
                ends[2 * k + 1] = q;
            }
            all[k++] = x;
        }
    return k;
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

/* Links: a pair below threshold x the median of the other pairs between
 * nodes that are not slow in their pairs, when neither of its nodes is.
 * With 2 nodes a pair has nothing to be compared with: no verdict. */
static void find_links(const cb_scan_input *in, cb_scan_verdict *v, double *all)
{
    int n = in->nnodes;
    if (n < 3)
        return;
    int k = other_pairs(in, v, -1, 1, -1, -1, all, NULL);
    qsort(all, (size_t)k, sizeof *all, by_value);
    for (int a = 0; a < n; a++)
        for (int b = a + 1; b < n; b++) {
            double x = pair_of(in, a, b);
            if (is_slow_in_pairs(v, a) || is_slow_in_pairs(v, b) || !isfinite(x))
                continue;
            double ref = median_dropping(all, k, &x, 1);
            if (below(x, ref, v->screen))
                add(v, CB_SCAN_LINK, a, b, x, ref, k - 1);
        }
}

double cb_scan_screen(double threshold)
{
    double loose = 3 * threshold < CB_SCAN_THRESHOLD_DEFAULT ? 3 * threshold
                                                            : CB_SCAN_THRESHOLD_DEFAULT;
    return loose > threshold ? loose : threshold;
}

int cb_scan_unmasked_links(const cb_scan_input *in, cb_scan_verdict *v)
{
    int n = in->nnodes, k = 0, added = 0, cleared = 0;
    if (in->pair_bw == NULL || n < 3 || v->items == NULL)
        return 0;
    /* state[a]: 0 fine, 1 slow in its pairs and cleared, 2 still slow. */
    int *state = calloc((size_t)n, sizeof *state);
    double *all = malloc(((size_t)n * (size_t)(n - 1) / 2 + 1) * sizeof *all);
    for (int i = 0; state != NULL && i < v->n; i++)
        if (v->items[i].reason == CB_SCAN_NODE_PAIRS) {
            state[v->items[i].a] = cb_scan_cleared(v, &v->items[i]) ? 1 : 2;
            cleared += state[v->items[i].a] == 1;
        }
    if (state == NULL || all == NULL || cleared == 0) {
        free(state);
        free(all);
        return 0;
    }
    for (int p = 0; p < n; p++)
        for (int q = p + 1; q < n; q++)
            if (state[p] != 2 && state[q] != 2 && isfinite(pair_of(in, p, q)))
                all[k++] = pair_of(in, p, q);
    qsort(all, (size_t)k, sizeof *all, by_value);
    for (int a = 0; a < n; a++)
        for (int b = a + 1; b < n; b++) {
            double x = pair_of(in, a, b);
            /* Only a cleared node's pairs: the others were judged as links. */
            if ((state[a] != 1 && state[b] != 1) || state[a] == 2 || state[b] == 2 ||
                !isfinite(x) || has_finding(v, CB_SCAN_LINK, a, b))
                continue;
            double ref = median_dropping(all, k, &x, 1);
            if (below(x, ref, v->screen)) {
                add(v, CB_SCAN_LINK, a, b, x, ref, k - 1);
                added++;
            }
        }
    free(state);
    free(all);
    return added;
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
    size_t room = (size_t)np + (size_t)n + (size_t)in->nrails + 1;
    v->threshold = thr;
    v->screen = cb_scan_screen(thr);
    thr = v->screen;   /* candidates; the re-measures decide at v->threshold */
    v->items = malloc(cap * sizeof *v->items);
    v->node_pair_score = malloc(((size_t)n + 1) * sizeof *v->node_pair_score);
    double *all = calloc(room, sizeof *all);
    double *scratch = calloc(room, sizeof *scratch);
    if (v->items == NULL || v->node_pair_score == NULL || all == NULL || scratch == NULL) {
        free(all);
        free(scratch);
        cb_scan_verdict_free(v);
        return -1;
    }
    v->nodes = cb_scan_class_of(in->node_busbw, n);
    v->rails = cb_scan_class_of(in->rail_busbw, in->nrails);
    for (int a = 0; a < n; a++)
        v->node_pair_score[a] = in->pair_bw != NULL ? pairs_median(in, a, all) : NAN;
    v->node_scores = cb_scan_class_of(v->node_pair_score, n);
    int k = in->pair_bw != NULL ? other_pairs(in, v, -1, 0, -1, -1, all, NULL) : 0;
    v->pairs = cb_scan_class_of(all, k);
    qsort(all, (size_t)k, sizeof *all, by_value);   /* every pair, for the node references */
    double *mine = all + k;                        /* room for one node's n - 1 pairs */

    for (int a = 0; a < n; a++) {
        int count = 0;
        double ref = in->node_busbw != NULL
                         ? median_except(in->node_busbw, n, a, &count, scratch) : NAN;
        if (in->node_busbw != NULL && below(in->node_busbw[a], ref, thr))
            add(v, CB_SCAN_NODE_FIGURE, a, -1, in->node_busbw[a], ref, count);
        /* Its pairs against the pairs of the others: its own pairs (and a
         * lucky one among them that lifts two nodes' scores) stay out. */
        int m = 0;
        for (int b = 0; in->pair_bw != NULL && b < n; b++)
            if (b != a && isfinite(pair_of(in, a, b)))
                mine[m++] = pair_of(in, a, b);
        qsort(mine, (size_t)m, sizeof *mine, by_value);
        count = k - m;
        ref = count > 0 ? median_dropping(all, k, mine, m) : NAN;
        if (in->pair_bw != NULL && slow_in_most_pairs(in, a, ref, thr))
            add(v, CB_SCAN_NODE_PAIRS, a, -1, v->node_pair_score[a], ref, count);
        if (in->wrong != NULL && in->wrong[a] > 0) {
            add(v, CB_SCAN_NODE_WRONG, a, -1, NAN, NAN, 0);
            v->items[v->n - 1].wrong = in->wrong[a];
            v->items[v->n - 1].needs_remeasure = 0;
        }
    }
    if (in->pair_bw != NULL)
        find_links(in, v, all);
    for (int r = 0; r < in->nrails && in->rail_busbw != NULL; r++) {
        int count = 0;
        double ref = median_except(in->rail_busbw, in->nrails, r, &count, scratch);
        if (below(in->rail_busbw[r], ref, thr))
            add(v, CB_SCAN_RAIL, r, -1, in->rail_busbw[r], ref, count);
    }
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

/* The figure of part `kind` number i (a pair: ends[2i], ends[2i+1]) that
 * is nearest ref; -1 when none is finite. */
static int nearest(const double *x, int n, double ref)
{
    int best = -1;
    for (int i = 0; i < n; i++)
        if (isfinite(x[i]) && (best < 0 || fabs(x[i] - ref) < fabs(x[best] - ref)))
            best = i;
    return best;
}

int cb_scan_control_of(const cb_scan_input *in, const cb_scan_verdict *v,
                       const cb_scan_finding *c, cb_scan_remeasure *what)
{
    int n = in->nnodes, np = n * (n - 1) / 2, best = -1;
    size_t room = (size_t)np + (size_t)n + (size_t)in->nrails + 1;
    double *x = malloc(room * sizeof *x);
    int *ends = malloc(2 * room * sizeof *ends);
    *what = (cb_scan_remeasure){.part = CB_SCAN_PART_NODE, .a = -1, .b = -1};
    if (x != NULL && ends != NULL) {
        switch (c->reason) {
        case CB_SCAN_NODE_FIGURE:
            for (int b = 0; b < n; b++)
                x[b] = b != c->a && in->node_busbw != NULL &&
                               !has_finding(v, CB_SCAN_NODE_FIGURE, b, -1)
                           ? in->node_busbw[b] : NAN;
            best = nearest(x, n, c->first_median);
            what->a = best;
            break;
        case CB_SCAN_NODE_PAIRS:
        case CB_SCAN_LINK:
            if (in->pair_bw == NULL)
                break;
            {
                int k = c->reason == CB_SCAN_LINK
                            ? other_pairs(in, v, -1, 1, c->a, c->b, x, ends)
                            : other_pairs(in, v, c->a, 1, -1, -1, x, ends);
                for (int i = 0; i < k; i++)
                    if (has_finding(v, CB_SCAN_LINK, ends[2 * i], ends[2 * i + 1]))
                        x[i] = NAN;
                best = nearest(x, k, c->first_median);
            }
            what->part = CB_SCAN_PART_PAIR;
            if (best >= 0) {
                what->a = ends[2 * best];
                what->b = ends[2 * best + 1];
            }
            break;
        case CB_SCAN_RAIL:
            for (int r = 0; r < in->nrails; r++)
                x[r] = r != c->a && in->rail_busbw != NULL && !has_finding(v, CB_SCAN_RAIL, r, -1)
                           ? in->rail_busbw[r] : NAN;
            best = nearest(x, in->nrails, c->first_median);
            what->part = CB_SCAN_PART_RAIL;
            what->a = best;
            break;
        case CB_SCAN_NODE_WRONG:
            break;
        }
    }
    free(x);
    free(ends);
    return best >= 0 ? 0 : -1;
}

double cb_scan_figure_of(const cb_scan_input *in, const cb_scan_remeasure *what)
{
    if (what->a < 0)
        return NAN;
    if (what->part == CB_SCAN_PART_NODE)
        return in->node_busbw != NULL && what->a < in->nnodes ? in->node_busbw[what->a] : NAN;
    if (what->part == CB_SCAN_PART_RAIL)
        return in->rail_busbw != NULL && what->a < in->nrails ? in->rail_busbw[what->a] : NAN;
    return in->pair_bw != NULL && what->b >= 0 && what->a < in->nnodes && what->b < in->nnodes
               ? pair_of(in, what->a, what->b) : NAN;
}

int cb_scan_remeasure_iters(double bytes, double figure, int least)
{
    if (least < 1)
        least = 1;
    if (!(figure > 0) || !isfinite(figure) || !(bytes > 0))
        return least;
    /* An operation's seconds at the figure's pace (GB/s per rank, near
     * enough for every kind: this sets a duration, not a result). */
    double want = CB_SCAN_REMEASURE_MIN_S / (bytes / (figure * 1e9));
    double most = (double)least * CB_SCAN_REMEASURE_MOST;
    return want <= least ? least : want >= most ? (int)most : (int)ceil(want);
}

void cb_scan_recheck(cb_scan_finding *c, double again, double control)
{
    /* The best candidate figure over the tries is judged against the best
     * control: a control slowed by a passing load spike in one try cannot
     * clear a part that is slow in every try, and a candidate slowed by
     * one still clears once it runs at the control's pace. */
    if (isfinite(control) && control > 0 && !(control <= c->best_control))
        c->best_control = control;
    if (isfinite(again) && !(again <= c->again))
        c->again = again;
    if (!isfinite(c->again))
        return;
    c->controlled = isfinite(c->best_control);
    c->median = c->controlled ? c->best_control : c->first_median;
    c->figure = c->again;
    c->ratio = c->again / c->median;
}

cb_scan_confidence_level cb_scan_confidence(const cb_scan_verdict *v, const cb_scan_finding *c)
{
    if (c->reason == CB_SCAN_NODE_WRONG)
        return CB_SCAN_CONFIDENCE_CERTAIN;
    if (c->reference_n < 3)
        return CB_SCAN_CONFIDENCE_LOW;
    if (!c->controlled || !(c->ratio < 0.75 * v->threshold))
        return CB_SCAN_CONFIDENCE_MEDIUM;
    return CB_SCAN_CONFIDENCE_HIGH;
}

const char *cb_scan_confidence_name(cb_scan_confidence_level level)
{
    static const char *const names[] = {"low", "medium", "high", "certain"};
    return level >= CB_SCAN_CONFIDENCE_LOW && level <= CB_SCAN_CONFIDENCE_CERTAIN ? names[level]
                                                                                : "low";
}

int cb_scan_cleared(const cb_scan_verdict *v, const cb_scan_finding *c)
{
    return c->reason != CB_SCAN_NODE_WRONG && !below(c->figure, c->median, v->threshold);
}

int cb_scan_cleared_for_sure(const cb_scan_verdict *v, const cb_scan_finding *c)
{
    /* Measured again first: a candidate of the screen is not below T in the
     * scan, and only its re-measure alone can tell. */
    return isfinite(c->again) && cb_scan_cleared(v, c) &&
           !below(c->figure, c->first_median, v->threshold);
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
