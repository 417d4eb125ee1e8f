/*
 * Hierarchical all-reduce, as the seed's "reduce inside sub-groups, then
 * combine across the whole group": reduce inside each inner group (one per
 * node by default, --hier-split) to the group's first rank, all-reduce among
 * those leaders, broadcast back inside each group. The result is the
 * all-reduce's, so it is sized, checked and reported like allreduce, beside
 * it. The inner and leader groups are sub-communicators of the backend
 * (split), made once before the sweeps; the three steps run on the
 * backend's timeline, so its timer covers them all.
 */
#include <stdio.h>
#include <stdlib.h>

#include "collectives/collective.h"

typedef struct hier_state {
    cb_backend *inner;     /* this rank's inner group */
    cb_backend *leaders;   /* the inner groups' first ranks; NULL elsewhere */
} hier_state;

static void hier_release(void *state, int aborting)
{
    hier_state *hs = state;
    if (hs == NULL)
        return;
    if (hs->leaders != NULL)
        hs->leaders->ops->fini(hs->leaders, aborting);
    if (hs->inner != NULL)
        hs->inner->ops->fini(hs->inner, aborting);
    free(hs);
}

static int hier_prepare(cb_backend *b, int inner_color, void **state)
{
    hier_state *hs = calloc(1, sizeof *hs);
    *state = hs;
    if (hs == NULL)
        cb_backend_fail(b, "out of memory for hier_allreduce's groups");
    if (cb_backend_agree(b->comm, b, hs == NULL) != 0)
        return -1;
    if (b->ops->split(b, inner_color, b->rank, &hs->inner) != 0)
        return -1;
    int leader = hs->inner->rank == 0;
    return b->ops->split(b, leader ? 0 : -1, b->rank, &hs->leaders);
}

/* A sub-backend's failure as the backend's own. */
static int step(cb_backend *b, cb_backend *sub, int rc)
{
    if (rc != 0)
        snprintf(b->error, sizeof b->error, "%s", sub->error);
    return rc;
}

static int hier_run(cb_backend *b, const cb_call *call)
{
    const hier_state *hs = call->state;
    cb_backend *inner = hs->inner, *leaders = hs->leaders;
    size_t count = call->layout.count;
    /* premulsum scales every input once, in the first step; then it sums. */
    cb_redop combine = call->redop == CB_PREMULSUM ? CB_SUM : call->redop;
    if (step(b, inner, inner->ops->coll.reduce(inner, call->send, call->recv, count, call->dtype,
                                          call->redop, 0)) != 0)
        return -1;
    if (leaders != NULL && leaders->nranks > 1 &&
        step(b, leaders, leaders->ops->coll.allreduce(leaders, call->recv, call->recv, count,
                                                 call->dtype, combine)) != 0)
        return -1;
    return step(b, inner, inner->ops->coll.broadcast(inner, call->recv, call->recv, count,
                                                call->dtype, 0));
}

/* An average of group averages is not the average when groups differ in
 * size, and no step divides by the whole count afterwards. */
static int hier_accepts(cb_redop redop, char *why, size_t why_len)
{
    if (redop != CB_AVG)
        return 1;
    snprintf(why, why_len, "avg does not compose from group averages (use sum and divide, "
             "or premulsum)");
    return 0;
}

static int hier_available(const cb_backend_ops *ops)
{
    return ops->split != NULL && ops->coll.reduce != NULL && ops->coll.broadcast != NULL;
}

const cb_collective cb_coll_hier_allreduce = {
    .name = "hier_allreduce",
    .aliases = "hier-allreduce hierallreduce",
    .flags = CB_COLL_REDUCES | CB_COLL_SEQUENTIAL,
    .layout = cb_layout_whole,
    .busbw_factor = cb_busbw_allreduce,
    .run = hier_run,
    .fill_input = cb_fill_whole,
    .check_output = cb_check_allreduced,
    .available = hier_available,
    .needs = "sub-communicators (split)",
    .accepts = hier_accepts,
    .prepare = hier_prepare,
    .release = hier_release,
};
