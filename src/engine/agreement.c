/* Agreement on failures, and notes for the reader. */
#include "engine_int.h"

/* Every rank learns of any rank's failure, or of a SIGINT or SIGTERM that
 * any rank received: all stop at the same step. */
int eng_agree(engine *e)
{
    /* Reaching an agreement is progress: every rank got this far. */
    cb_watchdog_tick(&e->watch);
    int sig = cb_signals_pending();
    if (sig != 0)
        cb_status_set(&e->st, sig == SIGINT ? CB_EXIT_SIGINT : CB_EXIT_SIGTERM,
                      "interrupted by %s: stopped after the measurement in progress",
                      sig == SIGINT ? "SIGINT" : "SIGTERM");
    return cb_status_agree(e->comm, &e->st);
}

/* A line for the reader, in the table. */
void eng_note(engine *e, const char *fmt, ...)
{
    if (e->rank != 0)
        return;
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    eng_printers_note(e, text);
}
