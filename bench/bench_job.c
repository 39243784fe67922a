/* bench_job.c - a sharded run's folder, read from the files alone:
 * OUT/job/bench.job says which matrix, entrysim, runner and workloads the
 * shards ran, so that `entrysim bench --status OUT` and `--merge OUT` key
 * the cells exactly as the shards did and find their files in OUT/cells/.
 * No scheduler is asked: what is done is what has a file.  README.md. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_int.h"

#define JOB_HEAD "# entrysim bench job v1: written by --shard and --slurm, read by --status, --merge\n"

int es_job_write(const bench *b, const char *matrix, const char *entrysim, bool runner,
                 bool replace)
{
    char text[5 * PATH_MAX + 256], path[PATH_MAX + 32];
    char wd[PATH_MAX], cwd[PATH_MAX];
    const char *wdir = b->wdir; /* made absolute: --status may run in another folder */
    if (wdir[0] != '/' && getcwd(cwd, sizeof cwd) &&
        !es_bench_pathf(wd, sizeof wd, "%s/%s", cwd, wdir))
        wdir = wd;
    const char *vals[] = {matrix, entrysim, runner ? b->exe : "", wdir};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++)
        if (strchr(vals[i], '\n'))
            return errno = EINVAL, -1; /* one value a line */
    int n = snprintf(text, sizeof text, JOB_HEAD "matrix=%s\nentrysim=%s\n%s%s%sworkloads=%s\n",
                     matrix, entrysim, runner ? "runner=" : "", runner ? b->exe : "",
                     runner ? "\n" : "", wdir);
    if (n < 0 || (size_t)n >= sizeof text ||
        es_bench_pathf(path, sizeof path, "%s/job/bench.job", b->odir))
        return errno = ENAMETOOLONG, -1;
    return es_write_atomic(path, text, (size_t)n, replace);
}

/* The values of DIR/job/bench.job. */
typedef struct job {
    char matrix[PATH_MAX], entrysim[PATH_MAX], runner[PATH_MAX], workloads[PATH_MAX];
} job;

/* Reads DIR/job/bench.job into j; 0 or the exit status 2. */
static int job_read(const char *dir, job *j)
{
    char path[PATH_MAX + 32], err[PATH_MAX + 64];
    size_t len;
    if (es_bench_pathf(path, sizeof path, "%s/job/bench.job", dir))
        return es_bench_fail("%s: path too long", dir);
    char *text = es_bench_read_file(path, &len, err, sizeof err);
    if (!text)
        return es_bench_fail("%s (not the --out folder of a --shard or --slurm run?)", err);
    struct {
        const char *key;
        char *val;
    } keys[] = {{"matrix=", j->matrix}, {"entrysim=", j->entrysim}, {"runner=", j->runner},
                {"workloads=", j->workloads}};
    for (char *line = text, *nl; (nl = strchr(line, '\n')); line = nl + 1) {
        *nl = 0;
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
            if (!strncmp(line, keys[k].key, strlen(keys[k].key)))
                snprintf(keys[k].val, PATH_MAX, "%s", line + strlen(keys[k].key));
    }
    free(text);
    if (!*j->matrix || !*j->entrysim || !*j->workloads)
        return es_bench_fail("%s: incomplete (matrix, entrysim and workloads are needed)", path);
    return 0;
}

/* The matrix of the job in dir, keyed as its shards keyed it, with the
 * state of every cell from the files in dir (store.tsv, cells/); 0 or 2. */
static int job_load(const char *dir, bench *b, job *j)
{
    int st = job_read(dir, j);
    if (st)
        return st;
    es_bench_cfg cfg = {.matrix = j->matrix, .self = j->entrysim,
                        .runner = *j->runner ? j->runner : NULL, .workloads = j->workloads,
                        .out = dir, .timeout = 600};
    if ((st = es_bench_prepare(b, &cfg)))
        return st;
    char path[PATH_MAX + 32];
    (void)es_bench_pathf(path, sizeof path, "%s/store.tsv", dir);
    if (es_store_load(path, b->cells, b->n))
        return 2;
    es_cells_load(dir, b->cells, b->n, true);
    return 0;
}

typedef struct tally {
    size_t done, failed, left;
} tally;

static tally count_cells(const bench *b)
{
    tally t = {0, 0, 0};
    for (size_t i = 0; i < b->n; i++) {
        const es_cell *c = &b->cells[i];
        if (c->skip)
            continue;
        if (c->state == CELL_REUSED || c->state == CELL_DONE)
            t.done++;
        else if (c->state == CELL_FAILED)
            t.failed++;
        else
            t.left++;
    }
    return t;
}

/* --status: the counts, and each failed cell with why, on stdout. */
static int print_status(bench *b)
{
    tally t = count_cells(b);
    printf("%s: %zu cells: %zu done, %zu failed, %zu left", b->m.name, b->n - b->nskip, t.done,
           t.failed, t.left);
    if (b->nskip)
        printf(" (%zu impossible combinations skipped)", b->nskip);
    putchar('\n');
    for (size_t i = 0; i < b->n; i++) {
        const es_cell *c = &b->cells[i];
        if (c->skip || c->state != CELL_FAILED)
            continue;
        printf("failed %s", c->key);
        for (int a = 0; a < AX_COUNT; a++)
            printf(" %s", c->v[a]);
        printf(": %s\n", c->note);
    }
    return t.failed || t.left ? 1 : 0;
}

/* --merge: the outputs, the cells without a result failed as not run. */
static int merge_outputs(bench *b)
{
    tally t = count_cells(b);
    for (size_t i = 0; i < b->n; i++)
        if (!b->cells[i].skip && b->cells[i].state == CELL_PENDING) {
            b->cells[i].state = CELL_FAILED;
            snprintf(b->cells[i].note, sizeof b->cells[i].note, "not run (no result yet)");
        }
    int st = es_bench_write_outputs(b) | (t.failed || t.left ? 1 : 0);
    fprintf(stderr, "entrysim: bench: %s: %zu cells merged: %zu ok, %zu failed, %zu not run; "
                    "%s/results.csv\n",
            b->m.name, b->n - b->nskip, t.done, t.failed, t.left, b->odir);
    return st;
}

/* Loads the job in dir and hands it to fn; the exit status. */
static int with_job(const char *dir, int (*fn)(bench *b))
{
    bench *b = calloc(1, sizeof *b);
    job *j = calloc(1, sizeof *j);
    int st = !b || !j ? es_bench_fail("out of memory") : job_load(dir, b, j);
    if (!st)
        st = fn(b);
    if (b)
        es_bench_release(b);
    free(b);
    free(j);
    return st;
}

int es_bench_status(const char *dir)
{
    return with_job(dir, print_status);
}

int es_bench_merge(const char *dir)
{
    return with_job(dir, merge_outputs);
}
