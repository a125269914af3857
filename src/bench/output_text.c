/* output_text: `pgolab bench`'s text output, sysbench 1.0.20's line for line (formats from
 * reference/sysbench.md §7), so existing sysbench parsers read pgolab's output. */
#include "bench/output.h"
#include "util/util.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void mean_stddev(const double *v, int n, double *mean, double *sd)
{
    double s = 0, ss = 0;
    for (int i = 0; i < n; i++)
        s += v[i];
    *mean = n ? s / n : 0;
    for (int i = 0; i < n; i++)
        ss += (v[i] - *mean) * (v[i] - *mean);
    *sd = n ? sqrt(ss / n) : 0;
}

void bench_text_banner(const struct bench_info *bi)
{
    printf("sysbench 1.0.20 (pgolab %s, %s%s%s)\n\n", PGOLAB_VERSION,
           bi->lib.product ? bi->lib.product : bi->driver, bi->lib.version ? " " : "",
           bi->lib.version ? bi->lib.version : "");
}

void bench_text_run_header(const struct bench_info *bi)
{
    printf("Running the test with following options:\n");
    printf("Number of threads: %d\n", bi->threads);
    if (bi->warmup_s > 0)
        printf("Warmup time: %gs\n", bi->warmup_s);
    if (bi->rate > 0)
        printf("Target transaction rate: %g/sec\n", bi->rate);
    if (bi->report_interval > 0)
        printf("Report intermediate results every %g second(s)\n", bi->report_interval);
    if (bi->seed)
        printf("Initializing random number generator from seed (%llu).\n",
               (unsigned long long)bi->seed);
    else
        printf("Initializing random number generator from current time\n");
    /* sysbench puts the forced-shutdown notice between the two blank lines */
    printf("\n");
    if (bi->forced_shutdown_s >= 0 && bi->time_s > 0)
        printf("Forcing shutdown in %.0f seconds\n",
               bi->warmup_s + bi->time_s + bi->forced_shutdown_s);
    printf("\nInitializing worker threads...\n\n");
    fflush(stdout);
}

/* A latency in the unit (ms, or us), or ">100000.00" (ms) for one beyond the histogram's top,
 * right-aligned in width (0: as is). */
static void format_latency(char *buf, size_t n, double ms, bool overflow, bool us, int width)
{
    char v[48];
    if (overflow)
        snprintf(v, sizeof(v), ">%.2f", (double)HISTOGRAM_TOP_NS / (us ? 1e3 : 1e6));
    else
        snprintf(v, sizeof(v), "%4.2f", us ? ms * 1e3 : ms);
    snprintf(buf, n, "%*s", width, v);
}

void bench_text_interval(const struct interval_stats *iv, int percentile, bool us)
{
    char lat[48];
    format_latency(lat, sizeof(lat), iv->lat_ms, iv->lat_overflow, us, 0);
    printf("[ %.0fs ] thds: %d tps: %4.2f qps: %4.2f (r/w/o: %4.2f/%4.2f/%4.2f) "
           "lat (%s,%d%%): %s err/s: %4.2f reconn/s: %4.2f\n",
           iv->time_s, iv->threads, iv->tps, iv->qps, iv->reads_per_s, iv->writes_per_s,
           iv->other_per_s, us ? "us" : "ms", percentile, lat, iv->errors_per_s,
           iv->reconnects_per_s);
    if (iv->rate_mode)
        printf("[ %.0fs ] queue length: %llu, concurrency: %d\n", iv->time_s,
               (unsigned long long)iv->queue_length, iv->concurrency);
    fflush(stdout);
}

/* "%-41s" + value: every count label is padded so the value starts in column 42. */
static void count_line(const char *label, unsigned long long n, double secs, bool rate)
{
    if (rate)
        printf("%-41s%-6llu (%.2f per sec.)\n", label, n, secs > 0 ? (double)n / secs : 0.0);
    else
        printf("%-41s%llu\n", label, n);
}

static void print_histogram(const struct histogram *h, bool us)
{
    double div = us ? 1e3 : 1e6;
    /* Below 0.25 ms several buckets print as the same 3-decimal value: one line per printed
     * value, their counts summed, bars scaled to the largest line (40 stars). */
    size_t nb = histogram_nbuckets(), nl = 0;
    char (*label)[32] = xcalloc(nb, sizeof(*label));
    uint64_t *count = xcalloc(nb, sizeof(uint64_t)), maxc = 0;
    for (size_t i = 0; i < nb; i++) {
        char v[32];
        if (histogram_bucket_overflow(i))  /* values above the top: never a plain value */
            snprintf(v, sizeof(v), "%12s", us ? ">100000000.000" : ">100000.000");
        else
            snprintf(v, sizeof(v), "%12.3f", histogram_bucket_value(i) / div);
        if (!nl || strcmp(v, label[nl - 1]))
            snprintf(label[nl++], sizeof(label[0]), "%s", v);
        count[nl - 1] += h->counts[i];
    }
    for (size_t i = 0; i < nl; i++)
        maxc = count[i] > maxc ? count[i] : maxc;
    printf("Latency histogram (values are in %s)\n", us ? "microseconds" : "milliseconds");
    printf("       value  ------------- distribution ------------- count\n");
    for (size_t i = 0; i < nl; i++) {
        if (!count[i])
            continue;
        int bar = (int)((double)count[i] * 40 / (double)maxc);
        printf("%s |%-40.*s %llu\n", label[i], bar < 1 ? 1 : bar,
               "****************************************", (unsigned long long)count[i]);
    }
    printf(" \n");
    free(label);
    free(count);
}

void bench_text_final(const struct bench_info *bi, const struct run_stats *st, bool histogram)
{
    double t = st->total_time_s;
    const struct db_counters *c = &st->cnt;
    unsigned long long queries = c->reads + c->writes + c->others;
    double ev_mean, ev_sd, tm_mean, tm_sd;
    double *ev = xcalloc((size_t)st->nthreads, sizeof(double));

    if (histogram && bi->percentile > 0)
        print_histogram(&st->hist, bi->latency_us);
    printf("SQL statistics:\n");
    printf("    queries performed:\n");
    count_line("        read:", c->reads, t, false);
    count_line("        write:", c->writes, t, false);
    count_line("        other:", c->others, t, false);
    count_line("        total:", queries, t, false);
    count_line("    transactions:", st->events, t, true);
    count_line("    queries:", queries, t, true);
    count_line("    ignored errors:", c->errors, t, true);
    count_line("    reconnects:", c->reconnects, t, true);
    if (st->forced)  /* where sysbench 1.0.20 prints it */
        printf("\nNumber of unfinished transactions on forced shutdown: %llu\n",
               (unsigned long long)st->unfinished);
    printf("\nGeneral statistics:\n");
    printf("%-41s%.4fs\n", "    total time:", t);
    printf("%-41s%llu\n", "    total number of events:", (unsigned long long)st->events);
    double div = bi->latency_us ? 1e3 : 1e6;  /* ns -> the unit */
    printf("\nLatency (%s):\n", bi->latency_us ? "us" : "ms");
    printf("         min: %39.2f\n", st->events ? (double)st->hist.min_ns / div : 0.0);
    printf("         avg: %39.2f\n", histogram_mean(&st->hist) / div);
    printf("         max: %39.2f\n", (double)st->hist.max_ns / div);
    if (bi->percentile > 0) {
        bool over;
        double v = histogram_percentile_ex(&st->hist, bi->percentile, &over);
        char lat[48];
        format_latency(lat, sizeof(lat), v / 1e6, over, bi->latency_us, 27);
        printf("        %3dth percentile: %s\n", bi->percentile, lat);
    } else
        printf("         percentile stats:               disabled\n");
    printf("         sum: %39.2f\n", st->hist.sum_ns / div);
    for (int i = 0; i < st->nthreads; i++)
        ev[i] = (double)st->thread_events[i];
    mean_stddev(ev, st->nthreads, &ev_mean, &ev_sd);
    mean_stddev(st->thread_time_s, st->nthreads, &tm_mean, &tm_sd);
    printf("\nThreads fairness:\n");
    printf("    events (avg/stddev):           %.4f/%3.2f\n", ev_mean, ev_sd);
    printf("    execution time (avg/stddev):   %.4f/%3.2f\n\n", tm_mean, tm_sd);
    fflush(stdout);
    free(ev);
}
