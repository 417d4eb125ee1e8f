#include "common/grow.h"

#include <stdint.h>
#include <stdlib.h>

void *cb_grow(void *items, size_t *cap, size_t count, size_t item_size, size_t first)
{
    if (count < *cap)
        return items;
    size_t grown_cap = *cap ? 2 * *cap : first;
    if (grown_cap < *cap || grown_cap > SIZE_MAX / item_size)
        return NULL;
    void *grown = realloc(items, grown_cap * item_size);
    if (grown != NULL)
        *cap = grown_cap;
    return grown;
}
