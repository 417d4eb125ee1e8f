/*
 * Test-only backend "faulty": the MPI backend with one fault injected into
 * every collective it runs, so that the tests can prove that verification
 * catches each class of error. It is linked only into the test program
 * tests/nccl-collbench-faulty, never into nccl-collbench.
 *
 * NCCL_COLLBENCH_TEST_FAULT picks the fault:
 *   missing:K   rank K's input is zeros (sum's identity) when the operation
 *               starts: its contribution is missing
 *   swap:A:B    the blocks of ranks A and B trade places: gathered output
 *               blocks (allgather, gather, alltoall), scattered input blocks
 *               (scatter, reducescatter), sendrecv outputs
 *   shift:K     rank K's output moves up one element after the operation
 *   stale:K     rank K's output is never written, so it keeps whatever an
 *               earlier size, placement or pass left there
 *   root:D      rooted collectives run with root (root + D) mod n
 * Faults that do not apply to a collective leave it alone.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"

#define FAULT_ENV "NCCL_COLLBENCH_TEST_FAULT"
#define FAULT_SWAP_TAG 0x7a11

extern const cb_backend_ops cb_backend_mpi;
extern const cb_backend_ops cb_backend_faulty;

typedef enum fault_kind {
    FAULT_MISSING,
    FAULT_SWAP,
    FAULT_SHIFT,
    FAULT_STALE,
    FAULT_ROOT
} fault_kind;

typedef struct faulty_backend {
    cb_backend base;     /* first: the engine sees this */
    cb_backend *inner;   /* the MPI backend doing the work */
    fault_kind kind;
    int a, b;            /* the ranks (or root offset) the fault names */
    char spec[64];
    void *scratch;       /* stale: where rank K's output really goes */
    size_t scratch_bytes;
} faulty_backend;

static faulty_backend *faulty(cb_backend *b)
{
    return (faulty_backend *)b;
}

/* An inner failure becomes ours, with its message. */
static int pass(cb_backend *b, int rc)
{
    if (rc != 0)
        cb_backend_fail(b, "%s", faulty(b)->inner->error);
    return rc;
}

static int parse_fault(faulty_backend *f, const char *spec)
{
    char kind[16];
    int a = 0, b = 0, got = spec ? sscanf(spec, "%15[a-z]:%d:%d", kind, &a, &b) : 0;
    if (got < 2)
        return -1;
    static const char *const kinds[] = {"missing", "swap", "shift", "stale", "root"};
    for (int k = 0; k < 5; k++)
        if (strcmp(kind, kinds[k]) == 0)
            f->kind = (fault_kind)k;
    if (strcmp(kind, kinds[f->kind]) != 0 || (f->kind == FAULT_SWAP && got != 3))
        return -1;
    f->a = a;
    f->b = b;
    snprintf(f->spec, sizeof f->spec, "%s", spec);
    return 0;
}

static int faulty_usable(char *why, size_t why_len)
{
    return cb_backend_mpi.usable(why, why_len);
}

static int faulty_init(MPI_Comm comm, const cb_backend_config *config, cb_backend **out)
{
    faulty_backend *f = calloc(1, sizeof *f);
    *out = f ? &f->base : NULL;
    if (f == NULL)
        return -1;
    f->base.comm = comm;
    MPI_Comm_rank(comm, &f->base.rank);
    MPI_Comm_size(comm, &f->base.nranks);
    if (parse_fault(f, getenv(FAULT_ENV)) != 0)
        return cb_backend_fail(&f->base, "%s must be missing:K, swap:A:B, shift:K, stale:K or "
                               "root:D", FAULT_ENV);
    int rc = cb_backend_mpi.init(comm, config, &f->inner);
    if (f->inner == NULL)
        return cb_backend_fail(&f->base, "out of memory");
    f->inner->ops = &cb_backend_mpi;
    return pass(&f->base, rc);
}

static void faulty_fini(cb_backend *b, int aborting)
{
    faulty_backend *f = faulty(b);
    if (f->inner != NULL)
        cb_backend_mpi.fini(f->inner, aborting);
    free(f->scratch);
    free(f);
}

static int faulty_describe(cb_backend *b, cb_device_desc *desc)
{
    if (pass(b, cb_backend_mpi.describe(faulty(b)->inner, desc)) != 0)
        return -1;
    size_t len = strlen(desc->library);
    snprintf(desc->library + len, sizeof desc->library - len, ", fault %s", faulty(b)->spec);
    return 0;
}

static int faulty_memory_available(cb_backend *b, size_t *bytes)
{
    return pass(b, cb_backend_mpi.memory_available(faulty(b)->inner, bytes));
}

static int faulty_alloc(cb_backend *b, size_t bytes, void **ptr)
{
    return pass(b, cb_backend_mpi.alloc(faulty(b)->inner, bytes, ptr));
}

static void faulty_free(cb_backend *b, void *ptr)
{
    cb_backend_mpi.free(faulty(b)->inner, ptr);
}

static int faulty_upload(cb_backend *b, void *dst, const void *src, size_t bytes)
{
    return pass(b, cb_backend_mpi.upload(faulty(b)->inner, dst, src, bytes));
}

static int faulty_download(cb_backend *b, void *dst, const void *src, size_t bytes)
{
    return pass(b, cb_backend_mpi.download(faulty(b)->inner, dst, src, bytes));
}

static int faulty_supports(cb_backend *b, cb_dtype dtype, cb_redop redop, char *why,
                           size_t why_len)
{
    return cb_backend_mpi.supports(faulty(b)->inner, dtype, redop, why, why_len);
}

static int faulty_wait(cb_backend *b)
{
    return pass(b, cb_backend_mpi.wait(faulty(b)->inner));
}

static int faulty_timer_start(cb_backend *b)
{
    return pass(b, cb_backend_mpi.timer_start(faulty(b)->inner));
}

static int faulty_timer_stop(cb_backend *b, double *seconds)
{
    return pass(b, cb_backend_mpi.timer_stop(faulty(b)->inner, seconds));
}

/* ---- The faults ------------------------------------------------------ */

/* What one launch looks like to the fault, whatever the collective. */
typedef struct launch {
    const void *send;
    void *recv;
    size_t input_count;    /* elements of this rank's input at send */
    size_t output_count;   /* elements of this rank's output at recv */
    size_t block;          /* elements per rank block */
    size_t esize;
    int gathers;           /* the output holds one block per rank */
    int scatters;          /* the input holds one block per rank */
    int root;              /* -1 when rootless */
} launch;

static void swap_blocks(void *buf, size_t block_bytes, int a, int b)
{
    char *x = (char *)buf + (size_t)a * block_bytes, *y = (char *)buf + (size_t)b * block_bytes;
    for (size_t k = 0; k < block_bytes; k++) {
        char t = x[k];
        x[k] = y[k];
        y[k] = t;
    }
}

/* Before the operation: the fault may change the input, the buffers and the root. */
static int before(cb_backend *b, launch *l)
{
    faulty_backend *f = faulty(b);
    int me = b->rank, n = b->nranks;
    if (f->kind == FAULT_MISSING && me == f->a)
        memset((void *)l->send, 0, l->input_count * l->esize);
    if (f->kind == FAULT_SWAP && l->scatters && (l->root < 0 || me == l->root) &&
        f->a < n && f->b < n)
        swap_blocks((void *)l->send, l->block * l->esize, f->a, f->b);
    if (f->kind == FAULT_ROOT && l->root >= 0)
        l->root = ((l->root + f->a) % n + n) % n;
    if (f->kind == FAULT_STALE && me == f->a) {
        size_t bytes = l->output_count * l->esize;
        if (f->scratch_bytes < bytes) {
            void *bigger = realloc(f->scratch, bytes);
            if (bigger == NULL)
                return cb_backend_fail(b, "faulty: out of memory");
            f->scratch = bigger;
            f->scratch_bytes = bytes;
        }
        l->recv = f->scratch;   /* the real output buffer is left alone */
    }
    return 0;
}

/* After the operation: the fault may change the output. */
static int after(cb_backend *b, const launch *l, int rc, int is_sendrecv)
{
    faulty_backend *f = faulty(b);
    int me = b->rank, n = b->nranks;
    if (rc != 0)
        return pass(b, rc);
    if (f->kind == FAULT_SWAP && l->gathers && (l->root < 0 || me == l->root) && f->a < n &&
        f->b < n)
        swap_blocks(l->recv, l->block * l->esize, f->a, f->b);
    if (f->kind == FAULT_SWAP && is_sendrecv && (me == f->a || me == f->b) && f->a != f->b &&
        f->a < n && f->b < n) {
        int other = me == f->a ? f->b : f->a;
        int mrc = MPI_Sendrecv_replace(l->recv, (int)(l->output_count * l->esize), MPI_BYTE,
                                       other, FAULT_SWAP_TAG, other, FAULT_SWAP_TAG, b->comm,
                                       MPI_STATUS_IGNORE);
        if (mrc != MPI_SUCCESS)
            return cb_backend_fail(b, "faulty: MPI_Sendrecv_replace failed");
    }
    if (f->kind == FAULT_SHIFT && me == f->a && l->output_count > 1)
        memmove((char *)l->recv + l->esize, l->recv, (l->output_count - 1) * l->esize);
    return 0;
}

static size_t esize_of(cb_dtype dtype)
{
    return cb_dtype_info_of(dtype)->size;
}

static int faulty_allreduce(cb_backend *b, const void *send, void *recv, size_t count,
                            cb_dtype dtype, cb_redop redop)
{
    launch l = {send, recv, count, count, count, esize_of(dtype), 0, 0, -1};
    if (before(b, &l) != 0)
        return -1;
    int rc = cb_backend_mpi.allreduce(faulty(b)->inner, l.send, l.recv, count, dtype, redop);
    return after(b, &l, rc, 0);
}

static int faulty_allgather(cb_backend *b, const void *send, void *recv, size_t count,
                            cb_dtype dtype)
{
    size_t n = (size_t)b->nranks;
    launch l = {send, recv, count, n * count, count, esize_of(dtype), 1, 0, -1};
    if (before(b, &l) != 0)
        return -1;
    int rc = cb_backend_mpi.allgather(faulty(b)->inner, l.send, l.recv, count, dtype);
    return after(b, &l, rc, 0);
}

static int faulty_reducescatter(cb_backend *b, const void *send, void *recv, size_t count,
                                cb_dtype dtype, cb_redop redop)
{
    size_t n = (size_t)b->nranks;
    launch l = {send, recv, n * count, count, count, esize_of(dtype), 0, 1, -1};
    if (before(b, &l) != 0)
        return -1;
    int rc = cb_backend_mpi.reducescatter(faulty(b)->inner, l.send, l.recv, count, dtype, redop);
    return after(b, &l, rc, 0);
}

static int faulty_broadcast(cb_backend *b, const void *send, void *recv, size_t count,
                            cb_dtype dtype, int root)
{
    launch l = {send, recv, count, count, count, esize_of(dtype), 0, 0, root};
    if (before(b, &l) != 0)
        return -1;
    int rc = cb_backend_mpi.broadcast(faulty(b)->inner, l.send, l.recv, count, dtype, l.root);
    return after(b, &l, rc, 0);
}

static int faulty_reduce(cb_backend *b, const void *send, void *recv, size_t count,
                         cb_dtype dtype, cb_redop redop, int root)
{
    launch l = {send, recv, count, count, count, esize_of(dtype), 0, 0, root};
    if (before(b, &l) != 0)
        return -1;
    int rc = cb_backend_mpi.reduce(faulty(b)->inner, l.send, l.recv, count, dtype, redop, l.root);
    return after(b, &l, rc, 0);
}

static int faulty_alltoall(cb_backend *b, const void *send, void *recv, size_t count,
                           cb_dtype dtype)
{
    size_t n = (size_t)b->nranks;
    launch l = {send, recv, n * count, n * count, count, esize_of(dtype), 1, 0, -1};
    if (before(b, &l) != 0)
        return -1;
    int rc = cb_backend_mpi.alltoall(faulty(b)->inner, l.send, l.recv, count, dtype);
    return after(b, &l, rc, 0);
}

static int faulty_gather(cb_backend *b, const void *send, void *recv, size_t count,
                         cb_dtype dtype, int root)
{
    size_t n = (size_t)b->nranks;
    launch l = {send, recv, count, n * count, count, esize_of(dtype), 1, 0, root};
    if (before(b, &l) != 0)
        return -1;
    int rc = cb_backend_mpi.gather(faulty(b)->inner, l.send, l.recv, count, dtype, l.root);
    return after(b, &l, rc, 0);
}

static int faulty_scatter(cb_backend *b, const void *send, void *recv, size_t count,
                          cb_dtype dtype, int root)
{
    size_t n = (size_t)b->nranks;
    launch l = {send, recv, n * count, count, count, esize_of(dtype), 0, 1, root};
    if (before(b, &l) != 0)
        return -1;
    int rc = cb_backend_mpi.scatter(faulty(b)->inner, l.send, l.recv, count, dtype, l.root);
    return after(b, &l, rc, 0);
}

static int faulty_sendrecv(cb_backend *b, const void *send, void *recv, size_t count,
                           cb_dtype dtype, int send_peer, int recv_peer)
{
    launch l = {send, recv, count, count, count, esize_of(dtype), 0, 0, -1};
    if (before(b, &l) != 0)
        return -1;
    int rc = cb_backend_mpi.sendrecv(faulty(b)->inner, l.send, l.recv, count, dtype, send_peer,
                                     recv_peer);
    return after(b, &l, rc, 1);
}

const cb_backend_ops cb_backend_faulty = {
    .name = "faulty",
    .summary = "TEST ONLY: the mpi backend with the fault named by " FAULT_ENV,
    .usable = faulty_usable,
    .init = faulty_init,
    .fini = faulty_fini,
    .describe = faulty_describe,
    .memory_available = faulty_memory_available,
    .host_accessible = 1,
    .alloc = faulty_alloc,
    .free = faulty_free,
    .upload = faulty_upload,
    .download = faulty_download,
    .supports = faulty_supports,
    .allreduce = faulty_allreduce,
    .allgather = faulty_allgather,
    .reducescatter = faulty_reducescatter,
    .broadcast = faulty_broadcast,
    .reduce = faulty_reduce,
    .alltoall = faulty_alltoall,
    .gather = faulty_gather,
    .scatter = faulty_scatter,
    .sendrecv = faulty_sendrecv,
    .avg_premultiplies = 0,
    .wait = faulty_wait,
    .timer_start = faulty_timer_start,
    .timer_stop = faulty_timer_stop,
};
