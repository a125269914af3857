/* strbuf: a growable, always NUL-terminated byte string (git's strbuf idea, our code).
 * The strbuf owns buf; strbuf_detach() hands it to the caller, strbuf_release() frees it. */
#ifndef PGOLAB_STRBUF_H
#define PGOLAB_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

struct strbuf {
    char *buf;    /* never NULL after init; NUL-terminated */
    size_t len;   /* bytes used, excluding the NUL */
    size_t alloc; /* bytes allocated */
};

#define STRBUF_INIT { NULL, 0, 0 }

void strbuf_init(struct strbuf *sb, size_t hint);
void strbuf_release(struct strbuf *sb);
/* Return the buffer (caller frees) and reset sb to empty. */
char *strbuf_detach(struct strbuf *sb);
void strbuf_reset(struct strbuf *sb);
void strbuf_grow(struct strbuf *sb, size_t extra);
void strbuf_add(struct strbuf *sb, const void *data, size_t len);
void strbuf_addstr(struct strbuf *sb, const char *s);
void strbuf_addch(struct strbuf *sb, int c);
void strbuf_addf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap);
/* Drop trailing whitespace. */
void strbuf_rtrim(struct strbuf *sb);
/* Read a whole file into sb (appending). 0 on success, -1 with errno set. */
int strbuf_read_file(struct strbuf *sb, const char *path);

#endif
