#include "report.h"
#include "common/grow.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/json_text.h"
#include "safety/outfile.h"

const char *const verdict_names[VERDICT_COUNT] = {
    "ok", "REGRESSED", "WRONG RESULTS", "BELOW FLOOR", "MISSING IN NEW", "missing (allowed)",
};
/* The same, as JSON values. */
static const char *const verdict_keys[VERDICT_COUNT] = {
    "ok", "regressed", "wrong_results", "below_floor", "missing", "missing_allowed",
};

void report_init(report *r)
{
    memset(r, 0, sizeof *r);
}

report_row *report_add(report *r)
{
    report_row *grown = cb_grow(r->rows, &r->cap, r->nrows, sizeof *grown, 64);
    if (grown == NULL)
        return NULL;
    r->rows = grown;
    report_row *row = &r->rows[r->nrows++];
    memset(row, 0, sizeof *row);
    return row;
}

static void tally(report_tally *t, const report_row *row)
{
    t->count[row->verdict]++;
    if (row->verdict != VERDICT_OK && row->verdict != VERDICT_MISSING_ALLOWED)
        t->failed++;
    if (row->matched) {
        if (t->compared == 0 || row->j.change > t->worst_change)
            t->worst_change = row->j.change;
        t->compared++;
    }
}

/* Row indices sorted by collective name, then by their order. */
typedef struct named_row {
    const char *collective;
    size_t index;
} named_row;

static int by_collective(const void *a, const void *b)
{
    const named_row *x = a, *y = b;
    int c = strcmp(x->collective, y->collective);
    return c ? c : (x->index < y->index ? -1 : x->index > y->index);
}

int report_summarise(report *r, const gate_side *base)
{
    memset(&r->total, 0, sizeof r->total);
    named_row *named = calloc(r->nrows ? r->nrows : 1, sizeof *named);
    r->tallies = calloc(r->nrows ? r->nrows : 1, sizeof *r->tallies);
    if (named == NULL || r->tallies == NULL) {
        free(named);
        return -1;
    }
    for (size_t i = 0; i < r->nrows; i++) {
        named[i] = (named_row){gate_field(base, r->rows[i].entry, "collective"), i};
        tally(&r->total, &r->rows[i]);
    }
    qsort(named, r->nrows, sizeof *named, by_collective);
    for (size_t i = 0; i < r->nrows; i++) {
        if (i == 0 || strcmp(named[i].collective, named[i - 1].collective) != 0)
            r->tallies[r->ntallies++].collective = named[i].collective;
        tally(&r->tallies[r->ntallies - 1], &r->rows[named[i].index]);
    }
    free(named);
    return 0;
}

static void print_tally(const char *prefix, const report_tally *t, int allow_missing)
{
    size_t missing = t->count[VERDICT_MISSING] + t->count[VERDICT_MISSING_ALLOWED];
    printf("#%s compared %zu, regressed %zu, wrong results %zu, below floor %zu, "
           "missing in new %zu%s", prefix, t->compared, t->count[VERDICT_REGRESSED],
           t->count[VERDICT_WRONG], t->count[VERDICT_BELOW_FLOOR], missing,
           missing && allow_missing ? " (allowed)" : "");
    if (t->compared > 0)
        printf(", worst change %+.1f%%", 100 * t->worst_change);
    printf(": %s\n", t->failed ? "FAIL" : "pass");
}

void report_print_summary(const report *r, int allow_missing)
{
    for (size_t i = 0; i < r->ntallies; i++) {
        char prefix[96];
        snprintf(prefix, sizeof prefix, " %.60s:", r->tallies[i].collective);
        print_tally(prefix, &r->tallies[i], allow_missing);
    }
    print_tally(" all:", &r->total, allow_missing);
    printf("# only in new %zu\n", r->only_new);
}

/* A JSON string: CSV text is untrusted (common/json_text.h escapes controls
 * and replaces bad UTF-8). */
static void json_string(FILE *f, const char *text)
{
    cb_json_write_string(f, text);
}

static void json_tally(FILE *f, const report_tally *t)
{
    fprintf(f, "\"compared\": %zu, \"failed\": %zu", t->compared, t->failed);
    for (size_t v = 0; v < VERDICT_COUNT; v++)
        fprintf(f, ", \"%s\": %zu", verdict_keys[v], t->count[v]);
    if (t->compared > 0)
        fprintf(f, ", \"worst_change_pct\": %.4g", 100 * t->worst_change);
    else
        fprintf(f, ", \"worst_change_pct\": null");
}

int report_write_json(const report *r, const char *path, const gate_side *base,
                      const gate_keys *k, const char *const *metric_names, double threshold,
                      int exit_status, char *err, size_t err_len)
{
    /* A new file beside path takes its name once whole (outfile.h): no
     * symlink or device is written through, and a failure leaves path as it
     * was. */
    cb_outfile of;
    char why[512];
    if (cb_outfile_open(&of, path, why, sizeof why) != 0) {
        snprintf(err, err_len, "--json: %s", why);
        return -1;
    }
    int fd = dup(of.fd);
    FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
    if (f == NULL) {
        snprintf(err, err_len, "--json: cannot write '%s': %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        cb_outfile_close(&of);
        return -1;
    }
    fprintf(f, "{\n  \"schema_version\": 1,\n  \"threshold_pct\": %.6g,\n  \"exit_status\": %d,\n"
               "  \"rows\": [", 100 * threshold, exit_status);
    for (size_t i = 0; i < r->nrows; i++) {
        const report_row *row = &r->rows[i];
        fprintf(f, "%s\n    {", i ? "," : "");
        for (size_t c = 0; c < GATE_MAX_KEYS; c++)
            if (k->use[c]) {
                fprintf(f, "\"%s\": ", gate_key_columns[c]);
                json_string(f, gate_field(base, row->entry, gate_key_columns[c]));
                fprintf(f, ", ");
            }
        fprintf(f, "\"verdict\": \"%s\"", verdict_keys[row->verdict]);
        if (row->matched)
            fprintf(f, ", \"metric\": \"%s\", \"base\": %.6g, \"new\": %.6g, \"ratio\": %.6g, "
                       "\"change_pct\": %.4g, \"noise_pct\": %.4g, \"wrong\": %llu",
                    metric_names[row->j.metric], row->j.base, row->j.fresh, row->j.ratio,
                    100 * row->j.change, 100 * row->j.noise, row->j.wrong);
        fprintf(f, "}");
    }
    fprintf(f, "\n  ],\n  \"collectives\": [");
    for (size_t i = 0; i < r->ntallies; i++) {
        fprintf(f, "%s\n    {\"collective\": ", i ? "," : "");
        json_string(f, r->tallies[i].collective);
        fprintf(f, ", ");
        json_tally(f, &r->tallies[i]);
        fprintf(f, "}");
    }
    fprintf(f, "\n  ],\n  \"summary\": {");
    json_tally(f, &r->total);
    fprintf(f, ", \"only_in_new\": %zu}\n}\n", r->only_new);
    if (ferror(f) | (fclose(f) != 0)) {
        snprintf(err, err_len, "--json: cannot write '%s': %s", path, strerror(errno));
        cb_outfile_close(&of);
        return -1;
    }
    int rc = cb_outfile_commit(&of, why, sizeof why);
    if (rc != 0)
        snprintf(err, err_len, "--json: %s", why);
    cb_outfile_close(&of);
    return rc;
}

void report_free(report *r)
{
    free(r->rows);
    free(r->tallies);
    memset(r, 0, sizeof *r);
}
