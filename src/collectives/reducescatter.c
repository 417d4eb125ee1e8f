/* Reduce-scatter: rank r ends with block r of the reduction of every rank's
 * vector of n blocks; in column layout, the reduction of column slice r of
 * every rank's matrix, as a rows x width block. */
#include "collectives/collective.h"

static int reducescatter_run(cb_backend *b, const cb_call *call)
{
    const cb_layout *l = &call->layout;
    if (l->rows == 0)
        return b->ops->coll.reducescatter(b, call->send, call->recv, l->count, call->dtype,
                                     call->redop);
    /* Each column slice into a contiguous block of work, then reduce those. */
    if (cb_columns_to_blocks(b, call->work, call->send, l, cb_dtype_info_of(call->dtype)->size,
                             b->nranks) != 0)
        return -1;
    return b->ops->coll.reducescatter(b, call->work, call->recv, l->count, call->dtype, call->redop);
}

static void reducescatter_fill(const cb_pattern *pat, int rank, const cb_call *call, void *send)
{
    cb_pattern_fill(pat, rank, send, call->layout.send_count);
}

static size_t reducescatter_check(const cb_pattern *pat, int rank, const cb_call *call,
                                  const void *recv, cb_mismatch *first)
{
    const cb_layout *l = &call->layout;
    size_t count = l->count;
    if (l->rows == 0)
        return cb_check_reduced_at(pat, recv, (size_t)rank * count, count, first);
    /* Row i of the block is row i of slice `rank` of the n * width wide input. */
    size_t wrong = 0, row_len = (size_t)pat->nranks * l->width;
    const char *bytes = recv;
    size_t esize = cb_dtype_info_of(pat->dtype)->size;
    for (size_t i = 0; i < l->rows; i++) {
        cb_mismatch here;
        size_t n = cb_check_reduced_at(pat, bytes + i * l->width * esize,
                                       i * row_len + (size_t)rank * l->width, l->width, &here);
        if (n > 0 && wrong == 0) {
            *first = here;
            first->index += i * l->width;
        }
        wrong += n;
    }
    return wrong;
}

static int reducescatter_available(const cb_backend_ops *ops)
{
    return ops->coll.reducescatter != NULL;
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
    .column_work = 1,
};
