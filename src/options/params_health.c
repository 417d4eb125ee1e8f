/* The options of the health scan and of the gates and cycles around it
 * (nccl-collbench(1): -o scan, --suspect-ratio, --min-busbw, -N). */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/parse.h"
#include "options/params_parse.h"

/* The health scan's parts are no collectives of the table: flags. */
int cb_params_scan_part(parse_state *s, const char *name)
{
    static const struct { const char *name; int parts; } scan_names[] = {
        {"scan", CB_SCAN_NODES | CB_SCAN_PAIRS | CB_SCAN_RAILS},
        {"scan_nodes", CB_SCAN_NODES}, {"scan_pairs", CB_SCAN_PAIRS},
        {"scan_rails", CB_SCAN_RAILS},
    };
    for (size_t i = 0; i < sizeof scan_names / sizeof scan_names[0]; i++)
        if (strcmp(name, scan_names[i].name) == 0) {
            if (s->p->scan.parts & scan_names[i].parts)
                return cb_params_fail(s, "scan part '%s' given twice", name);
            s->p->scan.parts |= scan_names[i].parts;
            return 1;
        }
    return 0;
}

int cb_params_opt_suspect_ratio(parse_state *s, const char *v)
{
    char *end = NULL;
    double r = strtod(v, &end);
    if (end == v || *end != '\0' || !(r > 0 && r <= 1))
        return cb_params_fail(s, "'%s' is not a number above 0 and at most 1", v);
    s->p->scan.scan_threshold = r;
    return 0;
}

int cb_params_opt_min_busbw(parse_state *s, const char *v)
{
    char *end = NULL;
    double gbps = strtod(v, &end);
    if (end == v || *end != '\0' || !(gbps > 0) || !isfinite(gbps))
        return cb_params_fail(s, "'%s' is not a positive number of GB/s", v);
    s->p->expect.min_busbw = gbps;
    return 0;
}

int cb_params_opt_cycles(parse_state *s, const char *v)
{
    long n;
    if (cb_parse_long(v, 0, INT_MAX, &n) != 0)
        return cb_params_fail(s, "'%s' is not a cycle count from 0 (until stopped) to %d", v,
                              INT_MAX);
    s->p->sizes.cycles = (int)n;
    return 0;
}

void cb_params_health_defaults(cb_params *p)
{
    p->scan.scan_threshold = 0.8;
    p->sizes.cycles = 1;
}

int cb_params_check_health(parse_state *s)
{
    s->option = "-o";
    if (s->p->scan.parts != 0 && s->p->sizes.split.kind != CB_SPLIT_NONE)
        return cb_params_fail(s, "scan measures its own groups (nodes, node pairs, rails): "
                                 "drop --split");
    return 0;
}
