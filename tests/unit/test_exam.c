/* Unit tests of src/pgo/profile_functions.c and src/pgo/exam.c: two real GCC profiles of one
 * small instrumented program (built and run here, read with gcov-dump): a "training" run that
 * never calls insert_path(), an "exam" run that calls it most; the exam's hottest functions,
 * named from the notes, against the training: insert_path is cold, the shared function is
 * not, and the counts per transaction are the counts over the transactions. Plus the parsers
 * on fixed tool output (gcov-dump -l, a .gcno dump, llvm-profdata show), identities found
 * across lists, C++ names demangled and cut, and the transactions of a bench log. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "pgo/exam.h"
#include "pgo/profile_functions.h"
#include "toolchain/toolchain.h"
#include "util/fs.h"
#include "util/strbuf.h"
#include "util/subprocess.h"
#include "util/util.h"

#define UNIT_TMPDIR_TEMPLATE "/tmp/pgolab-exam.XXXXXX"
#include "unit_helpers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* select_path() always runs; insert_path() only with an argument, and then more. */
static const char prog_c[] =
    "#include <stdio.h>\n"
    "__attribute__((noinline)) int select_path(int x) { int s = 0; for (int i = 0; i < x; i++)"
    " s += i % 3 ? i : -i; return s; }\n"
    "__attribute__((noinline)) int insert_path(int x) { int s = 1; for (int i = 0; i < x; i++)"
    " s = s * 7 % 1000 + (i & 1); return s; }\n"
    "int main(int argc, char **argv) { (void)argv; int s = select_path(100);"
    " if (argc > 1) s += insert_path(5000); printf(\"%d\\n\", s); return 0; }\n";

static void test_gcc_exam(void **state)
{
    (void)state;
    char *build = xasprintf("%s/build", tmpdir), *prof = xasprintf("%s/prof", tmpdir);
    char *train = xasprintf("%s/train", tmpdir), *exam = xasprintf("%s/exam", tmpdir);
    assert_int_equal(mkdir_p(build), 0);
    char *src = xasprintf("%s/prog.c", build);
    assert_int_equal(stamp_write(src, prog_c), 0);
    char *gen = xasprintf("-fprofile-generate=%s", prof);
    char *prefix = xasprintf("-fprofile-prefix-path=%s", build);
    const char *cc[] = { "gcc", "-O2", gen, prefix, "-ftest-coverage", "-c", "-o", "prog.o",
                         "prog.c", NULL };
    assert_int_equal(unit_run(cc, build), 0);
    const char *ld[] = { "gcc", gen, "-o", "prog", "prog.o", NULL };
    assert_int_equal(unit_run(ld, build), 0);
    char *exe = xasprintf("%s/prog", build);
    const char *go_train[] = { exe, NULL };
    assert_int_equal(unit_run(go_train, build), 0);
    assert_int_equal(rename(prof, train), 0);
    const char *go_exam[] = { exe, "insert", NULL };
    assert_int_equal(unit_run(go_exam, build), 0);
    assert_int_equal(rename(prof, exam), 0);

    struct cc_info ci;
    assert_int_equal(cc_probe("gcc", &ci), 0);
    struct fn_counts t = { 0 }, e = { 0 };
    assert_int_equal(fn_counts_read(&ci, train, NULL, &t), 0);
    assert_int_equal(fn_counts_read(&ci, exam, NULL, &e), 0);
    assert_int_equal(t.n, 3); /* main, select_path, insert_path */
    assert_int_equal(e.n, 3);

    const struct fn_count **top;
    int n = exam_top(&e, EXAM_TOP, &top);
    /* main's few counts are a trace (under 1/EXAM_TRACE of the exam's): left out */
    assert_int_equal(n, 2);
    assert_true(top[0]->count >= top[1]->count);
    struct fn_count *named[2] = { (struct fn_count *)top[0], (struct fn_count *)top[1] };
    assert_int_equal(fn_counts_name_gcc(&ci, build, named, 2), 0);
    fn_counts_describe(named, 2);
    assert_string_equal(top[0]->name, "insert_path"); /* 5000 iterations against 100 */
    assert_string_equal(top[0]->display, "prog:insert_path");
    assert_string_equal(top[1]->display, "prog:select_path");
    free(top);

    struct pgo_exam x = { 0 };
    exam_compare(&e, 2, &t, 4, &x);
    assert_int_equal(x.nrows, 2);
    assert_int_equal(x.ncold, 1);
    assert_string_equal(x.rows[0].function, "prog:insert_path");
    assert_true(x.rows[0].cold);
    assert_true(x.rows[0].train_per_txn == 0);
    assert_true(x.rows[0].exam_per_txn >= 5000.0 / 2);
    /* select_path ran the same in both: per transaction it is twice as much in the exam (2
     * transactions against 4) */
    int sel = 1;
    assert_string_equal(x.rows[sel].function, "prog:select_path");
    assert_false(x.rows[sel].cold);
    assert_true(x.rows[sel].train_per_txn > 0);
    assert_true(x.rows[sel].exam_per_txn == 2 * x.rows[sel].train_per_txn);
    pgo_exam_release(&x);

    /* a trainer with no transactions (the suite): raw sums */
    exam_compare(&e, 2, &t, 0, &x);
    assert_true(x.rows[sel].train_per_txn == 2 * x.rows[sel].exam_per_txn);
    pgo_exam_release(&x);

    /* without the notes: the object and the ident stand in */
    struct fn_counts e2 = { 0 };
    assert_int_equal(fn_counts_read(&ci, exam, NULL, &e2), 0);
    n = exam_top(&e2, 1, &top);
    assert_int_equal(n, 1);
    struct fn_count *one[1] = { (struct fn_count *)top[0] };
    assert_int_equal(fn_counts_name_gcc(&ci, exam, one, 1), 0);
    assert_null(top[0]->name);
    fn_counts_describe(one, 1);
    char *want = xasprintf("prog:#%lu", top[0]->ident);
    assert_string_equal(top[0]->display, want);
    free(want);
    free(top);

    fn_counts_release(&e2);
    fn_counts_release(&t);
    fn_counts_release(&e);
    cc_info_release(&ci);
    free(build);
    free(prof);
    free(train);
    free(exam);
    free(src);
    free(gen);
    free(prefix);
    free(exe);
}

static void test_parsers(void **state)
{
    (void)state;
    const char *dump =
        "/p/src#a.gcda:data:magic `gcda':version `B22*'\n"
        "/p/src#a.gcda:  a1000000:   8:OBJECT_SUMMARY runs=1, sum_max=10\n"
        "/p/src#a.gcda:  01000000:  12:FUNCTION ident=11, lineno_checksum=0x1, cfg_checksum=0x2\n"
        "/p/src#a.gcda:    01a10000:  40:COUNTERS arcs 5 counts\n"
        "/p/src#a.gcda:                   0: 1 2 3 4 \n"
        "/p/src#a.gcda:                   4: 10 \n"
        "/p/src#a.gcda:    01af0000:   8:COUNTERS time_profiler 1 counts\n"
        "/p/src#a.gcda:                   0: 99 \n"
        "/p/src#a.gcda:  01000000:  12:FUNCTION ident=12, lineno_checksum=0x3, cfg_checksum=0x4\n"
        "/p/src#a.gcda:    01a10000:  16:COUNTERS arcs 2 counts (all zero)\n"
        "/p/src#a.gcda:                   0: 0 0 \n"
        "/p/b.cc.gcda:  01000000:  12:FUNCTION ident=11, lineno_checksum=0x5, cfg_checksum=0x6\n"
        "/p/b.cc.gcda:    01a10000:  16:COUNTERS arcs 1 counts\n"
        "/p/b.cc.gcda:                   0: 7 \n";
    struct fn_counts c = { 0 };
    fn_counts_parse_gcov_dump(dump, &c);
    assert_int_equal(c.n, 3);
    assert_string_equal(c.v[0].file, "src#a.gcda");
    assert_int_equal((int)c.v[0].ident, 11);
    assert_int_equal((int)c.v[0].count, 20); /* arcs only, not the time profiler's 99 */
    assert_int_equal((int)c.v[1].count, 0);
    assert_string_equal(c.v[2].file, "b.cc.gcda");
    assert_int_equal((int)c.v[2].count, 7);
    fn_counts_sort(&c);
    struct fn_count key = { .file = "src#a.gcda", .ident = 12 };
    const struct fn_count *f = fn_counts_find(&c, &key);
    assert_non_null(f);
    assert_int_equal((int)f->count, 0);
    key.file = "b.cc.gcda";
    key.ident = 11;
    assert_int_equal((int)fn_counts_find(&c, &key)->count, 7);
    key.ident = 12;
    assert_null(fn_counts_find(&c, &key));
    fn_counts_release(&c);

    const char *gcno =
        "/b/a.gcno:  01000000:  49:FUNCTION ident=11, lineno_checksum=0x1, cfg_checksum=0x2, "
        "`main' a.c:4:5-4:138\n"
        "/b/a.gcno:  01000000:  48:FUNCTION ident=12, lineno_checksum=0x3, cfg_checksum=0x4, "
        "`_ZN3foo3barEi' a.cc:3:5-3:63\n";
    char *name = fn_counts_gcno_name(gcno, 12);
    assert_string_equal(name, "_ZN3foo3barEi");
    free(name);
    assert_null(fn_counts_gcno_name(gcno, 13));

    const char *show =
        "Counters:\n"
        "  main:\n"
        "    Hash: 0x0000000000000001\n"
        "    Counters: 2\n"
        "    Function count: 1\n"
        "    Block counts: [5]\n"
        "  heapam.c:heap_insert:\n"
        "    Hash: 0x0000000000000002\n"
        "    Counters: 3\n"
        "    Function count: 100\n"
        "    Block counts: [50, 25]\n"
        "Instrumentation level: Front-end\n"
        "Functions shown: 2\n";
    fn_counts_parse_profdata(show, &c);
    assert_int_equal(c.n, 2);
    assert_string_equal(c.v[1].name, "heapam.c:heap_insert");
    assert_int_equal((int)c.v[1].count, 175);
    assert_int_equal((int)c.v[0].count, 6);
    fn_counts_sort(&c);
    struct fn_count byname = { .name = "main" };
    assert_int_equal((int)fn_counts_find(&c, &byname)->count, 6);
    fn_counts_release(&c);
}

static void test_describe(void **state)
{
    (void)state;
    struct fn_count a = { .file = "storage#innobase#row#row0sel.cc.gcda", .ident = 3,
                          .name = xstrdup("_Z15row_search_mvccPhm") };
    struct fn_count b = { .name = xstrdup("heapam.c:heap_insert") };
    struct fn_count c = { .file = "src#backend#executor#execMain.gcda", .ident = 9 };
    struct fn_count *all[] = { &a, &b, &c };
    fn_counts_describe(all, 3);
    assert_string_equal(a.display, "row0sel:row_search_mvcc");
    assert_string_equal(b.display, "heapam.c:heap_insert");
    assert_string_equal(c.display, "execMain:#9");
    for (int i = 0; i < 3; i++) {
        free(all[i]->name);
        free(all[i]->display);
    }
}

static void test_log_transactions(void **state)
{
    (void)state;
    const char *log = "$ pgolab bench ... prepare\nCreating table 'sbtest1'...\n"
                      "$ pgolab bench ... run\n"
                      "    transactions:                        1200  (120.00 per sec.)\n"
                      "$ pgolab bench ... run\n"
                      "    transactions:                        300  (30.00 per sec.)\n";
    assert_true(exam_log_transactions(log) == 1500);
    assert_true(exam_log_transactions("nothing here") == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gcc_exam),
        cmocka_unit_test(test_parsers),
        cmocka_unit_test(test_describe),
        cmocka_unit_test(test_log_transactions),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
