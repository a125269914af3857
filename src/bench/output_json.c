/* output_json: `pgolab bench --format=json`: the text report's figures machine-readable, plus
 * p50/p90/p95/p99/p99.9, the histogram, the interval series and the library identity. */
#include "bench/output.h"
#include "util/cpulist.h"
#include "util/fmt.h"
#include "util/knobs.h"
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

json_t *bench_json_libinfo(const struct db_libinfo *lib)
{
    json_t *j = json_pack("{s:o,s:o,s:o,s:o,s:o,s:o}", "path", jstr(lib->path), "version",
                          jstr(lib->version), "source_id", jstr(lib->source_id),
                          "engine_source_id", jstr(lib->engine_source_id), "loaded_from",
                          jstr(lib->loaded_from), "isolation", jstr(lib->isolation));
    if (lib->server)  /* server drivers only: SQLite's JSON stays as it was */
        json_object_set_new(j, "server", jstr(lib->server));
    return j;
}

/* The general options and those of the driver in use (driver: its name), not the other
 * drivers'. */
static json_t *options_json(const struct opts *o, const char *driver)
{
    json_t *j = json_object();
    const struct db_driver *in_use = driver ? db_driver_find(driver) : NULL;
    for (int i = 0; o && i < o->nvalues; i++) {
        const struct opt_value *v = &o->values[i];
        if (in_use && db_option_of_other_driver(v->def, in_use))
            continue;
        /* Never a password (--mysql-password, --pgsql-password): only whether one was given. */
        if (strstr(v->def->name, "password"))
            json_object_set_new(j, v->def->name,
                                json_string(v->value && *v->value ? "(hidden)" : ""));
        else
            json_object_set_new(j, v->def->name, jstr(v->value));
    }
    return j;
}

json_t *bench_json(const struct bench_info *bi, const struct run_stats *st,
                    const struct interval_stats *ivs, int niv)
{
    const struct histogram *h = &st->hist;
    const struct db_counters *c = &st->cnt;
    double t = st->total_time_s > 0 ? st->total_time_s : 1e-9;
    uint64_t queries = c->reads + c->writes + c->others;
    double ev_mean, ev_sd, tm_mean, tm_sd;
    double *ev = xcalloc((size_t)st->nthreads + 1, sizeof(double));
    json_t *hist = json_array(), *series = json_array(), *lat;

    for (size_t i = 0; i < histogram_nbuckets(); i++) {
        if (!h->counts[i])
            continue;
        json_t *b = json_pack("{s:f,s:I}", "ms", histogram_bucket_value(i) / 1e6, "count",
                              (json_int_t)h->counts[i]);
        if (histogram_bucket_overflow(i))  /* above the top: "ms" is the top, not a value */
            json_object_set_new(b, "overflow", json_true());
        json_array_append_new(hist, b);
    }
    for (int i = 0; i < niv; i++) {
        const struct interval_stats *iv = &ivs[i];
        json_t *o = json_pack("{s:f,s:i,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f}", "time_s", iv->time_s,
                              "threads", iv->threads, "tps", iv->tps, "qps", iv->qps,
                              "reads_per_s", iv->reads_per_s, "writes_per_s", iv->writes_per_s,
                              "other_per_s", iv->other_per_s, "latency_ms", iv->lat_ms,
                              "errors_per_s", iv->errors_per_s, "reconnects_per_s",
                              iv->reconnects_per_s, "length_s", iv->length_s);
        if (iv->lat_overflow)
            json_object_set_new(o, "latency_overflow", json_true());
        if (iv->rate_mode) {
            json_object_set_new(o, "queue_length", json_integer((json_int_t)iv->queue_length));
            json_object_set_new(o, "concurrency", json_integer(iv->concurrency));
        }
        json_array_append_new(series, o);
    }
    lat = json_pack("{s:f,s:f,s:f,s:f,s:i}", "min", st->events ? (double)h->min_ns / 1e6 : 0.0,
                    "avg", histogram_mean(h) / 1e6, "max", (double)h->max_ns / 1e6,
                    "sum", h->sum_ns / 1e6, "percentile", bi->percentile);
    /* The percentiles; one beyond the histogram's top (100 s) is the top, flagged by name in
     * "overflow" (the text report prints it as ">100000.00"). */
    static const struct { const char *key; double p; } pcts[] = {
        { "p50", 50 }, { "p90", 90 }, { "p95", 95 }, { "p99", 99 }, { "p99_9", 99.9 },
        { "percentile_value", -1 },
    };
    json_t *over = json_array();
    for (size_t i = 0; i < ARRAY_SIZE(pcts); i++) {
        bool o;
        double v = histogram_percentile_ex(h, pcts[i].p < 0 ? bi->percentile : pcts[i].p, &o);
        json_object_set_new(lat, pcts[i].key, json_real(v / 1e6));
        if (o)
            json_array_append_new(over, json_string(pcts[i].key));
    }
    json_object_set_new(lat, "overflow", over);
    for (int i = 0; i < st->nthreads; i++)
        ev[i] = (double)st->thread_events[i];
    mean_stddev(ev, st->nthreads, &ev_mean, &ev_sd);
    mean_stddev(st->thread_time_s, st->nthreads, &tm_mean, &tm_sd);
    free(ev);

    json_t *j = json_object();
    json_object_set_new(j, "pgolab_version", json_string(PGOLAB_VERSION));
    json_object_set_new(j, "test", json_string(bi->test));
    json_object_set_new(j, "command", json_string(bi->command));
    json_object_set_new(j, "db_driver", json_string(bi->driver));
    json_object_set_new(j, "options", options_json(bi->opts, bi->driver));
    json_object_set_new(j, "library", bench_json_libinfo(&bi->lib));
    json_object_set_new(j, "threads", json_integer(bi->threads));
    char cpus[256];
    if (cpu_list_self(cpus, sizeof(cpus)) == 0) /* the CPUs this process may run on */
        json_object_set_new(j, "cpus_allowed", json_string(cpus));
    json_object_set_new(j, "total_time_s", json_real(st->total_time_s));
    json_object_set_new(j, "events", json_integer((json_int_t)st->events));
    json_object_set_new(j, "transactions", json_integer((json_int_t)st->events));
    json_object_set_new(j, "tps", json_real((double)st->events / t));
    json_object_set_new(j, "queries", json_integer((json_int_t)queries));
    json_object_set_new(j, "qps", json_real((double)queries / t));
    json_object_set_new(j, "reads", json_integer((json_int_t)c->reads));
    json_object_set_new(j, "writes", json_integer((json_int_t)c->writes));
    json_object_set_new(j, "other", json_integer((json_int_t)c->others));
    json_object_set_new(j, "ignored_errors", json_integer((json_int_t)c->errors));
    json_object_set_new(j, "errors_per_s", json_real((double)c->errors / t));
    json_object_set_new(j, "reconnects", json_integer((json_int_t)c->reconnects));
    json_object_set_new(j, "latency_ms", lat);
    json_object_set_new(j, "histogram", hist);
    json_object_set_new(j, "intervals", series);
    json_object_set_new(j, "fairness",
                        json_pack("{s:f,s:f,s:f,s:f}", "events_avg", ev_mean, "events_stddev",
                                  ev_sd, "exec_time_avg_s", tm_mean, "exec_time_stddev_s", tm_sd));
    json_object_set_new(j, "interrupted", json_boolean(st->interrupted));
    json_object_set_new(j, "failed", json_boolean(st->failed));
    json_t *knobs = knobs_json();
    if (knobs)
        json_object_set_new(j, "test_knobs", knobs);
    return j;
}

void bench_json_print(json_t *j)
{
    char *s = json_dumps(j, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
    if (s) {
        puts(s);
        free(s);
    }
    fflush(stdout);
}
