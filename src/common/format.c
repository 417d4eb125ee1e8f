/* Numbers formatted for people: the inverse of parse.c's readings. */
#include "common/format.h"

#include <stdio.h>

const char *cb_plural(long long n)
{
    return n == 1 ? "" : "s";
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
