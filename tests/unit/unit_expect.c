/*
 * --expect's pure parts (src/expect/model.c, links.c, rules.c): the link faults, the link
 * rates, the model on hand-made facts (NVLink and PCIe nodes, a GPU at x8,
 * NICs between nodes for each traffic class, a NIC down, figures that
 * cannot be read, the MPI backend's host memory), and the file of floors:
 * its rules, which one applies, and every error naming its line.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "expect/expect.h"
#include "unit.h"

#define NEAR(a, b) (fabs((a) - (double)(b)) < 1e-6 * (fabs((double)(b)) + 1))

static void h100(cb_expect_rank *r, const char *host, int k)
{
    memset(r, 0, sizeof *r);
    snprintf(r->host, sizeof r->host, "%s", host);
    r->group = -1;
    cb_expect_gpu *g = &r->gpu;
    g->present = 1;
    snprintf(g->bus_id, sizeof g->bus_id, "0000:%02x:00.0", k + 1);
    snprintf(g->name, sizeof g->name, "NVIDIA H100 80GB HBM3");
    g->nvlinks = g->nvlinks_up = 18;
    g->nvlink_code = 7;
    g->arch = 9;
    g->nvlink_to_switch = 1;
    g->pcie_gen = 5;
    g->pcie_gen_now = 1;
    g->pcie_width = g->pcie_width_max = 16;
    r->nnics = r->nics_found = 8;
    for (int i = 0; i < 8; i++) {
        snprintf(r->nics[i].name, sizeof r->nics[i].name, "mlx5_%d port 1", i);
        r->nics[i].up = 1;
        r->nics[i].gbit = 400;
    }
}

static void pcie_only(cb_expect_rank *r, const char *host, int k, int width)
{
    h100(r, host, k);
    r->gpu.nvlinks = r->gpu.nvlinks_up = 0;
    r->gpu.nvlink_code = 0;
    r->gpu.nvlink_to_switch = -1;
    r->gpu.pcie_gen = 4;
    r->gpu.pcie_width = width;
}

static double figure(const cb_expect_rank *ranks, int n, const char *coll, int host_memory,
                     char *how)
{
    int members[64];
    for (int i = 0; i < n; i++)
        members[i] = i;
    cb_expect_figure f;
    memset(&f, 0x5a, sizeof f);
    cb_expect_auto(ranks, members, n, coll, host_memory, &f);
    if (how != NULL)
        snprintf(how, sizeof f.how, "%s", f.how);
    return f.gbps;
}

static void test_rates(unit_state *u)
{
    const char *gen = NULL;
    CHECK(u, cb_expect_nvlink_gbps(1, 4, &gen) == 20 && strcmp(gen, "NVLink 1") == 0);
    CHECK(u, cb_expect_nvlink_gbps(4, 7, &gen) == 25 && strcmp(gen, "NVLink 3") == 0);
    CHECK(u, cb_expect_nvlink_gbps(6, 9, &gen) == 25 && strcmp(gen, "NVLink 4") == 0);
    /* Hopper's NVML says 7 for NVLink 4; Blackwell's 7 is NVLink 5. */
    CHECK(u, cb_expect_nvlink_gbps(7, 9, &gen) == 25 && strcmp(gen, "NVLink 4") == 0);
    CHECK(u, cb_expect_nvlink_gbps(7, 10, &gen) == 50 && strcmp(gen, "NVLink 5") == 0);
    CHECK(u, cb_expect_nvlink_gbps(0, 9, NULL) == 0 && cb_expect_nvlink_gbps(99, 9, NULL) == 0);
    CHECK(u, NEAR(cb_expect_pcie_lane_gbps(3), 0.98462));
    CHECK(u, NEAR(cb_expect_pcie_lane_gbps(4) * 16, 31.50768));
    CHECK(u, NEAR(cb_expect_pcie_lane_gbps(5) * 16, 63.01536));
    CHECK(u, cb_expect_pcie_lane_gbps(0) == 0 && cb_expect_pcie_lane_gbps(7) == 0);
    CHECK(u, cb_expect_traffic_of("barrier") == CB_TRAFFIC_NONE);
    CHECK(u, cb_expect_traffic_of("allreduce") == CB_TRAFFIC_RING);
    CHECK(u, cb_expect_traffic_of("hier_allreduce") == CB_TRAFFIC_RING);
    CHECK(u, cb_expect_traffic_of("alltoallv") == CB_TRAFFIC_SPREAD);
    CHECK(u, cb_expect_traffic_of("gather") == CB_TRAFFIC_SPREAD);
    CHECK(u, cb_expect_traffic_of("sendrecv") == CB_TRAFFIC_PEER);
}

static void test_inside_node(unit_state *u)
{
    cb_expect_rank r[8];
    char how[320];
    for (int i = 0; i < 8; i++)
        h100(&r[i], "a", i);
    /* NVLink: 18 links up x 25 GB/s, for every collective inside the node. */
    CHECK(u, NEAR(figure(r, 8, "allreduce", 0, how), 450));
    CHECK(u, strstr(how, "inside node a NVLink") != NULL && strstr(how, "18 up x 25 GB/s"));
    CHECK(u, NEAR(figure(r, 8, "alltoall", 0, NULL), 450));
    /* Two links down on one GPU: that GPU is the slowest. */
    r[5].gpu.nvlinks_up = 16;
    CHECK(u, NEAR(figure(r, 8, "allreduce", 0, how), 400));
    CHECK(u, strstr(how, "0000:06:00.0") != NULL);
    /* A GPU with every NVLink down: the node's class is PCIe. */
    r[5].gpu.nvlinks_up = 0;
    CHECK(u, NEAR(figure(r, 8, "allreduce", 0, how), 63.01536));
    CHECK(u, strstr(how, "PCIe") != NULL);
    /* NVLinks straight to GPUs (no NVSwitch): not modelled, no figure. */
    r[5].gpu.nvlinks_up = 18;
    for (int i = 0; i < 8; i++)
        r[i].gpu.nvlink_to_switch = 0;
    CHECK(u, figure(r, 8, "allreduce", 0, how) == 0 && strstr(how, "no NVSwitch") != NULL);
    /* An NVLink version the model does not know: no figure, never a guess. */
    for (int i = 0; i < 8; i++) {
        r[i].gpu.nvlink_to_switch = 1;
        r[i].gpu.nvlink_code = 42;
    }
    CHECK(u, figure(r, 8, "allreduce", 0, how) == 0 && strstr(how, "code 42") != NULL);
    /* NVML absent: the reason, no figure. */
    for (int i = 0; i < 8; i++)
        h100(&r[i], "a", i);
    snprintf(r[2].gpu.why, sizeof r[2].gpu.why, "NVML (libnvidia-ml.so.1) cannot be loaded");
    CHECK(u, figure(r, 8, "allreduce", 0, how) == 0 && strstr(how, "cannot be loaded") != NULL);

    /* PCIe only, Gen4 x16; one GPU at x8 halves it. */
    pcie_only(&r[0], "p", 0, 16);
    pcie_only(&r[1], "p", 1, 16);
    CHECK(u, NEAR(figure(r, 2, "allreduce", 0, how), 31.50768));
    pcie_only(&r[1], "p", 1, 8);
    CHECK(u, NEAR(figure(r, 2, "allreduce", 0, how), 15.75384));
    CHECK(u, strstr(how, "0000:02:00.0 PCIe Gen4 x8") != NULL);
    /* A width NVML could not read. */
    r[1].gpu.pcie_width = 0;
    CHECK(u, figure(r, 2, "allreduce", 0, how) == 0 && strstr(how, "cannot be read") != NULL);

    /* Host memory (MPI) inside one node: no link to expect. */
    CHECK(u, figure(r, 2, "allreduce", 1, how) == 0 && strstr(how, "host memory") != NULL);
    /* Nothing moves, or one rank crosses nothing. */
    CHECK(u, figure(r, 2, "barrier", 0, how) == 0 && strstr(how, "no data") != NULL);
    CHECK(u, figure(r, 1, "allreduce", 0, how) == 0 && strstr(how, "one rank") != NULL);
}

static void test_between_nodes(unit_state *u)
{
    cb_expect_rank r[16];
    char how[320];
    for (int i = 0; i < 16; i++)
        h100(&r[i], i < 8 ? "a" : "b", i % 8);
    /* Ring channels over all 8 NICs: 3200 Gb/s = 400 GB/s, below NVLink's 450. */
    CHECK(u, NEAR(figure(r, 16, "allreduce", 0, how), 400));
    CHECK(u, strstr(how, "between nodes: node a NICs 8 up, 3200 Gb/s = 400.00 GB/s") != NULL);
    /* alltoall: each rank's share, 400 / 8, x (16-1)/(16-8). */
    CHECK(u, NEAR(figure(r, 16, "alltoall", 0, how), 400.0 / 8 * 15 / 8));
    /* sendrecv: each rank's share. */
    CHECK(u, NEAR(figure(r, 16, "sendrecv", 0, NULL), 50));
    /* A NIC down on node b: the up ones carry 2800 Gb/s; the preamble names it. */
    r[8].nics[7].up = 0;
    r[8].nics[7].gbit = 0;
    CHECK(u, NEAR(figure(r, 16, "allreduce", 0, how), 350));
    CHECK(u, strstr(how, "node b NICs 7 up") != NULL);
    char line[512];
    int found = 0;
    for (int i = 0; cb_expect_describe(r, 16, 0, i, line, sizeof line); i++)
        found += strstr(line, "Expect node b:") != NULL && strstr(line, "mlx5_7 port 1 DOWN");
    CHECK(u, found == 1);
    /* A NIC up whose rate cannot be read: no figure. */
    r[0].nics[3].gbit = 0;
    CHECK(u, figure(r, 16, "allreduce", 0, how) == 0 && strstr(how, "mlx5_3") != NULL);
    r[0].nics[3].gbit = 400;
    /* No NIC found at all. */
    r[0].nnics = 0;
    snprintf(r[0].nic_why, sizeof r[0].nic_why, "no NIC under /sys/class/infiniband");
    CHECK(u, figure(r, 16, "allreduce", 0, how) == 0 && strstr(how, "no NIC") != NULL);

    /* The MPI backend between nodes: the NICs alone, one rank a node. */
    cb_expect_rank m[4];
    for (int i = 0; i < 4; i++) {
        h100(&m[i], i < 2 ? "a" : "b", i);
        m[i].gpu.present = 0;
    }
    CHECK(u, NEAR(figure(m, 4, "allreduce", 1, how), 400));
    CHECK(u, strstr(how, "inside") == NULL);
    CHECK(u, NEAR(figure(m, 4, "alltoall", 1, NULL), 400.0 / 2 * 3 / 2));
    /* The preamble of host memory lists nodes, no GPU. */
    int lines = 0;
    for (int i = 0; cb_expect_describe(m, 4, 1, i, line, sizeof line); i++)
        lines++;
    CHECK(u, lines == 2);
}

static void test_rules(unit_state *u)
{
    cb_expect_rules rules;
    char err[256];
    const char *text =
        "# floors for 8-GPU H100 nodes\n"
        "gpu:*H100*   allreduce  64M  360   # NVLink inside a node\n"
        "gpu:NVIDIA_H100_80GB_HBM3 allreduce 1G 380\n"
        "\n"
        "host:dgx-*   *          1G   40\n"
        "host:dgx-*   *          1G   45\n";
    CHECK(u, cb_expect_rules_parse(text, "f", &rules, err, sizeof err) == 0);
    CHECK(u, rules.n == 4);
    CHECK(u, rules.rules[0].by_gpu && rules.rules[0].from_bytes == 64u << 20 &&
             rules.rules[0].line == 2 && rules.rules[0].gbps == 360);
    const char *models[2] = {"NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB HBM3"};
    const char *hosts[2] = {"dgx-01", "dgx-02"};
    const cb_expect_rule *r;
    /* Below every FROM: none. */
    CHECK(u, cb_expect_rules_find(&rules, models, hosts, 2, "allreduce", 1 << 20) == NULL);
    r = cb_expect_rules_find(&rules, models, hosts, 2, "allreduce", 128u << 20);
    CHECK(u, r != NULL && r->line == 2);
    /* The largest FROM wins; on a tie, the later line. */
    r = cb_expect_rules_find(&rules, models, hosts, 2, "allreduce", 2ull << 30);
    CHECK(u, r != NULL && r->line == 6);
    r = cb_expect_rules_find(&rules, models, hosts, 2, "alltoall", 2ull << 30);
    CHECK(u, r != NULL && r->line == 6 && r->gbps == 45);
    /* Every rank must match: one host outside the pattern, one GPU another model. */
    const char *mixed_hosts[2] = {"dgx-01", "other"};
    CHECK(u, cb_expect_rules_find(&rules, models, mixed_hosts, 2, "alltoall", 2ull << 30) == NULL);
    const char *mixed_models[2] = {"NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB"};
    r = cb_expect_rules_find(&rules, mixed_models, mixed_hosts, 2, "allreduce", 2ull << 30);
    CHECK(u, r == NULL);
    cb_expect_rules_free(&rules);

    static const struct {
        const char *text, *message;
    } bad[] = {
        {"gpu:* allreduce 1G\n", "f:1: 3 fields, expected 4"},
        {"\n# c\ngpu:* allreduce 1G 10 extra\n", "f:3: 5 fields, expected 4"},
        {"node:* allreduce 1G 10\n", "f:1: 'node:*': MATCH is gpu:PATTERN or host:PATTERN"},
        {"gpu: allreduce 1G 10\n", "f:1: 'gpu:': the pattern is empty"},
        {"gpu:* allreduse 1G 10\n", "f:1: 'allreduse' is not a collective"},
        {"gpu:* * 1X 10\n", "f:1: '1X' is not a size in bytes"},
        {"gpu:* * 1G -3\n", "f:1: '-3' is not a positive number of GB/s"},
        {"gpu:* * 1G 0\n", "f:1: '0' is not a positive number"},
        {"gpu:* * 1G 10GB\n", "f:1: '10GB' is not a positive number"},
        {"gpu:* * 1G 10\nhost:* * 1G nan\n", "f:2: 'nan' is not a positive number"},
        {"# only a comment\n\n", "f: no rule"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        int rc = cb_expect_rules_parse(bad[i].text, "f", &rules, err, sizeof err);
        CHECK(u, rc == -1 && rules.rules == NULL && rules.n == 0);
        if (strncmp(err, bad[i].message, strlen(bad[i].message)) != 0) {
            fprintf(stderr, "rule %zu: got '%s', want '%s...'\n", i, err, bad[i].message);
            CHECK(u, 0);
        }
    }
    CHECK(u, cb_expect_rules_load("/nonexistent/floors", &rules, err, sizeof err) == -1);
    CHECK(u, strstr(err, "/nonexistent/floors: cannot be read") == err);
}

/* The link faults (links.c): one line each, in rank order, node's ports
 * once per node; none on healthy facts. */
static void test_link_faults(unit_state *u)
{
    cb_expect_rank r[4];
    char line[512];
    h100(&r[0], "a", 0);
    h100(&r[1], "a", 1);
    h100(&r[2], "b", 0);
    h100(&r[3], "b", 1);
    CHECK(u, cb_expect_link_fault(r, 4, 0, line, sizeof line) == 0);
    /* A port down on a, its copy on a's second rank not judged again. */
    r[0].nics[7].up = r[1].nics[7].up = 0;
    r[0].nics[7].gbit = r[1].nics[7].gbit = 0;
    snprintf(r[0].nics[7].state, sizeof r[0].nics[7].state, "1: DOWN");
    /* b's mlx5_1 at 200: below b's others; b's GPU 2 at x8 and links down. */
    r[2].nics[1].gbit = r[3].nics[1].gbit = 200;
    r[3].gpu.pcie_width = 8;
    r[3].gpu.nvlinks_up = 16;
    r[3].gpu.nvlinks_down = 1u << 3 | 1u << 9;
    const char *want[] = {
        "node a mlx5_7 port 1 is not active (state '1: DOWN')",
        "node b mlx5_1 port 1: 200 Gb/s, below the node's mlx5_0 port 1 at 400 Gb/s",
        "node b GPU 0000:02:00.0: NVLink 3, 9 down (16 of 18 up)",
        "node b GPU 0000:02:00.0: PCIe x8, below its max x16",
    };
    for (int i = 0; i < 4; i++) {
        CHECK(u, cb_expect_link_fault(r, 4, i, line, sizeof line) == 1);
        CHECK(u, strcmp(line, want[i]) == 0);
    }
    CHECK(u, cb_expect_link_fault(r, 4, 4, line, sizeof line) == 0);
    /* Every port of b at 200: each below the same port on a. */
    h100(&r[2], "b", 0);
    for (int i = 0; i < 8; i++)
        r[2].nics[i].gbit = 200;
    r[0].nics[7].up = 1;
    r[0].nics[7].gbit = 400;
    CHECK(u, cb_expect_link_fault(r, 3, 0, line, sizeof line) == 1);
    CHECK(u, strcmp(line, "node b mlx5_0 port 1: 200 Gb/s, below mlx5_0 port 1 on node a at "
                          "400 Gb/s") == 0);
    CHECK(u, cb_expect_link_fault(r, 3, 7, line, sizeof line) == 1);
    CHECK(u, cb_expect_link_fault(r, 3, 8, line, sizeof line) == 0);
    /* b's mlx5_4..7 absent from its sysfs (not DOWN): a fault, though
     * every port b has is up at its rate (issue 44). */
    h100(&r[2], "b", 0);
    r[2].nnics = r[2].nics_found = 4;
    CHECK(u, cb_expect_link_fault(r, 3, 0, line, sizeof line) == 1);
    CHECK(u, strcmp(line, "node b has 4 NIC ports, below node a with 8 (not in this node's "
                          "sysfs: mlx5_4 port 1, mlx5_5 port 1, mlx5_6 port 1, mlx5_7 port 1)")
                 == 0);
    CHECK(u, cb_expect_link_fault(r, 3, 1, line, sizeof line) == 0);
    /* More ports than the facts hold: the node's line says how many were
     * not read. */
    r[2].nnics = 8;
    r[2].nics_found = 20;
    r[0].nics_found = r[1].nics_found = 20;
    int noted = 0;
    for (int i = 0; cb_expect_describe(r, 3, 0, i, line, sizeof line); i++)
        noted += strstr(line, "Expect node b:") != NULL &&
                 strstr(line, "; 12 more NIC ports not read (at most 16 a node") != NULL;
    CHECK(u, noted == 1);
}

int main(void)
{
    unit_state u = {0, 0};
    test_link_faults(&u);
    test_rates(&u);
    test_inside_node(&u);
    test_between_nodes(&u);
    test_rules(&u);
    return unit_done(&u, "unit_expect");
}
