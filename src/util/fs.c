/* fs: file-system helpers shared by the commands and the build pipeline: mkdir -p, rm -rf,
 * type and size checks, path joining, absolute paths, private temporary files and
 * directories. Strings returned are caller-owned. */
#include "util/fs.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <endian.h>
#include <stdint.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

int mkdir_p(const char *path)
{
    char *p = xstrdup(path);
    for (char *s = p + 1;; s++) {
        if (*s != '/' && *s != '\0')
            continue;
        char c = *s;
        *s = '\0';
        if (mkdir(p, 0755) < 0 && errno != EEXIST) {
            int e = errno;
            free(p);
            return error("cannot create directory %s: %s", path, strerror(e));
        }
        *s = c;
        if (!c)
            break;
    }
    free(p);
    if (!is_dir(path))
        return error("%s exists and is not a directory", path);
    return 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    int rc = (flag == FTW_DP) ? rmdir(path) : unlink(path);
    if (rc < 0 && errno != ENOENT) {
        error("cannot remove %s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

int remove_tree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) < 0)
        return errno == ENOENT ? 0 : error("cannot stat %s: %s", path, strerror(errno));
    if (!S_ISDIR(st.st_mode)) {
        if (unlink(path) < 0)
            return error("cannot remove %s: %s", path, strerror(errno));
        return 0;
    }
    return nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS) == 0 ? 0 : -1;
}

bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

bool is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

off_t file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? st.st_size : -1;
}

char *path_join(const char *a, const char *b)
{
    size_t la = strlen(a);
    if (la && a[la - 1] == '/')
        return xasprintf("%s%s", a, b);
    return xasprintf("%s/%s", a, b);
}

char *abs_path(const char *path)
{
    char real[PATH_MAX], cwd[PATH_MAX];
    if (realpath(path, real))
        return xstrdup(real);
    if (path[0] == '/' || !getcwd(cwd, sizeof(cwd)))
        return xstrdup(path);
    return path_join(cwd, path);
}

/* PATH when the environment has none: Debian's default for a login shell, with the sbin
 * directories, where the database servers are installed. */
#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

char *find_in_path(const char *name)
{
    if (strchr(name, '/'))
        return is_file(name) && access(name, X_OK) == 0 ? xstrdup(name) : NULL;
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = DEFAULT_PATH;
    char *found = NULL;
    while (!found) {
        const char *colon = strchr(path, ':');
        size_t len = colon ? (size_t)(colon - path) : strlen(path);
        char *dir = len ? xstrndup(path, len) : xstrdup("."); /* empty: the current directory */
        char *cand = path_join(dir, name);
        free(dir);
        if (is_file(cand) && access(cand, X_OK) == 0)
            found = cand;
        else
            free(cand);
        if (!colon)
            break;
        path = colon + 1;
    }
    return found;
}

int check_writable(const char *opt, const char *path)
{
    char *tmp = xasprintf("%s.tmp", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0644);
    int e = errno;
    if (fd >= 0) {
        close(fd);
        unlink(tmp);
    }
    free(tmp);
    if (fd < 0 && e != EEXIST)
        return error("%s=%s: cannot write there: %s", opt, path, strerror(e));
    if (is_dir(path))
        return error("%s=%s: is a directory (expected a file name)", opt, path);
    return 0;
}

char *self_exe(void)
{
    return abs_path("/proc/self/exe");
}

long long fs_free_bytes(const char *path)
{
    struct statvfs sv;
    if (statvfs(path, &sv) < 0)
        return -1;
    return (long long)sv.f_bavail * (long long)sv.f_frsize;
}

int file_append(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0)
        return error("cannot write %s: %s", path, strerror(errno));
    size_t len = strlen(text);
    for (size_t off = 0; off < len;) {
        ssize_t w = write(fd, text + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0) {
            int e = errno;
            close(fd);
            return error("cannot write %s: %s", path, strerror(e));
        }
        off += (size_t)w;
    }
    if (close(fd) < 0)
        return error("cannot write %s: %s", path, strerror(errno));
    return 0;
}

int file_copy(const char *src, const char *dst)
{
    char buf[1 << 16];
    int in = open(src, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return -1;
    int out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (out < 0) {
        int e = errno;
        close(in);
        errno = e;
        return -1;
    }
    ssize_t n;
    int rc = 0;
    while ((n = read(in, buf, sizeof(buf))) != 0) {
        if (n < 0) {
            if (errno == EINTR)
                continue;
            rc = -1;
            break;
        }
        for (ssize_t off = 0; off < n;) {
            ssize_t w = write(out, buf + off, (size_t)(n - off));
            if (w < 0) {
                if (errno == EINTR)
                    continue;
                rc = -1;
                break;
            }
            off += w;
        }
        if (rc < 0)
            break;
    }
    int e = errno;
    close(in);
    if (close(out) < 0 && rc == 0) {
        e = errno;
        rc = -1;
    }
    errno = e;
    return rc;
}

/* The default directory of private temporaries (fs.h). */
static const char *private_tmp_base(void)
{
    const char *t = getenv("TMPDIR");
    if (is_dir("/dev/shm") && access("/dev/shm", W_OK | X_OK) == 0)
        return "/dev/shm";
    return t && *t ? t : "/tmp";
}

char *private_tmpdir(const char *base, const char *prefix)
{
    char *tmpl = xasprintf("%s/%s.XXXXXX", base ? base : private_tmp_base(), prefix);
    if (!mkdtemp(tmpl)) {
        error("cannot create a private directory %s: %s", tmpl, strerror(errno));
        free(tmpl);
        return NULL;
    }
    return tmpl;
}

int private_tmpfile(const char *prefix, char **path)
{
    char *tmpl = xasprintf("%s/%s.XXXXXX", private_tmp_base(), prefix);
    int fd = mkstemp(tmpl);
    if (fd < 0) {
        error("cannot create a private file %s: %s", tmpl, strerror(errno));
        free(tmpl);
        *path = NULL;
        return -1;
    }
    *path = tmpl;
    return fd;
}

/* The ACL's extended-attribute form (Linux's posix_acl_xattr: a version word, then one entry
 * per tag, all little-endian; acl(5) for the tags and permission bits). */
int dir_share_files(const char *dir)
{
    enum { ACL_XATTR_VERSION = 2, TAG_USER_OBJ = 0x01, TAG_GROUP_OBJ = 0x04, TAG_OTHER = 0x20,
           PERM_RWX = 7 };
    static const uint16_t tags[] = { TAG_USER_OBJ, TAG_GROUP_OBJ, TAG_OTHER };
    unsigned char buf[4 + 3 * 8];
    uint32_t v = htole32(ACL_XATTR_VERSION);
    memcpy(buf, &v, 4);
    for (size_t i = 0; i < 3; i++) {
        uint16_t tag = htole16(tags[i]), perm = htole16(PERM_RWX);
        uint32_t id = htole32(UINT32_MAX); /* ACL_UNDEFINED_ID: the base entries name nobody */
        memcpy(buf + 4 + i * 8, &tag, 2);
        memcpy(buf + 4 + i * 8 + 2, &perm, 2);
        memcpy(buf + 4 + i * 8 + 4, &id, 4);
    }
    if (chmod(dir, 0777) < 0)
        return error("chmod 0777 %s: %s", dir, strerror(errno));
    if (setxattr(dir, "system.posix_acl_default", buf, sizeof(buf), 0) == 0)
        return 1;
    if (errno == ENOTSUP || errno == EOPNOTSUPP)
        return 0;
    return error("setting a default ACL on %s: %s", dir, strerror(errno));
}
