/* cmd_server: `pgolab server start|stop|status|help`: private MariaDB/MySQL and PostgreSQL
 * instances for benchmarks. `start` leaves the server running and prints what a client needs;
 * `status` and `stop` find it again through the state file in its datadir (src/server/). */
#include "cli/cli.h"
#include "cli/shared.h"
#include "server/server.h"
#include "util/argvec.h"
#include "util/opts.h"
#include "util/util.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct opt_def server_options[] = {
    { "db-driver", OPT_STRING, NULL,
      "server to start: mysql (MariaDB or MySQL) or pgsql (PostgreSQL)" },
    { "server", OPT_STRING, NULL,
      "server binary: mariadbd/mysqld or postgres [Debian's /usr/sbin/mariadbd, "
      "/usr/lib/postgresql/15/bin/postgres]" },
    { "prefix", OPT_STRING, NULL,
      "or the server's install prefix (binary in PREFIX/sbin, bin or libexec)" },
    { "datadir", OPT_STRING, NULL,
      "data directory. start: missing or empty = initialize it; this server's data = start it as "
      "is; "
      "default: a new directory in /dev/shm. status, stop: the datadir start printed" },
    { "port", OPT_INT, "0", "TCP port on 127.0.0.1; 0 = a free one" },
    { "server-option", OPT_MULTI, NULL,
      "NAME=VALUE for the server: --NAME=VALUE for mariadbd/mysqld, -c NAME=VALUE for postgres" },
    { "keep-datadir", OPT_BOOL, "off",
      "stop (or start, for later): keep a datadir pgolab generated" },
    { "timeout", OPT_DOUBLE, "60",
      "seconds to wait for the server to start (init included) or to stop" },
    OPT_END
};

static const struct opt_def mysql_options[] = {
    { "mysql-user", OPT_STRING, "sbtest", "MySQL user to create" },
    { "mysql-password", OPT_STRING, "", "its password (none: sysbench's default)" },
    { "mysql-db", OPT_STRING, "sbtest", "MySQL database to create" },
    OPT_END
};

static const struct opt_def pgsql_options[] = {
    { "pgsql-user", OPT_STRING, "sbtest", "PostgreSQL user to create" },
    { "pgsql-password", OPT_STRING, "",
      "its password (none: TCP connections need none, so any --pgsql-password is accepted)" },
    { "pgsql-db", OPT_STRING, "sbtest", "PostgreSQL database to create" },
    OPT_END
};

static void usage(void)
{
    printf("Usage:\n"
           "  pgolab server start --db-driver=mysql|pgsql [options]   start a server, leave it "
           "running\n"
           "  pgolab server status --datadir=DIR                       running? (exit 0 yes, 1 "
           "no)\n"
           "  pgolab server status                                     list the running pgolab "
           "servers\n"
           "  pgolab server stop --datadir=DIR [--keep-datadir]        clean shutdown\n"
           "  pgolab server help\n\n"
           "A managed server is private: it listens on 127.0.0.1 and on a unix socket in its "
           "datadir,\n"
           "runs in its own session (a Ctrl-C in the terminal never reaches it), and has the "
           "account\n"
           "sysbench expects: user sbtest, no password, database sbtest. `start` prints the "
           "client\n"
           "options for `pgolab bench` and sysbench, the datadir and the log.\n\n");
    printf("Options:\n");
    opts_print_help(server_options);
    printf("\nAccount (start):\n");
    opts_print_help(mysql_options);
    opts_print_help(pgsql_options);
    printf("\nData directory:\n"
           "  Without --datadir, start creates a fresh one in /dev/shm (a RAM disk: no disk I/O in "
           "the\n"
           "  numbers) and prints it; stop removes it unless --keep-datadir. A --datadir that is "
           "missing\n"
           "  or empty is initialized; one that holds this server's data is started as it is (its "
           "tables\n"
           "  stay); anything else is refused and left alone. pgolab never removes a datadir you "
           "named.\n\n"
           "As root:\n"
           "  mariadbd/mysqld runs as root (--user=root). PostgreSQL refuses root: initdb and "
           "postgres run\n"
           "  as the 'postgres' user, so every directory above its datadir must be searchable by "
           "it.\n\n"
           "Shutdown:\n"
           "  stop sends SIGTERM (mariadbd/mysqld) or SIGINT (postgres: fast shutdown) and waits "
           "up to\n"
           "  --timeout seconds; only then SIGKILL, reported as an error (an instrumented PGO "
           "build writes\n"
           "  its profile data only on a clean exit).\n\n"
           "Examples:\n"
           "  pgolab server start --db-driver=mysql\n"
           "  pgolab bench --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=PORT "
           "oltp_read_write prepare\n"
           "  pgolab server start --db-driver=pgsql --datadir=/dev/shm/pg "
           "--server-option=shared_buffers=1GB\n"
           "  pgolab server stop --datadir=/dev/shm/pg\n");
}

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
    (void)sig;
    interrupted = 1;
}

static const char *kind_opt(enum server_kind k)
{
    return server_kind_name(k);
}

/* The lines a user needs: what runs where, and how to reach it. */
static void print_server(const struct server *s, const char *reported_version)
{
    const char *b = strrchr(s->binary, '/');
    struct argvec args = ARGVEC_INIT;
    char *client;

    printf("server:    %s %s (pid %d)\n", b ? b + 1 : s->binary, s->version ? s->version : "?",
           (int)s->pid);
    if (reported_version)
        printf("version:   %s %s\n", s->flavor, reported_version);
    printf("binary:    %s\n", s->binary);
    printf("datadir:   %s%s\n", s->datadir,
           !s->created_datadir ? ""
           : s->keep_datadir ? " (generated; kept by 'pgolab server stop')"
                             : " (generated; 'pgolab server stop' removes it unless "
                               "--keep-datadir)");
    printf("log:       %s\n", s->log);
    printf("port:      %s:%d\n", s->host, s->port);
    printf("socket:    %s\n", s->socket);
    printf("account:   user %s, database %s, %s\n", s->user, s->db,
           s->has_password ? "password set (not shown)" : "no password");
    server_client_args(s, &args);
    client = argvec_join(&args);
    printf("client:    %s\n", client);
    if (s->kind == SERVER_PGSQL)
        printf("           (or over the unix socket: --pgsql-host=%s --pgsql-port=%d)\n",
               s->socket_dir, s->port);
    else
        printf("           (or over the unix socket: --mysql-socket=%s)\n", s->socket);
    if (s->has_password)
        printf("           password: --%s-password=... or %s in the environment\n",
               kind_opt(s->kind), s->kind == SERVER_PGSQL ? "PGPASSWORD" : "MYSQL_PWD");
    free(client);
    argvec_clear(&args);
}

/* --mysql-* with --db-driver=pgsql (or the reverse) is a mistake worth naming. */
static int check_account_options(const struct opts *o, enum server_kind kind)
{
    const struct opt_def *other = kind == SERVER_PGSQL ? mysql_options : pgsql_options;
    for (const struct opt_def *d = other; d->name; d++)
        if (opt_is_set(o, d->name))
            return error("--%s is for --db-driver=%s (this is --db-driver=%s)", d->name,
                         kind == SERVER_PGSQL ? "mysql" : "pgsql", server_kind_name(kind));
    return 0;
}

static int do_start(struct opts *o)
{
    const char *driver = opt_str(o, "db-driver");
    struct server_config cfg = { 0 };
    struct server s;
    struct sigaction sa, old_int, old_term;
    int n, rc;

    if (!driver)
        return error("start needs --db-driver=mysql or --db-driver=pgsql");
    if (server_kind_parse(driver, &cfg.kind) < 0)
        return error("--db-driver=%s: expected mysql or pgsql", driver);
    if (check_account_options(o, cfg.kind) < 0)
        return -1;
    if (opt_int(o, "port") < 0 || opt_int(o, "port") > 65535)
        return error("--port=%s: expected 1..65535 (or 0 = a free one)", opt_str(o, "port"));
    if (opt_double(o, "timeout") <= 0)
        return error("--timeout=%s: expected a number of seconds > 0", opt_str(o, "timeout"));
    const char *p = kind_opt(cfg.kind);
    char *uname = xasprintf("%s-user", p), *pname = xasprintf("%s-password", p), *dname = xasprintf(
        "%s-db", p);
    cfg.server = opt_str(o, "server");
    cfg.prefix = opt_str(o, "prefix");
    cfg.datadir = opt_str(o, "datadir");
    cfg.options = (char **)opt_multi(o, "server-option", &n);
    cfg.noptions = n;
    cfg.user = opt_str(o, uname);
    cfg.password = opt_str(o, pname);
    cfg.db = opt_str(o, dname);
    cfg.port = (int)opt_int(o, "port");
    cfg.start_timeout_s = opt_double(o, "timeout");
    cfg.keep_datadir = opt_bool(o, "keep-datadir");

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    rc = server_start(&s, &cfg);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    free(uname);
    free(pname);
    free(dname);
    if (rc < 0 && s.interrupted)
        error("interrupted while starting the server: stopped it, nothing left running");
    if (rc < 0)
        return s.interrupted || interrupted ? 2 : -1;
    print_server(&s, NULL);
    printf("status:    pgolab server status --datadir=%s\n", s.datadir);
    printf("stop:      pgolab server stop --datadir=%s\n", s.datadir);
    server_release(&s);
    return 0;
}

static int need_datadir(const struct opts *o, const char *cmd)
{
    if (!opt_str(o, "datadir"))
        return error("%s needs --datadir=DIR (the datadir 'pgolab server start' printed)", cmd);
    return 0;
}

/* Options that only start takes are refused by status/stop rather than silently ignored. */
static int only_datadir(const struct opts *o, const char *cmd, bool keep_ok)
{
    static const char *const start_only[] = { "server", "prefix", "port", "server-option",
        "mysql-user",
        "mysql-password", "mysql-db", "pgsql-user", "pgsql-password", "pgsql-db" };
    for (size_t i = 0; i < ARRAY_SIZE(start_only); i++)
        if (opt_is_set(o, start_only[i]))
            return error("--%s is an option of 'pgolab server start', not of %s", start_only[i],
                         cmd);
    if (!keep_ok && opt_is_set(o, "keep-datadir"))
        return error("--keep-datadir is an option of start and stop, not of %s", cmd);
    return 0;
}

static int read_state(const struct opts *o, struct server *s)
{
    enum server_kind k;
    const char *driver = opt_str(o, "db-driver");
    if (server_state_read(s, opt_str(o, "datadir")) < 0)
        return -1;
    if (driver && (server_kind_parse(driver, &k) < 0 || k != s->kind)) {
        error("--db-driver=%s: the server in %s is --db-driver=%s", driver, s->datadir,
              server_kind_name(s->kind));
        server_release(s);
        return -1;
    }
    return 0;
}

/* One line per running server, with the commands that reach it. */
static void list_one(const struct server *s, void *ctx)
{
    const char *b = strrchr(s->binary, '/');
    (void)ctx;
    printf("%-6s %s %s, pid %d, %s:%d, datadir %s\n", server_kind_name(s->kind),
           b ? b + 1 : s->binary, s->version ? s->version : "?", (int)s->pid, s->host, s->port,
           s->datadir);
    printf("       stop: pgolab server stop --datadir=%s\n", s->datadir);
}

/* status without --datadir: the servers pgolab started that still run. 0 when there is one. */
static int list_servers(const struct opts *o)
{
    if (only_datadir(o, "status", false) < 0)
        return -1;
    if (opt_str(o, "db-driver"))
        return error("--db-driver without --datadir: status lists every pgolab server");
    int n = server_registry_list(list_one, NULL);
    if (n == 0) {
        char *dir = server_registry_dir();
        printf("no pgolab servers running (started by this user; registry %s)\n", dir);
        free(dir);
        return 1;
    }
    printf("%d pgolab server%s running; `pgolab server status --datadir=DIR` for one\n", n,
           n == 1 ? "" : "s");
    return 0;
}

static int do_status(struct opts *o)
{
    struct server s;
    char *version = NULL;
    int rc;
    if (!opt_str(o, "datadir"))
        return list_servers(o);
    if (only_datadir(o, "status", false) < 0 || read_state(o, &s) < 0)
        return -1;
    switch (server_status(&s, &version)) {
    case SERVER_RUNNING:
        printf("status:    running (accepting connections)\n");
        print_server(&s, version);
        rc = 0;
        break;
    case SERVER_STARTING:
        printf("status:    not accepting connections (pid %d is alive)\n", (int)s.pid);
        print_server(&s, NULL);
        rc = 1;
        break;
    default:
        printf("status:    not running (pid %d is gone)\n", (int)s.pid);
        printf("datadir:   %s\n", s.datadir);
        printf("log:       %s\n", s.log);
        rc = 1;
        break;
    }
    free(version);
    server_release(&s);
    return rc;
}

static int do_stop(struct opts *o)
{
    struct server s;
    enum server_state st;
    pid_t pid;
    int rc;
    if (need_datadir(o, "stop") < 0 || only_datadir(o, "stop", true) < 0 || read_state(o, &s) < 0)
        return -1;
    if (opt_bool(o, "keep-datadir"))
        s.keep_datadir = true;
    pid = s.pid;
    st = server_status(&s, NULL);
    if (st == SERVER_GONE)
        warning("%s (pid %d) was not running", s.binary, (int)pid);
    rc = server_stop(&s, opt_double(o, "timeout"));
    if (rc == 0) {
        const char *b = strrchr(s.binary, '/');
        if (st != SERVER_GONE)
            printf("stopped:   %s (pid %d), clean shutdown\n", b ? b + 1 : s.binary, (int)pid);
        if (s.created_datadir && !s.keep_datadir)
            printf("datadir:   %s removed\n", s.datadir);
        else
            printf("datadir:   %s kept\n", s.datadir);
    }
    server_release(&s);
    return rc;
}

int cmd_server(int argc, char **argv)
{
    const struct opt_def *tables[] = { server_options, mysql_options, pgsql_options };
    struct opts o;
    int rc = -1;

    if (cli_help(argc, argv, usage))
        return 0;
    opts_init(&o, tables, ARRAY_SIZE(tables));
    o.cmd = "server";
    if (opts_parse(&o, argc - 1, argv + 1) < 0) {
        opts_release(&o);
        return 1;
    }
    const char *cmd = o.nargs ? o.args[0] : NULL;
    if (!cmd) {
        error("a command is required: start, stop, status or help");
        opts_release(&o);
        return 1;
    }
    if (o.nargs > 1) {
        error("too many arguments: '%s' (expected: pgolab server start|stop|status [options])",
              o.args[1]);
    } else if (!strcmp(cmd, "start")) {
        rc = do_start(&o);
    } else if (!strcmp(cmd, "status")) {
        rc = do_status(&o);
    } else if (!strcmp(cmd, "stop")) {
        rc = do_stop(&o);
    } else {
        error("unknown command '%s' (expected start, stop, status or help)", cmd);
    }
    opts_release(&o);
    return rc < 0 ? 1 : rc;
}
