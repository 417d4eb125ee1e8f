/* Helpers every backend shares, apart from the table of backends (registry.c)
 * so that a test program can link its own table with the real backends. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "backend.h"

int cb_backend_fail(cb_backend *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b->error, sizeof b->error, fmt, ap);
    va_end(ap);
    return -1;
}

int cb_backend_agree(MPI_Comm comm, cb_backend *b, int failed)
{
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int mine = failed ? rank : size, first = size;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
    if (first == size)
        return 0;

    /* The lowest failing rank tells the others what went wrong, and where. */
    struct {
        char msg[CB_BACKEND_ERRLEN];
        char host[MPI_MAX_PROCESSOR_NAME];
    } report;
    memset(&report, 0, sizeof report);
    if (rank == first) {
        int len = 0;
        snprintf(report.msg, sizeof report.msg, "%s", b != NULL ? b->error : "out of memory");
        MPI_Get_processor_name(report.host, &len);
    }
    MPI_Bcast(&report, (int)sizeof report, MPI_BYTE, first, comm);
    if (b != NULL && !failed)
        snprintf(b->error, sizeof b->error, "rank %d (%.*s): %.*s", first, 64, report.host,
                 CB_BACKEND_ERRLEN - 100, report.msg);
    return -1;
}
