/*
 * Inside launch detection (control/launch.c), for its unit test: Slurm's
 * compressed host lists.
 */
#ifndef CB_LAUNCH_INT_H
#define CB_LAUNCH_INT_H

#include <stddef.h>

/* The first host of a Slurm host list ("gpu[01-04,07],login2" -> "gpu01"),
 * the whole list's syntax checked: brackets closed and not nested, each
 * range lo-hi of digits with lo <= hi. 0, or -1 with the reason in err. */
int cb_launch_first_host(const char *list, char *out, size_t len, char *err, size_t errlen);

/* The rendezvous port Slurm's ids give when NCCL_COLLBENCH_PORT is unset:
 * 20000 + (job_id * 10 + step_id % 10) % 10000. */
int cb_launch_slurm_port(unsigned long job_id, unsigned long step_id);

#endif
