/*
 * nccl-collbench-compare: a regression gate over nccl-collbench CSV files.
 *
 * One or more baseline files and one new file. Rows are matched on their
 * identifying columns (gate.c); a row regresses only when its metric
 * worsens by more than the threshold AND by more than the baseline's own
 * spread explains. Exit status: 0 clean, 1 a regression, wrong results, a
 * row under the floor or a missing row, 2 usage or input error.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/format.h"
#include "config.h"
#include "gate.h"
#include "safety/outfile.h"
#include "common/parse.h"
#include "report.h"

enum { EXIT_CLEAN = 0, EXIT_REGRESSED = 1, EXIT_BAD_INPUT = 2 };

static const int key_widths[GATE_MAX_KEYS] = {7, 13, 8, 9, 4, 12, 12, 5, 5, 6, 6, 7, 9, 8, 9, 7};
static const char *const metric_names[] = {"busbw", "time", "median", "auto"};

typedef struct options {
    double threshold;        /* fraction, 0.05 = 5% */
    unsigned long long min_bytes;
    double min_busbw;        /* GB/s; 0 = no floor */
    gate_metric metric;
    int quiet;
    int allow_missing;
    const char *json;
    const char **files;      /* baselines, then the new file last */
    size_t nfiles;
} options;

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: nccl-collbench-compare [OPTION]... BASELINE.csv... NEW.csv\n"
            "Compare nccl-collbench CSV files; exit 1 when NEW regressed. Several\n"
            "baselines (or repeated rows) tell the gate how noisy the measurement is.\n\n"
            "  -t, --threshold PCT   a worsening beyond PCT percent, and beyond what the\n"
            "                        baseline's own spread explains, is a regression [10]\n"
            "  -m, --metric METRIC   auto, busbw, time or median (the per-iteration\n"
            "                        median time); auto is the median where both files\n"
            "                        have samples, else busbw [auto]\n"
            "      --min-bytes SIZE  compare only sizes of at least SIZE bytes [0]\n"
            "      --min-busbw GBPS  fail a row at the largest size of its sweep whose new\n"
            "                        bus bandwidth is below GBPS, as nccl-collbench does\n"
            "      --allow-missing   rows of the baseline missing in NEW do not fail\n"
            "      --json FILE       also write the verdicts to FILE as JSON\n"
            "  -q, --quiet           print only failing rows and the summaries\n"
            "  -h, --help            print this help and exit\n"
            "  -V, --version         print the version and exit\n\n"
            "Rows match on backend, collective, datatype, redop, root, bytes, placement,\n"
            "ranks (and group, layout, impl, unalign, the scan's scan_part, host,\n"
            "peer_host, and comm_init's comm_op, where present). See the man page.\n"
            "Exit status: 0 no regression, 1 regression, wrong results, a row below\n"
            "--min-busbw or missing in NEW, 2 usage or input error.\n");
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

static int parse_number(const char *text, double lo, double hi, double *out)
{
    char *end = NULL;
    double v = strtod(text, &end);
    if (end == text || *end != '\0' || !(v >= lo && v < hi))
        return -1;
    *out = v;
    return 0;
}

/* Apply option NAME with VALUE; returns -1 to go on, else an exit status. */
static int apply_option(options *o, const char *name, const char *value)
{
    if (strcmp(name, "--min-bytes") == 0) {
        uint64_t parsed;
        if (cb_parse_bytes(value, &parsed) != 0)
            return bad_usage("--min-bytes: '%s' is not a byte count", value);
        o->min_bytes = parsed;
    } else if (strcmp(name, "--min-busbw") == 0) {
        if (parse_number(value, 0, 1e9, &o->min_busbw) != 0 || o->min_busbw <= 0)
            return bad_usage("--min-busbw: '%s' is not a bandwidth above 0 in GB/s", value);
    } else if (strcmp(name, "--metric") == 0) {
        size_t m = 0;
        while (m < 4 && strcmp(value, metric_names[m]) != 0)
            m++;
        if (m == 4)
            return bad_usage("--metric: '%s' is not auto, busbw, time or median", value);
        o->metric = (gate_metric)m;
    } else if (strcmp(name, "--json") == 0) {
        if (value[0] == '\0')
            return bad_usage("--json: the file name is empty");
        o->json = value;
    } else if (parse_number(value, 0, 100, &o->threshold) != 0) {
        return bad_usage("--threshold: '%s' is not a percentage from 0 to below 100", value);
    } else {
        o->threshold /= 100;
    }
    return -1;
}

/* Returns -1 to continue, else an exit status. */
static int parse_options(int argc, char **argv, options *o)
{
    static const char *const valued[][2] = {
        {"-t", "--threshold"}, {"-m", "--metric"}, {"", "--min-bytes"},
        {"", "--min-busbw"}, {"", "--json"},
    };
    memset(o, 0, sizeof *o);
    o->threshold = 0.10;
    o->metric = METRIC_AUTO;
    o->files = calloc((size_t)argc, sizeof *o->files);
    if (o->files == NULL)
        return bad_usage("out of memory");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
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
        if (strcmp(a, "--allow-missing") == 0) {
            o->allow_missing = 1;
            continue;
        }
        size_t v = 0, nvalued = sizeof valued / sizeof valued[0];
        const char *value = NULL;
        for (; v < nvalued; v++) {
            size_t len = strlen(valued[v][1]);
            if ((valued[v][0][0] && strcmp(a, valued[v][0]) == 0) ||
                strcmp(a, valued[v][1]) == 0) {
                if (i + 1 >= argc)
                    return bad_usage("%s needs a value", a);
                value = argv[++i];
                break;
            }
            if (strncmp(a, valued[v][1], len) == 0 && a[len] == '=') {
                value = a + len + 1;
                break;
            }
        }
        if (value != NULL) {
            int rc = apply_option(o, valued[v][1], value);
            if (rc >= 0)
                return rc;
        } else if (a[0] == '-' && a[1] != '\0') {
            return bad_usage("unknown option %s", a);
        } else {
            o->files[o->nfiles++] = a;
        }
    }
    if (o->nfiles < 2)
        return bad_usage("give at least one baseline CSV file and a new CSV file");
    if (o->json != NULL) {
        /* The report must not replace an input, nor anything but a file the
         * user may write: checked before any file is read. */
        for (size_t f = 0; f < o->nfiles; f++)
            if (cb_outfile_same(o->json, o->files[f]))
                return bad_usage("--json %s and the input %s are the same file; give the "
                                 "report its own", o->json, o->files[f]);
        char err[512];
        if (cb_outfile_check(o->json, err, sizeof err) != 0)
            return bad_usage("--json: %s", err);
    }
    return -1;
}

/* Order of first appearance in the baseline files. */
static int by_place(const void *a, const void *b)
{
    const gate_row *x = (*(const gate_entry *const *)a)->rows[0];
    const gate_row *y = (*(const gate_entry *const *)b)->rows[0];
    if (x->file != y->file)
        return x->file < y->file ? -1 : 1;
    return x->row < y->row ? -1 : x->row > y->row;
}

static void print_key(const gate_side *s, const gate_entry *e, const gate_keys *k)
{
    printf(" ");
    for (size_t c = 0; c < GATE_MAX_KEYS; c++)
        if (k->use[c])
            printf(" %*s", key_widths[c], gate_field(s, e, gate_key_columns[c]));
}

/* An entry's sweep (its key less bytes and placement) and size. */
typedef struct sweep_point {
    char *sweep;
    unsigned long long bytes;
    size_t entry;
} sweep_point;

static int by_sweep_then_size_down(const void *a, const void *b)
{
    const sweep_point *x = a, *y = b;
    int c = strcmp(x->sweep, y->sweep);
    if (c != 0)
        return c;
    return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : 0;
}

/*
 * A flag per entry of s: it is at the largest size of its sweep. The main
 * program's --min-busbw gates only that size (smaller ones measure latency
 * more than bandwidth), and the floor here must mean the same. NULL when out
 * of memory. O(n log n).
 */
static unsigned char *largest_of_sweeps(const gate_side *s)
{
    size_t n = s->nentries;
    unsigned char *flag = calloc(n ? n : 1, 1);
    sweep_point *p = calloc(n ? n : 1, sizeof *p);
    int ok = flag != NULL && p != NULL;
    for (size_t i = 0; ok && i < n; i++) {
        const char *values[GATE_MAX_KEYS];
        for (size_t c = 0; c < GATE_MAX_KEYS; c++)
            values[c] = strcmp(gate_key_columns[c], "bytes") == 0 ||
                                strcmp(gate_key_columns[c], "placement") == 0
                            ? NULL
                            : gate_field(s, &s->entries[i], gate_key_columns[c]);
        ok = (p[i].sweep = gate_join_key(values)) != NULL;
        if (!ok)
            break;
        p[i].bytes = strtoull(gate_field(s, &s->entries[i], "bytes"), NULL, 10);
        p[i].entry = i;
    }
    if (ok) {
        qsort(p, n, sizeof *p, by_sweep_then_size_down);
        unsigned long long top = 0;
        for (size_t i = 0; i < n; i++) {
            if (i == 0 || strcmp(p[i].sweep, p[i - 1].sweep) != 0)
                top = p[i].bytes;
            flag[p[i].entry] = p[i].bytes == top;
        }
    }
    for (size_t i = 0; p != NULL && i < n; i++)
        free(p[i].sweep);
    free(p);
    if (!ok) {
        free(flag);
        return NULL;
    }
    return flag;
}

/* Judge every baseline key; fills the report. Returns 0, or -1 out of memory. */
static int judge_all(const options *o, const gate_side *base, const gate_side *fresh,
                     report *rep)
{
    const gate_entry **order = calloc(base->nentries ? base->nentries : 1, sizeof *order);
    unsigned char *largest = o->min_busbw > 0 ? largest_of_sweeps(fresh) : NULL;
    if (order == NULL || (o->min_busbw > 0 && largest == NULL)) {
        free(order);
        free(largest);
        return -1;
    }
    for (size_t i = 0; i < base->nentries; i++)
        order[i] = &base->entries[i];
    qsort(order, base->nentries, sizeof *order, by_place);
    int rc = 0;
    for (size_t i = 0; i < base->nentries && rc == 0; i++) {
        const gate_entry *b = order[i];
        unsigned long long bytes = strtoull(gate_field(base, b, "bytes"), NULL, 10);
        if (bytes < o->min_bytes)
            continue;
        report_row *r = report_add(rep);
        if (r == NULL) {
            rc = -1;
            break;
        }
        r->entry = b;
        const gate_entry *c = gate_find(fresh, b->rows[0]->key);
        if (c == NULL) {
            r->verdict = o->allow_missing ? VERDICT_MISSING_ALLOWED : VERDICT_MISSING;
            continue;
        }
        if (gate_judge(b, c, o->metric, &r->j) != 0) {
            rc = -1;
            break;
        }
        r->matched = 1;
        if (r->j.wrong > 0)
            r->verdict = VERDICT_WRONG;
        else if (r->j.change > o->threshold && r->j.change > r->j.noise)
            r->verdict = VERDICT_REGRESSED;
        else if (o->min_busbw > 0 && largest[c - fresh->entries] && r->j.has_busbw &&
                 r->j.fresh_busbw < o->min_busbw)
            r->verdict = VERDICT_BELOW_FLOOR;
        else
            r->verdict = VERDICT_OK;
    }
    for (size_t i = 0; i < fresh->nentries; i++)
        if (gate_find(base, fresh->entries[i].rows[0]->key) == NULL)
            rep->only_new++;
    free(order);
    free(largest);
    return rc;
}

static void print_rows(const options *o, const gate_side *base, const gate_keys *k,
                       const report *rep)
{
    printf("#");
    for (size_t c = 0; c < GATE_MAX_KEYS; c++)
        if (k->use[c])
            printf(" %*s", key_widths[c], gate_key_columns[c]);
    printf(" %6s %12s %12s %7s %8s %8s  %s\n", "metric", "base", "new", "ratio", "change%",
           "noise%", "verdict");
    for (size_t i = 0; i < rep->nrows; i++) {
        const report_row *r = &rep->rows[i];
        if (o->quiet && (r->verdict == VERDICT_OK || r->verdict == VERDICT_MISSING_ALLOWED))
            continue;
        print_key(base, r->entry, k);
        if (!r->matched)
            printf(" %6s %12s %12s %7s %8s %8s  %s\n", "", "", "", "", "", "",
                   verdict_names[r->verdict]);
        else
            printf(" %6s %12.6g %12.6g %7.3f %8.2f %8.2f  %s\n", metric_names[r->j.metric],
                   r->j.base, r->j.fresh, r->j.ratio, 100 * r->j.change, 100 * r->j.noise,
                   verdict_names[r->verdict]);
    }
}

int main(int argc, char **argv)
{
    options o;
    int rc = parse_options(argc, argv, &o);
    if (rc >= 0) {
        free(o.files);
        return rc;
    }
    gate_side base, fresh;
    memset(&fresh, 0, sizeof fresh);
    gate_keys keys;
    report rep;
    report_init(&rep);
    char err[768];
    rc = EXIT_BAD_INPUT;
    if (gate_read(&base, o.files, o.nfiles - 1, err, sizeof err) != 0 ||
        gate_read(&fresh, &o.files[o.nfiles - 1], 1, err, sizeof err) != 0) {
        fprintf(stderr, "nccl-collbench-compare: %s\n", err);
        goto done;
    }
    if (!gate_common_keys(&base, &fresh, &keys)) {
        fprintf(stderr, "nccl-collbench-compare: the files share no identifying column\n");
        goto done;
    }
    if (gate_index(&base, &keys, err, sizeof err) != 0 ||
        gate_index(&fresh, &keys, err, sizeof err) != 0) {
        fprintf(stderr, "nccl-collbench-compare: %s\n", err);
        goto done;
    }
    if (judge_all(&o, &base, &fresh, &rep) != 0 || report_summarise(&rep, &base) != 0) {
        fprintf(stderr, "nccl-collbench-compare: out of memory\n");
        goto done;
    }
    printf("# baseline");
    for (size_t f = 0; f < base.nfiles; f++)
        printf(" %s (%zu row%s)", o.files[f], base.tables[f].nrows,
               cb_plural((long long)base.tables[f].nrows));
    printf("; new %s (%zu row%s); metric %s; threshold %.2f%%\n", o.files[o.nfiles - 1],
           fresh.tables[0].nrows, cb_plural((long long)fresh.tables[0].nrows),
           metric_names[o.metric], o.threshold * 100);
    print_rows(&o, &base, &keys, &rep);
    report_print_summary(&rep, o.allow_missing);
    if (rep.total.compared == 0) {
        fprintf(stderr, "nccl-collbench-compare: no row of %s matches a row of the baseline\n",
                o.files[o.nfiles - 1]);
        rc = EXIT_BAD_INPUT;
    } else {
        rc = rep.total.failed ? EXIT_REGRESSED : EXIT_CLEAN;
    }
    if (o.json != NULL &&
        report_write_json(&rep, o.json, &base, &keys, metric_names, o.threshold, rc, err,
                          sizeof err) != 0) {
        fprintf(stderr, "nccl-collbench-compare: %s\n", err);
        rc = EXIT_BAD_INPUT;
    }
done:
    report_free(&rep);
    gate_free(&base);
    gate_free(&fresh);
    free(o.files);
    return rc;
}
