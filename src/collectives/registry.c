/* The table of collectives: adding one is a new file and a line here. */
#include "collective.h"
#include "names.h"

extern const cb_collective cb_coll_allreduce;

static const cb_collective *const collective_table[] = {
    &cb_coll_allreduce,
    NULL,
};

const cb_collective *const *cb_collective_list(void)
{
    return collective_table;
}

const cb_collective *cb_collective_lookup(const char *name)
{
    for (const cb_collective *const *c = collective_table; *c != NULL; c++)
        if (cb_name_matches(name, (*c)->name, (*c)->aliases))
            return *c;
    return NULL;
}

size_t cb_check_reduced(const cb_pattern *pat, const void *data, size_t count,
                        cb_mismatch *first)
{
    const cb_dtype_info *info = cb_dtype_info_of(pat->dtype);
    size_t wrong = 0;
    for (size_t i = 0; i < count; i++) {
        double expected = cb_pattern_reduced(pat, i);
        double actual = info->load(data, i);
        if (actual != expected) {
            if (wrong == 0) {
                first->index = i;
                first->expected = expected;
                first->actual = actual;
            }
            wrong++;
        }
    }
    return wrong;
}
