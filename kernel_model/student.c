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
 */
#include "syscalls.h"
