/* bench_run.c - `entrysim bench --matrix FILE` (issue 4): each cell of the
 * matrix run as a child `entrysim run --timing-json` (or --runner), in
 * parallel with a timeout, resumable through a results store keyed by a
 * hash of the cell's configuration and of the programs that produce its
 * numbers; then the outputs (bench_out.c).  bench/README.md. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "escape.h"
#include "matrix.h"

#ifndef ES_BENCH_VERSION
#define ES_BENCH_VERSION "unknown"
#endif
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

extern char **environ;

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

/* ------------------------------------------------------------------ runs */

typedef struct run_cfg {
    const char *out;       /* output directory */
    const char *exe;       /* what runs a cell: self, or --runner */
    const char *workloads; /* directory of the built workloads */
    int jobs;
    double timeout;
    bool verbose;
    sigset_t child_mask; /* the mask before es_bench_run blocked the stop signals */
    sigset_t stop;       /* SIGINT, SIGTERM, SIGHUP */
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
        return es_bench_sdup(prog);
    size_t n = strlen(rc->workloads) + strlen(prog) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", rc->workloads, prog);
    return p;
}

/* Workload arguments with {entry} {syscall} {iterations} expanded, of any
 * length (an argument too long for exec fails its cell when it starts). */
static char *expand(const char *tmpl, const es_cell *c)
{
    char num[32];
    snprintf(num, sizeof num, "%lld", c->iterations);
    static const struct {
        const char *name;
        size_t len;
    } vars[] = {{"{entry}", 7}, {"{syscall}", 9}, {"{iterations}", 12}};
    const char *vals[] = {c->v[AX_ENTRY], c->v[AX_SYSCALL], num};
    size_t cap = strlen(tmpl) + 1, n = 0;
    for (const char *p = tmpl; (p = strchr(p, '{')); p++)
        cap += strlen(c->v[AX_ENTRY]) + strlen(c->v[AX_SYSCALL]) + sizeof num; /* enough */
    char *buf = malloc(cap);
    if (!buf)
        return NULL;
    for (const char *p = tmpl; *p;) {
        size_t k = 0;
        while (k < COUNT(vars) && strncmp(p, vars[k].name, vars[k].len))
            k++;
        if (k < COUNT(vars)) {
            size_t l = strlen(vals[k]);
            memcpy(buf + n, vals[k], l);
            n += l;
            p += vars[k].len;
        } else {
            buf[n++] = *p++;
        }
    }
    buf[n] = 0;
    return buf;
}

/* argv of a cell's child (NULL-terminated, strings malloc'd). */
typedef struct cell_argv {
    char *v[64];
    int n;
} cell_argv;

static void push_arg(cell_argv *a, const char *s)
{
    if (a->n < (int)COUNT(a->v) - 1)
        a->v[a->n++] = es_bench_sdup(s);
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

/* Takes the finished cells of the store at path (none when it does not
 * exist yet); -1 with the reason on stderr when it cannot be read (a FIFO
 * or a directory is refused, not waited on). */
static int store_load(const char *path, es_cell *cells, size_t n)
{
    size_t len;
    char err[PATH_MAX + 64];
    struct stat st;
    if (stat(path, &st) && errno == ENOENT)
        return 0; /* a new store */
    char *text = es_bench_read_file(path, &len, err, sizeof err);
    if (!text) {
        fprintf(stderr, "entrysim: bench: %s\n", es_escape_ctl(err, sizeof err, err));
        return -1;
    }
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
    return 0;
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
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NONBLOCK | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        close(fd);
        errno = EINVAL;
        return -1;
    }
    if (st.st_size == 0) {
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
    char *t = es_bench_read_file(path, &len, err, sizeof err);
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
    char *json = es_bench_read_file(path, &len, err, sizeof err);
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

/* A stop signal taken within ts (NULL: a pending one only), or 0. */
static int take_stop(const run_cfg *rc, const struct timespec *ts)
{
    static const struct timespec zero = {0, 0};
    int sig = sigtimedwait(&rc->stop, NULL, ts ? ts : &zero);
    return sig > 0 ? sig : 0;
}

/* The state of run_cells. */
typedef struct cells_run {
    const run_cfg *rc;
    es_cell *cells;
    size_t n, todo, next, done;
    slot *slots;
    int running, stopped;
} cells_run;

/* Starts pending cells in the free slots. */
static void start_cells(cells_run *r)
{
    const run_cfg *rc = r->rc;
    while (r->running < rc->jobs && r->next < r->n) {
        es_cell *c = &r->cells[r->next];
        if (c->skip || c->state != CELL_PENDING) {
            r->next++;
            continue;
        }
        slot *s = NULL;
        for (int j = 0; j < rc->jobs && !s; j++)
            if (!r->slots[j].pid)
                s = &r->slots[j];
        if (spawn_cell(rc, c, &s->pid)) {
            c->state = CELL_FAILED;
            s->pid = 0;
            fprintf(stderr, "entrysim: bench: %s: %s\n", c->key, c->note);
        } else {
            s->cell = r->next;
            clock_gettime(CLOCK_MONOTONIC, &s->start);
            r->running++;
        }
        r->next++;
    }
}

static void report_cell(const cells_run *r, const es_cell *c)
{
    if (!r->rc->verbose && c->state != CELL_FAILED)
        return;
    fprintf(stderr, "[%zu/%zu] %s", r->done, r->todo, c->key);
    for (int a = 0; a < AX_COUNT; a++)
        fprintf(stderr, " %s", c->v[a]);
    if (c->state == CELL_FAILED)
        fprintf(stderr, ": FAILED: %s\n", c->note);
    else
        fprintf(stderr, ": %.1f cycles/call\n",
                c->calls > 0 ? c->call_cycles / c->calls : c->cycles / (double)c->iterations);
}

/* Reaps slot s if its child ended (or kills it past the timeout); true
 * when the slot is free again.  A child killed by a signal while a stop
 * signal is pending was killed by that stop (a signal sent to the whole
 * process group, as timeout(1) and ^C do): the run stops and the cell
 * counts as interrupted, not failed by its own fault. */
static bool reap_slot(cells_run *r, slot *s)
{
    int st = 0;
    pid_t pid = waitpid(s->pid, &st, WNOHANG);
    bool timed_out = false;
    if (pid == 0 && since(&s->start) > r->rc->timeout) {
        kill(s->pid, SIGKILL);
        pid = waitpid(s->pid, &st, 0);
        timed_out = true;
    }
    if (pid == 0 || (pid < 0 && errno == EINTR))
        return false;
    if (pid > 0 && !timed_out && WIFSIGNALED(st) && (r->stopped = take_stop(r->rc, NULL))) {
        s->pid = -1; /* reaped: stop_cells must not signal or wait for it again */
        return false;
    }
    es_cell *c = &r->cells[s->cell];
    if (pid < 0) {
        c->state = CELL_FAILED;
        setnote(c, "waitpid: %s", strerror(errno));
    } else {
        finish_cell(r->rc, c, st, timed_out);
    }
    r->done++;
    report_cell(r, c);
    s->pid = 0;
    r->running--;
    return true;
}

/* After a stop signal: the running cells are killed and failed as
 * interrupted, the unstarted ones as not run. */
static void stop_cells(cells_run *r)
{
    fprintf(stderr, "entrysim: bench: %s: stopping %d running cell%s\n", strsignal(r->stopped),
            r->running, r->running == 1 ? "" : "s");
    for (int j = 0; j < r->rc->jobs; j++) {
        slot *s = &r->slots[j];
        if (!s->pid)
            continue;
        if (s->pid > 0) {
            kill(s->pid, SIGKILL);
            waitpid(s->pid, NULL, 0);
        }
        r->cells[s->cell].state = CELL_FAILED;
        setnote(&r->cells[s->cell], "interrupted (%s)", strsignal(r->stopped));
        s->pid = 0;
    }
    fail_pending(r->cells, r->n, "not run: interrupted");
}

/* Runs the pending cells, at most rc->jobs at once.  The caller has
 * blocked rc->stop (SIGINT, SIGTERM, SIGHUP); they are waited for with the
 * children (no handler, no global flag): on one, the running children are
 * killed and their cells and the unstarted ones fail as interrupted; what
 * finished is already in the store.  Returns that signal, or 0. */
static int run_cells(const run_cfg *rc, es_cell *cells, size_t n, size_t todo)
{
    cells_run r = {rc, cells, n, todo, 0, 0, calloc((size_t)rc->jobs, sizeof(slot)), 0, 0};
    if (!r.slots) {
        fail_pending(cells, n, "out of memory");
        return 0;
    }
    while ((r.running || r.next < n) && !r.stopped) {
        start_cells(&r);
        bool reaped = false;
        for (int j = 0; j < rc->jobs && !r.stopped; j++)
            if (r.slots[j].pid > 0)
                reaped |= reap_slot(&r, &r.slots[j]);
        if (!reaped && r.running && !r.stopped) {
            struct timespec ts = {0, 5 * 1000 * 1000};
            r.stopped = take_stop(rc, &ts);
        }
    }
    /* one that came while nothing was running: taken here, not delivered
     * (and fatal) when the mask is restored */
    if (!r.stopped)
        r.stopped = take_stop(rc, NULL);
    if (r.stopped)
        stop_cells(&r);
    free(r.slots);
    return r.stopped;
}

/* ------------------------------------------------------------------ the run */

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

/* What es_bench_run works on: the matrix, its cells, and the paths. */
typedef struct bench {
    es_matrix m;
    es_cell *cells;
    size_t n, nskip, missing;
    char exe[PATH_MAX], wdir[PATH_MAX], odir[PATH_MAX];
    run_cfg rc;
} bench;

static void bench_free(bench *b)
{
    free(b->cells);
    es_matrix_free(&b->m);
}

/* Prints "entrysim: bench: " and the message with its control characters
 * escaped (it quotes paths and names the user gave); returns 2. */
static int bench_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int bench_fail(const char *fmt, ...)
{
    char msg[2 * PATH_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "entrysim: bench: %s\n", es_escape_ctl(msg, sizeof msg, msg));
    return 2;
}

/* The programs (entrysim or the runner, the workloads directory) and the
 * output directory; 0 or the exit status 2. */
static int bench_paths(bench *b, const es_bench_cfg *cfg)
{
    const char *runner = cfg->runner, *self = cfg->self;
    if (!realpath(runner ? runner : self, b->exe))
        return bench_fail("%s: %s", runner ? runner : self, strerror(errno));
    if (cfg->workloads) {
        (void)pathf(b->wdir, sizeof b->wdir, "%s", cfg->workloads);
    } else {
        char me[PATH_MAX];
        if (!realpath(self, me))
            (void)pathf(me, sizeof me, "%s", self);
        char *slash = strrchr(me, '/');
        if (slash)
            *slash = 0;
        (void)pathf(b->wdir, sizeof b->wdir, "%s/bench", slash ? me : ".");
    }
    if (cfg->out)
        (void)pathf(b->odir, sizeof b->odir, "%s", cfg->out);
    else
        (void)pathf(b->odir, sizeof b->odir, "bench-results/%s", b->m.name);
    /* room for "/cells/KEY.json" and the like after the directories */
    if (strlen(b->odir) > PATH_MAX - 64 || strlen(b->wdir) > PATH_MAX - 64)
        return bench_fail("--out or --workloads path too long");
    return 0;
}

/* Every runnable cell's key; a cell whose workload cannot be read fails
 * at once.  0 or the exit status 2. */
static int key_cells(bench *b)
{
    uint64_t exe_hash = 0;
    if (!hash_file(b->exe, &exe_hash))
        return bench_fail("cannot read %s", b->exe);
    for (size_t i = 0; i < b->n; i++) {
        es_cell *c = &b->cells[i];
        if (c->skip)
            continue;
        char *prog = cell_program(&b->rc, c);
        bool prog_ok = false;
        if (prog)
            cell_key(&b->rc, c, exe_hash, prog, &prog_ok);
        if (!prog_ok) {
            c->state = CELL_FAILED;
            setnote(c,
                    "workload %s cannot be read (build the bench_workloads target, or "
                    "--workloads DIR)",
                    prog ? prog : "?");
            b->missing++;
        }
        free(prog);
    }
    return 0;
}

static void list_cells(const bench *b)
{
    for (size_t i = 0; i < b->n; i++) {
        const es_cell *c = &b->cells[i];
        printf("%s", c->skip ? "skip            " : c->key);
        for (int a = 0; a < AX_COUNT; a++)
            printf(" %s", c->v[a]);
        printf(" %lld", c->iterations);
        if (c->skip)
            printf("  (%s)", c->skip);
        else if (c->state == CELL_FAILED)
            printf("  (%s)", c->note);
        putchar('\n');
    }
    printf("%zu cells, %zu skipped as impossible\n", b->n - b->nskip, b->nskip);
}

/* The line saying what will run, and each distinct skip reason once. */
static void announce(const bench *b, const char *store, size_t todo, size_t reused)
{
    fprintf(stderr, "entrysim: bench: %s: %zu cells: %zu to run (-j %d), %zu already in %s",
            b->m.name, b->n - b->nskip, todo, b->rc.jobs, reused, store);
    if (b->nskip)
        fprintf(stderr, "; %zu impossible combinations skipped (results.json lists them)",
                b->nskip);
    fputc('\n', stderr);
    for (size_t i = 0; i < b->n; i++) {
        bool seen = false;
        for (size_t j = 0; j < i && b->cells[i].skip; j++)
            seen |= b->cells[j].skip == b->cells[i].skip;
        if (b->cells[i].skip && !seen)
            fprintf(stderr, "  skipped: %s\n", b->cells[i].skip);
    }
}

/* results.csv, results.json, chart.svg; 0 or 1 when one cannot be written. */
static int write_outputs(const bench *b)
{
    static const char *const names[] = {"results.csv", "results.json", "chart.svg"};
    char path[PATH_MAX + 32];
    int status = 0;
    for (int k = 0; k < 3; k++) {
        (void)pathf(path, sizeof path, "%s/%s", b->odir, names[k]);
        int r = k == 0   ? es_bench_write_csv(path, b->cells, b->n)
                : k == 1 ? es_bench_write_json(path, &b->m, b->cells, b->n,
                                               "entrysim " ES_BENCH_VERSION)
                         : es_bench_write_svg(path, &b->m, b->cells, b->n);
        if (r) {
            bench_fail("cannot write %s", path);
            status = 1;
        }
    }
    return status;
}

/* Runs the cells and writes the outputs.  The stop signals stay blocked
 * until the outputs are written: a second one (timeout(1) signals the
 * process and then its group; ^C pressed twice) must not kill bench
 * between the cells' end and results.csv.  Returns the exit status. */
static int run_and_write(bench *b)
{
    char path[PATH_MAX + 32];
    (void)pathf(path, sizeof path, "%s/cells", b->odir);
    if (mkdirs(path))
        return bench_fail("cannot create %s: %s", path, strerror(errno));
    (void)pathf(path, sizeof path, "%s/store.tsv", b->odir);
    if (store_load(path, b->cells, b->n))
        return 2;
    size_t reused = 0, todo = 0, failed = 0, ran = 0;
    for (size_t i = 0; i < b->n; i++) {
        reused += b->cells[i].state == CELL_REUSED;
        todo += !b->cells[i].skip && b->cells[i].state == CELL_PENDING;
    }
    announce(b, path, todo, reused);
    sigprocmask(SIG_BLOCK, &b->rc.stop, NULL);
    int stopped = run_cells(&b->rc, b->cells, b->n, todo);
    for (size_t i = 0; i < b->n; i++) {
        failed += !b->cells[i].skip && b->cells[i].state == CELL_FAILED;
        ran += b->cells[i].state == CELL_DONE;
    }
    int status = write_outputs(b) | (failed ? 1 : 0);
    fprintf(stderr, "entrysim: bench: %zu ran, %zu reused, %zu failed%s; %s/results.csv\n", ran,
            reused, failed, b->missing ? " (workloads missing)" : "", b->odir);
    fflush(stderr);
    /* signals that came after the first: it decides the exit status */
    while (take_stop(&b->rc, NULL))
        ;
    /* Stopped, the stop signals stay blocked: the caller is about to exit
     * with 128+N, and a late copy of the signal (timeout(1) signals bench,
     * then its group, and may be preempted in between) must not kill the
     * process on its way out, e.g. inside LeakSanitizer's exit scan. */
    if (!stopped)
        sigprocmask(SIG_SETMASK, &b->rc.child_mask, NULL);
    return stopped ? 128 + stopped : status; /* like a shell: 130 after SIGINT */
}

int es_bench_run(const es_bench_cfg *cfg)
{
    bench *b = calloc(1, sizeof *b);
    if (!b)
        return bench_fail("out of memory");
    char err[512];
    if (es_matrix_load(cfg->matrix, &b->m, err, sizeof err)) {
        free(b);
        return bench_fail("%s", err);
    }
    b->n = es_matrix_cells(&b->m, &b->cells);
    for (size_t i = 0; i < b->n; i++)
        b->nskip += b->cells[i].skip != NULL;
    long jobs = cfg->jobs > 0 ? cfg->jobs : sysconf(_SC_NPROCESSORS_ONLN);
    int status = bench_paths(b, cfg);
    b->rc = (run_cfg){b->odir, b->exe, b->wdir, jobs < 1 ? 1 : (int)jobs, cfg->timeout,
                      cfg->verbose, {{0}}, {{0}}};
    sigprocmask(SIG_BLOCK, NULL, &b->rc.child_mask);
    sigemptyset(&b->rc.stop);
    sigaddset(&b->rc.stop, SIGINT);
    sigaddset(&b->rc.stop, SIGTERM);
    sigaddset(&b->rc.stop, SIGHUP);
    if (!status)
        status = key_cells(b);
    if (!status && cfg->list)
        list_cells(b);
    else if (!status)
        status = run_and_write(b);
    bench_free(b);
    free(b);
    return status;
}
