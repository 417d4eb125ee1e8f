/*
 * The iteration plan of one measurement: how many timed iterations run, in
 * how many timed spans (rounds), and how often a span reads the clock. A
 * pure function of the command line and an estimate of the time per
 * operation, so that every rank that agrees on the estimate makes the same
 * plan, and the unit tests can check it without MPI.
 */
#ifndef CB_ENGINE_PLAN_H
#define CB_ENGINE_PLAN_H

/* Per-iteration timestamps kept per timed span; beyond, one per group. */
#define CB_MAX_SAMPLES 1000
/* Each timer mark reads a clock (tens of nanoseconds) inside the timed span:
 * marks come at most once per this many seconds of estimated run time, so
 * that they add about 1% to the smallest operations, while an operation of
 * this length or more (every GPU collective) gets a sample per iteration. */
#define CB_SAMPLE_SPAN 2e-6
/* --budget with --stable: the timed iterations run in at most CB_ROUNDS
 * timed spans (rounds) of equal length, the last shorter; the early stop
 * compares the last CB_STABLE_ROUNDS rounds, so that many run at least. */
#define CB_ROUNDS 10
#define CB_STABLE_ROUNDS 3

/* What the command line asks for. */
typedef struct cb_iter_request {
    int iters;           /* -n */
    int graph_launches;  /* -G, 0 without */
    int agg;             /* -m: operations per iteration */
    double budget_ms;    /* --budget, 0 without */
    double stable_pct;   /* --stable, 0 without */
    int per_iter;        /* -I 1: a mark after every unit, however short */
} cb_iter_request;

typedef struct cb_iter_plan {
    int graph;       /* units are graph launches of -n recorded iterations */
    int iters;       /* timed iterations allowed: -n, or fewer by --budget */
    int units;       /* units timed in all: iterations, or graph launches */
    int nrounds;     /* timed spans: 1, or with --budget and --stable up to CB_ROUNDS */
    int per_round;   /* units in every span but the last */
    int stride;      /* a mark every stride units, and after each span's last */
} cb_iter_plan;

/* The marks a measurement may take at most, whatever the estimate: the
 * room the sample buffers need. */
int cb_iter_plan_room(const cb_iter_request *req);

/* The plan for req given per_op, the agreed time per operation in seconds
 * (not finite or <= 0: unknown). Without -G, --budget lowers the
 * iterations to what fits (at least 1), and the stride grows so that one
 * mark spans at least CB_SAMPLE_SPAN (not with per_iter); with -G the
 * estimate is unused. */
void cb_iter_plan_make(const cb_iter_request *req, double per_op, cb_iter_plan *plan);

/* Span number span of plan: its units and mark stride; 0 when the plan
 * has no such span. */
int cb_iter_plan_span(const cb_iter_plan *plan, int span, int *units, int *stride);

/* The marks a span of units with this stride takes. */
int cb_iter_plan_marks(int units, int stride);

/* The timed iterations that spans_run spans of plan ran (fewer than
 * plan->iters after an early stop by --stable). */
int cb_iter_plan_done(const cb_iter_plan *plan, int spans_run);

#endif
