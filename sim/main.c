/* main.c - the entrysim command line (filled in by the loader work). */
#include <stdio.h>

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "usage: entrysim run [options] PROGRAM [ARGS...]\n");
    return 2;
}
