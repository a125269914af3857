/* strbuf: growable strings (see strbuf.h). */
#include "util/strbuf.h"
#include "util/util.h"

#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char strbuf_empty[1];

/* The invariants of strbuf.h: after init, buf is never NULL and buf[len] is the NUL; without
 * an allocation, buf is the shared empty string and len 0. */
static inline void strbuf_check(const struct strbuf *sb)
{
    assert(sb->buf);
    assert(sb->alloc ? sb->len < sb->alloc : sb->len == 0 && sb->buf == strbuf_empty);
    assert(sb->buf[sb->len] == '\0');
}

void strbuf_init(struct strbuf *sb, size_t hint)
{
    sb->buf = strbuf_empty;
    sb->len = sb->alloc = 0;
    if (hint)
        strbuf_grow(sb, hint);
}

void strbuf_release(struct strbuf *sb)
{
    if (sb->alloc)
        free(sb->buf);
    strbuf_init(sb, 0);
}

char *strbuf_detach(struct strbuf *sb)
{
    char *p = sb->alloc ? sb->buf : xstrdup("");
    strbuf_init(sb, 0);
    return p;
}

void strbuf_reset(struct strbuf *sb)
{
    if (!sb->buf)
        strbuf_init(sb, 0);
    sb->len = 0;
    if (sb->alloc)
        sb->buf[0] = '\0';
}

void strbuf_grow(struct strbuf *sb, size_t extra)
{
    size_t need;
    if (!sb->buf)
        strbuf_init(sb, 0);
    need = sb->len + extra + 1;
    if (need <= sb->alloc)
        return;
    size_t n = sb->alloc ? sb->alloc : 64;
    while (n < need)
        n *= 2;
    if (sb->alloc) {
        sb->buf = xrealloc(sb->buf, n);
    } else {
        sb->buf = xmalloc(n);
        sb->buf[0] = '\0';
    }
    sb->alloc = n;
    assert(sb->len + extra < sb->alloc);
}

void strbuf_add(struct strbuf *sb, const void *data, size_t len)
{
    strbuf_grow(sb, len);
    memcpy(sb->buf + sb->len, data, len);
    sb->len += len;
    sb->buf[sb->len] = '\0';
    strbuf_check(sb);
}

void strbuf_addstr(struct strbuf *sb, const char *s)
{
    strbuf_add(sb, s, strlen(s));
}

void strbuf_addch(struct strbuf *sb, int c)
{
    char ch = (char)c;
    strbuf_add(sb, &ch, 1);
}

void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
{
    va_list cp;
    int n;
    strbuf_grow(sb, 64);
    va_copy(cp, ap);
    n = vsnprintf(sb->buf + sb->len, sb->alloc - sb->len, fmt, cp);
    va_end(cp);
    if (n < 0)
        return;
    if ((size_t)n >= sb->alloc - sb->len) {
        strbuf_grow(sb, (size_t)n);
        vsnprintf(sb->buf + sb->len, sb->alloc - sb->len, fmt, ap);
    }
    sb->len += (size_t)n;
    strbuf_check(sb);
}

void strbuf_addf(struct strbuf *sb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    strbuf_vaddf(sb, fmt, ap);
    va_end(ap);
}

void strbuf_rtrim(struct strbuf *sb)
{
    if (!sb->buf)
        strbuf_init(sb, 0);
    while (sb->len && isspace((unsigned char)sb->buf[sb->len - 1]))
        sb->len--;
    if (sb->alloc)
        sb->buf[sb->len] = '\0';
    strbuf_check(sb);
}

int strbuf_read_file(struct strbuf *sb, const char *path)
{
    FILE *f = fopen(path, "rb");
    char tmp[65536];
    size_t n;
    if (!f)
        return -1;
    while ((n = fread(tmp, 1, sizeof(tmp), f)) > 0)
        strbuf_add(sb, tmp, n);
    int err = ferror(f);
    fclose(f);
    if (err) {
        errno = EIO;
        return -1;
    }
    return 0;
}
