/* Unit tests for the precision work beyond the cells: model/placement.c and
 * experiment/pinning.c (CPU lists, --cpu-placement), the CPU time per transaction metric and its paired statistics, and
 * model/machine.c (the machine state, "busier than at calibration", the rounds a target
 * needs and calibrate's recommendation), on synthetic runs with hand-computed values. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <sched.h>

#include <gsl/gsl_statistics_double.h>

#include "experiment_fixtures.h"
#include "model/machine.h"
#include "experiment/pinning.h"
#include "model/placement.h"
#include "model/precision.h"
#include "stats/sequential.h"

static void assert_close(double got, double want, double tol)
{
    if (!(fabs(got - want) <= tol))
        fail_msg("got %.10g, want %.10g (tolerance %g)", got, want, tol);
}

/* ---------------------------------------------------------------- placement */

static void test_cpu_lists(void **state)
{
    (void)state;
    cpu_set_t s;
    char buf[64];
    assert_int_equal(cpu_list_parse("0-3,6", &s), 0);
    assert_int_equal(CPU_COUNT(&s), 5);
    assert_true(CPU_ISSET(3, &s) && CPU_ISSET(6, &s) && !CPU_ISSET(4, &s));
    cpu_list_format(&s, buf, sizeof(buf));
    assert_string_equal(buf, "0-3,6");
    assert_int_equal(cpu_list_parse("5", &s), 0);
    cpu_list_format(&s, buf, sizeof(buf));
    assert_string_equal(buf, "5");
    assert_int_equal(cpu_list_parse("1,2,3,7,8", &s), 0);
    cpu_list_format(&s, buf, sizeof(buf));
    assert_string_equal(buf, "1-3,7-8");
    const char *bad[] = { "", "a", "3-1", "1,", "-1", "1024", "0:1", "1-", "2 " };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (cpu_list_parse(bad[i], &s) != -1)
            fail_msg("\"%s\" accepted as a CPU list", bad[i]);
    /* this process's own affinity, as the bench report's cpus_allowed: pin to the first
     * allowed CPU, read it back, restore */
    cpu_set_t all, one;
    assert_int_equal(sched_getaffinity(0, sizeof(all), &all), 0);
    int first = 0;
    while (!CPU_ISSET(first, &all))
        first++;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
    assert_int_equal(cpu_list_self(buf, sizeof(buf)), 0);
    char want[16];
    snprintf(want, sizeof(want), "%d", first);
    assert_string_equal(buf, want);
    assert_int_equal(sched_setaffinity(0, sizeof(all), &all), 0);
    char all_str[64];
    cpu_list_format(&all, all_str, sizeof(all_str));
    assert_int_equal(cpu_list_self(buf, sizeof(buf)), 0);
    assert_string_equal(buf, all_str);
}

static void test_placement_modes(void **state)
{
    (void)state;
    cpu_set_t allowed;
    struct cpu_placement p;
    char buf[300];
    assert_int_equal(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
    int first = -1;
    for (int c = 0; c < CPU_SETSIZE && first < 0; c++)
        if (CPU_ISSET(c, &allowed))
            first = c;

    assert_int_equal(cpu_placement_parse("off", &p), 0);
    assert_false(p.active);
    assert_null(cpu_placement_client(&p, true, 1));
    assert_null(cpu_placement_server(&p));
    assert_null(cpu_placement_json(&p));
    cpu_placement_describe(&p, true, buf, sizeof(buf));
    assert_string_equal(buf, "off");

    assert_int_equal(cpu_placement_parse("auto", &p), 0);
    if (CPU_COUNT(&allowed) < 2) {
        assert_false(p.active);
        cpu_placement_describe(&p, true, buf, sizeof(buf));
        assert_string_equal(buf, "off (1 CPU allowed)");
    } else {
        assert_true(p.active);
        assert_int_equal(CPU_COUNT(&p.client), 1);
        assert_true(CPU_ISSET(first, &p.client));
        /* the server: every other allowed CPU */
        assert_int_equal(CPU_COUNT(&p.server), CPU_COUNT(&allowed) - 1);
        assert_false(CPU_ISSET(first, &p.server));
        assert_non_null(cpu_placement_client(&p, true, 1));
        assert_null(cpu_placement_client(&p, true, 2));  /* SQLite threads would share a CPU */
        assert_non_null(cpu_placement_client(&p, false, 4));  /* a server's client: pinned */
        assert_ptr_equal(cpu_placement_server(&p), &p.server);
        /* the settings value and back */
        json_t *j = cpu_placement_json(&p);
        struct cpu_placement q = { .given = true };
        cpu_placement_from_json(j, &q);
        json_decref(j);
        assert_true(q.active && q.given && q.mode == PLACEMENT_AUTO);
        assert_true(CPU_EQUAL(&q.client, &p.client) && CPU_EQUAL(&q.server, &p.server));
        char want[64];
        snprintf(want, sizeof(want), "client on CPU %d (auto", first);
        cpu_placement_describe(&p, false, buf, sizeof(buf));
        assert_memory_equal(buf, want, strlen(want));
        /* an explicit client list: the server gets the rest */
        char spec[16];
        snprintf(spec, sizeof(spec), "%d", first);
        assert_int_equal(cpu_placement_parse(spec, &p), 0);
        assert_true(p.active && p.mode == PLACEMENT_LIST);
        assert_int_equal(CPU_COUNT(&p.server), CPU_COUNT(&allowed) - 1);
        assert_non_null(cpu_placement_client(&p, true, 2));  /* as the user asked */
    }
    struct cpu_placement n = { 0 };  /* a config no CLI resolved: off */
    assert_null(cpu_placement_client(&n, true, 1));
    cpu_placement_from_json(NULL, &n);  /* settings without the key: off */
    assert_false(n.active);
    assert_int_equal(cpu_placement_parse("0:zz", &p), -1);
    assert_int_equal(cpu_placement_parse("1000", &p), -1);  /* not an allowed CPU */
}

/* ---------------------------------------------------------------- CPU time per transaction */

static void set_cpu(struct run_result *r, double client_us, double server_us)
{
    r->metrics.available = true;
    r->metrics.client_us_per_txn = client_us;
    r->metrics.server_us_per_txn = server_us;
}

static void test_cpu_metric_value(void **state)
{
    (void)state;
    struct run_result r;
    memset(&r, 0, sizeof(r));
    assert_true(isnan(experiment_metric_value(&r, METRIC_CPU_US)));  /* no metrics */
    set_cpu(&r, 10, 5);
    assert_close(experiment_metric_value(&r, METRIC_CPU_US), 15, 1e-12);
    set_cpu(&r, 10, NAN);  /* SQLite: the client alone */
    assert_close(experiment_metric_value(&r, METRIC_CPU_US), 10, 1e-12);
    set_cpu(&r, NAN, 5);
    assert_true(isnan(experiment_metric_value(&r, METRIC_CPU_US)));
    assert_string_equal(experiment_metric_key(METRIC_CPU_US), "cpu_us_per_txn");
    assert_true(experiment_metric_lower_is_better(METRIC_CPU_US));
}

/* base 20 us/txn every round; pgo 20 * f[k]; tps unrelated (noisy) */
static void cpu_pairs(struct synth *x, const double *f, int rounds)
{
    synthetic_config(&x->cfg, x->v, rounds);
    x->cfg.nthreads = 1;
    memset(&x->res, 0, sizeof(x->res));
    for (int k = 1; k <= rounds; k++) {
        add_run(&x->res, 0, 1, k, 100 + 13 * k, 2, 4);
        set_cpu(&x->res.runs[x->res.nruns - 1], 15, 5);
        add_run(&x->res, 1, 1, k, 100 - 7 * k, 2, 4);
        set_cpu(&x->res.runs[x->res.nruns - 1], 15 * f[k - 1], 5 * f[k - 1]);
    }
}

static void test_cpu_change_and_target(void **state)
{
    (void)state;
    struct synth x;
    const double f[] = { 0.95, 0.96, 0.94, 0.95, 0.95, 0.96 };
    cpu_pairs(&x, f, 6);
    struct experiment_precision p;
    experiment_precision_cell(&x.cfg, &x.res, METRIC_CPU_US, 1, 0, 1, &p);
    double m = 0;
    for (int k = 0; k < 6; k++)
        m += log(f[k]) / 6;
    assert_int_equal(p.rounds, 6);
    assert_true(p.stats);
    assert_close(p.ratio, exp(m), 1e-12);
    assert_true(p.ci_lo < p.ratio && p.ratio < p.ci_hi && p.ci_hi < 1);
    /* the change as the reports show it: 5% less CPU is an improvement */
    struct experiment_change ch;
    int w = 0, t = 1;
    assert_int_equal(experiment_change_cfg(&x.cfg, &x.res, METRIC_CPU_US, 1, &w, &t, 1, 7, &ch), 0);
    double lo, hi, pct = experiment_change_pct(&ch, &lo, &hi);
    assert_true(ch.stats && ch.lower_is_better);
    assert_true(pct > 3 && pct < 7);
    /* --target-ci on CPU time: the cells counted are CPU's (tps here is far too noisy) */
    x.cfg.target_ci = 3;
    x.cfg.cs_rounds = 10;
    int reached;
    x.cfg.target_metric = METRIC_TPS;
    assert_int_equal(experiment_target_cells(&x.cfg, &x.res, -1, &reached, NULL), 1);
    assert_int_equal(reached, 0);
    x.cfg.target_metric = METRIC_CPU_US;
    assert_int_equal(experiment_target_cells(&x.cfg, &x.res, -1, &reached, NULL), 1);
    assert_int_equal(reached, 1);
    assert_string_equal(experiment_target_stop_reason(&x.cfg, &x.res), "target reached");
    assert_string_equal(experiment_target_metric_name(&x.cfg), "CPU time per transaction");
    /* the settings record the metric only when it is not tps */
    json_t *set = json_object();
    experiment_measurement_json(set, &x.cfg);
    assert_string_equal(json_string_value(json_object_get(json_object_get(set, "target_ci"), "metric")), "cpu");
    x.cfg.target_metric = METRIC_TPS;
    json_object_clear(set);
    experiment_measurement_json(set, &x.cfg);
    assert_null(json_object_get(json_object_get(set, "target_ci"), "metric"));
    assert_null(json_object_get(set, "cpu_placement"));  /* not resolved: no key */
    json_decref(set);
    experiment_result_release(&x.res);
}

/* ---------------------------------------------------------------- machine state */

static void test_busier(void **state)
{
    (void)state;
    struct machine_state cal = { .load1 = 0.3, .steal_pct = 0.1, .other_pct = 2,
                                 .cv_tps_pct = 2.0, .client_share = 0.95 };
    struct machine_state now = cal;
    struct strbuf why = STRBUF_INIT;
    assert_int_equal(machine_busier(&cal, &now, &why), 0);
    assert_int_equal((int)why.len, 0);
    now.load1 = 0.7;  /* +0.4: within the wobble */
    assert_int_equal(machine_busier(&cal, &now, NULL), 0);
    now.load1 = 2.3;
    assert_int_equal(machine_busier(&cal, &now, &why), 1);
    assert_string_equal(why.buf, "load1 2.30 vs 0.30 at calibration");
    now.client_share = 0.70;  /* 0.70 < 0.75 x 0.95 */
    now.other_pct = 7.5;      /* +5.5 points */
    now.steal_pct = 5.0;      /* +4.9 points: not yet */
    now.cv_tps_pct = 3.5;     /* 1.75x and +1.5 points */
    strbuf_reset(&why);
    assert_int_equal(machine_busier(&cal, &now, &why), 4);
    assert_string_equal(why.buf, "load1 2.30 vs 0.30 at calibration; other work 7.5% of the CPU "
                                 "vs 2.0%; CV of tps 3.5% vs 2.0%; the client got 70% of a CPU vs 95%");
    /* a load of 14 at calibration: +2 is a quarter or less, not busier */
    cal.load1 = 14;
    now = cal;
    now.load1 = 16;
    assert_int_equal(machine_busier(&cal, &now, NULL), 0);
    /* unknown on one side: not compared */
    now.load1 = NAN;
    now.client_share = 0.1;
    cal.client_share = NAN;
    assert_int_equal(machine_busier(&cal, &now, NULL), 0);
    strbuf_release(&why);
}

static void test_state_of_runs(void **state)
{
    (void)state;
    struct synth x;
    const double f[] = { 1, 1, 1 };
    cpu_pairs(&x, f, 3);
    static const double load[] = { 1, 3, 2, 9, 4, 5 }, other[] = { 5, 1, 2, 3, 4, 6 };
    for (int i = 0; i < 6; i++) {
        struct run_metrics *m = &x.res.runs[i].metrics;
        m->load1 = load[i];
        m->other_pct = other[i];
        m->steal_pct = i == 0 ? 10 : 0;
        m->wall_s = 10;
        m->client_cpu_s = 9 - (i % 2);  /* base 9 s of 10, pgo 8 s */
    }
    x.res.runs[5].metrics.available = false;  /* left out */
    struct machine_state s;
    machine_state_of(&x.cfg, &x.res, &s);
    assert_int_equal(s.nruns, 5);
    assert_close(s.load1, 3, 1e-12);       /* median of 1 3 2 9 4 */
    assert_close(s.other_pct, 3, 1e-12);   /* median of 5 1 2 3 4 */
    assert_close(s.steal_pct, 0, 1e-12);
    assert_close(s.client_share, 0.9, 1e-12);  /* median of .9 .8 .9 .8 .9 */
    /* the CV of tps: rms over the two cells of sd / mean */
    double a[] = { 113, 126, 139 }, b[] = { 93, 86, 79 };
    double ca = gsl_stats_sd(a, 1, 3) / gsl_stats_mean(a, 1, 3);
    double cb = gsl_stats_sd(b, 1, 3) / gsl_stats_mean(b, 1, 3);
    assert_close(s.cv_tps_pct, sqrt((ca * ca + cb * cb) / 2) * 100, 1e-9);
    /* a server variant's client is not single-threaded SQLite: no share */
    x.v[0].kind = x.v[1].kind = VARIANT_SERVER;
    machine_state_of(&x.cfg, &x.res, &s);
    assert_true(isnan(s.client_share));
    experiment_result_release(&x.res);
}

/* ---------------------------------------------------------------- recommendation */

static void test_rounds_for(void **state)
{
    (void)state;
    double goal = log1p(0.02);
    for (double sd = 0.005; sd < 0.2; sd *= 1.7) {
        int n = machine_rounds_for(sd, 2);
        assert_true(n >= STATS_CS_MIN_ROUNDS && n < MACHINE_ROUNDS_MAX);
        assert_true(sd * stats_cs_factor(n, 0.05, n) <= goal);
        if (n > STATS_CS_MIN_ROUNDS && !(sd * stats_cs_factor(n - 1, 0.05, n - 1) > goal))
            fail_msg("sd %g: %d rounds is not the least", sd, n);
    }
    assert_int_equal(machine_rounds_for(0, 2), STATS_CS_MIN_ROUNDS);
    assert_int_equal(machine_rounds_for(5, 2), INT32_MAX);  /* hopeless */
    assert_int_equal(machine_rounds_for(NAN, 2), INT32_MAX);
    /* quadruple the variance, about four times the rounds */
    int n1 = machine_rounds_for(0.02, 2), n2 = machine_rounds_for(0.04, 2);
    assert_true(n2 >= 4 * n1 - 4 && n2 <= 4 * n1 + 4);
}

/* A run of t seconds whose per-second tps are iv[0..t) (its "intervals"), started at `at`. */
static void interval_run(struct experiment_result *res, int v, int round, const double *iv,
                         int t, double at)
{
    add_run(res, v, 1, round, iv[0], 2, 4);
    struct run_result *r = &res->runs[res->nruns - 1];
    struct strbuf sb = STRBUF_INIT;
    strbuf_addstr(&sb, "{\"intervals\":[");
    for (int i = 0; i < t; i++)
        strbuf_addf(&sb, "%s{\"tps\":%.17g}", i ? "," : "", iv[i]);
    strbuf_addstr(&sb, "]}");
    free(r->json);
    r->json = strbuf_detach(&sb);
    r->started_at = at;
}

static void test_recommend(void **state)
{
    (void)state;
    struct synth x;
    synthetic_config(&x.cfg, x.v, 4);
    x.cfg.nthreads = 1;
    x.cfg.time_s = 3;
    memset(&x.res, 0, sizeof(x.res));
    /* round k: A' is f_k times A in its first second, equal afterwards; every run 3.5 s after
     * the one before (0.5 s besides --time) */
    const double f[] = { 1.2, 0.8, 1.1, 0.9 };
    double at = 1000;
    for (int k = 1; k <= 4; k++) {
        double a[] = { 100, 100, 100 }, b[] = { 100 * f[k - 1], 100, 100 };
        interval_run(&x.res, 0, k, a, 3, at);
        interval_run(&x.res, 1, k, b, 3, at + 3.5);
        at += 7;
    }
    struct machine_recommendation rec;
    machine_recommend(&x.cfg, &x.res, 2, &rec);
    assert_int_equal(rec.ncand, 3);  /* 1, 2, 3 s: up to the calibration's --time */
    assert_close(rec.overhead_s, 0.5, 1e-9);
    for (int i = 0; i < 3; i++) {
        int L = i + 1;
        double d[4];
        for (int k = 0; k < 4; k++)
            d[k] = log((100 * f[k] + 100 * (L - 1)) / (100.0 * L));
        double sd = gsl_stats_sd(d, 1, 4);
        assert_close(rec.cand[i].run_s, L, 0);
        assert_close(rec.cand[i].sd_log, sd, 1e-12);
        assert_int_equal(rec.cand[i].rounds, machine_rounds_for(sd, 2));
        assert_close(rec.cand[i].wall_s, rec.cand[i].rounds * 2.0 * (L + 0.5), 1e-9);
    }
    /* longer runs dilute the first second: the 3 s runs are cheapest overall */
    assert_true(rec.ok);
    assert_close(rec.run_s, 3, 0);
    assert_int_equal(rec.rounds, rec.cand[2].rounds);
    assert_int_equal(rec.max_rounds, 2 * rec.rounds);
    for (int i = 0; i < 3; i++)
        assert_true(rec.wall_s <= rec.cand[i].wall_s);

    /* The same calibration read back from the store (every run "resumed", as
     * experiment_load gives it to --from-calibration), with runs 3.3 s apart (overhead 0.3 s,
     * not the 0.5 s default): the same overhead and recommendation as live; a resume
     * boundary inside the runs (a 100 s gap) is left out of the median. */
    struct machine_recommendation live, loaded, resumed;
    for (int i = 0; i < x.res.nruns; i++)
        x.res.runs[i].started_at = 1000 + 3.3 * i;
    machine_recommend(&x.cfg, &x.res, 2, &live);
    assert_close(live.overhead_s, 0.3, 1e-9);
    x.res.resumed = x.res.nruns;
    machine_recommend(&x.cfg, &x.res, 2, &loaded);
    assert_close(loaded.overhead_s, 0.3, 1e-9);
    assert_close(loaded.run_s, live.run_s, 0);
    assert_int_equal(loaded.rounds, live.rounds);
    assert_close(loaded.wall_s, live.wall_s, 1e-9);
    for (int i = 4; i < x.res.nruns; i++)
        x.res.runs[i].started_at += 100;
    x.res.resumed = 4;
    machine_recommend(&x.cfg, &x.res, 2, &resumed);
    assert_close(resumed.overhead_s, 0.3, 1e-9);

    /* too few rounds: no recommendation, and why */
    experiment_result_release(&x.res);
    memset(&x.res, 0, sizeof(x.res));
    double a[] = { 100, 100, 100 };
    interval_run(&x.res, 0, 1, a, 3, 0);
    interval_run(&x.res, 1, 1, a, 3, 3.5);
    machine_recommend(&x.cfg, &x.res, 2, &rec);
    assert_false(rec.ok);
    assert_int_equal(rec.ncand, 0);
    assert_non_null(strstr(rec.why, "at least 3 paired rounds"));
    experiment_result_release(&x.res);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpu_lists),
        cmocka_unit_test(test_placement_modes),
        cmocka_unit_test(test_cpu_metric_value),
        cmocka_unit_test(test_cpu_change_and_target),
        cmocka_unit_test(test_busier),
        cmocka_unit_test(test_state_of_runs),
        cmocka_unit_test(test_rounds_for),
        cmocka_unit_test(test_recommend),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
