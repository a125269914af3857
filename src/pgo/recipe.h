/* recipe: a PGO target as a declarative JSON file (recipes/NAME.json; the format is
 * docs/recipes.md), read with jansson into a struct recipe that the target-agnostic pipeline
 * (pgo/pipeline.h) runs. A recipe says where the source comes from and how to recognise it,
 * the configure/build/install steps as argv templates, where the PGO flags go (the compiler
 * flag table of toolchain/flags.c, or the target's own per-phase options as for MySQL), whether
 * the phases share one build directory, what the product is (a server binary under the
 * install prefix, or a library), and the optional regression-suite gate. Everything a recipe
 * holds is owned by the struct and freed by recipe_release(). */
#ifndef PGOLAB_PGO_RECIPE_H
#define PGOLAB_PGO_RECIPE_H

#include <stdbool.h>

#include "toolchain/toolchain.h"
#include "server/server.h"
#include "util/argvec.h"

#define RECIPE_FORMAT 1  /* the "pgolab_recipe" version this pgolab reads */

/* What the pipeline produces and measures. */
enum recipe_product {
    RECIPE_SERVER,   /* a server under PREFIX (recipe "server.binary"), started by src/server */
    RECIPE_LIBRARY,  /* a SQLite library (recipe "library", relative to the build directory),
                      * loaded by bench's embedded driver with --sqlite-library; built and
                      * measured by the library branch of the pipeline (pgo/target_sqlite.c) */
};

/* Where the instrumentation and profile-use flags come from. */
enum recipe_flags {
    RECIPE_FLAGS_COMPILER,  /* toolchain/flags.c's table for (compiler, phase): {pgo_flags} */
    RECIPE_FLAGS_OPTIONS,   /* the recipe's own "phase_options" (e.g. MySQL's
                             * -DFPROFILE_GENERATE=ON / -DFPROFILE_USE=ON with FPROFILE_DIR);
                             * {pgo_flags} is then empty */
};

/* Where each phase compiles (recipe "build_dir"). GCC's profile of a function carries a
 * checksum of its source file name and line (-Werror=coverage-mismatch: "source locations
 * for function F have changed"), and a generated source's #line names its absolute path in the
 * build directory (bison's parsers in MariaDB's sql/yy_*.cc): such a function matches its
 * profile only when the pgo build compiles where the instrumented build did. */
enum recipe_build_dir {
    RECIPE_BUILD_DIR_PER_VARIANT,  /* "per-variant" (default): every build its own directory */
    RECIPE_BUILD_DIR_SHARED,       /* "shared": every phase reuses ROOT/build (MySQL's rule) */
    RECIPE_BUILD_DIR_PGO_REUSES,   /* "pgo-reuses-instrumented": the baseline (and lto) its
                                    * own; every pgo build compiles in the instrumented build's
                                    * directory once it is trained (replacing its tree) */
};

/* One command: an argv template (placeholders, docs/recipes.md) run in a directory. */
struct recipe_step {
    char *name;       /* "configure", "build", "install", ... (for progress and errors) */
    char **argv;      /* NULL-terminated templates */
    char *cwd;        /* template; default "{build}" */
    char **env;       /* NULL-terminated "NAME=VALUE" templates, or NULL */
};

/* A log phrase that turns a step's output into one clear error (e.g. a download attempt). */
struct recipe_log_error {
    char *contains;   /* substring looked for in the step's log */
    char *message;    /* the error to print, naming the option that avoids it */
};

/* A program (on PATH) or a file (a library's header) the recipe's steps need, with the
 * Debian package that has it. */
struct recipe_tool {
    char *program, *file, *package;
    char *unless;     /* prepare.requires only: a file (relative to the source) whose presence
                       * makes the tool unnecessary (SQLite trees that bundle jimsh need no
                       * tclsh) */
};

/* One option rule of "distro": a Debian configure option (matched by its name, the text before
 * any '=', or the whole option) and why it is dropped, or the Debian package it needs. */
struct recipe_distro_rule {
    char *option;     /* NULL in distro.requires: needed whatever the options (a default of
                       * the package's configure, e.g. PostgreSQL's readline) */
    char *reason;     /* distro.drop: why the distro variant leaves it out */
    char *package;    /* distro.requires: the Debian package it needs (dpkg-query) */
};

struct recipe {
    char *path;                /* the file it was read from (absolute) */
    char *name;                /* "postgresql" */
    char *title;               /* as people write it, for messages ("SQLite"); default: name */
    char *description;
    char *sha256;              /* of the file's text: part of every build's stamp */
    enum recipe_product product;
    enum server_kind server_kind;   /* RECIPE_SERVER: "server.driver" mysql | pgsql */
    char *server_binary;            /* RECIPE_SERVER: relative to PREFIX, e.g. "bin/postgres" */
    char *official_binary;          /* RECIPE_SERVER: server.official.binary, the distribution's
                                     * own server of this source (the `official` variant), an
                                     * absolute path; NULL when the recipe names none */
    char *official_package;         /* server.official.package, its Debian package, or NULL */
    char *library;                  /* RECIPE_LIBRARY: relative to the build directory */
    /* source */
    char *debian_package;      /* `apt-get source PKG`, or NULL: --source is required */
    char *debian_suite;        /* the Debian suite PKG comes from ("sid"), or NULL: the
                                * system's release, else the first newer suite carrying it
                                * (pgolab's own apt configuration, apt.h) */
    char *debian_package_template; /* with "versions": source.debian as written
                                * ("postgresql-{major}"), for naming the other majors */
    /* versions: the major versions the recipe builds ("15", "10.11"; NULL-terminated, or
     * NULL without "versions"), Debian 12's, each one's own requires; the selected one
     * (recipe_select_major(): {major} in source.debian, server.official and the steps) */
    char **majors;
    char *major_default;
    struct recipe_tool **major_tools;
    int *nmajor_tools;
    struct recipe_step **major_steps; /* a major's own steps, run after the recipe's */
    int *nmajor_steps;
    char *major;               /* NULL until selected */
    char **expect;             /* files a matching source tree has (relative), NULL-terminated */
    char *source_hint;         /* what the tree should be, for "does not match" errors */
    char *version_file;        /* source.version.file: the tree's file that names its upstream
                                * version ("MYSQL_VERSION"), or NULL */
    char *version_pattern;     /* source.version.pattern: a POSIX extended regex over that
                                * whole file whose groups, joined by '.', are the version */
    char **prepared;           /* library recipes: the files of an already prepared source
                                * (SQLite's amalgamation: sqlite3.c, sqlite3.h), which skips
                                * the prepare steps; [0] is the source the steps compile.
                                * NULL-terminated, or NULL */
    /* prepare (library recipes): steps run once per source tree, out of tree, that make the
     * prepared files from a full tree (SQLite: configure, make sqlite3.c) */
    char *prepare_name;        /* "amalgamation": its summary line and progress */
    struct recipe_step *prepare;
    int nprepare;
    struct recipe_tool *prepare_tools;  /* what the prepare steps need (with "unless") */
    int nprepare_tools;
    /* build */
    enum recipe_build_dir build_dir;  /* "build_dir": where each phase compiles */
    char **config_headers;     /* "config_headers": what configure wrote, relative to the build
                                * directory (MariaDB's include/my_config.h); every build must
                                * decide its checks as its group's baseline did (config_check.h).
                                * NULL-terminated, or NULL */
    enum recipe_flags flags;
    char **phase_options[BUILD_NPHASES];  /* RECIPE_FLAGS_OPTIONS: spliced at {phase_options} */
    bool strict_profile;       /* missing profile data is an error (SQLite: one object);
                                * servers: counted and reported (untrained programs) */
    char **hot_functions;      /* pgo.hot_functions: "OBJECT:FUNCTION" the training must reach
                                * (the profile check refuses a profile without their counts;
                                * NULL-terminated, NULL = none) */
    struct recipe_step *steps; /* in order */
    int nsteps;
    struct recipe_step *suite; /* "suite": the database's own regression tests, run against a
                                * started pgo server (--gate=suite, and the "suite" trainer) */
    int nsuite;
    struct recipe_log_error *log_errors;
    int nlog_errors;
    struct recipe_tool *tools;
    int ntools;
    char **train_options;      /* --server-option values while training (NULL-terminated) */
    bool suite_own_server;     /* server.suite_server "own": the suite starts the build's
                                * servers itself (MariaDB's mysql-test-run from the build
                                * tree); "started" (default): pgolab starts one for it */
    /* "bolt": how the target is built for BOLT (pgo.md 4.8), used by the bolt and pgo+bolt
     * variants; NULL lists when the recipe has no "bolt" key (BOLT variants are refused) */
    /* "distro": how the distro variant (pgo/distro.h: built the way Debian's package builds)
     * runs Debian's configure in place of the recipe's step named "configure"; NULL lists
     * and has_distro false when the recipe has no "distro" key (the variant is refused) */
    bool has_distro;
    char **distro_run;         /* the command's head, templates ("{source}/configure"; "cmake",
                                * "{source}"): Debian's options follow it */
    char **distro_paths;       /* templates after Debian's options: the variant's own install
                                * directories ("--prefix={prefix}"), where Debian's are dropped */
    struct recipe_distro_rule *distro_drop;      /* options left out, each with its reason */
    int ndistro_drop;
    struct recipe_distro_rule *distro_requires;  /* options and the package each needs */
    int ndistro_requires;
    bool has_bolt;
    char **bolt_cflags;        /* compile flags, e.g. -fno-reorder-blocks-and-partition */
    char **bolt_clang_cflags;  /* clang's instead (it does not know GCC's, and splits no
                                * function into .cold parts unless asked); default none */
    char **bolt_link_flags;    /* link flags, at least -Wl,--emit-relocs */
    char *bolt_binary;         /* what BOLT optimizes: library recipes the library (default),
                                * servers relative to the prefix (default server.binary) */
    bool bolt_append_pid;      /* one BOLT profile per process (forked servers; default true) */
    char **bolt_instrument_options; /* more llvm-bolt -instrument options (never NULL once
                                     * loaded with a "bolt" key), e.g. --instrument-calls=false */
    int bolt_sleep_s;          /* > 0: the instrumented binary also dumps its profile every N s
                                * (daemons whose exit is not the end of the work); 0: at exit */
};

/* Read and validate a recipe file. Errors are one line naming the file (and line where the
 * text has one): a JSON syntax error (jansson's line:column), an unknown key or a missing
 * one ("FILE:LINE: unknown key 'x' in steps[1] (known: name, run, cwd, env)"), a wrong type,
 * an unknown placeholder, a "pgolab_recipe" newer than RECIPE_FORMAT. 0 or -1. */
int recipe_load(const char *path, struct recipe *out);
void recipe_release(struct recipe *r);

/* Select major (one of r->majors): {major} in source.debian, server.official.binary and
 * .package and source.hint replaced, the major's own requires added to r->tools and its own
 * steps after r->steps, r->major set.
 * -1 with one line listing the recipe's majors (or saying it has none). */
int recipe_select_major(struct recipe *r, const char *major);
/* r->majors as "15, 16, 17, 18". Caller frees. */
char *recipe_majors_list(const struct recipe *r);

/* Check that every tool of tools[n] is there (a program on PATH, a file); one whose "unless"
 * file exists under source (when given) is not needed. -1 with one line naming every missing
 * one: "the NAME recipe[ WHAT] needs PROGRAM[, FILE...] (Debian package[s] PKG...: apt-get
 * install PKG...)", each package once. */
int recipe_check_tools(const struct recipe *r, const struct recipe_tool *tools, int n,
                       const char *what, const char *source);

/* Find the recipe of a target: a name containing '/' or ending in ".json" is a file (NULL
 * with "recipe FILE: no such file" when it is not one); otherwise NAME.json in each directory
 * of $PGOLAB_RECIPES (':'-separated), then DIR/recipes and DIR/../share/pgolab/recipes where
 * DIR holds the pgolab binary (NULL, silently, when none has it: the caller names the
 * targets it knows). Caller frees. */
char *recipe_find(const char *target);
/* The target names found on that search path, sorted, ", "-joined ("" if none). Caller frees. */
char *recipe_names(void);

/* The values placeholders expand to. NULL members expand to "" (and a step that needs one
 * of them is the pipeline's bug, not the user's). */
struct recipe_vars {
    const char *source, *build, *prefix, *profile_dir, *phase, *prepared;
    const char *cc, *cxx, *cflags, *cxxflags, *pgo_flags;
    const char *lto;                      /* "ON" for an lto variant's build, else "OFF": for a
                                           * target's own LTO option (MySQL's -DWITH_LTO) */
    const char *const *pgo_flags_list;    /* when set: the words of pgo_flags, spliced where an
                                           * argument is "{pgo_flags}" (paths with spaces stay
                                           * whole); else pgo_flags is split at whitespace */
    int jobs;
    const char *const *phase_options;     /* spliced where an argument is "{phase_options}" */
    const char *major;                    /* the recipe's selected major version, or NULL */
    /* suite only */
    const char *host, *socket, *socket_dir, *user, *db;
    int port;
};

/* Expand one step's argv (and env / cwd) into out / env / cwd. An argument that is exactly
 * "{phase_options}" becomes the phase's options (zero or more arguments), one that is exactly
 * "{cflags}", "{cxxflags}" or "{pgo_flags}" becomes their words (zero or more arguments: a
 * compiler command line); "{cflags} {pgo_flags}" inside one argument expands in place
 * (whitespace collapsed at the ends). */
void recipe_expand_step(const struct recipe_step *step, const struct recipe_vars *vars,
                        struct argvec *argv, struct argvec *env, char **cwd);
/* Expand placeholders in one template string. Caller frees. */
char *recipe_expand(const char *tmpl, const struct recipe_vars *vars);

#endif
