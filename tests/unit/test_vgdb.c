/* Unit tests of src/bench/vgdb: valgrind's thread number of an OS thread read from the text of
 * `vgdb v.info scheduler` (as valgrind 3.19 prints it), and a valgrind that is not there. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bench/vgdb.h"

static const char sched[] =
    "sending command v.info scheduler to pid 23803\n"
    "\n"
    "host stacktrace:\n"
    "==23803==    at 0x58020C4A: ??? (in /usr/libexec/valgrind/callgrind-amd64-linux)\n"
    "\n"
    "sched status:\n"
    "  running_tid=0\n"
    "\n"
    "Thread 1: status = VgTs_WaitSys syscall 7 (lwpid 23803)\n"
    "==23803==    at 0x537426F: poll (poll.c:29)\n"
    "client stack range: [0x1FFEFF4000 0x1FFF000FFF] client SP: 0x1FFEFFFD30\n"
    "Thread 2: status = VgTs_WaitSys syscall 202 (lwpid 23846)\n"
    "Thread 14: status = VgTs_WaitSys syscall 202 (lwpid 26553)\n"
    "==23803==    by 0x53011F4: start_thread (pthread_create.c:442)\n";

/* Each OS thread to its number; a thread valgrind does not run, a lwpid that only prefixes
 * another or a number in a stack line: 0. */
static void test_thread_of(void **state)
{
    (void)state;
    assert_int_equal(vgdb_thread_of(sched, 23803), 1);
    assert_int_equal(vgdb_thread_of(sched, 23846), 2);
    assert_int_equal(vgdb_thread_of(sched, 26553), 14);
    assert_int_equal(vgdb_thread_of(sched, 2655), 0);
    assert_int_equal(vgdb_thread_of(sched, 442), 0);
    assert_int_equal(vgdb_thread_of(sched, 99999), 0);
    assert_int_equal(vgdb_thread_of("", 1), 0);
    assert_int_equal(vgdb_thread_of("Thread 3: status = VgTs_Runnable\n(lwpid 5)\n", 5), 0);
}

/* No valgrind under the prefix: -1 (with a message), never a made-up number. */
static void test_no_valgrind(void **state)
{
    (void)state;
    int64_t os[1] = { 1 };
    int out[1] = { 7 };
    assert_int_equal(vgdb_threads("/nonexistent/pgolab-test/vgdb", 0, os, 1, out), -1);
    assert_int_equal(vgdb_command("/nonexistent/pgolab-test/vgdb", 0, "zero"), -1);
}

/* A thread's process: its thread group (this test's main thread: this process); 0 when no
 * such thread can be read. */
static void test_process_of(void **state)
{
    (void)state;
    assert_int_equal(vgdb_process_of((int64_t)syscall(SYS_gettid)), (long)getpid());
    assert_int_equal(vgdb_process_of(0), 0);
    assert_int_equal(vgdb_process_of(-5), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_thread_of),
        cmocka_unit_test(test_no_valgrind),
        cmocka_unit_test(test_process_of),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
