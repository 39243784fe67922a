/* sandbox.c - a seccomp-BPF allow-list for the child that runs blocks.
 *
 * measure-native runs arbitrary bytes natively.  The block filter refuses
 * what would leave the block, but a block can still compute the harness's
 * addresses (lea r, [rip]) and overwrite its saved state, and so take
 * control of the child.  The filter makes that worthless: after it, the
 * child can do nothing but what the harness itself needs, and whatever it
 * does, the parent only ever sees a record on the pipe, a signal or a
 * timeout.
 */
#include "sandbox.h"

#if defined(__x86_64__) && defined(__linux__)
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif
#define X32_BIT 0x40000000u

#define LD_NR BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))
/* the low 32 bits of argument n: int arguments (fd, prot, flags) are just
 * that to the kernel */
#define LD_ARG(n) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[n]))
#define ALLOW BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)
#define KILL BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS)
/* skip the next n instructions if A == k / if A != k */
#define IF_EQ_SKIP(k, n) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (k), (n), 0)
#define IF_NE_SKIP(k, n) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (k), 0, (n))

int es_native_sandbox(int pipe_fd, int memfd)
{
    struct sock_filter f[] = {
        /* 64-bit ABI only: int 0x80 (AUDIT_ARCH_I386) and x32 numbers die */
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        IF_EQ_SKIP(AUDIT_ARCH_X86_64, 1),
        KILL,
        LD_NR,
        BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, X32_BIT, 0, 1),
        KILL,
        /* exit, exit_group, rt_sigreturn, munmap: always */
        IF_NE_SKIP(SYS_exit, 1),
        ALLOW,
        IF_NE_SKIP(SYS_exit_group, 1),
        ALLOW,
        IF_NE_SKIP(SYS_rt_sigreturn, 1),
        ALLOW,
        IF_NE_SKIP(SYS_munmap, 1),
        ALLOW,
        /* write(pipe_fd, ...) */
        IF_NE_SKIP(SYS_write, 3),
        LD_ARG(0),
        IF_NE_SKIP((uint32_t)pipe_fd, 9), /* -> KILL */
        ALLOW,
        /* mmap(addr, len, PROT_READ|PROT_WRITE, MAP_SHARED|MAP_FIXED_NOREPLACE, memfd, off) */
        IF_NE_SKIP(SYS_mmap, 7), /* -> KILL */
        LD_ARG(2),
        IF_NE_SKIP(PROT_READ | PROT_WRITE, 5),
        LD_ARG(3),
        IF_NE_SKIP(MAP_SHARED | MAP_FIXED_NOREPLACE, 3),
        LD_ARG(4),
        IF_NE_SKIP((uint32_t)memfd, 1),
        ALLOW,
        KILL,
    };
    struct sock_fprog prog = {.len = (unsigned short)(sizeof f / sizeof f[0]), .filter = f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
        return -1;
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog))
        return -1;
    return 0;
}
#else
int es_native_sandbox(int pipe_fd, int memfd)
{
    (void)pipe_fd;
    (void)memfd;
    return -1;
}
#endif
