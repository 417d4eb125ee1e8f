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
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/hmac.h"
#include "control/control.h"
#include "control/launch.h"

/* A free TCP port on the loopback: bound, read, closed. Another process may
 * take it before rank 0 binds it; rank 0 then fails with a message naming
 * the port, and a rerun picks another. */
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
        /* A fresh key, and a nonce of our own as the job's identity: no
         * other job's rank can join ours, nor be taken for one. */
        char key[80] = "", job[80] = "";
        if (fresh_key(key, sizeof key) != 0 || fresh_key(job, 33) != 0) {
            snprintf(err, len, "no random bytes for the ranks' key: %s", strerror(errno));
            return -1;
        }
        setenv("NCCL_COLLBENCH_KEY", key, 1);
        setenv(CB_LAUNCH_JOB_ENV, job, 1);
    }
    setenv_long("WORLD_SIZE", nnodes * n);
    setenv_long("LOCAL_WORLD_SIZE", n);
    setenv(CB_LOCAL_ENV, "1", 1);
    *first = node * n;
    return 0;
}

/* A rank's status as the shell writes it (a signal: 128 + its number). */
static int status_of(int wstatus)
{
    if (WIFEXITED(wstatus))
        return WEXITSTATUS(wstatus);
    return WIFSIGNALED(wstatus) ? 128 + WTERMSIG(wstatus) : 1;
}

int cb_local_run(int n, char **argv, double grace_s, int *usage, char *err, size_t len)
{
    long first = 0;
    if (common_env(n, &first, err, len, usage) != 0)
        return -1;
    /* SIGINT and SIGTERM reach the ranks (the terminal's SIGINT reaches
     * them by the process group already); the parent waits for them. */
    sigset_t stop, old;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGCHLD);
    sigprocmask(SIG_BLOCK, &stop, &old);
    pid_t *pids = calloc((size_t)n, sizeof *pids);
    if (pids == NULL) {
        snprintf(err, len, "out of memory for %d ranks", n);
        return -1;
    }
    int started = 0;
    for (int i = 0; i < n; i++) {
        setenv_long("RANK", first + i);
        setenv_long("LOCAL_RANK", i);
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0) {
            sigprocmask(SIG_SETMASK, &old, NULL);
            execv("/proc/self/exe", argv);
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
            for (int i = 0; i < n; i++)
                if (pids[i] > 0)
                    kill(pids[i], sig);
        }
        int wstatus = 0;
        pid_t done;
        while ((done = waitpid(-1, &wstatus, WNOHANG)) > 0) {
            for (int i = 0; i < n; i++)
                if (pids[i] == done) {
                    pids[i] = 0;
                    left--;
                    int st = status_of(wstatus);
                    if (i == 0 && first == 0)
                        root_status = st;
                    if (st != 0 && code == 0) {
                        code = st;
                        kill_at = cb_ctl_now() + grace_s;
                    }
                }
        }
        if (kill_at >= 0 && left > 0 && cb_ctl_now() > kill_at) {
            for (int i = 0; i < n; i++)
                if (pids[i] > 0)
                    kill(pids[i], termed ? SIGKILL : SIGTERM);
            kill_at = cb_ctl_now() + 5.0;   /* SIGTERM ends a rank after its measurement */
            termed = 1;
        }
    }
    free(pids);
    sigprocmask(SIG_SETMASK, &old, NULL);
    /* Rank 0 speaks for the run (it agreed with the others and wrote the
     * outputs); the first failure where it has nothing to say. */
    return root_status != 0 ? root_status : code;
}
