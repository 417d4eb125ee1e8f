#include "verify/minifloat.h"

#include <math.h>

const cb_minifloat_format cb_minifloat_half = {"half", 5, 10, 1};
const cb_minifloat_format cb_minifloat_bfloat16 = {"bfloat16", 8, 7, 1};
const cb_minifloat_format cb_minifloat_e4m3 = {"fp8_e4m3", 4, 3, 0};
const cb_minifloat_format cb_minifloat_e5m2 = {"fp8_e5m2", 5, 2, 1};

static int bias_of(const cb_minifloat_format *f)
{
    return (1 << (f->exponent_bits - 1)) - 1;
}

static unsigned exponent_all_ones(const cb_minifloat_format *f)
{
    return (1u << f->exponent_bits) - 1u;
}

static unsigned fraction_all_ones(const cb_minifloat_format *f)
{
    return (1u << f->mantissa_bits) - 1u;
}

static uint16_t sign_bit(const cb_minifloat_format *f)
{
    return (uint16_t)(1u << (f->exponent_bits + f->mantissa_bits));
}

static uint16_t nan_bits(const cb_minifloat_format *f)
{
    /* IEEE: quiet NaN, the top fraction bit set; E4M3: all ones. */
    unsigned fraction = f->ieee_specials ? 1u << (f->mantissa_bits - 1) : fraction_all_ones(f);
    return (uint16_t)((exponent_all_ones(f) << f->mantissa_bits) | fraction);
}

double cb_minifloat_max(const cb_minifloat_format *f)
{
    int top_exponent = (int)exponent_all_ones(f) - (f->ieee_specials ? 1 : 0);
    /* E4M3's top binade loses its all-ones fraction to NaN. */
    unsigned top_fraction = fraction_all_ones(f) - (f->ieee_specials ? 0u : 1u);
    double significand = (double)((1u << f->mantissa_bits) + top_fraction);
    return ldexp(significand, top_exponent - bias_of(f) - f->mantissa_bits);
}

/* Round a non-negative double to the nearest integer, ties to even. */
static double round_half_even(double q)
{
    double whole = floor(q);
    double rest = q - whole;
    if (rest > 0.5 || (rest == 0.5 && fmod(whole, 2.0) != 0.0))
        whole += 1.0;
    return whole;
}

uint16_t cb_minifloat_encode(const cb_minifloat_format *f, double value)
{
    uint16_t sign = signbit(value) ? sign_bit(f) : 0;
    if (isnan(value))
        return (uint16_t)(sign | nan_bits(f));
    double magnitude = fabs(value);
    if (isinf(magnitude))
        return (uint16_t)(sign | (f->ieee_specials
                                      ? (uint16_t)(exponent_all_ones(f) << f->mantissa_bits)
                                      : nan_bits(f)));
    if (magnitude == 0.0)
        return sign;

    int bias = bias_of(f);
    int min_exponent = 1 - bias;             /* of the smallest normal number */
    int exponent;
    frexp(magnitude, &exponent);             /* magnitude = m * 2^exponent, m in [0.5, 1) */
    exponent -= 1;                           /* magnitude = 1.x * 2^exponent */
    if (exponent < min_exponent)
        exponent = min_exponent;             /* subnormal: the quantum stops shrinking */

    /* Count of quanta (units in the last place): exact, then rounded. */
    double units = round_half_even(ldexp(magnitude, f->mantissa_bits - exponent));
    double implicit_one = ldexp(1.0, f->mantissa_bits);
    if (units >= 2.0 * implicit_one) {       /* rounded up into the next binade */
        units /= 2.0;
        exponent += 1;
    }
    unsigned exponent_field, fraction;
    if (units < implicit_one) {              /* subnormal or zero */
        exponent_field = 0;
        fraction = (unsigned)units;
    } else {
        exponent_field = (unsigned)(exponent + bias);
        fraction = (unsigned)(units - implicit_one);
    }
    if (f->ieee_specials) {
        if (exponent_field >= exponent_all_ones(f))
            return (uint16_t)(sign | (exponent_all_ones(f) << f->mantissa_bits));
    } else if (exponent_field > exponent_all_ones(f) ||
               (exponent_field == exponent_all_ones(f) && fraction == fraction_all_ones(f))) {
        return (uint16_t)(sign | nan_bits(f));
    }
    return (uint16_t)(sign | (exponent_field << f->mantissa_bits) | fraction);
}

double cb_minifloat_decode(const cb_minifloat_format *f, uint16_t bits)
{
    int width = f->exponent_bits + f->mantissa_bits;
    double sign = (bits >> width) & 1u ? -1.0 : 1.0;
    unsigned exponent_field = (bits >> f->mantissa_bits) & exponent_all_ones(f);
    unsigned fraction = bits & fraction_all_ones(f);
    if (f->ieee_specials && exponent_field == exponent_all_ones(f))
        return fraction ? NAN : sign * INFINITY;
    if (!f->ieee_specials && exponent_field == exponent_all_ones(f) &&
        fraction == fraction_all_ones(f))
        return NAN;
    int bias = bias_of(f);
    if (exponent_field == 0)
        return sign * ldexp((double)fraction, 1 - bias - f->mantissa_bits);
    double significand = (double)((1u << f->mantissa_bits) + fraction);
    return sign * ldexp(significand, (int)exponent_field - bias - f->mantissa_bits);
}
