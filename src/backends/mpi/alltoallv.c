/*
 * The MPI backend's alltoallv (ops.c has the rest): MPI_Alltoallv on the
 * backend's communicator. The elements travel as bytes (nothing is reduced),
 * so every type moves the same way; MPI's counts and displacements are ints.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "backends/mpi/mpi_backend.h"

/* counts and offsets in elements into ints of bytes; -1 past INT_MAX. */
static int to_bytes(const size_t *counts, const size_t *offsets, size_t n, size_t esize,
                    int *byte_counts, int *byte_offsets)
{
    for (size_t j = 0; j < n; j++) {
        if (counts[j] > INT_MAX / esize || offsets[j] > INT_MAX / esize ||
            (counts[j] + offsets[j]) > INT_MAX / esize)
            return -1;
        byte_counts[j] = (int)(counts[j] * esize);
        byte_offsets[j] = (int)(offsets[j] * esize);
    }
    return 0;
}

int cb_mpi_alltoallv(cb_backend *b, const void *send, const size_t *send_counts,
                     const size_t *send_offsets, void *recv, const size_t *recv_counts,
                     const size_t *recv_offsets, cb_dtype dtype)
{
    size_t n = (size_t)b->nranks, esize = cb_dtype_info_of(dtype)->size;
    int *ints = malloc(4 * n * sizeof *ints);
    if (ints == NULL)
        return cb_backend_fail(b, "out of memory for MPI_Alltoallv's counts of %zu ranks", n);
    int rc = 0;
    if (to_bytes(send_counts, send_offsets, n, esize, ints, ints + n) != 0 ||
        to_bytes(recv_counts, recv_offsets, n, esize, ints + 2 * n, ints + 3 * n) != 0)
        rc = cb_backend_fail(b, "alltoallv's buffers exceed MPI's int byte offsets (%d)",
                             INT_MAX);
    int code = rc != 0 ? MPI_SUCCESS
                       : MPI_Alltoallv(send, ints, ints + n, MPI_BYTE, recv, ints + 2 * n,
                                       ints + 3 * n, MPI_BYTE, b->comm);
    free(ints);
    if (code != MPI_SUCCESS) {
        char text[MPI_MAX_ERROR_STRING];
        int len = 0;
        if (MPI_Error_string(code, text, &len) != MPI_SUCCESS)
            snprintf(text, sizeof text, "error %d", code);
        return cb_backend_fail(b, "MPI_Alltoallv failed: %s", text);
    }
    return rc;
}
