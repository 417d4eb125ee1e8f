/* The health scan's groupings: the round-robin pair schedule meets every
 * node pair exactly once with no node twice in a round; peers, colours,
 * rails and nodes follow the rank-to-host table. */
#include <math.h>
#include <stdlib.h>

#include "scan/schedule.h"
#include "unit.h"

/* Every pair once, no node twice in a round, partner symmetric, the right
 * number of rounds and of resting nodes, round_of_pair consistent. */
static void check_schedule(unit_state *u, int n)
{
    int rounds = cb_scan_rounds(n);
    CHECK(u, rounds == (n % 2 ? n : n - 1));
    int *met = calloc((size_t)n * (size_t)n, sizeof *met);
    int *pairs = malloc((size_t)n * sizeof *pairs);
    int *seen = malloc((size_t)n * sizeof *seen);
    for (int r = 0; r < rounds; r++) {
        int resting = 0;
        for (int a = 0; a < n; a++) {
            seen[a] = 0;
            int b = cb_scan_partner(n, r, a);
            if (b < 0) {
                resting++;
                continue;
            }
            CHECK(u, b != a && b < n);
            CHECK(u, cb_scan_partner(n, r, b) == a);
            CHECK(u, cb_scan_round_of_pair(n, a, b) == r);
            met[a * n + b]++;
        }
        CHECK(u, resting == n % 2);
        int np = cb_scan_round_pairs(n, r, pairs);
        CHECK(u, np == n / 2);
        for (int k = 0; k < np; k++) {
            CHECK(u, pairs[2 * k] < pairs[2 * k + 1]);
            seen[pairs[2 * k]]++;
            seen[pairs[2 * k + 1]]++;
        }
        for (int a = 0; a < n; a++)
            CHECK(u, seen[a] <= 1);
    }
    int once = 1;
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++)
            if (met[a * n + b] != (a != b))
                once = 0;
    CHECK(u, once);
    CHECK(u, cb_scan_partner(n, rounds, 0) == -1);
    CHECK(u, cb_scan_partner(n, 0, n) == -1);
    free(met);
    free(pairs);
    free(seen);
}

int main(void)
{
    unit_state u = {0, 0};
    for (int n = 2; n <= 17; n++)
        check_schedule(&u, n);
    CHECK(&u, cb_scan_rounds(1) == 0 && cb_scan_rounds(0) == 0);
    CHECK(&u, cb_scan_partner(1, 0, 0) == -1);

    /* 4 hosts x 2 ranks, host keys as spec_color gives them (lowest rank). */
    int keys[8] = {0, 0, 2, 2, 4, 4, 6, 6};
    cb_scan_topology t;
    CHECK(&u, cb_scan_topology_init(&t, keys, 8) == 0);
    CHECK(&u, t.nnodes == 4 && t.max_local == 2);
    CHECK(&u, t.node[5] == 2 && t.local[5] == 1 && t.node_first[3] == 6);
    CHECK(&u, cb_scan_rank_at(&t, 3, 1) == 7 && cb_scan_rank_at(&t, 3, 2) == -1);
    for (int r = 0; r < cb_scan_rounds(4); r++)
        for (int rank = 0; rank < 8; rank++) {
            int peer = cb_scan_pair_peer(&t, r, rank);
            CHECK(&u, peer >= 0);   /* even N, equal nodes: nobody rests */
            CHECK(&u, t.local[peer] == t.local[rank]);
            CHECK(&u, t.node[peer] == cb_scan_partner(4, r, t.node[rank]));
            CHECK(&u, cb_scan_pair_peer(&t, r, peer) == rank);
            /* A 2-rank group: both ends share the colour, nobody else does. */
            int color = cb_scan_pair_color(&t, r, rank);
            CHECK(&u, color == cb_scan_pair_color(&t, r, peer));
            CHECK(&u, color == (rank < peer ? rank : peer));
        }
    for (int rank = 0; rank < 8; rank++) {
        CHECK(&u, cb_scan_rail_color(&t, rank) == rank % 2);
        CHECK(&u, cb_scan_node_color(&t, rank) == rank / 2);
    }
    CHECK(&u, cb_scan_rail_size(&t, 0) == 4 && cb_scan_rail_size(&t, 2) == 0);

    /* Alone: the part's ranks share its lowest rank as colour, the rest
     * are groups of one. */
    CHECK(&u, cb_scan_node_alone_color(&t, 2, 5) == 4 && cb_scan_node_alone_color(&t, 2, 4) == 4);
    CHECK(&u, cb_scan_node_alone_color(&t, 2, 3) == 3);
    CHECK(&u, cb_scan_rail_alone_color(&t, 1, 7) == 1 && cb_scan_rail_alone_color(&t, 1, 6) == 6);
    CHECK(&u, cb_scan_pair_alone_peer(&t, 1, 3, 3) == 7 && cb_scan_pair_alone_peer(&t, 1, 3, 6) == 2);
    CHECK(&u, cb_scan_pair_alone_peer(&t, 1, 3, 0) == -1 && cb_scan_pair_alone_peer(&t, 1, 1, 2) == -1);

    /* Figures of a round from per-rank times: 1 GB exchanged; rank 1 (node
     * 0, local 1) slow: 2 s, the others 0.5 s. Each pair sums its two local
     * indexes, each limited by its slower end. */
    double secs[8] = {0.5, 2, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5}, m[16];
    for (int i = 0; i < 16; i++)
        m[i] = -1;
    /* Round 0: node 0 with p0, the other two nodes q < q2 together. */
    int r0 = 0, p0 = cb_scan_partner(4, r0, 0), q = p0 == 1 ? 2 : 1, q2 = 6 - p0 - q;
    cb_scan_round_figures(&t, r0, -1, -1, 1e9, secs, m);
    CHECK(&u, m[0 * 4 + p0] == 2 + 0.5 && m[p0 * 4 + 0] == 2.5);
    CHECK(&u, m[q * 4 + q2] == 4 && m[q2 * 4 + q] == 4);
    CHECK(&u, m[0] == -1 && m[q * 4 + 0] == -1);   /* pairs of other rounds untouched */
    secs[5] = 0;
    cb_scan_round_figures(&t, 0, 0, 2, 1e9, secs, m);   /* pair 0-2 alone, a bad time */
    CHECK(&u, isnan(m[0 * 4 + 2]) && isnan(m[2 * 4 + 0]));

    /* Nodes of 2 ranks: busbw = 1 GB / slowest x 2(2-1)/2; rails of 4. */
    double nodes[4], rails[2];
    secs[5] = 0.5;
    CHECK(&u, cb_scan_node_figures(&t, 1e9, secs, nodes) == 4);
    CHECK(&u, nodes[0] == 0.5 && nodes[1] == 2 && nodes[2] == 2 && nodes[3] == 2);
    CHECK(&u, cb_scan_rail_figures(&t, 1e9, secs, rails) == 2);
    CHECK(&u, rails[0] == 2 * 1.5 && rails[1] == 0.5 * 1.5);
    secs[2] = NAN;
    cb_scan_node_figures(&t, 1e9, secs, nodes);
    CHECK(&u, isnan(nodes[1]) && nodes[0] == 0.5);

    unsigned long long wrong[8] = {0, 0, 0, 3, 0, 0, 1, 0}, by_node[4];
    cb_scan_wrong_by_node(&t, wrong, by_node);
    CHECK(&u, by_node[0] == 0 && by_node[1] == 3 && by_node[2] == 0 && by_node[3] == 1);
    CHECK(&u, cb_scan_worst_rank(&t, 1, wrong) == 3 && cb_scan_worst_rank(&t, 0, wrong) == 0);
    cb_scan_topology_free(&t);

    /* Interleaved hosts (round-robin placement), 3 nodes of 3, 2 and 1
     * ranks: node 0 = ranks 0,3,5; node 1 = 1,4; node 2 = 2. */
    int mixed[6] = {10, 20, 30, 10, 20, 10};
    CHECK(&u, cb_scan_topology_init(&t, mixed, 6) == 0);
    CHECK(&u, t.nnodes == 3 && t.max_local == 3);
    CHECK(&u, t.node_size[0] == 3 && t.node_size[1] == 2 && t.node_size[2] == 1);
    CHECK(&u, t.local[5] == 2 && t.node[4] == 1 && t.local[4] == 1);
    CHECK(&u, cb_scan_rank_at(&t, 0, 2) == 5);
    int first = -1, last = -1;
    CHECK(&u, cb_scan_pair_spare(&t, 0, 2, &first, &last) == 2 && first == 1 && last == 2);
    CHECK(&u, cb_scan_pair_spare(&t, 1, 0, &first, &last) == 1 && first == 2 && last == 2);
    CHECK(&u, cb_scan_pair_spare(&t, 0, 0, &first, &last) == 0);
    /* Node 2 has one rank: pair 0-2 sums local index 0 only. */
    double secs3[6] = {1, 1, 0.25, 1, 1, 1}, m3[9];
    cb_scan_round_figures(&t, cb_scan_round_of_pair(3, 0, 2), -1, -1, 1e9, secs3, m3);
    CHECK(&u, m3[0 * 3 + 2] == 1 && m3[2 * 3 + 0] == 1);
    CHECK(&u, cb_scan_rail_alone_color(&t, 2, 5) == 5 && cb_scan_rail_alone_color(&t, 1, 4) == 3);
    /* Node 2 and rail 2 have one rank: no figure. */
    double nodes3[3], rails3[3];
    CHECK(&u, cb_scan_node_figures(&t, 1e9, secs3, nodes3) == 3 && isnan(nodes3[2]));
    CHECK(&u, nodes3[0] == 1e9 / 1e9 / 1 * 2 * 2 / 3 && nodes3[1] == 1);
    CHECK(&u, cb_scan_rail_figures(&t, 1e9, secs3, rails3) == 3 && isnan(rails3[2]));
    int r02 = cb_scan_round_of_pair(3, 0, 2);
    CHECK(&u, cb_scan_pair_peer(&t, r02, 0) == 2 && cb_scan_pair_peer(&t, r02, 2) == 0);
    CHECK(&u, cb_scan_pair_peer(&t, r02, 3) == -1 && cb_scan_pair_peer(&t, r02, 5) == -1);
    CHECK(&u, cb_scan_pair_color(&t, r02, 3) == 3 && cb_scan_pair_color(&t, r02, 2) == 0);
    /* Node 1 rests in that round: its ranks are groups of one. */
    CHECK(&u, cb_scan_pair_peer(&t, r02, 1) == -1 && cb_scan_pair_color(&t, r02, 4) == 4);
    CHECK(&u, cb_scan_rail_size(&t, 0) == 3 && cb_scan_rail_size(&t, 1) == 2 &&
                  cb_scan_rail_size(&t, 2) == 1);
    cb_scan_topology_free(&t);
    cb_scan_topology_free(&t);   /* safe twice */
    CHECK(&u, cb_scan_topology_init(&t, keys, 0) == -1);
    cb_scan_topology_free(&t);
    return unit_done(&u, "unit_scan_schedule");
}
