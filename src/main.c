/* nccl-collbench: parse, agree, run the engine, exit with its status. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "backends/backend.h"
#include "control/elastic.h"
#include "control/launch.h"
#include "control/local.h"
#include "control/mpi.h"
#include "engine/engine.h"
#include "host/sysinfo.h"
#include "safety/outfile.h"
#include "options/params.h"
#include "options/params_agree.h"
#include "printers/printer.h"
#include "safety/signals.h"
#include "safety/agreement.h"
#include "safety/watchdog.h"

/* MPI_Finalize can hang (MPICH before 4.2, between nodes) after every output
 * is written, and a job that never ends holds its nodes: the watchdog bounds
 * it by -T as it bounds every other step. On expiry the rank exits with the
 * run's status, or CB_EXIT_TIMEOUT when the run itself succeeded. */
static int finish(int code, const cb_params *p, cb_ctl *world, cb_watchdog *startup)
{
    cb_watchdog_stop(startup);   /* where the engine did not */
    int rank = world != NULL ? world->rank : 0;
    cb_watchdog watch;
    char host[64] = "";
    cb_sysinfo_host_label(host, sizeof host);
    int watched = cb_watchdog_start(&watch, p->launch.timeout, rank, host, NULL, 0) == 0;
    if (watched) {
        cb_watchdog_set_exit(&watch, code != CB_EXIT_OK ? code : CB_EXIT_TIMEOUT);
        cb_watchdog_doing(&watch, "MPI_Finalize, at the end of the run");
    }
    /* Open MPI 4.1's teardown can crash after the outputs are whole (its
     * progress thread runs an event of a component MPI_Finalize has just
     * unloaded; issue 36): the rank then ends with the run's status. */
    fflush(NULL);
    cb_signals_guard_finalize(code, rank);
    cb_ctl_free(&world);
    cb_ctl_mpi_finalize();
    if (watched)
        cb_watchdog_stop(&watch);
    return code;
}

static const char *read_env(const char *name)
{
    return getenv(name);
}

/* Under torchrun: the failure, for its agent's report (its error file),
 * which would otherwise say only "exit code N". why: the message, or ""
 * where the status's meaning is all there is (its lines are in the
 * outputs). */
static void tell_torchrun(int code, int rank, const char *why)
{
    if (code == CB_EXIT_OK)
        return;
    const char *meaning = "failure";
    for (const cb_exit_meaning *x = cb_exit_meanings; x->meaning != NULL; x++)
        if (x->code == code)
            meaning = x->meaning;
    char host[64] = "", text[CB_MSGLEN + 256], err[CB_MSGLEN];
    cb_sysinfo_host_label(host, sizeof host);
    snprintf(text, sizeof text, "nccl-collbench rank %d on %s: exit status %d (%s)%s%.*s", rank,
             host, code, meaning, why[0] ? ": " : "", CB_MSGLEN, why);
    if (cb_elastic_error_file(read_env, code, text, err, sizeof err) != 0)
        fprintf(stderr, "nccl-collbench: rank %d: %s\n", rank, err);
}

/* The least time the start-up watchdog gives a step: MPI_Init on a loaded
 * machine or at scale takes seconds with no progress to show, and the side
 * channel's set-up has a deadline of its own (up to 11 s) after which the
 * run goes on without the ranks it could not reach. */
#define STARTUP_MIN_S 15

/* -T as the command line gives it, read before MPI_Init: the parse is
 * pure (no MPI, no output), and its errors are reported after MPI_Init by
 * the real parse. A line that fails before -T keeps the default. The
 * start-up gets at least STARTUP_MIN_S; 0 still turns it off. */
static int startup_limit_s(int timeout)
{
    return timeout > 0 && timeout < STARTUP_MIN_S ? STARTUP_MIN_S : timeout;
}

static int startup_limit(const cb_params *early)
{
    return startup_limit_s(early->launch.timeout);
}

/* What the rendezvous leaves of the start-up watchdog's limit. */
#define RENDEZVOUS_MARGIN_S 5

/* Whether the backend the command line names moves its data through MPI
 * itself (its table says so); "auto" and unknown names do not. */
static int needs_mpi(const char *backend)
{
    const cb_backend_ops *ops = backend != NULL ? cb_backend_lookup(backend) : NULL;
    return ops != NULL && ops->needs_mpi;
}

/* -g N in the process the user started: start the ranks, wait, and give
 * their status. The command line's other errors are the ranks' to report. */
static int run_local(const cb_params *early, char **argv)
{
    char err[CB_MSGLEN] = "";
    int usage = 0;
    if (needs_mpi(early->backend)) {
        fprintf(stderr, "nccl-collbench: --backend %s needs MPI, and -g %d starts ranks without "
                "it: launch with mpirun -np %d instead\n%s\n", early->backend,
                early->launch.local_ranks, early->launch.local_ranks, CB_USAGE_HINT);
        return CB_EXIT_USAGE;
    }
    /* The ranks agree on a failure and end together; a rank that lost its
     * peers ends by its watchdog (-T); past both, the rest are stopped. */
    double grace = early->launch.timeout > 0 ? early->launch.timeout + 10.0 : 30.0;
    int code = cb_local_run(early->launch.local_ranks, argv, grace, &usage, err, sizeof err);
    if (code < 0) {
        fprintf(stderr, "nccl-collbench: -g %d: %s\n", early->launch.local_ranks, err);
        if (usage)
            fprintf(stderr, "%s\n", CB_USAGE_HINT);
        return usage ? CB_EXIT_USAGE : CB_EXIT_RUNTIME;
    }
    return code;
}

/* --require-key or NCCL_COLLBENCH_REQUIRE_KEY=1: a TCP launch must be
 * keyed. Checked by every rank before the rendezvous, so that each says
 * why it did not start: 0, or -1 with the message in err. -g N on one
 * node is keyed by its parent's fresh key; MPI's launch and a run alone
 * have no TCP rendezvous to key. */
static int check_key_required(const cb_params *early, const cb_launch *l, char *err, size_t len)
{
    const char *v = read_env("NCCL_COLLBENCH_REQUIRE_KEY");
    int required = early->launch.require_key;
    if (v != NULL && v[0] != '\0' && strcmp(v, "0") != 0 && strcmp(v, "1") != 0) {
        snprintf(err, len, "NCCL_COLLBENCH_REQUIRE_KEY=%.40s: 1 or 0 only", v);
        return -1;
    }
    required |= v != NULL && strcmp(v, "1") == 0;
    if (!required || !cb_launch_uses_tcp(l) || l->keyed)
        return 0;
    snprintf(err, len, "rank %d: %s, and NCCL_COLLBENCH_KEY is not set: the %s launch's TCP "
             "rendezvous at %.60s:%d would not be authenticated (give every rank the same "
             "secret in NCCL_COLLBENCH_KEY)", l->rank,
             early->launch.require_key ? "--require-key" : "NCCL_COLLBENCH_REQUIRE_KEY=1",
             cb_launch_mode_name(l->mode), l->addr, l->port);
    return -1;
}

/* The world of this run: MPI's, or the TCP rendezvous launch detection
 * names. 0, or the status to exit with. */
static int start_world(int *argc, char ***argv, const cb_launch *l, int timeout, cb_ctl **world)
{
    char err[CB_MSGLEN] = "";
    if (l->mode == CB_LAUNCH_MPI || l->mode == CB_LAUNCH_SINGLE) {
        if (cb_ctl_mpi_world(argc, argv, world) == 0)
            return 0;
        fprintf(stderr, "nccl-collbench: MPI_Init failed\n");
        return CB_EXIT_RUNTIME;
    }
    /* The rendezvous ends before the start-up watchdog would (its limit,
     * less a rank's 3 s wait for rank 0's table and a margin), so that a
     * missing rank is named by the rendezvous on every rank, rank 0 or
     * not, with one status: a timeout's. */
    double wait_s = timeout > 0 ? startup_limit_s(timeout) - RENDEZVOUS_MARGIN_S : 600;
    int rc = cb_ctl_tcp_world(l, wait_s, world, err, sizeof err);
    if (rc != 0) {
        fprintf(stderr, "nccl-collbench: rank %d: %s\n", l->rank, err);
        rc = rc == CB_CTL_TCP_LATE ? CB_EXIT_TIMEOUT : CB_EXIT_RUNTIME;
        tell_torchrun(rc, l->rank, err);
        return rc;
    }
    return 0;
}

/* The program's name in messages: as invoked when that is one of
 * nccl-tests' names (all_reduce_perf), so that a script's log reads as it
 * ran. */
static const char *program_name(const char *argv0)
{
    if (argv0 == NULL || cb_params_nccl_tests_program(argv0) == NULL)
        return "nccl-collbench";
    return strrchr(argv0, '/') ? strrchr(argv0, '/') + 1 : argv0;
}

/* --help (theirs under nccl-tests' names) or --version, on stdout. */
static void print_help(const cb_params *p, const char *argv0)
{
    if (p->help && p->tests_program != NULL)
        cb_params_nccl_tests_usage(stdout, program_name(argv0), p->tests_program);
    else if (p->help)
        cb_params_help(stdout, "nccl-collbench");
    else
        printf("nccl-collbench %s\n", PACKAGE_VERSION);
}

/* The file format f writes under p, or NULL when it writes none (not
 * asked for, or stdout or stderr). */
static const char *output_file(const cb_printer_ops *f, const cb_params *p)
{
    const char *path = f->destination(p);
    if (path == NULL || strcmp(path, "-") == 0 || strcmp(path, CB_PRINTER_STDERR) == 0)
        return NULL;
    return path;
}

/* Whether an --output NAME=PATH is bad: NAME no format's, "-" for a format
 * that needs a file, or a format its own option names too. 1 with the
 * message in err, else 0. The options cannot know the names: the printer
 * table has them. */
static int bad_output(const cb_params *p, char *err, size_t err_len)
{
    for (int i = 0; i < p->out.noutputs; i++) {
        const cb_output_spec *o = &p->out.outputs[i];
        int len = (int)o->name_len;
        const cb_printer_ops *f = cb_output_format(o->name, o->name_len);
        if (f == NULL) {
            char known[256] = "";
            size_t used = 0;
            for (const cb_printer_ops *const *k = cb_output_formats; *k != NULL; k++)
                if (used < sizeof known)
                    used += (size_t)snprintf(known + used, sizeof known - used, "%s%s",
                                             used ? ", " : "", (*k)->name);
            snprintf(err, err_len, "--output: '%.*s=%s': no output format is named '%.*s' "
                     "(known: %s)", len, o->name, o->path, len, o->name, known);
            return 1;
        }
        if (f->needs_file != NULL && strcmp(o->path, "-") == 0) {
            snprintf(err, err_len, "--output: '%.*s=-': %s", len, o->name, f->needs_file);
            return 1;
        }
        /* A destination prefers the format's own option (--csv F): a path
         * other than this pair's is that option's. */
        const char *own = f->destination(p);
        if (own != o->path) {
            snprintf(err, err_len, "%s %s and --output %.*s=%s both ask for the %s output; "
                     "give one", f->option, own, len, o->name, o->path, f->name);
            return 1;
        }
    }
    return 0;
}

/* How the command line asked for format f's file path: "--csv F" or
 * "--output csv=F" (bad_output refused both). */
static void asked_as(const cb_printer_ops *f, const cb_params *p, const char *path, char *text,
                     size_t len)
{
    if (cb_params_output(p, f->name) == NULL)
        snprintf(text, len, "%s %s", f->option, path);
    else
        snprintf(text, len, "--output %s=%s", f->name, path);
}

/* Whether two outputs of the printer table go to one file: 1 with the
 * message in err, naming the pair in the order of how they were asked for
 * (so that the message does not follow the table's order), else 0. */
static int same_file(const cb_params *p, char *err, size_t err_len)
{
    for (const cb_printer_ops *const *a = cb_output_formats; *a != NULL; a++) {
        const char *pa = output_file(*a, p);
        for (const cb_printer_ops *const *b = a + 1; pa != NULL && *b != NULL; b++) {
            const char *pb = output_file(*b, p);
            if (pb == NULL || !cb_outfile_same(pa, pb))
                continue;
            char first[CB_MSGLEN / 2], second[CB_MSGLEN / 2];
            asked_as(*a, p, pa, first, sizeof first);
            asked_as(*b, p, pb, second, sizeof second);
            int swap = strcmp(first, second) > 0;
            snprintf(err, err_len, "%.200s and %.200s are the same file; give each its own",
                     swap ? second : first, swap ? first : second);
            return 1;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    /* -T covers start-up: a rank stopped or lost in MPI_Init, in the
     * command line's agreement or in the side channel's set-up would
     * otherwise hang the job with no word. The engine stops this watchdog
     * once its own runs. */
    cb_params early;
    char ignored[CB_MSGLEN];
    cb_params_defaults(&early);
    int early_ok = cb_params_parse(&early, argc, argv, ignored, sizeof ignored) == 0;
    /* --help and --version need no ranks: answered before MPI_Init (0.5 s
     * and more) in the process the user started. A rank of a launch goes
     * the long way, where the ranks agree on the command line: one whose
     * peers were not given --help must not leave them waiting for it. A
     * command line with an error goes the long way too, which names it. */
    if (early_ok && (early.help || early.version) && !cb_launch_is_rank(read_env)) {
        print_help(&early, argc > 0 ? argv[0] : NULL);
        return CB_EXIT_OK;
    }
    /* -g N starts ranks only where no launcher made this process one. */
    if (early.launch.local_ranks > 1 && !cb_launch_is_rank(read_env))
        return run_local(&early, argv);
    cb_launch launch;
    char err[CB_MSGLEN] = "";
    if (cb_launch_detect(read_env, &launch, err, sizeof err) != 0 ||
        check_key_required(&early, &launch, err, sizeof err) != 0) {
        fprintf(stderr, "nccl-collbench: %s\n%s\n", err, CB_USAGE_HINT);
        tell_torchrun(CB_EXIT_USAGE, cb_launch_env_rank(read_env), err);
        return CB_EXIT_USAGE;
    }
    cb_watchdog startup;
    char host[64] = "";
    cb_sysinfo_host_label(host, sizeof host);   /* NCCL_HOSTID's label, as every output */
    if (cb_watchdog_start(&startup, startup_limit(&early), cb_launch_env_rank(read_env), host, NULL, 0) != 0)
        fprintf(stderr, "nccl-collbench: cannot start the watchdog thread; start-up is not "
                "watched\n");
    cb_watchdog_doing(&startup, launch.mode == CB_LAUNCH_MPI || launch.mode == CB_LAUNCH_SINGLE
                                    ? "MPI_Init, at start-up"
                                    : "the TCP rendezvous, at start-up");
    cb_ctl *world = NULL;
    int started = start_world(&argc, &argv, &launch, early.launch.timeout, &world);
    if (started != 0)
        return started;
    int rank = world->rank, nranks = world->size;
    cb_watchdog_set_rank(&startup, rank);
    cb_watchdog_doing(&startup, "checking the command line across ranks, at start-up");

    const char *prog = program_name(argc > 0 ? argv[0] : NULL);
    /* Every rank parses the same command line; rank 0 speaks for all. */
    cb_params params;
    cb_params_defaults(&params);
    int bad = cb_params_parse(&params, argc, argv, err, sizeof err) != 0;
    if (!bad && !params.help && !params.version) {
        bad = cb_params_environment(&params, read_env, err, sizeof err) != 0 ||
              cb_params_check_sizes(&params, err, sizeof err) != 0 ||
              cb_params_check_floors(&params, err, sizeof err) != 0;
    }
    if (!bad)
        bad = bad_output(&params, err, sizeof err);
    /* Two outputs in one file would leave only the last; rank 0 writes them. */
    if (!bad && rank == 0)
        bad = same_file(&params, err, sizeof err);
    if (!bad && !params.help && !params.version)
        bad = cb_params_check_ranks(&params, nranks, err, sizeof err) != 0;
    if (!bad && !params.help && !params.version && needs_mpi(params.backend) &&
        cb_ctl_mpi_comm(world) == MPI_COMM_NULL) {
        char how[160];
        cb_launch_describe(&launch, how, sizeof how);
        snprintf(err, sizeof err, "--backend %s needs MPI, and this run has none (%s): launch "
                 "it with mpirun or srun --mpi", params.backend, how);
        bad = 1;
    }
    if (!bad && !params.help && !params.version && params.launch.local_ranks > 1 &&
        launch.mode != CB_LAUNCH_LOCAL) {
        snprintf(err, sizeof err, "-g %d: this process is already one rank of a job (launch: "
                 "%s); give -g 1 there (mpirun -np N, srun or torchrun start one rank per GPU)",
                 params.launch.local_ranks, cb_launch_mode_name(launch.mode));
        bad = 1;
    }
    /* The lowest rank whose command line is bad speaks through rank 0, so
     * that the bad value is named even when rank 0's command line is fine. */
    int first_bad = 0, mine = bad ? rank : nranks;
    cb_ctl_allreduce(world, &mine, &first_bad, 1, CB_CTL_INT, CB_CTL_MIN);
    if (first_bad < nranks) {
        if (first_bad != 0 && rank == first_bad)
            cb_ctl_send(world, err, sizeof err, 0, 0);
        if (first_bad != 0 && rank == 0) {
            cb_ctl_recv(world, err, sizeof err, first_bad, 0);
            err[sizeof err - 1] = '\0';
        }
        char whose[80] = "";
        if (first_bad != 0)
            snprintf(whose, sizeof whose, "rank %d (its command line differs from rank 0's): ",
                     first_bad);
        if (rank == 0)
            fprintf(stderr, "%s: %s%s\nTry '%s --help' for more information.\n", prog,
                    whose, err, prog);
        if (rank == 0 || rank == first_bad)
            tell_torchrun(CB_EXIT_USAGE, rank, err);
        return finish(CB_EXIT_USAGE, &params, world, &startup);
    }
    /* Ranks given different options would wait in different collectives. */
    if (cb_params_agree(&params, world, err, sizeof err) != 0) {
        if (rank == 0)
            fprintf(stderr, "nccl-collbench: %s\n", err);
        tell_torchrun(CB_EXIT_USAGE, rank, err);
        return finish(CB_EXIT_USAGE, &params, world, &startup);
    }
    if (params.help || params.version) {
        if (rank == 0)
            print_help(&params, argc > 0 ? argv[0] : NULL);
        return finish(CB_EXIT_OK, &params, world, &startup);
    }
    cb_signals_install();
    char why[CB_MSGLEN] = "";
    int code = cb_engine_run(&params, world, &startup, why, sizeof why);
    tell_torchrun(code, rank, why);
    return finish(code, &params, world, &startup);
}
