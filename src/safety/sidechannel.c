#define _DEFAULT_SOURCE   /* getifaddrs */
#include "safety/sidechannel.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define SIDE_MAGIC 0x43424852u   /* "CBHR" */
/* Rank 0's addresses a rank tries, non-loopback first. */
#define SIDE_MAX_ADDRS 4
/* How long one connection attempt, and the wait for the welcome, may take. */
#define SIDE_CONNECT_S 2.0
/* A message that does not fit the socket's buffer within this is given up. */
#define SIDE_SEND_S 1.0

enum side_type { SIDE_HELLO = 1, SIDE_WELCOME, SIDE_FIRED, SIDE_ASK, SIDE_STATE, SIDE_EXIT };

typedef struct side_msg {
    uint32_t magic;
    uint32_t type;
    uint64_t cookie;
    int32_t rank;
    int32_t code;          /* SIDE_EXIT: the status */
    cb_hang_state state;   /* SIDE_HELLO: rank, pid, host; SIDE_STATE: all */
} side_msg;

struct cb_side_link {
    int fd;                /* -1: none */
    int gone;              /* the peer closed it, or it broke */
    size_t have;           /* bytes of in received so far */
    side_msg in;
    char host[CB_HANG_HOSTLEN];
};

/* What rank 0 tells every rank at start-up, over MPI. */
typedef struct side_invite {
    int ok;
    int naddrs;
    uint32_t addrs[SIDE_MAX_ADDRS];   /* network order */
    uint16_t port;                    /* network order */
    uint64_t cookie;
    char host[CB_HANG_HOSTLEN];
} side_invite;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int ms_until(double deadline)
{
    double left = deadline - now_s();
    return left <= 0 ? 0 : (int)(left * 1000) + 1;
}

static void set_nonblocking(int fd)
{
    int flags = fcntl(fd, F_GETFL);
    if (flags >= 0)
        fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

/* All of msg, or -1 (the peer does not read, or the link broke). */
static int send_msg(int fd, side_msg *msg, uint64_t cookie, double deadline)
{
    msg->magic = SIDE_MAGIC;
    msg->cookie = cookie;
    const char *p = (const char *)msg;
    size_t left = sizeof *msg;
    while (left > 0) {
        ssize_t n = send(fd, p, left, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            p += n;
            left -= (size_t)n;
            continue;
        }
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            return -1;
        struct pollfd pfd = {fd, POLLOUT, 0};
        if (poll(&pfd, 1, ms_until(deadline)) <= 0 && now_s() >= deadline)
            return -1;
    }
    return 0;
}

/* Read what has come on link; 1 when a whole message is in link->in, 0
 * when not yet, -1 when the link closed or carries something else. */
static int receive(struct cb_side_link *link, uint64_t cookie)
{
    for (;;) {
        ssize_t n = recv(link->fd, (char *)&link->in + link->have, sizeof link->in - link->have,
                         MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
            link->gone = 1;
            return -1;
        }
        if (n < 0)
            return errno == EINTR ? receive(link, cookie) : 0;
        link->have += (size_t)n;
        if (link->have < sizeof link->in)
            continue;
        link->have = 0;
        if (link->in.magic != SIDE_MAGIC || link->in.cookie != cookie) {
            link->gone = 1;
            return -1;
        }
        link->in.state.host[CB_HANG_HOSTLEN - 1] = '\0';
        link->in.state.doing[CB_HANG_DOINGLEN - 1] = '\0';
        link->in.state.op[CB_HANG_OPLEN - 1] = '\0';
        return 1;
    }
}

/* Wait until link holds a whole message or deadline: 1, 0 or -1 as receive. */
static int receive_by(struct cb_side_link *link, uint64_t cookie, double deadline)
{
    for (;;) {
        int got = receive(link, cookie);
        if (got != 0)
            return got;
        struct pollfd pfd = {link->fd, POLLIN, 0};
        if (poll(&pfd, 1, ms_until(deadline)) <= 0 && now_s() >= deadline)
            return 0;
    }
}

static void drop(struct cb_side_link *link)
{
    if (link->fd >= 0)
        close(link->fd);
    link->fd = -1;
    link->gone = 1;
}

/* This machine's IPv4 addresses, those of up interfaces other than the
 * loopback first, the loopback last (it serves ranks on this machine). */
static int own_addresses(uint32_t *addrs, int room)
{
    struct ifaddrs *all = NULL;
    int n = 0;
    if (getifaddrs(&all) == 0) {
        for (int loopback = 0; loopback < 2; loopback++)
            for (struct ifaddrs *i = all; i != NULL && n < room; i = i->ifa_next) {
                if (i->ifa_addr == NULL || i->ifa_addr->sa_family != AF_INET ||
                    !(i->ifa_flags & IFF_UP) || !!(i->ifa_flags & IFF_LOOPBACK) != loopback)
                    continue;
                addrs[n++] = ((const struct sockaddr_in *)(const void *)i->ifa_addr)->sin_addr.s_addr;
            }
        freeifaddrs(all);
    }
    if (n == 0)
        addrs[n++] = htonl(INADDR_LOOPBACK);
    return n;
}

static int listen_socket(side_invite *inv)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_ANY);
    socklen_t len = sizeof sa;
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, SOMAXCONN) != 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &len) != 0) {
        close(fd);
        return -1;
    }
    set_nonblocking(fd);
    inv->port = sa.sin_port;
    inv->naddrs = own_addresses(inv->addrs, SIDE_MAX_ADDRS);
    return fd;
}

/* Rank 0: welcome ranks until every one has come or the deadline. */
static int welcome_ranks(cb_sidechannel *sc, int lfd, double deadline)
{
    int joined = 1;
    while (joined < sc->nranks && now_s() < deadline) {
        struct pollfd pfd = {lfd, POLLIN, 0};
        if (poll(&pfd, 1, ms_until(deadline)) <= 0)
            continue;
        int fd = accept(lfd, NULL, NULL);
        if (fd < 0)
            continue;
        fcntl(fd, F_SETFD, FD_CLOEXEC);
        set_nonblocking(fd);
        struct cb_side_link probe = {.fd = fd};
        double by = now_s() + SIDE_CONNECT_S < deadline ? now_s() + SIDE_CONNECT_S : deadline;
        int r = -1;
        if (receive_by(&probe, sc->cookie, by) == 1 && probe.in.type == SIDE_HELLO)
            r = probe.in.rank;
        side_msg welcome = {.type = SIDE_WELCOME, .rank = 0};
        if (r <= 0 || r >= sc->nranks || send_msg(fd, &welcome, sc->cookie, by) != 0) {
            close(fd);
            continue;
        }
        struct cb_side_link *link = &sc->links[r];
        if (link->fd >= 0)
            close(link->fd);   /* a second try of the same rank: the later stands */
        else
            joined++;
        *link = (struct cb_side_link){.fd = fd};
        memcpy(link->host, probe.in.state.host, sizeof link->host);
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    return joined;
}

/* Not rank 0: connect to one of rank 0's addresses within the deadline. */
static int join(cb_sidechannel *sc, const side_invite *inv, const char *host, double deadline)
{
    for (int a = 0; a < inv->naddrs && now_s() < deadline; a++) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
            return -1;
        set_nonblocking(fd);
        struct sockaddr_in sa;
        memset(&sa, 0, sizeof sa);
        sa.sin_family = AF_INET;
        sa.sin_port = inv->port;
        sa.sin_addr.s_addr = inv->addrs[a];
        double by = now_s() + SIDE_CONNECT_S < deadline ? now_s() + SIDE_CONNECT_S : deadline;
        int rc = connect(fd, (struct sockaddr *)&sa, sizeof sa);
        if (rc != 0 && errno == EINPROGRESS) {
            struct pollfd pfd = {fd, POLLOUT, 0};
            int err = 0;
            socklen_t len = sizeof err;
            rc = poll(&pfd, 1, ms_until(by)) == 1 &&
                         getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0
                     ? 0
                     : -1;
        }
        side_msg hello = {.type = SIDE_HELLO, .rank = sc->rank};
        hello.state.rank = sc->rank;
        hello.state.pid = (int32_t)getpid();
        snprintf(hello.state.host, sizeof hello.state.host, "%s", host);
        struct cb_side_link link = {.fd = fd};
        if (rc == 0 && send_msg(fd, &hello, sc->cookie, by) == 0 &&
            receive_by(&link, sc->cookie, by) == 1 && link.in.type == SIDE_WELCOME) {
            int one = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            sc->links[0] = (struct cb_side_link){.fd = fd};
            memcpy(sc->links[0].host, inv->host, sizeof sc->links[0].host);
            return 0;
        }
        close(fd);
    }
    return -1;
}

int cb_sidechannel_open(cb_sidechannel *sc, MPI_Comm comm, const char *host, char *why,
                        size_t why_len)
{
    memset(sc, 0, sizeof *sc);
    MPI_Comm_rank(comm, &sc->rank);
    MPI_Comm_size(comm, &sc->nranks);
    why[0] = '\0';
    side_invite inv;
    memset(&inv, 0, sizeof inv);
    int lfd = -1;
    sc->nlinks = sc->rank == 0 ? sc->nranks : 1;
    sc->links = calloc((size_t)sc->nlinks, sizeof *sc->links);
    for (int i = 0; sc->links != NULL && i < sc->nlinks; i++)
        sc->links[i].fd = -1;
    if (sc->rank == 0 && sc->links != NULL) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        inv.cookie = ((uint64_t)ts.tv_sec << 32) ^ (uint64_t)ts.tv_nsec ^
                     ((uint64_t)getpid() << 16);
        snprintf(inv.host, sizeof inv.host, "%s", host);
        lfd = listen_socket(&inv);
        inv.ok = lfd >= 0;
        if (!inv.ok)
            snprintf(why, why_len, "rank 0 cannot listen on a TCP port: %s", strerror(errno));
    }
    MPI_Bcast(&inv, (int)sizeof inv, MPI_BYTE, 0, comm);
    sc->cookie = inv.cookie;
    snprintf(sc->host0, sizeof sc->host0, "%s", inv.host);
    int joined = 0;
    double deadline = now_s() + SIDE_CONNECT_S * inv.naddrs + 3.0;
    if (inv.ok && sc->links != NULL) {
        if (sc->rank == 0) {
            memcpy(sc->links[0].host, host, sizeof sc->links[0].host);
            joined = welcome_ranks(sc, lfd, deadline) == sc->nranks;
        } else {
            joined = join(sc, &inv, host, deadline) == 0;
        }
    }
    if (lfd >= 0)
        close(lfd);
    int all = 0, first_out = 0, mine = joined ? sc->nranks : sc->rank;
    MPI_Allreduce(&joined, &all, 1, MPI_INT, MPI_MIN, comm);
    MPI_Allreduce(&mine, &first_out, 1, MPI_INT, MPI_MIN, comm);
    sc->on = inv.ok && sc->links != NULL && (sc->rank == 0 || joined);
    if (sc->rank == 0 && !all && why[0] == '\0') {
        int in = 0;
        for (int r = 0; r < sc->nranks && sc->links != NULL; r++)
            in += r == 0 || sc->links[r].fd >= 0;
        snprintf(why, why_len, "the hang report's side channel reaches %d of %d ranks (rank %d "
                 "could not connect to rank 0 over TCP within %.0f s)", in, sc->nranks,
                 first_out < sc->nranks ? first_out : 0, SIDE_CONNECT_S * inv.naddrs + 3.0);
    }
    return all ? 0 : -1;
}

void cb_sidechannel_close(cb_sidechannel *sc)
{
    for (int i = 0; sc->links != NULL && i < sc->nlinks; i++)
        if (sc->links[i].fd >= 0)
            close(sc->links[i].fd);
    free(sc->links);
    sc->links = NULL;
    sc->on = 0;
}

/* The links a poll watches: every live one. Returns how many. */
static int watch_list(const cb_sidechannel *sc, struct pollfd *pfds, int *which)
{
    int n = 0;
    for (int i = 0; i < sc->nlinks; i++)
        if (sc->links[i].fd >= 0 && !sc->links[i].gone) {
            pfds[n] = (struct pollfd){sc->links[i].fd, POLLIN, 0};
            which[n++] = i;
        }
    return n;
}

int cb_sidechannel_serve(cb_sidechannel *sc, int wait_ms, int wake_fd, cb_side_snapshot snap,
                         void *ctx, int *arg)
{
    struct pollfd two[2];
    int two_which[2];
    int small = sc->nlinks <= 1;
    struct pollfd *pfds = small ? two : calloc((size_t)sc->nlinks + 1, sizeof *pfds);
    int *which = small ? two_which : calloc((size_t)sc->nlinks + 1, sizeof *which);
    int event = CB_SIDE_NONE;
    int n = pfds != NULL && which != NULL && sc->on ? watch_list(sc, pfds, which) : 0;
    /* The wake descriptor ends the wait early (the watchdog stopping): a
     * nap the stop must sit out costs every launch of the program. */
    int ready = 0;
    if (n == 0 && wake_fd < 0) {
        const struct timespec nap = {wait_ms / 1000, (long)(wait_ms % 1000) * 1000000L};
        nanosleep(&nap, NULL);
    } else if (n == 0) {
        poll(&(struct pollfd){wake_fd, POLLIN, 0}, 1, wait_ms);
    } else {
        if (wake_fd >= 0)
            pfds[n] = (struct pollfd){wake_fd, POLLIN, 0};
        ready = poll(pfds, (nfds_t)n + (wake_fd >= 0), wait_ms);
        if (wake_fd >= 0 && pfds[n].revents != 0)
            ready = 0;   /* stopping: the caller looks at why */
    }
    if (ready > 0) {
        for (int k = 0; k < n && event == CB_SIDE_NONE; k++) {
            struct cb_side_link *link = &sc->links[which[k]];
            if (pfds[k].revents == 0)
                continue;
            while (event == CB_SIDE_NONE && receive(link, sc->cookie) == 1) {
                if (sc->rank == 0 && link->in.type == SIDE_FIRED) {
                    *arg = which[k];
                    event = CB_SIDE_FIRED;
                } else if (sc->rank != 0 && link->in.type == SIDE_EXIT) {
                    *arg = link->in.code;
                    event = CB_SIDE_EXIT;
                } else if (sc->rank != 0 && link->in.type == SIDE_ASK) {
                    side_msg answer = {.type = SIDE_STATE, .rank = sc->rank};
                    snap(ctx, &answer.state);
                    if (send_msg(link->fd, &answer, sc->cookie, now_s() + SIDE_SEND_S) != 0)
                        link->gone = 1;
                }
            }
            if (link->gone)
                drop(link);
        }
    }
    if (pfds != two)
        free(pfds);
    if (which != two_which)
        free(which);
    return event;
}

int cb_sidechannel_linked(const cb_sidechannel *sc)
{
    return sc->on && sc->links != NULL && sc->links[0].fd >= 0 && !sc->links[0].gone;
}

int cb_sidechannel_fired(cb_sidechannel *sc)
{
    if (!sc->on || sc->rank == 0 || sc->links[0].fd < 0)
        return -1;
    side_msg fired = {.type = SIDE_FIRED, .rank = sc->rank};
    if (send_msg(sc->links[0].fd, &fired, sc->cookie, now_s() + SIDE_SEND_S) != 0) {
        drop(&sc->links[0]);
        return -1;
    }
    return 0;
}

int cb_sidechannel_gather(cb_sidechannel *sc, const cb_hang_state *own, int trigger,
                          double limit_s, double wait_s, cb_hang_report *rep)
{
    memset(rep, 0, sizeof *rep);
    rep->ranks = calloc((size_t)sc->nranks, sizeof *rep->ranks);
    struct pollfd *pfds = calloc((size_t)sc->nranks, sizeof *pfds);
    int *which = calloc((size_t)sc->nranks, sizeof *which);
    if (rep->ranks == NULL || pfds == NULL || which == NULL) {
        free(rep->ranks);
        free(pfds);
        free(which);
        rep->ranks = NULL;
        return -1;
    }
    rep->nranks = sc->nranks;
    rep->trigger = trigger;
    rep->limit_s = limit_s;
    rep->wait_s = wait_s;
    double deadline = now_s() + wait_s;
    int waiting = 0;
    for (int r = 0; r < sc->nranks; r++) {
        cb_hang_rank *x = &rep->ranks[r];
        struct cb_side_link *link = &sc->links[r];
        x->state.rank = r;
        x->state.iteration = -1;
        snprintf(x->state.host, sizeof x->state.host, "%s", link->host);
        side_msg ask = {.type = SIDE_ASK};
        if (r == 0) {
            x->state = *own;
            x->answer = CB_HANG_ANSWERED;
        } else if (link->fd < 0) {
            x->answer = link->gone ? CB_HANG_LEFT : CB_HANG_UNREACHED;
        } else if (link->gone || send_msg(link->fd, &ask, sc->cookie, now_s() + 0.2) != 0) {
            x->answer = CB_HANG_LEFT;
            drop(link);
        } else {
            x->answer = CB_HANG_SILENT;
            waiting++;
        }
    }
    while (waiting > 0 && now_s() < deadline) {
        int n = watch_list(sc, pfds, which);
        if (n == 0 || poll(pfds, (nfds_t)n, ms_until(deadline)) <= 0)
            continue;
        for (int k = 0; k < n; k++) {
            int r = which[k];
            struct cb_side_link *link = &sc->links[r];
            if (pfds[k].revents == 0)
                continue;
            int got;
            while ((got = receive(link, sc->cookie)) == 1)
                if (link->in.type == SIDE_STATE && rep->ranks[r].answer == CB_HANG_SILENT) {
                    rep->ranks[r].state = link->in.state;
                    rep->ranks[r].state.rank = r;
                    rep->ranks[r].answer = CB_HANG_ANSWERED;
                    waiting--;
                }
            if (got < 0) {
                if (rep->ranks[r].answer == CB_HANG_SILENT) {
                    rep->ranks[r].answer = CB_HANG_LEFT;
                    waiting--;
                }
                drop(link);
            }
        }
    }
    free(pfds);
    free(which);
    cb_hang_merge(rep);
    return 0;
}

void cb_sidechannel_release(cb_sidechannel *sc, int code, double wait_s,
                            const cb_hang_report *rep)
{
    double deadline = now_s() + wait_s;
    for (int r = 1; r < sc->nlinks; r++) {
        struct cb_side_link *link = &sc->links[r];
        side_msg bye = {.type = SIDE_EXIT, .code = code};
        if (link->fd >= 0 && send_msg(link->fd, &bye, sc->cookie, now_s() + 0.1) != 0)
            drop(link);
    }
    /* A rank that exits closes its end; wait for those, not for the silent. */
    for (int r = 1; r < sc->nlinks; r++) {
        struct cb_side_link *link = &sc->links[r];
        if (rep != NULL && rep->ranks != NULL && r < rep->nranks &&
            rep->ranks[r].answer != CB_HANG_ANSWERED)
            continue;
        while (link->fd >= 0 && now_s() < deadline) {
            struct pollfd pfd = {link->fd, POLLIN, 0};
            if (poll(&pfd, 1, ms_until(deadline)) > 0 && receive(link, sc->cookie) < 0)
                drop(link);
        }
    }
}
