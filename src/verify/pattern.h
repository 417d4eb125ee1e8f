/*
 * Verification data: what each rank puts in, and what each rank must hold
 * afterwards, in closed form so that checking an element costs O(1)
 * whatever the rank count.
 *
 * Reductions: every value is a small integer (or a power of two for prod)
 * chosen so the result is exact in the element type in any order of
 * operations, and results are compared exactly. The one exception is a
 * floating-point average on a backend that multiplies every input by a
 * rounded 1/n before summing (NCCL): there a bounded tolerance applies when
 * n is not a power of two (cb_pattern_tolerance).
 *
 * Data movement: each rank's send buffer is cut into blocks, and every
 * (rank, block, element) gets its own value, so that a block from the wrong
 * rank or the wrong place, a shift by one element, and data left over from
 * an earlier check (another seed) all show up as wrong values. No value is
 * ever a type's poison (cb_pattern_poison), which the engine puts in the
 * receive buffer before each check: an output never written is all wrong.
 */
#ifndef CB_PATTERN_H
#define CB_PATTERN_H

#include <stddef.h>
#include <stdint.h>

#include "verify/dtype.h"
#include "verify/redop.h"

/* What a run verifies (cb_params.verify; read by the engine's verify.c
 * and repeat.c, and the printers). */
typedef struct cb_verify_params {
    int check_passes;      /* 0: no verification */
    int check_timed;       /* --check-timed: also verify the last timed iteration */
    int repeat_check;      /* -B: every launch's output compared with the first's */
} cb_verify_params;

/* How avg's inputs are chosen, from most to least varied (pattern.c). */
enum cb_avg_scheme { CB_AVG_DENSE, CB_AVG_UNIT, CB_AVG_UNIFORM, CB_AVG_SPARSE };

typedef struct cb_pattern {
    cb_dtype dtype;
    cb_redop redop;   /* CB_REDOP_NONE: data movement */
    int nranks;
    uint32_t seed;    /* varies with everything that varies between checks: stale data shows */
    uint32_t span;    /* per-element base values (codes for data movement) lie in [0, span) */
    uint32_t period;  /* prod and sparse sums: one rank in every period contributes */
    int sparse;       /* sum, premulsum, avg: only a few ranks contribute to an element */
    int avg_scheme;   /* avg: enum cb_avg_scheme */
    double scale;     /* premulsum: CB_PREMULSUM_SCALAR; 1 otherwise */
    double low;       /* data movement: values are low + code */
    uint32_t stride;  /* data movement: odd, seed-chosen step between neighbours */
    /* Set by the caller after cb_pattern_init, 0 by default: the backend
     * computes a floating-point avg as the sum of input * fl(1/n). */
    int avg_premultiplied;
    /* Integer avg: some sums are n m(i) +- (n - 1), so that truncation toward
     * zero would not hide a sum off by one (pattern.c). */
    int avg_remainder;
} cb_pattern;

/*
 * Choose values for (dtype, redop, nranks, seed). Returns 0, or -1 with a
 * reason in why when no exact check is possible at this rank count.
 */
int cb_pattern_init(cb_pattern *pat, cb_dtype dtype, cb_redop redop, int nranks,
                    uint32_t seed, char *why, size_t why_len);

/* Value that rank puts at element i (data movement: element i of block 0). */
double cb_pattern_input(const cb_pattern *pat, int rank, size_t i);

/* Element i of the reduction of every rank's input. */
double cb_pattern_reduced(const cb_pattern *pat, size_t i);

/* How far element i of a reduction may lie from cb_pattern_reduced: 0 except
 * for a premultiplied floating-point avg over a rank count that is not a
 * power of two. */
double cb_pattern_tolerance(const cb_pattern *pat, size_t i);

/* Every value above is periodic in the element index. The period of rank's
 * input (rank >= 0) or of the reduced result (rank -1): a multiple of the
 * prime 65521, never a power of two (data movement: 65521 in j). */
size_t cb_pattern_period(const cb_pattern *pat, int rank);

/* Largest tile cb_pattern_tile builds. */
#define CB_TILE_MAX_BYTES ((size_t)2 << 20)

/* One period of rank's input (rank -1: of the reduced result) from element
 * first_index on, stored in the element type: a malloc'd buffer of
 * *tile_count elements to free, or NULL when a period would not be shorter
 * than count or would pass CB_TILE_MAX_BYTES (use the per-element values). */
void *cb_pattern_tile(const cb_pattern *pat, int rank, size_t first_index, size_t count,
                      size_t *tile_count);

/* Fill count elements of buf with rank's input (by tiles when they pay). */
void cb_pattern_fill(const cb_pattern *pat, int rank, void *buf, size_t count);

/* Data movement: the value rank puts at element j of block `block` of its
 * send buffer. Distinct for different ranks (and blocks) at the same j while
 * their rank numbers (block numbers) differ by less than span; neighbours
 * always differ, and places an even distance apart (not a multiple of 65521)
 * pseudo-randomly. */
double cb_pattern_block(const cb_pattern *pat, int rank, size_t block, size_t j);

/* Fill nblocks blocks of count elements with rank's data-movement input. */
void cb_pattern_fill_blocks(const cb_pattern *pat, int rank, void *buf, size_t nblocks,
                            size_t count);

/* Fill count elements of buf with the poison value of dtype, which no
 * verification ever expects: NaN in floating-point types, the largest value
 * of an unsigned integer type and the smallest of a signed one (no input or
 * result of any pattern takes it). The receive buffer holds it before every
 * check launch, so that an output never written cannot pass. */
void cb_pattern_poison(cb_dtype dtype, void *buf, size_t count);

/* Mix numbers into a seed (used by the engine to vary data between checks). */
uint32_t cb_pattern_seed(uint32_t a, uint32_t b, uint32_t c, uint32_t d);

#endif
