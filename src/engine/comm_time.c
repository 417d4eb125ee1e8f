/*
 * -o comm_init: the time to make a communicator, each way the backend has
 * (cb_comm_op: creation, split, shrink, grow), one row per way. Every rank
 * times -w untimed and -n timed makings on its own clock; the row's time
 * combines the ranks' means as -a says, and its spread gives the min,
 * median and max across ranks with the slowest rank and host, as for any
 * collective. A rank a way leaves out (shrink's) is left out of the figures.
 */
#include "engine_int.h"

/* The time of one way on this rank: mean and per-iteration statistics in
 * *t (NaN where this rank takes no part). 0, 1 when the backend lacks the
 * way (on every rank), -1 on failure (e->st set). */
static int time_one_way(engine *e, cb_comm_op op, cb_rank_time *t)
{
    const cb_params *p = e->p;
    int n = p->sizes.iters > 0 ? p->sizes.iters : 1;
    double *samples = calloc((size_t)n, sizeof *samples);
    int oom = samples == NULL, any_oom = 0;
    cb_ctl_allreduce(e->groups.gcomm, &oom, &any_oom, 1, CB_CTL_INT, CB_CTL_MAX);
    if (any_oom) {
        free(samples);
        cb_status_set(&e->st, CB_EXIT_RUNTIME, "out of memory for %d comm_init samples", n);
        return -1;
    }
    int rc = 0, taken = 0;
    double seconds = NAN;
    cb_watchdog_doing(&e->safety.watch, "comm_init %s, warmup", cb_comm_op_name(op));
    for (int i = 0; i < p->sizes.warmup && rc == 0; i++) {
        rc = e->ops->comm_time(e->b, op, &seconds);
        cb_watchdog_tick(&e->safety.watch);
    }
    cb_watchdog_doing(&e->safety.watch, "comm_init %s, timed makings", cb_comm_op_name(op));
    cb_watchdog_loop(&e->safety.watch, n);
    for (int i = 0; i < n && rc == 0; i++) {
        rc = e->ops->comm_time(e->b, op, &seconds);
        cb_watchdog_at(&e->safety.watch, i);
        if (rc == 0 && !isnan(seconds))
            samples[taken++] = seconds;
    }
    memset(t, 0, sizeof *t);
    t->mean = NAN;
    if (rc == 0 && taken > 0) {
        double sum = 0;
        for (int i = 0; i < taken; i++)
            sum += samples[i];
        t->mean = sum / taken;
        cb_stats_from_samples(samples, taken, t);
    } else if (rc == 0) {
        cb_stats_from_samples(samples, 0, t);
    }
    free(samples);
    if (rc < 0)
        cb_status_set(&e->st, CB_EXIT_RUNTIME, "comm_init %s: %s", cb_comm_op_name(op),
                      e->b->error);
    return rc;
}

/* The row's time from every rank's mean, as -a says, over the ranks that
 * took part. */
static double combined(engine *e, double mine)
{
    double in = isnan(mine) ? 0 : mine, out = 0;
    int part = !isnan(mine), parts = 0;
    cb_ctl_allreduce(e->groups.gcomm, &part, &parts, 1, CB_CTL_INT, CB_CTL_SUM);
    switch (e->p->timing.average) {
    case CB_AVERAGE_RANK0:
        out = mine;
        cb_ctl_bcast(e->groups.gcomm, &out, sizeof(double), 0);
        return out;
    case CB_AVERAGE_MEAN:
        cb_ctl_allreduce(e->groups.gcomm, &in, &out, 1, CB_CTL_DOUBLE, CB_CTL_SUM);
        return parts > 0 ? out / parts : NAN;
    case CB_AVERAGE_MIN:
        in = isnan(mine) ? INFINITY : mine;
        cb_ctl_allreduce(e->groups.gcomm, &in, &out, 1, CB_CTL_DOUBLE, CB_CTL_MIN);
        return parts > 0 ? out : NAN;
    case CB_AVERAGE_MAX:
        cb_ctl_allreduce(e->groups.gcomm, &in, &out, 1, CB_CTL_DOUBLE, CB_CTL_MAX);
        return parts > 0 ? out : NAN;
    }
    return NAN;
}

/* The collective whose rows this feature measures; off where -o does not
 * select one. */
typedef struct comm_time_state {
    const cb_collective *coll;
} comm_time_state;

static void *comm_time_setup(engine *e)
{
    const cb_collective *coll = NULL;
    for (int i = 0; i < e->p->sizes.ncollectives && coll == NULL; i++)
        if (e->p->sizes.collectives[i]->flags & CB_COLL_COMM)
            coll = e->p->sizes.collectives[i];
    if (coll == NULL)
        return NULL;
    comm_time_state *c = calloc(1, sizeof *c);
    if (c == NULL) {
        cb_status_set(&e->st, CB_EXIT_RUNTIME, "out of memory for -o comm_init");
        return NULL;
    }
    c->coll = coll;
    return c;
}

static void comm_time_teardown(engine *e, void *state)
{
    (void)e;
    free(state);
}

static int measure_comm_ways(engine *e, const cb_collective *coll, cb_dtype dtype)
{
    if (e->p->verify.check_passes > 0)
        cb_eng_note(e, "comm_init makes communicators: one row per way, not verified");
    e->now.at_largest = 0;   /* --min-busbw: no bandwidth to gate */
    for (int op = 0; op < CB_COMM_OPS; op++) {
        cb_rank_time mine;
        int rc = time_one_way(e, (cb_comm_op)op, &mine);
        if (rc > 0) {
            cb_eng_note(e, "comm_init %s skipped: %s", cb_comm_op_name((cb_comm_op)op),
                        e->b->error);
            continue;
        }
        if (cb_eng_agree(e) != CB_EXIT_OK)
            return e->st.code;
        cb_result res;
        memset(&res, 0, sizeof res);
        res.collective = coll;
        res.dtype = dtype;
        res.redop = CB_REDOP_NONE;
        res.root = -1;
        res.warmup_iters = e->p->sizes.warmup;
        res.iters = e->p->sizes.iters > 0 ? e->p->sizes.iters : 1;
        res.split.group = e->p->sizes.split.kind != CB_SPLIT_NONE ? e->groups.group : -1;
        res.split.group_ranks = e->groups.gsize;
        res.scan.round = -1;
        snprintf(res.comm_op, sizeof res.comm_op, "%s", cb_comm_op_name((cb_comm_op)op));
        res.seconds = combined(e, mine.mean);
        int slowest_rank = cb_eng_gather_rank_times(e, &mine, &res);
        cb_eng_stamp_result(e, &res);
        if (e->p->sizes.split.kind != CB_SPLIT_NONE) {
            if (cb_eng_emit_split(e, coll, &res, slowest_rank, 1) != CB_EXIT_OK)
                return e->st.code;
            continue;
        }
        cb_eng_emit_results(e, &res, 1, 1);
        if (cb_eng_agree(e) != CB_EXIT_OK)
            return e->st.code;
    }
    return CB_EXIT_OK;
}

static int comm_time_sweep(engine *e, void *state, const cb_collective *coll, cb_dtype dtype,
                           int *rc)
{
    (void)state;
    if (!(coll->flags & CB_COLL_COMM))
        return 0;
    *rc = measure_comm_ways(e, coll, dtype);
    return 1;
}

const cb_eng_feature cb_eng_feature_comm_time = {
    .name = "-o comm_init",
    .setup = comm_time_setup,
    .sweep = comm_time_sweep,
    .teardown = comm_time_teardown,
};
