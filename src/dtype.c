#include "dtype.h"

#include <stdint.h>
#include <string.h>

#include "names.h"

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

/* 2^53: the largest integer range a double (our arithmetic type) holds exactly. */
#define CB_EXACT_DOUBLE 9007199254740992.0

static const cb_dtype_info dtype_table[CB_DTYPE_COUNT] = {
    [CB_INT8]   = {"int8",   "char",          1, 1, -128.0, 127.0, store_i8, load_i8},
    [CB_UINT8]  = {"uint8",  "",              1, 0, 0.0, 255.0, store_u8, load_u8},
    [CB_INT32]  = {"int32",  "int",           4, 1, -2147483648.0, 2147483647.0, store_i32, load_i32},
    [CB_UINT32] = {"uint32", "",              4, 0, 0.0, 4294967295.0, store_u32, load_u32},
    [CB_INT64]  = {"int64",  "",              8, 1, -CB_EXACT_DOUBLE, CB_EXACT_DOUBLE, store_i64, load_i64},
    [CB_UINT64] = {"uint64", "",              8, 0, 0.0, CB_EXACT_DOUBLE, store_u64, load_u64},
    [CB_FLOAT]  = {"float",  "float32 fp32",  4, 1, -16777216.0, 16777216.0, store_f32, load_f32},
    [CB_DOUBLE] = {"double", "float64 fp64",  8, 1, -CB_EXACT_DOUBLE, CB_EXACT_DOUBLE, store_f64, load_f64},
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
