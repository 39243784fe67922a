/* student.c - your system calls.
 *
 * A body written here replaces the host forwarding for its name; a new
 * system call needs a body here and a row in syscall_64.tbl (and/or
 * syscall_32.tbl), in Linux's own format:
 *
 *     SYSCALL_DEFINE2(add2, long, a, long, b)
 *     {
 *             return a + b;
 *     }
 *
 *     333  common  add2  __x64_sys_add2          (syscall_64.tbl)
 *
 * then `entrysim kernel build DIR` and `entrysim run --kernel DIR PROGRAM`.
 * SYSCALL_DEFINEn (n = 0..6) and COMPAT_SYSCALL_DEFINEn give the stubs of
 * both conventions (v4.16's sys_NAME, 4.17's __x64_sys_NAME and
 * __ia32_sys_NAME), so the call works in every patch set.  The shipped
 * kernel has none: this file is empty.
 *
 * A body may use the kernel helpers (include/uaccess.h, printk.h,
 * kstring.h): copy_from_user, copy_to_user, get_user, put_user,
 * strncpy_from_user (-EFAULT on a bad user pointer), printk/pr_info
 * ("[kernel] " lines on the run's stderr), current->pid/tgid/comm, and
 * memset/memcpy/strlen....  See README.md, "Helpers for syscall bodies".
 */
#include "syscalls.h"
