/* Barrier: every rank waits until all have entered. It moves no data, so
 * it has latency only: bandwidths are 0 (busbw factor 0) and nothing is
 * verified. */
#include "collectives/collective.h"

static int barrier_layout(size_t bytes, size_t elem_size, int nranks, cb_layout *out)
{
    (void)bytes;
    (void)elem_size;
    (void)nranks;
    out->count = 0;
    out->send_count = 0;
    out->recv_count = 0;
    out->inplace_offset = 0;
    out->inplace_send_stride = 0;
    out->inplace_recv_stride = 0;
    return 0;
}

static double barrier_busbw_factor(int nranks)
{
    (void)nranks;
    return 0.0;
}

static int barrier_run(cb_backend *b, const cb_call *call)
{
    (void)call;
    return b->ops->coll.barrier(b);
}

static int barrier_available(const cb_backend_ops *ops)
{
    return ops->coll.barrier != NULL;
}

const cb_collective cb_coll_barrier = {
    .name = "barrier",
    .aliases = "",
    .flags = CB_COLL_NO_DATA,
    .layout = barrier_layout,
    .busbw_factor = barrier_busbw_factor,
    .run = barrier_run,
    .fill_input = cb_fill_nothing,
    .check_output = cb_check_nothing,
    .available = barrier_available,
};
