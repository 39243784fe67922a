/* student.c - your system calls (lab 03-add-a-syscall).
 *
 * A system call here is defined with SYSCALL_DEFINEn (n = its number of
 * arguments), each argument as a type and a name separated by a comma:
 *
 *     SYSCALL_DEFINE2(add2, long, a, long, b)
 *     {
 *             return a + b;
 *     }
 *
 * and gets its number from a row of syscall_64.tbl, in Linux's format:
 *
 *     333	common	add2	__x64_sys_add2
 *
 * Then `entrysim kernel build kernel` (or `make`) and `entrysim run --kernel
 * kernel PROGRAM`.  The macro writes the stubs of both conventions, v4.16's
 * sys_NAME and v4.17's __x64_sys_NAME (include/syscalls.h), so one body
 * works in every kernel.  Helpers (include/uaccess.h, printk.h, kstring.h):
 * copy_from_user, copy_to_user, get_user, put_user, pr_info, memset, ...
 * See ../README.md, Task 1, and kernel_model/README.md, "Helpers for
 * syscall bodies".
 */
#include "syscalls.h"

#define SUMARRAY_MAX 4096 /* the largest n sumarray accepts */

/* TODO (Task 1): system call 333,
 *
 *     long sumarray(const long __user *arr, unsigned long n, long __user *out)
 *
 * adds arr[0] .. arr[n-1] and stores the sum in *out; returns 0, -EINVAL
 * when n is 0 or more than SUMARRAY_MAX (checked before any user memory is
 * touched), -EFAULT when arr or out cannot be read or written.  *out is
 * written only on success.  Never dereference a user pointer yourself, and
 * remember that the kernel stack is only 16 KiB.
 */
