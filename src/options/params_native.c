/* The NCCL backend's options of its own (nccl-collbench(1): --nccl-impl,
 * -R). */
#include <string.h>

#include "options/params_parse.h"
#include "common/parse.h"

static const char *const impl_names[] = {
    [CB_IMPL_AUTO] = "auto", [CB_IMPL_NATIVE] = "native", [CB_IMPL_P2P] = "p2p"};

const char *cb_impl_name(cb_impl impl)
{
    return (unsigned)impl < sizeof impl_names / sizeof impl_names[0] ? impl_names[impl] : "?";
}

/* A comma list of auto, native and p2p, each at most once, in the order
 * given: each collective that has implementations runs once per entry. */
int cb_params_opt_nccl_impl(parse_state *s, const char *v)
{
    cb_params *p = s->p;
    p->sizes.nimpls = 0;
    const char *item = v;
    for (;;) {
        size_t len = strcspn(item, ",");
        int found = -1;
        for (int k = 0; k < (int)(sizeof impl_names / sizeof impl_names[0]); k++)
            if (strlen(impl_names[k]) == len && strncmp(item, impl_names[k], len) == 0)
                found = k;
        if (found < 0)
            return cb_params_fail(s, "'%.*s': expected auto, native, p2p or a comma list of "
                                  "them", (int)len, item);
        for (int i = 0; i < p->sizes.nimpls; i++)
            if (p->sizes.impls[i] == (cb_impl)found)
                return cb_params_fail(s, "'%s' given twice", impl_names[found]);
        p->sizes.impls[p->sizes.nimpls++] = (cb_impl)found;
        if (item[len] == '\0')
            return 0;
        item += len + 1;
    }
}

/* -R: 0 plain buffers, 1 registered with the communicator, 2 in a
 * symmetric window (the backend checks that the library has them). */
int cb_params_opt_register(parse_state *s, const char *v)
{
    long level;
    if (cb_parse_long(v, 0, 2, &level) != 0)
        return cb_params_fail(s, "'%s': expected 0, 1 or 2", v);
    s->p->sizes.registration = (int)level;
    return 0;
}
