/* Unit tests for util/strbuf.c: growth, NUL termination, formatting, trimming, detach/reset
 * and reading files. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/strbuf.h"
#include "util/util.h"

/* The invariants every operation must keep. */
static void check_invariants(const struct strbuf *sb)
{
    assert_non_null(sb->buf);
    assert_true(sb->buf[sb->len] == '\0');
    if (sb->alloc)
        assert_true(sb->len < sb->alloc);
    else
        assert_int_equal(sb->len, 0);
}

static void test_init_and_empty(void **state)
{
    (void)state;
    struct strbuf sb;
    strbuf_init(&sb, 0);
    check_invariants(&sb);
    assert_string_equal(sb.buf, "");
    strbuf_release(&sb);
    check_invariants(&sb);

    strbuf_init(&sb, 1000);
    check_invariants(&sb);
    assert_true(sb.alloc >= 1001);
    assert_int_equal(sb.len, 0);
    strbuf_release(&sb);

    /* STRBUF_INIT (buf == NULL) works with every adder and with release. */
    struct strbuf s2 = STRBUF_INIT;
    strbuf_addstr(&s2, "x");
    check_invariants(&s2);
    assert_string_equal(s2.buf, "x");
    strbuf_release(&s2);
    struct strbuf s3 = STRBUF_INIT;
    strbuf_addf(&s3, "%d", 42);
    assert_string_equal(s3.buf, "42");
    strbuf_release(&s3);
    struct strbuf s4 = STRBUF_INIT;
    strbuf_reset(&s4);
    check_invariants(&s4);
    strbuf_release(&s4);
    struct strbuf s5 = STRBUF_INIT;
    strbuf_release(&s5);
    check_invariants(&s5);
}

static void test_add_and_grow(void **state)
{
    (void)state;
    struct strbuf sb = STRBUF_INIT;
    char want[5001];
    for (int i = 0; i < 5000; i++) {
        char c = (char)('a' + i % 26);
        want[i] = c;
        if (i % 3 == 0)
            strbuf_addch(&sb, c);
        else
            strbuf_add(&sb, &c, 1);
        check_invariants(&sb);
    }
    want[5000] = '\0';
    assert_int_equal(sb.len, 5000);
    assert_string_equal(sb.buf, want);

    /* Binary data with embedded NULs is kept byte for byte. */
    strbuf_reset(&sb);
    assert_int_equal(sb.len, 0);
    assert_string_equal(sb.buf, "");
    static const char bin[] = { 'a', '\0', 'b', '\0', 'c' };
    strbuf_add(&sb, bin, sizeof(bin));
    assert_int_equal(sb.len, 5);
    assert_memory_equal(sb.buf, bin, sizeof(bin));
    check_invariants(&sb);

    /* grow reserves room without changing the content. */
    strbuf_grow(&sb, 100000);
    assert_true(sb.alloc >= sb.len + 100001);
    assert_int_equal(sb.len, 5);
    assert_memory_equal(sb.buf, bin, sizeof(bin));
    strbuf_add(&sb, "", 0);
    assert_int_equal(sb.len, 5);
    strbuf_release(&sb);
}

static void test_addf(void **state)
{
    (void)state;
    struct strbuf sb = STRBUF_INIT;
    strbuf_addf(&sb, "%s=%d", "threads", 8);
    strbuf_addf(&sb, ",%.2f", 1.005);
    strbuf_addf(&sb, "%s", "");
    assert_string_equal(sb.buf, "threads=8,1.00");
    check_invariants(&sb);

    /* Output longer than the spare room takes the second vsnprintf pass. */
    char big[3000];
    memset(big, 'q', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    size_t before = sb.len;
    strbuf_addf(&sb, "[%s]%d", big, 7);
    assert_int_equal(sb.len, before + 2 + 2999 + 1);
    assert_true(sb.buf[before] == '[');
    assert_true(sb.buf[before + 1 + 2999] == ']');
    assert_string_equal(sb.buf + sb.len - 1, "7");
    assert_int_equal(strlen(sb.buf), sb.len);
    check_invariants(&sb);

    /* Many small appends agree with one snprintf of the whole. */
    strbuf_reset(&sb);
    char ref[20000];
    size_t rl = 0;
    for (int i = 0; i < 2000; i++) {
        strbuf_addf(&sb, "%d,", i);
        rl += (size_t)snprintf(ref + rl, sizeof(ref) - rl, "%d,", i);
    }
    assert_int_equal(sb.len, rl);
    assert_string_equal(sb.buf, ref);
    strbuf_release(&sb);
}

static void test_rtrim(void **state)
{
    (void)state;
    struct strbuf sb = STRBUF_INIT;
    strbuf_addstr(&sb, "  keep inner  space \t\r\n \n");
    strbuf_rtrim(&sb);
    assert_string_equal(sb.buf, "  keep inner  space");
    assert_int_equal(sb.len, strlen("  keep inner  space"));
    strbuf_reset(&sb);
    strbuf_addstr(&sb, " \n\t ");
    strbuf_rtrim(&sb);
    assert_int_equal(sb.len, 0);
    assert_string_equal(sb.buf, "");
    strbuf_rtrim(&sb);
    assert_int_equal(sb.len, 0);
    strbuf_release(&sb);
    strbuf_rtrim(&sb); /* on an empty, unallocated strbuf */
    check_invariants(&sb);
}

static void test_detach(void **state)
{
    (void)state;
    struct strbuf sb = STRBUF_INIT;
    strbuf_addstr(&sb, "hello");
    char *p = strbuf_detach(&sb);
    assert_string_equal(p, "hello");
    check_invariants(&sb);
    assert_int_equal(sb.len, 0);
    /* The strbuf is reusable and no longer shares memory with p. */
    strbuf_addstr(&sb, "world");
    assert_string_equal(p, "hello");
    assert_string_equal(sb.buf, "world");
    free(p);
    strbuf_release(&sb);

    /* Detaching an empty strbuf still gives a heap string the caller can free. */
    struct strbuf e = STRBUF_INIT;
    p = strbuf_detach(&e);
    assert_non_null(p);
    assert_string_equal(p, "");
    free(p);
}

static void test_read_file(void **state)
{
    (void)state;
    char path[] = "/tmp/pgolab-test-strbuf-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    /* 200 KB, more than the internal read chunk, with NUL bytes. */
    size_t n = 200000;
    char *data = xmalloc(n);
    for (size_t i = 0; i < n; i++)
        data[i] = (char)(i * 31 % 251);
    assert_int_equal(write(fd, data, n), (ssize_t)n);
    close(fd);

    struct strbuf sb = STRBUF_INIT;
    strbuf_addstr(&sb, "prefix:");
    assert_int_equal(strbuf_read_file(&sb, path), 0);
    assert_int_equal(sb.len, 7 + n);
    assert_memory_equal(sb.buf, "prefix:", 7);
    assert_memory_equal(sb.buf + 7, data, n);
    check_invariants(&sb);
    strbuf_release(&sb);

    /* An empty file reads as nothing. */
    fd = open(path, O_WRONLY | O_TRUNC);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(strbuf_read_file(&sb, path), 0);
    assert_int_equal(sb.len, 0);
    check_invariants(&sb);
    unlink(path);

    /* A missing file fails with errno set and leaves the buffer alone. */
    strbuf_addstr(&sb, "kept");
    errno = 0;
    assert_int_equal(strbuf_read_file(&sb, "/nonexistent/pgolab/no-such-file"), -1);
    assert_int_equal(errno, ENOENT);
    assert_string_equal(sb.buf, "kept");
    strbuf_release(&sb);
    free(data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_init_and_empty),
        cmocka_unit_test(test_add_and_grow),
        cmocka_unit_test(test_addf),
        cmocka_unit_test(test_rtrim),
        cmocka_unit_test(test_detach),
        cmocka_unit_test(test_read_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
