/* nccl-tests' grammar: under each of their program names every one of their
 * long options (2.19.6) is read with their meaning or refused naming ours,
 * and under our own name those that do not clash with ours. */
#include <stddef.h>
#include <string.h>

#include "common/format.h"
#include "options/params.h"
#include "unit.h"
#include "unit_params.h"

/* What an option gives: an int field of cb_params, a byte count, or a
 * refusal whose message holds a word. */
enum want_kind { WANT_INT, WANT_BYTES, WANT_ERROR, WANT_NOTHING };

#define INT_AT(field) WANT_INT, offsetof(cb_params, field)
#define BYTES_AT(field) WANT_BYTES, offsetof(cb_params, field)

static const struct long_case {
    const char *const *args;
    enum want_kind kind;
    size_t offset;
    long long value;       /* WANT_INT, WANT_BYTES */
    const char *message;   /* WANT_ERROR */
    int clashes;           /* ours has the same word with another meaning */
} cases[] = {
    {ARGS("--nthreads", "1"), WANT_NOTHING, 0, 0, NULL, 0},
    {ARGS("--nthreads", "2"), WANT_ERROR, 0, 0, "mpirun", 0},
    {ARGS("--ngpus", "1"), WANT_NOTHING, 0, 0, NULL, 0},
    {ARGS("--ngpus", "4"), INT_AT(launch.local_ranks), 4, NULL, 0},
    {ARGS("--ngpus", "65"), WANT_ERROR, 0, 0, "number of GPUs from 1 to 64", 0},
    {ARGS("--minbytes", "1K"), BYTES_AT(sizes.min_bytes), 1024, NULL, 0},
    {ARGS("--maxbytes", "64M"), BYTES_AT(sizes.max_bytes), 64 << 20, NULL, 0},
    {ARGS("--stepbytes", "2M"), BYTES_AT(sizes.step_bytes), 2 << 20, NULL, 0},
    {ARGS("--stepfactor", "4"), BYTES_AT(sizes.step_factor), 4, NULL, 0},
    {ARGS("--iters", "7"), INT_AT(sizes.iters), 7, NULL, 0},
    {ARGS("--agg_iters", "3"), INT_AT(timing.agg), 3, NULL, 0},
    {ARGS("--warmup_iters", "4"), INT_AT(sizes.warmup), 4, NULL, 0},
    {ARGS("--run_cycles", "0"), INT_AT(sizes.cycles), 0, NULL, 0},
    {ARGS("--parallel_init", "1"), WANT_NOTHING, 0, 0, NULL, 0},
    {ARGS("--parallel_init", "2"), WANT_ERROR, 0, 0, "parallel_init", 0},
    {ARGS("--check", "0"), INT_AT(verify.check_passes), 0, NULL, 0},
    {ARGS("--op", "max"), INT_AT(sizes.redops[0]), CB_MAX, NULL, 1},
    {ARGS("--op", "mulsum"), INT_AT(sizes.redops[0]), CB_PREMULSUM, NULL, 1},
    {ARGS("--op", "all"), INT_AT(sizes.nredops), CB_REDOP_COUNT, NULL, 1},
    {ARGS("--datatype", "int8"), INT_AT(sizes.dtypes[0]), CB_INT8, NULL, 0},
    {ARGS("--datatype", "f8e5m2"), INT_AT(sizes.dtypes[0]), CB_FP8_E5M2, NULL, 0},
    {ARGS("--root", "1"), INT_AT(sizes.root), 1, NULL, 0},
    {ARGS("--blocking", "1"), INT_AT(timing.blocking), 1, NULL, 0},
    {ARGS("--stream_null", "0"), WANT_NOTHING, 0, 0, NULL, 0},
    {ARGS("--stream_null", "1"), WANT_ERROR, 0, 0, "NULL-stream", 0},
    {ARGS("--timeout", "9"), INT_AT(launch.timeout), 9, NULL, 0},
    {ARGS("--cudagraph", "2"), INT_AT(timing.graph_launches), 2, NULL, 0},
    {ARGS("--report_cputime", "1"), INT_AT(timing.report_cputime), 1, NULL, 0},
    {ARGS("--report_timestamps", "1"), INT_AT(out.timestamps), 1, NULL, 0},
    {ARGS("--average", "2"), INT_AT(timing.average), CB_AVERAGE_MIN, NULL, 0},
    {ARGS("--local_register", "1"), INT_AT(sizes.registration), 1, NULL, 0},
    {ARGS("--cta_policy", "1"), WANT_ERROR, 0, 0, "NCCL_CTA_POLICY", 0},
    {ARGS("--device_implementation", "0"), WANT_NOTHING, 0, 0, NULL, 0},
    {ARGS("--device_implementation", "1"), WANT_ERROR, 0, 0, "device-API", 0},
    {ARGS("--device_cta_count", "16"), WANT_ERROR, 0, 0, "device-API kernels", 0},
    {ARGS("--memory", "1"), INT_AT(sizes.memory_report), 1, NULL, 1},
    {ARGS("--memory=1"), INT_AT(sizes.memory_report), 1, NULL, 0},
    {ARGS("--unalign", "3"), INT_AT(sizes.unalign), 3, NULL, 0},
    {ARGS("--per_iter_timing", "1"), INT_AT(timing.per_iter), 1, NULL, 0},
    {ARGS("--per_iter_timing", "1", "--per_iter_skip", "2"), INT_AT(timing.per_iter_skip), 2, NULL, 0},
    {ARGS("--per_iter_skip", "2"), WANT_ERROR, 0, 0, "-I 1", 0},
    {ARGS("--help"), INT_AT(help), 1, NULL, 0},
    /* Their short forms with a separate value. */
    {ARGS("-M", "1"), INT_AT(sizes.memory_report), 1, NULL, 0},
    {ARGS("-V", "16"), WANT_ERROR, 0, 0, "device_cta_count", 1},
    {ARGS("-o", "min"), INT_AT(sizes.redops[0]), CB_MIN, NULL, 1},
    {ARGS("-g", "2"), INT_AT(launch.local_ranks), 2, NULL, 0},
    {ARGS("-x", "0"), WANT_ERROR, 0, 0, "NCCL_CTA_POLICY", 0},
};

#define NCASES (sizeof cases / sizeof cases[0])

/* Every long option of theirs appears in a case: the list from their
 * source (src/common.cu, longopts[]). */
static const char *const their_longs[] = {
    "nthreads", "ngpus", "minbytes", "maxbytes", "stepbytes", "stepfactor", "iters",
    "agg_iters", "warmup_iters", "run_cycles", "parallel_init", "check", "op", "datatype",
    "root", "blocking", "stream_null", "timeout", "cudagraph", "report_cputime",
    "report_timestamps", "output_file", "average", "local_register", "cta_policy",
    "device_implementation", "device_cta_count", "memory", "unalign", "per_iter_timing",
    "per_iter_skip", "help",
};

static void check_case(unit_state *u, const char *program, const struct long_case *c)
{
    cb_params p;
    char err[256];
    int rc = parse_as(program, &p, err, sizeof err, c->args);
    int ok = c->kind == WANT_ERROR ? rc != 0 && strstr(err, c->message) != NULL
             : c->kind == WANT_INT ? rc == 0 && *(const int *)((const char *)&p + c->offset) ==
                                                    c->value
             : c->kind == WANT_BYTES ? rc == 0 && (long long)*(const uint64_t *)(
                                                      (const char *)&p + c->offset) == c->value
                                     : rc == 0;
    if (!ok)
        fprintf(stderr, "%s %s %s: rc %d, '%s'\n", program, c->args[0],
                c->args[1] ? c->args[1] : "", rc, err);
    CHECK(u, ok);
}

static void test_long_options(unit_state *u)
{
    for (size_t i = 0; i < NCASES; i++) {
        check_case(u, "all_reduce_perf", &cases[i]);
        if (!cases[i].clashes)
            check_case(u, "nccl-collbench", &cases[i]);
    }
    for (size_t l = 0; l < sizeof their_longs / sizeof their_longs[0]; l++) {
        int found = 0;
        size_t len = strlen(their_longs[l]);
        for (size_t i = 0; i < NCASES; i++) {
            const char *word = cases[i].args[0];
            found |= strncmp(word, "--", 2) == 0 && strncmp(word + 2, their_longs[l], len) == 0 &&
                     (word[2 + len] == '\0' || word[2 + len] == '=');
        }
        found |= strcmp(their_longs[l], "output_file") == 0;   /* below */
        if (!found)
            fprintf(stderr, "--%s: no case\n", their_longs[l]);
        CHECK(u, found);
    }
    cb_params p;
    char err[256];
    CHECK(u, parse_as("all_reduce_perf", &p, err, sizeof err, ARGS("--output_file", "a.json")) ==
             0 && strcmp(p.out.tests_json_path, "a.json") == 0);
    CHECK(u, parse_as("nccl-collbench", &p, err, sizeof err, ARGS("--output_file=b.json")) == 0 &&
             strcmp(p.out.tests_json_path, "b.json") == 0);
}

/* Under our name the words we share keep our meaning. */
static void test_ours_first(unit_state *u)
{
    cb_params p;
    char err[256];
    CHECK(u, parse_as("nccl-collbench", &p, err, sizeof err, ARGS("--op", "broadcast")) == 0 &&
             strcmp(p.sizes.collectives[0]->name, "broadcast") == 0);
    CHECK(u, parse_as("nccl-collbench", &p, err, sizeof err, ARGS("-o", "max")) != 0 &&
             strstr(err, "--redop max") != NULL);
    CHECK(u, parse_as("nccl-collbench", &p, err, sizeof err, ARGS("--memory")) == 0 &&
             p.sizes.memory_report == 1);
    CHECK(u, parse_as("nccl-collbench", &p, err, sizeof err, ARGS("-M", "0")) == 0 &&
             p.sizes.memory_report == 0);
    CHECK(u, parse_as("nccl-collbench", &p, err, sizeof err, ARGS("-V")) == 0 && p.version == 1);
    CHECK(u, p.tests_program == NULL && p.sizes.min_bytes == 8);
}

/* Each program name, through any path, measures its collective with their
 * defaults; other names are ours. */
static void test_programs(unit_state *u)
{
    static const char *const names[][2] = {
        {"all_reduce_perf", "allreduce"}, {"/opt/x/all_gather_perf", "allgather"},
        {"./broadcast_perf", "broadcast"}, {"reduce_perf", "reduce"},
        {"reduce_scatter_perf", "reducescatter"}, {"alltoall_perf", "alltoall"},
        {"alltoallv_perf", "alltoallv"}, {"gather_perf", "gather"},
        {"scatter_perf", "scatter"}, {"sendrecv_perf", "sendrecv"},
    };
    cb_params p;
    char err[256];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        CHECK(u, parse_as(names[i][0], &p, err, sizeof err, ARGS("-o", "sum")) == 0);
        CHECK(u, p.sizes.ncollectives == 1 && strcmp(p.sizes.collectives[0]->name, names[i][1]) == 0);
        CHECK(u, strcmp(cb_params_nccl_tests_program(names[i][0]), names[i][1]) == 0);
        CHECK(u, p.sizes.min_bytes == 32 << 20 && p.sizes.max_bytes == 32 << 20);
        CHECK(u, p.sizes.step_bytes == 1 << 20 && p.sizes.step_factor == 0);
    }
    CHECK(u, cb_params_nccl_tests_program("all_reduce_perf.sh") == NULL);
    CHECK(u, cb_params_nccl_tests_program("/bin/nccl-collbench") == NULL);
    CHECK(u, cb_params_nccl_tests_program("all_reduce_perf/x") == NULL);
    /* -f 1 steps by -i, as theirs. */
    CHECK(u, parse_as("all_reduce_perf", &p, err, sizeof err, ARGS("-f", "1", "-i", "4K")) == 0 &&
             p.sizes.step_factor == 0 && p.sizes.step_bytes == 4096);
    /* Every option of theirs takes a value: a bare -M is short of one. */
    CHECK(u, parse_as("all_reduce_perf", &p, err, sizeof err, ARGS("-M")) != 0 &&
             strstr(err, "needs a value") != NULL);
    /* A letter of ours that is not theirs keeps its meaning; others are unknown. */
    CHECK(u, parse_as("all_reduce_perf", &p, err, sizeof err, ARGS("-B")) == 0 && p.verify.repeat_check);
    CHECK(u, parse_as("all_reduce_perf", &p, err, sizeof err, ARGS("-q")) != 0 &&
             strstr(err, "unknown option") != NULL);
    /* Our own long options work there too. */
    CHECK(u, parse_as("all_reduce_perf", &p, err, sizeof err, ARGS("--csv", "x.csv")) == 0 &&
             strcmp(p.out.csv_path, "x.csv") == 0);
}

/* -o all and -d all in their order (common.cu, test_opnames and
 * test_typenames). */
static void test_their_order(unit_state *u)
{
    cb_params p;
    char err[256];
    static const cb_redop ops[] = {CB_SUM, CB_PROD, CB_MAX, CB_MIN, CB_AVG, CB_PREMULSUM};
    CHECK(u, parse_as("all_reduce_perf", &p, err, sizeof err, ARGS("-o", "all")) == 0 &&
             p.sizes.nredops == 6 && memcmp(p.sizes.redops, ops, sizeof ops) == 0);
    static const cb_dtype types[] = {CB_INT8,  CB_UINT8,  CB_INT32,  CB_UINT32,
                                     CB_INT64, CB_UINT64, CB_HALF,   CB_FLOAT,
                                     CB_DOUBLE, CB_BFLOAT16, CB_FP8_E4M3, CB_FP8_E5M2};
    CHECK(u, parse_as("all_gather_perf", &p, err, sizeof err, ARGS("-d", "all")) == 0 &&
             p.sizes.ndtypes == 12 && memcmp(p.sizes.dtypes, types, sizeof types) == 0);
    CHECK(u, strcmp(cb_params_nccl_tests_name("allreduce"), "all_reduce_perf") == 0 &&
             cb_params_nccl_tests_name("barrier") == NULL);
}

/* Their table's figures in 7 or 6 characters (util.cu, getFloatStr). */
static void test_squeezed(unit_state *u)
{
    static const struct {
        double value;
        int width;
        const char *want;
    } squeezed[] = {
        {0.6, 7, "   0.60"},    {1234.567, 7, "1234.57"}, {12345.67, 7, "12345.7"},
        {123456.7, 7, " 123457"}, {1234567.0, 7, "1234567"}, {12345678.0, 7, "1.2e+07"},
        {0.0, 6, "  0.00"},     {123.456, 6, "123.46"},   {1234.56, 6, "1234.6"},
        {123456.0, 6, "123456"}, {1234567.0, 6, " 1e+06"},
    };
    for (size_t i = 0; i < sizeof squeezed / sizeof squeezed[0]; i++) {
        char buf[16];
        cb_format_squeezed(squeezed[i].value, squeezed[i].width, buf, sizeof buf);
        CHECK(u, strcmp(buf, squeezed[i].want) == 0);
    }
}

int main(void)
{
    unit_state u = {0, 0};
    test_their_order(&u);
    test_squeezed(&u);
    test_long_options(&u);
    test_ours_first(&u);
    test_programs(&u);
    return unit_done(&u, "unit_nccl_tests");
}
