/* alltoallv's traffic matrices: parsing, weights and their sums (traffic.h). */
#include "collectives/traffic.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/parse.h"

/* splitmix64's finaliser: a well-mixed 64-bit value from any input, the
 * same on every rank and platform. */
static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static int fail(char *err, size_t err_len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t err_len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_len, fmt, ap);
    va_end(ap);
    return -1;
}

int cb_traffic_parse(const char *text, cb_traffic_spec *out, char *err, size_t err_len)
{
    cb_traffic_spec spec = {.kind = CB_TRAFFIC_UNIFORM, .seed = 0, .factor = 1, .hot = 1};
    if (strcmp(text, "uniform") == 0) {
        *out = spec;
        return 0;
    }
    if (strcmp(text, "random") == 0 || strncmp(text, "random:", 7) == 0) {
        spec.kind = CB_TRAFFIC_RANDOM;
        if (text[6] == ':') {
            uint64_t seed = 0;
            /* Digits only: cb_parse_bytes would take a size suffix. */
            if (strspn(text + 7, "0123456789") != strlen(text + 7) ||
                cb_parse_bytes(text + 7, &seed) != 0)
                return fail(err, err_len, "'%s': the seed after random: must be a decimal "
                            "integer below 2^64", text);
            spec.seed = seed;
        }
        *out = spec;
        return 0;
    }
    if (strncmp(text, "hot:", 4) == 0) {
        spec.kind = CB_TRAFFIC_HOT;
        char factor[32];
        const char *colon = strchr(text + 4, ':');
        size_t len = colon != NULL ? (size_t)(colon - (text + 4)) : strlen(text + 4);
        long k = 0, h = 1;
        if (len >= sizeof factor)
            return fail(err, err_len, "'%s': K in hot:K[:H] must be an integer from 1 to "
                        "1000", text);
        memcpy(factor, text + 4, len);
        factor[len] = '\0';
        if (cb_parse_long(factor, 1, CB_TRAFFIC_MAX_FACTOR, &k) != 0)
            return fail(err, err_len, "'%s': K in hot:K[:H] must be an integer from 1 to "
                        "1000", text);
        if (colon != NULL && cb_parse_long(colon + 1, 1, CB_TRAFFIC_MAX_HOT, &h) != 0)
            return fail(err, err_len, "'%s': H in hot:K[:H] (how many ranks are hot) must "
                        "be an integer from 1 to 1000000", text);
        spec.factor = (unsigned)k;
        spec.hot = (unsigned)h;
        *out = spec;
        return 0;
    }
    return fail(err, err_len, "'%s' is not a traffic matrix: uniform, random[:SEED] or "
                "hot:K[:H]", text);
}

void cb_traffic_format(const cb_traffic_spec *spec, char *buf, size_t len)
{
    switch (spec->kind) {
    case CB_TRAFFIC_RANDOM:
        snprintf(buf, len, "random:%llu", (unsigned long long)spec->seed);
        break;
    case CB_TRAFFIC_HOT:
        snprintf(buf, len, "hot:%u:%u", spec->factor, spec->hot);
        break;
    default:
        snprintf(buf, len, "uniform");
        break;
    }
}

unsigned cb_traffic_weight(const cb_traffic_spec *spec, int nranks, int from, int to)
{
    switch (spec->kind) {
    case CB_TRAFFIC_RANDOM: {
        /* One draw per cell from (seed, from, to): independent of the order
         * in which ranks ask, and of the rank asking. */
        uint64_t cell = (uint64_t)from * (uint64_t)nranks + (uint64_t)to;
        return (unsigned)(mix64(mix64(spec->seed) ^ cell) % (CB_TRAFFIC_RANDOM_MAX + 1));
    }
    case CB_TRAFFIC_HOT:
        return (unsigned)to < spec->hot ? spec->factor : 1;
    default:
        return 1;
    }
}

uint64_t cb_traffic_row_weight(const cb_traffic_spec *spec, int nranks, int rank)
{
    uint64_t sum = 0;
    for (int to = 0; to < nranks; to++)
        sum += cb_traffic_weight(spec, nranks, rank, to);
    return sum;
}

uint64_t cb_traffic_col_weight(const cb_traffic_spec *spec, int nranks, int rank)
{
    uint64_t sum = 0;
    for (int from = 0; from < nranks; from++)
        sum += cb_traffic_weight(spec, nranks, from, rank);
    return sum;
}

uint64_t cb_traffic_peak_weight(const cb_traffic_spec *spec, int nranks)
{
    uint64_t peak = 0;
    for (int r = 0; r < nranks; r++) {
        uint64_t row = cb_traffic_row_weight(spec, nranks, r);
        uint64_t col = cb_traffic_col_weight(spec, nranks, r);
        if (row > peak)
            peak = row;
        if (col > peak)
            peak = col;
    }
    return peak;
}

size_t cb_traffic_unit(const cb_traffic_spec *spec, int nranks, size_t elements)
{
    uint64_t peak = cb_traffic_peak_weight(spec, nranks);
    return peak == 0 ? 0 : (size_t)(elements / peak);
}
