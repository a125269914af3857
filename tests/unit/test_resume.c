/* Unit tests of cli/resume.c and experiment_resume_command() (experiment/record.c): the
 * settings an experiment recorded turned back into its command's options (compare: variants
 * of every kind, --target-ci, --rand-seed from bench_args; pgo: the training settings), the
 * comparison of a given value with a recorded one, and the exact command a stopped
 * experiment prints. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cli/resume.h"
#include "experiment/record.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <stdlib.h>
#include <string.h>

/* ro as "name=value\n" lines */
static char *lines(const struct resume_options *ro)
{
    struct strbuf sb = STRBUF_INIT;
    strbuf_init(&sb, 0);
    for (int i = 0; i < ro->n; i++)
        strbuf_addf(&sb, "%s=%s\n", ro->names[i], ro->values[i]);
    return strbuf_detach(&sb);
}

static void test_compare_settings(void **state)
{
    (void)state;
    /* as experiment_settings_json() writes them (keys sorted) */
    const char *set =
        "{\"bench_args\":[\"--rand-seed=7\"],\"rounds\":2,\"server_options\":[\"a=1\",\"b=2\"],"
        "\"table_size\":1000,\"tables\":1,\"threads\":[1,2],\"time_s\":1.0,"
        "\"variant.A\":{\"library\":\"/lib/a.so\",\"sha256\":\"x\"},"
        "\"variant.B\":{\"driver\":\"mysql\",\"library\":\"/opt/mariadb\",\"server_options\":"
        "[\"innodb_buffer_pool_size=1G\",\"x=1\"],\"sha256\":\"y\"},"
        "\"variant.C\":{\"driver\":\"pgsql\",\"library\":\"pgsql://127.0.0.1:5432\"},"
        "\"variants\":[\"A\",\"B\",\"C\"],\"warmup_runs\":1,\"workloads\":[\"oltp_point_select\","
        "\"oltp_read_only\"]}";
    struct resume_options ro;
    memset(&ro, 0, sizeof(ro));
    assert_int_equal(resume_options_from_settings(set, "compare", &ro), 0);
    char *got = lines(&ro);
    assert_string_equal(got, "variant=A=sqlite:/lib/a.so\n"
                             "variant=B=mysql:/opt/mariadb\n"
                             "variant-server-option=B:innodb_buffer_pool_size=1G\n"
                             "variant-server-option=B:x=1\n"
                             "variant=C=pgsql://127.0.0.1:5432\n"
                             "server-option=a=1\n"
                             "server-option=b=2\n"
                             "bench=oltp_point_select,oltp_read_only\n"
                             "threads=1,2\n"
                             "rounds=2\n"
                             "time=1\n"
                             "tables=1\n"
                             "table-size=1000\n"
                             "reset=run\n"
                             "warmup-runs=1\n"
                             "measure=time\n"
                             "rand-seed=7\n");
    free(got);
    resume_options_release(&ro);
    assert_int_equal(ro.n, 0);
}

static void test_target_ci_and_instructions(void **state)
{
    (void)state;
    const char *set =
        "{\"rounds\":40,\"target_ci\":{\"cs_rounds\":20,\"max_time_s\":null,\"metric\":\"cpu\","
        "\"pct\":2.5},\"threads\":[1],\"time_s\":3,\"tables\":2,\"table_size\":50,"
        "\"variant.A\":{\"library\":\"a\"},\"variants\":[\"A\"],\"workloads\":[\"w\"],"
        "\"measure\":\"instructions\",\"events\":500,\"reset\":\"round\","
        "\"clients\":\"mpirun:2\"}";
    struct resume_options ro;
    memset(&ro, 0, sizeof(ro));
    assert_int_equal(resume_options_from_settings(set, "compare", &ro), 0);
    char *got = lines(&ro);
    assert_string_equal(got, "variant=A=sqlite:a\n"
                             "bench=w\n"
                             "threads=1\n"
                             "target-ci=2.5\n"
                             "max-rounds=40\n"
                             "target-metric=cpu\n"
                             "time=3\n"
                             "tables=2\n"
                             "table-size=50\n"
                             "reset=round\n"
                             "warmup-runs=0\n"
                             "clients=mpirun:2\n"
                             "measure=instructions\n"
                             "events=500\n");
    free(got);
    resume_options_release(&ro);
}

static void test_pgo_settings(void **state)
{
    (void)state;
    const char *set =
        "{\"pgo\":{\"gate\":\"suite\",\"target\":\"mariadb\",\"train\":[\"oltp_read_write\","
        "\"suite\"],\"train_threads\":2,\"train_time\":20},\"rounds\":3,\"threads\":[1],"
        "\"time_s\":10.0,\"tables\":1,\"table_size\":10000,\"variants\":[\"baseline\",\"pgo\"],"
        "\"variant.baseline\":{\"library\":\"/b\"},\"workloads\":[\"oltp_read_only\"],"
        "\"bench_args\":[],\"target_ci\":{\"pct\":1,\"max_time_s\":600.0,\"cs_rounds\":100}}";
    struct resume_options ro;
    memset(&ro, 0, sizeof(ro));
    assert_int_equal(resume_options_from_settings(set, "pgo", &ro), 0);
    char *got = lines(&ro);
    /* no --variant (pgo's variants are its builds), no compare-only options */
    assert_string_equal(got, "bench=oltp_read_only\n"
                             "threads=1\n"
                             "target-ci=1\n"
                             "max-rounds=3\n"
                             "max-time=600\n"
                             "time=10\n"
                             "tables=1\n"
                             "table-size=10000\n"
                             "measure=time\n"
                             "train=oltp_read_write,suite\n"
                             "train-time=20\n"
                             "train-threads=2\n"
                             "gate=suite\n");
    free(got);
    resume_options_release(&ro);
}

static void test_unreadable(void **state)
{
    (void)state;
    struct resume_options ro;
    memset(&ro, 0, sizeof(ro));
    assert_int_equal(resume_options_from_settings("not json", "compare", &ro), -1);
    assert_int_equal(resume_options_from_settings("[1,2]", "compare", &ro), -1);
    assert_int_equal(resume_options_from_settings(NULL, "compare", &ro), -1);
    assert_int_equal(ro.n, 0);
    assert_int_equal(resume_options_from_settings("{}", "compare", &ro), 0);
    char *got = lines(&ro); /* only the options whose absence means their default */
    assert_string_equal(got, "reset=run\nwarmup-runs=0\nmeasure=time\n");
    free(got);
    resume_options_release(&ro);
}

static void test_same_value(void **state)
{
    (void)state;
    assert_true(resume_same_value(OPT_INT, "10", "10"));
    assert_true(resume_same_value(OPT_INT, "010", "10"));
    assert_false(resume_same_value(OPT_INT, "3", "2"));
    assert_true(resume_same_value(OPT_DOUBLE, "2.50", "2.5"));
    assert_false(resume_same_value(OPT_DOUBLE, "2", "2.5"));
    assert_true(resume_same_value(OPT_LIST, "1, 2", "1,2"));
    assert_true(resume_same_value(OPT_LIST, "oltp_read_only", "oltp_read_only"));
    assert_false(resume_same_value(OPT_LIST, "2,1", "1,2"));
    assert_false(resume_same_value(OPT_LIST, "1", "1,2"));
    assert_true(resume_same_value(OPT_STRING, "run", "run"));
    assert_false(resume_same_value(OPT_STRING, "round", "run"));
    assert_true(resume_same_value(OPT_BOOL, "on", "yes"));
}

static void test_resume_command(void **state)
{
    (void)state;
    char *c = experiment_resume_command("compare", NULL, 3, "/tmp/r.db");
    assert_string_equal(c, "pgolab compare --resume=3 --results=/tmp/r.db");
    free(c);
    c = experiment_resume_command("compare", NULL, 12, "my results.db");
    assert_string_equal(c, "pgolab compare --resume=12 '--results=my results.db'");
    free(c);
    c = experiment_resume_command("pgo", "sqlite", 4, "pgolab.db");
    assert_string_equal(c, "pgolab pgo sqlite --resume=4 --results=pgolab.db");
    free(c);
    c = experiment_resume_command("pgo", NULL, 4, "pgolab.db");
    assert_string_equal(c, "pgolab pgo TARGET --resume=4 --results=pgolab.db");
    free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compare_settings),
        cmocka_unit_test(test_target_ci_and_instructions),
        cmocka_unit_test(test_pgo_settings),
        cmocka_unit_test(test_unreadable),
        cmocka_unit_test(test_same_value),
        cmocka_unit_test(test_resume_command),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
