/* --prom and --prom-sizes: the Prometheus text file and the sizes it keeps
 * (nccl-collbench-output(5), PROMETHEUS OUTPUT). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "options/params_parse.h"

#define fail cb_params_fail

int cb_params_opt_prom(parse_state *s, const char *v)
{
    if (v[0] == '\0')
        return fail(s, "the file name is empty");
    if (strcmp(v, "-") == 0)
        return fail(s, "'-': the Prometheus file goes to a file (it is written whole, then "
                       "renamed, so that a scrape never reads half of it)");
    s->p->out.prom_path = v;
    return 0;
}

/* all, largest, or a comma list of byte counts, each at most once. */
int cb_params_opt_prom_sizes(parse_state *s, const char *v)
{
    cb_params *p = s->p;
    p->out.prom_largest = 0;
    p->out.nprom_sizes = 0;
    if (strcasecmp(v, "all") == 0)
        return 0;
    if (strcasecmp(v, "largest") == 0) {
        p->out.prom_largest = 1;
        return 0;
    }
    const char *item = v;
    for (;;) {
        size_t len = strcspn(item, ",");
        char text[32];
        if (len == 0)
            return fail(s, "'%s' has an empty item (give all, largest or byte counts)", v);
        if (len >= sizeof text)
            return fail(s, "'%.*s' is not a byte count", (int)len, item);
        memcpy(text, item, len);
        text[len] = '\0';
        uint64_t bytes;
        if (cb_params_set_bytes(s, text, &bytes) != 0)
            return -1;
        for (int i = 0; i < p->out.nprom_sizes; i++)
            if (p->out.prom_sizes[i] == bytes)
                return fail(s, "size %s given twice", text);
        if (p->out.nprom_sizes == CB_MAX_PROM_SIZES)
            return fail(s, "more than %d sizes", CB_MAX_PROM_SIZES);
        p->out.prom_sizes[p->out.nprom_sizes++] = bytes;
        if (item[len] == '\0')
            return 0;
        item += len + 1;
    }
}

void cb_agree_prom_sizes(const cb_params *p, char *text, size_t len)
{
    size_t used = 0;
    text[0] = '\0';
    if (p->out.nprom_sizes == 0) {
        snprintf(text, len, "%s", p->out.prom_largest ? "largest" : "all");
        return;
    }
    for (int i = 0; i < p->out.nprom_sizes && used < len; i++) {
        int n = snprintf(text + used, len - used, "%s%" PRIu64, i ? "," : "", p->out.prom_sizes[i]);
        if (n < 0)
            return;
        used += (size_t)n;
    }
}
