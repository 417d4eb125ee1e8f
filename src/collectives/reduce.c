/* Reduce: the root ends with the reduction of every rank's vector; the other
 * ranks' receive buffers are left undefined and are not checked. */
#include "collectives/collective.h"

static int reduce_run(cb_backend *b, const cb_call *call)
{
    return b->ops->coll.reduce(b, call->send, call->recv, call->layout.count, call->dtype,
                          call->redop, call->root);
}

static void reduce_fill(const cb_pattern *pat, int rank, const cb_call *call, void *send)
{
    cb_pattern_fill(pat, rank, send, call->layout.send_count);
}

static size_t reduce_check(const cb_pattern *pat, int rank, const cb_call *call,
                           const void *recv, cb_mismatch *first)
{
    if (rank != call->root)
        return 0;
    return cb_check_reduced(pat, recv, call->layout.count, first);
}

static int reduce_available(const cb_backend_ops *ops)
{
    return ops->coll.reduce != NULL;
}

const cb_collective cb_coll_reduce = {
    .name = "reduce",
    .aliases = "",
    .flags = CB_COLL_REDUCES | CB_COLL_ROOTED,
    .layout = cb_layout_whole,
    .busbw_factor = cb_busbw_one,
    .run = reduce_run,
    .fill_input = reduce_fill,
    .check_output = reduce_check,
    .available = reduce_available,
};
