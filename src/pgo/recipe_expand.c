/* recipe_expand: the placeholders of a recipe step ({source}, {prefix}, {cflags},
 * {phase_options}, ...; docs/recipes.md) replaced by one build's values (struct recipe_vars),
 * see recipe.h. recipe.c checks at load time that a step names only known placeholders; this
 * file fills them in at run time. Owns no state. */
#include "pgo/recipe.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *var_value(const struct recipe_vars *v, const char *name, size_t len,
                             char *num, size_t numlen)
{
#define VAR(key, member) \
    if (len == strlen(key) && !strncmp(name, key, len)) return v->member ? v->member : ""
    VAR("source", source);
    VAR("build", build);
    VAR("prefix", prefix);
    VAR("profile_dir", profile_dir);
    VAR("phase", phase);
    VAR("prepared", prepared);
    VAR("cc", cc);
    VAR("cxx", cxx);
    VAR("cflags", cflags);
    VAR("cxxflags", cxxflags);
    VAR("pgo_flags", pgo_flags);
    VAR("lto", lto);
    VAR("host", host);
    VAR("socket", socket);
    VAR("socket_dir", socket_dir);
    VAR("user", user);
    VAR("db", db);
    VAR("major", major);
#undef VAR
    if (len == 4 && !strncmp(name, "jobs", 4)) {
        snprintf(num, numlen, "%d", v->jobs > 0 ? v->jobs : 1);
        return num;
    }
    if (len == 4 && !strncmp(name, "port", 4)) {
        snprintf(num, numlen, "%d", v->port);
        return num;
    }
    return NULL;
}

char *recipe_expand(const char *tmpl, const struct recipe_vars *vars)
{
    struct strbuf sb = STRBUF_INIT;
    char num[32];
    strbuf_init(&sb, strlen(tmpl) + 16);
    for (const char *p = tmpl; *p;) {
        const char *end = *p == '{' ? strchr(p, '}') : NULL;
        const char *val =
            end ? var_value(vars, p + 1, (size_t)(end - p - 1), num, sizeof(num)) : NULL;
        if (val) {
            strbuf_addstr(&sb, val);
            p = end + 1;
        } else {
            strbuf_addch(&sb, *p++);
        }
    }
    /* "{cflags} {pgo_flags}" with an empty part leaves a space at an end: trim it, but keep
     * the text inside (a NAME=VALUE's value may hold spaces on purpose) */
    while (sb.len && sb.buf[sb.len - 1] == ' ')
        sb.buf[--sb.len] = '\0';
    char *eq = strchr(sb.buf, '=');
    if (eq && eq[1] == ' ' && strchr(tmpl, '=') && strchr(tmpl, '=')[1] == '{') {
        size_t skip = strspn(eq + 1, " ");
        memmove(eq + 1, eq + 1 + skip, strlen(eq + 1 + skip) + 1);
    }
    return strbuf_detach(&sb);
}

void recipe_expand_step(const struct recipe_step *step, const struct recipe_vars *vars,
                        struct argvec *argv, struct argvec *env, char **cwd)
{
    for (char **a = step->argv; *a; a++) {
        if (!strcmp(*a, "{phase_options}")) {
            /* each option is a template too (MySQL's -DFPROFILE_DIR={profile_dir}) */
            for (const char *const *o = vars->phase_options; o && *o; o++) {
                char *x = recipe_expand(*o, vars);
                argvec_push(argv, x);
                free(x);
            }
            continue;
        }
        if (!strcmp(*a, "{pgo_flags}") && vars->pgo_flags_list) {
            argvec_pushv(argv, vars->pgo_flags_list);
            continue;
        }
        if (!strcmp(*a, "{cflags}") || !strcmp(*a, "{cxxflags}") || !strcmp(*a, "{pgo_flags}")) {
            /* a compiler command line: the flags are arguments of their own */
            char *x = recipe_expand(*a, vars);
            argvec_split(argv, x);
            free(x);
            continue;
        }
        char *e = recipe_expand(*a, vars);
        argvec_push(argv, e);
        free(e);
    }
    for (char **e = step->env; e && *e; e++) {
        char *x = recipe_expand(*e, vars);
        argvec_push(env, x);
        free(x);
    }
    *cwd = recipe_expand(step->cwd ? step->cwd : "{build}", vars);
}
