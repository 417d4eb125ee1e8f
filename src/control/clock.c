/* The engine's clock for spans, whatever the control plane (control.h). */
#include <time.h>

#include "control/control.h"

double cb_ctl_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
