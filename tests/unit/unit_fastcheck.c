/* Verification cannot be fooled: a zero with its sign flipped, a shift by
 * any power of two, and an integer average off by one all show.
 *
 * The tiled fill and check agree exactly with the per-element definition
 * (cb_pattern_input, cb_pattern_reduced and its tolerance): same bytes
 * filled, same wrong-element count and first index on clean and corrupted
 * buffers, for every type, reduction and a range of rank counts, at offsets
 * (reduce-scatter slices) and lengths around the period. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "collectives/collective.h"
#include "verify/pattern.h"
#include "unit.h"

static const cb_redop redops[] = {CB_SUM, CB_PROD, CB_MIN, CB_MAX, CB_AVG, CB_PREMULSUM,
                                  CB_REDOP_NONE};
static const int rank_counts[] = {1, 2, 3, 5, 8, 17, 100, 1000};

/* Whether element k of data holds value exactly, as the type's bytes. */
static int holds(const cb_dtype_info *info, const void *data, size_t k, double value)
{
    unsigned char want[8];
    info->store(want, 0, value);
    return memcmp((const unsigned char *)data + k * info->size, want, info->size) == 0;
}

/* The reference check, written here from the definition: exact results bit
 * for bit, rounded ones within the tolerance. */
static size_t reference_check(const cb_pattern *pat, const void *data, size_t first_index,
                              size_t count, size_t *first)
{
    const cb_dtype_info *info = cb_dtype_info_of(pat->dtype);
    size_t wrong = 0;
    for (size_t k = 0; k < count; k++) {
        double e = cb_pattern_reduced(pat, first_index + k);
        double a = info->load(data, k), tolerance = cb_pattern_tolerance(pat, first_index + k);
        int right = tolerance == 0.0 ? holds(info, data, k, e) : fabs(a - e) <= tolerance;
        if (!right) {
            if (wrong == 0)
                *first = k;
            wrong++;
        }
    }
    return wrong;
}

static void one(unit_state *u, const cb_pattern *pat, int rank, size_t first_index,
                size_t count)
{
    const cb_dtype_info *info = cb_dtype_info_of(pat->dtype);
    unsigned char *fast = malloc(count * info->size), *slow = malloc(count * info->size);
    CHECK(u, fast != NULL && slow != NULL);
    if (fast == NULL || slow == NULL) {
        free(fast);
        free(slow);
        return;
    }
    /* Fill: byte for byte the definition. */
    cb_pattern_fill(pat, rank, fast, count);
    for (size_t i = 0; i < count; i++)
        info->store(slow, i, cb_pattern_input(pat, rank, i));
    CHECK(u, memcmp(fast, slow, count * info->size) == 0);

    /* Check: the expected result, then corrupted copies. */
    for (size_t i = 0; i < count; i++)
        info->store(fast, i, cb_pattern_reduced(pat, first_index + i));
    for (int round = 0; round < 4; round++) {
        if (round == 1)
            info->store(fast, count - 1, info->load(fast, count - 1) + 1.0);
        if (round == 2) /* an element well inside, and a byte elsewhere */
            fast[(count / 3) * info->size] ^= 0x40;
        if (round == 3)
            memset(fast + (count / 2) * info->size, 0xff, info->size * (count / 7 + 1));
        size_t ref_first = 0, ref = reference_check(pat, fast, first_index, count, &ref_first);
        cb_mismatch m = {0, 0, 0};
        size_t got = cb_check_reduced_at(pat, fast, first_index, count, &m);
        CHECK(u, got == ref);
        if (ref > 0)
            CHECK(u, m.index == ref_first);
        if (got != ref || (ref > 0 && m.index != ref_first))
            fprintf(stderr, "  %s %s n=%d first=%zu count=%zu round %d: %zu vs %zu\n",
                    info->name, cb_redop_name(pat->redop), pat->nranks, first_index, count,
                    round, got, ref);
    }
    free(fast);
    free(slow);
}

/* Flip the sign bit of element k (the top bit of its last byte: little endian). */
static void flip_sign(const cb_dtype_info *info, void *data, size_t k)
{
    ((unsigned char *)data)[k * info->size + info->size - 1] ^= 0x80;
}

/* A zero whose sign flipped is wrong, in reductions and data movement. */
static void test_sign_of_zero(unit_state *u)
{
    static const cb_dtype types[] = {CB_FLOAT, CB_BFLOAT16, CB_HALF, CB_FP8_E4M3, CB_FP8_E5M2};
    char why[128];
    /* Long enough to hold zeros in float's 65536 codes. */
    enum { COUNT = 1 << 18 };
    unsigned char *buf = malloc((size_t)COUNT * 4);
    CHECK(u, buf != NULL);
    for (size_t t = 0; t < sizeof types / sizeof types[0] && buf != NULL; t++) {
        const cb_dtype_info *info = cb_dtype_info_of(types[t]);
        cb_pattern pat;
        /* min's result is b(i), 0 at some elements. */
        CHECK(u, cb_pattern_init(&pat, types[t], CB_MIN, 3, 5, why, sizeof why) == 0);
        size_t zeros = 0;
        for (size_t i = 0; i < COUNT; i++) {
            double e = cb_pattern_reduced(&pat, i);
            info->store(buf, i, e);
            if (e == 0.0) {
                flip_sign(info, buf, i);
                zeros++;
            }
        }
        cb_mismatch m = {0, 0, 0};
        CHECK(u, zeros > 0 && cb_check_reduced_at(&pat, buf, 0, COUNT, &m) == zeros);
        /* Data movement: broadcast's one block from rank 1. */
        CHECK(u, cb_pattern_init(&pat, types[t], CB_REDOP_NONE, 3, 5, why, sizeof why) == 0);
        cb_pattern_fill_blocks(&pat, 1, buf, 1, COUNT);
        zeros = 0;
        for (size_t j = 0; j < COUNT; j++)
            if (cb_pattern_block(&pat, 1, 0, j) == 0.0) {
                flip_sign(info, buf, j);
                zeros++;
            }
        cb_block_source src = {1, 0, 0, 0};
        CHECK(u, zeros > 0 && cb_check_blocks(&pat, buf, 1, COUNT, src, &m) == zeros);
    }
    free(buf);
}

/* Values at i and i + shift differ (as bytes) somewhere in every chunk of 32
 * elements, for every power-of-two shift up to 2^20: results, inputs and
 * data-movement blocks, in the types with the fewest values. */
static void test_no_power_of_two_period(unit_state *u)
{
    static const cb_dtype types[] = {CB_FLOAT, CB_BFLOAT16, CB_HALF, CB_INT8,
                                     CB_FP8_E4M3, CB_FP8_E5M2};
    static const cb_redop ops[] = {CB_SUM, CB_PROD, CB_MIN, CB_AVG, CB_REDOP_NONE};
    char why[128];
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        const cb_dtype_info *info = cb_dtype_info_of(types[t]);
        for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
            cb_pattern pat;
            CHECK(u, cb_pattern_init(&pat, types[t], ops[o], 3, 11, why, sizeof why) == 0);
            /* Prod's result only changes where a rank contributes: chunks of
             * 96 elements hold 32 contributions. */
            size_t chunk = ops[o] == CB_PROD ? 96 : 32;
            int undetected = 0;
            for (size_t shift = 1; shift <= ((size_t)1 << 20); shift *= 2)
                for (size_t start = 0; start < 64 * chunk; start += chunk) {
                    int differ = 0;
                    for (size_t i = start; i < start + chunk && !differ; i++) {
                        double here = ops[o] == CB_REDOP_NONE ? cb_pattern_block(&pat, 2, 1, i)
                                                              : cb_pattern_reduced(&pat, i);
                        unsigned char there[8];
                        info->store(there, 0,
                                    ops[o] == CB_REDOP_NONE
                                        ? cb_pattern_block(&pat, 2, 1, i + shift)
                                        : cb_pattern_reduced(&pat, i + shift));
                        differ = !holds(info, there, 0, here);
                    }
                    if (!differ && undetected++ == 0)
                        fprintf(stderr, "  %s %s: shift %zu unseen in elements %zu..%zu\n",
                                info->name, cb_redop_name(ops[o]), shift, start,
                                start + chunk - 1);
                }
            CHECK(u, undetected == 0);
        }
    }
}

/* Integer avg: a sum one too large and one too small each change the
 * truncated average somewhere in every 64 elements. */
static void test_avg_off_by_one(unit_state *u)
{
    static const cb_dtype types[] = {CB_INT8, CB_UINT8, CB_INT32, CB_UINT64};
    static const int ranks[] = {2, 3, 7, 31};
    char why[128];
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
        for (size_t r = 0; r < sizeof ranks / sizeof ranks[0]; r++) {
            cb_pattern pat;
            int n = ranks[r];
            CHECK(u, cb_pattern_init(&pat, types[t], CB_AVG, n, 13, why, sizeof why) == 0);
            CHECK(u, pat.avg_remainder);
            int missed = 0;
            for (size_t start = 0; start < 64 * 64; start += 64) {
                int up = 0, down = 0;
                for (size_t i = start; i < start + 64; i++) {
                    double sum = 0, want = cb_pattern_reduced(&pat, i);
                    for (int k = 0; k < n; k++)
                        sum += cb_pattern_input(&pat, k, i);
                    CHECK(u, trunc(sum / n) == want);
                    up |= trunc((sum + 1) / n) != want;
                    down |= trunc((sum - 1) / n) != want;
                }
                missed += !up || !down;
            }
            if (missed != 0)
                fprintf(stderr, "  %s avg n=%d: %d chunks miss an off-by-one sum\n",
                        cb_dtype_info_of(types[t])->name, n, missed);
            CHECK(u, missed == 0);
        }
}

int main(void)
{
    unit_state u = {0, 0};
    char why[128];
    test_sign_of_zero(&u);
    test_no_power_of_two_period(&u);
    test_avg_off_by_one(&u);
    for (int t = 0; t < CB_DTYPE_COUNT; t++) {
        for (size_t o = 0; o < sizeof redops / sizeof redops[0]; o++) {
            for (size_t r = 0; r < sizeof rank_counts / sizeof rank_counts[0]; r++) {
                cb_pattern pat;
                int n = rank_counts[r];
                if (cb_pattern_init(&pat, (cb_dtype)t, redops[o], n, 0x1234u + (uint32_t)t,
                                    why, sizeof why) != 0)
                    continue;
                pat.avg_premultiplied = (t + r) % 2;
                size_t period = cb_pattern_period(&pat, -1);
                size_t in_period = cb_pattern_period(&pat, n - 1);
                size_t lengths[] = {1, 7, period + 3, 2 * in_period + period + 11};
                for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++) {
                    if (lengths[l] > ((size_t)140 << 10))
                        continue;
                    one(&u, &pat, n - 1, 0, lengths[l]);
                    one(&u, &pat, n / 2, 12345, lengths[l]);
                }
            }
        }
    }
    return unit_done(&u, "unit_fastcheck");
}
