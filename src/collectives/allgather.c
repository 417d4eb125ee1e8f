/* All-gather: every rank ends with every rank's block, in rank order; in
 * column layout, every rank's block as column slice k of the matrix. */
#include "collectives/collective.h"

static int allgather_run(cb_backend *b, const cb_call *call)
{
    const cb_layout *l = &call->layout;
    if (l->rows == 0)
        return b->ops->coll.allgather(b, call->send, call->recv, l->count, call->dtype);
    /* Gathered blocks in work, then each into its column slice. */
    if (b->ops->coll.allgather(b, call->send, call->work, l->count, call->dtype) != 0)
        return -1;
    return cb_blocks_to_columns(b, call->recv, call->work, l,
                                cb_dtype_info_of(call->dtype)->size, b->nranks);
}

static size_t allgather_check(const cb_pattern *pat, int rank, const cb_call *call,
                              const void *recv, cb_mismatch *first)
{
    (void)rank;
    return cb_check_gathered(pat, call, recv, first);
}

static int allgather_available(const cb_backend_ops *ops)
{
    return ops->coll.allgather != NULL;
}

const cb_collective cb_coll_allgather = {
    .name = "allgather",
    .aliases = "all_gather all-gather",
    .flags = 0,
    .layout = cb_layout_gathered,
    .busbw_factor = cb_busbw_share,
    .run = allgather_run,
    .fill_input = cb_fill_block,
    .check_output = allgather_check,
    .available = allgather_available,
    .column_work = 1,
};
