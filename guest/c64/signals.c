/* signals.c - signal handlers of a 64-bit program (glibc and musl, static),
 * run natively and under entrysim and compared line by line: caught
 * signals from raise/kill, faults (SIGSEGV read and write with si_addr and
 * si_code, SIGFPE on a division by zero, SIGILL on ud2, SIGTRAP on int3),
 * a handler that moves the interrupted RIP through its ucontext, sa_mask
 * and a nested signal, SA_NODEFER, SA_RESETHAND, sigaltstack + SA_ONSTACK,
 * a blocked signal seen by sigpending and delivered when unblocked, and
 * registers and SSE state kept across a handler.  argv[1] = "abort" ends
 * with abort() (134); "reset" with a second SIGUSR2 after SA_RESETHAND (140). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "sig_common.h"

/* tgkill; x32 calls carry __X32_SYSCALL_BIT */
#ifdef __ILP32__
#define TGKILL_NR (0x40000000 + 234)
#else
#define TGKILL_NR 234
#endif

static volatile sig_atomic_t nested_seen;

/* skips the faulting instruction: its length is in RBX (set by the asm) */
static void on_fault_skip(int sig, siginfo_t *si, void *ucv)
{
    ucontext_t *uc = ucv;
    on_info(sig, si, ucv);
    uc->uc_mcontext.gregs[REG_RIP] += uc->uc_mcontext.gregs[REG_RBX];
    uc->uc_mcontext.gregs[REG_RAX] = 1234; /* the interrupted code sees it */
}

static void on_outer(int sig)
{
    hits++;
    raise(SIGUSR2); /* blocked by sa_mask: runs after this handler returns */
    nested_seen = last_sig == SIGUSR2;
    last_sig = sig;
}

static void on_plain(int sig)
{
    hits++;
    last_sig = sig;
}

static void on_sse(int sig)
{
    (void)sig;
    volatile double x = 3.0;
    for (int i = 0; i < 10; i++)
        x = x * 1.5 + 0.25; /* uses the SSE registers */
    hits++;
}

static void catch(int sig, void (*fn)(int, siginfo_t *, void *), int flags)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = fn;
    sa.sa_flags = SA_SIGINFO | flags;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
}

static void plain(int sig, void (*fn)(int), int flags, int masked)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = fn;
    sa.sa_flags = flags;
    sigemptyset(&sa.sa_mask);
    if (masked)
        sigaddset(&sa.sa_mask, masked);
    sigaction(sig, &sa, NULL);
}

static void faults(void)
{
    char *ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    catch(SIGSEGV, on_fault_jump, 0);
    if (!sigsetjmp(jb, 1))
        *(volatile int *)16 = 1;
    printf("segv read-null: sig %d code %d addr %#lx\n", last_sig, last_code, (long)last_addr);
    if (!sigsetjmp(jb, 1))
        *(volatile char *)ro = 1;
    printf("segv write-ro: sig %d code %d addr-ok %d\n", last_sig, last_code,
           last_addr == (uintptr_t)ro);
    catch(SIGFPE, on_fault_skip, 0);
    long q;
    uintptr_t at;
    __asm__ volatile("lea 0f(%%rip), %1; mov $3, %%ebx; xor %%ecx, %%ecx; mov $7, %%eax;"
                     "cqo; 0: idiv %%rcx" /* 3 bytes: 48 f7 f9 */
                     : "=a"(q), "=&r"(at) : : "rbx", "rcx", "rdx");
    printf("fpe: sig %d code %d addr-ok %d rax %ld\n", last_sig, last_code, last_addr == at, q);
    catch(SIGILL, on_fault_skip, 0);
    __asm__ volatile("lea 0f(%%rip), %1; mov $2, %%ebx; 0: ud2" : "=a"(q), "=&r"(at) : : "rbx");
    printf("ill: sig %d code %d addr-ok %d rax %ld\n", last_sig, last_code, last_addr == at, q);
    catch(SIGTRAP, on_info, 0);
    __asm__ volatile("int3");
    printf("trap: sig %d code %d\n", last_sig, last_code);
}

/* callee-saved and caller-saved registers and xmm state survive a handler */
static void registers(void)
{
    plain(SIGUSR1, on_sse, 0, 0);
    uint64_t r12, r13, r14, r15, x0;
    long long pid = getpid(), tid = pid; /* 64-bit registers under x32 too */
    __asm__ volatile("mov $0x1212, %%r12; mov $0x1313, %%r13; mov $0x1414, %%r14;"
                     "mov $0x1515, %%r15; mov $0x4242424242424242, %%rax; movq %%rax, %%xmm0;"
                     "mov %8, %%eax; mov %6, %%rdi; mov %7, %%rsi; mov $10, %%edx; syscall;"
                     "movq %%xmm0, %4; mov %%r12, %0; mov %%r13, %1; mov %%r14, %2; mov %%r15, %3"
                     : "=m"(r12), "=m"(r13), "=m"(r14), "=m"(r15), "=m"(x0)
                     : "m"(hits), "r"(pid), "r"(tid), "i"(TGKILL_NR)
                     : "rax", "rcx", "rdx", "rsi", "rdi", "r11", "r12", "r13", "r14", "r15", "xmm0",
                       "memory");
    printf("regs kept: %d %d %d %d xmm0 %d hits %d\n", r12 == 0x1212, r13 == 0x1313,
           r14 == 0x1414, r15 == 0x1515, x0 == 0x4242424242424242ull, (int)hits);
}

static void masks(void)
{
    plain(SIGUSR1, on_outer, 0, SIGUSR2);
    plain(SIGUSR2, on_plain, 0, 0);
    hits = 0;
    raise(SIGUSR1);
    printf("nested: hits %d usr2-after-outer %d\n", (int)hits, last_sig == SIGUSR2 && !nested_seen);
    blocked_then_unblocked(SIGUSR2);
    catch(SIGUSR1, on_info, 0);
    raise(SIGUSR1);
    printf("raise: code %d\n", last_code);
    kill(getpid(), SIGUSR1);
    printf("kill: code %d\n", last_code);
}

static void altstack(void)
{
    static char stack[65536];
    stack_t ss = {.ss_sp = stack, .ss_size = sizeof stack, .ss_flags = 0};
    sigaltstack(&ss, NULL);
    catch(SIGUSR1, on_info, SA_ONSTACK);
    raise(SIGUSR1);
    printf("altstack: on it %d\n",
           handler_sp >= (uintptr_t)stack && handler_sp < (uintptr_t)stack + sizeof stack);
    catch(SIGUSR1, on_info, 0);
    raise(SIGUSR1);
    printf("no SA_ONSTACK: on it %d\n",
           handler_sp >= (uintptr_t)stack && handler_sp < (uintptr_t)stack + sizeof stack);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc > 1 && !strcmp(argv[1], "abort"))
        abort();
    if (argc > 1 && !strcmp(argv[1], "reset")) {
        plain(SIGUSR2, on_plain, SA_RESETHAND, 0);
        raise(SIGUSR2);
        printf("first SIGUSR2 caught: %d\n", last_sig == SIGUSR2);
        raise(SIGUSR2);
        printf("not reached\n");
        return 1;
    }
    faults();
    registers();
    masks();
    altstack();
    printf("done\n");
    return 0;
}
