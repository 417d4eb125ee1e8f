/* -N/--cycles: the whole run repeated: a cycle's collectives, then what
 * features measure their own way (the health scan, cycle_run); the
 * features hear of each cycle's end and of the last (the tally of wrong
 * and unrepeatable output is tally.c's). */
#include "engine_int.h"

void cb_eng_run_cycles(engine *e)
{
    const cb_params *p = e->p;
    int cycles_run = 0;
    for (e->cycle = 1; p->sizes.cycles == 0 || e->cycle <= p->sizes.cycles; e->cycle++) {
        if (p->sizes.cycles != 1)
            cb_eng_note(e, "Cycle %d%s", e->cycle, p->sizes.cycles == 0 ? " (until stopped)" : "");
        int rc = cb_eng_run_collectives(e);
        int own_runs = cb_eng_features_cycle_runs(e);
        /* Every row skipped (a collective, type, reduction or layout the
         * backend does not run; the notes say which): nothing measured is a
         * usage error, as is a size range in which nothing fits. Rank 0
         * counts the rows; cb_eng_agree() below stops the others with it. */
        if (rc == CB_EXIT_OK && own_runs == 0 && e->cycle == 1 && e->rank == 0 &&
            e->sum.results == 0)
            cb_status_set(&e->st, CB_EXIT_USAGE, "nothing was measured: the %s backend skipped "
                          "every collective, type and reduction selected (see the notes)",
                          e->ops->name);
        if (rc == CB_EXIT_OK && own_runs > 0)
            rc = cb_eng_features_cycle_run(e);
        cb_eng_features_cycle_end(e);
        cycles_run++;
        /* A whole cycle: --prom's file shows it from now on. */
        if (rc == CB_EXIT_OK && e->st.code == CB_EXIT_OK && e->rank == 0)
            cb_eng_printers_cycle_end(e);
        /* A signal between cycles stops here, with whole cycles only. */
        if (rc != CB_EXIT_OK || cb_eng_agree(e) != CB_EXIT_OK)
            break;
    }
    cb_eng_features_cycles_done(e, cycles_run);
}
