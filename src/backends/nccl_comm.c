/*
 * The NCCL backend's communicators (see nccl.c): creation agreed across
 * ranks, split, waiting that watches NCCL's asynchronous error state,
 * abort and teardown; and the error checks every file of the backend uses.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nccl_backend.h"

/* "cudaFoo(a, b)" and "dir/nccl.c" as "cudaFoo" and "nccl.c" in messages. */
static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

int cb_nccl_cuda_check(cb_backend *b, cudaError_t err, const char *call, const char *file,
                       int line)
{
    if (err == cudaSuccess)
        return 0;
    return cb_backend_fail(b, "%.*s failed (%s:%d): %s", (int)strcspn(call, "("), call,
                           base_name(file), line, cudaGetErrorString(err));
}

const char *cb_nccl_last_error(ncclComm_t comm)
{
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 13, 0)
    const char *text = ncclGetLastError(comm);
    return text != NULL ? text : "";
#else
    (void)comm;
    return "";
#endif
}

int cb_nccl_check(cb_backend *b, ncclComm_t comm, ncclResult_t res, const char *call,
                  const char *file, int line)
{
    if (res == ncclSuccess)
        return 0;
    const char *detail = cb_nccl_last_error(comm);
    int has_detail = detail[0] != '\0';
    return cb_backend_fail(b, "%.*s failed (%s:%d): %s%s%s", (int)strcspn(call, "("), call,
                           base_name(file), line, ncclGetErrorString(res),
                           has_detail ? ": " : "", has_detail ? detail : "");
}

int cb_nccl_create_comm(nccl_backend *nb)
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

void cb_nccl_fini(cb_backend *b, int aborting)
{
    nccl_backend *nb = (nccl_backend *)b;
    if (nb->parent != NULL) {
        nccl_backend **link = &nb->parent->first_split;
        while (*link != NULL && *link != nb)
            link = &(*link)->next_split;
        if (*link == nb)
            *link = nb->next_split;
    }
    cb_nccl_graph_free(b);
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
int cb_nccl_split(cb_backend *b, int color, int key, cb_backend **out)
{
    nccl_backend *parent = (nccl_backend *)b;
    *out = NULL;
    int too_old = NCCL_VERSION_CODE < CB_NCCL_FIRST_SPLIT ||
                  parent->library_version < CB_NCCL_FIRST_SPLIT;
    if (too_old) {
        char version[32];
        cb_nccl_version_text(parent->library_version, version, sizeof version);
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
            cb_nccl_fini(&nb->base, 1);
        return -1;
    }
    if (nb != NULL) {
        nb->next_split = parent->first_split;
        parent->first_split = nb;
    }
    *out = nb != NULL ? &nb->base : NULL;
    return 0;
}

/* From the watchdog thread: NCCL documents ncclCommAbort as the way to end a
 * communicator whose operations hang. */
void cb_nccl_abort(cb_backend *b)
{
    nccl_backend *nb = (nccl_backend *)b;
    if (nb->comm != NULL)
        ncclCommAbort(nb->comm);
    for (nccl_backend *split = nb->first_split; split != NULL; split = split->next_split)
        if (split->comm != NULL)
            ncclCommAbort(split->comm);
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
    const char *detail = cb_nccl_last_error(owner->comm);
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
int cb_nccl_poll_complete(nccl_backend *nb, cudaEvent_t event)
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
            return cb_nccl_cuda_check(b, done, event != NULL ? "cudaEventQuery" : "cudaStreamQuery",
                              __FILE__, __LINE__);
    }
}

int cb_nccl_wait(cb_backend *b)
{
    return cb_nccl_poll_complete((nccl_backend *)b, NULL);
}
