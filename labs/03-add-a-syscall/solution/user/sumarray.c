/* sumarray.c - the wrapper of system call 333 (lab 03-add-a-syscall, Task 2):
 * a raw SYSCALL, then the libc convention (-1 and errno). */
#include <errno.h>

#include "sumarray.h"

long sumarray(const long *arr, unsigned long n, long *out)
{
    long ret;

    /* SYSCALL: number in rax, arguments in rdi, rsi, rdx; result in rax;
     * the CPU writes the return address to rcx and RFLAGS to r11.  The
     * kernel writes *out, so the compiler must not keep memory in
     * registers across it ("memory"). */
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"((long)SYS_sumarray), "D"(arr), "S"(n), "d"(out)
                     : "rcx", "r11", "memory");
    if (ret < 0 && ret >= -4095) {
        errno = (int)-ret;
        return -1;
    }
    return ret;
}
