#include "safety/agreement.h"
#include "host/sysinfo.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const cb_exit_meaning cb_exit_meanings[] = {
    {CB_EXIT_OK, "success"},
    {CB_EXIT_RUNTIME, "runtime error"},
    {CB_EXIT_USAGE, "usage error"},
    {CB_EXIT_TIMEOUT, "timeout (-T)"},
    {CB_EXIT_GPU_UNUSABLE, "--backend auto: an NVIDIA GPU is on the PCI bus but CUDA or NCCL cannot use it"},
    {CB_EXIT_NOTHING, "nothing measured (-o scan on one host)"},
    {CB_EXIT_UNCHECKED, "not checked: --expect formed no expectation for a row it gates"},
    {CB_EXIT_WRONG, "wrong results, or unrepeatable ones (-B)"},
    {CB_EXIT_SLOW, "below a performance threshold (--min-busbw, --expect and its link faults, -o scan suspects)"},
    {CB_EXIT_SIGINT, "stopped by SIGINT"},
    {CB_EXIT_SIGTERM, "stopped by SIGTERM"},
    {0, NULL},
};

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

int cb_first_failure(cb_ctl *comm, int failed, int code, const char *msg, cb_failure *out)
{
    int rank = comm->rank, size = comm->size;
    int mine = failed ? rank : size, first = size;
    cb_ctl_allreduce(comm, &mine, &first, 1, CB_CTL_INT, CB_CTL_MIN);
    if (first == size)
        return 0;
    /* The lowest failing rank tells the others what went wrong, and where. */
    memset(out, 0, sizeof *out);
    if (rank == first) {
        out->code = code;
        snprintf(out->msg, sizeof out->msg, "%s", msg);
        cb_sysinfo_host_label(out->host, sizeof out->host);
    }
    cb_ctl_bcast(comm, out, sizeof *out, first);
    out->rank = first;
    return 1;
}

int cb_status_agree(cb_ctl *comm, cb_status *st)
{
    if (st->agreed)   /* every rank took this branch together */
        return st->code;
    cb_failure f;
    if (!cb_first_failure(comm, st->code != CB_EXIT_OK, st->code, st->msg, &f))
        return CB_EXIT_OK;
    if (comm->rank == 0) {
        fprintf(stderr, "nccl-collbench: rank %d (%s): %.*s\n", f.rank, f.host,
                (int)sizeof f.msg, f.msg);
        fflush(stderr);
    }
    st->code = f.code;
    st->agreed = 1;
    /* Host and message as the lowest failing rank gave them; a message too
     * long for st->msg with its prefix is cut at its end. */
    size_t prefix = (size_t)snprintf(st->msg, sizeof st->msg, "rank %d (%s): ", f.rank, f.host);
    if (prefix < sizeof st->msg - 1) {
        size_t n = strnlen(f.msg, sizeof st->msg - 1 - prefix);
        memcpy(st->msg + prefix, f.msg, n);
        st->msg[prefix + n] = '\0';
    }
    return f.code;
}
