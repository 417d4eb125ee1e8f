/*
 * Link faults for --expect auto: the links the facts show degraded, each
 * of which fails the run (status 8) whatever the rows measure, since the
 * model counts only the links that are up at the rate they trained at,
 * and a degraded node would otherwise pass against a lowered figure. Pure,
 * like the model: from the facts every rank read (facts.c).
 */
#include "expect/expect.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* The enumeration's cursor: the index-th line is written, the others
 * only counted. */
typedef struct fault_cursor {
    int seen, index;
    char *text;
    size_t len;
} fault_cursor;

static int fault(fault_cursor *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fault(fault_cursor *c, const char *fmt, ...)
{
    if (c->seen++ != c->index)
        return 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->text, c->len, fmt, ap);
    va_end(ap);
    return 1;
}

static int first_of_node(const cb_expect_rank *ranks, int r)
{
    for (int q = 0; q < r; q++)
        if (strcmp(ranks[q].host, ranks[r].host) == 0)
            return 0;
    return 1;
}

/* The fastest up port with a rate among the node's (node: a rank index),
 * or among the other nodes' ports of the same name (name non-NULL). */
static const cb_expect_nic *fastest(const cb_expect_rank *ranks, int nranks, int node,
                                    const char *name, int *where)
{
    const cb_expect_nic *best = NULL;
    for (int r = 0; r < nranks; r++) {
        int same = strcmp(ranks[r].host, ranks[node].host) == 0;
        if (!first_of_node(ranks, r) || (name == NULL ? !same : same))
            continue;
        for (int k = 0; k < ranks[r].nnics; k++) {
            const cb_expect_nic *n = &ranks[r].nics[k];
            if (n->up && n->gbit > 0 && (name == NULL || strcmp(n->name, name) == 0) &&
                (best == NULL || n->gbit > best->gbit)) {
                best = n;
                *where = r;
            }
        }
    }
    return best;
}

/* A node with fewer NIC ports than another: ports missing from sysfs
 * (a card or its driver gone) are not DOWN, so nothing else names them,
 * and the model, counting only what it finds, would lower the figure to
 * match. Names the other node's ports this one lacks. */
static int nic_count_fault(const cb_expect_rank *ranks, int nranks, int r, fault_cursor *c)
{
    int most = -1;
    for (int q = 0; q < nranks; q++)
        if (first_of_node(ranks, q) && strcmp(ranks[q].host, ranks[r].host) != 0 &&
            (most < 0 || ranks[q].nics_found > ranks[most].nics_found))
            most = q;
    if (most < 0 || ranks[r].nics_found >= ranks[most].nics_found)
        return 0;
    char missing[160] = "";
    size_t used = 0;
    for (int k = 0; k < ranks[most].nnics && used < sizeof missing; k++) {
        int here = 0;
        for (int j = 0; j < ranks[r].nnics && !here; j++)
            here = strcmp(ranks[r].nics[j].name, ranks[most].nics[k].name) == 0;
        if (!here)
            used += (size_t)snprintf(missing + used, sizeof missing - used, "%s%s",
                                     used ? ", " : "", ranks[most].nics[k].name);
    }
    return fault(c, "node %s has %d NIC port%s, below node %s with %d%s%s%s", ranks[r].host,
                 ranks[r].nics_found, ranks[r].nics_found == 1 ? "" : "s", ranks[most].host,
                 ranks[most].nics_found, used ? " (not in this node's sysfs: " : "", missing,
                 used ? ")" : "");
}

/* The faults of one node's ports; 1 when the index-th line is among them. */
static int nic_faults(const cb_expect_rank *ranks, int nranks, int r, fault_cursor *c)
{
    const char *host = ranks[r].host;
    if (nic_count_fault(ranks, nranks, r, c))
        return 1;
    for (int k = 0; k < ranks[r].nnics; k++) {
        const cb_expect_nic *n = &ranks[r].nics[k];
        if (!n->up) {
            if (fault(c, "node %s %s is not active (state '%s')", host, n->name,
                      n->state[0] ? n->state : "unreadable"))
                return 1;
            continue;
        }
        if (n->pcie_width_max > 0 && n->pcie_width > 0 && n->pcie_width < n->pcie_width_max &&
            fault(c, "node %s %s (PCI %s): PCIe x%d, below its max x%d", host, n->name,
                  n->bus_id, n->pcie_width, n->pcie_width_max))
            return 1;
        if (n->pcie_gts_max > 0 && n->pcie_gts > 0 && n->pcie_gts < n->pcie_gts_max &&
            fault(c, "node %s %s (PCI %s): PCIe %g GT/s, below its max %g GT/s", host, n->name,
                  n->bus_id, n->pcie_gts, n->pcie_gts_max))
            return 1;
        if (!(n->gbit > 0))
            continue;   /* unreadable: the model says so; not a fault */
        int at = r;
        const cb_expect_nic *peer = fastest(ranks, nranks, r, NULL, &at);
        if (peer != NULL && n->gbit < peer->gbit) {
            if (fault(c, "node %s %s: %g Gb/s, below the node's %s at %g Gb/s", host, n->name,
                      n->gbit, peer->name, peer->gbit))
                return 1;
            continue;
        }
        peer = fastest(ranks, nranks, r, n->name, &at);
        if (peer != NULL && n->gbit < peer->gbit &&
            fault(c, "node %s %s: %g Gb/s, below %s on node %s at %g Gb/s", host, n->name,
                  n->gbit, peer->name, ranks[at].host, peer->gbit))
            return 1;
    }
    return 0;
}

/* The faults of rank r's GPU links as NVML gives them, and against the
 * GPU at the same PCI place on the other nodes: fewer NVLinks listed. */
static int gpu_faults(const cb_expect_rank *ranks, int nranks, int r, fault_cursor *c)
{
    const cb_expect_gpu *g = &ranks[r].gpu;
    if (!g->present || g->why[0] != '\0')
        return 0;
    int peer = -1;
    for (int q = 0; q < nranks; q++) {
        const cb_expect_gpu *o = &ranks[q].gpu;
        if (o->present && o->why[0] == '\0' && strcmp(o->bus_id, g->bus_id) == 0 &&
            strcmp(ranks[q].host, ranks[r].host) != 0 &&
            (peer < 0 || o->nvlinks > ranks[peer].gpu.nvlinks))
            peer = q;
    }
    if (peer >= 0 && g->nvlinks < ranks[peer].gpu.nvlinks &&
        fault(c, "node %s GPU %s: NVML lists %d NVLinks, below the same GPU on node %s with %d",
              ranks[r].host, g->bus_id, g->nvlinks, ranks[peer].host, ranks[peer].gpu.nvlinks))
        return 1;
    if (g->nvlinks_down != 0) {
        char list[96] = "";
        size_t used = 0;
        for (int link = 0; link < 32 && used < sizeof list; link++)
            if (g->nvlinks_down >> link & 1u)
                used += (size_t)snprintf(list + used, sizeof list - used, "%s%d",
                                         used ? ", " : "", link);
        if (fault(c, "node %s GPU %s: NVLink %s down (%d of %d up)", ranks[r].host, g->bus_id,
                  list, g->nvlinks_up, g->nvlinks))
            return 1;
    }
    return g->pcie_width_max > 0 && g->pcie_width > 0 && g->pcie_width < g->pcie_width_max &&
           fault(c, "node %s GPU %s: PCIe x%d, below its max x%d", ranks[r].host, g->bus_id,
                 g->pcie_width, g->pcie_width_max);
}

int cb_expect_link_fault(const cb_expect_rank *ranks, int nranks, int index, char *text,
                         size_t len)
{
    fault_cursor c = {0, index, text, len};
    for (int r = 0; r < nranks; r++) {
        if (first_of_node(ranks, r) && nic_faults(ranks, nranks, r, &c))
            return 1;
        if (gpu_faults(ranks, nranks, r, &c))
            return 1;
    }
    return 0;
}
