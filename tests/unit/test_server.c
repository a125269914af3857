/* Unit tests of src/server/ through its public API (server.h): --db-driver names, and per
 * server family (flavor_mysql.c, flavor_pgsql.c) --server-option translation (and the options
 * pgolab manages) and `--version` parsing (servers accepted, clients and other programs refused);
 * datadir classification, the state file round trip (state.c; no password in it), the client
 * arguments and environment, and one in-process MariaDB lifecycle (lifecycle.c + process.c: the
 * child path of server_stop, waitpid status), skipped when mariadbd is not installed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "server/server.h"
#include "util/fs.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define UNIT_TMPDIR_TEMPLATE "/tmp/pgolab-server-unit.XXXXXX"
#include "unit_helpers.h"  /* tmpdir, group_setup, group_teardown */

static void touch(const char *dir, const char *name)
{
    char *p = path_join(dir, name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs("x\n", f);
    fclose(f);
    free(p);
}

static char *sub(const char *name)
{
    return path_join(tmpdir, name);
}

/* ---------------------------------------------------------------- names and options */

static void test_kind_parse(void **state)
{
    (void)state;
    enum server_kind k = SERVER_PGSQL;
    assert_int_equal(server_kind_parse("mysql", &k), 0);
    assert_int_equal(k, SERVER_MYSQL);
    assert_int_equal(server_kind_parse("mariadb", &k), 0);
    assert_int_equal(k, SERVER_MYSQL);
    assert_int_equal(server_kind_parse("pgsql", &k), 0);
    assert_int_equal(k, SERVER_PGSQL);
    assert_int_equal(server_kind_parse("postgresql", &k), 0);
    assert_int_equal(k, SERVER_PGSQL);
    assert_int_equal(server_kind_parse("sqlite", &k), -1);
    assert_int_equal(server_kind_parse(NULL, &k), -1);
    assert_string_equal(server_kind_name(SERVER_MYSQL), "mysql");
    assert_string_equal(server_kind_name(SERVER_PGSQL), "pgsql");
}

static void test_option_args(void **state)
{
    (void)state;
    struct argvec a = ARGVEC_INIT;
    assert_int_equal(server_option_args(SERVER_MYSQL, "innodb_buffer_pool_size=1G", &a), 0);
    assert_int_equal(server_option_args(SERVER_MYSQL, "skip-name-resolve", &a), 0);
    assert_int_equal(server_option_args(SERVER_MYSQL, "--innodb-flush-log-at-trx-commit=2", &a), 0);
    assert_int_equal(a.n, 3);
    assert_string_equal(a.v[0], "--innodb_buffer_pool_size=1G");
    assert_string_equal(a.v[1], "--skip-name-resolve");
    assert_string_equal(a.v[2], "--innodb-flush-log-at-trx-commit=2");
    argvec_clear(&a);

    assert_int_equal(server_option_args(SERVER_PGSQL, "shared_buffers=1GB", &a), 0);
    assert_int_equal(server_option_args(SERVER_PGSQL, "--fsync=off", &a), 0);
    assert_int_equal(a.n, 3);
    assert_string_equal(a.v[0], "-c");
    assert_string_equal(a.v[1], "shared_buffers=1GB");
    assert_string_equal(a.v[2], "--fsync=off");
    argvec_clear(&a);

    /* refused: what pgolab manages ('-' and '_' alike, with or without dashes), bare
     * postgres names, single-dash words, empty */
    static const char *const bad_mysql[] = { "port=3306", "socket=/tmp/x", "--datadir=/x", "bind_address=0.0.0.0",
        "log-error=/x", "user=mysql", "loose-port=1", "PID_FILE=/x", "-O", "", "=1" };
    for (size_t i = 0; i < ARRAY_SIZE(bad_mysql); i++) {
        assert_int_equal(server_option_args(SERVER_MYSQL, bad_mysql[i], &a), -1);
        assert_int_equal(a.n, 0);
    }
    static const char *const bad_pgsql[] = { "port=5432", "listen_addresses=*", "unix-socket-directories=/x",
        "data_directory=/x", "logging_collector=on", "fsync", "-c" };
    for (size_t i = 0; i < ARRAY_SIZE(bad_pgsql); i++) {
        assert_int_equal(server_option_args(SERVER_PGSQL, bad_pgsql[i], &a), -1);
        assert_int_equal(a.n, 0);
    }
    argvec_clear(&a);
}

/* A variant's own options replace global ones of the same name ('-'/'_', case, dashes and
 * "loose-" alike) and come last; the others keep their order. */
static void test_options_merge(void **state)
{
    (void)state;
    assert_true(server_option_same("shared_buffers=1GB", "shared-buffers=2GB"));
    assert_true(server_option_same("--Innodb_Buffer_Pool_Size=1G", "innodb-buffer-pool-size"));
    assert_true(server_option_same("loose-innodb_flush_log_at_trx_commit=2",
                                   "innodb_flush_log_at_trx_commit=1"));
    assert_false(server_option_same("shared_buffers=1GB", "work_mem=1GB"));
    assert_false(server_option_same("=1", "=2"));

    char *global[] = { "shared_buffers=1GB", "work_mem=4MB", "fsync=off" };
    char *own[] = { "shared-buffers=256MB", "jit=off" };
    struct argvec a = ARGVEC_INIT;
    server_options_merge(global, 3, own, 2, &a);
    assert_int_equal(a.n, 4);
    assert_string_equal(a.v[0], "work_mem=4MB");
    assert_string_equal(a.v[1], "fsync=off");
    assert_string_equal(a.v[2], "shared-buffers=256MB");
    assert_string_equal(a.v[3], "jit=off");
    argvec_clear(&a);
    server_options_merge(global, 3, NULL, 0, &a);
    assert_int_equal(a.n, 3);
    assert_string_equal(a.v[0], "shared_buffers=1GB");
    argvec_clear(&a);
    server_options_merge(NULL, 0, own, 2, &a);
    assert_int_equal(a.n, 2);
    assert_string_equal(a.v[0], "shared-buffers=256MB");
    argvec_clear(&a);

    /* a message names the option as the user wrote it */
    assert_int_equal(server_option_args_as(SERVER_PGSQL, "fsync", "--variant-server-option=B:",
                                           &a), -1);
    assert_int_equal(a.n, 0);
}

static void test_parse_version(void **state)
{
    (void)state;
    char *v = NULL, *f = NULL;
    assert_int_equal(server_parse_version(SERVER_MYSQL,
        "/usr/sbin/mariadbd  Ver 10.11.19-MariaDB-0+deb12u1 for debian-linux-gnu on x86_64 (Debian 12)\n", &v, &f), 0);
    assert_string_equal(v, "10.11.19");
    assert_string_equal(f, "MariaDB");
    free(v);
    free(f);
    assert_int_equal(server_parse_version(SERVER_MYSQL,
        "/usr/sbin/mysqld  Ver 8.0.33 for Linux on x86_64 (MySQL Community Server - GPL)\n", &v, &f), 0);
    assert_string_equal(v, "8.0.33");
    assert_string_equal(f, "MySQL");
    free(v);
    free(f);
    assert_int_equal(server_parse_version(SERVER_PGSQL, "postgres (PostgreSQL) 15.20 (Debian 15.20-0+deb12u1)\n",
                                          &v, &f), 0);
    assert_string_equal(v, "15.20");
    assert_string_equal(f, "PostgreSQL");
    free(v);
    free(f);

    static const char *const not_mysql[] = {
        "/usr/bin/mariadb  Ver 15.1 Distrib 10.11.19-MariaDB, for debian-linux-gnu (x86_64) using  EditLine wrapper",
        "ls (GNU coreutils) 9.1", "postgres (PostgreSQL) 15.20", "", "mysqld Ver x.y", "mariadbd Ver 10" };
    for (size_t i = 0; i < ARRAY_SIZE(not_mysql); i++)
        assert_int_equal(server_parse_version(SERVER_MYSQL, not_mysql[i], &v, &f), -1);
    static const char *const not_pgsql[] = { "psql (PostgreSQL) 15.20", "initdb (PostgreSQL) 15.20",
        "/usr/sbin/mariadbd  Ver 10.11.19-MariaDB", "true (GNU coreutils) 9.1" };
    for (size_t i = 0; i < ARRAY_SIZE(not_pgsql); i++)
        assert_int_equal(server_parse_version(SERVER_PGSQL, not_pgsql[i], &v, &f), -1);
    assert_int_equal(server_parse_version(SERVER_PGSQL, NULL, &v, &f), -1);
}

/* ---------------------------------------------------------------- datadirs */

static void test_datadir_kind(void **state)
{
    (void)state;
    char *missing = sub("missing"), *file = sub("afile"), *empty = sub("empty"), *own = sub("own"),
         *junk = sub("junk"), *my = sub("my"), *pg = sub("pg"), *half = sub("half");
    assert_int_equal(server_datadir_kind(missing), DATADIR_MISSING);
    touch(tmpdir, "afile");
    assert_int_equal(server_datadir_kind(file), DATADIR_NOT_DIR);
    assert_int_equal(mkdir_p(empty), 0);
    assert_int_equal(server_datadir_kind(empty), DATADIR_EMPTY);
    assert_int_equal(mkdir_p(own), 0);
    touch(own, "pgolab-server.log");
    touch(own, "pgolab-server.json");
    touch(own, "pgolab-pg_hba.conf");
    assert_int_equal(server_datadir_kind(own), DATADIR_EMPTY);
    assert_int_equal(mkdir_p(junk), 0);
    touch(junk, "notes.txt");
    assert_int_equal(server_datadir_kind(junk), DATADIR_OTHER);
    char *mysql = path_join(my, "mysql");
    assert_int_equal(mkdir_p(mysql), 0);
    assert_int_equal(server_datadir_kind(my), DATADIR_OTHER); /* mysql/ alone is not enough */
    touch(my, "ibdata1");
    assert_int_equal(server_datadir_kind(my), DATADIR_MYSQL);
    char *global = path_join(pg, "global");
    assert_int_equal(mkdir_p(global), 0);
    assert_int_equal(server_datadir_kind(pg), DATADIR_OTHER);
    touch(pg, "PG_VERSION");
    assert_int_equal(server_datadir_kind(pg), DATADIR_PGSQL);
    assert_int_equal(mkdir_p(half), 0);
    touch(half, "PG_VERSION"); /* no global/ */
    assert_int_equal(server_datadir_kind(half), DATADIR_OTHER);
    free(mysql);
    free(global);
    free(missing);
    free(file);
    free(empty);
    free(own);
    free(junk);
    free(my);
    free(pg);
    free(half);
}

/* ---------------------------------------------------------------- state file, client side */

static void fake_server(struct server *s, const char *datadir)
{
    memset(s, 0, sizeof(*s));
    s->kind = SERVER_PGSQL;
    s->pid = 4242;
    s->starttime = 123456789ull;
    s->port = 54321;
    s->host = xstrdup("127.0.0.1");
    s->socket_dir = xstrdup(datadir);
    s->socket = xasprintf("%s/.s.PGSQL.54321", datadir);
    s->datadir = xstrdup(datadir);
    s->log = path_join(datadir, "pgolab-server.log");
    s->binary = xstrdup("/usr/lib/postgresql/15/bin/postgres");
    s->version = xstrdup("15.20");
    s->flavor = xstrdup("PostgreSQL");
    s->user = xstrdup("bench");
    s->db = xstrdup("benchdb");
    s->password = xstrdup("Very$ecret1");
    s->has_password = true;
    s->created_datadir = true;
}

static void test_state_roundtrip(void **state)
{
    (void)state;
    char *dir = sub("state");
    struct server s, r;
    struct strbuf file = STRBUF_INIT;
    assert_int_equal(mkdir_p(dir), 0);
    fake_server(&s, dir);
    assert_int_equal(server_state_write(&s), 0);
    char *path = path_join(dir, "pgolab-server.json");
    assert_int_equal(strbuf_read_file(&file, path), 0);
    assert_null(strstr(file.buf, "Very$ecret1"));
    assert_non_null(strstr(file.buf, "\"has_password\": true"));
    assert_int_equal(server_state_read(&r, dir), 0);
    assert_int_equal(r.kind, SERVER_PGSQL);
    assert_int_equal(r.pid, 4242);
    assert_true(r.starttime == 123456789ull);
    assert_int_equal(r.port, 54321);
    assert_string_equal(r.socket, s.socket);
    assert_string_equal(r.socket_dir, s.socket_dir);
    assert_string_equal(r.datadir, dir);
    assert_string_equal(r.log, s.log);
    assert_string_equal(r.binary, s.binary);
    assert_string_equal(r.version, "15.20");
    assert_string_equal(r.user, "bench");
    assert_string_equal(r.db, "benchdb");
    assert_string_equal(r.password, "");
    assert_true(r.has_password);
    assert_true(r.created_datadir);
    assert_false(r.keep_datadir);
    assert_false(r.child);
    /* no such process (or another one under that pid): gone */
    assert_int_equal(server_status(&r, NULL), SERVER_GONE);
    server_release(&r);
    assert_null(r.datadir);

    /* not a state file / missing */
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"hello\": 1}\n", f);
    fclose(f);
    assert_int_equal(server_state_read(&r, dir), -1);
    unlink(path);
    assert_int_equal(server_state_read(&r, dir), -1);

    /* server_stop of a server that is not there: no signal, the state file goes, and a
     * generated datadir too */
    assert_int_equal(server_state_write(&s), 0);
    s.pid = 0;
    assert_int_equal(server_stop(&s, 1), 0);
    assert_false(is_dir(dir));
    server_release(&s);
    strbuf_release(&file);
    free(path);
    free(dir);
}

static void test_client_args_env(void **state)
{
    (void)state;
    struct server s;
    struct argvec a = ARGVEC_INIT, e = ARGVEC_INIT;
    fake_server(&s, "/nowhere");
    assert_int_equal(server_client_args(&s, &a), 5);
    char *j = argvec_join(&a);
    assert_string_equal(j, "--db-driver=pgsql --pgsql-host=127.0.0.1 --pgsql-port=54321 --pgsql-user=bench "
                           "--pgsql-db=benchdb");
    assert_null(strstr(j, "ecret"));
    free(j);
    assert_int_equal(server_client_env(&s, &e), 1);
    assert_string_equal(e.v[0], "PGPASSWORD=Very$ecret1");
    argvec_clear(&a);
    argvec_clear(&e);
    s.kind = SERVER_MYSQL;
    assert_int_equal(server_client_env(&s, &e), 1);
    assert_string_equal(e.v[0], "MYSQL_PWD=Very$ecret1");
    argvec_clear(&e);
    free(s.password);
    s.password = xstrdup("");
    assert_int_equal(server_client_env(&s, &e), 0);
    assert_int_equal(server_client_args(&s, &a), 5);
    assert_string_equal(a.v[0], "--db-driver=mysql");
    assert_string_equal(a.v[2], "--mysql-port=54321");
    argvec_clear(&a);
    server_release(&s);
}

/* ---------------------------------------------------------------- a real server */

static void test_mysql_lifecycle(void **state)
{
    (void)state;
    if (access("/usr/sbin/mariadbd", X_OK) != 0)
        UNIT_SKIP("/usr/sbin/mariadbd (make deps installs mariadb-server)", NULL);
    char *opts[] = { "innodb_buffer_pool_size=32M" };
    struct server_config cfg = { .kind = SERVER_MYSQL, .options = opts, .noptions = 1, .start_timeout_s = 60 };
    struct server s;
    char *version = NULL;

    assert_int_equal(server_start(&s, &cfg), 0);
    assert_true(s.pid > 0);
    assert_true(s.child);
    assert_true(s.created_datadir);
    assert_int_equal(strncmp(s.datadir, "/dev/shm/pgolab-mysql.", 22), 0);
    assert_true(s.port > 0 && s.port < 65536);
    assert_string_equal(s.host, "127.0.0.1");
    assert_string_equal(s.user, "sbtest");
    assert_string_equal(s.db, "sbtest");
    assert_int_equal(kill(s.pid, 0), 0);
    assert_int_equal(server_status(&s, &version), SERVER_RUNNING);
    assert_non_null(version);
    assert_non_null(strstr(version, s.version));
    free(version);
    char *statefile = path_join(s.datadir, "pgolab-server.json");
    assert_true(is_file(statefile));

    /* a second server on the same datadir is refused, and the first one's state file stays */
    struct server t;
    struct server_config again = { .kind = SERVER_MYSQL, .datadir = s.datadir };
    assert_int_equal(server_start(&t, &again), -1);
    assert_null(t.datadir);
    assert_false(t.interrupted);
    assert_true(is_file(statefile));
    free(statefile);

    char *datadir = xstrdup(s.datadir);
    pid_t pid = s.pid;
    assert_int_equal(server_stop(&s, 60), 0); /* our child: its exit status was 0 */
    assert_int_equal(s.pid, 0);
    assert_false(kill(pid, 0) == 0);
    assert_false(is_dir(datadir));
    free(datadir);
    server_release(&s);

    /* a server that exits at once fails at once, leaving nothing but the log its message
     * named (kept at keep_log) */
    char *bad[] = { "no-such-server-option=1" };
    char *kept = sub("kept-server.log");
    struct server_config bcfg = { .kind = SERVER_MYSQL, .options = bad, .noptions = 1,
                                  .start_timeout_s = 60, .keep_log = kept };
    uint64_t t0 = now_ns();
    assert_int_equal(server_start(&s, &bcfg), -1);
    assert_true((now_ns() - t0) / 1e9 < 30);
    assert_int_equal(s.pid, 0);
    assert_null(s.datadir);
    struct strbuf log = STRBUF_INIT;
    assert_int_equal(strbuf_read_file(&log, kept), 0);
    assert_non_null(strstr(log.buf, "no-such-server-option"));
    strbuf_release(&log);
    free(kept);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kind_parse),
        cmocka_unit_test(test_option_args),
        cmocka_unit_test(test_options_merge),
        cmocka_unit_test(test_parse_version),
        cmocka_unit_test(test_datadir_kind),
        cmocka_unit_test(test_state_roundtrip),
        cmocka_unit_test(test_client_args_env),
        cmocka_unit_test(test_mysql_lifecycle),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
