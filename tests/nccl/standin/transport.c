/*
 * The stand-in's wires (see standin.h): TCP sockets between the ranks of a
 * communicator, one connection per pair, made by bootstrap.c. A collective
 * is one exchange: each rank sends a message to some peers and receives one
 * from some peers, all at once (poll), so that no order of sends and
 * receives can deadlock on full socket buffers. Each message starts with
 * its length, which the receiver checks against what it expects: a
 * mismatch fails the operation instead of shifting every later message.
 * Simple, not fast: correctness and NCCL's failure behaviour matter here.
 */
#define _GNU_SOURCE   /* syscall */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "standin.h"

/* A communicator's connections: fds[p] reaches rank p (-1 for itself). */
struct standin_net {
    int rank;
    int nranks;
    uint64_t magic;     /* the bootstrap's, inherited (mixed) by splits */
    unsigned splits;    /* splits and shrinks made from it, as NCCL's childCount */
    int *fds;
};

/* The streams' clock. */
double standin_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The process's rank for faults and traces, under Open MPI's, MPICH's
 * (Hydra), PMIx's, torchrun's or Slurm's name: the same with or without
 * mpirun. Not the communicator's rank, which the bootstrap gives. */
int standin_process_rank(void)
{
    static const char *const names[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "RANK",
                                        "SLURM_PROCID"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (standin_env_long(names[i], -1) >= 0)
            return (int)standin_env_long(names[i], -1);
    return 0;
}

standin_net *standin_net_new(int rank, int nranks, uint64_t magic)
{
    standin_net *net = calloc(1, sizeof *net);
    int *fds = calloc((size_t)nranks, sizeof *fds);
    if (net == NULL || fds == NULL) {
        free(net);
        free(fds);
        return NULL;
    }
    for (int p = 0; p < nranks; p++)
        fds[p] = -1;
    net->rank = rank;
    net->nranks = nranks;
    net->magic = magic;
    net->fds = fds;
    return net;
}

void standin_net_set_peer(standin_net *net, int peer, int fd)
{
    int on = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    net->fds[peer] = fd;
}

int standin_net_peer(const standin_net *net, int peer)
{
    return net->fds[peer];
}

int standin_net_rank(const standin_net *net)
{
    return net->rank;
}

int standin_net_size(const standin_net *net)
{
    return net->nranks;
}

uint64_t standin_net_child_magic(standin_net *net, const unsigned char *members)
{
    /* Every rank splits in the same order, so all agree on the count. A
     * shrink, which the excluded ranks never call, leaves the count as NCCL
     * leaves its splitCount (init.cc ncclCommInitChildComm 2.28.9: "++comm->
     * splitCount" for splits only), and takes its kept ranks instead. */
    uint64_t x = net->magic ^ (0x9e3779b97f4a7c15ull * (members == NULL ? ++net->splits
                                                                         : net->splits + 1));
    for (int r = 0; members != NULL && r < net->nranks; r++)
        x = (x ^ (uint64_t)(members[r] != 0) << (r % 64)) * 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x * 0xbf58476d1ce4e5b9ull;
}

void standin_net_free(standin_net *net)
{
    if (net == NULL)
        return;
    for (int p = 0; p < net->nranks; p++)
        if (net->fds[p] >= 0)
            close(net->fds[p]);
    free(net->fds);
    free(net);
}

void standin_net_shutdown(standin_net *net)
{
    for (int p = 0; net != NULL && p < net->nranks; p++)
        if (net->fds[p] >= 0)
            shutdown(net->fds[p], SHUT_RDWR);
}

int standin_send_all(int fd, const void *buf, size_t bytes)
{
    const char *p = buf;
    while (bytes > 0) {
        /* MSG_NOSIGNAL: a peer gone is an error to report, not SIGPIPE. */
        ssize_t n = send(fd, p, bytes, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        bytes -= (size_t)n;
    }
    return 0;
}

int standin_recv_all(int fd, void *buf, size_t bytes)
{
    char *p = buf;
    while (bytes > 0) {
        ssize_t n = recv(fd, p, bytes, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;   /* 0: the peer closed its end */
        p += n;
        bytes -= (size_t)n;
    }
    return 0;
}

/* One direction of one peer's message: its length header, then the data. */
typedef struct transfer {
    uint64_t header;
    size_t done;        /* bytes of header and data moved so far */
    size_t bytes;
    unsigned char *data;
} transfer;

static size_t transfer_left(const transfer *t)
{
    return sizeof t->header + t->bytes - t->done;
}

/* Move what the socket takes (or gives) now; -1 on a closed or failed
 * connection. */
static int transfer_step(int fd, transfer *t, int sending)
{
    unsigned char *at = t->done < sizeof t->header ? (unsigned char *)&t->header + t->done
                                                    : t->data + (t->done - sizeof t->header);
    size_t len = t->done < sizeof t->header ? sizeof t->header - t->done : transfer_left(t);
    ssize_t n = sending ? send(fd, at, len, MSG_NOSIGNAL | MSG_DONTWAIT)
                        : recv(fd, at, len, MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
        return 0;
    if (n <= 0)
        return -1;
    t->done += (size_t)n;
    return 0;
}

ncclResult_t standin_net_exchange(standin_net *net, const void *const *send,
                                  const size_t *send_bytes, void *const *recv,
                                  const size_t *recv_bytes, const char **what)
{
    int n = net->nranks;
    transfer *out = calloc((size_t)n, sizeof *out), *in = calloc((size_t)n, sizeof *in);
    struct pollfd *fds = calloc((size_t)n, sizeof *fds);
    ncclResult_t res = ncclSuccess;
    if (out == NULL || in == NULL || fds == NULL) {
        *what = "out of memory";
        res = ncclSystemError;
        goto done;
    }
    for (int p = 0; p < n; p++) {
        if (p == net->rank)
            continue;
        if (send != NULL && send_bytes[p] > 0) {
            out[p].bytes = send_bytes[p];
            out[p].header = send_bytes[p];
            out[p].data = (unsigned char *)(uintptr_t)send[p];
        } else {
            out[p].done = sizeof out[p].header;   /* nothing to send */
        }
        if (recv != NULL && recv_bytes[p] > 0) {
            in[p].bytes = recv_bytes[p];
            in[p].data = recv[p];
        } else {
            in[p].done = sizeof in[p].header;
        }
    }
    double start = standin_now();
    for (;;) {
        int waiting = 0;
        for (int p = 0; p < n; p++) {
            fds[p].fd = -1;
            fds[p].events = 0;
            if (p == net->rank)
                continue;
            if (transfer_left(&out[p]) > 0)
                fds[p].events |= POLLOUT;
            if (transfer_left(&in[p]) > 0)
                fds[p].events |= POLLIN;
            if (fds[p].events != 0) {
                fds[p].fd = net->fds[p];
                waiting++;
            }
        }
        if (waiting == 0)
            break;
        /* Spin (yielding) for the first second, as MPI and NCCL's kernels
         * poll: on a loaded machine a sleeping rank wakes milliseconds late.
         * Then sleep: a peer may never come. */
        int ready = poll(fds, (nfds_t)n, standin_now() - start < 1.0 ? 0 : -1);
        if (ready == 0) {
            syscall(SYS_sched_yield);   /* not the counted sched_yield of the program */
            continue;
        }
        if (ready < 0) {
            if (errno == EINTR)
                continue;
            *what = "poll failed";
            res = ncclSystemError;
            goto done;
        }
        for (int p = 0; p < n; p++) {
            if (fds[p].fd < 0 || fds[p].revents == 0)
                continue;
            int had_header = in[p].done >= sizeof in[p].header;
            if (((fds[p].revents & POLLOUT) && transfer_step(fds[p].fd, &out[p], 1) != 0) ||
                ((fds[p].revents & (POLLIN | POLLHUP | POLLERR)) && transfer_left(&in[p]) > 0 &&
                 transfer_step(fds[p].fd, &in[p], 0) != 0) ||
                ((fds[p].revents & (POLLHUP | POLLERR)) && !(fds[p].events & POLLIN))) {
                /* NCCL reports a peer that went away as a remote error. */
                *what = "a peer closed its connection (remote process exited?)";
                res = ncclRemoteError;
                goto done;
            }
            if (!had_header && in[p].done >= sizeof in[p].header && in[p].header != in[p].bytes) {
                *what = "a peer sent a message of another size than the one expected "
                        "(mismatched counts or operations across ranks)";
                res = ncclInvalidUsage;
                goto done;
            }
        }
    }
done:
    free(out);
    free(in);
    free(fds);
    return res;
}

ncclResult_t standin_net_allgather_among(standin_net *net, const unsigned char *members,
                                         const void *mine, size_t bytes, void *all,
                                         const char **what)
{
    int n = net->nranks;
    const void **send = calloc((size_t)n, sizeof *send);
    void **recv = calloc((size_t)n, sizeof *recv);
    size_t *sizes = calloc((size_t)n, sizeof *sizes);
    ncclResult_t res = ncclSystemError;
    *what = "out of memory";
    if (send != NULL && recv != NULL && sizes != NULL) {
        for (int p = 0; p < n; p++) {
            int member = members == NULL || members[p];
            send[p] = mine;
            recv[p] = (char *)all + (size_t)p * bytes;
            sizes[p] = member ? bytes : 0;
        }
        memmove((char *)all + (size_t)net->rank * bytes, mine, bytes);
        res = standin_net_exchange(net, send, sizes, recv, sizes, what);
    }
    free(send);
    free(recv);
    free(sizes);
    return res;
}

ncclResult_t standin_net_allgather(standin_net *net, const void *mine, size_t bytes, void *all,
                                   const char **what)
{
    return standin_net_allgather_among(net, NULL, mine, bytes, all, what);
}

ncclResult_t standin_net_broadcast(standin_net *net, int root, void *buf, size_t bytes,
                                   const char **what)
{
    int n = net->nranks;
    const void **send = calloc((size_t)n, sizeof *send);
    void **recv = calloc((size_t)n, sizeof *recv);
    size_t *sizes = calloc((size_t)n, sizeof *sizes), *none = calloc((size_t)n, sizeof *none);
    ncclResult_t res = ncclSystemError;
    *what = "out of memory";
    if (send != NULL && recv != NULL && sizes != NULL && none != NULL) {
        for (int p = 0; p < n; p++) {
            send[p] = buf;
            recv[p] = buf;
        }
        if (net->rank == root) {
            for (int p = 0; p < n; p++)
                sizes[p] = bytes;
            res = standin_net_exchange(net, send, sizes, NULL, none, what);
        } else {
            sizes[root] = bytes;
            res = standin_net_exchange(net, NULL, none, recv, sizes, what);
        }
    }
    free(send);
    free(recv);
    free(sizes);
    free(none);
    return res;
}

ncclResult_t standin_net_barrier(standin_net *net)
{
    const char *what = "";
    unsigned char mine = 1, *all = malloc((size_t)net->nranks);
    if (all == NULL)
        return standin_fail(ncclSystemError, "out of memory");
    ncclResult_t res = standin_net_allgather(net, &mine, 1, all, &what);
    free(all);
    return res == ncclSuccess ? res : standin_fail(res, what);
}
