/* signals: catch SIGINT, SIGTERM and SIGHUP (a closed terminal) with the caller's handler for a while (a long step that
 * must stop what it started before the signal takes effect), then put back what was there.
 * The caller owns its handler and the flag it sets; this module only swaps dispositions. */
#ifndef PGOLAB_SIGNALS_H
#define PGOLAB_SIGNALS_H

#include <signal.h>

/* The dispositions sig_catch() replaced. */
struct sig_saved {
    struct sigaction intr, term, hup;
};

/* Install handler for SIGINT, SIGTERM and SIGHUP, without SA_RESTART (sleeps, waits and polls return
 * early with EINTR), saving the previous dispositions in saved. */
void sig_catch(void (*handler)(int), struct sig_saved *saved);

/* Put back the dispositions saved by sig_catch(). */
void sig_restore(const struct sig_saved *saved);

#endif
