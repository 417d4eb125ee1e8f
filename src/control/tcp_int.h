/*
 * Inside the TCP control plane (control/launch.h's cb_ctl_tcp_world):
 *   tcp_wire.c   connections, frames, authentication, the progress engine
 *                and the queue of messages that came before they were asked for
 *   tcp_world.c  the rendezvous that builds the world, and its end
 *   tcp_ops.c    the collectives over binomial trees, point to point, splits,
 *                secrets: the ops table
 * docs/design/control-plane.md gives the design and the wire format.
 */
#ifndef CB_TCP_INT_H
#define CB_TCP_INT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "control/launch.h"
#include "common/hmac.h"

#define TCP_MAGIC 0x4342434cu        /* "CBCL" */
#define TCP_NONCE_LEN 16
#define TCP_MAC_LEN CB_SHA256_LEN
#define TCP_MACHINE_LEN CB_SHA256_LEN
/* A frame's header: magic, kind, group, tag, source, length, sequence
 * (big-endian), then the MAC of those bytes and the payload. */
#define TCP_HEAD_LEN 40
#define TCP_FRAME_HEAD (TCP_HEAD_LEN + TCP_MAC_LEN)
/* Before a connection is authenticated its frames are this small at most. */
#define TCP_HANDSHAKE_MAX 128
#define TCP_PAYLOAD_MAX (1u << 30)
/* A connection that has not finished its handshake within this is dropped. */
#define TCP_HANDSHAKE_S 10.0
/* Accepted connections awaiting their handshake, at most. */
#define TCP_MAX_PENDING 256

/* The group of the rendezvous' own messages (JOIN, TABLE, FAIL as tags),
 * and of LOST: a rank whose plane failed names the rank it lost to its
 * peers still connected (tcp_ops.c, tcp_lost_peer). */
#define TCP_GROUP_RENDEZVOUS UINT64_MAX
enum tcp_rv_tag { TCP_RV_JOIN = 1, TCP_RV_TABLE, TCP_RV_LOST };
/* Collectives' tags have the top bit; point to point's are the caller's. */
#define TCP_TAG_COLL (1ull << 63)

enum tcp_kind { TCP_HELLO = 1, TCP_CHALLENGE, TCP_PROOF, TCP_DATA };

enum tcp_state {
    TCP_CONNECTING,        /* connect() under way */
    TCP_AWAIT_CHALLENGE,   /* we connected and said HELLO */
    TCP_AWAIT_HELLO,       /* we accepted */
    TCP_AWAIT_PROOF,       /* we accepted and challenged */
    TCP_OPEN,
    TCP_CLOSED
};

typedef struct tcp_head {
    uint32_t kind;
    uint64_t group, tag;
    int32_t src;
    uint32_t len;
    uint64_t seq;
} tcp_head;

typedef struct tcp_conn {
    int fd;
    enum tcp_state state;
    int err;               /* TCP_CLOSED: errno, or EACCES for a failed authentication */
    int peer;              /* the other end's world rank (claimed until TCP_OPEN) */
    int rendezvous;        /* a connection of the rendezvous, not of the data ops */
    int accepted, opened;  /* we accepted it; its handshake finished */
    double by;             /* the handshake's deadline */
    unsigned char nonce_self[TCP_NONCE_LEN], nonce_peer[TCP_NONCE_LEN];
    unsigned char key_out[TCP_MAC_LEN], key_in[TCP_MAC_LEN];   /* once open */
    uint64_t seq_out, seq_in;   /* the last sent and accepted */
    unsigned char head[TCP_FRAME_HEAD];
    size_t have_head;
    tcp_head cur;          /* the frame being read, once its header is in */
    unsigned char *payload;
    size_t have_payload;
} tcp_conn;

/* A message that came before it was asked for. */
typedef struct tcp_msg {
    struct tcp_msg *next;
    uint64_t group, tag;
    int src;
    tcp_conn *conn;        /* where it came from (the rendezvous reads it) */
    size_t len;
    unsigned char *data;
} tcp_msg;

typedef struct tcp_peer {
    struct sockaddr_storage addr;   /* where its listener is */
    socklen_t addrlen;
    unsigned char machine[TCP_MACHINE_LEN];
    tcp_conn *out;         /* the connection this rank sends it on */
    int gone;              /* a connection with it closed or broke */
} tcp_peer;

typedef struct tcp_world {
    int rank, size;
    unsigned char key[CB_LAUNCH_KEYLEN];
    unsigned char run_nonce[TCP_NONCE_LEN];   /* rank 0's, for cb_ctl_secret */
    double timeout_s;
    tcp_peer *peers;
    int listen_fd, rv_fd;  /* this rank's listener; rank 0's rendezvous one (-1 after) */
    int rv_port;           /* the rendezvous port rank 0 listened on, or this rank reached */
    tcp_conn **conns;
    int nconns, cap_conns;
    void *pollfds;         /* struct pollfd[], grown as needed */
    int cap_pollfds;
    int depth;             /* the progress engine's nesting */
    tcp_msg *queue, *queue_tail;
    int first_gone;        /* the first peer marked gone, plus 1; 0: none yet */
    int refs;              /* the world's handle and every group alive */
    int closed;            /* the world's handle was freed: sockets closed */
    int auth_failures;     /* connections refused for a bad key */
    char auth_from[64];    /* the last one's address */
    char desc[192];        /* "none (...)": how the ranks met, for the preamble */
    char job[CB_LAUNCH_JOBLEN];   /* the launcher's job identity, "" none (launch.h) */
} tcp_world;

void cb_tcp_addr_text(const struct sockaddr *sa, char *out, size_t len);

/* A listener on port (0: ephemeral) of the address at; at NULL: of every
 * interface, IPv6 with IPv4 too where the kernel has IPv6. The fd, or -1
 * with errno. */
int cb_tcp_listen(const struct sockaddr *at, socklen_t atlen, int port, int backlog);

/* Starts a connection to addr (rank peer's, or rank 0's rendezvous); NULL
 * with errno when the socket cannot even be made. */
tcp_conn *cb_tcp_connect_start(tcp_world *w, const struct sockaddr *addr, socklen_t len, int peer,
                               int rendezvous);
/* Runs the engine until conn is open (0) or closed or past deadline (-1,
 * conn->err says why: ETIMEDOUT, EACCES, the socket's error). */
int cb_tcp_connect_wait(tcp_world *w, tcp_conn *conn, double deadline);

/* Sends one message on conn (open). 0, or -1 when the connection broke. */
int cb_tcp_send(tcp_world *w, tcp_conn *conn, uint64_t group, uint64_t tag, const void *data,
                size_t len);

/* Takes the first queued message of group, tag and source (< 0: any), running the
 * engine until it comes: 1 with *out (free it with cb_tcp_msg_free), 0 at
 * deadline (< 0: none; 0: look once without waiting), -1 when the source's
 * connection (via, or the peer's when via is NULL) is gone. */
int cb_tcp_take(tcp_world *w, uint64_t group, uint64_t tag, int src, tcp_conn *via,
                double deadline, tcp_msg **out);
void cb_tcp_msg_free(tcp_msg *m);

/* Runs the engine once: waits up to ms (-1: no bound) for any socket. */
void cb_tcp_progress(tcp_world *w, int ms);

/* Closes conn and forgets it (a rendezvous connection, a failed attempt). */
void cb_tcp_conn_drop(tcp_world *w, tcp_conn *conn);
/* Closes every socket, frees every connection and queued message. */
void cb_tcp_close_all(tcp_world *w);

/* The connection to send to world rank dest on, opened when there is
 * none yet; NULL when it cannot be (dest gone or unreachable). */
tcp_conn *cb_tcp_link(tcp_world *w, int dest);

/* tcp_world.c: every rank of l joins the world within timeout_s (the
 * rendezvous); 0 and *out, or -1 with a message in err, TCP_RV_LATE
 * (CB_CTL_TCP_LATE) when that was a rank that did not come in time. The
 * world's handle, a group of every rank, is tcp_ops.c's cb_ctl_tcp_world. */
#define TCP_RV_LATE CB_CTL_TCP_LATE
int cb_tcp_rendezvous(const cb_launch *l, double timeout_s, tcp_world **out, char *err,
                      size_t len);

/* A world of size ranks (its fields zeroed, fds -1); NULL without memory. */
tcp_world *cb_tcp_world_new(int rank, int size, const unsigned char *key, double timeout_s);
/* One reference less; the last frees the world. */
void cb_tcp_world_release(tcp_world *w);

#endif
