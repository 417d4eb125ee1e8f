/*
 * MPI backend: host buffers, MPI collectives on the benchmark communicator,
 * MPI_Wtime. Runs anywhere MPI runs, and gives the NCCL figures a baseline.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "mpi_backend.h"
#include "quirks.h"
#include "host/sysinfo.h"

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
#define CB_MPI_BASIC_REDOPS (CB_MAX + 1)   /* sum, prod, min, max: what MPI reduces */

typedef struct mpi_backend {
    cb_backend base;  /* first: the engine sees this */
    double timer_started;
    MPI_Datatype types[CB_DTYPE_COUNT];
    int type_created[CB_DTYPE_COUNT];               /* ours to free */
    MPI_Op ops[CB_DTYPE_COUNT][CB_MPI_BASIC_REDOPS];
    int op_created[CB_DTYPE_COUNT][CB_MPI_BASIC_REDOPS];
    void *work;                                     /* host_scratch's buffer */
    size_t work_bytes;
    double *marks;    /* MPI_Wtime at the end of each marked iteration */
    int nmarks;
    int marks_room;
    int reduce_root_first;  /* this MPI's reduce needs the root ranked first */
    MPI_Comm root_first;    /* comm reordered so that root_first_of is rank 0 */
    int root_first_of;
} mpi_backend;

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

static MPI_Datatype mpi_type_of(cb_backend *b, cb_dtype dtype)
{
    return ((mpi_backend *)b)->types[dtype];
}

/* avg and premulsum reduce with sum; the local passes do the rest. */
static MPI_Op mpi_op_of(cb_backend *b, cb_dtype dtype, cb_redop redop)
{
    if (redop == CB_AVG || redop == CB_PREMULSUM)
        redop = CB_SUM;
    return ((mpi_backend *)b)->ops[dtype][redop];
}

/* 0, or -1 with a line in b->error naming the call, its place and MPI's error. */
static int mpi_check(cb_backend *b, int code, const char *call, const char *file, int line)
{
    if (code == MPI_SUCCESS)
        return 0;
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(code, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "error %d", code);
    const char *base = strrchr(file, '/');
    return cb_backend_fail(b, "%.*s failed (%s:%d): %s", (int)strcspn(call, "("), call,
                           base != NULL ? base + 1 : file, line, text);
}

#define MPI_CALL(b, call) mpi_check((b), (call), #call, __FILE__, __LINE__)

static int mpi_usable(char *why, size_t why_len)
{
    (void)why;
    (void)why_len;
    return 1;
}

/* Datatypes and reductions for every cb_dtype: MPI's own where it has them. */
static int create_types_and_ops(mpi_backend *mb)
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

/* A communicator of our own, whose errors come back to us so that they are
 * reported as ours; the caller's keeps its handler. Collective over comm. */
static int mpi_start(mpi_backend *mb, MPI_Comm comm)
{
    mb->root_first = MPI_COMM_NULL;
    if (MPI_CALL(&mb->base, MPI_Comm_dup(comm, &mb->base.comm)) != 0) {
        mb->base.comm = MPI_COMM_NULL;
        return -1;
    }
    MPI_Comm_set_errhandler(mb->base.comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(mb->base.comm, &mb->base.rank);
    MPI_Comm_size(mb->base.comm, &mb->base.nranks);
    mb->reduce_root_first = cb_mpi_reduce_root_first_on(&mb->base);
    return create_types_and_ops(mb);
}

static int mpi_init(MPI_Comm comm, const cb_backend_config *config, cb_backend **out)
{
    (void)config;
    mpi_backend *mb = calloc(1, sizeof *mb);
    *out = mb ? &mb->base : NULL;
    if (cb_backend_agree(comm, *out, mb == NULL) != 0)
        return -1;
    mb->base.comm = MPI_COMM_NULL;
    snprintf(mb->base.allocator, sizeof mb->base.allocator, "posix_memalign");
    return mpi_start(mb, comm);
}

static void mpi_fini(cb_backend *b, int aborting);

static int mpi_split(cb_backend *b, int color, int key, cb_backend **out)
{
    *out = NULL;
    mpi_backend *mb = color >= 0 ? calloc(1, sizeof *mb) : NULL;
    if (color >= 0 && mb == NULL)
        cb_backend_fail(b, "out of memory for a sub-communicator's backend");
    if (cb_backend_agree(b->comm, b, color >= 0 && mb == NULL) != 0)
        return -1;
    MPI_Comm sub = MPI_COMM_NULL;
    int failed = MPI_CALL(b, MPI_Comm_split(b->comm, color >= 0 ? color : MPI_UNDEFINED, key,
                                            &sub)) != 0;
    if (!failed && mb != NULL) {
        mb->base.ops = b->ops;
        mb->base.comm = MPI_COMM_NULL;
        failed = mpi_start(mb, sub) != 0;
        if (failed)
            snprintf(b->error, sizeof b->error, "%s", mb->base.error);
    }
    if (sub != MPI_COMM_NULL)
        MPI_Comm_free(&sub);
    if (cb_backend_agree(b->comm, b, failed) != 0) {
        if (mb != NULL)
            mpi_fini(&mb->base, 1);
        return -1;
    }
    *out = mb ? &mb->base : NULL;
    return 0;
}

static void mpi_fini(cb_backend *b, int aborting)
{
    (void)aborting;
    mpi_backend *mb = (mpi_backend *)b;
    for (int t = 0; t < CB_DTYPE_COUNT; t++) {
        for (int op = 0; op < CB_MPI_BASIC_REDOPS; op++)
            if (mb->op_created[t][op])
                MPI_Op_free(&mb->ops[t][op]);
        if (mb->type_created[t])
            MPI_Type_free(&mb->types[t]);
    }
    if (mb->root_first != MPI_COMM_NULL)
        MPI_Comm_free(&mb->root_first);
    if (b->comm != MPI_COMM_NULL)
        MPI_Comm_free(&b->comm);
    free(mb->marks);
    free(mb->work);
    free(mb);
}

static int mpi_describe(cb_backend *b, cb_device_desc *desc)
{
    (void)b;
    desc->index = -1;
    snprintf(desc->bus_id, sizeof desc->bus_id, "-");
    cb_sysinfo_cpu_model(desc->model, sizeof desc->model);
    cb_sysinfo_mpi_library(desc->library, sizeof desc->library);
    return 0;
}

static int mpi_memory_available(cb_backend *b, size_t *bytes)
{
    size_t available = cb_sysinfo_memory_available();
    if (available == 0)
        return cb_backend_fail(b, "cannot read the available memory from /proc/meminfo");
    int local_ranks = cb_sysinfo_local_ranks(b->comm);
    *bytes = available / (size_t)(local_ranks > 0 ? local_ranks : 1);
    return 0;
}

static int mpi_alloc(cb_backend *b, size_t bytes, void **ptr)
{
    void *p = NULL;
    size_t rounded = (bytes + 4095) & ~(size_t)4095;
    if (rounded == 0 || posix_memalign(&p, 4096, rounded) != 0)
        return cb_backend_fail(b, "cannot allocate %zu bytes of host memory", bytes);
    memset(p, 0, rounded);
    *ptr = p;
    return 0;
}

static void mpi_free(cb_backend *b, void *ptr)
{
    (void)b;
    free(ptr);
}

static int mpi_copy(cb_backend *b, void *dst, const void *src, size_t bytes)
{
    (void)b;
    if (dst != src)
        memcpy(dst, src, bytes);
    return 0;
}

static int mpi_copy2d(cb_backend *b, void *dst, size_t pitch_dst, const void *src,
                      size_t pitch_src, size_t width, size_t height)
{
    (void)b;
    for (size_t row = 0; row < height; row++)
        memcpy((char *)dst + row * pitch_dst, (const char *)src + row * pitch_src, width);
    return 0;
}

static int mpi_supports(cb_backend *b, cb_dtype dtype, cb_redop redop, char *why, size_t why_len)
{
    if (mpi_type_of(b, dtype) == MPI_DATATYPE_NULL) {
        snprintf(why, why_len, "MPI backend has no %s", cb_dtype_info_of(dtype)->name);
        return 0;
    }
    if (redop != CB_REDOP_NONE && mpi_op_of(b, dtype, redop) == MPI_OP_NULL) {
        snprintf(why, why_len, "MPI backend has no %s reduction", cb_redop_name(redop));
        return 0;
    }
    return 1;
}

static int check_count(cb_backend *b, size_t count)
{
    if (count > INT_MAX)
        return cb_backend_fail(b, "%zu elements exceed MPI's int count limit (%d)", count, INT_MAX);
    return 0;
}

static size_t elem_size(cb_dtype dtype)
{
    return cb_dtype_info_of(dtype)->size;
}

/* Integers multiply in the unsigned type of their width, so that values
 * grown by repeated in-place launches wrap (as on a GPU) instead of
 * overflowing, which C leaves undefined for signed types. */
#define CB_SCALE_LOOP(ctype, arith)                                      \
    do {                                                                 \
        const ctype *from = src;                                         \
        ctype *to = dst;                                                 \
        for (size_t k = 0; k < count; k++)                               \
            to[k] = (ctype)((arith)from[k] * (arith)CB_PREMULSUM_SCALAR); \
    } while (0)

/* premulsum's local pass: dst = CB_PREMULSUM_SCALAR * src (here dst is src). */
static void scale_elements(void *dst, const void *src, size_t count, cb_dtype dtype)
{
    switch (dtype) {
    case CB_INT8: CB_SCALE_LOOP(int8_t, uint32_t); return;
    case CB_UINT8: CB_SCALE_LOOP(uint8_t, uint32_t); return;
    case CB_INT32: CB_SCALE_LOOP(int32_t, uint32_t); return;
    case CB_UINT32: CB_SCALE_LOOP(uint32_t, uint32_t); return;
    case CB_INT64: CB_SCALE_LOOP(int64_t, uint64_t); return;
    case CB_UINT64: CB_SCALE_LOOP(uint64_t, uint64_t); return;
    case CB_FLOAT: CB_SCALE_LOOP(float, float); return;
    case CB_DOUBLE: CB_SCALE_LOOP(double, double); return;
    default: {
        const cb_dtype_info *info = cb_dtype_info_of(dtype);
        for (size_t k = 0; k < count; k++)
            info->store(dst, k, CB_PREMULSUM_SCALAR * info->load(src, k));
        return;
    }
    }
}

#define CB_DIVIDE_LOOP(ctype, wide)                                      \
    do {                                                                 \
        ctype *values = buf;                                             \
        for (size_t k = 0; k < count; k++)                               \
            values[k] = (ctype)((wide)values[k] / (wide)nranks);         \
    } while (0)

/* avg's local pass: buf /= nranks, truncating toward zero for integers. */
static void divide_elements(void *buf, size_t count, cb_dtype dtype, int nranks)
{
    switch (dtype) {
    case CB_INT8: CB_DIVIDE_LOOP(int8_t, int64_t); return;
    case CB_UINT8: CB_DIVIDE_LOOP(uint8_t, uint64_t); return;
    case CB_INT32: CB_DIVIDE_LOOP(int32_t, int64_t); return;
    case CB_UINT32: CB_DIVIDE_LOOP(uint32_t, uint64_t); return;
    case CB_INT64: CB_DIVIDE_LOOP(int64_t, int64_t); return;
    case CB_UINT64: CB_DIVIDE_LOOP(uint64_t, uint64_t); return;
    case CB_FLOAT: CB_DIVIDE_LOOP(float, float); return;
    case CB_DOUBLE: CB_DIVIDE_LOOP(double, double); return;
    default: {
        const cb_dtype_info *info = cb_dtype_info_of(dtype);
        for (size_t k = 0; k < count; k++)
            info->store(buf, k, info->load(buf, k) / nranks);
        return;
    }
    }
}

/* The local pass after MPI's sum, on a rank that holds a result. */
static void finish_reduction(cb_backend *b, void *result, size_t count, cb_dtype dtype,
                             cb_redop redop)
{
    if (redop == CB_AVG)
        divide_elements(result, count, dtype, b->nranks);
    else if (redop == CB_PREMULSUM)
        scale_elements(result, result, count, dtype);
}

static int mpi_allreduce(cb_backend *b, const void *send, void *recv, size_t count,
                         cb_dtype dtype, cb_redop redop)
{
    if (check_count(b, count) != 0)
        return -1;
    const void *src = send == recv ? MPI_IN_PLACE : send;
    if (MPI_CALL(b, MPI_Allreduce(src, recv, (int)count, mpi_type_of(b, dtype),
                                  mpi_op_of(b, dtype, redop), b->comm)) != 0)
        return -1;
    finish_reduction(b, recv, count, dtype, redop);
    return 0;
}

static int mpi_allgather(cb_backend *b, const void *send, void *recv, size_t count,
                         cb_dtype dtype)
{
    if (check_count(b, count) != 0)
        return -1;
    int in_place = send == (char *)recv + (size_t)b->rank * count * elem_size(dtype);
    MPI_Datatype type = mpi_type_of(b, dtype);
    return MPI_CALL(b, MPI_Allgather(in_place ? MPI_IN_PLACE : send, (int)count, type, recv,
                                     (int)count, type, b->comm));
}

static int mpi_reducescatter(cb_backend *b, const void *send, void *recv, size_t count,
                             cb_dtype dtype, cb_redop redop)
{
    if (check_count(b, count) != 0)
        return -1;
    size_t esize = elem_size(dtype);
    int in_place = recv == (const char *)send + (size_t)b->rank * count * esize;
    MPI_Datatype type = mpi_type_of(b, dtype);
    MPI_Op op = mpi_op_of(b, dtype, redop);
    if (in_place) {
        /* MPI leaves an in-place result at the start of the buffer; NCCL's
         * in-place result is the rank's own block, so move it there. */
        if (MPI_CALL(b, MPI_Reduce_scatter_block(MPI_IN_PLACE, (void *)send, (int)count, type,
                                                 op, b->comm)) != 0)
            return -1;
        if (b->rank != 0)
            memmove(recv, send, count * esize);
    } else if (MPI_CALL(b, MPI_Reduce_scatter_block(send, recv, (int)count, type, op,
                                                    b->comm)) != 0) {
        return -1;
    }
    finish_reduction(b, recv, count, dtype, redop);
    return 0;
}

static int mpi_broadcast(cb_backend *b, const void *send, void *recv, size_t count,
                         cb_dtype dtype, int root)
{
    if (check_count(b, count) != 0)
        return -1;
    /* NCCL's root also receives: copy its input over first (a local pass). */
    if (b->rank == root && send != recv)
        memcpy(recv, send, count * elem_size(dtype));
    return MPI_CALL(b, MPI_Bcast(recv, (int)count, mpi_type_of(b, dtype), root, b->comm));
}

/* The same ranks, ranked from root on (see mpi/quirks.h), made when the root
 * changes: a root's sizes run together, the first call a warm-up. */
static int root_first_comm(mpi_backend *mb, int root)
{
    if (mb->root_first != MPI_COMM_NULL && mb->root_first_of == root)
        return 0;
    if (mb->root_first != MPI_COMM_NULL)
        MPI_Comm_free(&mb->root_first);
    cb_backend *b = &mb->base;
    int key = (b->rank - root + b->nranks) % b->nranks;
    if (MPI_CALL(b, MPI_Comm_split(b->comm, 0, key, &mb->root_first)) != 0) {
        mb->root_first = MPI_COMM_NULL;
        return -1;
    }
    mb->root_first_of = root;
    return 0;
}

static int mpi_reduce(cb_backend *b, const void *send, void *recv, size_t count,
                      cb_dtype dtype, cb_redop redop, int root)
{
    if (check_count(b, count) != 0)
        return -1;
    mpi_backend *mb = (mpi_backend *)b;
    MPI_Comm comm = b->comm;
    int comm_root = root;
    if (mb->reduce_root_first && root != 0) {
        if (root_first_comm(mb, root) != 0)
            return -1;
        comm = mb->root_first;
        comm_root = 0;
    }
    const void *src = b->rank == root && send == recv ? MPI_IN_PLACE : send;
    if (MPI_CALL(b, MPI_Reduce(src, recv, (int)count, mpi_type_of(b, dtype),
                               mpi_op_of(b, dtype, redop), comm_root, comm)) != 0)
        return -1;
    if (b->rank == root)
        finish_reduction(b, recv, count, dtype, redop);
    return 0;
}

static int mpi_alltoall(cb_backend *b, const void *send, void *recv, size_t count,
                        cb_dtype dtype)
{
    if (check_count(b, count) != 0)
        return -1;
    MPI_Datatype type = mpi_type_of(b, dtype);
    return MPI_CALL(b, MPI_Alltoall(send == recv ? MPI_IN_PLACE : send, (int)count, type, recv,
                                    (int)count, type, b->comm));
}

static int mpi_gather(cb_backend *b, const void *send, void *recv, size_t count,
                      cb_dtype dtype, int root)
{
    if (check_count(b, count) != 0)
        return -1;
    /* Only the root's receive buffer is significant. */
    int in_place = b->rank == root &&
                   send == (char *)recv + (size_t)b->rank * count * elem_size(dtype);
    MPI_Datatype type = mpi_type_of(b, dtype);
    const void *src = in_place ? MPI_IN_PLACE : send;
    return MPI_CALL(b, MPI_Gather(src, (int)count, type, recv, (int)count, type, root, b->comm));
}

static int mpi_scatter(cb_backend *b, const void *send, void *recv, size_t count,
                       cb_dtype dtype, int root)
{
    if (check_count(b, count) != 0)
        return -1;
    /* Only the root's send buffer is significant. */
    int in_place = b->rank == root &&
                   recv == (const char *)send + (size_t)b->rank * count * elem_size(dtype);
    MPI_Datatype type = mpi_type_of(b, dtype);
    void *dst = in_place ? MPI_IN_PLACE : recv;
    return MPI_CALL(b, MPI_Scatter(send, (int)count, type, dst, (int)count, type, root, b->comm));
}

/* The benchmark's point-to-point messages, apart from anything else on comm. */
#define CB_SENDRECV_TAG 0x5e4d

static int mpi_sendrecv(cb_backend *b, const void *send, void *recv, size_t count,
                        cb_dtype dtype, int send_peer, int recv_peer)
{
    if (check_count(b, count) != 0)
        return -1;
    MPI_Datatype type = mpi_type_of(b, dtype);
    if (send == recv)
        return MPI_CALL(b, MPI_Sendrecv_replace(recv, (int)count, type, send_peer,
                                                CB_SENDRECV_TAG, recv_peer, CB_SENDRECV_TAG,
                                                b->comm, MPI_STATUS_IGNORE));
    return MPI_CALL(b, MPI_Sendrecv(send, (int)count, type, send_peer, CB_SENDRECV_TAG, recv,
                                    (int)count, type, recv_peer, CB_SENDRECV_TAG, b->comm,
                                    MPI_STATUS_IGNORE));
}

static int mpi_barrier(cb_backend *b)
{
    return MPI_CALL(b, MPI_Barrier(b->comm));
}

/* The local passes of ring_allreduce, on the host with the same operations
 * and local passes as mpi_allreduce. */
static int mpi_reduce_local(cb_backend *b, cb_local_stage stage, const void *in, void *inout,
                            size_t count, cb_dtype dtype, cb_redop redop)
{
    if (check_count(b, count) != 0)
        return -1;
    switch (stage) {
    case CB_LOCAL_PREPARE:
        if (redop == CB_PREMULSUM)
            scale_elements(inout, in, count, dtype);
        else if (in != inout)
            memcpy(inout, in, count * elem_size(dtype));
        return 0;
    case CB_LOCAL_COMBINE: {
        return MPI_CALL(b, MPI_Reduce_local(in, inout, (int)count, mpi_type_of(b, dtype),
                                            mpi_op_of(b, dtype, redop)));
    }
    case CB_LOCAL_FINISH:
        if (redop == CB_AVG)
            divide_elements(inout, count, dtype, b->nranks);
        return 0;
    }
    return cb_backend_fail(b, "unknown local reduction stage %d", (int)stage);
}

/* ring_allreduce's host buffer: in use while it calls other primitives. */
static void *mpi_host_scratch(cb_backend *b, size_t bytes)
{
    mpi_backend *mb = (mpi_backend *)b;
    if (mb->work_bytes < bytes) {
        void *bigger = realloc(mb->work, bytes);
        if (bigger == NULL) {
            cb_backend_fail(b, "cannot allocate %zu bytes of host scratch memory", bytes);
            return NULL;
        }
        mb->work = bigger;
        mb->work_bytes = bytes;
    }
    return mb->work;
}

static int mpi_wait(cb_backend *b)
{
    (void)b; /* MPI collectives here are blocking: nothing is in flight */
    return 0;
}

static int mpi_timer_start(cb_backend *b)
{
    mpi_backend *mb = (mpi_backend *)b;
    mb->nmarks = 0;
    mb->timer_started = MPI_Wtime();
    return 0;
}

static int mpi_timer_stop(cb_backend *b, double *seconds)
{
    *seconds = MPI_Wtime() - ((mpi_backend *)b)->timer_started;
    return 0;
}

static int mpi_timer_reserve(cb_backend *b, int n)
{
    mpi_backend *mb = (mpi_backend *)b;
    if (n <= mb->marks_room)
        return 0;
    double *grown = realloc(mb->marks, (size_t)n * sizeof *grown);
    if (grown == NULL)
        return cb_backend_fail(b, "cannot allocate room for %d timestamps", n);
    mb->marks = grown;
    mb->marks_room = n;
    return 0;
}

/* MPI collectives here return when they are complete on this rank, so a
 * timestamp after each iteration is its completion time. */
static int mpi_timer_mark(cb_backend *b)
{
    mpi_backend *mb = (mpi_backend *)b;
    if (mb->nmarks >= mb->marks_room)
        return cb_backend_fail(b, "more timer marks than the %d reserved", mb->marks_room);
    mb->marks[mb->nmarks++] = MPI_Wtime();
    return 0;
}

static int mpi_timer_samples(cb_backend *b, double *seconds, int n)
{
    mpi_backend *mb = (mpi_backend *)b;
    if (n > mb->nmarks)
        return cb_backend_fail(b, "%d timer samples asked for, %d marked", n, mb->nmarks);
    for (int i = 0; i < n; i++)
        seconds[i] = mb->marks[i] - (i == 0 ? mb->timer_started : mb->marks[i - 1]);
    return 0;
}

const cb_backend_ops cb_backend_mpi = {
    .name = "mpi",
    .summary = "host buffers and MPI collectives, timed with MPI_Wtime",
    .usable = mpi_usable,
    .init = mpi_init,
    .fini = mpi_fini,
    .describe = mpi_describe,
    .memory_available = mpi_memory_available,
    .host_accessible = 1,
    .alloc = mpi_alloc,
    .free = mpi_free,
    .upload = mpi_copy,
    .download = mpi_copy,
    .supports = mpi_supports,
    .allreduce = mpi_allreduce,
    .allgather = mpi_allgather,
    .reducescatter = mpi_reducescatter,
    .broadcast = mpi_broadcast,
    .reduce = mpi_reduce,
    .alltoall = mpi_alltoall,
    .gather = mpi_gather,
    .scatter = mpi_scatter,
    .sendrecv = mpi_sendrecv,
    .alltoallv = cb_mpi_alltoallv,
    .avg_premultiplies = 0,
    .wait = mpi_wait,
    .timer_start = mpi_timer_start,
    .timer_stop = mpi_timer_stop,
    .timer_reserve = mpi_timer_reserve,
    .timer_mark = mpi_timer_mark,
    .timer_samples = mpi_timer_samples,
    .copy2d = mpi_copy2d,
    .split = mpi_split,
    .comm_time = cb_mpi_comm_time,
    .barrier = mpi_barrier,
    .reduce_local = mpi_reduce_local,
    .host_scratch = mpi_host_scratch,
    .repeat_check = cb_repeat_check_host,
    .repeat_promise = "MPI recommends one order but does not require it",
};
