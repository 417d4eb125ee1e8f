/*
 * The NCCL backend's choice of GPU for each rank. Clusters bind GPUs in two
 * ways: every rank of a node sees all its GPUs (plain mpirun, srun without
 * --gpus-per-task), or each rank sees its own or a few (srun
 * --gpus-per-task=1, --gpu-bind, CUDA_VISIBLE_DEVICES=$SLURM_LOCALID
 * wrappers). Comparing what the ranks of a host see, by PCI bus id, tells
 * them apart without trusting any launcher's environment variables.
 */
#include "device.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/sysinfo.h"
#include "nccl_backend.h"

#define BUS_ID_LEN 32

/* The override's device ordinal, -1 when unset; -2 with b->error set when
 * it names no device among the ndev this rank sees. */
static int override_device(cb_backend *b, int ndev)
{
    /* nccl-tests' variable means the same with one GPU per rank: read it
     * where ours is unset; both set and different is refused. */
    const char *ours = getenv(CB_DEVICE_ENV), *theirs = getenv(CB_TESTS_DEVICE_ENV);
    const char *name = CB_DEVICE_ENV, *text = ours;
    if (ours == NULL || ours[0] == '\0') {
        name = CB_TESTS_DEVICE_ENV;
        text = theirs;
    } else if (theirs != NULL && theirs[0] != '\0' && strcmp(ours, theirs) != 0) {
        cb_backend_fail(b, "%s=%s and %s=%s name different devices: unset one (%s is "
                        "nccl-tests' name for %s)", CB_DEVICE_ENV, ours, CB_TESTS_DEVICE_ENV,
                        theirs, CB_TESTS_DEVICE_ENV, CB_DEVICE_ENV);
        return -2;
    }
    if (text == NULL || text[0] == '\0')
        return -1;
    char *end = NULL;
    long value = strtol(text, &end, 10);
    if (*end != '\0' || value < 0 || value >= ndev) {
        cb_backend_fail(b, "%s=%s names no device: this rank sees %d GPU%s, numbered 0 to %d "
                        "(CUDA_VISIBLE_DEVICES applies)", name, text, ndev,
                        ndev == 1 ? "" : "s", ndev - 1);
        return -2;
    }
    return (int)value;
}

/* "0000:01:00.0,0000:02:00.0": the bus ids of the GPUs this rank sees, in
 * its device order; NULL with b->error set on failure. */
static char *visible_bus_ids(cb_backend *b, int ndev)
{
    char *ids = malloc((size_t)ndev * BUS_ID_LEN + 1);
    if (ids == NULL) {
        cb_backend_fail(b, "out of memory for the bus ids of %d GPUs", ndev);
        return NULL;
    }
    ids[0] = '\0';
    size_t used = 0;
    for (int d = 0; d < ndev; d++) {
        char bus[BUS_ID_LEN] = "";
        if (CUDA_CALL(b, cudaDeviceGetPCIBusId(bus, (int)sizeof bus, d)) != 0) {
            free(ids);
            return NULL;
        }
        used += (size_t)snprintf(ids + used, BUS_ID_LEN + 1, "%s%s", d > 0 ? "," : "", bus);
    }
    return ids;
}

/* "host h1 NCCL_HOSTID=x": this rank's host as NCCL counts hosts. */
static void host_name(char *buf, size_t len)
{
    char name[CB_CTL_HOSTLEN] = "";
    if (gethostname(name, sizeof name - 1) != 0)
        snprintf(name, sizeof name, "unknown");
    const char *hostid = getenv(CB_HOSTID_ENV);
    snprintf(buf, len, "host %s%s%s", name, hostid != NULL ? " " CB_HOSTID_ENV "=" : "",
             hostid != NULL ? hostid : "");
}

/* "ranks 0, 1 and 3": the run ranks of the members of same, collective over
 * same. */
static void member_ranks(cb_ctl *same, cb_ctl *run, char *buf, size_t len)
{
    int n = same->size, me = run->rank;
    int *ranks = malloc((size_t)n * sizeof *ranks);
    int ok = ranks != NULL;
    cb_ctl_allreduce(same, CB_CTL_IN_PLACE, &ok, 1, CB_CTL_INT, CB_CTL_LAND);
    if (!ok) {
        free(ranks);
        snprintf(buf, len, "%d ranks", n);
        return;
    }
    cb_ctl_allgather(same, &me, sizeof(int), ranks);
    size_t used = (size_t)snprintf(buf, len, "ranks");
    for (int i = 0; i < n && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s %d",
                                 i == 0 ? "" : i == n - 1 ? " and" : ",", ranks[i]);
    free(ranks);
}

/* This rank's place among the ranks of host that see the same GPUs (by
 * their bus id lists), and how many they are; -1 out of memory. Collective
 * over host. */
static int same_view(cb_ctl *host, int local_rank, const char *ids, int *place, int *count)
{
    cb_ctl *same;
    if (cb_sysinfo_same_text_comm(host, local_rank, ids, &same) != 0)
        return -1;
    *place = same->rank;
    *count = same->size;
    cb_ctl_free(&same);
    return 0;
}

/* The sharers of this rank's GPU: on the machine (they share its memory)
 * and on the host (refused). Collective over run and host. */
static int check_sharing(cb_backend *b, cb_ctl *run, cb_ctl *host, cb_nccl_device *out,
                         int ndev, int viewers)
{
    char bus[BUS_ID_LEN] = "";
    int failed = CUDA_CALL(b, cudaDeviceGetPCIBusId(bus, (int)sizeof bus, out->device)) != 0;
    if (cb_backend_agree(run, b, failed) != 0)
        return -1;
    int rank = run->rank;
    cb_ctl *machine = NULL, *same_host = NULL;
    if (cb_sysinfo_same_text_comm(run, rank, bus, &machine) != 0)
        return cb_backend_fail(b, "out of memory for the GPU ids of this machine's ranks");
    out->sharers = machine->size;
    cb_ctl_free(&machine);
    if (cb_sysinfo_same_text_comm(host, out->local_rank, bus, &same_host) != 0)
        return cb_backend_fail(b, "out of memory for the GPU ids of this host's ranks");
    int together = 1;
    together = same_host->size;
    if (together > 1) {
        char where[CB_CTL_HOSTLEN + 64], ranks[160], advice[96] = "";
        host_name(where, sizeof where);
        member_ranks(same_host, run, ranks, sizeof ranks);
        if (viewers > ndev)
            snprintf(advice, sizeof advice, "%d ranks of this host see the same %d GPU%s, so "
                     "start at most %d, ", viewers, ndev, ndev == 1 ? "" : "s", ndev);
        const char *visible = getenv("CUDA_VISIBLE_DEVICES");
        cb_backend_fail(b, "%s: %s would %s drive GPU %s (CUDA_VISIBLE_DEVICES=%s): the nccl "
                        "backend needs one GPU per rank; %sgive each rank its own GPU, or "
                        "give ranks different " CB_HOSTID_ENV " values to share a GPU for "
                        "testing", where, ranks, together == 2 ? "both" : "all", bus,
                        visible != NULL ? visible : "unset", advice);
    }
    cb_ctl_free(&same_host);
    return together > 1 ? -1 : 0;
}

int cb_nccl_device_choose(cb_backend *b, cb_ctl *run, cb_nccl_device *out)
{
    memset(out, 0, sizeof *out);
    out->device = -1;
    int ndev = 0, forced = -1;
    char *ids = NULL;
    int failed = CUDA_CALL(b, cudaGetDeviceCount(&ndev)) != 0;
    if (!failed && (forced = override_device(b, ndev)) == -2)
        failed = 1;
    if (!failed && (ids = visible_bus_ids(b, ndev)) == NULL)
        failed = 1;
    if (cb_backend_agree(run, b, failed) != 0) {
        free(ids);
        return -1;
    }

    int rank = run->rank;
    cb_ctl *host;
    failed = cb_sysinfo_host_comm(run, rank, &host) != 0;
    if (failed)
        cb_backend_fail(b, "out of memory for the host ids of this machine's ranks");
    int place = 0, viewers = 1;
    if (!failed) {
        out->local_rank = host->rank;
        out->local_ranks = host->size;
        if (same_view(host, out->local_rank, ids, &place, &viewers) != 0)
            failed = cb_backend_fail(b, "out of memory for the GPU lists of this host's ranks");
    }
    free(ids);
    if (!failed) {
        /* The ranks that see the same GPUs share them out in local rank
         * order: all of the host's ranks when every rank sees every GPU;
         * each alone, taking its first, when each was given its own. Ranks
         * beyond the GPUs wrap round, so that the sharing check names them. */
        out->device = forced >= 0 ? forced : place % ndev;
        failed = CUDA_CALL(b, cudaSetDevice(out->device)) != 0;
    }
    if (cb_backend_agree(run, b, failed) != 0) {
        if (host != NULL)
            cb_ctl_free(&host);
        return -1;
    }
    /* Advice on how many ranks to start fits only the automatic choice. */
    failed = check_sharing(b, run, host, out, ndev, forced >= 0 ? 0 : viewers) != 0;
    cb_ctl_free(&host);
    return cb_backend_agree(run, b, failed);
}
