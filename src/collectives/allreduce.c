/* All-reduce: every rank ends with the reduction of every rank's vector. */
#include "collectives/collective.h"

static int allreduce_run(cb_backend *b, const cb_call *call)
{
    return b->ops->coll.allreduce(b, call->send, call->recv, call->layout.count, call->dtype,
                             call->redop);
}

const cb_collective cb_coll_allreduce = {
    .name = "allreduce",
    .aliases = "all_reduce all-reduce",
    .flags = CB_COLL_REDUCES,
    .layout = cb_layout_whole,
    .busbw_factor = cb_busbw_allreduce,
    .run = allreduce_run,
    .fill_input = cb_fill_whole,
    .check_output = cb_check_allreduced,
};
