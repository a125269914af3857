/* perf_sampler: perf_event_open sampling of a process tree into a raw profile file (see
 * perf_sampler.h; the file format is docs/profiles.md's). The parent side is start/stop; the rest
 * runs in the forked sampler process. */
#include "profile/perf_sampler.h"
#include "util/pidstat.h"
#include "util/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RING_PAGES 32        /* data pages per ring buffer (128 KiB) */
#define MAX_EVENTS 1024      /* tasks x CPUs */
#define MAX_CHAIN 128
/* Frames the kernel walks per sample. The walk is most of a sample's cost (bench/profile-
 * overhead: ~24 us per sample with 120 frames, ~13 with 24, on this VM), and without frame
 * pointers the frames past the first few are wrong anyway; 32 is deep enough for a server's
 * query path built with them. */
#define PROFILE_MAX_STACK 32

static long perf_open(struct perf_event_attr *a, pid_t pid, int cpu)
{
    return syscall(SYS_perf_event_open, a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static int read_paranoid(void)
{
    FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
    int v = -100;
    if (f) {
        if (fscanf(f, "%d", &v) != 1)
            v = -100;
        fclose(f);
    }
    return v;
}

/* ---------------------------------------------------------------- the task tree */

struct pidlist {
    pid_t *v;
    int n, cap;
};

static void pid_push(struct pidlist *l, pid_t p)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 32;
        l->v = xrealloc(l->v, sizeof(*l->v) * (size_t)l->cap);
    }
    l->v[l->n++] = p;
}

/* The parent pid of process p, or -1. */
static pid_t ppid_of(pid_t p)
{
    struct proc_pid_stat st;
    return pidstat_read(NULL, p, &st) == 0 ? (pid_t)st.ppid : -1;
}

/* target and its descendant processes, target first. */
static void process_tree(pid_t target, struct pidlist *out)
{
    struct pidlist all = { 0 }, parents = { 0 };
    pid_t self = getpid();  /* the sampler, a child of the target when bench profiles itself */
    DIR *d = opendir("/proc");
    struct dirent *de;
    while (d && (de = readdir(d))) {
        char *end;
        long p = strtol(de->d_name, &end, 10);
        if (*end || p <= 0)
            continue;
        pid_push(&all, (pid_t)p);
        pid_push(&parents, ppid_of((pid_t)p));
    }
    if (d)
        closedir(d);
    pid_push(out, target);
    for (int i = 0; i < out->n; i++)  /* breadth first: out grows while we walk it */
        for (int j = 0; j < all.n; j++)
            if (parents.v[j] == out->v[i] && all.v[j] != target && all.v[j] != self)
                pid_push(out, all.v[j]);
    free(all.v);
    free(parents.v);
}

static void tasks_of(pid_t p, struct pidlist *out)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/task", (int)p);
    DIR *d = opendir(path);
    struct dirent *de;
    while (d && (de = readdir(d))) {
        char *end;
        long t = strtol(de->d_name, &end, 10);
        if (!*end && t > 0)
            pid_push(out, (pid_t)t);
    }
    if (d)
        closedir(d);
}

/* ---------------------------------------------------------------- aggregation */

struct stack {
    uint32_t pid, nframes;
    uint64_t count;
    uint64_t *frames;
};

struct agg {
    struct stack *slots;   /* open addressing, cap a power of two */
    size_t cap, used;
    uint64_t samples, lost;
};

static uint64_t chain_hash(uint32_t pid, const uint64_t *f, uint32_t n)
{
    uint64_t h = 1469598103934665603ull ^ pid;
    for (uint32_t i = 0; i < n; i++) {
        h ^= f[i];
        h *= 1099511628211ull;
        h ^= h >> 29;
    }
    return h;
}

static void agg_add(struct agg *a, uint32_t pid, const uint64_t *f, uint32_t n);

static void agg_grow(struct agg *a)
{
    struct stack *old = a->slots;
    size_t oldcap = a->cap;
    a->cap = oldcap ? oldcap * 2 : 4096;
    a->slots = xcalloc(a->cap, sizeof(*a->slots));
    a->used = 0;
    uint64_t samples = a->samples;
    for (size_t i = 0; i < oldcap; i++)
        if (old[i].count) {
            size_t j = chain_hash(old[i].pid, old[i].frames, old[i].nframes) & (a->cap - 1);
            while (a->slots[j].count)
                j = (j + 1) & (a->cap - 1);
            a->slots[j] = old[i];
            a->used++;
        }
    a->samples = samples;
    free(old);
}

static void agg_add(struct agg *a, uint32_t pid, const uint64_t *f, uint32_t n)
{
    if ((a->used + 1) * 2 > a->cap)
        agg_grow(a);
    size_t j = chain_hash(pid, f, n) & (a->cap - 1);
    for (;; j = (j + 1) & (a->cap - 1)) {
        struct stack *s = &a->slots[j];
        if (!s->count) {
            s->pid = pid;
            s->nframes = n;
            s->frames = xmalloc(sizeof(*f) * (n ? n : 1));
            memcpy(s->frames, f, sizeof(*f) * n);
            s->count = 1;
            a->used++;
            break;
        }
        if (s->pid == pid && s->nframes == n && !memcmp(s->frames, f, sizeof(*f) * n)) {
            s->count++;
            break;
        }
    }
    a->samples++;
}

/* ---------------------------------------------------------------- the sampler process */

struct ring {
    int fd;
    void *base;
    size_t size;  /* data area bytes */
};

struct sampler_state {
    struct ring rings[MAX_EVENTS];
    int nrings;
    struct agg agg;
    FILE *side;     /* side-band records (map, fork, comm, exit) in arrival order */
    size_t page;
};

/* Synthesize the executable file mappings of process p as "map" lines (perf record does the
 * same for mappings made before it started). */
static void write_proc_maps(FILE *out, pid_t p)
{
    char path[64], line[4096];
    snprintf(path, sizeof(path), "/proc/%d/maps", (int)p);
    FILE *f = fopen(path, "r");
    while (f && fgets(line, sizeof(line), f)) {
        unsigned long long start, end, off;
        char perms[8];
        int pos = 0;
        if (sscanf(line, "%llx-%llx %7s %llx %*s %*s%n", &start, &end, perms, &off, &pos) < 4)
            continue;
        char *name = line + pos;
        while (*name == ' ')
            name++;
        name[strcspn(name, "\n")] = 0;
        if (perms[2] != 'x' || !*name)
            continue;
        fprintf(out, "map %d %llx %llx %llx %s\n", (int)p, start, end, off, name);
    }
    if (f)
        fclose(f);
}

static void handle_record(struct sampler_state *st, const struct perf_event_header *h)
{
    const unsigned char *p = (const unsigned char *)(h + 1);
    switch (h->type) {
    case PERF_RECORD_SAMPLE: {
        uint32_t pid;
        uint64_t nr;
        memcpy(&pid, p, 4);  /* PERF_SAMPLE_TID: pid, tid */
        memcpy(&nr, p + 8, 8);
        if (nr > MAX_CHAIN)
            nr = MAX_CHAIN;
        uint64_t frames[MAX_CHAIN];
        memcpy(frames, p + 16, nr * 8);
        agg_add(&st->agg, pid, frames, (uint32_t)nr);
        break;
    }
    case PERF_RECORD_MMAP2: {
        uint32_t pid;
        uint64_t addr, len, pgoff;
        memcpy(&pid, p, 4);
        memcpy(&addr, p + 8, 8);
        memcpy(&len, p + 16, 8);
        memcpy(&pgoff, p + 24, 8);
        /* maj, min (u32 each), ino, ino_generation (u64 each), prot, flags (u32 each) */
        const char *name = (const char *)(p + 32 + 8 + 16 + 8);
        if (*name)
            fprintf(st->side, "map %u %llx %llx %llx %s\n", pid, (unsigned long long)addr,
                    (unsigned long long)(addr + len), (unsigned long long)pgoff, name);
        break;
    }
    case PERF_RECORD_COMM: {
        uint32_t pid, tid;
        memcpy(&pid, p, 4);
        memcpy(&tid, p + 4, 4);
        if ((h->misc & PERF_RECORD_MISC_COMM_EXEC) && pid == tid)
            fprintf(st->side, "exec %u %s\n", pid, (const char *)(p + 8));
        break;
    }
    case PERF_RECORD_FORK: {
        uint32_t pid, ppid;
        memcpy(&pid, p, 4);
        memcpy(&ppid, p + 4, 4);
        if (pid != ppid)  /* a new process, not a thread */
            fprintf(st->side, "fork %u %u\n", pid, ppid);
        break;
    }
    case PERF_RECORD_EXIT: {
        uint32_t pid, tid;
        memcpy(&pid, p, 4);
        memcpy(&tid, p + 8, 4);
        if (pid == tid)
            fprintf(st->side, "exit %u\n", pid);
        break;
    }
    case PERF_RECORD_LOST: {
        uint64_t lost;
        memcpy(&lost, p + 8, 8);
        st->agg.lost += lost;
        break;
    }
    default:
        break;
    }
}

static void drain(struct sampler_state *st, struct ring *r)
{
    struct perf_event_mmap_page *mp = r->base;
    unsigned char *data = (unsigned char *)r->base + st->page;
    uint64_t head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
    uint64_t tail = mp->data_tail;
    static unsigned char rec[65536];
    while (tail + sizeof(struct perf_event_header) <= head) {
        struct perf_event_header h;
        size_t off = (size_t)(tail % r->size);
        for (size_t i = 0; i < sizeof(h); i++)
            ((unsigned char *)&h)[i] = data[(off + i) % r->size];
        if (h.size < sizeof(h) || tail + h.size > head)
            break;
        for (size_t i = 0; i < h.size; i++)
            rec[i] = data[(off + i) % r->size];
        handle_record(st, (const struct perf_event_header *)rec);
        tail += h.size;
    }
    __atomic_store_n(&mp->data_tail, tail, __ATOMIC_RELEASE);
}

/* How the events are opened (decided by probing on the first task). */
struct event_choice {
    struct perf_event_attr attr;
    const char *event;
    bool kernel;
    char note[256];
};

static void base_attr(struct perf_event_attr *a, int freq)
{
    memset(a, 0, sizeof(*a));
    a->size = sizeof(*a);
    a->sample_freq = (uint64_t)freq;
    a->freq = 1;
    a->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN;
    a->inherit = 1;
    a->mmap = 1;
    a->mmap2 = 1;
    a->comm = 1;
    a->comm_exec = 1;
    a->task = 1;
    a->exclude_hv = 1;
    a->exclude_guest = 1;
    a->wakeup_watermark = RING_PAGES * 4096 / 4;
    a->watermark = 1;
    a->sample_max_stack = PROFILE_MAX_STACK;
}

/* Probe the event on task tid: cycles, else cpu-clock; with the kernel, else without. 0, or
 * the errno of the refusal (note set). */
static int choose_event(struct event_choice *c, pid_t tid, int freq)
{
    static const struct { uint32_t type; uint64_t config; const char *name; } evs[] = {
        { PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "cycles" },
        { PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, "cpu-clock" },
    };
    int err = 0;
    char hw_note[96] = "";
    for (size_t i = 0; i < ARRAY_SIZE(evs); i++) {
        for (int kernel = 1; kernel >= 0; kernel--) {
            base_attr(&c->attr, freq);
            c->attr.type = evs[i].type;
            c->attr.config = evs[i].config;
            c->attr.exclude_kernel = !kernel;
            c->attr.exclude_callchain_kernel = !kernel;
            long fd = perf_open(&c->attr, tid, -1 /* probe only */);
            if (fd < 0 && errno == EINVAL) {  /* older kernels: no sample_max_stack */
                c->attr.sample_max_stack = 0;
                fd = perf_open(&c->attr, tid, -1);
            }
            if (fd >= 0) {
                close((int)fd);
                c->event = evs[i].name;
                c->kernel = kernel;
                c->note[0] = 0;
                if (hw_note[0])
                    snprintf(c->note, sizeof(c->note), "%s", hw_note);
                if (!kernel) {
                    size_t l = strlen(c->note);
                    snprintf(c->note + l, sizeof(c->note) - l,
                             "%skernel space left out (kernel.perf_event_paranoid=%d; "
                             "1 or lower, or root, samples it too)",
                             l ? "; " : "", read_paranoid());
                }
                return 0;
            }
            err = errno;
            if (err == ENOENT || err == EOPNOTSUPP || err == ENODEV) {
                snprintf(hw_note, sizeof(hw_note), "no hardware cycle counter (%s): cpu-clock",
                         strerror(err));
                break;  /* the event does not exist here: the next one */
            }
            if (err != EACCES && err != EPERM)
                break;
        }
    }
    snprintf(c->note, sizeof(c->note),
             "perf_event_open refused (%s; kernel.perf_event_paranoid=%d, 2 or lower lets a "
             "user profile its own processes): no profile",
             strerror(err), read_paranoid());
    return err ? err : EPERM;
}

static int open_rings(struct sampler_state *st, const struct event_choice *c, pid_t target,
                      FILE *side)
{
    struct pidlist procs = { 0 };
    int ncpu = (int)sysconf(_SC_NPROCESSORS_CONF);
    process_tree(target, &procs);
    for (int i = 0; i < procs.n; i++) {
        struct pidlist tasks = { 0 };
        tasks_of(procs.v[i], &tasks);
        for (int t = 0; t < tasks.n; t++)
            for (int cpu = 0; cpu < ncpu && st->nrings < MAX_EVENTS; cpu++) {
                struct perf_event_attr a = c->attr;
                long fd = perf_open(&a, tasks.v[t], cpu);
                if (fd < 0)
                    continue;  /* an offline CPU, or the task just exited */
                size_t len = st->page * (1 + RING_PAGES);
                void *base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
                if (base == MAP_FAILED) {
                    close((int)fd);
                    continue;
                }
                st->rings[st->nrings++] = (struct ring){ (int)fd, base, st->page * RING_PAGES };
            }
        /* The mappings after the events are open: an exec before this read is in them, one
         * after it comes as exec and mmap records. Read before, an exec in between (a process
         * forked just now) left only the old image's mappings, and its samples unresolved. */
        write_proc_maps(side, procs.v[i]);
        free(tasks.v);
    }
    free(procs.v);
    return st->nrings;
}

static int write_raw(struct sampler_state *st, const struct event_choice *c, pid_t target,
                     int freq, const char *path)
{
    char *tmp = xasprintf("%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        free(tmp);
        return -1;
    }
    fprintf(f, "pgolab-profile-raw 1\nevent %s\nfrequency %d\nkernel %s\n"
               "callchain frame-pointer\ntarget %d\n",
            c->event, freq, c->kernel ? "yes" : "no", (int)target);
    if (c->note[0])
        fprintf(f, "note %s\n", c->note);
    rewind(st->side);
    char line[8192];
    while (fgets(line, sizeof(line), st->side))
        fputs(line, f);
    for (size_t i = 0; i < st->agg.cap; i++) {
        struct stack *s = &st->agg.slots[i];
        if (!s->count)
            continue;
        fprintf(f, "stack %u %llu", s->pid, (unsigned long long)s->count);
        for (uint32_t k = 0; k < s->nframes; k++) {
            uint64_t ip = s->frames[k];
            if (ip == PERF_CONTEXT_KERNEL)
                fputs(" k", f);
            else if (ip == PERF_CONTEXT_USER)
                fputs(" u", f);
            else if (ip >= (uint64_t)PERF_CONTEXT_MAX)
                fputs(" -", f);  /* another context marker (hv, guest) */
            else
                fprintf(f, " %llx", (unsigned long long)ip);
        }
        fputc('\n', f);
    }
    fprintf(f, "lost %llu\nsamples %llu\nend\n", (unsigned long long)st->agg.lost,
            (unsigned long long)st->agg.samples);
    int rc = ferror(f) ? -1 : 0;
    if (fclose(f) != 0)
        rc = -1;
    if (rc == 0 && rename(tmp, path) < 0)
        rc = -1;
    if (rc < 0)
        unlink(tmp);
    free(tmp);
    return rc;
}

/* The sampler process: tell the parent how it went on `status`, sample until ctl closes or
 * every ring hangs up, write the file. Exit code 0 = written. */
static void sampler_main(pid_t target, const char *path, int freq, int status, int ctl)
{
    static struct sampler_state st;
    struct event_choice c;
    signal(SIGINT, SIG_IGN);  /* the parent decides when sampling ends */
    signal(SIGTERM, SIG_DFL);
    st.page = (size_t)sysconf(_SC_PAGESIZE);
    st.side = tmpfile();
    int err = choose_event(&c, target, freq);
    if (err || !st.side) {
        dprintf(status, "refused %s\n", err ? c.note : "no temporary file");
        _exit(3);
    }
    if (open_rings(&st, &c, target, st.side) == 0) {
        dprintf(status, "error no event could be opened on process %d\n", (int)target);
        _exit(4);
    }
    dprintf(status, "ok %s %s %s\n", c.event, c.kernel ? "kernel" : "user", c.note);
    close(status);

    struct pollfd *pf = xcalloc((size_t)st.nrings + 1, sizeof(*pf));
    pf[0] = (struct pollfd){ .fd = ctl, .events = POLLIN };
    for (int i = 0; i < st.nrings; i++)
        pf[i + 1] = (struct pollfd){ .fd = st.rings[i].fd, .events = POLLIN };
    for (;;) {
        int n = poll(pf, (nfds_t)st.nrings + 1, 100);
        if (n < 0 && errno != EINTR)
            break;
        int alive = 0;
        for (int i = 0; i < st.nrings; i++) {
            drain(&st, &st.rings[i]);
            if (!(pf[i + 1].revents & POLLHUP))
                alive++;
            else
                pf[i + 1].events = 0;  /* the task is gone: its buffer is drained */
        }
        if (pf[0].revents & (POLLIN | POLLHUP | POLLERR))
            break;  /* the parent closed the pipe (or wrote): stop */
        if (!alive && n > 0)
            break;
    }
    for (int i = 0; i < st.nrings; i++) {
        ioctl(st.rings[i].fd, PERF_EVENT_IOC_DISABLE, 0);
        drain(&st, &st.rings[i]);
    }
    _exit(write_raw(&st, &c, target, freq, path) == 0 ? 0 : 5);
}

/* ---------------------------------------------------------------- the parent's side */

int profile_sampler_start(struct profile_sampler *s, pid_t target, const char *raw_path,
                          int freq_hz)
{
    int status[2], ctl[2];
    memset(s, 0, sizeof(*s));
    s->ctl = -1;
    if (kill(target, 0) < 0)
        return error("cannot profile process %d: %s", (int)target, strerror(errno));
    if (pipe2(status, O_CLOEXEC) < 0 || pipe2(ctl, O_CLOEXEC) < 0)
        return error("cannot start the profiler: pipe: %s", strerror(errno));
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(status[0]);
        close(status[1]);
        close(ctl[0]);
        close(ctl[1]);
        return error("cannot start the profiler: fork: %s", strerror(errno));
    }
    if (pid == 0) {
        close(status[0]);
        close(ctl[1]);
        sampler_main(target, raw_path, freq_hz, status[1], ctl[0]);
    }
    close(status[1]);
    close(ctl[0]);
    char buf[512];
    size_t len = 0;
    ssize_t n;
    while (len < sizeof(buf) - 1 && (n = read(status[0], buf + len, sizeof(buf) - 1 - len)) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            break;
        len += (size_t)n;
        if (memchr(buf, '\n', len))
            break;
    }
    close(status[0]);
    buf[len] = 0;
    buf[strcspn(buf, "\n")] = 0;
    if (!strncmp(buf, "ok ", 3)) {
        char ev[32], space[16];
        int pos = 0;
        sscanf(buf + 3, "%31s %15s %n", ev, space, &pos);
        s->pid = pid;
        s->ctl = ctl[1];
        s->raw_path = xstrdup(raw_path);
        s->event = xstrdup(ev);
        s->kernel = !strcmp(space, "kernel");
        s->note = pos && buf[3 + pos] ? xstrdup(buf + 3 + pos) : NULL;
        return 0;
    }
    close(ctl[1]);
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (!strncmp(buf, "refused ", 8)) {
        s->note = xstrdup(buf + 8);
        return 1;
    }
    return error("cannot start the profiler on process %d: %s", (int)target,
                 !strncmp(buf, "error ", 6) ? buf + 6 : "the sampler died");
}

int profile_sampler_stop(struct profile_sampler *s)
{
    if (!s->pid) {
        profile_sampler_release(s);
        return 0;
    }
    close(s->ctl);
    int st = 0;
    pid_t r;
    struct rusage ru;
    memset(&ru, 0, sizeof(ru));
    while ((r = wait4(s->pid, &st, 0, &ru)) < 0 && errno == EINTR)
        ;
    s->cpu_s = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
               (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
    int rc = 0;
    if (r < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        rc = error("the profiler of this run failed (%s %d): no profile file %s",
                   r >= 0 && WIFSIGNALED(st) ? "signal" : "exit",
                   r >= 0 && WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st), s->raw_path);
    s->pid = 0;
    profile_sampler_release(s);
    return rc;
}

void profile_sampler_release(struct profile_sampler *s)
{
    free(s->raw_path);
    free(s->event);
    free(s->note);
    s->raw_path = s->event = s->note = NULL;
}
