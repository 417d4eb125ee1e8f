/* The MPI backend's entries that live outside ops.c, for its ops table. */
#ifndef CB_MPI_PARTS_H
#define CB_MPI_PARTS_H

#include "backends/backend.h"

/* mpi/alltoallv.c */
int cb_mpi_alltoallv(cb_backend *b, const void *send, const size_t *send_counts,
                     const size_t *send_offsets, void *recv, const size_t *recv_counts,
                     const size_t *recv_offsets, cb_dtype dtype);
/* mpi/comm_time.c: -o comm_init */
int cb_mpi_comm_time(cb_backend *b, cb_comm_op op, double *seconds);

#endif
