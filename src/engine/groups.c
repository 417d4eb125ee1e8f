/* --split groups: forming them, describing them, and printing their results together. */
#include "common/format.h"
#include "engine_int.h"

/* This rank's colour under spec (option names it in messages) among the
 * ranks of comm, collective over comm: node gives each host's lowest rank
 * (hosts as NCCL counts them, see cb_sysinfo_host_comm); -1 with the status
 * set on a colour list that does not fit comm, or out of memory. */
int cb_eng_spec_color(engine *e, const cb_split_spec *spec, const char *option, cb_ctl *comm)
{
    int rank = comm->rank, size = comm->size;
    if (spec->kind != CB_SPLIT_NODE) {
        char err[CB_MSGLEN];
        int color = cb_split_color(spec, option, rank, size, err, sizeof err);
        if (color < 0)
            cb_status_set(&e->st, CB_EXIT_USAGE, "%s", err);
        return color;
    }
    cb_ctl *host;
    int color = rank;
    if (cb_sysinfo_host_comm(comm, rank, &host) != 0) {
        cb_status_set(&e->st, CB_EXIT_RUNTIME, "%s node: out of memory for the host ids",
                      option);
        return -1;
    }
    cb_ctl_allreduce(host, CB_CTL_IN_PLACE, &color, 1, CB_CTL_INT, CB_CTL_MIN);
    cb_ctl_free(&host);
    return color;
}

void cb_eng_groups_init(engine *e, cb_ctl *comm)
{
    e->groups.gcomm = comm;   /* until cb_eng_split_groups */
    e->groups.grank = e->rank;
    e->groups.gsize = e->groups.min_gsize = e->nranks;
}

void cb_eng_groups_free(engine *e)
{
    free(e->groups.gmembers);
    free(e->groups.leaders);
    free(e->groups.group_hosts);
    if (e->groups.gcomm != e->comm && e->groups.gcomm != NULL)
        cb_ctl_free(&e->groups.gcomm);
}

/* -r: every group measured must have the root, so the smallest decides.
 * Checked here only, where the groups are known (--split node's only at
 * run time); the same on every rank, as min_gsize is agreed. */
static void check_root(engine *e)
{
    const cb_params *p = e->p;
    if (p->sizes.root < e->groups.min_gsize)
        return;
    if (p->sizes.split.kind == CB_SPLIT_NONE)
        cb_status_set(&e->st, CB_EXIT_USAGE,
                      "-r: root %d is not a rank of this run: with %d rank%s the roots are 0 "
                      "to %d", p->sizes.root, e->nranks, e->nranks == 1 ? "" : "s", e->nranks - 1);
    else
        cb_status_set(&e->st, CB_EXIT_USAGE,
                      "-r: root %d is not a rank of every --split %s group: the smallest has %d "
                      "rank%s", p->sizes.root, p->sizes.split.text, e->groups.min_gsize,
                      e->groups.min_gsize == 1 ? "" : "s");
}

/* --split: this rank's group communicator, the group numbers (in the order
 * of each group's lowest rank) and the members each group's rank 0 keeps. */
void cb_eng_split_groups(engine *e)
{
    const cb_params *p = e->p;
    e->groups.gcomm = e->comm;
    e->groups.grank = e->rank;
    e->groups.gsize = e->nranks;
    e->groups.group = 0;
    e->groups.ngroups = 1;
    if (p->sizes.split.kind != CB_SPLIT_NONE) {
        /* cb_params_check_ranks has checked the spec against the rank count. */
        int color = cb_eng_spec_color(e, &p->sizes.split, "--split", e->comm);
        cb_ctl_split(e->comm, color < 0 ? 0 : color, e->rank, &e->groups.gcomm);
    }
    e->groups.grank = (e->groups.gcomm)->rank;
    e->groups.gsize = (e->groups.gcomm)->size;
    cb_ctl_allreduce(e->comm, &e->groups.gsize, &e->groups.min_gsize, 1, CB_CTL_INT, CB_CTL_MIN);
    int *lead = malloc((size_t)e->nranks * sizeof *lead);
    e->groups.leaders = malloc((size_t)e->nranks * sizeof *e->groups.leaders);
    e->groups.gmembers = malloc((size_t)e->groups.gsize * sizeof *e->groups.gmembers);
    if (lead == NULL || e->groups.leaders == NULL || e->groups.gmembers == NULL) {
        cb_status_set(&e->st, CB_EXIT_RUNTIME, "out of memory for %d group records", e->nranks);
        free(lead);
        return;
    }
    int leader = e->rank, is_leader = e->groups.grank == 0;
    cb_ctl_bcast(e->groups.gcomm, &leader, sizeof(int), 0);
    cb_ctl_gather(e->groups.gcomm, &e->rank, sizeof(int), e->groups.gmembers, 0);
    cb_ctl_allgather(e->comm, &is_leader, sizeof(int), lead);
    e->groups.ngroups = 0;
    for (int r = 0; r < e->nranks; r++)
        if (lead[r]) {
            if (r == leader)
                e->groups.group = e->groups.ngroups;
            e->groups.leaders[e->groups.ngroups++] = r;
        }
    free(lead);
    cb_eng_pending_alloc(e);
    check_root(e);
}

/* Group g's ranks among n as "0,2,4" (",..." once the text is full) into
 * list; returns how many there are. */
static int group_rank_list(const int *groups, int n, int g, char *list, size_t size)
{
    size_t used = 0;
    int members = 0;
    list[0] = '\0';
    for (int r = 0; r < n; r++) {
        if (groups[r] != g)
            continue;
        members++;
        if (used + 16 < size)
            used += (size_t)snprintf(list + used, size - used, "%s%d", used ? "," : "", r);
        else if (used + 4 < size && list[used - 1] != '.')
            used += (size_t)snprintf(list + used, size - used, ",...");
    }
    return members;
}

/* Preamble lines: the groups that color makes of comm's ranks (numbered in
 * the order of their lowest rank) and each group's ranks of comm, printed
 * by rank 0 when it is comm's rank 0. Collective over comm. */
void cb_eng_note_groups(engine *e, cb_ctl *comm, const char *what, const char *after,
                 int color)
{
    int crank = comm->rank, csize = comm->size;
    int *colors = crank == 0 ? malloc((size_t)csize * sizeof *colors) : NULL;
    int *groups = crank == 0 ? malloc((size_t)csize * sizeof *groups) : NULL;
    int ok = crank != 0 || (colors != NULL && groups != NULL);
    cb_ctl_bcast(comm, &ok, sizeof(int), 0);
    if (ok)
        cb_ctl_gather(comm, &color, sizeof(int), colors, 0);
    if (!ok || crank != 0 || e->rank != 0) {
        free(colors);
        free(groups);
        return;
    }
    int ngroups = 0;
    for (int r = 0; r < csize; r++) {
        groups[r] = -1;
        for (int q = 0; q < r && groups[r] < 0; q++)
            if (colors[q] == colors[r])
                groups[r] = groups[q];
        if (groups[r] < 0)
            groups[r] = ngroups++;
    }
    cb_eng_note(e, "%s: %d group%s%s", what, ngroups, ngroups == 1 ? "" : "s", after);
    for (int g = 0; g < ngroups; g++) {
        char list[400];
        int members = group_rank_list(groups, csize, g, list, sizeof list);
        cb_eng_note(e, "group %d: %d rank%s: %s", g, members, members == 1 ? "" : "s", list);
    }
    free(colors);
    free(groups);
}

/* " on host h1", or " on hosts h1, h2" (each once, in rank order): where
 * the ranks of group g (numbered in groups[]) of labels[] run. Returns
 * whether they share one host, whose label goes to one. */
static int group_hosts_text(const char *labels, const int *groups, int n, int g, char *text,
                            size_t len, char *one, size_t one_len)
{
    int distinct = 0, cut = 0;
    size_t used = 0;
    text[0] = '\0';
    for (int r = 0; r < n; r++) {
        if (groups[r] != g)
            continue;
        const char *label = labels + (size_t)r * CB_HOSTLEN;
        int seen = 0;
        for (int q = 0; q < r && !seen; q++)
            seen = groups[q] == g && strcmp(labels + (size_t)q * CB_HOSTLEN, label) == 0;
        if (seen)
            continue;
        if (distinct++ == 0)
            snprintf(one, one_len, "%s", label);
        if (used + strlen(label) + 4 < len)
            used += (size_t)snprintf(text + used, len - used, "%s%s", used ? ", " : "", label);
        else if (used + 5 < len && !cut++)
            used += (size_t)snprintf(text + used, len - used, "%s...", used ? ", " : "");
    }
    char list[256];
    snprintf(list, sizeof list, "%s", text);
    snprintf(text, len, " on host%s %s", distinct == 1 ? "" : "s", list);
    return distinct == 1;
}

/* The preamble's lines for --split: each group, its ranks and their hosts
 * (NCCL_HOSTID where set, as --split node tells hosts apart); rank 0 keeps
 * each group's host for its rows, "" for a group on several. */
void cb_eng_describe_groups(engine *e)
{
    if (e->p->sizes.split.kind == CB_SPLIT_NONE)
        return;
    char mine[CB_HOSTLEN];
    snprintf(mine, sizeof mine, "%s", e->host);
    char *labels = NULL;
    int *groups = NULL;
    if (e->rank == 0) {
        labels = calloc((size_t)e->nranks, CB_HOSTLEN);
        groups = calloc((size_t)e->nranks, sizeof *groups);
        e->groups.group_hosts = calloc((size_t)e->groups.ngroups, CB_HOSTLEN);
    }
    int ok = e->rank != 0 || (labels != NULL && groups != NULL && e->groups.group_hosts != NULL);
    cb_ctl_bcast(e->comm, &ok, sizeof(int), 0);
    if (ok) {
        cb_ctl_gather(e->comm, mine, (size_t)CB_HOSTLEN, labels, 0);
        cb_ctl_gather(e->comm, &e->groups.group, sizeof(int), groups, 0);
    }
    char what[256];
    snprintf(what, sizeof what, "split %s", e->p->sizes.split.text);
    int n = e->groups.ngroups;
    cb_eng_note(e, "%s: %d group%s measured at once", what, n, n == 1 ? "" : "s");
    for (int g = 0; ok && e->rank == 0 && g < e->groups.ngroups; g++) {
        char list[400], where[300], one[CB_HOSTLEN] = "";
        int members = group_rank_list(groups, e->nranks, g, list, sizeof list);
        if (group_hosts_text(labels, groups, e->nranks, g, where, sizeof where, one, sizeof one))
            snprintf(e->groups.group_hosts + (size_t)g * CB_HOSTLEN, CB_HOSTLEN, "%s", one);
        cb_eng_note(e, "group %d: %d rank%s: %s%s", g, members, members == 1 ? "" : "s", list,
                    where);
    }
    free(labels);
    free(groups);
}

/* The line under a measurement of every group: the slowest group's time
 * and the bus bandwidth of all groups together. */
static void aggregate_note(engine *e, const cb_result *rows, const char *placement)
{
    double slowest = 0, busbw = 0;
    for (int g = 0; g < e->groups.ngroups; g++) {
        if (rows[g].seconds > slowest)
            slowest = rows[g].seconds;
        busbw += rows[g].busbw;
    }
    cb_eng_note(e, "%s%d group%s, %llu B %s: slowest group %.2f us, busbw summed over groups "
             "%.2f GB/s", e->groups.ngroups == 1 ? "" : "all ", e->groups.ngroups,
             cb_plural(e->groups.ngroups), (unsigned long long)rows[0].bytes, placement,
             slowest * 1e6, busbw);
}

#define CB_SPLIT_TAG 0x5b17

/* --split: each group's rank 0 sends its result to rank 0, which prints one
 * row per group (out-of-place and in-place halves together) and an
 * aggregate line; the wrong counts of every group add up on every rank. */
int cb_eng_emit_split(engine *e, const cb_collective *coll, cb_result *res, int slowest_rank,
               int last_half)
{
    unsigned long long mine[2] = {e->groups.grank == 0 ? res->wrong : 0,
                                  e->groups.grank == 0 ? res->repeat.unrepeatable : 0};
    unsigned long long total[2] = {0, 0};
    cb_ctl_allreduce(e->comm, mine, total, 2, CB_CTL_U64, CB_CTL_SUM);
    e->sum.wrong += total[0];
    e->sum.unrepeatable += total[1];
    struct {
        cb_result res;
        int slowest_rank;
    } msg;
    memset(&msg, 0, sizeof msg);
    msg.res = *res;
    /* Pointers mean nothing in another process; rank 0 sets them again. */
    msg.res.collective = NULL;
    msg.res.rank_times = NULL;
    msg.res.rank_samples = NULL;
    msg.res.impl = NULL;
    msg.slowest_rank = slowest_rank;
    if (e->rank != 0) {
        if (e->groups.grank == 0)
            cb_ctl_send(e->comm, &msg, sizeof msg, 0, CB_SPLIT_TAG);
        return cb_eng_agree(e);
    }
    cb_result *rows = calloc((size_t)e->groups.ngroups, sizeof *rows);
    if (rows == NULL)
        cb_status_set(&e->st, CB_EXIT_RUNTIME, "out of memory for %d group results",
                      e->groups.ngroups);
    for (int g = 0; g < e->groups.ngroups; g++) {
        if (g != e->groups.group)
            cb_ctl_recv(e->comm, &msg, sizeof msg, e->groups.leaders[g], CB_SPLIT_TAG);
        else {
            msg.res = *res;
            msg.slowest_rank = slowest_rank;
        }
        msg.res.collective = coll;
        msg.res.impl = e->now.impl;   /* every rank resolved --nccl-impl alike */
        msg.res.rank_times = NULL;
        msg.res.rank_samples = NULL;
        snprintf(msg.res.slowest_host, sizeof msg.res.slowest_host, "%s",
                 e->ranks[msg.slowest_rank].host);
        if (e->groups.group_hosts != NULL)
            snprintf(msg.res.split.group_host, sizeof msg.res.split.group_host, "%s",
                     e->groups.group_hosts + (size_t)g * CB_HOSTLEN);
        if (rows != NULL)
            rows[g] = msg.res;
    }
    if (rows != NULL) {
        /* The out-of-place rows of the groups: these, or those that wait. */
        const cb_result *out_of_place = res->in_place ? e->out.pending : rows;
        int row_done = res->in_place || last_half;
        cb_eng_emit_results(e, rows, e->groups.ngroups, last_half);
        if (row_done)
            aggregate_note(e, out_of_place, "out-of-place");
        if (res->in_place)
            aggregate_note(e, rows, "in-place");
    }
    free(rows);
    return cb_eng_agree(e);
}
