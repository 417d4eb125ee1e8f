/*
 * The control plane over MPI (control/control.h): mpirun, mpiexec and srun
 * with an MPI plug-in. The only place besides the MPI backend that holds an
 * MPI_Comm.
 */
#ifndef CB_CONTROL_MPI_H
#define CB_CONTROL_MPI_H

#include <mpi.h>

#include "control/control.h"

/* MPI_Init, and the world as a cb_ctl. Returns 0, or -1 (MPI refused). */
int cb_ctl_mpi_world(int *argc, char ***argv, cb_ctl **out);

/* MPI_Finalize, where MPI was initialised and not yet finalised. */
void cb_ctl_mpi_finalize(void);

/* c's MPI communicator; MPI_COMM_NULL when c is not MPI's (the MPI backend
 * is refused then). */
MPI_Comm cb_ctl_mpi_comm(const cb_ctl *c);

/* MPI_Get_library_version's first line, or "" when MPI is not running. */
void cb_ctl_mpi_version(char *buf, size_t len);

#endif
