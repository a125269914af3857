/* util: allocation wrappers, error reporting and clocks (see util.h). */
#include "util/util.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void oom(void)
{
    fputs("FATAL: out of memory\n", stderr);
    abort();
}

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        oom();
    return p;
}

void *xcalloc(size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p)
        oom();
    return p;
}

void *xcalloc_aligned(size_t count, size_t size, size_t align)
{
    assert(align >= sizeof(void *) && (align & (align - 1)) == 0);
    size_t n = (count ? count : 1) * (size ? size : 1);
    if (size && n / size != (count ? count : 1))
        oom();
    n = (n + align - 1) & ~(align - 1);
    void *p = aligned_alloc(align, n);
    if (!p)
        oom();
    memset(p, 0, n);
    return p;
}

void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p)
        oom();
    return p;
}

char *xstrdup(const char *s)
{
    char *p = strdup(s);
    if (!p)
        oom();
    return p;
}

char *xstrndup(const char *s, size_t n)
{
    char *p = strndup(s, n);
    if (!p)
        oom();
    return p;
}

char *xasprintf(const char *fmt, ...)
{
    va_list ap;
    char *s;
    va_start(ap, fmt);
    if (vasprintf(&s, fmt, ap) < 0)
        oom();
    va_end(ap);
    return s;
}

static void vreport(const char *prefix, const char *fmt, va_list ap)
{
    fflush(stdout);
    fputs(prefix, stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport("FATAL: ", fmt, ap);
    va_end(ap);
    exit(1);
}

int error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport("FATAL: ", fmt, ap);
    va_end(ap);
    return -1;
}

void warning(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport("WARNING: ", fmt, ap);
    va_end(ap);
}

double wall_time(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int parse_int64(const char *s, int64_t *out)
{
    char *end;
    long long v;
    if (!s || !*s)
        return -1;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno || *end)
        return -1;
    *out = v;
    return 0;
}

int parse_double(const char *s, double *out)
{
    char *end;
    double v;
    if (!s || !*s)
        return -1;
    errno = 0;
    v = strtod(s, &end);
    if (errno || *end || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

int stderr_is_tty(void)
{
    return isatty(STDERR_FILENO);
}
