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
/* The running pgolab binary (for child processes), absolute. Caller frees. */
char *self_exe(void);

#endif
