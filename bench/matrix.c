/* matrix.c - placeholder until the batch runner lands (issue 4). */
#include <stdio.h>

#include "matrix.h"

int es_bench_cmd(int argc, char **argv, const char *self)
{
    (void)argc; (void)argv; (void)self;
    fprintf(stderr, "entrysim: bench: the batch runner is not built yet\n");
    return 1;
}
