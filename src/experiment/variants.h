/* variants: the fingerprint of each build under test, so that a result names exactly what it
 * measured and a resume can refuse a changed build: the sha256 of the library or server
 * binary, the version and source id the library reports (asked of a `pgolab bench ... info`
 * child) and the file it was loaded from; a managed server's flavor and version from its
 * --version, and for one nobody described (compare's) how it was built and what differs from
 * the baseline's build (toolchain/build_info.h); a running server's version as it reports
 * it. The fingerprint strings are heap
 * strings owned by the variant (experiment_variant_release(), src/model/model.h). */
#ifndef PGOLAB_EXPERIMENT_VARIANTS_H
#define PGOLAB_EXPERIMENT_VARIANTS_H

#include "model/model.h"

/* Fill sha256/version/source_id/loaded_from of every variant where NULL (sha256 via the
 * sha256sum program, the rest by asking `pgolab bench --sqlite-library=LIB --format=json
 * info`; managed servers: sha256 of the binary and the version its --version prints, and
 * without a provenance build and build_differences; external servers: nothing). -1 with a
 * message on error. */
int experiment_fingerprint(const struct experiment_config *cfg);

#endif
