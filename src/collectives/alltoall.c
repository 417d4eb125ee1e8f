/* All-to-all: block j of rank i's vector goes to block i of rank j; in
 * column layout, column slice j of rank i's matrix goes to column slice i of
 * rank j's. */
#include "collectives/collective.h"

/* size = the whole buffer (send and receive are the same size); each pair of
 * ranks exchanges size / n, rounded down to whole elements. */
static int alltoall_layout(size_t bytes, size_t elem_size, int nranks, cb_layout *out)
{
    size_t count = bytes / elem_size / (size_t)nranks;
    if (count == 0)
        return -1;
    *out = (cb_layout){.count = count, .send_count = count * (size_t)nranks,
                       .recv_count = count * (size_t)nranks};
    return 0;
}

static int alltoall_run(cb_backend *b, const cb_call *call)
{
    const cb_layout *l = &call->layout;
    if (l->rows == 0)
        return b->ops->coll.alltoall(b, call->send, call->recv, l->count, call->dtype);
    /* Slices to blocks in the first half of work, exchange into the second
     * half, blocks back to slices in recv. */
    size_t esize = cb_dtype_info_of(call->dtype)->size;
    char *packed = call->work, *exchanged = packed + (size_t)b->nranks * l->count * esize;
    if (cb_columns_to_blocks(b, packed, call->send, l, esize, b->nranks) != 0 ||
        b->ops->coll.alltoall(b, packed, exchanged, l->count, call->dtype) != 0)
        return -1;
    return cb_blocks_to_columns(b, call->recv, exchanged, l, esize, b->nranks);
}

/* Block k comes from rank k's block `rank`. */
static size_t alltoall_check(const cb_pattern *pat, int rank, const cb_call *call,
                             const void *recv, cb_mismatch *first)
{
    const cb_layout *l = &call->layout;
    if (l->rows != 0) {
        /* Slice k, row i: row i of slice `rank` of rank k's n * width wide
         * matrix, whose element x is element x % count of its block x / count. */
        cb_column_source cols = {0, 1, (size_t)rank * l->width, (size_t)pat->nranks * l->width,
                                 l->count};
        return cb_check_columns(pat, recv, l, (size_t)pat->nranks, cols, first);
    }
    cb_block_source src = {0, 1, (size_t)rank, 0};
    return cb_check_blocks(pat, recv, (size_t)pat->nranks, l->count, src, first);
}

static int alltoall_available(const cb_backend_ops *ops)
{
    return ops->coll.alltoall != NULL;
}

const cb_collective cb_coll_alltoall = {
    .name = "alltoall",
    .aliases = "all_to_all all-to-all",
    .flags = CB_COLL_IMPLS,
    .layout = alltoall_layout,
    .busbw_factor = cb_busbw_share,
    .run = alltoall_run,
    .fill_input = cb_fill_blocks,
    .check_output = alltoall_check,
    .available = alltoall_available,
    .column_work = 2,
};
