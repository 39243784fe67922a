/* cmd_bench.c - `entrysim bench --matrix FILE`: batch runs over a matrix of
 * configurations (es_bench_run, bench/bench_run.c; bench/README.md). */
#include <stdio.h>

#include "cmd_bench.h"
#include "help.h"
#include "matrix.h"
#include "opts.h"

enum { B_HELP, B_LIST, B_VERBOSE, B_MATRIX, B_OUT, B_RUNNER, B_WORKLOADS, B_JOBS, B_TIMEOUT };

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
    ES_OPT_HELP_ROWS(B_HELP),
};

const es_cmd es_cmd_bench = {
    .name = "bench",
    .synopsis = "bench --matrix FILE [OPTIONS]",
    .about = "Runs every cell of the matrix (bench/README.md) as `entrysim run\n"
             "--deterministic --timing-json ...`, in parallel, skipping cells whose results\n"
             "are already in DIR/store.tsv, and writes DIR/results.csv, results.json and\n"
             "chart.svg.\n",
    .opts = bench_opts,
    .nopts = sizeof bench_opts / sizeof bench_opts[0],
    .footer = "Exit status: 0 all cells ok, 1 a cell failed (the others are kept), 2 bad\n"
              "usage or matrix, 128+N stopped by signal N (finished cells are kept).\n",
    .run = es_bench_cmd,
};

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
    case ES_OPT_NOVALUE:
        return es_opts_fail(p, "missing value after %s", p->name);
    }
    return es_opts_fail(p, "unknown option %s", p->arg);
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
    if (!c.matrix)
        return es_opts_fail(&p, "--matrix FILE is required");
    return es_bench_run(&c);
}
