/* The table of collectives: adding one is a new file and a line here. */
#include "collectives/collective.h"
#include "common/names.h"

extern const cb_collective cb_coll_allreduce;
extern const cb_collective cb_coll_allgather;
extern const cb_collective cb_coll_reducescatter;
extern const cb_collective cb_coll_broadcast;
extern const cb_collective cb_coll_reduce;
extern const cb_collective cb_coll_alltoall;
extern const cb_collective cb_coll_alltoallv;
extern const cb_collective cb_coll_gather;
extern const cb_collective cb_coll_scatter;
extern const cb_collective cb_coll_sendrecv;
extern const cb_collective cb_coll_hypercube;
extern const cb_collective cb_coll_barrier;
extern const cb_collective cb_coll_ring_allreduce;
extern const cb_collective cb_coll_hier_allreduce;
extern const cb_collective cb_coll_comm_init;

static const cb_collective *const collective_table[] = {
    &cb_coll_allreduce,
    &cb_coll_allgather,
    &cb_coll_reducescatter,
    &cb_coll_broadcast,
    &cb_coll_reduce,
    &cb_coll_alltoall,
    &cb_coll_alltoallv,
    &cb_coll_gather,
    &cb_coll_scatter,
    &cb_coll_sendrecv,
    &cb_coll_hypercube,
    &cb_coll_ring_allreduce,
    &cb_coll_hier_allreduce,
    &cb_coll_barrier,
    &cb_coll_comm_init,
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
