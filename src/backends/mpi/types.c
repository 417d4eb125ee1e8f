/*
 * The MPI backend's datatypes and reductions (ops.c has the table): MPI's own
 * where it has them, derived types and user-defined operations for the rest.
 */
#include <stdio.h>

#include "backends/mpi/mpi_backend.h"

/*
 * Types MPI lacks (half, bfloat16, the fp8 formats) travel as derived
 * datatypes of contiguous bytes, and reduce with user-defined operations
 * that convert to double, combine, and round back to the type (nearest,
 * ties to even). avg is a sum followed by a local division of the result,
 * premulsum a sum followed by a local multiplication of the result by
 * CB_PREMULSUM_SCALAR: since that scalar is 2, multiplying commutes with
 * rounding (and with integer wrap-around), so the result is that of
 * multiplying each input first, bit for bit except for subnormal results,
 * and needs no copy of the input. Both local passes are inside the timed
 * operation. All of these MPI objects belong to one backend instance:
 * created in init, freed in fini.
 */
_Static_assert((int)CB_PREMULSUM_SCALAR == 2, "premulsum scales the result: exact for 2 only");

static MPI_Datatype mpi_builtin_type(cb_dtype dtype)
{
    switch (dtype) {
    case CB_INT8: return MPI_INT8_T;
    case CB_UINT8: return MPI_UINT8_T;
    case CB_INT32: return MPI_INT32_T;
    case CB_UINT32: return MPI_UINT32_T;
    case CB_INT64: return MPI_INT64_T;
    case CB_UINT64: return MPI_UINT64_T;
    case CB_FLOAT: return MPI_FLOAT;
    case CB_DOUBLE: return MPI_DOUBLE;
    default: return MPI_DATATYPE_NULL;
    }
}

static MPI_Op mpi_builtin_op(cb_redop redop)
{
    switch (redop) {
    case CB_SUM: return MPI_SUM;
    case CB_PROD: return MPI_PROD;
    case CB_MIN: return MPI_MIN;
    case CB_MAX: return MPI_MAX;
    default: return MPI_OP_NULL;
    }
}

/* User-defined reductions on the narrow float types, one function per
 * (type, operation): MPI passes no context, so each knows its own. */
#define CB_NARROW_OP(tag, dtype, opname, expr)                                           \
    static void reduce_##opname##_##tag(void *in, void *inout, int *len, MPI_Datatype *t) \
    {                                                                                    \
        (void)t;                                                                         \
        const cb_dtype_info *info = cb_dtype_info_of(dtype);                             \
        for (int k = 0; k < *len; k++) {                                                 \
            double a = info->load(in, (size_t)k), b = info->load(inout, (size_t)k);      \
            info->store(inout, (size_t)k, (expr));                                       \
        }                                                                                \
    }
#define CB_NARROW_OPS(tag, dtype)                                   \
    CB_NARROW_OP(tag, dtype, sum, a + b)                            \
    CB_NARROW_OP(tag, dtype, prod, a * b)                           \
    CB_NARROW_OP(tag, dtype, min, a < b ? a : b)                    \
    CB_NARROW_OP(tag, dtype, max, a > b ? a : b)                    \
    static MPI_User_function *const narrow_ops_##tag[CB_MPI_BASIC_REDOPS] = { \
        [CB_SUM] = reduce_sum_##tag, [CB_PROD] = reduce_prod_##tag, \
        [CB_MIN] = reduce_min_##tag, [CB_MAX] = reduce_max_##tag};

CB_NARROW_OPS(half, CB_HALF)
CB_NARROW_OPS(bf16, CB_BFLOAT16)
CB_NARROW_OPS(e4m3, CB_FP8_E4M3)
CB_NARROW_OPS(e5m2, CB_FP8_E5M2)

static MPI_User_function *const *narrow_ops_of(cb_dtype dtype)
{
    switch (dtype) {
    case CB_HALF: return narrow_ops_half;
    case CB_BFLOAT16: return narrow_ops_bf16;
    case CB_FP8_E4M3: return narrow_ops_e4m3;
    case CB_FP8_E5M2: return narrow_ops_e5m2;
    default: return NULL;
    }
}

MPI_Datatype cb_mpi_type_of(cb_backend *b, cb_dtype dtype)
{
    return ((mpi_backend *)b)->types[dtype];
}

/* avg and premulsum reduce with sum; the local passes do the rest. */
MPI_Op cb_mpi_op_of(cb_backend *b, cb_dtype dtype, cb_redop redop)
{
    if (redop == CB_AVG || redop == CB_PREMULSUM)
        redop = CB_SUM;
    return ((mpi_backend *)b)->ops[dtype][redop];
}

/* Datatypes and reductions for every cb_dtype: MPI's own where it has them. */
int cb_mpi_create_types(mpi_backend *mb)
{
    cb_backend *b = &mb->base;
    for (int t = 0; t < CB_DTYPE_COUNT; t++) {
        cb_dtype dtype = (cb_dtype)t;
        MPI_User_function *const *narrow = narrow_ops_of(dtype);
        if (narrow == NULL) {
            mb->types[t] = mpi_builtin_type(dtype);
            for (int op = 0; op < CB_MPI_BASIC_REDOPS; op++)
                mb->ops[t][op] = mpi_builtin_op((cb_redop)op);
            continue;
        }
        int size = (int)cb_dtype_info_of(dtype)->size;
        if (MPI_CALL(b, MPI_Type_contiguous(size, MPI_BYTE, &mb->types[t])) != 0)
            return -1;
        mb->type_created[t] = 1;
        if (MPI_CALL(b, MPI_Type_commit(&mb->types[t])) != 0)
            return -1;
        for (int op = 0; op < CB_MPI_BASIC_REDOPS; op++) {
            if (MPI_CALL(b, MPI_Op_create(narrow[op], 1, &mb->ops[t][op])) != 0)
                return -1;
            mb->op_created[t][op] = 1;
        }
    }
    return 0;
}

void cb_mpi_free_types(mpi_backend *mb)
{
    for (int t = 0; t < CB_DTYPE_COUNT; t++) {
        for (int op = 0; op < CB_MPI_BASIC_REDOPS; op++)
            if (mb->op_created[t][op])
                MPI_Op_free(&mb->ops[t][op]);
        if (mb->type_created[t])
            MPI_Type_free(&mb->types[t]);
    }
}
