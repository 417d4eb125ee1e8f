/*
 * NCCL's async jobs on a thread in the stand-in (threads.c, jobs.c,
 * bootstrap.c; docs/design/nccl-contract.md G1 and discrepancy 5): a
 * non-blocking creation, or a non-blocking parent's split or shrink,
 * outside a group runs its bootstrap on a real pthread, the communicator
 * in progress until it is done, and ncclCommAbort can end one that waits
 * for a peer.
 */
#ifndef CB_STANDIN_ASYNC_JOBS_H
#define CB_STANDIN_ASYNC_JOBS_H

#include "standin.h"

/* What an abort uses to end a bootstrap that waits: a flag, and the
 * sockets it waits on (shut down by standin_cancel_fire), guarded by
 * standin_lock so that a socket is never shut down after its close. */
typedef struct standin_cancel {
    atomic_int fired;
    int fds[2];
} standin_cancel;
void standin_cancel_init(standin_cancel *cancel);
/* Watch fd in slot (-1: stop watching); 1 when already fired. */
int standin_cancel_watch(standin_cancel *cancel, int slot, int fd);
void standin_cancel_fire(standin_cancel *cancel);

/* standin_bootstrap_init that cancel (NULL: none) can end. */
ncclResult_t standin_bootstrap_cancellable(const ncclUniqueId *id, int nranks, int rank,
                                           int never_joins, standin_net **net, int *stuck,
                                           standin_cancel *cancel);

/* An async job for a thread of its own (traced "async-job start N by
 * CALL"): work runs on the thread; finish, on a caller that sees it done
 * or joins it, gives its result to the linked communicator; cancel, from
 * ncclCommAbort, ends a wait. finish frees arg. */
standin_thread_job *standin_async_job_new(ncclResult_t (*work)(void *arg),
                                          void (*finish)(struct ncclComm *comm, void *arg,
                                                         ncclResult_t res),
                                          void (*cancel)(void *arg), void *arg);

/* jobs.c: a non-blocking ncclCommInitRank(Config) outside a group, its
 * bootstrap on an async job's thread (NCCL: ncclGroupEndInternal's
 * thread). */
ncclResult_t standin_init_async(ncclComm_t *comm, const ncclUniqueId *id, int nranks, int rank,
                                const ncclConfig_t *config);

#endif
