/* cmd_bench.c - `entrysim bench --matrix FILE`: batch runs over a matrix of
 * configurations (es_bench_run, bench/bench_run.c; bench/README.md). */
#include <stdio.h>
#include <string.h>

#include "cmd_bench.h"
#include "help.h"
#include "matrix.h"
#include "opts.h"
#include "progress.h"

enum { B_HELP, B_LIST, B_VERBOSE, B_MATRIX, B_OUT, B_RUNNER, B_WORKLOADS, B_JOBS, B_TIMEOUT,
       B_SHARD, B_STATUS, B_MERGE, B_SLURM, B_DRY_RUN, B_PARTITION, B_ACCOUNT, B_TIME, B_CPUS,
       B_SHARDS, B_SBATCH_ARG };

static const es_opt bench_opts[] = {
    {"--matrix", "FILE", B_MATRIX, "the matrix of configurations (bench/README.md; required)"},
    {"--out", "DIR", B_OUT, "output directory (default bench-results/NAME)"},
    {"-j", "N", B_JOBS, "cells run at once (default: the online CPUs)"},
    {"--timeout", "S", B_TIMEOUT, "a cell running longer is killed and failed (default 600)"},
    {"--runner", "PROG", B_RUNNER,
     "run PROG instead of this entrysim, with the same arguments (starting with `run`); it "
     "must write the --timing-json file"},
    {"--workloads", "DIR", B_WORKLOADS,
     "where the built workloads are (default: bench/ next to this entrysim, i.e. "
     "BUILD/bench)"},
    {"--list", NULL, B_LIST, "print the cells (and why any are skipped) and run nothing"},
    {"--verbose", NULL, B_VERBOSE, "a line per finished cell"},
    {"-v", NULL, B_VERBOSE, NULL},
    {"--shard", "I/N", B_SHARD,
     "run only shard I (1..N) of the cells, each result a file of its own in DIR/cells/ "
     "(safe on a shared filesystem)"},
    {"--status", "DIR", B_STATUS, "cells done / failed / left in DIR, from its files alone"},
    {"--merge", "DIR", B_MERGE, "results.csv, results.json, chart.svg from DIR's cell files"},
    {"--slurm", NULL, B_SLURM,
     "submit an sbatch job array, one task per shard, and a merge job after it (--out DIR "
     "required, on a shared filesystem)"},
    {"--shards", "N", B_SHARDS, "with --slurm: tasks (default: one per cell, at most 1000)"},
    {"--partition", "P", B_PARTITION, "with --slurm: the partition"},
    {"--account", "A", B_ACCOUNT, "with --slurm: the account"},
    {"--time", "T", B_TIME, "with --slurm: the time limit of a task"},
    {"--cpus-per-task", "C", B_CPUS, "with --slurm: CPUs of a task (its -j)"},
    {"--sbatch-arg", "X", B_SBATCH_ARG, "with --slurm: one more sbatch argument (repeatable)"},
    {"--dry-run", NULL, B_DRY_RUN, "with --slurm: print the sbatch commands and scripts, submit "
                                  "nothing"},
    ES_OPT_HELP_ROWS(B_HELP),
};

const es_cmd es_cmd_bench = {
    .name = "bench",
    .synopsis = "bench --matrix FILE [OPTIONS] | --status DIR | --merge DIR",
    .about = "Runs every cell of the matrix (bench/README.md) as `entrysim run\n"
             "--deterministic --timing-json ...`, in parallel, skipping cells whose results\n"
             "are already in DIR/store.tsv, and writes DIR/results.csv, results.json and\n"
             "chart.svg; or a shard of them, or a Slurm job array of shards.\n",
    .opts = bench_opts,
    .nopts = sizeof bench_opts / sizeof bench_opts[0],
    .footer = "Exit status: 0 all cells ok, 1 a cell failed (the others are kept), 2 bad\n"
              "usage or matrix, 128+N stopped by signal N (finished cells are kept).\n",
    .run = es_bench_cmd,
};

/* --shard I/N */
static int shard_option(const es_opts *p, es_bench_cfg *c)
{
    char *slash = strchr(p->val, '/');
    char num[32];
    int n = slash ? (int)(slash - p->val) : 0;
    snprintf(num, sizeof num, "%.*s", n < 31 ? n : 31, p->val);
    if (!slash || !es_opt_int(num, 1, 1000000, &c->shard) ||
        !es_opt_int(slash + 1, 1, 1000000, &c->nshards) || c->shard > c->nshards)
        return es_opts_fail(p, "--shard wants I/N with 1 <= I <= N, not %s", p->val);
    return 0;
}

/* The options of --slurm: 0, or the exit status of a usage error. */
static int slurm_option(const es_opts *p, int id, es_bench_cfg *c)
{
    switch (id) {
    case B_SLURM:
        c->slurm = true;
        return 0;
    case B_DRY_RUN:
        c->dry_run = true;
        return 0;
    case B_PARTITION:
        c->partition = p->val;
        return 0;
    case B_ACCOUNT:
        c->account = p->val;
        return 0;
    case B_TIME:
        c->time_limit = p->val;
        return 0;
    case B_CPUS:
        if (!es_opt_int(p->val, 1, 4096, &c->cpus_per_task))
            return es_opts_fail(p, "--cpus-per-task wants 1..4096, not %s", p->val);
        return 0;
    case B_SHARDS:
        if (!es_opt_int(p->val, 1, 1000000, &c->shards))
            return es_opts_fail(p, "--shards wants 1..1000000, not %s", p->val);
        return 0;
    case B_SBATCH_ARG:
        if (c->nsbatch_args == (int)(sizeof c->sbatch_args / sizeof c->sbatch_args[0]))
            return es_opts_fail(p, "too many --sbatch-arg");
        c->sbatch_args[c->nsbatch_args++] = p->val;
        return 0;
    }
    return es_opts_fail(p, "unknown option %s", p->arg);
}

/* One option: 0, or the exit status of a usage error. */
static int bench_option(const es_opts *p, int id, es_bench_cfg *c)
{
    int jobs;
    switch (id) {
    case B_LIST:
        c->list = true;
        return 0;
    case B_VERBOSE:
        c->verbose = true;
        return 0;
    case B_MATRIX:
        c->matrix = p->val;
        return 0;
    case B_OUT:
        c->out = p->val;
        return 0;
    case B_RUNNER:
        c->runner = p->val;
        return 0;
    case B_WORKLOADS:
        c->workloads = p->val;
        return 0;
    case B_JOBS:
        if (!es_opt_int(p->val, 1, 256, &jobs))
            return es_opts_fail(p, "-j wants 1..256, not %s", p->val);
        c->jobs = jobs;
        return 0;
    case B_TIMEOUT:
        if (!es_opt_double(p->val, 0, true, 1e300, &c->timeout))
            return es_opts_fail(p, "--timeout wants seconds > 0, not %s", p->val);
        return 0;
    case B_SHARD:
        return shard_option(p, c);
    case B_STATUS:
        c->status = p->val;
        return 0;
    case B_MERGE:
        c->merge = p->val;
        return 0;
    case ES_OPT_NOVALUE:
        return es_opts_fail(p, "missing value after %s", p->name);
    }
    return slurm_option(p, id, c);
}

/* The status line while cells run (a terminal only, progress.h): cells
 * done of those to run, running, failed, elapsed time and an ETA from the
 * rate so far. */
typedef struct bench_progress {
    es_progress p;
    size_t last_done;
} bench_progress;

static void show_progress(void *ctx, const es_bench_progress *b)
{
    bench_progress *bp = ctx;
    if (!b) {
        es_progress_clear(&bp->p);
        return;
    }
    if (b->done == bp->last_done && !es_progress_due(&bp->p))
        return;
    bp->last_done = b->done;
    double secs = es_progress_elapsed(&bp->p);
    char line[256], t[32], eta[32] = "?";
    int k = snprintf(line, sizeof line, "entrysim: bench: %zu/%zu cells done, %d running",
                     b->done, b->todo, b->running);
    if (b->failed && k < (int)sizeof line)
        k += snprintf(line + k, sizeof line - (size_t)k, ", %zu failed", b->failed);
    if (b->done)
        es_progress_hms(secs / (double)b->done * (double)(b->todo - b->done), eta, sizeof eta);
    if (k < (int)sizeof line)
        snprintf(line + k, sizeof line - (size_t)k, ", %s elapsed, ETA %s",
                 es_progress_hms(secs, t, sizeof t), eta);
    es_progress_show(&bp->p, line);
}

int es_bench_cmd(int argc, char **argv)
{
    es_bench_cfg c = {.self = "/proc/self/exe", .timeout = 600};
    es_opts p = es_opts_for(&es_cmd_bench, argc, argv);
    p.mixed = p.no_dashdash = true;
    p.prefix = "entrysim: bench: ";
    for (int id, rc; (id = es_opts_next(&p)) != ES_OPT_DONE;) {
        if (id == B_HELP) {
            es_cmd_help(stdout, &es_cmd_bench);
            return ES_EX_OK;
        }
        if ((rc = bench_option(&p, id, &c)))
            return rc;
    }
    if (c.status && c.merge)
        return es_opts_fail(&p, "--status and --merge go alone");
    if (!c.matrix && !c.status && !c.merge)
        return es_opts_fail(&p, "--matrix FILE is required");
    if (c.slurm && (c.nshards || c.list))
        return es_opts_fail(&p, "--slurm goes without --shard and --list");
    if (c.slurm && !c.out)
        return es_opts_fail(&p, "--slurm needs --out DIR (a folder the cluster's nodes share)");
    bench_progress bp = {.last_done = (size_t)-1};
    es_progress_init(&bp.p, stderr);
    if (bp.p.on) {
        c.progress = show_progress;
        c.progress_ctx = &bp;
    }
    return es_bench_run(&c);
}
