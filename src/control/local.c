/* -g N: start the node's ranks and wait for them (see local.h). */
#include "control/local.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <time.h>
#include <unistd.h>

#include "common/hmac.h"
#include "control/control.h"
#include "control/launch.h"

/* A free TCP port on the loopback: bound, read, closed. Another process may
 * take it before rank 0 binds it; rank 0 then takes one of the ports after
 * it (CB_LAUNCH_PICKED_PORT_ENV). */
static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    int port = -1;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &alen) == 0)
        port = ntohs(a.sin_port);
    close(fd);
    return port;
}

/* NAME's value as a number in [lo, hi], def when unset; -1 with a message. */
static int env_int(const char *name, long lo, long hi, long def, long *out, char *err, size_t len)
{
    const char *v = getenv(name);
    *out = def;
    if (v == NULL)
        return 0;
    char *end = NULL;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (end == v || *end != '\0' || errno != 0 || x < lo || x > hi) {
        snprintf(err, len, "%s='%s' is not a number from %ld to %ld", name, v, lo, hi);
        return -1;
    }
    *out = x;
    return 0;
}

static int setenv_long(const char *name, long v)
{
    char text[32];
    snprintf(text, sizeof text, "%ld", v);
    return setenv(name, text, 1);
}

/* 32 random bytes as hex: the ranks' rendezvous key, known to them alone. */
static int fresh_key(char *hex, size_t len)
{
    unsigned char raw[32];
    int ok = cb_random_bytes(raw, sizeof raw) == 0;
    for (size_t i = 0; ok && i < sizeof raw && 2 * i + 2 < len; i++)
        snprintf(hex + 2 * i, 3, "%02x", raw[i]);
    return ok ? 0 : -1;
}

/* The environment every rank shares: where to meet, and the key. */
static int common_env(int n, long *first, char *err, size_t len, int *usage)
{
    long nnodes = 1, node = 0;
    *usage = 1;
    if (env_int("NNODES", 1, 1L << 20, 1, &nnodes, err, len) != 0 ||
        env_int("NODE_RANK", 0, nnodes - 1, 0, &node, err, len) != 0)
        return -1;
    if (nnodes > 1 && (getenv("MASTER_ADDR") == NULL || getenv("MASTER_PORT") == NULL)) {
        snprintf(err, len, "-g %d on %ld nodes (NNODES) needs MASTER_ADDR and MASTER_PORT, the "
                 "rendezvous on node 0", n, nnodes);
        return -1;
    }
    *usage = 0;
    if (nnodes == 1) {
        int port = free_port();
        if (port < 0) {
            snprintf(err, len, "no free TCP port on the loopback for the ranks to meet: %s",
                     strerror(errno));
            return -1;
        }
        setenv("MASTER_ADDR", "127.0.0.1", 1);
        setenv_long("MASTER_PORT", port);
        setenv(CB_LAUNCH_PICKED_PORT_ENV, "1", 1);
        /* A fresh key, and a nonce of our own as the job's identity: no
         * other job's rank can join ours, nor be taken for one. */
        char key[80] = "", job[80] = "";
        if (fresh_key(key, sizeof key) != 0 || fresh_key(job, 33) != 0) {
            snprintf(err, len, "no random bytes for the ranks' key: %s", strerror(errno));
            return -1;
        }
        setenv("NCCL_COLLBENCH_KEY", key, 1);
        setenv(CB_LAUNCH_JOB_ENV, job, 1);
    } else {
        unsetenv(CB_LAUNCH_PICKED_PORT_ENV);   /* the user's MASTER_PORT, and no other */
    }
    setenv_long("WORLD_SIZE", nnodes * n);
    setenv_long("LOCAL_WORLD_SIZE", n);
    setenv(CB_LOCAL_ENV, "1", 1);
    setenv_long(CB_LOCAL_PARENT_ENV, (long)getpid());
    *first = node * n;
    return 0;
}

/* Whether path names the file this process runs (same device and inode). */
static int is_self(const char *path, const struct stat *self)
{
    struct stat st;
    return stat(path, &st) == 0 && st.st_dev == self->st_dev && st.st_ino == self->st_ino;
}

/* The path the ranks are started by. The kernel names a process after the
 * file it executes, so /proc/self/exe would show every rank as "exe" in ps
 * and top: take argv[0] (a path, or found in PATH, so that a link such as
 * all_reduce_perf keeps its name) when it is this program, else the
 * program's own path; /proc/self/exe only when neither can be read. */
static void rank_program(const char *argv0, char *out, size_t len)
{
    struct stat self;
    snprintf(out, len, "/proc/self/exe");
    if (argv0 == NULL || stat("/proc/self/exe", &self) != 0)
        return;
    if (strchr(argv0, '/') != NULL) {
        if (is_self(argv0, &self)) {
            snprintf(out, len, "%s", argv0);
            return;
        }
    } else {
        const char *dirs = getenv("PATH");
        while (dirs != NULL && *dirs != '\0') {
            size_t n = strcspn(dirs, ":");
            char cand[PATH_MAX];
            int w = snprintf(cand, sizeof cand, "%.*s/%s", (int)n, n ? dirs : ".", argv0);
            if (w > 0 && (size_t)w < sizeof cand && (size_t)w < len && is_self(cand, &self)) {
                snprintf(out, len, "%s", cand);
                return;
            }
            dirs += n + (dirs[n] == ':');
        }
    }
    char real[PATH_MAX];
    ssize_t r = readlink("/proc/self/exe", real, sizeof real - 1);
    if (r > 0) {
        real[r] = '\0';
        if ((size_t)r < len && is_self(real, &self))
            snprintf(out, len, "%s", real);
    }
}

/* Rank r, which this process started, was killed by sig without being sent
 * it from here (the OOM killer, a crash, a user's kill): its peers can only
 * say that "a peer ended", so the parent names it, and its host. */
static void say_killed(long r, pid_t pid, int sig)
{
    char host[256] = "";
    const char *id = getenv("NCCL_HOSTID");
    if (id != NULL && id[0] != '\0')
        snprintf(host, sizeof host, "%s", id);
    else if (gethostname(host, sizeof host - 1) != 0)
        snprintf(host, sizeof host, "unknown host");
    fprintf(stderr, "nccl-collbench: -g: rank %ld (%s, pid %d) ended, killed by signal %d (%s)\n",
            r, host, (int)pid, sig, strsignal(sig));
    fflush(stderr);
}

/* A rank's status as the shell writes it (a signal: 128 + its number). */
static int status_of(int wstatus)
{
    if (WIFEXITED(wstatus))
        return WEXITSTATUS(wstatus);
    return WIFSIGNALED(wstatus) ? 128 + WTERMSIG(wstatus) : 1;
}

/* In a rank, before it runs: the parent's death (SIGKILL, or a SIGHUP
 * that ends it) sends the rank SIGTERM, so that it stops after the
 * measurement in progress and writes what finished, never running on as an
 * orphan. The parent may already be gone: then there is no one to report
 * to, and nothing was measured. */
static void orphan_ends(pid_t parent)
{
#ifdef __linux__
    (void)prctl(PR_SET_PDEATHSIG, SIGTERM);
#endif
    if (getppid() != parent)
        _exit(1);
}

void cb_local_end_job(void)
{
    const char *v = getenv(CB_LOCAL_PARENT_ENV);
    char *end = NULL;
    long parent = v != NULL ? strtol(v, &end, 10) : 0;
    /* Only to the -g parent that started this rank: never to whatever
     * adopted it after that parent died. */
    if (parent > 1 && end != NULL && *end == '\0' && (pid_t)parent == getppid())
        kill((pid_t)parent, CB_LOCAL_END_SIGNAL);
}

int cb_local_run(int n, char **argv, double grace_s, int *usage, char *err, size_t len)
{
    long first = 0;
    pid_t parent = getpid();
    if (common_env(n, &first, err, len, usage) != 0)
        return -1;
    /* SIGINT and SIGTERM reach the ranks (the terminal's SIGINT reaches
     * them by the process group already); the parent waits for them.
     * CB_LOCAL_END_SIGNAL is a rank's cb_local_end_job. */
    sigset_t stop, old;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGCHLD);
    sigaddset(&stop, CB_LOCAL_END_SIGNAL);
    sigprocmask(SIG_BLOCK, &stop, &old);
    /* A rank's pid, negated once it was reaped (its status in ends[i]):
     * the signal of a rank that ends the job may be read after its exit. */
    pid_t *pids = calloc((size_t)n, sizeof *pids);
    int *ends = calloc((size_t)n, sizeof *ends);
    if (pids == NULL || ends == NULL) {
        free(pids);
        free(ends);
        sigprocmask(SIG_SETMASK, &old, NULL);
        snprintf(err, len, "out of memory for %d ranks", n);
        return -1;
    }
    char program[PATH_MAX];
    rank_program(argv[0], program, sizeof program);
    int started = 0;
    for (int i = 0; i < n; i++) {
        setenv_long("RANK", first + i);
        setenv_long("LOCAL_RANK", i);
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0) {
            sigprocmask(SIG_SETMASK, &old, NULL);
            orphan_ends(parent);
            execv(program, argv);
            fprintf(stderr, "nccl-collbench: -g: cannot start rank %ld: %s\n", first + i,
                    strerror(errno));
            _exit(127);
        }
        if (pid < 0) {
            snprintf(err, len, "cannot start rank %ld: %s", first + i, strerror(errno));
            break;
        }
        pids[i] = pid;
        started++;
    }
    int code = started < n ? 1 : 0, left = started, root_status = 0;
    int ender = -1;   /* the rank that ended the job (cb_local_end_job) */
    int sent = started < n;   /* this process signalled the ranks */
    double kill_at = started < n ? cb_ctl_now() : -1;
    int termed = 0;
    for (int i = 0; i < n; i++)
        if (started < n && pids[i] > 0)
            kill(pids[i], SIGTERM);
    while (left > 0) {
        struct timespec turn = {.tv_sec = 0, .tv_nsec = 200000000L};
        siginfo_t info;
        int sig = sigtimedwait(&stop, &info, &turn);
        if (sig == SIGINT || sig == SIGTERM) {
            sent = 1;
            for (int i = 0; i < n; i++)
                if (pids[i] > 0)
                    kill(pids[i], sig);
        }
        /* A rank that cannot go on and whose peers cannot learn it (they
         * wait inside NCCL for it): the job ends now, with its status. The
         * others hold nothing to save (a SIGTERM would have rank 0 write
         * files claiming 143). */
        for (int i = 0; sig == CB_LOCAL_END_SIGNAL && ender < 0 && i < n; i++)
            if (pids[i] != 0 && (pids[i] == info.si_pid || -pids[i] == info.si_pid)) {
                ender = i;
                sent = 1;
                for (int j = 0; j < n; j++)
                    if (j != i && pids[j] > 0)
                        kill(pids[j], SIGKILL);
            }
        int wstatus = 0;
        pid_t done;
        while ((done = waitpid(-1, &wstatus, WNOHANG)) > 0) {
            for (int i = 0; i < n; i++)
                if (pids[i] == done) {
                    pids[i] = -done;
                    left--;
                    int st = status_of(wstatus);
                    ends[i] = st;
                    if (WIFSIGNALED(wstatus) && !sent)
                        say_killed(first + i, done, WTERMSIG(wstatus));
                    if (i == 0 && first == 0)
                        root_status = st;
                    if (st != 0 && code == 0) {
                        code = st;
                        kill_at = cb_ctl_now() + grace_s;
                    }
                }
        }
        if (kill_at >= 0 && left > 0 && cb_ctl_now() > kill_at) {
            sent = 1;
            for (int i = 0; i < n; i++)
                if (pids[i] > 0)
                    kill(pids[i], termed ? SIGKILL : SIGTERM);
            kill_at = cb_ctl_now() + 5.0;   /* SIGTERM ends a rank after its measurement */
            termed = 1;
        }
    }
    /* Rank 0 speaks for the run (it agreed with the others and wrote the
     * outputs); the first failure where it has nothing to say; a rank that
     * ended the job, for the job. */
    if (ender >= 0)
        code = ends[ender] != 0 ? ends[ender] : 1;
    else if (root_status != 0)
        code = root_status;
    free(pids);
    free(ends);
    sigprocmask(SIG_SETMASK, &old, NULL);
    return code;
}
