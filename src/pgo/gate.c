/* gate: the correctness gate of a server target. The checksum gate prepares the data once
 * with the baseline server, runs `pgolab bench verify` (the fixed query set of
 * oltp/oltp.c, folded into one checksum) on it, and then on a copy of the same datadir with
 * every other build; any difference stops the pipeline before anything is measured. The
 * suite gate runs the recipe's regression suite (PostgreSQL `make installcheck`, a
 * mysql-test-run subset) against every pgo build's and every BOLT variant's server. */
#include "pgo/stages.h"
#include "server/server.h"
#include "util/fs.h"
#include "util/progress.h"
#include "util/strbuf.h"
#include "util/subprocess.h"
#include "util/util.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define LOG_TAIL_LINES 25
#define STOP_TIMEOUT_S 120.0

/* {"checksum":"<hex>","rows":N} of `bench verify --format=json`. */
static int parse_verify(const char *text, char **sum, long long *rows)
{
    json_error_t err;
    json_t *j = json_loads(text, 0, &err);
    const char *c = j ? json_string_value(json_object_get(j, "checksum")) : NULL;
    json_t *r = j ? json_object_get(j, "rows") : NULL;
    int rc = -1;
    if (c && json_is_integer(r)) {
        *sum = xstrdup(c);
        *rows = (long long)json_integer_value(r);
        rc = 0;
    } else {
        error("bench verify printed no checksum JSON: %.200s", text);
    }
    json_decref(j);
    return rc;
}

/* Start b's server on datadir, prepare when asked, verify, stop. The log says which build
 * each verify ran on. */
static int verify_on(struct pgo_pipeline *p, const struct pgo_build *b, const char *datadir,
                     bool prepare, const char *log, char **sum, long long *rows)
{
    const char *prefix = b->official ? b->product : b->prefix;
    struct server s;
    struct strbuf out = STRBUF_INIT;
    int rc = -1;
    strbuf_init(&out, 0);
    strbuf_read_file(&out, log);
    strbuf_addf(&out, "# gate: %s (%s) on %s\n", b->name, b->product, datadir);
    rc = stamp_write(log, out.buf);
    strbuf_reset(&out);
    if (rc < 0)
        goto out;
    rc = -1;
    if (pgo_server_start(p, prefix, datadir, NULL, NULL, &s) < 0)
        goto out;
    const char *prep[] = { "--threads=1", "oltp_read_write", "prepare", NULL };
    const char *ver[] = { "--format=json", "oltp_read_only", "verify", NULL };
    if ((!prepare || pgo_bench(p, &s, prep, log, NULL) == 0) &&
        pgo_bench(p, &s, ver, log, &out) == 0)
        rc = parse_verify(out.buf, sum, rows);
    if (server_stop(&s, STOP_TIMEOUT_S) < 0)
        rc = -1;
    server_release(&s);
out:
    strbuf_release(&out);
    return rc;
}

static int copy_datadir(const char *from, const char *to, const char *log)
{
    if (remove_tree(to) < 0)
        return -1;
    const char *argv[] = { "cp", "-a", from, to, NULL };
    struct subprocess sp = { .argv = argv, .log_path = log };
    int st = subprocess_run(&sp);
    if (st != 0)
        return st > 0 ? error("copying the gate's datadir %s to %s failed (exit %d): see %s", from,
                              to, st, log) : -1;
    return 0;
}

static int checksum_gate(struct pgo_pipeline *p, const char *log)
{
    const struct pgo_build **m = NULL;
    char *tmpl = path_join(p->rundir, "gate-baseline");
    char *copy = path_join(p->rundir, "gate-variant");
    int rc = -1;
    progress("gate: baseline prepares and verifies");
    if (remove_tree(tmpl) < 0 ||
        verify_on(p, &p->builds[0], tmpl, true, log, &p->gate_checksum, &p->gate_rows) < 0)
        goto out;
    int nm = pgo_measured_builds(p, &m);
    for (int i = 1; i < nm; i++) { /* m[0]: the baseline */
        const struct pgo_build *b = m[i];
        char *sum = NULL;
        long long rows = 0;
        progress("gate: %s verifies the same data", b->name);
        if (copy_datadir(tmpl, copy, log) < 0 ||
            verify_on(p, b, copy, false, log, &sum, &rows) < 0)
            goto out;
        bool same = !strcmp(sum, p->gate_checksum) && rows == p->gate_rows;
        if (!same)
            error("correctness gate failed: baseline checksum %s (%lld rows) != %s checksum %s "
                  "(%lld rows): the %s build returns different results; nothing was measured "
                  "(log %s)", p->gate_checksum, p->gate_rows, b->name, sum, rows, b->name, log);
        free(sum);
        remove_tree(copy);
        if (!same)
            goto out;
    }
    rc = 0;
out:
    free(m);
    progress_done();
    remove_tree(tmpl);
    remove_tree(copy);
    free(tmpl);
    free(copy);
    return rc;
}

int pgo_gate(struct pgo_pipeline *p)
{
    char *log = path_join(p->root, "gate.log");
    int rc = stamp_write(log, "");
    if (rc == 0)
        rc = checksum_gate(p, log);
    p->suite_ran = false;
    if (rc == 0 && p->rq->gate == PGO_GATE_SUITE) {
        const struct pgo_build **m;
        int nm = pgo_measured_builds(p, &m);
        for (int i = 1; i < nm && rc == 0; i++) {
            if (m[i]->phase != BUILD_PGO && !m[i]->bolt_input)
                continue;
            progress("gate: regression suite on %s", m[i]->name);
            /* the suite's steps see the build's own compiler and flags */
            rc = pgo_run_suite(m[i]->pipeline, m[i], NULL, log);
            progress_done();
        }
        free(m);
        p->suite_ran = rc == 0;
    }
    free(log);
    return rc;
}
