/* comm_init: not an operation on data but the making of communicators
 * (creation, split, shrink; the backend's comm_time), one row each. The
 * engine measures it itself (engine/comm_time.c): run is never called, and
 * nothing moves, so bandwidths are 0 and nothing is verified. Only by
 * name: -o all means the collectives. */
#include "collectives/collective.h"

static int comm_init_layout(size_t bytes, size_t elem_size, int nranks, cb_layout *out)
{
    (void)bytes;
    (void)elem_size;
    (void)nranks;
    *out = (cb_layout){0};
    return 0;
}

static double comm_init_busbw_factor(int nranks)
{
    (void)nranks;
    return 0.0;
}

static int comm_init_run(cb_backend *b, const cb_call *call)
{
    (void)call;
    return cb_backend_fail(b, "comm_init is measured by the engine, not launched");
}

static int comm_init_available(const cb_backend_ops *ops)
{
    return ops->comm_time != NULL;
}

const cb_collective cb_coll_comm_init = {
    .name = "comm_init",
    .aliases = "comm",
    .flags = CB_COLL_NO_DATA | CB_COLL_COMM,
    .layout = comm_init_layout,
    .busbw_factor = comm_init_busbw_factor,
    .run = comm_init_run,
    .fill_input = cb_fill_nothing,
    .check_output = cb_check_nothing,
    .available = comm_init_available,
    .needs = "communicator timing (comm_time)",
};
