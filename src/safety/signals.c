#include "safety/signals.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The only mutable global state: a signal handler can reach no other.
 * Written only by the handler (and the restore below, after it ran),
 * read by the engine. */
static volatile sig_atomic_t received_signal;
/* Each standard stream's file status flags before the handler made it
 * non-blocking, -1 where it did not. */
static volatile sig_atomic_t flags_before[2] = {-1, -1};
/* When the first signal came (CLOCK_MONOTONIC, in milliseconds), 0 before. */
static volatile sig_atomic_t first_ms;

/* A launcher's one stop may reach a rank twice at once: torchrun forwards
 * SIGTERM twice within 2 ms, and a SIGTERM to the process group reaches a
 * -g rank from the shell and again from its parent. Signals this close to
 * the first are that same stop; only a later one forces the exit. */
#define CB_SIGNAL_WINDOW_MS 1000

/* A launcher that ends a job (Open MPI's mpirun: SIGTERM, then SIGKILL a
 * second later) may stop reading the ranks' output at that moment: a rank
 * blocked writing the table into a full pipe would never reach its JSON
 * file. So a pipe or socket on stdout or stderr turns non-blocking: the
 * write in progress returns (no SA_RESTART) and the next fail at once. */
static void unblock_stream(int fd, int slot)
{
    struct stat st;
    if (flags_before[slot] >= 0 || fstat(fd, &st) != 0 ||
        !(S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))
        return;
    int flags = fcntl(fd, F_GETFL);
    if (flags >= 0 && fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0)
        flags_before[slot] = flags;
}

/* Now in milliseconds, from a handler (clock_gettime is async-signal-safe);
 * at least 1 so that 0 stays "no signal yet". */
static long monotonic_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    long ms = (long)(ts.tv_sec % 1000000) * 1000 + ts.tv_nsec / 1000000;
    return ms > 0 ? ms : 1;
}

static void on_signal(int sig)
{
    int saved = errno;
    long now = monotonic_ms();
    if (first_ms != 0) {
        long since = now - (long)first_ms;   /* < 0: the clock wrapped */
        if (since >= 0 && since < CB_SIGNAL_WINDOW_MS) {
            errno = saved;
            return;   /* the same stop, delivered twice */
        }
        signal(sig, SIG_DFL);   /* a later one: the default action, now */
        raise(sig);
        errno = saved;
        return;
    }
    first_ms = (sig_atomic_t)now;
    received_signal = sig;
    unblock_stream(STDOUT_FILENO, 0);
    unblock_stream(STDERR_FILENO, 1);
    errno = saved;
}

void cb_signals_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    /* A second signal more than CB_SIGNAL_WINDOW_MS after the first takes
     * the default action (on_signal). No SA_RESTART: a write blocked on a
     * pipe must return (see above). */
    sa.sa_flags = 0;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

int cb_signals_pending(void)
{
    return received_signal;
}

void cb_signals_restore_streams(void)
{
    static const int fds[2] = {STDOUT_FILENO, STDERR_FILENO};
    for (int i = 0; i < 2; i++)
        if (flags_before[i] >= 0) {
            (void)fcntl(fds[i], F_SETFL, (int)flags_before[i]);
            flags_before[i] = -1;
        }
}

/* The guard's status and line, made before MPI_Finalize: a handler may
 * only write and exit. */
static volatile sig_atomic_t finalize_code;
static char finalize_line[192];
static volatile sig_atomic_t finalize_line_len;

static void on_finalize_crash(int sig)
{
    (void)sig;
    ssize_t wrote = write(STDERR_FILENO, finalize_line, (size_t)finalize_line_len);
    (void)wrote;
    _exit(finalize_code);
}

void cb_signals_guard_finalize(int code, int rank)
{
    int len = snprintf(finalize_line, sizeof finalize_line,
                       "nccl-collbench note: rank %d: the MPI library crashed in MPI_Finalize, after "
                       "every output was written; exiting with the run's status %d\n",
                       rank, code);
    finalize_line_len = len > 0 && (size_t)len < sizeof finalize_line ? len : 0;
    finalize_code = code;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_finalize_crash;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
}
