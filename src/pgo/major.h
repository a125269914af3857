/* major: which major version of a recipe target to build (--db-version, the major of the
 * distribution's binary installed here, the recipe's "versions" default), and the Debian
 * package of an installed binary. Used by the pipeline and by `pgolab pgo TARGET --fetch`
 * (cli/cmd_pgo.c), which fetches the source without running the pipeline. Owns no state. */
#ifndef PGOLAB_PGO_MAJOR_H
#define PGOLAB_PGO_MAJOR_H

#include "pgo/recipe.h"

/* Select the major version of r to build (major.c): db_version (--db-version, or NULL), else
 * the major of the distribution's binary installed here (official: --official=PATH, else the
 * recipe's server.official.binary, {major} tried for each of its majors; the default one
 * first, else the newest installed), else the recipe's "versions" default. A recipe without
 * "versions" builds its one version (db_version refused). 0 or -1 with one line. */
int pgo_major_select(struct recipe *r, const char *db_version, const char *official);

/* The Debian package that installed the file bin and that package's exact version
 * (dpkg-query -S, -W) into *pkg and *version (caller frees; official.c). 0, or -1 with both
 * NULL (no package installed it). */
int pgo_official_package_of(const char *bin, char **pkg, char **version);

#endif
