/*
 * The MPI backend's internal header, shared by the files of this folder:
 * the backend's state and what one file offers the others. ops.c holds the
 * ops table (cb_backend_mpi, which backends/registry.c lists).
 */
#ifndef CB_MPI_BACKEND_H
#define CB_MPI_BACKEND_H

#include <stddef.h>

#include <mpi.h>

#include "backends/backend.h"

#define CB_MPI_BASIC_REDOPS (CB_MAX + 1)   /* sum, prod, min, max: what MPI reduces */

typedef struct mpi_backend {
    cb_backend base;  /* first: the engine sees this; base.comm: the control plane's group */
    int owns_ctl;     /* base.comm is a split of ours (mpi_split), freed with us */
    MPI_Comm comm;    /* a duplicate of that group's MPI communicator, for the measurements */
    double timer_started;
    MPI_Datatype types[CB_DTYPE_COUNT];
    int type_created[CB_DTYPE_COUNT];               /* ours to free */
    MPI_Op ops[CB_DTYPE_COUNT][CB_MPI_BASIC_REDOPS];
    int op_created[CB_DTYPE_COUNT][CB_MPI_BASIC_REDOPS];
    void *work;                                     /* host_scratch's buffer */
    size_t work_bytes;
    double *marks;    /* MPI_Wtime at the end of each marked iteration */
    int nmarks;
    int marks_room;
    int reduce_root_first;  /* this MPI's reduce needs the root ranked first */
    MPI_Comm root_first;    /* comm reordered so that root_first_of is rank 0 */
    int root_first_of;
} mpi_backend;

/* The MPI communicator the measurements run on. */
static inline MPI_Comm cb_mpi_comm(cb_backend *b)
{
    return ((mpi_backend *)b)->comm;
}

/* ops.c: 0, or -1 with a line in b->error naming the call, its place and
 * MPI's error. */
int cb_mpi_check(cb_backend *b, int code, const char *call, const char *file, int line);
#define MPI_CALL(b, call) cb_mpi_check((b), (call), #call, __FILE__, __LINE__)

/* types.c: every cb_dtype's datatype and reductions, made at start and
 * freed at the end; a type or reduction MPI cannot do is MPI_*_NULL. */
int cb_mpi_create_types(mpi_backend *mb);
void cb_mpi_free_types(mpi_backend *mb);
MPI_Datatype cb_mpi_type_of(cb_backend *b, cb_dtype dtype);
MPI_Op cb_mpi_op_of(cb_backend *b, cb_dtype dtype, cb_redop redop);

/* collectives.c: the ops table's collectives. */
cb_backend_coll_redop cb_mpi_allreduce, cb_mpi_reducescatter;
cb_backend_coll cb_mpi_allgather, cb_mpi_alltoall;
cb_backend_coll_root cb_mpi_broadcast, cb_mpi_gather, cb_mpi_scatter;
cb_backend_coll_redop_root cb_mpi_reduce;
cb_backend_coll_peers cb_mpi_sendrecv;
cb_backend_coll_v cb_mpi_alltoallv;
int cb_mpi_barrier(cb_backend *b);
int cb_mpi_reduce_local(cb_backend *b, cb_local_stage stage, const void *in, void *inout,
                        size_t count, cb_dtype dtype, cb_redop redop);

/* timing.c: the clock (MPI_Wtime) and -o comm_init. */
int cb_mpi_timer_start(cb_backend *b);
int cb_mpi_timer_stop(cb_backend *b, double *seconds);
int cb_mpi_timer_reserve(cb_backend *b, int n);
int cb_mpi_timer_mark(cb_backend *b);
int cb_mpi_timer_samples(cb_backend *b, double *seconds, int n);
int cb_mpi_comm_time(cb_backend *b, cb_comm_op op, double *seconds);

#endif
