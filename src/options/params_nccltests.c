/*
 * nccl-tests' options (2.19.6) and program names. Under our own name their
 * long names are accepted wherever ours do not use the same word, and
 * their short letters without a line in our table stand for one of ours,
 * change nothing at the value a script usually passes, or are refused with
 * a message that names what this program has instead. Under one of their
 * program names (all_reduce_perf, ...) their grammar holds whole: -o is the
 * reduction and every option takes a value. Either way a script written for
 * nccl-tests runs as it meant or stops at once (status 2), never silently
 * measuring something else (nccl-collbench-nccl-tests(7), Option map).
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common/parse.h"
#include "options/params_parse.h"

/* Their programs and the collective each measures. */
static const char *const programs[][2] = {
    {"all_reduce_perf", "allreduce"},     {"all_gather_perf", "allgather"},
    {"broadcast_perf", "broadcast"},      {"reduce_perf", "reduce"},
    {"reduce_scatter_perf", "reducescatter"}, {"alltoall_perf", "alltoall"},
    {"alltoallv_perf", "alltoallv"},      {"gather_perf", "gather"},
    {"scatter_perf", "scatter"},          {"sendrecv_perf", "sendrecv"},
    {"hypercube_perf", "hypercube"},
};

#define PROGRAM_COUNT (sizeof programs / sizeof programs[0])

/* Their option table: letter, long name, and what it does here (their
 * --help under their names, nccl-collbench-nccl-tests(7)'s Option map). Every
 * one takes a value, but -h. */
typedef struct their_option {
    char letter;
    const char *long_name;
    const char *here;
} their_option;

static const their_option theirs[] = {
    {'t', "nthreads", "1 only: one thread per rank"},
    {'g', "ngpus", "start N ranks on this node, one per GPU, without mpirun [1]"},
    {'b', "minbytes", "smallest size [32M]"},
    {'e', "maxbytes", "largest size [32M]"},
    {'i', "stepbytes", "add this many bytes each step [1M]"},
    {'f', "stepfactor", "multiply the size each step (1: step by -i) [1]"},
    {'n', "iters", "timed iterations [20]"},
    {'m', "agg_iters", "operations per iteration, grouped [1]"},
    {'w', "warmup_iters", "untimed iterations first [1]"},
    {'N', "run_cycles", "repeat the run; 0 until stopped [1]"},
    {'p', "parallel_init", "0 or 1, changing nothing (one thread per rank)"},
    {'c', "check", "verification passes; 0 off [1]"},
    {'o', "op", "reduction: sum prod min max avg mulsum, or all [sum]"},
    {'d', "datatype", "element type or all [float]"},
    {'r', "root", "root rank; -1 each in turn [0]"},
    {'z', "blocking", "after each iteration: 0 none, 1 wait, barrier, 2 wait, 3 wait [0]"},
    {'y', "stream_null", "0 only: the backend launches on a stream of its own"},
    {'T', "timeout", "seconds without progress before stopping; 0 never [300]"},
    {'G', "cudagraph", "timed iterations in a CUDA graph, launched N times [0]"},
    {'C', "report_cputime", "1: report the CPU time to launch [0]"},
    {'S', "report_timestamps", "1: each row ends with its UTC time stamp [0]"},
    {'J', "output_file", "write nccl-tests' JSON document to FILE"},
    {'a', "average", "time across ranks: 0 rank0, 1 mean, 2 min, 3 max [1]"},
    {'R', "local_register", "1 ncclCommRegister, 2 symmetric window [0]"},
    {'x', "cta_policy", "refused: NCCL reads NCCL_CTA_POLICY instead"},
    {'D', "device_implementation", "0 only: NCCL's host calls are measured"},
    {'V', "device_cta_count", "refused: there are no device-API kernels here"},
    {'M', "memory", "1: memory per rank first, GPU memory usage last [0]"},
    {'u', "unalign", "buffers start N elements past alignment [0]"},
    {'I', "per_iter_timing", "1: i_min i_max i_p99 i_cv% columns, samples in -J [0]"},
    {'K', "per_iter_skip", "with -I 1: leading samples out of its statistics [0]"},
    {'h', "help", "print this help and exit"},
};

#define THEIR_COUNT (sizeof theirs / sizeof theirs[0])

/* Their letters that have no line of their own in our option table (and
 * rccl-tests' few): each stands for one of ours, is accepted at the values
 * that change nothing, or is refused naming what this program has instead. */
typedef struct foreign_option {
    char letter;
    const char *theirs;     /* their long name, for messages */
    const char *accepted;   /* values that change nothing here, "|" between */
    const char *instead;    /* other values: why not, and what we have */
} foreign_option;

static const foreign_option foreign[] = {
    {'p', "parallel_init", "0|1", "takes 0 or 1 (one thread per rank: nothing to "
     "initialise in parallel)"},
    {'D', "device_implementation", "0",
     "there is no device-API implementation here: NCCL's host calls are measured "
     "(--nccl-impl chooses for alltoall, gather and scatter)"},
    {'V', "device_cta_count", NULL,
     "it sets the CTAs of nccl-tests' device-API kernels (-D), and there are none here: "
     "NCCL's host calls are measured (--nccl-impl chooses for alltoall, gather and scatter)"},
    {'x', "cta_policy", NULL,
     "no option sets the CTA policy here; NCCL reads NCCL_CTA_POLICY from the environment"},
    {'y', "stream_null", "0",
     "the nccl backend launches on a stream of its own; there is no NULL-stream mode"},
    {'O', "out_of_place (rccl-tests)", NULL,
     "both placements are measured at every size; the CSV's placement column tells them apart"},
    {'E', "rotating_tensor (rccl-tests)", NULL,
     "buffers rotate by default here, each launch on the next slice as nccl-tests moves "
     "them; --rotate 0 turns that off"},
    {'F', "cache_flush (rccl-tests)", "0", "nothing flushes caches between iterations"},
    {'Y', "memory_type (rccl-tests)", NULL,
     "buffers are device memory on --backend nccl and host memory on --backend mpi"},
    {'A', "algorithm and protocol (rccl-tests)", NULL,
     "no option chooses them here; NCCL reads NCCL_ALGO and NCCL_PROTO from the environment"},
};

#define FOREIGN_COUNT (sizeof foreign / sizeof foreign[0])

/* Whether value is one of the "|"-separated words of list. */
static int listed(const char *list, const char *value)
{
    size_t len = strlen(value);
    for (const char *p = list; p != NULL && *p != '\0';) {
        const char *end = strchr(p, '|');
        size_t wlen = end ? (size_t)(end - p) : strlen(p);
        if (wlen == len && strncmp(p, value, len) == 0)
            return 1;
        p = end ? end + 1 : NULL;
    }
    return 0;
}

const char *cb_params_nccl_tests_program(const char *argv0)
{
    if (argv0 == NULL)
        return NULL;
    const char *base = strrchr(argv0, '/');
    base = base ? base + 1 : argv0;
    for (size_t i = 0; i < PROGRAM_COUNT; i++)
        if (strcmp(base, programs[i][0]) == 0)
            return programs[i][1];
    return NULL;
}

const char *cb_params_nccl_tests_name(const char *collective)
{
    for (size_t i = 0; collective != NULL && i < PROGRAM_COUNT; i++)
        if (strcmp(collective, programs[i][1]) == 0)
            return programs[i][0];
    return NULL;
}

/* Their -o all: every reduction in their order (common.cu's test_opnames:
 * sum prod max min avg mulsum), which the rows follow. */
static int their_redops_all(parse_state *s)
{
    static const cb_redop order[] = {CB_SUM, CB_PROD, CB_MAX, CB_MIN, CB_AVG, CB_PREMULSUM};
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
        s->p->sizes.redops[i] = order[i];
    s->p->sizes.nredops = (int)(sizeof order / sizeof order[0]);
    return 0;
}

/* Their -d all: every type in their order (common.cu's test_typenames). */
static int their_dtypes_all(parse_state *s)
{
    static const cb_dtype order[] = {CB_INT8,  CB_UINT8, CB_INT32,    CB_UINT32,
                                     CB_INT64, CB_UINT64, CB_HALF,    CB_FLOAT,
                                     CB_DOUBLE, CB_BFLOAT16, CB_FP8_E4M3, CB_FP8_E5M2};
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
        s->p->sizes.dtypes[i] = order[i];
    s->p->sizes.ndtypes = (int)(sizeof order / sizeof order[0]);
    return 0;
}

char cb_params_nccl_tests_long(const char *name, size_t len)
{
    for (size_t i = 0; i < THEIR_COUNT; i++)
        if (strlen(theirs[i].long_name) == len && strncmp(theirs[i].long_name, name, len) == 0)
            return theirs[i].letter;
    return '\0';
}

/* The candidates of a prefix, as the letter each stands for ('\0': one
 * of ours without a letter, so always its own meaning). */
#define PREFIX_MAX 8

typedef struct prefix_match {
    const char *names[PREFIX_MAX];
    char letters[PREFIX_MAX];
    int n;
} prefix_match;

/* Adds a candidate, unless one of the same meaning is there: the same
 * name, or the same letter (-o aside under their names, where their --op
 * is the reduction and ours the collective). */
static void prefix_offer(prefix_match *m, const char *name, char letter, int dropin)
{
    for (int i = 0; i < m->n; i++)
        if (strcmp(m->names[i], name) == 0 ||
            (letter != '\0' && letter == m->letters[i] && !(dropin && letter == 'o')))
            return;
    if (m->n < PREFIX_MAX) {
        m->names[m->n] = name;
        m->letters[m->n] = letter;
    }
    m->n++;
}

int cb_params_long_prefix(parse_state *s, const char *name, size_t len, int dropin,
                          const char **full)
{
    prefix_match m = {.n = 0};
    size_t count = 0;
    const cb_option_spec *table = cb_params_options(&count);
    if (len == 0)
        return 0;
    /* Theirs first under their names, ours first under ours: the name
     * kept for a meaning both have is the one an exact word would find. */
    for (int pass = 0; pass < 2; pass++) {
        if (pass == (dropin ? 0 : 1)) {
            for (size_t i = 0; i < THEIR_COUNT; i++)
                if (strncmp(theirs[i].long_name, name, len) == 0)
                    prefix_offer(&m, theirs[i].long_name, theirs[i].letter, dropin);
        } else {
            for (size_t i = 0; i < count; i++)
                if (strncmp(table[i].long_name, name, len) == 0)
                    prefix_offer(&m, table[i].long_name, table[i].short_name, dropin);
        }
    }
    if (m.n == 1) {
        *full = m.names[0];
        return 1;
    }
    if (m.n == 0)
        return 0;
    char list[256];
    size_t used = 0;
    for (int i = 0; i < m.n && i < PREFIX_MAX && used < sizeof list; i++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s--%s",
                                 i == 0 ? "" : i + 1 == m.n ? " or " : ", ", m.names[i]);
    return cb_params_fail(s, "ambiguous option: could be %s%s", list,
                          m.n > PREFIX_MAX ? ", ..." : "");
}

int cb_params_nccl_tests_letter(char letter)
{
    for (size_t i = 0; i < THEIR_COUNT; i++)
        if (theirs[i].letter == letter)
            return 1;
    return cb_params_is_nccl_tests_option(letter);
}

int cb_params_is_nccl_tests_option(char letter)
{
    for (size_t i = 0; i < FOREIGN_COUNT; i++)
        if (foreign[i].letter == letter)
            return 1;
    return 0;
}

static int foreign_option_value(parse_state *s, const foreign_option *f, const char *value)
{
    if (f->accepted != NULL && listed(f->accepted, value))
        return 0;
    /* -F FILE: some forks' CSV file; ours is --csv. */
    if (f->letter == 'F' && (value[0] < '0' || value[0] > '9'))
        return cb_params_fail(s, "'%s': -F here is rccl-tests' --cache_flush, not a file; "
                              "for a CSV file give --csv %s", value, value);
    return cb_params_fail(s, "'%s': nccl-tests' --%s has no counterpart: %s", value, f->theirs,
                          f->instead);
}

/* Our option table's line for letter, or NULL. */
static const cb_option_spec *our_short(char letter)
{
    size_t count = 0;
    const cb_option_spec *table = cb_params_options(&count);
    for (size_t i = 0; i < count; i++)
        if (table[i].short_name == letter)
            return &table[i];
    return NULL;
}

/* -M: their memory report takes 0 or 1; ours is a flag. */
static int memory_value(parse_state *s, const char *value)
{
    long on;
    if (cb_parse_long(value, 0, 1, &on) != 0)
        return cb_params_fail(s, "'%s': expected 0 or 1 (1: the memory report)", value);
    s->p->sizes.memory_report = (int)on;
    return 0;
}

/* -f 1 is their way to step by -i: the step stays additive. */
static int step_factor_value(parse_state *s, const cb_option_spec *spec, const char *value)
{
    if (strcmp(value, "1") == 0) {
        s->factor_given = 0;
        return 0;
    }
    s->spec = spec;
    return spec->set(s, value);
}

int cb_params_nccl_tests_option(parse_state *s, char letter, const char *value, int dropin)
{
    if (letter == 'h') {
        s->p->help = 1;
        return 0;
    }
    if (dropin && letter == 'o') {
        /* Their -o is the reduction; mulsum is NCCL's premulsum. */
        s->spec = NULL;
        if (strcasecmp(value, "all") == 0)
            return their_redops_all(s);
        return cb_params_opt_redop(s, strcmp(value, "mulsum") == 0 ? "premulsum" : value);
    }
    if (dropin && letter == 'd' && strcasecmp(value, "all") == 0) {
        s->spec = NULL;
        return their_dtypes_all(s);
    }
    if (letter == 'M')
        return memory_value(s, value);
    for (size_t i = 0; i < FOREIGN_COUNT; i++)
        if (foreign[i].letter == letter)
            return foreign_option_value(s, &foreign[i], value);
    const cb_option_spec *spec = our_short(letter);
    if (spec == NULL || spec->arg == NULL)
        return cb_params_fail(s, "unknown option");
    if (dropin && letter == 'f')
        return step_factor_value(s, spec, value);
    s->spec = spec;
    return spec->set(s, value);
}

/* Their sizes step by 1 MiB from 32 MiB to 32 MiB unless -f gives a factor. */
#define THEIR_SIZE (32ULL << 20)
#define THEIR_STEP (1ULL << 20)

void cb_params_nccl_tests_defaults(cb_params *p, const char *collective)
{
    p->sizes.collectives[0] = cb_collective_lookup(collective);
    p->sizes.ncollectives = 1;
    p->sizes.min_bytes = THEIR_SIZE;
    p->sizes.max_bytes = THEIR_SIZE;
    p->sizes.step_bytes = THEIR_STEP;
    p->tests_program = collective;
}

/* One option's line: left, then text wrapped at 80 columns under itself. */
#define HELP_INDENT 26
#define HELP_WIDTH 80

static void help_line(FILE *out, const char *left, const char *text)
{
    int col = fprintf(out, "  %-*s", HELP_INDENT - 2, left);
    while (*text != '\0') {
        size_t word = strcspn(text, " ");
        if (col > HELP_INDENT && col + 1 + (int)word > HELP_WIDTH)
            col = fprintf(out, "\n%*s", HELP_INDENT, "") - 1;
        else if (col > HELP_INDENT)
            col += fprintf(out, " ");
        col += fprintf(out, "%.*s", (int)word, text);
        text += word;
        text += strspn(text, " ");
    }
    fputc('\n', out);
}

void cb_params_nccl_tests_help(FILE *out)
{
    fprintf(out, "\nnccl-tests' long options work where ours have no such word "
                 "(--warmup_iters: -w);\n"
                 "  as all_reduce_perf, ... their grammar holds (-o is the reduction).\n"
                 "  Accepted where they change nothing:");
    for (size_t i = 0; i < FOREIGN_COUNT; i++)
        if (foreign[i].accepted != NULL)
            fprintf(out, " -%c %s;", foreign[i].letter, foreign[i].accepted);
    fprintf(out, "\n  refused with what to use instead (status 2): other values,");
    for (size_t i = 0; i < FOREIGN_COUNT; i++)
        if (foreign[i].accepted == NULL)
            fprintf(out, " -%c", foreign[i].letter);
    fputc('\n', out);
}

void cb_params_nccl_tests_usage(FILE *out, const char *prog, const char *collective)
{
    fprintf(out, "Usage: %s -g N [OPTION]...\n"
                 "   or: mpirun -np N %s [OPTION]...\n"
                 "nccl-collbench measuring %s with nccl-tests 2.19.6's options,\n"
                 "one rank per GPU. Every option takes a value (defaults in brackets):\n",
            prog, prog, collective);
    for (size_t i = 0; i < THEIR_COUNT; i++) {
        char left[40];
        snprintf(left, sizeof left, "-%c, --%s", theirs[i].letter, theirs[i].long_name);
        help_line(out, left, theirs[i].here);
    }
    fprintf(out, "nccl-collbench's own long options (--csv, --json, --stats, ...) work too;\n"
                 "see nccl-collbench --help and nccl-collbench-nccl-tests(7), Option map.\n");
}
