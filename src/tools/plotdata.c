#include "plotdata.h"
#include "common/format.h"
#include "common/grow.h"

#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csvread.h"

void plot_safe_text(char *dst, size_t cap, const char *src)
{
    /* A whitelist: no quote, backslash, backquote, '@', '$', '{', '}' or control
     * character reaches the script, whatever gnuplot does with them. */
    static const char allowed[] = " ._:+,()/-=#%";
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)src; *p && n + 1 < cap; p++) {
        int ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                 (*p >= '0' && *p <= '9') || strchr(allowed, *p) != NULL;
        dst[n++] = ok ? (char)*p : '?';
    }
    if (cap > 0)
        dst[n] = '\0';
}

/* One usable CSV row, before grouping. */
typedef struct record {
    const char *collective;   /* in the CSV table */
    size_t chart;             /* index into the charts, in first-seen order */
    size_t file, order;       /* file, and place in the files read */
    char label[128];
    unsigned long long bytes;
    double busbw, time_us;
    int has_busbw;
} record;

static int by_chart_line_size(const void *a, const void *b)
{
    const record *x = a, *y = b;
    if (x->chart != y->chart)
        return x->chart < y->chart ? -1 : 1;
    if (x->file != y->file)
        return x->file < y->file ? -1 : 1;
    int c = strcmp(x->label, y->label);
    if (c != 0)
        return c;
    if (x->bytes != y->bytes)
        return x->bytes < y->bytes ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* A collective's name and the first record naming it. */
typedef struct chart_name {
    const char *name;
    size_t first;
} chart_name;

static int by_name_then_first(const void *a, const void *b)
{
    const chart_name *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->first < y->first ? -1 : x->first > y->first);
}

static int by_first(const void *a, const void *b)
{
    const chart_name *x = a, *y = b;
    return x->first < y->first ? -1 : x->first > y->first;
}

static int valid_name(const char *s)
{
    if (*s == '\0' || strlen(s) >= sizeof ((plot_chart *)0)->collective)
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
            return 0;
    return 1;
}

/* A number field: 0 with *v, 1 when not finite (unusable), -1 when not a number. */
static int read_number(const char *text, double *v)
{
    const char *why;
    if (cb_csv_decimal(text, 0, v, &why) == 0)
        return 0;
    char *end;
    double x = strtod(text, &end);
    return end != text && *end == '\0' && !isfinite(x) ? 1 : -1;
}

typedef struct file_columns {
    int collective, backend, datatype, redop, placement, bytes, busbw, time, layout;
    int ranks, nodes, library, start, run_id, group, impl, unalign, scan_part, host, peer_host;
    int comm_op;
} file_columns;

static int find_columns(const cb_csv_table *t, file_columns *c)
{
    c->collective = cb_csv_column(t, "collective");
    c->backend = cb_csv_column(t, "backend");
    c->datatype = cb_csv_column(t, "datatype");
    c->redop = cb_csv_column(t, "redop");
    c->placement = cb_csv_column(t, "placement");
    c->bytes = cb_csv_column(t, "bytes");
    c->busbw = cb_csv_column(t, "busbw_gbps");
    c->time = cb_csv_column(t, "time_us");
    c->layout = cb_csv_column(t, "layout");
    c->ranks = cb_csv_column(t, "ranks");
    c->nodes = cb_csv_column(t, "nodes");
    c->library = cb_csv_column(t, "library");
    c->start = cb_csv_column(t, "start_utc");
    c->run_id = cb_csv_column(t, "run_id");
    c->group = cb_csv_column(t, "group");   /* with --split: a line per group */
    c->impl = cb_csv_column(t, "impl");     /* --nccl-impl: a line per implementation */
    c->comm_op = cb_csv_column(t, "comm_op"); /* -o comm_init: a line per way */
    c->unalign = cb_csv_column(t, "unalign"); /* -u: misaligned buffers, a line of their own */
    /* -o scan: a line per node, pair of nodes and rail. */
    c->scan_part = cb_csv_column(t, "scan_part");
    c->host = cb_csv_column(t, "host");
    c->peer_host = cb_csv_column(t, "peer_host");
    return c->collective < 0 || c->backend < 0 || c->datatype < 0 || c->redop < 0 ||
                   c->placement < 0 || c->bytes < 0 || c->busbw < 0 || c->time < 0
               ? -1
               : 0;
}

/* The run a file holds, for the subtitle: from its first row. */
static char *run_context(const cb_csv_table *t, const file_columns *c, const char *path,
                         size_t nfiles)
{
    char text[512], safe[512];
    if (t->nrows == 0)
        return strdup("");
    char **row = t->rows[0];
#define FIELD(col) ((col) >= 0 && row[col][0] ? row[col] : "?")
    size_t runs = 1;
    if (c->run_id >= 0)
        for (size_t r = 1; r < t->nrows; r++)
            if (strcmp(t->rows[r][c->run_id], row[c->run_id]) != 0) {
                runs = 2;
                break;
            }
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    snprintf(text, sizeof text, "%.80s%s%s rank%s, %s node%s, %s, %.60s, %s, run %.20s%s",
             nfiles > 1 ? base : "", nfiles > 1 ? ": " : "", FIELD(c->ranks),
             strcmp(FIELD(c->ranks), "1") == 0 ? "" : "s", FIELD(c->nodes),
             strcmp(FIELD(c->nodes), "1") == 0 ? "" : "s",
             row[c->backend], FIELD(c->library), FIELD(c->start), FIELD(c->run_id),
             runs > 1 ? " and more runs" : "");
#undef FIELD
    plot_safe_text(safe, sizeof safe, text);
    return strdup(safe);
}

/* A health scan row's place in the label, instead of its group: the node
 * ("node h0"), the pair ("pair h0 - h1") or the rail ("rail 0"), so that
 * the figures of different parts are not averaged into one line. */
static void scan_where(const file_columns *c, char **row, char *where, size_t len)
{
    const char *part = c->scan_part >= 0 ? row[c->scan_part] : "";
    const char *host = c->host >= 0 ? row[c->host] : "";
    const char *peer = c->peer_host >= 0 ? row[c->peer_host] : "";
    const char *group = c->group >= 0 ? row[c->group] : "";
    /* A suspect's re-measure ("node_again") is a line of its own beside the
     * first figure: "node h0 again". */
    size_t n = strcspn(part, "_");
    const char *again = strcmp(part + n, "_again") == 0 ? " again" : "";
    if (n == 4 && strncmp(part, "node", n) == 0)
        snprintf(where, len, " node %.40s%s", host, again);
    else if (n == 4 && strncmp(part, "pair", n) == 0)
        snprintf(where, len, " pair %.40s - %.40s%s", host, peer, again);
    else if (n == 4 && strncmp(part, "rail", n) == 0)
        snprintf(where, len, " rail %.20s%s", group, again);
    else if (part[0])
        snprintf(where, len, " %.20s", part);
}

/* Read one file's rows into records (chart names collected in *names). */
static int read_file(plot_data *d, const cb_csv_table *t, const char *path, size_t file,
                     record **recs, size_t *nrecs, size_t *cap, char *err, size_t err_len)
{
    file_columns c;
    if (find_columns(t, &c) != 0) {
        snprintf(err, err_len, "'%s' is not an nccl-collbench CSV file: a needed column is "
                               "missing", path);
        return -1;
    }
    d->contexts[file] = run_context(t, &c, path, d->nfiles);
    if (d->contexts[file] == NULL) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    for (size_t r = 0; r < t->nrows; r++) {
        char **row = t->rows[r];
        if (!valid_name(row[c.collective])) {
            snprintf(err, err_len, "%s:%zu: column collective (%d): '%.40s' is not a "
                                   "collective name", path, t->lines[r], c.collective + 1,
                     row[c.collective]);
            return -1;
        }
        record *grown = cb_grow(*recs, cap, *nrecs, sizeof *grown, 256);
        if (grown == NULL) {
            snprintf(err, err_len, "out of memory");
            return -1;
        }
        *recs = grown;
        record *rec = &(*recs)[*nrecs];
        memset(rec, 0, sizeof *rec);
        rec->file = file;
        rec->order = *nrecs;
        const char *why;
        int col = c.bytes, bad = cb_csv_unsigned(row[c.bytes], &rec->bytes, &why) != 0;
        int time_rc = 0, busbw_rc = 0;
        if (!bad) {
            col = c.time;
            time_rc = read_number(row[c.time], &rec->time_us);
            bad = time_rc < 0;
        }
        if (!bad && row[c.busbw][0] != '\0') {   /* empty: no bandwidth */
            col = c.busbw;
            busbw_rc = read_number(row[c.busbw], &rec->busbw);
            bad = busbw_rc < 0;
        }
        if (bad) {
            snprintf(err, err_len, "%s:%zu: column %s (%d): '%.40s' is not a number", path,
                     t->lines[r], t->header[col], col + 1, row[col]);
            return -1;
        }
        if (time_rc || busbw_rc) {
            d->unusable++;
            continue;
        }
        rec->has_busbw = rec->busbw > 0;
        /* Column-layout rows are a line of their own. */
        int col_layout = c.layout >= 0 && strcmp(row[c.layout], "col") == 0;
        const char *group = c.group >= 0 ? row[c.group] : "";
        const char *impl = c.impl >= 0 ? row[c.impl] : "";
        char where[120] = "";
        if (group[0])
            snprintf(where, sizeof where, " group %.20s", group);
        if (c.unalign >= 0 && strcmp(row[c.unalign], "0") != 0 && row[c.unalign][0] != '\0')
            snprintf(where + strlen(where), sizeof where - strlen(where), " unalign %.12s",
                     row[c.unalign]);
        scan_where(&c, row, where, sizeof where);
        if (c.comm_op >= 0 && row[c.comm_op][0] != '\0')
            snprintf(where + strlen(where), sizeof where - strlen(where), " %.12s",
                     row[c.comm_op]);
        char label[200];
        snprintf(label, sizeof label, "%.20s %.20s %.20s %.20s%s%s%s%.20s", row[c.backend],
                 row[c.datatype], row[c.redop], row[c.placement], col_layout ? " col" : "",
                 where, impl[0] ? " " : "", impl);
        plot_safe_text(rec->label, sizeof rec->label, label);
        rec->collective = row[c.collective];   /* the chart is settled later */
        (*nrecs)++;
    }
    return 0;
}

/* Number the charts in the order the files first name their collectives: n log n. */
static int number_charts(plot_data *d, record *recs, size_t nrecs)
{
    chart_name *names = calloc(nrecs ? nrecs : 1, sizeof *names);
    if (names == NULL)
        return -1;
    for (size_t i = 0; i < nrecs; i++)
        names[i] = (chart_name){recs[i].collective, i};
    qsort(names, nrecs, sizeof *names, by_name_then_first);
    size_t n = 0;
    for (size_t i = 0; i < nrecs; i++)
        if (n == 0 || strcmp(names[n - 1].name, names[i].name) != 0)
            names[n++] = names[i];
    /* By name for lookup; the chart order is the order of first records. */
    chart_name *ordered = malloc((n ? n : 1) * sizeof *ordered);
    d->charts = calloc(n ? n : 1, sizeof *d->charts);
    if (ordered == NULL || d->charts == NULL) {
        free(names);
        free(ordered);
        return -1;
    }
    memcpy(ordered, names, n * sizeof *names);
    qsort(ordered, n, sizeof *ordered, by_first);
    for (size_t i = 0; i < n; i++) {
        snprintf(d->charts[i].collective, sizeof d->charts[i].collective, "%s", ordered[i].name);
        ordered[i].first = i;   /* now the chart index */
    }
    qsort(ordered, n, sizeof *ordered, by_name_then_first);
    for (size_t i = 0; i < nrecs; i++) {
        chart_name key = {recs[i].collective, 0};
        size_t lo = 0, hi = n;
        while (lo < hi) {   /* names are unique, so compare the name only */
            size_t mid = lo + (hi - lo) / 2;
            int c = strcmp(ordered[mid].name, key.name);
            if (c == 0) {
                lo = mid;
                break;
            }
            if (c < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        recs[i].chart = ordered[lo].first;
    }
    d->ncharts = n;
    free(names);
    free(ordered);
    return 0;
}

static int by_label_then_place(const void *a, const void *b)
{
    const plot_line *x = *(const plot_line *const *)a, *y = *(const plot_line *const *)b;
    int c = strcmp(x->label, y->label);
    return c ? c : (x < y ? -1 : x > y);
}

/* A colour per label, shared across files, in label order; sorted is
 * room for a pointer per line. */
static void number_styles(plot_chart *ch, const plot_line **sorted)
{
    for (size_t l = 0; l < ch->nlines; l++)
        sorted[l] = &ch->lines[l];
    qsort(sorted, ch->nlines, sizeof *sorted, by_label_then_place);
    for (size_t l = 0, style = 0; l < ch->nlines; l++) {
        if (l > 0 && strcmp(sorted[l]->label, sorted[l - 1]->label) != 0)
            style++;
        ch->lines[sorted[l] - ch->lines].style = style;
    }
}

/* Group sorted records into lines and points. */
static int build_lines(plot_data *d, const record *recs, size_t nrecs)
{
    for (size_t i = 0; i < nrecs;) {
        plot_chart *ch = &d->charts[recs[i].chart];
        size_t j = i;
        while (j < nrecs && recs[j].chart == recs[i].chart && recs[j].file == recs[i].file &&
               strcmp(recs[j].label, recs[i].label) == 0)
            j++;
        plot_line *grown = cb_grow(ch->lines, &ch->lines_cap, ch->nlines, sizeof *grown, 8);
        if (grown == NULL)
            return -1;
        ch->lines = grown;
        plot_line *l = &ch->lines[ch->nlines++];
        memset(l, 0, sizeof *l);
        l->file = recs[i].file;
        memcpy(l->label, recs[i].label, sizeof l->label);
        l->points = calloc(j - i, sizeof *l->points);
        if (l->points == NULL)
            return -1;
        for (size_t k = i; k < j;) {
            size_t m = k, busbw_n = 0;
            double busbw = 0, time_us = 0;
            for (; m < j && recs[m].bytes == recs[k].bytes; m++) {
                time_us += recs[m].time_us;
                if (recs[m].has_busbw) {
                    busbw += recs[m].busbw;
                    busbw_n++;
                }
            }
            plot_point *p = &l->points[l->npoints++];
            p->bytes = recs[k].bytes;
            p->time_us = time_us / (double)(m - k);
            p->has_busbw = busbw_n > 0;
            p->busbw = busbw_n ? busbw / (double)busbw_n : 0;
            ch->has_busbw |= p->has_busbw;
            k = m;
        }
        i = j;
    }
    /* A colour per label, shared across files; sizeless charts: barrier. */
    for (size_t c = 0; c < d->ncharts; c++) {
        plot_chart *ch = &d->charts[c];
        ch->sizeless = 1;
        const plot_line **sorted = malloc((ch->nlines ? ch->nlines : 1) * sizeof *sorted);
        if (sorted == NULL)
            return -1;
        for (size_t l = 0; l < ch->nlines; l++) {
            for (size_t p = 0; p < ch->lines[l].npoints; p++)
                ch->sizeless &= ch->lines[l].points[p].bytes == 0;
        }
        number_styles(ch, sorted);
        free(sorted);
    }
    return 0;
}

int plot_read(plot_data *d, const char *const *paths, size_t nfiles, char *err,
              size_t err_len)
{
    memset(d, 0, sizeof *d);
    d->nfiles = nfiles;
    d->contexts = calloc(nfiles, sizeof *d->contexts);
    cb_csv_table *tables = calloc(nfiles, sizeof *tables);
    record *recs = NULL;
    size_t nrecs = 0, cap = 0, nread = 0;
    int rc = -1;
    if (d->contexts == NULL || tables == NULL) {
        snprintf(err, err_len, "out of memory");
        goto done;
    }
    for (; nread < nfiles; nread++) {
        if (cb_csv_read_file(paths[nread], &tables[nread], err, err_len) != 0)
            goto done;
        if (read_file(d, &tables[nread], paths[nread], nread, &recs, &nrecs, &cap, err,
                      err_len) != 0) {
            nread++;
            goto done;
        }
    }
    if (number_charts(d, recs, nrecs) != 0) {
        snprintf(err, err_len, "out of memory");
        goto done;
    }
    qsort(recs, nrecs, sizeof *recs, by_chart_line_size);
    if (build_lines(d, recs, nrecs) != 0) {
        snprintf(err, err_len, "out of memory");
        goto done;
    }
    rc = 0;
done:
    free(recs);
    for (size_t f = 0; f < nread; f++)
        cb_csv_free(&tables[f]);
    free(tables);
    return rc;
}

void plot_free(plot_data *d)
{
    for (size_t c = 0; c < d->ncharts; c++) {
        for (size_t l = 0; l < d->charts[c].nlines; l++)
            free(d->charts[c].lines[l].points);
        free(d->charts[c].lines);
    }
    free(d->charts);
    for (size_t f = 0; f < d->nfiles && d->contexts; f++)
        free(d->contexts[f]);
    free(d->contexts);
    memset(d, 0, sizeof *d);
}

plot_look plot_line_look(size_t style, size_t file)
{
    plot_look look = {
        .colour = style % PLOT_COLOURS + 1,
        .marker = style / PLOT_COLOURS % PLOT_MARKERS + 1,
        .dash = (file + style / (PLOT_COLOURS * PLOT_MARKERS)) % PLOT_DASHES + 1,
    };
    return look;
}

/* Whether label matches a pattern of the comma list; each pattern that
 * does is marked in used. */
static int matches(const char *list, const char *label, char *used)
{
    int any = 0;
    char pattern[256];
    for (size_t i = 0, at = 0; ; i++) {
        if (list[i] != ',' && list[i] != '\0')
            continue;
        snprintf(pattern, sizeof pattern, "%.*s", (int)(i - at), list + at);
        if (fnmatch(pattern, label, 0) == 0) {
            used[at] = 1;
            any = 1;
        }
        if (list[i] == '\0')
            return any;
        at = i + 1;
    }
}

int plot_keep_series(plot_data *d, const char *list, char *err, size_t err_len)
{
    size_t len = strlen(list);
    char *used = calloc(len + 1, 1);
    if (used == NULL) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    size_t most = 1;
    for (size_t c = 0; c < d->ncharts; c++)
        for (size_t l = 0; l < d->charts[c].nlines; l++)
            matches(list, d->charts[c].lines[l].label, used);
    for (size_t i = 0, at = 0; i <= len; i++) {
        if (list[i] != ',' && list[i] != '\0')
            continue;
        if (!used[at]) {
            const char *example = d->ncharts && d->charts[0].nlines ? d->charts[0].lines[0].label
                                                                    : "";
            snprintf(err, err_len, "--series: '%.*s' matches no series; a series is named as "
                     "in the charts' keys, e.g. '%s' (shell patterns: '*float*')",
                     (int)(i - at), list + at, example);
            free(used);
            return -1;
        }
        at = i + 1;
    }
    size_t kept_charts = 0;
    for (size_t c = 0; c < d->ncharts; c++) {
        plot_chart ch = d->charts[c];
        size_t kept = 0;
        for (size_t l = 0; l < ch.nlines; l++) {
            if (matches(list, ch.lines[l].label, used))
                ch.lines[kept++] = ch.lines[l];
            else
                free(ch.lines[l].points);
        }
        ch.nlines = kept;
        most = kept > most ? kept : most;
        if (kept > 0)
            d->charts[kept_charts++] = ch;
        else
            free(ch.lines);
    }
    d->ncharts = kept_charts;
    free(used);
    const plot_line **sorted = malloc(most * sizeof *sorted);
    if (sorted == NULL) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    for (size_t c = 0; c < d->ncharts; c++)
        number_styles(&d->charts[c], sorted);
    free(sorted);
    return 0;
}
