/* Unit tests for src/pgo/source.c: the content hash of a source tree (the same files at
 * another path hash the same; an edited, added or renamed file or a changed symlink does
 * not), the --source checks against a recipe's "expect" files (and a library recipe's
 * "prepared" ones), tarballs, the Debian version of an `apt-get source` tree, and the prepare
 * stage of library recipes. */
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

/* TMPDIR/NAME.tar holding TMPDIR/NAME. Caller frees. */
static char *tar_of(const char *name)
{
    char *tar = xasprintf("%s/%s.tar", tmpdir, name);
    const char *argv[] = { "tar", "-cf", tar, "-C", tmpdir, name, NULL };
    struct subprocess sp = { .argv = argv };
    assert_int_equal(subprocess_run(&sp), 0);
    return tar;
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
    char *tar = tar_of("c");
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
    assert_null(pgo_source_version_mismatch(tree)); /* no changelog: nothing to disagree */
    /* the tree's own changelog decides, and is checked against the .dsc */
    put(d, "pkg-15-15.18/debian/changelog",
        "pkg-15 (15.18-0+deb12u1) bookworm-security; urgency=medium\n\n  * x\n");
    v = pgo_source_debian_version(tree);
    assert_string_equal(v, "15.18-0+deb12u1");
    free(v);
    assert_null(pgo_source_version_mismatch(tree));
    v = pgo_source_debian_package(tree);
    assert_string_equal(v, "pkg-15");
    free(v);
    put(d, "pkg-15-15.18/debian/changelog",
        "pkg-15 (15.20-0+deb12u1) bookworm-security; urgency=medium\n\n  * edited\n");
    v = pgo_source_debian_version(tree);
    assert_string_equal(v, "15.20-0+deb12u1");
    free(v);
    char *why = pgo_source_version_mismatch(tree);
    assert_non_null(why);
    assert_non_null(strstr(why, "is pkg-15 15.20-0+deb12u1 by its debian/changelog, but the .dsc "
                                "beside it is of 15.18-0+deb12u1"));
    free(why);
    v = pgo_source_dsc_version(tree);
    assert_string_equal(v, "15.18-0+deb12u1");
    free(v);
    /* a changelog's epoch is not in the .dsc's name: the same version */
    put(d, "pkg-15-15.18/debian/changelog",
        "pkg-15 (1:15.18-0+deb12u1) bookworm-security; urgency=medium\n\n  * x\n");
    assert_null(pgo_source_version_mismatch(tree));
    assert_string_equal(pgo_version_without_epoch("1:10.11.19-0+deb12u1"), "10.11.19-0+deb12u1");
    assert_string_equal(pgo_version_without_epoch("15.18-0+deb12u1"), "15.18-0+deb12u1");
    char *other = path_join(d, "elsewhere");
    put(other, "configure", "");
    assert_null(pgo_source_debian_version(other));
    put(other, "debian/changelog", "not an entry\n");
    assert_null(pgo_source_debian_version(other));
    put(other, "debian/changelog", "pkg (1.2-3) sid; urgency=low\n");
    v = pgo_source_debian_version(other);
    assert_string_equal(v, "1.2-3");
    free(v);
    free(d), free(tree), free(other);
}

/* A library recipe whose prepare steps copy the tree's one.c and one.h into the prepare
 * directory (as SQLite's make sqlite3.c makes the amalgamation). */
static void lib_recipe(struct recipe *r)
{
    static char *expect[] = { "src/x.h", "configure", NULL };
    static char *prepared[] = { "one.c", "one.h", NULL };
    static char *cp_c[] = { "cp", "{source}/src/one.c", "{build}/one.c", NULL };
    static char *cp_h[] = { "cp", "{source}/src/one.h", "one.h", NULL };
    static struct recipe_step steps[] = { { "copy-c", cp_c, NULL, NULL },
                                          { "copy-h", cp_h, NULL, NULL } };
    memset(r, 0, sizeof(*r));
    r->name = "lite";
    r->title = "Lite";
    r->product = RECIPE_LIBRARY;
    r->expect = expect;
    r->prepared = prepared;
    r->prepare_name = "amalgamation";
    r->prepare = steps;
    r->nprepare = 2;
}

/* Source kinds of a library recipe: a full tree, or a prepared one (which skips the prepare
 * steps); a tree wins over prepared files; neither is refused naming both. */
/* The upstream version of a tree without debian/: the recipe's version file and pattern
 * (the shipped mysql and postgresql rules), and the major check built on it. */
static void test_upstream_version(void **state)
{
    (void)state;
    struct recipe my, pg;
    assert_int_equal(recipe_load("recipes/mysql.json", &my), 0);
    assert_int_equal(recipe_load("recipes/postgresql.json", &pg), 0);
    char *d = path_join(tmpdir, "up");
    put(d, "MYSQL_VERSION", "MYSQL_VERSION_MAJOR=8\nMYSQL_VERSION_MINOR=0\n"
                            "MYSQL_VERSION_PATCH=36\nMYSQL_VERSION_EXTRA=\n");
    put(d, "configure.ac", "dnl x\nAC_INIT([PostgreSQL], [18.6], [bugs@x])\n");
    char *v = pgo_source_upstream_version(&my, d);
    assert_non_null(v);
    assert_string_equal(v, "8.0.36");
    free(v);
    v = pgo_source_upstream_version(&pg, d);
    assert_non_null(v);
    assert_string_equal(v, "18.6");
    free(v);
    put(d, "configure.ac", "AC_INIT([PostgreSQL], [19devel], [bugs@x])\n");
    v = pgo_source_upstream_version(&pg, d);
    assert_non_null(v);
    assert_string_equal(v, "19.devel");
    free(v);
    /* the selected major against the tree's */
    assert_int_equal(recipe_select_major(&my, "9.7"), 0);
    assert_int_equal(pgo_source_check_major(&my, d), -1);           /* 8.0.36 is no 9.7 */
    put(d, "MYSQL_VERSION", "MYSQL_VERSION_MAJOR=9\nMYSQL_VERSION_MINOR=7\n"
                            "MYSQL_VERSION_PATCH=12\n");
    assert_int_equal(pgo_source_check_major(&my, d), 0);
    put(d, "MYSQL_VERSION", "MYSQL_VERSION_MAJOR=9\nMYSQL_VERSION_MINOR=70\n"
                            "MYSQL_VERSION_PATCH=1\n");
    assert_int_equal(pgo_source_check_major(&my, d), -1);           /* 9.70 is no 9.7 */
    /* a file that does not match, or none: not known, not refused */
    put(d, "MYSQL_VERSION", "garbage\n");
    assert_null(pgo_source_upstream_version(&my, d));
    assert_int_equal(pgo_source_check_major(&my, d), 0);
    char *none = path_join(tmpdir, "none");
    assert_int_equal(mkdir_p(none), 0);
    assert_null(pgo_source_upstream_version(&pg, none));
    free(none);
    free(d);
    recipe_release(&my);
    recipe_release(&pg);
}

static void test_prepared_source(void **state)
{
    (void)state;
    struct recipe r;
    lib_recipe(&r);
    char *tree = path_join(tmpdir, "ltree"), *am = path_join(tmpdir, "lam");
    char *both = path_join(tmpdir, "lboth"), *half = path_join(tmpdir, "lhalf");
    put(tree, "src/x.h", "");
    put(tree, "configure", "");
    put(am, "one.c", "");
    put(am, "one.h", "");
    put(both, "src/x.h", "");
    put(both, "configure", "");
    put(both, "one.c", "");
    put(both, "one.h", "");
    put(half, "one.c", "");
    char *dir = NULL;
    assert_int_equal(pgo_source_resolve(&r, am, NULL, &dir), 0);
    assert_string_equal(dir, am);
    free(dir);
    assert_true(pgo_source_is_prepared(&r, am));
    assert_false(pgo_source_is_prepared(&r, tree));
    assert_false(pgo_source_is_prepared(&r, both)); /* a full tree is prepared by the steps */
    assert_int_equal(quiet_resolve(&r, half, NULL, &dir), -1);
    assert_null(dir);
    /* the message names the tree's files and the prepared ones */
    char *errpath = path_join(tmpdir, "err.txt");
    fflush(stderr);
    int saved = dup(STDERR_FILENO), fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, STDERR_FILENO);
    close(fd);
    pgo_source_resolve(&r, half, NULL, &dir);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    struct strbuf err = STRBUF_INIT;
    strbuf_init(&err, 0);
    assert_int_equal(strbuf_read_file(&err, errpath), 0);
    assert_non_null(strstr(err.buf, "lhalf: not a Lite source tree (no src/x.h; expected "
                                    "src/x.h, configure; or, prepared as the amalgamation: "
                                    "one.c, one.h)"));
    strbuf_release(&err);
    /* a tarball of a prepared tree */
    char *tar = tar_of("lam");
    char *srcdir = path_join(tmpdir, "lsrc");
    assert_int_equal(pgo_source_resolve(&r, tar, srcdir, &dir), 0);
    assert_non_null(strstr(dir, "/lsrc/tarball-"));
    assert_true(pgo_source_is_prepared(&r, dir));
    free(dir);
    free(tree), free(am), free(both), free(half), free(errpath), free(tar), free(srcdir);
}

/* pgo_prepare: a prepared source is used as it is; a tree runs the steps once into
 * WORKDIR/amalg-KEY, is reused while its content and the steps stay the same, and prepared
 * again when a file changes; steps that leave a prepared file out fail. */
static void test_prepare(void **state)
{
    (void)state;
    struct recipe r;
    lib_recipe(&r);
    char *tree = path_join(tmpdir, "ptree"), *am = path_join(tmpdir, "pam");
    char *work = path_join(tmpdir, "pwork");
    put(tree, "src/x.h", "");
    put(tree, "configure", "");
    put(tree, "src/one.c", "int one(void) { return 1; }\n");
    put(tree, "src/one.h", "int one(void);\n");
    put(am, "one.c", "");
    put(am, "one.h", "");
    struct recipe_vars v = { .cc = "gcc" };
    struct pgo_prepared p;

    assert_int_equal(pgo_prepare(&r, am, work, &v, false, NULL, &p), 0);
    assert_false(p.ran);
    assert_string_equal(p.dir, am);
    char *want = path_join(am, "one.c");
    assert_string_equal(p.main, want);
    free(want);
    pgo_prepared_release(&p);

    assert_int_equal(pgo_prepare(&r, tree, work, &v, false, NULL, &p), 0);
    assert_true(p.ran);
    assert_false(p.cached);
    assert_non_null(strstr(p.dir, "/pwork/amalg-"));
    char *made = path_join(p.dir, "one.c");
    struct strbuf sb = STRBUF_INIT;
    strbuf_init(&sb, 0);
    assert_int_equal(strbuf_read_file(&sb, made), 0);
    assert_string_equal(sb.buf, "int one(void) { return 1; }\n");
    strbuf_release(&sb);
    char *log = path_join(p.dir, "build.log");
    strbuf_init(&sb, 0);
    assert_int_equal(strbuf_read_file(&sb, log), 0);
    assert_non_null(strstr(sb.buf, "$ cd "));
    strbuf_release(&sb);
    pgo_prepared_release(&p);

    assert_int_equal(pgo_prepare(&r, tree, work, &v, false, NULL, &p), 0);
    assert_true(p.ran);
    assert_true(p.cached); /* same content, same steps */
    pgo_prepared_release(&p);
    assert_int_equal(pgo_prepare(&r, tree, work, &v, true, NULL, &p), 0);
    assert_false(p.cached); /* forced */
    pgo_prepared_release(&p);

    put(tree, "src/one.c", "int one(void) { return 2; }\n");
    assert_int_equal(pgo_prepare(&r, tree, work, &v, false, NULL, &p), 0);
    assert_false(p.cached); /* an edited tree is prepared again */
    strbuf_init(&sb, 0);
    assert_int_equal(strbuf_read_file(&sb, made), 0);
    assert_string_equal(sb.buf, "int one(void) { return 2; }\n");
    strbuf_release(&sb);
    pgo_prepared_release(&p);

    /* edited steps are a different preparation */
    char *cp_h2[] = { "cp", "{source}/src/one.h", "./one.h", NULL };
    char **old = r.prepare[1].argv;
    r.prepare[1].argv = cp_h2;
    assert_int_equal(pgo_prepare(&r, tree, work, &v, false, NULL, &p), 0);
    assert_false(p.cached);
    pgo_prepared_release(&p);

    /* the caller's stop flag set before the steps (an interrupt just before a step started):
     * the slow step is stopped, not run to its end; nothing is stamped as prepared */
    char *slow[] = { "sh", "-c", "sleep 3; cp {source}/src/one.h ./one.h", NULL };
    r.prepare[1].argv = slow;
    static volatile sig_atomic_t stop = 1;
    fflush(stderr);
    int saved0 = dup(STDERR_FILENO), fd0 = open("/dev/null", O_WRONLY);
    dup2(fd0, STDERR_FILENO);
    close(fd0);
    int rc0 = pgo_prepare(&r, tree, work, &v, true, &stop, &p);
    fflush(stderr);
    dup2(saved0, STDERR_FILENO);
    close(saved0);
    assert_int_equal(rc0, -1);
    char *h = xstrdup(made); /* the same WORKDIR/amalg-KEY: .../one.c */
    h[strlen(h) - 1] = 'h';
    assert_false(is_file(h));
    free(h);
    r.prepare[1].argv = cp_h2;
    stop = 0; /* not set: the steps run to their end, nothing reused */
    assert_int_equal(pgo_prepare(&r, tree, work, &v, false, &stop, &p), 0);
    assert_false(p.cached);
    pgo_prepared_release(&p);

    /* steps that do not make every prepared file */
    char *cp_nothing[] = { "true", NULL };
    r.prepare[1].argv = cp_nothing;
    fflush(stderr);
    int saved = dup(STDERR_FILENO), fd = open("/dev/null", O_WRONLY);
    dup2(fd, STDERR_FILENO);
    close(fd);
    int rc = pgo_prepare(&r, tree, work, &v, false, NULL, &p);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    assert_int_equal(rc, -1);
    r.prepare[1].argv = old;
    free(tree), free(am), free(work), free(made), free(log);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hash_by_content),
        cmocka_unit_test(test_resolve),
        cmocka_unit_test(test_debian_version),
        cmocka_unit_test(test_upstream_version),
        cmocka_unit_test(test_prepared_source),
        cmocka_unit_test(test_prepare),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
