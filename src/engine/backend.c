/* Choosing and starting the backend. */
#include "engine_int.h"

/* Why ops cannot run what the command line asks for, or NULL when it can. */
static const char *backend_lacks(const cb_backend_ops *ops, const cb_params *p)
{
    if (p->timing.graph_launches > 0 && (ops->launch.graph_begin == NULL || ops->launch.graph_end == NULL ||
                                  ops->launch.graph_launch == NULL || ops->launch.graph_free == NULL))
        return "it cannot capture CUDA graphs (-G)";
    return NULL;
}

/* auto is about to measure host memory: an NVIDIA GPU on this rank's PCI
 * bus (read from sysfs, without CUDA) means the GPU stack is broken, and a
 * PASS on host memory would hide it. 1, with the status set, when there is
 * one. passed: the GPU backend passed over and why, or NULL when the
 * build has none. */
static int gpu_left_unused(engine *e, const char *passed, const char *why)
{
    char gpu[64];
    int ngpus = cb_sysinfo_nvidia_gpus(gpu, sizeof gpu);
    if (ngpus == 0)
        return 0;
    char because[CB_MSGLEN / 2];
    if (passed != NULL)
        snprintf(because, sizeof because, "the %s backend cannot use it: %s", passed, why);
    else
        snprintf(because, sizeof because, "this build has no GPU backend");
    cb_status_set(&e->st, CB_EXIT_GPU_UNUSABLE, "--backend auto: NVIDIA GPU %s%s is on the PCI "
                  "bus (%s/bus/pci/devices) but %s; refused rather than measure host memory "
                  "(--backend mpi measures host memory on purpose)", gpu,
                  ngpus > 1 ? " and others" : "", cb_sysfs_root(), because);
    return 1;
}

/* "auto" takes the first backend every rank can use. */
void cb_eng_select_backend(engine *e)
{
    char why[CB_MSGLEN] = "";
    if (strcmp(e->p->backend, "auto") != 0) {
        e->ops = cb_backend_lookup(e->p->backend);
        const char *lack = backend_lacks(e->ops, e->p);
        if (lack != NULL)
            cb_status_set(&e->st, CB_EXIT_RUNTIME, "--backend %s: %s", e->p->backend, lack);
        else if (!e->ops->usable(why, sizeof why))
            cb_status_set(&e->st, CB_EXIT_RUNTIME, "--backend %s cannot run here: %s",
                          e->p->backend, why);
        return;
    }
    const char *lacked = NULL, *lacking = NULL, *unusable = NULL, *no_mpi = NULL;
    char unusable_why[CB_MSGLEN] = "";
    /* Every rank has the same control plane: a TCP one has no MPI for a
     * backend that moves its data through MPI, which would otherwise abort
     * inside the MPI library at its first call. */
    int have_mpi = strcmp(e->comm->ops->name, "mpi") == 0;
    for (const cb_backend_ops *const *b = cb_backend_list(); *b != NULL; b++) {
        const char *lack = backend_lacks(*b, e->p);
        if (lack != NULL) {
            if (lacked == NULL) {
                lacked = lack;
                lacking = (*b)->name;
            }
            continue;
        }
        if ((*b)->needs_mpi && !have_mpi) {
            no_mpi = (*b)->name;
            continue;
        }
        int usable = (*b)->usable(why, sizeof why), nusable = 0;
        cb_ctl_allreduce(e->comm, &usable, &nusable, 1, CB_CTL_INT, CB_CTL_SUM);
        if (nusable == e->nranks) {
            e->ops = *b;
            if (unusable != NULL)
                snprintf(e->backend_notice, sizeof e->backend_notice,
                         "backend auto chose %s: no rank can run %s (%s)", (*b)->name, unusable,
                         unusable_why);
            if ((*b)->mem.host_accessible && !gpu_left_unused(e, unusable, unusable_why))
                e->sum.auto_host_backend = (*b)->name;
            return;
        }
        /* Some ranks can and others cannot: a node that lost its GPU must
         * not pass a health check by running everything on host memory. */
        if (nusable > 0) {
            char list[CB_MSGLEN / 2];
            int missing = cb_sysinfo_flagged_ranks(e->comm, !usable, list, sizeof list);
            if (!usable && gpu_left_unused(e, (*b)->name, why))
                return;
            if (!usable)
                cb_status_set(&e->st, CB_EXIT_RUNTIME, "--backend auto: %d of %d ranks cannot "
                              "run the %s backend that the others can: %s (%s); refused rather "
                              "than run every rank on another backend, which would hide it "
                              "(--backend names one)", missing, e->nranks, (*b)->name, list, why);
            return;
        }
        if (unusable == NULL) {
            unusable = (*b)->name;
            snprintf(unusable_why, sizeof unusable_why, "%s", why);
        }
    }
    if (no_mpi != NULL && lacked == NULL) {
        if (gpu_left_unused(e, unusable, unusable_why))
            return;
        char other[CB_MSGLEN / 2] = "";
        if (unusable != NULL)
            snprintf(other, sizeof other, "the %s backend cannot (%.200s); ", unusable,
                     unusable_why);
        cb_status_set(&e->st, CB_EXIT_USAGE, "--backend auto: no backend can run in this launch, "
                      "which has no MPI: %sthe %s backend needs MPI (launch with mpirun or srun "
                      "--mpi, or run where a GPU is)", other, no_mpi);
    } else if (lacked != NULL)
        cb_status_set(&e->st, CB_EXIT_RUNTIME,
                      "no backend can run on every rank with these options (%s: %s)", lacking,
                      lacked);
    else
        cb_status_set(&e->st, CB_EXIT_RUNTIME, "no backend can run on every rank");
}

/* The watchdog's way to unblock a hung rank before it ends the process. */
static void abort_backend(void *ctx)
{
    engine *e = ctx;
    if (e->b != NULL && e->ops->abort != NULL)
        e->ops->abort(e->b);
}

static void watchdog_tick(void *ctx)
{
    cb_watchdog_tick(&((engine *)ctx)->safety.watch);
}

/* --nccl-impl: every implementation listed must exist before anything is
 * measured (an explicit native on a library without it is an error), every
 * rank must resolve each entry alike (ranks on different libraries could
 * not run one collective two ways), and the preamble says what each entry
 * resolves to. A set-up step of its own: collective over the run. */
void cb_eng_check_impls(engine *e)
{
    const cb_params *p = e->p;
    if (e->ops->select_impl == NULL) {
        if (p->sizes.nimpls != 1 || p->sizes.impls[0] != CB_IMPL_AUTO)
            snprintf(e->impl_notice, sizeof e->impl_notice, "--nccl-impl has no effect on "
                     "the %s backend", e->ops->name);
        return;
    }
    size_t len = (size_t)snprintf(e->impl_notice, sizeof e->impl_notice, "alltoall, gather "
                                  "and scatter run as");
    for (int i = 0; i < p->sizes.nimpls; i++) {
        int chosen = e->ops->select_impl(e->b, p->sizes.impls[i]), lowest = 0, highest = 0;
        cb_ctl_allreduce(e->comm, &chosen, &lowest, 1, CB_CTL_INT, CB_CTL_MIN);
        cb_ctl_allreduce(e->comm, &chosen, &highest, 1, CB_CTL_INT, CB_CTL_MAX);
        if (chosen < 0)
            cb_status_set(&e->st, CB_EXIT_RUNTIME, "--nccl-impl %s: %s",
                          cb_impl_name(p->sizes.impls[i]), e->b->error);
        else if (lowest >= 0 && lowest != highest)
            cb_status_set(&e->st, CB_EXIT_RUNTIME, "--nccl-impl %s: some ranks' NCCL has its "
                          "native alltoall, gather and scatter and others' has not; this "
                          "rank runs %s (--nccl-impl p2p runs the same everywhere)",
                          cb_impl_name(p->sizes.impls[i]), cb_impl_name((cb_impl)chosen));
        if (lowest < 0 || lowest != highest)
            return;   /* on every rank alike; cb_eng_agree() names the failing rank */
        if (len < sizeof e->impl_notice)
            len += (size_t)snprintf(e->impl_notice + len, sizeof e->impl_notice - len, "%s %s (%s)",
                                    i ? "," : "", cb_impl_name((cb_impl)chosen),
                                    cb_impl_name(p->sizes.impls[i]));
    }
}

void cb_eng_start_backend(engine *e)
{
    cb_backend_config config = {
        .blocking = e->p->timing.blocking, .run_comm = e->comm, .progress = watchdog_tick,
        .progress_ctx = e, .registration = e->p->sizes.registration,
        .repeat_check = e->p->verify.repeat_check, .memory_report = e->p->sizes.memory_report};
    if (e->p->sizes.registration != 0 && !e->ops->mem.registers) {
        cb_status_set(&e->st, CB_EXIT_USAGE, "-R %d: the %s backend registers no buffers "
                      "(-R 1 and 2 are NCCL's; -R 0 or --backend nccl)", e->p->sizes.registration,
                      e->ops->name);
        return;
    }
    cb_watchdog_doing(&e->safety.watch, "starting the %s backend", e->ops->name);
    if (e->ops->init(e->groups.gcomm, &config, &e->b) != 0)
        cb_status_set(&e->st, CB_EXIT_RUNTIME, "starting the %s backend failed: %s",
                      e->ops->name, e->b ? e->b->error : "out of memory");
    if (e->b != NULL) {
        e->b->ops = e->ops;
        cb_watchdog_set_abort(&e->safety.watch, abort_backend, e);
    }

}

int cb_eng_backend_step(engine *e, int rc)
{
    if (rc != 0)
        cb_status_set(&e->st, CB_EXIT_RUNTIME, "%s", e->b->error);
    return rc;
}
