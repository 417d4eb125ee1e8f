/*
 * -B/--repeat-check: every launch of a measurement gives the same input the
 * same output, so each launch's output is compared bit for bit with the
 * first launch's (through the backend's repeat_check, outside any timed
 * span), and the launches whose output differs are counted per rank,
 * apart from the reference check's wrong elements. A fault that strikes
 * one launch in many is caught here where -c, checking fresh launches of
 * its own, sees nothing.
 */
#include "engine_int.h"

/* -B's state, for the whole run: the first launch's output of the
 * measurement in progress (buffer_bytes, in the backend's memory where it
 * compares there, else host memory), whether its launches are compared,
 * whether the input is written again before each (in place), the pattern
 * written, and this rank's counts for it. */
typedef struct repeat_state {
    void *ref;
    int on;
    int refill;
    int kept;
    cb_pattern pat;
    unsigned long long checked, bad, elements;
} repeat_state;

static void repeat_teardown(engine *e, void *state)
{
    repeat_state *r = state;
    if (r->ref != NULL && e->b->repeat_on_device)
        e->ops->mem.free(e->b, r->ref);
    else
        free(r->ref);
    free(r);
}

static void *repeat_setup(engine *e)
{
    if (!e->p->verify.repeat_check)
        return NULL;
    repeat_state *r = calloc(1, sizeof *r);
    if (r == NULL)
        cb_status_set(&e->st, CB_EXIT_RUNTIME, "-B: out of memory");
    return r;
}

static void repeat_buffers(engine *e, void *state)
{
    repeat_state *r = state;
    size_t bytes = e->mem.buffer_bytes > 0 ? e->mem.buffer_bytes : 1;
    /* Where the backend compares in its own memory, the reference is one
     * of its buffers. */
    if (e->b->repeat_on_device) {
        if (e->ops->mem.alloc(e->b, bytes, &r->ref) != 0) {
            r->ref = NULL;
            cb_status_set(&e->st, CB_EXIT_RUNTIME, "-B: the first launch's output: %s",
                          e->b->error);
        }
        return;
    }
    r->ref = malloc(bytes);
    if (r->ref == NULL)
        cb_status_set(&e->st, CB_EXIT_RUNTIME, "-B: cannot allocate %zu bytes of host memory "
                      "for the first launch's output", e->mem.buffer_bytes);
}

static void repeat_preamble(engine *e, void *state)
{
    (void)state;
    if (e->p->sizes.ncollectives == 0)   /* the scan alone: a note says so */
        return;
    cb_eng_note(e, "-B: each launch's output is compared bit for bit with the first launch's of its "
            "size and placement, %s, between launches and outside the timed spans: each timed "
            "launch is its own span, waited for and preceded by a barrier; in place, the "
            "input is written again before each launch (iteration, with -m)",
         e->b->repeat_on_device ? "on the device (a kernel counts the differing elements)"
                                : "in host memory");
    cb_eng_note(e, "-B: data movement and integer reductions must repeat; floating-point reductions "
            "must where the library keeps one reduction order, and %s, so a floating-point "
            "reduction alone unrepeatable may be the library's order, not corruption",
         e->ops->repeat_promise != NULL ? e->ops->repeat_promise : "not said");
    /* NCCL asks a tuner plugin each launch: one that answers differently
     * for one size changes the algorithm, and so the reduction order. */
    const char *tuner = getenv("NCCL_TUNER_PLUGIN");
    if (strstr(e->ops->name, "nccl") != NULL && tuner != NULL && tuner[0] != '\0')
        cb_eng_note(e, "-B: NCCL_TUNER_PLUGIN=%s: a tuner that picks another algorithm between "
                "launches of one size makes floating-point reductions differ", tuner);
}

static int repeat_measure_begin(engine *e, void *state, const cb_eng_measure *m, int *singly)
{
    repeat_state *r = state;
    const cb_collective *coll = m->coll;
    r->on = r->refill = r->kept = 0;
    r->checked = r->bad = r->elements = 0;
    if (e->ops->repeat_check == NULL || (coll->flags & (CB_COLL_NO_DATA | CB_COLL_COMM)))
        return 0;
    /* Every placement that moves data is timed the same way under -B,
     * compared or not, so that its figures compare with each other. */
    *singly = 1;
    /* The input every launch reads: the pattern the timed launches of
     * --check-timed read. Out of place it is written once (no launch
     * changes it); in place, a launch overwrites its input, so it is
     * written again before each. No pattern for the type and reduction:
     * out of place the buffers' contents serve as well; in place nothing
     * can be compared. */
    int patterned = cb_eng_check_pattern(e, coll, m->call, m->size_index, m->in_place, -1,
                                         &r->pat) == 0;
    if (m->in_place && !patterned)
        return 0;
    r->on = 1;
    r->refill = m->in_place;
    if (patterned && !m->in_place)
        return cb_eng_fill_input(e, coll, m->call, &r->pat);
    return 0;
}

static int repeat_before_launch(engine *e, void *state, const cb_eng_measure *m)
{
    repeat_state *r = state;
    if (!r->on || !r->refill)
        return 0;
    return cb_eng_fill_input(e, m->coll, m->call, &r->pat);
}

static int repeat_after_launch(engine *e, void *state, const cb_eng_measure *m)
{
    repeat_state *r = state;
    const cb_call *call = m->call;
    /* The launch was waited for (the core launches singly with a wait), so
     * its output is complete here. */
    if (!r->on)
        return 0;
    size_t esize = cb_dtype_info_of(call->dtype)->size, differing = 0;
    /* The first launch's output becomes the reference; every later one is
     * compared with it. */
    if (cb_eng_backend_step(e, e->ops->repeat_check(e->b, call->recv, call->layout.recv_count, esize,
                                                    r->ref, e->mem.staging, !r->kept,
                                                    &differing)) != 0)
        return -1;
    if (r->kept) {
        r->checked++;
        r->bad += differing > 0;
        r->elements += differing;
    }
    r->kept = 1;
    return 0;
}

static void repeat_on_result(engine *e, void *state, cb_result *res)
{
    repeat_state *r = state;
    /* Compared or not is the same on every rank (in place without a
     * pattern is decided alike); the counts add up over the group. */
    unsigned long long mine[2] = {r->bad, r->elements}, total[2] = {0, 0};
    unsigned long long checked = r->checked;
    cb_ctl_allreduce(e->groups.gcomm, mine, total, 2, CB_CTL_U64, CB_CTL_SUM);
    cb_ctl_allreduce(e->groups.gcomm, CB_CTL_IN_PLACE, &checked, 1, CB_CTL_U64, CB_CTL_MAX);
    res->repeat.repeat_checked = checked;
    res->repeat.unrepeatable = total[0];
    res->repeat.unrepeatable_elements = total[1];
    cb_eng_features_count(e, ENG_FAULT_UNREPEATABLE, r->bad);   /* the -N tally */
    if (total[0] == 0)
        return;
    /* The lowest rank whose output did not repeat, and its host. */
    int bad = r->bad > 0 ? e->groups.grank : e->groups.gsize;
    cb_ctl_allreduce(e->groups.gcomm, CB_CTL_IN_PLACE, &bad, 1, CB_CTL_INT, CB_CTL_MIN);
    struct {
        char host[CB_HOSTLEN];
        int rank;
    } report;
    memset(&report, 0, sizeof report);
    snprintf(report.host, sizeof report.host, "%s", e->host);
    report.rank = e->rank;
    cb_ctl_bcast(e->groups.gcomm, &report, sizeof report, bad);
    res->repeat.unrepeatable_rank = report.rank;
    memcpy(res->repeat.unrepeatable_host, report.host, sizeof res->repeat.unrepeatable_host);
}

const cb_eng_feature cb_eng_feature_repeat = {
    .name = "-B",
    .setup = repeat_setup,
    .buffers = repeat_buffers,
    .preamble = repeat_preamble,
    .measure_begin = repeat_measure_begin,
    .before_launch = repeat_before_launch,
    .after_launch = repeat_after_launch,
    .on_result = repeat_on_result,
    .teardown = repeat_teardown,
};
