/* export: `pgolab export`: a build that `pgolab pgo` measured (the --search winner by default)
 * as a Debian package of its own, read from the results database and the build's work
 * directory (nothing is rebuilt or measured). A server installs its whole prefix under
 * /opt/pgolab/TARGET-VARIANT (never over the distribution's files), a library (SQLite) its
 * libsqlite3.so there with the libsqlite3.so.0 name LD_LIBRARY_PATH looks for; both with a
 * manifest (pgolab-manifest.json: target, source package and version, compiler and flags,
 * trainer, profile digest, the measured gains with their CIs and the experiment) and a README in
 * /usr/share/doc/PACKAGE. Owns no state. */
#ifndef PGOLAB_PGO_EXPORT_H
#define PGOLAB_PGO_EXPORT_H

#include <stdint.h>

/* What to export (the strings stay the caller's). */
struct pgo_export_request {
    const char *results;    /* the results database (must exist) */
    const char *target;     /* only experiments of this recipe target, or NULL */
    int64_t experiment_id;  /* 0: the newest complete --search confirmation, else the newest
                             * complete pgo experiment by time (of target) */
    const char *variant;    /* NULL: the winner (the best significant tps gain over baseline) */
    const char *outdir;     /* where the .deb is written */
    const char *name;       /* the package's name, or NULL: pgolab-TARGET-VARIANT */
};

/* Check everything (the experiment, the variant, its build still there and the binary the one
 * measured, its profile's recorded health, no package of the name installed, no such file),
 * then build the package with dpkg-deb and print its path and how to install and start it.
 * 0, or 1 after one line naming the input and what exists. */
int pgo_export(const struct pgo_export_request *rq);

#endif
