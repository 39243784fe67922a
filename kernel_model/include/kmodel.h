/* kmodel.h - the guest kernel's own definitions: selectors, struct pt_regs,
 * per-cpu data, the hypercall wrappers.  Freestanding (no libc); included
 * by the C and the assembly files of kernel_model/ (guarded parts).
 *
 * ES_PATCHES (set by the build, -DES_PATCHES=n) says which commits of the
 * 4.17 series this object is compiled with; ES_HAS(X) tests one of them. */
#ifndef ES_KMODEL_H
#define ES_KMODEL_H

#include "es_boot.h"
#include "alternative.h"
#include "hypercall.h" /* sim/hypercall.h: ES_HC_* (freestanding) */

#ifndef ES_PATCHES
#error "ES_PATCHES must be defined by the build (-DES_PATCHES=n)"
#endif
#define ES_HAS(bit) ((ES_PATCHES & (ES_PATCH_##bit)) != 0)

/* Linux's GDT layout (arch/x86/include/asm/segment.h, 64-bit kernel). */
#define GDT_ENTRY_KERNEL32_CS 1
#define GDT_ENTRY_KERNEL_CS 2
#define GDT_ENTRY_KERNEL_DS 3
#define GDT_ENTRY_DEFAULT_USER32_CS 4
#define GDT_ENTRY_DEFAULT_USER_DS 5
#define GDT_ENTRY_DEFAULT_USER_CS 6
#define GDT_ENTRY_TSS 8
#define GDT_ENTRY_LDT 10
#define GDT_ENTRY_TLS_MIN 12
#define GDT_ENTRY_TLS_MAX 14
#define GDT_ENTRY_CPUNODE 15
#define GDT_ENTRIES 16

#define __KERNEL32_CS 0x08
#define __KERNEL_CS 0x10
#define __KERNEL_DS 0x18
#define __USER32_CS 0x23
#define __USER_DS 0x2b
#define __USER32_DS __USER_DS
#define __USER_CS 0x33
#define __TSS_SEL (GDT_ENTRY_TSS * 8)

#define X86_EFLAGS_CF 0x00000001
#define X86_EFLAGS_FIXED 0x00000002
#define X86_EFLAGS_TF 0x00000100
#define X86_EFLAGS_IF 0x00000200
#define X86_EFLAGS_DF 0x00000400
#define X86_EFLAGS_IOPL 0x00003000
#define X86_EFLAGS_NT 0x00004000
#define X86_EFLAGS_RF 0x00010000
#define X86_EFLAGS_AC 0x00040000

#define MSR_EFER 0xc0000080
#define MSR_STAR 0xc0000081
#define MSR_LSTAR 0xc0000082
#define MSR_CSTAR 0xc0000083
#define MSR_SYSCALL_MASK 0xc0000084
#define MSR_FS_BASE 0xc0000100
#define MSR_GS_BASE 0xc0000101
#define MSR_KERNEL_GS_BASE 0xc0000102
#define MSR_TSC_AUX 0xc0000103
#define MSR_IA32_SYSENTER_CS 0x174
#define MSR_IA32_SYSENTER_ESP 0x175
#define MSR_IA32_SYSENTER_EIP 0x176
#define EFER_SCE (1 << 0)
#define EFER_NX (1 << 11)
#define X86_CR4_PCIDE (1ul << 17)
#define X86_FEATURE_PCID_ECX (1u << 17) /* CPUID.1:ECX */

/* the local APIC timer's vector (arch/x86/include/asm/irq_vectors.h) */
#define ES_TIMER_VECTOR 0xec

#define ENOSYS 38
#define EFAULT 14
#define EINTR 4
/* kernel-internal: never seen by user mode (include/linux/errno.h) */
#define ERESTARTSYS 512
#define ERESTARTNOINTR 513
#define ERESTARTNOHAND 514
#define EINVAL 22

/* x32: syscall numbers carry bit 30; Linux masks it off for the table
 * lookup (arch/x86/include/asm/unistd.h).  ~ of an int: sign-extends to
 * 0xffffffffbfffffff as an unsigned long, as in Linux. */
#define __X32_SYSCALL_BIT 0x40000000
#define __SYSCALL_MASK (~(__X32_SYSCALL_BIT))

/* The first x32-specific row of the 64-bit table (syscall_64.tbl). */
#define ES_X32_FIRST_ROW 512

#define KERNEL_STACK_SIZE 16384

/* struct pt_regs offsets (Linux's layout, arch/x86/include/asm/ptrace.h);
 * the C definition below is checked against these with _Static_assert. */
#define R15 0x00
#define R14 0x08
#define R13 0x10
#define R12 0x18
#define RBP 0x20
#define RBX 0x28
#define R11 0x30
#define R10 0x38
#define R9 0x40
#define R8 0x48
#define RAX 0x50
#define RCX 0x58
#define RDX 0x60
#define RSI 0x68
#define RDI 0x70
#define ORIG_RAX 0x78
#define RIP 0x80
#define CS 0x88
#define EFLAGS 0x90
#define RSP 0x98
#define SS 0xa0
#define SIZEOF_PTREGS 0xa8

/* Per-cpu area (GS base in the kernel after SWAPGS). */
#define PCPU_RSP_SCRATCH 0x00 /* Linux's rsp_scratch: the user RSP during SYSCALL entry */
#define PCPU_TOP_OF_STACK 0x08 /* Linux's cpu_current_top_of_stack */
#define TSS_RSP0 4 /* struct es_tss (setup.c): rsp0 after a 32-bit reserved field */
#define PCPU_ABI 0x10 /* the current syscall's ABI (TS_COMPAT analogue) */
#define PCPU_NR 0x18 /* the current syscall's number */
#define PCPU_USER_PCID_FLUSH ES_PCPU_USER_PCID_FLUSH /* pti+PCID: flush the user ASID */

#ifndef __ASSEMBLER__

typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long u64;
typedef signed char s8;
typedef short s16;
typedef int s32;
typedef long s64;
typedef unsigned long size_t;
typedef long ssize_t;
typedef unsigned long uintptr_t;
#define NULL ((void *)0)
#define bool _Bool
#define true 1
#define false 0
#define offsetof(t, m) __builtin_offsetof(t, m)
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define __user
#define __visible __attribute__((externally_visible))
#define noinline __attribute__((noinline, noclone))

struct pt_regs {
    unsigned long r15, r14, r13, r12, bp, bx;
    unsigned long r11, r10, r9, r8, ax, cx, dx, si, di;
    unsigned long orig_ax;
    unsigned long ip, cs, flags, sp, ss;
};
_Static_assert(offsetof(struct pt_regs, r15) == R15, "pt_regs r15");
_Static_assert(offsetof(struct pt_regs, bp) == RBP, "pt_regs bp");
_Static_assert(offsetof(struct pt_regs, bx) == RBX, "pt_regs bx");
_Static_assert(offsetof(struct pt_regs, r11) == R11, "pt_regs r11");
_Static_assert(offsetof(struct pt_regs, r10) == R10, "pt_regs r10");
_Static_assert(offsetof(struct pt_regs, r8) == R8, "pt_regs r8");
_Static_assert(offsetof(struct pt_regs, ax) == RAX, "pt_regs ax");
_Static_assert(offsetof(struct pt_regs, cx) == RCX, "pt_regs cx");
_Static_assert(offsetof(struct pt_regs, dx) == RDX, "pt_regs dx");
_Static_assert(offsetof(struct pt_regs, si) == RSI, "pt_regs si");
_Static_assert(offsetof(struct pt_regs, di) == RDI, "pt_regs di");
_Static_assert(offsetof(struct pt_regs, orig_ax) == ORIG_RAX, "pt_regs orig_ax");
_Static_assert(offsetof(struct pt_regs, ip) == RIP, "pt_regs ip");
_Static_assert(offsetof(struct pt_regs, cs) == CS, "pt_regs cs");
_Static_assert(offsetof(struct pt_regs, flags) == EFLAGS, "pt_regs flags");
_Static_assert(offsetof(struct pt_regs, sp) == RSP, "pt_regs sp");
_Static_assert(offsetof(struct pt_regs, ss) == SS, "pt_regs ss");
_Static_assert(sizeof(struct pt_regs) == SIZEOF_PTREGS, "pt_regs is 168 bytes");

struct es_percpu {
    unsigned long rsp_scratch;
    unsigned long top_of_stack;
    unsigned long cur_abi; /* ES_BOOT_ABI_* of the syscall in progress */
    unsigned long cur_nr;  /* its number (x32: without bit 30) */
    unsigned long user_pcid_flush; /* bit 0: user mappings changed (calling.h) */
    unsigned long work;            /* exit work (ES_WORK_*: a caught signal waits,
                                      the time slice is over, the task has ended),
                                      Linux's thread_info flags; the simulator
                                      writes it for the running task */
};
_Static_assert(offsetof(struct es_percpu, rsp_scratch) == PCPU_RSP_SCRATCH, "percpu");
_Static_assert(offsetof(struct es_percpu, top_of_stack) == PCPU_TOP_OF_STACK, "percpu");
_Static_assert(offsetof(struct es_percpu, cur_abi) == PCPU_ABI, "percpu");
_Static_assert(offsetof(struct es_percpu, cur_nr) == PCPU_NR, "percpu");
_Static_assert(offsetof(struct es_percpu, user_pcid_flush) == PCPU_USER_PCID_FLUSH, "percpu");

extern struct es_percpu es_percpu;
extern struct es_boot_info es_boot_info;

/* The syscall in progress, for the bodies' hypercall (Linux keeps TS_COMPAT
 * in thread_info->status and the number in regs->orig_ax). */
static inline void es_set_current_syscall(unsigned long abi, unsigned long nr)
{
    es_percpu.cur_abi = abi;
    es_percpu.cur_nr = nr;
}

/* Forwards a syscall body's arguments to the simulator's host services
 * with the current abi/nr (ES_HC_SYSCALL); returns the host's result. */
long es_hc_syscall6(unsigned long a0, unsigned long a1, unsigned long a2,
                    unsigned long a3, unsigned long a4, unsigned long a5);
__attribute__((noreturn)) void es_panic(const char *msg);
void es_puts(const char *msg);
__attribute__((noreturn)) void es_signal(unsigned long vec, unsigned long err,
                                         unsigned long addr, unsigned long ip);

/* Reads 4 or 8 bytes of user memory; 0 or -EFAULT (a #PF is fixed up
 * through the exception table, like Linux's get_user). */
int es_get_user_u32(u32 *dst, unsigned long uaddr);
int es_get_user_u64(u64 *dst, unsigned long uaddr);
/* Fixup lookup for a kernel-mode fault at ip: the continuation or 0. */
unsigned long es_search_exception_table(unsigned long ip);

/* signal.c: delivery on the way back to user mode (Linux's
 * exit_to_usermode_loop: one frame per pending caught signal), and its
 * set-up at boot; traps.c: a user fault a handler may take (1), or 0. */
void es_exit_to_usermode(struct pt_regs *regs);
/* sched.c: schedule() (another task may run; returns when this one runs
 * again), the end of an exited task (never returns), the boot task's
 * registration; entry_64.S: the stack and CR3 switch. */
void es_schedule(void);
__attribute__((noreturn)) void es_task_dead(void);
void es_sched_init(void);
void es_switch_to(struct es_next *next);
void es_signal_init(void);
int es_force_sig_fault(struct pt_regs *regs, unsigned long vec, unsigned long err,
                       unsigned long addr);

/* Updates a TLS descriptor of the GDT after set_thread_area (arch/x86/kernel/tls.c). */
void es_tls_update(unsigned long u_info);

/* Hex formatting for messages (no libc). */
char *es_fmt_hex(char *p, unsigned long v);
char *es_fmt_str(char *p, const char *s);

/* Linux's array_index_nospec (arch/x86/include/asm/barrier.h,
 * array_index_mask_nospec): the index when index < size, else 0, through
 * CMP/SBB/AND, so a mispredicted bounds check cannot index the table with
 * a user value under speculation.  One asm statement holds the whole
 * sequence so that `--mitigations no-nospec` can patch it out
 * (ES_ALT_NO_NOSPEC: replaced by NOPs) and its cost shows; the index then
 * passes unmasked, architecturally the same since the C bounds check
 * before it already holds. */
static inline unsigned long array_index_nospec_ul(unsigned long index, unsigned long size)
{
    unsigned long mask;
    __asm__ volatile(ES_ALTERNATIVE("cmp %2,%0; sbb %1,%1; and %1,%0", "", ES_ALT_NO_NOSPEC)
                     : "+r"(index), "=&r"(mask)
                     : "re"(size)
                     : "cc");
    return index;
}
#define array_index_nospec(index, size)                                                      \
    ((__typeof__(index))array_index_nospec_ul((unsigned long)(index), (unsigned long)(size)))

static inline void wrmsr(unsigned int msr, unsigned long v)
{
    __asm__ volatile("wrmsr" ::"c"(msr), "a"((u32)v), "d"((u32)(v >> 32)) : "memory");
}
static inline unsigned long rdmsr(unsigned int msr)
{
    u32 lo, hi;
    __asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
    return (unsigned long)hi << 32 | lo;
}
static inline unsigned long read_cr2(void)
{
    unsigned long v;
    __asm__ volatile("mov %%cr2,%0" : "=r"(v));
    return v;
}

#endif /* !__ASSEMBLER__ */
#endif
