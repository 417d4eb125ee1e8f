/* Scatter: rank r ends with block r of the root's vector. */
#include "collectives/collective.h"

static int scatter_run(cb_backend *b, const cb_call *call)
{
    return b->ops->coll.scatter(b, call->send, call->recv, call->layout.count, call->dtype,
                           call->root);
}

/* The one block is the root's block `rank`. */
static size_t scatter_check(const cb_pattern *pat, int rank, const cb_call *call,
                            const void *recv, cb_mismatch *first)
{
    cb_block_source src = {call->root, 0, (size_t)rank, 0};
    return cb_check_blocks(pat, recv, 1, call->layout.count, src, first);
}

static int scatter_available(const cb_backend_ops *ops)
{
    return ops->coll.scatter != NULL;
}

const cb_collective cb_coll_scatter = {
    .name = "scatter",
    .aliases = "",
    .flags = CB_COLL_ROOTED | CB_COLL_IMPLS,
    .layout = cb_layout_scattered,
    .busbw_factor = cb_busbw_share,
    .run = scatter_run,
    /* Every rank fills its own values, so data from another root is wrong. */
    .fill_input = cb_fill_blocks,
    .check_output = scatter_check,
    .available = scatter_available,
};
