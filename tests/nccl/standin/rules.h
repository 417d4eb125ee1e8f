/*
 * What the stand-in's rule cases share (rules_common.c) and where they
 * live (rules.c, rules_contract.c, rules_group.c, rules_register.c,
 * rules_cuda.c, rules_lasterr.c, rules_capture2.c, rules_abort.c,
 * rules_nvls.c, rules_thread.c, rules_jobs.c): each case runs on 2 ranks
 * (rules_nvls.c's on 4) and returns 0, or names a broken expectation
 * through EXPECT, which ends every rank at once.
 */
#ifndef CB_STANDIN_RULES_H
#define CB_STANDIN_RULES_H

#include <mpi.h>
#include <stdio.h>

#include "standin.h"

/* A broken expectation ends every rank at once: the others may be waiting
 * in the stand-in for this one. */
#define EXPECT(cond, what)                                                          \
    do {                                                                            \
        if (!(cond)) {                                                              \
            fprintf(stderr, "%s:%d: rank %d: %s (%s)\n", __FILE__, __LINE__,       \
                    rules_rank(), what, #cond);                                     \
            MPI_Abort(MPI_COMM_WORLD, 1);                                           \
            return 1;                                                               \
        }                                                                           \
    } while (0)

/* This rank of MPI_COMM_WORLD. */
int rules_rank(void);

/* How many lines of this rank's trace contain text. */
int rules_trace_count(const char *text);

/* A fresh unique id, the same on every rank. */
ncclUniqueId rules_world_id(void);
/* A communicator over every rank: with config, or blocking (or not). */
ncclResult_t rules_comm_world_config(ncclComm_t *comm, ncclConfig_t *config);
ncclResult_t rules_comm_world(ncclComm_t *comm, int blocking);
/* A non-blocking one, polled until it is made; NULL on failure. */
ncclComm_t rules_nonblocking_world(void);

/* cudaMalloc'd bytes, or NULL. */
void *rules_device_memory(size_t bytes);

/* Queries until comm is seen done: how many said ncclInProgress (-1 after
 * 1000 and 20 s more, a deadline: NCCL's launch thread may be slow to
 * run on a loaded machine), *state the last answer. */
int rules_polls_until_done(ncclComm_t comm, ncclResult_t *state);

/* rules_contract.c: 1 when a refused ncclCommDestroy leaves the thread in
 * a group at the reported version (2.24 on, but 2.27.0 to 2.27.5). */
int rules_destroy_leaves_group(void);

/* rules_contract.c's cases: NCCL's contract by version
 * (docs/design/nccl-contract.md). */
int rules_case_launch_thread(void);
int rules_case_destroy_error(void);
int rules_case_connect_memory(void);
int rules_case_group_modes(void);
int rules_case_config_blocking(void);
int rules_case_group_mixed(void);
int rules_case_abort_inside(void);
int rules_case_shrink_split(void);

/* rules_register.c: registrations NCCL does not make (NULL handle or
 * window) by version and environment; calls without a readiness check;
 * window deregistration without a barrier. */
int rules_case_register_null(void);
int rules_case_unready_unchecked(void);
int rules_case_window_deregister(void);

/* rules_group.c: creation, split and shrink inside a group (G5), and the
 * parent's splitShare and shrinkShare (G9). */
int rules_case_group_create(void);
int rules_case_split_share(void);
int rules_case_split_share_env(void);

/* rules_cuda.c: stream capture by mode, the config's share fields, when
 * NCCL connects, and ncclMemAlloc's granularity. */
int rules_case_capture_query(void);
int rules_case_capture_modes(void);
int rules_case_config_share(void);
int rules_case_runtime_connect(void);
/* One communicator over every rank at version (variable=value while it
 * lives): what its creation and its first collective took from the
 * device; 0, or -1 when a call failed or its end gave not all back. */
int rules_connect_costs(const char *version, const char *variable, const char *value,
                        size_t *at_creation, size_t *at_first_use);
int rules_case_memalloc_granularity(void);

/* rules_thread.c: NCCL's launch thread, by version and mode. */
int rules_case_launch_threads(void);

/* rules_lasterr.c: cudaGetLastError keeps any runtime call's error. */
int rules_case_last_error(void);

/* rules_nvls.c: NVLS buffers by version, and split children's (4 ranks). */
int rules_case_nvls_memory(void);
int rules_case_nvls_split(void);
/* rules_capture2.c: memsets, copies, event records and kernels captured
 * and replayed in order. */
int rules_case_capture_work(void);
int rules_case_capture_kernel(void);
/* PTX of -B's compare kernel (cb_count_differing), for the kernel cases. */
extern const char rules_count_differing_ptx[];
/* Device buffers a and b of 8 bytes that differ in one, and a zeroed
 * count, for that kernel; -1 when cudaMalloc failed. */
int rules_kernel_buffers(unsigned char **a, unsigned char **b, unsigned long long **count);

/* rules_abort.c: ncclCommAbort inside a group by version; injected job
 * failures at the group's end. */
int rules_case_abort_group_version(void);
int rules_case_fail_at_group_end(void);

/* rules_jobs.c: NCCL's async jobs (creation) on a thread. */
int rules_case_async_jobs(void);

#endif
