/*
 * The health scan (-o scan): every node's all-reduce (all nodes at once),
 * every pair of nodes by the round-robin schedule (send/receive between the
 * ranks of the same local index, both ways at once), every rail's
 * all-reduce, then the verdict of src/scan/verdict.h with a re-measure of
 * each candidate alone. Measured on the run's backend through its sub-groups
 * (ops->split), so one backend and one pair of buffers serve every grouping.
 */
#include "common/format.h"
#include "engine_int.h"
#include "scan/matrix_text.h"
#include "scan/schedule.h"
#include "scan/verdict.h"

#define SCAN_LABEL 64

typedef struct scan_run {
    engine *e;
    cb_scan_topology t;
    size_t count;                   /* floats per rank in every measurement */
    double bytes;                   /* count * sizeof(float) */
    float *host_buf;                /* the input, then the output read back */
    double *times;                  /* rank 0: every rank's seconds per operation */
    double *node_times;             /* rank 0: the node all-reduce's, to name a GPU */
    unsigned long long wrong_mine;  /* this rank's wrong elements over the scan */
    char (*labels)[SCAN_LABEL];     /* rank 0: every rank's host */
    int measurements;               /* groupings measured, re-measures included */
} scan_run;

/* One operation: an all-reduce on sub, or a send/receive with peer on the
 * whole run's backend. */
static int launch_one(engine *e, cb_backend *sub, int peer, size_t count)
{
    if (sub != NULL)
        return e->ops->coll.allreduce(sub, e->mem.send, e->mem.recv, count, CB_FLOAT, CB_SUM);
    return e->ops->coll.sendrecv(e->b, e->mem.send, e->mem.recv, count, CB_FLOAT, peer, peer);
}

/* Wait for every rank, sleeping between polls: ranks that rest in a
 * measurement must not take the processor from those measuring when
 * several ranks share it (as simulated hosts on one machine do). */
static void quiet_barrier(engine *e)
{
    cb_ctl_req *req = NULL;
    int done = 0, none = 0, any = 0;
    if (cb_ctl_iallreduce(e->comm, &none, &any, 1, CB_CTL_INT, CB_CTL_MAX, &req) != 0)
        return;
    /* Waiting for the ranks that measure is progress: their own watchdogs
     * catch a measurement that hangs, and a resting rank must not time out
     * while a slow part is measured (a slow link is what the scan finds). */
    for (cb_ctl_test(e->comm, req, &done); !done; cb_ctl_test(e->comm, req, &done)) {
        cb_watchdog_tick(&e->safety.watch);
        nanosleep(&(struct timespec){.tv_nsec = 200000}, NULL);
    }
}

/* One launch of a measurement loop, counted for the watchdog. */
static int launch_counted(engine *e, cb_backend *sub, int peer, size_t count, long i)
{
    int rc = launch_one(e, sub, peer, count);
    cb_watchdog_at(&e->safety.watch, i);
    return rc;
}

/* Measure one grouping: color >= 0, an all-reduce among the ranks of each
 * colour; color < 0, a send/receive with peer (-1: this rank rests), over
 * -n iterations times `longer` (a re-measure: `longer` < 0 is -iterations).
 * Every rank calls it at once. Rank 0 gets every rank's seconds per
 * operation in s->times (NaN for a resting rank); each rank checks its
 * output and counts wrong elements. Returns 0, or -1 on every rank after a
 * failure. */
static int scan_measure(scan_run *s, int color, int peer, int longer, const char *what)
{
    engine *e = s->e;
    const cb_params *p = e->p;
    cb_backend *sub = NULL;
    cb_watchdog_doing(&e->safety.watch, "the health scan (-o scan), %s", what);
    if (color >= 0 && cb_eng_backend_step(e, e->ops->split(e->b, color, e->rank, &sub)) != 0)
        sub = NULL;
    if (cb_eng_agree(e) != CB_EXIT_OK)
        return -1;
    int active = color >= 0 ? sub != NULL && sub->nranks > 1 : peer >= 0;
    /* Inputs whose correct output is exact in float: a sum of ones, or the
     * peer's rank + 1. */
    float mine = color >= 0 ? 1.0f : (float)(e->rank + 1);
    float expect = color >= 0 ? (float)(sub != NULL ? sub->nranks : 1) : (float)(peer + 1);
    size_t bytes = s->count * sizeof(float);
    double seconds = NAN;
    int rc = 0;
    for (size_t i = 0; i < s->count; i++)
        s->host_buf[i] = mine;
    if (active) {
        rc = cb_eng_copy_in(e, e->mem.send, s->host_buf, bytes);
        cb_watchdog_loop(&e->safety.watch, p->sizes.warmup);
        for (int w = 0; rc == 0 && w < p->sizes.warmup; w++)
            rc = launch_counted(e, sub, peer, s->count, w);
        if (rc == 0)
            rc = e->ops->wait(e->b);
    }
    if (rc != 0)
        cb_status_set(&e->st, CB_EXIT_RUNTIME, "%s", sub != NULL && sub->error[0] != '\0'
                                                         ? sub->error : e->b->error);
    if (cb_eng_agree(e) == CB_EXIT_OK && active) {
        int iters = longer < 0 ? -longer : (p->sizes.iters > 0 ? p->sizes.iters : 1) * longer;
        /* A re-measure is timed in chunks of -n iterations and keeps its
         * fastest: a rank descheduled for milliseconds on a loaded machine
         * stalls one chunk, while a slow part is slow in every chunk. */
        int chunk = longer < 0 && p->sizes.iters > 0 && p->sizes.iters < iters ? p->sizes.iters : iters;
        cb_watchdog_loop(&e->safety.watch, iters);
        for (int done = 0; rc == 0 && done < iters; done += chunk) {
            int now = iters - done < chunk ? iters - done : chunk;
            double sec = NAN;
            rc = e->ops->timing.timer_start(e->b);
            for (int i = 0; rc == 0 && i < now; i++)
                rc = launch_counted(e, sub, peer, s->count, done + i);
            if (rc == 0)
                rc = e->ops->timing.timer_stop(e->b, &sec);
            if (rc == 0 && !(sec / now >= seconds))
                seconds = sec / now;
        }
        if (rc == 0)
            rc = cb_eng_copy_out(e, s->host_buf, e->mem.recv, bytes);
        unsigned long long wrong = 0;
        for (size_t i = 0; rc == 0 && i < s->count; i++)
            wrong += s->host_buf[i] != expect;
        s->wrong_mine += wrong;
        cb_eng_features_count(e, ENG_FAULT_WRONG, wrong);   /* the -N tally */
        if (rc != 0)
            cb_status_set(&e->st, CB_EXIT_RUNTIME, "%s", sub != NULL && sub->error[0] != '\0'
                                                             ? sub->error : e->b->error);
    }
    quiet_barrier(e);
    if (sub != NULL)
        e->ops->fini(sub, e->st.code != CB_EXIT_OK);
    if (cb_eng_agree(e) != CB_EXIT_OK)
        return -1;
    cb_ctl_gather(e->comm, &seconds, sizeof(double), s->times, 0);
    s->measurements++;
    return 0;
}

/* Which ranks a figure covers: a node's, a pair's (nodes a and b) or a
 * rail's (local index a). */
typedef enum scan_span { SPAN_NODE, SPAN_PAIR, SPAN_RAIL } scan_span;

static int in_span(const cb_scan_topology *t, scan_span span, int a, int b, int r)
{
    if (span == SPAN_NODE)
        return t->node[r] == a;
    if (span == SPAN_PAIR)
        return t->node[r] == a || t->node[r] == b;
    return t->local[r] == a;
}

/* Rank 0, after a measurement: one CSV row and JSON result for a figure
 * (the table has the figures as notes). part: "node", "pair", "rail", or
 * with "_again" a re-measure. */
static void scan_row(scan_run *s, const char *part, scan_span span, int a, int b, int round,
                     double figure)
{
    static const cb_collective scan_collective = {.name = "scan"};
    engine *e = s->e;
    const cb_scan_topology *t = &s->t;
    if (e->rank != 0)
        return;
    cb_result res;
    memset(&res, 0, sizeof res);
    res.collective = &scan_collective;
    res.dtype = CB_FLOAT;
    res.redop = CB_SUM;
    res.root = -1;
    res.count = s->count;
    res.bytes = (uint64_t)s->count * sizeof(float);
    res.warmup_iters = e->p->sizes.warmup;
    res.iters = e->p->sizes.iters;
    res.seconds = NAN;
    res.spread.slowest = -1;
    res.slowest.min = res.slowest.median = res.slowest.p99 = res.slowest.max = NAN;
    res.slowest.mean = NAN;
    res.spread.min = res.spread.mean = res.spread.max = NAN;
    /* The figure's time: its slowest member's. */
    for (int r = 0; r < t->nranks; r++) {
        if (!in_span(t, span, a, b, r) || !isfinite(s->times[r]))
            continue;
        res.split.group_ranks++;
        if (res.spread.slowest < 0 || s->times[r] > res.seconds) {
            res.seconds = s->times[r];
            res.spread.slowest = r;
        }
    }
    if (res.spread.slowest >= 0)
        snprintf(res.slowest_host, sizeof res.slowest_host, "%s", s->labels[res.spread.slowest]);
    res.busbw = figure;
    res.algbw = span == SPAN_PAIR ? figure
                                  : res.seconds > 0 ? (double)res.bytes / res.seconds / 1e9 : NAN;
    res.split.group = span == SPAN_PAIR ? -1 : a;
    res.layout = CB_LAYOUT_ROW;
    res.scan = (struct cb_result_scan){.scan_part = part, .round = span == SPAN_PAIR ? round : -1};
    if (span != SPAN_RAIL)
        snprintf(res.scan.host, sizeof res.scan.host, "%s", s->labels[t->node_first[a]]);
    if (span == SPAN_PAIR)
        snprintf(res.scan.peer_host, sizeof res.scan.peer_host, "%s", s->labels[t->node_first[b]]);
    cb_eng_stamp_result(e, &res);
    if (strstr(part, "_again") == NULL) {
        char what[192];
        const struct cb_result_scan *sc = &res.scan;
        snprintf(what, sizeof what, "scan %s %s%s%s", part, sc->host[0] ? sc->host : "rail",
                 sc->peer_host[0] ? " - " : "", sc->peer_host);
        if (span == SPAN_RAIL)
            snprintf(what, sizeof what, "scan rail %d", a);
        cb_eng_gate_busbw(e, what, figure);
    }
    cb_row row = {&res, NULL};
    e->sum.measurements++;   /* a figure, as the CSV has one row for it */
    pthread_mutex_lock(&e->out.lock);
    for (int i = 0; i < e->out.nprinters; i++)
        if (e->out.printers[i]->ops != &cb_printer_table && e->out.printers[i]->ops->result != NULL)
            e->out.printers[i]->ops->result(e->out.printers[i], &row);
    pthread_mutex_unlock(&e->out.lock);
}

/* Pair figures of every round into matrix (rank 0). */
static int scan_pairs(scan_run *s, double *matrix)
{
    const cb_scan_topology *t = &s->t;
    int *pairs = malloc((size_t)t->nnodes * sizeof *pairs);
    if (pairs == NULL)
        cb_status_set(&s->e->st, CB_EXIT_RUNTIME, "-o scan: out of memory for the pairs");
    if (cb_eng_agree(s->e) != CB_EXIT_OK) {
        free(pairs);
        return -1;
    }
    for (int r = 0; r < cb_scan_rounds(t->nnodes); r++) {
        char what[64];
        snprintf(what, sizeof what, "pairs, round %d of %d", r + 1, cb_scan_rounds(t->nnodes));
        if (scan_measure(s, -1, cb_scan_pair_peer(t, r, s->e->rank), 1, what) != 0) {
            free(pairs);
            return -1;
        }
        if (s->e->rank != 0)
            continue;
        cb_scan_round_figures(t, r, -1, -1, s->bytes, s->times, matrix);
        for (int k = 0, n = cb_scan_round_pairs(t->nnodes, r, pairs); k < n; k++) {
            int a = pairs[2 * k], b = pairs[2 * k + 1];
            scan_row(s, "pair", SPAN_PAIR, a, b, r, matrix[a * t->nnodes + b]);
        }
    }
    free(pairs);
    return 0;
}

/* Measure one candidate's part alone; its figure on rank 0 (NaN elsewhere). */
static int scan_again(scan_run *s, const cb_scan_remeasure *what, int iters, double *figure)
{
    const cb_scan_topology *t = &s->t;
    int n = t->nnodes, rank = s->e->rank, rc;
    double *out = calloc((size_t)n * n + t->max_local + 1, sizeof *out);
    if (out == NULL) {
        cb_status_set(&s->e->st, CB_EXIT_RUNTIME, "-o scan: out of memory");
        cb_eng_agree(s->e);
        return -1;
    }
    *figure = NAN;
    if (what->part == CB_SCAN_PART_NODE) {
        rc = scan_measure(s, cb_scan_node_alone_color(t, what->a, rank), -1, -iters,
                          "a node measured again");
        if (rc == 0 && rank == 0 && cb_scan_node_figures(t, s->bytes, s->times, out) > what->a)
            *figure = out[what->a];
        scan_row(s, "node_again", SPAN_NODE, what->a, -1, -1, *figure);
    } else if (what->part == CB_SCAN_PART_RAIL) {
        rc = scan_measure(s, cb_scan_rail_alone_color(t, what->a, rank), -1, -iters,
                          "a rail measured again");
        if (rc == 0 && rank == 0 && cb_scan_rail_figures(t, s->bytes, s->times, out) > what->a)
            *figure = out[what->a];
        scan_row(s, "rail_again", SPAN_RAIL, what->a, -1, -1, *figure);
    } else {
        rc = scan_measure(s, -1, cb_scan_pair_alone_peer(t, what->a, what->b, rank), -iters,
                          "a pair measured again");
        for (int i = 0; i < n * n; i++)
            out[i] = NAN;
        if (rc == 0 && rank == 0) {
            cb_scan_round_figures(t, cb_scan_round_of_pair(n, what->a, what->b), what->a,
                                  what->b, s->bytes, s->times, out);
            *figure = out[what->a * n + what->b];
            scan_row(s, "pair_again", SPAN_PAIR, what->a, what->b,
                     cb_scan_round_of_pair(n, what->a, what->b), *figure);
        }
    }
    free(out);
    return rc;
}

/* Re-measure rank 0's candidates v->items[from, to), every rank in rank 0's
 * order. Each candidate (what[2i]) is measured again alone, then its
 * control (what[2i+1], a healthy part of its kind) alone right after, so
 * that both see the same load. */
static int scan_remeasure(scan_run *s, const cb_scan_input *in, cb_scan_verdict *v, int from,
                          int to)
{
    engine *e = s->e;
    int n = to - from;
    cb_scan_remeasure *what = calloc(2 * (size_t)n + 1, sizeof *what);
    /* needs[2i]: candidate i is re-measured; [2i+1]: with a control */
    int *needs = calloc(2 * (size_t)n + 1, sizeof *needs);
    int *iters = calloc(2 * (size_t)n + 1, sizeof *iters);   /* each re-measure's */
    if (what == NULL || needs == NULL || iters == NULL)
        cb_status_set(&e->st, CB_EXIT_RUNTIME, "-o scan: out of memory for the verdict");
    if (cb_eng_agree(e) != CB_EXIT_OK) {
        free(what);
        free(needs);
        free(iters);
        return -1;
    }
    int least = (e->p->sizes.iters > 0 ? e->p->sizes.iters : 1) * CB_SCAN_REMEASURE_LONGER;
    for (int i = 0; e->rank == 0 && i < n; i++) {
        cb_scan_finding *f = &v->items[from + i];
        needs[2 * i] = cb_scan_remeasure_of(in, v, f, &what[2 * i]) == 0;
        needs[2 * i + 1] = needs[2 * i] && cb_scan_control_of(in, v, f, &what[2 * i + 1]) == 0;
        for (int k = 2 * i; k <= 2 * i + 1; k++)
            iters[k] = cb_scan_remeasure_iters(s->bytes, cb_scan_figure_of(in, &what[k]), least);
    }
    cb_ctl_bcast(e->comm, needs, (size_t)(2 * n) * sizeof(int), 0);
    cb_ctl_bcast(e->comm, iters, (size_t)(2 * n) * sizeof(int), 0);
    cb_ctl_bcast(e->comm, what, (size_t)2 * (size_t)n * sizeof *what, 0);
    int rc = 0;
    for (int i = 0; rc == 0 && i < n; i++) {
        int cleared = !needs[2 * i];
        for (int k = 0; rc == 0 && !cleared && k < CB_SCAN_REMEASURES; k++) {
            double again = NAN, control = NAN;
            rc = scan_again(s, &what[2 * i], iters[2 * i], &again);
            if (rc == 0 && needs[2 * i + 1])
                rc = scan_again(s, &what[2 * i + 1], iters[2 * i + 1], &control);
            if (rc == 0 && e->rank == 0) {
                cb_scan_recheck(&v->items[from + i], again, control);
                cleared = cb_scan_cleared_for_sure(v, &v->items[from + i]);
            }
            /* rank 0 alone judges; every rank must agree on whether to go on. */
            cb_ctl_bcast(e->comm, &cleared, sizeof(int), 0);
        }
    }
    free(what);
    free(needs);
    free(iters);
    return rc;
}

/* The candidates, their re-measures, then the suspects. A node that read
 * slow in its pairs and cleared alone hid its links from the candidates:
 * those are judged in a second turn, so that a load spike on one node's
 * pairs cannot hide a slow link of that node. */
static int scan_verdict(scan_run *s, const cb_scan_input *in, cb_scan_verdict *v)
{
    engine *e = s->e;
    int n = 0, failed = 0;
    if (e->rank == 0) {
        failed = cb_scan_candidates(in, v) != 0;
        n = failed ? 0 : v->n;
    }
    cb_ctl_bcast(e->comm, &n, sizeof(int), 0);
    if (failed)
        cb_status_set(&e->st, CB_EXIT_RUNTIME, "-o scan: out of memory for the verdict");
    int rc = scan_remeasure(s, in, v, 0, n);
    int more = n;
    if (rc == 0 && e->rank == 0)
        more = n + cb_scan_unmasked_links(in, v);
    cb_ctl_bcast(e->comm, &more, sizeof(int), 0);
    if (rc == 0 && more > n)
        rc = scan_remeasure(s, in, v, n, more);
    if (rc == 0 && e->rank == 0)
        cb_scan_settle(v);
    return rc;
}

/* The slowest rank of node in the node measurement, or -1. */
static int slowest_of(const scan_run *s, int node)
{
    int worst = -1;
    for (int r = 0; r < s->t.nranks; r++)
        if (s->t.node[r] == node && s->node_times != NULL && isfinite(s->node_times[r]) &&
            (worst < 0 || s->node_times[r] > s->node_times[worst]))
            worst = r;
    return worst;
}

static const char *gpu_of(const engine *e, int rank)
{
    if (rank < 0 || e->ranks == NULL || strcmp(e->ranks[rank].device.bus_id, "-") == 0)
        return NULL;
    return e->ranks[rank].device.bus_id;
}

/* The lines of text, each as a note (rank 0). */
static void note_lines(engine *e, char *text)
{
    for (char *line = strtok(text, "\n"); line != NULL; line = strtok(NULL, "\n"))
        cb_eng_note(e, "%s", line);
}

/* A figure for the table: 2 decimals, '-' when unknown (a part of one rank). */
static void figure_text(char *buf, size_t len, double figure)
{
    if (isfinite(figure))
        snprintf(buf, len, "%.2f", figure);
    else
        snprintf(buf, len, "-");
}

/* Rank 0: the figures and the suspects, as notes. */
static void scan_report(scan_run *s, const cb_scan_input *in, const cb_scan_verdict *v,
                        const unsigned long long *wrong_by_rank)
{
    engine *e = s->e;
    const cb_scan_topology *t = &s->t;
    int n = t->nnodes;
    const char **hosts = calloc((size_t)n, sizeof *hosts);
    if (hosts == NULL)
        return;
    for (int a = 0; a < n; a++)
        hosts[a] = s->labels[t->node_first[a]];
    if (in->node_busbw != NULL) {
        cb_eng_note(e, "Nodes: all-reduce inside each node, all nodes at once");
        cb_eng_note(e, "%6s  %-16s %5s  %10s", "node", "host", "ranks", "busbw_GBps");
        for (int a = 0; a < n; a++) {
            char fig[32];
            figure_text(fig, sizeof fig, in->node_busbw[a]);
            cb_eng_note(e, "%6d  %-16s %5d  %10s", a, hosts[a], t->node_size[a], fig);
        }
    }
    if (in->pair_bw != NULL) {
        cb_eng_note(e, "Pairs: send/receive between the ranks of one local index, both ways at "
                "once; %d round%s; GB/s per direction", cb_scan_rounds(n),
             cb_scan_rounds(n) == 1 ? "" : "s");
        char *text = NULL;
        size_t len = 0;
        FILE *mem = open_memstream(&text, &len);
        if (mem != NULL) {
            if (cb_scan_matrix_print(mem, hosts, n, in->pair_bw, "", CB_SCAN_MATRIX_WIDTH))
                for (int a = 0; a < n; a++)
                    for (int b = a + 1; b < n; b++) {
                        char line[256];
                        cb_scan_pair_line(line, sizeof line, "", hosts[a], hosts[b],
                                          in->pair_bw[a * n + b]);
                        fprintf(mem, "%s\n", line);
                    }
            fclose(mem);
            note_lines(e, text);
        }
        free(text);
        if (n < 3)
            cb_eng_note(e, "Pairs: with 2 nodes a slow link cannot be told from a slow node");
    }
    if (in->rail_busbw != NULL) {
        cb_eng_note(e, "Rails: all-reduce across nodes among the ranks of one local index");
        cb_eng_note(e, "%6s  %5s  %10s", "rail", "ranks", "busbw_GBps");
        for (int l = 0; l < in->nrails; l++) {
            char fig[32];
            figure_text(fig, sizeof fig, in->rail_busbw[l]);
            cb_eng_note(e, "%6d  %5d  %10s", l, cb_scan_rail_size(t, l), fig);
        }
    }
    static const char *const reasons[] = {"node_figure", "pairs", "wrong", "link", "rail"};
    cb_scan_suspect *sus = calloc((size_t)v->n + 1, sizeof *sus);
    for (int i = 0; i < v->n; i++) {
        const cb_scan_finding *f = &v->items[i];
        const char *host_a = f->reason == CB_SCAN_RAIL ? NULL : hosts[f->a];
        const char *host_b = f->reason == CB_SCAN_LINK ? hosts[f->b] : NULL;
        int gpu_rank = f->reason == CB_SCAN_NODE_WRONG ? cb_scan_worst_rank(t, f->a, wrong_by_rank)
                       : f->reason == CB_SCAN_LINK || f->reason == CB_SCAN_RAIL ? -1
                                                                               : slowest_of(s, f->a);
        char line[512];
        const char *confidence = cb_scan_confidence_name(cb_scan_confidence(v, f));
        cb_scan_suspect_line(line, sizeof line, f, host_a, host_b, gpu_of(e, gpu_rank),
                             confidence);
        cb_eng_note(e, "%s", strncmp(line, "# ", 2) == 0 ? line + 2 : line);
        if (sus != NULL)
            sus[i] = (cb_scan_suspect){
                .kind = f->reason == CB_SCAN_LINK ? "link" : f->reason == CB_SCAN_RAIL ? "rail"
                                                                                      : "node",
                .reason = reasons[f->reason], .host = host_a, .peer_host = host_b,
                .gpu = gpu_of(e, gpu_rank), .rail = f->reason == CB_SCAN_RAIL ? f->a : -1,
                .figure = f->figure, .first = f->first, .again = f->again,
                .median = f->median, .ratio = f->ratio, .wrong = f->wrong,
                .confidence = confidence, .reference_figures = f->reference_n};
    }
    cb_scan_report rep = {.cycle = e->cycle, .nnodes = n, .hosts = hosts, .bytes = (uint64_t)s->bytes,
                          .threshold = e->p->scan.scan_threshold, .node_bw = in->node_busbw,
                          .pair_bw = in->pair_bw, .nrails = in->nrails,
                          .rail_bw = in->rail_busbw, .nsuspects = sus ? v->n : 0,
                          .suspects = sus};
    pthread_mutex_lock(&e->out.lock);
    for (int i = 0; i < e->out.nprinters; i++)
        if (e->out.printers[i]->ops->scan != NULL)
            e->out.printers[i]->ops->scan(e->out.printers[i], &rep);
    pthread_mutex_unlock(&e->out.lock);
    free(sus);
    free(hosts);
}

/* Rank 0: one label per node, told apart where two nodes' would read the
 * same, given to each of the node's ranks. */
static void distinct_labels(scan_run *s)
{
    const cb_scan_topology *t = &s->t;
    char (*nodes)[SCAN_LABEL] = calloc((size_t)t->nnodes + 1, sizeof *nodes);
    if (nodes == NULL)
        return;
    for (int a = 0; a < t->nnodes; a++)
        memcpy(nodes[a], s->labels[t->node_first[a]], SCAN_LABEL);
    cb_scan_distinct_hosts(nodes[0], SCAN_LABEL, t->nnodes);
    for (int r = 0; r < t->nranks; r++)
        memcpy(s->labels[r], nodes[t->node[r]], SCAN_LABEL);
    free(nodes);
}

/* Set up s: the topology from the hosts, the size, the buffers. */
static int scan_setup(scan_run *s)
{
    engine *e = s->e;
    int nranks = e->nranks;
    cb_split_spec node = {.kind = CB_SPLIT_NODE, .text = "node"};
    int key = cb_eng_spec_color(e, &node, "-o scan", e->comm);
    if (cb_eng_agree(e) != CB_EXIT_OK)
        return -1;
    int *keys = malloc((size_t)nranks * sizeof *keys);
    char label[SCAN_LABEL];
    snprintf(label, sizeof label, "%s", e->host);
    size_t bytes = e->nsizes > 0 ? (size_t)e->sizes[e->nsizes - 1] : 0;
    if (bytes > e->mem.buffer_bytes)
        bytes = e->mem.buffer_bytes;
    s->count = bytes / sizeof(float);
    s->bytes = (double)(s->count * sizeof(float));
    s->host_buf = malloc(s->count * sizeof(float) + 1);
    if (e->rank == 0) {
        s->times = calloc((size_t)nranks, sizeof *s->times);
        s->node_times = calloc((size_t)nranks, sizeof *s->node_times);
        s->labels = calloc((size_t)nranks, sizeof *s->labels);
    }
    int ok = keys != NULL && s->host_buf != NULL &&
             (e->rank != 0 || (s->times && s->node_times && s->labels));
    if (!ok)
        cb_status_set(&e->st, CB_EXIT_RUNTIME, "-o scan: out of memory");
    else if (s->count == 0)
        cb_status_set(&e->st, CB_EXIT_USAGE, "-o scan: the largest size (-e) holds no float");
    if (cb_eng_agree(e) != CB_EXIT_OK) {
        free(keys);
        return -1;
    }
    cb_ctl_allgather(e->comm, &key, sizeof(int), keys);
    cb_ctl_gather(e->comm, label, (size_t)SCAN_LABEL, s->labels, 0);
    ok = cb_scan_topology_init(&s->t, keys, nranks) == 0;
    free(keys);
    if (!ok)
        cb_status_set(&e->st, CB_EXIT_RUNTIME, "-o scan: out of memory for the topology");
    else if (e->rank == 0)
        distinct_labels(s);
    return cb_eng_agree(e) == CB_EXIT_OK ? 0 : -1;
}

static void scan_free(scan_run *s)
{
    cb_scan_topology_free(&s->t);
    free(s->host_buf);
    free(s->times);
    free(s->node_times);
    free(s->labels);
}

/* Measure the parts, then settle the verdict; every rank. */
static int scan_measure_all(scan_run *s, cb_scan_verdict *v, int *suspects)
{
    engine *e = s->e;
    const cb_scan_topology *t = &s->t;
    int n = t->nnodes, parts = e->p->scan.parts, rank = e->rank;
    double *node_bw = calloc((size_t)n, sizeof *node_bw);
    double *pair_bw = calloc((size_t)n * n, sizeof *pair_bw);
    double *rail_bw = calloc((size_t)t->max_local, sizeof *rail_bw);
    unsigned long long *wrong_rank = calloc((size_t)t->nranks, sizeof *wrong_rank);
    unsigned long long *wrong_node = calloc((size_t)n, sizeof *wrong_node);
    int rc = 0;
    if (!node_bw || !pair_bw || !rail_bw || !wrong_rank || !wrong_node)
        cb_status_set(&e->st, CB_EXIT_RUNTIME, "-o scan: out of memory for the figures");
    if (cb_eng_agree(e) != CB_EXIT_OK)
        rc = -1;
    for (int i = 0; rc == 0 && i < n * n; i++)
        pair_bw[i] = NAN;
    /* Said before measuring: a run that times out in the scan shows it began. */
    cb_eng_note(e, "Health scan: %d node%s, %zu B per rank, float sum, -n %d -w %d, suspect below "
            "%.2f x the median", n, cb_plural(n), s->count * sizeof(float), e->p->sizes.iters, e->p->sizes.warmup,
         e->p->scan.scan_threshold);
    if (rc == 0 && (parts & CB_SCAN_NODES)) {
        rc = scan_measure(s, cb_scan_node_color(t, rank), -1, 1, "nodes");
        if (rc == 0 && rank == 0) {
            cb_scan_node_figures(t, s->bytes, s->times, node_bw);
            memcpy(s->node_times, s->times, (size_t)t->nranks * sizeof *s->times);
            for (int a = 0; a < n; a++)
                scan_row(s, "node", SPAN_NODE, a, -1, -1, node_bw[a]);
        }
    }
    if (rc == 0 && (parts & CB_SCAN_PAIRS))
        rc = scan_pairs(s, pair_bw);
    if (rc == 0 && (parts & CB_SCAN_RAILS)) {
        rc = scan_measure(s, cb_scan_rail_color(t, rank), -1, 1, "rails");
        if (rc == 0 && rank == 0) {
            cb_scan_rail_figures(t, s->bytes, s->times, rail_bw);
            for (int l = 0; l < t->max_local; l++)
                scan_row(s, "rail", SPAN_RAIL, l, -1, -1, rail_bw[l]);
        }
    }
    if (rc == 0) {
        cb_ctl_gather(e->comm, &s->wrong_mine, sizeof(unsigned long long), wrong_rank, 0);
        if (rank == 0)
            cb_scan_wrong_by_node(t, wrong_rank, wrong_node);
        cb_scan_input in = {.nnodes = n,
                            .node_busbw = (parts & CB_SCAN_NODES) ? node_bw : NULL,
                            .pair_bw = (parts & CB_SCAN_PAIRS) ? pair_bw : NULL,
                            .nrails = t->max_local,
                            .rail_busbw = (parts & CB_SCAN_RAILS) ? rail_bw : NULL,
                            .wrong = wrong_node,
                            .threshold = e->p->scan.scan_threshold};
        rc = scan_verdict(s, &in, v);
        if (rc == 0 && rank == 0) {
            scan_report(s, &in, v, wrong_rank);
            *suspects = v->n;
        }
    }
    free(node_bw);
    free(pair_bw);
    free(rail_bw);
    free(wrong_rank);
    free(wrong_node);
    return rc;
}

/* The feature's state: on where -o names the scan. */
typedef struct scan_feature {
    int scans;   /* cycles scanned so far */
} scan_feature;

static void *scan_feature_setup(engine *e)
{
    if (e->p->scan.parts == 0)
        return NULL;
    scan_feature *f = calloc(1, sizeof *f);
    if (f == NULL)
        cb_status_set(&e->st, CB_EXIT_RUNTIME, "out of memory for -o scan");
    return f;
}

static void scan_feature_teardown(engine *e, void *state)
{
    (void)e;
    free(state);
}

/* One cycle's scan, after the cycle's collectives (-o names both kinds). */
static int scan_cycle_run(engine *e, void *state)
{
    scan_feature *f = state;
    f->scans++;
    scan_run s = {.e = e};
    cb_scan_verdict v = {0};
    int suspects = 0;
    double start = cb_ctl_now();
    if (e->ops->split == NULL || e->ops->coll.sendrecv == NULL) {
        cb_eng_note(e, "-o scan: the %s backend has no sub-groups or send/receive: scan skipped",
             e->ops->name);
        return e->st.code;
    }
    if (scan_setup(&s) == 0) {
        if (s.t.nnodes < 2)
            cb_eng_note(e, "-o scan: 1 node (hosts as NCCL_HOSTID or the machine name tell "
                    "them apart), so there is nothing to compare: scan skipped");
        else if (scan_measure_all(&s, &v, &suspects) == 0) {
            /* Wrong elements count as in any collective (exit 7); suspects
             * make the run fail below a performance threshold (exit 8). */
            unsigned long long wrong = 0;
            cb_ctl_allreduce(e->comm, &s.wrong_mine, &wrong, 1, CB_CTL_U64, CB_CTL_SUM);
            e->sum.wrong += wrong;
            cb_ctl_bcast(e->comm, &suspects, sizeof(int), 0);
            if (suspects > 0)
                e->slow = 1;
            else
                cb_eng_note(e, "No suspects");
            e->sum.scan_suspects += suspects;
            cb_eng_note(e, "Health scan took %.2f s (%d measurement%s and re-measures)",
                 cb_ctl_now() - start, s.measurements, cb_plural(s.measurements));
        }
    }
    if (e->rank == 0)
        cb_scan_verdict_free(&v);
    scan_free(&s);
    return e->st.code;
}

const cb_eng_feature cb_eng_feature_scan = {
    .name = "-o scan",
    .setup = scan_feature_setup,
    .cycle_run = scan_cycle_run,
    .teardown = scan_feature_teardown,
};
