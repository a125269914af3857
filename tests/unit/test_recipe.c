/* Unit tests for src/pgo/recipe.c: loading the shipped recipes, every kind of bad recipe
 * (each a one-line error naming the file and line), placeholder expansion including
 * {phase_options} splicing, and the recipe search path ($PGOLAB_RECIPES). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pgo/recipe.h"
#include "util/fs.h"
#include "util/strbuf.h"
#include "util/util.h"

#define UNIT_TMPDIR_TEMPLATE "/tmp/pgolab-recipe.XXXXXX"
#include "unit_helpers.h"

/* A minimal valid recipe; tests edit a copy. */
static const char *const good =
    "{\n"
    "  \"pgolab_recipe\": 1,\n"
    "  \"name\": \"toy\",\n"
    "  \"source\": { \"expect\": [\"main.c\"] },\n"
    "  \"server\": { \"driver\": \"pgsql\", \"binary\": \"bin/postgres\" },\n"
    "  \"steps\": [\n"
    "    { \"name\": \"configure\", \"run\": [\"./configure\", \"--prefix={prefix}\", \"CFLAGS={cflags} {pgo_flags}\"] },\n"
    "    { \"run\": [\"make\", \"-j{jobs}\", \"{phase_options}\"], \"cwd\": \"{build}/sub\", \"env\": [\"X={phase}\"] }\n"
    "  ]\n"
    "}\n";

static char *write_recipe(const char *name, const char *text)
{
    char *path = xasprintf("%s/%s", tmpdir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

/* recipe_load on text, with stderr captured into *err (caller frees). */
static int load_text(const char *text, struct recipe *r, char **err)
{
    char *path = write_recipe("r.json", text);
    char *errpath = xasprintf("%s/err.txt", tmpdir);
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    int fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, STDERR_FILENO);
    close(fd);
    int rc = recipe_load(path, r);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    struct strbuf sb = STRBUF_INIT;
    strbuf_init(&sb, 0);
    strbuf_read_file(&sb, errpath);
    *err = strbuf_detach(&sb);
    free(path);
    free(errpath);
    return rc;
}

/* good with one substring replaced. */
static char *edit(const char *from, const char *to)
{
    const char *at = strstr(good, from);
    assert_non_null(at);
    return xasprintf("%.*s%s%s", (int)(at - good), good, to, at + strlen(from));
}

static void expect_error(const char *text, const char *want)
{
    struct recipe r;
    char *err = NULL;
    assert_int_equal(load_text(text, &r, &err), -1);
    if (!strstr(err, want))
        fail_msg("error was '%s', wanted it to contain '%s'", err, want);
    /* one line */
    assert_non_null(strchr(err, '\n'));
    assert_null(strchr(err, '\n') + 1 < err + strlen(err) ? strchr(strchr(err, '\n') + 1, '\n') : NULL);
    free(err);
}

static void test_good(void **state)
{
    (void)state;
    struct recipe r;
    char *err = NULL;
    assert_int_equal(load_text(good, &r, &err), 0);
    assert_string_equal(err, "");
    assert_string_equal(r.name, "toy");
    assert_int_equal(r.product, RECIPE_SERVER);
    assert_int_equal(r.server_kind, SERVER_PGSQL);
    assert_string_equal(r.server_binary, "bin/postgres");
    assert_int_equal(r.nsteps, 2);
    assert_string_equal(r.steps[0].name, "configure");
    assert_string_equal(r.steps[1].name, "make"); /* unnamed: its program */
    assert_false(r.shared_build_dir);
    assert_int_equal(r.flags, RECIPE_FLAGS_COMPILER);
    assert_false(r.strict_profile); /* servers: missing profile data is counted, not fatal */
    assert_null(r.debian_package);
    assert_int_equal(strlen(r.sha256), 64);
    recipe_release(&r);
    free(err);
}

static void test_bad(void **state)
{
    (void)state;
    char *t;
    expect_error("{ \"pgolab_recipe\": 1, ", "not valid JSON");
    t = edit("\"name\": \"toy\",", "\"name\": \"toy\", \"nmae\": \"x\",");
    expect_error(t, "r.json:3: unknown key 'nmae' in the recipe (known: pgolab_recipe, name");
    free(t);
    t = edit("\"cwd\"", "\"cdw\"");
    expect_error(t, "r.json:8: unknown key 'cdw' in steps[1] (known: name, run, cwd, env)");
    free(t);
    t = edit("\"pgolab_recipe\": 1", "\"pgolab_recipe\": 2");
    expect_error(t, "r.json:2: format 2 is not one this pgolab reads (1)");
    free(t);
    t = edit("{pgo_flags}", "{pgoflags}");
    expect_error(t, "r.json:7: unknown placeholder {pgoflags}");
    free(t);
    t = edit("\"driver\": \"pgsql\"", "\"driver\": \"oracle\"");
    expect_error(t, "server.driver 'oracle': expected mysql or pgsql");
    free(t);
    t = edit("{ \"run\": [\"make\", \"-j{jobs}\", \"{phase_options}\"],", "{ \"name\": \"x\",");
    expect_error(t, "steps[1] (x): missing key 'run'");
    free(t);
    const char *at = strstr(good, "  \"steps\"");
    t = xasprintf("%.*s  \"x\": 1\n}\n", (int)(at - good), good);
    expect_error(t, "unknown key 'x'");
    free(t);
    t = xasprintf("%.*s  \"build_dir\": \"per-variant\"\n}\n", (int)(at - good), good);
    expect_error(t, "missing key 'steps'");
    free(t);
    t = edit("\"server\": { \"driver\": \"pgsql\", \"binary\": \"bin/postgres\" },", "");
    expect_error(t, "needs exactly one of 'server'");
    free(t);
    t = edit("\"run\": [\"make\"", "\"run\": [3");
    expect_error(t, "'run' must be an array of strings");
    free(t);
    t = edit("\"expect\": [\"main.c\"]", "\"expect\": []");
    expect_error(t, "'expect' must name at least one file");
    free(t);
}

static void test_options_need_phase_options(void **state)
{
    (void)state;
    char *t = edit("\"steps\"", "\"pgo\": { \"flags\": \"options\" },\n  \"steps\"");
    expect_error(t, "pgo.flags \"options\" needs pgo.phase_options");
    free(t);
    t = edit("\"steps\"", "\"pgo\": { \"flags\": \"options\", \"phase_options\": { \"pgo\": "
                          "[\"-DFPROFILE_USE=ON\", \"-DFPROFILE_DIR={profile_dir}\"], \"instrumented\": "
                          "[\"-DFPROFILE_GENERATE=ON\"] } },\n  \"build_dir\": \"shared\",\n  \"steps\"");
    struct recipe r;
    char *err = NULL;
    assert_int_equal(load_text(t, &r, &err), 0);
    assert_true(r.shared_build_dir);
    assert_int_equal(r.flags, RECIPE_FLAGS_OPTIONS);
    assert_string_equal(r.phase_options[BUILD_PGO][1], "-DFPROFILE_DIR={profile_dir}");
    assert_null(r.phase_options[BUILD_BASELINE]);
    recipe_release(&r);
    free(err);
    free(t);
}

static void test_expand(void **state)
{
    (void)state;
    struct recipe r;
    char *err = NULL;
    assert_int_equal(load_text(good, &r, &err), 0);
    const char *opts[] = { "-DA=1", "-DB={profile_dir}", NULL };
    struct recipe_vars v = { .prefix = "/p", .build = "/b", .cflags = "-O2", .profile_dir = "/pd",
                             .pgo_flags = "-fprofile-use=/d", .jobs = 3, .phase = "pgo",
                             .phase_options = opts };
    struct argvec argv = ARGVEC_INIT, env = ARGVEC_INIT;
    char *cwd = NULL;
    recipe_expand_step(&r.steps[0], &v, &argv, &env, &cwd);
    assert_int_equal(argv.n, 3);
    assert_string_equal(argv.v[1], "--prefix=/p");
    assert_string_equal(argv.v[2], "CFLAGS=-O2 -fprofile-use=/d");
    assert_string_equal(cwd, "/b"); /* the default cwd */
    free(cwd);
    argvec_clear(&argv);
    recipe_expand_step(&r.steps[1], &v, &argv, &env, &cwd);
    assert_int_equal(argv.n, 4); /* make -j3 -DA=1 -DB=/pd: the options spliced, expanded */
    assert_string_equal(argv.v[1], "-j3");
    assert_string_equal(argv.v[2], "-DA=1");
    assert_string_equal(argv.v[3], "-DB=/pd");
    assert_string_equal(cwd, "/b/sub");
    assert_string_equal(env.v[0], "X=pgo");
    free(cwd);
    argvec_clear(&argv);
    argvec_clear(&env);
    /* empty parts leave no stray spaces; no phase options: nothing spliced */
    struct recipe_vars base = { .cflags = "-O2", .pgo_flags = "" };
    char *e = recipe_expand("CFLAGS={cflags} {pgo_flags}", &base);
    assert_string_equal(e, "CFLAGS=-O2");
    free(e);
    base.cflags = "";
    base.pgo_flags = "-flto=auto";
    e = recipe_expand("CFLAGS={cflags} {pgo_flags}", &base);
    assert_string_equal(e, "CFLAGS=-flto=auto");
    free(e);
    e = recipe_expand("{unknown} {", &base);
    assert_string_equal(e, "{unknown} {");
    free(e);
    recipe_expand_step(&r.steps[1], &base, &argv, &env, &cwd);
    assert_int_equal(argv.n, 2);
    free(cwd);
    argvec_clear(&argv);
    argvec_clear(&env);
    recipe_release(&r);
    free(err);
}

static void test_shipped(void **state)
{
    (void)state;
    static const char *const names[] = { "postgresql", "mariadb", "mysql" };
    for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
        char *path = xasprintf("recipes/%s.json", names[i]);
        if (!is_file(path)) {
            free(path);
            fail_msg("recipes/%s.json is missing (run the unit tests from the project root)", names[i]);
        }
        struct recipe r;
        assert_int_equal(recipe_load(path, &r), 0);
        assert_string_equal(r.name, names[i]);
        assert_int_equal(r.product, RECIPE_SERVER);
        assert_true(r.nsteps >= 2);
        recipe_release(&r);
        free(path);
    }
}

static void test_find(void **state)
{
    (void)state;
    char *dir = xasprintf("%s/rdir", tmpdir);
    assert_int_equal(mkdir_p(dir), 0);
    char *file = xasprintf("%s/standin.json", dir);
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fputs(good, f);
    fclose(f);
    setenv("PGOLAB_RECIPES", dir, 1);
    char *found = recipe_find("standin");
    assert_non_null(found);
    assert_string_equal(found, file);
    free(found);
    char *names = recipe_names();
    assert_non_null(strstr(names, "standin"));
    free(names);
    found = recipe_find(file); /* a path is a file */
    assert_string_equal(found, file);
    free(found);
    int saved = dup(STDERR_FILENO);
    int fd = open("/dev/null", O_WRONLY);
    dup2(fd, STDERR_FILENO);
    close(fd);
    assert_null(recipe_find("no-such-target"));
    assert_null(recipe_find("./nope.json"));
    dup2(saved, STDERR_FILENO);
    close(saved);
    unsetenv("PGOLAB_RECIPES");
    free(dir);
    free(file);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good),
        cmocka_unit_test(test_bad),
        cmocka_unit_test(test_options_need_phase_options),
        cmocka_unit_test(test_expand),
        cmocka_unit_test(test_shipped),
        cmocka_unit_test(test_find),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
