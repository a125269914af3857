/* Unit tests for src/pgo/recipe.c: loading the shipped recipes, every kind of bad recipe
 * (each a one-line error naming the file and line), placeholder expansion including
 * {phase_options} splicing and compiler command lines, library recipes (title, prepared,
 * prepare, library), tool checks, and the recipe search path ($PGOLAB_RECIPES). */
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
    assert_int_equal(r.build_dir, RECIPE_BUILD_DIR_PER_VARIANT);
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
    t = edit("\"expect\": [\"main.c\"]",
             "\"expect\": [\"main.c\"], \"version\": { \"file\": \"V\", \"pattern\": \"([0-9]+\" }");
    expect_error(t, "source.version.pattern '([0-9]+': not a POSIX extended regular expression");
    free(t);
    t = edit("\"expect\": [\"main.c\"]",
             "\"expect\": [\"main.c\"], \"version\": { \"file\": \"V\", \"pattern\": \"[0-9]+\" }");
    expect_error(t, "source.version.pattern '[0-9]+': expected at least one group");
    free(t);
    t = edit("\"expect\": [\"main.c\"]", "\"expect\": [\"main.c\"], \"version\": { \"file\": \"V\" }");
    expect_error(t, "pattern");
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
    t = edit("\"steps\"", "\"build_dir\": \"instrumented\",\n  \"steps\"");
    expect_error(t, "build_dir 'instrumented': expected \"per-variant\", \"shared\" or "
                    "\"pgo-reuses-instrumented\"");
    free(t);
    {
        struct recipe r;
        char *err = NULL;
        t = edit("\"steps\"", "\"build_dir\": \"pgo-reuses-instrumented\",\n  \"steps\"");
        assert_int_equal(load_text(t, &r, &err), 0);
        assert_int_equal(r.build_dir, RECIPE_BUILD_DIR_PGO_REUSES);
        recipe_release(&r);
        free(err);
        free(t);
    }
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

/* server.suite_server: "started" (default) or "own"; an "own" suite cannot name the started
 * server's placeholders (there is none). */
static void test_suite_server(void **state)
{
    (void)state;
    const char *srv = "\"binary\": \"bin/postgres\" },";
    const char *steps = "  \"steps\": [";
    struct recipe r;
    char *err = NULL;
    assert_int_equal(load_text(good, &r, &err), 0);
    assert_false(r.suite_own_server);
    recipe_release(&r);
    free(err);

    char *t1 = edit(srv, "\"binary\": \"bin/postgres\", \"suite_server\": \"own\" },");
    const char *at = strstr(t1, steps);
    char *t = xasprintf("%.*s  \"suite\": [ { \"name\": \"mtr\", \"run\": [\"perl\", "
                        "\"{build}/mtr\", \"--parallel={jobs}\"] } ],\n%s", (int)(at - t1), t1, at);
    err = NULL;
    assert_int_equal(load_text(t, &r, &err), 0);
    assert_true(r.suite_own_server);
    assert_int_equal(r.nsuite, 1);
    recipe_release(&r);
    free(err);
    free(t);

    t = xasprintf("%.*s  \"suite\": [ { \"name\": \"mtr\", \"run\": [\"perl\", "
                  "\"--socket={socket}\"] } ],\n%s", (int)(at - t1), t1, at);
    expect_error(t, "r.json:5: suite step 'mtr' uses {socket}, but server.suite_server is \"own\"");
    free(t);
    free(t1);

    t = edit(srv, "\"binary\": \"bin/postgres\", \"suite_server\": \"mine\" },");
    expect_error(t, "r.json:5: server.suite_server 'mine': expected \"started\"");
    free(t);
}

/* server.official: the official variant's binary (absolute) and its Debian package; none
 * without the key; a relative path, a non-object or an unknown key is one line at its line. */
static void test_official(void **state)
{
    (void)state;
    const char *srv = "\"binary\": \"bin/postgres\" },";
    struct recipe r;
    char *err = NULL;
    assert_int_equal(load_text(good, &r, &err), 0);
    assert_null(r.official_binary);
    assert_null(r.official_package);
    recipe_release(&r);
    free(err);

    char *t = edit(srv, "\"binary\": \"bin/postgres\", \"official\": { \"binary\": "
                        "\"/usr/lib/postgresql/15/bin/postgres\", \"package\": \"postgresql-15\" } },");
    err = NULL;
    assert_int_equal(load_text(t, &r, &err), 0);
    assert_string_equal(r.official_binary, "/usr/lib/postgresql/15/bin/postgres");
    assert_string_equal(r.official_package, "postgresql-15");
    recipe_release(&r);
    free(err);
    free(t);

    t = edit(srv, "\"binary\": \"bin/postgres\", \"official\": { \"binary\": \"bin/pg\" } },");
    expect_error(t, "r.json:5: server.official.binary 'bin/pg': expected an absolute path");
    free(t);
    t = edit(srv, "\"binary\": \"bin/postgres\", \"official\": \"/usr/bin/postgres\" },");
    expect_error(t, "server.official must be an object");
    free(t);
    t = edit(srv, "\"binary\": \"bin/postgres\", \"official\": { \"bin\": \"/x\" } },");
    expect_error(t, "unknown key 'bin' in server.official (known: binary, package)");
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
    assert_int_equal(r.build_dir, RECIPE_BUILD_DIR_SHARED);
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

/* A library recipe: title, source.prepared, prepare (name, steps, requires with unless),
 * library; and the keys that are for one product only. */
static const char *const lib =
    "{\n"
    "  \"pgolab_recipe\": 1,\n"
    "  \"name\": \"lite\",\n"
    "  \"title\": \"Lite\",\n"
    "  \"source\": { \"expect\": [\"src/x.h\"], \"prepared\": [\"one.c\", \"one.h\"] },\n"
    "  \"library\": \"liblite.so\",\n"
    "  \"prepare\": { \"name\": \"amalgamation\",\n"
    "    \"requires\": [{ \"program\": \"tclsh\", \"package\": \"tcl\", \"unless\": \"jim.c\" }],\n"
    "    \"steps\": [{ \"run\": [\"sh\", \"{source}/configure\"] }, { \"run\": [\"make\", \"one.c\"] }] },\n"
    "  \"steps\": [\n"
    "    { \"name\": \"compile\", \"run\": [\"{cc}\", \"{cflags}\", \"-shared\", \"{pgo_flags}\", \"-o\", \"liblite.so\", \"{prepared}/one.c\"] }\n"
    "  ]\n"
    "}\n";

static char *lib_edit(const char *from, const char *to)
{
    const char *at = strstr(lib, from);
    assert_non_null(at);
    return xasprintf("%.*s%s%s", (int)(at - lib), lib, to, at + strlen(from));
}

static void test_library(void **state)
{
    (void)state;
    struct recipe r;
    char *err = NULL;
    assert_int_equal(load_text(lib, &r, &err), 0);
    assert_string_equal(err, "");
    assert_int_equal(r.product, RECIPE_LIBRARY);
    assert_string_equal(r.library, "liblite.so");
    assert_string_equal(r.title, "Lite");
    assert_true(r.strict_profile); /* a library is one object: missing profile data is fatal */
    assert_string_equal(r.prepared[0], "one.c");
    assert_string_equal(r.prepared[1], "one.h");
    assert_null(r.prepared[2]);
    assert_string_equal(r.prepare_name, "amalgamation");
    assert_int_equal(r.nprepare, 2);
    assert_string_equal(r.prepare[1].name, "make");
    assert_int_equal(r.nprepare_tools, 1);
    assert_string_equal(r.prepare_tools[0].unless, "jim.c");
    assert_int_equal(r.ntools, 0);
    recipe_release(&r);
    free(err);
    /* no title: the name */
    assert_int_equal(load_text(good, &r, &err), 0);
    assert_string_equal(r.title, "toy");
    recipe_release(&r);
    free(err);

    char *t = lib_edit("\"prepared\": [\"one.c\", \"one.h\"]", "\"prepared\": []");
    expect_error(t, "'prepared' must name at least one file");
    free(t);
    t = lib_edit(", \"prepared\": [\"one.c\", \"one.h\"]", "");
    expect_error(t, "'prepare' needs source.prepared");
    free(t);
    t = lib_edit("\"name\": \"amalgamation\",", "\"nmae\": \"x\",");
    expect_error(t, "r.json:7: unknown key 'nmae' in prepare (known: name, steps, requires)");
    free(t);
    t = lib_edit("\"steps\": [{ \"run\": [\"sh\"", "\"stpes\": [{ \"run\": [\"sh\"");
    expect_error(t, "unknown key 'stpes' in prepare");
    free(t);
    t = lib_edit("{prepared}/one.c", "{prepard}/one.c");
    expect_error(t, "unknown placeholder {prepard}");
    free(t);
    /* "unless" is for prepare.requires only (the top-level ones are checked before the
     * source exists) */
    t = lib_edit("\"library\"", "\"requires\": [{ \"program\": \"x\", \"package\": \"x\", \"unless\": \"y\" }],\n  \"library\"");
    expect_error(t, "unknown key 'unless' in requires[]");
    free(t);
    /* library-only keys in a server recipe, server-only keys in a library recipe */
    t = edit("\"expect\": [\"main.c\"]", "\"expect\": [\"main.c\"], \"prepared\": [\"a.c\"]");
    expect_error(t, "source.prepared is for library recipes");
    free(t);
    t = edit("\"steps\"", "\"prepare\": { \"steps\": [{ \"run\": [\"true\"] }] },\n  \"steps\"");
    expect_error(t, "'prepare' is for library recipes");
    free(t);
    t = lib_edit("\"steps\": [\n", "\"suite\": [{ \"run\": [\"true\"] }],\n  \"steps\": [\n");
    expect_error(t, "'suite' is for server recipes");
    free(t);
}

/* recipe_check_tools: a missing program names its package; "unless" skips it when the
 * source has that file. */
static void test_check_tools(void **state)
{
    (void)state;
    struct recipe r;
    char *err = NULL;
    assert_int_equal(load_text(lib, &r, &err), 0);
    free(err);
    free(r.prepare_tools[0].program);
    r.prepare_tools[0].program = xstrdup("pgolab-no-such-program");
    char *src = xasprintf("%s/src", tmpdir);
    assert_int_equal(mkdir_p(src), 0);
    int saved = dup(STDERR_FILENO);
    int fd = open("/dev/null", O_WRONLY);
    dup2(fd, STDERR_FILENO);
    close(fd);
    int rc = recipe_check_tools(&r, r.prepare_tools, r.nprepare_tools, "amalgamation", src);
    dup2(saved, STDERR_FILENO);
    close(saved);
    assert_int_equal(rc, -1);
    char *jim = xasprintf("%s/jim.c", src);
    FILE *f = fopen(jim, "w");
    assert_non_null(f);
    fclose(f);
    assert_int_equal(recipe_check_tools(&r, r.prepare_tools, r.nprepare_tools, "amalgamation", src), 0);
    recipe_release(&r);
    free(src);
    free(jim);
}

/* recipe_check_tools with several missing: one line naming every missing program and file,
 * each package once (two files of one package), the apt-get command with all of them;
 * present ones are not named. */
static void test_check_tools_all_missing(void **state)
{
    (void)state;
    char *here = xasprintf("%s/present.h", tmpdir);
    FILE *f = fopen(here, "w");
    assert_non_null(f);
    fclose(f);
    struct recipe_tool tools[] = {
        { .program = "pgolab-no-such-a", .package = "pkg-a" },
        { .file = here, .package = "pkg-present" },
        { .file = "/nonexistent/pgolab/one.h", .package = "pkg-b" },
        { .file = "/nonexistent/pgolab/two.h", .package = "pkg-b" },
        { .program = "sh", .package = "dash" },
    };
    struct recipe r = { .name = "toy" };
    char *errpath = xasprintf("%s/tools-err.txt", tmpdir);
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    int fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, STDERR_FILENO);
    close(fd);
    int rc = recipe_check_tools(&r, tools, 5, NULL, NULL);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    assert_int_equal(rc, -1);
    struct strbuf sb = STRBUF_INIT;
    strbuf_read_file(&sb, errpath);
    const char *want = "the toy recipe needs pgolab-no-such-a, /nonexistent/pgolab/one.h, "
                       "/nonexistent/pgolab/two.h (Debian packages pkg-a pkg-b: apt-get install "
                       "pkg-a pkg-b)\n";
    if (!strstr(sb.buf, want))
        fail_msg("error was '%s', wanted it to contain '%s'", sb.buf, want);
    assert_int_equal((int)(strchr(sb.buf, '\n') - sb.buf + 1), (int)strlen(sb.buf));
    /* nothing missing: 0, silent */
    assert_int_equal(recipe_check_tools(&r, &tools[1], 1, NULL, NULL), 0);
    strbuf_release(&sb);
    unlink(errpath);
    unlink(here);
    free(errpath);
    free(here);
}

/* Whole-argument {cflags} / {pgo_flags} become words of their own (a compiler command line);
 * pgo_flags_list keeps each flag whole (a profile path with a space). */
static void test_expand_words(void **state)
{
    (void)state;
    struct recipe r;
    char *err = NULL;
    assert_int_equal(load_text(lib, &r, &err), 0);
    struct recipe_vars v = { .cc = "gcc", .cflags = " -O2  -march=native ", .pgo_flags = "-fa -fb",
                             .prepared = "/am" };
    struct argvec argv = ARGVEC_INIT, env = ARGVEC_INIT;
    char *cwd = NULL;
    recipe_expand_step(&r.steps[0], &v, &argv, &env, &cwd);
    static const char *const want[] = { "gcc", "-O2", "-march=native", "-shared", "-fa", "-fb",
                                        "-o", "liblite.so", "/am/one.c" };
    assert_int_equal(argv.n, (int)ARRAY_SIZE(want));
    for (size_t i = 0; i < ARRAY_SIZE(want); i++)
        assert_string_equal(argv.v[i], want[i]);
    argvec_clear(&argv);
    free(cwd);
    const char *list[] = { "-fprofile-use=/a b/profile", NULL };
    v.pgo_flags_list = list;
    v.cflags = "";
    recipe_expand_step(&r.steps[0], &v, &argv, &env, &cwd);
    assert_int_equal(argv.n, 6); /* no cflags at all, the one flag whole */
    assert_string_equal(argv.v[2], "-fprofile-use=/a b/profile");
    argvec_clear(&argv);
    free(cwd);
    recipe_release(&r);
    free(err);
}

/* The shipped sqlite recipe: a library whose three commands are identical except for the PGO
 * flags, which come right before -o (the command pgolab pgo sqlite always ran). */
static void test_shipped_sqlite(void **state)
{
    (void)state;
    struct recipe r;
    assert_int_equal(recipe_load("recipes/sqlite.json", &r), 0);
    assert_int_equal(r.product, RECIPE_LIBRARY);
    assert_string_equal(r.library, "libsqlite3.so");
    assert_string_equal(r.debian_package, "sqlite3");
    assert_string_equal(r.title, "SQLite");
    assert_string_equal(r.prepared[0], "sqlite3.c");
    assert_string_equal(r.prepare_name, "amalgamation");
    assert_int_equal(r.nsteps, 1);
    const char *gen[] = { "-fprofile-generate=/w/profile", NULL };
    const char *none[] = { NULL };
    struct recipe_vars v = { .cc = "gcc", .cflags = "-O3 -g", .prepared = "/w/amalg-1",
                             .pgo_flags_list = none };
    struct argvec base = ARGVEC_INIT, inst = ARGVEC_INIT, env = ARGVEC_INIT;
    char *cwd = NULL;
    recipe_expand_step(&r.steps[0], &v, &base, &env, &cwd);
    free(cwd);
    v.pgo_flags_list = gen;
    recipe_expand_step(&r.steps[0], &v, &inst, &env, &cwd);
    free(cwd);
    static const char *const want[] = {
        "gcc", "-O3", "-g", "-fPIC", "-shared", "-DSQLITE_THREADSAFE=1", "-DNDEBUG",
        "-Wl,-Bsymbolic", "-o", "libsqlite3.so", "/w/amalg-1/sqlite3.c", "-lpthread", "-lm", "-ldl",
    };
    assert_int_equal(base.n, (int)ARRAY_SIZE(want));
    for (size_t i = 0; i < ARRAY_SIZE(want); i++)
        assert_string_equal(base.v[i], want[i]);
    assert_int_equal(inst.n, base.n + 1);
    assert_string_equal(inst.v[8], "-fprofile-generate=/w/profile");
    assert_string_equal(inst.v[9], "-o");
    argvec_clear(&base);
    argvec_clear(&inst);
    assert_int_equal(env.n, 0);
    recipe_release(&r);
}

/* The "bolt" key: lists and binary read, the binary defaulting to the product; a bad key or
 * type is a one-line error; no key: has_bolt false. */
static void test_bolt_key(void **state)
{
    (void)state;
    struct recipe r;
    char *err = NULL;
    assert_int_equal(recipe_load("recipes/sqlite.json", &r), 0);
    assert_true(r.has_bolt);
    assert_string_equal(r.bolt_link_flags[0], "-Wl,--emit-relocs");
    assert_string_equal(r.bolt_cflags[0], "-fno-reorder-blocks-and-partition");
    assert_string_equal(r.bolt_binary, "libsqlite3.so");
    recipe_release(&r);
    char *t = edit("  \"steps\"", "  \"bolt\": { \"link_flags\": [\"-Wl,-q\"] },\n  \"steps\"");
    assert_int_equal(load_text(t, &r, &err), 0);
    assert_true(r.has_bolt);
    assert_string_equal(r.bolt_binary, "bin/postgres");
    assert_null(r.bolt_cflags[0]);
    assert_null(r.bolt_clang_cflags[0]); /* the default: none */
    assert_string_equal(r.bolt_link_flags[0], "-Wl,-q");
    assert_true(r.bolt_append_pid);   /* the default: one profile per process */
    assert_int_equal(r.bolt_sleep_s, 0);
    assert_null(r.bolt_instrument_options[0]);
    recipe_release(&r);
    free(err);
    free(t);
    /* a daemon's periodic dump, per-process files off */
    t = edit("  \"steps\"", "  \"bolt\": { \"link_flags\": [\"-Wl,-q\"], \"append_pid\": false, "
             "\"sleep_time\": 30 },\n  \"steps\"");
    err = NULL;
    assert_int_equal(load_text(t, &r, &err), 0);
    assert_false(r.bolt_append_pid);
    assert_int_equal(r.bolt_sleep_s, 30);
    recipe_release(&r);
    free(err);
    free(t);
    /* clang's own compile flags beside GCC's */
    t = edit("  \"steps\"", "  \"bolt\": { \"cflags\": [\"-fno-reorder-blocks-and-partition\"], "
             "\"clang_cflags\": [\"-fno-split-machine-functions\"] },\n  \"steps\"");
    err = NULL;
    assert_int_equal(load_text(t, &r, &err), 0);
    assert_string_equal(r.bolt_cflags[0], "-fno-reorder-blocks-and-partition");
    assert_string_equal(r.bolt_clang_cflags[0], "-fno-split-machine-functions");
    assert_null(r.bolt_clang_cflags[1]);
    recipe_release(&r);
    free(err);
    free(t);
    t = edit("  \"steps\"", "  \"bolt\": { \"clang_cflags\": \"-O2\" },\n  \"steps\"");
    expect_error(t, "clang_cflags");
    free(t);
    t = edit("  \"steps\"", "  \"bolt\": { \"sleep_time\": \"30\" },\n  \"steps\"");
    expect_error(t, "bolt.sleep_time must be a number of seconds");
    free(t);
    t = edit("  \"steps\"", "  \"bolt\": { \"sleep_time\": -1 },\n  \"steps\"");
    expect_error(t, "bolt.sleep_time must be a number of seconds");
    free(t);
    t = edit("  \"steps\"", "  \"bolt\": { \"instrument_options\": \"--instrument-calls=false\" },\n  \"steps\"");
    expect_error(t, "instrument_options");
    free(t);
    t = edit("  \"steps\"", "  \"bolt\": { \"append_pid\": 1 },\n  \"steps\"");
    expect_error(t, "'append_pid' must be true or false");
    free(t);
    assert_int_equal(load_text(good, &r, &err), 0);
    assert_false(r.has_bolt);
    recipe_release(&r);
    free(err);
    t = edit("  \"steps\"", "  \"bolt\": { \"flags\": [] },\n  \"steps\"");
    expect_error(t, "unknown key 'flags'");
    free(t);
    t = edit("  \"steps\"", "  \"bolt\": [],\n  \"steps\"");
    expect_error(t, "'bolt' must be an object");
    free(t);
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
        /* MariaDB's mysql-test-run starts the build's servers itself (an --extern server lacks
         * its test and mtr databases and its server options) */
        assert_int_equal(r.suite_own_server, !strcmp(names[i], "mariadb"));
        /* BOLT: the server binary, linked with its relocations, one profile per process; the
         * daemons (not PostgreSQL, whose backends exit) also dump periodically */
        assert_true(r.has_bolt);
        /* the distro variant: Debian's configure replaces the recipe's, the variant's own prefix
         * after Debian's options */
        assert_true(r.has_distro);
        assert_non_null(strstr(r.distro_paths[0], "{prefix}"));
        assert_string_equal(r.bolt_binary, r.server_binary);
        assert_string_equal(r.bolt_link_flags[0], "-Wl,--emit-relocs");
        assert_true(r.bolt_append_pid);
        assert_non_null(r.bolt_instrument_options);
        if (!strcmp(names[i], "postgresql")) {
            assert_int_equal(r.bolt_sleep_s, 0);
            assert_string_equal(r.bolt_instrument_options[0], "--instrument-calls=false");
        } else
            assert_true(r.bolt_sleep_s > 0 && r.bolt_sleep_s < 20); /* < the default --train-time */
        recipe_release(&r);
        free(path);
    }
}

/* "versions": the shipped postgresql recipe's majors (sorted), {major} in its package and
 * official binary, 18's own requires (flex); a major it does not build, one line; {major}
 * without "versions", a default not among the majors: refused with FILE:LINE. */
static void test_versions(void **state)
{
    (void)state;
    struct recipe r;
    assert_int_equal(recipe_load("recipes/postgresql.json", &r), 0);
    char *list = recipe_majors_list(&r);
    assert_string_equal(list, "15, 16, 17, 18");
    free(list);
    assert_string_equal(r.major_default, "15");
    assert_string_equal(r.debian_package, "postgresql-{major}");
    int ntools = r.ntools, nsteps = r.nsteps;
    assert_int_equal(recipe_select_major(&r, "18"), 0);
    /* 18 installs postgres.bki with a step of its own, after the recipe's */
    assert_int_equal(r.nsteps, nsteps + 1);
    assert_string_equal(r.steps[nsteps].name, "install");
    assert_string_equal(r.steps[nsteps].argv[3], "src/include/catalog/postgres.bki");
    assert_string_equal(r.major, "18");
    assert_string_equal(r.debian_package, "postgresql-18");
    assert_string_equal(r.debian_package_template, "postgresql-{major}");
    assert_string_equal(r.official_binary, "/usr/lib/postgresql/18/bin/postgres");
    assert_string_equal(r.official_package, "postgresql-18");
    assert_int_equal(r.ntools, ntools + 1);
    assert_string_equal(r.tools[ntools].program, "flex");
    assert_null(r.tools[ntools + 1].program); /* still terminated */
    recipe_release(&r);
    assert_int_equal(recipe_load("recipes/postgresql.json", &r), 0);
    assert_int_equal(recipe_select_major(&r, "15"), 0);
    assert_int_equal(r.ntools, ntools); /* 15 needs no more */
    assert_int_equal(r.nsteps, nsteps);
    recipe_release(&r);
    assert_int_equal(recipe_load("recipes/mariadb.json", &r), 0);
    list = recipe_majors_list(&r);
    assert_string_equal(list, "10.11, 11.8"); /* by version, not as text ("10" < "11") */
    free(list);
    assert_int_equal(recipe_select_major(&r, "11.8"), 0);
    assert_string_equal(r.debian_package, "mariadb"); /* the version picks the suite */
    recipe_release(&r);

    const char *srv = "\"binary\": \"bin/postgres\" },";
    char *t = edit(srv, "\"binary\": \"bin/postgres\", \"official\": { \"binary\": "
                        "\"/usr/lib/postgresql/{major}/bin/postgres\" } },");
    expect_error(t, "'/usr/lib/postgresql/{major}/bin/postgres' names {major}, but the recipe has no \"versions\"");
    free(t);
    t = edit(srv, "\"binary\": \"bin/postgres\" }, \"versions\": { \"default\": \"14\", "
                  "\"majors\": { \"15\": {} } },");
    expect_error(t, "versions.default '14' is not one of versions.majors");
    free(t);
}

/* "distro": the distro variant's head, paths, drops and requires; refused where it cannot
 * work (no configure step, a library recipe, no run, a drop without its reason). */
static void test_distro_key(void **state)
{
    (void)state;
    struct recipe r;
    char *err = NULL;
    assert_int_equal(load_text(good, &r, &err), 0);
    assert_false(r.has_distro); /* without the key: none (the variant is refused) */
    recipe_release(&r);
    free(err);
    char *t = edit("  \"steps\"", "  \"distro\": { \"run\": [\"{source}/configure\"], "
                   "\"paths\": [\"--prefix={prefix}\"], \"drop\": [{\"option\": \"--enable-x\", "
                   "\"reason\": \"why\"}], \"requires\": [{\"option\": \"--with-y\", "
                   "\"package\": \"liby-dev\"}, {\"package\": \"libz-dev\"}] },\n  \"steps\"");
    err = NULL;
    assert_int_equal(load_text(t, &r, &err), 0);
    assert_true(r.has_distro);
    assert_string_equal(r.distro_run[0], "{source}/configure");
    assert_null(r.distro_run[1]);
    assert_string_equal(r.distro_paths[0], "--prefix={prefix}");
    assert_int_equal(r.ndistro_drop, 1);
    assert_string_equal(r.distro_drop[0].reason, "why");
    assert_int_equal(r.ndistro_requires, 2);
    assert_string_equal(r.distro_requires[0].package, "liby-dev");
    assert_null(r.distro_requires[1].option); /* always needed */
    recipe_release(&r);
    free(err);
    free(t);
    t = edit("  \"steps\"", "  \"distro\": { \"paths\": [] },\n  \"steps\"");
    expect_error(t, "missing key 'run' in distro");
    free(t);
    t = edit("  \"steps\"", "  \"distro\": { \"run\": [\"cmake\"], \"drop\": [{\"option\": "
             "\"-DX\"}] },\n  \"steps\"");
    expect_error(t, "missing key 'reason'");
    free(t);
    t = edit("  \"steps\"", "  \"distro\": { \"run\": [\"cmake\"], \"runn\": [] },\n  \"steps\"");
    expect_error(t, "unknown key 'runn' in distro (known: run, paths, drop, requires)");
    free(t);
    t = edit("\"name\": \"configure\"", "\"name\": \"setup\"");
    char *t2 = xasprintf("%.*s  \"distro\": { \"run\": [\"cmake\"] },\n%s",
                         (int)(strstr(t, "  \"steps\"") - t), t, strstr(t, "  \"steps\""));
    expect_error(t2, "'distro' replaces the step named \"configure\", and the recipe's steps have none");
    free(t);
    free(t2);
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
        cmocka_unit_test(test_suite_server),
        cmocka_unit_test(test_official),
        cmocka_unit_test(test_options_need_phase_options),
        cmocka_unit_test(test_expand),
        cmocka_unit_test(test_library),
        cmocka_unit_test(test_check_tools),
        cmocka_unit_test(test_check_tools_all_missing),
        cmocka_unit_test(test_expand_words),
        cmocka_unit_test(test_shipped_sqlite),
        cmocka_unit_test(test_shipped),
        cmocka_unit_test(test_bolt_key),
        cmocka_unit_test(test_distro_key),
        cmocka_unit_test(test_find),
        cmocka_unit_test(test_versions),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
