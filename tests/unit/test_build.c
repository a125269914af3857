/* Unit tests for src/build: the PGO flag table per compiler and phase,
 * compiler-version parsing, the SQLite version, stamps and build skipping,
 * log and profile checks, and (when gcc is present) a tiny real gcc PGO round trip. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "toolchain/toolchain.h"
#include "pgo/sqlite_bench.h"
#include "util/strbuf.h"
#include "util/subprocess.h"
#include "util/util.h"
#include "unit_helpers.h"  /* UNIT_SKIP */

/* ---- test-local helpers ------------------------------------------------------------- */

/* Evaluate an expression expected to fail with stderr muted, so its (expected) FATAL
 * message does not clutter the test output; cmocka's own failure reports stay visible. */
static int t_saved_stderr = -1;

static void t_mute(void)
{
    fflush(stderr);
    t_saved_stderr = dup(STDERR_FILENO);
    int fd = open("/dev/null", O_WRONLY);
    dup2(fd, STDERR_FILENO);
    close(fd);
}

static int t_unmute(int value)
{
    fflush(stderr);
    dup2(t_saved_stderr, STDERR_FILENO);
    close(t_saved_stderr);
    return value;
}

#define T_QUIET(expr) (t_mute(), t_unmute(expr))

static int count_newlines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

static char *t_tmpdir(void)
{
    char tmpl[] = "/tmp/pgolab-test-build-XXXXXX";
    char *d = mkdtemp(tmpl);
    assert_non_null(d);
    return xstrdup(d);
}

static void t_write(const char *dir, const char *rel, const char *text)
{
    char *p = path_join(dir, rel);
    char *slash = strrchr(p, '/');
    *slash = '\0';
    assert_int_equal(mkdir_p(p), 0);
    *slash = '/';
    assert_int_equal(stamp_write(p, text), 0);
    free(p);
}

static bool t_has(const struct argvec *a, const char *s)
{
    for (int i = 0; i < a->n; i++)
        if (!strcmp(a->v[i], s))
            return true;
    return false;
}

static bool t_has_prefix(const struct argvec *a, const char *prefix)
{
    for (int i = 0; i < a->n; i++)
        if (!strncmp(a->v[i], prefix, strlen(prefix)))
            return true;
    return false;
}

static const struct pgo_paths t_paths = { "/w/profile", "/w/sqlite.profdata", "/w/build" };

/* ---- flag table --------------------------------------------------------------------- */

static void test_baseline_has_no_pgo_flags(void **state)
{
    (void)state;
    for (int cc = CC_GCC; cc <= CC_CLANG; cc++) {
        struct argvec a = ARGVEC_INIT;
        assert_int_equal(pgo_phase_flags(&a, (enum cc_family)cc, BUILD_BASELINE, &t_paths), 0);
        assert_int_equal(a.n, 0);
        /* baseline needs no paths at all */
        assert_int_equal(pgo_phase_flags(&a, (enum cc_family)cc, BUILD_BASELINE, NULL), 0);
        argvec_clear(&a);
    }
}

static void test_gcc_flags(void **state)
{
    (void)state;
    struct argvec gen = ARGVEC_INIT, use = ARGVEC_INIT;
    assert_int_equal(pgo_phase_flags(&gen, CC_GCC, BUILD_INSTRUMENTED, &t_paths), 0);
    assert_true(t_has(&gen, "-fprofile-generate=/w/profile"));
    assert_true(t_has(&gen, "-fprofile-update=prefer-atomic"));
    assert_true(t_has(&gen, "-ftest-coverage"));
    assert_true(t_has(&gen, "-fprofile-prefix-path=/w/build"));
    assert_false(t_has_prefix(&gen, "-fprofile-use"));

    assert_int_equal(pgo_phase_flags(&use, CC_GCC, BUILD_PGO, &t_paths), 0);
    assert_true(t_has(&use, "-fprofile-use=/w/profile"));
    assert_true(t_has(&use, "-fprofile-correction"));
    assert_true(t_has(&use, "-fopt-info-note-ipa")); /* its corrections are counted */
    assert_true(t_has(&use, "-fprofile-prefix-path=/w/build"));
    assert_true(t_has(&use, "-Werror=missing-profile"));
    assert_true(t_has(&use, "-Werror=coverage-mismatch"));
    assert_false(t_has_prefix(&use, "-fprofile-generate"));
    argvec_clear(&gen);
    argvec_clear(&use);
}

static void test_clang_flags(void **state)
{
    (void)state;
    struct argvec gen = ARGVEC_INIT, use = ARGVEC_INIT;
    assert_int_equal(pgo_phase_flags(&gen, CC_CLANG, BUILD_INSTRUMENTED, &t_paths), 0);
    assert_true(t_has(&gen, "-fprofile-instr-generate=/w/profile/%p-%m.profraw"));
    assert_false(t_has_prefix(&gen, "-fprofile-instr-use"));

    assert_int_equal(pgo_phase_flags(&use, CC_CLANG, BUILD_PGO, &t_paths), 0);
    assert_true(t_has(&use, "-fprofile-instr-use=/w/sqlite.profdata"));
    assert_true(t_has(&use, "-Werror=profile-instr-missing"));
    assert_true(t_has(&use, "-Werror=profile-instr-out-of-date"));
    assert_true(t_has(&use, "-Werror=profile-instr-unprofiled"));
    assert_false(t_has_prefix(&use, "-fprofile-instr-generate"));
    argvec_clear(&gen);
    argvec_clear(&use);
}

static void test_flags_need_absolute_paths(void **state)
{
    (void)state;
    struct argvec a = ARGVEC_INIT;
    struct pgo_paths rel = { "profile", NULL, "/w/build" };
    assert_int_equal(T_QUIET(pgo_phase_flags(&a, CC_GCC, BUILD_INSTRUMENTED, &rel)), -1);
    argvec_clear(&a);
    struct pgo_paths no_profdata = { "/w/profile", NULL, "/w/build" };
    assert_int_equal(T_QUIET(pgo_phase_flags(&a, CC_CLANG, BUILD_PGO, &no_profdata)), -1);
    argvec_clear(&a);
    assert_int_equal(T_QUIET(pgo_phase_flags(&a, CC_GCC, BUILD_PGO, NULL)), -1);
    argvec_clear(&a);
}

static void test_phase_and_family_names(void **state)
{
    (void)state;
    assert_string_equal(build_phase_name(BUILD_BASELINE), "baseline");
    assert_string_equal(build_phase_name(BUILD_INSTRUMENTED), "instrumented");
    assert_string_equal(build_phase_name(BUILD_PGO), "pgo");
    assert_string_equal(cc_family_name(CC_GCC), "gcc");
    assert_string_equal(cc_family_name(CC_CLANG), "clang");
    assert_non_null(pgo_flag_templates(CC_CLANG, BUILD_PGO));
}

/* ---- compilers ---------------------------------------------------------------------- */

static void test_cc_macro_parsing(void **state)
{
    (void)state;
    const char *gcc = "#define __STDC__ 1\n#define __GNUC__ 12\n#define __GNUC_MINOR__ 2\n";
    const char *clang = "#define __GNUC__ 4\n#define __clang__ 1\n#define __clang_major__ 14\n";
    assert_int_equal(cc_family_from_macros(gcc), CC_GCC);
    assert_int_equal(cc_family_from_macros(clang), CC_CLANG);
    assert_int_equal(cc_family_from_macros("#define __TINYC__ 927\n"), -1);
    assert_int_equal(cc_family_from_macros("#define __GNUC_MINOR__ 2\n"), -1);
    assert_int_equal(cc_family_from_macros(""), -1);
    assert_int_equal(cc_major_from_macros(gcc), 12);
    assert_int_equal(cc_major_from_macros(clang), 14);
    assert_int_equal(cc_major_from_macros(""), 0);
}

static void test_cc_probe_rejects_non_compiler(void **state)
{
    (void)state;
    struct cc_info info;
    /* `true` runs and prints nothing: neither gcc nor clang */
    assert_int_equal(T_QUIET(cc_probe("true", &info)), -1);
    assert_int_equal(T_QUIET(cc_probe("/nonexistent/cc", &info)), -1);
    char *gcc = find_in_path("gcc");
    if (gcc) {
        assert_int_equal(cc_probe("gcc", &info), 0);
        assert_int_equal(info.family, CC_GCC);
        assert_true(info.major > 0);
        assert_non_null(strstr(info.version, "gcc"));
        assert_null(info.profdata);
        cc_info_release(&info);
        free(gcc);
    }
    char *clang = find_in_path("clang");
    if (clang) {
        assert_int_equal(cc_probe("clang", &info), 0);
        assert_int_equal(info.family, CC_CLANG);
        assert_true(info.major > 0);
        assert_non_null(info.profdata);
        cc_info_release(&info);
        free(clang);
    }
}

static void test_version_from_header(void **state)
{
    (void)state;
    char *v = sqlite_version_from_header("x\n#define SQLITE_VERSION        \"3.40.1\"\n");
    assert_string_equal(v, "3.40.1");
    free(v);
    assert_null(sqlite_version_from_header("#define SQLITE_VERSION_NUMBER 3040001\n"));
    assert_null(sqlite_version_from_header(NULL));
}

/* ---- stamps and build skipping ------------------------------------------------------ */

static void test_stamps(void **state)
{
    (void)state;
    char *d = t_tmpdir();
    char *p = path_join(d, "stamp");
    assert_int_equal(stamp_matches(p, "a\n"), 0);
    assert_int_equal(stamp_write(p, "command: gcc -O2\nsource-sha256: 1\n"), 0);
    assert_int_equal(stamp_matches(p, "command: gcc -O2\nsource-sha256: 1\n"), 1);
    assert_int_equal(stamp_matches(p, "command: gcc -O2\nsource-sha256: 2\n"), 0);
    assert_int_equal(stamp_matches(p, "command: gcc -O2\n"), 0);
    remove_tree(d);
    free(p);
    free(d);
}

/* A tree's file list names what an edit changed: one file edited, one added, one removed,
 * each by its path; the same tree twice: nothing. */
static void test_source_diff(void **state)
{
    (void)state;
    char *d = t_tmpdir();
    char *a = path_join(d, "a.c"), *b = path_join(d, "b.c"), *c = path_join(d, "c.c");
    assert_int_equal(stamp_write(a, "int a;\n"), 0);
    assert_int_equal(stamp_write(b, "int b;\n"), 0);
    char *l1 = NULL, *l2 = NULL, *l3 = NULL;
    char *h1 = tree_sha256_list(d, &l1);
    assert_non_null(h1);
    assert_non_null(strstr(l1, "  a.c\n"));
    assert_null(source_diff(l1, l1));
    assert_int_equal(stamp_write(a, "int a2;\n"), 0); /* edited */
    char *h2 = tree_sha256_list(d, &l2);
    assert_string_not_equal(h1, h2);
    char *why = source_diff(l1, l2);
    assert_string_equal(why, "1 file changed (edited: a.c)");
    free(why);
    unlink(b);                                    /* removed */
    assert_int_equal(stamp_write(c, "int c;\n"), 0); /* added */
    char *h3 = tree_sha256_list(d, &l3);
    why = source_diff(l1, l3);
    assert_string_equal(why, "3 files changed (edited: a.c; added: c.c; removed: b.c)");
    free(why);
    char *plain = tree_sha256(d);
    assert_string_equal(plain, h3); /* the list does not change the hash */
    free(plain);
    /* more than five of a kind: five named, the rest counted */
    why = source_diff("", "1  f1\n2  f2\n3  f3\n4  f4\n5  f5\n6  f6\n7  f7\n");
    assert_string_equal(why, "7 files changed (added: f1, f2, f3, f4, f5 and 2 more)");
    free(why);
    remove_tree(d);
    free(h1), free(h2), free(h3), free(l1), free(l2), free(l3);
    free(a), free(b), free(c), free(d);
}

/* The first key in which two stamps differ, a key only one has included; none without a
 * stamp or with the same text. */
static void test_stamp_first_change(void **state)
{
    (void)state;
    char *d = t_tmpdir();
    char *p = path_join(d, "stamp");
    assert_null(stamp_first_change(p, "a: 1\n"));
    assert_int_equal(stamp_write(p, "a: 1\nb: 2\nc: 3\n"), 0);
    assert_null(stamp_first_change(p, "a: 1\nb: 2\nc: 3\n"));
    char *k = stamp_first_change(p, "a: 1\nb: 9\nc: 9\n");
    assert_string_equal(k, "b");
    free(k);
    k = stamp_first_change(p, "a: 1\nb: 2\nc: 3\nd: 4\n");
    assert_string_equal(k, "d");
    free(k);
    k = stamp_first_change(p, "a: 1\nb: 2\n");
    assert_string_equal(k, "c");
    free(k);
    remove_tree(d);
    free(p);
    free(d);
}

static void test_path_key(void **state)
{
    (void)state;
    char *a = path_key("/a/b"), *a2 = path_key("/a/b"), *b = path_key("/a/c");
    assert_int_equal(strlen(a), 16);
    assert_string_equal(a, a2);
    assert_string_not_equal(a, b);
    free(a);
    free(a2);
    free(b);
}

static void test_lib_build_skip_and_rebuild(void **state)
{
    (void)state;
    char *d = t_tmpdir();
    char *dir = path_join(d, "b");
    /* a stand-in compiler: writes the output and counts its runs in a side file */
    const char *argv[] = { "sh", "-c", "echo lib > out.so; echo run >> ../runs", NULL };
    char *runs = path_join(d, "runs");
    struct lib_build b = { .name = "baseline", .phase = BUILD_BASELINE, .dir = dir,
                           .output = "out.so", .argv = argv, .stamp_extra = "source-sha256: 1" };

    assert_int_equal(lib_build_run(&b), 0);
    assert_false(b.skipped);
    assert_null(b.why); /* a first build needs no reason */
    assert_non_null(b.sha256);
    assert_int_equal(strlen(b.sha256), 64);
    assert_true(is_file(b.lib));
    assert_int_equal(file_size(runs), 4);

    assert_int_equal(lib_build_run(&b), 0); /* same stamp, output there: skipped */
    assert_true(b.skipped);
    assert_int_equal(file_size(runs), 4);

    b.stamp_extra = "source-sha256: 2"; /* input changed: rebuilt, and why */
    assert_int_equal(lib_build_run(&b), 0);
    assert_false(b.skipped);
    assert_int_equal(file_size(runs), 8);
    assert_string_equal(b.why, "the source changed since the cached build");

    unlink(b.lib); /* output gone: rebuilt */
    assert_int_equal(lib_build_run(&b), 0);
    assert_false(b.skipped);
    assert_non_null(strstr(b.why, "out.so was removed"));

    b.stamp_extra = "source-sha256: 2\ncompiler: gcc 13"; /* a line more */
    assert_int_equal(lib_build_run(&b), 0);
    assert_string_equal(b.why, "the compiler changed since the cached build");

    b.force = true;
    assert_int_equal(lib_build_run(&b), 0);
    assert_false(b.skipped);
    assert_string_equal(b.why, "--rebuild was given");
    assert_int_equal(file_size(runs), 20);

    /* a failing command fails the build and leaves no stamp behind */
    const char *bad[] = { "sh", "-c", "echo oops; exit 3", NULL };
    b.argv = bad;
    b.force = false;
    assert_int_equal(T_QUIET(lib_build_run(&b)), -1);
    char *stamp = path_join(dir, "stamp");
    assert_false(is_file(stamp));
    free(stamp);

    /* a pgo build whose log says the profile was missing fails even with exit 0 */
    const char *noprof[] = { "sh", "-c",
                             "echo \"warning: 'x.gcda' profile count data file not found\"; "
                             "echo lib > out.so", NULL };
    b.argv = noprof;
    b.phase = BUILD_PGO;
    b.name = "pgo";
    assert_int_equal(T_QUIET(lib_build_run(&b)), -1);
    assert_false(is_file(b.lib));

    lib_build_release(&b);
    remove_tree(d);
    free(runs);
    free(dir);
    free(d);
}

static void test_lib_build_parallel(void **state)
{
    (void)state;
    char *d = t_tmpdir();
    char *d1 = path_join(d, "one"), *d2 = path_join(d, "two");
    const char *ok[] = { "sh", "-c", "echo lib > out.so", NULL };
    const char *bad[] = { "sh", "-c", "exit 1", NULL };
    struct lib_build b[2] = {
        { .name = "baseline", .dir = d1, .output = "out.so", .argv = ok },
        { .name = "instrumented", .dir = d2, .output = "out.so", .argv = ok },
    };
    assert_int_equal(lib_build_parallel(b, 2, 2, "test"), 0);
    assert_int_equal(b[0].status, 0);
    assert_int_equal(b[1].status, 0);
    b[1].argv = bad;
    b[1].force = true;
    assert_int_equal(T_QUIET(lib_build_parallel(b, 2, 2, "test")), -1);
    assert_int_equal(b[0].status, 0);
    assert_true(b[0].skipped);
    assert_int_equal(T_QUIET(b[1].status), -1);
    lib_build_release(&b[0]);
    lib_build_release(&b[1]);
    remove_tree(d);
    free(d1);
    free(d2);
    free(d);
}

/* A stop flag set before the compiler started (the interrupt came between lib_build_run's
 * check of sig_caught() and the fork): the compiler is stopped, not run to its end. */
static void test_lib_build_stop_before_start(void **state)
{
    (void)state;
    char *d = t_tmpdir();
    char *dir = path_join(d, "b");
    static volatile sig_atomic_t stop = 1;
    const char *slow[] = { "sh", "-c", "sleep 3; echo lib > out.so", NULL };
    struct lib_build b = { .name = "baseline", .phase = BUILD_BASELINE, .dir = dir,
                           .output = "out.so", .argv = slow, .stop = &stop };
    assert_int_equal(T_QUIET(lib_build_run(&b)), -1);
    assert_false(is_file(b.lib));
    char *stamp = path_join(dir, "stamp");
    assert_false(is_file(stamp));
    free(stamp);
    const char *quick[] = { "sh", "-c", "echo lib > out.so", NULL };
    b.argv = quick;
    stop = 0; /* not set: the build runs to its end */
    assert_int_equal(lib_build_run(&b), 0);
    assert_true(is_file(b.lib));
    lib_build_release(&b);
    remove_tree(d);
    free(dir);
    free(d);
}

/* ---- log and profile checks --------------------------------------------------------- */

static void test_pgo_log_problem(void **state)
{
    (void)state;
    /* the echoed command carries -Werror=... flags: not a problem */
    assert_null(pgo_log_problem("$ cd /b && gcc -Werror=coverage-mismatch -Werror=missing-profile "
                                "-fprofile-use=/p x.c\n"));
    assert_null(pgo_log_problem(""));
    assert_null(pgo_log_problem(NULL));
    assert_non_null(pgo_log_problem("$ gcc\nx.c:1:1: error: '/p/#a#b.gcda' profile count data "
                                    "file not found [-Werror=missing-profile]\n"));
    assert_non_null(pgo_log_problem("x.c: error: the control flow of function 'f' does not "
                                    "match its profile data (counter 'arcs')\n"));
    assert_non_null(pgo_log_problem("warning: no profile data available for file \"x.c\" "
                                    "[-Wprofile-instr-unprofiled]\n"));
    assert_non_null(pgo_log_problem("x.c: warning: function control flow change detected (hash "
                                    "mismatch) f Hash = 1 [-Wbackend-plugin]\n"));
}

static void test_profile_collect_gcc(void **state)
{
    (void)state;
    char *d = t_tmpdir();
    struct cc_info cc = { .cc = "gcc", .family = CC_GCC };
    struct profile_info info;

    assert_int_equal(T_QUIET(profile_collect(&cc, d, NULL, &info)), -1); /* nothing there */
    profile_info_release(&info);
    t_write(d, "#w#lib.so-sqlite3.gcda", "");
    assert_int_equal(T_QUIET(profile_collect(&cc, d, NULL, &info)), -1); /* empty file only */
    profile_info_release(&info);
    t_write(d, "#w#lib.so-sqlite3.gcda", "counts");
    t_write(d, "note.txt", "not profile data");
    assert_int_equal(profile_collect(&cc, d, NULL, &info), 0);
    assert_int_equal(info.files, 1);
    assert_int_equal(info.bytes, 6);
    assert_non_null(info.id);
    char *first = xstrdup(info.id);
    profile_info_release(&info);
    t_write(d, "#w#lib.so-sqlite3.gcda", "other counts");
    assert_int_equal(profile_collect(&cc, d, NULL, &info), 0);
    assert_string_not_equal(first, info.id); /* the id follows the data */
    profile_info_release(&info);
    free(first);

    assert_int_equal(profile_wipe(d), 0);
    assert_true(is_dir(d));
    assert_int_equal(T_QUIET(profile_collect(&cc, d, NULL, &info)), -1);
    profile_info_release(&info);
    remove_tree(d);
    free(d);
}

/* A clang raw profile header: the magic, then the version word (flags in the high bits). */
static void t_profraw(const char *dir, const char *rel, uint64_t version)
{
    unsigned char h[512] = { 0 }; /* a header llvm-profdata reads up to the version */
    uint64_t words[2] = { PROFRAW_MAGIC_64, version };
    for (int w = 0; w < 2; w++)
        for (int i = 0; i < 8; i++)
            h[8 * w + i] = (unsigned char)(words[w] >> (8 * i));
    char *p = path_join(dir, rel);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(h, 1, sizeof(h), f), sizeof(h));
    fclose(f);
    free(p);
}

/* profraw_version() reads the format version; a raw profile of another format than the
 * llvm-profdata's is refused in one line naming both versions. */
static void test_profraw_version(void **state)
{
    (void)state;
    char *d = t_tmpdir();
    t_profraw(d, "a.profraw", 8 | (1ULL << 56)); /* a variant flag: not the version */
    t_profraw(d, "b.profraw", 99);
    t_write(d, "c.profraw", "not a raw profile at all");
    char *a = path_join(d, "a.profraw"), *b = path_join(d, "b.profraw"),
         *c = path_join(d, "c.profraw"), *none = path_join(d, "none.profraw");
    assert_int_equal(profraw_version(a), 8);
    assert_int_equal(profraw_version(b), 99);
    assert_int_equal(profraw_version(c), -1);
    assert_int_equal(profraw_version(none), -1);
    unlink(a);
    unlink(c);

    /* clang (scripts/install-deps.sh installs it and llvm): its llvm-profdata cannot merge
     * format 99 */
    struct cc_info cc;
    assert_int_equal(cc_probe("clang", &cc), 0);
    assert_non_null(cc.profdata);
    char *profdata = path_join(d, "merged.profdata"), *err = path_join(d, "err.txt");
    struct profile_info info;
    fflush(stderr);
    int saved = dup(2), fd = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(saved >= 0 && fd >= 0);
    dup2(fd, 2);
    close(fd);
    int rc = profile_collect(&cc, d, profdata, &info);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    assert_int_equal(rc, -1);
    struct strbuf sb = STRBUF_INIT;
    strbuf_read_file(&sb, err);
    if (!strstr(sb.buf, "b.profraw has format version 99, which ") ||
        !strstr(sb.buf, "LLVM version ") || !strstr(sb.buf, "same LLVM release"))
        fail_msg("no version mismatch line in: %s", sb.buf);
    assert_int_equal(count_newlines(sb.buf), 1); /* one line */
    strbuf_release(&sb);
    profile_info_release(&info);
    cc_info_release(&cc);
    free(a);
    free(b);
    free(c);
    free(none);
    free(profdata);
    free(err);
    remove_tree(d);
    free(d);
}

static void test_profdata_max_count(void **state)
{
    (void)state;
    assert_int_equal(profdata_max_count("Instrumentation level: Front-end\nTotal functions: 12\n"
                                        "Maximum function count: 123456\n"), 123456);
    assert_int_equal(profdata_max_count("Maximum function count: 0\n"), 0);
    assert_int_equal(profdata_max_count("nothing"), -1);
}

static void test_parse_verify(void **state)
{
    (void)state;
    char *sum;
    long long rows;
    assert_int_equal(sqlite_parse_verify("{\"checksum\":\"d250c64a0794aae4\",\"rows\":29590,"
                                         "\"library\":{}}\n", &sum, &rows), 0);
    assert_string_equal(sum, "d250c64a0794aae4");
    assert_int_equal(rows, 29590);
    free(sum);
    assert_int_equal(T_QUIET(sqlite_parse_verify("{\"rows\":1}", &sum, &rows)), -1);
    assert_null(sum);
    assert_int_equal(T_QUIET(sqlite_parse_verify("{\"checksum\":\"\",\"rows\":1}", &sum, &rows)), -1);
    assert_int_equal(T_QUIET(sqlite_parse_verify("not json", &sum, &rows)), -1);
    assert_int_equal(T_QUIET(sqlite_parse_verify("", &sum, &rows)), -1);
}

/* ---- a real gcc round trip on a tiny library ---------------------------------------- */

static const char t_lib_src[] =
    "int work(int n) { int s = 0; for (int i = 0; i < n; i++) s += (i % 3) ? i : -i; "
    "return s; }\n";

static int t_lib_argv(struct argvec *a, enum build_phase ph, const struct pgo_paths *paths,
                      const char *src)
{
    argvec_push(a, "gcc");
    argvec_push(a, "-O2");
    argvec_push(a, "-fPIC");
    argvec_push(a, "-shared");
    if (pgo_phase_flags(a, CC_GCC, ph, paths) < 0)
        return -1;
    argvec_push(a, "-o");
    argvec_push(a, "libt.so");
    argvec_push(a, src);
    return 0;
}

static void test_gcc_pgo_round_trip(void **state)
{
    (void)state;
    char *gcc = find_in_path("gcc");
    if (!gcc)
        UNIT_SKIP("gcc on PATH (make deps installs build-essential)", NULL);
    free(gcc);
    char *d = t_tmpdir();
    char *src = path_join(d, "t.c"), *prof = path_join(d, "profile");
    char *dirs[BUILD_NPHASES];
    struct argvec argv[BUILD_NPHASES];
    struct lib_build b[BUILD_NPHASES];
    t_write(d, "t.c", t_lib_src);
    assert_int_equal(profile_wipe(prof), 0);
    memset(b, 0, sizeof(b));
    for (int ph = 0; ph < BUILD_NPHASES; ph++) {
        dirs[ph] = path_join(d, build_phase_name((enum build_phase)ph));
        struct pgo_paths paths = { prof, NULL, dirs[ph] };
        memset(&argv[ph], 0, sizeof(argv[ph]));
        assert_int_equal(t_lib_argv(&argv[ph], (enum build_phase)ph, &paths, src), 0);
        b[ph].name = build_phase_name((enum build_phase)ph);
        b[ph].phase = (enum build_phase)ph;
        b[ph].dir = dirs[ph];
        b[ph].output = "libt.so";
        b[ph].argv = argvec_argv(&argv[ph]);
    }
    assert_int_equal(lib_build_parallel(b, 2, 2, "test"), 0);

    /* no training yet: the pgo build must refuse to build without profile data */
    assert_int_equal(T_QUIET(lib_build_run(&b[BUILD_PGO])), -1);

    /* train: load the instrumented library, run it, unload (libgcov writes on unload) */
    void *h = dlopen(b[BUILD_INSTRUMENTED].lib, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(h);
    int (*work)(int) = (int (*)(int))dlsym(h, "work");
    assert_non_null(work);
    assert_int_equal(work(6), -3 + 1 + 2 + 4 + 5);
    dlclose(h);

    struct cc_info cc = { .cc = "gcc", .family = CC_GCC };
    struct profile_info info;
    assert_int_equal(profile_collect(&cc, prof, NULL, &info), 0);
    assert_int_equal(info.files, 1);
    profile_info_release(&info);

    /* the instrumented and pgo builds live in different dirs; -fprofile-prefix-path maps them */
    assert_int_equal(lib_build_run(&b[BUILD_PGO]), 0);
    assert_false(b[BUILD_PGO].skipped);
    assert_string_not_equal(b[BUILD_PGO].sha256, b[BUILD_BASELINE].sha256);

    for (int ph = 0; ph < BUILD_NPHASES; ph++) {
        lib_build_release(&b[ph]);
        argvec_clear(&argv[ph]);
        free(dirs[ph]);
    }
    remove_tree(d);
    free(src);
    free(prof);
    free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_baseline_has_no_pgo_flags),
        cmocka_unit_test(test_gcc_flags),
        cmocka_unit_test(test_clang_flags),
        cmocka_unit_test(test_flags_need_absolute_paths),
        cmocka_unit_test(test_phase_and_family_names),
        cmocka_unit_test(test_cc_macro_parsing),
        cmocka_unit_test(test_cc_probe_rejects_non_compiler),
        cmocka_unit_test(test_version_from_header),
        cmocka_unit_test(test_stamps),
        cmocka_unit_test(test_path_key),
        cmocka_unit_test(test_source_diff),
        cmocka_unit_test(test_stamp_first_change),
        cmocka_unit_test(test_lib_build_skip_and_rebuild),
        cmocka_unit_test(test_lib_build_parallel),
        cmocka_unit_test(test_lib_build_stop_before_start),
        cmocka_unit_test(test_pgo_log_problem),
        cmocka_unit_test(test_profile_collect_gcc),
        cmocka_unit_test(test_profdata_max_count),
        cmocka_unit_test(test_profraw_version),
        cmocka_unit_test(test_parse_verify),
        cmocka_unit_test(test_gcc_pgo_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
