/* Fitting the sizes to memory, and the buffers. */
#include "engine_int.h"

#include "common/format.h"

/* What a run holds per rank, in bytes, for its largest size. */
typedef struct cb_footprint {
    size_t send, recv;  /* the backend's buffers */
    size_t work;        /* --layout col: the column copies' work buffer */
    size_t staging;     /* host copy for filling and checking device buffers */
    size_t samples;     /* per-iteration timestamps (rank 0: also per-rank times) */
    size_t tile;        /* at most one period of expected values while checking */
    size_t repeat;      /* -B: the first launch's output (a backend buffer where
                         * b->repeat_on_device, else host memory) */
    size_t total;
    size_t counted;     /* the part in the memory that memory_available reports */
} cb_footprint;

/* a + b and a * b, SIZE_MAX where they would wrap: a footprint that does not
 * fit a byte count never fits memory (the parser refuses such sizes first,
 * cb_params_check_sizes; this keeps the arithmetic honest on its own). */
static size_t add_sat(size_t a, size_t b)
{
    return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}

static size_t mul_sat(size_t a, size_t b)
{
    return b != 0 && a > SIZE_MAX / b ? SIZE_MAX : a * b;
}

/* Work buffers of the largest size that --layout col needs: the most any
 * selected collective's column variant takes. */
static int column_work_buffers(const cb_sweep_params *p)
{
    int col = 0, most = 0;
    for (int l = 0; l < p->nlayouts; l++)
        col |= p->layouts[l] == CB_LAYOUT_COL;
    for (int c = 0; col && c < p->ncollectives; c++)
        if (p->collectives[c]->column_work > most)
            most = p->collectives[c]->column_work;
    return most;
}

/* -u: the bytes by which the send and receive buffers start past their
 * allocation, for the widest element selected. */
static size_t unalign_pad(const cb_sweep_params *p)
{
    size_t widest = 1;
    for (int t = 0; t < p->ndtypes; t++)
        if (cb_dtype_info_of(p->dtypes[t])->size > widest)
            widest = cb_dtype_info_of(p->dtypes[t])->size;
    return mul_sat((size_t)p->unalign, widest);
}

static void footprint(const engine *e, size_t largest, cb_footprint *fp)
{
    const cb_params *p = e->p;
    cb_iter_request req = cb_eng_iter_request(p);
    size_t marks = (size_t)cb_iter_plan_room(&req);
    fp->send = fp->recv = add_sat(largest, unalign_pad(&p->sizes));
    fp->work = mul_sat((size_t)column_work_buffers(&p->sizes), largest);
    fp->staging = e->ops->mem.host_accessible ? 0 : largest;
    /* Marks: the engine's samples and the backend's timestamps. */
    fp->samples = 2 * marks * sizeof(double) +
                  (e->rank == 0 ? (size_t)e->nranks * sizeof(cb_rank_time) : 0);
    if (cb_eng_keeps_raw_samples(p))   /* this rank's; rank 0: every rank's, twice */
        fp->samples += marks * sizeof(double) *
                       (1 + (e->rank == 0 ? 2 * (size_t)e->nranks : 0));
    fp->tile = p->verify.check_passes > 0 ? (largest < CB_TILE_MAX_BYTES ? largest : CB_TILE_MAX_BYTES) : 0;
    fp->repeat = p->verify.repeat_check ? largest : 0;   /* -B's reference */
    size_t host = add_sat(add_sat(fp->staging, fp->samples), fp->tile);
    size_t buffers = add_sat(add_sat(fp->send, fp->recv), fp->work);
    if (e->b->repeat_on_device)
        buffers = add_sat(buffers, fp->repeat);
    else
        host = add_sat(host, fp->repeat);
    fp->total = add_sat(buffers, host);
    /* A host backend's buffers share host memory with the rest. */
    fp->counted = add_sat(buffers, e->ops->mem.host_accessible ? host : 0);
}

/* The size list, lowered to what fits in the smallest rank's memory. */
void cb_eng_plan_sizes(engine *e)
{
    char err[CB_MSGLEN];
    e->nsizes = cb_size_list(&e->p->sizes, e->sizes, CB_MAX_SIZES, err, sizeof err);
    if (e->nsizes < 0) {
        cb_status_set(&e->st, CB_EXIT_USAGE, "%s", err);
        return;
    }
    size_t available = 0;
    if (e->ops->memory_available(e->b, &available) != 0)
        cb_status_set(&e->st, CB_EXIT_RUNTIME, "%s", e->b->error);
    unsigned long long mine = available, smallest = 0;
    cb_ctl_allreduce(e->comm, &mine, &smallest, 1, CB_CTL_U64, CB_CTL_MIN);
    if (e->st.code != CB_EXIT_OK)
        return;

    /* The whole footprint of the largest size where memory_available counts it. */
    double budget = (double)smallest * CB_MEMORY_SHARE;
    int fit = e->nsizes;
    while (fit > 0) {
        cb_footprint fp;
        footprint(e, (size_t)e->sizes[fit - 1], &fp);
        if ((double)fp.counted <= budget)
            break;
        fit--;
    }
    if (fit == 0) {
        cb_status_set(&e->st, CB_EXIT_RUNTIME,
                      "-b %llu: even the smallest size does not fit in the %llu bytes "
                      "available per rank", (unsigned long long)e->sizes[0], smallest);
        return;
    }
    if (fit < e->nsizes)
        snprintf(e->size_notice, sizeof e->size_notice,
                 "largest size lowered from %llu to %llu bytes: %llu bytes available per rank",
                 (unsigned long long)e->sizes[e->nsizes - 1],
                 (unsigned long long)e->sizes[fit - 1], smallest);
    e->nsizes = fit;
    e->mem.buffer_bytes = (size_t)e->sizes[fit - 1];
}

/* -M: the footprint of this run on rank 0 (ranks differ only in samples). */
void cb_eng_note_footprint(engine *e)
{
    cb_footprint fp;
    footprint(e, e->mem.buffer_bytes, &fp);
    char repeat[64] = "";
    if (fp.repeat > 0)
        snprintf(repeat, sizeof repeat, ", -B reference %zu (%s)", fp.repeat,
                 e->b->repeat_on_device ? "device" : "host");
    cb_eng_note(e, "Memory per rank: send %zu, receive %zu, column work %zu, host staging %zu, "
            "samples %zu, check tile up to %zu%s; total %zu bytes, %.3f x the largest "
            "message of %zu bytes",
         fp.send, fp.recv, fp.work, fp.staging, fp.samples, fp.tile, repeat, fp.total,
         e->mem.buffer_bytes > 0 ? (double)fp.total / (double)e->mem.buffer_bytes : 0.0,
         e->mem.buffer_bytes);
}

/* -M: the device memory free now on this rank, or 0 where not measured. */
static size_t device_free_now(engine *e)
{
    size_t bytes = 0;
    if (!e->p->sizes.memory_report || e->ops->device_free == NULL ||
        e->ops->device_free(e->b, &bytes) != 0)
        return 0;
    return bytes;
}

/* A drop in free memory from before to after; 0 where either is unknown or
 * memory was given back. */
static size_t taken(size_t before, size_t after)
{
    return before > 0 && after > 0 && before > after ? before - after : 0;
}

void cb_eng_note_memory_usage(engine *e)
{
    /* Each figure the largest over ranks, as theirs (common.cu, run():
     * MPI_Allreduce with MPI_MAX of initGpuMem, bufferMemory and
     * devMemUsed over MPI_COMM_WORLD); every rank takes part, measured or
     * not (the last: whether any rank measured). */
    size_t after_run = device_free_now(e);
    uint64_t mine[4] = {0, 0, 0, 0}, most[4] = {0, 0, 0, 0};
    if (after_run != 0 && e->mem.free_after_buffers != 0) {
        mine[0] = taken(e->b->free_before_comm, e->mem.free_before_buffers);
        mine[1] = taken(e->mem.free_before_buffers, e->mem.free_after_buffers);
        mine[2] = taken(e->mem.free_after_buffers, after_run);
        mine[3] = 1;
    }
    if (cb_ctl_allreduce(e->comm, mine, most, 4, CB_CTL_U64, CB_CTL_MAX) != 0 || most[3] == 0)
        return;
    /* Under nccl-tests' names the table prints their line from these,
     * after "# Collective test concluded" (table_tests.c). */
    for (int i = 0; i < 3; i++)
        e->sum.memory_usage[i] = (int64_t)most[i];
    e->sum.memory_measured = 1;
    if (e->p->tests_program != NULL)
        return;
    char text[3][32], total[32];
    for (int i = 0; i < 3; i++)
        cb_format_bytes(most[i], text[i], sizeof text[i]);
    cb_format_bytes(most[0] + most[1] + most[2], total, sizeof total);
    cb_eng_note(e, "GPU memory usage : Initialization %s | User-Allocated %s | Collective %s | "
                "Total %s (each the most of any rank)", text[0], text[1], text[2], total);
}

void cb_eng_allocate_buffers(engine *e)
{
    e->mem.free_before_buffers = device_free_now(e);
    cb_watchdog_doing(&e->safety.watch, "allocating two buffers of %zu bytes", e->mem.buffer_bytes);
    size_t work_bytes = (size_t)column_work_buffers(&e->p->sizes) * e->mem.buffer_bytes;
    size_t bytes = e->mem.buffer_bytes + unalign_pad(&e->p->sizes);
    if (e->ops->mem.alloc(e->b, bytes, &e->mem.send) != 0 ||
        e->ops->mem.alloc(e->b, bytes, &e->mem.recv) != 0 ||
        (work_bytes > 0 && e->ops->mem.alloc(e->b, work_bytes, &e->mem.work) != 0)) {
        cb_status_set(&e->st, CB_EXIT_RUNTIME, "%s", e->b->error);
        return;
    }
    /* The features' state (-B: a copy of the first launch's output),
     * counted with the buffers. */
    cb_eng_features_buffers(e);
    e->mem.free_after_buffers = device_free_now(e);
    if (!e->ops->mem.host_accessible) {
        e->mem.staging = malloc(e->mem.buffer_bytes);
        if (e->mem.staging == NULL)
            cb_status_set(&e->st, CB_EXIT_RUNTIME, "cannot allocate %zu bytes of host memory",
                          e->mem.buffer_bytes);
    }
    cb_eng_timing_alloc(e);
}

int cb_eng_copy_in(engine *e, void *dst, const void *src, size_t bytes)
{
    if (!e->ops->mem.host_accessible)
        return e->ops->mem.upload(e->b, dst, src, bytes);
    if (dst != src)
        memcpy(dst, src, bytes);
    return 0;
}

int cb_eng_copy_out(engine *e, void *dst, const void *src, size_t bytes)
{
    if (!e->ops->mem.host_accessible)
        return e->ops->mem.download(e->b, dst, src, bytes);
    if (dst != src)
        memcpy(dst, src, bytes);
    return 0;
}

void cb_eng_free_buffers(engine *e)
{
    if (e->mem.send)
        e->ops->mem.free(e->b, e->mem.send);
    if (e->mem.recv)
        e->ops->mem.free(e->b, e->mem.recv);
    if (e->mem.work)
        e->ops->mem.free(e->b, e->mem.work);
    free(e->mem.staging);
    cb_eng_features_teardown(e);
    cb_eng_timing_free(e);
    e->mem.send = e->mem.recv = e->mem.staging = e->mem.work = NULL;
}
