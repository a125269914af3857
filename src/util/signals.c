/* signals: see signals.h. The handler installed is always on_any(), which records the signal
 * and calls the innermost caller's handler. */
#include "util/signals.h"

#include <stddef.h>
#include <string.h>
#include <time.h>

static void (*volatile current)(int);
static volatile sig_atomic_t caught;

static void on_any(int sig)
{
    void (*h)(int) = current;
    caught = sig;
    if (h)
        h(sig);
}

void sig_catch(void (*handler)(int), struct sig_saved *saved)
{
    struct sigaction sa;
    saved->handler = current;
    current = handler;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_any;
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
    current = saved->handler;
    if (!current)
        caught = 0; /* no catch active: nothing to remember */
}

int sig_caught(void)
{
    return caught;
}

int sig_child_interrupted(int status)
{
    if (caught)
        return 1;
    if (!current || (status != 128 + SIGINT && status != 128 + SIGTERM && status != 128 + SIGHUP))
        return 0;
    for (int i = 0; i < 40 && !caught; i++) {
        struct timespec ts = { 0, 5 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    return caught != 0;
}
