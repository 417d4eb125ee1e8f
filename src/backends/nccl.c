/*
 * NCCL backend: one GPU per rank, chosen by the rank's place among the ranks
 * of its host; device buffers; NCCL collectives on a stream of our own, timed
 * with CUDA events on that stream. Plain C against the CUDA runtime API (we
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

/* GPU memory kept back for NCCL's own buffers and the CUDA context, never
 * offered to the benchmark: the larger of 1 GiB and a tenth of the device.
 * The engine then uses 80% of what is left for its two buffers. */
#define NCCL_HEADROOM_MIN ((size_t)1 << 30)
#define NCCL_HEADROOM_DIVISOR 10

typedef struct nccl_backend {
    cb_backend base;           /* first: the engine sees this */
    int device;                /* -1 until chosen */
    int local_rank;
    int local_ranks;
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
    default: *ok = 0; return ncclInt8;
    }
}

static ncclRedOp_t nccl_op_of(cb_redop redop, int *ok)
{
    *ok = 1;
    switch (redop) {
    case CB_SUM: return ncclSum;
    case CB_PROD: return ncclProd;
    case CB_MIN: return ncclMin;
    case CB_MAX: return ncclMax;
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

/* The rank's GPU: its place among the ranks of its host, among the devices
 * this process sees (CUDA_VISIBLE_DEVICES applies). Collective over comm. */
static int select_device(nccl_backend *nb)
{
    cb_backend *b = &nb->base;
    MPI_Comm local;
    MPI_Comm_split_type(b->comm, MPI_COMM_TYPE_SHARED, b->rank, MPI_INFO_NULL, &local);
    MPI_Comm_rank(local, &nb->local_rank);
    MPI_Comm_size(local, &nb->local_ranks);
    MPI_Comm_free(&local);

    int ndev = 0;
    if (CUDA_CALL(b, cudaGetDeviceCount(&ndev)) != 0)
        return -1;
    if (nb->local_ranks > ndev) {
        char host[MPI_MAX_PROCESSOR_NAME];
        int len = 0;
        MPI_Get_processor_name(host, &len);
        const char *visible = getenv("CUDA_VISIBLE_DEVICES");
        return cb_backend_fail(b, "host %s runs %d ranks but sees %d GPU%s "
                               "(CUDA_VISIBLE_DEVICES=%s): the nccl backend needs one GPU per "
                               "rank, so start at most %d ranks on this host",
                               host, nb->local_ranks, ndev, ndev == 1 ? "" : "s",
                               visible ? visible : "unset", ndev);
    }
    nb->device = nb->local_rank;
    return CUDA_CALL(b, cudaSetDevice(nb->device));
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

static int nccl_init(MPI_Comm comm, const cb_backend_config *config, cb_backend **out)
{
    /* -z is the engine's business: it waits between operations itself. */
    nccl_backend *nb = calloc(1, sizeof *nb);
    *out = nb ? &nb->base : NULL;
    if (cb_backend_agree(comm, *out, nb == NULL) != 0)
        return -1;
    nb->base.comm = comm;
    nb->device = -1;
    nb->config = *config;
    MPI_Comm_rank(comm, &nb->base.rank);
    MPI_Comm_size(comm, &nb->base.nranks);
    if (cb_backend_agree(comm, &nb->base, select_device(nb) != 0) != 0 ||
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
    nccl_graph_free(b);
    if (nb->comm != NULL) {
        /* Abort does not wait for the other ranks, which may be gone. */
        if (aborting)
            ncclCommAbort(nb->comm);
        else
            ncclCommDestroy(nb->comm);
    }
    for (int i = 0; i < nb->marks_room; i++)
        cudaEventDestroy(nb->marks[i]);
    free(nb->marks);
    if (nb->have_stop)
        cudaEventDestroy(nb->stop);
    if (nb->have_start)
        cudaEventDestroy(nb->start);
    if (nb->have_stream)
        cudaStreamDestroy(nb->stream);
    free(nb);
}

/* From the watchdog thread: NCCL documents ncclCommAbort as the way to end a
 * communicator whose operations hang. */
static void nccl_abort(cb_backend *b)
{
    nccl_backend *nb = (nccl_backend *)b;
    if (nb->comm != NULL)
        ncclCommAbort(nb->comm);
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
    size_t free_bytes = 0, total = 0;
    if (CUDA_CALL(b, cudaMemGetInfo(&free_bytes, &total)) != 0)
        return -1;
    size_t headroom = total / NCCL_HEADROOM_DIVISOR;
    if (headroom < NCCL_HEADROOM_MIN)
        headroom = NCCL_HEADROOM_MIN;
    *bytes = free_bytes > headroom ? free_bytes - headroom : 0;
    return 0;
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
        ncclResult_t async = ncclSuccess;
        if (NCCL_CALL(b, nb->comm, ncclCommGetAsyncError(nb->comm, &async)) != 0)
            return -1;
        if (async != ncclSuccess && async != ncclInProgress) {
            const char *detail = nccl_last_error(nb->comm);
            int has_detail = detail[0] != '\0';
            cb_backend_fail(b, "NCCL reported an asynchronous error: %s%s%s",
                            ncclGetErrorString(async), has_detail ? ": " : "",
                            has_detail ? detail : "");
            /* Kernels of a failed communicator may never finish: abort it
             * now, so that freeing the buffers does not wait on them. */
            ncclCommAbort(nb->comm);
            nb->comm = NULL;
            return -1;
        }
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
    (void)b;
    int ok = 0;
    nccl_type_of(dtype, &ok);
    if (!ok) {
        snprintf(why, why_len, "NCCL backend has no %s", cb_dtype_info_of(dtype)->name);
        return 0;
    }
    if (redop != CB_REDOP_NONE) {
        nccl_op_of(redop, &ok);
        if (!ok) {
            snprintf(why, why_len, "NCCL backend has no %s reduction", cb_redop_name(redop));
            return 0;
        }
    }
    return 1;
}

static int nccl_allreduce(cb_backend *b, const void *send, void *recv, size_t count,
                          cb_dtype dtype, cb_redop redop)
{
    nccl_backend *nb = (nccl_backend *)b;
    int type_ok = 0, op_ok = 0;
    ncclDataType_t type = nccl_type_of(dtype, &type_ok);
    ncclRedOp_t op = nccl_op_of(redop, &op_ok);
    if (!type_ok || !op_ok)
        return cb_backend_fail(b, "NCCL backend cannot reduce %s with %s",
                               cb_dtype_info_of(dtype)->name, cb_redop_name(redop));
    return NCCL_CALL(b, nb->comm,
                     ncclAllReduce(send, recv, count, type, op, nb->comm, nb->stream));
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
};
