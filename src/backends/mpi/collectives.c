/*
 * The MPI backend's collectives (ops.c has the table): one MPI call each on
 * the backend's communicator, with the local passes of avg and premulsum
 * and the in-place forms NCCL's semantics ask for; alltoallv's counts as
 * MPI's int bytes; ring_allreduce's local passes.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/mpi/mpi_backend.h"

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

int cb_mpi_allreduce(cb_backend *b, const void *send, void *recv, size_t count,
                     cb_dtype dtype, cb_redop redop)
{
    if (check_count(b, count) != 0)
        return -1;
    const void *src = send == recv ? MPI_IN_PLACE : send;
    if (MPI_CALL(b, MPI_Allreduce(src, recv, (int)count, cb_mpi_type_of(b, dtype),
                                  cb_mpi_op_of(b, dtype, redop), cb_mpi_comm(b))) != 0)
        return -1;
    finish_reduction(b, recv, count, dtype, redop);
    return 0;
}

int cb_mpi_allgather(cb_backend *b, const void *send, void *recv, size_t count,
                     cb_dtype dtype)
{
    if (check_count(b, count) != 0)
        return -1;
    int in_place = send == (char *)recv + (size_t)b->rank * count * elem_size(dtype);
    MPI_Datatype type = cb_mpi_type_of(b, dtype);
    return MPI_CALL(b, MPI_Allgather(in_place ? MPI_IN_PLACE : send, (int)count, type, recv,
                                     (int)count, type, cb_mpi_comm(b)));
}

int cb_mpi_reducescatter(cb_backend *b, const void *send, void *recv, size_t count,
                         cb_dtype dtype, cb_redop redop)
{
    if (check_count(b, count) != 0)
        return -1;
    size_t esize = elem_size(dtype);
    int in_place = recv == (const char *)send + (size_t)b->rank * count * esize;
    MPI_Datatype type = cb_mpi_type_of(b, dtype);
    MPI_Op op = cb_mpi_op_of(b, dtype, redop);
    if (in_place) {
        /* MPI leaves an in-place result at the start of the buffer; NCCL's
         * in-place result is the rank's own block, so move it there. */
        if (MPI_CALL(b, MPI_Reduce_scatter_block(MPI_IN_PLACE, (void *)send, (int)count, type,
                                                 op, cb_mpi_comm(b))) != 0)
            return -1;
        if (b->rank != 0)
            memmove(recv, send, count * esize);
    } else if (MPI_CALL(b, MPI_Reduce_scatter_block(send, recv, (int)count, type, op,
                                                    cb_mpi_comm(b))) != 0) {
        return -1;
    }
    finish_reduction(b, recv, count, dtype, redop);
    return 0;
}

int cb_mpi_broadcast(cb_backend *b, const void *send, void *recv, size_t count,
                     cb_dtype dtype, int root)
{
    if (check_count(b, count) != 0)
        return -1;
    /* NCCL's root also receives: copy its input over first (a local pass). */
    if (b->rank == root && send != recv)
        memcpy(recv, send, count * elem_size(dtype));
    return MPI_CALL(b, MPI_Bcast(recv, (int)count, cb_mpi_type_of(b, dtype), root, cb_mpi_comm(b)));
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
    if (MPI_CALL(b, MPI_Comm_split(cb_mpi_comm(b), 0, key, &mb->root_first)) != 0) {
        mb->root_first = MPI_COMM_NULL;
        return -1;
    }
    mb->root_first_of = root;
    return 0;
}

int cb_mpi_reduce(cb_backend *b, const void *send, void *recv, size_t count,
                  cb_dtype dtype, cb_redop redop, int root)
{
    if (check_count(b, count) != 0)
        return -1;
    mpi_backend *mb = (mpi_backend *)b;
    MPI_Comm comm = cb_mpi_comm(b);
    int comm_root = root;
    if (mb->reduce_root_first && root != 0) {
        if (root_first_comm(mb, root) != 0)
            return -1;
        comm = mb->root_first;
        comm_root = 0;
    }
    const void *src = b->rank == root && send == recv ? MPI_IN_PLACE : send;
    if (MPI_CALL(b, MPI_Reduce(src, recv, (int)count, cb_mpi_type_of(b, dtype),
                               cb_mpi_op_of(b, dtype, redop), comm_root, comm)) != 0)
        return -1;
    if (b->rank == root)
        finish_reduction(b, recv, count, dtype, redop);
    return 0;
}

int cb_mpi_alltoall(cb_backend *b, const void *send, void *recv, size_t count,
                    cb_dtype dtype)
{
    if (check_count(b, count) != 0)
        return -1;
    MPI_Datatype type = cb_mpi_type_of(b, dtype);
    return MPI_CALL(b, MPI_Alltoall(send == recv ? MPI_IN_PLACE : send, (int)count, type, recv,
                                    (int)count, type, cb_mpi_comm(b)));
}

int cb_mpi_gather(cb_backend *b, const void *send, void *recv, size_t count,
                  cb_dtype dtype, int root)
{
    if (check_count(b, count) != 0)
        return -1;
    /* Only the root's receive buffer is significant. */
    int in_place = b->rank == root &&
                   send == (char *)recv + (size_t)b->rank * count * elem_size(dtype);
    MPI_Datatype type = cb_mpi_type_of(b, dtype);
    const void *src = in_place ? MPI_IN_PLACE : send;
    return MPI_CALL(b, MPI_Gather(src, (int)count, type, recv, (int)count, type, root, cb_mpi_comm(b)));
}

int cb_mpi_scatter(cb_backend *b, const void *send, void *recv, size_t count,
                   cb_dtype dtype, int root)
{
    if (check_count(b, count) != 0)
        return -1;
    /* Only the root's send buffer is significant. */
    int in_place = b->rank == root &&
                   recv == (const char *)send + (size_t)b->rank * count * elem_size(dtype);
    MPI_Datatype type = cb_mpi_type_of(b, dtype);
    void *dst = in_place ? MPI_IN_PLACE : recv;
    return MPI_CALL(b, MPI_Scatter(send, (int)count, type, dst, (int)count, type, root, cb_mpi_comm(b)));
}

/* The benchmark's point-to-point messages, apart from anything else on comm. */
#define CB_SENDRECV_TAG 0x5e4d

int cb_mpi_sendrecv(cb_backend *b, const void *send, void *recv, size_t count,
                    cb_dtype dtype, int send_peer, int recv_peer)
{
    if (check_count(b, count) != 0)
        return -1;
    MPI_Datatype type = cb_mpi_type_of(b, dtype);
    if (send == recv)
        return MPI_CALL(b, MPI_Sendrecv_replace(recv, (int)count, type, send_peer,
                                                CB_SENDRECV_TAG, recv_peer, CB_SENDRECV_TAG,
                                                cb_mpi_comm(b), MPI_STATUS_IGNORE));
    return MPI_CALL(b, MPI_Sendrecv(send, (int)count, type, send_peer, CB_SENDRECV_TAG, recv,
                                    (int)count, type, recv_peer, CB_SENDRECV_TAG, cb_mpi_comm(b),
                                    MPI_STATUS_IGNORE));
}

int cb_mpi_barrier(cb_backend *b)
{
    return MPI_CALL(b, MPI_Barrier(cb_mpi_comm(b)));
}

/* The local passes of ring_allreduce, on the host with the same operations
 * and local passes as mpi_allreduce. */
int cb_mpi_reduce_local(cb_backend *b, cb_local_stage stage, const void *in, void *inout,
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
        return MPI_CALL(b, MPI_Reduce_local(in, inout, (int)count, cb_mpi_type_of(b, dtype),
                                            cb_mpi_op_of(b, dtype, redop)));
    }
    case CB_LOCAL_FINISH:
        if (redop == CB_AVG)
            divide_elements(inout, count, dtype, b->nranks);
        return 0;
    }
    return cb_backend_fail(b, "unknown local reduction stage %d", (int)stage);
}

/* alltoallv: the elements travel as bytes (nothing is reduced), so every
 * type moves the same way; MPI's counts and displacements are ints.
 * counts and offsets in elements into ints of bytes; -1 past INT_MAX. */
static int to_bytes(const size_t *counts, const size_t *offsets, size_t n, size_t esize,
                    int *byte_counts, int *byte_offsets)
{
    for (size_t j = 0; j < n; j++) {
        if (counts[j] > INT_MAX / esize || offsets[j] > INT_MAX / esize ||
            (counts[j] + offsets[j]) > INT_MAX / esize)
            return -1;
        byte_counts[j] = (int)(counts[j] * esize);
        byte_offsets[j] = (int)(offsets[j] * esize);
    }
    return 0;
}

int cb_mpi_alltoallv(cb_backend *b, const void *send, const size_t *send_counts,
                     const size_t *send_offsets, void *recv, const size_t *recv_counts,
                     const size_t *recv_offsets, cb_dtype dtype)
{
    size_t n = (size_t)b->nranks, esize = cb_dtype_info_of(dtype)->size;
    int *ints = malloc(4 * n * sizeof *ints);
    if (ints == NULL)
        return cb_backend_fail(b, "out of memory for MPI_Alltoallv's counts of %zu ranks", n);
    int rc = 0;
    if (to_bytes(send_counts, send_offsets, n, esize, ints, ints + n) != 0 ||
        to_bytes(recv_counts, recv_offsets, n, esize, ints + 2 * n, ints + 3 * n) != 0)
        rc = cb_backend_fail(b, "alltoallv's buffers exceed MPI's int byte offsets (%d)",
                             INT_MAX);
    if (rc == 0)
        rc = MPI_CALL(b, MPI_Alltoallv(send, ints, ints + n, MPI_BYTE, recv, ints + 2 * n,
                                       ints + 3 * n, MPI_BYTE, cb_mpi_comm(b)));
    free(ints);
    return rc;
}
