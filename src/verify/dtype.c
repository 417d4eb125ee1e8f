#include "verify/dtype.h"

#include <stdint.h>
#include <string.h>

#include "verify/minifloat.h"
#include "common/names.h"

#define CB_DEFINE_CONVERSIONS(tag, ctype)                                   \
    static void store_##tag(void *buf, size_t i, double value)              \
    {                                                                       \
        ((ctype *)buf)[i] = (ctype)value;                                   \
    }                                                                       \
    static double load_##tag(const void *buf, size_t i)                     \
    {                                                                       \
        return (double)((const ctype *)buf)[i];                             \
    }

CB_DEFINE_CONVERSIONS(i8, int8_t)
CB_DEFINE_CONVERSIONS(u8, uint8_t)
CB_DEFINE_CONVERSIONS(i32, int32_t)
CB_DEFINE_CONVERSIONS(u32, uint32_t)
CB_DEFINE_CONVERSIONS(i64, int64_t)
CB_DEFINE_CONVERSIONS(u64, uint64_t)
CB_DEFINE_CONVERSIONS(f32, float)
CB_DEFINE_CONVERSIONS(f64, double)

/* Formats without a host type: bit patterns, converted by minifloat.c. */
#define CB_DEFINE_MINIFLOAT(tag, ctype, format)                             \
    static void store_##tag(void *buf, size_t i, double value)              \
    {                                                                       \
        ((ctype *)buf)[i] = (ctype)cb_minifloat_encode(&format, value);     \
    }                                                                       \
    static double load_##tag(const void *buf, size_t i)                     \
    {                                                                       \
        return cb_minifloat_decode(&format, ((const ctype *)buf)[i]);       \
    }

CB_DEFINE_MINIFLOAT(f16, uint16_t, cb_minifloat_half)
CB_DEFINE_MINIFLOAT(bf16, uint16_t, cb_minifloat_bfloat16)
CB_DEFINE_MINIFLOAT(e4m3, uint8_t, cb_minifloat_e4m3)
CB_DEFINE_MINIFLOAT(e5m2, uint8_t, cb_minifloat_e5m2)

/* 2^53: the largest integer range a double (our arithmetic type) holds exactly. */
#define CB_EXACT_DOUBLE 9007199254740992.0

/* Exact integer ranges of the narrow floats: 2^(fraction bits + 1). */
static const cb_dtype_info dtype_table[CB_DTYPE_COUNT] = {
    [CB_INT8]   = {"int8",   "char",          1, 1, -128.0, 127.0, store_i8, load_i8, 0, 0},
    [CB_UINT8]  = {"uint8",  "",              1, 0, 0.0, 255.0, store_u8, load_u8, 0, 0},
    [CB_INT32]  = {"int32",  "int",           4, 1, -2147483648.0, 2147483647.0, store_i32, load_i32, 0, 0},
    [CB_UINT32] = {"uint32", "",              4, 0, 0.0, 4294967295.0, store_u32, load_u32, 0, 0},
    [CB_INT64]  = {"int64",  "",              8, 1, -CB_EXACT_DOUBLE, CB_EXACT_DOUBLE, store_i64, load_i64, 0, 0},
    [CB_UINT64] = {"uint64", "",              8, 0, 0.0, CB_EXACT_DOUBLE, store_u64, load_u64, 0, 0},
    [CB_FLOAT]  = {"float",  "float32 fp32",  4, 1, -16777216.0, 16777216.0, store_f32, load_f32, 1, 23},
    [CB_DOUBLE] = {"double", "float64 fp64",  8, 1, -CB_EXACT_DOUBLE, CB_EXACT_DOUBLE, store_f64, load_f64, 1, 52},
    [CB_HALF]   = {"half",   "float16 fp16 f16", 2, 1, -2048.0, 2048.0, store_f16, load_f16, 1, 10},
    [CB_BFLOAT16] = {"bfloat16", "bf16",      2, 1, -256.0, 256.0, store_bf16, load_bf16, 1, 7},
    [CB_FP8_E4M3] = {"fp8_e4m3", "f8e4m3 e4m3 float8_e4m3", 1, 1, -16.0, 16.0, store_e4m3, load_e4m3, 1, 3},
    [CB_FP8_E5M2] = {"fp8_e5m2", "f8e5m2 e5m2 float8_e5m2", 1, 1, -8.0, 8.0, store_e5m2, load_e5m2, 1, 2},
};

const cb_dtype_info *cb_dtype_info_of(cb_dtype type)
{
    return &dtype_table[type];
}

int cb_dtype_lookup(const char *name, cb_dtype *out)
{
    for (int t = 0; t < CB_DTYPE_COUNT; t++) {
        if (cb_name_matches(name, dtype_table[t].name, dtype_table[t].aliases)) {
            *out = (cb_dtype)t;
            return 0;
        }
    }
    return -1;
}
