/* Unit tests for src/metrics: the /proc parsers (procstat.c) on canned snapshots, the
 * arithmetic (metrics.c) against values worked out by hand below, the trust flags, the JSON
 * round trip, and the sampler (sampler.c) on a fake procfs tree in a temp dir: a server
 * process tree whose backends fork, exit and vanish between snapshots, the scan fallback,
 * and an unreadable /proc. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "metrics/metrics.h"
#include "metrics/procstat.h"
#include "metrics/sampler.h"
#include "util/fs.h"
#include "util/util.h"

#define UNIT_TMPDIR_TEMPLATE "/tmp/pgolab-metrics.XXXXXX"
#include "unit_helpers.h"

/* ---- canned snapshots: a 2-core machine, USER_HZ 100, 2 s apart (400 ticks in all) */

static const char *const STAT_A =
    "cpu  1000 50 300 8000 100 20 30 0 0 0\n"
    "cpu0 500 25 150 4000 50 10 15 0 0 0\n"
    "cpu1 500 25 150 4000 50 10 15 0 0 0\n"
    "intr 50000 10 20 0 0\n"
    "ctxt 200000\n"
    "btime 1700000000\n"
    "processes 5000\n"
    "procs_running 3\n"
    "procs_blocked 1\n"
    "softirq 100 1 2 3\n";
/* + user 100, system 30, idle 50, iowait 10, irq 5, softirq 5 = 200 ticks */
static const char *const STAT_MID =
    "cpu  1100 50 330 8050 110 25 35 0 0 0\n"
    "cpu0 550 25 165 4025 55 12 17 0 0 0\n"
    "cpu1 550 25 165 4025 55 13 18 0 0 0\n"
    "intr 51000 10 20 0 0\n"
    "ctxt 205000\n"
    "procs_running 2\n";
/* from A: + user 200, system 60, idle 100, iowait 20, irq 10, softirq 10 = 400 ticks */
static const char *const STAT_B =
    "cpu  1200 50 360 8100 120 30 40 0 0 0\n"
    "cpu0 600 25 180 4050 60 15 20 0 0 0\n"
    "cpu1 600 25 180 4050 60 15 20 0 0 0\n"
    "intr 52000 10 20 0 0\n"
    "ctxt 210000\n"
    "procs_running 2\n";
static const char *const VMSTAT_A =
    "nr_free_pages 1000\npgpgin 5\npswpin 0\npswpout 4\npgfault 1000\npgmajfault 10\n";
static const char *const VMSTAT_B =
    "nr_free_pages 900\npgpgin 9\npswpin 0\npswpout 8\npgfault 1600\npgmajfault 12\n";

static void test_parse_stat(void **state)
{
    (void)state;
    struct proc_stat st;
    assert_int_equal(procstat_parse_stat(STAT_A, &st), 0);
    assert_int_equal(st.cpu.user, 1000);
    assert_int_equal(st.cpu.nice, 50);
    assert_int_equal(st.cpu.system, 300);
    assert_int_equal(st.cpu.idle, 8000);
    assert_int_equal(st.cpu.iowait, 100);
    assert_int_equal(st.cpu.irq, 20);
    assert_int_equal(st.cpu.softirq, 30);
    assert_int_equal(st.cpu.steal, 0);
    assert_int_equal(st.ncpu, 2);
    assert_int_equal(st.intr, 50000);
    assert_int_equal(st.ctxt, 200000);
    assert_int_equal(st.procs_running, 3);
    assert_int_equal(st.procs_blocked, 1);
    assert_int_equal(proc_cpu_total(&st.cpu), 1000 + 50 + 300 + 8000 + 100 + 20 + 30);
    /* a kernel with only the first four cpu fields */
    assert_int_equal(procstat_parse_stat("cpu 1 2 3 4\nintr 5\nctxt 6\n", &st), 0);
    assert_int_equal(st.cpu.idle, 4);
    assert_int_equal(st.cpu.steal, 0);
    /* malformed: no ctxt, no cpu line, a truncated cpu line, "cpu0" is not "cpu" */
    assert_int_equal(procstat_parse_stat("cpu 1 2 3 4\nintr 5\n", &st), -1);
    assert_int_equal(procstat_parse_stat("intr 5\nctxt 6\n", &st), -1);
    assert_int_equal(procstat_parse_stat("cpu 1 2\nintr 5\nctxt 6\n", &st), -1);
    assert_int_equal(procstat_parse_stat("cpu0 1 2 3 4\nintr 5\nctxt 6\n", &st), -1);
    assert_int_equal(procstat_parse_stat("", &st), -1);
}

static void test_parse_vmstat_loadavg(void **state)
{
    (void)state;
    struct proc_vmstat vm;
    assert_int_equal(procstat_parse_vmstat(VMSTAT_A, &vm), 0);
    assert_int_equal(vm.pgfault, 1000);
    assert_int_equal(vm.pgmajfault, 10);
    assert_int_equal(vm.pswpin, 0);
    assert_int_equal(vm.pswpout, 4);
    /* "pgfault" must not match "pgfault_foo" */
    assert_int_equal(procstat_parse_vmstat("pgfault_x 3\n", &vm), -1);
    assert_int_equal(procstat_parse_vmstat("pgfault 7\n", &vm), 0);
    assert_int_equal(vm.pgfault, 7);
    assert_int_equal(vm.pswpout, 0);

    struct proc_loadavg la;
    assert_int_equal(procstat_parse_loadavg("0.52 0.58 1.25 3/412 12345\n", &la), 0);
    assert_true(fabs(la.load1 - 0.52) < 1e-9);
    assert_true(fabs(la.load15 - 1.25) < 1e-9);
    assert_int_equal(la.running, 3);
    assert_int_equal(la.total, 412);
    assert_int_equal(procstat_parse_loadavg("garbage\n", &la), -1);
    assert_int_equal(procstat_parse_loadavg("0.1 0.2 0.3 4\n", &la), -1);
}

/* Snapshots A (t = 10 s), MID (11 s), B (12 s). */
static void canned(struct metrics_snapshot s[3])
{
    memset(s, 0, 3 * sizeof(*s));
    const char *stat[3] = { STAT_A, STAT_MID, STAT_B };
    const char *vm[3] = { VMSTAT_A, VMSTAT_A, VMSTAT_B };
    const char *la[3] = { "1.00 1.00 1.00 1/300 9\n", "1.50 1.00 1.00 3/300 9\n",
                          "2.00 1.00 1.00 2/300 9\n" };
    double client[3] = { 0, 20, 50 }, server[3] = { 1000, 1040, 1080 };
    /* of which user time: client + 15, + 40; server + 30, + 30 (system + 10, + 10) */
    double client_user[3] = { 0, 15, 40 }, server_user[3] = { 700, 730, 760 };
    for (int i = 0; i < 3; i++) {
        s[i].t = 10 + i;
        assert_int_equal(procstat_parse_stat(stat[i], &s[i].stat), 0);
        assert_int_equal(procstat_parse_vmstat(vm[i], &s[i].vm), 0);
        assert_int_equal(procstat_parse_loadavg(la[i], &s[i].load), 0);
        s[i].client_ticks = client[i];
        s[i].server_ticks = server[i];
        s[i].client_user_ticks = client_user[i];
        s[i].client_sys_ticks = client[i] - client_user[i];
        s[i].server_user_ticks = server_user[i];
        s[i].server_sys_ticks = server[i] - server_user[i];
        s[i].server_procs = 3;
    }
}

static void near(double a, double b, int line)
{
    if (!(fabs(a - b) < 1e-9 * (1 + fabs(b))))
        fail_msg("line %d: %.12g, expected %.12g", line, a, b);
}
#define NEAR(a, b) near((a), (b), __LINE__)

static void test_compute(void **state)
{
    (void)state;
    struct metrics_snapshot s[3];
    canned(s);
    struct metrics_run_info in = { .transactions = 1000, .client_cpu_s = 0.5,
                                   .client_user_s = 0.375, .client_sys_s = 0.125, .threads = 1,
                                   .server = true, .server_procs_busy = 3, .clk_tck = 100 };
    struct run_metrics m;
    metrics_compute(s, 3, &in, &m);
    assert_true(m.available);
    NEAR(m.wall_s, 2);
    assert_int_equal(m.ncpu, 2);
    assert_int_equal(m.cores_used, 2);        /* 1 thread + its backend, 2 cores */
    NEAR(m.intr_per_s, 1000);                 /* 2000 interrupts / 2 s */
    NEAR(m.ctxsw_per_s, 5000);                /* 10000 / 2 s */
    NEAR(m.us_pct, 50);                       /* (200 + 0) / 400 */
    NEAR(m.sys_pct, 20);                      /* (60 + 10 + 10) / 400 */
    NEAR(m.idle_pct, 25);                     /* 100 / 400 */
    NEAR(m.iowait_pct, 5);                    /* 20 / 400 */
    NEAR(m.steal_pct, 0);
    NEAR(m.pgfault_per_s, 300);               /* 600 / 2 s */
    NEAR(m.pgmajfault_per_s, 1);
    NEAR(m.swapin_per_s, 0);
    NEAR(m.swapout_per_s, 2);
    NEAR(m.ctxsw_per_txn, 10);                /* 10000 / 1000 */
    NEAR(m.client_cpu_s, 0.5);                /* the rusage wins over the ticks */
    NEAR(m.client_us_per_txn, 500);           /* 0.5 s / 1000 */
    NEAR(m.server_cpu_s, 0.8);                /* 80 ticks */
    NEAR(m.server_us_per_txn, 800);
    assert_int_equal(m.server_procs, 3);
    NEAR(m.busy_cores, 1.4);                  /* (400 - 100 - 20) / 100 / 2 s */
    NEAR(m.other_cores, 0.75);                /* 1.4 - (0.5 + 0.8) / 2 */
    NEAR(m.other_pct, 37.5);                  /* 0.75 of 2 cores */
    NEAR(m.runq_avg, 1.5);                    /* (3 - 1 + 2 - 1) / 2 */
    NEAR(m.runq_max, 2);
    NEAR(m.load1, 2);
    assert_int_equal(m.flags, METRICS_FLAG_OTHER);
    assert_int_equal(m.npoints, 2);
    NEAR(m.points[0].t, 1);
    NEAR(m.points[0].busy_pct, 70);           /* (200 - 50 - 10) / 200 */
    NEAR(m.points[0].client_cores, 0.2);      /* 20 ticks in 1 s */
    NEAR(m.points[1].server_cores, 0.4);
    NEAR(m.points[1].runq, 1);
    struct strbuf sb = STRBUF_INIT;
    metrics_flags_format(&sb, &m);
    assert_string_equal(sb.buf, "other CPU 37.5% > 10%");
    strbuf_release(&sb);

    /* no rusage: the client from its ticks; no server: NaN, and 1 core used */
    in.client_cpu_s = NAN;
    in.server = false;
    metrics_release(&m);
    metrics_compute(s, 3, &in, &m);
    NEAR(m.client_cpu_s, 0.5);                /* 50 ticks */
    assert_true(isnan(m.server_us_per_txn));
    assert_true(isnan(m.points[0].server_cores));
    assert_int_equal(m.cores_used, 1);
    NEAR(m.other_cores, 1.15);                /* 1.4 - 0.5 / 2 */
    /* run queue 1.5 > 1 core now */
    assert_int_equal(m.flags, METRICS_FLAG_OTHER | METRICS_FLAG_RUNQ);
    assert_int_equal(metrics_field_value(&m, MF_CTXSW_TXN) == 10, 1);
    metrics_release(&m);
}

static void test_flags(void **state)
{
    (void)state;
    struct run_metrics m = { .available = true, .steal_pct = 5.0, .iowait_pct = 10.0,
                             .runq_avg = 1.0, .cores_used = 1, .other_pct = 10.0 };
    assert_int_equal(metrics_flags(&m), 0); /* at the thresholds: not above */
    m.steal_pct = 5.1;
    m.iowait_pct = 12;
    assert_int_equal(metrics_flags(&m), METRICS_FLAG_STEAL | METRICS_FLAG_IOWAIT);
    m.flags = metrics_flags(&m);
    struct strbuf sb = STRBUF_INIT;
    metrics_flags_format(&sb, &m);
    assert_string_equal(sb.buf, "steal 5.1% > 5%; iowait 12.0% > 10%");
    strbuf_release(&sb);
    m.available = false;
    assert_int_equal(metrics_flags(&m), 0);
}

static void test_json_round_trip(void **state)
{
    (void)state;
    struct metrics_snapshot s[3];
    canned(s);
    struct metrics_run_info in = { .transactions = 1000, .client_cpu_s = 0.5,
                                   .client_user_s = 0.375, .client_sys_s = 0.125, .threads = 1,
                                   .server = true, .server_procs_busy = 3, .clk_tck = 100 };
    struct run_metrics m, back;
    metrics_compute(s, 3, &in, &m);
    char *text = metrics_json_text(&m);
    assert_int_equal(metrics_from_json(text, &back), 0);
    assert_true(back.available);
    for (int f = 0; f < MF_COUNT; f++)
        NEAR(metrics_field_value(&back, (enum metrics_field)f),
             metrics_field_value(&m, (enum metrics_field)f));
    NEAR(back.server_user_cpu_s, 0.6);            /* the split's seconds too */
    NEAR(back.client_sys_cpu_s, 0.125);
    assert_int_equal(back.server_procs, 3);
    assert_int_equal(back.flags, m.flags);
    assert_int_equal(back.npoints, 2);
    NEAR(back.points[1].server_cores, 0.4);
    free(text);
    metrics_release(&back);

    /* unavailable, a NaN field, garbage */
    struct run_metrics u = { .note = (char *)"cannot read /x/stat" };
    text = metrics_json_text(&u);
    assert_int_equal(metrics_from_json(text, &back), 0);
    assert_false(back.available);
    assert_string_equal(back.note, "cannot read /x/stat");
    assert_true(isnan(metrics_field_value(&back, MF_INTR_S)));
    free(text);
    metrics_release(&back);
    assert_int_equal(metrics_from_json("[1]", &back), -1);
    assert_int_equal(metrics_from_json("not json", &back), -1);
    assert_int_equal(metrics_from_json(NULL, &back), -1);
    metrics_release(&m);
}

/* The user / system split of the client's and the server's CPU (worked out from canned():
 * client 50 ticks, 40 of them user; server 80 ticks, 60 of them user; 1000 transactions). */
static void test_cpu_split(void **state)
{
    (void)state;
    struct metrics_snapshot s[3];
    canned(s);
    struct metrics_run_info in = { .transactions = 1000, .client_cpu_s = 0.5,
                                   .client_user_s = 0.375, .client_sys_s = 0.125, .threads = 1,
                                   .server = true, .server_procs_busy = 3, .clk_tck = 100 };
    struct run_metrics m;
    metrics_compute(s, 3, &in, &m);
    NEAR(m.client_user_cpu_s, 0.375);          /* the rusage's split */
    NEAR(m.client_sys_cpu_s, 0.125);
    NEAR(m.client_user_us_per_txn, 375);
    NEAR(m.client_sys_us_per_txn, 125);
    NEAR(m.server_user_cpu_s, 0.6);            /* 60 ticks */
    NEAR(m.server_sys_cpu_s, 0.2);             /* 20 ticks */
    NEAR(m.server_user_us_per_txn, 600);
    NEAR(m.server_sys_us_per_txn, 200);
    NEAR(m.server_user_us_per_txn + m.server_sys_us_per_txn, m.server_us_per_txn);
    NEAR(metrics_field_value(&m, MF_SERVER_USER_US_TXN), 600);
    NEAR(metrics_field_value(&m, MF_SERVER_SYS_US_TXN), 200);
    NEAR(metrics_field_value(&m, MF_CLIENT_USER_US_TXN), 375);
    NEAR(metrics_field_value(&m, MF_CLIENT_SYS_US_TXN), 125);
    assert_string_equal(metrics_field_key(MF_SERVER_USER_US_TXN), "server_user_cpu_us_per_txn");
    assert_string_equal(metrics_field_key(MF_SERVER_SYS_US_TXN), "server_sys_cpu_us_per_txn");
    assert_string_equal(metrics_field_title(MF_CLIENT_SYS_US_TXN), "CPU us/txn client sys");
    /* the seed-002 summary fields are where they were */
    assert_int_equal(MF_SUMMARY, MF_SERVER_US_TXN + 1);
    assert_true(MF_SERVER_USER_US_TXN >= MF_SUMMARY);
    metrics_release(&m);

    /* no rusage: the client's split from its ticks (40 user, 10 system); no server: NAN */
    in.client_cpu_s = in.client_user_s = in.client_sys_s = NAN;
    in.server = false;
    metrics_compute(s, 3, &in, &m);
    NEAR(m.client_user_cpu_s, 0.4);
    NEAR(m.client_sys_cpu_s, 0.1);
    NEAR(m.client_sys_us_per_txn, 100);
    assert_true(isnan(m.server_user_cpu_s));
    assert_true(isnan(m.server_sys_us_per_txn));
    metrics_release(&m);

    /* a server tree whose system time went backwards (a process vanished unreaped): the
     * total is clamped at its delta (user 20 - system 10 = 10 ticks), the parts add up to it */
    in.server = true;
    s[2].server_user_ticks = 720;
    s[2].server_sys_ticks = 290;
    s[2].server_ticks = 1010;
    metrics_compute(s, 3, &in, &m);
    NEAR(m.server_cpu_s, 0.1);
    NEAR(m.server_user_cpu_s, 0.1);
    NEAR(m.server_sys_cpu_s, 0);
    metrics_release(&m);
    /* ... and a total that went backwards: 0, split 0 + 0 */
    s[2].server_user_ticks = 690;
    s[2].server_ticks = 980;
    metrics_compute(s, 3, &in, &m);
    NEAR(m.server_cpu_s, 0);
    NEAR(m.server_user_cpu_s, 0);
    NEAR(m.server_sys_cpu_s, 0);
    metrics_release(&m);
}

/* A run recorded before the split: its JSON lacks the new keys; they read back as NAN, never
 * 0, and every other figure as it was. */
static void test_json_before_split(void **state)
{
    (void)state;
    static const char *const split_keys[] = {
        "client_user_cpu_s", "client_sys_cpu_s", "server_user_cpu_s", "server_sys_cpu_s",
        "client_user_us_per_txn", "client_sys_us_per_txn", "server_user_us_per_txn",
        "server_sys_us_per_txn",
    };
    struct metrics_snapshot s[3];
    canned(s);
    struct metrics_run_info in = { .transactions = 1000, .client_cpu_s = 0.5,
                                   .client_user_s = 0.375, .client_sys_s = 0.125, .threads = 1,
                                   .server = true, .server_procs_busy = 3, .clk_tck = 100 };
    struct run_metrics m, back;
    metrics_compute(s, 3, &in, &m);
    json_t *o = metrics_to_json(&m);
    for (size_t i = 0; i < ARRAY_SIZE(split_keys); i++) {
        assert_true(json_is_number(json_object_get(o, split_keys[i])));  /* stored now */
        assert_int_equal(json_object_del(o, split_keys[i]), 0);
    }
    char *text = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    assert_int_equal(metrics_from_json(text, &back), 0);
    assert_true(back.available);
    assert_true(isnan(back.client_user_cpu_s));
    assert_true(isnan(back.client_sys_cpu_s));
    assert_true(isnan(back.server_user_cpu_s));
    assert_true(isnan(back.server_sys_cpu_s));
    assert_true(isnan(back.client_user_us_per_txn));
    assert_true(isnan(back.client_sys_us_per_txn));
    assert_true(isnan(back.server_user_us_per_txn));
    assert_true(isnan(back.server_sys_us_per_txn));
    for (int f = MF_SERVER_USER_US_TXN; f <= MF_SERVER_SYS_US_TXN; f++)
        assert_true(isnan(metrics_field_value(&back, (enum metrics_field)f)));
    NEAR(back.server_us_per_txn, 800);
    NEAR(back.client_us_per_txn, 500);
    free(text);
    metrics_release(&back);
    metrics_release(&m);
}

/* ---- the sampler on a fake procfs */

static void put(const char *root, const char *rel, const char *text)
{
    char *path = xasprintf("%s/%s", root, rel);
    char *dir = xstrdup(path);
    *strrchr(dir, '/') = '\0';
    assert_int_equal(mkdir_p(dir), 0);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    free(dir);
    free(path);
}

/* ROOT/PID/stat of a process with these times (and, with_task, its task/PID/children). */
static void proc(const char *root, int pid, int ppid, int utime, int stime, int cutime,
                 int cstime, const char *children, int with_task)
{
    char rel[64], *text = xasprintf("%d (p %d) S %d 1 1 0 -1 0 0 0 0 0 %d %d %d %d 20 0 1 0 1 "
                                    "0 0\n", pid, pid, ppid, utime, stime, cutime, cstime);
    snprintf(rel, sizeof(rel), "%d/stat", pid);
    put(root, rel, text);
    free(text);
    if (with_task) {
        snprintf(rel, sizeof(rel), "%d/task/%d/children", pid, pid);
        put(root, rel, children ? children : "");
    }
}

static void gone(const char *root, int pid)
{
    char *p = xasprintf("%s/%d", root, pid);
    remove_tree(p);
    free(p);
}

static void machine(const char *root, const char *stat, const char *vm, const char *la)
{
    put(root, "stat", stat);
    put(root, "vmstat", vm);
    put(root, "loadavg", la);
}

static void pause_interval(void)
{
    struct timespec ts = { 0, (long)(METRICS_INTERVAL_S * 1e9) + 50000000 };
    nanosleep(&ts, NULL);
}

/* Server 200 with backends 201, 202; 201 forks 203. At the last snapshot 201 and 202 have
 * exited and been reaped by 200 (their 8 + 7 ticks are in 200's cutime), 203 is gone with
 * nobody in the tree to reap it (its parent 201 went first: its last value stays), and the
 * client (100) has exited (its last value stays too). */
static void tree_run(int with_task)
{
    char *root = xasprintf("%s/proc%d", tmpdir, with_task);
    machine(root, STAT_A, VMSTAT_A, "1.0 1.0 1.0 2/100 1\n");
    proc(root, 100, 1, 0, 0, 0, 0, NULL, with_task);
    proc(root, 200, 1, 8, 2, 0, 0, "201 202 ", with_task);    /* own 10 */
    proc(root, 201, 200, 4, 1, 0, 0, "", with_task);          /* own 5 */
    proc(root, 202, 200, 3, 0, 0, 0, "", with_task);          /* own 3: tree 18 (user 15) */
    proc(root, 999, 1, 500, 0, 0, 0, "", with_task);          /* not ours */
    struct metrics_sampler *ms = metrics_sampler_new(root, 1);
    metrics_sampler_set_server(ms, 200);
    metrics_sampler_start(ms, 100);

    pause_interval();
    machine(root, STAT_MID, VMSTAT_A, "1.0 1.0 1.0 3/100 1\n");
    proc(root, 100, 1, 15, 5, 0, 0, NULL, with_task);         /* client 20 (user 15) */
    proc(root, 200, 1, 10, 2, 0, 0, "201 202 ", with_task);   /* 12 */
    proc(root, 201, 200, 6, 2, 0, 0, "203 ", with_task);      /* 8 */
    proc(root, 202, 200, 5, 1, 0, 0, "", with_task);          /* 6 */
    proc(root, 203, 201, 4, 0, 0, 0, "", with_task);          /* 4: tree 30 */
    metrics_sampler_tick(ms);

    machine(root, STAT_B, VMSTAT_B, "2.0 1.0 1.0 2/100 1\n");
    gone(root, 100);
    gone(root, 201);
    gone(root, 202);
    gone(root, 203);
    proc(root, 200, 1, 11, 2, 12, 3, "", with_task);          /* 13 + reaped 15 = 28 */
    /* the tree with a client rusage, the scan without (the client from its ticks) */
    struct rusage ru = { .ru_utime = { 0, 300000 }, .ru_stime = { 0, 100000 } };
    metrics_sampler_stop(ms, with_task ? &ru : NULL);

    struct run_metrics m;
    metrics_sampler_result(ms, 100, &m);
    assert_true(m.available);
    assert_int_equal(m.nsamples, 3);
    /* server: 28 (200 with its reaped children) + 4 (203 kept) - 18 = 14 ticks */
    NEAR(m.server_cpu_s, 0.14);
    NEAR(m.server_us_per_txn, 1400);
    assert_int_equal(m.server_procs, 4);           /* 200, 201, 202 grew; 203 is new */
    /* ... of which user time 11 + 12 + 4 - 15 = 12 ticks, system 2 + 3 - 3 = 2 */
    NEAR(m.server_user_cpu_s, 0.12);
    NEAR(m.server_sys_cpu_s, 0.02);
    NEAR(m.server_user_us_per_txn, 1200);
    NEAR(m.server_sys_us_per_txn, 200);
    if (with_task) {                               /* its rusage: 0.3 s user, 0.1 s system */
        NEAR(m.client_cpu_s, 0.4);
        NEAR(m.client_user_cpu_s, 0.3);
        NEAR(m.client_sys_cpu_s, 0.1);
        NEAR(m.client_sys_us_per_txn, 1000);
    } else {                                       /* its last value, 20 ticks (user 15) */
        NEAR(m.client_cpu_s, 0.2);
        NEAR(m.client_us_per_txn, 2000);
        NEAR(m.client_user_us_per_txn, 1500);
        NEAR(m.client_sys_us_per_txn, 500);
    }
    NEAR(m.us_pct, 50);                            /* STAT_A -> STAT_B */
    NEAR(m.iowait_pct, 5);
    assert_int_equal(m.points[0].server_procs, 5 - 1); /* 200 201 202 203 alive */
    assert_int_equal(m.points[1].server_procs, 1);
    metrics_release(&m);
    metrics_sampler_free(ms);
    free(root);
}

static void test_sampler_tree(void **state)
{
    (void)state;
    tree_run(1);
}

static void test_sampler_scan(void **state)
{
    (void)state;
    tree_run(0); /* no task/children files: the tree comes from scanning the root */
}

static void test_sampler_unreadable(void **state)
{
    (void)state;
    char *root = xasprintf("%s/noproc", tmpdir);
    struct metrics_sampler *ms = metrics_sampler_new(root, 1);
    metrics_sampler_start(ms, 100);
    metrics_sampler_stop(ms, NULL);
    struct run_metrics m;
    metrics_sampler_result(ms, 100, &m);
    assert_false(m.available);
    char *want = xasprintf("cannot read %s/stat: No such file or directory", root);
    assert_string_equal(m.note, want);
    free(want);
    metrics_release(&m);
    metrics_sampler_free(ms);

    /* a /proc/stat of another shape */
    put(root, "stat", "nonsense\n");
    ms = metrics_sampler_new(root, 1);
    metrics_sampler_start(ms, 100);
    metrics_sampler_stop(ms, NULL);
    metrics_sampler_result(ms, 100, &m);
    assert_false(m.available);
    assert_non_null(strstr(m.note, "cannot parse"));
    metrics_release(&m);
    metrics_sampler_free(ms);
    free(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_stat),
        cmocka_unit_test(test_parse_vmstat_loadavg),
        cmocka_unit_test(test_compute),
        cmocka_unit_test(test_flags),
        cmocka_unit_test(test_json_round_trip),
        cmocka_unit_test(test_cpu_split),
        cmocka_unit_test(test_json_before_split),
        cmocka_unit_test(test_sampler_tree),
        cmocka_unit_test(test_sampler_scan),
        cmocka_unit_test(test_sampler_unreadable),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
