/* Unit tests for util/signals.c: the caller's handler gets SIGINT, SIGTERM and SIGHUP (installed
 * without SA_RESTART), sig_restore() puts back exactly what was there (also when nested), and
 * sig_caught() remembers the signal for the code below the caller. */
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
    assert_ptr_not_equal(current(SIGINT), SIG_DFL);
    assert_ptr_not_equal(current(SIGTERM), SIG_IGN);
    assert_int_equal(sig_caught(), 0);
    sigaction(SIGINT, NULL, &sa);
    assert_int_equal(sa.sa_flags & SA_RESTART, 0);
    outer_got = 0;
    raise(SIGTERM);
    assert_int_equal(outer_got, SIGTERM);
    assert_int_equal(sig_caught(), SIGTERM);
    raise(SIGINT);
    assert_int_equal(outer_got, SIGINT);
    assert_int_equal(sig_caught(), SIGINT);
    raise(SIGHUP);
    assert_int_equal(outer_got, SIGHUP);
    sig_restore(&saved);
    assert_ptr_equal(current(SIGINT), SIG_DFL);
    assert_ptr_equal(current(SIGTERM), SIG_IGN);
    signal(SIGTERM, SIG_DFL);
    /* no catch active: nothing remembered (a later failure is a failure) */
    assert_int_equal(sig_caught(), 0);
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
    /* the inner catch's signal is still known to the outer one's code */
    assert_int_equal(sig_caught(), SIGINT);
    sig_catch(inner, &b); /* an inner catch does not forget it either */
    assert_int_equal(sig_caught(), SIGINT);
    sig_restore(&b);
    raise(SIGTERM);
    assert_int_equal(outer_got, SIGTERM);
    assert_int_equal(inner_got, SIGINT);
    sig_restore(&a);
    assert_ptr_equal(current(SIGINT), SIG_DFL);
}

/* A child's failure is the user's interrupt when the catch saw a signal, or when the child
 * died of SIGINT/SIGTERM/SIGHUP and such a signal reaches pgolab soon after; never without an
 * active catch, never for another status. */
static void test_child_interrupted(void **state)
{
    (void)state;
    struct sig_saved a;
    assert_int_equal(sig_child_interrupted(128 + SIGINT), 0); /* no catch active */
    sig_catch(outer, &a);
    assert_int_equal(sig_child_interrupted(1), 0);
    assert_int_equal(sig_child_interrupted(128 + SIGKILL), 0); /* e.g. the OOM killer */
    assert_int_equal(sig_child_interrupted(128 + SIGINT), 0);  /* 200 ms, no signal came */
    raise(SIGTERM);
    assert_int_equal(sig_child_interrupted(128 + SIGTERM), 1);
    assert_int_equal(sig_child_interrupted(1), 1); /* whatever the status, once caught */
    sig_restore(&a);
    assert_int_equal(sig_child_interrupted(128 + SIGTERM), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_catch_and_restore),
        cmocka_unit_test(test_nested),
        cmocka_unit_test(test_child_interrupted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
