/* profile_functions: the count of every function in a whole profile, read with the
 * toolchain's own tools (GCC: `gcov-dump -l` on each .gcda, the function named from its
 * object's .gcno notes; clang: `llvm-profdata show --all-functions --counts` on a merged
 * .profdata). A function's count is the sum of its counters (GCC: arc counters; clang: its
 * entry count plus block counts), the same measure profile_check.h uses for the recipe's hot
 * functions: how much of the function ran, not how often it was entered. exam.c compares two
 * such lists (a measured workload's and a trainer's); this file owns reading them. */
#ifndef PGOLAB_PGO_PROFILE_FUNCTIONS_H
#define PGOLAB_PGO_PROFILE_FUNCTIONS_H

#include <stdbool.h>
#include <stddef.h>

#include "toolchain/toolchain.h"

/* One function of a profile. GCC identifies it by its object's data file and the ident the
 * compiler gave it (the name comes from the notes, when they are read); clang by its name. */
struct fn_count {
    char *file;                  /* GCC: the .gcda's base name (GCC's '#'-mangled path);
                                  * clang: NULL */
    unsigned long ident;         /* GCC: FUNCTION ident=; clang: 0 */
    char *name;                  /* clang: the profile's name ("file.c:fn" when file-local);
                                  * GCC: NULL until fn_counts_name_gcc() */
    unsigned long long count;
    char *display;               /* for people: fn_counts_describe(), else NULL */
};

struct fn_counts {
    struct fn_count *v;
    int n, alloc;
};

/* Parse `gcov-dump -l` output of one or more .gcda files into out (appended). */
void fn_counts_parse_gcov_dump(const char *text, struct fn_counts *out);

/* Parse `llvm-profdata show --all-functions --counts` output into out (appended). */
void fn_counts_parse_profdata(const char *text, struct fn_counts *out);

/* The function name of ident in `gcov-dump NOTES.gcno` output (as the notes spell it: C++
 * names mangled), or NULL. Caller frees. */
char *fn_counts_gcno_name(const char *text, unsigned long ident);

/* Read the profile: GCC (cc->family) every .gcda under dir; clang the merged profdata. 0, or
 * -1 with a message naming the tool that failed. */
int fn_counts_read(const struct cc_info *cc, const char *dir, const char *profdata,
                   struct fn_counts *out);

/* GCC: name the functions of fns[0..n) (pointers into one struct fn_counts) from the notes
 * under notes_dir (the instrumented build directory, as profile_check_in's notes_dir); a
 * function whose notes are gone keeps name NULL. 0 or -1 (gcov-dump cannot run). */
int fn_counts_name_gcc(const struct cc_info *cc, const char *notes_dir, struct fn_count **fns,
                       int n);

/* The function of the same identity as f in c (GCC: file and ident; clang: name), or NULL. */
const struct fn_count *fn_counts_find(const struct fn_counts *c, const struct fn_count *f);

/* Sort c by identity for fn_counts_find (done by fn_counts_read). */
void fn_counts_sort(struct fn_counts *c);

/* Set the display name of fns[0..n): C++ names demangled (one `c++filt` for all; a name
 * it cannot read stays as it is) and cut before their parameters, a GCC function prefixed
 * with its object's name ("heapam:heap_insert", "row0sel:row_search_mvcc", the recipe's
 * hot-function spelling); "OBJECT:#IDENT" for a GCC function whose notes are gone. */
void fn_counts_describe(struct fn_count **fns, int n);

void fn_counts_release(struct fn_counts *c);

/* ---- reading the toolchain's profile tools' output (shared with profile_check.c) ---- */

struct strbuf;

/* Next line of *p (without its newline) into [*line, *len); false at the end. */
bool prof_next_line(const char **p, const char **line, size_t *len);

/* The sum of the unsigned decimal numbers in [v, end) ("0: 1 2 3", "[5, 7]"). */
unsigned long long prof_sum_numbers(const char *v, const char *end);

/* Run a profile tool, its stdout into out. -1 with "WHAT: COMMAND failed (exit N)" (nothing
 * when the user's interrupt stopped it: the caller says so). */
int prof_run_tool(const char *what, const char *const *argv, struct strbuf *out);

/* gcov-dump of GCC major gcc_major (gcov-dump-12, else gcov-dump), or NULL with a message
 * naming the Debian package. Caller frees. */
char *gcov_dump_program(int gcc_major);

/* The notes (.gcno) of a data file (.gcda, its base name GCC's '#'-mangled path relative to
 * the build directory, -fprofile-prefix-path): notes_dir + the path with the mangling
 * undone (an absolute mangled path stays absolute). Caller frees. */
char *gcda_notes_path(const char *notes_dir, const char *gcda);

#endif
