/*
 * All-to-all with per-peer counts (mixture-of-experts traffic): rank i sends
 * rank j weight(i, j) x unit elements, the weights coming from the traffic
 * matrix of --a2av-matrix (src/collectives/traffic.h), which every rank computes whole.
 * The size is the busiest rank's traffic: the matrix is scaled by the
 * largest unit for which no rank sends or receives more than the size, so a
 * uniform matrix at size S moves what alltoall moves at S, and the size
 * column (the larger of the most any rank sends and the most any rank
 * receives) is the busiest rank's max(sent, received), as nccl-tests
 * defines alltoallv's bandwidth. The blocks a rank sends and receives differ
 * in size, so there is no in-place form.
 */
#include <stdlib.h>
#include <string.h>

#include "collectives/collective.h"

/* One rank's per-peer counts and offsets, in elements. */
typedef struct a2av_counts {
    size_t *send_counts, *send_offsets, *recv_counts, *recv_offsets;
    size_t sent, received;   /* totals */
} a2av_counts;

/* The counts of rank among nranks into four arrays of nranks in one
 * allocation (free send_counts); -1 when out of memory. */
static int rank_counts(const cb_traffic_spec *t, size_t unit, int nranks, int rank,
                       a2av_counts *c)
{
    size_t n = (size_t)nranks;
    size_t *all = malloc(4 * n * sizeof *all);
    if (all == NULL)
        return -1;
    *c = (a2av_counts){all, all + n, all + 2 * n, all + 3 * n, 0, 0};
    for (int peer = 0; peer < nranks; peer++) {
        c->send_counts[peer] = cb_traffic_weight(t, nranks, rank, peer) * unit;
        c->send_offsets[peer] = c->sent;
        c->sent += c->send_counts[peer];
        c->recv_counts[peer] = cb_traffic_weight(t, nranks, peer, rank) * unit;
        c->recv_offsets[peer] = c->received;
        c->received += c->recv_counts[peer];
    }
    return 0;
}

/* count: the elements of a block of weight 1 (uniform: every block, as
 * alltoall's count); send_count and recv_count: the most any rank sends and
 * receives, which every rank's buffers hold. */
static int alltoallv_layout_traffic(const cb_traffic_spec *t, size_t bytes, size_t elem_size,
                                    int nranks, cb_layout *out)
{
    size_t unit = cb_traffic_unit(t, nranks, bytes / elem_size);
    if (unit == 0)
        return -1;
    uint64_t most_sent = 0, most_received = 0;
    for (int r = 0; r < nranks; r++) {
        uint64_t row = cb_traffic_row_weight(t, nranks, r);
        uint64_t col = cb_traffic_col_weight(t, nranks, r);
        most_sent = row > most_sent ? row : most_sent;
        most_received = col > most_received ? col : most_received;
    }
    *out = (cb_layout){.count = unit, .send_count = (size_t)most_sent * unit,
                       .recv_count = (size_t)most_received * unit, .unit = unit};
    return 0;
}

/* The matrix of a caller that names none (the default of --a2av-matrix). */
static const cb_traffic_spec uniform_traffic = {.kind = CB_TRAFFIC_UNIFORM, .factor = 1,
                                                .hot = 1};

static int alltoallv_layout(size_t bytes, size_t elem_size, int nranks, cb_layout *out)
{
    return alltoallv_layout_traffic(&uniform_traffic, bytes, elem_size, nranks, out);
}

static const cb_traffic_spec *traffic_of(const cb_call *call)
{
    return call->traffic != NULL ? call->traffic : &uniform_traffic;
}

/* The counts are worked out at every launch, inside the timed operation,
 * as a mixture-of-experts layer works out its splits at every step. */
static int alltoallv_run(cb_backend *b, const cb_call *call)
{
    a2av_counts c;
    if (rank_counts(traffic_of(call), call->layout.unit, b->nranks, b->rank, &c) != 0)
        return cb_backend_fail(b, "out of memory for alltoallv's counts of %d ranks",
                               b->nranks);
    int rc = b->ops->coll.alltoallv(b, call->send, c.send_counts, c.send_offsets, call->recv,
                               c.recv_counts, c.recv_offsets, call->dtype);
    free(c.send_counts);
    return rc;
}

/* The block for rank j holds cb_pattern_block(pat, rank, j, k) at its
 * element k: its sender, its receiver and its place in it. The rest of the
 * buffer (a rank sending less than the busiest) is zero. */
static void alltoallv_fill(const cb_pattern *pat, int rank, const cb_call *call, void *send)
{
    const cb_dtype_info *info = cb_dtype_info_of(call->dtype);
    const cb_traffic_spec *t = traffic_of(call);
    size_t at = 0;
    for (int peer = 0; peer < pat->nranks; peer++) {
        size_t count = cb_traffic_weight(t, pat->nranks, rank, peer) * call->layout.unit;
        for (size_t k = 0; k < count; k++)
            info->store(send, at + k, cb_pattern_block(pat, rank, (size_t)peer, k));
        at += count;
    }
    if (at < call->layout.send_count)
        memset((char *)send + at * info->size, 0, (call->layout.send_count - at) * info->size);
}

/* The block from rank j, at its offset: element k of what j filled for
 * this rank. Every received element is checked; an element past this
 * rank's total is nobody's and is not read. */
static size_t alltoallv_check(const cb_pattern *pat, int rank, const cb_call *call,
                              const void *recv, cb_mismatch *first)
{
    const cb_dtype_info *info = cb_dtype_info_of(call->dtype);
    const cb_traffic_spec *t = traffic_of(call);
    size_t wrong = 0, at = 0;
    for (int peer = 0; peer < pat->nranks; peer++) {
        size_t count = cb_traffic_weight(t, pat->nranks, peer, rank) * call->layout.unit;
        cb_block_source src = {peer, 0, (size_t)rank, 0};
        cb_mismatch here;
        size_t bad = cb_check_blocks(pat, (const char *)recv + at * info->size, 1, count, src,
                                     &here);
        if (bad > 0 && wrong == 0) {
            *first = here;
            first->index += at;
        }
        wrong += bad;
        at += count;
    }
    return wrong;
}

static int alltoallv_available(const cb_backend_ops *ops)
{
    return ops->coll.alltoallv != NULL;
}

const cb_collective cb_coll_alltoallv = {
    .name = "alltoallv",
    .aliases = "all_to_allv all-to-allv a2av",
    .flags = CB_COLL_OUT_OF_PLACE,
    .layout = alltoallv_layout,
    .layout_traffic = alltoallv_layout_traffic,
    .busbw_factor = cb_busbw_share,
    .run = alltoallv_run,
    .fill_input = alltoallv_fill,
    .check_output = alltoallv_check,
    .available = alltoallv_available,
};
