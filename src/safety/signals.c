#include "safety/signals.h"

#include <signal.h>
#include <string.h>

/* The one piece of mutable global state: a signal handler can reach no
 * other. Written only by the handler, read by the engine. */
static volatile sig_atomic_t received_signal;

static void on_signal(int sig)
{
    received_signal = sig;
}

void cb_signals_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    /* A second signal of the same kind takes the default action at once. */
    sa.sa_flags = SA_RESTART | SA_RESETHAND;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

int cb_signals_pending(void)
{
    return received_signal;
}
