/* wrapper_cases.c - the grader's test of the student's user-space wrapper
 * (user/sumarray.c, lab 03-add-a-syscall), linked with it:
 *
 *     long sumarray(const long *arr, unsigned long n, long *out);
 *
 * 0 on success; -1 with errno set to the kernel's error on failure.  Prints
 * one JSON object per case, then {"done": N}; argv[1] picks the group
 * (visible, hidden, all).  Built by grade.py with gcc -static -O1. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sumarray.h"

#define SENTINEL 0x5a5a5a5a5a5a5a5aL

static int ncases, nfail;

static void report(const char *name, int ok, const char *why)
{
    ncases++;
    nfail += !ok;
    printf("{\"case\": \"%s\", \"ok\": %s, \"why\": \"%s\"}\n", name, ok ? "true" : "false",
           ok ? "" : why);
    fflush(stdout);
}

static void ok_case(const char *name, const long *arr, unsigned long n, long want)
{
    char why[256];
    long out = SENTINEL;
    errno = 0;
    long r = sumarray(arr, n, &out);
    int e = errno;
    if (r != 0)
        snprintf(why, sizeof why, "sumarray() returned %ld (errno %d, %s), want 0", r, e,
                 strerror(e));
    else if (out != want)
        snprintf(why, sizeof why, "sumarray() returned 0 but *out = %ld, want %ld", out, want);
    report(name, r == 0 && out == want, why);
}

static void err_case(const char *name, const long *arr, unsigned long n, long *out, int want)
{
    char why[256];
    errno = 0;
    long r = sumarray(arr, n, out);
    int e = errno;
    int ok = r == -1 && e == want;
    if (r != -1)
        snprintf(why, sizeof why, "sumarray() returned %ld, want -1 (with errno = %d, %s)", r,
                 want, strerror(want));
    else if (e != want)
        snprintf(why, sizeof why, "sumarray() returned -1 but errno = %d (%s), want %d (%s)", e,
                 strerror(e), want, strerror(want));
    report(name, ok, why);
}

static long big[4096];

int main(int argc, char **argv)
{
    const char *group = argc > 1 ? argv[1] : "all";
    int all = !strcmp(group, "all");
    long a[10], out;
    for (int i = 0; i < 10; i++)
        a[i] = i + 1;
    if (all || !strcmp(group, "visible")) {
        ok_case("sumarray({1..10}, 10, &out): 0 and out = 55", a, 10, 55);
        err_case("sumarray(NULL, 3, &out): -1, errno EFAULT", NULL, 3, &out, EFAULT);
        err_case("sumarray(a, 0, &out): -1, errno EINVAL", a, 0, &out, EINVAL);
    }
    if (all || !strcmp(group, "hidden")) {
        long want = 0;
        for (int i = 0; i < 4096; i++)
            want += big[i] = 3L * i - 5000;
        ok_case("sumarray(big, 4096, &out)", big, 4096, want);
        ok_case("sumarray(a + 9, 1, &out)", a + 9, 1, 10);
        err_case("sumarray(a, 2^40 + 3, &out): -1, errno EINVAL (n is 64 bits)", a,
                 (1UL << 40) + 3, &out, EINVAL);
        err_case("sumarray(a, 10, (long *)1): -1, errno EFAULT", a, 10, (long *)1, EFAULT);
    }
    printf("{\"done\": %d, \"failed\": %d}\n", ncases, nfail);
    return nfail ? 1 : 0;
}
