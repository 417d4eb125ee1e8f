/* The printers (rank 0 only) and the progress line. */
#include "engine_int.h"
#include "control/elastic.h"
#include "host/terminal.h"

/* Rank 0 opens the outputs the command line asks for before anything is
 * measured, in the order of cb_output_formats. */
static double monotonic_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Rank 0, the main thread, under out.lock: the summary the signal hook
 * writes into the files, as the rows given so far make it. */
static void publish_summary(engine *e)
{
    e->out.files_sum = e->sum;   /* below_expectation: expect_driver.c's finish hook sets it */
    e->out.files_sum.elapsed_s = cb_ctl_now() - e->start_time;
    e->out.files_sum_at = monotonic_s();
}

static const char *read_env(const char *name)
{
    return getenv(name);
}

/* A restarted torchrun attempt (TORCHELASTIC_RESTART_COUNT >= 1) keeps
 * an earlier attempt's file at path under another name, said in the
 * preamble: a retry that passes must not hide the failure before it. */
static int keep_earlier(engine *e, const cb_printer_ops *format, const char *path)
{
    if (e->run.restart_count < 1 || strcmp(path, "-") == 0 || strcmp(path, CB_PRINTER_STDERR) == 0)
        return 0;
    char kept[CB_MSGLEN / 2], err[CB_MSGLEN];
    if (cb_elastic_keep_earlier(path, e->run.restart_count, kept, sizeof kept, err,
                                sizeof err) != 0) {
        cb_status_set(&e->st, CB_EXIT_RUNTIME, "%s: %s", format->option, err);
        return -1;
    }
    size_t used = strlen(e->restart_notice);
    if (kept[0] != '\0' && used < sizeof e->restart_notice)
        snprintf(e->restart_notice + used, sizeof e->restart_notice - used, "%s%.200s",
                 used ? ", " : "; the earlier attempt's files kept as ", kept);
    return 0;
}

static void open_printers(engine *e)
{
    int nformats = 0;
    while (cb_output_formats[nformats] != NULL)
        nformats++;
    e->out.printers = calloc((size_t)nformats, sizeof *e->out.printers);
    if (e->out.printers == NULL) {
        cb_status_set(&e->st, CB_EXIT_RUNTIME, "out of memory for %d outputs", nformats);
        return;
    }
    char err[CB_MSGLEN] = "";
    for (int f = 0; f < nformats; f++) {
        const cb_printer_ops *format = cb_output_formats[f];
        const char *path = format->destination(e->p);
        if (path == NULL)
            continue;
        if (keep_earlier(e, format, path) != 0)
            return;
        cb_printer *pr = format->open(path, err, sizeof err);
        if (pr == NULL) {
            cb_status_set(&e->st, CB_EXIT_RUNTIME, "%s: %s", format->option, err);
            return;
        }
        e->out.printers[e->out.nprinters++] = pr;
    }
}

void cb_eng_open_printers(engine *e)
{
    e->run.params = e->p;   /* printers read the command line in place */
    e->run.restart_count = cb_elastic_restart_count(read_env);
    if (e->rank != 0)
        return;
    /* The signal hook may look at the printers from now on. */
    pthread_mutex_lock(&e->out.lock);
    publish_summary(e);
    open_printers(e);
    pthread_mutex_unlock(&e->out.lock);
}

/* The run described, before the first table. */
void cb_eng_printers_begin(engine *e)
{
    pthread_mutex_lock(&e->out.lock);
    for (int i = 0; i < e->out.nprinters; i++)
        if (e->out.printers[i]->ops->begin != NULL)
            e->out.printers[i]->ops->begin(e->out.printers[i], &e->run);
    pthread_mutex_unlock(&e->out.lock);
}

/* A new table: coll measured in layout. */
void cb_eng_printers_table_begin(engine *e, const cb_collective *coll, cb_block_layout layout)
{
    /* Before the lock: the features' lines go out through cb_eng_note(). */
    cb_eng_features_table_begin(e, coll);
    pthread_mutex_lock(&e->out.lock);
    for (int i = 0; i < e->out.nprinters; i++)
        if (e->out.printers[i]->ops->table_begin != NULL)
            e->out.printers[i]->ops->table_begin(e->out.printers[i], coll, layout);
    pthread_mutex_unlock(&e->out.lock);
}

/* A line for the reader, in the table. */
void cb_eng_note(engine *e, const char *fmt, ...)
{
    if (e->rank != 0)
        return;
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    cb_eng_printers_note(e, text);
}

void cb_eng_printers_note(engine *e, const char *text)
{
    pthread_mutex_lock(&e->out.lock);
    for (int i = 0; i < e->out.nprinters; i++)
        if (e->out.printers[i]->ops->note != NULL)
            e->out.printers[i]->ops->note(e->out.printers[i], text);
    pthread_mutex_unlock(&e->out.lock);
}

/* Progress on stderr, by default when the person at the terminal sees it
 * and the table goes elsewhere: stderr reaches the controlling terminal
 * (itself, or through the launcher that forwards it, as mpirun does) and
 * stdout does not. --progress forces it, --no-progress stops it. */
static void choose_progress(engine *e)
{
    const cb_params *p = e->p;
    int table_on_stderr = cb_printer_csv_on_stdout(p);
    if (e->rank != 0 || p->out.progress < 0) {
        e->out.progress = 0;
        return;
    }
    /* One line rewritten in place only where no table shares the terminal;
     * otherwise whole lines, between the table's. */
    int own_line = !table_on_stderr && cb_reaches_terminal(STDERR_FILENO) &&
                   !cb_reaches_terminal(STDOUT_FILENO);
    if (own_line)
        e->out.progress = 1;
    else
        e->out.progress = p->out.progress > 0 ? 2 : 0;
}

void cb_eng_outputs_init(engine *e)
{
    choose_progress(e);
    pthread_mutex_init(&e->out.lock, NULL);
}

void cb_eng_outputs_free(engine *e)
{
    pthread_mutex_destroy(&e->out.lock);
    free(e->out.pending);
    free(e->out.pending_times);
    cb_eta_free(&e->out.eta);
}

void cb_eng_pending_alloc(engine *e)
{
    if (e->rank != 0)
        return;
    e->out.pending = calloc((size_t)e->groups.ngroups, sizeof *e->out.pending);
    e->out.pending_times = calloc((size_t)e->groups.gsize, sizeof *e->out.pending_times);
    if (e->out.pending == NULL || e->out.pending_times == NULL)
        cb_status_set(&e->st, CB_EXIT_RUNTIME, "out of memory for %d groups", e->groups.ngroups);
}

void cb_eng_progress_sweep_begins(engine *e)
{
    if (e->out.progress == 0)
        return;
    if (e->out.eta.took == NULL && cb_eta_init(&e->out.eta, e->sizes, e->nsizes) != 0)
        return;   /* no memory: progress without the time left */
    cb_eta_sweep_begins(&e->out.eta, cb_ctl_now());
}

/* Sweeps after the one in progress: the rest of its combinations, passes
 * and collectives, and of the cycles of -N, each counting alike. */
static double sweeps_after(const engine *e)
{
    const run_position *at = &e->now.at;
    double combos = at->ncombos > 0 ? at->ncombos : 1, passes = at->npasses > 0 ? at->npasses : 1;
    double colls = at->ncolls > 0 ? at->ncolls : 1;
    double after = (combos - at->combo - 1) + (passes - at->pass - 1) * combos +
                   (colls - at->coll - 1) * passes * combos;
    if (e->p->sizes.cycles > 1)
        after += (double)(e->p->sizes.cycles - e->cycle) * colls * passes * combos;
    return after > 0 ? after : 0;
}

void cb_eng_report_progress(engine *e, const cb_collective *coll, cb_dtype dtype, cb_redop redop,
                     int done)
{
    if (e->out.progress == 0)
        return;
    double now = cb_ctl_now(), elapsed = now - e->start_time;
    cb_eta_size_done(&e->out.eta, done, now);
    char cycle[48] = "", left[48] = "";
    if (e->p->sizes.cycles > 1)
        snprintf(cycle, sizeof cycle, "cycle %d of %d, ", e->cycle, e->p->sizes.cycles);
    else if (e->p->sizes.cycles == 0)
        snprintf(cycle, sizeof cycle, "cycle %d (until stopped), ", e->cycle);
    /* -N 0 runs until stopped: nothing is left to estimate; nor is there
     * an estimate before the sizes measured can tell. */
    double seconds = e->p->sizes.cycles != 0 ? cb_eta_left(&e->out.eta, sweeps_after(e)) : -1;
    if (seconds >= 0)
        snprintf(left, sizeof left, ", about %.0f s left", seconds);
    fprintf(stderr, "%s# progress: %scollective %d of %d, %s %s %s: %d of %d sizes; %.1f s "
            "elapsed%s%s", e->out.progress == 1 ? "\r\033[K" : "", cycle, e->now.at.coll + 1,
            e->now.at.ncolls, coll->name, cb_dtype_info_of(dtype)->name, cb_redop_name(redop), done,
            e->nsizes, elapsed, left, e->out.progress == 1 ? "" : "\n");
    fflush(stderr);
}

/* NCCL_TESTS_MIN_BW, as nccl-tests reads it: a collective whose average
 * bus bandwidth is below 0.9 x the value fails the run (status 8 here). */
static int mark_min_bw(cb_summary *sum)
{
    int failed = 0;
    for (int i = 0; i < sum->naverages && !isnan(sum->min_bw); i++) {
        cb_busbw_average *a = &sum->averages[i];
        a->min_bw_failed = cb_busbw_below_floor(a, sum->min_bw);
        failed |= a->min_bw_failed;
    }
    return failed;
}

static void check_min_bw(engine *e)
{
    if (mark_min_bw(&e->sum))
        e->slow = 1;
}

int cb_eng_final_status(const engine *e)
{
    const cb_summary *sum = &e->sum;
    return e->st.code != CB_EXIT_OK                      ? e->st.code
           : sum->wrong > 0 || sum->unrepeatable > 0 ? CB_EXIT_WRONG
           : e->slow                                 ? CB_EXIT_SLOW
           : sum->unchecked > 0                      ? CB_EXIT_UNCHECKED
           : sum->measurements == 0                  ? CB_EXIT_NOTHING
                                                     : CB_EXIT_OK;
}

/* Every printer ends, also after a failure: footers, and a JSON document
 * that says how the run ended. */
/* Whether printer i writes to stdout or stderr rather than a file. */
static int on_stream(const engine *e, int i)
{
    const char *where = e->out.printers[i]->ops->destination(e->p);
    return where != NULL && (strcmp(where, "-") == 0 || strcmp(where, CB_PRINTER_STDERR) == 0);
}

/* A printer's end (when it has one), then its close, whose status it returns. */
static int end_and_close(cb_printer *pr, const cb_summary *sum, char *err, size_t err_len)
{
    if (pr->ops->end != NULL)
        pr->ops->end(pr, sum);
    return pr->ops->close(pr, err, err_len);
}

static void end_one(engine *e, int i)
{
    cb_summary *sum = &e->sum;
    char err[CB_MSGLEN];
    sum->exit_status = cb_eng_final_status(e);
    snprintf(sum->error, sizeof sum->error, "%s", e->st.code != CB_EXIT_OK ? e->st.msg : "");
    if (end_and_close(e->out.printers[i], sum, err, sizeof err) != 0)
        cb_status_set(&e->st, CB_EXIT_RUNTIME, "%s", err);
}

void cb_eng_end_printers(engine *e)
{
    /* In the order opened, each ended and closed before the next ends, so
     * the JSON document, last, carries the status a failed close gives.
     * After SIGINT or SIGTERM the files come first: the launcher may have
     * stopped reading stdout (the handler made it non-blocking), and the
     * table's footer, blocking again, must not keep the JSON unwritten
     * when the launcher's SIGKILL follows. The lock keeps the hang report
     * (cb_eng_end_printers_on_hang) from ending them at the same time. */
    check_min_bw(e);
    cb_eng_features_finish(e);
    e->sum.elapsed_s = cb_ctl_now() - e->start_time;
    pthread_mutex_lock(&e->out.lock);
    if (e->out.files_error[0] != '\0')
        cb_status_set(&e->st, CB_EXIT_RUNTIME, "%s", e->out.files_error);
    int files_first = cb_signals_pending() != 0;
    unsigned long streams = 0;   /* read before any printer is closed (freed) */
    for (int i = 0; i < e->out.nprinters && i < 64; i++)
        streams |= (unsigned long)on_stream(e, i) << i;
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < e->out.nprinters; i++)
            if (!files_first ? pass == 0 : (int)(streams >> i & 1) == (pass == 1))
                end_one(e, i);
        if (files_first && pass == 0)
            cb_signals_restore_streams();
    }
    cb_signals_restore_streams();   /* every rank: its stderr for the last messages */
    e->out.nprinters = 0;
    free(e->out.printers);
    e->out.printers = NULL;
    pthread_mutex_unlock(&e->out.lock);
}

/* The outputs' lock for an end from outside the main thread's order (a
 * hang report, a lost control plane, a signal): 0 when taken within 2 s. */
static int lock_outputs_for_end(engine *e)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 2;
    return pthread_mutex_timedlock(&e->out.lock, &until);
}

/* The summary as the files last published it, not e->sum, which the main
 * thread writes: its floors marked and its time brought up to now. */
static cb_summary published_summary(const engine *e)
{
    cb_summary sum = e->out.files_sum;
    mark_min_bw(&sum);
    sum.elapsed_s += monotonic_s() - e->out.files_sum_at;
    return sum;
}

/* Every printer ended with sum and closed, a failed close said on stderr;
 * the lock is kept: the process ends after this. */
static void end_all_for_exit(engine *e, const cb_summary *sum)
{
    /* Files first: a launcher ending the job may have stopped reading
     * stdout, and its SIGKILL follows its SIGTERM within a second. */
    char err[CB_MSGLEN];
    unsigned long streams = 0;   /* read before any printer is closed (freed) */
    for (int i = 0; i < e->out.nprinters && i < 64; i++)
        streams |= (unsigned long)on_stream(e, i) << i;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < e->out.nprinters; i++) {
            if ((int)(streams >> i & 1) != (pass == 1))
                continue;
            if (end_and_close(e->out.printers[i], sum, err, sizeof err) != 0)
                fprintf(stderr, "nccl-collbench: %s\n", err);
        }
    e->out.nprinters = 0;
}

void cb_eng_end_printers_on_hang(void *ctx, const cb_hang_report *rep)
{
    engine *e = ctx;
    /* The main thread holds the lock only inside a printer call; it is
     * never given back: the process ends after this. */
    if (lock_outputs_for_end(e) != 0) {
        fprintf(stderr, "nccl-collbench: the outputs stayed busy; they end without the hang "
                "report\n");
        return;
    }
    cb_summary sum = published_summary(e);
    sum.hang = rep;
    sum.exit_status = CB_EXIT_TIMEOUT;
    snprintf(sum.error, sizeof sum.error, "hang: %s (the '# Hang:' lines on stderr say who "
             "is behind)", rep->nlines > 0 ? rep->lines[0] + strlen("# Hang: ") : "");
    end_all_for_exit(e, &sum);
}

void cb_eng_end_printers_on_lost(void *ctx, const char *why)
{
    engine *e = ctx;
    if (e->rank != 0)
        return;
    /* Called on the main thread (cb_ctl_lost), which may be inside a
     * printer call (the lock held): then the outputs end without this; or
     * on the watchdog thread (a peer's side channel closed). The process
     * ends after this. */
    if (lock_outputs_for_end(e) != 0)
        return;
    cb_summary sum = published_summary(e);
    sum.exit_status = CB_EXIT_RUNTIME;
    snprintf(sum.error, sizeof sum.error, "%s; the outputs hold the %d results finished "
             "before it", why, sum.results);
    end_all_for_exit(e, &sum);
}

void cb_eng_end_files_on_signal(void *ctx, int sig)
{
    engine *e = ctx;
    /* The main thread holds the lock only around printer calls, which the
     * signal made non-blocking on stdout and stderr. */
    if (lock_outputs_for_end(e) != 0) {
        fprintf(stderr, "nccl-collbench: the outputs stayed busy; the files are finished only "
                "when the run stops\n");
        return;
    }
    const char *name = sig == SIGINT ? "SIGINT" : "SIGTERM";
    cb_summary sum = published_summary(e);
    sum.exit_status = sig == SIGINT ? CB_EXIT_SIGINT : CB_EXIT_SIGTERM;
    snprintf(sum.error, sizeof sum.error, "interrupted by %s: stopped early; the files hold the "
             "%d results finished before it", name, sum.results);
    /* Files only: stdout and stderr stay with the main thread, which ends
     * them when the run stops (a launcher may no longer read them). */
    int kept = 0, ended = 0;
    char err[CB_MSGLEN];
    for (int i = 0; i < e->out.nprinters; i++) {
        cb_printer *pr = e->out.printers[i];
        if (on_stream(e, i)) {
            e->out.printers[kept++] = pr;
            continue;
        }
        if (end_and_close(pr, &sum, err, sizeof err) != 0) {
            fprintf(stderr, "nccl-collbench: %s\n", err);
            snprintf(e->out.files_error, sizeof e->out.files_error, "%s", err);
        }
        ended++;
    }
    e->out.nprinters = kept;
    pthread_mutex_unlock(&e->out.lock);
    if (ended > 0) {
        fprintf(stderr, "nccl-collbench: stopped early by %s; rank 0 finished %d output "
                "file%s at once with the %d results finished before it\n", name, ended,
                ended == 1 ? "" : "s", sum.results);
        fflush(stderr);
    }
}

static void check_printers(engine *e)
{
    for (int i = 0; i < e->out.nprinters; i++)
        if (e->out.printers[i]->write_failed && e->out.printers[i]->failure[0] != '\0')
            cb_status_set(&e->st, CB_EXIT_RUNTIME, "%s", e->out.printers[i]->failure);
        else if (e->out.printers[i]->write_failed)
            cb_status_set(&e->st, CB_EXIT_RUNTIME, "writing the %s output failed",
                          e->out.printers[i]->ops->name);
}

/* Rank 0: cycle e->cycle ran whole (its results and scan given). */
void cb_eng_printers_cycle_end(engine *e)
{
    pthread_mutex_lock(&e->out.lock);
    for (int i = 0; i < e->out.nprinters; i++)
        if (e->out.printers[i]->ops->cycle_end != NULL)
            e->out.printers[i]->ops->cycle_end(e->out.printers[i], e->cycle);
    check_printers(e);
    publish_summary(e);
    pthread_mutex_unlock(&e->out.lock);
}

/* A result as the notes under the table name it. */
static void describe_result(const cb_result *r, char *what, size_t size)
{
    int len = snprintf(what, size, "%s %s %s %llu B %s", r->collective->name,
                       cb_dtype_info_of(r->dtype)->name, cb_redop_name(r->redop),
                       (unsigned long long)r->bytes, r->in_place ? "in-place" : "out-of-place");
    if (r->root >= 0 && len > 0 && (size_t)len < size)
        len += snprintf(what + len, size - (size_t)len, " root %d", r->root);
    if (r->split.group >= 0 && len > 0 && (size_t)len < size)
        snprintf(what + len, size - (size_t)len, " group %d", r->split.group);
}

/* The collective's average bus bandwidth gains res's cell. */
static void count_average(cb_summary *sum, const cb_result *res)
{
    int i = 0;
    while (i < sum->naverages && sum->averages[i].collective != res->collective)
        i++;
    if (i == sum->naverages) {
        if (sum->naverages == CB_SUMMARY_AVERAGES)   /* more than -o can select */
            return;
        sum->averages[sum->naverages++] = (cb_busbw_average){.collective = res->collective};
    }
    sum->averages[i].sum += res->busbw;
    sum->averages[i].cells++;
}

/* Where the verdict says the wrong elements were: the first rank and host
 * that saw any, and whether others did too. */
static void count_wrong(cb_summary *sum, const cb_result *res)
{
    if (res->wrong == 0)
        return;
    if (sum->first_wrong_rank < 0) {
        sum->first_wrong_rank = res->bad_rank;
        snprintf(sum->first_wrong_host, sizeof sum->first_wrong_host, "%s", res->bad_host);
    } else if (res->bad_rank != sum->first_wrong_rank) {
        sum->wrong_ranks_differ = 1;
    }
}

/* -B: the first rank whose output did not repeat, and a note per result
 * with launches that did not. */
static void count_unrepeatable(engine *e, const cb_result *res)
{
    if (res->repeat.unrepeatable == 0)
        return;
    cb_summary *sum = &e->sum;
    if (sum->first_unrepeatable_rank < 0) {
        sum->first_unrepeatable_rank = res->repeat.unrepeatable_rank;
        snprintf(sum->first_unrepeatable_host, sizeof sum->first_unrepeatable_host, "%s",
                 res->repeat.unrepeatable_host);
    }
    const struct cb_result_repeat *rp = &res->repeat;
    char what[192];
    describe_result(res, what, sizeof what);
    cb_eng_note(e, "Unrepeatable: %s: %llu launch%s (over ranks; %llu compared on each) differ%s from "
            "the first launch's output in %llu element%s, first on rank %d host %s (-B)",
         what, (unsigned long long)rp->unrepeatable, rp->unrepeatable == 1 ? "" : "es",
         (unsigned long long)rp->repeat_checked, rp->unrepeatable == 1 ? "s" : "",
         (unsigned long long)rp->unrepeatable_elements,
         rp->unrepeatable_elements == 1 ? "" : "s", rp->unrepeatable_rank,
         rp->unrepeatable_host);
}

/* Rank 0 prints one row (in_place may be NULL) and counts its results. */
static void emit_row(engine *e, const cb_result *out_of_place, const cb_result *in_place)
{
    /* Copies that carry what the features add (--expect: the row's
     * expectation); none until one does. */
    cb_result oop = *out_of_place, inp;
    oop.expected_busbw = oop.efficiency = 0;
    cb_eng_features_row_before(e, &oop);
    out_of_place = &oop;
    if (in_place != NULL) {
        inp = *in_place;
        inp.expected_busbw = inp.efficiency = 0;
        cb_eng_features_row_before(e, &inp);
        in_place = &inp;
    }
    const cb_result *halves[2] = {out_of_place, in_place};
    for (int h = 0; h < 2 && halves[h] != NULL; h++) {
        e->sum.results++;
        e->sum.measurements++;
        if (!(halves[h]->collective->flags & CB_COLL_NO_DATA)) {
            e->sum.busbw_sum += halves[h]->busbw;
            e->sum.busbw_results++;
            count_average(&e->sum, halves[h]);
        }
        count_wrong(&e->sum, halves[h]);
        if (e->p->verify.check_passes == 0 && !(halves[h]->collective->flags & CB_COLL_NO_DATA))
            e->sum.unverified++;
    }
    cb_row row = {out_of_place, in_place};
    pthread_mutex_lock(&e->out.lock);
    for (int i = 0; i < e->out.nprinters; i++)
        e->out.printers[i]->ops->result(e->out.printers[i], &row);
    check_printers(e);
    pthread_mutex_unlock(&e->out.lock);
    for (int h = 0; h < 2 && halves[h] != NULL; h++) {
        char what[192];
        describe_result(halves[h], what, sizeof what);
        if (e->now.at_largest)
            cb_eng_gate_busbw(e, what, halves[h]->busbw);
        cb_eng_features_row_after(e, what, halves[h]);
        count_unrepeatable(e, halves[h]);
    }
    pthread_mutex_lock(&e->out.lock);
    publish_summary(e);
    pthread_mutex_unlock(&e->out.lock);
}

void cb_eng_stamp_result(engine *e, cb_result *res)
{
    time_t now = time(NULL);
    struct tm utc;
    res->cycle = e->cycle;
    gmtime_r(&now, &utc);
    strftime(res->timestamp_utc, sizeof res->timestamp_utc, "%Y-%m-%dT%H:%M:%SZ", &utc);
}

void cb_eng_gate_busbw(engine *e, const char *what, double busbw)
{
    double floor = e->p->expect.min_busbw;
    if (floor > 0 && !(busbw >= floor)) {
        e->slow = 1;
        e->sum.below_min_busbw++;
        cb_eng_note(e, "Below --min-busbw %.2f GB/s: %s busbw %.2f GB/s", floor, what, busbw);
    }
}

/* The one place where out-of-place and in-place results pair up: rank 0
 * keeps the n out-of-place results of a size (one per group) until their
 * in-place halves come, then prints a row per group. last_half: no other
 * half of this size follows (barrier, the column layout). */
void cb_eng_emit_results(engine *e, const cb_result *res, int n, int last_half)
{
    if (e->rank != 0)
        return;
    if (!res[0].in_place && !last_half) {
        memcpy(e->out.pending, res, (size_t)n * sizeof *res);
        e->out.npending = n;
        /* Every rank's times live in a buffer the next measurement reuses. */
        for (int g = 0; g < n; g++)
            if (res[g].rank_times != NULL) {
                memcpy(e->out.pending_times, res[g].rank_times,
                       (size_t)e->groups.gsize * sizeof *e->out.pending_times);
                e->out.pending[g].rank_times = e->out.pending_times;
            }
        if (n == 1 && res[0].rank_samples != NULL) {
            memcpy(e->timing.pending_samples, res[0].rank_samples, (size_t)e->groups.gsize *
                   res[0].samples_room * sizeof *e->timing.pending_samples);
            e->out.pending[0].rank_samples = e->timing.pending_samples;
        }
        return;
    }
    for (int g = 0; g < n; g++)
        if (!res[g].in_place)
            emit_row(e, &res[g], NULL);
        else if (g < e->out.npending)
            emit_row(e, &e->out.pending[g], &res[g]);
    e->out.npending = 0;
}

/* Out-of-place results whose in-place halves will not come: the run
 * stopped between the two. */
void cb_eng_flush_pending(engine *e)
{
    for (int g = 0; g < e->out.npending; g++)
        emit_row(e, &e->out.pending[g], NULL);
    e->out.npending = 0;
}
