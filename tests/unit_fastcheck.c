/* The tiled fill and check agree exactly with the per-element definition
 * (cb_pattern_input, cb_pattern_reduced and its tolerance): same bytes
 * filled, same wrong-element count and first index on clean and corrupted
 * buffers, for every type, reduction and a range of rank counts, at offsets
 * (reduce-scatter slices) and lengths around the period. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "collective.h"
#include "pattern.h"
#include "unit.h"

static const cb_redop redops[] = {CB_SUM, CB_PROD, CB_MIN, CB_MAX, CB_AVG, CB_PREMULSUM,
                                  CB_REDOP_NONE};
static const int rank_counts[] = {1, 2, 3, 5, 8, 17, 100, 1000};

/* The reference check, written here from the definition. */
static size_t reference_check(const cb_pattern *pat, const void *data, size_t first_index,
                              size_t count, size_t *first)
{
    const cb_dtype_info *info = cb_dtype_info_of(pat->dtype);
    size_t wrong = 0;
    for (size_t k = 0; k < count; k++) {
        double e = cb_pattern_reduced(pat, first_index + k);
        double a = info->load(data, k);
        if (!(fabs(a - e) <= cb_pattern_tolerance(pat, first_index + k))) {
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

int main(void)
{
    unit_state u = {0, 0};
    char why[128];
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
