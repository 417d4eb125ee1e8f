/* Broadcast: every rank ends with the root's vector. */
#include "collective.h"

static int broadcast_layout(size_t bytes, size_t elem_size, int nranks, cb_layout *out)
{
    (void)nranks;
    size_t count = bytes / elem_size;
    if (count == 0)
        return -1;
    out->count = count;
    out->send_count = count;
    out->recv_count = count;
    out->inplace_offset = 0;
    out->inplace_send_stride = 0;
    out->inplace_recv_stride = 0;
    return 0;
}

/* A pipelined broadcast moves the whole vector over every link once. */
static double broadcast_busbw_factor(int nranks)
{
    (void)nranks;
    return 1.0;
}

static int broadcast_run(cb_backend *b, const cb_call *call)
{
    return b->ops->broadcast(b, call->send, call->recv, call->layout.count, call->dtype,
                             call->root);
}

/* Every rank fills its own values, so data from another root is wrong. */
static void broadcast_fill(const cb_pattern *pat, int rank, const cb_call *call, void *send)
{
    cb_pattern_fill_blocks(pat, rank, send, 1, call->layout.count);
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
    return ops->broadcast != NULL;
}

const cb_collective cb_coll_broadcast = {
    .name = "broadcast",
    .aliases = "bcast",
    .flags = CB_COLL_ROOTED,
    .layout = broadcast_layout,
    .busbw_factor = broadcast_busbw_factor,
    .run = broadcast_run,
    .fill_input = broadcast_fill,
    .check_output = broadcast_check,
    .available = broadcast_available,
};
