/* signals: catch SIGINT, SIGTERM and SIGHUP (a closed terminal) with the caller's handler for a
 * while (a long step that must stop what it started before the signal takes effect), then put
 * back what was there. The caller owns its handler and the flag it sets; this module swaps
 * dispositions and remembers which signal arrived while a catch was active, so that code
 * below the caller (a build, a hash, a child's run) can tell a child that died of the user's
 * Ctrl-C from one that failed, and leave the message to the caller ("interrupted"). */
#ifndef PGOLAB_SIGNALS_H
#define PGOLAB_SIGNALS_H

#include <signal.h>

/* The dispositions sig_catch() replaced. */
struct sig_saved {
    struct sigaction intr, term, hup;
    void (*handler)(int); /* the enclosing sig_catch()'s handler (NULL: none) */
};

/* Install handler for SIGINT, SIGTERM and SIGHUP, without SA_RESTART (sleeps, waits and polls
 * return early with EINTR), saving the previous dispositions in saved. Catches nest: an inner
 * one replaces the handler until its sig_restore(). */
void sig_catch(void (*handler)(int), struct sig_saved *saved);

/* Put back the dispositions saved by sig_catch(); the outermost one's restore also forgets
 * the signal sig_caught() remembered. */
void sig_restore(const struct sig_saved *saved);

/* The signal (SIGINT, SIGTERM or SIGHUP) that arrived since the outermost active sig_catch()
 * was installed, else 0 (also when no catch is active). Not reset by an inner catch or its
 * restore. */
int sig_caught(void);

/* Whether a child that ended with exit status `status` (subprocess_run()'s: 128+N when signal N
 * killed it) was stopped by the user's interrupt rather than failing: sig_caught() is set, or
 * the child died of SIGINT, SIGTERM or SIGHUP while a catch is active and such a signal reaches
 * pgolab within 200 ms (a Ctrl-C reaches the whole process group, and the thread waiting for
 * the child can see it die before pgolab's own handler has run). Waits at most those 200 ms. */
int sig_child_interrupted(int status);

#endif
