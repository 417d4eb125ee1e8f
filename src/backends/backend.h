/*
 * Backends: what the engine needs from a communication library, as one ops
 * table per backend. The engine never calls NCCL, CUDA or an MPI collective
 * itself; it allocates, copies, runs and times through these entries.
 *
 * Every entry that can fail returns 0 on success and -1 on failure after
 * writing one line into b->error. Entries are local to the calling rank: the
 * engine agrees on failures across ranks before the next collective step.
 */
#ifndef CB_BACKEND_H
#define CB_BACKEND_H

#include "control/control.h"
#include <stddef.h>

#include "verify/dtype.h"
#include "verify/redop.h"

#define CB_BACKEND_ERRLEN 512
#define CB_BACKEND_NOTICELEN 2048
#define CB_DEVICE_DESCLEN 128

/* -o comm_init: the ways of making a communicator it times, in row order. */
typedef enum cb_comm_op {
    CB_COMM_INIT,     /* a new one over the same ranks: ncclCommInitRank, MPI_Comm_dup */
    CB_COMM_SPLIT,    /* two halves by rank: ncclCommSplit, MPI_Comm_split */
    CB_COMM_SHRINK,   /* all but the last rank: ncclCommShrink */
    CB_COMM_GROW,     /* one rank more (no library here has it yet) */
    CB_COMM_OPS
} cb_comm_op;

/* "init", "split", "shrink", "grow". */
const char *cb_comm_op_name(cb_comm_op op);

typedef struct cb_backend_ops cb_backend_ops;

/* The local passes of a reduction built from point-to-point messages. */
typedef enum cb_local_stage {
    CB_LOCAL_PREPARE, /* inout = this rank's contribution from in (premulsum: scaled) */
    CB_LOCAL_COMBINE, /* inout = inout op in (avg and premulsum combine with sum) */
    CB_LOCAL_FINISH   /* inout = the final value (avg: divided by nranks); in unused */
} cb_local_stage;

/* --nccl-impl: how alltoall, gather and scatter run on a backend that has
 * more than one way (select_impl). AUTO resolves to one of the other two. */
typedef enum cb_impl {
    CB_IMPL_AUTO = 0,   /* the library's own call where it has one, else P2P */
    CB_IMPL_NATIVE,     /* the library's own call (NCCL 2.28: ncclAlltoAll, ...) */
    CB_IMPL_P2P         /* one group of point-to-point sends and receives */
} cb_impl;

/* What the engine asks of a backend when it starts one. */
typedef struct cb_backend_config {
    int blocking;      /* wait for each operation before launching the next */
    /* The whole run's ranks, of which init's comm may be a --split group:
     * init is called on every rank of it at once, so a backend may agree
     * over it (the NCCL backend chooses GPUs over it). */
    cb_ctl *run_comm;
    /* Called, when not NULL, whenever a backend waiting for its operations
     * sees some of them complete: the watchdog counts it as progress. */
    void (*progress)(void *ctx);
    void *progress_ctx;
    int registration;  /* -R: 0, or 1 and 2 on a backend with `registers` */
    int repeat_check;  /* -B: a backend that can compare in its own memory prepares to */
    int memory_report; /* -M: note the device memory free before the communicator */
} cb_backend_config;

/* Room for a backend's library and driver versions line. */
#define CB_BACKEND_VERSIONSLEN 256

/* The part of every backend's state that the engine reads. Backends embed
 * it as their first member. */
typedef struct cb_backend {
    const cb_backend_ops *ops;
    cb_ctl *comm;             /* the ranks this backend spans */
    int rank;
    int nranks;
    char error[CB_BACKEND_ERRLEN];
    char notice[CB_BACKEND_NOTICELEN]; /* lines for the reader after init (cb_backend_add_notice), "" for none */
    /* The call alloc gets the engine's buffers from, for the preamble, CSV
     * and JSON ("ncclMemAlloc", "cudaMalloc", "posix_memalign"); set by
     * init, "" when unknown. */
    char allocator[32];
    /* -B, set by init: 1 when repeat_check compares in the backend's own
     * memory (the NCCL backend's kernel), so that the engine allocates the
     * reference with alloc, among the buffers; 0: in host memory. */
    int repeat_on_device;
    /* -M: the device memory free just before init made the communicator,
     * for nccl-tests' memory report; 0 where unknown or not a device. */
    size_t free_before_comm;
} cb_backend;

/* One rank's device, for the "Using devices" lines and the CSV. */
typedef struct cb_device_desc {
    int index;                          /* device ordinal, -1 for host memory */
    char bus_id[32];                    /* PCI bus id, "-" for host memory */
    char model[CB_DEVICE_DESCLEN];      /* GPU or CPU model */
    char library[CB_DEVICE_DESCLEN];    /* library and version measured */
} cb_device_desc;

/* The collective primitives' signatures, one a shape, named here once: the
 * ops table's members below and each backend's declarations of its own
 * (mpi_backend.h, nccl_backend.h) are of these types. */
typedef int cb_backend_coll(cb_backend *b, const void *send, void *recv, size_t count,
                            cb_dtype dtype);
typedef int cb_backend_coll_redop(cb_backend *b, const void *send, void *recv, size_t count,
                                  cb_dtype dtype, cb_redop redop);
typedef int cb_backend_coll_root(cb_backend *b, const void *send, void *recv, size_t count,
                                 cb_dtype dtype, int root);
typedef int cb_backend_coll_redop_root(cb_backend *b, const void *send, void *recv,
                                       size_t count, cb_dtype dtype, cb_redop redop, int root);
typedef int cb_backend_coll_peers(cb_backend *b, const void *send, void *recv, size_t count,
                                  cb_dtype dtype, int send_peer, int recv_peer);
typedef int cb_backend_coll_v(cb_backend *b, const void *send, const size_t *send_counts,
                              const size_t *send_offsets, void *recv, const size_t *recv_counts,
                              const size_t *recv_offsets, cb_dtype dtype);

struct cb_backend_ops {
    const char *name;
    const char *summary;   /* one line for --help */

    /* Can this backend run on this rank? 1 yes, 0 no with the reason in why.
     * Called before MPI agreement; must not communicate. */
    int (*usable)(char *why, size_t why_len);

    /* Start on the ranks of comm (collective over comm). On failure, *out is
     * either NULL or a backend whose error says why; fini must still be
     * called on a non-NULL *out. */
    int (*init)(cb_ctl *comm, const cb_backend_config *config, cb_backend **out);
    /* Release everything; aborting is set when another rank failed. */
    void (*fini)(cb_backend *b, int aborting);
    /* Optional: called from the watchdog thread just before the process
     * ends on a timeout; makes blocked operations return (NCCL: asks the
     * main thread to abort). Runs beside the main thread, and the watchdog
     * waits for it only a bounded time. Nothing else of the backend is
     * used afterwards. */
    void (*abort)(cb_backend *b);

    int (*describe)(cb_backend *b, cb_device_desc *desc);
    /* Optional (NULL: nothing to add): one line of library, runtime and driver
     * versions for the preamble, e.g. header versus library versions. */
    void (*versions)(cb_backend *b, char *buf, size_t len);
    /* Bytes this rank can allocate for benchmark buffers. */
    int (*memory_available)(cb_backend *b, size_t *bytes);
    /* Optional (NULL on host-memory backends): the device memory free now,
     * as the driver reports it, for -M's report of what each stage took. */
    int (*device_free)(cb_backend *b, size_t *bytes);

    /* Buffers, and copies between them and host memory. */
    struct cb_backend_mem_ops {
        /* Buffers the collectives read and write. host_accessible: the engine may
         * read and write them directly instead of through upload/download. */
        int host_accessible;
        /* alloc honours -R 1 and 2 (buffers registered with the library); other
         * backends refuse -R with a usage error. */
        int registers;
        int (*alloc)(cb_backend *b, size_t bytes, void **ptr);
        void (*free)(cb_backend *b, void *ptr);
        int (*upload)(cb_backend *b, void *dst, const void *src, size_t bytes);
        int (*download)(cb_backend *b, void *dst, const void *src, size_t bytes);
    } mem;

    /* 1 when the backend can run this type and reduction, else 0 and why. */
    int (*supports)(cb_backend *b, cb_dtype dtype, cb_redop redop, char *why, size_t why_len);

    /* Collective primitives; each launches one operation on comm. */
    struct cb_backend_coll_ops {
        cb_backend_coll_redop *allreduce;
        /*
         * The rest follow NCCL's definitions: counts are per rank, and a call is
         * in place when the buffers relate as NCCL says (allgather and gather:
         * send == recv + rank * count; reducescatter and scatter: recv == send +
         * rank * count; the others: send == recv). NULL when the backend lacks
         * the operation: the engine then skips the collective with a note.
         */
        /* recv (count * n) gets every rank's count elements, in rank order. */
        cb_backend_coll *allgather;
        /* recv (count) gets block rank of the reduction of every send (count * n). */
        cb_backend_coll_redop *reducescatter;
        /* Every rank's recv gets root's send; only root reads send. */
        cb_backend_coll_root *broadcast;
        /* root's recv gets the reduction of every send; other ranks' recv is unused. */
        cb_backend_coll_redop_root *reduce;
        /* Block j (count elements) of send goes to block rank of rank j's recv. */
        cb_backend_coll *alltoall;
        /* root's recv (count * n) gets every rank's send, in rank order. */
        cb_backend_coll_root *gather;
        /* Rank r's recv (count) gets block r of root's send (count * n). */
        cb_backend_coll_root *scatter;
        /* send goes to rank send_peer while recv comes from rank recv_peer. */
        cb_backend_coll_peers *sendrecv;
        /* Out of place only (NULL: alltoallv is skipped): send_counts[j]
         * elements at element send_offsets[j] of send go to rank j, which puts
         * them at element recv_offsets[i] of its recv, i being the sender, as
         * its recv_counts[i] says; counts may be 0, and every rank's counts
         * agree with its peers'. */
        cb_backend_coll_v *alltoallv;
        /* Optional (NULL: the barrier collective is skipped with a note): return
         * once every rank of comm has entered. */
        int (*barrier)(cb_backend *b);
    } coll;

    /* 1 when a floating-point avg is computed as the sum of input * fl(1/n),
     * rounding every product (NCCL); the check then allows for that rounding
     * when n is not a power of two. 0: sum, then one division. */
    int avg_premultiplies;
    /* 1 when the backend moves data through MPI itself: a run whose control
     * plane is not MPI's (control/launch.h) refuses it. */
    int needs_mpi;

    /* How operations are launched together: groups (-m) and graphs (-G). */
    struct cb_backend_launch_ops {
        /* Optional (both NULL when the backend has no grouping): operations
         * launched between group_start and group_end are issued as one group
         * (-m). Without them the engine launches the operations one by one. */
        int (*group_start)(cb_backend *b);
        int (*group_end)(cb_backend *b);

        /* Optional (all NULL when the backend cannot, and then the engine refuses
         * -G): record the operations launched between graph_begin and graph_end
         * instead of running them, then run the recording with graph_launch, as
         * often as asked. graph_free releases the recording, ending an unfinished
         * recording first; the engine calls it after every graph_begin, also
         * after a failure. */
        int (*graph_begin)(cb_backend *b);
        int (*graph_end)(cb_backend *b);
        int (*graph_launch)(cb_backend *b);
        void (*graph_free)(cb_backend *b);
    } launch;

    /* Wait until every launched operation has completed. */
    int (*wait)(cb_backend *b);
    /* Timing: the backend's clock and per-iteration marks. */
    struct cb_backend_timing_ops {
        /* The backend's own clock (--clock device, and the start of the marks
         * below): mark the start of a timed span; timer_stop waits for
         * completion and gives the seconds since timer_start on this rank. */
        int (*timer_start)(cb_backend *b);
        int (*timer_stop)(cb_backend *b, double *seconds);
        /* Optional (NULL: nothing to do): told when a timed span begins (1)
         * and when it has ended (0), whatever the clock, so that a backend can
         * tell timed launches from the others (the test fault layer's timed:
         * and untimed: faults). */
        void (*span)(cb_backend *b, int begin);

        /* Per-iteration timing, without waiting inside the timed span: all three
         * or none (then no per-iteration statistics are reported).
         * timer_reserve: room for n marks, called outside timed spans;
         * timer_mark: the end of one iteration's launches, inside a timed span;
         * timer_samples: after timer_stop, the seconds between consecutive marks
         * of that span, the first measured from timer_start; n = marks made. */
        int (*timer_reserve)(cb_backend *b, int n);
        int (*timer_mark)(cb_backend *b);
        int (*timer_samples)(cb_backend *b, double *seconds, int n);
        /* 1: a mark is a library call inside the timed span (NCCL's
         * cudaEventRecord, a driver call per iteration), so the engine marks
         * only when per-iteration figures are asked for (--stats,
         * --samples-json, --stable's vote); 0: a clock read, always taken. */
        int marks_cost_a_call;
    } timing;

    /* Optional (NULL: the column layout is refused): copy height rows of
     * width bytes from src (rows pitch_src bytes apart) to dst (rows
     * pitch_dst apart), both backend buffers, launched like an operation. */
    int (*copy2d)(cb_backend *b, void *dst, size_t pitch_dst, const void *src, size_t pitch_src,
                  size_t width, size_t height);
    /* Optional (NULL: collectives built on sub-groups are skipped): collective
     * over b->comm, a backend over the ranks that give the same color >= 0,
     * ranked by key, in *out; a rank giving a negative color gets NULL. The
     * new backend shares b's device and timeline (b's timer and wait cover
     * its operations) and needs nothing else of b; end it with fini before b.
     * On failure -1 on every rank, b->error set, *out NULL. */
    int (*split)(cb_backend *b, int color, int key, cb_backend **out);

    /* Optional (NULL: -o comm_init is skipped with a note): collective
     * over b->comm, make one communicator of b's ranks the way op says
     * (cb_comm_op), time its creation on this rank's host clock in
     * *seconds (from a common start, until this rank's communicator is
     * ready), then destroy it untimed. Returns 0; 1 on every rank when the
     * library lacks op (b->error says why); -1 on every rank with b->error
     * on failure. A rank that op leaves out (shrink's excluded rank) gets
     * NaN. */
    int (*comm_time)(cb_backend *b, cb_comm_op op, double *seconds);

    /* Optional (NULL: one implementation, nothing to choose): make later
     * alltoall, gather and scatter launches use impl; returns the one that
     * will run (CB_IMPL_NATIVE or CB_IMPL_P2P), or -1 with b->error naming
     * what the library lacks. Local; the same answer on every rank. */
    int (*select_impl)(cb_backend *b, cb_impl impl);

    /* Optional (NULL: collectives that reduce locally are skipped): one local
     * pass of a reduction on count elements of host-accessible buffers, as
     * stage says; in and inout may be the same buffer for PREPARE and FINISH. */
    int (*reduce_local)(cb_backend *b, cb_local_stage stage, const void *in, void *inout,
                        size_t count, cb_dtype dtype, cb_redop redop);
    /* -B: the output of count elements of esize bytes at out (a backend
     * buffer, complete: the engine waits first) against ref, which the
     * engine keeps: a buffer from alloc when b->repeat_on_device, else host
     * memory. keep 1: out is copied into ref (the first launch's); keep 0:
     * *differing = the elements whose bits differ from ref's, out
     * unchanged. scratch: host memory of count * esize bytes for a backend
     * whose buffers the host cannot read, NULL on one whose it can. */
    int (*repeat_check)(cb_backend *b, const void *out, size_t count, size_t esize, void *ref,
                        void *scratch, int keep, size_t *differing);
    /* -B's preamble: whether this library reduces floating-point values in
     * one order launch after launch, so that their bits must repeat. */
    const char *repeat_promise;
    /* Optional, with reduce_local: host memory of at least bytes for a
     * collective built from primitives, kept (and reused) until fini; NULL
     * with the reason in b->error. */
    void *(*host_scratch)(cb_backend *b, size_t bytes);
};

/* Every backend compiled in, in preference order for "auto". */
const cb_backend_ops *const *cb_backend_list(void);

/* The backend with this name, or NULL. */
const cb_backend_ops *cb_backend_lookup(const char *name);

/* Backends this program knows of but was built without, NULL-terminated
 * pairs of name and reason, e.g. {"nccl", "configure found no ...", NULL}. */
const char *const *cb_backend_not_built(void);

/* Why the backend with this name was not built, or NULL when it was built or
 * is unknown. */
const char *cb_backend_not_built_reason(const char *name);

/* -B's comparison in host memory: the elements of esize bytes of a and b
 * (count each) whose bits differ. */
size_t cb_count_differing(const void *a, const void *b, size_t count, size_t esize);
/* repeat_check for a backend whose buffers the host can read (scratch unused). */
int cb_repeat_check_host(cb_backend *b, const void *out, size_t count, size_t esize, void *ref,
                         void *scratch, int keep, size_t *differing);

/* printf into b->error; returns -1 for use in return statements. */
int cb_backend_fail(cb_backend *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Appends a printf line to b->notice, after a newline when one is there:
 * the preamble shows each line of it as a note of its own. */
void cb_backend_add_notice(cb_backend *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * For a backend's init, between set-up steps: collective over comm, so that
 * one rank's failure stops every rank before the next step that would block.
 * failed: this rank's step failed, with the reason in b->error (b may be NULL
 * when the backend could not even allocate its state). Returns 0 when no rank
 * failed; otherwise -1 on every rank, and the ranks that did not fail
 * themselves get "rank R (HOST): <reason>" of the lowest failing rank in
 * b->error.
 */
int cb_backend_agree(cb_ctl *comm, cb_backend *b, int failed);

#endif
