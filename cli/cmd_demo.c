/* cmd_demo.c - `entrysim demo` (and `entrysim` alone): the bundled program
 * under v4.16 and v4.17, with the exposure comparison (analysis/demo.c). */
#include <stdio.h>

#include "cmd_demo.h"
#include "demo.h"
#include "help.h"
#include "kernel_opts.h"
#include "opts.h"

enum { M_HELP };

static const es_opt demo_opts[] = {
    ES_OPT_HELP_ROWS(M_HELP),
};

const es_cmd es_cmd_demo = {
    .name = "demo",
    .synopsis = "[demo]",
    .about = "Runs a small built-in program under v4.16 and v4.17 and shows which user values\n"
             "reach the kernel's C code under each (docs/EXPOSURE.md).  It takes no\n"
             "arguments.\n",
    .opts = demo_opts,
    .nopts = sizeof demo_opts / sizeof demo_opts[0],
    .run = es_demo_cmd,
};

int es_demo_cmd(int argc, char **argv)
{
    es_opts p = es_opts_for(&es_cmd_demo, argc, argv);
    p.mixed = p.no_dashdash = true;
    int id = es_opts_next(&p);
    if (id == M_HELP && argc == 1) {
        es_cmd_help(stdout, &es_cmd_demo);
        return ES_EX_OK;
    }
    if (id != ES_OPT_DONE)
        return es_opts_fail(&p, "%s", "demo takes no arguments");
    return es_demo_compare(stdout, es_kernel_opts_default().vendor);
}
