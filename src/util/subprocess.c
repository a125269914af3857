/* subprocess: fork + execvp with optional cwd, extra environment and log capture. */
#include "util/subprocess.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Milliseconds left until deadline (ns, 0 = none): -1 = wait forever. */
static int ms_left(uint64_t deadline)
{
    uint64_t now = now_ns();
    if (!deadline)
        return -1;
    return deadline > now ? (int)((deadline - now) / 1000000 + 1) : 0;
}

/* Past the deadline, or asked to stop: ask the child (its group when it has its own) to
 * stop, then force it; the deadline moves 5 s on. */
static void enforce_deadline(const struct subprocess *sp, pid_t pid, uint64_t *deadline,
                             int *signalled)
{
    bool stop = sp->stop && *sp->stop && !*signalled;
    if (!stop && (!*deadline || now_ns() < *deadline))
        return;
    pid_t target = sp->stop ? -pid : pid;
    kill(target, *signalled ? SIGKILL : SIGTERM);
    *signalled = 1;
    *deadline = now_ns() + 5000000000ull;
}

/* Poll interval while a stop flag is watched (ms). */
#define STOP_POLL_MS 100
/* While output is captured: how often whether the child has exited is looked at (ms), and how
 * long its output may stay open after it exited (ms). A descendant it left behind may hold
 * the pipe for good: a BOLT-instrumented server's profile watcher (llvm-bolt
 * --instrumentation-sleep-time) lives until its parent is reaped, which waiting for the
 * pipe's end would never do. */
#define EXIT_POLL_MS 100
#define EXIT_GRACE_MS 1000

/* Whether child pid has exited, leaving it to be reaped (waitid WNOWAIT). */
static bool child_exited(pid_t pid)
{
    siginfo_t si;
    memset(&si, 0, sizeof(si));
    return waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid;
}

int subprocess_run(const struct subprocess *sp)
{
    uint64_t deadline = sp->timeout_s > 0 ? now_ns() + (uint64_t)(sp->timeout_s * 1e9) : 0;
    int signalled = 0;
    int pipefd[2] = { -1, -1 };
    int errpipe[2];
    pid_t pid;
    int status, child_errno = 0;

    if (sp->out && pipe(pipefd) < 0)
        return error("pipe: %s", strerror(errno));
    if (pipe2(errpipe, O_CLOEXEC) < 0)
        return error("pipe: %s", strerror(errno));
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid < 0)
        return error("fork: %s", strerror(errno));
    if (pid == 0) {
        int fd;
        close(errpipe[0]);
        if (sp->stop)
            setpgid(0, 0);
        if (sp->log_path) {
            fd = open(sp->log_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
            if (fd < 0)
                goto fail;
            if (!sp->out)
                dup2(fd, STDOUT_FILENO);
            dup2(fd, STDERR_FILENO);
            close(fd);
        } else if (sp->out && sp->quiet_stderr) {
            fd = open("/dev/null", O_WRONLY);
            if (fd >= 0) {
                dup2(fd, STDERR_FILENO);
                close(fd);
            }
        }
        if (sp->out) {
            close(pipefd[0]);
            dup2(pipefd[1], STDOUT_FILENO);
            close(pipefd[1]);
        }
        fd = open("/dev/null", O_RDONLY);
        if (fd >= 0) {
            dup2(fd, STDIN_FILENO);
            close(fd);
        }
        if (sp->run_as && (setgroups(1, &sp->run_gid) < 0 || setgid(sp->run_gid) < 0 ||
                           setuid(sp->run_uid) < 0))
            goto fail;
        if (sp->cwd && chdir(sp->cwd) < 0)
            goto fail;
        if (sp->cpus && sched_setaffinity(0, sizeof(*sp->cpus), sp->cpus) < 0)
            goto fail;
        for (const char *const *e = sp->env; e && *e; e++)
            putenv((char *)*e);
        execvp(sp->argv[0], (char *const *)sp->argv);
    fail:
        child_errno = errno;
        if (write(errpipe[1], &child_errno, sizeof(child_errno)) < 0)
            _exit(127);
        _exit(127);
    }
    close(errpipe[1]);
    if (sp->started)
        sp->started(pid, sp->hook_ctx);
    uint64_t tick_ns = sp->tick ? (uint64_t)((sp->tick_s > 0 ? sp->tick_s : 0.01) * 1e9) : 0;
    uint64_t next_tick = now_ns() + tick_ns;
    if (sp->stop)
        setpgid(pid, pid); /* also here: a stop before the child's own call must reach it */
    if (sp->out) {
        char buf[65536];
        ssize_t n;
        uint64_t exited_at = 0; /* when the child was first seen exited (ns) */
        close(pipefd[1]);
        for (;;) {
            struct pollfd pfd = { .fd = pipefd[0], .events = POLLIN };
            if (!exited_at && child_exited(pid))
                exited_at = now_ns();
            if (exited_at && now_ns() - exited_at > EXIT_GRACE_MS * 1000000ull)
                break; /* what a descendant still holds open is not the child's output */
            int wait_ms = ms_left(deadline);
            if (sp->stop && (wait_ms < 0 || wait_ms > STOP_POLL_MS))
                wait_ms = STOP_POLL_MS;
            if (wait_ms < 0 || wait_ms > EXIT_POLL_MS)
                wait_ms = EXIT_POLL_MS;
            if (tick_ns) {
                int t = ms_left(next_tick);
                if (wait_ms < 0 || t < wait_ms)
                    wait_ms = t;
            }
            int pr = poll(&pfd, 1, wait_ms);
            if (tick_ns && now_ns() >= next_tick) {
                sp->tick(sp->hook_ctx);
                next_tick += tick_ns;
                if (next_tick < now_ns())
                    next_tick = now_ns() + tick_ns;
            }
            if (pr <= 0)
                enforce_deadline(sp, pid, &deadline, &signalled);
            if (pr == 0 || (pr < 0 && errno == EINTR))
                continue;
            n = pr < 0 ? -1 : read(pipefd[0], buf, sizeof(buf));
            if (n == 0)
                break;
            if (n < 0) {
                if (errno == EINTR)
                    continue;
                break;
            }
            strbuf_add(sp->out, buf, (size_t)n);
        }
        close(pipefd[0]);
    }
    ssize_t got = read(errpipe[0], &child_errno, sizeof(child_errno));
    close(errpipe[0]);
    for (;;) {
        struct rusage ru;
        pid_t w = wait4(pid, &status, deadline || tick_ns || sp->stop ? WNOHANG : 0, &ru);
        if (w == pid) {
            if (sp->rusage)
                *sp->rusage = ru;
            break;
        }
        if (w < 0 && errno != EINTR)
            return error("waitpid: %s", strerror(errno));
        if (w == 0) {
            if (tick_ns)
                sp->tick(sp->hook_ctx);
            enforce_deadline(sp, pid, &deadline, &signalled);
            struct timespec ts = { 0, 10000000 };
            nanosleep(&ts, NULL);
        }
    }
    if (got == (ssize_t)sizeof(child_errno)) {
        char *cmd = subprocess_argv_str(sp->argv);
        char who[40] = "";
        if (sp->run_as)
            snprintf(who, sizeof(who), " as uid %d", (int)sp->run_uid);
        error("cannot run '%s'%s%s%s: %s", cmd, sp->cwd ? " in " : "", sp->cwd ? sp->cwd : "", who,
              strerror(child_errno));
        free(cmd);
        return -1;
    }
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return -1;
}

char *subprocess_argv_str(const char *const *argv)
{
    struct strbuf sb = STRBUF_INIT;
    for (int i = 0; argv[i]; i++) {
        const char *a = argv[i];
        if (i)
            strbuf_addch(&sb, ' ');
        if (*a &&
            strspn(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=./,:+%@") ==
                strlen(a)) {
            strbuf_addstr(&sb, a);
            continue;
        }
        strbuf_addch(&sb, '\'');
        for (; *a; a++) {
            if (*a == '\'')
                strbuf_addstr(&sb, "'\\''");
            else
                strbuf_addch(&sb, *a);
        }
        strbuf_addch(&sb, '\'');
    }
    return strbuf_detach(&sb);
}

char *file_tail(const char *path, int lines)
{
    struct strbuf sb = STRBUF_INIT;
    if (strbuf_read_file(&sb, path) < 0) {
        strbuf_release(&sb);
        return xasprintf("(cannot read %s: %s)", path, strerror(errno));
    }
    strbuf_rtrim(&sb);
    size_t i = sb.len;
    int seen = 0;
    while (i > 0) {
        if (sb.buf[i - 1] == '\n' && ++seen == lines)
            break;
        i--;
    }
    /* each line clipped: a server log may quote a whole statement (PostgreSQL's STATEMENT:
     * line of a failed 512 KiB bulk INSERT) */
    struct strbuf res = STRBUF_INIT;
    for (const char *l = sb.len ? sb.buf + i : ""; *l;) {
        size_t n = strcspn(l, "\n");
        if (n > FILE_TAIL_LINE_MAX)
            strbuf_addf(&res, "%.*s [... %zu more bytes]", FILE_TAIL_LINE_MAX, l,
                        n - FILE_TAIL_LINE_MAX);
        else
            strbuf_add(&res, l, n);
        l += n;
        if (*l == '\n')
            strbuf_addch(&res, *l++);
    }
    strbuf_release(&sb);
    return strbuf_detach(&res);
}
