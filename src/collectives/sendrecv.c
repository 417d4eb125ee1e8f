/* Send/receive in a ring: each rank sends its vector to rank + 1 and
 * receives rank - 1's (modulo n; with one rank, to and from itself). */
#include "collectives/collective.h"

static int sendrecv_run(cb_backend *b, const cb_call *call)
{
    int n = b->nranks;
    return b->ops->coll.sendrecv(b, call->send, call->recv, call->layout.count, call->dtype,
                            (b->rank + 1) % n, (b->rank + n - 1) % n);
}

static size_t sendrecv_check(const cb_pattern *pat, int rank, const cb_call *call,
                             const void *recv, cb_mismatch *first)
{
    int n = pat->nranks;
    cb_block_source src = {(rank + n - 1) % n, 0, 0, 0};
    return cb_check_blocks(pat, recv, 1, call->layout.count, src, first);
}

static int sendrecv_available(const cb_backend_ops *ops)
{
    return ops->coll.sendrecv != NULL;
}

const cb_collective cb_coll_sendrecv = {
    .name = "sendrecv",
    .aliases = "send_recv send-recv",
    .flags = 0,
    .layout = cb_layout_whole,
    .busbw_factor = cb_busbw_one,
    .run = sendrecv_run,
    .fill_input = cb_fill_block,
    .check_output = sendrecv_check,
    .available = sendrecv_available,
};
