/* The health scan's groupings (-o scan): nodes, rails and a round-robin
 * schedule of node pairs. Pure functions over a rank-to-node table; the
 * engine builds the table once and asks for colours for MPI_Comm_split. */
#ifndef CB_SCAN_SCHEDULE_H
#define CB_SCAN_SCHEDULE_H

/* The health scan's parts (-o scan, -o scan_nodes, ...). */
#define CB_SCAN_NODES 1
#define CB_SCAN_PAIRS 2
#define CB_SCAN_RAILS 4

/* The scan's settings (cb_params.scan; parsed in src/options/params_health.c,
 * read by src/engine/scan_driver.c and the printers). */
typedef struct cb_scan_params {
    int parts;             /* -o scan parts: CB_SCAN_NODES | CB_SCAN_PAIRS | CB_SCAN_RAILS */
    double scan_threshold; /* --suspect-ratio: below this x the median is a suspect */
} cb_scan_params;

/* Where every rank of the run lives. Nodes are numbered 0, 1, ... in the
 * order of their lowest rank; a rank's local index is its position among
 * its node's ranks in rank order (0 for the node's lowest rank). */
typedef struct cb_scan_topology {
    int nranks;
    int nnodes;
    int max_local;      /* the largest node's rank count */
    int *node;          /* [nranks] node of each rank */
    int *local;         /* [nranks] local index of each rank */
    int *node_size;     /* [nnodes] ranks on each node */
    int *node_first;    /* [nnodes] each node's lowest rank */
} cb_scan_topology;

/* Fill t from host_key[r], any value shared by exactly the ranks of one
 * host (spec_color's "node" colour, the host's lowest rank, will do).
 * Returns 0, or -1 when out of memory or nranks < 1 (t is then empty and
 * cb_scan_topology_free is still safe). */
int cb_scan_topology_init(cb_scan_topology *t, const int *host_key, int nranks);
void cb_scan_topology_free(cb_scan_topology *t);

/* The rank at local index local of node, or -1 when that node has fewer
 * ranks (the extra local indexes of a larger node have no counterpart). */
int cb_scan_rank_at(const cb_scan_topology *t, int node, int local);

/* Rounds of the pair schedule: N-1 for even N, N for odd N (one node rests
 * each round), 0 for fewer than 2 nodes. */
int cb_scan_rounds(int nnodes);

/* The node paired with node in round (0 <= round < cb_scan_rounds), or -1
 * when node rests in that round. Circle method: every pair of nodes meets
 * in exactly one round and no node is in two pairs of one round. */
int cb_scan_partner(int nnodes, int round, int node);

/* The round in which nodes a and b meet (a != b), or -1 if out of range. */
int cb_scan_round_of_pair(int nnodes, int a, int b);

/* Pairs measured in round, written as node numbers a < b into pairs[2k],
 * pairs[2k+1] (room for nnodes entries); returns how many pairs. */
int cb_scan_round_pairs(int nnodes, int round, int *pairs);

/* For rank in round: the rank it exchanges with (the same local index on
 * the partner node), or -1 when it rests (its node rests, or the partner
 * node has no rank at its local index). */
int cb_scan_pair_peer(const cb_scan_topology *t, int round, int rank);

/* MPI_Comm_split colour of rank in round: the lower rank of its pair, so
 * each exchanging pair is a 2-rank group; a resting rank gets its own rank,
 * a group of one that the engine measures not and reports not. Always in
 * 0 .. nranks-1 (a valid colour for ncclCommSplit too). */
int cb_scan_pair_color(const cb_scan_topology *t, int round, int rank);

/* Ranks of node pair (a, b) that rest in their round because one node has
 * more ranks than the other: min and max of the larger node's spare local
 * indexes in *first, *last; returns their count (0 when the nodes match). */
int cb_scan_pair_spare(const cb_scan_topology *t, int a, int b, int *first, int *last);

/* Rails: one group per local index across nodes; colour = local index. */
int cb_scan_rail_color(const cb_scan_topology *t, int rank);
/* Ranks in rail (nodes with a rank at that local index). */
int cb_scan_rail_size(const cb_scan_topology *t, int rail);

/* Nodes: one group per node; colour = node number. */
int cb_scan_node_color(const cb_scan_topology *t, int rank);

/* Re-measuring one part alone (see cb_scan_remeasure_of): colours that put
 * the part's ranks in one group (coloured by its lowest rank) and every
 * other rank in a group of one (its own rank), which the engine measures
 * but does not report. Distinct groups never share a colour. */
int cb_scan_node_alone_color(const cb_scan_topology *t, int node, int rank);
int cb_scan_rail_alone_color(const cb_scan_topology *t, int rail, int rank);
/* Pair a-b alone: rank's peer when it is on node a or b and the other node
 * has its local index, else -1 (it rests). */
int cb_scan_pair_alone_peer(const cb_scan_topology *t, int a, int b, int rank);

/* The node-to-node figure of every pair a round measured, from each rank's
 * time per exchange of bytes (seconds[nranks], as rank 0 gathers them):
 * for each local index both nodes have, bytes / the slower end's time;
 * summed over local indexes (they ran at once), in GB/s per direction.
 * Written to pair_bw[a*n+b] and [b*n+a] (n = t->nnodes); other entries are
 * left alone. only_a, only_b >= 0: only that pair (a re-measure); -1, -1:
 * every pair of round. A pair with a non-positive or NaN time gets NaN. */
void cb_scan_round_figures(const cb_scan_topology *t, int round, int only_a, int only_b,
                           double bytes, const double *seconds, double *pair_bw);

/* Node and rail figures of an all-reduce of bytes run in every node (or
 * every rail) at once, from each rank's time (seconds[nranks]): per group,
 * busbw = bytes / the slowest member's time x 2(k-1)/k for its k ranks, in
 * GB/s, into out[node] (out[rail]); NaN for a group of one rank (nothing
 * crosses) or an unusable time. Returns the group count written. */
int cb_scan_node_figures(const cb_scan_topology *t, double bytes, const double *seconds,
                         double *out);
int cb_scan_rail_figures(const cb_scan_topology *t, double bytes, const double *seconds,
                         double *out);

/* Wrong elements per node: the sum over each node's ranks of per_rank. */
void cb_scan_wrong_by_node(const cb_scan_topology *t, const unsigned long long *per_rank,
                           unsigned long long *per_node);
/* The rank of node with the largest per_rank value (its lowest rank on a
 * tie): the GPU a wrong-elements suspect line names. */
int cb_scan_worst_rank(const cb_scan_topology *t, int node, const unsigned long long *per_rank);

#endif
