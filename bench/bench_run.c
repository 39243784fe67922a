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

#include "bench_int.h"
#include "escape.h"
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

int es_bench_pathf(char *buf, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(buf, n, fmt, ap);
    va_end(ap);
    return w >= 0 && (size_t)w < n ? 0 : -1;
}

/* ------------------------------------------------------------------ runs */


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
    (void)es_bench_pathf(buf, n, "%s/cells/%s.%s", rc->out, c->key, ext);
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

int es_bench_spawn(pid_t *pid, char *const *argv, char *const *envp, const char *out,
                   const char *err, const sigset_t *mask)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    if (mask) {
        posix_spawnattr_setsigmask(&attr, mask);
        posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
    }
    int e = posix_spawn(pid, argv[0], &fa, &attr, argv, envp);
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&fa);
    return e;
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
    /* entrysim run hands its environment to the guest, and the simulated
     * execve copies it onto the guest's stack (fs/exec.c copy_strings), so
     * its size is in the figures: a cell gets a fixed one, the same in any
     * shell, folder or Slurm task.  A --runner gets ours (it is the user's
     * program, and the fake one is steered by it).  The child gets the
     * signal mask the user started us with, not the one run_cells waits
     * with. */
    static char *const cell_env[] = {(char *)"PATH=/usr/local/bin:/usr/bin:/bin",
                                     (char *)"LC_ALL=C", NULL};
    int e = es_bench_spawn(pid, a.v, rc->host_env ? environ : cell_env, out, errp,
                           &rc->child_mask);
    if (e)
        setnote(c, "cannot start %s: %s", a.v[0], strerror(e));
    free_argv(&a);
    return e ? -1 : 0;
}

/* The cell's state and figures (or failure note) from its child's exit
 * status and report. */
static void judge_cell(const run_cfg *rc, es_cell *c, int status, bool timed_out)
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
    if (es_bench_read_report(json, len, c->v[AX_SYSCALL], c, err, sizeof err))
        setnote(c, "timing report %s: %s", path, err);
    else
        c->state = CELL_DONE;
    free(json);
}

/* Keeps a finished cell as soon as it ends: a line appended to store.tsv,
 * or (--shard) its own file, also for a failure so that --status can tell
 * failed from not yet run.  A cell interrupted by a stop signal is not
 * recorded: it is simply left for the next run. */
static void record_cell(const run_cfg *rc, const es_cell *c)
{
    char path[PATH_MAX];
    int bad = 0;
    if (rc->cell_files && c->state != CELL_PENDING) {
        bad = es_cell_file_write(rc->out, c) ? errno : 0;
        (void)es_bench_pathf(path, sizeof path, "%s/cells/%s", rc->out, c->key);
    } else if (c->state == CELL_DONE) {
        (void)es_bench_pathf(path, sizeof path, "%s/store.tsv", rc->out);
        bad = es_store_append(path, c) ? errno : 0;
    }
    if (bad && rc->progress) /* the line goes under the progress display */
        rc->progress(rc->progress_ctx, NULL);
    if (bad)
        fprintf(stderr, "entrysim: bench: cannot write %s: %s\n", path, strerror(bad));
}

static void finish_cell(const run_cfg *rc, es_cell *c, int status, bool timed_out)
{
    judge_cell(rc, c, status, timed_out);
    record_cell(rc, c);
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
    size_t n, todo, next, done, failed;
    slot *slots;
    int running, stopped;
} cells_run;

/* The front end's progress display (es_bench_cfg.progress): where the run
 * is, or (r NULL) take the display away before a line of bench's own. */
static void progress(const run_cfg *rc, const cells_run *r)
{
    if (!rc->progress)
        return;
    es_bench_progress p = {0};
    if (r)
        p = (es_bench_progress){r->done, r->todo, r->failed, r->running};
    rc->progress(rc->progress_ctx, r ? &p : NULL);
}

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
            progress(rc, NULL);
            fprintf(stderr, "entrysim: bench: %s: %s\n", c->key, c->note);
            record_cell(rc, c);
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
    progress(r->rc, NULL);
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
    r->failed += c->state == CELL_FAILED;
    report_cell(r, c);
    s->pid = 0;
    r->running--;
    return true;
}

/* After a stop signal: the running cells are killed and failed as
 * interrupted, the unstarted ones as not run. */
static void stop_cells(cells_run *r)
{
    progress(r->rc, NULL);
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
    cells_run r = {rc, cells, n, todo, 0, 0, 0, calloc((size_t)rc->jobs, sizeof(slot)), 0, 0};
    if (!r.slots) {
        fail_pending(cells, n, "out of memory");
        return 0;
    }
    while ((r.running || r.next < n) && !r.stopped) {
        start_cells(&r);
        progress(rc, &r);
        bool reaped = false;
        for (int j = 0; j < rc->jobs && !r.stopped; j++)
            if (r.slots[j].pid > 0)
                reaped |= reap_slot(&r, &r.slots[j]);
        if (!reaped && r.running && !r.stopped) {
            struct timespec ts = {0, 5 * 1000 * 1000};
            r.stopped = take_stop(rc, &ts);
        }
    }
    progress(rc, NULL);
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

int es_bench_mkdirs(const char *path)
{
    char buf[PATH_MAX];
    (void)es_bench_pathf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            if (mkdir(buf, 0755) && errno != EEXIST)
                return -1;
            *p = '/';
        }
    return mkdir(buf, 0755) && errno != EEXIST ? -1 : 0;
}


void es_bench_release(bench *b)
{
    free(b->cells);
    es_matrix_free(&b->m);
}

/* Prints "entrysim: bench: " and the message with its control characters
 * escaped (it quotes paths and names the user gave); returns 2. */
int es_bench_fail(const char *fmt, ...)
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
        return es_bench_fail("%s: %s", runner ? runner : self, strerror(errno));
    if (cfg->workloads) {
        (void)es_bench_pathf(b->wdir, sizeof b->wdir, "%s", cfg->workloads);
    } else {
        char me[PATH_MAX];
        if (!realpath(self, me))
            (void)es_bench_pathf(me, sizeof me, "%s", self);
        char *slash = strrchr(me, '/');
        if (slash)
            *slash = 0;
        (void)es_bench_pathf(b->wdir, sizeof b->wdir, "%s/bench", slash ? me : ".");
    }
    if (cfg->out)
        (void)es_bench_pathf(b->odir, sizeof b->odir, "%s", cfg->out);
    else
        (void)es_bench_pathf(b->odir, sizeof b->odir, "bench-results/%s", b->m.name);
    /* room for "/cells/KEY.json" and the like after the directories */
    if (strlen(b->odir) > PATH_MAX - 64 || strlen(b->wdir) > PATH_MAX - 64)
        return es_bench_fail("--out or --workloads path too long");
    return 0;
}

/* Every runnable cell's key; a cell whose workload cannot be read fails
 * at once.  0 or the exit status 2. */
static int key_cells(bench *b)
{
    uint64_t exe_hash = 0;
    if (!hash_file(b->exe, &exe_hash))
        return es_bench_fail("cannot read %s", b->exe);
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
static void announce(const bench *b, const es_bench_cfg *cfg, size_t todo, size_t reused)
{
    if (cfg->nshards)
        fprintf(stderr, "entrysim: bench: %s shard %d/%d: %zu cells: %zu to run (-j %d), %zu "
                        "already done",
                b->m.name, cfg->shard, cfg->nshards, todo + reused, todo, b->rc.jobs, reused);
    else
        fprintf(stderr, "entrysim: bench: %s: %zu cells: %zu to run (-j %d), %zu already in "
                        "%s/store.tsv",
                b->m.name, b->n - b->nskip, todo, b->rc.jobs, reused, b->odir);
    if (b->nskip)
        fprintf(stderr, "; %zu impossible combinations skipped (results.json lists them)",
                b->nskip);
    fputc('\n', stderr);
    for (size_t i = 0; i < b->n && !cfg->nshards; i++) {
        bool seen = false;
        for (size_t j = 0; j < i && b->cells[i].skip; j++)
            seen |= b->cells[j].skip == b->cells[i].skip;
        if (b->cells[i].skip && !seen)
            fprintf(stderr, "  skipped: %s\n", b->cells[i].skip);
    }
}

/* results.csv, results.json, chart.svg; 0 or 1 when one cannot be written. */
int es_bench_write_outputs(const bench *b)
{
    static const char *const names[] = {"results.csv", "results.json", "chart.svg"};
    char path[PATH_MAX + 32];
    int status = 0;
    for (int k = 0; k < 3; k++) {
        (void)es_bench_pathf(path, sizeof path, "%s/%s", b->odir, names[k]);
        int r = k == 0   ? es_bench_write_csv(path, b->cells, b->n)
                : k == 1 ? es_bench_write_json(path, &b->m, b->cells, b->n,
                                               "entrysim " ES_BENCH_VERSION)
                         : es_bench_write_svg(path, &b->m, b->cells, b->n);
        if (r) {
            es_bench_fail("cannot write %s", path);
            status = 1;
        }
    }
    return status;
}

/* --shard I/N: runnable cell number j (in matrix order, impossible ones
 * not counted) belongs to shard j % N + 1, a partition that depends on the
 * matrix alone and spreads neighbouring (similar) cells over the shards.
 * The other shards' cells are left alone; this shard's cells that failed
 * before running (a missing workload) get their failure file now. */
static void take_shard(bench *b, int shard, int nshards)
{
    size_t j = 0;
    for (size_t i = 0; i < b->n; i++) {
        es_cell *c = &b->cells[i];
        if (c->skip)
            continue;
        if ((int)(j++ % (size_t)nshards) != shard - 1)
            c->state = CELL_ELSEWHERE;
        else if (c->state == CELL_FAILED)
            record_cell(&b->rc, c);
    }
}

/* The cells already finished (store.tsv, cells/KEY.tsv), and for a shard
 * its part and the job file; 0 or the exit status 2. */
static int load_done(bench *b, const es_bench_cfg *cfg)
{
    char path[PATH_MAX + 32];
    (void)es_bench_pathf(path, sizeof path, "%s/cells", b->odir);
    if (es_bench_mkdirs(path))
        return es_bench_fail("cannot create %s: %s", path, strerror(errno));
    (void)es_bench_pathf(path, sizeof path, "%s/store.tsv", b->odir);
    if (es_store_load(path, b->cells, b->n))
        return 2;
    es_cells_load(b->odir, b->cells, b->n, false);
    if (!cfg->nshards)
        return 0;
    char matrix[PATH_MAX], self[PATH_MAX];
    (void)es_bench_pathf(path, sizeof path, "%s/job", b->odir);
    if (!realpath(cfg->matrix, matrix) || !realpath(cfg->self, self) || es_bench_mkdirs(path) ||
        es_job_write(b, matrix, self, cfg->runner != NULL, false))
        return es_bench_fail("cannot write %s/bench.job: %s", path, strerror(errno));
    take_shard(b, cfg->shard, cfg->nshards);
    return 0;
}

/* Runs the cells and writes the outputs (a shard writes only its cells'
 * files: --merge makes the outputs).  The stop signals stay blocked
 * until the outputs are written: a second one (timeout(1) signals the
 * process and then its group; ^C pressed twice) must not kill bench
 * between the cells' end and results.csv.  Returns the exit status. */
static int run_and_write(bench *b, const es_bench_cfg *cfg)
{
    int status = load_done(b, cfg);
    if (status)
        return status;
    size_t reused = 0, todo = 0, failed = 0, ran = 0;
    for (size_t i = 0; i < b->n; i++) {
        reused += b->cells[i].state == CELL_REUSED;
        todo += !b->cells[i].skip && b->cells[i].state == CELL_PENDING;
    }
    announce(b, cfg, todo, reused);
    sigprocmask(SIG_BLOCK, &b->rc.stop, NULL);
    int stopped = run_cells(&b->rc, b->cells, b->n, todo);
    for (size_t i = 0; i < b->n; i++) {
        failed += !b->cells[i].skip && b->cells[i].state == CELL_FAILED;
        ran += b->cells[i].state == CELL_DONE;
    }
    status = (cfg->nshards ? 0 : es_bench_write_outputs(b)) | (failed ? 1 : 0);
    fprintf(stderr, "entrysim: bench: %zu ran, %zu reused, %zu failed%s; %s/%s\n", ran, reused,
            failed, b->missing ? " (workloads missing)" : "", b->odir,
            cfg->nshards ? "cells/" : "results.csv");
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

int es_bench_prepare(bench *b, const es_bench_cfg *cfg)
{
    memset(b, 0, sizeof *b);
    char err[512];
    if (es_matrix_load(cfg->matrix, &b->m, err, sizeof err))
        return es_bench_fail("%s", err);
    b->n = es_matrix_cells(&b->m, &b->cells);
    for (size_t i = 0; i < b->n; i++)
        b->nskip += b->cells[i].skip != NULL;
    long jobs = cfg->jobs > 0 ? cfg->jobs : sysconf(_SC_NPROCESSORS_ONLN);
    int status = bench_paths(b, cfg);
    b->rc = (run_cfg){b->odir, b->exe, b->wdir, jobs < 1 ? 1 : (int)jobs, cfg->timeout,
                      cfg->verbose, {{0}}, {{0}}, cfg->nshards > 0, cfg->runner != NULL,
                      cfg->progress, cfg->progress_ctx};
    sigprocmask(SIG_BLOCK, NULL, &b->rc.child_mask);
    sigemptyset(&b->rc.stop);
    sigaddset(&b->rc.stop, SIGINT);
    sigaddset(&b->rc.stop, SIGTERM);
    sigaddset(&b->rc.stop, SIGHUP);
    return status ? status : key_cells(b);
}

int es_bench_run(const es_bench_cfg *cfg)
{
    if (cfg->status)
        return es_bench_status(cfg->status);
    if (cfg->merge)
        return es_bench_merge(cfg->merge);
    if (cfg->slurm)
        return es_bench_slurm(cfg);
    bench *b = malloc(sizeof *b);
    if (!b)
        return es_bench_fail("out of memory");
    int status = es_bench_prepare(b, cfg);
    if (!status && cfg->list)
        list_cells(b);
    else if (!status)
        status = run_and_write(b, cfg);
    es_bench_release(b);
    free(b);
    return status;
}
