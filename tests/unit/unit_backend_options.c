/* The options and backend table of the NCCL work: -m, -G, -C, the backend
 * list order, and --backend nccl built or not. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "config.h"
#include "options/params.h"
#include "unit.h"
#include "unit_params.h"

static void test_options(unit_state *u)
{
    cb_params p;
    char err[512];
    CHECK(u, parse(&p, err, sizeof err, ARGS("-n", "2")) == 0);
    CHECK(u, p.timing.agg == 1 && p.timing.graph_launches == 0 && p.timing.report_cputime == 0);
    CHECK(u, parse(&p, err, sizeof err, ARGS("-m", "8", "-G", "3", "-C", "1")) == 0);
    CHECK(u, p.timing.agg == 8 && p.timing.graph_launches == 3 && p.timing.report_cputime == 1);
    CHECK(u, parse(&p, err, sizeof err, ARGS("--agg=1048576", "--cudagraph", "0",
                                             "--report-cputime=0")) == 0);
    CHECK(u, p.timing.agg == 1048576 && p.timing.graph_launches == 0 && p.timing.report_cputime == 0);

    static const struct {
        const char *args[3];
        const char *must_mention;
    } bad[] = {
        {{"-m", "0"}, "-m: '0' is not an integer from 1 to 1048576"},
        {{"-m", "1048577"}, "1048577"},
        {{"--agg", "two"}, "--agg: 'two'"},
        {{"-G", "-1"}, "-G: '-1' is not an integer from 0 to 1000000000"},
        {{"--cudagraph"}, "needs a value"},
        {{"-C", "2"}, "-C: '2' is not an integer from 0 to 1"},
        {{"--report-cputime", "yes"}, "'yes'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = parse(&p, err, sizeof err, bad[i].args);
        CHECK(u, rc == -1 && strstr(err, bad[i].must_mention) != NULL);
        if (rc != -1 || strstr(err, bad[i].must_mention) == NULL)
            fprintf(stderr, "  case %zu: rc %d, message '%s'\n", i, rc, err);
    }
}

static void test_backends(unit_state *u)
{
    const cb_backend_ops *const *list = cb_backend_list();
    cb_params p;
    char err[512];
#ifdef HAVE_NCCL
    /* auto tries nccl first */
    CHECK(u, list[0] != NULL && strcmp(list[0]->name, "nccl") == 0);
    CHECK(u, cb_backend_lookup("nccl") == list[0]);
    CHECK(u, list[0]->launch.graph_begin && list[0]->launch.graph_end &&
             list[0]->launch.graph_launch && list[0]->launch.graph_free &&
             list[0]->launch.group_start && list[0]->launch.group_end && list[0]->versions &&
             !list[0]->mem.host_accessible);
    CHECK(u, cb_backend_not_built_reason("nccl") == NULL);
    CHECK(u, parse(&p, err, sizeof err, ARGS("--backend", "nccl")) == 0 &&
             strcmp(p.backend, "nccl") == 0);
#else
    CHECK(u, cb_backend_lookup("nccl") == NULL);
    CHECK(u, cb_backend_not_built_reason("nccl") != NULL);
    CHECK(u, parse(&p, err, sizeof err, ARGS("--backend", "nccl")) == -1);
    CHECK(u, strstr(err, "backend 'nccl' was not built into this nccl-collbench") != NULL);
#endif
    /* mpi is built always, last, without graphs or groups */
    const cb_backend_ops *mpi = cb_backend_lookup("mpi");
    int n = 0;
    while (list[n] != NULL)
        n++;
    CHECK(u, mpi != NULL && n > 0 && list[n - 1] == mpi);
    CHECK(u, mpi->launch.graph_begin == NULL && mpi->launch.group_start == NULL);
    CHECK(u, cb_backend_not_built_reason("mpi") == NULL);
    CHECK(u, cb_backend_not_built_reason("gloo") == NULL);
    CHECK(u, parse(&p, err, sizeof err, ARGS("--backend", "gloo")) == -1 &&
             strstr(err, "unknown backend 'gloo'") != NULL);
}

static void test_help(unit_state *u)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    CHECK(u, out != NULL);
    if (out == NULL)
        return;
    cb_params_help(out, "nccl-collbench");
    fclose(out);
    CHECK(u, strstr(text, "-m, --agg N") != NULL);
    CHECK(u, strstr(text, "-G, --cudagraph N") != NULL);
    CHECK(u, strstr(text, "-C, --report-cputime 0|1") != NULL);
#ifdef HAVE_NCCL
    CHECK(u, strstr(text, "\n  nccl     GPU buffers and NCCL collectives") != NULL);
#else
    CHECK(u, strstr(text, "\n  nccl     not built: ") != NULL);
#endif
    free(text);
}

int main(void)
{
    unit_state u = {0, 0};
    test_options(&u);
    test_backends(&u);
    test_help(&u);
    return unit_done(&u, "unit_backend_options");
}
