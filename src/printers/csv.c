/*
 * CSV, schema version 1 (nccl-collbench(1), section CSV OUTPUT). Every row
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

#include "outfile.h"
#include "printer.h"

#define CB_CSV_SCHEMA_VERSION 1
#define CB_CSV_ROWLEN 4096

static const char *const csv_columns[] = {
    "schema_version", "run_id", "start_utc", "tool_version", "backend", "library",
    "mpi_library", "device", "ranks", "nodes", "ranks_per_node", "collective", "datatype",
    "redop", "root", "bytes", "count", "placement", "warmup_iters", "iters", "time_us",
    "time_combine", "algbw_gbps", "busbw_gbps", "wrong", "check_passes",
    /* added at the end, as the compatibility rule says */
    "agg", "graph_launches", "blocking", "time_kind", "iter_samples", "iter_min_us",
    "iter_median_us", "iter_p99_us", "iter_max_us", "rank_time_min_us", "rank_time_mean_us",
    "rank_time_max_us", "slowest_rank", "slowest_host",
    "group",
    "layout", "matrix_rows", "matrix_cols",
};

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

/* Seconds as microseconds; empty when unknown (NaN). */
static void row_micros(row *r, double seconds)
{
    if (isnan(seconds))
        row_field(r, "");
    else
        row_fieldf(r, "%.6f", seconds * 1e6);
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
    for (size_t i = 0; i < sizeof csv_columns / sizeof csv_columns[0]; i++)
        row_field(&r, csv_columns[i]);
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

static void csv_ignore_collective(cb_printer *pr, const cb_collective *coll,
                                  cb_layout_kind layout)
{
    (void)pr;
    (void)coll;
    (void)layout;
}

static void csv_ignore_note(cb_printer *pr, const char *text)
{
    (void)pr;
    (void)text;
}

static void csv_result(cb_printer *pr, const cb_result *res)
{
    const cb_run_info *run = ((csv_printer *)pr)->run;
    const cb_params *p = run->params;
    row r = {.len = 0};
    row_fieldf(&r, "%d", CB_CSV_SCHEMA_VERSION);
    row_field(&r, run->run_id);
    row_field(&r, run->start_utc);
    row_field(&r, run->tool_version);
    row_field(&r, run->backend);
    row_field(&r, run->ranks[0].device.library);
    row_field(&r, run->mpi_library);
    row_field(&r, run->ranks[0].device.model);
    row_fieldf(&r, "%d", run->nranks);
    row_fieldf(&r, "%d", run->nnodes);
    row_fieldf(&r, "%d", run->ranks_per_node);
    row_field(&r, res->collective->name);
    row_field(&r, cb_dtype_info_of(res->dtype)->name);
    row_field(&r, cb_redop_name(res->redop));
    row_fieldf(&r, "%d", res->root);
    row_fieldf(&r, "%llu", (unsigned long long)res->bytes);
    row_fieldf(&r, "%zu", res->count);
    row_field(&r, res->in_place ? "in-place" : "out-of-place");
    row_fieldf(&r, "%d", res->warmup_iters);
    row_fieldf(&r, "%d", res->iters);
    row_fieldf(&r, "%.6f", res->seconds * 1e6);
    row_field(&r, cb_average_name(p->average));
    row_fieldf(&r, "%.6f", res->algbw);
    row_fieldf(&r, "%.6f", res->busbw);
    if (res->check_passes)
        row_fieldf(&r, "%llu", (unsigned long long)res->wrong);
    else
        row_field(&r, "");
    row_fieldf(&r, "%d", res->check_passes);
    row_fieldf(&r, "%d", p->agg);
    row_fieldf(&r, "%d", p->graph_launches);
    row_fieldf(&r, "%d", p->blocking);
    row_field(&r, p->report_cputime ? "cpu" : "completion");
    const cb_rank_time *slow = &res->slowest;
    row_fieldf(&r, "%d", slow->samples);
    row_micros(&r, slow->min);
    row_micros(&r, slow->median);
    row_micros(&r, slow->p99);
    row_micros(&r, slow->max);
    row_micros(&r, res->spread.min);
    row_micros(&r, res->spread.mean);
    row_micros(&r, res->spread.max);
    row_fieldf(&r, "%d", res->spread.slowest);
    row_field(&r, res->slowest_host);
    if (res->group >= 0)
        row_fieldf(&r, "%d", res->group);
    else
        row_field(&r, "");
    row_field(&r, res->layout == CB_LAYOUT_COL ? "col" : "row");
    if (res->rows > 0) {
        row_fieldf(&r, "%zu", res->rows);
        row_fieldf(&r, "%zu", res->cols);
    } else {
        row_field(&r, "");
        row_field(&r, "");
    }
    row_emit(pr, &r);
}

static void csv_end(cb_printer *pr, const cb_summary *sum)
{
    (void)pr;
    (void)sum;
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

const cb_printer_ops cb_printer_csv = {
    .name = "csv",
    .open = csv_open,
    .begin = csv_begin,
    .table_begin = csv_ignore_collective,
    .note = csv_ignore_note,
    .result = csv_result,
    .end = csv_end,
    .close = csv_close,
};
