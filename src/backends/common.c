/* Helpers every backend shares, apart from the table of backends (registry.c)
 * so that a test program can link its own table with the real backends. */
#include <stdarg.h>
#include <stdio.h>

#include "backend.h"

int cb_backend_fail(cb_backend *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b->error, sizeof b->error, fmt, ap);
    va_end(ap);
    return -1;
}
