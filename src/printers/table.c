/*
 * The human table: nccl-tests' columns, so that eyes and scripts used to
 * them carry over. Out-of-place and in-place results of one size share a row.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/format.h"
#include "common/stats.h"
#include "printers/printer.h"
#include "printers/table_tests.h"

typedef struct table_printer {
    cb_printer base;
    int stats;              /* --stats */
    int split;              /* --split: each row ends with its group and host */
    int columns;            /* column layout: a comment line gives each row's matrix */
    int begun;              /* the preamble is out: a footer belongs */
    int efficiency;         /* --expect with --efficiency: a line under each row */
    int per_iter;           /* -I 1: i_min i_max i_p99 i_cv% after each half */
    int skip;               /* -K: samples left out of those */
    int timestamps;         /* -S 1: the row's time stamp ends it */
    /* Under an nccl-tests program name: their layout (table_tests.c), and
     * our own lines held in later until their footer is out, so that
     * none falls inside a block their parsers read. */
    const cb_params *tests;
    int titled;             /* their titles are out (once, as theirs) */
    /* NCCL_TESTS_SPLIT's groups under their names: a size's rows, held
     * until the last group's, then one row as theirs (table_tests.h,
     * cb_table_tests_merge); the average of those rows for their footer. */
    cb_result *held_oop, *held_inp;
    int nheld, held_room, held_has_inp;
    double merged_busbw;
    int merged_cells;
    FILE *later;
    char *later_text;
    size_t later_len;
} table_printer;

static cb_printer *table_open(const char *path, char *err, size_t err_len)
{
    table_printer *tp = calloc(1, sizeof *tp);
    if (tp == NULL) {
        snprintf(err, err_len, "out of memory");
        return NULL;
    }
    tp->base.ops = &cb_printer_table;
    if (cb_printer_open_stream(&tp->base, path, err, err_len) != 0) {
        free(tp);
        return NULL;
    }
    return &tp->base;
}

static void table_begin(cb_printer *pr, const cb_run_info *run)
{
    FILE *out = pr->out;
    const cb_params *p = run->params;
    table_printer *tp = (table_printer *)pr;
    ((table_printer *)pr)->stats = p->out.table_stats;
    ((table_printer *)pr)->split = p->sizes.split.kind != CB_SPLIT_NONE;
    ((table_printer *)pr)->begun = 1;
    ((table_printer *)pr)->efficiency = p->expect.source != NULL && p->out.expect_column;
    ((table_printer *)pr)->per_iter = p->timing.per_iter;
    ((table_printer *)pr)->skip = p->timing.per_iter_skip;
    ((table_printer *)pr)->timestamps = p->out.timestamps;
    char min_text[32], max_text[32], step_text[32];
    cb_format_bytes(p->sizes.min_bytes, min_text, sizeof min_text);
    cb_format_bytes(run->max_bytes, max_text, sizeof max_text);
    if (p->sizes.step_bytes)
        cb_format_bytes(p->sizes.step_bytes, step_text, sizeof step_text);
    else
        snprintf(step_text, sizeof step_text, "x%llu", (unsigned long long)p->sizes.step_factor);

    /* Our version line stands where theirs does. */
    fprintf(out, "# nccl-collbench %s  run %s  started %s\n", run->tool_version, run->run_id,
            run->start_utc);
    if (p->tests_program != NULL &&
        (tp->later = open_memstream(&tp->later_text, &tp->later_len)) != NULL) {
        tp->tests = p;
        cb_table_tests_begin(out, run);
        out = tp->later;
    }
    fprintf(out, "# backend: %s (%s)  MPI: %s\n", run->backend, run->ranks[0].device.library,
            run->mpi_library);
    if (run->backend_versions[0] != '\0')
        fprintf(out, "# versions: %s\n", run->backend_versions);
    fprintf(out, "# ranks: %d  nodes: %d  ranks per node: %d\n", run->nranks, run->nnodes,
            run->ranks_per_node);
    fprintf(out, "# sizes: %s to %s step %s  warmup: %d  iters: %d  check passes: %d  "
                 "time: %s over ranks  blocking: %d  agg: %d  cudagraph: %d  cputime: %d  "
                 "clock: %s  rotate: %d\n",
            min_text, max_text, step_text, p->sizes.warmup, p->sizes.iters, p->verify.check_passes,
            cb_average_name(p->timing.average), p->timing.blocking, p->timing.agg, p->timing.graph_launches,
            p->timing.report_cputime, cb_clock_name(p->timing.clock), p->timing.rotate);
    if (p->timing.per_iter)
        fprintf(out, "# per-iteration: i_min i_max i_p99 i_cv%% of each iteration's slowest "
                     "rank%s\n", p->timing.per_iter_skip ? ", leading samples skipped (-K)" : "");
    if (p->sizes.unalign > 0)
        fprintf(out, "# buffers: send and receive start %d element%s past their aligned "
                     "start (-u)\n", p->sizes.unalign, cb_plural(p->sizes.unalign));
    if (tp->tests != NULL) {
        fflush(pr->out);
        return;
    }
    fprintf(out, "#\n# Using devices\n");
    for (int r = 0; r < run->nranks; r++) {
        const cb_rank_info *ri = &run->ranks[r];
        fprintf(out, "#  Rank %3d  Pid %7d  on %-20s device %2d [%s] %s\n", ri->rank, ri->pid,
                ri->host, ri->device.index, ri->device.bus_id, ri->device.model);
    }
    fflush(out);
}

static void table_begin_collective(cb_printer *pr, const cb_collective *coll,
                                   cb_block_layout layout)
{
    FILE *out = pr->out;
    table_printer *tp = (table_printer *)pr;
    int split = tp->split;
    tp->columns = layout == CB_LAYOUT_COL;
    if (tp->tests != NULL) {
        fprintf(tp->later, "# Collective: %s%s\n", coll->name,
                tp->columns ? ", column layout (each row's matrix on the comment line under it)"
                            : "");
        if (!tp->titled)
            cb_table_tests_titles(out, tp->tests);
        tp->titled = 1;
        fflush(out);
        return;
    }
    if (tp->columns)
        fprintf(out, "#\n# Collective: %s, column layout (each rank's block is a column "
                "slice of a rows x cols matrix; out of place only)\n",
                coll->name);
    else
        fprintf(out, "#\n# Collective: %s\n", coll->name);
    /* -I 1 adds four columns to each half, -S 1 one at the end. */
    const char *iter_names = tp->per_iter ? "     i_min     i_max     i_p99   i_cv%" : "";
    const char *iter_units = tp->per_iter ? "      (us)      (us)      (us)     (%)" : "";
    int iter_width = tp->per_iter ? 40 : 0;
    fprintf(out, "#%*s%*s\n", 85 + iter_width, "out-of-place", 46 + iter_width, "in-place");
    /* --split: two more columns, the group and its host (left-aligned, last). */
    fprintf(out, "#%11s %13s %8s %9s %5s %10s %8s %8s %7s%s %10s %8s %8s %7s%s%s%s\n", "size",
            "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", iter_names,
            "time", "algbw", "busbw", "#wrong", iter_names,
            tp->timestamps ? "  timestamp" : "", split ? " group  host" : "");
    /* The units line ends in a unit: no trailing blanks. */
    fprintf(out, "#%11s %13s %8s %9s %5s %10s %8s %8s %7s%s %10s %8s %8s%s%s%s\n", "(B)",
            "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", iter_units, "(us)",
            "(GB/s)", "(GB/s)", tp->per_iter ? "        " : "", iter_units,
            tp->timestamps ? "  (UTC)" : "");
    if (tp->columns)
        fprintf(out, "# (each row's matrix is on the comment line under it)\n");
    fflush(out);
}

static void table_note(cb_printer *pr, const char *text)
{
    table_printer *tp = (table_printer *)pr;
    fprintf(tp->tests != NULL ? tp->later : pr->out, "# %s\n", text);
    fflush(pr->out);
}

static void print_half(FILE *out, const cb_result *res)
{
    char wrong[24];
    if (res->check_passes == 0)
        snprintf(wrong, sizeof wrong, "N/A");
    else
        snprintf(wrong, sizeof wrong, "%llu", (unsigned long long)res->wrong);
    fprintf(out, " %10.2f %8.2f %8.2f %7s", res->seconds * 1e6, res->algbw, res->busbw, wrong);
}

static void print_mismatch(FILE *out, const cb_result *res)
{
    if (res->wrong == 0)
        return;
    fprintf(out, "# WRONG: %s %s %s root %d, %llu B %s: %llu wrong; first at rank %d (%s) "
                 "element %zu: expected %.17g, got %.17g\n",
            res->collective->name, cb_dtype_info_of(res->dtype)->name, cb_redop_name(res->redop),
            res->root, (unsigned long long)res->bytes, res->in_place ? "in-place" : "out-of-place",
            (unsigned long long)res->wrong, res->bad_rank, res->bad_host, res->first.index,
            res->first.expected, res->first.actual);
}

/* --stats: one line per placement under the row; p99 only where the
 * statistics have one (enough samples, stats.h). */
static void print_stats(FILE *out, const cb_result *res)
{
    const cb_rank_time *s = &res->slowest;
    char p99[32] = "";
    if (!isnan(s->p99))
        snprintf(p99, sizeof p99, " p99 %.2f", s->p99 * 1e6);
    fprintf(out, "#   %-12s per-iteration (us) min %.2f median %.2f%s max %.2f "
                 "(%d sample%s, rank %d);  rank means (us) min %.2f mean %.2f max %.2f, "
                 "slowest rank %d on %s\n",
            res->in_place ? "in-place" : "out-of-place", s->min * 1e6, s->median * 1e6,
            p99, s->max * 1e6, s->samples, cb_plural(s->samples), res->spread.slowest, res->spread.min * 1e6,
            res->spread.mean * 1e6, res->spread.max * 1e6, res->spread.slowest,
            res->slowest_host);
}

/* -I 1: the per-iteration figures of one half, N/A where it has no
 * samples (--split, or no such half). */
static void print_iter_columns(FILE *out, const table_printer *tp, const cb_result *res)
{
    cb_iter_stats st;
    if (cb_table_iter_stats(res, tp->skip, &st) == 0)
        fprintf(out, " %9.2f %9.2f %9.2f %7.2f", st.min * 1e6, st.max * 1e6, st.p99 * 1e6,
                st.cv_pct);
    else
        fprintf(out, " %9s %9s %9s %7s", "N/A", "N/A", "N/A", "N/A");
}

/* --efficiency: busbw over the expected busbw of each half. */
static void print_efficiency(FILE *out, const cb_result *oop, const cb_result *inp)
{
    const cb_result *halves[2] = {oop, inp};
    fprintf(out, "#   efficiency");
    for (int h = 0; h < 2 && halves[h] != NULL; h++) {
        const char *place = halves[h]->in_place ? "in-place" : "out-of-place";
        if (halves[h]->expected_busbw > 0)
            fprintf(out, "  %s %.3f of %g GB/s", place, halves[h]->efficiency,
                    halves[h]->expected_busbw);
        else
            fprintf(out, "  %s none", place);
    }
    fputc('\n', out);
}

/* Our row: nccl-tests' fields, ours widths. */
static void our_row(FILE *out, const table_printer *tp, const cb_row *row)
{
    const cb_result *oop = row->out_of_place, *inp = row->in_place;
    /* comm_init: the way of making the communicator in the redop column. */
    fprintf(out, "%12llu %13zu %8s %9s %5d", (unsigned long long)oop->bytes, oop->count,
            oop->comm_op[0] ? "-" : cb_dtype_info_of(oop->dtype)->name,
            oop->comm_op[0] ? oop->comm_op : cb_redop_name(oop->redop), oop->root);
    print_half(out, oop);
    if (tp->per_iter)
        print_iter_columns(out, tp, oop);
    if (inp != NULL)
        print_half(out, inp);
    else
        fprintf(out, " %10s %8s %8s %7s", "N/A", "N/A", "N/A", "N/A");
    if (tp->per_iter)
        print_iter_columns(out, tp, inp);
    if (tp->timestamps)
        fprintf(out, "  %-20s", (inp != NULL ? inp : oop)->timestamp_utc);
    /* --split: the group and its host ("-" for a group on several hosts),
     * so that a per-node answer reads by name. */
    if (tp->split)
        fprintf(out, " %5d  %s", oop->split.group,
                oop->split.group_host[0] ? oop->split.group_host : "-");
    fputc('\n', out);
}

/* The held groups' rows of one size as one row of theirs, then each
 * group's WRONG (and --stats) lines. */
static void flush_groups(table_printer *tp)
{
    if (tp->nheld == 0)
        return;
    FILE *out = tp->base.out;
    cb_result oop, inp;
    cb_table_tests_merge(tp->tests, tp->held_oop, tp->nheld, &oop);
    if (tp->held_has_inp)
        cb_table_tests_merge(tp->tests, tp->held_inp, tp->nheld, &inp);
    cb_row row = {&oop, tp->held_has_inp ? &inp : NULL};
    cb_table_tests_row(out, tp->tests, &row);
    if (!(oop.collective->flags & CB_COLL_NO_DATA)) {
        tp->merged_busbw += oop.busbw + (tp->held_has_inp ? inp.busbw : 0);
        tp->merged_cells += 1 + tp->held_has_inp;
    }
    for (int g = 0; g < tp->nheld; g++) {
        print_mismatch(out, &tp->held_oop[g]);
        if (tp->held_has_inp)
            print_mismatch(out, &tp->held_inp[g]);
        if (tp->stats)
            print_stats(out, &tp->held_oop[g]);
        if (tp->stats && tp->held_has_inp)
            print_stats(out, &tp->held_inp[g]);
    }
    tp->nheld = 0;
    fflush(out);
}

/* Under their names, a --split group's row is held (flush_groups); a row
 * of group 0 or another size ends the rows held. Returns whether it was. */
static int hold_group_row(table_printer *tp, const cb_row *row)
{
    const cb_result *oop = row->out_of_place;
    if (tp->tests == NULL || oop->split.group < 0)
        return 0;
    if (tp->nheld > 0 && (oop->split.group <= tp->held_oop[tp->nheld - 1].split.group ||
                          oop->bytes != tp->held_oop[0].bytes))
        flush_groups(tp);
    if (tp->nheld == tp->held_room) {
        int room = tp->held_room ? 2 * tp->held_room : 8;
        cb_result *o = realloc(tp->held_oop, (size_t)room * sizeof *o);
        if (o != NULL)
            tp->held_oop = o;
        cb_result *i = realloc(tp->held_inp, (size_t)room * sizeof *i);
        if (i != NULL)
            tp->held_inp = i;
        if (o == NULL || i == NULL)
            return 0;   /* out of memory: the row printed as it is */
        tp->held_room = room;
    }
    tp->held_oop[tp->nheld] = *oop;
    tp->held_has_inp = row->in_place != NULL;
    if (row->in_place != NULL)
        tp->held_inp[tp->nheld] = *row->in_place;
    tp->nheld++;
    return 1;
}

/* One row: the out-of-place half, and the in-place half or dashes; the
 * comment lines under it. */
static void table_result(cb_printer *pr, const cb_row *row)
{
    table_printer *tp = (table_printer *)pr;
    FILE *out = pr->out;
    const cb_result *oop = row->out_of_place, *inp = row->in_place;
    if (hold_group_row(tp, row))
        return;
    if (tp->tests != NULL)
        cb_table_tests_row(out, tp->tests, row);
    else
        our_row(out, tp, row);
    /* The matrix goes on a comment line, so that every data row keeps the
     * 13 fields that log parsers count on (15 with --split). */
    if (tp->columns)
        fprintf(out, "#   matrix %zu x %zu\n", oop->rows, oop->cols);
    if (oop->comm_op[0])
        fprintf(out, "#   %s per rank (us): min %.2f median %.2f max %.2f, slowest rank %d "
                     "on %s\n", oop->comm_op, oop->spread.min * 1e6, oop->spread.median * 1e6,
                oop->spread.max * 1e6, oop->spread.slowest, oop->slowest_host);
    if (tp->efficiency)
        print_efficiency(out, oop, inp);
    print_mismatch(out, oop);
    if (inp != NULL)
        print_mismatch(out, inp);
    if (tp->stats) {
        print_stats(out, oop);
        if (inp != NULL)
            print_stats(out, inp);
    }
    fflush(out);
}

static void end_verdict(FILE *out, const cb_summary *sum);

static void table_end(cb_printer *pr, const cb_summary *sum)
{
    FILE *out = pr->out;
    table_printer *tp = (table_printer *)pr;
    if (!tp->begun)
        return;
    if (tp->tests != NULL) {
        /* Their footer, then ours: what was held back, and the verdict.
         * Under NCCL_TESTS_SPLIT their average is of their merged rows. */
        flush_groups(tp);
        cb_summary theirs = *sum;
        if (tp->merged_cells > 0 && theirs.naverages > 0) {
            cb_busbw_average *a = &theirs.averages[0];
            a->sum = tp->merged_busbw;
            a->cells = tp->merged_cells;
            a->min_bw_failed = cb_busbw_below_floor(a, sum->min_bw);
        }
        cb_table_tests_footer(out, tp->tests, &theirs);
        if (sum->error[0] != '\0')
            fprintf(tp->later, "# Stopped early: %s\n", sum->error);
        fclose(tp->later);
        tp->later = NULL;
        if (tp->later_text != NULL)
            fwrite(tp->later_text, 1, tp->later_len, out);
        end_verdict(out, sum);
        return;
    }
    if (sum->error[0] != '\0')
        fprintf(out, "# Stopped early: %s\n", sum->error);
    fprintf(out, "# Out of bounds values : %llu %s\n", (unsigned long long)sum->wrong,
            sum->wrong ? "FAILED" : "OK");
    /* An average only of like with like: nccl-tests' one line for one
     * collective, a line per collective for several, none where no data
     * moved (barrier, the health scan alone). */
    for (int i = 0; i < sum->naverages; i++) {
        const cb_busbw_average *a = &sum->averages[i];
        char label[64];
        if (sum->naverages == 1)
            snprintf(label, sizeof label, "%-20s", "Avg bus bandwidth");
        else
            snprintf(label, sizeof label, "Avg bus bandwidth (%s)", a->collective->name);
        fprintf(out, "# %s : %g%s\n", label, a->cells ? a->sum / a->cells : 0.0,
                isnan(sum->min_bw) ? "" : a->min_bw_failed ? " FAILED" : " OK");
    }
    end_verdict(out, sum);
}

/* Ours: "# Result: VERDICT (reasons) N measurements in T s". */
static void end_verdict(FILE *out, const cb_summary *sum)
{
    char reasons[512];
    const char *verdict = cb_verdict(sum, reasons, sizeof reasons);
    fprintf(out, "#\n# Result: %s%s%s%s %d measurement%s in %.1f s\n", verdict,
            reasons[0] ? " (" : "", reasons, reasons[0] ? ")" : "", sum->measurements,
            sum->measurements == 1 ? "" : "s", sum->elapsed_s);
    fflush(out);
}

static int table_close(cb_printer *pr, char *err, size_t err_len)
{
    table_printer *tp = (table_printer *)pr;
    if (tp->later != NULL)
        fclose(tp->later);
    free(tp->later_text);
    free(tp->held_oop);
    free(tp->held_inp);
    int rc = cb_printer_close_stream(pr, "table", err, err_len);
    free(pr);
    return rc;
}

/* Always: where --output table=PATH says, else on stdout, or on stderr
 * when CSV takes stdout. */
static const char *table_destination(const cb_params *p)
{
    const char *given = cb_params_output(p, "table");
    if (given != NULL)
        return given;
    return cb_printer_csv_on_stdout(p) ? CB_PRINTER_STDERR : "-";
}

const cb_printer_ops cb_printer_table = {
    .name = "table",
    .option = "table output",
    .destination = table_destination,
    .open = table_open,
    .begin = table_begin,
    .table_begin = table_begin_collective,
    .note = table_note,
    .result = table_result,
    .end = table_end,
    .close = table_close,
};
