/* The table of backends: adding one is a new file and a line here. */
#include <stdio.h>
#include <string.h>

#include "backends/backend.h"
#include "config.h"

extern const cb_backend_ops cb_backend_mpi;
#ifdef HAVE_NCCL
extern const cb_backend_ops cb_backend_nccl;
#endif

/* Preference order for --backend auto: the first one every rank can use. */
static const cb_backend_ops *const backend_table[] = {
#ifdef HAVE_NCCL
    &cb_backend_nccl,
#endif
    &cb_backend_mpi,
    NULL,
};

/* Backends that exist in the source but were left out of this build, so that
 * asking for one says so instead of "unknown backend". */
static const char *const not_built_table[] = {
#ifndef HAVE_NCCL
    "nccl", "configure did not find the CUDA runtime and NCCL, or was told not to use them",
#endif
    NULL,
};

const cb_backend_ops *const *cb_backend_list(void)
{
    return backend_table;
}

/* A test program (tests/nccl-collbench-faulty) defines this to add its
 * test-only backends, found by name only, never by "auto". nccl-collbench
 * does not, and the weak reference is then NULL: it has no test hooks. */
const cb_backend_ops *const *cb_backend_test_list(void) __attribute__((weak));

static const cb_backend_ops *find(const cb_backend_ops *const *table, const char *name)
{
    for (const cb_backend_ops *const *b = table; *b != NULL; b++)
        if (strcmp((*b)->name, name) == 0)
            return *b;
    return NULL;
}

const cb_backend_ops *cb_backend_lookup(const char *name)
{
    const cb_backend_ops *found = find(backend_table, name);
    if (found == NULL && cb_backend_test_list != NULL)
        found = find(cb_backend_test_list(), name);
    return found;
}

const char *const *cb_backend_not_built(void)
{
    return not_built_table;
}

const char *cb_backend_not_built_reason(const char *name)
{
    for (const char *const *n = not_built_table; *n != NULL; n += 2)
        if (strcmp(n[0], name) == 0)
            return n[1];
    return NULL;
}
