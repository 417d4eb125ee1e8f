/* The option parser's leaf: the message every option's parser fails with
 * and the value readers that several options' files share. Kept apart from
 * params.c so that the files of single options (params_health.c,
 * params_lists.c, ...) depend on it and not on the option table. */
#include <stdarg.h>
#include <stdio.h>

#include "common/parse.h"
#include "options/params_parse.h"

int cb_params_fail(parse_state *s, const char *fmt, ...)
{
    char detail[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    snprintf(s->err, s->err_len, "%s: %s", s->option, detail);
    return -1;
}

int cb_params_set_bytes(parse_state *s, const char *v, uint64_t *out)
{
    if (cb_parse_bytes(v, out) != 0)
        return cb_params_fail(s, "'%s' is not a byte count (digits with an optional K, M, G or T suffix, "
                       "at most 2^64-1)", v);
    return 0;
}

int cb_params_set_int(parse_state *s, const char *v, long min, long max, int *out)
{
    long value;
    if (cb_parse_long(v, min, max, &value) != 0)
        return cb_params_fail(s, "'%s' is not an integer from %ld to %ld", v, min, max);
    *out = (int)value;
    return 0;
}

