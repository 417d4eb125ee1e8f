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
    return cb_status_agree(e->comm, &e->st);
}
