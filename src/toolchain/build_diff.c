/* build_diff: the pure half of build_info.h — configure option words and the features they
 * set, the flags that decide the code, a compiler's short name, and the text of one build and
 * of the differences of two. Reads no file. Owns no state. */
#include "toolchain/build_info.h"
#include "util/shellwords.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <assert.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

void build_words_split(const char *text, struct argvec *out)
{
    struct shell_command *c;
    int n;
    if (shell_commands(text ? text : "", &c, &n) < 0) {
        argvec_split(out, text); /* an unterminated quote: the blanks alone decide */
        return;
    }
    for (int i = 0; i < n; i++)
        for (int k = 0; k < c[i].words.n; k++)
            argvec_push(out, c[i].words.v[k]);
    shell_commands_free(c, n);
}

char *build_feature_of(const char *opt)
{
    static const char *const prefixes[] = { "--with-", "--without-", "--enable-", "--disable-" };
    /* build-process options and labels: they change how the build runs or what the version
     * says, not the code */
    static const char *const process[] = { "option-checking", "silent-rules", "maintainer-mode",
                                           "dependency-tracking", "extra-version" };
    char *f = NULL;
    for (size_t i = 0; i < ARRAY_SIZE(prefixes) && !f; i++) {
        size_t lp = strlen(prefixes[i]);
        if (!strncmp(opt, prefixes[i], lp))
            f = xstrndup(opt + lp, strcspn(opt + lp, "="));
    }
    for (size_t k = 0; f && k < ARRAY_SIZE(process); k++)
        if (!strcmp(f, process[k])) {
            free(f);
            return NULL;
        }
    if (f)
        return f;
    /* cmake: -DNAME=VALUE or -DNAME:TYPE=VALUE; its own CMAKE_* are paths, compilers, flags */
    if (!strncmp(opt, "-D", 2) && strchr(opt, '=') && strncmp(opt + 2, "CMAKE_", 6)) {
        size_t n = strcspn(opt + 2, ":=");
        return n ? xstrndup(opt + 2, n) : NULL;
    }
    return NULL;
}

const char *build_feature_setting(const struct argvec *opts, const char *feature)
{
    const char *found = NULL;
    for (int i = 0; i < opts->n; i++) {
        char *f = build_feature_of(opts->v[i]);
        if (f && !strcmp(f, feature))
            found = opts->v[i]; /* the last one wins, as in configure */
        free(f);
    }
    return found;
}

void build_features_differ(const struct argvec *a, const struct argvec *b, struct argvec *out)
{
    const struct argvec *sides[] = { a, b };
    struct argvec seen = ARGVEC_INIT;
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < sides[s]->n; i++) {
            char *f = build_feature_of(sides[s]->v[i]);
            bool dup = false;
            for (int k = 0; f && k < seen.n; k++)
                dup = dup || !strcmp(seen.v[k], f);
            if (f && !dup) {
                argvec_push(&seen, f);
                const char *x = build_feature_setting(a, f), *y = build_feature_setting(b, f);
                if (!x || !y || strcmp(x, y))
                    argvec_push(out, f);
            }
            free(f);
        }
    argvec_clear(&seen);
}

void build_code_flags(const char *text, struct argvec *out)
{
    struct argvec words = ARGVEC_INIT;
    build_words_split(text, &words);
    for (int i = 0; i < words.n; i++) {
        const char *w = words.v[i];
        if (w[0] != '-' || !w[1] || strchr("WDUI", w[1]) || !strncmp(w, "-std=", 5))
            continue;
        bool dup = false;
        for (int k = 0; k < out->n && !dup; k++)
            dup = !strcmp(out->v[k], w);
        if (!dup)
            argvec_push(out, w);
    }
    argvec_clear(&words);
}

/* A version word: digits and dots, at least one dot ("12.2.0"; not "12.2.0-14)"). */
static bool version_word(const char *w, size_t n)
{
    return n >= 3 && isdigit((unsigned char)w[0]) && strspn(w, "0123456789.") == n &&
           memchr(w, '.', n) != NULL;
}

char *build_compiler_short(const char *text)
{
    if (!text)
        return NULL;
    size_t len = strcspn(text, ";"); /* the first of several (.comment) */
    char *first = xstrndup(text, len);
    const char *name = strstr(first, "clang") ? "clang"
                       : strstr(first, "GCC") || strstr(first, "gcc") || strstr(first, "GNU C")
                           ? "gcc" : NULL;
    char *own_name = name ? NULL : xstrndup(first, strcspn(first, " "));
    char *out = NULL;
    for (const char *at = first; *at && !out;) {
        at += strspn(at, " ");
        size_t n = strcspn(at, " ");
        if (version_word(at, n))
            out = xasprintf("%s %.*s", name ? name : own_name, (int)n, at);
        at += n;
    }
    if (!out)
        out = xstrdup(name ? name : own_name);
    free(own_name);
    free(first);
    return out;
}

/* The feature options of opts joined ("--with-tcl --without-icu"), or "" when none. */
static char *feature_options(const struct argvec *opts)
{
    struct argvec f = ARGVEC_INIT;
    for (int i = 0; i < opts->n; i++) {
        char *name = build_feature_of(opts->v[i]);
        if (name)
            argvec_push(&f, opts->v[i]);
        free(name);
    }
    char *s = argvec_join(&f);
    argvec_clear(&f);
    return s;
}

char *build_info_describe(const struct build_info *bi)
{
    struct strbuf sb = STRBUF_INIT;
    strbuf_init(&sb, 0);
    char *cc = build_compiler_short(bi->compiler);
    if (!bi->compiler)
        strbuf_addstr(&sb, "compiler not known");
    else
        strbuf_addf(&sb, "%s%s (%s)", bi->compiler, strchr(cc, ' ') ? "" : ", version not known",
                    bi->compiler_from);
    if (bi->cflags) {
        struct argvec fl = ARGVEC_INIT;
        build_code_flags(bi->cflags, &fl);
        char *j = argvec_join(&fl);
        strbuf_addf(&sb, "; flags %s (%s)", fl.n ? j : "none", bi->cflags_from);
        free(j);
        argvec_clear(&fl);
    } else {
        strbuf_addstr(&sb, "; flags not known");
    }
    if (bi->configure_from) {
        char *f = feature_options(&bi->configure);
        strbuf_addf(&sb, "; configure %s (%s)", *f ? f : "with no feature options",
                    bi->configure_from);
        free(f);
    } else {
        strbuf_addstr(&sb, "; configure options not known (the binary does not say them)");
    }
    free(cc);
    return strbuf_detach(&sb);
}

/* How a configure option sets its feature, for grouping: "--with", "--without", "--enable",
 * "--disable", "-D", or "default" for NULL. */
static const char *option_form(const char *opt)
{
    static const char *const forms[] = { "--without", "--with", "--enable", "--disable", "-D" };
    for (size_t i = 0; opt && i < ARRAY_SIZE(forms); i++)
        if (!strncmp(opt, forms[i], strlen(forms[i])))
            return forms[i];
    return "default";
}

/* The features of names not yet done[] that a and b set in the forms fx and fy (forms of
 * option_form()), marked done: "icu, uuid=e2fs" (a value is the side's that has one). */
static void group_features(struct strbuf *sb, const struct argvec *names, bool *done,
                           const struct argvec *a, const char *fx, const struct argvec *b,
                           const char *fy)
{
    int k0 = 0;
    for (int k = 0; k < names->n; k++) {
        const char *xk = build_feature_setting(a, names->v[k]);
        const char *yk = build_feature_setting(b, names->v[k]);
        if (done[k] || strcmp(option_form(xk), fx) || strcmp(option_form(yk), fy))
            continue;
        const char *vx = xk && strchr(xk, '=') ? strchr(xk, '=') : "";
        const char *vy = yk && strchr(yk, '=') ? strchr(yk, '=') : "";
        strbuf_addf(sb, "%s%s%s", k0++ ? ", " : "", names->v[k], *vx ? vx : vy);
        done[k] = true;
    }
}

/* The features of names that a and b set otherwise, grouped by how each side sets them:
 * "icu, llvm: --with in A, --without in B; readline: default in A, --without in B"; a feature
 * both sides set the same way with other values is named with both options. The features
 * both sides name come first, then those one side leaves to its default. */
static void configure_differences(struct strbuf *sb, const struct argvec *names,
                                  const struct argvec *a, const char *aname,
                                  const struct argvec *b, const char *bname)
{
    bool *done = xcalloc((size_t)names->n + 1, sizeof(*done));
    size_t start = sb->len;
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < names->n; i++) {
            const char *x = build_feature_setting(a, names->v[i]);
            const char *y = build_feature_setting(b, names->v[i]);
            if (done[i] || (pass == 0 && (!x || !y)))
                continue;
            const char *fx = option_form(x), *fy = option_form(y);
            strbuf_addstr(sb, sb->len > start ? "; " : "");
            if (!strcmp(fx, fy)) { /* the same form, other values: both options in full */
                assert(x && y);
                strbuf_addf(sb, "%s in %s, %s in %s", x, aname, y, bname);
                done[i] = true;
                continue;
            }
            group_features(sb, names, done, a, fx, b, fy);
            strbuf_addf(sb, ": %s in %s, %s in %s", fx, aname, fy, bname);
        }
    }
    free(done);
}

/* "; " before each part but the first. */
static void part(struct strbuf *sb)
{
    if (sb->len)
        strbuf_addstr(sb, "; ");
}

static void compiler_differences(struct strbuf *sb, const struct build_info *a, const char *aname,
                                 const struct build_info *b, const char *bname)
{
    char *ca = build_compiler_short(a->compiler), *cb = build_compiler_short(b->compiler);
    if (!ca || !cb) {
        if (ca || cb) {
            part(sb);
            strbuf_addf(sb, "compiler of %s not known", ca ? bname : aname);
        }
    } else if (strcmp(ca, cb)) {
        part(sb);
        bool va = strchr(ca, ' '), vb = strchr(cb, ' ');
        size_t na = strcspn(ca, " "), nb = strcspn(cb, " ");
        if ((!va || !vb) && na == nb && !strncmp(ca, cb, na)) /* "gcc" and "gcc 12.2.0" */
            strbuf_addf(sb, "compiler %.*s in both, %s's version not known", (int)na, ca,
                        va ? bname : aname);
        else
            strbuf_addf(sb, "compiler %s%s (%s) vs %s%s (%s)", ca, va ? "" : ", version not known",
                        aname, cb, vb ? "" : ", version not known", bname);
    }
    free(ca);
    free(cb);
}

static void flag_differences(struct strbuf *sb, const struct build_info *a, const char *aname,
                             const struct build_info *b, const char *bname)
{
    if (!a->cflags || !b->cflags) {
        part(sb);
        if (!a->cflags && !b->cflags)
            strbuf_addstr(sb, "flags of neither known");
        else
            strbuf_addf(sb, "flags of %s not known", a->cflags ? bname : aname);
        return;
    }
    struct argvec fa = ARGVEC_INIT, fb = ARGVEC_INIT;
    build_code_flags(a->cflags, &fa);
    build_code_flags(b->cflags, &fb);
    const struct argvec *side[2] = { &fa, &fb }, *other[2] = { &fb, &fa };
    const char *names[2] = { aname, bname };
    bool any = false;
    for (int s = 0; s < 2; s++) {
        int n = 0;
        for (int i = 0; i < side[s]->n; i++) {
            bool in = false;
            for (int k = 0; k < other[s]->n && !in; k++)
                in = !strcmp(side[s]->v[i], other[s]->v[k]);
            if (in)
                continue;
            if (!n++) {
                if (!any)
                    part(sb);
                strbuf_addf(sb, "%sflags only in %s:", any ? ", " : "", names[s]);
                any = true;
            }
            strbuf_addf(sb, " %s", side[s]->v[i]);
        }
    }
    argvec_clear(&fa);
    argvec_clear(&fb);
}

char *build_info_differences(const struct build_info *a, const char *aname,
                             const struct build_info *b, const char *bname)
{
    struct strbuf sb = STRBUF_INIT;
    strbuf_init(&sb, 0);
    compiler_differences(&sb, a, aname, b, bname);
    flag_differences(&sb, a, aname, b, bname);
    if (a->configure_from && b->configure_from) {
        struct argvec names = ARGVEC_INIT;
        build_features_differ(&a->configure, &b->configure, &names);
        if (names.n) {
            part(&sb);
            strbuf_addstr(&sb, "configure ");
            configure_differences(&sb, &names, &a->configure, aname, &b->configure, bname);
        }
        argvec_clear(&names);
    } else {
        part(&sb);
        if (!a->configure_from && !b->configure_from)
            strbuf_addstr(&sb, "configure options of neither known");
        else
            strbuf_addf(&sb, "configure options of %s not known",
                        a->configure_from ? bname : aname);
    }
    if (!sb.len) {
        strbuf_release(&sb);
        return NULL;
    }
    return strbuf_detach(&sb);
}
