/*
 * Inside the side channel (sidechannel.c: messages, serving, the report's
 * questions; sidechannel_setup.c: the secret, the address, the set-up).
 * docs/design/side-channel.md gives the design.
 */
#ifndef CB_SIDECHANNEL_INT_H
#define CB_SIDECHANNEL_INT_H

#include <stddef.h>
#include <stdint.h>

#include "common/hmac.h"
#include "safety/sidechannel.h"

#define SIDE_MAGIC 0x43424853u   /* "CBHS" */
#define SIDE_NONCE_LEN 16
#define SIDE_KEY_LEN CB_SHA256_LEN
/* A message that does not fit the socket's buffer within this is given up. */
#define SIDE_SEND_S 1.0

enum side_type { SIDE_HELLO = 1, SIDE_WELCOME, SIDE_FIRED, SIDE_ASK, SIDE_STATE, SIDE_EXIT };

/* Every message: fixed size, zeroed before it is filled (so its padding is
 * too), and authenticated by mac, the HMAC-SHA256 of every byte before it
 * under the link's key (a HELLO: under the run's secret). */
typedef struct side_msg {
    uint32_t magic;
    uint32_t type;
    int32_t rank;          /* the sender's */
    int32_t code;          /* SIDE_EXIT: the status */
    uint64_t seq;          /* per link and direction, from 1: no replay, no reordering */
    unsigned char nonce[SIDE_NONCE_LEN];  /* HELLO: the rank's; WELCOME: rank 0's */
    cb_hang_state state;   /* SIDE_HELLO: rank, pid, host; SIDE_STATE: all */
    unsigned char mac[SIDE_KEY_LEN];
} side_msg;

struct cb_side_link {
    int fd;                /* -1: none */
    int gone;              /* the peer closed it, it broke, or it sent a bad message */
    int ended;             /* the peer's end closed or reset: its process ended */
    int self, peer;        /* the ranks at this end and the other */
    size_t have;           /* bytes of in received so far */
    side_msg in;
    unsigned char key[SIDE_KEY_LEN];  /* HMAC(secret, the rank's nonce, rank 0's) */
    uint64_t sent, got;    /* the last sequence numbers sent and accepted */
    char host[CB_HANG_HOSTLEN];       /* the peer's, as MPI gave it at start-up */
};

double cb_side_now(void);
int cb_side_ms_until(double deadline);

/* Fill msg's magic, sender, sequence and MAC under link's key, then send
 * all of it by deadline. 0, or -1 (the peer does not read, or the link broke). */
int cb_side_send(struct cb_side_link *link, side_msg *msg, double deadline);

/* Read what has come on link without checking it: 1 when a whole message
 * is in link->in, 0 when not yet, -1 when the link closed. */
int cb_side_read(struct cb_side_link *link);

/* Whether link->in is the next message from link->peer under key: magic,
 * MAC, sender and sequence number; counts it when so. */
int cb_side_check(struct cb_side_link *link, const unsigned char *key);

/* cb_side_read, then cb_side_check under link->key: 1, 0 or -1 (a message that
 * fails the check marks the link gone). */
int cb_side_receive(struct cb_side_link *link);

/* The link's key from the run's secret and the two nonces. */
void cb_side_link_key(const unsigned char *secret, const unsigned char *rank_nonce,
                   const unsigned char *root_nonce, unsigned char *key);

/* A message of type, every byte zero. */
void cb_side_msg_init(side_msg *msg, int type);

void cb_side_drop(struct cb_side_link *link);

#endif
