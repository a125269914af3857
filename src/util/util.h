/* util: allocation wrappers that die on out-of-memory, error reporting, clocks.
 * Callers own what the x*alloc functions return and release it with free(). */
#ifndef PGOLAB_UTIL_H
#define PGOLAB_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Allocation: abort the process with "FATAL: out of memory" instead of returning NULL. */
void *xmalloc(size_t n);
void *xcalloc(size_t count, size_t size);
void *xrealloc(void *p, size_t n);
/* Per-thread state that threads write while others run: a line of its own. 128 bytes, two
 * 64-byte cache lines, because x86 cores prefetch the adjacent line of the pair too. */
#define CACHE_LINE_PAIR 128
/* count x size bytes, zeroed, starting on a multiple of align (a power of two, at least
 * sizeof(void *)) and rounded up to a multiple of it, so that nothing else shares its first
 * or last line. */
void *xcalloc_aligned(size_t count, size_t size, size_t align);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/* printf into a new heap string. */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Print "FATAL: <msg>" on stderr and exit(1). Only cmd_* code and OOM paths use this. */
void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
/* Print "FATAL: <msg>" on stderr; returns -1 so library code can `return error(...)`. */
int error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print "WARNING: <msg>" on stderr. */
void warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Monotonic clock in nanoseconds (CLOCK_MONOTONIC). Inline: a bench worker reads it once per
 * event. */
static inline uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
/* Wall clock, seconds since the epoch with sub-second fraction (CLOCK_REALTIME). */
double wall_time(void);

/* Parse a whole string as a base-10 integer / double. 0 on success, -1 if it is not one. */
int parse_int64(const char *s, int64_t *out);
int parse_double(const char *s, double *out);

/* 1 if stderr is a terminal (progress output is shown only then). */
int stderr_is_tty(void);

#endif
