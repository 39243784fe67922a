/* sig.c - lab 09: a signal handler that reports the frame the kernel built.
 *
 *   ./sig [SIGNAL [redirect]]
 *
 * installs on_signal for SIGNAL (a number, default 10 = SIGUSR1), sends the
 * signal to itself with one raw SYSCALL instruction (kill_marked, below),
 * and prints what the handler found, as one JSON object on one line.
 *
 * Build it exactly so (the grader builds it the same way):
 *     gcc -static -O1 -g -o sig sig.c
 *
 * The TODOs are yours: Task 1 (install the handler, fill in the facts) and
 * Task 5 (the redirect).  Keep the handler's name, on_signal: the grader's
 * debugger scripts stop there.  Keep kill_marked and print_facts as they
 * are. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

/* long kill_marked(long pid, long sig): kill(pid, sig) through a SYSCALL
 * instruction of its own.  The signal is delivered as that system call
 * returns, so the interrupted instruction is the one at after_syscall.
 * It returns RAX as the code after the syscall leaves it: normally -1
 * (the `mov $-1, %rax` at after_syscall runs), or whatever the handler put
 * in the saved RAX when it also moved the saved RIP on to skip_to.
 * RSP is aligned to 64 bytes around the syscall, so that the distances
 * below the interrupted RSP are the same in every run. */
long kill_marked(long pid, long sig);
extern char after_syscall[], skip_to[];
__asm__(".text\n"
        ".globl kill_marked\n"
        ".type kill_marked, @function\n"
        "kill_marked:\n"
        "    push %rbp\n"
        "    mov %rsp, %rbp\n"
        "    and $-64, %rsp\n"
        "    mov $62, %eax\n"          /* __NR_kill; pid in RDI, sig in RSI */
        "    syscall\n"
        ".globl after_syscall\n"
        "after_syscall:\n"
        "    mov $-1, %rax\n"          /* 7 bytes: what a redirect skips */
        ".globl skip_to\n"
        "skip_to:\n"
        "    leave\n"
        "    ret\n"
        ".size kill_marked, .-kill_marked\n");

/* What the handler saw.  Addresses and register values are 64-bit. */
static struct {
    int signal;                  /* the handler's first argument */
    uint64_t frame;              /* the address of the kernel's struct rt_sigframe
                                    (where RSP pointed at on_signal's first instruction) */
    uint64_t info;               /* the second argument (siginfo_t *) */
    uint64_t uc;                 /* the third argument (ucontext_t *) */
    uint64_t pretcode;           /* the 8 bytes at `frame`: where the handler's ret goes */
    uint64_t saved_rip, saved_rsp, saved_rax, saved_rcx, saved_r11, saved_eflags;
                                 /* the interrupted registers, from uc->uc_mcontext.gregs */
    uint64_t fpstate;            /* uc->uc_mcontext.fpregs: where the kernel saved the FPU state */
    uint64_t uc_sigmask;         /* the first 64 bits of uc->uc_sigmask */
    uint64_t blocked_in_handler; /* the first 64 bits of the blocked set while on_signal runs */
    long result;                 /* what kill_marked returned (main fills it in) */
} facts;

static int redirect; /* argv[2] is "redirect" (Task 5) */

void on_signal(int sig, siginfo_t *info, void *ucv)
{
    ucontext_t *uc = ucv;
    facts.signal = sig;
    facts.info = (uintptr_t)info;
    facts.uc = (uintptr_t)uc;
    /* struct rt_sigframe { char *pretcode; struct ucontext uc; siginfo_t info; } */
    facts.frame = facts.uc - 8;
    facts.pretcode = *(uint64_t *)(uintptr_t)facts.frame;
    facts.saved_rip = uc->uc_mcontext.gregs[REG_RIP];
    facts.saved_rsp = uc->uc_mcontext.gregs[REG_RSP];
    facts.saved_rax = uc->uc_mcontext.gregs[REG_RAX];
    facts.saved_rcx = uc->uc_mcontext.gregs[REG_RCX];
    facts.saved_r11 = uc->uc_mcontext.gregs[REG_R11];
    facts.saved_eflags = uc->uc_mcontext.gregs[REG_EFL];
    facts.fpstate = (uintptr_t)uc->uc_mcontext.fpregs;
    memcpy(&facts.uc_sigmask, &uc->uc_sigmask, 8);
    sigset_t now;
    sigprocmask(SIG_BLOCK, NULL, &now);
    memcpy(&facts.blocked_in_handler, &now, 8);

    if (redirect) {
        /* rt_sigreturn restores these: the interrupted code goes on at
         * skip_to with RAX = 0x5a5a */
        uc->uc_mcontext.gregs[REG_RIP] = (greg_t)(uintptr_t)skip_to;
        uc->uc_mcontext.gregs[REG_RAX] = 0x5a5a;
    }
}

/* Task 1: replace the body with a sigaction() call that installs on_signal
 * for sig with SA_SIGINFO (and an empty sa_mask).  As given, the signal is
 * ignored, so that the program runs to its end. */
static void install_handler(int sig)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    if (sigaction(sig, &sa, NULL) != 0) {
        perror("sigaction");
        exit(1);
    }
}

static void print_facts(void)
{
    printf("{\"signal\": %d, \"frame\": \"%#lx\", \"info\": \"%#lx\", \"uc\": \"%#lx\", "
           "\"pretcode\": \"%#lx\", \"saved_rip\": \"%#lx\", \"saved_rsp\": \"%#lx\", "
           "\"saved_rax\": \"%#lx\", \"saved_rcx\": \"%#lx\", \"saved_r11\": \"%#lx\", "
           "\"saved_eflags\": \"%#lx\", \"fpstate\": \"%#lx\", \"uc_sigmask\": \"%#lx\", "
           "\"blocked_in_handler\": \"%#lx\", \"result\": %ld}\n",
           facts.signal, (unsigned long)facts.frame, (unsigned long)facts.info,
           (unsigned long)facts.uc, (unsigned long)facts.pretcode,
           (unsigned long)facts.saved_rip, (unsigned long)facts.saved_rsp,
           (unsigned long)facts.saved_rax, (unsigned long)facts.saved_rcx,
           (unsigned long)facts.saved_r11, (unsigned long)facts.saved_eflags,
           (unsigned long)facts.fpstate, (unsigned long)facts.uc_sigmask,
           (unsigned long)facts.blocked_in_handler, facts.result);
}

int main(int argc, char **argv)
{
    int sig = argc > 1 ? atoi(argv[1]) : SIGUSR1;
    redirect = argc > 2 && strcmp(argv[2], "redirect") == 0;
    install_handler(sig);
    facts.result = kill_marked(getpid(), sig);
    print_facts();
    return 0;
}
