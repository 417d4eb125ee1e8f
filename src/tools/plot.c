/*
 * nccl-collbench-plot: charts from an nccl-collbench CSV file with gnuplot.
 * For every collective in the file, two charts: bus bandwidth versus size and
 * time versus size, one line per backend, datatype, reduction and
 * placement. Rows with the same line and size (concatenated runs) are
 * averaged. Exit status: 0 charts written, 1 gnuplot missing or failed,
 * 2 usage or input error.
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

#include "config.h"
#include "csvread.h"

enum { EXIT_DONE = 0, EXIT_GNUPLOT = 1, EXIT_BAD_INPUT = 2 };

typedef struct options {
    const char *csv;
    const char *outdir;
    const char *format;   /* png or svg */
} options;

/* One point of one line: a size and the averaged figures there. */
typedef struct point {
    unsigned long long bytes;
    double busbw_sum;
    double time_sum;
    int n;
} point;

typedef struct line {
    char label[160];
    point *points;
    size_t npoints;
    size_t cap;
} line;

typedef struct columns {
    int collective, backend, datatype, redop, placement, bytes, busbw, time;
    int layout;   /* -1 in files from before --layout */
} columns;

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

static void usage(void)
{
    printf("Usage: nccl-collbench-plot [OPTION]... FILE.csv\n"
           "Chart bus bandwidth and time against size for each collective in FILE.csv\n"
           "(written by nccl-collbench --csv), with gnuplot.\n\n"
           "  -o, --output DIR     write the charts into DIR (created if missing) [.]\n"
           "  -f, --format FORMAT  png or svg [png]\n"
           "  -h, --help           print this help and exit\n"
           "  -V, --version        print the version and exit\n\n"
           "Writes DIR/COLLECTIVE-busbw.FORMAT and DIR/COLLECTIVE-time.FORMAT.\n"
           "Exit status: 0 charts written, 1 gnuplot missing or failed, 2 usage or\n"
           "input error.\n");
}

/* Returns -1 to go on, else an exit status. */
static int parse_options(int argc, char **argv, options *o)
{
    o->csv = NULL;
    o->outdir = ".";
    o->format = "png";
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
        const char **target = NULL;
        if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0)
            target = &o->outdir;
        else if (strcmp(a, "-f") == 0 || strcmp(a, "--format") == 0)
            target = &o->format;
        if (target != NULL) {
            if (i + 1 >= argc)
                return say(EXIT_BAD_INPUT, "%s needs a value", a);
            *target = argv[++i];
            continue;
        }
        if (a[0] == '-' && a[1] != '\0')
            return say(EXIT_BAD_INPUT, "unknown option %s", a);
        if (o->csv != NULL)
            return say(EXIT_BAD_INPUT, "unexpected argument '%s' (give one CSV file)", a);
        o->csv = a;
    }
    if (o->csv == NULL)
        return say(EXIT_BAD_INPUT, "give the CSV file to chart");
    if (strcmp(o->format, "png") != 0 && strcmp(o->format, "svg") != 0)
        return say(EXIT_BAD_INPUT, "--format: '%s' is not png or svg", o->format);
    if (o->outdir[0] == '\0')
        return say(EXIT_BAD_INPUT, "--output: the folder name is empty");
    return -1;
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

static int add_point(line *l, unsigned long long bytes, double busbw, double time_us)
{
    for (size_t i = 0; i < l->npoints; i++)
        if (l->points[i].bytes == bytes) {
            l->points[i].busbw_sum += busbw;
            l->points[i].time_sum += time_us;
            l->points[i].n++;
            return 0;
        }
    if (l->npoints == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 32;
        point *grown = realloc(l->points, cap * sizeof *grown);
        if (grown == NULL)
            return -1;
        l->points = grown;
        l->cap = cap;
    }
    l->points[l->npoints++] = (point){bytes, busbw, time_us, 1};
    return 0;
}

static int by_bytes(const void *a, const void *b)
{
    unsigned long long x = ((const point *)a)->bytes, y = ((const point *)b)->bytes;
    return x < y ? -1 : x > y;
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

/* Write the data files and the script for one collective's two charts. */
static int write_collective(const options *o, const char *workdir, const char *coll, line *lines,
                            size_t nlines, FILE *script)
{
    for (size_t l = 0; l < nlines; l++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s-%zu.dat", workdir, coll, l);
        FILE *f = fopen(path, "w");
        if (f == NULL)
            return say(EXIT_BAD_INPUT, "cannot write '%s': %s", path, strerror(errno));
        qsort(lines[l].points, lines[l].npoints, sizeof *lines[l].points, by_bytes);
        for (size_t i = 0; i < lines[l].npoints; i++) {
            const point *p = &lines[l].points[i];
            fprintf(f, "%llu %.9g %.9g\n", p->bytes, p->busbw_sum / p->n, p->time_sum / p->n);
        }
        if (fclose(f) != 0)
            return say(EXIT_BAD_INPUT, "cannot write '%s'", path);
    }
    static const struct {
        const char *name, *ylabel;
        int column;
    } charts[] = {{"busbw", "bus bandwidth (GB/s)", 2}, {"time", "time (us)", 3}};
    for (size_t c = 0; c < 2; c++) {
        char out[4200];
        snprintf(out, sizeof out, "%s/%s-%s.%s", o->outdir, coll, charts[c].name, o->format);
        fprintf(script, "set output ");
        gnuplot_quote(script, out);
        fprintf(script, "\nset title '%s: %s versus size'\nset ylabel '%s'\n", coll,
                charts[c].name, charts[c].ylabel);
        fprintf(script, "%s", c == 1 ? "set logscale y 10\n" : "unset logscale y\n");
        fprintf(script, "plot ");
        for (size_t l = 0; l < nlines; l++) {
            char data[4200];
            snprintf(data, sizeof data, "%s/%s-%zu.dat", workdir, coll, l);
            fprintf(script, "%s", l ? ", \\\n     " : "");
            gnuplot_quote(script, data);
            fprintf(script, " using 1:%d with linespoints title ", charts[c].column);
            gnuplot_quote(script, lines[l].label);
        }
        fprintf(script, "\n");
    }
    return EXIT_DONE;
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

static int find_columns(const cb_csv_table *t, columns *c)
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
    return c->collective < 0 || c->backend < 0 || c->datatype < 0 || c->redop < 0 ||
                   c->placement < 0 || c->bytes < 0 || c->busbw < 0 || c->time < 0
               ? -1
               : 0;
}

static void free_lines(line *lines, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(lines[i].points);
    free(lines);
}

/* Gather one collective's lines and write its part of the script. */
static int chart_collective(const options *o, const cb_csv_table *t, const columns *c,
                            const char *coll, const char *workdir, FILE *script)
{
    line *lines = calloc(t->nrows, sizeof *lines);
    size_t nlines = 0;
    if (lines == NULL)
        return say(EXIT_BAD_INPUT, "out of memory");
    int rc = EXIT_DONE;
    for (size_t r = 0; r < t->nrows && rc == EXIT_DONE; r++) {
        char **row = t->rows[r];
        if (strcmp(row[c->collective], coll) != 0)
            continue;
        char label[160];
        /* Column-layout rows are a line of their own. */
        int col = c->layout >= 0 && strcmp(row[c->layout], "col") == 0;
        snprintf(label, sizeof label, "%s %s %s %s%s", row[c->backend], row[c->datatype],
                 row[c->redop], row[c->placement], col ? " col" : "");
        size_t l = 0;
        while (l < nlines && strcmp(lines[l].label, label) != 0)
            l++;
        if (l == nlines)
            snprintf(lines[nlines++].label, sizeof lines[0].label, "%s", label);
        char *end1, *end2, *end3;
        unsigned long long bytes = strtoull(row[c->bytes], &end1, 10);
        double busbw = strtod(row[c->busbw], &end2), time_us = strtod(row[c->time], &end3);
        if (*end1 || *end2 || *end3 || end1 == row[c->bytes])
            rc = say(EXIT_BAD_INPUT, "%s: data row %zu: bytes, busbw_gbps or time_us is not a "
                                     "number", o->csv, r + 1);
        else if (add_point(&lines[l], bytes, busbw, time_us) != 0)
            rc = say(EXIT_BAD_INPUT, "out of memory");
    }
    if (rc == EXIT_DONE)
        rc = write_collective(o, workdir, coll, lines, nlines, script);
    free_lines(lines, nlines);
    return rc;
}

static int valid_name(const char *s)
{
    if (*s == '\0')
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
            return 0;
    return 1;
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

int main(int argc, char **argv)
{
    options o;
    int rc = parse_options(argc, argv, &o);
    if (rc >= 0)
        return rc;
    if (!on_path("gnuplot"))
        return say(EXIT_GNUPLOT, "gnuplot not found on PATH: install it (Debian: gnuplot-nox) "
                                 "to draw charts");
    cb_csv_table t;
    char err[512];
    if (cb_csv_read_file(o.csv, &t, err, sizeof err) != 0)
        return say(EXIT_BAD_INPUT, "%s", err);
    columns c;
    if (find_columns(&t, &c) != 0) {
        cb_csv_free(&t);
        return say(EXIT_BAD_INPUT, "'%s' is not an nccl-collbench CSV file: a needed column "
                                   "is missing", o.csv);
    }
    if (mkdir(o.outdir, 0777) != 0 && errno != EEXIST) {
        cb_csv_free(&t);
        return say(EXIT_BAD_INPUT, "cannot create '%s': %s", o.outdir, strerror(errno));
    }
    char workdir[] = "/tmp/nccl-collbench-plot.XXXXXX";
    if (mkdtemp(workdir) == NULL) {
        cb_csv_free(&t);
        return say(EXIT_GNUPLOT, "cannot make a scratch folder: %s", strerror(errno));
    }
    char script_path[4200];
    snprintf(script_path, sizeof script_path, "%s/plot.gp", workdir);
    FILE *script = fopen(script_path, "w");
    rc = script ? EXIT_DONE : say(EXIT_GNUPLOT, "cannot write %s", script_path);
    if (script != NULL) {
        fprintf(script, "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
                        "    png_terminal = 'pngcairo size 1000,600'\n"
                        "} else {\n    png_terminal = 'png size 1000,600'\n}\n");
        fprintf(script, "%s", strcmp(o.format, "svg") == 0
                                  ? "set terminal svg size 1000,600\n"
                                  : "set terminal @png_terminal\n");
        fprintf(script, "set logscale x 2\nset xlabel 'size (bytes)'\nset grid\n"
                        "set key left top\nset format x '%%.0b %%BB'\n");
    }
    /* Each collective once, in the order the file first names them. */
    size_t charted = 0;
    const char **done = calloc(t.nrows ? t.nrows : 1, sizeof *done);
    if (done == NULL && rc == EXIT_DONE)
        rc = say(EXIT_GNUPLOT, "out of memory");
    for (size_t r = 0; r < t.nrows && rc == EXIT_DONE; r++) {
        const char *coll = t.rows[r][c.collective];
        size_t seen = 0;
        while (seen < charted && strcmp(done[seen], coll) != 0)
            seen++;
        if (seen < charted)
            continue;
        if (!valid_name(coll)) {
            rc = say(EXIT_BAD_INPUT, "'%s': data row %zu: '%s' is not a collective name", o.csv,
                     r + 1, coll);
            break;
        }
        rc = chart_collective(&o, &t, &c, coll, workdir, script);
        if (rc == EXIT_DONE) {
            printf("%s/%s-busbw.%s\n%s/%s-time.%s\n", o.outdir, coll, o.format, o.outdir, coll,
                   o.format);
            done[charted++] = coll;
        }
    }
    free(done);
    if (script != NULL && fclose(script) != 0 && rc == EXIT_DONE)
        rc = say(EXIT_GNUPLOT, "cannot write %s", script_path);
    if (rc == EXIT_DONE && charted == 0)
        rc = say(EXIT_BAD_INPUT, "'%s' has no data rows", o.csv);
    if (rc == EXIT_DONE)
        rc = run_gnuplot(script_path);
    remove_workdir(workdir);
    cb_csv_free(&t);
    return rc;
}
