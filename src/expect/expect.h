/*
 * Expected bandwidth (--expect): the bus bandwidth the links a row's traffic
 * crosses can carry, from the hardware (auto) or from a site's file. The
 * facts are read per rank (facts.c: NVML loaded at run time, sysfs), the
 * model is pure (model.c), the file is parsed here too (rules.c). The
 * engine gathers the facts on rank 0 and asks the model per row
 * (src/engine/expect_driver.c). nccl-collbench(1), EXPECTED BANDWIDTH, is the
 * user's view.
 */
#ifndef CB_EXPECT_H
#define CB_EXPECT_H

#include <stddef.h>
#include <stdint.h>

/* The floors a run is judged against (cb_params.expect; read by the
 * engine's expect_driver.c and min_busbw check, and the printers). */
typedef struct cb_expect_params {
    const char *source;    /* --expect: "auto" or a file of floors; NULL off */
    double expect_ratio;   /* --expect-ratio: below this x expected fails (status 8) [0.8] */
    double min_busbw;      /* --min-busbw GB/s at the largest size; 0 off */
    /* nccl-tests' NCCL_TESTS_MIN_BW in GB/s, NaN when unset
     * (src/options/params_env.c). */
    double tests_min_bw;
} cb_expect_params;

/* The sysfs facts are read under cb_sysfs_root() (host/sysinfo.h). */
#define CB_EXPECT_MAX_NICS 16
#define CB_EXPECT_WHYLEN 160

/* The sane ranges (nccl-collbench-collectives(7), EXPECTED BANDWIDTH): a
 * value read outside them is unreadable, not a figure. */
#define CB_EXPECT_MIN_GBIT 1.0          /* the slowest data-centre NIC */
#define CB_EXPECT_MAX_GBIT 100000.0     /* 100 Tb/s, far above any port */
#define CB_EXPECT_MAX_LANES 32          /* PCIe's widest link */
#define CB_EXPECT_MAX_GTS 128.0         /* PCIe 7's 128 GT/s */

/* One NIC port as sysfs shows it. */
typedef struct cb_expect_nic {
    char name[40];          /* "mlx5_0 port 1" or "eth0" */
    char bus_id[16];        /* its PCI function, "" when it has none */
    int up;                 /* state 4: ACTIVE (InfiniBand) or operstate up (Ethernet) */
    char state[24];         /* the state as read ("1: DOWN", "down"), "" unreadable */
    double gbit;            /* its rate in Gb/s; 0 when down or unreadable */
    char rate_why[48];      /* why an up port's rate is unreadable, else "" */
    int near_gpu;           /* shares a PCI bridge with this rank's GPU */
    /* Its PCI function's link (sysfs current_ and max_link_width, _speed);
     * 0 where unreadable or out of range. */
    int pcie_width, pcie_width_max;
    double pcie_gts, pcie_gts_max;
} cb_expect_nic;

/* One rank's GPU as NVML shows it. */
typedef struct cb_expect_gpu {
    int present;            /* the rank drives a GPU (not host memory) */
    char bus_id[32];
    char name[96];
    char why[CB_EXPECT_WHYLEN]; /* "" when NVML answered, else why no figure */
    int nvlinks;            /* links NVML lists for it */
    int nvlinks_up;
    unsigned nvlinks_down;  /* bit k: link k is listed and down */
    int nvlink_code;        /* NVML's version code of its first link up */
    int arch;               /* NVML's architecture code, -1 unknown */
    int nvlink_to_switch;   /* every link up reaches an NVSwitch: 1, a GPU: 0, unknown: -1 */
    int pcie_gen;           /* the highest generation of device and system */
    int pcie_gen_now;       /* as trained now (lower at idle, to save power) */
    int pcie_width;         /* lanes trained now */
    int pcie_width_max;
} cb_expect_gpu;

/* What one rank found, gathered on rank 0 (fixed size: sent as bytes). */
typedef struct cb_expect_rank {
    char host[64];          /* NCCL_HOSTID where set, as the engine counts nodes */
    int group;              /* --split group, -1 without */
    cb_expect_gpu gpu;
    char nic_why[CB_EXPECT_WHYLEN]; /* "" when the NICs were read */
    int nnics;
    /* Ports found, nnics and those past CB_EXPECT_MAX_NICS (the fixed
     * size every rank sends): the preamble names what was not read. */
    int nics_found;
    cb_expect_nic nics[CB_EXPECT_MAX_NICS];
} cb_expect_rank;

/* links.c: the index-th link fault among the facts of nranks (a port
 * down or inactive; below its maximum width or speed; a NIC below the
 * node's other NICs or the same NIC on other nodes; a node with fewer NIC
 * ports than another, those missing from its sysfs), one line naming the
 * node, the device and the port; 1 with the line in text, 0 when there
 * are no more. Each node's NICs are judged once, from its first rank. */
int cb_expect_link_fault(const cb_expect_rank *ranks, int nranks, int index, char *text,
                         size_t len);

/* facts.c: this rank's facts. bus_id: its GPU's PCI bus id, NULL on a
 * backend with host memory. Never fails: what cannot be read says why. */
void cb_expect_read_rank(const char *bus_id, const char *host, int group, cb_expect_rank *out);

/* How a collective's traffic crosses links (model.c). */
typedef enum cb_expect_traffic {
    CB_TRAFFIC_NONE = 0,    /* barrier: moves no data */
    CB_TRAFFIC_RING,        /* allreduce, allgather, ...: channels spread over the node's NICs */
    CB_TRAFFIC_SPREAD,      /* alltoall, gather, scatter: each rank's data through its share */
    CB_TRAFFIC_PEER         /* sendrecv: each rank to one peer through its share */
} cb_expect_traffic;

cb_expect_traffic cb_expect_traffic_of(const char *collective);

/* Per-link GB/s of one direction for NVML's NVLink version code on an
 * architecture code; 0 for a code this model does not know. */
double cb_expect_nvlink_gbps(int code, int arch, const char **generation);
/* GB/s of one direction per lane of a PCIe generation; 0 when unknown. */
double cb_expect_pcie_lane_gbps(int gen);

/* Decimals that show a figure in GB/s with at least 2 significant digits
 * (2 from 1 GB/s on: 350.00; 0.000125 for 1 Mb/s). */
int cb_expect_digits(double gbps);

/* The figure for one row, or none with why. */
typedef struct cb_expect_figure {
    double gbps;            /* > 0, or 0: no expectation */
    char how[320];          /* the figures used, or why there is none */
} cb_expect_figure;

/* The model: the slowest link class the traffic of collective crosses among
 * the n ranks listed (indexes into ranks). host_memory: the backend moves
 * host memory (MPI), whose paths inside a node are not modelled. */
void cb_expect_auto(const cb_expect_rank *ranks, const int *members, int n,
                    const char *collective, int host_memory, cb_expect_figure *out);

/* The index-th preamble line stating the facts of every node and GPU among
 * nranks; 1 with the line in text, 0 when there are no more. */
int cb_expect_describe(const cb_expect_rank *ranks, int nranks, int host_memory, int index,
                       char *text, size_t len);

/* rules.c: --expect FILE. One rule a line: MATCH COLLECTIVE FROM GBPS. */
typedef struct cb_expect_rule {
    int by_gpu;             /* gpu:PATTERN (the GPU model), else host:PATTERN */
    char pattern[96];
    char collective[32];    /* a collective's name, or * */
    uint64_t from_bytes;    /* the floor applies to rows of this size on */
    double gbps;
    int line;
} cb_expect_rule;

typedef struct cb_expect_rules {
    cb_expect_rule *rules;
    int n;
} cb_expect_rules;

/* Parse text (the file's contents; name for messages). 0, or -1 with
 * "NAME:LINE: what is wrong" in err. */
int cb_expect_rules_parse(const char *text, const char *name, cb_expect_rules *out, char *err,
                          size_t err_len);
/* Read and parse the file at path; -1 with the message in err as above. */
int cb_expect_rules_load(const char *path, cb_expect_rules *out, char *err, size_t err_len);
void cb_expect_rules_free(cb_expect_rules *rules);

/* The rule for a row of collective at bytes measured by the ranks listed
 * (a gpu: pattern must match every rank's GPU model, a host: pattern every
 * rank's host): of those that apply, the one with the largest FROM, the
 * later line on a tie. NULL when none applies. */
const cb_expect_rule *cb_expect_rules_find(const cb_expect_rules *rules,
                                           const char *const *models, const char *const *hosts,
                                           int n, const char *collective, uint64_t bytes);

#endif
