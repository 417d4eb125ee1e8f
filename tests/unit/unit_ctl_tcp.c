/* The TCP control plane (src/control/tcp_*.c) between forked processes on
 * 127.0.0.1: every op with checked results for 1, 2, 3 and 5 ranks; then
 * rendezvous that must fail, each with its message: a wrong key, a rank
 * that never comes, a different WORLD_SIZE, a rank claimed twice; then a
 * rendezvous whose first ports are taken (torchrun's MASTER_PORT + 1 may
 * be): rank 0 takes a later one and the others find it there, or, with
 * every one taken, both say so. The parent reaps every child by its PID;
 * alarm() bounds each child. */
#define _DEFAULT_SOURCE   /* usleep */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "control/launch.h"
#include "common/hmac.h"
#include "unit.h"

#define MAX_RANKS 8
#define CHILD_ALARM_S 60

/* A port that was free a moment ago. */
static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    socklen_t sl = sizeof a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &sl) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    close(fd);
    return ntohs(a.sin_port);
}

static cb_launch launch_of(int rank, int size, int port, const char *key)
{
    cb_launch l;
    memset(&l, 0, sizeof l);
    l.mode = CB_LAUNCH_LOCAL;
    l.rank = rank;
    l.size = size;
    l.local_rank = rank;
    l.local_size = size;   /* one node: the listeners bind the loopback */
    snprintf(l.addr, sizeof l.addr, "127.0.0.1");
    l.port = port;
    cb_sha256 s;
    cb_sha256_init(&s);
    cb_sha256_update(&s, key, strlen(key));
    cb_sha256_final(&s, l.key);
    l.keyed = 1;
    return l;
}

/* One type's allreduce, every op, in place and not: rank r gives
 * base + r + i for element i; for LAND r + i + 2, but 0 at element 1 on
 * the last rank. */
#define CHECK_TYPE(u, c, T, type, base)                                                   \
    do {                                                                                  \
        int n_ = (c)->size, r_ = (c)->rank;                                               \
        for (int op_ = 0; op_ < 4; op_++)                                                 \
            for (int inplace_ = 0; inplace_ < 2; inplace_++) {                            \
                T in_[4], out_[4];                                                        \
                for (int i_ = 0; i_ < 4; i_++)                                            \
                    in_[i_] = (T)((base) + r_ + i_);                                      \
                for (int i_ = 0; op_ == CB_CTL_LAND && i_ < 4; i_++)                      \
                    in_[i_] = (T)(r_ == n_ - 1 && i_ == 1 ? 0 : r_ + i_ + 2);             \
                if (inplace_)                                                             \
                    memcpy(out_, in_, sizeof in_);                                        \
                CHECK(u, cb_ctl_allreduce(c, inplace_ ? CB_CTL_IN_PLACE : in_, out_, 4, \
                                          type, (cb_ctl_op)op_) == 0);                    \
                for (int i_ = 0; i_ < 4; i_++) {                                          \
                    T want_ = op_ == CB_CTL_SUM   ? (T)(n_ * ((base) + i_) + n_ * (n_ - 1) / 2) \
                              : op_ == CB_CTL_MIN ? (T)((base) + i_)                      \
                              : op_ == CB_CTL_MAX ? (T)((base) + n_ - 1 + i_)             \
                                                  : (T)(i_ != 1);                         \
                    CHECK(u, out_[i_] == want_);                                          \
                }                                                                         \
            }                                                                             \
    } while (0)

static void check_reductions(unit_state *u, cb_ctl *c)
{
    CHECK_TYPE(u, c, unsigned char, CB_CTL_BYTE, 3);
    CHECK_TYPE(u, c, int, CB_CTL_INT, -7);
    CHECK_TYPE(u, c, double, CB_CTL_DOUBLE, 0.5);
    CHECK_TYPE(u, c, uint64_t, CB_CTL_U64, (uint64_t)1 << 40);
    CHECK(u, cb_ctl_barrier(c) == 0);
}

static void check_gathers(unit_state *u, cb_ctl *c)
{
    int n = c->size, r = c->rank, root = n - 1;
    int mine[3] = {r, 10 * r + 1, -r}, all[3 * MAX_RANKS], one = 7 * r + 1, at_root[MAX_RANKS];
    memset(at_root, 0, sizeof at_root);
    CHECK(u, cb_ctl_gather(c, &one, sizeof one, at_root, root) == 0);
    for (int i = 0; r == root && i < n; i++)
        CHECK(u, at_root[i] == 7 * i + 1);
    CHECK(u, cb_ctl_allgather(c, mine, sizeof mine, all) == 0);
    for (int i = 0; i < n; i++)
        CHECK(u, all[3 * i] == i && all[3 * i + 1] == 10 * i + 1 && all[3 * i + 2] == -i);
    /* bcast from a rank other than 0, and one big enough to fill sockets. */
    char small[100];
    int from = n > 1 ? 1 : 0;
    memset(small, r == from ? 'x' : 0, sizeof small);
    CHECK(u, cb_ctl_bcast(c, small, sizeof small, from) == 0);
    CHECK(u, small[0] == 'x' && small[99] == 'x');
    size_t big_len = 3u << 20;
    unsigned char *big = malloc(big_len);
    for (size_t i = 0; big != NULL && i < big_len; i++)
        big[i] = r == root ? (unsigned char)(i * 7 + 3) : 0;
    CHECK(u, big != NULL && cb_ctl_bcast(c, big, big_len, root) == 0);
    int big_ok = 1;
    for (size_t i = 0; big != NULL && i < big_len; i++)
        big_ok &= big[i] == (unsigned char)(i * 7 + 3);
    CHECK(u, big_ok);
    free(big);
}

static void check_p2p(unit_state *u, cb_ctl *c)
{
    int n = c->size, r = c->rank, next = (r + 1) % n, prev = (r + n - 1) % n;
    int a = 100 + r, b = 200 + r, got_a = -1, got_b = -1;
    CHECK(u, cb_ctl_send(c, &a, sizeof a, next, 1) == 0);
    CHECK(u, cb_ctl_send(c, &b, sizeof b, next, 2) == 0);
    /* Out of order: tag 2 first; tag 1 waits in the queue. */
    CHECK(u, cb_ctl_recv(c, &got_b, sizeof got_b, prev, 2) == 0 && got_b == 200 + prev);
    CHECK(u, cb_ctl_recv(c, &got_a, sizeof got_a, prev, 1) == 0 && got_a == 100 + prev);
}

static void check_splits(unit_state *u, cb_ctl *c)
{
    int n = c->size, r = c->rank;
    int color = n > 2 && r == n - 1 ? -1 : r % 2;
    cb_ctl *sub = NULL;
    CHECK(u, cb_ctl_split(c, color, -r, &sub) == 0);
    if (color < 0) {
        CHECK(u, sub == NULL);
    } else if (sub != NULL) {
        /* Members: world ranks of the color (bar the last when it left),
         * ordered by key -r: the highest first. */
        int count = 0, above = 0, sum = 0;
        for (int i = 0; i < n; i++) {
            int ci = n > 2 && i == n - 1 ? -1 : i % 2;
            if (ci != color)
                continue;
            count++;
            sum += i;
            above += i > r;
        }
        CHECK(u, sub->size == count && sub->rank == above);
        int mine = r, total = -1;
        CHECK(u, cb_ctl_allreduce(sub, &mine, &total, 1, CB_CTL_INT, CB_CTL_SUM) == 0);
        CHECK(u, total == sum);
        /* The world and the group at once: their messages must not mix. */
        CHECK(u, cb_ctl_barrier(c) == 0);
        int v = sub->rank == 0 ? 42 + color : 0;
        CHECK(u, cb_ctl_bcast(sub, &v, sizeof v, 0) == 0 && v == 42 + color);
    } else {
        CHECK(u, sub != NULL);
    }
    if (color < 0)
        CHECK(u, cb_ctl_barrier(c) == 0);
    cb_ctl_free(&sub);
    CHECK(u, sub == NULL);
    cb_ctl *node = NULL;
    CHECK(u, cb_ctl_split_node(c, r, &node) == 0 && node != NULL);
    CHECK(u, node != NULL && node->size == n && node->rank == r);
    cb_ctl_free(&node);
}

static void check_secret_and_iallreduce(unit_state *u, cb_ctl *c)
{
    int n = c->size, r = c->rank;
    unsigned char s1[48], s2[48], all[48 * MAX_RANKS];
    CHECK(u, cb_ctl_secret(c, "side", s1, sizeof s1) == 0);
    CHECK(u, cb_ctl_secret(c, "other", s2, sizeof s2) == 0);
    CHECK(u, memcmp(s1, s2, sizeof s1) != 0);
    CHECK(u, memcmp(s1, s1 + 32, 16) != 0);
    CHECK(u, cb_ctl_allgather(c, s1, sizeof s1, all) == 0);
    for (int i = 0; i < n; i++)
        CHECK(u, memcmp(all + 48 * i, s1, sizeof s1) == 0);

    /* Rank 0 comes late: the others' tests must return not done first. */
    int in = r + 1, out = 0, done = 0, polls = 0;
    cb_ctl_req *req = NULL;
    if (r == 0)
        usleep(200000);
    CHECK(u, cb_ctl_iallreduce(c, &in, &out, 1, CB_CTL_INT, CB_CTL_SUM, &req) == 0);
    while (!done && polls < 1000000) {
        if (cb_ctl_test(c, req, &done) != 0)
            break;
        polls++;
        if (!done)
            usleep(1000);
    }
    CHECK(u, done && out == n * (n + 1) / 2);
    if (n > 1 && r != 0)
        CHECK(u, polls > 1);
}

static int child_ops(int rank, int size, int port)
{
    unit_state u = {0, 0};
    char err[512];
    cb_launch l = launch_of(rank, size, port, "unit-ctl-tcp");
    cb_ctl *c = NULL;
    if (cb_ctl_tcp_world(&l, 20.0, &c, err, sizeof err) != 0) {
        fprintf(stderr, "rank %d of %d: %s\n", rank, size, err);
        return 1;
    }
    CHECK(&u, c->rank == rank && c->size == size && strcmp(c->ops->name, "tcp") == 0);
    check_reductions(&u, c);
    check_gathers(&u, c);
    check_p2p(&u, c);
    check_splits(&u, c);
    check_secret_and_iallreduce(&u, c);
    CHECK(&u, cb_ctl_barrier(c) == 0);
    cb_ctl_free(&c);
    if (u.failures)
        fprintf(stderr, "rank %d of %d: %d of %d checks failed\n", rank, size, u.failures,
                u.checks);
    return u.failures ? 1 : 0;
}

/* A rendezvous that must fail with a message holding want (and want2). */
static int child_fails(const cb_launch *l, double timeout_s, const char *want, const char *want2)
{
    char err[512] = "";
    cb_ctl *c = NULL;
    if (cb_ctl_tcp_world(l, timeout_s, &c, err, sizeof err) == 0) {
        fprintf(stderr, "rank %d: the rendezvous should have failed (%s)\n", l->rank, want);
        cb_ctl_free(&c);
        return 1;
    }
    if (strstr(err, want) == NULL || (want2 != NULL && strstr(err, want2) == NULL)) {
        fprintf(stderr, "rank %d: '%s' lacks '%s' / '%s'\n", l->rank, err, want,
                want2 ? want2 : "");
        return 1;
    }
    return 0;
}

typedef struct bad_case {
    const char *name;
    int started;           /* processes */
    int size[MAX_RANKS];   /* each one's WORLD_SIZE */
    int rank[MAX_RANKS];
    const char *key[MAX_RANKS];
    const char *want[MAX_RANKS], *want2[MAX_RANKS];
    const char *job[MAX_RANKS];   /* the launcher's job identity; NULL: none */
} bad_case;

static const bad_case bad_cases[] = {
    {"wrong key", 2, {2, 2}, {0, 1}, {"k", "not-k"},
     {"missing rank 1", "NCCL_COLLBENCH_KEY"}, {"wrong key", "failed our key"}, {NULL}},
    {"a rank never comes", 2, {3, 3}, {0, 1}, {"k", "k"},
     {"missing rank 2 (of 3)", "refused the rendezvous"}, {"timed out", "missing rank 2"}, {NULL}},
    {"WORLD_SIZE differs", 2, {2, 3}, {0, 1}, {"k", "k"},
     {"WORLD_SIZE=3", "refused the rendezvous"}, {"rank 0 has WORLD_SIZE=2", "WORLD_SIZE=3"}, {NULL}},
    {"a rank claimed twice", 3, {3, 3, 3}, {0, 1, 1}, {"k", "k", "k"},
     {"two processes claim rank 1: pid", "two processes claim rank 1: pid",
      "two processes claim rank 1: pid"},
     {"neither is taken", "refused the rendezvous", "refused the rendezvous"}, {NULL}},
    /* Two jobs sharing one key (one Secret) and one port: refused, both
     * named, never measured together. */
    {"two jobs on one port", 2, {2, 2}, {0, 1}, {"k", "k"},
     {"is of another job (torchrun run B) than rank 0 (torchrun run A)", "refused the rendezvous"},
     {"two jobs", "(torchrun run B) than rank 0 (torchrun run A)"},
     {"torchrun run A", "torchrun run B"}},
    {"a job and no job", 2, {2, 2}, {0, 1}, {"k", "k"},
     {"another job (slurm job 5.0) than rank 0 (no job identity)", "refused the rendezvous"},
     {NULL, "slurm job 5.0"}, {NULL, "slurm job 5.0"}},
};

/* Starts n children, running every op (bad < 0) or bad_cases[bad]; 0 when every one exited 0. */
static int run_case(const char *name, int n, int port, int bad)
{
    pid_t pids[MAX_RANKS];
    int failed = 0;
    fflush(NULL);
    for (int i = 0; i < n; i++) {
        pids[i] = fork();
        if (pids[i] == 0) {
            alarm(CHILD_ALARM_S);
            int rc;
            if (bad < 0) {
                rc = child_ops(i, n, port);
            } else {
                const bad_case *b = &bad_cases[bad];
                cb_launch l = launch_of(b->rank[i], b->size[i], port, b->key[i]);
                if (b->job[i] != NULL)
                    snprintf(l.job, sizeof l.job, "%s", b->job[i]);
                rc = child_fails(&l, 3.0, b->want[i], b->want2[i]);
            }
            fflush(NULL);
            _exit(rc);
        }
        if (pids[i] < 0) {
            perror("fork");
            n = i;
            failed = 1;
            break;
        }
    }
    for (int i = 0; i < n; i++) {
        int status = 0;
        if (waitpid(pids[i], &status, 0) != pids[i] || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 0) {
            fprintf(stderr, "%s: process %d (pid %d) ended with status 0x%x\n", name, i,
                    (int)pids[i], status);
            failed = 1;
        }
    }
    return failed;
}

/* A listener on 127.0.0.1:port that never accepts (the kernel completes
 * connections to it; nothing answers them): a stranger on the port. */
static int hold_port(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons((uint16_t)port);
    if (fd >= 0 && (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 8) != 0)) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* Two ranks whose rendezvous may take any of tries ports from base, the
 * first held ones held by strangers: with a free one after them, both meet
 * there (the preamble's description names it); with none, rank 0 says the
 * ports were all taken and rank 1 that it reached no rank 0. */
static int run_tries_case(int base, int tries, int held)
{
    int fds[CB_LAUNCH_PORT_TRIES], failed = 0;
    pid_t pids[2];
    for (int i = 0; i < held; i++)
        if ((fds[i] = hold_port(base + i)) < 0) {
            for (int j = 0; j < i; j++)
                close(fds[j]);
            return -1;   /* taken meanwhile: the caller picks another base */
        }
    fflush(NULL);
    for (int r = 0; r < 2; r++) {
        pids[r] = fork();
        if (pids[r] != 0)
            continue;
        alarm(CHILD_ALARM_S);
        cb_launch l = launch_of(r, 2, base, "unit-ctl-tcp");
        l.port_tries = tries;
        char err[512] = "", want[64], desc[256] = "";
        int rc = 0;
        cb_ctl *c = NULL;
        if (held < tries) {
            snprintf(want, sizeof want, "127.0.0.1:%d", base + held);
            if (cb_ctl_tcp_world(&l, 20.0, &c, err, sizeof err) != 0) {
                fprintf(stderr, "tries: rank %d: %s\n", r, err);
                rc = 1;
            } else {
                cb_ctl_describe(c, desc, sizeof desc);
                rc = strstr(desc, want) == NULL || cb_ctl_barrier(c) != 0;
                if (rc)
                    fprintf(stderr, "tries: rank %d: '%s' lacks '%s'\n", r, desc, want);
                cb_ctl_free(&c);
            }
        } else {
            snprintf(want, sizeof want, "ports %d-%d", base, base + tries - 1);
            rc = child_fails(&l, 3.0, r == 0 ? "cannot listen on any of the rendezvous" :
                                                   "could not reach rank 0", want);
        }
        fflush(NULL);
        _exit(rc);
    }
    for (int r = 0; r < 2; r++) {
        int status = 0;
        if (pids[r] < 0 || waitpid(pids[r], &status, 0) != pids[r] || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 0) {
            fprintf(stderr, "tries %d, held %d: rank %d ended with status 0x%x\n", tries, held,
                    r, status);
            failed = 1;
        }
    }
    for (int i = 0; i < held; i++)
        close(fds[i]);
    return failed;
}

/* run_tries_case on a base whose ports were free a moment ago. */
static int tries_case(int tries, int held)
{
    for (int attempt = 0; attempt < 20; attempt++) {
        int base = free_port();
        if (base < 0 || base + tries - 1 > 65535)
            continue;
        int rc = run_tries_case(base, tries, held);
        if (rc >= 0)
            return rc;
    }
    fprintf(stderr, "tries: no run of %d free ports found\n", tries);
    return 1;
}

int main(void)
{
    unit_state u = {0, 0};
    const int sizes[] = {1, 2, 3, 5};
    int port = free_port();
    if (port < 0) {
        printf("unit_ctl_tcp: no TCP port on 127.0.0.1 to use: skipped\n");
        return 77;
    }
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        char name[32];
        snprintf(name, sizeof name, "%d ranks", sizes[i]);
        CHECK(&u, run_case(name, sizes[i], free_port(), -1) == 0);
    }
    for (int b = 0; b < (int)(sizeof bad_cases / sizeof bad_cases[0]); b++)
        CHECK(&u, run_case(bad_cases[b].name, bad_cases[b].started, free_port(), b) == 0);
    CHECK(&u, tries_case(4, 2) == 0);   /* rank 0 on the third port */
    CHECK(&u, tries_case(2, 2) == 0);   /* none free: both say so */
    return unit_done(&u, "unit_ctl_tcp");
}
