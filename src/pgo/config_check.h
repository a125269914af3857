/* config_check: every build of a group of build settings is configured as its baseline.
 *
 * A configure step runs compiler checks under the build's own flags. A check that compiles
 * with -Werror fails when those flags make the compiler warn: in a pgo build GCC warns
 * "profile count data file not found" (-Wmissing-profile) for every check program, which has
 * no profile. The pgo build is then another configuration of the source than the baseline it
 * is measured against. Seen on MariaDB 10.11: its pgo build lost HAVE_VFORK and
 * PTHREAD_ONCE_INITIALIZER, and the changed macros moved GCC's line maps of its largest
 * translation unit (sql/slave.cc) far enough that the profile no longer matched ("source
 * locations for function 'THD::set_time()' have changed"). pgolab's pgo flags now keep that
 * warning a warning (toolchain/flags.c, pgo/steps.c); this check proves the outcome.
 *
 * The recipe's "config_headers" name what configure writes (relative to the build
 * directory). After each build pgolab keeps a copy in DIR/config/ (the build directory may be
 * reused by a later phase) and compares the macros with the group's reference build: its
 * baseline, or its instrumented build where no baseline of the group is built. Owns no
 * state; errors are one line. */
#ifndef PGOLAB_PGO_CONFIG_CHECK_H
#define PGOLAB_PGO_CONFIG_CHECK_H

#include <stdbool.h>

struct pgo_pipeline;
struct pgo_build;

#define CONFIG_DIFF_NAMED 3 /* macros a difference names; the rest are counted */

/* How the macros of two config headers differ, in words ("HAVE_VFORK defined in baseline
 * (1), not in pgo; ... (2 macros differ)"), or NULL when they agree. A macro is
 * "#define NAME [VALUE]" (defined) or "#undef NAME", also inside a comment as autoconf and
 * cmake write it (undefined); other lines are ignored. Before comparing values, each
 * occurrence of a path in ref_paths (resp. paths: the build's install prefix and build
 * directory; NULL-terminated, may be NULL) is replaced by "{path}", so where a build installs
 * is not a difference. ref_name and name say which build is which. Caller frees. */
char *config_header_diff(const char *ref_text, const char *const *ref_paths, const char *ref_name,
                         const char *text, const char *const *paths, const char *name);

/* After build b of group p finished (fresh) or was found cached: keep its config headers in
 * b->dir/config (fresh builds), then compare them with the group's reference build's copies.
 * A cached build from before pgolab kept copies gets them from its build directory while
 * that is still its own; where it is not (the instrumented build's, reused by the pgo build),
 * that build is not compared. 0 when they agree or the recipe names none; -1 with one error
 * line naming the header, the macros, both builds and where the configure log is. */
int config_check_build(const struct pgo_pipeline *p, const struct pgo_build *b, bool fresh);

#endif
