/* Launch detection (src/control/launch.c) through a fake environment: each
 * mode, Slurm's host lists and derived port, the key, and each bad value's
 * message naming the variable and the value. */
#include <stdio.h>
#include <string.h>

#include "control/launch.h"
#include "control/launch_int.h"
#include "unit.h"

/* The reader's environment: "NAME=value" strings, NULL-terminated. The
 * reader takes no context (launch.h's signature), so the test points this
 * at each case's list before it detects. */
static const char *const *fake_env;

static const char *fake_get(const char *name)
{
    size_t n = strlen(name);
    for (const char *const *e = fake_env; e != NULL && *e != NULL; e++)
        if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
            return *e + n + 1;
    return NULL;
}

static int detect(const char *const *env, cb_launch *l, char *err, size_t len)
{
    fake_env = env;
    err[0] = '\0';
    return cb_launch_detect(fake_get, l, err, len);
}

/* Detection fails with a message that holds every one of want's words. */
static int fails_naming(const char *const *env, const char *want1, const char *want2)
{
    cb_launch l;
    char err[512];
    if (detect(env, &l, err, sizeof err) != -1) {
        fprintf(stderr, "expected a failure naming %s %s\n", want1, want2);
        return 0;
    }
    if (strstr(err, want1) == NULL || (want2 != NULL && strstr(err, want2) == NULL)) {
        fprintf(stderr, "message '%s' lacks '%s' or '%s'\n", err, want1, want2 ? want2 : "");
        return 0;
    }
    return 1;
}

static int first_host_is(const char *list, const char *want)
{
    char out[64], err[128];
    if (cb_launch_first_host(list, out, sizeof out, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", list, err);
        return 0;
    }
    if (strcmp(out, want) != 0)
        fprintf(stderr, "%s: got %s, want %s\n", list, out, want);
    return strcmp(out, want) == 0;
}

static int host_list_bad(const char *list)
{
    char out[64], err[128];
    return cb_launch_first_host(list, out, sizeof out, err, sizeof err) == -1 && err[0] != '\0';
}

static void modes(unit_state *u)
{
    cb_launch l;
    char err[512];

    const char *none[] = {"HOME=/root", NULL};
    CHECK(u, detect(none, &l, err, sizeof err) == 0 && l.mode == CB_LAUNCH_SINGLE);
    CHECK(u, l.rank == -1 && l.size == -1 && l.keyed == 0);
    CHECK(u, strcmp(cb_launch_mode_name(l.mode), "single") == 0);

    const char *ompi[] = {"OMPI_COMM_WORLD_SIZE=4", "MASTER_ADDR=x", NULL};
    CHECK(u, detect(ompi, &l, err, sizeof err) == 0 && l.mode == CB_LAUNCH_MPI);
    const char *pmi[] = {"PMI_SIZE=2", NULL};
    CHECK(u, detect(pmi, &l, err, sizeof err) == 0 && l.mode == CB_LAUNCH_MPI);
    const char *pmix[] = {"PMIX_RANK=0", "SLURM_PROCID=0", "SLURM_NTASKS=2", NULL};
    CHECK(u, detect(pmix, &l, err, sizeof err) == 0 && l.mode == CB_LAUNCH_MPI);
    CHECK(u, strcmp(cb_launch_mode_name(CB_LAUNCH_MPI), "mpi") == 0);

    const char *torch[] = {"RANK=3",          "WORLD_SIZE=8",       "LOCAL_RANK=1",
                           "LOCAL_WORLD_SIZE=4", "MASTER_ADDR=node7", "MASTER_PORT=29500", NULL};
    CHECK(u, detect(torch, &l, err, sizeof err) == 0 && l.mode == CB_LAUNCH_TORCHRUN);
    CHECK(u, l.rank == 3 && l.size == 8 && l.local_rank == 1 && l.local_size == 4);
    CHECK(u, strcmp(l.addr, "node7") == 0 && l.port == 29500 && l.keyed == 0);
    CHECK(u, strcmp(cb_launch_mode_name(l.mode), "torchrun") == 0);

    const char *torch_bare[] = {"RANK=0", "WORLD_SIZE=1", "MASTER_ADDR=127.0.0.1",
                                "MASTER_PORT=1", NULL};
    CHECK(u, detect(torch_bare, &l, err, sizeof err) == 0 && l.mode == CB_LAUNCH_TORCHRUN);
    CHECK(u, l.local_rank == -1 && l.local_size == -1 && l.port == 1);

    /* torchrun's agent serves its store at MASTER_PORT: the next port,
     * unless NCCL_COLLBENCH_PORT names one; 65535 has none after it. */
    const char *agent[] = {"RANK=0", "WORLD_SIZE=2", "MASTER_ADDR=a", "MASTER_PORT=29500",
                           "TORCHELASTIC_USE_AGENT_STORE=True", NULL};
    CHECK(u, detect(agent, &l, err, sizeof err) == 0 && l.port == 29501);
    CHECK(u, l.port_tries == CB_LAUNCH_PORT_TRIES);   /* the first free of 29501..29508 */
    const char *agent_off[] = {"RANK=0", "WORLD_SIZE=2", "MASTER_ADDR=a", "MASTER_PORT=29500",
                               "TORCHELASTIC_USE_AGENT_STORE=False", NULL};
    CHECK(u, detect(agent_off, &l, err, sizeof err) == 0 && l.port == 29500);
    CHECK(u, l.port_tries == 1);
    const char *agent_named[] = {"RANK=0", "WORLD_SIZE=2", "MASTER_ADDR=a", "MASTER_PORT=29500",
                                 "TORCHELASTIC_USE_AGENT_STORE=True", "NCCL_COLLBENCH_PORT=7000",
                                 NULL};
    CHECK(u, detect(agent_named, &l, err, sizeof err) == 0 && l.port == 7000);
    CHECK(u, l.port_tries == 1);   /* the user's port, and no other */
    const char *agent_high[] = {"RANK=0", "WORLD_SIZE=2", "MASTER_ADDR=a", "MASTER_PORT=65531",
                                "TORCHELASTIC_USE_AGENT_STORE=True", NULL};
    CHECK(u, detect(agent_high, &l, err, sizeof err) == 0 && l.port == 65532);
    CHECK(u, l.port_tries == 4);   /* 65532..65535 */
    const char *agent_last[] = {"RANK=0", "WORLD_SIZE=2", "MASTER_ADDR=a", "MASTER_PORT=65535",
                                "TORCHELASTIC_USE_AGENT_STORE=True", NULL};
    CHECK(u, detect(agent_last, &l, err, sizeof err) == -1 && strstr(err, "65535") != NULL);
    const char *agent_last_named[] = {"RANK=0", "WORLD_SIZE=2", "MASTER_ADDR=a",
                                      "MASTER_PORT=65535", "TORCHELASTIC_USE_AGENT_STORE=True",
                                      "NCCL_COLLBENCH_PORT=7000", NULL};
    CHECK(u, detect(agent_last_named, &l, err, sizeof err) == 0 && l.port == 7000);

    /* Forced tcp over an MPI launcher's variables; the port overridden. */
    const char *forced[] = {"NCCL_COLLBENCH_LAUNCH=tcp", "PMIX_RANK=1", "RANK=1", "WORLD_SIZE=2",
                            "MASTER_ADDR=a",            "MASTER_PORT=5", "NCCL_COLLBENCH_PORT=6",
                            NULL};
    CHECK(u, detect(forced, &l, err, sizeof err) == 0 && l.mode == CB_LAUNCH_TORCHRUN);
    CHECK(u, l.port == 6);
    const char *forced_mpi[] = {"NCCL_COLLBENCH_LAUNCH=mpi", "MASTER_ADDR=a", NULL};
    CHECK(u, detect(forced_mpi, &l, err, sizeof err) == 0 && l.mode == CB_LAUNCH_MPI);
    const char *forced_auto[] = {"NCCL_COLLBENCH_LAUNCH=auto", NULL};
    CHECK(u, detect(forced_auto, &l, err, sizeof err) == 0 && l.mode == CB_LAUNCH_SINGLE);

    const char *local[] = {"NCCL_COLLBENCH_LOCAL=1", "RANK=1",          "WORLD_SIZE=2",
                           "LOCAL_RANK=1",           "LOCAL_WORLD_SIZE=2", "MASTER_ADDR=127.0.0.1",
                           "MASTER_PORT=4000",       "NCCL_COLLBENCH_KEY=k1", NULL};
    CHECK(u, detect(local, &l, err, sizeof err) == 0 && l.mode == CB_LAUNCH_LOCAL);
    CHECK(u, l.rank == 1 && l.size == 2 && l.keyed == 1);
    CHECK(u, strcmp(cb_launch_mode_name(l.mode), "local") == 0);
    CHECK(u, l.port == 4000 && l.port_tries == 1);   /* a multi-node -g: the user's port */
    /* -g on one node picked the port itself: the ones after it serve too,
     * but not torchrun's (no agent), nor with a port the user named. */
    const char *picked[] = {"NCCL_COLLBENCH_LOCAL=1", "RANK=0", "WORLD_SIZE=2",
                            "MASTER_ADDR=127.0.0.1", "MASTER_PORT=40000",
                            "NCCL_COLLBENCH_PICKED_PORT=1", NULL};
    CHECK(u, detect(picked, &l, err, sizeof err) == 0 && l.port == 40000);
    CHECK(u, l.port_tries == CB_LAUNCH_PORT_TRIES);
    const char *picked_torch[] = {"RANK=0", "WORLD_SIZE=2", "MASTER_ADDR=127.0.0.1",
                                  "MASTER_PORT=40000", "NCCL_COLLBENCH_PICKED_PORT=1", NULL};
    CHECK(u, detect(picked_torch, &l, err, sizeof err) == 0 && l.port_tries == 1);
    const char *picked_named[] = {"NCCL_COLLBENCH_LOCAL=1", "RANK=0", "WORLD_SIZE=2",
                                  "MASTER_ADDR=127.0.0.1", "MASTER_PORT=40000",
                                  "NCCL_COLLBENCH_PICKED_PORT=1", "NCCL_COLLBENCH_PORT=7000",
                                  NULL};
    CHECK(u, detect(picked_named, &l, err, sizeof err) == 0 && l.port == 7000);
    CHECK(u, l.port_tries == 1);

    const char *slurm[] = {"SLURM_PROCID=5", "SLURM_NTASKS=16", "SLURM_LOCALID=1",
                           "SLURM_JOB_NODELIST=x[1-4]", "SLURM_STEP_NODELIST=gpu[07-09,11],login2",
                           "SLURM_JOB_ID=123456", "SLURM_STEP_ID=2", NULL};
    CHECK(u, detect(slurm, &l, err, sizeof err) == 0 && l.mode == CB_LAUNCH_SLURM);
    CHECK(u, l.rank == 5 && l.size == 16 && l.local_rank == 1 && l.local_size == -1);
    CHECK(u, strcmp(l.addr, "gpu07") == 0);
    CHECK(u, l.port == 20000 + (123456 * 10 + 2) % 10000 && l.port == 24562);
    CHECK(u, strcmp(cb_launch_mode_name(l.mode), "slurm") == 0);

    const char *slurm_job[] = {"SLURM_PROCID=0", "SLURM_NTASKS=1", "SLURM_JOB_NODELIST=n1",
                               "SLURM_JOB_ID=7", "NCCL_COLLBENCH_PORT=31000", NULL};
    CHECK(u, detect(slurm_job, &l, err, sizeof err) == 0 && l.mode == CB_LAUNCH_SLURM);
    CHECK(u, strcmp(l.addr, "n1") == 0 && l.port == 31000);
}

static void keys(unit_state *u)
{
    cb_launch a, b;
    char err[256];
    const char *k1[] = {"NCCL_COLLBENCH_KEY=secret", NULL};
    const char *k1_again[] = {"NCCL_COLLBENCH_KEY=secret", "SLURM_JOB_ID=9", NULL};
    const char *k2[] = {"NCCL_COLLBENCH_KEY=other", NULL};
    CHECK(u, detect(k1, &a, err, sizeof err) == 0 && detect(k1_again, &b, err, sizeof err) == 0);
    CHECK(u, a.keyed == 1 && memcmp(a.key, b.key, CB_LAUNCH_KEYLEN) == 0);
    CHECK(u, detect(k2, &b, err, sizeof err) == 0 && memcmp(a.key, b.key, CB_LAUNCH_KEYLEN) != 0);
    /* Unkeyed: public facts (the port differs by job here); the job's
     * identity, which the JOIN carries, differs too, and two ranks agree. */
    const char *j1r0[] = {"SLURM_PROCID=0", "SLURM_NTASKS=2", "SLURM_JOB_NODELIST=n1",
                          "SLURM_JOB_ID=7", NULL};
    const char *j1r1[] = {"SLURM_PROCID=1", "SLURM_NTASKS=2", "SLURM_JOB_NODELIST=n1",
                          "SLURM_JOB_ID=7", NULL};
    const char *j2[] = {"SLURM_PROCID=0", "SLURM_NTASKS=2", "SLURM_JOB_NODELIST=n1",
                        "SLURM_JOB_ID=8", NULL};
    CHECK(u, detect(j1r0, &a, err, sizeof err) == 0 && detect(j1r1, &b, err, sizeof err) == 0);
    CHECK(u, a.keyed == 0 && memcmp(a.key, b.key, CB_LAUNCH_KEYLEN) == 0);
    CHECK(u, strcmp(a.job, "slurm job 7.0") == 0 && strcmp(a.job, b.job) == 0);
    CHECK(u, detect(j2, &b, err, sizeof err) == 0 && memcmp(a.key, b.key, CB_LAUNCH_KEYLEN) != 0);
    CHECK(u, strcmp(b.job, "slurm job 8.0") == 0);
    /* -g's nonce first, then torchrun's run id; none: "". */
    const char *ours[] = {"NCCL_COLLBENCH_JOB=abc", "TORCHELASTIC_RUN_ID=r1", "SLURM_JOB_ID=3",
                          NULL};
    const char *run[] = {"TORCHELASTIC_RUN_ID=r1", "SLURM_JOB_ID=3", NULL};
    CHECK(u, detect(ours, &a, err, sizeof err) == 0 && strcmp(a.job, "job abc") == 0);
    CHECK(u, detect(run, &a, err, sizeof err) == 0 && strcmp(a.job, "torchrun run r1") == 0);
    CHECK(u, detect(k1, &a, err, sizeof err) == 0 && a.job[0] == '\0');
}

static void host_lists(unit_state *u)
{
    CHECK(u, first_host_is("gpu[01-04,07],login2", "gpu01"));
    CHECK(u, first_host_is("login2,gpu[01-04]", "login2"));
    CHECK(u, first_host_is("n[008-011]", "n008"));
    CHECK(u, first_host_is("rack[3-4]-n[1,5]", "rack3-n1"));
    CHECK(u, first_host_is("single", "single"));
    CHECK(u, first_host_is("a[7]", "a7"));
    CHECK(u, host_list_bad(""));
    CHECK(u, host_list_bad("gpu[01-04"));
    CHECK(u, host_list_bad("gpu01-04]"));
    CHECK(u, host_list_bad("gpu[04-01]"));
    CHECK(u, host_list_bad("gpu[a-b]"));
    CHECK(u, host_list_bad("gpu[]"));
    CHECK(u, host_list_bad("gpu[1-]"));
    CHECK(u, host_list_bad("gpu[1,]"));
    CHECK(u, host_list_bad("a,,b"));
    CHECK(u, host_list_bad("a[1[2]]"));
    CHECK(u, cb_launch_slurm_port(0, 0) == 20000);
    CHECK(u, cb_launch_slurm_port(999, 9) == 29999);
    CHECK(u, cb_launch_slurm_port(1000, 0) == 20000);
    CHECK(u, cb_launch_slurm_port(41, 1) != cb_launch_slurm_port(41, 2));
    CHECK(u, cb_launch_slurm_port(41, 0) != cb_launch_slurm_port(42, 0));
}

static void bad_values(unit_state *u)
{
    const char *launch[] = {"NCCL_COLLBENCH_LAUNCH=ssh", NULL};
    CHECK(u, fails_naming(launch, "NCCL_COLLBENCH_LAUNCH", "ssh"));
    const char *no_tcp[] = {"NCCL_COLLBENCH_LAUNCH=tcp", "PMI_SIZE=2", NULL};
    CHECK(u, fails_naming(no_tcp, "NCCL_COLLBENCH_LAUNCH=tcp", "MASTER_ADDR"));
    const char *no_port[] = {"RANK=0", "WORLD_SIZE=2", "MASTER_ADDR=h", NULL};
    CHECK(u, fails_naming(no_port, "MASTER_PORT", "MASTER_ADDR=h"));
    const char *no_addr[] = {"RANK=0", "WORLD_SIZE=2", "MASTER_PORT=9", NULL};
    CHECK(u, fails_naming(no_addr, "MASTER_ADDR", NULL));
    const char *port0[] = {"RANK=0", "WORLD_SIZE=2", "MASTER_ADDR=h", "MASTER_PORT=0", NULL};
    CHECK(u, fails_naming(port0, "MASTER_PORT=0", NULL));
    const char *port_big[] = {"RANK=0", "WORLD_SIZE=2", "MASTER_ADDR=h", "MASTER_PORT=65536", NULL};
    CHECK(u, fails_naming(port_big, "MASTER_PORT=65536", NULL));
    const char *port_text[] = {"RANK=0", "WORLD_SIZE=2", "MASTER_ADDR=h", "MASTER_PORT=29x", NULL};
    CHECK(u, fails_naming(port_text, "MASTER_PORT=29x", NULL));
    const char *rank_big[] = {"RANK=2", "WORLD_SIZE=2", "MASTER_ADDR=h", "MASTER_PORT=9", NULL};
    CHECK(u, fails_naming(rank_big, "RANK=2", "WORLD_SIZE=2"));
    const char *rank_neg[] = {"RANK=-1", "WORLD_SIZE=2", "MASTER_ADDR=h", "MASTER_PORT=9", NULL};
    CHECK(u, fails_naming(rank_neg, "RANK=-1", NULL));
    const char *size0[] = {"RANK=0", "WORLD_SIZE=0", "MASTER_ADDR=h", "MASTER_PORT=9", NULL};
    CHECK(u, fails_naming(size0, "WORLD_SIZE=0", NULL));
    const char *no_rank[] = {"WORLD_SIZE=2", "MASTER_ADDR=h", "MASTER_PORT=9", NULL};
    CHECK(u, fails_naming(no_rank, "RANK", "WORLD_SIZE"));
    const char *local_rank[] = {"RANK=0", "WORLD_SIZE=2",        "MASTER_ADDR=h",
                                "MASTER_PORT=9", "LOCAL_RANK=2", "LOCAL_WORLD_SIZE=2", NULL};
    CHECK(u, fails_naming(local_rank, "LOCAL_RANK=2", "LOCAL_WORLD_SIZE=2"));
    const char *local_bad[] = {"NCCL_COLLBENCH_LOCAL=yes", NULL};
    CHECK(u, fails_naming(local_bad, "NCCL_COLLBENCH_LOCAL=yes", NULL));
    const char *local_alone[] = {"NCCL_COLLBENCH_LOCAL=1", NULL};
    CHECK(u, fails_naming(local_alone, "NCCL_COLLBENCH_LOCAL=1", "MASTER_ADDR"));
    const char *override[] = {"RANK=0", "WORLD_SIZE=1", "MASTER_ADDR=h", "MASTER_PORT=9",
                              "NCCL_COLLBENCH_PORT=70000", NULL};
    CHECK(u, fails_naming(override, "NCCL_COLLBENCH_PORT=70000", NULL));
    const char *procid[] = {"SLURM_PROCID=4", "SLURM_NTASKS=4", "SLURM_JOB_NODELIST=n1",
                            "SLURM_JOB_ID=1", NULL};
    CHECK(u, fails_naming(procid, "SLURM_PROCID=4", "SLURM_NTASKS=4"));
    const char *nodelist[] = {"SLURM_PROCID=0", "SLURM_NTASKS=4", "SLURM_JOB_NODELIST=n[1-",
                              "SLURM_JOB_ID=1", NULL};
    CHECK(u, fails_naming(nodelist, "SLURM_JOB_NODELIST=n[1-", "not closed"));
    const char *no_list[] = {"SLURM_PROCID=0", "SLURM_NTASKS=4", "SLURM_JOB_ID=1", NULL};
    CHECK(u, fails_naming(no_list, "SLURM_JOB_NODELIST", NULL));
    const char *no_job[] = {"SLURM_PROCID=0", "SLURM_NTASKS=4", "SLURM_JOB_NODELIST=n1", NULL};
    CHECK(u, fails_naming(no_job, "SLURM_JOB_ID", "NCCL_COLLBENCH_PORT"));
    const char *job_text[] = {"SLURM_PROCID=0", "SLURM_NTASKS=4", "SLURM_JOB_NODELIST=n1",
                              "SLURM_JOB_ID=12a", NULL};
    CHECK(u, fails_naming(job_text, "SLURM_JOB_ID=12a", NULL));
    const char *step_text[] = {"SLURM_PROCID=0", "SLURM_NTASKS=4", "SLURM_JOB_NODELIST=n1",
                               "SLURM_JOB_ID=12", "SLURM_STEP_ID=-3", NULL};
    CHECK(u, fails_naming(step_text, "SLURM_STEP_ID=-3", NULL));
}

/* Whether -g N may start ranks here, and the rank for start-up messages. */
static void ranks_before_the_world(unit_state *u)
{
    const char *none[] = {"NNODES=2", "NODE_RANK=1", "MASTER_ADDR=a", "MASTER_PORT=5", NULL};
    fake_env = none;
    CHECK(u, !cb_launch_is_rank(fake_get) && cb_launch_env_rank(fake_get) == -1);
    const char *ompi[] = {"OMPI_COMM_WORLD_SIZE=2", "OMPI_COMM_WORLD_RANK=1", NULL};
    fake_env = ompi;
    CHECK(u, cb_launch_is_rank(fake_get) && cb_launch_env_rank(fake_get) == 1);
    const char *torch[] = {"RANK=3", NULL};
    fake_env = torch;
    CHECK(u, cb_launch_is_rank(fake_get) && cb_launch_env_rank(fake_get) == 3);
    const char *local[] = {"NCCL_COLLBENCH_LOCAL=1", NULL};
    fake_env = local;
    CHECK(u, cb_launch_is_rank(fake_get));
    const char *slurm[] = {"SLURM_PROCID=4", "RANK=x", NULL};
    fake_env = slurm;
    CHECK(u, cb_launch_env_rank(fake_get) == 4);
}

int main(void)
{
    unit_state u = {0, 0};
    ranks_before_the_world(&u);
    modes(&u);
    keys(&u);
    host_lists(&u);
    bad_values(&u);
    return unit_done(&u, "unit_launch");
}
