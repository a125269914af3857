/* fs: file-system helpers shared by the commands and the build pipeline (mkdir -p, rm -rf,
 * checks, paths). Strings returned are caller-owned; errors are reported with error(). */
#ifndef PGOLAB_FS_H
#define PGOLAB_FS_H

#include <stdbool.h>
#include <sys/types.h>

/* mkdir -p with mode 0755. -1 with a message. */
int mkdir_p(const char *path);
/* rm -rf (does not follow symlinks); a missing path is fine. -1 with a message. */
int remove_tree(const char *path);
bool is_dir(const char *path);
bool is_file(const char *path);   /* a regular file (after following symlinks) */
/* Size in bytes, or -1 if the file does not exist. */
off_t file_size(const char *path);
/* a + "/" + b. Caller frees. */
char *path_join(const char *a, const char *b);
/* Absolute form of path: realpath() when it exists, else cwd-joined. Caller frees. */
char *abs_path(const char *path);
/* The executable that running name would start: the first regular file in a directory of
 * $PATH (an empty entry is the current directory, as for execvp; no PATH: the sbin and bin
 * directories under /usr/local, /usr and /) that this process may execute, as dir/name, not
 * resolved further; name itself when it holds a '/' and is one. NULL when there is none.
 * Caller frees. */
char *find_in_path(const char *name);
/* Check early that a file can be written at path (creates and removes path + ".tmp", the
 * name atomic writers use), so a long run does not fail at its end. -1 with a message naming
 * opt (e.g. "--output"). */
int check_writable(const char *opt, const char *path);
/* Bytes an unprivileged writer may still use on the file system of path (statvfs f_bavail x
 * f_frsize), or -1 if path cannot be examined. */
long long fs_free_bytes(const char *path);
/* Append text to the file at path (created, mode 0644, if missing): logs that grow by a
 * header line per step, without reading them back. 0, or -1 with a message. */
int file_append(const char *path, const char *text);
/* Copy the file src to dst (created or truncated, mode 0644). 0, or -1 with errno set (no
 * message). */
int file_copy(const char *src, const char *dst);
/* Make dir a place every user can create and update files in whatever their umask: mode
 * 0777 and a default POSIX ACL user::rwx,group::rwx,other::rwx (the system.posix_acl_default
 * extended attribute; with a default ACL the kernel ignores the creating process's umask), so
 * a file one user creates there (an instrumented program's profile, written at exit) stays
 * writable for the next program that runs as another user. Returns 1 with the ACL set, 0 when
 * the file system has no ACLs (mode 0777 only: files then follow each creator's umask), -1
 * with a message. */
int dir_share_files(const char *dir);
/* The running pgolab binary (for child processes), absolute. Caller frees. */
char *self_exe(void);

/* Temporary files and directories, private: in a shared directory such as /dev/shm or /tmp
 * a predictable name like NAME-PID can be created or symlinked first by another local user,
 * so every name is random and created exclusively. The default directory they go in: /dev/shm when
 * it is writable (tmpfs, the seeds' RAM disk), else $TMPDIR, else /tmp. */
/* A new directory BASE/PREFIX.XXXXXX (mkdtemp: mode 0700, created exclusively with a name
 * nobody can guess; base NULL: the default directory). Caller frees; NULL with a message. */
char *private_tmpdir(const char *base, const char *prefix);
/* A new file PREFIX.XXXXXX in the default directory (mkstemp: mode 0600, O_EXCL), its path in *path
 * (caller frees); returns the open descriptor, or -1 with a message. */
int private_tmpfile(const char *prefix, char **path);

#endif
