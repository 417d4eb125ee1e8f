/*
 * The collective table: one entry per operation the tool measures. An entry
 * says how a size in bytes becomes buffer layouts, how bus bandwidth relates
 * to algorithm bandwidth, how to launch the operation through a backend, and
 * what every rank must hold afterwards. The engine knows collectives only
 * through this table.
 */
#ifndef CB_COLLECTIVE_H
#define CB_COLLECTIVE_H

#include <stddef.h>

#include "backends/backend.h"
#include "verify/pattern.h"
#include "collectives/traffic.h"

/* --layout: where each rank's block sits, for the collectives that gather
 * or scatter blocks. Not to be confused with cb_layout, one call's counts
 * and offsets (which for CB_LAYOUT_COL carry the matrix's rows). */
typedef enum cb_block_layout {
    CB_LAYOUT_ROW = 0,     /* every rank's block is contiguous */
    CB_LAYOUT_COL = 1      /* every rank's block is a column slice of a matrix */
} cb_block_layout;

/* Buffer layout for one measurement on one rank, in elements. */
typedef struct cb_layout {
    size_t count;          /* the "count" column */
    size_t send_count;     /* elements each rank sends from */
    size_t recv_count;     /* elements each rank receives into */
    size_t inplace_offset; /* where the input sits inside recv when in place */
    /* In place, one buffer holds both sides: the input starts at element
     * inplace_offset + rank * inplace_send_stride of it and the output at
     * rank * inplace_recv_stride. Gathers set the first (the input is the
     * rank's own block of the output), scatters the second (the output is
     * the rank's block of the input), as NCCL defines in-place. */
    size_t inplace_send_stride;
    size_t inplace_recv_stride;
    /* --layout col (cb_layout_set_columns), else all 0: every rank's block of
     * count elements is a rows x width column slice of a row-major matrix of
     * rows x (n * width) elements, and the collective's timed operation
     * includes the 2-D copies between that matrix and contiguous blocks,
     * through a work buffer of work_count elements. */
    size_t rows;
    size_t width;
    size_t work_count;
    /* alltoallv (else 0): elements per unit of the traffic matrix's weight;
     * rank i sends rank j weight(i, j) * unit elements. */
    size_t unit;
} cb_layout;

/* One launch: buffers and what to do with them. */
typedef struct cb_call {
    const void *send;
    void *recv;
    cb_layout layout;
    cb_dtype dtype;
    cb_redop redop;
    int root;               /* -1 for rootless collectives */
    void *work;             /* --layout col: work_count elements of backend memory */
    void *state;            /* what the collective's prepare made, else NULL */
    const cb_traffic_spec *traffic; /* --a2av-matrix: alltoallv's traffic matrix */
} cb_call;

/* Where a check first found a wrong element on this rank. */
typedef struct cb_mismatch {
    size_t index;
    double expected;
    double actual;
} cb_mismatch;

enum cb_collective_flags {
    CB_COLL_REDUCES = 1 << 0, /* takes a reduction operation */
    CB_COLL_ROOTED = 1 << 1,  /* has a root rank */
    /* Moves no data (barrier): measured once, out of place, at size 0, and
     * never verified. */
    CB_COLL_NO_DATA = 1 << 2,
    /* Its steps depend on each other (on several communicators): never
     * launched inside a group, so -m runs its operations one by one. */
    CB_COLL_SEQUENTIAL = 1 << 3,
    /* Has no in-place form (alltoallv: the blocks a rank sends and receives
     * differ in size): measured out of place only. */
    CB_COLL_OUT_OF_PLACE = 1 << 4,
    /* A backend may run it natively or as sends and receives: measured once
     * per --nccl-impl entry on a backend with select_impl. */
    CB_COLL_IMPLS = 1 << 5,
    /* Times the making of communicators (comm_init): the engine measures
     * it through the backend's comm_time, one row per way; left out of
     * "-o all". */
    CB_COLL_COMM = 1 << 6,
    /* Asked for by name only, left out of "-o all" (hypercube: power-of-two
     * rank counts only). */
    CB_COLL_BY_NAME = 1 << 7
};

typedef struct cb_collective {
    const char *name;
    const char *aliases;     /* space separated */
    unsigned flags;

    /* Layout for a requested per-rank size in bytes (the size column is the
     * larger of send and receive bytes). Returns 0, or -1 when the size holds
     * no whole element for every rank. */
    int (*layout)(size_t bytes, size_t elem_size, int nranks, cb_layout *out);
    /* Optional: the layout when it depends on the traffic matrix
     * (alltoallv); the engine calls it instead of layout. */
    int (*layout_traffic)(const cb_traffic_spec *traffic, size_t bytes, size_t elem_size,
                          int nranks, cb_layout *out);

    /* busbw = algbw * busbw_factor(nranks). */
    double (*busbw_factor)(int nranks);

    /* Launch one operation. */
    int (*run)(cb_backend *b, const cb_call *call);

    /* Host side of verification: rank's input for this call into send (a host
     * buffer of layout.send_count elements), and the number of wrong elements
     * in rank's received data (layout.recv_count elements), recording the
     * first. */
    void (*fill_input)(const cb_pattern *pat, int rank, const cb_call *call, void *send);
    size_t (*check_output)(const cb_pattern *pat, int rank, const cb_call *call,
                           const void *recv, cb_mismatch *first);

    /* Optional: whether a backend implements what run needs; NULL means
     * every backend does. The engine skips the collective with a note. */
    int (*available)(const cb_backend_ops *ops);
    /* Optional: what available wants, for the note when it says no. */
    const char *needs;

    /* Optional (NULL: every reduction the backend has): 1 when the
     * collective can compose redop, else 0 with why; the same on every rank. */
    int (*accepts)(cb_redop redop, char *why, size_t why_len);

    /* Optional, both or neither: before the collective's sweeps, collective
     * over b->comm, set up what run needs beyond buffers (sub-communicators)
     * into *state, which every cb_call then carries; inner_color is this
     * rank's group under --hier-split among b's ranks. Returns 0, or -1 with
     * b->error set; release is then still called, on every rank. release
     * frees the state (NULL is fine); aborting as for the backend's fini. */
    int (*prepare)(cb_backend *b, int inner_color, void **state);
    void (*release)(void *state, int aborting);

    /* --layout col: how many work buffers of the gathered size (n * count
     * elements) the column variant needs; 0 when the collective has no
     * column layout (it then runs in row layout only). */
    int column_work;
} cb_collective;

/* Shared table entries (collectives/common.c). */
/* Layout of collectives where every rank has one vector of the whole size
 * (all-reduce, broadcast, reduce, send/receive). */
int cb_layout_whole(size_t bytes, size_t elem_size, int nranks, cb_layout *out);
/* Size = the gathered buffer, n blocks of size / n whole elements; in place a
 * rank's input is its own block (all-gather, gather). */
int cb_layout_gathered(size_t bytes, size_t elem_size, int nranks, cb_layout *out);
/* Size = the whole input of n blocks; each rank receives one block; in place
 * its output is its own block of the input (reduce-scatter, scatter). */
int cb_layout_scattered(size_t bytes, size_t elem_size, int nranks, cb_layout *out);
/* Bus-bandwidth factors: 1 (broadcast, reduce, send/receive) and (n-1)/n
 * (all-gather, reduce-scatter, all-to-all, gather, scatter). */
double cb_busbw_one(int nranks);
double cb_busbw_allreduce(int nranks);   /* 2(n-1)/n: all-reduce and its ring */
double cb_busbw_share(int nranks);

/* The table, NULL-terminated, in the order "all" runs them. */
const cb_collective *const *cb_collective_list(void);

/* The collective with this name or alias (case ignored), or NULL. */
const cb_collective *cb_collective_lookup(const char *name);

/* The fill and check of every all-reduce (allreduce, ring_allreduce,
 * hier_allreduce): the rank's whole vector in, the reduction of all out. */
void cb_fill_whole(const cb_pattern *pat, int rank, const cb_call *call, void *send);
size_t cb_check_allreduced(const cb_pattern *pat, int rank, const cb_call *call,
                           const void *recv, cb_mismatch *first);

/* The fill and check of a collective that moves no data (barrier,
 * comm_init): nothing to write, nothing that can be wrong. The engine
 * never calls them for a CB_COLL_NO_DATA collective and reports it
 * unchecked; the table entry still names them. */
void cb_fill_nothing(const cb_pattern *pat, int rank, const cb_call *call, void *send);
size_t cb_check_nothing(const cb_pattern *pat, int rank, const cb_call *call, const void *recv,
                        cb_mismatch *first);

/* Fills of the data-movement collectives: the rank's one block of count
 * elements (allgather, broadcast, gather, sendrecv), or its n blocks
 * (alltoall, scatter), as cb_pattern_fill_blocks numbers them. */
void cb_fill_block(const cb_pattern *pat, int rank, const cb_call *call, void *send);
void cb_fill_blocks(const cb_pattern *pat, int rank, const cb_call *call, void *send);

/* The check of a gathered output (allgather; gather's root): every rank's
 * block in rank order, or in column layout as column slices. */
size_t cb_check_gathered(const cb_pattern *pat, const cb_call *call, const void *recv,
                         cb_mismatch *first);

/* Compare count elements of data against cb_pattern_reduced: the check for
 * every rank of a reduction whose result everyone holds. */
size_t cb_check_reduced(const cb_pattern *pat, const void *data, size_t count,
                        cb_mismatch *first);

/* The same for a slice: data[k] against element first_index + k of the
 * reduction (reduce-scatter's block). Reported indexes are k. */
size_t cb_check_reduced_at(const cb_pattern *pat, const void *data, size_t first_index,
                           size_t count, cb_mismatch *first);

/* Where block k of a data-movement output comes from: block
 * (block + k * block_step) of the send buffer of rank (rank + k * rank_step). */
typedef struct cb_block_source {
    int rank;
    int rank_step;
    size_t block;
    size_t block_step;
} cb_block_source;

/* Compare nblocks blocks of count elements against cb_pattern_block. */
size_t cb_check_blocks(const cb_pattern *pat, const void *data, size_t nblocks, size_t count,
                       cb_block_source src, cb_mismatch *first);

/* --layout col: the matrix shape of layout (set rows, width and
 * work_count for a collective needing work_buffers gathered buffers). rows
 * is the largest divisor of count that is at most its square root, so the
 * rank's slice is as square as count allows (1 x count for a prime). */
void cb_layout_set_columns(cb_layout *layout, int nranks, int work_buffers);

/* The 2-D copies of --layout col, on the backend's timeline: gather n
 * contiguous blocks of count (rows x width) elements into the column slices
 * of a rows x (n * width) matrix, or the reverse. Return as backend ops do. */
int cb_blocks_to_columns(cb_backend *b, void *matrix, const void *blocks, const cb_layout *l,
                         size_t esize, int nranks);
int cb_columns_to_blocks(cb_backend *b, void *blocks, const void *matrix, const cb_layout *l,
                         size_t esize, int nranks);

/* Check a rows x (nblocks * width) matrix whose column slice k, row i,
 * column j holds element offset + i * row_stride + j of rank (rank + k *
 * rank_step)'s input, where input element x is element x % block_count of
 * block x / block_count as cb_pattern_block gives it. */
typedef struct cb_column_source {
    int rank;
    int rank_step;
    size_t offset;
    size_t row_stride;
    size_t block_count;
} cb_column_source;
size_t cb_check_columns(const cb_pattern *pat, const void *data, const cb_layout *l,
                        size_t nblocks, cb_column_source src, cb_mismatch *first);

/* The size column of a layout: the larger of send and receive, in bytes. */
size_t cb_layout_bytes(const cb_layout *layout, size_t elem_size);

#endif
