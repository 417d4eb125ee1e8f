/* Verification: fresh inputs, one launch, compare, and agree on the first mismatch. */
#include "engine_int.h"

/* One verification pass on this rank: fresh inputs, one launch, compare. */
static int check_pass(engine *e, const cb_collective *coll, const cb_call *call,
                      const cb_pattern *pat, size_t *wrong, cb_mismatch *first)
{
    size_t esize = cb_dtype_info_of(call->dtype)->size;
    int direct = e->ops->host_accessible;
    void *input = direct ? (void *)call->send : e->staging;
    coll->fill_input(pat, e->grank, call, input);
    if (!direct &&
        backend_step(e, e->ops->upload(e->b, (void *)call->send, input,
                                       call->layout.send_count * esize)) != 0)
        return -1;
    if (backend_step(e, coll->run(e->b, call)) != 0 ||
        backend_step(e, e->ops->wait(e->b)) != 0)
        return -1;
    void *output = direct ? call->recv : e->staging;
    if (!direct &&
        backend_step(e, e->ops->download(e->b, output, call->recv,
                                         call->layout.recv_count * esize)) != 0)
        return -1;
    if (e->corrupt_rank == e->rank && e->corrupt_index < call->layout.recv_count) {
        const cb_dtype_info *info = cb_dtype_info_of(call->dtype);
        double was = info->load(output, e->corrupt_index);
        info->store(output, e->corrupt_index, was == 1.0 ? 2.0 : 1.0);
    }
    cb_mismatch here;
    size_t n = coll->check_output(pat, e->grank, call, output, &here);
    if (n > 0 && *wrong == 0)
        *first = here;
    *wrong += n;
    return 0;
}

/* Verify call with check_passes fresh inputs; fills the check fields of res. */
void verify(engine *e, const cb_collective *coll, const cb_call *call, int size_index,
            cb_result *res)
{
    size_t wrong = 0;
    cb_mismatch first = {0, 0, 0};
    for (int pass = 0; pass < e->p->check_passes; pass++) {
        uint32_t what = ((uint32_t)call->dtype << 8) | (uint32_t)(call->redop + 1) |
                        ((uint32_t)(call->root + 1) << 16);
        cb_pattern pat;
        char why[256];
        /* The sweep checked that the pattern exists for this type and reduction. */
        if (cb_pattern_init(&pat, call->dtype, call->redop, e->gsize,
                            cb_pattern_seed((uint32_t)size_index, (uint32_t)res->in_place,
                                            (uint32_t)pass, what),
                            why, sizeof why) != 0)
            return;
        pat.avg_premultiplied = e->ops->avg_premultiplies;
        if (check_pass(e, coll, call, &pat, &wrong, &first) != 0)
            break;
        res->check_passes = pass + 1;
    }
    if (agree(e) != CB_EXIT_OK)
        return;

    /* Within the group measured (every rank without --split). */
    unsigned long long mine = wrong, total = 0;
    MPI_Allreduce(&mine, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, e->gcomm);
    res->wrong = total;
    if (total == 0)
        return;
    int bad = wrong > 0 ? e->grank : e->gsize;
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MIN, e->gcomm);
    struct {
        cb_mismatch first;
        char host[CB_HOSTLEN];
        int rank;
    } report;
    memset(&report, 0, sizeof report);
    report.first = first;
    memcpy(report.host, e->host, sizeof report.host);
    report.rank = e->rank;
    MPI_Bcast(&report, (int)sizeof report, MPI_BYTE, bad, e->gcomm);
    res->bad_rank = report.rank;
    res->first = report.first;
    memcpy(res->bad_host, report.host, sizeof res->bad_host);
}
