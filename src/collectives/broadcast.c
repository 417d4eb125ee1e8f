/* Broadcast: every rank ends with the root's vector. */
#include "collectives/collective.h"

static int broadcast_run(cb_backend *b, const cb_call *call)
{
    return b->ops->coll.broadcast(b, call->send, call->recv, call->layout.count, call->dtype,
                             call->root);
}

static size_t broadcast_check(const cb_pattern *pat, int rank, const cb_call *call,
                              const void *recv, cb_mismatch *first)
{
    (void)rank;
    cb_block_source src = {call->root, 0, 0, 0};
    return cb_check_blocks(pat, recv, 1, call->layout.count, src, first);
}

static int broadcast_available(const cb_backend_ops *ops)
{
    return ops->coll.broadcast != NULL;
}

const cb_collective cb_coll_broadcast = {
    .name = "broadcast",
    .aliases = "bcast",
    .flags = CB_COLL_ROOTED,
    .layout = cb_layout_whole,
    .busbw_factor = cb_busbw_one,
    .run = broadcast_run,
    /* Every rank fills its own values, so data from another root is wrong. */
    .fill_input = cb_fill_block,
    .check_output = broadcast_check,
    .available = broadcast_available,
};
