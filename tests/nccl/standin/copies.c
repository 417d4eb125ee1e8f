/*
 * The CUDA runtime's copies and memsets in the stand-in (see standin.h).
 * Outside a capture each runs at the call, on the stream at once, also
 * inside an NCCL group: before the group's operations, which reach the
 * stream only at its end. On a capturing stream each is captured, of every
 * kind (cuda_runtime_api.h, cudaStreamBeginCapture: "all operations pushed
 * into the stream will not be executed, but will instead be captured into
 * a graph"; the runtime adds memset and copy nodes of every kind,
 * cudaGraphAddMemsetNode, cudaGraphAddMemcpyNode), and a graph launch
 * replays it in call order. A host buffer of a captured copy is read or written when
 * the graph runs, so it must live until then, as on a GPU.
 */
#include <stdio.h>
#include <string.h>

#include "standin.h"

/* The kinds cudaMemcpyKind names: host to host, to device, to host, device
 * to device, and cudaMemcpyDefault (the pointers decide). */
static int known_kind(enum cudaMemcpyKind kind)
{
    return kind == cudaMemcpyHostToHost || kind == cudaMemcpyHostToDevice ||
           kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice ||
           kind == cudaMemcpyDefault;
}

/* The device ends of a copy of kind lie inside allocations (devmem.c). */
static void check_ends(void *dst, size_t dst_bytes, const void *src, size_t src_bytes,
                       enum cudaMemcpyKind kind, const char *call)
{
    char what[64];
    if (kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice) {
        snprintf(what, sizeof what, "%s's destination", call);
        standin_devmem_check(dst, dst_bytes, what);
    }
    if (kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice) {
        snprintf(what, sizeof what, "%s's source", call);
        standin_devmem_check(src, src_bytes, what);
    }
}

/* op run now, or captured when stream is capturing. */
static cudaError_t submit(cudaStream_t stream, const standin_op *op)
{
    if (standin_stream_submit(stream, op) != ncclSuccess)
        return standin_cuda_fail(cudaErrorMemoryAllocation);
    return cudaSuccess;
}

cudaError_t cudaMemset(void *ptr, int value, size_t count)
{
    memset(ptr, value, count);
    return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void *ptr, int value, size_t count, cudaStream_t stream)
{
    if (standin_capture_invalidated(stream))   /* capture.c */
        return standin_cuda_fail(cudaErrorStreamCaptureInvalidated);
    if (!standin_stream_capturing(stream)) {
        memset(ptr, value, count);
        return cudaSuccess;
    }
    standin_trace("cudaMemsetAsync %zu capturing=1", count);
    standin_op set = {.recv = ptr, .count = count, .fill = value, .kind = STANDIN_OP_MEMSET};
    return submit(stream, &set);
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                            cudaStream_t stream)
{
    if (standin_capture_invalidated(stream))   /* capture.c */
        return standin_cuda_fail(cudaErrorStreamCaptureInvalidated);
    int capturing = standin_stream_capturing(stream);
    if (kind == cudaMemcpyDeviceToDevice)
        standin_trace("cudaMemcpyAsync d2d %zu capturing=%d", count, capturing);
    else if (capturing)
        standin_trace("cudaMemcpyAsync kind=%d %zu capturing=1", (int)kind, count);
    if (!known_kind(kind))
        return standin_cuda_fail(cudaErrorInvalidMemcpyDirection);
    check_ends(dst, count, src, count, kind, "cudaMemcpyAsync");
    if (!capturing) {
        memmove(dst, src, count);
        return cudaSuccess;
    }
    standin_op copy = {.send = src, .recv = dst, .count = count, .kind = STANDIN_OP_COPY};
    return submit(stream, &copy);
}

cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch,
                              size_t width, size_t height, enum cudaMemcpyKind kind,
                              cudaStream_t stream)
{
    if (standin_capture_invalidated(stream))   /* capture.c */
        return standin_cuda_fail(cudaErrorStreamCaptureInvalidated);
    standin_trace("cudaMemcpy2DAsync %zux%zu capturing=%d", width, height,
                  standin_stream_capturing(stream));
    if (!known_kind(kind))
        return standin_cuda_fail(cudaErrorInvalidMemcpyDirection);
    if (width > dpitch || width > spitch)
        return standin_cuda_fail(cudaErrorInvalidValue);
    if (height > 0)
        check_ends(dst, (height - 1) * dpitch + width, src, (height - 1) * spitch + width, kind,
                   "cudaMemcpy2DAsync");
    standin_op copy = {.send = src, .recv = dst, .count = width, .pitch_dst = dpitch,
                       .pitch_src = spitch, .height = height, .kind = STANDIN_OP_COPY2D};
    return submit(stream, &copy);
}
