/* Verification: fresh inputs, one launch, compare, and agree on the first mismatch. */
#include "engine_int.h"

/* Compare call's output on this rank with pat, adding to *wrong. */
static int check_output(engine *e, const cb_collective *coll, const cb_call *call,
                        const cb_pattern *pat, size_t *wrong, cb_mismatch *first)
{
    size_t esize = cb_dtype_info_of(call->dtype)->size;
    int direct = e->ops->mem.host_accessible;
    void *output = direct ? call->recv : e->mem.staging;
    if (cb_eng_backend_step(e, cb_eng_copy_out(e, output, call->recv,
                                         call->layout.recv_count * esize)) != 0)
        return -1;
    cb_mismatch here;
    size_t n = coll->check_output(pat, e->groups.grank, call, output, &here);
    if (n > 0 && *wrong == 0)
        *first = here;
    *wrong += n;
    return 0;
}

/* A name as a seed word, the same on every rank (pointers need not be). */
static uint32_t name_word(const char *name)
{
    uint32_t h = 2166136261u;
    for (const char *c = name != NULL ? name : ""; *c != '\0'; c++)
        h = (h ^ (unsigned char)*c) * 16777619u;
    return h;
}

int cb_eng_check_pattern(engine *e, const cb_collective *coll, const cb_call *call, int size_index,
                  int in_place, int pass, cb_pattern *pat)
{
    /* Everything that varies between two checks of one run, so that what
     * one check left in the buffers is never what the next expects. */
    uint32_t what = cb_pattern_seed((uint32_t)call->dtype, (uint32_t)(call->redop + 1),
                                    (uint32_t)(call->root + 1), (uint32_t)e->now.layout);
    uint32_t where = cb_pattern_seed((uint32_t)e->cycle, name_word(coll->name),
                                     name_word(e->now.impl), what);
    char why[256];
    if (cb_pattern_init(pat, call->dtype, call->redop, e->groups.gsize,
                        cb_pattern_seed((uint32_t)size_index, (uint32_t)in_place, (uint32_t)pass,
                                        where),
                        why, sizeof why) != 0)
        return -1;
    pat->avg_premultiplied = e->ops->avg_premultiplies;
    return 0;
}

int cb_eng_fill_input(engine *e, const cb_collective *coll, const cb_call *call,
                      const cb_pattern *pat)
{
    size_t esize = cb_dtype_info_of(call->dtype)->size;
    size_t recv_bytes = call->layout.recv_count * esize;
    int direct = e->ops->mem.host_accessible;
    /* Poison first: in place, the input then lies over its part. A device
     * buffer gets it through the backend's copy from host memory. */
    void *poison = direct ? call->recv : e->mem.staging;
    cb_pattern_poison(call->dtype, poison, call->layout.recv_count);
    if (cb_eng_backend_step(e, cb_eng_copy_in(e, call->recv, poison, recv_bytes)) != 0)
        return -1;
    void *input = direct ? (void *)call->send : e->mem.staging;
    coll->fill_input(pat, e->groups.grank, call, input);
    if (cb_eng_backend_step(e, cb_eng_copy_in(e, (void *)call->send, input,
                                        call->layout.send_count * esize)) != 0)
        return -1;
    return 0;
}

/* One verification pass on this rank: fresh inputs, one launch, compare. */
static int check_pass(engine *e, const cb_collective *coll, const cb_call *call,
                      const cb_pattern *pat, size_t *wrong, cb_mismatch *first)
{
    if (cb_eng_fill_input(e, coll, call, pat) != 0)
        return -1;
    /* Grouped as the timed launches are, so that what a group defers to
     * its end is checked too; one operation, since a second in place would
     * change the input. */
    int grouped = cb_eng_launches_grouped(e, coll, call);
    if (grouped && cb_eng_backend_step(e, e->ops->launch.group_start(e->b)) != 0)
        return -1;
    int rc = cb_eng_backend_step(e, coll->run(e->b, call));
    if (grouped) {
        int end = e->ops->launch.group_end(e->b);
        if (rc == 0)
            rc = cb_eng_backend_step(e, end);
    }
    if (rc != 0 || cb_eng_backend_step(e, e->ops->wait(e->b)) != 0)
        return -1;
    return check_output(e, coll, call, pat, wrong, first);
}

/* Verify call with check_passes fresh inputs, after the output of the last
 * timed iteration, on its slice of the buffers, when timed is that launch
 * (--check-timed; NULL without); fills the check fields of res. */
void cb_eng_verify(engine *e, const cb_collective *coll, const cb_call *call, int size_index,
                cb_result *res, const cb_call *timed)
{
    size_t wrong = 0;
    cb_mismatch first = {0, 0, 0};
    cb_pattern pat;
    /* The sweep checked that the pattern exists for this type and reduction. */
    int failed = timed != NULL && (cb_eng_check_pattern(e, coll, timed, size_index, 0, -1, &pat) != 0 ||
                                   check_output(e, coll, timed, &pat, &wrong, &first) != 0);
    for (int pass = 0; pass < e->p->verify.check_passes && !failed; pass++) {
        if (cb_eng_check_pattern(e, coll, call, size_index, res->in_place, pass, &pat) != 0)
            return;
        if (check_pass(e, coll, call, &pat, &wrong, &first) != 0)
            break;
        res->check_passes = pass + 1;
    }
    if (cb_eng_agree(e) != CB_EXIT_OK)
        return;

    /* Within the group measured (every rank without --split). */
    unsigned long long mine = wrong, total = 0;
    cb_eng_features_count(e, ENG_FAULT_WRONG, mine);   /* the -N tally */
    cb_ctl_allreduce(e->groups.gcomm, &mine, &total, 1, CB_CTL_U64, CB_CTL_SUM);
    res->wrong = total;
    if (total == 0)
        return;
    int bad = wrong > 0 ? e->groups.grank : e->groups.gsize;
    cb_ctl_allreduce(e->groups.gcomm, CB_CTL_IN_PLACE, &bad, 1, CB_CTL_INT, CB_CTL_MIN);
    struct {
        cb_mismatch first;
        char host[CB_HOSTLEN];
        int rank;
    } report;
    memset(&report, 0, sizeof report);
    report.first = first;
    memcpy(report.host, e->host, sizeof report.host);
    report.rank = e->rank;
    cb_ctl_bcast(e->groups.gcomm, &report, sizeof report, bad);
    res->bad_rank = report.rank;
    res->first = report.first;
    memcpy(res->bad_host, report.host, sizeof res->bad_host);
}
