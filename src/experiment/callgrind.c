/* callgrind: --measure=instructions: its setup, valgrind's command line, callgrind's output
 * files and the "callgrind" JSON of a run (see callgrind.h). Owns no state. */
#include "experiment/callgrind.h"
#include "util/argvec.h"
#include "util/fs.h"
#include "util/strbuf.h"
#include "util/subprocess.h"
#include "util/util.h"

#include <assert.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

int experiment_instructions_setup(struct experiment_config *cfg, int64_t events)
{
    if (events < 5 || events > 100000000)
        return error("invalid --events=%lld (expected a transaction count, 5 or more)",
                     (long long)events);
    const char *vg = cfg->valgrind ? cfg->valgrind : "valgrind";
    /* not there at all: one line that says what to install (subprocess_run would add its own
     * "cannot run" line first) */
    char *path = strchr(vg, '/') ? xstrdup(vg) : find_in_path(vg);
    bool found = path && access(path, X_OK) == 0;
    free(path);
    if (!found)
        return error("--measure=instructions needs valgrind, but %s was not found; install it "
                     "(apt-get install valgrind)", vg);
    const char *argv[] = { vg, "--version", NULL };
    struct strbuf out = STRBUF_INIT;
    struct subprocess sp = { .argv = argv, .out = &out };
    int st = subprocess_run(&sp);
    strbuf_release(&out);
    if (st != 0)
        return error("--measure=instructions needs valgrind, but `%s --version` failed (exit "
                     "%d); install it (apt-get install valgrind)", vg, st);
    if (cfg->nthreads != 1 || cfg->threads[0] != 1)
        return error("--measure=instructions runs 1 client thread (with more, instruction "
                     "counts include lock spinning and scheduling): drop --threads or give "
                     "--threads=1");
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
            } else if (!strcmp(name, "D1mr") || !strcmp(name, "D1mw")) {
                out->d1_miss += v;
            } else if (!strcmp(name, "ILmr") || !strcmp(name, "DLmr") || !strcmp(name, "DLmw")) {
                out->ll_miss += v;
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

void experiment_callgrind_add(struct callgrind_counts *sum, const struct callgrind_counts *x)
{
    sum->ir += x->ir;
    sum->i1_miss += x->i1_miss;
    sum->d1_miss += x->d1_miss;
    sum->ll_miss += x->ll_miss;
    sum->branch_miss += x->branch_miss;
}

double experiment_callgrind_est_cycles(const struct callgrind_counts *c)
{
    return (double)c->ir + 10.0 * (double)c->branch_miss +
           10.0 * ((double)c->i1_miss + (double)c->d1_miss) + 100.0 * (double)c->ll_miss;
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

/* The per-transaction keys of a run's "callgrind" object, in run_result order. */
static const char *const per_txn_key[] = {
    "instructions_per_transaction", "i1_misses_per_transaction",
    "branch_mispredicts_per_transaction", "d1_misses_per_transaction",
    "ll_misses_per_transaction", "est_cycles_per_transaction",
};

/* The per-transaction fields of r, in per_txn_key's order. */
static void per_txn_fields(struct run_result *r, double **dst)
{
    dst[0] = &r->instr_per_txn;
    dst[1] = &r->i1_miss_per_txn;
    dst[2] = &r->branch_miss_per_txn;
    dst[3] = &r->d1_miss_per_txn;
    dst[4] = &r->ll_miss_per_txn;
    dst[5] = &r->est_cycles_per_txn;
}

/* The marginal per-transaction values of counts cc[0] (txns[0]) and cc[1] (txns[1]) into v,
 * in per_txn_key's order. Signed: noise can take a subtraction below zero (a miss count, the
 * background's timing-dependent work); callgrind_marginal says so instead of using it. */
static void marginal_values(const struct callgrind_counts *cc, const uint64_t *txns, double *v)
{
    assert(txns[1] > txns[0]);
    double dt = (double)(txns[1] - txns[0]);
    v[0] = ((double)cc[1].ir - (double)cc[0].ir) / dt;
    v[1] = ((double)cc[1].i1_miss - (double)cc[0].i1_miss) / dt;
    v[2] = ((double)cc[1].branch_miss - (double)cc[0].branch_miss) / dt;
    v[3] = ((double)cc[1].d1_miss - (double)cc[0].d1_miss) / dt;
    v[4] = ((double)cc[1].ll_miss - (double)cc[0].ll_miss) / dt;
    v[5] = (experiment_callgrind_est_cycles(&cc[1]) - experiment_callgrind_est_cycles(&cc[0])) / dt;
}

/* The counts of one child as JSON fields with suffix sfx ("" or "_small"). */
static void counts_json(json_t *o, const struct callgrind_counts *c, const char *sfx)
{
    const char *names[] = { "instructions", "i1_misses", "d1_misses", "ll_misses",
                            "branch_mispredicts" };
    uint64_t vals[] = { c->ir, c->i1_miss, c->d1_miss, c->ll_miss, c->branch_miss };
    for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
        char key[64];
        snprintf(key, sizeof(key), "%s%s", names[i], sfx);
        json_object_set_new(o, key, json_integer((json_int_t)vals[i]));
    }
}

/* The per-transaction values v into object o under per_txn_key: a value below zero (a
 * subtraction of two runs that noise took below zero) as null, its key in the array bz. */
static void per_txn_json(json_t *o, const double *v, json_t *bz, const char *prefix)
{
    for (size_t i = 0; i < ARRAY_SIZE(per_txn_key); i++) {
        bool below = v[i] < 0;
        json_object_set_new(o, per_txn_key[i], below ? json_null() : json_real(v[i]));
        if (below)
            json_array_append_new(bz, json_sprintf("%s%s", prefix, per_txn_key[i]));
    }
}

/* The "callgrind" object of an instruction-mode run (its counts and the marginal cost v; with
 * bg, the server's background processes and threads beside it, their marginal cost bv),
 * added to the report JSON text *json (replaced by the new text). */
static void add_callgrind_json(char **json, int events, const struct callgrind_counts *cc,
                               const uint64_t *txns, const double *v,
                               const struct callgrind_counts *bg, const double *bv,
                               const char *counted)
{
    json_t *root = json_loads(*json, 0, NULL);
    if (!json_is_object(root)) {
        json_decref(root);
        return;
    }
    json_t *cg = json_object(), *bz = json_array();
    json_object_set_new(cg, "tool", json_string("valgrind --tool=callgrind"));
    json_object_set_new(cg, "events", json_integer(events));
    if (counted)
        json_object_set_new(cg, "counted", json_string(counted));
    counts_json(cg, &cc[0], "_small");
    counts_json(cg, &cc[1], "");
    json_object_set_new(cg, "transactions_small", json_integer((json_int_t)txns[0]));
    json_object_set_new(cg, "transactions", json_integer((json_int_t)txns[1]));
    per_txn_json(cg, v, bz, "");
    if (bg) {  /* the server's other processes and threads: beside, never mixed in */
        json_t *b = json_object();
        counts_json(b, &bg[0], "_small");
        counts_json(b, &bg[1], "");
        per_txn_json(b, bv, bz, "background.");
        json_object_set_new(cg, "background", b);
    }
    json_object_set_new(cg, "below_zero", bz);
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
                        const uint64_t *txns, const struct callgrind_counts *bg,
                        const char *counted)
{
    double v[ARRAY_SIZE(per_txn_key)], bv[ARRAY_SIZE(per_txn_key)];
    double *dst[ARRAY_SIZE(per_txn_key)];
    marginal_values(cc, txns, v);
    per_txn_fields(r, dst);
    r->below_zero = 0;
    /* a count per transaction is never below zero: one that is, is noise, and says so */
    for (size_t i = 0; i < ARRAY_SIZE(per_txn_key); i++) {
        *dst[i] = v[i] < 0 ? NAN : v[i];
        if (v[i] < 0)
            r->below_zero |= 1u << i;
    }
    r->tps = r->qps = NAN;
    r->lat_avg_ms = r->lat_p95_ms = r->lat_min_ms = r->lat_max_ms = NAN;
    r->bg_instr_per_txn = r->bg_est_cycles_per_txn = NAN;
    if (bg) {
        marginal_values(bg, txns, bv);
        r->bg_instr_per_txn = bv[0] < 0 ? NAN : bv[0];
        r->bg_est_cycles_per_txn = bv[5] < 0 ? NAN : bv[5];
        r->below_zero |= (bv[0] < 0 ? RUN_BELOW_ZERO_BG_INSTR : 0) |
                         (bv[5] < 0 ? RUN_BELOW_ZERO_BG_CYCLES : 0);
    }
    add_callgrind_json(&r->json, events, cc, txns, v, bg, bg ? bv : NULL, counted);
}

void callgrind_from_json(const char *json, struct run_result *r)
{
    json_t *root = json ? json_loads(json, 0, NULL) : NULL;
    json_t *cg = json_object_get(root, "callgrind");
    double *dst[ARRAY_SIZE(per_txn_key)];
    per_txn_fields(r, dst);
    for (size_t i = 0; i < ARRAY_SIZE(per_txn_key); i++) {
        json_t *v = json_object_get(cg, per_txn_key[i]);
        *dst[i] = json_is_number(v) ? json_number_value(v) : NAN;
    }
    json_t *bg = json_object_get(cg, "background");
    json_t *bi = json_object_get(bg, per_txn_key[0]), *bc = json_object_get(bg, per_txn_key[5]);
    r->bg_instr_per_txn = json_is_number(bi) ? json_number_value(bi) : NAN;
    r->bg_est_cycles_per_txn = json_is_number(bc) ? json_number_value(bc) : NAN;
    /* "below_zero": the keys whose marginal noise took below zero (null above); a run
     * recorded before it may hold such a value as a number: the same */
    r->below_zero = 0;
    for (size_t i = 0; i < ARRAY_SIZE(per_txn_key); i++) {
        if (*dst[i] < 0) {
            *dst[i] = NAN;
            r->below_zero |= 1u << i;
        }
    }
    if (r->bg_instr_per_txn < 0)
        r->bg_instr_per_txn = NAN, r->below_zero |= RUN_BELOW_ZERO_BG_INSTR;
    if (r->bg_est_cycles_per_txn < 0)
        r->bg_est_cycles_per_txn = NAN, r->below_zero |= RUN_BELOW_ZERO_BG_CYCLES;
    json_t *bz = json_object_get(cg, "below_zero");
    for (size_t k = 0; k < json_array_size(bz); k++) {
        const char *key = json_string_value(json_array_get(bz, k));
        for (size_t i = 0; key && i < ARRAY_SIZE(per_txn_key); i++)
            if (!strcmp(key, per_txn_key[i]))
                r->below_zero |= 1u << i;
        if (key && !strcmp(key, "background.instructions_per_transaction"))
            r->below_zero |= RUN_BELOW_ZERO_BG_INSTR;
        if (key && !strcmp(key, "background.est_cycles_per_transaction"))
            r->below_zero |= RUN_BELOW_ZERO_BG_CYCLES;
    }
    json_decref(root);
}
