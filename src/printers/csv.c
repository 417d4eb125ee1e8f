/*
 * CSV, schema version 1 (nccl-collbench-output(5), section CSV OUTPUT). Every row
 * carries the run's identity so that files from many runs can be
 * concatenated. Rules: new columns only ever go at the end; renaming a column
 * or changing its meaning bumps CB_CSV_SCHEMA_VERSION.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "safety/outfile.h"
#include "printers/printer.h"

/* Defined at the end of this file, listed in formats.c. */
extern const cb_printer_ops cb_printer_csv;

#define CB_CSV_SCHEMA_VERSION 1
#define CB_CSV_ROWLEN 4096

typedef struct csv_printer {
    cb_printer base;
    const cb_run_info *run;
    cb_outfile file;       /* a file's; fd -1 when the CSV goes to stdout */
} csv_printer;

/* A row being built; overflow is recorded, never written half. */
typedef struct row {
    char text[CB_CSV_ROWLEN];
    size_t len;
    int overflow;
} row;

static void row_raw(row *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void row_raw(row *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(r->text + r->len, sizeof r->text - r->len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof r->text - r->len)
        r->overflow = 1;
    else
        r->len += (size_t)n;
}

/* One field, quoted per RFC 4180 when it holds a comma, quote or line break. */
static void row_field(row *r, const char *value)
{
    if (r->len > 0)
        row_raw(r, ",");
    if (strpbrk(value, ",\"\r\n") == NULL) {
        row_raw(r, "%s", value);
        return;
    }
    row_raw(r, "\"");
    for (const char *p = value; *p; p++)
        row_raw(r, *p == '"' ? "\"\"" : "%c", *p);
    row_raw(r, "\"");
}

static void row_fieldf(row *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void row_fieldf(row *r, const char *fmt, ...)
{
    char value[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(value, sizeof value, fmt, ap);
    va_end(ap);
    row_field(r, value);
}

/* A measured figure; empty when unknown (NaN or infinite: a scan part
 * with one rank has no time), never "nan", which readers refuse. */
static void row_real(row *r, double value)
{
    if (isfinite(value))
        row_fieldf(r, "%.6f", value);
    else
        row_field(r, "");
}

/* Seconds as microseconds; empty when unknown. */
static void row_micros(row *r, double seconds)
{
    row_real(r, seconds * 1e6);
}

/* Whole rows only: one write per row (cut back when the disk fills part
 * way), so an interrupted run leaves every finished row readable. */
static void row_emit(cb_printer *pr, row *r)
{
    csv_printer *cp = (csv_printer *)pr;
    row_raw(r, "\n");
    if (pr->write_failed)
        return;
    if (r->overflow) {
        pr->write_failed = 1;
        snprintf(pr->failure, sizeof pr->failure, "a CSV row is longer than %d bytes",
                 CB_CSV_ROWLEN);
    } else if (cp->file.fd >= 0) {
        if (cb_outfile_write_whole(&cp->file, r->text, r->len) != 0) {
            pr->write_failed = 1;
            snprintf(pr->failure, sizeof pr->failure, "writing the CSV file '%s' failed: %s",
                     cp->file.path, strerror(errno));
        }
    } else if (fwrite(r->text, 1, r->len, pr->out) != r->len || fflush(pr->out) != 0) {
        pr->write_failed = 1;
        snprintf(pr->failure, sizeof pr->failure, "writing the CSV to standard output "
                 "failed: %s", strerror(errno));
    }
}

/* The cells that are empty when they do not apply. */
static void row_wrong(row *r, const cb_result *res)
{
    if (res->check_passes)
        row_fieldf(r, "%llu", (unsigned long long)res->wrong);
    else
        row_field(r, "");
}

/* -B: a count, empty where the launches were not compared. */
static void row_repeat(row *r, const cb_result *res, uint64_t n)
{
    if (res->repeat.repeat_checked > 0)
        row_fieldf(r, "%llu", (unsigned long long)n);
    else
        row_field(r, "");
}

/* torchrun's attempt; empty outside torchrun's elastic agent. */
static void row_restart(row *r, int restart_count)
{
    if (restart_count >= 0)
        row_fieldf(r, "%d", restart_count);
    else
        row_field(r, "");
}

static void row_unrepeatable_rank(row *r, const cb_result *res)
{
    if (res->repeat.unrepeatable > 0)
        row_fieldf(r, "%d", res->repeat.unrepeatable_rank);
    else
        row_field(r, "");
}

static void row_group(row *r, const cb_result *res)
{
    if (res->split.group >= 0)
        row_fieldf(r, "%d", res->split.group);
    else
        row_field(r, "");
}

/* --expect: a figure, empty where the row has no expectation. */
static void row_expected(row *r, const cb_result *res, double value)
{
    if (res->expected_busbw > 0)
        row_fieldf(r, "%.6g", value);  /* a floor may be 1e-9 GB/s or 1e9 */
    else
        row_field(r, "");
}

/* A matrix dimension, empty outside the column layout. */
static void row_matrix(row *r, const cb_result *res, size_t dimension)
{
    if (res->rows > 0)
        row_fieldf(r, "%zu", dimension);
    else
        row_field(r, "");
}

/* -o scan: a pair's round, empty elsewhere. */
static void row_scan_round(row *r, const cb_result *res)
{
    if (res->scan.scan_part != NULL && res->scan.round >= 0)
        row_fieldf(r, "%d", res->scan.round);
    else
        row_field(r, "");
}

/* The columns, in order: each one's header name and how a row fills its
 * cell from the run (run), its parameters (set) and the result (res). The
 * header and the rows both come from this list, so they cannot drift
 * apart. New columns only ever go at the end. */
#define CSV_COLUMNS(X)                                                     \
    X(schema_version, row_fieldf(r, "%d", CB_CSV_SCHEMA_VERSION))          \
    X(run_id, row_field(r, run->run_id))                                   \
    X(start_utc, row_field(r, run->start_utc))                             \
    X(tool_version, row_field(r, run->tool_version))                       \
    X(backend, row_field(r, run->backend))                                 \
    X(library, row_field(r, run->ranks[0].device.library))                 \
    X(mpi_library, row_field(r, run->mpi_library))                         \
    X(device, row_field(r, run->ranks[0].device.model))                    \
    X(ranks, row_fieldf(r, "%d", run->nranks))                             \
    X(nodes, row_fieldf(r, "%d", run->nnodes))                             \
    X(ranks_per_node, row_fieldf(r, "%d", run->ranks_per_node))            \
    X(collective, row_field(r, res->collective->name))                     \
    X(datatype, row_field(r, cb_dtype_info_of(res->dtype)->name))          \
    X(redop, row_field(r, cb_redop_name(res->redop)))                      \
    X(root, row_fieldf(r, "%d", res->root))                                \
    X(bytes, row_fieldf(r, "%llu", (unsigned long long)res->bytes))        \
    X(count, row_fieldf(r, "%zu", res->count))                             \
    X(placement, row_field(r, res->in_place ? "in-place" : "out-of-place")) \
    X(warmup_iters, row_fieldf(r, "%d", res->warmup_iters))                \
    X(iters, row_fieldf(r, "%d", res->iters))                              \
    X(time_us, row_micros(r, res->seconds))                                 \
    X(time_combine, row_field(r, cb_average_name(set->timing.average)))                       \
    X(algbw_gbps, row_real(r, res->algbw))                                 \
    X(busbw_gbps, row_real(r, res->busbw))                                 \
    X(wrong, row_wrong(r, res))                                            \
    X(check_passes, row_fieldf(r, "%d", res->check_passes))                \
    X(agg, row_fieldf(r, "%d", set->timing.agg))                                  \
    X(graph_launches, row_fieldf(r, "%d", set->timing.graph_launches))            \
    X(blocking, row_fieldf(r, "%d", set->timing.blocking != 0))                   \
    X(time_kind, row_field(r, set->timing.report_cputime ? "cpu" : "completion")) \
    X(iter_samples, row_fieldf(r, "%d", res->slowest.samples))             \
    X(iter_min_us, row_micros(r, res->slowest.min))                        \
    X(iter_median_us, row_micros(r, res->slowest.median))                  \
    X(iter_p99_us, row_micros(r, res->slowest.p99))                        \
    X(iter_max_us, row_micros(r, res->slowest.max))                        \
    X(rank_time_min_us, row_micros(r, res->spread.min))                    \
    X(rank_time_mean_us, row_micros(r, res->spread.mean))                  \
    X(rank_time_max_us, row_micros(r, res->spread.max))                    \
    X(slowest_rank, row_fieldf(r, "%d", res->spread.slowest))              \
    X(slowest_host, row_field(r, res->slowest_host))                       \
    X(group, row_group(r, res))                                            \
    X(layout, row_field(r, res->layout == CB_LAYOUT_COL ? "col" : "row"))  \
    X(matrix_rows, row_matrix(r, res, res->rows))                          \
    X(matrix_cols, row_matrix(r, res, res->cols))                          \
    X(group_ranks, row_fieldf(r, "%d", res->split.group_ranks))                 \
    X(scan_part, row_field(r, res->scan.scan_part ? res->scan.scan_part : ""))       \
    X(host, row_field(r, res->scan.scan_part ? res->scan.host : ""))                 \
    X(peer_host, row_field(r, res->scan.scan_part ? res->scan.peer_host : ""))       \
    X(round, row_scan_round(r, res))                                       \
    X(cycle, row_fieldf(r, "%d", res->cycle))                              \
    X(timestamp_utc, row_field(r, res->timestamp_utc))                     \
    X(traffic_matrix, row_field(r, res->traffic_matrix))                   \
    X(impl, row_field(r, res->impl ? res->impl : ""))                      \
    X(unalign, row_fieldf(r, "%d", res->scan.scan_part ? 0 : set->sizes.unalign))      \
    X(comm_op, row_field(r, res->comm_op))                                 \
    X(rank_time_median_us, row_micros(r, res->spread.median))              \
    X(expected_busbw_gbps, row_expected(r, res, res->expected_busbw))      \
    X(efficiency, row_expected(r, res, res->efficiency))                   \
    X(group_host, row_field(r, res->split.group_host))                           \
    X(allocator, row_field(r, run->allocator ? run->allocator : ""))       \
    X(registration, row_field(r, run->registration ? run->registration : ""))   \
    X(repeat_checked, row_fieldf(r, "%llu", (unsigned long long)res->repeat.repeat_checked)) \
    X(unrepeatable, row_repeat(r, res, res->repeat.unrepeatable))                  \
    X(unrepeatable_elements, row_repeat(r, res, res->repeat.unrepeatable_elements)) \
    X(unrepeatable_rank, row_unrepeatable_rank(r, res))                     \
    X(unrepeatable_host,                                                    \
      row_field(r, res->repeat.unrepeatable > 0 ? res->repeat.unrepeatable_host : "")) \
    X(clock, row_field(r, cb_clock_name(set->timing.clock)))                                      \
    X(blocking_mode, row_fieldf(r, "%d", set->timing.blocking))                   \
    X(rotate, row_fieldf(r, "%d", set->timing.rotate))                            \
    X(restart_count, row_restart(r, run->restart_count))

static void row_header(row *r)
{
#define CSV_HEADER_CELL(name, cell) row_field(r, #name);
    CSV_COLUMNS(CSV_HEADER_CELL)
#undef CSV_HEADER_CELL
}

static void row_result(row *r, const cb_run_info *run, const cb_result *res)
{
    const cb_params *set = run->params;
#define CSV_RESULT_CELL(name, cell) cell;
    CSV_COLUMNS(CSV_RESULT_CELL)
#undef CSV_RESULT_CELL
}

static cb_printer *csv_open(const char *path, char *err, size_t err_len)
{
    csv_printer *cp = calloc(1, sizeof *cp);
    if (cp == NULL) {
        snprintf(err, err_len, "out of memory");
        return NULL;
    }
    cp->base.ops = &cb_printer_csv;
    cp->file.fd = -1;
    int to_file = strcmp(path, "-") != 0;
    if (to_file ? cb_outfile_open(&cp->file, path, err, err_len) != 0
                : cb_printer_open_stream(&cp->base, path, err, err_len) != 0) {
        free(cp);
        return NULL;
    }
    /* The header goes out at once: a run that fails early leaves a valid,
     * empty table, and a file that cannot be written fails before measuring.
     * A file takes its name then, not at the end, so that a run killed part
     * way (after the launcher's grace period) keeps the rows it measured. */
    row r = {.len = 0};
    row_header(&r);
    row_emit(&cp->base, &r);
    if (cp->base.write_failed || (to_file && cb_outfile_commit(&cp->file, err, err_len) != 0)) {
        if (cp->base.write_failed)
            snprintf(err, err_len, "%s", cp->base.failure);
        cb_outfile_close(&cp->file);
        free(cp);
        return NULL;
    }
    return &cp->base;
}

static void csv_begin(cb_printer *pr, const cb_run_info *run)
{
    ((csv_printer *)pr)->run = run;
}

/* One line per result: the out-of-place one, then the in-place one. */
static void csv_result(cb_printer *pr, const cb_row *pair)
{
    const cb_result *halves[2] = {pair->out_of_place, pair->in_place};
    for (int h = 0; h < 2 && halves[h] != NULL; h++) {
        row r = {.len = 0};
        row_result(&r, ((csv_printer *)pr)->run, halves[h]);
        row_emit(pr, &r);
    }
}

static int csv_close(cb_printer *pr, char *err, size_t err_len)
{
    csv_printer *cp = (csv_printer *)pr;
    int rc = 0;
    if (pr->write_failed) {
        snprintf(err, err_len, "%s", pr->failure);
        rc = -1;
    } else if (cp->file.fd >= 0 && close(cp->file.fd) != 0) {
        snprintf(err, err_len, "writing the CSV file '%s' failed: %s", cp->file.path,
                 strerror(errno));
        rc = -1;
    } else if (cp->file.fd < 0) {
        rc = cb_printer_close_stream(pr, "CSV", err, err_len);
    }
    cp->file.fd = -1;
    cb_outfile_close(&cp->file);
    free(pr);
    return rc;
}

static const char *csv_destination(const cb_params *p)
{
    return p->out.csv_path != NULL ? p->out.csv_path : cb_params_output(p, "csv");
}

const cb_printer_ops cb_printer_csv = {
    .name = "csv",
    .option = "--csv",
    .destination = csv_destination,
    .open = csv_open,
    .begin = csv_begin,
    .result = csv_result,
    .close = csv_close,
};
