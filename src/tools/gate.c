#include "gate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const gate_key_columns[GATE_MAX_KEYS] = {
    "backend", "collective", "datatype", "redop", "root", "bytes", "placement", "ranks",
    "group", "layout", "impl", "unalign", "scan_part", "host", "peer_host", "comm_op",
};

/* A key column's value in every row that does not need it, or NULL: the
 * health scan's (-o scan) three are empty but in its node, pair and rail
 * rows, unalign is 0 but in -u runs, comm_op empty but in comm_init's rows. Such a column is a key only where a
 * row has another value, so that other comparisons print no idle columns. */
static const char *const gate_key_idle[GATE_MAX_KEYS] = {
    NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,   /* backend to ranks */
    NULL, NULL, NULL,                                 /* group, layout, impl */
    "0",                                              /* unalign */
    "", "", "",                                       /* scan_part, host, peer_host */
    "",                                               /* comm_op (-o comm_init) */
};

static int any_value(const gate_side *s, const char *column, const char *idle)
{
    for (size_t f = 0; f < s->nfiles; f++) {
        int col = cb_csv_column(&s->tables[f], column);
        for (size_t r = 0; col >= 0 && r < s->tables[f].nrows; r++)
            if (strcmp(s->tables[f].rows[r][col], idle) != 0)
                return 1;
    }
    return 0;
}

int gate_read(gate_side *s, const char **paths, size_t nfiles, char *err, size_t err_len)
{
    memset(s, 0, sizeof *s);
    s->paths = paths;
    s->tables = calloc(nfiles, sizeof *s->tables);
    if (s->tables == NULL) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    for (size_t f = 0; f < nfiles; f++) {
        if (cb_csv_read_file(paths[f], &s->tables[f], err, err_len) != 0)
            return -1;
        s->nfiles = f + 1;
    }
    return 0;
}

int gate_common_keys(const gate_side *a, const gate_side *b, gate_keys *k)
{
    int any = 0;
    for (size_t c = 0; c < GATE_MAX_KEYS; c++) {
        k->use[c] = 1;
        for (size_t f = 0; f < a->nfiles; f++)
            k->use[c] &= cb_csv_column(&a->tables[f], gate_key_columns[c]) >= 0;
        for (size_t f = 0; f < b->nfiles; f++)
            k->use[c] &= cb_csv_column(&b->tables[f], gate_key_columns[c]) >= 0;
        const char *idle = gate_key_idle[c];
        if (k->use[c] && idle != NULL)
            k->use[c] = any_value(a, gate_key_columns[c], idle) ||
                        any_value(b, gate_key_columns[c], idle);
        any |= k->use[c];
    }
    return any;
}

/* Where a bad value is: "FILE:LINE: column NAME (N): 'VALUE' WHY". */
static int bad_value(const gate_side *s, size_t f, size_t r, int col, const char *why,
                     char *err, size_t err_len)
{
    const cb_csv_table *t = &s->tables[f];
    snprintf(err, err_len, "%s:%zu: column %s (%d): '%.40s' %s", s->paths[f], t->lines[r],
             t->header[col], col + 1, t->rows[r][col], why);
    return -1;
}

/* The columns a row's figures come from, found once per file. */
typedef struct figure_columns {
    int schema, busbw, time, bytes, wrong, samples, median, p99, max;
} figure_columns;

static void find_figures(const cb_csv_table *t, figure_columns *c)
{
    c->schema = cb_csv_column(t, "schema_version");
    c->busbw = cb_csv_column(t, "busbw_gbps");
    c->time = cb_csv_column(t, "time_us");
    c->bytes = cb_csv_column(t, "bytes");
    c->wrong = cb_csv_column(t, "wrong");
    c->samples = cb_csv_column(t, "iter_samples");
    c->median = cb_csv_column(t, "iter_median_us");
    c->p99 = cb_csv_column(t, "iter_p99_us");
    c->max = cb_csv_column(t, "iter_max_us");
}

/* Read the figures of data row r of file f into *g. Returns 0, 1 for a
 * row that measured nothing (an empty time_us: a health scan part of one
 * rank), which is not compared, or -1 with err set. */
static int read_row(const gate_side *s, size_t f, size_t r, const figure_columns *fc,
                    gate_row *g, char *err, size_t err_len)
{
    const cb_csv_table *t = &s->tables[f];
    char **row = t->rows[r];
    const char *why = NULL;
    int c_schema = fc->schema, c_busbw = fc->busbw, c_time = fc->time, c_bytes = fc->bytes;
    int c_wrong = fc->wrong, c_samples = fc->samples, c_median = fc->median, c_p99 = fc->p99;
    unsigned long long u;
    if (c_schema >= 0) {
        if (cb_csv_unsigned(row[c_schema], &u, &why) != 0)
            return bad_value(s, f, r, c_schema, why, err, err_len);
        if (u != 1)
            return bad_value(s, f, r, c_schema, "is not a schema version this tool reads (1)",
                             err, err_len);
    }
    if (cb_csv_unsigned(row[c_bytes], &u, &why) != 0)
        return bad_value(s, f, r, c_bytes, why, err, err_len);
    /* An empty busbw means it does not apply: no bandwidth, as 0. */
    g->busbw = 0;
    if (row[c_busbw][0] != '\0' && cb_csv_decimal(row[c_busbw], 0, &g->busbw, &why) != 0)
        return bad_value(s, f, r, c_busbw, why, err, err_len);
    if (row[c_time][0] == '\0')
        return 1;
    if (cb_csv_decimal(row[c_time], 0, &g->time_us, &why) != 0)
        return bad_value(s, f, r, c_time, why, err, err_len);
    g->wrong = 0;
    if (c_wrong >= 0 && row[c_wrong][0] != '\0' &&
        cb_csv_unsigned(row[c_wrong], &g->wrong, &why) != 0)
        return bad_value(s, f, r, c_wrong, why, err, err_len);
    g->has_iter = 0;
    if (c_samples >= 0 && c_median >= 0 && c_p99 >= 0 && row[c_samples][0] != '\0') {
        if (cb_csv_unsigned(row[c_samples], &u, &why) != 0)
            return bad_value(s, f, r, c_samples, why, err, err_len);
        if (u > 0) {
            if (cb_csv_decimal(row[c_median], 0, &g->iter_median_us, &why) != 0)
                return bad_value(s, f, r, c_median, why, err, err_len);
            /* Below 100 samples the program leaves p99 empty; the worst
             * sample is then the largest, which p99 was before. */
            if (row[c_p99][0] == '\0' && fc->max >= 0)
                c_p99 = fc->max;
            if (cb_csv_decimal(row[c_p99], 0, &g->iter_p99_us, &why) != 0)
                return bad_value(s, f, r, c_p99, why, err, err_len);
            g->has_iter = 1;
        }
    }
    return 0;
}

static int by_key_then_place(const void *a, const void *b)
{
    const gate_row *x = *(const gate_row *const *)a, *y = *(const gate_row *const *)b;
    int c = strcmp(x->key, y->key);
    if (c != 0)
        return c;
    if (x->file != y->file)
        return x->file < y->file ? -1 : 1;
    return x->row < y->row ? -1 : x->row > y->row;
}

char *gate_join_key(const char *const values[GATE_MAX_KEYS])
{
    size_t len = 1;
    for (size_t c = 0; c < GATE_MAX_KEYS; c++)
        if (values[c] != NULL)
            len += strlen(values[c]) + 1;
    char *key = malloc(len), *end = key;
    for (size_t c = 0; key != NULL && c < GATE_MAX_KEYS; c++)
        if (values[c] != NULL) {
            size_t flen = strlen(values[c]);
            memcpy(end, values[c], flen);
            end += flen;
            *end++ = '\x1f';
        }
    if (key != NULL)
        *end = '\0';
    return key;
}

int gate_index(gate_side *s, const gate_keys *k, char *err, size_t err_len)
{
    size_t total = 0;
    for (size_t f = 0; f < s->nfiles; f++)
        total += s->tables[f].nrows;
    size_t n = total ? total : 1;
    s->rows = calloc(n, sizeof *s->rows);
    s->keys = calloc(n, sizeof *s->keys);
    s->by_key = calloc(n, sizeof *s->by_key);
    s->entries = calloc(n, sizeof *s->entries);
    if (s->rows == NULL || s->keys == NULL || s->by_key == NULL || s->entries == NULL) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    for (size_t f = 0; f < s->nfiles; f++) {
        const cb_csv_table *t = &s->tables[f];
        if (cb_csv_column(t, "busbw_gbps") < 0 || cb_csv_column(t, "time_us") < 0 ||
            cb_csv_column(t, "bytes") < 0) {
            snprintf(err, err_len, "'%s' lacks the busbw_gbps, time_us or bytes column: "
                                   "not an nccl-collbench CSV file", s->paths[f]);
            return -1;
        }
        figure_columns fc;
        find_figures(t, &fc);
        int cols[GATE_MAX_KEYS];
        for (size_t c = 0; c < GATE_MAX_KEYS; c++)
            cols[c] = k->use[c] ? cb_csv_column(t, gate_key_columns[c]) : -1;
        for (size_t r = 0; r < t->nrows; r++) {
            gate_row *g = &s->rows[s->nrows];
            const char *values[GATE_MAX_KEYS];
            for (size_t c = 0; c < GATE_MAX_KEYS; c++)
                values[c] = cols[c] >= 0 ? t->rows[r][cols[c]] : NULL;
            char *key = gate_join_key(values);
            if (key == NULL) {
                snprintf(err, err_len, "out of memory");
                return -1;
            }
            s->keys[s->nrows] = key;
            g->key = key;
            g->file = f;
            g->row = r;
            int read = read_row(s, f, r, &fc, g, err, err_len);
            if (read != 0) {
                free(key);
                s->keys[s->nrows] = NULL;
                if (read < 0)
                    return -1;
                continue;
            }
            s->by_key[s->nrows] = g;
            s->nrows++;
        }
    }
    qsort(s->by_key, s->nrows, sizeof *s->by_key, by_key_then_place);
    for (size_t i = 0; i < s->nrows;) {
        size_t j = i + 1;
        while (j < s->nrows && strcmp(s->by_key[j]->key, s->by_key[i]->key) == 0)
            j++;
        s->entries[s->nentries++] = (gate_entry){&s->by_key[i], j - i};
        i = j;
    }
    return 0;
}

const gate_entry *gate_find(const gate_side *s, const char *key)
{
    size_t lo = 0, hi = s->nentries;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(s->entries[mid].rows[0]->key, key);
        if (c == 0)
            return &s->entries[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

const char *gate_field(const gate_side *s, const gate_entry *e, const char *column)
{
    const gate_row *g = e->rows[0];
    const cb_csv_table *t = &s->tables[g->file];
    int c = cb_csv_column(t, column);
    return c >= 0 ? t->rows[g->row][c] : "";
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The median of v[0..n) (sorts v); the mean of the middle two for even n. */
static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, by_value);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* A row's value of the metric, and the worst the row's own samples reached. */
static double value_of(const gate_row *g, gate_metric m, double *worst)
{
    switch (m) {
    case METRIC_BUSBW:
        /* Bandwidth at the slowest-rank's 99th-percentile iteration time. */
        *worst = g->busbw;
        if (g->has_iter && g->iter_p99_us > g->time_us && g->time_us > 0)
            *worst = g->busbw * g->time_us / g->iter_p99_us;
        return g->busbw;
    case METRIC_MEDIAN:
        /* A new median inside the range of the baseline's own samples. */
        *worst = g->iter_p99_us > g->iter_median_us ? g->iter_p99_us : g->iter_median_us;
        return g->iter_median_us;
    case METRIC_TIME:
    default:
        *worst = g->has_iter && g->iter_p99_us > g->time_us ? g->iter_p99_us : g->time_us;
        return g->time_us;
    }
}

int gate_judge(const gate_entry *base, const gate_entry *fresh, gate_metric metric,
               gate_judgement *j)
{
    memset(j, 0, sizeof *j);
    size_t n = base->nrows > fresh->nrows ? base->nrows : fresh->nrows;
    double *v = malloc(n * sizeof *v);
    if (v == NULL)
        return -1;
    double busbw_sum = 0;
    int all_iter = 1;
    for (size_t i = 0; i < base->nrows; i++) {
        busbw_sum += base->rows[i]->busbw;
        all_iter &= base->rows[i]->has_iter;
    }
    for (size_t i = 0; i < fresh->nrows; i++) {
        j->wrong += fresh->rows[i]->wrong;
        all_iter &= fresh->rows[i]->has_iter;
    }
    j->has_busbw = busbw_sum > 0;
    /* The median resists stragglers that pull the mean; without samples, the mean. */
    if (metric == METRIC_AUTO)
        metric = all_iter ? METRIC_MEDIAN : METRIC_BUSBW;
    /* No bandwidth (one rank, barrier): time decides; no samples: the mean time. */
    if ((metric == METRIC_BUSBW && !(busbw_sum > 0)) || (metric == METRIC_MEDIAN && !all_iter))
        metric = METRIC_TIME;
    j->metric = metric;
    int higher_is_better = metric == METRIC_BUSBW;
    double worst_base = 0;
    for (size_t i = 0; i < base->nrows; i++) {
        double worst;
        v[i] = value_of(base->rows[i], metric, &worst);
        if (i == 0 || (higher_is_better ? worst < worst_base : worst > worst_base))
            worst_base = worst;
    }
    j->base = median(v, base->nrows);
    for (size_t i = 0; i < fresh->nrows; i++) {
        double worst;
        v[i] = value_of(fresh->rows[i], metric, &worst);
        j->fresh_busbw += fresh->rows[i]->busbw / (double)fresh->nrows;
    }
    j->fresh = median(v, fresh->nrows);
    free(v);
    j->ratio = j->base > 0 ? j->fresh / j->base : 0;
    if (j->base > 0) {
        j->change = higher_is_better ? 1 - j->ratio : j->ratio - 1;
        j->noise = higher_is_better ? 1 - worst_base / j->base : worst_base / j->base - 1;
    }
    if (j->noise < 0)
        j->noise = 0;
    return 0;
}

void gate_free(gate_side *s)
{
    for (size_t i = 0; i < s->nrows; i++)
        free(s->keys[i]);
    free(s->keys);
    free(s->rows);
    free(s->by_key);
    free(s->entries);
    for (size_t f = 0; f < s->nfiles; f++)
        cb_csv_free(&s->tables[f]);
    free(s->tables);
    memset(s, 0, sizeof *s);
}
