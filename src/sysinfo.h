/* Facts about this host and its MPI, shared by backends and the engine. */
#ifndef CB_SYSINFO_H
#define CB_SYSINFO_H

#include <mpi.h>
#include <stddef.h>

/* Bytes of MemAvailable from /proc/meminfo, or 0 when unknown. */
size_t cb_sysinfo_memory_available(void);

/* CPU model name from /proc/cpuinfo, else the machine name from uname. */
void cb_sysinfo_cpu_model(char *buf, size_t len);

/* First part of MPI_Get_library_version ("Open MPI v4.1.4"). */
void cb_sysinfo_mpi_library(char *buf, size_t len);

/* Ranks of comm on this host (collective over comm). */
int cb_sysinfo_local_ranks(MPI_Comm comm);

#endif
