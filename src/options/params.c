/* Command line: one table of options drives both parsing and --help. */
#include "options/params.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "backends/backend.h"
#include "common/format.h"
#include "common/names.h"
#include "common/parse.h"
#include "safety/agreement.h"

/* Defaults: plain numbers, so that --help can print these very macros. */
#define CB_DEFAULT_MIN_BYTES 8
#define CB_DEFAULT_MAX_MIB 128
#define CB_DEFAULT_MAX_BYTES ((uint64_t)CB_DEFAULT_MAX_MIB << 20)
#define CB_DEFAULT_STEP_FACTOR 2
#define CB_DEFAULT_ITERS 20
#define CB_DEFAULT_WARMUP 1
#define CB_TEXT(macro) CB_TEXT_OF(macro)
#define CB_TEXT_OF(value) #value
#define CB_MAX_COUNT_OPTION 1000000000L
#define CB_DEFAULT_TIMEOUT 300
#define CB_DEFAULT_STABLE_PCT 2
#define CB_MAX_TIMEOUT 604800L
#define CB_MAX_AGG_OPTION 1048576L
#define CB_MAX_UNALIGN_OPTION 1048576L

#include "options/params_parse.h"

#define fail cb_params_fail
#define set_bytes cb_params_set_bytes
#define set_int cb_params_set_int

/* A flag: its table line's agreement names the int it sets to 1. */
static int opt_flag(parse_state *s, const char *v)
{
    (void)v;
    int given = 1;
    if (s->spec->agree.kind != CB_AGREE_FLAG)
        return fail(s, "the option table gives this flag no field (AGREE_FLAG) to set");
    memcpy((char *)s->p + s->spec->agree.offset, &given, sizeof given);
    return 0;
}

/* --progress 1, --no-progress -1; neither leaves 0, the engine's choice. */
static int opt_progress(parse_state *s, const char *v)
{
    (void)v;
    s->p->out.progress = strcmp(s->spec->long_name, "progress") == 0 ? 1 : -1;
    return 0;
}

static int opt_minbytes(parse_state *s, const char *v)
{
    if (set_bytes(s, v, &s->p->sizes.min_bytes) != 0)
        return -1;
    if (s->p->sizes.min_bytes == 0)
        return fail(s, "'%s': the smallest size must be at least 1 byte", v);
    return 0;
}

static int opt_maxbytes(parse_state *s, const char *v)
{
    if (set_bytes(s, v, &s->p->sizes.max_bytes) != 0)
        return -1;
    if (s->p->sizes.max_bytes == 0)
        return fail(s, "'%s': the largest size must be at least 1 byte", v);
    return 0;
}

static int opt_stepfactor(parse_state *s, const char *v)
{
    int factor = 0;
    if (set_int(s, v, 2, 1 << 20, &factor) != 0)
        return -1;
    s->p->sizes.step_factor = (uint64_t)factor;
    s->factor_given = 1;
    return 0;
}

static int opt_stepbytes(parse_state *s, const char *v)
{
    if (set_bytes(s, v, &s->p->sizes.step_bytes) != 0)
        return -1;
    if (s->p->sizes.step_bytes == 0)
        return fail(s, "'%s': the step must be at least 1 byte", v);
    s->step_given = 1;
    return 0;
}

static int opt_iters(parse_state *s, const char *v)
{
    return set_int(s, v, 1, CB_MAX_COUNT_OPTION, &s->p->sizes.iters);
}

static int opt_warmup(parse_state *s, const char *v)
{
    return set_int(s, v, 0, CB_MAX_COUNT_OPTION, &s->p->sizes.warmup);
}

static int opt_check(parse_state *s, const char *v)
{
    return set_int(s, v, 0, CB_MAX_COUNT_OPTION, &s->p->verify.check_passes);
}

/* -r N, or all (also -1): every rank in turn. */
#define CB_MAX_ROOT_OPTION 1000000000L

static int opt_root(parse_state *s, const char *v)
{
    if (strcasecmp(v, "all") == 0) {
        s->p->sizes.root = -1;
        s->p->sizes.root_given = 1;
        return 0;
    }
    long root;
    if (cb_parse_long(v, -1, CB_MAX_ROOT_OPTION, &root) != 0)
        return fail(s, "'%s' is not a rank from 0 to %ld, or all (-1)", v, CB_MAX_ROOT_OPTION);
    s->p->sizes.root = (int)root;
    s->p->sizes.root_given = 1;
    return 0;
}

static int opt_agg(parse_state *s, const char *v)
{
    return set_int(s, v, 1, CB_MAX_AGG_OPTION, &s->p->timing.agg);
}

static int opt_unalign(parse_state *s, const char *v)
{
    return set_int(s, v, 0, CB_MAX_UNALIGN_OPTION, &s->p->sizes.unalign);
}

static int opt_cudagraph(parse_state *s, const char *v)
{
    return set_int(s, v, 0, CB_MAX_COUNT_OPTION, &s->p->timing.graph_launches);
}

static int opt_cputime(parse_state *s, const char *v)
{
    return set_int(s, v, 0, 1, &s->p->timing.report_cputime);
}

static const char *const average_names[] = {"rank0", "mean", "min", "max"};

const char *cb_average_name(cb_average a)
{
    return average_names[a];
}

static int opt_average(parse_state *s, const char *v)
{
    for (int a = 0; a < 4; a++) {
        char digit[2] = {(char)('0' + a), '\0'};
        if (strcmp(v, digit) == 0 || strcasecmp(v, average_names[a]) == 0) {
            s->p->timing.average = (cb_average)a;
            return 0;
        }
    }
    return fail(s, "'%s' is not 0 (rank0), 1 (mean), 2 (min) or 3 (max)", v);
}

static int opt_backend(parse_state *s, const char *v)
{
    if (strcmp(v, "auto") == 0 || cb_backend_lookup(v) != NULL) {
        s->p->backend = v;
        return 0;
    }
    const char *why = cb_backend_not_built_reason(v);
    if (why != NULL)
        return fail(s, "backend '%s' was not built into this nccl-collbench: %s", v, why);
    return fail(s, "unknown backend '%s' (built: auto and those listed in --help)", v);
}

static int opt_csv(parse_state *s, const char *v)
{
    if (v[0] == '\0')
        return fail(s, "the file name is empty");
    s->p->out.csv_path = v;
    return 0;
}

static int opt_timeout(parse_state *s, const char *v)
{
    return set_int(s, v, 0, CB_MAX_TIMEOUT, &s->p->launch.timeout);
}

/* --json and -J: a file, never stdout (the document is written whole). */
static int document_path(parse_state *s, const char *v, const char **path)
{
    if (v[0] == '\0')
        return fail(s, "the file name is empty");
    if (strcmp(v, "-") == 0)
        return fail(s, "'-': the JSON document goes to a file (it is written whole, then renamed)");
    *path = v;
    return 0;
}

static int opt_json(parse_state *s, const char *v)
{
    return document_path(s, v, &s->p->out.json_path);
}

/* -J: nccl-tests' document, for their tools (src/printers/tests_json.c). */
static int opt_tests_json(parse_state *s, const char *v)
{
    return document_path(s, v, &s->p->out.tests_json_path);
}

static int opt_per_iter(parse_state *s, const char *v)
{
    return set_int(s, v, 0, 1, &s->p->timing.per_iter);
}

static int opt_per_iter_skip(parse_state *s, const char *v)
{
    return set_int(s, v, 0, CB_MAX_COUNT_OPTION, &s->p->timing.per_iter_skip);
}

static int opt_timestamps(parse_state *s, const char *v)
{
    return set_int(s, v, 0, 1, &s->p->out.timestamps);
}

static int opt_a2av_matrix(parse_state *s, const char *v)
{
    char why[200];
    return cb_traffic_parse(v, &s->p->sizes.a2av_matrix, why, sizeof why) == 0 ? 0
                                                                          : fail(s, "%s", why);
}

static int opt_budget(parse_state *s, const char *v)
{
    return set_int(s, v, 0, 3600000, &s->p->timing.budget_ms);
}

static int opt_stable(parse_state *s, const char *v)
{
    s->p->timing.stable_given = 1;
    return set_int(s, v, 0, 1000, &s->p->timing.stable_pct);
}

/* --expect auto, or a file of floors (read at start-up, on every rank). */
static int opt_expect(parse_state *s, const char *v)
{
    if (v[0] == '\0')
        return fail(s, "give auto or a file of expected bandwidths");
    s->p->expect.source = v;
    return 0;
}

static int opt_expect_ratio(parse_state *s, const char *v)
{
    char *end = NULL;
    double r = strtod(v, &end);
    if (end == v || *end != '\0' || !(r > 0 && r <= 1))
        return fail(s, "'%s' is not a number above 0 and at most 1", v);
    s->p->expect.expect_ratio = r;
    return 0;
}

/* -g N: nccl-tests' GPUs per process. Here the program starts N ranks
 * itself, one per GPU, with no MPI (control/local.h). */
static int opt_ngpus(parse_state *s, const char *v)
{
    long n;
    if (cb_parse_long(v, 1, CB_MAX_LOCAL_RANKS, &n) != 0)
        return fail(s, "'%s' is not a number of GPUs from 1 to %d", v, CB_MAX_LOCAL_RANKS);
    s->p->launch.local_ranks = (int)n;
    return 0;
}

/* -t: nccl-tests' threads per process. Scripts written for it pass 1;
 * anything else asks for a layout this program does not have. */
static int opt_one_per_rank(parse_state *s, const char *v)
{
    long n;
    if (cb_parse_long(v, 1, 1, &n) != 0)
        return fail(s, "'%s': only 1 is accepted: nccl-collbench drives one GPU per rank "
                       "with one thread; start one rank per GPU instead (-g N, or mpirun -np N)",
                    v);
    return 0;
}

/* The options in --help's order, each with how the ranks agree on it
 * (params_parse.h): a new option is one line here. */
static const cb_option_spec option_table[] = {
    {'o', "op", "LIST", "collectives to run: names, comma list, all, or scan [allreduce]",
     cb_params_opt_op, AGREE_DESCRIBED(cb_agree_collectives), CB_HELP_SIZES},
    {'b', "minbytes", "SIZE", "smallest size in bytes; K, M, G, T suffixes are powers of 2 ["
                                CB_TEXT(CB_DEFAULT_MIN_BYTES) "]",
     opt_minbytes, AGREE_BYTES(sizes.min_bytes), CB_HELP_SIZES},
    {'e', "maxbytes", "SIZE", "largest size in bytes [" CB_TEXT(CB_DEFAULT_MAX_MIB)
                                "M, lowered to fit in memory]",
     opt_maxbytes, AGREE_BYTES(sizes.max_bytes), CB_HELP_SIZES},
    {'f', "stepfactor", "N", "multiply the size by N (>= 2) each step ["
                                  CB_TEXT(CB_DEFAULT_STEP_FACTOR) "]", opt_stepfactor,
     AGREE_DESCRIBED(cb_agree_step), CB_HELP_SIZES},
    {'i', "stepbytes", "SIZE", "add SIZE bytes each step instead of multiplying", opt_stepbytes,
     AGREE_DESCRIBED(cb_agree_step), CB_HELP_SIZES},
    {'r', "root", "N", "root of broadcast, reduce, gather, scatter; all (or -1): each "
                       "rank in turn [0]", opt_root, AGREE_DESCRIBED(cb_agree_root), CB_HELP_SIZES},
    {'d', "datatype", "LIST", "element types: names, comma list, or all [float]",
     cb_params_opt_datatype, AGREE_DESCRIBED(cb_agree_dtypes), CB_HELP_SIZES},
    {'\0', "redop", "LIST", "reductions: names, comma list, or all [sum]", cb_params_opt_redop,
     AGREE_DESCRIBED(cb_agree_redops), CB_HELP_SIZES},
    {'\0', "split", "SPEC", "run in sub-communicators at once: size:K, stride:K, node, "
     "or color:C0,C1,... (one per rank)", cb_params_opt_split, AGREE_DESCRIBED(cb_agree_split),
     CB_HELP_SIZES},
    {'\0', "hier-split", "SPEC", "hier_allreduce's inner groups, in the forms of --split "
     "[node]", cb_params_opt_hier_split, AGREE_DESCRIBED(cb_agree_hier), CB_HELP_SIZES},
    {'\0', "layout", "LIST", "row, col or row,col: col lays each rank's block of allgather, "
     "gather, reducescatter and alltoall out as a column slice of a matrix [row]",
     cb_params_opt_layout, AGREE_DESCRIBED(cb_agree_layouts), CB_HELP_SIZES},
    {'\0', "a2av-matrix", "SPEC", "alltoallv's traffic matrix: uniform, random[:SEED] or "
     "hot:K[:H] (ranks 0..H-1 receive K times more) [uniform]", opt_a2av_matrix,
     AGREE_DESCRIBED(cb_agree_a2av_matrix), CB_HELP_SIZES},
    {'u', "unalign", "N", "start the send and receive buffers N elements past their "
     "aligned start, to measure misaligned buffers [0]", opt_unalign, AGREE_INT(sizes.unalign),
     CB_HELP_SIZES},
    {'n', "iters", "N", "timed iterations per size [" CB_TEXT(CB_DEFAULT_ITERS) "]", opt_iters,
     AGREE_INT(sizes.iters), CB_HELP_TIMING},
    {'w', "warmup", "N", "untimed iterations before timing [" CB_TEXT(CB_DEFAULT_WARMUP) "]",
     opt_warmup, AGREE_INT(sizes.warmup), CB_HELP_TIMING},
    {'a', "average", "MODE", "time reported across ranks: 0 rank0, 1 mean, 2 min, 3 max [1]",
     opt_average, AGREE_DESCRIBED(cb_agree_average), CB_HELP_TIMING},
    {'z', "blocking", "0-3", "after each iteration (-m operations): 0 go on, 1 wait and "
                             "barrier (timed), 2 wait, 3 wait, barrier untimed [0]",
     cb_params_opt_blocking, AGREE_INT(timing.blocking), CB_HELP_TIMING},
    {'\0', "clock", "host|device", "time spans on the host from a barrier to completion, as "
                                   "nccl-tests, or by CUDA events [host]",
     cb_params_opt_clock, AGREE_INT(timing.clock), CB_HELP_TIMING},
    {'\0', "rotate", "0|1", "1: each launch on the next slice of the buffers, as nccl-tests "
                            "(no warm cache) [1]", cb_params_opt_rotate, AGREE_INT(timing.rotate),
     CB_HELP_TIMING},
    {'m', "agg", "N", "operations per iteration, in one group where the backend groups [1]",
     opt_agg, AGREE_INT(timing.agg), CB_HELP_TIMING},
    {'G', "cudagraph", "N", "capture the timed iterations as a CUDA graph, launch it N times; "
                            "0 off [0]", opt_cudagraph, AGREE_INT(timing.graph_launches), CB_HELP_TIMING},
    {'C', "report-cputime", "0|1", "1: report the CPU time to launch, not the time to "
                                   "complete [0]", opt_cputime, AGREE_INT(timing.report_cputime),
     CB_HELP_TIMING},
    {'\0', "budget", "MS", "time each size's timed iterations for about MS milliseconds "
                           "(estimated from the warmup and the previous size), at least 1 "
                           "and at most -n iterations; 0 off [0]", opt_budget,
     AGREE_INT(timing.budget_ms), CB_HELP_TIMING},
    {'\0', "stable", "PCT", "with --budget: time in rounds of a tenth of the iterations and "
                            "stop once, on every rank, the last 3 round medians and round "
                            "means each span at most PCT% of their median; 0 never stops "
                            "early [" CB_TEXT(CB_DEFAULT_STABLE_PCT) "]",
     opt_stable, AGREE_INT(timing.stable_pct), CB_HELP_TIMING},
    {'c', "check", "N", "verification passes per size; 0 turns checking off [1]", opt_check,
     AGREE_INT(verify.check_passes), CB_HELP_VERIFY},
    {'\0', "check-timed", NULL, "with -c > 0: also verify the output of the last timed "
                                "iteration of every out-of-place size", opt_flag,
     AGREE_FLAG(verify.check_timed), CB_HELP_VERIFY},
    {'B', "repeat-check", NULL, "compare every launch's output bit for bit with the first "
                                "launch's of its size and placement (each timed launch then "
                                "its own span)", opt_flag, AGREE_FLAG(verify.repeat_check),
     CB_HELP_VERIFY},
    {'\0', "suspect-ratio", "R", "-o scan: suspect below R x the median (0 < R <= 1) [0.8]",
     cb_params_opt_suspect_ratio, AGREE_DOUBLE(scan.scan_threshold), CB_HELP_VERIFY},
    {'\0', "min-busbw", "GBPS", "status 8 when busbw at the largest size is below GBPS [off]",
     cb_params_opt_min_busbw, AGREE_DOUBLE(expect.min_busbw), CB_HELP_VERIFY},
    {'\0', "expect", "auto|FILE", "expected busbw per row: auto from the links (NVLink, PCIe, "
     "NICs), or a file of floors; adds efficiency (busbw / expected) [off]", opt_expect,
     AGREE_STRING(expect.source), CB_HELP_VERIFY},
    {'\0', "expect-ratio", "R", "with --expect: a row below R x expected is status 8 "
     "(0 < R <= 1) [0.8]", opt_expect_ratio, AGREE_DOUBLE(expect.expect_ratio), CB_HELP_VERIFY},
    {'\0', "efficiency", NULL, "with --expect: each table row's efficiency on a comment line "
     "under it", opt_flag, AGREE_FLAG(out.expect_column), CB_HELP_VERIFY},
    {'\0', "csv", "FILE", "also write results as CSV to FILE; '-': CSV on stdout, the "
                          "table on stderr", opt_csv, AGREE_STRING(out.csv_path), CB_HELP_OUTPUTS},
    {'\0', "json", "FILE", "also write the run as one JSON document to FILE", opt_json,
     AGREE_STRING(out.json_path), CB_HELP_OUTPUTS},
    {'J', "tests-json", "FILE", "also write the run as nccl-tests' JSON document (their "
     "schema, read by their tools) to FILE", opt_tests_json, AGREE_STRING(out.tests_json_path),
     CB_HELP_OUTPUTS},
    {'\0', "prom", "FILE", "also write the results in the Prometheus text format to FILE "
                           "(for node_exporter's textfile collector), replaced whole after "
                           "each cycle", cb_params_opt_prom, AGREE_STRING(out.prom_path),
     CB_HELP_OUTPUTS},
    {'\0', "output", "NAME=PATH", "also write the output format NAME to PATH ('-': "
     "stdout, where NAME allows it); repeatable; an unknown NAME lists the formats",
     cb_params_opt_output, AGREE_DESCRIBED(cb_agree_outputs), CB_HELP_OUTPUTS},
    {'\0', "prom-sizes", "WHICH", "sizes --prom keeps: all, largest (each series' largest) "
                                  "or a comma list of byte counts [all]",
     cb_params_opt_prom_sizes, AGREE_DESCRIBED(cb_agree_prom_sizes), CB_HELP_OUTPUTS},
    {'\0', "stats", NULL, "add per-iteration and per-rank time statistics to the table "
                          "(p99 from 100 samples on)", opt_flag, AGREE_FLAG(out.table_stats),
     CB_HELP_OUTPUTS},
    {'I', "per-iter", "0|1", "1: add i_min i_max i_p99 i_cv% (each iteration's slowest "
     "rank) to the table, and the samples to -J [0]", opt_per_iter, AGREE_INT(timing.per_iter),
     CB_HELP_OUTPUTS},
    {'K', "per-iter-skip", "N", "with -I 1: leave the first N samples out of its statistics "
     "[0]", opt_per_iter_skip, AGREE_INT(timing.per_iter_skip), CB_HELP_OUTPUTS},
    {'S', "timestamps", "0|1", "1: end each table row with its UTC time stamp [0]",
     opt_timestamps, AGREE_INT(out.timestamps), CB_HELP_OUTPUTS},
    {'\0', "samples-json", NULL, "with --json, add every rank's per-iteration samples, in "
                                 "the order taken, to each result", opt_flag,
     AGREE_FLAG(out.samples_json), CB_HELP_OUTPUTS},
    {'\0', "progress", NULL, "report progress on stderr even where nobody may see it [on "
     "when stderr reaches the terminal, through mpirun too, and the table does not]",
     opt_progress, AGREE_INT(out.progress), CB_HELP_OUTPUTS},
    {'\0', "no-progress", NULL, "never report progress", opt_progress, AGREE_INT(out.progress),
     CB_HELP_OUTPUTS},
    {'M', "memory", NULL, "print the memory footprint per rank (send, receive, column "
                          "work, host staging, samples, check tile) before the results",
     opt_flag, AGREE_FLAG(sizes.memory_report), CB_HELP_OUTPUTS},
    {'T', "timeout", "SECONDS", "end the run when a rank makes no progress for SECONDS; "
                                "0 never [" CB_TEXT(CB_DEFAULT_TIMEOUT) "]", opt_timeout,
     AGREE_INT(launch.timeout), CB_HELP_RUNS},
    {'N', "cycles", "N", "repeat the run N times, 0 until stopped; wrong tally per rank [1]",
     cb_params_opt_cycles, AGREE_INT(sizes.cycles), CB_HELP_RUNS},
    {'h', "help", NULL, "print this help and exit", opt_flag, AGREE_FLAG(help), CB_HELP_RUNS},
    {'V', "version", NULL, "print the version and exit", opt_flag, AGREE_FLAG(version),
     CB_HELP_RUNS},
    {'\0', "require-key", NULL, "refuse to start a TCP launch (torchrun, Slurm without MPI, "
     "-g across nodes) without NCCL_COLLBENCH_KEY, status 2; also "
     "NCCL_COLLBENCH_REQUIRE_KEY=1", opt_flag, AGREE_FLAG(launch.require_key), CB_HELP_RUNS},
    {'\0', "backend", "NAME", "auto or a backend listed below [auto]", opt_backend,
     AGREE_STRING(backend), CB_HELP_BACKENDS},
    {'\0', "nccl-impl", "LIST", "alltoall, gather and scatter on NCCL: auto, native (NCCL "
     "2.28's own calls), p2p (grouped sends and receives), or a comma list, measured "
     "in turn [auto]", cb_params_opt_nccl_impl, AGREE_DESCRIBED(cb_agree_nccl_impls),
     CB_HELP_BACKENDS},
    {'R', "local-register", "0|1|2", "NCCL buffers: 1 registered (ncclCommRegister), 2 "
     "ncclMemAlloc'd in a symmetric window (NCCL 2.27); 0 neither [0]", cb_params_opt_register,
     AGREE_INT(sizes.registration), CB_HELP_BACKENDS},
    {'g', "ngpus", "N", "start N ranks on this node, one per GPU, without MPI (torchrun's "
     "variables and NNODES, NODE_RANK span nodes; torchrun itself starts the "
     "program with --no-python) [1]", opt_ngpus, AGREE_INT(launch.local_ranks),
     CB_HELP_NCCL_TESTS},
    {'t', "nthreads", "1", "accepted for nccl-tests scripts: one thread per rank, so only 1",
     opt_one_per_rank, AGREE_NOTHING, CB_HELP_NCCL_TESTS},
};

#define OPTION_COUNT (sizeof option_table / sizeof option_table[0])
_Static_assert(OPTION_COUNT <= CB_MAX_OPTIONS, "params_agree.c has room for CB_MAX_OPTIONS");

const cb_option_spec *cb_params_options(size_t *count)
{
    *count = OPTION_COUNT;
    return option_table;
}

void cb_params_defaults(cb_params *p)
{
    memset(p, 0, sizeof *p);
    p->sizes.collectives[0] = cb_collective_lookup("allreduce");
    p->sizes.ncollectives = 1;
    cb_params_health_defaults(p);
    p->sizes.dtypes[0] = CB_FLOAT;
    p->sizes.ndtypes = 1;
    p->sizes.redops[0] = CB_SUM;
    p->sizes.nredops = 1;
    p->sizes.min_bytes = CB_DEFAULT_MIN_BYTES;
    p->sizes.max_bytes = CB_DEFAULT_MAX_BYTES;
    p->sizes.step_factor = CB_DEFAULT_STEP_FACTOR;
    p->sizes.iters = CB_DEFAULT_ITERS;
    p->sizes.warmup = CB_DEFAULT_WARMUP;
    p->verify.check_passes = 1;
    p->timing.average = CB_AVERAGE_MEAN;
    p->timing.agg = 1;
    p->timing.rotate = 1;
    p->backend = "auto";
    p->launch.timeout = CB_DEFAULT_TIMEOUT;
    p->launch.local_ranks = 1;
    p->sizes.hier = (cb_split_spec){.kind = CB_SPLIT_NODE, .text = "node"};
    p->sizes.a2av_matrix = (cb_traffic_spec){.kind = CB_TRAFFIC_UNIFORM, .factor = 1, .hot = 1};
    p->sizes.layouts[0] = CB_LAYOUT_ROW;
    p->sizes.nlayouts = 1;
    p->sizes.impls[0] = CB_IMPL_AUTO;
    p->sizes.nimpls = 1;
    p->timing.stable_pct = CB_DEFAULT_STABLE_PCT;
    p->expect.expect_ratio = 0.8;
    p->expect.tests_min_bw = NAN;
}

static const cb_option_spec *find_long(const char *name, size_t len)
{
    for (size_t i = 0; i < OPTION_COUNT; i++)
        if (strlen(option_table[i].long_name) == len &&
            strncmp(option_table[i].long_name, name, len) == 0)
            return &option_table[i];
    return NULL;
}

static const cb_option_spec *find_short(char c)
{
    for (size_t i = 0; i < OPTION_COUNT; i++)
        if (option_table[i].short_name == c && c != '\0')
            return &option_table[i];
    return NULL;
}

/* An unknown long option, with the nearest one's name when it looks like a typo. */
static int unknown_long(parse_state *s, const char *name)
{
    cb_nearest n;
    cb_nearest_start(&n, name);
    for (size_t i = 0; i < OPTION_COUNT; i++)
        cb_nearest_offer(&n, option_table[i].long_name);
    const char *near = cb_nearest_name(&n);
    if (near != NULL)
        return fail(s, "unknown option; did you mean --%s?", near);
    return fail(s, "unknown option");
}

/* A value for one of nccl-tests' letters (their options all take one):
 * attached, after '=', or the next word. NULL after cb_params_fail. */
static const char *their_value(parse_state *s, const char *value, int argc, char **argv, int *i)
{
    if (value != NULL)
        return value;
    if (*i + 1 >= argc) {
        fail(s, "needs a value");
        return NULL;
    }
    return argv[++*i];
}

/* Our flags that are nccl-tests' options with a value (-M 1, -V 16): a
 * value given, attached or as a next word that is a number, is theirs. */
static int their_valued_flag(const cb_option_spec *spec, const char *value, const char *next)
{
    if (spec->arg != NULL || (spec->short_name != 'M' && spec->short_name != 'V'))
        return 0;
    return value != NULL || (next != NULL && next[0] >= '0' && next[0] <= '9');
}

int cb_params_parse(cb_params *p, int argc, char **argv, char *err, size_t err_len)
{
    parse_state s = {p, err, err_len, "", 0, 0, NULL};
    char shown[80];
    p->out.argc = argc;
    p->out.argv = argv;
    /* Under an nccl-tests program name, their grammar and defaults. */
    const char *program = cb_params_nccl_tests_program(argc > 0 ? argv[0] : NULL);
    int dropin = program != NULL;
    if (dropin)
        cb_params_nccl_tests_defaults(p, program);
    for (int i = 1; i < argc; i++) {
        const char *word = argv[i];
        const cb_option_spec *spec = NULL;
        const char *value = NULL;
        char letter = '\0';   /* one of nccl-tests' letters, parsed as theirs */
        if (strncmp(word, "--", 2) == 0 && word[2] != '\0') {
            const char *name = word + 2;
            const char *eq = strchr(name, '=');
            size_t len = eq ? (size_t)(eq - name) : strlen(name);
            if (eq != NULL)
                value = eq + 1;
            snprintf(shown, sizeof shown, "--%.*s", (int)len, name);
            char their = cb_params_nccl_tests_long(name, len);
            /* Ours first under our name; theirs first under theirs. */
            spec = dropin && their ? NULL : find_long(name, len);
            /* No such word: a unique prefix of one (getopt_long's habit). */
            if (spec == NULL && their == '\0') {
                s.option = shown;
                int found = cb_params_long_prefix(&s, name, len, dropin, &name);
                if (found < 0)
                    return -1;
                if (found > 0) {
                    len = strlen(name);
                    their = cb_params_nccl_tests_long(name, len);
                    spec = dropin && their ? NULL : find_long(name, len);
                    snprintf(shown, sizeof shown, "--%s", name);
                }
            }
            if (spec == NULL)
                letter = their;
        } else if (word[0] == '-' && word[1] != '\0' && word[1] != '-') {
            /* Theirs first under their names; ours first under ours. */
            int theirs = cb_params_nccl_tests_letter(word[1]);
            spec = dropin && theirs ? NULL : find_short(word[1]);
            if (spec == NULL && (dropin ? theirs : cb_params_is_nccl_tests_option(word[1])))
                letter = word[1];
            snprintf(shown, sizeof shown, "-%c", word[1]);
            if (word[2] != '\0')
                value = word + 2;
        } else {
            s.option = word;
            return fail(&s, "unexpected argument (options start with '-')");
        }
        s.option = shown;
        if (spec != NULL && their_valued_flag(spec, value, i + 1 < argc ? argv[i + 1] : NULL))
            letter = spec->short_name;
        if (letter != '\0') {
            if (letter != 'h' && (value = their_value(&s, value, argc, argv, &i)) == NULL)
                return -1;
            if (cb_params_nccl_tests_option(&s, letter, value, dropin) != 0)
                return -1;
            continue;
        }
        if (spec == NULL && shown[1] == '-')
            return unknown_long(&s, shown + 2);
        if (spec == NULL)
            return fail(&s, "unknown option");
        if (spec->arg == NULL && value != NULL)
            return fail(&s, "takes no value, got '%s'", value);
        if (spec->arg != NULL && value == NULL) {
            if (i + 1 >= argc)
                return fail(&s, "needs a value (%s)", spec->arg);
            value = argv[++i];
        }
        s.spec = spec;
        if (spec->set(&s, value) != 0)
            return -1;
    }

    /* Their default step is 1 MiB, added, unless -f gives a factor. */
    if (dropin && !s.factor_given && !s.step_given)
        s.step_given = 1;
    if (dropin && s.factor_given && !s.step_given)
        p->sizes.step_bytes = 0;
    s.option = "-f/-i";
    if (s.factor_given && s.step_given)
        return fail(&s, "give either a step factor (-f) or a step in bytes (-i), not both");
    if (s.step_given)
        p->sizes.step_factor = 0;
    s.option = "-B";
    if (p->verify.repeat_check && p->timing.graph_launches > 0)
        return fail(&s, "cannot compare launches inside a CUDA graph (-G %d): a graph launch "
                        "runs -n iterations with no point between them to compare; drop -G",
                    p->timing.graph_launches);
    if (cb_params_check_health(&s) != 0 || cb_params_check_timing(&s) != 0)
        return -1;
    s.option = "-K";
    if (p->timing.per_iter_skip > 0 && !p->timing.per_iter)
        return fail(&s, "'%d': skips samples of -I 1's statistics; give -I 1 too",
                    p->timing.per_iter_skip);
    if (p->timing.per_iter_skip >= p->sizes.iters)
        return fail(&s, "'%d' leaves none of the -n %d samples; give at most %d",
                    p->timing.per_iter_skip, p->sizes.iters, p->sizes.iters - 1);
    s.option = "-I";
    if (p->timing.per_iter && p->timing.graph_launches > 0)
        return fail(&s, "'1': a CUDA graph (-G %d) runs -n iterations with no point "
                        "between them to time; drop -G or -I", p->timing.graph_launches);
    if (p->sizes.min_bytes > p->sizes.max_bytes) {
        char min_text[32], max_text[32];
        cb_format_bytes(p->sizes.min_bytes, min_text, sizeof min_text);
        cb_format_bytes(p->sizes.max_bytes, max_text, sizeof max_text);
        s.option = "-b/-e";
        return fail(&s, "the smallest size %s is above the largest size %s", min_text, max_text);
    }
    return 0;
}
