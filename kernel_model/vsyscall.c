/* vsyscall.c - emulation of the legacy vsyscall page (after Linux
 * arch/x86/entry/vsyscall/vsyscall_64.c, vsyscall=emulate; our own code).
 *
 * Depends on ES_PATCHES bit fa697140: with it the emulation calls the
 * pt_regs-based stubs __x64_sys_gettimeofday/time/getcpu(regs), and for
 * getcpu saves regs->dx, sets it to 0 (the NULL cache argument) and
 * restores it afterwards (seed fa697140f9a2); without it, it calls
 * sys_gettimeofday(di, si), sys_time(di), sys_getcpu(di, si, NULL). */
#include "kmodel.h"
#include "syscalls.h"
#include "syscall_nrs.h" /* generated: ES_NR64_* */

#define VSYSCALL_ADDR 0xffffffffff600000UL
#define X86_TRAP_PF 14
/* the #PF error code Linux records for a bad vsyscall pointer: user mode,
 * write, page not present (write_ok_or_segv) */
#define VSYSCALL_PF_ERR 6

/* sizes of what the three calls write (struct timeval, struct timezone,
 * time_t, unsigned) */
#define SIZEOF_TIMEVAL 16
#define SIZEOF_TIMEZONE 8
#define SIZEOF_TIME_T 8
#define SIZEOF_UNSIGNED 4


struct timeval;
struct timezone;
struct getcpu_cache;

#if ES_HAS(FA697140)
long __x64_sys_gettimeofday(const struct pt_regs *regs); /* di, si */
long __x64_sys_time(const struct pt_regs *regs);         /* di */
long __x64_sys_getcpu(const struct pt_regs *regs);       /* di, si, dx */
#else
long sys_gettimeofday(struct timeval __user *tv, struct timezone __user *tz);
long sys_time(time_t __user *tloc);
long sys_getcpu(unsigned __user *cpu, unsigned __user *node, struct getcpu_cache __user *cache);
#endif

/* 0x000, 0x400, 0x800 -> 0, 1, 2; anything else is not an entry point */
static int addr_to_vsyscall_nr(unsigned long addr)
{
    if ((addr & ~0xC00UL) != VSYSCALL_ADDR)
        return -EINVAL;
    int nr = (int)((addr & 0xC00UL) >> 10);
    return nr >= 3 ? -EINVAL : nr;
}

/* A bad output pointer of an emulated vsyscall is no -EFAULT return: Linux
 * 4.16/4.17 raise SIGSEGV ("vsyscall fault") as for a user #PF, with
 * cr2 = the pointer and error code 6.  write_ok_or_segv() signals for a
 * range outside user space; an in-range but unwritable pointer faults in
 * the syscall's copy_to_user, which sig_on_uaccess_err turns into the same
 * SIGSEGV at the faulting address.  Our bodies write through the host, so
 * that second case is found by probing the first and last byte before the
 * call (the faulting byte is reported as cr2).  NULL is no output and
 * passes, as in the syscalls.  Does not return on a bad pointer. */
static void write_ok_or_segv(const struct pt_regs *regs, unsigned long ptr, unsigned long size)
{
    if (!ptr)
        return;
    if (!access_ok((void __user *)ptr, size))
        es_signal(X86_TRAP_PF, VSYSCALL_PF_ERR, ptr, regs->ip);
    if (__es_probe_write_1(ptr))
        es_signal(X86_TRAP_PF, VSYSCALL_PF_ERR, ptr, regs->ip);
    if (__es_probe_write_1(ptr + size - 1))
        es_signal(X86_TRAP_PF, VSYSCALL_PF_ERR, ptr + size - 1, regs->ip);
}

/* Called for a user-mode instruction fetch fault in the vsyscall page.
 * Returns true when handled (the task continues at its return address);
 * false makes the fault a signal, as Linux's "bad vsyscall" cases do. */
__visible bool emulate_vsyscall(struct pt_regs *regs, unsigned long address);
__visible bool emulate_vsyscall(struct pt_regs *regs, unsigned long address)
{
    unsigned long caller;
    int vsyscall_nr, syscall_nr;
    long ret;
#if ES_HAS(FA697140)
    unsigned long orig_dx;
#endif

    /* the fetch must have been a jump/call to the entry itself */
    if (address != regs->ip)
        return false;
    vsyscall_nr = addr_to_vsyscall_nr(address);
    if (vsyscall_nr < 0)
        return false;

    /* the emulated RET */
    if (es_get_user_u64((u64 *)&caller, regs->sp))
        return false;

    switch (vsyscall_nr) {
    case 0:
        syscall_nr = ES_NR64_gettimeofday;
        write_ok_or_segv(regs, regs->di, SIZEOF_TIMEVAL);
        write_ok_or_segv(regs, regs->si, SIZEOF_TIMEZONE);
        break;
    case 1:
        syscall_nr = ES_NR64_time;
        write_ok_or_segv(regs, regs->di, SIZEOF_TIME_T);
        break;
    default:
        syscall_nr = ES_NR64_getcpu;
        write_ok_or_segv(regs, regs->di, SIZEOF_UNSIGNED);
        write_ok_or_segv(regs, regs->si, SIZEOF_UNSIGNED);
        break;
    }

    regs->orig_ax = syscall_nr;
    regs->ax = -ENOSYS;
    es_set_current_syscall(ES_BOOT_ABI_X64, syscall_nr);

    ret = -EFAULT;
    switch (vsyscall_nr) {
    case 0:
#if ES_HAS(FA697140)
        ret = __x64_sys_gettimeofday(regs);
#else
        ret = sys_gettimeofday((struct timeval __user *)regs->di,
                               (struct timezone __user *)regs->si);
#endif
        break;
    case 1:
#if ES_HAS(FA697140)
        ret = __x64_sys_time(regs);
#else
        ret = sys_time((time_t __user *)regs->di);
#endif
        break;
    case 2:
#if ES_HAS(FA697140)
        /* fa697140: the stub decodes dx as the cache argument, which must
         * be NULL; the task's dx is put back afterwards */
        orig_dx = regs->dx;
        regs->dx = 0;
        ret = __x64_sys_getcpu(regs);
        regs->dx = orig_dx;
#else
        ret = sys_getcpu((unsigned __user *)regs->di, (unsigned __user *)regs->si, NULL);
#endif
        break;
    }

    /* the probes passed, yet the call failed to write (Linux: the
     * WARN_ON_ONCE fallback "goto sigsegv"): still a SIGSEGV */
    if (ret == -EFAULT)
        es_signal(X86_TRAP_PF, VSYSCALL_PF_ERR, 0, regs->ip);

    regs->ax = ret;
    regs->ip = caller;
    regs->sp += 8;
    return true;
}
