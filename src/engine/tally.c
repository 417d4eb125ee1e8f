/* The -N tally: the wrong elements and (-B) unrepeatable launches each
 * rank saw, counted across the cycles as verification, the scan and -B
 * find them, so that an intermittent corruption shows the host and GPU it
 * lives on. */
#include "engine_int.h"

/* This rank's counts over every cycle, and the cycles with any. */
typedef struct tally_state {
    unsigned long long wrong, unrepeatable;
    int wrong_cycles, unrepeatable_cycles;
    int wrong_now, unrepeatable_now;   /* in the cycle running */
} tally_state;

static void *tally_setup(engine *e)
{
    tally_state *t = calloc(1, sizeof *t);
    if (t == NULL)
        cb_status_set(&e->st, CB_EXIT_RUNTIME, "out of memory for the -N tally");
    return t;
}

static void tally_teardown(engine *e, void *state)
{
    (void)e;
    free(state);
}

static void tally_count(engine *e, void *state, cb_eng_fault kind, unsigned long long n)
{
    (void)e;
    tally_state *t = state;
    if (kind == ENG_FAULT_WRONG) {
        t->wrong += n;
        t->wrong_now |= n > 0;
    } else {
        t->unrepeatable += n;
        t->unrepeatable_now |= n > 0;
    }
}

static void tally_cycle_end(engine *e, void *state)
{
    (void)e;
    tally_state *t = state;
    t->wrong_cycles += t->wrong_now;
    t->unrepeatable_cycles += t->unrepeatable_now;
    t->wrong_now = t->unrepeatable_now = 0;
}

#define TALLY_LABEL 64
#define TALLY_FIELDS 4   /* wrong elements, cycles with any, unrepeatable launches, cycles */

/* Rank 0: the host whose ranks saw wrong or unrepeatable output in the most
 * cycles (summed over its ranks; ties: the most wrong elements and
 * unrepeatable launches), named in a note and the summary. */
static void name_suspect(engine *e, const unsigned long long *all, const char *labels,
                         int cycles_run)
{
    int best = -1;
    unsigned long long best_cycles = 0, best_count = 0, wrong = 0, unrepeatable = 0;
    for (int r = 0; r < e->nranks; r++) {
        const char *host = labels + (size_t)r * TALLY_LABEL;
        unsigned long long cycles = 0, count = 0, w = 0, u = 0;
        int first = 1;
        for (int q = 0; q < e->nranks; q++) {
            if (strcmp(labels + (size_t)q * TALLY_LABEL, host) != 0)
                continue;
            first &= q >= r;   /* each host once, at its lowest rank */
            const unsigned long long *t = all + (size_t)q * TALLY_FIELDS;
            cycles += t[1] + t[3];
            count += t[0] + t[2];
            w += t[0];
            u += t[2];
        }
        if (!first || count == 0)
            continue;
        if (best < 0 || cycles > best_cycles || (cycles == best_cycles && count > best_count)) {
            best = r;
            best_cycles = cycles;
            best_count = count;
            wrong = w;
            unrepeatable = u;
        }
    }
    if (best < 0)
        return;
    snprintf(e->sum.suspect_host, sizeof e->sum.suspect_host, "%s",
             labels + (size_t)best * TALLY_LABEL);
    cb_eng_note(e, "Suspect host: %s (%llu wrong elements and %llu unrepeatable launches on its ranks "
            "over %d cycle%s)", e->sum.suspect_host, wrong, unrepeatable, cycles_run,
         cycles_run == 1 ? "" : "s");
}

/* After the last cycle, on every rank; rank 0: a note per rank that saw
 * wrong elements or (-B) unrepeatable launches, and the suspect host. */
static void tally_cycles_done(engine *e, void *state, int cycles_run)
{
    const tally_state *tally = state;
    unsigned long long mine[TALLY_FIELDS] = {tally->wrong, (unsigned long long)tally->wrong_cycles,
                                             tally->unrepeatable,
                                             (unsigned long long)tally->unrepeatable_cycles};
    unsigned long long *all = NULL;
    char label[TALLY_LABEL], *labels = NULL;
    int ok = 1;
    snprintf(label, sizeof label, "%s", e->host);
    if (e->rank == 0) {
        all = calloc((size_t)e->nranks * TALLY_FIELDS, sizeof *all);
        labels = calloc((size_t)e->nranks, TALLY_LABEL);
        ok = all != NULL && labels != NULL;
    }
    cb_ctl_bcast(e->comm, &ok, sizeof(int), 0);
    if (ok) {
        cb_ctl_gather(e->comm, mine, (size_t)TALLY_FIELDS * sizeof(unsigned long long), all, 0);
        cb_ctl_gather(e->comm, label, (size_t)TALLY_LABEL, labels, 0);
    }
    const char *plural = cycles_run == 1 ? "" : "s";
    for (int r = 0; ok && e->rank == 0 && r < e->nranks; r++) {
        const unsigned long long *t = all + (size_t)r * TALLY_FIELDS;
        const char *host = labels + (size_t)r * TALLY_LABEL;
        const char *gpu = e->ranks != NULL ? e->ranks[r].device.bus_id : "-";
        if (t[0] > 0)
            cb_eng_note(e, "Wrong elements on host %s GPU %s (rank %d): %llu in %llu of %d cycle%s",
                 host, gpu, r, t[0], t[1], cycles_run, plural);
        if (t[2] > 0)
            cb_eng_note(e, "Unrepeatable launches on host %s GPU %s (rank %d): %llu in %llu of %d "
                    "cycle%s", host, gpu, r, t[2], t[3], cycles_run, plural);
    }
    /* The suspect is a verdict across cycles: -N other than 1 only. */
    if (ok && e->rank == 0 && e->p->sizes.cycles != 1)
        name_suspect(e, all, labels, cycles_run);
    free(all);
    free(labels);
}


const cb_eng_feature cb_eng_feature_tally = {
    .name = "-N tally",
    .setup = tally_setup,
    .count = tally_count,
    .cycle_end = tally_cycle_end,
    .cycles_done = tally_cycles_done,
    .teardown = tally_teardown,
};
