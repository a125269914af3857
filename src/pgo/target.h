/* target: what a kind of PGO target provides to the one pipeline (pipeline.c), which runs
 * the same stages in the same order for every target: checks, source, builds, training, pgo
 * builds, correctness gate, summary, measurement. A recipe names its product (pgo/recipe.h):
 * a server (target_server.c: PostgreSQL, MariaDB, MySQL and the test stand-in, each a
 * recipe) or an embedded library loaded into the benchmark process (target_sqlite.c: SQLite).
 * A new major version or another database of an existing kind is a recipe; a database of a
 * new kind is one file with a struct pgo_target. Private to src/pgo/. Owns no state: a
 * target's state lives in struct pgo_pipeline (stages.h), freed by the target's release. */
#ifndef PGOLAB_PGO_TARGET_H
#define PGOLAB_PGO_TARGET_H

#include <stdbool.h>

struct pgo_build;
struct pgo_pipeline;
struct store;
struct variant;

/* The operations of a kind of target. Every int operation returns 0, or -1 after one line
 * said why (also when *p->interrupted is set, so that the pipeline stops with its
 * interruption message). An operation the pipeline may skip is NULL where noted. */
struct pgo_target {
    const char *name;             /* "server", "sqlite" */
    bool embedded;                /* the product is a library the benchmark process loads
                                   * (bench --sqlite-library), not a server it connects to */
    /* Before the results file is opened: what the recipe and request ask for is possible. */
    int (*check)(struct pgo_pipeline *p);
    /* After the results file is opened (store NULL without --measure); NULL: nothing. */
    int (*check_store)(struct pgo_pipeline *p, struct store *store);
    /* After the compilers (of every group of build settings) are probed; NULL: nothing. */
    int (*check_tools)(struct pgo_pipeline *p);
    /* The stages after the source is fetched, in order; builds, train and pgo_builds run
     * again for each other group of build settings of --variants (p->groups). */
    int (*source)(struct pgo_pipeline *p);     /* the source hashed, prepared */
    int (*builds)(struct pgo_pipeline *p);     /* the builds that read no profile */
    int (*train)(struct pgo_pipeline *p);      /* one profile per trainer, checked */
    int (*pgo_builds)(struct pgo_pipeline *p); /* the builds that read a profile (and BOLT's) */
    int (*gate)(struct pgo_pipeline *p);       /* every group's builds give the same results */
    /* Before each stage of group g (after p's own); NULL: a group needs nothing of p's. */
    void (*share)(struct pgo_pipeline *g, const struct pgo_pipeline *p);
    /* The summary that opens the report (stdout). */
    void (*summary)(const struct pgo_pipeline *p);
    /* What build b (of p or a group of p) is to the experiment engine: v's kind, library
     * (what the variant runs: an install prefix, a server binary, a library file) and
     * provenance; v's other fields are the measurement's (measure.c). */
    void (*variant)(const struct pgo_pipeline *p, const struct pgo_build *b, struct variant *v);
    /* The pgo settings recorded with the experiment: JSON object text (caller frees). */
    char *(*settings)(const struct pgo_pipeline *p);
    /* What the target made outside p's common fields, for p and its groups (run directory,
     * the target's own state); the pipeline frees the rest. */
    void (*release)(struct pgo_pipeline *p);
};

/* The two kinds: a managed server built from a recipe, and SQLite as a library. */
extern const struct pgo_target pgo_target_server;
extern const struct pgo_target pgo_target_sqlite;

#endif
