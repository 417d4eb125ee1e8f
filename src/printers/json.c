/*
 * JSON: one document per run, with the parameters, the command line, the
 * environment that shapes NCCL and MPI, every rank's device, every result
 * with its statistics, the summary and the errors. Numbers are numbers,
 * booleans are booleans, unknown values are null. The document is written to
 * a temporary file beside the target and renamed over it at the end, so a
 * reader never sees half a document.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "common/json_text.h"
#include "common/redact.h"
#include "printers/json_write.h"
#include "safety/outfile.h"
#include "printers/printer.h"
#include "safety/agreement.h"
#include "safety/hangreport.h"

/* Defined at the end of this file, listed in formats.c. */
extern const cb_printer_ops cb_printer_json;

#define CB_JSON_SCHEMA_VERSION 1

extern char **environ;

/* Environment variables worth keeping with the results... */
static const char *const env_prefixes[] = {
    "NCCL_", "CUDA_", "OMPI_MCA_", "UCX_", "FI_", "I_MPI_", "MPICH_", "SLURM_JOB_",
};
/* ...except what Open MPI's launcher sets for its own use. */
static const char *const env_launcher_prefixes[] = {
    "OMPI_MCA_orte_", "OMPI_MCA_ess", "OMPI_MCA_pmix", "OMPI_MCA_initial_wdir",
    "OMPI_MCA_shmem_RUNTIME_QUERY_hint",
};

static int has_prefix(const char *s, const char *const *prefixes, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strncmp(s, prefixes[i], strlen(prefixes[i])) == 0)
            return 1;
    return 0;
}

typedef struct json_printer {
    cb_printer base;
    cb_outfile file;       /* written beside the target, named at close */
    const cb_run_info *run;
    int results;           /* written so far */
    char **notes;
    size_t nnotes;
    size_t notes_room;
    char *scan;            /* the last cycle's health scan object, written at the end */
    char *scan_cycles;     /* every cycle's, comma-separated (-N) */
    size_t scan_cycles_len;
    int ended;
} json_printer;

static cb_printer *json_open(const char *path, char *err, size_t err_len)
{
    json_printer *jp = calloc(1, sizeof *jp);
    if (jp == NULL) {
        snprintf(err, err_len, "out of memory");
        return NULL;
    }
    jp->base.ops = &cb_printer_json;
    if (cb_printer_open_document(&jp->base, &jp->file, path, err, err_len) != 0) {
        free(jp);
        return NULL;
    }
    fprintf(jp->base.out, "{\n  \"schema_version\": %d,\n  \"tool\": {\"name\": \"nccl-collbench\", "
                          "\"version\": \"%s\"}", CB_JSON_SCHEMA_VERSION, PACKAGE_VERSION);
    return &jp->base;
}

static void write_parameters(FILE *f, const cb_params *p)
{
    fprintf(f, "  \"parameters\": {\n    \"collectives\": [");
    for (int i = 0; i < p->sizes.ncollectives; i++) {
        fputs(i ? ", " : "", f);
        json_string(f, p->sizes.collectives[i]->name);
    }
    fprintf(f, "],\n    \"datatypes\": [");
    for (int i = 0; i < p->sizes.ndtypes; i++) {
        fputs(i ? ", " : "", f);
        json_string(f, cb_dtype_info_of(p->sizes.dtypes[i])->name);
    }
    fprintf(f, "],\n    \"redops\": [");
    for (int i = 0; i < p->sizes.nredops; i++) {
        fputs(i ? ", " : "", f);
        json_string(f, cb_redop_name(p->sizes.redops[i]));
    }
    fprintf(f, "],\n    \"min_bytes\": %llu, \"max_bytes\": %llu, \"step_bytes\": %llu, "
               "\"step_factor\": %llu,\n",
            (unsigned long long)p->sizes.min_bytes, (unsigned long long)p->sizes.max_bytes,
            (unsigned long long)p->sizes.step_bytes, (unsigned long long)p->sizes.step_factor);
    fprintf(f, "    \"iters\": %d, \"warmup_iters\": %d, \"check_passes\": %d, \"agg\": %d, "
               "\"graph_launches\": %d,\n    \"repeat_check\": ",
            p->sizes.iters, p->sizes.warmup, p->verify.check_passes, p->timing.agg, p->timing.graph_launches);
    json_bool(f, p->verify.repeat_check);
    fputs(", \"blocking\": ", f);
    json_bool(f, p->timing.blocking != 0);
    fprintf(f, ", \"blocking_mode\": %d", p->timing.blocking);
    json_field_string(f, "clock", cb_clock_name(p->timing.clock));
    fputs(", \"rotate\": ", f);
    json_bool(f, p->timing.rotate);
    fprintf(f, ", \"time_kind\": \"%s\", \"time_combine\": ",
            p->timing.report_cputime ? "cpu" : "completion");
    json_string(f, cb_average_name(p->timing.average));
    json_field_string(f, "backend_requested", p->backend);
    fprintf(f, ",\n    \"split\": ");
    json_string_or_null(f, p->sizes.split.kind != CB_SPLIT_NONE ? p->sizes.split.text : NULL);
    json_field_string(f, "hier_split", p->sizes.hier.text);
    fprintf(f, ", \"layouts\": [");
    for (int i = 0; i < p->sizes.nlayouts; i++)
        fprintf(f, "%s\"%s\"", i ? ", " : "", p->sizes.layouts[i] == CB_LAYOUT_COL ? "col" : "row");
    fprintf(f, "], \"nccl_impls\": [");
    for (int i = 0; i < p->sizes.nimpls; i++)
        fprintf(f, "%s\"%s\"", i ? ", " : "", cb_impl_name(p->sizes.impls[i]));
    fprintf(f, "], \"registration\": %d, \"unalign\": %d", p->sizes.registration, p->sizes.unalign);
    fprintf(f, ", \"budget_ms\": %d, \"stable_pct\": %d", p->timing.budget_ms, p->timing.stable_pct);
    json_field_string_or_null(f, "expect", p->expect.source);
    fprintf(f, ", \"expect_ratio\": %g", p->expect.expect_ratio);
    fprintf(f, "\n  },\n");
}

int cb_json_env_kept(const char *entry)
{
    return strchr(entry, '=') != NULL &&
           has_prefix(entry, env_prefixes, sizeof env_prefixes / sizeof env_prefixes[0]) &&
           !has_prefix(entry, env_launcher_prefixes,
                       sizeof env_launcher_prefixes / sizeof env_launcher_prefixes[0]);
}

static void write_environment(FILE *f)
{
    fprintf(f, "  \"environment\": {");
    int n = 0;
    for (char **env = environ; env != NULL && *env != NULL; env++) {
        const char *eq = strchr(*env, '=');
        if (!cb_json_env_kept(*env))
            continue;
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)(eq - *env), *env);
        fprintf(f, "%s\n    ", n++ ? "," : "");
        json_string(f, name);
        fputs(": ", f);
        json_string(f, cb_env_shown_value(*env));   /* a key: set, not shown */
    }
    fprintf(f, "%s},\n", n ? "\n  " : "");
}

static void json_begin(cb_printer *pr, const cb_run_info *run)
{
    json_printer *jp = (json_printer *)pr;
    FILE *f = pr->out;
    jp->run = run;
    fprintf(f, ",\n  \"run_id\": ");
    json_string(f, run->run_id);
    fprintf(f, ",\n  \"start_utc\": ");
    json_string(f, run->start_utc);
    if (run->restart_count >= 0)
        fprintf(f, ",\n  \"restart_count\": %d", run->restart_count);
    else
        fprintf(f, ",\n  \"restart_count\": null");
    fprintf(f, ",\n  \"command_line\": [");
    for (int i = 0; i < run->params->out.argc; i++) {
        fputs(i ? ", " : "", f);
        json_string(f, run->params->out.argv[i]);
    }
    fprintf(f, "],\n");
    write_parameters(f, run->params);
    write_environment(f);
    fprintf(f, "  \"backend\": {\"name\": ");
    json_string(f, run->backend);
    json_field_string(f, "library", run->ranks[0].device.library);
    json_field_string_or_null(f, "versions", run->backend_versions);
    json_field_string(f, "mpi_library", run->mpi_library);
    fprintf(f, ", \"rendezvous_authenticated\": %s",
            run->rendezvous_authenticated < 0 ? "null"
            : run->rendezvous_authenticated   ? "true"
                                              : "false");
    json_field_string_or_null(f, "allocator", run->allocator);
    json_field_string(f, "registration", run->registration ? run->registration : "");
    json_field_string_or_null(f, "repeat_compare", run->repeat_compare);
    fprintf(f, "},\n  \"ranks\": %d, \"nodes\": %d, \"ranks_per_node\": %d, "
               "\"max_bytes_used\": %llu,\n  \"devices\": [",
            run->nranks, run->nnodes, run->ranks_per_node, (unsigned long long)run->max_bytes);
    for (int r = 0; r < run->nranks; r++) {
        const cb_rank_info *ri = &run->ranks[r];
        fprintf(f, "%s\n    {\"rank\": %d, \"pid\": %d, \"host\": ", r ? "," : "", ri->rank, ri->pid);
        json_string(f, ri->host);
        fprintf(f, ", \"device_index\": %d, \"bus_id\": ", ri->device.index);
        json_string(f, ri->device.bus_id);
        json_field_string(f, "model", ri->device.model);
        fputc('}', f);
    }
    fprintf(f, "\n  ],\n  \"results\": [");
}

static void json_note(cb_printer *pr, const char *text)
{
    json_printer *jp = (json_printer *)pr;
    if (jp->nnotes == jp->notes_room) {
        size_t room = jp->notes_room ? 2 * jp->notes_room : 16;
        char **grown = realloc(jp->notes, room * sizeof *grown);
        if (grown == NULL) {
            pr->write_failed = 1;
            return;
        }
        jp->notes = grown;
        jp->notes_room = room;
    }
    char *copy = strdup(text);
    if (copy == NULL) {
        pr->write_failed = 1;
        return;
    }
    jp->notes[jp->nnotes++] = copy;
}

/* One rank's times; with --samples-json (samples not NULL) also its
 * samples in the order taken. */
static void write_rank_time(FILE *f, const cb_rank_time *t, const double *samples)
{
    fprintf(f, "{\"mean_us\": ");
    json_micros(f, t->mean);
    json_field_micros(f, "min_us", t->min);
    json_field_micros(f, "median_us", t->median);
    json_field_micros(f, "p99_us", t->p99);
    json_field_micros(f, "max_us", t->max);
    fprintf(f, ", \"samples\": %d", t->samples);
    if (samples != NULL) {
        fprintf(f, ", \"samples_us\": ");
        json_list(f, samples, t->samples, json_micros);
    }
    fputc('}', f);
}

static void json_one_result(cb_printer *pr, const cb_result *res)
{
    json_printer *jp = (json_printer *)pr;
    FILE *f = pr->out;
    fprintf(f, "%s\n    {\"collective\": ", jp->results++ ? "," : "");
    json_string(f, res->collective->name);
    json_field_string(f, "datatype", cb_dtype_info_of(res->dtype)->name);
    json_field_string(f, "redop", cb_redop_name(res->redop));
    fprintf(f, ", \"root\": %d, \"bytes\": %llu, \"count\": %zu, \"in_place\": ", res->root,
            (unsigned long long)res->bytes, res->count);
    json_bool(f, res->in_place);
    /* The timed iterations run: -n, or fewer under --budget and --stable. */
    fprintf(f, ", \"warmup_iterations\": %d, \"actual_iterations\": %d", res->warmup_iters,
            res->iters);
    fprintf(f, ",\n     \"time_us\": ");
    json_micros(f, res->seconds);
    json_field_number(f, "algbw_gbps", res->algbw);
    json_field_number(f, "busbw_gbps", res->busbw);
    fprintf(f, ",\n     \"checked\": ");
    json_bool(f, res->check_passes > 0);
    fprintf(f, ", \"check_passes\": %d, \"wrong\": ", res->check_passes);
    if (res->check_passes > 0)
        fprintf(f, "%llu", (unsigned long long)res->wrong);
    else
        fputs("null", f);
    fprintf(f, ", \"first_wrong\": ");
    if (res->wrong > 0) {
        fprintf(f, "{\"rank\": %d, \"host\": ", res->bad_rank);
        json_string(f, res->bad_host);
        fprintf(f, ", \"index\": %zu, \"expected\": ", res->first.index);
        json_exact(f, res->first.expected);
        json_field_exact(f, "actual", res->first.actual);
        fputc('}', f);
    } else {
        fputs("null", f);
    }
    /* -B: null where the launches were not compared. */
    fprintf(f, ",\n     \"repeat_checked\": %llu, \"unrepeatable\": ",
            (unsigned long long)res->repeat.repeat_checked);
    if (res->repeat.repeat_checked > 0)
        fprintf(f, "%llu, \"unrepeatable_elements\": %llu",
                (unsigned long long)res->repeat.unrepeatable,
                (unsigned long long)res->repeat.unrepeatable_elements);
    else
        fputs("null, \"unrepeatable_elements\": null", f);
    fputs(", \"first_unrepeatable\": ", f);
    if (res->repeat.unrepeatable > 0) {
        fprintf(f, "{\"rank\": %d, \"host\": ", res->repeat.unrepeatable_rank);
        json_string(f, res->repeat.unrepeatable_host);
        fputc('}', f);
    } else {
        fputs("null", f);
    }
    fprintf(f, ",\n     \"rank_time_us\": {\"min\": ");
    json_micros(f, res->spread.min);
    json_field_micros(f, "mean", res->spread.mean);
    json_field_micros(f, "max", res->spread.max);
    json_field_micros(f, "median", res->spread.median);
    fprintf(f, "}, \"slowest_rank\": %d, \"slowest_host\": ", res->spread.slowest);
    json_string(f, res->slowest_host);
    if (res->split.group >= 0)
        fprintf(f, ", \"group\": %d", res->split.group);
    else
        fprintf(f, ", \"group\": null");
    fprintf(f, ", \"group_ranks\": %d, \"group_host\": ", res->split.group_ranks);
    json_string_or_null(f, res->split.group_host);
    fprintf(f, ", \"layout\": \"%s\"", res->layout == CB_LAYOUT_COL ? "col" : "row");
    fprintf(f, ", \"impl\": ");
    if (res->impl != NULL)
        json_string(f, res->impl);
    else
        fputs("null", f);
    if (res->rows > 0)
        fprintf(f, ", \"matrix\": [%zu, %zu]", res->rows, res->cols);
    else
        fprintf(f, ", \"matrix\": null");
    fprintf(f, ", \"traffic_matrix\": ");
    if (res->traffic_matrix[0] != '\0')
        json_string(f, res->traffic_matrix);
    else
        fputs("null", f);
    if (res->expected_busbw > 0) {
        json_field_number(f, "expected_busbw_gbps", res->expected_busbw);
        json_field_number(f, "efficiency", res->efficiency);
    } else
        fprintf(f, ", \"expected_busbw_gbps\": null, \"efficiency\": null");
    fprintf(f, ", \"scan_part\": ");
    if (res->scan.scan_part != NULL) {
        json_string(f, res->scan.scan_part);
        json_field_string_or_null(f, "host", res->scan.host);
        json_field_string_or_null(f, "peer_host", res->scan.peer_host);
        if (res->scan.round >= 0)
            fprintf(f, ", \"round\": %d", res->scan.round);
        else
            fprintf(f, ", \"round\": null");
    } else {
        fprintf(f, "null, \"host\": null, \"peer_host\": null, \"round\": null");
    }
    json_field_string_or_null(f, "comm_op", res->comm_op);
    fprintf(f, ", \"cycle\": %d, \"timestamp_utc\": ", res->cycle);
    json_string(f, res->timestamp_utc);
    fprintf(f, ",\n     \"per_rank\": [");
    int nranks = jp->run ? jp->run->nranks : 0;
    for (int r = 0; r < nranks && res->rank_times != NULL; r++) {
        fputs(r ? ", " : "", f);
        write_rank_time(f, &res->rank_times[r],
                        res->rank_samples ? res->rank_samples + (size_t)r * res->samples_room
                                          : NULL);
    }
    fprintf(f, "]}");
    if (ferror(f) && !pr->write_failed) {
        /* Named now, while errno still says why (a full disk). */
        pr->write_failed = 1;
        snprintf(pr->failure, sizeof pr->failure, "writing the JSON file '%s' failed: %s",
                 jp->file.path, strerror(errno));
    }
}

/* One entry per result: the out-of-place one, then the in-place one. */
static void json_result(cb_printer *pr, const cb_row *row)
{
    json_one_result(pr, row->out_of_place);
    if (row->in_place != NULL)
        json_one_result(pr, row->in_place);
}

static void json_scan_suspect(FILE *f, const cb_scan_suspect *x)
{
    fprintf(f, "{\"kind\": ");
    json_string(f, x->kind);
    json_field_string(f, "reason", x->reason);
    json_field_string_or_null(f, "host", x->host);
    json_field_string_or_null(f, "peer_host", x->peer_host);
    json_field_string_or_null(f, "gpu", x->gpu);
    if (x->rail >= 0)
        fprintf(f, ", \"rail\": %d", x->rail);
    else
        fprintf(f, ", \"rail\": null");
    const double figures[] = {x->figure, x->first, x->again, x->median, x->ratio};
    const char *names[] = {"figure", "first", "again", "median", "ratio"};
    for (int i = 0; i < 5; i++)
        json_field_number(f, names[i], figures[i]);
    fprintf(f, ", \"wrong\": %llu, \"confidence\": ", x->wrong);
    json_string_or_null(f, x->confidence);
    fprintf(f, ", \"reference_figures\": %d}", x->reference_figures);
}

/* Appends text to a growing string; -1 when out of memory. */
static int append_text(char **to, size_t *len, const char *text)
{
    size_t add = strlen(text);
    char *grown = realloc(*to, *len + add + 1);
    if (grown == NULL)
        return -1;
    memcpy(grown + *len, text, add + 1);
    *to = grown;
    *len += add;
    return 0;
}

/* Kept as text until the end, where the document has its place: the last
 * cycle's object as "scan", every cycle's in "scan_cycles". */
static void json_scan(cb_printer *pr, const cb_scan_report *rep)
{
    json_printer *jp = (json_printer *)pr;
    size_t len = 0;
    free(jp->scan);
    jp->scan = NULL;
    FILE *f = open_memstream(&jp->scan, &len);
    if (f == NULL) {
        pr->write_failed = 1;
        return;
    }
    int n = rep->nnodes;
    fprintf(f, "{\"cycle\": %d, \"nodes\": %d, \"bytes\": %llu, \"threshold\": ", rep->cycle,
            n, (unsigned long long)rep->bytes);
    json_number(f, rep->threshold);
    fprintf(f, ",\n    \"hosts\": [");
    for (int a = 0; a < n; a++) {
        fputs(a ? ", " : "", f);
        json_string(f, rep->hosts[a]);
    }
    fprintf(f, "],\n    \"node_busbw_gbps\": ");
    if (rep->node_bw != NULL)
        json_list(f, rep->node_bw, n, json_number);
    else
        fputs("null", f);
    fprintf(f, ",\n    \"pair_gbps\": ");
    if (rep->pair_bw != NULL) {
        fputc('[', f);
        for (int a = 0; a < n; a++) {
            fputs(a ? ",\n      " : "", f);
            json_list(f, rep->pair_bw + (size_t)a * n, n, json_number);
        }
        fputc(']', f);
    } else {
        fputs("null", f);
    }
    fprintf(f, ",\n    \"rail_busbw_gbps\": ");
    if (rep->rail_bw != NULL)
        json_list(f, rep->rail_bw, rep->nrails, json_number);
    else
        fputs("null", f);
    fprintf(f, ",\n    \"suspects\": [");
    for (int i = 0; i < rep->nsuspects; i++) {
        fputs(i ? ",\n      " : "\n      ", f);
        json_scan_suspect(f, &rep->suspects[i]);
    }
    fprintf(f, "]}");
    if (fclose(f) != 0 ||
        append_text(&jp->scan_cycles, &jp->scan_cycles_len, jp->scan_cycles ? ",\n    " : "") ||
        append_text(&jp->scan_cycles, &jp->scan_cycles_len, jp->scan))
        pr->write_failed = 1;
}

/* The watchdog's hang report: its lines, and where every rank was. */
static void json_hang(FILE *f, const cb_hang_report *rep)
{
    fprintf(f, "{\"trigger_rank\": %d, \"limit_s\": ", rep->trigger);
    json_number(f, rep->limit_s);
    json_field_number(f, "wait_s", rep->wait_s);
    fprintf(f, ", \"answered\": %d, \"silent\": %d, \"ended\": %d, \"behind\": %d,\n"
               "    \"lines\": [", rep->answered, rep->nranks - rep->answered - rep->left,
            rep->left, rep->behind);
    for (int i = 0; i < rep->nlines; i++) {
        fprintf(f, "%s\n      ", i ? "," : "");
        json_string(f, rep->lines[i]);
    }
    fprintf(f, "],\n    \"ranks\": [");
    for (int r = 0; r < rep->nranks; r++) {
        const cb_hang_rank *x = &rep->ranks[r];
        const cb_hang_state *s = &x->state;
        fprintf(f, "%s\n      {\"rank\": %d, \"host\": ", r ? "," : "", r);
        json_string_or_null(f, s->host);
        fprintf(f, ", \"answer\": \"%s\", \"behind\": ", cb_hang_answer_name(x->answer));
        json_bool(f, x->behind);
        if (x->answer == CB_HANG_ANSWERED) {
            fprintf(f, ", \"pid\": %d, \"doing\": ", (int)s->pid);
            json_string(f, s->doing);
            json_field_string_or_null(f, "operation", s->op);
            fprintf(f, ", \"bytes\": %llu, \"iteration\": %lld, \"units\": %lld, "
                       "\"launches\": %llu, \"step\": %llu, \"idle_s\": ",
                    (unsigned long long)s->bytes, (long long)s->iteration, (long long)s->units,
                    (unsigned long long)s->launches, (unsigned long long)s->step);
            json_number(f, s->idle_s);
            json_field_bool(f, "watchdog_fired", s->fired);
        }
        fputc('}', f);
    }
    fprintf(f, "%s]}", rep->nranks ? "\n    " : "");
}

/* The summary's verdict keys: the table's "# Result:" line and its
 * average lines, as fields. */
static void json_verdict(FILE *f, const cb_summary *sum)
{
    char reasons[512];
    fprintf(f, ",\n    \"verdict\": \"%s\", \"reasons\": ", cb_verdict(sum, reasons, sizeof reasons));
    json_string_or_null(f, reasons);
    fprintf(f, ", \"measurements\": %d, \"elapsed_s\": ", sum->measurements);
    json_number(f, sum->elapsed_s);
    fputs(", \"first_wrong_rank\": ", f);
    if (sum->first_wrong_rank >= 0)
        fprintf(f, "%d", sum->first_wrong_rank);
    else
        fputs("null", f);
    fputs(", \"first_wrong_host\": ", f);
    json_string_or_null(f, sum->first_wrong_rank >= 0 ? sum->first_wrong_host : NULL);
    fprintf(f, ", \"unrepeatable\": %llu, \"first_unrepeatable_rank\": ",
            (unsigned long long)sum->unrepeatable);
    if (sum->first_unrepeatable_rank >= 0)
        fprintf(f, "%d", sum->first_unrepeatable_rank);
    else
        fputs("null", f);
    fputs(", \"first_unrepeatable_host\": ", f);
    json_string_or_null(f, sum->first_unrepeatable_rank >= 0 ? sum->first_unrepeatable_host
                                                             : NULL);
    fputs(", \"suspect_host\": ", f);
    json_string_or_null(f, sum->suspect_host[0] != '\0' ? sum->suspect_host : NULL);
    fprintf(f, ", \"below_min_busbw\": %d, \"below_expectation\": %d, \"no_expectation\": %d"
               ", \"link_faults\": %d, \"scan_suspects\": %d, \"min_bw_gbps\": ",
            sum->below_min_busbw, sum->below_expectation, sum->unchecked, sum->link_faults,
            sum->scan_suspects);
    json_number(f, sum->min_bw);   /* NaN (unset) is null */
    fputs(",\n    \"avg_busbw_by_collective\": [", f);
    for (int i = 0; i < sum->naverages; i++) {
        const cb_busbw_average *a = &sum->averages[i];
        fprintf(f, "%s{\"collective\": ", i ? ", " : "");
        json_string(f, a->collective->name);
        fputs(", \"avg_busbw_gbps\": ", f);
        json_number(f, a->cells ? a->sum / a->cells : 0.0);
        fprintf(f, ", \"cells\": %d, \"min_bw_passed\": ", a->cells);
        if (isnan(sum->min_bw))
            fputs("null", f);
        else
            json_bool(f, !a->min_bw_failed);
        fputc('}', f);
    }
    fputc(']', f);
}

static void json_end(cb_printer *pr, const cb_summary *sum)
{
    json_printer *jp = (json_printer *)pr;
    FILE *f = pr->out;
    jp->ended = 1;
    if (jp->run == NULL)          /* failed before the run began */
        fprintf(f, ",\n  \"results\": [");
    fprintf(f, "%s],\n  \"scan\": %s", jp->results ? "\n  " : "", jp->scan ? jp->scan : "null");
    if (jp->scan_cycles != NULL)
        fprintf(f, ",\n  \"scan_cycles\": [\n    %s]", jp->scan_cycles);
    else
        fprintf(f, ",\n  \"scan_cycles\": null");
    fprintf(f, ",\n  \"notes\": [");
    for (size_t i = 0; i < jp->nnotes; i++) {
        fprintf(f, "%s\n    ", i ? "," : "");
        json_string(f, jp->notes[i]);
    }
    fprintf(f, "%s],\n  \"summary\": {\"results\": %d, \"wrong\": %llu, \"avg_busbw_gbps\": ",
            jp->nnotes ? "\n  " : "", sum->results, (unsigned long long)sum->wrong);
    json_number(f, sum->busbw_results ? sum->busbw_sum / sum->busbw_results : 0.0);
    json_field_bool(f, "passed", sum->exit_status == 0);
    fprintf(f, ", \"exit_status\": %d", sum->exit_status);
    json_verdict(f, sum);
    fprintf(f, "},\n  \"errors\": [");
    if (sum->error[0] != '\0')
        json_string(f, sum->error);
    char end_utc[32];
    time_t now = time(NULL);
    struct tm utc;
    gmtime_r(&now, &utc);
    strftime(end_utc, sizeof end_utc, "%Y-%m-%dT%H:%M:%SZ", &utc);
    fprintf(f, "],\n  \"hang\": ");
    if (sum->hang != NULL)
        json_hang(f, sum->hang);
    else
        fputs("null", f);
    fprintf(f, ",\n  \"end_utc\": \"%s\",\n  \"complete\": ", end_utc);
    json_bool(f, sum->exit_status == 0 || sum->exit_status == CB_EXIT_WRONG ||
                     sum->exit_status == CB_EXIT_SLOW || sum->exit_status == CB_EXIT_UNCHECKED ||
                     sum->exit_status == CB_EXIT_NOTHING);
    fprintf(f, "\n}\n");
}

static int json_close(cb_printer *pr, char *err, size_t err_len)
{
    json_printer *jp = (json_printer *)pr;
    int rc = cb_printer_close_document(pr, &jp->file, jp->ended, err, err_len);
    for (size_t i = 0; i < jp->nnotes; i++)
        free(jp->notes[i]);
    free(jp->notes);
    free(jp->scan);
    free(jp->scan_cycles);
    free(jp);
    return rc;
}

const cb_printer_ops cb_printer_json = {
    .name = "json",
    .option = "--json",
    .destination = cb_params_json_path,
    .needs_file = "the JSON document goes to a file (it is written whole, then renamed)",
    .open = json_open,
    .begin = json_begin,
    .note = json_note,
    .scan = json_scan,
    .result = json_result,
    .end = json_end,
    .close = json_close,
};
