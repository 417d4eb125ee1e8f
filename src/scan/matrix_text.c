#include "matrix_text.h"

#include <math.h>
#include <string.h>

/* A cell's text: a figure with one decimal, '-' or '?'. */
static void cell(char *buf, size_t len, const double *pair_bw, int n, int row, int col)
{
    double x = pair_bw[row * n + col];
    if (row == col)
        snprintf(buf, len, "-");
    else if (!isfinite(x))
        snprintf(buf, len, "?");
    else
        snprintf(buf, len, "%.1f", x);
}

/* Width of the label column and of every figure column. */
static void widths(const char *const *hosts, int n, const double *pair_bw, int *label, int *col)
{
    char buf[64];
    *label = 0;
    *col = 1;
    for (int i = 0; i < n; i++) {
        int h = (int)strlen(hosts[i]);
        if (h > *label)
            *label = h;
        if (h > *col)
            *col = h;
        for (int j = 0; j < n; j++) {
            cell(buf, sizeof buf, pair_bw, n, i, j);
            if ((int)strlen(buf) > *col)
                *col = (int)strlen(buf);
        }
    }
}

int cb_scan_matrix_width(const char *const *hosts, int nnodes, const double *pair_bw,
                         const char *prefix)
{
    int label, col;
    widths(hosts, nnodes, pair_bw, &label, &col);
    return (int)strlen(prefix) + label + nnodes * (col + 2);
}

int cb_scan_matrix_print(FILE *out, const char *const *hosts, int nnodes,
                         const double *pair_bw, const char *prefix, int width)
{
    if (cb_scan_matrix_width(hosts, nnodes, pair_bw, prefix) > width)
        return 1;
    int label, col;
    char buf[64];
    widths(hosts, nnodes, pair_bw, &label, &col);
    fprintf(out, "%s%-*s", prefix, label, "");
    for (int j = 0; j < nnodes; j++)
        fprintf(out, "  %*s", col, hosts[j]);
    fputc('\n', out);
    for (int i = 0; i < nnodes; i++) {
        fprintf(out, "%s%-*s", prefix, label, hosts[i]);
        for (int j = 0; j < nnodes; j++) {
            cell(buf, sizeof buf, pair_bw, nnodes, i, j);
            fprintf(out, "  %*s", col, buf);
        }
        fputc('\n', out);
    }
    return 0;
}

int cb_scan_pair_line(char *buf, size_t len, const char *prefix, const char *host_a,
                      const char *host_b, double figure)
{
    return snprintf(buf, len, "%spair %s %s %.2f GB/s", prefix, host_a, host_b, figure);
}

int cb_scan_suspect_line(char *buf, size_t len, const cb_scan_finding *f, const char *host_a,
                         const char *host_b, const char *gpu, const char *confidence)
{
    char who[512];
    const char *what = "";
    switch (f->reason) {
    case CB_SCAN_NODE_FIGURE:
    case CB_SCAN_NODE_PAIRS:
    case CB_SCAN_NODE_WRONG:
        if (gpu != NULL && gpu[0] != '\0')
            snprintf(who, sizeof who, "node %s (GPU %s)", host_a, gpu);
        else
            snprintf(who, sizeof who, "node %s", host_a);
        what = f->reason == CB_SCAN_NODE_FIGURE ? "node all-reduce " :
               f->reason == CB_SCAN_NODE_PAIRS ? "pairs " : "";
        break;
    case CB_SCAN_LINK:
        snprintf(who, sizeof who, "link %s - %s", host_a, host_b);
        break;
    case CB_SCAN_RAIL:
        snprintf(who, sizeof who, "rail %d", f->a);
        break;
    }
    if (f->reason == CB_SCAN_NODE_WRONG)
        return snprintf(buf, len, "# Suspect %s: %llu wrong element%s", who, f->wrong,
                        f->wrong == 1 ? "" : "s");
    int has = confidence != NULL && confidence[0] != '\0';
    return snprintf(buf, len, "# Suspect %s: %s%.2f GB/s, reference %.2f GB/s, ratio %.2f%s%s",
                    who, what, f->figure, f->median, f->ratio, has ? ", confidence " : "",
                    has ? confidence : "");
}

/* Whether label a equals another of the n labels. */
static int label_taken(const char *labels, size_t width, int n, int a)
{
    for (int b = 0; b < n; b++)
        if (b != a && strcmp(labels + (size_t)b * width, labels + (size_t)a * width) == 0)
            return 1;
    return 0;
}

void cb_scan_distinct_hosts(char *labels, size_t width, int n)
{
    if (width < 8)
        return;
    for (int a = 1; a < n; a++) {
        char *mine = labels + (size_t)a * width;
        int same = 0;
        for (int b = 0; b < a && !same; b++)
            same = strcmp(labels + (size_t)b * width, mine) == 0;
        if (!same)
            continue;
        /* The node's number after '#' takes the end of the label (a
         * truncated one loses its tail); another suffix on the rare
         * label that already reads so. */
        char base[256];
        snprintf(base, sizeof base, "%s", mine);
        for (int k = 0; k < 1000; k++) {
            char suffix[32];
            if (k == 0)
                snprintf(suffix, sizeof suffix, "#%d", a);
            else
                snprintf(suffix, sizeof suffix, "#%d.%d", a, k);
            size_t keep = strlen(base), room = width - 1 - strlen(suffix);
            if (keep > room)
                keep = room;
            snprintf(mine, width, "%.*s%s", (int)keep, base, suffix);
            if (!label_taken(labels, width, n, a))
                break;
        }
    }
}
