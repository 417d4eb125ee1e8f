/* -N/--cycles: the whole run repeated, and the wrong elements each rank saw
 * tallied across the cycles, so that an intermittent corruption shows the
 * host and GPU it lives on. */
#include "engine_int.h"

#define TALLY_LABEL 64

/* Rank 0: a note per rank that saw wrong elements, after the last cycle. */
static void report_tally(engine *e, int cycles_run)
{
    unsigned long long mine[2] = {e->wrong_mine, (unsigned long long)e->wrong_cycles};
    unsigned long long *all = NULL;
    char label[TALLY_LABEL], *labels = NULL;
    int ok = 1;
    host_label(e, label, sizeof label);
    if (e->rank == 0) {
        all = calloc((size_t)e->nranks * 2, sizeof *all);
        labels = calloc((size_t)e->nranks, TALLY_LABEL);
        ok = all != NULL && labels != NULL;
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, e->comm);
    if (ok) {
        MPI_Gather(mine, 2, MPI_UNSIGNED_LONG_LONG, all, 2, MPI_UNSIGNED_LONG_LONG, 0, e->comm);
        MPI_Gather(label, TALLY_LABEL, MPI_CHAR, labels, TALLY_LABEL, MPI_CHAR, 0, e->comm);
    }
    for (int r = 0; ok && e->rank == 0 && r < e->nranks; r++) {
        if (all[2 * r] == 0)
            continue;
        const char *gpu = e->ranks != NULL ? e->ranks[r].device.bus_id : "-";
        note(e, "Wrong elements on host %s GPU %s (rank %d): %llu in %llu of %d cycle%s",
             labels + (size_t)r * TALLY_LABEL, gpu, r, all[2 * r], all[2 * r + 1], cycles_run,
             cycles_run == 1 ? "" : "s");
    }
    free(all);
    free(labels);
}

void run_cycles(engine *e)
{
    const cb_params *p = e->p;
    int cycles_run = 0;
    for (e->cycle = 1; p->cycles == 0 || e->cycle <= p->cycles; e->cycle++) {
        if (p->cycles != 1)
            note(e, "Cycle %d%s", e->cycle, p->cycles == 0 ? " (until stopped)" : "");
        e->wrong_this_cycle = 0;
        int rc = run_collectives(e);
        /* Every row skipped (a collective, type, reduction or layout the
         * backend does not run; the notes say which): nothing measured is a
         * usage error, as is a size range in which nothing fits. Rank 0
         * counts the rows; agree() below stops the others with it. */
        if (rc == CB_EXIT_OK && p->scan == 0 && e->cycle == 1 && e->rank == 0 &&
            e->sum.results == 0)
            cb_status_set(&e->st, CB_EXIT_USAGE, "nothing was measured: the %s backend skipped "
                          "every collective, type and reduction selected (see the notes)",
                          e->ops->name);
        if (rc == CB_EXIT_OK && p->scan != 0)
            rc = run_scan(e);
        e->wrong_cycles += e->wrong_this_cycle;
        cycles_run++;
        /* A whole cycle: --prom's file shows it from now on. */
        if (rc == CB_EXIT_OK && e->st.code == CB_EXIT_OK && e->rank == 0)
            printers_cycle_end(e);
        /* A signal between cycles stops here, with whole cycles only. */
        if (rc != CB_EXIT_OK || agree(e) != CB_EXIT_OK)
            break;
    }
    report_tally(e, cycles_run);
}
