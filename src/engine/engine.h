/* The sweep engine: drives a backend through the selected collectives and
 * sizes, verifies, and feeds the printers. */
#ifndef CB_ENGINE_H
#define CB_ENGINE_H

#include "control/control.h"

#include "options/params.h"
#include "safety/watchdog.h"

/*
 * Run the benchmark described by p on the ranks of comm (collective over
 * comm). Returns the exit status every rank should use (enum cb_exit);
 * errors have already been reported on stderr by rank 0. startup (may be
 * NULL) is main's start-up watchdog: it watches the engine's first steps
 * (the side channel's set-up) and is stopped once the engine's own runs.
 * why (may be NULL): the agreed failure's message, "" when there is none
 * (a verdict such as status 7 or 8 has its lines in the outputs).
 */
int cb_engine_run(const cb_params *p, cb_ctl *comm, cb_watchdog *startup, char *why,
                  size_t why_len);

#endif
