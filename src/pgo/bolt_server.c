/* bolt_server: the BOLT variants of a server target, `bolt` (the baseline + BOLT),
 * `pgo+bolt` (the pgo build + BOLT) and `pgo+lto+bolt` (the pgo+lto build + BOLT), in any
 * group of build settings (clang:pgo+lto+bolt). A BOLT variant is not compiled: its install prefix
 * is a copy of its input build's, with the server binary (the recipe's bolt.binary) replaced first
 * by the llvm-bolt-instrumented binary, which is trained with the pipeline's trainer like the pgo
 * build (every forked process writing its own profile with the recipe's append_pid, periodic dumps
 * with its sleep_time; a clean shutdown), then by the binary llvm-bolt optimized with the merged
 * profile. The steps are toolchain/bolt.c's; this file puts them around a server. The gate and the
 * measurement take the variant like any other build. */
#include "toolchain/bolt.h"
#include "pgo/stages.h"
#include "util/fs.h"
#include "util/progress.h"
#include "util/strbuf.h"
#include "util/subprocess.h"
#include "util/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool is_bolt_name(const char *name)
{
    return strstr(name, "bolt") != NULL;
}

int pgo_bolt_check(const struct pgo_pipeline *p)
{
    const struct pgo_request *rq = p->rq;
    const char *first = NULL;
    bool pgo = false, pgo_bolt = false, pgo_lto = false, pgo_lto_bolt = false;
    for (int i = 0; i < rq->nvariants; i++) {
        if (is_bolt_name(rq->variants[i]) && !first)
            first = rq->variants[i];
        pgo = pgo || !strcmp(rq->variants[i], "pgo");
        pgo_bolt = pgo_bolt || !strcmp(rq->variants[i], "pgo+bolt");
        pgo_lto = pgo_lto || !strcmp(rq->variants[i], "pgo+lto");
        pgo_lto_bolt = pgo_lto_bolt || !strcmp(rq->variants[i], "pgo+lto+bolt");
    }
    if (!first)
        return 0;
    char g[128], named[256]; /* the group's "clang:" (or ""), the variant as written */
    snprintf(g, sizeof(g), "%s%s", p->label ? p->label : "", p->label ? ":" : "");
    snprintf(named, sizeof(named), "%s%s", g, first);
    first = named;
    if (!p->recipe.has_bolt)
        return error("--variants=%s: %s has no \"bolt\" key (how to build for BOLT, e.g. "
                     "\"bolt\": {\"link_flags\": [\"-Wl,--emit-relocs\"]}; docs/recipes.md)",
                     first, p->recipe.path);
    if (pgo_bolt && !pgo)
        return error("--variants=%spgo+bolt: it optimizes the pgo build, so --variants needs "
                     "%spgo too (e.g. --variants=baseline,%spgo,%spgo+bolt)", g, g, g, g);
    if (pgo_lto_bolt && !pgo_lto)
        return error("--variants=%spgo+lto+bolt: it optimizes the pgo+lto build, so --variants "
                     "needs %spgo+lto too (e.g. --variants=baseline,%spgo+lto,%spgo+lto+bolt)", g,
                     g, g, g);
    if (rq->ntrain != 1 || !strcmp(rq->train[0], "suite"))
        return error("--variants=%s: BOLT trains with the one workload trainer of the pgo build; "
                     "give a single --train=WORKLOAD[+WORKLOAD...] (not suite, not a list)", first);
    /* with a sleep time BOLT 16's runtime writes the profile only every N s (a watcher
     * process), not at exit: a training shorter than that would leave none */
    if (p->recipe.bolt_sleep_s > 0 && rq->train_time <= p->recipe.bolt_sleep_s)
        return error("--train-time=%d with --variants=%s: %s's bolt.sleep_time is %d s (the "
                     "instrumented server writes its BOLT profile every %d s, not at exit), so "
                     "train longer than that (--train-time=%d or more)", rq->train_time, first,
                     p->recipe.path, p->recipe.bolt_sleep_s, p->recipe.bolt_sleep_s,
                     2 * p->recipe.bolt_sleep_s);
    if (rq->gate == PGO_GATE_SUITE && p->recipe.suite_own_server)
        return error("--gate=suite with --variants=%s: the %s suite starts its build tree's own "
                     "server (server.suite_server \"own\" in %s), not the BOLTed binary; use "
                     "--gate=checksum", first, p->recipe.name, p->recipe.path);
    return bolt_tools_check();
}

/* Everything the variant read: its input binary, the training, BOLT's options and the
 * recipe's instrumentation settings. */
static char *bolt_stamp(const struct pgo_pipeline *p, const struct pgo_build *b,
                        const char *input_sha)
{
    static const char *const opt[] = { BOLT_OPT_OPTIONS, NULL };
    const struct pgo_request *rq = p->rq;
    struct strbuf sb = STRBUF_INIT;
    strbuf_init(&sb, 0);
    strbuf_addf(&sb, "input: %s\ninput-sha256: %s\nbinary: %s\ntrainer: %s\ntime: %d\n"
                "threads: %d\ntables: %d\ntable-size: %d\ntrain-options:",
                b->bolt_input->name, input_sha, p->recipe.bolt_binary, p->trainers[0].name,
                rq->train_time, rq->train_threads, rq->tables, rq->table_size);
    for (char **o = p->recipe.train_options; o && *o; o++)
        strbuf_addf(&sb, " %s", *o);
    strbuf_addf(&sb, "\nappend-pid: %d\nsleep-time: %d\ninstrument-options:",
                p->recipe.bolt_append_pid, p->recipe.bolt_sleep_s);
    for (char **o = p->recipe.bolt_instrument_options; o && *o; o++)
        strbuf_addf(&sb, " %s", *o);
    strbuf_addstr(&sb, "\noptions:");
    for (int k = 0; opt[k]; k++)
        strbuf_addf(&sb, " %s", opt[k]);
    strbuf_addch(&sb, '\n');
    return strbuf_detach(&sb);
}

/* The input's install prefix copied to the variant's (cp -a keeps modes and symlinks). */
static int copy_prefix(const char *from, const char *to, const char *log)
{
    if (remove_tree(to) < 0)
        return -1;
    const char *argv[] = { "cp", "-a", from, to, NULL };
    struct subprocess sp = { .argv = argv, .log_path = log };
    int st = subprocess_run(&sp);
    if (st != 0)
        return error("copying the install prefix %s to %s failed (exit %d; log %s)", from, to,
                     st, log);
    return 0;
}

/* Put the binary src at dst (atomically, executable). */
static int install_binary(const char *src, const char *dst)
{
    char *tmp = xasprintf("%s.pgolab-tmp", dst);
    int rc = 0;
    if (file_copy(src, tmp) < 0 || chmod(tmp, 0755) < 0 || rename(tmp, dst) < 0)
        rc = error("installing %s as %s: %s", src, dst, strerror(errno));
    if (rc < 0)
        unlink(tmp);
    free(tmp);
    return rc;
}

int pgo_bolt_build(struct pgo_pipeline *p, struct pgo_build *b)
{
    struct bolt_variant *v = b->bolt;
    const struct pgo_build *in = b->bolt_input;
    char *input = path_join(in->prefix, p->recipe.bolt_binary);
    char *target = path_join(b->prefix, p->recipe.bolt_binary);
    char *stamp_path = path_join(b->dir, "bolt.stamp");
    char *log = path_join(b->dir, "training.log");
    char *copy_log = path_join(b->dir, "copy.log");
    char *stamp = NULL, *input_sha = sha256_file(input);
    int rc = -1;

    b->cached = false;
    free(b->sha256);
    b->sha256 = NULL;
    v->name = b->name;
    v->input = input; /* owned by the variant from here: pgo_bolt_release() */
    v->dir = b->dir;
    v->append_pid = p->recipe.bolt_append_pid;
    v->sleep_s = p->recipe.bolt_sleep_s;
    v->instrument_options = p->recipe.bolt_instrument_options;
    if (!input_sha)
        goto out;
    stamp = bolt_stamp(p, b, input_sha);
    if (!p->rq->rebuild && stamp_matches(stamp_path, stamp) && bolt_read_log(v) == 0 &&
        file_size(target) > 0) {
        b->sha256 = sha256_file(b->product);
        b->cached = b->sha256 != NULL;
        rc = b->cached ? 0 : -1;
        goto out;
    }
    free(b->why);
    b->why = p->rq->rebuild ? xstrdup("--rebuild")
                            : xstrdup(is_file(stamp_path) ? "its input or training changed"
                                                          : "not built before");
    unlink(stamp_path);
    if (mkdir_p(b->dir) < 0 || stamp_write(copy_log, "") < 0)
        goto fail;
    v->seconds = 0;
    progress("%s: copying %s's install prefix", b->name, in->name);
    int crc = copy_prefix(in->prefix, b->prefix, copy_log);
    progress_done();
    if (crc < 0 || bolt_instrument(v) < 0)
        goto fail;
    /* the server's own user (postgres when pgolab is root) writes the profiles */
    if (chmod(v->profile_dir, 0777) < 0) {
        error("chmod %s: %s", v->profile_dir, strerror(errno));
        goto fail;
    }
    if (install_binary(v->instrumented, target) < 0 || stamp_write(log, "") < 0)
        goto fail;
    uint64_t t0 = now_ns();
    if (pgo_train_server(p, &p->trainers[0], b->prefix, log) < 0) {
        if (!*p->interrupted)
            error("%s: training the BOLT-instrumented %s failed (above; log %s): the variant "
                  "is not built and nothing was measured", b->name, target, log);
        goto fail;
    }
    b->bolt_train_seconds = (double)(now_ns() - t0) / 1e9;
    if (bolt_merge(v) < 0 || bolt_optimize(v) < 0 || install_binary(v->output, target) < 0)
        goto fail;
    b->seconds = v->seconds + b->bolt_train_seconds;
    b->sha256 = sha256_file(b->product);
    if (!b->sha256 || stamp_write(stamp_path, stamp) < 0)
        goto fail;
    rc = 0;
    goto out;
fail:
    /* no half variant: without its prefix the next run starts it again */
    remove_tree(b->prefix);
out:
    free(input_sha);
    free(stamp);
    free(target);
    free(stamp_path);
    free(log);
    free(copy_log);
    return rc;
}

void pgo_bolt_print(const struct pgo_build *b)
{
    const struct bolt_variant *v = b->bolt;
    printf("  %-13s %s  sha256 %.16s  ", b->name, b->product, b->sha256 ? b->sha256 : "?");
    if (b->cached)
        printf("(cached)\n");
    else
        printf("(%.1f s: BOLT %.1f s, training %.1f s; built: %s)\n", b->seconds, v->seconds,
               b->bolt_train_seconds, b->why ? b->why : "not built before");
    printf("  %-13s BOLT on %s: profile for %d of %d functions, %d .fdata file%s merged into "
           "%lld bytes\n", "", b->bolt_input->name, v->profiled, v->functions, v->fdata_files,
           v->fdata_files == 1 ? "" : "s", (long long)v->fdata_bytes);
    /* the -dyno-stats figures BOLT's layout is about, before -> after, and the whole file */
    static const char *const figures[] = { "taken branches", "executed instructions" };
    struct strbuf sb = STRBUF_INIT;
    strbuf_init(&sb, 0);
    strbuf_read_file(&sb, v->dyno_stats);
    printf("  %-13s dyno-stats:", "");
    for (size_t i = 0; i < ARRAY_SIZE(figures); i++) {
        long long before, after;
        if (bolt_dyno_figure(sb.buf, figures[i], &before, &after) == 0)
            printf(" %s %lld -> %lld (%+.1f%%),", figures[i], before, after,
                   before ? 100.0 * (double)(after - before) / (double)before : 0.0);
    }
    printf(" %s\n", v->dyno_stats);
    strbuf_release(&sb);
}

void pgo_bolt_release(struct pgo_build *b)
{
    if (!b->bolt)
        return;
    free((char *)b->bolt->input);
    bolt_variant_release(b->bolt);
    free(b->bolt);
    b->bolt = NULL;
}
