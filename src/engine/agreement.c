/* Agreement on failures. */
#include "engine_int.h"

/* Every rank learns of any rank's failure, or of a SIGINT or SIGTERM that
 * any rank received: all stop at the same step. */
int cb_eng_agree(engine *e)
{
    /* Reaching an agreement is progress: every rank got this far. */
    cb_watchdog_tick(&e->safety.watch);
    int sig = cb_signals_pending();
    if (sig != 0)
        cb_status_set(&e->st, sig == SIGINT ? CB_EXIT_SIGINT : CB_EXIT_SIGTERM,
                      "interrupted by %s: stopped after the measurement in progress",
                      sig == SIGINT ? "SIGINT" : "SIGTERM");
    int code = cb_status_agree(e->comm, &e->st);
    /* Every rank now heads for its end, and a later agreement is no longer
     * a collective step: a rank that leaves first is not dead. */
    if (code != CB_EXIT_OK)
        cb_watchdog_set_lost(&e->safety.watch, NULL, NULL);
    return code;
}
