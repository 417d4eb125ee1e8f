/* What the user asked for, parsed and checked; the engine's only input. */
#ifndef CB_PARAMS_H
#define CB_PARAMS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "collectives/collective.h"
#include "verify/dtype.h"
#include "verify/redop.h"

#define CB_MAX_COLLECTIVES 32
#define CB_MAX_LOCAL_RANKS 64   /* -g: more GPUs than any node has */
#define CB_MAX_SIZES 4096
/* --prom-sizes: the most sizes a list may give. */
#define CB_MAX_PROM_SIZES 64
/* --output NAME=PATH: the most pairs a command line may give. */
#define CB_MAX_OUTPUTS 8

/* One --output NAME=PATH, pointing into argv: name is the text before the
 * first '=' (name_len bytes, not ended there), path the text after it. */
typedef struct cb_output_spec {
    const char *name;
    size_t name_len;
    const char *path;
} cb_output_spec;

/* How per-rank times become the one time reported (-a). */
typedef enum cb_average {
    CB_AVERAGE_RANK0 = 0,
    CB_AVERAGE_MEAN = 1,
    CB_AVERAGE_MIN = 2,
    CB_AVERAGE_MAX = 3
} cb_average;

/* --split: how ranks fall into sub-communicators measured at once. */
/* --clock: what times a span of launches. */
enum { CB_CLOCK_HOST = 0, CB_CLOCK_DEVICE = 1 };
/* "host" or "device". */
const char *cb_clock_name(int clock);

typedef enum cb_split_kind {
    CB_SPLIT_NONE = 0,
    CB_SPLIT_SIZE,    /* size:K, consecutive groups of K ranks */
    CB_SPLIT_STRIDE,  /* stride:K, rank r in group r mod K */
    CB_SPLIT_NODE,    /* node, one group per host */
    CB_SPLIT_COLOR,   /* color:c0,c1,..., one colour per rank */
    CB_SPLIT_AND,     /* NCCL_TESTS_SPLIT AND/& K and NCCL_TESTS_SPLIT_MASK: rank & K */
    CB_SPLIT_OR       /* NCCL_TESTS_SPLIT OR/| K: rank | K */
} cb_split_kind;

/* A grouping of ranks, as --split and --hier-split take it. */
typedef struct cb_split_spec {
    cb_split_kind kind;
    int k;                 /* K of size:K and stride:K */
    const char *text;      /* the value as given, for messages and colour lists */
} cb_split_spec;

/* The health scan's parts (-o scan, -o scan_nodes, ...). */
#define CB_SCAN_NODES 1
#define CB_SCAN_PAIRS 2
#define CB_SCAN_RAILS 4

typedef struct cb_params {
    const cb_collective *collectives[CB_MAX_COLLECTIVES];
    int ncollectives;
    cb_dtype dtypes[CB_DTYPE_COUNT];
    int ndtypes;
    cb_redop redops[CB_REDOP_COUNT];
    int nredops;

    uint64_t min_bytes;
    uint64_t max_bytes;
    uint64_t step_bytes;   /* additive step; 0 when stepping by factor */
    uint64_t step_factor;  /* multiplicative step; 0 when stepping by bytes */

    int iters;
    int warmup;
    int check_passes;      /* 0: no verification */
    int check_timed;       /* --check-timed: also verify the last timed iteration */
    int repeat_check;      /* -B: every launch's output compared with the first's */
    cb_average average;
    int blocking;          /* -z: 0 none, 1 wait and barrier, 2 wait, 3 the operation alone */
    int clock;             /* --clock: CB_CLOCK_HOST (nccl-tests') or CB_CLOCK_DEVICE */
    int rotate;            /* --rotate: each launch on its own slice of the buffers */
    int root;              /* -r: root of rooted collectives; -1: every rank in turn */
    int root_given;        /* -r was on the command line */
    int agg;               /* operations per timed iteration, in one group (-m) */
    int graph_launches;    /* 0: no graph; else launches of the captured iterations (-G) */
    int report_cputime;    /* report the time to launch, not to complete (-C) */
    int timeout;           /* seconds without progress before the watchdog ends the run; 0 off */
    int local_ranks;       /* -g N: ranks this process starts on this node (control/local.h) */
    int require_key;       /* --require-key: a TCP launch without NCCL_COLLBENCH_KEY is refused */

    const char *backend;   /* a backend name or "auto" */
    const char *csv_path;  /* NULL: no CSV; "-": CSV on stdout, the table on stderr */
    const char *json_path; /* NULL: no JSON document */
    const char *prom_path; /* --prom: NULL: no Prometheus text file */
    int prom_largest;      /* --prom-sizes largest: each series' largest size only */
    uint64_t prom_sizes[CB_MAX_PROM_SIZES]; /* --prom-sizes LIST; nprom_sizes 0: every size */
    int nprom_sizes;
    int table_stats;       /* --stats: statistics lines in the table */
    int samples_json;      /* --samples-json: every rank's raw samples in the JSON */
    int progress;          /* 1 --progress (always), -1 --no-progress, 0 when it is seen */
    cb_split_spec split;   /* --split; kind CB_SPLIT_NONE: every rank in one group */
    cb_split_spec hier;    /* --hier-split: hier_allreduce's inner groups [node] */
    cb_traffic_spec a2av_matrix; /* --a2av-matrix: alltoallv's traffic matrix [uniform] */
    cb_block_layout layouts[2]; /* --layout, in the order given [row] */
    int nlayouts;
    cb_impl impls[3];      /* --nccl-impl, in the order given [auto] */
    int nimpls;
    int registration;      /* -R: 0 plain, 1 ncclCommRegister, 2 symmetric window [0] */
    int unalign;           /* -u: buffers start this many elements past their allocation [0] */
    int memory_report;     /* -M: the memory footprint per rank in the preamble */
    const char *tests_json_path; /* -J: nccl-tests' JSON document; NULL: none */
    cb_output_spec outputs[CB_MAX_OUTPUTS]; /* --output NAME=PATH, in the order given */
    int noutputs;
    int per_iter;          /* -I 1: i_min i_max i_p99 i_cv% columns, per-iteration JSON */
    int per_iter_skip;     /* -K: leading samples left out of -I's statistics */
    int timestamps;        /* -S 1: each table row ends with its time stamp */
    /* Invoked as an nccl-tests program (all_reduce_perf, ...): the
     * collective it stands for; NULL under our own name. */
    const char *tests_program;
    int budget_ms;         /* --budget: timed iterations per measurement from a time budget; 0 off */
    int stable_pct;        /* --stable: with --budget, stop when the last round medians are
                            * within this many percent; 0: never early */
    int stable_given;      /* --stable was on the command line */
    int scan;              /* -o scan parts: CB_SCAN_NODES | CB_SCAN_PAIRS | CB_SCAN_RAILS */
    double scan_threshold; /* --suspect-ratio: below this x the median is a suspect */
    double min_busbw;      /* --min-busbw GB/s at the largest size; 0 off */
    /* nccl-tests' environment (src/options/params_env.c): NCCL_TESTS_MIN_BW
     * in GB/s, NaN when unset; --split's text when NCCL_TESTS_SPLIT or
     * NCCL_TESTS_SPLIT_MASK gave the groups. */
    double tests_min_bw;
    char env_split[96];
    int cycles;            /* -N: repeat the whole run; 0 until stopped [1] */
    const char *expect;    /* --expect: "auto" or a file of floors; NULL off */
    double expect_ratio;   /* --expect-ratio: below this x expected fails (status 8) [0.8] */
    int expect_column;     /* --efficiency: each table row's efficiency on a line under it */

    int argc;              /* the command line, for the JSON document */
    char *const *argv;

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
int cb_size_list(const cb_params *p, uint64_t *sizes, int max_sizes, char *err, size_t err_len);

#endif
