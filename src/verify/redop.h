/* Reduction operations: the engine's own names. */
#ifndef CB_REDOP_H
#define CB_REDOP_H

typedef enum cb_redop {
    CB_REDOP_NONE = -1, /* data-movement collectives */
    CB_SUM = 0,
    CB_PROD,
    CB_MIN,
    CB_MAX,
    CB_AVG,        /* sum / ranks; integers truncate toward zero, as NCCL does */
    CB_PREMULSUM,  /* sum of CB_PREMULSUM_SCALAR * input (ncclRedOpCreatePreMulSum) */
    CB_REDOP_COUNT
} cb_redop;

/* The scalar every backend multiplies each input by for premulsum. */
#define CB_PREMULSUM_SCALAR 2.0

/* Name as printed; "none" for CB_REDOP_NONE. */
const char *cb_redop_name(cb_redop op);

/* Look a name up (case ignored); returns 0 and sets *out, or -1. */
int cb_redop_lookup(const char *name, cb_redop *out);

#endif
