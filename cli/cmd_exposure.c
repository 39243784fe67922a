/* cmd_exposure.c - `entrysim exposure --syscall NAME|--all ...`: which user
 * values sit in which registers when the guest kernel's C code runs
 * (es_exposure_report, analysis/exposure.c; docs/EXPOSURE.md). */
#include <stdio.h>
#include <string.h>

#include "cmd_exposure.h"
#include "exposure.h"
#include "help.h"
#include "kernel.h"
#include "kernel_opts.h"
#include "opts.h"
#include "timing.h"

enum { X_KERNEL, X_HELP, X_UARCH, X_SYSCALL, X_ENTRY, X_ALL, X_JSON, X_TIMING };

/* --uarch comes before the kernel rows so that it is exposure's own (it
 * also takes `none`): the first row of a name wins. */
static const es_opt exposure_opts[] = {
    {"--syscall", "NAME", X_SYSCALL, "the system call to trace, by name (read, openat, ...)"},
    {"--all", NULL, X_ALL,
     "every row of the entry's table, then a summary line counting the exposed registers "
     "per kernel (on stderr with --json)"},
    {"--entry", "{entries}", X_ENTRY,
     "how the program enters the kernel (default syscall64); syscall32 needs --cpu amd, "
     "sysenter32 --cpu intel, and without --cpu the vendor is the one the entry needs"},
    {"--json", NULL, X_JSON, "one JSON object per (kernel, entry, syscall) instead of text"},
    {"--timing", NULL, X_TIMING,
     "also each case's cycles by phase of the kernel entry, from the cycle model (--uarch)"},
    {"--uarch", "NAME|none", X_UARCH,
     "the cycle model's microarchitecture: {uarchs} (default {uarch}); none counts "
     "instructions instead of cycles; implies --timing"},
    ES_KERNEL_OPT_ROWS(X_KERNEL),
    ES_KOPT_KERNEL(X_KERNEL),
    ES_OPT_HELP_ROWS(X_HELP),
};

const es_cmd es_cmd_exposure = {
    .name = "exposure",
    .synopsis = "exposure --syscall NAME|--all [OPTIONS]",
    .about = "Which user values sit in which registers when the guest kernel's C code for a\n"
             "system call starts running (dispatcher, table target, body), and which of them\n"
             "the function's declaration does not allow there ('!': exposed).  Without\n"
             "--convention or --patches both v4.16 and v4.17 run (docs/EXPOSURE.md).\n",
    .opts = exposure_opts,
    .nopts = sizeof exposure_opts / sizeof exposure_opts[0],
    .run = es_exposure_cmd,
};

static int bad_argument(const es_opts *p, int id)
{
    if (id == ES_OPT_NOVALUE)
        return es_opts_fail(p, "exposure: %s needs a value", p->name);
    if (id == ES_OPT_EXTRA)
        return es_opts_fail(p, "exposure: %s takes no value", p->name);
    return es_opts_fail(p, "exposure: unknown argument '%s'", p->arg);
}

static int set_entry(const es_opts *p, es_exposure_cfg *c)
{
    c->entry = es_entry_parse(p->val);
    if (c->entry >= 0)
        return 0;
    const char *names[ES_ENTRY_COUNT + 1] = {NULL};
    for (int e = 0; e < ES_ENTRY_COUNT; e++)
        names[e] = es_entry_name(e);
    char list[160];
    return es_opts_fail(p, "--entry must be %s, not '%s'",
                        es_opt_join(names, ", ", " or ", list, sizeof list), p->val);
}

static int set_uarch(const es_opts *p, es_exposure_cfg *c)
{
    c->opts.timing = true;
    if (!strcmp(p->val, "none")) { /* none: count instructions */
        c->opts.uarch = NULL;
        return 0;
    }
    char err[400];
    if (es_uarch_pick(p->val, &c->opts.uarch, err, sizeof err) == 0)
        return 0;
    return es_opts_fail(p, "%s (or none)", err);
}

/* One option: 0, or the exit status of a usage error. */
static int exposure_option(es_opts *p, int id, es_exposure_cfg *c, es_kernel_opts *k)
{
    char err[300];
    switch (id) {
    case X_KERNEL:
        return es_kernel_opt(k, p->name, p->val, err, sizeof err) < 0
                   ? es_opts_fail(p, "%s", err)
                   : 0;
    case X_UARCH:
        return set_uarch(p, c);
    case X_SYSCALL:
        c->name = p->val;
        return 0;
    case X_ENTRY:
        return set_entry(p, c);
    case X_ALL:
        c->all = true;
        return 0;
    case X_JSON:
        c->json = true;
        return 0;
    case X_TIMING:
        c->opts.timing = true;
        return 0;
    }
    return bad_argument(p, id);
}

int es_exposure_cmd(int argc, char **argv)
{
    es_exposure_cfg c = {.convs = {ES_CONV_V416, ES_CONV_V417}, .nconv = 2,
                         .entry = ES_ENTRY_SYSCALL64, .vendor = -1,
                         .opts = {.timing = false, .uarch = es_kernel_opts_default().uarch}};
    es_kernel_opts k = es_kernel_opts_default();
    es_opts p = es_opts_for(&es_cmd_exposure, argc, argv);
    p.mixed = p.no_dashdash = true;
    char err[300];
    for (int id, rc; (id = es_opts_next(&p)) != ES_OPT_DONE;) {
        if (id == X_HELP) {
            es_cmd_help(stdout, &es_cmd_exposure);
            return ES_EX_OK;
        }
        if ((rc = exposure_option(&p, id, &c, &k)))
            return rc;
    }
    if (es_kernel_opts_check(&k, err, sizeof err))
        return es_opts_fail(&p, "%s", err);
    if (k.convention || k.patch_list) {
        c.convs[0] = k.patches;
        c.nconv = 1;
    }
    if (k.cpu)
        c.vendor = k.vendor;
    c.opts.mitigations = k.mitigations;
    if (!c.name && !c.all)
        return es_opts_fail(&p, "%s", "exposure: give --syscall NAME or --all");
    if (c.vendor == 0 && c.entry == ES_ENTRY_SYSCALL32)
        return es_opts_fail(&p, "%s", "exposure: syscall32 needs --cpu amd (Intel CPUs raise #UD "
                                      "for SYSCALL in compatibility mode)");
    if (c.vendor == 1 && c.entry == ES_ENTRY_SYSENTER32)
        return es_opts_fail(&p, "%s", "exposure: sysenter32 needs --cpu intel (AMD CPUs raise #UD "
                                      "for SYSENTER in long mode)");
    es_kernel_opts_note(&k, stderr);
    es_ktab *kt = NULL;
    if (k.kernel_dir) { /* the tree's own rows: names, numbers, arities */
        if (!(kt = es_ktab_load(k.kernel_dir, err, sizeof err))) {
            fprintf(stderr, "entrysim: exposure: %s\n", err);
            return ES_EX_ERROR;
        }
        c.opts.kernel_dir = k.kernel_dir;
        c.opts.ktab = kt;
    }
    int rc = es_exposure_report(&c, stdout, stderr);
    es_ktab_free(kt);
    return rc;
}
