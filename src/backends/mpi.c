/*
 * MPI backend: host buffers, MPI collectives on the benchmark communicator,
 * MPI_Wtime. Runs anywhere MPI runs, and gives the NCCL figures a baseline.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "sysinfo.h"

typedef struct mpi_backend {
    cb_backend base;  /* first: the engine sees this */
    double timer_started;
    double *marks;    /* MPI_Wtime at the end of each marked iteration */
    int nmarks;
    int marks_room;
} mpi_backend;

static MPI_Datatype mpi_type_of(cb_dtype dtype)
{
    switch (dtype) {
    case CB_INT8: return MPI_INT8_T;
    case CB_UINT8: return MPI_UINT8_T;
    case CB_INT32: return MPI_INT32_T;
    case CB_UINT32: return MPI_UINT32_T;
    case CB_INT64: return MPI_INT64_T;
    case CB_UINT64: return MPI_UINT64_T;
    case CB_FLOAT: return MPI_FLOAT;
    case CB_DOUBLE: return MPI_DOUBLE;
    default: return MPI_DATATYPE_NULL;
    }
}

static MPI_Op mpi_op_of(cb_redop redop)
{
    switch (redop) {
    case CB_SUM: return MPI_SUM;
    case CB_PROD: return MPI_PROD;
    case CB_MIN: return MPI_MIN;
    case CB_MAX: return MPI_MAX;
    default: return MPI_OP_NULL;
    }
}

/* Describe an MPI error code as one line. */
static int mpi_fail(cb_backend *b, const char *call, int code)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(code, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "error %d", code);
    return cb_backend_fail(b, "%s failed: %s", call, text);
}

static int mpi_usable(char *why, size_t why_len)
{
    (void)why;
    (void)why_len;
    return 1;
}

static int mpi_init(MPI_Comm comm, const cb_backend_config *config, cb_backend **out)
{
    (void)config;
    mpi_backend *mb = calloc(1, sizeof *mb);
    *out = mb ? &mb->base : NULL;
    if (mb == NULL)
        return -1;
    /* A communicator of our own, whose errors come back to us so that they
     * are reported as ours; the caller's keeps its handler. */
    int rc = MPI_Comm_dup(comm, &mb->base.comm);
    if (rc != MPI_SUCCESS) {
        mb->base.comm = MPI_COMM_NULL;
        return mpi_fail(&mb->base, "MPI_Comm_dup", rc);
    }
    MPI_Comm_set_errhandler(mb->base.comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(mb->base.comm, &mb->base.rank);
    MPI_Comm_size(mb->base.comm, &mb->base.nranks);
    return 0;
}

static void mpi_fini(cb_backend *b, int aborting)
{
    (void)aborting;
    if (b->comm != MPI_COMM_NULL)
        MPI_Comm_free(&b->comm);
    free(((mpi_backend *)b)->marks);
    free(b);
}

static int mpi_describe(cb_backend *b, cb_device_desc *desc)
{
    (void)b;
    desc->index = -1;
    snprintf(desc->bus_id, sizeof desc->bus_id, "-");
    cb_sysinfo_cpu_model(desc->model, sizeof desc->model);
    cb_sysinfo_mpi_library(desc->library, sizeof desc->library);
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

static int mpi_supports(cb_backend *b, cb_dtype dtype, cb_redop redop, char *why, size_t why_len)
{
    (void)b;
    if (mpi_type_of(dtype) == MPI_DATATYPE_NULL) {
        snprintf(why, why_len, "MPI backend has no %s", cb_dtype_info_of(dtype)->name);
        return 0;
    }
    if (redop != CB_REDOP_NONE && mpi_op_of(redop) == MPI_OP_NULL) {
        snprintf(why, why_len, "MPI backend has no %s reduction", cb_redop_name(redop));
        return 0;
    }
    return 1;
}

static int check_count(cb_backend *b, size_t count)
{
    if (count > INT_MAX)
        return cb_backend_fail(b, "%zu elements exceed MPI's int count limit (%d)", count, INT_MAX);
    return 0;
}

static int mpi_allreduce(cb_backend *b, const void *send, void *recv, size_t count,
                         cb_dtype dtype, cb_redop redop)
{
    if (check_count(b, count) != 0)
        return -1;
    const void *src = send == recv ? MPI_IN_PLACE : send;
    int rc = MPI_Allreduce(src, recv, (int)count, mpi_type_of(dtype), mpi_op_of(redop), b->comm);
    return rc == MPI_SUCCESS ? 0 : mpi_fail(b, "MPI_Allreduce", rc);
}

static int mpi_wait(cb_backend *b)
{
    (void)b; /* MPI collectives here are blocking: nothing is in flight */
    return 0;
}

static int mpi_timer_start(cb_backend *b)
{
    mpi_backend *mb = (mpi_backend *)b;
    mb->nmarks = 0;
    mb->timer_started = MPI_Wtime();
    return 0;
}

static int mpi_timer_stop(cb_backend *b, double *seconds)
{
    *seconds = MPI_Wtime() - ((mpi_backend *)b)->timer_started;
    return 0;
}

static int mpi_timer_reserve(cb_backend *b, int n)
{
    mpi_backend *mb = (mpi_backend *)b;
    if (n <= mb->marks_room)
        return 0;
    double *grown = realloc(mb->marks, (size_t)n * sizeof *grown);
    if (grown == NULL)
        return cb_backend_fail(b, "cannot allocate room for %d timestamps", n);
    mb->marks = grown;
    mb->marks_room = n;
    return 0;
}

/* MPI collectives here return when they are complete on this rank, so a
 * timestamp after each iteration is its completion time. */
static int mpi_timer_mark(cb_backend *b)
{
    mpi_backend *mb = (mpi_backend *)b;
    if (mb->nmarks >= mb->marks_room)
        return cb_backend_fail(b, "more timer marks than the %d reserved", mb->marks_room);
    mb->marks[mb->nmarks++] = MPI_Wtime();
    return 0;
}

static int mpi_timer_samples(cb_backend *b, double *seconds, int n)
{
    mpi_backend *mb = (mpi_backend *)b;
    if (n > mb->nmarks)
        return cb_backend_fail(b, "%d timer samples asked for, %d marked", n, mb->nmarks);
    for (int i = 0; i < n; i++)
        seconds[i] = mb->marks[i] - (i == 0 ? mb->timer_started : mb->marks[i - 1]);
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
    .host_accessible = 1,
    .alloc = mpi_alloc,
    .free = mpi_free,
    .upload = mpi_copy,
    .download = mpi_copy,
    .supports = mpi_supports,
    .allreduce = mpi_allreduce,
    .wait = mpi_wait,
    .timer_start = mpi_timer_start,
    .timer_stop = mpi_timer_stop,
    .timer_reserve = mpi_timer_reserve,
    .timer_mark = mpi_timer_mark,
    .timer_samples = mpi_timer_samples,
};
