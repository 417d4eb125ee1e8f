/* The sweep's size list. */
#include <stdint.h>
#include <string.h>

#include "options/params.h"
#include "unit.h"

static int sizes_of(cb_params *p, uint64_t *out, int max)
{
    char err[256];
    return cb_size_list(&p->sizes, out, max, err, sizeof err);
}

int main(void)
{
    unit_state u = {0, 0};
    uint64_t s[CB_MAX_SIZES];
    cb_params p;

    /* Default: 8 B to 128 MiB by factors of 2 is 25 sizes. */
    cb_params_defaults(&p);
    int n = sizes_of(&p, s, CB_MAX_SIZES);
    CHECK(&u, n == 25);
    CHECK(&u, s[0] == 8 && s[24] == 128u << 20);
    for (int i = 1; i < n; i++)
        CHECK(&u, s[i] == 2 * s[i - 1]);

    /* Factor 3 from 5 up to 100: 5 15 45. */
    p.sizes.min_bytes = 5;
    p.sizes.max_bytes = 100;
    p.sizes.step_factor = 3;
    n = sizes_of(&p, s, CB_MAX_SIZES);
    CHECK(&u, n == 3 && s[0] == 5 && s[1] == 15 && s[2] == 45);

    /* Additive: 1M, 2M, 3M, 4M. */
    p.sizes.min_bytes = 1u << 20;
    p.sizes.max_bytes = 4u << 20;
    p.sizes.step_factor = 0;
    p.sizes.step_bytes = 1u << 20;
    n = sizes_of(&p, s, CB_MAX_SIZES);
    CHECK(&u, n == 4 && s[3] == 4u << 20);

    /* One size when min == max. */
    p.sizes.min_bytes = p.sizes.max_bytes = 4096;
    n = sizes_of(&p, s, CB_MAX_SIZES);
    CHECK(&u, n == 1 && s[0] == 4096);

    /* Too many sizes is refused, not truncated. */
    p.sizes.min_bytes = 1;
    p.sizes.max_bytes = 1u << 20;
    p.sizes.step_bytes = 1;
    char err[256] = "";
    CHECK(&u, cb_size_list(&p.sizes, s, CB_MAX_SIZES, err, sizeof err) == -1);
    CHECK(&u, strstr(err, "4096") != NULL);
    /* Counting without storing gives the same answers. */
    p.sizes.step_bytes = 1u << 10;
    CHECK(&u, cb_size_list(&p.sizes, NULL, CB_MAX_SIZES, err, sizeof err) == 1024);

    /* No overflow near the top of the range. */
    p.sizes.step_bytes = 0;
    p.sizes.step_factor = 2;
    p.sizes.min_bytes = UINT64_MAX / 2 + 1;
    p.sizes.max_bytes = UINT64_MAX;
    n = sizes_of(&p, s, CB_MAX_SIZES);
    CHECK(&u, n == 1);
    p.sizes.step_factor = 0;
    p.sizes.step_bytes = UINT64_MAX / 2;
    p.sizes.min_bytes = UINT64_MAX / 2;
    n = sizes_of(&p, s, CB_MAX_SIZES);
    CHECK(&u, n == 2 && s[1] == UINT64_MAX - 1);

    return unit_done(&u, "unit_sizes");
}
