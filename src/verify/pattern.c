/*
 * Verification values. Schemes, per reduction (b(i) is a base value in
 * [0, span), r the rank, n the rank count, h(i) a rank chosen per element):
 *
 *   sum, premulsum  dense: r puts b(i), plus 1 when r == h(i); the sum is
 *                   n b(i) + 1, and every two ranks differ where one of them
 *                   is h(i). Sparse (when that cannot stay exact with span
 *                   >= 2): only the ranks r = k(i) mod period put v(i) = 1
 *                   or 2, the others 0, and one of them, s(i), puts v(i) + 1.
 *                   premulsum's result is scaled.
 *   prod            the ranks r = k(i) mod period put 2^e(i) (2 or 4), s(i)
 *                   2^(e(i) + 1), the others 1, so the result is a power of
 *                   two that fits. s(i) walks through the ranks of the residue
 *                   class k(i) as i advances, so that ranks r and r + period
 *                   differ too.
 *   min, max        r puts b(i), plus 1 unless r == h(i) (min) or plus 1 only
 *                   when r == h(i) (max): every rank decides some result.
 *   avg             dense: r puts m(i) = 1 + b(i), rank h(i) one more and the
 *                   next rank one less, so the sum is n m(i) and the average
 *                   m(i) exactly, also with truncating integer division.
 *                   Integer types (when it fits): at some elements
 *                   instead h(i) puts m(i) and every other rank m(i) + 1
 *                   (m(i) - 1 when m(i) < 0), so the sum is n m(i) + (n - 1)
 *                   (or - (n - 1)) and truncation toward zero still gives
 *                   m(i), chosen by the sign of m(i) and the parity of i so
 *                   that a sum one too large changes the quotient at every
 *                   other element and one too small at the others.
 *                   Unit (when that does not fit with span >= 2): the same
 *                   with m(i) = -1 or 1 (unsigned: 1). Uniform (when only n
 *                   fits): every rank puts m(i), -1 or 1 (unsigned 0 or 1).
 *                   Sparse (signed types, more ranks than the exact range):
 *                   h(i) puts d(i), the next rank -d(i), the others 0; the
 *                   average is 0 everywhere, so only contributions are
 *                   checked, not staleness.
 *
 * Every partial result in any order lies between the smallest and largest
 * value named above, which span and period keep inside the type's exact
 * integer range.
 */
#include "verify/pattern.h"
#include "common/format.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Base values come in pairs of elements: within a pair the second is 5 more
 * than the first (so they differ), and each pair gets its own seed-dependent
 * offset, so that blocks at any distance, and the values of another seed,
 * differ somewhere with overwhelming odds even when span is 2. */
#define CB_GROUP_SHIFT 1
/* Pair offsets, and with them every value below, repeat every
 * CB_GROUP_PERIOD elements, so that checks can compare whole tiles
 * (cb_pattern_period). The period is prime (the largest below 2^16), so no
 * power of two and no multiple of any chunk size a transport could use is a
 * multiple of it: a block displaced by any such offset reads differently.
 * Only a displacement by a multiple of 65521 elements reads the same. */
#define CB_GROUP_PERIOD 65521u
/* Largest span of base values for reductions. */
#define CB_REDUCE_SPAN 16u
/* Largest span of codes for data movement. */
#define CB_MOVE_SPAN 65536u

static uint32_t mix(uint32_t a, uint32_t b)
{
    uint32_t h = a ^ (b * 0x9e3779b1u);
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h;
}

/* Element i's place in the period. */
static uint32_t period_index(size_t i)
{
    return (uint32_t)(i % CB_GROUP_PERIOD);
}

static uint32_t element_base(const cb_pattern *pat, size_t i)
{
    uint32_t q = period_index(i);
    uint32_t group = mix(pat->seed, q >> CB_GROUP_SHIFT);
    return (q * 5u + group + pat->seed) & (pat->span - 1u);
}

/* The rank that stands out at element i (min, max, avg). */
static int holder(const cb_pattern *pat, size_t i)
{
    uint32_t n = (uint32_t)pat->nranks;
    return (int)((i % n + pat->seed % n) % n);
}

/* prod and sparse sums: rank r contributes when (r + phase) % period == 0. */
static uint32_t phase(const cb_pattern *pat, size_t i)
{
    return (uint32_t)((i % pat->period + pat->seed % pat->period) % pat->period);
}

static int contributes(const cb_pattern *pat, int rank, size_t i)
{
    return ((uint32_t)rank % pat->period + phase(pat, i)) % pat->period == 0;
}

/* Ranks r in [0, n) with r == k (mod period), k the residue that contributes. */
static int contributors(const cb_pattern *pat, size_t i)
{
    uint32_t k = (pat->period - phase(pat, i)) % pat->period;
    return (uint32_t)pat->nranks > k ? (int)(((uint32_t)pat->nranks - 1 - k) / pat->period) + 1
                                     : 0;
}

/* How many ranks share a residue class mod period, at most. */
static uint32_t class_size(const cb_pattern *pat)
{
    return ((uint32_t)pat->nranks + pat->period - 1u) / pat->period;
}

/* s(i): the contributing rank that puts one more (sparse sums) or one more
 * factor of two (prod), or nranks or more when that slot is empty. Its slot in
 * the class advances every period elements. */
static uint32_t special_rank(const cb_pattern *pat, size_t i)
{
    uint32_t slot = (uint32_t)((i / pat->period + pat->seed) % class_size(pat));
    return (pat->period - phase(pat, i)) % pat->period + slot * pat->period;
}

static double special_bump(const cb_pattern *pat, size_t i)
{
    return special_rank(pat, i) < (uint32_t)pat->nranks ? 1.0 : 0.0;
}

/* Sparse sums put 1 or 2, prod 2 or 4: bit 1 of the base value picks, so the
 * choice does not follow the contributing ranks' phase. */
static double sparse_value(const cb_pattern *pat, size_t i)
{
    return 1.0 + ((element_base(pat, i) >> 1) & 1u);
}

static int factor_exponent(const cb_pattern *pat, size_t i)
{
    return 1 + (int)((element_base(pat, i) >> 1) & 1u);
}

/* Largest power of two not above limit, at most cap; 0 when limit < 1. */
static uint32_t power_of_two_below(double limit, uint32_t cap)
{
    uint32_t span = cap;
    while (span > 0 && (double)span > limit)
        span /= 2;
    return span;
}

static int fail(char *why, size_t why_len, const cb_pattern *pat, const char *what)
{
    snprintf(why, why_len, "%s over %d rank%s cannot be checked exactly in %s", what,
             pat->nranks, cb_plural(pat->nranks), cb_dtype_info_of(pat->dtype)->name);
    return -1;
}

/* sum and premulsum: dense when it keeps span >= 2, else sparse. */
static int init_sum(cb_pattern *pat, double exact_max, char *why, size_t why_len)
{
    int n = pat->nranks;
    double limit = exact_max / pat->scale;
    for (pat->span = CB_REDUCE_SPAN; pat->span >= 2; pat->span /= 2)
        if ((double)n * (pat->span - 1) + 1.0 <= limit)
            return 0;
    /* Sparse: at most `most` ranks contribute 1 or 2 each, one of them 1 more. */
    pat->sparse = 1;
    pat->span = 4;
    int most = (int)floor((limit - 1.0) / 2.0);
    if (most < 1)
        return fail(why, why_len, pat, "a sum");
    pat->period = (uint32_t)((n + most - 1) / most);
    return 0;
}

static int init_avg(cb_pattern *pat, const cb_dtype_info *info, char *why, size_t why_len)
{
    int n = pat->nranks;
    /* Integer dense with remainders: the largest partial sum is n * span +
     * n - 1. Floating-point sums n m(i) + n - 1 would not divide exactly. */
    int may_remain = !info->is_float && n >= 2;
    if (may_remain) {
        pat->span = power_of_two_below((info->exact_max - (n - 1)) / n, CB_REDUCE_SPAN);
        if (pat->span >= 2) {
            pat->avg_remainder = 1;
            return 0;
        }
    }
    /* Dense: the largest partial sum is n * span + 1. */
    pat->span = power_of_two_below((info->exact_max - 1.0) / n, CB_REDUCE_SPAN);
    if (pat->span >= 2)
        return 0;
    /* Unit: m(i) is -1 or 1 (1 unsigned), partial sums reach n + 1.
     * Uniform: no +-1 either, partial sums reach n. */
    pat->span = 2;
    if (n + 1.0 <= info->exact_max) {
        pat->avg_scheme = CB_AVG_UNIT;
        /* Remainders: partial sums reach +-(2n - 1). */
        pat->avg_remainder = may_remain && 2.0 * n - 1.0 <= info->exact_max &&
                             (!info->is_signed || -(2.0 * n - 1.0) >= info->exact_min);
        return 0;
    }
    if (n <= info->exact_max) {
        pat->avg_scheme = CB_AVG_UNIFORM;
        return 0;
    }
    if (!info->is_signed)
        return fail(why, why_len, pat, "an average");
    /* Sparse: values +-(1 + b(i)), partial sums within that. */
    pat->avg_scheme = CB_AVG_SPARSE;
    pat->sparse = 1;
    return 0;
}

static void init_movement(cb_pattern *pat, const cb_dtype_info *info)
{
    /* Codes 0..span-1 map to low..low+span-1, all exact integers; an integer
     * type's poison value (its minimum, or an unsigned type's maximum) is
     * left out (cb_pattern_poison). */
    double poison_room = info->is_float ? 0.0 : 1.0;
    if (info->is_signed) {
        double half = fmin(-info->exact_min - poison_room, info->exact_max + 1.0);
        pat->span = 2 * power_of_two_below(half, CB_MOVE_SPAN / 2);
        pat->low = -(double)(pat->span / 2);
    } else {
        pat->span = power_of_two_below(info->exact_max + 1.0 - poison_room, CB_MOVE_SPAN);
        pat->low = 0;
    }
    pat->stride = 2u * (mix(pat->seed, 0x5157u) & (pat->span / 2u - 1u)) + 1u;
}

/* At most how many factors of 4 an exact prod takes: with s(i)'s extra
 * factor of 2 the largest result is 2^(2 max_factors + 1). */
static int prod_max_factors(const cb_dtype_info *info)
{
    int factors = ((int)floor(log2(info->exact_max)) - 1) / 2;
    return factors < 1 ? 1 : factors;
}

int cb_pattern_init(cb_pattern *pat, cb_dtype dtype, cb_redop redop, int nranks,
                    uint32_t seed, char *why, size_t why_len)
{
    const cb_dtype_info *info = cb_dtype_info_of(dtype);
    pat->dtype = dtype;
    pat->redop = redop;
    pat->nranks = nranks;
    pat->seed = seed;
    pat->span = CB_REDUCE_SPAN;
    pat->period = 3;
    pat->sparse = 0;
    pat->avg_scheme = CB_AVG_DENSE;
    pat->scale = redop == CB_PREMULSUM ? CB_PREMULSUM_SCALAR : 1.0;
    pat->low = 0;
    pat->stride = 5;
    pat->avg_premultiplied = 0;
    pat->avg_remainder = 0;

    switch (redop) {
    case CB_PROD: {
        /* At most max_factors ranks contribute a 2 or a 4 to any element. */
        int max_factors = prod_max_factors(info);
        if ((nranks + 2) / 3 > max_factors)
            pat->period = (uint32_t)((nranks + max_factors - 1) / max_factors);
        return 0;
    }
    case CB_SUM:
    case CB_PREMULSUM:
        /* An unsigned type's largest value is its poison (cb_pattern_poison). */
        return init_sum(pat, info->exact_max - (info->is_float || info->is_signed ? 0.0 : 1.0),
                        why, why_len);
    case CB_AVG:
        return init_avg(pat, info, why, why_len);
    case CB_MIN:
    case CB_MAX:
        /* Largest value: span - 1 + 1. */
        pat->span = power_of_two_below(info->exact_max, CB_REDUCE_SPAN);
        return 0;
    default:
        init_movement(pat, info);
        return 0;
    }
}

/* Codes: twice a pseudo-random value per (seed, place in the period), plus
 * stride (odd) times that place, so that neighbours differ in parity; plus
 * rank + 3 block, so that ranks (blocks) less than span apart differ at every
 * element. A shift by an odd offset changes every code, by an even one
 * (other than a multiple of the prime CB_GROUP_PERIOD) about 1 - 2/span of
 * them. */
double cb_pattern_block(const cb_pattern *pat, int rank, size_t block, size_t j)
{
    uint32_t q = period_index(j);
    uint32_t code = 2u * mix(pat->seed ^ 0xa7u, q) + q * pat->stride + (uint32_t)rank +
                    3u * (uint32_t)block;
    return pat->low + (double)(code & (pat->span - 1u));
}

/* avg: the value that h(i) adds and the next rank takes away. */
static double avg_delta(const cb_pattern *pat, size_t i)
{
    switch (pat->avg_scheme) {
    case CB_AVG_UNIFORM: return 0.0;
    case CB_AVG_SPARSE: return 1.0 + element_base(pat, i);
    default: return 1.0;
    }
}

/* avg: -1, 0 or 1, the sign of the remainder the inputs sum to at element i
 * (avg_remainder); 0 where h(i) and the next rank carry the delta instead.
 * m(i) is never 0 where there are remainders. A sum one too large changes the
 * truncated quotient where the remainder has m's sign (n m + (n - 1) + 1 =
 * n (m + 1), m > 0) or is 0 with m < 0 (n m + 1); one too small where the
 * remainder is 0 with m > 0 (n m - 1) or has m's sign (m < 0). The parity of
 * i picks which of the two shows, so that both show in any two neighbours. */
static int avg_remainder_sign(const cb_pattern *pat, size_t i, double mean)
{
    int too_large_shows = (int)((i + pat->seed) & 1u);
    if (!pat->avg_remainder || too_large_shows != (mean > 0))
        return 0;
    return mean < 0 ? -1 : 1;
}

/* avg: the result m(i). */
static double avg_mean(const cb_pattern *pat, size_t i)
{
    double base = (double)element_base(pat, i);
    int is_signed = cb_dtype_info_of(pat->dtype)->is_signed;
    switch (pat->avg_scheme) {
    case CB_AVG_DENSE: return 1.0 + base;
    case CB_AVG_UNIT: return is_signed ? 2.0 * base - 1.0 : 1.0;
    case CB_AVG_UNIFORM: return is_signed ? 2.0 * base - 1.0 : base;
    default: return 0.0;
    }
}

double cb_pattern_input(const cb_pattern *pat, int rank, size_t i)
{
    double base = (double)element_base(pat, i);
    switch (pat->redop) {
    case CB_PROD:
        if (!contributes(pat, rank, i))
            return 1.0;
        return ldexp(1.0, factor_exponent(pat, i) + ((uint32_t)rank == special_rank(pat, i)));
    case CB_SUM:
    case CB_PREMULSUM:
        if (pat->sparse) {
            if (!contributes(pat, rank, i))
                return 0.0;
            return sparse_value(pat, i) + ((uint32_t)rank == special_rank(pat, i));
        }
        return base + (rank == holder(pat, i) ? 1.0 : 0.0);
    case CB_MIN:
        return base + (rank == holder(pat, i) ? 0.0 : 1.0);
    case CB_MAX:
        return base + (rank == holder(pat, i) ? 1.0 : 0.0);
    case CB_AVG: {
        int up = holder(pat, i), down = (up + 1) % pat->nranks;
        double value = avg_mean(pat, i);
        int remainder = avg_remainder_sign(pat, i, value);
        if (remainder != 0)
            return rank == up ? value : value + remainder;
        if (up != down) {
            double delta = avg_delta(pat, i);
            value += rank == up ? delta : rank == down ? -delta : 0.0;
        }
        return value;
    }
    default:
        return cb_pattern_block(pat, rank, 0, i);
    }
}

double cb_pattern_reduced(const cb_pattern *pat, size_t i)
{
    double base = (double)element_base(pat, i);
    switch (pat->redop) {
    case CB_SUM:
    case CB_PREMULSUM:
        if (pat->sparse)
            return pat->scale * (contributors(pat, i) * sparse_value(pat, i) +
                                 special_bump(pat, i));
        return pat->scale * (pat->nranks * base + 1.0);
    case CB_PROD:
        return ldexp(1.0, contributors(pat, i) * factor_exponent(pat, i) +
                              (int)special_bump(pat, i));
    case CB_MIN:
        return base;
    case CB_MAX:
        return base + 1.0;
    case CB_AVG:
        return avg_mean(pat, i);
    default:
        return cb_pattern_block(pat, 0, 0, i);
    }
}

double cb_pattern_tolerance(const cb_pattern *pat, size_t i)
{
    const cb_dtype_info *info = cb_dtype_info_of(pat->dtype);
    int n = pat->nranks;
    if (pat->redop != CB_AVG || !info->is_float || !pat->avg_premultiplied || (n & (n - 1)) == 0)
        return 0.0;
    /* fl(1/n), n products and n - 1 additions, each rounded by at most half
     * a unit in the last place (relative u): the result lies within
     * ((1 + u)^(n + 2) - 1) times the sum of |input| / n. */
    double u = ldexp(1.0, -(info->mantissa_bits + 1));
    double magnitude = fabs(avg_mean(pat, i)) + 2.0 * avg_delta(pat, i);
    return expm1((n + 2) * log1p(u)) * magnitude;
}

static uint64_t gcd_u64(uint64_t a, uint64_t b)
{
    while (b != 0) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static uint64_t lcm_capped(uint64_t a, uint64_t b)
{
    uint64_t l = a / gcd_u64(a, b);
    return l > UINT64_MAX / b ? UINT64_MAX : l * b;
}

size_t cb_pattern_period(const cb_pattern *pat, int rank)
{
    uint64_t period = CB_GROUP_PERIOD;
    if (pat->redop == CB_REDOP_NONE)
        return period;
    /* s(i) follows i mod (period * class size). */
    int by_phase = pat->redop == CB_PROD || (pat->sparse && pat->redop != CB_AVG);
    if (by_phase)
        period = lcm_capped(period, (uint64_t)pat->period * class_size(pat));
    /* Dense inputs also follow the holder, i mod n; integer avg's
     * remainders, i mod 2. */
    if (rank >= 0 && !by_phase)
        period = lcm_capped(period, (uint64_t)pat->nranks);
    if (rank >= 0 && pat->avg_remainder)
        period = lcm_capped(period, 2);
    return period > SIZE_MAX ? SIZE_MAX : (size_t)period;
}

static void fill_slow(const cb_pattern *pat, int rank, void *buf, size_t first_index,
                      size_t count)
{
    const cb_dtype_info *info = cb_dtype_info_of(pat->dtype);
    for (size_t i = 0; i < count; i++)
        info->store(buf, i, rank >= 0 ? cb_pattern_input(pat, rank, first_index + i)
                                      : cb_pattern_reduced(pat, first_index + i));
}

void *cb_pattern_tile(const cb_pattern *pat, int rank, size_t first_index, size_t count,
                      size_t *tile_count)
{
    size_t elem = cb_dtype_info_of(pat->dtype)->size;
    size_t period = cb_pattern_period(pat, rank);
    if (period >= count || period > CB_TILE_MAX_BYTES / elem)
        return NULL;
    void *tile = malloc(period * elem);
    if (tile == NULL)
        return NULL;
    fill_slow(pat, rank, tile, first_index, period);
    *tile_count = period;
    return tile;
}

void cb_pattern_fill(const cb_pattern *pat, int rank, void *buf, size_t count)
{
    size_t elem = cb_dtype_info_of(pat->dtype)->size, period = 0;
    unsigned char *tile = cb_pattern_tile(pat, rank, 0, count, &period);
    if (tile == NULL) {
        fill_slow(pat, rank, buf, 0, count);
        return;
    }
    unsigned char *out = buf;
    for (size_t done = 0; done < count; done += period) {
        size_t n = count - done < period ? count - done : period;
        memcpy(out + done * elem, tile, n * elem);
    }
    free(tile);
}

void cb_pattern_fill_blocks(const cb_pattern *pat, int rank, void *buf, size_t nblocks,
                            size_t count)
{
    const cb_dtype_info *info = cb_dtype_info_of(pat->dtype);
    for (size_t b = 0; b < nblocks; b++)
        for (size_t j = 0; j < count; j++)
            info->store(buf, b * count + j, cb_pattern_block(pat, rank, b, j));
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

void cb_pattern_poison(cb_dtype dtype, void *buf, size_t count)
{
    const cb_dtype_info *info = cb_dtype_info_of(dtype);
    size_t elem = info->size;
    unsigned char *bytes = buf;
    /* All ones: NaN in every floating-point type, the largest value of an
     * unsigned one. A signed integer's poison is its minimum: the sign bit
     * alone (little endian, as the hosts we run on). */
    if (info->is_float || !info->is_signed) {
        memset(bytes, 0xff, count * elem);
        return;
    }
    memset(bytes, 0, count * elem);
    for (size_t i = 0; i < count; i++)
        bytes[i * elem + elem - 1] = 0x80;
}
