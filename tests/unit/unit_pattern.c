/* Verification values: the closed form equals a brute-force reduction of
 * every rank's input computed in the element type (every partial result
 * stored to the type and read back), in several orders, for every type,
 * reduction and rank count tried; inputs vary between elements and seeds.
 * Data-movement values are exact and tell ranks, blocks, neighbours and
 * seeds apart. No value is ever the poison an unwritten output holds, and an
 * integer average's sum off by +-1 shows in every two neighbouring elements. */
#include <math.h>
#include <string.h>

#include "verify/pattern.h"
#include "unit.h"

#define ELEMENTS 100

/* a op b, rounded to the element type as a backend stores it. */
static double in_type(const cb_dtype_info *info, double v)
{
    unsigned char cell[8];
    info->store(cell, 0, v);
    return info->load(cell, 0);
}

static double combine(cb_redop op, double a, double b)
{
    switch (op) {
    case CB_SUM:
    case CB_AVG:
    case CB_PREMULSUM: return a + b;
    case CB_PROD: return a * b;
    case CB_MIN: return a < b ? a : b;
    case CB_MAX: return a > b ? a : b;
    default: return NAN;
    }
}

/* Rank visiting orders: forward, backward, and odd ranks first. */
static int rank_in_order(int order, int k, int nranks)
{
    switch (order) {
    case 0: return k;
    case 1: return nranks - 1 - k;
    default: {
        int odd = nranks / 2;
        return k < odd ? 2 * k + 1 : 2 * (k - odd);
    }
    }
}

/* The reduction as a backend following our definition computes it: premulsum
 * scales first, avg divides the sum (integers truncate). */
static double brute_force(unit_state *u, const cb_pattern *pat, size_t i, int order)
{
    const cb_dtype_info *info = cb_dtype_info_of(pat->dtype);
    double acc = 0;
    for (int k = 0; k < pat->nranks; k++) {
        double v = cb_pattern_input(pat, rank_in_order(order, k, pat->nranks), i);
        CHECK(u, in_type(info, v) == v);                          /* input exact */
        if (pat->redop == CB_PREMULSUM)
            v = in_type(info, v * CB_PREMULSUM_SCALAR);
        acc = k == 0 ? v : in_type(info, combine(pat->redop, acc, v));
        /* Every partial result is an integer inside the exact range. */
        CHECK(u, acc <= info->exact_max && acc >= info->exact_min && acc == floor(acc));
    }
    if (pat->redop == CB_AVG)
        acc = info->is_float ? in_type(info, acc / pat->nranks) : trunc(acc / pat->nranks);
    return acc;
}

/* NCCL's floating-point avg: the sum of input * fl(1/n), all in the type. */
static double premultiplied_avg(const cb_pattern *pat, size_t i)
{
    const cb_dtype_info *info = cb_dtype_info_of(pat->dtype);
    double inverse = in_type(info, 1.0 / pat->nranks), acc = 0;
    for (int r = 0; r < pat->nranks; r++) {
        double term = in_type(info, cb_pattern_input(pat, r, i) * inverse);
        acc = r == 0 ? term : in_type(info, acc + term);
    }
    return acc;
}

static void test_exact(unit_state *u, cb_dtype t, cb_redop op, int nranks, uint32_t seed)
{
    const cb_dtype_info *info = cb_dtype_info_of(t);
    cb_pattern pat;
    char why[256];
    if (cb_pattern_init(&pat, t, op, nranks, seed, why, sizeof why) != 0) {
        /* Only an unsigned average over very many ranks has no exact check. */
        CHECK(u, op == CB_AVG && !info->is_signed && nranks > 200);
        CHECK(u, strstr(why, info->name) != NULL);
        return;
    }
    int distinct_neighbours = 0;
    for (size_t i = 0; i < ELEMENTS; i++) {
        double expected = cb_pattern_reduced(&pat, i);
        CHECK(u, cb_pattern_tolerance(&pat, i) == 0.0);
        for (int order = 0; order < 3; order++) {
            double acc = brute_force(u, &pat, i, order);
            if (acc != expected)
                fprintf(stderr, "  %s %s n=%d seed=%u i=%zu order %d: brute %g closed %g\n",
                        info->name, cb_redop_name(op), nranks, seed, i, order, acc, expected);
            CHECK(u, acc == expected);
        }
        CHECK(u, in_type(info, expected) == expected);              /* result exact */
        distinct_neighbours += expected != cb_pattern_reduced(&pat, i + 1);
        if (op == CB_AVG && info->is_float) {
            /* With premultiplication the result is near; exact for 2^k ranks. */
            pat.avg_premultiplied = 1;
            double got = premultiplied_avg(&pat, i), tol = cb_pattern_tolerance(&pat, i);
            if ((nranks & (nranks - 1)) == 0)
                CHECK(u, tol == 0.0 && got == expected);
            else
                CHECK(u, tol > 0.0 && fabs(got - expected) <= tol);
            pat.avg_premultiplied = 0;
        }
    }
    /* Results vary along the vector, so a shifted result shows (an average
     * with one value per element is constant by construction). */
    if (!(op == CB_AVG && (pat.avg_scheme == CB_AVG_SPARSE ||
                           (pat.avg_scheme == CB_AVG_UNIT && !info->is_signed))))
        CHECK(u, distinct_neighbours > 0);
}

/* Data movement: exact values, different for every rank, block, neighbour
 * and (almost every) seed. */
static void test_movement(unit_state *u, cb_dtype t, int nranks)
{
    const cb_dtype_info *info = cb_dtype_info_of(t);
    cb_pattern a, b;
    char why[256];
    CHECK(u, cb_pattern_init(&a, t, CB_REDOP_NONE, nranks, 7, why, sizeof why) == 0);
    CHECK(u, cb_pattern_init(&b, t, CB_REDOP_NONE, nranks, cb_pattern_seed(7, 1, 0, 0), why,
                             sizeof why) == 0);
    CHECK(u, a.span >= 16 && (a.stride & 1u));
    int ranks_apart = (uint32_t)nranks <= a.span;
    int bad_exact = 0, same_rank = 0, same_block = 0, same_neighbour = 0, seeds_differ = 0;
    for (size_t j = 0; j < 40; j++) {
        for (int r = 0; r < nranks; r++) {
            for (size_t blk = 0; blk < (size_t)nranks; blk++) {
                double v = cb_pattern_block(&a, r, blk, j);
                bad_exact += in_type(info, v) != v || v > info->exact_max || v < info->exact_min;
                same_neighbour += v == cb_pattern_block(&a, r, blk, j + 1);
                seeds_differ += v != cb_pattern_block(&b, r, blk, j);
                for (int r2 = r + 1; r2 < nranks && ranks_apart; r2++)
                    same_rank += v == cb_pattern_block(&a, r2, blk, j);
                for (size_t b2 = blk + 1; b2 < (size_t)nranks && ranks_apart; b2++)
                    same_block += v == cb_pattern_block(&a, r, b2, j);
            }
        }
    }
    CHECK(u, bad_exact == 0);
    CHECK(u, same_rank == 0);
    CHECK(u, same_block == 0);
    CHECK(u, same_neighbour == 0);
    CHECK(u, seeds_differ > 0);
    CHECK(u, cb_pattern_input(&a, 1, 3) == cb_pattern_block(&a, 1, 0, 3));
}

static void test_fill(unit_state *u)
{
    cb_pattern pat;
    char why[256];
    float buf[64];
    CHECK(u, cb_pattern_init(&pat, CB_FLOAT, CB_SUM, 4, 7, why, sizeof why) == 0);
    cb_pattern_fill(&pat, 2, buf, 64);
    for (size_t i = 0; i < 64; i++)
        CHECK(u, buf[i] == (float)cb_pattern_input(&pat, 2, i));
    uint16_t halves[4 * 8];
    CHECK(u, cb_pattern_init(&pat, CB_HALF, CB_REDOP_NONE, 4, 7, why, sizeof why) == 0);
    cb_pattern_fill_blocks(&pat, 3, halves, 4, 8);
    const cb_dtype_info *info = cb_dtype_info_of(CB_HALF);
    for (size_t blk = 0; blk < 4; blk++)
        for (size_t j = 0; j < 8; j++)
            CHECK(u, info->load(halves, blk * 8 + j) == cb_pattern_block(&pat, 3, blk, j));
}

/* A shifted, stale or other-rank result must not look right. */
static void test_discriminates(unit_state *u)
{
    cb_pattern a, b;
    char why[256];
    CHECK(u, cb_pattern_init(&a, CB_FLOAT, CB_SUM, 4, 1, why, sizeof why) == 0);
    CHECK(u, cb_pattern_init(&b, CB_FLOAT, CB_SUM, 4, cb_pattern_seed(1, 0, 0, 0), why,
                             sizeof why) == 0);
    int neighbours_differ = 1, seeds_differ = 0;
    for (size_t i = 0; i < 64; i++) {
        /* Elements 2k and 2k + 1 always differ; other neighbours mostly. */
        if (i % 2 == 0)
            neighbours_differ &= cb_pattern_reduced(&a, i) != cb_pattern_reduced(&a, i + 1);
        seeds_differ |= cb_pattern_reduced(&a, i) != cb_pattern_reduced(&b, i);
    }
    /* Every two ranks' inputs differ in every n elements (ranks r and r + 3
     * too), for every reduction whose inputs differ by rank, at 7 ranks. */
    int ranks_differ = 1;
    for (int op = CB_SUM; op < CB_REDOP_COUNT; op++) {
        CHECK(u, cb_pattern_init(&b, CB_FLOAT, (cb_redop)op, 7, 3, why, sizeof why) == 0);
        size_t window = op == CB_PROD ? 7 * 3 * 3 : 7;
        for (int r = 0; r < 7; r++)
            for (int s = r + 1; s < 7; s++)
                for (size_t start = 0; start < 64 * window; start += window) {
                    int differ = 0;
                    for (size_t i = start; i < start + window; i++)
                        differ |= cb_pattern_input(&b, r, i) != cb_pattern_input(&b, s, i);
                    ranks_differ &= differ;
                }
    }
    CHECK(u, neighbours_differ);
    CHECK(u, seeds_differ);
    CHECK(u, ranks_differ);
    CHECK(u, cb_pattern_seed(1, 2, 3, 4) != cb_pattern_seed(1, 2, 3, 5));
    CHECK(u, cb_pattern_seed(1, 2, 3, 4) != cb_pattern_seed(2, 1, 3, 4));
    /* min and max: every rank decides some element. */
    for (int op = CB_MIN; op <= CB_MAX; op++) {
        CHECK(u, cb_pattern_init(&a, CB_INT32, (cb_redop)op, 5, 9, why, sizeof why) == 0);
        for (int r = 0; r < 5; r++) {
            int decides = 0;
            for (size_t i = 0; i < 10; i++)
                decides |= cb_pattern_input(&a, r, i) == cb_pattern_reduced(&a, i) &&
                           cb_pattern_input(&a, (r + 1) % 5, i) != cb_pattern_reduced(&a, i);
            CHECK(u, decides);
        }
    }
}

static void test_limits(unit_state *u)
{
    cb_pattern pat;
    char why[256];
    CHECK(u, cb_pattern_init(&pat, CB_INT8, CB_SUM, 4, 0, why, sizeof why) == 0);
    CHECK(u, pat.span >= 8 && !pat.sparse);
    /* Too many ranks for dense values: only some ranks contribute. */
    CHECK(u, cb_pattern_init(&pat, CB_INT8, CB_SUM, 126, 0, why, sizeof why) == 0);
    CHECK(u, !pat.sparse && pat.span == 2);
    CHECK(u, cb_pattern_init(&pat, CB_INT8, CB_SUM, 127, 0, why, sizeof why) == 0);
    CHECK(u, pat.sparse && pat.span == 4 && pat.period == 3);
    CHECK(u, cb_pattern_init(&pat, CB_INT8, CB_SUM, 1000, 0, why, sizeof why) == 0);
    CHECK(u, pat.sparse && pat.period == 16);
    CHECK(u, cb_pattern_init(&pat, CB_FP8_E5M2, CB_SUM, 2, 0, why, sizeof why) == 0);
    CHECK(u, !pat.sparse && pat.span == 4);
    CHECK(u, cb_pattern_init(&pat, CB_FP8_E5M2, CB_SUM, 4, 0, why, sizeof why) == 0);
    CHECK(u, !pat.sparse && pat.span == 2);
    CHECK(u, cb_pattern_init(&pat, CB_FP8_E5M2, CB_SUM, 8, 0, why, sizeof why) == 0);
    CHECK(u, pat.sparse && pat.period == 3);
    CHECK(u, cb_pattern_init(&pat, CB_FP8_E5M2, CB_PREMULSUM, 8, 0, why, sizeof why) == 0);
    CHECK(u, pat.sparse && pat.period == 8 && pat.scale == 2.0);
    CHECK(u, cb_pattern_init(&pat, CB_FP8_E4M3, CB_AVG, 3, 0, why, sizeof why) == 0);
    CHECK(u, !pat.sparse && pat.span == 4);
    CHECK(u, cb_pattern_init(&pat, CB_FP8_E4M3, CB_AVG, 8, 0, why, sizeof why) == 0);
    CHECK(u, pat.avg_scheme == CB_AVG_UNIT && !pat.sparse);
    CHECK(u, cb_pattern_init(&pat, CB_FP8_E4M3, CB_AVG, 16, 0, why, sizeof why) == 0);
    CHECK(u, pat.avg_scheme == CB_AVG_UNIFORM);
    CHECK(u, cb_pattern_init(&pat, CB_FP8_E4M3, CB_AVG, 17, 0, why, sizeof why) == 0);
    CHECK(u, pat.avg_scheme == CB_AVG_SPARSE && pat.sparse);
    CHECK(u, cb_pattern_init(&pat, CB_UINT8, CB_AVG, 254, 0, why, sizeof why) == 0);
    CHECK(u, pat.avg_scheme == CB_AVG_UNIT);
    CHECK(u, cb_pattern_init(&pat, CB_UINT8, CB_AVG, 255, 0, why, sizeof why) == 0);
    CHECK(u, pat.avg_scheme == CB_AVG_UNIFORM);
    CHECK(u, cb_pattern_init(&pat, CB_UINT8, CB_AVG, 256, 0, why, sizeof why) == -1);
    CHECK(u, strstr(why, "256 ranks") != NULL && strstr(why, "uint8") != NULL);
    /* Products stay exact at any rank count: fewer ranks contribute a 2. */
    CHECK(u, cb_pattern_init(&pat, CB_INT8, CB_PROD, 6, 0, why, sizeof why) == 0);
    CHECK(u, pat.period == 3);
    CHECK(u, cb_pattern_init(&pat, CB_INT8, CB_PROD, 7, 0, why, sizeof why) == 0);
    CHECK(u, pat.period == 4);
    CHECK(u, cb_pattern_init(&pat, CB_FP8_E5M2, CB_PROD, 3, 0, why, sizeof why) == 0);
    CHECK(u, pat.period == 3);
    CHECK(u, cb_pattern_init(&pat, CB_FP8_E5M2, CB_PROD, 4, 0, why, sizeof why) == 0);
    CHECK(u, pat.period == 4);
    CHECK(u, cb_pattern_init(&pat, CB_FLOAT, CB_PROD, 4096, 0, why, sizeof why) == 0);
    CHECK(u, cb_pattern_init(&pat, CB_FLOAT, CB_SUM, 4096, 0, why, sizeof why) == 0);
    CHECK(u, pat.span == 16 && !pat.sparse);
    /* Data movement spans: every code an exact value of the type. */
    CHECK(u, cb_pattern_init(&pat, CB_FP8_E5M2, CB_REDOP_NONE, 4, 0, why, sizeof why) == 0);
    CHECK(u, pat.span == 16 && pat.low == -8.0);
    /* The one-byte integers leave their poison value out (cb_pattern_poison). */
    CHECK(u, cb_pattern_init(&pat, CB_UINT8, CB_REDOP_NONE, 4, 0, why, sizeof why) == 0);
    CHECK(u, pat.span == 128 && pat.low == 0.0);
    CHECK(u, cb_pattern_init(&pat, CB_INT8, CB_REDOP_NONE, 4, 0, why, sizeof why) == 0);
    CHECK(u, pat.span == 128 && pat.low == -64.0);
    CHECK(u, cb_pattern_init(&pat, CB_DOUBLE, CB_REDOP_NONE, 4, 0, why, sizeof why) == 0);
    CHECK(u, pat.span == 65536);
}

/* Whether v stored in t is bitwise the poison value of t. */
static int is_poison(cb_dtype t, double v)
{
    unsigned char cell[8], poison[8];
    cb_dtype_info_of(t)->store(cell, 0, v);
    cb_pattern_poison(t, poison, 1);
    return memcmp(cell, poison, cb_dtype_info_of(t)->size) == 0;
}

/* No input, result or data-movement value of any pattern is the poison
 * value, so that an output never written is wrong at every element; and
 * the poison of a floating-point type is a NaN, which equals nothing. */
static void test_poison(unit_state *u, cb_dtype t, int nranks)
{
    const cb_dtype_info *info = cb_dtype_info_of(t);
    unsigned char poison[8];
    cb_pattern_poison(t, poison, 1);
    if (info->is_float)
        CHECK(u, isnan(info->load(poison, 0)));
    int hits = 0;
    for (int op = 0; op < CB_REDOP_COUNT; op++)
        for (uint32_t seed = 0; seed < 4; seed++) {
            cb_pattern pat;
            char why[256];
            if (cb_pattern_init(&pat, t, (cb_redop)op, nranks, cb_pattern_seed(seed, 9, 0, 0),
                                why, sizeof why) != 0)
                continue;
            for (size_t i = 0; i < 300; i++) {
                hits += is_poison(t, cb_pattern_reduced(&pat, i));
                for (int r = 0; r < nranks && r < 70; r++) {
                    hits += is_poison(t, cb_pattern_input(&pat, r, i));
                    if (op == CB_REDOP_NONE && i < 20)
                        for (size_t blk = 0; blk < (size_t)nranks && blk < 70; blk++)
                            hits += is_poison(t, cb_pattern_block(&pat, r, blk, i));
                }
            }
        }
    CHECK(u, hits == 0);
}

/* Integer avg: a sum one too large, and one too small, changes the truncated
 * quotient of at least one of every two neighbouring elements, wherever the
 * pattern has remainders (at 2 to 4 ranks in every integer type). */
static void test_avg_off_by_one(unit_state *u, cb_dtype t, int nranks)
{
    cb_pattern pat;
    char why[256];
    for (uint32_t seed = 0; seed < 8; seed++) {
        if (cb_pattern_init(&pat, t, CB_AVG, nranks, cb_pattern_seed(seed, 3, 0, 0), why,
                            sizeof why) != 0)
            return;
        if (nranks >= 2 && nranks <= 4)
            CHECK(u, pat.avg_remainder);
        if (!pat.avg_remainder)
            return;
        int shown[2] = {0, 0}, missed = 0;
        /* From the start, and across the end of the values' period. */
        for (size_t k = 0; k < 2 * 600; k++) {
            size_t i = k < 600 ? k : 65521 - 300 + (k - 600);
            double sum = 0;
            for (int r = 0; r < nranks; r++)
                sum += cb_pattern_input(&pat, r, i);
            double want = cb_pattern_reduced(&pat, i);
            CHECK(u, trunc(sum / nranks) == want);
            /* Element i and i - 1: does each bump show in one of them? */
            int up = trunc((sum + 1) / nranks) != want, down = trunc((sum - 1) / nranks) != want;
            if (k > 0 && k != 600)
                missed += !(shown[0] || up) || !(shown[1] || down);
            shown[0] = up;
            shown[1] = down;
        }
        CHECK(u, missed == 0);
    }
}

int main(void)
{
    unit_state u = {0, 0};
    static const int rank_counts[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 17, 19, 33, 64,
                                      100, 200, 255, 256, 1000};
    for (int t = 0; t < CB_DTYPE_COUNT; t++) {
        for (size_t n = 0; n < sizeof rank_counts / sizeof rank_counts[0]; n++) {
            for (int op = 0; op < CB_REDOP_COUNT; op++)
                for (uint32_t seed = 0; seed < 3; seed++)
                    test_exact(&u, (cb_dtype)t, (cb_redop)op, rank_counts[n],
                               cb_pattern_seed(seed, 0, 0, 0));
            if (rank_counts[n] <= 64)
                test_movement(&u, (cb_dtype)t, rank_counts[n]);
            if (!cb_dtype_info_of((cb_dtype)t)->is_float && rank_counts[n] <= 64)
                test_avg_off_by_one(&u, (cb_dtype)t, rank_counts[n]);
            if (rank_counts[n] <= 256)
                test_poison(&u, (cb_dtype)t, rank_counts[n]);
        }
    }
    test_fill(&u);
    test_discriminates(&u);
    test_limits(&u);
    return unit_done(&u, "unit_pattern");
}
