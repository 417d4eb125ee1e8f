/*
 * Verification data: what each rank puts in, and what a correct reduction
 * over all ranks gives back, in closed form so that checking an element
 * costs O(1) whatever the rank count.
 *
 * Every value is a small integer (or a power of two for prod) chosen so the
 * result is exact in the element type in any order of operations; results
 * can therefore be compared exactly.
 */
#ifndef CB_PATTERN_H
#define CB_PATTERN_H

#include <stddef.h>
#include <stdint.h>

#include "dtype.h"
#include "redop.h"

typedef struct cb_pattern {
    cb_dtype dtype;
    cb_redop redop;
    int nranks;
    uint32_t seed;  /* varies with size, placement and pass: stale data shows */
    uint32_t span;  /* per-element base values lie in [0, span), a power of two */
    uint32_t period; /* prod: one rank in every period contributes a factor 2 */
} cb_pattern;

/*
 * Choose values for (dtype, redop, nranks, seed). Returns 0, or -1 with a
 * reason in why when no exact check is possible at this rank count.
 */
int cb_pattern_init(cb_pattern *pat, cb_dtype dtype, cb_redop redop, int nranks,
                    uint32_t seed, char *why, size_t why_len);

/* Value that rank puts at element i. */
double cb_pattern_input(const cb_pattern *pat, int rank, size_t i);

/* Element i of the reduction of every rank's input. */
double cb_pattern_reduced(const cb_pattern *pat, size_t i);

/* Fill count elements of buf with rank's input. */
void cb_pattern_fill(const cb_pattern *pat, int rank, void *buf, size_t count);

/* Mix numbers into a seed (used by the engine to vary data between checks). */
uint32_t cb_pattern_seed(uint32_t a, uint32_t b, uint32_t c, uint32_t d);

#endif
