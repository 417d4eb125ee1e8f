/* nccl-collbench: parse, agree, run the engine, exit with its status. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "engine/engine.h"
#include "host/sysinfo.h"
#include "safety/outfile.h"
#include "options/params.h"
#include "options/params_agree.h"
#include "safety/signals.h"
#include "safety/agreement.h"
#include "safety/watchdog.h"

/* MPI_Finalize can hang (MPICH before 4.2, between nodes) after every output
 * is written, and a job that never ends holds its nodes: the watchdog bounds
 * it by -T as it bounds every other step. On expiry the rank exits with the
 * run's status, or CB_EXIT_TIMEOUT when the run itself succeeded. */
static int finish(int code, const cb_params *p, int rank)
{
    cb_watchdog watch;
    char host[64] = "";
    cb_sysinfo_host_label(host, sizeof host);
    int watched = cb_watchdog_start(&watch, p->timeout, rank, host, NULL) == 0;
    if (watched) {
        cb_watchdog_set_exit(&watch, code != CB_EXIT_OK ? code : CB_EXIT_TIMEOUT);
        cb_watchdog_doing(&watch, "MPI_Finalize, at the end of the run");
    }
    MPI_Finalize();
    if (watched)
        cb_watchdog_stop(&watch);
    return code;
}

static const char *read_env(const char *name)
{
    return getenv(name);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, nranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);

    /* Messages name the program as invoked when that is one of nccl-tests'
     * names (all_reduce_perf), so that a script's log reads as it ran. */
    const char *prog = "nccl-collbench";
    if (argc > 0 && cb_params_nccl_tests_program(argv[0]) != NULL)
        prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
    /* Every rank parses the same command line; rank 0 speaks for all. */
    cb_params params;
    char err[CB_MSGLEN] = "";
    cb_params_defaults(&params);
    int bad = cb_params_parse(&params, argc, argv, err, sizeof err) != 0;
    if (!bad && !params.help && !params.version) {
        bad = cb_params_environment(&params, read_env, err, sizeof err) != 0 ||
              cb_params_check_sizes(&params, err, sizeof err) != 0 ||
              cb_params_check_floors(&params, err, sizeof err) != 0;
    }
    /* Two outputs in one file would leave only the last; rank 0 writes them. */
    const char *outputs[][2] = {{"--csv", params.csv_path}, {"--json", params.json_path},
                                {"--prom", params.prom_path}, {"-J", params.tests_json_path}};
    enum { noutputs = sizeof outputs / sizeof outputs[0] };
    for (int a = 0; a < noutputs && !bad && rank == 0; a++)
        for (int b = a + 1; b < noutputs && !bad; b++)
            if (outputs[a][1] != NULL && outputs[b][1] != NULL &&
                strcmp(outputs[a][1], "-") != 0 && cb_outfile_same(outputs[a][1], outputs[b][1])) {
                snprintf(err, sizeof err, "%s %s and %s %s are the same file; give each its own",
                         outputs[a][0], outputs[a][1], outputs[b][0], outputs[b][1]);
                bad = 1;
            }
    if (!bad && !params.help && !params.version)
        bad = cb_params_check_ranks(&params, nranks, err, sizeof err) != 0;
    /* The lowest rank whose command line is bad speaks through rank 0, so
     * that the bad value is named even when rank 0's command line is fine. */
    int first_bad = 0, mine = bad ? rank : nranks;
    MPI_Allreduce(&mine, &first_bad, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (first_bad < nranks) {
        if (first_bad != 0 && rank == first_bad)
            MPI_Send(err, (int)sizeof err, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
        if (first_bad != 0 && rank == 0) {
            MPI_Recv(err, (int)sizeof err, MPI_CHAR, first_bad, 0, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            err[sizeof err - 1] = '\0';
        }
        char whose[80] = "";
        if (first_bad != 0)
            snprintf(whose, sizeof whose, "rank %d (its command line differs from rank 0's): ",
                     first_bad);
        if (rank == 0)
            fprintf(stderr, "%s: %s%s\nTry '%s --help' for more information.\n", prog,
                    whose, err, prog);
        return finish(CB_EXIT_USAGE, &params, rank);
    }
    /* Ranks given different options would wait in different collectives. */
    if (cb_params_agree(&params, MPI_COMM_WORLD, err, sizeof err) != 0) {
        if (rank == 0)
            fprintf(stderr, "nccl-collbench: %s\n", err);
        return finish(CB_EXIT_USAGE, &params, rank);
    }
    if (params.help || params.version) {
        if (rank == 0) {
            if (params.help && params.tests_program != NULL)
                cb_params_nccl_tests_usage(stdout, prog, params.tests_program);
            else if (params.help)
                cb_params_help(stdout, "nccl-collbench");
            else
                printf("nccl-collbench %s\n", PACKAGE_VERSION);
        }
        return finish(CB_EXIT_OK, &params, rank);
    }
    cb_signals_install();
    int code = cb_engine_run(&params, MPI_COMM_WORLD);
    return finish(code, &params, rank);
}
