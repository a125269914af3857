/* standin: the "server" of the PGO stand-in project (tests/e2e/pgo_recipes.t). Every time it
 * runs it
 *   1. does a little real work worth profiling (tokenizing, hashing and parsing a batch of
 *      generated SQL statements: branches a profile can say something about; the parser is
 *      bison's, generated into the build directory from statement.y, as MariaDB's is),
 *   2. writes how it was built into PREFIX/share/standin/build-info.txt: the C flags and link
 *      flags cmake gave the compiler, CMAKE_BINARY_DIR, the source directory, the prefix (the
 *      test reads it to see where each recipe phase put the PGO flags),
 *   3. runs the real MariaDB server with the same arguments as its child (fork + exec),
 *      forwards SIGTERM, SIGINT, SIGHUP and SIGQUIT to it, waits for it and exits with its
 *      status, so that pgolab's managed-server code (BINARY --version, mariadb-install-db with
 *      MYSQLD_BOOTSTRAP=BINARY, start, readiness, clean SIGTERM shutdown) works unchanged and
 *      this program itself exits normally, which is when GCC writes its profile data.
 * The generated build_info.c holds the strings; this file is the same translation unit in
 * every phase, so the instrumented build's profile matches the pgo build. */
#define _GNU_SOURCE
#include <errno.h>
#include <pwd.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "statement.h"

extern const char standin_c_flags[], standin_link_flags[], standin_binary_dir[],
    standin_source_dir[], standin_prefix[], standin_real_server[];

/* ---- the work ----------------------------------------------------------------------- */

enum token { T_WORD, T_NUMBER, T_STRING, T_PUNCT, T_SPACE };

static const char *const keywords[] = {
    "SELECT", "FROM", "WHERE", "BETWEEN", "AND", "ORDER", "BY", "DISTINCT", "UPDATE", "SET",
    "DELETE", "INSERT", "INTO", "VALUES", "SUM", "BEGIN", "COMMIT",
};

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint32_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 11);
}

/* One statement of sysbench's shapes into buf. */
static int make_statement(char *buf, size_t size)
{
    uint32_t id = next_rand() % 10000 + 1, r = next_rand() % 100;
    if (r < 70)
        return snprintf(buf, size, "SELECT c FROM sbtest1 WHERE id=%u", id);
    if (r < 80)
        return snprintf(buf, size, "SELECT c FROM sbtest1 WHERE id BETWEEN %u AND %u ORDER BY c",
                        id, id + 99);
    if (r < 85)
        return snprintf(buf, size, "SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN %u AND %u", id,
                        id + 99);
    if (r < 95)
        return snprintf(buf, size, "UPDATE sbtest1 SET k=k+1 WHERE id=%u", id);
    return snprintf(buf, size, "INSERT INTO sbtest1 (id, k, c, pad) VALUES (%u, %u, '%u-%u', '')",
                    id, next_rand() % 10000, next_rand(), next_rand());
}

static enum token classify(char c)
{
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_')
        return T_WORD;
    if (c >= '0' && c <= '9')
        return T_NUMBER;
    if (c == '\'')
        return T_STRING;
    if (c == ' ')
        return T_SPACE;
    return T_PUNCT;
}

/* Tokenize one statement: a hash of its tokens, keyword hits counted. */
static uint64_t tokenize(const char *s, unsigned *kw)
{
    uint64_t h = 1469598103934665603ULL;
    while (*s) {
        enum token t = classify(*s);
        const char *start = s;
        switch (t) {
        case T_WORD:
            while (classify(*s) == T_WORD || classify(*s) == T_NUMBER)
                s++;
            for (size_t i = 0; i < sizeof(keywords) / sizeof(*keywords); i++)
                if (strlen(keywords[i]) == (size_t)(s - start) &&
                    !strncmp(keywords[i], start, (size_t)(s - start))) {
                    kw[i]++;
                    break;
                }
            break;
        case T_NUMBER:
            while (classify(*s) == T_NUMBER)
                s++;
            break;
        case T_STRING:
            s++;
            while (*s && *s != '\'')
                s++;
            if (*s)
                s++;
            break;
        default:
            s++;
            break;
        }
        if (t != T_SPACE)
            for (const char *p = start; p < s; p++)
                h = (h ^ (unsigned char)*p) * 1099511628211ULL;
    }
    return h;
}

static uint64_t work(unsigned statements)
{
    unsigned kw[sizeof(keywords) / sizeof(*keywords)] = { 0 };
    uint64_t sum = 0;
    char buf[160];
    for (unsigned i = 0; i < statements; i++) {
        make_statement(buf, sizeof(buf));
        sum += tokenize(buf, kw);
        unsigned columns = 0;
        sum += standin_parse(buf, &columns) == 0 ? columns : 1000003; /* a syntax error */
    }
    for (size_t i = 0; i < sizeof(kw) / sizeof(*kw); i++)
        sum = sum * 31 + kw[i];
    return sum;
}

/* ---- the record --------------------------------------------------------------------- */

static void write_build_info(uint64_t result)
{
    char dir[4096], path[4200], tmp[4300];
    snprintf(dir, sizeof(dir), "%s/share", standin_prefix);
    mkdir(dir, 0755);
    snprintf(dir, sizeof(dir), "%s/share/standin", standin_prefix);
    mkdir(dir, 0755);
    snprintf(path, sizeof(path), "%s/build-info.txt", dir);
    snprintf(tmp, sizeof(tmp), "%s.%d", path, (int)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f)
        return; /* a read-only prefix: nothing to record, the server still runs */
    fprintf(f, "c_flags: %s\nlink_flags: %s\nbinary_dir: %s\nsource_dir: %s\nprefix: %s\n"
               "work: %016llx\n", standin_c_flags, standin_link_flags, standin_binary_dir,
            standin_source_dir, standin_prefix, (unsigned long long)result);
    if (fclose(f) != 0 || rename(tmp, path) != 0)
        unlink(tmp);
}

/* ---- the real server as a child ----------------------------------------------------- */

static volatile pid_t child;

static void forward(int sig)
{
    if (child > 0)
        kill(child, sig);
}

/* STANDIN_KILL_AFTER=S (tests/e2e/pgo_train_user.t): S seconds into serving, the real server
 * is killed (SIGKILL), as a crash mid-training would. */
static void kill_server(int sig)
{
    (void)sig;
    if (child > 0)
        kill(child, SIGKILL);
}

/* Is this run the server serving (not `--version`, not mariadb-install-db's bootstrap)? */
static bool serving(char **argv)
{
    for (char **a = argv + 1; *a; a++)
        if (!strcmp(*a, "--version") || !strcmp(*a, "--bootstrap"))
            return false;
    return true;
}

/* STANDIN_TRAIN_USER=NAME (tests/e2e/pgo_train_user.t): a server whose serving processes run
 * as another user than the one that started it, as PostgreSQL's do when root starts it: a
 * child switches to NAME, does the work again and exits, which is when it adds its counts to
 * the profile files the earlier runs (`--version`, as root) created. What it and libgcov
 * say on the way out (e.g. "profiling:FILE:Cannot open") goes to the server's log, as a
 * PostgreSQL backend's does. */
static void work_as_user(const char *name)
{
    struct passwd *pw = getpwnam(name);
    if (!pw) {
        fprintf(stderr, "standin: STANDIN_TRAIN_USER=%s: no such user\n", name);
        exit(1);
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        if (setgid(pw->pw_gid) < 0 || setuid(pw->pw_uid) < 0) {
            fprintf(stderr, "standin: cannot switch to user %s: %s\n", name, strerror(errno));
            _exit(1);
        }
        work(20000);
        fprintf(stderr, "standin: worked as user %s\n", name);
        exit(0); /* exit, not _exit: the profile is written at exit */
    }
    int st;
    while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
}

int main(int argc, char **argv)
{
    static const int sigs[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT };
    (void)argc;
#ifdef STANDIN_TOOL
    /* tests/e2e/pgo_config.t builds this file a second time as a tool the training never
     * runs, as PostgreSQL builds src/common for its frontend: the same name, main(), for
     * another function than the trained server's */
    if (argc > 99)
        return 3;
#endif
    write_build_info(work(20000));
    const char *user = getenv("STANDIN_TRAIN_USER"), *kill_after = getenv("STANDIN_KILL_AFTER");
    if (user && *user && serving(argv))
        work_as_user(user);

    /* no signal is lost between fork and knowing the child's pid */
    sigset_t block, old;
    sigemptyset(&block);
    for (size_t i = 0; i < sizeof(sigs) / sizeof(*sigs); i++)
        sigaddset(&block, sigs[i]);
    sigprocmask(SIG_BLOCK, &block, &old);
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = forward;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof(sigs) / sizeof(*sigs); i++)
        sigaction(sigs[i], &sa, NULL);

    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "standin: fork: %s\n", strerror(errno));
        return 1;
    }
    if (pid == 0) {
        for (size_t i = 0; i < sizeof(sigs) / sizeof(*sigs); i++)
            signal(sigs[i], SIG_DFL);
        sigprocmask(SIG_SETMASK, &old, NULL);
        prctl(PR_SET_PDEATHSIG, SIGTERM); /* the server does not outlive its stand-in */
        execv(standin_real_server, argv);
        fprintf(stderr, "standin: exec %s: %s\n", standin_real_server, strerror(errno));
        _exit(127);
    }
    child = pid;
    if (kill_after && atoi(kill_after) > 0 && serving(argv)) {
        signal(SIGALRM, kill_server);
        alarm((unsigned)atoi(kill_after));
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) {
            fprintf(stderr, "standin: waitpid: %s\n", strerror(errno));
            return 1;
        }
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    return 128 + WTERMSIG(st); /* exit normally all the same: the profile is written */
}
