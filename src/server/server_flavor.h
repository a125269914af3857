/* server_flavor: the server-family interface of managed servers, as db/driver.h is for the
 * client drivers: a const table of what differs between MariaDB/MySQL (flavor_mysql.c) and
 * PostgreSQL (flavor_pgsql.c), plus the helpers src/server/'s files share. Private to src/server/
 * (the public API is server.h; nothing outside includes this).
 *
 * Who owns what: lifecycle.c owns the lifecycle and calls the table (binary resolution,
 * datadir rules, start in a session of its own, readiness wait, account hook, bounded clean
 * stop, log tail, client args/env); flavors.c is the family registry and the path helpers;
 * process.c runs the processes (root and run_user handling, spawn, bounded waits); state.c
 * is DATADIR/pgolab-server.json and the registry's files. The files call down in that order
 * (lifecycle.c, then state.c, options.c and process.c, then flavors.c), never up. A family
 * file owns its binary names, --version parsing, init tool, command line, administrator
 * connection, account statements and any extra file it keeps in the datadir; it never forks,
 * waits or removes files itself except through the helpers below. Strings a table operation
 * returns are the caller's to free.
 *
 * Adding a server family: a file with a `const struct server_flavor server_NAME_flavor`, a
 * line for it in flavors.c's registry (srv_flavors, SRV_FLAVORS), and (the public enums) its
 * SERVER_NAME kind and DATADIR_NAME datadir kind in server.h. */
#ifndef PGOLAB_SERVER_FLAVOR_H
#define PGOLAB_SERVER_FLAVOR_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "server/server.h"
#include "util/argvec.h"
#include "util/signals.h"
#include "util/strbuf.h"

#define STATE_FILE "pgolab-server.json"
#define LOG_FILE "pgolab-server.log"
#define MAX_CONNECTIONS 1000
#define PING_TIMEOUT_S 2         /* one readiness / status connection attempt */

/* The timeout of one readiness or status connection to s: its own (longer for a server
 * started under a wrapper, lifecycle.c), else PING_TIMEOUT_S. */
static inline int srv_ping_timeout(const struct server *s)
{
    return s->ping_timeout_s > 0 ? s->ping_timeout_s : PING_TIMEOUT_S;
}
#define SETUP_TIMEOUT_S 30       /* the account statements */
#define KILL_WAIT_S 10.0         /* after SIGKILL, and for a failed start's clean stop */
#define INTERRUPTED_WAIT_S 2.0   /* an interrupted start's clean stop, before SIGKILL */
#define DEFAULT_TIMEOUT_S 60.0

/* Who runs the server's processes. */
struct srv_run_as {
    bool drop;   /* setuid/setgid to uid/gid in the child (pgolab is root) */
    uid_t uid;
    gid_t gid;
    char *name;  /* user name, for messages */
};

/* What server_start knows while it works, for the family's operations. */
struct server_start_ctx {
    const struct server_config *cfg;
    struct srv_run_as ra;     /* who runs the server (srv_run_identity) */
    struct argvec user_args;  /* translated --server-option values */
    char *prefix;             /* cfg->prefix made absolute (an install prefix), or NULL */
    double timeout_s;         /* for init and for readiness */
};

/* One server family. Data members first, then operations (all required unless marked). */
struct server_flavor {
    enum server_kind kind;
    const char *name;              /* "mysql": --db-driver spelling, state file "kind",
                                    * --NAME-user */
    const char *const *aliases;    /* more names server_kind_parse() accepts; NULL-terminated */
    const char *label;             /* "MariaDB/MySQL": the family in messages */
    const char *package;           /* Debian package named when no server binary is found */
    const char *const *binaries;   /* server binary names under PREFIX/sbin, bin, libexec */
    const char *binaries_label;    /* the same for a message: "mariadbd or mysqld" */
    const char *default_binary;    /* binary and flavor of a state file that names none */
    const char *default_flavor;
    enum server_datadir datadir;   /* what server_datadir_kind() calls this family's datadir */
    const char *own_file;          /* a file of pgolab's in the datadir besides pgolab-server.*
                                    * (does not make a directory non-empty), or NULL */
    const char *socket_name_max;   /* longest socket file name: does DATADIR/NAME fit sun_path? */
    const char *admin_user;        /* the administrator account; never the benchmark one */
    const char *run_user;          /* as root, run as this user ('nobody' if there is none);
                                    * NULL = the server runs as root */
    bool private_datadir;          /* a new datadir is given to the server's user, mode 0700 */
    const char *password_env;      /* environment entry with the password for a child */
    int stop_signal;               /* clean shutdown (also the PR_SET_PDEATHSIG signal) */
    const char *shutdown_mark;     /* the log says this after a clean shutdown */
    const char *const *managed_options; /* --server-option names pgolab sets itself (canonical:
                                         * lower case, '-'), refused; NULL-terminated */
    const char *option_hint;       /* after "expected NAME=VALUE" in --server-option errors */

    /* The server binary when neither --server nor --prefix is given (absolute), or NULL. */
    char *(*find_binary)(void);
    /* `BINARY --version` output (not NULL) -> version and flavor (see server_parse_version). */
    int (*parse_version)(const char *text, char **version, char **flavor);
    /* Is dir (not empty) a data directory of this family? */
    bool (*is_datadir)(const char *dir);
    /* Append the server arguments of a --server-option "NAME[=VALUE]" (not "--..."), or -1
     * with a message that names it as WHAT followed by opt ("--server-option=NAME"). */
    int (*option_arg)(const char *opt, const char *what, struct argvec *out);
    /* Optional: refuse a benchmark account name (-1 with a message). */
    int (*check_user)(const char *user);
    /* The init command of an empty datadir: argv (argv[0] the tool, absolute) and extra
     * environment entries; -1 with a message when there is no tool. */
    int (*init_command)(const struct server *s, const struct server_start_ctx *ctx,
                        struct argvec *argv, struct argvec *env);
    /* Optional: write what every start needs (s->socket_dir is set), -1 with a message. */
    int (*before_start)(const struct server *s);
    /* The unix socket file in socket_dir for port (caller frees). */
    char *(*socket_path)(const char *socket_dir, int port);
    /* Append the server's options after argv[0] (s->port, s->socket and s->log are set). */
    void (*server_args)(const struct server *s, const struct server_start_ctx *ctx,
                        struct argvec *argv);
    /* Does it accept the administrator over the socket (bounded: PING_TIMEOUT_S)? *version
     * (may be NULL) gets the version the server reports. */
    bool (*ping)(const struct server *s, char **version);
    /* As the administrator: the database and the benchmark account (idempotent; fresh = the
     * datadir was just initialized). 0, or -1 with a message. */
    int (*create_account)(struct server *s, bool fresh);
    /* Optional: after the server's process group is gone, before files are removed. */
    void (*after_stop)(struct server *s);
};

extern const struct server_flavor server_mysql_flavor, server_pgsql_flavor;

/* ------------------------------------------------------------------ flavors.c */

/* Every server family (one file each), in the order server_datadir_kind() tries their
 * datadir markers: PostgreSQL's first. */
#define SRV_FLAVORS 2
extern const struct server_flavor *const srv_flavors[SRV_FLAVORS];

/* The family of kind. */
const struct server_flavor *srv_flavor(enum server_kind kind);

bool srv_is_exec(const char *p);
char *srv_dir_of(const char *path);              /* the directory part ("." / "/"); caller frees */
const char *srv_base_name(const char *path);
char *srv_find_in_path(const char *name);  /* find_in_path(), absolute; caller frees */
bool srv_exists(const char *dir, const char *name);  /* dir/name exists (lstat) */
bool srv_has_dir(const char *dir, const char *name); /* dir/name is a directory */

/* ------------------------------------------------------------------ lifecycle.c */

/* The version "N.N[.N...]" at v into *version and fl into *flavor; -1 (nothing allocated)
 * when v does not start with one. */
int srv_take_version(const char *v, const char *fl, char **version, char **flavor);
/* Keep a helper tool's output in the server log, under a "---- pgolab: COMMAND" line. */
void srv_append_to_log(const struct server *s, const char *const *argv, const struct strbuf *out);

/* ------------------------------------------------------------------ state.c */

/* Whether dir is a registry only this user can change: a real directory (not a symlink) of
 * ours, writable by nobody else. In /tmp another user could have made it first. */
bool srv_registry_ours(const char *dir);

/* ------------------------------------------------------------------ process.c */

struct srv_spawn_opts {
    const char *const *argv;      /* argv[0]: an absolute path */
    const char *const *env;       /* extra NAME=VALUE entries, or NULL */
    const char *cwd;              /* or NULL */
    int out_fd;                   /* the child's stdout and stderr (-1 = /dev/null) */
    const struct srv_run_as *ra;  /* or NULL */
    int pdeathsig;                /* sent to the child when the forking thread dies (0 = none) */
    const cpu_set_t *cpus;        /* the child's CPU affinity, or NULL */
};

void srv_sleep_ms(int ms);
uint64_t srv_deadline_after(double s);  /* now_ns() + s seconds */
char *srv_status_str(int st);           /* "exit status N" / "signal N (NAME)"; caller frees */

/* SIGINT/SIGTERM caught while server_start works (between srv_guard_begin and _end), else 0. */
extern volatile sig_atomic_t srv_got_signal;
void srv_guard_begin(struct sig_saved *g);
void srv_guard_end(struct sig_saved *g);  /* restore, then re-raise a caught signal */

/* Start argv in a session of its own: the pid, or -1 with a message. */
pid_t srv_spawn(const struct srv_spawn_opts *o);
/* Wait up to timeout_s for child pid: 0 with *status (-1: reaped elsewhere), or -1 (running). */
int srv_wait_child(pid_t pid, double timeout_s, int *status);
/* Wait up to timeout_s for process group pgid to empty; SIGKILL what is left then. */
void srv_wait_group_gone(pid_t pgid, double timeout_s);
/* The pids of parent's living children (at most max, into out): PostgreSQL's children leave
 * the postmaster's process group (setsid), so a group signal does not reach them. Returns
 * how many. */
int srv_children(pid_t parent, pid_t *out, int max);
/* Run o->argv to completion, its output in *out: exit status (0..255, 128+signal), -1 not
 * started (message printed), -2 timed out, -3 interrupted (srv_got_signal). */
int srv_run_capture(struct srv_spawn_opts *o, struct strbuf *out, double timeout_s);
/* /proc/PID/stat start time (0: no such process) and state letter (state may be NULL). */
unsigned long long srv_proc_starttime(pid_t pid, char *state);
/* s->pid is alive and still the process s->starttime names (not a zombie). */
bool srv_proc_alive(const struct server *s);
/* Poll until s's process is gone or timeout_s passed: gone? */
bool srv_wait_gone(const struct server *s, double timeout_s);

/* Who runs a server of family f (as root with f->run_user: that user; ra->name allocated). */
int srv_run_identity(const struct server_flavor *f, struct srv_run_as *ra);
/* Every directory above dir must be searchable by ra's user: 0, or -1 with the fix named. */
int srv_check_reachable(const char *dir, const struct srv_run_as *ra);
/* Hand a directory to ra's user: owner (when dropping root) and mode 0700. */
int srv_give_dir(const char *dir, const struct srv_run_as *ra);

#endif
