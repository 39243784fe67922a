/* kbuild.c - see kbuild.h. */
#include "kbuild.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define NPATCH 16    /* images kernel-p00..p15 (ES_PATCH_* bitmask) */
#define MAX_FLAGS 128
#define MAX_SRC 64
#define MAX_ARGS (MAX_FLAGS + MAX_SRC + 16)

enum { KB_OK = 0, KB_HOST = 1, KB_TREE = 2 };

typedef struct ksrc {
    char *path;    /* as kernel.build names it (gen/NAME: generated) */
    unsigned mask; /* the patch bits it depends on */
    char *obj[NPATCH]; /* object per value of (patch set & mask), once built */
} ksrc;

/* One program to start: argv, and what to call it when it fails. */
typedef struct job {
    char *argv[MAX_ARGS];
    int argc;
    const char *what;
} job;

typedef struct kb {
    const es_kbuild_cfg *c;
    char dir[PATH_MAX], tmp[PATH_MAX + 32];
    const char *cc;
    int jobs;
    char *cflags[MAX_FLAGS], *ldflags[MAX_FLAGS];
    int ncflags, nldflags;
    ksrc src[MAX_SRC];
    int nsrc;
    char **owned; /* every string allocated here, freed at the end */
    size_t nowned, capowned;
} kb;

/* ---- strings ---- */

static char *own(kb *b, char *s)
{
    if (!s)
        return NULL;
    if (b->nowned == b->capowned) {
        size_t cap = b->capowned ? 2 * b->capowned : 256;
        char **o = realloc(b->owned, cap * sizeof *o);
        if (!o) {
            free(s);
            return NULL;
        }
        b->owned = o;
        b->capowned = cap;
    }
    return b->owned[b->nowned++] = s;
}

static char *fmt(kb *b, const char *f, ...) __attribute__((format(printf, 2, 3)));
static char *fmt(kb *b, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    char *s = NULL;
    if (vasprintf(&s, f, ap) < 0)
        s = NULL;
    va_end(ap);
    return own(b, s);
}

static void job_add(job *j, char *arg)
{
    if (j->argc < MAX_ARGS - 1)
        j->argv[j->argc++] = arg;
    j->argv[j->argc] = NULL;
}

/* ---- kernel.build ---- */

static int desc_error(const char *path, int ln, const char *msg, const char *arg)
{
    fprintf(stderr, "%s:%d: error: %s%s%s\n", path, ln, msg, arg ? " " : "", arg ? arg : "");
    return KB_TREE;
}

/* A `src FILE MASK` line's words after the key. */
static int desc_src(kb *b, const char *path, int ln, char *file, char *mask)
{
    char *end;
    unsigned long v = mask ? strtoul(mask, &end, 0) : 0;
    if (!file || !mask || *end || v >= NPATCH || strtok(NULL, " \t\r\n"))
        return desc_error(path, ln, "expected 'src FILE MASK' (MASK 0..15)", NULL);
    if (file[0] == '/' || strstr(file, ".."))
        return desc_error(path, ln, "a source must be a path inside the tree, not", file);
    if (b->nsrc == MAX_SRC)
        return desc_error(path, ln, "too many sources", NULL);
    char *p = fmt(b, "%s/%s", b->dir, file);
    if (strncmp(file, "gen/", 4) != 0 && p && access(p, R_OK) != 0)
        return desc_error(path, ln, "no such source file", p);
    b->src[b->nsrc++] = (ksrc){.path = fmt(b, "%s", file), .mask = (unsigned)v};
    return KB_OK;
}

static int desc_line(kb *b, const char *path, int ln, char *line)
{
    char *hash = strchr(line, '#');
    if (hash)
        *hash = 0;
    char *key = strtok(line, " \t\r\n");
    if (!key)
        return KB_OK;
    if (!strcmp(key, "src")) {
        char *file = strtok(NULL, " \t\r\n");
        return desc_src(b, path, ln, file, strtok(NULL, " \t\r\n"));
    }
    bool cf = !strcmp(key, "cflags");
    if (!cf && strcmp(key, "ldflags") != 0)
        return desc_error(path, ln, "unknown key (cflags, ldflags or src):", key);
    for (char *w; (w = strtok(NULL, " \t\r\n"));) {
        int *n = cf ? &b->ncflags : &b->nldflags;
        if (*n == MAX_FLAGS)
            return desc_error(path, ln, "too many flags", NULL);
        (cf ? b->cflags : b->ldflags)[(*n)++] = fmt(b, "%s", w);
    }
    return KB_OK;
}

static int read_desc(kb *b)
{
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/kernel.build", b->dir);
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "%s: %s (is %s a tree made by 'entrysim kernel init'?)\n", path,
                strerror(errno), b->dir);
        return KB_TREE;
    }
    char *line = NULL;
    size_t cap = 0;
    int rc = KB_OK, ln = 0;
    while (rc == KB_OK && getline(&line, &cap, f) >= 0)
        rc = desc_line(b, path, ++ln, line);
    free(line);
    fclose(f);
    if (rc == KB_OK && b->nsrc == 0)
        return desc_error(path, ln, "no 'src' lines", NULL);
    return rc;
}

/* ---- running programs ---- */

/* Starts the jobs, up to b->jobs at a time; after the first failure none
 * is started, the running ones are waited for.  KB_OK, KB_TREE (a job
 * failed: its stderr said why) or KB_HOST (could not start one). */
static int run_jobs(kb *b, job *jobs, int n)
{
    pid_t *pids = calloc((size_t)n + 1, sizeof *pids);
    if (!pids)
        return KB_HOST;
    int next = 0, running = 0, rc = KB_OK, failed = -1;
    while ((next < n && rc == KB_OK) || running) {
        while (running < b->jobs && next < n && rc == KB_OK) {
            int e = posix_spawnp(&pids[next], jobs[next].argv[0], NULL, NULL, jobs[next].argv,
                                 environ);
            if (e) {
                fprintf(stderr, "entrysim: kernel build: cannot run %s: %s\n",
                        jobs[next].argv[0], strerror(e));
                rc = KB_HOST;
                break;
            }
            next++;
            running++;
        }
        int st;
        pid_t p = running ? waitpid(-1, &st, 0) : -1;
        if (p < 0)
            break;
        running--;
        bool ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
        for (int i = 0; i < next && !ok && rc == KB_OK; i++)
            if (pids[i] == p) {
                failed = i;
                rc = KB_TREE;
            }
    }
    if (failed >= 0 && jobs[failed].what) /* (gen_stubs.py says what itself) */
        fprintf(stderr, "entrysim: kernel build: %s failed\n", jobs[failed].what);
    free(pids);
    return rc;
}

/* ---- the steps ---- */

/* The rows the simulator's host services perform (a forwarded row must be
 * one of them: the host dispatches by number), for gen_stubs.py. */
static int write_host_rows(kb *b, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return KB_HOST;
#define ES_SYSROW_64(nr, abi, name, nargs, fn)                                               \
    if ((nargs) >= 0)                                                                        \
        fprintf(f, "64 %d %s\n", nr, #name);
#define ES_SYSROW_32(nr, name, nargs, fn)                                                    \
    if ((nargs) >= 0)                                                                        \
        fprintf(f, "32 %d %s\n", nr, #name);
#include "es_host_services.h"
#undef ES_SYSROW_64
#undef ES_SYSROW_32
    return fclose(f) ? KB_HOST : KB_OK;
}

static int gen_stubs(kb *b)
{
    char *rows = fmt(b, "%s/host_rows", b->tmp);
    if (!rows || write_host_rows(b, rows))
        return KB_HOST;
    job j = {.what = NULL};
    const char *py = b->c->python ? b->c->python : "python3";
    char *args[] = {fmt(b, "%s", py), "-B", fmt(b, "%s/gen_stubs.py", b->dir), b->dir,
                    fmt(b, "%s/gen", b->tmp), "--student", fmt(b, "%s/student.c", b->dir),
                    "--host-rows", rows};
    for (size_t i = 0; i < sizeof args / sizeof args[0]; i++)
        job_add(&j, args[i]);
    return run_jobs(b, &j, 1);
}

/* The compile job of source s for the patch bits `bits`. */
static void compile_job(kb *b, ksrc *s, unsigned bits, job *j)
{
    const char *base = strrchr(s->path, '/') ? strrchr(s->path, '/') + 1 : s->path;
    char *src = strncmp(s->path, "gen/", 4) == 0 ? fmt(b, "%s/gen/%s", b->tmp, s->path + 4)
                                                 : fmt(b, "%s/%s", b->dir, s->path);
    s->obj[bits] = fmt(b, "%s/obj/%s-m%u.o", b->tmp, base, bits);
    j->what = fmt(b, "compiling %s (patch bits %u)", src, bits);
    job_add(j, (char *)b->cc);
    for (int i = 0; i < b->ncflags; i++)
        job_add(j, b->cflags[i]);
    job_add(j, fmt(b, "-I%s/include", b->dir));
    job_add(j, fmt(b, "-I%s/gen", b->tmp));
    job_add(j, fmt(b, "-DES_PATCHES=%u", bits));
    job_add(j, "-c");
    job_add(j, src);
    job_add(j, "-o");
    job_add(j, s->obj[bits]);
}

static int compile_all(kb *b, int *nobj)
{
    job *jobs = calloc(MAX_SRC * NPATCH, sizeof *jobs);
    if (!jobs)
        return KB_HOST;
    int n = 0;
    for (unsigned p = 0; p < NPATCH; p++) /* patch set 0 first: errors show once */
        for (int i = 0; i < b->nsrc; i++) {
            unsigned bits = p & b->src[i].mask;
            if (!b->src[i].obj[bits])
                compile_job(b, &b->src[i], bits, &jobs[n++]);
        }
    int rc = run_jobs(b, jobs, n);
    free(jobs);
    *nobj = n;
    return rc;
}

static int link_all(kb *b)
{
    job *jobs = calloc(NPATCH, sizeof *jobs);
    if (!jobs)
        return KB_HOST;
    for (unsigned p = 0; p < NPATCH; p++) {
        job *j = &jobs[p];
        j->what = fmt(b, "linking kernel-p%02u.elf", p);
        job_add(j, (char *)b->cc);
        for (int i = 0; i < b->nldflags; i++)
            job_add(j, b->ldflags[i]);
        job_add(j, fmt(b, "-Wl,-T,%s/kernel.lds", b->dir));
        job_add(j, "-o");
        job_add(j, fmt(b, "%s/kernel-p%02u.elf", b->tmp, p));
        for (int i = 0; i < b->nsrc; i++)
            job_add(j, b->src[i].obj[p & b->src[i].mask]);
    }
    int rc = run_jobs(b, jobs, NPATCH);
    free(jobs);
    return rc;
}

/* DIR/build := the temporary directory, in two renames; the old build is
 * removed only once the new one is in place. */
static int commit(kb *b)
{
    char final[PATH_MAX + 8], old[PATH_MAX + 32];
    snprintf(final, sizeof final, "%s/build", b->dir);
    snprintf(old, sizeof old, "%s/.build-old.%d", b->dir, (int)getpid());
    bool had = rename(final, old) == 0;
    if (!had && errno != ENOENT) {
        fprintf(stderr, "entrysim: kernel build: %s: %s\n", final, strerror(errno));
        return KB_HOST;
    }
    if (rename(b->tmp, final) != 0) {
        fprintf(stderr, "entrysim: kernel build: %s: %s\n", final, strerror(errno));
        if (had)
            rename(old, final);
        return KB_HOST;
    }
    if (had)
        es_rm_tree(old);
    return KB_OK;
}

int es_rm_tree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return -1;
    if (!S_ISDIR(st.st_mode))
        return unlink(path);
    DIR *d = opendir(path);
    if (!d)
        return -1;
    for (struct dirent *e; (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char sub[PATH_MAX];
        if ((size_t)snprintf(sub, sizeof sub, "%s/%s", path, e->d_name) < sizeof sub)
            es_rm_tree(sub);
    }
    closedir(d);
    return rmdir(path);
}

static int make_tmp(kb *b)
{
    snprintf(b->tmp, sizeof b->tmp, "%s/.build-tmp.%d", b->dir, (int)getpid());
    es_rm_tree(b->tmp); /* a leftover of a killed build with our pid */
    char sub[sizeof b->tmp + 8];
    int rc = mkdir(b->tmp, 0755);
    snprintf(sub, sizeof sub, "%s/gen", b->tmp);
    rc = rc ? rc : mkdir(sub, 0755);
    snprintf(sub, sizeof sub, "%s/obj", b->tmp);
    rc = rc ? rc : mkdir(sub, 0755);
    if (rc)
        fprintf(stderr, "entrysim: kernel build: cannot create %s: %s\n", b->tmp,
                strerror(errno));
    return rc ? KB_HOST : KB_OK;
}

static int build(kb *b, int *nobj)
{
    int rc = read_desc(b);
    if (rc == KB_OK)
        rc = make_tmp(b);
    if (rc != KB_OK)
        return rc;
    rc = gen_stubs(b);
    if (rc == KB_OK)
        rc = compile_all(b, nobj);
    if (rc == KB_OK)
        rc = link_all(b);
    if (rc == KB_OK)
        rc = commit(b);
    if (rc != KB_OK)
        es_rm_tree(b->tmp);
    return rc;
}

int es_kbuild(const es_kbuild_cfg *c)
{
    kb *b = calloc(1, sizeof *b);
    if (!b)
        return KB_HOST;
    b->c = c;
    size_t n = strlen(c->dir);
    while (n > 1 && c->dir[n - 1] == '/')
        n--;
    snprintf(b->dir, sizeof b->dir, "%.*s", (int)n, c->dir);
    b->cc = c->cc ? c->cc : "gcc";
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    b->jobs = c->jobs > 0 ? c->jobs : cpus > 0 ? (int)(cpus < 16 ? cpus : 16) : 1;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int nobj = 0, rc = build(b, &nobj);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
    if (rc == KB_OK && c->log)
        fprintf(c->log, "entrysim: kernel build: %s/build: %d images from %d objects in %.1f s\n",
                b->dir, NPATCH, nobj, secs);
    else if (rc != KB_OK)
        fprintf(stderr, "entrysim: kernel build: %s not built (%s/build unchanged)\n", b->dir,
                b->dir);
    for (size_t i = 0; i < b->nowned; i++)
        free(b->owned[i]);
    free(b->owned);
    free(b);
    return rc;
}
