/* signal.c - signal delivery to user handlers and rt_sigreturn, for 64-bit
 * processes (after Linux 4.17 arch/x86/kernel/signal.c and
 * arch/x86/entry/common.c; our own code).  The host services keep the
 * actions and the pending and blocked sets (ES_HC_SIGOP); this kernel builds
 * the frame on the user stack and restores from it:
 *
 *   on the way back to user mode (es_exit_to_usermode, from do_syscall_64
 *   and from a user exception): while a caught signal is pending
 *   (es_percpu.sigpending, Linux's TIF_SIGPENDING), ES_SIG_NEXT names it and
 *   setup_rt_frame writes struct rt_sigframe below the red zone (or on the
 *   sigaltstack): return address sa_restorer, ucontext with the interrupted
 *   registers in uc_mcontext and the blocked set, siginfo, and the FPU state
 *   (an XSAVE image, 64-byte aligned: xstate.c) below it; then regs->ip = handler, sp =
 *   the frame, di/si/dx = signal, &info, &uc.  The return to the handler
 *   goes by IRET, not SYSRET: SYSRET would take RIP from RCX and RFLAGS from
 *   R11, which still hold the interrupted context's values; the entry code's
 *   check (RCX == RIP, R11 == RFLAGS, entry_64.S) sees that and chooses
 *   IRET, as Linux's does.
 *
 *   rt_sigreturn (SYSCALL_DEFINE0, so __x64_sys_rt_sigreturn in 4.17 and
 *   sys_rt_sigreturn in 4.16; both read es_current_pt_regs(), as Linux's did in
 *   both versions - 4.16 reached it through a /ptregs stub): reads the frame
 *   at regs->sp - 8, restores every register of pt_regs with Linux's checks
 *   (only the ES_FIX_EFLAGS bits of RFLAGS, CS and SS forced to RPL 3, a
 *   non-user selector or a non-canonical RIP is a bad frame), the FPU state,
 *   the blocked set and the sigaltstack, and returns the restored RAX.
 *   A bad frame kills the process with SIGSEGV (force_sigsegv).
 *
 * i386 processes get their frames from signal32.c; x32 processes get
 * struct rt_sigframe_x32 (the 64-bit sigcontext with the compat stack_t
 * and siginfo) and sys32_x32_rt_sigreturn, below. */
#include "kmodel.h"
#include "syscalls.h"
#include "signal_int.h"

#define SIGSEGV 11
#define SA_ONSTACK 0x08000000ul
#define SA_RESTORER 0x04000000ul
#define SA_RESTART 0x10000000ul
#define SS_ONSTACK 1
#define SS_DISABLE 2
#define UC_FP_XSTATE 0x1
#define UC_SIGCONTEXT_SS 0x2
#define UC_STRICT_RESTORE_SS 0x4

/* uapi asm/sigcontext.h, struct sigcontext (64-bit): 256 bytes */
struct sigcontext_64 {
    u64 r8, r9, r10, r11, r12, r13, r14, r15;
    u64 di, si, bp, bx, dx, ax, cx, sp, ip, flags;
    u16 cs, gs, fs, ss;
    u64 err, trapno, oldmask, cr2;
    u64 fpstate; /* user address of the FXSAVE image, 0 = none */
    u64 reserved1[8];
};
struct kstack_t { /* stack_t */
    u64 ss_sp;
    s32 ss_flags;
    u32 pad;
    u64 ss_size;
};
struct kucontext { /* the kernel's struct ucontext */
    u64 uc_flags, uc_link;
    struct kstack_t uc_stack;
    struct sigcontext_64 uc_mcontext;
    u64 uc_sigmask;
};
struct rt_sigframe {
    u64 pretcode;
    struct kucontext uc;
    unsigned char info[128];
};
_Static_assert(sizeof(struct sigcontext_64) == 256, "sigcontext");
_Static_assert(__builtin_offsetof(struct kucontext, uc_mcontext) == 40, "uc_mcontext");
_Static_assert(__builtin_offsetof(struct kucontext, uc_sigmask) == 296, "uc_sigmask");
_Static_assert(__builtin_offsetof(struct rt_sigframe, info) == 312, "info");

/* x32 (arch/x86/include/asm/sigframe.h, struct rt_sigframe_x32): the
 * 64-bit sigcontext, in a ucontext whose stack_t and siginfo are the
 * compat (32-bit) ones */
struct kstack_x32 {
    u32 ss_sp;
    s32 ss_flags;
    u32 ss_size;
};
struct kucontext_x32 {
    u32 uc_flags, uc_link;
    struct kstack_x32 uc_stack;
    u32 uc_pad0;
    struct sigcontext_64 uc_mcontext;
    u64 uc_sigmask;
};
struct rt_sigframe_x32 {
    u64 pretcode;
    struct kucontext_x32 uc;
    unsigned char info[128];
};
_Static_assert(__builtin_offsetof(struct kucontext_x32, uc_mcontext) == 24, "x32 uc_mcontext");
_Static_assert(__builtin_offsetof(struct kucontext_x32, uc_sigmask) == 280, "x32 uc_sigmask");
_Static_assert(__builtin_offsetof(struct rt_sigframe_x32, info) == 296, "x32 info");


/* The last user exception (Linux keeps it in current->thread): what the
 * frame reports as trapno, err and cr2 for a fault's signal. */
static struct { u64 trapno, err, cr2; } last_fault;

static long sigop(unsigned long op, unsigned long a1, unsigned long a2)
{
    long r;
    __asm__ volatile("vmcall" : "=a"(r) : "a"(ES_HC_SIGOP), "D"(op), "S"(a1), "d"(a2)
                     : "memory", "cc");
    return r;
}

/* pt_regs sit at the top of the running task's stack (every entry pushes
 * them there; a context switch moves cpu_current_top_of_stack) */
struct pt_regs *es_current_pt_regs(void)
{
    return (struct pt_regs *)es_percpu.top_of_stack - 1;
}

void es_signal_init(void)
{
    sigop(ES_SIG_ENABLE, es_boot_info.abi, (unsigned long)&es_percpu.work);
}

void es_sig_fault_info(u32 *trapno, u32 *err, u32 *cr2)
{
    *trapno = (u32)last_fault.trapno;
    *err = (u32)last_fault.err;
    *cr2 = (u32)last_fault.cr2;
}

void es_sig_kill(unsigned long sig)
{
    sigop(ES_SIG_KILL, sig, 0);
}

void es_sig_return(u64 mask, unsigned long uss, bool compat)
{
    long r;
    __asm__ volatile("vmcall"
                     : "=a"(r)
                     : "a"(ES_HC_SIGOP), "D"(ES_SIG_RETURN), "S"(mask), "d"(uss), "c"(compat ? 1ul : 0ul)
                     : "memory", "cc");
    (void)r;
}

/* UC_FP_XSTATE says the FPU image is an XSAVE one (frame_uc_flags). */
static u64 frame_uc_flags(void)
{
    return UC_SIGCONTEXT_SS | UC_STRICT_RESTORE_SS | (es_fpu_xstate() ? UC_FP_XSTATE : 0);
}

static void save_sigcontext(struct sigcontext_64 *sc, const struct pt_regs *regs)
{
    sc->r8 = regs->r8, sc->r9 = regs->r9, sc->r10 = regs->r10, sc->r11 = regs->r11;
    sc->r12 = regs->r12, sc->r13 = regs->r13, sc->r14 = regs->r14, sc->r15 = regs->r15;
    sc->di = regs->di, sc->si = regs->si, sc->bp = regs->bp, sc->bx = regs->bx;
    sc->dx = regs->dx, sc->ax = regs->ax, sc->cx = regs->cx, sc->sp = regs->sp;
    sc->ip = regs->ip, sc->flags = regs->flags;
    sc->cs = (u16)regs->cs, sc->ss = (u16)regs->ss;
    sc->trapno = last_fault.trapno, sc->err = last_fault.err, sc->cr2 = last_fault.cr2;
}

/* Where the frame goes: below the red zone, or at the top of the
 * sigaltstack when SA_ONSTACK asks and we are not on it already
 * (get_sigframe).  *fp: the FPU image's address. */
static unsigned long frame_address(const struct es_ksignal *k, const struct pt_regs *regs,
                                   unsigned long size, unsigned long *fp, u32 *ss_flags)
{
    unsigned long sp = regs->sp;
    bool on_alt = k->ss_size && sp - k->ss_sp < k->ss_size;
    *ss_flags = on_alt ? SS_ONSTACK : (k->ss_flags & SS_DISABLE) ? SS_DISABLE : 0;
    sp -= 128;
    if ((k->flags & SA_ONSTACK) && *ss_flags == 0)
        sp = k->ss_sp + k->ss_size;
    *fp = (sp - es_fpu_frame_size()) & ~63ul;
    return ((*fp - size) & ~15ul) - 8;
}

/* The frame's machine context (64-bit and x32 frames share the 64-bit
 * sigcontext) and the FPU image at fp; 0 or -EFAULT. */
static int save_context(struct sigcontext_64 *sc, const struct es_ksignal *k,
                        const struct pt_regs *regs, unsigned long fp)
{
    save_sigcontext(sc, regs);
    sc->fpstate = fp;
    sc->oldmask = k->oldmask;
    return es_fpu_save_user(fp, true);
}

/* The handler's registers (64-bit and x32): signal, &info, &uc as its
 * arguments, the frame as its stack, the FPU in its initial state. */
static void to_handler(const struct es_ksignal *k, struct pt_regs *regs, unsigned long frame,
                       unsigned long info_off, unsigned long uc_off)
{
    regs->di = k->sig;
    regs->si = frame + info_off;
    regs->dx = frame + uc_off;
    regs->ax = 0;
    regs->ip = k->handler;
    regs->sp = frame;
    regs->cs = __USER_CS;
    regs->ss = __USER_DS;
    regs->flags &= ~(X86_EFLAGS_DF | X86_EFLAGS_RF | X86_EFLAGS_TF);
    es_fpu_init_state();
}

/* 0, or -EFAULT when the frame cannot be written (or no sa_restorer: the
 * x86-64 ABI has no other way back). */
static int setup_rt_frame(const struct es_ksignal *k, struct pt_regs *regs)
{
    static struct rt_sigframe f; /* one task: no reentrancy (it would be a stack copy) */
    unsigned long fp;
    u32 ss_flags;
    unsigned long frame = frame_address(k, regs, sizeof f, &fp, &ss_flags);
    if (!(k->flags & SA_RESTORER))
        return -EFAULT;
    memset(&f, 0, sizeof f);
    f.pretcode = k->restorer;
    f.uc.uc_flags = frame_uc_flags();
    f.uc.uc_stack = (struct kstack_t){.ss_sp = k->ss_sp, .ss_flags = (s32)ss_flags,
                                      .ss_size = k->ss_size};
    f.uc.uc_sigmask = k->oldmask;
    memcpy(f.info, k->info, sizeof f.info);
    if (save_context(&f.uc.uc_mcontext, k, regs, fp) ||
        copy_to_user((void __user *)frame, &f, sizeof f))
        return -EFAULT;
    to_handler(k, regs, frame, __builtin_offsetof(struct rt_sigframe, info),
               __builtin_offsetof(struct rt_sigframe, uc));
    return 0;
}

/* An x32 process's frame (x32_setup_rt_frame): the same registers and
 * FPU image as a 64-bit frame, the compat stack_t and siginfo; x32 too
 * needs SA_RESTORER.  Linux tells x32 handlers by SA_X32_ABI, set when the
 * action came through the x32 rt_sigaction; a process here is of one ABI
 * for its life (an exec of another ABI is refused), so the boot ABI says. */
static int setup_rt_frame_x32(const struct es_ksignal *k, struct pt_regs *regs)
{
    static struct rt_sigframe_x32 f;
    unsigned long fp;
    u32 ss_flags;
    unsigned long frame = frame_address(k, regs, sizeof f, &fp, &ss_flags);
    if (!(k->flags & SA_RESTORER))
        return -EFAULT;
    memset(&f, 0, sizeof f);
    f.pretcode = (u32)k->restorer;
    f.uc.uc_flags = frame_uc_flags();
    f.uc.uc_stack = (struct kstack_x32){.ss_sp = (u32)k->ss_sp, .ss_flags = (s32)ss_flags,
                                        .ss_size = (u32)k->ss_size};
    f.uc.uc_sigmask = k->oldmask;
    es_info32(f.info, k->info);
    if (save_context(&f.uc.uc_mcontext, k, regs, fp) ||
        copy_to_user((void __user *)frame, &f, sizeof f))
        return -EFAULT;
    to_handler(k, regs, frame, __builtin_offsetof(struct rt_sigframe_x32, info),
               __builtin_offsetof(struct rt_sigframe_x32, uc));
    return 0;
}

static int setup_frame(const struct es_ksignal *k, struct pt_regs *regs)
{
    if (regs->cs == __USER32_CS)
        return es_setup_frame32(k, regs);
    if (es_boot_info.abi == ES_BOOT_ABI_X32)
        return setup_rt_frame_x32(k, regs);
    return setup_rt_frame(k, regs);
}

/* A syscall the simulator interrupted for a signal (sim/host: a wait of
 * one task that a signal ends) comes back -ERESTARTSYS or -ERESTARTNOHAND
 * (include/linux/errno.h): it restarts (ip back over the 2-byte syscall,
 * int $0x80 or the vDSO's landing pad's int $0x80, ax = the number again)
 * when no handler runs, or when the handler has SA_RESTART and the call
 * allows it; else the program sees -EINTR (arch/x86/kernel/signal.c
 * handle_signal and do_signal). */
static void syscall_restart(struct pt_regs *regs, const struct es_ksignal *k)
{
    if ((long)regs->orig_ax < 0)
        return; /* not in a syscall: an exception or interrupt */
    long ax = regs->cs == __USER32_CS ? (long)(int)regs->ax : (long)regs->ax;
    if (ax != -ERESTARTSYS && ax != -ERESTARTNOHAND && ax != -ERESTARTNOINTR)
        return;
    if (k && (ax == -ERESTARTNOHAND || (ax == -ERESTARTSYS && !(k->flags & SA_RESTART)))) {
        regs->ax = -EINTR;
        return;
    }
    regs->ax = regs->orig_ax;
    regs->ip -= 2;
}

void es_exit_to_usermode(struct pt_regs *regs)
{
    static struct es_ksignal k;
    bool delivered = false;
    if (!(regs->cs & 3))
        return;
    /* exit_to_usermode_loop: an ended task never returns; a task whose
     * time slice is over lets the next one run (the simulator clears the
     * flag when it picks); one frame per caught signal, the last one set up
     * runs first.  k is per cpu, not per task: nothing switches between
     * ES_SIG_NEXT and the frame. */
    for (int n = 0; n < 64 && es_percpu.work; n++) {
        if (es_percpu.work & ES_WORK_DEAD)
            es_task_dead();
        if (es_percpu.work & ES_WORK_RESCHED) {
            es_schedule();
            continue;
        }
        if (!sigop(ES_SIG_NEXT, (unsigned long)&k, 0))
            break;
        if (!delivered)
            syscall_restart(regs, &k);
        delivered = true;
        if (setup_frame(&k, regs))
            sigop(ES_SIG_KILL, SIGSEGV, 0); /* force_sigsegv: the run ends */
    }
    if (!delivered)
        syscall_restart(regs, NULL);
    last_fault.trapno = last_fault.err = last_fault.cr2 = 0;
}

int es_force_sig_fault(struct pt_regs *regs, unsigned long vec, unsigned long err,
                       unsigned long addr)
{
    long r;
    register unsigned long ip __asm__("r8") = regs->ip;
    __asm__ volatile("vmcall"
                     : "=a"(r)
                     : "a"(ES_HC_SIGOP), "D"(ES_SIG_FORCE), "S"(vec), "d"(err), "c"(addr), "r"(ip)
                     : "memory", "cc");
    if (r != 1)
        return 0;
    last_fault.trapno = vec;
    last_fault.err = err;
    last_fault.cr2 = addr;
    es_exit_to_usermode(regs);
    return 1;
}

/* ---- rt_sigreturn ---- */

static bool canonical(u64 a)
{
    return (u64)((long)(a << 16) >> 16) == a;
}

/* The registers from the frame (restore_sigcontext); false: a bad frame. */
static bool restore_sigcontext(struct pt_regs *regs, const struct sigcontext_64 *sc)
{
    u64 cs = sc->cs | 3, ss = sc->ss | 3;
    /* an IRET to any other selector, or to a non-canonical RIP, would
     * fault in the kernel (Linux turns that into SIGSEGV/SIGBUS at its
     * bad_iret fixup; here it is refused before) */
    if ((cs != __USER_CS && cs != __USER32_CS) || ss != __USER_DS || !canonical(sc->ip))
        return false;
    regs->r8 = sc->r8, regs->r9 = sc->r9, regs->r10 = sc->r10, regs->r11 = sc->r11;
    regs->r12 = sc->r12, regs->r13 = sc->r13, regs->r14 = sc->r14, regs->r15 = sc->r15;
    regs->di = sc->di, regs->si = sc->si, regs->bp = sc->bp, regs->bx = sc->bx;
    regs->dx = sc->dx, regs->ax = sc->ax, regs->cx = sc->cx, regs->sp = sc->sp;
    regs->ip = sc->ip;
    regs->flags = (regs->flags & ~ES_FIX_EFLAGS) | (sc->flags & ES_FIX_EFLAGS);
    regs->cs = cs;
    regs->ss = ss;
    regs->orig_ax = -1; /* no syscall restart from here */
    return true;
}

SYSCALL_DEFINE0(rt_sigreturn)
{
    static struct rt_sigframe f;
    struct pt_regs *regs = es_current_pt_regs();
    unsigned long uframe = regs->sp - 8; /* the handler's ret popped pretcode */

    if (copy_from_user(&f, (const void __user *)uframe, sizeof f) ||
        !restore_sigcontext(regs, &f.uc.uc_mcontext) || !es_restore_fpu(f.uc.uc_mcontext.fpstate, true)) {
        es_sig_kill(SIGSEGV); /* signal_fault: the run ends here */
        return 0;
    }
    es_sig_return(f.uc.uc_sigmask, uframe + __builtin_offsetof(struct rt_sigframe, uc.uc_stack),
                  false);
    return regs->ax;
}

/* x32's rt_sigreturn (sys32_x32_rt_sigreturn, x32 row 513): the frame of
 * setup_rt_frame_x32, with the 64-bit register checks and the compat
 * stack_t. */
long sys32_x32_rt_sigreturn(void)
{
    static struct rt_sigframe_x32 f;
    struct pt_regs *regs = es_current_pt_regs();
    unsigned long uframe = regs->sp - 8;

    if (copy_from_user(&f, (const void __user *)uframe, sizeof f) ||
        !restore_sigcontext(regs, &f.uc.uc_mcontext) || !es_restore_fpu(f.uc.uc_mcontext.fpstate, true)) {
        es_sig_kill(SIGSEGV);
        return 0;
    }
    es_sig_return(f.uc.uc_sigmask, uframe + __builtin_offsetof(struct rt_sigframe_x32, uc.uc_stack),
                  true);
    return regs->ax;
}
