/* sandbox.c - the seccomp filter of the measuring child (sandbox.h).
 *
 * Why a filter and not only the block check: a block may compute any
 * address from RIP and store through a register, so the checker cannot see
 * every write into the harness, and a block that takes control of the child
 * could make any system call as the user running entrysim.  Under the
 * filter the worst it can do is exit, map the shared data page somewhere, or
 * write a record into its own result pipe (a wrong figure for itself).
 * Linux: Documentation/userspace-api/seccomp_filter.rst; struct seccomp_data
 * is { int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6]; }. */
#include "sandbox.h"

#if defined(__x86_64__) && defined(__linux__)

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif
#ifndef SECCOMP_RET_KILL_PROCESS
#define SECCOMP_RET_KILL_PROCESS 0x80000000u
#endif

#define ARG_LO(i) ((uint32_t)(offsetof(struct seccomp_data, args) + 8 * (i)))
#define ARG_HI(i) (ARG_LO(i) + 4)
#define LOAD(off) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (off))
#define RET(v) BPF_STMT(BPF_RET | BPF_K, (v))
/* jump to the kill at the end unless A == v: `kill` is the distance from the
 * next instruction to it, which each use computes from its own position */
#define EXPECT(v, kill) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (v), 0, (kill))

enum { ALLOW = SECCOMP_RET_ALLOW, KILL = SECCOMP_RET_KILL_PROCESS };

int es_native_sandbox_enter(int pipe_fd, int memfd)
{
    /* the program, as an array so that the kill offsets follow from it:
     * a jump at index i to index T has offset T - (i + 1) */
    enum { A = 35, K = 36 }; /* the plain allow and the kill */
    struct sock_filter f[] = {
        /* 0 */ LOAD(offsetof(struct seccomp_data, arch)),
        /* 1 */ EXPECT(AUDIT_ARCH_X86_64, K - 2),
        /* 2 */ LOAD(offsetof(struct seccomp_data, nr)),
        /* 3 */ BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, K - 4, 0), /* x32 */
        /* 4 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_rt_sigreturn, A - 5, 0),
        /* 5 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_exit_group, A - 6, 0),
        /* 6 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_exit, A - 7, 0),
        /* 7 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_write, 0, 5),
        /* 8 */ LOAD(ARG_LO(0)),
        /* 9 */ EXPECT((uint32_t)pipe_fd, K - 10),
        /* 10 */ LOAD(ARG_HI(0)),
        /* 11 */ EXPECT(0, K - 12),
        /* 12 */ RET(ALLOW),
        /* 13 */ EXPECT(SYS_mmap, K - 14),
        /* 14 */ LOAD(ARG_LO(1)), EXPECT(4096, K - 16),
        /* 16 */ LOAD(ARG_HI(1)), EXPECT(0, K - 18),
        /* 18 */ LOAD(ARG_LO(2)), EXPECT(PROT_READ | PROT_WRITE, K - 20),
        /* 20 */ LOAD(ARG_HI(2)), EXPECT(0, K - 22),
        /* 22 */ LOAD(ARG_LO(3)), EXPECT(MAP_SHARED | MAP_FIXED_NOREPLACE, K - 24),
        /* 24 */ LOAD(ARG_HI(3)), EXPECT(0, K - 26),
        /* 26 */ LOAD(ARG_LO(4)), EXPECT((uint32_t)memfd, K - 28),
        /* 28 */ LOAD(ARG_HI(4)), EXPECT(0, K - 30),
        /* 30 */ LOAD(ARG_LO(5)), EXPECT(0, K - 32),
        /* 32 */ LOAD(ARG_HI(5)), EXPECT(0, K - 34),
        /* 34 */ RET(ALLOW),
        /* 35 */ RET(ALLOW), /* the allowed calls without arguments to check */
        /* 36 */ RET(KILL),
    };
    _Static_assert(sizeof f / sizeof f[0] == K + 1, "K is the last instruction");
    struct sock_fprog prog = {.len = (unsigned short)(sizeof f / sizeof f[0]), .filter = f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
        return -1;
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) ? -1 : 0;
}

static long raw3(long nr, long a, long b, long c)
{
    long ret;
    __asm__ volatile("syscall" : "=a"(ret) : "a"(nr), "D"(a), "S"(b), "d"(c)
                     : "rcx", "r11", "memory");
    return ret;
}

long es_native_raw_write(int fd, const void *buf, size_t n)
{
    return raw3(SYS_write, fd, (long)(uintptr_t)buf, (long)n);
}

void *es_native_raw_mmap(uint64_t addr, size_t len, int prot, int flags, int fd)
{
    long ret;
    register long r10 __asm__("r10") = flags;
    register long r8 __asm__("r8") = fd;
    register long r9 __asm__("r9") = 0;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"((long)SYS_mmap), "D"(addr), "S"(len), "d"((long)prot), "r"(r10),
                       "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    return ret < 0 && ret > -4096 ? MAP_FAILED : (void *)ret;
}

void es_native_raw_exit(int status)
{
    for (;;)
        raw3(SYS_exit_group, status, 0, 0);
}

#else /* not x86-64 Linux: measure-native is unsupported there */

#include <errno.h>
#include <stdlib.h>

int es_native_sandbox_enter(int pipe_fd, int memfd)
{
    (void)pipe_fd, (void)memfd;
    errno = ENOSYS;
    return -1;
}

long es_native_raw_write(int fd, const void *buf, size_t n)
{
    (void)fd, (void)buf, (void)n;
    return -ENOSYS;
}

void *es_native_raw_mmap(uint64_t addr, size_t len, int prot, int flags, int fd)
{
    (void)addr, (void)len, (void)prot, (void)flags, (void)fd;
    return (void *)-1;
}

void es_native_raw_exit(int status)
{
    _Exit(status);
}

#endif
