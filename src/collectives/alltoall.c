/* All-to-all: block j of rank i's vector goes to block i of rank j. */
#include "collective.h"

/* size = the whole buffer (send and receive are the same size); each pair of
 * ranks exchanges size / n, rounded down to whole elements. */
static int alltoall_layout(size_t bytes, size_t elem_size, int nranks, cb_layout *out)
{
    size_t count = bytes / elem_size / (size_t)nranks;
    if (count == 0)
        return -1;
    out->count = count;
    out->send_count = count * (size_t)nranks;
    out->recv_count = count * (size_t)nranks;
    out->inplace_offset = 0;
    out->inplace_send_stride = 0;
    out->inplace_recv_stride = 0;
    return 0;
}

static int alltoall_run(cb_backend *b, const cb_call *call)
{
    return b->ops->alltoall(b, call->send, call->recv, call->layout.count, call->dtype);
}

static void alltoall_fill(const cb_pattern *pat, int rank, const cb_call *call, void *send)
{
    cb_pattern_fill_blocks(pat, rank, send, (size_t)pat->nranks, call->layout.count);
}

/* Block k comes from rank k's block `rank`. */
static size_t alltoall_check(const cb_pattern *pat, int rank, const cb_call *call,
                             const void *recv, cb_mismatch *first)
{
    cb_block_source src = {0, 1, (size_t)rank, 0};
    return cb_check_blocks(pat, recv, (size_t)pat->nranks, call->layout.count, src, first);
}

static int alltoall_available(const cb_backend_ops *ops)
{
    return ops->alltoall != NULL;
}

const cb_collective cb_coll_alltoall = {
    .name = "alltoall",
    .aliases = "all_to_all all-to-all",
    .flags = 0,
    .layout = alltoall_layout,
    .busbw_factor = cb_busbw_share,
    .run = alltoall_run,
    .fill_input = alltoall_fill,
    .check_output = alltoall_check,
    .available = alltoall_available,
};
