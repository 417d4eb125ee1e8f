/*
 * The fault layer (test only): backends that wrap another backend and inject
 * one fault into every collective it runs, so that the tests can prove that
 * verification catches each class of error. "faulty-mpi" wraps the MPI
 * backend, "faulty-nccl" the NCCL backend (in make check: on the CPU
 * stand-in). They are linked only into tests/nccl-collbench-faulty, which
 * adds them to the backend table through cb_backend_test_list
 * (src/backends/registry.c); nccl-collbench has neither them nor any test
 * hook.
 *
 * NCCL_COLLBENCH_TEST_FAULT picks the fault (K: a rank of MPI_COMM_WORLD,
 * also under --split; A, B and D: ranks of the communicator measured;
 * element counts and offsets OFF, A, B, LEN, IDX, COUNT):
 *   missing:K        rank K's input is zeros (sum's identity) when the
 *                    operation starts: its contribution is missing
 *   dup:A:B          rank B's input is a copy of rank A's: A's contribution
 *                    counts twice and B's not at all
 *   bump:K[:D]       rank K's input elements are D (default 1) larger: a sum
 *                    off by D, e.g. an integer average's
 *   swap:A:B         the blocks of ranks A and B trade places: gathered output
 *                    blocks (allgather, gather, alltoall; alltoallv: as many
 *                    elements as the smaller holds), scattered input
 *                    blocks (scatter, reducescatter), sendrecv outputs
 *   shift:K[:OFF]    rank K's output moves up OFF (default 1) elements
 *   chunks:K:A:B:LEN rank K's output: the LEN elements at A and the LEN at B
 *                    trade places (when both fit and do not overlap)
 *   sign:K[:IDX]     rank K's output: the sign of element IDX flips; without
 *                    IDX, every zero of a floating-point type becomes -0
 *   corrupt:K:IDX    rank K's output element IDX becomes 1 (2 if it was 1)
 *   stale:K          rank K's output is never written, so it keeps whatever
 *                    an earlier size, placement or pass left there
 *   root:D           rooted collectives run with root (root + D) mod n
 *   skip             no rank runs the operation at all
 *   hang:K:COUNT     rank K stops making progress, as a hung rank would, in
 *                    its first launch of COUNT output elements or more
 *   stop:K:COUNT     rank K stops itself (SIGSTOP: every thread, so it
 *                    answers nothing) in the same launch as hang's
 *   alloc:K          rank K's buffer allocations fail
 *   slow:A:B:MS      world ranks A to B (a host's ranks) sleep MS ms before
 *                    every launch: a slow host
 *   slowlink:A:B:W:MS a sendrecv between world ranks A.. and B.. (W each,
 *                    two hosts' ranks) sleeps MS ms at both ends: a slow link
 *   nth:K:N          rank K's Nth launch (from 1, counting every collective
 *                    it runs: warmup, timed and check launches alike) gets its
 *                    output element 0 changed as corrupt's: corruption that
 *                    strikes one launch in many (what -B catches)
 *   avgsum:D         an integer average's reduced sum is D larger (D may be
 *                    negative) before the division, on every rank holding a
 *                    result: as a transport corrupting the sum would leave it
 *                    (the backend's reduction runs as a sum, the layer adds D
 *                    and divides, truncating toward zero; ring_allreduce's
 *                    last local step gets D added before it divides)
 * "timed:" before a fault confines it to the timed spans (the engine's span
 * hook, and the scan's timer_start to timer_stop), so that only
 * --check-timed can see it;
 * "untimed:" to the launches outside them (warmup and check launches), so
 * that the timed launches leave correct results behind, e.g. untimed:skip:
 * check launches that write nothing.
 * A fault that does not apply to a collective leaves it alone. Faults that
 * change a buffer of a backend whose memory the host cannot read go through
 * download and upload, and wait for the operation first.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "faulty.h"


extern const cb_backend_ops cb_backend_mpi;
extern const cb_backend_ops cb_backend_faulty_mpi;
#ifdef HAVE_NCCL
extern const cb_backend_ops cb_backend_nccl;
extern const cb_backend_ops cb_backend_faulty_nccl;
#endif

static faulty_backend *faulty(cb_backend *b)
{
    return (faulty_backend *)b;
}

static cb_backend *inner(cb_backend *b)
{
    return faulty(b)->inner;
}

static const cb_backend_ops *inner_ops(cb_backend *b)
{
    return faulty(b)->ops;
}

/* An inner failure becomes ours, with its message. */
static int pass(cb_backend *b, int rc)
{
    return fault_pass(faulty(b), rc);
}

static int before(cb_backend *b, launch *l)
{
    return fault_before(faulty(b), l);
}

static int after(cb_backend *b, const launch *l, int rc)
{
    return fault_after(faulty(b), l, rc);
}

/* skip: no rank launches anything. */
static int skipped(cb_backend *b)
{
    return faulty(b)->kind == FAULT_SKIP && fault_active(faulty(b));
}

/* The wrapped backend: the one named after "faulty-". */
static const cb_backend_ops *wrapped(const cb_backend_ops *self)
{
#ifdef HAVE_NCCL
    if (self == &cb_backend_faulty_nccl)
        return &cb_backend_nccl;
#endif
    (void)self;
    return &cb_backend_mpi;
}

static int faulty_usable_mpi(char *why, size_t why_len)
{
    return cb_backend_mpi.usable(why, why_len);
}

/* Every rank's place in the whole run, for faults named by run ranks
 * (slowlink). Collective over b->comm. */
static int learn_world_ranks(faulty_backend *f)
{
    f->world_of = malloc((size_t)f->base.nranks * sizeof *f->world_of);
    int ok = f->world_of != NULL;
    cb_ctl_allreduce(f->base.comm, CB_CTL_IN_PLACE, &ok, 1, CB_CTL_INT, CB_CTL_LAND);
    if (!ok || cb_ctl_allgather(f->base.comm, &f->world_rank, sizeof(int), f->world_of) != 0)
        return cb_backend_fail(&f->base, "faulty: out of memory for the ranks' places");
    return 0;
}

static int faulty_init_as(const cb_backend_ops *self, cb_ctl *comm,
                          const cb_backend_config *config, cb_backend **out)
{
    faulty_backend *f = calloc(1, sizeof *f);
    *out = f ? &f->base : NULL;
    if (f == NULL)
        return -1;
    f->base.comm = comm;
    f->ops = wrapped(self);
    f->base.rank = comm->rank;
    f->base.nranks = comm->size;
    f->world_rank = config->run_comm->rank;
    if (fault_parse(f, getenv(FAULT_ENV)) != 0)
        return cb_backend_fail(&f->base, "%s must be " FAULT_FORMS, FAULT_ENV);
    /* What the engine reads from our table must be what the wrapped one says. */
    if (self->mem.host_accessible != f->ops->mem.host_accessible ||
        self->avg_premultiplies != f->ops->avg_premultiplies ||
        self->needs_mpi != f->ops->needs_mpi)
        return cb_backend_fail(&f->base, "%s: its table disagrees with the %s backend's",
                               self->name, f->ops->name);
    int rc = f->ops->init(comm, config, &f->inner);
    if (f->inner == NULL)
        return cb_backend_fail(&f->base, "out of memory");
    f->inner->ops = f->ops;
    /* Everything the wrapped init set for the engine (notice, allocator,
     * repeat_on_device, ...) is ours too; the comm and ranks are the same. */
    f->base = *f->inner;
    f->base.ops = NULL;   /* the engine sets it to ours */
    if (pass(&f->base, rc) != 0)
        return -1;
    return learn_world_ranks(f);
}

static int faulty_init_mpi(cb_ctl *comm, const cb_backend_config *config, cb_backend **out)
{
    return faulty_init_as(&cb_backend_faulty_mpi, comm, config, out);
}

static void faulty_fini(cb_backend *b, int aborting)
{
    faulty_backend *f = faulty(b);
    if (f->inner != NULL) {
        if (f->stale_out != NULL)
            f->ops->mem.free(f->inner, f->stale_out);
        f->ops->fini(f->inner, aborting);
    }
    free(f->host);
    free(f->world_of);
    free(f);
}

static int faulty_describe(cb_backend *b, cb_device_desc *desc)
{
    if (pass(b, inner_ops(b)->describe(inner(b), desc)) != 0)
        return -1;
    size_t len = strlen(desc->library);
    snprintf(desc->library + len, sizeof desc->library - len, ", fault %s", faulty(b)->spec);
    return 0;
}

static int faulty_memory_available(cb_backend *b, size_t *bytes)
{
    return pass(b, inner_ops(b)->memory_available(inner(b), bytes));
}

static int faulty_alloc(cb_backend *b, size_t bytes, void **ptr)
{
    faulty_backend *f = faulty(b);
    if (f->kind == FAULT_ALLOC && f->world_rank == f->arg[0] && fault_active(f)) {
        *ptr = NULL;
        return cb_backend_fail(b, "cannot allocate %zu bytes (failure injected by %s)", bytes,
                               FAULT_ENV);
    }
    return pass(b, inner_ops(b)->mem.alloc(inner(b), bytes, ptr));
}

static void faulty_free(cb_backend *b, void *ptr)
{
    inner_ops(b)->mem.free(inner(b), ptr);
}

static int faulty_upload(cb_backend *b, void *dst, const void *src, size_t bytes)
{
    return pass(b, inner_ops(b)->mem.upload(inner(b), dst, src, bytes));
}

static int faulty_download(cb_backend *b, void *dst, const void *src, size_t bytes)
{
    return pass(b, inner_ops(b)->mem.download(inner(b), dst, src, bytes));
}

static int faulty_supports(cb_backend *b, cb_dtype dtype, cb_redop redop, char *why,
                           size_t why_len)
{
    return inner_ops(b)->supports(inner(b), dtype, redop, why, why_len);
}

static int faulty_wait(cb_backend *b)
{
    return pass(b, inner_ops(b)->wait(inner(b)));
}

static int faulty_timer_start(cb_backend *b)
{
    faulty(b)->timing = 1;
    return pass(b, inner_ops(b)->timing.timer_start(inner(b)));
}

static int faulty_timer_stop(cb_backend *b, double *seconds)
{
    faulty(b)->timing = 0;
    return pass(b, inner_ops(b)->timing.timer_stop(inner(b), seconds));
}

/* The engine's timed spans, on the host clock too (where timer_start and
 * timer_stop are not called, or timer_start alone, for marks); the health
 * scan's spans are timer_start and timer_stop's. */
static void faulty_span(cb_backend *b, int begin)
{
    faulty(b)->timing = begin;
    if (inner_ops(b)->timing.span != NULL)
        inner_ops(b)->timing.span(inner(b), begin);
}

static int faulty_timer_reserve(cb_backend *b, int n)
{
    return pass(b, inner_ops(b)->timing.timer_reserve(inner(b), n));
}

static int faulty_timer_mark(cb_backend *b)
{
    return pass(b, inner_ops(b)->timing.timer_mark(inner(b)));
}

static int faulty_timer_samples(cb_backend *b, double *seconds, int n)
{
    return pass(b, inner_ops(b)->timing.timer_samples(inner(b), seconds, n));
}

static int faulty_copy2d(cb_backend *b, void *dst, size_t pitch_dst, const void *src,
                         size_t pitch_src, size_t width, size_t height)
{
    return pass(b, inner_ops(b)->copy2d(inner(b), dst, pitch_dst, src, pitch_src, width,
                                        height));
}

/* Sub-groups get the same fault, around the wrapped backend's sub-group, so
 * that collectives built on them (hier_allreduce) see it too. */
static int faulty_split(cb_backend *b, int color, int key, cb_backend **out)
{
    faulty_backend *f = faulty(b);
    cb_backend *sub = NULL;
    *out = NULL;
    if (f->ops->split(f->inner, color, key, &sub) != 0)
        return pass(b, -1);
    if (sub == NULL)
        return 0;   /* a negative color: not in any sub-group */
    faulty_backend *w = malloc(sizeof *w);
    if (w == NULL) {
        f->ops->fini(sub, 1);
        return cb_backend_fail(b, "faulty: out of memory");
    }
    *w = *f;
    w->base.ops = b->ops;
    w->base.comm = sub->comm;
    w->base.rank = sub->rank;
    w->base.nranks = sub->nranks;
    w->inner = sub;
    w->stale_out = NULL;
    w->stale_bytes = 0;
    w->host = NULL;
    w->host_bytes = 0;
    w->world_of = NULL;
    *out = &w->base;
    return learn_world_ranks(w);
}

/* --nccl-impl: the wrapped backend's choice, so that faults reach both. */
static int faulty_select_impl(cb_backend *b, cb_impl impl)
{
    int chosen = inner_ops(b)->select_impl(inner(b), impl);
    return chosen < 0 ? pass(b, -1) : chosen;
}

/* comm_init: the wrapped backend times the making; under slow, a slow rank
 * adds its MS to its own time (as a rank whose creation is slow would), so
 * that the tests see which rank the figures name. */
static int faulty_comm_time(cb_backend *b, cb_comm_op op, double *seconds)
{
    faulty_backend *f = faulty(b);
    int rc = inner_ops(b)->comm_time(inner(b), op, seconds);
    if (rc > 0)
        cb_backend_fail(b, "%s", inner(b)->error);
    if (rc == 0 && fault_active(f) && f->kind == FAULT_SLOW && f->world_rank >= f->arg[0] &&
        f->world_rank <= f->arg[1] && *seconds == *seconds)
        *seconds += (double)f->arg[2] / 1000.0;
    return rc < 0 ? pass(b, rc) : rc;
}

static int faulty_barrier(cb_backend *b)
{
    return pass(b, inner_ops(b)->coll.barrier(inner(b)));
}

static int faulty_reduce_local(cb_backend *b, cb_local_stage stage, const void *in, void *inout,
                               size_t count, cb_dtype dtype, cb_redop redop)
{
    /* avgsum: the sum is D off when the last step divides it (host memory). */
    if (stage == CB_LOCAL_FINISH && fault_bumps_avg_sum(faulty(b), redop, dtype)) {
        const cb_dtype_info *info = cb_dtype_info_of(dtype);
        for (size_t k = 0; k < count; k++)
            info->store(inout, k, info->load(inout, k) + (double)faulty(b)->arg[0]);
    }
    return pass(b, inner_ops(b)->reduce_local(inner(b), stage, in, inout, count, dtype, redop));
}

static int faulty_repeat_check(cb_backend *b, const void *out, size_t count, size_t esize,
                               void *ref, void *scratch, int keep, size_t *differing)
{
    return pass(b, inner_ops(b)->repeat_check(inner(b), out, count, esize, ref, scratch, keep,
                                              differing));
}

static void *faulty_host_scratch(cb_backend *b, size_t bytes)
{
    void *p = inner_ops(b)->host_scratch(inner(b), bytes);
    if (p == NULL)
        cb_backend_fail(b, "%s", inner(b)->error);
    return p;
}

#ifdef HAVE_NCCL
/* Only faulty-nccl wraps a backend with these. */
static void faulty_abort(cb_backend *b)
{
    if (inner_ops(b)->abort != NULL)
        inner_ops(b)->abort(inner(b));
}

static void faulty_versions(cb_backend *b, char *buf, size_t len)
{
    inner_ops(b)->versions(inner(b), buf, len);
}

static int faulty_group_start(cb_backend *b)
{
    return pass(b, inner_ops(b)->launch.group_start(inner(b)));
}

static int faulty_group_end(cb_backend *b)
{
    return pass(b, inner_ops(b)->launch.group_end(inner(b)));
}

static int faulty_graph_begin(cb_backend *b)
{
    return pass(b, inner_ops(b)->launch.graph_begin(inner(b)));
}

static int faulty_graph_end(cb_backend *b)
{
    return pass(b, inner_ops(b)->launch.graph_end(inner(b)));
}

static int faulty_graph_launch(cb_backend *b)
{
    return pass(b, inner_ops(b)->launch.graph_launch(inner(b)));
}

static void faulty_graph_free(cb_backend *b)
{
    inner_ops(b)->launch.graph_free(inner(b));
}
#endif

/* A collective as the wrapped backend takes it: the launch the fault sees
 * (whose buffers and root it may change) and the rest of the call. */
typedef enum collective_call {
    CALL_ALLREDUCE, CALL_ALLGATHER, CALL_REDUCESCATTER, CALL_BROADCAST, CALL_REDUCE,
    CALL_ALLTOALL, CALL_GATHER, CALL_SCATTER, CALL_SENDRECV, CALL_ALLTOALLV
} collective_call;

typedef struct call {
    collective_call which;
    launch l;                 /* l.block is the count the backend is given */
    cb_redop redop;
    int send_peer, recv_peer;
    const size_t *send_counts, *send_offsets;  /* alltoallv */
} call;

static int call_inner(cb_backend *b, const call *c)
{
    const cb_backend_ops *ops = inner_ops(b);
    cb_backend *in = inner(b);
    const launch *l = &c->l;
    switch (c->which) {
    case CALL_ALLREDUCE:
        return ops->coll.allreduce(in, l->send, l->recv, l->block, l->dtype, c->redop);
    case CALL_ALLGATHER:
        return ops->coll.allgather(in, l->send, l->recv, l->block, l->dtype);
    case CALL_REDUCESCATTER:
        return ops->coll.reducescatter(in, l->send, l->recv, l->block, l->dtype, c->redop);
    case CALL_BROADCAST:
        return ops->coll.broadcast(in, l->send, l->recv, l->block, l->dtype, l->root);
    case CALL_REDUCE:
        return ops->coll.reduce(in, l->send, l->recv, l->block, l->dtype, c->redop, l->root);
    case CALL_ALLTOALL:
        return ops->coll.alltoall(in, l->send, l->recv, l->block, l->dtype);
    case CALL_GATHER:
        return ops->coll.gather(in, l->send, l->recv, l->block, l->dtype, l->root);
    case CALL_SCATTER:
        return ops->coll.scatter(in, l->send, l->recv, l->block, l->dtype, l->root);
    case CALL_SENDRECV:
        return ops->coll.sendrecv(in, l->send, l->recv, l->block, l->dtype, c->send_peer,
                             c->recv_peer);
    case CALL_ALLTOALLV:
        return ops->coll.alltoallv(in, l->send, c->send_counts, c->send_offsets, l->recv,
                              l->recv_counts, l->recv_offsets, l->dtype);
    }
    return cb_backend_fail(b, "faulty: unknown collective call %d", (int)c->which);
}

/* Every collective goes this way: skip, delay, the fault before the call,
 * the wrapped backend's call, the fault after it. */
static int forward(cb_backend *b, call *c)
{
    if (skipped(b))
        return 0;
    if (c->which == CALL_SENDRECV && fault_active(faulty(b)))
        fault_delay(faulty(b), c->send_peer);
    if (before(b, &c->l) != 0)
        return -1;
    int reduces = c->which == CALL_ALLREDUCE || c->which == CALL_REDUCE ||
                  c->which == CALL_REDUCESCATTER;
    int bumps = reduces && fault_bumps_avg_sum(faulty(b), c->redop, c->l.dtype);
    if (bumps)
        c->redop = CB_SUM;
    int rc = call_inner(b, c);
    if (bumps && rc == 0)
        rc = fault_finish_avg(faulty(b), &c->l);
    return after(b, &c->l, rc);
}

/* A wrapper's launch, from its arguments send, recv, count (elements per
 * block) and dtype: input and output sizes in blocks, whether the output
 * gathers blocks and the input scatters them, and the root (-1: none). */
#define LAUNCH(in_blocks, out_blocks, gather, scatter, rooted_at)                       \
    {.send = send, .recv = recv, .input_count = (in_blocks) * count,                    \
     .output_count = (out_blocks) * count, .block = count, .dtype = dtype,             \
     .gathers = gather, .scatters = scatter, .root = rooted_at}

static int faulty_allreduce(cb_backend *b, const void *send, void *recv, size_t count,
                            cb_dtype dtype, cb_redop redop)
{
    return forward(b, &(call){.which = CALL_ALLREDUCE, .l = LAUNCH(1, 1, 0, 0, -1),
                              .redop = redop});
}

static int faulty_allgather(cb_backend *b, const void *send, void *recv, size_t count,
                            cb_dtype dtype)
{
    size_t n = (size_t)b->nranks;
    return forward(b, &(call){.which = CALL_ALLGATHER, .l = LAUNCH(1, n, 1, 0, -1)});
}

static int faulty_reducescatter(cb_backend *b, const void *send, void *recv, size_t count,
                                cb_dtype dtype, cb_redop redop)
{
    size_t n = (size_t)b->nranks;
    return forward(b, &(call){.which = CALL_REDUCESCATTER, .l = LAUNCH(n, 1, 0, 1, -1),
                              .redop = redop});
}

static int faulty_broadcast(cb_backend *b, const void *send, void *recv, size_t count,
                            cb_dtype dtype, int root)
{
    return forward(b, &(call){.which = CALL_BROADCAST, .l = LAUNCH(1, 1, 0, 0, root)});
}

static int faulty_reduce(cb_backend *b, const void *send, void *recv, size_t count,
                         cb_dtype dtype, cb_redop redop, int root)
{
    return forward(b, &(call){.which = CALL_REDUCE, .l = LAUNCH(1, 1, 0, 0, root),
                              .redop = redop});
}

static int faulty_alltoall(cb_backend *b, const void *send, void *recv, size_t count,
                           cb_dtype dtype)
{
    size_t n = (size_t)b->nranks;
    return forward(b, &(call){.which = CALL_ALLTOALL, .l = LAUNCH(n, n, 1, 0, -1)});
}

static int faulty_gather(cb_backend *b, const void *send, void *recv, size_t count,
                         cb_dtype dtype, int root)
{
    size_t n = (size_t)b->nranks;
    return forward(b, &(call){.which = CALL_GATHER, .l = LAUNCH(1, n, 1, 0, root)});
}

static int faulty_scatter(cb_backend *b, const void *send, void *recv, size_t count,
                          cb_dtype dtype, int root)
{
    size_t n = (size_t)b->nranks;
    return forward(b, &(call){.which = CALL_SCATTER, .l = LAUNCH(n, 1, 0, 1, root)});
}

static int faulty_sendrecv(cb_backend *b, const void *send, void *recv, size_t count,
                           cb_dtype dtype, int send_peer, int recv_peer)
{
    call c = {.which = CALL_SENDRECV, .l = LAUNCH(1, 1, 0, 0, -1), .send_peer = send_peer,
              .recv_peer = recv_peer};
    c.l.is_sendrecv = 1;
    return forward(b, &c);
}

/* The output's blocks are the senders' (swap:A:B trades what A and B sent,
 * as much of it as both blocks hold); the input and output totals are this
 * rank's row and column of the matrix. */
static int faulty_alltoallv(cb_backend *b, const void *send, const size_t *send_counts,
                            const size_t *send_offsets, void *recv, const size_t *recv_counts,
                            const size_t *recv_offsets, cb_dtype dtype)
{
    size_t sent = 0, received = 0;
    for (int peer = 0; peer < b->nranks; peer++) {
        sent += send_counts[peer];
        received += recv_counts[peer];
    }
    call c = {.which = CALL_ALLTOALLV,
              .l = {.send = send, .recv = recv, .input_count = sent, .output_count = received,
                    .dtype = dtype, .gathers = 1, .root = -1, .recv_counts = recv_counts,
                    .recv_offsets = recv_offsets},
              .send_counts = send_counts, .send_offsets = send_offsets};
    return forward(b, &c);
}

/* Every entry both tables share; the rest follow the wrapped backend's. */
#define FAULTY_COMMON_OPS                                                              \
    .fini = faulty_fini, .describe = faulty_describe,                                  \
    .memory_available = faulty_memory_available, .supports = faulty_supports,          \
    .mem.alloc = faulty_alloc, .mem.free = faulty_free,                                \
    .mem.upload = faulty_upload, .mem.download = faulty_download,                      \
    .coll.allreduce = faulty_allreduce, .coll.allgather = faulty_allgather,            \
    .coll.reducescatter = faulty_reducescatter, .coll.broadcast = faulty_broadcast,    \
    .coll.reduce = faulty_reduce, .coll.alltoall = faulty_alltoall,                    \
    .coll.gather = faulty_gather, .coll.scatter = faulty_scatter,                      \
    .coll.sendrecv = faulty_sendrecv, .coll.alltoallv = faulty_alltoallv,              \
    .coll.barrier = faulty_barrier, .wait = faulty_wait,                               \
    .timing.timer_start = faulty_timer_start, .timing.timer_stop = faulty_timer_stop,  \
    .timing.span = faulty_span, .timing.timer_reserve = faulty_timer_reserve,          \
    .timing.timer_mark = faulty_timer_mark, .timing.timer_samples = faulty_timer_samples, \
    .copy2d = faulty_copy2d, .split = faulty_split, .comm_time = faulty_comm_time,     \
    .repeat_check = faulty_repeat_check

const cb_backend_ops cb_backend_faulty_mpi = {
    .name = "faulty-mpi",
    .needs_mpi = 1,
    .summary = "TEST ONLY: the mpi backend with the fault named by " FAULT_ENV,
    .usable = faulty_usable_mpi,
    .init = faulty_init_mpi,
    FAULTY_COMMON_OPS,
    .mem.host_accessible = 1,
    .avg_premultiplies = 0,
    .repeat_promise = "MPI recommends one order but does not require it",
    .reduce_local = faulty_reduce_local,
    .host_scratch = faulty_host_scratch,
};

#ifdef HAVE_NCCL
static int faulty_usable_nccl(char *why, size_t why_len)
{
    return cb_backend_nccl.usable(why, why_len);
}

static int faulty_init_nccl(cb_ctl *comm, const cb_backend_config *config, cb_backend **out)
{
    return faulty_init_as(&cb_backend_faulty_nccl, comm, config, out);
}

const cb_backend_ops cb_backend_faulty_nccl = {
    .name = "faulty-nccl",
    .summary = "TEST ONLY: the nccl backend with the fault named by " FAULT_ENV,
    .usable = faulty_usable_nccl,
    .init = faulty_init_nccl,
    FAULTY_COMMON_OPS,
    .abort = faulty_abort,
    .versions = faulty_versions,
    .mem.host_accessible = 0,
    .avg_premultiplies = 1,
    .repeat_promise = "NCCL keeps one for a communicator, size and algorithm",
    .launch.group_start = faulty_group_start,
    .launch.group_end = faulty_group_end,
    .launch.graph_begin = faulty_graph_begin,
    .launch.graph_end = faulty_graph_end,
    .launch.graph_launch = faulty_graph_launch,
    .launch.graph_free = faulty_graph_free,
    .select_impl = faulty_select_impl,
};
#endif

/* The registry's hook: the backends this test program adds. */
const cb_backend_ops *const *cb_backend_test_list(void);

const cb_backend_ops *const *cb_backend_test_list(void)
{
    static const cb_backend_ops *const table[] = {
        &cb_backend_faulty_mpi,
#ifdef HAVE_NCCL
        &cb_backend_faulty_nccl,
#endif
        NULL,
    };
    return table;
}
