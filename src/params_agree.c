/*
 * Every rank must run the same parameters: a rank that parsed another -n or
 * -b would wait in a different collective, or check against other expected
 * values. Each rank writes its parameters as one text per option; the ranks
 * compare a digest of them all, and only on a mismatch look for the first
 * option that differs and one rank whose value differs from rank 0's.
 */
#include "params_agree.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "format.h"
#include "parse.h"

#define VALUE_LEN 256

/* The options in the order they are compared, as messages name them. */
enum {
    OPT_OP, OPT_DTYPE, OPT_REDOP, OPT_MINBYTES, OPT_MAXBYTES, OPT_STEP, OPT_ITERS,
    OPT_WARMUP, OPT_CHECK, OPT_ROOT, OPT_AVERAGE, OPT_BLOCKING, OPT_AGG, OPT_GRAPH,
    OPT_CPUTIME, OPT_TIMEOUT, OPT_BACKEND, OPT_CSV, OPT_JSON, OPT_STATS, OPT_PROGRESS,
    OPT_SPLIT, OPT_HIER, OPT_LAYOUT, OPT_MEMORY, OPT_BUDGET, OPT_STABLE, OPT_HELP,
    OPT_VERSION, OPT_CHECK_TIMED, OPT_SAMPLES_JSON, OPT_NCCL_IMPL, OPT_REGISTER, OPT_COUNT
};

static const char *const option_names[OPT_COUNT] = {
    "-o/--op", "-d/--datatype", "--redop", "-b/--minbytes", "-e/--maxbytes",
    "-f/-i (step)", "-n/--iters", "-w/--warmup", "-c/--check", "-r/--root", "-a/--average",
    "-z/--blocking", "-m/--agg", "-G/--cudagraph", "-C/--report-cputime", "-T/--timeout",
    "--backend", "--csv", "--json", "--stats", "--progress", "--split", "--hier-split",
    "--layout", "-M/--memory", "--budget", "--stable", "-h/--help", "-V/--version",
    "--check-timed", "--samples-json", "--nccl-impl", "-R/--local-register",
};

typedef struct param_texts {
    char value[OPT_COUNT][VALUE_LEN];
} param_texts;

static void put(param_texts *t, int opt, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void put(param_texts *t, int opt, const char *fmt, ...)
{
    size_t len = strlen(t->value[opt]);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->value[opt] + len, VALUE_LEN - len, fmt, ap);
    va_end(ap);
}

static void bytes_text(param_texts *t, int opt, uint64_t bytes)
{
    char text[32];
    cb_format_bytes(bytes, text, sizeof text);
    put(t, opt, "%s", text);
}

static void describe(const cb_params *p, param_texts *t)
{
    memset(t, 0, sizeof *t);
    for (int i = 0; i < p->ncollectives; i++)
        put(t, OPT_OP, "%s%s", i ? "," : "", p->collectives[i]->name);
    if (p->scan != 0)
        put(t, OPT_OP, " scan parts %d below %g", p->scan, p->scan_threshold);
    if (p->min_busbw > 0)
        put(t, OPT_OP, " min busbw %g", p->min_busbw);
    if (p->cycles != 1)
        put(t, OPT_OP, " cycles %d", p->cycles);
    for (int i = 0; i < p->ndtypes; i++)
        put(t, OPT_DTYPE, "%s%s", i ? "," : "", cb_dtype_info_of(p->dtypes[i])->name);
    for (int i = 0; i < p->nredops; i++)
        put(t, OPT_REDOP, "%s%s", i ? "," : "", cb_redop_name(p->redops[i]));
    bytes_text(t, OPT_MINBYTES, p->min_bytes);
    bytes_text(t, OPT_MAXBYTES, p->max_bytes);
    if (p->step_bytes != 0) {
        put(t, OPT_STEP, "-i ");
        bytes_text(t, OPT_STEP, p->step_bytes);
    } else {
        put(t, OPT_STEP, "-f %llu", (unsigned long long)p->step_factor);
    }
    put(t, OPT_ITERS, "%d", p->iters);
    put(t, OPT_WARMUP, "%d", p->warmup);
    put(t, OPT_CHECK, "%d", p->check_passes);
    if (p->root < 0)
        put(t, OPT_ROOT, "all");
    else
        put(t, OPT_ROOT, "%d", p->root);
    put(t, OPT_AVERAGE, "%s", cb_average_name(p->average));
    put(t, OPT_BLOCKING, "%d", p->blocking);
    put(t, OPT_AGG, "%d", p->agg);
    put(t, OPT_GRAPH, "%d", p->graph_launches);
    put(t, OPT_CPUTIME, "%d", p->report_cputime);
    put(t, OPT_TIMEOUT, "%d", p->timeout);
    put(t, OPT_BACKEND, "%s", p->backend);
    put(t, OPT_CSV, "%s", p->csv_path ? p->csv_path : "(none)");
    put(t, OPT_JSON, "%s", p->json_path ? p->json_path : "(none)");
    put(t, OPT_STATS, "%s", p->table_stats ? "given" : "not given");
    put(t, OPT_PROGRESS, "%s", p->progress ? "given" : "not given");
    put(t, OPT_SPLIT, "%s", p->split.kind == CB_SPLIT_NONE ? "(none)" : p->split.text);
    put(t, OPT_HIER, "%s", p->hier.text);
    for (int i = 0; i < p->nlayouts; i++)
        put(t, OPT_LAYOUT, "%s%s", i ? "," : "", p->layouts[i] == CB_LAYOUT_COL ? "col" : "row");
    put(t, OPT_MEMORY, "%s", p->memory_report ? "given" : "not given");
    put(t, OPT_BUDGET, "%d", p->budget_ms);
    put(t, OPT_STABLE, "%d", p->stable_pct);
    put(t, OPT_HELP, "%s", p->help ? "given" : "not given");
    put(t, OPT_VERSION, "%s", p->version ? "given" : "not given");
    put(t, OPT_CHECK_TIMED, "%s", p->check_timed ? "given" : "not given");
    put(t, OPT_SAMPLES_JSON, "%s", p->samples_json ? "given" : "not given");
    for (int i = 0; i < p->nimpls; i++)
        put(t, OPT_NCCL_IMPL, "%s%s", i ? "," : "", cb_impl_name(p->impls[i]));
    put(t, OPT_REGISTER, "%d", p->registration);
}

/* FNV-1a, 64 bits: a digest, not a defence against a hostile rank. */
static uint64_t digest(const char *text, uint64_t h)
{
    for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
        h ^= *c;
        h *= 1099511628211ull;
    }
    /* The terminator counts too, so that "1","23" and "12","3" differ. */
    h ^= 0xff;
    return h * 1099511628211ull;
}

#define FNV_OFFSET 14695981039346656037ull

int cb_params_agree(const cb_params *p, MPI_Comm comm, char *err, size_t err_len)
{
    int rank = 0;
    int nranks = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nranks);
    param_texts mine;
    describe(p, &mine);
    uint64_t hashes[OPT_COUNT];
    uint64_t all = FNV_OFFSET;
    for (int i = 0; i < OPT_COUNT; i++) {
        hashes[i] = digest(mine.value[i], FNV_OFFSET);
        all = digest(mine.value[i], all);
    }
    uint64_t lowest = 0, highest = 0;
    MPI_Allreduce(&all, &lowest, 1, MPI_UINT64_T, MPI_MIN, comm);
    MPI_Allreduce(&all, &highest, 1, MPI_UINT64_T, MPI_MAX, comm);
    if (lowest == highest)
        return 0;

    /* Some rank differs: the first option that differs from rank 0's, on
     * the lowest rank where it does. */
    uint64_t first[OPT_COUNT];
    memcpy(first, hashes, sizeof first);
    MPI_Bcast(first, OPT_COUNT, MPI_UINT64_T, 0, comm);
    int my_opt = OPT_COUNT;
    for (int i = 0; i < OPT_COUNT && my_opt == OPT_COUNT; i++)
        if (hashes[i] != first[i])
            my_opt = i;
    int opt = OPT_COUNT;
    MPI_Allreduce(&my_opt, &opt, 1, MPI_INT, MPI_MIN, comm);
    if (opt == OPT_COUNT) {
        /* The digests differ but no option does: cannot happen unless the
         * digest collides on one rank; refuse all the same. */
        snprintf(err, err_len, "the parameters differ between ranks");
        return -1;
    }
    int my_rank = opt < OPT_COUNT && hashes[opt] != first[opt] ? rank : nranks;
    int other = nranks;
    MPI_Allreduce(&my_rank, &other, 1, MPI_INT, MPI_MIN, comm);
    char theirs[VALUE_LEN];
    memcpy(theirs, mine.value[opt], VALUE_LEN);
    MPI_Bcast(theirs, VALUE_LEN, MPI_CHAR, other, comm);
    theirs[VALUE_LEN - 1] = '\0';
    snprintf(err, err_len, "%s differs between ranks: rank 0 has '%.100s', rank %d has "
             "'%.100s'; give every rank the same options", option_names[opt],
             rank == 0 ? mine.value[opt] : "", other, theirs);
    return -1;
}
