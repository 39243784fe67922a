/* student.c - your system calls (lab 03-add-a-syscall): the reference
 * solution.
 *
 * sumarray is row 333 of syscall_64.tbl:
 *
 *     333	common	sumarray	__x64_sys_sumarray
 */
#include "syscalls.h"

#define SUMARRAY_MAX 4096 /* the largest n sumarray accepts */
#define SUMARRAY_CHUNK 64 /* longs copied at a time: 512 bytes of a 16 KiB stack */

SYSCALL_DEFINE3(sumarray, const long __user *, arr, unsigned long, n, long __user *, out)
{
	long buf[SUMARRAY_CHUNK];
	long sum = 0;
	unsigned long i, j, k;

	/* the size first: n * sizeof(long) below cannot wrap once n <= 4096 */
	if (n == 0 || n > SUMARRAY_MAX)
		return -EINVAL;
	for (i = 0; i < n; i += k) {
		k = n - i < SUMARRAY_CHUNK ? n - i : SUMARRAY_CHUNK;
		/* copy_from_user checks the range (access_ok) and returns the
		 * bytes it could not copy: a kernel address, a hole or an
		 * unmapped page is an error, never a dereference of our own */
		if (copy_from_user(buf, arr + i, k * sizeof(long)))
			return -EFAULT;
		for (j = 0; j < k; j++)
			sum += buf[j];
	}
	if (copy_to_user(out, &sum, sizeof sum))
		return -EFAULT;
	return 0;
}
