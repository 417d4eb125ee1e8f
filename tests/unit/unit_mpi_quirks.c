/* Which MPI libraries the MPI backend steps around, from their version strings. */
#include "backends/mpi/quirks.h"
#include "unit.h"

/* An MPICH version string in MPICH's own layout. */
#define MPICH_TEXT(version, device) \
    "MPICH Version:\t" version "\nMPICH Release date:\tThu Apr  7 12:34:45 CDT 2022\n" \
    "MPICH ABI:\t14:2:2\nMPICH Device:\t" device "\nMPICH configure:\t--with-device=" device "\n"

int main(void)
{
    unit_state u = {0, 0};
    /* ch4 from 3.3 to 4.1.1 crashes (Debian 12 ships 4.0.2 on ch4:ucx). */
    CHECK(&u, cb_mpi_reduce_needs_root_first(MPICH_TEXT("4.0.2", "ch4:ucx")) == 1);
    CHECK(&u, cb_mpi_reduce_needs_root_first(MPICH_TEXT("4.0", "ch4:ofi")) == 1);
    CHECK(&u, cb_mpi_reduce_needs_root_first(MPICH_TEXT("4.1.1", "ch4:ofi")) == 1);
    CHECK(&u, cb_mpi_reduce_needs_root_first(MPICH_TEXT("4.1rc2", "ch4:ucx")) == 1);
    CHECK(&u, cb_mpi_reduce_needs_root_first(MPICH_TEXT("3.4.3", "ch4:ofi")) == 1);
    CHECK(&u, cb_mpi_reduce_needs_root_first(MPICH_TEXT("3.3", "ch4:ucx")) == 1);
    /* Fixed from 4.1.2 and in 4.2.0 on. */
    CHECK(&u, cb_mpi_reduce_needs_root_first(MPICH_TEXT("4.1.2", "ch4:ucx")) == 0);
    CHECK(&u, cb_mpi_reduce_needs_root_first(MPICH_TEXT("4.2.0", "ch4:ofi")) == 0);
    CHECK(&u, cb_mpi_reduce_needs_root_first(MPICH_TEXT("4.3.1", "ch4:ucx")) == 0);
    CHECK(&u, cb_mpi_reduce_needs_root_first(MPICH_TEXT("5.0.0", "ch4:ofi")) == 0);
    /* Older MPICH and the ch3 device never had the composition at fault. */
    CHECK(&u, cb_mpi_reduce_needs_root_first(MPICH_TEXT("3.2.1", "ch4:ofi")) == 0);
    CHECK(&u, cb_mpi_reduce_needs_root_first(MPICH_TEXT("4.0.2", "ch3:nemesis")) == 0);
    /* Other libraries, and what cannot be read, are left alone. */
    CHECK(&u, cb_mpi_reduce_needs_root_first("Open MPI v4.1.4, package: Debian OpenMPI") == 0);
    CHECK(&u, cb_mpi_reduce_needs_root_first("Intel(R) MPI Library 2021.10 for Linux* OS") == 0);
    CHECK(&u, cb_mpi_reduce_needs_root_first("MPICH Version:\tunknown\nMPICH Device:\tch4") == 0);
    CHECK(&u, cb_mpi_reduce_needs_root_first("MPICH Version:\t4.0.2\n") == 0);
    CHECK(&u, cb_mpi_reduce_needs_root_first("") == 0);
    return unit_done(&u, "unit_mpi_quirks");
}
