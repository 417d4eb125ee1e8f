/*
 * Rule cases of the stand-in (tests/nccl/nccl_standin_rules.sh) for buffer
 * registration where NCCL registers nothing and says ncclSuccess
 * (docs/design/nccl-contract.md, ncclCommRegister and
 * ncclCommWindowRegister): a stand-in that always hands out a handle or a
 * window fails here. Also the calls NCCL runs without checking readiness,
 * and window deregistration, which is no barrier.
 */
#define _GNU_SOURCE   /* setenv, usleep */
#include <stdlib.h>
#include <unistd.h>

#include "rules.h"

/* What a window registration writes, seen against a value set before. */
static void *const UNTOUCHED = (void *)&rules_rank;

/* ncclCommRegister with NCCL_LOCAL_REGISTER=0: a NULL handle from 2.24
 * (register.cc, ncclCommRegister), a handle at 2.23, which does not read
 * the variable there. A NULL handle's deregistration succeeds. */
static int register_without_local(ncclComm_t comm, void *buf, size_t bytes)
{
    void *handle = UNTOUCHED;
    setenv("NCCL_LOCAL_REGISTER", "0", 1);
    setenv("CB_STANDIN_NCCL_VERSION", "22809", 1);
    EXPECT(ncclCommRegister(comm, buf, bytes, &handle) == ncclSuccess && handle == NULL,
           "2.28, NCCL_LOCAL_REGISTER=0: ncclCommRegister gave a handle");
    EXPECT(ncclCommDeregister(comm, handle) == ncclSuccess, "2.28: deregistering NULL refused");
    setenv("CB_STANDIN_NCCL_VERSION", "22304", 1);
    EXPECT(ncclCommRegister(comm, buf, bytes, &handle) == ncclSuccess && handle != NULL &&
               handle != UNTOUCHED,
           "2.23, NCCL_LOCAL_REGISTER=0: ncclCommRegister gave no handle");
    EXPECT(ncclCommDeregister(comm, handle) == ncclSuccess, "2.23: deregister");
    unsetenv("NCCL_LOCAL_REGISTER");
    unsetenv("CB_STANDIN_NCCL_VERSION");
    return 0;
}

#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0)
/* One window registration at version with the given NCCL_LOCAL_REGISTER and
 * CB_STANDIN_SYMMETRIC: 0 when *win ends as want (UNTOUCHED: unwritten;
 * NULL; else any window, deregistered). */
static int window_case(ncclComm_t comm, void *buf, size_t bytes, const char *version,
                       const char *local, const char *symmetric, void *want)
{
    ncclWindow_t win = (ncclWindow_t)UNTOUCHED;
    setenv("CB_STANDIN_NCCL_VERSION", version, 1);
    setenv("NCCL_LOCAL_REGISTER", local, 1);
    setenv("CB_STANDIN_SYMMETRIC", symmetric, 1);
    ncclResult_t res = ncclCommWindowRegister(comm, buf, bytes, &win, NCCL_WIN_COLL_SYMMETRIC);
    unsetenv("NCCL_LOCAL_REGISTER");
    unsetenv("CB_STANDIN_SYMMETRIC");
    if (res != ncclSuccess)
        return 1;
    if (want == UNTOUCHED)
        return (void *)win != want;
    if (want == NULL)   /* NCCL deregisters a NULL window as nothing */
        return win != NULL || ncclCommWindowDeregister(comm, win) != ncclSuccess;
    return (void *)win == NULL || (void *)win == UNTOUCHED ||
           ncclCommWindowDeregister(comm, win) != ncclSuccess;
}
#endif

/* Without symmetric memory support or NCCL_LOCAL_REGISTER, by version:
 * 2.27 writes NULL when NCCL_LOCAL_REGISTER=0 (register.cc), 2.28 leaves
 * *win unwritten when both lack and registers locally without symmetric
 * support (dev_runtime.cc), 2.29 writes NULL without symmetric support
 * (dev_runtime.cc, ncclCommWindowRegister). */
int rules_case_register_null(void)
{
    const size_t bytes = 256;
    ncclComm_t comm = NULL;
    void *buf = NULL;
    EXPECT(rules_comm_world(&comm, 1) == ncclSuccess && ncclMemAlloc(&buf, bytes) == ncclSuccess,
           "set-up");
    if (register_without_local(comm, buf, bytes) != 0)
        return 1;
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0)
    void *any = &buf;
    EXPECT(window_case(comm, buf, bytes, "22703", "0", "1", NULL) == 0,
           "2.27, NCCL_LOCAL_REGISTER=0: a window, or *win not NULL");
    EXPECT(window_case(comm, buf, bytes, "22703", "1", "0", any) == 0,
           "2.27 without symmetric support: no window");
    EXPECT(window_case(comm, buf, bytes, "22809", "0", "0", UNTOUCHED) == 0,
           "2.28, neither symmetric support nor NCCL_LOCAL_REGISTER: *win written");
    EXPECT(window_case(comm, buf, bytes, "22809", "1", "0", any) == 0,
           "2.28 without symmetric support: no local registration in the window");
    EXPECT(window_case(comm, buf, bytes, "22809", "0", "1", any) == 0,
           "2.28 with symmetric support: no window");
    EXPECT(window_case(comm, buf, bytes, "22902", "1", "0", NULL) == 0,
           "2.29 without symmetric support: a window, or *win not NULL");
    EXPECT(window_case(comm, buf, bytes, "22902", "0", "1", any) == 0,
           "2.29 with symmetric support: no window");
    EXPECT(rules_trace_count("ncclCommWindowRegister made no window") == 3,
           "the windows not made were not traced");
    unsetenv("CB_STANDIN_NCCL_VERSION");
#endif
    EXPECT(ncclCommDestroy(comm) == ncclSuccess && ncclMemFree(buf) == ncclSuccess, "teardown");
    return 0;
}

/* ncclCommRegister, ncclCommDeregister, ncclCommWindowDeregister and
 * ncclRedOpDestroy check no readiness in NCCL (register.cc, dev_runtime.cc,
 * enqueue.cc, 2.18.1 to 2.30.7): on a non-blocking communicator in
 * progress they do their work and return ncclSuccess. The guide forbids
 * the call all the same (comms.rst 2.30.7, ncclCommGetAsyncError), so the
 * stand-in flags each. */
int rules_case_unready_unchecked(void)
{
    const size_t bytes = 256;
    float scalar = 2;
    ncclComm_t comm = NULL;
    ncclRedOp_t op;
    ncclResult_t state;
    cudaStream_t s;
    void *buf = NULL, *handle = NULL;
    EXPECT(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess &&
               ncclMemAlloc(&buf, bytes) == ncclSuccess &&
               rules_comm_world(&comm, 0) == ncclInProgress,
           "set-up");
    EXPECT(ncclCommRegister(comm, buf, bytes, &handle) == ncclSuccess && handle != NULL &&
               ncclCommDeregister(comm, handle) == ncclSuccess,
           "ncclCommRegister or ncclCommDeregister refused while the creation runs");
    EXPECT(rules_polls_until_done(comm, &state) >= 0 && state == ncclSuccess, "creation");
    EXPECT(ncclRedOpCreatePreMulSum(&op, &scalar, ncclFloat32, ncclScalarHostImmediate, comm) ==
                   ncclSuccess &&
               ncclAllReduce(buf, buf, 4, ncclFloat32, ncclSum, comm, s) == ncclInProgress,
           "an operator, then a launch in progress");
    EXPECT(ncclRedOpDestroy(op, comm) == ncclSuccess,
           "ncclRedOpDestroy refused on a communicator in progress");
    EXPECT(rules_polls_until_done(comm, &state) >= 0 && state == ncclSuccess, "the launch");
    int flagged = 3;
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0)
    ncclWindow_t win = NULL;
    EXPECT(ncclCommWindowRegister(comm, buf, bytes, &win, NCCL_WIN_COLL_SYMMETRIC) ==
                   ncclSuccess &&
               rules_polls_until_done(comm, &state) >= 0 && state == ncclSuccess && win != NULL,
           "a window");
    EXPECT(ncclAllReduce(buf, buf, 4, ncclFloat32, ncclSum, comm, s) == ncclInProgress &&
               ncclCommWindowDeregister(comm, win) == ncclSuccess,
           "ncclCommWindowDeregister refused on a communicator in progress");
    EXPECT(rules_polls_until_done(comm, &state) >= 0 && state == ncclSuccess, "the launch");
    flagged++;
#endif
    EXPECT(rules_trace_count("on a non-blocking communicator that is not ready") == flagged,
           "the calls on a communicator in progress were not flagged");
    EXPECT(ncclCommDestroy(comm) == ncclSuccess && ncclMemFree(buf) == ncclSuccess &&
               cudaStreamDestroy(s) == cudaSuccess,
           "teardown");
    return 0;
}

#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0)
/* Window deregistration is no barrier (register.cc 2.27.3,
 * ncclCommWindowDeregister; dev_runtime.cc 2.28.9 to 2.30.7,
 * symWindowDestroy): rank 0 deregisters before rank 1 reaches its own. */
int rules_case_window_deregister(void)
{
    const size_t bytes = 256;
    ncclComm_t comm = NULL;
    ncclWindow_t win = NULL;
    void *buf = NULL;
    MPI_Request request;
    int done = 0;
    EXPECT(rules_comm_world(&comm, 1) == ncclSuccess && ncclMemAlloc(&buf, bytes) == ncclSuccess &&
               ncclCommWindowRegister(comm, buf, bytes, &win, NCCL_WIN_COLL_SYMMETRIC) ==
                   ncclSuccess &&
               win != NULL,
           "set-up");
    if (rules_rank() == 0)
        EXPECT(ncclCommWindowDeregister(comm, win) == ncclSuccess, "rank 0's deregistration");
    MPI_Ibarrier(MPI_COMM_WORLD, &request);
    for (int waited_ms = 0; !done && waited_ms < 10000; waited_ms++) {
        MPI_Test(&request, &done, MPI_STATUS_IGNORE);
        if (!done)
            usleep(1000);
    }
    EXPECT(done, "rank 0's ncclCommWindowDeregister waited for rank 1's (a barrier)");
    if (rules_rank() != 0)
        EXPECT(ncclCommWindowDeregister(comm, win) == ncclSuccess, "rank 1's deregistration");
    EXPECT(ncclCommDestroy(comm) == ncclSuccess && ncclMemFree(buf) == ncclSuccess, "teardown");
    return 0;
}
#else
int rules_case_window_deregister(void)
{
    return 0;   /* no windows before NCCL 2.27 */
}
#endif
