/* server_flavor: private to src/server/, what its files share (never included elsewhere; the
 * public API is server.h). server.c is the lifecycle of a managed server (binary, datadir,
 * start, readiness, account, stop); process.c runs its processes (who runs them as root, the
 * session of their own, bounded waits); state.c is DATADIR/pgolab-server.json. The helpers
 * below are theirs; the callers own every string and pid they pass. */
#ifndef PGOLAB_SERVER_FLAVOR_H
#define PGOLAB_SERVER_FLAVOR_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "server/server.h"
#include "util/signals.h"
#include "util/strbuf.h"

#define STATE_FILE "pgolab-server.json"
#define LOG_FILE "pgolab-server.log"
#define KILL_WAIT_S 10.0         /* after SIGKILL, and for a failed start's clean stop */
#define DEFAULT_TIMEOUT_S 60.0

/* ------------------------------------------------------------------ process.c */

/* Who runs the server's processes. */
struct srv_run_as {
    bool drop;   /* setuid/setgid to uid/gid in the child (pgolab is root) */
    uid_t uid;
    gid_t gid;
    char *name;  /* user name, for messages */
};

struct srv_spawn_opts {
    const char *const *argv;      /* argv[0]: an absolute path */
    const char *const *env;       /* extra NAME=VALUE entries, or NULL */
    const char *cwd;              /* or NULL */
    int out_fd;                   /* the child's stdout and stderr (-1 = /dev/null) */
    const struct srv_run_as *ra;  /* or NULL */
    int pdeathsig;                /* sent to the child when the forking thread dies (0 = none) */
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
/* Run o->argv to completion, its output in *out: exit status (0..255, 128+signal), -1 not
 * started (message printed), -2 timed out, -3 interrupted (srv_got_signal). */
int srv_run_capture(struct srv_spawn_opts *o, struct strbuf *out, double timeout_s);
/* /proc/PID/stat start time (0: no such process) and state letter (state may be NULL). */
unsigned long long srv_proc_starttime(pid_t pid, char *state);
/* s->pid is alive and still the process s->starttime names (not a zombie). */
bool srv_proc_alive(const struct server *s);
/* Poll until s's process is gone or timeout_s passed: gone? */
bool srv_wait_gone(const struct server *s, double timeout_s);

/* Who runs the server of this kind (as root: maybe another user; ra->name is allocated). */
int srv_run_identity(enum server_kind kind, struct srv_run_as *ra);
/* Every directory above dir must be searchable by ra's user: 0, or -1 with the fix named. */
int srv_check_reachable(const char *dir, const struct srv_run_as *ra);
/* Hand a directory to ra's user: owner (when dropping root) and mode 0700. */
int srv_give_dir(const char *dir, const struct srv_run_as *ra);

/* ------------------------------------------------------------------ server.c */

char *srv_dir_of(const char *path);  /* the directory part ("." / "/"); caller frees */

#endif
