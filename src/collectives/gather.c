/* Gather: the root ends with every rank's block, in rank order; the other
 * ranks' receive buffers are not written and are not checked. */
#include "collectives/collective.h"

static int gather_run(cb_backend *b, const cb_call *call)
{
    const cb_layout *l = &call->layout;
    if (l->rows == 0)
        return b->ops->coll.gather(b, call->send, call->recv, l->count, call->dtype, call->root);
    /* Column layout: the root puts each gathered block in its column slice. */
    if (b->ops->coll.gather(b, call->send, call->work, l->count, call->dtype, call->root) != 0)
        return -1;
    if (b->rank != call->root)
        return 0;
    return cb_blocks_to_columns(b, call->recv, call->work, l,
                                cb_dtype_info_of(call->dtype)->size, b->nranks);
}

static size_t gather_check(const cb_pattern *pat, int rank, const cb_call *call,
                           const void *recv, cb_mismatch *first)
{
    return rank == call->root ? cb_check_gathered(pat, call, recv, first) : 0;
}

static int gather_available(const cb_backend_ops *ops)
{
    return ops->coll.gather != NULL;
}

const cb_collective cb_coll_gather = {
    .name = "gather",
    .aliases = "",
    .flags = CB_COLL_ROOTED | CB_COLL_IMPLS,
    .layout = cb_layout_gathered,
    .busbw_factor = cb_busbw_share,
    .run = gather_run,
    .fill_input = cb_fill_block,
    .check_output = gather_check,
    .available = gather_available,
    .column_work = 1,
};
