/*
 * NCCL backend: one GPU per rank, chosen in nccl/device.c; device buffers;
 * NCCL collectives on a stream of our own, timed on the host clock by
 * default, or with CUDA events on that stream (--clock device). Plain C
 * against the CUDA runtime API (we launch no kernels of our own, so nvcc is
 * not needed).
 *
 * Every set-up step that can fail on one rank is agreed across ranks
 * (cb_backend_agree) before the next step that could block, so that one
 * rank's failure never leaves the others waiting in ncclCommInitRank.
 * Waiting polls the stream or event and NCCL's asynchronous error state
 * instead of blocking in cudaStreamSynchronize, so that a failed
 * communicator is reported instead of hanging.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nccl_backend.h"
#include "device.h"
#include "common/parse.h"
#include "host/sysinfo.h"

/* GPU memory kept back for NCCL's own buffers and the CUDA context, never
 * offered to the benchmark: the larger of 1 GiB and a tenth of the device.
 * The engine then uses 80% of what is left for its two buffers. */
#define NCCL_HEADROOM_MIN ((size_t)1 << 30)
#define NCCL_HEADROOM_DIVISOR 10

/* NCCL's datatype codes are part of its ABI and never change; older nccl.h
 * hide some names behind CUDA type macros, so these are spelled out. */
#define CB_NCCL_BFLOAT16 ((ncclDataType_t)9)
#define CB_NCCL_FP8_E4M3 ((ncclDataType_t)10)
#define CB_NCCL_FP8_E5M2 ((ncclDataType_t)11)
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 24, 0)
_Static_assert(CB_NCCL_BFLOAT16 == ncclBfloat16 && CB_NCCL_FP8_E4M3 == ncclFloat8e4m3 &&
                   CB_NCCL_FP8_E5M2 == ncclFloat8e5m2,
               "NCCL datatype codes");
#endif
/* The first NCCL library with each feature, and fp8's compute capability. */
#define CB_NCCL_FIRST_BFLOAT16 NCCL_VERSION(2, 10, 0)
#define CB_NCCL_FIRST_AVG NCCL_VERSION(2, 10, 0)
#define CB_NCCL_FIRST_PREMULSUM NCCL_VERSION(2, 11, 0)
#define CB_NCCL_FIRST_FP8 NCCL_VERSION(2, 24, 0)
#define CB_FP8_MIN_CAPABILITY 90   /* major * 10 + minor */

/* NCCL's version code as x.y.z (codes before 2.9 used a narrower scheme). */
void cb_nccl_version_text(int code, char *buf, size_t len)
{
    if (code >= 10000)
        snprintf(buf, len, "%d.%d.%d", code / 10000, code % 10000 / 100, code % 100);
    else
        snprintf(buf, len, "%d.%d.%d", code / 1000, code % 1000 / 100, code % 100);
}

/* CUDA's version code (1000 major + 10 minor) as major.minor. */
static void cuda_version_text(int code, char *buf, size_t len)
{
    if (code <= 0)
        snprintf(buf, len, "none");
    else
        snprintf(buf, len, "%d.%d", code / 1000, code % 1000 / 10);
}

static ncclDataType_t nccl_type_of(cb_dtype dtype, int *ok)
{
    *ok = 1;
    switch (dtype) {
    case CB_INT8: return ncclInt8;
    case CB_UINT8: return ncclUint8;
    case CB_INT32: return ncclInt32;
    case CB_UINT32: return ncclUint32;
    case CB_INT64: return ncclInt64;
    case CB_UINT64: return ncclUint64;
    case CB_FLOAT: return ncclFloat32;
    case CB_DOUBLE: return ncclFloat64;
    case CB_HALF: return ncclFloat16;
    case CB_BFLOAT16: return CB_NCCL_BFLOAT16;
    case CB_FP8_E4M3: return CB_NCCL_FP8_E4M3;
    case CB_FP8_E5M2: return CB_NCCL_FP8_E5M2;
    default: *ok = 0; return ncclInt8;
    }
}

/* The built-in operators; premulsum is made per datatype (nccl_op). */
static ncclRedOp_t nccl_op_of(cb_redop redop, int *ok)
{
    *ok = 1;
    switch (redop) {
    case CB_SUM: return ncclSum;
    case CB_PROD: return ncclProd;
    case CB_MIN: return ncclMin;
    case CB_MAX: return ncclMax;
    case CB_AVG: return ncclAvg;
    default: *ok = 0; return ncclSum;
    }
}

static int nccl_usable(char *why, size_t why_len)
{
    int n = 0;
    cudaError_t err = cb_nccl_cuda_read(cudaGetDeviceCount(&n));
    if (err != cudaSuccess) {
        snprintf(why, why_len, "no usable CUDA device (cudaGetDeviceCount: %s)",
                 cudaGetErrorString(err));
        return 0;
    }
    if (n < 1) {
        snprintf(why, why_len, "no CUDA device is visible");
        return 0;
    }
    return 1;
}

static int create_stream(nccl_backend *nb)
{
    cb_backend *b = &nb->base;
    if (CUDA_CALL(b, cudaStreamCreateWithFlags(&nb->stream, cudaStreamNonBlocking)) != 0)
        return -1;
    nb->have_stream = 1;
    if (CUDA_CALL(b, cudaEventCreate(&nb->start)) != 0)
        return -1;
    nb->have_start = 1;
    if (CUDA_CALL(b, cudaEventCreate(&nb->stop)) != 0)
        return -1;
    nb->have_stop = 1;
    return 0;
}

/* What supports() needs to know: the library's version and the device's
 * compute capability. */
static int read_capabilities(nccl_backend *nb)
{
    cb_backend *b = &nb->base;
    int major = 0, minor = 0;
    if (NCCL_CALL(b, NULL, ncclGetVersion(&nb->library_version)) != 0 ||
        CUDA_CALL(b, cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor,
                                            nb->device)) != 0 ||
        CUDA_CALL(b, cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor,
                                            nb->device)) != 0)
        return -1;
    nb->compute_capability = major * 10 + minor;
    return 0;
}

static int nccl_init(cb_ctl *comm, const cb_backend_config *config, cb_backend **out)
{
    /* -z is the engine's business: it waits between operations itself. */
    nccl_backend *nb = calloc(1, sizeof *nb);
    *out = nb ? &nb->base : NULL;
    if (cb_backend_agree(config->run_comm, *out, nb == NULL) != 0)
        return -1;
    nb->base.comm = comm;
    nb->device = -1;
    nb->config = *config;
    nb->base.rank = comm->rank;
    nb->base.nranks = comm->size;
    /* The device is chosen over the whole run, before any --split. */
    cb_nccl_device chosen;
    if (cb_nccl_device_choose(&nb->base, config->run_comm, &chosen) != 0)
        return -1;
    nb->device = chosen.device;
    nb->local_rank = chosen.local_rank;
    nb->local_ranks = chosen.local_ranks;
    nb->device_sharers = chosen.sharers;
    int failed = read_capabilities(nb) != 0;
    if (!failed)
        cb_nccl_choose_allocator(nb);
    if (cb_backend_agree(comm, &nb->base, failed) != 0 ||
        cb_backend_agree(comm, &nb->base, cb_nccl_registration_check(nb) != 0) != 0 ||
        cb_backend_agree(comm, &nb->base, create_stream(nb) != 0) != 0)
        return -1;
    /* -M: what NCCL's own set-up takes is measured from here. */
    size_t free_bytes = 0, total = 0;
    /* A failure leaves -M without this figure: tolerated. */
    if (config->memory_report &&
        cb_nccl_cuda_read(cudaMemGetInfo(&free_bytes, &total)) == cudaSuccess)
        nb->base.free_before_comm = free_bytes;
    if (cb_nccl_create_comm(nb) != 0)
        return -1;
    /* After the communicator: the kernel's waits watch it for errors. */
    if (config->repeat_check)
        cb_nccl_compare_prepare(nb);
    return 0;
}

/* On the stream, so that the copy is part of the timed operation. */
static int nccl_copy2d(cb_backend *b, void *dst, size_t pitch_dst, const void *src,
                       size_t pitch_src, size_t width, size_t height)
{
    nccl_backend *nb = (nccl_backend *)b;
    return CUDA_CALL(b, cudaMemcpy2DAsync(dst, pitch_dst, src, pitch_src, width, height,
                                          cudaMemcpyDeviceToDevice, nb->stream));
}

static int nccl_describe(cb_backend *b, cb_device_desc *desc)
{
    nccl_backend *nb = (nccl_backend *)b;
    desc->index = nb->device;
    if (CUDA_CALL(b, cudaDeviceGetPCIBusId(desc->bus_id, (int)sizeof desc->bus_id,
                                           nb->device)) != 0)
        return -1;
    struct cudaDeviceProp prop;
    memset(&prop, 0, sizeof prop);
    if (CUDA_CALL(b, cudaGetDeviceProperties(&prop, nb->device)) != 0)
        return -1;
    snprintf(desc->model, sizeof desc->model, "%.*s", (int)sizeof desc->model - 1, prop.name);
    int code = 0;
    if (NCCL_CALL(b, nb->comm, ncclGetVersion(&code)) != 0)
        return -1;
    char version[32];
    cb_nccl_version_text(code, version, sizeof version);
    snprintf(desc->library, sizeof desc->library, "NCCL %s", version);
    return 0;
}

static void nccl_versions(cb_backend *b, char *buf, size_t len)
{
    (void)b;
    int library = 0, runtime = 0, driver = 0;
    char library_text[32] = "unknown", header_text[32], runtime_text[16] = "unknown",
         driver_text[16] = "unknown";
    if (ncclGetVersion(&library) == ncclSuccess)
        cb_nccl_version_text(library, library_text, sizeof library_text);
    cb_nccl_version_text(NCCL_VERSION_CODE, header_text, sizeof header_text);
    if (cudaRuntimeGetVersion(&runtime) == cudaSuccess)
        cuda_version_text(runtime, runtime_text, sizeof runtime_text);
    if (cudaDriverGetVersion(&driver) == cudaSuccess)
        cuda_version_text(driver, driver_text, sizeof driver_text);
    snprintf(buf, len, "NCCL library %s, header %s; CUDA runtime %s, driver %s", library_text,
             header_text, runtime_text, driver_text);
}

static int warm_up_each_kind(nccl_backend *nb);

/* Measured after NCCL has made its own buffers (see warm_up_each_kind);
 * the headroom still covers the CUDA context, the communicators that
 * hier_allreduce splits off later and what NCCL allocates per size. */
static int nccl_memory_available(cb_backend *b, size_t *bytes)
{
    nccl_backend *nb = (nccl_backend *)b;
    size_t free_bytes = 0, total = 0;
    if (cb_backend_agree(b->comm, b, warm_up_each_kind(nb) != 0) != 0 ||
        CUDA_CALL(b, cudaMemGetInfo(&free_bytes, &total)) != 0)
        return -1;
    size_t headroom = total / NCCL_HEADROOM_DIVISOR;
    if (headroom < NCCL_HEADROOM_MIN)
        headroom = NCCL_HEADROOM_MIN;
    *bytes = free_bytes > headroom ? free_bytes - headroom : 0;
    *bytes /= (size_t)(nb->device_sharers > 1 ? nb->device_sharers : 1);
    return 0;
}

static int nccl_device_free(cb_backend *b, size_t *bytes)
{
    size_t total = 0;
    return CUDA_CALL(b, cudaMemGetInfo(bytes, &total));
}

static int nccl_alloc(cb_backend *b, size_t bytes, void **ptr)
{
    nccl_backend *nb = (nccl_backend *)b;
    void *p = NULL;
    if (nb->config.registration != 0)
        return cb_nccl_register_alloc(nb, bytes, ptr);
    if (cb_nccl_mem_alloc(nb, bytes, &p) != 0)
        return -1;
    if (CUDA_CALL(b, cudaMemsetAsync(p, 0, bytes, nb->stream)) != 0 || cb_nccl_wait(b) != 0) {
        cb_nccl_mem_free(nb, p);
        return -1;
    }
    *ptr = p;
    return 0;
}


static int nccl_upload(cb_backend *b, void *dst, const void *src, size_t bytes)
{
    nccl_backend *nb = (nccl_backend *)b;
    if (CUDA_CALL(b, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, nb->stream)) != 0)
        return -1;
    return cb_nccl_wait(b);
}

static int nccl_download(cb_backend *b, void *dst, const void *src, size_t bytes)
{
    nccl_backend *nb = (nccl_backend *)b;
    if (CUDA_CALL(b, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, nb->stream)) != 0)
        return -1;
    return cb_nccl_wait(b);
}

/* -B: on the GPU where the compare kernel loaded (ref is then device
 * memory, nccl/compare.c); else the output is copied to host memory and
 * compared there. bench/RESULTS.md gives both costs. */
static int nccl_repeat_check(cb_backend *b, const void *out, size_t count, size_t esize,
                             void *ref, void *scratch, int keep, size_t *differing)
{
    nccl_backend *nb = (nccl_backend *)b;
    *differing = 0;
    if (b->repeat_on_device && keep)
        return CUDA_CALL(b, cudaMemcpyAsync(ref, out, count * esize, cudaMemcpyDeviceToDevice,
                                            nb->stream)) != 0 ? -1 : cb_nccl_wait(b);
    if (b->repeat_on_device)
        return cb_nccl_compare_on_device(nb, out, ref, count, esize, differing);
    if (nccl_download(b, keep ? ref : scratch, out, count * esize) != 0)
        return -1;
    if (!keep)
        *differing = cb_count_differing(scratch, ref, count, esize);
    return 0;
}

static int nccl_supports(cb_backend *b, cb_dtype dtype, cb_redop redop, char *why,
                         size_t why_len)
{
    nccl_backend *nb = (nccl_backend *)b;
    char version[32];
    cb_nccl_version_text(nb->library_version, version, sizeof version);
    const char *type_name = cb_dtype_info_of(dtype)->name;
    int ok = 0;
    nccl_type_of(dtype, &ok);
    if (!ok) {
        snprintf(why, why_len, "NCCL backend has no %s", type_name);
        return 0;
    }
    if (dtype == CB_BFLOAT16 && nb->library_version < CB_NCCL_FIRST_BFLOAT16) {
        snprintf(why, why_len, "NCCL %s has no bfloat16 (2.10 or later needed)", version);
        return 0;
    }
    if (dtype == CB_FP8_E4M3 || dtype == CB_FP8_E5M2) {
        if (NCCL_VERSION_CODE < CB_NCCL_FIRST_FP8 || nb->library_version < CB_NCCL_FIRST_FP8) {
            char header[32];
            cb_nccl_version_text(NCCL_VERSION_CODE, header, sizeof header);
            snprintf(why, why_len, "%s needs NCCL 2.24 or later (library %s, header %s)",
                     type_name, version, header);
            return 0;
        }
        if (nb->compute_capability < CB_FP8_MIN_CAPABILITY) {
            snprintf(why, why_len, "%s needs compute capability 9.0 or later; device %d has "
                     "%d.%d", type_name, nb->device, nb->compute_capability / 10,
                     nb->compute_capability % 10);
            return 0;
        }
    }
    if (redop == CB_AVG && nb->library_version < CB_NCCL_FIRST_AVG) {
        snprintf(why, why_len, "NCCL %s has no avg (2.10 or later needed)", version);
        return 0;
    }
    if (redop == CB_PREMULSUM &&
        (NCCL_VERSION_CODE < CB_NCCL_FIRST_PREMULSUM ||
         nb->library_version < CB_NCCL_FIRST_PREMULSUM)) {
        snprintf(why, why_len, "NCCL %s has no premulsum (2.11 or later needed)", version);
        return 0;
    }
    if (redop == CB_PREMULSUM && !cb_nccl_exports_premulsum()) {
        snprintf(why, why_len, "NCCL %s has no premulsum (the library loaded does not export "
                 "ncclRedOpCreatePreMulSum)", version);
        return 0;
    }
    if (redop != CB_REDOP_NONE && redop != CB_PREMULSUM) {
        nccl_op_of(redop, &ok);
        if (!ok) {
            snprintf(why, why_len, "NCCL backend has no %s reduction", cb_redop_name(redop));
            return 0;
        }
    }
    return 1;
}

/* The NCCL operator for redop on dtype; premulsum's is made on first use
 * (scalar CB_PREMULSUM_SCALAR in the datatype, read at once) and kept until
 * fini, so that captured graphs may use it. */
static int nccl_op(nccl_backend *nb, cb_dtype dtype, cb_redop redop, ncclRedOp_t *op)
{
    cb_backend *b = &nb->base;
    if (redop == CB_PREMULSUM) {
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 11, 0)
        if (!nb->have_premulsum[dtype]) {
            int type_ok = 0;
            ncclDataType_t type = nccl_type_of(dtype, &type_ok);
            unsigned char scalar[8];
            cb_dtype_info_of(dtype)->store(scalar, 0, CB_PREMULSUM_SCALAR);
            if (NCCL_CALL(b, nb->comm,
                          ncclRedOpCreatePreMulSum(&nb->premulsum[dtype], scalar, type,
                                                   ncclScalarHostImmediate, nb->comm)) != 0)
                return -1;
            nb->have_premulsum[dtype] = 1;
        }
        *op = nb->premulsum[dtype];
        return 0;
#endif
    }
    int ok = 0;
    *op = nccl_op_of(redop, &ok);
    if (!ok)
        return cb_backend_fail(b, "NCCL backend cannot reduce with %s", cb_redop_name(redop));
    return 0;
}

/* The NCCL datatype, or -1 with the reason in b->error. */
int cb_nccl_type(cb_backend *b, cb_dtype dtype, ncclDataType_t *type)
{
    int ok = 0;
    *type = nccl_type_of(dtype, &ok);
    return ok ? 0 : cb_backend_fail(b, "NCCL backend has no %s", cb_dtype_info_of(dtype)->name);
}

/* A launch's result; a failed launch inside the engine's group (-m) ends
 * the group, which NCCL then drops, and aborts (cb_nccl_fail_in_group). */
static int launched(nccl_backend *nb, int rc)
{
    if (rc != 0 && nb->outer_group)
        cb_nccl_fail_in_group(nb, 0);
    return rc;
}

/* The collectives NCCL runs itself, launched by one function so that the
 * datatype, the operator and a failure inside -m's group are handled once. */
typedef enum nccl_native_op {
    NCCL_ALLREDUCE,
    NCCL_ALLGATHER,
    NCCL_REDUCESCATTER,
    NCCL_BROADCAST,
    NCCL_REDUCE
} nccl_native_op;

/* redop is read only by the reductions, root only by broadcast and reduce. */
static int nccl_launch(cb_backend *b, nccl_native_op which, const void *send, void *recv,
                       size_t count, cb_dtype dtype, cb_redop redop, int root)
{
    nccl_backend *nb = (nccl_backend *)b;
    int reduces = which == NCCL_ALLREDUCE || which == NCCL_REDUCESCATTER || which == NCCL_REDUCE;
    ncclDataType_t type;
    ncclRedOp_t op = ncclSum;
    if (cb_nccl_type(b, dtype, &type) != 0 || (reduces && nccl_op(nb, dtype, redop, &op) != 0))
        return -1;
    int rc = -1;
    switch (which) {
    case NCCL_ALLREDUCE:
        rc = NCCL_CALL(b, nb->comm, ncclAllReduce(send, recv, count, type, op, nb->comm,
                                                  nb->stream));
        break;
    case NCCL_ALLGATHER:
        rc = NCCL_CALL(b, nb->comm, ncclAllGather(send, recv, count, type, nb->comm, nb->stream));
        break;
    case NCCL_REDUCESCATTER:
        rc = NCCL_CALL(b, nb->comm, ncclReduceScatter(send, recv, count, type, op, nb->comm,
                                                      nb->stream));
        break;
    case NCCL_BROADCAST:
        rc = NCCL_CALL(b, nb->comm, ncclBroadcast(send, recv, count, type, root, nb->comm,
                                                  nb->stream));
        break;
    case NCCL_REDUCE:
        rc = NCCL_CALL(b, nb->comm, ncclReduce(send, recv, count, type, op, root, nb->comm,
                                               nb->stream));
        break;
    }
    return launched(nb, rc);
}

static int nccl_allreduce(cb_backend *b, const void *send, void *recv, size_t count,
                          cb_dtype dtype, cb_redop redop)
{
    return nccl_launch(b, NCCL_ALLREDUCE, send, recv, count, dtype, redop, -1);
}

static int nccl_allgather(cb_backend *b, const void *send, void *recv, size_t count,
                          cb_dtype dtype)
{
    return nccl_launch(b, NCCL_ALLGATHER, send, recv, count, dtype, CB_REDOP_NONE, -1);
}

static int nccl_reducescatter(cb_backend *b, const void *send, void *recv, size_t count,
                              cb_dtype dtype, cb_redop redop)
{
    return nccl_launch(b, NCCL_REDUCESCATTER, send, recv, count, dtype, redop, -1);
}

static int nccl_broadcast(cb_backend *b, const void *send, void *recv, size_t count,
                          cb_dtype dtype, int root)
{
    return nccl_launch(b, NCCL_BROADCAST, send, recv, count, dtype, CB_REDOP_NONE, root);
}

static int nccl_reduce(cb_backend *b, const void *send, void *recv, size_t count,
                       cb_dtype dtype, cb_redop redop, int root)
{
    return nccl_launch(b, NCCL_REDUCE, send, recv, count, dtype, redop, root);
}

static int nccl_group_start(cb_backend *b)
{
    nccl_backend *nb = (nccl_backend *)b;
    if (NCCL_CALL(b, nb->comm, ncclGroupStart()) != 0)
        return -1;
    nb->outer_group = 1;
    return 0;
}

/* The group may have been closed already by an in-place alltoall or
 * sendrecv that could not reopen it (cb_nccl_outside_group). */
static int nccl_group_end(cb_backend *b)
{
    nccl_backend *nb = (nccl_backend *)b;
    if (!nb->outer_group)
        return 0;
    nb->outer_group = 0;
    return NCCL_CALL(b, nb->comm, ncclGroupEnd());
}

static int nccl_timer_start(cb_backend *b)
{
    nccl_backend *nb = (nccl_backend *)b;
    nb->timing.nmarks = 0;
    nb->timing.marks_seen = 0;
    return CUDA_CALL(b, cudaEventRecord(nb->start, nb->stream));
}

static int nccl_timer_reserve(cb_backend *b, int n)
{
    nccl_backend *nb = (nccl_backend *)b;
    if (n <= nb->timing.marks_room)
        return 0;
    cudaEvent_t *grown = realloc(nb->timing.marks, (size_t)n * sizeof *grown);
    if (grown == NULL)
        return cb_backend_fail(b, "cannot allocate room for %d CUDA events", n);
    nb->timing.marks = grown;
    while (nb->timing.marks_room < n) {
        if (CUDA_CALL(b, cudaEventCreate(&nb->timing.marks[nb->timing.marks_room])) != 0)
            return -1;
        nb->timing.marks_room++;
    }
    return 0;
}

/* An event on the stream: the GPU's time at the end of the iteration, read
 * after the span, so nothing waits inside it. */
static int nccl_timer_mark(cb_backend *b)
{
    nccl_backend *nb = (nccl_backend *)b;
    if (nb->timing.nmarks >= nb->timing.marks_room)
        return cb_backend_fail(b, "more timer marks than the %d reserved", nb->timing.marks_room);
    return CUDA_CALL(b, cudaEventRecord(nb->timing.marks[nb->timing.nmarks++], nb->stream));
}

static int nccl_timer_samples(cb_backend *b, double *seconds, int n)
{
    nccl_backend *nb = (nccl_backend *)b;
    if (n > nb->timing.nmarks)
        return cb_backend_fail(b, "%d timer samples asked for, %d marked", n, nb->timing.nmarks);
    for (int i = 0; i < n; i++) {
        float ms = 0;
        cudaEvent_t from = i == 0 ? nb->start : nb->timing.marks[i - 1];
        if (CUDA_CALL(b, cudaEventElapsedTime(&ms, from, nb->timing.marks[i])) != 0)
            return -1;
        seconds[i] = (double)ms / 1e3;
    }
    return 0;
}

static int nccl_timer_stop(cb_backend *b, double *seconds)
{
    nccl_backend *nb = (nccl_backend *)b;
    if (CUDA_CALL(b, cudaEventRecord(nb->stop, nb->stream)) != 0 ||
        cb_nccl_poll_complete(nb, nb->stop) != 0)
        return -1;
    float ms = 0;
    if (CUDA_CALL(b, cudaEventElapsedTime(&ms, nb->start, nb->stop)) != 0)
        return -1;
    *seconds = (double)ms / 1e3;
    return 0;
}

/* NCCL has no barrier: a one-element uint32 sum all-reduce in place on the
 * scratch buffer stands in for one, as is usual. Every rank must enter it
 * before any can leave, but it also pays for one tiny reduction. */
static int nccl_barrier(cb_backend *b)
{
    nccl_backend *nb = (nccl_backend *)b;
    if (cb_nccl_ensure_scratch(nb) != 0)
        return -1;
    return nccl_allreduce(b, nb->scratch, nb->scratch, 1, CB_UINT32, CB_SUM);
}

/* NCCL 2.22 and later connect an algorithm's buffers when a task first
 * uses it (enqueue.cc, runtimeConn; group.cc, ncclCollPreconnect): one
 * operation of each kind on a byte or so per rank, before the free memory
 * is measured, makes the buffers of the algorithms NCCL picks for those
 * part of the measurement, as is the scratch buffer, allocated here too.
 * Not NVLS's: NCCL sets those up only for a task that runs NVLS, which
 * takes the Simple protocol (graph/tuning.cc, 2.28.9), rarely at a byte;
 * the headroom covers them (docs/design/nccl-contract.md, G4). Collective
 * over b's ranks: the engine asks them all at once. */
static int warm_up_each_kind(nccl_backend *nb)
{
    cb_backend *b = &nb->base;
    if (cb_backend_agree(b->comm, b, cb_nccl_ensure_scratch(nb) != 0) != 0)
        return -1;
    size_t n = (size_t)b->nranks;
    char *s = nb->scratch;
    if (nb->scratch_bytes < 2 * n)   /* only a testing size is this small */
        return 0;
    int rc = nccl_allreduce(b, s, s, 1, CB_UINT8, CB_SUM);
    if (rc == 0)
        rc = nccl_broadcast(b, s, s, 1, CB_UINT8, 0);
    if (rc == 0)
        rc = nccl_reduce(b, s, s, 1, CB_UINT8, CB_SUM, 0);
    if (rc == 0)
        rc = nccl_allgather(b, s + b->rank, s, 1, CB_UINT8);
    if (rc == 0)
        rc = nccl_reducescatter(b, s, s + b->rank, 1, CB_UINT8, CB_SUM);
    if (rc == 0)
        rc = cb_nccl_alltoall(b, s, s + n, 1, CB_UINT8);
    if (rc == 0)
        rc = cb_nccl_warm_up_native(nb);
    return rc != 0 ? -1 : cb_nccl_wait(b);
}

const cb_backend_ops cb_backend_nccl = {
    .name = "nccl",
    .summary = "GPU buffers and NCCL collectives, one GPU per rank, timed on the host "
               "clock (--clock device: CUDA events)",
    .usable = nccl_usable,
    .init = nccl_init,
    .fini = cb_nccl_fini,
    .abort = cb_nccl_abort,
    .describe = nccl_describe,
    .versions = nccl_versions,
    .memory_available = nccl_memory_available,
    .device_free = nccl_device_free,
    .mem = {
        .host_accessible = 0,
        .registers = 1,
        .alloc = nccl_alloc,
        .free = cb_nccl_free,
        .upload = nccl_upload,
        .download = nccl_download,
    },
    .supports = nccl_supports,
    .coll = {
        .allreduce = nccl_allreduce,
        .allgather = nccl_allgather,
        .reducescatter = nccl_reducescatter,
        .broadcast = nccl_broadcast,
        .reduce = nccl_reduce,
        .alltoall = cb_nccl_alltoall_chosen,
        .gather = cb_nccl_gather_chosen,
        .scatter = cb_nccl_scatter_chosen,
        .sendrecv = cb_nccl_sendrecv,
        .alltoallv = cb_nccl_alltoallv,
        .barrier = nccl_barrier,
    },
    .select_impl = cb_nccl_select_impl,
    /* NCCL computes a floating-point avg as the sum of input * fl(1/n). */
    .avg_premultiplies = 1,
    .launch = {
        .group_start = nccl_group_start,
        .group_end = nccl_group_end,
        .graph_begin = cb_nccl_graph_begin,
        .graph_end = cb_nccl_graph_end,
        .graph_launch = cb_nccl_graph_launch,
        .graph_free = cb_nccl_graph_free,
    },
    .wait = cb_nccl_wait,
    .timing = {
        .timer_start = nccl_timer_start,
        .timer_stop = nccl_timer_stop,
        .timer_reserve = nccl_timer_reserve,
        .timer_mark = nccl_timer_mark,
        .timer_samples = nccl_timer_samples,
        .marks_cost_a_call = 1,
    },
    .copy2d = nccl_copy2d,
    .split = cb_nccl_split,
    .comm_time = cb_nccl_comm_time,
    .repeat_check = nccl_repeat_check,
    .repeat_promise = "NCCL keeps one for a communicator, size and algorithm",
};
