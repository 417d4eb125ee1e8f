/* Element types: the engine's own names, sizes and host conversions. */
#ifndef CB_DTYPE_H
#define CB_DTYPE_H

#include <stddef.h>

typedef enum cb_dtype {
    CB_INT8,
    CB_UINT8,
    CB_INT32,
    CB_UINT32,
    CB_INT64,
    CB_UINT64,
    CB_FLOAT,
    CB_DOUBLE,
    CB_HALF,       /* IEEE 754 binary16 */
    CB_BFLOAT16,   /* float32's exponent with a 7-bit fraction */
    CB_FP8_E4M3,   /* OCP 8-bit E4M3: NCCL >= 2.24 on compute capability >= 9.0 */
    CB_FP8_E5M2,   /* OCP 8-bit E5M2: likewise */
    CB_DTYPE_COUNT
} cb_dtype;

typedef struct cb_dtype_info {
    const char *name;      /* name on the command line and in output */
    const char *aliases;   /* other accepted names, space separated */
    size_t size;           /* bytes per element */
    int is_signed;
    /* Every integer in [exact_min, exact_max] is representable exactly. */
    double exact_min;
    double exact_max;
    /* Host conversions of element i; values are exact integers in range. */
    void (*store)(void *buf, size_t i, double value);
    double (*load)(const void *buf, size_t i);
    /* Floating point: avg divides with rounding (integers truncate), and
     * stored values are rounded to nearest, ties to even. */
    int is_float;
    int mantissa_bits;     /* stored fraction bits of a float type; 0 for integers */
} cb_dtype_info;

const cb_dtype_info *cb_dtype_info_of(cb_dtype type);

/* Look a name or alias up; returns 0 and sets *out, or -1. */
int cb_dtype_lookup(const char *name, cb_dtype *out);

#endif
