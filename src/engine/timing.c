/* Timing: launch loops, timed spans, marks, rounds, and combining ranks' times. */
#include "engine_int.h"

int cb_eng_launches_grouped(engine *e, const cb_collective *coll, const cb_call *call)
{
    /* A group launches its collectives at its end, after copies launched
     * inside it: collectives with steps or copies that must follow one
     * another (hier_allreduce, the column layout) run ungrouped. */
    return e->p->timing.agg > 1 && e->ops->launch.group_start != NULL && e->ops->launch.group_end != NULL &&
           !(coll->flags & CB_COLL_SEQUENTIAL) && call->layout.rows == 0;
}

/* call moved to operation k's slice of the buffers (--rotate). */
static cb_call on_slice(engine *e, const cb_call *call, size_t k)
{
    cb_call moved = *call;
    size_t shift = e->now.rotate_steps > 1 ? e->now.rotate_unit * (k % e->now.rotate_steps) : 0;
    moved.send = (const char *)call->send + shift;
    moved.recv = (char *)call->recv + shift;
    e->now.rotate_last = shift;
    return moved;
}

/* One iteration, the unit-th of its loop: p->timing.agg operations, as one group
 * when the backend groups, each on its own slice of the buffers. */
static int launch_iteration(engine *e, const cb_collective *coll, const cb_call *call, int unit)
{
    int grouped = cb_eng_launches_grouped(e, coll, call);
    if (grouped && cb_eng_backend_step(e, e->ops->launch.group_start(e->b)) != 0)
        return -1;
    int rc = 0;
    for (int a = 0; a < e->p->timing.agg && rc == 0; a++) {
        cb_call moved = on_slice(e, call, (size_t)unit * (size_t)e->p->timing.agg + (size_t)a);
        rc = cb_eng_backend_step(e, coll->run(e->b, &moved));
    }
    /* A group that was opened is closed, also after a failed launch. */
    if (grouped) {
        int end = e->ops->launch.group_end(e->b);
        if (rc == 0)
            rc = cb_eng_backend_step(e, end);
    }
    return rc;
}

/* How a run of units is launched: the one loop behind the warmup, the
 * recording of a graph and every timed span. */
typedef struct launch_plan {
    int units;    /* iterations, or graph launches */
    int graph;    /* each unit launches the recorded graph */
    int wait;     /* after each unit (-z, not while recording): 0 none, 1 wait and
                   * barrier, 2 wait, 3 wait, barrier outside the time */
    int stride;   /* timed spans: a mark every stride units and after the last; 0: none */
} launch_plan;

/* The units of lp; with -z 3 (lp->wait 3) their own time, barriers left
 * out, into *alone_s (NULL: not wanted). */
static int launch_units(engine *e, const cb_collective *coll, const cb_call *call,
                        const launch_plan *lp, double *alone_s)
{
    cb_watchdog_loop(&e->safety.watch, lp->units);
    double alone = 0;
    for (int i = 0; i < lp->units; i++) {
        /* -z 3 alone times each unit; other modes read no clock here. */
        double unit_start = lp->wait == 3 ? cb_ctl_now() : 0;
        int rc = lp->graph ? cb_eng_backend_step(e, e->ops->launch.graph_launch(e->b))
                           : launch_iteration(e, coll, call, i);
        if (rc != 0)
            return -1;
        cb_watchdog_at(&e->safety.watch, i);
        if (lp->wait != 0 && cb_eng_backend_step(e, e->ops->wait(e->b)) != 0)
            return -1;
        if (lp->wait == 3)
            alone += cb_ctl_now() - unit_start;
        /* Marks are read back only after the span. */
        int due = lp->stride > 0 && ((i + 1) % lp->stride == 0 || i + 1 == lp->units);
        if (due && e->timing.sampling && cb_eng_backend_step(e, e->ops->timing.timer_mark(e->b)) != 0)
            return -1;
        /* The barrier, as nccl-tests' -z 1 and 3; also an agreement, so a
         * rank that failed stops the others here. */
        if ((lp->wait == 1 || lp->wait == 3) && cb_eng_agree(e) != CB_EXIT_OK)
            return -1;
    }
    if (alone_s != NULL)
        *alone_s = alone;
    return 0;
}

/* The timed span: from a barrier, the launches of lp, until this rank sees
 * them complete. --clock host (nccl-tests' clock): cb_ctl_now around the
 * span, the backend's timer started only for per-iteration marks; -z 3:
 * the operations' own time, barriers left out. --clock device: the
 * backend's timer (CUDA events on NCCL). Sets the completion time and the
 * CPU time the launches took, both on this rank. */
static int timed_span(engine *e, const cb_collective *coll, const cb_call *call,
                      const launch_plan *lp, double *completion, double *cpu)
{
    if (cb_eng_backend_step(e, e->ops->wait(e->b)) != 0)
        return -1;
    /* The barrier before timing is an agreement: a rank that failed on the
     * way here is waiting in one, and nobody launches what it would miss. */
    if (cb_eng_agree(e) != CB_EXIT_OK)
        return -1;
    int device = e->p->timing.clock == CB_CLOCK_DEVICE;
    if (e->ops->timing.span != NULL)
        e->ops->timing.span(e->b, 1);
    int rc = (device || e->timing.sampling) ? cb_eng_backend_step(e, e->ops->timing.timer_start(e->b)) : 0;
    double start = cb_ctl_now(), alone = 0;
    if (rc == 0)
        rc = launch_units(e, coll, call, lp, &alone);
    *cpu = cb_ctl_now() - start;
    if (rc == 0 && device)
        rc = cb_eng_backend_step(e, e->ops->timing.timer_stop(e->b, completion));
    else if (rc == 0)
        rc = cb_eng_backend_step(e, e->ops->wait(e->b));
    if (rc == 0 && !device)
        *completion = lp->wait == 3 ? alone : cb_ctl_now() - start;
    if (e->ops->timing.span != NULL)
        e->ops->timing.span(e->b, 0);
    return rc;
}

/* A feature's launches one at a time (e->timing.launch_singly, -B): units
 * iterations one by one, each waited for, with the features' hooks around
 * it outside any timed span (the warmup), or each its own timed span
 * (timed: the spans' times summed into completion and cpu, and per stride
 * of them one per-operation sample into samples, *n of them, where the
 * engine samples). */
static int single_units(engine *e, const cb_collective *coll, const cb_call *call,
                        const launch_plan *lp, int timed, double *completion, double *cpu,
                        double *samples, int *n)
{
    launch_plan one = {.units = 1, .wait = 2};
    cb_eng_measure m = {.coll = coll, .call = call, .size_index = -1, .in_place = -1};
    double group = 0;
    int in_group = 0;
    *n = 0;
    for (int u = 0; u < lp->units; u++) {
        double span = 0, launch = 0;
        if (cb_eng_features_before_launch(e, &m) != 0)
            return -1;
        int rc = timed ? timed_span(e, coll, call, &one, &span, &launch)
                       : launch_units(e, coll, call, &one, NULL);
        if (rc != 0 || cb_eng_features_after_launch(e, &m) != 0)
            return -1;
        if (!timed)
            continue;
        *completion += span;
        *cpu += launch;
        group += span;
        if (e->timing.sampling && lp->stride > 0 &&
            (++in_group == lp->stride || u + 1 == lp->units)) {
            samples[(*n)++] = group / ((double)in_group * e->p->timing.agg);
            group = 0;
            in_group = 0;
        }
    }
    return 0;
}

/* -G: record the iterations once, launch the recording as the plan says. */
static int time_graph(engine *e, const cb_collective *coll, const cb_call *call,
                      double *completion, double *cpu)
{
    launch_plan record = {.units = e->p->sizes.iters};
    launch_plan launches = {.units = e->timing.plan.units, .graph = 1, .wait = e->p->timing.blocking,
                            .stride = e->timing.plan.stride};
    /* The warmup ends before capture: graph and non-graph work overlapping
     * on one stream rely on NCCL_GRAPH_MIXING_SUPPORT, which can deadlock
     * with several communicators' graphs. */
    int rc = cb_eng_backend_step(e, e->ops->wait(e->b));
    if (rc == 0)
        rc = cb_eng_backend_step(e, e->ops->launch.graph_begin(e->b));
    if (rc == 0)
        rc = launch_units(e, coll, call, &record, NULL);
    if (rc == 0)
        rc = cb_eng_backend_step(e, e->ops->launch.graph_end(e->b));
    /* Recording is local: agree on it before launching what others would wait on. */
    if (cb_eng_agree(e) != CB_EXIT_OK)
        rc = -1;
    /* The first launch, which uploads the graph, is timed, as nccl-tests
     * times it. */
    if (rc == 0)
        rc = timed_span(e, coll, call, &launches, completion, cpu);
    e->ops->launch.graph_free(e->b);
    return rc;
}

/* This rank's per-operation samples from the marks of the last span (of
 * units with this stride), into out; *n of them. */
static int read_samples(engine *e, double ops_per_unit, int units, int stride, double *out,
                        int *n)
{
    *n = e->timing.sampling ? cb_iter_plan_marks(units, stride) : 0;
    if (*n > 0 && cb_eng_backend_step(e, e->ops->timing.timer_samples(e->b, out, *n)) != 0)
        return -1;
    for (int j = 0; j < *n; j++) {
        int in_mark = j + 1 < *n ? stride : units - stride * (*n - 1);
        out[j] /= in_mark * ops_per_unit;
    }
    return 0;
}

/* --samples-json and -I 1: raw samples kept and gathered (not with
 * --split, whose results have no per-rank entries). */
int cb_eng_keeps_raw_samples(const cb_params *p)
{
    return ((p->out.samples_json && cb_params_json_path(p) != NULL) || p->timing.per_iter) &&
           p->sizes.split.kind == CB_SPLIT_NONE;
}

void cb_eng_timing_alloc(engine *e)
{
    cb_eng_timing *t = &e->timing;
    int lead = e->groups.grank == 0, gsize = e->groups.gsize;
    /* The plan until a measurement has an estimate; with -G, for good. */
    cb_iter_request req = cb_eng_iter_request(e->p);
    cb_iter_plan_make(&req, 0.0, &t->plan);
    /* Per-iteration marks: always where a mark reads a clock; where it is
     * a library call inside the timed span, only for the figures that need
     * them, so that the default time is one timer pair around the span, as
     * nccl-tests' without -I. */
    int figures_asked = e->p->out.table_stats || e->p->out.samples_json || e->p->timing.per_iter ||
                        (e->p->timing.budget_ms > 0 && e->p->timing.stable_pct > 0);
    t->sampling = e->ops->timing.timer_reserve && e->ops->timing.timer_mark && e->ops->timing.timer_samples &&
                  (!e->ops->timing.marks_cost_a_call || figures_asked);
    int marks = cb_iter_plan_room(&req);
    t->samples = malloc((size_t)marks * sizeof *t->samples);
    if (lead)
        t->rank_times = malloc((size_t)gsize * sizeof *t->rank_times);
    int raw = cb_eng_keeps_raw_samples(e->p);
    t->samples_room = marks;
    if (raw) {
        t->raw_samples = calloc((size_t)marks, sizeof *t->raw_samples);
        if (lead)
            t->rank_samples = calloc((size_t)gsize * marks, sizeof *t->rank_samples);
        if (e->rank == 0)
            t->pending_samples = calloc((size_t)gsize * marks, sizeof *t->pending_samples);
    }
    if (t->samples == NULL || (lead && t->rank_times == NULL) ||
        (raw && (t->raw_samples == NULL || (lead && t->rank_samples == NULL) ||
                 (e->rank == 0 && t->pending_samples == NULL))))
        cb_status_set(&e->st, CB_EXIT_RUNTIME, "out of memory for timing samples");
    else if (t->sampling)
        cb_eng_backend_step(e, e->ops->timing.timer_reserve(e->b, marks));
}

void cb_eng_timing_free(engine *e)
{
    cb_eng_timing *t = &e->timing;
    free(t->samples);
    free(t->rank_times);
    free(t->raw_samples);
    free(t->rank_samples);
    free(t->pending_samples);
    t->raw_samples = t->rank_samples = t->pending_samples = NULL;
    t->samples = NULL;
    t->rank_times = NULL;
}

/* The command line's part of the iteration plan. */
cb_iter_request cb_eng_iter_request(const cb_params *p)
{
    cb_iter_request req = {.iters = p->sizes.iters, .graph_launches = p->timing.graph_launches,
                           .agg = p->timing.agg, .budget_ms = p->timing.budget_ms,
                           .stable_pct = p->timing.stable_pct, .per_iter = p->timing.per_iter};
    return req;
}

/* The plan for the next measurement, from the smaller of two estimates of
 * the time per operation (the warmup's, which its first call inflates, and
 * the previous size's when this size is no smaller), agreed across ranks so
 * that every rank makes the same plan. A low estimate only means fewer
 * samples, or with --budget more iterations. */
static void choose_plan(engine *e, const cb_call *call, double warmup_per_op)
{
    double estimate = e->p->sizes.warmup > 0 ? warmup_per_op : HUGE_VAL;
    const cb_eng_timing *t = &e->timing;
    if (t->prev_op_time > 0 && call->layout.count >= t->prev_count && t->prev_op_time < estimate)
        estimate = t->prev_op_time;
    double agreed = estimate;
    cb_ctl_allreduce(e->comm, &estimate, &agreed, 1, CB_CTL_DOUBLE, CB_CTL_MIN);
    cb_iter_request req = cb_eng_iter_request(e->p);
    cb_iter_plan_make(&req, agreed, &e->timing.plan);
}

/* The timed iterations without -G: the plan's spans, one by one. With
 * --budget and --stable the plan has rounds, and after at least
 * CB_STABLE_ROUNDS of them the ranks stop early when every rank finds the
 * medians and the means of its last CB_STABLE_ROUNDS rounds each within
 * --stable percent of their median. The ranks agree on stopping between
 * rounds, outside any timed span, so that all run the same count. Sums the
 * completion and CPU times of the spans and leaves the per-operation
 * samples of every round in e->timing.samples. */
static int time_rounds(engine *e, const cb_collective *coll, const cb_call *call,
                       double *completion, double *cpu, int *nsamples)
{
    const cb_params *p = e->p;
    double medians[CB_ROUNDS], means[CB_ROUNDS];
    launch_plan lp = {.wait = p->timing.blocking};
    int rc = 0;
    *completion = *cpu = 0;
    *nsamples = 0;
    e->timing.spans_run = 0;
    for (int r = 0; rc == 0 && cb_iter_plan_span(&e->timing.plan, r, &lp.units, &lp.stride); r++) {
        double span = 0, launch = 0, *samples = e->timing.samples + *nsamples;
        int n = 0;
        if (e->timing.launch_singly) {
            rc = single_units(e, coll, call, &lp, 1, &span, &launch, samples, &n);
        } else {
            rc = timed_span(e, coll, call, &lp, &span, &launch);
            if (rc == 0)
                rc = read_samples(e, p->timing.agg, lp.units, lp.stride, samples, &n);
        }
        if (rc != 0)
            break;
        *completion += span;
        *cpu += launch;
        *nsamples += n;
        e->timing.spans_run = r + 1;
        if (e->timing.spans_run >= e->timing.plan.nrounds)
            break;
        /* The round's median sample (its time per operation without marks),
         * and its time per operation, the quantity the tool reports: both
         * must have settled, so that a burst of load inside a round, which a
         * median hides, keeps the measurement going. */
        cb_rank_time round;
        cb_stats_from_samples(samples, n, &round);
        means[r] = span / ((double)lp.units * p->timing.agg);
        medians[r] = n > 0 ? round.median : means[r];
        int stable = cb_stats_stable(medians, r + 1, CB_STABLE_ROUNDS, p->timing.stable_pct) &&
                     cb_stats_stable(means, r + 1, CB_STABLE_ROUNDS, p->timing.stable_pct);
        /* A rank that failed in the round waits in an agreement, not in the vote. */
        if (cb_eng_agree(e) != CB_EXIT_OK) {
            rc = -1;
            break;
        }
        cb_ctl_allreduce(e->comm, CB_CTL_IN_PLACE, &stable, 1, CB_CTL_INT, CB_CTL_MIN);
        if (stable)
            break;
    }
    return rc;
}

/* Warmup, then the timed iterations; the time per operation on this rank:
 * until completion, or with -C until the launches returned; and the
 * per-iteration statistics (always of completion). */
int cb_eng_time_collective(engine *e, const cb_collective *coll, const cb_call *call,
                           cb_rank_time *t)
{
    const cb_params *p = e->p;
    cb_watchdog_doing(&e->safety.watch, "%s, warmup", e->now.measuring);
    double warmup_start = cb_ctl_now();
    launch_plan warmup = {.units = p->sizes.warmup, .wait = p->timing.blocking};
    double unused = 0;
    int nunused = 0;
    int warm_rc = e->timing.launch_singly
                      ? single_units(e, coll, call, &warmup, 0, &unused, &unused, NULL, &nunused)
                      : launch_units(e, coll, call, &warmup, NULL);
    /* Also after a launch failed on this rank alone (NCCL may report an
     * asynchronous error at any call): the others are in the plan's
     * reduction, and the agreement that follows tells them. */
    if (p->timing.graph_launches == 0)
        choose_plan(e, call, p->sizes.warmup > 0 ? (cb_ctl_now() - warmup_start) /
                                                        ((double)p->sizes.warmup * p->timing.agg)
                                                  : 0.0);
    if (warm_rc != 0)
        return -1;
    cb_watchdog_doing(&e->safety.watch, "%s, timed iterations", e->now.measuring);
    double completion = 0, cpu = 0, ops;
    int rc, nsamples = 0;
    if (p->timing.graph_launches > 0) {
        rc = time_graph(e, coll, call, &completion, &cpu);
        if (rc == 0)
            rc = read_samples(e, (double)p->sizes.iters * p->timing.agg, e->timing.plan.units,
                              e->timing.plan.stride, e->timing.samples, &nsamples);
        e->timing.spans_run = 1;
        ops = (double)p->sizes.iters * p->timing.agg * p->timing.graph_launches;
    } else {
        rc = time_rounds(e, coll, call, &completion, &cpu, &nsamples);
        ops = (double)cb_iter_plan_done(&e->timing.plan, e->timing.spans_run) * p->timing.agg;
    }
    if (rc != 0)
        return -1;
    t->mean = (p->timing.report_cputime ? cpu : completion) / ops;
    e->timing.prev_op_time = completion / ops;
    e->timing.prev_count = call->layout.count;
    /* --samples-json: the samples in the order taken, before sorting. */
    if (e->timing.raw_samples != NULL)
        memcpy(e->timing.raw_samples, e->timing.samples,
               (size_t)nsamples * sizeof *e->timing.samples);
    cb_stats_from_samples(e->timing.samples, nsamples, t);
    return 0;
}

double cb_eng_combine_time(engine *e, double mine)
{
    double combined = mine;
    switch (e->p->timing.average) {
    case CB_AVERAGE_RANK0:
        cb_ctl_bcast(e->groups.gcomm, &combined, sizeof(double), 0);
        break;
    case CB_AVERAGE_MEAN:
        cb_ctl_allreduce(e->groups.gcomm, &mine, &combined, 1, CB_CTL_DOUBLE, CB_CTL_SUM);
        combined /= e->groups.gsize;
        break;
    case CB_AVERAGE_MIN:
        cb_ctl_allreduce(e->groups.gcomm, &mine, &combined, 1, CB_CTL_DOUBLE, CB_CTL_MIN);
        break;
    case CB_AVERAGE_MAX:
        cb_ctl_allreduce(e->groups.gcomm, &mine, &combined, 1, CB_CTL_DOUBLE, CB_CTL_MAX);
        break;
    }
    return combined;
}

int cb_eng_gather_rank_times(engine *e, const cb_rank_time *mine, cb_result *res)
{
    cb_ctl_gather(e->groups.gcomm, mine, sizeof *mine, e->timing.rank_times, 0);
    if (e->groups.grank != 0)
        return 0;
    cb_stats_spread(e->timing.rank_times, e->groups.gsize, &res->spread);
    res->slowest = e->timing.rank_times[res->spread.slowest];
    res->rank_times = e->timing.rank_times;
    int slowest_rank = e->groups.gmembers[res->spread.slowest];
    if (e->rank == 0)
        snprintf(res->slowest_host, sizeof res->slowest_host, "%s", e->ranks[slowest_rank].host);
    return slowest_rank;
}
