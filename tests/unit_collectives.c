/* The collective table: lookup, layouts, bus-bandwidth factors, checks. */
#include <math.h>
#include <string.h>

#include "collective.h"
#include "unit.h"

static void test_lookup(unit_state *u)
{
    const cb_collective *c = cb_collective_lookup("allreduce");
    CHECK(u, c != NULL && strcmp(c->name, "allreduce") == 0);
    CHECK(u, cb_collective_lookup("all_reduce") == c);
    CHECK(u, cb_collective_lookup("ALLREDUCE") == c);
    CHECK(u, cb_collective_lookup("all-reduce") == c);
    CHECK(u, cb_collective_lookup("allreduc") == NULL);
    CHECK(u, cb_collective_lookup("") == NULL);
    int n = 0;
    for (const cb_collective *const *l = cb_collective_list(); *l; l++) {
        n++;
        CHECK(u, (*l)->layout && (*l)->busbw_factor && (*l)->run && (*l)->fill_input &&
                     (*l)->check_output);
    }
    CHECK(u, n >= 1);
}

static void test_allreduce(unit_state *u)
{
    const cb_collective *c = cb_collective_lookup("allreduce");
    cb_layout l;
    CHECK(u, c->layout(1024, 4, 4, &l) == 0);
    CHECK(u, l.count == 256 && l.send_count == 256 && l.recv_count == 256 && l.inplace_offset == 0);
    CHECK(u, c->layout(10, 4, 3, &l) == 0 && l.count == 2);  /* rounded down to whole elements */
    CHECK(u, c->layout(3, 4, 2, &l) == -1);                   /* no whole element */
    CHECK(u, c->busbw_factor(1) == 0.0);
    CHECK(u, c->busbw_factor(2) == 1.0);
    CHECK(u, fabs(c->busbw_factor(4) - 1.5) < 1e-12);
    CHECK(u, fabs(c->busbw_factor(8) - 1.75) < 1e-12);
    CHECK(u, c->flags & CB_COLL_REDUCES);
    CHECK(u, !(c->flags & CB_COLL_ROOTED));
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
}

int main(void)
{
    unit_state u = {0, 0};
    test_lookup(&u);
    test_allreduce(&u);
    test_check(&u);
    return unit_done(&u, "unit_collectives");
}
