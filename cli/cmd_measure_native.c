/* cmd_measure_native.c - `entrysim measure-native --file BLOCKS`: the real
 * throughput of basic blocks on this x86-64 host (es_native_measure,
 * native/measure.c; bench/README-native.md). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_measure_native.h"
#include "help.h"
#include "measure.h"
#include "opts.h"

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            fprintf(f, "\\u%04x", (unsigned char)*s);
        else
            fputc(*s, f);
    }
    fputc('"', f);
}

/* Measures every block of the file `in` and prints one line (or JSON
 * object) per block. */
static void measure_file(FILE *in, const es_native_opts *o, bool json)
{
    char *line = NULL;
    size_t cap = 0;
    bool first = true;
    if (json)
        fputs("[\n", stdout);
    static uint8_t code[ES_NATIVE_MAX_BLOCK];
    while (getline(&line, &cap, in) >= 0) {
        line[strcspn(line, "\t\r\n")] = 0;
        char *s = line;
        while (*s == ' ')
            s++;
        if (!*s || *s == '#')
            continue;
        size_t len = 0;
        es_native_result r;
        memset(&r, 0, sizeof r);
        if (es_native_parse_hex(s, code, sizeof code, &len, r.error, sizeof r.error))
            r.status = 1;
        else
            es_native_measure(code, len, o, &r);
        if (json) {
            fputs(first ? "  {\"hex\": " : ",\n  {\"hex\": ", stdout);
            json_str(stdout, s);
            if (r.status) {
                fputs(", \"error\": ", stdout);
                json_str(stdout, r.error);
                fputs("}", stdout);
            } else {
                printf(", \"cycles\": %.4f, \"cycles_each\": [%.4f, %.4f], "
                       "\"ticks_per_cycle\": %.4f, \"noisy\": %s}",
                       r.cycles, r.cycles_each[0], r.cycles_each[1], r.ticks_per_cycle,
                       r.noisy ? "true" : "false");
            }
            first = false;
        } else if (r.status) {
            printf("%s\terror: %s\n", s, r.error);
        } else {
            printf("%s\t%.3f%s\n", s, r.cycles, r.noisy ? "\tnoisy" : "");
        }
        fflush(stdout);
    }
    if (json)
        fputs(first ? "]\n" : "\n]\n", stdout);
    free(line);
}

enum { N_JSON, N_HELP, N_FILE, N_REPS, N_TRIES, N_NOISY, N_TIMEOUT };

static const es_opt native_opts[] = {
    {"--file", "FILE", N_FILE,
     "one hex-encoded block per line (a tab and anything after it is ignored, so the data "
     ".tsv files can be given as they are; '-' is stdin)"},
    {"--reps", "N", N_REPS, "runs per loop length, the fastest kept (default 25)"},
    {"--tries", "N", N_TRIES, "measurements per block until two agree, 2..16 (default 4)"},
    {"--noisy-pct", "P", N_NOISY,
     "a block is 'noisy' when no two measurements agree within P% (default 2)"},
    {"--timeout", "S", N_TIMEOUT, "a block running longer is an error (default 10)"},
    {"--json", NULL, N_JSON, "a JSON array of one object per block instead of text"},
    ES_OPT_HELP_ROWS(N_HELP),
};

const es_cmd es_cmd_measure_native = {
    .name = "measure-native",
    .synopsis = "measure-native --file FILE [OPTIONS]   (x86-64 host)",
    .about = "The real throughput of basic blocks on this x86-64 host: prints\n"
             "hex<TAB>cycles (core cycles per iteration) per block, with a third column\n"
             "'noisy' (see --noisy-pct), or hex<TAB>error: REASON.\n"
             "Method and limits: bench/README-native.md.\n",
    .opts = native_opts,
    .nopts = sizeof native_opts / sizeof native_opts[0],
    .run = es_native_cmd,
};

/* One option with a value: 0, or the exit status of a usage error. */
static int native_value(const es_opts *p, int id, es_native_opts *o)
{
    int v;
    switch (id) {
    case N_REPS:
        if (!es_opt_int(p->val, 1, 100000, &v))
            return es_opts_fail(p, "--reps needs a number 1..100000");
        o->reps = (unsigned)v;
        return 0;
    case N_TRIES:
        if (!es_opt_int(p->val, 2, 16, &v))
            return es_opts_fail(p, "--tries needs a number 2..16");
        o->tries = (unsigned)v;
        return 0;
    case N_NOISY:
        if (!es_opt_double(p->val, 0, false, 1e300, &o->noisy_pct))
            return es_opts_fail(p, "--noisy-pct needs a percentage");
        return 0;
    case N_TIMEOUT:
        if (!es_opt_double(p->val, 0, true, 1e300, &o->timeout_s))
            return es_opts_fail(p, "--timeout needs a positive number of seconds");
        return 0;
    }
    return 0;
}

int es_native_cmd(int argc, char **argv)
{
    es_native_opts o;
    es_native_default_opts(&o);
    const char *file = NULL;
    bool json = false;
    es_opts p = es_opts_for(&es_cmd_measure_native, argc, argv);
    p.mixed = p.no_dashdash = true;
    for (int id, rc; (id = es_opts_next(&p)) != ES_OPT_DONE;) {
        if (id == N_HELP) {
            es_cmd_help(stdout, &es_cmd_measure_native);
            return ES_EX_OK;
        }
        if (id < 0)
            return es_opts_fail(&p, "measure-native: bad option '%s'", p.arg);
        if (id == N_JSON)
            json = true;
        else if (id == N_FILE)
            file = p.val;
        else if ((rc = native_value(&p, id, &o)))
            return rc;
    }
    if (!file)
        return es_opts_fail(&p, "%s", "measure-native needs --file");
    if (!es_native_supported()) {
        fprintf(stderr, "entrysim: measure-native needs an x86-64 host\n");
        return ES_EX_ERROR;
    }
    FILE *in = strcmp(file, "-") ? fopen(file, "r") : stdin;
    if (!in) {
        fprintf(stderr, "entrysim: %s: %s\n", file, strerror(errno));
        return ES_EX_ERROR;
    }
    measure_file(in, &o, json);
    if (in != stdin)
        fclose(in);
    return ES_EX_OK;
}
