/* source: the source tree of a recipe target — a directory given with --source, a tarball
 * unpacked into the work directory, or Debian's source package fetched with `apt-get
 * source` — checked against the recipe's "expect" files, and hashed by content (not by path)
 * so an edited tree is rebuilt. Strings returned are the caller's. */
#ifndef PGOLAB_PGO_SOURCE_H
#define PGOLAB_PGO_SOURCE_H

#include "pgo/recipe.h"

/* Resolve the source of r: opt (--source, or NULL) is a directory (checked as it is), a
 * tarball (unpacked once into SRCDIR/tarball-KEY, KEY from the tarball's sha256; the tree
 * is looked for there and one level below), or NULL: reuse the newest SRCDIR/PKG-* tree that matches, or `apt-get source PKG`
 * in SRCDIR (log SRCDIR/apt-get-source.log); when the candidate version cannot be fetched
 * (a mirror without it answers 404), the other versions `apt-cache showsrc PKG` lists are
 * tried, newest first. *dir is the absolute tree. -1 with one line, e.g.
 * "--source=/x: not a postgresql source tree (no src/backend/main/main.c; expected ...)". */
int pgo_source_resolve(const struct recipe *r, const char *opt, const char *srcdir, char **dir);

/* The Debian version of an `apt-get source` tree (from the .dsc beside it, e.g.
 * "15.18-0+deb12u1"), else NULL. Caller frees. */
char *pgo_source_debian_version(const char *dir);

#endif
