/*
 * NCCL backend: one GPU per rank, chosen in nccl_device.c; device buffers;
 * NCCL collectives on a stream of our own, timed with CUDA events on that
 * stream. Plain C against the CUDA runtime API (we
 * launch no kernels of our own, so nvcc is not needed).
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

#include "backend.h"
#include "nccl_api.h"
#include "nccl_device.h"
#include "parse.h"
#include "sysinfo.h"

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

/* In-place alltoall and sendrecv copy their input to a scratch buffer of
 * this size first, in rounds when the input is larger. Testing only: the
 * variable below sets another size (see nccl-collbench(1), ENVIRONMENT). */
#define CB_NCCL_SCRATCH_BYTES ((size_t)64 << 20)
#define CB_NCCL_SCRATCH_ENV "NCCL_COLLBENCH_TEST_SCRATCH_BYTES"

typedef struct nccl_backend {
    cb_backend base;           /* first: the engine sees this */
    int device;                /* -1 until chosen */
    int local_rank;
    int local_ranks;
    int device_sharers;        /* ranks on this machine using this GPU, itself included */
    cudaStream_t stream;
    cudaEvent_t start;
    cudaEvent_t stop;
    int have_stream;
    int have_start;
    int have_stop;
    ncclComm_t comm;           /* NULL until initialised */
    cudaEvent_t *marks;        /* recorded at the end of marked iterations */
    int nmarks;
    int marks_room;
    int marks_seen;            /* marks seen complete while waiting */
    cb_backend_config config;
    /* -G: the recording in progress or the one being launched */
    int capturing;
    cudaGraph_t graph;
    cudaGraphExec_t graph_exec;
    int library_version;       /* ncclGetVersion, which may differ from the header */
    int compute_capability;    /* major * 10 + minor of the rank's device */
    /* premulsum's operators, one per datatype, made on first use */
    ncclRedOp_t premulsum[CB_DTYPE_COUNT];
    int have_premulsum[CB_DTYPE_COUNT];
    /* A copy of the input for in-place alltoall and sendrecv, whose
     * point-to-point sends would otherwise read what the receives write;
     * made on first use, or before a capture (a graph cannot hold cudaMalloc). */
    void *scratch;
    size_t scratch_bytes;
    /* A backend made by split has a parent: its MPI communicator is its own
     * to free; the stream and events are the parent's, and the parent, which
     * outlives it, watches its communicator for asynchronous errors while
     * waiting. */
    struct nccl_backend *parent;
    struct nccl_backend *first_split;   /* live splits of this backend */
    struct nccl_backend *next_split;
} nccl_backend;

/* "cudaFoo(a, b)" and "dir/nccl.c" as "cudaFoo" and "nccl.c" in messages. */
static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static int cuda_check(cb_backend *b, cudaError_t err, const char *call, const char *file, int line)
{
    if (err == cudaSuccess)
        return 0;
    return cb_backend_fail(b, "%.*s failed (%s:%d): %s", (int)strcspn(call, "("), call,
                           base_name(file), line, cudaGetErrorString(err));
}

/* NCCL's own description of its last error, "" where NCCL is too old (2.13). */
static const char *nccl_last_error(ncclComm_t comm)
{
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 13, 0)
    const char *text = ncclGetLastError(comm);
    return text != NULL ? text : "";
#else
    (void)comm;
    return "";
#endif
}

static int nccl_check(cb_backend *b, ncclComm_t comm, ncclResult_t res, const char *call,
                      const char *file, int line)
{
    if (res == ncclSuccess)
        return 0;
    const char *detail = nccl_last_error(comm);
    int has_detail = detail[0] != '\0';
    return cb_backend_fail(b, "%.*s failed (%s:%d): %s%s%s", (int)strcspn(call, "("), call,
                           base_name(file), line, ncclGetErrorString(res),
                           has_detail ? ": " : "", has_detail ? detail : "");
}

/* The checking macros: 0 on success, else -1 with b->error naming the call,
 * the source line and the library's own error string. */
#define CUDA_CALL(b, call) cuda_check((b), (call), #call, __FILE__, __LINE__)
#define NCCL_CALL(b, comm, call) nccl_check((b), (comm), (call), #call, __FILE__, __LINE__)

/* NCCL's version code as x.y.z (codes before 2.9 used a narrower scheme). */
static void nccl_version_text(int code, char *buf, size_t len)
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
    cudaError_t err = cudaGetDeviceCount(&n);
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

static int create_comm(nccl_backend *nb)
{
    cb_backend *b = &nb->base;
    ncclUniqueId id;
    memset(&id, 0, sizeof id);
    int failed = b->rank == 0 && NCCL_CALL(b, NULL, ncclGetUniqueId(&id)) != 0;
    if (cb_backend_agree(b->comm, b, failed) != 0)
        return -1;
    MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, b->comm);
    ncclComm_t comm = NULL;
    failed = NCCL_CALL(b, NULL, ncclCommInitRank(&comm, b->nranks, id, b->rank)) != 0;
    nb->comm = failed ? NULL : comm;
    return cb_backend_agree(b->comm, b, failed);
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

static int nccl_init(MPI_Comm comm, const cb_backend_config *config, cb_backend **out)
{
    /* -z is the engine's business: it waits between operations itself. */
    nccl_backend *nb = calloc(1, sizeof *nb);
    *out = nb ? &nb->base : NULL;
    if (cb_backend_agree(config->run_comm, *out, nb == NULL) != 0)
        return -1;
    nb->base.comm = comm;
    nb->device = -1;
    nb->config = *config;
    MPI_Comm_rank(comm, &nb->base.rank);
    MPI_Comm_size(comm, &nb->base.nranks);
    /* The device is chosen over the whole run, before any --split. */
    cb_nccl_device chosen;
    if (cb_nccl_device_choose(&nb->base, config->run_comm, &chosen) != 0)
        return -1;
    nb->device = chosen.device;
    nb->local_rank = chosen.local_rank;
    nb->local_ranks = chosen.local_ranks;
    nb->device_sharers = chosen.sharers;
    if (cb_backend_agree(comm, &nb->base, read_capabilities(nb) != 0) != 0 ||
        cb_backend_agree(comm, &nb->base, create_stream(nb) != 0) != 0)
        return -1;
    return create_comm(nb);
}

static void nccl_graph_free(cb_backend *b)
{
    nccl_backend *nb = (nccl_backend *)b;
    if (nb->capturing) {
        cudaGraph_t unfinished = NULL;
        if (cudaStreamEndCapture(nb->stream, &unfinished) == cudaSuccess && unfinished != NULL)
            cudaGraphDestroy(unfinished);
        nb->capturing = 0;
    }
    if (nb->graph_exec != NULL)
        cudaGraphExecDestroy(nb->graph_exec);
    if (nb->graph != NULL)
        cudaGraphDestroy(nb->graph);
    nb->graph_exec = NULL;
    nb->graph = NULL;
}

static void nccl_fini(cb_backend *b, int aborting)
{
    nccl_backend *nb = (nccl_backend *)b;
    if (nb->parent != NULL) {
        nccl_backend **link = &nb->parent->first_split;
        while (*link != NULL && *link != nb)
            link = &(*link)->next_split;
        if (*link == nb)
            *link = nb->next_split;
    }
    nccl_graph_free(b);
    if (nb->comm != NULL) {
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 11, 0)
        /* An aborted communicator takes its operators with it. */
        for (int t = 0; t < CB_DTYPE_COUNT && !aborting; t++)
            if (nb->have_premulsum[t])
                ncclRedOpDestroy(nb->premulsum[t], nb->comm);
#endif
        /* Abort does not wait for the other ranks, which may be gone. */
        if (aborting)
            ncclCommAbort(nb->comm);
        else
            ncclCommDestroy(nb->comm);
    }
    if (nb->scratch != NULL)
        cudaFree(nb->scratch);
    for (int i = 0; i < nb->marks_room; i++)
        cudaEventDestroy(nb->marks[i]);
    free(nb->marks);
    if (nb->have_stop)
        cudaEventDestroy(nb->stop);
    if (nb->have_start)
        cudaEventDestroy(nb->start);
    if (nb->have_stream)
        cudaStreamDestroy(nb->stream);
    if (nb->parent != NULL && b->comm != MPI_COMM_NULL)
        MPI_Comm_free(&b->comm);
    free(nb);
}

#define CB_NCCL_FIRST_SPLIT NCCL_VERSION(2, 18, 0)

/* A communicator over some of b's ranks with ncclCommSplit, launching on
 * b's stream so that b's events time its operations and b's wait covers
 * them; an MPI communicator of the same ranks beside it for agreement. */
static int nccl_split(cb_backend *b, int color, int key, cb_backend **out)
{
    nccl_backend *parent = (nccl_backend *)b;
    *out = NULL;
    int too_old = NCCL_VERSION_CODE < CB_NCCL_FIRST_SPLIT ||
                  parent->library_version < CB_NCCL_FIRST_SPLIT;
    if (too_old) {
        char version[32];
        nccl_version_text(parent->library_version, version, sizeof version);
        cb_backend_fail(b, "NCCL %s has no ncclCommSplit (2.18 or later needed)", version);
    }
    if (cb_backend_agree(b->comm, b, too_old) != 0)
        return -1;
    nccl_backend *nb = color >= 0 ? calloc(1, sizeof *nb) : NULL;
    if (color >= 0 && nb == NULL)
        cb_backend_fail(b, "out of memory for a sub-communicator's backend");
    if (cb_backend_agree(b->comm, b, color >= 0 && nb == NULL) != 0)
        return -1;
    MPI_Comm sub = MPI_COMM_NULL;
    MPI_Comm_split(b->comm, color >= 0 ? color : MPI_UNDEFINED, key, &sub);
    ncclComm_t comm = NULL;
    int failed = 0;
#if NCCL_VERSION_CODE >= CB_NCCL_FIRST_SPLIT
    failed = NCCL_CALL(b, parent->comm,
                       ncclCommSplit(parent->comm, color >= 0 ? color : NCCL_SPLIT_NOCOLOR, key,
                                     &comm, NULL)) != 0;
#endif
    if (nb != NULL) {
        nb->base.ops = b->ops;
        nb->base.comm = sub;
        if (sub != MPI_COMM_NULL) {
            MPI_Comm_rank(sub, &nb->base.rank);
            MPI_Comm_size(sub, &nb->base.nranks);
        }
        nb->parent = parent;
        nb->comm = comm;
        nb->device = parent->device;
        nb->local_rank = parent->local_rank;
        nb->local_ranks = parent->local_ranks;
        nb->device_sharers = parent->device_sharers;
        nb->stream = parent->stream;
        nb->config = parent->config;
        nb->library_version = parent->library_version;
        nb->compute_capability = parent->compute_capability;
    }
    if (cb_backend_agree(b->comm, b, failed) != 0) {
        if (nb != NULL)
            nccl_fini(&nb->base, 1);
        return -1;
    }
    if (nb != NULL) {
        nb->next_split = parent->first_split;
        parent->first_split = nb;
    }
    *out = nb != NULL ? &nb->base : NULL;
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

/* From the watchdog thread: NCCL documents ncclCommAbort as the way to end a
 * communicator whose operations hang. */
static void nccl_abort(cb_backend *b)
{
    nccl_backend *nb = (nccl_backend *)b;
    if (nb->comm != NULL)
        ncclCommAbort(nb->comm);
    for (nccl_backend *split = nb->first_split; split != NULL; split = split->next_split)
        if (split->comm != NULL)
            ncclCommAbort(split->comm);
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
    nccl_version_text(code, version, sizeof version);
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
        nccl_version_text(library, library_text, sizeof library_text);
    nccl_version_text(NCCL_VERSION_CODE, header_text, sizeof header_text);
    if (cudaRuntimeGetVersion(&runtime) == cudaSuccess)
        cuda_version_text(runtime, runtime_text, sizeof runtime_text);
    if (cudaDriverGetVersion(&driver) == cudaSuccess)
        cuda_version_text(driver, driver_text, sizeof driver_text);
    snprintf(buf, len, "NCCL library %s, header %s; CUDA runtime %s, driver %s", library_text,
             header_text, runtime_text, driver_text);
}

static int nccl_memory_available(cb_backend *b, size_t *bytes)
{
    nccl_backend *nb = (nccl_backend *)b;
    size_t free_bytes = 0, total = 0;
    if (CUDA_CALL(b, cudaMemGetInfo(&free_bytes, &total)) != 0)
        return -1;
    size_t headroom = total / NCCL_HEADROOM_DIVISOR;
    if (headroom < NCCL_HEADROOM_MIN)
        headroom = NCCL_HEADROOM_MIN;
    *bytes = free_bytes > headroom ? free_bytes - headroom : 0;
    *bytes /= (size_t)(nb->device_sharers > 1 ? nb->device_sharers : 1);
    return 0;
}

/* -1 with b->error set when owner's communicator reports an asynchronous
 * error; the communicator is then aborted, since kernels of a failed
 * communicator may never finish and freeing the buffers would wait on them. */
static int async_failed(cb_backend *b, nccl_backend *owner)
{
    ncclResult_t async = ncclSuccess;
    if (NCCL_CALL(b, owner->comm, ncclCommGetAsyncError(owner->comm, &async)) != 0)
        return -1;
    if (async == ncclSuccess || async == ncclInProgress)
        return 0;
    const char *detail = nccl_last_error(owner->comm);
    int has_detail = detail[0] != '\0';
    cb_backend_fail(b, "NCCL reported an asynchronous error%s: %s%s%s",
                    owner->parent != NULL ? " in a split communicator" : "",
                    ncclGetErrorString(async), has_detail ? ": " : "", has_detail ? detail : "");
    ncclCommAbort(owner->comm);
    owner->comm = NULL;
    return -1;
}

/* Spin until the event (or, when it is NULL, the whole stream) has
 * completed, watching NCCL's asynchronous error state meanwhile: a
 * communicator that failed is reported instead of waited on forever. */
static int poll_complete(nccl_backend *nb, cudaEvent_t event)
{
    cb_backend *b = &nb->base;
    if (nb->comm == NULL)
        return cb_backend_fail(b, "the NCCL communicator was aborted after an earlier error");
    for (;;) {
        /* This backend's communicator, then those split from it, whose
         * operations run on the same stream. */
        if (async_failed(b, nb) != 0)
            return -1;
        for (nccl_backend *split = nb->first_split; split != NULL; split = split->next_split)
            if (split->comm != NULL && async_failed(b, split) != 0)
                return -1;
        /* Iterations completing count as progress for the watchdog, so a
         * long queue of them is not taken for a hang. */
        while (nb->config.progress != NULL && nb->marks_seen < nb->nmarks &&
               cudaEventQuery(nb->marks[nb->marks_seen]) == cudaSuccess) {
            nb->marks_seen++;
            nb->config.progress(nb->config.progress_ctx);
        }
        cudaError_t done = event != NULL ? cudaEventQuery(event) : cudaStreamQuery(nb->stream);
        if (done == cudaSuccess)
            return 0;
        if (done != cudaErrorNotReady)
            return cuda_check(b, done, event != NULL ? "cudaEventQuery" : "cudaStreamQuery",
                              __FILE__, __LINE__);
    }
}

static int nccl_wait(cb_backend *b)
{
    return poll_complete((nccl_backend *)b, NULL);
}

static int nccl_alloc(cb_backend *b, size_t bytes, void **ptr)
{
    nccl_backend *nb = (nccl_backend *)b;
    void *p = NULL;
    if (CUDA_CALL(b, cudaMalloc(&p, bytes)) != 0)
        return -1;
    if (CUDA_CALL(b, cudaMemsetAsync(p, 0, bytes, nb->stream)) != 0 || nccl_wait(b) != 0) {
        cudaFree(p);
        return -1;
    }
    *ptr = p;
    return 0;
}

static void nccl_free(cb_backend *b, void *ptr)
{
    (void)b;
    cudaFree(ptr);
}

static int nccl_upload(cb_backend *b, void *dst, const void *src, size_t bytes)
{
    nccl_backend *nb = (nccl_backend *)b;
    if (CUDA_CALL(b, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, nb->stream)) != 0)
        return -1;
    return nccl_wait(b);
}

static int nccl_download(cb_backend *b, void *dst, const void *src, size_t bytes)
{
    nccl_backend *nb = (nccl_backend *)b;
    if (CUDA_CALL(b, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, nb->stream)) != 0)
        return -1;
    return nccl_wait(b);
}

static int nccl_supports(cb_backend *b, cb_dtype dtype, cb_redop redop, char *why,
                         size_t why_len)
{
    nccl_backend *nb = (nccl_backend *)b;
    char version[32];
    nccl_version_text(nb->library_version, version, sizeof version);
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
            nccl_version_text(NCCL_VERSION_CODE, header, sizeof header);
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
static int nccl_type(cb_backend *b, cb_dtype dtype, ncclDataType_t *type)
{
    int ok = 0;
    *type = nccl_type_of(dtype, &ok);
    return ok ? 0 : cb_backend_fail(b, "NCCL backend has no %s", cb_dtype_info_of(dtype)->name);
}

static int nccl_allreduce(cb_backend *b, const void *send, void *recv, size_t count,
                          cb_dtype dtype, cb_redop redop)
{
    nccl_backend *nb = (nccl_backend *)b;
    ncclDataType_t type;
    ncclRedOp_t op;
    if (nccl_type(b, dtype, &type) != 0 || nccl_op(nb, dtype, redop, &op) != 0)
        return -1;
    return NCCL_CALL(b, nb->comm,
                     ncclAllReduce(send, recv, count, type, op, nb->comm, nb->stream));
}

static int nccl_allgather(cb_backend *b, const void *send, void *recv, size_t count,
                          cb_dtype dtype)
{
    nccl_backend *nb = (nccl_backend *)b;
    ncclDataType_t type;
    if (nccl_type(b, dtype, &type) != 0)
        return -1;
    return NCCL_CALL(b, nb->comm, ncclAllGather(send, recv, count, type, nb->comm, nb->stream));
}

static int nccl_reducescatter(cb_backend *b, const void *send, void *recv, size_t count,
                              cb_dtype dtype, cb_redop redop)
{
    nccl_backend *nb = (nccl_backend *)b;
    ncclDataType_t type;
    ncclRedOp_t op;
    if (nccl_type(b, dtype, &type) != 0 || nccl_op(nb, dtype, redop, &op) != 0)
        return -1;
    return NCCL_CALL(b, nb->comm,
                     ncclReduceScatter(send, recv, count, type, op, nb->comm, nb->stream));
}

static int nccl_broadcast(cb_backend *b, const void *send, void *recv, size_t count,
                          cb_dtype dtype, int root)
{
    nccl_backend *nb = (nccl_backend *)b;
    ncclDataType_t type;
    if (nccl_type(b, dtype, &type) != 0)
        return -1;
    return NCCL_CALL(b, nb->comm,
                     ncclBroadcast(send, recv, count, type, root, nb->comm, nb->stream));
}

static int nccl_reduce(cb_backend *b, const void *send, void *recv, size_t count,
                       cb_dtype dtype, cb_redop redop, int root)
{
    nccl_backend *nb = (nccl_backend *)b;
    ncclDataType_t type;
    ncclRedOp_t op;
    if (nccl_type(b, dtype, &type) != 0 || nccl_op(nb, dtype, redop, &op) != 0)
        return -1;
    return NCCL_CALL(b, nb->comm,
                     ncclReduce(send, recv, count, type, op, root, nb->comm, nb->stream));
}

/* The point-to-point collectives: sends and receives of one operation in one
 * group, nested inside the engine's group for -m. */
static int p2p_send(nccl_backend *nb, const void *buf, size_t count, ncclDataType_t type,
                    int peer)
{
    return NCCL_CALL(&nb->base, nb->comm,
                     ncclSend(buf, count, type, peer, nb->comm, nb->stream));
}

static int p2p_recv(nccl_backend *nb, void *buf, size_t count, ncclDataType_t type, int peer)
{
    return NCCL_CALL(&nb->base, nb->comm,
                     ncclRecv(buf, count, type, peer, nb->comm, nb->stream));
}

static int group_start(nccl_backend *nb)
{
    return NCCL_CALL(&nb->base, nb->comm, ncclGroupStart());
}

/* End a started group, also after a failure inside it, so that NCCL's group
 * state stays balanced; returns the first failure. */
static int group_end(nccl_backend *nb, int rc)
{
    int end_rc = NCCL_CALL(&nb->base, nb->comm, ncclGroupEnd());
    return rc != 0 ? rc : end_rc;
}

/* The scratch buffer of in-place alltoall and sendrecv, made once. */
static int ensure_scratch(nccl_backend *nb)
{
    cb_backend *b = &nb->base;
    if (nb->scratch != NULL)
        return 0;
    size_t bytes = CB_NCCL_SCRATCH_BYTES;
    uint64_t wanted = 0;
    const char *text = getenv(CB_NCCL_SCRATCH_ENV);
    if (text != NULL && cb_parse_bytes(text, &wanted) == 0 && wanted > 0)
        bytes = (size_t)wanted;
    if (CUDA_CALL(b, cudaMalloc(&nb->scratch, bytes)) != 0) {
        nb->scratch = NULL;
        return -1;
    }
    nb->scratch_bytes = bytes;
    return 0;
}

static int copy_on_stream(nccl_backend *nb, void *dst, const void *src, size_t bytes)
{
    return CUDA_CALL(&nb->base,
                     cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, nb->stream));
}

/* In-place alltoall: in rounds of as many elements per peer as the scratch
 * buffer holds, copy that part of every block to the scratch buffer (on the
 * stream, inside the timed operation), then send it from there while the
 * receives land in place. */
static int alltoall_in_place(nccl_backend *nb, void *buf, size_t count, size_t esize,
                             ncclDataType_t type)
{
    cb_backend *b = &nb->base;
    size_t n = (size_t)b->nranks;
    if (ensure_scratch(nb) != 0)
        return -1;
    size_t per_peer = nb->scratch_bytes / (n * esize);
    if (per_peer == 0)
        return cb_backend_fail(b, "the %zu-byte scratch buffer holds less than one element "
                               "per rank", nb->scratch_bytes);
    char *scratch = nb->scratch, *data = buf;
    for (size_t first = 0; first < count; first += per_peer) {
        size_t m = count - first < per_peer ? count - first : per_peer;
        int rc = 0;
        if (m == count)
            rc = copy_on_stream(nb, scratch, data, n * count * esize);
        for (size_t peer = 0; peer < n && rc == 0 && m < count; peer++)
            rc = copy_on_stream(nb, scratch + peer * m * esize,
                                data + (peer * count + first) * esize, m * esize);
        if (rc != 0 || group_start(nb) != 0)
            return -1;
        for (size_t peer = 0; peer < n && rc == 0; peer++) {
            rc = p2p_send(nb, scratch + peer * m * esize, m, type, (int)peer);
            if (rc == 0)
                rc = p2p_recv(nb, data + (peer * count + first) * esize, m, type, (int)peer);
        }
        if (group_end(nb, rc) != 0)
            return -1;
    }
    return 0;
}

static int nccl_alltoall(cb_backend *b, const void *send, void *recv, size_t count,
                         cb_dtype dtype)
{
    nccl_backend *nb = (nccl_backend *)b;
    ncclDataType_t type;
    if (nccl_type(b, dtype, &type) != 0)
        return -1;
    size_t esize = cb_dtype_info_of(dtype)->size, block = count * esize;
    if (send == recv)
        return alltoall_in_place(nb, recv, count, esize, type);
    if (group_start(nb) != 0)
        return -1;
    int rc = 0;
    for (int peer = 0; peer < b->nranks && rc == 0; peer++) {
        rc = p2p_send(nb, (const char *)send + (size_t)peer * block, count, type, peer);
        if (rc == 0)
            rc = p2p_recv(nb, (char *)recv + (size_t)peer * block, count, type, peer);
    }
    return group_end(nb, rc);
}

/* In place the root's own block is already where it belongs; out of place
 * the root sends it to itself. */
static int nccl_gather(cb_backend *b, const void *send, void *recv, size_t count,
                       cb_dtype dtype, int root)
{
    nccl_backend *nb = (nccl_backend *)b;
    ncclDataType_t type;
    if (nccl_type(b, dtype, &type) != 0)
        return -1;
    size_t block = count * cb_dtype_info_of(dtype)->size;
    if (group_start(nb) != 0)
        return -1;
    if (b->rank != root)
        return group_end(nb, p2p_send(nb, send, count, type, root));
    int rc = 0;
    for (int peer = 0; peer < b->nranks && rc == 0; peer++) {
        char *slot = (char *)recv + (size_t)peer * block;
        if (peer == root && slot == send)
            continue;
        if (peer == root)
            rc = p2p_send(nb, send, count, type, root);
        if (rc == 0)
            rc = p2p_recv(nb, slot, count, type, peer);
    }
    return group_end(nb, rc);
}

static int nccl_scatter(cb_backend *b, const void *send, void *recv, size_t count,
                        cb_dtype dtype, int root)
{
    nccl_backend *nb = (nccl_backend *)b;
    ncclDataType_t type;
    if (nccl_type(b, dtype, &type) != 0)
        return -1;
    size_t block = count * cb_dtype_info_of(dtype)->size;
    if (group_start(nb) != 0)
        return -1;
    if (b->rank != root)
        return group_end(nb, p2p_recv(nb, recv, count, type, root));
    int rc = 0;
    for (int peer = 0; peer < b->nranks && rc == 0; peer++) {
        const char *slot = (const char *)send + (size_t)peer * block;
        if (peer == root && slot == recv)
            continue;
        rc = p2p_send(nb, slot, count, type, peer);
        if (rc == 0 && peer == root)
            rc = p2p_recv(nb, recv, count, type, root);
    }
    return group_end(nb, rc);
}

static int nccl_sendrecv(cb_backend *b, const void *send, void *recv, size_t count,
                         cb_dtype dtype, int send_peer, int recv_peer)
{
    nccl_backend *nb = (nccl_backend *)b;
    ncclDataType_t type;
    if (nccl_type(b, dtype, &type) != 0)
        return -1;
    if (send != recv) {
        if (group_start(nb) != 0)
            return -1;
        int rc = p2p_send(nb, send, count, type, send_peer);
        if (rc == 0)
            rc = p2p_recv(nb, recv, count, type, recv_peer);
        return group_end(nb, rc);
    }
    /* In place: through the scratch buffer, in rounds, as alltoall. */
    size_t esize = cb_dtype_info_of(dtype)->size;
    if (ensure_scratch(nb) != 0)
        return -1;
    size_t per_round = nb->scratch_bytes / esize;
    char *data = recv;
    for (size_t first = 0; first < count; first += per_round) {
        size_t m = count - first < per_round ? count - first : per_round;
        if (copy_on_stream(nb, nb->scratch, data + first * esize, m * esize) != 0 ||
            group_start(nb) != 0)
            return -1;
        int rc = p2p_send(nb, nb->scratch, m, type, send_peer);
        if (rc == 0)
            rc = p2p_recv(nb, data + first * esize, m, type, recv_peer);
        if (group_end(nb, rc) != 0)
            return -1;
    }
    return 0;
}

static int nccl_group_start(cb_backend *b)
{
    return NCCL_CALL(b, ((nccl_backend *)b)->comm, ncclGroupStart());
}

static int nccl_group_end(cb_backend *b)
{
    return NCCL_CALL(b, ((nccl_backend *)b)->comm, ncclGroupEnd());
}

static int nccl_graph_begin(cb_backend *b)
{
    nccl_backend *nb = (nccl_backend *)b;
    nccl_graph_free(b);
    if (ensure_scratch(nb) != 0)   /* no cudaMalloc once capturing */
        return -1;
    if (CUDA_CALL(b, cudaStreamBeginCapture(nb->stream, cudaStreamCaptureModeThreadLocal)) != 0)
        return -1;
    nb->capturing = 1;
    return 0;
}

static int nccl_graph_end(cb_backend *b)
{
    nccl_backend *nb = (nccl_backend *)b;
    nb->capturing = 0;
    if (CUDA_CALL(b, cudaStreamEndCapture(nb->stream, &nb->graph)) != 0)
        return -1;
    /* WithFlags: the same signature from CUDA 11.4 on, unlike cudaGraphInstantiate. */
    return CUDA_CALL(b, cudaGraphInstantiateWithFlags(&nb->graph_exec, nb->graph, 0));
}

static int nccl_graph_launch(cb_backend *b)
{
    nccl_backend *nb = (nccl_backend *)b;
    return CUDA_CALL(b, cudaGraphLaunch(nb->graph_exec, nb->stream));
}

static int nccl_timer_start(cb_backend *b)
{
    nccl_backend *nb = (nccl_backend *)b;
    nb->nmarks = 0;
    nb->marks_seen = 0;
    return CUDA_CALL(b, cudaEventRecord(nb->start, nb->stream));
}

static int nccl_timer_reserve(cb_backend *b, int n)
{
    nccl_backend *nb = (nccl_backend *)b;
    if (n <= nb->marks_room)
        return 0;
    cudaEvent_t *grown = realloc(nb->marks, (size_t)n * sizeof *grown);
    if (grown == NULL)
        return cb_backend_fail(b, "cannot allocate room for %d CUDA events", n);
    nb->marks = grown;
    while (nb->marks_room < n) {
        if (CUDA_CALL(b, cudaEventCreate(&nb->marks[nb->marks_room])) != 0)
            return -1;
        nb->marks_room++;
    }
    return 0;
}

/* An event on the stream: the GPU's time at the end of the iteration, read
 * after the span, so nothing waits inside it. */
static int nccl_timer_mark(cb_backend *b)
{
    nccl_backend *nb = (nccl_backend *)b;
    if (nb->nmarks >= nb->marks_room)
        return cb_backend_fail(b, "more timer marks than the %d reserved", nb->marks_room);
    return CUDA_CALL(b, cudaEventRecord(nb->marks[nb->nmarks++], nb->stream));
}

static int nccl_timer_samples(cb_backend *b, double *seconds, int n)
{
    nccl_backend *nb = (nccl_backend *)b;
    if (n > nb->nmarks)
        return cb_backend_fail(b, "%d timer samples asked for, %d marked", n, nb->nmarks);
    for (int i = 0; i < n; i++) {
        float ms = 0;
        cudaEvent_t from = i == 0 ? nb->start : nb->marks[i - 1];
        if (CUDA_CALL(b, cudaEventElapsedTime(&ms, from, nb->marks[i])) != 0)
            return -1;
        seconds[i] = (double)ms / 1e3;
    }
    return 0;
}

static int nccl_timer_stop(cb_backend *b, double *seconds)
{
    nccl_backend *nb = (nccl_backend *)b;
    if (CUDA_CALL(b, cudaEventRecord(nb->stop, nb->stream)) != 0 ||
        poll_complete(nb, nb->stop) != 0)
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
    if (ensure_scratch(nb) != 0)
        return -1;
    return nccl_allreduce(b, nb->scratch, nb->scratch, 1, CB_UINT32, CB_SUM);
}

const cb_backend_ops cb_backend_nccl = {
    .name = "nccl",
    .summary = "GPU buffers and NCCL collectives, one GPU per rank, timed with CUDA events",
    .usable = nccl_usable,
    .init = nccl_init,
    .fini = nccl_fini,
    .abort = nccl_abort,
    .describe = nccl_describe,
    .versions = nccl_versions,
    .memory_available = nccl_memory_available,
    .host_accessible = 0,
    .alloc = nccl_alloc,
    .free = nccl_free,
    .upload = nccl_upload,
    .download = nccl_download,
    .supports = nccl_supports,
    .allreduce = nccl_allreduce,
    .allgather = nccl_allgather,
    .reducescatter = nccl_reducescatter,
    .broadcast = nccl_broadcast,
    .reduce = nccl_reduce,
    .alltoall = nccl_alltoall,
    .gather = nccl_gather,
    .scatter = nccl_scatter,
    .sendrecv = nccl_sendrecv,
    /* NCCL computes a floating-point avg as the sum of input * fl(1/n). */
    .avg_premultiplies = 1,
    .group_start = nccl_group_start,
    .group_end = nccl_group_end,
    .graph_begin = nccl_graph_begin,
    .graph_end = nccl_graph_end,
    .graph_launch = nccl_graph_launch,
    .graph_free = nccl_graph_free,
    .wait = nccl_wait,
    .timer_start = nccl_timer_start,
    .timer_stop = nccl_timer_stop,
    .timer_reserve = nccl_timer_reserve,
    .timer_mark = nccl_timer_mark,
    .timer_samples = nccl_timer_samples,
    .copy2d = nccl_copy2d,
    .split = nccl_split,
    .barrier = nccl_barrier,
};
