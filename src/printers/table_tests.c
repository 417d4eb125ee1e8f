/*
 * nccl-tests 2.19.6's table layout, for scripts and parsers that cut their
 * logs by line and by column. Every format below reproduces the bytes of a
 * format string of their src/util.cu (function named at each), trailing
 * blanks included; tests/e2e/nccl_tests_layout.sh compares a run's every
 * line with them.
 */
#include "printers/table_tests.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/format.h"

const char *cb_tests_type_name(cb_dtype t)
{
    return t == CB_FP8_E4M3 ? "f8e4m3" : t == CB_FP8_E5M2 ? "f8e5m2" : cb_dtype_info_of(t)->name;
}

const char *cb_tests_redop_name(const cb_params *p, const cb_result *res)
{
    cb_redop op = res->redop;
    if (!(res->collective->flags & CB_COLL_REDUCES)) {
        /* Their sendrecv runs a row set per reduction of -o and hands
         * each its name (sendrecv.cu; the engine's sweep labels the rows,
         * run_combinations); hypercube passes "" (hypercube.cu); the
         * other data-movement tests pass "none". */
        if (strcmp(res->collective->name, "hypercube") == 0)
            return "";
        if (strcmp(res->collective->name, "sendrecv") != 0)
            return "none";
        if (op == CB_REDOP_NONE && p->sizes.nredops < 1)
            return "none";
        if (op == CB_REDOP_NONE)
            op = p->sizes.redops[0];
    }
    return op == CB_PREMULSUM ? "mulsum" : cb_redop_name(op);
}

double cb_tests_algbw(const cb_result *res)
{
    return strcmp(res->collective->name, "hypercube") == 0 ? res->busbw : res->algbw;
}

int cb_table_iter_stats(const cb_result *res, int skip, cb_iter_stats *st)
{
    double *times = NULL;
    int n = 0;
    if (res != NULL && res->rank_samples != NULL && res->rank_times != NULL &&
        (times = malloc((size_t)res->samples_room * sizeof *times)) != NULL)
        n = cb_stats_iteration_max(res->rank_samples, res->samples_room, res->rank_times,
                                   res->split.group_ranks, times);
    int rc = n > 0 && cb_stats_per_iter(times, n, skip, st) == 0 ? 0 : -1;
    free(times);
    return rc;
}

/* The host as theirs prints it: up to its first dot (common.h,
 * getHostName). */
static void short_host(const char *host, char *buf, size_t len)
{
    size_t n = strcspn(host, ".");
    snprintf(buf, len, "%.*s", (int)n, host);
}

/* writeDeviceReport: the PCI place as three numbers; 0000:00:00 where
 * there is none (host memory). */
static void bus_numbers(const char *bus_id, unsigned *domain, unsigned *bus, unsigned *dev)
{
    *domain = *bus = *dev = 0;
    if (sscanf(bus_id, "%x:%x:%x", domain, bus, dev) != 3)
        *domain = *bus = *dev = 0;
}

/* The group theirs prints for a rank: the colour of its MPI_Comm_split
 * (common.cu, run(): NCCL_TESTS_SPLIT's rank & K, rank | K, rank % K,
 * rank / K, or rank & NCCL_TESTS_SPLIT_MASK), which cb_split_color gives;
 * --split node: the host's place among the hosts; 0 in one group. */
static int group_color(const cb_run_info *run, int r)
{
    const cb_split_spec *split = &run->params->sizes.split;
    char err[256];
    if (split->kind == CB_SPLIT_NONE)
        return 0;
    if (split->kind == CB_SPLIT_NODE) {
        int hosts = 0;   /* the hosts first seen before rank r's */
        for (int q = 0; q <= r; q++) {
            int first = 1;
            for (int o = 0; o < q && first; o++)
                first = strcmp(run->ranks[o].host, run->ranks[q].host) != 0;
            if (first && strcmp(run->ranks[q].host, run->ranks[r].host) == 0)
                return hosts;
            hosts += first;
        }
        return 0;
    }
    int color = cb_split_color(split, "--split", run->ranks[r].rank, run->nranks, err, sizeof err);
    return color < 0 ? 0 : color;
}

/* The program name theirs prints: argv[0]'s last component. */
static const char *program_name(const cb_params *p)
{
    const char *name = cb_params_nccl_tests_name(p->tests_program);
    return name != NULL ? name : "";
}

void cb_table_tests_begin(FILE *out, const cb_run_info *run)
{
    const cb_params *p = run->params;
    int factor = p->sizes.step_bytes == 0 && p->sizes.step_factor > 1;
    /* writeDeviceReport: one thread and one GPU per process here. */
    fprintf(out, "# Collective test starting: %s\n", program_name(p));
    fprintf(out, "# nThread %d nGpus %d minBytes %ld maxBytes %ld step: %ld(%s) warmup iters: %d "
                 "iters: %d agg iters: %d validation: %d graph: %d unalign: %d\n",
            1, 1, (long)p->sizes.min_bytes, (long)p->sizes.max_bytes,
            (long)(factor ? p->sizes.step_factor : p->sizes.step_bytes), factor ? "factor" : "bytes",
            p->sizes.warmup, p->sizes.iters, p->timing.agg, p->verify.check_passes, p->timing.graph_launches, p->sizes.unalign);
    if (p->timing.blocking == 1)
        fprintf(out, "# Blocking Enabled: wait and barrier after each inner iteration (-m) \n");
    if (p->timing.blocking == 2)
        fprintf(out, "# Blocking Enabled: wait after each inner iteration (-m), no barrier \n");
    if (p->timing.blocking == 3)
        fprintf(out, "# Blocking Enabled: wait and barrier after each outer iteration (-n); "
                     "time excludes barrier \n");
    if (p->timing.per_iter) {
        fprintf(out, "# Per-Iteration Report: CUDA event timing; i_* uses max over process rows");
        if (p->timing.per_iter_skip)
            fprintf(out, "; summary skips first %d iterations", p->timing.per_iter_skip);
        fprintf(out, " \n");
    }
    fprintf(out, "#\n# Using devices\n");
    for (int r = 0; r < run->nranks; r++) {
        const cb_rank_info *ri = &run->ranks[r];
        char host[CB_HOSTLEN];
        unsigned domain, bus, dev;
        short_host(ri->host, host, sizeof host);
        bus_numbers(ri->device.bus_id, &domain, &bus, &dev);
        fprintf(out, "#  Rank %2d Group %2d Pid %6d on %10s device %2d [%04x:%02x:%02x] %s\n",
                ri->rank, group_color(run, r), ri->pid, host, ri->device.index, domain, bus, dev,
                ri->device.model);
    }
    /* run(), common.cu: the sizes lowered to fit in memory. */
    if (run->max_bytes < p->sizes.max_bytes)
        fprintf(out, "#\n# Reducing maxBytes to %ld due to memory limitation\n",
                (long)run->max_bytes);
}

/* writeResultHeader's time stamp format, and its width. */
#define TS_FORMAT "%Y-%m-%d %H:%M:%S"
#define TS_PAD 19

void cb_table_tests_titles(FILE *out, const cb_params *p)
{
    const char *ts_label = p->out.timestamps ? "timestamp" : "";
    const char *ts_format = p->out.timestamps ? TS_FORMAT : "";
    int ts_pad = p->out.timestamps ? TS_PAD : 0;
    const char *time = p->timing.report_cputime ? "cputime" : "time";
    fprintf(out, "#\n");
    if (p->timing.per_iter) {
        fprintf(out, "# %10s  %12s  %8s  %6s  %6s              out-of-place (+ per-iteration)"
                     "                                in-place (+ per-iteration)\n",
                "", "", "", "", "");
        fprintf(out, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %7s  %7s  %7s  "
                     "%7s  %6s  %6s  %6s  %7s  %7s  %7s  %7s %*s\n",
                "size", "count", "type", "redop", "root", time, "algbw", "busbw", "#wrong",
                "i_min", "i_max", "i_p99", "i_cv%", time, "algbw", "busbw", "#wrong", "i_min",
                "i_max", "i_p99", "i_cv%", ts_pad, ts_label);
        fprintf(out, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %7s  %7s  %7s  "
                     "%7s  %6s  %6s  %6s  %7s  %7s  %7s  %7s %*s\n",
                "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(us)",
                "(us)", "(%)", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(us)", "(us)", "(%)",
                ts_pad, ts_format);
        return;
    }
    fprintf(out, "# %10s  %12s  %8s  %6s  %6s           out-of-place                       "
                 "in-place          \n", "", "", "", "", "");
    fprintf(out, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s\n",
            "size", "count", "type", "redop", "root", time, "algbw", "busbw", "#wrong", time,
            "algbw", "busbw", "#wrong", ts_pad, ts_label);
    fprintf(out, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s\n",
            "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)",
            "(GB/s)", "", ts_pad, ts_format);
}

/* writeBenchmarkLineBody: one half; N/A cells where it was not measured. */
static void tests_half(FILE *out, const cb_result *res)
{
    if (res == NULL) {
        fprintf(out, "  %7s  %6s  %6s  %6s", "N/A", "N/A", "N/A", "N/A");
        return;
    }
    char time[8], algbw[7], busbw[7];
    cb_format_squeezed(res->seconds * 1e6, 7, time, sizeof time);
    cb_format_squeezed(cb_tests_algbw(res), 6, algbw, sizeof algbw);
    cb_format_squeezed(res->busbw, 6, busbw, sizeof busbw);
    if (res->check_passes > 0)
        fprintf(out, "  %7s  %6s  %6s  %6g", time, algbw, busbw, (double)res->wrong);
    else
        fprintf(out, "  %7s  %6s  %6s    N/A", time, algbw, busbw);
}

/* writePerIterReport: the -I columns of one half. */
static void tests_iter_columns(FILE *out, const cb_params *p, const cb_result *res)
{
    cb_iter_stats st;
    char min[8] = "N/A", max[8] = "N/A", p99[8] = "N/A", cv[8] = "N/A";
    if (cb_table_iter_stats(res, p->timing.per_iter_skip, &st) == 0) {
        cb_format_squeezed(st.min * 1e6, 7, min, sizeof min);
        cb_format_squeezed(st.max * 1e6, 7, max, sizeof max);
        cb_format_squeezed(st.p99 * 1e6, 7, p99, sizeof p99);
        cb_format_squeezed(st.cv_pct, 7, cv, sizeof cv);
    }
    fprintf(out, "  %7s  %7s  %7s  %7s", min, max, p99, cv);
}

void cb_table_tests_row(FILE *out, const cb_params *p, const cb_row *row)
{
    const cb_result *oop = row->out_of_place, *inp = row->in_place;
    /* writeBenchmarkLinePreamble: the root goes through "%6i" into a string. */
    char root[16];
    snprintf(root, sizeof root, "%6i", oop->root);
    fprintf(out, "%12li  %12li  %8s  %6s  %6s", (long)oop->bytes, (long)oop->count,
            cb_tests_type_name(oop->dtype), cb_tests_redop_name(p, oop), root);
    tests_half(out, oop);
    if (p->timing.per_iter)
        tests_iter_columns(out, p, oop);
    tests_half(out, inp);
    if (p->timing.per_iter)
        tests_iter_columns(out, p, inp);
    if (p->out.timestamps) {
        /* writeTimestamp: "%21s" of TS_FORMAT; ours is the row's UTC time
         * (2026-11-21T16:30:00Z) in that shape. */
        char stamp[24];
        snprintf(stamp, sizeof stamp, "%s", (inp != NULL ? inp : oop)->timestamp_utc);
        char *t = strchr(stamp, 'T'), *z = strchr(stamp, 'Z');
        if (t != NULL)
            *t = ' ';
        if (z != NULL)
            *z = '\0';
        fprintf(out, "%21s", stamp);
    }
    fputc('\n', out);
}

void cb_table_tests_merge(const cb_params *p, const cb_result *groups, int n, cb_result *out)
{
    *out = groups[0];
    double t = groups[0].seconds, weighted = 0, ranks = 0;
    unsigned long long wrong = 0;
    for (int g = 0; g < n; g++) {
        const cb_result *r = &groups[g];
        wrong += r->wrong;
        weighted += r->seconds * r->split.group_ranks;
        ranks += r->split.group_ranks;
        if ((p->timing.average == CB_AVERAGE_MIN && r->seconds < t) ||
            (p->timing.average == CB_AVERAGE_MAX && r->seconds > t))
            t = r->seconds;
    }
    if (p->timing.average == CB_AVERAGE_MEAN && ranks > 0)
        t = weighted / ranks;
    /* Bandwidth is bytes over time: rank 0's group's, at the merged time. */
    if (t > 0 && groups[0].seconds > 0) {
        out->algbw = groups[0].algbw * groups[0].seconds / t;
        out->busbw = groups[0].busbw * groups[0].seconds / t;
    }
    out->seconds = t;
    out->wrong = wrong;
}

/* getMemString (util.cu): binary units, 2 decimals below 10, 1 below
 * 100, none above; "0.00 B" for nothing. */
static void mem_string(int64_t bytes, char *buf, size_t len)
{
    double amount = (double)bytes;
    const char *unit = "B";
    if (fabs(amount) >= 1024.0 * 1024.0 * 1024.0) {
        unit = "GB";
        amount /= 1024.0 * 1024.0 * 1024.0;
    } else if (fabs(amount) >= 1024.0 * 1024.0) {
        unit = "MB";
        amount /= 1024.0 * 1024.0;
    } else if (fabs(amount) >= 1024.0) {
        unit = "KB";
        amount /= 1024.0;
    }
    int precision = fabs(amount) < 10.0 ? 2 : fabs(amount) < 100.0 ? 1 : 0;
    snprintf(buf, len, "%.*f %s", precision, amount, unit);
}

void cb_table_tests_footer(FILE *out, const cb_params *p, const cb_summary *sum)
{
    /* writeResultFooter: one collective, one average. */
    double avg = 0.0;
    int failed = 0;
    if (sum->naverages > 0) {
        const cb_busbw_average *a = &sum->averages[0];
        avg = a->cells ? a->sum / a->cells : 0.0;
        failed = a->min_bw_failed;
    }
    fprintf(out, "# %-20s : %llu %s\n", "Out of bounds values", (unsigned long long)sum->wrong,
            sum->wrong ? "FAILED" : "OK");
    fprintf(out, "# %-20s : %g %s\n", "Avg bus bandwidth", avg,
            isnan(sum->min_bw) ? "" : failed ? "FAILED" : "OK");
    fprintf(out, "#\n# Collective test concluded: %s\n", program_name(p));
    /* run(), common.cu: -M 1's writeMemInfo, where the backend measured. */
    if (sum->memory_measured) {
        char text[3][32], total[32];
        int64_t all = 0;
        for (int i = 0; i < 3; i++) {
            mem_string(sum->memory_usage[i], text[i], sizeof text[i]);
            all += sum->memory_usage[i];
        }
        mem_string(all, total, sizeof total);
        fprintf(out, "# %-20s : Initialization %s | User-Allocated %s | Collective %s | "
                     "Total  %s\n", "GPU memory usage", text[0], text[1], text[2], total);
    }
    /* finalizeFooter, then writeErrors' empty line. */
    fprintf(out, "#\n\n");
}
