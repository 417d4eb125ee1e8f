/* Whether what a descriptor carries reaches the person at the terminal,
 * directly or through the launcher that forwards a rank's output. */
#ifndef CB_TERMINAL_H
#define CB_TERMINAL_H

/* 1 when fd ends at this process's controlling terminal: it is that
 * terminal, or it is a pipe read by the parent process (or a
 * pseudo-terminal of the parent's, as Open MPI gives a rank's standard
 * output) whose own fd is, up to CB_TERMINAL_DEPTH launchers up (mpirun;
 * MPICH's proxy, then mpiexec). 0 otherwise, and always without a
 * controlling terminal (cron, batch jobs, containers, ssh without -t) or
 * where /proc cannot tell. Linux only. */
#define CB_TERMINAL_DEPTH 3
int cb_reaches_terminal(int fd);

#endif
