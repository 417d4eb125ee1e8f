/* The iteration plan: -n, -G, --budget, --stable and the estimate. */
#include <math.h>

#include "engine/plan.h"
#include "unit.h"

/* The units of every span of plan, and the marks they take, add up. */
static void walk(const cb_iter_plan *plan, int *units, int *marks, int *spans)
{
    int u, stride;
    *units = *marks = *spans = 0;
    while (cb_iter_plan_span(plan, *spans, &u, &stride)) {
        *units += u;
        *marks += cb_iter_plan_marks(u, stride);
        (*spans)++;
    }
}

int main(void)
{
    unit_state u = {0, 0};
    cb_iter_plan plan;
    int units, marks, spans;

    /* -n 20, nothing else: one span of 20, a mark per iteration. */
    cb_iter_request plain = {.iters = 20, .agg = 1};
    cb_iter_plan_make(&plain, 0.0, &plan);
    CHECK(&u, plan.iters == 20 && plan.units == 20 && plan.nrounds == 1 && plan.stride == 1);
    CHECK(&u, cb_iter_plan_done(&plan, 1) == 20);
    CHECK(&u, cb_iter_plan_room(&plain) == 20);

    /* -I 1: a mark after every iteration, however short the operation. */
    cb_iter_request per_iter = {.iters = 20, .agg = 1, .per_iter = 1};
    cb_iter_plan_make(&per_iter, 1e-9, &plan);
    CHECK(&u, plan.stride == 1);
    cb_iter_plan_make(&plain, 1e-9, &plan);
    CHECK(&u, plan.stride > 1);

    /* Many iterations: at most CB_MAX_SAMPLES marks. */
    cb_iter_request many = {.iters = 5000, .agg = 1};
    cb_iter_plan_make(&many, NAN, &plan);
    CHECK(&u, plan.stride == 5 && cb_iter_plan_marks(plan.units, plan.stride) == 1000);
    CHECK(&u, cb_iter_plan_room(&many) == CB_MAX_SAMPLES);

    /* Fast operations: one mark per CB_SAMPLE_SPAN of estimated time, never
     * more than the span; -m counts in the time per iteration. */
    cb_iter_plan_make(&plain, 0.9e-6, &plan);
    CHECK(&u, plan.stride == 3 && plan.iters == 20);
    cb_iter_request agg5 = {.iters = 20, .agg = 5};
    cb_iter_plan_make(&agg5, 0.3e-6, &plan);
    CHECK(&u, plan.stride == 2);
    /* A sample per iteration whenever the span allows: a 5 us operation
     * (a small GPU collective) is sampled every iteration, so that -n 20
     * gives 20 samples. */
    cb_iter_plan_make(&plain, 5e-6, &plan);
    CHECK(&u, plan.stride == 1 && cb_iter_plan_marks(plan.units, plan.stride) == 20);
    cb_iter_plan_make(&plain, CB_SAMPLE_SPAN, &plan);
    CHECK(&u, plan.stride == 1);
    cb_iter_plan_make(&plain, 1e-9, &plan);
    CHECK(&u, plan.stride == 20);
    cb_iter_plan_make(&plain, 1.0, &plan);
    CHECK(&u, plan.stride == 1);

    /* --budget: what fits, at least 1, at most -n; no estimate, all of -n. */
    cb_iter_request budget = {.iters = 1000, .agg = 2, .budget_ms = 1000};
    cb_iter_plan_make(&budget, 0.0625, &plan);
    CHECK(&u, plan.iters == 8 && plan.units == 8 && plan.nrounds == 1);
    CHECK(&u, cb_iter_plan_done(&plan, 1) == 8);
    cb_iter_plan_make(&budget, 100.0, &plan);
    CHECK(&u, plan.iters == 1);
    cb_iter_plan_make(&budget, 1e-9, &plan);
    CHECK(&u, plan.iters == 1000);
    cb_iter_plan_make(&budget, HUGE_VAL, &plan);
    CHECK(&u, plan.iters == 1000);
    cb_iter_plan_make(&budget, -1.0, &plan);
    CHECK(&u, plan.iters == 1000);

    /* --budget with --stable: at most CB_ROUNDS rounds of equal length, the
     * last shorter, covering every iteration once. */
    cb_iter_request stable = {.iters = 25, .agg = 1, .budget_ms = 1e6, .stable_pct = 5};
    cb_iter_plan_make(&stable, 1e-3, &plan);
    CHECK(&u, plan.iters == 25 && plan.per_round == 3 && plan.nrounds == 9);
    walk(&plan, &units, &marks, &spans);
    CHECK(&u, units == 25 && spans == 9);
    int last_units = 0, last_stride = 0;
    CHECK(&u, cb_iter_plan_span(&plan, 8, &last_units, &last_stride) && last_units == 1 &&
                  last_stride == 1);
    CHECK(&u, !cb_iter_plan_span(&plan, 9, &last_units, &last_stride));
    CHECK(&u, cb_iter_plan_done(&plan, 3) == 9 && cb_iter_plan_done(&plan, 9) == 25);
    CHECK(&u, cb_iter_plan_room(&stable) == 25 + CB_ROUNDS);
    cb_iter_request few = {.iters = 4, .agg = 1, .budget_ms = 1e6, .stable_pct = 5};
    cb_iter_plan_make(&few, 1e-3, &plan);
    CHECK(&u, plan.nrounds == 4 && plan.per_round == 1);
    /* --stable without --budget: one span. */
    cb_iter_request no_budget = {.iters = 25, .agg = 1, .stable_pct = 5};
    cb_iter_plan_make(&no_budget, 1e-3, &plan);
    CHECK(&u, plan.nrounds == 1 && cb_iter_plan_room(&no_budget) == 25);

    /* The marks of every plan fit in the room, whatever the estimate. */
    const int iters[] = {1, 3, 10, 25, 999, 1001, 4096, 100000};
    const double estimates[] = {0.0, 1e-9, 1e-7, 1e-5, 1e-3, 1.0};
    int fits = 1, covers = 1;
    for (int i = 0; i < 8; i++)
        for (int s = 0; s < 2; s++)
            for (int k = 0; k < 6; k++) {
                cb_iter_request req = {.iters = iters[i], .agg = 1, .budget_ms = s ? 1e9 : 0,
                                       .stable_pct = s ? 1 : 0};
                cb_iter_plan_make(&req, estimates[k], &plan);
                walk(&plan, &units, &marks, &spans);
                fits &= marks <= cb_iter_plan_room(&req);
                covers &= units == plan.units && spans == plan.nrounds;
            }
    CHECK(&u, fits);
    CHECK(&u, covers);

    /* -G: units are graph launches of -n recorded iterations; the estimate
     * and --budget change nothing. */
    cb_iter_request graph = {.iters = 7, .graph_launches = 3000, .agg = 1, .budget_ms = 1,
                             .stable_pct = 5};
    cb_iter_plan_make(&graph, 1.0, &plan);
    CHECK(&u, plan.graph && plan.iters == 7 && plan.units == 3000 && plan.nrounds == 1 &&
                  plan.stride == 3);
    CHECK(&u, cb_iter_plan_done(&plan, 1) == 7);
    CHECK(&u, cb_iter_plan_room(&graph) == CB_MAX_SAMPLES);

    CHECK(&u, cb_iter_plan_marks(10, 3) == 4 && cb_iter_plan_marks(9, 3) == 3);
    return unit_done(&u, "unit_plan");
}
