/*
 * The stand-in's NVLS buffers (nvls.c; docs/design/nccl-contract.md, G4
 * and G9): how much a communicator maps on a device with multicast, and
 * when, by version. Needs 4 ranks or more: before 2.28.7 NCCL uses NVLS
 * only with more than 2 GPUs on the node (transport/nvls.cc,
 * ncclNvlsInit: "gpuCount <= 2").
 */
#include <stdlib.h>

#include "rules.h"

#define MIB ((size_t)1 << 20)

static size_t free_now(void)
{
    size_t free_bytes = 0, total = 0;
    cudaMemGetInfo(&free_bytes, &total);
    return free_bytes;
}

static int world_size(void)
{
    int n = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    return n;
}

/* A blocking communicator over every rank whose children share its
 * resources when split_share says so. */
static ncclResult_t world_sharing(ncclComm_t *comm, int split_share)
{
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 1;
    config.splitShare = split_share;
    return rules_comm_world_config(comm, &config);
}

/* One allreduce on comm, waited for: 0, or -1. */
static int all_reduce(ncclComm_t comm, cudaStream_t s, float *buf)
{
    return ncclAllReduce(buf, buf, 4, ncclFloat32, ncclSum, comm, s) == ncclSuccess &&
                   cudaStreamSynchronize(s) == cudaSuccess
               ? 0
               : -1;
}

/* The NVLS buffers' size and moment by version (nvls.c's formulas with
 * 16 channels, one head per rank, 2 MiB granularities), none without
 * multicast or with NCCL_NVLS_ENABLE=0. */
int rules_case_nvls_memory(void)
{
    size_t per_head = 16 * 2 * (size_t)world_size();   /* channels, both ways, heads */
    size_t created = 0, used = 0;
    EXPECT(world_size() >= 3, "run on 3 ranks or more (NVLS needs 3 GPUs before 2.28.7)");
    EXPECT(rules_connect_costs("22105", NULL, NULL, &created, &used) == 0 && created == 0 &&
               used == 0,
           "2.21 without multicast: NVLS buffers charged");
    setenv("CB_STANDIN_MULTICAST_GRANULARITY", "2097152", 1);
    EXPECT(rules_connect_costs("21801", NULL, NULL, &created, &used) == 0 &&
               created == per_head * 6 * MIB && used == 0,
           "2.18: not C * 2 * (4 MiB + 2 MiB) * heads at creation");
    EXPECT(rules_connect_costs("22105", NULL, NULL, &created, &used) == 0 &&
               created == per_head * 3 * MIB && used == 0,
           "2.21: not C * 2 * (8 * 128 KiB + 2 MiB) * heads at creation");
    EXPECT(rules_connect_costs("22203", NULL, NULL, &created, &used) == 0 && created == 2 * MIB &&
               used == per_head * MIB,
           "2.22: not the credits at creation and C * 2 * 1 MiB * heads at first use");
    EXPECT(rules_connect_costs("22809", NULL, NULL, &created, &used) == 0 && created == 2 * MIB &&
               used == per_head * MIB,
           "2.28: not the credits at creation and the buffers at first use");
    EXPECT(rules_connect_costs("22809", "NCCL_RUNTIME_CONNECT", "0", &created, &used) == 0 &&
               created == 2 * MIB + per_head * MIB && used == 0,
           "2.28, NCCL_RUNTIME_CONNECT=0: not all at creation");
    EXPECT(rules_connect_costs("22105", "NCCL_NVLS_ENABLE", "0", &created, &used) == 0 &&
               created == 0 && used == 0,
           "2.21, NCCL_NVLS_ENABLE=0: NVLS buffers charged");
    EXPECT(rules_connect_costs("22809", "NCCL_NVLS_ENABLE", "0", &created, &used) == 0 &&
               created == 0 && used == 0,
           "2.28, NCCL_NVLS_ENABLE=0: NVLS buffers charged");
    EXPECT(rules_connect_costs("22105", "NCCL_NVLS_NCHANNELS", "4", &created, &used) == 0 &&
               created == per_head / 4 * 3 * MIB,
           "2.21: NCCL_NVLS_NCHANNELS=4 not followed");
    EXPECT(rules_trace_count("NVLS buffers ") > 0, "the NVLS buffers were not traced");
    return 0;
}

/* Split children: one that shares its parent's resources (the PARENT's
 * splitShare) on as many ranks maps nothing more; one that does not maps
 * its own, as does a sharing child on fewer ranks (ncclNvlsSetup's
 * nvlsShare needs the same ranks on the node). */
int rules_case_nvls_split(void)
{
    int me = rules_rank();
    size_t per_head = 16 * 2 * (size_t)world_size();
    ncclComm_t parent = NULL, child = NULL;
    cudaStream_t s;
    float *buf = rules_device_memory(4 * sizeof *buf);
    EXPECT(world_size() >= 4 && buf != NULL &&
               cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess,
           "set-up (4 ranks or more)");
    setenv("CB_STANDIN_MULTICAST_GRANULARITY", "2097152", 1);
    setenv("CB_STANDIN_NCCL_VERSION", "22105", 1);
    size_t before = free_now();
    EXPECT(world_sharing(&parent, 1) == ncclSuccess && free_now() == before - per_head * 3 * MIB,
           "2.21: the parent's NVLS buffers");
    EXPECT(ncclCommSplit(parent, 0, me, &child, NULL) == ncclSuccess && child != NULL &&
               free_now() == before - per_head * 3 * MIB,
           "2.21: a sharing child mapped NVLS buffers of its own");
    EXPECT(rules_trace_count("NVLS buffers shared with the parent (2 communicators)") == 1,
           "2.21: the sharing was not traced");
    EXPECT(ncclCommDestroy(parent) == ncclSuccess && free_now() == before - per_head * 3 * MIB,
           "2.21: the parent's end freed buffers its child still uses");
    EXPECT(ncclCommDestroy(child) == ncclSuccess && free_now() == before,
           "2.21: the last end did not free the shared buffers");
    EXPECT(world_sharing(&parent, 0) == ncclSuccess &&
               ncclCommSplit(parent, 0, me, &child, NULL) == ncclSuccess &&
               free_now() == before - 2 * per_head * 3 * MIB,
           "2.21: a child that does not share did not map its own");
    EXPECT(ncclCommDestroy(child) == ncclSuccess && ncclCommDestroy(parent) == ncclSuccess &&
               free_now() == before,
           "2.21: teardown");
    setenv("CB_STANDIN_NCCL_VERSION", "22809", 1);
    EXPECT(world_sharing(&parent, 1) == ncclSuccess &&
               ncclCommSplit(parent, 0, me, &child, NULL) == ncclSuccess &&
               free_now() == before - 2 * MIB,
           "2.28: the sharing pair's credits");
    EXPECT(all_reduce(child, s, buf) == 0 && all_reduce(parent, s, buf) == 0 &&
               free_now() == before - 2 * MIB - per_head * MIB,
           "2.28: the sharing pair's buffers, not once at the first collective");
    ncclComm_t half = NULL;
    EXPECT(ncclCommSplit(parent, me % 2, me, &half, NULL) == ncclSuccess && half != NULL &&
               free_now() == before - 2 * 2 * MIB - per_head * MIB,
           "2.28: a sharing child on fewer ranks did not map its own credits");
    EXPECT(ncclCommDestroy(half) == ncclSuccess && ncclCommDestroy(child) == ncclSuccess &&
               ncclCommDestroy(parent) == ncclSuccess && free_now() == before,
           "2.28: teardown");
    cudaStreamDestroy(s);
    cudaFree(buf);
    return 0;
}
