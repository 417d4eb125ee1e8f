/* The side channel's set-up: the secret, the address rank 0 listens on,
 * the connections served all at once, and each rank's join. */
#define _DEFAULT_SOURCE   /* getifaddrs */
#include "safety/sidechannel_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

/* Rank 0's addresses a rank tries, and each rank's that rank 0 weighs. */
#define SIDE_MAX_ADDRS 4
#define SIDE_OWN_ADDRS 8
/* How long one connection attempt, and each connection's HELLO, may take. */
#define SIDE_CONNECT_S 2.0
/* Connections rank 0 holds at once before their HELLO; when more come,
 * the oldest is dropped (a rank says HELLO at once, so it is never one). */
#define SIDE_MAX_PENDING 64

/* One rank's facts, gathered on rank 0 over the control plane: its host and addresses. */
typedef struct side_facts {
    char host[CB_HANG_HOSTLEN];
    int32_t naddrs;
    uint32_t addr[SIDE_OWN_ADDRS];   /* IPv4, network order */
    uint32_t mask[SIDE_OWN_ADDRS];
} side_facts;

/* What rank 0 tells every rank over the control plane: where it listens (the secret: cb_ctl_secret). */
typedef struct side_invite {
    int32_t ok;
    int32_t naddrs;
    uint32_t addrs[SIDE_MAX_ADDRS];   /* network order */
    uint16_t port[SIDE_MAX_ADDRS];    /* network order, one per address */
    unsigned char secret[SIDE_KEY_LEN];
    char host[CB_HANG_HOSTLEN];
} side_invite;

/* A connection to rank 0 that has not said HELLO yet. */
typedef struct side_pending {
    struct cb_side_link link;
    double by;   /* its own deadline */
} side_pending;

static void set_nonblocking(int fd)
{
    int flags = fcntl(fd, F_GETFL);
    if (flags >= 0)
        fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

/* This network namespace's IPv4 addresses of up interfaces, those other
 * than the loopback first, the loopback last. */
static void own_facts(side_facts *f, const char *host)
{
    memset(f, 0, sizeof *f);
    snprintf(f->host, sizeof f->host, "%s", host);
    struct ifaddrs *all = NULL;
    if (getifaddrs(&all) != 0)
        return;
    for (int loopback = 0; loopback < 2; loopback++)
        for (struct ifaddrs *i = all; i != NULL && f->naddrs < SIDE_OWN_ADDRS; i = i->ifa_next) {
            if (i->ifa_addr == NULL || i->ifa_addr->sa_family != AF_INET ||
                !(i->ifa_flags & IFF_UP) || !!(i->ifa_flags & IFF_LOOPBACK) != loopback)
                continue;
            const struct sockaddr_in *a = (const void *)i->ifa_addr;
            const struct sockaddr_in *m = (const void *)i->ifa_netmask;
            f->addr[f->naddrs] = a->sin_addr.s_addr;
            f->mask[f->naddrs++] = m != NULL ? m->sin_addr.s_addr : 0xffffffffu;
        }
    freeifaddrs(all);
}

static int has_addr(const side_facts *f, uint32_t addr)
{
    for (int i = 0; i < f->naddrs; i++)
        if (f->addr[i] == addr)
            return 1;
    return 0;
}

/* Whether f is in rank 0's network namespace: the same addresses. */
static int same_namespace(const side_facts *f, const side_facts *root)
{
    if (f->naddrs != root->naddrs)
        return 0;
    for (int i = 0; i < f->naddrs; i++)
        if (!has_addr(root, f->addr[i]))
            return 0;
    return 1;
}

/*
 * The addresses rank 0 listens on, into inv: the loopback alone when every
 * rank shares its network namespace; else its addresses on a subnet that
 * other ranks' addresses share, those shared by the most ranks first; else
 * (no shared subnet: routed) every address other than the loopback.
 * Never the wildcard address.
 */
static void choose_addresses(const side_facts *all, int nranks, side_invite *inv)
{
    const side_facts *root = &all[0];
    int remote = 0;
    for (int r = 1; r < nranks; r++)
        remote += !same_namespace(&all[r], root);
    inv->naddrs = 0;
    if (remote == 0 || root->naddrs == 0) {
        inv->addrs[inv->naddrs++] = htonl(INADDR_LOOPBACK);
        return;
    }
    int score[SIDE_OWN_ADDRS] = {0}, best = 0;
    for (int a = 0; a < root->naddrs; a++) {
        if ((ntohl(root->addr[a]) >> 24) == 127)
            continue;
        for (int r = 1; r < nranks; r++)
            for (int b = 0; b < all[r].naddrs && !same_namespace(&all[r], root); b++)
                if ((all[r].addr[b] & root->mask[a]) == (root->addr[a] & root->mask[a])) {
                    score[a]++;
                    break;
                }
        best = score[a] > best ? score[a] : best;
    }
    for (int want = best; want >= (best > 0 ? 1 : 0) && inv->naddrs < SIDE_MAX_ADDRS; want--)
        for (int a = 0; a < root->naddrs && inv->naddrs < SIDE_MAX_ADDRS; a++)
            if (score[a] == want && (ntohl(root->addr[a]) >> 24) != 127)
                inv->addrs[inv->naddrs++] = root->addr[a];
    if (inv->naddrs == 0)
        inv->addrs[inv->naddrs++] = root->addr[0];
}

/* A listening socket on each of inv's addresses (ports into inv); the
 * addresses none can be had on are dropped. Returns how many. */
static int listen_on(side_invite *inv, int *lfds)
{
    int n = 0;
    for (int a = 0; a < inv->naddrs; a++) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in sa;
        memset(&sa, 0, sizeof sa);
        sa.sin_family = AF_INET;
        sa.sin_addr.s_addr = inv->addrs[a];
        socklen_t len = sizeof sa;
        if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
            listen(fd, SOMAXCONN) != 0 || getsockname(fd, (struct sockaddr *)&sa, &len) != 0) {
            if (fd >= 0)
                close(fd);
            continue;
        }
        set_nonblocking(fd);
        inv->addrs[n] = inv->addrs[a];
        inv->port[n] = sa.sin_port;
        lfds[n++] = fd;
    }
    inv->naddrs = n;
    return n;
}

/* Rank 0: a pending connection's HELLO, checked under the secret. A good
 * one makes the rank's link (the first stands while it is up) and is
 * welcomed; anything else is refused. Returns 1 when a rank joined. */
static int hello(cb_sidechannel *sc, side_pending *p, const unsigned char *secret)
{
    const side_msg *in = &p->link.in;
    int r = in->rank;
    p->link.peer = r;
    p->link.got = 0;
    if (in->type != SIDE_HELLO || r <= 0 || r >= sc->nranks || !cb_side_check(&p->link, secret))
        return -1;
    struct cb_side_link *link = &sc->links[r];
    if (link->fd >= 0 && !link->gone)
        return -1;   /* the rank is in already: a replay, or not the rank */
    int rejoin = link->fd >= 0;
    struct cb_side_link fresh = {.fd = p->link.fd, .self = 0, .peer = r, .got = 1};
    memcpy(fresh.host, link->host, sizeof fresh.host);
    unsigned char root_nonce[SIDE_NONCE_LEN];
    if (cb_random_bytes(root_nonce, sizeof root_nonce) != 0)
        return -1;
    cb_side_link_key(secret, in->nonce, root_nonce, fresh.key);
    side_msg welcome;
    cb_side_msg_init(&welcome, SIDE_WELCOME);
    memcpy(welcome.nonce, root_nonce, sizeof root_nonce);
    if (cb_side_send(&fresh, &welcome, cb_side_now() + SIDE_SEND_S) != 0)
        return -1;
    if (rejoin)
        close(link->fd);
    *link = fresh;
    p->link.fd = -1;   /* the rank's link owns it now */
    int one = 1;
    setsockopt(link->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return rejoin ? 0 : 1;
}

/* Rank 0: serve the listening sockets and every connection at once until
 * every rank has joined or the deadline; each connection has SIDE_CONNECT_S
 * for its HELLO, which delays no other. Returns the ranks in (rank 0 too). */
static int welcome_ranks(cb_sidechannel *sc, const int *lfds, int nl,
                         const unsigned char *secret, double deadline)
{
    side_pending pend[SIDE_MAX_PENDING];
    struct pollfd pfds[SIDE_MAX_ADDRS + SIDE_MAX_PENDING];
    int np = 0, joined = 1;
    while (joined < sc->nranks && cb_side_now() < deadline) {
        double wake = deadline;
        for (int i = 0; i < nl; i++)
            pfds[i] = (struct pollfd){lfds[i], POLLIN, 0};
        for (int k = 0; k < np; k++) {
            pfds[nl + k] = (struct pollfd){pend[k].link.fd, POLLIN, 0};
            wake = pend[k].by < wake ? pend[k].by : wake;
        }
        poll(pfds, (nfds_t)(nl + np), cb_side_ms_until(wake));
        /* The connections first (their slots are the poll's), then the new ones. */
        double now = cb_side_now();
        for (int k = np - 1; k >= 0; k--) {
            side_pending *p = &pend[k];
            int got = pfds[nl + k].revents != 0 ? cb_side_read(&p->link) : 0;
            int in = got == 1 ? hello(sc, p, secret) : -1;
            if (got == 0 && now < p->by)
                continue;
            joined += in > 0;
            if (p->link.fd >= 0)
                close(p->link.fd);   /* refused, closed, or past its deadline */
            pend[k] = pend[--np];
        }
        for (int i = 0; i < nl; i++) {
            int fd;
            while (pfds[i].revents != 0 && (fd = accept(lfds[i], NULL, NULL)) >= 0) {
                fcntl(fd, F_SETFD, FD_CLOEXEC);
                set_nonblocking(fd);
                if (np == SIDE_MAX_PENDING) {   /* full: the oldest goes */
                    int oldest = 0;
                    for (int k = 1; k < np; k++)
                        oldest = pend[k].by < pend[oldest].by ? k : oldest;
                    close(pend[oldest].link.fd);
                    pend[oldest] = pend[--np];
                }
                pend[np++] = (side_pending){.link = {.fd = fd}, .by = cb_side_now() + SIDE_CONNECT_S};
            }
        }
    }
    for (int k = 0; k < np; k++)
        close(pend[k].link.fd);
    return joined;
}

/* Not rank 0: connect to one of rank 0's addresses within the deadline,
 * say HELLO under the secret, and take the WELCOME's nonce into the key. */
static int join(cb_sidechannel *sc, const side_invite *inv, double deadline)
{
    for (int a = 0; a < inv->naddrs && cb_side_now() < deadline; a++) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
            return -1;
        set_nonblocking(fd);
        struct sockaddr_in sa;
        memset(&sa, 0, sizeof sa);
        sa.sin_family = AF_INET;
        sa.sin_port = inv->port[a];
        sa.sin_addr.s_addr = inv->addrs[a];
        double by = cb_side_now() + SIDE_CONNECT_S < deadline ? cb_side_now() + SIDE_CONNECT_S : deadline;
        int rc = connect(fd, (struct sockaddr *)&sa, sizeof sa);
        if (rc != 0 && errno == EINPROGRESS) {
            struct pollfd pfd = {fd, POLLOUT, 0};
            int err = 0;
            socklen_t len = sizeof err;
            rc = poll(&pfd, 1, cb_side_ms_until(by)) == 1 &&
                         getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0
                     ? 0
                     : -1;
        }
        struct cb_side_link link = {.fd = fd, .self = sc->rank, .peer = 0};
        memcpy(link.key, inv->secret, sizeof link.key);
        side_msg msg;
        cb_side_msg_init(&msg, SIDE_HELLO);
        msg.state.rank = sc->rank;
        msg.state.pid = (int32_t)getpid();
        int ok = rc == 0 && cb_random_bytes(msg.nonce, sizeof msg.nonce) == 0 &&
                 cb_side_send(&link, &msg, by) == 0;
        unsigned char rank_nonce[SIDE_NONCE_LEN];
        memcpy(rank_nonce, msg.nonce, sizeof rank_nonce);
        int got = 0;
        while (ok && (got = cb_side_read(&link)) == 0 && cb_side_now() < by) {
            struct pollfd pfd = {fd, POLLIN, 0};
            poll(&pfd, 1, cb_side_ms_until(by));
        }
        if (got == 1 && link.in.type == SIDE_WELCOME) {
            cb_side_link_key(inv->secret, rank_nonce, link.in.nonce, link.key);
            if (cb_side_check(&link, link.key)) {
                int one = 1;
                setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                sc->links[0] = link;
                memcpy(sc->links[0].host, inv->host, sizeof sc->links[0].host);
                return 0;
            }
        }
        close(fd);
    }
    return -1;
}

/* Rank 0: every rank's facts, gathered; its links get their hosts. NULL
 * where memory is short (on rank 0 only). */
static side_facts *gather_facts(cb_sidechannel *sc, cb_ctl *comm, const char *host)
{
    side_facts mine;
    own_facts(&mine, host);
    side_facts *all = sc->rank == 0 ? calloc((size_t)sc->nranks, sizeof *all) : NULL;
    int room = sc->rank != 0 || all != NULL;
    cb_ctl_bcast(comm, &room, sizeof(int), 0);   /* rank 0 has room for the gather, or none gather */
    if (!room)
        return NULL;
    cb_ctl_gather(comm, &mine, sizeof mine, all, 0);
    for (int r = 0; all != NULL && sc->links != NULL && r < sc->nranks; r++) {
        all[r].host[CB_HANG_HOSTLEN - 1] = '\0';
        memcpy(sc->links[r].host, all[r].host, sizeof sc->links[r].host);
    }
    return all;
}

int cb_sidechannel_open(cb_sidechannel *sc, cb_ctl *comm, const char *host, char *why,
                        size_t why_len)
{
    memset(sc, 0, sizeof *sc);
    sc->rank = comm->rank;
    sc->nranks = comm->size;
    why[0] = '\0';
    side_invite inv;
    memset(&inv, 0, sizeof inv);
    int lfds[SIDE_MAX_ADDRS], nl = 0;
    sc->nlinks = sc->rank == 0 ? sc->nranks : 1;
    sc->links = calloc((size_t)sc->nlinks, sizeof *sc->links);
    for (int i = 0; sc->links != NULL && i < sc->nlinks; i++)
        sc->links[i] = (struct cb_side_link){.fd = -1, .self = sc->rank, .peer = i};
    side_facts *facts = gather_facts(sc, comm, host);
    if (sc->rank == 0 && sc->links != NULL && facts != NULL) {
        snprintf(inv.host, sizeof inv.host, "%s", host);
        choose_addresses(facts, sc->nranks, &inv);
        if ((nl = listen_on(&inv, lfds)) == 0)
            snprintf(why, why_len, "rank 0 cannot listen on a TCP port: %s", strerror(errno));
        inv.ok = nl > 0;
    }
    free(facts);
    cb_ctl_bcast(comm, &inv, sizeof inv, 0);
    /* The secret never crosses the network in the clear: MPI's transport
     * carries it, or the TCP control plane derives it from its own key. */
    if (cb_ctl_secret(comm, "nccl-collbench side channel", inv.secret, sizeof inv.secret) != 0) {
        if (sc->rank == 0 && why[0] == '\0')
            snprintf(why, why_len, "no secret for the hang report's side channel");
        inv.ok = 0;
    }
    snprintf(sc->host0, sizeof sc->host0, "%s", inv.host);
    int joined = 0;
    double wait_s = SIDE_CONNECT_S * inv.naddrs + 3.0;
    double deadline = cb_side_now() + wait_s;
    if (inv.ok && sc->links != NULL) {
        if (sc->rank == 0)
            joined = welcome_ranks(sc, lfds, nl, inv.secret, deadline) == sc->nranks;
        else
            joined = join(sc, &inv, deadline) == 0;
    }
    for (int i = 0; i < nl; i++)
        close(lfds[i]);
    memset(inv.secret, 0, sizeof inv.secret);   /* the links hold their own keys */
    int all = 0, first_out = 0, mine = joined ? sc->nranks : sc->rank;
    cb_ctl_allreduce(comm, &joined, &all, 1, CB_CTL_INT, CB_CTL_MIN);
    cb_ctl_allreduce(comm, &mine, &first_out, 1, CB_CTL_INT, CB_CTL_MIN);
    sc->on = inv.ok && sc->links != NULL && (sc->rank == 0 || joined);
    if (sc->rank == 0 && !all && why[0] == '\0') {
        int in = 0;
        for (int r = 0; r < sc->nranks && sc->links != NULL; r++)
            in += r == 0 || sc->links[r].fd >= 0;
        snprintf(why, why_len, "the hang report's side channel reaches %d of %d ranks (rank %d "
                 "could not connect to rank 0 over TCP within %.0f s)", in, sc->nranks,
                 first_out < sc->nranks ? first_out : 0, wait_s);
    }
    return all ? 0 : -1;
}
