/* profile: wiping and checking the profile data a training run leaves behind (GCC .gcda,
 * clang .profraw merged into .profdata). A PGO build without profile data is an error. */
#include "toolchain/toolchain.h"
#include "util/argvec.h"
#include "util/fs.h"
#include "util/strbuf.h"
#include "util/subprocess.h"
#include "util/util.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int profile_move(const char *from, const char *to)
{
    struct argvec files = ARGVEC_INIT;
    int rc = 0;
    if (remove_tree(to) < 0 || mkdir_p(to) < 0)
        return -1;
    list_files(&files, from, "");
    for (int i = 0; i < files.n && rc == 0; i++) {
        char *dest = path_join(to, strrchr(files.v[i], '/') + 1);
        if (rename(files.v[i], dest) < 0)
            rc = error("moving profile data %s to %s: %s", files.v[i], dest, strerror(errno));
        free(dest);
    }
    argvec_clear(&files);
    return rc;
}

int profile_wipe(const char *profile_dir)
{
    if (remove_tree(profile_dir) < 0)
        return -1;
    return mkdir_p(profile_dir);
}

long long profdata_max_count(const char *show_text)
{
    const char *key = "Maximum function count:";
    const char *p = show_text ? strstr(show_text, key) : NULL;
    if (!p)
        return -1;
    return strtoll(p + strlen(key), NULL, 10);
}

/* Non-empty files of dir ending in suffix into out; returns their total size. */
static off_t nonempty_files(struct argvec *out, const char *dir, const char *suffix)
{
    struct argvec all = ARGVEC_INIT;
    off_t total = 0;
    list_files(&all, dir, suffix);
    for (int i = 0; i < all.n; i++) {
        off_t sz = file_size(all.v[i]);
        if (sz > 0) {
            argvec_push(out, all.v[i]);
            total += sz;
        }
    }
    argvec_clear(&all);
    return total;
}

int profraw_version(const char *path)
{
    unsigned char h[16];
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(h, 1, sizeof(h), f) : 0;
    if (f)
        fclose(f);
    if (n < sizeof(h))
        return -1;
    uint64_t magic = 0, version = 0;
    for (int i = 7; i >= 0; i--) { /* little-endian, as the x86-64 runtime writes them */
        magic = magic << 8 | h[i];
        version = version << 8 | h[8 + i];
    }
    if (magic != PROFRAW_MAGIC_64)
        return -1;
    return (int)(version & 0xffffffffu); /* the high bits are variant flags */
}

/* The "LLVM version X" of llvm-profdata at path (`path merge --version`), or NULL; caller
 * frees. */
static char *profdata_llvm_version(const char *path)
{
    struct strbuf out = STRBUF_INIT;
    const char *argv[] = { path, "merge", "--version", NULL };
    struct subprocess sp = { .argv = argv, .out = &out, .quiet_stderr = 1 };
    strbuf_init(&out, 0);
    char *v = NULL;
    if (subprocess_run(&sp) == 0) {
        const char *p = strstr(out.buf, "LLVM version ");
        if (p)
            v = xstrndup(p, strcspn(p, "\n"));
    }
    strbuf_release(&out);
    return v;
}

/* After a failed merge whose log names the format version: one line naming the raw profile's
 * format version and llvm-profdata's LLVM version (0), else -1 (no such file found). */
static int version_mismatch(const struct cc_info *cc, const struct argvec *raw, const char *log)
{
    char *tail = file_tail(log, 20);
    bool named = tail && strstr(tail, "format version");
    free(tail);
    if (!named)
        return -1;
    int i = 0, v = -1;
    while (i < raw->n && (v = profraw_version(raw->v[i])) < 0)
        i++;
    if (v < 0)
        return -1;
    char *llvm = profdata_llvm_version(cc->profdata);
    error("the raw profile %s has format version %d, which %s (%s) cannot read: the "
          "instrumented build's compiler and llvm-profdata must be of the same LLVM release",
          raw->v[i], v, cc->profdata, llvm ? llvm : "LLVM version unknown");
    free(llvm);
    return 0;
}

static int merge_clang(const struct cc_info *cc, const char *profile_dir, const char *profdata,
                       const struct argvec *raw)
{
    struct argvec argv = ARGVEC_INIT;
    char *log = path_join(profile_dir, "merge.log");
    int rc = -1;
    argvec_push(&argv, cc->profdata);
    argvec_push(&argv, "merge");
    argvec_pushf(&argv, "-output=%s", profdata);
    argvec_pushv(&argv, (const char *const *)raw->v);
    unlink(profdata);
    unlink(log);
    struct subprocess sp = { .argv = argvec_argv(&argv), .log_path = log };
    int st = subprocess_run(&sp);
    if (st != 0 || file_size(profdata) <= 0) {
        if (st >= 0 && version_mismatch(cc, raw, log) < 0) {
            char *cmd = subprocess_argv_str(argvec_argv(&argv));
            char *tail = file_tail(log, 10);
            error("merging profile data failed (exit %d): %s\n--- last lines of %s ---\n%s", st,
                  cmd, log, tail);
            free(cmd);
            free(tail);
        }
        goto out;
    }

    /* An all-zero profile means the instrumented code never ran. */
    struct strbuf show = STRBUF_INIT;
    const char *show_argv[] = { cc->profdata, "show", profdata, NULL };
    struct subprocess sp2 = { .argv = show_argv, .out = &show, .quiet_stderr = 1 };
    strbuf_init(&show, 0);
    st = subprocess_run(&sp2);
    if (st == 0 && profdata_max_count(show.buf) == 0) {
        error("training produced no profile data in %s (all counts are zero)", profile_dir);
        strbuf_release(&show);
        goto out;
    }
    strbuf_release(&show);
    rc = 0;
out:
    argvec_clear(&argv);
    free(log);
    return rc;
}

int profile_collect(const struct cc_info *cc, const char *profile_dir, const char *profdata,
                    struct profile_info *info)
{
    struct argvec raw = ARGVEC_INIT;
    int rc = -1;
    memset(info, 0, sizeof(*info));
    info->bytes = nonempty_files(&raw, profile_dir, cc->family == CC_GCC ? ".gcda" : ".profraw");
    info->files = raw.n;
    if (!raw.n) {
        error("training produced no profile data in %s", profile_dir);
        goto out;
    }
    if (cc->family == CC_GCC) {
        info->id = sha256_files((const char *const *)raw.v);
    } else {
        if (!profdata || merge_clang(cc, profile_dir, profdata, &raw) < 0)
            goto out;
        info->id = sha256_file(profdata);
    }
    if (info->id)
        rc = 0;
out:
    argvec_clear(&raw);
    return rc;
}

void profile_info_release(struct profile_info *info)
{
    free(info->id);
    memset(info, 0, sizeof(*info));
}
