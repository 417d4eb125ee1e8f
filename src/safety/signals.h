/*
 * SIGINT and SIGTERM: the first one asks the engine to stop after the
 * measurement in progress (every rank agrees on it at the next step), so the
 * files stay whole and the footer is printed; a second one ends the process
 * at once (the handler is reset after the first). The first also makes a
 * pipe or socket on stdout or stderr non-blocking (a launcher ending the
 * job may stop reading it), so the output files are finished before
 * anything waits on those streams; cb_signals_restore_streams undoes it.
 */
#ifndef CB_SIGNALS_H
#define CB_SIGNALS_H

/* Install the handlers. */
void cb_signals_install(void);

/* The signal received (SIGINT or SIGTERM), or 0. */
int cb_signals_pending(void);

/* Give stdout and stderr back the blocking mode the handler took away
 * (nothing when it did not): after the output files are finished. */
void cb_signals_restore_streams(void);

#endif
