/* The ranks' agreement on parameters reads every option from the option
 * table: each option that changes a run is agreed, by a text that changes
 * with its value, and an option can be added only with a sample here. */
#include <string.h>

#include "options/params.h"
#include "options/params_agree.h"
#include "unit.h"
#include "unit_params.h"

/* A non-default value of every option, by its long name (some twice). A new
 * option needs a line here: the test fails naming it until it has one. */
static const struct sample {
    const char *option;
    const char *const *args;
} samples[] = {
    {"op", ARGS("-o", "broadcast")}, {"op", ARGS("-o", "scan")},
    {"minbytes", ARGS("-b", "16")}, {"maxbytes", ARGS("-e", "1K")},
    {"stepfactor", ARGS("-f", "4")}, {"stepbytes", ARGS("-i", "1K")},
    {"iters", ARGS("-n", "3")}, {"warmup", ARGS("-w", "3")}, {"check", ARGS("-c", "0")},
    {"check-timed", ARGS("--check-timed")}, {"repeat-check", ARGS("-B")},
    {"root", ARGS("-r", "1")}, {"root", ARGS("-r", "all")},
    {"datatype", ARGS("-d", "double")}, {"redop", ARGS("--redop", "max")},
    {"average", ARGS("-a", "0")}, {"blocking", ARGS("-z", "1")}, {"blocking", ARGS("-z", "3")},
    {"clock", ARGS("--clock", "device")}, {"rotate", ARGS("--rotate", "0")}, {"agg", ARGS("-m", "2")},
    {"cudagraph", ARGS("-G", "1")}, {"report-cputime", ARGS("-C", "1")},
    {"timeout", ARGS("-T", "60")}, {"require-key", ARGS("--require-key")}, {"backend", ARGS("--backend", "mpi")},
    {"csv", ARGS("--csv", "out.csv")}, {"json", ARGS("--json", "out.json")},
    {"prom", ARGS("--prom", "out.prom")}, {"prom-sizes", ARGS("--prom-sizes", "largest")},
    {"prom-sizes", ARGS("--prom-sizes", "8,1K")},
    {"output", ARGS("--output", "csv=out.csv")},
    {"output", ARGS("--output", "x=-", "--output", "y=b")},
    {"stats", ARGS("--stats")}, {"samples-json", ARGS("--samples-json")},
    {"tests-json", ARGS("-J", "out.json")}, {"per-iter", ARGS("-I", "1")},
    {"per-iter-skip", ARGS("-I", "1", "-K", "2")}, {"timestamps", ARGS("-S", "1")},
    {"split", ARGS("--split", "size:1")}, {"hier-split", ARGS("--hier-split", "size:2")},
    {"layout", ARGS("--layout", "col")}, {"a2av-matrix", ARGS("--a2av-matrix", "hot:4")},
    {"nccl-impl", ARGS("--nccl-impl", "p2p")}, {"local-register", ARGS("-R", "1")},
    {"unalign", ARGS("-u", "3")},
    {"suspect-ratio", ARGS("--suspect-ratio", "0.5")},
    {"cycles", ARGS("-N", "2")}, {"min-busbw", ARGS("--min-busbw", "1.5")},
    {"expect", ARGS("--expect", "auto")}, {"expect-ratio", ARGS("--expect-ratio", "0.5")},
    {"efficiency", ARGS("--efficiency")},
    {"progress", ARGS("--progress")}, {"no-progress", ARGS("--no-progress")},
    {"budget", ARGS("--budget", "5")},
    {"stable", ARGS("--stable", "4")}, {"ngpus", ARGS("-g", "2")},
    {"nthreads", ARGS("-t", "1")}, {"memory", ARGS("-M")}, {"help", ARGS("-h")},
    {"version", ARGS("-V")},
};

#define NSAMPLES (sizeof samples / sizeof samples[0])

/* The parameters without the command line's words, which always differ. */
static int same_parameters(cb_params a, cb_params b)
{
    a.out.argc = b.out.argc = 0;
    a.out.argv = b.out.argv = NULL;
    return memcmp(&a, &b, sizeof a) == 0;
}

/* Option i's long name: what follows "--" in its message name. */
static const char *long_name(const char *name)
{
    const char *dashes = strstr(name, "--");
    return dashes != NULL ? dashes + 2 : name;
}

static void test_every_option(unit_state *u)
{
    cb_params defaults, given;
    char err[256], name[64], base[256], value[256];
    CHECK(u, parse(&defaults, err, sizeof err, ARGS("-n", "20")) == 0);
    size_t count = cb_params_agree_count();
    CHECK(u, count > 30);
    for (size_t i = 0; i < count; i++) {
        int agreed = cb_params_agree_text(&defaults, i, name, sizeof name, base, sizeof base);
        if (agreed < 0)
            fprintf(stderr, "%s: its option_table line says nothing on agreement\n", name);
        CHECK(u, agreed >= 0);
        int tried = 0;
        for (size_t s = 0; s < NSAMPLES; s++) {
            if (strcmp(samples[s].option, long_name(name)) != 0)
                continue;
            tried++;
            CHECK(u, parse(&given, err, sizeof err, samples[s].args) == 0);
            char again[64];
            CHECK(u, cb_params_agree_text(&given, i, again, sizeof again, value,
                                          sizeof value) == agreed);
            CHECK(u, strcmp(again, name) == 0);
            int changed = !same_parameters(defaults, given);
            /* An option that changes the parameters is agreed, and its text
             * tells its value from the default; one that does not is not. */
            if (changed != (agreed == 1) || (changed && strcmp(value, base) == 0))
                fprintf(stderr, "%s %s: parameters %s, agreed %d, text '%s' (default '%s')\n",
                        name, samples[s].args[1] ? samples[s].args[1] : "",
                        changed ? "changed" : "unchanged", agreed, value, base);
            CHECK(u, changed == (agreed == 1));
            CHECK(u, !changed || strcmp(value, base) != 0);
        }
        if (tried == 0)
            fprintf(stderr, "%s: no sample value in unit_params_agree.c's samples[]\n", name);
        CHECK(u, tried > 0);
    }
}

/* The texts the messages show, as tests/cli/params_agree.sh expects them. */
static void test_texts(unit_state *u)
{
    cb_params p;
    char err[256], name[64], value[256];
    CHECK(u, parse(&p, err, sizeof err, ARGS("-n", "7", "-b", "1K", "--layout", "col,row",
                                             "-f", "4", "-r", "all", "-o", "scan_pairs")) == 0);
    static const struct { const char *name, *value; } want[] = {
        {"-n/--iters", "7"}, {"-b/--minbytes", "1K"}, {"--layout", "col,row"}, {"--split", "(none)"},
        {"-f/--stepfactor", "-f 4"}, {"-i/--stepbytes", "-f 4"}, {"-r/--root", "all"},
        {"-o/--op", " scan parts 2"}, {"-h/--help", "not given"}, {"--csv", "(none)"},
        {"-N/--cycles", "1"}, {"--min-busbw", "0"}, {"-g/--ngpus", "1"},
    };
    for (size_t w = 0; w < sizeof want / sizeof want[0]; w++) {
        int found = 0;
        for (size_t i = 0; i < cb_params_agree_count(); i++) {
            cb_params_agree_text(&p, i, name, sizeof name, value, sizeof value);
            if (strcmp(name, want[w].name) == 0) {
                found = 1;
                if (strcmp(value, want[w].value) != 0)
                    fprintf(stderr, "%s: '%s', want '%s'\n", name, value, want[w].value);
                CHECK(u, strcmp(value, want[w].value) == 0);
            }
        }
        CHECK(u, found);
    }
}

int main(void)
{
    unit_state u = {0, 0};
    test_every_option(&u);
    test_texts(&u);
    return unit_done(&u, "unit_params_agree");
}
