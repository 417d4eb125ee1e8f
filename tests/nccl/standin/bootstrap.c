/*
 * The stand-in's bootstrap (see standin.h), modelled on NCCL's
 * (src/bootstrap.cc) without MPI, so that the stand-in cares nothing about
 * how its processes were launched:
 *   - ncclGetUniqueId (bootstrapGetUniqueId) starts a root: a listener on an
 *     ephemeral port and a detached thread that serves it (bootstrapCreateRoot,
 *     bootstrapRoot), and writes a random magic and the root's address into
 *     the id. With NCCL_COMM_ID=ip:port the id holds that address instead and
 *     rank 0's ncclCommInitRank starts the root there (init.cc,
 *     ncclCommInitRankDev).
 *   - ncclCommInitRank (bootstrapInit, sendToRoot) opens its own listener,
 *     connects to the root with magic, nranks, rank and that listener's
 *     address (the interface that reaches the root, as NCCL picks the one
 *     matching the root's subnet: bootstrapNetInit); once every rank has
 *     come the root answers each with the table of all ranks' addresses.
 *     NCCL's root hands each rank its ring neighbour and the ranks then
 *     all-gather over the ring; the stand-in hands out the whole table and
 *     connects every pair (transport.c), which is what its collectives use.
 *   - ncclCommSplit (init.cc, commGetSplitInfo, then bootstrapSplit) and
 *     ncclCommShrink all-gather color, key and a new listener's address over
 *     the PARENT's connections; the child's ranks, ordered by key then parent
 *     rank, connect among themselves under a magic derived from the parent's.
 * A rank that never comes leaves the others waiting for the root's answer
 * (or for its part of the split's all-gather) for ever, as in NCCL. The
 * injected failures of a non-blocking communicator (CB_STANDIN_FAIL_COMMINIT,
 * CB_STANDIN_FAIL_SPLIT) are the stand-in's own: the failing rank tells the
 * root (or the split's all-gather) that it will not join, and the others'
 * communicators are then never ready without blocking their callers.
 */
#define _DEFAULT_SOURCE   /* getifaddrs, IFF_UP */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "async_jobs.h"

#define STANDIN_ID_TAG "nccl stand-in"

/* What the 128-byte ncclUniqueId holds (NCCL's ncclBootstrapHandle: magic
 * and the root's socket address), and a tag ncclCommInitRank checks. */
typedef struct id_handle {
    uint64_t magic;
    struct sockaddr_in root;
    char tag[16];
} id_handle;
_Static_assert(sizeof(id_handle) <= sizeof(ncclUniqueId), "the handle fits in the id");

/* What a rank tells the root; the root's answer is a status, then, when
 * ROOT_OK, nranks addresses. */
typedef struct rank_hello {
    uint64_t magic;
    int32_t nranks;
    int32_t rank;
    int32_t never_joins;   /* the stand-in's injected failure (see above) */
    struct sockaddr_in listen;
} rank_hello;

enum { ROOT_OK, ROOT_PEER_NEVER_JOINS, ROOT_NRANKS_MISMATCH, ROOT_BAD_RANK };

/* What a rank sends a peer it connects to (NCCL's ncclSocketConnect sends
 * the magic first; the acceptor drops a connection of another magic). */
typedef struct peer_hello {
    uint64_t magic;
    int32_t rank;
} peer_hello;

static int listen_on(const struct sockaddr_in *where, struct sockaddr_in *bound)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0), on = 1;
    socklen_t len = sizeof *bound;
    if (fd < 0)
        return -1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (bind(fd, (const struct sockaddr *)where, sizeof *where) != 0 || listen(fd, 1024) != 0 ||
        getsockname(fd, (struct sockaddr *)bound, &len) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* A listener on an ephemeral port of every local address. */
static int listen_any(struct sockaddr_in *bound)
{
    struct sockaddr_in any = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY)};
    return listen_on(&any, bound);
}

/* Connect, retrying while refused for up to a minute, as NCCL's
 * ncclSocketConnect retries: with NCCL_COMM_ID the root may start late. */
static int connect_to(const struct sockaddr_in *addr)
{
    const struct timespec nap = {0, 10 * 1000 * 1000};
    for (int tries = 0; tries < 6000; tries++) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        if (fd < 0)
            return -1;
        if (connect(fd, (const struct sockaddr *)addr, sizeof *addr) == 0)
            return fd;
        int err = errno;
        close(fd);
        if (err != ECONNREFUSED && err != EINTR && err != ETIMEDOUT)
            return -1;
        nanosleep(&nap, NULL);
    }
    return -1;
}

/* NCCL_COMM_ID's ip:port (or host:port), NULL-free; -1 when malformed. */
static int comm_id_address(const char *text, struct sockaddr_in *addr)
{
    const char *colon = strrchr(text, ':');
    char host[256];
    if (colon == NULL || colon == text || (size_t)(colon - text) >= sizeof host)
        return -1;
    memcpy(host, text, (size_t)(colon - text));
    host[colon - text] = '\0';
    char *end = NULL;
    long port = strtol(colon + 1, &end, 10);
    if (*end != '\0' || port < 1 || port > 65535)
        return -1;
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *found = NULL;
    if (getaddrinfo(host, NULL, &hints, &found) != 0 || found == NULL)
        return -1;
    memcpy(addr, found->ai_addr, sizeof *addr);
    freeaddrinfo(found);
    addr->sin_port = htons((uint16_t)port);
    return 0;
}

typedef struct root_args {
    int listen_fd;
    uint64_t magic;
} root_args;

/* bootstrapRoot: take one hello per rank (the first says how many), then
 * answer every rank, and end. A connection of another magic is dropped. */
static void *root_serve(void *arg)
{
    root_args args = *(root_args *)arg;
    free(arg);
    int nranks = 0, status = ROOT_OK, got = 0;
    int *fds = NULL;
    struct sockaddr_in *table = NULL;
    while (nranks == 0 || got < nranks) {
        rank_hello hello;
        int fd = accept(args.listen_fd, NULL, NULL);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            goto out;
        }
        if (standin_recv_all(fd, &hello, sizeof hello) != 0 || hello.magic != args.magic) {
            close(fd);
            continue;
        }
        if (nranks == 0) {
            nranks = hello.nranks > 0 ? hello.nranks : 1;
            fds = malloc((size_t)nranks * sizeof *fds);
            table = calloc((size_t)nranks, sizeof *table);
            if (fds == NULL || table == NULL) {
                close(fd);
                goto out;
            }
        }
        fds[got++] = fd;
        if (hello.nranks != nranks)
            status = ROOT_NRANKS_MISMATCH;   /* NCCL: "mismatch in info from procs" */
        else if (hello.rank < 0 || hello.rank >= nranks || table[hello.rank].sin_family != 0)
            status = status == ROOT_OK ? ROOT_BAD_RANK : status;
        else
            table[hello.rank] = hello.listen;
        if (hello.never_joins && status == ROOT_OK)
            status = ROOT_PEER_NEVER_JOINS;
    }
    for (int i = 0; i < got; i++) {
        int32_t answer = status;
        /* A rank that left (it never joins) is no error here. */
        if (standin_send_all(fds[i], &answer, sizeof answer) == 0 && status == ROOT_OK)
            standin_send_all(fds[i], table, (size_t)nranks * sizeof *table);
    }
out:
    for (int i = 0; i < got; i++)
        close(fds[i]);
    free(fds);
    free(table);
    close(args.listen_fd);
    return NULL;
}

/* bootstrapCreateRoot: listen at *where (port 0: an ephemeral one, written
 * back) and serve it from a detached thread. */
static ncclResult_t root_start(struct sockaddr_in *where, uint64_t magic)
{
    root_args *args = malloc(sizeof *args);
    if (args == NULL)
        return standin_fail(ncclSystemError, "out of memory");
    struct sockaddr_in bound;
    args->magic = magic;
    args->listen_fd = listen_on(where, &bound);
    if (args->listen_fd < 0) {
        free(args);
        return standin_fail(ncclSystemError, "cannot listen for the bootstrap root");
    }
    where->sin_port = bound.sin_port;
    pthread_t thread;
    if (pthread_create(&thread, NULL, root_serve, args) != 0) {
        close(args->listen_fd);
        free(args);
        return standin_fail(ncclSystemError, "cannot start the bootstrap root's thread");
    }
    pthread_detach(thread);
    return ncclSuccess;
}

/* NCCL's magic is random (getRandomData); here time and process mixed. */
static uint64_t new_magic(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    uint64_t x = (uint64_t)t.tv_nsec * 0x9e3779b97f4a7c15ull ^ (uint64_t)t.tv_sec << 20 ^
                 (uint64_t)getpid() << 40;
    static _Atomic uint64_t made;
    x ^= ++made * 0xbf58476d1ce4e5b9ull;
    return x ^ (x >> 29);
}

/* 1 when name starts with one of the comma-separated prefixes. */
static int has_prefix(const char *name, const char *prefixes)
{
    for (const char *p = prefixes; *p != '\0';) {
        size_t n = strcspn(p, ",");
        if (n > 0 && strncmp(name, p, n) == 0)
            return 1;
        p += n + (p[n] == ',');
    }
    return 0;
}

/* The address the root listens on, in the order NCCL picks its bootstrap
 * interface (src/misc/socket.cc, ncclFindInterfaces, which bootstrapNetInit
 * calls): NCCL_SOCKET_IFNAME's prefixes when set, else "ib" interfaces,
 * else any but docker and lo, else docker, else lo. IPv4 only, interfaces
 * that are up; the loopback when nothing matches. So ranks in other
 * network namespaces (the Slurm tests' nodes) reach the root as on real
 * nodes. */
static struct in_addr root_address(void)
{
    struct in_addr found = {.s_addr = htonl(INADDR_LOOPBACK)};
    struct ifaddrs *all = NULL;
    if (getifaddrs(&all) != 0)
        return found;
    const char *user = getenv("NCCL_SOCKET_IFNAME");
    const char *passes[] = {"ib", "", "docker", "lo"};
    int npasses = user != NULL && user[0] != '\0' ? 1 : 4;
    for (int pass = 0; pass < npasses; pass++)
        for (struct ifaddrs *i = all; i != NULL; i = i->ifa_next) {
            if (i->ifa_addr == NULL || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP))
                continue;
            int match = npasses == 1  ? has_prefix(i->ifa_name, user)
                        : pass == 1   ? !has_prefix(i->ifa_name, "docker,lo")
                                      : has_prefix(i->ifa_name, passes[pass]);
            if (match) {
                found = ((const struct sockaddr_in *)i->ifa_addr)->sin_addr;
                freeifaddrs(all);
                return found;
            }
        }
    freeifaddrs(all);
    return found;
}

ncclResult_t ncclGetUniqueId(ncclUniqueId *id)
{
    id_handle h = {.magic = new_magic()};
    memset(id, 0, sizeof *id);
    snprintf(h.tag, sizeof h.tag, "%s", STANDIN_ID_TAG);
    const char *env = getenv("NCCL_COMM_ID");
    if (env != NULL) {
        if (comm_id_address(env, &h.root) != 0)
            return standin_fail(ncclInvalidArgument, "Invalid NCCL_COMM_ID, please use format: "
                                                     "<ipv4>:<port> or <hostname>:<port>");
        h.magic = 0x3d5a1ab1e;   /* NCCL_MAGIC: every rank must agree without the id */
    } else {
        h.root.sin_family = AF_INET;
        h.root.sin_addr = root_address();
        ncclResult_t res = root_start(&h.root, h.magic);
        if (res != ncclSuccess)
            return res;
    }
    memcpy(id->internal, &h, sizeof h);
    standin_trace("ncclGetUniqueId root=%s:%d", inet_ntoa(h.root.sin_addr),
                  ntohs(h.root.sin_port));
    return ncclSuccess;
}

/* The address others reach this rank's listener at: the local end of a
 * connection that already reaches them, with the listener's port. */
static struct sockaddr_in reachable(int connected_fd, const struct sockaddr_in *listener)
{
    struct sockaddr_in here = {.sin_family = AF_INET};
    socklen_t len = sizeof here;
    if (connected_fd < 0 || getsockname(connected_fd, (struct sockaddr *)&here, &len) != 0)
        here.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    here.sin_port = listener->sin_port;
    return here;
}

/* Connect every pair of ranks: rank r connects to each lower rank (its
 * listener queues the connection) and accepts one from each higher rank.
 * Consumes listen_fd. */
static ncclResult_t connect_all(int listen_fd, const struct sockaddr_in *table, int rank,
                                int nranks, uint64_t magic, standin_net **out,
                                standin_cancel *cancel)
{
    standin_net *net = standin_net_new(rank, nranks, magic);
    ncclResult_t res = ncclSystemError;
    if (net == NULL)
        goto done;
    peer_hello mine = {.magic = magic, .rank = rank};
    for (int q = 0; q < rank; q++) {
        int fd = connect_to(&table[q]);
        if (fd < 0)
            goto done;
        standin_net_set_peer(net, q, fd);
        if (standin_send_all(fd, &mine, sizeof mine) != 0)
            goto done;
    }
    for (int accepted = 0; accepted < nranks - 1 - rank;) {
        peer_hello theirs;
        int fd = accept(listen_fd, NULL, NULL);
        if (fd < 0 && errno == EINTR)
            continue;
        if (fd < 0)
            goto done;
        if (standin_recv_all(fd, &theirs, sizeof theirs) != 0 || theirs.magic != magic ||
            theirs.rank <= rank || theirs.rank >= nranks ||
            standin_net_peer(net, theirs.rank) >= 0) {
            close(fd);
            continue;
        }
        standin_net_set_peer(net, theirs.rank, fd);
        accepted++;
    }
    res = ncclSuccess;
done:
    standin_cancel_watch(cancel, 1, -1);
    close(listen_fd);
    if (res != ncclSuccess) {
        standin_net_free(net);
        return standin_fail(res, "cannot connect the ranks of the communicator");
    }
    *out = net;
    return ncclSuccess;
}

ncclResult_t standin_bootstrap_init(const ncclUniqueId *id, int nranks, int rank,
                                    int never_joins, standin_net **net, int *stuck)
{
    return standin_bootstrap_cancellable(id, nranks, rank, never_joins, net, stuck, NULL);
}

/* The sockets it waits on are watched by cancel: the root's, for its
 * answer (a peer that never comes), and the listener, for the peers. */
ncclResult_t standin_bootstrap_cancellable(const ncclUniqueId *id, int nranks, int rank,
                                           int never_joins, standin_net **net, int *stuck,
                                           standin_cancel *cancel)
{
    id_handle h;
    memcpy(&h, id->internal, sizeof h);
    *net = NULL;
    *stuck = 0;
    if (strncmp(h.tag, STANDIN_ID_TAG, sizeof h.tag) != 0 || h.root.sin_family != AF_INET)
        return standin_fail(ncclInvalidArgument, "the unique id was not made by ncclGetUniqueId");
    if (nranks < 1 || rank < 0 || rank >= nranks)
        return standin_fail(ncclInvalidArgument, "rank or nranks out of range");
    /* Which id: its root's address, as ncclGetUniqueId traced it, so that a
     * test matches each communicator to the one call that made its id. */
    standin_trace("bootstrap root=%s:%d rank=%d", inet_ntoa(h.root.sin_addr),
                  ntohs(h.root.sin_port), rank);
    /* NCCL_COMM_ID: the id names an address no root serves yet. */
    if (getenv("NCCL_COMM_ID") != NULL && rank == 0 && !never_joins) {
        struct sockaddr_in where = h.root;
        ncclResult_t res = root_start(&where, h.magic);
        if (res != ncclSuccess)
            return res;
    }
    struct sockaddr_in listener;
    int listen_fd = listen_any(&listener);
    if (listen_fd < 0)
        return standin_fail(ncclSystemError, "cannot listen for the bootstrap");
    int root = connect_to(&h.root);
    if (root < 0) {
        close(listen_fd);
        return standin_fail(ncclSystemError, "cannot connect to the bootstrap root");
    }
    /* Aborted before the sockets were watched: the waits below fail. */
    if (standin_cancel_watch(cancel, 0, root) | standin_cancel_watch(cancel, 1, listen_fd)) {
        shutdown(root, SHUT_RDWR);
        shutdown(listen_fd, SHUT_RDWR);
    }
    rank_hello hello = {.magic = h.magic, .nranks = nranks, .rank = rank,
                        .never_joins = never_joins, .listen = reachable(root, &listener)};
    int32_t status = ROOT_OK;
    struct sockaddr_in *table = calloc((size_t)nranks, sizeof *table);
    ncclResult_t res = ncclSystemError;
    const char *what = "the bootstrap root went away";
    if (table == NULL) {
        what = "out of memory";
    } else if (standin_send_all(root, &hello, sizeof hello) != 0) {
        /* what says it */
    } else if (never_joins) {
        res = ncclSuccess;   /* told the root; the caller fails */
    } else if (standin_recv_all(root, &status, sizeof status) == 0) {
        if (status == ROOT_NRANKS_MISMATCH || status == ROOT_BAD_RANK) {
            res = ncclInvalidArgument;
            what = status == ROOT_BAD_RANK ? "two ranks gave the same rank to ncclCommInitRank"
                                           : "nranks differs from the number of ranks initialising";
        } else if (status == ROOT_PEER_NEVER_JOINS ||
                   standin_recv_all(root, table, (size_t)nranks * sizeof *table) == 0) {
            res = ncclSuccess;
        }
    }
    standin_cancel_watch(cancel, 0, -1);
    close(root);
    if (res == ncclSuccess && !never_joins && status == ROOT_OK) {
        res = connect_all(listen_fd, table, rank, nranks, h.magic, net, cancel);
        free(table);
        return res;
    }
    standin_cancel_watch(cancel, 1, -1);
    close(listen_fd);
    free(table);
    *stuck = res == ncclSuccess && status == ROOT_PEER_NEVER_JOINS;
    return res == ncclSuccess ? res : standin_fail(res, what);
}

/* One rank's part of a split's all-gather (commSplitInfo and more). */
typedef struct split_info {
    int32_t color;
    int32_t key;
    int32_t never_joins;
    struct sockaddr_in listen;
} split_info;

ncclResult_t standin_bootstrap_split(standin_net *parent, const unsigned char *members, int color,
                                     int key, int never_joins, standin_net **child, int *stuck)
{
    int n = standin_net_size(parent), me = standin_net_rank(parent);
    uint64_t magic = standin_net_child_magic(parent, members);
    *child = NULL;
    *stuck = 0;
    struct sockaddr_in listener;
    int listen_fd = listen_any(&listener);
    if (listen_fd < 0)
        return standin_fail(ncclSystemError, "cannot listen for the split's bootstrap");
    split_info mine = {.color = color, .key = key, .never_joins = never_joins,
                       .listen = reachable(standin_net_peer(parent, me == 0 && n > 1 ? 1 : 0),
                                           &listener)};
    split_info *all = calloc((size_t)n, sizeof *all);
    int *order = calloc((size_t)n, sizeof *order);
    struct sockaddr_in *table = calloc((size_t)n, sizeof *table);
    const char *what = "out of memory";
    ncclResult_t res = ncclSystemError;
    if (all != NULL && order != NULL && table != NULL)
        res = standin_net_allgather_among(parent, members, &mine, sizeof mine, all, &what);
    int nchild = 0, child_rank = -1, peer_fails = 0;
    for (int r = 0; res == ncclSuccess && color != NCCL_SPLIT_NOCOLOR && r < n; r++) {
        if ((members != NULL && !members[r]) || all[r].color != color)
            continue;
        peer_fails |= all[r].never_joins;
        /* By key, ties in parent rank order (commGetSplitInfo's insertion). */
        int at = nchild;
        while (at > 0 && all[order[at - 1]].key > all[r].key) {
            order[at] = order[at - 1];
            at--;
        }
        order[at] = r;
        nchild++;
    }
    for (int i = 0; i < nchild; i++) {
        table[i] = all[order[i]].listen;
        if (order[i] == me)
            child_rank = i;
    }
    if (res == ncclSuccess && !never_joins && !peer_fails && child_rank >= 0) {
        res = connect_all(listen_fd, table, child_rank, nchild, magic, child, NULL);   /* closes it */
    } else {
        close(listen_fd);
        if (res != ncclSuccess)
            standin_fail(res, what);
    }
    free(all);
    free(order);
    free(table);
    if (res != ncclSuccess)
        return res;
    *stuck = peer_fails && !never_joins;
    return ncclSuccess;
}
