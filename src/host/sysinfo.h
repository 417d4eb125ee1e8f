/* Facts about this host and its MPI, shared by backends and the engine. */
#ifndef CB_SYSINFO_H
#define CB_SYSINFO_H

#include "control/control.h"
#include <stddef.h>

/* Bytes of MemAvailable from /proc/meminfo, or 0 when unknown. */
size_t cb_sysinfo_memory_available(void);

/* CPU model name from /proc/cpuinfo, else the machine name from uname. */
void cb_sysinfo_cpu_model(char *buf, size_t len);

/* Ranks of comm on this machine, sharing its memory (collective over comm). */
int cb_sysinfo_local_ranks(cb_ctl *comm);

/* The environment variable by which NCCL lets processes on one machine
 * count as different hosts. */
#define CB_HOSTID_ENV "NCCL_HOSTID"

/* This rank's host as every output names it (the rank lines, WRONG lines,
 * failures, the hang report, CSV, JSON, Prometheus, the scan): NCCL_HOSTID
 * where set, as NCCL tells hosts apart, else the machine's name
 * (gethostname, which is MPI's processor name too). */
void cb_sysinfo_host_label(char *buf, size_t len);

/* The ranks of comm on this machine (cb_ctl_split_node) that passed the
 * same text (NULL matches only NULL), ordered by key. Collective over comm;
 * free with cb_ctl_free. -1 and NULL, on every rank of the
 * machine, when out of memory for the texts. */
int cb_sysinfo_same_text_comm(cb_ctl *comm, int key, const char *text, cb_ctl **out);

/* The ranks of comm on this rank's host, ordered by key: those on this
 * machine whose CB_HOSTID_ENV is the same, set or unset, as NCCL identifies
 * hosts (cb_sysinfo_same_text_comm). */
int cb_sysinfo_host_comm(cb_ctl *comm, int key, cb_ctl **host);

/* Into buf, "rank 2 (node7), rank 3 (node7)": the ranks of comm that pass
 * flagged, with their hosts (cb_sysinfo_host_label), cut short with "..."
 * when buf is full. Collective over comm; the number of flagged ranks, or
 * -1 (buf then names no host) when out of memory. */
int cb_sysinfo_flagged_ranks(cb_ctl *comm, int flagged, char *buf, size_t len);

/* Where sysfs is read: NCCL_COLLBENCH_SYSFS (a test's tree), else /sys. */
#define CB_SYSFS_ENV "NCCL_COLLBENCH_SYSFS"
const char *cb_sysfs_root(void);

/* NVIDIA GPUs on this machine's PCI bus (vendor 0x10de, class 0x03xx:
 * display or 3D controller) under cb_sysfs_root()/bus/pci/devices, found
 * without CUDA: how many, with the first as "0000:3b:00.0 (10de:2330)"
 * in buf. 0 with buf "" when there is none or the tree cannot be read. */
int cb_sysinfo_nvidia_gpus(char *buf, size_t len);

#endif
