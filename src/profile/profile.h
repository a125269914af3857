/* profile: CPU profiles of runs, side by side (`--profile`).
 *
 * The parts, one file each:
 *   perf_sampler.c  perf_event_open sampling of a process tree into a raw profile file
 *               (perf_sampler.h; cycles or cpu-clock, frame-pointer call chains)
 *   session.c   one profiled process from start to stop, a refusal said once, its JSON
 *               (session.h; bench and the experiment use it)
 *   symbols.c   a raw profile symbolized with elfutils libdwfl into folded stacks
 *   fold.c      compiler clone suffixes folded into their function (fold.h)
 *   callgrind_file.c  a callgrind output's self instruction counts per function (the exact profile
 *               of --measure=instructions), written as folded stacks too
 *   table.c     a folded file read back: samples per function (the sampled frame) and per
 *               DSO, with the file's header (event, notes)
 *   side.c      two variants' profiles over their rounds: the seed-002 side-by-side top-N,
 *               the diff view sorted by change, each row's spread across rounds and its
 *               stability mark
 *
 * Files (docs/profiles.md has both formats): RUN.raw (the sampler's, addresses) and
 * RUN.folded (one line per distinct stack, "dso`func;dso`func COUNT", root first, with "# "
 * header lines and a final "# end"), kept next to the results database in
 * RESULTS.profiles/EXPERIMENT/. Every function here owns what it allocates; the *_release
 * functions free it. Errors: -1 after error() printed one line. */
#ifndef PGOLAB_PROFILE_PROFILE_H
#define PGOLAB_PROFILE_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define MAX_FRAMES_RAW 160   /* frames of one raw stack line read back (sampler keeps <= 128) */
#define PROFILE_TOP_DEFAULT 30

/* Symbolize the raw profile raw_path into the folded file folded_path (written atomically).
 * Notes about DSOs without symbols are added to the header. -1 when raw_path is missing, not
 * a raw profile or truncated (no "end" line), or the output cannot be written. */
int profile_symbolize(const char *raw_path, const char *folded_path);

/* Self instruction counts per function of a callgrind output file (the "fn=" blocks' cost
 * lines, not the inclusive costs after "calls="), folded (fold.c), keyed "object`function".
 * The event is the first column (Ir). */
struct profile_counts {
    char **keys;        /* "dso`function" */
    uint64_t *counts;
    int n;
    uint64_t total;
};
int profile_callgrind_read(const char *cg_path, struct profile_counts *out);
void profile_counts_release(struct profile_counts *c);
/* into += x, function by function (the processes of one server: its backends' files). */
void profile_counts_merge(struct profile_counts *into, const struct profile_counts *x);
/* The exact profile of an instruction-mode run: big - small per function (N and N/5 events;
 * negative differences count 0) over `transactions` = T(N) - T(N/5), as a folded file with
 * event "instructions" and a "# transactions" header. */
int profile_write_instructions(const char *folded_path, const struct profile_counts *small,
                               const struct profile_counts *big, uint64_t transactions);

/* One function (or DSO) of a profile: its key (the folded function name, or the DSO), the DSO
 * it is in, and the count of samples (instructions) where it was the sampled frame. */
struct profile_fn {
    char *name;
    char *dso;
    uint64_t count;
};

/* A folded file read back. */
struct profile_run {
    char *event;            /* "cycles", "cpu-clock" or "instructions" */
    int frequency;          /* Hz (0 for instructions) */
    bool kernel;            /* kernel space was sampled */
    uint64_t samples;       /* total count */
    uint64_t lost;          /* samples the kernel dropped */
    double transactions;    /* instructions: the transactions the counts are for, else 0 */
    char **notes;           /* "# note" lines */
    int nnotes;
    struct profile_fn *fns; /* by self count, descending (ties by name) */
    int nfns;
    struct profile_fn *dsos;/* the same by DSO (name = DSO) */
    int ndsos;
};

/* Read folded_path into r (zeroed first). -1 with one line naming the file when it is
 * missing, not a folded profile, or truncated (no "# end" line, or a malformed line). */
int profile_read(const char *folded_path, struct profile_run *r);
/* The same without printing: the one line goes to why (size n). */
int profile_read_quiet(const char *folded_path, struct profile_run *r, char *why, size_t n);
void profile_run_release(struct profile_run *r);

/* Print the top `top` functions of one profile (bench --profile): % of samples, function,
 * DSO; the DSO totals first. */
void profile_print_top(FILE *out, const struct profile_run *r, int top);

/* A variant's side of a comparison: the profiles of its rounds (one run each). */
struct profile_side {
    const char *variant;
    const struct profile_run *runs;
    int nruns;
};

/* The stability rule (docs/profiles.md): a row's share is not stable across rounds when its
 * range (max - min of the per-round shares, in percentage points) exceeds
 * max(PROFILE_UNSTABLE_PP, PROFILE_UNSTABLE_REL x its pooled share); needs >= 2 rounds. */
#define PROFILE_UNSTABLE_PP 0.5
#define PROFILE_UNSTABLE_REL 0.25
bool profile_unstable(double share_pct, double min_pct, double max_pct, int nrounds);

/* Print two variants side by side in the seed-002 shape: the DSO table, the top `top`
 * functions of each (% of samples pooled over the rounds, the min-max range of the rounds,
 * "!" when not stable), then the diff view: the union of both top lists sorted by the size of
 * the change (points of share, b - a), "~" when the change is within the larger range. With
 * instruction profiles the rows also show instructions per transaction. title heads it. */
void profile_print_side_by_side(FILE *out, const char *title, const struct profile_side *a,
                                const struct profile_side *b, int top);

/* One function's (or DSO's) share on one side of a comparison, pooled over the side's rounds. */
struct profile_share {
    bool present;         /* false: not in this side's profiles (the numbers are 0) */
    double share;         /* % of the side's samples (instructions) */
    double min, max;      /* % in the round where it was lowest / highest */
    double per_txn;       /* instructions per transaction (instruction profiles), else NAN */
    int rank;             /* 1-based by share within the side; 0 when absent */
    bool unstable;        /* profile_unstable() of its range */
};

/* A row of the diff view: one function (or DSO) on both sides. */
struct profile_diff_row {
    const char *name, *dso;     /* borrowed from the sides' profile_run (DSO rows: dso = name) */
    struct profile_share a, b;
    double change;              /* b.share - a.share, percentage points */
    bool within_noise;          /* |change| <= the larger round range (both sides >= 2 rounds) */
};

/* Two sides compared, as data (the machine-readable forms of the side-by-side): the union of
 * both sides' top `top` DSOs and functions, each list sorted by |change| (ties by name). */
struct profile_diff {
    const char *event;          /* of the first run ("cycles", "cpu-clock", "instructions") */
    int frequency;              /* Hz, 0 for instructions */
    bool kernel;                /* kernel space was sampled */
    int nruns_a, nruns_b;
    uint64_t samples_a, samples_b;
    struct profile_diff_row *dsos, *fns;
    int ndsos, nfns;
};

/* Fill d (owned; profile_diff_release frees it) from sides a and b; borrows their names, so
 * the sides' runs must outlive d. */
void profile_diff_make(struct profile_diff *d, const struct profile_side *a,
                       const struct profile_side *b, int top);
void profile_diff_release(struct profile_diff *d);

#endif
