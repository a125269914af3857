/* source: the source tree of a recipe target — a directory given with --source, a tarball
 * unpacked into the work directory, or Debian's source package fetched with `apt-get
 * source` — checked against the recipe's "expect" files, and hashed by content (not by path)
 * so an edited tree is rebuilt; for a library recipe also the prepare stage that turns a full
 * tree into the prepared files its build compiles (prepare.c). Strings returned are the
 * caller's. */
#ifndef PGOLAB_PGO_SOURCE_H
#define PGOLAB_PGO_SOURCE_H

#include <signal.h>
#include <stdbool.h>

#include "pgo/recipe.h"

/* Resolve the source of r: opt (--source, or NULL) is a directory (checked as it is), a
 * tarball (unpacked once into SRCDIR/tarball-KEY, KEY from the tarball's sha256; the tree
 * is looked for there and one level below), or NULL: reuse the newest SRCDIR/PKG-* tree
 * that matches, or `apt-get source PKG=VERSION` in SRCDIR through pgolab's own apt
 * configuration (apt.h; log SRCDIR/apt-get-source.log) from the recipe's suite, else the
 * first suite carrying PKG, the system's release first; the newest version of that suite
 * first, then older ones (a mirror may answer 404 for one). *dir is the absolute tree. -1 with one
 * line, e.g. "--source=/x: not a postgresql source tree (no src/backend/main/main.c; expected
 * ...)". */
int pgo_source_resolve(const struct recipe *r, const char *opt, const char *srcdir, char **dir);

/* pgo_source_resolve, but for a Debian source package (opt NULL) exactly version ("the
 * official binary's revision"; NULL: any, as above): its tree in SRCDIR/PKG_VERSION, reused
 * when there, else `apt-get source PKG=VERSION` from the suite whose lists carry it. -1 with
 * one line naming the version, apt's first error and the command to run. */
int pgo_source_resolve_at(const struct recipe *r, const char *opt, const char *srcdir,
                          const char *version, char **dir);

/* A library recipe's source dir that lacks the "expect" files of a full tree but has the
 * "prepared" ones (SQLite: an amalgamation): the prepare steps are skipped for it. */
bool pgo_source_is_prepared(const struct recipe *r, const char *dir);

/* The Debian version of a source tree: from its own debian/changelog (the first entry's,
 * e.g. "15.18-0+deb12u1"), else from the .dsc `apt-get source` left beside it, else NULL.
 * Caller frees. */
char *pgo_source_debian_version(const char *dir);
/* The version of the .dsc beside an `apt-get source` tree, else NULL. Caller frees. */
char *pgo_source_dsc_version(const char *dir);
/* The source package named by the tree's debian/changelog ("postgresql-15"), else NULL.
 * Caller frees. */
char *pgo_source_debian_package(const char *dir);
/* version without its Debian epoch ("10.11.19-0+deb12u1" of "1:10.11.19-0+deb12u1"): the
 * .dsc's name has none. */
const char *pgo_version_without_epoch(const char *version);
/* When the tree's debian/changelog names another version than the .dsc beside it (epochs
 * aside: the .dsc's name has none; an edited or replaced tree): one line naming both, else
 * NULL. Caller frees. */
char *pgo_source_version_mismatch(const char *dir);

/* The upstream version named by the tree's own version file (the recipe's source.version:
 * MySQL's MYSQL_VERSION, PostgreSQL's configure.ac), the pattern's groups joined by '.'
 * ("9.7.2"); NULL when the recipe has no such rule or the file does not match. Caller
 * frees. */
char *pgo_source_upstream_version(const struct recipe *r, const char *dir);
/* Whether the tree at dir is of the recipe's selected major: its version from its
 * debian/changelog, else from its version file (above). 0 when it is, when the recipe has
 * no major or the version is not known; -1 after one line naming both versions (and the
 * --db-version that builds the tree, when the recipe has its major). */
int pgo_source_check_major(const struct recipe *r, const char *dir);

/* The Debian suite pgolab fetched the tree at dir from ("sid"; recorded beside its .dsc by
 * the fetch), else NULL (a tree fetched otherwise, or given with --source). Caller frees. */
char *pgo_source_debian_suite(const char *dir);

/* ---- prepare (prepare.c) ------------------------------------------------------------ */

struct pgo_prepared {
    char *dir;       /* the prepared source: the tree itself, or WORKDIR/amalg-KEY */
    char *main;      /* dir/prepared[0]: what the build steps compile (SQLite: sqlite3.c) */
    bool ran;        /* the prepare steps apply to this tree (else it was prepared already) */
    bool cached;     /* reused, not made now */
    double seconds;  /* wall time of the steps */
};

/* The prepare stage of a library recipe r on source (resolved): a tree that is already
 * prepared (or a recipe without "prepare") is used as it is; otherwise the prepare steps run
 * in WORKDIR/amalg-KEY (KEY from the tree's path; {build} and {prepared} are that directory,
 * {source} the tree, the rest from vars) after "prepare.requires" is checked, with their
 * output in build.log there. A stamp of the tree's content hash and the expanded steps lets a
 * later run reuse it; an edited tree or edited steps are prepared again; force always does.
 * -1 with one line (a missing tool with its Debian package, a failed step with its command
 * and log tail, a prepared file the steps did not make). stop: the caller's interrupt flag
 * (NULL: none); each step runs in a process group of its own and is stopped once it is set,
 * also when the signal came just before the step started. */
int pgo_prepare(const struct recipe *r, const char *source, const char *workdir,
                const struct recipe_vars *vars, bool force, const volatile sig_atomic_t *stop,
                struct pgo_prepared *out);
void pgo_prepared_release(struct pgo_prepared *p);

#endif
