/* Unit tests of src/pgo/profile_check.c: real profiles of a small program built and run here
 * (GCC -fprofile-generate -ftest-coverage read with gcov-dump; clang -fprofile-instr-generate
 * merged and read with llvm-profdata): a hot function that ran has counts and passes, a hot
 * function the run never reached (zero counts) is refused, one missing from the notes is not
 * found, and the problems that lose or mix counts are each refused: files the training's user
 * cannot write, files older than the training, profile errors in a log, an empty profile.
 * Plus the pure parts: object names of .gcda files, C++ names, the saved counts read back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "toolchain/toolchain.h"
#include <jansson.h>
#include "pgo/profile_check.h"
#include "util/fs.h"
#include "util/strbuf.h"
#include "util/subprocess.h"
#include "util/util.h"

#define UNIT_TMPDIR_TEMPLATE "/tmp/pgolab-profile-check.XXXXXX"
#include "unit_helpers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>

/* hot() runs 1000 times; cold() only with an argument (never, here). noinline keeps each its
 * own function in the profile (an inlined function's own record stays at zero). */
static const char prog_c[] =
    "#include <stdio.h>\n"
    "__attribute__((noinline)) int hot(int x) { int s = 0; for (int i = 0; i < x; i++) "
    "s += i % 3 ? i : -i; return s; }\n"
    "__attribute__((noinline)) int cold(int x) { return x > 5 ? 1 : 2; }\n"
    "int main(int argc, char **argv) { (void)argv; if (argc > 1) printf(\"%d\\n\", cold(argc));"
    " printf(\"%d\\n\", hot(1000)); return 0; }\n";

/* A GCC profile of prog in DIR/gcc: build (notes in build/), profile in prof/. */
struct gcc_fixture {
    char *dir, *build, *prof;
    struct cc_info cc;
};

static void gcc_fixture(struct gcc_fixture *f, const char *name)
{
    f->dir = xasprintf("%s/%s", tmpdir, name);
    f->build = xasprintf("%s/build", f->dir);
    f->prof = xasprintf("%s/prof", f->dir);
    assert_int_equal(mkdir_p(f->build), 0);
    assert_int_equal(mkdir_p(f->prof), 0);
    char *src = xasprintf("%s/prog.c", f->build);
    FILE *fp = fopen(src, "w");
    assert_non_null(fp);
    fputs(prog_c, fp);
    fclose(fp);
    char *gen = xasprintf("-fprofile-generate=%s", f->prof);
    char *prefix = xasprintf("-fprofile-prefix-path=%s", f->build);
    const char *cc[] = { "gcc", "-O2", gen, prefix, "-ftest-coverage", "-c", "-o", "prog.o",
                         "prog.c", NULL };
    assert_int_equal(unit_run(cc, f->build), 0);
    const char *ld[] = { "gcc", gen, "-o", "prog", "prog.o", NULL };
    assert_int_equal(unit_run(ld, f->build), 0);
    char *exe = xasprintf("%s/prog", f->build);
    const char *go[] = { exe, NULL };
    assert_int_equal(unit_run(go, f->build), 0);
    assert_int_equal(cc_probe("gcc", &f->cc), 0);
    free(exe);
    free(gen);
    free(prefix);
    free(src);
}

static void gcc_fixture_release(struct gcc_fixture *f)
{
    free(f->dir);
    free(f->build);
    free(f->prof);
    cc_info_release(&f->cc);
}

static struct profile_check_in gcc_in(const struct gcc_fixture *f, char *const *hot,
                                      char *const *logs)
{
    struct profile_check_in in = { .cc = &f->cc, .profile_dir = f->prof, .notes_dir = f->build,
                                   .hot = hot, .logs = logs, .train_uid = geteuid(),
                                   .train_start = (int64_t)time(NULL) - 60 };
    return in;
}

static void test_gcc_hot_and_cold(void **state)
{
    (void)state;
    struct gcc_fixture f;
    gcc_fixture(&f, "hotcold");
    struct profile_health h;

    char *const hot[] = { "prog:hot", "prog:main", NULL };
    struct profile_check_in in = gcc_in(&f, hot, NULL);
    assert_int_equal(profile_health_read(&in, &h), 0);
    assert_int_equal(h.files, 1);
    assert_int_equal(h.objects_counted, 1);
    assert_int_equal(h.functions, 3);          /* main, hot, cold */
    assert_int_equal(h.functions_counted, 2);  /* cold never ran */
    assert_true(h.total >= 1000);              /* hot's loop ran 1000 times */
    assert_true(h.hot[0].found && !h.hot[0].by_object);
    assert_true(h.hot[0].count >= 1000);
    assert_true(h.hot[0].count <= h.total);
    assert_true(h.hot[1].count > 0);
    assert_int_equal(profile_health_verdict(&h, "t"), 0);
    char *line = profile_health_line(&h, true);
    assert_non_null(strstr(line, "counts in 1 of 1 objects, 2 of 3 functions"));
    assert_non_null(strstr(line, "; hot "));
    free(line);
    profile_health_release(&h);

    /* a hot function with zero counts: refused */
    char *const cold[] = { "prog:hot", "prog:cold", NULL };
    in = gcc_in(&f, cold, NULL);
    assert_int_equal(profile_health_read(&in, &h), 0);
    assert_true(h.hot[1].found);
    assert_int_equal((int)h.hot[1].count, 0);
    assert_int_equal(profile_health_verdict(&h, "t"), -1);
    profile_health_release(&h);

    /* a function the notes do not have, and an object the profile does not have */
    char *const missing[] = { "prog:nosuch", NULL };
    in = gcc_in(&f, missing, NULL);
    assert_int_equal(profile_health_read(&in, &h), 0);
    assert_false(h.hot[0].found);
    assert_int_equal(profile_health_verdict(&h, "t"), -1);
    profile_health_release(&h);
    char *const noobj[] = { "other:hot", NULL };
    in = gcc_in(&f, noobj, NULL);
    assert_int_equal(profile_health_read(&in, &h), 0);
    assert_false(h.hot[0].found);
    assert_int_equal(profile_health_verdict(&h, "t"), -1);
    profile_health_release(&h);

    /* without notes: the object's count stands in, and says so */
    in = gcc_in(&f, hot, NULL);
    in.notes_dir = f.prof;
    assert_int_equal(profile_health_read(&in, &h), 0);
    assert_true(h.hot[0].found && h.hot[0].by_object);
    assert_true(h.hot[0].count == h.total);
    line = profile_health_line(&h, true);
    assert_non_null(strstr(line, "(object prog)"));
    free(line);
    profile_health_release(&h);
    gcc_fixture_release(&f);
}

static void test_gcc_lost_counts(void **state)
{
    (void)state;
    struct gcc_fixture f;
    gcc_fixture(&f, "lost");
    struct profile_health h;
    char *const hot[] = { "prog:hot", NULL };
    struct argvec files = ARGVEC_INIT;
    list_files(&files, f.prof, ".gcda");
    assert_int_equal(files.n, 1);

    /* a file the training's user cannot write (another owner, not writable for others) */
    assert_int_equal(chmod(files.v[0], 0644), 0);
    struct profile_check_in in = gcc_in(&f, hot, NULL);
    in.train_uid = geteuid() + 4242;
    assert_int_equal(profile_health_read(&in, &h), 0);
    assert_int_equal(h.foreign, 1);
    assert_int_equal(profile_health_verdict(&h, "t"), -1);
    profile_health_release(&h);
    /* the same file writable for everybody (the default ACL's effect): fine */
    assert_int_equal(chmod(files.v[0], 0666), 0);
    assert_int_equal(profile_health_read(&in, &h), 0);
    assert_int_equal(h.foreign, 0);
    assert_int_equal(profile_health_verdict(&h, "t"), 0);
    profile_health_release(&h);

    /* a file last written before the training started */
    struct timeval old[2] = { { time(NULL) - 3600, 0 }, { time(NULL) - 3600, 0 } };
    assert_int_equal(utimes(files.v[0], old), 0);
    in = gcc_in(&f, hot, NULL);
    assert_int_equal(profile_health_read(&in, &h), 0);
    assert_int_equal(h.stale, 1);
    assert_int_equal(profile_health_verdict(&h, "t"), -1);
    profile_health_release(&h);
    in.train_start = 0; /* a cached profile: not checked */
    assert_int_equal(profile_health_read(&in, &h), 0);
    assert_int_equal(profile_health_verdict(&h, "t"), 0);
    profile_health_release(&h);

    /* a profile error in a trained process's log */
    char *log = xasprintf("%s/server.log", f.dir);
    FILE *fp = fopen(log, "w");
    assert_non_null(fp);
    fprintf(fp, "LOG:  database system is ready\nprofiling:%s:Cannot open\nLOG:  shut down\n",
            files.v[0]);
    fclose(fp);
    char *const logs[] = { log, NULL };
    in = gcc_in(&f, hot, logs);
    in.train_start = 0;
    assert_int_equal(profile_health_read(&in, &h), 0);
    assert_int_equal(h.log_errors, 1);
    assert_non_null(strstr(h.log_error, "Cannot open"));
    assert_int_equal(profile_health_verdict(&h, "t"), -1);
    profile_health_release(&h);

    /* an empty profile (no counts at all) */
    argvec_clear(&files);
    assert_int_equal(remove_tree(f.prof), 0);
    assert_int_equal(mkdir_p(f.prof), 0);
    in = gcc_in(&f, NULL, NULL);
    assert_int_equal(profile_health_read(&in, &h), 0);
    assert_int_equal(h.files, 0);
    assert_int_equal(profile_health_verdict(&h, "t"), -1);
    profile_health_release(&h);
    free(log);
    gcc_fixture_release(&f);
}

static void test_clang(void **state)
{
    (void)state;
    struct cc_info cc;
    char *clang = find_in_path("clang");
    if (!clang)
        UNIT_SKIP("clang (make deps installs it)", NULL);
    free(clang);
    assert_int_equal(cc_probe("clang", &cc), 0);
    assert_non_null(cc.profdata);
    char *dir = xasprintf("%s/clang", tmpdir);
    assert_int_equal(mkdir_p(dir), 0);
    char *src = xasprintf("%s/prog.c", dir);
    FILE *fp = fopen(src, "w");
    assert_non_null(fp);
    fputs(prog_c, fp);
    fclose(fp);
    char *gen = xasprintf("-fprofile-instr-generate=%s/%%p.profraw", dir);
    const char *cmd[] = { "clang", "-O2", gen, "-o", "prog", "prog.c", NULL };
    assert_int_equal(unit_run(cmd, dir), 0);
    char *exe = xasprintf("%s/prog", dir);
    const char *go[] = { exe, NULL };
    assert_int_equal(unit_run(go, dir), 0);
    char *profdata = xasprintf("%s/prog.profdata", dir);
    struct profile_info info;
    assert_int_equal(profile_collect(&cc, dir, profdata, &info), 0);
    profile_info_release(&info);

    struct profile_health h;
    char *const hot[] = { "prog:hot", "cold", NULL };
    struct profile_check_in in = { .cc = &cc, .profile_dir = dir, .profdata = profdata, .hot = hot,
                                   .train_uid = geteuid() };
    assert_int_equal(profile_health_read(&in, &h), 0);
    assert_int_equal(h.files, 1);
    assert_int_equal(h.functions, 3);
    assert_int_equal(h.functions_counted, 2);
    assert_true(h.hot[0].found);
    assert_true(h.hot[0].count >= 1000);
    assert_true(h.hot[1].found);
    assert_int_equal((int)h.hot[1].count, 0);
    assert_int_equal(profile_health_verdict(&h, "t"), -1); /* cold: zero */
    profile_health_release(&h);
    free(dir);
    free(src);
    free(gen);
    free(exe);
    free(profdata);
    cc_info_release(&cc);
}

static void test_names_and_save(void **state)
{
    (void)state;
    assert_true(gcda_is_object("/p/src#backend#executor#execExprInterp.gcda", "execExprInterp"));
    assert_false(gcda_is_object("/p/src#backend#executor#execExpr.gcda", "execExprInterp"));
    assert_true(gcda_is_object("/p/libsqlite3.so-sqlite3.gcda", "sqlite3"));
    assert_true(gcda_is_object("/p/sql#CMakeFiles#sql.dir#sql_parse.cc.gcda", "sql_parse"));
    assert_false(gcda_is_object("/p/sql_parse.cc.gcno", "sql_parse"));
    const char *notes =
        "x.gcno:  01000000:  49:FUNCTION ident=11, lineno_checksum=0x1, cfg_checksum=0x2, "
        "`_Z16dispatch_command19enum_server_commandP3THDPcjb' sql_parse.cc:1:1-9:1\n"
        "x.gcno:  01000000:  49:FUNCTION ident=12, lineno_checksum=0x1, cfg_checksum=0x2, "
        "`dispatch' sql_parse.cc:1:1-9:1\n";
    assert_int_equal((int)gcno_ident(notes, "dispatch_command"), 11);
    assert_int_equal((int)gcno_ident(notes, "dispatch"), 12);
    assert_int_equal((int)gcno_ident(notes, "command"), 0);

    struct profile_health h = { .files = 5, .objects_counted = 4, .functions = 90,
                                .functions_counted = 40, .total = 123456789ULL };
    struct profile_hot hot = { .spec = "a:f", .object = "a", .function = "f", .found = true,
                               .count = 77 };
    h.hot = &hot;
    h.nhot = 1;
    json_t *j = profile_health_json(&h);
    assert_int_equal((int)json_integer_value(json_object_get(j, "files")), 5);
    assert_int_equal((int)json_integer_value(json_object_get(j, "functions_counted")), 40);
    assert_true(json_integer_value(json_object_get(j, "counts")) == 123456789LL);
    assert_int_equal((int)json_integer_value(json_object_get(json_object_get(j, "hot"), "a:f")), 77);
    json_decref(j);
    char *path = xasprintf("%s/saved.health", tmpdir);
    assert_int_equal(profile_health_save(&h, path), 0);
    struct profile_health back;
    assert_int_equal(profile_health_load(&back, path), 0);
    assert_int_equal(back.files, 5);
    assert_int_equal(back.objects_counted, 4);
    assert_int_equal((int)back.functions_counted, 40);
    assert_true(back.total == 123456789ULL);
    assert_int_equal(back.nhot, 1);
    assert_string_equal(back.hot[0].function, "f");
    assert_string_equal(back.hot[0].object, "a");
    assert_int_equal((int)back.hot[0].count, 77);
    profile_health_release(&back);
    char *bad = xasprintf("%s/nosuch.health", tmpdir);
    assert_int_equal(profile_health_load(&back, bad), -1);
    free(bad);
    free(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gcc_hot_and_cold),
        cmocka_unit_test(test_gcc_lost_counts),
        cmocka_unit_test(test_clang),
        cmocka_unit_test(test_names_and_save),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
