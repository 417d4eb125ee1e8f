/* --expect: the facts gathered, the preamble that states them, and each
 * row's expectation and gate (the model itself is src/expect/). */
#include "common/format.h"
#include "engine_int.h"
#include "expect/expect.h"

/* --expect's state: every rank holds the file's rules; rank 0 holds every
 * rank's facts, the expected busbw of each group for the table being
 * measured (auto; gbps 0: none, with why), and counts the rows below
 * --expect-ratio x expected, and a file's rows with and without a rule. */
typedef struct expect_state {
    cb_expect_rank *ranks;
    cb_expect_rules rules;
    cb_expect_figure *figs;
    int groups;
    int below;
    int ruled, unruled;
} expect_state;

static int expect_auto(const cb_expect_params *want)
{
    return want->source != NULL && strcmp(want->source, "auto") == 0;
}

/* The backend moves host memory (MPI): no GPU behind the rank. */
static int runs_in_host_memory(const engine *e)
{
    return e->ranks != NULL && e->ranks[0].device.index < 0;
}

/* A set-up step: every rank reads the file (a bad one is a usage error on
 * every rank) or its links, and rank 0 gathers what every rank found. */
static void *expect_setup(engine *e)
{
    const cb_expect_params *want = &e->p->expect;
    if (want->source == NULL)
        return NULL;
    expect_state *x = calloc(1, sizeof *x);
    if (x == NULL) {
        cb_status_set(&e->st, CB_EXIT_RUNTIME, "out of memory for --expect");
        return NULL;
    }
    char err[CB_MSGLEN];
    if (!expect_auto(want) && cb_expect_rules_load(want->source, &x->rules, err, sizeof err) != 0) {
        cb_status_set(&e->st, CB_EXIT_USAGE, "--expect: %s", err);
        return x;
    }
    cb_device_desc dev;
    memset(&dev, 0, sizeof dev);
    if (e->ops->describe(e->b, &dev) != 0) {
        cb_status_set(&e->st, CB_EXIT_RUNTIME, "%s", e->b->error);
        return x;
    }
    cb_expect_rank *mine = calloc(1, sizeof *mine);
    if (mine == NULL) {
        cb_status_set(&e->st, CB_EXIT_RUNTIME, "out of memory for --expect");
        return x;
    }
    char label[CB_HOSTLEN];
    snprintf(label, sizeof label, "%s", e->host);
    int group = e->p->sizes.split.kind != CB_SPLIT_NONE ? e->groups.group : -1;
    if (expect_auto(want)) {
        cb_expect_read_rank(dev.index >= 0 ? dev.bus_id : NULL, label, group, mine);
    } else {
        /* A file's rules match the host's own name and the GPU model. */
        snprintf(mine->host, sizeof mine->host, "%s", e->host);
        mine->group = group;
        snprintf(mine->gpu.name, sizeof mine->gpu.name, "%.95s", dev.model);
    }
    if (e->rank == 0) {
        x->ranks = calloc((size_t)e->nranks, sizeof *x->ranks);
        x->groups = e->groups.ngroups > 0 ? e->groups.ngroups : 1;
        x->figs = calloc((size_t)x->groups, sizeof *x->figs);
        if (x->ranks == NULL || x->figs == NULL)
            cb_status_set(&e->st, CB_EXIT_RUNTIME, "out of memory for the facts of %d ranks",
                          e->nranks);
    }
    if (cb_eng_agree(e) == CB_EXIT_OK)
        cb_ctl_gather(e->comm, mine, sizeof *mine, x->ranks, 0);
    free(mine);
    return x;
}

/* The preamble: how rows are judged, and every fact the model uses. */
static void expect_preamble(engine *e, void *state)
{
    const expect_state *x = state;
    const cb_expect_params *want = &e->p->expect;
    if (e->rank != 0)
        return;
    if (expect_auto(want)) {
        cb_eng_note(e, "Expectation (--expect auto): each row's expected busbw is the slowest link "
                "class its traffic crosses, from the links below (nccl-collbench(1), EXPECTED "
                "BANDWIDTH); at the largest size, below %g x expected is status 8",
             want->expect_ratio);
        char line[512];
        for (int i = 0; cb_expect_describe(x->ranks, e->nranks, runs_in_host_memory(e), i, line,
                                           sizeof line); i++)
            cb_eng_note(e, "%s", line);
        /* The figures count only the links that are up, at the rate they
         * trained at: a degraded link fails the run on its own. */
        for (int i = 0; cb_expect_link_fault(x->ranks, e->nranks, i, line, sizeof line);
             i++) {
            cb_eng_note(e, "Link fault: %s", line);
            e->sum.link_faults++;
            e->slow = 1;
        }
        return;
    }
    cb_eng_note(e, "Expectation (--expect %s): %d rule%s; a row of a size a rule applies to, below %g "
            "x its GB/s, is status 8", want->source, x->rules.n,
                cb_plural(x->rules.n), want->expect_ratio);
}

/* Rank 0, auto: the figure of each group for the collective of the table
 * beginning, and a note saying how it was found. */
static void expect_table_begin(engine *e, void *state, const cb_collective *coll)
{
    expect_state *x = state;
    if (e->rank != 0 || x->ranks == NULL || !expect_auto(&e->p->expect))
        return;
    int *members = malloc((size_t)e->nranks * sizeof *members);
    if (members == NULL) {
        cb_status_set(&e->st, CB_EXIT_RUNTIME, "out of memory for --expect's groups");
        return;
    }
    int split = e->p->sizes.split.kind != CB_SPLIT_NONE;
    for (int g = 0; g < x->groups; g++) {
        int n = 0;
        for (int r = 0; r < e->nranks; r++)
            if (!split || x->ranks[r].group == g)
                members[n++] = r;
        cb_expect_figure *fig = &x->figs[g];
        cb_expect_auto(x->ranks, members, n, coll->name, runs_in_host_memory(e), fig);
        char group[32] = "";
        if (split)
            snprintf(group, sizeof group, " group %d", g);
        if (fig->gbps > 0)
            cb_eng_note(e, "Expected busbw %s%s: %s", coll->name, group, fig->how);
        else
            cb_eng_note(e, "No expected busbw for %s%s: %s", coll->name, group, fig->how);
    }
    free(members);
}

/* A file's rule for res: the ranks of its group must all match. */
static const cb_expect_rule *rule_of(engine *e, const expect_state *x, const cb_result *res)
{
    const char **models = malloc((size_t)e->nranks * sizeof *models);
    const char **hosts = malloc((size_t)e->nranks * sizeof *hosts);
    const cb_expect_rule *rule = NULL;
    if (models != NULL && hosts != NULL) {
        int n = 0;
        for (int r = 0; r < e->nranks; r++)
            if (res->split.group < 0 || x->ranks[r].group == res->split.group) {
                models[n] = x->ranks[r].gpu.name;
                hosts[n++] = x->ranks[r].host;
            }
        rule = cb_expect_rules_find(&x->rules, models, hosts, n, res->collective->name,
                                    res->bytes);
    } else {
        cb_status_set(&e->st, CB_EXIT_RUNTIME, "out of memory for --expect's rules");
    }
    free(models);
    free(hosts);
    return rule;
}

static void expect_row_before(engine *e, void *state, cb_result *res)
{
    expect_state *x = state;
    res->expected_busbw = 0;
    res->efficiency = 0;
    if (x->ranks == NULL || res->scan.scan_part != NULL ||
        (res->collective->flags & CB_COLL_NO_DATA))
        return;
    if (expect_auto(&e->p->expect)) {
        int g = res->split.group >= 0 ? res->split.group : 0;
        if (g < x->groups)
            res->expected_busbw = x->figs[g].gbps;
    } else {
        const cb_expect_rule *rule = rule_of(e, x, res);
        if (rule != NULL)
            res->expected_busbw = rule->gbps;
        /* Counted per half: the verdict counts rows as it counts figures. */
        if (rule != NULL)
            x->ruled++;
        else
            x->unruled++;
    }
    if (res->expected_busbw > 0)
        res->efficiency = res->busbw / res->expected_busbw;
}

/* auto gates the sweep's largest size only (smaller ones are bound by
 * latency, not links); a file's rule says from which size. */
static void expect_row_after(engine *e, void *state, const char *what, const cb_result *res)
{
    expect_state *x = state;
    if (x->ranks == NULL || res->scan.scan_part != NULL ||
        (res->collective->flags & CB_COLL_NO_DATA))
        return;
    /* auto gates every row of the largest size: one it has no figure for
     * is not checked, and the run must not pass on it. */
    if (expect_auto(&e->p->expect) && e->now.at_largest && !(res->expected_busbw > 0)) {
        int g = res->split.group >= 0 ? res->split.group : 0;
        e->sum.unchecked++;
        cb_eng_note(e, "No expectation: %s: %s", what,
                    g < x->groups ? x->figs[g].how : "no figure for its group");
        return;
    }
    if (!(res->expected_busbw > 0) || (expect_auto(&e->p->expect) && !e->now.at_largest))
        return;
    double ratio = e->p->expect.expect_ratio;
    if (res->busbw >= ratio * res->expected_busbw)
        return;
    e->slow = 1;
    x->below++;
    cb_eng_note(e, "Below expectation: %s busbw %.2f GB/s is %.3f of expected %.*f GB/s "
            "(--expect-ratio %g)", what, res->busbw, res->efficiency,
         cb_expect_digits(res->expected_busbw), res->expected_busbw, ratio);
}

static void expect_finish(engine *e, void *state)
{
    expect_state *x = state;
    /* Under the outputs' lock only from here: the hang report's summary
     * counts the rows below expectation once the run is done. */
    e->sum.below_expectation = x->below;
    if (e->rank != 0 || x->ranks == NULL || expect_auto(&e->p->expect) || x->ruled > 0 ||
        x->unruled == 0)
        return;
    /* The rules name hosts and GPU models: say which the run had. */
    const cb_expect_rank *r0 = &x->ranks[0];
    int hosts = 1, models = 1;
    for (int r = 1; r < e->nranks; r++) {
        hosts += strcmp(x->ranks[r].host, r0->host) != 0;
        models += strcmp(x->ranks[r].gpu.name, r0->gpu.name) != 0;
    }
    e->sum.unchecked += x->unruled;
    cb_eng_note(e, "No expectation: --expect %s: none of its %d rules applies to any row (host "
                "%s%s, GPU model %s%s): nothing was judged", e->p->expect.source, x->rules.n,
                r0->host, hosts > 1 ? " and others" : "", r0->gpu.name[0] ? r0->gpu.name : "none",
                models > 1 ? " and others" : "");
}

static void expect_teardown(engine *e, void *state)
{
    (void)e;
    expect_state *x = state;
    free(x->ranks);
    free(x->figs);
    cb_expect_rules_free(&x->rules);
    free(x);
}

const cb_eng_feature cb_eng_feature_expect = {
    .name = "--expect",
    .setup = expect_setup,
    .preamble = expect_preamble,
    .table_begin = expect_table_begin,
    .row_before = expect_row_before,
    .row_after = expect_row_after,
    .finish = expect_finish,
    .teardown = expect_teardown,
};
