/*
 * For make check under MPICH only (tests/support/wrapper.sh preloads it into
 * the ranks that Hydra starts): MPICH's ch4 device waits by polling UCX
 * without ever giving up the processor, so with more ranks than cores a rank
 * that waits burns the time slice its peer needs to send, and the suite
 * crawls past its limits. This wraps ucp_worker_progress, which MPICH calls
 * on every poll: when a poll finds nothing to do, the rank yields, as Open
 * MPI's ranks do with mpi_yield_when_idle; after a run of idle polls, when
 * yielding has not let the peer through (other processes share the cores),
 * it sleeps 20 us instead. Only UCX's events count: a rank whose messages
 * go through MPICH's own shared memory sleeps between polls too, which slows
 * them but never changes a result. The program itself never depends on it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>
#include <time.h>

typedef unsigned (*progress_fn)(void *worker);

#define YIELDS_BEFORE_SLEEP 64

unsigned ucp_worker_progress(void *worker);

unsigned ucp_worker_progress(void *worker)
{
    /* UCX's own definition, looked up once, and the idle polls in a row.
     * Threads racing on either only repeat the lookup or miscount a poll. */
    static progress_fn real;
    static unsigned idle_polls;
    if (real == NULL)
        *(void **)&real = dlsym(RTLD_NEXT, "ucp_worker_progress");
    if (real == NULL)
        return 0;
    unsigned events = real(worker);
    if (events != 0) {
        idle_polls = 0;
    } else if (++idle_polls < YIELDS_BEFORE_SLEEP) {
        sched_yield();
    } else {
        struct timespec nap = {0, 20000};
        nanosleep(&nap, NULL);
    }
    return events;
}
