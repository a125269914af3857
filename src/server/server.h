/* server: managed MariaDB/MySQL and PostgreSQL server instances for benchmarks: init a
 * datadir, start the server privately (127.0.0.1 + a unix socket), wait until it accepts
 * connections, create the benchmark account, stop it cleanly. The config and its strings are
 * the caller's; a struct server owns its strings (server_release() frees them). This header is the
 * interface of src/server/, which no file of it stands above: lifecycle.c is the lifecycle
 * the families share; each server family is one file (flavor_mysql.c, flavor_pgsql.c) behind
 * the private struct server_flavor (server_flavor.h), found in flavors.c's registry;
 * process.c runs the processes, state.c keeps the state file, options.c turns
 * --server-option values into arguments.
 *
 * Files pgolab keeps in DATADIR (next to the server's own):
 *   pgolab-server.json   state of a running server (server_state_write/_read): how `pgolab
 *                        server status|stop --datadir=DIR` find it later
 *   pgolab-server.log    the server's error log (stdout/stderr too), appended to on restarts
 *   pgolab-pg_hba.conf   PostgreSQL only: the client-auth rules, rewritten at every start
 *   mysql.sock / .s.PGSQL.PORT  the unix socket (or in a /tmp/pgolab-sock.* directory when
 *                        the datadir's path is too long for sun_path's 108 bytes)
 *
 * Who runs the server when pgolab runs as root:
 *   - mariadbd/mysqld runs as root (--user=root): the datadir stays root's, and an instrumented
 *     (PGO) build can write its profile data next to its root-owned objects. It is reachable
 *     only from this machine (127.0.0.1 and the socket in the datadir).
 *   - PostgreSQL refuses to run as root, so initdb and postgres run as the `postgres` system
 *     user (`nobody` if there is none): the datadir is chown'ed to it, and every directory
 *     above it must already be searchable by that user (else an error says which one and how
 *     to fix it; pgolab never changes the permissions of your directories). An instrumented
 *     PostgreSQL build then needs a profile directory that user can write (GCOV_PREFIX /
 *     LLVM_PROFILE_FILE in the environment reach the server).
 * The server runs in its own session (setsid): a Ctrl-C in the terminal never reaches it, so
 * pgolab alone decides when it stops (cleanly). */
#ifndef PGOLAB_SERVER_H
#define PGOLAB_SERVER_H

#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "util/argvec.h"

enum server_kind { SERVER_MYSQL, SERVER_PGSQL };

/* What to start. Zero / NULL fields mean the defaults, so
 * `struct server_config cfg = { .kind = SERVER_PGSQL };` is a complete config. */
struct server_config {
    enum server_kind kind;
    const char *server;     /* server binary (mariadbd/mysqld, or postgres); NULL = the Debian
                             * default (/usr/sbin/mariadbd, else /usr/sbin/mysqld, else PATH;
                             * /usr/lib/postgresql/15/bin/postgres, else the newest
                             * /usr/lib/postgresql/N/bin/postgres, else PATH) */
    const char *prefix;     /* alternative to server: an install prefix; the binary is found in
                             * PREFIX/sbin, bin or libexec (and mariadb-install-db / initdb next
                             * to it). Giving both server and prefix is an error. */
    const char *datadir;    /* NULL = a fresh mkdtemp directory /dev/shm/pgolab-KIND.XXXXXX
                             * (tmpfs: the seeds' "RAM disk"; /tmp when /dev/shm is not
                             * writable), removed again by server_stop() unless keep_datadir.
                             * Given: missing or empty -> created and initialized; a data
                             * directory of this server kind -> started as is (no re-init: the
                             * experiment runner restarts servers between rounds on one
                             * datadir); anything else -> error, nothing touched. A given
                             * datadir is never removed by pgolab. */
    char **options;         /* --server-option values, in order, each "NAME=VALUE" or "NAME"
                             * (see server_option_args()); they come after pgolab's own options
                             * on the server's command line, so they override them */
    int noptions;
    const char *user;       /* account to create: NULL = "sbtest" (sysbench's default) */
    const char *password;   /* its password: NULL or "" = none. With a password the account
                             * must authenticate over TCP (a wrong one is refused); without
                             * one it needs none (PostgreSQL: TCP "trust", so any password,
                             * like sysbench's --pgsql-password default, is accepted). Never
                             * written to argv, the state file or the log. */
    const char *db;         /* database to create: NULL = "sbtest" */
    int port;               /* TCP port on 127.0.0.1; 0 = pick a free one (and retry with
                             * another if the server finds it taken); given and in use = error */
    double start_timeout_s; /* seconds to wait for init and for readiness; <= 0 = 60 */
    bool stop_with_parent;  /* the server gets its shutdown signal (mysql SIGTERM, pgsql SIGINT:
                             * a clean shutdown) when this process dies, even by kill -9
                             * (prctl PR_SET_PDEATHSIG): experiments leave no server behind.
                             * Not for `pgolab server start`, which leaves it running. */
    bool keep_datadir;      /* server_stop() keeps a generated datadir */
    const cpu_set_t *cpus;  /* non-NULL: the server's CPU affinity, set before exec, so its
                             * whole process tree (backends, threads) inherits it */
    const char *keep_log;   /* a server that fails to start has its log copied here, and the
                             * message names the copy (the datadir may be removed); NULL =
                             * DATADIR.log, beside the datadir */
    const char *const *wrapper; /* non-NULL: a NULL-terminated argv prefix the server runs
                             * under (wrapper[0] an absolute path; e.g. valgrind
                             * --tool=callgrind ...). The version check and the datadir's
                             * initialization run the binary alone. */
    int stop_signal;        /* server_stop()'s first signal: 0 = the family's clean shutdown
                             * (mysql SIGTERM, pgsql SIGINT, a fast one that ends sessions);
                             * e.g. SIGTERM for PostgreSQL's smart shutdown, which lets every
                             * session end by itself. Not answered in time: the family's own
                             * signal next, then SIGKILL (an error) */
    const char *save_log;   /* non-NULL: server_stop() copies the log here once every process
                             * of the server is gone, before it removes the datadir (the
                             * profile check reads what instrumented processes printed) */
};

/* A started server (server_start) or one found through its state file (server_state_read).
 * Every string is owned by the struct; server_release() frees them. */
struct server {
    enum server_kind kind;
    pid_t pid;                   /* the server process (mariadbd / the postmaster); 0 = none */
    unsigned long long starttime;/* its start time (/proc/PID/stat field 22, clock ticks since
                                  * boot): tells the server from a later process that reused
                                  * the pid */
    int port;                    /* TCP port on host */
    char *host;                  /* "127.0.0.1" */
    char *socket;                /* the unix socket file */
    char *socket_dir;            /* the directory holding it (libpq's host for a socket) */
    bool socket_dir_private;     /* socket_dir is a /tmp/pgolab-sock.* dir of its own
                                  * (server_stop removes it) */
    char *datadir;               /* absolute */
    char *log;                   /* DATADIR/pgolab-server.log */
    char *keep_log;              /* where a failed start copies the log (server_config) */
    char *save_log;              /* where server_stop() copies the log (server_config) */
    int stop_signal;             /* server_config.stop_signal */
    int ping_timeout_s;          /* one readiness connection attempt: PING_TIMEOUT_S, longer
                                  * under a wrapper (valgrind: a start-up 30-100x slower) */
    char *binary;                /* absolute path of the server binary */
    char *version;               /* e.g. "10.11.19", "15.20" (from `BINARY --version`) */
    char *flavor;                /* "MariaDB", "MySQL" or "PostgreSQL" */
    char *user, *db;             /* the benchmark account and database */
    char *password;              /* "" = none; kept in memory only (not in the state file:
                                  * a server read back from it has "") */
    bool has_password;           /* an account password was configured */
    bool created_datadir;        /* datadir was generated (mkdtemp) by pgolab */
    bool keep_datadir;           /* server_stop keeps a generated datadir */
    bool child;                  /* pid is this process's child (started here) rather than
                                  * found through the state file */
    bool interrupted;            /* server_start gave up because of SIGINT/SIGTERM */
};

/* Start a server: resolve and check the binary (`BINARY --version` must name the right
 * server), prepare the datadir (see server_config.datadir), initialize it when new
 * (mariadb-install-db --no-defaults --auth-root-authentication-method=normal, or mysqld
 * --initialize-insecure for Oracle MySQL; initdb -U postgres -E UTF8 --locale=C), start the
 * server with the options below, wait until it accepts connections (bounded by
 * start_timeout_s; a server that exits at once fails at once), then as the administrator over
 * the socket create the database and the account (idempotent; an existing account gets the
 * configured password) and write the state file. A freshly initialized MariaDB/MySQL loses its
 * passwordless root accounts reachable over TCP (root@localhost, over the socket, stays);
 * PostgreSQL's TCP rule admits the benchmark account (by password when it has one) and other
 * roles only by password, so the postgres superuser is reachable over the socket only.
 *
 * Fixed server options (a --server-option of the same name overrides them, except the ones
 * pgolab manages: datadir, port, socket, bind address, pid file, log, user):
 *   mariadbd/mysqld: --no-defaults --datadir --port --bind-address=127.0.0.1 --socket
 *     --pid-file=DATADIR/mysqld.pid --tmpdir=DATADIR (a starting MariaDB deletes the #sql*
 *     files of its tmpdir: a shared /tmp broke concurrent bootstraps)
 *     --log-error=DATADIR/pgolab-server.log --skip-log-bin (no binary log: sysbench numbers
 *     without replication overhead) --skip-name-resolve (no DNS on connect)
 *     --max-connections=1000 (the default 151 is below the thread counts benchmarks use),
 *     --user=root when running as root, --loose-mysqlx=OFF for MySQL >= 8 (no second fixed port
 *     shared by all instances).
 *   postgres: -D DATADIR -p PORT -c listen_addresses=127.0.0.1 -c unix_socket_directories=DIR
 *     -c logging_collector=off (stderr goes to the log) -c hba_file=DATADIR/pgolab-pg_hba.conf
 *     -c max_connections=1000.
 *
 * s is overwritten (no need to initialize it). Returns 0 with s filled (s->child set: stop it
 * with server_stop(), free it with server_release()), or -1 after printing a one-line error
 * (and, when the server failed to start, the tail of its log), with nothing left running,
 * every file pgolab created removed again (a generated datadir, or a given one that was
 * missing; a given empty one is emptied again; an existing data directory keeps everything,
 * its log included) and s released (all zero) except s->interrupted. SIGINT/SIGTERM while it
 * works (it catches them for the whole call, init and readiness wait included): the
 * same cleanup, then the caller's signal dispositions are restored and the signal re-raised
 * (so the caller's handler sees it; with the default disposition the process then dies),
 * s->interrupted is set and -1 returned, with nothing printed: the caller says it was
 * interrupted, in its own words (one line for the user, not two). Not thread-safe (signal
 * handlers, libmariadb init). */
int server_start(struct server *s, const struct server_config *cfg);

/* Clean, fast shutdown: SIGTERM to mariadbd/mysqld, SIGINT (fast shutdown) to postgres; wait
 * up to timeout_s seconds (<= 0: 60) for it to exit (with server_config.stop_signal, that
 * signal first, the family's after another timeout_s). Only when it does not exit in time is it
 * killed (SIGKILL) and that reported as an error: instrumented (PGO) servers write their
 * profile data only on a clean exit. A child (s->child) that exits with a non-zero status or a
 * signal, or had already exited, is an error too; for a server found through the state file
 * (not our child: no exit status), a log that does not end with the server's shutdown message
 * is a warning. Then it waits for the rest of the server's process group (backends, a
 * bootstrap) to be gone, and only then removes files: the private socket directory, and the
 * datadir when pgolab generated it (s->created_datadir) unless s->keep_datadir; otherwise just
 * the state file. A process that survives SIGKILL keeps every file (-1). s->pid 0, or a
 * process already gone: no signal, only the cleanup. Bounded: at most 2 timeout_s + 20 s.
 * 0, or -1 with a message (plus the log tail). */
int server_stop(struct server *s, double timeout_s);

/* The user a managed server of kind runs as when pgolab starts it: the family's own user
 * (PostgreSQL's postgres) when pgolab is root, else pgolab's own user (MariaDB runs as root
 * with --user=root). *name is caller-owned. 0, or -1 with a message (no such user). */
int server_run_user(enum server_kind kind, uid_t *uid, char **name);

/* Print the last `lines` lines of the server's log on out, under a header naming the file. */
void server_log_tail(const struct server *s, FILE *out, int lines);

/* Append the client options that reach this server, in sysbench's spelling, for child
 * `pgolab bench` / sysbench processes: --db-driver=mysql --mysql-host=127.0.0.1
 * --mysql-port=N --mysql-user=U --mysql-db=D (or --db-driver=pgsql --pgsql-*). TCP, not the
 * socket (sysbench prefers --mysql-socket over the host when both are given). Never the
 * password: see server_client_env(). Returns the number of strings appended. */
int server_client_args(const struct server *s, struct argvec *out);

/* Append the environment entry that carries the password to a child ("MYSQL_PWD=..." or
 * "PGPASSWORD=..."), when there is one. Returns the number appended (0 or 1). */
int server_client_env(const struct server *s, struct argvec *env);

/* State of a server found by server_state_read (or started here). */
enum server_state {
    SERVER_GONE,      /* no such process (or the pid now belongs to another process) */
    SERVER_STARTING,  /* the process lives but does not accept connections */
    SERVER_RUNNING,   /* alive and accepting connections as the administrator */
};

/* Check the process and connect to it over its socket (bounded: 2 s). *version (may be NULL)
 * gets the version string the server reports (e.g. "10.11.19-MariaDB-0+deb12u1", "15.20"),
 * caller frees; NULL when not running. */
enum server_state server_status(const struct server *s, char **version);

/* Write DATADIR/pgolab-server.json (atomically: a temporary file renamed over it): kind,
 * flavor, pid, starttime, port, host, socket, socket_dir, datadir, log, binary, version,
 * user, db, has_password, created_datadir, keep_datadir, started_at. 0 or -1 with a message. */
int server_state_write(const struct server *s);

/* Read DATADIR/pgolab-server.json into s (overwritten; s->child false, s->password "").
 * -1 with a message naming the file when it is missing or not a pgolab state file. */
int server_state_read(struct server *s, const char *datadir);

/* The directory of the server registry: $PGOLAB_RUNTIME_DIR, else $TMPDIR (or /tmp)
 * /pgolab-servers-UID (caller frees). server_state_write() adds a file per server there. */
char *server_registry_dir(void);
/* Call fn for every registered server that still runs (state file present, same pid, process
 * alive); stale entries are removed. Returns the number of servers. */
int server_registry_list(void (*fn)(const struct server *s, void *ctx), void *ctx);

/* Free the strings of s and zero it (does not stop anything). */
void server_release(struct server *s);

/* "mysql" / "pgsql" (the --db-driver spelling). */
const char *server_kind_name(enum server_kind kind);
/* Parse a --db-driver value: mysql (also mariadb) or pgsql (also postgresql, postgres).
 * 0, or -1 without a message. */
int server_kind_parse(const char *name, enum server_kind *kind);

/* Translate one --server-option value into server arguments, appended to out:
 * mysql: "NAME=VALUE" -> "--NAME=VALUE", "NAME" -> "--NAME";
 * pgsql: "NAME=VALUE" -> "-c", "NAME=VALUE" (a bare NAME is an error);
 * a value starting with "--" is passed as it is. Options pgolab manages (datadir, port,
 * socket, bind-address/listen_addresses, unix_socket_directories, pid-file, log-error, user,
 * data_directory, logging_collector) are refused, '-' and '_' alike. 0, or -1 with a message
 * naming --server-option=OPT. */
int server_option_args(enum server_kind kind, const char *opt, struct argvec *out);
/* The same, with what in front of opt in its messages instead of "--server-option=" (e.g.
 * "--variant-server-option=B:"), so an error names the option as the user wrote it. */
int server_option_args_as(enum server_kind kind, const char *opt, const char *what,
                          struct argvec *out);
/* Whether options a and b ("NAME=VALUE", "NAME", "--NAME=VALUE") set the same server option,
 * their names compared as the servers compare them: '-' and '_' alike, case ignored, no
 * leading dashes or MariaDB "loose-" prefix. */
bool server_option_same(const char *a, const char *b);
/* A server's options for one variant into out (copies): the global ones (--server-option)
 * that none of the variant's own options sets, in order, then the variant's own, so a
 * variant's option wins over a global one of the same name. */
void server_options_merge(char *const *global, int nglobal, char *const *own, int nown,
                          struct argvec *out);

/* Parse the output of `BINARY --version`: the server's version ("10.11.19", "8.0.33",
 * "15.20") into *version and its flavor ("MariaDB", "MySQL", "PostgreSQL") into *flavor
 * (both caller-owned). -1 (nothing allocated) when the text is not the --version output of a
 * server of that kind: mysql needs "mariadb" or "mysql" and "Ver N" and no "Distrib" (the
 * clients say Distrib); pgsql needs "postgres (PostgreSQL) N". */
int server_parse_version(enum server_kind kind, const char *text, char **version, char **flavor);
/* The release series of a server's version as variants name it ("PostgreSQL 15" of
 * "PostgreSQL 15.18", "PostgreSQL 9.6" of "PostgreSQL 9.6.24", "MariaDB 10.11" of "MariaDB
 * 10.11.19", "MySQL 8.0" of "MySQL 8.0.33"): what a release of its own changes. NULL when text
 * is not "FLAVOR N...". Caller frees. */
char *server_version_series(const char *text);

/* What a directory holds, for server_start's datadir rules. pgolab's own files
 * (pgolab-server.*, pgolab-pg_hba.conf) do not count: a directory with only those is EMPTY. */
enum server_datadir {
    DATADIR_MISSING,   /* does not exist */
    DATADIR_NOT_DIR,   /* exists and is not a directory */
    DATADIR_EMPTY,
    DATADIR_MYSQL,     /* has mysql/ and ibdata1, mysql.ibd or aria_log_control */
    DATADIR_PGSQL,     /* has PG_VERSION and global/ */
    DATADIR_OTHER,     /* anything else, or unreadable */
};
enum server_datadir server_datadir_kind(const char *dir);

#endif
