/* provenance: where each variant of a server target comes from, in words a user can check —
 * for the self-built variants the source package and exact Debian version (the tree's own
 * debian/changelog, source.h), the suite it was fetched from, the upstream version and the
 * recipe's configure options (their compiler and flags are the variant's own fields); for
 * `official` its Debian package and version (dpkg, official.c), how it was configured
 * (PostgreSQL: pg_config --configure and --cflags beside the binary; MariaDB's binary says
 * nothing of its cmake options: "not known") and the feature options (--with-X, --without-X,
 * --enable-X, --disable-X) that differ from the self-built variants (pg_config, the option
 * words and their features are toolchain/build_info.h's, which compare's variants use too).
 * The pipeline prints it in the summary; the measurement gives it to each variant (struct
 * variant's provenance: the report header, --output JSON, HTML, the results database). For
 * the distro variant (distro.h) it says whose build it copies and that it is not the
 * distribution's binary, with the options and flags it took and what it dropped. This file
 * owns p->prov. */
#include "pgo/source.h"
#include "pgo/stages.h"
#include "toolchain/build_info.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The recipe's configure options: the "configure" step's arguments that start with '-' and
 * name no path of this machine ({prefix}, {cflags}: no '{'). */
static void recipe_configure(const struct recipe *r, struct argvec *out)
{
    for (int i = 0; i < r->nsteps; i++) {
        if (strcmp(r->steps[i].name, "configure"))
            continue;
        for (char **a = r->steps[i].argv + 1; a && *a; a++)
            if ((*a)[0] == '-' && !strchr(*a, '{'))
                argvec_push(out, *a);
        return;
    }
}

/* "X: OPTION built, OPTION official" for each feature that built and official set otherwise
 * (toolchain/build_info.h: "default" where a side does not name it) into out. */
static void official_differs(const struct argvec *built, const struct argvec *official,
                             struct argvec *out)
{
    struct argvec names = ARGVEC_INIT;
    build_features_differ(built, official, &names);
    for (int i = 0; i < names.n; i++) {
        const char *a = build_feature_setting(built, names.v[i]);
        const char *b = build_feature_setting(official, names.v[i]);
        argvec_pushf(out, "%s: %s built, %s official", names.v[i], a ? a : "default",
                     b ? b : "default");
    }
    argvec_clear(&names);
}

/* The distro variant's: "built like Debian's PKG VERSION (options from debian/rules, flags
 * from dpkg-buildflags); not the distribution's binary; configure ...; CFLAGS ...; dropped
 * ...". Caller frees. */
static char *distro_words(const struct pgo_pipeline *p, const char *pkg)
{
    const struct pgo_distro *d = &p->distro;
    struct strbuf sb = STRBUF_INIT;
    strbuf_init(&sb, 0);
    strbuf_addf(&sb, "built like Debian's %s %s (options from debian/rules, flags from "
                "dpkg-buildflags); not the distribution's binary",
                pkg ? pkg : p->recipe.debian_package ? p->recipe.debian_package : "package",
                p->source_version ? p->source_version : "(no version in debian/changelog)");
    char *opts = argvec_join(&d->options);
    strbuf_addf(&sb, "; compiler %s; configure %s", p->cc.version, opts);
    free(opts);
    for (int i = 0; i < d->env.n; i++)
        strbuf_addf(&sb, "; %s", d->env.v[i]);
    if (d->maint_options)
        strbuf_addf(&sb, "; DEB_BUILD_MAINT_OPTIONS=%s", d->maint_options);
    for (int i = 0; i < d->dropped.n; i++)
        strbuf_addf(&sb, "%s%s", i ? ", " : "; dropped ", d->dropped.v[i]);
    return strbuf_detach(&sb);
}

void pgo_provenance_make(struct pgo_pipeline *p)
{
    struct pgo_provenance *pv = &p->prov;
    assert(p->source != NULL);
    char *pkg = pgo_source_debian_package(p->source);
    char *suite = pgo_source_debian_suite(p->source);
    const char *version = p->source_version;
    struct argvec conf = ARGVEC_INIT;
    recipe_configure(&p->recipe, &conf);
    char *opts = argvec_join(&conf);
    struct strbuf sb = STRBUF_INIT;
    strbuf_init(&sb, 0);
    if (version) {
        /* upstream: without the epoch and the Debian revision */
        const char *colon = strchr(version, ':');
        const char *up = colon ? colon + 1 : version;
        const char *dash = strrchr(up, '-');
        const char *name = pkg                      ? pkg
                           : p->recipe.debian_package ? p->recipe.debian_package
                                                      : "source";
        strbuf_addf(&sb, "%s %s%s%s, upstream %.*s", name,
                    version, suite ? " from Debian " : "", suite ? suite : "",
                    (int)(dash ? (size_t)(dash - up) : strlen(up)), up);
    } else {
        char *up = pgo_source_upstream_version(&p->recipe, p->source);
        if (up)
            strbuf_addf(&sb, "%s %s (by its %s), ", p->recipe.title ? p->recipe.title
                                                                     : p->recipe.name,
                        up, p->recipe.version_file);
        strbuf_addf(&sb, "a tree of no Debian version (%s)", p->source);
        free(up);
    }
    if (conf.n)
        strbuf_addf(&sb, "; configure %s", opts);
    free(pv->built);
    pv->built = strbuf_detach(&sb);
    free(pv->distro);
    pv->distro = p->distro.via ? distro_words(p, pkg) : NULL;
    free(pv->configure);
    pv->configure = opts;
    if (p->official_bin) {
        struct argvec off = ARGVEC_INIT, diff = ARGVEC_INIT;
        char *configured = p->recipe.server_kind == SERVER_PGSQL
                               ? build_pg_config(p->official_bin, "--configure") : NULL;
        free(pv->official_cflags);
        pv->official_cflags = p->recipe.server_kind == SERVER_PGSQL
                                  ? build_pg_config(p->official_bin, "--cflags") : NULL;
        strbuf_init(&sb, 0);
        if (p->official_debversion)
            strbuf_addf(&sb, "Debian package %s %s (dpkg)", p->official_package,
                        p->official_debversion);
        else
            strbuf_addf(&sb, "%s, installed by no Debian package", p->official_bin);
        if (configured) {
            build_words_split(configured, &off);
            char *joined = argvec_join(&off);
            strbuf_addf(&sb, "; configure %s", joined);
            free(joined);
            official_differs(&conf, &off, &diff);
            argvec_clear(&pv->differs);
            for (int i = 0; i < diff.n; i++)
                argvec_push(&pv->differs, diff.v[i]);
            argvec_clear(&pv->distro_differs);
            pv->distro_compared = p->distro.via != NULL;
            if (p->distro.via)
                official_differs(&p->distro.options, &off, &pv->distro_differs);
            if (diff.n) {
                strbuf_addstr(&sb, "; differs from the built variants in: ");
                for (int i = 0; i < diff.n; i++)
                    strbuf_addf(&sb, "%s%s", i ? "; " : "", diff.v[i]);
            }
        } else {
            strbuf_addstr(&sb, "; its configure options are not known (its binary does not "
                               "say them)");
        }
        free(pv->official);
        pv->official = strbuf_detach(&sb);
        free(configured);
        argvec_clear(&off);
        argvec_clear(&diff);
    }
    argvec_clear(&conf);
    free(pkg);
    free(suite);
}

void pgo_provenance_print(const struct pgo_pipeline *p)
{
    const struct pgo_provenance *pv = &p->prov;
    if (pv->built)
        printf("  %-13s %s\n", "built from", pv->built);
    if (pv->official)
        printf("  %-13s %s\n", "official", pv->official);
    for (int i = 0; i < pv->differs.n; i++)
        printf("  %-13s %s\n", i ? "" : "differs", pv->differs.v[i]);
    if (pv->distro_compared)
        printf("  %-13s %s\n", "distro", pv->distro_differs.n
                   ? "its options differ from official's in these (built: distro's):"
                   : "its feature options are official's (none differs)");
    for (int i = 0; i < pv->distro_differs.n; i++)
        printf("  %-13s %s\n", "", pv->distro_differs.v[i]);
}

void pgo_provenance_release(struct pgo_provenance *pv)
{
    free(pv->built);
    free(pv->official);
    free(pv->distro);
    free(pv->configure);
    free(pv->official_cflags);
    argvec_clear(&pv->differs);
    argvec_clear(&pv->distro_differs);
    memset(pv, 0, sizeof(*pv));
}
