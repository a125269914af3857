/* toolchain: the compilers and tools a PGO build runs, wrapped: the compiler flag table
 * (gcc/clang x baseline/instrumented/pgo), compiler probing, stamps and content hashes,
 * library compiles with logs, and profile data checks and merges (BOLT in bolt.h). Knows
 * nothing of targets or recipes: src/pgo/ drives it. Strings returned are owned by the caller. */
#ifndef PGOLAB_TOOLCHAIN_H
#define PGOLAB_TOOLCHAIN_H

#include <stdbool.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/argvec.h"
#include "util/fs.h"


/* ---- the flag table ----------------------------------------------------------------- */

enum cc_family { CC_GCC, CC_CLANG };
enum build_phase { BUILD_BASELINE, BUILD_INSTRUMENTED, BUILD_PGO };
#define BUILD_NPHASES 3

/* "baseline", "instrumented", "pgo". */
const char *build_phase_name(enum build_phase phase);
/* "gcc", "clang". */
const char *cc_family_name(enum cc_family cc);

/* The paths the PGO flags refer to (absolute). Unused ones may be NULL. */
struct pgo_paths {
    const char *profile_dir; /* where training writes raw profile data (.gcda / .profraw) */
    const char *profdata;    /* clang: the merged .profdata file the pgo build reads */
    const char *build_dir;   /* gcc: the directory the compiler runs in (-fprofile-prefix-path) */
};

/* The table row of (cc, phase): NULL-terminated flag templates with {profile_dir},
 * {profdata} and {build_dir} placeholders (see flags.c for the table and its sources). */
const char *const *pgo_flag_templates(enum cc_family cc, enum build_phase phase);

/* Append the expanded PGO flags of (cc, phase) to out. -1 with a message if a placeholder's
 * path is NULL or not absolute (GCC names .gcda files after absolute paths, pgo.md 4.2). */
int pgo_phase_flags(struct argvec *out, enum cc_family cc, enum build_phase phase,
                    const struct pgo_paths *paths);

/* ---- compilers ---------------------------------------------------------------------- */

struct cc_info {
    char *cc;           /* as given, e.g. "gcc", "clang-14", "/usr/bin/clang" */
    enum cc_family family;
    char *version;      /* first line of `cc --version` */
    int major;          /* major version, 0 if unknown */
    char *profdata;     /* clang: the llvm-profdata matching this clang, else NULL */
};

/* Fill info: the family and major version from the predefined macros (`cc -dM -E -x c
 * /dev/null`: __clang__ / __clang_major__, else __GNUC__), the version line from
 * `cc --version`; for clang also find llvm-profdata: next to the real compiler, then
 * llvm-profdata-MAJOR, then llvm-profdata on PATH. -1 with a message if cc cannot run or is
 * neither gcc nor clang. */
int cc_probe(const char *cc, struct cc_info *info);
void cc_info_release(struct cc_info *info);

/* Pure parts of cc_probe, on `cc -dM -E` output: the family (-1 = neither) and the major
 * version (0 = unknown). */
int cc_family_from_macros(const char *macros);
int cc_major_from_macros(const char *macros);

/* ---- files, hashes, stamps ---------------------------------------------------------- */

/* A short stable key for text (16 hex digits, FNV-1a 64): cache directory names. Caller frees. */
char *path_key(const char *text);
/* Regular files in dir whose names end with suffix, sorted by name, full paths, NULL-terminated
 * (free with argvec_clear on the returned argvec). Missing dir = empty list. */
void list_files(struct argvec *out, const char *dir, const char *suffix);

/* sha256 of files via the sha256sum program: one hex digest per file, joined by '\n'.
 * NULL (with a message) on error. Caller frees. */
char *sha256_files(const char *const *paths);
char *sha256_file(const char *path);
/* Content hash of a tree: sha256 over the sorted "sha256  relative/path" lines of every
 * regular file (sha256sum, in batches) plus every symlink's target, excluding nothing. The
 * same files at another path give the same hash; an edited, added or renamed file changes
 * it. NULL with a message on error. Caller frees. */
char *tree_sha256(const char *dir);
/* tree_sha256, and in *list (when not NULL; the caller's) the lines it hashed: "SHA256  PATH"
 * per regular file sorted by path, then "link PATH -> TARGET" per symlink: what a later run
 * compares with its own to name the files that changed (source_diff()). */
char *tree_sha256_list(const char *dir, char **list);

/* The difference between two tree_sha256_list() lists, old and new, in words: "3 files
 * changed (edited: src/a.c, src/b.c; added: src/c.c)" (at most five paths named per kind,
 * then "and N more"; kinds edited, added, removed); NULL when they hold the same files.
 * Caller frees. */
char *source_diff(const char *old_list, const char *new_list);

/* Hold DIR/.lock (flock, exclusive, not waiting) for the rest of the process: two pgo runs on
 * one work directory would build into, and wipe, the same directories. dir is created; opt
 * names it in messages (the --workdir value). Returns the descriptor to keep open, or -1 with
 * "--workdir=OPT is in use by another pgolab pgo run ...". */
int workdir_lock(const char *dir, const char *opt);

/* A stamp file records what produced an output (command line, input hashes, compiler):
 * 1 if the file at path holds exactly text, else 0. */
int stamp_matches(const char *path, const char *text);
/* Write text to path atomically (path.tmp + rename). -1 with a message. */
int stamp_write(const char *path, const char *text);
/* The key ("compiler" of "compiler: gcc 12") of the first "key: value" line in which the
 * stamp at path and text differ (a line only one has counts), "" when they differ otherwise,
 * NULL when path holds no stamp or the same text. Caller frees. */
char *stamp_first_change(const char *path, const char *text);

/* ---- library builds ----------------------------------------------------------------- */

/* One compile of a shared library: the command runs in dir, its output goes to dir/build.log,
 * dir/stamp records the command plus stamp_extra; a build whose stamp matches and whose output
 * exists is skipped (unless force). dir/fingerprint adds the output's path and sha256.
 * Inputs are owned by the caller, outputs by the struct. */
struct lib_build {
    const char *name;            /* for messages: "baseline", "instrumented", "pgo" */
    enum build_phase phase;
    const char *dir;             /* absolute build directory */
    const char *output;          /* the file the command produces, relative to dir */
    const char *const *argv;     /* the compiler command */
    const char *stamp_extra;     /* source hash, compiler version, profile id, ... */
    bool force;
    const volatile sig_atomic_t *stop; /* non-NULL: the caller's interrupt flag; once set, the
                                 * compiler (in a process group of its own) is stopped, also
                                 * when the signal came between the check and the fork */
    /* results */
    char *lib;                   /* absolute path of the output */
    char *log;                   /* absolute path of the log */
    char *sha256;                /* of the output */
    bool skipped;                /* reused from an earlier run */
    char *why;                   /* built again although a stamp was there: the cause in words
                                  * ("the source changed since the cached build", "--rebuild
                                  * was given"), printed as "rebuilding NAME: WHY"; else NULL */
    double seconds;              /* compile wall time (0 when skipped) */
    int status;                  /* 0 ok, -1 failed (message already printed) */
};

/* Run one build (see struct lib_build). On failure prints one error line with the command and
 * the tail of its log; for the pgo phase a log that mentions a missing or mismatched profile is
 * a failure even when the compiler exits 0. Returns 0 or -1. */
int lib_build_run(struct lib_build *b);
/* Run n builds, at most jobs at a time (threads; each a child compiler). Progress on stderr
 * (a TTY only) shows the elapsed time. Returns 0 if all succeeded, else -1. */
int lib_build_parallel(struct lib_build *builds, int n, int jobs, const char *what);
void lib_build_release(struct lib_build *b);

/* The first phrase in a compiler log that says the profile was missing, stale or unusable
 * (GCC -Wmissing-profile / -Wcoverage-mismatch, clang -Wprofile-instr-*, pgo.md 4.4), or NULL. */
const char *pgo_log_problem(const char *log_text);

/* ---- profile data ------------------------------------------------------------------- */

struct profile_info {
    int files;          /* raw profile files found (non-empty) */
    off_t bytes;        /* their total size */
    char *id;           /* hash of the data the pgo build reads (stamp input) */
};

/* Empty (and create) the profile directory: GCC accumulates counts across runs. */
int profile_wipe(const char *profile_dir);

/* Move every file of the raw profile directory from (flat: GCC mangles the object paths into
 * the names) into to, which is emptied first: a training's or an exam's data set aside from
 * the directory compiled into the instrumented build. 0, or -1 with a message. */
int profile_move(const char *from, const char *to);

/* The magic of a 64-bit clang raw profile (the bytes 0xff "lprofr" 0x81), and the format version of
 * the clang
 * raw profile (.profraw) at path: the low 32 bits of its second word (each LLVM release's
 * llvm-profdata reads one; LLVM 14 writes 8), or -1 when it is not such a file. */
#define PROFRAW_MAGIC_64 0xff6c70726f667281ULL
int profraw_version(const char *path);

/* After training: check that profile data exists and is usable. gcc: non-empty .gcda files
 * in profile_dir; clang: non-empty .profraw files, merged by cc->profdata into profdata
 * (log: profile_dir/merge.log), which must be non-empty with a non-zero maximum count.
 * -1 with "training produced no profile data in DIR" (or the merge error). */
int profile_collect(const struct cc_info *cc, const char *profile_dir, const char *profdata,
                    struct profile_info *info);
void profile_info_release(struct profile_info *info);

/* "Maximum function count: N" from `llvm-profdata show` output; -1 if absent. */
long long profdata_max_count(const char *show_text);

#endif
