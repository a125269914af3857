/* mysql: MySQL/MariaDB driver on libmariadb (see mysql.h), after sysbench 1.0.20's
 * drivers/mysql/drv_mysql.c: the same options, error classes (§9) and query classification (§3).
 * One file of just over 1,000 lines on purpose: connection, statements, results and errors
 * share the connection's private state and its error mapping, as db/pgsql.c does for libpq.
 *
 * With --db-ps-mode=auto every statement is a server-side prepared statement (binary
 * protocol), BEGIN and COMMIT included as sysbench does (MariaDB prepares them), except those
 * the server refuses to prepare (ER_UNSUPPORTED_PS, e.g. BEGIN on some MySQL versions), which
 * are sent as text like every statement under --db-ps-mode=disable (parameters inlined by
 * db_sql_expand, quoted with mysql_real_escape_string). Each connection keeps a list of its
 * statements so that a reconnect can re-prepare them behind the db_stmt pointers the workload
 * holds. The password is never printed: not in errors, not in --db-debug output. */
#include "db/mysql.h"
#include "db/stmt_text.h"
#include "util/libmariadb_api.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <dlfcn.h>
#include <errmsg.h>
#include <fcntl.h>
#include <mysqld_error.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>

/* Longest statement text --db-debug prints (a prepare's bulk INSERT is half a megabyte). */
#define DEBUG_SQL_MAX 2048
/* Result buffer per column when checksumming prepared statements; longer values are fetched
 * again with mysql_stmt_fetch_column. */
#define RESULT_BUF 256

static const struct opt_def mdb_options[] = {
    { "mysql-host", OPT_STRING, "localhost",
      "MySQL server host (localhost: the default Unix socket; an address: TCP)" },
    { "mysql-port", OPT_INT, "3306", "MySQL server port" },
    { "mysql-socket", OPT_STRING, NULL, "MySQL socket (takes precedence over --mysql-host)" },
    { "mysql-user", OPT_STRING, "sbtest", "MySQL user" },
    { "mysql-password", OPT_STRING, "", "MySQL password (default: $MYSQL_PWD, else empty)" },
    { "mysql-db", OPT_STRING, "sbtest", "MySQL database name" },
    { "mysql-storage-engine", OPT_STRING, "innodb", "storage engine for the test tables" },
    { "mysql-ignore-errors", OPT_LIST, "1213,1020,1205",
      "errors to ignore (roll back and restart the event), or 'all'" },
    { "mysql-ssl", OPT_BOOL, "off", "use TLS (server certificate not verified)" },
    { "mysql-connect-timeout", OPT_INT, "10",
      "connect timeout in seconds, also the reconnect budget" },
    OPT_END
};

/* Process-wide settings, read by init. */
static struct {
    bool lib_ready;       /* mysql_library_init done */
    char *host, *socket, *user, *password, *db;
    unsigned port, connect_timeout;
    bool ssl, ps, debug, ignore_all;
    unsigned *ignore;     /* ignorable errnos (nignore of them) */
    int nignore;
    char where[320];      /* "host:port" or "socket PATH", for messages */
} cfg;

/* CREATE TABLE suffix, built by init from --mysql-storage-engine (the driver struct is const,
 * its pointer points here). */
static char table_suffix[96];

static char lib_loaded_from[512];

/* One parameter's own storage: the library keeps pointers to it across executions, so the
 * parameters are bound once and only their values change. */
struct param_slot {
    enum db_ptype type;
    long long i;
    char *buf;
    unsigned long cap, len;
};

struct mysql_conn;

struct db_stmt {
    struct mysql_conn *owner;     /* NULL once the connection is gone */
    struct db_stmt *prev, *next;  /* the owner's statement list */
    char *sql;
    MYSQL_STMT *st;               /* NULL: sent as text */
    bool text_only;               /* the server cannot prepare it (ER_UNSUPPORTED_PS) */
    unsigned nparams, nfields;
    MYSQL_BIND *pbind;
    struct param_slot *slot;
    bool pbound;                  /* pbind handed to the library and still valid */
    /* Result binding, set up the first time a checksummed execution needs the values. */
    MYSQL_BIND *rbind;
    char *rbuf;
    unsigned long *rlen;
    my_bool *rnull;
    bool rbound;
};

struct mysql_conn {
    MYSQL *m;
    struct db_stmt *stmts;   /* every open statement of this connection */
    struct strbuf text;      /* scratch: statement text with inlined parameters */
    bool in_trx;             /* BEGIN sent, no COMMIT/ROLLBACK since */
    /* BEGIN and COMMIT, prepared by the first begin (the connection's own, closed by
     * mdb_disconnect; NULL until then) */
    struct db_stmt *begin_st, *commit_st;
};

/* ---- blocking reads ----
 *
 * libmariadb reads with recv(MSG_DONTWAIT) and, when the reply is not there yet (after nearly
 * every statement: the server is still working on it), poll()s and reads again: four system
 * calls per statement (send, recv, poll, recv), which is what sysbench pays. pgolab puts the
 * socket of each of its connections in blocking mode and registers it here; the recv() below,
 * which takes the place of libc's for the whole process (the executable comes first in symbol
 * lookup, so libmariadb's calls land here), drops MSG_DONTWAIT for registered sockets, and the
 * first recv() waits for the reply itself: two system calls. Everything else (other
 * descriptors, MSG_PEEK, libpq's reads) goes to the kernel unchanged. No read timeout is set on
 * the connections (the library would poll() forever as well); SO_RCVTIMEO only bounds a wait
 * in a blocking recv() that libmariadb meant not to block, after which recv() fails with EAGAIN
 * and the library polls as usual. */
#define BLOCKING_FD_MAX 65536
#define BLOCKING_RECV_TIMEOUT_MS 200
static unsigned char blocking_fd[BLOCKING_FD_MAX];

/* Defined under its libc name with an asm label, so that a _FORTIFY_SOURCE build (whose header
 * makes recv an inline wrapper) compiles too. */
ssize_t interposed_recv(int fd, void *buf, size_t len, int flags) __asm__("recv");
ssize_t interposed_recv(int fd, void *buf, size_t len, int flags)
{
    if ((flags & (MSG_DONTWAIT | MSG_PEEK)) == MSG_DONTWAIT && fd >= 0 && fd < BLOCKING_FD_MAX &&
        __atomic_load_n(&blocking_fd[fd], __ATOMIC_RELAXED))
        flags &= ~MSG_DONTWAIT;
    return recvfrom(fd, buf, len, flags, NULL, NULL);
}

/* Switch a new connection's socket to blocking reads (best effort: on failure it stays as the
 * library left it). */
static void make_blocking(MYSQL *m)
{
    int fd = (int)mysql_get_socket(m);
    struct timeval tv = { 0, BLOCKING_RECV_TIMEOUT_MS * 1000 };
    int fl = fd >= 0 && fd < BLOCKING_FD_MAX ? fcntl(fd, F_GETFL) : -1;
    if (fl >= 0 && setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == 0 &&
        fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) == 0)
        __atomic_store_n(&blocking_fd[fd], 1, __ATOMIC_RELAXED);
}

/* mysql_close, unregistering the socket first (its number is free for reuse once closed). */
static void close_handle(MYSQL *m)
{
    int fd = (int)mysql_get_socket(m);
    if (fd >= 0 && fd < BLOCKING_FD_MAX)
        __atomic_store_n(&blocking_fd[fd], 0, __ATOMIC_RELAXED);
    mysql_close(m);
}

/* ---- threads ---- */

/* libmariadb wants mysql_thread_init in every thread that uses it and mysql_thread_end before
 * it exits. Connections are made in the worker threads but closed by the main thread, so the
 * end is tied to the thread's exit (a key destructor), not to disconnect. */
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static pthread_key_t thread_key;

static void thread_detach(void *p)
{
    (void)p;
    mysql_thread_end();
}

static void make_key(void)
{
    pthread_key_create(&thread_key, thread_detach);
}

static void thread_attach(void)
{
    pthread_once(&key_once, make_key);
    if (!pthread_getspecific(thread_key)) {
        mysql_thread_init();
        pthread_setspecific(thread_key, (void *)1);
    }
}

/* ---- options ---- */

static void free_cfg(void)
{
    free(cfg.host);
    free(cfg.socket);
    free(cfg.user);
    if (cfg.password) {
        memset(cfg.password, 0, strlen(cfg.password));
        free(cfg.password);
    }
    free(cfg.db);
    free(cfg.ignore);
    cfg.host = cfg.socket = cfg.user = cfg.password = cfg.db = NULL;
    cfg.ignore = NULL;
    cfg.nignore = 0;
}

/* --mysql-ignore-errors: a comma-separated list of error numbers, or "all" (anywhere in the
 * list); empty makes every error fatal. */
static int parse_ignore_list(const char *value)
{
    int n;
    char **items = split_list(value ? value : "", &n);
    int rc = 0;
    cfg.ignore = xcalloc((size_t)n + 1, sizeof(*cfg.ignore));
    cfg.nignore = 0;
    cfg.ignore_all = false;
    for (int i = 0; i < n && rc == 0; i++) {
        char *s = items[i];
        int64_t v;
        size_t len;
        while (*s == ' ')
            s++;
        for (len = strlen(s); len && s[len - 1] == ' '; len--)
            s[len - 1] = '\0';
        if (!*s)
            continue;
        if (!strcasecmp(s, "all"))
            cfg.ignore_all = true;
        else if (parse_int64(s, &v) == 0 && v > 0 && v < 100000)
            cfg.ignore[cfg.nignore++] = (unsigned)v;
        else
            rc = error("--mysql-ignore-errors=%s: '%s' is not an error number (expected a "
                       "comma-separated list of MySQL error numbers, or 'all')", value, s);
    }
    opt_list_free(items);
    return rc;
}

static int mdb_init(const struct opts *o)
{
    const char *ps_mode = opt_str(o, "db-ps-mode");
    const char *engine = opt_str(o, "mysql-storage-engine");
    int64_t port = opt_int(o, "mysql-port");
    int64_t timeout = opt_int(o, "mysql-connect-timeout");
    const char *host = opt_str(o, "mysql-host");
    const char *sock = opt_str(o, "mysql-socket");

    free_cfg();
    if (strcmp(ps_mode, "auto") && strcmp(ps_mode, "disable"))
        return error("--db-ps-mode=%s: expected auto or disable", ps_mode);
    if (!host || !*host || strchr(host, ','))
        return error("--mysql-host=%s: expected one host name or address (several hosts are "
                     "not supported)", host ? host : "");
    if (sock && (!*sock || strchr(sock, ',')))
        return error("--mysql-socket=%s: expected one socket path", sock);
    if (port < 1 || port > 65535)
        return error("--mysql-port=%lld: expected a port number from 1 to 65535", (long long)port);
    if (timeout < 1 || timeout > 86400)
        return error("--mysql-connect-timeout=%lld: expected a number of seconds from 1 to 86400",
                     (long long)timeout);
    size_t elen = engine ? strlen(engine) : 0;
    if (elen == 0 || elen > 64 ||
        strspn(engine, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                       "0123456789_") != elen)
        return error("--mysql-storage-engine=%s: expected an engine name (letters, digits, _)",
                     engine ? engine : "");
    if (parse_ignore_list(opt_str(o, "mysql-ignore-errors")) < 0)
        return -1;

    cfg.host = xstrdup(host);
    cfg.socket = sock ? xstrdup(sock) : NULL;
    cfg.user = xstrdup(opt_str(o, "mysql-user") ? opt_str(o, "mysql-user") : "");
    const char *pw = opt_str(o, "mysql-password");
    if (!opt_is_set(o, "mysql-password") && getenv("MYSQL_PWD"))
        pw = getenv("MYSQL_PWD");
    cfg.password = xstrdup(pw ? pw : "");
    cfg.db = xstrdup(opt_str(o, "mysql-db") ? opt_str(o, "mysql-db") : "");
    cfg.port = (unsigned)port;
    cfg.connect_timeout = (unsigned)timeout;
    cfg.ssl = opt_bool(o, "mysql-ssl");
    cfg.ps = !strcmp(ps_mode, "auto");
    cfg.debug = opt_bool(o, "db-debug");
    snprintf(table_suffix, sizeof(table_suffix), "/*! ENGINE = %s */", engine);
    if (cfg.socket)
        snprintf(cfg.where, sizeof(cfg.where), "socket %.300s", cfg.socket);
    else if (!strcmp(cfg.host, "localhost"))
        snprintf(cfg.where, sizeof(cfg.where), "localhost (default socket)");
    else
        snprintf(cfg.where, sizeof(cfg.where), "%.300s:%u", cfg.host, cfg.port);

    if (!cfg.lib_ready) {
        if (!libmariadb_api_load())
            return -1;
        if (mysql_library_init(0, NULL, NULL))
            return error("cannot initialize the MySQL client library (libmariadb)");
        cfg.lib_ready = true;
    }
    Dl_info di;
    snprintf(lib_loaded_from, sizeof(lib_loaded_from), "%s",
             dladdr(*(void **)&libmariadb_api()->fn_mysql_real_connect, &di) && di.dli_fname
                 ? di.dli_fname : "?");
    return 0;
}

static void mdb_done(void)
{
    free_cfg();
    if (cfg.lib_ready) {
        mysql_library_end();
        cfg.lib_ready = false;
    }
}

static int mdb_libinfo(struct db_libinfo *info)
{
    if (!cfg.lib_ready)
        return -1;
    info->product = "libmariadb";
    info->path = lib_loaded_from; /* the file the dynamic linker chose for the soname */
    info->version = mysql_get_client_info();
    info->source_id = NULL;
    info->engine_source_id = NULL;
    info->loaded_from = lib_loaded_from;
    info->isolation = "dlopen(RTLD_GLOBAL) of " LIBMARIADB_LIBRARY " at the driver's start";
    return 0;
}

/* ---- errors ---- */

static bool is_lost_connection(unsigned code)
{
    return code == CR_SERVER_LOST || code == CR_SERVER_GONE_ERROR || code == CR_TCP_CONNECTION ||
           code == CR_SERVER_LOST_EXTENDED;
}

static bool is_ignorable(unsigned code)
{
    if (cfg.ignore_all)
        return true;
    for (int i = 0; i < cfg.nignore; i++)
        if (cfg.ignore[i] == code)
            return true;
    return false;
}

static void set_err(struct db_conn *c, unsigned code, const char *state, const char *msg)
{
    c->err.code = (int)code;
    snprintf(c->err.state, sizeof(c->err.state), "%s",
             state && strcmp(state, "00000") ? state : "");
    snprintf(c->err.msg, sizeof(c->err.msg), "%s", msg && *msg ? msg : "unknown error");
    c->err.status = DB_FATAL;
    if (cfg.debug)
        fprintf(stderr, "debug: error %u (%s): %s\n", code, c->err.state, c->err.msg);
}

/* Open a new handle to the configured server; NULL with c->err filled ("cannot connect to
 * MySQL server at WHERE: MESSAGE (errno N)"). */
static MYSQL *open_handle(struct db_conn *c)
{
    MYSQL *m;
    unsigned timeout = cfg.connect_timeout;

    thread_attach();
    if (!(m = mysql_init(NULL))) {
        set_err(c, CR_OUT_OF_MEMORY, "HY000", "cannot connect to MySQL server: mysql_init failed");
        return NULL;
    }
    mysql_options(m, MYSQL_OPT_CONNECT_TIMEOUT, &timeout);
    if (cfg.ssl) {
        my_bool on = 1;
        mysql_options(m, MYSQL_OPT_SSL_ENFORCE, &on);
    }
    if (cfg.debug)
        fprintf(stderr, "debug: connect to MySQL server at %s as '%s', database '%s'\n", cfg.where,
                cfg.user, cfg.db);
    if (!mysql_real_connect(m, cfg.socket ? "localhost" : cfg.host, cfg.user, cfg.password, cfg.db,
                            cfg.socket ? 0 : cfg.port, cfg.socket, 0)) {
        unsigned code = mysql_errno(m);
        char msg[1024];
        if (code == ER_BAD_DB_ERROR)
            snprintf(msg, sizeof(msg), "cannot connect to MySQL server at %s: database '%.100s' "
                     "does not exist (create it, or use pgolab server start which does) "
                     "(errno %u)", cfg.where, cfg.db, code);
        else if (strstr(mysql_error(m), "could not be loaded") && strstr(mysql_error(m), "Plugin "))
            /* the account's authentication plugin is a file libmariadb loads (MySQL 8 and 9:
             * caching_sha2_password; Debian's libmariadb3 ships it in its plugin directory) */
            snprintf(msg, sizeof(msg), "cannot connect to MySQL server at %s as '%.100s': the "
                     "client library cannot load the account's authentication plugin (%.300s); "
                     "install Debian's libmariadb3, whose plugin directory has it, or unset "
                     "MARIADB_PLUGIN_DIR (errno %u)", cfg.where, cfg.user, mysql_error(m), code);
        else
            snprintf(msg, sizeof(msg), "cannot connect to MySQL server at %s: %.300s (errno %u)",
                     cfg.where, mysql_error(m), code);
        set_err(c, code, mysql_sqlstate(m), msg);
        mysql_close(m);
        return NULL;
    }
    make_blocking(m);
    return m;
}

static void debug_sql(const char *what, const char *sql, size_t len)
{
    if (len > DEBUG_SQL_MAX)
        fprintf(stderr, "debug: %s: %.*s... (%zu bytes)\n", what, DEBUG_SQL_MAX, sql, len);
    else
        fprintf(stderr, "debug: %s: %.*s\n", what, (int)len, sql);
}

/* ---- statements ---- */

static void free_result_binds(struct db_stmt *s)
{
    free(s->rbind);
    free(s->rbuf);
    free(s->rlen);
    free(s->rnull);
    s->rbind = NULL;
    s->rbuf = NULL;
    s->rlen = NULL;
    s->rnull = NULL;
    s->rbound = false;
}

/* Prepare s->sql on the server into s->st. 0, or -1 with c->err filled (s->st stays NULL). */
static int server_prepare(struct db_conn *c, struct db_stmt *s)
{
    struct mysql_conn *mc = c->priv;
    MYSQL_STMT *st = mysql_stmt_init(mc->m);
    if (!st) {
        set_err(c, mysql_errno(mc->m), mysql_sqlstate(mc->m), mysql_error(mc->m));
        return -1;
    }
    if (mysql_stmt_prepare(st, s->sql, (unsigned long)strlen(s->sql))) {
        set_err(c, mysql_stmt_errno(st), mysql_stmt_sqlstate(st), mysql_stmt_error(st));
        mysql_stmt_close(st);
        return -1;
    }
    unsigned np = (unsigned)mysql_stmt_param_count(st);
    if (np != s->nparams || !s->slot) {
        for (unsigned i = 0; s->slot && i < s->nparams; i++)
            free(s->slot[i].buf);
        free(s->slot);
        free(s->pbind);
        s->nparams = np;
        s->slot = xcalloc(np + 1, sizeof(*s->slot));
        s->pbind = xcalloc(np + 1, sizeof(*s->pbind));
    }
    unsigned nf = mysql_stmt_field_count(st);
    if (nf != s->nfields)
        free_result_binds(s);
    s->nfields = nf;
    s->st = st;
    s->pbound = false;
    s->rbound = false;
    return 0;
}

static void link_stmt(struct mysql_conn *mc, struct db_stmt *s)
{
    s->owner = mc;
    s->prev = NULL;
    s->next = mc->stmts;
    if (mc->stmts)
        mc->stmts->prev = s;
    mc->stmts = s;
}

static void unlink_stmt(struct db_stmt *s)
{
    struct mysql_conn *mc = s->owner;
    if (!mc)
        return;
    if (s->prev)
        s->prev->next = s->next;
    else
        mc->stmts = s->next;
    if (s->next)
        s->next->prev = s->prev;
    s->owner = NULL;
    s->prev = s->next = NULL;
}

static void free_stmt(struct db_stmt *s)
{
    if (s->st)
        mysql_stmt_close(s->st);
    for (unsigned i = 0; s->slot && i < s->nparams; i++)
        free(s->slot[i].buf);
    free(s->slot);
    free(s->pbind);
    free_result_binds(s);
    free(s->sql);
    free(s);
}

/* ---- connections ---- */

/* Lost connection: open a new handle (1 ms between tries, for at most the connect timeout)
 * and re-prepare every statement of the connection in place. 0, or -1 with c->err filled. */
static int reconnect(struct db_conn *c)
{
    struct mysql_conn *mc = c->priv;
    char lost[256];
    uint64_t give_up = now_ns() + (uint64_t)cfg.connect_timeout * 1000000000ull;
    MYSQL *m;

    snprintf(lost, sizeof(lost), "%.250s", c->err.msg);
    /* Closing the handle detaches its MYSQL_STMTs; mysql_stmt_close then only frees them. */
    close_handle(mc->m);
    mc->m = NULL;
    mc->in_trx = false;
    for (struct db_stmt *s = mc->stmts; s; s = s->next)
        if (s->st) {
            mysql_stmt_close(s->st);
            s->st = NULL;
        }
    while (!(m = open_handle(c))) {
        if (now_ns() >= give_up) {
            char why[sizeof(c->err.msg)];
            snprintf(why, sizeof(why), "%s", c->err.msg);
            snprintf(c->err.msg, sizeof(c->err.msg), "%.200s; reconnecting failed for %u s: %.280s",
                     lost, cfg.connect_timeout, why);
            return -1;
        }
        struct timespec ts = { 0, 1000000 };
        nanosleep(&ts, NULL);
    }
    mc->m = m;
    for (struct db_stmt *s = mc->stmts; s; s = s->next) {
        if (!cfg.ps || s->text_only)
            continue;
        if (server_prepare(c, s) < 0) {
            char why[sizeof(c->err.msg)];
            snprintf(why, sizeof(why), "%s", c->err.msg);
            snprintf(c->err.msg, sizeof(c->err.msg),
                     "reconnected, but cannot prepare the statement again: %.400s", why);
            return -1;
        }
    }
    return 0;
}

/* The error class of c->err (filled by set_err): ignorable errnos are retried, a lost
 * connection (if ignorable) reconnects first; anything else is fatal. */
static enum db_status classify(struct db_conn *c)
{
    unsigned code = (unsigned)c->err.code;
    if (!is_ignorable(code))
        return c->err.status = DB_FATAL;
    if (!is_lost_connection(code))
        return c->err.status = DB_RETRY;
    if (reconnect(c) < 0)
        return c->err.status = DB_FATAL;
    if (cfg.debug)
        fprintf(stderr, "debug: reconnected to MySQL server at %s\n", cfg.where);
    c->err.status = DB_RECONNECT;
    return DB_RECONNECT;
}

static enum db_status conn_error(struct db_conn *c)
{
    struct mysql_conn *mc = c->priv;
    set_err(c, mysql_errno(mc->m), mysql_sqlstate(mc->m), mysql_error(mc->m));
    return classify(c);
}

static enum db_status stmt_error(struct db_conn *c, MYSQL_STMT *st)
{
    struct mysql_conn *mc = c->priv;
    if (mysql_stmt_errno(st))
        set_err(c, mysql_stmt_errno(st), mysql_stmt_sqlstate(st), mysql_stmt_error(st));
    else
        set_err(c, mysql_errno(mc->m), mysql_sqlstate(mc->m), mysql_error(mc->m));
    return classify(c);
}

static void mdb_stmt_close(struct db_conn *c, struct db_stmt *s);

/* "10.11.19-MariaDB-0+deb12u1" -> "MariaDB 10.11.19"; a MySQL server says only "8.0.36". */
static void mdb_server_version(struct db_conn *c, char *buf, size_t n)
{
    struct mysql_conn *mc = c->priv;
    const char *v = mc && mc->m ? mysql_get_server_info(mc->m) : NULL;
    if (!v)
        v = "";
    snprintf(buf, n, "%s %.*s", strstr(v, "MariaDB") ? "MariaDB" : "MySQL", (int)strcspn(v, "-"),
             v);
}

/* SELECT @@name (a plain query on a connection that is not inside a run). */
static int mdb_server_setting(struct db_conn *c, const char *name, char *buf, size_t n)
{
    struct mysql_conn *mc = c->priv;
    char sql[96];
    if (!mc || !mc->m)
        return -1;
    snprintf(sql, sizeof(sql), "SELECT @@%s", name);
    if (mysql_query(mc->m, sql))
        return -1;
    MYSQL_RES *r = mysql_store_result(mc->m);
    if (!r)
        return -1;
    MYSQL_ROW row = mysql_fetch_row(r);
    int ok = row && row[0];
    if (ok)
        snprintf(buf, n, "%s", row[0]);
    mysql_free_result(r);
    return ok ? 0 : -1;
}

/* The first row of a two-column query as integers into a and b: 0, or -1. */
static int query_two_ints(MYSQL *m, const char *sql, int64_t *a, int64_t *b)
{
    if (mysql_query(m, sql))
        return -1;
    MYSQL_RES *r = mysql_store_result(m);
    if (!r)
        return -1;
    MYSQL_ROW row = mysql_fetch_row(r);
    int ok = row && row[0] && row[1];
    if (ok) {
        *a = strtoll(row[0], NULL, 10);
        *b = strtoll(row[1], NULL, 10);
    }
    mysql_free_result(r);
    return ok && *a > 0 && *b > 0 ? 0 : -1;
}

/* The connection id and the OS thread serving it: MariaDB's PROCESSLIST has the thread's TID;
 * MySQL has none there and says it in performance_schema.threads (on by default). */
static int mdb_server_identity(struct db_conn *c, struct db_identity *id)
{
    struct mysql_conn *mc = c->priv;
    memset(id, 0, sizeof(*id));
    if (mc && mc->m &&
        (query_two_ints(mc->m, "SELECT ID, TID FROM information_schema.PROCESSLIST "
                               "WHERE ID = CONNECTION_ID()", &id->conn_id, &id->os_thread) == 0 ||
         query_two_ints(mc->m, "SELECT PROCESSLIST_ID, THREAD_OS_ID FROM "
                               "performance_schema.threads WHERE PROCESSLIST_ID = "
                               "CONNECTION_ID()", &id->conn_id, &id->os_thread) == 0))
        return 0;
    c->err.status = DB_FATAL;
    snprintf(c->err.msg, sizeof(c->err.msg), "the mysql driver cannot tell which server thread "
             "serves its connection (neither information_schema.PROCESSLIST.TID nor "
             "performance_schema.threads.THREAD_OS_ID answered; on MySQL the account needs "
             "GRANT SELECT ON performance_schema.threads, which pgolab server start gives)");
    return -1;
}

static void mdb_disconnect(struct db_conn *c)
{
    struct mysql_conn *mc = c->priv;
    if (!mc)
        return;
    if (mc->m)
        close_handle(mc->m);
    mdb_stmt_close(c, mc->begin_st);
    mdb_stmt_close(c, mc->commit_st);
    /* Statements still open stay valid objects for a later stmt_close, without a connection. */
    while (mc->stmts) {
        struct db_stmt *s = mc->stmts;
        if (s->st) {
            mysql_stmt_close(s->st);
            s->st = NULL;
        }
        unlink_stmt(s);
    }
    strbuf_release(&mc->text);
    free(mc);
    c->priv = NULL;
}

/* c->create is not used: like sysbench, the database must exist (see open_handle). */
static int mdb_connect(struct db_conn *c)
{
    MYSQL *m = open_handle(c);
    struct mysql_conn *mc;
    if (!m)
        return -1;
    mc = xcalloc(1, sizeof(*mc));
    mc->m = m;
    strbuf_init(&mc->text, 0);
    c->priv = mc;
    return 0;
}

/* ---- execution ---- */

/* Run one SQL text, fetch and discard (or checksum) its rows, classify it. */
static enum db_status run_text(struct db_conn *c, const char *sql, size_t len, enum db_qclass *cls)
{
    struct mysql_conn *mc = c->priv;
    if (cfg.debug)
        debug_sql("query", sql, len);
    if (mysql_real_query(mc->m, sql, (unsigned long)len))
        return conn_error(c);
    if (mysql_field_count(mc->m) == 0) {
        my_ulonglong n = mysql_affected_rows(mc->m);
        *cls = n > 0 && n != (my_ulonglong)-1 ? DB_WRITE : DB_OTHER;
        return DB_OK;
    }
    MYSQL_RES *res = mysql_use_result(mc->m);
    MYSQL_ROW row;
    if (!res)
        return conn_error(c);
    unsigned nf = mysql_num_fields(res);
    while ((row = mysql_fetch_row(res))) {
        if (!c->checksum)
            continue;
        unsigned long *lens = mysql_fetch_lengths(res);
        for (unsigned i = 0; i < nf; i++)
            db_checksum_value(c, row[i], lens[i]);
        db_checksum_row_end(c);
    }
    if (mysql_errno(mc->m)) {
        set_err(c, mysql_errno(mc->m), mysql_sqlstate(mc->m), mysql_error(mc->m));
        mysql_free_result(res);
        return classify(c);
    }
    mysql_free_result(res);
    *cls = DB_READ;
    return DB_OK;
}

static void quote(void *ctx, struct strbuf *out, const char *s, int len)
{
    struct mysql_conn *mc = ctx;
    strbuf_grow(out, 2 * (size_t)len + 4);
    out->buf[out->len++] = '\'';
    out->len += mysql_real_escape_string(mc->m, out->buf + out->len, s, (unsigned long)len);
    out->buf[out->len++] = '\'';
    out->buf[out->len] = '\0';
}

static struct db_stmt *mdb_prepare(struct db_conn *c, const char *sql)
{
    struct mysql_conn *mc = c->priv;
    struct db_stmt *s = xcalloc(1, sizeof(*s));
    s->sql = xstrdup(sql);
    if (cfg.debug)
        debug_sql(cfg.ps ? "prepare" : "prepare (text)", sql, strlen(sql));
    if (cfg.ps && server_prepare(c, s) < 0) {
        if (c->err.code != ER_UNSUPPORTED_PS) {
            free_stmt(s);
            return NULL;
        }
        s->text_only = true;  /* sent as text, as sysbench does then */
    }
    link_stmt(mc, s);
    return s;
}

static void mdb_stmt_close(struct db_conn *c, struct db_stmt *s)
{
    (void)c;
    if (!s)
        return;
    unlink_stmt(s);
    free_stmt(s);
}

static const char *mdb_stmt_sql(const struct db_stmt *s)
{
    return s->sql;
}

static void debug_execute(const struct db_stmt *s, const struct db_param *p, int np)
{
    struct strbuf sb = STRBUF_INIT;
    strbuf_addstr(&sb, "debug: execute: ");
    strbuf_add(&sb, s->sql, strnlen(s->sql, DEBUG_SQL_MAX));
    for (int i = 0; i < np; i++) {
        strbuf_addstr(&sb, i ? ", " : " -- params: ");
        if (p[i].type == DB_INT)
            strbuf_addf(&sb, "%lld", (long long)p[i].i);
        else
            strbuf_addf(&sb, "'%.*s'", p[i].len, p[i].s);
    }
    fprintf(stderr, "%s\n", sb.buf);
    strbuf_release(&sb);
}

/* Copy the parameter values into the statement's slots; (re)bind when a type or a buffer
 * changed. */
static int bind_params(struct db_conn *c, struct db_stmt *s, const struct db_param *p)
{
    bool rebind = !s->pbound;
    for (unsigned i = 0; i < s->nparams; i++) {
        struct param_slot *sl = &s->slot[i];
        if (sl->type != p[i].type) {
            sl->type = p[i].type;
            rebind = true;
        }
        if (p[i].type == DB_INT) {
            sl->i = p[i].i;
            continue;
        }
        unsigned long len = p[i].len > 0 ? (unsigned long)p[i].len : 0;
        if (len > sl->cap || !sl->buf) {
            sl->cap = len > 64 ? len : 64;
            free(sl->buf);
            sl->buf = xmalloc(sl->cap);
            rebind = true;
        }
        if (len)
            memcpy(sl->buf, p[i].s, len);
        sl->len = len;
    }
    if (!rebind)
        return 0;
    memset(s->pbind, 0, sizeof(*s->pbind) * s->nparams);
    for (unsigned i = 0; i < s->nparams; i++) {
        struct param_slot *sl = &s->slot[i];
        MYSQL_BIND *b = &s->pbind[i];
        if (sl->type == DB_INT) {
            b->buffer_type = MYSQL_TYPE_LONGLONG;
            b->buffer = &sl->i;
        } else {
            b->buffer_type = MYSQL_TYPE_STRING;
            b->buffer = sl->buf;
            b->buffer_length = sl->cap;
            b->length = &sl->len;
        }
    }
    if (mysql_stmt_bind_param(s->st, s->pbind)) {
        set_err(c, mysql_stmt_errno(s->st), mysql_stmt_sqlstate(s->st), mysql_stmt_error(s->st));
        return -1;
    }
    s->pbound = true;
    return 0;
}

static int bind_results(struct db_conn *c, struct db_stmt *s)
{
    if (s->rbound)
        return 0;
    if (!s->rbind) {
        s->rbind = xcalloc(s->nfields, sizeof(*s->rbind));
        s->rbuf = xmalloc((size_t)s->nfields * RESULT_BUF);
        s->rlen = xcalloc(s->nfields, sizeof(*s->rlen));
        s->rnull = xcalloc(s->nfields, sizeof(*s->rnull));
    }
    memset(s->rbind, 0, sizeof(*s->rbind) * s->nfields);
    for (unsigned i = 0; i < s->nfields; i++) {
        MYSQL_BIND *b = &s->rbind[i];
        b->buffer_type = MYSQL_TYPE_STRING;
        b->buffer = s->rbuf + (size_t)i * RESULT_BUF;
        b->buffer_length = RESULT_BUF;
        b->length = &s->rlen[i];
        b->is_null = &s->rnull[i];
    }
    if (mysql_stmt_bind_result(s->st, s->rbind)) {
        set_err(c, mysql_stmt_errno(s->st), mysql_stmt_sqlstate(s->st), mysql_stmt_error(s->st));
        return -1;
    }
    s->rbound = true;
    return 0;
}

/* Fold the current row of s (results bound) into the checksum. */
static int fold_row(struct db_conn *c, struct db_stmt *s)
{
    for (unsigned i = 0; i < s->nfields; i++) {
        if (s->rnull[i]) {
            db_checksum_value(c, NULL, 0);
        } else if (s->rlen[i] <= RESULT_BUF) {
            db_checksum_value(c, s->rbuf + (size_t)i * RESULT_BUF, s->rlen[i]);
        } else {
            unsigned long n = s->rlen[i];
            char *big = xmalloc(n + 1);
            MYSQL_BIND b;
            memset(&b, 0, sizeof(b));
            b.buffer_type = MYSQL_TYPE_STRING;
            b.buffer = big;
            b.buffer_length = n + 1;
            if (mysql_stmt_fetch_column(s->st, &b, i, 0)) {
                free(big);
                return -1;
            }
            db_checksum_value(c, big, n);
            free(big);
        }
    }
    db_checksum_row_end(c);
    return 0;
}

static enum db_status mdb_execute(struct db_conn *c, struct db_stmt *s, const struct db_param *p,
                                  int np, enum db_qclass *cls)
{
    struct mysql_conn *mc = c->priv;
    if (!s->st) {
        strbuf_reset(&mc->text);
        if (db_sql_expand(&mc->text, s->sql, p, np, quote, mc) < 0) {
            set_err(c, CR_INVALID_PARAMETER_NO, "HY000",
                    "wrong number of parameters for the statement");
            return DB_FATAL;
        }
        return run_text(c, mc->text.buf, mc->text.len, cls);
    }
    if (cfg.debug)
        debug_execute(s, p, np);
    if ((unsigned)np != s->nparams) {
        char msg[160];
        snprintf(msg, sizeof(msg), "the statement has %u parameters, %d given", s->nparams, np);
        set_err(c, CR_INVALID_PARAMETER_NO, "HY000", msg);
        return DB_FATAL;
    }
    if (np && bind_params(c, s, p) < 0)
        return DB_FATAL;
    if (mysql_stmt_execute(s->st))
        return stmt_error(c, s->st);
    if (mysql_stmt_field_count(s->st) == 0) {
        my_ulonglong n = mysql_stmt_affected_rows(s->st);
        *cls = n > 0 && n != (my_ulonglong)-1 ? DB_WRITE : DB_OTHER;
        return DB_OK;
    }
    if (!c->checksum) {
        /* Nobody looks at the rows: mysql_stmt_free_result reads the packets up to the end of
         * the result set without decoding them, where mysql_stmt_fetch per row costs ~170
         * instructions a row more (a third of the client's user time on oltp_read_only), and
         * nothing is copied as mysql_stmt_store_result (sysbench) would. It clears the errors
         * first, so an error while reading (a server error packet, a lost connection) is the
         * connection's errno afterwards. */
        mysql_stmt_free_result(s->st);
        if (mysql_errno(mc->m))
            return conn_error(c);
        *cls = DB_READ;
        return DB_OK;
    }
    if (bind_results(c, s) < 0)
        return DB_FATAL;
    int rc;
    while ((rc = mysql_stmt_fetch(s->st)) == 0 || rc == MYSQL_DATA_TRUNCATED)
        if (fold_row(c, s) < 0)
            return stmt_error(c, s->st);
    if (rc != MYSQL_NO_DATA)
        return stmt_error(c, s->st);
    *cls = DB_READ;
    return DB_OK;
}

static enum db_status mdb_query(struct db_conn *c, const char *sql, enum db_qclass *cls)
{
    return run_text(c, sql, strlen(sql), cls);
}

/* BEGIN and COMMIT are prepared statements, as sysbench's oltp_common.lua has them (text
 * under --db-ps-mode=disable or when the server refuses to prepare them). Prepared on the
 * connection's first begin: workloads without transactions never send them. */
static enum db_status trx_stmt(struct db_conn *c, struct db_stmt **sp, const char *sql)
{
    enum db_qclass cls;
    if (!*sp && !(*sp = mdb_prepare(c, sql)))
        return classify(c);
    return mdb_execute(c, *sp, NULL, 0, &cls);
}

static enum db_status mdb_begin(struct db_conn *c, bool will_write)
{
    struct mysql_conn *mc = c->priv;
    (void)will_write;
    enum db_status st = trx_stmt(c, &mc->begin_st, "BEGIN");
    if (st == DB_OK)
        mc->in_trx = true;
    return st;
}

static enum db_status mdb_commit(struct db_conn *c)
{
    struct mysql_conn *mc = c->priv;
    enum db_status st = trx_stmt(c, &mc->commit_st, "COMMIT");
    if (st == DB_OK)
        mc->in_trx = false;
    return st;
}

/* sysbench sends nothing here (the next BEGIN commits implicitly); an explicit ROLLBACK is
 * cleaner and costs one round trip per restarted event. Its errors are ignored (a lost
 * connection is found and repaired by the next statement). */
static void mdb_rollback(struct db_conn *c)
{
    struct mysql_conn *mc = c->priv;
    if (!mc || !mc->in_trx)
        return;
    mc->in_trx = false;
    if (cfg.debug)
        debug_sql("query", "ROLLBACK", 8);
    if (mysql_real_query(mc->m, "ROLLBACK", 8) && cfg.debug)
        fprintf(stderr, "debug: error %u (%s): %s (ROLLBACK, ignored)\n", mysql_errno(mc->m),
                mysql_sqlstate(mc->m), mysql_error(mc->m));
}

const struct db_driver mysql_driver = {
    .name = "mysql",
    .descr = "MySQL / MariaDB server (libmariadb)",
    .options = mdb_options,
    .id_auto_inc = "INTEGER NOT NULL AUTO_INCREMENT",
    .id_plain = "INTEGER NOT NULL",
    .table_suffix = table_suffix,
    .insert_auto_id = "0",
    .init = mdb_init,
    .done = mdb_done,
    .libinfo = mdb_libinfo,
    .connect = mdb_connect,
    .disconnect = mdb_disconnect,
    .server_version = mdb_server_version,
    .server_setting = mdb_server_setting,
    .server_identity = mdb_server_identity,
    .prepare = mdb_prepare,
    .stmt_close = mdb_stmt_close,
    .stmt_sql = mdb_stmt_sql,
    .execute = mdb_execute,
    .query = mdb_query,
    .begin = mdb_begin,
    .commit = mdb_commit,
    .rollback = mdb_rollback,
};
