/* es_boot.h - the hand-over between the simulator's loader (sim/kernel.c)
 * and the guest kernel's startup code (kernel_model/).  Freestanding: no
 * libc headers, so both the host build and the kernel build include it.
 *
 * The loader maps the kernel image, fills the object at symbol
 * `es_boot_info` with the user process's initial state, and starts the CPU
 * at symbol `startup_64` with CPL 0, 64-bit mode, CS 0x10, SS 0x18,
 * interrupts off, RSP = es_boot_info.boot_stack_top.  startup_64 loads its
 * own GDT, TSS, IDT and MSRs and enters user mode with IRETQ.
 */
#ifndef ES_BOOT_H
#define ES_BOOT_H

#define ES_BOOT_MAGIC 0x746f6f626d697365ull /* "esimboot" */

/* enum es_abi of the user program */
#define ES_BOOT_ABI_X64 0
#define ES_BOOT_ABI_I386 1
#define ES_BOOT_ABI_X32 2

/* Linux 4.17's patch series, as a bitmask: v4.16 = 0, v4.17 = all four. */
#define ES_PATCH_DFE64506 1u /* nr passed to do_syscall_64 in rdi */
#define ES_PATCH_FA697140 2u /* pt_regs-based stubs for 64-bit syscalls */
#define ES_PATCH_EBEB8C82 4u /* pt_regs-based stubs for ia32 and x32 */
#define ES_PATCH_6DC936F 8u  /* clear dx, cx (64-bit) and si, dx, cx (compat) on entry */
#define ES_PATCH_ALL 15u

/* Alternatives (include/alternative.h): each record of .altinstructions
 * (between the symbols __alt_instructions and __alt_instructions_end) is
 *     s32 site   - the original instructions, relative to this field
 *     s32 repl   - the replacement bytes, relative to this field
 *     u16 feature- ES_ALT_* below
 *     u8  sitelen- bytes of the site, padding included
 *     u8  padlen - of which trailing 0x90 padding (the replacement was longer)
 *     u8  repllen- bytes of the replacement (<= sitelen)
 *     u8  pad0
 * 14 bytes, no relocations (Linux's struct alt_instr, our own layout).  The
 * simulator (es_kernel_set_mitigations) copies the replacement over the site
 * and fills the rest with long NOPs when the feature is in force, and turns
 * the 0x90 padding of sites it leaves alone into long NOPs (Linux's
 * optimize_nops). */
#define ES_ALT_RECORD_SIZE 14
#define ES_ALT_PTI 1       /* page-table isolation: CR3 switches on entry/exit */
#define ES_ALT_RETPOLINE 2 /* __x86_indirect_thunk_* become retpolines */
#define ES_ALT_IBRS 3      /* WRMSR IA32_SPEC_CTRL.IBRS on entry, cleared on exit */
#define ES_ALT_NO_NOSPEC 4 /* array_index_nospec patched out (nospec is off) */
#define ES_ALT_PCID 5      /* PTI with PCID: no-flush bit, user PCID (needs PTI) */
#define ES_ALT_NFEATURES 6

/* PTI's page-table pair (Linux 4.17 arch/x86/entry/calling.h): the user
 * PGD is the 4 KiB page after the kernel's, and with PCID the user ASID
 * has bit 11 set; bit 63 of a CR3 load asks for no flush. */
#define PTI_USER_PGTABLE_BIT 12
#define PTI_USER_PCID_BIT 11
#define PTI_USER_PGTABLE_MASK (1 << PTI_USER_PGTABLE_BIT)
#define PTI_USER_PCID_MASK (1 << PTI_USER_PCID_BIT)
#define PTI_USER_PGTABLE_AND_PCID_MASK (PTI_USER_PGTABLE_MASK | PTI_USER_PCID_MASK)
#define X86_CR3_PCID_NOFLUSH_BIT 63
/* Offset in the per-cpu area (kmodel.h struct es_percpu) of Linux's
 * user_pcid_flush_mask for this one CPU: the simulator sets it to 1 when it
 * changes or removes user mappings (sim/vm.c), and the next
 * SWITCH_TO_USER_CR3 loads CR3 without the no-flush bit and clears it. */
#define ES_PCPU_USER_PCID_FLUSH 0x20

/* IA32_SPEC_CTRL / IA32_PRED_CMD (SDM Vol. 4, Table 2-2). */
#define MSR_IA32_SPEC_CTRL 0x48
#define MSR_IA32_PRED_CMD 0x49
#define SPEC_CTRL_IBRS 1

/* Byte offsets of the fields below (for the kernel's assembly). */
#define ES_BOOT_MAGIC_OFF 0
#define ES_BOOT_USER_RIP 8
#define ES_BOOT_USER_RSP 16
#define ES_BOOT_USER_CS 24
#define ES_BOOT_USER_SS 32
#define ES_BOOT_USER_RFLAGS 40
#define ES_BOOT_ABI 48
#define ES_BOOT_VENDOR 56
#define ES_BOOT_VDSO32_BASE 64
#define ES_BOOT_STACK_TOP 72
#define ES_BOOT_PATCHES 80

/* The 32-bit vDSO page (kernel symbols vdso32_image, for Intel CPUs: the
 * vDSO enters with SYSENTER, and vdso32_image_syscall, for AMD CPUs: SYSCALL;
 * both 4096 bytes, same layout).  The loader copies the one matching
 * es_boot_info.vendor to a user page (read/execute) at vdso32_base and
 * points AT_SYSINFO at vdso32_base + ES_VDSO32_KERNEL_VSYSCALL.  The
 * kernel returns SYSENTER/SYSCALL calls to vdso32_base +
 * ES_VDSO32_INT80_LANDING_PAD (Linux's int80_landing_pad). */
#define ES_VDSO32_KERNEL_VSYSCALL 0
#define ES_VDSO32_INT80_LANDING_PAD 9

#ifndef __ASSEMBLER__
struct es_boot_info {
    unsigned long long magic;          /* ES_BOOT_MAGIC, written by the loader */
    unsigned long long user_rip;       /* the program's entry point */
    unsigned long long user_rsp;       /* the System V initial stack */
    unsigned long long user_cs;        /* 0x33 (64-bit, x32) or 0x23 (i386) */
    unsigned long long user_ss;        /* 0x2b */
    unsigned long long user_rflags;    /* 0x202 */
    unsigned long long abi;            /* ES_BOOT_ABI_* */
    unsigned long long vendor;         /* 0 Intel, 1 AMD */
    unsigned long long vdso32_base;    /* user address of the 32-bit vDSO page, 0 = none */
    unsigned long long boot_stack_top; /* filled by the kernel build (symbol), read by the loader */
    unsigned long long patches;        /* ES_PATCH_* the image was built with (kernel-side constant) */
};
#endif

#endif
