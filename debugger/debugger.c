/* debugger.c - placeholder until the debugger lands (issue 5). */
#include <stdio.h>

#include "debugger.h"

int es_debug_cmd(int argc, char **argv)
{
    (void)argc; (void)argv;
    fprintf(stderr, "entrysim: debug: the debugger is not built yet\n");
    return 1;
}
