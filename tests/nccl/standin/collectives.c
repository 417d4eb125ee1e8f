/*
 * Stand-in collectives beyond a plain all-reduce (see standin.h): every
 * NCCL datatype, avg and premulsum, all-gather, reduce-scatter, broadcast,
 * reduce, grouped sends and receives, and captured device copies. Data moves
 * over the communicator's connections (transport.c); reductions are
 * computed here, in rank order, rounding to the datatype after every step.
 * The narrow float formats use the program's own conversions
 * (src/verify/minifloat.c), which unit_dtype tests on their own.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "verify/minifloat.h"
#include "standin.h"

static const cb_minifloat_format *narrow_format(ncclDataType_t type)
{
    switch ((int)type) {
    case ncclFloat16: return &cb_minifloat_half;
    case 9: return &cb_minifloat_bfloat16;
    case 10: return &cb_minifloat_e4m3;
    case 11: return &cb_minifloat_e5m2;
    default: return NULL;
    }
}

size_t standin_type_size(ncclDataType_t type)
{
    switch ((int)type) {
    case ncclInt8: case ncclUint8: case 10: case 11: return 1;
    case ncclFloat16: case 9: return 2;
    case ncclInt32: case ncclUint32: case ncclFloat32: return 4;
    case ncclInt64: case ncclUint64: case ncclFloat64: return 8;
    default: return 0;
    }
}

static int is_float(ncclDataType_t type)
{
    return type == ncclFloat32 || type == ncclFloat64 || narrow_format(type) != NULL;
}

static int is_signed(ncclDataType_t type)
{
    return type == ncclInt8 || type == ncclInt32 || type == ncclInt64;
}

double standin_load(ncclDataType_t type, const void *buf, size_t i)
{
    const cb_minifloat_format *f = narrow_format(type);
    if (f != NULL)
        return cb_minifloat_decode(f, standin_type_size(type) == 1 ? ((const uint8_t *)buf)[i]
                                                                   : ((const uint16_t *)buf)[i]);
    switch (type) {
    case ncclFloat32: return ((const float *)buf)[i];
    case ncclFloat64: return ((const double *)buf)[i];
    case ncclInt8: return ((const int8_t *)buf)[i];
    case ncclUint8: return ((const uint8_t *)buf)[i];
    case ncclInt32: return ((const int32_t *)buf)[i];
    case ncclUint32: return ((const uint32_t *)buf)[i];
    case ncclInt64: return (double)((const int64_t *)buf)[i];
    default: return (double)((const uint64_t *)buf)[i];
    }
}

static void store_float(ncclDataType_t type, void *buf, size_t i, double value)
{
    const cb_minifloat_format *f = narrow_format(type);
    if (f != NULL && standin_type_size(type) == 1)
        ((uint8_t *)buf)[i] = (uint8_t)cb_minifloat_encode(f, value);
    else if (f != NULL)
        ((uint16_t *)buf)[i] = cb_minifloat_encode(f, value);
    else if (type == ncclFloat32)
        ((float *)buf)[i] = (float)value;
    else
        ((double *)buf)[i] = value;
}

static double round_to(ncclDataType_t type, double value)
{
    unsigned char cell[8];
    store_float(type, cell, 0, value);
    return standin_load(type, cell, 0);
}

/* Integers as 64-bit patterns (sign- or zero-extended), so that arithmetic
 * wraps as on a GPU instead of overflowing. */
static uint64_t load_int(ncclDataType_t type, const void *buf, size_t i)
{
    switch (type) {
    case ncclInt8: return (uint64_t)(int64_t)((const int8_t *)buf)[i];
    case ncclUint8: return ((const uint8_t *)buf)[i];
    case ncclInt32: return (uint64_t)(int64_t)((const int32_t *)buf)[i];
    case ncclUint32: return ((const uint32_t *)buf)[i];
    default: return ((const uint64_t *)buf)[i];
    }
}

static void store_int(ncclDataType_t type, void *buf, size_t i, uint64_t value)
{
    switch (type) {
    case ncclInt8: case ncclUint8: ((uint8_t *)buf)[i] = (uint8_t)value; break;
    case ncclInt32: case ncclUint32: ((uint32_t *)buf)[i] = (uint32_t)value; break;
    default: ((uint64_t *)buf)[i] = value; break;
    }
}

static uint64_t wrap_to(ncclDataType_t type, uint64_t value)
{
    unsigned char cell[8];
    store_int(type, cell, 0, value);
    return load_int(type, cell, 0);
}

/* How NCCL reduces: a base operation, an optional scalar each input is
 * first multiplied by, and an optional divisor of the result. */
typedef struct reduction {
    ncclRedOp_t base;
    int premultiply;
    double scalar;
    int divisor;     /* 0: none */
} reduction;

static ncclResult_t reduction_of(const standin_op *op, reduction *r, const char **what)
{
    int n = op->comm->nranks;
    memset(r, 0, sizeof *r);
    r->base = op->op;
    if (op->op == ncclAvg) {
        r->base = ncclSum;
        if (is_float(op->type)) {
            r->premultiply = 1;
            r->scalar = round_to(op->type, 1.0 / n);
        } else {
            r->divisor = n;
        }
    } else if ((int)op->op >= (int)ncclNumOps) {
        int k = (int)op->op - (int)ncclNumOps - op->comm->serial * STANDIN_MAX_CUSTOM_OPS;
        if (k < 0 || k >= STANDIN_MAX_CUSTOM_OPS) {
            standin_violation("a reduction operator used with another communicator than "
                              "the one that made it");
            *what = "reduction operator of another communicator";
            return ncclInvalidArgument;
        }
        if (!op->comm->custom[k].live) {
            *what = "unknown or destroyed reduction operator";
            return ncclInvalidArgument;
        }
        if (op->comm->custom[k].type != op->type) {
            *what = "reduction operator made for another datatype";
            return ncclInvalidArgument;
        }
        r->base = ncclSum;
        r->premultiply = 1;
        r->scalar = op->comm->custom[k].scalar;
    }
    return ncclSuccess;
}

static double combine_float(ncclRedOp_t base, double a, double b)
{
    switch (base) {
    case ncclProd: return a * b;
    case ncclMin: return a < b ? a : b;
    case ncclMax: return a > b ? a : b;
    default: return a + b;
    }
}

static uint64_t combine_int(ncclDataType_t type, ncclRedOp_t base, uint64_t a, uint64_t b)
{
    int a_less = is_signed(type) ? (int64_t)a < (int64_t)b : a < b;
    switch (base) {
    case ncclProd: return a * b;
    case ncclMin: return a_less ? a : b;
    case ncclMax: return a_less ? b : a;
    default: return a + b;
    }
}

/* out[j] = the reduction over ranks q of element first + j of input q, where
 * the inputs lie one after another, `stride` elements apart. */
static void fold(const standin_op *op, const reduction *r, const unsigned char *inputs,
                 size_t stride, size_t first, size_t count, void *out)
{
    ncclDataType_t type = op->type;
    size_t esize = standin_type_size(type);
    int n = op->comm->nranks;
    /* -R 2: partial results kept in float, rounded to the type on store. */
    ncclDataType_t acc_type = standin_accumulates_in_float(op) ? ncclFloat32 : type;
    for (size_t j = 0; j < count; j++) {
        size_t i = first + j;
        if (is_float(type)) {
            double acc = 0;
            for (int q = 0; q < n; q++) {
                double x = standin_load(type, inputs + (size_t)q * stride * esize, i);
                if (r->premultiply)
                    x = round_to(acc_type, x * r->scalar);
                acc = q == 0 ? x : round_to(acc_type, combine_float(r->base, acc, x));
            }
            store_float(type, out, j, acc);
            continue;
        }
        uint64_t acc = 0;
        for (int q = 0; q < n; q++) {
            uint64_t x = load_int(type, inputs + (size_t)q * stride * esize, i);
            if (r->premultiply)
                x = wrap_to(type, x * (uint64_t)(int64_t)r->scalar);
            acc = q == 0 ? x : wrap_to(type, combine_int(type, r->base, acc, x));
        }
        if (r->divisor)
            acc = is_signed(type) ? (uint64_t)((int64_t)acc / r->divisor)
                                  : acc / (uint64_t)r->divisor;
        store_int(type, out, j, acc);
    }
}

static int too_big(size_t bytes)
{
    return bytes > (size_t)INT_MAX;
}

/* all-reduce, reduce and reduce-scatter: every rank's input, then a fold. */
static ncclResult_t run_reduction(const standin_op *op, const char **what)
{
    reduction r;
    ncclResult_t res = reduction_of(op, &r, what);
    if (res != ncclSuccess)
        return res;
    int n = op->comm->nranks, me = op->comm->rank;
    size_t esize = standin_type_size(op->type);
    size_t input = op->kind == STANDIN_OP_REDUCESCATTER ? op->count * (size_t)n : op->count;
    if (too_big(input * esize * (size_t)n)) {
        *what = "more than INT_MAX bytes";
        return ncclInvalidArgument;
    }
    unsigned char *all = malloc(input * esize * (size_t)n + 1);
    if (all == NULL) {
        *what = "out of memory";
        return ncclSystemError;
    }
    res = standin_net_allgather(op->comm->net, op->send, input * esize, all, what);
    if (res != ncclSuccess) {
        free(all);
        return res;
    }
    if (op->kind == STANDIN_OP_REDUCESCATTER)
        fold(op, &r, all, input, (size_t)me * op->count, op->count, op->recv);
    else if (op->kind == STANDIN_OP_ALLREDUCE || me == op->root)
        fold(op, &r, all, input, 0, op->count, op->recv);
    free(all);
    return ncclSuccess;
}

/* The sends and receives of a group, matched per peer in call order as
 * NCCL's: the sends to each peer go as one message, the receives from each
 * come as one; a send to itself feeds its receives directly. */
static ncclResult_t p2p_exchange(const standin_op *op, unsigned char **out, size_t *out_bytes,
                                 unsigned char **in, size_t *in_bytes, const char **what)
{
    int n = op->comm->nranks, me = op->comm->rank;
    for (size_t k = 0; k < op->np2p; k++) {
        const standin_p2p *p = &op->p2p[k];
        *(p->is_send ? &out_bytes[p->peer] : &in_bytes[p->peer]) +=
            p->count * standin_type_size(p->type);
    }
    if (out_bytes[me] != in_bytes[me]) {
        *what = "the sends of a rank to itself and its receives from itself differ in size";
        return ncclInvalidUsage;
    }
    for (int q = 0; q < n; q++) {
        out[q] = malloc(out_bytes[q] + 1);
        in[q] = q == me ? out[q] : malloc(in_bytes[q] + 1);
        if (out[q] == NULL || in[q] == NULL) {
            *what = "out of memory";
            return ncclSystemError;
        }
    }
    size_t *at = calloc((size_t)n, sizeof *at);
    if (at == NULL) {
        *what = "out of memory";
        return ncclSystemError;
    }
    for (size_t k = 0; k < op->np2p; k++) {
        const standin_p2p *p = &op->p2p[k];
        size_t bytes = p->count * standin_type_size(p->type);
        if (p->is_send) {
            memcpy(out[p->peer] + at[p->peer], p->buf, bytes);
            at[p->peer] += bytes;
        }
    }
    ncclResult_t res = standin_net_exchange(op->comm->net, (const void *const *)out, out_bytes,
                                            (void *const *)in, in_bytes, what);
    memset(at, 0, (size_t)n * sizeof *at);
    for (size_t k = 0; res == ncclSuccess && k < op->np2p; k++) {
        const standin_p2p *p = &op->p2p[k];
        size_t bytes = p->count * standin_type_size(p->type);
        if (!p->is_send) {
            memcpy(p->buf, in[p->peer] + at[p->peer], bytes);
            at[p->peer] += bytes;
        }
    }
    free(at);
    return res;
}

static ncclResult_t run_p2p(const standin_op *op, const char **what)
{
    int n = op->comm->nranks, me = op->comm->rank;
    unsigned char **out = calloc((size_t)n, sizeof *out), **in = calloc((size_t)n, sizeof *in);
    size_t *out_bytes = calloc((size_t)n, sizeof *out_bytes);
    size_t *in_bytes = calloc((size_t)n, sizeof *in_bytes);
    ncclResult_t res = ncclSystemError;
    *what = "out of memory";
    if (out != NULL && in != NULL && out_bytes != NULL && in_bytes != NULL)
        res = p2p_exchange(op, out, out_bytes, in, in_bytes, what);
    for (int q = 0; q < n && out != NULL && in != NULL; q++) {
        free(out[q]);
        if (q != me)
            free(in[q]);
    }
    free(out);
    free(in);
    free(out_bytes);
    free(in_bytes);
    return res;
}

ncclResult_t standin_run_collective(const standin_op *op, const char **what)
{
    if (op->kind == STANDIN_OP_COPY) {
        memmove(op->recv, op->send, op->count);
        return ncclSuccess;
    }
    if (op->kind == STANDIN_OP_COPY2D) {
        for (size_t row = 0; row < op->height; row++)
            memmove((char *)op->recv + row * op->pitch_dst,
                    (const char *)op->send + row * op->pitch_src, op->count);
        return ncclSuccess;
    }
    if (op->kind == STANDIN_OP_MEMSET) {
        memset(op->recv, op->fill, op->count);
        return ncclSuccess;
    }
    if (op->kind == STANDIN_OP_KERNEL)
        return standin_kernel_replay(op);
    if (op->kind == STANDIN_OP_P2P)
        return run_p2p(op, what);
    size_t esize = standin_type_size(op->type);
    if (esize == 0) {
        *what = "datatype not modelled by the stand-in";
        return ncclInvalidArgument;
    }
    int n = op->comm->nranks, me = op->comm->rank;
    size_t bytes = op->count * esize;
    switch (op->kind) {
    case STANDIN_OP_ALLGATHER: {
        if (too_big(bytes)) {
            *what = "more than INT_MAX bytes";
            return ncclInvalidArgument;
        }
        (void)me;
        return standin_net_allgather(op->comm->net, op->send, bytes, op->recv, what);
    }
    case STANDIN_OP_BROADCAST:
        if (too_big(bytes) || op->root < 0 || op->root >= n) {
            *what = "bad count or root";
            return ncclInvalidArgument;
        }
        if (me == op->root && op->send != op->recv)
            memmove(op->recv, op->send, bytes);
        return standin_net_broadcast(op->comm->net, op->root, op->recv, bytes, what);
    case STANDIN_OP_REDUCE:
        if (op->root < 0 || op->root >= n) {
            *what = "bad root";
            return ncclInvalidArgument;
        }
        return run_reduction(op, what);
    default:
        return run_reduction(op, what);
    }
}

ncclResult_t standin_check_args(const standin_op *op, const char **what)
{
    *what = "datatype not modelled by the stand-in";
    for (size_t k = 0; k < op->np2p; k++) {
        if (standin_type_size(op->p2p[k].type) == 0)
            return ncclInvalidArgument;
        if (op->p2p[k].peer < 0 || op->p2p[k].peer >= op->comm->nranks) {
            *what = "peer out of range";
            return ncclInvalidArgument;
        }
    }
    if (op->kind == STANDIN_OP_P2P)
        return ncclSuccess;
    if (standin_type_size(op->type) == 0)
        return ncclInvalidArgument;
    if ((op->kind == STANDIN_OP_BROADCAST || op->kind == STANDIN_OP_REDUCE) &&
        (op->root < 0 || op->root >= op->comm->nranks)) {
        *what = "root out of range";
        return ncclInvalidArgument;
    }
    reduction r;
    if (op->kind == STANDIN_OP_ALLREDUCE || op->kind == STANDIN_OP_REDUCE ||
        op->kind == STANDIN_OP_REDUCESCATTER)
        return reduction_of(op, &r, what);
    return ncclSuccess;
}
