#include "safety/sidechannel_int.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

double cb_side_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int cb_side_ms_until(double deadline)
{
    double left = deadline - cb_side_now();
    return left <= 0 ? 0 : (int)(left * 1000) + 1;
}

/* The MAC of msg under key: every byte before the mac field. */
static void side_mac(const unsigned char *key, const side_msg *msg, unsigned char *out)
{
    cb_hmac_sha256(key, SIDE_KEY_LEN, msg, offsetof(side_msg, mac), NULL, 0, out);
}

void cb_side_link_key(const unsigned char *secret, const unsigned char *rank_nonce,
                   const unsigned char *root_nonce, unsigned char *key)
{
    cb_hmac_sha256(secret, SIDE_KEY_LEN, rank_nonce, SIDE_NONCE_LEN, root_nonce, SIDE_NONCE_LEN,
                   key);
}

int cb_side_send(struct cb_side_link *link, side_msg *msg, double deadline)
{
    msg->magic = SIDE_MAGIC;
    msg->rank = link->self;
    msg->seq = ++link->sent;
    side_mac(link->key, msg, msg->mac);
    const char *p = (const char *)msg;
    size_t left = sizeof *msg;
    while (left > 0) {
        ssize_t n = send(link->fd, p, left, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            p += n;
            left -= (size_t)n;
            continue;
        }
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            return -1;
        struct pollfd pfd = {link->fd, POLLOUT, 0};
        if (poll(&pfd, 1, cb_side_ms_until(deadline)) <= 0 && cb_side_now() >= deadline)
            return -1;
    }
    return 0;
}

int cb_side_read(struct cb_side_link *link)
{
    for (;;) {
        ssize_t n = recv(link->fd, (char *)&link->in + link->have, sizeof link->in - link->have,
                         MSG_DONTWAIT);
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
            link->gone = 1;
            link->ended = 1;   /* the kernel closes a killed process's sockets */
            return -1;
        }
        if (n < 0)
            return 0;
        link->have += (size_t)n;
        if (link->have < sizeof link->in)
            continue;
        link->have = 0;
        return 1;
    }
}

int cb_side_check(struct cb_side_link *link, const unsigned char *key)
{
    unsigned char mac[SIDE_KEY_LEN];
    side_mac(key, &link->in, mac);
    if (link->in.magic != SIDE_MAGIC || !cb_mac_equal(mac, link->in.mac, sizeof mac) ||
        link->in.rank != link->peer || link->in.seq != link->got + 1)
        return 0;
    link->got++;
    link->in.state.host[CB_HANG_HOSTLEN - 1] = '\0';
    link->in.state.doing[CB_HANG_DOINGLEN - 1] = '\0';
    link->in.state.op[CB_HANG_OPLEN - 1] = '\0';
    return 1;
}

int cb_side_receive(struct cb_side_link *link)
{
    int got = cb_side_read(link);
    if (got == 1 && !cb_side_check(link, link->key)) {
        link->gone = 1;   /* a forged, replayed or garbled message: refused */
        return -1;
    }
    return got;
}

void cb_side_msg_init(side_msg *msg, int type)
{
    memset(msg, 0, sizeof *msg);   /* padding too: the MAC covers every byte */
    msg->type = (uint32_t)type;
}

void cb_side_drop(struct cb_side_link *link)
{
    if (link->fd >= 0)
        close(link->fd);
    link->fd = -1;
    link->gone = 1;
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
            while (event == CB_SIDE_NONE && cb_side_receive(link) == 1) {
                if (sc->rank == 0 && link->in.type == SIDE_FIRED) {
                    *arg = which[k];
                    event = CB_SIDE_FIRED;
                } else if (sc->rank != 0 && link->in.type == SIDE_EXIT) {
                    *arg = link->in.code;
                    event = CB_SIDE_EXIT;
                } else if (sc->rank != 0 && link->in.type == SIDE_ASK) {
                    side_msg answer;
                    cb_side_msg_init(&answer, SIDE_STATE);
                    snap(ctx, &answer.state);
                    if (cb_side_send(link, &answer, cb_side_now() + SIDE_SEND_S) != 0)
                        link->gone = 1;
                }
            }
            /* A peer's end closed: its process ended (SIGKILL, the OOM
             * killer, a crash), or it left after the run; the watchdog
             * judges which (cb_watchdog_set_lost). */
            if (link->ended && event == CB_SIDE_NONE) {
                *arg = which[k];
                event = CB_SIDE_LOST;
            }
            if (link->gone)
                cb_side_drop(link);
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
    side_msg fired;
    cb_side_msg_init(&fired, SIDE_FIRED);
    if (cb_side_send(&sc->links[0], &fired, cb_side_now() + SIDE_SEND_S) != 0) {
        cb_side_drop(&sc->links[0]);
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
    double deadline = cb_side_now() + wait_s;
    int waiting = 0;
    for (int r = 0; r < sc->nranks; r++) {
        cb_hang_rank *x = &rep->ranks[r];
        struct cb_side_link *link = &sc->links[r];
        x->state.rank = r;
        x->state.iteration = -1;
        snprintf(x->state.host, sizeof x->state.host, "%s", link->host);
        side_msg ask;
        cb_side_msg_init(&ask, SIDE_ASK);
        if (r == 0) {
            x->state = *own;
            x->answer = CB_HANG_ANSWERED;
        } else if (link->fd < 0) {
            x->answer = link->gone ? CB_HANG_LEFT : CB_HANG_UNREACHED;
        } else if (link->gone || cb_side_send(link, &ask, cb_side_now() + 0.2) != 0) {
            x->answer = CB_HANG_LEFT;
            cb_side_drop(link);
        } else {
            x->answer = CB_HANG_SILENT;
            waiting++;
        }
    }
    while (waiting > 0 && cb_side_now() < deadline) {
        int n = watch_list(sc, pfds, which);
        if (n == 0 || poll(pfds, (nfds_t)n, cb_side_ms_until(deadline)) <= 0)
            continue;
        for (int k = 0; k < n; k++) {
            int r = which[k];
            struct cb_side_link *link = &sc->links[r];
            if (pfds[k].revents == 0)
                continue;
            int got;
            while ((got = cb_side_receive(link)) == 1)
                if (link->in.type == SIDE_STATE && rep->ranks[r].answer == CB_HANG_SILENT) {
                    rep->ranks[r].state = link->in.state;
                    rep->ranks[r].state.rank = r;
                    /* The host as MPI gave it, not as the answer says. */
                    memcpy(rep->ranks[r].state.host, link->host, sizeof link->host);
                    rep->ranks[r].answer = CB_HANG_ANSWERED;
                    waiting--;
                }
            if (got < 0) {
                if (rep->ranks[r].answer == CB_HANG_SILENT) {
                    rep->ranks[r].answer = CB_HANG_LEFT;
                    waiting--;
                }
                cb_side_drop(link);
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
    double deadline = cb_side_now() + wait_s;
    for (int r = 1; r < sc->nlinks; r++) {
        struct cb_side_link *link = &sc->links[r];
        side_msg bye;
        cb_side_msg_init(&bye, SIDE_EXIT);
        bye.code = code;
        if (link->fd >= 0 && cb_side_send(link, &bye, cb_side_now() + 0.1) != 0)
            cb_side_drop(link);
    }
    /* A rank that exits closes its end; wait for those, not for the silent. */
    for (int r = 1; r < sc->nlinks; r++) {
        struct cb_side_link *link = &sc->links[r];
        if (rep != NULL && rep->ranks != NULL && r < rep->nranks &&
            rep->ranks[r].answer != CB_HANG_ANSWERED)
            continue;
        while (link->fd >= 0 && cb_side_now() < deadline) {
            struct pollfd pfd = {link->fd, POLLIN, 0};
            if (poll(&pfd, 1, cb_side_ms_until(deadline)) > 0 && cb_side_receive(link) < 0)
                cb_side_drop(link);
        }
    }
}

const char *cb_sidechannel_host(const cb_sidechannel *sc, int r)
{
    if (sc->rank != 0)
        return r == 0 ? sc->host0 : "";
    return sc->links != NULL && r >= 0 && r < sc->nlinks ? sc->links[r].host : "";
}
