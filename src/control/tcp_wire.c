/*
 * The TCP control plane's wire: connections, their handshake, frames and
 * their MACs, and the one progress engine that reads every socket and
 * queues what comes until it is asked for (tcp_int.h).
 *
 * The handshake on every connection, under the launch key K:
 *   connector -> HELLO      nonce_c; src: its rank; tag: the rank it wants
 *   acceptor  -> CHALLENGE  nonce_a, HMAC(K, "acceptor" nonce_c nonce_a ranks)
 *   connector -> PROOF      HMAC(K, "connector" nonce_c nonce_a ranks)
 * then each direction's frames carry HMAC(K_dir, header || payload) with
 * K_dir = HMAC(K, "c2a" or "a2c" nonce_c nonce_a ranks) and a sequence number
 * from 1: no stranger joins, injects, replays or reflects a frame.
 */
#define _GNU_SOURCE   /* accept4 */
#include "control/tcp_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>


void cb_tcp_addr_text(const struct sockaddr *sa, char *out, size_t len)
{
    char host[INET6_ADDRSTRLEN] = "?";
    int port = 0;
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *a = (const void *)sa;
        inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
        port = ntohs(a->sin_port);
        snprintf(out, len, "%s:%d", host, port);
    } else if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const void *)sa;
        inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
        port = ntohs(a->sin6_port);
        snprintf(out, len, "[%s]:%d", host, port);
    } else {
        snprintf(out, len, "(an address of family %d)", sa->sa_family);
    }
}

static void set_socket_options(int fd)
{
    int one = 1;
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    /* Small messages that wait on each other: no Nagle delay. */
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/* A listener bound to a (its port replaced by port); dual: an IPv6 one
 * that takes IPv4 too. */
static int listen_at(struct sockaddr_storage *a, socklen_t alen, int port, int backlog, int dual)
{
    int one = 1, zero = 0, fd = socket(a->ss_family, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    if (a->ss_family == AF_INET6)
        ((struct sockaddr_in6 *)a)->sin6_port = htons((uint16_t)port);
    else
        ((struct sockaddr_in *)a)->sin_port = htons((uint16_t)port);
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if ((dual && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero) != 0) ||
        bind(fd, (struct sockaddr *)a, alen) != 0 || listen(fd, backlog) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    set_socket_options(fd);
    return fd;
}

int cb_tcp_listen(const struct sockaddr *at, socklen_t atlen, int port, int backlog)
{
    struct sockaddr_storage a;
    memset(&a, 0, sizeof a);
    if (at != NULL) {
        if (atlen > sizeof a) {
            errno = EINVAL;
            return -1;
        }
        memcpy(&a, at, atlen);
        return listen_at(&a, atlen, port, backlog, 0);
    }
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&a;
    a6->sin6_family = AF_INET6;
    a6->sin6_addr = in6addr_any;
    int fd = listen_at(&a, sizeof *a6, port, backlog, 1);
    if (fd >= 0 || (errno != EAFNOSUPPORT && errno != EADDRNOTAVAIL))
        return fd;
    memset(&a, 0, sizeof a);
    struct sockaddr_in *a4 = (struct sockaddr_in *)&a;
    a4->sin_family = AF_INET;
    a4->sin_addr.s_addr = htonl(INADDR_ANY);
    return listen_at(&a, sizeof *a4, port, backlog, 0);
}

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (24 - 8 * i));
}

static void put64(unsigned char *p, uint64_t v)
{
    put32(p, (uint32_t)(v >> 32));
    put32(p + 4, (uint32_t)v);
}

static uint32_t get32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t get64(const unsigned char *p)
{
    return (uint64_t)get32(p) << 32 | get32(p + 4);
}

static void encode_head(const tcp_head *h, unsigned char *p)
{
    put32(p, TCP_MAGIC);
    put32(p + 4, h->kind);
    put64(p + 8, h->group);
    put64(p + 16, h->tag);
    put32(p + 24, (uint32_t)h->src);
    put32(p + 28, h->len);
    put64(p + 32, h->seq);
}

static int grow_conns(tcp_world *w)
{
    if (w->nconns < w->cap_conns)
        return 0;
    int cap = w->cap_conns ? 2 * w->cap_conns : 16;
    tcp_conn **c = realloc(w->conns, (size_t)cap * sizeof *c);
    if (c == NULL)
        return -1;
    w->conns = c;
    w->cap_conns = cap;
    return 0;
}

static tcp_conn *conn_add(tcp_world *w, int fd, enum tcp_state state)
{
    tcp_conn *c = grow_conns(w) == 0 ? calloc(1, sizeof *c) : NULL;
    if (c == NULL) {
        close(fd);
        return NULL;
    }
    c->fd = fd;
    c->state = state;
    c->peer = -1;
    c->by = cb_ctl_now() + TCP_HANDSHAKE_S;
    w->conns[w->nconns++] = c;
    return c;
}

/* Peer p is gone; the first one is the one a failure names. */
static void peer_gone(tcp_world *w, int p)
{
    if (!w->peers[p].gone && w->first_gone == 0)
        w->first_gone = p + 1;
    w->peers[p].gone = 1;
}

/* The connection is over: its socket closed, its peer gone when it was
 * the data connection of one. It stays listed until dropped. */
static void conn_close(tcp_world *w, tcp_conn *c, int err)
{
    if (c->state == TCP_CLOSED)
        return;
    if (c->state == TCP_OPEN && !c->rendezvous && c->peer >= 0 && c->peer < w->size)
        peer_gone(w, c->peer);
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    c->state = TCP_CLOSED;
    c->err = err;
    free(c->payload);
    c->payload = NULL;
}

void cb_tcp_conn_drop(tcp_world *w, tcp_conn *c)
{
    conn_close(w, c, 0);
    for (int i = 0; i < w->nconns; i++)
        if (w->conns[i] == c) {
            w->conns[i] = w->conns[--w->nconns];
            break;
        }
    for (int p = 0; p < w->size; p++)
        if (w->peers[p].out == c)
            w->peers[p].out = NULL;
    free(c);
}

static void progress(tcp_world *w, int ms, int out_fd);
static void read_conn(tcp_world *w, tcp_conn *c);

/* Writes all of len bytes, running the engine while the socket is full. */
static int write_all(tcp_world *w, tcp_conn *c, const unsigned char *p, size_t len)
{
    while (len > 0) {
        if (c->state == TCP_CLOSED)
            return -1;
        ssize_t n = send(c->fd, p, len, MSG_NOSIGNAL);
        if (n > 0) {
            p += n;
            len -= (size_t)n;
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            /* Read meanwhile: a peer writing to us at the same time must
             * not wait on us while we wait on it. */
            progress(w, 100, c->fd);
        } else {
            /* Read first what the peer sent before it ended (LOST, tcp_ops.c);
             * open only: a handshake's reply is written while its frame is handled. */
            int err = n < 0 ? errno : EPIPE;
            if (c->state == TCP_OPEN)
                read_conn(w, c);
            conn_close(w, c, err);
            return -1;
        }
    }
    return 0;
}

/* One frame: header, its MAC under key (the connection's own once open),
 * payload. */
static int send_frame(tcp_world *w, tcp_conn *c, uint32_t kind, uint64_t group, uint64_t tag,
                      const void *data, size_t len)
{
    if (len > TCP_PAYLOAD_MAX)
        return -1;
    tcp_head h = {kind, group, tag, w->rank, (uint32_t)len, 0};
    if (c->state == TCP_OPEN)
        h.seq = ++c->seq_out;
    unsigned char frame[TCP_FRAME_HEAD];
    encode_head(&h, frame);
    cb_hmac_sha256(c->state == TCP_OPEN ? c->key_out : w->key, TCP_MAC_LEN, frame, TCP_HEAD_LEN,
                   data, len, frame + TCP_HEAD_LEN);
    if (write_all(w, c, frame, sizeof frame) != 0)
        return -1;
    return len > 0 ? write_all(w, c, data, len) : 0;
}

int cb_tcp_send(tcp_world *w, tcp_conn *c, uint64_t group, uint64_t tag, const void *data,
                size_t len)
{
    if (c == NULL || c->state != TCP_OPEN)
        return -1;
    return send_frame(w, c, TCP_DATA, group, tag, data, len);
}

/* The proofs and keys of the handshake: HMAC(K, label || nonce_c || nonce_a
 * || connector's rank || acceptor's rank). */
static void handshake_mac(const tcp_world *w, const char *label, const tcp_conn *c, int connector,
                          unsigned char *out)
{
    unsigned char buf[2 * TCP_NONCE_LEN + 8];
    int we_connected = c->state == TCP_AWAIT_CHALLENGE;
    memcpy(buf, we_connected ? c->nonce_self : c->nonce_peer, TCP_NONCE_LEN);
    memcpy(buf + TCP_NONCE_LEN, we_connected ? c->nonce_peer : c->nonce_self, TCP_NONCE_LEN);
    put32(buf + 2 * TCP_NONCE_LEN, (uint32_t)connector);
    put32(buf + 2 * TCP_NONCE_LEN + 4, (uint32_t)(we_connected ? c->peer : w->rank));
    cb_hmac_sha256(w->key, sizeof w->key, label, strlen(label), buf, sizeof buf, out);
}

static void open_conn(tcp_world *w, tcp_conn *c, int connector)
{
    int we_connected = c->state == TCP_AWAIT_CHALLENGE;
    handshake_mac(w, we_connected ? "c2a" : "a2c", c, connector, c->key_out);
    handshake_mac(w, we_connected ? "a2c" : "c2a", c, connector, c->key_in);
    c->state = TCP_OPEN;
    c->opened = 1;
    c->seq_out = c->seq_in = 0;
    if (!c->rendezvous && c->peer >= 0 && c->peer < w->size && w->peers[c->peer].out == NULL)
        w->peers[c->peer].out = c;
}

static void auth_failed(tcp_world *w, tcp_conn *c)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    w->auth_failures++;
    if (getpeername(c->fd, (struct sockaddr *)&ss, &sl) == 0)
        cb_tcp_addr_text((struct sockaddr *)&ss, w->auth_from, sizeof w->auth_from);
    conn_close(w, c, EACCES);
}

static void queue_msg(tcp_world *w, tcp_conn *c)
{
    tcp_msg *m = calloc(1, sizeof *m);
    if (m == NULL) {
        conn_close(w, c, ENOMEM);
        return;
    }
    m->group = c->cur.group;
    m->tag = c->cur.tag;
    m->src = c->cur.src;
    m->conn = c;
    m->len = c->cur.len;
    m->data = c->payload;
    c->payload = NULL;
    if (w->queue_tail != NULL)
        w->queue_tail->next = m;
    else
        w->queue = m;
    w->queue_tail = m;
}

/* A whole frame is in c->head and c->payload: check it and act on it. */
static void handle_frame(tcp_world *w, tcp_conn *c)
{
    const tcp_head *h = &c->cur;
    unsigned char mac[TCP_MAC_LEN];
    int open = c->state == TCP_OPEN;
    cb_hmac_sha256(open ? c->key_in : w->key, TCP_MAC_LEN, c->head, TCP_HEAD_LEN, c->payload,
                   h->len, mac);
    /* A HELLO's MAC is not checked: it proves nothing (it may be replayed)
     * and a connector with another key learns so from our CHALLENGE. */
    int hello = c->state == TCP_AWAIT_HELLO && h->kind == TCP_HELLO;
    if ((!hello && !cb_mac_equal(mac, c->head + TCP_HEAD_LEN, TCP_MAC_LEN)) ||
        h->seq != (open ? c->seq_in + 1 : 0)) {
        auth_failed(w, c);
        return;
    }
    if (open) {
        c->seq_in = h->seq;
        if (h->kind != TCP_DATA || h->src != c->peer)
            conn_close(w, c, EPROTO);
        else
            queue_msg(w, c);
        return;
    }
    unsigned char proof[TCP_MAC_LEN];
    if (c->state == TCP_AWAIT_HELLO && h->kind == TCP_HELLO && h->len == TCP_NONCE_LEN &&
        h->tag == (uint64_t)w->rank && h->src >= 0 &&
        (c->rendezvous || h->src < w->size)) {
        c->peer = h->src;
        memcpy(c->nonce_peer, c->payload, TCP_NONCE_LEN);
        unsigned char out[TCP_NONCE_LEN + TCP_MAC_LEN];
        if (cb_random_bytes(c->nonce_self, TCP_NONCE_LEN) != 0) {
            conn_close(w, c, EIO);
            return;
        }
        memcpy(out, c->nonce_self, TCP_NONCE_LEN);
        handshake_mac(w, "acceptor", c, c->peer, out + TCP_NONCE_LEN);
        c->state = TCP_AWAIT_PROOF;
        send_frame(w, c, TCP_CHALLENGE, 0, (uint64_t)c->peer, out, sizeof out);
    } else if (c->state == TCP_AWAIT_CHALLENGE && h->kind == TCP_CHALLENGE &&
               h->len == TCP_NONCE_LEN + TCP_MAC_LEN && h->src == c->peer) {
        memcpy(c->nonce_peer, c->payload, TCP_NONCE_LEN);
        handshake_mac(w, "acceptor", c, w->rank, proof);
        if (!cb_mac_equal(proof, c->payload + TCP_NONCE_LEN, TCP_MAC_LEN)) {
            auth_failed(w, c);
            return;
        }
        handshake_mac(w, "connector", c, w->rank, proof);
        if (send_frame(w, c, TCP_PROOF, 0, (uint64_t)c->peer, proof, sizeof proof) == 0)
            open_conn(w, c, w->rank);
    } else if (c->state == TCP_AWAIT_PROOF && h->kind == TCP_PROOF && h->len == TCP_MAC_LEN &&
               h->src == c->peer) {
        handshake_mac(w, "connector", c, c->peer, proof);
        if (!cb_mac_equal(proof, c->payload, TCP_MAC_LEN)) {
            auth_failed(w, c);
            return;
        }
        open_conn(w, c, c->peer);
    } else {
        auth_failed(w, c);
    }
}

/* Reads what the socket has; handles each frame as it completes. */
static void read_conn(tcp_world *w, tcp_conn *c)
{
    while (c->state != TCP_CLOSED) {
        unsigned char *dst;
        size_t want;
        if (c->have_head < TCP_FRAME_HEAD) {
            dst = c->head + c->have_head;
            want = TCP_FRAME_HEAD - c->have_head;
        } else {
            dst = c->payload + c->have_payload;
            want = c->cur.len - c->have_payload;
        }
        ssize_t n = want > 0 ? recv(c->fd, dst, want, 0) : 0;
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (want > 0 && n <= 0) {
            if (c->state == TCP_AWAIT_PROOF) {
                auth_failed(w, c);   /* it left on our challenge: another key */
                return;
            }
            conn_close(w, c, n == 0 ? ECONNRESET : errno);
            return;
        }
        if (c->have_head < TCP_FRAME_HEAD) {
            c->have_head += (size_t)n;
            if (c->have_head < TCP_FRAME_HEAD)
                continue;
            const unsigned char *p = c->head;
            c->cur.kind = get32(p + 4);
            c->cur.group = get64(p + 8);
            c->cur.tag = get64(p + 16);
            c->cur.src = (int32_t)get32(p + 24);
            c->cur.len = get32(p + 28);
            c->cur.seq = get64(p + 32);
            size_t limit = c->state == TCP_OPEN ? TCP_PAYLOAD_MAX : TCP_HANDSHAKE_MAX;
            if (get32(p) != TCP_MAGIC || c->cur.len > limit) {
                auth_failed(w, c);
                return;
            }
            c->payload = malloc(c->cur.len + 1u);
            c->have_payload = 0;
            if (c->payload == NULL) {
                conn_close(w, c, ENOMEM);
                return;
            }
        } else {
            c->have_payload += (size_t)n;
        }
        if (c->have_payload == c->cur.len) {
            handle_frame(w, c);
            free(c->payload);
            c->payload = NULL;
            c->have_head = 0;
        }
    }
}

/* Accepted connections not yet authenticated: when a new one would be
 * one too many, the oldest goes (a rank says HELLO at once and answers at
 * once; a stranger that holds connections open must not exhaust our fds). */
static void limit_pending(tcp_world *w)
{
    int pending = 0;
    tcp_conn *oldest = NULL;
    for (int i = 0; i < w->nconns; i++) {
        tcp_conn *c = w->conns[i];
        if (c->state != TCP_AWAIT_HELLO && c->state != TCP_AWAIT_PROOF)
            continue;
        pending++;
        if (oldest == NULL || c->by < oldest->by)
            oldest = c;
    }
    if (pending >= TCP_MAX_PENDING)
        conn_close(w, oldest, ECONNABORTED);   /* dropped by the next progress at depth 0 */
}

static void accept_all(tcp_world *w, int lfd)
{
    for (;;) {
        limit_pending(w);
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;   /* EAGAIN, or a connection that went before we took it */
        set_socket_options(fd);
        tcp_conn *c = conn_add(w, fd, TCP_AWAIT_HELLO);
        if (c != NULL) {
            c->rendezvous = lfd == w->rv_fd;
            c->accepted = 1;
        }
    }
}

/* A connect() finished: say HELLO, or note why it failed. */
static void connected(tcp_world *w, tcp_conn *c)
{
    int err = 0;
    socklen_t sl = sizeof err;
    if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &sl) != 0)
        err = errno;
    if (err != 0) {
        conn_close(w, c, err);
        return;
    }
    if (cb_random_bytes(c->nonce_self, TCP_NONCE_LEN) != 0) {
        conn_close(w, c, EIO);
        return;
    }
    c->state = TCP_AWAIT_CHALLENGE;
    send_frame(w, c, TCP_HELLO, 0, (uint64_t)c->peer, c->nonce_self, TCP_NONCE_LEN);
}

static struct pollfd *pollfds(tcp_world *w, int n)
{
    if (n > w->cap_pollfds) {
        void *p = realloc(w->pollfds, (size_t)n * sizeof(struct pollfd));
        if (p == NULL)
            return NULL;
        w->pollfds = p;
        w->cap_pollfds = n;
    }
    return w->pollfds;
}

/* Runs the engine once: waits up to ms for any socket, or for out_fd
 * (>= 0) to take more bytes. Nested calls (a handshake's reply written
 * while reading) only add to the list of connections, never reorder it. */
static void progress(tcp_world *w, int ms, int out_fd)
{
    int n = 0, nconns = w->nconns;
    struct pollfd *pf = pollfds(w, nconns + 3);
    if (pf == NULL)
        return;
    double now = cb_ctl_now();
    /* A stranger's connection that never finishes its handshake goes. */
    for (int i = 0; w->depth == 0 && i < w->nconns; i++) {
        tcp_conn *c = w->conns[i];
        int refused = c->state == TCP_CLOSED && c->accepted && !c->opened;
        if (((c->state == TCP_AWAIT_HELLO || c->state == TCP_AWAIT_PROOF) && now > c->by) ||
            refused) {
            cb_tcp_conn_drop(w, c);
            i--;
        }
    }
    nconns = w->nconns;
    for (int i = 0; i < nconns; i++) {
        tcp_conn *c = w->conns[i];
        pf[n].fd = c->fd;   /* negative when closed: poll skips it */
        pf[n].events = c->state == TCP_CONNECTING ? POLLOUT : POLLIN;
        pf[n++].revents = 0;
    }
    int lfds[2] = {w->listen_fd, w->rv_fd};
    for (int i = 0; i < 2; i++) {
        pf[n].fd = lfds[i];
        pf[n].events = POLLIN;
        pf[n++].revents = 0;
    }
    pf[n].fd = out_fd;
    pf[n].events = POLLOUT;
    pf[n++].revents = 0;
    if (poll(pf, (nfds_t)n, ms) <= 0)
        return;
    w->depth++;
    /* The listed connections first (accepting appends to the list). */
    for (int i = 0; i < nconns; i++) {
        tcp_conn *c = w->conns[i];
        if (pf[i].revents == 0 || c->fd != pf[i].fd)
            continue;
        if (c->state == TCP_CONNECTING)
            connected(w, c);
        else
            read_conn(w, c);
    }
    for (int i = 0; i < 2; i++)
        if (lfds[i] >= 0 && (pf[nconns + i].revents & POLLIN))
            accept_all(w, lfds[i]);
    w->depth--;
}

void cb_tcp_progress(tcp_world *w, int ms)
{
    progress(w, ms, -1);
}

tcp_conn *cb_tcp_connect_start(tcp_world *w, const struct sockaddr *addr, socklen_t len, int peer,
                               int rendezvous)
{
    int fd = socket(addr->sa_family, SOCK_STREAM, 0);
    if (fd < 0)
        return NULL;
    set_socket_options(fd);
    tcp_conn *c = conn_add(w, fd, TCP_CONNECTING);
    if (c == NULL) {
        errno = ENOMEM;
        return NULL;
    }
    c->peer = peer;
    c->rendezvous = rendezvous;
    if (connect(fd, addr, len) == 0)
        connected(w, c);
    else if (errno != EINPROGRESS)
        conn_close(w, c, errno);
    return c;
}

int cb_tcp_connect_wait(tcp_world *w, tcp_conn *c, double deadline)
{
    for (;;) {
        if (c->state == TCP_OPEN)
            return 0;
        if (c->state == TCP_CLOSED)
            return -1;
        double left = deadline - cb_ctl_now();
        if (left <= 0) {
            conn_close(w, c, ETIMEDOUT);
            return -1;
        }
        cb_tcp_progress(w, left > 0.1 ? 100 : (int)(left * 1000) + 1);
    }
}

tcp_conn *cb_tcp_link(tcp_world *w, int dest)
{
    tcp_peer *p = &w->peers[dest];
    if (p->out != NULL && p->out->state == TCP_OPEN)
        return p->out;
    if (p->gone || w->closed)
        return NULL;
    if (p->out == NULL) {
        p->out = cb_tcp_connect_start(w, (struct sockaddr *)&p->addr, p->addrlen, dest, 0);
        if (p->out == NULL) {
            peer_gone(w, dest);
            return NULL;
        }
    }
    if (cb_tcp_connect_wait(w, p->out, cb_ctl_now() + w->timeout_s) != 0) {
        peer_gone(w, dest);
        return NULL;
    }
    return p->out;
}

void cb_tcp_msg_free(tcp_msg *m)
{
    if (m != NULL)
        free(m->data);
    free(m);
}

static tcp_msg *unqueue(tcp_world *w, uint64_t group, uint64_t tag, int src)
{
    tcp_msg *prev = NULL;
    for (tcp_msg *m = w->queue; m != NULL; prev = m, m = m->next) {
        if (m->group != group || m->tag != tag || (src >= 0 && m->src != src))
            continue;
        if (prev != NULL)
            prev->next = m->next;
        else
            w->queue = m->next;
        if (w->queue_tail == m)
            w->queue_tail = prev;
        m->next = NULL;
        return m;
    }
    return NULL;
}

int cb_tcp_take(tcp_world *w, uint64_t group, uint64_t tag, int src, tcp_conn *via,
                double deadline, tcp_msg **out)
{
    for (int looked_once = 0;; looked_once = 1) {
        *out = unqueue(w, group, tag, src);
        if (*out != NULL)
            return 1;
        if (via != NULL ? via->state == TCP_CLOSED : src >= 0 && w->peers[src].gone)
            return -1;
        if (w->closed)
            return -1;
        int ms = 100;
        if (deadline == 0) {
            if (looked_once)
                return 0;
            ms = 0;
        } else if (deadline > 0) {
            double left = deadline - cb_ctl_now();
            if (left <= 0)
                return 0;
            if (left < 0.1)
                ms = (int)(left * 1000) + 1;
        }
        cb_tcp_progress(w, ms);
    }
}

void cb_tcp_close_all(tcp_world *w)
{
    while (w->nconns > 0)
        cb_tcp_conn_drop(w, w->conns[w->nconns - 1]);
    while (w->queue != NULL) {
        tcp_msg *m = w->queue;
        w->queue = m->next;
        cb_tcp_msg_free(m);
    }
    w->queue_tail = NULL;
    if (w->listen_fd >= 0)
        close(w->listen_fd);
    if (w->rv_fd >= 0)
        close(w->rv_fd);
    w->listen_fd = w->rv_fd = -1;
    w->closed = 1;
}
