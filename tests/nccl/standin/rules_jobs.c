/*
 * Rule case of the stand-in (tests/nccl/nccl_standin_rules.sh) for NCCL's
 * async jobs on a thread (async_jobs.h, docs/design/nccl-contract.md
 * discrepancy 5): a non-blocking creation, and a split of a non-blocking
 * parent, return before their peers join and start one thread each, a
 * blocking creation starts none, ncclCommAbort ends a creation or a split
 * that waits for a peer, and every thread is joined. Threads are
 * counted by the trace's "async-job start N" and "async-job join N" lines.
 */
#include <time.h>

#include "rules.h"

static int started(void)
{
    return rules_trace_count("async-job start ");
}

static int joined(void)
{
    return rules_trace_count("async-job join ");
}

/* Whether rank 0's word (tag) came within 10 s: a deadline, so that a
 * stand-in whose creation blocks rank 0 fails here instead of hanging. */
static int word_came(int tag)
{
    const struct timespec nap = {0, 5 * 1000 * 1000};
    int flag = 0, word = 0;
    for (int i = 0; i < 2000 && !flag; i++) {
        MPI_Iprobe(0, tag, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        if (!flag)
            nanosleep(&nap, NULL);
    }
    if (flag)
        MPI_Recv(&word, 1, MPI_INT, 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return flag;
}

static void send_word(int tag)
{
    int word = 1;
    MPI_Send(&word, 1, MPI_INT, 1, tag, MPI_COMM_WORLD);
}

/* A non-blocking ncclCommInitRankConfig on id. */
static ncclResult_t create_nonblocking(ncclComm_t *comm, ncclUniqueId id)
{
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    return ncclCommInitRankConfig(comm, 2, id, rules_rank(), &config);
}

/* Rank 0 creates and says so before rank 1 has called: its bootstrap
 * waits for rank 1 on a thread, not on the caller. */
static int creation_returns_early(ncclComm_t *comm)
{
    ncclUniqueId id = rules_world_id();
    ncclResult_t state = ncclSuccess;
    int before = started();
    if (rules_rank() == 1)
        EXPECT(word_came(11), "rank 0's non-blocking creation blocked its caller until this rank "
                              "joined");
    EXPECT(create_nonblocking(comm, id) == ncclInProgress, "non-blocking creation");
    if (rules_rank() == 0) {
        EXPECT(started() == before + 1 && joined() == 0,
               "a non-blocking creation started no async-job thread");
        EXPECT(ncclCommGetAsyncError(*comm, &state) == ncclSuccess && state == ncclInProgress,
               "the creation was done before its peer joined");
        send_word(11);
    }
    EXPECT(rules_polls_until_done(*comm, &state) >= 1 && state == ncclSuccess,
           "the creation's thread never finished it");
    return 0;
}

/* Rank 0's split of comm returns before rank 1 splits: its all-gather
 * waits on a thread; *newcomm is written once the parent is seen done. */
static int split_returns_early(ncclComm_t comm)
{
    ncclComm_t child = NULL;
    ncclResult_t state = ncclSuccess;
    int before = started();
    if (rules_rank() == 1)
        EXPECT(word_came(13), "rank 0's split of a non-blocking parent blocked its caller until "
                              "this rank split");
    EXPECT(ncclCommSplit(comm, 0, rules_rank(), &child, NULL) == ncclSuccess &&
               started() == before + 1,
           "a split of a non-blocking parent started no async-job thread");
    if (rules_rank() == 0) {
        EXPECT(ncclCommGetAsyncError(comm, &state) == ncclSuccess && state == ncclInProgress &&
                   child == NULL,
               "the split was done before its peer split");
        send_word(13);
    }
    EXPECT(rules_polls_until_done(comm, &state) >= 1 && state == ncclSuccess && child != NULL,
           "the split's thread never finished it");
    EXPECT(ncclCommDestroy(child) == ncclSuccess, "destroy the child");
    return 0;
}

/* Rank 0 splits alone and aborts the parent: its connections fail, the
 * all-gather ends and the abort joins the thread. Rank 1 then aborts. */
static int abort_ends_split(ncclComm_t comm)
{
    ncclComm_t child = NULL;
    if (rules_rank() == 0) {
        int aborts = rules_trace_count("async-job abort ");
        EXPECT(ncclCommSplit(comm, 0, 0, &child, NULL) == ncclSuccess, "split");
        EXPECT(ncclCommAbort(comm) == ncclSuccess &&
                   rules_trace_count("async-job abort ") == aborts + 1 && child == NULL,
               "the abort did not end the split waiting for its peer");
        send_word(14);
    } else {
        EXPECT(word_came(14), "rank 0's abort did not end its split waiting for this rank");
        EXPECT(ncclCommAbort(comm) == ncclSuccess, "abort");
    }
    return 0;
}

/* Rank 0 creates alone and aborts: NCCL's abort flag ends the bootstrap's
 * wait and ncclCommAbort joins the thread (init.cc, ncclCommAbort calls
 * ncclCommEnsureReady, which calls ncclGroupJobAbort, 2.22.3, 2.28.9).
 * Rank 1 never joins that id. */
static int abort_ends_creation(void)
{
    ncclUniqueId id = rules_world_id();
    if (rules_rank() == 0) {
        ncclComm_t comm = NULL;
        ncclResult_t state = ncclSuccess;
        int before = started();
        EXPECT(create_nonblocking(&comm, id) == ncclInProgress && started() == before + 1,
               "a non-blocking creation started no async-job thread");
        for (int i = 0; i < 5; i++)
            EXPECT(ncclCommGetAsyncError(comm, &state) == ncclSuccess && state == ncclInProgress,
                   "a creation without its peer was seen done");
        EXPECT(ncclCommAbort(comm) == ncclSuccess && rules_trace_count("async-job abort ") == 1,
               "the abort did not end the creation waiting for its peer");
        send_word(12);
    } else {
        EXPECT(word_came(12), "rank 0's abort did not end its creation waiting for this rank");
    }
    return 0;
}

int rules_case_async_jobs(void)
{
    ncclComm_t blocking = NULL, comm = NULL;
    EXPECT(rules_comm_world(&blocking, 1) == ncclSuccess && started() == 0,
           "a blocking creation started an async-job thread");
    EXPECT(creation_returns_early(&comm) == 0, "early return");
    EXPECT(split_returns_early(comm) == 0, "early split");
    EXPECT(abort_ends_creation() == 0, "abort");
    EXPECT(abort_ends_split(comm) == 0, "abort of a split");
    EXPECT(ncclCommDestroy(blocking) == ncclSuccess &&
               started() == 2 + 2 * (rules_rank() == 0) && joined() == started(),
           "an async-job thread was never joined");
    return 0;
}
