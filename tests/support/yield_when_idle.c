/*
 * For make check under MPICH only (tests/support/wrapper.sh preloads it into
 * the ranks that Hydra starts): MPICH's ch4 device waits by polling UCX
 * without ever giving up the processor, so with more ranks than cores a rank
 * that waits burns the time slice its peer needs to send, and the suite
 * crawls past its limits. This wraps ucp_worker_progress, which MPICH calls
 * on every poll: when a poll finds nothing to do, the rank yields, as Open
 * MPI's ranks do with mpi_yield_when_idle. It changes no result, only who
 * runs when; the program itself never depends on it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>

typedef unsigned (*progress_fn)(void *worker);

unsigned ucp_worker_progress(void *worker);

unsigned ucp_worker_progress(void *worker)
{
    /* The next definition, UCX's own: looked up once. A race between
     * threads only repeats the same lookup. */
    static progress_fn real;
    if (real == NULL)
        *(void **)&real = dlsym(RTLD_NEXT, "ucp_worker_progress");
    if (real == NULL)
        return 0;
    unsigned events = real(worker);
    if (events == 0)
        sched_yield();
    return events;
}
