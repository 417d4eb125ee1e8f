/*
 * The NCCL backend's own header, shared by its files: ops.c (the operations
 * table, set-up, memory, timers and the one-call collectives), nccl/comm.c
 * (communicator life: creation, split, waiting, abort, teardown), nccl/p2p.c
 * (collectives made of sends and receives), nccl/native.c (NCCL 2.28's own
 * alltoall, gather and scatter, --nccl-impl), nccl/register.c (-R) and nccl/graph.c (CUDA graph
 * capture for -G). Not part of any other module's interface.
 */
#ifndef CB_NCCL_BACKEND_H
#define CB_NCCL_BACKEND_H

#include <stdatomic.h>

#include "backends/backend.h"
#include "api.h"
#include "weak.h"

/* In-place alltoall and sendrecv copy their input to a scratch buffer of
 * this size first, in rounds when the input is larger. Testing only: the
 * variable below sets another size (see nccl-collbench(1), ENVIRONMENT). */
#define CB_NCCL_SCRATCH_BYTES ((size_t)64 << 20)
#define CB_NCCL_SCRATCH_ENV "NCCL_COLLBENCH_TEST_SCRATCH_BYTES"

/* -R: a buffer registered with the communicator (nccl/register.c). */
#define CB_NCCL_MAX_REGISTERED 8
typedef struct nccl_registration {
    void *ptr;
    void *handle;              /* ncclCommRegister's handle, or the ncclWindow_t */
    int live;                  /* not yet deregistered */
} nccl_registration;

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
    ncclComm_t comm;           /* the measured communicator: NULL until initialised */
    /* NCCL_COMM_BLOCKING=0 made the run's communicators non-blocking
     * (cb_nccl_env_nonblocking): creation and splits are polled, and every
     * call may return ncclInProgress. Else all are blocking, as nccl-tests'. */
    int nonblocking;
    /* Per-iteration timing (timer_reserve, timer_mark, timer_samples). */
    struct nccl_marks {
        cudaEvent_t *marks;        /* recorded at the end of marked iterations */
        int nmarks;
        int marks_room;
        int marks_seen;            /* marks seen complete while waiting */
    } timing;
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
    int outer_group;           /* the engine's group (-m) is open: see nccl/p2p.c */
    int impl;                  /* --nccl-impl as chosen (nccl/native.c): CB_IMPL_NATIVE or p2p */
    /* A backend made by split has a parent: its MPI communicator is its own
     * to free; the stream and events are the parent's, and the parent, which
     * outlives it, watches its communicator for asynchronous errors while
     * waiting. */
    struct nccl_backend *parent;
    struct nccl_backend *first_split;   /* live splits of this backend */
    struct nccl_backend *next_split;
    struct nccl_abort_state {
        /* Ownership between threads: only the main thread calls NCCL and CUDA
         * on these communicators and graphs. The watchdog thread asks for an
         * abort through abort_requested (on the backend without a parent); the
         * main thread, polling, frees the graphs, aborts and sets abort_done. */
        atomic_int abort_requested;
        atomic_int abort_done;
        atomic_int polling;        /* the main thread is in cb_nccl_poll_complete */
    } threads;
    /* Device memory: how it is allocated, registered (-R) and freed. */
    struct nccl_memory {
        /* Buffers the engine freed while the communicator lived: cudaFree may
         * wait on work of that communicator, and NCCL holds registrations of
         * captured buffers until the communicator ends; freed after it. */
        void **deferred_frees;
        int ndeferred;
        int deferred_room;
        nccl_registration registered[CB_NCCL_MAX_REGISTERED];   /* -R */
        /* Device memory (buffers, scratch) from ncclMemAlloc (NCCL 2.19 on),
         * else cudaMalloc: see cb_nccl_mem_alloc. */
        int memalloc;
        int nregistered;
        int unregistered;          /* -R: of them, those NCCL registered nothing for */
    } mem;
    /* -B's compare kernel (nccl/compare.c), loaded by init when -B asks and
     * it passed its self-test on every rank; NULL otherwise. A split uses
     * its parent's. */
    struct nccl_compare *compare;
} nccl_backend;
/* The checking macros: 0 on success, else -1 with b->error naming the call,
 * the source line and the library's own error string. */
int cb_nccl_cuda_check(cb_backend *b, cudaError_t err, const char *call, const char *file,
                       int line);
int cb_nccl_check(cb_backend *b, ncclComm_t comm, ncclResult_t res, const char *call,
                  const char *file, int line);
/* err, read if it is one: the runtime keeps "the last error that has been
 * produced by any of the runtime calls" until cudaGetLastError
 * (cuda_runtime_api.h), so an error this code reports or tolerates is read
 * here, or a later reader would blame another call. */
cudaError_t cb_nccl_cuda_read(cudaError_t err);
#define CUDA_CALL(b, call) cb_nccl_cuda_check((b), (call), #call, __FILE__, __LINE__)
#define NCCL_CALL(b, comm, call) cb_nccl_check((b), (comm), (call), #call, __FILE__, __LINE__)

/* NCCL's own description of its last error, "" where NCCL is too old (2.13). */
const char *cb_nccl_last_error(ncclComm_t comm);
/* NCCL's version code as x.y.z. */
void cb_nccl_version_text(int code, char *buf, size_t len);
/* The NCCL datatype, or -1 with the reason in b->error. */
int cb_nccl_type(cb_backend *b, cb_dtype dtype, ncclDataType_t *type);

/* nccl/comm.c */
/* The first NCCL with non-blocking communicators (ncclConfig_t). */
#define CB_NCCL_FIRST_NONBLOCKING NCCL_VERSION(2, 14, 0)
int cb_nccl_create_comm(nccl_backend *nb);
/* 1 when NCCL_COMM_BLOCKING makes this library's communicators non-blocking
 * although their config asks for blocking ones. */
int cb_nccl_env_nonblocking(int library_version);
/* Wait until *comm, made by a creation whose call returned res or (parent
 * not NULL) by a split or shrink of that non-blocking parent, is ready,
 * while every rank of mpi learns whether any call failed at once; 1 when
 * this rank failed (b->error). */
int cb_nccl_await_comm(nccl_backend *nb, cb_ctl *mpi, ncclComm_t *comm, ncclComm_t parent,
                       ncclResult_t res, const char *call);
/* cb_backend_agree, but a failed rank speaks for itself when the others are
 * slow to agree (they may never come). stranded: the others may wait for
 * this rank inside NCCL for ever (a blocking creation it failed before the
 * bootstrap), so a failed rank whose peers have not agreed within
 * CB_NCCL_STRANDED_S ends the job (cb_ctl_abort) with status 1. */
int cb_nccl_agree_telling(cb_ctl *comm, nccl_backend *nb, int failed, int stranded);
void cb_nccl_fini(cb_backend *b, int aborting);
int cb_nccl_split(cb_backend *b, int color, int key, cb_backend **out);
void cb_nccl_abort(cb_backend *b);
/* Main thread: destroy the graphs, abort every communicator of the run and
 * forget any group the engine opened (it must not be ended). */
void cb_nccl_abort_now(nccl_backend *nb);
/* After a failed call inside groups: end the inner groups the backend
 * opened and the engine's (-m) when open, which drops them unlaunched (the
 * peers would match a partial group against whole ones), then abort as
 * cb_nccl_abort_now. NCCL queues an abort's clean-up as a job of the
 * thread's open group, where it would never run. */
void cb_nccl_fail_in_group(nccl_backend *nb, int inner);
void cb_nccl_free(cb_backend *b, void *ptr);
int cb_nccl_poll_complete(nccl_backend *nb, cudaEvent_t event);
int cb_nccl_wait(cb_backend *b);

/* nccl/comm_time.c: -o comm_init */
int cb_nccl_comm_time(cb_backend *b, cb_comm_op op, double *seconds);

/* nccl/p2p.c */
int cb_nccl_ensure_scratch(nccl_backend *nb);
cb_backend_coll cb_nccl_alltoall;
cb_backend_coll_root cb_nccl_gather, cb_nccl_scatter;
cb_backend_coll_peers cb_nccl_sendrecv;

/* nccl/native.c: --nccl-impl and NCCL 2.28's own alltoall, gather, scatter */
int cb_nccl_select_impl(cb_backend *b, cb_impl impl);
int cb_nccl_native_alltoall(nccl_backend *nb, const void *send, void *recv, size_t count,
                            ncclDataType_t type);
cb_backend_coll cb_nccl_alltoall_chosen;
cb_backend_coll_root cb_nccl_gather_chosen, cb_nccl_scatter_chosen;
int cb_nccl_warm_up_native(nccl_backend *nb);

/* nccl/register.c: device memory and -R. cb_nccl_choose_allocator sets
 * nb->mem.memalloc, base.allocator and, without ncclMemAlloc, base.notice;
 * cb_nccl_mem_alloc and cb_nccl_mem_free allocate and release with it. */
void cb_nccl_choose_allocator(nccl_backend *nb);
int cb_nccl_mem_alloc(nccl_backend *nb, size_t bytes, void **ptr);
void cb_nccl_mem_free(nccl_backend *nb, void *ptr);
int cb_nccl_registration_check(nccl_backend *nb);
int cb_nccl_register_alloc(nccl_backend *nb, size_t bytes, void **ptr);
int cb_nccl_registered_free(nccl_backend *nb, void *ptr);
void cb_nccl_deregister_all(nccl_backend *nb, int aborting);
void cb_nccl_release_registered(nccl_backend *nb);

/* nccl/alltoallv.c */
cb_backend_coll_v cb_nccl_alltoallv;

/* nccl/compare.c: -B on the GPU. prepare, collective over the whole run
 * (config.run_comm): load the kernel and test it; on every rank nb->compare and
 * base.repeat_on_device, or on none, with the reason in base.notice (the
 * host compare then serves). release: unload (a split leaves its
 * parent's). on_device: *differing = the elements of esize bytes, count
 * of each, whose bits differ between out and ref (device memory). */
#define CB_NCCL_HOST_COMPARE_ENV "NCCL_COLLBENCH_HOST_COMPARE"   /* 1: no kernel */
void cb_nccl_compare_prepare(nccl_backend *nb);
void cb_nccl_compare_release(nccl_backend *nb);
int cb_nccl_compare_on_device(nccl_backend *nb, const void *out, const void *ref, size_t count,
                              size_t esize, size_t *differing);

/* nccl/graph.c */
void cb_nccl_graph_free(cb_backend *b);
int cb_nccl_graph_begin(cb_backend *b);
int cb_nccl_graph_end(cb_backend *b);
int cb_nccl_graph_launch(cb_backend *b);

#endif
