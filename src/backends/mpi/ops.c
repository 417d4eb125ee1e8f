/*
 * MPI backend: host buffers, MPI collectives on the benchmark communicator,
 * MPI_Wtime. Runs anywhere MPI runs, and gives the NCCL figures a baseline.
 * This file: the ops table, set-up and tear-down, memory and copies.
 * types.c: datatypes and reductions; collectives.c: the collectives;
 * timing.c: the clock and -o comm_init; quirks.c: what MPI libraries get
 * wrong.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/mpi/mpi_backend.h"
#include "backends/mpi/quirks.h"
#include "control/mpi.h"
#include "host/sysinfo.h"

/* 0, or -1 with a line in b->error naming the call, its place and MPI's error. */
int cb_mpi_check(cb_backend *b, int code, const char *call, const char *file, int line)
{
    if (code == MPI_SUCCESS)
        return 0;
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(code, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "error %d", code);
    const char *base = strrchr(file, '/');
    return cb_backend_fail(b, "%.*s failed (%s:%d): %s", (int)strcspn(call, "("), call,
                           base != NULL ? base + 1 : file, line, text);
}

static int mpi_usable(char *why, size_t why_len)
{
    (void)why;
    (void)why_len;
    return 1;
}

/* A communicator of our own, whose errors come back to us so that they are
 * reported as ours; the caller's keeps its handler. Collective over comm. */
static int mpi_start(mpi_backend *mb, cb_ctl *ctl)
{
    mb->root_first = MPI_COMM_NULL;
    mb->base.comm = ctl;
    if (MPI_CALL(&mb->base, MPI_Comm_dup(cb_ctl_mpi_comm(ctl), &mb->comm)) != 0) {
        mb->comm = MPI_COMM_NULL;
        return -1;
    }
    MPI_Comm_set_errhandler(mb->comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(mb->comm, &mb->base.rank);
    MPI_Comm_size(mb->comm, &mb->base.nranks);
    mb->reduce_root_first = cb_mpi_reduce_root_first_on(&mb->base);
    return cb_mpi_create_types(mb);
}

static int mpi_init(cb_ctl *comm, const cb_backend_config *config, cb_backend **out)
{
    (void)config;
    mpi_backend *mb = calloc(1, sizeof *mb);
    *out = mb ? &mb->base : NULL;
    if (cb_backend_agree(comm, *out, mb == NULL) != 0)
        return -1;
    mb->comm = MPI_COMM_NULL;
    snprintf(mb->base.allocator, sizeof mb->base.allocator, "posix_memalign");
    return mpi_start(mb, comm);
}

static void mpi_fini(cb_backend *b, int aborting);

static int mpi_split(cb_backend *b, int color, int key, cb_backend **out)
{
    *out = NULL;
    mpi_backend *mb = color >= 0 ? calloc(1, sizeof *mb) : NULL;
    if (color >= 0 && mb == NULL)
        cb_backend_fail(b, "out of memory for a sub-communicator's backend");
    if (cb_backend_agree(b->comm, b, color >= 0 && mb == NULL) != 0)
        return -1;
    cb_ctl *sub = NULL;
    int failed = cb_ctl_split(b->comm, color, key, &sub) != 0;
    if (failed)
        cb_backend_fail(b, "the control plane could not split the ranks");
    if (!failed && mb != NULL) {
        mb->base.ops = b->ops;
        mb->owns_ctl = 1;
        failed = mpi_start(mb, sub) != 0;
        sub = NULL;   /* mb's now, freed with it */
        if (failed)
            snprintf(b->error, sizeof b->error, "%s", mb->base.error);
    }
    cb_ctl_free(&sub);
    if (cb_backend_agree(b->comm, b, failed) != 0) {
        if (mb != NULL)
            mpi_fini(&mb->base, 1);
        return -1;
    }
    *out = mb ? &mb->base : NULL;
    return 0;
}

static void mpi_fini(cb_backend *b, int aborting)
{
    (void)aborting;
    mpi_backend *mb = (mpi_backend *)b;
    cb_mpi_free_types(mb);
    if (mb->root_first != MPI_COMM_NULL)
        MPI_Comm_free(&mb->root_first);
    if (mb->comm != MPI_COMM_NULL)
        MPI_Comm_free(&mb->comm);
    if (mb->owns_ctl)
        cb_ctl_free(&b->comm);
    free(mb->marks);
    free(mb->work);
    free(mb);
}

static int mpi_describe(cb_backend *b, cb_device_desc *desc)
{
    (void)b;
    desc->index = -1;
    snprintf(desc->bus_id, sizeof desc->bus_id, "-");
    cb_sysinfo_cpu_model(desc->model, sizeof desc->model);
    cb_ctl_describe(b->comm, desc->library, sizeof desc->library);
    return 0;
}

static int mpi_memory_available(cb_backend *b, size_t *bytes)
{
    size_t available = cb_sysinfo_memory_available();
    if (available == 0)
        return cb_backend_fail(b, "cannot read the available memory from /proc/meminfo");
    int local_ranks = cb_sysinfo_local_ranks(b->comm);
    *bytes = available / (size_t)(local_ranks > 0 ? local_ranks : 1);
    return 0;
}

static int mpi_alloc(cb_backend *b, size_t bytes, void **ptr)
{
    void *p = NULL;
    size_t rounded = (bytes + 4095) & ~(size_t)4095;
    if (rounded == 0 || posix_memalign(&p, 4096, rounded) != 0)
        return cb_backend_fail(b, "cannot allocate %zu bytes of host memory", bytes);
    memset(p, 0, rounded);
    *ptr = p;
    return 0;
}

static void mpi_free(cb_backend *b, void *ptr)
{
    (void)b;
    free(ptr);
}

static int mpi_copy(cb_backend *b, void *dst, const void *src, size_t bytes)
{
    (void)b;
    if (dst != src)
        memcpy(dst, src, bytes);
    return 0;
}

static int mpi_copy2d(cb_backend *b, void *dst, size_t pitch_dst, const void *src,
                      size_t pitch_src, size_t width, size_t height)
{
    (void)b;
    for (size_t row = 0; row < height; row++)
        memcpy((char *)dst + row * pitch_dst, (const char *)src + row * pitch_src, width);
    return 0;
}

static int mpi_supports(cb_backend *b, cb_dtype dtype, cb_redop redop, char *why, size_t why_len)
{
    if (cb_mpi_type_of(b, dtype) == MPI_DATATYPE_NULL) {
        snprintf(why, why_len, "MPI backend has no %s", cb_dtype_info_of(dtype)->name);
        return 0;
    }
    if (redop != CB_REDOP_NONE && cb_mpi_op_of(b, dtype, redop) == MPI_OP_NULL) {
        snprintf(why, why_len, "MPI backend has no %s reduction", cb_redop_name(redop));
        return 0;
    }
    return 1;
}

/* ring_allreduce's host buffer: in use while it calls other primitives. */
static void *mpi_host_scratch(cb_backend *b, size_t bytes)
{
    mpi_backend *mb = (mpi_backend *)b;
    if (mb->work_bytes < bytes) {
        void *bigger = realloc(mb->work, bytes);
        if (bigger == NULL) {
            cb_backend_fail(b, "cannot allocate %zu bytes of host scratch memory", bytes);
            return NULL;
        }
        mb->work = bigger;
        mb->work_bytes = bytes;
    }
    return mb->work;
}

static int mpi_wait(cb_backend *b)
{
    (void)b; /* MPI collectives here are blocking: nothing is in flight */
    return 0;
}

const cb_backend_ops cb_backend_mpi = {
    .name = "mpi",
    .summary = "host buffers and MPI collectives, timed with MPI_Wtime",
    .usable = mpi_usable,
    .init = mpi_init,
    .fini = mpi_fini,
    .describe = mpi_describe,
    .memory_available = mpi_memory_available,
    .mem = {
        .host_accessible = 1,
        .alloc = mpi_alloc,
        .free = mpi_free,
        .upload = mpi_copy,
        .download = mpi_copy,
    },
    .needs_mpi = 1,
    .supports = mpi_supports,
    .coll = {
        .allreduce = cb_mpi_allreduce,
        .allgather = cb_mpi_allgather,
        .reducescatter = cb_mpi_reducescatter,
        .broadcast = cb_mpi_broadcast,
        .reduce = cb_mpi_reduce,
        .alltoall = cb_mpi_alltoall,
        .gather = cb_mpi_gather,
        .scatter = cb_mpi_scatter,
        .sendrecv = cb_mpi_sendrecv,
        .alltoallv = cb_mpi_alltoallv,
        .barrier = cb_mpi_barrier,
    },
    .avg_premultiplies = 0,
    .wait = mpi_wait,
    .timing = {
        .timer_start = cb_mpi_timer_start,
        .timer_stop = cb_mpi_timer_stop,
        .timer_reserve = cb_mpi_timer_reserve,
        .timer_mark = cb_mpi_timer_mark,
        .timer_samples = cb_mpi_timer_samples,
    },
    .copy2d = mpi_copy2d,
    .split = mpi_split,
    .comm_time = cb_mpi_comm_time,
    .reduce_local = cb_mpi_reduce_local,
    .host_scratch = mpi_host_scratch,
    .repeat_check = cb_repeat_check_host,
    .repeat_promise = "MPI recommends one order but does not require it",
};
