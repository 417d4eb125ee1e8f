/* -N/--cycles: the whole run repeated, and the wrong elements and (-B)
 * unrepeatable launches each rank saw tallied across the cycles, so that an
 * intermittent corruption shows the host and GPU it lives on. */
#include "engine_int.h"

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
    eng_note(e, "Suspect host: %s (%llu wrong elements and %llu unrepeatable launches on its ranks "
            "over %d cycle%s)", e->sum.suspect_host, wrong, unrepeatable, cycles_run,
         cycles_run == 1 ? "" : "s");
}

/* Rank 0: a note per rank that saw wrong elements or (-B) unrepeatable
 * launches, after the last cycle, and the suspect host. */
static void report_tally(engine *e, int cycles_run)
{
    unsigned long long mine[TALLY_FIELDS] = {e->wrong_mine, (unsigned long long)e->wrong_cycles,
                                             e->unrepeatable_mine,
                                             (unsigned long long)e->unrepeatable_cycles};
    unsigned long long *all = NULL;
    char label[TALLY_LABEL], *labels = NULL;
    int ok = 1;
    snprintf(label, sizeof label, "%s", e->host);
    if (e->rank == 0) {
        all = calloc((size_t)e->nranks * TALLY_FIELDS, sizeof *all);
        labels = calloc((size_t)e->nranks, TALLY_LABEL);
        ok = all != NULL && labels != NULL;
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, e->comm);
    if (ok) {
        MPI_Gather(mine, TALLY_FIELDS, MPI_UNSIGNED_LONG_LONG, all, TALLY_FIELDS,
                   MPI_UNSIGNED_LONG_LONG, 0, e->comm);
        MPI_Gather(label, TALLY_LABEL, MPI_CHAR, labels, TALLY_LABEL, MPI_CHAR, 0, e->comm);
    }
    const char *plural = cycles_run == 1 ? "" : "s";
    for (int r = 0; ok && e->rank == 0 && r < e->nranks; r++) {
        const unsigned long long *t = all + (size_t)r * TALLY_FIELDS;
        const char *host = labels + (size_t)r * TALLY_LABEL;
        const char *gpu = e->ranks != NULL ? e->ranks[r].device.bus_id : "-";
        if (t[0] > 0)
            eng_note(e, "Wrong elements on host %s GPU %s (rank %d): %llu in %llu of %d cycle%s",
                 host, gpu, r, t[0], t[1], cycles_run, plural);
        if (t[2] > 0)
            eng_note(e, "Unrepeatable launches on host %s GPU %s (rank %d): %llu in %llu of %d "
                    "cycle%s", host, gpu, r, t[2], t[3], cycles_run, plural);
    }
    /* The suspect is a verdict across cycles: -N other than 1 only. */
    if (ok && e->rank == 0 && e->p->cycles != 1)
        name_suspect(e, all, labels, cycles_run);
    free(all);
    free(labels);
}

void eng_run_cycles(engine *e)
{
    const cb_params *p = e->p;
    int cycles_run = 0;
    for (e->cycle = 1; p->cycles == 0 || e->cycle <= p->cycles; e->cycle++) {
        if (p->cycles != 1)
            eng_note(e, "Cycle %d%s", e->cycle, p->cycles == 0 ? " (until stopped)" : "");
        e->wrong_this_cycle = 0;
        e->unrepeatable_this_cycle = 0;
        int rc = eng_run_collectives(e);
        /* Every row skipped (a collective, type, reduction or layout the
         * backend does not run; the notes say which): nothing measured is a
         * usage error, as is a size range in which nothing fits. Rank 0
         * counts the rows; eng_agree() below stops the others with it. */
        if (rc == CB_EXIT_OK && p->scan == 0 && e->cycle == 1 && e->rank == 0 &&
            e->sum.results == 0)
            cb_status_set(&e->st, CB_EXIT_USAGE, "nothing was measured: the %s backend skipped "
                          "every collective, type and reduction selected (see the notes)",
                          e->ops->name);
        if (rc == CB_EXIT_OK && p->scan != 0)
            rc = eng_run_scan(e);
        e->wrong_cycles += e->wrong_this_cycle;
        e->unrepeatable_cycles += e->unrepeatable_this_cycle;
        cycles_run++;
        /* A whole cycle: --prom's file shows it from now on. */
        if (rc == CB_EXIT_OK && e->st.code == CB_EXIT_OK && e->rank == 0)
            eng_printers_cycle_end(e);
        /* A signal between cycles stops here, with whole cycles only. */
        if (rc != CB_EXIT_OK || eng_agree(e) != CB_EXIT_OK)
            break;
    }
    report_tally(e, cycles_run);
}
