/* bolt: post-link optimization with LLVM BOLT (Debian 12 package bolt-16; pgo.md 4.8) of one
 * binary or shared library: instrument it (`llvm-bolt -instrument`, one profile file per
 * process), let the caller train the instrumented copy, merge the per-process profiles
 * (`merge-fdata`) and optimize (`llvm-bolt -data ... -dyno-stats`). Every step runs in the
 * variant's own directory with its log there; a failed step is one error line with its command
 * and the last lines of its log. The training itself is the caller's (pgo/library.c trains
 * with `pgolab bench --sqlite-library`); so is the correctness gate. Strings in struct
 * bolt_variant marked "in" are the caller's, the others are owned and freed by
 * bolt_variant_release(). */
#ifndef PGOLAB_TOOLCHAIN_BOLT_H
#define PGOLAB_TOOLCHAIN_BOLT_H

#include <stdbool.h>
#include <sys/types.h>

/* The optimization options (llvm-bolt --help-hidden of bolt-16; the set BOLT's docs give for
 * large applications, pgo.md 4.8): ext-tsp block layout, hfsort function order, hot/cold
 * splitting of every function (cold blocks and EH), and the dynamic statistics before and
 * after. */
#define BOLT_OPT_OPTIONS "-reorder-blocks=ext-tsp", "-reorder-functions=hfsort", \
        "-split-functions", "-split-all-cold", "-split-eh", "-dyno-stats"

struct bolt_variant {
    const char *name;         /* in: the variant, "bolt" or "pgo+bolt" (messages) */
    const char *input;        /* in: absolute path of the binary to optimize */
    const char *dir;          /* in: the variant's directory (created) */
    bool append_pid;          /* in: one profile per process (forked servers, every DSO user) */
    int sleep_s;              /* in: > 0: also dump every N s (daemons that never exit) */
    char *const *instrument_options; /* in: more llvm-bolt -instrument options (NULL: none) */
    /* results */
    char *instrumented;       /* dir/instrumented/BASENAME */
    char *profile_dir;        /* dir/profile: the per-process .fdata files */
    char *fdata;              /* dir/merged.fdata */
    char *output;             /* dir/BASENAME: the optimized binary */
    char *dyno_stats;         /* dir/dyno-stats.txt: the -dyno-stats summary (before/after) */
    int fdata_files;          /* per-process profiles merged */
    off_t fdata_bytes;        /* size of the merged profile */
    int profiled, functions;  /* BOLT-INFO: "N out of M functions ... have non-empty
                               * execution profile" of the optimize step */
    double seconds;           /* instrument + merge + optimize wall time */
};

/* The llvm-bolt and merge-fdata programs (bolt-16), resolved to their real paths (Debian's
 * llvm-bolt-16 symlink finds its instrumentation runtime only under its real name).
 * -1 with "BOLT needs llvm-bolt-16 (Debian package bolt-16: apt-get install bolt-16)". */
int bolt_tools_check(void);

/* Instrument v->input into v->instrumented, profile files going to v->profile_dir (emptied).
 * Log: dir/instrument.log. 0 or -1 (one line: command and log tail). */
int bolt_instrument(struct bolt_variant *v);

/* After training: merge the non-empty per-process profiles of v->profile_dir into v->fdata.
 * -1 with "training produced no BOLT profile in DIR" or the merge failure. */
int bolt_merge(struct bolt_variant *v);

/* Optimize v->input with v->fdata into v->output (log dir/optimize.log); keeps the -dyno-stats
 * summary in v->dyno_stats and reads the profile figure; a profile that covers no function
 * is an error. 0 or -1 (one line). */
int bolt_optimize(struct bolt_variant *v);

/* Read the figures of an earlier optimize log (a cached variant). 0 or -1 (quiet). */
int bolt_read_log(struct bolt_variant *v);

/* Pure: "N out of M functions in the binary (P%) have non-empty execution profile" from
 * llvm-bolt's output; 0 or -1 when the line is absent. */
int bolt_parse_profiled(const char *log_text, int *profiled, int *functions);

/* Pure: the -dyno-stats blocks of llvm-bolt's output (from the first "dynostats" line to the
 * last statistic line), or NULL. Caller frees. */
char *bolt_dyno_stats(const char *log_text);

/* Pure: one statistic of a -dyno-stats summary (bolt_dyno_stats' text), e.g. "taken branches"
 * (the whole name: not "taken forward branches"): its value before BOLT's optimizations (the
 * first block) and after (the second). 0, or -1 when it is not there twice. */
int bolt_dyno_figure(const char *dyno, const char *what, long long *before, long long *after);

/* --bolt-profile=perf needs LBR branch sampling: 0 when `perf record -e cycles:u -j any,u`
 * works here, else -1 with one line saying why not. */
int bolt_perf_check(void);

void bolt_variant_release(struct bolt_variant *v);

#endif
