/*
 * The NCCL backend's communicator timing (-o comm_init; nccl/comm.c makes
 * the run's communicators): ncclCommInitRankConfig for init (the unique id
 * made and broadcast before the clock starts), ncclCommSplit into two
 * halves by rank for split, ncclCommShrink without the last rank for
 * shrink (NCCL 2.27 on; the rank left out does not call it, as NCCL
 * requires). Each is timed on this rank's host clock from a barrier until
 * its communicator is ready (non-blocking creation polled as the run's
 * own), and destroyed untimed. NCCL has no grow yet.
 */
#include <math.h>
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
    return MPI_Wtime();
}

/* Make one communicator the way op says; 1 when this rank failed. */
static int make(nccl_backend *nb, cb_comm_op op, const ncclUniqueId *id, ncclComm_t *made,
                double *seconds)
{
    cb_backend *b = &nb->base;
    int nonblocking = nb->library_version >= CB_NCCL_FIRST_NONBLOCKING &&
                      cb_nccl_exports_init_config();
    /* Splits and shrinks come from the non-blocking guard where there is
     * one (the measured communicator is blocking: HACKING.md), polled on
     * it, as the backend's own splits are. */
    ncclComm_t parent = nb->guard != NULL ? nb->guard : nb->comm;
    int parent_nonblocking = nonblocking && (nb->guard != NULL || nb->parent == NULL);
    ncclResult_t res = ncclSuccess;
    double start = now_s();
    int failed = 0;
    if (op == CB_COMM_INIT) {
#if NCCL_VERSION_CODE >= CB_NCCL_FIRST_NONBLOCKING
        if (nonblocking) {
            ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
            config.blocking = 0;
            res = ncclCommInitRankConfig(made, b->nranks, *id, b->rank, &config);
            failed = cb_nccl_await_comm(nb, b->comm, made, NULL, res, "ncclCommInitRankConfig");
        }
#endif
        if (!nonblocking)
            failed = NCCL_CALL(b, NULL, ncclCommInitRank(made, b->nranks, *id, b->rank)) != 0;
    }
#if NCCL_VERSION_CODE >= CB_NCCL_FIRST_SPLIT_TIMED
    if (op == CB_COMM_SPLIT) {
        res = ncclCommSplit(parent, b->rank * 2 / b->nranks, b->rank, made, NULL);
        failed = parent_nonblocking
                     ? cb_nccl_await_comm(nb, b->comm, made, parent, res, "ncclCommSplit")
                     : NCCL_CALL(b, parent, res) != 0;
    }
#endif
#if NCCL_VERSION_CODE >= CB_NCCL_FIRST_SHRINK
    if (op == CB_COMM_SHRINK && b->rank != b->nranks - 1) {
        int excluded = b->nranks - 1;
        res = ncclCommShrink(parent, &excluded, 1, made, NULL, NCCL_SHRINK_DEFAULT);
        failed = parent_nonblocking
                     ? cb_nccl_await_comm(nb, b->comm, made, parent, res, "ncclCommShrink")
                     : NCCL_CALL(b, parent, res) != 0;
    } else if (op == CB_COMM_SHRINK) {
        /* Left out: only the agreement that the others' wait holds. */
        int none = 0, any = 0;
        MPI_Request req;
        MPI_Iallreduce(&none, &any, 1, MPI_INT, MPI_MAX, b->comm, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        return 0;
    }
#endif
    (void)res;
    (void)parent;
    (void)parent_nonblocking;
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
        MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, b->comm);
    MPI_Barrier(b->comm);
    ncclComm_t made = NULL;
    failed = make(nb, op, &id, &made, seconds);
    if (made != NULL)
        ncclCommDestroy(made);
    return cb_nccl_agree_telling(b->comm, nb, failed) != 0 ? -1 : 0;
}
