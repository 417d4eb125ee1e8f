/*
 * The NCCL backend's alltoallv (see ops.c): one NCCL group of a send and a
 * receive per peer, with the per-peer counts and offsets, nested inside the
 * engine's group for -m. Out of place only. A zero count on either side is
 * left out: both ends compute the same matrix, so each end leaves out the
 * same pair, and no send waits for a receive that never comes.
 */
#include "nccl_backend.h"

int cb_nccl_alltoallv(cb_backend *b, const void *send, const size_t *send_counts,
                      const size_t *send_offsets, void *recv, const size_t *recv_counts,
                      const size_t *recv_offsets, cb_dtype dtype)
{
    nccl_backend *nb = (nccl_backend *)b;
    ncclDataType_t type;
    if (cb_nccl_type(b, dtype, &type) != 0)
        return -1;
    size_t esize = cb_dtype_info_of(dtype)->size;
    if (NCCL_CALL(b, nb->comm, ncclGroupStart()) != 0)
        return -1;
    int rc = 0;
    for (int peer = 0; peer < b->nranks && rc == 0; peer++) {
        if (send_counts[peer] > 0)
            rc = NCCL_CALL(b, nb->comm,
                           ncclSend((const char *)send + send_offsets[peer] * esize,
                                    send_counts[peer], type, peer, nb->comm, nb->stream));
        if (rc == 0 && recv_counts[peer] > 0)
            rc = NCCL_CALL(b, nb->comm,
                           ncclRecv((char *)recv + recv_offsets[peer] * esize,
                                    recv_counts[peer], type, peer, nb->comm, nb->stream));
    }
    /* After a failed call inside the group: end it (NCCL drops it) and
     * abort, as nccl/p2p.c does. */
    if (rc != 0) {
        cb_nccl_fail_in_group(nb, 1);
        return rc;
    }
    return NCCL_CALL(b, nb->comm, ncclGroupEnd());
}
