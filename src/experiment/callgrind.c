/* callgrind: --measure=instructions: its setup, valgrind's command line, callgrind's output
 * files and the "callgrind" JSON of a run (see callgrind.h). Owns no state. */
#include "experiment/callgrind.h"
#include "util/argvec.h"
#include "util/strbuf.h"
#include "util/subprocess.h"
#include "util/util.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int experiment_instructions_setup(struct experiment_config *cfg, int64_t events)
{
    if (events < 5 || events > 100000000)
        return error("invalid --events=%lld (expected a transaction count, 5 or more)",
                     (long long)events);
    const char *vg = cfg->valgrind ? cfg->valgrind : "valgrind";
    const char *argv[] = { vg, "--version", NULL };
    struct strbuf out = STRBUF_INIT;
    struct subprocess sp = { .argv = argv, .out = &out };
    int st = subprocess_run(&sp);
    strbuf_release(&out);
    if (st != 0)
        return error("--measure=instructions needs valgrind, but `%s --version` failed (exit "
                     "%d); install it (apt-get install valgrind)", vg, st);
    if (cfg->nthreads != 1 || cfg->threads[0] != 1)
        warning("--measure=instructions runs 1 thread only (with more, instruction counts "
                "include lock spinning and scheduling); ignoring the other thread counts");
    cfg->threads[0] = 1;
    cfg->nthreads = 1;
    cfg->measure = MEASURE_INSTRUCTIONS;
    cfg->events = (int)events;
    return 0;
}

int experiment_callgrind_counts(const char *path, struct callgrind_counts *out)
{
    struct strbuf sb = STRBUF_INIT;
    int found = 0;
    memset(out, 0, sizeof(*out));
    if (strbuf_read_file(&sb, path) < 0) {
        strbuf_release(&sb);
        return error("cannot read the callgrind output %s: %s", path, strerror(errno));
    }
    /* The names of the columns: "events: Ir I1mr D1mr ... Bc Bcm Bi Bim" (Ir alone without
     * simulation). */
    char names[16][8];
    int nnames = 0;
    const char *ev = !strncmp(sb.buf, "events:", 7) ? sb.buf : strstr(sb.buf, "\nevents:");
    if (ev) {
        const char *p = strchr(ev, ':') + 1;
        while (*p && *p != '\n' && nnames < 16) {
            while (*p == ' ')
                p++;
            size_t len = strcspn(p, " \n");
            if (!len)
                break;
            snprintf(names[nnames++], sizeof(names[0]), "%.*s", (int)len, p);
            p += len;
        }
    }
    /* "totals:" is the sum over the file; "summary:" the older header line. Prefer totals. */
    static const char *const keys[] = { "\ntotals:", "\nsummary:" };
    for (size_t k = 0; k < ARRAY_SIZE(keys) && !found; k++) {
        const char *p = strstr(sb.buf, keys[k]);
        if (!p)
            continue;
        p += strlen(keys[k]);
        for (int i = 0; i < (nnames ? nnames : 1); i++) {
            char *end;
            errno = 0;
            unsigned long long v = strtoull(p, &end, 10);
            if (end == p || errno)
                break;
            p = end;
            const char *name = nnames ? names[i] : "Ir";
            if (!strcmp(name, "Ir")) {
                out->ir = v;
                found = 1;
            } else if (!strcmp(name, "I1mr")) {
                out->i1_miss = v;
            } else if (!strcmp(name, "Bcm") || !strcmp(name, "Bim")) {
                out->branch_miss += v;
            }
        }
    }
    strbuf_release(&sb);
    if (!found)
        return error("%s has no \"totals:\" or \"summary:\" line (not a callgrind output?)",
                     path);
    return 0;
}

int experiment_callgrind_total(const char *path, uint64_t *out)
{
    struct callgrind_counts c;
    if (experiment_callgrind_counts(path, &c) < 0)
        return -1;
    *out = c.ir;
    return 0;
}

void callgrind_argv(struct argvec *a, const struct experiment_config *cfg, const char *cg_out)
{
    argvec_push(a, cfg->valgrind ? cfg->valgrind : "valgrind");
    argvec_push(a, "--tool=callgrind");
    /* Count only the worker thread (src/bench/runner.c's worker_main and what it calls):
     * the reporter thread wakes every 20 ms, so its share varies with the wall time the
     * run takes. Inside the worker nothing branches on the clock (histogram_add's min and
     * max are branch-free), so a run's counts are the same integers every time. */
    argvec_push(a, "--toggle-collect=worker_main");
    /* simulated I1 misses and branch mispredictions: where PGO's layout shows */
    argvec_push(a, "--cache-sim=yes");
    argvec_push(a, "--branch-sim=yes");
    argvec_pushf(a, "--callgrind-out-file=%s", cg_out);
}

/* The "callgrind" object of an instruction-mode run (its counts and the marginal cost), added
 * to the report JSON text *json (replaced by the new text). */
static void add_callgrind_json(char **json, int events, const struct callgrind_counts *cc,
                               const uint64_t *txns, const struct run_result *r)
{
    json_t *root = json_loads(*json, 0, NULL);
    if (!json_is_object(root)) {
        json_decref(root);
        return;
    }
    json_t *cg = json_object();
    json_object_set_new(cg, "tool", json_string("valgrind --tool=callgrind"));
    json_object_set_new(cg, "events", json_integer(events));
    json_object_set_new(cg, "instructions_small", json_integer((json_int_t)cc[0].ir));
    json_object_set_new(cg, "transactions_small", json_integer((json_int_t)txns[0]));
    json_object_set_new(cg, "instructions", json_integer((json_int_t)cc[1].ir));
    json_object_set_new(cg, "transactions", json_integer((json_int_t)txns[1]));
    json_object_set_new(cg, "instructions_per_transaction", json_real(r->instr_per_txn));
    json_object_set_new(cg, "i1_misses_small", json_integer((json_int_t)cc[0].i1_miss));
    json_object_set_new(cg, "i1_misses", json_integer((json_int_t)cc[1].i1_miss));
    json_object_set_new(cg, "i1_misses_per_transaction", json_real(r->i1_miss_per_txn));
    json_object_set_new(cg, "branch_mispredicts_small", json_integer((json_int_t)cc[0].branch_miss));
    json_object_set_new(cg, "branch_mispredicts", json_integer((json_int_t)cc[1].branch_miss));
    json_object_set_new(cg, "branch_mispredicts_per_transaction",
                        json_real(r->branch_miss_per_txn));
    json_object_set_new(root, "callgrind", cg);
    char *text = json_dumps(root, JSON_COMPACT);
    json_decref(root);
    if (text) {
        free(*json);
        *json = xstrdup(text);
        free(text);
    }
}

void callgrind_marginal(struct run_result *r, int events, const struct callgrind_counts *cc,
                        const uint64_t *txns)
{
    double dt = (double)(txns[1] - txns[0]);
    r->instr_per_txn = (double)(cc[1].ir - cc[0].ir) / dt;
    /* Misses can go down between N/5 and N (warm caches): a signed difference. */
    r->i1_miss_per_txn = ((double)cc[1].i1_miss - (double)cc[0].i1_miss) / dt;
    r->branch_miss_per_txn = ((double)cc[1].branch_miss - (double)cc[0].branch_miss) / dt;
    r->tps = r->qps = NAN;
    r->lat_avg_ms = r->lat_p95_ms = r->lat_min_ms = r->lat_max_ms = NAN;
    add_callgrind_json(&r->json, events, cc, txns, r);
}

void callgrind_from_json(const char *json, struct run_result *r)
{
    json_t *root = json ? json_loads(json, 0, NULL) : NULL;
    json_t *cg = json_object_get(root, "callgrind");
    static const char *const keys[] = { "instructions_per_transaction",
                                        "i1_misses_per_transaction",
                                        "branch_mispredicts_per_transaction" };
    double *dst[] = { &r->instr_per_txn, &r->i1_miss_per_txn, &r->branch_miss_per_txn };
    for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
        json_t *v = json_object_get(cg, keys[i]);
        *dst[i] = json_is_number(v) ? json_number_value(v) : NAN;
    }
    json_decref(root);
}
