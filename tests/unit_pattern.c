/* Verification values: the closed form equals a brute-force reduction of
 * every rank's input, in the element type, for every type, reduction and
 * rank count tried; inputs vary between elements and between seeds. */
#include <math.h>
#include <string.h>

#include "pattern.h"
#include "unit.h"

static double combine(cb_redop op, double a, double b)
{
    switch (op) {
    case CB_SUM: return a + b;
    case CB_PROD: return a * b;
    case CB_MIN: return a < b ? a : b;
    case CB_MAX: return a > b ? a : b;
    default: return NAN;
    }
}

static void test_exact(unit_state *u, cb_dtype t, cb_redop op, int nranks, uint32_t seed)
{
    const cb_dtype_info *info = cb_dtype_info_of(t);
    cb_pattern pat;
    char why[256];
    if (cb_pattern_init(&pat, t, op, nranks, seed, why, sizeof why) != 0) {
        CHECK(u, strstr(why, info->name) != NULL);
        return;
    }
    unsigned char cell[8];
    for (size_t i = 0; i < 100; i++) {
        double acc = 0;
        for (int r = 0; r < nranks; r++) {
            double v = cb_pattern_input(&pat, r, i);
            info->store(cell, 0, v);
            CHECK(u, info->load(cell, 0) == v);          /* input representable */
            acc = r == 0 ? v : combine(op, acc, v);
            CHECK(u, acc <= info->exact_max && acc >= info->exact_min);
        }
        double expected = cb_pattern_reduced(&pat, i);
        if (acc != expected)
            fprintf(stderr, "  %s %s n=%d seed=%u i=%zu: brute %g closed %g\n", info->name,
                    cb_redop_name(op), nranks, seed, i, acc, expected);
        CHECK(u, acc == expected);
        info->store(cell, 0, expected);
        CHECK(u, info->load(cell, 0) == expected);       /* result representable */
    }
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
}

/* A shifted, stale or other-rank result must not look right. */
static void test_discriminates(unit_state *u)
{
    cb_pattern a, b;
    char why[256];
    CHECK(u, cb_pattern_init(&a, CB_FLOAT, CB_SUM, 4, 1, why, sizeof why) == 0);
    CHECK(u, cb_pattern_init(&b, CB_FLOAT, CB_SUM, 4, cb_pattern_seed(1, 0, 0, 0), why,
                             sizeof why) == 0);
    int neighbours_differ = 1, seeds_differ = 0, ranks_differ = 1;
    for (size_t i = 0; i < 64; i++) {
        neighbours_differ &= cb_pattern_reduced(&a, i) != cb_pattern_reduced(&a, i + 1);
        seeds_differ |= cb_pattern_reduced(&a, i) != cb_pattern_reduced(&b, i);
        ranks_differ &= cb_pattern_input(&a, 0, i) != cb_pattern_input(&a, 1, i);
    }
    CHECK(u, neighbours_differ);
    CHECK(u, seeds_differ);
    CHECK(u, ranks_differ);
    CHECK(u, cb_pattern_seed(1, 2, 3, 4) != cb_pattern_seed(1, 2, 3, 5));
    CHECK(u, cb_pattern_seed(1, 2, 3, 4) != cb_pattern_seed(2, 1, 3, 4));
}

static void test_limits(unit_state *u)
{
    cb_pattern pat;
    char why[256];
    CHECK(u, cb_pattern_init(&pat, CB_INT8, CB_SUM, 4, 0, why, sizeof why) == 0);
    CHECK(u, pat.span >= 8);
    CHECK(u, cb_pattern_init(&pat, CB_INT8, CB_SUM, 100, 0, why, sizeof why) == 0);
    CHECK(u, pat.span == 1);   /* rank offsets alone still fit */
    CHECK(u, cb_pattern_init(&pat, CB_INT8, CB_SUM, 200, 0, why, sizeof why) == -1);
    CHECK(u, strstr(why, "200 ranks") != NULL && strstr(why, "int8") != NULL);
    /* Products stay exact at any rank count: fewer ranks contribute a 2. */
    CHECK(u, cb_pattern_init(&pat, CB_INT8, CB_PROD, 18, 0, why, sizeof why) == 0);
    CHECK(u, pat.period == 3);
    CHECK(u, cb_pattern_init(&pat, CB_INT8, CB_PROD, 19, 0, why, sizeof why) == 0);
    CHECK(u, pat.period == 4);
    CHECK(u, cb_pattern_init(&pat, CB_FLOAT, CB_PROD, 4096, 0, why, sizeof why) == 0);
    CHECK(u, cb_pattern_init(&pat, CB_FLOAT, CB_SUM, 4096, 0, why, sizeof why) == 0);
    CHECK(u, pat.span == 16);
}

int main(void)
{
    unit_state u = {0, 0};
    static const int rank_counts[] = {1, 2, 3, 4, 5, 7, 8, 16, 19, 64, 100, 200, 1000};
    for (int t = 0; t < CB_DTYPE_COUNT; t++)
        for (int op = 0; op < CB_REDOP_COUNT; op++)
            for (size_t n = 0; n < sizeof rank_counts / sizeof rank_counts[0]; n++)
                for (uint32_t seed = 0; seed < 4; seed++)
                    test_exact(&u, (cb_dtype)t, (cb_redop)op, rank_counts[n],
                               cb_pattern_seed(seed, 0, 0, 0));
    test_fill(&u);
    test_discriminates(&u);
    test_limits(&u);
    return unit_done(&u, "unit_pattern");
}
