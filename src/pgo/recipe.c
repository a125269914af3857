/* recipe: reading, validating, finding and expanding PGO target recipes (see recipe.h and
 * docs/recipes.md). jansson parses the JSON; this file checks the shape and says where a
 * mistake is. The placeholders' expansion in a run is recipe_expand.c's. Over 1,000 lines on
 * purpose: every key's parsing reads and fills the one struct recipe, with one error
 * convention (fail_at: FILE:LINE and the key); the distro keys' parsing is the next to move
 * out if it grows. */
#include "pgo/recipe.h"
#include "toolchain/toolchain.h"
#include "util/fs.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <assert.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Every placeholder a template may use (docs/recipes.md "Placeholders"). */
static const char *const placeholders[] = {
    "source", "build", "prefix", "profile_dir", "phase", "cc", "cxx", "cflags", "cxxflags",
    "pgo_flags", "jobs", "phase_options", "host", "port", "socket", "socket_dir", "user", "db",
    "prepared", "lto", "major",
};

/* Parsing context: the file and its text, for error lines. */
struct ctx {
    const char *path;
    const char *text;
};

/* The 1-based line of the first occurrence of "key" (quoted) in the text, or 0. jansson keeps
 * no positions for values, so an unknown or mistyped key is located by its name: the first
 * occurrence is the right one unless the same key appears earlier elsewhere. */
static int line_of(const struct ctx *c, const char *key)
{
    char *quoted = xasprintf("\"%s\"", key);
    const char *hit = strstr(c->text, quoted);
    free(quoted);
    if (!hit)
        return 0;
    int line = 1;
    for (const char *p = c->text; p < hit; p++)
        line += *p == '\n';
    return line;
}

static int fail_at(const struct ctx *c, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail_at(const struct ctx *c, const char *key, const char *fmt, ...)
{
    struct strbuf sb = STRBUF_INIT;
    va_list ap;
    strbuf_init(&sb, 0);
    va_start(ap, fmt);
    strbuf_vaddf(&sb, fmt, ap);
    va_end(ap);
    int line = key ? line_of(c, key) : 0;
    if (line)
        error("%s:%d: %s", c->path, line, sb.buf);
    else
        error("%s: %s", c->path, sb.buf);
    strbuf_release(&sb);
    return -1;
}

/* Every key of obj must be one of known (NULL-terminated); where names the object. */
static int check_keys(const struct ctx *c, json_t *obj, const char *where,
                      const char *const *known)
{
    const char *key;
    json_t *val;
    json_object_foreach(obj, key, val) {
        bool ok = false;
        for (const char *const *k = known; *k && !ok; k++)
            ok = !strcmp(*k, key);
        if (!ok) {
            struct strbuf list = STRBUF_INIT;
            strbuf_init(&list, 0);
            for (const char *const *k = known; *k; k++)
                strbuf_addf(&list, "%s%s", k == known ? "" : ", ", *k);
            fail_at(c, key, "unknown key '%s' in %s (known: %s)", key, where, list.buf);
            strbuf_release(&list);
            return -1;
        }
    }
    return 0;
}

/* Every {name} in s must be a known placeholder. */
static int check_placeholders(const struct ctx *c, const char *key, const char *s)
{
    for (const char *p = strchr(s, '{'); p; p = strchr(p + 1, '{')) {
        const char *end = strchr(p, '}');
        if (!end)
            return 0; /* a literal brace (e.g. a shell-free argument); nothing to expand */
        size_t len = (size_t)(end - p - 1);
        bool ok = false;
        for (size_t i = 0; i < ARRAY_SIZE(placeholders) && !ok; i++)
            ok = strlen(placeholders[i]) == len && !strncmp(placeholders[i], p + 1, len);
        if (!ok && len > 0 && len < 40) {
            bool word = true;
            for (size_t i = 0; i < len; i++)
                word = word && (islower((unsigned char)p[1 + i]) || p[1 + i] == '_');
            if (word)
                return fail_at(c, key, "unknown placeholder {%.*s} in \"%s\" (see docs/recipes.md)",
                               (int)len, p + 1, s);
        }
    }
    return 0;
}

static int get_string(const struct ctx *c, json_t *obj, const char *key, bool required,
                      char **out)
{
    json_t *v = json_object_get(obj, key);
    *out = NULL;
    if (!v)
        return required ? fail_at(c, NULL, "missing key '%s'", key) : 0;
    if (!json_is_string(v))
        return fail_at(c, key, "'%s' must be a string", key);
    if (check_placeholders(c, key, json_string_value(v)) < 0)
        return -1;
    *out = xstrdup(json_string_value(v));
    return 0;
}

static int get_bool(const struct ctx *c, json_t *obj, const char *key, bool dflt, bool *out)
{
    json_t *v = json_object_get(obj, key);
    *out = dflt;
    if (!v)
        return 0;
    if (!json_is_boolean(v))
        return fail_at(c, key, "'%s' must be true or false", key);
    *out = json_is_true(v);
    return 0;
}

/* A JSON array of strings as a NULL-terminated owned array. */
static int get_strings(const struct ctx *c, json_t *v, const char *key, char ***out)
{
    *out = NULL;
    if (!json_is_array(v))
        return fail_at(c, key, "'%s' must be an array of strings", key);
    size_t n = json_array_size(v);
    char **a = xcalloc(n + 1, sizeof(*a));
    for (size_t i = 0; i < n; i++) {
        json_t *s = json_array_get(v, i);
        if (!json_is_string(s) || check_placeholders(c, key, json_string_value(s)) < 0) {
            for (size_t j = 0; j < i; j++)
                free(a[j]);
            free(a);
            return json_is_string(s) ? -1
                                     : fail_at(c, key, "'%s' must be an array of strings", key);
        }
        a[i] = xstrdup(json_string_value(s));
    }
    *out = a;
    return 0;
}

static void free_strings(char **a)
{
    for (char **p = a; p && *p; p++)
        free(*p);
    free(a);
}

static int load_steps(const struct ctx *c, json_t *arr, const char *key, struct recipe_step **out,
                      int *n)
{
    static const char *const known[] = { "name", "run", "cwd", "env", NULL };
    *out = NULL;
    *n = 0;
    if (!json_is_array(arr) || json_array_size(arr) == 0)
        return fail_at(c, key, "'%s' must be a non-empty array of steps ({\"name\": ..., "
                       "\"run\": [...]})", key);
    *out = xcalloc(json_array_size(arr), sizeof(**out));
    for (size_t i = 0; i < json_array_size(arr); i++) {
        json_t *o = json_array_get(arr, i);
        struct recipe_step *st = &(*out)[i];
        char where[64];
        snprintf(where, sizeof(where), "%s[%zu]", key, i);
        *n = (int)i + 1;
        if (!json_is_object(o))
            return fail_at(c, key, "%s must be an object with \"name\" and \"run\"", where);
        if (check_keys(c, o, where, known) < 0 || get_string(c, o, "name", false, &st->name) < 0 ||
            get_string(c, o, "cwd", false, &st->cwd) < 0)
            return -1;
        json_t *run = json_object_get(o, "run");
        if (!run)
            return fail_at(c, st->name ? st->name : key,
                           "%s (%s): missing key 'run' (the command as an argv array)", where,
                           st->name ? st->name : "unnamed");
        if (get_strings(c, run, "run", &st->argv) < 0)
            return -1;
        if (!st->argv[0])
            return fail_at(c, "run", "%s: 'run' is empty", where);
        if (!st->name)
            st->name = xstrdup(st->argv[0]);
        json_t *env = json_object_get(o, "env");
        if (env && get_strings(c, env, "env", &st->env) < 0)
            return -1;
        for (char **e = st->env; e && *e; e++)
            if (!strchr(*e, '='))
                return fail_at(c, "env", "%s: env entry '%s' is not NAME=VALUE", where, *e);
    }
    return 0;
}

static void release_steps(struct recipe_step *s, int n)
{
    for (int i = 0; i < n; i++) {
        free(s[i].name);
        free_strings(s[i].argv);
        free(s[i].cwd);
        free_strings(s[i].env);
    }
    free(s);
}

/* source.version: {"file": F, "pattern": RE}, RE a POSIX extended regex with a group */
static int load_version(const struct ctx *c, json_t *ver, struct recipe *r)
{
    static const char *const known[] = { "file", "pattern", NULL };
    if (!json_is_object(ver))
        return fail_at(c, "version", "'version' must be an object: {\"file\": the tree's file "
                                     "that names its version, \"pattern\": a regex over it}");
    if (check_keys(c, ver, "version", known) < 0 ||
        get_string(c, ver, "file", true, &r->version_file) < 0 ||
        get_string(c, ver, "pattern", true, &r->version_pattern) < 0)
        return -1;
    regex_t re;
    if (regcomp(&re, r->version_pattern, REG_EXTENDED) != 0)
        return fail_at(c, "pattern", "source.version.pattern '%s': not a POSIX extended "
                       "regular expression", r->version_pattern);
    size_t groups = re.re_nsub;
    regfree(&re);
    if (groups < 1)
        return fail_at(c, "pattern", "source.version.pattern '%s': expected at least one "
                       "group, e.g. ([0-9]+)", r->version_pattern);
    return 0;
}

static int load_source(const struct ctx *c, json_t *src, struct recipe *r)
{
    static const char *const known[] = { "debian", "suite", "expect", "prepared", "hint",
                                         "version", NULL };
    if (!json_is_object(src))
        return fail_at(c, "source", "'source' must be an object");
    if (check_keys(c, src, "source", known) < 0 ||
        get_string(c, src, "debian", false, &r->debian_package) < 0 ||
        get_string(c, src, "suite", false, &r->debian_suite) < 0 ||
        get_string(c, src, "hint", false, &r->source_hint) < 0)
        return -1;
    if (r->debian_suite && !r->debian_package)
        return fail_at(c, "suite", "'suite' names where the 'debian' source package comes from: "
                                   "give 'debian' too");
    json_t *ex = json_object_get(src, "expect");
    if (!ex)
        return fail_at(c, "source", "missing key 'expect' in source (files a matching tree has)");
    if (get_strings(c, ex, "expect", &r->expect) < 0)
        return -1;
    if (!r->expect[0])
        return fail_at(c, "expect", "'expect' must name at least one file");
    json_t *pr = json_object_get(src, "prepared");
    if (pr && get_strings(c, pr, "prepared", &r->prepared) < 0)
        return -1;
    if (pr && !r->prepared[0])
        return fail_at(c, "prepared", "'prepared' must name at least one file");
    json_t *ver = json_object_get(src, "version");
    return ver ? load_version(c, ver, r) : 0;
}

static int load_product(const struct ctx *c, json_t *root, struct recipe *r)
{
    static const char *const server_keys[] = { "driver", "binary", "train_options",
                                               "suite_server", "official", NULL };
    static const char *const official_keys[] = { "binary", "package", NULL };
    json_t *srv = json_object_get(root, "server");
    char *lib = NULL;
    if (get_string(c, root, "library", false, &lib) < 0)
        return -1;
    if (!!srv == !!lib) {
        free(lib);
        return fail_at(c, NULL, "needs exactly one of 'server' (a server binary under the prefix) "
                       "or 'library' (a shared library under the prefix)");
    }
    if (lib) {
        r->product = RECIPE_LIBRARY;
        r->library = lib;
        return 0;
    }
    r->product = RECIPE_SERVER;
    if (!json_is_object(srv))
        return fail_at(c, "server", "'server' must be an object");
    char *driver = NULL;
    if (check_keys(c, srv, "server", server_keys) < 0 ||
        get_string(c, srv, "driver", true, &driver) < 0 ||
        get_string(c, srv, "binary", true, &r->server_binary) < 0) {
        free(driver);
        return -1;
    }
    int rc = 0;
    if (!strcmp(driver, "mysql"))
        r->server_kind = SERVER_MYSQL;
    else if (!strcmp(driver, "pgsql"))
        r->server_kind = SERVER_PGSQL;
    else
        rc = fail_at(c, "driver", "server.driver '%s': expected mysql or pgsql", driver);
    free(driver);
    json_t *to = json_object_get(srv, "train_options");
    if (rc == 0 && to)
        rc = get_strings(c, to, "train_options", &r->train_options);
    char *ss = NULL;
    if (rc == 0 && (rc = get_string(c, srv, "suite_server", false, &ss)) == 0 && ss) {
        r->suite_own_server = !strcmp(ss, "own");
        if (!r->suite_own_server && strcmp(ss, "started"))
            rc = fail_at(c, "suite_server", "server.suite_server '%s': expected \"started\" "
                         "(pgolab starts the build's server, the suite connects to it) or \"own\" "
                         "(the suite starts the build's servers itself)", ss);
    }
    free(ss);
    json_t *off = json_object_get(srv, "official");
    if (rc == 0 && off) {
        if (!json_is_object(off))
            return fail_at(c, "official", "server.official must be an object: {\"binary\": "
                           "\"/usr/sbin/mariadbd\", \"package\": \"mariadb-server\"}");
        if (check_keys(c, off, "server.official", official_keys) < 0 ||
            get_string(c, off, "binary", true, &r->official_binary) < 0 ||
            get_string(c, off, "package", false, &r->official_package) < 0)
            return -1;
        if (r->official_binary[0] != '/')
            rc = fail_at(c, "official", "server.official.binary '%s': expected an absolute path",
                         r->official_binary);
    }
    return rc;
}

/* A suite that starts its own servers has no started server to connect to: its steps may not
 * name one. -1 with FILE:LINE on the first such placeholder. */
static int check_own_suite(const struct ctx *c, const struct recipe *r)
{
    static const char *const conn[] = { "{host}", "{port}", "{socket}", "{socket_dir}",
                                        "{user}", "{db}", NULL };
    for (int i = 0; r->suite_own_server && i < r->nsuite; i++)
        for (char **a = r->suite[i].argv; *a; a++)
            for (const char *const *k = conn; *k; k++)
                if (strstr(*a, *k))
                    return fail_at(c, "suite_server", "suite step '%s' uses %s, but "
                                   "server.suite_server is \"own\": pgolab starts no server "
                                   "for the suite", r->suite[i].name, *k);
    return 0;
}

static int load_pgo(const struct ctx *c, json_t *root, struct recipe *r)
{
    static const char *const known[] = { "flags", "phase_options", "strict_profile",
                                         "hot_functions", NULL };
    static const char *const phase_keys[] = { "baseline", "instrumented", "pgo", NULL };
    json_t *pgo = json_object_get(root, "pgo");
    r->flags = RECIPE_FLAGS_COMPILER;
    r->strict_profile = r->product == RECIPE_LIBRARY;
    if (!pgo)
        return 0;
    if (!json_is_object(pgo))
        return fail_at(c, "pgo", "'pgo' must be an object");
    char *flags = NULL;
    if (check_keys(c, pgo, "pgo", known) < 0 || get_string(c, pgo, "flags", false, &flags) < 0 ||
        get_bool(c, pgo, "strict_profile", r->strict_profile, &r->strict_profile) < 0)
        return -1;
    if (flags && !strcmp(flags, "options"))
        r->flags = RECIPE_FLAGS_OPTIONS;
    else if (flags && strcmp(flags, "compiler")) {
        free(flags);
        return fail_at(c, "flags", "pgo.flags: expected \"compiler\" (pgolab's flag table) or "
                       "\"options\" (the recipe's phase_options)");
    }
    free(flags);
    json_t *hot = json_object_get(pgo, "hot_functions");
    if (hot && get_strings(c, hot, "hot_functions", &r->hot_functions) < 0)
        return -1;
    for (char **h = r->hot_functions; h && *h; h++)
        if (!**h || **h == ':' || (*h)[strlen(*h) - 1] == ':' ||
            strchr(strchr(*h, ':') ? strchr(*h, ':') + 1 : *h, ':'))
            return fail_at(c, "hot_functions", "pgo.hot_functions: '%s': expected "
                           "\"OBJECT:FUNCTION\" (the source file's name without its extension, "
                           "e.g. \"execExprInterp:ExecInterpExpr\") or \"FUNCTION\"", *h);
    json_t *po = json_object_get(pgo, "phase_options");
    if (r->flags == RECIPE_FLAGS_OPTIONS && !po)
        return fail_at(c, "flags", "pgo.flags \"options\" needs pgo.phase_options "
                       "({\"instrumented\": [...], \"pgo\": [...]})");
    if (po) {
        if (!json_is_object(po) || check_keys(c, po, "pgo.phase_options", phase_keys) < 0)
            return po && !json_is_object(po)
                       ? fail_at(c, "phase_options", "pgo.phase_options must be an object")
                       : -1;
        for (int ph = 0; ph < BUILD_NPHASES; ph++) {
            json_t *v = json_object_get(po, phase_keys[ph]);
            if (v && get_strings(c, v, phase_keys[ph], &r->phase_options[ph]) < 0)
                return -1;
        }
    }
    return 0;
}

/* "bolt": {"cflags": [...], "clang_cflags": [...], "link_flags": [...], "binary": "...",
 * "append_pid": bool, "sleep_time": seconds}; link_flags must keep the relocations BOLT needs to
 * move functions (-Wl,--emit-relocs or -Wl,-q). */
static int load_bolt(const struct ctx *c, json_t *root, struct recipe *r)
{
    static const char *const known[] = { "cflags", "clang_cflags", "link_flags", "binary",
                                         "append_pid", "sleep_time", "instrument_options",
                                         NULL };
    json_t *b = json_object_get(root, "bolt");
    if (!b)
        return 0;
    if (!json_is_object(b))
        return fail_at(c, "bolt", "'bolt' must be an object");
    json_t *cf = json_object_get(b, "cflags"), *lf = json_object_get(b, "link_flags");
    json_t *io = json_object_get(b, "instrument_options");
    json_t *ccf = json_object_get(b, "clang_cflags");
    if (check_keys(c, b, "bolt", known) < 0 ||
        (cf && get_strings(c, cf, "cflags", &r->bolt_cflags) < 0) ||
        (ccf && get_strings(c, ccf, "clang_cflags", &r->bolt_clang_cflags) < 0) ||
        (lf && get_strings(c, lf, "link_flags", &r->bolt_link_flags) < 0) ||
        (io && get_strings(c, io, "instrument_options", &r->bolt_instrument_options) < 0) ||
        get_string(c, b, "binary", false, &r->bolt_binary) < 0 ||
        get_bool(c, b, "append_pid", true, &r->bolt_append_pid) < 0)
        return -1;
    json_t *st = json_object_get(b, "sleep_time");
    if (st && (!json_is_integer(st) || json_integer_value(st) < 0 ||
               json_integer_value(st) > 86400))
        return fail_at(c, "sleep_time", "bolt.sleep_time must be a number of seconds (0 to "
                       "86400; 0: the profile is written only at exit)");
    r->bolt_sleep_s = st ? (int)json_integer_value(st) : 0;
    if (!r->bolt_cflags)
        r->bolt_cflags = xcalloc(1, sizeof(char *));
    if (!r->bolt_clang_cflags)
        r->bolt_clang_cflags = xcalloc(1, sizeof(char *));
    if (!r->bolt_link_flags)
        r->bolt_link_flags = xcalloc(1, sizeof(char *));
    if (!r->bolt_instrument_options)
        r->bolt_instrument_options = xcalloc(1, sizeof(char *));
    if (!r->bolt_binary)
        r->bolt_binary = xstrdup(r->product == RECIPE_LIBRARY ? r->library : r->server_binary);
    r->has_bolt = true;
    return 0;
}

/* distro.drop / distro.requires: [{"option": ..., "reason" | "package": ...}]; a requires
 * entry without "option" is always needed (what the package's configure uses by default). */
static int load_distro_rules(const struct ctx *c, json_t *arr, const char *key,
                             const char *what, struct recipe_distro_rule **out, int *n)
{
    const char *const known[] = { "option", what, NULL };
    if (!json_is_array(arr))
        return fail_at(c, key, "distro.%s must be an array of {\"option\", \"%s\"}", key, what);
    *out = xcalloc(json_array_size(arr) + 1, sizeof(**out));
    for (size_t i = 0; i < json_array_size(arr); i++) {
        json_t *o = json_array_get(arr, i);
        struct recipe_distro_rule *d = &(*out)[i];
        *n = (int)i + 1;
        if (!json_is_object(o))
            return fail_at(c, key, "distro.%s entries are objects", key);
        if (check_keys(c, o, key, known) < 0 ||
            get_string(c, o, "option", !strcmp(what, "reason"), &d->option) < 0 ||
            get_string(c, o, what, true, strcmp(what, "reason") ? &d->package : &d->reason) < 0)
            return -1;
    }
    return 0;
}

/* "distro": {"run": [...], "paths": [...], "drop": [...], "requires": [...]}: server recipes
 * only; run is required and its first word names the program Debian's rules run. */
static int load_distro(const struct ctx *c, json_t *root, struct recipe *r)
{
    static const char *const known[] = { "run", "paths", "drop", "requires", NULL };
    json_t *d = json_object_get(root, "distro");
    if (!d)
        return 0;
    if (!json_is_object(d))
        return fail_at(c, "distro", "'distro' must be an object");
    if (r->product != RECIPE_SERVER)
        return fail_at(c, "distro", "'distro' is for server recipes");
    json_t *run = json_object_get(d, "run"), *paths = json_object_get(d, "paths");
    json_t *drop = json_object_get(d, "drop"), *req = json_object_get(d, "requires");
    if (check_keys(c, d, "distro", known) < 0)
        return -1;
    if (!run)
        return fail_at(c, "distro", "missing key 'run' in distro (the configure command's head, "
                       "e.g. [\"{source}/configure\"] or [\"cmake\", \"{source}\"])");
    if (get_strings(c, run, "run", &r->distro_run) < 0 ||
        (paths && get_strings(c, paths, "paths", &r->distro_paths) < 0) ||
        (drop && load_distro_rules(c, drop, "drop", "reason", &r->distro_drop,
                                   &r->ndistro_drop) < 0) ||
        (req && load_distro_rules(c, req, "requires", "package", &r->distro_requires,
                                  &r->ndistro_requires) < 0))
        return -1;
    if (!r->distro_run[0])
        return fail_at(c, "run", "distro.run is empty");
    if (!r->distro_paths)
        r->distro_paths = xcalloc(1, sizeof(char *));
    bool configure = false;
    for (int i = 0; i < r->nsteps; i++)
        configure = configure || !strcmp(r->steps[i].name, "configure");
    if (!configure)
        return fail_at(c, "distro", "'distro' replaces the step named \"configure\", and the "
                       "recipe's steps have none");
    r->has_distro = true;
    return 0;
}

static void release_distro_rules(struct recipe_distro_rule *d, int n)
{
    for (int i = 0; i < n; i++) {
        free(d[i].option);
        free(d[i].reason);
        free(d[i].package);
    }
    free(d);
}

/* "requires": [{"program" | "file", "package"[, "unless"]}]; unless only where allowed. */
static int load_tools(const struct ctx *c, json_t *tl, const char *key, bool unless,
                      struct recipe_tool **out, int *n)
{
    static const char *const tool_keys[] = { "program", "file", "package", NULL };
    static const char *const tool_keys_unless[] = { "program", "file", "package", "unless", NULL };
    if (!json_is_array(tl))
        return fail_at(c, key, "'%s' must be an array", key);
    *out = xcalloc(json_array_size(tl) + 1, sizeof(**out));
    for (size_t i = 0; i < json_array_size(tl); i++) {
        json_t *o = json_array_get(tl, i);
        struct recipe_tool *t = &(*out)[i];
        *n = (int)i + 1;
        if (!json_is_object(o) ||
            check_keys(c, o, "requires[]", unless ? tool_keys_unless : tool_keys) < 0 ||
            get_string(c, o, "program", false, &t->program) < 0 ||
            get_string(c, o, "file", false, &t->file) < 0 ||
            get_string(c, o, "package", true, &t->package) < 0 ||
            get_string(c, o, "unless", false, &t->unless) < 0)
            return json_is_object(o) ? -1 : fail_at(c, key, "requires entries are objects");
        if (!t->program == !t->file)
            return fail_at(c, key, "requires[%zu]: needs one of 'program' (on PATH) or "
                           "'file' (an absolute path, e.g. a library's header)", i);
    }
    return 0;
}

static void release_tools(struct recipe_tool *t, int n)
{
    for (int i = 0; i < n; i++) {
        free(t[i].program);
        free(t[i].file);
        free(t[i].package);
        free(t[i].unless);
    }
    free(t);
}

/* "versions": {"default": MAJOR, "majors": {MAJOR: {"requires": [...]}, ...}}: the major
 * versions a server recipe builds, what differs between them as data ({major} in source.debian
 * and server.official, a major's own requires), and Debian 12's. A recipe without it may not
 * name {major} where only it gives the value. */
static int load_versions(const struct ctx *c, json_t *root, struct recipe *r)
{
    static const char *const keys[] = { "default", "majors", NULL };
    static const char *const major_keys[] = { "requires", "steps", NULL };
    json_t *v = json_object_get(root, "versions");
    const char *const templated[] = { r->debian_package, r->official_binary, r->official_package };
    if (!v) {
        for (size_t i = 0; i < ARRAY_SIZE(templated); i++)
            if (templated[i] && strstr(templated[i], "{major}"))
                return fail_at(c, NULL, "'%s' names {major}, but the recipe has no \"versions\" "
                               "(the majors it builds, docs/recipes.md)", templated[i]);
        return 0;
    }
    if (!json_is_object(v) || check_keys(c, v, "versions", keys) < 0 ||
        get_string(c, v, "default", true, &r->major_default) < 0)
        return json_is_object(v) ? -1 : fail_at(c, "versions", "'versions' must be an object");
    json_t *m = json_object_get(v, "majors");
    if (!json_is_object(m) || json_object_size(m) == 0)
        return fail_at(c, "majors", "versions.majors must be an object with a key per major "
                       "version (\"15\": {})");
    size_t n = json_object_size(m), i = 0;
    r->majors = xcalloc(n + 1, sizeof(*r->majors));
    r->major_tools = xcalloc(n, sizeof(*r->major_tools));
    r->nmajor_tools = xcalloc(n, sizeof(*r->nmajor_tools));
    r->major_steps = xcalloc(n, sizeof(*r->major_steps));
    r->nmajor_steps = xcalloc(n, sizeof(*r->nmajor_steps));
    const char *key;
    json_t *o;
    json_object_foreach(m, key, o) {
        r->majors[i] = xstrdup(key);
        if (!json_is_object(o) || check_keys(c, o, "versions.majors[]", major_keys) < 0)
            return json_is_object(o)
                       ? -1
                       : fail_at(c, key, "versions.majors.%s must be an object", key);
        json_t *tl = json_object_get(o, "requires");
        if (tl && load_tools(c, tl, "requires", false, &r->major_tools[i], &r->nmajor_tools[i]) < 0)
            return -1;
        json_t *st = json_object_get(o, "steps");
        if (st && load_steps(c, st, "steps", &r->major_steps[i], &r->nmajor_steps[i]) < 0)
            return -1;
        i++;
    }
    /* oldest first (strverscmp: "10.11" before "11.8"), each with its own requires */
    for (size_t a = 1; a < n; a++)
        for (size_t b = a; b > 0 && strverscmp(r->majors[b - 1], r->majors[b]) > 0; b--) {
            char *t = r->majors[b];
            r->majors[b] = r->majors[b - 1];
            r->majors[b - 1] = t;
            struct recipe_tool *tt = r->major_tools[b];
            r->major_tools[b] = r->major_tools[b - 1];
            r->major_tools[b - 1] = tt;
            int tn = r->nmajor_tools[b];
            r->nmajor_tools[b] = r->nmajor_tools[b - 1];
            r->nmajor_tools[b - 1] = tn;
            struct recipe_step *ts = r->major_steps[b];
            r->major_steps[b] = r->major_steps[b - 1];
            r->major_steps[b - 1] = ts;
            tn = r->nmajor_steps[b];
            r->nmajor_steps[b] = r->nmajor_steps[b - 1];
            r->nmajor_steps[b - 1] = tn;
        }
    bool known = false;
    for (i = 0; r->majors[i]; i++)
        known = known || !strcmp(r->majors[i], r->major_default);
    if (!known)
        return fail_at(c, "default", "versions.default '%s' is not one of versions.majors",
                       r->major_default);
    r->debian_package_template = r->debian_package ? xstrdup(r->debian_package) : NULL;
    return 0;
}

/* s with every "{major}" replaced by major (s freed). */
static char *with_major(char *s, const char *major)
{
    if (!s || !strstr(s, "{major}"))
        return s;
    struct strbuf sb = STRBUF_INIT;
    strbuf_init(&sb, 0);
    for (const char *at = s; *at;) {
        const char *hit = strstr(at, "{major}");
        if (!hit) {
            strbuf_addstr(&sb, at);
            break;
        }
        strbuf_add(&sb, at, (size_t)(hit - at));
        strbuf_addstr(&sb, major);
        at = hit + strlen("{major}");
    }
    free(s);
    return strbuf_detach(&sb);
}

char *recipe_majors_list(const struct recipe *r)
{
    struct strbuf sb = STRBUF_INIT;
    strbuf_init(&sb, 0);
    for (char **m = r->majors; m && *m; m++)
        strbuf_addf(&sb, "%s%s", m == r->majors ? "" : ", ", *m);
    return strbuf_detach(&sb);
}

int recipe_select_major(struct recipe *r, const char *major)
{
    assert(!r->major);
    if (!r->majors)
        return error("--db-version=%s: the %s recipe builds one version only (it has no "
                     "\"versions\")", major, r->name);
    int k = -1;
    for (int i = 0; r->majors[i]; i++)
        if (!strcmp(r->majors[i], major))
            k = i;
    if (k < 0) {
        char *list = recipe_majors_list(r);
        error("--db-version=%s: the %s recipe builds the major versions %s", major, r->name, list);
        free(list);
        return -1;
    }
    r->major = xstrdup(major);
    r->debian_package = with_major(r->debian_package, major);
    r->official_binary = with_major(r->official_binary, major);
    r->official_package = with_major(r->official_package, major);
    r->source_hint = with_major(r->source_hint, major);
    if (r->nmajor_tools[k]) { /* the major's own requires after the recipe's */
        r->tools = xrealloc(r->tools,
                            (size_t)(r->ntools + r->nmajor_tools[k] + 1) * sizeof(*r->tools));
        for (int i = 0; i < r->nmajor_tools[k]; i++) {
            const struct recipe_tool *t = &r->major_tools[k][i];
            struct recipe_tool *d = &r->tools[r->ntools++];
            d->program = t->program ? xstrdup(t->program) : NULL;
            d->file = t->file ? xstrdup(t->file) : NULL;
            d->package = xstrdup(t->package);
            d->unless = NULL;
        }
        memset(&r->tools[r->ntools], 0, sizeof(*r->tools));
    }
    if (r->nmajor_steps[k]) { /* the major's own steps after the recipe's (moved, not copied) */
        r->steps = xrealloc(r->steps, (size_t)(r->nsteps + r->nmajor_steps[k]) * sizeof(*r->steps));
        memcpy(&r->steps[r->nsteps], r->major_steps[k],
               (size_t)r->nmajor_steps[k] * sizeof(*r->steps));
        r->nsteps += r->nmajor_steps[k];
        free(r->major_steps[k]);
        r->major_steps[k] = NULL;
        r->nmajor_steps[k] = 0;
    }
    return 0;
}

/* "prepare": {"name": ..., "steps": [...], "requires": [...]} (library recipes). */
static int load_prepare(const struct ctx *c, json_t *root, struct recipe *r)
{
    static const char *const known[] = { "name", "steps", "requires", NULL };
    json_t *pp = json_object_get(root, "prepare");
    if (!pp)
        return 0;
    if (r->product != RECIPE_LIBRARY)
        return fail_at(c, "prepare", "'prepare' is for library recipes (servers build from the "
                       "tree with their steps)");
    if (!r->prepared)
        return fail_at(c, "prepare", "'prepare' needs source.prepared (the files its steps make)");
    if (!json_is_object(pp))
        return fail_at(c, "prepare", "'prepare' must be an object with \"name\" and \"steps\"");
    if (check_keys(c, pp, "prepare", known) < 0 ||
        get_string(c, pp, "name", false, &r->prepare_name) < 0)
        return -1;
    if (!r->prepare_name)
        r->prepare_name = xstrdup("prepare");
    json_t *steps = json_object_get(pp, "steps");
    if (!steps)
        return fail_at(c, "prepare", "missing key 'steps' in prepare");
    if (load_steps(c, steps, "prepare.steps", &r->prepare, &r->nprepare) < 0)
        return -1;
    json_t *tl = json_object_get(pp, "requires");
    return tl ? load_tools(c, tl, "requires", true, &r->prepare_tools, &r->nprepare_tools) : 0;
}

static int load_extras(const struct ctx *c, json_t *root, struct recipe *r)
{
    static const char *const err_keys[] = { "contains", "message", NULL };
    json_t *le = json_object_get(root, "log_errors");
    if (le) {
        if (!json_is_array(le))
            return fail_at(c, "log_errors", "'log_errors' must be an array");
        r->log_errors = xcalloc(json_array_size(le) + 1, sizeof(*r->log_errors));
        for (size_t i = 0; i < json_array_size(le); i++) {
            json_t *o = json_array_get(le, i);
            struct recipe_log_error *e = &r->log_errors[i];
            r->nlog_errors = (int)i + 1;
            if (!json_is_object(o) || check_keys(c, o, "log_errors[]", err_keys) < 0 ||
                get_string(c, o, "contains", true, &e->contains) < 0 ||
                get_string(c, o, "message", true, &e->message) < 0)
                return json_is_object(o)
                           ? -1
                           : fail_at(c, "log_errors", "log_errors entries are objects");
        }
    }
    json_t *tl = json_object_get(root, "requires");
    if (tl && load_tools(c, tl, "requires", false, &r->tools, &r->ntools) < 0)
        return -1;
    return 0;
}

int recipe_load(const char *path, struct recipe *out)
{
    static const char *const known[] = {
        "pgolab_recipe", "name", "title", "description", "source", "server", "library",
        "build_dir", "config_headers", "pgo", "prepare", "steps", "suite", "log_errors",
        "requires", "bolt", "versions", "distro", NULL,
    };
    struct strbuf text = STRBUF_INIT;
    json_error_t jerr;
    json_t *root = NULL;
    int rc = -1;

    memset(out, 0, sizeof(*out));
    strbuf_init(&text, 0);
    if (strbuf_read_file(&text, path) < 0) {
        error("recipe %s: %s", path, strerror(errno));
        goto out;
    }
    out->path = abs_path(path);
    struct ctx c = { path, text.buf };
    root = json_loads(text.buf, 0, &jerr);
    if (!root) {
        error("%s:%d:%d: not valid JSON: %s", path, jerr.line, jerr.column, jerr.text);
        goto out;
    }
    if (!json_is_object(root)) {
        fail_at(&c, NULL, "a recipe is a JSON object");
        goto out;
    }
    if (check_keys(&c, root, "the recipe", known) < 0)
        goto out;
    json_t *fmt = json_object_get(root, "pgolab_recipe");
    if (!json_is_integer(fmt)) {
        fail_at(&c, "pgolab_recipe",
                "missing or non-integer 'pgolab_recipe' (the format version, %d)", RECIPE_FORMAT);
        goto out;
    }
    if (json_integer_value(fmt) > RECIPE_FORMAT || json_integer_value(fmt) < 1) {
        fail_at(&c, "pgolab_recipe", "format %lld is not one this pgolab reads (%d)",
                (long long)json_integer_value(fmt), RECIPE_FORMAT);
        goto out;
    }
    if (get_string(&c, root, "name", true, &out->name) < 0 ||
        get_string(&c, root, "title", false, &out->title) < 0 ||
        get_string(&c, root, "description", false, &out->description) < 0)
        goto out;
    if (!out->title)
        out->title = xstrdup(out->name);
    json_t *src = json_object_get(root, "source");
    if (!src) {
        fail_at(&c, NULL, "missing key 'source'");
        goto out;
    }
    if (load_source(&c, src, out) < 0 || load_product(&c, root, out) < 0 ||
        load_pgo(&c, root, out) < 0 || load_extras(&c, root, out) < 0 ||
        load_prepare(&c, root, out) < 0 || load_bolt(&c, root, out) < 0 ||
        load_versions(&c, root, out) < 0)
        goto out;
    if (out->prepared && out->product != RECIPE_LIBRARY) {
        fail_at(&c, "prepared", "source.prepared is for library recipes");
        goto out;
    }
    char *bd = NULL;
    if (get_string(&c, root, "build_dir", false, &bd) < 0)
        goto out;
    out->build_dir = RECIPE_BUILD_DIR_PER_VARIANT;
    if (bd && !strcmp(bd, "shared"))
        out->build_dir = RECIPE_BUILD_DIR_SHARED;
    else if (bd && !strcmp(bd, "pgo-reuses-instrumented"))
        out->build_dir = RECIPE_BUILD_DIR_PGO_REUSES;
    else if (bd && strcmp(bd, "per-variant")) {
        fail_at(&c, "build_dir", "build_dir '%s': expected \"per-variant\", \"shared\" or "
                "\"pgo-reuses-instrumented\"", bd);
        free(bd);
        goto out;
    }
    free(bd);
    json_t *ch = json_object_get(root, "config_headers");
    if (ch && get_strings(&c, ch, "config_headers", &out->config_headers) < 0)
        goto out;
    for (char **h = out->config_headers; h && *h; h++)
        if (!**h || **h == '/' || strstr(*h, "..")) {
            fail_at(&c, "config_headers", "config_headers: '%s': expected a path relative to "
                    "the build directory (e.g. \"include/my_config.h\")", *h);
            goto out;
        }
    json_t *steps = json_object_get(root, "steps");
    if (!steps) {
        fail_at(&c, NULL, "missing key 'steps' (configure, build and install commands)");
        goto out;
    }
    if (load_steps(&c, steps, "steps", &out->steps, &out->nsteps) < 0)
        goto out;
    json_t *suite = json_object_get(root, "suite");
    if (suite && load_steps(&c, suite, "suite", &out->suite, &out->nsuite) < 0)
        goto out;
    if (suite && out->product == RECIPE_LIBRARY) {
        fail_at(&c, "suite", "'suite' is for server recipes (it runs against a started server)");
        goto out;
    }
    if (check_own_suite(&c, out) < 0 || load_distro(&c, root, out) < 0)
        goto out;
    out->sha256 = sha256_file(path);
    rc = out->sha256 ? 0 : -1;
out:
    json_decref(root);
    strbuf_release(&text);
    if (rc < 0)
        recipe_release(out);
    return rc;
}

void recipe_release(struct recipe *r)
{
    free(r->path);
    free(r->name);
    free(r->title);
    free(r->description);
    free(r->sha256);
    free(r->server_binary);
    free(r->official_binary);
    free(r->official_package);
    free(r->library);
    free(r->debian_package);
    free(r->debian_suite);
    free(r->debian_package_template);
    free(r->major);
    free(r->major_default);
    for (int i = 0; r->majors && r->majors[i]; i++) {
        release_tools(r->major_tools[i], r->nmajor_tools[i]);
        release_steps(r->major_steps[i], r->nmajor_steps[i]);
    }
    free(r->major_tools);
    free(r->nmajor_tools);
    free(r->major_steps);
    free(r->nmajor_steps);
    free_strings(r->majors);
    free_strings(r->expect);
    free(r->source_hint);
    free(r->version_file);
    free(r->version_pattern);
    free_strings(r->prepared);
    free(r->prepare_name);
    release_steps(r->prepare, r->nprepare);
    release_tools(r->prepare_tools, r->nprepare_tools);
    for (int ph = 0; ph < BUILD_NPHASES; ph++)
        free_strings(r->phase_options[ph]);
    release_steps(r->steps, r->nsteps);
    release_steps(r->suite, r->nsuite);
    for (int i = 0; i < r->nlog_errors; i++) {
        free(r->log_errors[i].contains);
        free(r->log_errors[i].message);
    }
    free(r->log_errors);
    release_tools(r->tools, r->ntools);
    free_strings(r->train_options);
    free_strings(r->hot_functions);
    free_strings(r->config_headers);
    free_strings(r->distro_run);
    free_strings(r->distro_paths);
    release_distro_rules(r->distro_drop, r->ndistro_drop);
    release_distro_rules(r->distro_requires, r->ndistro_requires);
    free_strings(r->bolt_cflags);
    free_strings(r->bolt_clang_cflags);
    free_strings(r->bolt_link_flags);
    free_strings(r->bolt_instrument_options);
    free(r->bolt_binary);
    memset(r, 0, sizeof(*r));
}

int recipe_check_tools(const struct recipe *r, const struct recipe_tool *tools, int n,
                       const char *what, const char *source)
{
    struct strbuf need = STRBUF_INIT, pkgs = STRBUF_INIT;
    const char **listed_pkgs = xcalloc((size_t)(n > 0 ? n : 1), sizeof(*listed_pkgs));
    int missing = 0, npkgs = 0;
    for (int i = 0; i < n; i++) {
        const struct recipe_tool *t = &tools[i];
        if (t->unless && source) {
            char *p = path_join(source, t->unless);
            bool has = file_size(p) >= 0;
            free(p);
            if (has)
                continue;
        }
        bool found = t->file ? file_size(t->file) >= 0 : false;
        if (t->program) {
            char *path = find_in_path(t->program);
            found = path != NULL;
            free(path);
        }
        if (found)
            continue;
        strbuf_addf(&need, "%s%s", missing++ ? ", " : "", t->program ? t->program : t->file);
        bool listed = false; /* one package may provide several of the files */
        for (int k = 0; k < npkgs && !listed; k++)
            listed = !strcmp(listed_pkgs[k], t->package);
        if (!listed) {
            strbuf_addf(&pkgs, "%s%s", npkgs ? " " : "", t->package);
            listed_pkgs[npkgs++] = t->package;
        }
    }
    int rc = 0;
    if (missing)
        rc = error("the %s recipe%s%s needs %s (Debian package%s %s: apt-get install %s)",
                   r->name, what ? " " : "", what ? what : "", need.buf, npkgs > 1 ? "s" : "",
                   pkgs.buf, pkgs.buf);
    strbuf_release(&need);
    strbuf_release(&pkgs);
    free(listed_pkgs);
    return rc;
}

/* ---- finding recipes ---------------------------------------------------------------- */

/* The search path: $PGOLAB_RECIPES, then next to the binary. */
static void search_dirs(struct argvec *dirs)
{
    const char *env = getenv("PGOLAB_RECIPES");
    if (env && *env) {
        char *copy = xstrdup(env);
        for (char *save = NULL, *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save))
            argvec_push(dirs, d);
        free(copy);
    }
    char *exe = self_exe();
    char *slash = exe ? strrchr(exe, '/') : NULL;
    if (slash) {
        *slash = '\0';
        argvec_pushf(dirs, "%s/recipes", exe);
        argvec_pushf(dirs, "%s/../share/pgolab/recipes", exe);
    }
    free(exe);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

char *recipe_names(void)
{
    struct argvec dirs = ARGVEC_INIT, names = ARGVEC_INIT;
    search_dirs(&dirs);
    for (int i = 0; i < dirs.n; i++) {
        DIR *d = opendir(dirs.v[i]);
        struct dirent *e;
        while (d && (e = readdir(d))) {
            size_t len = strlen(e->d_name);
            if (len <= 5 || strcmp(e->d_name + len - 5, ".json") || e->d_name[0] == '.')
                continue;
            char *name = xstrndup(e->d_name, len - 5);
            bool dup = false;
            for (int j = 0; j < names.n && !dup; j++)
                dup = !strcmp(names.v[j], name);
            if (!dup)
                argvec_push(&names, name);
            free(name);
        }
        if (d)
            closedir(d);
    }
    if (names.n)
        qsort(names.v, (size_t)names.n, sizeof(*names.v), cmp_str);
    struct strbuf sb = STRBUF_INIT;
    strbuf_init(&sb, 0);
    for (int i = 0; i < names.n; i++)
        strbuf_addf(&sb, "%s%s", i ? ", " : "", names.v[i]);
    argvec_clear(&dirs);
    argvec_clear(&names);
    return strbuf_detach(&sb);
}

char *recipe_find(const char *target)
{
    size_t len = strlen(target);
    if (strchr(target, '/') || (len > 5 && !strcmp(target + len - 5, ".json"))) {
        if (!is_file(target)) {
            error("recipe %s: no such file", target);
            return NULL;
        }
        return abs_path(target);
    }
    struct argvec dirs = ARGVEC_INIT;
    char *found = NULL;
    search_dirs(&dirs);
    for (int i = 0; i < dirs.n && !found; i++) {
        char *p = xasprintf("%s/%s.json", dirs.v[i], target);
        if (is_file(p))
            found = abs_path(p);
        free(p);
    }
    argvec_clear(&dirs);
    return found;
}
