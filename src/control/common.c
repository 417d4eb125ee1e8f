/* What every control plane shares (control.h): the clock, and the end of
 * a rank whose plane failed. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "control/control.h"

/* How long a rank whose plane failed waits for the thread that is ending
 * the run to end it with the run's own status: longer than the watchdog's
 * report and its bounded abort take. */
#define CB_CTL_ENDING_WAIT_S 30.0

void cb_ctl_lost(const cb_ctl *c, const char *op)
{
    if (c->guard != NULL && c->guard->ending(c->guard->ctx)) {
        double until = cb_ctl_now() + CB_CTL_ENDING_WAIT_S;
        while (cb_ctl_now() < until)
            nanosleep(&(struct timespec){.tv_nsec = 50000000L}, NULL);
    }
    /* The host as every output labels it (host/sysinfo.h, which sits above
     * this folder): NCCL_HOSTID where set, else the machine's name. */
    char host[CB_CTL_HOSTLEN] = "";
    const char *id = getenv("NCCL_HOSTID");
    if (id != NULL && id[0] != '\0')
        snprintf(host, sizeof host, "%s", id);
    else if (gethostname(host, sizeof host - 1) != 0)
        snprintf(host, sizeof host, "unknown host");
    char who[160] = "a peer ended or its connection broke";
    if (c->ops->lost_peer != NULL && c->ops->lost_peer(c, who, sizeof who) != 0)
        snprintf(who, sizeof who, "a peer ended or its connection broke");
    char why[224];
    snprintf(why, sizeof why, "the %s control plane failed in %s: %s", c->ops->name, op, who);
    if (c->guard != NULL && c->guard->lost != NULL)
        c->guard->lost(c->guard->lost_ctx, why);
    fprintf(stderr, "nccl-collbench: rank %d (%s): %s; this rank ends (status 1)\n", c->rank,
            host, why);
    fflush(NULL);
    _exit(1);
}

void cb_ctl_abort(cb_ctl *c, int code)
{
    fflush(NULL);
    c->ops->abort(c, code);
    _exit(code);   /* where the library's abort returned */
}

double cb_ctl_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
