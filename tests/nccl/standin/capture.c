/*
 * Stream capture in the stand-in (see standin.h): which calls a capture
 * prohibits, by its mode, and what a prohibited call does to it, as CUDA
 * documents them (not checked on a GPU here).
 *
 * Modes (cuda_runtime_api.h, cudaThreadExchangeStreamCaptureMode, CUDA
 * 13.0): a "potentially unsafe" call such as cudaMalloc is prohibited on a
 * thread that has a capture of its own begun in global or thread-local
 * mode, and on every thread while any thread has one in global mode; a
 * relaxed capture prohibits none. The stand-in's threads all keep CUDA's
 * default thread mode (global): it has no cudaThreadExchangeStreamCaptureMode.
 *
 * Invalidation (cudaStreamEndCapture: "If capture was invalidated, due to a
 * violation of the rules of stream capture, then a NULL graph will be
 * returned"; cudaStreamIsCapturing's cudaStreamCaptureStatusInvalidated;
 * driver_types.h, cudaErrorStreamCaptureInvalidated: "invalidated due to a
 * previous error"): the prohibited call fails with
 * cudaErrorStreamCaptureUnsupported ("The operation is not permitted when
 * the stream is capturing") and the captures that prohibit it are
 * invalidated; their streams refuse further work and the end of the
 * capture returns cudaErrorStreamCaptureInvalidated and a NULL graph.
 * Querying or synchronising the capturing stream itself is such a call in
 * every mode, relaxed too (cudaThreadExchangeStreamCaptureMode: a relaxed
 * thread "is still prohibited from API calls which necessarily conflict
 * with stream capture"): the CUDA programming guide's "Prohibited and
 * Unhandled Operations" (stream capture) names synchronising or querying
 * a capturing stream as invalid, and an invalid operation as invalidating
 * the capture (*the guide's text not available here*).
 *
 * What a capture records (cudart.c, copies.c, kernels.c): collectives,
 * copies of every kind, memsets, kernel launches and external event
 * records (cudaEventRecordWithFlags with cudaEventRecordExternal), in call
 * order; a graph launch replays them in that order (standin_run).
 */
#include <pthread.h>
#include <stdlib.h>

#include "standin.h"

/* Its address tells the calling thread apart. */
static _Thread_local char this_thread;
/* The streams now capturing, linked through next_capturing; any thread
 * may call cudaMalloc. */
static struct CUstream_st *capturing_streams;
static pthread_mutex_t capturing_lock = PTHREAD_MUTEX_INITIALIZER;
/* Captures begun so far: each one's number tells it apart from a later
 * capture on the same stream (an event names the capture it was recorded in). */
static unsigned long captures_begun;

/* 1 when s's capture prohibits the calling thread's potentially unsafe calls. */
static int prohibits(const struct CUstream_st *s)
{
    if (s->capture_mode == cudaStreamCaptureModeRelaxed)
        return 0;
    return s->capture_thread == &this_thread || s->capture_mode == cudaStreamCaptureModeGlobal;
}

int standin_capture_unsafe_call(const char *call)
{
    int prohibited = 0;
    pthread_mutex_lock(&capturing_lock);
    for (struct CUstream_st *s = capturing_streams; s != NULL; s = s->next_capturing)
        if (prohibits(s)) {
            s->capture_invalidated = 1;
            prohibited = 1;
        }
    pthread_mutex_unlock(&capturing_lock);
    if (prohibited)
        standin_violation("%s while a stream captures: the capture is invalidated", call);
    return prohibited;
}

cudaError_t standin_capture_sync_call(cudaStream_t s, const char *call)
{
    if (s == NULL || !s->capturing)
        return cudaSuccess;
    if (s->capture_invalidated)
        return standin_cuda_fail(cudaErrorStreamCaptureInvalidated);
    s->capture_invalidated = 1;
    standin_trace("%s on a capturing stream: the capture is invalidated", call);
    return standin_cuda_fail(cudaErrorStreamCaptureUnsupported);
}

/* cudaEventRecord on a capturing stream records no node (cuda.h,
 * CU_EVENT_RECORD_EXTERNAL: "When using stream capture, create an event
 * record node instead of the default behavior"): the event then stands for
 * captured work, which never runs as such, and querying it is a call that
 * "necessarily conflict[s] with stream capture"
 * (cudaThreadExchangeStreamCaptureMode: "attempting cudaEventQuery on an
 * event that was last recorded inside a capture sequence"), in every mode.
 * Refused until recorded again outside a capture, also once the capture
 * ended (*not verified on a GPU*). */
cudaError_t standin_capture_event_use(unsigned long capture_seq, const char *call)
{
    if (capture_seq == 0)
        return cudaSuccess;
    pthread_mutex_lock(&capturing_lock);
    for (struct CUstream_st *s = capturing_streams; s != NULL; s = s->next_capturing)
        if (s->capture_seq == capture_seq)
            s->capture_invalidated = 1;
    pthread_mutex_unlock(&capturing_lock);
    standin_trace("%s of an event recorded inside a capture: refused, the capture invalidated",
                  call);
    return standin_cuda_fail(cudaErrorStreamCaptureUnsupported);
}

int standin_capture_invalidated(cudaStream_t s)
{
    return s != NULL && s->capturing && s->capture_invalidated;
}

static void unlink_capturing(struct CUstream_st *stream)
{
    pthread_mutex_lock(&capturing_lock);
    for (struct CUstream_st **p = &capturing_streams; *p != NULL; p = &(*p)->next_capturing)
        if (*p == stream) {
            *p = stream->next_capturing;
            break;
        }
    stream->next_capturing = NULL;
    stream->capturing = 0;
    pthread_mutex_unlock(&capturing_lock);
}

void standin_capture_forget(cudaStream_t stream)
{
    if (stream != NULL && stream->capturing)
        unlink_capturing(stream);
}

cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
    standin_trace("cudaStreamBeginCapture mode=%d", (int)mode);
    if (stream == NULL)   /* the legacy stream cannot be captured */
        return standin_cuda_fail(cudaErrorStreamCaptureUnsupported);
    if (standin_fault("CB_STANDIN_FAIL_CAPTURE"))
        return standin_cuda_fail(cudaErrorStreamCaptureUnsupported);
    if (stream->capturing)
        return standin_cuda_fail(cudaErrorIllegalState);
    if (mode != cudaStreamCaptureModeGlobal && mode != cudaStreamCaptureModeThreadLocal &&
        mode != cudaStreamCaptureModeRelaxed)
        return standin_cuda_fail(cudaErrorInvalidValue);
    if (standin_now() < stream->plain_until)
        standin_violation("capture begun while work launched outside a graph still runs on "
                          "the stream (relies on NCCL_GRAPH_MIXING_SUPPORT)");
    stream->capturing = 1;
    stream->capture_mode = (int)mode;
    stream->capture_invalidated = 0;
    stream->capture_thread = &this_thread;
    stream->nrecorded = 0;
    pthread_mutex_lock(&capturing_lock);
    stream->capture_seq = ++captures_begun;
    stream->next_capturing = capturing_streams;
    capturing_streams = stream;
    pthread_mutex_unlock(&capturing_lock);
    return cudaSuccess;
}

/* A capture not begun in relaxed mode ends on the thread that began it
 * (cudaStreamEndCapture: cudaErrorStreamCaptureWrongThread). */
cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *graph)
{
    standin_trace("cudaStreamEndCapture %zu", stream != NULL ? stream->nrecorded : 0);
    if (stream == NULL || !stream->capturing)
        return standin_cuda_fail(cudaErrorStreamCaptureUnmatched);
    if (stream->capture_mode != cudaStreamCaptureModeRelaxed &&
        stream->capture_thread != &this_thread)
        return standin_cuda_fail(cudaErrorStreamCaptureWrongThread);
    unlink_capturing(stream);
    if (stream->capture_invalidated) {
        stream->nrecorded = 0;
        *graph = NULL;
        return standin_cuda_fail(cudaErrorStreamCaptureInvalidated);
    }
    struct CUgraph_st *g = calloc(1, sizeof *g);
    if (g == NULL)
        return standin_cuda_fail(cudaErrorMemoryAllocation);
    g->ops = stream->recorded;
    g->nops = stream->nrecorded;
    stream->recorded = NULL;
    stream->nrecorded = stream->cap = 0;
    standin_graph_refs(g->ops, g->nops, 1);
    standin_count(STANDIN_GRAPH, 1);
    *graph = g;
    return cudaSuccess;
}
