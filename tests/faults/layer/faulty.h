/* The fault layer's parts (tests/faults/layer/backend.c wraps, inject.c injects). */
#ifndef CB_FAULTY_H
#define CB_FAULTY_H

#include "backends/backend.h"

#define FAULT_ENV "NCCL_COLLBENCH_TEST_FAULT"
#define FAULT_MAX_ARGS 4

typedef enum fault_kind {
    FAULT_MISSING,
    FAULT_DUP,
    FAULT_BUMP,
    FAULT_SWAP,
    FAULT_SHIFT,
    FAULT_CHUNKS,
    FAULT_SIGN,
    FAULT_CORRUPT,
    FAULT_STALE,
    FAULT_ROOT,
    FAULT_SKIP,
    FAULT_HANG,
    FAULT_ALLOC,
    FAULT_SLOW,
    FAULT_SLOWLINK,
    FAULT_STOP,
    FAULT_AVGSUM,
    FAULT_NTH,
    FAULT_KINDS
} fault_kind;

typedef struct faulty_backend {
    cb_backend base;            /* first: the engine sees this */
    const cb_backend_ops *ops;  /* the wrapped backend's */
    cb_backend *inner;          /* the wrapped backend doing the work */
    fault_kind kind;
    int timed_only;             /* "timed:" before the fault: only in timed spans */
    int untimed_only;           /* "untimed:": only outside them (the check launches) */
    int timing;                 /* between timer_start and timer_stop */
    int world_rank;             /* what K names: a rank of the whole run */
    int *world_of;              /* each rank of base.comm's rank in the run */
    long arg[FAULT_MAX_ARGS];
    int nargs;
    long launches;              /* nth: the collectives this rank has launched */
    char spec[64];
    void *stale_out;            /* stale: where rank K's output really goes */
    size_t stale_bytes;
    unsigned char *host;        /* host copy of a buffer being changed */
    size_t host_bytes;
} faulty_backend;

/* What one launch looks like to the fault, whatever the collective. */
typedef struct launch {
    const void *send;
    void *recv;
    size_t input_count;    /* elements of this rank's input at send */
    size_t output_count;   /* elements of this rank's output at recv */
    size_t block;          /* elements per rank block */
    cb_dtype dtype;
    int gathers;           /* the output holds one block per rank */
    int scatters;          /* the input holds one block per rank */
    int root;              /* -1 when rootless */
    int is_sendrecv;
    /* alltoallv: the blocks of the output by sender, of unequal sizes
     * (NULL elsewhere: every block is `block` elements, in rank order). */
    const size_t *recv_counts;
    const size_t *recv_offsets;
} launch;

/* An inner failure becomes f's, with its message; returns rc. */
int fault_pass(faulty_backend *f, int rc);

/* Parse NCCL_COLLBENCH_TEST_FAULT's value into f: 0, or -1 when it is none
 * of the forms FAULT_FORMS lists. */
int fault_parse(faulty_backend *f, const char *spec);
#define FAULT_FORMS                                                                    \
    "missing:K, dup:A:B, bump:K[:D], swap:A:B, shift:K[:OFF], chunks:K:A:B:LEN, "      \
    "sign:K[:IDX], corrupt:K:IDX, stale:K, root:D, skip, hang:K:COUNT, stop:K:COUNT, "  \
    "alloc:K, slow:A:B:MS, slowlink:A:B:W:MS, avgsum:D or nth:K:N"

/* slow and slowlink: sleep before a launch when they apply to it; peer is the
 * sendrecv peer's rank in f's communicator, -1 for other launches. */
void fault_delay(const faulty_backend *f, int peer);
/* Whether the fault applies to a launch now. */
int fault_active(const faulty_backend *f);

/* avgsum: whether it changes this launch, an integer average (whose
 * reduction the wrapped backend then runs as a sum); after it,
 * fault_finish_avg adds D to the sum and divides. 0 or -1 with f->base.error
 * set. */
int fault_bumps_avg_sum(const faulty_backend *f, cb_redop redop, cb_dtype dtype);
int fault_finish_avg(faulty_backend *f, const launch *l);

/* Around every launch: before may change the input, the buffers and the
 * root in l; after (given the launch's status) the output. 0 or -1 with
 * f->base.error set. */
int fault_before(faulty_backend *f, launch *l);
int fault_after(faulty_backend *f, const launch *l, int rc);

#endif
