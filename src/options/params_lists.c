/* The options whose value is a list or a grouping: -o, -d, --redop,
 * --layout, --split and --hier-split (nccl-collbench(1)). */
#include <limits.h>
#include <string.h>
#include <strings.h>

#include "common/names.h"
#include "common/parse.h"
#include "options/params_parse.h"

#define fail cb_params_fail

/* "; did you mean NAME?" when a name near enough to a misspelt word was
 * offered to n, else "". */
static const char *did_you_mean(const cb_nearest *n, char *text, size_t len)
{
    const char *name = cb_nearest_name(n);
    if (name == NULL)
        return "";
    snprintf(text, len, "; did you mean %s?", name);
    return text;
}

/* Split a comma list; call one(item) for each; "all" calls all(). */
static int each_item(parse_state *s, const char *list, int (*one)(parse_state *, const char *),
                     int (*all)(parse_state *))
{
    if (strcasecmp(list, "all") == 0)
        return all(s);
    char item[64];
    const char *p = list;
    for (;;) {
        size_t len = strcspn(p, ",");
        if (len == 0)
            return fail(s, "'%s' has an empty item", list);
        if (len >= sizeof item)
            return fail(s, "'%.*s' is not a known name", (int)len, p);
        memcpy(item, p, len);
        item[len] = '\0';
        if (one(s, item) != 0)
            return -1;
        if (p[len] == '\0')
            return 0;
        p += len + 1;
    }
}

/* -o */
static int add_collective(parse_state *s, const char *name)
{
    int scan = cb_params_scan_part(s, name);
    if (scan != 0)
        return scan < 0 ? -1 : 0;
    const cb_collective *c = cb_collective_lookup(name);
    cb_redop op;
    /* nccl-tests' -o picks the reduction: say where ours is. */
    if (c == NULL && cb_redop_lookup(name, &op) == 0)
        return fail(s, "'%s' is a reduction: here -o selects the collective (e.g. allreduce) "
                       "and --redop the reduction, as in --redop %s", name, name);
    if (c == NULL) {
        cb_nearest n;
        char hint[96];
        cb_nearest_start(&n, name);
        for (const cb_collective *const *each = cb_collective_list(); *each != NULL; each++) {
            cb_nearest_offer(&n, (*each)->name);
            cb_nearest_offer(&n, (*each)->aliases);
        }
        cb_nearest_offer(&n, "scan scan_nodes scan_pairs scan_rails");
        return fail(s, "unknown collective '%s'%s (see --help for the list)", name,
                    did_you_mean(&n, hint, sizeof hint));
    }
    for (int i = 0; i < s->p->sizes.ncollectives; i++)
        if (s->p->sizes.collectives[i] == c)
            return fail(s, "collective '%s' given twice", name);
    s->p->sizes.collectives[s->p->sizes.ncollectives++] = c;
    return 0;
}

static int all_collectives(parse_state *s)
{
    /* comm_init times no collective, hypercube needs 2^k ranks: by name only. */
    for (const cb_collective *const *c = cb_collective_list(); *c != NULL; c++)
        if (!((*c)->flags & (CB_COLL_COMM | CB_COLL_BY_NAME)))
            s->p->sizes.collectives[s->p->sizes.ncollectives++] = *c;
    return 0;
}

int cb_params_opt_op(parse_state *s, const char *v)
{
    s->p->sizes.ncollectives = 0;
    s->p->scan.parts = 0;
    return each_item(s, v, add_collective, all_collectives);
}

/* -d */
static int add_dtype(parse_state *s, const char *name)
{
    cb_dtype t;
    if (cb_dtype_lookup(name, &t) != 0) {
        cb_nearest n;
        char hint[96];
        cb_nearest_start(&n, name);
        for (int each = 0; each < CB_DTYPE_COUNT; each++) {
            cb_nearest_offer(&n, cb_dtype_info_of((cb_dtype)each)->name);
            cb_nearest_offer(&n, cb_dtype_info_of((cb_dtype)each)->aliases);
        }
        return fail(s, "unknown datatype '%s'%s (see --help for the list)", name,
                    did_you_mean(&n, hint, sizeof hint));
    }
    for (int i = 0; i < s->p->sizes.ndtypes; i++)
        if (s->p->sizes.dtypes[i] == t)
            return fail(s, "datatype '%s' given twice", name);
    s->p->sizes.dtypes[s->p->sizes.ndtypes++] = t;
    return 0;
}

static int all_dtypes(parse_state *s)
{
    for (int t = 0; t < CB_DTYPE_COUNT; t++)
        s->p->sizes.dtypes[s->p->sizes.ndtypes++] = (cb_dtype)t;
    return 0;
}

int cb_params_opt_datatype(parse_state *s, const char *v)
{
    s->p->sizes.ndtypes = 0;
    return each_item(s, v, add_dtype, all_dtypes);
}

/* --redop */
static int add_redop(parse_state *s, const char *name)
{
    cb_redop op;
    if (cb_redop_lookup(name, &op) != 0) {
        cb_nearest n;
        char hint[96];
        cb_nearest_start(&n, name);
        for (int each = 0; each < CB_REDOP_COUNT; each++)
            cb_nearest_offer(&n, cb_redop_name((cb_redop)each));
        return fail(s, "unknown reduction '%s'%s (see --help for the list)", name,
                    did_you_mean(&n, hint, sizeof hint));
    }
    for (int i = 0; i < s->p->sizes.nredops; i++)
        if (s->p->sizes.redops[i] == op)
            return fail(s, "reduction '%s' given twice", name);
    s->p->sizes.redops[s->p->sizes.nredops++] = op;
    return 0;
}

static int all_redops(parse_state *s)
{
    for (int op = 0; op < CB_REDOP_COUNT; op++)
        s->p->sizes.redops[s->p->sizes.nredops++] = (cb_redop)op;
    return 0;
}

int cb_params_opt_redop(parse_state *s, const char *v)
{
    s->p->sizes.nredops = 0;
    return each_item(s, v, add_redop, all_redops);
}

/* A grouping spec: size:K, stride:K, node or color:C0,C1,... */
static int parse_split_spec(parse_state *s, const char *v, cb_split_spec *spec)
{
    long k;
    spec->text = v;
    spec->k = 0;
    if (strcmp(v, "node") == 0) {
        spec->kind = CB_SPLIT_NODE;
        return 0;
    }
    if (strncmp(v, "size:", 5) == 0 || strncmp(v, "stride:", 7) == 0) {
        int size = v[1] == 'i';
        if (cb_parse_long(v + (size ? 5 : 7), 1, INT_MAX, &k) != 0)
            return fail(s, "'%s': K must be a whole number of ranks, at least 1", v);
        spec->kind = size ? CB_SPLIT_SIZE : CB_SPLIT_STRIDE;
        spec->k = (int)k;
        return 0;
    }
    if (strncmp(v, "color:", 6) == 0) {
        if (cb_split_colors(v + 6, NULL, 0) < 0)
            return fail(s, "'%s': colours are a comma list of whole numbers from 0 to %d, "
                        "one per rank", v, CB_MAX_SPLIT_COLOR);
        spec->kind = CB_SPLIT_COLOR;
        return 0;
    }
    return fail(s, "'%s': expected size:K, stride:K, node or color:C0,C1,...", v);
}

int cb_params_opt_split(parse_state *s, const char *v)
{
    return parse_split_spec(s, v, &s->p->sizes.split);
}

int cb_params_opt_hier_split(parse_state *s, const char *v)
{
    return parse_split_spec(s, v, &s->p->sizes.hier);
}

/* --layout: row, col, or both as a comma list, each once. */
static int add_layout(parse_state *s, const char *name)
{
    cb_params *p = s->p;
    cb_block_layout kind;
    if (strcmp(name, "row") == 0)
        kind = CB_LAYOUT_ROW;
    else if (strcmp(name, "col") == 0)
        kind = CB_LAYOUT_COL;
    else
        return fail(s, "'%s': expected row, col or row,col", name);
    for (int i = 0; i < p->sizes.nlayouts; i++)
        if (p->sizes.layouts[i] == kind)
            return fail(s, "layout '%s' given twice", name);
    p->sizes.layouts[p->sizes.nlayouts++] = kind;
    return 0;
}

static int no_all_layouts(parse_state *s)
{
    return fail(s, "'all': expected row, col or row,col");
}

int cb_params_opt_layout(parse_state *s, const char *v)
{
    s->p->sizes.nlayouts = 0;
    return each_item(s, v, add_layout, no_all_layouts);
}
