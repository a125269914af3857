/* profiling: --profile in the experiment engine (see profiling.h). */
#include "experiment/profiling.h"
#include "model/profiles.h"
#include "profile/perf_sampler.h"
#include "util/fs.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int experiment_profile_setup(struct experiment_config *cfg, const struct store *store,
                             int64_t freq)
{
    if (freq < 1 || freq > 100000)
        return error("--profile-frequency=%lld: expected 1..100000 samples per second",
                     (long long)freq);
    if (!store || cfg->experiment_id < 1)
        return error("--profile needs the results database (--results)");
    free(cfg->profile_dir);
    cfg->profile_dir = experiment_profile_dir(store_path(store), cfg->experiment_id);
    cfg->profile_freq = (int)freq;
    for (int v = 0; v < cfg->nvariants; v++)
        if (cfg->variants[v].kind == VARIANT_EXTERNAL)
            warning("--profile: variant %s is a running server pgolab does not manage; its "
                    "runs have no profile", cfg->variants[v].name);
    cfg->profile = true;
    return mkdir_p(cfg->profile_dir);
}

void experiment_profile_release(struct experiment_config *cfg)
{
    free(cfg->profile_dir);
    cfg->profile_dir = NULL;
}

char *profile_run_path(const struct experiment_config *cfg, int seq, const char *ext)
{
    return xasprintf("%s/run%03d.%s", cfg->profile_dir, seq, ext);
}

void profile_child_args(const struct experiment_config *cfg, int seq, struct argvec *a)
{
    char *raw = profile_run_path(cfg, seq, "raw");
    argvec_push(a, "--profile");
    argvec_pushf(a, "--profile-file=%s", raw);
    argvec_pushf(a, "--profile-frequency=%d", cfg->profile_freq);
    free(raw);
}

void profile_server_start(const struct experiment_config *cfg, int seq, pid_t pid,
                          struct profile_session *ps)
{
    char *raw = profile_run_path(cfg, seq, "raw");
    profile_session_start(ps, pid, raw, cfg->profile_freq, true);
    free(raw);
}

/* Say a refusal once per process (every run would be refused the same way). */
static void say_refused(const char *line)
{
    static bool said;
    if (!said)
        warning("%s (every run of this experiment goes on without a profile)", line);
    said = true;
}

/* Replace r->json by its text with key set to val (stolen). */
static void set_json_key(struct run_result *r, const char *key, json_t *val)
{
    json_t *root = r->json ? json_loads(r->json, 0, NULL) : NULL;
    if (!json_is_object(root)) {
        json_decref(root);
        json_decref(val);
        return;
    }
    json_object_set_new(root, key, val);
    char *text = json_dumps(root, JSON_COMPACT);
    json_decref(root);
    if (text) {
        free(r->json);
        r->json = xstrdup(text);
        free(text);
    }
}

void profile_run_finish(const struct experiment_config *cfg, int seq,
                        struct profile_session *ps, struct run_result *r)
{
    char *folded = profile_run_path(cfg, seq, "folded");
    char *raw = profile_run_path(cfg, seq, "raw");
    const char *base = strrchr(folded, '/') + 1;
    json_t *info = NULL;
    if (cfg->measure == MEASURE_INSTRUCTIONS) {
        info = json_pack("{s:s, s:s}", "file", base, "event", "instructions");
    } else {
        json_t *child = NULL;
        if (ps) {
            child = profile_session_json(ps);
        } else { /* the bench child's "profile" object */
            json_t *root = r->json ? json_loads(r->json, 0, NULL) : NULL;
            child = json_incref(json_object_get(root, "profile"));
            json_decref(root);
        }
        const char *refused = json_string_value(json_object_get(child, "refused"));
        const char *err = json_string_value(json_object_get(child, "error"));
        if (refused) {
            say_refused(refused);
            info = json_pack("{s:s}", "refused", refused);
        } else if (!child || err) {
            warning("run %d: no profile (%s)", seq, err ? err : "the child made none");
            info = json_pack("{s:s}", "error", err ? err : "no profile");
        } else if (profile_symbolize(raw, folded) < 0) {
            warning("run %d: its profile %s could not be symbolized (see above)", seq, raw);
            info = json_pack("{s:s}", "error", "symbolization failed");
        } else {
            info = json_deep_copy(child);
            json_object_del(info, "raw");
            json_object_set_new(info, "file", json_string(base));
            json_object_set_new(info, "raw_file", json_string(strrchr(raw, '/') + 1));
        }
        json_decref(child);
    }
    struct profile_run pr;
    if (json_object_get(info, "file") && profile_read(folded, &pr) == 0) {
        json_object_set_new(info, "samples", json_integer((json_int_t)pr.samples));
        profile_run_release(&pr);
    }
    set_json_key(r, "profile", info);
    free(folded);
    free(raw);
}
