/* build_log: what a pgo build's log says about the profile it was compiled with.
 *
 * GCC names the object in each warning; a lenient recipe (a server) counts its "profile count
 * data file not found" warnings, clang's "no profile data available for file" (code the
 * trainer never ran: the client tools, libpq) and refuses every other profile problem. Clang keys
 * its profile by function name (a static function by file and name) and says per translation unit,
 * without naming it, "profile data may be out of date: of N functions, M have mismatched data". A
 * project that compiles one source twice (PostgreSQL's src/common and libpq: a frontend copy for
 * the tools beside the backend's) gets that warning for every copy the training never ran, whose
 * same-named twin it did: 14 objects, 22 functions in PostgreSQL 15. A stale profile gets it too,
 * so the warning is attributed to the object compiled before it (pgolab runs make with
 * --output-sync=target through GNUMAKEFLAGS, so a compile's messages follow its own command): an
 * object that holds one of the recipe's hot functions, or a warning no compile command precedes, is
 * refused; the others are counted and reported. A strict recipe (SQLite: one object) refuses every
 * warning.
 *
 * Owns its scan's results (build_log_scan_release); reads the log text it is given. */
#ifndef PGOLAB_PGO_BUILD_LOG_H
#define PGOLAB_PGO_BUILD_LOG_H

#include <stdbool.h>

/* One object whose profile clang found out of date for some functions. */
struct build_log_stale {
    char *object;   /* as the log names it: "-o d2s_shlib.o", "CMakeFiles/x.dir/a.c.o" */
    int functions;  /* functions of the object with profile data ("of N functions") */
    int mismatched; /* of them, compiled without it ("M have mismatched data") */
};

struct build_log_scan {
    int missing;                   /* objects without profile data: GCC's "not found",
                                    * clang's "no profile data available for file" */
    struct build_log_stale *stale; /* clang: out-of-date objects let through, in log order */
    int nstale;
    int stale_functions;           /* sum of their mismatched functions */
    char *problem;                 /* why the build did not use its profile, in words; NULL =
                                    * none. The first problem found. */
};

/* Scan a pgo build's log. strict: every profile warning is a problem (missing ones too).
 * hot_objects: the object stems of the recipe's hot functions ("execExprInterp" of
 * "execExprInterp:ExecInterpExpr"; NULL-terminated, may be NULL). Lines that start with "$ "
 * (a step's echoed command) are never messages. Returns 0, -1 when a problem was found
 * (out->problem says which); out is reset first. */
int build_log_scan(const char *log, bool strict, const char *const *hot_objects,
                   struct build_log_scan *out);

void build_log_scan_release(struct build_log_scan *s);

/* "execExprInterp" of "src/backend/executor/execExprInterp.o", "sql_parse" of
 * "sql/CMakeFiles/sql.dir/sql_parse.cc.o": the object's base name without ".o" and a
 * source suffix. Caller frees. */
char *build_log_object_stem(const char *object);

#endif
