/*
 * The hang report's side channel under disturbance (issue 36, item 6), run
 * by tests/faults/side_channel.sh on 4 ranks. Rank 0 runs an intruder
 * thread that finds the port rank 0 listens on during the set-up and, while
 * the other ranks' connections are held back a second (this program's
 * connect()), opens silent connections and one that says HELLO under a
 * wrong key. Then:
 *   - every rank joins all the same (each connection has its own deadline);
 *   - the port is on the loopback only (all ranks share this machine), and
 *     closed after the set-up;
 *   - the forged HELLO is refused (closed, no WELCOME);
 *   - rank 2 stops answering: rank 0's questions name it silent, and every
 *     rank with the host MPI gave it (each rank passes its own label).
 * Prints "probe: ok" on rank 0 when all of it holds; exits 1 otherwise.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <mpi.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "control/mpi.h"
#include "safety/sidechannel_int.h"

#define SILENT 6
#define MAX_SOCKETS 256

/* This rank's connect() waits a second while set: the ranks' joins then
 * come after the intruder's connections. */
static atomic_int slow_connect;

int connect(int fd, const struct sockaddr *sa, socklen_t len)
{
    int (*real)(int, const struct sockaddr *, socklen_t) =
        (int (*)(int, const struct sockaddr *, socklen_t))dlsym(RTLD_NEXT, "connect");
    if (atomic_load(&slow_connect))
        nanosleep(&(struct timespec){1, 0}, NULL);
    return real(fd, sa, len);
}

typedef struct intruder {
    unsigned long before[MAX_SOCKETS];   /* this process's listening sockets before */
    int nbefore;
    uint32_t addr;    /* the side channel's, network order */
    uint16_t port;    /* host order; 0: never found */
    int refused;      /* the forged HELLO was closed without an answer */
    int fds[SILENT + 1];
} intruder;

/* The inodes of this process's sockets. */
static int own_sockets(unsigned long *inodes, int room)
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL && n < room) {
        char path[300], target[64];
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        ssize_t len = readlink(path, target, sizeof target - 1);
        unsigned long inode;
        if (len > 0 && (target[len] = '\0', sscanf(target, "socket:[%lu]", &inode) == 1))
            inodes[n++] = inode;
    }
    if (d != NULL)
        closedir(d);
    return n;
}

static int listed(const unsigned long *set, int n, unsigned long inode)
{
    for (int i = 0; i < n; i++)
        if (set[i] == inode)
            return 1;
    return 0;
}

/* A listening IPv4 socket of this process not in in->before: 1 when found. */
static int find_listener(intruder *in)
{
    unsigned long mine[MAX_SOCKETS];
    int nmine = own_sockets(mine, MAX_SOCKETS);
    FILE *f = fopen("/proc/self/net/tcp", "r");
    char line[512];
    int found = 0;
    while (f != NULL && !found && fgets(line, sizeof line, f) != NULL) {
        unsigned addr, port, state;
        unsigned long inode;
        if (sscanf(line, " %*d: %x:%x %*x:%*x %x %*x:%*x %*x:%*x %*x %*u %*u %lu", &addr, &port,
                   &state, &inode) == 4 &&
            state == 0x0A && listed(mine, nmine, inode) && !listed(in->before, in->nbefore, inode)) {
            in->addr = addr;   /* /proc prints it as the host reads the bytes */
            in->port = (uint16_t)port;
            found = 1;
        }
    }
    if (f != NULL)
        fclose(f);
    return found;
}

static int dial(uint16_t port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static void *intrude(void *arg)
{
    intruder *in = arg;
    for (int i = 0; i < 20000 && !find_listener(in); i++)
        nanosleep(&(struct timespec){0, 500 * 1000}, NULL);
    if (in->port == 0)
        return NULL;
    for (int i = 0; i < SILENT; i++)
        in->fds[i] = dial(in->port);
    /* A HELLO as rank 1 would send it, but under a key that is not the run's. */
    struct cb_side_link fake = {.fd = dial(in->port), .self = 1, .peer = 0};
    in->fds[SILENT] = fake.fd;
    if (fake.fd < 0 || getrandom(fake.key, sizeof fake.key, 0) != (ssize_t)sizeof fake.key)
        return NULL;
    side_msg hello;
    cb_side_msg_init(&hello, SIDE_HELLO);
    hello.state.rank = 1;
    if (cb_side_send(&fake, &hello, cb_side_now() + 2) != 0)
        return NULL;
    char c;
    struct pollfd pfd = {fake.fd, POLLIN, 0};
    in->refused = poll(&pfd, 1, 5000) == 1 && recv(fake.fd, &c, 1, 0) == 0;
    return NULL;
}

/* The state a rank answers with. */
static void snap(void *ctx, cb_hang_state *out)
{
    memset(out, 0, sizeof *out);
    out->rank = *(int *)ctx;
    snprintf(out->doing, sizeof out->doing, "probing");
    snprintf(out->host, sizeof out->host, "a host the answer makes up");
}

static int failures;
#define EXPECT(cond, ...)                                                   \
    do {                                                                    \
        if (!(cond)) {                                                      \
            fprintf(stderr, "probe: rank %d: ", rank);                      \
            fprintf(stderr, __VA_ARGS__);                                   \
            fputc('\n', stderr);                                            \
            failures++;                                                     \
        }                                                                   \
    } while (0)

int main(int argc, char **argv)
{
    cb_ctl *world = NULL;
    if (cb_ctl_mpi_world(&argc, &argv, &world) != 0)
        return 1;
    int rank = 0, nranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    char host[CB_HANG_HOSTLEN], why[256];
    snprintf(host, sizeof host, "probe-host-%d", rank);
    intruder in;
    memset(&in, 0, sizeof in);
    pthread_t thread;
    int intruding = 0;
    if (rank == 0) {
        in.nbefore = own_sockets(in.before, MAX_SOCKETS);
        intruding = pthread_create(&thread, NULL, intrude, &in) == 0;
    } else {
        atomic_store(&slow_connect, 1);
    }
    cb_sidechannel sc;
    double t0 = MPI_Wtime();
    int rc = cb_sidechannel_open(&sc, world, host, why, sizeof why);
    double took = MPI_Wtime() - t0;
    atomic_store(&slow_connect, 0);
    if (intruding)
        pthread_join(thread, NULL);
    EXPECT(rc == 0, "not every rank joined within %.1f s: %s", took, why);
    if (rank == 0) {
        EXPECT(in.port != 0, "the intruder never found the side channel's port");
        EXPECT(in.addr == htonl(INADDR_LOOPBACK), "rank 0 listens on %s, not on the loopback alone",
               inet_ntoa((struct in_addr){in.addr}));
        EXPECT(in.refused, "a HELLO under a wrong key was not refused");
        int again = in.port != 0 ? dial(in.port) : -1;
        EXPECT(again < 0, "the port still takes connections after the set-up");
        if (again >= 0)
            close(again);
        for (int i = 0; i <= SILENT; i++)
            if (in.fds[i] > 0)
                close(in.fds[i]);
        for (int r = 0; r < nranks && sc.links != NULL; r++) {
            char want[CB_HANG_HOSTLEN];
            snprintf(want, sizeof want, "probe-host-%d", r);
            EXPECT(strcmp(sc.links[r].host, want) == 0, "rank %d's host is '%s', not '%s'", r,
                   sc.links[r].host, want);
        }
    }
    /* Rank 2 answers nothing (it waits in the barrier); the others serve
     * until rank 0 says exit. */
    if (rank == 0 && rc == 0) {
        cb_hang_state own;
        snap(&rank, &own);
        snprintf(own.host, sizeof own.host, "%s", host);
        cb_hang_report rep;
        EXPECT(cb_sidechannel_gather(&sc, &own, 0, 1, 2.0, &rep) == 0, "no report");
        for (int r = 0; r < nranks && rep.ranks != NULL; r++) {
            char want[CB_HANG_HOSTLEN];
            snprintf(want, sizeof want, "probe-host-%d", r);
            cb_hang_answer a = rep.ranks[r].answer;
            EXPECT(a == (r == 2 ? CB_HANG_SILENT : CB_HANG_ANSWERED), "rank %d answered '%s'", r,
                   cb_hang_answer_name(a));
            EXPECT(strcmp(rep.ranks[r].state.host, want) == 0, "the report names rank %d's host "
                   "'%s', not '%s'", r, rep.ranks[r].state.host, want);
        }
        int named = 0;
        for (int l = 0; l < rep.nlines; l++)
            named |= strstr(rep.lines[l], "silent: rank 2 (probe-host-2)") != NULL;
        EXPECT(named, "no line names rank 2 and its host as silent");
        cb_sidechannel_release(&sc, 3, 1.0, &rep);
        free(rep.ranks);
    } else if (rc == 0 && rank != 2) {
        int event = CB_SIDE_NONE, code = 0;
        for (int i = 0; i < 100 && event != CB_SIDE_EXIT; i++)
            event = cb_sidechannel_serve(&sc, 100, -1, snap, &rank, &code);
        EXPECT(event == CB_SIDE_EXIT && code == 3, "rank 0's exit never came");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    cb_sidechannel_close(&sc);
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all == 0)
        printf("probe: ok\n");
    cb_ctl_free(&world);
    MPI_Finalize();
    return all == 0 ? 0 : 1;
}
