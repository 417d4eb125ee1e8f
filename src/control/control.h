/*
 * The control plane: how the ranks of a run talk to each other outside the
 * backend's data path. NCCL itself needs its peers for one thing only, the
 * ncclUniqueId; the engine also agrees on failures, reduces a few numbers,
 * gathers results and splits groups. All of that goes through this small
 * interface, never through MPI directly, so that a run can start under
 * mpirun (control/mpi.c) or with no MPI at all (control/tcp.c: a TCP
 * rendezvous where torchrun's MASTER_ADDR:MASTER_PORT, Slurm's first node
 * or `-g N`'s parent says). Which one a run uses: control/launch.h.
 *
 * Every call is collective over the ranks of its cb_ctl unless it says
 * otherwise, and returns 0, or -1 when a peer could not be reached (the
 * TCP plane; MPI's default handler aborts the job instead). A call never
 * waits without bound by itself only where the implementation says so:
 * the watchdog (safety/watchdog.h) bounds every wait of the run.
 */
#ifndef CB_CONTROL_H
#define CB_CONTROL_H

#include <stddef.h>

/* Element types of reductions. CB_CTL_U64 is uint64_t (and unsigned long
 * long, which is 64-bit on every platform the program builds on). */
typedef enum cb_ctl_type { CB_CTL_BYTE, CB_CTL_INT, CB_CTL_DOUBLE, CB_CTL_U64 } cb_ctl_type;

/* CB_CTL_LAND: logical and of ints (1 when every rank's value is non-zero). */
typedef enum cb_ctl_op { CB_CTL_SUM, CB_CTL_MIN, CB_CTL_MAX, CB_CTL_LAND } cb_ctl_op;

/* A reduction's input that is its output (MPI_IN_PLACE's role). */
#define CB_CTL_IN_PLACE ((const void *)0)

/* Room for a host's name or label in the messages that travel. */
#define CB_CTL_HOSTLEN 256

typedef struct cb_ctl cb_ctl;
typedef struct cb_ctl_req cb_ctl_req;

/* One implementation. Sizes are in bytes except count, in elements. */
typedef struct cb_ctl_ops {
    const char *name;   /* "mpi", "tcp": the preamble's word */
    int (*barrier)(cb_ctl *c);
    int (*bcast)(cb_ctl *c, void *buf, size_t bytes, int root);
    /* in == CB_CTL_IN_PLACE: out is both. */
    int (*allreduce)(cb_ctl *c, const void *in, void *out, int count, cb_ctl_type type,
                     cb_ctl_op op);
    /* Rank i's bytes land at out + i * bytes; out is read at root only. */
    int (*gather)(cb_ctl *c, const void *in, size_t bytes, void *out, int root);
    int (*allgather)(cb_ctl *c, const void *in, size_t bytes, void *out);
    /* Point to point, not collective; tag >= 0 keeps streams apart. */
    int (*send)(cb_ctl *c, const void *buf, size_t bytes, int dest, int tag);
    int (*recv)(cb_ctl *c, void *buf, size_t bytes, int src, int tag);
    /* A reduction that may be waited for in turns (a rank that must keep
     * polling NCCL meanwhile); test sets *done and, when done, frees *req. */
    int (*iallreduce)(cb_ctl *c, const void *in, void *out, int count, cb_ctl_type type,
                      cb_ctl_op op, cb_ctl_req **req);
    int (*test)(cb_ctl_req *req, int *done);
    /* Ranks of equal color >= 0 form a group, ordered by key then rank;
     * color < 0: *out is NULL. */
    int (*split)(cb_ctl *c, int color, int key, cb_ctl **out);
    /* The ranks on this machine (the same kernel), ordered by key. */
    int (*split_node)(cb_ctl *c, int key, cb_ctl **out);
    /* len bytes every rank of c holds alike and that never crossed the
     * network in the clear: keys for the side channel. */
    int (*secret)(cb_ctl *c, const char *label, unsigned char *out, size_t len);
    /* Not collective: what the preamble's "MPI:" field says, the MPI
     * library's version, or "none (...)" and how the ranks met. */
    void (*describe)(cb_ctl *c, char *buf, size_t len);
    void (*free)(cb_ctl *c);
    /* Not collective: end every rank of the job at once with status code,
     * for a rank whose peers cannot learn of its failure (they wait for it
     * inside NCCL). MPI: MPI_Abort. TCP: this rank exits, its -g parent
     * told to kill the others (torchrun's agent and mpirun end a job when
     * one rank fails). Never returns. */
    void (*abort)(cb_ctl *c, int code);
    /* Not collective, optional (NULL: the plane cannot say): for
     * cb_ctl_lost, which peer's loss failed this rank, "rank R (HOST)
     * ended or its connection broke" (world rank; HOST its address), and
     * this rank tells its peers still connected, so that every survivor
     * names the same rank. 0, or -1 when it knows of none. */
    int (*lost_peer)(const cb_ctl *c, char *buf, size_t len);
    /* A failed call ends the rank (cb_ctl_lost), as MPI's default error
     * handler does: a run whose peers are gone has nothing left to agree
     * on, and a caller that went on would compute from garbage. */
    int fatal_errors;
} cb_ctl_ops;

/* Whether another thread of this rank is ending the run (the watchdog,
 * after its hang report): a failure the end causes is then not this
 * rank's to report. Splits inherit their parent's. */
typedef struct cb_ctl_guard {
    int (*ending)(void *ctx);
    void *ctx;
    /* Called by cb_ctl_lost before the rank ends (not while ending), with
     * the reason: rank 0 finishes its outputs with what finished, so that
     * a peer's death (SIGKILL, the OOM killer) loses no result. May be
     * NULL. */
    void (*lost)(void *ctx, const char *why);
    void *lost_ctx;
} cb_ctl_guard;

struct cb_ctl {
    const cb_ctl_ops *ops;
    int rank;
    int size;
    void *impl;                  /* the implementation's own state */
    const cb_ctl_guard *guard;   /* NULL: none */
    /* A TCP world met under a key anyone may derive (no NCCL_COLLBENCH_KEY):
     * the preamble, the JSON and the closing verdict say so. */
    int unkeyed;
};

/* c's job ends now with status code (ops->abort); outputs are flushed. */
void cb_ctl_abort(cb_ctl *c, int code) __attribute__((noreturn));

/* c's rank failed in op (a peer ended, or its connection broke): one line
 * on stderr naming the rank, its host, op and the peer lost where the
 * plane knows it (lost_peer), then exit status 1. */
void cb_ctl_lost(const cb_ctl *c, const char *op) __attribute__((noreturn));

/* rc, after ending the rank where c's plane treats failure as fatal. */
static inline int cb_ctl_checked(cb_ctl *c, int rc, const char *op)
{
    if (rc != 0 && c->ops->fatal_errors)
        cb_ctl_lost(c, op);
    return rc;
}

static inline int cb_ctl_barrier(cb_ctl *c)
{
    return cb_ctl_checked(c, c->ops->barrier(c), "barrier");
}
static inline int cb_ctl_bcast(cb_ctl *c, void *buf, size_t bytes, int root)
{
    return cb_ctl_checked(c, c->ops->bcast(c, buf, bytes, root), "bcast");
}
static inline int cb_ctl_allreduce(cb_ctl *c, const void *in, void *out, int count,
                                   cb_ctl_type type, cb_ctl_op op)
{
    return cb_ctl_checked(c, c->ops->allreduce(c, in, out, count, type, op), "allreduce");
}
static inline int cb_ctl_gather(cb_ctl *c, const void *in, size_t bytes, void *out, int root)
{
    return cb_ctl_checked(c, c->ops->gather(c, in, bytes, out, root), "gather");
}
static inline int cb_ctl_allgather(cb_ctl *c, const void *in, size_t bytes, void *out)
{
    return cb_ctl_checked(c, c->ops->allgather(c, in, bytes, out), "allgather");
}
static inline int cb_ctl_send(cb_ctl *c, const void *buf, size_t bytes, int dest, int tag)
{
    return cb_ctl_checked(c, c->ops->send(c, buf, bytes, dest, tag), "send");
}
static inline int cb_ctl_recv(cb_ctl *c, void *buf, size_t bytes, int src, int tag)
{
    return cb_ctl_checked(c, c->ops->recv(c, buf, bytes, src, tag), "recv");
}
static inline int cb_ctl_iallreduce(cb_ctl *c, const void *in, void *out, int count,
                                    cb_ctl_type type, cb_ctl_op op, cb_ctl_req **req)
{
    return cb_ctl_checked(c, c->ops->iallreduce(c, in, out, count, type, op, req), "iallreduce");
}
static inline int cb_ctl_test(cb_ctl *c, cb_ctl_req *req, int *done)
{
    return cb_ctl_checked(c, c->ops->test(req, done), "test");
}
static inline int cb_ctl_split(cb_ctl *c, int color, int key, cb_ctl **out)
{
    return cb_ctl_checked(c, c->ops->split(c, color, key, out), "split");
}
static inline int cb_ctl_split_node(cb_ctl *c, int key, cb_ctl **out)
{
    return cb_ctl_checked(c, c->ops->split_node(c, key, out), "split_node");
}
static inline int cb_ctl_secret(cb_ctl *c, const char *label, unsigned char *out, size_t len)
{
    return cb_ctl_checked(c, c->ops->secret(c, label, out, len), "secret");
}
static inline void cb_ctl_describe(cb_ctl *c, char *buf, size_t len)
{
    c->ops->describe(c, buf, len);
}
/* Frees *c (a split's group or the world) and sets it to NULL; NULL is fine. */
static inline void cb_ctl_free(cb_ctl **c)
{
    if (c != NULL && *c != NULL)
        (*c)->ops->free(*c);
    if (c != NULL)
        *c = NULL;
}

/* Seconds on a monotonic clock: the engine's one clock for spans (what
 * MPI_Wtime gave it), whatever the control plane. */
double cb_ctl_now(void);

#endif
