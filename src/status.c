#include "status.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void cb_status_clear(cb_status *st)
{
    st->code = CB_EXIT_OK;
    st->agreed = 0;
    st->msg[0] = '\0';
}

int cb_status_set(cb_status *st, int code, const char *fmt, ...)
{
    if (st->code != CB_EXIT_OK)
        return st->code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(st->msg, sizeof st->msg, fmt, ap);
    va_end(ap);
    st->code = code;
    return code;
}

int cb_status_agree(MPI_Comm comm, cb_status *st)
{
    if (st->agreed)   /* every rank took this branch together */
        return st->code;
    int rank;
    MPI_Comm_rank(comm, &rank);

    /* Lowest failing rank, or INT_MAX-like sentinel when none failed. */
    int size;
    MPI_Comm_size(comm, &size);
    int mine = st->code != CB_EXIT_OK ? rank : size;
    int first = size;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
    if (first == size)
        return CB_EXIT_OK;

    /* The failing rank sends its code, message and host to everyone. */
    struct {
        int code;
        char msg[CB_MSGLEN];
        char host[MPI_MAX_PROCESSOR_NAME];
    } report;
    memset(&report, 0, sizeof report);
    if (rank == first) {
        int len = 0;
        report.code = st->code;
        memcpy(report.msg, st->msg, sizeof report.msg);
        MPI_Get_processor_name(report.host, &len);
    }
    MPI_Bcast(&report, (int)sizeof report, MPI_BYTE, first, comm);
    if (rank == 0) {
        fprintf(stderr, "nccl-collbench: rank %d (%s): %.*s\n", first, report.host,
                (int)sizeof report.msg, report.msg);
        fflush(stderr);
    }
    st->code = report.code;
    st->agreed = 1;
    snprintf(st->msg, sizeof st->msg, "rank %d (%s): %s", first, report.host, report.msg);
    return report.code;
}
