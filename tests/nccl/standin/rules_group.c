/*
 * The stand-in's rule cases for communicators made inside a group and for
 * shared split resources (docs/design/nccl-contract.md, G5 and G9; run by
 * tests/nccl/nccl_standin_rules.sh, on 2 ranks).
 */
#define _GNU_SOURCE   /* setenv */
#include <stdlib.h>

#include "rules.h"

enum { N = 4 };
static const size_t cost = (size_t)1 << 20;   /* CB_STANDIN_CONNECT_BYTES below */

static size_t free_now(void)
{
    size_t free_bytes = 0, total = 0;
    cudaMemGetInfo(&free_bytes, &total);
    return free_bytes;
}

static ncclResult_t init_config(ncclComm_t *comm, ncclUniqueId id, int blocking, int split_share,
                                int shrink_share)
{
    int nranks = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = blocking;
    config.splitShare = split_share;
    config.shrinkShare = shrink_share;
    return ncclCommInitRankConfig(comm, nranks, id, rules_rank(), &config);
}

static ncclResult_t all_reduce(float *buf, ncclComm_t comm, cudaStream_t s)
{
    return ncclAllReduce(buf, buf, N, ncclFloat32, ncclSum, comm, s);
}

/* Creation, split and shrink inside a group are NCCL's async jobs, run at
 * the outermost ncclGroupEnd (group.cc, ncclAsyncLaunch, 2.18.1 to 2.30.7).
 * Until then a creation's *comm is written but not initialised
 * (init.cc, ncclCommInitRankDev: "*newcomm = comm;" before the job), and
 * using it is flagged; a split's *newcomm stays NULL (ncclCommInitChildComm).
 * The non-blocking creation returns ncclSuccess there, not ncclInProgress
 * (its asyncResult is still ncclSuccess), and the group's end returns
 * ncclInProgress. */
int rules_case_group_create(void)
{
    int me = rules_rank();
    cudaStream_t s;
    ncclComm_t world = NULL, made = NULL, child = NULL, pending = NULL;
    ncclResult_t state = ncclSuccess;
    float *buf = rules_device_memory(N * sizeof *buf);
    EXPECT(buf != NULL && cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess &&
               rules_comm_world(&world, 1) == ncclSuccess,
           "set-up");
    ncclUniqueId id = rules_world_id();
    EXPECT(ncclGroupStart() == ncclSuccess && init_config(&made, id, 1, 0, 0) == ncclSuccess &&
               made != NULL,
           "blocking: creation in a group did not write *comm");
    EXPECT(ncclCommSplit(world, 0, me, &child, NULL) == ncclSuccess && child == NULL,
           "blocking: the split in a group wrote *newcomm before the group's end");
    EXPECT(rules_trace_count("ncclCommInitRank held for the outermost ncclGroupEnd") == 1 &&
               rules_trace_count("ncclCommSplit held for the outermost ncclGroupEnd") == 1,
           "blocking: creation and split ran inside the group");
    EXPECT(ncclGroupEnd() == ncclSuccess && child != NULL, "blocking: the group's end");
    EXPECT(all_reduce(buf, made, s) == ncclSuccess && all_reduce(buf, child, s) == ncclSuccess,
           "blocking: the new communicators are not usable after the group's end");
    /* A collective on the created communicator before the group's end: it
     * fails the group (ncclEnqueueCheck's ncclGroupErrCheck), whose end
     * then drops the creation (groupCleanup): never initialised. */
    id = rules_world_id();
    EXPECT(ncclGroupStart() == ncclSuccess && init_config(&pending, id, 1, 0, 0) == ncclSuccess &&
               pending != NULL && all_reduce(buf, pending, s) == ncclInvalidArgument &&
               ncclGroupEnd() == ncclInvalidArgument,
           "a collective on a communicator not yet created was accepted");
    EXPECT(rules_trace_count("VIOLATION ncclAllReduce on a communicator whose creation waits for "
                             "the outermost ncclGroupEnd") == 1 &&
               rules_trace_count("ncclCommInitRank dropped: its group failed") == 1,
           "the use before the group's end not flagged, or the creation not dropped");
    EXPECT(ncclCommAbort(pending) == ncclSuccess, "abort of the never-created communicator");
    EXPECT(ncclCommDestroy(child) == ncclSuccess &&
               ncclCommDestroy(made) == ncclSuccess && ncclCommDestroy(world) == ncclSuccess,
           "teardown");
    /* Non-blocking: ncclSuccess from both calls, ncclInProgress from the
     * group's end; the split's child appears once the parent is done. */
    EXPECT(rules_comm_world(&world, 0) == ncclInProgress &&
               rules_polls_until_done(world, &state) >= 0 && state == ncclSuccess,
           "non-blocking set-up");
    id = rules_world_id();
    made = child = NULL;
    EXPECT(ncclGroupStart() == ncclSuccess && init_config(&made, id, 0, 0, 0) == ncclSuccess &&
               made != NULL,
           "non-blocking: creation in a group did not return ncclSuccess with *comm written");
    EXPECT(ncclCommSplit(world, 0, me, &child, NULL) == ncclSuccess && child == NULL,
           "non-blocking: the split in a group");
    EXPECT(ncclGroupEnd() == ncclInProgress && child == NULL,
           "non-blocking: the group's end did not return ncclInProgress");
    EXPECT(rules_polls_until_done(world, &state) >= 1 && state == ncclSuccess && child != NULL,
           "non-blocking: the parent was not in progress until the child was written");
    EXPECT(rules_polls_until_done(made, &state) >= 1 && state == ncclSuccess,
           "non-blocking: the new communicator was not in progress after the group's end");
    ncclCommAbort(child);
    ncclCommAbort(made);
    ncclCommAbort(world);
    cudaStreamDestroy(s);
    cudaFree(buf);
    return 0;
}

/* A child shares its parent's resources when the PARENT's config says
 * splitShare (shrinkShare for a shrink, never with NCCL_SHRINK_ABORT)
 * (init.cc, ncclCommInitChildComm, 2.28.9; ncclCommSplit, 2.18.1); the
 * child's config changes nothing for that split. The connections' memory is charged once per resource set,
 * and given back with its last communicator (commAlloc, sharedRes). */
int rules_case_split_share(void)
{
    int me = rules_rank();
    cudaStream_t s;
    ncclComm_t parent, child;
    float *buf = rules_device_memory(N * sizeof *buf);
    EXPECT(buf != NULL && cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess,
           "set-up");
    size_t before = free_now();
    setenv("CB_STANDIN_CONNECT_BYTES", "1048576", 1);
    setenv("CB_STANDIN_NCCL_VERSION", "22105", 1);   /* connected at creation */
    ncclConfig_t sharing = NCCL_CONFIG_INITIALIZER;
    sharing.splitShare = 1;
    EXPECT(init_config(&parent, rules_world_id(), 1, 0, 0) == ncclSuccess &&
               ncclCommSplit(parent, 0, me, &child, &sharing) == ncclSuccess &&
               free_now() == before - 2 * cost,
           "2.21: splitShare in the child's config made the child share");
    EXPECT(ncclCommDestroy(child) == ncclSuccess && ncclCommDestroy(parent) == ncclSuccess &&
               free_now() == before,
           "2.21: teardown");
    EXPECT(init_config(&parent, rules_world_id(), 1, 1, 0) == ncclSuccess &&
               free_now() == before - cost &&
               ncclCommSplit(parent, 0, me, &child, NULL) == ncclSuccess &&
               free_now() == before - cost,
           "2.21: the child of a splitShare parent took its own connections");
    EXPECT(ncclCommDestroy(parent) == ncclSuccess && free_now() == before - cost &&
               ncclCommDestroy(child) == ncclSuccess && free_now() == before,
           "2.21: the shared set was not given back with its last communicator");
    setenv("CB_STANDIN_NCCL_VERSION", "22809", 1);   /* connected at first use */
    EXPECT(init_config(&parent, rules_world_id(), 1, 1, 0) == ncclSuccess &&
               ncclCommSplit(parent, 0, me, &child, NULL) == ncclSuccess &&
               all_reduce(buf, child, s) == ncclSuccess && free_now() == before - cost &&
               all_reduce(buf, parent, s) == ncclSuccess && free_now() == before - cost,
           "2.28: the shared set was charged twice");
    ncclCommDestroy(child);
    /* splitShare says nothing for a shrink: shrinkShare does (rank 0 keeps
     * itself alone; the excluded rank 1 does not call). */
    int excluded = 1;
    if (me == 0) {
        EXPECT(ncclCommShrink(parent, &excluded, 1, &child, NULL, NCCL_SHRINK_DEFAULT) ==
                       ncclSuccess &&
                   all_reduce(buf, child, s) == ncclSuccess && free_now() == before - 2 * cost,
               "2.28: a shrink shared on splitShare");
        ncclCommDestroy(child);
    }
    ncclCommDestroy(parent);
    EXPECT(init_config(&parent, rules_world_id(), 1, 0, 1) == ncclSuccess &&
               all_reduce(buf, parent, s) == ncclSuccess,
           "2.28: shrinkShare parent");
    if (me == 0) {
        EXPECT(ncclCommShrink(parent, &excluded, 1, &child, NULL, NCCL_SHRINK_DEFAULT) ==
                       ncclSuccess &&
                   all_reduce(buf, child, s) == ncclSuccess && free_now() == before - cost,
               "2.28: the child of a shrinkShare parent took its own connections");
        ncclCommDestroy(child);
        EXPECT(ncclCommShrink(parent, &excluded, 1, &child, NULL, NCCL_SHRINK_ABORT) ==
                       ncclSuccess &&
                   all_reduce(buf, child, s) == ncclSuccess && free_now() == before - 2 * cost,
               "2.28: a shrink with NCCL_SHRINK_ABORT shared its parent's resources");
        ncclCommDestroy(child);
    }
    ncclCommDestroy(parent);
    EXPECT(free_now() == before, "2.28: teardown");
    unsetenv("CB_STANDIN_NCCL_VERSION");
    unsetenv("CB_STANDIN_CONNECT_BYTES");
    cudaStreamDestroy(s);
    cudaFree(buf);
    return 0;
}

/* NCCL_COMM_SPLIT_SHARE_RESOURCES overrides the parent's config
 * (init.cc, envConfigOverride, 2.18.1 to 2.30.7). Set once, before any
 * communicator, as NCCL_PARAM reads it once per process. */
int rules_case_split_share_env(void)
{
    ncclComm_t parent, child;
    setenv("NCCL_COMM_SPLIT_SHARE_RESOURCES", "1", 1);
    setenv("CB_STANDIN_CONNECT_BYTES", "1048576", 1);
    setenv("CB_STANDIN_NCCL_VERSION", "22105", 1);
    size_t before = free_now();
    EXPECT(init_config(&parent, rules_world_id(), 1, 0, 0) == ncclSuccess &&
               ncclCommSplit(parent, 0, rules_rank(), &child, NULL) == ncclSuccess &&
               free_now() == before - cost,
           "NCCL_COMM_SPLIT_SHARE_RESOURCES=1 did not override the parent's splitShare = 0");
    EXPECT(rules_trace_count("resources shared with the parent") == 1, "sharing not traced");
    ncclCommDestroy(child);
    ncclCommDestroy(parent);
    EXPECT(free_now() == before, "teardown");
    return 0;
}
