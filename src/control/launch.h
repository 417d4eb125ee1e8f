/*
 * How this process was launched, read from its environment, and the
 * control plane that goes with it (control/control.h):
 *   mpi       mpirun, mpiexec or srun --mpi=...: the MPI launcher's
 *             variables (OMPI_COMM_WORLD_SIZE, PMI_SIZE, PMIX_RANK); MPI
 *   torchrun  RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR,
 *             MASTER_PORT: TCP rendezvous at MASTER_ADDR:MASTER_PORT
 *   slurm     srun without MPI: SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID;
 *             rendezvous on the first host of SLURM_JOB_NODELIST (or
 *             SLURM_STEP_NODELIST) at NCCL_COLLBENCH_PORT or a port derived
 *             from the job and step ids
 *   local     a rank `-g N` started on this node (the parent gives it the
 *             torchrun variables and a key of its own)
 *   single    none of them: one rank, through MPI's singleton start where
 *             the program has MPI
 * NCCL_COLLBENCH_LAUNCH=mpi|tcp|auto chooses over the detection.
 */
#ifndef CB_LAUNCH_H
#define CB_LAUNCH_H

#include <stddef.h>

/* How the ranks are started and watched (cb_params.launch; read by main.c,
 * control/ and the engine's watchdog). */
typedef struct cb_launch_params {
    int timeout;           /* seconds without progress before the watchdog ends the run; 0 off */
    int local_ranks;       /* -g N: ranks this process starts on this node (control/local.h) */
    int require_key;       /* --require-key: a TCP launch without NCCL_COLLBENCH_KEY is refused */
} cb_launch_params;

#include "control/control.h"

typedef enum cb_launch_mode {
    CB_LAUNCH_SINGLE,
    CB_LAUNCH_MPI,
    CB_LAUNCH_TORCHRUN,
    CB_LAUNCH_SLURM,
    CB_LAUNCH_LOCAL
} cb_launch_mode;

#define CB_LAUNCH_ADDRLEN 256
#define CB_LAUNCH_KEYLEN 32
#define CB_LAUNCH_JOBLEN 96
#define CB_LAUNCH_PORT_TRIES 8
/* The job identity -g N's parent gives its ranks on one node (its own
 * random nonce); a user may set it too, to tell jobs apart on one port. */
#define CB_LAUNCH_JOB_ENV "NCCL_COLLBENCH_JOB"
/* Set to 1 by -g on one node, whose parent picked MASTER_PORT itself: the
 * rendezvous may move to the ports after it, as under torchrun. */
#define CB_LAUNCH_PICKED_PORT_ENV "NCCL_COLLBENCH_PICKED_PORT"

typedef struct cb_launch {
    cb_launch_mode mode;
    int rank, size;                 /* -1 where MPI says (mpi, single) */
    int local_rank, local_size;     /* -1 where unknown */
    char addr[CB_LAUNCH_ADDRLEN];   /* the rendezvous: rank 0 listens there */
    int port;
    /* Rank 0 listens on the first free of port .. port + port_tries - 1:
     * 1 where the user or launcher named the port, CB_LAUNCH_PORT_TRIES
     * where it is our guess (torchrun's MASTER_PORT + 1). */
    int port_tries;
    /* The rendezvous key: SHA-256 of NCCL_COLLBENCH_KEY, or of the job's
     * identity when none is given (keyed = 0: the preamble says so). */
    unsigned char key[CB_LAUNCH_KEYLEN];
    int keyed;
    /* The launcher's job identity, "" where there is none:
     * "job NCCL_COLLBENCH_JOB", "torchrun run TORCHELASTIC_RUN_ID" or
     * "slurm job SLURM_JOB_ID.SLURM_STEP_ID". Every rank's must match rank
     * 0's at the rendezvous: two jobs on one port never measure together. */
    char job[CB_LAUNCH_JOBLEN];
} cb_launch;

/* The environment through a reader (tests pass their own). Returns 0, or
 * -1 with a message naming the bad variable and value in err (status 2). */
int cb_launch_detect(const char *(*get)(const char *), cb_launch *out, char *err, size_t len);

/* Whether a launcher made this process one rank of a job already: an MPI
 * launcher's variables, torchrun's RANK, or -g's mark (CB_LOCAL_ENV). */
int cb_launch_is_rank(const char *(*get)(const char *));

/* This process's rank as its launcher's variables give it, before the
 * world is made; -1 when none names one. For messages only. */
int cb_launch_env_rank(const char *(*get)(const char *));

/* The mode's name, as the preamble and --help say it. */
const char *cb_launch_mode_name(cb_launch_mode m);

/* "torchrun launch, TCP rendezvous at HOST:PORT", and that it is not
 * authenticated where no NCCL_COLLBENCH_KEY was given. */
void cb_launch_describe(const cb_launch *l, char *buf, size_t len);

/* Whether the launch meets over TCP (torchrun, slurm, local): where a
 * key matters, and where --require-key asks for one. */
int cb_launch_uses_tcp(const cb_launch *l);

/* The TCP plane over the rendezvous l names: every rank of l->size joins
 * within timeout_s, or -1 with a message in err; CB_CTL_TCP_LATE where a
 * rank did not come within timeout_s (on every rank that waited for it,
 * rank 0 or not: one cause, one status). */
#define CB_CTL_TCP_LATE (-2)
int cb_ctl_tcp_world(const cb_launch *l, double timeout_s, cb_ctl **out, char *err, size_t len);

#endif
