/* signals: see signals.h. */
#include "util/signals.h"

#include <string.h>

void sig_catch(void (*handler)(int), struct sig_saved *saved)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = handler;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &saved->intr);
    sigaction(SIGTERM, &sa, &saved->term);
    sigaction(SIGHUP, &sa, &saved->hup);
}

void sig_restore(const struct sig_saved *saved)
{
    sigaction(SIGINT, &saved->intr, NULL);
    sigaction(SIGTERM, &saved->term, NULL);
    sigaction(SIGHUP, &saved->hup, NULL);
}
