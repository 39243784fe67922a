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

/* Freestanding layout shared by both sides (int = 32 bits on x86-64). */
#ifndef __ASSEMBLER__
struct es_task_info {
    int pid;       /* task id (Linux: task_struct.pid) */
    int tgid;      /* thread group = process id (getpid) */
    char comm[16]; /* TASK_COMM_LEN: executable name or PR_SET_NAME */
};
#endif

#endif
