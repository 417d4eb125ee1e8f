/* How a measurement is timed: -z (nccl-tests 2.19's four modes), --clock
 * and --rotate, and the checks between them and -G (nccl-collbench(1),
 * TIMING). */
#include <string.h>
#include <strings.h>

#include "options/params_parse.h"

int cb_params_opt_blocking(parse_state *s, const char *v)
{
    return cb_params_set_int(s, v, 0, 3, &s->p->timing.blocking);
}

int cb_params_opt_clock(parse_state *s, const char *v)
{
    if (strcasecmp(v, "host") == 0)
        s->p->timing.clock = CB_CLOCK_HOST;
    else if (strcasecmp(v, "device") == 0)
        s->p->timing.clock = CB_CLOCK_DEVICE;
    else
        return cb_params_fail(s, "'%s' is not a clock (host or device)", v);
    return 0;
}

int cb_params_opt_rotate(parse_state *s, const char *v)
{
    return cb_params_set_int(s, v, 0, 1, &s->p->timing.rotate);
}

int cb_params_check_timing(parse_state *s)
{
    const cb_params *p = s->p;
    s->option = "-z";
    /* -z 3 sums each iteration's own time on the host, between barriers:
     * one device clock pair around the span would include them. */
    if (p->timing.blocking == 3 && p->timing.clock == CB_CLOCK_DEVICE)
        return cb_params_fail(s, "3 times each operation alone on the host clock; "
                                 "--clock device cannot leave out the barriers between them");
    /* nccl-tests 2.19 quietly runs -z 3 -G as -z 0; a usage error here. */
    if (p->timing.blocking == 3 && p->timing.graph_launches > 0)
        return cb_params_fail(s, "3 cannot time operations alone inside a CUDA graph (-G %d): "
                                 "a graph launch runs -n iterations with no barrier between them",
                              p->timing.graph_launches);
    return 0;
}

const char *cb_clock_name(int clock)
{
    return clock == CB_CLOCK_DEVICE ? "device" : "host";
}
