/* The progress line's time left, from the sizes measured so far: the rest
 * of the sweep in progress from the last complete sweep's sizes, or in the
 * first sweep from the growth of its own last sizes, and every sweep still
 * to come at what a complete sweep took. Pure (no MPI, no clock of its
 * own): the engine passes the times, unit_eta tests it. */
#ifndef CB_ETA_H
#define CB_ETA_H

#include <stdint.h>

typedef struct cb_eta {
    int nsizes;
    const uint64_t *bytes;  /* each size of a sweep, ascending (the engine's list) */
    double *took;           /* seconds each size of the sweep in progress took */
    double *last;           /* the same, of the last complete sweep */
    int have_last;
    int done;               /* sizes of the sweep in progress behind it */
    int in_sweep;
    double mark;            /* when the sweep began or its last size ended */
    double complete_s;      /* seconds of the complete sweeps, summed */
    int complete;           /* how many sweeps are complete */
} cb_eta;

/* 0, or -1 when out of memory (cb_eta_left then always says -1). */
int cb_eta_init(cb_eta *t, const uint64_t *bytes, int nsizes);
void cb_eta_free(cb_eta *t);
/* A sweep begins at now (seconds on any clock); one still open counts as
 * complete (its last sizes may have been skipped). */
void cb_eta_sweep_begins(cb_eta *t, double now);
/* The first done sizes of the sweep are behind it at now; sizes skipped
 * since the last call took no time. */
void cb_eta_size_done(cb_eta *t, int done, double now);
/* Seconds left for the rest of the sweep in progress and `after` more
 * sweeps; -1 while the sizes measured cannot tell (the first sweep's
 * sizes are all still as fast as its first, so nothing says yet how the
 * larger ones will grow). */
double cb_eta_left(const cb_eta *t, double after);

#endif
