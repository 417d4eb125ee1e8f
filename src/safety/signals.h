/*
 * SIGINT and SIGTERM: the first one asks the engine to stop after the
 * measurement in progress (every rank agrees on it at the next step), so the
 * files stay whole and the footer is printed; a second one ends the process
 * at once (the handler is reset after the first).
 */
#ifndef CB_SIGNALS_H
#define CB_SIGNALS_H

/* Install the handlers. */
void cb_signals_install(void);

/* The signal received (SIGINT or SIGTERM), or 0. */
int cb_signals_pending(void);

#endif
