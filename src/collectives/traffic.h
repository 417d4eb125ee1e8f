/*
 * alltoallv's traffic matrices (--a2av-matrix): how many elements each rank
 * sends each other rank, as a matrix of small integer weights scaled by one
 * unit per size. Pure functions of the spec, the rank count and the cell:
 * every rank computes the same whole matrix, so what rank i sends rank j is
 * exactly what rank j expects from rank i. No state, no rand().
 */
#ifndef CB_TRAFFIC_H
#define CB_TRAFFIC_H

#include <stddef.h>
#include <stdint.h>

typedef enum cb_traffic_kind {
    CB_TRAFFIC_UNIFORM = 0,  /* every cell weighs 1: alltoall's traffic */
    CB_TRAFFIC_RANDOM,       /* cell weights 0..CB_TRAFFIC_RANDOM_MAX from the seed */
    CB_TRAFFIC_HOT           /* the first `hot` ranks receive `factor` times more */
} cb_traffic_kind;

/* The largest weight of a random cell (the smallest is 0: zero counts). */
#define CB_TRAFFIC_RANDOM_MAX 15
/* Limits of hot:K[:H]. */
#define CB_TRAFFIC_MAX_FACTOR 1000
#define CB_TRAFFIC_MAX_HOT 1000000

typedef struct cb_traffic_spec {
    cb_traffic_kind kind;
    uint64_t seed;       /* random */
    unsigned factor;     /* hot: K, how many times more a hot rank receives */
    unsigned hot;        /* hot: H, how many ranks (0..H-1) are hot [1] */
} cb_traffic_spec;

/* uniform, random[:SEED] (SEED 0 by default) or hot:K[:H]. Returns 0, or -1
 * with a reason naming the bad part in err. */
int cb_traffic_parse(const char *text, cb_traffic_spec *out, char *err, size_t err_len);

/* The spec in the form cb_traffic_parse reads, every field written out
 * ("uniform", "random:7", "hot:4:1"). */
void cb_traffic_format(const cb_traffic_spec *spec, char *buf, size_t len);

/* The weight of the cell from rank `from` to rank `to`, among nranks. */
unsigned cb_traffic_weight(const cb_traffic_spec *spec, int nranks, int from, int to);

/* Sums of the weights: what rank `rank` sends (its row) and receives (its
 * column). */
uint64_t cb_traffic_row_weight(const cb_traffic_spec *spec, int nranks, int rank);
uint64_t cb_traffic_col_weight(const cb_traffic_spec *spec, int nranks, int rank);

/* The largest row or column weight: the busiest rank's. Never 0 for a
 * uniform or hot matrix; a random one whose every cell is 0 gives 0. */
uint64_t cb_traffic_peak_weight(const cb_traffic_spec *spec, int nranks);

/* The matrix for a size: elements per unit of weight, so that the busiest
 * rank sends or receives at most `elements` (peak weight x unit). 0 when
 * elements cannot give every unit of weight one element. */
size_t cb_traffic_unit(const cb_traffic_spec *spec, int nranks, size_t elements);

#endif
