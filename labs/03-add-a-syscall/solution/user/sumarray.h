/* sumarray.h - the user-space side of system call 333 (lab 03-add-a-syscall).
 * Given; do not change it (the grader compiles its own tests against it). */
#ifndef SUMARRAY_H
#define SUMARRAY_H

#define SYS_sumarray 333  /* its row in kernel/syscall_64.tbl */
#define SUMARRAY_MAX 4096 /* the largest n the kernel accepts */

/* Adds arr[0] .. arr[n-1] in the kernel and stores the sum in *out.
 * Returns 0, or -1 with errno set to the kernel's error (EFAULT: arr or out
 * is a bad pointer; EINVAL: n is 0 or more than SUMARRAY_MAX). */
long sumarray(const long *arr, unsigned long n, long *out);

#endif
