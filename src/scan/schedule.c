#include "schedule.h"

#include <math.h>
#include <stdlib.h>

int cb_scan_topology_init(cb_scan_topology *t, const int *host_key, int nranks)
{
    *t = (cb_scan_topology){0};
    if (nranks < 1)
        return -1;
    t->node = malloc((size_t)nranks * sizeof *t->node);
    t->local = malloc((size_t)nranks * sizeof *t->local);
    t->node_size = calloc((size_t)nranks, sizeof *t->node_size);
    t->node_first = malloc((size_t)nranks * sizeof *t->node_first);
    if (t->node == NULL || t->local == NULL || t->node_size == NULL || t->node_first == NULL) {
        cb_scan_topology_free(t);
        return -1;
    }
    t->nranks = nranks;
    /* Quadratic in the worst case, but only over the nodes seen so far:
     * a few thousand ranks on a few hundred nodes cost nothing here. */
    for (int r = 0; r < nranks; r++) {
        int n = 0;
        while (n < t->nnodes && host_key[t->node_first[n]] != host_key[r])
            n++;
        if (n == t->nnodes)
            t->node_first[t->nnodes++] = r;
        t->node[r] = n;
        t->local[r] = t->node_size[n]++;
        if (t->node_size[n] > t->max_local)
            t->max_local = t->node_size[n];
    }
    return 0;
}

void cb_scan_topology_free(cb_scan_topology *t)
{
    free(t->node);
    free(t->local);
    free(t->node_size);
    free(t->node_first);
    *t = (cb_scan_topology){0};
}

int cb_scan_rank_at(const cb_scan_topology *t, int node, int local)
{
    if (node < 0 || node >= t->nnodes || local < 0 || local >= t->node_size[node])
        return -1;
    /* Ranks of a node in rank order: walk from its first rank. */
    for (int r = t->node_first[node]; r < t->nranks; r++)
        if (t->node[r] == node && t->local[r] == local)
            return r;
    return -1;
}

int cb_scan_rounds(int nnodes)
{
    if (nnodes < 2)
        return 0;
    return nnodes % 2 ? nnodes : nnodes - 1;
}

/*
 * Circle method on M = N nodes (N even) or M = N + 1 (N odd, node N a
 * phantom whose partner rests). Node M-1 stays put; in round r the others
 * pair off as i + j = 2r (mod M-1), and node r, which would pair with
 * itself, takes node M-1. M-1 is odd, so 2 is invertible and each round
 * is a perfect matching; over M-1 rounds every pair sums to each residue
 * once, so it meets exactly once.
 */
int cb_scan_partner(int nnodes, int round, int node)
{
    int rounds = cb_scan_rounds(nnodes);
    if (round < 0 || round >= rounds || node < 0 || node >= nnodes)
        return -1;
    int m = rounds + 1, fixed = m - 1, partner;
    if (node == fixed)
        partner = round;
    else if (node == round)
        partner = fixed;
    else
        partner = ((2 * round - node) % fixed + fixed) % fixed;
    return partner < nnodes ? partner : -1;
}

int cb_scan_round_of_pair(int nnodes, int a, int b)
{
    if (a == b || a < 0 || b < 0 || a >= nnodes || b >= nnodes)
        return -1;
    int rounds = cb_scan_rounds(nnodes), fixed = rounds;
    if (a == fixed)
        return b;
    if (b == fixed)
        return a;
    /* a + b = 2r (mod fixed): r = (a + b) * inverse of 2 = (a + b)(fixed + 1)/2. */
    return (int)(((long long)(a + b) * ((fixed + 1) / 2)) % fixed);
}

int cb_scan_round_pairs(int nnodes, int round, int *pairs)
{
    int n = 0;
    for (int a = 0; a < nnodes; a++) {
        int b = cb_scan_partner(nnodes, round, a);
        if (b > a) {
            pairs[2 * n] = a;
            pairs[2 * n + 1] = b;
            n++;
        }
    }
    return n;
}

int cb_scan_pair_peer(const cb_scan_topology *t, int round, int rank)
{
    if (rank < 0 || rank >= t->nranks)
        return -1;
    int other = cb_scan_partner(t->nnodes, round, t->node[rank]);
    return other < 0 ? -1 : cb_scan_rank_at(t, other, t->local[rank]);
}

int cb_scan_pair_color(const cb_scan_topology *t, int round, int rank)
{
    int peer = cb_scan_pair_peer(t, round, rank);
    return peer >= 0 && peer < rank ? peer : rank;
}

int cb_scan_pair_spare(const cb_scan_topology *t, int a, int b, int *first, int *last)
{
    int sa = t->node_size[a], sb = t->node_size[b];
    int lo = sa < sb ? sa : sb, hi = sa < sb ? sb : sa;
    *first = lo;
    *last = hi - 1;
    return hi - lo;
}

int cb_scan_rail_color(const cb_scan_topology *t, int rank)
{
    return t->local[rank];
}

int cb_scan_rail_size(const cb_scan_topology *t, int rail)
{
    int n = 0;
    for (int node = 0; node < t->nnodes; node++)
        n += rail >= 0 && rail < t->node_size[node];
    return n;
}

int cb_scan_node_color(const cb_scan_topology *t, int rank)
{
    return t->node[rank];
}

int cb_scan_node_alone_color(const cb_scan_topology *t, int node, int rank)
{
    return t->node[rank] == node ? t->node_first[node] : rank;
}

int cb_scan_rail_alone_color(const cb_scan_topology *t, int rail, int rank)
{
    if (t->local[rank] != rail)
        return rank;
    /* The rail's lowest rank: the first rank with that local index. */
    for (int r = 0; r < t->nranks; r++)
        if (t->local[r] == rail)
            return r;
    return rank;
}

int cb_scan_pair_alone_peer(const cb_scan_topology *t, int a, int b, int rank)
{
    if (rank < 0 || rank >= t->nranks || a == b)
        return -1;
    int node = t->node[rank];
    if (node != a && node != b)
        return -1;
    return cb_scan_rank_at(t, node == a ? b : a, t->local[rank]);
}

/* Node pair a-b's figure: the sum over shared local indexes of bytes over
 * the slower end's seconds; NaN when any time is unusable. */
static double pair_figure(const cb_scan_topology *t, int a, int b, double bytes,
                          const double *seconds)
{
    int shared = t->node_size[a] < t->node_size[b] ? t->node_size[a] : t->node_size[b];
    double sum = 0;
    for (int l = 0; l < shared; l++) {
        double sa = seconds[cb_scan_rank_at(t, a, l)], sb = seconds[cb_scan_rank_at(t, b, l)];
        double slower = sa > sb ? sa : sb;
        if (!(sa > 0) || !(sb > 0))
            return NAN;
        sum += bytes / 1e9 / slower;
    }
    return sum;
}

void cb_scan_round_figures(const cb_scan_topology *t, int round, int only_a, int only_b,
                           double bytes, const double *seconds, double *pair_bw)
{
    int n = t->nnodes;
    for (int a = 0; a < n; a++) {
        int b = only_a >= 0 ? (a == only_a ? only_b : -1) : cb_scan_partner(n, round, a);
        if (b < 0 || b == a || b >= n || (only_a < 0 && b < a))
            continue;
        pair_bw[a * n + b] = pair_bw[b * n + a] = pair_figure(t, a, b, bytes, seconds);
    }
}

void cb_scan_wrong_by_node(const cb_scan_topology *t, const unsigned long long *per_rank,
                           unsigned long long *per_node)
{
    for (int n = 0; n < t->nnodes; n++)
        per_node[n] = 0;
    for (int r = 0; r < t->nranks; r++)
        per_node[t->node[r]] += per_rank[r];
}

int cb_scan_worst_rank(const cb_scan_topology *t, int node, const unsigned long long *per_rank)
{
    int worst = -1;
    for (int r = 0; r < t->nranks; r++)
        if (t->node[r] == node && (worst < 0 || per_rank[r] > per_rank[worst]))
            worst = r;
    return worst;
}

/* Allreduce busbw of a group of k ranks whose slowest took slowest s. */
static double allreduce_busbw(double bytes, double slowest, int k, int usable)
{
    if (k < 2 || !usable || !(slowest > 0))
        return NAN;
    return bytes / 1e9 / slowest * 2.0 * (k - 1) / k;
}

int cb_scan_node_figures(const cb_scan_topology *t, double bytes, const double *seconds,
                         double *out)
{
    for (int n = 0; n < t->nnodes; n++) {
        double slowest = 0;
        int usable = 1;
        for (int r = 0; r < t->nranks; r++)
            if (t->node[r] == n) {
                usable &= seconds[r] > 0;
                if (seconds[r] > slowest)
                    slowest = seconds[r];
            }
        out[n] = allreduce_busbw(bytes, slowest, t->node_size[n], usable);
    }
    return t->nnodes;
}

int cb_scan_rail_figures(const cb_scan_topology *t, double bytes, const double *seconds,
                         double *out)
{
    for (int l = 0; l < t->max_local; l++) {
        double slowest = 0;
        int usable = 1;
        for (int r = 0; r < t->nranks; r++)
            if (t->local[r] == l) {
                usable &= seconds[r] > 0;
                if (seconds[r] > slowest)
                    slowest = seconds[r];
            }
        out[l] = allreduce_busbw(bytes, slowest, cb_scan_rail_size(t, l), usable);
    }
    return t->max_local;
}
