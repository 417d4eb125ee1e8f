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

#include <signal.h>
#include <stddef.h>

/* The variable that marks a rank started by -g. */
#define CB_LOCAL_ENV "NCCL_COLLBENCH_LOCAL"
/* The -g parent's pid, in every rank it starts. */
#define CB_LOCAL_PARENT_ENV "NCCL_COLLBENCH_LOCAL_PARENT"
/* What a rank sends its -g parent to end the job at once. */
#define CB_LOCAL_END_SIGNAL SIGUSR1

/* In a rank of -g: ask the parent that started it to end every other rank
 * at once (SIGKILL) and to exit with this rank's status; nothing where the
 * process is no -g rank or its parent is gone. The rank then exits. */
void cb_local_end_job(void);

/* Start the n ranks, forward SIGINT and SIGTERM to them, and wait. When one
 * rank ends with a failure, the others get grace_s seconds to end by
 * themselves (they agree on failures, and their watchdogs bound every
 * wait), then SIGTERM, then SIGKILL; a rank that ends the job
 * (cb_local_end_job) has the others killed at once and gives the status.
 * Each rank gets SIGTERM when this process dies (PR_SET_PDEATHSIG), so
 * none outlives it. Returns the run's status: rank 0's
 * when it failed, else the first failing rank's (a signal: 128 + its
 * number), else 0; or -1 with a
 * message in err when the ranks could not be started (a usage error in
 * the environment gives status 2 through *usage). */
int cb_local_run(int n, char **argv, double grace_s, int *usage, char *err, size_t len);

#endif
