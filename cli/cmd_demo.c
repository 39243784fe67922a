/* cmd_demo.c - `entrysim demo` (and `entrysim` alone): the bundled program
 * under v4.16 and v4.17, with the exposure comparison (analysis/demo.c). */
#include <stdio.h>

#include "cmd_demo.h"
#include "demo.h"
#include "kernel_opts.h"
#include "opts.h"

int es_demo_cmd(int argc, char **argv)
{
    (void)argv;
    if (argc > 0) {
        es_opts p = {.prefix = "entrysim: ", .trailer = "Try 'entrysim --help'.\n"};
        return es_opts_fail(&p, "%s", "demo takes no arguments");
    }
    return es_demo_compare(stdout, es_kernel_opts_default().vendor);
}
