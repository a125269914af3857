/* profile: wiping and checking the profile data a training run leaves behind (GCC .gcda,
 * clang .profraw merged into .profdata). A PGO build without profile data is an error. */
#include "toolchain/toolchain.h"
#include "util/strbuf.h"
#include "util/subprocess.h"
#include "util/util.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
        if (st >= 0) {
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
