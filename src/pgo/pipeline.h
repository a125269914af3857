/* pipeline: the PGO pipeline of `pgolab pgo TARGET` for every recipe target (pgo/recipe.h),
 * servers and libraries (SQLite) alike: source [-> the recipe's prepare steps] -> baseline
 * build -> instrumented build -> training (one profile per trainer) -> profile check -> pgo
 * build (one per trainer) [-> BOLT variants] -> correctness gate -> measurement with the
 * experiment engine -> report. Every phase is cached under the work directory with a
 * stamp of exactly what it read (recipe text, source tree content hash, compiler version,
 * flags, profile hash), so an interrupted run continues where it stopped and a changed input
 * redoes the phases it feeds, saying why. cli/cmd_pgo.c owns the options and hands a validated
 * struct pgo_request over; the pipeline owns everything it builds (struct pgo_pipeline). */
#ifndef PGOLAB_PGO_PIPELINE_H
#define PGOLAB_PGO_PIPELINE_H

#include "pgo/request.h"

/* Run the whole pipeline for rq and print its summary and tables on stdout. Returns the
 * exit code: 0 ok, 1 error (one line said why), 2 interrupted, 3 --fail-if-slower. */
int pgo_pipeline_run(const struct pgo_request *rq);

#endif
