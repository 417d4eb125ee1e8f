/*
 * nccl-collbench-plot: charts from nccl-collbench CSV files with gnuplot.
 * For every collective, bus bandwidth versus size and time versus size, one
 * line per file, backend, datatype, reduction and placement (told apart by
 * colour, marker and dash: plot_line_look; --series picks them);
 * collectives without sizes (barrier) get a time chart alone. CSV text reaches the gnuplot script only through
 * plot_safe_text's whitelist, so a file cannot run gnuplot or shell code.
 * Exit status: 0 charts written, 1 gnuplot missing or failed, 2 usage or
 * input error (unusable data included).
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/format.h"
#include "common/grow.h"
#include "config.h"
#include "plotdata.h"

enum { EXIT_DONE = 0, EXIT_GNUPLOT = 1, EXIT_BAD_INPUT = 2 };

static const char *const format_names[] = {"png", "svg"};

typedef struct options {
    const char **csv;
    size_t ncsv;
    const char *outdir;
    const char *series;   /* --series: patterns of the lines to draw, or NULL */
    int formats[2];       /* png, svg wanted */
} options;

/* A chart file to be written. */
typedef struct target {
    char path[4200];
} target;

typedef struct targets {
    target *items;
    size_t n, cap;
} targets;

static int say(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int say(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "nccl-collbench-plot: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    if (status == EXIT_BAD_INPUT)
        fprintf(stderr, "Try 'nccl-collbench-plot --help' for more information.\n");
    return status;
}

/* Is prog an executable file in a folder of PATH? */
static int on_path(const char *prog)
{
    const char *path = getenv("PATH");
    if (path == NULL)
        return 0;
    char candidate[4096];
    while (*path) {
        size_t len = strcspn(path, ":");
        snprintf(candidate, sizeof candidate, "%.*s/%s", (int)len, path, prog);
        if (len > 0 && access(candidate, X_OK) == 0)
            return 1;
        path += len;
        if (*path == ':')
            path++;
    }
    return 0;
}

/* A string for a gnuplot single-quoted literal: quotes doubled. */
static void gnuplot_quote(FILE *f, const char *text)
{
    fputc('\'', f);
    for (const char *p = text; *p; p++) {
        if (*p == '\'')
            fputc('\'', f);
        fputc(*p, f);
    }
    fputc('\'', f);
}

static int run_gnuplot(const char *script)
{
    pid_t pid = fork();
    if (pid < 0)
        return say(EXIT_GNUPLOT, "cannot start gnuplot: %s", strerror(errno));
    if (pid == 0) {
        execlp("gnuplot", "gnuplot", script, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return say(EXIT_GNUPLOT, "waiting for gnuplot: %s", strerror(errno));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return say(EXIT_GNUPLOT, "gnuplot failed (status %d) on %s", WEXITSTATUS(status), script);
    return EXIT_DONE;
}

/* Remove the scratch folder and the files we wrote into it. */
static void remove_workdir(const char *workdir)
{
    DIR *d = opendir(workdir);
    if (d != NULL) {
        struct dirent *ent;
        char path[4200];
        while ((ent = readdir(d)) != NULL) {
            if (strcmp(ent->d_name, ".") == 0 || strcmp(ent->d_name, "..") == 0)
                continue;
            snprintf(path, sizeof path, "%s/%s", workdir, ent->d_name);
            unlink(path);
        }
        closedir(d);
    }
    rmdir(workdir);
}


static void usage(void)
{
    printf("Usage: nccl-collbench-plot [OPTION]... FILE.csv...\n"
           "Chart bus bandwidth and time against size for each collective in the CSV\n"
           "files (written by nccl-collbench --csv), with gnuplot; several files\n"
           "overlay, one dash style per file. Lines differ by colour, then marker,\n"
           "then dash: 48 per file, 240 with one file, before two look alike.\n\n"
           "  -o, --output DIR     write the charts into DIR (created if missing) [.]\n"
           "  -f, --format FORMAT  png, svg or png,svg [png]\n"
           "  -s, --series LIST    draw only the lines whose name matches a pattern of\n"
           "                       LIST, a comma list of shell patterns matched against\n"
           "                       the names in the charts' keys ('*float*,*half*')\n"
           "                       [every line]\n"
           "  -h, --help           print this help and exit\n"
           "  -V, --version        print the version and exit\n\n"
           "Writes DIR/COLLECTIVE-busbw.FORMAT and DIR/COLLECTIVE-time.FORMAT (barrier:\n"
           "the time chart alone) and prints the path of each chart written.\n"
           "Exit status: 0 charts written, 1 gnuplot missing or failed, 2 usage or\n"
           "input error, or no usable data.\n");
}

static int parse_formats(const char *text, int formats[2])
{
    formats[0] = formats[1] = 0;
    const char *p = text;
    for (;;) {
        size_t len = strcspn(p, ",");
        size_t f = 0;
        while (f < 2 && !(strlen(format_names[f]) == len && strncmp(p, format_names[f], len) == 0))
            f++;
        if (f == 2)
            return -1;
        formats[f] = 1;
        if (p[len] == '\0')
            return 0;
        p += len + 1;
    }
}

/* Returns -1 to go on, else an exit status. */
static int parse_options(int argc, char **argv, options *o)
{
    memset(o, 0, sizeof *o);
    o->outdir = ".";
    o->formats[0] = 1;
    o->csv = calloc((size_t)argc, sizeof *o->csv);
    if (o->csv == NULL)
        return say(EXIT_BAD_INPUT, "out of memory");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage();
            return EXIT_DONE;
        }
        if (strcmp(a, "-V") == 0 || strcmp(a, "--version") == 0) {
            printf("nccl-collbench-plot %s\n", PACKAGE_VERSION);
            return EXIT_DONE;
        }
        int is_output = strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0;
        int is_series = strcmp(a, "-s") == 0 || strcmp(a, "--series") == 0;
        if (is_output || is_series || strcmp(a, "-f") == 0 || strcmp(a, "--format") == 0) {
            if (i + 1 >= argc)
                return say(EXIT_BAD_INPUT, "%s needs a value", a);
            const char *value = argv[++i];
            if (is_output)
                o->outdir = value;
            else if (is_series && (value[0] == '\0' || strstr(value, ",,") != NULL ||
                                   value[0] == ',' || value[strlen(value) - 1] == ','))
                return say(EXIT_BAD_INPUT, "--series: '%s' has an empty pattern", value);
            else if (is_series)
                o->series = value;
            else if (parse_formats(value, o->formats) != 0)
                return say(EXIT_BAD_INPUT, "--format: '%s' is not png, svg or png,svg", value);
            continue;
        }
        if (a[0] == '-' && a[1] != '\0')
            return say(EXIT_BAD_INPUT, "unknown option %s", a);
        o->csv[o->ncsv++] = a;
    }
    if (o->ncsv == 0)
        return say(EXIT_BAD_INPUT, "give the CSV file to chart");
    if (o->outdir[0] == '\0')
        return say(EXIT_BAD_INPUT, "--output: the folder name is empty");
    for (const unsigned char *p = (const unsigned char *)o->outdir; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            return say(EXIT_BAD_INPUT, "--output: the folder name holds a control character");
    return -1;
}

static int add_target(targets *t, const char *outdir, const char *coll, const char *kind,
                      const char *format)
{
    target *grown = cb_grow(t->items, &t->cap, t->n, sizeof *grown, 16);
    if (grown == NULL)
        return -1;
    t->items = grown;
    snprintf(t->items[t->n].path, sizeof t->items[t->n].path, "%s/%s-%s.%s", outdir, coll,
             kind, format);
    /* A file of that name from before must not pass for one written now. */
    unlink(t->items[t->n].path);
    t->n++;
    return 0;
}

/* "8 B", "1 KiB", "256 MiB": exact for powers of two. */
static void size_label(unsigned long long v, char *buf, size_t len)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    size_t u = 0;
    while (u + 1 < sizeof units / sizeof units[0] && v >= 1024 && v % 1024 == 0) {
        v /= 1024;
        u++;
    }
    snprintf(buf, len, "%llu %s", v, units[u]);
}

/* One tick of the size axis, as gnuplot's "8 B" 8; a comma before all but the first. */
static void size_tick(FILE *script, int e, int first)
{
    char label[32];
    size_label(1ULL << e, label, sizeof label);
    fprintf(script, "%s\"%s\" %llu", first ? "" : ", ", label, 1ULL << e);
}

/* Ticks at the powers of two just below the smallest size and above the
 * largest, and between them every 1, 2, 5 or 10 powers (at most about 10
 * ticks), counted from 1 B so that 1 KiB, 1 MiB and 1 GiB are among them:
 * 8 B, 1 KiB, 32 KiB, 1 MiB, 32 MiB, 1 GiB. */
static void size_ticks(FILE *script, const plot_chart *ch)
{
    unsigned long long lo = 0, hi = 0;
    for (size_t l = 0; l < ch->nlines; l++)
        for (size_t p = 0; p < ch->lines[l].npoints; p++) {
            unsigned long long b = ch->lines[l].points[p].bytes;
            if (b > 0 && (lo == 0 || b < lo))
                lo = b;
            if (b > hi)
                hi = b;
        }
    int e_lo = 0, e_hi = 0;
    while (e_lo < 63 && (1ULL << (e_lo + 1)) <= lo)
        e_lo++;
    while (e_hi < 63 && (1ULL << e_hi) < hi)
        e_hi++;
    static const int steps[] = {1, 2, 5, 10, 20};
    int step = 20;
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++)
        if ((e_hi - e_lo) / steps[i] <= 10) {
            step = steps[i];
            break;
        }
    fprintf(script, "set xtics (");
    size_tick(script, e_lo, 1);
    /* Inner ticks keep more than half a step from the end ones, whose
     * labels they would crowd. */
    for (int e = (e_lo / step + 1) * step; e < e_hi; e += step)
        if (2 * (e - e_lo) > step && 2 * (e_hi - e) > step)
            size_tick(script, e, 0);
    if (e_hi > e_lo)
        size_tick(script, e_hi, 0);
    /* A margin, so that the end ticks and points are not on the border. */
    fprintf(script, ")\nset xrange [%.6g:%.6g]\n", (double)(1ULL << e_lo) / 1.2,
            (double)(1ULL << e_hi) * 1.2);
}

/* The title: what the chart shows, then one line per file naming its run. */
static void chart_title(FILE *script, const plot_data *d, const char *coll, const char *what)
{
    fprintf(script, "set title \"%s: %s", coll, what);
    size_t shown = d->nfiles < 6 ? d->nfiles : 5;
    for (size_t f = 0; f < shown; f++)
        fprintf(script, "\\n%s", d->contexts[f]);
    if (shown < d->nfiles)
        fprintf(script, "\\nand %zu more files", d->nfiles - shown);
    fprintf(script, "\"\n");
}

/* Data files of one chart: one per line, bytes then the metric. */
static int write_data(const char *workdir, size_t c, const plot_chart *ch, int busbw,
                      size_t *written)
{
    *written = 0;
    for (size_t l = 0; l < ch->nlines; l++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/c%zu-l%zu-%d.dat", workdir, c, l, busbw);
        FILE *f = fopen(path, "w");
        if (f == NULL)
            return say(EXIT_GNUPLOT, "cannot write '%s': %s", path, strerror(errno));
        for (size_t p = 0; p < ch->lines[l].npoints; p++) {
            const plot_point *pt = &ch->lines[l].points[p];
            if (pt->bytes == 0 || (busbw && !pt->has_busbw))
                continue;
            fprintf(f, "%llu %.9g\n", pt->bytes, busbw ? pt->busbw : pt->time_us);
            (*written)++;
        }
        if (fclose(f) != 0)
            return say(EXIT_GNUPLOT, "cannot write '%s'", path);
    }
    return EXIT_DONE;
}

static void plot_lines(FILE *script, const plot_data *d, const char *workdir, size_t c,
                       const plot_chart *ch, int busbw, const char *const *file_names)
{
    fprintf(script, "plot ");
    size_t plotted = 0;
    for (size_t l = 0; l < ch->nlines; l++) {
        const plot_line *line = &ch->lines[l];
        int any = 0;
        for (size_t p = 0; p < line->npoints; p++)
            any |= line->points[p].bytes > 0 && (!busbw || line->points[p].has_busbw);
        if (!any)
            continue;
        char data[4200];
        snprintf(data, sizeof data, "%s/c%zu-l%zu-%d.dat", workdir, c, l, busbw);
        fprintf(script, "%s", plotted++ ? ", \\\n     " : "");
        gnuplot_quote(script, data);
        plot_look look = plot_line_look(line->style, line->file);
        fprintf(script, " using 1:2 with linespoints lc %zu dt %zu pt %zu title \"%s%s%s%s\"",
                look.colour, look.dash, look.marker, line->label,
                d->nfiles > 1 ? " [" : "", d->nfiles > 1 ? file_names[line->file] : "",
                d->nfiles > 1 ? "]" : "");
    }
    fprintf(script, "\n");
}

/* The time of each line of a chart without sizes (barrier), as bars. */
static int write_bars(FILE *script, const plot_data *d, const char *workdir, size_t c,
                      const plot_chart *ch, const char *const *file_names)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/c%zu-bars.dat", workdir, c);
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return say(EXIT_GNUPLOT, "cannot write '%s': %s", path, strerror(errno));
    fprintf(script, "unset logscale\nset xrange [-0.5:%zu.5]\nset yrange [0:*]\nset xtics (",
            ch->nlines - 1);
    for (size_t l = 0; l < ch->nlines; l++) {
        fprintf(f, "%zu %.9g\n", l, ch->lines[l].points[0].time_us);
        fprintf(script, "%s\"%s%s%s%s\" %zu", l ? ", " : "", ch->lines[l].label,
                d->nfiles > 1 ? " [" : "", d->nfiles > 1 ? file_names[ch->lines[l].file] : "",
                d->nfiles > 1 ? "]" : "", l);
    }
    fprintf(script, ")\nset xlabel ''\nset ylabel 'time (us)'\n");
    chart_title(script, d, ch->collective, "time");
    fprintf(script, "plot ");
    gnuplot_quote(script, path);
    fprintf(script, " using 1:2 with boxes fill solid 0.5 lc 1 notitle\n"
                    "set yrange [*:*]\n");
    return fclose(f) != 0 ? say(EXIT_GNUPLOT, "cannot write '%s'", path) : EXIT_DONE;
}

/* The script part of one chart, for one format. */
static int script_chart(FILE *script, const options *o, const plot_data *d,
                        const char *workdir, size_t c, const char *format, targets *out,
                        const char *const *file_names)
{
    const plot_chart *ch = &d->charts[c];
    if (ch->sizeless) {
        if (add_target(out, o->outdir, ch->collective, "time", format) != 0)
            return say(EXIT_GNUPLOT, "out of memory");
        fprintf(script, "set output ");
        gnuplot_quote(script, out->items[out->n - 1].path);
        fprintf(script, "\n");
        return write_bars(script, d, workdir, c, ch, file_names);
    }
    for (int busbw = 1; busbw >= 0; busbw--) {
        size_t points = 0;
        int rc = write_data(workdir, c, ch, busbw, &points);
        if (rc != EXIT_DONE)
            return rc;
        if (points == 0)
            continue;   /* no bandwidth (one rank): no bandwidth chart */
        if (add_target(out, o->outdir, ch->collective, busbw ? "busbw" : "time", format) != 0)
            return say(EXIT_GNUPLOT, "out of memory");
        fprintf(script, "set output ");
        gnuplot_quote(script, out->items[out->n - 1].path);
        fprintf(script, "\nunset logscale\nset logscale x 2\nset yrange [%s:*]\n",
                busbw ? "0" : "*");
        if (!busbw)
            fprintf(script, "set logscale y 10\n");
        size_ticks(script, ch);
        fprintf(script, "set xlabel 'size'\nset ylabel '%s'\n",
                busbw ? "bus bandwidth (GB/s)" : "time (us)");
        chart_title(script, d, ch->collective,
                    busbw ? "bus bandwidth versus size" : "time versus size");
        plot_lines(script, d, workdir, c, ch, busbw, file_names);
    }
    return EXIT_DONE;
}

/* The whole script: every chart in every format asked for. */
static int write_script(const char *path, const options *o, const plot_data *d,
                        const char *workdir, targets *out, const char *const *file_names)
{
    FILE *script = fopen(path, "w");
    if (script == NULL)
        return say(EXIT_GNUPLOT, "cannot write %s", path);
    fprintf(script, "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
                    "    png_terminal = 'pngcairo noenhanced size 1000,650'\n"
                    "} else {\n    png_terminal = 'png noenhanced size 1000,650'\n}\n"
                    "set grid\nset key left top noenhanced\nset boxwidth 0.6\n");
    int rc = EXIT_DONE;
    for (size_t f = 0; f < 2 && rc == EXIT_DONE; f++) {
        if (!o->formats[f])
            continue;
        fprintf(script, "%s", f == 1 ? "set terminal svg noenhanced size 1000,650\n"
                                     : "set terminal @png_terminal\n");
        for (size_t c = 0; c < d->ncharts && rc == EXIT_DONE; c++)
            rc = script_chart(script, o, d, workdir, c, format_names[f], out, file_names);
    }
    fprintf(script, "unset output\n");
    if (fclose(script) != 0 && rc == EXIT_DONE)
        rc = say(EXIT_GNUPLOT, "cannot write %s", path);
    return rc;
}

int main(int argc, char **argv)
{
    options o;
    int rc = parse_options(argc, argv, &o);
    if (rc >= 0) {
        free(o.csv);
        return rc;
    }
    if (!on_path("gnuplot")) {
        free(o.csv);
        return say(EXIT_GNUPLOT, "gnuplot not found on PATH: install it (Debian: gnuplot-nox) "
                                 "to draw charts");
    }
    plot_data d;
    char err[768];
    if (plot_read(&d, o.csv, o.ncsv, err, sizeof err) != 0 ||
        (o.series != NULL && plot_keep_series(&d, o.series, err, sizeof err) != 0)) {
        plot_free(&d);
        free(o.csv);
        return say(EXIT_BAD_INPUT, "%s", err);
    }
    if (d.ncharts == 0) {
        rc = d.unusable ? say(EXIT_BAD_INPUT, "no usable data: %zu value%s not finite (nan "
                                              "or inf)", d.unusable,
                              d.unusable == 1 ? " is" : "s are")
                        : say(EXIT_BAD_INPUT, "no data rows to chart");
        plot_free(&d);
        free(o.csv);
        return rc;
    }
    if (d.unusable)
        fprintf(stderr, "nccl-collbench-plot: warning: skipped %zu value%s that %s not finite "
                        "(nan or inf)\n", d.unusable, cb_plural((long long)d.unusable),
                d.unusable == 1 ? "is" : "are");
    char **names = calloc(o.ncsv, sizeof *names);
    targets out = {NULL, 0, 0};
    char workdir[] = "/tmp/nccl-collbench-plot.XXXXXX";
    int have_workdir = 0;
    rc = EXIT_DONE;
    for (size_t f = 0; names != NULL && f < o.ncsv; f++) {
        const char *base = strrchr(o.csv[f], '/') ? strrchr(o.csv[f], '/') + 1 : o.csv[f];
        names[f] = malloc(96);
        if (names[f] != NULL)
            plot_safe_text(names[f], 96, base);
        else
            rc = say(EXIT_GNUPLOT, "out of memory");
    }
    if (names == NULL)
        rc = say(EXIT_GNUPLOT, "out of memory");
    if (rc == EXIT_DONE && mkdir(o.outdir, 0777) != 0 && errno != EEXIST)
        rc = say(EXIT_BAD_INPUT, "cannot create '%s': %s", o.outdir, strerror(errno));
    if (rc == EXIT_DONE) {
        have_workdir = mkdtemp(workdir) != NULL;
        if (!have_workdir)
            rc = say(EXIT_GNUPLOT, "cannot make a scratch folder: %s", strerror(errno));
    }
    char script_path[4200];
    snprintf(script_path, sizeof script_path, "%s/plot.gp", workdir);
    if (rc == EXIT_DONE)
        rc = write_script(script_path, &o, &d, workdir, &out, (const char *const *)names);
    if (rc == EXIT_DONE)
        rc = run_gnuplot(script_path);
    /* Print what was written, whatever gnuplot said; remove empty leftovers. */
    for (size_t i = 0; i < out.n; i++) {
        struct stat st;
        if (stat(out.items[i].path, &st) == 0 && st.st_size > 0) {
            printf("%s\n", out.items[i].path);
        } else {
            unlink(out.items[i].path);
            if (rc == EXIT_DONE)
                rc = say(EXIT_GNUPLOT, "gnuplot did not write %s", out.items[i].path);
        }
    }
    if (have_workdir)
        remove_workdir(workdir);
    for (size_t f = 0; names != NULL && f < o.ncsv; f++)
        free(names[f]);
    free(names);
    free(out.items);
    plot_free(&d);
    free(o.csv);
    return rc;
}
