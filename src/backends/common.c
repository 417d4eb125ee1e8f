/* Helpers every backend shares, apart from the table of backends (registry.c)
 * so that a test program can link its own table with the real backends. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "backends/backend.h"
#include "safety/agreement.h"

int cb_backend_fail(cb_backend *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b->error, sizeof b->error, fmt, ap);
    va_end(ap);
    return -1;
}

int cb_backend_agree(cb_ctl *comm, cb_backend *b, int failed)
{
    cb_failure f;
    if (!cb_first_failure(comm, failed, CB_EXIT_RUNTIME, b != NULL ? b->error : "out of memory",
                          &f))
        return 0;
    if (b != NULL && !failed)
        snprintf(b->error, sizeof b->error, "rank %d (%.*s): %.*s", f.rank, 64, f.host,
                 CB_BACKEND_ERRLEN - 100, f.msg);
    return -1;
}

void cb_backend_add_notice(cb_backend *b, const char *fmt, ...)
{
    size_t used = strlen(b->notice);
    if (used > 0 && used + 1 < sizeof b->notice) {
        memcpy(b->notice + used, "\n", 2);
        used += 1;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b->notice + used, sizeof b->notice - used, fmt, ap);
    va_end(ap);
}

const char *cb_comm_op_name(cb_comm_op op)
{
    static const char *const names[CB_COMM_OPS] = {"init", "split", "shrink", "grow"};
    return op >= 0 && op < CB_COMM_OPS ? names[op] : "unknown";
}

size_t cb_count_differing(const void *a, const void *b, size_t count, size_t esize)
{
    const unsigned char *x = a, *y = b;
    size_t bytes = count * esize;
    /* One memcmp over the whole output in the common case of no difference. */
    if (memcmp(x, y, bytes) == 0)
        return 0;
    size_t differing = 0;
    for (size_t k = 0; k < bytes; k += esize)
        differing += memcmp(x + k, y + k, esize) != 0;
    return differing;
}

int cb_repeat_check_host(cb_backend *b, const void *out, size_t count, size_t esize, void *ref,
                         void *scratch, int keep, size_t *differing)
{
    (void)b;
    (void)scratch;
    *differing = 0;
    if (keep)
        memcpy(ref, out, count * esize);
    else
        *differing = cb_count_differing(out, ref, count, esize);
    return 0;
}
