/* bench_slurm.c - `entrysim bench --matrix F --slurm --out DIR`: the matrix
 * as one Slurm job array, a task per shard (`entrysim bench --shard
 * $SLURM_ARRAY_TASK_ID/N`, each cell's result a file of its own in
 * DIR/cells/), submitted with `sbatch --parsable` (posix_spawn, no shell),
 * and a merge job (`entrysim bench --merge DIR`) that waits for the array
 * with --dependency=afterany.  Only shards with cells left are submitted,
 * so a resubmission after a cancel, a failure or a timeout finishes just
 * what is left; --requeue lets Slurm rerun a preempted task, which skips
 * its cells already done.  DIR must be on a filesystem the nodes share,
 * and the entrysim (and runner, workloads) paths must exist on them.
 * bench/README.md, "On a Slurm cluster". */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_int.h"

extern char **environ;

/* What the scripts are made of. */
typedef struct slurm_job {
    const es_bench_cfg *cfg;
    bench *b;
    char dir[PATH_MAX];       /* the output folder, absolute */
    char self[PATH_MAX];      /* this entrysim, which the tasks run */
    char matrix[PATH_MAX + 64]; /* the matrix's copy in DIR/job/ */
    char sbatch[PATH_MAX];    /* sbatch found on PATH */
    int nshards, cpus;
    char *array;              /* shards with cells left, as sbatch --array wants them */
    size_t ntasks, nleft;
} slurm_job;

/* The first `name` on PATH that is an executable file. */
static bool find_on_path(const char *name, char *out, size_t n)
{
    const char *path = getenv("PATH");
    for (const char *p = path ? path : ""; *p;) {
        size_t len = strcspn(p, ":");
        struct stat st;
        if (len && !es_bench_pathf(out, n, "%.*s/%s", (int)len, p, name) && !stat(out, &st) &&
            S_ISREG(st.st_mode) && !access(out, X_OK))
            return true;
        p += len + (p[len] == ':');
    }
    return false;
}

/* path made absolute without resolving links (the folder may not exist). */
static int abs_path(const char *path, char *out, size_t n)
{
    char cwd[PATH_MAX];
    if (path[0] == '/')
        return es_bench_pathf(out, n, "%s", path);
    if (!getcwd(cwd, sizeof cwd))
        return -1;
    return es_bench_pathf(out, n, "%s/%s", cwd, path);
}

/* s as one word of sh: in single quotes, a quote as '\'' */
static void sh_quote(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s; s++)
        fputs(*s == '\'' ? "'\\''" : (char[]){*s, 0}, f);
    fputc('\'', f);
}

/* Which shards still have a cell to run (none done, by files), as a
 * list for --array ("1,3,5-7"); counts them. */
static int shards_left(slurm_job *j)
{
    bench *b = j->b;
    char *left = calloc((size_t)j->nshards + 1, 1);
    size_t k = 0, cap = (size_t)j->nshards * 16 + 16, len = 0;
    j->array = malloc(cap);
    if (!left || !j->array) {
        free(left);
        return es_bench_fail("out of memory");
    }
    for (size_t i = 0; i < b->n; i++) {
        if (b->cells[i].skip)
            continue;
        if (b->cells[i].state == CELL_PENDING || b->cells[i].state == CELL_FAILED)
            left[k % (size_t)j->nshards + 1] = 1, j->nleft++;
        k++;
    }
    j->array[0] = 0;
    for (int s = 1; s <= j->nshards; s++) {
        if (!left[s])
            continue;
        int e = s;
        while (e < j->nshards && left[e + 1])
            e++;
        len += (size_t)snprintf(j->array + len, cap - len, e > s ? "%s%d-%d" : "%s%d",
                                len ? "," : "", s, e);
        j->ntasks += (size_t)(e - s + 1);
        s = e;
    }
    free(left);
    return 0;
}

/* The #SBATCH lines the two jobs share. */
static void sbatch_lines(FILE *f, const slurm_job *j, const char *what)
{
    fprintf(f, "#SBATCH --job-name=entrysim-%s-", what);
    for (const char *p = j->b->m.name; *p; p++)
        fputc(strchr("/ \t\n'\"", *p) ? '_' : *p, f);
    fputc('\n', f);
    if (j->cfg->partition)
        fprintf(f, "#SBATCH --partition=%s\n", j->cfg->partition);
    if (j->cfg->account)
        fprintf(f, "#SBATCH --account=%s\n", j->cfg->account);
    if (j->cfg->time_limit)
        fprintf(f, "#SBATCH --time=%s\n", j->cfg->time_limit);
}

/* DIR/job/array.sh (merge false) or merge.sh; malloc'd text. */
static char *script(const slurm_job *j, bool merge)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return NULL;
    fprintf(f, "#!/bin/sh\n# written by `entrysim bench --slurm` for the matrix %s\n",
            j->b->m.name);
    if (merge) {
        fputs("# results.csv, results.json and chart.svg from the cells' files\n", f);
        sbatch_lines(f, j, "merge");
        fputs("exec ", f);
        sh_quote(f, j->self);
        fputs(" bench --merge ", f);
        sh_quote(f, j->dir);
        fputc('\n', f);
        return fclose(f) ? (free(text), NULL) : text;
    }
    fprintf(f, "# one array task per shard (1..%d); a cell already done (a file in\n"
               "# cells/) is skipped, so a rerun or a requeue does only what is left\n",
            j->nshards);
    sbatch_lines(f, j, "bench");
    fprintf(f, "#SBATCH --cpus-per-task=%d\n#SBATCH --requeue\nexec ", j->cpus);
    sh_quote(f, j->self);
    fputs(" bench --matrix ", f);
    sh_quote(f, j->matrix);
    fprintf(f, " --shard \"$SLURM_ARRAY_TASK_ID/%d\" --out ", j->nshards);
    sh_quote(f, j->dir);
    fputs(" --workloads ", f);
    sh_quote(f, j->b->wdir);
    if (j->cfg->runner) {
        fputs(" --runner ", f);
        sh_quote(f, j->b->exe);
    }
    fprintf(f, " --timeout %.17g -j %d%s\n", j->cfg->timeout, j->cpus,
            j->cfg->verbose ? " --verbose" : "");
    return fclose(f) ? (free(text), NULL) : text;
}

/* sbatch's argv for the array, or the merge job (after job dep, if any). */
static void sbatch_argv(const slurm_job *j, bool merge, const char *dep, char **v,
                        char bufs[4][PATH_MAX + 64])
{
    int n = 0;
    v[n++] = (char *)"sbatch";
    v[n++] = (char *)"--parsable";
    (void)es_bench_pathf(bufs[0], PATH_MAX + 64, "--chdir=%s", j->dir);
    v[n++] = bufs[0];
    (void)es_bench_pathf(bufs[1], PATH_MAX + 64, "--output=%s/job/slurm-%s.out", j->dir,
                         merge ? "merge-%j" : "%A_%a");
    v[n++] = bufs[1];
    if (merge && dep) {
        (void)es_bench_pathf(bufs[2], PATH_MAX + 64, "--dependency=afterany:%s", dep);
        v[n++] = bufs[2];
    } else if (!merge) {
        v[n++] = (char *)"--array";
        v[n++] = j->array;
    }
    for (int i = 0; i < j->cfg->nsbatch_args; i++)
        v[n++] = (char *)j->cfg->sbatch_args[i];
    (void)es_bench_pathf(bufs[3], PATH_MAX + 64, "%s/job/%s.sh", j->dir, merge ? "merge" : "array");
    v[n++] = bufs[3];
    v[n] = NULL;
}

/* The line of sbatch's stderr that says why (its last "error:" line, else
 * its last line) into buf. */
static void why_rejected(const char *errpath, char *buf, size_t n)
{
    size_t len;
    char err[64];
    char *t = es_bench_read_file(errpath, &len, err, sizeof err);
    snprintf(buf, n, "no message");
    for (char *line = t, *nl; line && *line; line = nl ? nl + 1 : line + strlen(line)) {
        nl = strchr(line, '\n');
        if (nl)
            *nl = 0;
        if (*line && (strstr(line, "error:") || !strstr(buf, "error:")))
            snprintf(buf, n, "%s", line);
    }
    free(t);
}

/* Runs sbatch (argv v) with its output in DIR/job/sbatch.{out,err}; the
 * job id it printed into id, or the exit status 2 with sbatch's reason. */
static int sbatch_run(const slurm_job *j, bool merge, const char *dep, char *id, size_t n)
{
    char out[PATH_MAX + 32], err[PATH_MAX + 32], line[512], *v[48], bufs[4][PATH_MAX + 64];
    sbatch_argv(j, merge, dep, v, bufs);
    (void)es_bench_pathf(out, sizeof out, "%s/job/sbatch.out", j->dir);
    (void)es_bench_pathf(err, sizeof err, "%s/job/sbatch.err", j->dir);
    pid_t pid;
    v[0] = (char *)j->sbatch;
    int e = es_bench_spawn(&pid, v, environ, out, err, NULL), st = 0;
    if (e)
        return es_bench_fail("cannot run %s: %s", j->sbatch, strerror(e));
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (!WIFEXITED(st) || WEXITSTATUS(st)) {
        why_rejected(err, line, sizeof line);
        return es_bench_fail("sbatch rejected the %s job: %s", merge ? "merge" : "array",
                             line);
    }
    /* --parsable: "JOBID" or "JOBID;CLUSTER" */
    size_t len;
    char *t = es_bench_read_file(out, &len, line, sizeof line);
    size_t k = t ? strspn(t, "0123456789") : 0;
    if (!k || k >= n) {
        free(t);
        return es_bench_fail("sbatch printed no job id (see %s)", out);
    }
    snprintf(id, n, "%.*s", (int)k, t);
    free(t);
    return 0;
}

/* --dry-run: what would be submitted, on stdout. */
static void print_dry_run(const slurm_job *j, const char *array_sh, const char *merge_sh)
{
    char *v[48], bufs[4][PATH_MAX + 64];
    for (int merge = !j->ntasks; merge < 2; merge++) {
        sbatch_argv(j, merge, j->ntasks ? "ARRAY_JOB_ID" : NULL, v, bufs);
        fputs("$", stdout);
        for (int i = 0; v[i]; i++) {
            fputc(' ', stdout);
            sh_quote(stdout, v[i]);
        }
        printf("\n%s\n", merge ? merge_sh : array_sh);
    }
    printf("# %zu cells left in %zu of %d shards\n", j->nleft, j->ntasks, j->nshards);
}

/* The paths, the matrix keyed, and which shards have cells left; 0 or the
 * exit status 2.  bcfg is cfg with the output folder made absolute. */
static int slurm_setup(slurm_job *j, const es_bench_cfg *cfg, es_bench_cfg *bcfg)
{
    const char *vals[] = {cfg->partition, cfg->account, cfg->time_limit};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++)
        if (vals[i] && (!*vals[i] || vals[i][strcspn(vals[i], " \t\n\r'\"")]))
            return es_bench_fail("--partition, --account and --time want a word, not '%s'",
                                 vals[i]);
    if (!cfg->dry_run && !find_on_path("sbatch", j->sbatch, sizeof j->sbatch))
        return es_bench_fail("sbatch not found on PATH (run --slurm on a Slurm login node, "
                             "or run the shards yourself with --shard I/N)");
    if (abs_path(cfg->out, j->dir, sizeof j->dir) || strlen(j->dir) > PATH_MAX - 200)
        return es_bench_fail("%s: %s", cfg->out, "path too long");
    if (!realpath(cfg->self, j->self))
        return es_bench_fail("%s: %s", cfg->self, strerror(errno));
    *bcfg = *cfg;
    bcfg->out = j->dir;
    int st = es_bench_prepare(j->b, bcfg);
    if (st)
        return st;
    /* the tasks run in DIR (--chdir); the path is not resolved further, so
     * the cells get the workload paths a local run gives them */
    char wdir[PATH_MAX];
    if (!abs_path(j->b->wdir, wdir, sizeof wdir))
        (void)es_bench_pathf(j->b->wdir, sizeof j->b->wdir, "%s", wdir);
    size_t runnable = j->b->n - j->b->nskip;
    j->nshards = cfg->shards ? cfg->shards : runnable > 1000 ? 1000 : runnable ? (int)runnable : 1;
    j->cpus = cfg->cpus_per_task ? cfg->cpus_per_task : 1;
    const char *base = strrchr(cfg->matrix, '/');
    (void)es_bench_pathf(j->matrix, sizeof j->matrix, "%s/job/%s", j->dir,
                         base ? base + 1 : cfg->matrix);
    char store[PATH_MAX + 32];
    (void)es_bench_pathf(store, sizeof store, "%s/store.tsv", j->dir);
    if (es_store_load(store, j->b->cells, j->b->n))
        return 2;
    es_cells_load(j->dir, j->b->cells, j->b->n, false);
    return shards_left(j);
}

/* DIR/job/: the matrix's copy, bench.job, array.sh, merge.sh; 0 or 2. */
static int slurm_write(const slurm_job *j, const char *array_sh, const char *merge_sh)
{
    char path[PATH_MAX + 32], err[PATH_MAX + 64];
    size_t len;
    (void)es_bench_pathf(path, sizeof path, "%s/cells", j->dir);
    if (es_bench_mkdirs(path) ||
        (es_bench_pathf(path, sizeof path, "%s/job", j->dir), es_bench_mkdirs(path)))
        return es_bench_fail("cannot create %s: %s", path, strerror(errno));
    char *text = es_bench_read_file(j->cfg->matrix, &len, err, sizeof err);
    if (!text)
        return es_bench_fail("%s", err);
    int rc = es_write_atomic(j->matrix, text, len, true);
    free(text);
    if (rc || es_job_write(j->b, j->matrix, j->self, j->cfg->runner != NULL, true))
        return es_bench_fail("cannot write in %s: %s", path, strerror(errno));
    (void)es_bench_pathf(path, sizeof path, "%s/job/array.sh", j->dir);
    if (es_write_atomic(path, array_sh, strlen(array_sh), true))
        return es_bench_fail("cannot write %s: %s", path, strerror(errno));
    (void)es_bench_pathf(path, sizeof path, "%s/job/merge.sh", j->dir);
    if (es_write_atomic(path, merge_sh, strlen(merge_sh), true))
        return es_bench_fail("cannot write %s: %s", path, strerror(errno));
    return 0;
}

/* Submits the array (if any shard has cells left) and the merge job;
 * prints their ids.  0 or 2. */
static int slurm_submit(const slurm_job *j)
{
    char array_id[64] = "", merge_id[64];
    int st = j->ntasks ? sbatch_run(j, false, NULL, array_id, sizeof array_id) : 0;
    if (st)
        return st;
    if ((st = sbatch_run(j, true, j->ntasks ? array_id : NULL, merge_id, sizeof merge_id))) {
        if (j->ntasks)
            fprintf(stderr, "entrysim: bench: the array job %s was submitted; `scancel %s` "
                            "cancels it\n", array_id, array_id);
        return st;
    }
    if (j->ntasks)
        printf("array_job=%s\n", array_id);
    printf("merge_job=%s\n", merge_id);
    fprintf(stderr, "entrysim: bench: %s: %zu cells left in %zu of %d shards%s%s; merge job %s; "
                    "`entrysim bench --status %s`\n",
            j->b->m.name, j->nleft, j->ntasks, j->nshards, j->ntasks ? ": array job " : "",
            array_id, merge_id, j->dir);
    return 0;
}

int es_bench_slurm(const es_bench_cfg *cfg)
{
    slurm_job *j = calloc(1, sizeof *j);
    bench *b = calloc(1, sizeof *b);
    if (!j || !b) {
        free(j);
        free(b);
        return es_bench_fail("out of memory");
    }
    j->cfg = cfg;
    j->b = b;
    es_bench_cfg bcfg;
    char *array_sh = NULL, *merge_sh = NULL;
    int st = slurm_setup(j, cfg, &bcfg);
    if (!st && (!(array_sh = script(j, false)) || !(merge_sh = script(j, true))))
        st = es_bench_fail("out of memory");
    if (!st && cfg->dry_run)
        print_dry_run(j, array_sh, merge_sh);
    else if (!st && !(st = slurm_write(j, array_sh, merge_sh)))
        st = slurm_submit(j);
    free(array_sh);
    free(merge_sh);
    free(j->array);
    es_bench_release(b);
    free(b);
    free(j);
    return st;
}
