/*
 * Stand-in for the CUDA runtime calls of the NCCL backend; see standin.h.
 * Being a fake CUDA, it keeps process-wide state as the real one does.
 */
#define _GNU_SOURCE   /* syscall, for the program's sched_yield */
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "standin.h"

#define STANDIN_DEFAULT_MEM ((size_t)16 << 30)
/* Room before each allocation for its size; also its alignment, which is
 * cudaMalloc's (256 bytes): -u's misaligned buffers are offsets from it. */
#define STANDIN_ALIGN 256

/* As in CUDA, each thread has its own current device, 0 until set. */
static _Thread_local int current_device;
static size_t allocated;
static int live[STANDIN_KINDS];
static FILE *trace_file;
static int trace_failed;
static int trace_polling;   /* the last line traced is a cudaStreamQuery */
static struct CUstream_st legacy_stream;   /* stream 0 */
static double device_busy_until;           /* the latest busy_until of any stream */
/* Polling without yielding: the program's sched_yield calls, and how many
 * polls of unfinished work came since the last one. */
static atomic_ulong yields;
static unsigned long yields_at_last_poll;
static int polls_without_yield;
#define STANDIN_POLLS_WITHOUT_YIELD 100

struct CUevent_st {
    double when;       /* the recording stream's clock at the record */
    int recorded;
    unsigned long capture_seq;   /* last recorded inside this capture (capture.c); 0: not */
};

struct CUgraphExec_st {
    standin_op *ops;
    size_t nops;
};

static const char *const kind_names[STANDIN_KINDS] = {
    "allocs", "streams", "events", "graphs", "graph_execs", "comms", "libraries",
    "launch_threads",
};

void standin_count(enum standin_kind kind, int delta)
{
    live[kind] += delta;
}

int standin_fault(const char *name)
{
    long rank = standin_env_long(name, -1);
    return rank >= 0 && rank == standin_process_rank();
}

static void trace_close(void)
{
    standin_lock();
    if (trace_file == NULL) {
        standin_unlock();
        return;
    }
    fprintf(trace_file, "exit");
    for (int k = 0; k < STANDIN_KINDS; k++)
        fprintf(trace_file, " %s=%d", kind_names[k], live[k]);
    fprintf(trace_file, " cuda_error=%d\n", (int)standin_unread_error());
    fclose(trace_file);
    trace_file = NULL;
    standin_unlock();
}

void standin_trace(const char *fmt, ...)
{
    const char *prefix = getenv("CB_STANDIN_TRACE");
    /* One line per run of polls: a 100 ms modelled launch is polled ~10^5
     * times, and the checks ask only whether a wait came between launches. */
    int poll_line = strcmp(fmt, "cudaStreamQuery") == 0;
    if (prefix == NULL || prefix[0] == '\0')
        return;
    /* NCCL's launch thread (threads.c) traces too. */
    standin_lock();
    if (trace_failed || (poll_line && trace_polling)) {
        standin_unlock();
        return;
    }
    trace_polling = poll_line;
    if (trace_file == NULL) {
        char path[4096];
        snprintf(path, sizeof path, "%s.%d", prefix, standin_process_rank());
        trace_file = fopen(path, "a");
        if (trace_file == NULL) {
            trace_failed = 1;
            fprintf(stderr, "cuda stand-in: cannot open the trace file %s\n", path);
            standin_unlock();
            return;
        }
        atexit(trace_close);
    }
    va_list ap;
    va_start(ap, fmt);
    vfprintf(trace_file, fmt, ap);
    va_end(ap);
    fputc('\n', trace_file);
    fflush(trace_file);
    standin_unlock();
}

void standin_violation(const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    standin_trace("VIOLATION %s", what);
    fprintf(stderr, "CUDA/NCCL stand-in: rank %d: VIOLATION: %s\n", standin_process_rank(), what);
}

/* The program's sched_yield, counted (in place of the C library's). */
int sched_yield(void)
{
    atomic_fetch_add(&yields, 1);
    return (int)syscall(SYS_sched_yield);
}

/* A poll found work unfinished. */
static void polled_unfinished(void)
{
    unsigned long now = atomic_load(&yields);
    if (now != yields_at_last_poll) {
        yields_at_last_poll = now;
        polls_without_yield = 0;
    } else if (++polls_without_yield == STANDIN_POLLS_WITHOUT_YIELD) {
        standin_violation("%d polls of unfinished work without a sched_yield between them",
                          STANDIN_POLLS_WITHOUT_YIELD);
    }
}

static cudaStream_t stream_of(cudaStream_t s)
{
    return s != NULL ? s : &legacy_stream;
}

static double stream_clock(cudaStream_t s)
{
    double now = standin_now();
    s = stream_of(s);
    return s->busy_until > now ? s->busy_until : now;
}

void standin_stream_busy(cudaStream_t s, double extra)
{
    standin_lock();
    double start = stream_clock(s);
    stream_of(s)->busy_until = start + extra;
    if (stream_of(s)->busy_until > device_busy_until)
        device_busy_until = stream_of(s)->busy_until;
    standin_unlock();
}

/* When s's work completes, as NCCL's launch thread may be moving it on. */
static double busy_until(cudaStream_t s)
{
    standin_lock();
    double until = stream_of(s)->busy_until;
    standin_unlock();
    return until;
}

int standin_stream_capturing(cudaStream_t s)
{
    return stream_of(s)->capturing;
}

ncclResult_t standin_stream_submit(cudaStream_t s, const standin_op *op)
{
    s = stream_of(s);
    if (standin_capture_invalidated(s))
        return ncclUnhandledCudaError;   /* cudaErrorStreamCaptureInvalidated */
    if (!s->capturing) {
        /* The collective itself runs unlocked: it may wait for the peers. */
        ncclResult_t res = standin_run(s, op, 0);
        standin_lock();
        s->plain_until = s->busy_until;
        standin_unlock();
        return res;
    }
    ncclResult_t res = ncclSuccess;
    standin_lock();
    standin_register(op);
    if (s->nrecorded == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        standin_op *grown = realloc(s->recorded, cap * sizeof *grown);
        if (grown == NULL)
            res = ncclSystemError;
        else
            s->recorded = grown, s->cap = cap;
    }
    if (res == ncclSuccess)
        s->recorded[s->nrecorded++] = *op;
    standin_unlock();
    return res;
}

const char *cudaGetErrorString(cudaError_t error)
{
    switch (error) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorDevicesUnavailable: return "CUDA-capable device(s) is/are busy or unavailable";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorInsufficientDriver:
        return "CUDA driver version is insufficient for CUDA runtime version";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
    case cudaErrorNotReady: return "device not ready";
    case cudaErrorStreamCaptureUnsupported: return "operation not permitted when stream is capturing";
    case cudaErrorStreamCaptureUnmatched: return "capture was not initiated in this stream";
    default: return standin_kernel_error_string(error);
    }
}

/* The stand-in's physical GPU p: "GPU-5ca1ab1e-0000-4000-8000-00000000000p"
 * as its UUID (hexadecimal p), bus p + 1. */
static void physical_uuid(int p, char *buf, size_t len)
{
    snprintf(buf, len, "GPU-5ca1ab1e-0000-4000-8000-%012x", (unsigned)p);
}

/* The physical GPUs this process sees, in its device order, as the CUDA
 * runtime filters and renumbers them by CUDA_VISIBLE_DEVICES: a comma-
 * separated list of indices or GPU UUIDs (any unique prefix); the first
 * entry that names no GPU, or one already listed, ends the list. */
static int visible_devices(int *physical, int room)
{
    long n = standin_env_long("CB_STANDIN_GPUS", 1);
    int total = n > 0 ? (int)(n < room ? n : room) : 0;
    const char *list = getenv("CUDA_VISIBLE_DEVICES");
    if (list == NULL) {
        for (int p = 0; p < total; p++)
            physical[p] = p;
        return total;
    }
    int count = 0;
    while (*list != '\0') {
        size_t len = strcspn(list, ",");
        char entry[64];
        snprintf(entry, sizeof entry, "%.*s", (int)(len < sizeof entry ? len : sizeof entry - 1),
                 list);
        int found = -1;
        if (strncmp(entry, "GPU-", 4) == 0) {
            for (int p = 0; p < total; p++) {
                char uuid[64];
                physical_uuid(p, uuid, sizeof uuid);
                if (strncmp(uuid, entry, strlen(entry)) == 0)
                    found = found == -1 ? p : -2;   /* -2: ambiguous */
            }
        } else {
            char *end = NULL;
            long index = strtol(entry, &end, 10);
            if (end != entry && *end == '\0' && index >= 0 && index < total)
                found = (int)index;
        }
        for (int i = 0; i < count; i++)
            if (physical[i] == found)
                found = -1;
        if (found < 0)
            break;
        physical[count++] = found;
        list += len;
        if (*list == ',')
            list++;
    }
    return count;
}

/* The physical GPU behind device ordinal d of this process, -1 for none. */
static int physical_device(int d)
{
    int physical[STANDIN_MAX_GPUS];
    int n = visible_devices(physical, STANDIN_MAX_GPUS);
    return d >= 0 && d < n ? physical[d] : -1;
}

int standin_current_physical(void)
{
    return physical_device(current_device);
}

cudaError_t cudaGetDeviceCount(int *count)
{
    int physical[STANDIN_MAX_GPUS];
    *count = 0;
    if (standin_fault("CB_STANDIN_FAIL_DRIVER"))   /* a driver older than the runtime */
        return standin_cuda_fail(cudaErrorInsufficientDriver);
    *count = visible_devices(physical, STANDIN_MAX_GPUS);
    standin_trace("cudaGetDeviceCount %d", *count);
    return *count > 0 ? cudaSuccess : standin_cuda_fail(cudaErrorNoDevice);
}

cudaError_t cudaSetDevice(int device)
{
    int p = physical_device(device);
    if (p < 0) {
        standin_trace("cudaSetDevice %d physical=-1 (no such device)", device);
        return standin_cuda_fail(cudaErrorInvalidDevice);
    }
    standin_trace("cudaSetDevice %d physical=%d bus=0000:%02x:00.0", device, p, p + 1);
    if (standin_fault("CB_STANDIN_FAIL_SETDEVICE"))
        return standin_cuda_fail(cudaErrorDevicesUnavailable);
    current_device = device;
    return cudaSuccess;
}

cudaError_t cudaGetDevice(int *device)
{
    *device = current_device;
    return cudaSuccess;
}

cudaError_t cudaDeviceGetPCIBusId(char *pciBusId, int len, int device)
{
    int p = physical_device(device);
    if (p < 0)
        return standin_cuda_fail(cudaErrorInvalidDevice);
    if (len <= 0)
        return standin_cuda_fail(cudaErrorInvalidValue);
    snprintf(pciBusId, (size_t)len, "0000:%02x:00.0", p + 1);
    return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
    int p = physical_device(device);
    if (p < 0)
        return standin_cuda_fail(cudaErrorInvalidDevice);
    memset(prop, 0, sizeof *prop);
    snprintf(prop->name, sizeof prop->name, "CPU stand-in GPU %d", p);
    prop->totalGlobalMem = (size_t)standin_env_long("CB_STANDIN_GPU_MEM", (long)STANDIN_DEFAULT_MEM);
    prop->pciBusID = p + 1;
    memset(prop->uuid.bytes, 0, sizeof prop->uuid.bytes);
    prop->uuid.bytes[sizeof prop->uuid.bytes - 1] = (char)p;
    long capability = standin_env_long("CB_STANDIN_CC", 90);
    prop->major = (int)(capability / 10);
    prop->minor = (int)(capability % 10);
    return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{
    if (physical_device(device) < 0)
        return standin_cuda_fail(cudaErrorInvalidDevice);
    long capability = standin_env_long("CB_STANDIN_CC", 90);
    switch (attr) {
    case cudaDevAttrComputeCapabilityMajor: *value = (int)(capability / 10); return cudaSuccess;
    case cudaDevAttrComputeCapabilityMinor: *value = (int)(capability % 10); return cudaSuccess;
    case cudaDevAttrMultiProcessorCount: *value = 132; return cudaSuccess;   /* an H100's */
    default: return standin_cuda_fail(cudaErrorInvalidValue);
    }
}

cudaError_t cudaRuntimeGetVersion(int *version)
{
    *version = CUDART_VERSION;
    standin_trace("cudaRuntimeGetVersion %d", *version);
    return cudaSuccess;
}

/* The newest CUDA the driver supports (header): a driver newer than the
 * runtime, as usual, so that a preamble mixing the two up shows it. */
cudaError_t cudaDriverGetVersion(int *version)
{
    *version = (int)standin_env_long("CB_STANDIN_CUDA_DRIVER", CUDART_VERSION / 1000 * 1000 + 1020);
    standin_trace("cudaDriverGetVersion %d", *version);
    return cudaSuccess;
}

size_t standin_device_free(void)
{
    /* NCCL's connections, NVLS buffers and ncclMemAlloc's rounding take
     * memory too. */
    size_t used = allocated + standin_connected() + standin_nvls_held() +
                  standin_memalloc_rounding();
    size_t total = (size_t)standin_env_long("CB_STANDIN_GPU_MEM", (long)STANDIN_DEFAULT_MEM);
    return total > used ? total - used : 0;
}

cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total)
{
    standin_trace("cudaMemGetInfo");
    *total = (size_t)standin_env_long("CB_STANDIN_GPU_MEM", (long)STANDIN_DEFAULT_MEM);
    *free_bytes = standin_device_free();
    return cudaSuccess;
}

cudaError_t cudaMalloc(void **ptr, size_t size)
{
    standin_trace("cudaMalloc %zu device=%d physical=%d", size, current_device,
                  standin_current_physical());
    if (standin_capture_unsafe_call("cudaMalloc"))
        return standin_cuda_fail(cudaErrorStreamCaptureUnsupported);
    if (standin_fault("CB_STANDIN_FAIL_MALLOC") || size > standin_device_free())
        return standin_cuda_fail(cudaErrorMemoryAllocation);
    void *block = NULL;
    if (posix_memalign(&block, STANDIN_ALIGN, size + STANDIN_ALIGN) != 0)
        return standin_cuda_fail(cudaErrorMemoryAllocation);
    memcpy(block, &size, sizeof size);
    allocated += size;
    standin_count(STANDIN_ALLOC, 1);
    *ptr = (char *)block + STANDIN_ALIGN;
    standin_devmem_add(*ptr, size);
    return cudaSuccess;
}

cudaError_t cudaFree(void *ptr)
{
    if (ptr == NULL)
        return cudaSuccess;
    standin_trace("cudaFree");
    char *block = (char *)ptr - STANDIN_ALIGN;
    size_t size;
    memcpy(&size, block, sizeof size);
    standin_check_free(ptr, size);
    if (standin_registered(ptr, size))
        standin_violation("cudaFree of memory that a live communicator registered when a "
                          "graph captured it (NCCL releases it at communicator destroy)");
    if (standin_group_uses(ptr, size))
        standin_violation("cudaFree of memory that an operation of the open group uses: "
                          "NCCL launches it only at the outermost ncclGroupEnd");
    /* cudaFree synchronises the device: it waits for all launched work. */
    standin_lock();
    double device_until = device_busy_until;
    standin_unlock();
    while (standin_now() < device_until)
        ;
    allocated -= size;
    standin_count(STANDIN_ALLOC, -1);
    standin_devmem_remove(ptr);
    free(block);
    return cudaSuccess;
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned int flags)
{
    (void)flags;
    standin_trace("cudaStreamCreateWithFlags");
    if (standin_fault("CB_STANDIN_FAIL_STREAM"))
        return standin_cuda_fail(cudaErrorMemoryAllocation);
    struct CUstream_st *s = calloc(1, sizeof *s);
    if (s == NULL)
        return standin_cuda_fail(cudaErrorMemoryAllocation);
    standin_count(STANDIN_STREAM, 1);
    *stream = s;
    return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
    if (stream == NULL)
        return standin_cuda_fail(cudaErrorInvalidResourceHandle);
    standin_trace("cudaStreamDestroy");
    standin_capture_forget(stream);
    if (standin_group_drop(NULL, stream) > 0)
        standin_violation("cudaStreamDestroy of a stream that operations of the open group "
                          "are to be launched on at ncclGroupEnd");
    free(stream->recorded);
    free(stream);
    standin_count(STANDIN_STREAM, -1);
    return cudaSuccess;
}

cudaError_t cudaStreamQuery(cudaStream_t stream)
{
    standin_trace("cudaStreamQuery");
    stream = stream_of(stream);
    cudaError_t capturing = standin_capture_sync_call(stream, "cudaStreamQuery");
    if (capturing != cudaSuccess)
        return capturing;
    if (standin_now() >= busy_until(stream))
        return cudaSuccess;
    polled_unfinished();
    return cudaErrorNotReady;
}

/* The blocking waits (bench/bare_nccl_allreduce.c uses them; the backend
 * polls instead): spin on the virtual clock. */
cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
    standin_trace("cudaStreamSynchronize");
    stream = stream_of(stream);
    cudaError_t capturing = standin_capture_sync_call(stream, "cudaStreamSynchronize");
    if (capturing != cudaSuccess)
        return capturing;
    while (standin_now() < busy_until(stream))
        ;
    return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
    cudaError_t captured = standin_capture_event_use(event->capture_seq, "cudaEventSynchronize");
    if (captured != cudaSuccess)
        return captured;
    if (!event->recorded)
        return cudaSuccess;
    while (standin_now() < event->when)
        ;
    return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t *event)
{
    struct CUevent_st *e = calloc(1, sizeof *e);
    if (e == NULL)
        return standin_cuda_fail(cudaErrorMemoryAllocation);
    standin_count(STANDIN_EVENT, 1);
    *event = e;
    return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t event)
{
    if (event == NULL)
        return standin_cuda_fail(cudaErrorInvalidResourceHandle);
    free(event);
    standin_count(STANDIN_EVENT, -1);
    return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    if (standin_capture_invalidated(stream))   /* capture.c */
        return standin_cuda_fail(cudaErrorStreamCaptureInvalidated);
    standin_trace("cudaEventRecord");
    /* Capturing: the capture's own event, no node (capture.c). */
    if (stream_of(stream)->capturing) {
        event->capture_seq = stream_of(stream)->capture_seq;
        return cudaSuccess;
    }
    standin_event_replayed(event, stream);
    return cudaSuccess;
}

/* Under the lock: the stream's clock is the launch thread's too (threads.c). */
void standin_event_replayed(struct CUevent_st *event, cudaStream_t s)
{
    standin_lock();
    event->when = stream_clock(s);
    standin_unlock();
    event->recorded = 1;
    event->capture_seq = 0;
}

/* cudaEventRecordExternal: on a capturing stream an event record node,
 * which each graph launch runs; "invalid when used outside of capture"
 * (cuda.h, CU_EVENT_RECORD_EXTERNAL). */
cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream, unsigned int flags)
{
    if (flags == cudaEventRecordDefault)
        return cudaEventRecord(event, stream);
    if (standin_capture_invalidated(stream))   /* capture.c */
        return standin_cuda_fail(cudaErrorStreamCaptureInvalidated);
    standin_trace("cudaEventRecordWithFlags %u capturing=%d", flags, stream_of(stream)->capturing);
    if (flags != cudaEventRecordExternal || !stream_of(stream)->capturing)
        return standin_cuda_fail(cudaErrorInvalidValue);
    standin_op node = {.event = event, .kind = STANDIN_OP_EVENT};
    if (standin_stream_submit(stream, &node) != ncclSuccess)
        return standin_cuda_fail(cudaErrorMemoryAllocation);
    return cudaSuccess;
}

cudaError_t cudaEventQuery(cudaEvent_t event)
{
    cudaError_t captured = standin_capture_event_use(event->capture_seq, "cudaEventQuery");
    if (captured != cudaSuccess)
        return captured;
    if (standin_now() >= event->when)
        return cudaSuccess;
    polled_unfinished();
    return cudaErrorNotReady;
}

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    standin_trace("cudaEventElapsedTime");
    cudaError_t captured = standin_capture_event_use(start->capture_seq, "cudaEventElapsedTime");
    if (captured == cudaSuccess)
        captured = standin_capture_event_use(end->capture_seq, "cudaEventElapsedTime");
    if (captured != cudaSuccess)
        return captured;
    if (!start->recorded || !end->recorded)
        return standin_cuda_fail(cudaErrorInvalidResourceHandle);
    if (standin_now() < end->when || standin_now() < start->when)
        return cudaErrorNotReady;
    *ms = (float)((end->when - start->when) * 1e3);
    return cudaSuccess;
}

cudaError_t cudaGraphDestroy(cudaGraph_t graph)
{
    if (graph == NULL)
        return standin_cuda_fail(cudaErrorInvalidResourceHandle);
    standin_graph_refs(graph->ops, graph->nops, -1);
    free(graph->ops);
    free(graph);
    standin_count(STANDIN_GRAPH, -1);
    return cudaSuccess;
}

cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t *exec, cudaGraph_t graph,
                                          unsigned long long flags)
{
    (void)flags;
    if (graph == NULL)
        return standin_cuda_fail(cudaErrorInvalidResourceHandle);
    struct CUgraphExec_st *x = calloc(1, sizeof *x);
    if (x == NULL)
        return standin_cuda_fail(cudaErrorMemoryAllocation);
    if (graph->nops > 0) {
        x->ops = malloc(graph->nops * sizeof *x->ops);
        if (x->ops == NULL) {
            free(x);
            return standin_cuda_fail(cudaErrorMemoryAllocation);
        }
        memcpy(x->ops, graph->ops, graph->nops * sizeof *x->ops);
    }
    x->nops = graph->nops;
    standin_graph_refs(x->ops, x->nops, 1);
    standin_count(STANDIN_GRAPH_EXEC, 1);
    *exec = x;
    return cudaSuccess;
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec)
{
    if (exec == NULL)
        return standin_cuda_fail(cudaErrorInvalidResourceHandle);
    standin_graph_refs(exec->ops, exec->nops, -1);
    free(exec->ops);
    free(exec);
    standin_count(STANDIN_GRAPH_EXEC, -1);
    return cudaSuccess;
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream)
{
    standin_trace("cudaGraphLaunch %zu", exec != NULL ? exec->nops : 0);
    if (exec == NULL)
        return standin_cuda_fail(cudaErrorInvalidResourceHandle);
    if (stream_of(stream)->capturing)
        return standin_cuda_fail(cudaErrorStreamCaptureUnsupported);
    if (standin_now() < stream_of(stream)->plain_until)
        standin_violation("graph launched while work launched outside a graph still runs on "
                          "the stream (relies on NCCL_GRAPH_MIXING_SUPPORT)");
    for (size_t i = 0; i < exec->nops; i++)
        if (standin_run(stream_of(stream), &exec->ops[i], 1) != ncclSuccess)
            return standin_cuda_fail(cudaErrorInvalidValue);
    if (standin_fault("CB_STANDIN_STUCK_GRAPH")) {
        standin_trace("graph launch stuck (CB_STANDIN_STUCK_GRAPH)");
        stream_of(stream)->busy_until = 1e300;
        device_busy_until = 1e300;
    }
    return cudaSuccess;
}
