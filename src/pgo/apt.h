/* apt: pgolab's own apt configuration for Debian source packages, so a recipe can name a
 * source package of any Debian suite (MySQL 9.7 is only in sid, PostgreSQL 17 in trixie)
 * without a line of the system's apt configuration being touched.
 *
 * The configuration lives in one directory (apt_root(): $PGOLAB_APT_DIR, else
 * $XDG_CACHE_HOME/pgolab/apt, else ~/.cache/pgolab/apt): sources.list.d/pgolab.sources
 * (deb-src entries only: the system's release and its -updates and -security suites on the
 * system's own mirrors, then the newer suites of apt.c's table on the main mirror), lists/
 * and cache/. Every apt-get and apt-cache pgolab runs gets `-o` options that point apt at
 * that directory and at nothing of the system's but its keyrings. The system's own release
 * comes first: a package Debian 12 carries (sqlite3, postgresql-15) is fetched from Debian
 * 12's suites as before; only a package no suite of the system's release carries comes
 * from the first newer suite that does.
 *
 * Who owns what: apt.c owns the directory and the argv of every apt command; source.c
 * decides which tree a recipe uses and calls apt_fetch(). Strings returned are the
 * caller's. */
#ifndef PGOLAB_PGO_APT_H
#define PGOLAB_PGO_APT_H

#include <signal.h>
#include <stdbool.h>

#include "util/argvec.h"

/* One version of a source package in one suite (`apt-cache madison`). */
struct apt_candidate {
    char *version;  /* Debian version, "9.7.2-4" */
    char *suite;    /* "sid", "bookworm-security" */
};

struct apt_conf {
    char *root;            /* the configuration directory (absolute) */
    char *suites;          /* the suites it names, in preference order, for messages:
                            * "bookworm, bookworm-updates, bookworm-security, trixie, sid" */
    struct argvec opts;    /* the -o options of every apt command (pairs: "-o", "K=V") */
};

/* The configuration directory (see above). Caller frees. */
char *apt_root(void);

/* Open (and on first use create) the configuration at root (NULL: apt_root()): its
 * directories and sources file, rewritten when the system's release or mirrors changed.
 * -1 with one line (a directory that cannot be made). */
int apt_conf_open(struct apt_conf *a, const char *root);
void apt_conf_release(struct apt_conf *a);

/* `apt-get update` of the configuration's lists when they are missing, older than a day,
 * or force. Offline with lists from before: a warning naming their age, and 0; offline
 * without any: -1 with one line naming the suites and the command that failed. stop: the
 * caller's interrupt flag (or NULL). */
int apt_refresh(struct apt_conf *a, bool force, const volatile sig_atomic_t *stop);

/* The versions of source package pkg the lists know, in preference order: the suites in the
 * configuration's order, the newest version first within a suite. *n = 0 when none carries
 * it. Caller frees with apt_candidates_free(). */
int apt_candidates(const struct apt_conf *a, const char *pkg, struct apt_candidate **out, int *n);
void apt_candidates_free(struct apt_candidate *c, int n);

/* `apt-get source pkg=version` into dir (its output appended to log). 0, the exit status of
 * apt-get (> 0), or >= 128 when a signal ended it. */
int apt_fetch(const struct apt_conf *a, const char *pkg, const char *version, const char *dir,
              const char *log, const volatile sig_atomic_t *stop);

/* apt's first error line in the log of a failed apt command ("E: Failed to fetch ... 404  Not
 * Found"): it says why, where the last says only that some files failed. "E: apt-get source
 * failed" when the log has none. Caller frees. */
char *apt_first_error(const char *log);

/* The shell command a user runs to do what apt_fetch does (for error lines). Caller frees. */
char *apt_fetch_command(const struct apt_conf *a, const char *pkg, const char *version);

#endif
