/* Unit tests of the trainer matrix of a PGO experiment (src/report/trainers.c): one row per
 * trainer and a column per workload plus overall, the estimates (per workload the ratio of
 * medians, overall their geometric mean), the exam marks, the best trainer, one round, and no
 * matrix for one trainer; synthetic runs with known medians; the trainers of a stored pgo
 * experiment (report_trainers_of). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "experiment/experiment.h"
#include "report/trainers.h"
#include "util/strbuf.h"
#include "util/util.h"

#include "experiment_fixtures.h"

#include <stdlib.h>
#include <string.h>

/* Variants base, pgo-a (trainer oltp_read_only), pgo-b (trainer oltp_point_select+
 * oltp_write_only), workloads oltp_read_only and oltp_point_select, 1 thread, 3 rounds of
 * tps M-1, M, M+1 with the medians M: base 100 | 100, pgo-a 110 | 105, pgo-b 102 | 120. */
static void test_trainer_matrix(void **state)
{
    (void)state;
    static char *wl[] = { "oltp_read_only", "oltp_point_select", NULL };
    static int one[] = { 1 };
    static const double median[3][2] = { { 100, 100 }, { 110, 105 }, { 102, 120 } };
    struct experiment_config cfg;
    struct variant v[3];
    struct experiment_result res;
    synthetic_config(&cfg, v, 3);
    memset(&v[2], 0, sizeof(v[2]));
    v[1].name = "pgo-a";
    v[2].name = "pgo-b";
    v[2].library = "/opt/b/libsqlite3.so";
    cfg.nvariants = 3;
    cfg.workloads = wl;
    cfg.nworkloads = 2;
    cfg.threads = one;
    cfg.nthreads = 1;
    memset(&res, 0, sizeof(res));
    for (int k = 1; k <= 3; k++)
        for (int w = 0; w < 2; w++)
            for (int i = 0; i < 3; i++) {
                add_run(&res, i, 1, k, median[i][w] + (k - 2), 1, 2);
                res.runs[res.nruns - 1].workload = w;
            }
    const char *trainer_of[] = { NULL, "oltp_read_only", "oltp_point_select+oltp_write_only" };
    struct strbuf sb = STRBUF_INIT;
    strbuf_init(&sb, 0);
    report_trainers(&sb, &cfg, &res, trainer_of);
    const char *text = sb.buf;

    /* header, separator and exactly one row per trainer: no empty row */
    int lines = 0;
    for (const char *l = strstr(text, "\n|"); l; l = strstr(l + 1, "\n|"))
        lines++;
    assert_int_equal(lines, 2 + 2);
    assert_int_equal(count_rows(text, "oltp_read_only"), 1);
    assert_int_equal(count_rows(text, "oltp_point_select+oltp_write_only"), 1);
    const char *head = strstr(text, " trainer |");
    assert_non_null(head);
    char *hl = xstrndup(head, strcspn(head, "\n"));
    const char *c1 = strstr(hl, " oltp_read_only |"), *c2 = strstr(hl, " oltp_point_select |"),
               *c3 = strstr(hl, " overall |");
    assert_true(c1 && c2 && c3 && c1 < c2 && c2 < c3);
    free(hl);
    /* the estimates: +10.0 | +5.0 | geomean sqrt(1.1 * 1.05) - 1 = +7.5; +2.0 | +20.0 | +10.6;
     * the exam marks on the trainer's own workloads only */
    assert_row(text, "Trainer matrix", "oltp_read_only", "+10.0%", "* |", "+5.0%) |", "+7.5%");
    assert_row(text, "Trainer matrix", "oltp_point_select+oltp_write_only", "+2.0%) |",
               "+20.0%", "+10.6%");
    char *row = table_row(text, "Trainer matrix", "oltp_point_select+oltp_write_only");
    assert_non_null(strstr(row, "+20.0%) * |"));
    assert_null(strstr(row, "+2.0%) *"));
    free(row);
    assert_non_null(strstr(text, "Best trainer (highest estimate): oltp_read_only: oltp_read_only; "
                                 "oltp_point_select: oltp_point_select+oltp_write_only; overall: "
                                 "oltp_point_select+oltp_write_only\n"));
    assert_non_null(strstr(text, "* the trainer is (or includes) the measured workload"));

    experiment_result_release(&res);

    /* 1 round: no statistics, but the estimates the best trainer is named by are shown */
    memset(&res, 0, sizeof(res));
    cfg.rounds = 1;
    for (int w = 0; w < 2; w++)
        for (int i = 0; i < 3; i++) {
            add_run(&res, i, 1, 1, median[i][w], 1, 2);
            res.runs[res.nruns - 1].workload = w;
        }
    strbuf_reset(&sb);
    report_trainers(&sb, &cfg, &res, trainer_of);
    text = sb.buf;
    assert_row(text, "Trainer matrix", "oltp_read_only", "+10.0% (1 round: no CI) *",
               "+5.0% (1 round: no CI) |", "+7.5% (1 round: no CI) |");
    assert_row(text, "Trainer matrix", "oltp_point_select+oltp_write_only",
               "+20.0% (1 round: no CI) *");

    /* one trainer: no matrix */
    strbuf_reset(&sb);
    const char *one_trainer[] = { NULL, "oltp_read_only", NULL };
    report_trainers(&sb, &cfg, &res, one_trainer);
    assert_int_equal(sb.len, 0);
    strbuf_release(&sb);
    experiment_result_release(&res);
}

static void test_trainer_includes(void **state)
{
    (void)state;
    assert_true(trainer_includes("oltp_read_only", "oltp_read_only"));
    assert_true(trainer_includes("oltp_point_select+oltp_read_only", "oltp_read_only"));
    assert_false(trainer_includes("oltp_read_only_x", "oltp_read_only"));
    assert_false(trainer_includes("oltp_read", "oltp_read_only"));
    assert_false(trainer_includes("suite", "oltp_read_only"));
}

/* The trainers of a stored pgo experiment, from its settings and variant names: pgo-TRAINER
 * when there are plain pgo builds (pgo+lto-TRAINER then has none), pgo+lto-TRAINER when there
 * are only those, nothing with fewer than two trainers. */
static const char **trainers_of(const char *settings, const char *const *names, int n)
{
    static struct variant v[4];
    static struct experiment_loaded l;
    memset(&l, 0, sizeof(l));
    for (int i = 0; i < n; i++)
        v[i].name = names[i];
    l.cfg.variants = v;
    l.cfg.nvariants = n;
    l.exp.settings_json = settings;
    return report_trainers_of(&l);
}

static void test_trainers_of(void **state)
{
    (void)state;
    const char *two = "{\"pgo\": {\"train\": [\"oltp_read_only\", \"a+b\"]}}";
    const char *const plain[] = { "baseline", "lto", "pgo-oltp_read_only", "pgo+lto-a+b" };
    const char **of = trainers_of(two, plain, 4);
    assert_null(of[0]);
    assert_null(of[1]);
    assert_string_equal(of[2], "oltp_read_only");
    assert_null(of[3]); /* pgo+lto builds are not rows when plain pgo builds are */
    free(of);
    const char *const lto[] = { "baseline", "pgo+lto-oltp_read_only", "pgo+lto-a+b" };
    of = trainers_of(two, lto, 3);
    assert_null(of[0]);
    assert_string_equal(of[1], "oltp_read_only");
    assert_string_equal(of[2], "a+b");
    free(of);
    const char *one = "{\"pgo\": {\"train\": [\"oltp_read_only\"]}}";
    const char *const single[] = { "baseline", "pgo" };
    of = trainers_of(one, single, 2);
    assert_null(of[1]);
    free(of);
    of = trainers_of("{}", lto, 3); /* a compare: no pgo settings */
    assert_null(of[1]);
    assert_null(of[2]);
    free(of);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trainer_matrix),
        cmocka_unit_test(test_trainer_includes),
        cmocka_unit_test(test_trainers_of),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
