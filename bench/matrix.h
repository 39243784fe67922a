/* matrix.h - `entrysim bench --matrix FILE` (issue 4): batch runs over a
 * matrix of configurations, in parallel, resumable, to CSV, JSON and SVG. */
#ifndef ENTRYSIM_BENCH_MATRIX_H
#define ENTRYSIM_BENCH_MATRIX_H

#ifdef __cplusplus
extern "C" {
#endif

#include <stdbool.h>
#include <stddef.h>

/* Where a run of cells is (es_bench_cfg.progress). */
typedef struct es_bench_progress {
    size_t done, todo; /* cells finished (ok or failed) of those to run */
    size_t failed;
    int running;
} es_bench_progress;

/* What `entrysim bench` was asked to do (cli/cmd_bench.c parses it). */
typedef struct es_bench_cfg {
    const char *matrix;    /* the matrix file (required) */
    const char *out;       /* output directory (NULL: bench-results/NAME) */
    const char *runner;    /* run this instead of self (NULL: self) */
    const char *workloads; /* the built workloads (NULL: bench/ next to self) */
    const char *self;      /* the path of the running entrysim (cells run it) */
    long jobs;             /* cells at once (0: the online CPUs) */
    double timeout;        /* seconds per cell */
    bool list, verbose;
    /* --shard I/N: run only shard I (1..N) of the runnable cells (the ones
     * whose ordinal j has j % N == I - 1), each result a file of its own in
     * OUT/cells/ (bench_cells.c); 0 when not sharded */
    int shard, nshards;
    /* --status DIR / --merge DIR: the job folder of a sharded run */
    const char *status, *merge;
    /* --slurm (bench_slurm.c) */
    bool slurm, dry_run;
    const char *partition, *account, *time_limit;
    int cpus_per_task; /* 0: 1 */
    int shards;        /* 0: one per runnable cell, at most 1000 */
    const char *sbatch_args[32];
    int nsbatch_args;
    /* called while cells run (every few ms, and when one ends) so that the
     * front end can show where the run is (cli/cmd_bench.c: on a
     * terminal only); with NULL just before bench writes a line of its
     * own to stderr and after the last cell, to take its display away.
     * The library prints no progress itself.  NULL: none. */
    void (*progress)(void *ctx, const es_bench_progress *p);
    void *progress_ctx;
} es_bench_cfg;

/* Runs (or with list, lists) the matrix's cells; progress and errors on
 * stderr, --list on stdout.  Returns the exit status: 0 all cells ok, 1 a
 * cell failed, 2 bad matrix or paths, 128+N stopped by signal N.  SIGINT,
 * SIGTERM and SIGHUP are blocked while it runs; after a stop (128+N) they
 * stay blocked, so that the caller can exit with that status. */
int es_bench_run(const es_bench_cfg *cfg);

#ifdef __cplusplus
}
#endif
#endif
