/*
 * The sweep engine. It knows collectives only through the collective table,
 * communication libraries only through a backend's ops table, and output
 * formats only through printers. MPI is used here for what every backend
 * shares: launching ranks, exchanging metadata, agreeing on failures and
 * combining times.
 */
#include "engine.h"

#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "printer.h"
#include "result.h"
#include "status.h"
#include "signals.h"
#include "sysinfo.h"
#include "watchdog.h"

/* Share of the memory a backend reports that buffers may take. */
#define CB_MEMORY_SHARE 0.8
#define CB_MAX_PRINTERS 3
/* Per-iteration timestamps kept per timed span; beyond, one per group. */
#define CB_MAX_SAMPLES 1000
/* Each timer mark reads a clock (tens of nanoseconds) inside the timed span:
 * marks come at most once per this many seconds of estimated run time, so
 * that they add well under 1% to the smallest operations. */
#define CB_SAMPLE_SPAN 10e-6
/* --budget with --stable: the timed iterations run in at most CB_ROUNDS
 * timed spans (rounds) of equal length, the last shorter; the early stop
 * compares the last CB_STABLE_ROUNDS rounds, so that many run at least. */
#define CB_ROUNDS 10
#define CB_STABLE_ROUNDS 3

typedef struct engine {
    const cb_params *p;
    MPI_Comm comm;
    int rank;
    int nranks;
    /* The ranks measured together: comm itself, or with --split this rank's
     * group, numbered by its lowest rank. */
    MPI_Comm gcomm;
    int grank;
    int gsize;
    int group;
    int ngroups;
    int min_gsize;          /* the smallest group's size */
    int *gmembers;          /* group rank 0: the comm rank of each group member */
    int *leaders;           /* comm rank of each group's rank 0 */
    cb_result *split_oop;   /* rank 0 with --split: each group's out-of-place half */
    char host[CB_HOSTLEN];
    cb_status st;

    const cb_backend_ops *ops;
    cb_backend *b;
    void *send;          /* backend buffers, buffer_bytes each */
    void *recv;
    void *staging;       /* host copy when the backend's buffers are not host accessible */
    void *work;          /* --layout col: the column copies' work buffer */
    size_t buffer_bytes;
    void *coll_state;    /* what the running collective's prepare made */
    cb_layout_kind layout_now; /* the layout being measured */

    uint64_t sizes[CB_MAX_SIZES];
    int nsizes;

    char size_notice[256];   /* why the largest size was lowered, for after the preamble */
    char backend_notice[CB_MSGLEN];   /* why auto chose its backend, for after the preamble */

    /* Per-iteration timing: a mark every mark_stride units (iterations, or
     * graph launches with -G), samples read back after the span. */
    int sampling;            /* the backend has timer marks */
    int mark_units;          /* units in a timed span */
    int mark_stride;
    int nmarks;
    int iters_now;           /* timed iterations allowed this measurement (-n, or from --budget) */
    int iters_done;          /* timed iterations run (fewer after an early stop by --stable) */
    double prev_op_time;     /* this rank's time per operation at the last size */
    size_t prev_count;       /* and that size's count, to tell a new sweep */
    double *samples;         /* room for CB_MAX_SAMPLES */
    cb_rank_time *rank_times; /* rank 0 only: every rank's times */

    cb_printer *printers[CB_MAX_PRINTERS];   /* rank 0 only */
    int nprinters;
    cb_rank_info *ranks;                     /* rank 0 only */
    cb_run_info run;
    cb_summary sum;

    int progress;          /* rank 0: 0 off, 1 one updated line on a terminal, 2 lines */

    cb_watchdog watch;
    char measuring[192];   /* the measurement in progress, for the watchdog */
} engine;

/* Every rank learns of any rank's failure, or of a SIGINT or SIGTERM that
 * any rank received: all stop at the same step. */
static int agree(engine *e)
{
    /* Reaching an agreement is progress: every rank got this far. */
    cb_watchdog_tick(&e->watch);
    int sig = cb_signals_pending();
    if (sig != 0)
        cb_status_set(&e->st, sig == SIGINT ? CB_EXIT_SIGINT : CB_EXIT_SIGTERM,
                      "interrupted by %s: stopped after the measurement in progress",
                      sig == SIGINT ? "SIGINT" : "SIGTERM");
    return cb_status_agree(e->comm, &e->st);
}

/* A line for the reader, in the table. */
static void note(engine *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void note(engine *e, const char *fmt, ...)
{
    if (e->rank != 0)
        return;
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    for (int i = 0; i < e->nprinters; i++)
        e->printers[i]->ops->note(e->printers[i], text);
}

/* Rank 0 opens the outputs before anything is measured. */
static void open_printers(engine *e)
{
    if (e->rank != 0)
        return;
    const cb_params *p = e->p;
    char err[CB_MSGLEN] = "";
    /* With CSV on stdout the table goes to stderr, diagnostics and all. */
    int csv_on_stdout = p->csv_path != NULL && strcmp(p->csv_path, "-") == 0;
    cb_printer *table = cb_printer_table.open(csv_on_stdout ? CB_PRINTER_STDERR : "-", err,
                                              sizeof err);
    if (table == NULL) {
        cb_status_set(&e->st, CB_EXIT_RUNTIME, "table output: %s", err);
        return;
    }
    e->printers[e->nprinters++] = table;
    if (p->csv_path != NULL) {
        cb_printer *csv = cb_printer_csv.open(p->csv_path, err, sizeof err);
        if (csv == NULL) {
            cb_status_set(&e->st, CB_EXIT_RUNTIME, "--csv: %s", err);
            return;
        }
        e->printers[e->nprinters++] = csv;
    }
    if (p->json_path != NULL) {
        cb_printer *json = cb_printer_json.open(p->json_path, err, sizeof err);
        if (json == NULL) {
            cb_status_set(&e->st, CB_EXIT_RUNTIME, "--json: %s", err);
            return;
        }
        e->printers[e->nprinters++] = json;
    }
}

/* Progress on stderr: by default only when stderr is a terminal and the
 * table goes elsewhere (stdout redirected); --progress forces it. */
static void choose_progress(engine *e)
{
    const cb_params *p = e->p;
    int table_on_stderr = p->csv_path != NULL && strcmp(p->csv_path, "-") == 0;
    /* One line rewritten in place only where no table shares the terminal;
     * otherwise whole lines, between the table's. */
    int own_line = isatty(STDERR_FILENO) && !isatty(STDOUT_FILENO) && !table_on_stderr;
    if (e->rank != 0)
        e->progress = 0;
    else if (own_line)
        e->progress = 1;
    else
        e->progress = p->progress ? 2 : 0;
}

static void report_progress(engine *e, const cb_collective *coll, cb_dtype dtype, cb_redop redop,
                            int done, int total)
{
    if (e->progress == 0)
        return;
    fprintf(stderr, "%s# progress: %s %s %s: %d of %d sizes%s", e->progress == 1 ? "\r\033[K" : "",
            coll->name, cb_dtype_info_of(dtype)->name, cb_redop_name(redop), done, total,
            e->progress == 1 ? "" : "\n");
    fflush(stderr);
}

/* Every printer ends, also after a failure: footers, and a JSON document
 * that says how the run ended. */
static void end_printers(engine *e)
{
    /* In the order opened, each ended and closed before the next ends, so
     * the JSON document, last, carries the status a failed close gives. */
    cb_summary *sum = &e->sum;
    char err[CB_MSGLEN];
    for (int i = 0; i < e->nprinters; i++) {
        sum->exit_status = e->st.code != CB_EXIT_OK ? e->st.code
                           : sum->wrong > 0         ? CB_EXIT_WRONG
                                                    : CB_EXIT_OK;
        snprintf(sum->error, sizeof sum->error, "%s", e->st.code != CB_EXIT_OK ? e->st.msg : "");
        e->printers[i]->ops->end(e->printers[i], sum);
        if (e->printers[i]->ops->close(e->printers[i], err, sizeof err) != 0)
            cb_status_set(&e->st, CB_EXIT_RUNTIME, "%s", err);
    }
    e->nprinters = 0;
}

static void check_printers(engine *e)
{
    for (int i = 0; i < e->nprinters; i++)
        if (e->printers[i]->write_failed && e->printers[i]->failure[0] != '\0')
            cb_status_set(&e->st, CB_EXIT_RUNTIME, "%s", e->printers[i]->failure);
        else if (e->printers[i]->write_failed)
            cb_status_set(&e->st, CB_EXIT_RUNTIME, "writing the %s output failed",
                          e->printers[i]->ops->name);
}

/* Why ops cannot run what the command line asks for, or NULL when it can. */
static const char *backend_lacks(const cb_backend_ops *ops, const cb_params *p)
{
    if (p->graph_launches > 0 && (ops->graph_begin == NULL || ops->graph_end == NULL ||
                                  ops->graph_launch == NULL || ops->graph_free == NULL))
        return "it cannot capture CUDA graphs (-G)";
    return NULL;
}

/* "auto" takes the first backend every rank can use. */
static void select_backend(engine *e)
{
    char why[CB_MSGLEN] = "";
    if (strcmp(e->p->backend, "auto") != 0) {
        e->ops = cb_backend_lookup(e->p->backend);
        const char *lack = backend_lacks(e->ops, e->p);
        if (lack != NULL)
            cb_status_set(&e->st, CB_EXIT_RUNTIME, "--backend %s: %s", e->p->backend, lack);
        else if (!e->ops->usable(why, sizeof why))
            cb_status_set(&e->st, CB_EXIT_RUNTIME, "--backend %s cannot run here: %s",
                          e->p->backend, why);
        return;
    }
    const char *lacked = NULL, *lacking = NULL, *unusable = NULL;
    char unusable_why[CB_MSGLEN] = "";
    for (const cb_backend_ops *const *b = cb_backend_list(); *b != NULL; b++) {
        const char *lack = backend_lacks(*b, e->p);
        if (lack != NULL) {
            if (lacked == NULL) {
                lacked = lack;
                lacking = (*b)->name;
            }
            continue;
        }
        int usable = (*b)->usable(why, sizeof why), nusable = 0;
        MPI_Allreduce(&usable, &nusable, 1, MPI_INT, MPI_SUM, e->comm);
        if (nusable == e->nranks) {
            e->ops = *b;
            if (unusable != NULL)
                snprintf(e->backend_notice, sizeof e->backend_notice,
                         "backend auto chose %s: no rank can run %s (%s)", (*b)->name, unusable,
                         unusable_why);
            return;
        }
        /* Some ranks can and others cannot: a node that lost its GPU must
         * not pass a health check by running everything on host memory. */
        if (nusable > 0) {
            char list[CB_MSGLEN / 2];
            int missing = cb_sysinfo_flagged_ranks(e->comm, !usable, list, sizeof list);
            if (!usable)
                cb_status_set(&e->st, CB_EXIT_RUNTIME, "--backend auto: %d of %d ranks cannot "
                              "run the %s backend that the others can: %s (%s); refused rather "
                              "than run every rank on another backend, which would hide it "
                              "(--backend names one)", missing, e->nranks, (*b)->name, list, why);
            return;
        }
        if (unusable == NULL) {
            unusable = (*b)->name;
            snprintf(unusable_why, sizeof unusable_why, "%s", why);
        }
    }
    if (lacked != NULL)
        cb_status_set(&e->st, CB_EXIT_RUNTIME,
                      "no backend can run on every rank with these options (%s: %s)", lacking,
                      lacked);
    else
        cb_status_set(&e->st, CB_EXIT_RUNTIME, "no backend can run on every rank");
}

/* The watchdog's way to unblock a hung rank before it ends the process. */
static void abort_backend(void *ctx)
{
    engine *e = ctx;
    if (e->b != NULL && e->ops->abort != NULL)
        e->ops->abort(e->b);
}

static void watchdog_tick(void *ctx)
{
    cb_watchdog_tick(&((engine *)ctx)->watch);
}

static void start_backend(engine *e)
{
    cb_backend_config config = {
        .blocking = e->p->blocking, .run_comm = e->comm, .progress = watchdog_tick,
        .progress_ctx = e};
    cb_watchdog_doing(&e->watch, "starting the %s backend", e->ops->name);
    if (e->ops->init(e->gcomm, &config, &e->b) != 0)
        cb_status_set(&e->st, CB_EXIT_RUNTIME, "starting the %s backend failed: %s",
                      e->ops->name, e->b ? e->b->error : "out of memory");
    if (e->b != NULL) {
        e->b->ops = e->ops;
        cb_watchdog_set_abort(&e->watch, abort_backend, e);
    }
}

/* This rank's colour under spec (option names it in messages) among the
 * ranks of comm, collective over comm: node gives each host's lowest rank
 * (hosts as NCCL counts them, see cb_sysinfo_host_comm); -1 with the status
 * set on a colour list that does not fit comm, or out of memory. */
static int spec_color(engine *e, const cb_split_spec *spec, const char *option, MPI_Comm comm)
{
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (spec->kind != CB_SPLIT_NODE) {
        char err[CB_MSGLEN];
        int color = cb_split_color(spec, option, rank, size, err, sizeof err);
        if (color < 0)
            cb_status_set(&e->st, CB_EXIT_USAGE, "%s", err);
        return color;
    }
    MPI_Comm host;
    int color = rank;
    if (cb_sysinfo_host_comm(comm, rank, &host) != 0) {
        cb_status_set(&e->st, CB_EXIT_RUNTIME, "%s node: out of memory for the host ids",
                      option);
        return -1;
    }
    MPI_Allreduce(MPI_IN_PLACE, &color, 1, MPI_INT, MPI_MIN, host);
    MPI_Comm_free(&host);
    return color;
}

/* --split: this rank's group communicator, the group numbers (in the order
 * of each group's lowest rank) and the members each group's rank 0 keeps. */
static void split_groups(engine *e)
{
    const cb_params *p = e->p;
    e->gcomm = e->comm;
    e->grank = e->rank;
    e->gsize = e->nranks;
    e->group = 0;
    e->ngroups = 1;
    if (p->split.kind != CB_SPLIT_NONE) {
        /* cb_params_check_ranks has checked the spec against the rank count. */
        int color = spec_color(e, &p->split, "--split", e->comm);
        MPI_Comm_split(e->comm, color < 0 ? 0 : color, e->rank, &e->gcomm);
    }
    MPI_Comm_rank(e->gcomm, &e->grank);
    MPI_Comm_size(e->gcomm, &e->gsize);
    MPI_Allreduce(&e->gsize, &e->min_gsize, 1, MPI_INT, MPI_MIN, e->comm);
    int *lead = malloc((size_t)e->nranks * sizeof *lead);
    e->leaders = malloc((size_t)e->nranks * sizeof *e->leaders);
    e->gmembers = malloc((size_t)e->gsize * sizeof *e->gmembers);
    if (lead == NULL || e->leaders == NULL || e->gmembers == NULL) {
        cb_status_set(&e->st, CB_EXIT_RUNTIME, "out of memory for %d group records", e->nranks);
        free(lead);
        return;
    }
    int leader = e->rank, is_leader = e->grank == 0;
    MPI_Bcast(&leader, 1, MPI_INT, 0, e->gcomm);
    MPI_Gather(&e->rank, 1, MPI_INT, e->gmembers, 1, MPI_INT, 0, e->gcomm);
    MPI_Allgather(&is_leader, 1, MPI_INT, lead, 1, MPI_INT, e->comm);
    e->ngroups = 0;
    for (int r = 0; r < e->nranks; r++)
        if (lead[r]) {
            if (r == leader)
                e->group = e->ngroups;
            e->leaders[e->ngroups++] = r;
        }
    free(lead);
    if (e->rank == 0 && p->split.kind != CB_SPLIT_NONE) {
        e->split_oop = calloc((size_t)e->ngroups, sizeof *e->split_oop);
        if (e->split_oop == NULL)
            cb_status_set(&e->st, CB_EXIT_RUNTIME, "out of memory for %d groups", e->ngroups);
    }
}

/* Preamble lines: the groups that color makes of comm's ranks (numbered in
 * the order of their lowest rank) and each group's ranks of comm, printed
 * by rank 0 when it is comm's rank 0. Collective over comm. */
static void note_groups(engine *e, MPI_Comm comm, const char *what, const char *after,
                        int color)
{
    int crank = 0, csize = 1;
    MPI_Comm_rank(comm, &crank);
    MPI_Comm_size(comm, &csize);
    int *colors = crank == 0 ? malloc((size_t)csize * sizeof *colors) : NULL;
    int *groups = crank == 0 ? malloc((size_t)csize * sizeof *groups) : NULL;
    int ok = crank != 0 || (colors != NULL && groups != NULL);
    MPI_Bcast(&ok, 1, MPI_INT, 0, comm);
    if (ok)
        MPI_Gather(&color, 1, MPI_INT, colors, 1, MPI_INT, 0, comm);
    if (!ok || crank != 0 || e->rank != 0) {
        free(colors);
        free(groups);
        return;
    }
    int ngroups = 0;
    for (int r = 0; r < csize; r++) {
        groups[r] = -1;
        for (int q = 0; q < r && groups[r] < 0; q++)
            if (colors[q] == colors[r])
                groups[r] = groups[q];
        if (groups[r] < 0)
            groups[r] = ngroups++;
    }
    note(e, "%s: %d group%s%s", what, ngroups, ngroups == 1 ? "" : "s", after);
    for (int g = 0; g < ngroups; g++) {
        char list[400] = "";
        size_t used = 0;
        int members = 0;
        for (int r = 0; r < csize; r++) {
            if (groups[r] != g)
                continue;
            members++;
            if (used + 16 < sizeof list)
                used += (size_t)snprintf(list + used, sizeof list - used, "%s%d",
                                         used ? "," : "", r);
            else if (used + 4 < sizeof list && list[used - 1] != '.')
                used += (size_t)snprintf(list + used, sizeof list - used, ",...");
        }
        note(e, "group %d: %d rank%s: %s", g, members, members == 1 ? "" : "s", list);
    }
    free(colors);
    free(groups);
}

/* The preamble's lines for --split: each group and its ranks. */
static void describe_groups(engine *e)
{
    if (e->p->split.kind == CB_SPLIT_NONE)
        return;
    char what[256];
    snprintf(what, sizeof what, "split %s", e->p->split.text);
    note_groups(e, e->comm, what, " measured at once", e->group);
}

/* Host, pid and device of every rank, gathered on rank 0. */
static void gather_ranks(engine *e)
{
    cb_rank_info mine;
    memset(&mine, 0, sizeof mine);
    mine.rank = e->rank;
    mine.pid = (int)getpid();
    snprintf(mine.host, sizeof mine.host, "%s", e->host);
    if (e->ops->describe(e->b, &mine.device) != 0)
        cb_status_set(&e->st, CB_EXIT_RUNTIME, "%s", e->b->error);
    if (e->rank == 0) {
        e->ranks = calloc((size_t)e->nranks, sizeof *e->ranks);
        if (e->ranks == NULL)
            cb_status_set(&e->st, CB_EXIT_RUNTIME, "out of memory for %d rank records", e->nranks);
    }
    if (agree(e) != CB_EXIT_OK)
        return;
    MPI_Gather(&mine, (int)sizeof mine, MPI_BYTE, e->ranks, (int)sizeof mine, MPI_BYTE, 0,
               e->comm);

    MPI_Comm node;
    int node_rank = 0, node_size = 1;
    if (cb_sysinfo_host_comm(e->comm, 0, &node) == 0) {
        MPI_Comm_rank(node, &node_rank);
        MPI_Comm_size(node, &node_size);
        MPI_Comm_free(&node);
    } else {
        cb_status_set(&e->st, CB_EXIT_RUNTIME, "out of memory for the host ids of %d ranks",
                      e->nranks);
    }
    int leader = node_rank == 0;
    MPI_Allreduce(&leader, &e->run.nnodes, 1, MPI_INT, MPI_SUM, e->comm);
    MPI_Allreduce(&node_size, &e->run.ranks_per_node, 1, MPI_INT, MPI_MAX, e->comm);
}

static void describe_run(engine *e)
{
    cb_run_info *run = &e->run;
    run->tool_version = PACKAGE_VERSION;
    run->backend = e->ops->name;
    run->nranks = e->nranks;
    run->ranks = e->ranks;
    run->params = e->p;
    run->max_bytes = e->sizes[e->nsizes - 1];
    if (e->ops->versions != NULL)
        e->ops->versions(e->b, run->backend_versions, sizeof run->backend_versions);
    if (e->rank == 0)
        cb_sysinfo_mpi_library(run->mpi_library, sizeof run->mpi_library);

    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    struct tm utc;
    gmtime_r(&now.tv_sec, &utc);
    strftime(run->start_utc, sizeof run->start_utc, "%Y-%m-%dT%H:%M:%SZ", &utc);
    uint32_t salt = cb_pattern_seed((uint32_t)now.tv_nsec, (uint32_t)getpid(),
                                    (uint32_t)now.tv_sec, (uint32_t)e->host[0]);
    snprintf(run->run_id, sizeof run->run_id, "%08x%08x", (unsigned)now.tv_sec, (unsigned)salt);
}

/* Room for the marks of one measurement: at most CB_MAX_SAMPLES per span
 * of -n iterations (or -G launches), plus one per round with --stable,
 * whose rounds each end with a mark. */
static int sample_room(const cb_params *p)
{
    int units = p->graph_launches > 0 ? p->graph_launches : p->iters;
    int room = units < CB_MAX_SAMPLES ? units : CB_MAX_SAMPLES;
    if (p->graph_launches == 0 && p->budget_ms > 0 && p->stable_pct > 0)
        room += CB_ROUNDS;
    return room;
}

/* What a run holds per rank, in bytes, for its largest size. */
typedef struct cb_footprint {
    size_t send, recv;  /* the backend's buffers */
    size_t work;        /* --layout col: the column copies' work buffer */
    size_t staging;     /* host copy for filling and checking device buffers */
    size_t samples;     /* per-iteration timestamps (rank 0: also per-rank times) */
    size_t tile;        /* at most one period of expected values while checking */
    size_t total;
    size_t counted;     /* the part in the memory that memory_available reports */
} cb_footprint;

/* Work buffers of the largest size that --layout col needs: the most any
 * selected collective's column variant takes. */
static int column_work_buffers(const cb_params *p)
{
    int col = 0, most = 0;
    for (int l = 0; l < p->nlayouts; l++)
        col |= p->layouts[l] == CB_LAYOUT_COL;
    for (int c = 0; col && c < p->ncollectives; c++)
        if (p->collectives[c]->column_work > most)
            most = p->collectives[c]->column_work;
    return most;
}

static void footprint(const engine *e, size_t largest, cb_footprint *fp)
{
    const cb_params *p = e->p;
    size_t marks = (size_t)sample_room(p);
    fp->send = fp->recv = largest;
    fp->work = (size_t)column_work_buffers(p) * largest;
    fp->staging = e->ops->host_accessible ? 0 : largest;
    /* Marks: the engine's samples and the backend's timestamps. */
    fp->samples = 2 * marks * sizeof(double) +
                  (e->rank == 0 ? (size_t)e->nranks * sizeof(cb_rank_time) : 0);
    fp->tile = p->check_passes > 0 ? (largest < CB_TILE_MAX_BYTES ? largest : CB_TILE_MAX_BYTES) : 0;
    size_t host = fp->staging + fp->samples + fp->tile;
    fp->total = fp->send + fp->recv + fp->work + host;
    /* A host backend's buffers share host memory with the rest. */
    fp->counted = fp->send + fp->recv + fp->work + (e->ops->host_accessible ? host : 0);
}

/* The size list, lowered to what fits in the smallest rank's memory. */
static void plan_sizes(engine *e)
{
    char err[CB_MSGLEN];
    e->nsizes = cb_size_list(e->p, e->sizes, CB_MAX_SIZES, err, sizeof err);
    if (e->nsizes < 0) {
        cb_status_set(&e->st, CB_EXIT_USAGE, "%s", err);
        return;
    }
    size_t available = 0;
    if (e->ops->memory_available(e->b, &available) != 0)
        cb_status_set(&e->st, CB_EXIT_RUNTIME, "%s", e->b->error);
    unsigned long long mine = available, smallest = 0;
    MPI_Allreduce(&mine, &smallest, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, e->comm);
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
    e->buffer_bytes = (size_t)e->sizes[fit - 1];
}

/* -M: the footprint of this run on rank 0 (ranks differ only in samples). */
static void note_footprint(engine *e)
{
    cb_footprint fp;
    footprint(e, e->buffer_bytes, &fp);
    note(e, "Memory per rank: send %zu, receive %zu, column work %zu, host staging %zu, "
            "samples %zu, check tile up to %zu; total %zu bytes, %.3f x the largest message "
            "of %zu bytes",
         fp.send, fp.recv, fp.work, fp.staging, fp.samples, fp.tile, fp.total,
         e->buffer_bytes > 0 ? (double)fp.total / (double)e->buffer_bytes : 0.0,
         e->buffer_bytes);
}

static int backend_step(engine *e, int rc)
{
    if (rc != 0)
        cb_status_set(&e->st, CB_EXIT_RUNTIME, "%s", e->b->error);
    return rc;
}

static void allocate_buffers(engine *e)
{
    cb_watchdog_doing(&e->watch, "allocating two buffers of %zu bytes", e->buffer_bytes);
    size_t work_bytes = (size_t)column_work_buffers(e->p) * e->buffer_bytes;
    if (e->ops->alloc(e->b, e->buffer_bytes, &e->send) != 0 ||
        e->ops->alloc(e->b, e->buffer_bytes, &e->recv) != 0 ||
        (work_bytes > 0 && e->ops->alloc(e->b, work_bytes, &e->work) != 0)) {
        cb_status_set(&e->st, CB_EXIT_RUNTIME, "%s", e->b->error);
        return;
    }
    if (!e->ops->host_accessible) {
        e->staging = malloc(e->buffer_bytes);
        if (e->staging == NULL)
            cb_status_set(&e->st, CB_EXIT_RUNTIME, "cannot allocate %zu bytes of host memory",
                          e->buffer_bytes);
    }
    const cb_params *p = e->p;
    e->mark_units = p->graph_launches > 0 ? p->graph_launches : p->iters;
    e->mark_stride = (e->mark_units + CB_MAX_SAMPLES - 1) / CB_MAX_SAMPLES;
    e->iters_now = e->iters_done = p->iters;
    e->sampling = e->ops->timer_reserve && e->ops->timer_mark && e->ops->timer_samples;
    int marks = sample_room(p);
    e->samples = malloc((size_t)marks * sizeof *e->samples);
    if (e->grank == 0)
        e->rank_times = malloc((size_t)e->gsize * sizeof *e->rank_times);
    if (e->samples == NULL || (e->grank == 0 && e->rank_times == NULL))
        cb_status_set(&e->st, CB_EXIT_RUNTIME, "out of memory for timing samples");
    else if (e->sampling)
        backend_step(e, e->ops->timer_reserve(e->b, marks));
}

static void free_buffers(engine *e)
{
    if (e->send)
        e->ops->free(e->b, e->send);
    if (e->recv)
        e->ops->free(e->b, e->recv);
    if (e->work)
        e->ops->free(e->b, e->work);
    free(e->staging);
    free(e->samples);
    free(e->rank_times);
    e->send = e->recv = e->staging = e->work = NULL;
    e->samples = NULL;
    e->rank_times = NULL;
}


/* Whether launches of call are grouped (-m above 1, where the backend has
 * groups). A group launches its collectives at its end, after copies
 * launched inside it: collectives with steps or copies that must follow one
 * another (hier_allreduce, the column layout) run ungrouped. */
static int launches_grouped(engine *e, const cb_collective *coll, const cb_call *call)
{
    return e->p->agg > 1 && e->ops->group_start != NULL && e->ops->group_end != NULL &&
           !(coll->flags & CB_COLL_SEQUENTIAL) && call->layout.rows == 0;
}

/* One iteration: p->agg operations, as one group when the backend groups. */
static int launch_iteration(engine *e, const cb_collective *coll, const cb_call *call)
{
    int grouped = launches_grouped(e, coll, call);
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
    /* The warmup ends before capture: graph and non-graph work overlapping
     * on one stream rely on NCCL_GRAPH_MIXING_SUPPORT, which can deadlock
     * with several communicators' graphs. */
    int rc = backend_step(e, e->ops->wait(e->b));
    if (rc == 0)
        rc = backend_step(e, e->ops->graph_begin(e->b));
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
static int time_collective(engine *e, const cb_collective *coll, const cb_call *call,
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

static double combine_time(engine *e, double mine)
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

/* Compare call's output on this rank with pat, adding to *wrong. */
static int check_output(engine *e, const cb_collective *coll, const cb_call *call,
                        const cb_pattern *pat, size_t *wrong, cb_mismatch *first)
{
    size_t esize = cb_dtype_info_of(call->dtype)->size;
    int direct = e->ops->host_accessible;
    void *output = direct ? call->recv : e->staging;
    if (!direct &&
        backend_step(e, e->ops->download(e->b, output, call->recv,
                                         call->layout.recv_count * esize)) != 0)
        return -1;
    cb_mismatch here;
    size_t n = coll->check_output(pat, e->grank, call, output, &here);
    if (n > 0 && *wrong == 0)
        *first = here;
    *wrong += n;
    return 0;
}

/* The values of check pass `pass` of one placement; pass -1: those the
 * timed iterations read (--check-timed). 0, or -1 when none can be checked. */
static int check_pattern(engine *e, const cb_call *call, int size_index, int in_place, int pass,
                         cb_pattern *pat)
{
    uint32_t what = ((uint32_t)call->dtype << 8) | (uint32_t)(call->redop + 1) |
                    ((uint32_t)(call->root + 1) << 16);
    char why[256];
    if (cb_pattern_init(pat, call->dtype, call->redop, e->gsize,
                        cb_pattern_seed((uint32_t)size_index, (uint32_t)in_place, (uint32_t)pass,
                                        what),
                        why, sizeof why) != 0)
        return -1;
    pat->avg_premultiplied = e->ops->avg_premultiplies;
    return 0;
}

/* This rank's input of pat into call's send buffer. */
static int fill_input(engine *e, const cb_collective *coll, const cb_call *call,
                      const cb_pattern *pat)
{
    size_t esize = cb_dtype_info_of(call->dtype)->size;
    int direct = e->ops->host_accessible;
    void *input = direct ? (void *)call->send : e->staging;
    coll->fill_input(pat, e->grank, call, input);
    if (!direct &&
        backend_step(e, e->ops->upload(e->b, (void *)call->send, input,
                                       call->layout.send_count * esize)) != 0)
        return -1;
    return 0;
}

/* One verification pass on this rank: fresh inputs, one launch, compare. */
static int check_pass(engine *e, const cb_collective *coll, const cb_call *call,
                      const cb_pattern *pat, size_t *wrong, cb_mismatch *first)
{
    if (fill_input(e, coll, call, pat) != 0)
        return -1;
    /* Grouped as the timed launches are, so that what a group defers to
     * its end is checked too; one operation, since a second in place would
     * change the input. */
    int grouped = launches_grouped(e, coll, call);
    if (grouped && backend_step(e, e->ops->group_start(e->b)) != 0)
        return -1;
    int rc = backend_step(e, coll->run(e->b, call));
    if (grouped) {
        int end = e->ops->group_end(e->b);
        if (rc == 0)
            rc = backend_step(e, end);
    }
    if (rc != 0 || backend_step(e, e->ops->wait(e->b)) != 0)
        return -1;
    return check_output(e, coll, call, pat, wrong, first);
}

/* Verify call with check_passes fresh inputs, after the output of the last
 * timed iteration when timed (--check-timed); fills the check fields of res. */
static void verify(engine *e, const cb_collective *coll, const cb_call *call, int size_index,
                   cb_result *res, int timed)
{
    size_t wrong = 0;
    cb_mismatch first = {0, 0, 0};
    cb_pattern pat;
    /* The sweep checked that the pattern exists for this type and reduction. */
    int failed = timed && (check_pattern(e, call, size_index, 0, -1, &pat) != 0 ||
                           check_output(e, coll, call, &pat, &wrong, &first) != 0);
    for (int pass = 0; pass < e->p->check_passes && !failed; pass++) {
        if (check_pattern(e, call, size_index, res->in_place, pass, &pat) != 0)
            return;
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

static void emit_result(engine *e, const cb_result *res)
{
    if (e->rank != 0)
        return;
    for (int i = 0; i < e->nprinters; i++)
        e->printers[i]->ops->result(e->printers[i], res);
    check_printers(e);
}

/* Rank 0 prints a result of a group and counts it. */
static void emit_counted(engine *e, const cb_result *res)
{
    e->sum.results++;
    if (!(res->collective->flags & CB_COLL_NO_DATA)) {
        e->sum.busbw_sum += res->busbw;
        e->sum.busbw_results++;
    }
    emit_result(e, res);
}

/* The line under a measurement of every group: the slowest group's time
 * and the bus bandwidth of all groups together. */
static void aggregate_note(engine *e, const cb_result *rows, const char *placement)
{
    double slowest = 0, busbw = 0;
    for (int g = 0; g < e->ngroups; g++) {
        if (rows[g].seconds > slowest)
            slowest = rows[g].seconds;
        busbw += rows[g].busbw;
    }
    note(e, "all %d groups, %llu B %s: slowest group %.2f us, busbw summed over groups %.2f GB/s",
         e->ngroups, (unsigned long long)rows[0].bytes, placement, slowest * 1e6, busbw);
}

#define CB_SPLIT_TAG 0x5b17

/* --split: each group's rank 0 sends its result to rank 0, which prints one
 * row per group (out-of-place and in-place halves together) and an
 * aggregate line; the wrong counts of every group add up on every rank. */
static int emit_split(engine *e, const cb_collective *coll, cb_result *res, int slowest_rank,
                      int last_half)
{
    unsigned long long mine = e->grank == 0 ? res->wrong : 0, total = 0;
    MPI_Allreduce(&mine, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, e->comm);
    e->sum.wrong += total;
    struct {
        cb_result res;
        int slowest_rank;
    } msg;
    memset(&msg, 0, sizeof msg);
    msg.res = *res;
    /* Pointers mean nothing in another process; rank 0 sets them again. */
    msg.res.collective = NULL;
    msg.res.rank_times = NULL;
    msg.slowest_rank = slowest_rank;
    if (e->rank != 0) {
        if (e->grank == 0)
            MPI_Send(&msg, (int)sizeof msg, MPI_BYTE, 0, CB_SPLIT_TAG, e->comm);
        return agree(e);
    }
    cb_result *rows = calloc((size_t)e->ngroups, sizeof *rows);
    if (rows == NULL)
        cb_status_set(&e->st, CB_EXIT_RUNTIME, "out of memory for %d group results", e->ngroups);
    for (int g = 0; g < e->ngroups; g++) {
        if (g != e->group)
            MPI_Recv(&msg, (int)sizeof msg, MPI_BYTE, e->leaders[g], CB_SPLIT_TAG, e->comm,
                     MPI_STATUS_IGNORE);
        else {
            msg.res = *res;
            msg.slowest_rank = slowest_rank;
        }
        msg.res.collective = coll;
        msg.res.rank_times = NULL;
        snprintf(msg.res.slowest_host, sizeof msg.res.slowest_host, "%s",
                 e->ranks[msg.slowest_rank].host);
        if (rows != NULL)
            rows[g] = msg.res;
    }
    if (rows != NULL && last_half && !res->in_place) {
        for (int g = 0; g < e->ngroups; g++)
            emit_counted(e, &rows[g]);
        aggregate_note(e, rows, "out-of-place");
    } else if (rows != NULL && !res->in_place) {
        memcpy(e->split_oop, rows, (size_t)e->ngroups * sizeof *rows);
    } else if (rows != NULL) {
        for (int g = 0; g < e->ngroups; g++) {
            emit_counted(e, &e->split_oop[g]);
            emit_counted(e, &rows[g]);
        }
        aggregate_note(e, e->split_oop, "out-of-place");
        aggregate_note(e, rows, "in-place");
    }
    free(rows);
    return agree(e);
}

/* One measurement: one size, one placement. Returns the agreed status. */
static int measure(engine *e, const cb_collective *coll, cb_call *call, int size_index,
                   uint64_t bytes, int in_place, int last_half, int checkable)
{
    size_t esize = cb_dtype_info_of(call->dtype)->size;
    const cb_layout *l = &call->layout;
    call->recv = e->recv;
    call->send = e->send;
    if (in_place) {
        /* One buffer holds both sides, as the collective's layout places them. */
        size_t rank = (size_t)e->grank;
        call->send = (char *)e->recv + (l->inplace_offset + rank * l->inplace_send_stride) * esize;
        call->recv = (char *)e->recv + rank * l->inplace_recv_stride * esize;
    }

    cb_result res;
    memset(&res, 0, sizeof res);
    res.collective = coll;
    res.dtype = call->dtype;
    res.redop = call->redop;
    res.root = call->root;
    res.bytes = bytes;
    res.count = call->layout.count;
    res.in_place = in_place;
    res.warmup_iters = e->p->warmup;
    res.group = e->p->split.kind != CB_SPLIT_NONE ? e->group : -1;
    res.layout = call->layout.rows != 0 ? CB_LAYOUT_COL : CB_LAYOUT_ROW;
    res.rows = call->layout.rows;
    res.cols = (size_t)e->gsize * call->layout.width;
    res.group_ranks = e->gsize;

    snprintf(e->measuring, sizeof e->measuring, "%s %s %s root %d, %llu B %s", coll->name,
             cb_dtype_info_of(call->dtype)->name, cb_redop_name(call->redop), call->root,
             (unsigned long long)bytes, in_place ? "in-place" : "out-of-place");
    /* --check-timed: out of place, the timed iterations read checkable input
     * they never change, and the last one's output is checked with it. */
    int timed = checkable && !in_place && e->p->check_timed;
    cb_pattern timed_pat;
    if (timed && check_pattern(e, call, size_index, 0, -1, &timed_pat) == 0)
        fill_input(e, coll, call, &timed_pat);
    cb_rank_time mine;
    memset(&mine, 0, sizeof mine);
    time_collective(e, coll, call, &mine);
    if (agree(e) != CB_EXIT_OK)
        return e->st.code;
    res.iters = e->iters_done;   /* the same on every rank */
    res.seconds = combine_time(e, mine.mean);
    MPI_Gather(&mine, (int)sizeof mine, MPI_BYTE, e->rank_times, (int)sizeof mine, MPI_BYTE, 0,
               e->gcomm);
    int slowest_rank = 0;   /* in comm */
    if (e->grank == 0) {
        cb_stats_spread(e->rank_times, e->gsize, &res.spread);
        res.slowest = e->rank_times[res.spread.slowest];
        res.rank_times = e->rank_times;
        slowest_rank = e->gmembers[res.spread.slowest];
        if (e->rank == 0)
            snprintf(res.slowest_host, sizeof res.slowest_host, "%s",
                     e->ranks[slowest_rank].host);
    }
    res.algbw = res.seconds > 0 ? (double)bytes / 1e9 / res.seconds : 0;
    res.busbw = res.algbw * coll->busbw_factor(e->gsize);

    if (checkable) {
        cb_watchdog_doing(&e->watch, "%s, verification", e->measuring);
        verify(e, coll, call, size_index, &res, timed);
    }
    if (e->st.code != CB_EXIT_OK)
        return e->st.code;
    if (e->p->split.kind != CB_SPLIT_NONE)
        return emit_split(e, coll, &res, slowest_rank, last_half);

    e->sum.results++;
    if (!(coll->flags & CB_COLL_NO_DATA)) {
        e->sum.busbw_sum += res.busbw;
        e->sum.busbw_results++;
    }
    e->sum.wrong += res.wrong;
    emit_result(e, &res);
    return agree(e);
}

/* Whether every rank's backend runs this type and reduction; a note when not. */
static int supported_everywhere(engine *e, const cb_collective *coll, cb_dtype dtype,
                                cb_redop redop)
{
    char why[256] = "";
    if (coll->accepts != NULL && !coll->accepts(redop, why, sizeof why)) {
        note(e, "skipped %s %s %s: %s", coll->name, cb_dtype_info_of(dtype)->name,
             cb_redop_name(redop), why);
        return 0;
    }
    int supported = e->ops->supports(e->b, dtype, redop, why, sizeof why), everywhere = 0;
    MPI_Allreduce(&supported, &everywhere, 1, MPI_INT, MPI_MIN, e->comm);
    if (!everywhere)
        note(e, "skipped %s %s %s: %s", coll->name, cb_dtype_info_of(dtype)->name,
             cb_redop_name(redop), why[0] ? why : "not supported on some rank");
    return everywhere;
}

/* Every size for one (collective, type, reduction, root). */
static int sweep(engine *e, const cb_collective *coll, cb_dtype dtype, cb_redop redop, int root)
{
    const cb_dtype_info *info = cb_dtype_info_of(dtype);
    if (coll->flags & CB_COLL_NO_DATA) {
        /* One row: no size to sweep, no placement, nothing to verify. */
        cb_call call = {.dtype = dtype, .redop = redop, .root = root, .state = e->coll_state};
        if (coll->layout(0, info->size, e->gsize, &call.layout) != 0)
            return CB_EXIT_OK;
        if (e->p->check_passes > 0)
            note(e, "%s moves no data: one row at size 0, not verified", coll->name);
        return measure(e, coll, &call, 0, 0, 0, 1, 0);
    }
    char why[256] = "";
    cb_pattern probe;
    int checkable = e->p->check_passes > 0 &&
                    cb_pattern_init(&probe, dtype, redop, e->gsize, 0, why, sizeof why) == 0;
    if (e->p->split.kind != CB_SPLIT_NONE)
        MPI_Allreduce(MPI_IN_PLACE, &checkable, 1, MPI_INT, MPI_MIN, e->comm);
    if (e->p->check_passes > 0 && !checkable)
        note(e, "%s %s %s not checked: %s", coll->name, info->name, cb_redop_name(redop), why);
    for (int s = 0; s < e->nsizes; s++) {
        cb_call call = {.dtype = dtype, .redop = redop, .root = root, .work = e->work,
                        .state = e->coll_state};
        int fits = coll->layout((size_t)e->sizes[s], info->size, e->gsize, &call.layout) == 0;
        if (fits && e->layout_now == CB_LAYOUT_COL)
            cb_layout_set_columns(&call.layout, e->gsize, coll->column_work);
        /* With --split, every group measures the same sizes. */
        if (e->p->split.kind != CB_SPLIT_NONE)
            MPI_Allreduce(MPI_IN_PLACE, &fits, 1, MPI_INT, MPI_MIN, e->comm);
        if (!fits) {
            note(e, "skipped %s %s %s %llu B: too small to give every rank a whole element",
                 coll->name, info->name, cb_redop_name(redop), (unsigned long long)e->sizes[s]);
            continue;
        }
        /* The size column is what really moves: whole elements only. */
        size_t largest = call.layout.send_count > call.layout.recv_count
                             ? call.layout.send_count
                             : call.layout.recv_count;
        uint64_t bytes = (uint64_t)largest * info->size;
        /* A column slice is not contiguous, so a column layout has no in-place
         * form: out of place only. */
        int placements = call.layout.rows != 0 ? 1 : 2;
        for (int in_place = 0; in_place < placements; in_place++)
            if (measure(e, coll, &call, s, bytes, in_place, in_place == placements - 1,
                        checkable) != CB_EXIT_OK)
                return e->st.code;
        report_progress(e, coll, dtype, redop, s + 1, e->nsizes);
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
        first_root = p->root < 0 ? 0 : p->root;
        /* With --split, roots every group has. */
        last_root = p->root < 0 ? e->min_gsize - 1 : p->root;
    }
    int nredops = (coll->flags & CB_COLL_REDUCES) ? p->nredops : 1;
    /* A collective that moves no data is measured once, for the first type. */
    int ndtypes = (coll->flags & CB_COLL_NO_DATA) ? 1 : p->ndtypes;
    for (int t = 0; t < ndtypes; t++)
        for (int r = 0; r < nredops; r++) {
            cb_redop redop = (coll->flags & CB_COLL_REDUCES) ? p->redops[r] : CB_REDOP_NONE;
            if (!supported_everywhere(e, coll, p->dtypes[t], redop))
                continue;
            for (int root = first_root; root <= last_root; root++)
                if (sweep(e, coll, p->dtypes[t], redop, root) != CB_EXIT_OK)
                    return e->st.code;
        }
    return CB_EXIT_OK;
}

/* One collective in one layout: its table, its set-up, its sweeps. */
static int run_collective(engine *e, const cb_collective *coll, cb_layout_kind layout)
{
    e->layout_now = layout;
    if (e->rank == 0)
        for (int i = 0; i < e->nprinters; i++)
            e->printers[i]->ops->table_begin(e->printers[i], coll, layout);
    if (coll->available != NULL && !coll->available(e->ops)) {
        if (coll->needs != NULL)
            note(e, "skipped %s on the %s backend: needs %s", coll->name, e->ops->name,
                 coll->needs);
        else
            note(e, "skipped %s: the %s backend does not implement it", coll->name,
                 e->ops->name);
        return CB_EXIT_OK;
    }
    if (layout == CB_LAYOUT_COL && e->ops->copy2d == NULL) {
        note(e, "skipped %s in column layout: the %s backend has no 2-D copy", coll->name,
             e->ops->name);
        return CB_EXIT_OK;
    }
    if (coll->prepare == NULL)
        return run_combinations(e, coll);

    cb_watchdog_doing(&e->watch, "setting up %s's groups", coll->name);
    /* This rank's inner group among the ranks measured together. */
    int color = spec_color(e, &e->p->hier, "--hier-split", e->gcomm);
    /* A bad colour list stops every rank before the collective set-up. */
    if (agree(e) != CB_EXIT_OK)
        return e->st.code;
    char what[256];
    snprintf(what, sizeof what, "%s inner groups (--hier-split %s)%s", coll->name,
             e->p->hier.text, e->p->split.kind != CB_SPLIT_NONE ? ", ranks of split group 0" : "");
    note_groups(e, e->gcomm, what, "", color);
    e->coll_state = NULL;
    if (coll->prepare(e->b, color, &e->coll_state) != 0)
        cb_status_set(&e->st, CB_EXIT_RUNTIME, "setting up %s failed: %s", coll->name,
                      e->b->error);
    if (agree(e) == CB_EXIT_OK)
        run_combinations(e, coll);
    coll->release(e->coll_state, e->st.code != CB_EXIT_OK);
    e->coll_state = NULL;
    return e->st.code;
}

static int run_collectives(engine *e)
{
    const cb_params *p = e->p;
    for (int c = 0; c < p->ncollectives; c++) {
        const cb_collective *coll = p->collectives[c];
        /* Collectives without a column layout run once, in rows. */
        int ran_rows = 0;
        for (int l = 0; l < p->nlayouts; l++) {
            cb_layout_kind layout = p->layouts[l];
            if (layout == CB_LAYOUT_COL && coll->column_work == 0)
                layout = CB_LAYOUT_ROW;
            if (layout == CB_LAYOUT_ROW && ran_rows++)
                continue;
            if (run_collective(e, coll, layout) != CB_EXIT_OK)
                return e->st.code;
        }
    }
    return CB_EXIT_OK;
}

int cb_engine_run(const cb_params *p, MPI_Comm comm)
{
    engine *e = calloc(1, sizeof *e);
    int local_ok = e != NULL, all_ok = 0;
    MPI_Allreduce(&local_ok, &all_ok, 1, MPI_INT, MPI_MIN, comm);
    if (!all_ok) {
        fprintf(stderr, "nccl-collbench: out of memory at start-up\n");
        free(e);
        return CB_EXIT_RUNTIME;
    }
    e->p = p;
    e->comm = comm;
    MPI_Comm_rank(comm, &e->rank);
    MPI_Comm_size(comm, &e->nranks);
    e->gcomm = comm;   /* until split_groups */
    e->grank = e->rank;
    e->gsize = e->min_gsize = e->nranks;
    int len = 0;
    char name[MPI_MAX_PROCESSOR_NAME];
    MPI_Get_processor_name(name, &len);
    snprintf(e->host, sizeof e->host, "%.*s", (int)sizeof e->host - 1, name);
    cb_status_clear(&e->st);
    choose_progress(e);
    if (cb_watchdog_start(&e->watch, p->timeout, e->rank, e->host) != 0)
        cb_status_set(&e->st, CB_EXIT_RUNTIME, "cannot start the watchdog thread");

    open_printers(e);
    if (agree(e) == CB_EXIT_OK)
        select_backend(e);
    if (agree(e) == CB_EXIT_OK)
        split_groups(e);
    if (agree(e) == CB_EXIT_OK)
        start_backend(e);
    if (agree(e) == CB_EXIT_OK)
        gather_ranks(e);
    if (agree(e) == CB_EXIT_OK)
        plan_sizes(e);
    if (agree(e) == CB_EXIT_OK)
        allocate_buffers(e);
    if (agree(e) == CB_EXIT_OK) {
        describe_run(e);
        if (e->rank == 0)
            for (int i = 0; i < e->nprinters; i++)
                e->printers[i]->ops->begin(e->printers[i], &e->run);
        describe_groups(e);
        if (e->size_notice[0] != '\0')
            note(e, "%s", e->size_notice);
        if (e->backend_notice[0] != '\0')
            note(e, "%s", e->backend_notice);
        char unused[CB_MSGLEN];
        for (int i = 0; cb_params_note(p, i, unused, sizeof unused); i++)
            note(e, "%s", unused);
        if (p->memory_report)
            note_footprint(e);
        run_collectives(e);
    }
    if (e->progress == 1) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }
    int failed = e->st.code != CB_EXIT_OK;
    end_printers(e);
    agree(e);
    cb_watchdog_doing(&e->watch, "shutting the %s backend down", e->ops ? e->ops->name : "");
    free_buffers(e);
    cb_watchdog_set_abort(&e->watch, NULL, NULL);
    if (e->b != NULL)
        e->ops->fini(e->b, failed);
    cb_watchdog_stop(&e->watch);
    free(e->ranks);
    free(e->gmembers);
    free(e->leaders);
    free(e->split_oop);
    if (e->gcomm != e->comm && e->gcomm != MPI_COMM_NULL)
        MPI_Comm_free(&e->gcomm);

    int code = e->st.code;
    if (code == CB_EXIT_OK && e->sum.wrong > 0)
        code = CB_EXIT_WRONG;
    free(e);
    return code;
}
