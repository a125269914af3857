/* pidstat: one process's /proc/PID/stat, parsed into a plain struct: the one reader of that
 * file for every part that asks about a process (the system metrics' CPU accounts, a managed
 * server's process group and identity, the profiler's process tree, a paused server). Field
 * meanings are proc(5)'s; times are in clock ticks (USER_HZ, sysconf(_SC_CLK_TCK)). Owns no
 * state and allocates nothing. */
#ifndef PGOLAB_UTIL_PIDSTAT_H
#define PGOLAB_UTIL_PIDSTAT_H

#include <stdint.h>

/* /proc/PID/stat: the fields pgolab uses. */
struct proc_pid_stat {
    int pid, ppid, pgrp;
    char state;                    /* R, S, D, T, Z, ... */
    uint64_t utime, stime;         /* this process (all its threads), ticks */
    uint64_t cutime, cstime;       /* its waited-for (reaped) children, ticks */
    uint64_t minflt, majflt;
    int num_threads;
    uint64_t starttime;            /* ticks after boot the process started: with the pid, its
                                    * identity (a later process may reuse the pid) */
    char comm[32];                 /* without the parentheses, truncated */
};

/* Parse the text of /proc/PID/stat (the comm may hold spaces and parentheses: the last ')'
 * ends it). 0, or -1 (no message) when it is malformed or ends before field 22, starttime.
 * *out is cleared first. */
int pidstat_parse(const char *text, struct proc_pid_stat *out);

/* Read and parse ROOT/PID/stat; root NULL is "/proc" (the system metrics pass another root
 * in tests). 0, or -1 (no message) when the process is gone, the file cannot be read or it is
 * malformed (*out then all zero). */
int pidstat_read(const char *root, long pid, struct proc_pid_stat *out);

#endif
