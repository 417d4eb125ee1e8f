/* Known faults of MPI libraries, told from their version strings, and what
 * the MPI backend does about them. */
#include <stdio.h>
#include <string.h>

#include "quirks.h"
#include "backends/mpi/mpi_backend.h"

/* The value after "KEY:" and blanks on a line of version, or NULL. */
static const char *field(const char *version, const char *key)
{
    const char *at = strstr(version, key);
    if (at == NULL)
        return NULL;
    at += strlen(key);
    return at + strspn(at, " \t");
}

int cb_mpi_reduce_needs_root_first(const char *version)
{
    /* MPICH writes "MPICH Version:\t4.0.2" and "MPICH Device:\tch4:ucx" on
     * lines of their own; derivatives (MVAPICH, Intel MPI, Cray MPICH) do
     * not, and are left alone. A release candidate (4.1rc2) counts as its
     * release's first version. */
    const char *number = field(version, "MPICH Version:");
    const char *device = field(version, "MPICH Device:");
    int major = 0, minor = 0, patch = 0;
    if (number == NULL || device == NULL || strncmp(device, "ch4", 3) != 0 ||
        sscanf(number, "%d.%d.%d", &major, &minor, &patch) < 2)
        return 0;
    if (major == 3)
        return minor >= 3;
    return major == 4 && (minor == 0 || (minor == 1 && patch < 2));
}

int cb_mpi_reduce_root_first_on(cb_backend *b)
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int len = 0, here = MPI_Get_library_version(version, &len) == MPI_SUCCESS &&
                        cb_mpi_reduce_needs_root_first(version);
    int any = here;
    MPI_Allreduce(&here, &any, 1, MPI_INT, MPI_MAX, cb_mpi_comm(b));
    if (any)
        snprintf(b->notice, sizeof b->notice, "This MPICH's in-place MPI_Reduce fails at a root other "
                 "than 0 (MPICH issue 6540): reduce runs on the same ranks ordered from the root");
    return any;
}
