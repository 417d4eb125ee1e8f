/* The health scan's text: the node pair matrix for the table output and
 * the '# Suspect' lines (nccl-collbench-collectives(7), "HEALTH SCAN"). */
#ifndef CB_SCAN_MATRIX_TEXT_H
#define CB_SCAN_MATRIX_TEXT_H

#include <stddef.h>
#include <stdio.h>

#include "verdict.h"

#define CB_SCAN_MATRIX_WIDTH 120   /* the table's default screen width */

/* Columns the matrix of nnodes hosts needs, each line starting with prefix. */
int cb_scan_matrix_width(const char *const *hosts, int nnodes, const double *pair_bw,
                         const char *prefix);

/* Print the nnodes x nnodes matrix pair_bw (row-major, GB/s) to out: a
 * header line of host names, then one line per host: its name and its
 * figures, '-' on the diagonal, '?' where a figure is absent (NaN). Every
 * line starts with prefix (e.g. "# "). Returns 0, or 1 when the widest
 * line would exceed width columns: then nothing is printed and the caller
 * prints cb_scan_pair_line rows instead. */
int cb_scan_matrix_print(FILE *out, const char *const *hosts, int nnodes,
                         const double *pair_bw, const char *prefix, int width);

/* One pair as a line: "<prefix>pair HOST_A HOST_B FIG GB/s". Returns the
 * length snprintf would write. */
int cb_scan_pair_line(char *buf, size_t len, const char *prefix, const char *host_a,
                      const char *host_b, double figure);

/* One suspect as a line, no newline:
 *   # Suspect node HOST (GPU BUSID): node all-reduce FIG GB/s, reference REF GB/s, ratio R, confidence C
 *   # Suspect node HOST (GPU BUSID): pairs FIG GB/s, reference REF GB/s, ratio R, confidence C
 *   # Suspect node HOST (GPU BUSID): N wrong elements ("1 wrong element")
 *   # Suspect link HOST_A - HOST_B: FIG GB/s, reference REF GB/s, ratio R, confidence C
 *   # Suspect rail L: FIG GB/s, reference REF GB/s, ratio R, confidence C
 * host_a names node/link end a, host_b link end b (NULL otherwise); gpu is
 * the bus id of the node's slowest (or wrong) GPU, NULL or "" to leave the
 * parenthesis out (the mpi backend has none); confidence NULL or "" leaves
 * ", confidence C" out. Figures with 2 decimals, the ratio with 2. Returns
 * the length snprintf would write. */
int cb_scan_suspect_line(char *buf, size_t len, const cb_scan_finding *f, const char *host_a,
                         const char *host_b, const char *gpu, const char *confidence);

/* Make the n node labels (each width bytes, NUL-ended, in node order)
 * distinct: a label equal to an earlier node's (NCCL_HOSTID values that
 * differ only past the width, or an empty one beside an unset one, both
 * the machine's name) gets "#NODE" at its end, cutting its tail. */
void cb_scan_distinct_hosts(char *labels, size_t width, int n);

#endif
