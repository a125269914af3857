/* server: managed MariaDB/MySQL and PostgreSQL instances (see server.h): binary checks,
 * datadir rules and init, a private start (process.c: fork + setsid [+ setuid], argv only),
 * readiness, the benchmark account, the state file (state.c), and a clean, bounded stop. */
#include "server/server_flavor.h"
#include "util/fmt.h"
#include "util/fs.h"
#include "util/signals.h"
#include "util/strbuf.h"
#include "util/subprocess.h"
#include "util/util.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <libpq-fe.h>
#include <limits.h>
#include <mysql.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define HBA_FILE "pgolab-pg_hba.conf"
#define MYSQL_SOCKET "mysql.sock"
#define PG_SOCKET_MAX ".s.PGSQL.65535"
#define MAX_CONNECTIONS 1000
#define PORT_ATTEMPTS 3          /* a picked port taken before the server binds it: retry */
#define PING_TIMEOUT_S 2         /* one readiness / status connection attempt */
#define SETUP_TIMEOUT_S 30       /* the account statements */
#define VERSION_TIMEOUT_S 10.0   /* BINARY --version */
#define TAIL_LINES 20
#define ERROR_LINES_MAX 10       /* error lines above a tail, printed before it */

/* ------------------------------------------------------------------ small helpers */

static const char *kind_label(enum server_kind k)
{
    return k == SERVER_PGSQL ? "PostgreSQL" : "MariaDB/MySQL";
}

const char *server_kind_name(enum server_kind kind)
{
    return kind == SERVER_PGSQL ? "pgsql" : "mysql";
}

int server_kind_parse(const char *name, enum server_kind *kind)
{
    if (!name)
        return -1;
    if (!strcmp(name, "mysql") || !strcmp(name, "mariadb")) {
        *kind = SERVER_MYSQL;
        return 0;
    }
    if (!strcmp(name, "pgsql") || !strcmp(name, "postgresql") || !strcmp(name, "postgres")) {
        *kind = SERVER_PGSQL;
        return 0;
    }
    return -1;
}

static bool is_exec(const char *p)
{
    return is_file(p) && access(p, X_OK) == 0;
}

char *srv_dir_of(const char *path)
{
    const char *sl = strrchr(path, '/');
    if (!sl)
        return xstrdup(".");
    if (sl == path)
        return xstrdup("/");
    return xstrndup(path, (size_t)(sl - path));
}

static const char *base_name(const char *path)
{
    const char *sl = strrchr(path, '/');
    return sl ? sl + 1 : path;
}

/* name looked up in PATH (absolute), or NULL. */
static char *find_in_path(const char *name)
{
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
    while (*path) {
        const char *c = strchr(path, ':');
        size_t len = c ? (size_t)(c - path) : strlen(path);
        if (len) {
            char *dir = xstrndup(path, len);
            char *p = path_join(dir, name);
            free(dir);
            if (is_exec(p)) {
                char *a = abs_path(p);
                free(p);
                return a;
            }
            free(p);
        }
        if (!c)
            break;
        path = c + 1;
    }
    return NULL;
}


/* The first non-empty line of text, trimmed, at most 120 bytes (caller frees). */
static char *first_line(const char *text)
{
    while (text && *text && isspace((unsigned char)*text))
        text++;
    if (!text || !*text)
        return NULL;
    size_t n = strcspn(text, "\r\n");
    while (n && isspace((unsigned char)text[n - 1]))
        n--;
    if (n > 120)
        return xasprintf("%.117s...", text);
    return xstrndup(text, n);
}

/* Last `lines` lines of text (a pointer into it). */
static const char *tail_of(const char *text, size_t len, int lines)
{
    size_t i = len;
    int seen = 0;
    while (i > 0 && (text[i - 1] == '\n' || text[i - 1] == ' '))
        i--;
    while (i > 0) {
        if (text[i - 1] == '\n' && ++seen == lines)
            break;
        i--;
    }
    return text + i;
}

static void print_tail(FILE *out, const char *title, const char *text, size_t len, int lines)
{
    struct strbuf sb = STRBUF_INIT;
    strbuf_add(&sb, text ? text : "", text ? len : 0);
    strbuf_rtrim(&sb);
    if (!sb.len) {
        fprintf(out, "---- %s: (empty)\n", title);
    } else {
        /* the cause is often far above the tail (mariadb-install-db prints the server's
         * "[ERROR] unknown option" first, then a page of advice): those lines first */
        const char *tail = tail_of(sb.buf, sb.len, lines);
        int shown = 0;
        for (const char *l = sb.buf; l < tail && shown < ERROR_LINES_MAX;) {
            const char *nl = memchr(l, '\n', (size_t)(tail - l));
            size_t n = nl ? (size_t)(nl - l) : (size_t)(tail - l);
            if (memmem(l, n, "ERROR", 5) || memmem(l, n, "FATAL", 5) || memmem(l, n, "PANIC", 5))
                fprintf(out, "%s%.*s\n", shown++ ? "" : "---- error lines before the tail:\n", (int)n, l);
            l += n + 1;
        }
        fprintf(out, "---- %s:\n%s\n---- end\n", title, tail);
    }
    strbuf_release(&sb);
    fflush(out);
}

/* The part of the log written since byte `from` (this start's lines). */
static void read_log_since(const char *path, off_t from, struct strbuf *out)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    char buf[65536];
    ssize_t n;
    if (fd < 0)
        return;
    if (lseek(fd, from, SEEK_SET) == from)
        while ((n = read(fd, buf, sizeof(buf))) > 0)
            strbuf_add(out, buf, (size_t)n);
    close(fd);
}

static void print_log_since(const struct server *s, off_t from)
{
    struct strbuf sb = STRBUF_INIT;
    char *title = xasprintf("last lines of %s", s->log);
    read_log_since(s->log, from, &sb);
    print_tail(stderr, title, sb.buf, sb.len, TAIL_LINES);
    free(title);
    strbuf_release(&sb);
}

void server_log_tail(const struct server *s, FILE *out, int lines)
{
    struct strbuf sb = STRBUF_INIT;
    char *title = xasprintf("last %d lines of %s", lines, s->log ? s->log : "(no log)");
    if (s->log)
        strbuf_read_file(&sb, s->log);
    print_tail(out, title, sb.buf, sb.len, lines);
    free(title);
    strbuf_release(&sb);
}



/* ------------------------------------------------------------------ binary and version */

int server_parse_version(enum server_kind kind, const char *text, char **version, char **flavor)
{
    const char *v, *fl;
    size_t n = 0;
    if (!text)
        return -1;
    if (kind == SERVER_PGSQL) {
        static const char tag[] = "postgres (PostgreSQL) ";
        const char *p = strstr(text, tag);
        if (!p)
            return -1;
        v = p + strlen(tag);
        fl = "PostgreSQL";
    } else {
        const char *p = strstr(text, " Ver ");
        if ((!strcasestr(text, "mariadb") && !strcasestr(text, "mysql")) || strstr(text, "Distrib") || !p)
            return -1;
        v = p + 5;
        while (*v == ' ')
            v++;
        fl = strcasestr(text, "mariadb") ? "MariaDB" : "MySQL";
    }
    while (isdigit((unsigned char)v[n]) || (v[n] == '.' && isdigit((unsigned char)v[n + 1])))
        n++;
    if (!n || !memchr(v, '.', n))
        return -1;
    *version = xstrndup(v, n);
    *flavor = xstrdup(fl);
    return 0;
}

/* version >= major.minor */
static bool version_ge(const char *v, int major, int minor)
{
    int a = 0, b = 0;
    if (!v || sscanf(v, "%d.%d", &a, &b) < 1)
        return false;
    return a > major || (a == major && b >= minor);
}

static int cmp_version_paths(const void *a, const void *b)
{
    return strverscmp(*(char *const *)a, *(char *const *)b);
}

/* The server binary for cfg (absolute, caller frees) and how to name it in messages
 * (*label, caller frees). -1 with a message. */
static int resolve_binary(const struct server_config *cfg, char **bin, char **label)
{
    *bin = *label = NULL;
    if (cfg->server && cfg->prefix)
        return error("--server=%s and --prefix=%s: give one of them", cfg->server, cfg->prefix);
    if (cfg->server) {
        struct stat st;
        if (!*cfg->server)
            return error("--server=: empty path");
        if (stat(cfg->server, &st) < 0)
            return error("--server=%s: %s", cfg->server, errno == ENOENT ? "no such file" : strerror(errno));
        if (S_ISDIR(st.st_mode))
            return error("--server=%s: is a directory (an install prefix? use --prefix=%s)", cfg->server,
                         cfg->server);
        if (!S_ISREG(st.st_mode) || access(cfg->server, X_OK) < 0)
            return error("--server=%s: not an executable file", cfg->server);
        *bin = abs_path(cfg->server);
        *label = xasprintf("--server=%s", cfg->server);
        return 0;
    }
    if (cfg->prefix) {
        static const char *const mysql_names[] = { "mariadbd", "mysqld", NULL };
        static const char *const pgsql_names[] = { "postgres", NULL };
        static const char *const dirs[] = { "sbin", "bin", "libexec" };
        const char *const *names = cfg->kind == SERVER_PGSQL ? pgsql_names : mysql_names;
        if (!is_dir(cfg->prefix))
            return error("--prefix=%s: no such directory", cfg->prefix);
        for (const char *const *n = names; *n; n++)
            for (size_t d = 0; d < ARRAY_SIZE(dirs); d++) {
                char *p = xasprintf("%s/%s/%s", cfg->prefix, dirs[d], *n);
                if (is_exec(p)) {
                    *bin = abs_path(p);
                    *label = xasprintf("--prefix=%s (%s)", cfg->prefix, p);
                    free(p);
                    return 0;
                }
                free(p);
            }
        return error("--prefix=%s: no %s under %s/sbin, bin or libexec", cfg->prefix,
                     cfg->kind == SERVER_PGSQL ? "postgres" : "mariadbd or mysqld", cfg->prefix);
    }
    if (cfg->kind == SERVER_MYSQL) {
        static const char *const fixed[] = { "/usr/sbin/mariadbd", "/usr/sbin/mysqld" };
        for (size_t i = 0; i < ARRAY_SIZE(fixed) && !*bin; i++)
            if (is_exec(fixed[i]))
                *bin = xstrdup(fixed[i]);
        if (!*bin)
            *bin = find_in_path("mariadbd");
        if (!*bin)
            *bin = find_in_path("mysqld");
    } else {
        glob_t g;
        if (is_exec("/usr/lib/postgresql/15/bin/postgres")) {
            *bin = xstrdup("/usr/lib/postgresql/15/bin/postgres");
        } else if (glob("/usr/lib/postgresql/*/bin/postgres", 0, NULL, &g) == 0) {
            qsort(g.gl_pathv, g.gl_pathc, sizeof(char *), cmp_version_paths);
            *bin = xstrdup(g.gl_pathv[g.gl_pathc - 1]);
            globfree(&g);
        }
        if (!*bin)
            *bin = find_in_path("postgres");
    }
    if (!*bin)
        return error("no %s server found (install %s, or give --server=PATH or --prefix=DIR)",
                     kind_label(cfg->kind), cfg->kind == SERVER_PGSQL ? "postgresql" : "mariadb-server");
    *label = xstrdup(*bin);
    return 0;
}

/* `BINARY --version` must name a server of the right kind: sets s->version and s->flavor. */
static int check_version(struct server *s, const char *label)
{
    const char *argv[] = { s->binary, "--version", NULL };
    struct strbuf out = STRBUF_INIT;
    struct subprocess sp = { .argv = argv, .out = &out, .quiet_stderr = 1, .timeout_s = VERSION_TIMEOUT_S };
    int rc = subprocess_run(&sp);
    if (rc < 0 || srv_got_signal) { /* interrupted: server_start says so */
        strbuf_release(&out);
        return -1;
    }
    if (server_parse_version(s->kind, out.buf, &s->version, &s->flavor) < 0) {
        char *line = first_line(out.buf);
        if (line)
            error("%s: not a %s server (its --version says '%s')", label, kind_label(s->kind), line);
        else
            error("%s: not a %s server (its --version printed nothing, %s %d)", label, kind_label(s->kind),
                  rc > 128 ? "killed by signal" : "exit status", rc > 128 ? rc - 128 : rc);
        free(line);
        strbuf_release(&out);
        return -1;
    }
    strbuf_release(&out);
    return 0;
}

/* ------------------------------------------------------------------ options */

/* Canonical option name for comparisons: lower case, '_' -> '-', no leading dashes, no
 * MariaDB "loose-" prefix, up to '='. Caller frees. */
static char *option_name(const char *opt)
{
    while (*opt == '-')
        opt++;
    if (!strncasecmp(opt, "loose-", 6) || !strncasecmp(opt, "loose_", 6))
        opt += 6;
    size_t n = strcspn(opt, "=");
    char *name = xstrndup(opt, n);
    for (char *p = name; *p; p++)
        *p = *p == '_' ? '-' : (char)tolower((unsigned char)*p);
    return name;
}

int server_option_args(enum server_kind kind, const char *opt, struct argvec *out)
{
    static const char *const mysql_managed[] = { "datadir", "port", "socket", "bind-address",
        "pid-file", "log-error", "user", "no-defaults", "defaults-file", "defaults-extra-file", NULL };
    static const char *const pgsql_managed[] = { "data-directory", "port", "unix-socket-directories",
        "listen-addresses", "logging-collector", NULL };
    const char *const *managed = kind == SERVER_PGSQL ? pgsql_managed : mysql_managed;
    bool pass = !strncmp(opt, "--", 2);
    char *name;

    if (!*opt || (*opt == '-' && !pass))
        return error("--server-option=%s: expected NAME=VALUE%s", opt,
                     kind == SERVER_PGSQL ? " (a postgres setting, passed as -c NAME=VALUE)" : "");
    name = option_name(opt);
    if (!*name) {
        free(name);
        return error("--server-option=%s: expected NAME=VALUE", opt);
    }
    for (const char *const *m = managed; *m; m++)
        if (!strcmp(name, *m)) {
            error("--server-option=%s: pgolab sets that itself (see --datadir and --port)", opt);
            free(name);
            return -1;
        }
    free(name);
    if (pass) {
        argvec_push(out, opt);
    } else if (kind == SERVER_PGSQL) {
        if (!strchr(opt, '='))
            return error("--server-option=%s: expected NAME=VALUE (a postgres setting, passed as -c NAME=VALUE)", opt);
        argvec_push(out, "-c");
        argvec_push(out, opt);
    } else {
        argvec_pushf(out, "--%s", opt);
    }
    return 0;
}

/* ------------------------------------------------------------------ datadir */

static bool own_file(const char *name)
{
    return !strncmp(name, "pgolab-server.", 14) || !strcmp(name, HBA_FILE);
}

static bool exists(const char *dir, const char *name)
{
    char *p = path_join(dir, name);
    struct stat st;
    bool r = lstat(p, &st) == 0;
    free(p);
    return r;
}

static bool has_dir(const char *dir, const char *name)
{
    char *p = path_join(dir, name);
    bool r = is_dir(p);
    free(p);
    return r;
}

enum server_datadir server_datadir_kind(const char *dir)
{
    struct stat st;
    struct dirent *e;
    bool empty = true;
    DIR *d;
    if (stat(dir, &st) < 0)
        return errno == ENOENT ? DATADIR_MISSING : DATADIR_OTHER;
    if (!S_ISDIR(st.st_mode))
        return DATADIR_NOT_DIR;
    if (!(d = opendir(dir)))
        return DATADIR_OTHER;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || own_file(e->d_name))
            continue;
        empty = false;
        break;
    }
    closedir(d);
    if (empty)
        return DATADIR_EMPTY;
    if (exists(dir, "PG_VERSION") && has_dir(dir, "global"))
        return DATADIR_PGSQL;
    if (has_dir(dir, "mysql") &&
        (exists(dir, "ibdata1") || exists(dir, "mysql.ibd") || exists(dir, "aria_log_control")))
        return DATADIR_MYSQL;
    return DATADIR_OTHER;
}

/* Remove everything inside dir (a directory that was empty before pgolab initialized it). */
static void empty_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    if (!d)
        return;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char *p = path_join(dir, e->d_name);
        remove_tree(p);
        free(p);
    }
    closedir(d);
}

/* ------------------------------------------------------------------ connections */

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

static void pg_params(const struct server *s, const char *timeout, char *port, size_t portlen,
                      const char **keys, const char **vals)
{
    snprintf(port, portlen, "%d", s->port);
    const char *k[] = { "host", "port", "user", "dbname", "connect_timeout", "application_name", NULL };
    const char *v[] = { s->socket_dir, port, "postgres", "postgres", timeout, "pgolab-server", NULL };
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

/* Does the server accept connections as the administrator? */
static bool server_ping(const struct server *s, char **version)
{
    struct strbuf err = STRBUF_INIT;
    bool ok = false;
    if (version)
        *version = NULL;
    if (s->kind == SERVER_MYSQL) {
        MYSQL *m;
        if (exists(s->socket_dir, base_name(s->socket)) && (m = mysql_admin(s, PING_TIMEOUT_S, &err))) {
            if (version)
                *version = xstrdup(mysql_get_server_info(m));
            mysql_close(m);
            ok = true;
        }
    } else {
        const char *keys[7], *vals[7];
        char port[16], to[16];
        snprintf(to, sizeof(to), "%d", PING_TIMEOUT_S);
        pg_params(s, to, port, sizeof(port), keys, vals);
        if (PQpingParams(keys, vals, 0) == PQPING_OK) {
            ok = true;
            if (version) {
                PGconn *c = pg_admin(s, PING_TIMEOUT_S, &err);
                const char *v = c ? PQparameterStatus(c, "server_version") : NULL;
                *version = v ? xstrdup(v) : NULL;
                PQfinish(c);
            }
        }
    }
    strbuf_release(&err);
    return ok;
}

/* ------------------------------------------------------------------ accounts */

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
    static const char roots[] = "SELECT User, Host FROM mysql.user WHERE User = 'root' AND Host <> 'localhost'";
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
        free(what);
    }
    memset(pw, 0, strlen(pw));
    free(db);
    free(user);
    free(pw);
    mysql_close(m);
    return rc;
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
static int pg_setup(struct server *s)
{
    struct strbuf err = STRBUF_INIT;
    PGconn *c = pg_admin(s, SETUP_TIMEOUT_S, &err);
    char *role = NULL, *dbid = NULL, *lit = NULL, *sql = NULL;
    int rc = -1, have;
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

/* ------------------------------------------------------------------ ports and sockets */

static int pick_port(void)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = 0 };
    socklen_t len = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), port = -1;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0)
        return error("socket: %s", strerror(errno));
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 && getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    else
        error("cannot find a free port on 127.0.0.1: %s", strerror(errno));
    close(fd);
    return port;
}

/* 0 = port is free on 127.0.0.1 (binding it as a server would, SO_REUSEADDR), else errno. */
static int port_check(int port)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1, e = 0;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0)
        return errno;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
        e = errno;
    close(fd);
    return e;
}

/* The socket lives in the datadir unless its path would not fit sun_path: then in a
 * /tmp/pgolab-sock.XXXXXX directory of its own (given to the server's user). */
static int setup_socket_dir(struct server *s, const struct srv_run_as *ra)
{
    size_t max = sizeof(((struct sockaddr_un *)0)->sun_path) - 1;
    size_t need = strlen(s->datadir) + 1 + strlen(s->kind == SERVER_PGSQL ? PG_SOCKET_MAX : MYSQL_SOCKET);
    if (need <= max) {
        s->socket_dir = xstrdup(s->datadir);
        return 0;
    }
    char tmpl[] = "/tmp/pgolab-sock.XXXXXX";
    if (!mkdtemp(tmpl))
        return error("cannot create a socket directory in /tmp: %s", strerror(errno));
    s->socket_dir = xstrdup(tmpl);
    s->socket_dir_private = true;
    return srv_give_dir(s->socket_dir, ra);
}

static void set_socket_path(struct server *s)
{
    free(s->socket);
    if (s->kind == SERVER_PGSQL)
        s->socket = xasprintf("%s/.s.PGSQL.%d", s->socket_dir, s->port);
    else
        s->socket = path_join(s->socket_dir, MYSQL_SOCKET);
}

/* ------------------------------------------------------------------ init and start */

struct start_ctx {
    const struct server_config *cfg;
    struct srv_run_as ra;
    struct argvec user_args;  /* translated --server-option values */
    char *basedir;            /* MariaDB/MySQL install prefix, or NULL */
    double timeout_s;
};

/* mariadb-install-db belonging to the server: in the prefix (or the directory above the
 * binary's), next to the binary, else on PATH. *basedir = that prefix when it has the
 * system tables (share/mysql) and is not Debian's /usr (the script's own default). */
static char *find_install_db(const struct server *s, const struct server_config *cfg, char **basedir)
{
    static const char *const names[] = { "mariadb-install-db", "mysql_install_db" };
    char *bindir = srv_dir_of(s->binary);
    char *base = cfg->prefix ? abs_path(cfg->prefix) : srv_dir_of(bindir);
    char *found = NULL, *tables;
    for (size_t n = 0; n < ARRAY_SIZE(names) && !found; n++) {
        char *c[] = { xasprintf("%s/bin/%s", base, names[n]), xasprintf("%s/scripts/%s", base, names[n]),
                      xasprintf("%s/%s", bindir, names[n]) };
        for (size_t i = 0; i < ARRAY_SIZE(c); i++) {
            if (!found && is_exec(c[i]))
                found = abs_path(c[i]);
            free(c[i]);
        }
    }
    for (size_t n = 0; n < ARRAY_SIZE(names) && !found; n++)
        found = find_in_path(names[n]);
    tables = xasprintf("%s/share/mysql/mysql_system_tables.sql", base);
    *basedir = (cfg->prefix || strcmp(base, "/usr")) && is_file(tables) ? xstrdup(base) : NULL;
    free(tables);
    free(base);
    free(bindir);
    return found;
}

/* Keep a helper tool's output in the server log, under a "---- pgolab: COMMAND" line. */
static void append_to_log(const struct server *s, const char *const *argv, const struct strbuf *out)
{
    int fd = s->log ? open(s->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644) : -1;
    if (fd < 0)
        return;
    char *cmd = subprocess_argv_str(argv);
    char *head = xasprintf("---- pgolab: %s\n", cmd);
    if (write(fd, head, strlen(head)) < 0 || (out->len && write(fd, out->buf, out->len) < 0))
        warning("cannot write %s: %s", s->log, strerror(errno));
    free(head);
    free(cmd);
    close(fd);
}

/* Initialize an empty datadir; the tool's output goes to the log. */
static int init_datadir(struct server *s, struct start_ctx *ctx)
{
    struct argvec argv = ARGVEC_INIT, env = ARGVEC_INIT;
    struct strbuf out = STRBUF_INIT;
    struct srv_spawn_opts so = { .out_fd = -1, .ra = &ctx->ra, .cwd = s->datadir };
    char *tool = NULL;
    int rc;

    if (s->kind == SERVER_PGSQL) {
        char *bindir = srv_dir_of(s->binary);
        tool = path_join(bindir, "initdb");
        free(bindir);
        if (!is_exec(tool)) {
            error("no initdb next to %s (%s): cannot initialize %s", s->binary, tool, s->datadir);
            free(tool);
            return -1;
        }
        argvec_push(&argv, tool);
        argvec_pushf(&argv, "--pgdata=%s", s->datadir);
        argvec_pushv(&argv, (const char *const[]){ "--username=postgres", "--auth=trust", "--encoding=UTF8",
                                                   "--locale=C", NULL });
    } else if (!strcmp(s->flavor, "MySQL")) {
        /* Oracle MySQL (5.7+) has no install script */
        tool = xstrdup(s->binary);
        argvec_push(&argv, tool);
        argvec_pushv(&argv, (const char *const[]){ "--no-defaults", "--initialize-insecure", NULL });
        argvec_pushf(&argv, "--datadir=%s", s->datadir);
        if (ctx->basedir)
            argvec_pushf(&argv, "--basedir=%s", ctx->basedir);
        if (geteuid() == 0)
            argvec_push(&argv, "--user=root");
    } else {
        char *basedir = NULL;
        tool = find_install_db(s, ctx->cfg, &basedir);
        if (!tool) {
            error("no mariadb-install-db (or mysql_install_db) near %s or on PATH: cannot initialize %s",
                  s->binary, s->datadir);
            return -1;
        }
        argvec_push(&argv, tool);
        argvec_push(&argv, "--no-defaults");
        if (version_ge(s->version, 10, 4))
            argvec_push(&argv, "--auth-root-authentication-method=normal");
        argvec_pushf(&argv, "--datadir=%s", s->datadir);
        argvec_pushv(&argv, (const char *const[]){ "--skip-test-db", "--skip-name-resolve", "--force", NULL });
        if (basedir)
            argvec_pushf(&argv, "--basedir=%s", basedir);
        if (geteuid() == 0)
            argvec_push(&argv, "--user=root");
        argvec_pushf(&env, "MYSQLD_BOOTSTRAP=%s", s->binary); /* bootstrap with this very server */
        free(basedir);
    }
    so.argv = argvec_argv(&argv);
    so.env = env.n ? argvec_argv(&env) : NULL;
    rc = srv_run_capture(&so, &out, ctx->timeout_s);
    append_to_log(s, argvec_argv(&argv), &out);
    if (rc != 0 && rc != -1 && rc != -3) {
        char *title = xasprintf("output of %s", base_name(tool));
        if (rc == -2)
            error("initializing %s with %s: no result within %g s", s->datadir, base_name(tool), ctx->timeout_s);
        else
            error("initializing %s with %s failed (%s %d)", s->datadir, base_name(tool),
                  rc > 128 ? "signal" : "exit status", rc > 128 ? rc - 128 : rc);
        print_tail(stderr, title, out.buf, out.len, TAIL_LINES);
        free(title);
    }
    strbuf_release(&out);
    argvec_clear(&argv);
    argvec_clear(&env);
    free(tool);
    return rc == 0 ? 0 : rc == -3 ? -3 : -1;
}

/* One attempt on s->port: spawn the server and wait until it accepts connections.
 * 0 ready; 1 the port was taken (the server exited; retry with another); -1 failed (message
 * printed, the server may still run: the caller stops it); -3 interrupted. */
static int start_once(struct server *s, struct start_ctx *ctx)
{
    struct argvec argv = ARGVEC_INIT;
    struct srv_spawn_opts so = { .ra = &ctx->ra, .cwd = s->datadir };
    if (ctx->cfg->stop_with_parent)
        so.pdeathsig = s->kind == SERVER_PGSQL ? SIGINT : SIGTERM;
    uint64_t deadline = srv_deadline_after(ctx->timeout_s);
    off_t log_start;
    int fd;

    set_socket_path(s);
    argvec_push(&argv, s->binary);
    if (s->kind == SERVER_MYSQL) {
        argvec_push(&argv, "--no-defaults");
        if (ctx->basedir)
            argvec_pushf(&argv, "--basedir=%s", ctx->basedir);
        argvec_pushf(&argv, "--datadir=%s", s->datadir);
        argvec_pushf(&argv, "--port=%d", s->port);
        argvec_push(&argv, "--bind-address=127.0.0.1");
        argvec_pushf(&argv, "--socket=%s", s->socket);
        argvec_pushf(&argv, "--pid-file=%s/mysqld.pid", s->datadir);
        argvec_pushf(&argv, "--log-error=%s", s->log);
        argvec_push(&argv, "--skip-log-bin");
        argvec_push(&argv, "--skip-name-resolve");
        argvec_pushf(&argv, "--max-connections=%d", MAX_CONNECTIONS);
        if (!strcmp(s->flavor, "MySQL") && version_ge(s->version, 8, 0))
            argvec_push(&argv, "--mysqlx=OFF");
        if (geteuid() == 0)
            argvec_push(&argv, "--user=root");
    } else {
        argvec_push(&argv, "-D");
        argvec_push(&argv, s->datadir);
        argvec_push(&argv, "-p");
        argvec_pushf(&argv, "%d", s->port);
        argvec_push(&argv, "-c");
        argvec_push(&argv, "listen_addresses=127.0.0.1");
        argvec_push(&argv, "-c");
        argvec_pushf(&argv, "unix_socket_directories=%s", s->socket_dir);
        argvec_push(&argv, "-c");
        argvec_push(&argv, "logging_collector=off");
        argvec_push(&argv, "-c");
        argvec_pushf(&argv, "hba_file=%s/%s", s->datadir, HBA_FILE);
        argvec_push(&argv, "-c");
        argvec_pushf(&argv, "max_connections=%d", MAX_CONNECTIONS);
    }
    for (int i = 0; i < ctx->user_args.n; i++)
        argvec_push(&argv, ctx->user_args.v[i]);

    fd = open(s->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
        argvec_clear(&argv);
        return error("cannot open the log %s: %s", s->log, strerror(errno));
    }
    log_start = lseek(fd, 0, SEEK_END);
    {
        char *cmd = subprocess_argv_str(argvec_argv(&argv));
        char *head = xasprintf("---- pgolab: %s\n", cmd);
        if (write(fd, head, strlen(head)) < 0)
            warning("cannot write %s: %s", s->log, strerror(errno));
        free(head);
        free(cmd);
    }
    so.argv = argvec_argv(&argv);
    so.out_fd = fd;
    s->pid = srv_spawn(&so);
    close(fd);
    argvec_clear(&argv);
    if (s->pid < 0) {
        s->pid = 0;
        return -1;
    }
    s->child = true;
    /* the state file exists from now on, so that `pgolab server stop` finds the server even
     * if this process dies (SIGKILL) while it waits */
    s->starttime = srv_proc_starttime(s->pid, NULL);
    server_state_write(s);
    for (;;) {
        int st;
        if (srv_got_signal)
            return -3;
        pid_t w = waitpid(s->pid, &st, WNOHANG);
        if (w == s->pid) {
            struct strbuf part = STRBUF_INIT;
            s->pid = 0;
            read_log_since(s->log, log_start, &part);
            bool taken = part.len && strstr(part.buf, "Address already in use");
            strbuf_release(&part);
            if (taken && !ctx->cfg->port)
                return 1;
            char *how = srv_status_str(st);
            error("%s exited during start-up (%s)%s", s->binary, how,
                  taken ? ": the port is in use" : "");
            free(how);
            print_log_since(s, log_start);
            return -1;
        }
        if (server_ping(s, NULL))
            return 0;
        if (srv_got_signal)
            return -3;
        if (now_ns() >= deadline) {
            error("%s (pid %d) did not accept connections within %g s (--timeout)", s->binary, (int)s->pid,
                  ctx->timeout_s);
            print_log_since(s, log_start);
            return -1;
        }
        srv_sleep_ms(100);
    }
}

/* Stop a server that failed to come up or that we were interrupted in starting: clean
 * signal first, SIGKILL after a bounded wait. */
static void stop_quietly(struct server *s)
{
    int st;
    if (s->pid <= 0)
        return;
    kill(s->pid, s->kind == SERVER_PGSQL ? SIGINT : SIGTERM);
    if (srv_wait_child(s->pid, KILL_WAIT_S, &st) < 0) {
        kill(s->pid, SIGKILL);
        srv_wait_child(s->pid, KILL_WAIT_S, &st);
    }
    srv_wait_group_gone(s->pid, KILL_WAIT_S);
    s->pid = 0;
}

int server_start(struct server *s, const struct server_config *cfg)
{
    struct start_ctx ctx = { .cfg = cfg, .user_args = ARGVEC_INIT };
    struct sig_saved guard;
    bool guarded = false, need_mkdir = false, made_dir = false, was_empty = false, init = false;
    bool initialized = false;
    char *label = NULL;
    int rc = -1;

    memset(s, 0, sizeof(*s));
    srv_guard_begin(&guard);
    guarded = true;
    s->kind = cfg->kind;
    s->user = xstrdup(cfg->user ? cfg->user : "sbtest");
    s->db = xstrdup(cfg->db ? cfg->db : "sbtest");
    s->password = xstrdup(cfg->password ? cfg->password : "");
    s->has_password = *s->password != '\0';
    s->host = xstrdup("127.0.0.1");
    s->keep_datadir = cfg->keep_datadir;
    ctx.timeout_s = cfg->start_timeout_s > 0 ? cfg->start_timeout_s : DEFAULT_TIMEOUT_S;
    const char *u = s->kind == SERVER_PGSQL ? "pgsql" : "mysql";

    if (!*s->user || !*s->db) {
        error("--%s-%s: empty", u, !*s->user ? "user" : "db");
        goto fail;
    }
    if (s->kind == SERVER_PGSQL && s->user[strcspn(s->user, "\"\n\r\t ,")]) {
        error("--pgsql-user=%s: a name without quotes, spaces or commas, please", s->user);
        goto fail;
    }
    if (!strcmp(s->user, s->kind == SERVER_PGSQL ? "postgres" : "root")) {
        error("--%s-user=%s: that is the server's administrator; the benchmark account must be another one",
              u, s->user);
        goto fail;
    }
    if (cfg->port < 0 || cfg->port > 65535) {
        error("--port=%d: expected 1..65535 (or 0 = pick a free one)", cfg->port);
        goto fail;
    }
    if (resolve_binary(cfg, &s->binary, &label) < 0 || check_version(s, label) < 0 || srv_got_signal)
        goto fail;
    for (int i = 0; i < cfg->noptions; i++)
        if (server_option_args(s->kind, cfg->options[i], &ctx.user_args) < 0)
            goto fail;
    if (cfg->port) {
        int e = port_check(cfg->port);
        if (e) {
            error("--port=%d: %s", cfg->port,
                  e == EADDRINUSE ? "already in use on 127.0.0.1" : strerror(e));
            goto fail;
        }
    }
    if (srv_run_identity(s->kind, &ctx.ra) < 0)
        goto fail;
    if (cfg->prefix && s->kind == SERVER_MYSQL)
        ctx.basedir = abs_path(cfg->prefix);

    /* the datadir */
    const char *flavor = s->kind == SERVER_PGSQL ? "PostgreSQL" : strcmp(s->flavor, "MySQL") ? "MariaDB" : "MySQL";
    if (cfg->datadir) {
        if (!*cfg->datadir) {
            error("--datadir=: empty path");
            goto fail;
        }
        s->datadir = abs_path(cfg->datadir);
        enum server_datadir dk = server_datadir_kind(s->datadir);
        switch (dk) {
        case DATADIR_MISSING:
            init = need_mkdir = true;
            break;
        case DATADIR_NOT_DIR:
            error("--datadir=%s: not a directory", cfg->datadir);
            goto fail;
        case DATADIR_EMPTY:
            init = was_empty = true;
            break;
        case DATADIR_MYSQL:
        case DATADIR_PGSQL:
            if (dk == (s->kind == SERVER_PGSQL ? DATADIR_PGSQL : DATADIR_MYSQL))
                break;
            error("--datadir=%s: not empty and not a %s data directory (it holds a %s one)", cfg->datadir,
                  flavor, s->kind == SERVER_PGSQL ? "MariaDB/MySQL" : "PostgreSQL");
            goto fail;
        case DATADIR_OTHER:
            if (access(s->datadir, R_OK | X_OK) < 0)
                error("--datadir=%s: %s", cfg->datadir, strerror(errno));
            else
                error("--datadir=%s: not empty and not a %s data directory", cfg->datadir, flavor);
            goto fail;
        }
        if (!init) {
            /* started before: is a server still running there? */
            struct server old;
            char *state = path_join(s->datadir, STATE_FILE);
            bool have = is_file(state);
            free(state);
            if (have && server_state_read(&old, s->datadir) == 0) {
                bool alive = srv_proc_alive(&old);
                pid_t pid = old.pid;
                server_release(&old);
                if (alive) {
                    error("--datadir=%s: a server is already running there (pid %d); stop it first: "
                          "pgolab server stop --datadir=%s", cfg->datadir, (int)pid, s->datadir);
                    goto fail;
                }
            }
        }
        if (ctx.ra.drop && srv_check_reachable(s->datadir, &ctx.ra) < 0)
            goto fail;
    }
    if (srv_got_signal)
        goto fail;
    if (!cfg->datadir) {
        const char *base = is_dir("/dev/shm") && access("/dev/shm", W_OK | X_OK) == 0 ? "/dev/shm" : "/tmp";
        char *tmpl = xasprintf("%s/pgolab-%s.XXXXXX", base, u);
        if (!mkdtemp(tmpl)) {
            error("cannot create a datadir in %s: %s", base, strerror(errno));
            free(tmpl);
            goto fail;
        }
        s->datadir = tmpl;
        s->created_datadir = init = true;
    } else if (need_mkdir) {
        if (mkdir_p(s->datadir) < 0)
            goto fail;
        made_dir = true;
    }
    s->log = path_join(s->datadir, LOG_FILE);
    if (init) {
        /* a PostgreSQL datadir belongs to the server's user, mode 0700 (initdb insists) */
        if (s->kind == SERVER_PGSQL && srv_give_dir(s->datadir, &ctx.ra) < 0)
            goto fail;
        if (!s->created_datadir)
            empty_dir(s->datadir); /* only pgolab's own files were there: initdb wants it empty */
        initialized = true;
        if ((rc = init_datadir(s, &ctx)) < 0)
            goto fail;
    }
    if (setup_socket_dir(s, &ctx.ra) < 0 || (s->kind == SERVER_PGSQL && write_hba(s) < 0))
        goto fail;

    for (int attempt = 1;; attempt++) {
        s->port = cfg->port ? cfg->port : pick_port();
        if (s->port < 0)
            goto fail;
        rc = start_once(s, &ctx);
        if (rc != 1)
            break;
        if (attempt == PORT_ATTEMPTS) {
            error("%s could not bind a port on 127.0.0.1 in %d attempts (each taken before it started)",
                  s->binary, PORT_ATTEMPTS);
            rc = -1;
            break;
        }
    }
    if (rc < 0)
        goto fail;
    if ((s->kind == SERVER_PGSQL ? pg_setup(s) : mysql_setup(s, initialized)) < 0) {
        rc = -1;
        goto fail;
    }
    if (srv_got_signal) {
        rc = -3;
        goto fail;
    }
    if (server_state_write(s) < 0) {
        rc = -1;
        goto fail;
    }
    srv_guard_end(&guard);
    argvec_clear(&ctx.user_args);
    free(ctx.basedir);
    free(ctx.ra.name);
    free(label);
    return 0;

fail:
    if (guarded && srv_got_signal)
        rc = -3;
    stop_quietly(s);
    if (s->socket_dir_private && s->socket_dir)
        remove_tree(s->socket_dir);
    if (s->datadir) {
        if (s->created_datadir || made_dir) {
            remove_tree(s->datadir);
        } else if (was_empty && initialized) {
            empty_dir(s->datadir);
        } else if (s->child) {
            /* the state file this call wrote (never another server's) */
            char *state = path_join(s->datadir, STATE_FILE);
            unlink(state);
            free(state);
        }
    }
    if (rc == -3)
        error("interrupted (%s) while starting the server: stopped it, nothing left running",
              strsignal(srv_got_signal));
    argvec_clear(&ctx.user_args);
    free(ctx.basedir);
    free(ctx.ra.name);
    free(label);
    server_release(s);
    s->interrupted = rc == -3;
    if (guarded)
        srv_guard_end(&guard);
    return -1;
}

/* ------------------------------------------------------------------ stop */

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
    struct srv_spawn_opts so = { .argv = argv, .out_fd = -1, .ra = ra.drop ? &ra : NULL, .cwd = s->datadir };
    struct strbuf out = STRBUF_INIT;
    int rc = srv_run_capture(&so, &out, DEFAULT_TIMEOUT_S);
    append_to_log(s, argv, &out);
    if (rc != 0)
        warning("%s died without a clean shutdown, and freeing its shared memory (postgres --single) failed "
                "(%s %d; see %s): /dev/shm/PostgreSQL.* segments may be left", s->datadir,
                rc > 128 ? "signal" : rc < 0 ? "code" : "exit status", rc > 128 ? rc - 128 : rc, s->log);
    strbuf_release(&out);
}

int server_stop(struct server *s, double timeout_s)
{
    int rc = 0, st = -1;
    bool gone = true;

    if (timeout_s <= 0)
        timeout_s = DEFAULT_TIMEOUT_S;
    if (s->pid > 0) {
        bool reaped = false;
        if (s->child && waitpid(s->pid, &st, WNOHANG) == s->pid) {
            reaped = true;
            char *how = srv_status_str(st);
            rc = error("%s (pid %d) had already exited (%s) before it was stopped", s->binary, (int)s->pid, how);
            free(how);
            server_log_tail(s, stderr, TAIL_LINES);
        } else if (srv_proc_alive(s)) {
            if (kill(s->pid, s->kind == SERVER_PGSQL ? SIGINT : SIGTERM) < 0)
                return error("cannot signal %s (pid %d): %s", s->binary, (int)s->pid, strerror(errno));
            if (!srv_wait_gone(s, timeout_s)) {
                kill(s->pid, SIGKILL);
                gone = srv_wait_gone(s, KILL_WAIT_S);
                if (gone && s->child)
                    srv_wait_child(s->pid, 1, &st); /* reap it */
                rc = error("%s (pid %d) did not shut down within %g s: killed it (SIGKILL)%s; not a clean "
                           "shutdown (an instrumented server writes no profile data)",
                           s->binary, (int)s->pid, timeout_s, gone ? "" : ", and it is still there");
                server_log_tail(s, stderr, TAIL_LINES);
            } else if (s->child && srv_wait_child(s->pid, 1, &st) == 0 && st != -1) {
                reaped = true;
                if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
                    char *how = srv_status_str(st);
                    rc = error("%s (pid %d) exited with %s on shutdown (not clean)", s->binary, (int)s->pid, how);
                    free(how);
                    server_log_tail(s, stderr, TAIL_LINES);
                }
            }
            if (rc == 0 && !reaped && s->log) {
                /* not our child: the log tells whether the shutdown was clean */
                char *tail = file_tail(s->log, 5);
                const char *mark = s->kind == SERVER_PGSQL ? "database system is shut down" : "Shutdown complete";
                if (!strstr(tail, mark))
                    warning("%s (pid %d) exited, but its log %s does not end with '%s'", s->binary, (int)s->pid,
                            s->log, mark);
                free(tail);
            }
        } else if (s->child) {
            srv_wait_child(s->pid, 1, &st); /* reap a zombie */
        }
        if (gone) {
            srv_wait_group_gone(s->pid, KILL_WAIT_S); /* e.g. backends of a killed postmaster */
            s->pid = 0;
        }
    }
    if (!gone)
        return rc; /* keep every file of a process that is still there */
    if (s->kind == SERVER_PGSQL && s->datadir)
        pg_reclaim_shmem(s);
    if (s->socket_dir_private && s->socket_dir && remove_tree(s->socket_dir) < 0)
        rc = -1;
    if (s->datadir) {
        if (s->created_datadir && !s->keep_datadir) {
            if (remove_tree(s->datadir) < 0)
                rc = -1;
        } else {
            char *state = path_join(s->datadir, STATE_FILE);
            if (unlink(state) < 0 && errno != ENOENT)
                warning("cannot remove %s: %s", state, strerror(errno));
            free(state);
        }
    }
    return rc;
}

/* ------------------------------------------------------------------ client side */

int server_client_args(const struct server *s, struct argvec *out)
{
    const char *d = server_kind_name(s->kind);
    argvec_pushf(out, "--db-driver=%s", d);
    argvec_pushf(out, "--%s-host=%s", d, s->host ? s->host : "127.0.0.1");
    argvec_pushf(out, "--%s-port=%d", d, s->port);
    argvec_pushf(out, "--%s-user=%s", d, s->user ? s->user : "sbtest");
    argvec_pushf(out, "--%s-db=%s", d, s->db ? s->db : "sbtest");
    return 5;
}

int server_client_env(const struct server *s, struct argvec *env)
{
    if (!s->password || !*s->password)
        return 0;
    argvec_pushf(env, "%s=%s", s->kind == SERVER_PGSQL ? "PGPASSWORD" : "MYSQL_PWD", s->password);
    return 1;
}

enum server_state server_status(const struct server *s, char **version)
{
    if (version)
        *version = NULL;
    if (!srv_proc_alive(s))
        return SERVER_GONE;
    return server_ping(s, version) ? SERVER_RUNNING : SERVER_STARTING;
}
