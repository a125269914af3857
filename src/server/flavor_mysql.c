/* flavor_mysql: the MariaDB/MySQL family of managed servers (struct server_flavor, see
 * server_flavor.h; the lifecycle is lifecycle.c's): the mariadbd/mysqld binary (Debian's
 * /usr/sbin, a prefix's sbin/ or bin/), its --version (MariaDB or Oracle MySQL; the clients,
 * which say "Distrib", are refused), datadir init (mariadb-install-db found in the prefix,
 * its scripts/ or next to the binary, bootstrapping with this very server; mysqld
 * --initialize-insecure for Oracle MySQL), the server's command line (--no-defaults, an
 * install prefix as --basedir; --server-option=NAME=VALUE becomes --NAME=VALUE), root over
 * the socket for readiness and the benchmark database and account, a clean shutdown
 * (SIGTERM). As root, mariadbd/mysqld runs as root (--user=root): the datadir stays root's,
 * and an instrumented build can write its profile data next to its root-owned objects; it
 * is reachable only from this machine (127.0.0.1 and the socket in the datadir). */
#include "server/server_flavor.h"
#include "util/fs.h"
#include "util/libmariadb_api.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MYSQL_SOCKET "mysql.sock"

/* ------------------------------------------------------------------ binary and options */

static int my_parse_version(const char *text, char **version, char **flavor)
{
    const char *p = strstr(text, " Ver "), *v;
    if ((!strcasestr(text, "mariadb") && !strcasestr(text, "mysql")) ||
        strstr(text, "Distrib") || !p)
        return -1;
    v = p + 5;
    while (*v == ' ')
        v++;
    return srv_take_version(v, strcasestr(text, "mariadb") ? "MariaDB" : "MySQL", version, flavor);
}

/* version >= major.minor */
static bool version_ge(const char *v, int major, int minor)
{
    int a = 0, b = 0;
    if (!v || sscanf(v, "%d.%d", &a, &b) < 1)
        return false;
    return a > major || (a == major && b >= minor);
}

/* /usr/sbin/mariadbd, else /usr/sbin/mysqld, else mariadbd or mysqld on PATH. */
static char *my_find_binary(void)
{
    static const char *const fixed[] = { "/usr/sbin/mariadbd", "/usr/sbin/mysqld" };
    char *bin = NULL;
    for (size_t i = 0; i < ARRAY_SIZE(fixed) && !bin; i++)
        if (srv_is_exec(fixed[i]))
            bin = xstrdup(fixed[i]);
    if (!bin)
        bin = srv_find_in_path("mariadbd");
    if (!bin)
        bin = srv_find_in_path("mysqld");
    return bin;
}

/* "NAME=VALUE" -> "--NAME=VALUE", "NAME" -> "--NAME". */
static int my_option_arg(const char *opt, const char *what, struct argvec *out)
{
    (void)what; /* every NAME[=VALUE] is a mysqld option */
    argvec_pushf(out, "--%s", opt);
    return 0;
}

static bool my_is_datadir(const char *dir)
{
    return srv_has_dir(dir, "mysql") &&
           (srv_exists(dir, "ibdata1") || srv_exists(dir, "mysql.ibd") ||
            srv_exists(dir, "aria_log_control"));
}

/* ------------------------------------------------------------------ init and start */

/* mariadb-install-db belonging to the server: in the prefix (or the directory above the
 * binary's), next to the binary, else on PATH. *basedir = that prefix when it has the
 * system tables (share/mysql) and is not Debian's /usr (the script's own default). */
static char *find_install_db(const struct server *s, const struct server_start_ctx *ctx,
                             char **basedir)
{
    static const char *const names[] = { "mariadb-install-db", "mysql_install_db" };
    char *bindir = srv_dir_of(s->binary);
    char *base = ctx->prefix ? xstrdup(ctx->prefix) : srv_dir_of(bindir);
    char *found = NULL, *tables;
    for (size_t n = 0; n < ARRAY_SIZE(names) && !found; n++) {
        char *c[] = { xasprintf("%s/bin/%s", base, names[n]),
                      xasprintf("%s/scripts/%s", base, names[n]),
                      xasprintf("%s/%s", bindir, names[n]) };
        for (size_t i = 0; i < ARRAY_SIZE(c); i++) {
            if (!found && srv_is_exec(c[i]))
                found = abs_path(c[i]);
            free(c[i]);
        }
    }
    for (size_t n = 0; n < ARRAY_SIZE(names) && !found; n++)
        found = srv_find_in_path(names[n]);
    tables = xasprintf("%s/share/mysql/mysql_system_tables.sql", base);
    *basedir = (ctx->prefix || strcmp(base, "/usr")) && is_file(tables) ? xstrdup(base) : NULL;
    free(tables);
    free(base);
    free(bindir);
    return found;
}

/* MariaDB: mariadb-install-db, bootstrapping with this very server; Oracle MySQL (5.7+), which
 * has no install script: mysqld --initialize-insecure. */
static int my_init_command(const struct server *s, const struct server_start_ctx *ctx,
                           struct argvec *argv, struct argvec *env)
{
    if (!strcmp(s->flavor, "MySQL")) {
        argvec_push(argv, s->binary);
        argvec_pushv(argv, (const char *const[]){ "--no-defaults", "--initialize-insecure", NULL });
        argvec_pushf(argv, "--datadir=%s", s->datadir);
        argvec_pushf(argv, "--tmpdir=%s", s->datadir);
        if (ctx->prefix)
            argvec_pushf(argv, "--basedir=%s", ctx->prefix);
        if (geteuid() == 0)
            argvec_push(argv, "--user=root");
        return 0;
    }
    char *basedir = NULL;
    char *tool = find_install_db(s, ctx, &basedir);
    if (!tool)
        return error("no mariadb-install-db (or mysql_install_db) near %s or on PATH: "
                     "cannot initialize %s", s->binary, s->datadir);
    argvec_push(argv, tool);
    argvec_push(argv, "--no-defaults");
    if (version_ge(s->version, 10, 4))
        argvec_push(argv, "--auth-root-authentication-method=normal");
    argvec_pushf(argv, "--datadir=%s", s->datadir);
    /* The server's temporary files in its own datadir, not the shared /tmp: a MariaDB that
     * starts deletes every #sql* file in its tmpdir (stale temporary tables), and so broke
     * another private server's bootstrap running at the same time ("Error on delete of
     * '/tmp/#sql-temptable-...MAI'"); unrecognized options go on to the bootstrap server. */
    argvec_pushf(argv, "--tmpdir=%s", s->datadir);
    argvec_pushv(argv,
                 (const char *const[]){ "--skip-test-db", "--skip-name-resolve", "--force", NULL });
    if (basedir)
        argvec_pushf(argv, "--basedir=%s", basedir);
    if (geteuid() == 0)
        argvec_push(argv, "--user=root");
    argvec_pushf(env, "MYSQLD_BOOTSTRAP=%s", s->binary); /* bootstrap with this very server */
    free(basedir);
    free(tool);
    return 0;
}

static char *my_socket_path(const char *socket_dir, int port)
{
    (void)port;
    return path_join(socket_dir, MYSQL_SOCKET);
}

/* An install prefix is the server's --basedir (its share/ and plugins). */
static void my_server_args(const struct server *s, const struct server_start_ctx *ctx,
                           struct argvec *argv)
{
    argvec_push(argv, "--no-defaults");
    if (ctx->prefix)
        argvec_pushf(argv, "--basedir=%s", ctx->prefix);
    argvec_pushf(argv, "--datadir=%s", s->datadir);
    argvec_pushf(argv, "--port=%d", s->port);
    argvec_push(argv, "--bind-address=127.0.0.1");
    argvec_pushf(argv, "--socket=%s", s->socket);
    argvec_pushf(argv, "--pid-file=%s/mysqld.pid", s->datadir);
    argvec_pushf(argv, "--tmpdir=%s", s->datadir);  /* see my_init_command */
    argvec_pushf(argv, "--log-error=%s", s->log);
    argvec_push(argv, "--skip-log-bin");
    argvec_push(argv, "--skip-name-resolve");
    argvec_pushf(argv, "--max-connections=%d", MAX_CONNECTIONS);
    /* "loose-": a build without the X plugin (pgolab's mysql recipe: -DWITH_MYSQLX=OFF) does
     * not know the option, and mysqld then skips it with a warning instead of refusing it */
    if (!strcmp(s->flavor, "MySQL") && version_ge(s->version, 8, 0))
        argvec_push(argv, "--loose-mysqlx=OFF");
    /* Oracle MySQL refuses to start when its compiled-in import/export directory is missing
     * (Debian's build: /var/lib/mysql-files); a benchmark server imports nothing */
    if (!strcmp(s->flavor, "MySQL"))
        argvec_push(argv, "--secure-file-priv=NULL");
    if (geteuid() == 0)
        argvec_push(argv, "--user=root");
}

/* ------------------------------------------------------------------ connections and accounts */

static MYSQL *mysql_admin(const struct server *s, unsigned int timeout_s, struct strbuf *err)
{
    MYSQL *m = mysql_init(NULL);
    unsigned int proto = MYSQL_PROTOCOL_SOCKET;
    if (!m) {
        strbuf_addstr(err, "mysql_init failed");
        return NULL;
    }
    mysql_options(m, MYSQL_OPT_CONNECT_TIMEOUT, &timeout_s);
    mysql_options(m, MYSQL_OPT_READ_TIMEOUT, &timeout_s);
    mysql_options(m, MYSQL_OPT_WRITE_TIMEOUT, &timeout_s);
    mysql_options(m, MYSQL_OPT_PROTOCOL, &proto);
    if (!mysql_real_connect(m, "localhost", "root", "", NULL, 0, s->socket, 0)) {
        strbuf_addstr(err, mysql_error(m));
        mysql_close(m);
        return NULL;
    }
    return m;
}

static bool my_ping(const struct server *s, char **version)
{
    struct strbuf err = STRBUF_INIT;
    bool ok = false;
    MYSQL *m;
    if (srv_exists(s->socket_dir, srv_base_name(s->socket)) &&
        (m = mysql_admin(s, srv_ping_timeout(s), &err))) {
        if (version)
            *version = xstrdup(mysql_get_server_info(m));
        mysql_close(m);
        ok = true;
    }
    strbuf_release(&err);
    return ok;
}

static int my_exec(MYSQL *m, const char *sql, const char *what)
{
    if (mysql_real_query(m, sql, strlen(sql)) == 0) {
        MYSQL_RES *r = mysql_store_result(m);
        if (r)
            mysql_free_result(r);
        return 0;
    }
    /* what != NULL: a statement that holds a secret: name it, never echo the server's text */
    if (what)
        return error("%s failed (error %u)", what, mysql_errno(m));
    return error("%s: %s", sql, mysql_error(m));
}

/* 'text' for SQL, escaped by the connection (caller frees). */
static char *my_quote(MYSQL *m, const char *text)
{
    size_t n = strlen(text);
    char *buf = xmalloc(2 * n + 1);
    mysql_real_escape_string(m, buf, text, (unsigned long)n);
    char *q = xasprintf("'%s'", buf);
    free(buf);
    return q;
}

static char *my_ident(const char *name)
{
    struct strbuf sb = STRBUF_INIT;
    strbuf_addch(&sb, '`');
    for (const char *p = name; *p; p++) {
        if (*p == '`')
            strbuf_addch(&sb, '`');
        strbuf_addch(&sb, *p);
    }
    strbuf_addch(&sb, '`');
    return strbuf_detach(&sb);
}

/* As root over the socket: the database and the account at localhost (socket) and
 * 127.0.0.1 (TCP) with every privilege on the database. A fresh datadir also loses the
 * passwordless root accounts reachable over TCP (only root@localhost, via the socket in the
 * datadir, stays). */
static int mysql_setup(struct server *s, bool fresh)
{
    static const char *const hosts[] = { "localhost", "127.0.0.1" };
    struct strbuf err = STRBUF_INIT;
    MYSQL *m = mysql_admin(s, SETUP_TIMEOUT_S, &err);
    int rc = 0;
    if (!m) {
        error("cannot connect to %s as root over %s: %s", s->flavor, s->socket, err.buf);
        strbuf_release(&err);
        return -1;
    }
    strbuf_release(&err);
    static const char roots[] =
        "SELECT User, Host FROM mysql.user WHERE User = 'root' AND Host <> 'localhost'";
    if (fresh && mysql_real_query(m, roots, strlen(roots)) == 0) {
        MYSQL_RES *r = mysql_store_result(m);
        MYSQL_ROW row;
        struct argvec drops = ARGVEC_INIT;
        while (r && (row = mysql_fetch_row(r))) {
            char *h = my_quote(m, row[1] ? row[1] : "");
            argvec_pushf(&drops, "DROP USER IF EXISTS 'root'@%s", h);
            free(h);
        }
        if (r)
            mysql_free_result(r);
        for (int i = 0; i < drops.n && rc == 0; i++)
            rc = my_exec(m, drops.v[i], NULL);
        argvec_clear(&drops);
    }
    char *db = my_ident(s->db), *user = my_quote(m, s->user), *pw = my_quote(m, s->password);
    char *sql = xasprintf("CREATE DATABASE IF NOT EXISTS %s", db);
    if (rc == 0)
        rc = my_exec(m, sql, NULL);
    free(sql);
    for (size_t i = 0; i < ARRAY_SIZE(hosts) && rc == 0; i++) {
        char *what = xasprintf("setting the password of %s@'%s'", user, hosts[i]);
        sql = xasprintf("CREATE USER IF NOT EXISTS %s@'%s'", user, hosts[i]);
        rc = my_exec(m, sql, NULL);
        free(sql);
        if (rc == 0) {
            sql = xasprintf("ALTER USER %s@'%s' IDENTIFIED BY %s", user, hosts[i], pw);
            rc = my_exec(m, sql, what);
            memset(sql, 0, strlen(sql));
            free(sql);
        }
        if (rc == 0) {
            sql = xasprintf("GRANT ALL ON %s.* TO %s@'%s'", db, user, hosts[i]);
            rc = my_exec(m, sql, NULL);
            free(sql);
        }
        /* Oracle MySQL says which OS thread serves a connection only in
         * performance_schema.threads, which an account reads only when granted: instruction
         * mode matches callgrind's threads to the benchmark's connections with it */
        if (rc == 0 && !strcmp(s->flavor, "MySQL")) {
            sql = xasprintf("GRANT SELECT ON performance_schema.threads TO %s@'%s'", user,
                            hosts[i]);
            rc = my_exec(m, sql, NULL);
            free(sql);
        }
        free(what);
    }
    memset(pw, 0, strlen(pw));
    free(db);
    free(user);
    free(pw);
    mysql_close(m);
    return rc;
}

/* ------------------------------------------------------------------ the family */

const struct server_flavor server_mysql_flavor = {
    .kind = SERVER_MYSQL, .name = "mysql", .aliases = (const char *const[]){ "mariadb", NULL },
    .label = "MariaDB/MySQL", .package = "mariadb-server", .default_binary = "mariadbd",
    .default_flavor = "MariaDB", .find_binary = my_find_binary,
    .binaries = (const char *const[]){ "mariadbd", "mysqld", NULL },
    .binaries_label = "mariadbd or mysqld",
    .parse_version = my_parse_version,
    .datadir = DATADIR_MYSQL, .is_datadir = my_is_datadir, .init_command = my_init_command,
    /* no run_user: as root, the server runs as root (--user=root; see server.h) */
    .admin_user = "root", .create_account = mysql_setup, .password_env = "MYSQL_PWD",
    .managed_options = (const char *const[]){ "datadir", "port", "socket", "bind-address",
        "pid-file", "log-error", "user", "no-defaults", "defaults-file", "defaults-extra-file",
        NULL },
    .option_hint = "", .option_arg = my_option_arg,
    .socket_name_max = MYSQL_SOCKET, .socket_path = my_socket_path, .server_args = my_server_args,
    .ping = my_ping,
    .stop_signal = SIGTERM, .shutdown_mark = "Shutdown complete", /* a clean shutdown */
};
