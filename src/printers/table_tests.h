/*
 * The table in nccl-tests 2.19.6's layout, which the table printer uses
 * under their program names (all_reduce_perf, ...): their header block,
 * titles, rows and footer byte for byte (src/util.cu: writeDeviceReport,
 * writeResultHeader, writeBenchmarkLine*, writeResultFooter), our own
 * lines set aside for after theirs. Internal to src/printers/.
 */
#ifndef CB_TABLE_TESTS_H
#define CB_TABLE_TESTS_H

#include <stdio.h>

#include "common/stats.h"
#include "options/params.h"
#include "result.h"

/* Their spellings where ours differ: f8e4m3, f8e5m2. */
const char *cb_tests_type_name(cb_dtype t);

/* Their redop column: mulsum for premulsum, none for data movement but
 * sendrecv, which shows the reduction of its row (theirs loops over -o's
 * and passes each on), and hypercube, which shows "" (hypercube.cu). */
const char *cb_tests_redop_name(const cb_params *p, const cb_result *res);

/* Their algbw: hypercube's is its busbw (hypercube.cu, HyperCubeGetBw:
 * the (n - 1) blocks received over the time); every other's is ours. */
double cb_tests_algbw(const cb_result *res);

/* The -I figures of one half (each iteration's slowest rank, -K leading
 * samples skipped): 0, or -1 where it has none. */
int cb_table_iter_stats(const cb_result *res, int skip, cb_iter_stats *st);

/* After our version line: "# Collective test starting", the parameter
 * line, "# Using devices" and a line per rank. */
void cb_table_tests_begin(FILE *out, const cb_run_info *run);

/* "#" and their three title lines. */
void cb_table_tests_titles(FILE *out, const cb_params *p);

/* One row. */
void cb_table_tests_row(FILE *out, const cb_params *p, const cb_row *row);

/* NCCL_TESTS_SPLIT's groups as theirs print them, one half of one row:
 * the n groups' results of a size (group 0 first, rank 0's) in *out.
 * Theirs reduces each rank's time over MPI_COMM_WORLD as -a says (common.cu,
 * Allreduce: the mean over every rank of every group by default, or rank
 * 0's, the least, the most), sums the wrong elements, and prints rank 0's
 * size, count and bandwidths, the last at that time. */
void cb_table_tests_merge(const cb_params *p, const cb_result *groups, int n, cb_result *out);

/* The two summary lines, "# Collective test concluded", "#" and the
 * empty line theirs ends with. */
void cb_table_tests_footer(FILE *out, const cb_params *p, const cb_summary *sum);

#endif
