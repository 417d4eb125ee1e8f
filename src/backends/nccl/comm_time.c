/*
 * The NCCL backend's communicator timing (-o comm_init; nccl/comm.c makes
 * the run's communicators): ncclCommInitRankConfig for init (the unique id
 * made and broadcast before the clock starts), ncclCommSplit into two
 * halves by rank for split, ncclCommShrink without the last rank for
 * shrink (NCCL 2.27 on; the rank left out does not call it, as NCCL
 * requires). Each is made as the run's own communicator is (blocking, or
 * polled under NCCL_COMM_BLOCKING=0), timed on this rank's host clock from
 * a barrier until it is ready, and destroyed untimed. NCCL has no grow yet.
 */
#include <math.h>
#include <sched.h>
#include <string.h>

#include "backends/nccl/nccl_backend.h"

#define CB_NCCL_FIRST_SHRINK NCCL_VERSION(2, 27, 0)
#define CB_NCCL_FIRST_SPLIT_TIMED NCCL_VERSION(2, 18, 0)

/* 1 on every rank, with why, when this NCCL cannot make a communicator the
 * way op says; else 0. */
static int lacks(nccl_backend *nb, cb_comm_op op)
{
    cb_backend *b = &nb->base;
    char version[32];
    cb_nccl_version_text(nb->library_version, version, sizeof version);
    int need = op == CB_COMM_SPLIT ? CB_NCCL_FIRST_SPLIT_TIMED
               : op == CB_COMM_SHRINK ? CB_NCCL_FIRST_SHRINK
                                      : 0;
    if (op == CB_COMM_GROW) {
        cb_backend_fail(b, "NCCL %s has no communicator grow", version);
        return 1;
    }
    if (need != 0 && (NCCL_VERSION_CODE < need || nb->library_version < need)) {
        cb_backend_fail(b, "NCCL %s has no %s (%s or later needed)", version,
                        op == CB_COMM_SPLIT ? "ncclCommSplit" : "ncclCommShrink",
                        op == CB_COMM_SPLIT ? "2.18" : "2.27");
        return 1;
    }
    if (need != 0 && !(op == CB_COMM_SPLIT ? cb_nccl_exports_split() : cb_nccl_exports_shrink())) {
        cb_backend_fail(b, "NCCL %s has no %s (the library loaded does not export it)", version,
                        op == CB_COMM_SPLIT ? "ncclCommSplit" : "ncclCommShrink");
        return 1;
    }
    if (op == CB_COMM_SHRINK && b->nranks < 2) {
        cb_backend_fail(b, "a shrink needs 2 ranks at least");
        return 1;
    }
    return 0;
}

static double now_s(void)
{
    return cb_ctl_now();
}

/* Make one communicator the way op says, as the run makes its own
 * (nccl/comm.c): blocking, or polled where NCCL_COMM_BLOCKING=0 made the
 * run non-blocking. *made is the caller's and outlives the wait, since
 * NCCL's thread writes a split's or shrink's result into it. 1 when this
 * rank failed. */
static int make(nccl_backend *nb, cb_comm_op op, const ncclUniqueId *id, ncclComm_t *made,
                double *seconds)
{
    cb_backend *b = &nb->base;
    ncclComm_t parent = nb->comm;
    ncclResult_t res = ncclSuccess;
    const char *call = "ncclCommInitRank";
    double start = now_s();
    if (op == CB_COMM_INIT) {
#if NCCL_VERSION_CODE >= CB_NCCL_FIRST_NONBLOCKING
        if (nb->library_version >= CB_NCCL_FIRST_NONBLOCKING && cb_nccl_exports_init_config()) {
            ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
            config.blocking = 1;
            call = "ncclCommInitRankConfig";
            res = ncclCommInitRankConfig(made, b->nranks, *id, b->rank, &config);
        } else
#endif
            res = ncclCommInitRank(made, b->nranks, *id, b->rank);
        parent = NULL;
    }
#if NCCL_VERSION_CODE >= CB_NCCL_FIRST_SPLIT_TIMED
    if (op == CB_COMM_SPLIT) {
        call = "ncclCommSplit";
        res = ncclCommSplit(parent, b->rank * 2 / b->nranks, b->rank, made, NULL);
    }
#endif
#if NCCL_VERSION_CODE >= CB_NCCL_FIRST_SHRINK
    if (op == CB_COMM_SHRINK && b->rank != b->nranks - 1) {
        int excluded = b->nranks - 1;
        call = "ncclCommShrink";
        res = ncclCommShrink(parent, &excluded, 1, made, NULL, NCCL_SHRINK_DEFAULT);
    } else if (op == CB_COMM_SHRINK) {
        /* Left out: polled, the others' wait holds an agreement to join. */
        if (nb->nonblocking) {
            /* Non-blocking, as theirs is: MPI matches no blocking
             * collective with a non-blocking one. */
            int none = 0, any = 0, done = 0;
            cb_ctl_req *req = NULL;
            if (cb_ctl_iallreduce(b->comm, &none, &any, 1, CB_CTL_INT, CB_CTL_MAX, &req) == 0)
                while (!done && cb_ctl_test(b->comm, req, &done) == 0)
                    if (!done)
                        sched_yield();
        }
        return 0;
    }
#endif
    int failed = nb->nonblocking ? cb_nccl_await_comm(nb, b->comm, made, parent, res, call)
                                 : cb_nccl_check(b, parent, res, call, __FILE__, __LINE__) != 0;
    *seconds = now_s() - start;
    return failed;
}

int cb_nccl_comm_time(cb_backend *b, cb_comm_op op, double *seconds)
{
    nccl_backend *nb = (nccl_backend *)b;
    *seconds = NAN;
    if (lacks(nb, op))
        return 1;   /* the same on every rank: versions and sizes agree */
    ncclUniqueId id;
    memset(&id, 0, sizeof id);
    int failed = op == CB_COMM_INIT && b->rank == 0 && NCCL_CALL(b, NULL, ncclGetUniqueId(&id)) != 0;
    if (cb_backend_agree(b->comm, b, failed) != 0)
        return -1;
    if (op == CB_COMM_INIT)
        cb_ctl_bcast(b->comm, &id, sizeof id, 0);
    cb_ctl_barrier(b->comm);
    ncclComm_t made = NULL;
    failed = make(nb, op, &id, &made, seconds);
    if (made != NULL)
        ncclCommDestroy(made);
    return cb_nccl_agree_telling(b->comm, nb, failed, 0) != 0 ? -1 : 0;
}
