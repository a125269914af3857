/* argvec: a growable NULL-terminated argv of owned strings for child processes. The argvec
 * owns its strings; argvec_clear() frees them. */
#ifndef PGOLAB_ARGVEC_H
#define PGOLAB_ARGVEC_H

/* A growable NULL-terminated array of owned strings (an argv under construction). */
struct argvec {
    char **v;  /* NULL until the first push; argvec_argv() never returns NULL */
    int n;
    int alloc;
};
#define ARGVEC_INIT { NULL, 0, 0 }

void argvec_push(struct argvec *a, const char *s);
void argvec_pushf(struct argvec *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Append every string of a NULL-terminated array (NULL = nothing). */
void argvec_pushv(struct argvec *a, const char *const *v);
/* Append the whitespace-separated words of s (no quoting: flags like "-O2 -march=native"). */
void argvec_split(struct argvec *a, const char *s);
/* The NULL-terminated array, valid until the next push or argvec_clear(). */
const char *const *argvec_argv(struct argvec *a);
/* Join with single spaces (no quoting; for fingerprints and reports). Caller frees. */
char *argvec_join(const struct argvec *a);
void argvec_clear(struct argvec *a);

#endif
