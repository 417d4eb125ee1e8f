#include "common/parse.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

int cb_parse_bytes(const char *text, uint64_t *out)
{
    if (text == NULL || !isdigit((unsigned char)text[0]))
        return -1;
    uint64_t value = 0;
    const char *p = text;
    for (; isdigit((unsigned char)*p); p++) {
        unsigned digit = (unsigned)(*p - '0');
        if (value > (UINT64_MAX - digit) / 10)
            return -1;
        value = value * 10 + digit;
    }
    unsigned shift = 0;
    switch (*p) {
    case '\0': break;
    case 'k': case 'K': shift = 10; p++; break;
    case 'm': case 'M': shift = 20; p++; break;
    case 'g': case 'G': shift = 30; p++; break;
    case 't': case 'T': shift = 40; p++; break;
    default: return -1;
    }
    if (*p != '\0')
        return -1;
    if (shift && value > (UINT64_MAX >> shift))
        return -1;
    *out = value << shift;
    return 0;
}

int cb_parse_long(const char *text, long min, long max, long *out)
{
    if (text == NULL || *text == '\0' || isspace((unsigned char)*text))
        return -1;
    char *end = NULL;
    errno = 0;
    long value = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0')
        return -1;
    if (value < min || value > max)
        return -1;
    *out = value;
    return 0;
}
