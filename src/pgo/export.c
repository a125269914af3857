/* export: a measured build as a Debian package (see export.h). The steps: the experiment
 * (pick_experiment), the variant and its gains (pick_variant: model/precision's change over the
 * baseline and official with the seed the verdict uses, so the numbers are the report's), the
 * build (check_build: still there, the binary's sha256 the measured one; check_profile: the
 * trainer's recorded profile health), the package (stage: the files under a private directory,
 * dpkg-shlibdeps for Depends, dpkg-deb --build). */
#include "pgo/export.h"
#include "experiment/record.h"
#include "model/precision.h"
#include "pgo/recipe.h"
#include "pgo/search_rank.h"
#include "report/common.h"
#include "store/store.h"
#include "toolchain/toolchain.h"
#include "util/argvec.h"
#include "util/fs.h"
#include "util/strbuf.h"
#include "util/subprocess.h"
#include "util/util.h"

#include <ftw.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define OPT_PREFIX "/opt/pgolab"

/* ---- the experiment */

struct pick {
    const char *target;
    int64_t want;               /* --experiment, or 0 */
    int64_t found_kind_id;      /* want's row: found */
    char *want_kind;            /* its kind */
    int64_t confirm, plain;     /* the newest complete confirmation, complete pgo by time */
    struct strbuf ids;          /* the pgo experiments (of target): "3, 5" */
};

static const char *target_of(json_t *settings)
{
    return json_string_value(json_object_get(json_object_get(settings, "pgo"), "target"));
}

static int pick_cb(const struct store_experiment *e, void *ctx)
{
    struct pick *k = ctx;
    json_t *s = json_loads(e->settings_json, 0, NULL);
    const char *t = target_of(s);
    if (e->id == k->want) {
        k->found_kind_id = e->id;
        k->want_kind = xstrdup(e->kind);
    }
    if (!strcmp(e->kind, "pgo") && (!k->target || (t && !strcmp(t, k->target)))) {
        strbuf_addf(&k->ids, "%s%lld", k->ids.len ? ", " : "", (long long)e->id);
        const char *search =
            json_string_value(json_object_get(json_object_get(s, "pgo"), "search"));
        const char *measure = json_string_value(json_object_get(s, "measure"));
        bool by_time = !measure || !strcmp(measure, "time");
        if (!strcmp(e->status, "complete") && by_time) {
            if (search && !strcmp(search, "confirm"))
                k->confirm = e->id;
            else if (!search)
                k->plain = e->id;
        }
    }
    json_decref(s);
    return 0;
}

/* The experiment to export from into *id. 0 or -1 (one line). */
static int pick_experiment(struct store *s, const struct pgo_export_request *rq, int64_t *id)
{
    struct pick k = { rq->target, rq->experiment_id, 0, NULL, 0, 0, STRBUF_INIT };
    strbuf_init(&k.ids, 0);
    int rc = store_experiments_list(s, pick_cb, &k);
    const char *of = rq->target ? " of target " : "";
    const char *tg = rq->target ? rq->target : "";
    if (rc < 0) {
        /* the store said why */
    } else if (rq->experiment_id && !k.found_kind_id) {
        rc = error("--experiment=%lld: no such experiment in %s (pgo experiments%s%s: %s)",
                   (long long)rq->experiment_id, rq->results, of, tg,
                   k.ids.len ? k.ids.buf : "none");
    } else if (rq->experiment_id && strcmp(k.want_kind, "pgo")) {
        rc = error("--experiment=%lld: a %s experiment; export takes the builds of a pgo "
                   "experiment (pgo experiments%s%s in %s: %s)", (long long)rq->experiment_id,
                   k.want_kind, of, tg, rq->results, k.ids.len ? k.ids.buf : "none");
    } else if (rq->experiment_id) {
        *id = rq->experiment_id;
    } else if (k.confirm || k.plain) {
        *id = k.confirm ? k.confirm : k.plain;
    } else {
        rc = error("%s has no complete pgo experiment by time%s%s to export from (pgo "
                   "experiments: %s); run `pgolab pgo TARGET --search` first, or name one with "
                   "--experiment=ID", rq->results, of, tg, k.ids.len ? k.ids.buf : "none");
    }
    free(k.want_kind);
    strbuf_release(&k.ids);
    return rc;
}

/* ---- the variant and its gains */

struct gain {
    double pct, lo, hi;
    bool stats, significant;
};

/* The tps change of variant v over base, every cell pooled, with the verdict's seed. */
static void gain_of(const struct experiment_loaded *l, int base, int v, struct gain *g)
{
    const struct experiment_config *cfg = &l->cfg;
    int nc = cfg->nworkloads * cfg->nthreads;
    int *ws = xcalloc((size_t)nc + 1, sizeof(int)), *ts = xcalloc((size_t)nc + 1, sizeof(int));
    for (int w = 0, k = 0; w < cfg->nworkloads; w++)
        for (int t = 0; t < cfg->nthreads; t++, k++) {
            ws[k] = w;
            ts[k] = cfg->threads[t];
        }
    struct experiment_change ch;
    uint64_t seed = report_all_cells_seed(cfg, v, METRIC_TPS) + (uint64_t)base;
    g->pct = g->lo = g->hi = NAN;
    g->stats = g->significant = false;
    if (base != v && experiment_change_cfg_over(cfg, &l->res, METRIC_TPS, base, v, ws, ts, nc,
                                                seed, &ch) == 0 && ch.ncells) {
        g->pct = experiment_change_pct(&ch, &g->lo, &g->hi);
        g->stats = ch.stats;
        g->significant = ch.significant;
    }
    free(ws);
    free(ts);
}

static json_t *gain_json(const struct gain *g)
{
    if (isnan(g->pct))
        return json_null();
    return json_pack("{s:f,s:o,s:b}", "pct", g->pct, "ci95_pct",
                     g->stats ? json_pack("[f,f]", g->lo, g->hi) : json_null(),
                     "significant", g->significant);
}

static void gain_text(struct strbuf *sb, const struct gain *g)
{
    if (isnan(g->pct))
        strbuf_addstr(sb, "- (no data)");
    else if (!g->stats)
        strbuf_addf(sb, "%+.1f%% (no CI: too few rounds)", g->pct);
    else
        strbuf_addf(sb, "%+.1f%% (95%% CI %+.1f%% .. %+.1f%%%s)", g->pct, g->lo, g->hi,
                    g->significant ? "" : ", not significant");
}

static bool is_official(const struct store_variant *v)
{
    return !strcmp(v->name, "official");
}

/* The variant to export into *idx (rq->variant, or the winner), its gains over the baseline
 * and over official (official's index in *off, -1 without). 0 or -1 (one line). */
static int pick_variant(const struct pgo_export_request *rq, const struct experiment_loaded *l,
                        int *idx, struct gain *vs_base, struct gain *vs_off, int *off)
{
    const struct store_experiment *e = &l->exp;
    struct strbuf names = STRBUF_INIT;
    strbuf_init(&names, 0);
    *off = -1;
    for (int i = 0; i < e->nvariants; i++) {
        strbuf_addf(&names, "%s%s", i ? ", " : "", e->variants[i].name);
        if (is_official(&e->variants[i]))
            *off = i;
    }
    int rc = 0, n = e->nvariants;
    *idx = -1;
    if (rq->variant) {
        for (int i = 0; i < n; i++)
            if (!strcmp(e->variants[i].name, rq->variant))
                *idx = i;
        if (*idx < 0)
            rc = error("--variant=%s: experiment %lld has no such variant (its variants: %s)",
                       rq->variant, (long long)e->id, names.buf);
        else if (*idx == *off)
            rc = error("--variant=official: the distribution's own binary, not a build of "
                       "pgolab's; export one of %s", names.buf);
    } else {
        double *pct = xcalloc((size_t)n, sizeof(double));
        bool *sig = xcalloc((size_t)n, sizeof(bool));
        struct strbuf all = STRBUF_INIT;
        strbuf_init(&all, 0);
        for (int i = 0; i < n; i++) {
            struct gain g;
            gain_of(l, 0, i, &g);
            bool cand = i > 0 && i != *off;
            pct[i] = cand ? g.pct : NAN;
            sig[i] = cand && g.significant;
            if (cand) {
                strbuf_addf(&all, "%s%s ", all.len ? "; " : "", e->variants[i].name);
                gain_text(&all, &g);
            }
        }
        *idx = search_winner(pct, sig, n);
        if (*idx < 0)
            rc = error("experiment %lld: no variant is significantly faster than baseline by "
                       "tps (%s); name the one to export with --variant=NAME", (long long)e->id,
                       all.len ? all.buf : "no candidates");
        free(pct);
        free(sig);
        strbuf_release(&all);
    }
    if (rc == 0) {
        gain_of(l, 0, *idx, vs_base);
        gain_of(l, *off >= 0 ? *off : *idx, *idx, vs_off);
    }
    strbuf_release(&names);
    return rc;
}

/* ---- the build */

/* Variant v's measured binary (the fingerprint's loaded_from, else its library), or NULL. */
static char *measured_binary(const struct store_variant *v)
{
    json_t *fp = v->fingerprint_json ? json_loads(v->fingerprint_json, 0, NULL) : NULL;
    const char *from = json_string_value(json_object_get(fp, "loaded_from"));
    char *bin = from ? xstrdup(from) : v->library ? xstrdup(v->library) : NULL;
    json_decref(fp);
    return bin;
}

/* The build is still the one measured: its prefix (a server) or library is there and the
 * binary's sha256 is the recorded one. 0 or -1 (one line). */
static int check_build(const struct store_experiment *e, const struct store_variant *v,
                       const char *bin, bool library)
{
    const char *what = library ? "library" : "install prefix";
    if (!v->library || !(library ? is_file(v->library) : is_dir(v->library)))
        return error("variant %s of experiment %lld was never built here or its build is gone: "
                     "no %s %s (a removed or other work directory); run the pgolab pgo command "
                     "that measured it again, then export", v->name, (long long)e->id, what,
                     v->library ? v->library : "recorded");
    if (!bin || !is_file(bin))
        return error("variant %s of experiment %lld: its binary %s is gone from %s", v->name,
                     (long long)e->id, bin ? bin : "(not recorded)", v->library);
    char *sha = sha256_file(bin);
    int rc = 0;
    if (!sha)
        rc = -1;
    else if (v->sha256 && strcmp(sha, v->sha256))
        rc = error("variant %s: %s changed since experiment %lld measured it (sha256 %.12s, "
                   "measured %.12s): a later build replaced it; export from the experiment "
                   "that measured this build", v->name, bin, (long long)e->id, sha, v->sha256);
    free(sha);
    return rc;
}

/* The trainer of variant name in settings' pgo object ("pgo-TRAINER" with several, the one
 * --train named with one), or NULL for a build without a profile. */
static const char *trainer_of(json_t *pgo, const char *name)
{
    const char *kind = strrchr(name, ':') ? strrchr(name, ':') + 1 : name;
    if (strncmp(kind, "pgo", 3))
        return NULL;
    json_t *train = json_object_get(pgo, "train");
    if (json_array_size(train) == 1)
        return json_string_value(json_array_get(train, 0));
    size_t i;
    json_t *t;
    json_array_foreach(train, i, t) {
        const char *tn = json_string_value(t);
        size_t kl = strlen(kind), tl = tn ? strlen(tn) : 0;
        if (tn && kl > tl && kind[kl - tl - 1] == '-' && !strcmp(kind + kl - tl, tn))
            return tn;
    }
    return NULL;
}

/* The trainer's recorded profile health (the profile check of the pipeline that built it):
 * counts, functions and every hot function counted. 0 or -1 (one line). */
static int check_profile(const struct store_variant *v, json_t *pgo, const char *trainer,
                         json_t **health)
{
    *health = NULL;
    if (!trainer)
        return 0;
    json_t *profiles = json_object_get(pgo, "profiles");
    const char *colon = strrchr(v->name, ':');
    char *key = colon ? xasprintf("%.*s:%s", (int)(colon - v->name), v->name, trainer)
                      : xstrdup(trainer);
    json_t *h = json_object_get(profiles, key);
    int rc = 0;
    if (!h) {
        rc = error("variant %s: the experiment recorded no profile health for its trainer %s; "
                   "export takes a pgo build whose profile check passed", v->name, key);
    } else if (json_integer_value(json_object_get(h, "counts")) <= 0 ||
               json_integer_value(json_object_get(h, "functions_counted")) <= 0) {
        rc = error("variant %s: its profile (trainer %s) failed the health check: %lld counts "
                   "in %lld functions", v->name, key,
                   (long long)json_integer_value(json_object_get(h, "counts")),
                   (long long)json_integer_value(json_object_get(h, "functions_counted")));
    } else {
        const char *f;
        json_t *c;
        json_object_foreach(json_object_get(h, "hot"), f, c)
            if (rc == 0 && json_integer_value(c) <= 0)
                rc = error("variant %s: its profile (trainer %s) failed the health check: the "
                           "hot function %s has no counts", v->name, key, f);
    }
    if (rc == 0)
        *health = json_incref(h);
    free(key);
    return rc;
}

/* The "KEY: value" line of the build's stamp (the build directory above the prefix or the
 * library), or NULL. */
static char *stamp_value(const char *dir, const char *key)
{
    char *path = path_join(dir, "stamp");
    struct strbuf sb = STRBUF_INIT;
    strbuf_init(&sb, 0);
    char *out = NULL;
    if (strbuf_read_file(&sb, path) == 0) {
        size_t kl = strlen(key);
        for (char *line = sb.buf; line && *line && !out;
             line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
            if (!strncmp(line, key, kl) && line[kl] == ':' && line[kl + 1] == ' ')
                out = xstrndup(line + kl + 2, strcspn(line + kl + 2, "\n"));
    }
    strbuf_release(&sb);
    free(path);
    return out;
}

/* ---- names */

/* A Debian package name part: lower-case letters, digits, '+', '.', '-' ("clang:-O3:pgo+lto" ->
 * "clang-o3-pgo+lto"). */
static char *deb_part(const char *s)
{
    char *out = xcalloc(strlen(s) + 1, 1), *o = out;
    for (; *s; s++) {
        char c = *s >= 'A' && *s <= 'Z' ? (char)(*s - 'A' + 'a') : *s;
        bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '.';
        if (ok)
            *o++ = c;
        else if (o > out && o[-1] != '-')
            *o++ = '-';
    }
    while (o > out && o[-1] == '-')
        o--;
    *o = '\0';
    return out;
}

/* A version from the source's Debian version (digits first; "?" -> 0) and the experiment. */
static char *deb_version(const char *source_version, int64_t id)
{
    struct strbuf sb = STRBUF_INIT;
    strbuf_init(&sb, 0);
    const char *s = source_version && *source_version >= '0' && *source_version <= '9'
                        ? source_version : "0";
    for (; *s; s++)
        if ((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
            strchr(".+~-:", *s))
            strbuf_addch(&sb, *s);
    strbuf_addf(&sb, "+pgolab%lld", (long long)id);
    return strbuf_detach(&sb);
}

/* A package named name installed (dpkg-query): its version into *version. */
static bool installed(const char *name, char **version)
{
    struct strbuf out = STRBUF_INIT;
    strbuf_init(&out, 0);
    const char *argv[] = { "dpkg-query", "-W", "-f=${Status}|${Version}", name, NULL };
    struct subprocess sp = { .argv = argv, .out = &out, .quiet_stderr = 1 };
    bool yes = subprocess_run(&sp) == 0 && strstr(out.buf, "install ok installed|");
    if (yes)
        *version = xstrdup(strchr(out.buf, '|') + 1);
    strbuf_release(&out);
    return yes;
}

/* ---- the package */

static struct argvec *elf_list; /* nftw has no context pointer */

static int add_elf(const char *path, const struct stat *st, int type, struct FTW *f)
{
    (void)f;
    if (type != FTW_F || !S_ISREG(st->st_mode))
        return 0;
    FILE *fp = fopen(path, "rb");
    char magic[4] = { 0 };
    if (fp && fread(magic, 1, 4, fp) == 4 && !memcmp(magic, "\177ELF", 4))
        argvec_pushf(elf_list, "-e%s", path);
    if (fp)
        fclose(fp);
    return 0;
}

/* Depends of the staged files by dpkg-shlibdeps (in dir, which gets a debian/control), the
 * staged lib/ as a private library directory. NULL after a message. */
static char *shlibdeps(const char *dir, const char *stage, const char *libdir)
{
    char *debian = path_join(dir, "debian");
    char *control = path_join(debian, "control");
    struct strbuf out = STRBUF_INIT;
    strbuf_init(&out, 0);
    char *deps = NULL;
    FILE *f = mkdir_p(debian) == 0 ? fopen(control, "w") : NULL;
    if (!f) {
        error("export: cannot write %s", control);
        goto out;
    }
    fprintf(f, "Source: pgolab-export\n\nPackage: pgolab-export\nArchitecture: any\n");
    fclose(f);
    struct argvec argv = ARGVEC_INIT;
    argvec_push(&argv, "dpkg-shlibdeps");
    argvec_push(&argv, "-O");
    argvec_push(&argv, "--ignore-missing-info");
    argvec_pushf(&argv, "-l%s", libdir);
    struct argvec elves = ARGVEC_INIT;
    elf_list = &elves;
    nftw(stage, add_elf, 16, FTW_PHYS);
    for (int i = 0; i < elves.n; i++)
        argvec_push(&argv, elves.v[i]);
    argvec_argv(&argv);
    struct subprocess sp = { .argv = (const char *const *)argv.v, .cwd = dir, .out = &out };
    int st = elves.n ? subprocess_run(&sp) : 0;
    if (st != 0) {
        error("export: dpkg-shlibdeps failed (exit %d) on the build's binaries", st);
    } else {
        char *p = strstr(out.buf, "shlibs:Depends=");
        deps = p ? xstrndup(p + 15, strcspn(p + 15, "\n")) : xstrdup("");
    }
    argvec_clear(&argv);
    argvec_clear(&elves);
out:
    strbuf_release(&out);
    free(control);
    free(debian);
    return deps;
}

static int write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0)
        return error("export: cannot write %s", path);
    return 0;
}

static int run(const char *const *argv, const char *what)
{
    struct strbuf out = STRBUF_INIT;
    strbuf_init(&out, 0);
    struct subprocess sp = { .argv = argv, .out = &out };
    int st = subprocess_run(&sp);
    strbuf_release(&out);
    return st == 0 ? 0 : error("export: %s failed (exit %d)", what, st);
}

/* What a build is, for the manifest and the README. */
struct build_info {
    const char *target, *source_package, *source_version, *pkg, *version, *opt;
    const struct store_variant *v;
    const char *bin, *trainer, *profile, *server;  /* server: mysql | pgsql | NULL (library) */
    int64_t experiment;
    bool search;
};

static char *readme(const struct build_info *b, const char *gains)
{
    struct strbuf sb = STRBUF_INIT;
    strbuf_init(&sb, 0);
    strbuf_addf(&sb, "%s %s: variant %s of %s, built and measured by pgolab\n\n", b->pkg,
                b->version, b->v->name, b->target);
    strbuf_addf(&sb, "Measured in pgolab experiment %lld%s: tps %s.\nEverything about the "
                "build is in %s/pgolab-manifest.json.\n\nIt is installed under %s only: the "
                "distribution's files stay as they are, and `apt remove %s` takes it away "
                "again.\n\n", (long long)b->experiment,
                b->search ? " (a --search confirmation)" : "",
                gains, b->opt, b->opt, b->pkg);
    if (!b->server) {
        strbuf_addf(&sb, "Use it beside the system's SQLite (nothing else changes):\n"
                    "  LD_LIBRARY_PATH=%s/lib PROGRAM           "
                    "# any program linked with libsqlite3.so.0\n"
                    "  pgolab bench oltp_read_only --sqlite-library=%s/lib/libsqlite3.so run\n\n"
                    "Instead of the system's SQLite for one service: set LD_LIBRARY_PATH=%s/lib in "
                    "its environment (systemd: Environment= in a drop-in).\n", b->opt, b->opt,
                    b->opt);
        return strbuf_detach(&sb);
    }
    bool pg = !strcmp(b->server, "pgsql");
    strbuf_addf(&sb, "Beside the distribution's server (another port, its own data directory):\n"
                "  pgolab server start --db-driver=%s --prefix=%s\n"
                "  (it prints the client options for pgolab bench and sysbench; "
                "`pgolab server stop --datadir=DIR` stops it)\n\n", b->server, b->opt);
    if (pg)
        strbuf_addf(&sb, "By hand, as user postgres:\n"
                    "  %s/bin/initdb -D /var/tmp/pgdata\n"
                    "  %s/bin/pg_ctl -D /var/tmp/pgdata -o '-p 5433' -l /var/tmp/pgdata.log "
                    "start\n\n"
                    "Instead of the distribution's server (same major version only: the manifest "
                    "names the source version): stop it (systemctl stop postgresql), then start "
                    "this binary on its data directory and configuration, as user postgres:\n"
                    "  %s/bin/postgres -D /var/lib/postgresql/MAJOR/main "
                    "-c config_file=/etc/postgresql/MAJOR/main/postgresql.conf\n"
                    "or point a systemd drop-in's ExecStart at it. Going back: stop it, start the "
                    "distribution's service again; the data directory is unchanged in format.\n",
                    b->opt, b->opt, b->opt);
    else
        strbuf_addf(&sb, "By hand:\n"
                    "  %s/%s --no-defaults --basedir=%s --datadir=DIR --port=3307 "
                    "--socket=DIR/mysqld.sock\n"
                    "  (initialize DIR first with mariadb-install-db --basedir=%s, or let pgolab "
                    "server start do it)\n\n"
                    "Instead of the distribution's server (same major version only): stop it "
                    "(systemctl stop mariadb), then start this binary with the distribution's "
                    "configuration and data directory, e.g. in a systemd drop-in:\n"
                    "  ExecStart=\n  ExecStart=%s/%s --basedir=%s $MYSQLD_OPTS\n"
                    "Going back: remove the drop-in and restart the distribution's service.\n",
                    b->opt, b->bin, b->opt, b->opt, b->opt, b->bin, b->opt);
    return strbuf_detach(&sb);
}

/* Stage the files into stage/ and build outdir/PKG_VERSION_ARCH.deb. 0 or -1. */
static int build_deb(const struct build_info *b, const char *tmp, const char *deb,
                     const char *manifest, const char *readme_text, const char *description)
{
    char *stage = path_join(tmp, "root");
    char *prefix = xasprintf("%s%s", stage, b->opt);
    char *doc = xasprintf("%s/usr/share/doc/%s", stage, b->pkg);
    char *ctl = path_join(stage, "DEBIAN");
    int rc = -1;
    if (mkdir_p(prefix) < 0 || mkdir_p(doc) < 0 || mkdir_p(ctl) < 0)
        goto out;
    if (b->server) {
        char *from = xasprintf("%s/.", b->v->library);
        const char *cp[] = { "cp", "-a", "--", from, prefix, NULL };
        rc = run(cp, "copying the install prefix");
        free(from);
        /* what a deployed server does not need: the test suites, static libraries */
        const char *rm[] = { "find", prefix, "(", "-path", "*/mysql-test", "-o", "-path",
                             "*/sql-bench", "-o", "-name", "*.a", ")", "-prune", "-exec", "rm",
                             "-rf", "{}", "+", NULL };
        if (rc == 0)
            rc = run(rm, "leaving out the test suites");
    } else {
        char *lib = path_join(prefix, "lib");
        char *so = path_join(lib, "libsqlite3.so");
        const char *cp[] = { "cp", "--", b->v->library, so, NULL };
        rc = mkdir_p(lib) < 0 ? -1 : run(cp, "copying the library");
        char *link = path_join(lib, "libsqlite3.so.0");
        if (rc == 0 && symlink("libsqlite3.so", link) < 0)
            rc = error("export: cannot link %s", link);
        free(link);
        free(so);
        free(lib);
    }
    if (rc < 0)
        goto out;
    char *m1 = path_join(prefix, "pgolab-manifest.json");
    char *m2 = path_join(doc, "pgolab-manifest.json");
    char *r = path_join(doc, "README");
    rc = write_file(m1, manifest) < 0 || write_file(m2, manifest) < 0 ||
         write_file(r, readme_text) < 0 ? -1 : 0;
    free(m1);
    free(m2);
    free(r);
    char *libdir = path_join(prefix, "lib");
    char *deps = rc == 0 ? shlibdeps(tmp, stage, libdir) : NULL;
    free(libdir);
    if (!deps) {
        rc = -1;
        goto out;
    }
    struct strbuf out = STRBUF_INIT;
    strbuf_init(&out, 0);
    const char *arch_argv[] = { "dpkg", "--print-architecture", NULL };
    struct subprocess sp = { .argv = arch_argv, .out = &out };
    if (subprocess_run(&sp) != 0) {
        rc = error("export: dpkg --print-architecture failed");
        strbuf_release(&out);
        free(deps);
        goto out;
    }
    strbuf_rtrim(&out);
    const char *maint = getenv("DEBEMAIL");
    char *control = xasprintf(
        "Package: %s\nVersion: %s\nArchitecture: %s\nMaintainer: %s\nSection: database\n"
        "Priority: optional\n%s%s%sDescription: %s\n %s\n .\n See /usr/share/doc/%s/README.\n",
        b->pkg, b->version, out.buf, maint && *maint ? maint : "pgolab export <root@localhost>",
        *deps ? "Depends: " : "", deps, *deps ? "\n" : "", description,
        "A build exported by `pgolab export`, installed under its own prefix.", b->pkg);
    char *cpath = path_join(ctl, "control");
    rc = write_file(cpath, control);
    free(cpath);
    free(control);
    free(deps);
    strbuf_release(&out);
    if (rc == 0) {
        const char *deb_argv[] = { "dpkg-deb", "--root-owner-group", "--build", stage, deb, NULL };
        rc = run(deb_argv, "dpkg-deb --build");
    }
out:
    free(stage);
    free(prefix);
    free(doc);
    free(ctl);
    return rc;
}

/* pkg is a Debian package name and no package of that name is installed (*have: the
 * installed one's version, caller frees). 0 or -1 (one line). */
static int check_package_name(const char *pkg, char **have)
{
    if (strspn(pkg, "abcdefghijklmnopqrstuvwxyz0123456789+-.") != strlen(pkg) || strlen(pkg) < 2)
        return error("--name=%s: a Debian package name is lower-case letters, digits, '+', '-' "
                     "and '.'", pkg);
    if (installed(pkg, have))
        return error("package %s %s is installed: remove it first (apt remove %s) or export "
                     "under another --name; nothing was overwritten", pkg, *have, pkg);
    return 0;
}

/* The Debian source package of target's recipe, said to be another when the recipe changed
 * since the build (its sha256 differs from the one in the pgo settings), or NULL (no recipe of
 * that name, or none with a Debian package). Caller frees. */
static char *source_package(const char *target, const json_t *pgo)
{
    char *src_pkg = NULL;
    char *rpath = recipe_find(target);
    struct recipe r;
    memset(&r, 0, sizeof(r));
    if (rpath && recipe_load(rpath, &r) == 0) {
        const char *sha = json_string_value(json_object_get(pgo, "recipe_sha256"));
        if (r.debian_package)
            src_pkg = sha && !strcmp(sha, r.sha256)
                          ? xstrdup(r.debian_package)
                          : xasprintf("%s (the recipe changed since)", r.debian_package);
        recipe_release(&r);
    }
    free(rpath);
    return src_pkg;
}

/* OUTDIR/PKG_VERSION_ARCH.deb with this machine's architecture, or NULL when dpkg cannot say
 * it (the caller says so). Caller frees. */
static char *deb_path(const char *outdir, const char *pkg, const char *version)
{
    char *deb = NULL;
    struct strbuf arch = STRBUF_INIT;
    strbuf_init(&arch, 0);
    const char *arch_argv[] = { "dpkg", "--print-architecture", NULL };
    struct subprocess sp = { .argv = arch_argv, .out = &arch };
    if (subprocess_run(&sp) == 0) {
        strbuf_rtrim(&arch);
        deb = xasprintf("%s/%s_%s_%s.deb", outdir, pkg, version, arch.buf);
    }
    strbuf_release(&arch);
    return deb;
}

/* What was exported and how to use it (stdout). */
static void print_exported(const struct build_info *b, const char *deb, const char *gains)
{
    printf("export: %s\n", deb);
    printf("  variant %s of %s, experiment %lld: tps %s\n", b->v->name, b->target,
           (long long)b->experiment, gains);
    printf("  installs under %s (manifest: %s/pgolab-manifest.json)\n", b->opt, b->opt);
    printf("  install:   apt install ./%s   (remove: apt remove %s)\n",
           strrchr(deb, '/') ? strrchr(deb, '/') + 1 : deb, b->pkg);
    if (b->server)
        printf("  start:     pgolab server start --db-driver=%s --prefix=%s\n", b->server,
               b->opt);
    else
        printf("  use:       LD_LIBRARY_PATH=%s/lib PROGRAM, or pgolab bench "
               "--sqlite-library=%s/lib/libsqlite3.so\n", b->opt, b->opt);
}

int pgo_export(const struct pgo_export_request *rq)
{
    struct store *s = NULL;
    struct experiment_loaded l;
    memset(&l, 0, sizeof(l));
    int64_t id = 0;
    int rc = 1, idx = -1, off = -1;
    json_t *settings = NULL, *health = NULL, *manifest = NULL;
    char *bin = NULL, *pkg = NULL, *version = NULL, *opt = NULL, *deb = NULL, *tmp = NULL;
    char *text = NULL, *readme_text = NULL, *profile = NULL, *have = NULL, *src_pkg = NULL;
    struct gain vs_base, vs_off;
    if (access(rq->results, R_OK) != 0) {
        error("--results=%s: no such results database (export takes a build `pgolab pgo` "
              "measured and recorded there)", rq->results);
        goto out;
    }
    if (store_open_read(rq->results, &s) < 0 || pick_experiment(s, rq, &id) < 0 ||
        experiment_load(s, id, &l) < 0)
        goto out;
    if (strcmp(l.exp.status, "complete")) {
        error("experiment %lld is %s: its measurement did not finish (run the same pgolab pgo "
              "command again), so there are no gains to export with it", (long long)id,
              l.exp.status);
        goto out;
    }
    settings = json_loads(l.exp.settings_json, 0, NULL);
    json_t *pgo = json_object_get(settings, "pgo");
    const char *measure = json_string_value(json_object_get(settings, "measure"));
    if (measure && strcmp(measure, "time")) {
        error("experiment %lld measured by %s (a --search screen): export from an experiment "
              "by time, its confirmation", (long long)id, measure);
        goto out;
    }
    if (pick_variant(rq, &l, &idx, &vs_base, &vs_off, &off) < 0)
        goto out;
    const struct store_variant *v = &l.exp.variants[idx];
    const char *target = target_of(settings) ? target_of(settings) : "?";
    bin = measured_binary(v);
    /* a library variant is its .so file (measure.c), a server its install prefix */
    size_t ll = v->library ? strlen(v->library) : 0;
    bool library = ll > 3 && !strcmp(v->library + ll - 3, ".so");
    if (check_build(&l.exp, v, bin, library) < 0)
        goto out;
    const char *trainer = trainer_of(pgo, v->name);
    if (check_profile(v, pgo, trainer, &health) < 0)
        goto out;
    char *tpart = deb_part(target), *vpart = deb_part(v->name);
    pkg = rq->name ? xstrdup(rq->name) : xasprintf("pgolab-%s-%s", tpart, vpart);
    opt = xasprintf(OPT_PREFIX "/%s-%s", tpart, vpart);
    free(tpart);
    free(vpart);
    if (check_package_name(pkg, &have) < 0)
        goto out;
    const char *src_version = json_string_value(json_object_get(pgo, "source_version"));
    version = deb_version(src_version, id);
    src_pkg = source_package(target, pgo);
    char *builddir = xstrdup(v->library);
    char *slash = strrchr(builddir, '/');
    if (slash)
        *slash = '\0';
    profile = stamp_value(builddir, "profile");
    char *phase_flags = stamp_value(builddir, "phase-flags");
    free(builddir);
    const char *search = json_string_value(json_object_get(pgo, "search"));
    char *server_bin = NULL;
    const char *server = NULL;
    if (!library) {
        const char *base = strrchr(bin, '/') ? strrchr(bin, '/') + 1 : bin;
        server = !strcmp(base, "postgres") ? "pgsql" : "mysql";
        size_t pl = strlen(v->library);
        server_bin = xstrdup(!strncmp(bin, v->library, pl) && bin[pl] == '/' ? bin + pl + 1 : base);
    }
    manifest = json_pack("{s:s,s:s,s:s?,s:s?,s:s?,s:s,s:s?,s:s?,s:s?,s:s?,s:o,s:s?,s:s?,s:s}",
                         "package", pkg, "target", target, "source_package", src_pkg,
                         "source_version", src_version,
                         "source_sha256", json_string_value(json_object_get(pgo, "source_sha256")),
                         "variant", v->name, "compiler", v->compiler, "cflags", v->cflags,
                         "phase_flags", phase_flags, "trainer", trainer,
                         "profile_health", health ? json_incref(health) : json_null(),
                         "profile_digest", profile, "gate",
                         json_string_value(json_object_get(pgo, "gate")), "prefix", opt);
    free(phase_flags);
    json_object_set_new(manifest, "binary", json_pack("{s:s,s:s?,s:s?}", "file",
                        library ? "lib/libsqlite3.so" : server_bin, "sha256", v->sha256,
                        "version", v->version));
    json_object_set_new(manifest, "measured", json_pack(
        "{s:I,s:s?,s:s,s:o,s:o,s:s}", "experiment", (json_int_t)id, "search", search,
        "results", rq->results, "tps_over_baseline", gain_json(&vs_base), "tps_over_official",
        off >= 0 ? gain_json(&vs_off) : json_null(), "pgolab_report",
        "pgolab report --experiment=ID --results=FILE shows every table"));
    text = json_dumps(manifest, JSON_INDENT(2));
    struct strbuf gains = STRBUF_INIT;
    strbuf_init(&gains, 0);
    gain_text(&gains, &vs_base);
    strbuf_addstr(&gains, " over baseline");
    if (off >= 0) {
        strbuf_addstr(&gains, ", ");
        gain_text(&gains, &vs_off);
        strbuf_addstr(&gains, " over the distribution's binary");
    }
    struct build_info b = { target, src_pkg, src_version, pkg, version, opt, v, server_bin,
                            trainer, profile, server, id, search != NULL };
    readme_text = readme(&b, gains.buf);
    char *desc = xasprintf("%s %s built by pgolab (%s)", target, v->name,
                           library ? "library" : "server");
    deb = deb_path(rq->outdir, pkg, version);
    if (!deb)
        error("export: dpkg --print-architecture failed");
    else if (access(deb, F_OK) == 0)
        error("%s exists: remove it or pass another --output directory; nothing was "
              "overwritten", deb);
    else if (!(tmp = private_tmpdir(rq->outdir, ".pgolab-export")))
        ;
    else if (build_deb(&b, tmp, deb, text, readme_text, desc) == 0) {
        rc = 0;
        print_exported(&b, deb, gains.buf);
    }
    if (tmp)
        remove_tree(tmp);
    free(desc);
    free(server_bin);
    strbuf_release(&gains);
out:
    json_decref(settings);
    json_decref(health);
    json_decref(manifest);
    if (l.exp.settings_json || l.cfg.nvariants)
        experiment_loaded_release(&l);
    if (s)
        store_close(s);
    free(bin);
    free(pkg);
    free(version);
    free(opt);
    free(deb);
    free(tmp);
    free(text);
    free(readme_text);
    free(profile);
    free(have);
    free(src_pkg);
    return rc;
}
