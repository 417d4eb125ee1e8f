/*
 * The fault layer's faults (tests/faults/layer/backend.c has the list): what each
 * does to a launch's input, root and output, on whatever backend f wraps.
 */
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "faulty.h"

#define FAULT_SWAP_TAG 0x7a11
#define FAULT_DUP_TAG 0x7a12

/* Name and how many numbers follow it, at least and at most. */
static const struct {
    const char *name;
    int least, most;
} fault_forms[FAULT_KINDS] = {
    {"missing", 1, 1}, {"dup", 2, 2},    {"bump", 1, 2},    {"swap", 2, 2},
    {"shift", 1, 2},   {"chunks", 4, 4}, {"sign", 1, 2},    {"corrupt", 2, 2},
    {"stale", 1, 1},   {"root", 1, 1},   {"skip", 0, 0},    {"hang", 2, 2},
    {"alloc", 1, 1},   {"slow", 3, 3},   {"slowlink", 4, 4}, {"stop", 2, 2},
    {"avgsum", 1, 1},  {"nth", 2, 2},
};

int fault_pass(faulty_backend *f, int rc)
{
    if (rc != 0)
        cb_backend_fail(&f->base, "%s", f->inner->error);
    return rc;
}

static faulty_backend *faulty(cb_backend *b)
{
    return (faulty_backend *)b;
}

static int pass(cb_backend *b, int rc)
{
    return fault_pass(faulty(b), rc);
}

int fault_parse(faulty_backend *f, const char *spec)
{
    char kind[16];
    long *a = f->arg;
    int got = spec ? sscanf(spec, "%15[a-z]:%ld:%ld:%ld:%ld", kind, &a[0], &a[1], &a[2], &a[3])
                   : 0;
    if (got < 1)
        return -1;
    if (strncmp(spec, "timed:", 6) == 0 || strncmp(spec, "untimed:", 8) == 0) {
        size_t skip = spec[0] == 't' ? 6 : 8;
        f->timed_only = skip == 6;
        f->untimed_only = skip == 8;
        int rc = fault_parse(f, spec + skip);
        snprintf(f->spec, sizeof f->spec, "%s", spec);
        return rc;
    }
    f->nargs = got - 1;
    for (int k = 0; k < FAULT_KINDS; k++)
        if (strcmp(kind, fault_forms[k].name) == 0) {
            f->kind = (fault_kind)k;
            snprintf(f->spec, sizeof f->spec, "%s", spec);
            return f->nargs >= fault_forms[k].least && f->nargs <= fault_forms[k].most ? 0 : -1;
        }
    return -1;
}


static size_t esize_of(const launch *l)
{
    return cb_dtype_info_of(l->dtype)->size;
}

/* A host view of bytes of the backend buffer buf: buf itself when the host
 * may touch it, else a downloaded copy that put_host writes back. */
static unsigned char *get_host(cb_backend *b, const void *buf, size_t bytes)
{
    faulty_backend *f = faulty(b);
    if (f->ops->mem.host_accessible)
        return (unsigned char *)buf;
    if (f->host_bytes < bytes) {
        unsigned char *bigger = realloc(f->host, bytes);
        if (bigger == NULL) {
            cb_backend_fail(b, "faulty: out of memory");
            return NULL;
        }
        f->host = bigger;
        f->host_bytes = bytes;
    }
    return pass(b, f->ops->mem.download(f->inner, f->host, buf, bytes)) == 0 ? f->host : NULL;
}

static int put_host(cb_backend *b, const void *buf, const unsigned char *view, size_t bytes)
{
    faulty_backend *f = faulty(b);
    if (f->ops->mem.host_accessible)
        return 0;
    return pass(b, f->ops->mem.upload(f->inner, (void *)buf, view, bytes));
}

static void swap_bytes(unsigned char *x, unsigned char *y, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        unsigned char t = x[k];
        x[k] = y[k];
        y[k] = t;
    }
}

/* Flip the top bit of element k (little endian): the sign of a float. */
static void flip_sign(unsigned char *data, size_t k, size_t esize)
{
    data[k * esize + esize - 1] ^= 0x80;
}

static int is_zero(const unsigned char *data, size_t k, size_t esize)
{
    for (size_t i = 0; i < esize; i++)
        if (data[k * esize + i] != 0)
            return 0;
    return 1;
}

/* A fault's offset or count argument; negative ones match nothing. */
static size_t arg_count(const faulty_backend *f, int i, size_t otherwise)
{
    if (i >= f->nargs)
        return otherwise;
    return f->arg[i] < 0 ? SIZE_MAX : (size_t)f->arg[i];
}

/* dup:A:B: rank A sends its input to rank B, which takes it as its own. */
static int duplicate_input(cb_backend *b, const launch *l)
{
    faulty_backend *f = faulty(b);
    long from = f->arg[0], to = f->arg[1];
    size_t bytes = l->input_count * esize_of(l);
    if (from == to || from >= b->nranks || to >= b->nranks || from < 0 || to < 0 ||
        (b->rank != from && b->rank != to))
        return 0;
    unsigned char *view = get_host(b, l->send, bytes);
    if (view == NULL)
        return -1;
    int rc = b->rank == from ? cb_ctl_send(b->comm, view, bytes, (int)to, FAULT_DUP_TAG)
                             : cb_ctl_recv(b->comm, view, bytes, (int)from, FAULT_DUP_TAG);
    if (rc != 0)
        return cb_backend_fail(b, "faulty: passing rank %ld's input on failed", from);
    return b->rank == to ? put_host(b, l->send, view, bytes) : 0;
}

/* missing, bump and swap change this rank's input. */
static int change_input(cb_backend *b, const launch *l)
{
    faulty_backend *f = faulty(b);
    const cb_dtype_info *info = cb_dtype_info_of(l->dtype);
    int me = b->rank, n = b->nranks;
    int swaps = f->kind == FAULT_SWAP && l->scatters && (l->root < 0 || me == l->root) &&
                f->arg[0] >= 0 && f->arg[0] < n && f->arg[1] >= 0 && f->arg[1] < n;
    int own = (f->kind == FAULT_MISSING || f->kind == FAULT_BUMP) && f->world_rank == f->arg[0];
    if (!swaps && !own)
        return 0;
    size_t bytes = l->input_count * info->size;
    unsigned char *view = get_host(b, l->send, bytes);
    if (view == NULL)
        return -1;
    if (f->kind == FAULT_MISSING)
        memset(view, 0, bytes);
    if (f->kind == FAULT_BUMP) {
        double by = f->nargs > 1 ? (double)f->arg[1] : 1.0;
        for (size_t k = 0; k < l->input_count; k++)
            info->store(view, k, info->load(view, k) + by);
    }
    if (swaps) {
        size_t block = l->block * info->size;
        swap_bytes(view + (size_t)f->arg[0] * block, view + (size_t)f->arg[1] * block, block);
    }
    return put_host(b, l->send, view, bytes);
}

/* Before the operation: the fault may change the input, the buffers and the root. */
static int before(cb_backend *b, launch *l)
{
    faulty_backend *f = faulty(b);
    int n = b->nranks;
    if (!l->is_sendrecv)
        fault_delay(f, -1);   /* sendrecv's comes with its peer */
    if (f->kind == FAULT_DUP)
        return duplicate_input(b, l);
    if (f->kind == FAULT_ROOT && l->root >= 0)
        l->root = (int)(((l->root + f->arg[0]) % n + n) % n);
    if (f->kind == FAULT_HANG && f->world_rank == f->arg[0] &&
        l->output_count >= arg_count(f, 1, 0))
        for (;;)
            sleep(1);   /* as a hung rank: no progress until the watchdog ends it */
    if (f->kind == FAULT_STOP && f->world_rank == f->arg[0] &&
        l->output_count >= arg_count(f, 1, 0))
        raise(SIGSTOP);   /* every thread stops, the watchdog's too: a silent rank */
    if (f->kind == FAULT_STALE && f->world_rank == f->arg[0]) {
        size_t bytes = l->output_count * esize_of(l);
        if (f->stale_bytes < bytes) {
            if (f->stale_out != NULL)
                f->ops->mem.free(f->inner, f->stale_out);
            f->stale_out = NULL;
            f->stale_bytes = 0;
            if (pass(b, f->ops->mem.alloc(f->inner, bytes, &f->stale_out)) != 0)
                return -1;
            f->stale_bytes = bytes;
        }
        l->recv = f->stale_out;   /* the real output buffer is left alone */
    }
    return change_input(b, l);
}

/* Whether the fault changes this rank's output of l. */
static int changes_output(const faulty_backend *f, const launch *l, int me)
{
    int n = f->base.nranks;
    switch (f->kind) {
    case FAULT_SWAP:
        if (f->arg[0] < 0 || f->arg[0] >= n || f->arg[1] < 0 || f->arg[1] >= n)
            return 0;
        if (l->is_sendrecv)
            return f->arg[0] != f->arg[1] && (me == f->arg[0] || me == f->arg[1]);
        return l->gathers && (l->root < 0 || me == l->root);
    case FAULT_SHIFT:
    case FAULT_CHUNKS:
    case FAULT_SIGN:
    case FAULT_CORRUPT:
        return f->world_rank == f->arg[0];
    case FAULT_NTH:
        return f->world_rank == f->arg[0] && f->launches == f->arg[1];
    default:
        return 0;
    }
}

static void change_output(cb_backend *b, const launch *l, unsigned char *view)
{
    faulty_backend *f = faulty(b);
    const cb_dtype_info *info = cb_dtype_info_of(l->dtype);
    size_t es = info->size, count = l->output_count;
    switch (f->kind) {
    case FAULT_SWAP:
        if (l->recv_offsets != NULL) {   /* alltoallv's unequal blocks */
            size_t a = (size_t)f->arg[0], b2 = (size_t)f->arg[1];
            size_t len = l->recv_counts[a] < l->recv_counts[b2] ? l->recv_counts[a]
                                                                : l->recv_counts[b2];
            if (a != b2)
                swap_bytes(view + l->recv_offsets[a] * es, view + l->recv_offsets[b2] * es,
                           len * es);
            break;
        }
        swap_bytes(view + (size_t)f->arg[0] * l->block * es,
                   view + (size_t)f->arg[1] * l->block * es, l->block * es);
        break;
    case FAULT_SHIFT: {
        size_t by = arg_count(f, 1, 1);
        if (by > 0 && by < count)
            memmove(view + by * es, view, (count - by) * es);
        break;
    }
    case FAULT_CHUNKS: {
        size_t x = arg_count(f, 1, 0), y = arg_count(f, 2, 0), len = arg_count(f, 3, 0);
        size_t lo = x < y ? x : y, hi = x < y ? y : x;
        if (len > 0 && hi <= count && len <= count - hi && lo + len <= hi)
            swap_bytes(view + x * es, view + y * es, len * es);
        break;
    }
    case FAULT_SIGN:
        if (f->nargs > 1) {
            size_t k = arg_count(f, 1, 0);
            if (k < count)
                flip_sign(view, k, es);
        } else if (info->is_float) {
            for (size_t k = 0; k < count; k++)
                if (is_zero(view, k, es))
                    flip_sign(view, k, es);
        }
        break;
    case FAULT_CORRUPT:
    case FAULT_NTH: {
        size_t k = f->kind == FAULT_NTH ? 0 : arg_count(f, 1, 0);
        if (k < count)
            info->store(view, k, info->load(view, k) == 1.0 ? 2.0 : 1.0);
        break;
    }
    default:
        break;
    }
}

/* After the operation: the fault may change the output, once it is there. */
static int after(cb_backend *b, const launch *l, int rc)
{
    faulty_backend *f = faulty(b);
    if (rc != 0)
        return pass(b, rc);
    f->launches++;
    if (!changes_output(f, l, b->rank))
        return 0;
    if (pass(b, f->ops->wait(f->inner)) != 0)
        return -1;
    size_t bytes = l->output_count * esize_of(l);
    unsigned char *view = get_host(b, l->recv, bytes);
    if (view == NULL)
        return -1;
    if (f->kind == FAULT_SWAP && l->is_sendrecv) {
        int other = (int)(b->rank == f->arg[0] ? f->arg[1] : f->arg[0]);
        /* The lower rank sends first, so that neither waits on the other. */
        unsigned char *theirs = malloc(bytes > 0 ? bytes : 1);
        int failed = theirs == NULL ? -1
                 : b->rank < other
                     ? cb_ctl_send(b->comm, view, bytes, other, FAULT_SWAP_TAG) ||
                           cb_ctl_recv(b->comm, theirs, bytes, other, FAULT_SWAP_TAG)
                     : cb_ctl_recv(b->comm, theirs, bytes, other, FAULT_SWAP_TAG) ||
                           cb_ctl_send(b->comm, view, bytes, other, FAULT_SWAP_TAG);
        if (!failed)
            memcpy(view, theirs, bytes);
        free(theirs);
        if (failed)
            return cb_backend_fail(b, "faulty: swapping outputs with rank %d failed", other);
    } else {
        change_output(b, l, view);
    }
    return put_host(b, l->recv, view, bytes);
}

int fault_bumps_avg_sum(const faulty_backend *f, cb_redop redop, cb_dtype dtype)
{
    return f->kind == FAULT_AVGSUM && fault_active(f) && redop == CB_AVG &&
           !cb_dtype_info_of(dtype)->is_float;
}

int fault_finish_avg(faulty_backend *f, const launch *l)
{
    cb_backend *b = &f->base;
    if (l->root >= 0 && b->rank != l->root)
        return 0;   /* reduce: only the root holds the sum */
    if (pass(b, f->ops->wait(f->inner)) != 0)
        return -1;
    const cb_dtype_info *info = cb_dtype_info_of(l->dtype);
    size_t bytes = l->output_count * info->size;
    unsigned char *view = get_host(b, l->recv, bytes);
    if (view == NULL)
        return -1;
    /* The sum as a transport would have corrupted it, then avg's division,
     * truncating toward zero as the backends' integer average does. */
    for (size_t k = 0; k < l->output_count; k++)
        info->store(view, k, trunc((info->load(view, k) + (double)f->arg[0]) / b->nranks));
    return put_host(b, l->recv, view, bytes);
}

/* A world rank's place in [first, first + width). */
static int in_range(int world, long first, long width)
{
    return world >= first && world < first + width;
}

void fault_delay(const faulty_backend *f, int peer)
{
    long ms = 0;
    if (!fault_active(f))
        return;
    if (f->kind == FAULT_SLOW && f->world_rank >= f->arg[0] && f->world_rank <= f->arg[1])
        ms = f->arg[2];
    if (f->kind == FAULT_SLOWLINK && peer >= 0) {
        /* The peer's world rank: the link is named by world ranks. */
        int peer_world = f->world_of != NULL && peer < f->base.nranks ? f->world_of[peer] : -1;
        long a = f->arg[0], b = f->arg[1], w = f->arg[2];
        if ((in_range(f->world_rank, a, w) && in_range(peer_world, b, w)) ||
            (in_range(f->world_rank, b, w) && in_range(peer_world, a, w)))
            ms = f->arg[3];
    }
    if (ms > 0)
        nanosleep(&(struct timespec){.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L}, NULL);
}

int fault_active(const faulty_backend *f)
{
    return f->timed_only ? f->timing : f->untimed_only ? !f->timing : 1;
}

int fault_before(faulty_backend *f, launch *l)
{
    return fault_active(f) ? before(&f->base, l) : 0;
}

int fault_after(faulty_backend *f, const launch *l, int rc)
{
    return fault_active(f) ? after(&f->base, l, rc) : fault_pass(f, rc);
}
