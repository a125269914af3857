/* lifecycle: the lifecycle of a managed server, the same for every server family (see
 * server.h for the API and who runs what as root): resolve and check the binary, classify and
 * prepare the datadir, initialize a new one, start the server in its own session on 127.0.0.1
 * and a private socket, wait (bounded) until it accepts connections, create the benchmark
 * account, and stop it cleanly (bounded; SIGKILL only as an error); the log tail, the client
 * args/env for children, a server's status and the list of the running ones. What differs per
 * family is a call into its struct server_flavor (server_flavor.h; flavor_mysql.c,
 * flavor_pgsql.c), found in flavors.c's registry. The processes themselves are process.c's,
 * the state file and the registry's files state.c's: this file calls down into them, never
 * the other way. Owns no state. Just over 1,000 lines: start and stop share the datadir plan
 * and the signal guard; the status and list of running servers are the part to move out
 * next. */
#include "server/server_flavor.h"
#include "util/fmt.h"
#include "util/fs.h"
#include "util/signals.h"
#include "util/strbuf.h"
#include "util/subprocess.h"
#include "util/util.h"

#include <assert.h>
#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define PORT_ATTEMPTS 3          /* a picked port taken before the server binds it: retry */
#define VERSION_TIMEOUT_S 10.0   /* BINARY --version */
#define TAIL_LINES 20
#define ERROR_LINES_MAX 10       /* error lines above a tail, printed before it */

/* ------------------------------------------------------------------ small helpers */

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
                fprintf(out, "%s%.*s\n", shown++ ? "" : "---- error lines before the tail:\n",
                        (int)n, l);
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

/* The start failed: the log is copied to s->keep_log first (the datadir may go), and the
 * title names the copy. */
/* The line of a failed start's or initialization's output that says why (caller frees), or
 * NULL: the last MySQL/MariaDB "[ERROR]" line that is not the final "Aborting" (MySQL logs
 * the cause, then "Aborting"; an earlier "[ERROR]" may be only a missing message file),
 * else the first PostgreSQL "FATAL:" or "ERROR:" line. */
static char *reason_line(const char *text)
{
    const char *best = NULL;
    size_t best_n = 0;
    for (const char *line = text; line && *line;) {
        const char *nl = strchr(line, '\n');
        size_t n = nl ? (size_t)(nl - line) : strlen(line);
        const char *e = memmem(line, n, "[ERROR]", 7);
        if (e && !memmem(line, n, "Aborting", 8)) {
            best = line;
            best_n = n;
        } else if (!e && !best && (memmem(line, n, "FATAL:", 6) || memmem(line, n, "ERROR:", 6))) {
            best = line;
            best_n = n;
        }
        line = nl ? nl + 1 : NULL;
    }
    if (!best)
        return NULL;
    /* MySQL: "TIME N [ERROR] [MY-000067] [Server] unknown variable 'x'." -> from [ERROR] on */
    const char *e = memmem(best, best_n, "[ERROR]", 7);
    if (e) {
        best_n -= (size_t)(e - best);
        best = e;
    }
    return xstrndup(best, best_n);
}

static void print_log_since(const struct server *s, off_t from)
{
    struct strbuf sb = STRBUF_INIT;
    const char *name = s->log;
    if (s->keep_log && file_copy(s->log, s->keep_log) == 0)
        name = s->keep_log;
    char *title = xasprintf("last lines of %s", name);
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
    if (!text)
        return -1;
    return srv_flavor(kind)->parse_version(text, version, flavor);
}

char *server_version_series(const char *text)
{
    const char *sp = text ? strrchr(text, ' ') : NULL;
    if (!sp || !isdigit((unsigned char)sp[1]))
        return NULL;
    const char *num = sp + 1;
    int major = atoi(num);
    size_t n = strspn(num, "0123456789");
    /* PostgreSQL numbers its majors by the first number since 10; 9.6 was a major of its own,
     * and so is every MariaDB and MySQL series (10.11, 11.8, 8.0, 8.4) */
    bool pg = (size_t)(sp - text) == strlen("PostgreSQL") && !strncmp(text, "PostgreSQL", 10);
    if (!(pg && major >= 10) && num[n] == '.' && isdigit((unsigned char)num[n + 1]))
        n += 1 + strspn(num + n + 1, "0123456789");
    return xasprintf("%.*s%.*s", (int)(num - text), text, (int)n, num);
}

int srv_take_version(const char *v, const char *fl, char **version, char **flavor)
{
    size_t n = 0;
    while (isdigit((unsigned char)v[n]) || (v[n] == '.' && isdigit((unsigned char)v[n + 1])))
        n++;
    if (!n || !memchr(v, '.', n))
        return -1;
    *version = xstrndup(v, n);
    *flavor = xstrdup(fl);
    return 0;
}

/* The server binary for cfg (absolute, caller frees) and how to name it in messages
 * (*label, caller frees). -1 with a message. */
static int resolve_binary(const struct server_config *cfg, char **bin, char **label)
{
    const struct server_flavor *f = srv_flavor(cfg->kind);
    *bin = *label = NULL;
    if (cfg->server && cfg->prefix)
        return error("--server=%s and --prefix=%s: give one of them", cfg->server, cfg->prefix);
    if (cfg->server) {
        struct stat st;
        if (!*cfg->server)
            return error("--server=: empty path");
        if (stat(cfg->server, &st) < 0)
            return error("--server=%s: %s", cfg->server,
                         errno == ENOENT ? "no such file" : strerror(errno));
        if (S_ISDIR(st.st_mode))
            return error("--server=%s: is a directory (an install prefix? use --prefix=%s)",
                         cfg->server, cfg->server);
        if (!S_ISREG(st.st_mode) || access(cfg->server, X_OK) < 0)
            return error("--server=%s: not an executable file", cfg->server);
        *bin = abs_path(cfg->server);
        *label = xasprintf("--server=%s", cfg->server);
        return 0;
    }
    if (cfg->prefix) {
        static const char *const dirs[] = { "sbin", "bin", "libexec" };
        if (!is_dir(cfg->prefix))
            return error("--prefix=%s: no such directory", cfg->prefix);
        for (const char *const *n = f->binaries; *n; n++)
            for (size_t d = 0; d < ARRAY_SIZE(dirs); d++) {
                char *p = xasprintf("%s/%s/%s", cfg->prefix, dirs[d], *n);
                if (srv_is_exec(p)) {
                    *bin = abs_path(p);
                    *label = xasprintf("--prefix=%s (%s)", cfg->prefix, p);
                    free(p);
                    return 0;
                }
                free(p);
            }
        return error("--prefix=%s: no %s under %s/sbin, bin or libexec", cfg->prefix,
                     f->binaries_label, cfg->prefix);
    }
    *bin = f->find_binary();
    if (!*bin)
        return error("no %s server found (install %s, or give --server=PATH or --prefix=DIR)",
                     f->label, f->package);
    *label = xstrdup(*bin);
    return 0;
}

/* `BINARY --version` must name a server of the right kind: sets s->version and s->flavor.
 * It runs as the user the server will run as (ra): an instrumented server writes profile
 * files on every run, and files root made would be read-only to the server's user, whose
 * training counts would then be lost (the profile would hold `--version` alone). */
static int check_version(struct server *s, const char *label, const struct srv_run_as *ra)
{
    const char *argv[] = { s->binary, "--version", NULL };
    struct strbuf out = STRBUF_INIT;
    struct subprocess sp = { .argv = argv, .out = &out, .quiet_stderr = 1,
                             .timeout_s = VERSION_TIMEOUT_S, .run_as = ra->drop,
                             .run_uid = ra->uid, .run_gid = ra->gid };
    int rc = subprocess_run(&sp);
    if (rc < 0 || srv_got_signal) { /* interrupted: server_start says so */
        strbuf_release(&out);
        return -1;
    }
    if (server_parse_version(s->kind, out.buf, &s->version, &s->flavor) < 0) {
        char *line = first_line(out.buf);
        if (line)
            error("%s: not a %s server (its --version says '%s')", label,
                  srv_flavor(s->kind)->label, line);
        else
            error("%s: not a %s server (its --version printed nothing, %s %d)", label,
                  srv_flavor(s->kind)->label, rc > 128 ? "killed by signal" : "exit status",
                  rc > 128 ? rc - 128 : rc);
        free(line);
        strbuf_release(&out);
        return -1;
    }
    strbuf_release(&out);
    return 0;
}

/* ------------------------------------------------------------------ datadir */

static bool own_file(const char *name)
{
    if (!strncmp(name, "pgolab-server.", 14))
        return true;
    for (size_t i = 0; i < ARRAY_SIZE(srv_flavors); i++)
        if (srv_flavors[i]->own_file && !strcmp(name, srv_flavors[i]->own_file))
            return true;
    return false;
}

/* The family a datadir kind belongs to, for messages. */
static const char *datadir_label(enum server_datadir dk)
{
    for (size_t i = 0; i < ARRAY_SIZE(srv_flavors); i++)
        if (srv_flavors[i]->datadir == dk)
            return srv_flavors[i]->label;
    return "?";
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
    for (size_t i = 0; i < ARRAY_SIZE(srv_flavors); i++)
        if (srv_flavors[i]->is_datadir(dir))
            return srv_flavors[i]->datadir;
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

/* ------------------------------------------------------------------ readiness */

/* Does the server accept connections as the administrator? */
static bool server_ping(const struct server *s, char **version)
{
    if (version)
        *version = NULL;
    return srv_flavor(s->kind)->ping(s, version);
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
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
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
    size_t need = strlen(s->datadir) + 1 + strlen(srv_flavor(s->kind)->socket_name_max);
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
    s->socket = srv_flavor(s->kind)->socket_path(s->socket_dir, s->port);
}

/* ------------------------------------------------------------------ init and start */

/* Keep a helper tool's output in the server log, under a "---- pgolab: COMMAND" line. */
void srv_append_to_log(const struct server *s, const char *const *argv, const struct strbuf *out)
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
static int init_datadir(struct server *s, struct server_start_ctx *ctx)
{
    struct argvec argv = ARGVEC_INIT, env = ARGVEC_INIT;
    struct strbuf out = STRBUF_INIT;
    struct srv_spawn_opts so = { .out_fd = -1, .ra = &ctx->ra, .cwd = s->datadir };
    const char *tool;
    int rc;

    if (srv_flavor(s->kind)->init_command(s, ctx, &argv, &env) < 0) {
        argvec_clear(&argv);
        argvec_clear(&env);
        return -1;
    }
    tool = argv.v[0];
    so.argv = argvec_argv(&argv);
    so.env = env.n ? argvec_argv(&env) : NULL;
    rc = srv_run_capture(&so, &out, ctx->timeout_s);
    srv_append_to_log(s, argvec_argv(&argv), &out);
    if (rc != 0 && rc != -1 && rc != -3) {
        char *title = xasprintf("output of %s", srv_base_name(tool));
        if (rc == -2)
            error("initializing %s with %s: no result within %g s", s->datadir, srv_base_name(tool),
                  ctx->timeout_s);
        else {
            char *why = reason_line(out.buf);
            error("initializing %s with %s failed (%s %d)%s%s", s->datadir, srv_base_name(tool),
                  rc > 128 ? "signal" : "exit status", rc > 128 ? rc - 128 : rc, why ? ": " : "",
                  why ? why : "");
            free(why);
        }
        print_tail(stderr, title, out.buf, out.len, TAIL_LINES);
        free(title);
    }
    strbuf_release(&out);
    argvec_clear(&argv);
    argvec_clear(&env);
    return rc == 0 ? 0 : rc == -3 ? -3 : -1;
}

/* One attempt on s->port: spawn the server and wait until it accepts connections.
 * 0 ready; 1 the port was taken (the server exited; retry with another); -1 failed (message
 * printed, the server may still run: the caller stops it); -3 interrupted. */
static int start_once(struct server *s, struct server_start_ctx *ctx)
{
    const struct server_flavor *f = srv_flavor(s->kind);
    struct argvec argv = ARGVEC_INIT;
    struct srv_spawn_opts so = { .ra = &ctx->ra, .cwd = s->datadir };
    if (ctx->cfg->stop_with_parent)
        so.pdeathsig = f->stop_signal;
    so.cpus = ctx->cfg->cpus;
    uint64_t deadline = srv_deadline_after(ctx->timeout_s);
    off_t log_start;
    int fd;

    set_socket_path(s);
    for (const char *const *w = ctx->cfg->wrapper; w && *w; w++)
        argvec_push(&argv, *w);
    argvec_push(&argv, s->binary);
    f->server_args(s, ctx, &argv);
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
            char *why = taken ? NULL : reason_line(part.buf);
            strbuf_release(&part);
            if (taken && !ctx->cfg->port)
                return 1;
            char *how = srv_status_str(st);
            error("%s exited during start-up (%s)%s%s", s->binary, how,
                  taken ? ": the port is in use" : why ? ": " : "", why ? why : "");
            free(how);
            free(why);
            print_log_since(s, log_start);
            return -1;
        }
        if (server_ping(s, NULL))
            return 0;
        if (srv_got_signal)
            return -3;
        if (now_ns() >= deadline) {
            error("%s (pid %d) did not accept connections within %g s (--timeout)", s->binary,
                  (int)s->pid, ctx->timeout_s);
            print_log_since(s, log_start);
            return -1;
        }
        srv_sleep_ms(100);
    }
}

/* Stop a server that failed to come up or that we were interrupted in starting: clean
 * signal first, SIGKILL after wait_s (a server still in its start-up, MariaDB in InnoDB's
 * recovery, may not act on the clean signal before it is up), the same for what is left of
 * its process group. */
static void stop_quietly(struct server *s, double wait_s)
{
    int st;
    if (s->pid <= 0)
        return;
    /* its children now: once it is gone they are no longer recognisable as its own.
     * PostgreSQL's leave its process group, and a backend still waiting before
     * authentication (a probe's, under pre_auth_delay or a slow start) outlives a stopped
     * postmaster until its wait ends */
    pid_t kids[256];
    unsigned long long born[256];
    int nkids = srv_children(s->pid, kids, (int)ARRAY_SIZE(kids));
    for (int i = 0; i < nkids; i++)
        born[i] = srv_proc_starttime(kids[i], NULL);
    kill(s->pid, srv_flavor(s->kind)->stop_signal);
    if (srv_wait_child(s->pid, wait_s, &st) < 0) {
        kill(s->pid, SIGKILL);
        srv_wait_child(s->pid, KILL_WAIT_S, &st);
    }
    srv_wait_group_gone(s->pid, wait_s);
    for (int i = 0; i < nkids; i++)  /* whatever did not end with it, the same process */
        if (born[i] && srv_proc_starttime(kids[i], NULL) == born[i])
            kill(kids[i], SIGKILL);
    s->pid = 0;
}

/* What server_start() finds and does in the datadir, which its clean-up after a failure
 * undoes. */
struct datadir_plan {
    bool init;        /* it is initialized: new, empty, or made by this call */
    bool need_mkdir;  /* the given --datadir does not exist yet */
    bool made_dir;    /* this call made the given --datadir */
    bool was_empty;   /* the given --datadir existed, empty */
    bool initialized; /* this call initialized it */
};

/* server_start()'s checks before anything is made: the benchmark account, the port, who
 * runs the server (ctx->ra), the binary (s->binary) and its --version, the --server-option
 * values (ctx->user_args) and the prefix (ctx->prefix). -1 after a message, or when a
 * signal came (srv_got_signal). */
static int start_checks(struct server *s, const struct server_config *cfg,
                        struct server_start_ctx *ctx)
{
    const struct server_flavor *f = srv_flavor(cfg->kind);
    const char *u = f->name;
    char *label = NULL;
    int rc = -1;

    if (!*s->user || !*s->db)
        return error("--%s-%s: empty", u, !*s->user ? "user" : "db");
    if (f->check_user && f->check_user(s->user) < 0)
        return -1;
    if (!strcmp(s->user, f->admin_user))
        return error("--%s-user=%s: that is the server's administrator; the benchmark account "
                     "must be another one", u, s->user);
    if (cfg->port < 0 || cfg->port > 65535)
        return error("--port=%d: expected 1..65535 (or 0 = pick a free one)", cfg->port);
    if (srv_run_identity(f, &ctx->ra) < 0)
        return -1;
    if (resolve_binary(cfg, &s->binary, &label) < 0 || check_version(s, label, &ctx->ra) < 0 ||
        srv_got_signal)
        goto out;
    for (int i = 0; i < cfg->noptions; i++)
        if (server_option_args(s->kind, cfg->options[i], &ctx->user_args) < 0)
            goto out;
    if (cfg->port) {
        int e = port_check(cfg->port);
        if (e) {
            error("--port=%d: %s", cfg->port,
                  e == EADDRINUSE ? "already in use on 127.0.0.1" : strerror(e));
            goto out;
        }
    }
    if (cfg->prefix)
        ctx->prefix = abs_path(cfg->prefix);
    rc = 0;
out:
    free(label);
    return rc;
}

/* A given --datadir: what is there decides. A missing or empty one is initialized; one of
 * this family is started again unless its server still runs; anything else is refused. The
 * server's user must reach it. s->datadir is set; -1 after a message. */
static int check_datadir(struct server *s, const struct server_config *cfg,
                         const struct server_start_ctx *ctx, struct datadir_plan *dp)
{
    const struct server_flavor *f = srv_flavor(cfg->kind);
    const char *flavor = s->flavor; /* "MariaDB", "MySQL", "PostgreSQL" (from --version) */

    assert(cfg->datadir);
    if (!*cfg->datadir)
        return error("--datadir=: empty path");
    s->datadir = abs_path(cfg->datadir);
    enum server_datadir dk = server_datadir_kind(s->datadir);
    switch (dk) {
    case DATADIR_MISSING:
        dp->init = dp->need_mkdir = true;
        break;
    case DATADIR_NOT_DIR:
        return error("--datadir=%s: not a directory", cfg->datadir);
    case DATADIR_EMPTY:
        dp->init = dp->was_empty = true;
        break;
    case DATADIR_OTHER:
        if (access(s->datadir, R_OK | X_OK) < 0)
            return error("--datadir=%s: %s", cfg->datadir, strerror(errno));
        return error("--datadir=%s: not empty and not a %s data directory", cfg->datadir,
                     flavor);
    default: /* a data directory of some family */
        if (dk == f->datadir)
            break;
        return error("--datadir=%s: not empty and not a %s data directory (it holds a %s one)",
                     cfg->datadir, flavor, datadir_label(dk));
    }
    if (!dp->init) {
        /* started before: is a server still running there? */
        struct server old;
        char *state = path_join(s->datadir, STATE_FILE);
        bool have = is_file(state);
        free(state);
        if (have && server_state_read(&old, s->datadir) == 0) {
            bool alive = srv_proc_alive(&old);
            pid_t pid = old.pid;
            server_release(&old);
            if (alive)
                return error("--datadir=%s: a server is already running there (pid %d); "
                             "stop it first: pgolab server stop --datadir=%s",
                             cfg->datadir, (int)pid, s->datadir);
        }
    }
    if (ctx->ra.drop && srv_check_reachable(s->datadir, &ctx->ra) < 0)
        return -1;
    return 0;
}

/* The datadir made where there is none yet: without --datadir a new private one under
 * /dev/shm (or /tmp), else the given path. -1 after a message. */
static int make_datadir(struct server *s, const struct server_config *cfg,
                        struct datadir_plan *dp)
{
    if (!cfg->datadir) {
        const char *base =
            is_dir("/dev/shm") && access("/dev/shm", W_OK | X_OK) == 0 ? "/dev/shm" : "/tmp";
        char *tmpl = xasprintf("%s/pgolab-%s.XXXXXX", base, srv_flavor(cfg->kind)->name);
        if (!mkdtemp(tmpl)) {
            error("cannot create a datadir in %s: %s", base, strerror(errno));
            free(tmpl);
            return -1;
        }
        s->datadir = tmpl;
        s->created_datadir = dp->init = true;
    } else if (dp->need_mkdir) {
        if (mkdir_p(s->datadir) < 0)
            return -1;
        dp->made_dir = true;
    }
    return 0;
}

/* Start the server (start_once()) on cfg->port, or on a free port picked anew at each
 * attempt while another process takes it first (PORT_ATTEMPTS at most). start_once()'s
 * return: 0, or -1 or -3 (a signal) after a message. */
static int start_on_port(struct server *s, struct server_start_ctx *ctx)
{
    const struct server_config *cfg = ctx->cfg;
    int rc;

    for (int attempt = 1;; attempt++) {
        s->port = cfg->port ? cfg->port : pick_port();
        if (s->port < 0)
            return -1;
        rc = start_once(s, ctx);
        if (rc != 1)
            return rc;
        if (attempt == PORT_ATTEMPTS)
            return error("%s could not bind a port on 127.0.0.1 in %d attempts "
                         "(each taken before it started)", s->binary, PORT_ATTEMPTS);
    }
}

/* After a failed start: stop what runs, remove what this call made (and only that), say so
 * when a signal stopped it (rc -3). */
static void start_undo(struct server *s, const struct datadir_plan *dp, int rc)
{
    /* interrupted: the user is waiting, and a server that never came up has nothing a clean
     * shutdown would keep */
    stop_quietly(s, rc == -3 ? INTERRUPTED_WAIT_S : KILL_WAIT_S);
    if (s->socket_dir_private && s->socket_dir)
        remove_tree(s->socket_dir);
    if (s->datadir) {
        if (s->created_datadir || dp->made_dir) {
            remove_tree(s->datadir);
        } else if (dp->was_empty && dp->initialized) {
            empty_dir(s->datadir);
        } else if (s->child) {
            /* the state file this call wrote (never another server's) */
            char *state = path_join(s->datadir, STATE_FILE);
            unlink(state);
            free(state);
        }
    }
    /* rc == -3, interrupted: the caller says so (s->interrupted) */
}

int server_start(struct server *s, const struct server_config *cfg)
{
    const struct server_flavor *f = srv_flavor(cfg->kind);
    struct server_start_ctx ctx = { .cfg = cfg, .user_args = ARGVEC_INIT };
    struct sig_saved guard;
    struct datadir_plan dp = { 0 };
    int rc = -1;

    memset(s, 0, sizeof(*s));
    srv_guard_begin(&guard);
    s->kind = cfg->kind;
    s->user = xstrdup(cfg->user ? cfg->user : "sbtest");
    s->db = xstrdup(cfg->db ? cfg->db : "sbtest");
    s->password = xstrdup(cfg->password ? cfg->password : "");
    s->has_password = *s->password != '\0';
    s->host = xstrdup("127.0.0.1");
    s->keep_datadir = cfg->keep_datadir;
    ctx.timeout_s = cfg->start_timeout_s > 0 ? cfg->start_timeout_s : DEFAULT_TIMEOUT_S;

    if (start_checks(s, cfg, &ctx) < 0)
        goto fail;
    if (cfg->datadir && check_datadir(s, cfg, &ctx, &dp) < 0)
        goto fail;
    if (srv_got_signal || make_datadir(s, cfg, &dp) < 0)
        goto fail;
    s->log = path_join(s->datadir, LOG_FILE);
    s->keep_log = cfg->keep_log ? xstrdup(cfg->keep_log) : xasprintf("%s.log", s->datadir);
    s->save_log = cfg->save_log ? xstrdup(cfg->save_log) : NULL;
    s->stop_signal = cfg->stop_signal;
    /* under valgrind a backend's start-up takes seconds: a probe that gives up after 2 s
     * leaves a connection that the server still serves (and callgrind counts) */
    s->ping_timeout_s = cfg->wrapper && cfg->wrapper[0] ? PING_TIMEOUT_S * 15 : PING_TIMEOUT_S;
    if (dp.init) {
        /* PostgreSQL's datadir belongs to the server's user, mode 0700 (initdb insists) */
        if (f->private_datadir && srv_give_dir(s->datadir, &ctx.ra) < 0)
            goto fail;
        if (!s->created_datadir)
            empty_dir(s->datadir); /* only pgolab's own files were there: init tools want it
                                    * empty */
        dp.initialized = true;
        if ((rc = init_datadir(s, &ctx)) < 0)
            goto fail;
    }
    if (setup_socket_dir(s, &ctx.ra) < 0 || (f->before_start && f->before_start(s) < 0))
        goto fail;
    if ((rc = start_on_port(s, &ctx)) < 0)
        goto fail;
    if (f->create_account(s, dp.initialized) < 0) {
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
    free(ctx.prefix);
    free(ctx.ra.name);
    return 0;

fail:
    if (srv_got_signal)
        rc = -3;
    start_undo(s, &dp, rc);
    argvec_clear(&ctx.user_args);
    free(ctx.prefix);
    free(ctx.ra.name);
    server_release(s);
    s->interrupted = rc == -3;
    srv_guard_end(&guard);
    return -1;
}

/* ------------------------------------------------------------------ stop */

int server_stop(struct server *s, double timeout_s)
{
    const struct server_flavor *f = srv_flavor(s->kind);
    int rc = 0, st = -1;
    bool gone = true;

    if (timeout_s <= 0)
        timeout_s = DEFAULT_TIMEOUT_S;
    if (s->pid > 0) {
        bool reaped = false;
        if (s->child && waitpid(s->pid, &st, WNOHANG) == s->pid) {
            reaped = true;
            char *how = srv_status_str(st);
            rc = error("%s (pid %d) had already exited (%s) before it was stopped", s->binary,
                       (int)s->pid, how);
            free(how);
            server_log_tail(s, stderr, TAIL_LINES);
        } else if (srv_proc_alive(s)) {
            int sig = s->stop_signal ? s->stop_signal : f->stop_signal;
            if (kill(s->pid, sig) < 0)
                return error("cannot signal %s (pid %d): %s", s->binary, (int)s->pid,
                             strerror(errno));
            bool down = srv_wait_gone(s, timeout_s);
            if (!down && sig != f->stop_signal && kill(s->pid, f->stop_signal) == 0)
                down = srv_wait_gone(s, timeout_s);  /* the family's own shutdown next */
            if (!down) {
                kill(s->pid, SIGKILL);
                gone = srv_wait_gone(s, KILL_WAIT_S);
                if (gone && s->child)
                    srv_wait_child(s->pid, 1, &st); /* reap it */
                rc = error("%s (pid %d) did not shut down within %g s: killed it (SIGKILL)%s; "
                           "not a clean shutdown (an instrumented server writes no profile data)",
                           s->binary, (int)s->pid, timeout_s,
                           gone ? "" : ", and it is still there");
                server_log_tail(s, stderr, TAIL_LINES);
            } else if (s->child && srv_wait_child(s->pid, 1, &st) == 0 && st != -1) {
                reaped = true;
                if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
                    char *how = srv_status_str(st);
                    rc = error("%s (pid %d) exited with %s on shutdown (not clean)", s->binary,
                               (int)s->pid, how);
                    free(how);
                    server_log_tail(s, stderr, TAIL_LINES);
                }
            }
            if (rc == 0 && !reaped && s->log) {
                /* not our child: the log tells whether the shutdown was clean */
                char *tail = file_tail(s->log, 5);
                const char *mark = f->shutdown_mark;
                if (!strstr(tail, mark))
                    warning("%s (pid %d) exited, but its log %s does not end with '%s'", s->binary,
                            (int)s->pid, s->log, mark);
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
    if (s->save_log && s->log && file_copy(s->log, s->save_log) < 0)
        rc = error("cannot copy the server log %s to %s: %s", s->log, s->save_log, strerror(errno));
    if (f->after_stop && s->datadir)
        f->after_stop(s);
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
    argvec_pushf(env, "%s=%s", srv_flavor(s->kind)->password_env, s->password);
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

int server_registry_list(void (*fn)(const struct server *s, void *ctx), void *ctx)
{
    char *dir = server_registry_dir();
    DIR *d = srv_registry_ours(dir) ? opendir(dir) : NULL;
    struct dirent *e;
    int n = 0;
    while (d && (e = readdir(d))) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (e->d_name[0] == '.' || *end || pid <= 0)
            continue;
        char *entry = path_join(dir, e->d_name), *state = NULL;
        struct strbuf datadir = STRBUF_INIT;
        struct server s;
        bool live = false;
        memset(&s, 0, sizeof(s));
        if (strbuf_read_file(&datadir, entry) == 0) {
            strbuf_rtrim(&datadir);
            state = path_join(datadir.buf, STATE_FILE);
            /* the state file must still be there and name the same process */
            live = access(state, F_OK) == 0 && server_state_read(&s, datadir.buf) == 0 &&
                   s.pid == (pid_t)pid && server_status(&s, NULL) != SERVER_GONE;
        }
        if (live) {
            fn(&s, ctx);
            n++;
        } else {
            unlink(entry); /* stopped, or its datadir is gone */
        }
        server_release(&s);
        strbuf_release(&datadir);
        free(state);
        free(entry);
    }
    if (d)
        closedir(d);
    free(dir);
    return n;
}
