/* cmd_explain.c - `entrysim explain NAME`: the disassembly of a syscall's
 * stub chain and its dispatchers (es_explain, analysis/exposure.c). */
#include <stdio.h>
#include <string.h>

#include "cmd_explain.h"
#include "decoder.h"
#include "exposure.h"
#include "kernel_opts.h"
#include "opts.h"

enum { E_KERNEL, E_SYNTAX };

static const es_opt explain_opts[] = {
    {"--convention", true, E_KERNEL}, {"--patches", true, E_KERNEL}, {"--syntax", true, E_SYNTAX}};

/* the values of --syntax, in ES_SYNTAX_* order */
static const char *const syntaxes[] = {"intel", "att", NULL};

static int bad_argument(const es_opts *p)
{
    char conv[64];
    return es_opts_fail(p,
                        "explain: unexpected argument '%s' (usage: entrysim explain NAME "
                        "[--convention %s] [--patches LIST] [--syntax intel|att])",
                        p->arg, es_conventions_list(conv, sizeof conv));
}

int es_explain_cmd(int argc, char **argv)
{
    es_kernel_opts k = es_kernel_opts_default();
    int syntax = ES_SYNTAX_ATT;
    const char *name = NULL;
    es_opts p = {.argc = argc, .argv = argv, .table = explain_opts,
                 .n = sizeof explain_opts / sizeof explain_opts[0], .mixed = true,
                 .no_dashdash = true, .prefix = "entrysim: "};
    char err[300];
    for (int id; (id = es_opts_next(&p)) != ES_OPT_DONE;) {
        if (id == E_KERNEL && es_kernel_opt(&k, p.name, p.val, err, sizeof err) < 0)
            return es_opts_fail(&p, "%s", err);
        if (id == E_SYNTAX && (syntax = es_opt_pick(p.val, syntaxes)) < 0)
            return es_opts_fail(&p, "--syntax must be intel or att, not '%s'", p.val);
        if (id == ES_OPT_ARG && !name && p.arg[0] != '-')
            name = p.arg;
        else if (id < 0)
            return bad_argument(&p);
    }
    if (es_kernel_opts_check(&k, err, sizeof err))
        return es_opts_fail(&p, "%s", err);
    if (!name)
        return es_opts_fail(&p, "%s", "explain: which syscall? (entrysim explain NAME)");
    int rc = es_explain(stdout, k.patches, name, syntax);
    return rc == -2 ? ES_EX_USAGE : rc ? ES_EX_ERROR : ES_EX_OK;
}
