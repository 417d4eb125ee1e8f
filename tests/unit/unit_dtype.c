/* Element types: the host conversions of half, bfloat16 and the fp8 formats
 * round to nearest even, hold every integer of their exact range, and agree
 * with known encodings (and with the compiler's _Float16 where it has one). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "verify/dtype.h"
#include "verify/minifloat.h"
#include "unit.h"

static const struct {
    cb_dtype dtype;
    const cb_minifloat_format *format;
    double exact;        /* every integer up to this is exact, the next is not */
    double max_finite;
} narrow_types[] = {
    {CB_HALF, &cb_minifloat_half, 2048.0, 65504.0},
    {CB_BFLOAT16, &cb_minifloat_bfloat16, 256.0, 3.3895313892515355e38},
    {CB_FP8_E4M3, &cb_minifloat_e4m3, 16.0, 448.0},
    {CB_FP8_E5M2, &cb_minifloat_e5m2, 8.0, 57344.0},
};
#define NARROW_COUNT (sizeof narrow_types / sizeof narrow_types[0])

static double round_trip(const cb_dtype_info *info, double v)
{
    unsigned char cell[8];
    info->store(cell, 0, v);
    return info->load(cell, 0);
}

/* Every integer of the exact range survives; the one past it does not. */
static void test_integers(unit_state *u)
{
    for (size_t k = 0; k < NARROW_COUNT; k++) {
        const cb_dtype_info *info = cb_dtype_info_of(narrow_types[k].dtype);
        CHECK(u, info->exact_max == narrow_types[k].exact);
        CHECK(u, info->exact_min == -narrow_types[k].exact);
        CHECK(u, info->is_float && info->mantissa_bits == narrow_types[k].format->mantissa_bits);
        CHECK(u, info->size == (size_t)(1 + narrow_types[k].format->exponent_bits +
                                        narrow_types[k].format->mantissa_bits) / 8);
        int bad = 0;
        for (double v = info->exact_min; v <= info->exact_max; v += 1.0)
            bad += round_trip(info, v) != v;
        CHECK(u, bad == 0);
        /* exact + 1 is a tie between exact and exact + 2: even wins, exact. */
        CHECK(u, round_trip(info, info->exact_max + 1.0) == info->exact_max);
        CHECK(u, round_trip(info, -info->exact_max - 1.0) == -info->exact_max);
        CHECK(u, cb_minifloat_max(narrow_types[k].format) == narrow_types[k].max_finite);
        CHECK(u, round_trip(info, narrow_types[k].max_finite) == narrow_types[k].max_finite);
    }
    /* The host types keep theirs too. */
    for (int t = 0; t < CB_DTYPE_COUNT; t++) {
        const cb_dtype_info *info = cb_dtype_info_of((cb_dtype)t);
        CHECK(u, round_trip(info, info->exact_max) == info->exact_max);
        CHECK(u, round_trip(info, info->exact_min) == info->exact_min);
        CHECK(u, round_trip(info, 0.0) == 0.0);
        CHECK(u, info->is_float == (info->mantissa_bits > 0));
    }
}

/* Every bit pattern decodes to a value that encodes back to it. */
static void test_all_patterns(unit_state *u)
{
    for (size_t k = 0; k < NARROW_COUNT; k++) {
        const cb_minifloat_format *f = narrow_types[k].format;
        unsigned count = 1u << (1 + f->exponent_bits + f->mantissa_bits);
        int bad = 0, nans = 0, infinities = 0;
        for (unsigned bits = 0; bits < count; bits++) {
            double v = cb_minifloat_decode(f, (uint16_t)bits);
            if (isnan(v)) {
                nans++;
                bad += !isnan(cb_minifloat_decode(f, cb_minifloat_encode(f, v)));
                continue;
            }
            infinities += isinf(v) != 0;
            bad += cb_minifloat_encode(f, v) != bits;
        }
        CHECK(u, bad == 0);
        if (f->ieee_specials) {
            CHECK(u, infinities == 2);
            CHECK(u, nans == 2 * ((1 << f->mantissa_bits) - 1));
        } else {
            CHECK(u, infinities == 0);
            CHECK(u, nans == 2);
        }
    }
}

typedef struct known {
    const cb_minifloat_format *format;
    double value;
    unsigned bits;
} known;

/* Non-integers, ties, subnormals, overflow: worked out by hand. */
static void test_known_encodings(unit_state *u)
{
    const cb_minifloat_format *h = &cb_minifloat_half, *bf = &cb_minifloat_bfloat16;
    const cb_minifloat_format *e4 = &cb_minifloat_e4m3, *e5 = &cb_minifloat_e5m2;
    const known cases[] = {
        {h, 0.1, 0x2e66}, {h, 1.0 / 3.0, 0x3555}, {h, -2.5, 0xc100}, {h, 65504.0, 0x7bff},
        {h, 65519.0, 0x7bff}, {h, 65520.0, 0x7c00}, {h, 1e9, 0x7c00}, {h, -1e9, 0xfc00},
        {h, 1.0 + 0x1p-10, 0x3c01}, {h, 1.0 + 0x1p-11, 0x3c00}, {h, 1.0 + 3 * 0x1p-11, 0x3c02},
        {h, 0x1p-24, 0x0001}, {h, 0x1p-25, 0x0000}, {h, 3 * 0x1p-26, 0x0001},
        {h, 0x1p-14, 0x0400}, {h, 0x1p-14 - 0x1p-24, 0x03ff}, {h, -0.0, 0x8000},
        {h, 0.5, 0x3800}, {h, 2049.0, 0x6800}, {h, 2051.0, 0x6802}, {h, 1.5, 0x3e00},
        {bf, 0.1, 0x3dcd}, {bf, 1.0 / 3.0, 0x3eab}, {bf, 1.0 + 0x1p-8, 0x3f80},
        {bf, 1.0 + 3 * 0x1p-8, 0x3f82}, {bf, 257.0, 0x4380}, {bf, 259.0, 0x4382},
        {bf, 3.3895313892515355e38, 0x7f7f}, {bf, 1e39, 0x7f80}, {bf, 0x1p-133, 0x0001},
        {bf, -1.5, 0xbfc0}, {bf, 0.75, 0x3f40},
        {e4, 448.0, 0x7e}, {e4, 464.0, 0x7e}, {e4, 470.0, 0x7f}, {e4, 1e6, 0x7f},
        {e4, 0.1, 0x1d}, {e4, 0x1p-9, 0x01}, {e4, 0x1p-10, 0x00}, {e4, -2.0, 0xc0},
        {e4, 17.0, 0x58}, {e4, 19.0, 0x5a}, {e4, 0.875, 0x36}, {e4, 1.0625, 0x38},
        {e4, 1.1875, 0x3a},
        {e5, 57344.0, 0x7b}, {e5, 61439.0, 0x7b}, {e5, 61440.0, 0x7c}, {e5, 0.1, 0x2e},
        {e5, 0x1p-16, 0x01}, {e5, -0x1p-17, 0x80}, {e5, 9.0, 0x48}, {e5, 11.0, 0x4a},
        {e5, 0.3, 0x35}, {e5, -1.25, 0xbd},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        unsigned got = cb_minifloat_encode(cases[c].format, cases[c].value);
        if (got != cases[c].bits)
            fprintf(stderr, "  %s(%.17g): got 0x%x, expected 0x%x\n", cases[c].format->name,
                    cases[c].value, got, cases[c].bits);
        CHECK(u, got == cases[c].bits);
    }
    CHECK(u, isnan(cb_minifloat_decode(e4, cb_minifloat_encode(e4, NAN))));
    CHECK(u, isnan(cb_minifloat_decode(e4, cb_minifloat_encode(e4, INFINITY))));
    CHECK(u, cb_minifloat_decode(e5, cb_minifloat_encode(e5, -INFINITY)) == -INFINITY);
    CHECK(u, isnan(cb_minifloat_decode(h, cb_minifloat_encode(h, NAN))));
}

/* Random doubles: the encoding is the nearest value, ties to even. */
static void test_nearest(unit_state *u)
{
    srand(12345);
    for (size_t k = 0; k < NARROW_COUNT; k++) {
        const cb_minifloat_format *f = narrow_types[k].format;
        int bad = 0;
        for (int trial = 0; trial < 20000; trial++) {
            double v = ldexp((double)rand() / RAND_MAX, rand() % 24 - 12) * (rand() % 2 ? 1 : -1);
            if (fabs(v) > narrow_types[k].max_finite)
                continue;
            uint16_t bits = cb_minifloat_encode(f, v);
            double got = cb_minifloat_decode(f, bits);
            /* Neighbours one pattern up and down (same sign) are no nearer. */
            for (int step = -1; step <= 1; step += 2) {
                double other = cb_minifloat_decode(f, (uint16_t)(bits + step));
                if (isnan(other) || isinf(other) || (bits & 0x7fff) == 0)
                    continue;
                double d_got = fabs(got - v), d_other = fabs(other - v);
                if (d_other < d_got)
                    bad++;
                if (d_other == d_got && (bits & 1u))
                    bad++;   /* a tie must go to the even pattern */
            }
        }
        CHECK(u, bad == 0);
    }
#ifdef __FLT16_MANT_DIG__
    /* The compiler's own conversion to half agrees on every trial. */
    int differ = 0;
    for (int trial = 0; trial < 200000; trial++) {
        double v = ldexp((double)rand() / RAND_MAX, rand() % 44 - 28) * (rand() % 2 ? 1 : -1);
        _Float16 native = (_Float16)v;
        uint16_t native_bits;
        memcpy(&native_bits, &native, sizeof native_bits);
        differ += native_bits != cb_minifloat_encode(&cb_minifloat_half, v);
    }
    CHECK(u, differ == 0);
#endif
    /* float (the host type) and bfloat16 agree on what bfloat16 can hold. */
    for (int trial = 0; trial < 20000; trial++) {
        float x = (float)ldexp((double)rand() / RAND_MAX, rand() % 40 - 20);
        uint32_t fbits;
        memcpy(&fbits, &x, sizeof fbits);
        /* Round to nearest even on the float's bits. */
        uint32_t rounded = (fbits + 0x7fffu + ((fbits >> 16) & 1u)) >> 16;
        CHECK(u, cb_minifloat_encode(&cb_minifloat_bfloat16, (double)x) == rounded);
    }
}

/* Lookup by name and alias. */
static void test_names(unit_state *u)
{
    cb_dtype t;
    CHECK(u, cb_dtype_lookup("half", &t) == 0 && t == CB_HALF);
    CHECK(u, cb_dtype_lookup("float16", &t) == 0 && t == CB_HALF);
    CHECK(u, cb_dtype_lookup("bf16", &t) == 0 && t == CB_BFLOAT16);
    CHECK(u, cb_dtype_lookup("f8e4m3", &t) == 0 && t == CB_FP8_E4M3);
    CHECK(u, cb_dtype_lookup("FP8_E5M2", &t) == 0 && t == CB_FP8_E5M2);
    CHECK(u, cb_dtype_lookup("float16x", &t) == -1);
}

int main(void)
{
    unit_state u = {0, 0};
    test_integers(&u);
    test_all_patterns(&u);
    test_known_encodings(&u);
    test_nearest(&u);
    test_names(&u);
    return unit_done(&u, "unit_dtype");
}
