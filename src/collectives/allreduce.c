/* All-reduce: every rank ends with the reduction of every rank's vector. */
#include "collective.h"

static int allreduce_run(cb_backend *b, const cb_call *call)
{
    return b->ops->allreduce(b, call->send, call->recv, call->layout.count, call->dtype,
                             call->redop);
}

static void allreduce_fill(const cb_pattern *pat, int rank, const cb_call *call, void *send)
{
    cb_pattern_fill(pat, rank, send, call->layout.send_count);
}

static size_t allreduce_check(const cb_pattern *pat, int rank, const cb_call *call,
                              const void *recv, cb_mismatch *first)
{
    (void)rank;
    return cb_check_reduced(pat, recv, call->layout.recv_count, first);
}

const cb_collective cb_coll_allreduce = {
    .name = "allreduce",
    .aliases = "all_reduce all-reduce",
    .flags = CB_COLL_REDUCES,
    .layout = cb_layout_whole,
    .busbw_factor = cb_busbw_allreduce,
    .run = allreduce_run,
    .fill_input = allreduce_fill,
    .check_output = allreduce_check,
};
