/* The sweep's size list from -b, -e, -f and -i. */
#include <stdio.h>

#include "params.h"

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
