/* flavor_pgsql: the PostgreSQL family of managed servers (struct server_flavor, see
 * server_flavor.h; the lifecycle is lifecycle.c's): the postgres binary (Debian's
 * /usr/lib/postgresql/N/bin, a prefix's bin/), its --version, initdb next to it, the postgres
 * command line (-D, -p, -c settings; --server-option=NAME=VALUE becomes -c NAME=VALUE), the
 * client-auth rules (DATADIR/pgolab-pg_hba.conf, rewritten at every start), the postgres superuser
 * over the socket for readiness and the benchmark role and database, a fast shutdown (SIGINT), and
 * after an unclean death the shared memory freed by a `postgres --single` start.
 * PostgreSQL refuses to run as root: as root, initdb and postgres run as the `postgres` user
 * (`nobody` if there is none; run_user below, handled by process.c) and the datadir is
 * theirs, mode 0700. */
#include "server/server_flavor.h"
#include "util/fs.h"
#include "util/libpq_api.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <errno.h>
#include <glob.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define HBA_FILE "pgolab-pg_hba.conf"
#define OPTION_HINT " (a postgres setting, passed as -c NAME=VALUE)"

/* ------------------------------------------------------------------ binary and options */

static int pgsql_parse_version(const char *text, char **version, char **flavor)
{
    static const char tag[] = "postgres (PostgreSQL) ";
    const char *p = strstr(text, tag);
    if (!p)
        return -1;
    return srv_take_version(p + strlen(tag), "PostgreSQL", version, flavor);
}

static int cmp_version_paths(const void *a, const void *b)
{
    return strverscmp(*(char *const *)a, *(char *const *)b);
}

/* /usr/lib/postgresql/15/bin/postgres, else the newest /usr/lib/postgresql/N/bin/postgres,
 * else PATH. */
static char *pgsql_find_binary(void)
{
    char *bin = NULL;
    glob_t g;
    if (srv_is_exec("/usr/lib/postgresql/15/bin/postgres")) {
        bin = xstrdup("/usr/lib/postgresql/15/bin/postgres");
    } else if (glob("/usr/lib/postgresql/*/bin/postgres", 0, NULL, &g) == 0) {
        qsort(g.gl_pathv, g.gl_pathc, sizeof(char *), cmp_version_paths);
        bin = xstrdup(g.gl_pathv[g.gl_pathc - 1]);
        globfree(&g);
    }
    if (!bin)
        bin = srv_find_in_path("postgres");
    return bin;
}

/* "NAME=VALUE" -> "-c", "NAME=VALUE" (a bare NAME is an error). */
static int pgsql_option_arg(const char *opt, const char *what, struct argvec *out)
{
    if (!strchr(opt, '='))
        return error("%s%s: expected NAME=VALUE" OPTION_HINT, what, opt);
    argvec_push(out, "-c");
    argvec_push(out, opt);
    return 0;
}

/* The role name goes into the hba file unquoted. */
static int pgsql_check_user(const char *user)
{
    if (user[strcspn(user, "\"\n\r\t ,")])
        return error("--pgsql-user=%s: a name without quotes, spaces or commas, please", user);
    return 0;
}

static bool pgsql_is_datadir(const char *dir)
{
    return srv_exists(dir, "PG_VERSION") && srv_has_dir(dir, "global");
}

/* ------------------------------------------------------------------ init and start */

/* initdb next to the postgres binary (PREFIX/bin/initdb for a prefix). */
static int pgsql_init_command(const struct server *s, const struct server_start_ctx *ctx,
                              struct argvec *argv, struct argvec *env)
{
    char *bindir = srv_dir_of(s->binary);
    char *tool = path_join(bindir, "initdb");
    (void)ctx;
    (void)env;
    free(bindir);
    if (!srv_is_exec(tool)) {
        error("no initdb next to %s (%s): cannot initialize %s", s->binary, tool, s->datadir);
        free(tool);
        return -1;
    }
    argvec_push(argv, tool);
    argvec_pushf(argv, "--pgdata=%s", s->datadir);
    argvec_pushv(argv, (const char *const[]){ "--username=postgres", "--auth=trust",
                                              "--encoding=UTF8", "--locale=C", NULL });
    free(tool);
    return 0;
}

/* The client-auth rules (PostgreSQL's -c hba_file), rewritten at every start so they follow
 * the configured password: the socket (only reachable through the datadir) trusts everyone;
 * over TCP from 127.0.0.1 the benchmark account needs its password when it has one (else
 * nothing), every other role a password (postgres has none: no superuser over TCP). */
static int write_hba(const struct server *s)
{
    char *path = path_join(s->datadir, HBA_FILE);
    FILE *f = fopen(path, "w");
    int rc = 0;
    if (!f) {
        rc = error("cannot write %s: %s", path, strerror(errno));
    } else {
        fprintf(f, "# written by pgolab at every `pgolab server start` (postgres -c hba_file=%s)\n"
                   "local all all trust\n"
                   "host all \"%s\" 127.0.0.1/32 %s\n"
                   "host all all 127.0.0.1/32 scram-sha-256\n",
                path, s->user, s->has_password ? "scram-sha-256" : "trust");
        if (fclose(f) != 0)
            rc = error("cannot write %s: %s", path, strerror(errno));
    }
    free(path);
    return rc;
}

static char *pgsql_socket_path(const char *socket_dir, int port)
{
    return xasprintf("%s/.s.PGSQL.%d", socket_dir, port);
}

static void pgsql_server_args(const struct server *s, const struct server_start_ctx *ctx,
                              struct argvec *argv)
{
    (void)ctx;
    argvec_push(argv, "-D");
    argvec_push(argv, s->datadir);
    argvec_push(argv, "-p");
    argvec_pushf(argv, "%d", s->port);
    argvec_push(argv, "-c");
    argvec_push(argv, "listen_addresses=127.0.0.1");
    argvec_push(argv, "-c");
    argvec_pushf(argv, "unix_socket_directories=%s", s->socket_dir);
    argvec_push(argv, "-c");
    argvec_push(argv, "logging_collector=off");
    argvec_push(argv, "-c");
    argvec_pushf(argv, "hba_file=%s/%s", s->datadir, HBA_FILE);
    argvec_push(argv, "-c");
    argvec_pushf(argv, "max_connections=%d", MAX_CONNECTIONS);
}

/* ------------------------------------------------------------------ connections and accounts */

static void pg_params(const struct server *s, const char *timeout, char *port, size_t portlen,
                      const char **keys, const char **vals)
{
    snprintf(port, portlen, "%d", s->port);
    const char *k[] = { "host", "port", "user", "dbname", "connect_timeout", "application_name",
                        NULL };
    const char *v[] = { s->socket_dir, port, "postgres", "postgres", timeout, "pgolab-server",
                        NULL };
    memcpy(keys, k, sizeof(k));
    memcpy(vals, v, sizeof(v));
}

static PGconn *pg_admin(const struct server *s, int timeout_s, struct strbuf *err)
{
    const char *keys[7], *vals[7];
    char port[16], to[16];
    snprintf(to, sizeof(to), "%d", timeout_s);
    pg_params(s, to, port, sizeof(port), keys, vals);
    PGconn *c = PQconnectdbParams(keys, vals, 0);
    if (!c || PQstatus(c) != CONNECTION_OK) {
        struct strbuf msg = STRBUF_INIT;
        strbuf_addstr(&msg, c ? PQerrorMessage(c) : "out of memory");
        strbuf_rtrim(&msg);
        strbuf_addstr(err, msg.buf);
        strbuf_release(&msg);
        PQfinish(c);
        return NULL;
    }
    return c;
}

static bool pgsql_ping(const struct server *s, char **version)
{
    struct strbuf err = STRBUF_INIT;
    const char *keys[7], *vals[7];
    char port[16], to[16];
    bool ok = false;
    snprintf(to, sizeof(to), "%d", srv_ping_timeout(s));
    pg_params(s, to, port, sizeof(port), keys, vals);
    if (PQpingParams(keys, vals, 0) == PQPING_OK) {
        ok = true;
        if (version) {
            PGconn *c = pg_admin(s, srv_ping_timeout(s), &err);
            const char *v = c ? PQparameterStatus(c, "server_version") : NULL;
            *version = v ? xstrdup(v) : NULL;
            PQfinish(c);
        }
    }
    strbuf_release(&err);
    return ok;
}

static int pg_exec(PGconn *c, const char *sql, const char *what)
{
    PGresult *r = PQexec(c, sql);
    int ok = r && (PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK);
    if (!ok) {
        struct strbuf msg = STRBUF_INIT;
        strbuf_addstr(&msg, PQerrorMessage(c));
        strbuf_rtrim(&msg);
        error("%s: %s", what ? what : sql, msg.buf);
        strbuf_release(&msg);
    }
    PQclear(r);
    return ok ? 0 : -1;
}

/* 1 = the query with one parameter returns a row, 0 = none, -1 = error. */
static int pg_exists(PGconn *c, const char *sql, const char *param)
{
    PGresult *r = PQexecParams(c, sql, 1, NULL, &param, NULL, NULL, 0);
    int rc = -1;
    if (r && PQresultStatus(r) == PGRES_TUPLES_OK)
        rc = PQntuples(r) > 0;
    else
        error("%s: %s", sql, PQerrorMessage(c));
    PQclear(r);
    return rc;
}

/* As postgres over the socket: role USER LOGIN with the password (sent as a SCRAM verifier
 * computed here: the password itself never reaches the server, its log or pg_stat), and
 * database DB owned by it. Existing ones are kept (the role gets the configured password). */
static int pg_setup(struct server *s, bool fresh)
{
    struct strbuf err = STRBUF_INIT;
    PGconn *c = pg_admin(s, SETUP_TIMEOUT_S, &err);
    char *role = NULL, *dbid = NULL, *lit = NULL, *sql = NULL;
    int rc = -1, have;
    (void)fresh; /* TCP access is pgolab's hba file: a fresh datadir has nothing to remove */
    if (!c) {
        error("cannot connect to PostgreSQL as postgres over %s: %s", s->socket_dir, err.buf);
        strbuf_release(&err);
        return -1;
    }
    strbuf_release(&err);
    role = PQescapeIdentifier(c, s->user, strlen(s->user));
    dbid = PQescapeIdentifier(c, s->db, strlen(s->db));
    if (!role || !dbid)
        goto out;
    if (s->has_password) {
        char *verifier = PQencryptPasswordConn(c, s->password, s->user, "scram-sha-256");
        if (!verifier) {
            error("cannot compute the password verifier: %s", PQerrorMessage(c));
            goto out;
        }
        char *l = PQescapeLiteral(c, verifier, strlen(verifier));
        PQfreemem(verifier);
        if (!l)
            goto out;
        lit = xstrdup(l);
        PQfreemem(l);
    } else {
        lit = xstrdup("NULL");
    }
    if ((have = pg_exists(c, "SELECT 1 FROM pg_roles WHERE rolname = $1", s->user)) < 0)
        goto out;
    sql = xasprintf("%s ROLE %s LOGIN PASSWORD %s", have ? "ALTER" : "CREATE", role, lit);
    char *what = xasprintf("%s ROLE %s", have ? "ALTER" : "CREATE", role);
    rc = pg_exec(c, sql, what);
    free(what);
    free(sql);
    sql = NULL;
    if (rc < 0)
        goto out;
    if ((have = pg_exists(c, "SELECT 1 FROM pg_database WHERE datname = $1", s->db)) < 0) {
        rc = -1;
        goto out;
    }
    if (!have) {
        sql = xasprintf("CREATE DATABASE %s OWNER %s", dbid, role);
        rc = pg_exec(c, sql, NULL);
    }
out:
    if (role)
        PQfreemem(role);
    if (dbid)
        PQfreemem(dbid);
    free(lit);
    free(sql);
    PQfinish(c);
    return rc;
}

/* ------------------------------------------------------------------ after a stop */

/* A PostgreSQL server that died without a clean shutdown (kill -9, a crash) leaves its shared
 * memory behind: a System V segment and /dev/shm/PostgreSQL.N dynamic segments, which only the
 * datadir (postmaster.pid, the datadir's inode) leads back to; once the datadir is removed
 * nothing can reclaim them. PostgreSQL frees a dead predecessor's segments itself when it
 * starts on the datadir (sysv_shmem.c, PGSharedMemoryCreate): a single-user start with no
 * input does that (and crash recovery), then exits. Run as the datadir's owner; output to the
 * log; a failure is a warning (the datadir is what matters to the caller). */
static void pg_reclaim_shmem(struct server *s)
{
    char *pidfile = path_join(s->datadir, "postmaster.pid");
    struct stat st;
    struct srv_run_as ra;
    bool dead = is_file(pidfile);
    if (dead) {
        /* PostgreSQL refuses while the dead postmaster's pid exists at all, even as a zombie
         * its new parent has not reaped yet: wait for that (bounded) */
        FILE *f = fopen(pidfile, "r");
        long old = 0;
        if (f && fscanf(f, "%ld", &old) == 1 && old > 0) {
            uint64_t deadline = srv_deadline_after(KILL_WAIT_S);
            while (kill((pid_t)old, 0) == 0 && now_ns() < deadline)
                srv_sleep_ms(20);
        }
        if (f)
            fclose(f);
    }
    free(pidfile);
    if (!dead || stat(s->datadir, &st) < 0)
        return;  /* a clean shutdown removes postmaster.pid */
    memset(&ra, 0, sizeof(ra));
    if (st.st_uid != geteuid()) {
        if (geteuid() != 0)
            return;  /* not ours to start; PostgreSQL would refuse anyway */
        ra.drop = true;
        ra.uid = st.st_uid;
        ra.gid = st.st_gid;
    }
    const char *const argv[] = { s->binary, "--single", "-D", s->datadir, "postgres", NULL };
    struct srv_spawn_opts so = { .argv = argv, .out_fd = -1, .ra = ra.drop ? &ra : NULL,
                                 .cwd = s->datadir };
    struct strbuf out = STRBUF_INIT;
    int rc = srv_run_capture(&so, &out, DEFAULT_TIMEOUT_S);
    srv_append_to_log(s, argv, &out);
    if (rc != 0)
        warning("%s died without a clean shutdown, and freeing its shared memory "
                "(postgres --single) failed (%s %d; see %s): /dev/shm/PostgreSQL.* segments may "
                "be left", s->datadir, rc > 128 ? "signal" : rc < 0 ? "code" : "exit status",
                rc > 128 ? rc - 128 : rc, s->log);
    strbuf_release(&out);
}

/* ------------------------------------------------------------------ the family */

const struct server_flavor server_pgsql_flavor = {
    .kind = SERVER_PGSQL, .name = "pgsql",
    .aliases = (const char *const[]){ "postgresql", "postgres", NULL },
    .label = "PostgreSQL", .package = "postgresql", .default_binary = "postgres",
    .default_flavor = "PostgreSQL", .find_binary = pgsql_find_binary,
    .binaries = (const char *const[]){ "postgres", NULL }, .binaries_label = "postgres",
    .parse_version = pgsql_parse_version,
    .datadir = DATADIR_PGSQL, .is_datadir = pgsql_is_datadir, .own_file = HBA_FILE,
    .private_datadir = true, /* initdb insists on mode 0700 */
    .init_command = pgsql_init_command,
    /* PostgreSQL refuses to run as root */
    .run_user = "postgres", .admin_user = "postgres", .check_user = pgsql_check_user,
    .create_account = pg_setup, .password_env = "PGPASSWORD",
    .managed_options = (const char *const[]){ "data-directory", "port", "unix-socket-directories",
        "listen-addresses", "logging-collector", NULL },
    .option_hint = OPTION_HINT, .option_arg = pgsql_option_arg,
    .socket_name_max = ".s.PGSQL.65535", .socket_path = pgsql_socket_path,
    .before_start = write_hba,
    .server_args = pgsql_server_args, .ping = pgsql_ping,
    /* fast shutdown: sessions are ended, then a clean checkpoint */
    .stop_signal = SIGINT, .shutdown_mark = "database system is shut down",
    .after_stop = pg_reclaim_shmem,
};
