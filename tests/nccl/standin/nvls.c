/*
 * NVLS (NVLink SHARP) buffers: what NCCL maps on each rank's device for a
 * communicator that can use multicast, and when, by the version the
 * stand-in reports (docs/design/nccl-contract.md, G4 and G9). Charged
 * against the device's memory as connect.c charges the connections.
 *
 * Whether (transport/nvls.cc, ncclNvlsInit, 2.18.1 to 2.30.7): never with
 * NCCL_NVLS_ENABLE=0; by default (2) when the device reports
 * CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED, which the stand-in's does when
 * CB_STANDIN_MULTICAST_GRANULARITY (its multicast granularity) is set; and
 * only with more than 2 GPUs on the node ("gpuCount <= 2") up to 2.28.3,
 * with 2 or more ("gpuCount < 2") from 2.28.7. The NVLS graph needs compute
 * capability 9.0 or more and an NVSwitch (graph/search.cc, ncclTopoCompute:
 * "ccMin < 90"), else init.cc drops NVLS (2.18.1, 2.28.9).
 *
 * How much, per rank, with H heads (intra-node, one per GPU of the node:
 * search.cc "graph->minChannels = graph->maxChannels =
 * system->nodes[GPU].count") and C channels (NCCL_NVLS_NCHANNELS, default
 * 16, up to 2.26; from 2.25 the default is 16 below compute capability 10,
 * 32 from it (24 on one node from 2.27); 2.27 drops the variable):
 *   2.18-2.20: C * 2 * (NCCL_BUFFSIZE + 2 MiB) * H   (ncclNvlsSetup: buffSize
 *              comm->buffSizes[NCCL_PROTO_SIMPLE], default 4 MiB; memSize
 *              NVLS_MEM_ALIGN_SIZE)
 *   2.21:      C * 2 * (NCCL_NVLS_CHUNKSIZE * 8 + 2 MiB) * H   (chunk default
 *              128 KiB, NCCL_STEPS 8)
 *   2.22 on:   credits C * 2 * 16 * H in ncclNvlsSetup, buffers
 *              C * 2 * NCCL_NVLS_CHUNKSIZE * 8 * H in ncclNvlsBufferSetup
 * each rounded up to the multicast granularity (nvlsGetProperties,
 * nvlsAllocateMem: ALIGN_SIZE(size, mcgran)), from 2.26 the unicast memory
 * to the allocation granularity instead (ALIGN_SIZE(ucsize, ucgran);
 * CB_STANDIN_MEM_GRANULARITY). The multicast mapping itself takes no memory
 * of its own (cuMulticastBindMem binds the unicast memory).
 *
 * When: before 2.22 all of it while the communicator is created
 * (init.cc, initTransportsRank calls ncclNvlsSetup); from 2.22 the credits
 * at creation and the buffers when a task first runs NVLS (group.cc,
 * ncclCollPreconnectFunc: ncclNvlsBufferSetup), both at creation without
 * runtime connection (init.cc 2.22.3 to 2.30.7).
 *
 * Shared: a child whose parent shares its resources (splitShare, from 2.27
 * shrinkShare too) and has as many ranks on the node takes the parent's
 * NVLS resources (ncclNvlsSetup: "nvlsShare", refCount; 2.22 to 2.26 by
 * matching heads, which on one node is the same test) and maps nothing.
 *
 * Simplified, as nothing the backend observes depends on it: every rank
 * of a communicator is on one node (the stand-in's are), so H is its
 * size; C is not capped by the config's minCTAs/maxCTAs or nvlsCTAs (the
 * backend sets none), nor widened to the ring's channel count as 2.20 and
 * 2.21 size it (comm->nChannels); one multicast granularity serves the
 * credits (NCCL: the minimum one in 2.22 to 2.25) and the buffers (the
 * recommended one); NCCL_NVLS_ENABLE=1 on a device without multicast, and
 * 2.17's NVLS, are not modelled; the buffers come with the first
 * collective, where NCCL waits for the first task its tuner gives NVLS
 * (Simple protocol, sizes its model picks), which may come later.
 */
#include <stdlib.h>

#include "standin.h"

/* One set of NVLS resources and the communicators that use it. */
struct standin_nvls {
    int members;
    int heads;            /* ranks on the node when it was made */
    size_t at_creation;   /* charged when the first member was created */
    size_t at_first_use;  /* charged at its members' first collective */
    int used;
};

/* The device bytes that live NVLS resources hold. */
static size_t held;

size_t standin_nvls_held(void)
{
    return held;
}

static int nvls_channels(long version)
{
    long cc = standin_env_long("CB_STANDIN_CC", 90);
    long channels = 16;
    if (version >= NCCL_VERSION(2, 25, 0) && cc >= 100)
        channels = version >= NCCL_VERSION(2, 27, 0) ? 24 : 32;
    if (version < NCCL_VERSION(2, 27, 0)) {
        long env = standin_env_long("NCCL_NVLS_NCHANNELS",
                                    version < NCCL_VERSION(2, 25, 0) ? 16 : -2);
        if (env >= 0)
            channels = env;
    }
    return channels < 1 ? 1 : (int)channels;   /* config.minCTAs, default 1 */
}

/* Whether a communicator of nranks (all on this node) uses NVLS, and what
 * it maps at creation and at first use, per rank. */
static int nvls_sizes(int nranks, size_t *at_creation, size_t *at_first_use)
{
    long version = standin_nccl_version();
    size_t multicast = standin_multicast_granularity();
    int min_gpus = version >= NCCL_VERSION(2, 28, 7) ? 2 : 3;
    *at_creation = *at_first_use = 0;
    if (version < NCCL_VERSION(2, 18, 0) || standin_env_long("NCCL_NVLS_ENABLE", 2) == 0 ||
        multicast == 0 || nranks < min_gpus || standin_env_long("CB_STANDIN_CC", 90) < 90)
        return 0;
    size_t granularity = version >= NCCL_VERSION(2, 26, 0) ? standin_mem_granularity() : multicast;
    size_t per_head = (size_t)nvls_channels(version) * 2 * (size_t)nranks;
    size_t chunk = (size_t)standin_env_long("NCCL_NVLS_CHUNKSIZE", 128L << 10);
    size_t align = 2u << 20;   /* NVLS_MEM_ALIGN_SIZE: head and tail */
    if (version < NCCL_VERSION(2, 21, 0)) {
        size_t buff = (size_t)standin_env_long("NCCL_BUFFSIZE", 4L << 20);
        *at_creation = standin_round_up(per_head * (buff + align), granularity);
    } else if (version < NCCL_VERSION(2, 22, 0)) {
        *at_creation = standin_round_up(per_head * (chunk * 8 + align), granularity);
    } else {
        *at_creation = standin_round_up(per_head * 16, granularity);
        *at_first_use = standin_round_up(per_head * chunk * 8, granularity);
    }
    return 1;
}

void standin_nvls_share(ncclComm_t comm, ncclComm_t parent)
{
    if (parent != NULL && parent->nvls != NULL) {
        comm->nvls = parent->nvls;
        comm->nvls->members++;
    }
}

static void charge(size_t bytes, const char *when)
{
    held += bytes;
    if (bytes > 0)
        standin_trace("NVLS buffers %zu bytes %s", bytes, when);
}

void standin_nvls_created(ncclComm_t comm)
{
    size_t at_creation = 0, at_first_use = 0;
    if (comm->nvls != NULL && comm->nvls->heads == comm->nranks) {
        standin_trace("NVLS buffers shared with the parent (%d communicators)",
                      comm->nvls->members);
        return;
    }
    standin_nvls_release(comm);   /* the parent's, on another number of ranks */
    if (!nvls_sizes(comm->nranks, &at_creation, &at_first_use))
        return;
    comm->nvls = calloc(1, sizeof *comm->nvls);
    if (comm->nvls == NULL)
        return;
    comm->nvls->members = 1;
    comm->nvls->heads = comm->nranks;
    comm->nvls->at_creation = at_creation;
    comm->nvls->at_first_use = at_first_use;
    charge(at_creation, "at creation");
    if (!comm->runtime_connect)
        standin_nvls_used(comm);
}

void standin_nvls_used(ncclComm_t comm)
{
    standin_nvls *set = comm->nvls;
    if (set == NULL || set->used)
        return;
    set->used = 1;
    charge(set->at_first_use, comm->runtime_connect ? "at first use (2.22 on)"
                                                    : "at creation (no runtime connection)");
}

void standin_nvls_release(ncclComm_t comm)
{
    standin_nvls *set = comm->nvls;
    comm->nvls = NULL;
    if (set != NULL && --set->members == 0) {
        held -= set->at_creation + (set->used ? set->at_first_use : 0);
        free(set);
    }
}
