/* Unit tests for util/shellwords.c (shell command text into commands and words, as sh splits
 * it before expansion: the text `make -n` and dh_auto_configure --no-act print) and for the
 * option rules of src/pgo/distro.c (an option's name; which of Debian's configure options the
 * distro variant leaves out, and why). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "pgo/distro.h"
#include "util/shellwords.h"

/* The commands of text joined as "w1|w2;w1|w2" (words by '|', commands by ';'). */
static char *split(const char *text)
{
    struct shell_command *c;
    int n;
    if (shell_commands(text, &c, &n) < 0)
        return strdup("(error)");
    size_t len = 1;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < c[i].words.n; k++)
            len += strlen(c[i].words.v[k]) + 1;
    char *out = calloc(len + 1, 1);
    for (int i = 0; i < n; i++) {
        if (i)
            strcat(out, ";");
        for (int k = 0; k < c[i].words.n; k++) {
            if (k)
                strcat(out, "|");
            strcat(out, c[i].words.v[k]);
        }
    }
    shell_commands_free(c, n);
    return out;
}

static void check_split(const char *text, const char *want)
{
    char *got = split(text);
    assert_string_equal(got, want);
    free(got);
}

static void test_words(void **state)
{
    (void)state;
    check_split("a b  c", "a|b|c");
    check_split("CFLAGS='-g -O2' x=\"a \\\"b\\\" \\$c\"", "CFLAGS=-g -O2|x=a \"b\" $c");
    check_split("a\\ b c\\\nd", "a b|cd");          /* an escaped space; a continuation */
    check_split("--with-extra-version=\" (Debian 15.18-0+deb12u1)\"",
                "--with-extra-version= (Debian 15.18-0+deb12u1)");
    check_split("--includedir=\\${prefix}/include", "--includedir=${prefix}/include");
    check_split("x ${A:-\"/b\"}", "x|${A:-/b}");     /* nothing expanded, quotes undone */
    check_split("", "");
    check_split("  # a comment\n", "");
    check_split("'unterminated", "(error)");
    check_split("\"unterminated", "(error)");
}

static void test_commands(void **state)
{
    (void)state;
    /* MySQL's configure-stamp recipe as make -n prints it */
    check_split("( test -d builddir || mkdir builddir ) && cd builddir && \\\n"
                "sh -c 'PATH=${P:-\"/bin\"} \\\n\tcmake -DA=1 ..'",
                "test|-d|builddir;mkdir|builddir;cd|builddir;sh|-c|PATH=${P:-\"/bin\"} \\\n"
                "\tcmake -DA=1 ..");
    /* dh_auto_configure --no-act's line */
    check_split("\tcd build && ../configure --prefix=/usr \"CFLAGS=-O2 x\"\nrm -f y; z | w &",
                "cd|build;../configure|--prefix=/usr|CFLAGS=-O2 x;rm|-f|y;z;w");
}

static void test_option_name(void **state)
{
    (void)state;
    const char *cases[][2] = {
        { "--with-icu", "--with-icu" },
        { "--libdir=/usr/lib/x86_64-linux-gnu/", "--libdir" },
        { "-DWITH_BOOST=../boost", "WITH_BOOST" },
        { "-DWITH_BOOST:PATH=../boost", "WITH_BOOST" },
        { "CFLAGS=-O2 -g", "CFLAGS" },
        { "-GUnix Makefiles", "-GUnix Makefiles" },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *n = pgo_distro_option_name(cases[i][0]);
        assert_string_equal(n, cases[i][1]);
        free(n);
    }
}

static void test_drop_reason(void **state)
{
    (void)state;
    struct recipe_distro_rule drop[] = {
        { (char *)"--enable-tap-tests", (char *)"tests only", NULL },
        { (char *)"-DSYSCONFDIR", (char *)"its configuration directory", NULL },
    };
    struct recipe r;
    memset(&r, 0, sizeof(r));
    r.distro_drop = drop;
    r.ndistro_drop = 2;
    const char *dir = "an install directory of the package: the variant installs under its own "
                      "prefix";
    /* install directories: autoconf's and cmake's */
    assert_string_equal(pgo_distro_drop_reason(&r, "--prefix=/usr"), dir);
    assert_string_equal(pgo_distro_drop_reason(&r, "--bindir=/usr/lib/postgresql/15/bin"), dir);
    assert_string_equal(pgo_distro_drop_reason(&r, "--runstatedir=/run"), dir);
    assert_string_equal(pgo_distro_drop_reason(&r, "-DCMAKE_INSTALL_PREFIX=/usr"), dir);
    assert_string_equal(pgo_distro_drop_reason(&r, "-DINSTALL_LIBDIR=lib/x86_64-linux-gnu"), dir);
    assert_string_equal(pgo_distro_drop_reason(&r, "-DROUTER_INSTALL_LIBDIR=lib/mysql-router"),
                        dir);
    /* the recipe's own, by name or whole */
    assert_string_equal(pgo_distro_drop_reason(&r, "--enable-tap-tests"), "tests only");
    assert_string_equal(pgo_distro_drop_reason(&r, "-DSYSCONFDIR=/etc/mysql"),
                        "its configuration directory");
    /* a positional word is Debian's source directory */
    assert_non_null(pgo_distro_drop_reason(&r, ".."));
    /* kept: features, paths that are not install directories, variables */
    assert_null(pgo_distro_drop_reason(&r, "--with-icu"));
    assert_null(pgo_distro_drop_reason(&r, "--with-system-tzdata=/usr/share/zoneinfo"));
    assert_null(pgo_distro_drop_reason(&r, "--disable-rpath"));
    assert_null(pgo_distro_drop_reason(&r, "-DWITH_BOOST=../boost"));
    assert_null(pgo_distro_drop_reason(&r, "-DMYSQL_UNIX_ADDR=/var/run/mysqld/mysqld.sock"));
    assert_null(pgo_distro_drop_reason(&r, "CFLAGS=-g -O2"));
    assert_null(pgo_distro_drop_reason(&r, "--enable-tap-testsx"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_words),
        cmocka_unit_test(test_commands),
        cmocka_unit_test(test_option_name),
        cmocka_unit_test(test_drop_reason),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
