/* sumtest.c - calls your system call from user space (lab 03-add-a-syscall,
 * Task 2).
 *
 *     sumtest [N]        N from 1 up (default 100)
 *
 * TODO (Task 2): fill an array with 1, 2, ..., N (malloc it: N may be
 * large), call sumarray() (sumarray.c) on it and print exactly one line
 * to stdout:
 *
 *     sumarray(1..N) = SUM
 *
 * Exit status: 0 when SUM is N(N+1)/2, 1 when it is not; when sumarray()
 * fails print "sumtest: sumarray: " and strerror(errno) to stderr and
 * exit with 2 (nothing on stdout).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sumarray.h"

int main(int argc, char **argv)
{
    unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 100;

    (void)n;
    fprintf(stderr, "sumtest: not written yet (Task 2)\n");
    return 2;
}
