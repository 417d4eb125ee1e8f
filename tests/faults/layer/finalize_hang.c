/*
 * For tests/faults/faults.sh: MPI_Finalize never returns on the rank of
 * MPI_COMM_WORLD that NCCL_COLLBENCH_TEST_FINALIZE_HANG names, as MPICH
 * before 4.2 can hang there between nodes; it crashes (SIGSEGV) on the
 * rank that NCCL_COLLBENCH_TEST_FINALIZE_CRASH names, as Open MPI 4.1's
 * teardown now and then does. Through MPI's profiling
 * interface: the program's own code is unchanged, only this test build
 * defines MPI_Finalize before the library does.
 */
#include <mpi.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

int MPI_Finalize(void)
{
    const char *hang = getenv("NCCL_COLLBENCH_TEST_FINALIZE_HANG");
    int rank = -1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (hang != NULL && *hang != '\0' && atoi(hang) == rank)
        for (;;)
            pause();   /* until the watchdog ends the process */
    const char *crash = getenv("NCCL_COLLBENCH_TEST_FINALIZE_CRASH");
    int rc = PMPI_Finalize();
    if (crash != NULL && *crash != '\0' && atoi(crash) == rank)
        raise(SIGSEGV);
    return rc;
}
