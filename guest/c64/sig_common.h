/* sig_common.h - the recording handlers shared by the signal test programs
 * (c64/signals.c, i386/signals32.c): what the last handler saw. */
#ifndef SIG_COMMON_H
#define SIG_COMMON_H
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

static volatile sig_atomic_t hits, last_sig;
static volatile int last_code;
static volatile uintptr_t last_addr, handler_sp;
static sigjmp_buf jb;

static void on_info(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    hits++;
    last_sig = sig;
    last_code = si->si_code;
    last_addr = (uintptr_t)si->si_addr;
    handler_sp = (uintptr_t)__builtin_frame_address(0);
}

/* leaves a fault's handler for the sigsetjmp point */
static void on_fault_jump(int sig, siginfo_t *si, void *uc)
{
    on_info(sig, si, uc);
    siglongjmp(jb, 1);
}
/* sig (caught) sent while blocked: pending, not delivered until unblocked */
static void blocked_then_unblocked(int sig)
{
    sigset_t s, p;
    sigemptyset(&s);
    sigaddset(&s, sig);
    sigprocmask(SIG_BLOCK, &s, NULL);
    hits = 0;
    kill(getpid(), sig);
    sigpending(&p);
    printf("blocked: hits %d pending %d\n", (int)hits, sigismember(&p, sig));
    sigprocmask(SIG_UNBLOCK, &s, NULL);
    printf("unblocked: hits %d\n", (int)hits);
}
#endif
