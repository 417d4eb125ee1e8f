/*
 * Prometheus text exposition format (0.0.4), as node_exporter's textfile
 * collector reads it (nccl-collbench-output(5), PROMETHEUS OUTPUT). The file
 * shows the latest whole cycle: the results of a cycle are kept until it
 * ends, then the whole file is written beside the target and renamed over
 * it (src/safety/outfile.c), so a scrape never reads half a file or a cycle
 * half measured. Names follow NCCL Inspector's where they mean the same;
 * the rest carry one prefix. What changes with every run (run id, Slurm
 * job, versions) is on one info series only, so that the number of series
 * stays what the sweep's labels multiply to.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "printers/printer.h"
#include "printers/prom_text.h"
#include "safety/outfile.h"

/* Defined at the end of this file, listed in formats.c. */
extern const cb_printer_ops cb_printer_prom;

#define PROM_PREFIX "nccl_collbench_"

/* One result kept until its cycle ends. */
typedef struct prom_series {
    cb_result res;    /* a copy; its per-rank pointers cleared */
    char *key;        /* its labels but message_size, as written */
} prom_series;

typedef struct prom_printer {
    cb_printer base;
    char *path;
    char *source;             /* the file's name less .prom: the source label */
    cb_outfile file;          /* the next file to write; file_open says whether made */
    int file_open;
    const cb_run_info *run;   /* NULL until the run is described */
    prom_series *series;      /* this cycle's results so far */
    size_t nseries, room;
    char *scan;               /* this cycle's health scan families, as text */
    char *shown;              /* the result and scan families of the cycle shown */
    int shown_cycle;          /* that cycle; 0 while none */
    int cycles;               /* cycles that ran whole */
    long long cycle_end;      /* when the latest whole cycle ended, Unix seconds */
    unsigned long long wrong; /* wrong elements in every result so far, every size */
} prom_printer;

/* ---- The results' metrics: one line each; a new figure is a new line. ---- */

/* Writes res's value into text and returns 1, or returns 0 when res has none. */
typedef int result_value(const cb_result *res, char *text, size_t len);

static int moves_data(const cb_result *res)
{
    return !(res->collective->flags & CB_COLL_NO_DATA);
}

static int busbw_value(const cb_result *res, char *text, size_t len)
{
    cb_prom_number_text(text, len, PROM_CSV_FIXED, res->busbw);
    return moves_data(res);
}

static int algbw_value(const cb_result *res, char *text, size_t len)
{
    cb_prom_number_text(text, len, PROM_CSV_FIXED, res->algbw);
    return moves_data(res);
}

static int time_value(const cb_result *res, char *text, size_t len)
{
    cb_prom_number_text(text, len, PROM_CSV_FIXED, res->seconds * 1e6);
    return 1;
}

/* --expect: absent where the row has no expectation. */
static int efficiency_value(const cb_result *res, char *text, size_t len)
{
    cb_prom_number_text(text, len, PROM_SIGNIFICANT, res->efficiency);
    return res->expected_busbw > 0;
}

static int wrong_value(const cb_result *res, char *text, size_t len)
{
    snprintf(text, len, "%llu", (unsigned long long)res->wrong);
    return res->check_passes > 0;
}

/* -B: absent where the launches were not compared. */
static int unrepeatable_value(const cb_result *res, char *text, size_t len)
{
    snprintf(text, len, "%llu", (unsigned long long)res->repeat.unrepeatable);
    return res->repeat.repeat_checked > 0;
}

typedef struct result_metric {
    const char *name;
    const char *help;
    result_value *value;
} result_metric;

static const result_metric result_metrics[] = {
    {"nccl_bus_bandwidth_gbs", "Bus bandwidth in GB/s (1e9 bytes per second), as NCCL "
     "Inspector names it; the CSV's busbw_gbps", busbw_value},
    {"nccl_collective_exec_time_microseconds", "Time per operation in microseconds, combined "
     "across ranks (-a), as NCCL Inspector names it; the CSV's time_us", time_value},
    {PROM_PREFIX "algorithm_bandwidth_gbs", "Algorithm bandwidth in GB/s (1e9 bytes per "
     "second); the CSV's algbw_gbps", algbw_value},
    {PROM_PREFIX "wrong_elements", "Wrong elements summed over ranks and check passes; "
     "absent when not checked", wrong_value},
    {PROM_PREFIX "efficiency_ratio", "Bus bandwidth over the bandwidth --expect expects of "
     "the row; the CSV's efficiency; absent without an expectation", efficiency_value},
    {PROM_PREFIX "unrepeatable_launches", "Launches whose output differed from the first "
     "launch's (-B), summed over ranks; the CSV's unrepeatable; absent when not compared",
     unrepeatable_value},
};

#define RESULT_METRICS (sizeof result_metrics / sizeof result_metrics[0])

/* The labels of res but message_size, which tell its series from every
 * other of the cycle (nccl-collbench-output(5) says which multiply). */
static char *result_key(const prom_printer *pp, const cb_result *res)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (f == NULL)
        return NULL;
    int first = 1;
    cb_prom_put_label(f, &first, "source", pp->source);
    cb_prom_put_label(f, &first, "collective", res->collective->name);
    cb_prom_put_label(f, &first, "datatype", cb_dtype_info_of(res->dtype)->name);
    cb_prom_put_label(f, &first, "redop", cb_redop_name(res->redop));
    cb_prom_put_label(f, &first, "placement", res->in_place ? "in-place" : "out-of-place");
    cb_prom_put_label_int(f, &first, "nranks", res->split.group_ranks);
    cb_prom_put_label_int(f, &first, "n_nodes", pp->run->nnodes);
    cb_prom_put_label(f, &first, "backend", pp->run->backend);
    if (res->root >= 0)
        cb_prom_put_label_int(f, &first, "root", res->root);
    if (res->split.group >= 0)
        cb_prom_put_label_int(f, &first, "group", res->split.group);
    if (res->layout == CB_LAYOUT_COL)
        cb_prom_put_label(f, &first, "layout", "col");
    if (res->impl != NULL)
        cb_prom_put_label(f, &first, "impl", res->impl);
    if (res->traffic_matrix[0] != '\0')
        cb_prom_put_label(f, &first, "traffic_matrix", res->traffic_matrix);
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

/* --prom-sizes LIST: whether bytes is one of the sizes listed. */
static int size_listed(const cb_output_params *out, uint64_t bytes)
{
    if (out->nprom_sizes == 0)
        return 1;
    for (int i = 0; i < out->nprom_sizes; i++)
        if (out->prom_sizes[i] == bytes)
            return 1;
    return 0;
}

static void fail_memory(prom_printer *pp)
{
    pp->base.write_failed = 1;
    snprintf(pp->base.failure, sizeof pp->base.failure,
             "--prom '%s': out of memory for the cycle's results", pp->path);
}

/* Keep res for the cycle's file: a new series, or in place of the one with
 * the same labels (with --prom-sizes largest, of the one it is larger than). */
static void keep_result(prom_printer *pp, const cb_result *res)
{
    const cb_params *set = pp->run->params;
    if (res->check_passes > 0)
        pp->wrong += res->wrong;
    if (res->scan.scan_part != NULL || !size_listed(&set->out, res->bytes))
        return;   /* the scan's figures come whole with its report */
    char *key = result_key(pp, res);
    if (key == NULL) {
        fail_memory(pp);
        return;
    }
    prom_series *slot = NULL;
    for (size_t i = 0; i < pp->nseries && slot == NULL; i++)
        if ((set->out.prom_largest || pp->series[i].res.bytes == res->bytes) &&
            strcmp(pp->series[i].key, key) == 0)
            slot = &pp->series[i];
    if (slot != NULL && set->out.prom_largest && res->bytes < slot->res.bytes) {
        free(key);
        return;
    }
    if (slot == NULL) {
        if (pp->nseries == pp->room) {
            size_t room = pp->room ? 2 * pp->room : 64;
            prom_series *grown = realloc(pp->series, room * sizeof *grown);
            if (grown == NULL) {
                free(key);
                fail_memory(pp);
                return;
            }
            pp->series = grown;
            pp->room = room;
        }
        slot = &pp->series[pp->nseries++];
    } else {
        free(slot->key);
    }
    slot->res = *res;
    slot->res.rank_times = NULL;
    slot->res.rank_samples = NULL;
    slot->key = key;
}

static void prom_result(cb_printer *pr, const cb_row *row)
{
    prom_printer *pp = (prom_printer *)pr;
    if (pp->run == NULL)
        return;
    keep_result(pp, row->out_of_place);
    if (row->in_place != NULL)
        keep_result(pp, row->in_place);
}

/* The kept results' families, each metric's samples together. */
static void put_results(FILE *f, const prom_printer *pp)
{
    for (size_t m = 0; m < RESULT_METRICS; m++) {
        const result_metric *metric = &result_metrics[m];
        int any = 0;
        for (size_t i = 0; i < pp->nseries; i++) {
            const prom_series *s = &pp->series[i];
            char line[64];
            if (!metric->value(&s->res, line, sizeof line))
                continue;
            if (!any++)
                cb_prom_put_family(f, metric->name, "gauge", metric->help);
            fprintf(f, "%s{%s,message_size=\"%llu\"} %s\n", metric->name, s->key,
                    (unsigned long long)s->res.bytes, line);
        }
    }
}

/* ---- The health scan (-o scan): its figures and suspects. ---- */

static void put_scan_figures(FILE *f, const char *source, const cb_scan_report *rep)
{
    int n = rep->nnodes, first;
    if (rep->node_bw != NULL && n > 0) {
        cb_prom_put_family(f, PROM_PREFIX "scan_node_bus_bandwidth_gbs", "gauge",
                           "Health scan: the all-reduce bus bandwidth within one node, "
                           "in GB/s");
        for (int a = 0; a < n; a++) {
            cb_prom_open_sample(f, source, PROM_PREFIX "scan_node_bus_bandwidth_gbs", &first);
            cb_prom_put_label(f, &first, "host", rep->hosts[a]);
            fputs("} ", f);
            cb_prom_put_number(f, PROM_CSV_FIXED, rep->node_bw[a]);
            fputc('\n', f);
        }
    }
    if (rep->pair_bw != NULL && n > 1) {
        cb_prom_put_family(f, PROM_PREFIX "scan_pair_bandwidth_gbs", "gauge",
                           "Health scan: the bandwidth between two nodes, GB/s per direction");
        for (int a = 0; a < n; a++)
            for (int b = a + 1; b < n; b++) {
                cb_prom_open_sample(f, source, PROM_PREFIX "scan_pair_bandwidth_gbs", &first);
                cb_prom_put_label(f, &first, "host", rep->hosts[a]);
                cb_prom_put_label(f, &first, "peer_host", rep->hosts[b]);
                fputs("} ", f);
                cb_prom_put_number(f, PROM_CSV_FIXED, rep->pair_bw[(size_t)a * n + b]);
                fputc('\n', f);
            }
    }
    if (rep->rail_bw != NULL && rep->nrails > 0) {
        cb_prom_put_family(f, PROM_PREFIX "scan_rail_bus_bandwidth_gbs", "gauge",
                           "Health scan: the all-reduce bus bandwidth across nodes "
                           "among the ranks of one local index, in GB/s");
        for (int l = 0; l < rep->nrails; l++) {
            cb_prom_open_sample(f, source, PROM_PREFIX "scan_rail_bus_bandwidth_gbs", &first);
            cb_prom_put_label_int(f, &first, "rail", l);
            fputs("} ", f);
            cb_prom_put_number(f, PROM_CSV_FIXED, rep->rail_bw[l]);
            fputc('\n', f);
        }
    }
}

static void put_scan_suspects(FILE *f, const char *source, const cb_scan_report *rep)
{
    int first;
    cb_prom_put_family(f, PROM_PREFIX "scan_suspect_threshold_ratio", "gauge",
                       "Health scan: a figure below this share of the median is a suspect "
                       "(--suspect-ratio)");
    cb_prom_open_sample(f, source, PROM_PREFIX "scan_suspect_threshold_ratio", &first);
    fputs("} ", f);
    cb_prom_put_number(f, PROM_SIGNIFICANT, rep->threshold);
    fputc('\n', f);
    cb_prom_put_family(f, PROM_PREFIX "scan_suspects", "gauge",
                       "Health scan: the number of suspects the verdict named");
    cb_prom_open_sample(f, source, PROM_PREFIX "scan_suspects", &first);
    fprintf(f, "} %d\n", rep->nsuspects);
    if (rep->nsuspects == 0)
        return;
    cb_prom_put_family(f, PROM_PREFIX "scan_suspect_ratio", "gauge",
                       "Health scan: one series per suspect node, link or rail, valued "
                       "its figure over the median (NaN where wrong elements named it)");
    for (int i = 0; i < rep->nsuspects; i++) {
        const cb_scan_suspect *x = &rep->suspects[i];
        cb_prom_open_sample(f, source, PROM_PREFIX "scan_suspect_ratio", &first);
        cb_prom_put_label(f, &first, "kind", x->kind);
        cb_prom_put_label(f, &first, "reason", x->reason);
        if (x->host != NULL)
            cb_prom_put_label(f, &first, "host", x->host);
        if (x->peer_host != NULL)
            cb_prom_put_label(f, &first, "peer_host", x->peer_host);
        if (x->rail >= 0)
            cb_prom_put_label_int(f, &first, "rail", x->rail);
        if (x->gpu != NULL && x->gpu[0] != '\0')
            cb_prom_put_label(f, &first, "gpu", x->gpu);
        fputs("} ", f);
        cb_prom_put_number(f, PROM_SIGNIFICANT, x->ratio);
        fputc('\n', f);
    }
}

static void prom_scan(cb_printer *pr, const cb_scan_report *rep)
{
    prom_printer *pp = (prom_printer *)pr;
    size_t len = 0;
    free(pp->scan);
    pp->scan = NULL;
    FILE *f = open_memstream(&pp->scan, &len);
    if (f == NULL) {
        fail_memory(pp);
        return;
    }
    put_scan_figures(f, pp->source, rep);
    put_scan_suspects(f, pp->source, rep);
    if (fclose(f) != 0)
        fail_memory(pp);
}

/* ---- The run, and writing the file. ---- */

/* Seconds since 1970 of an ISO 8601 UTC time ("2026-11-21T16:30:00Z"), or -1. */
static long long utc_seconds(const char *iso)
{
    int y, mo, d, h, mi, s;
    if (sscanf(iso, "%d-%d-%dT%d:%d:%dZ", &y, &mo, &d, &h, &mi, &s) != 6 || mo < 1 || mo > 12)
        return -1;
    /* Days since 1970-01-01 in the Gregorian calendar, in 400-year eras of
     * 146097 days, each year counted from March so that the leap day ends it
     * (719468 days from 0000-03-01 to 1970-01-01). */
    long long yr = y - (mo <= 2);
    long long era = (yr >= 0 ? yr : yr - 399) / 400;
    long long year_of_era = yr - era * 400;
    long long day_of_year = (153 * (mo > 2 ? mo - 3 : mo + 9) + 2) / 5 + d - 1;
    long long day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    long long days = era * 146097 + day_of_era - 719468;
    return days * 86400 + h * 3600 + mi * 60 + s;
}

/* A gauge of one unlabelled integer sample. */
static void put_integer(FILE *f, const char *source, const char *name, const char *type,
                        const char *help, long long v)
{
    int first;
    cb_prom_put_family(f, name, type, help);
    cb_prom_open_sample(f, source, name, &first);
    fprintf(f, "} %lld\n", v);
}

/* The one series per run that carries what changes with every run. */
static void put_run_info(FILE *f, const char *source, const cb_run_info *run)
{
    const char *library = run->ranks[0].device.library;
    const char *slurm_job = getenv("SLURM_JOB_ID");
    int first;
    cb_prom_put_family(f, PROM_PREFIX "run_info", "gauge", "The run: its id, the program's "
                       "and the libraries' versions and the Slurm job; always 1");
    cb_prom_open_sample(f, source, PROM_PREFIX "run_info", &first);
    cb_prom_put_label(f, &first, "run_id", run->run_id);
    cb_prom_put_label(f, &first, "version", run->tool_version);
    cb_prom_put_label(f, &first, "backend", run->backend);
    cb_prom_put_label(f, &first, "library", library);
    if (strncmp(library, "NCCL ", 5) == 0)
        cb_prom_put_label(f, &first, "nccl_version", library + 5);
    if (run->backend_versions[0] != '\0')
        cb_prom_put_label(f, &first, "backend_versions", run->backend_versions);
    cb_prom_put_label(f, &first, "mpi_library", run->mpi_library);
    if (slurm_job != NULL && slurm_job[0] != '\0')
        cb_prom_put_label(f, &first, "slurm_job_id", slurm_job);
    fputs("} 1\n", f);
}

/* The whole file: the run's series, then those of the cycle shown; sum is
 * NULL while the run goes on. */
static void put_file(FILE *f, const prom_printer *pp, const cb_summary *sum)
{
    const char *src = pp->source;
    if (pp->run != NULL) {
        put_run_info(f, src, pp->run);
        put_integer(f, src, PROM_PREFIX "start_timestamp_seconds", "gauge",
                    "When the run started, Unix time", utc_seconds(pp->run->start_utc));
        put_integer(f, src, PROM_PREFIX "cycles_completed_total", "counter",
                    "Cycles (-N) that ran whole", pp->cycles);
        if (pp->cycles > 0)
            put_integer(f, src, PROM_PREFIX "cycle_end_timestamp_seconds", "gauge",
                        "When the latest whole cycle ended, Unix time", pp->cycle_end);
        if (pp->shown != NULL)
            put_integer(f, src, PROM_PREFIX "results_cycle", "gauge", "The cycle (-N, from 1) "
                        "whose results and health scan the other series show", pp->shown_cycle);
        put_integer(f, src, PROM_PREFIX "wrong_elements_total", "counter", "Wrong elements in "
                    "every result of the run so far, every size and cycle", (long long)pp->wrong);
    }
    if (sum != NULL) {
        put_integer(f, src, PROM_PREFIX "exit_status", "gauge", "The run's exit status "
                    "(nccl-collbench(1), EXIT STATUS); absent while the run goes on",
                    sum->exit_status);
        put_integer(f, src, PROM_PREFIX "end_timestamp_seconds", "gauge",
                    "When the run ended, Unix time", (long long)time(NULL));
    }
    if (pp->shown != NULL)
        fputs(pp->shown, f);
}

static void fail_with(prom_printer *pp, const char *err)
{
    if (pp->base.write_failed)
        return;
    pp->base.write_failed = 1;
    snprintf(pp->base.failure, sizeof pp->base.failure, "--prom: %.240s", err);
}

/* Write the whole file beside the target and rename it into place. */
static void publish(prom_printer *pp, const cb_summary *sum)
{
    char *text = NULL, err[512];
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (f == NULL) {
        fail_memory(pp);
        return;
    }
    put_file(f, pp, sum);
    if (fclose(f) != 0) {
        free(text);
        fail_memory(pp);
        return;
    }
    int rc = 0;
    if (!pp->file_open)
        rc = cb_outfile_open(&pp->file, pp->path, err, sizeof err);
    if (rc == 0) {
        if (cb_outfile_write_whole(&pp->file, text, len) != 0) {
            snprintf(err, sizeof err, "writing '%s' failed: %s", pp->path, strerror(errno));
            rc = -1;
        } else {
            rc = cb_outfile_commit(&pp->file, err, sizeof err);
        }
        cb_outfile_close(&pp->file);
        pp->file_open = 0;
    }
    free(text);
    if (rc != 0)
        fail_with(pp, err);
}

static void forget_cycle(prom_printer *pp)
{
    for (size_t i = 0; i < pp->nseries; i++)
        free(pp->series[i].key);
    pp->nseries = 0;
    free(pp->scan);
    pp->scan = NULL;
}

/* The kept results and scan become the cycle shown. */
static void show_cycle(prom_printer *pp, int cycle)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (f == NULL) {
        fail_memory(pp);
        return;
    }
    put_results(f, pp);
    if (pp->scan != NULL)
        fputs(pp->scan, f);
    if (fclose(f) != 0) {
        free(text);
        fail_memory(pp);
        return;
    }
    free(pp->shown);
    pp->shown = text;
    pp->shown_cycle = cycle;
    forget_cycle(pp);
}

static void prom_cycle_end(cb_printer *pr, int cycle)
{
    prom_printer *pp = (prom_printer *)pr;
    show_cycle(pp, cycle);
    pp->cycles++;
    pp->cycle_end = (long long)time(NULL);
    publish(pp, NULL);
}

/* The final file. A cycle cut short is shown only when no cycle ran whole:
 * a scrape keeps the latest whole one, the exit status says why it ended. */
static void prom_end(cb_printer *pr, const cb_summary *sum)
{
    prom_printer *pp = (prom_printer *)pr;
    if (pp->shown == NULL && (pp->nseries > 0 || pp->scan != NULL))
        show_cycle(pp, pp->cycles + 1);
    forget_cycle(pp);
    publish(pp, sum);
}

static void prom_begin(cb_printer *pr, const cb_run_info *run)
{
    ((prom_printer *)pr)->run = run;
}

/* The source label: the file's name without its folder and ".prom". */
static char *source_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *name = slash != NULL ? slash + 1 : path;
    size_t len = strlen(name);
    if (len > 5 && strcmp(name + len - 5, ".prom") == 0)
        len -= 5;
    return strndup(name, len);
}

/* The target is checked, and a file made beside it, before anything is
 * measured. */
static cb_printer *prom_open(const char *path, char *err, size_t err_len)
{
    prom_printer *pp = calloc(1, sizeof *pp);
    if (pp == NULL || (pp->path = strdup(path)) == NULL) {
        free(pp);
        snprintf(err, err_len, "out of memory");
        return NULL;
    }
    pp->base.ops = &cb_printer_prom;
    if ((pp->source = source_of(path)) == NULL) {
        free(pp->path);
        free(pp);
        snprintf(err, err_len, "out of memory");
        return NULL;
    }
    if (cb_outfile_open(&pp->file, path, err, err_len) != 0) {
        free(pp->source);
        free(pp->path);
        free(pp);
        return NULL;
    }
    pp->file_open = 1;
    return &pp->base;
}

static int prom_close(cb_printer *pr, char *err, size_t err_len)
{
    prom_printer *pp = (prom_printer *)pr;
    int rc = 0;
    if (pr->write_failed) {
        snprintf(err, err_len, "%s", pr->failure);
        rc = -1;
    }
    if (pp->file_open)
        cb_outfile_close(&pp->file);   /* removes a file never named */
    forget_cycle(pp);
    free(pp->series);
    free(pp->shown);
    free(pp->source);
    free(pp->path);
    free(pp);
    return rc;
}

const cb_printer_ops cb_printer_prom = {
    .name = "prom",
    .option = "--prom",
    .destination = cb_params_prom_path,
    .needs_file = "the Prometheus file goes to a file (it is written whole, then renamed, so that a scrape never reads half of it)",
    .open = prom_open,
    .begin = prom_begin,
    .result = prom_result,
    .scan = prom_scan,
    .cycle_end = prom_cycle_end,
    .end = prom_end,
    .close = prom_close,
};
