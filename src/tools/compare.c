/*
 * nccl-collbench-compare: a regression gate over two CSV files.
 *
 * Rows are matched on their identifying columns; rows with the same key in
 * one file (concatenated runs) are averaged. A row regresses when its bus
 * bandwidth falls by more than the threshold, or, where bus bandwidth is 0
 * (one rank), when its time grows by more than the threshold. Exit status:
 * 0 no regression, 1 a regression or wrong results in NEW, 2 usage or input
 * error.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "csvread.h"
#include "parse.h"

enum { EXIT_CLEAN = 0, EXIT_REGRESSED = 1, EXIT_BAD_INPUT = 2 };

/* Columns that identify a measurement, when both files have them. */
static const char *const key_columns[] = {
    "backend", "collective", "datatype", "redop", "root", "bytes", "placement", "ranks",
    "group", "layout",
};
#define MAX_KEYS (sizeof key_columns / sizeof key_columns[0])
static const int key_widths[MAX_KEYS] = {7, 13, 8, 9, 4, 12, 12, 5, 5, 6};

typedef struct options {
    double threshold;        /* fraction, 0.05 = 5% */
    unsigned long long min_bytes;
    int quiet;
    const char *baseline;
    const char *candidate;
} options;

/* One key's figures in one file. */
typedef struct entry {
    char *key;               /* key fields joined by '\x1f' */
    size_t first_row;        /* where the key first appears */
    double busbw_sum;
    double time_sum;
    int n;
    unsigned long long wrong;
} entry;

typedef struct summary_file {
    cb_csv_table table;
    int key_index[MAX_KEYS];
    entry *entries;          /* in order of first appearance */
    size_t nentries;
    entry **sorted;          /* the same, sorted by key for lookup */
} summary_file;

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: nccl-collbench-compare [OPTION]... BASELINE.csv NEW.csv\n"
            "Compare two nccl-collbench CSV files; exit 1 when NEW regressed.\n\n"
            "  -t, --threshold PCT   a drop in busbw (or rise in time) beyond PCT percent\n"
            "                        is a regression [5]\n"
            "      --min-bytes SIZE  compare only sizes of at least SIZE bytes [0]\n"
            "  -q, --quiet           print only regressed rows and the summary\n"
            "  -h, --help            print this help and exit\n"
            "  -V, --version         print the version and exit\n\n"
            "Rows match on backend, collective, datatype, redop, root, bytes, placement,\n"
            "ranks (and group, layout where present); repeated keys are averaged.\n"
            "Exit status: 0 no regression, 1 regression or wrong results in NEW,\n"
            "2 usage or input error.\n");
}

static int bad_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int bad_usage(const char *fmt, ...)
{
    char message[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    fprintf(stderr, "nccl-collbench-compare: %s\nTry 'nccl-collbench-compare --help' for more "
                    "information.\n", message);
    return EXIT_BAD_INPUT;
}

static int parse_percent(const char *text, double *out)
{
    char *end = NULL;
    double v = strtod(text, &end);
    if (end == text || *end != '\0' || !(v >= 0.0 && v < 100.0))
        return -1;
    *out = v / 100.0;
    return 0;
}

/* Returns -1 to continue, else an exit status. */
static int parse_options(int argc, char **argv, options *o)
{
    o->threshold = 0.05;
    o->min_bytes = 0;
    o->quiet = 0;
    o->baseline = o->candidate = NULL;
    int positional = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *value = NULL;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return EXIT_CLEAN;
        }
        if (strcmp(a, "-V") == 0 || strcmp(a, "--version") == 0) {
            printf("nccl-collbench-compare %s\n", PACKAGE_VERSION);
            return EXIT_CLEAN;
        }
        if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
            o->quiet = 1;
            continue;
        }
        if (strcmp(a, "-t") == 0 || strcmp(a, "--threshold") == 0 ||
            strcmp(a, "--min-bytes") == 0) {
            if (i + 1 >= argc)
                return bad_usage("%s needs a value", a);
            value = argv[++i];
        } else if (strncmp(a, "--threshold=", 12) == 0) {
            value = a + 12;
            a = "--threshold";
        } else if (strncmp(a, "--min-bytes=", 12) == 0) {
            value = a + 12;
            a = "--min-bytes";
        } else if (a[0] == '-' && a[1] != '\0') {
            return bad_usage("unknown option %s", a);
        } else {
            if (positional == 0)
                o->baseline = a;
            else if (positional == 1)
                o->candidate = a;
            else
                return bad_usage("unexpected argument '%s' (give two CSV files)", a);
            positional++;
            continue;
        }
        if (strcmp(a, "--min-bytes") == 0) {
            unsigned long long bytes;
            uint64_t parsed;
            if (cb_parse_bytes(value, &parsed) != 0)
                return bad_usage("--min-bytes: '%s' is not a byte count", value);
            bytes = parsed;
            o->min_bytes = bytes;
        } else if (parse_percent(value, &o->threshold) != 0) {
            return bad_usage("--threshold: '%s' is not a percentage from 0 to below 100", value);
        }
    }
    if (positional != 2)
        return bad_usage("give a baseline CSV file and a new CSV file");
    return -1;
}

static entry *lookup(const summary_file *f, const char *key)
{
    size_t lo = 0, hi = f->nentries;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(f->sorted[mid]->key, key);
        if (c == 0)
            return f->sorted[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static void free_summary(summary_file *f)
{
    for (size_t i = 0; i < f->nentries; i++)
        free(f->entries[i].key);
    free(f->entries);
    free(f->sorted);
    cb_csv_free(&f->table);
}

static double number(const char *text, int *ok)
{
    char *end = NULL;
    double v = strtod(text, &end);
    if (end == text || *end != '\0')
        *ok = 0;
    return v;
}

/* Build the per-key figures of a file; keys are the columns both files share. */
static int summarise(summary_file *f, const char *path, const int *use_key, char *err,
                     size_t err_len)
{
    cb_csv_table *t = &f->table;
    int c_busbw = cb_csv_column(t, "busbw_gbps"), c_time = cb_csv_column(t, "time_us");
    int c_wrong = cb_csv_column(t, "wrong"), c_bytes = cb_csv_column(t, "bytes");
    if (c_busbw < 0 || c_time < 0 || c_bytes < 0) {
        snprintf(err, err_len, "'%s' lacks the busbw_gbps, time_us or bytes column: "
                               "not an nccl-collbench CSV file", path);
        return -1;
    }
    f->entries = calloc(t->nrows ? t->nrows : 1, sizeof *f->entries);
    f->sorted = calloc(t->nrows ? t->nrows : 1, sizeof *f->sorted);
    if (f->entries == NULL || f->sorted == NULL) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    for (size_t r = 0; r < t->nrows; r++) {
        char **row = t->rows[r];
        size_t len = 1;
        for (size_t k = 0; k < MAX_KEYS; k++)
            if (use_key[k])
                len += strlen(row[f->key_index[k]]) + 1;
        char *key = malloc(len);
        if (key == NULL) {
            snprintf(err, err_len, "out of memory");
            return -1;
        }
        key[0] = '\0';
        for (size_t k = 0; k < MAX_KEYS; k++)
            if (use_key[k]) {
                strcat(key, row[f->key_index[k]]);
                strcat(key, "\x1f");
            }
        int ok = 1;
        double busbw = number(row[c_busbw], &ok), time_us = number(row[c_time], &ok);
        double wrong = c_wrong >= 0 && row[c_wrong][0] ? number(row[c_wrong], &ok) : 0;
        if (!ok) {
            snprintf(err, err_len, "'%s' data row %zu: busbw_gbps, time_us or wrong is not a number",
                     path, r + 1);
            free(key);
            return -1;
        }
        /* Linear in the number of distinct keys per row would be slow on big
         * files: keep the sorted index current by insertion. */
        entry *e = lookup(f, key);
        if (e == NULL) {
            e = &f->entries[f->nentries];
            e->key = key;
            e->first_row = r;
            size_t pos = f->nentries;
            while (pos > 0 && strcmp(f->sorted[pos - 1]->key, key) > 0) {
                f->sorted[pos] = f->sorted[pos - 1];
                pos--;
            }
            f->sorted[pos] = e;
            f->nentries++;
        } else {
            free(key);
        }
        e->busbw_sum += busbw;
        e->time_sum += time_us;
        e->wrong += (unsigned long long)wrong;
        e->n++;
    }
    return 0;
}

static void print_key(const summary_file *f, const entry *e, const int *use_key)
{
    char **row = f->table.rows[e->first_row];
    printf(" ");
    for (size_t k = 0; k < MAX_KEYS; k++)
        if (use_key[k])
            printf(" %*s", key_widths[k], row[f->key_index[k]]);
}

int main(int argc, char **argv)
{
    options o;
    int rc = parse_options(argc, argv, &o);
    if (rc >= 0)
        return rc;

    summary_file base, cand;
    memset(&base, 0, sizeof base);
    memset(&cand, 0, sizeof cand);
    char err[512];
    rc = EXIT_BAD_INPUT;
    if (cb_csv_read_file(o.baseline, &base.table, err, sizeof err) != 0 ||
        cb_csv_read_file(o.candidate, &cand.table, err, sizeof err) != 0) {
        fprintf(stderr, "nccl-collbench-compare: %s\n", err);
        goto done;
    }
    int use_key[MAX_KEYS];
    int any_key = 0;
    for (size_t k = 0; k < MAX_KEYS; k++) {
        base.key_index[k] = cb_csv_column(&base.table, key_columns[k]);
        cand.key_index[k] = cb_csv_column(&cand.table, key_columns[k]);
        use_key[k] = base.key_index[k] >= 0 && cand.key_index[k] >= 0;
        any_key |= use_key[k];
    }
    if (!any_key) {
        fprintf(stderr, "nccl-collbench-compare: the files share no identifying column\n");
        goto done;
    }
    if (summarise(&base, o.baseline, use_key, err, sizeof err) != 0 ||
        summarise(&cand, o.candidate, use_key, err, sizeof err) != 0) {
        fprintf(stderr, "nccl-collbench-compare: %s\n", err);
        goto done;
    }

    printf("# baseline %s: %zu rows; new %s: %zu rows; threshold %.2f%%\n", o.baseline,
           base.table.nrows, o.candidate, cand.table.nrows, o.threshold * 100);
    printf("#");
    for (size_t k = 0; k < MAX_KEYS; k++)
        if (use_key[k])
            printf(" %*s", key_widths[k], key_columns[k]);
    printf(" %10s %10s %7s %11s %11s %7s  %s\n", "base_busbw", "new_busbw", "ratio", "base_us",
           "new_us", "ratio", "verdict");

    int c_bytes = cb_csv_column(&base.table, "bytes");
    size_t compared = 0, regressed = 0, wrong = 0, missing = 0;
    for (size_t i = 0; i < base.nentries; i++) {
        const entry *b = &base.entries[i];
        unsigned long long bytes = strtoull(base.table.rows[b->first_row][c_bytes], NULL, 10);
        if (bytes < o.min_bytes)
            continue;
        const entry *c = lookup(&cand, b->key);
        if (c == NULL) {
            missing++;
            if (!o.quiet) {
                print_key(&base, b, use_key);
                printf(" %10s %10s %7s %11s %11s %7s  only in baseline\n", "", "", "", "", "", "");
            }
            continue;
        }
        compared++;
        double bb = b->busbw_sum / b->n, cb = c->busbw_sum / c->n;
        double bt = b->time_sum / b->n, ct = c->time_sum / c->n;
        double busbw_ratio = bb > 0 ? cb / bb : 0, time_ratio = bt > 0 ? ct / bt : 0;
        const char *verdict = "ok";
        if (c->wrong > 0) {
            verdict = "WRONG RESULTS";
            wrong++;
        } else if (bb > 0 ? busbw_ratio < 1.0 - o.threshold : time_ratio > 1.0 + o.threshold) {
            verdict = "REGRESSED";
            regressed++;
        }
        if (o.quiet && strcmp(verdict, "ok") == 0)
            continue;
        print_key(&base, b, use_key);
        printf(" %10.3f %10.3f %7.3f %11.3f %11.3f %7.3f  %s\n", bb, cb, busbw_ratio, bt, ct,
               time_ratio, verdict);
    }
    size_t only_new = 0;
    for (size_t i = 0; i < cand.nentries; i++)
        if (lookup(&base, cand.entries[i].key) == NULL)
            only_new++;
    printf("# compared %zu, regressed %zu, wrong results %zu, only in baseline %zu, "
           "only in new %zu\n", compared, regressed, wrong, missing, only_new);
    if (compared == 0) {
        fprintf(stderr, "nccl-collbench-compare: no row of %s matches a row of %s\n",
                o.candidate, o.baseline);
        rc = EXIT_BAD_INPUT;
    } else {
        rc = regressed || wrong ? EXIT_REGRESSED : EXIT_CLEAN;
    }
done:
    free_summary(&base);
    free_summary(&cand);
    return rc;
}
