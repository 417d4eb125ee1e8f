/* The NCCL backend's choice of GPU for each rank (nccl/device.c). */
#ifndef CB_NCCL_DEVICE_H
#define CB_NCCL_DEVICE_H

#include "control/control.h"

#include "backends/backend.h"

/* Names a device by its ordinal among the GPUs the rank sees, overriding
 * the choice below (documented in nccl-collbench(1), ENVIRONMENT). */
#define CB_DEVICE_ENV "NCCL_COLLBENCH_DEVICE"
/* nccl-tests' name for it, read where CB_DEVICE_ENV is unset. */
#define CB_TESTS_DEVICE_ENV "NCCL_TESTS_DEVICE"

typedef struct cb_nccl_device {
    int device;       /* ordinal among the GPUs this rank sees, made current */
    int local_rank;   /* place among the ranks of its host (NCCL_HOSTID counts) */
    int local_ranks;
    int sharers;      /* ranks on this machine driving the same GPU, itself included */
} cb_nccl_device;

/* Chooses this rank's GPU and makes it current (cudaSetDevice), collective
 * over run, the whole run's communicator (never a --split group's, so that
 * groups do not each start again at device 0). CB_DEVICE_ENV when set;
 * otherwise the rank's place among the ranks of its host that see the same
 * GPUs: its local rank when all see all, the first GPU it sees when each
 * was given its own (per-task binding). Two ranks of one host on one GPU
 * are refused: ranks given
 * different NCCL_HOSTID values are different hosts and may share. 0 on
 * every rank, or -1 on every rank with b->error saying why. */
int cb_nccl_device_choose(cb_backend *b, cb_ctl *run, cb_nccl_device *out);

#endif
