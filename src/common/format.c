/* Numbers formatted for people: the inverse of parse.c's readings. */
#include "common/format.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *cb_plural(long long n)
{
    return n == 1 ? "" : "s";
}

void cb_append(char *text, size_t len, const char *fmt, ...)
{
    size_t used = strlen(text);
    if (used + 1 >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text + used, len - used, fmt, ap);
    va_end(ap);
}

void cb_format_bytes(uint64_t bytes, char *buf, size_t len)
{
    static const char suffix[] = "KMGT";
    int unit = -1;
    while (unit < 3 && bytes != 0 && (bytes & 1023) == 0) {
        bytes >>= 10;
        unit++;
    }
    if (unit < 0)
        snprintf(buf, len, "%llu", (unsigned long long)bytes);
    else
        snprintf(buf, len, "%llu%c", (unsigned long long)bytes, suffix[unit]);
}

void cb_format_squeezed(double value, int width, char *buf, size_t len)
{
    /* nccl-tests' rule (src/util.cu, getFloatStr): two decimals, else one,
     * else none, else an exponent: the first that fits in width. */
    if (len == 0)
        return;
    int n = snprintf(buf, len, "%*.2f", width, value);
    if (n < 0 || n > width)
        n = snprintf(buf, len, "%*.1f", width, value);
    if (n < 0 || n > width)
        n = snprintf(buf, len, "%*.0f", width, value);
    if (n < 0 || n > width) {
        if (width >= 7)
            snprintf(buf, len, "%*.1e", width, value);
        else
            snprintf(buf, len, "%*.0e", width, value);
    }
    if (strlen(buf) > (size_t)width && (size_t)width < len)
        buf[width] = '\0';   /* theirs writes into width + 1 bytes: cut there too */
}
