/* Arrays that grow by doubling, for the readers and reports whose size is
 * known only at the end. */
#ifndef CB_GROW_H
#define CB_GROW_H
#include <stddef.h>

/* Room for one more item in items, which holds count of *cap: returns items
 * as it is when there is room, else grown to twice *cap (first when *cap is
 * 0) with *cap updated, or NULL when memory runs out, leaving items and *cap
 * as they were for the caller to free. */
void *cb_grow(void *items, size_t *cap, size_t count, size_t item_size, size_t first);
#endif
