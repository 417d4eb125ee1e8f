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

void eng_repeat_allocate(engine *e)
{
    if (!e->p->repeat_check)
        return;
    size_t bytes = e->buffer_bytes > 0 ? e->buffer_bytes : 1;
    /* Where the backend compares in its own memory, the reference is one
     * of its buffers. */
    if (e->b->repeat_on_device) {
        if (e->ops->alloc(e->b, bytes, &e->repeat_ref) != 0) {
            e->repeat_ref = NULL;
            cb_status_set(&e->st, CB_EXIT_RUNTIME, "-B: the first launch's output: %s",
                          e->b->error);
        }
        return;
    }
    e->repeat_ref = malloc(bytes);
    if (e->repeat_ref == NULL)
        cb_status_set(&e->st, CB_EXIT_RUNTIME, "-B: cannot allocate %zu bytes of host memory "
                      "for the first launch's output", e->buffer_bytes);
}

void eng_repeat_free(engine *e)
{
    if (e->repeat_ref != NULL && e->b->repeat_on_device)
        e->ops->free(e->b, e->repeat_ref);
    else
        free(e->repeat_ref);
    e->repeat_ref = NULL;
}

void eng_repeat_note(engine *e)
{
    if (!e->p->repeat_check || e->p->ncollectives == 0)   /* the scan alone: a note says so */
        return;
    eng_note(e, "-B: each launch's output is compared bit for bit with the first launch's of its "
            "size and placement, %s, between launches and outside the timed spans: each timed "
            "launch is its own span, waited for and preceded by a barrier; in place, the "
            "input is written again before each launch (iteration, with -m)",
         e->b->repeat_on_device ? "on the device (a kernel counts the differing elements)"
                                : "in host memory");
    eng_note(e, "-B: data movement and integer reductions must repeat; floating-point reductions "
            "must where the library keeps one reduction order, and %s, so a floating-point "
            "reduction alone unrepeatable may be the library's order, not corruption",
         e->ops->repeat_promise != NULL ? e->ops->repeat_promise : "not said");
    /* NCCL asks a tuner plugin each launch: one that answers differently
     * for one size changes the algorithm, and so the reduction order. */
    const char *tuner = getenv("NCCL_TUNER_PLUGIN");
    if (strstr(e->ops->name, "nccl") != NULL && tuner != NULL && tuner[0] != '\0')
        eng_note(e, "-B: NCCL_TUNER_PLUGIN=%s: a tuner that picks another algorithm between "
                "launches of one size makes floating-point reductions differ", tuner);
}

int eng_repeat_start(engine *e, const cb_collective *coll, const cb_call *call, int size_index,
                 int in_place)
{
    e->repeat_spans = e->repeat_on = e->repeat_refill = e->repeat_kept = 0;
    e->repeat_checked = e->repeat_bad = e->repeat_elements = 0;
    if (!e->p->repeat_check || e->ops->repeat_check == NULL ||
        (coll->flags & (CB_COLL_NO_DATA | CB_COLL_COMM)))
        return 0;
    /* Every placement that moves data is timed the same way under -B,
     * compared or not, so that its figures compare with each other. */
    e->repeat_spans = 1;
    /* The input every launch reads: the pattern the timed launches of
     * --check-timed read. Out of place it is written once (no launch
     * changes it); in place, a launch overwrites its input, so it is
     * written again before each. No pattern for the type and reduction:
     * out of place the buffers' contents serve as well; in place nothing
     * can be compared. */
    int patterned = eng_check_pattern(e, coll, call, size_index, in_place, -1, &e->repeat_pat) == 0;
    if (in_place && !patterned)
        return 0;
    e->repeat_on = 1;
    e->repeat_refill = in_place;
    if (patterned && !in_place)
        return eng_fill_input(e, coll, call, &e->repeat_pat);
    return 0;
}

int eng_repeat_before(engine *e, const cb_collective *coll, const cb_call *call)
{
    if (!e->repeat_on || !e->repeat_refill)
        return 0;
    return eng_fill_input(e, coll, call, &e->repeat_pat);
}

int eng_repeat_after(engine *e, const cb_call *call)
{
    /* The launch was waited for (repeat_units launches one at a time with
     * a wait), so its output is complete here. */
    if (!e->repeat_on)
        return 0;
    size_t esize = cb_dtype_info_of(call->dtype)->size, differing = 0;
    /* The first launch's output becomes the reference; every later one is
     * compared with it. */
    if (eng_backend_step(e, e->ops->repeat_check(e->b, call->recv, call->layout.recv_count, esize,
                                             e->repeat_ref, e->staging, !e->repeat_kept,
                                             &differing)) != 0)
        return -1;
    if (e->repeat_kept) {
        e->repeat_checked++;
        e->repeat_bad += differing > 0;
        e->repeat_elements += differing;
    }
    e->repeat_kept = 1;
    return 0;
}

void eng_repeat_result(engine *e, cb_result *res)
{
    res->unrepeatable_rank = -1;
    if (!e->p->repeat_check)
        return;
    /* Compared or not is the same on every rank (in place without a
     * pattern is decided alike); the counts add up over the group. */
    unsigned long long mine[2] = {e->repeat_bad, e->repeat_elements}, total[2] = {0, 0};
    unsigned long long checked = e->repeat_checked;
    MPI_Allreduce(mine, total, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, e->gcomm);
    MPI_Allreduce(MPI_IN_PLACE, &checked, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, e->gcomm);
    res->repeat_checked = checked;
    res->unrepeatable = total[0];
    res->unrepeatable_elements = total[1];
    e->unrepeatable_mine += e->repeat_bad;   /* -N: the tally per rank across cycles */
    e->unrepeatable_this_cycle |= e->repeat_bad > 0;
    if (total[0] == 0)
        return;
    /* The lowest rank whose output did not repeat, and its host. */
    int bad = e->repeat_bad > 0 ? e->grank : e->gsize;
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MIN, e->gcomm);
    struct {
        char host[CB_HOSTLEN];
        int rank;
    } report;
    memset(&report, 0, sizeof report);
    snprintf(report.host, sizeof report.host, "%s", e->host);
    report.rank = e->rank;
    MPI_Bcast(&report, (int)sizeof report, MPI_BYTE, bad, e->gcomm);
    res->unrepeatable_rank = report.rank;
    memcpy(res->unrepeatable_host, report.host, sizeof res->unrepeatable_host);
}
