/* cmd_explain.c - `entrysim explain NAME`: the disassembly of a syscall's
 * stub chain and its dispatchers (es_explain, analysis/exposure.c). */
#include <stdio.h>
#include <string.h>

#include "cmd_explain.h"
#include "decoder.h"
#include "exposure.h"
#include "help.h"
#include "kernel_opts.h"
#include "opts.h"

enum { E_KERNEL, E_SYNTAX, E_HELP };

static const es_opt explain_opts[] = {
    ES_KOPT_CONVENTION(E_KERNEL),
    ES_KOPT_PATCHES(E_KERNEL),
    ES_KOPT_KERNEL(E_KERNEL),
    {"--syntax", "{syntax}", E_SYNTAX, "the disassembly's syntax (default att)"},
    ES_OPT_HELP_ROWS(E_HELP),
};

const es_cmd es_cmd_explain = {
    .name = "explain",
    .synopsis = "explain NAME [OPTIONS]",
    .about = "Disassembles system call NAME's stubs in the guest kernel image (v4.17 unless\n"
             "--convention or --patches says otherwise) and the dispatchers that call them\n"
             "through a table (docs/EXPOSURE.md).\n",
    .opts = explain_opts,
    .nopts = sizeof explain_opts / sizeof explain_opts[0],
    .run = es_explain_cmd,
};

static int bad_argument(const es_opts *p, int id)
{
    if (id == ES_OPT_NOVALUE)
        return es_opts_fail(p, "explain: %s needs a value", p->name);
    return es_opts_fail(p, "explain: unexpected argument '%s'", p->arg);
}

int es_explain_cmd(int argc, char **argv)
{
    es_kernel_opts k = es_kernel_opts_default();
    int syntax = ES_SYNTAX_ATT;
    const char *name = NULL;
    es_opts p = es_opts_for(&es_cmd_explain, argc, argv);
    p.mixed = p.no_dashdash = true;
    char err[300];
    for (int id; (id = es_opts_next(&p)) != ES_OPT_DONE;) {
        if (id == E_HELP) {
            es_cmd_help(stdout, &es_cmd_explain);
            return ES_EX_OK;
        }
        if (id == E_KERNEL && es_kernel_opt(&k, p.name, p.val, err, sizeof err) < 0)
            return es_opts_fail(&p, "%s", err);
        if (id == E_SYNTAX && (syntax = es_syntax_pick(p.val)) < 0)
            return es_opts_fail(&p, "--syntax must be %s, not '%s'",
                                es_syntaxes_list(", ", " or ", err, sizeof err), p.val);
        if (id == ES_OPT_ARG && !name && p.arg[0] != '-')
            name = p.arg;
        else if (id < 0)
            return bad_argument(&p, id);
    }
    if (es_kernel_opts_check(&k, err, sizeof err))
        return es_opts_fail(&p, "%s", err);
    if (!name)
        return es_opts_fail(&p, "%s", "explain: which syscall? (entrysim explain NAME)");
    es_kernel_opts_note(&k, stderr);
    int rc = es_explain_dir(stdout, k.kernel_dir, k.patches, name, syntax);
    return rc == -2 ? ES_EX_USAGE : rc ? ES_EX_ERROR : ES_EX_OK;
}
