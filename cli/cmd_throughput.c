/* cmd_throughput.c - `entrysim throughput [--uarch U] [--stats] HEX... |
 * --file BLOCKS`: the cycle model's steady-state cycles per iteration of
 * basic blocks (es_timing_throughput_stats, timing/throughput.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_throughput.h"
#include "escape.h"
#include "help.h"
#include "machine.h"
#include "kernel_opts.h"
#include "measure.h"
#include "opts.h"
#include "timing.h"

/* s with its control characters made visible (malloc'd; NULL when out of
 * memory) */
static char *escaped(const char *s)
{
    size_t n = 4 * strlen(s) + 1;
    char *d = malloc(n);
    return d ? es_escape_ctl(d, n, s) : NULL;
}

static int one_block(const char *uarch, const char *hex, bool stats, FILE *out)
{
    uint8_t code[ES_NATIVE_MAX_BLOCK];
    size_t len;
    char err[256];
    double c;
    es_timing_stats s;
    if (es_native_parse_hex(hex, code, sizeof code, &len, err, sizeof err) ||
        es_timing_throughput_stats(uarch, code, len, ES_MODE_64, &c, stats ? &s : NULL, err,
                                   sizeof err)) {
        char *shown = escaped(hex);
        fprintf(out, "%s\terror: %s\n", shown ? shown : "?", err);
        free(shown);
        return 1;
    }
    fprintf(out, "%s\t%.3f", hex, c);
    if (stats) /* per iteration, in the order of TP_STATS_HEADER */
        fprintf(out, "\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f", s.insns / 1000.0,
                s.uops / 1000.0, s.mispredicts / 1000.0, s.l1d_misses / 1000.0,
                s.dtlb_misses / 1000.0, s.stlf / 1000.0, s.stlf_fail / 1000.0,
                s.memrename / 1000.0);
    fputc('\n', out);
    return 0;
}

#define TP_STATS_HEADER                                                                        \
    "# hex\tcycles\tinsns\tuops\tmispredicts\tl1d_misses\tdtlb_misses\tstlf\tstlf_fail\t"  \
    "memrename (per iteration)\n"

/* The blocks of a --file, one per line; 0, or the exit status 2 when it
 * cannot be opened.  *bad collects the blocks that failed. */
static int file_blocks(const char *uarch, const char *file, bool stats, int *bad)
{
    FILE *f = strcmp(file, "-") ? fopen(file, "r") : stdin;
    if (!f) {
        char *shown = escaped(file);
        fprintf(stderr, "entrysim: throughput: cannot open %s\n", shown ? shown : "the --file");
        free(shown);
        return 2;
    }
    /* lines of any length: a long one is one (refused) block, not pieces */
    char *line = NULL;
    size_t cap = 0;
    for (ssize_t got; (got = getline(&line, &cap, f)) >= 0;) {
        size_t n = (size_t)got;
        while (n && (line[n - 1] == '\n' || line[n - 1] == '\r' || line[n - 1] == ' ' ||
                     line[n - 1] == '\t'))
            line[--n] = 0;
        char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p || *p == '#')
            continue;
        /* a "hex<TAB>anything" line (e.g. the reference data) uses the hex */
        char *tab = strchr(p, '\t');
        if (tab)
            *tab = 0;
        *bad |= one_block(uarch, p, stats, stdout);
        fflush(stdout);
    }
    free(line);
    if (f != stdin)
        fclose(f);
    return 0;
}

enum { T_UARCH, T_FILE, T_STATS, T_HELP };

static const es_opt tp_opts[] = {
    ES_KOPT_UARCH(T_UARCH),
    {"--file", "BLOCKS", T_FILE,
     "the blocks, one hex-encoded block per line ('#' starts a comment line; a tab and "
     "what follows it are ignored; '-' is stdin)"},
    {"--stats", NULL, T_STATS,
     "a header line and, per iteration, instructions, uops, mispredicts, L1D and DTLB "
     "misses, store forwards, failed forwards and memory renames after the cycles"},
    ES_OPT_HELP_ROWS(T_HELP),
};

const es_cmd es_cmd_throughput = {
    .name = "throughput",
    .synopsis = "throughput [OPTIONS] HEX... | --file BLOCKS",
    .about = "The cycle model's steady-state cycles per iteration of each x86-64 basic block\n"
             "(hex-encoded machine code), printed as hex<TAB>cycles, or hex<TAB>error: REASON.\n",
    .opts = tp_opts,
    .nopts = sizeof tp_opts / sizeof tp_opts[0],
    .run = es_throughput_cmd,
};

int es_throughput_cmd(int argc, char **argv)
{
    const char *uarch = es_kernel_opts_default().uarch, *file = NULL;
    bool stats = false;
    const char **hex = calloc((size_t)argc + 1, sizeof *hex);
    int nhex = 0, rc = -1;
    es_opts p = es_opts_for(&es_cmd_throughput, argc, argv);
    p.mixed = p.no_dashdash = true;
    p.prefix = "entrysim: throughput: ";
    if (!hex)
        return ES_EX_ERROR;
    for (int id; rc < 0 && (id = es_opts_next(&p)) != ES_OPT_DONE;) {
        if (id == T_HELP)
            es_cmd_help(stdout, &es_cmd_throughput), rc = ES_EX_OK;
        else if (id == T_UARCH) {
            char e[400];
            if (es_uarch_pick(p.val, &uarch, e, sizeof e))
                rc = es_opts_fail(&p, "%s", e);
        }
        else if (id == T_FILE)
            file = p.val;
        else if (id == T_STATS)
            stats = true;
        else if (id == ES_OPT_ARG && p.arg[0] != '-')
            hex[nhex++] = p.arg;
        else if (id == ES_OPT_NOVALUE)
            rc = es_opts_fail(&p, "%s needs a value", p.name);
        else
            rc = es_opts_fail(&p, "unknown option %s", p.arg);
    }
    if (rc < 0 && !file && !nhex)
        rc = es_opts_fail(&p, "%s", "no blocks: give HEX... or --file BLOCKS");
    char err[256];
    es_timing *probe = rc < 0 ? es_timing_new(uarch, err, sizeof err) : NULL;
    if (rc < 0 && !probe)
        rc = es_opts_fail(&p, "%s", err);
    es_timing_free(probe);
    if (rc < 0) {
        int bad = 0;
        if (stats)
            fputs(TP_STATS_HEADER, stdout);
        for (int i = 0; i < nhex; i++)
            bad |= one_block(uarch, hex[i], stats, stdout);
        rc = file ? file_blocks(uarch, file, stats, &bad) : 0;
        if (!rc)
            rc = bad ? 1 : 0;
    }
    free(hex);
    return rc;
}
