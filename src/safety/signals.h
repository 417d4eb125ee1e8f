/*
 * SIGINT and SIGTERM: the first one asks the engine to stop after the
 * measurement in progress (every rank agrees on it at the next step), so the
 * files stay whole and the footer is printed. Signals within 1 s of the
 * first are the same stop (torchrun sends SIGTERM twice within 2 ms; a
 * signal to a -g job's process group reaches each rank twice); a later one
 * ends the process at once, by the signal's default action. The first also makes a
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

/* Around MPI_Finalize, after every output is written: a SIGSEGV or SIGBUS
 * then (Open MPI 4.1's progress thread can run an event of a component
 * MPI_Finalize has already unloaded) ends the process with code, the
 * run's own status, saying so on stderr, instead of 139. rank names the
 * rank in that line. */
void cb_signals_guard_finalize(int code, int rank);

#endif
