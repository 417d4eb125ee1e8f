/*
 * The TCP plane's operations (cb_ctl_ops "tcp") over groups of the world's
 * ranks. Every collective goes over a binomial tree: bcast from its root,
 * allreduce as a reduce to group rank 0 then a bcast, gather up the tree
 * to its root, allgather as a gather then a bcast. A rank talks to at most
 * log2(N) + 1 others per collective, so each holds O(log N) connections
 * and rank 0 is no star's hub: designed for some ten thousand ranks (fds,
 * and log2 N rounds of latency); the rendezvous alone holds N at rank 0.
 * Messages carry (group id, tag, source): a collective's tag is the
 * group's count of collectives with the top bit set, and its phase, so
 * groups and point-to-point streams never mix.
 */
#include "control/tcp_int.h"
#include "control/local.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <unistd.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control/control.h"

typedef struct tcp_group {
    cb_ctl ctl;
    tcp_world *w;
    uint64_t id;
    int *members;          /* world ranks, by group rank */
    uint64_t colls;        /* collectives started */
    uint64_t splits;       /* splits started */
    int is_world;
} tcp_group;

enum { PHASE_UP = 0, PHASE_DOWN = 1 };

struct cb_ctl_req {
    tcp_group *g;
    uint64_t tag;
    int count;
    cb_ctl_type type;
    cb_ctl_op op;
    unsigned char *acc;    /* the caller's out: the running result */
    size_t bytes;
    int mask;              /* the reduce's next tree level */
    int down;              /* in the bcast */
};

static const cb_ctl_ops tcp_ops;

static tcp_group *group_of(cb_ctl *c)
{
    return c->impl;
}

static uint64_t coll_tag(tcp_group *g, int phase)
{
    return TCP_TAG_COLL | (g->colls++ << 1) | (uint64_t)phase;
}

static int lowbit(int v)
{
    return v & -v;
}

static int send_to(tcp_group *g, int grank, uint64_t tag, const void *data, size_t len)
{
    int dest = g->members[grank];
    if (dest == g->w->rank) {   /* to ourselves: straight into the queue */
        tcp_msg *m = calloc(1, sizeof *m);
        unsigned char *copy = malloc(len + 1);
        if (m == NULL || copy == NULL) {
            free(m);
            free(copy);
            return -1;
        }
        memcpy(copy, data, len);
        *m = (tcp_msg){NULL, g->id, tag, dest, NULL, len, copy};
        if (g->w->queue_tail != NULL)
            g->w->queue_tail->next = m;
        else
            g->w->queue = m;
        g->w->queue_tail = m;
        return 0;
    }
    return cb_tcp_send(g->w, cb_tcp_link(g->w, dest), g->id, tag, data, len);
}

/* Exactly len bytes from group rank src: 1, 0 not yet (when !block), -1. */
static int recv_from(tcp_group *g, int grank, uint64_t tag, void *data, size_t len, int block)
{
    tcp_msg *m = NULL;
    int got = cb_tcp_take(g->w, g->id, tag, g->members[grank], NULL, block ? -1.0 : 0.0, &m);
    if (got != 1)
        return got;
    int ok = m->len == len;
    if (ok && len > 0)
        memcpy(data, m->data, len);
    cb_tcp_msg_free(m);
    return ok ? 1 : -1;
}

static size_t type_size(cb_ctl_type t)
{
    switch (t) {
    case CB_CTL_BYTE:
        return 1;
    case CB_CTL_INT:
        return sizeof(int);
    case CB_CTL_DOUBLE:
        return sizeof(double);
    case CB_CTL_U64:
        return sizeof(uint64_t);
    }
    return 0;
}

#define COMBINE(T, acc, in, n, op)                                                    \
    do {                                                                              \
        T *a_ = (T *)(void *)(acc);                                                   \
        const T *b_ = (const T *)(const void *)(in);                                  \
        for (int i_ = 0; i_ < (n); i_++) {                                            \
            T x_ = a_[i_], y_ = b_[i_];                                               \
            a_[i_] = (op) == CB_CTL_SUM   ? (T)(x_ + y_)                              \
                     : (op) == CB_CTL_MIN ? (y_ < x_ ? y_ : x_)                       \
                     : (op) == CB_CTL_MAX ? (y_ > x_ ? y_ : x_)                       \
                                          : (T)(x_ != 0 && y_ != 0);                  \
        }                                                                             \
    } while (0)

static void combine(unsigned char *acc, const unsigned char *in, int n, cb_ctl_type t,
                    cb_ctl_op op)
{
    switch (t) {
    case CB_CTL_BYTE:
        COMBINE(unsigned char, acc, in, n, op);
        break;
    case CB_CTL_INT:
        COMBINE(int, acc, in, n, op);
        break;
    case CB_CTL_DOUBLE:
        COMBINE(double, acc, in, n, op);
        break;
    case CB_CTL_U64:
        COMBINE(uint64_t, acc, in, n, op);
        break;
    }
}

/* The reduction's progress: up the tree to group rank 0, then down. One
 * buffer for what a child sends. 1 done, 0 not yet (only when !block), -1. */
static int reduce_step(cb_ctl_req *r, int block)
{
    tcp_group *g = r->g;
    int n = g->ctl.size, me = g->ctl.rank;
    unsigned char *in = NULL;
    int rc = 1;
    if (!r->down && r->bytes > 0 && (in = malloc(r->bytes)) == NULL)
        return -1;
    while (!r->down && r->mask < n) {
        if (me & r->mask) {   /* our subtree is whole: up to the parent */
            if (send_to(g, me - r->mask, r->tag, r->acc, r->bytes) != 0) {
                rc = -1;
                goto out;
            }
            r->down = 1;
            break;
        }
        if (me + r->mask < n) {
            int got = recv_from(g, me + r->mask, r->tag, in, r->bytes, block);
            if (got != 1) {
                rc = got;
                goto out;
            }
            combine(r->acc, in, r->count, r->type, r->op);
        }
        r->mask <<= 1;
    }
    if (!r->down) {
        r->down = 1;   /* group rank 0: the result is whole */
    } else if (me != 0) {
        int got = recv_from(g, me - lowbit(me), r->tag | PHASE_DOWN, r->acc, r->bytes, block);
        if (got != 1) {
            rc = got;
            goto out;
        }
    }
    /* Down to the children: me + m for each m below our lowest bit. */
    for (int m = me != 0 ? lowbit(me) >> 1 : (r->mask >> 1 ? r->mask >> 1 : 0); m > 0; m >>= 1)
        if (me + m < n && send_to(g, me + m, r->tag | PHASE_DOWN, r->acc, r->bytes) != 0)
            rc = -1;
out:
    free(in);
    return rc;
}

static int start_reduce(cb_ctl *c, const void *in, void *out, int count, cb_ctl_type type,
                        cb_ctl_op op, cb_ctl_req *r)
{
    size_t bytes = (size_t)(count > 0 ? count : 0) * type_size(type);
    if (count < 0 || bytes > TCP_PAYLOAD_MAX)
        return -1;
    if (in != CB_CTL_IN_PLACE && in != out && bytes > 0)
        memcpy(out, in, bytes);
    if (op == CB_CTL_LAND)   /* 0 or 1 even on a rank alone */
        combine(out, out, count, type, op);
    tcp_group *g = group_of(c);
    *r = (cb_ctl_req){g, coll_tag(g, PHASE_UP), count, type, op, out, bytes, 1, 0};
    return 0;
}

static int tcp_allreduce(cb_ctl *c, const void *in, void *out, int count, cb_ctl_type type,
                         cb_ctl_op op)
{
    cb_ctl_req r;
    if (start_reduce(c, in, out, count, type, op, &r) != 0)
        return -1;
    return reduce_step(&r, 1) == 1 ? 0 : -1;
}

static int tcp_iallreduce(cb_ctl *c, const void *in, void *out, int count, cb_ctl_type type,
                          cb_ctl_op op, cb_ctl_req **req)
{
    *req = malloc(sizeof **req);
    if (*req == NULL || start_reduce(c, in, out, count, type, op, *req) != 0) {
        free(*req);
        *req = NULL;
        return -1;
    }
    return 0;
}

static int tcp_test(cb_ctl_req *req, int *done)
{
    int rc = reduce_step(req, 0);
    *done = rc != 0;
    if (rc != 0)
        free(req);
    return rc < 0 ? -1 : 0;
}

static int tcp_barrier(cb_ctl *c)
{
    int one = 1, all = 0;
    return tcp_allreduce(c, &one, &all, 1, CB_CTL_INT, CB_CTL_LAND);
}

/* Bcast over the binomial tree of ranks relative to root. */
static int bcast_tagged(tcp_group *g, void *buf, size_t bytes, int root, uint64_t tag)
{
    int n = g->ctl.size, vr = (g->ctl.rank - root + n) % n, m = 1;
    while (m < n && !(vr & m))
        m <<= 1;
    if (vr != 0 && recv_from(g, (vr - m + root) % n, tag, buf, bytes, 1) != 1)
        return -1;
    for (m >>= 1; m > 0; m >>= 1)
        if (vr + m < n && send_to(g, (vr + m + root) % n, tag, buf, bytes) != 0)
            return -1;
    return 0;
}

static int tcp_bcast(cb_ctl *c, void *buf, size_t bytes, int root)
{
    tcp_group *g = group_of(c);
    if (root < 0 || root >= c->size)
        return -1;
    return bcast_tagged(g, buf, bytes, root, coll_tag(g, PHASE_DOWN));
}

/* Gather up the binomial tree: a subtree's blocks travel together, in
 * the order of ranks relative to root; root puts them in place. */
static int gather_tagged(tcp_group *g, const void *in, size_t bytes, void *out, int root,
                         uint64_t tag)
{
    int n = g->ctl.size, vr = (g->ctl.rank - root + n) % n;
    int span = vr == 0 ? n : (lowbit(vr) < n - vr ? lowbit(vr) : n - vr);
    unsigned char *buf = malloc((size_t)span * bytes + 1);
    int rc = 0, have = 1;
    if (buf == NULL)
        return -1;
    if (bytes > 0)
        memcpy(buf, in, bytes);
    for (int m = 1; m < n && rc == 0; m <<= 1) {
        if (vr & m) {
            rc = send_to(g, (vr - m + root) % n, tag, buf, (size_t)have * bytes);
            break;
        }
        if (vr + m < n) {
            int child = m < n - vr - m ? m : n - vr - m;
            rc = recv_from(g, (vr + m + root) % n, tag, buf + (size_t)m * bytes,
                           (size_t)child * bytes, 1) == 1 ? 0 : -1;
            have = m + child;
        }
    }
    if (rc == 0 && vr == 0)
        for (int i = 0; i < n && bytes > 0; i++)
            memcpy((unsigned char *)out + (size_t)((i + root) % n) * bytes,
                   buf + (size_t)i * bytes, bytes);
    free(buf);
    return rc;
}

static int tcp_gather(cb_ctl *c, const void *in, size_t bytes, void *out, int root)
{
    tcp_group *g = group_of(c);
    if (root < 0 || root >= c->size)
        return -1;
    return gather_tagged(g, in, bytes, out, root, coll_tag(g, PHASE_UP));
}

static int tcp_allgather(cb_ctl *c, const void *in, size_t bytes, void *out)
{
    tcp_group *g = group_of(c);
    uint64_t tag = coll_tag(g, PHASE_UP);
    if (gather_tagged(g, in, bytes, out, 0, tag) != 0)
        return -1;
    return bcast_tagged(g, out, (size_t)c->size * bytes, 0, tag | PHASE_DOWN);
}

static int tcp_send(cb_ctl *c, const void *buf, size_t bytes, int dest, int tag)
{
    if (dest < 0 || dest >= c->size || tag < 0)
        return -1;
    return send_to(group_of(c), dest, (uint64_t)tag, buf, bytes);
}

static int tcp_recv(cb_ctl *c, void *buf, size_t bytes, int src, int tag)
{
    tcp_group *g = group_of(c);
    tcp_msg *m = NULL;
    if (src < 0 || src >= c->size || tag < 0)
        return -1;
    if (cb_tcp_take(g->w, g->id, (uint64_t)tag, g->members[src], NULL, -1.0, &m) != 1)
        return -1;
    /* Fewer bytes than the buffer holds are fine (MPI_Recv's count is a
     * bound); more are not. */
    int ok = m->len <= bytes;
    if (ok && m->len > 0)
        memcpy(buf, m->data, m->len);
    cb_tcp_msg_free(m);
    return ok ? 0 : -1;
}

static cb_ctl *group_new(tcp_world *w, uint64_t id, int *members, int size, int rank)
{
    tcp_group *g = calloc(1, sizeof *g);
    if (g == NULL)
        return NULL;
    g->ctl = (cb_ctl){.ops = &tcp_ops, .rank = rank, .size = size, .impl = g};
    g->w = w;
    g->id = id;
    g->members = members;
    w->refs++;
    return &g->ctl;
}

/* The world's handle (a group of every rank, id 0), or NULL without memory. */
static cb_ctl *world_ctl(tcp_world *w)
{
    int *members = malloc((size_t)w->size * sizeof *members);
    if (members == NULL)
        return NULL;
    for (int r = 0; r < w->size; r++)
        members[r] = r;
    cb_ctl *c = group_new(w, 0, members, w->size, w->rank);
    if (c == NULL) {
        free(members);
        return NULL;
    }
    ((tcp_group *)c->impl)->is_world = 1;
    w->refs--;   /* the world's handle holds the reference it was made with */
    return c;
}

/* The child's id, alike on every member: the parent's id, its count of
 * splits and the color, hashed. */
static uint64_t child_id(const tcp_group *g, int color)
{
    unsigned char in[20], d[CB_SHA256_LEN];
    uint64_t id = 0;
    for (int i = 0; i < 8; i++) {
        in[i] = (unsigned char)(g->id >> (56 - 8 * i));
        in[8 + i] = (unsigned char)(g->splits >> (56 - 8 * i));
    }
    for (int i = 0; i < 4; i++)
        in[16 + i] = (unsigned char)((uint32_t)color >> (24 - 8 * i));
    cb_sha256 s;
    cb_sha256_init(&s);
    cb_sha256_update(&s, in, sizeof in);
    cb_sha256_final(&s, d);
    for (int i = 0; i < 8; i++)
        id = id << 8 | d[i];
    /* Never the world's 0 nor the rendezvous' all-ones. */
    return id == 0 || id == TCP_GROUP_RENDEZVOUS ? 1 : id;
}

static int tcp_split(cb_ctl *c, int color, int key, cb_ctl **out)
{
    tcp_group *g = group_of(c);
    int n = c->size, mine[2] = {color, key};
    int *all = malloc((size_t)n * sizeof mine), *members = malloc((size_t)n * sizeof *members);
    *out = NULL;
    if (all == NULL || members == NULL || tcp_allgather(c, mine, sizeof mine, all) != 0) {
        free(all);
        free(members);
        return -1;
    }
    uint64_t id = child_id(g, color);
    g->splits++;
    int count = 0, rank = -1;
    /* Members of our color by (key, parent rank): an insertion sort, stable. */
    for (int r = 0; r < n && color >= 0; r++) {
        if (all[2 * r] != color)
            continue;
        int at = count++;
        while (at > 0 && all[2 * members[at - 1] + 1] > all[2 * r + 1]) {
            members[at] = members[at - 1];
            at--;
        }
        members[at] = r;
    }
    for (int i = 0; i < count; i++) {
        rank = members[i] == c->rank ? i : rank;
        members[i] = g->members[members[i]];
    }
    free(all);
    if (color < 0) {
        free(members);
        return 0;
    }
    *out = group_new(g->w, id, members, count, rank);
    if (*out == NULL) {
        free(members);
        return -1;
    }
    (*out)->guard = c->guard;
    return 0;
}

static int tcp_split_node(cb_ctl *c, int key, cb_ctl **out)
{
    tcp_group *g = group_of(c);
    const unsigned char *me = g->w->peers[g->w->rank].machine;
    int color = 0;
    /* The color: the group rank of this machine's first member. */
    while (memcmp(g->w->peers[g->members[color]].machine, me, TCP_MACHINE_LEN) != 0)
        color++;
    return tcp_split(c, color, key, out);
}

static int tcp_secret(cb_ctl *c, const char *label, unsigned char *out, size_t len)
{
    tcp_world *w = group_of(c)->w;
    unsigned char salt[TCP_NONCE_LEN + 4], block[CB_SHA256_LEN];
    memcpy(salt, w->run_nonce, TCP_NONCE_LEN);
    /* HMAC(key, label || nonce) for the first 32 bytes; with a block
     * counter after the nonce for more. */
    for (uint32_t i = 0; len > 0; i++) {
        for (int b = 0; b < 4; b++)
            salt[TCP_NONCE_LEN + b] = (unsigned char)(i >> (24 - 8 * b));
        cb_hmac_sha256(w->key, sizeof w->key, label, strlen(label), salt,
                       i == 0 ? TCP_NONCE_LEN : sizeof salt, block);
        size_t n = len < sizeof block ? len : sizeof block;
        memcpy(out, block, n);
        out += n;
        len -= n;
    }
    return 0;
}

static void tcp_describe(cb_ctl *c, char *buf, size_t len)
{
    snprintf(buf, len, "%s", group_of(c)->w->desc);
}

static void tcp_free(cb_ctl *c)
{
    tcp_group *g = group_of(c);
    tcp_world *w = g->w;
    if (g->is_world)
        cb_tcp_close_all(w);
    free(g->members);
    free(g);
    cb_tcp_world_release(w);
}

/* LOST's payload: the rank lost and the rank that saw it go (4 bytes
 * each, big-endian), then the lost rank's host, printable text. */
#define LOST_HEAD 8
#define LOST_HOST 64

/* Peer p's host as its address in the table, without the port. */
static void host_of(const tcp_peer *p, char *out, size_t len)
{
    const struct sockaddr *sa = (const struct sockaddr *)&p->addr;
    const struct sockaddr_in6 *a6 = (const void *)sa;
    struct in_addr v4;
    if (sa->sa_family == AF_INET6 && IN6_IS_ADDR_V4MAPPED(&a6->sin6_addr)) {
        memcpy(&v4, a6->sin6_addr.s6_addr + 12, sizeof v4);
        if (inet_ntop(AF_INET, &v4, out, (socklen_t)len) != NULL)
            return;
    } else if (sa->sa_family == AF_INET6) {
        if (inet_ntop(AF_INET6, &a6->sin6_addr, out, (socklen_t)len) != NULL)
            return;
    } else if (sa->sa_family == AF_INET) {
        if (inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, out,
                      (socklen_t)len) != NULL)
            return;
    }
    snprintf(out, len, "unknown host");
}

/* The first well-formed LOST a peer sent this rank: 1 with its fields. */
static int told_lost(tcp_world *w, int *lost, int *seer, char *host, size_t len)
{
    int found = 0;
    for (tcp_msg *m = NULL;
         cb_tcp_take(w, TCP_GROUP_RENDEZVOUS, TCP_RV_LOST, -1, NULL, 0, &m) == 1;
         cb_tcp_msg_free(m)) {
        const unsigned char *d = m->data;
        size_t n = m->len - LOST_HEAD;
        if (found || m->len < LOST_HEAD || n >= len)
            continue;
        uint32_t r = (uint32_t)d[0] << 24 | (uint32_t)d[1] << 16 | (uint32_t)d[2] << 8 | d[3];
        uint32_t s = (uint32_t)d[4] << 24 | (uint32_t)d[5] << 16 | (uint32_t)d[6] << 8 | d[7];
        size_t i = 0;
        while (i < n && d[LOST_HEAD + i] >= 0x20 && d[LOST_HEAD + i] < 0x7f)
            i++;
        if (r >= (uint32_t)w->size || s >= (uint32_t)w->size || i < n)
            continue;
        *lost = (int)r;
        *seer = (int)s;
        memcpy(host, d + LOST_HEAD, n);
        host[n] = '\0';
        found = 1;
    }
    return found;
}

/* Names the rank lost: the one a peer said it lost (the cause: that peer
 * then ended), else the first peer this rank found gone; and tells every
 * peer still connected whose socket has room (never waiting on one). */
static int tcp_lost_peer(const cb_ctl *c, char *buf, size_t len)
{
    tcp_world *w = ((const tcp_group *)c->impl)->w;
    int lost = -1, seer = w->rank;
    char host[LOST_HOST];
    if (w->closed)
        return -1;
    if (!told_lost(w, &lost, &seer, host, sizeof host)) {
        if (w->first_gone == 0)
            return -1;
        lost = w->first_gone - 1;
        host_of(&w->peers[lost], host, sizeof host);
    }
    if (seer == w->rank)
        snprintf(buf, len, "rank %d (%s) ended or its connection broke", lost, host);
    else
        snprintf(buf, len, "rank %d (%s) ended or its connection broke, as rank %d saw", lost,
                 host, seer);
    unsigned char msg[LOST_HEAD + LOST_HOST];
    size_t n = strlen(host);
    for (int b = 0; b < 4; b++) {
        msg[b] = (unsigned char)((unsigned)lost >> (24 - 8 * b));
        msg[4 + b] = (unsigned char)((unsigned)seer >> (24 - 8 * b));
    }
    memcpy(msg + LOST_HEAD, host, n);
    for (int i = 0; i < w->nconns; i++) {
        tcp_conn *k = w->conns[i];
        struct pollfd pf = {.fd = k->fd, .events = POLLOUT};
        if (k->state == TCP_OPEN && !k->rendezvous && k->peer != lost && poll(&pf, 1, 0) == 1 &&
            (pf.revents & POLLOUT))
            cb_tcp_send(w, k, TCP_GROUP_RENDEZVOUS, TCP_RV_LOST, msg, LOST_HEAD + n);
    }
    return 0;
}

/* No rank can be reached to end the others (they wait inside NCCL, not in
 * this plane): the launcher does it. A -g parent kills them at once on
 * word from this rank; torchrun's agent stops every worker once one has
 * failed. */
static void tcp_abort(cb_ctl *c, int code)
{
    (void)c;
    cb_local_end_job();
    _exit(code);
}

static const cb_ctl_ops tcp_ops = {
    .name = "tcp",
    .barrier = tcp_barrier,
    .bcast = tcp_bcast,
    .allreduce = tcp_allreduce,
    .gather = tcp_gather,
    .allgather = tcp_allgather,
    .send = tcp_send,
    .recv = tcp_recv,
    .iallreduce = tcp_iallreduce,
    .test = tcp_test,
    .split = tcp_split,
    .split_node = tcp_split_node,
    .secret = tcp_secret,
    .describe = tcp_describe,
    .free = tcp_free,
    .abort = tcp_abort,
    .lost_peer = tcp_lost_peer,
    .fatal_errors = 1,
};

int cb_ctl_tcp_world(const cb_launch *l, double timeout_s, cb_ctl **out, char *err, size_t len)
{
    tcp_world *w = NULL;
    *out = NULL;
    int rc = cb_tcp_rendezvous(l, timeout_s, &w, err, len);
    if (rc != 0)
        return rc;
    char how[160];
    cb_launch at = *l;   /* the port rank 0 listened on, of l's tries */
    if (l->size > 1)
        at.port = w->rv_port;
    cb_launch_describe(&at, how, sizeof how);
    snprintf(w->desc, sizeof w->desc, "none (%s)", how);
    if ((*out = world_ctl(w)) == NULL) {
        snprintf(err, len, "out of memory for the world's handle");
        cb_tcp_world_release(w);
        return -1;
    }
    (*out)->unkeyed = !l->keyed;
    return 0;
}
