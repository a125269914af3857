/* correction: what GCC's -fprofile-correction corrected in a pgo build, counted from the
 * build's log instead of hidden. A profile is inconsistent when its counters break flow
 * conservation (a block's count is not the sum of its edges', a derived edge count is
 * negative): counters updated without atomics (-fprofile-update=single) by threads that race,
 * or counts written while other threads still ran. Without -fprofile-correction GCC refuses
 * such a function ("corrupted profile info: profile data is not flow-consistent", exit 1);
 * with it GCC smooths the counts silently. pgolab's gcc pgo flags add -fopt-info-note-ipa,
 * with which GCC 12 says "FILE:LINE:COL: note: correcting inconsistent profile data" once
 * per compilation (profile.cc keeps a static "informed" flag), so the count is of objects,
 * not functions; the note names the source file. Owns no state. */
#ifndef PGOLAB_PGO_CORRECTION_H
#define PGOLAB_PGO_CORRECTION_H

#include <stdbool.h>

#include "util/argvec.h"

/* GCC's note, as its profile pass prints it under -fopt-info-note-ipa. */
#define GCC_CORRECTION_NOTE "note: correcting inconsistent profile data"

/* The corrections of one pgo build. */
struct profile_corrections {
    bool counted;          /* the log was read with the note enabled (gcc, pgolab's flags);
                            * false: not known (clang, a target's own PGO options) */
    int objects;           /* the notes: compilations whose profile GCC corrected */
    struct argvec sources; /* their source files as GCC names them, unique, in log order */
};

/* Count GCC's correction notes in a pgo build's log into c (counted set; release first if
 * reused). Lines that echo a command ("$ " from pgolab, or a build tool's) are not notes: a
 * note line has the phrase after a "FILE:" location. Returns c->objects. */
int profile_corrections_read(const char *log_text, struct profile_corrections *c);

/* The summary's words, e.g. "GCC corrected inconsistent profile counts in 2 objects: a.c,
 * b.c (...)", "GCC corrected no profile counts (0 objects)", or for !counted "GCC's
 * profile corrections are not counted (...)". Caller frees. */
char *profile_corrections_line(const struct profile_corrections *c);

/* {"objects": N, "sources": [...]} for the recorded settings, or JSON null when !counted.
 * New reference. */
struct json_t;
struct json_t *profile_corrections_json(const struct profile_corrections *c);

void profile_corrections_release(struct profile_corrections *c);

#endif
