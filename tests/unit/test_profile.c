/* Unit tests of src/profile: clone folding on names from real nm output, a baseline and a
 * pgo SQLite build whose clone names differ pairing function by function, a program with a
 * known hot function and its .cold split profiled for real (perf_event_open: the top symbol,
 * its share, the clone's samples counted for the parent), folded files read back (missing,
 * truncated), callgrind's self costs per function (exactly repeatable), the stability rule,
 * and a stripped executable profiled: one row for its DSO and a note. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "profile/fold.h"
#include "profile/profile.h"
#include "profile/perf_sampler.h"
#include "util/util.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char *write_text(const char *dir, const char *name, const char *text)
{
    char *path = xasprintf("%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static const char *fold(const char *s)
{
    static char buf[256];
    return profile_fold_name(s, buf, sizeof(buf));
}

/* Names as `nm` prints them for pgolab's own objects (gcc 12 -O2) and glibc's .dynsym. */
static void test_fold_names(void **state)
{
    (void)state;
    assert_string_equal(fold("rand_zipfian.part.0.isra.0"), "rand_zipfian");
    assert_string_equal(fold("experiment_metric_value.cold"), "experiment_metric_value");
    assert_string_equal(fold("cell.constprop.0"), "cell");
    assert_string_equal(fold("stats_mw_min_p.part.0"), "stats_mw_min_p");
    assert_string_equal(fold("start_server.isra.0"), "start_server");
    assert_string_equal(fold("foo.constprop.0.isra.0.cold"), "foo");
    assert_string_equal(fold("foo.cold.12"), "foo");
    assert_string_equal(fold("sqlite3VdbeExec.lto_priv.0"), "sqlite3VdbeExec");
    /* callgrind's recursion depth, alone and after a clone suffix */
    assert_string_equal(fold("qsort_tuple_unsigned'2"), "qsort_tuple_unsigned");
    assert_string_equal(fold("qsort_tuple_unsigned.lto_priv.0'2"), "qsort_tuple_unsigned");
    assert_string_equal(fold("f'x"), "f'x");
    assert_string_equal(fold("f'"), "f'");
    assert_string_equal(fold("helper.llvm.4271876504155935311"), "helper");
    assert_string_equal(fold("__pthread_mutex_lock@GLIBC_2.2.5"), "__pthread_mutex_lock");
    assert_string_equal(fold("memcpy@@GLIBC_2.14"), "memcpy");
    assert_string_equal(fold("sqlite3VdbeExec"), "sqlite3VdbeExec");
    /* not clone suffixes: kept */
    assert_string_equal(fold("a.b"), "a.b");
    assert_string_equal(fold("x.part"), "x");        /* a marker without its number */
    assert_string_equal(fold("_GLOBAL__sub_I.main"), "_GLOBAL__sub_I.main");
    assert_string_equal(fold("foo.5"), "foo.5");     /* a number alone is no marker */
}

/* A baseline and a pgo build of SQLite 3.40.1 name the same code differently: the names
 * below are from `nm` of the two libsqlite3.so builds `pgolab pgo sqlite` made on this
 * project's machine (gcc 12.2, -O2; the pgo build with -fprofile-use). The side-by-side pairs
 * each function into one row, with the clones' samples added to it. */
static void test_pairing(void **state)
{
    (void)state;
    char dir[] = "/tmp/pgolab-test-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char *a = write_text(dir, "a.folded",
        "# pgolab-profile-folded 1\n# event cpu-clock\n# frequency 999\n# kernel no\n"
        "libsqlite3.so`sqlite3BtreeTableMoveto 500\n"
        "libsqlite3.so`codeCompare.part.0.isra.0 100\n"
        "libsqlite3.so`btreeParseCellAdjustSizeForOverflow.isra.0 100\n"
        "libsqlite3.so`jsonEachComputePath.part.0 50\n"
        "libsqlite3.so`dropCell.part.0 50\n"
        "libsqlite3.so`computeYMD.part.0 50\n"
        "libsqlite3.so`btreeNext.constprop.0 150\n"
        "# samples 1000\n# end\n");
    char *b = write_text(dir, "b.folded",
        "# pgolab-profile-folded 1\n# event cpu-clock\n# frequency 999\n# kernel no\n"
        "libsqlite3.so`sqlite3BtreeTableMoveto 380\n"
        "libsqlite3.so`sqlite3BtreeTableMoveto.cold 20\n"
        "libsqlite3.so`codeCompare.isra.0 90\n"
        "libsqlite3.so`codeCompare.isra.0.cold 10\n"
        "libsqlite3.so`btreeParseCellAdjustSizeForOverflow 100\n"
        "libsqlite3.so`jsonEachComputePath.constprop.0 50\n"
        "libsqlite3.so`dropCell 40\n"
        "libsqlite3.so`dropCell.cold 10\n"
        "libsqlite3.so`computeYMD 50\n"
        "libsqlite3.so`btreeNext.constprop.0 100\n"
        "libsqlite3.so`btreeNext.constprop.0.cold 50\n"
        "# samples 900\n# end\n");
    struct profile_run ra, rb;
    assert_int_equal(profile_read(a, &ra), 0);
    assert_int_equal(profile_read(b, &rb), 0);
    assert_int_equal(ra.nfns, 7);
    assert_int_equal(rb.nfns, 7);
    struct profile_side sa = { "baseline", &ra, 1 }, sb = { "pgo", &rb, 1 };
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    profile_print_side_by_side(out, "t", &sa, &sb, 30);
    fclose(out);
    /* every function is in both: no "(absent)" cell in the diff view, one row each */
    assert_null(strstr(text, "(absent)"));
    const char *fns[] = { "sqlite3BtreeTableMoveto", "codeCompare",
                          "btreeParseCellAdjustSizeForOverflow", "jsonEachComputePath",
                          "dropCell", "computeYMD", "btreeNext" };
    const char *diff = strstr(text, "Diff pgo - baseline");
    assert_non_null(diff);
    for (size_t i = 0; i < ARRAY_SIZE(fns); i++) {
        char *needle = xasprintf(" %s (libsqlite3.so)", fns[i]);
        const char *hit = strstr(diff, needle);
        assert_non_null(hit);
        assert_null(strstr(hit + 1, needle));  /* exactly one row */
        free(needle);
    }
    assert_null(strstr(text, ".cold"));
    assert_null(strstr(text, ".isra"));
    /* sqlite3BtreeTableMoveto: 50% vs (380+20)/900 = 44.444%: change -5.556 points */
    assert_non_null(strstr(diff, "-5.556"));
    free(text);
    profile_run_release(&ra);
    profile_run_release(&rb);
    unlink(a);
    unlink(b);
    rmdir(dir);
    free(a);
    free(b);
}

/* Folded files read back: counts by leaf, DSOs; missing, truncated and foreign files fail. */
static void test_read_folded(void **state)
{
    (void)state;
    char dir[] = "/tmp/pgolab-test-XXXXXX";
    assert_non_null(mkdtemp(dir));
    const char *good_text =
        "# pgolab-profile-folded 1\n# event cpu-clock\n# frequency 999\n# kernel yes\n"
        "# note a note\n"
        "pgolab`main;libsqlite3.so`sqlite3_step;libsqlite3.so`sqlite3VdbeExec 7\n"
        "pgolab`main;[kernel]`do_syscall_64 3\n"
        "pgolab`main;libsqlite3.so`sqlite3VdbeExec 2\n"
        "# samples 12\n# end\n";
    char *good = write_text(dir, "good", good_text);
    struct profile_run r;
    assert_int_equal(profile_read(good, &r), 0);
    assert_true(r.samples == 12);
    assert_true(r.kernel);
    assert_int_equal(r.frequency, 999);
    assert_string_equal(r.event, "cpu-clock");
    assert_int_equal(r.nnotes, 1);
    assert_string_equal(r.fns[0].name, "sqlite3VdbeExec");
    assert_true(r.fns[0].count == 9);
    assert_string_equal(r.fns[0].dso, "libsqlite3.so");
    assert_string_equal(r.dsos[0].name, "libsqlite3.so");
    assert_true(r.dsos[0].count == 9);
    assert_string_equal(r.dsos[1].name, "[kernel]");
    profile_run_release(&r);

    char *trunc = write_text(dir, "trunc", "# pgolab-profile-folded 1\n# event cpu-clock\n"
                                           "pgolab`main 3\npgolab`ma");
    char *noend = write_text(dir, "noend", "# pgolab-profile-folded 1\npgolab`main 3\n");
    char *foreign = write_text(dir, "foreign", "hello\n");
    char *missing = xasprintf("%s/missing", dir);
    char why[512];
    assert_int_equal(profile_read_quiet(trunc, &r, why, sizeof(why)), -1);
    assert_non_null(strstr(why, "truncated"));
    assert_int_equal(profile_read_quiet(noend, &r, why, sizeof(why)), -1);
    assert_non_null(strstr(why, "no \"# end\" line"));
    assert_int_equal(profile_read_quiet(foreign, &r, why, sizeof(why)), -1);
    assert_non_null(strstr(why, "not a pgolab folded profile"));
    assert_int_equal(profile_read_quiet(missing, &r, why, sizeof(why)), -1);
    assert_non_null(strstr(why, "No such file"));

    /* a raw file without its end line is refused by symbolization */
    char *raw = write_text(dir, "raw", "pgolab-profile-raw 1\nevent cpu-clock\nstack 1 5 400000\n");
    char *outp = xasprintf("%s/out", dir);
    assert_int_equal(profile_symbolize(raw, outp), -1);
    assert_int_equal(access(outp, F_OK), -1);
    char *paths[] = { good, trunc, noend, foreign, missing, raw, outp };
    for (size_t i = 0; i < ARRAY_SIZE(paths); i++) {
        unlink(paths[i]);
        free(paths[i]);
    }
    rmdir(dir);
}

/* Callgrind's self cost per function: the cost line after calls= is inclusive and not the
 * caller's; names compressed as "(id) name"; clones folded; the same input twice gives the
 * same file byte for byte. */
static void test_callgrind_functions(void **state)
{
    (void)state;
    char dir[] = "/tmp/pgolab-test-XXXXXX";
    assert_non_null(mkdtemp(dir));
    const char *cg =
        "# callgrind format\nversion: 1\npositions: line\nevents: Ir I1mr\n"
        "ob=(1) /usr/lib/libsqlite3.so\nfl=(1) sqlite3.c\nfn=(1) sqlite3_step\n"
        "10 100 1\n+2 50\ncfn=(2) sqlite3VdbeExec.part.0\ncalls=3 20\n* 9999 9\n"
        "fn=(2)\n20 700\n21 300 2\n"
        "fn=(3) sqlite3VdbeExec.cold\n5 25\n"
        "ob=(2) /work/pgolab\nfl=(2) runner.c\nfn=(4) worker_main\n1 5\n"
        "totals: 1180\n";
    const char *cg_small =
        "positions: line\nevents: Ir\n"
        "ob=(1) /usr/lib/libsqlite3.so\nfn=(1) sqlite3_step\n10 30\n"
        "fn=(2) sqlite3VdbeExec\n20 200\nob=(2) /work/pgolab\nfn=(3) worker_main\n1 5\n";
    char *big = write_text(dir, "cg.n", cg);
    char *small = write_text(dir, "cg.n5", cg_small);
    struct profile_counts cb, cs;
    assert_int_equal(profile_callgrind_read(big, &cb), 0);
    assert_int_equal(profile_callgrind_read(small, &cs), 0);
    assert_int_equal(cb.n, 3);
    assert_string_equal(cb.keys[0], "libsqlite3.so`sqlite3_step");
    assert_true(cb.counts[0] == 150);                 /* not the 9999 of the call */
    assert_string_equal(cb.keys[1], "libsqlite3.so`sqlite3VdbeExec");
    assert_true(cb.counts[1] == 1025);                /* 700 + 300 + the .cold clone's 25 */
    assert_true(cb.total == 1180);
    char *f1 = xasprintf("%s/one.folded", dir), *f2 = xasprintf("%s/two.folded", dir);
    assert_int_equal(profile_write_instructions(f1, &cs, &cb, 400), 0);
    assert_int_equal(profile_write_instructions(f2, &cs, &cb, 400), 0);
    struct profile_run r;
    assert_int_equal(profile_read(f1, &r), 0);
    assert_string_equal(r.event, "instructions");
    assert_true(r.transactions == 400);
    assert_string_equal(r.fns[0].name, "sqlite3VdbeExec");
    assert_true(r.fns[0].count == 825);               /* 1025 - 200 */
    assert_true(r.samples == 825 + 120);              /* worker_main: 5 - 5 = 0, left out */
    profile_run_release(&r);
    char *cmd = xasprintf("cmp -s %s %s", f1, f2);
    assert_int_equal(system(cmd), 0);
    free(cmd);
    profile_counts_release(&cb);
    profile_counts_release(&cs);
    char *paths[] = { big, small, f1, f2 };
    for (size_t i = 0; i < ARRAY_SIZE(paths); i++) {
        unlink(paths[i]);
        free(paths[i]);
    }
    rmdir(dir);
}

/* profile_diff_make: two rounds a side, a function only the baseline has and one only the
 * variant has. Hand-computed: f is 60/100 and 40/100 in a's rounds (pooled 50%, range 40-60),
 * 45/100 twice in b (45%): change -5 points, within a's 20-point range; g is 40 and 60 in a
 * (50%) and absent in b: -50 points; h is 55 twice in b only: +55, beyond both ranges. */
static void test_diff_rows(void **state)
{
    (void)state;
    char dir[] = "/tmp/pgolab-test-XXXXXX";
    assert_non_null(mkdtemp(dir));
    const char *head = "# pgolab-profile-folded 1\n# event cpu-clock\n# frequency 999\n# kernel no\n";
    char *txt[4] = {
        xasprintf("%sx.so`f 60\nx.so`g 40\n# samples 100\n# end\n", head),
        xasprintf("%sx.so`f 40\nx.so`g 60\n# samples 100\n# end\n", head),
        xasprintf("%sx.so`f 45\ny.so`h 55\n# samples 100\n# end\n", head),
        xasprintf("%sx.so`f 45\ny.so`h 55\n# samples 100\n# end\n", head),
    };
    struct profile_run runs[4];
    char *paths[4];
    for (int i = 0; i < 4; i++) {
        char name[32];
        snprintf(name, sizeof(name), "r%d.folded", i);
        paths[i] = write_text(dir, name, txt[i]);
        assert_int_equal(profile_read(paths[i], &runs[i]), 0);
    }
    struct profile_side a = { "baseline", &runs[0], 2 }, b = { "pgo", &runs[2], 2 };
    struct profile_diff d;
    profile_diff_make(&d, &a, &b, 30);
    assert_string_equal(d.event, "cpu-clock");
    assert_int_equal(d.samples_a, 200);
    assert_int_equal(d.samples_b, 200);
    assert_int_equal(d.nfns, 3);
    /* by |change|: h (+55), g (-50), f (-5) */
    assert_string_equal(d.fns[0].name, "h");
    assert_false(d.fns[0].a.present);
    assert_int_equal(d.fns[0].a.rank, 0);
    assert_true(d.fns[0].b.present);
    assert_float_equal(d.fns[0].change, 55, 1e-9);
    assert_false(d.fns[0].within_noise);
    assert_string_equal(d.fns[1].name, "g");
    assert_false(d.fns[1].b.present);
    assert_float_equal(d.fns[1].change, -50, 1e-9);
    assert_string_equal(d.fns[2].name, "f");
    assert_float_equal(d.fns[2].a.share, 50, 1e-9);
    assert_float_equal(d.fns[2].a.min, 40, 1e-9);
    assert_float_equal(d.fns[2].a.max, 60, 1e-9);
    assert_true(d.fns[2].a.unstable);      /* 20 points > max(0.5, 12.5) */
    assert_false(d.fns[2].b.unstable);
    assert_int_equal(d.fns[2].b.rank, 2);  /* h (55%) ranks first in b */
    assert_float_equal(d.fns[2].change, -5, 1e-9);
    assert_true(d.fns[2].within_noise);
    /* DSOs: x.so 100% in a, 45% in b; y.so 0 -> 55% */
    assert_int_equal(d.ndsos, 2);
    assert_string_equal(d.dsos[0].name, "x.so");
    assert_float_equal(d.dsos[0].change, -55, 1e-9);
    assert_string_equal(d.dsos[1].name, "y.so");
    assert_false(d.dsos[1].a.present);
    profile_diff_release(&d);
    /* top = 1: each side's first function only: a's is f (50% like g, ties by name), b's h;
     * g is left out */
    profile_diff_make(&d, &a, &b, 1);
    assert_int_equal(d.nfns, 2);
    assert_string_equal(d.fns[0].name, "h");
    assert_string_equal(d.fns[1].name, "f");
    profile_diff_release(&d);
    for (int i = 0; i < 4; i++) {
        profile_run_release(&runs[i]);
        unlink(paths[i]);
        free(paths[i]);
        free(txt[i]);
    }
    rmdir(dir);
}

static void test_unstable_rule(void **state)
{
    (void)state;
    assert_false(profile_unstable(10, 9.5, 10.5, 3));  /* 1 point of 10%: within 2.5 */
    assert_true(profile_unstable(10, 8, 11, 3));       /* 3 points > 2.5 */
    assert_false(profile_unstable(1, 0.6, 1.05, 3));   /* 0.45 < 0.5 floor */
    assert_true(profile_unstable(1, 0.4, 1.2, 3));
    assert_false(profile_unstable(1, 0, 50, 1));       /* one round: no mark */
}

/* The hot/cold program: hot() runs a loop whose predicted-unlikely branch (GCC puts it into
 * hot.cold) really runs one iteration in four and does most of the work. Build it with gcc
 * -O2 -no-pie (absolute addresses: nm's are the samples'), profile it for real, and check
 * that hot is the top symbol with >= 80% of the samples, that some of those samples were in
 * hot.cold (by address in the raw file) and that they were counted for hot. */
static const char prog_src[] =
    "#include <stdio.h>\n#include <stdlib.h>\n#include <unistd.h>\n"
    "__attribute__((cold, noinline)) void rare(void) { __asm__ volatile(\"\"); }\n"
    "__attribute__((noinline)) unsigned hot(unsigned long n)\n{\n"
    "    unsigned acc = 1;\n"
    "    for (unsigned long i = 0; i < n; i++) {\n"
    "        acc = acc * 2654435761u + (unsigned)i;\n"
    "        if (__builtin_expect((i & 3) == 0, 0)) {\n"
    "            rare();\n"
    "            for (int j = 0; j < 64; j++)\n"
    "                acc = acc * 31u + (unsigned)j;\n"
    "        }\n    }\n    return acc;\n}\n"
    "int main(int argc, char **argv)\n{\n    char c;\n"
    "    if (read(0, &c, 1) != 1) return 1;\n"
    "    printf(\"%u\\n\", hot(strtoul(argv[1], 0, 10)));\n    return 0;\n}\n";

static void nm_range(const char *prog, const char *sym, unsigned long long *lo,
                     unsigned long long *hi)
{
    char *cmd = xasprintf("nm -S %s", prog);
    FILE *p = popen(cmd, "r");
    char line[512];
    *lo = *hi = 0;
    while (p && fgets(line, sizeof(line), p)) {
        unsigned long long a, s;
        char t, name[256];
        if (sscanf(line, "%llx %llx %c %255s", &a, &s, &t, name) == 4 && !strcmp(name, sym)) {
            *lo = a;
            *hi = a + s;
        }
    }
    if (p)
        pclose(p);
    free(cmd);
}

static void test_hot_cold_profile(void **state)
{
    (void)state;
    char dir[] = "/tmp/pgolab-test-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char *src = write_text(dir, "prog.c", prog_src);
    char *prog = xasprintf("%s/prog", dir);
    char *cmd = xasprintf("gcc -O2 -fno-omit-frame-pointer -no-pie -o %s %s", prog, src);
    assert_int_equal(system(cmd), 0);
    free(cmd);
    unsigned long long hlo, hhi, clo, chi;
    nm_range(prog, "hot", &hlo, &hhi);
    nm_range(prog, "hot.cold", &clo, &chi);
    assert_true(hlo && clo);  /* gcc made the split */

    int in[2];
    assert_int_equal(pipe(in), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(in[0], 0);
        close(in[1]);
        int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, 1);
        execl(prog, prog, "40000000", (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    char *raw = xasprintf("%s/prog.raw", dir), *folded = xasprintf("%s/prog.folded", dir);
    struct profile_sampler s;
    assert_int_equal(profile_sampler_start(&s, pid, raw, 999), 0);
    assert_int_equal(write(in[1], "x", 1), 1);
    close(in[1]);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    assert_int_equal(profile_sampler_stop(&s), 0);

    /* the raw file: samples whose sampled address is in hot / hot.cold */
    FILE *f = fopen(raw, "r");
    assert_non_null(f);
    char line[8192];
    unsigned long long in_hot = 0, in_cold = 0, total = 0;
    while (fgets(line, sizeof(line), f)) {
        unsigned pidv;
        unsigned long long count;
        int pos = 0;
        if (sscanf(line, "stack %u %llu %n", &pidv, &count, &pos) < 2)
            continue;
        total += count;
        char *tok = strtok(line + pos, " \n");
        while (tok && (!strcmp(tok, "k") || !strcmp(tok, "u")))
            tok = strtok(NULL, " \n");  /* user frames only in this program */
        unsigned long long ip = tok ? strtoull(tok, NULL, 16) : 0;
        if (ip >= hlo && ip < hhi)
            in_hot += count;
        if (ip >= clo && ip < chi)
            in_cold += count;
    }
    fclose(f);
    assert_int_equal(profile_symbolize(raw, folded), 0);
    struct profile_run r;
    assert_int_equal(profile_read(folded, &r), 0);
    print_message("hot/cold: %llu samples, %llu in hot, %llu in hot.cold; folded top %s %llu\n",
                  total, in_hot, in_cold, r.fns[0].name, (unsigned long long)r.fns[0].count);
    assert_true(total >= 100);
    assert_string_equal(r.fns[0].name, "hot");
    assert_true(r.fns[0].count * 100 >= r.samples * 80);  /* >= 80% of the samples */
    assert_true(in_cold * 10 >= total);                    /* the clone had >= 10% */
    assert_true(r.fns[0].count == in_hot + in_cold);       /* ... and went to hot */
    for (int i = 0; i < r.nfns; i++)
        assert_null(strstr(r.fns[i].name, ".cold"));
    profile_run_release(&r);
    char *paths[] = { src, prog, raw, folded };
    for (size_t i = 0; i < ARRAY_SIZE(paths); i++) {
        unlink(paths[i]);
        free(paths[i]);
    }
    rmdir(dir);
}

/* Profile program prog (it waits for a byte on stdin, then runs hot() for n iterations)
 * into dir/NAME.raw and .folded; r gets the folded profile. */
static void profile_program(const char *dir, const char *prog, const char *name,
                            struct profile_run *r)
{
    int in[2];
    assert_int_equal(pipe(in), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(in[0], 0);
        close(in[1]);
        int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, 1);
        execl(prog, prog, "20000000", (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    char *raw = xasprintf("%s/%s.raw", dir, name), *folded = xasprintf("%s/%s.folded", dir, name);
    struct profile_sampler s;
    assert_int_equal(profile_sampler_start(&s, pid, raw, 999), 0);
    assert_int_equal(write(in[1], "x", 1), 1);
    close(in[1]);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    assert_int_equal(profile_sampler_stop(&s), 0);
    assert_int_equal(profile_symbolize(raw, folded), 0);
    assert_int_equal(profile_read(folded, r), 0);
    unlink(raw);
    unlink(folded);
    free(raw);
    free(folded);
}

/* A stripped executable: its samples are one row per DSO, "[prog]", and a note says it is
 * stripped. */
static void test_stripped_profile(void **state)
{
    (void)state;
    char dir[] = "/tmp/pgolab-test-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char *src = write_text(dir, "prog.c", prog_src);
    char *prog = xasprintf("%s/prog", dir);
    char *cmd = xasprintf("gcc -O2 -fno-omit-frame-pointer -o %s %s && strip %s", prog, src, prog);
    assert_int_equal(system(cmd), 0);
    free(cmd);
    struct profile_run r;
    profile_program(dir, prog, "stripped", &r);
    assert_string_equal(r.fns[0].name, "[prog]");
    assert_string_equal(r.fns[0].dso, "prog");
    assert_true(r.fns[0].count * 100 >= r.samples * 80);
    bool noted = false;
    for (int i = 0; i < r.nnotes; i++)
        noted |= !strncmp(r.notes[i], "prog: stripped", 14);
    assert_true(noted);
    profile_run_release(&r);
    unlink(src);
    unlink(prog);
    rmdir(dir);
    free(src);
    free(prog);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fold_names),
        cmocka_unit_test(test_pairing),
        cmocka_unit_test(test_read_folded),
        cmocka_unit_test(test_callgrind_functions),
        cmocka_unit_test(test_diff_rows),
        cmocka_unit_test(test_unstable_rule),
        cmocka_unit_test(test_hot_cold_profile),
        cmocka_unit_test(test_stripped_profile),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
