/* The table of backends for tests/nccl-collbench-faulty: it replaces
 * src/backends/registry.c there, adding the test-only "faulty" backend. */
#include <string.h>

#include "backend.h"

extern const cb_backend_ops cb_backend_mpi;
extern const cb_backend_ops cb_backend_faulty;

static const cb_backend_ops *const backend_table[] = {
    &cb_backend_faulty,
    &cb_backend_mpi,
    NULL,
};

const cb_backend_ops *const *cb_backend_list(void)
{
    return backend_table;
}

const cb_backend_ops *cb_backend_lookup(const char *name)
{
    for (const cb_backend_ops *const *b = backend_table; *b != NULL; b++)
        if (strcmp((*b)->name, name) == 0)
            return *b;
    return NULL;
}

/* The faulty program is built without the NCCL backend and says nothing
 * about it. */
static const char *const not_built_table[] = {NULL};

const char *const *cb_backend_not_built(void)
{
    return not_built_table;
}

const char *cb_backend_not_built_reason(const char *name)
{
    (void)name;
    return NULL;
}
