/* nccl-collbench-plot's line looks and --series (src/tools/plotdata.c):
 * lines stay apart past 8 (colour, then marker, then dash), and --series
 * keeps the lines it names, drops charts left empty and numbers the
 * colours again. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/plotdata.h"
#include "unit.h"

static void test_looks(unit_state *u)
{
    /* Every (style, file) of up to 48 styles and 5 files looks different. */
    enum { STYLES = PLOT_COLOURS * PLOT_MARKERS, FILES = PLOT_DASHES };
    static int seen[PLOT_COLOURS + 1][PLOT_DASHES + 1][PLOT_MARKERS + 1];
    int clashes = 0, out_of_range = 0;
    for (size_t f = 0; f < FILES; f++)
        for (size_t s = 0; s < STYLES; s++) {
            plot_look k = plot_line_look(s, f);
            if (k.colour < 1 || k.colour > PLOT_COLOURS || k.dash < 1 || k.dash > PLOT_DASHES ||
                k.marker < 1 || k.marker > PLOT_MARKERS) {
                out_of_range++;
                continue;
            }
            clashes += seen[k.colour][k.dash][k.marker]++ > 0;
        }
    CHECK(u, out_of_range == 0);
    CHECK(u, clashes == 0);
    /* One file: 240 lines before two look alike. */
    memset(seen, 0, sizeof seen);
    clashes = 0;
    for (size_t s = 0; s < STYLES * PLOT_DASHES; s++) {
        plot_look k = plot_line_look(s, 0);
        clashes += seen[k.colour][k.dash][k.marker]++ > 0;
    }
    CHECK(u, clashes == 0);
    /* The 9th line of a file is no longer the 1st again (it was: colour
     * alone, 8 of them). */
    plot_look first = plot_line_look(0, 0), ninth = plot_line_look(8, 0);
    CHECK(u, first.colour == ninth.colour);
    CHECK(u, first.marker != ninth.marker);
    /* A chart of up to 8 lines keeps one marker and one dash per file. */
    for (size_t s = 1; s < PLOT_COLOURS; s++) {
        plot_look k = plot_line_look(s, 1);
        CHECK(u, k.marker == 1 && k.dash == plot_line_look(0, 1).dash);
    }
}

/* A chart named coll whose lines are labels, each with one point. */
static void add_chart(plot_data *d, const char *coll, const char *const *labels, size_t n)
{
    plot_chart *ch = &d->charts[d->ncharts++];
    memset(ch, 0, sizeof *ch);
    snprintf(ch->collective, sizeof ch->collective, "%s", coll);
    ch->lines = calloc(n, sizeof *ch->lines);
    ch->nlines = ch->lines_cap = n;
    for (size_t l = 0; l < n; l++) {
        snprintf(ch->lines[l].label, sizeof ch->lines[l].label, "%s", labels[l]);
        ch->lines[l].style = 100 + l;   /* to be numbered again */
        ch->lines[l].points = calloc(1, sizeof *ch->lines[l].points);
        ch->lines[l].npoints = 1;
        ch->lines[l].points[0].bytes = 8;
    }
}

static void make_data(plot_data *d)
{
    static const char *const reduce[] = {"mpi double sum in-place", "mpi float max in-place",
                                         "mpi float sum in-place", "mpi half sum in-place"};
    static const char *const gather[] = {"mpi double none out-of-place"};
    memset(d, 0, sizeof *d);
    d->charts = calloc(2, sizeof *d->charts);
    d->nfiles = 1;
    d->contexts = calloc(1, sizeof *d->contexts);
    add_chart(d, "allreduce", reduce, 4);
    add_chart(d, "allgather", gather, 1);
}

static void test_series(unit_state *u)
{
    plot_data d;
    char err[512];
    make_data(&d);
    CHECK(u, plot_keep_series(&d, "*float*,*half*", err, sizeof err) == 0);
    CHECK(u, d.ncharts == 1 && strcmp(d.charts[0].collective, "allreduce") == 0);
    CHECK(u, d.ncharts == 1 && d.charts[0].nlines == 3);
    if (d.ncharts == 1 && d.charts[0].nlines == 3) {
        const plot_line *l = d.charts[0].lines;
        CHECK(u, strcmp(l[0].label, "mpi float max in-place") == 0);
        CHECK(u, strcmp(l[2].label, "mpi half sum in-place") == 0);
        /* Colours from 0 again, in label order. */
        CHECK(u, l[0].style == 0 && l[1].style == 1 && l[2].style == 2);
    }
    plot_free(&d);

    /* A pattern that names nothing is an error naming it; nothing is dropped. */
    make_data(&d);
    CHECK(u, plot_keep_series(&d, "*float*,*int8*", err, sizeof err) == -1);
    CHECK(u, strstr(err, "'*int8*' matches no series") != NULL);
    CHECK(u, d.ncharts == 2 && d.charts[0].nlines == 4);
    plot_free(&d);

    /* A whole label, no pattern characters. */
    make_data(&d);
    CHECK(u, plot_keep_series(&d, "mpi double none out-of-place", err, sizeof err) == 0);
    CHECK(u, d.ncharts == 1 && strcmp(d.charts[0].collective, "allgather") == 0);
    plot_free(&d);
}

int main(void)
{
    unit_state u = {0, 0};
    test_looks(&u);
    test_series(&u);
    return unit_done(&u, "unit_plot");
}
