/* Known faults of MPI libraries that the MPI backend steps around. */
#ifndef CB_MPI_QUIRKS_H
#define CB_MPI_QUIRKS_H

#include <mpi.h>

#include "backends/backend.h"

/* 1 when the library that MPI_Get_library_version describes as version
 * crashes in an in-place MPI_Reduce whose root is not rank 0, so that the
 * backend must rank the root first: MPICH's ch4 device from 3.3 to 4.1.1
 * reads MPI_IN_PLACE as a buffer when the root does not lead its node's
 * ranks, from a few KiB on (MPICH issue 6540, fixed in 4.1.2 and 4.2.0). */
int cb_mpi_reduce_needs_root_first(const char *version);

/* The same, for the library this process runs, agreed over b's communicator
 * (all ranks alike: a collective call); when it is 1, a line for the reader
 * in b->notice. The reordered communicator inherits b's error handler. */
int cb_mpi_reduce_root_first_on(cb_backend *b);

#endif
