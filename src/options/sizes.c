/* The sweep's size list from -b, -e, -f and -i, and whether it holds
 * anything to measure. */
#include <stdio.h>
#include <stdlib.h>

#include "collectives/collective.h"
#include "common/format.h"
#include "options/params.h"

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
