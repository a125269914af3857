/* Unit tests for util/signals.c: the handler catches SIGINT and SIGTERM without SA_RESTART,
 * and sig_restore() puts back exactly what was there (also when nested). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <signal.h>
#include <string.h>

#include "util/signals.h"

static volatile sig_atomic_t outer_got, inner_got;

static void outer(int sig)
{
    outer_got = sig;
}

static void inner(int sig)
{
    inner_got = sig;
}

/* The handler now installed for sig. */
static void (*current(int sig))(int)
{
    struct sigaction sa;
    sigaction(sig, NULL, &sa);
    return sa.sa_handler;
}

static void test_catch_and_restore(void **state)
{
    (void)state;
    struct sig_saved saved;
    struct sigaction sa;
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_IGN);
    sig_catch(outer, &saved);
    assert_ptr_equal(current(SIGINT), outer);
    assert_ptr_equal(current(SIGTERM), outer);
    sigaction(SIGINT, NULL, &sa);
    assert_int_equal(sa.sa_flags & SA_RESTART, 0);
    outer_got = 0;
    raise(SIGTERM);
    assert_int_equal(outer_got, SIGTERM);
    raise(SIGINT);
    assert_int_equal(outer_got, SIGINT);
    sig_restore(&saved);
    assert_ptr_equal(current(SIGINT), SIG_DFL);
    assert_ptr_equal(current(SIGTERM), SIG_IGN);
    signal(SIGTERM, SIG_DFL);
}

static void test_nested(void **state)
{
    (void)state;
    struct sig_saved a, b;
    sig_catch(outer, &a);
    sig_catch(inner, &b);
    outer_got = inner_got = 0;
    raise(SIGINT);
    assert_int_equal(inner_got, SIGINT);
    assert_int_equal(outer_got, 0);
    sig_restore(&b);
    assert_ptr_equal(current(SIGINT), outer);
    raise(SIGTERM);
    assert_int_equal(outer_got, SIGTERM);
    sig_restore(&a);
    assert_ptr_equal(current(SIGINT), SIG_DFL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_catch_and_restore),
        cmocka_unit_test(test_nested),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
