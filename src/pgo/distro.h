/* distro: the distro variant of a server target, built the way the Debian source package
 * builds it: the configure (or cmake) options its debian/rules passes and the compile flags
 * dpkg-buildflags gives, read from the source tree itself by dry runs that change nothing:
 * `make -n -f debian/rules override_dh_auto_configure` (and its -arch form) prints the rules'
 * commands; a dh_auto_configure among them is asked again with --no-act, which prints the
 * configure or cmake command debhelper would run; the flags are the rules' own make
 * variables (CFLAGS, ... as /usr/share/dpkg/buildflags.mk sets them with the rules'
 * DEB_BUILD_MAINT_OPTIONS), else dpkg-buildflags run with those settings. Debian's install
 * directories are dropped for the recipe's own ("distro.paths"), and so is what the recipe's
 * "distro.drop" names, each with its reason; an option whose Debian package
 * ("distro.requires") is not installed refuses the variant before any build. The compiler is
 * the pipeline's (GCC, as Debian's). It is not the distribution's binary, and its provenance
 * says so. Owns what it puts in struct pgo_distro; pgo_distro_release() frees it. */
#ifndef PGOLAB_PGO_DISTRO_H
#define PGOLAB_PGO_DISTRO_H

#include "pgo/recipe.h"
#include "util/argvec.h"

/* Debian's configure of one source tree, as the distro variant runs it. */
struct pgo_distro {
    char *via;                /* how it was read: "debian/rules override_dh_auto_configure,
                               * dh_auto_configure --no-act" */
    char *builddir;           /* Debian's build directory, absolute (relative values such as
                               * cmake's -DWITH_BOOST=../boost are taken from there) */
    struct argvec options;    /* Debian's options kept, in their order */
    struct argvec env;        /* NAME=VALUE for the configure step: CFLAGS, CXXFLAGS, CPPFLAGS,
                               * LDFLAGS, and the rules' own assignments before the program */
    struct argvec dropped;    /* "OPTION (why)", in Debian's order */
    char *maint_options;      /* DEB_BUILD_MAINT_OPTIONS as debian/rules sets it, or NULL */
    char *flags_from;         /* "debian/rules (buildflags.mk)" or "dpkg-buildflags" */
    char *cflags;             /* CFLAGS as given to the configure step: the fingerprint's */
};

/* Read tree's debian/rules for recipe r into *out (zeroed first): -1 with one line naming the
 * tree and what is missing (no debian/rules, no configure command of r's "distro.run" program
 * in its dry run, a dry run that failed). */
int pgo_distro_read(const char *tree, const struct recipe *r, struct pgo_distro *out);

/* The options of d that need a Debian package (r's "distro.requires") not installed here:
 * -1 with one line naming each option and package and the apt-get command; 0 when all are. */
int pgo_distro_check(const struct pgo_distro *d, const struct recipe *r);

/* Split one Debian option's name: "--with-icu" of "--with-icu", "--libdir" of "--libdir=X",
 * "WITH_BOOST" of "-DWITH_BOOST:PATH=X", "CFLAGS" of "CFLAGS=-O2". Caller frees. */
char *pgo_distro_option_name(const char *opt);

/* Why option opt of Debian's command is left out (an install directory, or r's "distro.drop"
 * reason), or NULL when it is kept. The string is static or r's. */
const char *pgo_distro_drop_reason(const struct recipe *r, const char *opt);

/* The summary's lines: the flags, the options and what was dropped. */
void pgo_distro_print(const struct pgo_distro *d);

void pgo_distro_release(struct pgo_distro *d);

#endif
