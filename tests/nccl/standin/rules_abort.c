/*
 * The stand-in's rule cases for ncclCommAbort inside a group by version,
 * and for the injected creation and split failures inside a group
 * (docs/design/nccl-contract.md, formerly discrepancies 17 and 18; run by
 * tests/nccl/nccl_standin_rules.sh, on 2 ranks).
 */
#define _GNU_SOURCE   /* setenv */
#include <stdlib.h>

#include "rules.h"

/* Before 2.22 ncclCommAbort reclaims the communicator at once, open group
 * or not; from 2.22 the reclaim is a job of the open group, run at its
 * outermost end. Either way, aborting a communicator whose operations wait
 * in the open group is flagged (NCCL frees it before it launches them). */
int rules_case_abort_group_version(void)
{
    enum { N = 4 };
    ncclComm_t early = NULL, late = NULL, busy = NULL;
    cudaStream_t s;
    float *buf = rules_device_memory(N * sizeof *buf);
    EXPECT(buf != NULL && cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess &&
               rules_comm_world(&early, 1) == ncclSuccess &&
               rules_comm_world(&late, 1) == ncclSuccess &&
               rules_comm_world(&busy, 1) == ncclSuccess,
           "set-up");
    const char *held = "ncclCommAbort held for the outermost ncclGroupEnd";
    setenv("CB_STANDIN_NCCL_VERSION", "22105", 1);   /* 2.21.5 */
    EXPECT(ncclGroupStart() == ncclSuccess && ncclCommAbort(early) == ncclSuccess,
           "abort inside a group at 2.21.5");
    EXPECT(rules_trace_count(held) == 0 && rules_trace_count("VIOLATION") == 0,
           "2.21.5: the abort inside a group was held or flagged");
    EXPECT(ncclGroupEnd() == ncclSuccess, "the group's end at 2.21.5");
    setenv("CB_STANDIN_NCCL_VERSION", "22203", 1);   /* 2.22.3 */
    EXPECT(ncclGroupStart() == ncclSuccess && ncclCommAbort(late) == ncclSuccess,
           "abort inside a group at 2.22.3");
    EXPECT(rules_trace_count(held) == 1 && rules_trace_count("VIOLATION") == 0 &&
               rules_trace_count("ncclGroupEnd ran the held ncclCommAbort") == 0,
           "2.22.3: the abort inside a group was not held for the group's end");
    EXPECT(ncclGroupEnd() == ncclSuccess &&
               rules_trace_count("ncclGroupEnd ran the held ncclCommAbort") == 1,
           "2.22.3: the group's end did not reclaim the communicator");
    unsetenv("CB_STANDIN_NCCL_VERSION");
    EXPECT(ncclGroupStart() == ncclSuccess &&
               ncclAllReduce(buf, buf, N, ncclFloat32, ncclSum, busy, s) == ncclSuccess &&
               ncclCommAbort(busy) == ncclSuccess,
           "abort of a communicator with an operation in the group");
    EXPECT(rules_trace_count("VIOLATION ncclCommAbort of a communicator whose operations wait "
                             "in the open group") == 1,
           "aborting a communicator with operations in the open group was not flagged");
    EXPECT(ncclGroupEnd() == ncclSuccess, "the group's end");
    EXPECT(cudaStreamDestroy(s) == cudaSuccess && cudaFree(buf) == cudaSuccess, "teardown");
    return 0;
}

/* Inside a group, CB_STANDIN_FAIL_COMMINIT and CB_STANDIN_FAIL_SPLIT on a
 * blocking communicator fail at the outermost ncclGroupEnd, where NCCL's
 * job fails, not at the call. Only rank 1 creates and splits: its failure
 * never reaches rank 0, which would otherwise wait for it. */
int rules_case_fail_at_group_end(void)
{
    int me = rules_rank();
    ncclComm_t comm = NULL, parent = NULL, child = NULL;
    ncclUniqueId id;
    if (me == 1) {
        setenv("CB_STANDIN_FAIL_COMMINIT", "1", 1);
        EXPECT(ncclGetUniqueId(&id) == ncclSuccess && ncclGroupStart() == ncclSuccess,
               "set-up");
        EXPECT(ncclCommInitRank(&comm, 2, id, 1) == ncclSuccess && comm != NULL,
               "the injected creation failure came at the call inside a group");
        EXPECT(ncclGroupEnd() == ncclSystemError,
               "the group's end did not fail with the held creation");
        EXPECT(ncclCommAbort(comm) == ncclSuccess, "abort of the failed communicator");
        unsetenv("CB_STANDIN_FAIL_COMMINIT");
    }
    EXPECT(rules_comm_world(&parent, 1) == ncclSuccess, "the parent");
    if (me == 1) {
        setenv("CB_STANDIN_FAIL_SPLIT", "1", 1);
        EXPECT(ncclGroupStart() == ncclSuccess &&
                   ncclCommSplit(parent, 0, me, &child, NULL) == ncclSuccess && child == NULL,
               "the injected split failure came at the call inside a group");
        EXPECT(ncclGroupEnd() == ncclSystemError && child == NULL,
               "the group's end did not fail with the held split");
        unsetenv("CB_STANDIN_FAIL_SPLIT");
    }
    EXPECT(rules_trace_count("VIOLATION") == 0, "a failure inside a group was flagged");
    EXPECT(ncclCommAbort(parent) == ncclSuccess, "teardown");
    return 0;
}
