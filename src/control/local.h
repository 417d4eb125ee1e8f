/*
 * `-g N`: this process starts N ranks on its node, one per GPU, and waits
 * for them; no MPI. Each rank is this program again (by its own path, so
 * that ps and top show its name, not "exe"; the
 * same arguments) with torchrun's variables (RANK, WORLD_SIZE, LOCAL_RANK,
 * LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT), NCCL_COLLBENCH_LOCAL=1 and a
 * fresh NCCL_COLLBENCH_KEY, so that they meet over the TCP control plane
 * (control/launch.h, mode local). On one node the rendezvous is on the
 * loopback at a free port; NNODES and NODE_RANK (with MASTER_ADDR and
 * MASTER_PORT, and NCCL_COLLBENCH_KEY shared by the nodes) span several:
 * rank = NODE_RANK * N + i of NNODES * N.
 */
#ifndef CB_LOCAL_H
#define CB_LOCAL_H

#include <stddef.h>

/* The variable that marks a rank started by -g. */
#define CB_LOCAL_ENV "NCCL_COLLBENCH_LOCAL"

/* Start the n ranks, forward SIGINT and SIGTERM to them, and wait. When one
 * rank ends with a failure, the others get grace_s seconds to end by
 * themselves (they agree on failures, and their watchdogs bound every
 * wait), then SIGTERM, then SIGKILL. Returns the run's status: rank 0's
 * when it failed, else the first failing rank's (a signal: 128 + its
 * number), else 0; or -1 with a
 * message in err when the ranks could not be started (a usage error in
 * the environment gives status 2 through *usage). */
int cb_local_run(int n, char **argv, double grace_s, int *usage, char *err, size_t len);

#endif
