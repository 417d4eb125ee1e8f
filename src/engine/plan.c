/* The iteration plan: see plan.h. No MPI, no backend, no state. */
#include "plan.h"

#include <math.h>

static int rounding(const cb_iter_request *req)
{
    return req->graph_launches == 0 && req->budget_ms > 0 && req->stable_pct > 0;
}

int cb_iter_plan_room(const cb_iter_request *req)
{
    int units = req->graph_launches > 0 ? req->graph_launches : req->iters;
    int room = units < CB_MAX_SAMPLES ? units : CB_MAX_SAMPLES;
    /* Every round ends with a mark: one more per round. */
    if (rounding(req))
        room += CB_ROUNDS;
    return room;
}

void cb_iter_plan_make(const cb_iter_request *req, double per_op, cb_iter_plan *plan)
{
    plan->graph = req->graph_launches > 0;
    plan->iters = req->iters;
    double per_unit = per_op * req->agg;
    int known = !plan->graph && isfinite(per_unit) && per_unit > 0;
    /* --budget: as many iterations as fit, at least 1, at most -n. */
    if (known && req->budget_ms > 0) {
        double fit = floor(req->budget_ms * 1e-3 / per_unit);
        plan->iters = fit < 1 ? 1 : fit < req->iters ? (int)fit : req->iters;
    }
    plan->units = plan->graph ? req->graph_launches : plan->iters;
    int spans = !rounding(req) ? 1 : plan->units < CB_ROUNDS ? plan->units : CB_ROUNDS;
    if (plan->units <= 0) {
        plan->per_round = plan->nrounds = plan->stride = 0;
        return;
    }
    plan->per_round = (plan->units + spans - 1) / spans;
    plan->nrounds = (plan->units + plan->per_round - 1) / plan->per_round;
    plan->stride = (plan->units + CB_MAX_SAMPLES - 1) / CB_MAX_SAMPLES;
    if (known && !req->per_iter) {
        double wanted = ceil(CB_SAMPLE_SPAN / per_unit);
        if (wanted > plan->stride)
            plan->stride = wanted >= plan->units ? plan->units : (int)wanted;
    }
}

int cb_iter_plan_span(const cb_iter_plan *plan, int span, int *units, int *stride)
{
    if (span < 0 || span >= plan->nrounds)
        return 0;
    int left = plan->units - span * plan->per_round;
    *units = left < plan->per_round ? left : plan->per_round;
    *stride = plan->stride < *units ? plan->stride : *units;
    return 1;
}

int cb_iter_plan_marks(int units, int stride)
{
    return stride > 0 ? (units + stride - 1) / stride : 0;
}

int cb_iter_plan_done(const cb_iter_plan *plan, int spans_run)
{
    if (plan->graph)
        return plan->iters;
    long done = (long)spans_run * plan->per_round;
    return done < plan->units ? (int)done : plan->units;
}
