/*
 * Hypercube: an all-gather by recursive doubling over point-to-point
 * exchanges, as nccl-tests' hypercube_perf measures it. With n a power of
 * two, step k (mask = 2^k) has every rank swap with rank ^ mask the mask
 * blocks it holds so far: those of the ranks that share its bits above k,
 * starting at block rank & ~(mask - 1). After log2(n) steps every rank
 * holds every rank's block, in rank order, as after an all-gather.
 *
 * Byte counting as theirs: a block is size / n rounded down to 16 bytes;
 * the size column is the gathered buffer (n blocks) and count the block.
 * Each rank receives (n - 1) blocks, so bus bandwidth is (n - 1) blocks /
 * time: busbw = algbw x (n - 1) / n, algbw being size / time here as for
 * every collective (nccl-tests' own algbw column is that busbw).
 */
#include "collectives/collective.h"
#include "verify/dtype.h"

/* Their block: size / n elements, rounded down to a multiple of 16 bytes. */
static int hypercube_layout(size_t bytes, size_t elem_size, int nranks, cb_layout *out)
{
    size_t count = bytes / elem_size / (size_t)nranks;
    size_t per16 = elem_size < 16 ? 16 / elem_size : 1;
    count -= count % per16;
    if (count == 0)
        return -1;
    size_t all = count * (size_t)nranks;
    *out = (cb_layout){.count = count,
                       .send_count = count,
                       .recv_count = all,
                       .inplace_send_stride = count};
    return 0;
}

static int hypercube_run(cb_backend *b, const cb_call *call)
{
    int n = b->nranks, rank = b->rank;
    if (n & (n - 1))
        return cb_backend_fail(b, "hypercube needs a power-of-two number of ranks, not %d "
                                  "(as nccl-tests' hypercube_perf)", n);
    size_t count = call->layout.count;
    size_t block = count * cb_dtype_info_of(call->dtype)->size;
    char *recv = call->recv;
    /* Its own block first, unless in place (already there): a swap with
     * itself, which every backend's sendrecv allows. */
    if ((const char *)call->send != recv + (size_t)rank * block &&
        b->ops->coll.sendrecv(b, call->send, recv + (size_t)rank * block, count, call->dtype, rank,
                         rank) != 0)
        return -1;
    for (int mask = 1; mask < n; mask <<= 1) {
        int mine = rank & ~(mask - 1), theirs = mine ^ mask;
        if (b->ops->coll.sendrecv(b, recv + (size_t)mine * block, recv + (size_t)theirs * block,
                             count * (size_t)mask, call->dtype, rank ^ mask, rank ^ mask) != 0)
            return -1;
    }
    return 0;
}

static size_t hypercube_check(const cb_pattern *pat, int rank, const cb_call *call,
                              const void *recv, cb_mismatch *first)
{
    (void)rank;
    return cb_check_gathered(pat, call, recv, first);
}

static int hypercube_available(const cb_backend_ops *ops)
{
    return ops->coll.sendrecv != NULL;
}

const cb_collective cb_coll_hypercube = {
    .name = "hypercube",
    .aliases = "hyper_cube hyper-cube",
    /* Each step reads what the one before received: never in one group;
     * 2^k ranks only, so not in -o all. */
    .flags = CB_COLL_SEQUENTIAL | CB_COLL_BY_NAME,
    .layout = hypercube_layout,
    .busbw_factor = cb_busbw_share,
    .run = hypercube_run,
    .fill_input = cb_fill_block,
    .check_output = hypercube_check,
    .available = hypercube_available,
    .needs = "point-to-point sends and receives (sendrecv)",
};
