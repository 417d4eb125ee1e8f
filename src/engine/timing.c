/* Timing: launch loops, timed spans, marks, rounds, and combining ranks' times. */
#include "engine_int.h"

/* One iteration: p->agg operations, as one group when the backend groups. */
static int launch_iteration(engine *e, const cb_collective *coll, const cb_call *call)
{
    /* A group launches its collectives at its end, after copies launched
     * inside it: collectives with steps or copies that must follow one
     * another (hier_allreduce, the column layout) run ungrouped. */
    int grouped = e->p->agg > 1 && e->ops->group_start != NULL && e->ops->group_end != NULL &&
                  !(coll->flags & CB_COLL_SEQUENTIAL) && call->layout.rows == 0;
    if (grouped && backend_step(e, e->ops->group_start(e->b)) != 0)
        return -1;
    int rc = 0;
    for (int a = 0; a < e->p->agg && rc == 0; a++)
        rc = backend_step(e, coll->run(e->b, call));
    /* A group that was opened is closed, also after a failed launch. */
    if (grouped) {
        int end = e->ops->group_end(e->b);
        if (rc == 0)
            rc = backend_step(e, end);
    }
    return rc;
}

/* n iterations; with -z each is waited for, unless it is being recorded. */
static int launch_iterations(engine *e, const cb_collective *coll, const cb_call *call, int n,
                             int recording)
{
    cb_watchdog_loop(&e->watch, n);
    for (int i = 0; i < n; i++) {
        if (launch_iteration(e, coll, call) != 0)
            return -1;
        cb_watchdog_at(&e->watch, i);
        if (e->p->blocking && !recording && backend_step(e, e->ops->wait(e->b)) != 0)
            return -1;
    }
    return 0;
}

/* The timed span: timer_start, launch(), timer_stop. Sets the completion time
 * and the CPU time launch() took, both on this rank. */
typedef int (*launch_fn)(engine *e, const cb_collective *coll, const cb_call *call);

static int timed_span(engine *e, const cb_collective *coll, const cb_call *call, launch_fn launch,
                      double *completion, double *cpu)
{
    if (backend_step(e, e->ops->wait(e->b)) != 0)
        return -1;
    /* The barrier before timing is an agreement: a rank that failed on the
     * way here is waiting in one, and nobody launches what it would miss. */
    if (agree(e) != CB_EXIT_OK)
        return -1;
    e->nmarks = 0;
    if (backend_step(e, e->ops->timer_start(e->b)) != 0)
        return -1;
    double cpu_start = MPI_Wtime();
    if (launch(e, coll, call) != 0)
        return -1;
    *cpu = MPI_Wtime() - cpu_start;
    return backend_step(e, e->ops->timer_stop(e->b, completion));
}

/* After unit i of a timed span: a timestamp every mark_stride units and
 * after the last, read back only after the span. */
static int mark_if_due(engine *e, int i)
{
    if (!e->sampling || ((i + 1) % e->mark_stride != 0 && i + 1 != e->mark_units))
        return 0;
    e->nmarks++;
    return backend_step(e, e->ops->timer_mark(e->b));
}

/* The mark_units iterations of one timed span (all of -n, or one round). */
static int launch_timed_iterations(engine *e, const cb_collective *coll, const cb_call *call)
{
    cb_watchdog_loop(&e->watch, e->mark_units);
    for (int i = 0; i < e->mark_units; i++) {
        if (launch_iteration(e, coll, call) != 0)
            return -1;
        cb_watchdog_at(&e->watch, i);
        if (e->p->blocking && backend_step(e, e->ops->wait(e->b)) != 0)
            return -1;
        if (mark_if_due(e, i) != 0)
            return -1;
    }
    return 0;
}

static int launch_graphs(engine *e, const cb_collective *coll, const cb_call *call)
{
    (void)coll;
    (void)call;
    cb_watchdog_loop(&e->watch, e->p->graph_launches);
    for (int g = 0; g < e->p->graph_launches; g++) {
        if (backend_step(e, e->ops->graph_launch(e->b)) != 0)
            return -1;
        cb_watchdog_at(&e->watch, g);
        if (e->p->blocking && backend_step(e, e->ops->wait(e->b)) != 0)
            return -1;
        if (mark_if_due(e, g) != 0)
            return -1;
    }
    return 0;
}

/* -G: record the iterations once, launch the recording graph_launches times. */
static int time_graph(engine *e, const cb_collective *coll, const cb_call *call,
                      double *completion, double *cpu)
{
    int rc = backend_step(e, e->ops->graph_begin(e->b));
    if (rc == 0)
        rc = launch_iterations(e, coll, call, e->p->iters, 1);
    if (rc == 0)
        rc = backend_step(e, e->ops->graph_end(e->b));
    /* Recording is local: agree on it before launching what others would wait on. */
    if (agree(e) != CB_EXIT_OK)
        rc = -1;
    /* The first launch of a graph pays for setting it up: untimed, with warmup. */
    if (rc == 0 && e->p->warmup > 0) {
        rc = backend_step(e, e->ops->graph_launch(e->b));
        if (rc == 0)
            rc = backend_step(e, e->ops->wait(e->b));
    }
    if (rc == 0)
        rc = timed_span(e, coll, call, launch_graphs, completion, cpu);
    e->ops->graph_free(e->b);
    return rc;
}

/* This rank's per-operation samples from the marks of the last span, into
 * out; *n of them. */
static int read_samples(engine *e, double ops_per_unit, double *out, int *n)
{
    *n = e->sampling ? e->nmarks : 0;
    if (*n > 0 && backend_step(e, e->ops->timer_samples(e->b, out, *n)) != 0)
        return -1;
    for (int j = 0; j < *n; j++) {
        int units = j + 1 < *n ? e->mark_stride : e->mark_units - e->mark_stride * (*n - 1);
        out[j] /= units * ops_per_unit;
    }
    return 0;
}

/* The mark stride for the next span: the base stride, or more so that one
 * sample spans at least CB_SAMPLE_SPAN by the smaller of two estimates of
 * the time per operation (the warmup's, which its first call inflates, and
 * the previous size's when this size is no smaller), agreed across ranks.
 * A low estimate only means fewer samples. */
static void choose_mark_stride(engine *e, const cb_call *call, double warmup_per_op)
{
    double estimate = e->p->warmup > 0 ? warmup_per_op : HUGE_VAL;
    if (e->prev_op_time > 0 && call->layout.count >= e->prev_count && e->prev_op_time < estimate)
        estimate = e->prev_op_time;
    double agreed = estimate;
    MPI_Allreduce(&estimate, &agreed, 1, MPI_DOUBLE, MPI_MIN, e->comm);
    double per_unit = agreed * e->p->agg;
    int known = isfinite(per_unit) && per_unit > 0;
    /* --budget: as many iterations as fit, at least 1, at most -n; the same
     * on every rank, since the estimate is agreed. */
    e->iters_now = e->p->iters;
    if (e->p->budget_ms > 0 && known) {
        double fit = floor(e->p->budget_ms * 1e-3 / per_unit);
        e->iters_now = fit < 1 ? 1 : fit < e->p->iters ? (int)fit : e->p->iters;
    }
    e->mark_units = e->iters_now;
    e->mark_stride = (e->mark_units + CB_MAX_SAMPLES - 1) / CB_MAX_SAMPLES;
    if (known) {
        double wanted = ceil(CB_SAMPLE_SPAN / per_unit);
        if (wanted > e->mark_stride)
            e->mark_stride = wanted >= e->mark_units ? e->mark_units : (int)wanted;
    }
}

/* The timed iterations without -G: one timed span of iters_now, or with
 * --budget and --stable, rounds: timed spans of ceil(iters_now / CB_ROUNDS)
 * iterations (fewer in the last), until iters_now have run or, after at
 * least CB_STABLE_ROUNDS rounds, every rank finds the medians and the means
 * of its last CB_STABLE_ROUNDS rounds each within --stable percent of their
 * median. The ranks agree on stopping between rounds, outside any timed
 * span, so that all run the same count. Sums the completion and CPU times of the spans
 * and leaves the per-operation samples of every round in e->samples. */
static int time_rounds(engine *e, const cb_collective *coll, const cb_call *call,
                       double *completion, double *cpu, int *nsamples)
{
    const cb_params *p = e->p;
    int rounding = p->budget_ms > 0 && p->stable_pct > 0;
    int nrounds = !rounding ? 1 : e->iters_now < CB_ROUNDS ? e->iters_now : CB_ROUNDS;
    int per_round = (e->iters_now + nrounds - 1) / nrounds;
    int stride = e->mark_stride;
    double medians[CB_ROUNDS], means[CB_ROUNDS];
    int rc = 0;
    *completion = *cpu = 0;
    *nsamples = 0;
    e->iters_done = 0;
    for (int r = 0; rc == 0 && e->iters_done < e->iters_now && r < CB_ROUNDS; r++) {
        int left = e->iters_now - e->iters_done;
        e->mark_units = left < per_round ? left : per_round;
        /* Every round ends with a mark: room for one more per round. */
        e->mark_stride = stride < e->mark_units ? stride : e->mark_units;
        double span = 0, launch = 0, *samples = e->samples + *nsamples;
        int n = 0;
        rc = timed_span(e, coll, call, launch_timed_iterations, &span, &launch);
        if (rc == 0)
            rc = read_samples(e, p->agg, samples, &n);
        if (rc != 0)
            break;
        *completion += span;
        *cpu += launch;
        *nsamples += n;
        e->iters_done += e->mark_units;
        if (!rounding || e->iters_done >= e->iters_now)
            continue;
        /* The round's median sample (its time per operation without marks),
         * and its time per operation, the quantity the tool reports: both
         * must have settled, so that a burst of load inside a round, which a
         * median hides, keeps the measurement going. */
        cb_rank_time round;
        cb_stats_from_samples(samples, n, &round);
        means[r] = span / ((double)e->mark_units * p->agg);
        medians[r] = n > 0 ? round.median : means[r];
        int stable = cb_stats_stable(medians, r + 1, CB_STABLE_ROUNDS, p->stable_pct) &&
                     cb_stats_stable(means, r + 1, CB_STABLE_ROUNDS, p->stable_pct);
        /* A rank that failed in the round waits in an agreement, not in the vote. */
        if (agree(e) != CB_EXIT_OK) {
            rc = -1;
            break;
        }
        MPI_Allreduce(MPI_IN_PLACE, &stable, 1, MPI_INT, MPI_MIN, e->comm);
        if (stable)
            break;
    }
    e->mark_stride = stride;
    return rc;
}

/* Warmup, then the timed iterations; the time per operation on this rank:
 * until completion, or with -C until the launches returned; and the
 * per-iteration statistics (always of completion). */
int time_collective(engine *e, const cb_collective *coll, const cb_call *call,
                    cb_rank_time *t)
{
    const cb_params *p = e->p;
    cb_watchdog_doing(&e->watch, "%s, warmup", e->measuring);
    double warmup_start = MPI_Wtime();
    if (launch_iterations(e, coll, call, p->warmup, 0) != 0)
        return -1;
    if (p->graph_launches == 0)
        choose_mark_stride(e, call, p->warmup > 0 ? (MPI_Wtime() - warmup_start) /
                                                        ((double)p->warmup * p->agg)
                                                  : 0.0);
    cb_watchdog_doing(&e->watch, "%s, timed iterations", e->measuring);
    double completion = 0, cpu = 0, ops;
    int rc, nsamples = 0;
    if (p->graph_launches > 0) {
        rc = time_graph(e, coll, call, &completion, &cpu);
        if (rc == 0)
            rc = read_samples(e, (double)p->iters * p->agg, e->samples, &nsamples);
        e->iters_done = p->iters;
        ops = (double)p->iters * p->agg * p->graph_launches;
    } else {
        rc = time_rounds(e, coll, call, &completion, &cpu, &nsamples);
        ops = (double)e->iters_done * p->agg;
    }
    if (rc != 0)
        return -1;
    t->mean = (p->report_cputime ? cpu : completion) / ops;
    e->prev_op_time = completion / ops;
    e->prev_count = call->layout.count;
    cb_stats_from_samples(e->samples, nsamples, t);
    return 0;
}

double combine_time(engine *e, double mine)
{
    double combined = mine;
    switch (e->p->average) {
    case CB_AVERAGE_RANK0:
        MPI_Bcast(&combined, 1, MPI_DOUBLE, 0, e->gcomm);
        break;
    case CB_AVERAGE_MEAN:
        MPI_Allreduce(&mine, &combined, 1, MPI_DOUBLE, MPI_SUM, e->gcomm);
        combined /= e->gsize;
        break;
    case CB_AVERAGE_MIN:
        MPI_Allreduce(&mine, &combined, 1, MPI_DOUBLE, MPI_MIN, e->gcomm);
        break;
    case CB_AVERAGE_MAX:
        MPI_Allreduce(&mine, &combined, 1, MPI_DOUBLE, MPI_MAX, e->gcomm);
        break;
    }
    return combined;
}
