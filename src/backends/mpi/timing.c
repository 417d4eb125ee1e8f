/*
 * The MPI backend's clock (ops.c has the table): MPI_Wtime around a timed
 * span and at each mark; and its communicator timing (-o comm_init):
 * MPI_Comm_dup for init, MPI_Comm_split into two halves for split, each
 * from a barrier to the call's return on this rank, freed untimed. MPI has
 * no shrink or grow outside its fault-tolerance extensions.
 */
#include <math.h>
#include <stdlib.h>

#include "backends/mpi/mpi_backend.h"

int cb_mpi_timer_start(cb_backend *b)
{
    mpi_backend *mb = (mpi_backend *)b;
    mb->nmarks = 0;
    mb->timer_started = MPI_Wtime();
    return 0;
}

int cb_mpi_timer_stop(cb_backend *b, double *seconds)
{
    *seconds = MPI_Wtime() - ((mpi_backend *)b)->timer_started;
    return 0;
}

int cb_mpi_timer_reserve(cb_backend *b, int n)
{
    mpi_backend *mb = (mpi_backend *)b;
    if (n <= mb->marks_room)
        return 0;
    double *grown = realloc(mb->marks, (size_t)n * sizeof *grown);
    if (grown == NULL)
        return cb_backend_fail(b, "cannot allocate room for %d timestamps", n);
    mb->marks = grown;
    mb->marks_room = n;
    return 0;
}

/* MPI collectives here return when they are complete on this rank, so a
 * timestamp after each iteration is its completion time. */
int cb_mpi_timer_mark(cb_backend *b)
{
    mpi_backend *mb = (mpi_backend *)b;
    if (mb->nmarks >= mb->marks_room)
        return cb_backend_fail(b, "more timer marks than the %d reserved", mb->marks_room);
    mb->marks[mb->nmarks++] = MPI_Wtime();
    return 0;
}

int cb_mpi_timer_samples(cb_backend *b, double *seconds, int n)
{
    mpi_backend *mb = (mpi_backend *)b;
    if (n > mb->nmarks)
        return cb_backend_fail(b, "%d timer samples asked for, %d marked", n, mb->nmarks);
    for (int i = 0; i < n; i++)
        seconds[i] = mb->marks[i] - (i == 0 ? mb->timer_started : mb->marks[i - 1]);
    return 0;
}

int cb_mpi_comm_time(cb_backend *b, cb_comm_op op, double *seconds)
{
    *seconds = NAN;
    if (op != CB_COMM_INIT && op != CB_COMM_SPLIT)
        return cb_backend_fail(b, "MPI has no communicator %s (only MPI_Comm_dup and "
                               "MPI_Comm_split)", cb_comm_op_name(op)) + 2;
    MPI_Comm made = MPI_COMM_NULL;
    MPI_Barrier(cb_mpi_comm(b));
    double start = MPI_Wtime();
    int rc = op == CB_COMM_INIT
                 ? MPI_Comm_dup(cb_mpi_comm(b), &made)
                 : MPI_Comm_split(cb_mpi_comm(b), b->rank * 2 / b->nranks, b->rank, &made);
    *seconds = MPI_Wtime() - start;
    if (made != MPI_COMM_NULL)
        MPI_Comm_free(&made);
    int failed = rc != MPI_SUCCESS;
    if (failed)
        cb_backend_fail(b, "%s failed (MPI error %d)",
                        op == CB_COMM_INIT ? "MPI_Comm_dup" : "MPI_Comm_split", rc);
    return cb_backend_agree(b->comm, b, failed);
}
