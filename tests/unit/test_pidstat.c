/* test_pidstat: /proc/PID/stat parsed (util/pidstat.c): a canned line whose command name
 * holds blanks and parentheses, the lines it refuses, a file under another procfs root, and
 * this process's own. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/fs.h"
#include "util/pidstat.h"
#include "util/util.h"

#define UNIT_TMPDIR_TEMPLATE "/tmp/pgolab-pidstat.XXXXXX"
#include "unit_helpers.h"

/* fields 4.. as proc(5) numbers them: ppid 4200, pgrp 4242, ..., starttime (22) 12345 */
static const char *const LINE = "4242 (postgres: (x) y) S 4200 4242 4242 0 -1 4194560 1500 0 3 "
                                "0 120 45 7 2 20 0 1 0 12345 1000 50\n";

static void test_parse(void **state)
{
    (void)state;
    struct proc_pid_stat st;
    assert_int_equal(pidstat_parse(LINE, &st), 0);
    assert_int_equal(st.pid, 4242);
    assert_string_equal(st.comm, "postgres: (x) y");
    assert_int_equal(st.state, 'S');
    assert_int_equal(st.ppid, 4200);
    assert_int_equal(st.pgrp, 4242);
    assert_int_equal(st.minflt, 1500);
    assert_int_equal(st.majflt, 3);
    assert_int_equal(st.utime, 120);
    assert_int_equal(st.stime, 45);
    assert_int_equal(st.cutime, 7);
    assert_int_equal(st.cstime, 2);
    assert_int_equal(st.num_threads, 1);
    assert_int_equal(st.starttime, 12345);
}

static void test_refused(void **state)
{
    (void)state;
    struct proc_pid_stat st;
    assert_int_equal(pidstat_parse("4242 (x S 1 2\n", &st), -1);      /* no ')' */
    assert_int_equal(pidstat_parse("4242 (x) S 1 2 3\n", &st), -1);   /* ends early */
    assert_int_equal(pidstat_parse("4242 (x)\n", &st), -1);           /* no state */
    /* ends at field 21, before the start time */
    assert_int_equal(pidstat_parse("1 (x) S 0 1 1 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0\n", &st), -1);
}

static void test_read_root(void **state)
{
    (void)state;
    struct proc_pid_stat st;
    char *dir = xasprintf("%s/4242", tmpdir), *path = path_join(dir, "stat");
    assert_int_equal(mkdir_p(dir), 0);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(LINE, f);
    fclose(f);
    assert_int_equal(pidstat_read(tmpdir, 4242, &st), 0);
    assert_int_equal(st.starttime, 12345);
    assert_string_equal(st.comm, "postgres: (x) y");
    st.pid = 7;
    assert_int_equal(pidstat_read(tmpdir, 4243, &st), -1); /* no such process */
    assert_int_equal(st.pid, 0);                            /* cleared */
    assert_int_equal(pidstat_read(tmpdir, 0, &st), -1);
    free(dir);
    free(path);
}

static void test_read_self(void **state)
{
    (void)state;
    struct proc_pid_stat st;
    assert_int_equal(pidstat_read(NULL, (long)getpid(), &st), 0);
    assert_int_equal(st.pid, getpid());
    assert_int_equal(st.ppid, getppid());
    assert_int_equal(st.pgrp, getpgrp());
    assert_int_equal(st.state, 'R');
    assert_true(st.starttime > 0);
    assert_true(st.num_threads >= 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_read_root),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_read_self),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
