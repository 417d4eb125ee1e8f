/* The sweep: collectives, layouts, types, reductions, roots, sizes and placements. */
#include "engine_int.h"
#include "common/format.h"

/* --rotate: slices start this many bytes apart at least, cudaMalloc's
 * alignment. */
#define CB_ROTATE_ALIGN 256u

/* How far cb_eng_check_sizes_fit looks for a size to suggest. */
#define CB_FIT_SEARCH 65536u

/* One measurement: one size, one placement. Returns the agreed status. */
static int measure_size(engine *e, const cb_collective *coll, cb_call *call, int size_index,
                        uint64_t bytes, int in_place, int last_half, int checkable)
{
    size_t esize = cb_dtype_info_of(call->dtype)->size;
    const cb_layout *l = &call->layout;
    /* -u: both buffers start whole elements past their aligned allocation. */
    char *send = (char *)e->mem.send + (size_t)e->p->sizes.unalign * esize;
    char *recv = (char *)e->mem.recv + (size_t)e->p->sizes.unalign * esize;
    call->recv = recv;
    call->send = send;
    if (in_place) {
        /* One buffer holds both sides, as the collective's layout places them. */
        size_t rank = (size_t)e->groups.grank;
        call->send = recv + (l->inplace_offset + rank * l->inplace_send_stride) * esize;
        call->recv = recv + rank * l->inplace_recv_stride * esize;
    }

    cb_result res;
    memset(&res, 0, sizeof res);
    res.collective = coll;
    res.dtype = call->dtype;
    res.redop = e->now.row_labelled ? e->now.row_redop : call->redop;
    res.root = call->root;
    res.bytes = bytes;
    res.count = call->layout.count;
    res.in_place = in_place;
    res.warmup_iters = e->p->sizes.warmup;
    res.split.group = e->p->sizes.split.kind != CB_SPLIT_NONE ? e->groups.group : -1;
    res.layout = call->layout.rows != 0 ? CB_LAYOUT_COL : CB_LAYOUT_ROW;
    res.rows = call->layout.rows;
    res.cols = (size_t)e->groups.gsize * call->layout.width;
    res.split.group_ranks = e->groups.gsize;
    res.impl = e->now.impl;
    if (coll->layout_traffic != NULL)
        cb_traffic_format(call->traffic, res.traffic_matrix, sizeof res.traffic_matrix);

    snprintf(e->now.measuring, sizeof e->now.measuring, "%s %s %s root %d, %llu B %s", coll->name,
             cb_dtype_info_of(call->dtype)->name, cb_redop_name(call->redop), call->root,
             (unsigned long long)bytes, in_place ? "in-place" : "out-of-place");
    cb_watchdog_subject(&e->safety.watch, coll->name, bytes);
    /* --rotate, as nccl-tests' startColl: operation k of a loop runs
     * max(send, recv) bytes times k % steps past the buffers' start, as many
     * steps as the buffers hold, so that no launch finds the last one's data
     * in the GPU's cache. Unlike nccl-tests, the step is rounded up to
     * cudaMalloc's 256 bytes, so that every slice is aligned as the first
     * (-u keeps its meaning). -B compares every launch where the first ran. */
    size_t unit = (l->send_count > l->recv_count ? l->send_count : l->recv_count) * esize;
    unit = (unit + CB_ROTATE_ALIGN - 1) / CB_ROTATE_ALIGN * CB_ROTATE_ALIGN;
    e->now.rotate_unit = unit;
    e->now.rotate_steps =
        e->p->timing.rotate && !e->p->verify.repeat_check && unit > 0 ? e->mem.buffer_bytes / unit : 1;
    if (e->now.rotate_steps == 0)
        e->now.rotate_steps = 1;
    e->now.rotate_last = 0;
    /* --check-timed: out of place, the timed iterations read checkable input
     * they never change, written on every slice they may run on, and the
     * last one's output is checked where it landed. */
    int timed = checkable && !in_place && e->p->verify.check_timed;
    cb_pattern timed_pat;
    if (timed && cb_eng_check_pattern(e, coll, call, size_index, 0, -1, &timed_pat) == 0)
        for (size_t k = 0; k < e->now.rotate_steps; k++) {
            cb_call slice = *call;
            slice.send = (const char *)call->send + k * unit;
            slice.recv = (char *)call->recv + k * unit;
            if (cb_eng_fill_input(e, coll, &slice, &timed_pat) != 0)
                break;
        }
    cb_rank_time mine;
    memset(&mine, 0, sizeof mine);
    /* The features' start (-B: what the launches read, and whether their
     * outputs are compared). A failure here is agreed on after the
     * launches, as every rank's launches and plan must match. */
    cb_eng_measure m = {.coll = coll, .call = call, .size_index = size_index, .in_place = in_place};
    cb_eng_features_measure_begin(e, &m, &e->timing.launch_singly);
    cb_eng_time_collective(e, coll, call, &mine);
    if (cb_eng_agree(e) != CB_EXIT_OK)
        return e->st.code;
    res.repeat.unrepeatable_rank = -1;   /* until a feature finds one */
    cb_eng_features_on_result(e, &res);
    /* the same on every rank */
    res.iters = cb_iter_plan_done(&e->timing.plan, e->timing.spans_run);
    res.seconds = cb_eng_combine_time(e, mine.mean);
    int slowest_rank = cb_eng_gather_rank_times(e, &mine, &res);   /* in comm */
    if (e->timing.raw_samples != NULL)
        cb_ctl_gather(e->groups.gcomm, e->timing.raw_samples,
                      (size_t)e->timing.samples_room * sizeof(double), e->timing.rank_samples, 0);
    if (e->groups.grank == 0) {
        res.rank_samples = e->timing.rank_samples;
        res.samples_room = e->timing.samples_room;
    }
    res.algbw = res.seconds > 0 ? (double)bytes / 1e9 / res.seconds : 0;
    res.busbw = res.algbw * coll->busbw_factor(e->groups.gsize);

    if (checkable) {
        cb_watchdog_doing(&e->safety.watch, "%s, verification", e->now.measuring);
        cb_call last = *call;
        last.send = (const char *)call->send + e->now.rotate_last;
        last.recv = (char *)call->recv + e->now.rotate_last;
        cb_eng_verify(e, coll, call, size_index, &res, timed ? &last : NULL);
    }
    if (e->st.code != CB_EXIT_OK)
        return e->st.code;
    cb_eng_stamp_result(e, &res);
    if (e->p->sizes.split.kind != CB_SPLIT_NONE)
        return cb_eng_emit_split(e, coll, &res, slowest_rank, last_half);

    e->sum.wrong += res.wrong;
    e->sum.unrepeatable += res.repeat.unrepeatable;
    cb_eng_emit_results(e, &res, 1, last_half);
    return cb_eng_agree(e);
}

/* Whether every rank's backend runs this type and reduction; a note when not. */
static int supported_everywhere(engine *e, const cb_collective *coll, cb_dtype dtype,
                                cb_redop redop)
{
    char why[256] = "";
    if (coll->accepts != NULL && !coll->accepts(redop, why, sizeof why)) {
        cb_eng_note(e, "skipped %s %s %s: %s", coll->name, cb_dtype_info_of(dtype)->name,
             cb_redop_name(redop), why);
        return 0;
    }
    int supported = e->ops->supports(e->b, dtype, redop, why, sizeof why), everywhere = 0;
    cb_ctl_allreduce(e->comm, &supported, &everywhere, 1, CB_CTL_INT, CB_CTL_MIN);
    if (!everywhere)
        cb_eng_note(e, "skipped %s %s %s: %s", coll->name, cb_dtype_info_of(dtype)->name,
             cb_redop_name(redop), why[0] ? why : "not supported on some rank");
    return everywhere;
}

/* coll's layout of bytes of elements of esize over this rank's group: 0 when
 * every rank gets whole elements. */
static int lay_out(const engine *e, const cb_collective *coll, size_t esize, uint64_t bytes,
                   cb_layout *out)
{
    return coll->layout_traffic != NULL
               ? coll->layout_traffic(&e->p->sizes.a2av_matrix, (size_t)bytes, esize, e->groups.gsize,
                                      out)
               : coll->layout((size_t)bytes, esize, e->groups.gsize, out);
}

/* Whether some selected collective and type lays out bytes over the group. */
static int some_row_at(const engine *e, uint64_t bytes)
{
    const cb_params *p = e->p;
    for (int c = 0; c < p->sizes.ncollectives; c++) {
        const cb_collective *coll = p->sizes.collectives[c];
        if (coll->flags & CB_COLL_NO_DATA)
            return 1;
        for (int t = 0; t < p->sizes.ndtypes; t++) {
            cb_layout layout;
            if (lay_out(e, coll, cb_dtype_info_of(p->sizes.dtypes[t])->size, bytes, &layout) == 0)
                return 1;
        }
    }
    return 0;
}

void cb_eng_check_sizes_fit(engine *e)
{
    const cb_params *p = e->p;
    /* The parser saw the types but not the rank count: a size can hold an
     * element yet give some rank none, and then every row is skipped. */
    int fits = p->scan.parts != 0;
    for (int s = 0; s < e->nsizes && !fits; s++)
        fits = some_row_at(e, e->sizes[s]);
    /* A group that can measure nothing stops every group: each skips the
     * sizes that any group skips. */
    cb_ctl_allreduce(e->comm, CB_CTL_IN_PLACE, &fits, 1, CB_CTL_INT, CB_CTL_MIN);
    if (fits)
        return;
    /* The smallest size that would measure something in every group (none
     * found: UINT64_MAX, and no suggestion). */
    uint64_t least = UINT64_MAX;
    for (uint64_t bytes = 1; bytes <= CB_FIT_SEARCH && least == UINT64_MAX; bytes++)
        if (some_row_at(e, bytes))
            least = bytes;
    cb_ctl_allreduce(e->comm, CB_CTL_IN_PLACE, &least, 1, CB_CTL_U64, CB_CTL_MAX);
    char min_text[32], max_text[32], least_text[64] = "";
    cb_format_bytes(p->sizes.min_bytes, min_text, sizeof min_text);
    cb_format_bytes(p->sizes.max_bytes, max_text, sizeof max_text);
    if (least != UINT64_MAX)
        snprintf(least_text, sizeof least_text, " to at least %llu", (unsigned long long)least);
    char ranks[64];
    if (p->sizes.split.kind != CB_SPLIT_NONE)
        snprintf(ranks, sizeof ranks, "every rank of every --split group");
    else if (e->groups.gsize == 1)
        snprintf(ranks, sizeof ranks, "the one rank");
    else
        snprintf(ranks, sizeof ranks, "each of the %d ranks", e->groups.gsize);
    cb_status_set(&e->st, CB_EXIT_USAGE,
                  "-b/-e: no size from %s to %s bytes gives %s a whole element in any "
                  "collective and type selected, so nothing would be measured; raise -e%s",
                  min_text, max_text, ranks, least_text);
}

/* Every size for one (collective, type, reduction, root). */
int cb_eng_sweep(engine *e, const cb_collective *coll, cb_dtype dtype, cb_redop redop, int root)
{
    const cb_dtype_info *info = cb_dtype_info_of(dtype);
    int measured_rc;   /* a feature's own measurement of coll (-o comm_init) */
    if (cb_eng_features_sweep(e, coll, dtype, &measured_rc))
        return measured_rc;
    if (coll->flags & CB_COLL_NO_DATA) {
        /* One row: no size to sweep, no placement, nothing to verify. */
        cb_call call = {.dtype = dtype, .redop = redop, .root = root, .state = e->now.coll_state};
        if (coll->layout(0, info->size, e->groups.gsize, &call.layout) != 0)
            return CB_EXIT_OK;
        if (e->p->verify.check_passes > 0)
            cb_eng_note(e, "%s moves no data: one row at size 0, not verified", coll->name);
        e->now.at_largest = 0;   /* --min-busbw: no bandwidth to gate */
        return measure_size(e, coll, &call, 0, 0, 0, 1, 0);
    }
    char why[256] = "";
    cb_pattern probe;
    int checkable = e->p->verify.check_passes > 0 &&
                    cb_pattern_init(&probe, dtype, redop, e->groups.gsize, 0, why, sizeof why) == 0;
    if (e->p->sizes.split.kind != CB_SPLIT_NONE)
        cb_ctl_allreduce(e->comm, CB_CTL_IN_PLACE, &checkable, 1, CB_CTL_INT, CB_CTL_MIN);
    if (e->p->verify.check_passes > 0 && !checkable)
        cb_eng_note(e, "%s %s %s not checked: %s", coll->name, info->name, cb_redop_name(redop),
                    why);
    cb_eng_progress_sweep_begins(e);
    for (int s = 0; s < e->nsizes; s++) {
        cb_call call = {.dtype = dtype, .redop = redop, .root = root, .work = e->mem.work,
                        .state = e->now.coll_state, .traffic = &e->p->sizes.a2av_matrix};
        int fits = lay_out(e, coll, info->size, e->sizes[s], &call.layout) == 0;
        if (fits && e->now.layout == CB_LAYOUT_COL)
            cb_layout_set_columns(&call.layout, e->groups.gsize, coll->column_work);
        /* With --split, every group measures the same sizes. */
        if (e->p->sizes.split.kind != CB_SPLIT_NONE)
            cb_ctl_allreduce(e->comm, CB_CTL_IN_PLACE, &fits, 1, CB_CTL_INT, CB_CTL_MIN);
        if (!fits) {
            cb_eng_note(e, "skipped %s %s %s %llu B: too small to give %s", coll->name, info->name,
                 cb_redop_name(redop), (unsigned long long)e->sizes[s],
                 coll->layout_traffic != NULL ? "every unit of the traffic matrix's weight "
                                                "a whole element"
                                              : "every rank a whole element");
            continue;
        }
        /* The size column is what really moves: whole elements only. */
        size_t largest = call.layout.send_count > call.layout.recv_count
                             ? call.layout.send_count
                             : call.layout.recv_count;
        uint64_t bytes = (uint64_t)largest * info->size;
        /* A column slice is not contiguous, so a column layout has no in-place
         * form: out of place only; nor has alltoallv (CB_COLL_OUT_OF_PLACE). */
        int placements = call.layout.rows != 0 || (coll->flags & CB_COLL_OUT_OF_PLACE) ? 1 : 2;
        e->now.at_largest = s == e->nsizes - 1;
        for (int in_place = 0; in_place < placements; in_place++)
            if (measure_size(e, coll, &call, s, bytes, in_place, in_place == placements - 1,
                        checkable) != CB_EXIT_OK)
                return e->st.code;
        cb_eng_report_progress(e, coll, dtype, redop, s + 1);
    }
    return CB_EXIT_OK;
}

/* Every type, reduction and root of one collective in one layout. */
static int run_combinations(engine *e, const cb_collective *coll)
{
    const cb_params *p = e->p;
    /* Rooted collectives: the -r root, or every rank in turn; else -1. */
    int first_root = -1, last_root = -1;
    if (coll->flags & CB_COLL_ROOTED) {
        first_root = p->sizes.root < 0 ? 0 : p->sizes.root;
        /* With --split, roots every group has. */
        last_root = p->sizes.root < 0 ? e->groups.min_gsize - 1 : p->sizes.root;
    }
    /* Their sendrecv (sendrecv.cu) runs its rows once per -o reduction,
     * each row naming it, though nothing is reduced. */
    int labelled = !(coll->flags & CB_COLL_REDUCES) && p->tests_program != NULL &&
                   strcmp(coll->name, "sendrecv") == 0 && p->sizes.nredops > 0;
    int nredops = (coll->flags & CB_COLL_REDUCES) || labelled ? p->sizes.nredops : 1;
    /* A collective that moves no data is measured once, for the first type. */
    int ndtypes = (coll->flags & CB_COLL_NO_DATA) ? 1 : p->sizes.ndtypes;
    int nroots = last_root - first_root + 1;
    e->now.at.ncombos = ndtypes * nredops * nroots;
    for (int t = 0; t < ndtypes; t++)
        for (int r = 0; r < nredops; r++) {
            cb_redop redop = (coll->flags & CB_COLL_REDUCES) ? p->sizes.redops[r] : CB_REDOP_NONE;
            e->now.at.combo = (t * nredops + r) * nroots;
            e->now.row_labelled = labelled;
            e->now.row_redop = labelled ? p->sizes.redops[r] : CB_REDOP_NONE;
            if (!supported_everywhere(e, coll, p->sizes.dtypes[t], redop))
                continue;
            for (int root = first_root; root <= last_root; root++, e->now.at.combo++)
                if (cb_eng_sweep(e, coll, p->sizes.dtypes[t], redop, root) != CB_EXIT_OK) {
                    e->now.row_labelled = 0;
                    return e->st.code;
                }
        }
    e->now.row_labelled = 0;
    return CB_EXIT_OK;
}

/* One collective in one layout: its table, its set-up, its sweeps. */
static int run_collective(engine *e, const cb_collective *coll, cb_block_layout layout)
{
    e->now.layout = layout;
    e->now.at.pass++;
    e->now.at.combo = 0;
    cb_eng_printers_table_begin(e, coll, layout);
    if (e->now.impl != NULL)
        cb_eng_note(e, "%s runs as %s (--nccl-impl)", coll->name, e->now.impl);
    if (coll->available != NULL && !coll->available(e->ops)) {
        if (coll->needs != NULL)
            cb_eng_note(e, "skipped %s on the %s backend: needs %s", coll->name, e->ops->name,
                 coll->needs);
        else
            cb_eng_note(e, "skipped %s: the %s backend does not implement it", coll->name,
                 e->ops->name);
        return CB_EXIT_OK;
    }
    if (layout == CB_LAYOUT_COL && e->ops->copy2d == NULL) {
        cb_eng_note(e, "skipped %s in column layout: the %s backend has no 2-D copy", coll->name,
             e->ops->name);
        return CB_EXIT_OK;
    }
    if (coll->layout_traffic != NULL) {
        char matrix[64];
        cb_traffic_format(&e->p->sizes.a2av_matrix, matrix, sizeof matrix);
        cb_eng_note(e, "%s: traffic matrix %s (--a2av-matrix); size = the busiest rank's bytes sent "
             "or received; out of place only", coll->name, matrix);
    }
    if (coll->prepare == NULL)
        return run_combinations(e, coll);

    cb_watchdog_doing(&e->safety.watch, "setting up %s's groups", coll->name);
    /* This rank's inner group among the ranks measured together. */
    int color = cb_eng_spec_color(e, &e->p->sizes.hier, "--hier-split", e->groups.gcomm);
    /* A bad colour list stops every rank before the collective set-up. */
    if (cb_eng_agree(e) != CB_EXIT_OK)
        return e->st.code;
    char what[256];
    snprintf(what, sizeof what, "%s inner groups (--hier-split %s)%s", coll->name,
             e->p->sizes.hier.text, e->p->sizes.split.kind != CB_SPLIT_NONE ? ", ranks of split group 0" : "");
    cb_eng_note_groups(e, e->groups.gcomm, what, "", color);
    e->now.coll_state = NULL;
    if (coll->prepare(e->b, color, &e->now.coll_state) != 0)
        cb_status_set(&e->st, CB_EXIT_RUNTIME, "setting up %s failed: %s", coll->name,
                      e->b->error);
    if (cb_eng_agree(e) == CB_EXIT_OK)
        run_combinations(e, coll);
    coll->release(e->now.coll_state, e->st.code != CB_EXIT_OK);
    e->now.coll_state = NULL;
    return e->st.code;
}

/* --nccl-impl: a collective with implementations runs once per entry, on a
 * backend that can choose; the others once, with no implementation named. */
static int run_implementations(engine *e, const cb_collective *coll, cb_block_layout layout)
{
    e->now.impl = NULL;
    if (!(coll->flags & CB_COLL_IMPLS) || e->ops->select_impl == NULL)
        return run_collective(e, coll, layout);
    for (int i = 0; i < e->p->sizes.nimpls; i++) {
        int chosen = e->ops->select_impl(e->b, e->p->sizes.impls[i]);
        if (chosen < 0)   /* checked at start-up on every rank: cannot happen */
            cb_status_set(&e->st, CB_EXIT_RUNTIME, "--nccl-impl %s: %s",
                          cb_impl_name(e->p->sizes.impls[i]), e->b->error);
        if (cb_eng_agree(e) != CB_EXIT_OK)
            return e->st.code;
        e->now.impl = cb_impl_name((cb_impl)chosen);
        if (run_collective(e, coll, layout) != CB_EXIT_OK)
            return e->st.code;
    }
    e->now.impl = NULL;
    return CB_EXIT_OK;
}

int cb_eng_run_collectives(engine *e)
{
    const cb_params *p = e->p;
    e->now.at.ncolls = p->sizes.ncollectives;
    for (int c = 0; c < p->sizes.ncollectives; c++) {
        const cb_collective *coll = p->sizes.collectives[c];
        int layouts = coll->column_work != 0 ? p->sizes.nlayouts : 1;
        int impls = (coll->flags & CB_COLL_IMPLS) && e->ops->select_impl != NULL ? p->sizes.nimpls : 1;
        e->now.at = (run_position){.coll = c, .ncolls = p->sizes.ncollectives, .pass = -1,
                                .npasses = layouts * impls, .ncombos = 1};
        /* Collectives without a column layout run once, in rows. */
        int ran_rows = 0;
        for (int l = 0; l < p->sizes.nlayouts; l++) {
            cb_block_layout layout = p->sizes.layouts[l];
            if (layout == CB_LAYOUT_COL && coll->column_work == 0)
                layout = CB_LAYOUT_ROW;
            if (layout == CB_LAYOUT_ROW && ran_rows++)
                continue;
            if (run_implementations(e, coll, layout) != CB_EXIT_OK)
                return e->st.code;
        }
    }
    return CB_EXIT_OK;
}
