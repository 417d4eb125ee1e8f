/*
 * -J: the run as nccl-tests 2.19.6 writes it with its own -J (schema
 * version 3), so that their tools (tools/analyze_perf_json.py) and the
 * scripts people wrote for them read ours. The schema is theirs, learnt
 * from their output, with its quirks kept where a reader could depend on
 * them: booleans are the strings "true" and "false", the root is a string
 * of width 6. --json keeps our own schema. Like that document, this one is
 * written beside the target and renamed over it at the end.
 * nccl-collbench-output(5), "NCCL-TESTS JSON", lists every field.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "printers/json_write.h"
#include "common/redact.h"
#include "common/stats.h"
#include "printers/printer.h"
#include "printers/table_tests.h"
#include "safety/agreement.h"
#include "safety/outfile.h"

/* Defined at the end of this file, listed in formats.c. */
extern const cb_printer_ops cb_printer_tests_json;

/* The version of their schema this file follows. */
#define TESTS_JSON_VERSION 3

extern char **environ;

typedef struct tests_json_printer {
    cb_printer base;
    cb_outfile file;       /* written beside the target, named at close */
    const cb_run_info *run;
    int results;           /* written so far */
    int ended;
} tests_json_printer;

static cb_printer *tests_json_open(const char *path, char *err, size_t err_len)
{
    tests_json_printer *tp = calloc(1, sizeof *tp);
    if (tp == NULL) {
        snprintf(err, err_len, "out of memory");
        return NULL;
    }
    tp->base.ops = &cb_printer_tests_json;
    if (cb_printer_open_document(&tp->base, &tp->file, path, err, err_len) != 0) {
        free(tp);
        return NULL;
    }
    fprintf(tp->base.out, "{\"version\": %d", TESTS_JSON_VERSION);
    return &tp->base;
}

/* Their booleans are strings. */
static void their_bool(FILE *f, const char *key, int value)
{
    json_field_string(f, key, value ? "true" : "false");
}

/* Their time layout, "2026-11-21 16:30:00", here in UTC. */
static void their_time(char *text, size_t len, const char *iso_utc)
{
    snprintf(text, len, "%.10s %.8s", iso_utc, iso_utc[0] ? iso_utc + 11 : "");
}

/* NCCL's version code (2.28.9: 22809) from the backend's version line, 0
 * where the backend is not NCCL. */
static int nccl_version_code(const char *versions)
{
    int major = 0, minor = 0, patch = 0;
    const char *at = strstr(versions, "NCCL library ");
    if (at == NULL || sscanf(at + 13, "%d.%d.%d", &major, &minor, &patch) != 3)
        return 0;
    return major * 10000 + minor * 100 + patch;
}

static void write_devices(FILE *f, const cb_run_info *run)
{
    fputs(", \"devices\": [", f);
    for (int r = 0; r < run->nranks; r++) {
        const cb_rank_info *ri = &run->ranks[r];
        fprintf(f, "%s\n    {\"rank\": %d, \"group\": 0, \"pid\": %d", r ? "," : "", ri->rank,
                ri->pid);
        json_field_string(f, "hostname", ri->host);
        fprintf(f, ", \"device\": %d", ri->device.index);
        json_field_string(f, "device_hex", ri->device.bus_id);
        json_field_string(f, "device_info", ri->device.model);
        fputc('}', f);
    }
    fputs("]", f);
}

static void write_config(FILE *f, const cb_run_info *run)
{
    const cb_params *p = run->params;
    fprintf(f, ",\n \"config\": {\"nthreads\": 1, \"ngpus\": 1, \"minimum_bytes\": %llu, "
               "\"maximum_bytes\": %llu", (unsigned long long)p->sizes.min_bytes,
            (unsigned long long)run->max_bytes);
    if (p->sizes.step_factor > 0)
        fprintf(f, ", \"step_factor\": %llu", (unsigned long long)p->sizes.step_factor);
    else
        fprintf(f, ", \"step_bytes\": %llu", (unsigned long long)p->sizes.step_bytes);
    fprintf(f, ", \"warmup_iters\": %d, \"iterations\": %d, \"aggregated_iterations\": %d, "
               "\"validation\": %d, \"graph\": %d", p->sizes.warmup, p->sizes.iters, p->timing.agg,
            p->verify.check_passes, p->timing.graph_launches);
    their_bool(f, "blocking_collectives", p->timing.blocking);
    their_bool(f, "per_iter_timing", p->timing.per_iter);
    fprintf(f, ", \"per_iter_skip\": %d", p->timing.per_iter_skip);
    their_bool(f, "parallel_init", 0);
    write_devices(f, run);
    fputc('}', f);
}

static void tests_json_begin(cb_printer *pr, const cb_run_info *run)
{
    tests_json_printer *tp = (tests_json_printer *)pr;
    FILE *f = pr->out;
    char start[32];
    tp->run = run;
    their_time(start, sizeof start, run->start_utc);
    json_field_string(f, "start_time", start);
    fputs(",\n \"args\": [", f);
    for (int i = 0; i < run->params->out.argc; i++) {
        fputs(i ? ", " : "", f);
        json_string(f, run->params->out.argv[i]);
    }
    /* Theirs keeps the whole environment; ours what shapes NCCL and MPI. */
    fputs("],\n \"env\": [", f);
    int n = 0;
    for (char **env = environ; env != NULL && *env != NULL; env++)
        if (cb_json_env_kept(*env)) {
            /* NAME=VALUE as theirs, a secret's value never shown. */
            const char *eq = strchr(*env, '='), *value = cb_env_shown_value(*env);
            size_t size = (size_t)(eq - *env) + strlen(value) + 2;
            char *entry = malloc(size);
            if (entry == NULL)
                continue;
            snprintf(entry, size, "%.*s=%s", (int)(eq - *env), *env, value);
            fputs(n++ ? ", " : "", f);
            json_string(f, entry);
            free(entry);
        }
    fprintf(f, "],\n \"nccl_version\": %d", nccl_version_code(run->backend_versions));
    write_config(f, run);
    fputs(",\n \"results\": [", f);
}

static void write_half(FILE *f, const cb_params *p, const cb_result *res)
{
    fprintf(f, ", \"%s\": {", res->in_place ? "in_place" : "out_of_place");
    fprintf(f, "\"%s\": ", p->timing.report_cputime ? "cpu_time" : "time");
    json_micros(f, res->seconds);
    json_field_number(f, "alg_bw", cb_tests_algbw(res));
    json_field_number(f, "bus_bw", res->busbw);
    json_key(f, "nwrong");
    if (res->check_passes > 0)
        fprintf(f, "%llu", (unsigned long long)res->wrong);
    else
        fputs("null", f);
    fputc('}', f);
}

/* -I 1: each iteration's slowest rank, its statistics after -K, and
 * every rank's samples (theirs: each process's, the slowest of its GPUs). */
static void write_per_iter(FILE *f, const cb_params *p, const cb_result *res)
{
    if (res->rank_samples == NULL || res->rank_times == NULL)
        return;
    double *times = malloc((size_t)res->samples_room * sizeof *times);
    int n = times ? cb_stats_iteration_max(res->rank_samples, res->samples_room,
                                           res->rank_times, res->split.group_ranks, times) : 0;
    cb_iter_stats st;
    if (n > 0 && cb_stats_per_iter(times, n, p->timing.per_iter_skip, &st) == 0) {
        fprintf(f, ",\n   \"%s\": {\"skipped_iterations\": %d",
                res->in_place ? "in_place_per_iter" : "out_of_place_per_iter",
                p->timing.per_iter_skip);
        json_field_micros(f, "min_us", st.min);
        json_field_micros(f, "max_us", st.max);
        json_field_micros(f, "avg_us", st.avg);
        json_field_micros(f, "p50_us", st.p50);
        json_field_micros(f, "p95_us", st.p95);
        json_field_micros(f, "p99_us", st.p99);
        json_field_micros(f, "stdev_us", st.stdev);
        json_field_number(f, "cv_pct", st.cv_pct);
        json_key(f, "times_us");
        json_list(f, times, n, json_micros);
        json_key(f, "per_process_max_times_us");
        fputc('[', f);
        for (int r = 0; r < res->split.group_ranks; r++) {
            fputs(r ? ", " : "", f);
            json_list(f, res->rank_samples + (size_t)r * (size_t)res->samples_room, n,
                      json_micros);
        }
        fputs("]}", f);
    }
    free(times);
}

static void tests_json_result(cb_printer *pr, const cb_row *row)
{
    tests_json_printer *tp = (tests_json_printer *)pr;
    FILE *f = pr->out;
    const cb_result *oop = row->out_of_place, *inp = row->in_place;
    /* The health scan and comm_init have no place in their schema. */
    if (tp->run == NULL || oop->scan.scan_part != NULL || oop->comm_op[0] != '\0')
        return;
    const cb_params *p = tp->run->params;
    fprintf(f, "%s\n  {\"size\": %llu, \"count\": %zu", tp->results++ ? "," : "",
            (unsigned long long)oop->bytes, oop->count);
    json_field_string(f, "type", cb_tests_type_name(oop->dtype));
    json_field_string(f, "redop", cb_tests_redop_name(p, oop));
    fprintf(f, ", \"root\": \"%6d\"", oop->root);
    write_half(f, p, oop);
    write_per_iter(f, p, oop);
    if (inp != NULL) {
        write_half(f, p, inp);
        write_per_iter(f, p, inp);
    } else {
        fputs(", \"in_place\": null", f);
    }
    fprintf(f, ", \"actual_iterations\": %d", oop->iters);
    json_field_string(f, "experiment_name", oop->collective->name);
    fputc('}', f);
}

static void tests_json_end(cb_printer *pr, const cb_summary *sum)
{
    tests_json_printer *tp = (tests_json_printer *)pr;
    FILE *f = pr->out;
    tp->ended = 1;
    if (tp->run == NULL)          /* failed before the run began */
        fputs(",\n \"results\": [", f);
    fprintf(f, "%s],\n \"out_of_bounds\": {\"count\": %llu", tp->results ? "\n " : "",
            (unsigned long long)sum->wrong);
    their_bool(f, "okay", sum->wrong == 0);
    fputs("},\n \"average_bus_bandwidth\": {\"bandwidth\": ", f);
    json_number(f, sum->busbw_results ? sum->busbw_sum / sum->busbw_results : 0.0);
    int failed = 0;
    for (int i = 0; i < sum->naverages; i++)
        failed |= sum->averages[i].min_bw_failed;
    if (isnan(sum->min_bw))
        json_field_string(f, "okay", "unchecked");
    else
        their_bool(f, "okay", !failed);
    char end[32], end_iso[24];
    time_t now = time(NULL);
    struct tm utc;
    gmtime_r(&now, &utc);
    strftime(end_iso, sizeof end_iso, "%Y-%m-%dT%H:%M:%SZ", &utc);
    their_time(end, sizeof end, end_iso);
    fputs("},\n \"end_time\": ", f);
    json_string(f, end);
    fputs("\n}\n", f);
}

static int tests_json_close(cb_printer *pr, char *err, size_t err_len)
{
    tests_json_printer *tp = (tests_json_printer *)pr;
    int rc = cb_printer_close_document(pr, &tp->file, tp->ended, err, err_len);
    free(tp);
    return rc;
}

static const char *tests_json_destination(const cb_params *p)
{
    return p->out.tests_json_path != NULL ? p->out.tests_json_path : cb_params_output(p, "tests-json");
}

const cb_printer_ops cb_printer_tests_json = {
    .name = "tests-json",
    .option = "-J",
    .destination = tests_json_destination,
    .needs_file = "the JSON document goes to a file (it is written whole, then renamed)",
    .open = tests_json_open,
    .begin = tests_json_begin,
    .result = tests_json_result,
    .end = tests_json_end,
    .close = tests_json_close,
};
