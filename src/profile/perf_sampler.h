/* perf_sampler: CPU sampling of a process tree with perf_event_open(2), no perf subprocess.
 *
 * profile_sampler_start() forks a sampler process. It opens, for every task (thread) of the
 * target process and of its descendant processes that exist at start, one sampling event per
 * online CPU with inherit=1, so threads and processes forked later (a PostgreSQL backend, a
 * mysqld connection thread, bench's workers) are followed too. The event is the hardware
 * cycle counter where the machine has one, else the software cpu-clock (this kind of VM has
 * no PMU); user space always, kernel space when kernel.perf_event_paranoid (or privilege)
 * allows. Each sample carries the pid and the frame-pointer call chain (no DWARF unwinding:
 * frames above code built without frame pointers are missing or wrong; the sampled function
 * itself, which the top-N tables use, is always right). The ring buffers also deliver
 * PERF_RECORD_MMAP2 / COMM / FORK / EXIT, so libraries dlopen'ed later and forked processes
 * resolve; the mappings that exist at start are read from /proc/PID/maps. A task that exits
 * during sampling simply stops producing samples.
 *
 * The sampler aggregates identical (pid, call chain) samples and writes the raw profile file
 * when stopped (or when every target is gone): a line-based text file, documented in
 * docs/profiles.md ("pgolab-profile-raw 1" ... "end"). src/profile/symbols.c turns it into
 * functions. The parent owns the struct profile_sampler; the sampler process owns nothing of
 * the parent's. */
#ifndef PGOLAB_PROFILE_PERF_SAMPLER_H
#define PGOLAB_PROFILE_PERF_SAMPLER_H

#include <stdbool.h>
#include <sys/types.h>

#define PROFILE_FREQ_DEFAULT 999  /* Hz; odd, so it does not run in lockstep with 1 kHz timers */

struct profile_sampler {
    pid_t pid;         /* the sampler process, 0 when none runs */
    int ctl;           /* write end of its control pipe; closing it stops the sampler */
    char *raw_path;    /* the raw profile file it writes */
    char *event;       /* "cycles" | "cpu-clock" (the event it opened) */
    bool kernel;       /* kernel space included */
    char *note;        /* one line on what was left out (kernel, a refused event), or NULL */
    double cpu_s;      /* after stop: the sampler process's own CPU time (user + sys), s */
};

/* Start sampling process `target` (and its threads and descendants) at freq_hz into raw_path.
 * Returns 0 when sampling runs (s->event, s->kernel and s->note say how), 1 when
 * perf_event_open was refused (s->note is the one line to print: the errno and the sysctl
 * kernel.perf_event_paranoid; nothing runs, nothing to stop), -1 with a message on another
 * error (no such process, fork failed). */
int profile_sampler_start(struct profile_sampler *s, pid_t target, const char *raw_path,
                          int freq_hz);

/* Stop the sampler, wait for it to write raw_path (s->cpu_s = its CPU time), and free s's
 * strings. 0 when the file is written, -1 with a message otherwise. A sampler never started
 * (s->pid 0) is a no-op (0). */
int profile_sampler_stop(struct profile_sampler *s);

/* Free s's strings without stopping anything (after a refused start). */
void profile_sampler_release(struct profile_sampler *s);

#endif
