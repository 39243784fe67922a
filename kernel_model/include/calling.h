/* calling.h - the entry code's mitigation macros (after Linux 4.17
 * arch/x86/entry/calling.h and 5.19's IBRS_ENTER/IBRS_EXIT; our own
 * code).  Each is an alternative site that costs one short JMP when its
 * mitigation is off (the simulator patches the JMP to NOPs when on).
 * Assembly only. */
#ifndef ES_CALLING_H
#define ES_CALLING_H

#include "alternative.h"

#ifdef __ASSEMBLER__

/* cpp does not expand inside the quoted ALTERNATIVE arguments: constants
 * used there are assembler symbols */
	.set	pti_noflush_bit, X86_CR3_PCID_NOFLUSH_BIT
	.set	pti_user_pcid_mask, PTI_USER_PCID_MASK
	.set	pcpu_user_pcid_flush, PCPU_USER_PCID_FLUSH

/* PTI: the user PGD is the kernel PGD + 4 KiB (PTI_USER_PGTABLE_BIT).
 * Entry: clear that bit (and the user PCID bit); with PCID set CR3 bit 63
 * so the kernel ASID's translations survive (ES_ALT_PCID).  The scratch
 * register is clobbered. */
.macro SWITCH_TO_KERNEL_CR3 scratch_reg:req
	ALTERNATIVE "jmp .Lend_\@", "", ES_ALT_PTI
	mov	%cr3, \scratch_reg
	ALTERNATIVE "", "bts $pti_noflush_bit, \scratch_reg", ES_ALT_PCID
	andq	$(~PTI_USER_PGTABLE_AND_PCID_MASK), \scratch_reg
	mov	\scratch_reg, %cr3
.Lend_\@:
.endm

/* Exit: set the user PGD bit; with PCID also the user PCID (kernel PCID |
 * 0x800) and, unless user mappings changed since the last exit (the
 * per-cpu user_pcid_flush bit, which the simulator sets and this clears),
 * the no-flush bit (Linux's user_pcid_flush_mask test).  GS must still be
 * the kernel's.  The scratch register is clobbered. */
.macro SWITCH_TO_USER_CR3 scratch_reg:req
	ALTERNATIVE "jmp .Lend_\@", "", ES_ALT_PTI
	mov	%cr3, \scratch_reg
	ALTERNATIVE "", "orq $pti_user_pcid_mask, \scratch_reg; btrl $0, %gs:pcpu_user_pcid_flush; jc .Lflush_\@; bts $pti_noflush_bit, \scratch_reg; .Lflush_\@:", ES_ALT_PCID
	orq	$PTI_USER_PGTABLE_MASK, \scratch_reg
	mov	\scratch_reg, %cr3
.Lend_\@:
.endm

/* IBRS on kernel entry from user mode: IA32_SPEC_CTRL.IBRS = 1, so
 * indirect branches in the kernel are not steered by predictions user code
 * trained.  Clobbers RAX, RCX, RDX (saved in pt_regs already). */
.macro IBRS_ENTER
	ALTERNATIVE "jmp .Lend_\@", "", ES_ALT_IBRS
	movl	$MSR_IA32_SPEC_CTRL, %ecx
	movl	$SPEC_CTRL_IBRS, %eax
	xorl	%edx, %edx
	wrmsr
.Lend_\@:
.endm

/* ...and IBRS off again before returning to user mode.  Clobbers RAX, RCX,
 * RDX (restored from pt_regs afterwards). */
.macro IBRS_EXIT
	ALTERNATIVE "jmp .Lend_\@", "", ES_ALT_IBRS
	movl	$MSR_IA32_SPEC_CTRL, %ecx
	xorl	%eax, %eax
	xorl	%edx, %edx
	wrmsr
.Lend_\@:
.endm

#endif
#endif
