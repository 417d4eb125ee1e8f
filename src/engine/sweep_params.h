/*
 * What the engine sweeps (cb_params.sizes): the collectives, types and
 * reductions, the sizes, the iterations and cycles, the roots, the groups
 * of ranks and the buffers' shape. Parsed in src/options/, read by the
 * engine (sweep.c, groups.c, memory.c, cycles.c). Types only, over headers
 * below the options, so that params.h can hold it without using the engine.
 */
#ifndef CB_SWEEP_PARAMS_H
#define CB_SWEEP_PARAMS_H

#include <stdint.h>

#include "backends/backend.h"
#include "collectives/collective.h"
#include "verify/dtype.h"
#include "verify/redop.h"

#define CB_MAX_COLLECTIVES 32
#define CB_MAX_SIZES 4096

/* --split: how ranks fall into sub-communicators measured at once. */
typedef enum cb_split_kind {
    CB_SPLIT_NONE = 0,
    CB_SPLIT_SIZE,    /* size:K, consecutive groups of K ranks */
    CB_SPLIT_STRIDE,  /* stride:K, rank r in group r mod K */
    CB_SPLIT_NODE,    /* node, one group per host */
    CB_SPLIT_COLOR,   /* color:c0,c1,..., one colour per rank */
    CB_SPLIT_AND,     /* NCCL_TESTS_SPLIT AND/& K and NCCL_TESTS_SPLIT_MASK: rank & K */
    CB_SPLIT_OR       /* NCCL_TESTS_SPLIT OR/| K: rank | K */
} cb_split_kind;

/* A grouping of ranks, as --split and --hier-split take it. */
typedef struct cb_split_spec {
    cb_split_kind kind;
    int k;                 /* K of size:K and stride:K */
    const char *text;      /* the value as given, for messages and colour lists */
} cb_split_spec;

typedef struct cb_sweep_params {
    const cb_collective *collectives[CB_MAX_COLLECTIVES];
    int ncollectives;
    cb_dtype dtypes[CB_DTYPE_COUNT];
    int ndtypes;
    cb_redop redops[CB_REDOP_COUNT];
    int nredops;

    uint64_t min_bytes;
    uint64_t max_bytes;
    uint64_t step_bytes;   /* additive step; 0 when stepping by factor */
    uint64_t step_factor;  /* multiplicative step; 0 when stepping by bytes */

    int iters;
    int warmup;
    int cycles;            /* -N: repeat the whole run; 0 until stopped [1] */
    int root;              /* -r: root of rooted collectives; -1: every rank in turn */
    int root_given;        /* -r was on the command line */
    cb_split_spec split;   /* --split; kind CB_SPLIT_NONE: every rank in one group */
    cb_split_spec hier;    /* --hier-split: hier_allreduce's inner groups [node] */
    /* --split's text when NCCL_TESTS_SPLIT or NCCL_TESTS_SPLIT_MASK gave the
     * groups (src/options/params_env.c). */
    char env_split[96];
    cb_traffic_spec a2av_matrix; /* --a2av-matrix: alltoallv's traffic matrix [uniform] */
    cb_block_layout layouts[2]; /* --layout, in the order given [row] */
    int nlayouts;
    cb_impl impls[3];      /* --nccl-impl, in the order given [auto] */
    int nimpls;
    int registration;      /* -R: 0 plain, 1 ncclCommRegister, 2 symmetric window [0] */
    int unalign;           /* -u: buffers start this many elements past their allocation [0] */
    int memory_report;     /* -M: the memory footprint per rank in the preamble */
} cb_sweep_params;

#endif
