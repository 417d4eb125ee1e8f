/*
 * The expectation model of --expect auto: pure, from the facts every rank
 * read (facts.c). A row's expected bus bandwidth is the slowest link class
 * its traffic crosses: inside a node, each GPU's NVLinks (when every GPU of
 * the node reaches an NVSwitch) or else its PCIe link; between nodes, the
 * node's NICs that are up. Every figure used goes into the text, so that a
 * reader can redo the sum; a figure missing gives no expectation, never a
 * guess. nccl-collbench(1), EXPECTED BANDWIDTH, states the same rules.
 */
#include "expect/expect.h"
#include "common/format.h"

#include <stdio.h>
#include <string.h>

int cb_expect_digits(double gbps)
{
    return gbps >= 1 ? 2 : gbps >= 0.01 ? 4 : 6;
}

cb_expect_traffic cb_expect_traffic_of(const char *collective)
{
    static const char *const spread[] = {"alltoall", "alltoallv", "gather", "scatter"};
    if (strcmp(collective, "barrier") == 0)
        return CB_TRAFFIC_NONE;
    if (strcmp(collective, "sendrecv") == 0)
        return CB_TRAFFIC_PEER;
    for (size_t i = 0; i < sizeof spread / sizeof spread[0]; i++)
        if (strcmp(collective, spread[i]) == 0)
            return CB_TRAFFIC_SPREAD;
    return CB_TRAFFIC_RING;
}

/* NVML's version codes (nvmlNvlinkVersion_t): 1 NVLink 1.0, 2 2.0, 3 2.2,
 * 4 3.0, 5 3.1, 6 4.0, 7 5.0. Hopper's NVML answers 7 for its NVLink 4
 * (architecture code 9). One direction of one link. */
#define NVML_ARCH_HOPPER 9

double cb_expect_nvlink_gbps(int code, int arch, const char **generation)
{
    const char *gen = "unknown";
    double gbps = 0;
    switch (code) {
    case 1: gen = "NVLink 1"; gbps = 20; break;
    case 2: case 3: gen = "NVLink 2"; gbps = 25; break;
    case 4: case 5: gen = "NVLink 3"; gbps = 25; break;
    case 6: gen = "NVLink 4"; gbps = 25; break;
    case 7:
        gen = arch == NVML_ARCH_HOPPER ? "NVLink 4" : "NVLink 5";
        gbps = arch == NVML_ARCH_HOPPER ? 25 : 50;
        break;
    default: break;
    }
    if (generation != NULL)
        *generation = gen;
    return gbps;
}

/* Transfer rate x encoding / 8: 2.5 and 5 GT/s at 8b/10b, 8, 16 and 32
 * GT/s at 128b/130b, 64 GT/s in 242-of-256-byte flits. */
double cb_expect_pcie_lane_gbps(int gen)
{
    static const double lane[] = {0, 0.25, 0.5, 0.98462, 1.96923, 3.93846, 7.5625};
    return gen >= 1 && gen <= 6 ? lane[gen] : 0;
}

/* Whether the GPU's NVLinks carry its traffic inside the node. */
static int uses_nvlink(const cb_expect_gpu *g)
{
    return g->nvlinks_up > 0 && g->nvlink_to_switch == 1;
}

/* A GPU's figure on its NVLinks (nvlink) or its PCIe link; 0 with why. */
static double gpu_figure(const cb_expect_gpu *g, int nvlink, char *how, size_t len)
{
    how[0] = '\0';
    if (!g->present) {
        cb_append(how, len, "no GPU");
        return 0;
    }
    if (g->why[0] != '\0') {
        cb_append(how, len, "%s", g->why);
        return 0;
    }
    if (nvlink) {
        const char *gen;
        double link = cb_expect_nvlink_gbps(g->nvlink_code, g->arch, &gen);
        if (link == 0) {
            cb_append(how, len, "GPU %s: NVLink version code %d is unknown to this model",
                      g->bus_id, g->nvlink_code);
            return 0;
        }
        cb_append(how, len, "GPU %s %s %d up x %g GB/s = %.2f GB/s", g->bus_id, gen, g->nvlinks_up,
            link, g->nvlinks_up * link);
        return g->nvlinks_up * link;
    }
    if (g->nvlinks_up > 0 && g->nvlink_to_switch != 1) {
        cb_append(how, len, "GPU %s: its NVLinks %s, which this model does not cover", g->bus_id,
            g->nvlink_to_switch == 0 ? "reach GPUs directly (no NVSwitch)"
                                     : "reach devices NVML cannot name");
        return 0;
    }
    double lane = cb_expect_pcie_lane_gbps(g->pcie_gen);
    if (lane == 0 || g->pcie_width <= 0) {
        cb_append(how, len, "GPU %s: its PCIe link (Gen%d x%d) cannot be read", g->bus_id,
                  g->pcie_gen, g->pcie_width);
        return 0;
    }
    cb_append(how, len, "GPU %s PCIe Gen%d x%d x %g GB/s = %.*f GB/s", g->bus_id, g->pcie_gen,
        g->pcie_width, lane, cb_expect_digits(lane * g->pcie_width), lane * g->pcie_width);
    return lane * g->pcie_width;
}

/* A node's NICs that are up, GB/s; 0 with why. */
static double node_nics(const cb_expect_rank *r, char *how, size_t len)
{
    how[0] = '\0';
    if (r->nic_why[0] != '\0') {
        cb_append(how, len, "node %s: %s", r->host, r->nic_why);
        return 0;
    }
    double gbit = 0;
    int up = 0;
    for (int i = 0; i < r->nnics; i++) {
        if (!r->nics[i].up)
            continue;
        if (!(r->nics[i].gbit > 0)) {
            cb_append(how, len, "node %s: the rate of %s, which is up, cannot be read (%s)",
                      r->host, r->nics[i].name,
                      r->nics[i].rate_why[0] ? r->nics[i].rate_why : "none");
            return 0;
        }
        gbit += r->nics[i].gbit;
        up++;
    }
    if (up == 0) {
        cb_append(how, len, "node %s: no NIC is up", r->host);
        return 0;
    }
    cb_append(how, len, "node %s NICs %d up, %g Gb/s = %.*f GB/s", r->host, up, gbit,
        cb_expect_digits(gbit / 8), gbit / 8);
    return gbit / 8;
}

#define MAX_NODES_SEEN 4096

void cb_expect_auto(const cb_expect_rank *ranks, const int *members, int n,
                    const char *collective, int host_memory, cb_expect_figure *out)
{
    out->gbps = 0;
    out->how[0] = '\0';
    char part[320];
    cb_expect_traffic traffic = cb_expect_traffic_of(collective);
    if (traffic == CB_TRAFFIC_NONE) {
        cb_append(out->how, sizeof out->how, "%s moves no data", collective);
        return;
    }
    if (n < 2) {
        cb_append(out->how, sizeof out->how, "one rank crosses no link");
        return;
    }
    /* Nodes: members grouped by host, each by its first member. */
    int first[MAX_NODES_SEEN], count[MAX_NODES_SEEN], nnodes = 0;
    for (int i = 0; i < n; i++) {
        int node = 0;
        while (node < nnodes && strcmp(ranks[first[node]].host, ranks[members[i]].host) != 0)
            node++;
        if (node == nnodes) {
            if (nnodes == MAX_NODES_SEEN) {
                cb_append(out->how, sizeof out->how, "more than %d nodes", MAX_NODES_SEEN);
                return;
            }
            first[nnodes] = members[i];
            count[nnodes++] = 0;
        }
        count[node]++;
    }

    double best = 0;   /* the slowest class so far; 0 until one is counted */
    char inside[320] = "", between[320] = "";
    /* Inside each node that holds more than one member. */
    for (int node = 0; node < nnodes; node++) {
        if (count[node] < 2)
            continue;
        if (host_memory) {
            if (nnodes == 1) {
                cb_append(out->how, sizeof out->how, "the %s backend moves host memory: inside a "
                    "node there is no link to expect", "MPI");
                return;
            }
            continue;   /* host memory inside a node: only the NICs are modelled */
        }
        int nvlink = 1;
        for (int i = 0; i < n; i++)
            if (strcmp(ranks[members[i]].host, ranks[first[node]].host) == 0 &&
                !uses_nvlink(&ranks[members[i]].gpu))
                nvlink = 0;
        double slowest = 0;
        for (int i = 0; i < n; i++) {
            const cb_expect_rank *r = &ranks[members[i]];
            if (strcmp(r->host, ranks[first[node]].host) != 0)
                continue;
            double f = gpu_figure(&r->gpu, nvlink, part, sizeof part);
            if (f == 0) {
                cb_append(out->how, sizeof out->how, "inside node %s: %s", r->host, part);
                return;
            }
            if (slowest == 0 || f < slowest) {
                slowest = f;
                snprintf(inside, sizeof inside, "inside node %s %s: %s", r->host,
                         nvlink ? "NVLink" : "PCIe", part);
            }
        }
        if (best == 0 || slowest < best)
            best = slowest;
    }
    /* Between nodes. */
    if (nnodes > 1) {
        double slowest = 0;
        for (int node = 0; node < nnodes; node++) {
            double nic = node_nics(&ranks[first[node]], part, sizeof part);
            if (nic == 0) {
                cb_append(out->how, sizeof out->how, "between nodes: %s", part);
                return;
            }
            double f = nic;
            char why[160] = " (ring channels spread over every NIC of the node)";
            if (traffic == CB_TRAFFIC_PEER) {
                f = nic / count[node];
                snprintf(why, sizeof why, " / %d rank%s = %.*f GB/s", count[node],
                         cb_plural(count[node]), cb_expect_digits(f), f);
            } else if (traffic == CB_TRAFFIC_SPREAD) {
                f = nic / count[node] * (n - 1) / (n - count[node]);
                snprintf(why, sizeof why, " / %d rank%s x (%d-1)/(%d-%d) = %.*f GB/s",
                         count[node], cb_plural(count[node]), n, n, count[node],
                         cb_expect_digits(f), f);
            }
            if (slowest == 0 || f < slowest) {
                slowest = f;
                snprintf(between, sizeof between, "between nodes: %s%s", part, why);
            }
        }
        if (best == 0 || slowest < best)
            best = slowest;
    }
    if (best == 0) {
        cb_append(out->how, sizeof out->how, "no link class applies");
        return;
    }
    out->gbps = best;
    cb_append(out->how, sizeof out->how, "%.*f GB/s, the slowest of: ", cb_expect_digits(best),
              best);
    cb_append(out->how, sizeof out->how, "%s%s%s", inside, inside[0] && between[0] ? "; " : "",
        between);
}

/* A GPU's facts, one line. */
static void describe_gpu(const cb_expect_rank *ranks, int r, char *text, size_t len)
{
    const cb_expect_gpu *g = &ranks[r].gpu;
    snprintf(text, len, "Expect rank %d GPU %s", r, g->bus_id);
    if (g->why[0] != '\0') {
        cb_append(text, len, ": %s", g->why);
        return;
    }
    const char *gen;
    double link = cb_expect_nvlink_gbps(g->nvlink_code, g->arch, &gen);
    cb_append(text, len, " %s: NVLink %d of %d up", g->name, g->nvlinks_up, g->nvlinks);
    if (g->nvlinks_up > 0)
        cb_append(text, len, " (NVML code %d: %s, %g GB/s a link; %s)", g->nvlink_code, gen, link,
            g->nvlink_to_switch == 1 ? "to NVSwitch" : g->nvlink_to_switch == 0 ? "to GPUs"
                                                                                  : "to ?");
    cb_append(text, len, "; PCIe Gen%d x%d (max x%d, Gen%d now)", g->pcie_gen, g->pcie_width,
        g->pcie_width_max, g->pcie_gen_now);
    if (g->pcie_width_max > 0 && g->pcie_width < g->pcie_width_max)
        cb_append(text, len, " NARROWER THAN ITS MAX");
    int near_any = 0;
    for (int i = 0; i < ranks[r].nnics; i++)
        if (ranks[r].nics[i].near_gpu)
            cb_append(text, len, "%s%s", near_any++ ? ", " : "; near ", ranks[r].nics[i].name);
    if (!near_any)
        cb_append(text, len, "; near no NIC");
}

static void describe_node(const cb_expect_rank *r, char *text, size_t len)
{
    snprintf(text, len, "Expect node %s:", r->host);
    if (r->nic_why[0] != '\0') {
        cb_append(text, len, " %s", r->nic_why);
        return;
    }
    for (int i = 0; i < r->nnics; i++) {
        const cb_expect_nic *nic = &r->nics[i];
        if (nic->up && nic->gbit > 0)
            cb_append(text, len, "%s %s %g Gb/s", i ? "," : "", nic->name, nic->gbit);
        else if (nic->up)
            cb_append(text, len, "%s %s up, rate unreadable (%s)", i ? "," : "", nic->name,
                nic->rate_why);
        else
            cb_append(text, len, "%s %s DOWN", i ? "," : "", nic->name);
    }
    if (r->nics_found > r->nnics)
        cb_append(text, len, "; %d more NIC ports not read (at most %d a node; the expectation "
                  "counts these %d)", r->nics_found - r->nnics, CB_EXPECT_MAX_NICS, r->nnics);
}

int cb_expect_describe(const cb_expect_rank *ranks, int nranks, int host_memory, int index,
                       char *text, size_t len)
{
    int line = 0;
    for (int r = 0; r < nranks; r++) {
        int new_node = 1;
        for (int q = 0; q < r && new_node; q++)
            new_node = strcmp(ranks[q].host, ranks[r].host) != 0;
        if (new_node && line++ == index) {
            describe_node(&ranks[r], text, len);
            return 1;
        }
        if (!host_memory && ranks[r].gpu.present && line++ == index) {
            describe_gpu(ranks, r, text, len);
            return 1;
        }
    }
    return 0;
}
