/*
 * Launch detection (control/launch.h): which launcher started this process,
 * read through a reader of the environment so that tests can fake one.
 *
 * Order: NCCL_COLLBENCH_LAUNCH (mpi|tcp|auto); in auto, an MPI launcher's
 * variables (OMPI_COMM_WORLD_SIZE, PMI_SIZE, PMIX_RANK) mean mpi; then
 * MASTER_ADDR or MASTER_PORT mean torchrun (RANK, WORLD_SIZE, MASTER_ADDR
 * and MASTER_PORT all required), or local when NCCL_COLLBENCH_LOCAL=1
 * marks a `-g N` child; then SLURM_PROCID with SLURM_NTASKS mean slurm;
 * else single. tcp is auto with the MPI variables ignored, and an error
 * when no TCP rendezvous can be found.
 *
 * Slurm's rendezvous: the first host of SLURM_STEP_NODELIST (else
 * SLURM_JOB_NODELIST), at NCCL_COLLBENCH_PORT when set, else at
 *     20000 + (SLURM_JOB_ID * 10 + SLURM_STEP_ID % 10) % 10000
 * (SLURM_STEP_ID 0 when unset): the steps of one job, up to ten at once,
 * and consecutive jobs get different ports. NCCL_COLLBENCH_PORT also
 * overrides MASTER_PORT. Under torchrun, whose agent serves its store at
 * MASTER_PORT (TORCHELASTIC_USE_AGENT_STORE=True), the rendezvous is at
 * the first free of MASTER_PORT + 1 .. MASTER_PORT + 8: the agent took
 * MASTER_PORT by a bind to port 0, so the next is in the kernel's
 * ephemeral range, where any outgoing connection on the node may hold it.
 *
 * The key: SHA-256 of NCCL_COLLBENCH_KEY when set and not empty (keyed);
 * else of MASTER_ADDR:MASTER_PORT and the uid, which every rank of the job
 * computes alike and which a stranger may guess (not keyed).
 *
 * The job's identity (NCCL_COLLBENCH_JOB, else TORCHELASTIC_RUN_ID, else
 * SLURM_JOB_ID.SLURM_STEP_ID) is not in the key: it travels in the JOIN,
 * so that rank 0 can refuse a rank of another job naming both jobs,
 * rather than count it as a wrong key with no word of why.
 */
#include "control/launch.h"
#include "control/launch_int.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/hmac.h"

#define SLURM_PORT_BASE 20000
#define SLURM_PORT_SPAN 10000

static int fail(char *err, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (err != NULL && len > 0)
        vsnprintf(err, len, fmt, ap);
    va_end(ap);
    return -1;
}

/* A variable, NULL when unset or empty (an empty value sets nothing). */
static const char *var(const char *(*get)(const char *), const char *name)
{
    const char *v = get(name);
    return v != NULL && v[0] != '\0' ? v : NULL;
}

/* A whole decimal number in [lo, hi]: 0, or -1 with a message naming the
 * variable and its value. */
static int parse_long(const char *name, const char *text, long lo, long hi, long *out, char *err,
                      size_t len)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (end == text || *end != '\0' || errno != 0 || isspace((unsigned char)text[0]))
        return fail(err, len, "%s=%s: not a whole number", name, text);
    if (v < lo || v > hi)
        return fail(err, len, "%s=%s: out of range (%ld to %ld)", name, text, lo, hi);
    *out = v;
    return 0;
}

static int parse_port(const char *name, const char *text, int *port, char *err, size_t len)
{
    long v;
    if (parse_long(name, text, 1, 65535, &v, err, len) != 0)
        return -1;
    *port = (int)v;
    return 0;
}

int cb_launch_slurm_port(unsigned long job_id, unsigned long step_id)
{
    unsigned long long mixed = (unsigned long long)job_id * 10ull + step_id % 10ul;
    return SLURM_PORT_BASE + (int)(mixed % SLURM_PORT_SPAN);
}

/* One range inside brackets, [p, stop): digits or digits-digits, lo <= hi. */
static int check_range(const char *p, const char *stop, char *err, size_t errlen)
{
    const char *dash = memchr(p, '-', (size_t)(stop - p));
    const char *lo_end = dash != NULL ? dash : stop;
    if (lo_end == p)
        return fail(err, errlen, "an empty range");
    for (const char *q = p; q < stop; q++)
        if (q != dash && !isdigit((unsigned char)*q))
            return fail(err, errlen, "'%c' in a range (digits and one '-' only)", *q);
    if (dash == NULL)
        return 0;
    if (dash + 1 == stop)
        return fail(err, errlen, "a range with no upper end");
    /* Compare as numbers: lo <= hi, whatever the padding. */
    unsigned long long lo = strtoull(p, NULL, 10), hi = strtoull(dash + 1, NULL, 10);
    if (lo > hi)
        return fail(err, errlen, "a range from %llu down to %llu", lo, hi);
    return 0;
}

int cb_launch_first_host(const char *list, char *out, size_t len, char *err, size_t errlen)
{
    size_t n = 0;
    int first = 1;   /* still in the list's first host */
    const char *p = list;
    if (list == NULL || list[0] == '\0')
        return fail(err, errlen, "an empty host list");
    while (*p != '\0') {
        if (*p == ',') {
            if (p == list || p[1] == '\0' || p[1] == ',')
                return fail(err, errlen, "an empty host name");
            first = 0;
            p++;
            continue;
        }
        if (*p == ']')
            return fail(err, errlen, "a ']' with no '['");
        if (*p != '[') {
            if (first && n + 1 < len)
                out[n++] = *p;
            p++;
            continue;
        }
        const char *close = strchr(p + 1, ']');
        const char *open = strchr(p + 1, '[');
        if (close == NULL || (open != NULL && open < close))
            return fail(err, errlen, "a '[' that is not closed");
        if (close == p + 1)
            return fail(err, errlen, "empty brackets");
        /* Each range up to ',' or ']'; the first one's low end is the
         * first host's part, written as the list writes it (padding too). */
        const char *r = p + 1;
        int first_range = 1;
        while (r < close) {
            const char *stop = memchr(r, ',', (size_t)(close - r));
            if (stop == NULL)
                stop = close;
            if (check_range(r, stop, err, errlen) != 0)
                return -1;
            if (first && first_range)
                for (const char *q = r; q < stop && *q != '-' && n + 1 < len; q++)
                    out[n++] = *q;
            first_range = 0;
            r = stop < close ? stop + 1 : close;
            if (stop < close && r == close)
                return fail(err, errlen, "an empty range");
        }
        p = close + 1;
    }
    if (n == 0 || n + 1 >= len)
        return fail(err, errlen, n == 0 ? "an empty host name" : "a host name too long");
    out[n] = '\0';
    return 0;
}

/* The launcher's job identity, "" where there is none (launch.h). */
static void job_identity(const char *(*get)(const char *), cb_launch *l)
{
    const char *ours = var(get, CB_LAUNCH_JOB_ENV), *run = var(get, "TORCHELASTIC_RUN_ID");
    const char *job = var(get, "SLURM_JOB_ID"), *step = var(get, "SLURM_STEP_ID");
    if (ours != NULL)
        snprintf(l->job, sizeof l->job, "job %.80s", ours);
    else if (run != NULL)
        snprintf(l->job, sizeof l->job, "torchrun run %.70s", run);
    else if (job != NULL)
        snprintf(l->job, sizeof l->job, "slurm job %.40s.%.30s", job, step != NULL ? step : "0");
    else
        l->job[0] = '\0';
}

/* The key when NCCL_COLLBENCH_KEY is unset: public facts, not a secret. */
static void identity_key(const cb_launch *l, unsigned char *key)
{
    char id[CB_LAUNCH_ADDRLEN + 64];
    snprintf(id, sizeof id, "nccl-collbench|master=%s:%d|uid=%lu", l->addr, l->port,
             (unsigned long)getuid());
    cb_sha256 s;
    cb_sha256_init(&s);
    cb_sha256_update(&s, id, strlen(id));
    cb_sha256_final(&s, key);
}

static int set_addr(cb_launch *l, const char *name, const char *value, char *err, size_t len)
{
    if (strlen(value) >= sizeof l->addr)
        return fail(err, len, "%s=%.40s...: longer than %d characters", name, value,
                    CB_LAUNCH_ADDRLEN - 1);
    snprintf(l->addr, sizeof l->addr, "%s", value);
    return 0;
}

/* Rank in [0, size) from two variables. */
static int rank_size(const char *(*get)(const char *), const char *rank_name,
                     const char *size_name, cb_launch *l, char *err, size_t len)
{
    const char *r = var(get, rank_name), *s = var(get, size_name);
    long rv, sv;
    if (r == NULL || s == NULL)
        return fail(err, len, "%s is set but %s is not", r != NULL ? rank_name : size_name,
                    r != NULL ? size_name : rank_name);
    if (parse_long(size_name, s, 1, 1L << 24, &sv, err, len) != 0 ||
        parse_long(rank_name, r, 0, 1L << 24, &rv, err, len) != 0)
        return -1;
    if (rv >= sv)
        return fail(err, len, "%s=%s: not below %s=%s", rank_name, r, size_name, s);
    l->rank = (int)rv;
    l->size = (int)sv;
    return 0;
}

/* An optional local rank and size: -1 when unset. */
static int local_ids(const char *(*get)(const char *), const char *rank_name,
                     const char *size_name, cb_launch *l, char *err, size_t len)
{
    const char *r = var(get, rank_name), *s = size_name != NULL ? var(get, size_name) : NULL;
    long v;
    if (s != NULL) {
        if (parse_long(size_name, s, 1, 1L << 24, &v, err, len) != 0)
            return -1;
        l->local_size = (int)v;
    }
    if (r != NULL) {
        if (parse_long(rank_name, r, 0, 1L << 24, &v, err, len) != 0)
            return -1;
        if (l->local_size > 0 && v >= l->local_size)
            return fail(err, len, "%s=%s: not below %s=%s", rank_name, r, size_name, s);
        l->local_rank = (int)v;
    }
    return 0;
}

/* How many ports the rendezvous may try from port on: CB_LAUNCH_PORT_TRIES,
 * fewer near the top of the range. */
static int tries_from(int port)
{
    int left = 65536 - port;   /* ports from port to 65535 */
    return left < CB_LAUNCH_PORT_TRIES ? left : CB_LAUNCH_PORT_TRIES;
}

static int detect_torchrun(const char *(*get)(const char *), cb_launch *l, int local, char *err,
                           size_t len)
{
    const char *addr = var(get, "MASTER_ADDR"), *port = var(get, "MASTER_PORT");
    if (addr == NULL)
        return fail(err, len, "%s but MASTER_ADDR is not set",
                    local ? "NCCL_COLLBENCH_LOCAL=1 is set" : "MASTER_PORT is set");
    if (port == NULL)
        return fail(err, len, "MASTER_ADDR=%s is set but MASTER_PORT is not", addr);
    l->mode = local ? CB_LAUNCH_LOCAL : CB_LAUNCH_TORCHRUN;
    if (set_addr(l, "MASTER_ADDR", addr, err, len) != 0 ||
        parse_port("MASTER_PORT", port, &l->port, err, len) != 0 ||
        rank_size(get, "RANK", "WORLD_SIZE", l, err, len) != 0 ||
        local_ids(get, "LOCAL_RANK", "LOCAL_WORLD_SIZE", l, err, len) != 0)
        return -1;
    /* Under torchrun the agent on node 0 serves its TCPStore at
     * MASTER_ADDR:MASTER_PORT for the workers (TORCHELASTIC_USE_AGENT_STORE
     * "True"; PyTorch's torch/distributed/rendezvous.py, _create_c10d_store):
     * rank 0 could not listen there, so the rendezvous takes a port after
     * it: the first free one of CB_LAUNCH_PORT_TRIES (the agent found
     * MASTER_PORT free by a bind to port 0: get_free_port in torch/
     * distributed/elastic/utils/distributed.py; the ports after it are
     * the kernel's to give to outgoing connections). */
    const char *agent = var(get, "TORCHELASTIC_USE_AGENT_STORE");
    if (!local && agent != NULL && strcmp(agent, "True") == 0 &&
        var(get, "NCCL_COLLBENCH_PORT") == NULL) {
        if (l->port == 65535)
            return fail(err, len, "MASTER_PORT=65535 is torchrun's store and no port follows it "
                                  "for the rendezvous: set NCCL_COLLBENCH_PORT");
        l->port++;
        l->port_tries = tries_from(l->port);
    }
    /* -g on one node: its parent found MASTER_PORT free by a bind to port 0
     * and closed it (local.c), so another process may take it before rank 0
     * listens; a port after it serves as well. */
    const char *picked = var(get, CB_LAUNCH_PICKED_PORT_ENV);
    if (local && picked != NULL && strcmp(picked, "1") == 0)
        l->port_tries = tries_from(l->port);
    return 0;
}

static int detect_slurm(const char *(*get)(const char *), cb_launch *l, char *err, size_t len)
{
    l->mode = CB_LAUNCH_SLURM;
    if (rank_size(get, "SLURM_PROCID", "SLURM_NTASKS", l, err, len) != 0 ||
        local_ids(get, "SLURM_LOCALID", NULL, l, err, len) != 0)
        return -1;
    const char *name = "SLURM_STEP_NODELIST";
    const char *list = var(get, name);
    if (list == NULL) {
        name = "SLURM_JOB_NODELIST";
        list = var(get, name);
    }
    if (list == NULL)
        return fail(err, len, "SLURM_PROCID is set but neither SLURM_STEP_NODELIST nor "
                              "SLURM_JOB_NODELIST is: no host to meet on");
    char why[128];
    if (cb_launch_first_host(list, l->addr, sizeof l->addr, why, sizeof why) != 0)
        return fail(err, len, "%s=%s: %s", name, list, why);
    const char *job = var(get, "SLURM_JOB_ID"), *step = var(get, "SLURM_STEP_ID");
    long job_id, step_id = 0;
    if (var(get, "NCCL_COLLBENCH_PORT") != NULL)
        return 0;   /* the caller reads it */
    if (job == NULL)
        return fail(err, len, "SLURM_JOB_ID is not set: set NCCL_COLLBENCH_PORT for the "
                              "rendezvous port");
    if (parse_long("SLURM_JOB_ID", job, 0, 0xffffffffL, &job_id, err, len) != 0 ||
        (step != NULL && parse_long("SLURM_STEP_ID", step, 0, 0xffffffffL, &step_id, err,
                                    len) != 0))
        return -1;
    l->port = cb_launch_slurm_port((unsigned long)job_id, (unsigned long)step_id);
    return 0;
}

/* A TCP rendezvous from torchrun's, -g N's or Slurm's variables: 1 found,
 * 0 none, -1 error. */
static int detect_tcp(const char *(*get)(const char *), cb_launch *l, char *err, size_t len)
{
    const char *local = var(get, "NCCL_COLLBENCH_LOCAL");
    int is_local = 0;
    if (local != NULL) {
        if (strcmp(local, "1") == 0)
            is_local = 1;
        else if (strcmp(local, "0") != 0)
            return fail(err, len, "NCCL_COLLBENCH_LOCAL=%s: 1 or 0 only", local);
    }
    int rc;
    if (is_local || var(get, "MASTER_ADDR") != NULL || var(get, "MASTER_PORT") != NULL)
        rc = detect_torchrun(get, l, is_local, err, len);
    else if (var(get, "SLURM_PROCID") != NULL && var(get, "SLURM_NTASKS") != NULL)
        rc = detect_slurm(get, l, err, len);
    else
        return 0;
    if (rc != 0)
        return -1;
    const char *port = var(get, "NCCL_COLLBENCH_PORT");
    if (port != NULL && parse_port("NCCL_COLLBENCH_PORT", port, &l->port, err, len) != 0)
        return -1;
    if (port != NULL)
        l->port_tries = 1;   /* the user's port, and no other */
    return 1;
}

static int has_mpi_launcher(const char *(*get)(const char *))
{
    return var(get, "OMPI_COMM_WORLD_SIZE") != NULL || var(get, "PMI_SIZE") != NULL ||
           var(get, "PMIX_RANK") != NULL;
}

int cb_launch_is_rank(const char *(*get)(const char *))
{
    return has_mpi_launcher(get) || var(get, "RANK") != NULL ||
           var(get, "NCCL_COLLBENCH_LOCAL") != NULL;
}

int cb_launch_env_rank(const char *(*get)(const char *))
{
    static const char *const names[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK",
                                        "RANK", "SLURM_PROCID"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *v = var(get, names[i]);
        char *end = NULL;
        long r = v != NULL ? strtol(v, &end, 10) : -1;
        if (v != NULL && *end == '\0' && r >= 0 && r < 1L << 30)
            return (int)r;
    }
    return -1;
}

int cb_launch_detect(const char *(*get)(const char *), cb_launch *out, char *err, size_t len)
{
    cb_launch l;
    memset(&l, 0, sizeof l);
    l.mode = CB_LAUNCH_SINGLE;
    l.rank = l.size = l.local_rank = l.local_size = -1;
    l.port_tries = 1;
    const char *forced = var(get, "NCCL_COLLBENCH_LAUNCH");
    int want_tcp = 0;
    if (forced != NULL && strcmp(forced, "tcp") == 0)
        want_tcp = 1;
    else if (forced != NULL && strcmp(forced, "mpi") != 0 && strcmp(forced, "auto") != 0)
        return fail(err, len, "NCCL_COLLBENCH_LAUNCH=%s: mpi, tcp or auto", forced);
    if (forced != NULL && strcmp(forced, "mpi") == 0) {
        l.mode = CB_LAUNCH_MPI;
    } else if (!want_tcp && has_mpi_launcher(get)) {
        l.mode = CB_LAUNCH_MPI;
    } else {
        int found = detect_tcp(get, &l, err, len);
        if (found < 0)
            return -1;
        if (found == 0 && want_tcp)
            return fail(err, len, "NCCL_COLLBENCH_LAUNCH=tcp, but neither torchrun's variables "
                                  "(MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE) nor Slurm's "
                                  "(SLURM_PROCID, SLURM_NTASKS) are set");
    }
    const char *key = var(get, "NCCL_COLLBENCH_KEY");
    if (key != NULL) {
        cb_sha256 s;
        cb_sha256_init(&s);
        cb_sha256_update(&s, key, strlen(key));
        cb_sha256_final(&s, l.key);
        l.keyed = 1;
    } else {
        identity_key(&l, l.key);
    }
    job_identity(get, &l);
    *out = l;
    return 0;
}

const char *cb_launch_mode_name(cb_launch_mode m)
{
    switch (m) {
    case CB_LAUNCH_SINGLE:
        return "single";
    case CB_LAUNCH_MPI:
        return "mpi";
    case CB_LAUNCH_TORCHRUN:
        return "torchrun";
    case CB_LAUNCH_SLURM:
        return "slurm";
    case CB_LAUNCH_LOCAL:
        return "local";
    }
    return "unknown";
}

int cb_launch_uses_tcp(const cb_launch *l)
{
    return l->mode == CB_LAUNCH_TORCHRUN || l->mode == CB_LAUNCH_SLURM ||
           l->mode == CB_LAUNCH_LOCAL;
}

void cb_launch_describe(const cb_launch *l, char *buf, size_t len)
{
    snprintf(buf, len, "%s launch, TCP rendezvous at %.48s:%d%s", cb_launch_mode_name(l->mode),
             l->addr, l->port, l->keyed ? "" : ", not authenticated: no NCCL_COLLBENCH_KEY");
}
