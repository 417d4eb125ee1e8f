/*
 * The NCCL backend's collectives made of point-to-point sends and receives
 * (see ops.c): alltoall, gather, scatter and sendrecv, each one NCCL group,
 * and the scratch buffer that in-place alltoall and sendrecv send from.
 */
#include <stdlib.h>

#include "nccl_backend.h"
#include "common/parse.h"

/* The point-to-point collectives: sends and receives of one operation in one
 * group, nested inside the engine's group for -m. */
static int p2p_send(nccl_backend *nb, const void *buf, size_t count, ncclDataType_t type,
                    int peer)
{
    return NCCL_CALL(&nb->base, nb->comm,
                     ncclSend(buf, count, type, peer, nb->comm, nb->stream));
}

static int p2p_recv(nccl_backend *nb, void *buf, size_t count, ncclDataType_t type, int peer)
{
    return NCCL_CALL(&nb->base, nb->comm,
                     ncclRecv(buf, count, type, peer, nb->comm, nb->stream));
}

static int group_start(nccl_backend *nb)
{
    return NCCL_CALL(&nb->base, nb->comm, ncclGroupStart());
}

/* End a started group. After a failed call inside it, NCCL drops the
 * group at its end (the peers would otherwise match a partial group
 * against whole ones); the communicators are then aborted, outside every
 * group (cb_nccl_fail_in_group). */
static int group_end(nccl_backend *nb, int rc)
{
    if (rc != 0) {
        cb_nccl_fail_in_group(nb, 1);
        return rc;
    }
    return NCCL_CALL(&nb->base, nb->comm, ncclGroupEnd());
}

/* The scratch buffer of in-place alltoall and sendrecv, made once. */
int cb_nccl_ensure_scratch(nccl_backend *nb)
{
    if (nb->scratch != NULL)
        return 0;
    size_t bytes = CB_NCCL_SCRATCH_BYTES;
    uint64_t wanted = 0;
    const char *text = getenv(CB_NCCL_SCRATCH_ENV);
    if (text != NULL && cb_parse_bytes(text, &wanted) == 0 && wanted > 0)
        bytes = (size_t)wanted;
    if (cb_nccl_mem_alloc(nb, bytes, &nb->scratch) != 0)
        return -1;
    nb->scratch_bytes = bytes;
    return 0;
}

static int copy_on_stream(nccl_backend *nb, void *dst, const void *src, size_t bytes)
{
    return CUDA_CALL(&nb->base,
                     cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, nb->stream));
}

/* In-place alltoall and sendrecv copy to the scratch buffer, then send
 * from it. Inside the engine's group (-m) NCCL would run every send at the
 * outermost ncclGroupEnd, after all the copies, so later copies would
 * overwrite what earlier sends had yet to read: the engine's group is
 * closed for the operation (what was grouped before it runs) and opened
 * again after it. These operations are therefore not aggregated by -m. */
static int leave_outer_group(nccl_backend *nb, int *left)
{
    *left = nb->outer_group;
    if (!nb->outer_group)
        return 0;
    nb->outer_group = 0;
    return NCCL_CALL(&nb->base, nb->comm, ncclGroupEnd());
}

static int rejoin_outer_group(nccl_backend *nb, int left, int rc)
{
    if (!left || rc != 0)   /* after a failure the group stays closed */
        return rc;
    if (NCCL_CALL(&nb->base, nb->comm, ncclGroupStart()) != 0)
        return -1;
    nb->outer_group = 1;
    return rc;
}

/* In-place alltoall: in rounds of as many elements per peer as the scratch
 * buffer holds, copy that part of every block to the scratch buffer (on the
 * stream, inside the timed operation), then send it from there while the
 * receives land in place. */
static int alltoall_rounds(nccl_backend *nb, void *buf, size_t count, size_t esize,
                           ncclDataType_t type)
{
    cb_backend *b = &nb->base;
    size_t n = (size_t)b->nranks;
    if (cb_nccl_ensure_scratch(nb) != 0)
        return -1;
    size_t per_peer = nb->scratch_bytes / (n * esize);
    if (per_peer == 0)
        return cb_backend_fail(b, "the %zu-byte scratch buffer holds less than one element "
                               "per rank", nb->scratch_bytes);
    char *scratch = nb->scratch, *data = buf;
    for (size_t first = 0; first < count; first += per_peer) {
        size_t m = count - first < per_peer ? count - first : per_peer;
        int rc = 0;
        if (m == count)
            rc = copy_on_stream(nb, scratch, data, n * count * esize);
        for (size_t peer = 0; peer < n && rc == 0 && m < count; peer++)
            rc = copy_on_stream(nb, scratch + peer * m * esize,
                                data + (peer * count + first) * esize, m * esize);
        if (rc != 0)
            return -1;
        if (m == count && nb->impl == CB_IMPL_NATIVE) {   /* --nccl-impl: see nccl/native.c */
            if (cb_nccl_native_alltoall(nb, scratch, data, count, type) != 0)
                return -1;
            continue;
        }
        if (group_start(nb) != 0)
            return -1;
        for (size_t peer = 0; peer < n && rc == 0; peer++) {
            rc = p2p_send(nb, scratch + peer * m * esize, m, type, (int)peer);
            if (rc == 0)
                rc = p2p_recv(nb, data + (peer * count + first) * esize, m, type, (int)peer);
        }
        if (group_end(nb, rc) != 0)
            return -1;
    }
    return 0;
}

int cb_nccl_alltoall(cb_backend *b, const void *send, void *recv, size_t count, cb_dtype dtype)
{
    nccl_backend *nb = (nccl_backend *)b;
    ncclDataType_t type;
    if (cb_nccl_type(b, dtype, &type) != 0)
        return -1;
    size_t esize = cb_dtype_info_of(dtype)->size, block = count * esize;
    if (send == recv) {
        int left = 0;
        if (leave_outer_group(nb, &left) != 0)
            return -1;
        return rejoin_outer_group(nb, left, alltoall_rounds(nb, recv, count, esize, type));
    }
    if (group_start(nb) != 0)
        return -1;
    int rc = 0;
    for (int peer = 0; peer < b->nranks && rc == 0; peer++) {
        rc = p2p_send(nb, (const char *)send + (size_t)peer * block, count, type, peer);
        if (rc == 0)
            rc = p2p_recv(nb, (char *)recv + (size_t)peer * block, count, type, peer);
    }
    return group_end(nb, rc);
}

/* Gather and scatter: the root trades one block with every rank (its own
 * block with itself, a send then the receive), every other rank its one
 * block with the root. Gathering, blocks of recv fill from each rank's
 * send; scattering, blocks of send go to each rank's recv. In place the
 * root's own block is already where it belongs. */
static int rooted_blocks(cb_backend *b, const void *send, void *recv, size_t count,
                         cb_dtype dtype, int root, int gathering)
{
    nccl_backend *nb = (nccl_backend *)b;
    ncclDataType_t type;
    if (cb_nccl_type(b, dtype, &type) != 0)
        return -1;
    size_t block = count * cb_dtype_info_of(dtype)->size;
    if (group_start(nb) != 0)
        return -1;
    if (b->rank != root)
        return group_end(nb, gathering ? p2p_send(nb, send, count, type, root)
                                       : p2p_recv(nb, recv, count, type, root));
    int rc = 0;
    for (int peer = 0; peer < b->nranks && rc == 0; peer++) {
        size_t at = (size_t)peer * block;
        const void *from = gathering ? send : (const char *)send + at;
        void *into = gathering ? (char *)recv + at : recv;
        if (peer != root)
            rc = gathering ? p2p_recv(nb, into, count, type, peer)
                           : p2p_send(nb, from, count, type, peer);
        else if (from != (const void *)into) {
            rc = p2p_send(nb, from, count, type, root);
            if (rc == 0)
                rc = p2p_recv(nb, into, count, type, root);
        }
    }
    return group_end(nb, rc);
}

int cb_nccl_gather(cb_backend *b, const void *send, void *recv, size_t count, cb_dtype dtype,
                   int root)
{
    return rooted_blocks(b, send, recv, count, dtype, root, 1);
}

int cb_nccl_scatter(cb_backend *b, const void *send, void *recv, size_t count, cb_dtype dtype,
                    int root)
{
    return rooted_blocks(b, send, recv, count, dtype, root, 0);
}

/* In-place sendrecv through the scratch buffer, in rounds, as alltoall. */
static int sendrecv_rounds(nccl_backend *nb, void *recv, size_t count, cb_dtype dtype,
                           ncclDataType_t type, int send_peer, int recv_peer)
{
    size_t esize = cb_dtype_info_of(dtype)->size;
    if (cb_nccl_ensure_scratch(nb) != 0)
        return -1;
    size_t per_round = nb->scratch_bytes / esize;
    char *data = recv;
    for (size_t first = 0; first < count; first += per_round) {
        size_t m = count - first < per_round ? count - first : per_round;
        if (copy_on_stream(nb, nb->scratch, data + first * esize, m * esize) != 0 ||
            group_start(nb) != 0)
            return -1;
        int rc = p2p_send(nb, nb->scratch, m, type, send_peer);
        if (rc == 0)
            rc = p2p_recv(nb, data + first * esize, m, type, recv_peer);
        if (group_end(nb, rc) != 0)
            return -1;
    }
    return 0;
}

int cb_nccl_sendrecv(cb_backend *b, const void *send, void *recv, size_t count, cb_dtype dtype,
                     int send_peer, int recv_peer)
{
    nccl_backend *nb = (nccl_backend *)b;
    ncclDataType_t type;
    if (cb_nccl_type(b, dtype, &type) != 0)
        return -1;
    if (send != recv) {
        if (group_start(nb) != 0)
            return -1;
        int rc = p2p_send(nb, send, count, type, send_peer);
        if (rc == 0)
            rc = p2p_recv(nb, recv, count, type, recv_peer);
        return group_end(nb, rc);
    }
    /* In place: through the scratch buffer, in rounds, as alltoall. */
    int left = 0;
    if (leave_outer_group(nb, &left) != 0)
        return -1;
    return rejoin_outer_group(nb, left, sendrecv_rounds(nb, recv, count, dtype, type, send_peer,
                                                        recv_peer));
}
