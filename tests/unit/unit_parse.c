/* Strict parsing of numbers and of the command line. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "common/format.h"
#include "common/names.h"
#include "options/params.h"
#include "common/parse.h"
#include "unit.h"
#include "unit_params.h"

static void test_bytes(unit_state *u)
{
    uint64_t v = 0;
    CHECK(u, cb_parse_bytes("8", &v) == 0 && v == 8);
    CHECK(u, cb_parse_bytes("0", &v) == 0 && v == 0);
    CHECK(u, cb_parse_bytes("1K", &v) == 0 && v == 1024);
    CHECK(u, cb_parse_bytes("3k", &v) == 0 && v == 3072);
    CHECK(u, cb_parse_bytes("64M", &v) == 0 && v == 64u << 20);
    CHECK(u, cb_parse_bytes("2G", &v) == 0 && v == 2ull << 30);
    CHECK(u, cb_parse_bytes("1T", &v) == 0 && v == 1ull << 40);
    CHECK(u, cb_parse_bytes("18446744073709551615", &v) == 0 && v == UINT64_MAX);
    const char *bad[] = {"", "-1", "+1", " 1", "1 ", "1.5K", "1KB", "K", "1X", "0x10",
                         "18446744073709551616", "16777216T", "99999999999999999999G", NULL};
    for (int i = 0; bad[i]; i++) {
        v = 12345;
        CHECK(u, cb_parse_bytes(bad[i], &v) == -1);
        CHECK(u, v == 12345);
    }
    CHECK(u, cb_parse_bytes(NULL, &v) == -1);
}

static void test_long(unit_state *u)
{
    long v = 0;
    CHECK(u, cb_parse_long("20", 1, 100, &v) == 0 && v == 20);
    CHECK(u, cb_parse_long("-3", -5, 5, &v) == 0 && v == -3);
    CHECK(u, cb_parse_long("0", 1, 100, &v) == -1);
    CHECK(u, cb_parse_long("101", 1, 100, &v) == -1);
    CHECK(u, cb_parse_long("", 1, 100, &v) == -1);
    CHECK(u, cb_parse_long("1e3", 1, 10000, &v) == -1);
    CHECK(u, cb_parse_long("12abc", 1, 100, &v) == -1);
    CHECK(u, cb_parse_long(" 5", 1, 100, &v) == -1);
    CHECK(u, cb_parse_long("99999999999999999999999", 1, 100, &v) == -1);
}

static void test_format(unit_state *u)
{
    char buf[32];
    cb_format_bytes(1000, buf, sizeof buf);
    CHECK(u, strcmp(buf, "1000") == 0);
    cb_format_bytes(64u << 20, buf, sizeof buf);
    CHECK(u, strcmp(buf, "64M") == 0);
    cb_format_bytes(3u << 10, buf, sizeof buf);
    CHECK(u, strcmp(buf, "3K") == 0);
    cb_format_bytes(0, buf, sizeof buf);
    CHECK(u, strcmp(buf, "0") == 0);
}

/* Parse a NULL-terminated argument list; returns the parser's result. */
static void test_params_good(unit_state *u)
{
    cb_params p;
    char err[512];
    CHECK(u, parse(&p, err, sizeof err, ARGS("-n", "5")) == 0);
    CHECK(u, p.sizes.iters == 5 && p.sizes.warmup == 1 && p.verify.check_passes == 1);
    CHECK(u, p.sizes.min_bytes == 8 && p.sizes.max_bytes == 128u << 20 && p.sizes.step_factor == 2);
    CHECK(u, p.sizes.ncollectives == 1 && strcmp(p.sizes.collectives[0]->name, "allreduce") == 0);
    CHECK(u, p.sizes.ndtypes == 1 && p.sizes.dtypes[0] == CB_FLOAT);
    CHECK(u, p.sizes.nredops == 1 && p.sizes.redops[0] == CB_SUM);
    CHECK(u, strcmp(p.backend, "auto") == 0 && p.out.csv_path == NULL);
    CHECK(u, p.timing.budget_ms == 0 && p.timing.stable_pct == 2);

    CHECK(u, parse(&p, err, sizeof err, ARGS("--budget", "5", "--stable=0")) == 0);
    CHECK(u, p.timing.budget_ms == 5 && p.timing.stable_pct == 0);
    CHECK(u, parse(&p, err, sizeof err, ARGS("--stable", "1000")) == 0 && p.timing.stable_pct == 1000);
    CHECK(u, parse(&p, err, sizeof err, ARGS("--stable", "1001")) != 0 && strstr(err, "1001"));

    /* --layout and --hier-split, and the colour a spec gives each rank. */
    CHECK(u, p.sizes.nlayouts == 1 && p.sizes.layouts[0] == CB_LAYOUT_ROW);
    CHECK(u, parse(&p, err, sizeof err, ARGS("--layout", "col,row")) == 0);
    CHECK(u, p.sizes.nlayouts == 2 && p.sizes.layouts[0] == CB_LAYOUT_COL && p.sizes.layouts[1] == CB_LAYOUT_ROW);
    CHECK(u, parse(&p, err, sizeof err, ARGS("--layout", "row,col,row")) != 0 &&
                 strstr(err, "twice"));
    CHECK(u, parse(&p, err, sizeof err, ARGS("-n", "1")) == 0 && p.sizes.hier.kind == CB_SPLIT_NODE &&
                 strcmp(p.sizes.hier.text, "node") == 0 && p.sizes.split.kind == CB_SPLIT_NONE);
    CHECK(u, parse(&p, err, sizeof err, ARGS("--hier-split", "stride:3")) == 0);
    CHECK(u, p.sizes.hier.kind == CB_SPLIT_STRIDE && p.sizes.hier.k == 3 && p.sizes.split.kind == CB_SPLIT_NONE);
    CHECK(u, cb_split_color(&p.sizes.hier, "--hier-split", 7, 8, err, sizeof err) == 1);
    CHECK(u, parse(&p, err, sizeof err, ARGS("--hier-split", "color:4,4,9")) == 0);
    CHECK(u, cb_split_color(&p.sizes.hier, "--hier-split", 2, 3, err, sizeof err) == 9);
    CHECK(u, cb_split_color(&p.sizes.hier, "--hier-split", 0, 4, err, sizeof err) == -1 &&
                 strstr(err, "--hier-split color:4,4,9: 3 colours for 4 ranks"));
    CHECK(u, cb_params_check_ranks(&p, 4, err, sizeof err) != 0 && strstr(err, "--hier-split"));
    CHECK(u, cb_params_check_ranks(&p, 3, err, sizeof err) == 0);

    CHECK(u, parse(&p, err, sizeof err,
                   ARGS("-b1K", "--maxbytes=1M", "-f", "4", "-w", "0", "-c0", "-a", "max")) == 0);
    CHECK(u, p.sizes.min_bytes == 1024 && p.sizes.max_bytes == 1u << 20 && p.sizes.step_factor == 4);
    CHECK(u, p.sizes.warmup == 0 && p.verify.check_passes == 0 && p.timing.average == CB_AVERAGE_MAX);

    CHECK(u, parse(&p, err, sizeof err, ARGS("-i", "1M", "-e", "4M", "-b", "1M")) == 0);
    CHECK(u, p.sizes.step_bytes == 1u << 20 && p.sizes.step_factor == 0);

    CHECK(u, parse(&p, err, sizeof err,
                   ARGS("-o", "all_reduce", "-d", "double,int32", "--redop", "max,sum")) == 0);
    CHECK(u, p.sizes.ndtypes == 2 && p.sizes.dtypes[0] == CB_DOUBLE && p.sizes.dtypes[1] == CB_INT32);
    CHECK(u, p.sizes.nredops == 2 && p.sizes.redops[0] == CB_MAX && p.sizes.redops[1] == CB_SUM);

    CHECK(u, parse(&p, err, sizeof err, ARGS("-d", "all", "--redop", "all", "-o", "all")) == 0);
    CHECK(u, p.sizes.ndtypes == CB_DTYPE_COUNT && p.sizes.nredops == CB_REDOP_COUNT);

    CHECK(u, parse(&p, err, sizeof err, ARGS("-a", "0")) == 0 && p.timing.average == CB_AVERAGE_RANK0);
    CHECK(u, parse(&p, err, sizeof err, ARGS("--csv", "-")) == 0 && strcmp(p.out.csv_path, "-") == 0);
    CHECK(u, parse(&p, err, sizeof err, ARGS("--backend", "mpi")) == 0);
    CHECK(u, parse(&p, err, sizeof err, ARGS("-h")) == 0 && p.help);
    CHECK(u, parse(&p, err, sizeof err, ARGS("--version")) == 0 && p.version);
    CHECK(u, parse(&p, err, sizeof err, ARGS("-b", "64", "-e", "64")) == 0);
}

/* Each bad command line fails with a message that names the offending text. */
static void test_params_bad(unit_state *u)
{
    static const struct {
        const char *args[6];
        const char *must_mention;
    } cases[] = {
        {{"--bogus"}, "--bogus"},
        {{"-q"}, "-q"},
        {{"stray"}, "stray"},
        {{"-b"}, "needs a value"},
        {{"-b", "abc"}, "abc"},
        {{"-b", "-5"}, "-5"},
        {{"-b", "0"}, "at least 1"},
        {{"-e", "99999999999999999999"}, "99999999999999999999"},
        {{"-b", "1M", "-e", "1K"}, "above"},
        {{"-f", "1"}, "'1'"},
        {{"-f", "2.5"}, "2.5"},
        {{"-f", "2", "-i", "8"}, "not both"},
        {{"-i", "0"}, "at least 1"},
        {{"-n", "0"}, "'0'"},
        {{"-n", "-4"}, "-4"},
        {{"-n", "ten"}, "ten"},
        {{"-w", "-1"}, "-1"},
        {{"-c", "x"}, "'x'"},
        {{"-a", "4"}, "'4'"},
        {{"-a", "median"}, "median"},
        {{"-z", "4"}, "'4'"},
        {{"-o", "allredooce"}, "allredooce"},
        {{"-o", "allreduce,"}, "empty"},
        {{"-o", "allreduce,allreduce"}, "twice"},
        {{"-d", "float16x"}, "float16x"},
        {{"-d", ""}, "empty"},
        {{"--redop", "mean"}, "mean"},
        {{"--backend", "gloo"}, "gloo"},
        {{"--csv", ""}, "empty"},
        {{"--help=yes"}, "yes"},
        {{"-n", "1000000001"}, "1000000001"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cb_params p;
        char err[512];
        int rc = parse(&p, err, sizeof err, cases[i].args);
        CHECK(u, rc == -1);
        if (rc != -1 || strstr(err, cases[i].must_mention) == NULL)
            fprintf(stderr, "  case %zu (%s ...): got rc %d, message '%s'\n", i,
                    cases[i].args[0], rc, err);
        CHECK(u, strstr(err, cases[i].must_mention) != NULL);
        CHECK(u, strchr(err, '\n') == NULL);
    }
}

/* "Did you mean": the nearest name by edit distance, only when near enough. */
static void test_nearest(unit_state *u)
{
    cb_nearest n;
    cb_nearest_start(&n, "allreduc");
    cb_nearest_offer(&n, "allgather allreduce reduce");
    CHECK(u, cb_nearest_name(&n) != NULL && strcmp(cb_nearest_name(&n), "allreduce") == 0);
    /* A swap of neighbours costs one, case is ignored. */
    cb_nearest_start(&n, "FLAOT");
    cb_nearest_offer(&n, "double");
    cb_nearest_offer(&n, "float");
    CHECK(u, cb_nearest_name(&n) != NULL && strcmp(cb_nearest_name(&n), "float") == 0);
    /* Too far from every name: no guess. */
    cb_nearest_start(&n, "zzzz");
    cb_nearest_offer(&n, "sum prod min max");
    CHECK(u, cb_nearest_name(&n) == NULL);
    /* Short names allow one edit, no more. */
    cb_nearest_start(&n, "mx");
    cb_nearest_offer(&n, "max");
    CHECK(u, cb_nearest_name(&n) != NULL && strcmp(cb_nearest_name(&n), "max") == 0);
    cb_nearest_start(&n, "m");
    cb_nearest_offer(&n, "max");
    CHECK(u, cb_nearest_name(&n) == NULL);
    /* The nearest wins; a tie keeps the first offered. */
    cb_nearest_start(&n, "min-busb");
    cb_nearest_offer(&n, "min-bus min-busbw");
    CHECK(u, cb_nearest_name(&n) != NULL && strcmp(cb_nearest_name(&n), "min-bus") == 0);
    cb_nearest_start(&n, "mix");
    cb_nearest_offer(&n, "min max");
    CHECK(u, cb_nearest_name(&n) != NULL && strcmp(cb_nearest_name(&n), "min") == 0);
    /* Nothing offered, empty names and a long word are harmless. */
    cb_nearest_start(&n, "x");
    CHECK(u, cb_nearest_name(&n) == NULL);
    cb_nearest_offer(&n, "");
    cb_nearest_offer(&n, NULL);
    CHECK(u, cb_nearest_name(&n) == NULL);
    char longword[200];
    memset(longword, 'a', sizeof longword - 1);
    longword[sizeof longword - 1] = '\0';
    cb_nearest_start(&n, longword);
    cb_nearest_offer(&n, "aaaa");
    CHECK(u, cb_nearest_name(&n) == NULL);
}

/* nccl-tests' environment: NCCL_TESTS_MIN_BW and NCCL_TESTS_SPLIT(_MASK)
 * as nccl-tests reads them, through a stand-in for getenv. */
static const char *const *fake_env;

static const char *fake_getenv(const char *name)
{
    for (const char *const *e = fake_env; *e != NULL; e += 2)
        if (strcmp(e[0], name) == 0)
            return e[1];
    return NULL;
}

static int env_parse(cb_params *p, const char *const *env, char *err, size_t len)
{
    fake_env = env;
    cb_params_defaults(p);
    return cb_params_environment(p, fake_getenv, err, len);
}

static void test_environment(unit_state *u)
{
    cb_params p;
    char err[512];
    const char *none[] = {NULL};
    CHECK(u, env_parse(&p, none, err, sizeof err) == 0 && isnan(p.expect.tests_min_bw) &&
             p.sizes.split.kind == CB_SPLIT_NONE);
    const char *bw[] = {"NCCL_TESTS_MIN_BW", "12.5", NULL};
    CHECK(u, env_parse(&p, bw, err, sizeof err) == 0 && p.expect.tests_min_bw == 12.5);
    const char *bad_bw[] = {"NCCL_TESTS_MIN_BW", "fast", NULL};
    CHECK(u, env_parse(&p, bad_bw, err, sizeof err) == -1 && strstr(err, "fast") != NULL);
    /* Colours of rank r among 8 under each operator. */
    struct { const char *name, *value; int colors[8]; } cases[] = {
        {"NCCL_TESTS_SPLIT", "MOD 2", {0, 1, 0, 1, 0, 1, 0, 1}},
        {"NCCL_TESTS_SPLIT", "%4", {0, 1, 2, 3, 0, 1, 2, 3}},
        {"NCCL_TESTS_SPLIT", "DIV 4", {0, 0, 0, 0, 1, 1, 1, 1}},
        {"NCCL_TESTS_SPLIT", "and 0x6", {0, 0, 2, 2, 4, 4, 6, 6}},
        {"NCCL_TESTS_SPLIT", "&0b1", {0, 1, 0, 1, 0, 1, 0, 1}},
        {"NCCL_TESTS_SPLIT", "OR 4", {4, 5, 6, 7, 4, 5, 6, 7}},
        {"NCCL_TESTS_SPLIT_MASK", "3", {0, 1, 2, 3, 0, 1, 2, 3}},
        {"NCCL_TESTS_SPLIT_MASK", "0x4", {0, 0, 0, 0, 4, 4, 4, 4}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const char *env[] = {cases[c].name, cases[c].value, NULL};
        int ok = env_parse(&p, env, err, sizeof err) == 0;
        CHECK(u, ok);
        for (int r = 0; ok && r < 8; r++)
            CHECK(u, cb_split_color(&p.sizes.split, "--split", r, 8, err, sizeof err) ==
                         cases[c].colors[r]);
    }
    /* MOD and DIV are --split stride:K and size:K, and say so. */
    const char *mod[] = {"NCCL_TESTS_SPLIT", "MOD 8", NULL};
    CHECK(u, env_parse(&p, mod, err, sizeof err) == 0 && p.sizes.split.kind == CB_SPLIT_STRIDE &&
             strncmp(p.sizes.split.text, "stride:8 ", 9) == 0);
    /* The mask takes precedence, as in nccl-tests. */
    const char *both[] = {"NCCL_TESTS_SPLIT", "MOD 2", "NCCL_TESTS_SPLIT_MASK", "0", NULL};
    CHECK(u, env_parse(&p, both, err, sizeof err) == 0 && p.sizes.split.kind == CB_SPLIT_AND &&
             p.sizes.split.k == 0);
    const char *bad[][2] = {{"NCCL_TESTS_SPLIT", "MOD 0"}, {"NCCL_TESTS_SPLIT", "XOR 1"},
                            {"NCCL_TESTS_SPLIT", "DIV x"}, {"NCCL_TESTS_SPLIT", "AND 1z"},
                            {"NCCL_TESTS_SPLIT_MASK", "0xg"}, {"NCCL_TESTS_SPLIT", "OR -1"}};
    for (size_t c = 0; c < sizeof bad / sizeof bad[0]; c++) {
        const char *env[] = {bad[c][0], bad[c][1], NULL};
        CHECK(u, env_parse(&p, env, err, sizeof err) == -1 && strstr(err, bad[c][1]) != NULL &&
                 strstr(err, "--split") != NULL);
    }
    /* With --split given too: refused, naming both. */
    fake_env = mod;
    cb_params_defaults(&p);
    char *argv[] = {"x", "--split", "node", NULL};
    CHECK(u, cb_params_parse(&p, 3, argv, err, sizeof err) == 0);
    CHECK(u, cb_params_environment(&p, fake_getenv, err, sizeof err) == -1 &&
             strstr(err, "--split node") != NULL && strstr(err, "NCCL_TESTS_SPLIT") != NULL);
    /* The preamble notes: one per NCCL_TESTS_ variable set, others ignored. */
    char *envp[] = {"PATH=/bin", "NCCL_TESTS_MIN_BW=5", "NCCL_TESTS_FOO=1", "NCCL_TESTS_BAR=",
                    NULL};
    char note[512];
    CHECK(u, cb_params_env_note(envp, 0, note, sizeof note) == 1 &&
             strstr(note, "0.9 x 5 GB/s") != NULL);
    CHECK(u, cb_params_env_note(envp, 1, note, sizeof note) == 1 &&
             strstr(note, "NCCL_TESTS_FOO is set but nccl-collbench does not read it") != NULL);
    CHECK(u, cb_params_env_note(envp, 2, note, sizeof note) == 0);
}

int main(void)
{
    unit_state u = {0, 0};
    test_bytes(&u);
    test_long(&u);
    test_format(&u);
    test_params_good(&u);
    test_params_bad(&u);
    test_nearest(&u);
    test_environment(&u);
    return unit_done(&u, "unit_parse");
}
