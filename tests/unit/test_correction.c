/* Unit tests of src/pgo/correction.c: GCC's profile corrections counted from a pgo build's
 * log. A real racy profile: a program whose 8 threads hammer the same loops, instrumented with
 * -fprofile-update=single, so the threads' counter updates race and the counts break flow
 * conservation; built -O0 so that every counter update is its own load-add-store (at -O2 GCC
 * keeps a loop's counters in registers and stores them once per call, and the loss no longer
 * breaks the flow). Trained until GCC refuses the profile without -fprofile-correction (the
 * race is a race: a training may happen to lose nothing that matters); then compiled with
 * pgolab's gcc pgo flags, whose log must say GCC corrected it, once for the object. The
 * same program instrumented with -fprofile-update=prefer-atomic (pgolab's flags) gives a
 * consistent profile: GCC accepts it without correction and the count is 0. Plus the
 * parser on text: echoed commands, several objects, the summary line and the JSON. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>

#include "pgo/correction.h"
#include "toolchain/toolchain.h"
#include "util/fs.h"
#include "util/strbuf.h"
#include "util/subprocess.h"
#include "util/util.h"

#define UNIT_TMPDIR_TEMPLATE "/tmp/pgolab-correction.XXXXXX"
#include "unit_helpers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRAININGS 12 /* racy trainings tried before giving up on an inconsistent profile */

/* Six copies of a loop whose rare branch GCC derives as a difference of two hot counters:
 * when the hot ones lose different amounts to the race, the rare one comes out negative. */
static const char race_c[] =
    "#include <pthread.h>\n"
    "#include <stdio.h>\n"
    "static volatile unsigned long sink;\n"
    "static pthread_barrier_t gate;\n"
    "#define WORK(name) static void name(void) { \\\n"
    "    for (unsigned long i = 0; i < 2000000UL; i++) { \\\n"
    "        if (i & 1) sink += 1; else sink += 2; \\\n"
    "        if (i != 12345) sink ^= 3; else sink = 0; } }\n"
    "WORK(w1) WORK(w2) WORK(w3) WORK(w4) WORK(w5) WORK(w6)\n"
    "static void *work(void *arg) { (void)arg; pthread_barrier_wait(&gate);\n"
    "    w1(); w2(); w3(); w4(); w5(); w6(); return NULL; }\n"
    "int main(void) { pthread_t t[8]; pthread_barrier_init(&gate, NULL, 8);\n"
    "    for (int i = 0; i < 8; i++) pthread_create(&t[i], NULL, work, NULL);\n"
    "    for (int i = 0; i < 8; i++) pthread_join(t[i], NULL);\n"
    "    printf(\"%lu\\n\", sink); return 0; }\n";

/* Run argv in cwd, its output appended to log (NULL: discarded). The exit status. */
static int run_log(const char *const *argv, const char *cwd, const char *log)
{
    struct strbuf out = STRBUF_INIT;
    strbuf_init(&out, 0);
    struct subprocess sp = { .argv = argv, .cwd = cwd, .log_path = log,
                             .out = log ? NULL : &out, .quiet_stderr = 1 };
    int rc = subprocess_run(&sp);
    strbuf_release(&out);
    return rc;
}

/* A build directory with race.c, and its profile directory. */
struct race {
    char *build, *prof;
};

static void race_setup(struct race *r, const char *name)
{
    r->build = xasprintf("%s/%s/build", tmpdir, name);
    r->prof = xasprintf("%s/%s/prof", tmpdir, name);
    assert_int_equal(mkdir_p(r->build), 0);
    char *src = path_join(r->build, "race.c");
    FILE *fp = fopen(src, "w");
    assert_non_null(fp);
    fputs(race_c, fp);
    fclose(fp);
    free(src);
}

static void race_release(struct race *r)
{
    free(r->build);
    free(r->prof);
}

/* Instrument with -fprofile-update=update, run once into a fresh profile. */
static void race_train(const struct race *r, const char *update)
{
    assert_int_equal(remove_tree(r->prof), 0);
    assert_int_equal(mkdir_p(r->prof), 0);
    char *gen = xasprintf("-fprofile-generate=%s", r->prof);
    char *upd = xasprintf("-fprofile-update=%s", update);
    char *prefix = xasprintf("-fprofile-prefix-path=%s", r->build);
    const char *cc[] = { "gcc", "-O0", "-pthread", gen, upd, prefix, "-c", "-o", "race.o",
                         "race.c", NULL };
    assert_int_equal(run_log(cc, r->build, NULL), 0);
    const char *ld[] = { "gcc", "-pthread", gen, "-o", "race", "race.o", NULL };
    assert_int_equal(run_log(ld, r->build, NULL), 0);
    char *exe = path_join(r->build, "race");
    const char *go[] = { exe, NULL };
    assert_int_equal(run_log(go, r->build, NULL), 0);
    free(exe);
    free(gen);
    free(upd);
    free(prefix);
}

/* The pgo compile into log (truncated first): pgolab's gcc pgo flags when pgolab_flags, else
 * the bare -fprofile-use (no correction). The exit status; the log's text in text. */
static int race_use(const struct race *r, bool pgolab_flags, const char *log,
                    struct strbuf *text)
{
    struct argvec a = ARGVEC_INIT;
    argvec_push(&a, "gcc");
    argvec_push(&a, "-O0");
    argvec_push(&a, "-pthread");
    if (pgolab_flags) {
        struct pgo_paths paths = { r->prof, NULL, r->build };
        assert_int_equal(pgo_phase_flags(&a, CC_GCC, BUILD_PGO, &paths), 0);
    } else {
        argvec_pushf(&a, "-fprofile-use=%s", r->prof);
        argvec_pushf(&a, "-fprofile-prefix-path=%s", r->build);
    }
    argvec_push(&a, "-c");
    argvec_push(&a, "-o");
    argvec_push(&a, "race.o");
    argvec_push(&a, "race.c");
    assert_int_equal(stamp_write(log, ""), 0);
    int rc = run_log(argvec_argv(&a), r->build, log);
    argvec_clear(&a);
    strbuf_reset(text);
    assert_int_equal(strbuf_read_file(text, log), 0);
    return rc;
}

static void test_racy_profile_counted(void **state)
{
    (void)state;
    struct race r;
    race_setup(&r, "single");
    char *log = xasprintf("%s/single/pgo.log", tmpdir);
    struct strbuf text = STRBUF_INIT;
    strbuf_init(&text, 0);
    int tries = 0;
    bool refused = false;
    while (!refused && tries++ < TRAININGS) {
        race_train(&r, "single");
        refused = race_use(&r, false, log, &text) != 0;
    }
    if (!refused) {
        race_release(&r);
        free(log);
        strbuf_release(&text);
        UNIT_SKIP("a racy profile (no training of 8 threads lost counts inconsistently)", NULL);
    }
    /* GCC without -fprofile-correction: one error per function, naming it */
    assert_non_null(strstr(text.buf, "error: corrupted profile info: profile data is not "
                                     "flow-consistent"));
    assert_non_null(strstr(text.buf, "In function"));
    /* pgolab's flags: GCC corrects it and says so, once for the object */
    assert_int_equal(race_use(&r, true, log, &text), 0);
    struct profile_corrections c;
    assert_int_equal(profile_corrections_read(text.buf, &c), 1);
    assert_true(c.counted);
    assert_int_equal(c.sources.n, 1);
    assert_string_equal(c.sources.v[0], "race.c");
    char *line = profile_corrections_line(&c);
    assert_non_null(strstr(line, "GCC corrected inconsistent profile counts in 1 object: race.c"));
    free(line);
    profile_corrections_release(&c);
    strbuf_release(&text);
    free(log);
    race_release(&r);
}

static void test_atomic_profile_zero(void **state)
{
    (void)state;
    struct race r;
    race_setup(&r, "atomic");
    char *log = xasprintf("%s/atomic/pgo.log", tmpdir);
    struct strbuf text = STRBUF_INIT;
    strbuf_init(&text, 0);
    race_train(&r, "prefer-atomic");
    /* consistent: GCC takes it without correction ... */
    assert_int_equal(race_use(&r, false, log, &text), 0);
    assert_null(strstr(text.buf, "corrupted profile info"));
    /* ... and with pgolab's flags corrects nothing */
    assert_int_equal(race_use(&r, true, log, &text), 0);
    struct profile_corrections c;
    assert_int_equal(profile_corrections_read(text.buf, &c), 0);
    assert_true(c.counted);
    char *line = profile_corrections_line(&c);
    assert_string_equal(line, "GCC corrected no profile counts (0 objects with inconsistent "
                              "counts)");
    free(line);
    profile_corrections_release(&c);
    strbuf_release(&text);
    free(log);
    race_release(&r);
}

static void test_parse(void **state)
{
    (void)state;
    /* pgolab's echo of the command, make's echo, two objects (one source compiled twice), a
     * line that only quotes the phrase */
    const char *log =
        "$ cd /b && make CFLAGS=-fopt-info-note-ipa\n"
        "gcc -O2 -fprofile-use=/p -fprofile-correction -fopt-info-note-ipa -c a.c\n"
        "a.c:120:0: " GCC_CORRECTION_NOTE "\n"
        "../src/b dir/b.c:7:0: " GCC_CORRECTION_NOTE "\n"
        "a.c:120:0: " GCC_CORRECTION_NOTE "\n"
        "echo 'x: " GCC_CORRECTION_NOTE "'\n"
        "$ a.c:1:0: " GCC_CORRECTION_NOTE "\n"
        "c.c:3:0: note: something else\n";
    struct profile_corrections c;
    assert_int_equal(profile_corrections_read(log, &c), 3);
    assert_int_equal(c.sources.n, 2);
    assert_string_equal(c.sources.v[0], "a.c");
    assert_string_equal(c.sources.v[1], "../src/b dir/b.c");
    char *line = profile_corrections_line(&c);
    assert_non_null(strstr(line, "in 3 objects: a.c, ../src/b dir/b.c ("));
    free(line);
    json_t *j = profile_corrections_json(&c);
    char *s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
    assert_string_equal(s, "{\"objects\":3,\"sources\":[\"a.c\",\"../src/b dir/b.c\"]}");
    free(s);
    json_decref(j);
    profile_corrections_release(&c);
    assert_false(c.counted);
    j = profile_corrections_json(&c);
    assert_true(json_is_null(j));
    json_decref(j);
    line = profile_corrections_line(&c);
    assert_non_null(strstr(line, "not counted"));
    free(line);
    assert_int_equal(profile_corrections_read("", &c), 0);
    assert_true(c.counted);
    profile_corrections_release(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_atomic_profile_zero),
        cmocka_unit_test(test_racy_profile_counted),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
