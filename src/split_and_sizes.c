/*
 * What the parsed parameters mean once the run's shape is known: the --split
 * and --hier-split groups for a rank count, and the sweep's list of sizes.
 * Apart from the option parser so that each stays small.
 */
#include <stdlib.h>
#include <string.h>

#include "params.h"
#include "parse.h"

int cb_split_color_list(const char *list, int *colors, int room)
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

int cb_params_check_ranks(const cb_params *p, int nranks, char *err, size_t err_len)
{
    if (p->root >= nranks) {
        snprintf(err, err_len, "-r: root %d is not a rank of this run: with %d rank%s the "
                 "roots are 0 to %d", p->root, nranks, nranks == 1 ? "" : "s", nranks - 1);
        return -1;
    }
    const cb_split_spec *split = &p->split;
    if (split->kind == CB_SPLIT_COLOR &&
        cb_split_color(split, "--split", 0, nranks, err, err_len) < 0)
        return -1;
    /* hier_allreduce's groups are made among the ranks measured together:
     * with --split a group's, checked when the groups are known. */
    if (split->kind == CB_SPLIT_NONE && p->hier.kind == CB_SPLIT_COLOR &&
        cb_split_color(&p->hier, "--hier-split", 0, nranks, err, err_len) < 0)
        return -1;
    /* Every group must have the -r root: the smallest group decides. */
    int smallest = nranks;
    if (split->kind == CB_SPLIT_SIZE && nranks % split->k != 0)
        smallest = nranks % split->k;
    else if (split->kind == CB_SPLIT_SIZE)
        smallest = split->k < nranks ? split->k : nranks;
    else if (split->kind == CB_SPLIT_STRIDE)
        smallest = split->k <= nranks ? nranks / split->k : 1;
    else if (split->kind == CB_SPLIT_COLOR) {
        int *colors = malloc((size_t)nranks * sizeof *colors);
        if (colors == NULL) {
            snprintf(err, err_len, "--split %s: out of memory", split->text);
            return -1;
        }
        cb_split_color_list(split->text + 6, colors, nranks);
        for (int r = 0; r < nranks; r++) {
            int members = 0;
            for (int q = 0; q < nranks; q++)
                members += colors[q] == colors[r];
            if (members < smallest)
                smallest = members;
        }
        free(colors);
    }
    if (split->kind != CB_SPLIT_NONE && p->root >= smallest) {
        snprintf(err, err_len, "-r: root %d is not a rank of every --split %s group: the "
                 "smallest has %d rank%s", p->root, split->text, smallest,
                 smallest == 1 ? "" : "s");
        return -1;
    }
    return 0;
}

int cb_split_color(const cb_split_spec *spec, const char *option, int rank, int nranks,
                   char *err, size_t err_len)
{
    switch (spec->kind) {
    case CB_SPLIT_SIZE:
        return rank / spec->k;
    case CB_SPLIT_STRIDE:
        return rank % spec->k;
    case CB_SPLIT_COLOR: {
        int n = cb_split_color_list(spec->text + 6, NULL, 0);
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
        cb_split_color_list(at, colors, 1);
        return colors[0];
    }
    default:
        return 0;
    }
}

int cb_params_check_sizes(const cb_params *p, char *err, size_t err_len)
{
    int moves_data = 0;
    for (int i = 0; i < p->ncollectives; i++)
        moves_data |= (p->collectives[i]->flags & CB_COLL_NO_DATA) == 0;
    uint64_t *sizes = malloc(CB_MAX_SIZES * sizeof *sizes);
    if (sizes == NULL) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    int n = cb_size_list(p, sizes, CB_MAX_SIZES, err, err_len);
    uint64_t largest = n > 0 ? sizes[n - 1] : 0;
    free(sizes);
    if (n < 0 || !moves_data)
        return n < 0 ? -1 : 0;
    /* The type with the smallest element is the last hope of a row. */
    const cb_dtype_info *smallest = cb_dtype_info_of(p->dtypes[0]);
    for (int t = 1; t < p->ndtypes; t++)
        if (cb_dtype_info_of(p->dtypes[t])->size < smallest->size)
            smallest = cb_dtype_info_of(p->dtypes[t]);
    if (largest >= smallest->size)
        return 0;
    char min_text[32], max_text[32];
    cb_format_bytes(p->min_bytes, min_text, sizeof min_text);
    cb_format_bytes(p->max_bytes, max_text, sizeof max_text);
    snprintf(err, err_len, "-b/-e: no size from %s to %s bytes holds a whole %s element (%zu "
             "bytes), so nothing would be measured; raise -e to at least %zu", min_text,
             max_text, smallest->name, smallest->size, smallest->size);
    return -1;
}

int cb_size_list(const cb_params *p, uint64_t *sizes, int max_sizes, char *err, size_t err_len)
{
    int n = 0;
    uint64_t size = p->min_bytes;
    for (;;) {
        if (n == max_sizes) {
            snprintf(err, err_len, "-b/-e/-f/-i: the sweep would have more than %d sizes; "
                     "use a larger step or a narrower range", max_sizes);
            return -1;
        }
        if (sizes != NULL)
            sizes[n] = size;
        n++;
        uint64_t next;
        if (p->step_bytes != 0) {
            if (size > UINT64_MAX - p->step_bytes)
                break;
            next = size + p->step_bytes;
        } else {
            if (size > UINT64_MAX / p->step_factor)
                break;
            next = size * p->step_factor;
        }
        if (next > p->max_bytes)
            break;
        size = next;
    }
    return n;
}
