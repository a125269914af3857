/* unit_helpers.h: helpers shared by the unit tests (tests/unit/test_*.c), header only (each test
 * is built from its one .c file). Include it after <cmocka.h>, "util/fs.h" and "util/util.h".
 *
 *   unit_closed_port()    a loopback TCP port nothing listens on
 *   unit_run(ARGV, CWD)   run a program in CWD with its output discarded: its exit status
 *                         (needs "util/subprocess.h" and "util/strbuf.h" included before)
 *   UNIT_SKIP(NEED, WHERE) skip this test, saying why: a "SKIP: test: needs NEED; WHERE" line
 *                         (tests/check.sh shows it). WHERE is where the check runs instead
 *                         ("runs in tests/e2e/x.t ..."), or NULL when nowhere else: then under
 *                         PGOLAB_CI=1 (.ci/run) the skip is a failure, as CI must run the check
 *   UNIT_TMPDIR_TEMPLATE  defined before the #include (a mkdtemp template such as
 *                         "/tmp/pgolab-NAME.XXXXXX"): also `static char *tmpdir`, that directory
 *                         (realpath'd), made by group_setup and removed with everything in it by
 *                         group_teardown, to pass to cmocka_run_group_tests */
#ifndef PGOLAB_UNIT_HELPERS_H
#define PGOLAB_UNIT_HELPERS_H

#include <arpa/inet.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* A loopback port nobody listens on (bound, then closed). */
static inline int unit_closed_port(void)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    close(fd);
    return ntohs(a.sin_port);
}

#ifdef PGOLAB_SUBPROCESS_H
/* argv (argv[0] looked up in PATH) in cwd, its stdout collected and dropped, its stderr
 * discarded: subprocess_run's status. */
static inline int unit_run(const char *const *argv, const char *cwd)
{
    struct strbuf out = STRBUF_INIT;
    strbuf_init(&out, 0);
    struct subprocess sp = { .argv = argv, .cwd = cwd, .out = &out, .quiet_stderr = 1 };
    int rc = subprocess_run(&sp);
    strbuf_release(&out);
    return rc;
}
#endif

/* See UNIT_SKIP above; returns from the test. */
#define UNIT_SKIP(need, where)                                                                    \
    do {                                                                                          \
        const char *where_ = (where);                                                             \
        print_message("SKIP: %s: needs %s; %s\n", __func__, (need),                              \
                      where_ ? where_ : "runs nowhere else");                                    \
        if (!where_ && getenv("PGOLAB_CI") && *getenv("PGOLAB_CI") && strcmp(getenv("PGOLAB_CI"), "0")) \
            fail_msg("PGOLAB_CI is set: CI must run %s (needs %s)", __func__, (need));           \
        skip();                                                                                   \
        return;                                                                                   \
    } while (0)

#ifdef UNIT_TMPDIR_TEMPLATE
static char *tmpdir;  /* realpath'd */

static int group_setup(void **state)
{
    (void)state;
    char t[] = UNIT_TMPDIR_TEMPLATE;
    char real[PATH_MAX];
    if (!mkdtemp(t) || !realpath(t, real))
        return -1;
    tmpdir = xstrdup(real);
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    remove_tree(tmpdir);
    free(tmpdir);
    return 0;
}
#endif

#endif
