/*
 * Ring all-reduce built from the backend's primitives: n - 1 steps of
 * reduce-scatter, then n - 1 steps of all-gather, each step one sendrecv to
 * rank + 1 from rank - 1, with the reduction done locally by the backend
 * (reduce_local) where the data lives. The result is the all-reduce's, so it
 * is checked and sized like allreduce and reported beside it.
 *
 * The data is cut into n chunks of m = ceil(count / n) elements. When count
 * is a multiple of n the ring works in recv itself; otherwise in a padded
 * host copy of n * m elements (the backend's host scratch), and the copies in
 * and out are part of the timed operation.
 */
#include <string.h>

#include "collectives/collective.h"

static size_t chunk_of(int rank, int step, int n)
{
    return (size_t)(((rank - step) % n + n) % n);
}

static int ring_run(cb_backend *b, const cb_call *call)
{
    const cb_backend_ops *ops = b->ops;
    int n = b->nranks, r = b->rank;
    size_t count = call->layout.count;
    size_t esize = cb_dtype_info_of(call->dtype)->size;
    size_t m = (count + (size_t)n - 1) / (size_t)n;
    int padded = count % (size_t)n != 0;
    char *tmp = ops->host_scratch(b, (padded ? (size_t)n + 1 : 1) * m * esize);
    if (tmp == NULL)
        return -1;
    char *work = call->recv;
    if (padded) {
        work = tmp + m * esize;
        /* Padding takes part in the ring but never reaches recv. */
        memset(work + count * esize, 0, ((size_t)n * m - count) * esize);
    }
    if (ops->reduce_local(b, CB_LOCAL_PREPARE, call->send, work, count, call->dtype,
                          call->redop) != 0)
        return -1;
    int next = (r + 1) % n, prev = (r + n - 1) % n;
    size_t chunk_bytes = m * esize;
    /* Reduce-scatter: after step s, chunk r - s - 1 holds s + 2 ranks' data;
     * at the end rank r owns the whole reduction of chunk r + 1. */
    for (int s = 0; s < n - 1; s++) {
        char *out = work + chunk_of(r, s, n) * chunk_bytes;
        char *acc = work + chunk_of(r, s + 1, n) * chunk_bytes;
        if (ops->coll.sendrecv(b, out, tmp, m, call->dtype, next, prev) != 0 ||
            ops->reduce_local(b, CB_LOCAL_COMBINE, tmp, acc, m, call->dtype, call->redop) != 0)
            return -1;
    }
    char *owned = work + chunk_of(r, -1, n) * chunk_bytes;
    if (ops->reduce_local(b, CB_LOCAL_FINISH, owned, owned, m, call->dtype, call->redop) != 0)
        return -1;
    /* All-gather: pass the finished chunks on around the ring. */
    for (int s = 0; s < n - 1; s++) {
        char *out = work + chunk_of(r, s - 1, n) * chunk_bytes;
        char *in = work + chunk_of(r, s, n) * chunk_bytes;
        if (ops->coll.sendrecv(b, out, tmp, m, call->dtype, next, prev) != 0)
            return -1;
        memcpy(in, tmp, chunk_bytes);
    }
    if (padded)
        memcpy(call->recv, work, count * esize);
    return 0;
}

/* The local reduction runs on the host, so the buffers must be there. */
static int ring_available(const cb_backend_ops *ops)
{
    return ops->mem.host_accessible && ops->coll.sendrecv != NULL && ops->reduce_local != NULL &&
           ops->host_scratch != NULL;
}

const cb_collective cb_coll_ring_allreduce = {
    .name = "ring_allreduce",
    .aliases = "ring-allreduce ringallreduce",
    .flags = CB_COLL_REDUCES,
    .layout = cb_layout_whole,
    .busbw_factor = cb_busbw_allreduce,
    .run = ring_run,
    .fill_input = cb_fill_whole,
    .check_output = cb_check_allreduced,
    .available = ring_available,
    .needs = "a device reduction kernel (its local reduction runs where the data lives; "
             "only host buffers have one)",
};
