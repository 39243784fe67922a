/* signals32.c - signal handlers of an i386 program (static glibc, -m32),
 * run natively and under entrysim with the same output: the i386 frames
 * (rt_sigframe_ia32 for SA_SIGINFO, sigframe_ia32 for a plain handler)
 * through int $0x80 and the vDSO's sysenter/syscall entry, faults with
 * si_addr and si_code, EIP moved through the ucontext, sa_mask nesting,
 * blocked + sigpending + unblock, sigaltstack, registers and SSE state
 * kept, SIGALRM from a periodic timer interrupting a loop.  argv[1] =
 * "abort": abort() (134). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <ucontext.h>
#include <unistd.h>

#include "../c64/sig_common.h"

static void on_skip(int sig, siginfo_t *si, void *ucv)
{
    ucontext_t *uc = ucv;
    on_info(sig, si, ucv);
    uc->uc_mcontext.gregs[REG_EIP] += 2; /* idiv %ecx, ud2: 2 bytes */
    uc->uc_mcontext.gregs[REG_EAX] = 1234;
}

static void on_plain(int sig)
{
    hits++;
    last_sig = sig;
    handler_sp = (uintptr_t)__builtin_frame_address(0);
}

static void on_outer(int sig)
{
    hits++;
    raise(SIGUSR2);
    last_sig = sig;
}

static void catch(int sig, void (*fn)(int, siginfo_t *, void *), int flags)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = fn;
    sa.sa_flags = SA_SIGINFO | flags;
    sigaction(sig, &sa, NULL);
}

static void plain(int sig, void (*fn)(int), int masked)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = fn;
    if (masked)
        sigaddset(&sa.sa_mask, masked);
    sigaction(sig, &sa, NULL);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc > 1 && !strcmp(argv[1], "abort"))
        abort();
    catch(SIGSEGV, on_fault_jump, 0);
    if (!sigsetjmp(jb, 1))
        *(volatile int *)16 = 1;
    printf("segv: sig %d code %d addr %#lx\n", last_sig, last_code, (long)last_addr);
    catch(SIGFPE, on_skip, 0);
    int q;
    __asm__ volatile("xor %%ecx, %%ecx; mov $7, %%eax; cltd; idiv %%ecx" : "=a"(q) : : "ecx", "edx");
    printf("fpe: sig %d code %d eax %d\n", last_sig, last_code, q);
    catch(SIGILL, on_skip, 0);
    __asm__ volatile("ud2" : "=a"(q));
    printf("ill: sig %d code %d eax %d\n", last_sig, last_code, q);

    plain(SIGUSR1, on_plain, 0);
    volatile double x = 1.25;
    raise(SIGUSR1); /* the plain sigframe_ia32 (no SA_SIGINFO) */
    printf("plain frame: sig %d hits %d x %g\n", last_sig, (int)hits, x * 2);

    plain(SIGUSR1, on_outer, SIGUSR2);
    plain(SIGUSR2, on_plain, 0);
    hits = 0;
    raise(SIGUSR1);
    printf("nested: hits %d last %d\n", (int)hits, last_sig);
    blocked_then_unblocked(SIGUSR2);

    static char stack[65536];
    stack_t ss = {.ss_sp = stack, .ss_size = sizeof stack};
    sigaltstack(&ss, NULL);
    catch(SIGUSR1, on_info, SA_ONSTACK);
    raise(SIGUSR1);
    printf("altstack: on it %d code %d\n",
           handler_sp >= (uintptr_t)stack && handler_sp < (uintptr_t)stack + sizeof stack, last_code);

    plain(SIGALRM, on_plain, 0);
    hits = 0;
    struct itimerval it = {{0, 2000}, {0, 2000}};
    setitimer(ITIMER_REAL, &it, NULL);
    volatile unsigned long spins = 0;
    while (hits < 3)
        spins++;
    memset(&it, 0, sizeof it);
    setitimer(ITIMER_REAL, &it, NULL);
    printf("alarms: %d\n", (int)hits);
    return 0;
}
