/* variant_spec: how a variant of `pgolab pgo --variants` is written: [DIMENSION:]...KIND, a
 * point in the space of builds. KIND is what is built (baseline, pgo, lto, pgo+lto, ...);
 * each DIMENSION before it sets one build setting of that variant, either by its value alone
 * when the value says which dimension it is (clang, gcc-12; -O3) or as NAME=VALUE
 * (cc=/opt/bin/clang, cflags=-O3 -march=native). Examples: pgo, clang:pgo+lto,
 * clang:-O3:baseline, cc=clang-14:pgo. A dimension left out, or given the default's value,
 * takes the default (--cc, --cflags). The dimensions are a table in variant_spec.c: adding
 * one is adding a row and its field here. Owns no state; what it returns is the caller's. */
#ifndef PGOLAB_PGO_VARIANT_SPEC_H
#define PGOLAB_PGO_VARIANT_SPEC_H

#include <stdbool.h>

/* A variant kind the caller accepts, and whether it takes dimensions. */
struct variant_spec_kind {
    const char *name;             /* "pgo+lto" */
    const char *plain_only;       /* NULL: takes dimensions; else why not (one phrase) */
};

/* One parsed variant. A dimension's field is NULL where it is the default (left out or given
 * the default's value). */
struct variant_spec {
    char *name;                   /* canonical: the non-default dimensions' values in the
                                   * table's order, then the kind ("clang:-O3:pgo"); the
                                   * kind alone for the default build settings */
    char *kind;
    char *text;                   /* as written (messages) */
    char *cc;                     /* the compiler, NULL: the default (--cc) */
    char *cflags;                 /* the compiler flags (replacing --cflags), NULL: default */
};

/* Parse text against kinds[0..nkinds) with the defaults' values in defaults (its cc and
 * cflags; name and kind unused) into *out (zeroed first). -1 after one line naming the
 * unknown dimension, value or kind and what is accepted. */
int variant_spec_parse(const char *text, const struct variant_spec_kind *kinds, int nkinds,
                       const struct variant_spec *defaults, struct variant_spec *out);
void variant_spec_release(struct variant_spec *s);

/* The builds of one set of build settings: every variant with the same dimensions. */
struct variant_group {
    char *label;                  /* the names' prefix without its ':' ("clang", "clang:-O3");
                                   * NULL for the default group */
    char *cc, *cflags;            /* resolved: the spec's, else the default's */
    char **kinds;                 /* NULL-terminated, in the order given */
    int nkinds;
};

/* The specs s[0..n) grouped by their dimensions: (*out)[0] is always the default group (its
 * kinds may be none), the others follow in the order of their first variant. A build given
 * twice (two spellings of one canonical name) is refused in one line. 0 or -1. */
int variant_specs_group(const struct variant_spec *s, int n, const struct variant_spec *defaults,
                        struct variant_group **out, int *nout);
void variant_groups_free(struct variant_group *g, int n);

/* Whether group g has kind. */
bool variant_group_has(const struct variant_group *g, const char *kind);

/* "a compiler: gcc, clang ...; compiler flags: ...": the accepted values of every dimension,
 * for help texts and messages (a static string). */
const char *variant_spec_accepted(void);

#endif
