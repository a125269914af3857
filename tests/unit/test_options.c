/* Unit tests for util/opts.c: sysbench-style --name=value parsing, '-'/'_' spelling,
 * bare flags, defaults, rejected options and values, list splitting and help output. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/opts.h"
#include "util/strbuf.h"
#include "util/util.h"

static const struct opt_def general[] = {
    { "table-size", OPT_INT, "10000", "Number of rows per table" },
    { "threads", OPT_INT, "1", "Number of threads" },
    { "report-interval", OPT_DOUBLE, "0", "Seconds between reports" },
    { "skip-trx", OPT_BOOL, "off", "Skip BEGIN/COMMIT" },
    { "db-driver", OPT_STRING, NULL, "Database driver" },
    { "tables-list", OPT_LIST, "a,b", "Tables" },
    OPT_END,
};

static const struct opt_def extra[] = {
    { "threads", OPT_INT, "99", "shadowed by the first table" },
    { "rand-type", OPT_STRING, "uniform", "Distribution" },
    { "variant", OPT_MULTI, "base", "A library variant" },
    { "env", OPT_MULTI, NULL, "An environment setting" },
    { "mysql-password", OPT_STRING, "", "A password" },
    OPT_END,
};

static int setup(void **state)
{
    static const struct opt_def *const tables[] = { general, extra };
    struct opts *o = xmalloc(sizeof(*o));
    opts_init(o, tables, 2);
    *state = o;
    return 0;
}

static int teardown(void **state)
{
    opts_release(*state);
    free(*state);
    return 0;
}

/* opts_parse takes char **; give it writable copies of string literals. */
static int parse(struct opts *o, int argc, const char **words)
{
    char **argv = xcalloc((size_t)argc + 1, sizeof(char *));
    for (int i = 0; i < argc; i++)
        argv[i] = xstrdup(words[i]);
    int rc = opts_parse(o, argc, argv);
    for (int i = 0; i < argc; i++)
        free(argv[i]);
    free(argv);
    return rc;
}

/* Run fn(arg) with file descriptor fd (stdout or stderr) sent to a temporary file; return
 * what was written there (caller frees). */
static char *capture(int fd, void (*fn)(const void *), const void *arg)
{
    char path[] = "/tmp/pgolab-test-options-XXXXXX";
    int tmp = mkstemp(path);
    assert_true(tmp >= 0);
    fflush(stdout);
    fflush(stderr);
    int saved = dup(fd);
    assert_true(saved >= 0);
    assert_true(dup2(tmp, fd) >= 0);
    fn(arg);
    fflush(stdout);
    fflush(stderr);
    dup2(saved, fd);
    close(saved);
    close(tmp);
    struct strbuf sb = STRBUF_INIT;
    assert_int_equal(strbuf_read_file(&sb, path), 0);
    unlink(path);
    return strbuf_detach(&sb);
}

static void test_defaults(void **state)
{
    struct opts *o = *state;
    assert_int_equal(opt_int(o, "table-size"), 10000);
    assert_int_equal(opt_int(o, "threads"), 1); /* first table wins */
    assert_true(opt_double(o, "report-interval") == 0);
    assert_false(opt_bool(o, "skip-trx"));
    assert_null(opt_str(o, "db-driver"));
    assert_string_equal(opt_str(o, "rand-type"), "uniform");
    assert_false(opt_is_set(o, "table-size"));
    assert_int_equal(o->nargs, 0);
}

static void test_parse_values_and_args(void **state)
{
    struct opts *o = *state;
    const char *argv[] = { "oltp_read_write", "--table-size=9", "--threads=4", "prepare",
                           "--report-interval=2.5", "--db-driver=sqlite", "-v", "--",
                           "--table-size=500" };
    assert_int_equal(parse(o, ARRAY_SIZE(argv), argv), 0);
    assert_int_equal(opt_int(o, "table-size"), 500); /* the last one */
    assert_int_equal(opt_given(o, "table-size"), 2);
    assert_int_equal(opt_given(o, "threads"), 1);
    assert_int_equal(opt_given(o, "skip-trx"), 0);
    assert_int_equal(opt_int(o, "threads"), 4);
    assert_true(opt_double(o, "report-interval") == 2.5);
    assert_string_equal(opt_str(o, "db-driver"), "sqlite");
    assert_true(opt_is_set(o, "threads"));
    assert_false(opt_is_set(o, "skip-trx"));
    /* Non-option words are positional, in order; a lone "--" and "-v" are words too. */
    assert_int_equal(o->nargs, 4);
    assert_string_equal(o->args[0], "oltp_read_write");
    assert_string_equal(o->args[1], "prepare");
    assert_string_equal(o->args[2], "-v");
    assert_string_equal(o->args[3], "--");
    assert_null(o->args[4]);
    /* The last occurrence wins. */
    const char *again[] = { "--threads=8", "--threads=16" };
    assert_int_equal(parse(o, 2, again), 0);
    assert_int_equal(opt_int(o, "threads"), 16);
}

static void test_dash_underscore(void **state)
{
    struct opts *o = *state;
    const char *argv[] = { "--table_size=7", "--report_interval=0.5", "--skip_trx" };
    assert_int_equal(parse(o, 3, argv), 0);
    assert_int_equal(opt_int(o, "table-size"), 7);
    assert_int_equal(opt_int(o, "table_size"), 7); /* accessors accept either spelling */
    assert_true(opt_double(o, "report-interval") == 0.5);
    assert_true(opt_bool(o, "skip_trx"));
    assert_int_equal(opts_set(o, "rand_type", "pareto"), 0);
    assert_string_equal(opt_str(o, "rand-type"), "pareto");
    assert_int_equal(opts_set(o, "db-driver", "mysql"), 0);
    assert_string_equal(opt_str(o, "db_driver"), "mysql");
    /* A prefix or extension of a name is not the name. */
    const char *prefix[] = { "--table=1" };
    assert_int_equal(parse(o, 1, prefix), -1);
    const char *longer[] = { "--table-sizes=1" };
    assert_int_equal(parse(o, 1, longer), -1);
}

static void test_bool_flags(void **state)
{
    struct opts *o = *state;
    const char *bare[] = { "--skip-trx" };
    assert_int_equal(parse(o, 1, bare), 0);
    assert_true(opt_bool(o, "skip-trx"));
    assert_true(opt_is_set(o, "skip-trx"));
    static const char *off[] = { "off", "false", "0", "no", "OFF", "No" };
    static const char *on[] = { "on", "true", "1", "yes", "ON", "True" };
    for (size_t i = 0; i < ARRAY_SIZE(off); i++) {
        assert_int_equal(opts_set(o, "skip-trx", on[i]), 0);
        assert_true(opt_bool(o, "skip-trx"));
        assert_int_equal(opts_set(o, "skip-trx", off[i]), 0);
        assert_false(opt_bool(o, "skip-trx"));
    }
    const char *bad[] = { "--skip-trx=maybe" };
    assert_int_equal(parse(o, 1, bad), -1);
    assert_false(opt_bool(o, "skip-trx")); /* unchanged */
    assert_int_equal(opts_set(o, "skip-trx", ""), -1);
}

static void test_parse_bool(void **state)
{
    (void)state;
    assert_int_equal(parse_bool("on"), 1);
    assert_int_equal(parse_bool("YES"), 1);
    assert_int_equal(parse_bool("1"), 1);
    assert_int_equal(parse_bool("off"), 0);
    assert_int_equal(parse_bool("False"), 0);
    assert_int_equal(parse_bool("0"), 0);
    assert_int_equal(parse_bool(""), -1);
    assert_int_equal(parse_bool("2"), -1);
    assert_int_equal(parse_bool("onn"), -1);
    assert_int_equal(parse_bool("y"), -1);
}

static struct opts *unknown_opts;
static int unknown_rc;

static void parse_unknown_fn(const void *arg)
{
    const char *argv[] = { arg };
    unknown_rc = parse(unknown_opts, 1, argv);
}

static void test_unknown_option(void **state)
{
    struct opts *o = *state;
    unknown_opts = o;
    char *err = capture(STDERR_FILENO, parse_unknown_fn, "--no-such-option=1");
    assert_int_equal(unknown_rc, -1);
    assert_non_null(strstr(err, "invalid option: --no-such-option"));
    free(err);
    const char *bare[] = { "--no-such-flag" };
    assert_int_equal(parse(o, 1, bare), -1);
    assert_int_equal(opts_set(o, "no-such-option", "1"), -1);
    /* An unknown option stops parsing: options after it are not applied. */
    const char *mixed[] = { "--bogus=1", "--threads=3" };
    assert_int_equal(parse(o, 2, mixed), -1);
    assert_int_equal(opt_int(o, "threads"), 1);
}

static void test_nearest(void **state)
{
    struct opts *o = *state;
    assert_string_equal(opt_nearest(o, "thread", 6), "threads");
    assert_string_equal(opt_nearest(o, "tabel_size", 10), "table-size");
    assert_string_equal(opt_nearest(o, "rand-typo=1", 9), "rand-type"); /* only name[0..len) */
    unknown_opts = o;
    char *err = capture(STDERR_FILENO, parse_unknown_fn, "--thread=1");
    assert_string_equal(err, "FATAL: invalid option: --thread=1 (did you mean --threads? see pgolab --help)\n");
    free(err);
    o->cmd = "bench";
    err = capture(STDERR_FILENO, parse_unknown_fn, "--zzzzzzzzzzzz");
    /* nothing plausibly close: no guess */
    assert_string_equal(err, "FATAL: invalid option: --zzzzzzzzzzzz (see pgolab bench --help)\n");
    free(err);
}

static void test_bad_values(void **state)
{
    struct opts *o = *state;
    static const char *bad_ints[] = { "--threads=abc", "--threads=12x", "--threads=",
                                      "--threads=1.5", "--threads= 4x",
                                      "--threads=99999999999999999999999" };
    for (size_t i = 0; i < ARRAY_SIZE(bad_ints); i++) {
        const char *argv[] = { bad_ints[i] };
        if (parse(o, 1, argv) != -1)
            fail_msg("%s was accepted", bad_ints[i]);
        assert_int_equal(opt_int(o, "threads"), 1); /* value unchanged */
        assert_false(opt_is_set(o, "threads"));
    }
    const char *neg[] = { "--threads=-3" };
    assert_int_equal(parse(o, 1, neg), 0); /* range checks belong to the caller */
    assert_int_equal(opt_int(o, "threads"), -3);

    const char *bad_double[] = { "--report-interval=fast" };
    assert_int_equal(parse(o, 1, bad_double), -1);
    assert_int_equal(opts_set(o, "report-interval", "1e400"), -1);
    assert_int_equal(opts_set(o, "report-interval", "nan"), -1);
    assert_int_equal(opts_set(o, "report-interval", "1e-3"), 0);
    assert_true(opt_double(o, "report-interval") == 1e-3);
    /* Non-bool options need a value. */
    const char *novalue[] = { "--threads" };
    assert_int_equal(parse(o, 1, novalue), -1);
    /* Strings take anything, including '=' and the empty string. */
    const char *str[] = { "--db-driver=a=b" };
    assert_int_equal(parse(o, 1, str), 0);
    assert_string_equal(opt_str(o, "db-driver"), "a=b");
    assert_int_equal(opts_set(o, "db-driver", ""), 0);
    assert_string_equal(opt_str(o, "db-driver"), "");
}

static void check_list(char **list, int n, const char *const *want, int nwant)
{
    assert_int_equal(n, nwant);
    for (int i = 0; i < nwant; i++)
        assert_string_equal(list[i], want[i]);
    assert_null(list[n]);
}

static void test_lists(void **state)
{
    struct opts *o = *state;
    int n = -1;
    char **l = opt_list(o, "tables-list", &n);
    check_list(l, n, (const char *[]){ "a", "b" }, 2);
    opt_list_free(l);

    /* an empty item or one given twice is refused, and the value stays */
    static const char *bad_lists[] = { "--tables-list=x,,y", "--tables-list=x, z,",
                                       "--tables-list=,x", "--tables-list=x,y,x" };
    for (size_t i = 0; i < ARRAY_SIZE(bad_lists); i++) {
        const char *argv[] = { bad_lists[i] };
        assert_int_equal(parse(o, 1, argv), 0); /* the parser keeps them (sysbench's lists) */
        if (opt_list_check(o, "tables-list") != -1)
            fail_msg("%s passed opt_list_check", bad_lists[i]);
    }
    assert_int_equal(opt_list_check(o, "threads"), 0); /* not set */
    const char *argv[] = { "--tables-list=x,y, z,X" };
    assert_int_equal(parse(o, 1, argv), 0);
    assert_int_equal(opt_list_check(o, "tables-list"), 0);
    l = opt_list(o, "tables_list", &n);
    check_list(l, n, (const char *[]){ "x", "y", " z", "X" }, 4);
    opt_list_free(l);
    int threads[3];
    char *tl[] = { "2", "1", "02" };
    assert_int_equal(parse_thread_list(tl, 2, threads), 0);
    assert_int_equal(threads[1], 1);
    assert_int_equal(parse_thread_list(tl, 3, threads), -1); /* 2 and 02 */

    l = split_list("", &n);
    check_list(l, n, NULL, 0);
    opt_list_free(l);
    l = split_list(NULL, &n);
    check_list(l, n, NULL, 0);
    opt_list_free(l);
    l = split_list(",,,", &n);
    check_list(l, n, NULL, 0);
    opt_list_free(l);
    l = split_list("one", NULL);
    assert_string_equal(l[0], "one");
    assert_null(l[1]);
    opt_list_free(l);

    /* Many items (forces growth). */
    struct strbuf sb = STRBUF_INIT;
    for (int i = 0; i < 100; i++)
        strbuf_addf(&sb, "%st%d", i ? "," : "", i);
    l = split_list(sb.buf, &n);
    assert_int_equal(n, 100);
    for (int i = 0; i < 100; i++) {
        char want[16];
        snprintf(want, sizeof(want), "t%d", i);
        assert_string_equal(l[i], want);
    }
    assert_null(l[100]);
    opt_list_free(l);
    strbuf_release(&sb);
    opt_list_free(NULL);
}

static void test_multi(void **state)
{
    struct opts *o = *state;
    int n = -1;
    const char *const *v = opt_multi(o, "variant", &n);
    assert_int_equal(n, 1); /* the default, as one value */
    assert_string_equal(v[0], "base");
    v = opt_multi(o, "env", &n);
    assert_int_equal(n, 0);
    assert_true(v == NULL || v[0] == NULL);

    /* Every occurrence kept in order; the first replaces the default; opt_str = the last. */
    const char *argv[] = { "--variant=a", "--threads=2", "--variant=b,c" };
    assert_int_equal(parse(o, 3, argv), 0);
    v = opt_multi(o, "variant", &n);
    assert_int_equal(n, 2);
    assert_string_equal(v[0], "a");
    assert_string_equal(v[1], "b,c");
    assert_null(v[2]);
    assert_string_equal(opt_str(o, "variant"), "b,c");
    assert_int_equal(opts_set(o, "variant", "d"), 0);
    v = opt_multi(o, "variant", NULL);
    assert_string_equal(v[2], "d");
    assert_null(v[3]);
}

static void print_help_fn(const void *table)
{
    opts_print_help(table);
}

static char *capture_help(const struct opt_def *table)
{
    return capture(STDOUT_FILENO, print_help_fn, table);
}

/* A password's value is kept in the options but blanked in argv (the process title). */
static void test_password_blanked(void **state)
{
    struct opts *o = *state;
    char a0[] = "--mysql_password=s3cret", a1[] = "--threads=3";
    char *argv[] = { a0, a1 };
    assert_int_equal(opts_parse(o, 2, argv), 0);
    assert_string_equal(opt_str(o, "mysql-password"), "s3cret");
    assert_string_equal(a0, "--mysql_password=xxxxxx");
    assert_string_equal(a1, "--threads=3");  /* other options untouched */
}

static void test_help(void **state)
{
    (void)state;
    char *out = capture_help(general);
    assert_non_null(strstr(out, "  --table-size=N"));
    assert_non_null(strstr(out, "Number of rows per table [10000]"));
    assert_non_null(strstr(out, "  --skip-trx[=on|off]"));
    assert_non_null(strstr(out, "Skip BEGIN/COMMIT [off]"));
    assert_non_null(strstr(out, "  --db-driver=STRING"));
    assert_non_null(strstr(out, "  --tables-list=[LIST,...]"));
    assert_null(strstr(out, "Database driver [")); /* no default, no brackets */
    int lines = 0;
    for (const char *p = out; *p; p++)
        lines += *p == '\n';
    assert_int_equal(lines, 6);
    free(out);
}

/* The repeatable option compare uses for --variant (util/options). */
static void test_opt_multi(void **state)
{
    (void)state;
    static const struct opt_def defs[] = {
        { "variant", OPT_MULTI, NULL, "a variant" },
        { "mode", OPT_MULTI, "x", "with a default" },
        OPT_END,
    };
    const struct opt_def *tables[] = { defs };
    struct opts o;
    char *argv[] = { "--variant=A=sqlite:/a", "run", "--variant", "B=sqlite:/b", "--variant=A=x" };
    int n;

    opts_init(&o, tables, 1);
    const char *const *m = opt_multi(&o, "variant", &n);
    assert_int_equal(n, 0);
    assert_null(m[0]);
    m = opt_multi(&o, "mode", &n);
    assert_int_equal(n, 1);
    assert_string_equal(m[0], "x");

    assert_int_equal(opts_parse(&o, 5, argv), 0); /* "--variant B=..." as two words too */
    m = opt_multi(&o, "variant", &n);
    assert_int_equal(n, 3);
    assert_string_equal(m[0], "A=sqlite:/a");
    assert_string_equal(m[1], "B=sqlite:/b");
    assert_string_equal(m[2], "A=x");
    assert_null(m[3]);
    assert_string_equal(opt_str(&o, "variant"), "A=x"); /* the last one */
    assert_int_equal(o.nargs, 1);
    /* The first given value replaces the default. */
    assert_int_equal(opts_set(&o, "mode", "y"), 0);
    assert_int_equal(opts_set(&o, "mode", "z"), 0);
    m = opt_multi(&o, "mode", &n);
    assert_int_equal(n, 2);
    assert_string_equal(m[0], "y");
    assert_string_equal(m[1], "z");
    opts_release(&o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_defaults, setup, teardown),
        cmocka_unit_test_setup_teardown(test_parse_values_and_args, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dash_underscore, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bool_flags, setup, teardown),
        cmocka_unit_test(test_parse_bool),
        cmocka_unit_test_setup_teardown(test_unknown_option, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nearest, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_values, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lists, setup, teardown),
        cmocka_unit_test_setup_teardown(test_multi, setup, teardown),
        cmocka_unit_test_setup_teardown(test_password_blanked, setup, teardown),
        cmocka_unit_test(test_help),
        cmocka_unit_test(test_opt_multi),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
