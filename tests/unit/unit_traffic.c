/*
 * alltoallv's traffic matrices (src/collectives/traffic.c) and its exact check
 * (src/collectives/alltoallv.c): parsing and its errors, row and column
 * sums, seed determinism, the hot skew factor, the layout a size gives, and
 * a host simulation of the exchange in which a swapped pair of blocks, a
 * shifted block, a block at another sender's displacement, a duplicated and
 * a missing contribution are each caught.
 */
#include <stdlib.h>
#include <string.h>

#include "collectives/collective.h"
#include "unit.h"

static cb_traffic_spec parsed(unit_state *u, const char *text)
{
    cb_traffic_spec spec;
    char err[200];
    memset(&spec, 0xa5, sizeof spec);
    CHECK(u, cb_traffic_parse(text, &spec, err, sizeof err) == 0);
    return spec;
}

static void test_parse(unit_state *u)
{
    static const char *const forms[][2] = {
        {"uniform", "uniform"}, {"random", "random:0"}, {"random:7", "random:7"},
        {"random:18446744073709551615", "random:18446744073709551615"},
        {"hot:4", "hot:4:1"}, {"hot:3:2", "hot:3:2"}, {"hot:1000:1000000", "hot:1000:1000000"},
    };
    for (size_t k = 0; k < sizeof forms / sizeof forms[0]; k++) {
        cb_traffic_spec spec = parsed(u, forms[k][0]);
        char text[64];
        cb_traffic_format(&spec, text, sizeof text);
        CHECK(u, strcmp(text, forms[k][1]) == 0);
        /* What format writes reads back as the same matrix. */
        cb_traffic_spec again = parsed(u, text);
        CHECK(u, again.kind == spec.kind && again.seed == spec.seed &&
                     (spec.kind != CB_TRAFFIC_HOT ||
                      (again.factor == spec.factor && again.hot == spec.hot)));
    }
    cb_traffic_spec hot = parsed(u, "hot:3:2");
    CHECK(u, hot.kind == CB_TRAFFIC_HOT && hot.factor == 3 && hot.hot == 2);
    CHECK(u, parsed(u, "random:42").seed == 42);
    static const char *const bad[] = {
        "", "Uniform", "uniform:1", "random:", "random:x", "random:-1", "random:7K",
        "random:18446744073709551616", "hot", "hot:", "hot:0", "hot:1001", "hot:-2",
        "hot:4:", "hot:4:0", "hot:4:x", "hot:4:1:1", "hot:4:1000001", "cold:4",
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        cb_traffic_spec spec;
        char err[200] = "";
        CHECK(u, cb_traffic_parse(bad[k], &spec, err, sizeof err) == -1);
        char quoted[64];
        snprintf(quoted, sizeof quoted, "'%s'", bad[k]);
        CHECK(u, strstr(err, quoted) != NULL);   /* the message names the value */
    }
}

/* Row and column sums are the weights' sums; the peak is the largest. */
static void check_sums(unit_state *u, const cb_traffic_spec *t, int n)
{
    uint64_t total_rows = 0, total_cols = 0, peak = 0;
    for (int r = 0; r < n; r++) {
        uint64_t row = 0, col = 0;
        for (int j = 0; j < n; j++) {
            row += cb_traffic_weight(t, n, r, j);
            col += cb_traffic_weight(t, n, j, r);
        }
        CHECK(u, cb_traffic_row_weight(t, n, r) == row);
        CHECK(u, cb_traffic_col_weight(t, n, r) == col);
        total_rows += row;
        total_cols += col;
        peak = row > peak ? row : peak;
        peak = col > peak ? col : peak;
    }
    CHECK(u, total_rows == total_cols);   /* what is sent is received */
    CHECK(u, cb_traffic_peak_weight(t, n) == peak);
}

static void test_uniform(unit_state *u)
{
    cb_traffic_spec t = parsed(u, "uniform");
    for (int n = 1; n <= 9; n++) {
        check_sums(u, &t, n);
        for (int r = 0; r < n; r++) {
            CHECK(u, cb_traffic_row_weight(&t, n, r) == (uint64_t)n);
            CHECK(u, cb_traffic_col_weight(&t, n, r) == (uint64_t)n);
        }
        /* alltoall's count: size / element / n. */
        CHECK(u, cb_traffic_unit(&t, n, 1000) == (size_t)(1000 / n));
    }
}

static void test_random(unit_state *u)
{
    cb_traffic_spec a = parsed(u, "random:5"), b = parsed(u, "random:5"),
                    c = parsed(u, "random:6");
    int n = 16, differs = 0, zeros = 0, top = 0, not_one = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            unsigned w = cb_traffic_weight(&a, n, i, j);
            CHECK(u, w <= CB_TRAFFIC_RANDOM_MAX);
            CHECK(u, w == cb_traffic_weight(&b, n, i, j));   /* the seed decides */
            /* Asked twice, or from another rank's view: the same cell. */
            CHECK(u, w == cb_traffic_weight(&a, n, i, j));
            differs += w != cb_traffic_weight(&c, n, i, j);
            zeros += w == 0;
            top += w == CB_TRAFFIC_RANDOM_MAX;
            not_one += w != 1;
        }
    /* 256 cells: another seed gives another matrix; zero counts occur, and
     * the weights are spread, not all alike. */
    CHECK(u, differs > 128);
    CHECK(u, zeros > 0 && top > 0 && not_one > 128);
    for (int m = 1; m <= 9; m++)
        check_sums(u, &a, m);
    /* Row sums differ between ranks (a uniform matrix would not). */
    CHECK(u, cb_traffic_row_weight(&a, n, 0) != cb_traffic_row_weight(&a, n, 1) ||
                 cb_traffic_row_weight(&a, n, 1) != cb_traffic_row_weight(&a, n, 2));
}

static void test_hot(unit_state *u)
{
    cb_traffic_spec t = parsed(u, "hot:4:2");
    int n = 8;
    check_sums(u, &t, n);
    for (int i = 0; i < n; i++) {
        CHECK(u, cb_traffic_row_weight(&t, n, i) == 2 * 4 + 6);   /* every rank sends alike */
        for (int j = 0; j < n; j++)
            CHECK(u, cb_traffic_weight(&t, n, i, j) == (j < 2 ? 4u : 1u));
    }
    /* A hot rank receives exactly K times what a cold one does. */
    CHECK(u, cb_traffic_col_weight(&t, n, 0) == 4 * cb_traffic_col_weight(&t, n, 7));
    CHECK(u, cb_traffic_col_weight(&t, n, 1) == 4 * cb_traffic_col_weight(&t, n, 2));
    CHECK(u, cb_traffic_peak_weight(&t, n) == 32);
    /* The busiest rank is a hot receiver: 32 units fit 3200 elements. */
    CHECK(u, cb_traffic_unit(&t, n, 3200) == 100 && cb_traffic_unit(&t, n, 3199) == 99);
    CHECK(u, cb_traffic_unit(&t, n, 31) == 0);
    /* More hot ranks than ranks: all hot, uniform in shape. */
    cb_traffic_spec all = parsed(u, "hot:3:9");
    for (int j = 0; j < 4; j++)
        CHECK(u, cb_traffic_col_weight(&all, 4, j) == 12);
    /* K = 1 is the uniform matrix. */
    cb_traffic_spec one = parsed(u, "hot:1:3");
    CHECK(u, cb_traffic_peak_weight(&one, 5) == 5);
}

static void test_layout(unit_state *u)
{
    const cb_collective *c = cb_collective_lookup("alltoallv");
    CHECK(u, c != NULL && c->layout_traffic != NULL && (c->flags & CB_COLL_OUT_OF_PLACE));
    if (c == NULL)
        return;
    static const char *const specs[] = {"uniform", "random:3", "hot:4:1", "hot:2:3"};
    for (size_t k = 0; k < sizeof specs / sizeof specs[0]; k++) {
        cb_traffic_spec t = parsed(u, specs[k]);
        for (int n = 1; n <= 6; n++) {
            uint64_t peak = cb_traffic_peak_weight(&t, n);
            for (size_t bytes = 1; bytes < 5000; bytes = bytes * 3 + 1) {
                cb_layout l;
                int rc = c->layout_traffic(&t, bytes, 4, n, &l);
                CHECK(u, rc == (peak == 0 || bytes / 4 < peak ? -1 : 0));
                if (rc != 0)
                    continue;
                uint64_t rows = 0, cols = 0;
                for (int r = 0; r < n; r++) {
                    uint64_t row = cb_traffic_row_weight(&t, n, r);
                    uint64_t col = cb_traffic_col_weight(&t, n, r);
                    rows = row > rows ? row : rows;
                    cols = col > cols ? col : cols;
                }
                CHECK(u, l.unit == l.count && l.unit == bytes / 4 / peak);
                CHECK(u, l.send_count == rows * l.unit && l.recv_count == cols * l.unit);
                /* The size column: the busiest rank's bytes, within the size,
                 * and no larger unit would fit. */
                CHECK(u, cb_layout_bytes(&l, 4) == peak * l.unit * 4);
                CHECK(u, cb_layout_bytes(&l, 4) <= bytes && peak * (l.unit + 1) * 4 > bytes);
            }
        }
    }
    /* Uniform alltoallv is alltoall's layout at every size. */
    const cb_collective *a = cb_collective_lookup("alltoall");
    cb_traffic_spec t = parsed(u, "uniform");
    for (size_t bytes = 16; bytes < 100000; bytes = bytes * 5 + 3) {
        cb_layout la, lv;
        CHECK(u, a->layout(bytes, 4, 3, &la) == 0 && c->layout_traffic(&t, bytes, 4, 3, &lv) == 0);
        CHECK(u, la.count == lv.count && cb_layout_bytes(&la, 4) == cb_layout_bytes(&lv, 4));
    }
}

/* ---- The exchange on the host, correct or with one fault ------------- */

enum { SIM_OK, SIM_SWAP, SIM_SHIFT, SIM_OFFSET, SIM_DUP, SIM_MISSING, SIM_FAULTS };
static const char *const sim_names[] = {"none", "swap", "shift", "offset", "dup", "missing"};

#define SIM_MAX_RANKS 6

/* Where the block from rank i to rank j starts in i's send buffer and in
 * j's receive buffer, and its length, in elements. */
static size_t send_at(const cb_traffic_spec *t, int n, size_t unit, int i, int j)
{
    size_t at = 0;
    for (int k = 0; k < j; k++)
        at += cb_traffic_weight(t, n, i, k) * unit;
    return at;
}

static size_t recv_at(const cb_traffic_spec *t, int n, size_t unit, int i, int j)
{
    size_t at = 0;
    for (int k = 0; k < i; k++)
        at += cb_traffic_weight(t, n, k, j) * unit;
    return at;
}

/* The wrong elements the check finds after the exchange with fault f at
 * receiver `victim`, or -1 when f cannot apply there (empty blocks). */
static long simulate(unit_state *u, const cb_traffic_spec *t, int n, cb_dtype dtype, int f,
                     int victim)
{
    const cb_collective *c = cb_collective_lookup("alltoallv");
    size_t es = cb_dtype_info_of(dtype)->size;
    cb_call call = {.dtype = dtype, .redop = CB_REDOP_NONE, .root = -1, .traffic = t};
    /* Not a multiple of anything: 97 units of the busiest rank and a bit. */
    size_t bytes = (97 * (size_t)cb_traffic_peak_weight(t, n) + 5) * es;
    if (c->layout_traffic(t, bytes, es, n, &call.layout) != 0)
        return -1;
    size_t unit = call.layout.unit;
    cb_pattern pat;
    char why[200];
    CHECK(u, cb_pattern_init(&pat, dtype, CB_REDOP_NONE, n, 1234 + (uint32_t)n, why,
                             sizeof why) == 0);
    unsigned char *send[SIM_MAX_RANKS], *recv[SIM_MAX_RANKS];
    for (int r = 0; r < n; r++) {
        send[r] = calloc(call.layout.send_count + 1, es);
        recv[r] = calloc(call.layout.recv_count + 1, es);
        c->fill_input(&pat, r, &call, send[r]);
    }
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            size_t len = cb_traffic_weight(t, n, i, j) * unit;
            memcpy(recv[j] + recv_at(t, n, unit, i, j) * es,
                   send[i] + send_at(t, n, unit, i, j) * es, len * es);
        }
    /* The fault, at the victim's output: blocks from ranks 0 and 1. */
    unsigned char *out = recv[victim];
    size_t len0 = cb_traffic_weight(t, n, 0, victim) * unit;
    size_t len1 = n > 1 ? cb_traffic_weight(t, n, 1, victim) * unit : 0;
    size_t at0 = 0, at1 = len0, total = 0;
    for (int i = 0; i < n; i++)
        total += cb_traffic_weight(t, n, i, victim) * unit;
    size_t m = len0 < len1 ? len0 : len1;
    long result = 0;
    unsigned char *tmp = malloc((total + 1) * es);
    switch (f) {
    case SIM_SWAP:   /* what 0 and 1 sent trade places */
        if (m == 0) {
            result = -1;
            break;
        }
        memcpy(tmp, out + at0 * es, m * es);
        memcpy(out + at0 * es, out + at1 * es, m * es);
        memcpy(out + at1 * es, tmp, m * es);
        break;
    case SIM_SHIFT:   /* the whole output one element up */
        if (total < 2) {
            result = -1;
            break;
        }
        memmove(out + es, out, (total - 1) * es);
        break;
    case SIM_OFFSET:   /* rank 1's block taken from where rank 0's block for the victim is */
        if (len1 == 0 || len0 < len1) {
            result = -1;
            break;
        }
        memcpy(out + at1 * es, send[1] + send_at(t, n, unit, 1, 0) * es, len1 * es);
        if (victim == 0)
            result = -1;   /* that is where it belongs */
        break;
    case SIM_DUP:   /* rank 0's contribution in place of rank 1's */
        if (m == 0) {
            result = -1;
            break;
        }
        memcpy(out + at1 * es, send[0] + send_at(t, n, unit, 0, victim) * es, m * es);
        break;
    case SIM_MISSING:   /* rank 0's contribution never arrives */
        if (len0 == 0) {
            result = -1;
            break;
        }
        memset(out + at0 * es, 0, len0 * es);
        break;
    default:
        break;
    }
    if (result == 0) {
        for (int r = 0; r < n; r++) {
            cb_mismatch first = {0, 0, 0};
            size_t wrong = c->check_output(&pat, r, &call, recv[r], &first);
            result += (long)wrong;
            if (wrong > 0)
                CHECK(u, first.index < call.layout.recv_count);
        }
    }
    free(tmp);
    for (int r = 0; r < n; r++) {
        free(send[r]);
        free(recv[r]);
    }
    return result;
}

static void test_simulated(unit_state *u)
{
    static const char *const specs[] = {"uniform", "random:9", "random:21", "hot:4:1",
                                        "hot:3:2"};
    static const cb_dtype dtypes[] = {CB_FLOAT, CB_INT8, CB_HALF, CB_FP8_E5M2, CB_INT64};
    int applied[SIM_FAULTS] = {0};
    for (size_t k = 0; k < sizeof specs / sizeof specs[0]; k++) {
        cb_traffic_spec t = parsed(u, specs[k]);
        for (int n = 1; n <= SIM_MAX_RANKS; n++)
            for (size_t d = 0; d < sizeof dtypes / sizeof dtypes[0]; d++)
                for (int f = 0; f < SIM_FAULTS; f++)
                    for (int victim = 0; victim < n; victim++) {
                        if (f != SIM_OK && n < 2)
                            continue;
                        long wrong = simulate(u, &t, n, dtypes[d], f, victim);
                        if (wrong < 0)
                            continue;
                        applied[f]++;
                        if ((f == SIM_OK) != (wrong == 0))
                            fprintf(stderr, "  alltoallv %s n=%d %s fault %s at %d: %ld wrong\n",
                                    specs[k], n, cb_dtype_info_of(dtypes[d])->name,
                                    sim_names[f], victim, wrong);
                        CHECK(u, (f == SIM_OK) == (wrong == 0));
                    }
    }
    for (int f = 0; f < SIM_FAULTS; f++)
        CHECK(u, applied[f] > 50);   /* every fault was really tried */
}

int main(void)
{
    unit_state u = {0, 0};
    test_parse(&u);
    test_uniform(&u);
    test_random(&u);
    test_hot(&u);
    test_layout(&u);
    test_simulated(&u);
    return unit_done(&u, "unit_traffic");
}
