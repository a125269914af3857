/* variants: fingerprinting the builds under test (see variants.h). Owns no state. */
#include "experiment/variants.h"
#include "experiment/run.h"
#include "server/server.h"
#include "toolchain/build_info.h"
#include "util/argvec.h"
#include "util/fs.h"
#include "util/strbuf.h"
#include "util/subprocess.h"
#include "util/util.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A running server's product and version (VARIANT_EXTERNAL) from `pgolab bench CLIENT-OPTIONS
 * info --format=json` ("library"."server"); left unknown when the server cannot be reached
 * now (the first run then says why). */
static void external_info(const struct experiment_config *cfg, struct variant *v)
{
    struct strbuf out = STRBUF_INIT;
    struct argvec a;
    run_child_argv(&a, cfg, v, NULL, NULL, 1, NULL);
    argvec_push(&a, "--format=json");
    argvec_push(&a, "info");
    struct subprocess sp = {
        .argv = argvec_argv(&a), .out = &out, .quiet_stderr = 1, .timeout_s = 60 };
    if (subprocess_run(&sp) == 0) {
        json_t *root = json_loads(out.buf, 0, NULL);
        const char *s = json_string_value(json_object_get(json_object_get(root, "library"),
                                                          "server"));
        if (s && !v->version)
            v->version = xstrdup(s);
        json_decref(root);
    }
    argvec_clear(&a);
    strbuf_release(&out);
}

static int library_info(const struct experiment_config *cfg, struct variant *v)
{
    struct strbuf out = STRBUF_INIT;
    struct argvec a = ARGVEC_INIT;
    json_error_t je;
    int rc = -1;

    memset(&a, 0, sizeof(a));
    argvec_push(&a, cfg->pgolab);
    argvec_push(&a, "bench");
    argvec_pushf(&a, "--sqlite-library=%s", v->library);
    argvec_push(&a, "--format=json");
    argvec_push(&a, "info");
    /* the child's own message ("cannot load it as a shared library: ...") goes into ours:
     * bad input is one line */
    char *errpath = NULL;
    int efd = private_tmpfile("pgolab-info", &errpath);
    if (efd >= 0)
        close(efd);
    struct subprocess sp = { .argv = argvec_argv(&a), .out = &out, .log_path = errpath };
    int st = subprocess_run(&sp);
    argvec_clear(&a);
    if (st != 0) {
        struct strbuf err = STRBUF_INIT;
        strbuf_init(&err, 0);
        if (errpath)
            strbuf_read_file(&err, errpath);
        strbuf_rtrim(&err);
        const char *why = strrchr(err.buf, '\n') ? strrchr(err.buf, '\n') + 1 : err.buf;
        if (!strncmp(why, "FATAL: ", 7))
            why += 7;
        if (*why)
            error("variant %s: %s", v->name, why);
        else
            error("variant %s: `pgolab bench --sqlite-library=%s info` failed (exit %d)",
                  v->name, v->library, st);
        strbuf_release(&err);
    }
    if (errpath) {
        unlink(errpath);
        free(errpath);
    }
    if (st != 0)
        goto out;
    json_t *root = json_loads(out.buf, 0, &je);
    json_t *lib = json_object_get(root, "library");
    if (!json_is_object(lib)) {
        error("variant %s: the library info is not the expected JSON (%s)", v->name,
              root ? "no \"library\" object" : je.text);
        json_decref(root);
        goto out;
    }
    const char *s;
    if (!v->version && (s = json_string_value(json_object_get(lib, "version"))))
        v->version = xstrdup(s);
    if (!v->source_id && (s = json_string_value(json_object_get(lib, "source_id"))))
        v->source_id = xstrdup(s);
    if (!v->loaded_from && (s = json_string_value(json_object_get(lib, "loaded_from"))))
        v->loaded_from = xstrdup(s);
    json_decref(root);
    rc = 0;
out:
    strbuf_release(&out);
    return rc;
}

static int library_sha256(struct variant *v)
{
    struct strbuf out = STRBUF_INIT;
    const char *argv[] = { "sha256sum", "--", v->library, NULL };
    struct subprocess sp = { .argv = argv, .out = &out };
    int st = subprocess_run(&sp);
    size_t hex = strspn(out.buf, "0123456789abcdef");
    int rc = 0;
    if (st != 0 || hex != 64)
        rc = error("variant %s: sha256sum %s failed (exit %d)", v->name, v->library, st);
    else
        v->sha256 = xstrndup(out.buf, 64);
    strbuf_release(&out);
    return rc;
}

/* A managed server variant: the binary (given, or found in the prefix) and the flavor and
 * version its --version prints, as "MariaDB 10.11.19". -1 with a message. */
static int server_info(struct variant *v)
{
    static const char *const mysql_bins[] = { "sbin/mariadbd", "bin/mariadbd", "sbin/mysqld",
                                              "bin/mysqld", "libexec/mysqld", NULL };
    static const char *const pgsql_bins[] = { "bin/postgres", "sbin/postgres", NULL };
    char *bin = NULL;
    if (is_dir(v->library)) {
        for (const char *const *b = v->server_kind == SERVER_MYSQL ? mysql_bins : pgsql_bins;
             *b && !bin; b++) {
            char *p = xasprintf("%s/%s", v->library, *b);
            if (access(p, X_OK) == 0)
                bin = p;
            else
                free(p);
        }
        if (!bin)
            return error("variant %s: no %s server binary under %s", v->name,
                         server_kind_name(v->server_kind), v->library);
    } else {
        bin = xstrdup(v->library);
    }
    struct strbuf out = STRBUF_INIT;
    const char *argv[] = { bin, "--version", NULL };
    struct subprocess sp = { .argv = argv, .out = &out, .timeout_s = 30 };
    int st = subprocess_run(&sp), rc = 0;
    char *version = NULL, *flavor = NULL;
    if (st != 0 || server_parse_version(v->server_kind, out.buf, &version, &flavor) < 0) {
        size_t first = strcspn(out.buf, "\n");
        rc = error("variant %s: %s is not a %s server (its --version says '%.*s')", v->name, bin,
                   v->server_kind == SERVER_MYSQL ? "MariaDB/MySQL" : "PostgreSQL",
                   (int)(first > 80 ? 80 : first), first ? out.buf : "nothing");
    } else {
        if (!v->version)
            v->version = xasprintf("%s %s", flavor, version);
        if (!v->loaded_from)
            v->loaded_from = xstrdup(bin);
        if (!v->sha256) {
            const char *lib = v->library;
            v->library = bin; /* sha256 of the binary itself */
            rc = library_sha256(v);
            v->library = lib;
        }
    }
    free(version);
    free(flavor);
    free(bin);
    strbuf_release(&out);
    return rc;
}

/* What differs between the builds of base and v (described in bb and bv): a release series
 * of its own first, then another version of the same series, then compiler, flags and
 * configure features; NULL when it is the same file, or when nothing differs that the
 * sources tell and both are described alike. Caller frees. */
static char *build_differences(const struct variant *base, const struct build_info *bb,
                               const struct variant *v, const struct build_info *bv)
{
    if (base->sha256 && v->sha256 && !strcmp(base->sha256, v->sha256))
        return NULL; /* the header says "same file" */
    struct strbuf sb = STRBUF_INIT;
    strbuf_init(&sb, 0);
    char *sa = server_version_series(base->version), *sv = server_version_series(v->version);
    if (sa && sv && strcmp(sa, sv))
        strbuf_addf(&sb, "%s against %s: the change includes %s's own changes, not only the "
                         "build", sv, sa, sv);
    else if (base->version && v->version && strcmp(base->version, v->version))
        strbuf_addf(&sb, "%s against %s: another release of the same series", v->version,
                    base->version);
    char *tools = build_info_differences(bb, base->name, bv, v->name);
    bool alike = base->build && v->build && !strcmp(base->build, v->build);
    if (tools && !(alike && !sb.len)) /* alike: only what neither side knows */
        strbuf_addf(&sb, "%s%s", sb.len ? "; " : "", tools);
    else if (!tools && !sb.len && !alike)
        strbuf_addstr(&sb, "none that the sources tell");
    free(tools);
    free(sa);
    free(sv);
    if (!sb.len) {
        strbuf_release(&sb);
        return NULL;
    }
    return strbuf_detach(&sb);
}

/* How each managed server variant that nobody described (no provenance: compare's) was
 * built, and what differs from the baseline's, when the baseline is one too. */
static void server_builds(const struct experiment_config *cfg)
{
    int n = cfg->nvariants;
    struct build_info *bi = xcalloc((size_t)n, sizeof(*bi));
    bool *read = xcalloc((size_t)n, sizeof(*read));
    for (int i = 0; i < n; i++) {
        struct variant *v = &cfg->variants[i];
        if (v->kind != VARIANT_SERVER || v->provenance || !v->loaded_from)
            continue;
        build_info_read(v->loaded_from, &bi[i]);
        read[i] = true;
        if (!v->build)
            v->build = build_info_describe(&bi[i]);
    }
    for (int i = 1; i < n; i++)
        if (read[0] && read[i] && !cfg->variants[i].build_differences)
            cfg->variants[i].build_differences =
                build_differences(&cfg->variants[0], &bi[0], &cfg->variants[i], &bi[i]);
    for (int i = 0; i < n; i++)
        build_info_release(&bi[i]);
    free(bi);
    free(read);
}

int experiment_fingerprint(const struct experiment_config *cfg)
{
    for (int i = 0; i < cfg->nvariants; i++) {
        struct variant *v = &cfg->variants[i];
        if (v->kind == VARIANT_EXTERNAL) {
            external_info(cfg, v); /* no file of ours to hash: the server's own word only */
            continue;
        }
        if (v->kind == VARIANT_SERVER) {
            if (server_info(v) < 0)
                return -1;
            continue;
        }
        if (!v->sha256 && library_sha256(v) < 0)
            return -1;
        if ((!v->version || !v->source_id || !v->loaded_from) && library_info(cfg, v) < 0)
            return -1;
    }
    server_builds(cfg);
    return 0;
}
