/* All-gather: every rank ends with every rank's block, in rank order. */
#include "collective.h"

static int allgather_run(cb_backend *b, const cb_call *call)
{
    return b->ops->allgather(b, call->send, call->recv, call->layout.count, call->dtype);
}

static void allgather_fill(const cb_pattern *pat, int rank, const cb_call *call, void *send)
{
    cb_pattern_fill_blocks(pat, rank, send, 1, call->layout.count);
}

/* Block k is rank k's block 0. */
static size_t allgather_check(const cb_pattern *pat, int rank, const cb_call *call,
                              const void *recv, cb_mismatch *first)
{
    (void)rank;
    cb_block_source src = {0, 1, 0, 0};
    return cb_check_blocks(pat, recv, (size_t)pat->nranks, call->layout.count, src, first);
}

static int allgather_available(const cb_backend_ops *ops)
{
    return ops->allgather != NULL;
}

const cb_collective cb_coll_allgather = {
    .name = "allgather",
    .aliases = "all_gather all-gather",
    .flags = 0,
    .layout = cb_layout_gathered,
    .busbw_factor = cb_busbw_share,
    .run = allgather_run,
    .fill_input = allgather_fill,
    .check_output = allgather_check,
    .available = allgather_available,
};
