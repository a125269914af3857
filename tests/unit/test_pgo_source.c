/* Unit tests for src/pgo/source.c: the content hash of a source tree (the same files at
 * another path hash the same; an edited, added or renamed file or a changed symlink does
 * not), the --source checks against a recipe's "expect" files, tarballs, and the Debian
 * version of an `apt-get source` tree. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pgo/recipe.h"
#include "pgo/source.h"
#include "util/fs.h"
#include "util/strbuf.h"
#include "util/subprocess.h"
#include "util/util.h"

#define UNIT_TMPDIR_TEMPLATE "/tmp/pgolab-pgosrc.XXXXXX"
#include "unit_helpers.h"

static void put(const char *dir, const char *rel, const char *text)
{
    char *path = path_join(dir, rel);
    char *slash = strrchr(path, '/');
    *slash = '\0';
    assert_int_equal(mkdir_p(path), 0);
    *slash = '/';
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    free(path);
}

static char *make_tree(const char *name)
{
    char *dir = path_join(tmpdir, name);
    put(dir, "configure", "#!/bin/sh\n");
    put(dir, "src/main.c", "int main(void) { return 0; }\n");
    put(dir, "src/sub/x.h", "#define X 1\n");
    return dir;
}

static char *hash(const char *dir)
{
    char *h = tree_sha256(dir);
    assert_non_null(h);
    assert_int_equal(strlen(h), 64);
    return h;
}

static void test_hash_by_content(void **state)
{
    (void)state;
    char *a = make_tree("a"), *b = make_tree("b");
    char *ha = hash(a), *hb = hash(b);
    assert_string_equal(ha, hb); /* same files, another path */
    put(b, "src/main.c", "int main(void) { return 1; }\n");
    char *hb2 = hash(b);
    assert_string_not_equal(ha, hb2); /* an edited file */
    put(b, "src/main.c", "int main(void) { return 0; }\n");
    char *hb3 = hash(b);
    assert_string_equal(ha, hb3); /* edited back */
    char *from = path_join(b, "src/sub/x.h"), *to = path_join(b, "src/sub/y.h");
    assert_int_equal(rename(from, to), 0);
    char *hb4 = hash(b);
    assert_string_not_equal(ha, hb4); /* a renamed file */
    assert_int_equal(rename(to, from), 0);
    char *link = path_join(b, "src/link");
    assert_int_equal(symlink("main.c", link), 0);
    char *hb5 = hash(b);
    assert_string_not_equal(ha, hb5); /* a new symlink */
    unlink(link);
    assert_int_equal(symlink("sub/x.h", link), 0);
    char *hb6 = hash(b);
    assert_string_not_equal(hb5, hb6); /* the symlink's target changed */
    free(a), free(b), free(ha), free(hb), free(hb2), free(hb3), free(hb4), free(hb5), free(hb6);
    free(from), free(to), free(link);
}

static struct recipe toy(void)
{
    static char *expect[] = { "configure", "src/main.c", NULL };
    struct recipe r;
    memset(&r, 0, sizeof(r));
    r.name = "toy";
    r.expect = expect;
    r.source_hint = "a toy tree";
    return r;
}

static int quiet_resolve(const struct recipe *r, const char *opt, const char *srcdir, char **dir)
{
    fflush(stderr);
    int saved = dup(STDERR_FILENO), fd = open("/dev/null", O_WRONLY);
    dup2(fd, STDERR_FILENO);
    close(fd);
    int rc = pgo_source_resolve(r, opt, srcdir, dir);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    return rc;
}

static void test_resolve(void **state)
{
    (void)state;
    struct recipe r = toy();
    char *t = make_tree("c"), *dir = NULL;
    assert_int_equal(pgo_source_resolve(&r, t, tmpdir, &dir), 0);
    assert_string_equal(dir, t);
    free(dir);
    char *bad = path_join(tmpdir, "bad");
    put(bad, "README", "x\n");
    assert_int_equal(quiet_resolve(&r, bad, tmpdir, &dir), -1);
    assert_null(dir);
    assert_int_equal(quiet_resolve(&r, "/nonexistent/pgolab", tmpdir, &dir), -1);
    /* no Debian package and no --source: refused */
    assert_int_equal(quiet_resolve(&r, NULL, tmpdir, &dir), -1);
    /* a tarball: unpacked once, the tree found one level below */
    char *tar = path_join(tmpdir, "c.tar");
    const char *argv[] = { "tar", "-cf", tar, "-C", tmpdir, "c", NULL };
    struct subprocess sp = { .argv = argv };
    assert_int_equal(subprocess_run(&sp), 0);
    char *srcdir = path_join(tmpdir, "srcdir");
    assert_int_equal(pgo_source_resolve(&r, tar, srcdir, &dir), 0);
    assert_non_null(strstr(dir, "/srcdir/tarball-"));
    char *h1 = hash(dir), *h2 = hash(t);
    assert_string_equal(h1, h2);
    free(dir), free(h1), free(h2), free(t), free(bad), free(tar), free(srcdir);
}

static void test_debian_version(void **state)
{
    (void)state;
    char *d = path_join(tmpdir, "deb");
    put(d, "pkg-15-15.18/configure", "");
    put(d, "pkg-15_15.18-0+deb12u1.dsc", "");
    put(d, "pkg-15_15.18.orig.tar.bz2", "");
    char *tree = path_join(d, "pkg-15-15.18");
    char *v = pgo_source_debian_version(tree);
    assert_non_null(v);
    assert_string_equal(v, "15.18-0+deb12u1");
    free(v);
    char *other = path_join(d, "elsewhere");
    put(other, "configure", "");
    assert_null(pgo_source_debian_version(other));
    free(d), free(tree), free(other);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hash_by_content),
        cmocka_unit_test(test_resolve),
        cmocka_unit_test(test_debian_version),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
