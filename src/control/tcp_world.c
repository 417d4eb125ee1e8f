/*
 * The TCP plane's rendezvous (cb_ctl_tcp_world): every rank opens its own
 * listener, connects to rank 0's rendezvous port (retrying until the
 * deadline: rank 0 may start later), authenticates, and JOINs with its
 * rank, the world's size, its listener's port and its machine's identity.
 * Rank 0 checks that each rank came once with the same size, then sends
 * everyone the TABLE of every rank's listener (the address rank 0 saw the
 * rank's connection come from) and the nonce of cb_ctl_secret, and every
 * rendezvous connection closes: afterwards ranks connect to each other
 * only as the collectives' trees need.
 *
 * Rank 0 holds one connection per rank during the rendezvous: its open
 * file limit is raised to the hard limit when size needs it.
 *
 * Listeners bind the address the rendezvous needs (rendezvous_address),
 * never every interface where one address will do.
 */
#define _DEFAULT_SOURCE   /* getaddrinfo, gethostname */
#include "control/tcp_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "control/control.h"

/* JOIN: rank, size (int32), listener port (uint16), machine identity,
 * pid (int32), then the job's identity: its length (one byte) and text. */
#define JOIN_FIXED (4 + 4 + 2 + TCP_MACHINE_LEN + 4 + 1)
#define JOIN_MAX (JOIN_FIXED + CB_LAUNCH_JOBLEN)
/* A TABLE entry: family (4 or 6), port, address (16), machine identity. */
#define ENTRY_LEN (1 + 2 + 16 + TCP_MACHINE_LEN)
/* TABLE: status (0, or 1 and a message), run nonce, size, entries. */
#define TABLE_HEAD (1 + TCP_NONCE_LEN + 4)
/* The missing ranks a message names before it counts the rest. */
#define MISSING_NAMED 16

static int fail(char *err, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
    return -1;
}

tcp_world *cb_tcp_world_new(int rank, int size, const unsigned char *key, double timeout_s)
{
    tcp_world *w = calloc(1, sizeof *w);
    if (w == NULL)
        return NULL;
    w->peers = calloc((size_t)size, sizeof *w->peers);
    if (w->peers == NULL) {
        free(w);
        return NULL;
    }
    w->rank = rank;
    w->size = size;
    memcpy(w->key, key, sizeof w->key);
    w->timeout_s = timeout_s;
    w->listen_fd = w->rv_fd = -1;
    w->refs = 1;
    return w;
}

void cb_tcp_world_release(tcp_world *w)
{
    if (w == NULL || --w->refs > 0)
        return;
    cb_tcp_close_all(w);
    free(w->conns);
    free(w->pollfds);
    free(w->peers);
    free(w);
}

/* This machine: its host name and boot id (one kernel's ranks alike). */
static void machine_identity(unsigned char *out)
{
    char host[256] = "", boot[64] = "";
    gethostname(host, sizeof host - 1);
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f != NULL) {
        if (fgets(boot, sizeof boot, f) == NULL)
            boot[0] = '\0';
        fclose(f);
    }
    cb_sha256 s;
    cb_sha256_init(&s);
    cb_sha256_update(&s, host, strlen(host));
    cb_sha256_update(&s, "|", 1);
    cb_sha256_update(&s, boot, strlen(boot));
    cb_sha256_final(&s, out);
}

static void put16(unsigned char *p, unsigned v)
{
    p[0] = (unsigned char)(v >> 8);
    p[1] = (unsigned char)v;
}

static unsigned get16(const unsigned char *p)
{
    return (unsigned)p[0] << 8 | p[1];
}

static void put32s(unsigned char *p, int32_t v)
{
    uint32_t u = (uint32_t)v;
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(u >> (24 - 8 * i));
}

static int32_t get32s(const unsigned char *p)
{
    return (int32_t)((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]);
}

/* A table entry from an address (an IPv4-mapped IPv6 one written as IPv4). */
static void put_entry(unsigned char *e, const struct sockaddr_storage *ss, int port,
                      const unsigned char *machine)
{
    memset(e, 0, ENTRY_LEN);
    if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const void *)ss;
        if (IN6_IS_ADDR_V4MAPPED(&a->sin6_addr)) {
            e[0] = 4;
            memcpy(e + 3, a->sin6_addr.s6_addr + 12, 4);
        } else {
            e[0] = 6;
            memcpy(e + 3, a->sin6_addr.s6_addr, 16);
        }
    } else {
        const struct sockaddr_in *a = (const void *)ss;
        e[0] = 4;
        memcpy(e + 3, &a->sin_addr, 4);
    }
    put16(e + 1, (unsigned)port);
    memcpy(e + 19, machine, TCP_MACHINE_LEN);
}

static int get_entry(const unsigned char *e, tcp_peer *p)
{
    memset(&p->addr, 0, sizeof p->addr);
    if (e[0] == 4) {
        struct sockaddr_in *a = (void *)&p->addr;
        a->sin_family = AF_INET;
        a->sin_port = htons((uint16_t)get16(e + 1));
        memcpy(&a->sin_addr, e + 3, 4);
        p->addrlen = sizeof *a;
    } else if (e[0] == 6) {
        struct sockaddr_in6 *a = (void *)&p->addr;
        a->sin6_family = AF_INET6;
        a->sin6_port = htons((uint16_t)get16(e + 1));
        memcpy(a->sin6_addr.s6_addr, e + 3, 16);
        p->addrlen = sizeof *a;
    } else {
        return -1;
    }
    memcpy(p->machine, e + 19, TCP_MACHINE_LEN);
    return 0;
}

static int listener_port(int fd)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) != 0)
        return -1;
    return ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                          : ((struct sockaddr_in *)&ss)->sin_port);
}

static void conn_addr_text(const tcp_conn *c, char *out, size_t len)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    if (c->fd >= 0 && getpeername(c->fd, (struct sockaddr *)&ss, &sl) == 0)
        cb_tcp_addr_text((struct sockaddr *)&ss, out, len);
    else
        snprintf(out, len, "(gone)");
}

/* Rank 0 holds a connection per rank for a while: room for them. */
static int room_for_fds(int size, char *err, size_t len)
{
    struct rlimit rl;
    rlim_t need = (rlim_t)size + 64;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= need)
        return 0;
    rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > need ? need : rl.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur < need)
        return fail(err, len, "rank 0 needs %lu open files for %d ranks' rendezvous, and the "
                              "hard limit (ulimit -Hn) is %lu",
                    (unsigned long)need, size, (unsigned long)rl.rlim_max);
    return 0;
}

/* Tells every rank that joined (and also, when not NULL, the one that
 * did not fit) why the rendezvous failed, then fails. */
/* Rank 0's refusal, err, to every rank that joined and also: its first
 * byte says whether a rank was late (2) or something else was wrong (1),
 * so that every rank ends with one status for one cause. Returns the
 * rendezvous' result, -1, or TCP_RV_LATE. */
static int refuse_all(tcp_world *w, tcp_conn **joined, tcp_conn *also, char *err, int late)
{
    size_t n = strlen(err);
    unsigned char *msg = malloc(n + 1);
    if (msg != NULL) {
        msg[0] = late ? 2 : 1;
        memcpy(msg + 1, err, n);
        for (int r = 1; r < w->size; r++)
            if (joined[r] != NULL)
                cb_tcp_send(w, joined[r], TCP_GROUP_RENDEZVOUS, TCP_RV_TABLE, msg, n + 1);
        if (also != NULL)
            cb_tcp_send(w, also, TCP_GROUP_RENDEZVOUS, TCP_RV_TABLE, msg, n + 1);
    }
    free(msg);
    return late ? TCP_RV_LATE : -1;
}

static int missing_ranks(tcp_world *w, tcp_conn **joined, int port, char *err, size_t len)
{
    int named = 0, missing = 0;
    for (int r = 1; r < w->size; r++)
        missing += joined[r] == NULL;
    int off = snprintf(err, len, "the rendezvous on port %d timed out after %g s; missing rank%s",
                       port, w->timeout_s, missing > 1 ? "s" : "");
    for (int r = 1; r < w->size; r++) {
        if (joined[r] != NULL || named == MISSING_NAMED)
            continue;
        if (off < (int)len)
            off += snprintf(err + off, len - (size_t)off, "%s %d", named ? "," : "", r);
        named++;
    }
    if (missing > named && off < (int)len)
        off += snprintf(err + off, len - (size_t)off, " and %d more", missing - named);
    if (off < (int)len)
        off += snprintf(err + off, len - (size_t)off, " (of %d)", w->size);
    if (w->auth_failures > 0 && off < (int)len)
        snprintf(err + off, len - (size_t)off,
                 "; %d connection%s refused for a wrong key, the last from %s", w->auth_failures,
                 w->auth_failures > 1 ? "s" : "", w->auth_from);
    return -1;
}

/* A job's identity as messages name it. */
static const char *job_text(const char *job)
{
    return job[0] != '\0' ? job : "no job identity";
}

/* One JOIN: checked, recorded in joined[] (and the rank's pid in pids[])
 * and the peer table. */
static int take_join(tcp_world *w, tcp_conn **joined, int *pids, const tcp_msg *m, char *err,
                     size_t len)
{
    char from[80], other[80], job[CB_LAUNCH_JOBLEN + 1];
    conn_addr_text(m->conn, from, sizeof from);
    if (m->len < JOIN_FIXED || m->len != (size_t)JOIN_FIXED + m->data[JOIN_FIXED - 1] ||
        m->data[JOIN_FIXED - 1] >= CB_LAUNCH_JOBLEN)
        return fail(err, len, "a rank at %s sent a JOIN of %zu bytes", from, m->len);
    int rank = get32s(m->data), size = get32s(m->data + 4);
    int pid = get32s(m->data + 10 + TCP_MACHINE_LEN);
    snprintf(job, sizeof job, "%.*s", (int)m->data[JOIN_FIXED - 1], m->data + JOIN_FIXED);
    for (char *c = job; *c != '\0'; c++)   /* a stranger's text, printed */
        if (*c < 0x20 || *c == 0x7f)
            *c = '?';
    /* Another job's rank, on this port by chance or by a shared key:
     * never measured with. */
    if (strcmp(job, w->job) != 0)
        return fail(err, len, "rank %d at %s (pid %d) is of another job (%s) than rank 0 (%s): "
                    "two jobs on one rendezvous port; give each its own port "
                    "(NCCL_COLLBENCH_PORT) and key (NCCL_COLLBENCH_KEY)",
                    rank, from, pid, job_text(job), job_text(w->job));
    if (size != w->size)
        return fail(err, len, "rank %d at %s says WORLD_SIZE=%d; rank 0 has WORLD_SIZE=%d", rank,
                    from, size, w->size);
    if (rank != m->src || rank <= 0 || rank >= size)
        return fail(err, len, "a rank at %s claims rank %d, which is not one of 1..%d", from,
                    rank, size - 1);
    if (joined[rank] != NULL) {
        conn_addr_text(joined[rank], other, sizeof other);
        return fail(err, len, "two processes claim rank %d: pid %d at %s and pid %d at %s; "
                    "neither is taken", rank, pids[rank], other, pid, from);
    }
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    if (getpeername(m->conn->fd, (struct sockaddr *)&ss, &sl) != 0)
        return 0;   /* it went already: it is missing */
    unsigned char entry[ENTRY_LEN];
    put_entry(entry, &ss, (int)get16(m->data + 8), m->data + 10);
    get_entry(entry, &w->peers[rank]);
    joined[rank] = m->conn;
    pids[rank] = pid;
    return 0;
}

/* Where rank 0 listens (its rendezvous port and its own). */
typedef struct tcp_bind {
    int any;                        /* every interface */
    struct sockaddr_storage addr;   /* else this address */
    socklen_t len;
    char text[80];                  /* for messages */
} tcp_bind;

static int is_loopback(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
    return sa->sa_family == AF_INET6 &&
           IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)sa)->sin6_addr);
}

/* The loopback when every rank is on this machine (LOCAL_WORLD_SIZE is
 * WORLD_SIZE: -g N on one node, torchrun --standalone) and the rendezvous
 * address is a loopback one; else the rendezvous address when it is one of
 * this machine's (a bind to port 0 there succeeds); else every interface:
 * a loopback name on several nodes (Debian's 127.0.1.1 for the host name,
 * which the other nodes resolve elsewhere) or an address that is not this
 * machine's (a service's virtual address, a NAT). */
static void rendezvous_address(const cb_launch *l, tcp_bind *at)
{
    memset(at, 0, sizeof *at);
    at->any = 1;
    snprintf(at->text, sizeof at->text, "every interface");
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(l->addr, NULL, &hints, &res) != 0)
        return;
    int one_node = l->local_size > 0 && l->local_size == l->size;
    for (struct addrinfo *a = res; a != NULL && at->any; a = a->ai_next) {
        if (a->ai_addrlen > sizeof at->addr || (is_loopback(a->ai_addr) && !one_node))
            continue;
        int fd = cb_tcp_listen(a->ai_addr, a->ai_addrlen, 0, 1);
        if (fd < 0)
            continue;   /* not this machine's */
        close(fd);
        at->any = 0;
        memcpy(&at->addr, a->ai_addr, a->ai_addrlen);
        at->len = a->ai_addrlen;
        cb_tcp_addr_text(a->ai_addr, at->text, sizeof at->text);
    }
    freeaddrinfo(res);
}

/* How many rendezvous ports, from l->port, rank 0 may listen on. */
static int port_count(const cb_launch *l)
{
    return l->port_tries > 1 ? l->port_tries : 1;
}

/* Rank 0's rendezvous listener: the first of l's ports that is free. */
static int listen_rendezvous(tcp_world *w, const tcp_bind *at, const cb_launch *l, char *err,
                             size_t len)
{
    /* Every rank may knock at once: the backlog is never what keeps one out. */
    int backlog = w->size > SOMAXCONN ? w->size : SOMAXCONN;
    for (int i = 0; i < port_count(l); i++) {
        w->rv_port = l->port + i;
        w->rv_fd = cb_tcp_listen(at->any ? NULL : (const struct sockaddr *)&at->addr, at->len,
                                 w->rv_port, backlog);
        if (w->rv_fd >= 0)
            return 0;
        if (errno != EADDRINUSE)
            break;
    }
    int e = errno;
    if (port_count(l) > 1 && e == EADDRINUSE)
        return fail(err, len, "rank 0 cannot listen on any of the rendezvous ports %d-%d of %s: "
                    "%s (set NCCL_COLLBENCH_PORT to a free port)", l->port,
                    l->port + port_count(l) - 1, at->text, strerror(e));
    return fail(err, len, "rank 0 cannot listen on the rendezvous port %d of %s: %s (set "
                "NCCL_COLLBENCH_PORT to a free port)", w->rv_port, at->text, strerror(e));
}

static int serve_rendezvous(tcp_world *w, const tcp_bind *at, const cb_launch *l,
                            const unsigned char *machine, char *err, size_t len)
{
    if (room_for_fds(w->size, err, len) != 0 || listen_rendezvous(w, at, l, err, len) != 0)
        return -1;
    int port = w->rv_port;
    tcp_conn **joined = calloc((size_t)w->size, sizeof *joined);
    int *pids = calloc((size_t)w->size, sizeof *pids);
    unsigned char *table = malloc(TABLE_HEAD + (size_t)w->size * ENTRY_LEN);
    int rc = -1, count = 1;
    double deadline = cb_ctl_now() + w->timeout_s;
    if (joined == NULL || table == NULL || pids == NULL) {
        fail(err, len, "out of memory for %d ranks' rendezvous", w->size);
        goto out;
    }
    while (count < w->size) {
        tcp_msg *m = NULL;
        int got = cb_tcp_take(w, TCP_GROUP_RENDEZVOUS, TCP_RV_JOIN, -1, NULL, deadline, &m);
        if (got == 0) {
            missing_ranks(w, joined, port, err, len);
            rc = refuse_all(w, joined, NULL, err, 1);
            goto out;
        }
        int bad = take_join(w, joined, pids, m, err, len);
        if (bad != 0) {
            rc = refuse_all(w, joined, m->conn, err, 0);
            cb_tcp_msg_free(m);
            goto out;
        }
        count += joined[m->src] == m->conn;
        cb_tcp_msg_free(m);
    }
    /* Rank 0's own entry: where the others reached it. */
    struct sockaddr_storage self;
    socklen_t sl = sizeof self;
    memset(&self, 0, sizeof self);
    self.ss_family = AF_INET;
    ((struct sockaddr_in *)&self)->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (w->size > 1)
        getsockname(joined[1]->fd, (struct sockaddr *)&self, &sl);
    unsigned char entry[ENTRY_LEN];
    put_entry(entry, &self, listener_port(w->listen_fd), machine);
    get_entry(entry, &w->peers[0]);
    if (cb_random_bytes(w->run_nonce, TCP_NONCE_LEN) != 0) {
        fail(err, len, "no random bytes for the run's nonce");
        rc = refuse_all(w, joined, NULL, err, 0);
        goto out;
    }
    table[0] = 0;
    memcpy(table + 1, w->run_nonce, TCP_NONCE_LEN);
    put32s(table + 1 + TCP_NONCE_LEN, w->size);
    for (int r = 0; r < w->size; r++) {
        struct sockaddr_storage *a = &w->peers[r].addr;
        int p = ntohs(a->ss_family == AF_INET6 ? ((struct sockaddr_in6 *)a)->sin6_port
                                               : ((struct sockaddr_in *)a)->sin_port);
        put_entry(table + TABLE_HEAD + (size_t)r * ENTRY_LEN, a, p, w->peers[r].machine);
    }
    rc = 0;
    for (int r = 1; r < w->size; r++)
        if (cb_tcp_send(w, joined[r], TCP_GROUP_RENDEZVOUS, TCP_RV_TABLE, table,
                        TABLE_HEAD + (size_t)w->size * ENTRY_LEN) != 0)
            rc = fail(err, len, "rank %d went before it had the rendezvous' table", r);
out:
    free(table);
    free(pids);
    free(joined);
    return rc;
}

/* The rendezvous host's addresses at port 0, or NULL with err set. */
static struct addrinfo *root_addresses(const cb_launch *l, char *err, size_t len)
{
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    int gai = getaddrinfo(l->addr, NULL, &hints, &res);
    if (gai != 0) {
        fail(err, len, "the rendezvous host %s: %s", l->addr, gai_strerror(gai));
        return NULL;
    }
    return res;
}

static void set_port(struct sockaddr_storage *a, int port)
{
    if (a->ss_family == AF_INET6)
        ((struct sockaddr_in6 *)a)->sin6_port = htons((uint16_t)port);
    else
        ((struct sockaddr_in *)a)->sin_port = htons((uint16_t)port);
}

/* One knock at rank 0 on port: each of the host's addresses in turn,
 * each for 2 s at most. The connection, or NULL with *last the last error
 * and where the address tried; an address whose listener failed our key
 * (EACCES) is named in refused (where and refused: text_len bytes each). */
static tcp_conn *knock(tcp_world *w, const struct addrinfo *res, int port, double deadline,
                       char *where, char *refused, size_t text_len, int *last)
{
    for (const struct addrinfo *a = res; a != NULL; a = a->ai_next) {
        struct sockaddr_storage to;
        if (a->ai_addrlen > sizeof to)
            continue;
        memcpy(&to, a->ai_addr, a->ai_addrlen);
        set_port(&to, port);
        cb_tcp_addr_text((struct sockaddr *)&to, where, text_len);
        tcp_conn *c = cb_tcp_connect_start(w, (struct sockaddr *)&to, a->ai_addrlen, 0, 1);
        double by = cb_ctl_now() + 2.0;
        if (c != NULL && cb_tcp_connect_wait(w, c, by < deadline ? by : deadline) == 0)
            return c;
        *last = c != NULL ? c->err : errno;
        if (c != NULL)
            cb_tcp_conn_drop(w, c);
        if (*last == EACCES)
            snprintf(refused, text_len, "%s", where);
    }
    return NULL;
}

/* Connects to rank 0's rendezvous, retrying until the deadline (*late
 * set when that passed); w->rv_port is the port reached. Where rank 0 may
 * listen on a later one of l's ports (the first was taken), each is tried
 * in turn, and one whose listener fails our key (another job, another
 * program) is passed over from then on; with one port, that is an error at
 * once. */
static tcp_conn *reach_root(tcp_world *w, const cb_launch *l, double deadline, int *late,
                            char *err, size_t len)
{
    char where[128] = "", refused[128] = "";
    struct addrinfo *res = root_addresses(l, err, len);
    if (res == NULL)
        return NULL;
    int tries = port_count(l), last = ETIMEDOUT;
    unsigned passed_over = 0;   /* bit i: port + i failed our key */
    for (;;) {
        for (int i = 0; i < tries; i++) {
            if (passed_over >> i & 1u)
                continue;
            char now[128] = "";
            tcp_conn *c = knock(w, res, l->port + i, deadline, where, now, sizeof now, &last);
            if (c != NULL) {
                freeaddrinfo(res);
                w->rv_port = l->port + i;
                return c;
            }
            if (now[0] == '\0')
                continue;
            snprintf(refused, sizeof refused, "%s", now);
            passed_over |= 1u << i;
            if (tries == 1) {
                freeaddrinfo(res);
                fail(err, len, "rank 0 at %s (%s:%d) failed our key: is NCCL_COLLBENCH_KEY the "
                               "same on every rank?", refused, l->addr, l->port);
                return NULL;
            }
        }
        if (cb_ctl_now() >= deadline)
            break;
        cb_tcp_progress(w, 100);   /* rank 0 may not listen yet */
    }
    freeaddrinfo(res);
    *late = 1;
    if (tries == 1)
        fail(err, len, "rank %d could not reach rank 0 at %s:%d (%s) within %g s: %s", w->rank,
             l->addr, l->port, where, w->timeout_s, strerror(last));
    else
        fail(err, len, "rank %d could not reach rank 0 at %s, ports %d-%d, within %g s: %s%s%s%s",
             w->rank, l->addr, l->port, l->port + tries - 1, w->timeout_s, strerror(last),
             refused[0] != '\0' ? " (the listener at " : "", refused,
             refused[0] != '\0' ? " failed our key: is NCCL_COLLBENCH_KEY the same on every "
                                  "rank?)" : "");
    return NULL;
}

static int join_rendezvous(tcp_world *w, const cb_launch *l, const unsigned char *machine,
                           char *err, size_t len)
{
    double deadline = cb_ctl_now() + w->timeout_s;
    int late = 0;
    tcp_conn *root = reach_root(w, l, deadline, &late, err, len);
    if (root == NULL)
        return late ? TCP_RV_LATE : -1;
    /* Our listener on the address rank 0 sees us at, which the table
     * gives the others: the loopback when rank 0 is reached there. */
    struct sockaddr_storage self;
    socklen_t sl = sizeof self;
    if (getsockname(root->fd, (struct sockaddr *)&self, &sl) != 0 ||
        (w->listen_fd = cb_tcp_listen((struct sockaddr *)&self, sl, 0, SOMAXCONN)) < 0) {
        fail(err, len, "rank %d cannot listen on a port of its own: %s", w->rank,
             strerror(errno));
        cb_tcp_conn_drop(w, root);
        return -1;
    }
    unsigned char join[JOIN_MAX];
    size_t job_len = strlen(w->job);
    put32s(join, w->rank);
    put32s(join + 4, w->size);
    put16(join + 8, (unsigned)listener_port(w->listen_fd));
    memcpy(join + 10, machine, TCP_MACHINE_LEN);
    put32s(join + 10 + TCP_MACHINE_LEN, (int32_t)getpid());
    join[JOIN_FIXED - 1] = (unsigned char)job_len;
    memcpy(join + JOIN_FIXED, w->job, job_len);
    tcp_msg *m = NULL;
    int rc = -1, got = -1;
    if (cb_tcp_send(w, root, TCP_GROUP_RENDEZVOUS, TCP_RV_JOIN, join, JOIN_FIXED + job_len) == 0)
        /* A little past our own deadline: rank 0's word on who is missing
         * comes at its own, which may be later than ours. */
        got = cb_tcp_take(w, TCP_GROUP_RENDEZVOUS, TCP_RV_TABLE, 0, root, deadline + 3.0, &m);
    size_t want = TABLE_HEAD + (size_t)w->size * ENTRY_LEN;
    if (got < 0)
        fail(err, len, "rank 0 at %s:%d closed the rendezvous before sending its table",
             l->addr, w->rv_port);
    else if (got == 0)
        late = fail(err, len, "rank 0 at %s:%d sent no table within %g s", l->addr, w->rv_port,
                    w->timeout_s) != 0;
    else if (m->len >= 1 && (m->data[0] == 1 || m->data[0] == 2))
        late = fail(err, len, "rank 0 refused the rendezvous: %.*s", (int)(m->len - 1),
                    m->data + 1) != 0 && m->data[0] == 2;
    else if (m->len != want || get32s(m->data + 1 + TCP_NONCE_LEN) != w->size)
        fail(err, len, "rank 0 sent a table of %zu bytes, not %zu", m->len, want);
    else
        rc = 0;
    for (int r = 0; rc == 0 && r < w->size; r++)
        if (get_entry(m->data + TABLE_HEAD + (size_t)r * ENTRY_LEN, &w->peers[r]) != 0)
            rc = fail(err, len, "rank 0's table has a bad address for rank %d", r);
    if (rc == 0)
        memcpy(w->run_nonce, m->data + 1, TCP_NONCE_LEN);
    cb_tcp_msg_free(m);
    cb_tcp_conn_drop(w, root);
    return rc != 0 && late ? TCP_RV_LATE : rc;
}

int cb_tcp_rendezvous(const cb_launch *l, double timeout_s, tcp_world **out, char *err,
                      size_t len)
{
    *out = NULL;
    if (l->rank < 0 || l->size < 1 || l->rank >= l->size)
        return fail(err, len, "the TCP control plane needs a rank and a size (launch mode %s)",
                    cb_launch_mode_name(l->mode));
    if (l->size > 1 && (l->port < 1 || l->port > 65535))
        return fail(err, len, "the rendezvous port %d is not one of 1..65535", l->port);
    tcp_world *w = cb_tcp_world_new(l->rank, l->size, l->key, timeout_s);
    if (w == NULL)
        return fail(err, len, "out of memory for a world of %d ranks", l->size);
    unsigned char machine[TCP_MACHINE_LEN];
    machine_identity(machine);
    memcpy(w->peers[l->rank].machine, machine, TCP_MACHINE_LEN);
    snprintf(w->job, sizeof w->job, "%s", l->job);
    int rc = 0;
    tcp_bind at;
    if (l->size > 1 && l->rank == 0) {
        rendezvous_address(l, &at);
        w->listen_fd = cb_tcp_listen(at.any ? NULL : (const struct sockaddr *)&at.addr, at.len, 0,
                                     SOMAXCONN);
        if (w->listen_fd < 0)
            rc = fail(err, len, "rank 0 cannot listen on a port of its own on %s: %s", at.text,
                      strerror(errno));
        else
            rc = serve_rendezvous(w, &at, l, machine, err, len);
    } else if (l->size > 1) {
        rc = join_rendezvous(w, l, machine, err, len);
    } else if (cb_random_bytes(w->run_nonce, TCP_NONCE_LEN) != 0) {
        rc = fail(err, len, "no random bytes for the run's nonce");
    }
    /* The rendezvous' connections and rank 0's port are done with. */
    for (tcp_msg *m = NULL; cb_tcp_take(w, TCP_GROUP_RENDEZVOUS, TCP_RV_JOIN, -1, NULL, 0, &m) == 1;)
        cb_tcp_msg_free(m);
    for (int i = w->nconns - 1; i >= 0; i--)
        if (w->conns[i]->rendezvous)
            cb_tcp_conn_drop(w, w->conns[i]);
    if (w->rv_fd >= 0)
        close(w->rv_fd);
    w->rv_fd = -1;
    if (rc != 0)
        cb_tcp_world_release(w);
    else
        *out = w;
    return rc;
}
