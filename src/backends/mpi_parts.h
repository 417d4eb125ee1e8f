/* The MPI backend's entries that live outside mpi.c, for its ops table. */
#ifndef CB_MPI_PARTS_H
#define CB_MPI_PARTS_H

#include "backends/backend.h"

/* mpi_alltoallv.c */
int cb_mpi_alltoallv(cb_backend *b, const void *send, const size_t *send_counts,
                     const size_t *send_offsets, void *recv, const size_t *recv_counts,
                     const size_t *recv_offsets, cb_dtype dtype);
/* mpi_comm_time.c: -o comm_init */
int cb_mpi_comm_time(cb_backend *b, cb_comm_op op, double *seconds);

#endif
