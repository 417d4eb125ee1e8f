/* The collective table: lookup, layouts, bus-bandwidth factors, and checks.
 * Each collective is also simulated on the host from its ranks' real
 * inputs: the correct outputs pass the check on every rank, and each kind
 * of fault (a missing contribution, swapped blocks, a shift by one element,
 * data from another seed, the wrong root) is caught. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "collectives/collective.h"
#include "unit.h"

#define MAX_RANKS 5

static void test_lookup(unit_state *u)
{
    const cb_collective *c = cb_collective_lookup("allreduce");
    CHECK(u, c != NULL && strcmp(c->name, "allreduce") == 0);
    CHECK(u, cb_collective_lookup("all_reduce") == c);
    CHECK(u, cb_collective_lookup("ALLREDUCE") == c);
    CHECK(u, cb_collective_lookup("all-reduce") == c);
    CHECK(u, cb_collective_lookup("allreduc") == NULL);
    CHECK(u, cb_collective_lookup("") == NULL);
    static const char *const aliases[][2] = {
        {"all_gather", "allgather"}, {"reduce_scatter", "reducescatter"},
        {"bcast", "broadcast"}, {"send_recv", "sendrecv"}, {"all_to_all", "alltoall"},
        {"all-to-all", "alltoall"}, {"Gather", "gather"}, {"scatter", "scatter"},
        {"reduce", "reduce"}, {"ring-allreduce", "ring_allreduce"}, {"BARRIER", "barrier"},
        {"hier-allreduce", "hier_allreduce"}, {"a2av", "alltoallv"}, {"all-to-allv", "alltoallv"},
    };
    for (size_t a = 0; a < sizeof aliases / sizeof aliases[0]; a++) {
        const cb_collective *found = cb_collective_lookup(aliases[a][0]);
        CHECK(u, found != NULL && strcmp(found->name, aliases[a][1]) == 0);
    }
    int n = 0;
    for (const cb_collective *const *l = cb_collective_list(); *l; l++) {
        n++;
        CHECK(u, (*l)->layout && (*l)->busbw_factor && (*l)->run && (*l)->fill_input &&
                     (*l)->check_output);
    }
    CHECK(u, n == 15);
    /* comm_init: measured by the engine, by name only (not in -o all). */
    const cb_collective *comm = cb_collective_lookup("comm_init");
    CHECK(u, comm != NULL && cb_collective_lookup("comm") == comm);
    CHECK(u, comm != NULL && comm->flags == (CB_COLL_NO_DATA | CB_COLL_COMM));
}

typedef struct expected_layout {
    const char *name;
    unsigned flags;
    int per_rank;     /* the size holds n blocks of count */
    double factor4;   /* busbw factor at 4 ranks */
} expected_layout;

static const expected_layout layouts[] = {
    {"allreduce", CB_COLL_REDUCES, 0, 1.5},
    {"allgather", 0, 1, 0.75},
    {"reducescatter", CB_COLL_REDUCES, 1, 0.75},
    {"broadcast", CB_COLL_ROOTED, 0, 1.0},
    {"reduce", CB_COLL_REDUCES | CB_COLL_ROOTED, 0, 1.0},
    {"alltoall", CB_COLL_IMPLS, 1, 0.75},
    {"gather", CB_COLL_ROOTED | CB_COLL_IMPLS, 1, 0.75},
    {"scatter", CB_COLL_ROOTED | CB_COLL_IMPLS, 1, 0.75},
    {"sendrecv", 0, 0, 1.0},
    {"ring_allreduce", CB_COLL_REDUCES, 0, 1.5},
    {"hier_allreduce", CB_COLL_REDUCES | CB_COLL_SEQUENTIAL, 0, 1.5},
};

static void test_layouts(unit_state *u)
{
    for (size_t k = 0; k < sizeof layouts / sizeof layouts[0]; k++) {
        const expected_layout *x = &layouts[k];
        const cb_collective *c = cb_collective_lookup(x->name);
        CHECK(u, c->flags == x->flags);
        CHECK(u, fabs(c->busbw_factor(4) - x->factor4) < 1e-12);
        int zero_alone = strstr(x->name, "allreduce") != NULL || x->per_rank;
        CHECK(u, c->busbw_factor(1) == (zero_alone ? 0.0 : 1.0));
        cb_layout l;
        memset(&l, 0xff, sizeof l);
        /* 100 B of 4-byte elements over 3 ranks. */
        CHECK(u, c->layout(100, 4, 3, &l) == 0);
        size_t count = x->per_rank ? 8 : 25;
        CHECK(u, l.count == count && l.inplace_offset == 0);
        CHECK(u, cb_layout_bytes(&l, 4) == (x->per_rank ? 96u : 100u));
        size_t big = x->per_rank ? 3 * count : count;
        int gathers = !strcmp(x->name, "allgather") || !strcmp(x->name, "gather");
        int scatters = !strcmp(x->name, "reducescatter") || !strcmp(x->name, "scatter");
        int whole = !strcmp(x->name, "alltoall");
        CHECK(u, l.send_count == (scatters || whole ? big : count));
        CHECK(u, l.recv_count == (gathers || whole ? big : count));
        CHECK(u, l.inplace_send_stride == (gathers ? count : 0));
        CHECK(u, l.inplace_recv_stride == (scatters ? count : 0));
        /* Too small for every rank to get a whole element: skipped. */
        CHECK(u, c->layout(3, 4, 1, &l) == -1);
        CHECK(u, c->layout(11, 4, 3, &l) == (x->per_rank ? -1 : 0));
        CHECK(u, c->layout(12, 4, 3, &l) == 0 && l.count == (x->per_rank ? 1u : 3u));
    }
}

/* Barrier moves nothing at any size and has no bandwidth. */
static void test_barrier(unit_state *u)
{
    const cb_collective *c = cb_collective_lookup("barrier");
    CHECK(u, c != NULL && c->flags == CB_COLL_NO_DATA && c->available != NULL);
    cb_layout l;
    memset(&l, 0xff, sizeof l);
    CHECK(u, c->layout(0, 4, 3, &l) == 0 && l.count == 0 && l.send_count == 0 &&
                 l.recv_count == 0 && cb_layout_bytes(&l, 4) == 0);
    CHECK(u, c->busbw_factor(1) == 0.0 && c->busbw_factor(8) == 0.0);
}

/* ---- Host simulation ------------------------------------------------- */

typedef enum fault {
    FAULT_NONE,
    FAULT_MISSING,     /* rank 1's contribution replaced by zeros (sum: the identity) */
    FAULT_SWAP,        /* blocks of ranks 0 and 1 exchanged */
    FAULT_SHIFT,       /* rank 0's output moved up one element */
    FAULT_STALE,       /* outputs from the inputs of another seed */
    FAULT_WRONG_ROOT,  /* the data of root + 1 */
    FAULT_ECHO,        /* nothing moves: in place, each output is the rank's own input */
    FAULT_COUNT
} fault;

static const char *const fault_names[] = {"none", "missing", "swap", "shift", "stale",
                                          "wrong-root", "echo"};

typedef struct sim {
    const cb_collective *coll;
    cb_call call;
    int nranks;
    size_t esize;
    unsigned char *send[MAX_RANKS];
    unsigned char *recv[MAX_RANKS];
} sim;

static double reduce_values(const cb_dtype_info *info, cb_redop op, const double *v, int n)
{
    unsigned char cell[8];
    double acc = 0;
    for (int k = 0; k < n; k++) {
        double x = v[k];
        if (op == CB_PREMULSUM) {
            info->store(cell, 0, x * CB_PREMULSUM_SCALAR);
            x = info->load(cell, 0);
        }
        if (k == 0)
            acc = x;
        else if (op == CB_PROD)
            acc *= x;
        else if (op == CB_MIN)
            acc = fmin(acc, x);
        else if (op == CB_MAX)
            acc = fmax(acc, x);
        else
            acc += x;
        info->store(cell, 0, acc);
        acc = info->load(cell, 0);
    }
    if (op == CB_AVG)
        acc = info->is_float ? acc / n : trunc(acc / n);
    return acc;
}

/* Element i of the reduction over ranks of send[q][i], skipping `missing`. */
static void reduce_into(sim *s, void *out, size_t first, size_t count, int missing)
{
    const cb_dtype_info *info = cb_dtype_info_of(s->call.dtype);
    for (size_t j = 0; j < count; j++) {
        double v[MAX_RANKS];
        for (int q = 0; q < s->nranks; q++)
            v[q] = q == missing && s->call.redop == CB_SUM ? 0.0
                                                             : info->load(s->send[q], first + j);
        info->store(out, j, reduce_values(info, s->call.redop, v, s->nranks));
    }
}

static void copy_elements(sim *s, void *to, size_t to_index, const void *from,
                          size_t from_index, size_t count)
{
    memcpy((char *)to + to_index * s->esize, (const char *)from + from_index * s->esize,
           count * s->esize);
}

/* The collective whose reference output this one must match. */
static const char *reference_name(const cb_collective *coll)
{
    if (strcmp(coll->name, "hypercube") == 0)
        return "allgather";   /* by recursive doubling, to the same result */
    return strcmp(coll->name, "ring_allreduce") == 0 || strcmp(coll->name, "hier_allreduce") == 0
               ? "allreduce"
               : coll->name;
}

/* What a correct collective (or one with fault f) leaves in every recv. */
static void run_reference(sim *s, fault f)
{
    const char *name = reference_name(s->coll);
    int n = s->nranks, root = s->call.root;
    if (f == FAULT_WRONG_ROOT)
        root = (root + 1) % n;
    size_t c = s->call.layout.count;
    int missing = f == FAULT_MISSING ? 1 : -1;
    if (f == FAULT_ECHO) {
        /* Each rank's input where an in-place launch would have put it. */
        const cb_layout *l = &s->call.layout;
        for (int r = 0; r < n; r++) {
            size_t at = (size_t)r * l->inplace_send_stride;
            size_t from = (size_t)r * l->inplace_recv_stride;
            size_t count = l->send_count < l->recv_count ? l->send_count : l->recv_count;
            copy_elements(s, s->recv[r], at, s->send[r], from, count);
        }
        return;
    }
    if (missing >= 0 && !(s->coll->flags & CB_COLL_REDUCES))
        memset(s->send[missing], 0, s->call.layout.send_count * s->esize);
    for (int r = 0; r < n; r++) {
        unsigned char *out = s->recv[r];
        /* With swapped blocks, ranks 0 and 1 get each other's block. */
        size_t own = (size_t)(f == FAULT_SWAP && r < 2 ? 1 - r : r) * c;
        if (!strcmp(name, "allreduce") || (!strcmp(name, "reduce") && r == root))
            reduce_into(s, out, 0, c, missing);
        else if (!strcmp(name, "reducescatter"))
            reduce_into(s, out, own, c, missing);
        else if (!strcmp(name, "broadcast"))
            copy_elements(s, out, 0, s->send[root], 0, c);
        else if (!strcmp(name, "scatter"))
            copy_elements(s, out, 0, s->send[root], own, c);
        else if (!strcmp(name, "sendrecv"))
            copy_elements(s, out, 0, s->send[(r + n - 1) % n], 0, c);
        else if (!strcmp(name, "allgather") || (!strcmp(name, "gather") && r == root))
            for (int q = 0; q < n; q++)
                copy_elements(s, out, (size_t)q * c, s->send[q], 0, c);
        else if (!strcmp(name, "alltoall") || !strcmp(name, "alltoallv"))   /* v: uniform */
            for (int q = 0; q < n; q++)
                copy_elements(s, out, (size_t)q * c, s->send[q], (size_t)r * c, c);
    }
    if (f == FAULT_SWAP && s->call.layout.recv_count == (size_t)n * c) {
        /* Gathered outputs: exchange blocks 0 and 1 wherever they were written. */
        unsigned char tmp[64 * 8];
        for (int r = 0; r < n; r++) {
            memcpy(tmp, s->recv[r], c * s->esize);
            memcpy(s->recv[r], s->recv[r] + c * s->esize, c * s->esize);
            memcpy(s->recv[r] + c * s->esize, tmp, c * s->esize);
        }
    }
    if (f == FAULT_SWAP && !strcmp(name, "sendrecv")) {
        unsigned char *tmp = s->recv[0];
        s->recv[0] = s->recv[1];
        s->recv[1] = tmp;
    }
    if (f == FAULT_SHIFT)
        for (int r = 0; r < n; r++)
            memmove(s->recv[r] + s->esize, s->recv[r], (s->call.layout.recv_count - 1) * s->esize);
}

/* Whether fault f applies to this collective at this rank count. */
static int fault_applies(const sim *s, fault f)
{
    const char *name = reference_name(s->coll);
    int rooted = (s->coll->flags & CB_COLL_ROOTED) != 0;
    switch (f) {
    case FAULT_MISSING:
        /* Rank 1's data must reach a checked output. */
        if (!strcmp(name, "broadcast") || !strcmp(name, "scatter"))
            return s->call.root == 1;
        return s->nranks >= 2 && (s->call.redop == CB_SUM || s->call.redop == CB_REDOP_NONE);
    case FAULT_SWAP:
        return s->nranks >= 2 && strcmp(name, "allreduce") && strcmp(name, "reduce") &&
               strcmp(name, "broadcast");
    case FAULT_SHIFT:
        return s->call.layout.recv_count >= 2 &&
               (s->call.redop == CB_SUM || s->call.redop == CB_REDOP_NONE);
    case FAULT_STALE:
        return 1;
    case FAULT_ECHO:
        return s->nranks >= 2;
    case FAULT_WRONG_ROOT:
        /* reduce and gather with the wrong root leave the root's buffer
         * untouched: the simulation's buffers start from stale data then. */
        return rooted && s->nranks >= 2;
    default:
        return 1;
    }
}

static size_t count_wrong(sim *s, const cb_pattern *pat)
{
    size_t wrong = 0;
    for (int r = 0; r < s->nranks; r++) {
        cb_mismatch first = {0, 0, 0};
        wrong += s->coll->check_output(pat, r, &s->call, s->recv[r], &first);
    }
    return wrong;
}

static void simulate(unit_state *u, const cb_collective *coll, cb_dtype dtype, cb_redop redop,
                     int nranks, int root, fault f)
{
    sim s = {.coll = coll, .nranks = nranks};
    s.esize = cb_dtype_info_of(dtype)->size;
    s.call.dtype = dtype;
    s.call.redop = redop;
    s.call.root = root;
    /* Not a multiple of the rank count or the element size. */
    size_t bytes = 37 * s.esize * (size_t)nranks + 3;
    CHECK(u, coll->layout(bytes, s.esize, nranks, &s.call.layout) == 0);
    if (!fault_applies(&s, f))
        return;
    cb_pattern pat, other;
    char why[256];
    uint32_t seed = cb_pattern_seed((uint32_t)nranks, (uint32_t)root, dtype, (uint32_t)redop);
    CHECK(u, cb_pattern_init(&pat, dtype, redop, nranks, seed, why, sizeof why) == 0);
    CHECK(u, cb_pattern_init(&other, dtype, redop, nranks, seed + 1, why, sizeof why) == 0);
    size_t elements = s.call.layout.send_count > s.call.layout.recv_count
                          ? s.call.layout.send_count : s.call.layout.recv_count;
    for (int r = 0; r < nranks; r++) {
        s.send[r] = calloc(elements, s.esize);
        s.recv[r] = calloc(elements, s.esize);
        coll->fill_input(f == FAULT_STALE ? &other : &pat, r, &s.call, s.send[r]);
    }
    run_reference(&s, f);
    size_t wrong = count_wrong(&s, &pat);
    if ((f == FAULT_NONE) != (wrong == 0))
        fprintf(stderr, "  %s %s %s n=%d root=%d fault %s: %zu wrong\n", coll->name,
                cb_dtype_info_of(dtype)->name, cb_redop_name(redop), nranks, root,
                fault_names[f], wrong);
    CHECK(u, (f == FAULT_NONE) == (wrong == 0));
    for (int r = 0; r < nranks; r++) {
        free(s.send[r]);
        free(s.recv[r]);
    }
}

static void test_simulated(unit_state *u)
{
    static const cb_dtype dtypes[] = {CB_INT8, CB_UINT8, CB_INT32, CB_DOUBLE, CB_HALF,
                                      CB_BFLOAT16, CB_FP8_E4M3, CB_FP8_E5M2};
    for (const cb_collective *const *l = cb_collective_list(); *l; l++) {
        const cb_collective *coll = *l;
        if (coll->flags & CB_COLL_NO_DATA)
            continue;   /* nothing moves, nothing to check */
        int nredops = (coll->flags & CB_COLL_REDUCES) ? CB_REDOP_COUNT : 1;
        for (size_t t = 0; t < sizeof dtypes / sizeof dtypes[0]; t++)
            for (int op = 0; op < nredops; op++)
                for (int n = 1; n <= MAX_RANKS; n++) {
                    int roots = (coll->flags & CB_COLL_ROOTED) ? n : 1;
                    for (int root = 0; root < roots; root++)
                        for (int f = 0; f < FAULT_COUNT; f++)
                            simulate(u, coll, dtypes[t],
                                     (coll->flags & CB_COLL_REDUCES) ? (cb_redop)op : CB_REDOP_NONE,
                                     n, (coll->flags & CB_COLL_ROOTED) ? root : -1, (fault)f);
                }
    }
}

/* The check counts every wrong element and reports the first. */
static void test_check(unit_state *u)
{
    const cb_collective *c = cb_collective_lookup("allreduce");
    cb_pattern pat;
    char why[128];
    CHECK(u, cb_pattern_init(&pat, CB_DOUBLE, CB_SUM, 3, 42, why, sizeof why) == 0);
    double out[32];
    for (size_t i = 0; i < 32; i++)
        out[i] = cb_pattern_reduced(&pat, i);
    cb_call call = {.dtype = CB_DOUBLE, .redop = CB_SUM, .root = -1};
    CHECK(u, c->layout(sizeof out, sizeof out[0], 3, &call.layout) == 0);
    cb_mismatch first = {0, 0, 0};
    CHECK(u, c->check_output(&pat, 0, &call, out, &first) == 0);
    out[5] += 1;
    out[9] = NAN;
    CHECK(u, c->check_output(&pat, 1, &call, out, &first) == 2);
    CHECK(u, first.index == 5 && first.actual == first.expected + 1);

    /* Inputs: every rank's fill is what the pattern says. */
    double in[32];
    c->fill_input(&pat, 2, &call, in);
    for (size_t i = 0; i < 32; i++)
        CHECK(u, in[i] == cb_pattern_input(&pat, 2, i));

    /* Gathered blocks: the index reported is in the whole output. */
    const cb_collective *g = cb_collective_lookup("allgather");
    cb_pattern moved;
    CHECK(u, cb_pattern_init(&moved, CB_FLOAT, CB_REDOP_NONE, 2, 5, why, sizeof why) == 0);
    cb_call gcall = {.dtype = CB_FLOAT, .redop = CB_REDOP_NONE, .root = -1};
    CHECK(u, g->layout(64, 4, 2, &gcall.layout) == 0 && gcall.layout.count == 8);
    float gathered[16];
    for (size_t k = 0; k < 16; k++)
        gathered[k] = (float)cb_pattern_block(&moved, (int)(k / 8), 0, k % 8);
    CHECK(u, g->check_output(&moved, 1, &gcall, gathered, &first) == 0);
    gathered[11] = NAN;
    CHECK(u, g->check_output(&moved, 1, &gcall, gathered, &first) == 1 && first.index == 11);

    /* reduce and gather leave other ranks' buffers unchecked. */
    cb_call rcall = {.dtype = CB_DOUBLE, .redop = CB_SUM, .root = 2};
    const cb_collective *reduce = cb_collective_lookup("reduce");
    CHECK(u, reduce->layout(sizeof out, sizeof out[0], 3, &rcall.layout) == 0);
    CHECK(u, reduce->check_output(&pat, 0, &rcall, out, &first) == 0);
    CHECK(u, reduce->check_output(&pat, 2, &rcall, out, &first) == 2);
}

/* ---- Column layout ---------------------------------------------------- */

static int host_copy2d(cb_backend *b, void *dst, size_t pitch_dst, const void *src,
                       size_t pitch_src, size_t width, size_t height)
{
    (void)b;
    for (size_t row = 0; row < height; row++)
        memcpy((char *)dst + row * pitch_dst, (const char *)src + row * pitch_src, width);
    return 0;
}

static const cb_backend_ops host_ops = {.name = "host", .copy2d = host_copy2d};

/* Shapes, and the 2-D copies both ways in both of their orders (one copy
 * per slice when n <= rows, else one per row). */
static void test_column_copies(unit_state *u)
{
    cb_layout l = {.count = 12};
    cb_layout_set_columns(&l, 3, 2);
    CHECK(u, l.rows == 3 && l.width == 4 && l.work_count == 72);
    l = (cb_layout){.count = 13};
    cb_layout_set_columns(&l, 2, 1);
    CHECK(u, l.rows == 1 && l.width == 13 && l.work_count == 26);
    l = (cb_layout){.count = 1024};
    cb_layout_set_columns(&l, 4, 1);
    CHECK(u, l.rows == 32 && l.width == 32);

    static const size_t counts[] = {6, 16, 30, 1};
    static const int ranks[] = {3, 2, 4, 5};
    cb_backend b = {.ops = &host_ops};
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        int n = ranks[c];
        cb_layout cl = {.count = counts[c]};
        cb_layout_set_columns(&cl, n, 1);
        size_t total = (size_t)n * cl.count;
        int *blocks = malloc(total * sizeof *blocks), *matrix = malloc(total * sizeof *matrix);
        int *back = malloc(total * sizeof *back);
        for (size_t x = 0; x < total; x++)
            blocks[x] = (int)x;
        CHECK(u, cb_blocks_to_columns(&b, matrix, blocks, &cl, sizeof(int), n) == 0);
        int ok = 1;
        for (size_t i = 0; i < cl.rows; i++)
            for (int k = 0; k < n; k++)
                for (size_t j = 0; j < cl.width; j++)
                    ok &= matrix[i * (size_t)n * cl.width + (size_t)k * cl.width + j] ==
                          blocks[(size_t)k * cl.count + i * cl.width + j];
        CHECK(u, ok);
        CHECK(u, cb_columns_to_blocks(&b, back, matrix, &cl, sizeof(int), n) == 0);
        CHECK(u, memcmp(back, blocks, total * sizeof *back) == 0);
        free(blocks);
        free(matrix);
        free(back);
    }
}

/* Each column variant's check: the definition's matrix passes on every
 * rank; the row layout's output (the copies left out) and two swapped
 * slices fail. */
static void test_column_checks(unit_state *u)
{
    static const char *const names[] = {"allgather", "gather", "alltoall", "reducescatter"};
    for (size_t c = 0; c < sizeof names / sizeof names[0]; c++)
        for (int n = 2; n <= 4; n++) {
            const cb_collective *coll = cb_collective_lookup(names[c]);
            int reduces = (coll->flags & CB_COLL_REDUCES) != 0;
            cb_call call = {.dtype = CB_FLOAT, .redop = reduces ? CB_SUM : CB_REDOP_NONE,
                            .root = (coll->flags & CB_COLL_ROOTED) ? n - 1 : -1};
            CHECK(u, coll->column_work > 0);
            CHECK(u, coll->layout((size_t)n * 24 * sizeof(float), sizeof(float), n,
                                  &call.layout) == 0);
            cb_layout_set_columns(&call.layout, n, coll->column_work);
            const cb_layout *l = &call.layout;
            CHECK(u, l->rows == 4 && l->width == 6);
            cb_pattern pat;
            char why[128];
            CHECK(u, cb_pattern_init(&pat, call.dtype, call.redop, n, 7, why, sizeof why) == 0);
            size_t total = (size_t)n * l->count, row_len = (size_t)n * l->width;
            float *in[4], *out = malloc(total * sizeof *out), *rows = malloc(total * sizeof *rows);
            for (int r = 0; r < n; r++) {
                in[r] = malloc(total * sizeof *in[r]);
                coll->fill_input(&pat, r, &call, in[r]);
            }
            for (int r = 0; r < n; r++) {
                if (reduces) {
                    /* Rank r's rows x width block: slice r of the reduced matrix. */
                    for (size_t i = 0; i < l->rows; i++)
                        for (size_t j = 0; j < l->width; j++)
                            out[i * l->width + j] = (float)cb_pattern_reduced(
                                &pat, i * row_len + (size_t)r * l->width + j);
                    for (size_t x = 0; x < l->count; x++)
                        rows[x] = (float)cb_pattern_reduced(&pat, (size_t)r * l->count + x);
                } else {
                    int all = !strcmp(names[c], "alltoall");
                    /* Slice k: rank k's own block (gathers) or its slice r. */
                    for (int k = 0; k < n; k++)
                        for (size_t i = 0; i < l->rows; i++)
                            for (size_t j = 0; j < l->width; j++) {
                                size_t from = all ? i * row_len + (size_t)r * l->width + j
                                                  : i * l->width + j;
                                out[i * row_len + (size_t)k * l->width + j] = in[k][from];
                            }
                    for (int k = 0; k < n; k++)
                        memcpy(rows + (size_t)k * l->count,
                               in[k] + (all ? (size_t)r * l->count : 0),
                               l->count * sizeof *rows);
                }
                cb_mismatch first;
                int checked = call.root < 0 || r == call.root;
                CHECK(u, coll->check_output(&pat, r, &call, out, &first) == 0);
                CHECK(u, (coll->check_output(&pat, r, &call, rows, &first) > 0) == checked);
                /* Swap the first elements of slices 0 and 1 of row 0 (of
                 * the block's rows 0 and 1 for reducescatter). */
                size_t a = 0, z = l->width;
                float t = out[a];
                out[a] = out[z];
                out[z] = t;
                CHECK(u, (coll->check_output(&pat, r, &call, out, &first) > 0) == checked);
            }
            for (int r = 0; r < n; r++)
                free(in[r]);
            free(out);
            free(rows);
        }
}

int main(void)
{
    unit_state u = {0, 0};
    test_lookup(&u);
    test_layouts(&u);
    test_barrier(&u);
    test_check(&u);
    test_column_copies(&u);
    test_column_checks(&u);
    test_simulated(&u);
    return unit_done(&u, "unit_collectives");
}
