/* build_info: how a program was built, from what its binary and the files around it tell, each
 * piece with the source it was read from, and how two such builds differ. build_info.c reads:
 * a pgolab build (VARIANT/prefix with VARIANT/stamp beside it: the compiler, flags and phase
 * flags of the stamp, the configure command of VARIANT/build.log, a configure build's own
 * record of its compile flags), PostgreSQL's pg_config beside the binary (--cc, --cflags,
 * --configure), and the ELF file itself (the compilers of its .comment section, the first
 * compile unit's DW_AT_producer, in the file or in its separate debug file found by build-id).
 * build_diff.c is pure: configure option words and features, flags, the text of one build and
 * of the differences of two. Knows nothing of recipes or server families: what it reads is
 * named by file. Owns no state; a struct build_info owns its strings (build_info_release()). */
#ifndef PGOLAB_BUILD_INFO_H
#define PGOLAB_BUILD_INFO_H

#include "util/argvec.h"

#include <stdbool.h>

/* What is known of one build. A NULL field is not known; each *_from names where its field
 * was read ("pgolab stamp", "pg_config --cflags", ".comment", "DWARF producer", ...). */
struct build_info {
    char *compiler;           /* "gcc (Debian 12.2.0-14) 12.2.0", "gcc" (pg_config --cc) */
    const char *compiler_from;
    char *cflags;             /* the compile flags as the source says them */
    const char *cflags_from;
    struct argvec configure;  /* configure (or cmake) options, one word each */
    const char *configure_from; /* NULL: the options are not known */
};

/* ---- build_info.c: reading ---------------------------------------------------------- */

/* What the binary bin and the files around it tell of its build, into bi (zeroed first).
 * Never fails: what cannot be read stays NULL. */
void build_info_read(const char *bin, struct build_info *bi);
/* pg_config's answer to opt ("--configure", "--cflags", "--cc") beside bin (a PostgreSQL
 * binary), its first line without leading blanks, or NULL when there is no pg_config or it
 * fails. Caller frees. */
char *build_pg_config(const char *bin, const char *opt);
/* The strings of the ELF file path's .comment section ("GCC: (Debian 12.2.0-14) 12.2.0"),
 * joined by "; ", or NULL when it has none. Caller frees. */
char *build_elf_comment(const char *path);
/* The DW_AT_producer of path's first compile unit ("GNU C17 12.2.0 -mtune=generic -O2 ...":
 * GCC records its options there), read from the file or, when it has no DWARF, from
 * /usr/lib/debug/.build-id/NN/REST.debug; NULL when neither has it. Caller frees. */
char *build_dwarf_producer(const char *path);
void build_info_release(struct build_info *bi);

/* ---- build_diff.c: words, features and differences (pure) ------------------------------- */

/* Shell-quoted words ("'--with-tcl' '--prefix=/usr' CC=gcc", as pg_config --configure and a
 * build log print them) appended to out. */
void build_words_split(const char *text, struct argvec *out);
/* The feature a configure option sets: "icu" of --with-icu, --without-icu, --with-icu=x;
 * "WITH_SSL" of cmake's -DWITH_SSL=system. NULL for any other option, for build-process ones
 * (silent rules, dependency tracking, option checking, maintainer mode), for labels
 * (--with-extra-version) and for cmake's own CMAKE_* variables. Caller frees. */
char *build_feature_of(const char *opt);
/* The option of opts that sets feature (the last one, as configure takes it), or NULL: the
 * default. */
const char *build_feature_setting(const struct argvec *opts, const char *feature);
/* The features that a and b set otherwise (one side may not name it: its default), each
 * name once into out, in the order a then b names them. */
void build_features_differ(const struct argvec *a, const struct argvec *b, struct argvec *out);
/* The flags of text (a compiler command's words, pg_config --cflags, a DW_AT_producer) that
 * decide the code: every word that starts with '-' except warnings (-W), macros (-D, -U),
 * include paths (-I) and the language standard (-std=), each once, in order. */
void build_code_flags(const char *text, struct argvec *out);
/* "gcc 12.2.0" of any of a compiler's self-descriptions ("gcc (Debian 12.2.0-14) 12.2.0",
 * "GCC: (Debian 12.2.0-14) 12.2.0", "GNU C17 12.2.0 -O2", "Debian clang version 14.0.6"); the
 * name alone when it says no version ("gcc"); NULL for NULL. Caller frees. */
char *build_compiler_short(const char *text);
/* One line of bi: "COMPILER (FROM); flags FLAGS (FROM); configure FEATURES (FROM)", with
 * "not known" for what is NULL. Caller frees. */
char *build_info_describe(const struct build_info *bi);
/* How b (named bname) differs from a (aname) in compiler, code flags and configure features,
 * one line ("compiler gcc 12.2.0 (a) vs clang 14.0.6 (b); flags ...; configure ..."), or NULL
 * when the sources tell no difference. What one side does not know is said, not compared.
 * Caller frees. */
char *build_info_differences(const struct build_info *a, const char *aname,
                             const struct build_info *b, const char *bname);

#endif
