/*
 * The data of nccl-collbench-plot: CSV files read into charts (one per
 * collective), lines (one per file, backend, datatype, reduction, placement
 * and layout) and points (one per size, repeated rows averaged), and each
 * file's run context. All text taken from a file is made safe for a gnuplot
 * string first (plot_safe_text), so no file can inject gnuplot code.
 */
#ifndef CB_PLOTDATA_H
#define CB_PLOTDATA_H

#include <stddef.h>

typedef struct plot_point {
    unsigned long long bytes;
    double busbw, time_us;    /* averages */
    int has_busbw;            /* some row gave a bandwidth above 0 */
} plot_point;

typedef struct plot_line {
    size_t file;              /* index of the CSV file */
    char label[128];          /* safe text */
    size_t style;             /* colour index: the same label shares it across files */
    plot_point *points;       /* by size */
    size_t npoints;
} plot_line;

typedef struct plot_chart {
    char collective[64];      /* a checked name: [a-z0-9_]+ */
    plot_line *lines;
    size_t nlines, lines_cap;
    int has_busbw;            /* some line has a bandwidth */
    int sizeless;             /* every point is of 0 bytes (barrier): time alone */
} plot_chart;

typedef struct plot_data {
    plot_chart *charts;       /* in the order the files first name them */
    size_t ncharts;
    size_t nfiles;
    char **contexts;          /* per file: safe text naming its run */
    size_t unusable;          /* values skipped as not finite (nan, inf) */
} plot_data;

/* Replace every character that could end or act inside a gnuplot string. */
void plot_safe_text(char *dst, size_t cap, const char *src);

/* Read the files; 0, or -1 with a message naming file, line and column. */
int plot_read(plot_data *d, const char *const *paths, size_t nfiles, char *err,
              size_t err_len);

void plot_free(plot_data *d);

#endif
