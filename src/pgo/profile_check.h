/* profile_check: the health check of a trainer's profile, between the training and the pgo
 * build that reads it. Counting files proves nothing (a profile written by `postgres
 * --version` alone has as many files as a trained one); this reads the counters themselves
 * with the toolchain's own tools (GCC: gcov-dump on the .gcda data and the .gcno notes that
 * name its functions; clang: `llvm-profdata show` on the merged .profdata) and checks:
 *   - the profile errors the instrumented processes printed into their logs (libgcov's
 *     "profiling:FILE:Cannot open", LLVM's "LLVM Profile Error"): counts that were lost;
 *   - raw files the training's user could not update (written by another user, e.g. root,
 *     and not writable for it) and files older than the training's start: counts that are
 *     not the training's;
 *   - the counts of the functions the workload must run (the recipe's "hot" list): a hot
 *     function with no counts means the training never reached it.
 * It fills a struct profile_health (the report's coverage: objects and functions with counts,
 * the total of the counters, each hot function's count), saves it beside a cached profile
 * and reads it back. The pipeline (train.c, target_sqlite.c) owns when it runs; this file owns what
 * "healthy" means. */
#ifndef PGOLAB_PGO_PROFILE_CHECK_H
#define PGOLAB_PGO_PROFILE_CHECK_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "toolchain/toolchain.h"

/* A function the training must reach, as a recipe names it: "OBJECT:FUNCTION" (OBJECT is
 * the source file's name without directory and extension, e.g. "execExprInterp") or just
 * "FUNCTION". */
struct profile_hot {
    char *spec;           /* as the recipe wrote it */
    char *object;         /* NULL when the spec names none */
    char *function;
    bool found;           /* the object (gcc) or function (clang) is in the profile */
    bool by_object;       /* gcc without the object's .gcno notes: count is the object's */
    unsigned long long count; /* gcc: sum of the function's arc counters; clang: its
                               * entry count plus block counts */
};

struct profile_health {
    int files;                       /* raw profile files (.gcda, or .profraw) */
    int objects_counted;             /* gcc: .gcda files with a non-zero counter */
    long functions, functions_counted;
    unsigned long long total;        /* every arc (gcc) or block (clang) counter, summed */
    struct profile_hot *hot;
    int nhot;
    int foreign;                     /* raw files the training's user cannot write */
    char *foreign_example, *foreign_owner;
    char *train_user;                /* who the training ran as (profile_check_in) */
    int stale;                       /* raw files last written before the training started */
    char *stale_example;
    int log_errors;                  /* profile error lines in the trained processes' logs */
    char *log_error, *log_error_file;
};

/* The inputs of one check. */
struct profile_check_in {
    const struct cc_info *cc;
    const char *profile_dir;  /* the trainer's raw files (.gcda; clang .profraw) */
    const char *profdata;     /* clang: the merged profile */
    const char *notes_dir;    /* gcc: the instrumented build directory (-fprofile-prefix-path:
                               * a .gcda named a#b#c.gcda has its notes at notes_dir/a/b/c.gcno) */
    char *const *hot;         /* the recipe's hot functions (NULL-terminated, may be NULL) */
    char *const *logs;        /* logs of the trained processes (NULL-terminated, may be NULL;
                               * missing files are skipped) */
    uid_t train_uid;          /* the user the instrumented processes ran as */
    const char *train_user;   /* its name, for messages */
    int64_t train_start;      /* wall clock (seconds since the epoch) the training started;
                               * 0 = do not check */
};

/* Read the profile: fill h (release with profile_health_release). -1 with a message when the
 * tools cannot run or the data cannot be read (gcov-dump matching cc, llvm-profdata). */
int profile_health_read(const struct profile_check_in *in, struct profile_health *h);

/* The verdict: 0 when h is healthy, else -1 with one line naming trainer, what is wrong and
 * what to do (the first problem of: lost counts in the logs, files the training's user could
 * not update, files from before the training, no counts at all, a hot function with none). */
int profile_health_verdict(const struct profile_health *h, const char *trainer);

/* The coverage in one line for the summary, e.g. "counts in 412 of 878 objects, 9,876 of
 * 30,112 functions, 4.6e10 in all; ExecInterpExpr 3.1e9, PostgresMain 1.2e6". Caller frees. */
char *profile_health_line(const struct profile_health *h, bool gcc);

/* Keep the .gcno notes of an instrumented GCC build that the check reads: the notes of the
 * objects of hot ("OBJECT:FUNCTION", NULL-terminated) under build_dir, copied to the same
 * relative path under notes_dir (replaced whole), so the check can name their functions after
 * the build directory was reused or removed (a recipe whose pgo build compiles in the
 * instrumented build's directory). None is fine (clang, a target's own PGO options). 0 or -1
 * with a message. */
int profile_notes_keep(const char *build_dir, const char *notes_dir, char *const *hot);

/* The coverage as a JSON object for the results database's settings: files, objects_counted
 * (gcc), functions, functions_counted, counts, and hot {"OBJECT:FUNCTION": count}. New
 * reference. */
struct json_t;
struct json_t *profile_health_json(const struct profile_health *h);

/* Save h as "key: value" lines at path (beside a cached profile) / read it back. 0 or -1
 * (load: -1 quietly when the file is missing or not of this format). */
int profile_health_save(const struct profile_health *h, const char *path);
int profile_health_load(struct profile_health *h, const char *path);

void profile_health_release(struct profile_health *h);

/* The check as a pipeline runs it, for trainer: after a fresh training (fresh) read, judge
 * and save at health_path; for a cached one load what was saved there, or (saved by an older
 * pgolab) read and judge it again. 0, or -1 with the verdict's or the tools' one line. */
int profile_health_run(const struct profile_check_in *in, const char *trainer,
                       const char *health_path, bool fresh, struct profile_health *h);

/* Parsers of the tools' output (pure; the unit tests feed them text). gcov-dump -l of .gcda
 * files: adds to h's totals; when want_object is set, also the sum of each function of the
 * .gcda whose name matches it (ident -> sum into idents/sums, up to max, returned count). */
struct gcda_fn {
    unsigned long ident;
    unsigned long long sum;
};
void gcov_dump_parse(const char *text, struct profile_health *h, const char *want_file,
                     struct gcda_fn *fns, int max, int *nfns, unsigned long long *file_sum);
/* gcov-dump of a .gcno: the ident of function name, or 0 when it is not there. */
unsigned long gcno_ident(const char *text, const char *function);
/* `llvm-profdata show --all-functions --counts`: totals into h, hot counts into h->hot. */
void profdata_show_parse(const char *text, struct profile_health *h);
/* Does a .gcda file name (its last component) belong to object? GCC names the data after the
 * object ("dir#execExprInterp.gcda") or, compiling and linking in one command, after the
 * output and the source ("libsqlite3.so-sqlite3.gcda"). */
bool gcda_is_object(const char *path, const char *object);

#endif
