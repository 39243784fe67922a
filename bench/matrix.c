/* matrix.c - `entrysim bench` (issue 4): a matrix file's axes checked and
 * normalised, their cross product with impossible cells marked, and the
 * figures of a cell's timing report.  Running the cells: bench_run.c;
 * outputs: bench_out.c; bench/README.md documents the format and rules. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"
#include "escape.h"
#include "kernel.h"
#include "mitigations.h"

const char *const es_bench_phase_names[ES_BENCH_NPHASES] = {
    "hw_entry", "entry_asm", "dispatch", "stub", "body", "exit_path", "hw_exit"};
const char *const es_bench_axis_names[AX_COUNT] = {"kernel", "entry", "mitigations", "syscall",
                                                   "uarch",  "cpu",   "workload"};

static const char *const entry_kinds[] = {"syscall64", "int80", "sysenter32",
                                          "syscall32", "x32",   "vsyscall"};
/* what bench/workloads/sysloop.c can call */
static const char *const sysloop_syscalls[] = {"getpid", "getppid", "read", "write",
                                               "gettimeofday", "time", "getcpu"};
/* the legacy vsyscall page's three functions (arch/x86/entry/vsyscall/) */
static const char *const vsyscall_syscalls[] = {"gettimeofday", "time", "getcpu"};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static bool in_list(const char *s, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(s, list[i]))
            return true;
    return false;
}

uint64_t es_fnv1a(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ULL; /* FNV-1a 64-bit prime */
    return h;
}

/* ------------------------------------------------------------------ matrix */

static int merr(char *err, size_t errlen, const char *file, const es_tkey *k, const char *fmt,
                const char *arg)
{
    char msg[300];
    snprintf(msg, sizeof msg, fmt, arg);
    if (k)
        snprintf(err, errlen, "%s:%d: %s", file, k->line, msg);
    else
        snprintf(err, errlen, "%s: %s", file, msg);
    return -1;
}

char *es_bench_sdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

static int add_value(es_matrix *m, int axis, const char *v, char *err, size_t errlen,
                     const char *file, const es_tkey *k)
{
    for (size_t i = 0; i < m->naxis[axis]; i++)
        if (!strcmp(m->axes[axis][i], v))
            return merr(err, errlen, file, k, "'%s' is listed twice (after normalising)", v);
    if (m->naxis[axis] == COUNT(m->axes[axis]))
        return merr(err, errlen, file, k, "too many values (at most 64 per axis)%s", "");
    if (!(m->axes[axis][m->naxis[axis]] = es_bench_sdup(v)))
        return merr(err, errlen, file, k, "out of memory%s", "");
    m->naxis[axis]++;
    return 0;
}

/* Strings of an array key (a single string counts as a one-element array). */
static int strings(const es_tkey *k, char *const **out, size_t *n, char *err, size_t errlen,
                   const char *file)
{
    if (k->type == ES_TV_ARRAY) {
        *out = k->arr, *n = k->narr;
        if (!k->narr)
            return merr(err, errlen, file, k, "'%s' is an empty array", k->key);
        return 0;
    }
    if (k->type == ES_TV_STRING) {
        *out = &((es_tkey *)k)->str, *n = 1;
        return 0;
    }
    return merr(err, errlen, file, k, "'%s' must be a string or an array of strings", k->key);
}

/* Values passed to a child's command line: no empty ones, no blanks or
 * control characters (they also go into the tab-separated store). */
static bool plain(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if ((unsigned char)*s <= ' ')
            return false;
    return true;
}

static int load_axis(es_matrix *m, es_toml *t, const char *file, const char *key, int axis,
                     char *err, size_t errlen)
{
    es_tkey *k = es_toml_get(t, "matrix", key);
    if (!k)
        return 0;
    char *const *v;
    size_t n;
    if (strings(k, &v, &n, err, errlen, file))
        return -1;
    for (size_t i = 0; i < n; i++) {
        char canon[128];
        const char *val = v[i];
        if (axis == AX_KERNEL) {
            /* conventions are v4.16 / v4.17; patch lists name commits of
             * the series; both normalise to es_patches_name's form */
            unsigned bits = 0;
            char why[200];
            bool conv = !strcmp(key, "conventions") ||
                        (!strcmp(key, "kernels") && (!strcmp(val, "v4.16") || !strcmp(val, "v4.17")));
            if (conv) {
                if (strcmp(val, "v4.16") && strcmp(val, "v4.17"))
                    return merr(err, errlen, file, k, "convention '%s' is not v4.16 or v4.17", val);
                bits = strcmp(val, "v4.16") ? 15u : 0u;
            } else if (!*val) {
                return merr(err, errlen, file, k,
                            "an empty patch list is v4.16: list it under conventions%s", "");
            } else if (es_patches_parse(val, &bits, why, sizeof why)) {
                return merr(err, errlen, file, k, "%s", why);
            }
            es_patches_name(bits, canon, sizeof canon);
            val = canon;
        } else if (axis == AX_MITIGATIONS) {
            unsigned mit;
            char why[300];
            if (es_mitigations_parse(val, &mit, why, sizeof why))
                return merr(err, errlen, file, k, "%s", why);
            es_mitigations_name(mit, canon, sizeof canon);
            val = canon;
        } else if (!plain(val)) {
            return merr(err, errlen, file, k, "'%s': empty, or blanks in a value", val);
        } else if (axis == AX_ENTRY && !in_list(val, entry_kinds, COUNT(entry_kinds))) {
            return merr(err, errlen, file, k,
                        "unknown entry kind '%s' (syscall64 int80 sysenter32 syscall32 x32 "
                        "vsyscall)",
                        val);
        } else if (axis == AX_CPU && strcmp(val, "intel") && strcmp(val, "amd")) {
            return merr(err, errlen, file, k, "cpu '%s' is not intel or amd", val);
        }
        if (add_value(m, axis, val, err, errlen, file, k))
            return -1;
    }
    return 0;
}

static int load_workload(es_matrix *m, es_toml *t, const char *file, const char *name,
                         int line, char *err, size_t errlen)
{
    char tab[160];
    snprintf(tab, sizeof tab, "workload.%s", name);
    es_workload *g = realloc(m->workloads, (m->nworkloads + 1) * sizeof *g);
    if (!g)
        return merr(err, errlen, file, NULL, "out of memory%s", "");
    m->workloads = g;
    es_workload *w = &m->workloads[m->nworkloads++];
    memset(w, 0, sizeof *w);
    w->name = es_bench_sdup(name);
    es_tkey *k = es_toml_get(t, tab, "program");
    if (!k || k->type != ES_TV_STRING || !plain(k->str)) {
        snprintf(err, errlen, "%s:%d: [%s] needs program = \"PATH\"", file, k ? k->line : line,
                 tab);
        return -1;
    }
    w->program = es_bench_sdup(k->str);
    char *const *v;
    size_t n;
    struct {
        const char *key;
        char ***dst;
        size_t *ndst;
    } lists[] = {{"args", &w->args, &w->nargs},
                 {"entries", &w->entries, &w->nentries},
                 {"syscalls", &w->syscalls, &w->nsyscalls}};
    for (size_t i = 0; i < COUNT(lists); i++) {
        if (!(k = es_toml_get(t, tab, lists[i].key)))
            continue;
        if (strings(k, &v, &n, err, errlen, file))
            return -1;
        if (n > 32) /* a cell's argv has room for 64 */
            return merr(err, errlen, file, k, "more than 32 values in '%s'", k->key);
        *lists[i].dst = calloc(n, sizeof(char *));
        if (!*lists[i].dst)
            return merr(err, errlen, file, k, "out of memory%s", "");
        for (size_t j = 0; j < n; j++)
            (*lists[i].dst)[j] = es_bench_sdup(v[j]);
        *lists[i].ndst = n;
    }
    return 0;
}

/* The tables: [matrix] and [workload.NAME] (loaded here); no key outside
 * them. */
static int load_tables(es_matrix *m, es_toml *t, const char *file, char *err, size_t errlen)
{
    bool have_matrix = false;
    for (size_t i = 0; i < t->nkeys; i++)
        if (!*t->keys[i].table) {
            snprintf(err, errlen, "%s:%d: key '%s' outside any table (put it under [matrix])",
                     file, t->keys[i].line, t->keys[i].key);
            return -1;
        }
    for (size_t i = 0; i < t->ntables; i++) {
        const char *tab = t->tables[i];
        int line = t->table_lines[i];
        if (!strcmp(tab, "matrix")) {
            have_matrix = true;
        } else if (!strncmp(tab, "workload.", 9) && !strchr(tab + 9, '.')) {
            if (!strcmp(tab + 9, "sysloop")) {
                snprintf(err, errlen, "%s:%d: 'sysloop' is the built-in workload", file, line);
                return -1;
            }
            if (load_workload(m, t, file, tab + 9, line, err, errlen))
                return -1;
        } else {
            snprintf(err, errlen, "%s:%d: unknown table [%s] (expected [matrix] or "
                     "[workload.NAME])", file, line, tab);
            return -1;
        }
    }
    if (!have_matrix)
        return merr(err, errlen, file, NULL, "no [matrix] table%s", "");
    return 0;
}

/* The name (default: the file's base name without .toml).  It names the
 * directory bench-results/NAME, so it must stay one path component below
 * it. */
static int load_name(es_matrix *m, es_toml *t, const char *file, char *err, size_t errlen)
{
    es_tkey *k = es_toml_get(t, "matrix", "name");
    if (k && (k->type != ES_TV_STRING || !plain(k->str)))
        return merr(err, errlen, file, k, "name must be a string without blanks%s", "");
    if (k) {
        m->name = es_bench_sdup(k->str);
    } else {
        const char *b = strrchr(file, '/');
        m->name = es_bench_sdup(b ? b + 1 : file);
        char *dot = m->name ? strrchr(m->name, '.') : NULL;
        if (dot && !strcmp(dot, ".toml"))
            *dot = 0;
    }
    if (!m->name)
        return merr(err, errlen, file, k, "out of memory%s", "");
    if (!*m->name || !strcmp(m->name, ".") || strchr(m->name, '/') || strstr(m->name, ".."))
        return merr(err, errlen, file, k,
                    "name '%s' must not be empty, '.', or hold '/' or '..' (it names a "
                    "directory under bench-results/)",
                    m->name);
    return 0;
}

/* Every listed workload is defined, and the built-in sysloop can make
 * every listed syscall. */
static int check_workloads(es_matrix *m, es_toml *t, const char *file, char *err,
                           size_t errlen)
{
    for (size_t i = 0; i < m->naxis[AX_WORKLOAD]; i++) {
        const char *w = m->axes[AX_WORKLOAD][i];
        bool found = !strcmp(w, "sysloop");
        for (size_t j = 0; j < m->nworkloads; j++)
            found |= !strcmp(w, m->workloads[j].name);
        if (!found)
            return merr(err, errlen, file, es_toml_get(t, "matrix", "workloads"),
                        "workload '%s' is neither sysloop nor a [workload.NAME] table", w);
    }
    if (m->nworkloads && !in_list("sysloop", (const char *const *)m->axes[AX_WORKLOAD],
                                  m->naxis[AX_WORKLOAD]))
        return 0;
    for (size_t i = 0; i < m->naxis[AX_SYSCALL]; i++)
        if (!in_list(m->axes[AX_SYSCALL][i], sysloop_syscalls, COUNT(sysloop_syscalls)))
            return merr(err, errlen, file, es_toml_get(t, "matrix", "syscalls"),
                        "sysloop cannot call '%s' (getpid getppid read write gettimeofday time "
                        "getcpu)",
                        m->axes[AX_SYSCALL][i]);
    return 0;
}

/* The axes, with one default value for each axis left out. */
static int load_axes(es_matrix *m, es_toml *t, const char *file, char *err, size_t errlen)
{
    static const struct {
        const char *key;
        int axis;
    } axes[] = {{"kernels", AX_KERNEL}, {"conventions", AX_KERNEL}, {"patches", AX_KERNEL},
                {"entries", AX_ENTRY},
                {"mitigations", AX_MITIGATIONS}, {"syscalls", AX_SYSCALL},
                {"uarch", AX_UARCH}, {"cpu", AX_CPU}, {"workloads", AX_WORKLOAD}};
    for (size_t i = 0; i < COUNT(axes); i++)
        if (load_axis(m, t, file, axes[i].key, axes[i].axis, err, errlen))
            return -1;
    static const char *const defaults[AX_COUNT] = {"v4.17",  "syscall64", "nospec", "getpid",
                                                   "znver4", "amd",       "sysloop"};
    for (int a = 0; a < AX_COUNT; a++)
        if (!m->naxis[a] && add_value(m, a, defaults[a], err, errlen, file, NULL))
            return -1;
    return 0;
}

static int load_iterations(es_matrix *m, es_toml *t, const char *file, char *err,
                           size_t errlen)
{
    m->iterations = 1000;
    es_tkey *k = es_toml_get(t, "matrix", "iterations");
    if (!k)
        return 0;
    if (k->type != ES_TV_INT || k->i < 1 || k->i > 1000000000)
        return merr(err, errlen, file, k, "iterations must be an integer from 1 to 10^9%s", "");
    m->iterations = k->i;
    return 0;
}

int es_matrix_parse(const char *text, const char *file, es_matrix *m, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    es_toml t;
    char why[300];
    if (es_toml_parse(text, &t, why, sizeof why)) {
        snprintf(err, errlen, "%s:%s", file, why);
        es_escape_ctl(err, errlen, err);
        return -1;
    }
    int rc = -1;
    if (load_tables(m, &t, file, err, errlen) || load_name(m, &t, file, err, errlen))
        goto out;
    es_toml_get(&t, "matrix", "description"); /* free text, for readers */
    if (load_axes(m, &t, file, err, errlen) || check_workloads(m, &t, file, err, errlen) ||
        load_iterations(m, &t, file, err, errlen))
        goto out;
    for (size_t i = 0; i < t.nkeys; i++)
        if (!t.keys[i].used) {
            snprintf(err, errlen, "%s:%d: unknown key '%s' in [%s]", file, t.keys[i].line,
                     t.keys[i].key, t.keys[i].table);
            goto out;
        }
    rc = 0;
out:
    es_toml_free(&t);
    if (rc) {
        es_escape_ctl(err, errlen, err); /* values and file names quoted in it */
        es_matrix_free(m);
    }
    return rc;
}

/* Opens path for reading without waiting (a FIFO would block until a
 * writer came) and refuses anything but a regular file. */
static FILE *open_regular(const char *path, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st)) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s: not a regular file", path);
        close(fd);
        return NULL;
    }
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        close(fd);
    }
    return f;
}

char *es_bench_read_file(const char *path, size_t *len, char *err, size_t errlen)
{
    FILE *f = open_regular(path, err, errlen);
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *s = malloc(cap);
    size_t r;
    while (s && (r = fread(s + n, 1, cap - n - 1, f)) > 0) {
        n += r;
        if (n + 1 == cap) {
            char *g = cap > (64u << 20) ? NULL : realloc(s, cap *= 2);
            if (!g) {
                free(s);
                s = NULL;
            }
            s = g;
        }
    }
    fclose(f);
    if (!s) {
        snprintf(err, errlen, "%s: too large or out of memory", path);
        return NULL;
    }
    s[n] = 0;
    if (len)
        *len = n;
    return s;
}

int es_matrix_load(const char *path, es_matrix *m, char *err, size_t errlen)
{
    size_t n;
    char *text = es_bench_read_file(path, &n, err, errlen);
    if (!text) {
        memset(m, 0, sizeof *m);
        es_escape_ctl(err, errlen, err);
        return -1;
    }
    int rc;
    if (strlen(text) != n) {
        snprintf(err, errlen, "%s: a NUL byte in the file (not a text matrix)", path);
        es_escape_ctl(err, errlen, err);
        memset(m, 0, sizeof *m);
        rc = -1;
    } else {
        rc = es_matrix_parse(text, path, m, err, errlen);
    }
    free(text);
    return rc;
}

static void free_list(char **l, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(l[i]);
    free(l);
}

void es_matrix_free(es_matrix *m)
{
    free(m->name);
    for (int a = 0; a < AX_COUNT; a++)
        for (size_t i = 0; i < m->naxis[a]; i++)
            free(m->axes[a][i]);
    for (size_t i = 0; i < m->nworkloads; i++) {
        es_workload *w = &m->workloads[i];
        free(w->name);
        free(w->program);
        free_list(w->args, w->nargs);
        free_list(w->entries, w->nentries);
        free_list(w->syscalls, w->nsyscalls);
    }
    free(m->workloads);
    memset(m, 0, sizeof *m);
}

/* ------------------------------------------------------------------ cells */

const char *es_cell_impossible(const es_cell *c)
{
    const char *e = c->v[AX_ENTRY], *cpu = c->v[AX_CPU], *sc = c->v[AX_SYSCALL];
    /* Linux maps the SYSENTER vDSO on Intel and the SYSCALL one on AMD
     * (arch/x86/entry/vdso/vma.c, X86_FEATURE_SYSENTER32/SYSCALL32): the
     * other combination would measure the other entry */
    if (!strcmp(e, "sysenter32") && strcmp(cpu, "intel"))
        return "sysenter32 needs cpu intel (the AMD vDSO enters with SYSCALL)";
    if (!strcmp(e, "syscall32") && strcmp(cpu, "amd"))
        return "syscall32 needs cpu amd (the Intel vDSO enters with SYSENTER)";
    if (!c->wl) {
        if (!strcmp(e, "vsyscall") && !in_list(sc, vsyscall_syscalls, COUNT(vsyscall_syscalls)))
            return "the vsyscall page has only gettimeofday, time and getcpu";
        return NULL;
    }
    if (c->wl->entries && !in_list(e, (const char *const *)c->wl->entries, c->wl->nentries))
        return "the workload does not support this entry kind";
    if (c->wl->syscalls && !in_list(sc, (const char *const *)c->wl->syscalls, c->wl->nsyscalls))
        return "the workload does not make this syscall";
    return NULL;
}

size_t es_matrix_cells(const es_matrix *m, es_cell **out)
{
    size_t n = 1;
    for (int a = 0; a < AX_COUNT; a++)
        n *= m->naxis[a];
    es_cell *c = calloc(n ? n : 1, sizeof *c);
    *out = c;
    if (!c)
        return 0;
    for (size_t i = 0; i < n; i++) {
        /* mixed-radix digits, the last axis fastest */
        size_t r = i;
        for (int a = AX_COUNT - 1; a >= 0; a--) {
            c[i].v[a] = m->axes[a][r % m->naxis[a]];
            r /= m->naxis[a];
        }
        c[i].iterations = m->iterations;
        for (size_t w = 0; w < m->nworkloads; w++)
            if (!strcmp(m->workloads[w].name, c[i].v[AX_WORKLOAD]))
                c[i].wl = &m->workloads[w];
        c[i].skip = es_cell_impossible(&c[i]);
    }
    return n;
}

/* ------------------------------------------------------------------ report */

static bool syscall_matches(const char *name, const char *sc)
{
    /* the report may name a row "getpid" or by its stub ("__x64_sys_getpid",
     * "__ia32_compat_sys_time" ...) */
    size_t n = strlen(name), k = strlen(sc);
    if (!strcmp(name, sc))
        return true;
    return n > k + 4 && !strcmp(name + n - k, sc) && !strncmp(name + n - k - 4, "sys_", 4);
}

static void take_phases(const es_json *phases, es_cell *c)
{
    for (int p = 0; p < ES_BENCH_NPHASES; p++) {
        double v = es_json_num(phases, es_bench_phase_names[p]);
        c->phases[p] = v > 0 ? v : 0;
    }
}

int es_bench_read_report(const char *json, size_t len, const char *syscall, es_cell *c,
                         char *err, size_t errlen)
{
    es_json *root = es_json_parse(json, len, err, errlen);
    if (!root)
        return -1;
    const es_json *s = es_json_get(root, "summary");
    if (!s)
        s = root;
    int rc = -1;
    c->cycles = es_json_num(s, "cycles");
    c->instructions = es_json_num(s, "instructions");
    if (c->cycles < 0 || c->instructions < 0) {
        snprintf(err, errlen, "no \"cycles\" and \"instructions\" numbers in the report");
        goto out;
    }
    const es_json *sys = es_json_get(s, "syscalls");
    c->calls = sys ? es_json_num(sys, "count") : 0;
    c->call_cycles = sys ? es_json_num(sys, "cycles") : 0;
    if (c->calls < 0 || c->call_cycles < 0)
        c->calls = c->call_cycles = 0;
    memset(c->phases, 0, sizeof c->phases);
    take_phases(es_json_get(sys, "phases"), c);
    const es_json *per = es_json_get(s, "per_syscall");
    if (!per)
        per = es_json_get(root, "per_syscall");
    for (size_t i = 0; per && per->type == ES_J_ARR && i < per->n; i++) {
        const es_json *row = &per->items[i], *name = es_json_get(row, "name");
        if (!name)
            name = es_json_get(row, "syscall");
        if (!name || name->type != ES_J_STR || !syscall_matches(name->str, syscall))
            continue;
        double count = es_json_num(row, "count"), cyc = es_json_num(row, "cycles");
        if (count > 0 && cyc >= 0) {
            c->calls = count, c->call_cycles = cyc;
            take_phases(es_json_get(row, "phases"), c);
        }
        break;
    }
    rc = 0;
out:
    es_json_free(root);
    return rc;
}

