/* process: the processes of a managed server (see server.h for who runs what as root and
 * server_flavor.h for the helpers' contracts): who runs them (srv_run_identity: a family with a
 * run_user drops root to it; the directories that user must reach), starting one in a session
 * of its own (fork + setsid [+ setgid/setuid], argv only, a clean signal state), bounded waits
 * for a child, a pid or a whole process group, running a helper tool to completion with its
 * output captured, /proc identity checks, and the SIGINT/SIGTERM guard of server_start. It
 * owns no server state: callers pass what to run and keep the pids. */
#include "server/server_flavor.h"
#include "util/pidstat.h"
#include "util/signals.h"
#include "util/strbuf.h"
#include "util/subprocess.h"
#include "util/util.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------ time */

void srv_sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

uint64_t srv_deadline_after(double s)
{
    return now_ns() + (uint64_t)(s * 1e9);
}

/* "exit status N" / "signal N (NAME)" for a wait status. */
char *srv_status_str(int st)
{
    if (WIFEXITED(st))
        return xasprintf("exit status %d", WEXITSTATUS(st));
    if (WIFSIGNALED(st))
        return xasprintf("signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
    return xasprintf("wait status %d", st);
}

/* ------------------------------------------------------------------ signals while starting */

volatile sig_atomic_t srv_got_signal;

static void on_signal(int sig)
{
    srv_got_signal = sig;
}

/* Catch SIGINT/SIGTERM (no SA_RESTART: sleeps and polls return early) while server_start
 * works, so it can stop what it started before the signal takes effect. */
void srv_guard_begin(struct sig_saved *g)
{
    srv_got_signal = 0;
    sig_catch(on_signal, g);
}

/* Restore the caller's dispositions and hand a caught signal on to them. */
void srv_guard_end(struct sig_saved *g)
{
    int sig = srv_got_signal;
    sig_restore(g);
    srv_got_signal = 0;
    if (sig)
        raise(sig);
}

/* ------------------------------------------------------------------ processes */

/* environ with the NAME=VALUE entries of extra added (replacing the same NAME). The array
 * is new (free it), its strings are environ's and extra's. */
static char **build_env(const char *const *extra)
{
    extern char **environ;
    size_t n = 0, k = 0, ne = 0;
    while (environ[n])
        n++;
    while (extra && extra[ne])
        ne++;
    char **env = xcalloc(n + ne + 1, sizeof(char *));
    for (size_t i = 0; i < n; i++) {
        bool replaced = false;
        for (size_t j = 0; j < ne && !replaced; j++) {
            size_t len = strcspn(extra[j], "=");
            replaced = !strncmp(environ[i], extra[j], len) && environ[i][len] == '=';
        }
        if (!replaced)
            env[k++] = environ[i];
    }
    for (size_t j = 0; j < ne; j++)
        env[k++] = (char *)extra[j];
    env[k] = NULL;
    return env;
}

/* fork + exec in a new session (setsid: terminal signals do not reach it), stdin /dev/null,
 * every other descriptor closed at exec, default signal dispositions and an empty mask
 * (libmariadb ignores SIGPIPE in pgolab; that must not leak into the server). The pid, or -1
 * with a message when the program could not be started. */
pid_t srv_spawn(const struct srv_spawn_opts *o)
{
    int errpipe[2];
    struct { int err; int stage; } msg = { 0, 0 };
    static const char *const stages[] = { "exec", "setgid/setuid", "chdir" };
    pid_t pid;

    if (pipe2(errpipe, O_CLOEXEC) < 0)
        return error("pipe: %s", strerror(errno));
    /* the child's environment is built here: after fork (the caller may have threads) the
     * child only makes async-signal-safe calls */
    char **envp = build_env(o->env);
    pid_t parent = getpid();
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid < 0) {
        int e = errno;
        close(errpipe[0]);
        close(errpipe[1]);
        free(envp);
        return error("fork: %s", strerror(e));
    }
    if (pid == 0) {
        static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGCHLD,
                                    SIGUSR1, SIGUSR2 };
        sigset_t none;
        int fd;
        close(errpipe[0]);
        for (size_t i = 0; i < ARRAY_SIZE(sigs); i++)
            signal(sigs[i], SIG_DFL);
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        setsid();
        fd = open("/dev/null", O_RDWR);
        if (fd >= 0) {
            dup2(fd, STDIN_FILENO);
            if (o->out_fd < 0) {
                dup2(fd, STDOUT_FILENO);
                dup2(fd, STDERR_FILENO);
            }
            if (fd > 2)
                close(fd);
        }
        if (o->out_fd >= 0) {
            dup2(o->out_fd, STDOUT_FILENO);
            dup2(o->out_fd, STDERR_FILENO);
        }
        if (close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) < 0)
            for (int i = 3; i < 4096; i++)
                fcntl(i, F_SETFD, FD_CLOEXEC);
        if (o->ra && o->ra->drop) {
            msg.stage = 1;
            if (setgroups(1, &o->ra->gid) < 0 || setgid(o->ra->gid) < 0 || setuid(o->ra->uid) < 0)
                goto fail;
        }
        /* after setuid, which clears it; a parent already gone would never send it */
        if (o->pdeathsig && (prctl(PR_SET_PDEATHSIG, o->pdeathsig) < 0 || getppid() != parent))
            _exit(127);
        if (o->cpus && sched_setaffinity(0, sizeof(*o->cpus), o->cpus) < 0)
            goto fail;
        if (o->cwd && chdir(o->cwd) < 0) {
            msg.stage = 2;
            goto fail;
        }
        msg.stage = 0;
        execve(o->argv[0], (char *const *)o->argv, envp);
    fail:
        msg.err = errno;
        if (write(errpipe[1], &msg, sizeof(msg)) < 0)
            _exit(127);
        _exit(127);
    }
    close(errpipe[1]);
    free(envp);
    ssize_t got;
    do
        got = read(errpipe[0], &msg, sizeof(msg));
    while (got < 0 && errno == EINTR);
    close(errpipe[0]);
    if (got == (ssize_t)sizeof(msg)) {
        char *cmd = subprocess_argv_str(o->argv);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
        error("cannot run %s%s%s: %s failed: %s", cmd, o->ra && o->ra->drop ? " as user " : "",
              o->ra && o->ra->drop ? o->ra->name : "", stages[msg.stage], strerror(msg.err));
        free(cmd);
        return -1;
    }
    return pid;
}

/* Wait up to timeout_s for child pid to exit: 0 with *status, or -1 (still running). */
int srv_wait_child(pid_t pid, double timeout_s, int *status)
{
    uint64_t deadline = srv_deadline_after(timeout_s);
    for (;;) {
        pid_t w = waitpid(pid, status, WNOHANG);
        if (w == pid)
            return 0;
        if (w < 0 && errno != EINTR) {
            *status = -1;
            return 0; /* not ours any more (reaped elsewhere): gone */
        }
        if (now_ns() >= deadline)
            return -1;
        srv_sleep_ms(10);
    }
}

/* The /proc/N/stat of directory entry N of /proc. false when it is not a process directory
 * or the process is gone. */
static bool proc_stat(const char *name, struct proc_pid_stat *st)
{
    return name[0] >= '1' && name[0] <= '9' && pidstat_read(NULL, atol(name), st) == 0;
}

/* Is a live (not zombie) process left in process group pgid? Everything pgolab starts leads
 * a session of its own (setsid), so its pid is the group of all it spawned (mariadb-install-db
 * and its bootstrap mariadbd, the postmaster and its backends). A scan of /proc/N/stat. */
static bool group_alive(pid_t pgid)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    bool found = false;
    if (!d)
        return kill(-pgid, 0) == 0;
    while (!found && (e = readdir(d))) {
        struct proc_pid_stat st;
        found = proc_stat(e->d_name, &st) && st.pgrp == pgid && st.state != 'Z' &&
                st.state != 'X';
    }
    closedir(d);
    return found;
}

int srv_children(pid_t parent, pid_t *out, int max)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    int n = 0;
    assert(max >= 0);
    if (!d)
        return 0;
    while (n < max && (e = readdir(d))) {
        struct proc_pid_stat st;
        if (proc_stat(e->d_name, &st) && st.ppid == parent && st.state != 'Z')
            out[n++] = (pid_t)st.pid;
    }
    closedir(d);
    return n;
}

/* Wait up to timeout_s for process group pgid to empty; SIGKILL what is left then (and wait
 * KILL_WAIT_S more). Files in the datadir are removed only after this: a bootstrap or backend
 * still exiting would write into it. The group id cannot be reused while it has members, so
 * the signal reaches only what pgolab started. */
void srv_wait_group_gone(pid_t pgid, double timeout_s)
{
    uint64_t deadline = srv_deadline_after(timeout_s);
    if (pgid <= 1)
        return;
    while (group_alive(pgid)) {
        if (now_ns() >= deadline) {
            kill(-pgid, SIGKILL);
            deadline = srv_deadline_after(KILL_WAIT_S);
            while (group_alive(pgid) && now_ns() < deadline)
                srv_sleep_ms(20);
            return;
        }
        srv_sleep_ms(20);
    }
}

/* Run a program to completion (the init step) with its output collected in *out, bounded by
 * timeout_s and given up on SIGINT/SIGTERM (the whole process group is killed then).
 * Returns its exit status (0..255, 128+signal), -1 when it could not be started (message
 * printed), -2 timed out, -3 interrupted. */
int srv_run_capture(struct srv_spawn_opts *o, struct strbuf *out, double timeout_s)
{
    int pfd[2], st, result = 0;
    uint64_t deadline = srv_deadline_after(timeout_s);
    pid_t pid;

    if (pipe2(pfd, O_CLOEXEC) < 0)
        return error("pipe: %s", strerror(errno));
    o->out_fd = pfd[1];
    pid = srv_spawn(o);
    close(pfd[1]);
    o->out_fd = -1;
    if (pid < 0) {
        close(pfd[0]);
        return -1;
    }
    for (;;) {
        struct pollfd p = { .fd = pfd[0], .events = POLLIN };
        if (srv_got_signal) {
            result = -3;
            break;
        }
        if (now_ns() >= deadline) {
            result = -2;
            break;
        }
        int r = poll(&p, 1, 200);
        if (r > 0) {
            char buf[4096];
            ssize_t n = read(pfd[0], buf, sizeof(buf));
            if (n > 0)
                strbuf_add(out, buf, (size_t)n);
            else if (n == 0 || (errno != EINTR && errno != EAGAIN))
                break;
        }
    }
    close(pfd[0]);
    if (result == 0) {
        /* output closed: the program ends now (anything it left behind holds no pipe) */
        double left = (double)(deadline > now_ns() ? deadline - now_ns() : 0) / 1e9;
        if (srv_wait_child(pid, left > 1 ? left : 1, &st) == 0) {
            srv_wait_group_gone(pid, 5);
            return st < 0 ? 0 : WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        }
        result = -2;
    }
    kill(-pid, SIGTERM);
    srv_wait_group_gone(pid, 5);
    if (srv_wait_child(pid, 1, &st) < 0) {
        kill(-pid, SIGKILL);
        srv_wait_child(pid, KILL_WAIT_S, &st);
    }
    return result;
}

/* /proc/PID/stat: the start time (field 22, clock ticks since boot) and the state letter;
 * 0 when there is no such process. */
unsigned long long srv_proc_starttime(pid_t pid, char *state)
{
    struct proc_pid_stat st;
    (void)pidstat_read(NULL, pid, &st); /* all zero when there is no such process */
    if (state)
        *state = st.state;
    return st.starttime;
}

/* The server process is there and is still the same process (not a zombie, not a later
 * process that reused the pid). Does not reap. */
bool srv_proc_alive(const struct server *s)
{
    char state;
    unsigned long long st;
    if (s->pid <= 0)
        return false;
    st = srv_proc_starttime(s->pid, &state);
    if (!st || state == 'Z' || state == 'X')
        return false;
    return !s->starttime || st == s->starttime;
}

/* ------------------------------------------------------------------ who runs it (as root) */

int srv_run_identity(const struct server_flavor *f, struct srv_run_as *ra)
{
    struct passwd *pw;
    memset(ra, 0, sizeof(*ra));
    if (geteuid() != 0 || !f->run_user)
        return 0; /* e.g. mariadbd/mysqld run as root with --user=root (see server.h) */
    if (!(pw = getpwnam(f->run_user)) && !(pw = getpwnam("nobody")))
        return error("running as root, and %s refuses to: it needs an unprivileged user, "
                     "but there is no '%s' or 'nobody' user", f->label, f->run_user);
    ra->drop = true;
    ra->uid = pw->pw_uid;
    ra->gid = pw->pw_gid;
    ra->name = xstrdup(pw->pw_name);
    return 0;
}

int server_run_user(enum server_kind kind, uid_t *uid, char **name)
{
    struct srv_run_as ra;
    if (srv_run_identity(srv_flavor(kind), &ra) < 0)
        return -1;
    if (ra.drop) {
        *uid = ra.uid;
        *name = ra.name;
        return 0;
    }
    struct passwd *pw = getpwuid(geteuid());
    *uid = geteuid();
    *name = pw ? xstrdup(pw->pw_name) : xasprintf("uid %d", (int)*uid);
    return 0;
}

/* Can ra's user search (x) directory st? The owner, group (incl. supplementary) or other
 * bits apply, whichever class matches first, like the kernel's check. */
static bool searchable(const struct stat *st, const struct srv_run_as *ra)
{
    if (st->st_uid == ra->uid)
        return st->st_mode & S_IXUSR;
    gid_t groups[64];
    int n = ARRAY_SIZE(groups);
    if (getgrouplist(ra->name, ra->gid, groups, &n) < 0)
        n = 0;
    for (int i = 0; i < n; i++)
        if (groups[i] == st->st_gid)
            return st->st_mode & S_IXGRP;
    if (st->st_gid == ra->gid)
        return st->st_mode & S_IXGRP;
    return st->st_mode & S_IXOTH;
}

/* Every directory above dir must be searchable by the server's user. */
int srv_check_reachable(const char *dir, const struct srv_run_as *ra)
{
    size_t len = strlen(dir);
    for (size_t i = 0; i < len; i++) {
        if (dir[i] != '/')
            continue;
        char *anc = i == 0 ? xstrdup("/") : xstrndup(dir, i);
        struct stat st;
        if (stat(anc, &st) == 0 && !searchable(&st, ra)) {
            struct passwd *owner = getpwuid(st.st_uid);
            error("--datadir=%s: the server runs as user %s, who cannot reach it: "
                  "%s (mode %04o, owner %s) is not searchable by %s; choose a datadir elsewhere "
                  "(e.g. under /dev/shm or /tmp) or allow it with: chmod o+x %s",
                  dir, ra->name, anc, (unsigned)(st.st_mode & 07777),
                  owner ? owner->pw_name : "?", ra->name, anc);
            free(anc);
            return -1;
        }
        free(anc);
    }
    return 0;
}

/* Hand a directory to the server's user (PostgreSQL as root): owner and mode 0700. */
int srv_give_dir(const char *dir, const struct srv_run_as *ra)
{
    if (ra->drop && chown(dir, ra->uid, ra->gid) < 0)
        return error("chown %s to %s: %s", dir, ra->name, strerror(errno));
    if (chmod(dir, 0700) < 0)
        return error("chmod 0700 %s: %s", dir, strerror(errno));
    return 0;
}

/* Poll (every 20 ms at most) until the process is gone or timeout_s passed: gone? */
bool srv_wait_gone(const struct server *s, double timeout_s)
{
    uint64_t deadline = srv_deadline_after(timeout_s);
    for (;;) {
        if (!srv_proc_alive(s))
            return true;
        uint64_t now = now_ns();
        if (now >= deadline)
            return false;
        uint64_t left_ms = (deadline - now + 999999) / 1000000;
        srv_sleep_ms(left_ms < 20 ? (int)left_ms : 20);
    }
}
