/* cmd_bench.c - `entrysim bench --matrix FILE`: batch runs over a matrix of
 * configurations (es_bench_run, bench/bench_run.c; bench/README.md). */
#include <stdio.h>

#include "cmd_bench.h"
#include "matrix.h"
#include "opts.h"

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

enum { B_HELP, B_LIST, B_VERBOSE, B_MATRIX, B_OUT, B_RUNNER, B_WORKLOADS, B_JOBS, B_TIMEOUT };

static const es_opt bench_opts[] = {
    {"--help", false, B_HELP},       {"-h", false, B_HELP},
    {"--list", false, B_LIST},       {"--verbose", false, B_VERBOSE},
    {"-v", false, B_VERBOSE},        {"--matrix", true, B_MATRIX},
    {"--out", true, B_OUT},          {"--runner", true, B_RUNNER},
    {"--workloads", true, B_WORKLOADS}, {"-j", true, B_JOBS},
    {"--timeout", true, B_TIMEOUT},
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
    es_opts p = {.argc = argc, .argv = argv, .table = bench_opts,
                 .n = sizeof bench_opts / sizeof bench_opts[0], .mixed = true,
                 .no_dashdash = true, .prefix = "entrysim: bench: ", .trailer = bench_usage};
    for (int id, rc; (id = es_opts_next(&p)) != ES_OPT_DONE;) {
        if (id == B_HELP) {
            fputs(bench_usage, stdout);
            return ES_EX_OK;
        }
        if ((rc = bench_option(&p, id, &c)))
            return rc;
    }
    if (!c.matrix)
        return es_opts_fail(&p, "--matrix FILE is required");
    return es_bench_run(&c);
}
