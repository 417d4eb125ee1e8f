/* Reduce-scatter: rank r ends with block r of the reduction of every rank's
 * vector of n blocks. */
#include "collective.h"

static int reducescatter_run(cb_backend *b, const cb_call *call)
{
    return b->ops->reducescatter(b, call->send, call->recv, call->layout.count, call->dtype,
                                 call->redop);
}

static void reducescatter_fill(const cb_pattern *pat, int rank, const cb_call *call, void *send)
{
    cb_pattern_fill(pat, rank, send, call->layout.send_count);
}

static size_t reducescatter_check(const cb_pattern *pat, int rank, const cb_call *call,
                                  const void *recv, cb_mismatch *first)
{
    size_t count = call->layout.count;
    return cb_check_reduced_at(pat, recv, (size_t)rank * count, count, first);
}

static int reducescatter_available(const cb_backend_ops *ops)
{
    return ops->reducescatter != NULL;
}

const cb_collective cb_coll_reducescatter = {
    .name = "reducescatter",
    .aliases = "reduce_scatter reduce-scatter",
    .flags = CB_COLL_REDUCES,
    .layout = cb_layout_scattered,
    .busbw_factor = cb_busbw_share,
    .run = reducescatter_run,
    .fill_input = reducescatter_fill,
    .check_output = reducescatter_check,
    .available = reducescatter_available,
};
