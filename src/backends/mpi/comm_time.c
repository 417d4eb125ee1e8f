/*
 * The MPI backend's communicator timing (-o comm_init; ops.c has the rest):
 * MPI_Comm_dup for init, MPI_Comm_split into two halves for split, each
 * from a barrier to the call's return on this rank, freed untimed. MPI has
 * no shrink or grow outside its fault-tolerance extensions.
 */
#include <math.h>

#include "backends/mpi/mpi_backend.h"

int cb_mpi_comm_time(cb_backend *b, cb_comm_op op, double *seconds)
{
    *seconds = NAN;
    if (op != CB_COMM_INIT && op != CB_COMM_SPLIT)
        return cb_backend_fail(b, "MPI has no communicator %s (only MPI_Comm_dup and "
                               "MPI_Comm_split)", cb_comm_op_name(op)) + 2;
    MPI_Comm made = MPI_COMM_NULL;
    MPI_Barrier(b->comm);
    double start = MPI_Wtime();
    int rc = op == CB_COMM_INIT
                 ? MPI_Comm_dup(b->comm, &made)
                 : MPI_Comm_split(b->comm, b->rank * 2 / b->nranks, b->rank, &made);
    *seconds = MPI_Wtime() - start;
    if (made != MPI_COMM_NULL)
        MPI_Comm_free(&made);
    int failed = rc != MPI_SUCCESS;
    if (failed)
        cb_backend_fail(b, "%s failed (MPI error %d)",
                        op == CB_COMM_INIT ? "MPI_Comm_dup" : "MPI_Comm_split", rc);
    return cb_backend_agree(b->comm, b, failed);
}
