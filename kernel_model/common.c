/* common.c - the C half of the syscall entries (after Linux 4.16/4.17
 * arch/x86/entry/common.c; our own code): the bounds check with the x32 bit
 * masked, array_index_nospec, and the call through the table in the
 * convention the image is built for.
 *
 * Depends on ES_PATCHES bits dfe64506 (do_syscall_64's signature),
 * fa697140 (64-bit table called with pt_regs) and ebeb8c82 (ia32 table and
 * x32 rows called with pt_regs). */
#include "kmodel.h"
#include "syscalls.h"
#include "syscall_nrs.h"

#if ES_HAS(FA697140)
typedef sys_call_ptr_regs_t sys_call_ptr_t;
#else
typedef sys_call_ptr_6_t sys_call_ptr_t;
#endif
#if ES_HAS(EBEB8C82)
typedef sys_call_ptr_regs_t ia32_sys_call_ptr_t;
#else
typedef sys_call_ptr_6_t ia32_sys_call_ptr_t;
#endif
extern const sys_call_ptr_t sys_call_table[NR_syscalls];
extern const ia32_sys_call_ptr_t ia32_sys_call_table[IA32_NR_syscalls];

/* Holes of the tables (kernel/sys_ni.c).  Called with six registers or
 * with pt_regs: it reads neither. */
long sys_ni_syscall(void);
long sys_ni_syscall(void)
{
    return -ENOSYS;
}

/* One row of the 64-bit table.  fa697140 converts the 64-bit and common
 * rows, ebeb8c82 the x32 rows (512 and up).  In a build with only one of
 * the two the row's number says which convention its entry has (Linux
 * never had such a kernel: fa697140 alone required !COMPAT). */
static inline __attribute__((always_inline)) long call_row64(unsigned long nr,
                                                            struct pt_regs *regs)
{
#if ES_HAS(FA697140) == ES_HAS(EBEB8C82)
#if ES_HAS(FA697140)
    return sys_call_table[nr](regs);
#else
    return sys_call_table[nr](regs->di, regs->si, regs->dx, regs->r10, regs->r8, regs->r9);
#endif
#else
    if (nr >= ES_X32_FIRST_ROW) {
#if ES_HAS(EBEB8C82)
        return ((sys_call_ptr_regs_t)sys_call_table[nr])(regs);
#else
        return ((sys_call_ptr_6_t)sys_call_table[nr])(regs->di, regs->si, regs->dx, regs->r10,
                                                      regs->r8, regs->r9);
#endif
    }
#if ES_HAS(FA697140)
    return ((sys_call_ptr_regs_t)sys_call_table[nr])(regs);
#else
    return ((sys_call_ptr_6_t)sys_call_table[nr])(regs->di, regs->si, regs->dx, regs->r10,
                                                  regs->r8, regs->r9);
#endif
#endif
}

#if ES_HAS(DFE64506)
/* dfe64506c01e: the entry code passes the number it still has in RAX. */
__visible void do_syscall_64(unsigned long nr, struct pt_regs *regs);
__visible void do_syscall_64(unsigned long nr, struct pt_regs *regs)
{
#else
__visible void do_syscall_64(struct pt_regs *regs);
__visible void do_syscall_64(struct pt_regs *regs)
{
    unsigned long nr = regs->orig_ax;
#endif
    /* the bodies' hypercall needs the ABI (Linux: in_x32_syscall() tests
     * the bit in orig_ax) and the number */
    es_set_current_syscall((nr & __X32_SYSCALL_BIT) ? ES_BOOT_ABI_X32 : ES_BOOT_ABI_X64, nr);

    /* The x32 bit is masked for the lookup; the table is the same. */
#if ES_HAS(DFE64506)
    nr &= __SYSCALL_MASK;
    if (likely(nr < NR_syscalls)) {
        nr = array_index_nospec(nr, NR_syscalls);
        regs->ax = call_row64(nr, regs);
    }
#else
    if (likely((nr & __SYSCALL_MASK) < NR_syscalls)) {
        nr = array_index_nospec(nr & __SYSCALL_MASK, NR_syscalls);
        regs->ax = call_row64(nr, regs);
    }
#endif
    /* syscall_return_slowpath -> exit_to_usermode_loop: a caught signal
     * gets its frame now (signal.c) */
    if (unlikely(es_percpu.work))
        es_exit_to_usermode(regs);
}

static inline __attribute__((always_inline)) void do_syscall_32_irqs_on(struct pt_regs *regs)
{
    unsigned int nr = (unsigned int)regs->orig_ax;

    es_set_current_syscall(ES_BOOT_ABI_I386, nr); /* Linux: ti->status |= TS_COMPAT */

    if (likely(nr < IA32_NR_syscalls)) {
        nr = array_index_nospec(nr, IA32_NR_syscalls);
#if ES_HAS(EBEB8C82)
        regs->ax = ia32_sys_call_table[nr](regs);
#else
        /* a 32-bit syscall gets six zero-extended 32-bit registers */
        regs->ax = ia32_sys_call_table[nr]((unsigned int)regs->bx, (unsigned int)regs->cx,
                                           (unsigned int)regs->dx, (unsigned int)regs->si,
                                           (unsigned int)regs->di, (unsigned int)regs->bp);
#endif
    }
}

/* int $0x80 */
__visible void do_int80_syscall_32(struct pt_regs *regs);
__visible void do_int80_syscall_32(struct pt_regs *regs)
{
    do_syscall_32_irqs_on(regs);
    if (unlikely(es_percpu.work)) /* the exit work (signal32.c frames) */
        es_exit_to_usermode(regs);
}

/* SYSENTER and compat SYSCALL, from the vDSO's __kernel_vsyscall.
 * Returns 1 when SYSRETL may return (Linux's conditions), 0 for IRET. */
__visible long do_fast_syscall_32(struct pt_regs *regs);
__visible long do_fast_syscall_32(struct pt_regs *regs)
{
    unsigned long landing_pad = es_boot_info.vdso32_base + ES_VDSO32_INT80_LANDING_PAD;

    /* SYSENTER lost EIP, and SYSCALL's return address is the vDSO's int
     * $0x80: both come back at the landing pad. */
    regs->ip = landing_pad;

    /* arg6 (EBP): the vDSO pushed it at the user's ESP */
    u32 bp;
    if (es_get_user_u32(&bp, (unsigned long)(u32)regs->sp)) {
        regs->ax = -EFAULT;
        return 0;
    }
    *(u32 *)&regs->bp = bp;

    do_syscall_32_irqs_on(regs);
    if (unlikely(es_percpu.work)) /* a frame moves ip: IRET below */
        es_exit_to_usermode(regs);

    return regs->cs == __USER32_CS && regs->ss == __USER_DS && regs->ip == landing_pad &&
           (regs->flags & (X86_EFLAGS_RF | X86_EFLAGS_TF)) == 0;
}
