/*
 * The NCCL backend's CUDA graphs for -G (see ops.c): the iterations are
 * captured from the backend's stream once and the instantiated graph is
 * launched again and again.
 */
#include "nccl_backend.h"

void cb_nccl_graph_free(cb_backend *b)
{
    nccl_backend *nb = (nccl_backend *)b;
    if (nb->capturing) {
        cudaGraph_t unfinished = NULL;
        /* An invalidated capture's end fails, as expected here. */
        cudaError_t ended = cb_nccl_cuda_read(cudaStreamEndCapture(nb->stream, &unfinished));
        if (ended == cudaSuccess && unfinished != NULL)
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

int cb_nccl_graph_begin(cb_backend *b)
{
    nccl_backend *nb = (nccl_backend *)b;
    cb_nccl_graph_free(b);
    if (cb_nccl_ensure_scratch(nb) != 0)   /* no cudaMalloc once capturing */
        return -1;
    if (CUDA_CALL(b, cudaStreamBeginCapture(nb->stream, cudaStreamCaptureModeThreadLocal)) != 0)
        return -1;
    nb->capturing = 1;
    return 0;
}

int cb_nccl_graph_end(cb_backend *b)
{
    nccl_backend *nb = (nccl_backend *)b;
    nb->capturing = 0;
    if (CUDA_CALL(b, cudaStreamEndCapture(nb->stream, &nb->graph)) != 0)
        return -1;
    /* WithFlags: the same signature from CUDA 11.4 on, unlike cudaGraphInstantiate. */
    return CUDA_CALL(b, cudaGraphInstantiateWithFlags(&nb->graph_exec, nb->graph, 0));
}

int cb_nccl_graph_launch(cb_backend *b)
{
    nccl_backend *nb = (nccl_backend *)b;
    return CUDA_CALL(b, cudaGraphLaunch(nb->graph_exec, nb->stream));
}
