/* The progress line's time left (eta.h). */
#include "engine/eta.h"

#include <stdlib.h>
#include <string.h>

/* A first sweep tells how its larger sizes grow once a size took twice
 * the time of its fastest (the part that grows with the bytes is then at
 * least the part that does not), or once no size left is more than this
 * many times the largest measured. */
#define ETA_GROWTH 2.0
#define ETA_NEAR 4.0
/* How far the sweep in progress may run faster or slower than the last. */
#define ETA_SCALE_MAX 4.0

int cb_eta_init(cb_eta *t, const uint64_t *bytes, int nsizes)
{
    memset(t, 0, sizeof *t);
    t->bytes = bytes;
    t->nsizes = nsizes > 0 ? nsizes : 0;
    size_t n = (size_t)(t->nsizes > 0 ? t->nsizes : 1);
    t->took = calloc(n, sizeof *t->took);
    t->last = calloc(n, sizeof *t->last);
    if (t->took == NULL || t->last == NULL) {
        cb_eta_free(t);
        return -1;
    }
    return 0;
}

void cb_eta_free(cb_eta *t)
{
    free(t->took);
    free(t->last);
    t->took = t->last = NULL;
    t->nsizes = 0;
}

static void sweep_complete(cb_eta *t)
{
    double sum = 0;
    for (int s = 0; s < t->nsizes; s++)
        sum += t->took[s];
    t->complete_s += sum;
    t->complete++;
    memcpy(t->last, t->took, (size_t)t->nsizes * sizeof *t->last);
    t->have_last = 1;
    t->in_sweep = 0;
}

void cb_eta_sweep_begins(cb_eta *t, double now)
{
    if (t->took == NULL)
        return;
    if (t->in_sweep && t->done > 0)
        sweep_complete(t);
    memset(t->took, 0, (size_t)t->nsizes * sizeof *t->took);
    t->done = 0;
    t->mark = now;
    t->in_sweep = 1;
}

void cb_eta_size_done(cb_eta *t, int done, double now)
{
    if (t->took == NULL || !t->in_sweep || done <= t->done || done > t->nsizes)
        return;
    t->took[done - 1] = now > t->mark ? now - t->mark : 0;
    t->done = done;
    t->mark = now;
    if (done == t->nsizes)
        sweep_complete(t);
}

static double sum_span(const double *v, int from, int to)
{
    double s = 0;
    for (int i = from; i < to; i++)
        s += v[i];
    return s;
}

/* The rest of a first sweep: time = fastest + k x bytes, k from the
 * largest size measured against the fastest; -1 while that cannot tell. */
static double first_sweep_rest(const cb_eta *t)
{
    int largest = -1;
    double fastest = 0;
    for (int s = 0; s < t->done; s++) {
        if (t->took[s] <= 0)
            continue;   /* skipped */
        if (largest < 0 || t->took[s] < fastest)
            fastest = t->took[s];
        largest = s;
    }
    if (largest < 0 || t->bytes[largest] == 0)
        return -1;
    double t_large = t->took[largest], b_large = (double)t->bytes[largest];
    double b_end = (double)t->bytes[t->nsizes - 1];
    if (t_large < ETA_GROWTH * fastest && b_end > ETA_NEAR * b_large)
        return -1;
    double per_byte = (t_large - fastest) / b_large;
    double rest = 0;
    for (int s = t->done; s < t->nsizes; s++)
        rest += fastest + per_byte * (double)t->bytes[s];
    return rest;
}

/* The rest of a later sweep: the last sweep's remaining sizes, scaled by
 * how the sizes done compare with the same sizes then. */
static double later_sweep_rest(const cb_eta *t)
{
    double scale = 1, then = sum_span(t->last, 0, t->done), now = sum_span(t->took, 0, t->done);
    if (t->done > 0 && then > 0 && now > 0)
        scale = now / then;
    if (scale > ETA_SCALE_MAX)
        scale = ETA_SCALE_MAX;
    if (scale < 1 / ETA_SCALE_MAX)
        scale = 1 / ETA_SCALE_MAX;
    return scale * sum_span(t->last, t->done, t->nsizes);
}

double cb_eta_left(const cb_eta *t, double after)
{
    if (t->took == NULL || t->nsizes == 0 || (!t->in_sweep && t->complete == 0))
        return -1;
    double rest = 0;
    if (t->in_sweep && t->done < t->nsizes)
        rest = t->have_last ? later_sweep_rest(t) : first_sweep_rest(t);
    if (rest < 0)
        return -1;
    if (after <= 0)
        return rest;
    double sweep;
    if (t->complete > 0)
        sweep = t->complete_s / t->complete;
    else if (t->in_sweep)
        sweep = sum_span(t->took, 0, t->done) + rest;
    else
        return -1;
    return rest + after * sweep;
}
