/* sumtest.c - calls system call 333 from user space (lab 03-add-a-syscall,
 * Task 2).
 *
 *     sumtest [N]        N from 1 up (default 100)
 *
 * Prints "sumarray(1..N) = SUM"; exit 0 when SUM is N(N+1)/2, 1 when not,
 * 2 when the call fails ("sumtest: sumarray: <error>" on stderr). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sumarray.h"

int main(int argc, char **argv)
{
    unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 100;
    long *a = malloc((n ? n : 1) * sizeof *a);
    long sum;

    if (!a) {
        fprintf(stderr, "sumtest: out of memory\n");
        return 2;
    }
    for (unsigned long i = 0; i < n; i++)
        a[i] = (long)i + 1;
    if (sumarray(a, n, &sum) != 0) {
        fprintf(stderr, "sumtest: sumarray: %s\n", strerror(errno));
        return 2;
    }
    printf("sumarray(1..%lu) = %ld\n", n, sum);
    return sum == (long)(n * (n + 1) / 2) ? 0 : 1;
}
