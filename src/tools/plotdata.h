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

/* A line's look in gnuplot's numbers (from 1): colour (lc), dash (dt) and
 * marker (pt). Colour by the line's style, then marker, then dash, with
 * the file's dash on top: every (style, file) looks different while style
 * < PLOT_COLOURS x PLOT_MARKERS and file < PLOT_DASHES, and with one file
 * while style < PLOT_COLOURS x PLOT_MARKERS x PLOT_DASHES (240). */
#define PLOT_COLOURS 8
#define PLOT_MARKERS 6
#define PLOT_DASHES 5
typedef struct plot_look {
    size_t colour, dash, marker;
} plot_look;
plot_look plot_line_look(size_t style, size_t file);

/* --series: keep the lines whose label matches one of the comma list's
 * shell patterns (fnmatch), drop charts left without lines and number the
 * styles again. 0, or -1 with a message naming a pattern that matches no
 * line, and the labels there are. */
int plot_keep_series(plot_data *d, const char *list, char *err, size_t err_len);

#endif
