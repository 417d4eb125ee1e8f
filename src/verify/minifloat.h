/*
 * Narrow floating-point formats the host has no type for: IEEE binary16
 * (half), bfloat16 and the two OCP 8-bit formats (E4M3, E5M2). Conversions
 * from double round to nearest, ties to even, and are exact for every value
 * the format can hold, so small integers round-trip.
 */
#ifndef CB_MINIFLOAT_H
#define CB_MINIFLOAT_H

#include <stdint.h>

typedef struct cb_minifloat_format {
    const char *name;
    int exponent_bits;
    int mantissa_bits;   /* stored fraction bits, without the implicit 1 */
    /* 1: IEEE style, the all-ones exponent holds infinities and NaNs.
     * 0: the all-ones exponent holds normal numbers except the one pattern
     *    with an all-ones fraction, which is NaN; there is no infinity
     *    (OCP E4M3). */
    int ieee_specials;
} cb_minifloat_format;

extern const cb_minifloat_format cb_minifloat_half;     /* 1-5-10, IEEE binary16 */
extern const cb_minifloat_format cb_minifloat_bfloat16; /* 1-8-7 */
extern const cb_minifloat_format cb_minifloat_e4m3;     /* 1-4-3, max 448, no infinity */
extern const cb_minifloat_format cb_minifloat_e5m2;     /* 1-5-2, max 57344 */

/*
 * The bit pattern nearest to value (ties to even). NaN stays NaN; a value
 * beyond the largest finite number becomes infinity in IEEE-style formats
 * and NaN in E4M3, as the conversions without saturation do.
 */
uint16_t cb_minifloat_encode(const cb_minifloat_format *f, double value);

/* The value of a bit pattern (only the format's low bits are read). */
double cb_minifloat_decode(const cb_minifloat_format *f, uint16_t bits);

/* The largest finite value of the format. */
double cb_minifloat_max(const cb_minifloat_format *f);

#endif
