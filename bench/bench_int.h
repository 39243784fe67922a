/* bench_int.h - what the files of `entrysim bench` share among themselves:
 * bench_run.c (the matrix's cells run locally, or one shard of them),
 * bench_cells.c (the results store, per-cell result files, the job file,
 * --status and --merge) and bench_slurm.c (--slurm).  bench/README.md. */
#ifndef ENTRYSIM_BENCH_BENCH_INT_H
#define ENTRYSIM_BENCH_BENCH_INT_H

#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "bench.h"
#include "matrix.h"

#ifndef ES_BENCH_VERSION
#define ES_BENCH_VERSION "unknown"
#endif

typedef struct run_cfg {
    const char *out;       /* output directory */
    const char *exe;       /* what runs a cell: self, or --runner */
    const char *workloads; /* directory of the built workloads */
    int jobs;
    double timeout;
    bool verbose;
    sigset_t child_mask; /* the mask before es_bench_run blocked the stop signals */
    sigset_t stop;       /* SIGINT, SIGTERM, SIGHUP */
    bool cell_files;     /* --shard: results as OUT/cells/KEY.tsv, not store.tsv */
    bool host_env;       /* --runner: it gets bench's environment as it is */
    void (*progress)(void *ctx, const es_bench_progress *p); /* es_bench_cfg's */
    void *progress_ctx;
} run_cfg;

/* What a run works on: the matrix, its cells, and the paths. */
typedef struct bench {
    es_matrix m;
    es_cell *cells;
    size_t n, nskip, missing;
    char exe[PATH_MAX], wdir[PATH_MAX], odir[PATH_MAX];
    run_cfg rc;
} bench;

/* bench_run.c */
/* Loads the matrix, expands and keys its cells, resolves the paths; 0 or
 * the exit status 2 (with the reason on stderr).  b is zeroed first. */
int es_bench_prepare(bench *b, const es_bench_cfg *cfg);
void es_bench_release(bench *b);
/* results.csv, results.json, chart.svg; 0 or 1 when one cannot be written. */
int es_bench_write_outputs(const bench *b);
/* Prints "entrysim: bench: " and the message (control characters escaped);
 * returns 2. */
int es_bench_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* snprintf into a path buffer: 0, or -1 when it does not fit. */
int es_bench_pathf(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int es_bench_mkdirs(const char *path);
/* posix_spawn of argv (argv[0] a path) with stdin /dev/null and stdout,
 * stderr to the files out, err; mask: the child's signal mask (NULL: ours).
 * 0 or an errno value. */
int es_bench_spawn(pid_t *pid, char *const *argv, char *const *envp, const char *out,
                   const char *err, const sigset_t *mask);

/* bench_cells.c */
/* store.tsv: cells found there become CELL_REUSED; -1 when unreadable. */
int es_store_load(const char *path, es_cell *cells, size_t n);
int es_store_append(const char *path, const es_cell *c);
/* Per-cell files OUT/cells/KEY.tsv (a finished cell: CELL_REUSED) and, with
 * failed_too, KEY.failed (CELL_FAILED with the note). */
void es_cells_load(const char *odir, es_cell *cells, size_t n, bool failed_too);
/* Writes a finished (KEY.tsv) or failed (KEY.failed) cell's file by a
 * temporary file and rename(2), so that a reader, or a task killed half
 * way, never sees part of one.  0 or -1 with errno. */
int es_cell_file_write(const char *odir, const es_cell *c);
/* Writes a whole file by a temporary one and rename(2) (replace) or
 * link(2) (kept if it exists); 0 or -1 with errno. */
int es_write_atomic(const char *path, const char *text, size_t len, bool replace);
/* OUT/job/bench.job: what --status and --merge need to key the cells
 * (matrix, entrysim, runner, workloads).  replace: always (--slurm);
 * otherwise only when there is none yet (each --shard task).  0 or -1. */
int es_job_write(const bench *b, const char *matrix, const char *entrysim, bool runner,
                 bool replace);
/* bench_job.c: --status DIR and --merge DIR: exit status. */
int es_bench_status(const char *dir);
int es_bench_merge(const char *dir);

/* bench_slurm.c: --slurm; exit status */
int es_bench_slurm(const es_bench_cfg *cfg);

#endif
