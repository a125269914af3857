/* opts: sysbench-style command-line options (--name=value, bare --flag = on,
 * '-' and '_' interchangeable, unknown ones rejected with "invalid option: --xyz").
 * An opts owns copies of every value string; the option tables are static and caller-owned. */
#ifndef PGOLAB_UTIL_OPTS_H
#define PGOLAB_UTIL_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum opt_type {
    OPT_BOOL,   /* on/off, true/false, 1/0, yes/no; bare --flag = on */
    OPT_INT,    /* integer (checked at parse time) */
    OPT_DOUBLE, /* number */
    OPT_STRING,
    OPT_LIST,   /* comma-separated strings */
    OPT_MULTI,  /* repeatable, kept in order (opt_multi), opt_str = the last; also
                 * accepts the value as the next word: --variant A=sqlite:/x */
};

struct opt_def {
    const char *name;    /* canonical spelling, with '-' */
    enum opt_type type;
    const char *defval;  /* default value as text, or NULL for none */
    const char *help;
};

#define OPT_END { NULL, 0, NULL, NULL }

struct opt_value {
    const struct opt_def *def;
    char *value;  /* NULL = unset, no default */
    bool set;     /* given on the command line */
    int given;    /* how many times (a single-valued option keeps the last) */
    char **multi; /* OPT_MULTI: every value given, in order, NULL-terminated (or NULL) */
    int nmulti;
};

#define OPTS_MAX_TABLES 8

struct opts {
    struct opt_value *values;
    int nvalues;
    char **args;  /* positional arguments, in order */
    int nargs;
    const char *cmd; /* the command for messages ("bench", "server"; static), or NULL */
};

/* Register the option tables (each ends with OPT_END) and load defaults. */
void opts_init(struct opts *o, const struct opt_def *const *tables, int ntables);
void opts_release(struct opts *o);

/* Parse argv[0..argc). Options go into o (values are copied), other words into o->args.
 * The value of an option whose name contains "password" is then overwritten with 'x' in argv
 * itself, so the process title never shows it. Returns 0, or -1 after printing one line:
 * "FATAL: invalid option: --thread=1 (did you mean --threads? see pgolab CMD --help)" (the
 * nearest registered name by opt_nearest(), when at most half its characters differ; CMD =
 * o->cmd) or a bad-value message (an integer
 * outside int64_t: "'1e99' is out of range (at most 9223372036854775807)"). */
int opts_parse(struct opts *o, int argc, char **argv);

/* The registered option name nearest to name[0..len) by Levenshtein distance ('-' = '_';
 * ties go to the first registered), or NULL when none is registered. */
const char *opt_nearest(const struct opts *o, const char *name, size_t len);

/* Set an option by name (canonical or with '_'); -1 on unknown name or bad value. */
int opts_set(struct opts *o, const char *name, const char *value);

/* Accessors; the name must be a registered option (a programming error aborts). */
const char *opt_str(const struct opts *o, const char *name);  /* NULL if unset */
int64_t opt_int(const struct opts *o, const char *name);
double opt_double(const struct opts *o, const char *name);
bool opt_bool(const struct opts *o, const char *name);
bool opt_is_set(const struct opts *o, const char *name);
/* How many times name was given on the command line (0 = not at all). */
int opt_given(const struct opts *o, const char *name);
/* Whether name is a registered option (the accessors abort on one that is not). */
bool opt_known(const struct opts *o, const char *name);
/* OPT_MULTI: the values given, in command-line order (owned by o; NULL-terminated).
 * With none given: the default as a single value, or an empty list. *count may be NULL. */
const char *const *opt_multi(const struct opts *o, const char *name, int *count);
/* Split a list option into a NULL-terminated array of new strings (free with opt_list_free). */
char **opt_list(const struct opts *o, const char *name, int *count);
void opt_list_free(char **list);
/* A list option of pgolab's own (--threads, --bench, --variants: not sysbench's, which
 * drops empty items) with an empty item or an item given twice: -1 with one line naming
 * both; 0 when unset, empty or fine. */
int opt_list_check(const struct opts *o, const char *name);
/* Split any comma-separated string the same way. */
char **split_list(const char *s, int *count);

/* Parse --threads list items into out[0..n): integers 1..100000. -1 with a message naming the
 * bad item. */
int parse_thread_list(char **list, int n, int *out);

/* Parse a boolean word; returns 0/1, or -1 if it is not one. */
int parse_bool(const char *s);

/* Print one table in sysbench's help layout: "  --name=N   help [default]". */
void opts_print_help(const struct opt_def *table);

#endif
