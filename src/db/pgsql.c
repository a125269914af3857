/* pgsql: PostgreSQL driver on libpq. The options are process-wide (read by init); each worker's
 * db_conn owns one PGconn, and each db_stmt is either a server-side prepared statement of that
 * connection (--db-ps-mode=auto) or its SQL text, sent with the parameters inlined
 * (--db-ps-mode=disable, or a statement the server refuses to prepare).
 * Behaviour follows sysbench 1.0.20's drv_pgsql.c where it matters for the numbers: '?' becomes
 * $n, a result set is a read, a command with a row count > 0 a write, and SQLSTATEs 40P01, 40001
 * and 23505 are retried. The password is never printed. */
#include "db/pgsql.h"
#include "db/stmt_text.h"
#include "util/libpq_api.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>

/* Receive timeout of a connection's socket once it is blocking (see wait_result), in ms. */
#define BLOCKING_RECV_TIMEOUT_MS 200

static const struct opt_def pgsql_options[] = {
    { "pgsql-host", OPT_STRING, "localhost",
      "PostgreSQL server host (a path starting with '/' is a unix socket directory)" },
    { "pgsql-port", OPT_INT, "5432", "PostgreSQL server port" },
    { "pgsql-user", OPT_STRING, "sbtest", "PostgreSQL user" },
    { "pgsql-password", OPT_STRING, "", "PostgreSQL password (default: $PGPASSWORD if set)" },
    { "pgsql-db", OPT_STRING, "sbtest", "PostgreSQL database name" },
    { "pgsql-connect-timeout", OPT_INT, "10",
      "seconds to wait for a connection (0: no limit; libpq rounds 1 up to 2)" },
    OPT_END
};

/* Set by init, read-only afterwards (shared by the workers). */
static struct {
    char *host, *user, *password, *dbname;
    char port[16], timeout[24];
    char *where;   /* the server as messages name it: "host:port" or the socket file */
    bool ps;       /* --db-ps-mode=auto: server-side prepared statements */
    bool debug;    /* --db-debug */
    bool ready;
} cfg;

static char lib_version[32], *lib_loaded_from;

struct pg_conn {
    PGconn *pg;
    unsigned next_stmt;  /* suffix of the next prepared statement's name */
    bool blocking;       /* the socket is in blocking mode (see wait_result) */
    struct db_stmt *begin_st, *commit_st;  /* BEGIN / COMMIT prepared (see trx_stmt) */
};

static void stmt_free(struct db_stmt *s);

struct db_stmt {
    char *sql;            /* the '?' text: sent with params inlined when name is "" */
    char name[32];        /* server-side prepared statement, or "" */
    struct strbuf text;   /* text mode: the statement with its parameters inlined */
    char *pbuf;           /* prepared mode: parameter values, each NUL-terminated */
    size_t pcap;
    const char **values;  /* pointers into pbuf, one per parameter */
    int vcap;
};

/* ---- messages ---- */

/* "debug: <formatted>" on stderr as one write, so lines of concurrent workers do not mix. */
static void debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void debug(const char *fmt, ...)
{
    struct strbuf sb = STRBUF_INIT;
    va_list ap;
    strbuf_addstr(&sb, "debug: ");
    va_start(ap, fmt);
    strbuf_vaddf(&sb, fmt, ap);
    va_end(ap);
    strbuf_addch(&sb, '\n');
    fputs(sb.buf, stderr);
    strbuf_release(&sb);
}

/* A statement for --db-debug: prepare's bulk INSERTs are half a megabyte, show their head. */
#define DEBUG_SQL_MAX 1000
#define DEBUG_SQL(sql) (int)(strlen(sql) > DEBUG_SQL_MAX ? DEBUG_SQL_MAX : strlen(sql)), (sql), \
                       strlen(sql) > DEBUG_SQL_MAX ? " ..." : ""

/* Copy src to dst (size n) as one line: the first line only if first_only, else every line
 * break becomes a space; runs of white space become one space (libpq writes "FATAL:  msg"),
 * surrounding white space is trimmed. */
static void one_line(char *dst, size_t n, const char *src, bool first_only)
{
    size_t len = 0;
    while (*src == ' ' || *src == '\t' || *src == '\n' || *src == '\r')
        src++;
    for (; *src && len + 1 < n; src++) {
        char ch = *src;
        if (ch == '\n' || ch == '\r' || ch == '\t') {
            if (first_only && ch != '\t')
                break;
            ch = ' ';
        }
        if (ch == ' ' && len && dst[len - 1] == ' ')
            continue;
        dst[len++] = ch;
    }
    while (len && dst[len - 1] == ' ')
        len--;
    if (n)
        dst[len] = '\0';
}

/* libpq's connection error, first line, without its "connection to server at ... failed: "
 * lead (our message names the server already). */
static void connect_reason(char *dst, size_t n, const char *libpq_msg)
{
    static const char lead[] = "connection to server ";
    const char *s = libpq_msg;
    const char *nl = strchr(s, '\n');
    const char *f = strstr(s, " failed: ");
    if (!strncmp(s, lead, sizeof(lead) - 1) && f && (!nl || f < nl))
        s = f + strlen(" failed: ");
    one_line(dst, n, s, true);
}

static bool retryable(const char *state)
{
    return !strcmp(state, "40P01") /* deadlock_detected */ ||
           !strcmp(state, "40001") /* serialization_failure */ ||
           !strcmp(state, "23505") /* unique_violation */;
}

/* Fill c->err from a failed result (res may be NULL: no result at all). Returns the class. */
static enum db_status set_error(struct db_conn *c, const PGresult *res)
{
    struct pg_conn *pc = c->priv;
    const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
    const char *prim = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
    const char *sev = res ? PQresultErrorField(res, PG_DIAG_SEVERITY_NONLOCALIZED) : NULL;
    char why[sizeof(c->err.msg)];

    c->err.code = 0;
    snprintf(c->err.state, sizeof(c->err.state), "%s", state ? state : "");
    if (prim)
        one_line(why, sizeof(why), prim, false);
    else
        one_line(why, sizeof(why),
                 res && *PQresultErrorMessage(res) ? PQresultErrorMessage(res)
                                                   : PQerrorMessage(pc->pg),
                 true);
    if (PQstatus(pc->pg) == CONNECTION_BAD) {
        c->err.status = DB_FATAL;
        snprintf(c->err.msg, sizeof(c->err.msg), "lost connection to PostgreSQL server at %.150s: "
                                                 "%.300s",
                 cfg.where, why[0] ? why : "connection closed");
    } else if (prim) {
        c->err.status = state && retryable(state) ? DB_RETRY : DB_FATAL;
        snprintf(c->err.msg, sizeof(c->err.msg), "%s%s%s: %.450s", sev ? sev : "ERROR",
                 c->err.state[0] ? " " : "", c->err.state, why);
    } else {
        c->err.status = DB_FATAL;
        snprintf(c->err.msg, sizeof(c->err.msg), "%s", why[0] ? why : "unknown libpq error");
    }
    if (cfg.debug)
        debug("error (%s): %s", c->err.status == DB_RETRY ? "retryable" : "fatal", c->err.msg);
    return c->err.status;
}

static void notice_quiet(void *arg, const char *msg)
{
    (void)arg;
    (void)msg;
}

static void notice_debug(void *arg, const char *msg)
{
    char line[512];
    (void)arg;
    one_line(line, sizeof(line), msg, false);
    debug("%s", line);
}

/* ---- process-wide setup ---- */

static int pgsql_init(const struct opts *o)
{
    const char *mode = opt_str(o, "db-ps-mode");
    int64_t port = opt_int(o, "pgsql-port");
    int64_t timeout = opt_int(o, "pgsql-connect-timeout");
    const char *pw = opt_str(o, "pgsql-password");
    const char *host = opt_str(o, "pgsql-host");

    if (cfg.ready)
        return 0;
    if (strcmp(mode, "auto") && strcmp(mode, "disable"))
        return error("--db-ps-mode=%s: expected auto or disable", mode);
    if (port < 1 || port > 65535)
        return error("--pgsql-port=%lld: expected a port number 1..65535", (long long)port);
    if (timeout < 0 || timeout > 86400)
        return error("--pgsql-connect-timeout=%lld: expected seconds 0..86400", (long long)timeout);
    if (!host || !*host)
        return error("--pgsql-host: expected a host name, address or socket directory");
    if (!opt_is_set(o, "pgsql-password") && getenv("PGPASSWORD"))
        pw = getenv("PGPASSWORD");
    cfg.ps = !strcmp(mode, "auto");
    cfg.debug = opt_bool(o, "db-debug");
    cfg.host = xstrdup(host);
    cfg.user = xstrdup(opt_str(o, "pgsql-user") ? opt_str(o, "pgsql-user") : "");
    cfg.dbname = xstrdup(opt_str(o, "pgsql-db") ? opt_str(o, "pgsql-db") : "");
    cfg.password = xstrdup(pw ? pw : "");
    snprintf(cfg.port, sizeof(cfg.port), "%lld", (long long)port);
    snprintf(cfg.timeout, sizeof(cfg.timeout), "%lld", (long long)timeout);
    if (host[0] == '/')
        cfg.where = xasprintf("%s/.s.PGSQL.%s", host, cfg.port);
    else
        cfg.where = xasprintf("%s:%s", host, cfg.port);

    if (!libpq_api_load())
        return -1;
    int v = PQlibVersion();
    if (v >= 100000)
        snprintf(lib_version, sizeof(lib_version), "%d.%d", v / 10000, v % 10000);
    else
        snprintf(lib_version, sizeof(lib_version), "%d.%d.%d", v / 10000, v / 100 % 100, v % 100);
    if (!lib_loaded_from) {
        __typeof__(libpq_api()->fn_PQexecPrepared) fn = PQexecPrepared;
        Dl_info di;
        lib_loaded_from = xstrdup(dladdr(*(void **)&fn, &di) && di.dli_fname ? di.dli_fname : "?");
    }
    cfg.ready = true;
    return 0;
}

static void pgsql_done(void)
{
    if (cfg.password)
        memset(cfg.password, 0, strlen(cfg.password));
    free(cfg.host);
    free(cfg.user);
    free(cfg.password);
    free(cfg.dbname);
    free(cfg.where);
    memset(&cfg, 0, sizeof(cfg));
}

static int pgsql_libinfo(struct db_libinfo *info)
{
    if (!cfg.ready)
        return -1;
    info->product = "libpq";
    info->path = lib_loaded_from; /* the file the dynamic linker chose for the soname */
    info->version = lib_version;
    info->source_id = NULL;        /* a client library has no build source id */
    info->engine_source_id = NULL;
    info->loaded_from = lib_loaded_from;
    info->isolation = "dlopen(RTLD_GLOBAL) of " LIBPQ_LIBRARY " at the driver's start";
    return 0;
}

/* ---- connections ---- */

/* libpq keeps its socket non-blocking and waits for every reply with poll() before it calls
 * recv(): three system calls per statement (send, poll, recv), as sysbench pays. With the
 * socket in blocking mode, wait_result lets recv() itself wait: two. libpq only reads once its
 * caller expects data (after poll, or in PQconsumeInput), with two exceptions that would now
 * block: pqReadData reads again at once after a read that leaves more than 32 kB unparsed (its
 * 16 kB buffer only grows for a message larger than that: never with the sysbench tables),
 * and pqSendSome reads after a partial send (a signal during a large send). SO_RCVTIMEO bounds
 * both at BLOCKING_RECV_TIMEOUT_MS: recv() then fails with EAGAIN, which libpq takes for "no
 * data yet". true if the socket is now blocking. */
static bool make_blocking(int fd)
{
    struct timeval tv = { 0, BLOCKING_RECV_TIMEOUT_MS * 1000 };
    int fl = fd >= 0 ? fcntl(fd, F_GETFL) : -1;
    return fl >= 0 && setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == 0 &&
           fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) == 0;
}

/* "PostgreSQL " + the server_version parameter, e.g. "15.20 (Debian 15.20-0+deb12u1)". */
static void pgsql_server_version(struct db_conn *c, char *buf, size_t n)
{
    struct pg_conn *pc = c->priv;
    const char *v = pc && pc->pg ? PQparameterStatus(pc->pg, "server_version") : NULL;
    snprintf(buf, n, "PostgreSQL %s", v ? v : "");
}

/* The backend's PID (PQbackendPID: sent by the server at connect, no round trip). */
static int pgsql_server_identity(struct db_conn *c, struct db_identity *id)
{
    struct pg_conn *pc = c->priv;
    memset(id, 0, sizeof(*id));
    id->pid = pc && pc->pg ? PQbackendPID(pc->pg) : 0;
    if (id->pid > 0)
        return 0;
    c->err.status = DB_FATAL;
    snprintf(c->err.msg, sizeof(c->err.msg), "the pgsql driver's connection has no backend PID");
    return -1;
}

/* SHOW name (a plain query on a connection that is not inside a run). */
static int pgsql_server_setting(struct db_conn *c, const char *name, char *buf, size_t n)
{
    struct pg_conn *pc = c->priv;
    char sql[96];
    if (!pc || !pc->pg)
        return -1;
    snprintf(sql, sizeof(sql), "SHOW %s", name);
    PGresult *r = PQexec(pc->pg, sql);
    int ok = PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 && PQnfields(r) == 1;
    if (ok)
        snprintf(buf, n, "%s", PQgetvalue(r, 0, 0));
    PQclear(r);
    return ok ? 0 : -1;
}

static void pgsql_disconnect(struct db_conn *c)
{
    struct pg_conn *pc = c->priv;
    if (!pc)
        return;
    PQfinish(pc->pg);  /* the server drops the prepared statements with the session */
    stmt_free(pc->begin_st);
    stmt_free(pc->commit_st);
    free(pc);
    c->priv = NULL;
}

static int pgsql_connect(struct db_conn *c)
{
    const char *kw[8], *val[8];
    int n = 0;
    struct pg_conn *pc;
    char why[400];

#define KV(k, v) (kw[n] = (k), val[n] = (v), n++)
    KV("host", cfg.host);
    KV("port", cfg.port);
    KV("user", cfg.user);
    KV("dbname", cfg.dbname);
    KV("connect_timeout", cfg.timeout);
    KV("fallback_application_name", "pgolab");
    if (cfg.password[0])
        KV("password", cfg.password);
    kw[n] = val[n] = NULL;
#undef KV
    if (cfg.debug)
        debug("connecting to PostgreSQL server at %s as user %s, database %s%s", cfg.where,
              cfg.user, cfg.dbname, cfg.password[0] ? " (with a password)" : "");
    pc = xcalloc(1, sizeof(*pc));
    c->priv = pc;
    /* expand_dbname=0: the database name is a name, never a conninfo string. */
    pc->pg = PQconnectdbParams(kw, val, 0);
    if (!pc->pg || PQstatus(pc->pg) != CONNECTION_OK) {
        connect_reason(why, sizeof(why), pc->pg ? PQerrorMessage(pc->pg) : "out of memory");
        c->err.status = DB_FATAL;
        c->err.code = 0;
        c->err.state[0] = '\0';
        snprintf(c->err.msg, sizeof(c->err.msg), "cannot connect to PostgreSQL server at %.100s: "
                                                 "%.360s",
                 cfg.where, why[0] ? why : "unknown error");
        if (cfg.debug)
            debug("error: %s", c->err.msg);
        pgsql_disconnect(c);
        return -1;
    }
    PQsetNoticeProcessor(pc->pg, cfg.debug ? notice_debug : notice_quiet, NULL);
    pc->blocking = make_blocking(PQsocket(pc->pg));
    return 0;
}

/* ---- statements ---- */

int pgsql_rewrite_placeholders(struct strbuf *out, const char *sql)
{
    int n = 0;
    char q = 0;  /* the quote character we are inside, or 0 */
    strbuf_grow(out, strlen(sql) + 16);  /* also makes out->buf a string when sql is "" */
    for (const char *s = sql; *s; s++) {
        if (q) {
            if (*s == q)
                q = 0;
        } else if (*s == '\'' || *s == '"') {
            q = *s;
        } else if (*s == '?') {
            strbuf_addf(out, "$%d", ++n);
            continue;
        }
        strbuf_addch(out, *s);
    }
    return n;
}

/* With --db-ps-mode=disable the statement is still parsed by the server once, as the unnamed
 * statement (which the next text query replaces), so a missing table or a syntax error shows
 * at prepare time (oltp_check_tables, thread init) as it does in auto mode, not mid-run; the
 * executions are plain text queries. */
static struct db_stmt *pgsql_prepare(struct db_conn *c, const char *sql)
{
    struct pg_conn *pc = c->priv;
    struct db_stmt *s = xcalloc(1, sizeof(*s));
    struct strbuf q = STRBUF_INIT;
    s->sql = xstrdup(sql);
    strbuf_init(&s->text, 0);

    pgsql_rewrite_placeholders(&q, sql);
    if (cfg.ps)
        snprintf(s->name, sizeof(s->name), "pgolab_%u", ++pc->next_stmt);
    if (cfg.debug)
        debug("PREPARE %s: %.*s%s", cfg.ps ? s->name : "(check only)", DEBUG_SQL(q.buf));
    PGresult *res = PQprepare(pc->pg, s->name, q.buf, 0, NULL);
    strbuf_release(&q);
    if (PQresultStatus(res) == PGRES_COMMAND_OK) {
        PQclear(res);
        return s;
    }
    const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
    if (state && !strcmp(state, "0A000") && PQstatus(pc->pg) == CONNECTION_OK) {
        /* feature_not_supported: the server will not prepare it; send it as text instead. */
        if (cfg.debug)
            debug("cannot be prepared (%s), it will be sent as text", state);
        PQclear(res);
        s->name[0] = '\0';
        return s;
    }
    set_error(c, res);
    PQclear(res);
    strbuf_release(&s->text);
    free(s->sql);
    free(s);
    return NULL;
}

static const char *pgsql_stmt_sql(const struct db_stmt *s)
{
    return s->sql;
}

static void pgsql_stmt_close(struct db_conn *c, struct db_stmt *s)
{
    struct pg_conn *pc = c->priv;
    if (!s)
        return;
    if (s->name[0] && pc && PQstatus(pc->pg) == CONNECTION_OK) {
        char sql[64];
        snprintf(sql, sizeof(sql), "DEALLOCATE %s", s->name);
        if (cfg.debug)
            debug("%s", sql);
        PQclear(PQexec(pc->pg, sql));  /* errors (e.g. in an aborted transaction) are harmless */
    }
    stmt_free(s);
}

/* Free what a struct db_stmt owns (the server side is the caller's concern). */
static void stmt_free(struct db_stmt *s)
{
    if (!s)
        return;
    strbuf_release(&s->text);
    free(s->pbuf);
    free(s->values);
    free(s->sql);
    free(s);
}

/* Checksum mode: every value of every row, folded as every driver does (driver.h). */
static void fold_rows(struct db_conn *c, const PGresult *res)
{
    int nrows = PQntuples(res), ncol = PQnfields(res);
    for (int r = 0; r < nrows; r++) {
        for (int i = 0; i < ncol; i++)
            db_checksum_value(c, PQgetisnull(res, r, i) ? NULL : PQgetvalue(res, r, i),
                              (size_t)PQgetlength(res, r, i));
        db_checksum_row_end(c);
    }
}

/* Classify a result (sysbench §3) and free it: a result set (even empty) is a read; a command
 * whose row count is > 0 a write; anything else other. */
static enum db_status take_result(struct db_conn *c, PGresult *res, enum db_qclass *cls)
{
    enum db_status st = DB_OK;
    switch (PQresultStatus(res)) {
    case PGRES_TUPLES_OK:
        if (c->checksum)
            fold_rows(c, res);
        *cls = DB_READ;
        break;
    case PGRES_COMMAND_OK: {
        const char *n = PQcmdTuples(res);  /* "" when the command has no row count */
        *cls = n[0] && strcmp(n, "0") ? DB_WRITE : DB_OTHER;
        break;
    }
    case PGRES_EMPTY_QUERY:
        *cls = DB_OTHER;
        break;
    case PGRES_COPY_IN:
    case PGRES_COPY_OUT:
    case PGRES_COPY_BOTH:
        c->err.status = st = DB_FATAL;
        c->err.code = 0;
        c->err.state[0] = '\0';
        snprintf(c->err.msg, sizeof(c->err.msg), "COPY statements are not supported");
        break;
    default:
        st = set_error(c, res);
        break;
    }
    PQclear(res);
    return st;
}

/* Write v in decimal at p; returns the length. */
static int fmt_i64(char *p, int64_t v)
{
    char tmp[24];
    int n = 0, len = 0;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        p[len++] = '-';
    while (n)
        p[len++] = tmp[--n];
    p[len] = '\0';
    return len;
}

static void quote_literal(void *ctx, struct strbuf *out, const char *s, int len)
{
    PGconn *pg = ctx;
    int err = 0;
    strbuf_grow(out, 2 * (size_t)len + 2);
    out->buf[out->len++] = '\'';
    out->len += PQescapeStringConn(pg, out->buf + out->len, s, (size_t)len, &err);
    out->buf[out->len++] = '\'';
    out->buf[out->len] = '\0';
}

/* The result of the query just sent (sent: the PQsend* call succeeded), as PQexec returns it:
 * the last of its results, read up to the end; NULL if there is none (PQerrorMessage says
 * why). On a blocking socket PQconsumeInput's recv() waits for the reply itself (see
 * make_blocking); PQgetResult would poll() first. */
static PGresult *wait_result(struct pg_conn *pc, bool sent)
{
    PGresult *res, *last = NULL;
    if (!sent)
        return NULL;
    if (pc->blocking)
        while (PQisBusy(pc->pg) && PQconsumeInput(pc->pg))
            ;
    while ((res = PQgetResult(pc->pg))) {
        PQclear(last);
        last = res;
        ExecStatusType st = PQresultStatus(res);
        if (st == PGRES_COPY_IN || st == PGRES_COPY_OUT || st == PGRES_COPY_BOTH ||
            PQstatus(pc->pg) == CONNECTION_BAD)
            break;
    }
    return last;
}

static enum db_status run_text(struct db_conn *c, const char *sql, enum db_qclass *cls)
{
    struct pg_conn *pc = c->priv;
    if (cfg.debug)
        debug("%.*s%s", DEBUG_SQL(sql));
    return take_result(c, wait_result(pc, PQsendQuery(pc->pg, sql)), cls);
}

static enum db_status pgsql_execute(struct db_conn *c, struct db_stmt *s, const struct db_param *p,
                                    int np, enum db_qclass *cls)
{
    struct pg_conn *pc = c->priv;
    if (!s->name[0]) {
        strbuf_reset(&s->text);
        if (db_sql_expand(&s->text, s->sql, p, np, quote_literal, pc->pg) < 0) {
            c->err.status = DB_FATAL;
            c->err.code = 0;
            c->err.state[0] = '\0';
            snprintf(c->err.msg, sizeof(c->err.msg), "%d parameters for the placeholders of: "
                                                     "%.400s",
                     np, s->sql);
            return DB_FATAL;
        }
        return run_text(c, s->text.buf, cls);
    }

    size_t need = 0;
    for (int i = 0; i < np; i++)
        need += p[i].type == DB_INT ? 24 : (size_t)p[i].len + 1;
    if (need > s->pcap) {
        s->pcap = need;
        s->pbuf = xrealloc(s->pbuf, need);
    }
    if (np > s->vcap) {
        s->vcap = np;
        s->values = xrealloc(s->values, sizeof(*s->values) * (size_t)np);
    }
    char *w = s->pbuf;
    for (int i = 0; i < np; i++) {
        s->values[i] = w;
        if (p[i].type == DB_INT) {
            w += fmt_i64(w, p[i].i) + 1;
        } else {
            memcpy(w, p[i].s, (size_t)p[i].len);
            w[p[i].len] = '\0';
            w += p[i].len + 1;
        }
    }
    if (cfg.debug) {
        struct strbuf sb = STRBUF_INIT;
        for (int i = 0; i < np; i++)
            strbuf_addf(&sb, "%s$%d=%s", i ? ", " : "", i + 1, s->values[i]);
        debug("EXECUTE %s: %s%s%s", s->name, s->sql, sb.len ? " -- " : "", sb.buf);
        strbuf_release(&sb);
    }
    return take_result(c, wait_result(pc, PQsendQueryPrepared(pc->pg, s->name, np, s->values, NULL,
                                                              NULL, 0)), cls);
}

static enum db_status pgsql_query(struct db_conn *c, const char *sql, enum db_qclass *cls)
{
    return run_text(c, sql, cls);
}

/* BEGIN and COMMIT are prepared statements (extended protocol), as sysbench's
 * oltp_common.lua prepares them, so pg_stat_statements counts them as sysbench's do; text
 * (the simple protocol) under --db-ps-mode=disable. Prepared on the connection's first begin:
 * workloads without transactions never send them. */
static enum db_status trx_stmt(struct db_conn *c, struct db_stmt **sp, const char *sql)
{
    enum db_qclass cls;
    if (!cfg.ps)
        return run_text(c, sql, &cls);
    if (!*sp && !(*sp = pgsql_prepare(c, sql)))
        return c->err.status;
    return pgsql_execute(c, *sp, NULL, 0, &cls);
}

static enum db_status pgsql_begin(struct db_conn *c, bool will_write)
{
    struct pg_conn *pc = c->priv;
    (void)will_write;  /* row locks are taken statement by statement */
    return trx_stmt(c, &pc->begin_st, "BEGIN");
}

static enum db_status pgsql_commit(struct db_conn *c)
{
    struct pg_conn *pc = c->priv;
    return trx_stmt(c, &pc->commit_st, "COMMIT");
}

static void pgsql_rollback(struct db_conn *c)
{
    struct pg_conn *pc = c->priv;
    PGTransactionStatusType ts = PQtransactionStatus(pc->pg);
    if (ts == PQTRANS_INTRANS || ts == PQTRANS_INERROR) {
        if (cfg.debug)
            debug("ROLLBACK");
        PQclear(PQexec(pc->pg, "ROLLBACK"));
    }
}

const struct db_driver pgsql_driver = {
    .name = "pgsql",
    .descr = "PostgreSQL (libpq)",
    .options = pgsql_options,
    .id_auto_inc = "SERIAL",
    .id_plain = "INTEGER NOT NULL",
    .table_suffix = "",
    .insert_auto_id = NULL,  /* leave the id column out: SERIAL assigns it */
    .init = pgsql_init,
    .done = pgsql_done,
    .libinfo = pgsql_libinfo,
    .connect = pgsql_connect,
    .disconnect = pgsql_disconnect,
    .server_version = pgsql_server_version,
    .server_identity = pgsql_server_identity,
    .server_setting = pgsql_server_setting,
    .prepare = pgsql_prepare,
    .stmt_close = pgsql_stmt_close,
    .stmt_sql = pgsql_stmt_sql,
    .execute = pgsql_execute,
    .query = pgsql_query,
    .begin = pgsql_begin,
    .commit = pgsql_commit,
    .rollback = pgsql_rollback,
};
