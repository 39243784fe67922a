/* signal32.c - signal frames of i386 processes (after Linux 4.17
 * arch/x86/ia32/ia32_signal.c and asm/sigframe.h; our own code):
 * struct rt_sigframe_ia32 for SA_SIGINFO handlers, struct sigframe_ia32
 * otherwise, the FPU state as struct _fpstate_32 (the FNSAVE header, then
 * the FXSAVE image, magic 0 = X86_FXSR_MAGIC), and sys32_rt_sigreturn /
 * sys32_sigreturn, the i386 table's entries (asmlinkage, reading
 * current_pt_regs(), as in Linux).  The handler is entered with
 * EAX = signal, EDX = &info, ECX = &uc (regparm(3), rt frames) and the
 * stack aligned as the i386 ABI wants at a function's entry.  Segment
 * registers: DS/ES/FS/GS are saved; on return DS/ES/FS are reloaded when
 * the frame changed them, GS is left as it is (it would need
 * load_gs_index's SWAPGS dance). */
#include "kmodel.h"
#include "syscalls.h"
#include "signal_int.h"

struct sigcontext_32 {
    u16 gs, gsh, fs, fsh, es, esh, ds, dsh;
    u32 di, si, bp, sp, bx, dx, cx, ax, trapno, err, ip;
    u16 cs, csh;
    u32 flags, sp_at_signal;
    u16 ss, ssh;
    u32 fpstate, oldmask, cr2;
};
struct stack32 {
    u32 ss_sp;
    s32 ss_flags;
    u32 ss_size;
};
struct ucontext_ia32 {
    u32 uc_flags, uc_link;
    struct stack32 uc_stack;
    struct sigcontext_32 uc_mcontext;
    u32 uc_sigmask[2];
};
struct rt_sigframe_ia32 {
    u32 pretcode;
    s32 sig;
    u32 pinfo, puc;
    unsigned char info[128];
    struct ucontext_ia32 uc;
    unsigned char retcode[8];
};
#define FPSTATE32_SIZE 624 /* struct _fpstate_32 */
#define FSAVE_HDR 112      /* its FNSAVE part, status and magic */
struct sigframe_ia32 {
    u32 pretcode;
    s32 sig;
    struct sigcontext_32 sc;
    unsigned char fpstate_unused[FPSTATE32_SIZE];
    u32 extramask[1];
    unsigned char retcode[8];
};
_Static_assert(sizeof(struct sigcontext_32) == 88, "sigcontext_32");
_Static_assert(sizeof(struct ucontext_ia32) == 116, "ucontext_ia32");
_Static_assert(__builtin_offsetof(struct sigframe_ia32, extramask) == 720, "extramask");

static void save_sc32(struct sigcontext_32 *sc, const struct pt_regs *regs, u64 mask)
{
    u16 seg;
    __asm__ volatile("mov %%gs, %0" : "=r"(seg));
    sc->gs = seg;
    __asm__ volatile("mov %%fs, %0" : "=r"(seg));
    sc->fs = seg;
    __asm__ volatile("mov %%es, %0" : "=r"(seg));
    sc->es = seg;
    __asm__ volatile("mov %%ds, %0" : "=r"(seg));
    sc->ds = seg;
    sc->di = (u32)regs->di, sc->si = (u32)regs->si, sc->bp = (u32)regs->bp;
    sc->sp = (u32)regs->sp, sc->bx = (u32)regs->bx, sc->dx = (u32)regs->dx;
    sc->cx = (u32)regs->cx, sc->ax = (u32)regs->ax, sc->ip = (u32)regs->ip;
    sc->cs = (u16)regs->cs, sc->flags = (u32)regs->flags, sc->sp_at_signal = (u32)regs->sp;
    sc->ss = (u16)regs->ss, sc->oldmask = (u32)mask;
    es_sig_fault_info(&sc->trapno, &sc->err, &sc->cr2);
}

/* The 64-bit siginfo the host wrote, in the compat layout: the union
 * starts at 12, pid/uid or a 32-bit address. */
void es_info32(unsigned char out[128], const unsigned char in[128])
{
    memset(out, 0, 128);
    memcpy(out, in, 12);
    memcpy(out + 12, in + 16, 8);
}

/* The FPU image (_fpstate_32) at fp: the XSAVE (or FXSAVE) image at
 * fp + FSAVE_HDR (xstate.c), then below it the FNSAVE header (which also
 * resets the FPU, as the handler wants anyway), status, magic 0 (FXSR
 * data follows). */
static int save_fpu32(unsigned long fp)
{
    static unsigned char hdr[FSAVE_HDR] __attribute__((aligned(16)));
    if (es_fpu_save_user(fp + FSAVE_HDR, false))
        return -EFAULT;
    memset(hdr, 0, sizeof hdr);
    __asm__ volatile("fnsave %0" : "=m"(*(unsigned char(*)[108])hdr));
    memcpy(hdr + 108, hdr + 4, 2); /* status = the saved FSW */
    return copy_to_user((void __user *)fp, hdr, sizeof hdr) ? -EFAULT : 0;
}

/* get_sigframe for an i386 frame of `size` bytes: *fp the FPU image. */
static unsigned long frame32(const struct es_ksignal *k, const struct pt_regs *regs,
                             unsigned long size, unsigned long *fp, u32 *ss_flags)
{
    unsigned long sp = (u32)regs->sp;
    bool on_alt = k->ss_size && sp - k->ss_sp < k->ss_size;
    *ss_flags = on_alt ? 1 : (k->ss_flags & 2) ? 2 : 0;
    if ((k->flags & 0x08000000ul) && *ss_flags == 0) /* SA_ONSTACK */
        sp = k->ss_sp + k->ss_size;
    sp = (sp - es_fpu_frame_size()) & ~63ul; /* the XSAVE part, 64-byte aligned ... */
    *fp = sp - FSAVE_HDR;    /* ... the FNSAVE header below it */
    sp = *fp - size;
    return ((sp + 4) & ~15ul) - 4;
}

static void enter32(struct pt_regs *regs, unsigned long frame, unsigned long handler)
{
    regs->sp = frame;
    regs->ip = handler;
    regs->cs = __USER32_CS;
    regs->ss = __USER32_DS;
    regs->flags &= ~(X86_EFLAGS_DF | X86_EFLAGS_RF | X86_EFLAGS_TF);
    __asm__ volatile("mov %0, %%ds; mov %0, %%es" ::"r"((u16)__USER32_DS));
}

int es_setup_frame32(const struct es_ksignal *k, struct pt_regs *regs)
{
    static union {
        struct rt_sigframe_ia32 rt;
        struct sigframe_ia32 plain;
    } f;
    unsigned long fp;
    u32 ss_flags;
    bool rt = (k->flags & 4) != 0; /* SA_SIGINFO */
    unsigned long frame = frame32(k, regs, rt ? sizeof f.rt : sizeof f.plain, &fp, &ss_flags);
    /* retcode: movl $NR, %eax; int $0x80 (rt) or popl %eax first (plain) */
    static const unsigned char rc_rt[8] = {0xb8, 173, 0, 0, 0, 0xcd, 0x80, 0};
    static const unsigned char rc_plain[8] = {0x58, 0xb8, 119, 0, 0, 0, 0xcd, 0x80};
    unsigned long ret = (k->flags & 0x04000000ul) ? k->restorer /* SA_RESTORER */
                        : frame + (rt ? __builtin_offsetof(struct rt_sigframe_ia32, retcode)
                                      : __builtin_offsetof(struct sigframe_ia32, retcode));
    memset(&f, 0, sizeof f);
    if (save_fpu32(fp))
        return -EFAULT;
    if (rt) {
        f.rt = (struct rt_sigframe_ia32){.pretcode = (u32)ret, .sig = (s32)k->sig,
                                          .pinfo = (u32)(frame + 16), .puc = (u32)(frame + 144)};
        es_info32(f.rt.info, k->info);
        /* ia32_setup_rt_frame: UC_FP_XSTATE when the image is an XSAVE one */
        f.rt.uc.uc_flags = es_fpu_xstate() ? 1u : 0u;
        f.rt.uc.uc_stack = (struct stack32){(u32)k->ss_sp, (s32)ss_flags, (u32)k->ss_size};
        save_sc32(&f.rt.uc.uc_mcontext, regs, k->oldmask);
        f.rt.uc.uc_mcontext.fpstate = (u32)fp;
        f.rt.uc.uc_sigmask[0] = (u32)k->oldmask;
        f.rt.uc.uc_sigmask[1] = (u32)(k->oldmask >> 32);
        memcpy(f.rt.retcode, rc_rt, 8);
    } else {
        f.plain.pretcode = (u32)ret;
        f.plain.sig = (s32)k->sig;
        save_sc32(&f.plain.sc, regs, k->oldmask);
        f.plain.sc.fpstate = (u32)fp;
        f.plain.extramask[0] = (u32)(k->oldmask >> 32);
        memcpy(f.plain.retcode, rc_plain, 8);
    }
    if (copy_to_user((void __user *)frame, &f, rt ? sizeof f.rt : sizeof f.plain))
        return -EFAULT;
    enter32(regs, frame, k->handler);
    regs->ax = k->sig;
    regs->dx = rt ? frame + 16 : 0;
    regs->cx = rt ? frame + 144 : 0;
    es_fpu_init_state();
    return 0;
}

/* ---- sigreturn ---- */

static bool restore_sc32(struct pt_regs *regs, const struct sigcontext_32 *sc)
{
    u16 cs = sc->cs | 3, ss = sc->ss | 3, cur;
    if ((cs != __USER32_CS && cs != __USER_CS) || ss != __USER32_DS)
        return false;
    __asm__ volatile("mov %%ds, %0" : "=r"(cur));
    if (sc->ds != cur)
        __asm__ volatile("mov %0, %%ds" ::"r"((u16)(sc->ds | 3)));
    __asm__ volatile("mov %%es, %0" : "=r"(cur));
    if (sc->es != cur)
        __asm__ volatile("mov %0, %%es" ::"r"((u16)(sc->es | 3)));
    regs->di = sc->di, regs->si = sc->si, regs->bp = sc->bp, regs->sp = sc->sp;
    regs->bx = sc->bx, regs->dx = sc->dx, regs->cx = sc->cx, regs->ax = sc->ax;
    regs->ip = sc->ip;
    regs->flags = (regs->flags & ~ES_FIX_EFLAGS) | (sc->flags & ES_FIX_EFLAGS);
    regs->cs = cs;
    regs->ss = ss;
    regs->orig_ax = -1;
    return es_restore_fpu(sc->fpstate ? sc->fpstate + FSAVE_HDR : 0, false);
}

static long sigreturn32(bool rt)
{
    static union {
        struct rt_sigframe_ia32 rt;
        struct sigframe_ia32 plain;
    } f;
    struct pt_regs *regs = es_current_pt_regs();
    /* the handler's ret popped pretcode; plain frames' retcode also popped sig */
    unsigned long at = (u32)regs->sp - (rt ? 4 : 8);
    if (copy_from_user(&f, (const void __user *)at, rt ? sizeof f.rt : sizeof f.plain) ||
        !restore_sc32(regs, rt ? &f.rt.uc.uc_mcontext : &f.plain.sc)) {
        es_sig_kill(11);
        return 0;
    }
    u64 mask = rt ? f.rt.uc.uc_sigmask[0] | (u64)f.rt.uc.uc_sigmask[1] << 32
                  : f.plain.sc.oldmask | (u64)f.plain.extramask[0] << 32;
    es_sig_return(mask, rt ? at + __builtin_offsetof(struct rt_sigframe_ia32, uc.uc_stack) : 0,
                  true);
    return regs->ax;
}

long sys32_rt_sigreturn(void);
long sys32_rt_sigreturn(void)
{
    return sigreturn32(true);
}

long sys32_sigreturn(void);
long sys32_sigreturn(void)
{
    return sigreturn32(false);
}
