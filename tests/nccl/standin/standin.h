/*
 * A CPU stand-in for the CUDA runtime and NCCL calls that the NCCL backend
 * (src/backends/nccl/ops.c) makes, so that make check can run that backend on a
 * machine without a GPU. Compiled against the real cuda_runtime_api.h and
 * nccl.h; linked into tests/nccl-collbench-standin instead of libcudart and
 * libnccl. Never installed, never part of the product.
 *
 * Model: "device memory" is host memory (malloc); a collective runs over
 * the stand-in's own TCP connections between the communicator's ranks
 * (transport.c), made by a bootstrap through the ncclUniqueId as NCCL's
 * (bootstrap.c; no MPI: the stand-in ignores how its processes were
 * launched), when it reaches its stream:
 * at once outside a group, at the outermost ncclGroupEnd inside one (see
 * Groups below); a stream runs everything synchronously but keeps a virtual
 * clock, so that work can look unfinished for a while (CB_STANDIN_OP_US) and
 * events record that clock; stream capture records the collectives, copies
 * of every kind, memsets, kernel launches and external event records that
 * reach the stream (capture.c), and a graph launch runs the recording again
 * in order.
 *
 * Environment (all optional): docs/design/standin.md, "Environment".
 *
 * Kernels (kernels.c, for -B's compare kernel): PTX loaded with
 * cudaLibraryLoadData is checked as a driver does and each launch runs the
 * kernel's CPU model; CB_STANDIN_PTX_MAX, CB_STANDIN_FAIL_LIBRARY,
 * CB_STANDIN_FAIL_LAUNCH and CB_STANDIN_KERNEL_NOOP are described there,
 * and so is cudaGetLastError (every cuda* call's error sets it; an error
 * unread at exit is counted in the trace's exit line).
 *
 * NCCL 2.28's ncclAlltoAll, ncclGather, ncclScatter (nccl_native.c) and the
 * buffer registration calls of -R (nccl_register.c, with their rules and
 * the symmetric kernels' float accumulation) follow the reported version.
 * ncclCommRegister of memory that ncclMemAlloc did not return traces
 * "ncclCommRegister ignored: memory not from ncclMemAlloc", as NCCL 2.28
 * registers nothing intra-node for plain cudaMalloc memory.
 *
 * Collectives (collectives.c): reductions gather every rank's input and fold
 * it in rank order, rounding to the datatype after every step, as NCCL's
 * kernels store partial results: a floating-point avg multiplies each input
 * by 1/n rounded to the type (NCCL's premultiplied average), an integer avg
 * divides the sum; premulsum multiplies by the operator's scalar.
 *
 * Groups (group.c), as NCCL's: between ncclGroupStart and the outermost
 * ncclGroupEnd (nesting counts, per thread) every NCCL operation, sends,
 * receives and collectives alike, is only recorded; at that end the
 * collectives reach their streams in call order, then each communicator's
 * sends and receives together as one operation (NCCL plans a group that
 * way), each captured if its stream is capturing by then. Copies
 * (cudaMemcpyAsync, cudaMemcpy2DAsync) launched inside the group reach the
 * stream at once, so they run BEFORE the group's operations, as on a GPU
 * where NCCL enqueues its kernels at the group's end: a copy that feeds a
 * grouped send through a buffer a later copy overwrites sends wrong data.
 * A failing operation makes ncclGroupEnd return its error and the rest of
 * the group is dropped; a call that fails inside a group (its arguments,
 * an injected failure) makes the outermost ncclGroupEnd drop the whole
 * group unlaunched and return that error, as NCCL's ncclGroupErrCheck; a
 * call outside any group is a group of one, so its error is its own. Arguments NCCL checks at the call (datatype, root,
 * peer, reduction operator) fail at the call, also inside a group.
 *
 * Non-blocking communicators (ncclCommInitRankConfig with blocking = 0), as
 * NCCL's: the calls that NCCL hands to a thread of its own leave the
 * communicator busy until ncclCommGetAsyncError has said so, after one or
 * two queries that say ncclInProgress (in turn), and more while the work
 * runs: a launch's on a real thread (threads.c), an async job's here at
 * once. Creation returns ncclInProgress; a collective or send or receive
 * outside a group and the outermost ncclGroupEnd (every
 * communicator of the group) return it from 2.23, and before 2.23 only
 * when they connect a send or receive to a new peer (connect.c);
 * ncclCommSplit and ncclCommShrink return ncclSuccess with the PARENT busy
 * (*newcomm written only when it is seen done; the new communicator is
 * blocking when the split's config says blocking = 1), and so does
 * ncclCommWindowRegister from 2.28 (*win likewise; 2.27: ncclInProgress).
 * Any other call on a busy communicator but ncclCommGetAsyncError and
 * ncclCommAbort is a VIOLATION and fails with ncclInvalidArgument, as
 * NCCL's own check. ncclCommDestroy of a communicator in progress or in
 * error fails and keeps it (a VIOLATION; from 2.24 it leaves the thread in
 * a group, as NCCL's). In a group, an async job (creation, split, shrink)
 * of the other mode than the group's is refused; a config.blocking other
 * than 0, 1 or unset is refused.
 *
 * Async jobs (jobs.c) inside a group wait for the outermost ncclGroupEnd,
 * as NCCL's: a creation returns ncclSuccess in both modes with *comm
 * written but not initialised (any call on it but ncclCommGetAsyncError,
 * which says ncclSuccess as NCCL's does, is a VIOLATION), a split or shrink
 * returns ncclSuccess with *newcomm NULL; the group's end runs them before
 * its collectives and, for a non-blocking group, returns ncclInProgress
 * with each job's communicator (the new one, or the parent) busy. A group
 * that failed drops them. A child shares its parent's resource set, and so
 * its connections' memory (connect.c), when the PARENT's splitShare or
 * shrinkShare says so (NCCL_COMM_SPLIT_SHARE_RESOURCES and
 * NCCL_COMM_SHRINK_SHARE_RESOURCES overriding, read at each creation).
 *
 * Fault injection (CB_STANDIN_FAIL_*, CB_STANDIN_STUCK_GRAPH), FOR TESTING
 * ONLY: docs/design/standin.md, "Environment".
 *
 * Strictness: where real CUDA or NCCL would hang, fail or corrupt data, the
 * stand-in writes "VIOLATION what" into the trace (which check_standin.py
 * trace rejects) and a line on stderr, then behaves as they do where it can:
 *   - ncclCommAbort and ncclCommDestroy wait until every CUDA graph that
 *     captured the communicator is destroyed (they never return otherwise);
 *   - calls on one communicator from two threads at once, and
 *     ncclCommAbort while another thread is inside any NCCL call (a
 *     call on a communicator, or a blocking creation's bootstrap): NCCL
 *     "requires applications to ... make sure no thread is calling any
 *     NCCL operations while calling ncclCommAbort" (communicators.rst,
 *     Fault Tolerance, 2.30.7);
 *   - cudaFree waits for all work on the device, and freeing memory that a
 *     live communicator registered while a graph captured it;
 *   - cudaMalloc while a capture prohibits it (by its mode, capture.c)
 *     invalidates the capture;
 *   - capture begun, or a graph launched, while non-graph work is still
 *     running on the stream (NCCL_GRAPH_MIXING_SUPPORT may deadlock);
 *   - polling unfinished work 100 times without a sched_yield between
 *     polls (the stand-in counts the program's sched_yield calls);
 *   - cudaFree of memory that an operation of the open group uses, and
 *     cudaStreamDestroy of a stream that one is to be launched on (the
 *     group's end would use them); ncclCommDestroy and ncclCommAbort drop
 *     the communicator's operations still waiting for the group's end;
 *   - a reduction operator used or destroyed with another communicator;
 *   - a call on a non-blocking communicator still in progress (above);
 *   - ncclCommAbort of a communicator whose operations wait in the
 *     calling thread's open group: NCCL reclaims it before the group's
 *     end launches them (nccl.c). Its abort with no operations there is
 *     no violation: done at once before 2.22, a job of the group run at
 *     its outermost end from 2.22.
 * rules.c (tests/nccl/nccl_standin_rules.sh) breaks each rule on purpose and
 * fails if the stand-in stops enforcing it; docs/design/standin.md maps each rule to
 * the tests that rely on it.
 */
#ifndef CB_STANDIN_H
#define CB_STANDIN_H

#define STANDIN_MAX_GPUS 64

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "backends/nccl/api.h"

/* Headers before 2.17 have no unset value: their initializer says 1. */
#ifndef NCCL_CONFIG_UNDEF_INT
#include <limits.h>
#define NCCL_CONFIG_UNDEF_INT INT_MIN
#endif

/* nccl.h declares these with empty parentheses; the stand-in defines them
 * with a prototype. */
ncclResult_t ncclGroupStart(void);
ncclResult_t ncclGroupEnd(void);

/* What a standin_op does; 0 keeps the all-reduce initialisers valid. */
enum standin_op_kind {
    STANDIN_OP_ALLREDUCE = 0,
    STANDIN_OP_ALLGATHER,
    STANDIN_OP_REDUCESCATTER,
    STANDIN_OP_BROADCAST,
    STANDIN_OP_REDUCE,
    STANDIN_OP_P2P,       /* the sends and receives of one group */
    STANDIN_OP_COPY,      /* cudaMemcpyAsync (any kind) */
    STANDIN_OP_COPY2D,    /* cudaMemcpy2DAsync (any kind) */
    /* Only captured (copies.c, cudart.c, kernels.c); outside a capture
     * these run at the call. */
    STANDIN_OP_MEMSET,    /* cudaMemsetAsync */
    STANDIN_OP_EVENT,     /* cudaEventRecordWithFlags, cudaEventRecordExternal */
    STANDIN_OP_KERNEL     /* cudaLaunchKernel */
};

/* A captured kernel's arguments: up to this many, each in an 8-byte slot. */
#define STANDIN_KERNEL_MAX_ARGS 8

#define STANDIN_MAX_P2P 1024

/* One send or receive of a group. */
typedef struct standin_p2p {
    int is_send;
    void *buf;            /* read when sending */
    size_t count;
    ncclDataType_t type;
    int peer;
} standin_p2p;

/* One collective as launched, to run now or to record in a capture. */
typedef struct standin_op {
    const void *send;
    void *recv;
    size_t count;         /* elements (bytes for a copy, a row's bytes for a 2-D copy) */
    size_t pitch_dst;     /* a 2-D copy's row pitches and row count */
    size_t pitch_src;
    size_t height;
    int fill;                     /* a memset's byte */
    struct CUevent_st *event;     /* an event record's event */
    int kernel_model;             /* a kernel's model (kernels.c) and its arguments' values */
    _Alignas(8) unsigned char kernel_args[8 * STANDIN_KERNEL_MAX_ARGS];
    ncclDataType_t type;
    ncclRedOp_t op;
    struct ncclComm *comm;
    enum standin_op_kind kind;
    int root;
    int native;           /* STANDIN_OP_P2P of ncclAlltoAll, ncclGather or ncclScatter,
                           * traced by that name: alone it is no "p2p group" */
    size_t np2p;
    standin_p2p p2p[STANDIN_MAX_P2P];
} standin_op;

/* Operators made by ncclRedOpCreatePreMulSum, per communicator. */
#define STANDIN_MAX_CUSTOM_OPS 32
typedef struct standin_custom_op {
    int live;
    ncclDataType_t type;
    double scalar;
} standin_custom_op;

/* The opaque types of the real headers, defined here. */
/* Buffers a communicator registered while a graph captured it. */
#define STANDIN_MAX_REGISTERED 64

/* transport.c: a communicator's connections to its peers. */
typedef struct standin_net standin_net;

/* connect.c: a set of resources one or more communicators share (NCCL's
 * ncclSharedResources: a split child joins its parent's when the parent's
 * config says splitShare, G9). */
typedef struct standin_resources standin_resources;

/* nvls.c: NVLS buffers one or more communicators share. */
typedef struct standin_nvls standin_nvls;

struct ncclComm {
    standin_net *net;   /* NULL when stuck */
    int rank;
    int nranks;
    int ran;        /* collectives of more than one element run so far */
    int serial;     /* which communicator of the process: ties operators to it */
    int nonblocking;   /* made with blocking = 0 (splits inherit it) */
    /* Non-blocking, a call returned ncclInProgress: how many more
     * ncclCommGetAsyncError queries it takes to see it done (the last one
     * says so); -1: never (a split whose peer never joined); 0: ready. */
    int in_progress;
    int calls_started; /* calls that returned ncclInProgress: 1 or 2 polls, in turn */
    ncclResult_t async_result;   /* what the call left once done (a failed group) */
    /* What the call writes back once done, as NCCL's thread does:
     * ncclCommSplit's new communicator, ncclCommWindowRegister's window
     * (standin_window_done). */
    ncclComm_t *split_out;
    struct ncclComm *split_child;
    void *window_out;  /* the caller's ncclWindow_t (nccl_register.c writes it) */
    void *window;
    int stuck;         /* a peer never joined the bootstrap: never ready, no net */
    /* op ncclNumOps + serial * STANDIN_MAX_CUSTOM_OPS + k */
    standin_custom_op custom[STANDIN_MAX_CUSTOM_OPS];
    atomic_int graph_refs;   /* graphs and graph execs holding its operations */
    atomic_int in_call;      /* threads inside a call on it */
    const void *registered[STANDIN_MAX_REGISTERED];
    int nregistered;
    /* connect.c: the peers a send (bit 1) or receive (bit 2) has connected
     * to, and the resource set whose connections it uses. */
    unsigned char *p2p_links;
    standin_resources *resources;
    /* Its config's splitShare and shrinkShare as NCCL_COMM_*_SHARE_RESOURCES
     * left them at its creation: whether ITS children share its resources. */
    int split_share;
    int shrink_share;
    /* Made by ncclCommInitRank inside a group: not yet initialised until the
     * outermost ncclGroupEnd runs the creation (group.c, standin_job). */
    int pending;
    /* NCCL's runtimeConn: connections at first use (connect.c). */
    int runtime_connect;
    /* Its NVLS buffers (nvls.c); NULL without NVLS. */
    standin_nvls *nvls;
    struct standin_thread_job *launch_job;   /* NCCL's comm->groupJob (threads.c) */
    struct ncclComm *next_live;
};

struct CUstream_st {
    double busy_until;     /* standin_now() when the last launched work completes */
    double plain_until;    /* the same for work launched outside a graph */
    int capturing;
    int capture_mode;           /* cudaStreamBeginCapture's (capture.c) */
    int capture_invalidated;    /* a prohibited call broke the capture */
    const void *capture_thread; /* the thread that began it */
    unsigned long capture_seq;  /* which capture, of all the process began (capture.c) */
    struct CUstream_st *next_capturing;
    standin_op *recorded;  /* while capturing */
    size_t nrecorded;
    size_t cap;
};

/* Live objects, counted for the exit line of the trace. */
enum standin_kind {
    STANDIN_ALLOC,
    STANDIN_STREAM,
    STANDIN_EVENT,
    STANDIN_GRAPH,
    STANDIN_GRAPH_EXEC,
    STANDIN_COMM,
    STANDIN_LIBRARY,
    STANDIN_THREAD,    /* launch threads started and not joined (threads.c) */
    STANDIN_KINDS
};
void standin_count(enum standin_kind kind, int delta);

/* Integer from the environment, or fallback when unset or malformed. */
/* The physical GPU behind the calling thread's current device, -1 for none. */
int standin_current_physical(void);

long standin_env_long(const char *name, long fallback);

/* The process's rank as its launcher gives it (docs/design/standin.md, "Environment"). */
int standin_process_rank(void);

/* 1 when the fault variable name holds this process's rank. */
int standin_fault(const char *name);

/* transport.c: seconds on the monotonic clock (the streams' clocks). */
double standin_now(void);

/* transport.c: a communicator's connections, made by bootstrap.c (rank of
 * nranks; peers set one by one), and what flows over them. Each returns
 * an NCCL result, *what naming a failure. An exchange sends send_bytes[p]
 * from send[p] to each peer p and receives recv_bytes[p] into recv[p] from
 * each, all at once; 0 bytes: no message with that peer. */
standin_net *standin_net_new(int rank, int nranks, uint64_t magic);
void standin_net_set_peer(standin_net *net, int peer, int fd);
int standin_net_peer(const standin_net *net, int peer);
int standin_net_rank(const standin_net *net);
int standin_net_size(const standin_net *net);
/* The magic of a child's bootstrap: a split's (members NULL; advances the
 * parent's count of splits) or a shrink's over its kept members. */
uint64_t standin_net_child_magic(standin_net *net, const unsigned char *members);
void standin_net_free(standin_net *net);
void standin_net_shutdown(standin_net *net);   /* its connections fail from now on */
int standin_send_all(int fd, const void *buf, size_t bytes);
int standin_recv_all(int fd, void *buf, size_t bytes);
ncclResult_t standin_net_exchange(standin_net *net, const void *const *send,
                                  const size_t *send_bytes, void *const *recv,
                                  const size_t *recv_bytes, const char **what);
/* all[p * bytes] gets rank p's mine, from the ranks of members (NULL: all;
 * the others take no part); mine may lie at its place in all. */
ncclResult_t standin_net_allgather_among(standin_net *net, const unsigned char *members,
                                         const void *mine, size_t bytes, void *all,
                                         const char **what);
ncclResult_t standin_net_allgather(standin_net *net, const void *mine, size_t bytes, void *all,
                                   const char **what);
ncclResult_t standin_net_broadcast(standin_net *net, int root, void *buf, size_t bytes,
                                   const char **what);
/* With ncclGetLastError's text set on failure. */
ncclResult_t standin_net_barrier(standin_net *net);

/* bootstrap.c: join id's bootstrap as rank of nranks (ncclCommInitRank's
 * part), or, never_joins, only tell the root this rank will not (the
 * caller then fails). *stuck: a peer never joins (*net stays NULL). */
ncclResult_t standin_bootstrap_init(const ncclUniqueId *id, int nranks, int rank,
                                    int never_joins, standin_net **net, int *stuck);

/* bootstrap.c: the child of parent that this rank's color and key give,
 * over the ranks of members (NULL: all; the others do not call): NULL for
 * NCCL_SPLIT_NOCOLOR, for never_joins (the caller fails) and, *stuck, when
 * a rank of the same color never joins. */
ncclResult_t standin_bootstrap_split(standin_net *parent, const unsigned char *members, int color,
                                     int key, int never_joins, standin_net **child, int *stuck);

/* A line into the trace file, when CB_STANDIN_TRACE is set. */
void standin_trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A breach of the strictness rules above: "VIOLATION ..." in the trace and
 * a line on stderr. */
void standin_violation(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* nccl.c: graph references to the communicators of ops (delta +1 or -1). */
void standin_graph_refs(const standin_op *ops, size_t n, int delta);

/* nccl.c: what a captured op's communicator registers (its buffers). */
void standin_register(const standin_op *op);

/* nccl.c: 1 when [ptr, ptr + bytes) holds memory a live communicator
 * registered. */
int standin_registered(const void *ptr, size_t bytes);

/* devmem.c: the device allocations, and a VIOLATION for a buffer of an
 * operation or copy that does not lie inside one (what names the call). */
void standin_devmem_add(const void *ptr, size_t size);
void standin_devmem_remove(const void *ptr);
void standin_devmem_check(const void *ptr, size_t bytes, const char *what);
void standin_devmem_check_op(const standin_op *op, const char *what);
/* The byte offset of ptr in its device allocation (0 when in none), traced
 * by each collective so that tests see where launches run (--rotate). */
size_t standin_devmem_offset(const void *ptr);
/* nccl.c: comm in progress after a call that returns ncclSuccess (see there). */
ncclResult_t standin_comm_started_success(ncclComm_t comm, const char *call);
/* devmem.c: the bytes a collective (not a send/receive group) reads from
 * send and writes to recv. */
void standin_op_bytes(const standin_op *op, size_t *in, size_t *out);

/* nccl.c: 1 when [a, a + a_bytes) and [b, b + b_bytes) overlap. */
int standin_overlaps(const void *a, size_t a_bytes, const void *b, size_t b_bytes);

/* nccl.c: call, whose work on comm is done with result res, returns
 * ncclInProgress on a non-blocking communicator (res on a blocking one):
 * comm is then busy until ncclCommGetAsyncError has said it is done (with
 * res), after one or two queries that say ncclInProgress; every other call
 * on it before then is a VIOLATION (standin_comm_unready). */
ncclResult_t standin_comm_started(struct ncclComm *comm, ncclResult_t res, const char *call);
/* nccl.c: as standin_comm_started, for a blocking communicator too. */
ncclResult_t standin_comm_marked_started(struct ncclComm *comm, ncclResult_t res,
                                         const char *call);

/* connect.c: the version ncclGetVersion reports (CB_STANDIN_NCCL_VERSION). */
long standin_nccl_version(void);

/* connect.c: a launch (a call outside a group, the outermost ncclGroupEnd)
 * whose work on comm is done with res: ncclInProgress through
 * standin_comm_started from 2.23, before only when needs_connect (a send
 * or receive to a peer not yet connected); otherwise res. */
ncclResult_t standin_launch_started(struct ncclComm *comm, ncclResult_t res, const char *call,
                                    int needs_connect);
/* connect.c: the same for comm, a member of a group whose mode is
 * group_nonblocking (that of the last communicator to join it), at the
 * outermost ncclGroupEnd: the group's mode decides for every member. */
ncclResult_t standin_group_launch_started(struct ncclComm *comm, int group_nonblocking,
                                          ncclResult_t res, int needs_connect);

/* connect.c: 1 when the sends and receives of op reach a peer of its
 * communicator not connected before (they are connected from now on). */
int standin_p2p_connect(const standin_op *op);

/* connect.c: comm's resource set: a new one, or share_with's (a parent
 * whose config shares, G9). 0, or -1 when out of memory. */
int standin_resources_join(struct ncclComm *comm, struct ncclComm *share_with);

/* connect.c: CB_STANDIN_CONNECT_BYTES charged to the device once per
 * resource set, at its first communicator's creation (before 2.22, or
 * with NCCL_RUNTIME_CONNECT=0 or NCCL_CUMEM_ENABLE=0) or at op's first
 * collective on any of its communicators (2.22 on), and given back when
 * its last communicator ends. */
void standin_connect_created(struct ncclComm *comm);
void standin_connect_used(const standin_op *op);
void standin_connect_release(struct ncclComm *comm);

/* nvls.c: NVLS buffers by version (connect.c calls these at its own
 * moments): share the parent's (a child of a sharing parent), charge at
 * creation (credits from 2.22, the whole before), charge the buffers at
 * the first collective (from 2.22 with runtime connection), give back with
 * the set's last communicator; and what all of them hold now. */
void standin_nvls_share(struct ncclComm *comm, struct ncclComm *parent);
void standin_nvls_created(struct ncclComm *comm);
void standin_nvls_used(struct ncclComm *comm);
void standin_nvls_release(struct ncclComm *comm);
size_t standin_nvls_held(void);

/* connect.c: whether NCCL would use cuMem (ncclCuMemEnable: NCCL_CUMEM_ENABLE). */
int standin_cumem_enabled(void);

/* cudart.c: the device's free bytes, as cudaMemGetInfo says (untraced). */
size_t standin_device_free(void);

/* nccl_register.c: the device's cuMem allocation granularity
 * (CB_STANDIN_MEM_GRANULARITY, 2 MiB) and multicast one
 * (CB_STANDIN_MULTICAST_GRANULARITY; 0: no multicast support); bytes
 * rounded up to a granularity (0: left as they are). */
size_t standin_mem_granularity(void);
size_t standin_multicast_granularity(void);
size_t standin_round_up(size_t bytes, size_t granularity);

/* nccl_register.c: the device bytes that ncclMemAlloc's rounding takes
 * beyond the blocks' own sizes. */
size_t standin_memalloc_rounding(void);

/* connect.c: the device bytes that NCCL's connections hold now (cudart.c's
 * cudaMemGetInfo and cudaMalloc count them as allocated). */
size_t standin_connected(void);

/* nccl.c: 1, with a VIOLATION naming call, when comm is not ready. */
int standin_comm_unready(struct ncclComm *comm, const char *call);

/* nccl.c: res, with what as the text ncclGetLastError returns. */
ncclResult_t standin_fail(ncclResult_t res, const char *what);
/* nccl.c's communicator bookkeeping, for enqueue.c's calls: one thread in
 * a communicator at a time (a VIOLATION otherwise), the error a
 * communicator keeps. */
void standin_comm_enter(struct ncclComm *comm, const char *call);
void standin_comm_leave(struct ncclComm *comm);
ncclResult_t standin_comm_failed(struct ncclComm *comm, const char *call);

/* enqueue.c: run op now on stream s: the collective over its connections, then the
 * stream's clock moves on by CB_STANDIN_OP_US. Returns an NCCL result. */
ncclResult_t standin_run(cudaStream_t s, const standin_op *op, int replayed);

/* group.c: THE PATH OF EVERY NCCL OPERATION into the stand-in, called by
 * ncclAllReduce, ncclSend and the others once they have checked their
 * arguments (standin_check_args), traced the call and entered the
 * communicator. Inside a group op is queued for the outermost ncclGroupEnd
 * (a STANDIN_OP_P2P op, one send or receive, joins its communicator's batch
 * of the group); outside it is a group of one, launched at once. Launching
 * is standin_stream_submit at that time. Returns an NCCL result, with
 * ncclGetLastError's text set on failure. A new operation needs a
 * standin_op_kind, its run in standin_run_collective, its checks in
 * standin_check_args and its buffers in group.c's op_touches. */
ncclResult_t standin_launch(cudaStream_t s, const standin_op *op);

/* nccl.c: launch call as the NCCL entry point name (checked, traced, noted
 * when grouped, then standin_launch); for entry points in other files. */
ncclResult_t standin_launch_named(cudaStream_t stream, const standin_op *call, const char *name);

/* nccl_register.c: cudaFree of [ptr, ptr + bytes) is checked against the
 * registrations; a communicator's registrations end with it (a VIOLATION
 * when destroying it leaves some); 1 when op's reduction accumulates in
 * float (half or bfloat16 input in a symmetric window, as NCCL's symmetric
 * kernels); a non-blocking ncclCommWindowRegister's window is written back
 * when comm is seen done. */
void standin_check_free(const void *ptr, size_t bytes);
void standin_window_done(struct ncclComm *comm);
void standin_end_registrations(struct ncclComm *comm, int destroying);
int standin_accumulates_in_float(const standin_op *op);

/* group.c: 1 when an operation waiting for the open group's end reads or
 * writes [ptr, ptr + bytes). */
int standin_group_uses(const void *ptr, size_t bytes);

/* group.c: an async job of NCCL's (creation, split, shrink; destroy from
 * 2.22, destroying) on a communicator blocking or not, called while the thread may have a group
 * open: ncclInvalidArgument, kept as the group's error, when its mode
 * differs from the group's (group.cc, ncclAsyncLaunch: "Blocking and
 * nonblocking communicators are not allowed in the same group"); a
 * destroy makes the group blocking. */
ncclResult_t standin_group_job(int blocking, int destroying, const char *call);

/* group.c: NCCL's async job (creation, split, shrink: group.cc's
 * ncclAsyncJob) called inside a group, held for the outermost ncclGroupEnd
 * (group.cc, ncclAsyncLaunch queues it when ncclGroupDepth > 0). There run
 * does the work, frees the job and returns its result (ncclInProgress when
 * it left comm in progress for a non-blocking group); a group that failed
 * first calls drop instead, with its error, which frees the job. */
typedef struct standin_job standin_job;
struct standin_job {
    struct ncclComm *comm;   /* the communicator NCCL's job names: new, or the parent */
    ncclResult_t (*run)(standin_job *job);
    void (*drop)(standin_job *job, ncclResult_t why);
    standin_job *next;
};
void standin_group_hold(standin_job *job);
/* group.c: 1 when a held job names comm. */
int standin_group_holds(const struct ncclComm *comm);

/* nccl.c: a communicator in share_with's resource set (NULL: its own),
 * not yet over connections (NULL when out of memory); c over net (NULL:
 * stuck in the bootstrap); both at once, in progress when non-blocking. */
struct ncclComm *standin_comm_alloc(int nonblocking, struct ncclComm *share_with);
void standin_comm_attach(struct ncclComm *c, standin_net *net);
ncclResult_t standin_comm_new(standin_net *net, int nonblocking, struct ncclComm *share_with,
                              struct ncclComm **out);
/* nccl.c: the blocking mode a new communicator gets (asked, then
 * NCCL_COMM_BLOCKING by version). */
int standin_env_blocking(int asked, int creation_with_config);
#define STANDIN_INJECTED_INIT                                                   \
    "injected ncclCommInitRank failure before the bootstrap (CB_STANDIN_FAIL_COMMINIT)"
#define STANDIN_INJECTED_SPLIT                                                  \
    "injected ncclCommSplit failure before the bootstrap (CB_STANDIN_FAIL_SPLIT)"

/* jobs.c: c's own splitShare and shrinkShare (whether ITS children share
 * its resources), from config, else from parent's (a split given none),
 * else unset; NCCL_COMM_*_SHARE_RESOURCES overriding (G9). */
void standin_share_config(struct ncclComm *c, const ncclConfig_t *config,
                          struct ncclComm *parent);
/* jobs.c: ncclCommInitRank inside a group: *comm written at once, not yet
 * initialised (comm->pending), its bootstrap held for the group's end. */
ncclResult_t standin_init_hold(struct ncclComm **comm, const ncclUniqueId *id, int nranks,
                               int rank, int nonblocking, int failing,
                               const ncclConfig_t *config);
/* jobs.c: a split (kept NULL) or a shrink (kept: the parent's ranks that
 * stay, freed here) of comm, checked already: run now outside a group,
 * held inside one; *newcomm written once done. */
ncclResult_t standin_split_start(struct ncclComm *comm, struct ncclComm **newcomm,
                                 ncclConfig_t *config, int color, int key, unsigned char *kept,
                                 int shrink_flags, int failing);

/* group.c: open a group that the caller never ends, as NCCL's refused
 * ncclCommDestroy does (2.24 on). */
void standin_group_leave_open(void);

/* group.c: how deep the calling thread's open groups nest (0: none). */
int standin_group_depth(void);

/* group.c: res, remembered as the open group's error when it is the
 * first failure of a call inside a group (the group's end then drops it). */
ncclResult_t standin_group_check(ncclResult_t res);

/* group.c: forget the operations waiting for the open group's end on comm
 * or on stream (NULL: any); returns how many. */
size_t standin_group_drop(ncclComm_t comm, cudaStream_t stream);

/* cudart.c: put op on stream s now: recorded when s is capturing, else run
 * (standin_run). Copies come here directly; NCCL operations through
 * standin_launch. */
ncclResult_t standin_stream_submit(cudaStream_t s, const standin_op *op);

/* cudart.c: whether s (NULL: the legacy stream) is capturing. */
int standin_stream_capturing(cudaStream_t s);

/* A graph: the operations a capture recorded (capture.c, cudart.c). */
struct CUgraph_st {
    standin_op *ops;
    size_t nops;
};

/* threads.c: NCCL's launch thread; standin_lock (recursive) guards what it
 * shares with the caller. A launch goes to one when standin_launch_threaded
 * says so: ops added in order (traced_p2p: traced as a p2p group), members
 * linked, started (discarded if never started). standin_thread_running: 1
 * until its work is on the streams, then its result is comm's async error.
 * Joined where NCCL does; ncclCommAbort's standin_thread_abort fails it. */
typedef struct standin_thread_job standin_thread_job;
typedef struct standin_thread_op {
    cudaStream_t stream;
    int traced_p2p;
    standin_op op;
} standin_thread_op;
void standin_lock(void);
void standin_unlock(void);
int standin_launch_threaded(int nonblocking, int needs_connect);
standin_thread_job *standin_thread_new(void);
void standin_thread_discard(standin_thread_job *job);
int standin_thread_add(standin_thread_job *job, cudaStream_t stream, const standin_op *op,
                       int traced_p2p);
void standin_thread_link(struct ncclComm *comm, standin_thread_job *job);
ncclResult_t standin_thread_start(standin_thread_job *job, const char *call);
int standin_thread_running(struct ncclComm *comm);
void standin_thread_join(struct ncclComm *comm, const char *by);
void standin_thread_abort(struct ncclComm *comm);

/* capture.c: 1 when a potentially unsafe call (cudaMalloc) is prohibited
 * by a capture's mode, having invalidated those captures and flagged it. */
int standin_capture_unsafe_call(const char *call);

/* capture.c: cudaSuccess unless s is capturing; else query or synchronise
 * (call) invalidates the capture and gives cudaErrorStreamCaptureUnsupported
 * (cudaErrorStreamCaptureInvalidated once invalidated). */
cudaError_t standin_capture_sync_call(cudaStream_t s, const char *call);

/* capture.c: 1 while s captures and its capture is invalidated. */
int standin_capture_invalidated(cudaStream_t s);

/* capture.c: s is destroyed: no longer one of the capturing streams. */
void standin_capture_forget(cudaStream_t s);

/* capture.c: cudaSuccess for an event last recorded outside any capture
 * (capture_seq 0); else call (a query, wait or timing of it) is refused,
 * invalidating that capture if it still runs. */
cudaError_t standin_capture_event_use(unsigned long capture_seq, const char *call);

/* cudart.c: a graph launch on s reached event's external record node. */
void standin_event_replayed(struct CUevent_st *event, cudaStream_t s);

/* kernels.c: op (STANDIN_OP_KERNEL), captured, runs its model. */
ncclResult_t standin_kernel_replay(const standin_op *op);

/* Advance s's clock for work launched now that takes extra seconds. */
void standin_stream_busy(cudaStream_t s, double extra);

/* collectives.c: run an operation (a collective, sends and receives, a
 * copy). Returns an NCCL result, with *what naming the failure. */
ncclResult_t standin_run_collective(const standin_op *op, const char **what);

/* collectives.c: the checks NCCL makes when an operation is called
 * (datatype, root, peer, reduction operator of this communicator); an NCCL
 * result, with *what naming the failure. */
ncclResult_t standin_check_args(const standin_op *op, const char **what);

/* kernels.c: the calling thread's error that cudaGetLastError has not read. */
cudaError_t standin_unread_error(void);

/* kernels.c: err, recorded for cudaGetLastError (every cuda* call's error
 * return goes through it). */
cudaError_t standin_cuda_fail(cudaError_t err);

/* kernels.c: puts back the error that was unread before a failed cuda*
 * call that NCCL, with its own runtime, made. */
void standin_cuda_restore(cudaError_t unread);

/* kernels.c: cudaGetErrorString's text for the errors of its calls. */
const char *standin_kernel_error_string(cudaError_t error);

/* collectives.c: the value and size of one element of an NCCL datatype. */
size_t standin_type_size(ncclDataType_t type);
double standin_load(ncclDataType_t type, const void *buf, size_t i);

#endif
