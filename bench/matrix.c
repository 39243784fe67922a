/* matrix.c - `entrysim bench --matrix FILE` (issue 4): the cross product of
 * a matrix's axes, each cell run as a child `entrysim run --timing-json` in
 * parallel, resumable through a results store keyed by a hash of the cell's
 * configuration and of the programs that produce its numbers; outputs by
 * bench_out.c.  bench/README.md documents the format and the rules. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "kernel.h"
#include "matrix.h"
#include "mitigations.h"

#ifndef ES_BENCH_VERSION
#define ES_BENCH_VERSION "unknown"
#endif

extern char **environ;

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

/* snprintf for notes and paths (a note may be cut; a path that does not
 * fit is an error the caller sees as -1) */
static void setnote(es_cell *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void setnote(es_cell *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->note, sizeof c->note, fmt, ap);
    va_end(ap);
}

static int pathf(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int pathf(char *buf, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(buf, n, fmt, ap);
    va_end(ap);
    return w >= 0 && (size_t)w < n ? 0 : -1;
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

static char *sdup(const char *s)
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
    if (!(m->axes[axis][m->naxis[axis]] = sdup(v)))
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
    w->name = sdup(name);
    es_tkey *k = es_toml_get(t, tab, "program");
    if (!k || k->type != ES_TV_STRING || !plain(k->str)) {
        snprintf(err, errlen, "%s:%d: [%s] needs program = \"PATH\"", file, k ? k->line : line,
                 tab);
        return -1;
    }
    w->program = sdup(k->str);
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
            (*lists[i].dst)[j] = sdup(v[j]);
        *lists[i].ndst = n;
    }
    return 0;
}

int es_matrix_parse(const char *text, const char *file, es_matrix *m, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    es_toml t;
    char why[300];
    if (es_toml_parse(text, &t, why, sizeof why)) {
        snprintf(err, errlen, "%s:%s", file, why);
        return -1;
    }
    int rc = -1;
    bool have_matrix = false;
    for (size_t i = 0; i < t.nkeys; i++)
        if (!*t.keys[i].table) {
            snprintf(err, errlen, "%s:%d: key '%s' outside any table (put it under [matrix])",
                     file, t.keys[i].line, t.keys[i].key);
            goto out;
        }
    for (size_t i = 0; i < t.ntables; i++) {
        if (!strcmp(t.tables[i], "matrix")) {
            have_matrix = true;
        } else if (!strncmp(t.tables[i], "workload.", 9) && !strchr(t.tables[i] + 9, '.')) {
            if (!strcmp(t.tables[i] + 9, "sysloop")) {
                snprintf(err, errlen, "%s:%d: 'sysloop' is the built-in workload", file,
                         t.table_lines[i]);
                goto out;
            }
            if (load_workload(m, &t, file, t.tables[i] + 9, t.table_lines[i], err, errlen))
                goto out;
        } else {
            snprintf(err, errlen, "%s:%d: unknown table [%s] (expected [matrix] or "
                     "[workload.NAME])", file, t.table_lines[i], t.tables[i]);
            goto out;
        }
    }
    if (!have_matrix) {
        merr(err, errlen, file, NULL, "no [matrix] table%s", "");
        goto out;
    }
    es_tkey *k = es_toml_get(&t, "matrix", "name");
    if (k && (k->type != ES_TV_STRING || !plain(k->str))) {
        merr(err, errlen, file, k, "name must be a string without blanks%s", "");
        goto out;
    }
    if (k) {
        m->name = sdup(k->str);
    } else {
        /* the file's base name without .toml */
        const char *b = strrchr(file, '/');
        m->name = sdup(b ? b + 1 : file);
        char *dot = m->name ? strrchr(m->name, '.') : NULL;
        if (dot && !strcmp(dot, ".toml"))
            *dot = 0;
    }
    es_toml_get(&t, "matrix", "description"); /* free text, for readers */
    static const struct {
        const char *key;
        int axis;
    } axes[] = {{"kernels", AX_KERNEL}, {"conventions", AX_KERNEL}, {"patches", AX_KERNEL},
                {"entries", AX_ENTRY},
                {"mitigations", AX_MITIGATIONS}, {"syscalls", AX_SYSCALL},
                {"uarch", AX_UARCH}, {"cpu", AX_CPU}, {"workloads", AX_WORKLOAD}};
    for (size_t i = 0; i < COUNT(axes); i++)
        if (load_axis(m, &t, file, axes[i].key, axes[i].axis, err, errlen))
            goto out;
    /* defaults: one value per axis left out */
    static const char *const defaults[AX_COUNT] = {"v4.17",  "syscall64", "nospec", "getpid",
                                                   "znver4", "amd",       "sysloop"};
    for (int a = 0; a < AX_COUNT; a++)
        if (!m->naxis[a] && add_value(m, a, defaults[a], err, errlen, file, NULL))
            goto out;
    for (size_t i = 0; i < m->naxis[AX_WORKLOAD]; i++) {
        const char *w = m->axes[AX_WORKLOAD][i];
        bool found = !strcmp(w, "sysloop");
        for (size_t j = 0; j < m->nworkloads; j++)
            found |= !strcmp(w, m->workloads[j].name);
        if (!found) {
            merr(err, errlen, file, es_toml_get(&t, "matrix", "workloads"),
                 "workload '%s' is neither sysloop nor a [workload.NAME] table", w);
            goto out;
        }
    }
    if (m->nworkloads == 0 || in_list("sysloop", (const char *const *)m->axes[AX_WORKLOAD],
                                      m->naxis[AX_WORKLOAD]))
        for (size_t i = 0; i < m->naxis[AX_SYSCALL]; i++)
            if (!in_list(m->axes[AX_SYSCALL][i], sysloop_syscalls, COUNT(sysloop_syscalls))) {
                merr(err, errlen, file, es_toml_get(&t, "matrix", "syscalls"),
                     "sysloop cannot call '%s' (getpid getppid read write gettimeofday time "
                     "getcpu)",
                     m->axes[AX_SYSCALL][i]);
                goto out;
            }
    m->iterations = 1000;
    if ((k = es_toml_get(&t, "matrix", "iterations"))) {
        if (k->type != ES_TV_INT || k->i < 1 || k->i > 1000000000) {
            merr(err, errlen, file, k, "iterations must be an integer from 1 to 10^9%s", "");
            goto out;
        }
        m->iterations = k->i;
    }
    for (size_t i = 0; i < t.nkeys; i++)
        if (!t.keys[i].used) {
            snprintf(err, errlen, "%s:%d: unknown key '%s' in [%s]", file, t.keys[i].line,
                     t.keys[i].key, t.keys[i].table);
            goto out;
        }
    rc = 0;
out:
    es_toml_free(&t);
    if (rc)
        es_matrix_free(m);
    return rc;
}

static char *read_file(const char *path, size_t *len, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
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
    char *text = read_file(path, &n, err, errlen);
    if (!text) {
        memset(m, 0, sizeof *m);
        return -1;
    }
    int rc;
    if (strlen(text) != n) {
        snprintf(err, errlen, "%s: a NUL byte in the file (not a text matrix)", path);
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

/* ------------------------------------------------------------------ runs */

typedef struct run_cfg {
    const char *out;       /* output directory */
    const char *exe;       /* what runs a cell: self, or --runner */
    const char *workloads; /* directory of the built workloads */
    int jobs;
    double timeout;
    bool verbose;
    sigset_t child_mask; /* the mask before run_cells blocked the stop signals */
} run_cfg;

/* The program a cell runs (malloc'd path). */
static char *cell_program(const run_cfg *rc, const es_cell *c)
{
    const char *prog;
    if (c->wl) {
        prog = c->wl->program;
    } else {
        const char *e = c->v[AX_ENTRY];
        prog = !strcmp(e, "x32") ? "sysloopx32"
               : (!strcmp(e, "syscall64") || !strcmp(e, "vsyscall")) ? "sysloop64"
                                                                       : "sysloop32";
    }
    if (strchr(prog, '/'))
        return sdup(prog);
    size_t n = strlen(rc->workloads) + strlen(prog) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", rc->workloads, prog);
    return p;
}

/* Workload arguments with {entry} {syscall} {iterations} expanded. */
static char *expand(const char *tmpl, const es_cell *c)
{
    char buf[1024], num[32];
    size_t n = 0;
    snprintf(num, sizeof num, "%lld", c->iterations);
    for (const char *p = tmpl; *p && n + 1 < sizeof buf;) {
        const char *val = NULL;
        size_t skip = 0;
        if (!strncmp(p, "{entry}", 7))
            val = c->v[AX_ENTRY], skip = 7;
        else if (!strncmp(p, "{syscall}", 9))
            val = c->v[AX_SYSCALL], skip = 9;
        else if (!strncmp(p, "{iterations}", 12))
            val = num, skip = 12;
        if (val) {
            n += (size_t)snprintf(buf + n, sizeof buf - n, "%s", val);
            if (n >= sizeof buf)
                n = sizeof buf - 1;
            p += skip;
        } else {
            buf[n++] = *p++;
        }
    }
    buf[n] = 0;
    return sdup(buf);
}

/* argv of a cell's child (NULL-terminated, strings malloc'd). */
typedef struct cell_argv {
    char *v[64];
    int n;
} cell_argv;

static void push_arg(cell_argv *a, const char *s)
{
    if (a->n < (int)COUNT(a->v) - 1)
        a->v[a->n++] = sdup(s);
    a->v[a->n] = NULL;
}

static void free_argv(cell_argv *a)
{
    for (int i = 0; i < a->n; i++)
        free(a->v[i]);
    a->n = 0;
}

static void cell_path(const run_cfg *rc, const es_cell *c, const char *ext, char *buf, size_t n)
{
    (void)pathf(buf, n, "%s/cells/%s.%s", rc->out, c->key, ext);
}

static void build_argv(const run_cfg *rc, const es_cell *c, const char *program, cell_argv *a)
{
    char json[PATH_MAX];
    cell_path(rc, c, "json", json, sizeof json);
    a->n = 0;
    push_arg(a, rc->exe);
    push_arg(a, "run");
    push_arg(a, "--deterministic");
    push_arg(a, "--timing-json");
    push_arg(a, json);
    push_arg(a, "--uarch");
    push_arg(a, c->v[AX_UARCH]);
    /* the kernel label is es_patches_name()'s: "v4.16", "v4.17" or
     * "v4.16+dfe64506+fa697140" */
    const char *k = c->v[AX_KERNEL];
    if (!strncmp(k, "v4.16+", 6)) {
        char list[128];
        snprintf(list, sizeof list, "%s", k + 6);
        for (char *p = list; *p; p++)
            if (*p == '+')
                *p = ',';
        push_arg(a, "--patches");
        push_arg(a, list);
    } else {
        push_arg(a, "--convention");
        push_arg(a, k);
    }
    /* the label is es_mitigations_name()'s set; "none," makes the list
     * exact rather than added to the default */
    char mit[160];
    snprintf(mit, sizeof mit, "none%s%s", strcmp(c->v[AX_MITIGATIONS], "none") ? "," : "",
             strcmp(c->v[AX_MITIGATIONS], "none") ? c->v[AX_MITIGATIONS] : "");
    push_arg(a, "--mitigations");
    push_arg(a, mit);
    push_arg(a, "--cpu");
    push_arg(a, c->v[AX_CPU]);
    push_arg(a, "--");
    push_arg(a, program);
    if (c->wl) {
        for (size_t i = 0; i < c->wl->nargs; i++) {
            char *s = expand(c->wl->args[i], c);
            push_arg(a, s ? s : "");
            free(s);
        }
    } else {
        char num[32];
        snprintf(num, sizeof num, "%lld", c->iterations);
        push_arg(a, c->v[AX_ENTRY]);
        push_arg(a, c->v[AX_SYSCALL]);
        push_arg(a, num);
    }
}

/* FNV-1a of a file's bytes; false when it cannot be read. */
static bool hash_file(const char *path, uint64_t *h)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    unsigned char buf[1 << 16];
    ssize_t r;
    *h = ES_FNV_INIT;
    while ((r = read(fd, buf, sizeof buf)) > 0)
        *h = es_fnv1a(*h, buf, (size_t)r);
    close(fd);
    return r == 0;
}

/* The cell's key: its full command line (every axis, iterations, the
 * workload's arguments) with the programs replaced by hashes of their
 * bytes, plus entrysim's version.  Results survive a move of the build
 * directory, not a change to entrysim, the runner or the workload. */
static void cell_key(const run_cfg *rc, es_cell *c, uint64_t exe_hash, const char *program,
                     bool *program_ok)
{
    uint64_t wh = 0;
    *program_ok = hash_file(program, &wh);
    cell_argv a;
    build_argv(rc, c, program, &a);
    uint64_t h = es_fnv1a(ES_FNV_INIT, "entrysim-bench/1", 16);
    h = es_fnv1a(h, ES_BENCH_VERSION, strlen(ES_BENCH_VERSION) + 1);
    h = es_fnv1a(h, &exe_hash, sizeof exe_hash);
    h = es_fnv1a(h, &wh, sizeof wh);
    for (int i = 1; i < a.n; i++) {
        if (i == 4 || i == a.n - 1 - (c->wl ? (int)c->wl->nargs : 3))
            continue; /* the JSON path (depends on the key) and program path */
        h = es_fnv1a(h, a.v[i], strlen(a.v[i]) + 1);
    }
    for (int ax = 0; ax < AX_COUNT; ax++)
        h = es_fnv1a(h, c->v[ax], strlen(c->v[ax]) + 1);
    free_argv(&a);
    snprintf(c->key, sizeof c->key, "%016llx", (unsigned long long)h);
}

/* ---- the store: OUT/store.tsv, one line per finished cell, appended as
 * soon as the cell ends; a line without its newline (an interrupted write)
 * is ignored on reading */
#define STORE_FIELDS (5 + ES_BENCH_NPHASES)

static void store_load(const char *path, es_cell *cells, size_t n)
{
    size_t len;
    char err[300];
    char *text = read_file(path, &len, err, sizeof err);
    if (!text)
        return; /* a new store */
    for (char *line = text, *nl; (nl = strchr(line, '\n')); line = nl + 1) {
        *nl = 0;
        if (*line == '#')
            continue;
        char *tab = strchr(line, '\t');
        if (!tab || tab - line != 16)
            continue;
        double f[STORE_FIELDS];
        char *p = tab;
        int k = 0;
        for (; k < STORE_FIELDS && *p == '\t'; k++) {
            char *e;
            f[k] = strtod(p + 1, &e);
            if (e == p + 1)
                break;
            p = e;
        }
        if (k != STORE_FIELDS)
            continue;
        for (size_t i = 0; i < n; i++)
            if (!cells[i].skip && cells[i].state == CELL_PENDING &&
                !strncmp(cells[i].key, line, 16)) {
                es_cell *c = &cells[i];
                c->state = CELL_REUSED;
                c->cycles = f[0], c->instructions = f[1], c->calls = f[2], c->call_cycles = f[3];
                for (int ph = 0; ph < ES_BENCH_NPHASES; ph++)
                    c->phases[ph] = f[5 + ph];
            }
    }
    free(text);
}

static int store_append(const char *path, const es_cell *c)
{
    char line[1024];
    int n = snprintf(line, sizeof line, "%s\t%.17g\t%.17g\t%.17g\t%.17g\t%lld", c->key, c->cycles,
                     c->instructions, c->calls, c->call_cycles, c->iterations);
    for (int p = 0; p < ES_BENCH_NPHASES; p++)
        n += snprintf(line + n, sizeof line - (size_t)n, "\t%.17g", c->phases[p]);
    for (int a = 0; a < AX_COUNT; a++)
        n += snprintf(line + n, sizeof line - (size_t)n, "\t%s", c->v[a]);
    if (n + 2 > (int)sizeof line)
        return -1;
    line[n++] = '\n';
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) == 0 && st.st_size == 0) {
        static const char head[] =
            "# entrysim bench store v1: key cycles instructions calls call_cycles iterations "
            "<7 phases> <axes>\n";
        if (write(fd, head, sizeof head - 1) < 0) {
            close(fd);
            return -1;
        }
    }
    /* one write of the whole line: concurrent appenders cannot interleave */
    ssize_t w = write(fd, line, (size_t)n);
    int rc = close(fd);
    return w == n && rc == 0 ? 0 : -1;
}

/* The last non-empty line of a file (for failure notes). */
static void last_line(const char *path, char *buf, size_t n)
{
    size_t len;
    char err[64];
    buf[0] = 0;
    char *t = read_file(path, &len, err, sizeof err);
    if (!t)
        return;
    while (len && (t[len - 1] == '\n' || t[len - 1] == '\r'))
        t[--len] = 0;
    char *s = strrchr(t, '\n');
    snprintf(buf, n, "%s", s ? s + 1 : t);
    free(t);
}

typedef struct slot {
    pid_t pid;
    size_t cell;
    struct timespec start;
} slot;

static double since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

static int spawn_cell(const run_cfg *rc, es_cell *c, pid_t *pid)
{
    char *program = cell_program(rc, c);
    if (!program)
        return -1;
    cell_argv a;
    build_argv(rc, c, program, &a);
    free(program);
    char out[PATH_MAX], errp[PATH_MAX], json[PATH_MAX];
    cell_path(rc, c, "out", out, sizeof out);
    cell_path(rc, c, "err", errp, sizeof errp);
    cell_path(rc, c, "json", json, sizeof json);
    unlink(json); /* a stale report must not pass for this run's */
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, errp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    /* the child gets the signal mask the user started us with, not the
     * one run_cells waits with */
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setsigmask(&attr, &rc->child_mask);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
    int e = posix_spawn(pid, a.v[0], &fa, &attr, a.v, environ);
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&fa);
    if (e)
        setnote(c, "cannot start %s: %s", a.v[0], strerror(e));
    free_argv(&a);
    return e ? -1 : 0;
}

static void finish_cell(const run_cfg *rc, es_cell *c, int status, bool timed_out)
{
    char path[PATH_MAX], tail[160];
    cell_path(rc, c, "err", path, sizeof path);
    last_line(path, tail, sizeof tail);
    c->state = CELL_FAILED;
    if (timed_out) {
        setnote(c, "timed out after %g s", rc->timeout);
        return;
    }
    if (WIFSIGNALED(status)) {
        setnote(c, "killed by signal %d; stderr: %s", WTERMSIG(status),
                 tail);
        return;
    }
    if (WEXITSTATUS(status)) {
        setnote(c, "exit status %d; stderr: %s", WEXITSTATUS(status), tail);
        return;
    }
    cell_path(rc, c, "json", path, sizeof path);
    size_t len;
    char err[256];
    char *json = read_file(path, &len, err, sizeof err);
    if (!json) {
        setnote(c, "no timing report: %s", err);
        return;
    }
    if (es_bench_read_report(json, len, c->v[AX_SYSCALL], c, err, sizeof err)) {
        setnote(c, "timing report %s: %s", path, err);
    } else {
        c->state = CELL_DONE;
        (void)pathf(path, sizeof path, "%s/store.tsv", rc->out);
        if (store_append(path, c))
            fprintf(stderr, "entrysim: bench: cannot append to %s: %s\n", path, strerror(errno));
    }
    free(json);
}

/* Cells still pending when the run stops early are failed with `why`. */
static void fail_pending(es_cell *cells, size_t n, const char *why)
{
    for (size_t i = 0; i < n; i++)
        if (!cells[i].skip && cells[i].state == CELL_PENDING)
            cells[i].state = CELL_FAILED, setnote(&cells[i], "%s", why);
}

/* Runs the pending cells, at most rc->jobs at once.  SIGINT, SIGTERM and
 * SIGHUP are blocked meanwhile and waited for with the children (no
 * handler, no global flag): on one, the running children are killed and
 * their cells and the unstarted ones fail as interrupted; what finished is
 * already in the store.  Returns that signal, or 0. */
static int run_cells(run_cfg *rc, es_cell *cells, size_t n, size_t todo)
{
    slot *slots = calloc((size_t)rc->jobs, sizeof *slots);
    if (!slots) {
        fail_pending(cells, n, "out of memory");
        return 0;
    }
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGHUP);
    sigprocmask(SIG_BLOCK, &stop, &rc->child_mask);
    int stopped = 0;
    int running = 0;
    size_t next = 0, done = 0;
    while ((running || next < n) && !stopped) {
        while (running < rc->jobs && next < n) {
            es_cell *c = &cells[next];
            if (c->skip || c->state != CELL_PENDING) {
                next++;
                continue;
            }
            slot *s = NULL;
            for (int j = 0; j < rc->jobs && !s; j++)
                if (!slots[j].pid)
                    s = &slots[j];
            if (spawn_cell(rc, c, &s->pid)) {
                c->state = CELL_FAILED;
                s->pid = 0;
                fprintf(stderr, "entrysim: bench: %s: %s\n", c->key, c->note);
            } else {
                s->cell = next;
                clock_gettime(CLOCK_MONOTONIC, &s->start);
                running++;
            }
            next++;
        }
        bool reaped = false;
        for (int j = 0; j < rc->jobs; j++) {
            slot *s = &slots[j];
            if (!s->pid)
                continue;
            int st = 0;
            pid_t r = waitpid(s->pid, &st, WNOHANG);
            bool timed_out = false;
            if (r == 0 && since(&s->start) > rc->timeout) {
                kill(s->pid, SIGKILL);
                r = waitpid(s->pid, &st, 0);
                timed_out = true;
            }
            if (r == 0 || (r < 0 && errno == EINTR))
                continue;
            es_cell *c = &cells[s->cell];
            if (r < 0) {
                c->state = CELL_FAILED;
                setnote(c, "waitpid: %s", strerror(errno));
            } else {
                finish_cell(rc, c, st, timed_out);
            }
            done++;
            if (rc->verbose || c->state == CELL_FAILED) {
                fprintf(stderr, "[%zu/%zu] %s", done, todo, c->key);
                for (int a = 0; a < AX_COUNT; a++)
                    fprintf(stderr, " %s", c->v[a]);
                if (c->state == CELL_FAILED)
                    fprintf(stderr, ": FAILED: %s\n", c->note);
                else
                    fprintf(stderr, ": %.1f cycles/call\n",
                            c->calls > 0 ? c->call_cycles / c->calls : c->cycles / (double)c->iterations);
            }
            s->pid = 0;
            running--;
            reaped = true;
        }
        if (!reaped && running) {
            struct timespec ts = {0, 5 * 1000 * 1000};
            int sig = sigtimedwait(&stop, NULL, &ts);
            if (sig > 0)
                stopped = sig;
        }
    }
    if (!stopped) {
        /* one that came while nothing was running: taken here, not
         * delivered (and fatal) when the mask is restored */
        struct timespec zero = {0, 0};
        int sig = sigtimedwait(&stop, NULL, &zero);
        stopped = sig > 0 ? sig : 0;
    }
    if (stopped) {
        fprintf(stderr, "entrysim: bench: %s: stopping %d running cell%s\n", strsignal(stopped),
                running, running == 1 ? "" : "s");
        for (int j = 0; j < rc->jobs; j++)
            if (slots[j].pid) {
                kill(slots[j].pid, SIGKILL);
                waitpid(slots[j].pid, NULL, 0);
                cells[slots[j].cell].state = CELL_FAILED;
                setnote(&cells[slots[j].cell], "interrupted (%s)", strsignal(stopped));
            }
        fail_pending(cells, n, "not run: interrupted");
    }
    sigprocmask(SIG_SETMASK, &rc->child_mask, NULL);
    free(slots);
    return stopped;
}

/* ------------------------------------------------------------------ command */

static const char bench_usage[] =
    "usage: entrysim bench --matrix FILE [--out DIR] [-j N] [--timeout S]\n"
    "                      [--runner PROG] [--workloads DIR] [--list] [--verbose]\n"
    "Runs every cell of the matrix (bench/README.md) as `entrysim run\n"
    "--deterministic --timing-json ...`, in parallel, skipping cells whose results\n"
    "are already in DIR/store.tsv, and writes DIR/results.csv, results.json and\n"
    "chart.svg.\n"
    "  --out DIR        output directory (default bench-results/NAME)\n"
    "  -j N             cells run at once (default: the online CPUs)\n"
    "  --timeout S      a cell running longer is killed and failed (default 600)\n"
    "  --runner PROG    run PROG instead of this entrysim, with the same arguments\n"
    "                   (starting with `run`); it must write the --timing-json file\n"
    "  --workloads DIR  where the built workloads are (default: bench/ next to this\n"
    "                   entrysim, i.e. BUILD/bench)\n"
    "  --list           print the cells (and why any are skipped) and run nothing\n"
    "  --verbose        a line per finished cell\n"
    "Exit status: 0 all cells ok, 1 a cell failed (the others are kept), 2 bad\n"
    "usage or matrix, 128+N stopped by signal N (finished cells are kept).\n";

static int usage_error(const char *msg, const char *arg)
{
    fprintf(stderr, "entrysim: bench: %s%s\n%s", msg, arg, bench_usage);
    return 2;
}

static int mkdirs(const char *path)
{
    char buf[PATH_MAX];
    (void)pathf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            if (mkdir(buf, 0755) && errno != EEXIST)
                return -1;
            *p = '/';
        }
    return mkdir(buf, 0755) && errno != EEXIST ? -1 : 0;
}

int es_bench_cmd(int argc, char **argv, const char *self)
{
    const char *matrix = NULL, *out = NULL, *runner = NULL, *workloads = NULL;
    bool list = false, verbose = false;
    long jobs = sysconf(_SC_NPROCESSORS_ONLN);
    double timeout = 600;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        bool has = i + 1 < argc;
        char *e;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(bench_usage, stdout);
            return 0;
        } else if (!strcmp(a, "--list")) {
            list = true;
        } else if (!strcmp(a, "--verbose") || !strcmp(a, "-v")) {
            verbose = true;
        } else if (!has && (!strcmp(a, "--matrix") || !strcmp(a, "--out") || !strcmp(a, "-j") ||
                            !strcmp(a, "--timeout") || !strcmp(a, "--runner") ||
                            !strcmp(a, "--workloads"))) {
            return usage_error("missing value after ", a);
        } else if (!strcmp(a, "--matrix")) {
            matrix = argv[++i];
        } else if (!strcmp(a, "--out")) {
            out = argv[++i];
        } else if (!strcmp(a, "--runner")) {
            runner = argv[++i];
        } else if (!strcmp(a, "--workloads")) {
            workloads = argv[++i];
        } else if (!strcmp(a, "-j")) {
            jobs = strtol(argv[++i], &e, 10);
            if (*e || jobs < 1 || jobs > 256)
                return usage_error("-j wants 1..256, not ", argv[i]);
        } else if (!strcmp(a, "--timeout")) {
            timeout = strtod(argv[++i], &e);
            if (*e || !(timeout > 0))
                return usage_error("--timeout wants seconds > 0, not ", argv[i]);
        } else {
            return usage_error("unknown option ", a);
        }
    }
    if (!matrix)
        return usage_error("--matrix FILE is required", "");
    if (jobs < 1)
        jobs = 1;

    es_matrix m;
    char err[512];
    if (es_matrix_load(matrix, &m, err, sizeof err)) {
        fprintf(stderr, "entrysim: bench: %s\n", err);
        return 2;
    }
    es_cell *cells;
    size_t n = es_matrix_cells(&m, &cells);
    size_t nskip = 0;
    for (size_t i = 0; i < n; i++)
        nskip += cells[i].skip != NULL;

    /* the programs: entrysim (or the runner) and the workloads directory */
    char exe[PATH_MAX], wdir[PATH_MAX], odir[PATH_MAX];
    if (!realpath(runner ? runner : self, exe)) {
        fprintf(stderr, "entrysim: bench: %s: %s\n", runner ? runner : self, strerror(errno));
        free(cells);
        es_matrix_free(&m);
        return 2;
    }
    if (workloads) {
        (void)pathf(wdir, sizeof wdir, "%s", workloads);
    } else {
        char me[PATH_MAX];
        if (!realpath(self, me))
            (void)pathf(me, sizeof me, "%s", self);
        char *slash = strrchr(me, '/');
        if (slash)
            *slash = 0;
        (void)pathf(wdir, sizeof wdir, "%s/bench", slash ? me : ".");
    }
    if (out)
        (void)pathf(odir, sizeof odir, "%s", out);
    else
        (void)pathf(odir, sizeof odir, "bench-results/%s", m.name);
    /* room for "/cells/KEY.json" and the like after the directories */
    if (strlen(odir) > PATH_MAX - 64 || strlen(wdir) > PATH_MAX - 64) {
        fprintf(stderr, "entrysim: bench: --out or --workloads path too long\n");
        free(cells);
        es_matrix_free(&m);
        return 2;
    }
    run_cfg rc = {odir, exe, wdir, (int)jobs, timeout, verbose, {{0}}};
    sigprocmask(SIG_BLOCK, NULL, &rc.child_mask);
    uint64_t exe_hash = 0;
    if (!hash_file(exe, &exe_hash)) {
        fprintf(stderr, "entrysim: bench: cannot read %s\n", exe);
        free(cells);
        es_matrix_free(&m);
        return 2;
    }
    size_t missing = 0;
    for (size_t i = 0; i < n; i++) {
        if (cells[i].skip)
            continue;
        char *prog = cell_program(&rc, &cells[i]);
        bool prog_ok = false;
        if (prog)
            cell_key(&rc, &cells[i], exe_hash, prog, &prog_ok);
        if (!prog_ok) {
            cells[i].state = CELL_FAILED;
            setnote(&cells[i],
                     "workload %s cannot be read (build the bench_workloads target, or "
                     "--workloads DIR)",
                     prog ? prog : "?");
            missing++;
        }
        free(prog);
    }

    if (list) {
        for (size_t i = 0; i < n; i++) {
            printf("%s", cells[i].skip ? "skip            " : cells[i].key);
            for (int a = 0; a < AX_COUNT; a++)
                printf(" %s", cells[i].v[a]);
            printf(" %lld", cells[i].iterations);
            if (cells[i].skip)
                printf("  (%s)", cells[i].skip);
            else if (cells[i].state == CELL_FAILED)
                printf("  (%s)", cells[i].note);
            putchar('\n');
        }
        printf("%zu cells, %zu skipped as impossible\n", n - nskip, nskip);
        free(cells);
        es_matrix_free(&m);
        return 0;
    }

    char path[PATH_MAX + 32];
    (void)pathf(path, sizeof path, "%s/cells", odir);
    if (mkdirs(path)) {
        fprintf(stderr, "entrysim: bench: cannot create %s: %s\n", path, strerror(errno));
        free(cells);
        es_matrix_free(&m);
        return 2;
    }
    (void)pathf(path, sizeof path, "%s/store.tsv", odir);
    store_load(path, cells, n);
    size_t reused = 0, todo = 0;
    for (size_t i = 0; i < n; i++) {
        reused += cells[i].state == CELL_REUSED;
        todo += !cells[i].skip && cells[i].state == CELL_PENDING;
    }
    fprintf(stderr, "entrysim: bench: %s: %zu cells: %zu to run (-j %ld), %zu already in %s",
            m.name, n - nskip, todo, jobs, reused, path);
    if (nskip)
        fprintf(stderr, "; %zu impossible combinations skipped (results.json lists them)", nskip);
    fputc('\n', stderr);
    /* each distinct reason once */
    for (size_t i = 0; i < n; i++) {
        bool seen = false;
        for (size_t j = 0; j < i && cells[i].skip; j++)
            seen |= cells[j].skip == cells[i].skip;
        if (cells[i].skip && !seen)
            fprintf(stderr, "  skipped: %s\n", cells[i].skip);
    }
    int stopped = run_cells(&rc, cells, n, todo);

    size_t failed = 0, ran = 0;
    for (size_t i = 0; i < n; i++) {
        failed += !cells[i].skip && cells[i].state == CELL_FAILED;
        ran += cells[i].state == CELL_DONE;
    }
    int status = failed ? 1 : 0;
    const char *names[] = {"results.csv", "results.json", "chart.svg"};
    for (int k = 0; k < 3; k++) {
        (void)pathf(path, sizeof path, "%s/%s", odir, names[k]);
        int r = k == 0   ? es_bench_write_csv(path, cells, n)
                : k == 1 ? es_bench_write_json(path, &m, cells, n, "entrysim " ES_BENCH_VERSION)
                         : es_bench_write_svg(path, &m, cells, n);
        if (r) {
            fprintf(stderr, "entrysim: bench: cannot write %s\n", path);
            status = 1;
        }
    }
    fprintf(stderr, "entrysim: bench: %zu ran, %zu reused, %zu failed%s; %s/results.csv\n", ran,
            reused, failed, missing ? " (workloads missing)" : "", odir);
    free(cells);
    es_matrix_free(&m);
    return stopped ? 128 + stopped : status; /* like a shell: 130 after SIGINT */
}
