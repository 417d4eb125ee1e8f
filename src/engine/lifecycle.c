/* The engine's life: set-up in order, each step agreed, and the tear-down. */
#include "engine_int.h"

/* POSIX's environment, for the notes on nccl-tests' variables. */
extern char **environ;

/* Host, pid and device of every rank, gathered on rank 0. */
static void gather_ranks(engine *e)
{
    cb_rank_info mine;
    memset(&mine, 0, sizeof mine);
    mine.rank = e->rank;
    mine.pid = (int)getpid();
    snprintf(mine.host, sizeof mine.host, "%s", e->host);
    if (e->ops->describe(e->b, &mine.device) != 0)
        cb_status_set(&e->st, CB_EXIT_RUNTIME, "%s", e->b->error);
    if (e->rank == 0) {
        e->ranks = calloc((size_t)e->nranks, sizeof *e->ranks);
        if (e->ranks == NULL)
            cb_status_set(&e->st, CB_EXIT_RUNTIME, "out of memory for %d rank records", e->nranks);
    }
    if (cb_eng_agree(e) != CB_EXIT_OK)
        return;
    cb_ctl_gather(e->comm, &mine, sizeof mine, e->ranks, 0);

    cb_ctl *node;
    int node_rank = 0, node_size = 1;
    if (cb_sysinfo_host_comm(e->comm, 0, &node) == 0) {
        node_rank = node->rank;
        node_size = node->size;
        cb_ctl_free(&node);
    } else {
        cb_status_set(&e->st, CB_EXIT_RUNTIME, "out of memory for the host ids of %d ranks",
                      e->nranks);
    }
    int leader = node_rank == 0;
    cb_ctl_allreduce(e->comm, &leader, &e->run.nnodes, 1, CB_CTL_INT, CB_CTL_SUM);
    cb_ctl_allreduce(e->comm, &node_size, &e->run.ranks_per_node, 1, CB_CTL_INT, CB_CTL_MAX);
}

static void describe_run(engine *e)
{
    cb_run_info *run = &e->run;
    run->tool_version = PACKAGE_VERSION;
    run->backend = e->ops->name;
    run->nranks = e->nranks;
    run->ranks = e->ranks;
    run->max_bytes = e->sizes[e->nsizes - 1];
    run->allocator = e->b->allocator;
    static const char *const registrations[] = {"none", "ncclCommRegister", "window"};
    run->registration = registrations[e->p->sizes.registration == 1 ? 1 : e->p->sizes.registration == 2 ? 2 : 0];
    run->repeat_compare = !e->p->verify.repeat_check ? NULL : e->b->repeat_on_device ? "device" : "host";
    if (e->ops->versions != NULL)
        e->ops->versions(e->b, run->backend_versions, sizeof run->backend_versions);
    if (e->rank == 0)
        cb_ctl_describe(e->comm, run->mpi_library, sizeof run->mpi_library);
    run->rendezvous_authenticated = strcmp(e->comm->ops->name, "tcp") != 0 ? -1
                                    : e->comm->unkeyed                    ? 0
                                                                          : 1;

    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    struct tm utc;
    gmtime_r(&now.tv_sec, &utc);
    strftime(run->start_utc, sizeof run->start_utc, "%Y-%m-%dT%H:%M:%SZ", &utc);
    uint32_t salt = cb_pattern_seed((uint32_t)now.tv_nsec, (uint32_t)getpid(),
                                    (uint32_t)now.tv_sec, (uint32_t)e->host[0]);
    snprintf(run->run_id, sizeof run->run_id, "%08x%08x", (unsigned)now.tv_sec, (unsigned)salt);
}

int cb_engine_run(const cb_params *p, cb_ctl *comm, cb_watchdog *startup, char *why,
                  size_t why_len)
{
    engine *e = calloc(1, sizeof *e);
    int local_ok = e != NULL, all_ok = 0;
    cb_ctl_allreduce(comm, &local_ok, &all_ok, 1, CB_CTL_INT, CB_CTL_MIN);
    if (!all_ok) {
        fprintf(stderr, "nccl-collbench: out of memory at start-up\n");
        free(e);
        return CB_EXIT_RUNTIME;
    }
    e->p = p;
    e->comm = comm;
    e->features = cb_eng_feature_table;
    e->nfeatures = cb_eng_nfeatures;
    e->start_time = cb_ctl_now();
    e->sum.first_wrong_rank = -1;
    e->sum.first_unrepeatable_rank = -1;
    e->sum.min_bw = p->expect.tests_min_bw;
    e->sum.unauthenticated = comm->unkeyed;
    e->rank = comm->rank;
    e->nranks = comm->size;
    cb_eng_groups_init(e, comm);
    cb_sysinfo_host_label(e->host, sizeof e->host);
    cb_status_clear(&e->st);
    cb_eng_outputs_init(e);
    /* The hang report's side channel, before anything can hang; its
     * set-up is watched by main's start-up watchdog. */
    int side = p->launch.timeout > 0;
    if (startup != NULL)
        cb_watchdog_doing(startup, "setting up the hang report's side channel, at start-up");
    if (side)
        cb_sidechannel_open(&e->safety.side, comm, e->host, e->safety.side_notice,
                            sizeof e->safety.side_notice);
    /* Rank 0's thread runs also without -T: it finishes the output files
     * on a signal (cb_eng_end_files_on_signal). */
    if (cb_watchdog_start(&e->safety.watch, p->launch.timeout, e->rank, e->host,
                          side ? &e->safety.side : NULL, e->rank == 0) != 0)
        cb_status_set(&e->st, CB_EXIT_RUNTIME, "cannot start the watchdog thread");
    e->safety.guard = (cb_ctl_guard){cb_watchdog_ending, &e->safety.watch,
                                     cb_eng_end_printers_on_lost, e};
    comm->guard = &e->safety.guard;
    if (startup != NULL)
        cb_watchdog_stop(startup);
    if (e->rank == 0) {
        /* A rank's side channel closing mid-run is its death (the others
         * learn of rank 0's from their control plane, or their launcher). */
        cb_watchdog_set_lost(&e->safety.watch, cb_eng_end_printers_on_lost, e);
        cb_watchdog_set_report(&e->safety.watch, cb_eng_end_printers_on_hang, e);
        cb_watchdog_set_signal(&e->safety.watch, cb_eng_end_files_on_signal, e);
    }

    /* The set-up, in order; every rank agrees before each next step. */
    static void (*const setup_steps[])(engine *) = {
        cb_eng_open_printers,  cb_eng_select_backend, cb_eng_split_groups,
        cb_eng_start_backend,  cb_eng_check_impls,    gather_ranks,
        cb_eng_features_setup, cb_eng_plan_sizes,     cb_eng_check_sizes_fit,
        cb_eng_allocate_buffers,
    };
    for (size_t s = 0; s < sizeof setup_steps / sizeof setup_steps[0]; s++)
        if (s == 0 || cb_eng_agree(e) == CB_EXIT_OK)
            setup_steps[s](e);
    if (cb_eng_agree(e) == CB_EXIT_OK) {
        describe_run(e);
        cb_eng_printers_begin(e);
        cb_eng_describe_groups(e);
        if (e->run.restart_count >= 0)
            cb_eng_note(e, "torchrun attempt %d (TORCHELASTIC_RESTART_COUNT=%d)%s",
                        e->run.restart_count + 1, e->run.restart_count, e->restart_notice);
        if (e->size_notice[0] != '\0')
            cb_eng_note(e, "%s", e->size_notice);
        if (e->backend_notice[0] != '\0')
            cb_eng_note(e, "%s", e->backend_notice);
        if (e->safety.side_notice[0] != '\0')
            cb_eng_note(e, "%s", e->safety.side_notice);
        if (e->impl_notice[0] != '\0')
            cb_eng_note(e, "%s", e->impl_notice);
        for (const char *line = e->b->notice; *line != '\0';) {
            size_t len = strcspn(line, "\n");
            cb_eng_note(e, "%.*s", (int)len, line);
            line += len + (line[len] == '\n');
        }
        if (p->sizes.registration != 0)
            cb_eng_note(e, "-R %d: buffers from %s, %s", p->sizes.registration, e->b->allocator,
                 p->sizes.registration == 1 ? "registered with ncclCommRegister"
                                      : "registered in a symmetric window");
        else if (e->ops->mem.registers)
            cb_eng_note(e, "buffers from %s, not registered (-R 0)", e->b->allocator);
        char unused[CB_MSGLEN];
        for (int i = 0; cb_params_note(p, i, unused, sizeof unused); i++)
            cb_eng_note(e, "%s", unused);
        for (int i = 0; e->rank == 0 && cb_params_env_note(environ, i, unused, sizeof unused); i++)
            cb_eng_note(e, "%s", unused);
        if (p->sizes.memory_report)
            cb_eng_note_footprint(e);
        cb_eng_features_preamble(e);
        cb_eng_run_cycles(e);
        if (p->sizes.memory_report)
            cb_eng_note_memory_usage(e);
    }
    if (e->out.progress == 1) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }
    /* Abort or destroy is decided after the last agreement, so that every
     * rank ends its communicators the same way: a failure one rank first
     * saw while flushing its outputs must not make it abort while the
     * others destroy (a collective step in NCCL, which would wait for it). */
    cb_eng_flush_pending(e);
    cb_eng_end_printers(e);
    /* A rank past the last agreement closes its side channel as it goes. */
    cb_watchdog_set_lost(&e->safety.watch, NULL, NULL);
    int failed = cb_eng_agree(e) != CB_EXIT_OK;
    cb_watchdog_doing(&e->safety.watch, "shutting the %s backend down", e->ops ? e->ops->name : "");
    cb_eng_free_buffers(e);
    cb_watchdog_set_abort(&e->safety.watch, NULL, NULL);
    if (e->b != NULL)
        e->ops->fini(e->b, failed);
    e->comm->guard = NULL;
    cb_watchdog_stop(&e->safety.watch);
    if (side)
        cb_sidechannel_close(&e->safety.side);
    free(e->ranks);
    cb_eng_outputs_free(e);
    cb_eng_groups_free(e);

    /* Rank 0 alone saw the rows --min-busbw and --expect gate, and counted
     * the measurements. */
    cb_ctl_allreduce(e->comm, CB_CTL_IN_PLACE, &e->slow, 1, CB_CTL_INT, CB_CTL_MAX);
    cb_ctl_allreduce(e->comm, CB_CTL_IN_PLACE, &e->sum.unchecked, 1, CB_CTL_INT, CB_CTL_MAX);
    cb_ctl_allreduce(e->comm, CB_CTL_IN_PLACE, &e->sum.measurements, 1, CB_CTL_INT, CB_CTL_MAX);
    int code = cb_eng_final_status(e);
    if (code == CB_EXIT_USAGE && e->rank == 0)
        fputs(CB_USAGE_HINT "\n", stderr);
    if (why != NULL && why_len > 0)
        snprintf(why, why_len, "%s", code != CB_EXIT_OK && e->st.code != CB_EXIT_OK ? e->st.msg : "");
    free(e);
    return code;
}
