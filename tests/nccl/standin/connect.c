/*
 * When NCCL connects a communicator, and what that costs, by the version
 * the stand-in reports (CB_STANDIN_NCCL_VERSION); docs/design/nccl-contract.md,
 * G1 and G4.
 *
 * Threads: before 2.23 NCCL hands a group of a non-blocking communicator
 * to a thread of its own only when the group holds async jobs or a send or
 * receive to a peer not yet connected (group.cc, ncclGroupEndInternal,
 * v2.14.3-1 to v2.22.3-1: "ncclGroupBlocking == 0 &&
 * (ncclGroupCommPreconnectHead != nullptr || !ncclIntruQueueEmpty(
 * &ncclAsyncJobs))"; enqueue.cc puts a communicator on the preconnect list
 * when "peers[peer]->send[1].connected == 0"); every other launch runs on
 * the calling thread and returns ncclSuccess. From v2.23.4-1 the test is
 * "ncclGroupBlocking == 0" alone: every launch returns ncclInProgress.
 *
 * Memory: CB_STANDIN_CONNECT_BYTES=B (default 0) is what connecting one
 * communicator's collective algorithms costs on its device. Before 2.22
 * NCCL connects every channel while the communicator is created (init.cc,
 * initTransportsRank, 2.18.1 to 2.21.5); from 2.22 an algorithm is
 * connected when a task first uses it (init.cc: runtimeConn; enqueue.cc:
 * initAlgoChannels; group.cc: ncclCollPreconnect), modelled here as the
 * first collective on the communicator, unless NCCL_RUNTIME_CONNECT=0 or
 * NCCL_CUMEM_ENABLE=0 (runtime_connect below), which connect at creation.
 * cudaMemGetInfo's free bytes lose B from then until the communicator is
 * destroyed or aborted.
 *
 * Shared resources (G9): a child whose PARENT's config says splitShare
 * (shrinkShare for a shrink) joins the parent's resource set instead of
 * making its own (init.cc, commAlloc, 2.28.9: "if (parent == NULL ||
 * !parent->shareResources)" allocates sharedRes, else "comm->sharedRes =
 * parent->sharedRes" with its refCount raised; 2.18.1: the same on
 * parent->config.splitShare), and the channels' peers, and so their
 * connections, live in that set (sharedRes->peers). B is charged once per
 * set and given back when its last communicator ends (sharedRes->refCount).
 *
 * NVLS buffers, on a device with multicast, are nvls.c's, charged at the
 * same moments.
 */
#include <stdlib.h>

#include "standin.h"

/* The device bytes that live communicators' connections hold. */
static size_t connected;

size_t standin_connected(void)
{
    return connected;
}

long standin_nccl_version(void)
{
    return standin_env_long("CB_STANDIN_NCCL_VERSION", NCCL_VERSION_CODE);
}

ncclResult_t standin_launch_started(ncclComm_t comm, ncclResult_t res, const char *call,
                                    int needs_connect)
{
    if (!comm->nonblocking)
        return res;
    if (standin_nccl_version() >= NCCL_VERSION(2, 23, 0) || needs_connect)
        return standin_comm_started(comm, res, call);
    /* groupCleanup (group.cc) leaves a failed launch's error on the
     * non-blocking communicator. */
    if (res != ncclSuccess)
        comm->async_result = res;
    standin_trace("%s launched on the calling thread (NCCL before 2.23)", call);
    return res;
}

/* NCCL decides a group's launch by the group's mode, not each member's: the
 * mode of the last communicator to join (group.h, ncclGroupCommJoin sets
 * ncclGroupBlocking unchecked for collectives, sends and receives). At the
 * outermost end (group.cc, ncclGroupEndInternal, 2.14.3 to 2.30.7) a
 * blocking group runs on the calling thread, non-blocking members
 * included, and returns the result; a non-blocking one that goes to NCCL's
 * thread (by version, as above) first sets ncclInProgress on every member,
 * blocking ones too, which then refuse calls (ncclCommEnsureReady) until
 * ncclCommGetAsyncError says they are done. */
ncclResult_t standin_group_launch_started(ncclComm_t comm, int group_nonblocking,
                                          ncclResult_t res, int needs_connect)
{
    if (group_nonblocking == comm->nonblocking)
        return standin_launch_started(comm, res, "ncclGroupEnd", needs_connect);
    if (!group_nonblocking) {
        standin_trace("ncclGroupEnd: a non-blocking communicator in a blocking group, "
                      "launched on the calling thread");
        return res;
    }
    if (standin_nccl_version() < NCCL_VERSION(2, 23, 0) && !needs_connect)
        return res;
    standin_trace("ncclGroupEnd: a blocking communicator in a non-blocking group, in progress");
    return standin_comm_marked_started(comm, res, "ncclGroupEnd");
}

int standin_p2p_connect(const standin_op *op)
{
    ncclComm_t comm = op->comm;
    int needed = 0;
    if (comm == NULL || op->kind != STANDIN_OP_P2P || comm->nranks <= 0)
        return 0;
    if (comm->p2p_links == NULL)
        comm->p2p_links = calloc((size_t)comm->nranks, 1);
    for (size_t i = 0; i < op->np2p && comm->p2p_links != NULL; i++) {
        int peer = op->p2p[i].peer;
        unsigned char bit = op->p2p[i].is_send ? 1 : 2;
        if (peer < 0 || peer >= comm->nranks || peer == comm->rank ||
            (comm->p2p_links[peer] & bit))
            continue;
        comm->p2p_links[peer] |= bit;
        needed = 1;
    }
    return needed;
}

/* A resource set and the communicators in it. */
struct standin_resources {
    int members;
    size_t connect_bytes;   /* its connections' device memory, once charged */
};

int standin_resources_join(ncclComm_t comm, ncclComm_t share_with)
{
    if (share_with != NULL && share_with->resources != NULL) {
        comm->resources = share_with->resources;
        comm->resources->members++;
        standin_nvls_share(comm, share_with);
        standin_trace("resources shared with the parent (%d communicators)",
                      comm->resources->members);
        return 0;
    }
    comm->resources = calloc(1, sizeof *comm->resources);
    if (comm->resources == NULL)
        return -1;
    comm->resources->members = 1;
    return 0;
}

/* Charge comm's resource set its connections once. */
static void charge(ncclComm_t comm, const char *when)
{
    long bytes = standin_env_long("CB_STANDIN_CONNECT_BYTES", 0);
    standin_resources *set = comm->resources;
    if (set == NULL || set->connect_bytes != 0 || bytes <= 0)
        return;
    set->connect_bytes = (size_t)bytes;
    connected += (size_t)bytes;
    standin_trace("NCCL connections %zu bytes %s", set->connect_bytes, when);
}

int standin_cumem_enabled(void)
{
    /* ncclCuMemEnable (misc/cudawrap.cc, 2.19.3 to 2.30.7): NCCL_CUMEM_ENABLE
     * when 0 or more, its default -2 meaning "if the driver supports cuMem",
     * which the stand-in's does; any other negative value disables it. */
    long cumem = standin_env_long("NCCL_CUMEM_ENABLE", -2);
    return cumem >= 0 ? cumem != 0 : cumem == -2;
}

/* Whether NCCL connects at first use: from 2.22, "comm->runtimeConn =
 * comm->cuMemSupport && ncclParamRuntimeConnect();" (init.cc,
 * initTransportsRank, 2.22.3 to 2.30.7; NCCL_RUNTIME_CONNECT, default 1),
 * cuMemSupport being every rank's ncclCuMemEnable. Without it NCCL
 * connects every channel at creation, as before 2.22. Read at each
 * creation here; NCCL_PARAM reads a variable once per process. */
static int runtime_connect(void)
{
    return standin_nccl_version() >= NCCL_VERSION(2, 22, 0) &&
           standin_env_long("NCCL_RUNTIME_CONNECT", 1) != 0 && standin_cumem_enabled();
}

void standin_connect_created(ncclComm_t comm)
{
    comm->runtime_connect = runtime_connect();
    if (!comm->runtime_connect)
        charge(comm, standin_nccl_version() < NCCL_VERSION(2, 22, 0)
                         ? "at creation (before 2.22)"
                         : "at creation (no runtime connection)");
    standin_nvls_created(comm);
}

void standin_connect_used(const standin_op *op)
{
    if (op->comm != NULL && op->kind != STANDIN_OP_P2P && op->kind != STANDIN_OP_COPY &&
        op->kind != STANDIN_OP_COPY2D && op->comm->runtime_connect) {
        charge(op->comm, "at first use (2.22 on)");
        standin_nvls_used(op->comm);
    }
}

void standin_connect_release(ncclComm_t comm)
{
    standin_resources *set = comm->resources;
    comm->resources = NULL;
    standin_nvls_release(comm);
    if (set != NULL && --set->members == 0) {
        connected -= set->connect_bytes;
        free(set);
    }
    free(comm->p2p_links);
    comm->p2p_links = NULL;
}
