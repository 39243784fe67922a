/* hypercall.h - services the guest kernel (kernel_model/) asks of the
 * simulator with VMCALL (0F 01 C1) at CPL 0.  Freestanding: no includes, so
 * both the simulator and the kernel's freestanding build can use it.
 *
 * Calling convention: EAX = service number, arguments in RDI, RSI, RDX, RCX;
 * the result (if any) in RAX.  VMCALL at CPL 3, or on a machine without a
 * guest kernel (--direct), raises #UD as on a CPU outside VMX non-root
 * operation (SDM Vol. 2B, VMCALL).
 */
#ifndef ES_HYPERCALL_H
#define ES_HYPERCALL_H

/* RDI = abi (0 x64, 1 i386, 2 x32), RSI = syscall number in that ABI's
 * numbering (x32 with or without bit 30; the host masks it), RDX = kernel
 * virtual address of six 64-bit arguments.  RAX = the syscall's result.
 * exit/exit_group stop the run. */
#define ES_HC_SYSCALL 1

/* An unhandled user fault: RDI = vector, RSI = error code, RDX = fault
 * address (CR2 for #PF), RCX = faulting user RIP.  The run stops as a
 * fault in --direct mode would (message, signal, exit status 128+signal). */
#define ES_HC_SIGNAL 2

/* RDI = kernel address of a NUL-terminated message.  The run stops with
 * ES_STOP_ERROR and the message "guest kernel panic: <msg>". */
#define ES_HC_PANIC 3

/* The kernel log (printk): RDI = kernel address of a NUL-terminated
 * string, RSI = its length (at most 64 KiB are read).  The simulator hands it
 * to the run's log (es_hooks.kernel_log: the run's stderr, the debugger's
 * output panel); without a log it is dropped. */
#define ES_HC_PUTS 4

/* `current` (Linux's get_current()): RDI = kernel address of a struct
 * es_task_info the simulator fills with the task that made the syscall in
 * progress.  RAX = 0, or -ENOSYS without host services. */
#define ES_HC_TASK 5

/* Signals (the kernel's exit-to-user work, traps and rt_sigreturn; the
 * host keeps the actions, the blocked and the pending sets):
 * RDI = ES_SIG_*, arguments in RSI, RDX, RCX, R8; result in RAX.
 *   ES_SIG_ENABLE  RSI = the process's ES_BOOT_ABI_*, RDX = kernel address
 *                  of its TIF_SIGPENDING word (the host keeps it 1 while a
 *                  caught signal can be delivered): the kernel builds signal
 *                  frames for it, so handlers run (without it, or in
 *                  --direct mode, a caught signal is dropped).  RAX = 0.
 *   ES_SIG_NEXT    RSI = kernel address of a struct es_ksignal: the next
 *                  pending, unblocked signal with a handler (RAX = its
 *                  number; 0 = none).  Default actions of the others are
 *                  taken on the way (a fatal one stops the run).  The host
 *                  then blocks sa_mask and the signal (unless SA_NODEFER) and
 *                  resets the action for SA_RESETHAND; es_ksignal.oldmask
 *                  is the blocked set from before (uc_sigmask).
 *   ES_SIG_FORCE   RSI = vector, RDX = error code, RCX = fault address,
 *                  R8 = user rip: a user exception as its signal (Linux's
 *                  force_sig_info).  RAX = 1 when a handler will take it
 *                  (pending: deliver with ES_SIG_NEXT), 0 when it kills the
 *                  process (report it with ES_HC_SIGNAL).
 *   ES_SIG_RETURN  RSI = the blocked set saved in the frame, RDX = user
 *                  address of the frame's stack_t (0 = none), RCX = 1 when
 *                  it is the compat (i386) stack_t: rt_sigreturn restores
 *                  both; signals it unblocks are handled then.
 *   ES_SIG_KILL    RSI = signal: the kernel could not deliver (bad frame,
 *                  no SA_RESTORER): the process dies of it (force_sigsegv). */
#define ES_HC_SIGOP 6
#define ES_SIG_ENABLE 0
#define ES_SIG_NEXT 1
#define ES_SIG_FORCE 2
#define ES_SIG_RETURN 3
#define ES_SIG_KILL 4

/* Tasks (kernel_model/sched.c, entry_64.S; the simulator keeps the task
 * table, sim/host/task.c).  RDI = ES_SCHED_*, arguments in RSI, RDX, RCX.
 *   ES_SCHED_INIT   RSI = top of the boot task's kernel stack, RDX = kernel
 *                   address of the exit-work word (es_percpu.work, bits
 *                   ES_WORK_*), RCX = address of ret_from_fork: the running
 *                   program becomes task 1 and fork may make others.  RAX = 0.
 *   ES_SCHED_SWITCH RSI = the kernel RSP the current task resumes at (its
 *                   callee-saved registers and return address are pushed
 *                   there), RDX = kernel address of a struct es_next.  The
 *                   simulator picks the next task (round robin over those
 *                   that can run; when none can, it waits for one or ends
 *                   the run as a deadlock) and saves and loads what Linux's
 *                   __switch_to keeps in the task_struct (FPU/SSE state, the
 *                   user segment registers and FS/GS bases, the TLS
 *                   descriptors); RAX = 1 and *RDX filled when another task
 *                   runs now, 0 when the current one goes on. */
#define ES_HC_SCHED 7
#define ES_SCHED_INIT 0
#define ES_SCHED_SWITCH 1
/* ES_HC_SYSCALL's answer when the call cannot complete yet (a read of an
 * empty pipe, wait4 with running children, a sleep...) or the task has
 * ended: the kernel schedules another task and, when this one runs again,
 * makes the same call again (Linux's bodies sleep on a wait queue inside
 * schedule()).  Never returned to user mode; Linux's own kernel-internal
 * codes are 512..530. */
#define ES_ERESCHED 600
/* The exit-work word (Linux's thread_info flags), written by the simulator
 * for the running task. */
#define ES_WORK_SIGPENDING 1 /* _TIF_SIGPENDING: a caught signal can be delivered */
#define ES_WORK_RESCHED 2    /* _TIF_NEED_RESCHED: the time slice is over */
#define ES_WORK_DEAD 4       /* the task has exited (do_exit): never return to it */
#define ES_NEXT_SP 0
#define ES_NEXT_CR3 8
#define ES_NEXT_TOP 16

/* Freestanding layout shared by both sides (int = 32 bits on x86-64). */
#ifndef __ASSEMBLER__
struct es_task_info {
    int pid;       /* task id (Linux: task_struct.pid) */
    int tgid;      /* thread group = process id (getpid) */
    char comm[16]; /* TASK_COMM_LEN: executable name or PR_SET_NAME */
};

/* ES_SIG_NEXT's answer: the signal, its sigaction, the mask to restore and
 * the sigaltstack, and the siginfo as the 64-bit ABI lays it out. */
struct es_ksignal {
    unsigned long long handler, flags, restorer, mask; /* struct sigaction */
    unsigned long long oldmask;       /* blocked set before delivery */
    unsigned long long ss_sp, ss_size; /* sigaltstack (ss_flags & 2: disabled) */
    unsigned int ss_flags, sig;
    unsigned char info[128];          /* siginfo_t */
};
/* ES_SCHED_SWITCH's answer: where the next task resumes. */
struct es_next {
    unsigned long long sp;  /* its saved kernel RSP */
    unsigned long long cr3; /* its PGD (the kernel one of a pti pair); 0 = the same mm */
    unsigned long long top; /* its kernel stack's top: TSS.RSP0 */
};
#endif

#endif
