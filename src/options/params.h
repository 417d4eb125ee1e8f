/* What the user asked for, parsed and checked; the engine's only input. */
#ifndef CB_PARAMS_H
#define CB_PARAMS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "control/launch.h"
#include "common/rank_time.h"
#include "engine/sweep_params.h"
#include "expect/expect.h"
#include "printers/output_params.h"
#include "scan/schedule.h"
#include "verify/pattern.h"

#define CB_MAX_LOCAL_RANKS 64   /* -g: more GPUs than any node has */

/* "host" or "device". */
const char *cb_clock_name(int clock);

/* The parameters, one group per part that reads them; each group is
 * defined in its part's header, and a function that needs one group only
 * takes that group. */
typedef struct cb_params {
    cb_sweep_params sizes;      /* what is swept: engine/sweep_params.h */
    cb_timing_params timing;    /* how it is timed: common/rank_time.h */
    cb_verify_params verify;    /* what is checked: verify/pattern.h */
    cb_output_params out;       /* the outputs: printers/output_params.h */
    cb_expect_params expect;    /* the floors: expect/expect.h */
    cb_scan_params scan;        /* the health scan: scan/schedule.h */
    cb_launch_params launch;    /* the ranks' start and watchdog: control/launch.h */

    const char *backend;   /* a backend name or "auto" */
    /* Invoked as an nccl-tests program (all_reduce_perf, ...): the
     * collective it stands for; NULL under our own name. */
    const char *tests_program;
    int help;              /* -h given: print help, run nothing */
    int version;           /* --version given */
} cb_params;

/* nccl-tests' environment variables, read after cb_params_parse with env
 * the lookup (getenv): NCCL_TESTS_MIN_BW and NCCL_TESTS_SPLIT(_MASK) are
 * honoured, conflicts and bad values refused. Returns 0, or -1 with one
 * line in err naming the variable (a usage error). */
int cb_params_environment(cb_params *p, const char *(*env)(const char *name), char *err,
                          size_t err_len);

/* The index-th preamble note about the NCCL_TESTS_* variables of envp (a
 * NULL-ended environment): how each one set is read, or that it is not.
 * Returns 1 with the note in text, or 0 when there are no more. */
int cb_params_env_note(char *const *envp, int index, char *text, size_t len);

/* Defaults, as documented in --help and the man page. */
void cb_params_defaults(cb_params *p);

/*
 * Parse argv into p. Returns 0, or -1 with one line in err naming the option
 * and the bad value (the caller adds the pointer to --help).
 */
int cb_params_parse(cb_params *p, int argc, char **argv, char *err, size_t err_len);

/* The PATH --output name=PATH gave, or NULL when none names name. The
 * options never know the format names: the printers ask by their own
 * (src/printers/printer.h), and main.c refuses a name no format has. */
const char *cb_params_output(const cb_params *p, const char *name);

/* The JSON document's and the Prometheus file's path, by their own option
 * or --output, or NULL: the options that shape them (--samples-json,
 * --prom-sizes) have effect only with them. */
const char *cb_params_json_path(const cb_params *p);
const char *cb_params_prom_path(const cb_params *p);

/* The --help text, from the same tables the parser uses, in sections, no
 * line wider than CB_HELP_WIDTH (src/options/params_help.c). */
#define CB_HELP_WIDTH 79
void cb_params_help(FILE *out, const char *prog);
/* Write text folded at spaces to width columns (continuation lines under
 * an option's description, or indented two more than their line). */
void cb_params_fold(FILE *out, const char *text, size_t width);

/* The collective an nccl-tests program name stands for (all_reduce_perf:
 * allreduce), read from argv0's last path component; NULL for any other
 * name (src/options/params_nccltests.c). */
const char *cb_params_nccl_tests_program(const char *argv0);

/* The nccl-tests program name that stands for collective (allreduce:
 * all_reduce_perf), or NULL. */
const char *cb_params_nccl_tests_name(const char *collective);

/* --help under an nccl-tests program name: their options, what each does. */
void cb_params_nccl_tests_usage(FILE *out, const char *prog, const char *collective);

const char *cb_average_name(cb_average a);
/* auto, native or p2p (src/options/params_native.c). */
const char *cb_impl_name(cb_impl impl);

/* The index-th note about an option given that has no effect in this run
 * (-r without a rooted collective, --stable without --budget), for the
 * preamble. Returns 1 with the note in text, or 0 when there are no more. */
int cb_params_note(const cb_params *p, int index, char *text, size_t len);

/* Checks that need the rank count (colour lists; -r is the engine's, once
 * the groups are known). Returns 0, or -1 with one line in err, as
 * cb_params_parse does. */
int cb_params_check_ranks(const cb_params *p, int nranks, char *err, size_t err_len);

/* The largest colour a color: list may give. */
#define CB_MAX_SPLIT_COLOR 1000000

/* The colours of a color: list (the text after "color:"), checked, into
 * colors (room of them; NULL with 0 to count only); returns how many, or -1
 * when an item is not a colour (src/options/split.c). */
int cb_split_colors(const char *list, int *colors, int room);

/* The colour of rank among nranks under spec (size, stride and color; node
 * is found at run time, and gives 0 here), or -1 for a colour list that does
 * not give one colour per rank, with one line in err naming option. */
int cb_split_color(const cb_split_spec *spec, const char *option, int rank, int nranks,
                   char *err, size_t err_len);

/* Usage error when no size of the sweep holds a whole element of any type
 * selected (nothing would be measured; src/options/sizes.c), or when
 * --prom-sizes (with --prom) names no size of the sweep. Returns 0, or -1 with
 * one line in err naming the range and the type. */
int cb_params_check_sizes(const cb_params *p, char *err, size_t err_len);

/* Usage error when --min-busbw, --expect or NCCL_TESTS_MIN_BW is given and no
 * collective selected moves data (barrier, comm_init; the health scan's
 * figures count for --min-busbw and --expect): the floor would judge nothing
 * (src/options/params_checks.c). Returns 0, or -1 with one line in err
 * naming the floor. */
int cb_params_check_floors(const cb_params *p, char *err, size_t err_len);

/* The sweep's sizes in bytes (src/options/sizes.c), into sizes unless it is NULL. Returns the count
 * (at most max_sizes), or -1 when the list would be longer, with a message in
 * err. */
int cb_size_list(const cb_sweep_params *p, uint64_t *sizes, int max_sizes, char *err,
                 size_t err_len);

#endif
