/* symbols: a raw profile (perf_sampler.c's file) symbolized with elfutils libdwfl into folded
 * stacks (see profile.h; the formats are docs/profiles.md's). User addresses go through the
 * mappings of the sampled process (inherited along fork records) to a file offset, the ELF
 * program headers to the file's virtual address and libdwfl's symbol table (or the debug
 * file found by build id) to a symbol; clone suffixes are folded (fold.c). Kernel addresses
 * are looked up in /proc/kallsyms (the kernel's own symbol table; [kernel] otherwise). */
#include "profile/profile.h"
#include "profile/fold.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---------------------------------------------------------------- raw file */

struct map {
    uint64_t start, end, pgoff;
    int dso;  /* index into dsos */
};

struct proc {
    uint32_t pid, ppid;
    struct map *maps;
    int nmaps, cap;
};

struct dso {
    char *path;
    const char *base;     /* basename of path */
    Dwfl *dwfl;
    Dwfl_Module *mod;
    bool opened, no_symbols, stripped;
    GElf_Phdr *ph;        /* PT_LOAD headers */
    int nph;
    uint64_t unresolved;  /* samples whose leaf had no symbol */
};

struct ksym {
    uint64_t addr;
    char *name;
};

struct symctx {
    struct proc *procs;
    int nprocs;
    struct dso *dsos;
    int ndsos;
    struct ksym *ksyms;
    int nksyms;
    bool ksyms_loaded;
    uint32_t target;
};

static struct proc *proc_get(struct symctx *c, uint32_t pid, bool create)
{
    for (int i = 0; i < c->nprocs; i++)
        if (c->procs[i].pid == pid)
            return &c->procs[i];
    if (!create)
        return NULL;
    c->procs = xrealloc(c->procs, sizeof(*c->procs) * (size_t)(c->nprocs + 1));
    struct proc *p = &c->procs[c->nprocs++];
    memset(p, 0, sizeof(*p));
    p->pid = pid;
    return p;
}

static int dso_get(struct symctx *c, const char *path)
{
    for (int i = 0; i < c->ndsos; i++)
        if (!strcmp(c->dsos[i].path, path))
            return i;
    c->dsos = xrealloc(c->dsos, sizeof(*c->dsos) * (size_t)(c->ndsos + 1));
    struct dso *d = &c->dsos[c->ndsos];
    memset(d, 0, sizeof(*d));
    d->path = xstrdup(path);
    const char *sl = strrchr(d->path, '/');
    d->base = sl ? sl + 1 : d->path;
    return c->ndsos++;
}

static void add_map(struct symctx *c, uint32_t pid, uint64_t start, uint64_t end, uint64_t off,
                    const char *path)
{
    struct proc *p = proc_get(c, pid, true);
    int d = dso_get(c, path);
    /* a new mapping replaces what it overlaps (munmap + mmap at the same place) */
    for (int i = 0; i < p->nmaps; i++)
        if (p->maps[i].start < end && start < p->maps[i].end)
            p->maps[i--] = p->maps[--p->nmaps];
    if (p->nmaps == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 32;
        p->maps = xrealloc(p->maps, sizeof(*p->maps) * (size_t)p->cap);
    }
    p->maps[p->nmaps++] = (struct map){ start, end, off, d };
}

static const struct map *find_map(struct symctx *c, uint32_t pid, uint64_t ip)
{
    for (int hops = 0; hops < 64; hops++) {
        struct proc *p = proc_get(c, pid, false);
        for (int i = 0; p && i < p->nmaps; i++)
            if (ip >= p->maps[i].start && ip < p->maps[i].end)
                return &p->maps[i];
        /* a process forked during sampling has its parent's mappings */
        if (p && p->ppid && p->ppid != pid)
            pid = p->ppid;
        else if (pid != c->target)
            pid = c->target;
        else
            return NULL;
    }
    return NULL;
}

/* ---------------------------------------------------------------- ELF symbols */

static const Dwfl_Callbacks callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
};

static void dso_open(struct dso *d)
{
    d->opened = true;
    if (d->path[0] == '[')
        return;  /* [vdso], [vsyscall]: no file */
    d->dwfl = dwfl_begin(&callbacks);
    if (!d->dwfl)
        return;
    dwfl_report_begin(d->dwfl);
    /* ET_DYN placed at 0 with add_p_vaddr: module addresses are the file's p_vaddr */
    d->mod = dwfl_report_elf(d->dwfl, d->base, d->path, -1, 0, true);
    dwfl_report_end(d->dwfl, NULL, NULL);
    if (!d->mod)
        return;
    GElf_Addr bias;
    Elf *elf = dwfl_module_getelf(d->mod, &bias);
    size_t n = 0;
    if (elf && elf_getphdrnum(elf, &n) == 0) {
        d->ph = xcalloc(n ? n : 1, sizeof(*d->ph));
        for (size_t i = 0; i < n; i++) {
            GElf_Phdr ph;
            if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD)
                d->ph[d->nph++] = ph;
        }
    }
    int nsyms = dwfl_module_getsymtab(d->mod);
    /* stripped: no .symtab in the file and no separate debug file (build id) found */
    bool symtab = false;
    for (Elf_Scn *scn = elf ? elf_nextscn(elf, NULL) : NULL; scn && !symtab;
         scn = elf_nextscn(elf, scn)) {
        GElf_Shdr sh;
        symtab = gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB;
    }
    const char *debugfile = NULL;
    dwfl_module_info(d->mod, NULL, NULL, NULL, NULL, NULL, NULL, &debugfile);
    d->stripped = !symtab && !debugfile;
    d->no_symbols = nsyms <= 0;
}

/* The folded function name at file offset off of dso d, into out; false when unknown. */
static bool dso_symbol(struct dso *d, uint64_t off, char *out, size_t n)
{
    if (!d->opened)
        dso_open(d);
    if (!d->mod || d->no_symbols)
        return false;
    uint64_t vaddr = 0;
    bool found = false;
    for (int i = 0; i < d->nph && !found; i++)
        if (off >= d->ph[i].p_offset && off < d->ph[i].p_offset + d->ph[i].p_filesz) {
            vaddr = off - d->ph[i].p_offset + d->ph[i].p_vaddr;
            found = true;
        }
    if (!found)
        return false;
    GElf_Off symoff;
    GElf_Sym sym;
    const char *name = dwfl_module_addrinfo(d->mod, vaddr, &symoff, &sym, NULL, NULL, NULL);
    if (!name || !*name)
        return false;
    profile_fold_name(name, out, n);
    return true;
}

static int ksym_cmp(const void *a, const void *b)
{
    const struct ksym *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* /proc/kallsyms: the running kernel's symbols (all zero addresses when kptr_restrict hides
 * them: then kernel frames stay [kernel]). */
static void ksyms_load(struct symctx *c)
{
    c->ksyms_loaded = true;
    FILE *f = fopen("/proc/kallsyms", "r");
    char line[512];
    int cap = 0;
    while (f && fgets(line, sizeof(line), f)) {
        unsigned long long a;
        char type, name[256];
        if (sscanf(line, "%llx %c %255s", &a, &type, name) != 3 || !a)
            continue;
        if (type != 't' && type != 'T' && type != 'w' && type != 'W')
            continue;
        if (c->nksyms == cap) {
            cap = cap ? cap * 2 : 65536;
            c->ksyms = xrealloc(c->ksyms, sizeof(*c->ksyms) * (size_t)cap);
        }
        c->ksyms[c->nksyms++] = (struct ksym){ a, xstrdup(name) };
    }
    if (f)
        fclose(f);
    if (c->nksyms)
        qsort(c->ksyms, (size_t)c->nksyms, sizeof(*c->ksyms), ksym_cmp);
}

static void kernel_frame(struct symctx *c, uint64_t ip, struct strbuf *sb)
{
    if (!c->ksyms_loaded)
        ksyms_load(c);
    int lo = 0, hi = c->nksyms - 1, best = -1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (c->ksyms[mid].addr <= ip) {
            best = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    char name[256];
    if (best >= 0)
        profile_fold_name(c->ksyms[best].name, name, sizeof(name));
    strbuf_addf(sb, "[kernel]`%s", best >= 0 ? name : "[kernel]");
}

/* One user frame "DSO`function" (or "DSO`[DSO]" when the DSO has no symbol there, or
 * "[unknown]`[unknown]" outside every mapping). exact: ip is the sampled address itself
 * (callers' return addresses are looked up at ip - 1, inside the call); leaf: the frame the
 * sample is counted for. */
static void user_frame(struct symctx *c, uint32_t pid, uint64_t ip, bool exact, bool leaf,
                       struct strbuf *sb)
{
    uint64_t a = exact || !ip ? ip : ip - 1;
    const struct map *m = find_map(c, pid, a);
    if (!m) {
        strbuf_addstr(sb, "[unknown]`[unknown]");
        return;
    }
    struct dso *d = &c->dsos[m->dso];
    char name[512];
    if (dso_symbol(d, a - m->start + m->pgoff, name, sizeof(name))) {
        strbuf_addf(sb, "%s`%s", d->base, name);
        return;
    }
    if (leaf)
        d->unresolved++;
    if (d->path[0] == '[')  /* [vdso]: no file to read symbols from */
        strbuf_addf(sb, "%s`%s", d->base, d->base);
    else
        strbuf_addf(sb, "%s`[%s]", d->base, d->base);
}

/* ---------------------------------------------------------------- folded output */

struct folded_line {
    char *stack;
    uint64_t count;
};

struct fold_set {
    struct folded_line *v;
    int n, cap;
};

static void fold_add(struct fold_set *fs, const char *stack, uint64_t count)
{
    if (fs->n == fs->cap) {
        fs->cap = fs->cap ? fs->cap * 2 : 1024;
        fs->v = xrealloc(fs->v, sizeof(*fs->v) * (size_t)fs->cap);
    }
    fs->v[fs->n++] = (struct folded_line){ xstrdup(stack), count };
}

static int line_cmp(const void *a, const void *b)
{
    const struct folded_line *x = a, *y = b;
    return strcmp(x->stack, y->stack);
}

/* The frames of one "stack" line (leaf first, as the kernel gives them) as a folded stack
 * (root first) into sb. */
static void fold_stack(struct symctx *c, uint32_t pid, char *frames, struct strbuf *sb)
{
    char *tok[MAX_FRAMES_RAW];
    int nt = 0;
    for (char *t = strtok(frames, " \n"); t && nt < MAX_FRAMES_RAW; t = strtok(NULL, " \n"))
        tok[nt++] = t;
    /* resolve leaf-first, keep the frame strings, then join root-first */
    struct strbuf fr[MAX_FRAMES_RAW];
    int nf = 0;
    bool kernel = false, exact = true;
    for (int i = 0; i < nt; i++) {
        if (!strcmp(tok[i], "k") || !strcmp(tok[i], "u") || !strcmp(tok[i], "-")) {
            kernel = tok[i][0] == 'k';
            /* the first user entry after the kernel's is the interrupted address itself */
            exact = exact || tok[i][0] == 'u';
            continue;
        }
        uint64_t ip = strtoull(tok[i], NULL, 16);
        strbuf_init(&fr[nf], 64);
        if (kernel)
            kernel_frame(c, ip, &fr[nf]);
        else
            user_frame(c, pid, ip, exact, nf == 0, &fr[nf]);
        exact = false;
        /* a frame-pointer chain through code built without frame pointers goes astray:
         * from the first caller outside every mapping on, the frames mean nothing */
        if (nf > 0 && !strcmp(fr[nf].buf, "[unknown]`[unknown]")) {
            strbuf_release(&fr[nf]);
            break;
        }
        nf++;
    }
    for (int i = nf - 1; i >= 0; i--) {
        strbuf_addstr(sb, fr[i].buf);
        if (i)
            strbuf_addch(sb, ';');
        strbuf_release(&fr[i]);
    }
    if (!nf)
        strbuf_addstr(sb, "[unknown]`[unknown]");
}

int profile_symbolize(const char *raw_path, const char *folded_path)
{
    FILE *in = fopen(raw_path, "r");
    if (!in)
        return error("cannot read the raw profile %s: %s", raw_path, strerror(errno));
    struct symctx c;
    struct fold_set fs = { 0 };
    struct strbuf head = STRBUF_INIT, line = STRBUF_INIT, sb = STRBUF_INIT;
    memset(&c, 0, sizeof(c));
    char *buf = NULL;
    size_t cap = 0;
    ssize_t len;
    bool ended = false, magic = false;
    uint64_t samples = 0;
    int rc = 0;
    while ((len = getline(&buf, &cap, in)) > 0) {
        buf[strcspn(buf, "\n")] = 0;
        unsigned int pid, ppid;
        unsigned long long s, e, o, cnt;
        int pos = 0;
        if (!magic) {
            magic = !strcmp(buf, "pgolab-profile-raw 1");
            if (!magic)
                break;
        } else if (!strncmp(buf, "map ", 4) &&
                   sscanf(buf + 4, "%u %llx %llx %llx %n", &pid, &s, &e, &o, &pos) == 4 && pos) {
            add_map(&c, pid, s, e, o, buf + 4 + pos);
        } else if (sscanf(buf, "fork %u %u", &pid, &ppid) == 2) {
            struct proc *p = proc_get(&c, pid, true);
            p->ppid = ppid;
            p->nmaps = 0;  /* a reused pid starts over; it has its parent's mappings */
        } else if (sscanf(buf, "exec %u", &pid) == 1) {
            struct proc *p = proc_get(&c, pid, true);
            p->nmaps = 0;
            p->ppid = 0;
        } else if (!strncmp(buf, "stack ", 6) &&
                   sscanf(buf + 6, "%u %llu %n", &pid, &cnt, &pos) == 2) {
            strbuf_reset(&sb);
            fold_stack(&c, pid, buf + 6 + pos, &sb);
            fold_add(&fs, sb.buf, cnt);
            samples += cnt;
        } else if (sscanf(buf, "target %u", &pid) == 1) {
            c.target = pid;
            strbuf_addf(&head, "# %s\n", buf);
        } else if (!strcmp(buf, "end")) {
            ended = true;
            break;
        } else if (!strncmp(buf, "event ", 6) || !strncmp(buf, "frequency ", 10) ||
                   !strncmp(buf, "kernel ", 7) || !strncmp(buf, "note ", 5) ||
                   !strncmp(buf, "lost ", 5) || !strncmp(buf, "callchain ", 10)) {
            strbuf_addf(&head, "# %s\n", buf);
        }
    }
    fclose(in);
    free(buf);
    if (!magic)
        rc = error("%s is not a pgolab raw profile (no \"pgolab-profile-raw 1\" line)", raw_path);
    else if (!ended)
        rc = error("the raw profile %s is truncated (no \"end\" line)", raw_path);
    if (rc == 0) {
        for (int i = 0; i < c.ndsos; i++)
            if (c.dsos[i].unresolved && c.dsos[i].path[0] != '[')
                strbuf_addf(&head, "# note %s: %s; its samples there are grouped as [%s]\n",
                            c.dsos[i].base,
                            c.dsos[i].stripped
                                ? "stripped (no .symtab, no debug file found by build id: only "
                                  "exported functions have names)"
                                : "some addresses have no symbol (e.g. PLT stubs)",
                            c.dsos[i].base);
        qsort(fs.v, (size_t)fs.n, sizeof(*fs.v), line_cmp);
        /* merge what the windowed dedup left apart */
        int w = 0;
        for (int i = 0; i < fs.n; i++) {
            if (w && !strcmp(fs.v[w - 1].stack, fs.v[i].stack)) {
                fs.v[w - 1].count += fs.v[i].count;
                free(fs.v[i].stack);
            } else {
                fs.v[w++] = fs.v[i];
            }
        }
        fs.n = w;
        char *tmp = xasprintf("%s.tmp", folded_path);
        FILE *out = fopen(tmp, "w");
        if (!out) {
            rc = error("cannot write %s: %s", tmp, strerror(errno));
        } else {
            fprintf(out, "# pgolab-profile-folded 1\n%s# samples %llu\n", head.buf,
                    (unsigned long long)samples);
            for (int i = 0; i < fs.n; i++)
                fprintf(out, "%s %llu\n", fs.v[i].stack, (unsigned long long)fs.v[i].count);
            fprintf(out, "# end\n");
            if (ferror(out) | (fclose(out) != 0) || rename(tmp, folded_path) < 0)
                rc = error("cannot write %s: %s", folded_path, strerror(errno));
        }
        free(tmp);
    }
    for (int i = 0; i < fs.n; i++)
        free(fs.v[i].stack);
    free(fs.v);
    for (int i = 0; i < c.nprocs; i++)
        free(c.procs[i].maps);
    free(c.procs);
    for (int i = 0; i < c.ndsos; i++) {
        if (c.dsos[i].dwfl)
            dwfl_end(c.dsos[i].dwfl);
        free(c.dsos[i].ph);
        free(c.dsos[i].path);
    }
    free(c.dsos);
    for (int i = 0; i < c.nksyms; i++)
        free(c.ksyms[i].name);
    free(c.ksyms);
    strbuf_release(&head);
    strbuf_release(&line);
    strbuf_release(&sb);
    return rc;
}
