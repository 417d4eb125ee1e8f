#include "pattern.h"

#include <math.h>
#include <stdio.h>

/* Per-rank offset: r mod 3, so three ranks already differ. */
static double rank_offset(int rank)
{
    return (double)(rank % 3);
}

/* Sum of rank_offset over ranks 0..n-1. */
static double rank_offset_sum(int nranks)
{
    return 3.0 * (nranks / 3) + (nranks % 3 == 2 ? 1.0 : 0.0);
}

static double rank_offset_max(int nranks)
{
    return nranks >= 3 ? 2.0 : (double)(nranks - 1);
}

/* Base value of element i: odd stride, so neighbours differ when span > 1. */
static uint32_t element_base(const cb_pattern *pat, size_t i)
{
    return (uint32_t)((i * 5u + pat->seed) & (pat->span - 1u));
}

/* For prod: rank contributes 2 when (rank + i + seed) % period == 0, else 1. */
static uint32_t prod_phase(const cb_pattern *pat, size_t i)
{
    return (uint32_t)((i % pat->period + pat->seed % pat->period) % pat->period);
}

static int prod_doubles(const cb_pattern *pat, int rank, size_t i)
{
    return ((uint32_t)rank % pat->period + prod_phase(pat, i)) % pat->period == 0;
}

static int prod_exponent(const cb_pattern *pat, size_t i)
{
    /* Ranks r in [0, n) with r == k (mod period). */
    uint32_t k = (pat->period - prod_phase(pat, i)) % pat->period;
    return (uint32_t)pat->nranks > k ? (int)(((uint32_t)pat->nranks - 1 - k) / pat->period) + 1 : 0;
}

int cb_pattern_init(cb_pattern *pat, cb_dtype dtype, cb_redop redop, int nranks,
                    uint32_t seed, char *why, size_t why_len)
{
    const cb_dtype_info *info = cb_dtype_info_of(dtype);
    pat->dtype = dtype;
    pat->redop = redop;
    pat->nranks = nranks;
    pat->seed = seed;
    pat->span = 16;

    pat->period = 3;
    if (redop == CB_PROD) {
        /* At most max_doublings ranks contribute a 2 to any element. */
        int max_doublings = (int)floor(log2(info->exact_max));
        if ((nranks + 2) / 3 > max_doublings)
            pat->period = (uint32_t)((nranks + max_doublings - 1) / max_doublings);
        return 0;
    }
    /* Largest result: nranks * (span - 1) + offsets for sum, base + 2 otherwise. */
    for (; pat->span >= 1; pat->span /= 2) {
        double largest = redop == CB_SUM
                             ? (double)nranks * (pat->span - 1) + rank_offset_sum(nranks)
                             : (double)(pat->span - 1) + rank_offset_max(nranks);
        if (largest <= info->exact_max)
            return 0;
    }
    snprintf(why, why_len, "a sum over %d ranks cannot be checked exactly in %s", nranks,
             info->name);
    return -1;
}

double cb_pattern_input(const cb_pattern *pat, int rank, size_t i)
{
    if (pat->redop == CB_PROD)
        return prod_doubles(pat, rank, i) ? 2.0 : 1.0;
    return (double)element_base(pat, i) + rank_offset(rank);
}

double cb_pattern_reduced(const cb_pattern *pat, size_t i)
{
    double base = (double)element_base(pat, i);
    switch (pat->redop) {
    case CB_SUM:
        return pat->nranks * base + rank_offset_sum(pat->nranks);
    case CB_PROD:
        return ldexp(1.0, prod_exponent(pat, i));
    case CB_MIN:
        return base;
    case CB_MAX:
        return base + rank_offset_max(pat->nranks);
    default:
        return base;
    }
}

void cb_pattern_fill(const cb_pattern *pat, int rank, void *buf, size_t count)
{
    const cb_dtype_info *info = cb_dtype_info_of(pat->dtype);
    for (size_t i = 0; i < count; i++)
        info->store(buf, i, cb_pattern_input(pat, rank, i));
}

uint32_t cb_pattern_seed(uint32_t a, uint32_t b, uint32_t c, uint32_t d)
{
    /* FNV-1a over the four words: cheap, and every input changes the result. */
    uint32_t words[4] = {a, b, c, d};
    uint32_t h = 2166136261u;
    for (int w = 0; w < 4; w++) {
        for (int byte = 0; byte < 4; byte++) {
            h ^= (words[w] >> (8 * byte)) & 0xffu;
            h *= 16777619u;
        }
    }
    return h;
}
