/* Runtime grouping: which group a rank joins under a --split or
 * --hier-split spec (node groups are the engine's, from the host ids). */
#include <stdio.h>
#include <string.h>

#include "options/params.h"
#include "common/parse.h"

int cb_split_colors(const char *list, int *colors, int room)
{
    int n = 0;
    const char *at = list;
    for (;;) {
        const char *comma = strchr(at, ',');
        size_t len = comma ? (size_t)(comma - at) : strlen(at);
        char item[16];
        long v;
        if (len == 0 || len >= sizeof item)
            return -1;
        memcpy(item, at, len);
        item[len] = '\0';
        if (cb_parse_long(item, 0, CB_MAX_SPLIT_COLOR, &v) != 0)
            return -1;
        if (n < room)
            colors[n] = (int)v;
        n++;
        if (comma == NULL)
            return n;
        at = comma + 1;
    }
}

int cb_split_color(const cb_split_spec *spec, const char *option, int rank, int nranks,
                   char *err, size_t err_len)
{
    switch (spec->kind) {
    case CB_SPLIT_SIZE:
        return rank / spec->k;
    case CB_SPLIT_STRIDE:
        return rank % spec->k;
    case CB_SPLIT_AND:
        return rank & spec->k;
    case CB_SPLIT_OR:
        return rank | spec->k;
    case CB_SPLIT_COLOR: {
        int n = cb_split_colors(spec->text + 6, NULL, 0);
        if (n != nranks) {
            snprintf(err, err_len, "%s %s: %d colour%s for %d rank%s; give one colour "
                     "per rank", option, spec->text, n, n == 1 ? "" : "s", nranks,
                     nranks == 1 ? "" : "s");
            return -1;
        }
        int colors[1];
        /* Walk to this rank's colour without an array of them all. */
        const char *at = spec->text + 6;
        for (int r = 0; r < rank; r++)
            at = strchr(at, ',') + 1;
        cb_split_colors(at, colors, 1);
        return colors[0];
    }
    default:
        return 0;
    }
}
