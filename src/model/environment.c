/* environment: the machine an experiment runs on, as JSON, and the differences between two
 * (see environment.h). Owns no state. */
#include "model/environment.h"
#include "util/fmt.h"
#include "util/knobs.h"
#include "util/strbuf.h"
#include "util/util.h"
#include "version.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <unistd.h>

static char *read_first_line(const char *path)
{
    struct strbuf sb = STRBUF_INIT;
    if (strbuf_read_file(&sb, path) < 0) {
        strbuf_release(&sb);
        return NULL;
    }
    char *nl = strchr(sb.buf, '\n');
    if (nl)
        *nl = '\0';
    char *r = xstrdup(sb.buf);
    strbuf_release(&sb);
    return r;
}

/* The "model name" of the first CPU in /proc/cpuinfo, or NULL; caller frees. */
static char *cpu_model(void)
{
    struct strbuf sb = STRBUF_INIT;
    char *model = NULL;
    if (strbuf_read_file(&sb, "/proc/cpuinfo") == 0) {
        for (char *line = sb.buf; line && *line;) {
            char *nl = strchr(line, '\n');
            if (nl)
                *nl = '\0';
            if (!strncmp(line, "model name", 10)) {
                char *colon = strchr(line, ':');
                if (colon) {
                    colon++;
                    while (*colon == ' ' || *colon == '\t')
                        colon++;
                    model = xstrdup(colon);
                    break;
                }
            }
            line = nl ? nl + 1 : NULL;
        }
    }
    strbuf_release(&sb);
    return model;
}

char *experiment_environment_json(void)
{
    double started_at = wall_time();
    json_t *env = json_object();
    struct utsname u;
    struct sysinfo si;
    char host[256];
    struct strbuf sb = STRBUF_INIT;

    json_object_set_new(env, "pgolab_version", json_string(PGOLAB_VERSION));
    iso_time(&sb, started_at);
    json_object_set_new(env, "started_at", json_string(sb.buf));
    if (gethostname(host, sizeof(host)) == 0) {
        host[sizeof(host) - 1] = '\0';
        json_object_set_new(env, "hostname", jstr(host));
    }
    if (uname(&u) == 0) {
        json_object_set_new(env, "kernel", jstr(u.release));
        json_object_set_new(env, "kernel_version", jstr(u.version));
        json_object_set_new(env, "machine", jstr(u.machine));
    }
    char *model = cpu_model();
    json_object_set_new(env, "cpu_model", jstr(model));
    free(model);
    json_object_set_new(env, "cores", json_integer(sysconf(_SC_NPROCESSORS_ONLN)));
    if (sysinfo(&si) == 0) {
        json_object_set_new(env, "memory_bytes",
                            json_integer((json_int_t)si.totalram * (json_int_t)si.mem_unit));
        json_object_set_new(env, "loadavg_1m", json_real(si.loads[0] / 65536.0));
    }
    char *gov = read_first_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
    json_object_set_new(env, "cpufreq_governor", jstr(gov));
    free(gov);
    json_t *knobs = knobs_json(); /* only when one is set: other environments are unchanged */
    if (knobs)
        json_object_set_new(env, "test_knobs", knobs);

    char *text = json_dumps(env, JSON_COMPACT);
    json_decref(env);
    strbuf_release(&sb);
    return text ? text : xstrdup("{}");
}

/* A JSON value for people: strings as they are, memory in GiB, null/missing "(unknown)". */
static void env_value(struct strbuf *sb, const char *key, json_t *v)
{
    if (!v && !strcmp(key, "test_knobs"))
        strbuf_addstr(sb, "(none)");
    else if (!v || json_is_null(v))
        strbuf_addstr(sb, "(unknown)");
    else if (json_is_string(v))
        strbuf_addstr(sb, json_string_value(v));
    else if (!strcmp(key, "memory_bytes") && json_is_number(v))
        strbuf_addf(sb, "%.1f GiB", json_number_value(v) / (1024.0 * 1024 * 1024));
    else if (json_is_integer(v))
        strbuf_addf(sb, "%lld", (long long)json_integer_value(v));
    else if (json_is_number(v))
        strbuf_addf(sb, "%.2f", json_number_value(v));
    else if (json_is_object(v)) {
        char *t = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
        strbuf_addstr(sb, t ? t : "?");
        free(t);
    } else
        strbuf_addstr(sb, "?");
}

int experiment_env_diff(const char *env_a, const char *env_b, bool with_load,
                        struct strbuf *out)
{
    static const char *const keys[][2] = {
        { "hostname", "hostname" },       { "kernel", "kernel" },
        { "kernel_version", "kernel build" }, { "machine", "machine" },
        { "cpu_model", "CPU model" },     { "cores", "cores" },
        { "memory_bytes", "memory" },     { "cpufreq_governor", "CPU governor" },
        { "pgolab_version", "pgolab version" }, { "test_knobs", "test knobs" },
    };
    json_t *a = env_a ? json_loads(env_a, 0, NULL) : NULL;
    json_t *b = env_b ? json_loads(env_b, 0, NULL) : NULL;
    int n = 0;
    for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
        json_t *va = json_object_get(a, keys[i][0]), *vb = json_object_get(b, keys[i][0]);
        if ((!va && !vb) || (va && vb && json_equal(va, vb)))
            continue;
        strbuf_addf(out, "%s: ", keys[i][1]);
        env_value(out, keys[i][0], va);
        strbuf_addstr(out, " -> ");
        env_value(out, keys[i][0], vb);
        strbuf_addch(out, '\n');
        n++;
    }
    json_t *la = json_object_get(a, "loadavg_1m"), *lb = json_object_get(b, "loadavg_1m");
    if (with_load && json_is_number(la) && json_is_number(lb) &&
        fabs(json_number_value(la) - json_number_value(lb)) >= 0.5) {
        strbuf_addf(out, "load (1 min, at start): %.2f -> %.2f\n", json_number_value(la),
                    json_number_value(lb));
        n++;
    }
    json_decref(a);
    json_decref(b);
    return n;
}
