/* profile_check: reading a trainer's profile counters with the toolchain's tools and deciding
 * whether the training is in them (see profile_check.h for what is checked and why). */
#include "pgo/profile_check.h"
#include "pgo/profile_functions.h"
#include "util/fs.h"
#include "util/progress.h"
#include "util/signals.h"
#include "util/strbuf.h"
#include "util/subprocess.h"
#include "util/util.h"

#include <assert.h>
#include <ftw.h>
#include <jansson.h>
#include <limits.h>
#include <ctype.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define DUMP_BATCH 200          /* .gcda files per gcov-dump call */
#define MAX_HOT_FUNCTIONS 4096  /* functions of one hot object read for their idents */

/* ---- parsers -------------------------------------------------------------------------- */

/* Is [s, s+n) of the form "  INDEX: v v v" (a counter values line)? Sets *vals after ':'. */
static bool values_line(const char *s, size_t n, const char **vals)
{
    size_t i = 0;
    while (i < n && s[i] == ' ')
        i++;
    size_t d = i;
    while (i < n && isdigit((unsigned char)s[i]))
        i++;
    if (i == d || i >= n || s[i] != ':')
        return false;
    *vals = s + i + 1;
    return true;
}

struct dump_state {
    bool in_file, in_fn, in_arcs, want;
    unsigned long ident;
    unsigned long long fn_sum, file_sum;
};

static void end_function(struct dump_state *st, struct profile_health *h, struct gcda_fn *fns,
                         int max, int *nfns)
{
    if (!st->in_fn)
        return;
    if (st->fn_sum > 0)
        h->functions_counted++;
    if (st->want && fns && *nfns < max) {
        fns[*nfns].ident = st->ident;
        fns[*nfns].sum = st->fn_sum;
        (*nfns)++;
    }
    st->in_fn = false;
    st->fn_sum = 0;
}

static void end_file(struct dump_state *st, struct profile_health *h, struct gcda_fn *fns, int max,
                     int *nfns, unsigned long long *file_sum)
{
    end_function(st, h, fns, max, nfns);
    if (!st->in_file)
        return;
    if (st->file_sum > 0)
        h->objects_counted++;
    if (st->want && file_sum)
        *file_sum = st->file_sum;
    st->in_file = false;
    st->file_sum = 0;
}

void gcov_dump_parse(const char *text, struct profile_health *h, const char *want_file,
                     struct gcda_fn *fns, int max, int *nfns, unsigned long long *file_sum)
{
    struct dump_state st = { 0 };
    char *cur = NULL;
    const char *p = text, *line;
    size_t len;
    if (nfns)
        *nfns = 0;
    while (prof_next_line(&p, &line, &len)) {
        const char *sep = memmem(line, len, ".gcda:", 6);
        if (!sep)
            continue;
        size_t flen = (size_t)(sep - line) + 5;
        if (!cur || strlen(cur) != flen || strncmp(cur, line, flen)) {
            end_file(&st, h, fns, max, nfns, file_sum);
            free(cur);
            cur = xstrndup(line, flen);
            st.in_file = true;
            st.want = want_file && !strcmp(cur, want_file);
        }
        const char *rest = sep + 6, *end = line + len, *vals;
        size_t rlen = (size_t)(end - rest);
        if (memmem(rest, rlen, "FUNCTION ident=", 15)) {
            end_function(&st, h, fns, max, nfns);
            h->functions++;
            st.in_fn = true;
            st.in_arcs = false;
            st.ident = strtoul(strstr(rest, "ident=") + 6, NULL, 10);
        } else if (memmem(rest, rlen, "COUNTERS ", 9)) {
            st.in_arcs = memmem(rest, rlen, "COUNTERS arcs ", 14) != NULL;
        } else if (values_line(rest, rlen, &vals)) {
            if (st.in_arcs) {
                unsigned long long s = prof_sum_numbers(vals, end);
                st.fn_sum += s;
                st.file_sum += s;
                h->total += s;
            }
        } else {
            st.in_arcs = false; /* another record (summary, ...) */
        }
    }
    end_file(&st, h, fns, max, nfns, file_sum);
    free(cur);
}

/* Is [name, name+n) the function: its plain name, or a C++ (Itanium ABI) mangled name whose
 * last name component it is ("_Z16dispatch_command..." for dispatch_command). */
static bool name_is(const char *name, size_t n, const char *function)
{
    size_t fl = strlen(function);
    if (n == fl && !strncmp(name, function, fl))
        return true;
    if (n < 2 || strncmp(name, "_Z", 2))
        return false;
    char *piece = xasprintf("%zu%s", fl, function);
    bool hit = memmem(name, n, piece, strlen(piece)) != NULL;
    free(piece);
    return hit;
}

unsigned long gcno_ident(const char *text, const char *function)
{
    const char *p = text, *line;
    size_t len;
    unsigned long ident = 0;
    while (!ident && prof_next_line(&p, &line, &len)) {
        const char *f = memmem(line, len, "FUNCTION ident=", 15);
        const char *q = f ? memchr(line, '`', len) : NULL;
        const char *e = q ? memchr(q + 1, '\'', (size_t)(line + len - q - 1)) : NULL;
        if (e && name_is(q + 1, (size_t)(e - q - 1), function))
            ident = strtoul(f + 15, NULL, 10);
    }
    return ident;
}

/* Does the clang function name (e.g. "main", "sqlite3.c:sqlite3VdbeExec", or
 * "src/x/y.c:fn" for a file-local function) match hot? */
static bool clang_name_matches(const char *name, size_t n, const struct profile_hot *hot)
{
    const char *colon = memrchr(name, ':', n);
    if (!colon)
        return name_is(name, n, hot->function);
    if (!name_is(colon + 1, (size_t)(name + n - colon - 1), hot->function))
        return false;
    if (!hot->object)
        return true;
    /* the file part's base name without its extension must be the object */
    const char *file = name;
    for (const char *s = name; s < colon; s++)
        if (*s == '/')
            file = s + 1;
    size_t ol = strlen(hot->object);
    return (size_t)(colon - file) > ol && !strncmp(file, hot->object, ol) && file[ol] == '.';
}

void profdata_show_parse(const char *text, struct profile_health *h)
{
    const char *p = text, *line;
    size_t len;
    bool in_fn = false;
    unsigned long long sum = 0;
    int hot_i[64];
    int nhot_i = 0;

    for (;;) {
        bool more = prof_next_line(&p, &line, &len);
        bool fn_start = more && len > 3 && line[0] == ' ' && line[1] == ' ' && line[2] != ' ' &&
                        line[len - 1] == ':';
        bool top = more && len > 0 && line[0] != ' ';
        if (in_fn && (!more || fn_start || top)) {
            h->total += sum;
            if (sum > 0)
                h->functions_counted++;
            for (int k = 0; k < nhot_i; k++) {
                h->hot[hot_i[k]].found = true;
                h->hot[hot_i[k]].count += sum;
            }
            in_fn = false;
        }
        if (!more)
            break;
        if (fn_start) {
            in_fn = true;
            sum = 0;
            nhot_i = 0;
            h->functions++;
            for (int k = 0; k < h->nhot && nhot_i < (int)ARRAY_SIZE(hot_i); k++)
                if (clang_name_matches(line + 2, len - 3, &h->hot[k]))
                    hot_i[nhot_i++] = k;
            continue;
        }
        if (!in_fn)
            continue;
        const char *fc = memmem(line, len, "Function count:", 15);
        const char *bc = memmem(line, len, "Block counts:", 13);
        if (fc)
            sum += strtoull(fc + 15, NULL, 10);
        else if (bc)
            sum += prof_sum_numbers(bc + 13, line + len);
    }
}

/* Is the data or notes file path (ext ".gcda" or ".gcno") the object's? (gcda_is_object) */
static bool file_is_object(const char *path, const char *ext, const char *object)
{
    static const char *const src_ext[] = { ".c", ".cc", ".cpp", ".cxx" };
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *hash = strrchr(base, '#');
    if (hash)
        base = hash + 1;
    size_t bl = strlen(base), ol = strlen(object);
    if (bl < 5 || strcmp(base + bl - 5, ext))
        return false;
    bl -= 5;
    /* CMake names objects after the whole source name: sql_parse.cc.o, sql_parse.cc.gcda */
    for (size_t i = 0; i < ARRAY_SIZE(src_ext); i++) {
        size_t el = strlen(src_ext[i]);
        if (bl > el && !strncmp(base + bl - el, src_ext[i], el)) {
            bl -= el;
            break;
        }
    }
    if (bl == ol)
        return !strncmp(base, object, ol);
    return bl > ol && base[bl - ol - 1] == '-' && !strncmp(base + bl - ol, object, ol);
}

bool gcda_is_object(const char *path, const char *object)
{
    return file_is_object(path, ".gcda", object);
}

/* ---- reading -------------------------------------------------------------------------- */

static void parse_hot(struct profile_health *h, char *const *hot)
{
    int n = 0;
    while (hot && hot[n])
        n++;
    h->hot = n ? xcalloc((size_t)n, sizeof(*h->hot)) : NULL;
    h->nhot = n;
    for (int i = 0; i < n; i++) {
        struct profile_hot *x = &h->hot[i];
        const char *colon = strchr(hot[i], ':');
        x->spec = xstrdup(hot[i]);
        x->object = colon ? xstrndup(hot[i], (size_t)(colon - hot[i])) : NULL;
        x->function = xstrdup(colon ? colon + 1 : hot[i]);
    }
}

/* gcc: the counters of every .gcda, then each hot function's own count. */
static int read_gcc(const struct profile_check_in *in, struct profile_health *h,
                    const struct argvec *files)
{
    char *dump = gcov_dump_program(in->cc->major);
    int rc = -1;
    if (!dump)
        return -1;
    for (int i = 0; i < files->n; i += DUMP_BATCH) {
        struct argvec argv = ARGVEC_INIT;
        argvec_push(&argv, dump);
        argvec_push(&argv, "-l");
        for (int j = i; j < files->n && j < i + DUMP_BATCH; j++)
            argvec_push(&argv, files->v[j]);
        struct strbuf out = STRBUF_INIT;
        strbuf_init(&out, 1 << 20);
        int r = prof_run_tool("profile check", argvec_argv(&argv), &out);
        if (r == 0)
            gcov_dump_parse(out.buf, h, NULL, NULL, 0, NULL, NULL);
        strbuf_release(&out);
        argvec_clear(&argv);
        if (r < 0)
            goto out;
    }
    for (int k = 0; k < h->nhot; k++) {
        struct profile_hot *x = &h->hot[k];
        const char *gcda = NULL;
        for (int i = 0; x->object && i < files->n && !gcda; i++)
            if (gcda_is_object(files->v[i], x->object))
                gcda = files->v[i];
        if (!gcda)
            continue; /* not found: the verdict says so */
        x->found = true;
        struct profile_health scratch = { 0 };
        struct gcda_fn *fns = xcalloc(MAX_HOT_FUNCTIONS, sizeof(*fns));
        int nfns = 0;
        unsigned long long fsum = 0;
        struct strbuf out = STRBUF_INIT;
        strbuf_init(&out, 0);
        const char *a1[] = { dump, "-l", gcda, NULL };
        int r = prof_run_tool("profile check", a1, &out);
        if (r == 0)
            gcov_dump_parse(out.buf, &scratch, gcda, fns, MAX_HOT_FUNCTIONS, &nfns, &fsum);
        strbuf_reset(&out);
        char *notes = in->notes_dir ? gcda_notes_path(in->notes_dir, gcda) : NULL;
        unsigned long ident = 0;
        bool have_notes = r == 0 && notes && is_file(notes);
        if (have_notes) {
            const char *a2[] = { dump, notes, NULL };
            if ((r = prof_run_tool("profile check", a2, &out)) == 0)
                ident = gcno_ident(out.buf, x->function);
        }
        /* with notes the function must be in them; without, the object's count stands in */
        x->found = !have_notes || ident != 0;
        x->by_object = !have_notes;
        x->count = have_notes ? 0 : fsum;
        for (int i = 0; ident && i < nfns; i++)
            if (fns[i].ident == ident)
                x->count = fns[i].sum;
        free(notes);
        free(fns);
        strbuf_release(&out);
        if (r < 0)
            goto out;
    }
    rc = 0;
out:
    free(dump);
    return rc;
}

static int read_clang(const struct profile_check_in *in, struct profile_health *h)
{
    if (!in->cc->profdata || !in->profdata)
        return error("profile check: no llvm-profdata for %s", in->cc->cc);
    const char *argv[] = { in->cc->profdata, "show", "--all-functions", "--counts", in->profdata,
                           NULL };
    struct strbuf out = STRBUF_INIT;
    strbuf_init(&out, 1 << 20);
    int rc = prof_run_tool("profile check", argv, &out);
    if (rc == 0)
        profdata_show_parse(out.buf, h);
    strbuf_release(&out);
    return rc;
}

/* Can uid write a file of st? (The owner's bits for its owner, else the others' bits: the
 * profile directory's files are not shared through groups.) */
static bool writable_by(const struct stat *st, uid_t uid)
{
    if (uid == 0)
        return true;
    if (st->st_uid == uid)
        return st->st_mode & S_IWUSR;
    return st->st_mode & S_IWOTH;
}

static void check_files(const struct profile_check_in *in, struct profile_health *h,
                        const struct argvec *files)
{
    for (int i = 0; i < files->n; i++) {
        struct stat st;
        if (stat(files->v[i], &st) < 0)
            continue;
        if (!writable_by(&st, in->train_uid)) {
            if (!h->foreign++) {
                struct passwd *pw = getpwuid(st.st_uid);
                h->foreign_example = xstrdup(files->v[i]);
                h->foreign_owner = pw ? xstrdup(pw->pw_name) : xasprintf("uid %d", (int)st.st_uid);
            }
        }
        if (in->train_start > 0 && (int64_t)st.st_mtime < in->train_start - 1 && !h->stale++)
            h->stale_example = xstrdup(files->v[i]);
    }
}

/* A line a profile runtime prints when counts are lost. */
static bool profile_error_line(const char *line, size_t len)
{
    return memmem(line, len, "profiling:", 10) || memmem(line, len, "LLVM Profile Error", 18) ||
           memmem(line, len, "LLVM Profile Warning", 20);
}

static void scan_logs(const struct profile_check_in *in, struct profile_health *h)
{
    for (char *const *l = in->logs; l && *l; l++) {
        struct strbuf sb = STRBUF_INIT;
        strbuf_init(&sb, 0);
        if (strbuf_read_file(&sb, *l) == 0) {
            const char *p = sb.buf, *line;
            size_t len;
            while (prof_next_line(&p, &line, &len))
                if (profile_error_line(line, len) && !h->log_errors++) {
                    h->log_error = xstrndup(line, len);
                    h->log_error_file = xstrdup(*l);
                }
        }
        strbuf_release(&sb);
    }
}

int profile_health_read(const struct profile_check_in *in, struct profile_health *h)
{
    bool gcc = in->cc->family == CC_GCC;
    struct argvec files = ARGVEC_INIT;
    memset(h, 0, sizeof(*h));
    parse_hot(h, in->hot);
    h->train_user = in->train_user ? xstrdup(in->train_user)
                                   : xasprintf("uid %d", (int)in->train_uid);
    list_files(&files, in->profile_dir, gcc ? ".gcda" : ".profraw");
    h->files = files.n;
    check_files(in, h, &files);
    scan_logs(in, h);
    int rc = gcc ? read_gcc(in, h, &files) : read_clang(in, h);
    argvec_clear(&files);
    assert(h->functions_counted <= h->functions);
    return rc;
}

/* ---- keeping the notes ------------------------------------------------------------------ */

static struct {
    size_t from_len;
    const char *to;
    struct profile_health hot; /* the hot specs, parsed once (parse_hot) */
    int rc;
} keep;

static int keep_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    size_t n = strlen(path);
    if (type != FTW_F || n < 5 || strcmp(path + n - 5, ".gcno"))
        return 0;
    bool wanted = false;
    for (int k = 0; k < keep.hot.nhot && !wanted; k++)
        wanted = keep.hot.hot[k].object && file_is_object(path, ".gcno", keep.hot.hot[k].object);
    if (!wanted)
        return 0;
    char *dest = path_join(keep.to, path + keep.from_len + 1);
    char *dir = xstrndup(dest, (size_t)(strrchr(dest, '/') - dest));
    if (mkdir_p(dir) < 0 || file_copy(path, dest) < 0) {
        keep.rc = error("keeping the profile notes: cannot copy %s to %s", path, dest);
        free(dir);
        free(dest);
        return 1;
    }
    free(dir);
    free(dest);
    return 0;
}

int profile_notes_keep(const char *build_dir, const char *notes_dir, char *const *hot)
{
    if (remove_tree(notes_dir) < 0 || mkdir_p(notes_dir) < 0)
        return -1;
    keep.from_len = strlen(build_dir);
    keep.to = notes_dir;
    memset(&keep.hot, 0, sizeof(keep.hot));
    parse_hot(&keep.hot, hot);
    keep.rc = 0;
    if (is_dir(build_dir))
        nftw(build_dir, keep_one, 32, FTW_PHYS);
    profile_health_release(&keep.hot);
    return keep.rc;
}

/* ---- the verdict and the report --------------------------------------------------------- */

int profile_health_verdict(const struct profile_health *h, const char *trainer)
{
    const char *again = "run the same command again to retrain";
    if (h->log_errors)
        return error("profile check (%s): the instrumented processes lost profile counts: %d "
                     "profile error line%s in %s, first: '%s'; the profile is incomplete and is "
                     "not used; fix the cause and %s", trainer, h->log_errors,
                     h->log_errors == 1 ? "" : "s", h->log_error_file, h->log_error, again);
    if (h->foreign)
        return error("profile check (%s): %d of %d profile files were written by %s and are not "
                     "writable for %s, the user the training ran as (e.g. %s), so the training "
                     "could not add its counts to them; the profile is not used; %s", trainer,
                     h->foreign, h->files, h->foreign_owner, h->train_user, h->foreign_example,
                     again);
    if (h->stale)
        return error("profile check (%s): %d profile files were last written before the "
                     "training started (e.g. %s): counts that are not the training's; the "
                     "profile is not used; %s", trainer, h->stale, h->stale_example, again);
    if (h->total == 0)
        return error("profile check (%s): the profile holds no counts at all (%d files, every "
                     "counter zero): the training never ran the instrumented code; %s", trainer,
                     h->files, again);
    for (int k = 0; k < h->nhot; k++) {
        const struct profile_hot *x = &h->hot[k];
        if (!x->found)
            return error("profile check (%s): no profile data for %s, which the workload must "
                         "run (the recipe's pgo.hot_functions): the training never reached it%s",
                         trainer, x->spec, x->object ? " or the object is named differently" : "");
        if (x->count == 0)
            return error("profile check (%s): %s has no counts from the training, though the "
                         "workload must run it (the recipe's pgo.hot_functions): the training "
                         "did not reach it, or its counts were lost; the profile is not used",
                         trainer, x->spec);
    }
    return 0;
}

static void add_count(struct strbuf *sb, unsigned long long n)
{
    if (n < 100000)
        strbuf_addf(sb, "%llu", n);
    else
        strbuf_addf(sb, "%.2e", (double)n);
}

char *profile_health_line(const struct profile_health *h, bool gcc)
{
    struct strbuf sb = STRBUF_INIT;
    strbuf_init(&sb, 0);
    if (gcc)
        strbuf_addf(&sb, "counts in %d of %d objects, ", h->objects_counted, h->files);
    strbuf_addf(&sb, "%ld of %ld functions, ", h->functions_counted, h->functions);
    add_count(&sb, h->total);
    strbuf_addstr(&sb, " counts in all");
    for (int k = 0; k < h->nhot; k++) {
        strbuf_addstr(&sb, k ? ", " : "; ");
        strbuf_addf(&sb, "%s ", h->hot[k].function);
        add_count(&sb, h->hot[k].count);
        if (h->hot[k].by_object)
            strbuf_addf(&sb, " (object %s)", h->hot[k].object ? h->hot[k].object : "?");
    }
    return strbuf_detach(&sb);
}

json_t *profile_health_json(const struct profile_health *h)
{
    json_t *hot = json_object();
    for (int k = 0; k < h->nhot; k++)
        json_object_set_new(hot, h->hot[k].spec,
                            json_integer(h->hot[k].count > LLONG_MAX
                                             ? LLONG_MAX
                                             : (json_int_t)h->hot[k].count));
    return json_pack("{s:i,s:i,s:I,s:I,s:I,s:o}", "files", h->files, "objects_counted",
                     h->objects_counted, "functions", (json_int_t)h->functions,
                     "functions_counted", (json_int_t)h->functions_counted, "counts",
                     h->total > LLONG_MAX ? (json_int_t)LLONG_MAX : (json_int_t)h->total, "hot",
                     hot);
}

int profile_health_save(const struct profile_health *h, const char *path)
{
    struct strbuf sb = STRBUF_INIT;
    strbuf_init(&sb, 0);
    strbuf_addf(&sb, "pgolab-profile-health: 1\nfiles: %d\nobjects-counted: %d\nfunctions: %ld\n"
                "functions-counted: %ld\ntotal: %llu\n", h->files, h->objects_counted,
                h->functions, h->functions_counted, h->total);
    for (int k = 0; k < h->nhot; k++)
        strbuf_addf(&sb, "hot: %llu %d %d %s\n", h->hot[k].count, h->hot[k].found,
                    h->hot[k].by_object, h->hot[k].spec);
    int rc = stamp_write(path, sb.buf);
    strbuf_release(&sb);
    return rc;
}

int profile_health_load(struct profile_health *h, const char *path)
{
    struct strbuf sb = STRBUF_INIT;
    strbuf_init(&sb, 0);
    memset(h, 0, sizeof(*h));
    if (strbuf_read_file(&sb, path) < 0 || strncmp(sb.buf, "pgolab-profile-health: 1\n", 25)) {
        strbuf_release(&sb);
        return -1;
    }
    const char *p = sb.buf, *line;
    size_t len;
    while (prof_next_line(&p, &line, &len)) {
        char *l = xstrndup(line, len);
        unsigned long long c;
        int found, byobj, off = 0;
        if (sscanf(l, "files: %d", &h->files) == 1 ||
            sscanf(l, "objects-counted: %d", &h->objects_counted) == 1 ||
            sscanf(l, "functions: %ld", &h->functions) == 1 ||
            sscanf(l, "functions-counted: %ld", &h->functions_counted) == 1 ||
            sscanf(l, "total: %llu", &h->total) == 1) {
            /* read */
        } else if (sscanf(l, "hot: %llu %d %d %n", &c, &found, &byobj, &off) == 3 && off > 0) {
            char *const one[] = { l + off, NULL };
            struct profile_health tmp = { 0 };
            parse_hot(&tmp, one);
            h->hot = xrealloc(h->hot, (size_t)(h->nhot + 1) * sizeof(*h->hot));
            h->hot[h->nhot] = tmp.hot[0];
            h->hot[h->nhot].count = c;
            h->hot[h->nhot].found = found;
            h->hot[h->nhot].by_object = byobj;
            h->nhot++;
            free(tmp.hot);
        }
        free(l);
    }
    strbuf_release(&sb);
    return 0;
}

void profile_health_release(struct profile_health *h)
{
    for (int k = 0; k < h->nhot; k++) {
        free(h->hot[k].spec);
        free(h->hot[k].object);
        free(h->hot[k].function);
    }
    free(h->hot);
    free(h->foreign_example);
    free(h->foreign_owner);
    free(h->train_user);
    free(h->stale_example);
    free(h->log_error);
    free(h->log_error_file);
    memset(h, 0, sizeof(*h));
}

int profile_health_run(const struct profile_check_in *in, const char *trainer,
                       const char *health_path, bool fresh, struct profile_health *h)
{
    profile_health_release(h);
    if (!fresh && profile_health_load(h, health_path) == 0)
        return 0;
    progress("training %s: checking the profile's counts", trainer);
    int rc = profile_health_read(in, h);
    progress_done();
    if (rc == 0)
        rc = profile_health_verdict(h, trainer);
    if (rc == 0)
        rc = profile_health_save(h, health_path);
    return rc;
}
